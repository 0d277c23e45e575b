/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Layout shared by bpf/watch.bpf.c, the engine that loads it once for all
 * its watches (src/engine/watches.c) and the client that reads one watch's
 * ring buffer (src/libtnfctl/watch.c): passive tree watching
 * (tnfctl_watch_*).  Nothing here stops anything.
 */
#ifndef TNFCTL_WATCH_EVENTS_H
#define TNFCTL_WATCH_EVENTS_H

/* A path, NUL included: the kernel's PATH_MAX, so no name it accepts is cut. */
#define TNF_WATCH_PATH_MAX 4096

/* Record kinds in the ring buffer. */
enum tnf_wrec_kind {
	TNF_WREC_FORK = 1,
	TNF_WREC_EXEC,
	TNF_WREC_EXIT,
	TNF_WREC_DLOPEN,
	TNF_WREC_DLCLOSE,
	TNF_WREC_EXEC_FAILED, /* a struct tnf_wrec_exec too; h.exit_code is the errno */
	/*
	 * No event: a wake-up for the consumer after a process whose parent is
	 * not tracked (the root, an orphan) has left the tracked map, so that
	 * the end of the tree is seen at once, not at the next batch timer.
	 */
	TNF_WREC_WAKE,
};

/* Indexes of the per-CPU `lost` counters. */
enum tnf_wlost {
	TNF_WLOST_RECORDS,   /* ring buffer full: a record could not be reserved */
	TNF_WLOST_UNTRACKED, /* tracked map full: a fork child is not followed */
	TNF_WLOST_NR,
};

/*
 * Watches an engine serves at once: a watch is a slot, its bit in a
 * process's mask, its ring buffer at that index of the `rings` map-of-maps.
 */
#define TNF_WATCH_SLOTS	       64
/* A watch's ring buffer unless TNFCTL_WATCH_RINGBUF says otherwise (bytes). */
#define TNF_WATCH_RING_DEFAULT (1ull << 20)

/*
 * ld.so files (of distinct layouts) whose _dl_debug_state the compat
 * object, without attach cookies, tells apart; past them DL records of
 * another's processes are counted lost.
 */
#define TNF_RTLD_PROBED_MAX 8

/* Value of the tracked map (key: tgid): the watches whose tree holds it. */
struct tnf_watch_proc {
	unsigned long long mask;
	unsigned long long lm_tail; /* last object of its base link map at the last RT_CONSISTENT */
};

/* A slot's settings, written by the engine before the slot opens. */
struct tnf_wslot_cfg {
	unsigned long long delay_ns;   /* longest a record waits for a wake-up */
	unsigned long long wake_bytes; /* wake when this much is unread */
	unsigned int argv_max;	       /* argv bytes per record (<= ring / 8) */
	unsigned int untrack_secure;   /* drop a process that execs setuid/setgid */
};

/*
 * A slot's counters, in the mmapable `.data.wslots` map: the engine resets
 * them before the slot opens; the slot's client maps them read-only (its
 * delivery timer, its loss counts, the end of its tree).
 */
struct tnf_wslot {
	unsigned long long seq;
	unsigned long long last_wake_ns; /* the last forced wake-up */
	unsigned long long lost[2];	 /* TNF_WLOST_* */
	long long nlive;		 /* processes of the tree still tracked */
	unsigned long long pad[3];
};

/*
 * Every record starts with this header.  FORK and EXIT records are just the
 * header; EXEC and EXEC_FAILED are a struct tnf_wrec_exec, DLOPEN and
 * DLCLOSE a struct tnf_wrec_str.
 */
struct tnf_wrec {
	unsigned long long seq;	    /* taken before the reserve: a lost record is a hole */
	unsigned long long time_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	unsigned int kind;
	int tgid;
	int tid;       /* thread that did it (EXEC: the thread that called execve) */
	int ptgid;     /* parent's tgid at the time of the event */
	int child;     /* FORK: child tgid */
	int exit_code; /* EXIT: kernel exit code (status << 8 | core 0x80 | signal) */
};

/*
 * EXEC and EXEC_FAILED records: variable size (an exec costs what its
 * strings take).  data[] holds the path (path_len bytes, NUL included), the
 * cwd's components leaf first, each NUL-terminated (cwd_len bytes), then the
 * argument strings as the new image's stack holds them (argv_len bytes).
 */
struct tnf_wrec_exec {
	struct tnf_wrec h;
	unsigned int argv_bytes; /* EXEC: arg_end - arg_start; EXEC_FAILED: bytes read */
	unsigned int argv_len;	 /* bytes of argv in data[] */
	unsigned short path_len;
	unsigned short cwd_len;
	unsigned int flags; /* TNF_WX_*; data[] follows the struct */
};

enum tnf_wx_flags {
	TNF_WX_ARGV_TRUNC = 1 << 0, /* = TNFCTL_EXEC_ARGV_TRUNCATED */
	TNF_WX_CWD_TRUNC = 1 << 1,  /* = TNFCTL_EXEC_CWD_TRUNCATED */
	TNF_WX_INTERP = 1 << 2,	    /* EXEC: run by an interpreter (bprm->interp != filename) */
};

#define TNF_EXEC_ARGV_MAX 65536 /* = TNFCTL_EXEC_ARGV_MAX */
#define TNF_EXEC_CWD_MAX  4096	/* bytes of cwd components in a record */
#define TNF_EXEC_NAME_MAX 256	/* one path component, NUL included */
#define TNF_EXEC_ARGC_MAX 1024	/* EXEC_FAILED: pointers of argv walked */

/*
 * Per-CPU scratch an exec record is built in.  Offsets are masked for the
 * verifier: path and cwd (8 KiB at most) within TNF_EXEC_ARGV_OFF_MASK, then twice the argv
 * bound.
 */
#define TNF_EXEC_ARGV_OFF_MASK 16383
struct tnf_wexec_buf {
	struct tnf_wrec_exec r;
	char data[TNF_EXEC_ARGV_OFF_MASK + 1 + 2 * TNF_EXEC_ARGV_MAX];
};

/* DLOPEN and DLCLOSE records: sent up to the end of the path. */
struct tnf_wrec_str {
	struct tnf_wrec h;
	unsigned int path_len; /* bytes of path[] sent, its NUL included (>= 1) */
	unsigned int pad;
	char path[TNF_WATCH_PATH_MAX]; /* DLOPEN: the name passed; DLCLOSE: the object's */
};

/* Per-tid dlopen/dlclose argument, saved at the entry of the call. */
struct tnf_watch_dl {
	char path[TNF_WATCH_PATH_MAX];
	unsigned long long uptr; /* dlopen: the name's address, read at RT_CONSISTENT */
	unsigned int pending;	 /* rtld's RT_ADD (1) or RT_DELETE (2) seen in this call */
	unsigned int internal;	 /* no dlopen/dlclose call: libc's own (NSS, iconv) */
};

/* In/out of the add_proc task iterator (user space adds existing processes). */
struct tnf_watch_add {
	int pid;	   /* tgid to add */
	int ppid;	   /* its parent must be in the slot's tree (0: no check, the root) */
	int ret;	   /* 0 added, -ESRCH gone or not a child of ppid, -EEXIST, -ENOSPC */
	unsigned int slot; /* the watch */
};

/*
 * The engine's own notices (its `notices` ring): a DL watch's process
 * exec'd a file not seen before (key of the `exe_seen` map), whose libc the
 * engine may not have probed yet.
 */
struct tnf_exe_key {
	unsigned long long dev;
	unsigned long long ino;
};

struct tnf_wnotice {
	int tgid;
	int pad;
	struct tnf_exe_key exe;
};

#endif
