/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Passive tree watching (tnfctl_watch_*): internals shared by watch.c (the
 * BPF object, the ring buffer and the API), watch_tree.c (the tree found in
 * /proc at open, libc uprobes) and watch_exec.c (a command started held).
 * Runs in the caller's process: a watch needs no tracer helper.
 */
#ifndef TNFCTL_WATCH_H
#define TNFCTL_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <tnf/tnfctl.h>
#include "exec_info.h"
#include "watch_events.h"

struct tnfctl_watch_bpf;
struct ring_buffer;
struct tnf_ulink;

struct tnf_watch_libc {
	dev_t dev;
	ino_t ino;
};

struct tnfctl_watch {
	struct tnfctl_watch_bpf *skel;
	struct ring_buffer *rb;
	int epfd; /* the ring buffer and the timer: what tnfctl_watch_fd gives */
	int tfd;  /* timerfd at last_wake_ns + delay_ns: the delivery bound */
	unsigned int flags;
	pid_t root;
	uint64_t delay_ns;
	bool legacy_exit; /* no group_dead in the exit tracepoint: drop doubled EXITs */
	bool iter_all;	  /* the kernel cannot narrow a task iterator to one task (< 6.1) */
	/* uprobes on dlopen/dlclose (entry and return), per libc inode */
	struct tnf_watch_libc *libcs;
	size_t nlibcs;
	struct tnf_ulink *links;
	size_t nlinks;
	/* records drained from the ring, not yet returned: [u32 len][record], 8-aligned */
	unsigned char *q;
	size_t qhead, qtail, qcap;
	uint64_t lost_reported[TNF_WLOST_NR];
	pid_t recent_exit[16]; /* legacy_exit only */
	unsigned int nrecent;
	bool ended; /* every process of the tree has ended and its records are drained */
	struct tnf_exec_data exec; /* of the last event returned, if an exec */
	int failed_exec;	   /* enum tnf_failed_exec (kfeatures.h) */
};

/* watch.c */
tnfctl_errcode_t tnf_watch_new(pid_t root, unsigned int flags, struct tnfctl_watch **wp);
int tnf_watch_add(struct tnfctl_watch *w, pid_t pid, pid_t ppid);

/* watch_tree.c */
tnfctl_errcode_t tnf_watch_check_caller(pid_t pid);
bool tnf_watch_caller_may_trace_all(void);
tnfctl_errcode_t tnf_watch_add_descendants(struct tnfctl_watch *w);
void tnf_watch_attach_libc_of(struct tnfctl_watch *w, pid_t pid);
void tnf_watch_detach_all(struct tnfctl_watch *w);

#endif
