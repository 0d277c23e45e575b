/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <tnf/probe.h>: TNF probes for user programs (Solaris TNF_PROBE(3TNF)).
 *
 * A probe site expands to a static control block in the ELF section
 * "tnf_probes" and a test of its test_func: a disabled probe costs one load
 * and one predictable branch.  A controller (libtnfctl) finds the blocks
 * through the section headers of each loaded object and enables, traces and
 * connects a probe by single aligned pointer stores into its block.
 */
#ifndef TNF_PROBE_H
#define TNF_PROBE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- control block: the ABI shared with libtnfctl ------------------------ */

/* Value of tnf_probe_control.version for this layout ("TNF" 1). */
#define TNF_PROBE_VERSION_1 0x544e4601UL

struct tnf_ops;
struct tnf_type_desc;
typedef struct tnf_probe_control tnf_probe_control_t;

/* Handed from the test function through the argument stores to probe_func. */
typedef struct tnf_probe_setup {
	struct tnf_ops *tpd_p;	     /* the firing thread's writer state */
	void *buffer_p;		     /* the event being built */
	tnf_probe_control_t *probe_p; /* the probe that fired */
} tnf_probe_setup_t;

typedef void *(*tnf_probe_test_func_t)(void *, tnf_probe_control_t *, tnf_probe_setup_t *);
typedef void *(*tnf_probe_alloc_func_t)(struct tnf_ops *, tnf_probe_control_t *,
					tnf_probe_setup_t *);
typedef void (*tnf_probe_func_t)(tnf_probe_setup_t *);

/*
 * Connected probe functions, most recently connected first.  Nodes live in
 * libtnfprobe's tnf_chain_pool and are written by the controller before it
 * publishes them with one store to tnf_probe_control.chain; tnf_trace_end
 * calls each node's func, then commit_func.
 */
struct tnf_probe_chain {
	tnf_probe_func_t func;
	const struct tnf_probe_chain *next;
};

/*
 * One per probe site, in section "tnf_probes".  Fields the controller
 * writes: test_func (NULL = disabled), alloc_func, probe_func, commit_func
 * (tnf_trace_commit = traced, tnf_trace_rollback = untraced), chain.  The
 * others are set at compile time (index is the runtime's cache).  A block
 * whose commit_func is NULL has never been touched by a controller.
 */
struct tnf_probe_control {
	uintptr_t version; /* TNF_PROBE_VERSION_1 */
	uintptr_t next;	   /* unused on Linux; kept for Solaris layout */
	tnf_probe_test_func_t test_func;
	tnf_probe_alloc_func_t alloc_func;
	tnf_probe_func_t probe_func;
	tnf_probe_func_t commit_func;
	uintptr_t index; /* runtime: reference to this probe's type record */
	const char *attrs;
	const struct tnf_type_desc *const *slot_types; /* NULL-terminated */
	unsigned long tnf_event_size;			/* bytes */
	const struct tnf_probe_chain *chain;		/* connected functions */
};

/* ---- TNF_PROBE_FILL_IN_BELOW (types, macros, switches) ------------------- */

#ifdef __cplusplus
}
#endif
#endif
