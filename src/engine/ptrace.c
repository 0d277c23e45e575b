// SPDX-License-Identifier: BSD-2-Clause
/*
 * Stop and resume (DESIGN §2.2): the per-thread ptrace operations of the
 * tracer helper.  Only PTRACE_SEIZE is used, so group-stops are reported as
 * PTRACE_EVENT_STOP and PTRACE_INTERRUPT/PTRACE_LISTEN are available.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include "tracer.h"

/* Every thread of every target by tid: a wait status is matched without a walk of the tree. */
#define TID_BUCKETS 4096
static struct thr *tid_hash[TID_BUCKETS];

struct thr *thr_find(struct target *t, pid_t tid)
{
	struct thr *th;

	for (th = t->thrs; th; th = th->next)
		if (th->tid == tid)
			return th;
	return NULL;
}

struct thr *thr_lookup(pid_t tid)
{
	struct thr *th;

	for (th = tid_hash[(unsigned int)tid % TID_BUCKETS]; th; th = th->hnext)
		if (th->tid == tid)
			return th;
	return NULL;
}

struct thr *thr_add(struct target *t, pid_t tid)
{
	struct thr *th = thr_find(t, tid), **b;

	if (th)
		return th;
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->tid = tid;
	th->owner = t;
	th->next = t->thrs;
	t->thrs = th;
	b = &tid_hash[(unsigned int)tid % TID_BUCKETS];
	th->hnext = *b;
	*b = th;
	return th;
}

static void thr_free(struct thr *th)
{
	struct thr **pp;

	for (pp = &tid_hash[(unsigned int)th->tid % TID_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == th) {
			*pp = th->hnext;
			break;
		}
	free(th);
}

void thr_remove(struct target *t, pid_t tid)
{
	struct thr **pp, *th;

	for (pp = &t->thrs; (th = *pp); pp = &th->next)
		if (th->tid == tid) {
			*pp = th->next;
			thr_free(th);
			return;
		}
}

void thr_free_all(struct target *t)
{
	struct thr *th;

	while ((th = t->thrs)) {
		t->thrs = th->next;
		thr_free(th);
	}
}

unsigned long tnf_ptrace_opts(bool exitkill, bool fork_opts)
{
	/*
	 * PTRACE_EVENT_EXEC orders an exec: it is the new image's first stop,
	 * after its EXEC record, so the thread list is renewed before any
	 * other stop of the new leader is taken in.
	 */
	unsigned long o = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC;

	if (exitkill)
		o |= PTRACE_O_EXITKILL;
	/* VFORK_DONE: a vfork parent, which no PTRACE_INTERRUPT stops, stops again here. */
	if (fork_opts)
		o |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE;
	return o;
}

int thr_seize(pid_t tid, bool exitkill)
{
	return ptrace(PTRACE_SEIZE, tid, 0, tnf_ptrace_opts(exitkill, false)) ? -errno : 0;
}

int thr_setoptions(struct thr *th, unsigned long opts)
{
	return ptrace(PTRACE_SETOPTIONS, th->tid, 0, opts) ? -errno : 0;
}

/* Ask a running thread to stop; a thread with a BPF SIGSTOP on its way stops by itself. */
void thr_interrupt(struct target *t, struct thr *th)
{
	if (th->stopped || th->interrupting || th->in_vfork || th->detached || th->zombie ||
	    th->vanished)
		return;
	if (th->expect_sigstop > 0)
		return;
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0) {
		th->interrupting = true;
	} else if (errno == ESRCH && tnf_proc_exiting(th->tid)) {
		/*
		 * A leader after pthread_exit never stops again.  A thread we
		 * trace stays a zombie until we reap it, so one that is not
		 * there at all was the exec'ing thread of an exec in flight.
		 */
		if (th->tid != t->tgid && !tnf_proc_task_exists(t->tgid, th->tid))
			th->vanished = true;
		else
			th->zombie = true;
	}
}

int thr_resume(struct thr *th)
{
	long r;

	if (!th->stopped || th->detached)
		return 0;
	/* A job-control stop is the user's: keep it, but let SIGCONT end it. */
	if (th->group_stop)
		r = ptrace(PTRACE_LISTEN, th->tid, 0, 0);
	else
		r = ptrace(PTRACE_CONT, th->tid, 0, (long)th->pending_sig);
	th->stopped = false;
	th->pending_sig = 0;
	return r ? -errno : 0;
}

int thr_detach(struct thr *th, int sig)
{
	long r;

	if (th->detached)
		return 0;
	r = ptrace(PTRACE_DETACH, th->tid, 0, (long)(sig ? sig : th->pending_sig));
	if (r == 0) {
		th->detached = true;
		th->stopped = false;
	}
	return r ? -errno : 0;
}

/*
 * Stopped, for every thread that can run user code.  A thread that vanished
 * means an exec in flight, which ends in the new image's stop.
 */
bool thr_all_stopped(struct target *t)
{
	struct thr *th;

	for (th = t->thrs; th; th = th->next) {
		if (th->vanished)
			return false;
		if (!th->stopped && !th->in_vfork && !th->detached && !th->zombie)
			return false;
	}
	return true;
}

/* A terminal SIGINT (si_code SI_KERNEL) in @tid's queue, or its process's. */
static bool tty_sigint_queued(pid_t tid, unsigned int flags)
{
	struct __ptrace_peeksiginfo_args args = {.flags = flags, .nr = 1};
	siginfo_t si;

	/* Standard signals do not queue: one SIGINT at most per queue. */
	for (args.off = 0; args.off < 64; args.off++) {
		if (ptrace(PTRACE_PEEKSIGINFO, tid, &args, &si) != 1)
			return false;
		if (si.si_signo == SIGINT)
			return si.si_code == SI_KERNEL;
	}
	return false;
}

/*
 * The stopped target has a terminal SIGINT queued, not yet delivered (it
 * was stopped for the ^C another process of the group took, or it blocks
 * SIGINT).
 */
bool thr_tty_sigint_pending(struct target *t)
{
	struct thr *th;
	bool shared_done = false;

	for (th = t->thrs; th; th = th->next) {
		if (th->detached || th->zombie || th->vanished)
			continue;
		/* Running or waiting in vfork, not in a ptrace-stop: only /proc can tell (any
		 * sender). */
		if (!th->stopped) {
			if (!shared_done && tnf_proc_sig_queued(t->tgid, SIGINT))
				return true;
			shared_done = true;
			continue;
		}
		if (tty_sigint_queued(th->tid, 0))
			return true;
		if (!shared_done) {
			shared_done = true;
			if (tty_sigint_queued(th->tid, PTRACE_PEEKSIGINFO_SHARED))
				return true;
		}
	}
	return false;
}
