/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Passive tree watching (tnfctl_watch_*), the client's side: internals
 * shared by watch.c (the open, the ring buffer, the API) and watch_exec.c
 * (a command started held).  The engine (src/engine/watches.c) keeps the
 * BPF object every watch shares; a watch here is a slot of it, an id on the
 * engine connection, its ring buffer's descriptor and its counters mapped
 * read-only.
 */
#ifndef TNFCTL_WATCH_H
#define TNFCTL_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <tnf/tnfctl.h>
#include "exec_info.h"
#include "watch_events.h"

struct ring_buffer;
struct tnfctl_handle;

struct tnfctl_watch {
	struct tnfctl_handle *h; /* its id on the engine connection: the slot's owner */
	struct ring_buffer *rb;
	int ring_fd;
	const struct tnf_wslot *st; /* the slot's counters (mapped read-only) */
	void *st_map;
	size_t st_len;
	int epfd; /* the ring buffer, the timer, the engine: what tnfctl_watch_fd gives */
	int tfd;  /* timerfd at last_wake_ns + delay_ns: the delivery bound */
	int engine_pidfd;
	unsigned int flags;
	pid_t root;
	uint64_t delay_ns;
	bool legacy_exit; /* no group_dead in the exit tracepoint: drop doubled EXITs */
	bool client_seq;  /* the kernel's records carry no seq: numbered here, next_seq */
	uint64_t next_seq;
	bool engine_gone;
	/* records drained from the ring, not yet returned: [u32 len][record], 8-aligned */
	unsigned char *q;
	size_t qhead, qtail, qcap;
	uint64_t lost_reported[TNF_WLOST_NR];
	pid_t recent_exit[16]; /* legacy_exit only */
	unsigned int nrecent;
	bool ended; /* every process of the tree has ended and its records are drained */
	struct tnf_exec_data exec;     /* of the last event returned, if an exec */
	char path[TNF_WATCH_PATH_MAX]; /* of the last event returned */
};

/* watch.c: @flags: TNFCTL_WATCH_DL, TNF_WATCH_HELD (proto.h) */
tnfctl_errcode_t tnf_watch_new(pid_t root, unsigned int flags, const struct tnfctl_watch_opts *opts,
			       struct tnfctl_watch **wp);
tnfctl_errcode_t tnf_watch_opts_check(const struct tnfctl_watch_opts *opts, unsigned int allowed);

#endif
