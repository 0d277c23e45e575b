// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine's state machine, one per target (see enum tgt_phase), driven
 * by ring-buffer records, wait statuses and the client's requests (serve.c
 * holds the wire and the event loop).
 *
 * What an event *is* always comes from a ring-buffer record; ptrace only
 * stops and resumes.  A record that stops a thread raises that thread's
 * expect_sigstop, and the matching SIGSTOP is swallowed when it arrives.  A
 * SIGSTOP with no record is the user's and is delivered.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <tnf/tnfctl.h>
#include "elfsym.h"
#include "tracer.h"

static struct target *targets;

/*
 * Processes left suspended by a SUSPEND close and not re-opened since: if the
 * controller dies before it re-attaches, nobody else would ever resume them.
 */
struct suspended {
	pid_t pid;
	unsigned long long start;
	struct tnf_conn *owner; /* the connection whose handle suspended it */
};
static struct suspended *suspended;
static size_t nsuspended;

static void suspended_add(pid_t pid, struct tnf_conn *owner)
{
	struct suspended *p = realloc(suspended, (nsuspended + 1) * sizeof(*p));

	if (!p)
		return;
	suspended = p;
	suspended[nsuspended].pid = pid;
	suspended[nsuspended].owner = owner;
	suspended[nsuspended++].start = tnf_proc_starttime(pid);
}

/* @pid re-opened, or resumed: nobody's to resume any more. */
static void suspended_forget(pid_t pid)
{
	size_t i;

	for (i = 0; i < nsuspended; i++)
		if (suspended[i].pid == pid)
			suspended[i--] = suspended[--nsuspended];
}

/* The entry suspended_add just made, undone (someone else's stop, kept as found). */
static void suspended_undo_last(pid_t pid)
{
	if (nsuspended && suspended[nsuspended - 1].pid == pid)
		nsuspended--;
}

void tnf_suspended_keep(struct tnf_conn *c)
{
	size_t i;

	for (i = 0; i < nsuspended; i++)
		if (suspended[i].owner == c)
			suspended[i--] = suspended[--nsuspended];
}

void tnf_suspended_resume_all(struct tnf_conn *c)
{
	size_t i;

	for (i = 0; i < nsuspended; i++) {
		if (c && suspended[i].owner != c)
			continue;
		if (suspended[i].start &&
		    tnf_proc_starttime(suspended[i].pid) == suspended[i].start)
			kill(suspended[i].pid, SIGCONT);
		suspended[i--] = suspended[--nsuspended];
	}
}
static void close_detach(struct target *t, int sig, bool force_cont, int reply);

/* ---- targets ------------------------------------------------------------ */

/* Targets by tgid, the newest first: lookups per record cost no walk of the tree. */
#define TGID_BUCKETS 4096
static struct target *tgid_hash[TGID_BUCKETS];
/* Destroyed during a turn of the loop: freed at its end (tgt_for_each may hold them). */
static struct target *destroyed;

static struct target **tgid_bucket(pid_t tgid)
{
	return &tgid_hash[(unsigned int)tgid % TGID_BUCKETS];
}

static struct target *target_find(pid_t tgid)
{
	struct target *t;

	for (t = *tgid_bucket(tgid); t; t = t->hnext)
		if (t->tgid == tgid)
			return t;
	return NULL;
}

static struct target *target_by_tid(pid_t tid, struct thr **thp)
{
	struct thr *th = thr_lookup(tid);

	if (th) {
		*thp = th;
		return th->owner;
	}
	return NULL;
}

/* Targets by handle (connection, hid): a request costs no walk of the targets. */
#define PEER_BUCKETS 4096
static struct target *peer_hash[PEER_BUCKETS];

static struct target **peer_bucket(struct tnf_peer p)
{
	uintptr_t h = (uintptr_t)p.conn / sizeof(void *) * 31 + p.hid;

	return &peer_hash[h % PEER_BUCKETS];
}

static void peer_unlink(struct target *t)
{
	struct target **pp;

	if (!t->peer.hid)
		return;
	for (pp = peer_bucket(t->peer); *pp; pp = &(*pp)->pnext)
		if (*pp == t) {
			*pp = t->pnext;
			break;
		}
	t->pnext = NULL;
}

/* Every change of a target's handle goes through here (the hash follows). */
void tgt_set_peer(struct target *t, struct tnf_peer p)
{
	struct target **pp;

	peer_unlink(t);
	t->peer = p;
	if (!p.hid)
		return;
	pp = peer_bucket(p);
	t->pnext = *pp;
	*pp = t;
}

/* No reply to it again: its handle is gone (the connection is kept, for SUSPEND's owner). */
static void drop_handle(struct target *t)
{
	tgt_set_peer(t, (struct tnf_peer){.conn = t->peer.conn});
}

struct target *tgt_by_peer(struct tnf_peer p)
{
	struct target *t;

	if (!p.hid)
		return NULL;
	for (t = *peer_bucket(p); t; t = t->pnext)
		if (t->peer.hid == p.hid && t->peer.conn == p.conn)
			return t;
	return NULL;
}

static struct target *target_new(pid_t tgid, struct tnf_peer peer)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tgid = tgid;
	tgt_set_peer(t, peer);
	t->next = targets;
	if (targets)
		targets->prev = t;
	targets = t;
	t->hnext = *tgid_bucket(tgid);
	*tgid_bucket(tgid) = t;
	return t;
}

static void release_event_children(struct target *t)
{
	struct tevent *e;

	for (e = t->events; e; e = e->next)
		if (e->child) {
			e->child->parent = NULL;
			close_detach(e->child, 0, true, -1);
			e->child = NULL;
		}
}

static void target_destroy(struct target *t)
{
	struct target **pp;
	struct tevent *e;

	dbg("%d: target freed (phase %d, handle %u)\n", t->tgid, t->phase, t->peer.hid);
	release_event_children(t);
	drop_handle(t);
	if (t->prev)
		t->prev->next = t->next;
	else
		targets = t->next;
	if (t->next)
		t->next->prev = t->prev;
	for (pp = tgid_bucket(t->tgid); *pp; pp = &(*pp)->hnext)
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	tnf_events_untrack(t->tgid);
	while ((e = t->events)) {
		t->events = e->next;
		free(e);
	}
	thr_free_all(t);
	t->destroyed = true;
	t->next = destroyed;
	destroyed = t;
}

void tgt_free_destroyed(void)
{
	struct target *t;

	while ((t = destroyed)) {
		destroyed = t->next;
		free(t);
	}
}

static void resume_all(struct target *t)
{
	struct thr *th;

	for (th = t->thrs; th; th = th->next)
		thr_resume(th);
}

static void interrupt_all(struct target *t)
{
	struct thr *th;

	for (th = t->thrs; th; th = th->next)
		thr_interrupt(t, th);
}

/* A thread whose memory and maps can be read: the leader, unless it is a zombie. */
static pid_t live_tid(struct target *t)
{
	struct thr *th;

	for (th = t->thrs; th; th = th->next)
		if (th->tid == t->tgid && !th->zombie)
			return th->tid;
	for (th = t->thrs; th; th = th->next)
		if (!th->zombie)
			return th->tid;
	return t->tgid;
}

static bool fully_stopped(struct target *t)
{
	return t->dead || thr_all_stopped(t);
}

/*
 * Detach every thread (as each reaches a ptrace-stop) and forget the target.
 * @sig: SIGSTOP to leave it in a job-control stop (SUSPEND), else 0.
 * @force_cont: end with a SIGCONT, which also discards any SIGSTOP that BPF
 * sent and nobody collected.
 * @reply: the error to send to the handle once every thread is
 * detached (so the caller sees the final state), or -1 for no reply.
 */
static void close_detach(struct target *t, int sig, bool force_cont, int reply)
{
	struct thr *th;

	tnf_events_untrack(t->tgid);
	release_event_children(t);
	for (th = t->thrs; th; th = th->next)
		if (th->expect_sigstop > 0 || th->group_stop)
			force_cont = true;
	t->close_sig = sig;
	t->close_cont = !sig && force_cont;
	t->close_reply = reply;
	if (reply < 0)
		drop_handle(t);
	/* SUSPEND: queued now; the threads enter the group-stop while still traced. */
	if (sig && !t->dead) {
		kill(t->tgid, sig);
		suspended_add(t->tgid, t->peer.conn);
	}
	t->phase = PH_CLOSING;
	tgt_evaluate(t);
}

/* An open failed after the seize: undo it, then report @err. */
static void fail_open(struct target *t, int err)
{
	struct tnf_peer to = t->peer;

	/*
	 * Killed in the middle of the open: its /proc and memory failing say
	 * only that (an exec_open'd program that dies before the sync point is
	 * ACCES).
	 */
	if (t->dead || tnf_proc_exiting(t->tgid))
		err = t->exec_child ? TNFCTL_ERR_ACCES : TNFCTL_ERR_NOPROCESS;
	else if ((err == TNFCTL_ERR_INTERNAL || err == TNFCTL_ERR_NOTDYNAMIC) &&
		 tnf_proc_refused(live_tid(t)))
		err = TNFCTL_ERR_ACCES; /* e.g. CAP_SYS_PTRACE permitted, not effective */
	dbg("open of %d failed: %d\n", t->tgid, err);
	if (t->exec_child && !t->dead) {
		/* Killed first; the reply goes out once it is gone. */
		t->fail_err = err;
		kill(t->tgid, SIGKILL);
		t->phase = PH_KILLING;
		return;
	}
	if (t->dead) {
		drop_handle(t);
		srv_reply_err(to, err);
		target_destroy(t);
	} else if (t->keep_stop) {
		/* Someone else's stop: left as it was found, and not ours to end later. */
		pid_t pid = t->tgid;

		close_detach(t, SIGSTOP, false, err);
		suspended_undo_last(pid);
	} else {
		close_detach(t, 0, true, err);
	}
}

/* ---- records from the ring buffer ------------------------------------- */

/*
 * Its pid may be reused as soon as its parent reaps it: the BPF side must
 * not keep an entry for it (the entry's start time would not match a new
 * owner, but a stale entry is not left to chance).
 */
static void mark_dead(struct target *t)
{
	/* A CLONE_UNTRACED child can run to its end before it is seized. */
	if (t->phase == PH_CHILD)
		t->exit_unseen = true;
	t->dead = true;
	tnf_events_untrack(t->tgid);
}

/*
 * Gone although no leader exit was reaped: the leader left early (a zombie we
 * could not attach, whose exit only its parent sees), the process exit record
 * is in, and no other thread is left.
 */
static void check_gone(struct target *t)
{
	struct thr *th;

	if (t->dead)
		return;
	for (th = t->thrs; th; th = th->next)
		if (!th->zombie && !th->vanished)
			return;
	if (t->thrs && t->exit_rec)
		mark_dead(t);
}

static void queue_event(struct target *t, const struct tnf_rec *r, struct target *child)
{
	struct tevent *e = calloc(1, sizeof(*e)), **pp;

	if (!e)
		return;
	e->rec = *r;
	e->child = child;
	for (pp = &t->events; *pp; pp = &(*pp)->next)
		;
	*pp = e;
}

static void on_fork_rec(struct target *t, const struct tnf_rec *r)
{
	struct thr *th = thr_find(t, r->tid), *cth;
	struct target *c = NULL;

	if (th && (r->flags & TNF_RF_STOPPED))
		th->expect_sigstop++;
	if (r->flags & TNF_RF_CHILD_TRACKED) {
		c = target_new(r->child, (struct tnf_peer){0});
		if (c) {
			c->phase = PH_CHILD;
			c->parent = t;
			c->open_flags = t->open_flags;
			c->noprobes = t->noprobes;
			c->tty_intr = t->tty_intr;
			c->r_state_addr = t->r_state_addr;
			cth = thr_add(c, r->child);
			/*
			 * The ptrace fork options attach the child inside clone(),
			 * before this record was written, unless CLONE_UNTRACED
			 * (LeakSanitizer's stop-the-world task): seize that one, or
			 * its FORK waits for a stop that never comes.
			 */
			if (cth && (!(t->bpf_flags & TNF_F_PTRACE_FORK) ||
				    tnf_proc_tracer(r->child) != getpid())) {
				/* Already ours if clone() auto-attached it. */
				if (thr_seize(r->child, false) == 0 ||
				    tnf_proc_tracer(r->child) == getpid()) {
					if (r->flags & TNF_RF_CHILD_STOPPED)
						cth->expect_sigstop = 1;
					else
						thr_interrupt(c, cth);
				} else if (tnf_proc_exiting(r->child)) {
					/* Ran to its end first (slow tracer): EXIT ends it */
					cth->zombie = true;
				}
			}
			if (th && (r->flags & TNF_RF_VFORK) && (r->flags & TNF_RF_CHILD_STOPPED) &&
			    (r->flags & TNF_RF_STOPPED))
				th->in_vfork = true;
		}
	}
	queue_event(t, r, c);
}

/*
 * NOPROBES, opened at the exec: rtld has mapped the start-up objects (the
 * quiet SYNC stop), so libc's dlopen/dlclose can be probed now.
 */
static void startup_done(struct target *t)
{
	struct tnf_maps_info mi;

	t->startup_pending = false;
	if (!tnf_proc_maps(t->tgid, &mi) && mi.has_libc)
		tnf_events_attach_libc(mi.libc_path);
}

/*
 * An exec ends the old image: its DLOPEN, DLCLOSE and EXEC_FAILED events
 * still queued are of objects and threads that are gone (reporting them
 * would read the new image at the old addresses).  A FORK stays: its child
 * is real and stopped.
 */
static void drop_old_image_events(struct target *t)
{
	struct tevent **pp = &t->events, *e;

	while ((e = *pp)) {
		if (e->rec.kind == TNF_REC_DLOPEN || e->rec.kind == TNF_REC_DLCLOSE ||
		    e->rec.kind == TNF_REC_EXEC_FAILED || e->rec.kind == TNF_REC_SYNC) {
			*pp = e->next;
			free(e);
		} else {
			pp = &e->next;
		}
	}
}

/*
 * The exec'ing thread was not seized yet (it exec'd in the middle of the
 * attach, after the leader's seize): the kernel dropped our leader in
 * silence and the new one is nobody's.  Seize it now; no
 * PTRACE_EVENT_EXEC comes, so a PTRACE_INTERRUPT (or the BPF SIGSTOP on
 * its way) is its stop.
 */
static void seize_exec_leader(struct target *t, struct thr *th)
{
	dbg("exec by an unseized thread of %d: seizing the new leader\n", t->tgid);
	if (thr_seize(t->tgid, false) == 0) {
		th->exec_fresh = false;
		thr_interrupt(t, th);
	} else if (tnf_proc_exiting(t->tgid)) {
		th->zombie = true;
	}
}

static void on_record(const struct tnf_rec *r)
{
	struct target *t = target_find(r->tgid);
	struct thr *th;

	if (!t)
		return;
	dbg("rec kind %u tgid %d tid %d flags %x child %d path %s\n", r->kind, r->tgid, r->tid,
	    r->flags, r->child, r->path);
	switch (r->kind) {
	case TNF_REC_FORK:
		on_fork_rec(t, r);
		break;
	case TNF_REC_EXEC:
		/* Every other thread is gone; the exec'ing one now has tid == tgid. */
		thr_free_all(t);
		th = thr_add(t, t->tgid);
		if (th) {
			th->exec_fresh = true;
			if (r->flags & TNF_RF_STOPPED)
				th->expect_sigstop = 1;
			if (tnf_proc_tracer(t->tgid) != getpid())
				seize_exec_leader(t, th);
		}
		t->r_state_addr = 0;
		t->exec_seen = true;
		if (t->phase != PH_EXEC_WAIT) {
			drop_old_image_events(t);
			queue_event(t, r, NULL);
		}
		break;
	case TNF_REC_LEADER_GONE:
		th = thr_find(t, r->tid);
		if (th)
			th->zombie = true;
		break;
	case TNF_REC_EXIT:
		t->exit_rec = true;
		t->exit_code = r->exit_code;
		t->exit_time = r->time_ns;
		t->exit_tid = r->tid;
		check_gone(t);
		break;
	case TNF_REC_DLOPEN:
	case TNF_REC_DLCLOSE:
	case TNF_REC_SYNC:
	case TNF_REC_EXEC_FAILED:
		th = thr_find(t, r->tid);
		if (th && (r->flags & TNF_RF_STOPPED))
			th->expect_sigstop++;
		if (r->kind == TNF_REC_SYNC) {
			t->sync_seen = true;
			if (t->startup_pending && t->report_startup)
				queue_event(t, r, NULL);
			if (t->startup_pending)
				startup_done(t);
		} else {
			queue_event(t, r, NULL);
		}
		break;
	default:
		break;
	}
}

void tgt_drain_records(void)
{
	tnf_events_poll(on_record);
}

/* ---- wait statuses ------------------------------------------------------ */

static bool is_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A signal the terminal sent (Ctrl-C ...), not kill(2)'s. */
static bool sig_from_tty(pid_t tid)
{
	siginfo_t si;

	return ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0 && si.si_code == SI_KERNEL;
}

/*
 * PTRACE_EVENT_EXEC, the new image's first stop (@tid is the tgid now).
 * Its EXEC record was reserved before it: read it first, so the thread
 * list is the new image's before any later stop is taken in.
 */
static void on_exec_stop(struct target *t, pid_t tid)
{
	struct thr *th;

	tnf_events_poll_reserved(on_record);
	th = thr_find(t, tid);
	if (!th || !th->exec_fresh) {
		/* No EXEC record (not armed, or lost): ptrace says who is left. */
		thr_free_all(t);
		th = thr_add(t, tid);
		if (!th)
			return;
	}
	th->exec_fresh = false;
	th->stopped = true;
	/* The BPF SIGSTOP is the event's stop: run on to it. */
	if (th->expect_sigstop > 0)
		thr_resume(th);
}

/*
 * @t took a ^C.  The terminal sent it to its whole process group at once:
 * where it is still queued (a fork child not yet continued, a handle
 * between two calls, a process at an event stop) it is that ^C when it
 * comes out, the controller stops the others anyway.
 */
static void ctrl_c_to_group(struct target *t)
{
	pid_t pg = getpgid(t->tgid);
	struct target *c;

	for (c = targets; c; c = c->next)
		if (c != t && c->tty_intr && !c->dead && getpgid(c->tgid) == pg &&
		    thr_tty_sigint_pending(c))
			c->tty_sigint_seen = true;
}

static void on_stop(struct target *t, struct thr *th, int status)
{
	int sig = WSTOPSIG(status), ev = status >> 16;
	unsigned long msg = 0;

	th->stopped = true;
	/* Any ptrace-stop uses up a pending PTRACE_INTERRUPT: send another if needed. */
	th->interrupting = false;
	if (ev == PTRACE_EVENT_STOP) {
		th->group_stop = false;
		if (is_stop_sig(sig)) {
			if (sig == SIGSTOP && th->expect_sigstop > 0) {
				/* Our SIGSTOP became a job-control stop: end it, quietly. */
				th->expect_sigstop--;
				th->in_vfork = false;
				t->expect_sigcont++;
				kill(t->tgid, SIGCONT);
			} else {
				th->group_stop = true;
			}
		}
		return;
	}
	if (ev == PTRACE_EVENT_CLONE || ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK) {
		pid_t tid = th->tid;

		ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg);
		/* an EXEC record among them renews the thread list: @th may be gone */
		tgt_drain_records();
		if (t->destroyed || !(th = thr_find(t, tid)))
			return;
		if (ev == PTRACE_EVENT_CLONE && tnf_proc_tgid(msg) == t->tgid)
			thr_add(t, msg);
		/*
		 * Once resumed it waits for the child's exec or exit, where no
		 * PTRACE_INTERRUPT can stop it: it counts as stopped until its
		 * VFORK_DONE stop (a ^C stop with the child stopped would wait for
		 * ever).
		 */
		if (ev == PTRACE_EVENT_VFORK)
			th->in_vfork = true;
		return;
	}
	if (ev == PTRACE_EVENT_VFORK_DONE) {
		th->in_vfork = false;
		return;
	}
	if (ev == PTRACE_EVENT_EXEC) {
		on_exec_stop(t, th->tid);
		return;
	}
	if (ev)
		return;
	/* Signal-delivery-stop. */
	if (sig == SIGSTOP && th->expect_sigstop == 0) {
		pid_t tid = th->tid;

		/*
		 * Its record may not be readable yet (held back by one another
		 * CPU is still writing): read up to every record reserved
		 * before this stop.  An EXEC record renews the thread list.
		 */
		tnf_events_poll_reserved(on_record);
		th = thr_find(t, tid);
		if (!th)
			return;
		th->stopped = true;
	}
	if (sig == SIGSTOP && th->expect_sigstop > 0) {
		th->expect_sigstop--;
		th->in_vfork = false;
		th->pending_sig = 0;
	} else if (sig == SIGCONT && t->expect_sigcont > 0) {
		t->expect_sigcont--;
		th->pending_sig = 0;
	} else if (sig == SIGINT && t->tty_sigint_seen && sig_from_tty(th->tid)) {
		/* The ^C of the last EINTR, queued here when we stopped it. */
		t->tty_sigint_seen = false;
		th->pending_sig = 0;
	} else if (sig == SIGINT && t->tty_intr && t->phase == PH_RUNNING &&
		   sig_from_tty(th->tid)) {
		/*
		 * In its own process group, the target gets the terminal's ^C
		 * only when its controller gave it the terminal: the ^C is the
		 * controller's (Solaris prex: stop the target, back to the prompt).
		 */
		th->pending_sig = 0;
		t->stop_requested = true;
		ctrl_c_to_group(t);
	} else if (sig == SIGINT && t->tty_intr &&
		   (t->phase == PH_OPEN_STOP || t->phase == PH_SYNC_WAIT) &&
		   sig_from_tty(th->tid)) {
		/*
		 * Being re-opened (after its exec): the ^C is still the
		 * controller's, taken by the rest of the group; not the death
		 * of this process.
		 */
		th->pending_sig = 0;
	} else {
		th->pending_sig = sig;
	}
}

static void on_wait(pid_t tid, int status)
{
	struct thr *th = NULL;
	struct target *t = target_by_tid(tid, &th);

	dbg("wait %d status %#x\n", tid, status);
	if (!t && WIFSTOPPED(status)) {
		tgt_drain_records();
		t = target_by_tid(tid, &th);
		if (!t) {
			/* A thread auto-attached before its creator's event stop. */
			t = target_find(tnf_proc_tgid(tid));
			th = t ? thr_add(t, tid) : NULL;
		}
		if (!t || !th) {
			/* Not ours to keep (clone of a process we do not follow). */
			ptrace(PTRACE_DETACH, tid, 0, 0);
			return;
		}
	}
	if (!t)
		return;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		thr_remove(t, tid);
		t->wait_status = status;
		if (tid == t->tgid) {
			mark_dead(t);
			thr_free_all(t);
		}
		check_gone(t);
		return;
	}
	if (WIFSTOPPED(status))
		on_stop(t, th, status);
}

void tgt_reap_all(void)
{
	int status;
	pid_t tid;

	while ((tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
		on_wait(tid, status);
}

/* ---- opening ------------------------------------------------------------ */

static void finish_open(struct target *t)
{
	struct tnf_maps_info mi;

	/* NOPROBES: a static program has no ld.so, which fails tnf_proc_maps(). */
	if (tnf_proc_maps(live_tid(t), &mi) && !t->noprobes) {
		fail_open(t, TNFCTL_ERR_INTERNAL);
		return;
	}
	if (!mi.has_libtnfprobe && !t->noprobes) {
		fail_open(t, TNFCTL_ERR_NOLIBTNFPROBE);
		return;
	}
	if (mi.has_libc)
		tnf_events_attach_libc(mi.libc_path);
	/* Re-opened after its exec: a queued terminal SIGINT is from a ^C the old handle took. */
	if (t->tty_intr)
		t->tty_sigint_seen = thr_tty_sigint_pending(t);
	tnf_events_track(t->tgid, 0, t->r_state_addr);
	t->bpf_flags = 0;
	t->phase = PH_IDLE;
	suspended_forget(t->tgid); /* opened: this handle's now, not its suspender's */
	srv_reply_err(t->peer, TNFCTL_ERR_NONE);
}

/*
 * Attached in a job-control stop, or with the SIGSTOP of one on its way
 * (e.g. after SUSPEND): this handle holds the process now, so end it.
 */
static void end_user_stop(struct target *t)
{
	struct thr *th;

	for (th = t->thrs; th; th = th->next)
		if (th->group_stop || th->pending_sig == SIGSTOP) {
			th->group_stop = false;
			th->pending_sig = 0;
			t->ended_group_stop = true;
		}
	if (t->ended_group_stop || tnf_proc_sigstop_pending(t->tgid)) {
		t->ended_group_stop = false;
		t->expect_sigcont++;
		kill(t->tgid, SIGCONT);
	}
}

/* Stopped at a point where ld.so is mapped: run to the rtld sync point if needed. */
static void start_sync(struct target *t, bool check_done)
{
	struct tnf_maps_info mi;
	int e;

	if (tnf_proc_maps(live_tid(t), &mi)) {
		fail_open(t, TNFCTL_ERR_NOTDYNAMIC);
		return;
	}
	if (tnf_rtld_locate(live_tid(t), &mi, &t->r_state_addr)) {
		fail_open(t, TNFCTL_ERR_INTERNAL);
		return;
	}
	e = tnf_events_attach_rtld(mi.ldso_path);
	if (e) {
		/* A perf uprobe needs CAP_SYS_ADMIN where uprobe_multi links are missing (6.1). */
		fail_open(t, e == -EACCES || e == -EPERM ? TNFCTL_ERR_ACCES : TNFCTL_ERR_INTERNAL);
		return;
	}
	end_user_stop(t);
	if (check_done && tnf_rtld_consistent(live_tid(t), t->r_state_addr) == 1) {
		finish_open(t);
		return;
	}
	t->sync_seen = false;
	t->bpf_flags = TNF_F_STOP_SYNC;
	tnf_events_track(t->tgid, TNF_F_STOP_SYNC, t->r_state_addr);
	t->phase = PH_SYNC_WAIT;
	resume_all(t);
}

/*
 * NOPROBES: the open ends where the target is stopped now (for exec_open,
 * at the first instruction of the new image); nothing waits for rtld.  With
 * ld.so mapped, its notifications still give DLOPEN/DLCLOSE; when rtld has
 * not started loading yet (tnf_rtld_started), its start-up RT_CONSISTENT
 * is taken as a quiet SYNC stop rather than as a DLOPEN (see op_continue),
 * reported to the client alone when it asked (TNF_CONT_STARTUP: it lists
 * the start-up objects' USDT probes there).  A static program, or a loader
 * without _r_debug, has no dl events.
 */
static void noprobes_image(struct target *t)
{
	pid_t tid = live_tid(t);
	struct tnf_maps_info mi;

	t->r_state_addr = 0;
	t->startup_pending = false;
	/* Fails for a static program: no ld.so mapped. */
	if (!tnf_proc_maps(tid, &mi) && !tnf_rtld_locate(tid, &mi, &t->r_state_addr) &&
	    !tnf_events_attach_rtld(mi.ldso_path)) {
		if (tnf_rtld_started(tid, t->r_state_addr) == 0) {
			t->startup_pending = true;
			t->sync_seen = false;
		}
	} else {
		t->r_state_addr = 0;
	}
}

static void open_noprobes(struct target *t)
{
	end_user_stop(t);
	noprobes_image(t);
	finish_open(t);
}

static int errno_to_err(int e)
{
	switch (e) {
	case ESRCH:
	case ENOENT:
		return TNFCTL_ERR_NOPROCESS;
	case EPERM:
	case EACCES:
		return TNFCTL_ERR_ACCES;
	case EBUSY:
		return TNFCTL_ERR_BUSY;
	case ENOMEM:
		return TNFCTL_ERR_ALLOCFAIL;
	default:
		return TNFCTL_ERR_INTERNAL;
	}
}

static int check_attachable(pid_t pid, bool noprobes)
{
	int fd, dyn, tracer;

	if (target_find(pid))
		return TNFCTL_ERR_BUSY;
	if (kill(pid, 0))
		return errno_to_err(errno);
	/* A thread id is not a process id (/proc still answers for it). */
	if (tnf_proc_tgid(pid) != pid)
		return TNFCTL_ERR_NOPROCESS;
	if (tnf_proc_kthread(pid))
		return TNFCTL_ERR_ACCES;
	tracer = tnf_proc_tracer(pid);
	if (tracer < 0)
		return TNFCTL_ERR_NOPROCESS;
	if (tracer > 0)
		return TNFCTL_ERR_BUSY;
	if (noprobes)
		return TNFCTL_ERR_NONE; /* static or dynamic alike */
	fd = tnf_proc_open_task_file(pid, "exe");
	if (fd < 0)
		return errno_to_err(errno);
	dyn = tnf_elf_is_dynamic(fd);
	close(fd);
	return dyn == 1 ? TNFCTL_ERR_NONE : TNFCTL_ERR_NOTDYNAMIC;
}

/*
 * A zombie leader is kept only for the threads it leaves running: with none
 * seized the process has ended (a zombie not yet reaped, e.g. killed while
 * SUSPENDed; some kernels, 6.1, still open its /proc/PID/mem).
 */
static bool live_thread_seized(struct target *t)
{
	struct thr *th;

	for (th = t->thrs; th; th = th->next)
		if (!th->zombie)
			return true;
	return false;
}

/*
 * The leader we seized was released by the kernel in silence: a thread not
 * yet seized exec'd and took its tid, and the new image is nobody's.
 */
static bool leader_lost(struct target *t)
{
	struct thr *th = thr_find(t, t->tgid);

	return th && !th->zombie && tnf_proc_tracer(t->tgid) != getpid();
}

/* PTRACE_SEIZE every thread, again until no new thread shows up. */
static int seize_all(struct target *t)
{
	int leader_retries = 0;
	bool added = true;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", t->tgid);
	while (added) {
		struct dirent *de;
		DIR *d = opendir(path);

		if (!d)
			return TNFCTL_ERR_NOPROCESS;
		added = false;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			int e;

			if (tid <= 0 || thr_find(t, tid))
				continue;
			e = thr_seize(tid, false);
			if (e == -ESRCH && tid != t->tgid)
				continue;
			/* A leader that called pthread_exit() while its threads run on. */
			if (e == -EPERM && tid == t->tgid && tnf_proc_exiting(tid) &&
			    tnf_proc_tracer(tid) == 0) {
				struct thr *th = thr_add(t, tid);

				if (th)
					th->zombie = true;
				continue;
			}
			/*
			 * Another thread's exec: the old leader was a zombie for an
			 * instant, and the tid is the new leader's now.  Again.
			 */
			if (e == -EPERM && tid == t->tgid && tnf_proc_tracer(tid) == 0 &&
			    leader_retries++ < 100) {
				sched_yield();
				added = true;
				continue;
			}
			/*
			 * A thread created since is ours already (TRACECLONE); one
			 * that is exiting cannot be attached and need not be.
			 */
			if (e == -EPERM && tid != t->tgid) {
				int tracer = tnf_proc_tracer(tid);

				if (tracer < 0 || tnf_proc_exiting(tid))
					continue;
				if (tracer == getpid())
					e = 0;
			}
			if (e) {
				closedir(d);
				if (e == -EPERM && tnf_proc_tracer(t->tgid) > 0)
					return TNFCTL_ERR_BUSY;
				return errno_to_err(-e);
			}
			thr_add(t, tid);
			added = true;
		}
		closedir(d);
		/* Every thread ours, or an exec by one that was not: then start over. */
		if (!added && leader_lost(t) && leader_retries++ < 100) {
			thr_free_all(t);
			added = true;
		}
	}
	return live_thread_seized(t) ? TNFCTL_ERR_NONE : TNFCTL_ERR_NOPROCESS;
}

/*
 * @ours: only our own SUSPEND stopped it (the client keeps that list);
 * @flags: TNFCTL_OPEN_*.
 */
void op_pid_open(struct tnf_peer from, pid_t pid, bool ours, unsigned int flags)
{
	bool noprobes = flags & TNFCTL_OPEN_NOPROBES;
	struct target *t;
	int err = check_attachable(pid, noprobes);

	/*
	 * Who suspended it (SUSPEND close) still answers for it until an open
	 * succeeds: a failed open of another caller's must not leave it
	 * stopped for good when that caller dies.
	 */
	if (err) {
		/* Stopped by our SUSPEND alone (e.g. at an EXEC): a failed open resumes it. */
		if (ours && err != TNFCTL_ERR_BUSY && err != TNFCTL_ERR_NOPROCESS) {
			kill(pid, SIGCONT);
			suspended_forget(pid);
		}
		srv_reply_err(from, err);
		return;
	}
	t = target_new(pid, from);
	if (!t) {
		if (ours) {
			kill(pid, SIGCONT);
			suspended_forget(pid);
		}
		srv_reply_err(from, TNFCTL_ERR_ALLOCFAIL);
		return;
	}
	t->keep_stop = !ours && tnf_proc_job_stopped(pid);
	t->noprobes = noprobes;
	t->tty_intr = ours && (flags & TNF_OPEN_TTY_INTR);
	flags &= ~TNF_OPEN_TTY_INTR;
	t->open_flags = flags;
	err = seize_all(t);
	if (err) {
		fail_open(t, err);
		return;
	}
	t->phase = PH_OPEN_STOP;
	interrupt_all(t);
	tgt_evaluate(t);
}

void op_exec_attach(struct tnf_peer from, pid_t pid, unsigned int flags)
{
	struct tnf_rep rep;
	struct target *t;
	int e;

	if (target_find(pid)) {
		srv_reply_err(from, TNFCTL_ERR_BUSY);
		return;
	}
	e = thr_seize(pid, true);
	if (e) {
		/* another tracer has it already (strace -f of the caller): BUSY, not ACCES */
		srv_reply_err(from, e == -EPERM && tnf_proc_tracer(pid) > 0 ? TNFCTL_ERR_BUSY
									    : errno_to_err(-e));
		return;
	}
	t = target_new(pid, from);
	if (!t || !thr_add(t, pid)) {
		srv_reply_err(from, TNFCTL_ERR_ALLOCFAIL);
		return;
	}
	t->exec_child = true;
	t->noprobes = flags & TNFCTL_OPEN_NOPROBES;
	t->open_flags = flags;
	t->tty_intr = !(flags & TNFCTL_OPEN_FOREGROUND);
	t->phase = PH_EXEC_WAIT;
	t->bpf_flags = TNF_F_ARMED;
	tnf_events_track(pid, TNF_F_ARMED, 0);
	memset(&rep, 0, sizeof(rep));
	rep.kind = TNF_REP_SEIZED;
	srv_send_rep(from, &rep);
}

/* ---- continuing and reporting ------------------------------------------ */

static void fill_exit(struct target *t, struct tnf_rep *rep)
{
	int code = t->exit_code;

	if (!t->exit_rec) {
		struct timespec ts;

		/* The record was lost: ptrace's view is still right. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t->exit_time = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		code = WIFSIGNALED(t->wait_status) ? WTERMSIG(t->wait_status)
						   : WEXITSTATUS(t->wait_status) << 8;
	}
	rep->time_ns = t->exit_time;
	rep->tid = t->exit_rec ? t->exit_tid : t->tgid;
	if (code & 0x7f) {
		rep->event = TNFCTL_EVENT_TARGGONE;
		rep->term_signal = code & 0x7f;
	} else {
		rep->event = TNFCTL_EVENT_EXIT;
		rep->exit_status = (code >> 8) & 0xff;
	}
}

static bool head_ready(struct target *t)
{
	struct tevent *e = t->events;

	if (!fully_stopped(t))
		return false;
	return !e || !e->child || fully_stopped(e->child);
}

/* True if @c is held for the child handle of @t's CONTINUE, else it runs free. */
static bool bind_child(struct target *t, struct target *c)
{
	c->parent = NULL;
	/* A terminal SIGINT queued at its birth was sent to the group in the fork: the parent's ^C.
	 */
	if (c->tty_intr)
		c->tty_sigint_seen = thr_tty_sigint_pending(c);
	if (t->want_child && t->child_hid) {
		tgt_set_peer(c, (struct tnf_peer){.conn = t->peer.conn, .hid = t->child_hid});
		t->child_hid = 0;
		c->phase = PH_IDLE;
		if (!c->dead)
			tnf_events_track(c->tgid, 0, c->r_state_addr);
		return true;
	}
	close_detach(c, 0, true, -1);
	return false;
}

static bool exec_queued(const struct tevent *e)
{
	for (; e; e = e->next)
		if (e->rec.kind == TNF_REC_EXEC)
			return true;
	return false;
}

static void report(struct target *t)
{
	struct tnf_rep rep;
	struct tevent *e = t->events;

	memset(&rep, 0, sizeof(rep));
	rep.kind = TNF_REP_DONE;
	rep.pid = t->tgid;
	if (e) {
		t->events = e->next;
		rep.tid = e->rec.tid;
		rep.time_ns = e->rec.time_ns;
		memcpy(rep.path, e->rec.path, sizeof(e->rec.path));
		switch (e->rec.kind) {
		case TNF_REC_FORK:
			rep.event = TNFCTL_EVENT_FORK;
			rep.child_pid = e->rec.child;
			if (e->child && bind_child(t, e->child))
				rep.flags |= TNF_REPF_CHILD_BOUND;
			if (exec_queued(e->next))
				rep.flags |= TNF_REPF_EXEC_NEXT;
			break;
		case TNF_REC_EXEC:
			rep.event = TNFCTL_EVENT_EXEC;
			/* the thread that called execve (as the watch says), not the tid it took */
			if (e->rec.old_tid > 0)
				rep.tid = e->rec.old_tid;
			if (e->rec.flags & TNF_RF_INTERP)
				rep.flags |= TNF_REPF_INTERP;
			t->new_image = true;
			break;
		case TNF_REC_EXEC_FAILED:
			rep.event = TNFCTL_EVENT_EXEC_FAILED;
			rep.exec_errno = e->rec.exit_code;
			rep.uargv = e->rec.uargv;
			break;
		case TNF_REC_DLOPEN:
			/* A load by libc itself is named in BPF (as the watch does), or "". */
			rep.event = TNFCTL_EVENT_DLOPEN;
			break;
		case TNF_REC_SYNC:
			/* rtld's start-up, for the client alone (TNF_CONT_STARTUP) */
			rep.event = TNFCTL_EVENT_DLOPEN;
			rep.flags |= TNF_REPF_STARTUP;
			break;
		default:
			rep.event = TNFCTL_EVENT_DLCLOSE;
			break;
		}
		free(e);
	} else if (t->dead) {
		fill_exit(t, &rep);
	} else {
		rep.event = TNFCTL_EVENT_EINTR;
	}
	/*
	 * One ^C reaches every process of the group: one stopped before taking
	 * it takes it at the next CONTINUE, which is no new ^C.
	 */
	if (t->tty_intr && !t->dead)
		t->tty_sigint_seen = (rep.event == TNFCTL_EVENT_EINTR || t->tty_sigint_seen) &&
				     thr_tty_sigint_pending(t);
	t->child_hid = 0;
	t->stop_requested = false;
	t->phase = PH_IDLE;
	dbg("%d: event %d reported (handle %u)\n", t->tgid, rep.event, t->peer.hid);
	srv_send_rep(t->peer, &rep);
}

/*
 * A DLOPEN/DLCLOSE is reported with every link map consistent: another
 * thread may be stopped half-way through rtld's RT_ADD/RT_DELETE (several
 * threads dlclose one object; only the last unloads it, the others report at
 * their return).  Then hold the threads that have an event and let the
 * others run until rtld's RT_CONSISTENT (its own record wakes us up).
 * True while the report must wait.
 */
static bool wait_link_map(struct target *t)
{
	struct tevent *e = t->events;
	struct thr *th;

	t->lm_wait = false;
	if (!e || t->dead || !t->r_state_addr ||
	    (e->rec.kind != TNF_REC_DLOPEN && e->rec.kind != TNF_REC_DLCLOSE) ||
	    tnf_rtld_consistent(live_tid(t), t->r_state_addr) != 0)
		return false;
	dbg("%d: link map changing, event held\n", t->tgid);
	t->lm_wait = true;
	for (th = t->thrs; th; th = th->next) {
		for (e = t->events; e && e->rec.tid != th->tid; e = e->next)
			;
		if (!e)
			thr_resume(th);
	}
	return true;
}

/*
 * @child_hid: the id a FORK child's handle gets, or 0 to let children run free;
 * @cont: TNF_CONT_*
 */
void op_continue(struct target *t, uint32_t child_hid, uint32_t cont)
{
	bool want_child = child_hid != 0;
	unsigned int flags;
	struct thr *th;
	int e;

	if (t->phase != PH_IDLE || (t->dead && !t->events && !t->exit_unseen)) {
		srv_reply_err(t->peer, t->dead ? TNFCTL_ERR_NOPROCESS : TNFCTL_ERR_BADARG);
		return;
	}
	if (t->new_image && !t->noprobes) {
		/* Its probes are the old image's: close and re-open (Solaris). */
		srv_reply_err(t->peer, TNFCTL_ERR_BADARG);
		return;
	}
	/*
	 * NOPROBES: the handle goes on in the new image, still in the ptrace-stop
	 * at the exec.  A SUSPEND close and re-open would be a group-stop that
	 * the real parent sees (a shell reports its job Stopped).
	 */
	if (t->new_image && !t->dead)
		noprobes_image(t);
	t->new_image = false;
	t->want_child = want_child;
	t->child_hid = child_hid;
	t->report_startup = cont & TNF_CONT_STARTUP;
	t->stop_requested = false;
	t->phase = PH_RUNNING;
	t->exit_unseen = false;
	if (!t->events && !t->dead) {
		/*
		 * A followed child is stopped by ptrace's auto-attach in both stop
		 * modes: traced from its birth, it never enters a group-stop, which
		 * its real parent would see (CLD_STOPPED, then CLD_CONTINUED and a
		 * SIGCHLD when we end it) before we could seize it.
		 */
		flags = TNF_F_ARMED | (want_child ? TNF_F_FOLLOW | TNF_F_PTRACE_FORK : 0);
		if (t->open_flags & TNFCTL_OPEN_EXEC_FAILED)
			flags |= TNF_F_EXEC_FAILED;
		/* Opened before rtld's start-up: its RT_CONSISTENT is no DLOPEN. */
		if (t->startup_pending && !t->sync_seen)
			flags |= TNF_F_STOP_SYNC;
		e = tnf_events_track(t->tgid, flags, t->r_state_addr);
		if (e == -EMFILE || e == -ENFILE || e == -ENOMEM) {
			/* Nothing armed: it stays stopped, the handle as it was. */
			struct tnf_rep rep = {.kind = TNF_REP_DONE,
					      .err = TNFCTL_ERR_ALLOCFAIL,
					      .exit_status = -e};

			t->phase = PH_IDLE;
			t->child_hid = 0;
			srv_send_rep(t->peer, &rep);
			return;
		}
		t->bpf_flags = flags;
		for (th = t->thrs; th; th = th->next)
			if (th->stopped)
				thr_setoptions(th, tnf_ptrace_opts(t->exec_child, want_child));
	}
	tgt_evaluate(t);
}

void op_close(struct target *t, int op)
{
	if (op == TNFCTL_TARG_DEFAULT)
		op = t->exec_child ? TNFCTL_TARG_KILL : TNFCTL_TARG_RESUME;
	if (t->dead) {
		srv_reply_err(t->peer, TNFCTL_ERR_NONE);
		target_destroy(t);
		return;
	}
	if (op == TNFCTL_TARG_KILL) {
		release_event_children(t);
		tnf_events_untrack(t->tgid);
		kill(t->tgid, SIGKILL);
		t->phase = PH_KILLING;
		return; /* replied once it is gone */
	}
	close_detach(t, op == TNFCTL_TARG_SUSPEND ? SIGSTOP : 0, false, TNFCTL_ERR_NONE);
}

/* The controller went away without closing: kill exec'd targets, free the rest. */
void tgt_abandon(struct target *t)
{
	/* A fork child not yet reported goes with its parent's event. */
	if (t->phase == PH_CLOSING || t->phase == PH_KILLING || t->phase == PH_CHILD)
		return;
	drop_handle(t);
	if (t->exec_child) {
		release_event_children(t);
		kill(t->tgid, SIGKILL);
		t->phase = PH_KILLING;
		return;
	}
	close_detach(t, 0, true, -1);
}

static struct tnf_conn *gone_conn;

static void conn_gone_one(struct target *t)
{
	if (t->peer.conn != gone_conn)
		return;
	tgt_abandon(t);
	tgt_set_peer(t, (struct tnf_peer){0});
	t->child_hid = 0;
}

void tgt_conn_gone(struct tnf_conn *c)
{
	gone_conn = c;
	tgt_for_each(conn_gone_one);
}

/* ---- the state machine -------------------------------------------------- */

static void closing_reply(struct target *t)
{
	if (t->close_reply < 0)
		return;
	srv_reply_err(t->peer, t->close_reply);
	t->close_reply = -1;
	drop_handle(t);
}

static void evaluate_closing(struct target *t)
{
	bool left = false, blocking = false;
	struct thr *th;

	for (th = t->thrs; th; th = th->next) {
		if (th->detached || th->zombie)
			continue;
		if (th->stopped && t->close_sig && !th->group_stop) {
			/* SUSPEND: run it into the group-stop (its pending SIGSTOP) first. */
			thr_resume(th);
		} else if (th->stopped) {
			thr_detach(th, 0);
		} else if (!th->interrupting && !t->close_sig &&
			   ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0) {
			th->interrupting = true;
		}
		if (!th->detached) {
			left = true;
			/* A thread blocked in vfork may take long: do not hold the caller. */
			if (!th->in_vfork)
				blocking = true;
		}
	}
	if (t->dead) {
		closing_reply(t);
		target_destroy(t);
		return;
	}
	if (blocking)
		return;
	if (t->close_sig && t->close_reply >= 0 && !left)
		tnf_proc_wait_stopped(t->tgid);
	closing_reply(t);
	if (left)
		return;
	if (t->close_cont)
		kill(t->tgid, SIGCONT);
	target_destroy(t);
}

void tgt_evaluate(struct target *t)
{
	switch (t->phase) {
	case PH_EXEC_WAIT:
		if (t->dead)
			fail_open(t, TNFCTL_ERR_ACCES);
		else if (t->exec_seen && fully_stopped(t) && t->noprobes)
			open_noprobes(t);
		else if (t->exec_seen && fully_stopped(t))
			start_sync(t, false);
		break;
	case PH_OPEN_STOP:
		if (t->dead)
			fail_open(t, TNFCTL_ERR_NOPROCESS);
		else if (fully_stopped(t) && t->noprobes)
			open_noprobes(t);
		else if (fully_stopped(t))
			start_sync(t, true);
		break;
	case PH_SYNC_WAIT:
		if (t->dead)
			fail_open(t, t->exec_child ? TNFCTL_ERR_ACCES : TNFCTL_ERR_NOPROCESS);
		else if (!t->sync_seen)
			resume_all(t);
		else if (fully_stopped(t))
			finish_open(t);
		break;
	case PH_RUNNING:
		/* Still changing: the thread that ends the change stops with a record. */
		if (t->lm_wait && !t->dead &&
		    tnf_rtld_consistent(live_tid(t), t->r_state_addr) == 0)
			break;
		if (t->events || t->stop_requested || t->dead) {
			interrupt_all(t);
			if (t->events && t->events->child)
				interrupt_all(t->events->child);
			if (head_ready(t) && !wait_link_map(t))
				report(t);
		} else {
			resume_all(t);
		}
		break;
	case PH_CLOSING:
		evaluate_closing(t);
		break;
	case PH_KILLING:
		if (t->dead) {
			srv_reply_err(t->peer, t->fail_err);
			drop_handle(t);
			target_destroy(t);
		}
		break;
	case PH_IDLE:
	case PH_CHILD:
		break;
	}
}

bool tgt_any(void)
{
	return targets != NULL;
}

/*
 * @fn on every target once, those it creates included, each pass one walk:
 * @fn may destroy any target (kept in memory until the loop's turn ends).
 */
void tgt_for_each(void (*fn)(struct target *))
{
	static struct target **snap;
	static size_t cap;
	static unsigned int gen;
	struct target *t, **p;
	size_t n, i;

	gen++;
	for (;;) {
		n = 0;
		for (t = targets; t; t = t->next) {
			if (t->visit_gen == gen)
				continue;
			if (n == cap) {
				p = realloc(snap, (cap ? cap * 2 : 256) * sizeof(*p));
				if (!p)
					break; /* this pass takes what fits; the next the rest */
				snap = p;
				cap = cap ? cap * 2 : 256;
			}
			snap[n++] = t;
		}
		if (!n && t) {
			/* no memory for even one: a walk from the head per target */
			t->visit_gen = gen;
			fn(t);
			continue;
		}
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			t = snap[i];
			if (t->destroyed || t->visit_gen == gen)
				continue;
			t->visit_gen = gen;
			fn(t);
		}
	}
}

void tgt_evaluate_all(void)
{
	tgt_for_each(tgt_evaluate);
}
