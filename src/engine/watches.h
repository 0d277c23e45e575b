/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The engine's passive watches (tnfctl_watch_*): one BPF object
 * (bpf/watch.bpf.c) loaded once and shared by every watch of every client,
 * a slot per watch (watches.c); the tree found in /proc at open and the
 * dlopen/dlclose uprobes per libc (watch_tree.c).
 */
#ifndef TNFCTL_ENGINE_WATCHES_H
#define TNFCTL_ENGINE_WATCHES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <tnf/tnfctl.h>
#include "proto.h"
#include "tracer.h"
#include "watch_events.h"

struct tnfctl_watch_bpf;

/* watches.c */
bool watch_op(struct tnf_peer from, const struct tnf_req *req);
void watches_conn_gone(struct tnf_conn *c);
int watches_timeout(int timeout);
void watches_drain_notices(void);
void watches_stats(struct tnf_rep *rep);
void watches_unload(void);
bool watches_dl_any(void);
void watches_release_uprobes(void);
int watch_add(unsigned int slot, pid_t pid, pid_t ppid);

/* watch_rings.c */
int wrings_start(int rings_fd);
void wrings_stop(void);
int wrings_take(uint64_t size, int *fd);
void wrings_put(unsigned int s);

/* watch_tree.c */
bool watch_caller_may_trace_all(void);
tnfctl_errcode_t watch_add_descendants(unsigned int slot, pid_t root,
				       struct tnfctl_watch_bpf *dl_skel);
bool watch_compat(void);
bool watch_attach_libc_of(struct tnfctl_watch_bpf *skel, pid_t pid);
void watch_detach_all(bool async);
size_t watch_uprobes(void);

#endif
