/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel mode (tnfctl_kernel_open): what the generic tracepoint program
 * (ktrace.bpf.c) and the consumer (src/libtnfctl/ktrace.c) share.
 */
#ifndef TNF_KTRACE_EVENTS_H
#define TNF_KTRACE_EVENTS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define KT_MAX_FIXED	 512   /* bytes of a tracepoint's fixed record copied */
#define KT_MAX_STRS	 4     /* string fields copied per event */
#define KT_STR_MAX	 256   /* bytes per string, NUL included */
#define KT_MAX_PIDS	 65536 /* the process filter's list */
/* tracepoints traced at once on a kernel without BPF cookies (one stub program each) */
#define KT_SLOTS	 64
/* kt_pids holds each process's start, as /proc's starttime (USER_HZ is 100) */
#define KT_NSEC_PER_TICK 10000000ULL

/* How a string field is found in the tracepoint's record. */
enum kt_str_kind {
	KT_STR_DATA_LOC = 1, /* __data_loc char[]: u32 (len << 16 | offset) */
	KT_STR_USER_PTR = 2, /* a user pointer (syscalls' const char *) */
	KT_STR_REL_LOC = 3,  /* __rel_loc char[]: offset from after the field */
};

/* Per attached tracepoint, keyed by its link's serial (the link's BPF cookie). */
struct kt_event_cfg {
	__u32 probe;	  /* the probe's id in the handle */
	__u16 fixed_size; /* bytes of the record to copy (<= KT_MAX_FIXED) */
	__u8 nstrs;
	__u8 pad;
	__u16 str_off[KT_MAX_STRS];
	__u8 str_kind[KT_MAX_STRS];
};

/*
 * One record in the ring buffer: this, the fixed record, then each string
 * as a status byte (1 read, 0 could not be read) and its NUL-ended bytes.
 */
struct kt_hdr {
	__u64 ts; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 probe;
	__u32 cpu;
	__u32 pid; /* tgid */
	__u32 tid;
	__u16 fixed_size;
	__u16 nstrs;
	__u32 pad;
};

#endif
