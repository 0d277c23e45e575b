/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tnfctl-engine, the helper program the library starts by exec (main.c):
 * it owns the BPF object (events.c), every ptrace relationship (ptrace.c),
 * and the per-target state machine (tracer.c).
 */
#ifndef TNFCTL_TRACER_H
#define TNFCTL_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "tnfctl_events.h"
#include "proto.h"
#include "target.h"

/* How the engine runs (main.c's options). */
struct tnf_engine_opts {
	long long linger_ms; /* with no client and no target: end after this long */
	bool resident;	     /* never end for want of clients */
	bool private_;	     /* listen on no name: serve the first client alone */
	const char *name;    /* the abstract name to listen on (after its NUL), or NULL: ours */
};

/*
 * serve.c: the engine's loop, serving the client on @sock (-1: none yet,
 * resident) and every client that connects by name; returns its exit status.
 */
int tnf_tracer_main(int sock, const struct tnf_engine_opts *o);

/*
 * Where a target's replies go: a handle id on a client's connection
 * (proto.h).  hid 0: no handle (an unreported fork child, or one whose
 * handle is gone).
 */
struct tnf_conn;
struct tnf_peer {
	struct tnf_conn *conn;
	uint32_t hid;
};

/* One traced thread. */
struct thr {
	struct thr *next;
	struct thr *hnext; /* its tid's hash chain (ptrace.c) */
	struct target *owner;
	pid_t tid;
	bool stopped;	   /* in a ptrace-stop we have collected */
	bool interrupting; /* PTRACE_INTERRUPT sent, its trap not seen yet */
	bool group_stop;   /* the collected stop is a job-control stop */
	bool in_vfork;	   /* blocked in vfork: cannot run user code, counts as stopped */
	bool detached;
	bool zombie;	    /* exited, not yet reaped (a leader waits for its threads) */
	bool vanished;	    /* gone with no exit to reap: another thread's exec took it */
	bool exec_fresh;    /* made by an EXEC record, its PTRACE_EVENT_EXEC not seen yet */
	int pending_sig;    /* signal to deliver when resumed */
	int expect_sigstop; /* SIGSTOPs sent by BPF, to swallow */
};

/* What the target is doing on behalf of its handle. */
enum tgt_phase {
	PH_EXEC_WAIT, /* exec_open: seized, waiting for the exec stop */
	PH_OPEN_STOP, /* pid_open: waiting for every thread to stop */
	PH_SYNC_WAIT, /* running to the rtld sync point */
	PH_IDLE,      /* stopped, handle idle */
	PH_RUNNING,   /* tnfctl_continue in progress */
	PH_CHILD,     /* fork child, waiting to be reported with the parent's FORK */
	PH_CLOSING,   /* detaching thread by thread */
	PH_KILLING,   /* SIGKILLed, waiting for it to be gone */
};

struct tevent {
	struct tevent *next;
	struct tnf_rec rec;
	struct target *child; /* FORK with a tracked child */
};

struct target {
	struct target *next, *prev; /* every target */
	struct target *hnext;	    /* its tgid's hash chain */
	struct target *pnext;	    /* its peer's hash chain (a handle: hid != 0) */
	bool destroyed;		    /* unlinked, freed at the end of the loop's turn */
	pid_t tgid;
	struct tnf_peer peer; /* its handle */
	uint32_t child_hid;   /* CONTINUE: the id for a child handle, or 0 */
	bool exec_child;      /* exec_open'd: killed if the controller dies */
	bool want_child;      /* CONTINUE asked for child handles */
	bool stop_requested;  /* controller interrupted (EINTR) */
	bool sync_seen;	      /* SYNC record arrived */
	bool exec_seen;	      /* EXEC record arrived (exec_open) */
	bool dead;	      /* leader reaped */
	bool exit_rec;	      /* EXIT record arrived */
	bool exit_unseen;     /* died as an unbound fork child: CONTINUE reports it */
	bool ended_group_stop;
	bool lm_wait;	      /* PH_RUNNING: an event waits for a consistent link map */
	bool keep_stop;	      /* pid_open of a process in someone else's job-control stop */
	bool noprobes;	      /* TNFCTL_OPEN_NOPROBES: no runtime needed, no rtld sync wait */
	bool startup_pending; /* NOPROBES: opened before rtld's start-up RT_CONSISTENT */
	bool report_startup;  /* CONTINUE asked to stop there (TNF_CONT_STARTUP) */
	bool new_image;	      /* EXEC reported: the next CONTINUE (NOPROBES) sets the image up */
	bool tty_intr;	      /* exec_open'd in its own group: a terminal SIGINT is ^C (EINTR) */
	bool tty_sigint_seen; /* stopped for a ^C with that ^C's SIGINT still queued: swallow it */
	bool close_cont;      /* PH_CLOSING: SIGCONT once every thread is detached */
	int close_sig;	      /* PH_CLOSING: SIGSTOP for SUSPEND */
	int close_reply;      /* PH_CLOSING: error to reply once detached, or -1 */
	int fail_err;	      /* PH_KILLING: the error to reply once it is gone */
	int expect_sigcont;   /* SIGCONTs sent by us, to swallow */
	int exit_code;	      /* kernel exit code (from the record or waitpid) */
	int wait_status;
	uint64_t exit_time;
	pid_t exit_tid; /* last thread to leave */
	enum tgt_phase phase;
	struct thr *thrs;
	struct tevent *events; /* FIFO of events to report */
	struct target *parent; /* PH_CHILD: whose FORK it belongs to */
	uint64_t r_state_addr;
	unsigned int bpf_flags;
	unsigned int open_flags; /* TNFCTL_OPEN_* of its handle (a fork child: the parent's) */
	unsigned int visit_gen;
};

/* serve.c: the wire (proto.h) */
extern bool tnf_debug_on; /* TNFCTL_DEBUG: a trace of what the engine does, on stderr */
#define dbg(...)                                                                                   \
	do {                                                                                       \
		if (tnf_debug_on)                                                                  \
			fprintf(stderr, "tnfctl-engine: " __VA_ARGS__);                            \
	} while (0)
void srv_send_rep(struct tnf_peer to, struct tnf_rep *rep);
void srv_send_rep_fd(struct tnf_peer to, struct tnf_rep *rep, int fd);
void srv_reply_err(struct tnf_peer to, int err);

/* tracer.c: the state machine's entry points, for serve.c */
struct target *tgt_by_peer(struct tnf_peer p);
void tgt_set_peer(struct target *t, struct tnf_peer p);
bool tgt_any(void);
void op_pid_open(struct tnf_peer from, pid_t pid, bool ours, unsigned int flags);
void op_exec_attach(struct tnf_peer from, pid_t pid, unsigned int flags);
void op_continue(struct target *t, uint32_t child_hid, uint32_t cont);
void op_close(struct target *t, int op);
void tgt_abandon(struct target *t);
void tgt_evaluate(struct target *t);
void tgt_for_each(void (*fn)(struct target *));
void tgt_evaluate_all(void);
void tgt_drain_records(void);
void tgt_reap_all(void);
void tgt_free_destroyed(void);
/* @c has closed: its targets released as at a controller death, no reply to it again. */
void tgt_conn_gone(struct tnf_conn *c);
/* Processes a connection left suspended by a SUSPEND close: resumed if it dies (NULL: all). */
void tnf_suspended_resume_all(struct tnf_conn *c);
void tnf_suspended_keep(struct tnf_conn *c); /* a deliberate end: they stay suspended */

/* events.c */
int tnf_events_load(bool use_kfunc);
int tnf_events_epoll_fd(void);
int tnf_events_want_exec_failed(void);
int tnf_events_poll(void (*cb)(const struct tnf_rec *));
int tnf_events_poll_reserved(void (*cb)(const struct tnf_rec *));
uint64_t tnf_events_lost(void);
int tnf_events_track(pid_t tgid, unsigned int flags, uint64_t r_state_addr);
int tnf_events_untrack(pid_t tgid);
int tnf_events_attach_rtld(const char *ldso_path);
int tnf_events_attach_libc(const char *libc_path);
void tnf_events_untrack_all(void);
void tnf_events_idle(void);
void tnf_events_release_uprobes(void);
size_t tnf_events_uprobes(void);
bool tnf_events_attached(void);
bool tnf_events_kfunc_available(void);
/* BTF, tp_btf and the ring buffer: what the BPF object needs at all. */
bool tnf_events_kernel_ok(void);
void tnf_events_unload(void);

/* ptrace.c */
struct thr *thr_find(struct target *t, pid_t tid);
struct thr *thr_lookup(pid_t tid); /* of any target, the newest first */
struct thr *thr_add(struct target *t, pid_t tid);
void thr_remove(struct target *t, pid_t tid);
void thr_free_all(struct target *t);
int thr_seize(pid_t tid, bool exitkill);
void thr_interrupt(struct target *t, struct thr *th);
int thr_resume(struct thr *th);
int thr_detach(struct thr *th, int sig);
int thr_setoptions(struct thr *th, unsigned long opts);
bool thr_all_stopped(struct target *t);
bool thr_tty_sigint_pending(struct target *t);
unsigned long tnf_ptrace_opts(bool exitkill, bool fork_opts);

#endif
