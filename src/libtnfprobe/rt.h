/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private declarations of libtnfprobe.so.1, the in-target TNF writer.
 * File layout (reference §4.2-4.3): magic and file header in block 0, the
 * directory of forwarding cells up to 0x10000, the tag reserve up to
 * 0x18000, then data blocks.  All offsets are file offsets (uint32_t).
 */
#ifndef TNF_RT_H
#define TNF_RT_H

#define TNF_PROBE_RUNTIME_BUILD 1
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <tnf/probe.h>
#include "tnf_runtime.h"
#include "tnf_drops.h"

#define TNF_EXPORT __attribute__((visibility("default")))

#define TNF_MAGIC	     0x544E4600u
#define TNF_MAGIC_FORMATTING 0x544E46FFu /* claimed by a formatter, not ready yet */
#define TNF_BLOCK_SIZE	     512u
#define TNF_BLOCK_HDR	     24u
#define TNF_SCHED_SIZE	     32u /* tnf_sched_rec, names included */
#define TNF_KSCHED_SIZE	     40u /* a kernel trace's tnf_sched_rec */
#define TNF_DIR_END	     0x10000u
#define TNF_RESERVE_START    0x10000u
#define TNF_DATA_START	     0x18000u
#define TNF_TAG_GEN	     0xFFFFFFFFu
#define TNF_FILE_MAX	     (1u << 30) /* permanent references hold 30 bits */

/* Directory cells 0..2 and the first free one. */
#define TNF_CELL_FILE_HEADER  0x200u
#define TNF_CELL_BLOCK_HEADER 0x204u
#define TNF_CELL_ROOT	      0x208u
#define TNF_CELL_FIRST	      0x20cu

/* 32-bit references: low 2 bits the kind, bit 31 permanent (absolute). */
#define TNF_REF_PERM 0x80000000u
#define TNF_REF_PAIR 1u
#define TNF_REF_TAG  2u

static inline uint32_t tnf_ref_perm(uint32_t off)
{
	return TNF_REF_PERM | off;
}

static inline uint32_t tnf_ref_tag(uint32_t off)
{
	return TNF_REF_PERM | off | TNF_REF_TAG;
}

static inline uint32_t tnf_round8(uint32_t n)
{
	return (n + 7) & ~7u;
}

/* Block 0.  The writer-private tail stays inside tnf_file_header's size. */
struct tnf_file_header {
	uint32_t magic;
	uint32_t tag;
	uint32_t file_version;
	uint32_t file_header_size;
	uint32_t file_log_size;
	uint32_t block_header_size;
	uint32_t block_size;
	uint32_t directory_size;
	uint32_t block_count;
	uint32_t blocks_valid;
	uint64_t ticket;     /* data blocks handed out so far (lap = ticket / blocks) */
	uint32_t tag_cursor; /* next free byte in tag space */
	uint32_t dir_next;   /* next free directory cell */
	/* events lost, for the reader to report (tnf_drops.h) */
	uint32_t drops_magic;
	uint32_t drops_total;
	uint32_t drops[TNF_DROPS_MAX_REASONS];
};

_Static_assert(offsetof(struct tnf_file_header, drops_magic) == TNF_DROPS_MAGIC_OFF &&
		       offsetof(struct tnf_file_header, drops_total) == TNF_DROPS_TOTAL_OFF &&
		       offsetof(struct tnf_file_header, drops) == TNF_DROPS_REASON_OFF &&
		       sizeof(struct tnf_file_header) == TNF_DROPS_END,
	       "drop counters where tnf_drops.h says");

struct tnf_block_header {
	uint32_t tag;
	uint32_t generation;
	uint16_t bytes_valid;
	uint8_t a_lock; /* held by the thread writing the block */
	uint8_t b_lock;
	/*
	 * Writer-private (padding to TNF readers): the pid holding a_lock, 0
	 * while free or being taken, so a dead process's block can be reused.
	 */
	uint32_t owner;
	uint64_t next_block;
};

/* The mapped buffer of this process. */
struct tnf_buf {
	char *base;
	uint32_t size;
	uint32_t log_size;
	uint32_t ndata; /* data blocks */
	int formatted;	/* magic seen */
};

/*
 * Per-thread writer state (TLS, initial-exec: no lock, no allocation on the
 * hot path).  ops must stay first: the macros get &ops as setup->tpd_p.
 */
struct tnf_thread {
	struct tnf_ops ops;
	uint32_t blk;	/* current block, 0 = none */
	uint32_t pos;	/* next free byte */
	uint32_t valid; /* committed end */
	uint32_t sched; /* schedule record in blk, 0 = none */
	int64_t time_base;
	pid_t tid;
	uint32_t name; /* tnf_string of its name in tag space, 0 = none */
	int busy;      /* in a probe: nested probes are dropped */
	int disabled;
	int registered;
};

extern struct tnf_runtime tnf_runtime;
extern struct tnf_buf tnf_buf;
extern pid_t tnf_pid;
extern uint32_t tnf_proc_name; /* tnf_string of the program's name, 0 = none */
extern __thread struct tnf_thread tnf_self __attribute__((tls_model("initial-exec")));

static inline struct tnf_file_header *tnf_fh(void)
{
	return (struct tnf_file_header *)tnf_buf.base;
}

static inline struct tnf_block_header *tnf_bh(uint32_t off)
{
	return (struct tnf_block_header *)(tnf_buf.base + (off & ~(TNF_BLOCK_SIZE - 1)));
}

/* state.c */
int tnf_buf_usable(void);
void tnf_set_broken(void);
int64_t tnf_now(void);

/* format.c */
int tnf_format(void);

/* drops.c */
void tnf_drop(enum tnf_drop_reason why);

/* blocks.c */
uint32_t tnf_block_take(int for_tags);
void tnf_block_release(struct tnf_thread *t);
int tnf_block_new(struct tnf_thread *t);
void tnf_commit_thread(struct tnf_thread *t);
uint32_t tnf_tag_alloc(uint32_t size);
void tnf_tag_done(uint32_t off, uint32_t size);

/* types.c: built-in type ids, layout of argument kinds */
enum tnf_tid {
	T_NONE,
	T_INLINE,
	T_TAGGED,
	T_SCALAR,
	T_CHAR,
	T_INT8,
	T_UINT8,
	T_INT16,
	T_UINT16,
	T_INT32,
	T_UINT32,
	T_INT64,
	T_UINT64,
	T_FLOAT32,
	T_FLOAT64,
	T_ARRAY,
	T_STRING,
	T_TYPE_ARRAY,
	T_NAME_ARRAY,
	T_DERIVED,
	T_ALIGN,
	T_DERIVED_BASE,
	T_ELEMENT_TYPE,
	T_HEADER_SIZE,
	T_NAME,
	T_OPAQUE,
	T_PROPERTIES,
	T_SELF_SIZE,
	T_SIZE,
	T_SLOT_NAMES,
	T_SLOT_TYPES,
	T_TAG,
	T_TAG_ARG,
	T_TYPE_SIZE,
	T_STRUCT,
	T_FILE_HEADER,
	T_BLOCK_HEADER,
	T_TYPE,
	T_ARRAY_TYPE,
	T_DERIVED_TYPE,
	T_SCALAR_TYPE,
	T_STRUCT_TYPE,
	T_PROBE_TYPE,
	T_PROBE_EVENT,
	T_TIME_DELTA,
	T_SCHED_REC,
	T_LWPID,
	T_PID,
	T_TIME_BASE,
	T_KTHREAD_ID, /* kernel traces (libtnfctl's kernel mode) */
	T_CPUID,
	T_KSCHED_REC,
	T_COUNT
};

struct tnf_kind_info {
	uint8_t size; /* bytes in a record */
	uint8_t align;
	uint8_t tagged; /* a 4-byte reference */
	uint8_t type;	/* enum tnf_tid */
};

extern const struct tnf_kind_info tnf_kinds[TNF_K_MAX];

static inline const struct tnf_kind_info *tnf_kind(const struct tnf_type_desc *d)
{
	unsigned int k = d ? d->kind : 0;

	return &tnf_kinds[k < TNF_K_MAX ? k : 0];
}

void tnf_types_lock(void);
void tnf_types_unlock(void);
void tnf_types_after_fork(void);
void tnf_types_reset(void);
uint32_t tnf_type_ref(enum tnf_tid id);
uint32_t tnf_type_ref_locked(enum tnf_tid id);
uint32_t tnf_record_type(const struct tnf_type_desc *d);
uint32_t tnf_record_layout(const struct tnf_type_desc *d, uint32_t *offs);
uint32_t tnf_probe_tag(tnf_probe_control_t *cb);
uint32_t tnf_name_string(const char *s);

/* args.c */
void tnf_put_string(tnf_probe_setup_t *set, uint32_t *slot, const char *str);
void tnf_put_record(tnf_probe_setup_t *set, uint32_t *slot, const struct tnf_type_desc *type,
		    const void *rec);

/* threads.c */
void tnf_thread_register(struct tnf_thread *t);

/* exported */
TNF_EXPORT void *tnf_probe_test(void *unused, tnf_probe_control_t *cb, tnf_probe_setup_t *set);
TNF_EXPORT void *tnf_trace_alloc(struct tnf_ops *ops, tnf_probe_control_t *cb,
				 tnf_probe_setup_t *set);
TNF_EXPORT void tnf_trace_end(tnf_probe_setup_t *set);
TNF_EXPORT void tnf_trace_commit(tnf_probe_setup_t *set);
TNF_EXPORT void tnf_trace_rollback(tnf_probe_setup_t *set);
TNF_EXPORT void tnf_probe_debug(tnf_probe_setup_t *set);

#endif
