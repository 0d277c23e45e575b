/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tnf.h - libtnf, the TNF trace-file reader.
 *
 * Reads a trace file written by a TNF writer (the Solaris/illumos
 * libtnfprobe or ours): both byte orders, 32- and 64-bit writers.  Nothing
 * about the layout is hard-coded beyond the TNF ABI (magic, file header at
 * offset 4, the type-record header words); everything else is read from
 * the self-describing types in the file.
 *
 * Model:
 *  - a struct tnf_file is one open trace file (a read-only mapping, or a
 *    caller's buffer).  The library keeps no global state: every cache
 *    lives in the handle, and handles are independent (one handle must not
 *    be used by two threads at once).
 *  - a record is named by its file offset.  A struct tnf_datum is a value:
 *    a record (off = the record's first byte) or an inline value inside a
 *    record (off = the value's first byte), plus its type.  off == 0 is the
 *    NULL datum (a NULL or overwritten reference).
 *  - types (struct tnf_type) are owned by the handle and live until
 *    tnf_close().  Strings returned (names, chars) point into the handle or
 *    the mapping and live as long as the handle.
 *
 * Errors: functions returning int give 0 (or a positive count/flag, as
 * documented) on success and a negative TNF_ERR_* on failure;
 * tnf_strerror() describes one.  Every read is bounded by the file size
 * and every walk (reference chains, type graphs, block scans) is bounded,
 * so a corrupt file yields an error, never a crash or a hang.  After an
 * error the handle stays usable; tnf_error_offset() tells where the last
 * error was found.
 */
#ifndef LIBTNF_TNF_H
#define LIBTNF_TNF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes, returned negated. */
enum tnf_err {
	TNF_ERR_NONE = 0,
	TNF_ERR_NOMEM,	   /* out of memory */
	TNF_ERR_IO,	   /* open/stat/mmap failed (errno is kept) */
	TNF_ERR_EMPTY,	   /* the file has no bytes */
	TNF_ERR_ALLZERO,   /* every byte is zero: an unused TNF buffer */
	TNF_ERR_NOTTNF,	   /* no TNF magic number */
	TNF_ERR_TRUNCATED, /* shorter than its header says */
	TNF_ERR_BADHEADER, /* file header missing or inconsistent */
	TNF_ERR_BADREF,	   /* reference of reserved kind or out of the file */
	TNF_ERR_BADTYPE,   /* a type record is malformed or the type graph loops */
	TNF_ERR_BADRECORD, /* a record is malformed (size, kind, bounds) */
	TNF_ERR_NOTFOUND,  /* no such slot / element */
	TNF_ERR_INVAL,	   /* bad argument */
	TNF_ERR_MAX,
};

/* What a datum is (from its type's properties and base name). */
enum tnf_kind {
	TNF_K_UNKNOWN = 0, /* abstract type */
	TNF_K_CHAR,
	TNF_K_INT8,
	TNF_K_UINT8,
	TNF_K_INT16,
	TNF_K_UINT16,
	TNF_K_INT32,
	TNF_K_UINT32,
	TNF_K_INT64,
	TNF_K_UINT64,
	TNF_K_FLOAT32,
	TNF_K_FLOAT64,
	TNF_K_SCALAR, /* a scalar of unknown base */
	TNF_K_ARRAY,
	TNF_K_STRING,
	TNF_K_STRUCT,
	TNF_K_TYPE, /* a type record */
};

/* Type properties (inherited along derived_base). */
#define TNF_PROP_TAGGED	 (1u << 0) /* stored as a record, referenced by a 4-byte cell */
#define TNF_PROP_INLINE	 (1u << 1) /* stored inline in the enclosing record */
#define TNF_PROP_SCALAR	 (1u << 2)
#define TNF_PROP_DERIVED (1u << 3)
#define TNF_PROP_ARRAY	 (1u << 4)
#define TNF_PROP_STRING	 (1u << 5)
#define TNF_PROP_STRUCT	 (1u << 6)
#define TNF_PROP_TYPE	 (1u << 7)
#define TNF_PROP_OPAQUE	 (1u << 8) /* print in hex */

/* tnf_type_size() of a self-sized type (arrays, strings). */
#define TNF_SIZE_SELF UINT32_MAX

struct tnf_file;
struct tnf_type;

struct tnf_datum {
	uint32_t off;		     /* file offset; 0 = NULL datum */
	const struct tnf_type *type; /* NULL for the NULL datum */
};

/* What the file header says (all sizes in bytes). */
struct tnf_file_info {
	int swapped;		    /* 1 if written with the other byte order */
	uint32_t file_version;	    /* 0 if the header has no such slot */
	uint32_t file_log_size;	    /* generation shift */
	uint32_t block_header_size; /* 0 if the header has no such slot */
	uint32_t block_size;
	uint32_t directory_size; /* offset of the first data block */
	uint32_t block_count;	 /* total, directory blocks included */
	uint32_t blocks_valid;	 /* 0 if the header has no such slot */
	uint64_t used_size;	 /* directory_size + data blocks: bytes read */
};

/* One event (a struct record whose tag arg reaches a schedule record). */
struct tnf_event {
	struct tnf_datum record; /* the event record */
	struct tnf_datum sched;	 /* its schedule record */
	const char *probe_name;	 /* the event's type name (the probe's name) */
	int64_t time;		 /* absolute: sched time_base + time_delta, ns */
	uint64_t tid;		 /* schedule "tid" slot (0 if absent) */
	uint32_t lwpid;		 /* schedule "lwpid" slot (0 if absent) */
	uint32_t pid;		 /* schedule "pid" slot (0 if absent) */
	int kernel;		 /* 1 if tid is a tnf_kthread_id (kernel record) */
	int cpuid;		 /* schedule "cpuid" slot for kernel records, else -1 */
	unsigned first_arg;	 /* index of the first slot after "time_delta" */
};

/*
 * Opening and closing.
 */

/*
 * tnf_open - open and map @path read-only, check it is a TNF file.
 * @path: file name.  @out: receives the handle (owned by the caller, free
 * it with tnf_close()).
 * Returns 0 or -TNF_ERR_IO (errno set), -EMPTY (zero length), -ALLZERO
 * (every byte zero), -NOTTNF, -TRUNCATED, -BADHEADER, -BADTYPE, -NOMEM.
 * Extra bytes after the area the header describes are ignored.
 */
int tnf_open(const char *path, struct tnf_file **out);

/*
 * tnf_open_mem - like tnf_open() on @size bytes at @data.  The buffer is
 * not copied: it must stay valid and unchanged until tnf_close().
 */
int tnf_open_mem(const void *data, size_t size, struct tnf_file **out);

/* tnf_close - free the handle, its types, and unmap the file.  NULL is ok. */
void tnf_close(struct tnf_file *f);

/* tnf_strerror - static text for a TNF_ERR_* code (either sign). */
const char *tnf_strerror(int err);

/* tnf_error_offset - file offset where the last error was found (0: none). */
uint32_t tnf_error_offset(const struct tnf_file *f);

/* tnf_file_info - the header values of an open file (pointer into @f). */
const struct tnf_file_info *tnf_file_info(const struct tnf_file *f);

/*
 * Records.
 */

/*
 * tnf_record_next - iterate over the records in file order: the file
 * header, then every record of every used block (block headers included),
 * skipping forwarding words and never-used blocks.
 * @rec: in: the previous record, or the NULL datum to start; out: the next.
 * Returns 1 with *rec set, 0 at the end, or a negative error (the walk
 * cannot go on: *rec is left unchanged).
 */
int tnf_record_next(struct tnf_file *f, struct tnf_datum *rec);

/*
 * tnf_record_at - the record starting at file offset @off.
 * Returns 0 with *rec set, or -BADREF/-BADTYPE/-BADRECORD.
 */
int tnf_record_at(struct tnf_file *f, uint32_t off, struct tnf_datum *rec);

/*
 * tnf_record_size - size in bytes of a record or inline value (self-sized
 * records read their self_size).  Returns 0 on error.
 */
uint32_t tnf_record_size(struct tnf_file *f, struct tnf_datum d);

/*
 * tnf_tag_arg - the record the 16-bit tag arg of @rec's PAIR word refers
 * to (for events: the schedule record).  *out is the NULL datum if there
 * is none or it has been overwritten (generation or bytes_valid check).
 * Returns 0 or a negative error.
 */
int tnf_tag_arg(struct tnf_file *f, struct tnf_datum rec, struct tnf_datum *out);

/*
 * tnf_resolve - follow the 32-bit reference cell at file offset @cell
 * (FULL, FWD, PAIR's tag half, permanent or reclaimable) to the record it
 * names.  *target is 0 for NULL or overwritten.  Returns 0 or an error.
 */
int tnf_resolve(struct tnf_file *f, uint32_t cell, uint32_t *target);

/*
 * Types and datums.
 */

const char *tnf_type_name(const struct tnf_type *t); /* never NULL */
enum tnf_kind tnf_type_kind(const struct tnf_type *t);
unsigned tnf_type_props(const struct tnf_type *t); /* TNF_PROP_* */
uint32_t tnf_type_size(const struct tnf_type *t);  /* or TNF_SIZE_SELF */
/* the type of a type record: its own type record's type (the metatype) */
const struct tnf_type *tnf_type_meta(const struct tnf_type *t);
uint32_t tnf_type_offset(const struct tnf_type *t); /* its record */

/*
 * tnf_type_of_record - for a TYPE datum (a type record), the type it
 * defines.  Returns 0 or an error.
 */
int tnf_type_of_record(struct tnf_file *f, struct tnf_datum d, const struct tnf_type **out);

/* Kind of a datum (TNF_K_UNKNOWN for the NULL datum). */
enum tnf_kind tnf_datum_kind(struct tnf_datum d);
/* Name of a datum's type ("" for the NULL datum). */
const char *tnf_datum_type_name(struct tnf_datum d);

/*
 * Slots of a struct, type or array record (arrays: their header slots).
 * tnf_slot_count: number of slots (0 for scalars and NULL).
 * tnf_slot_name: the slot's name (slot_names, else its type's name);
 * NULL if @i is out of range.
 * tnf_slot_index: index of the slot named @name (slot name first, then type
 * name), or -1.
 * tnf_slot_get: the value of slot @i: a record datum for a reference slot
 * (the NULL datum when the reference is NULL or overwritten), an inline
 * datum otherwise.  Returns 0 or a negative error.
 */
unsigned tnf_slot_count(struct tnf_datum d);
const char *tnf_slot_name(struct tnf_datum d, unsigned i);
int tnf_slot_index(struct tnf_datum d, const char *name);
int tnf_slot_get(struct tnf_file *f, struct tnf_datum d, unsigned i, struct tnf_datum *out);
/* tnf_slot_get() by name; -NOTFOUND if no such slot. */
int tnf_slot_named(struct tnf_file *f, struct tnf_datum d, const char *name, struct tnf_datum *out);

/*
 * Scalars.  tnf_get_int: a signed or unsigned integer (or char) of any
 * width, sign- or zero-extended per its kind, into *v; tnf_get_float: a
 * float32/float64.  Return 0 or -INVAL (not that kind) / -BADRECORD.
 */
int tnf_get_int(struct tnf_file *f, struct tnf_datum d, int64_t *v);
int tnf_get_float(struct tnf_file *f, struct tnf_datum d, double *v);
/* tnf_get_int() of slot @name of record @d. */
int tnf_get_int_named(struct tnf_file *f, struct tnf_datum d, const char *name, int64_t *v);

/*
 * Arrays and strings.  tnf_element_count: number of elements (0 on error).
 * tnf_element_get: element @i, as tnf_slot_get().  tnf_get_chars: the
 * characters of a string record, in the mapping, *len bytes, not counting
 * a NUL (the text stops at the first NUL or at the record's end, so it
 * need not be NUL-terminated: print with "%.*s").  NULL if @d is not a
 * string or is malformed.
 */
unsigned tnf_element_count(struct tnf_file *f, struct tnf_datum d);
int tnf_element_get(struct tnf_file *f, struct tnf_datum d, unsigned i, struct tnf_datum *out);
const char *tnf_get_chars(struct tnf_file *f, struct tnf_datum d, size_t *len);

/*
 * Events.
 */

/*
 * tnf_event_get - if @rec is an event (a struct record whose tag arg
 * reaches a schedule record with a time_base, and which has a time_delta
 * slot), fill *ev and return 1.  Return 0 if it is not an event (including
 * when the schedule record has been overwritten), or a negative error.
 */
int tnf_event_get(struct tnf_file *f, struct tnf_datum rec, struct tnf_event *ev);

/* tnf_is_probe_type - 1 if @rec is a probe description (tnf_probe_type). */
int tnf_is_probe_type(struct tnf_datum rec);

/*
 * Events the writer lost.  Our libtnfprobe counts every event (or
 * argument) it could not write in block 0; the original writer does not.
 */
#define TNF_DROP_REASONS 8

struct tnf_drops {
	uint32_t total;			      /* all drops */
	uint32_t by_reason[TNF_DROP_REASONS]; /* see tnf_drop_reason() */
};

/*
 * tnf_writer_drops - the writer's drop counters.  Returns 1 with *out
 * filled if the writer marked the file as counting drops, 0 (and *out
 * zeroed) if not, or -TNF_ERR_INVAL.
 */
int tnf_writer_drops(const struct tnf_file *f, struct tnf_drops *out);

/*
 * tnf_writer_wrapped - how many data blocks our writer wrote over (the
 * file is a ring: the oldest events are gone), from its block ticket.
 * Returns 1 with *blocks set if the file is our writer's, else 0.
 */
int tnf_writer_wrapped(const struct tnf_file *f, uint64_t *blocks);

/* tnf_drop_reason - short text for reason @i, NULL if it has no name. */
const char *tnf_drop_reason(unsigned i);

#ifdef __cplusplus
}
#endif

#endif /* LIBTNF_TNF_H */
