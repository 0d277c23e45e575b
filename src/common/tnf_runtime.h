/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The contract between the controller (libtnfctl) and the in-target runtime
 * (libtnfprobe.so.1).  Private: not installed.
 *
 * The controller finds everything by symbol in libtnfprobe's .dynsym (load
 * base + st_value) and never dereferences a pointer read from the target, so
 * it works before the target's objects are relocated.  Every field it writes
 * is a single aligned store.
 */
#ifndef TNF_RUNTIME_H
#define TNF_RUNTIME_H

#include <stdint.h>

#define TNF_RUNTIME_VERSION  1
#define TNF_RUNTIME_NAME_MAX 4096

/* Exported data symbol "tnf_runtime". */
#define TNF_RUNTIME_SYM "tnf_runtime"

/* Buffer states, as on Solaris; STOPPED is OR-ed on top. */
#define TNF_STATE_RUNNING  0
#define TNF_STATE_NOBUFFER 1
#define TNF_STATE_FORKED   2
#define TNF_STATE_BROKEN   3
#define TNF_STATE_MASK	   0xf
#define TNF_STATE_STOPPED  16

#define TNF_TRACE_FILE_MIN     (128u * 1024)
/* The largest file the runtime maps (its permanent references hold 30 bits). */
#define TNF_TRACE_FILE_MAX     (1u << 30)
#define TNF_TRACE_FILE_DEFAULT (4u * 1024 * 1024)

struct tnf_runtime {
	uint32_t version;	     /* TNF_RUNTIME_VERSION */
	uint32_t size;		     /* sizeof(struct tnf_runtime) */
	volatile uint32_t state;     /* TNF_STATE_*; starts NOBUFFER */
	uint32_t file_min;	     /* minimum trace file size, bytes */
	volatile uint64_t file_size; /* bytes; written by the controller */
	/*
	 * Set to 1 by the controller after file_name and file_size are in
	 * place; the runtime maps the file on the first probe hit after that.
	 */
	volatile uint32_t file_ready;
	/* 1 while tnfctl_internal_open has a handle in this process. */
	volatile uint32_t internal_tracing;
	/* pid of the process an external controller opened (0: none). */
	volatile int32_t external_pid;
	uint32_t chain_pool_size; /* entries in tnf_chain_pool */
	/* Entries of tnf_chain_pool handed out so far (controller-managed). */
	volatile uint32_t chain_pool_used;
	uint32_t pad;
	char file_name[TNF_RUNTIME_NAME_MAX]; /* absolute path; "" = none */
};

/*
 * Exported symbols the controller resolves (all in libtnfprobe):
 *   tnf_runtime            struct tnf_runtime
 *   tnf_chain_pool         struct tnf_probe_chain[chain_pool_size]
 *   tnf_probe_test         value for tnf_probe_control.test_func (enable)
 *   tnf_trace_alloc        value for .alloc_func
 *   tnf_trace_end          value for .probe_func
 *   tnf_trace_commit       value for .commit_func (traced)
 *   tnf_trace_rollback     value for .commit_func (untraced)
 *   tnf_probe_debug        the predefined &debug probe function
 */
#define TNF_SYM_CHAIN_POOL "tnf_chain_pool"
#define TNF_SYM_TEST	   "tnf_probe_test"
#define TNF_SYM_ALLOC	   "tnf_trace_alloc"
#define TNF_SYM_END	   "tnf_trace_end"
#define TNF_SYM_COMMIT	   "tnf_trace_commit"
#define TNF_SYM_ROLLBACK   "tnf_trace_rollback"
#define TNF_SYM_DEBUG	   "tnf_probe_debug"

#define TNF_CHAIN_POOL_SIZE 1024

/* ELF section holding every probe's struct tnf_probe_control. */
#define TNF_PROBE_SECTION "tnf_probes"

#endif
