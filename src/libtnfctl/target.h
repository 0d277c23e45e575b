/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target processes seen through /proc (target.c): status, mappings,
 * memory, the rtld state.  Used by the engine and by the client alike.
 */
#ifndef TNFCTL_TARGET_H
#define TNFCTL_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <tnf/tnfctl.h>
#include "tnfctl_events.h" /* TNF_RTLD_MAX_NS, the ticks */

struct tnf_maps_info {
	uint64_t ldso_base;
	char ldso_path[512]; /* /proc/PID/map_files/... of ld.so */
	char libc_path[512];
	bool has_libtnfprobe;
	bool has_libc;
	uint64_t exe_base; /* no interpreter: the executable's first mapping */
};
int tnf_proc_tgid(pid_t tid);
int tnf_proc_tracer(pid_t pid);
int tnf_proc_caps_eff(pid_t pid, uint64_t *eff);
bool tnf_proc_traced_by(pid_t tgid, pid_t tracer);
bool tnf_proc_sig_queued(pid_t pid, int sig);
bool tnf_proc_sigstop_pending(pid_t pid);
bool tnf_proc_kthread(pid_t pid);
tnfctl_errcode_t tnf_check_may_trace(pid_t pid);
bool tnf_proc_exiting(pid_t tid);
bool tnf_proc_refused(pid_t pid);
bool tnf_proc_job_stopped(pid_t pid);
bool tnf_proc_task_exists(pid_t tgid, pid_t tid);
int tnf_proc_open_task_file(pid_t pid, const char *name);
unsigned long long tnf_proc_starttime(pid_t pid);
void tnf_proc_wait_stopped(pid_t pid);
int tnf_proc_maps(pid_t pid, struct tnf_maps_info *mi);
int tnf_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* rtld: &_r_debug.r_state, and whether start-up is complete. */
int tnf_rtld_locate(pid_t pid, const struct tnf_maps_info *mi, uint64_t *r_state_addr);
int tnf_rtld_started(pid_t pid, uint64_t r_state_addr);
int tnf_rtld_consistent(pid_t pid, uint64_t r_state_addr);
int tnf_rtld_namespaces(pid_t pid, uint64_t r_state_addr, uint64_t *rd, int max);
int tnf_rtld_last_object(pid_t pid, uint64_t r_state_addr, char *buf, size_t len);

/* A process's start as BPF computes it (start_boottime in USER_HZ ticks), 0 if gone. */
uint64_t tnf_start_ticks(pid_t tgid);

#endif
