/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages between a client (the process that calls tnfctl_*) and the
 * engine (tnfctl-engine).  One SOCK_SEQPACKET connection per client
 * process; every request and reply names a handle by an id the client
 * chose (hid, never 0, never reused on the connection), so the client's
 * descriptors do not grow with its handles.  Every message is one packet:
 * concurrent senders never interleave.  One engine serves every client of
 * a user and privilege set: it listens on an abstract unix socket whose
 * name says whom it serves (tnf_engine_name), and each side checks the
 * other's credentials (tnf_peer_check).
 */
#ifndef TNFCTL_PROTO_H
#define TNFCTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

enum tnf_op {
	TNF_OP_DROP = 1, /* the handle is gone without a close: as a controller death, no reply */
	TNF_OP_PID_OPEN, /* attach to pid (arg 1: stopped by our own SUSPEND alone) */
	TNF_OP_EXEC_ATTACH, /* seize a child that is about to exec */
	TNF_OP_CONTINUE,    /* resume until an event; child_hid: the id of a child handle, or 0;
			       arg: TNF_CONT_* */
	TNF_OP_STOP,	    /* the controller was interrupted: stop the target (no reply) */
	TNF_OP_CLOSE,	    /* release the target (arg = tnfctl_targ_op_t) */
	TNF_OP_LOST,	    /* just report the lost-record count (any unused hid) */
	TNF_OP_QUIT,	    /* the client's last handle is closed: exit (not a controller death) */
	TNF_OP_SET_FLAGS,   /* arg = the handle's TNFCTL_OPEN_* flags (EXEC_FAILED) */
	/*
	 * A passive watch of the tree of pid, bound to hid (flags: TNFCTL_WATCH_DL,
	 * TNF_WATCH_HELD; size: its ring's bytes; delay_ns: its delivery bound).
	 * Replies WATCH_MAP with the counters' map, then DONE with the ring
	 * buffer's descriptor and the slot.  DROP on hid ends it.
	 */
	TNF_OP_WATCH_OPEN,
	/*
	 * Tests' view of the engine (any unused hid): DONE with exit_status the
	 * open watches, child_pid the watch map's tracked processes, flags the
	 * watch tracepoints attached, tid the stopping mode's, pid the uprobe
	 * links of both.
	 */
	TNF_OP_WATCH_STATS,
};

/* TNF_OP_WATCH_OPEN: a command held before its exec (tnfctl_watch_exec): no descendants. */
#define TNF_WATCH_HELD 0x80000000u

struct tnf_req {
	uint32_t op;
	uint32_t hid; /* the handle; PID_OPEN and EXEC_ATTACH bind a new one */
	int32_t pid;
	uint32_t arg;
	uint32_t flags;	    /* PID_OPEN, EXEC_ATTACH: the handle's TNFCTL_OPEN_* */
	uint32_t child_hid; /* CONTINUE */
	uint64_t size;	    /* WATCH_OPEN */
	uint64_t delay_ns;  /* WATCH_OPEN */
};

/*
 * PID_OPEN, in req.flags beside TNFCTL_OPEN_*: the terminal's ^C to this
 * target is the controller's interrupt, as for the exec_open'd target whose
 * image this handle re-opens (it keeps the rule across SUSPEND, an EXEC).
 */
#define TNF_OPEN_TTY_INTR 0x80000000u

/*
 * CONTINUE, in req.arg: a NOPROBES handle stopped before rtld's start-up
 * wants a stop once the start-up objects are mapped (TNF_REPF_STARTUP),
 * to list their USDT probes before any of their code runs.
 */
#define TNF_CONT_STARTUP 1u

/* Reply kinds. */
enum tnf_rep_kind {
	TNF_REP_DONE = 1,  /* the request finished */
	TNF_REP_SEIZED,	   /* EXEC_ATTACH: seized, let the child exec now */
	TNF_REP_HELLO,	   /* first packet (hid 0): exit_status = TNF_PROTO_VERSION */
	TNF_REP_WATCH_MAP, /* WATCH_OPEN: carries the slots' counters map (SCM_RIGHTS) */
};

/*
 * The wire's version, in the engine's HELLO: a library and an engine of
 * other releases (a half-upgraded installation) refuse each other.
 */
#define TNF_PROTO_VERSION 5

struct tnf_rep {
	uint32_t kind;
	uint32_t hid;  /* the request's handle id; 0 for the start-up replies */
	int32_t err;   /* tnfctl_errcode_t */
	int32_t event; /* tnfctl_event_t, for CONTINUE */
	int32_t pid;
	int32_t tid;
	int32_t child_pid;
	int32_t exit_status;
	int32_t term_signal;
	uint64_t time_ns;
	uint64_t lost;
	int32_t exec_errno; /* EXEC_FAILED */
	uint32_t flags;	    /* enum tnf_rep_flag */
	uint64_t uargv;	    /* EXEC_FAILED: the argv passed, in the target */
	uint32_t slot;	    /* WATCH_OPEN: the watch's slot (bpf/watch_events.h) */
	uint32_t pad;
	char path[4096]; /* last: sent only up to its NUL (tnf_rep_len) */
};

/* A reply's length on the wire: up to the path's NUL, so most are small. */
static inline size_t tnf_rep_len(const struct tnf_rep *r)
{
	return offsetof(struct tnf_rep, path) + strnlen(r->path, sizeof(r->path) - 1) + 1;
}

/* @n bytes of a reply came: true if it is whole (its path then ends there). */
static inline bool tnf_rep_received(struct tnf_rep *r, ssize_t n)
{
	if (n <= (ssize_t)offsetof(struct tnf_rep, path) || n > (ssize_t)sizeof(*r))
		return false;
	r->path[n - offsetof(struct tnf_rep, path) - 1] = '\0';
	return true;
}

enum tnf_rep_flag {
	/* FORK: the parent has exec'd since (another thread); EXEC comes next. */
	TNF_REPF_EXEC_NEXT = 1 << 0,
	/* FORK: the child is held for the CONTINUE's child_hid (else it runs free) */
	TNF_REPF_CHILD_BOUND = 1 << 1,
	/* WATCH_OPEN: the exit tracepoint lacks group_dead: two threads may both report an EXIT */
	TNF_REPF_LEGACY_EXIT = 1 << 2,
	/* EXEC: the kernel ran the file by an interpreter (#!, binfmt_misc) */
	TNF_REPF_INTERP = 1 << 3,
	/* WATCH_OPEN: records carry no seq (no atomic fetch): the client numbers them */
	TNF_REPF_CLIENT_SEQ = 1 << 4,
	/* CONTINUE: no event: rtld's start-up is done (TNF_CONT_STARTUP); continue again */
	TNF_REPF_STARTUP = 1 << 5,
};

/* engine_name.c: how a client finds the engine that may serve it */
#define TNF_ENGINE_NAME_MAX 108 /* sun_path */
int tnf_engine_name(char name[TNF_ENGINE_NAME_MAX], const char *engine_path);
int tnf_peer_check(int sock, pid_t *pid);
int tnf_own_caps(uint64_t *eff);

/* ipc.c */
int tnf_send(int sock, const void *buf, size_t len, int fd);
int tnf_send_flags(int sock, const void *buf, size_t len, int fd, int flags);
ssize_t tnf_recv(int sock, void *buf, size_t len, int *fd);
ssize_t tnf_recv_nowait(int sock, void *buf, size_t len, int *fd);

#endif
