/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tnf_impl.h - libtnf internals shared by its files (not installed).
 *
 * file.c   open/map, header checks, error text
 * read.c   bounded, byte-order-aware reads and reference resolution
 * type.c   the type cache: properties, sizes, slot layouts
 * record.c record iteration, slots, scalars, arrays, strings
 * event.c  events and schedule records
 */
#ifndef LIBTNF_TNF_IMPL_H
#define LIBTNF_TNF_IMPL_H

#include <stdbool.h>
#include "tnf.h"

/* Reference cell kinds (low 2 bits). */
#define REF_KIND_MASK 0x3u
#define REF_FWD	      0x0u /* FULL or forwarding */
#define REF_PAIR      0x1u
#define REF_TAG	      0x2u
#define REF_RSVD      0x3u
#define REF_PERMANENT 0x80000000u /* space bit */
#define REF_SIGN      0x40000000u /* sign bit of a permanent value */

#define TAG_GENERATION 0xFFFFFFFFu /* generation of a tag block */

/* Bounds on walks. */
#define MAX_FWD_CHAIN  64    /* forwarding hops */
#define MAX_TYPE_DEPTH 48    /* nested type constructions */
#define MAX_TYPES      65536 /* distinct type records per file */
#define MAX_SLOTS      4096  /* slots of one type */
#define MAX_NAME       1024  /* bytes of a type or slot name */

struct tnf_slot {
	const char *name;
	const struct tnf_type *type;
	uint32_t offset; /* from the record start */
	uint32_t size;	 /* 4 for a reference, else the inline size */
	bool ref;	 /* a reference cell, not an inline value */
};

struct tnf_type {
	uint32_t off; /* the type record */
	char *name;
	unsigned props;
	enum tnf_kind kind;
	uint32_t size;		     /* storage size, TNF_SIZE_SELF if self-sized */
	uint32_t align;		     /* of an inline value */
	const struct tnf_type *meta; /* type of this type record */
	const struct tnf_type *base; /* ultimate derived base, or itself */
	const struct tnf_type *elem; /* arrays: element type, may be NULL */
	uint32_t hdr_size;	     /* arrays: header size */
	unsigned nslots;	     /* slots (of a type that is its own base) */
	struct tnf_slot *slots;
	bool own_slots;	 /* slots allocated here (not shared with base) */
	bool slots_done; /* slot layout computed */
	bool done;	 /* fully built */
	bool failed;	 /* building it failed: unusable */
	bool sized;	 /* size and alignment final */
};

/* The type holding the layout (slots, element type) of @t: its base. */
static inline const struct tnf_type *tnf_layout(const struct tnf_type *t)
{
	return t->base ? t->base : t;
}

struct tnf_file {
	const uint8_t *base;
	size_t size; /* bytes available */
	void *map;   /* mmap()ed area, or NULL for tnf_open_mem() */
	size_t map_size;
	bool swap;
	struct tnf_file_info info;
	uint32_t block_shift;
	uint32_t addr_mask; /* physical offset bits of a virtual address */
	uint32_t data_start;
	uint32_t end; /* end of the area read (<= size) */
	/* block header layout, from the block header type */
	bool blk_ready;
	uint32_t gen_off;
	uint32_t bv_off;
	uint32_t bv_size;
	uint32_t fhdr_size;
	/* type cache: open addressing on the type record offset */
	struct tnf_type **tab;
	size_t tab_size;
	size_t ntypes;
	unsigned depth;
	bool finishing; /* finishing types (type.c) */
	uint32_t err_off;
};

/* read.c */
bool tnf_rd8(const struct tnf_file *f, uint64_t off, uint8_t *v);
bool tnf_rd16(const struct tnf_file *f, uint64_t off, uint16_t *v);
bool tnf_rd32(const struct tnf_file *f, uint64_t off, uint32_t *v);
bool tnf_rd64(const struct tnf_file *f, uint64_t off, uint64_t *v);
int tnf_set_err(struct tnf_file *f, int err, uint32_t off);
int tnf_resolve_ref16(struct tnf_file *f, uint32_t cell, uint32_t *target);
int tnf_string_chars(struct tnf_file *f, uint32_t rec, const char **s, size_t *len);
int tnf_copy_string(struct tnf_file *f, uint32_t ref_cell, char **out);

/* type.c */
int tnf_type_get(struct tnf_file *f, uint32_t off, const struct tnf_type **out);
int tnf_record_type(struct tnf_file *f, uint32_t rec, const struct tnf_type **out);
void tnf_types_free(struct tnf_file *f);
int tnf_slot_typed(struct tnf_file *f, uint32_t rec, const struct tnf_type *t, const char *tname,
		   const struct tnf_slot **slot);

/* record.c */
int tnf_datum_for(struct tnf_file *f, uint32_t rec, struct tnf_datum *out);

#endif /* LIBTNF_TNF_IMPL_H */
