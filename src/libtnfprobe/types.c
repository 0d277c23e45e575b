// SPDX-License-Identifier: BSD-2-Clause
/*
 * The self-describing type graph (reference §4.3), written lazily into tag
 * space the way the original writer did: a type record is allocated and
 * remembered before its fields are filled in, so the cycles of the graph
 * (tnf_struct_type tags itself, tnf_name's name is a tnf_name) end.  The
 * memo is per process; a forked child inherits it with the file.  One
 * process-local mutex serialises writers (a nested probe never gets here:
 * the per-thread busy flag drops it first); processes sharing a file only
 * race on the lock-free tag space, which at worst duplicates a type.
 */
#include <pthread.h>
#include <string.h>

#include "rt.h"

#define END 0xff

enum props {
	P_NULL,	 /* null reference */
	P_EMPTY, /* empty array */
	P_SCALAR,
	P_ARRAY_ABSTRACT,
	P_ARRAY,
	P_DERIVED,
	P_STRUCT,
	P_TYPE,
	P_PROBE_EVENT,
};

static const uint8_t prop_lists[][4] = {
	[P_NULL] = {END},
	[P_EMPTY] = {END},
	[P_SCALAR] = {T_INLINE, T_SCALAR, END},
	[P_ARRAY_ABSTRACT] = {T_ARRAY, END},
	[P_ARRAY] = {T_ARRAY, T_TAGGED, END},
	[P_DERIVED] = {T_DERIVED, END},
	[P_STRUCT] = {T_TAGGED, T_STRUCT, END},
	[P_TYPE] = {T_TAGGED, T_STRUCT, T_TYPE, END},
	[P_PROBE_EVENT] = {T_DERIVED, T_TAG_ARG, END},
};

struct builtin {
	const char *name;
	uint8_t meta;  /* the metatype: T_TYPE, T_SCALAR_TYPE, ... */
	uint8_t props; /* enum props */
	uint8_t size;  /* scalar/struct size */
	uint8_t align;
	uint8_t base;	      /* derived base, array element type */
	const uint8_t *slots; /* struct/array slot types (END-ended), NULL = none */
	const char *const *names;
};

#define SCALAR(n, s)                                                                               \
	{                                                                                          \
		n, T_SCALAR_TYPE, P_SCALAR, s, s, T_NONE, NULL, NULL                               \
	}
#define DERIVED(n, b)                                                                              \
	{                                                                                          \
		n, T_DERIVED_TYPE, P_DERIVED, 0, 0, b, NULL, NULL                                  \
	}
#define ARRAY(n, e)                                                                                \
	{                                                                                          \
		n, T_ARRAY_TYPE, P_ARRAY, 8, 0, e, array_slots, NULL                               \
	}
#define META(n, sl, sz)                                                                            \
	{                                                                                          \
		n, T_STRUCT_TYPE, P_TYPE, sz, 0, T_NONE, sl, NULL                                  \
	}

static const uint8_t array_slots[] = {T_TAG, T_SELF_SIZE, END};
static const uint8_t no_slots[] = {END};
static const uint8_t type_slots[] = {T_TAG, T_NAME, T_PROPERTIES, END};
static const uint8_t array_type_slots[] = {
	T_TAG, T_NAME, T_PROPERTIES, T_SLOT_TYPES, T_HEADER_SIZE, T_ELEMENT_TYPE, END};
static const uint8_t derived_type_slots[] = {T_TAG, T_NAME, T_PROPERTIES, T_DERIVED_BASE, END};
static const uint8_t scalar_type_slots[] = {T_TAG, T_NAME, T_PROPERTIES, T_TYPE_SIZE, T_ALIGN, END};
static const uint8_t struct_type_slots[] = {T_TAG,	 T_NAME,       T_PROPERTIES, T_SLOT_TYPES,
					    T_TYPE_SIZE, T_SLOT_NAMES, END};
static const uint8_t probe_type_slots[] = {T_TAG,	T_NAME,	      T_PROPERTIES, T_SLOT_TYPES,
					   T_TYPE_SIZE, T_SLOT_NAMES, T_STRING,	    END};
static const uint8_t file_header_slots[] = {T_TAG,    T_UINT32, T_UINT32, T_UINT32, T_UINT32,
					    T_UINT32, T_UINT32, T_UINT32, T_UINT32, END};
static const char *const file_header_names[] = {
	"tnf_tag",	     "file_version",	  "file_header_size",
	"file_logical_size", "block_header_size", "block_size",
	"directory_size",    "block_count",	  "blocks_valid"};
static const uint8_t block_header_slots[] = {T_TAG,   T_UINT32, T_UINT16, T_UINT8,
					     T_UINT8, T_OPAQUE, END};
static const char *const block_header_names[] = {"tnf_tag", "generation", "bytes_valid",
						 "A_lock",  "B_lock",	  "next_block"};
/*
 * The original's five slots, then the process's and the thread's names
 * (permanent references to tag space): readers find slots by name, so the
 * original tnfdump reads the record unchanged and ignores the two.
 */
static const uint8_t sched_slots[] = {T_TAG,	   T_UINT32, T_LWPID,  T_PID,
				      T_TIME_BASE, T_STRING, T_STRING, END};
static const char *const sched_names[] = {"tnf_tag",   "tid",	       "lwpid",	     "pid",
					  "time_base", "process_name", "thread_name"};

/*
 * A kernel trace's schedule record, as the Solaris kernel wrote it: the
 * thread as a tnf_kthread_id (readers take that as "kernel record") and
 * the CPU.  On Linux the kthread id is the tid (no kernel address leaks).
 */
static const uint8_t ksched_slots[] = {T_TAG,	    T_KTHREAD_ID, T_LWPID, T_PID,
				       T_TIME_BASE, T_CPUID,	  END};
static const char *const ksched_names[] = {"tnf_tag", "tid", "lwpid", "pid", "time_base", "cpuid"};

static const struct builtin builtins[T_COUNT] = {
	[T_INLINE] = {"tnf_inline", T_TYPE, P_NULL, 0, 0, T_NONE, NULL, NULL},
	[T_TAGGED] = {"tnf_tagged", T_TYPE, P_NULL, 0, 0, T_NONE, NULL, NULL},
	[T_SCALAR] = SCALAR("tnf_scalar", 0),
	[T_CHAR] = SCALAR("tnf_char", 1),
	[T_INT8] = SCALAR("tnf_int8", 1),
	[T_UINT8] = SCALAR("tnf_uint8", 1),
	[T_INT16] = SCALAR("tnf_int16", 2),
	[T_UINT16] = SCALAR("tnf_uint16", 2),
	[T_INT32] = SCALAR("tnf_int32", 4),
	[T_UINT32] = SCALAR("tnf_uint32", 4),
	[T_INT64] = SCALAR("tnf_int64", 8),
	[T_UINT64] = SCALAR("tnf_uint64", 8),
	[T_FLOAT32] = SCALAR("tnf_float32", 4),
	[T_FLOAT64] = SCALAR("tnf_float64", 8),
	[T_ARRAY] = {"tnf_array", T_ARRAY_TYPE, P_ARRAY_ABSTRACT, 8, 0, T_NONE, NULL, NULL},
	[T_STRING] = ARRAY("tnf_string", T_CHAR),
	[T_TYPE_ARRAY] = ARRAY("tnf_type_array", T_TYPE),
	[T_NAME_ARRAY] = ARRAY("tnf_name_array", T_NAME),
	[T_DERIVED] = DERIVED("tnf_derived", T_NONE),
	[T_ALIGN] = DERIVED("tnf_align", T_UINT32),
	[T_DERIVED_BASE] = DERIVED("tnf_derived_base", T_TYPE),
	[T_ELEMENT_TYPE] = DERIVED("tnf_element_type", T_TYPE),
	[T_HEADER_SIZE] = DERIVED("tnf_header_size", T_UINT32),
	[T_NAME] = DERIVED("tnf_name", T_STRING),
	[T_OPAQUE] = DERIVED("tnf_opaque", sizeof(void *) == 8 ? T_UINT64 : T_UINT32),
	[T_PROPERTIES] = DERIVED("tnf_properties", T_TYPE_ARRAY),
	[T_SELF_SIZE] = DERIVED("tnf_self_size", T_UINT32),
	[T_SIZE] = DERIVED("tnf_size", sizeof(long) == 8 ? T_UINT64 : T_UINT32),
	[T_SLOT_NAMES] = DERIVED("tnf_slot_names", T_NAME_ARRAY),
	[T_SLOT_TYPES] = DERIVED("tnf_slot_types", T_TYPE_ARRAY),
	[T_TAG] = DERIVED("tnf_tag", T_TYPE),
	[T_TAG_ARG] = DERIVED("tnf_tag_arg", T_TAGGED),
	[T_TYPE_SIZE] = DERIVED("tnf_type_size", T_UINT32),
	[T_STRUCT] = {"tnf_struct", T_STRUCT_TYPE, P_EMPTY, 0, 0, T_NONE, no_slots, NULL},
	/* the record (after the magic) covers the writer-private words too */
	[T_FILE_HEADER] = {"tnf_file_header", T_STRUCT_TYPE, P_STRUCT, TNF_DROPS_END - 4, 0, T_NONE,
			   file_header_slots, file_header_names},
	[T_BLOCK_HEADER] = {"tnf_block_header", T_STRUCT_TYPE, P_STRUCT, 24, 0, T_NONE,
			    block_header_slots, block_header_names},
	[T_TYPE] = META("tnf_type", type_slots, 12),
	[T_ARRAY_TYPE] = META("tnf_array_type", array_type_slots, 24),
	[T_DERIVED_TYPE] = META("tnf_derived_type", derived_type_slots, 16),
	[T_SCALAR_TYPE] = META("tnf_scalar_type", scalar_type_slots, 20),
	[T_STRUCT_TYPE] = META("tnf_struct_type", struct_type_slots, 24),
	[T_PROBE_TYPE] = META("tnf_probe_type", probe_type_slots, 28),
	[T_PROBE_EVENT] = {"tnf_probe_event", T_DERIVED_TYPE, P_PROBE_EVENT, 0, 0, T_TAG, NULL,
			   NULL},
	[T_TIME_DELTA] = DERIVED("tnf_time_delta", T_UINT32),
	[T_SCHED_REC] = {"tnf_sched_rec", T_STRUCT_TYPE, P_STRUCT, TNF_SCHED_SIZE, 0, T_NONE,
			 sched_slots, sched_names},
	[T_LWPID] = DERIVED("tnf_lwpid", T_UINT32),
	[T_PID] = DERIVED("tnf_pid", T_INT32),
	[T_TIME_BASE] = DERIVED("tnf_time_base", T_INT64),
	[T_KTHREAD_ID] = DERIVED("tnf_kthread_id", T_OPAQUE),
	[T_CPUID] = DERIVED("tnf_cpuid", T_UINT32),
	[T_KSCHED_REC] = {"tnf_sched_rec", T_STRUCT_TYPE, P_STRUCT, TNF_KSCHED_SIZE, 0, T_NONE,
			  ksched_slots, ksched_names},
};

/* Argument kinds: size and alignment in a record, built-in type. */
const struct tnf_kind_info tnf_kinds[TNF_K_MAX] = {
	[TNF_K_PROBE_EVENT] = {4, 4, 0, T_PROBE_EVENT},
	[TNF_K_TIME_DELTA] = {4, 4, 0, T_TIME_DELTA},
	[TNF_K_CHAR] = {1, 1, 0, T_CHAR},
	[TNF_K_INT8] = {1, 1, 0, T_INT8},
	[TNF_K_UINT8] = {1, 1, 0, T_UINT8},
	[TNF_K_INT16] = {2, 2, 0, T_INT16},
	[TNF_K_UINT16] = {2, 2, 0, T_UINT16},
	[TNF_K_INT32] = {4, 4, 0, T_INT32},
	[TNF_K_UINT32] = {4, 4, 0, T_UINT32},
	[TNF_K_INT64] = {8, 8, 0, T_INT64},
	[TNF_K_UINT64] = {8, 8, 0, T_UINT64},
	[TNF_K_FLOAT32] = {4, 4, 0, T_FLOAT32},
	[TNF_K_FLOAT64] = {8, 8, 0, T_FLOAT64},
	[TNF_K_STRING] = {4, 4, 1, T_STRING},
	[TNF_K_OPAQUE] = {sizeof(void *), sizeof(void *), 0, T_OPAQUE},
	[TNF_K_SIZE] = {sizeof(long), sizeof(long), 0, T_SIZE},
	[TNF_K_RECORD] = {4, 4, 1, T_NONE},
};

#define MAX_RECORDS 256
#define MAX_NAMES   256 /* distinct process and thread names per process */

static pthread_mutex_t types_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint32_t memo[T_COUNT];
static struct {
	const struct tnf_type_desc *desc;
	uint32_t off;
} records[MAX_RECORDS];
static int nrecords;
static uint32_t names[MAX_NAMES]; /* their tnf_string records */
static int nnames;

void tnf_types_lock(void)
{
	pthread_mutex_lock(&types_mutex);
}

void tnf_types_unlock(void)
{
	pthread_mutex_unlock(&types_mutex);
}

/* The forking thread's child: another thread may have held the mutex. */
void tnf_types_after_fork(void)
{
	pthread_mutex_init(&types_mutex, NULL);
}

/* A new file for this process's writer (libtnfctl's kernel mode): forget the old one's offsets. */
void tnf_types_reset(void)
{
	tnf_types_lock();
	memset(memo, 0, sizeof(memo));
	nrecords = 0;
	nnames = 0;
	tnf_types_unlock();
}

/* A TAG reference to a type; the root goes through directory cell 2. */
static uint32_t tag_of(uint32_t type_off, enum tnf_tid id)
{
	if (id == T_STRUCT_TYPE)
		return tnf_ref_tag(TNF_CELL_ROOT);
	return tnf_ref_tag(type_off);
}

static uint32_t *word(uint32_t off)
{
	return (uint32_t *)(tnf_buf.base + off);
}

/* A string record tagged @tag_type (tnf_name or tnf_string) in tag space. */
static uint32_t put_tag_string(const char *s, enum tnf_tid tag_type)
{
	uint32_t len = strlen(s), self = (8 + len + 1 + 3) & ~3u, off, t;

	if (len > 400)
		len = 400, self = (8 + len + 1 + 3) & ~3u;
	t = tnf_type_ref_locked(tag_type);
	if (!t)
		return 0;
	off = tnf_tag_alloc(tnf_round8(self));
	if (!off)
		return 0;
	word(off)[0] = tnf_ref_tag(t);
	word(off)[1] = self;
	memcpy(tnf_buf.base + off + 8, s, len);
	tnf_tag_done(off, tnf_round8(self));
	return off;
}

/* An array of permanent references tagged @tag_type. */
static uint32_t put_ref_array(const uint32_t *refs, uint32_t n, enum tnf_tid tag_type)
{
	uint32_t self = 8 + 4 * n, off, t, i;

	t = tnf_type_ref_locked(tag_type);
	if (!t)
		return 0;
	off = tnf_tag_alloc(tnf_round8(self));
	if (!off)
		return 0;
	word(off)[0] = tnf_ref_tag(t);
	word(off)[1] = self;
	for (i = 0; i < n; i++)
		word(off)[2 + i] = refs[i] ? tnf_ref_perm(refs[i]) : 0;
	tnf_tag_done(off, tnf_round8(self));
	return off;
}

static uint32_t put_id_array(const uint8_t *ids, enum tnf_tid tag_type)
{
	uint32_t refs[16], n;

	for (n = 0; ids[n] != END && n < 16; n++) {
		refs[n] = tnf_type_ref_locked((enum tnf_tid)ids[n]);
		if (!refs[n])
			return 0;
	}
	return put_ref_array(refs, n, tag_type);
}

static uint32_t put_name_array(const char *const *names, uint32_t n)
{
	uint32_t refs[16], i;

	for (i = 0; i < n && i < 16; i++) {
		refs[i] = put_tag_string(names[i], T_STRING);
		if (!refs[i])
			return 0;
	}
	return put_ref_array(refs, i, T_SLOT_NAMES);
}

static uint32_t ref_or_null(uint32_t off)
{
	return off ? tnf_ref_perm(off) : 0;
}

/* Fills a built-in type record already allocated at @off. */
static int fill_builtin(enum tnf_tid id, uint32_t off)
{
	const struct builtin *b = &builtins[id];
	uint32_t *w = word(off), meta, v, n;

	meta = tnf_type_ref_locked((enum tnf_tid)b->meta);
	if (!meta)
		return -1;
	w[0] = tag_of(meta, (enum tnf_tid)b->meta);
	v = put_tag_string(b->name, T_NAME);
	if (!v)
		return -1;
	w[1] = tnf_ref_perm(v);
	if (b->props != P_NULL) {
		v = put_id_array(prop_lists[b->props], T_PROPERTIES);
		if (!v)
			return -1;
		w[2] = tnf_ref_perm(v);
	}
	switch (b->meta) {
	case T_SCALAR_TYPE:
		w[3] = b->size;
		w[4] = b->align;
		break;
	case T_DERIVED_TYPE:
		w[3] = b->base ? ref_or_null(tnf_type_ref_locked((enum tnf_tid)b->base)) : 0;
		break;
	case T_ARRAY_TYPE:
		w[3] = b->slots ? ref_or_null(put_id_array(b->slots, T_SLOT_TYPES)) : 0;
		w[4] = b->size;
		w[5] = b->base ? ref_or_null(tnf_type_ref_locked((enum tnf_tid)b->base)) : 0;
		break;
	case T_STRUCT_TYPE:
		w[3] = ref_or_null(put_id_array(b->slots, T_SLOT_TYPES));
		w[4] = b->size;
		if (b->names) {
			for (n = 0; b->slots[n] != END; n++)
				;
			w[5] = ref_or_null(put_name_array(b->names, n));
		}
		break;
	}
	return 0;
}

static uint32_t record_size_of_meta(uint8_t meta)
{
	switch (meta) {
	case T_TYPE:
		return 12;
	case T_DERIVED_TYPE:
		return 16;
	case T_SCALAR_TYPE:
		return 20;
	default:
		return 24;
	}
}

/* The offset of built-in type @id's record, written first if needed. */
uint32_t tnf_type_ref_locked(enum tnf_tid id)
{
	uint32_t off;

	if (id <= T_NONE || id >= T_COUNT)
		return 0;
	if (memo[id])
		return memo[id];
	off = tnf_tag_alloc(tnf_round8(record_size_of_meta(builtins[id].meta)));
	if (!off)
		return 0;
	/* remembered before filling: the graph has cycles */
	__atomic_store_n(&memo[id], off, __ATOMIC_RELEASE);
	if (fill_builtin(id, off)) {
		tnf_set_broken();
		return 0;
	}
	tnf_tag_done(off, tnf_round8(record_size_of_meta(builtins[id].meta)));
	return off;
}

uint32_t tnf_type_ref(enum tnf_tid id)
{
	uint32_t off = __atomic_load_n(&memo[id], __ATOMIC_ACQUIRE);

	if (off)
		return off;
	tnf_types_lock();
	off = tnf_type_ref_locked(id);
	tnf_types_unlock();
	return off;
}

static uint32_t slot_type_locked(const struct tnf_type_desc *d);

/* TNF layout of a record: member offsets into @offs, returns the size. */
uint32_t tnf_record_layout(const struct tnf_type_desc *d, uint32_t *offs)
{
	uint32_t off = 4, maxal = 4, i;

	for (i = 0; i < d->nmembers && i < 16; i++) {
		const struct tnf_kind_info *k = tnf_kind(d->members[i].type);

		off = (off + k->align - 1) & ~(uint32_t)(k->align - 1);
		if (offs)
			offs[i] = off;
		off += k->size;
		if (k->align > maxal)
			maxal = k->align;
	}
	return (off + maxal - 1) & ~(maxal - 1);
}

/* A user record's struct type (TNF_DEFINE_RECORD_n), by descriptor address. */
static uint32_t record_type_locked(const struct tnf_type_desc *d)
{
	uint32_t refs[17], names[17], off, v, i, n;
	int r;

	for (r = 0; r < nrecords; r++)
		if (records[r].desc == d)
			return records[r].off;
	if (nrecords == MAX_RECORDS || d->nmembers > 16)
		return 0;
	off = tnf_tag_alloc(24);
	if (!off)
		return 0;
	records[nrecords].desc = d;
	records[nrecords].off = off;
	nrecords++;
	n = d->nmembers;
	refs[0] = tnf_type_ref_locked(T_TAG);
	names[0] = put_tag_string("tnf_tag", T_STRING);
	for (i = 0; i < n; i++) {
		refs[i + 1] = slot_type_locked(d->members[i].type);
		names[i + 1] = put_tag_string(d->members[i].name, T_STRING);
		if (!refs[i + 1] || !names[i + 1])
			return 0;
	}
	v = tnf_type_ref_locked(T_STRUCT_TYPE);
	if (!v || !refs[0] || !names[0])
		return 0;
	word(off)[0] = tag_of(v, T_STRUCT_TYPE);
	word(off)[1] = ref_or_null(put_tag_string(d->name ? d->name : "record", T_NAME));
	word(off)[2] = ref_or_null(put_id_array(prop_lists[P_STRUCT], T_PROPERTIES));
	word(off)[3] = ref_or_null(put_ref_array(refs, n + 1, T_SLOT_TYPES));
	word(off)[4] = tnf_record_layout(d, NULL);
	word(off)[5] = ref_or_null(put_ref_array(names, n + 1, T_SLOT_NAMES));
	tnf_tag_done(off, 24);
	return off;
}

uint32_t tnf_record_type(const struct tnf_type_desc *d)
{
	uint32_t off;

	tnf_types_lock();
	off = record_type_locked(d);
	tnf_types_unlock();
	return off;
}

static uint32_t slot_type_locked(const struct tnf_type_desc *d)
{
	if (!d || d->kind >= TNF_K_MAX || !d->kind)
		return 0;
	if (d->kind == TNF_K_RECORD)
		return record_type_locked(d);
	return tnf_type_ref_locked((enum tnf_tid)tnf_kinds[d->kind].type);
}

/* Copies the value of unit @attr ("attr value;") of @attrs into @buf. */
static const char *attr_value(const char *attrs, const char *attr, size_t *len)
{
	size_t al = strlen(attr);
	const char *p = attrs;

	while (p && *p) {
		if (!strncmp(p, attr, al) && (p[al] == ' ' || p[al] == ';' || !p[al])) {
			const char *v = p + al, *e;

			while (*v == ' ')
				v++;
			e = strchr(v, ';');
			*len = e ? (size_t)(e - v) : strlen(v);
			return v;
		}
		p = strchr(p, ';');
		if (p)
			p++;
	}
	return NULL;
}

/*
 * The probe's type record (tnf_probe_type) and its directory cell, written
 * on the probe's first hit; cb->index caches the cell as a tag16 (ABS).
 */
uint32_t tnf_probe_tag(tnf_probe_control_t *cb)
{
	const struct tnf_type_desc *const *st = cb->slot_types;
	uint32_t refs[16], names[16], n = 0, off, cell, v, idx;
	const char *attrs = cb->attrs, *name, *slots, *rest;
	char buf[128];
	size_t len = 0, slen = 0;

	tnf_types_lock();
	idx = __atomic_load_n(&cb->index, __ATOMIC_ACQUIRE);
	if (idx)
		goto out;
	name = attrs ? attr_value(attrs, "name", &len) : NULL;
	slots = attrs ? attr_value(attrs, "slots", &slen) : NULL;
	rest = slots ? slots + slen : NULL;
	rest = rest && *rest == ';' ? rest + 1 : "";
	for (n = 0; st && st[n] && n < 16; n++) {
		refs[n] = slot_type_locked(st[n]);
		if (!refs[n])
			goto out;
	}
	if (n < 2)
		goto out;
	/* slot names: "tnf_tag", "time_delta", then the "slots" tokens */
	names[0] = put_tag_string("tnf_tag", T_STRING);
	names[1] = put_tag_string("time_delta", T_STRING);
	for (v = 2; v < n; v++) {
		const char *e;
		size_t l;

		while (slots && slen && *slots == ' ')
			slots++, slen--;
		e = slots ? memchr(slots, ' ', slen) : NULL;
		l = e ? (size_t)(e - slots) : slen;
		if (l >= sizeof(buf))
			l = sizeof(buf) - 1;
		memcpy(buf, slots ? slots : "", l);
		buf[l] = '\0';
		names[v] = put_tag_string(buf[0] ? buf : "arg", T_STRING);
		if (slots) {
			slots += l;
			slen -= l;
		}
	}
	off = tnf_tag_alloc(32);
	if (!off)
		goto out;
	word(off)[0] = tnf_ref_tag(tnf_type_ref_locked(T_PROBE_TYPE));
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, name ? name : "", len);
	buf[len] = '\0';
	word(off)[1] = ref_or_null(put_tag_string(buf, T_NAME));
	word(off)[2] = ref_or_null(put_id_array(prop_lists[P_STRUCT], T_PROPERTIES));
	word(off)[3] = ref_or_null(put_ref_array(refs, n, T_SLOT_TYPES));
	word(off)[4] = (uint32_t)cb->tnf_event_size;
	word(off)[5] = ref_or_null(put_ref_array(names, n, T_SLOT_NAMES));
	word(off)[6] = ref_or_null(put_tag_string(rest, T_STRING));
	tnf_tag_done(off, 32);
	cell = __atomic_fetch_add(&tnf_fh()->dir_next, 4, __ATOMIC_RELAXED);
	if (cell < TNF_CELL_FIRST || cell >= TNF_DIR_END)
		goto out;
	__atomic_store_n(word(cell), tnf_ref_perm(off), __ATOMIC_RELEASE);
	idx = cell | 1; /* tag16, ABS: a directory cell */
	__atomic_store_n(&cb->index, idx, __ATOMIC_RELEASE);
out:
	tnf_types_unlock();
	return idx;
}

/*
 * A process or thread name (at most 63 bytes kept) as a tnf_string in tag
 * space, written once per distinct name: schedule records point at it.
 * 0 if there is no room.
 */
uint32_t tnf_name_string(const char *s)
{
	char buf[64];
	uint32_t off = 0;
	size_t len;
	int i;

	if (!s || !*s)
		return 0;
	len = strnlen(s, sizeof(buf) - 1);
	memcpy(buf, s, len);
	buf[len] = '\0';
	tnf_types_lock();
	for (i = 0; i < nnames; i++)
		if (!strcmp(tnf_buf.base + names[i] + 8, buf)) {
			off = names[i];
			goto out;
		}
	if (nnames == MAX_NAMES)
		goto out;
	off = put_tag_string(buf, T_STRING);
	if (off)
		names[nnames++] = off;
out:
	tnf_types_unlock();
	return off;
}
