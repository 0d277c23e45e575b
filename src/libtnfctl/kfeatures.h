/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the running kernel offers, read once per process from its BTF, and
 * the uprobe links built on it (uprobe_link.c): shared by the tracer
 * helper's events.c and the passive watch.
 */
#ifndef TNFCTL_KFEATURES_H
#define TNFCTL_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_program;
struct bpf_link;

struct tnf_kfeatures {
	/*
	 * What every BPF object here needs: BTF, tp_btf programs on the
	 * sched_process_* tracepoints (5.5) and the BPF ring buffer (5.8).
	 * Without it an open fails with TNFCTL_ERR_KERNEL.
	 */
	bool base;
	bool atomic_fetch; /* BPF atomic fetch-and-add (5.12): the watch's object for new kernels */
	bool attach_cookie; /* bpf_get_attach_cookie (5.15): kernel mode, the watch's new object */
	bool iter_task;	    /* iter/task programs (5.8): the passive watch */
	bool loop;	    /* the bpf_loop helper (5.17): the watch's object for new kernels */
	bool current_task_btf; /* bpf_get_current_task_btf (5.11): the watch's new object */
	/*
	 * The watch loads its object for kernels without the four above (from
	 * 5.10) even where they are: TNFCTL_WATCH_COMPAT non-empty (the tests).
	 */
	bool watch_compat_forced;
	bool send_signal_task; /* kfunc bpf_send_signal_task (6.13+) */
	bool exit_group_dead;  /* sched_process_exit passes group_dead (6.16+) */
	bool uprobe_multi;     /* uprobe_multi links (6.6+), unless TNFCTL_NO_UPROBE_MULTI */
	/*
	 * fexit on the execve/execveat syscalls (trampolines allowed): failed
	 * execs cost only execs; else the raw sys_exit tracepoint, which runs at
	 * every syscall's return in the system.
	 */
	bool fexit_execve;
	bool raw_tp_sys_exit; /* the raw sys_exit tracepoint, the fallback for it */
};

/* Parsed at the first call (tens of ms), then cached. */
const struct tnf_kfeatures *tnf_kfeatures(void);

/* How failed execs are caught; tnf_failed_exec_prepare says, before the load. */
enum tnf_failed_exec {
	TNF_FX_NONE,	 /* neither: no failed-exec events */
	TNF_FX_SYS_EXIT, /* the raw sys_exit tracepoint: every syscall pays */
	TNF_FX_FEXIT,	 /* fexit on the execve syscalls: only execs pay */
};

/* Sets the autoload of an object's three failed-exec programs. */
enum tnf_failed_exec tnf_failed_exec_prepare(struct bpf_program *sys_exit,
					     struct bpf_program *execve,
					     struct bpf_program *execveat);

/*
 * A uprobe link: a uprobe_multi link's fd where the kernel has them (@prog
 * prepared by tnf_uprobe_prepare before its object is loaded), otherwise a
 * libbpf perf link.
 */
struct tnf_ulink {
	struct bpf_link *link;
	int fd;
};

void tnf_uprobe_prepare(struct bpf_program *prog);
int tnf_uprobe_attach(struct bpf_program *prog, bool ret, const char *path, uint64_t off,
		      struct tnf_ulink *l);
int tnf_uprobe_attach_cookie(struct bpf_program *prog, bool ret, const char *path, uint64_t off,
			     uint64_t cookie, struct tnf_ulink *l);
/*
 * Release @n links: handed to a detached process where possible
 * (link_release.c), else here, together, so their grace periods overlap.
 */
void tnf_uprobe_release_all(struct tnf_ulink *l, size_t n);
void tnf_uprobe_release_async(struct tnf_ulink *l, size_t n);
int tnf_links_hand_off(const int *fds, size_t n);

#endif
