/* SPDX-License-Identifier: BSD-2-Clause */
/* Layout shared by bpf/tnfctl.bpf.c and the tracer helper (events.c). */
#ifndef TNFCTL_EVENTS_H
#define TNFCTL_EVENTS_H

/* A path, NUL included: the kernel's PATH_MAX, so no name it accepts is cut. */
#define TNF_PATH_MAX	4096
/* Link-map namespaces rtld can have (glibc's DL_NNS). */
#define TNF_RTLD_MAX_NS 16

/* Record kinds in the ring buffer. */
enum tnf_rec_kind {
	TNF_REC_FORK = 1,
	TNF_REC_EXEC,
	TNF_REC_EXIT,
	TNF_REC_DLOPEN,
	TNF_REC_DLCLOSE,
	TNF_REC_SYNC,	     /* first consistent link map after exec (rtld sync point) */
	TNF_REC_LEADER_GONE, /* the leader exited, other threads live on (pthread_exit) */
	TNF_REC_EXEC_FAILED, /* an execve failed: exit_code is the errno, uargv its argv */
};

/* Per-tgid flags in the tracked map, written by the tracer helper. */
enum tnf_tgid_flags {
	TNF_F_ARMED = 1 << 0,	    /* a tnfctl_continue is in progress: stop on events */
	TNF_F_FOLLOW = 1 << 1,	    /* track and stop fork children */
	TNF_F_STOP_SYNC = 1 << 2,   /* stop at the next RT_CONSISTENT (start-up) */
	TNF_F_PTRACE_FORK = 1 << 3, /* fork stops come from ptrace options */
	TNF_F_EXEC_FAILED = 1 << 4, /* stop at a failed execve (TNFCTL_OPEN_EXEC_FAILED) */
};

/* Record flags. */
enum tnf_rec_flags {
	TNF_RF_STOPPED = 1 << 0,       /* SIGSTOP sent to tid */
	TNF_RF_CHILD_STOPPED = 1 << 1, /* SIGSTOP sent to the fork child */
	TNF_RF_VFORK = 1 << 2,	       /* child shares the parent's mm */
	TNF_RF_CHILD_TRACKED = 1 << 3, /* child added to the tracked map */
	TNF_RF_INTERP = 1 << 4,	       /* EXEC: run by an interpreter (#!, binfmt_misc) */
};

/*
 * Keyed by tgid.  start_ticks is the process's identity: its leader's start
 * time in clock ticks since boot (USER_HZ, /proc/PID/stat field 22).  An
 * entry whose process is gone and whose pid was reused does not match the
 * new process, and the BPF side drops it instead of stopping a stranger.
 */
struct tnf_tgid_state {
	unsigned int flags;
	unsigned int rtld_pending;	 /* 1: RT_ADD seen, 2: RT_DELETE seen */
	unsigned long long r_state_addr; /* &_r_debug.r_state in the target */
	unsigned long long start_ticks;
	unsigned long long lm_tail; /* last object of the base link map at the last RT_CONSISTENT */
};

#define TNF_NSEC_PER_TICK 10000000ULL /* USER_HZ is 100 on every Linux ABI */

/*
 * A record, sent only up to the end of its path (path_len bytes): most
 * records carry none, so one costs 64 bytes, not 4 KiB.
 */
struct tnf_rec {
	unsigned long long time_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	unsigned int kind;
	unsigned int flags;
	int tgid;
	int tid;
	int child;		  /* FORK: child tgid */
	int old_tid;		  /* EXEC: tid before exec */
	int exit_code;		  /* EXIT: kernel exit code (status << 8 | signal) */
	unsigned int path_len;	  /* bytes of path[] sent, its NUL included (>= 1) */
	unsigned long long uargv; /* EXEC_FAILED: the argv passed, in the target */
	char path[TNF_PATH_MAX];  /* last: EXEC filename, DLOPEN/DLCLOSE object */
};

/* Per-tid pending dlopen/dlclose argument, set by the libc entry uprobes. */
struct tnf_dl_arg {
	char path[TNF_PATH_MAX];
	unsigned int notified; /* unused */
	unsigned int pad;
	unsigned long long uptr; /* dlopen: the name's address, read at RT_CONSISTENT */
};

#endif
