// SPDX-License-Identifier: BSD-2-Clause
/*
 * The client's connection to the engine (tnfctl-engine, src/engine/; started
 * by engine_start.c): one connection per process, shared by every handle.
 * A handle is an id on it (proto.h), so our descriptors do not grow with the
 * handles or the tree.
 *
 * One reader thread (all signals blocked) takes every reply off the
 * connection and hands it to the handle it names: a thread waiting in an
 * ordinary call sleeps on the handle's condition variable; a thread in
 * tnfctl_continue sleeps in ppoll() with the caller's signal mask, so that a
 * signal to it interrupts the wait as before, and is woken by a real-time
 * signal of our own (wake_sig), sent to that thread alone.  Nothing per
 * waiting thread is a descriptor: a caller with a thread per child handle
 * (tnfctl_continue(3TNF)'s FORK example) stays at a few descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "proto.h"
#include "target.h"

#define SLOT_BUCKETS 1024

/* A reply waiting for its handle's thread. */
struct tnf_reply {
	struct tnf_reply *next;
	int fd; /* came with it (a watch's ring buffer), or -1 */
	struct tnf_rep rep;
};

/*
 * A connection to an engine and the handles on it.  A new open goes to
 * `cur`; if that engine died (killed by someone), a new one is started,
 * and the old one's handles keep their struct until they are closed.
 */
struct tnf_agent {
	int sock;
	int engine_pidfd; /* the engine proper (its first reply names it), or -1 */
	unsigned int users;
	unsigned int fork_gen; /* made in this process, not inherited through a fork */
	uint32_t next_hid;
	_Atomic bool dead; /* the reader has seen the end: every wait fails */
	bool closing;	   /* our last handle is closed: the end is ours */
	uid_t euid;	   /* whom the engine serves: our credentials at the connect */
	uint64_t caps;
	pthread_t reader;
	pthread_cond_t dead_cond;
	struct tnf_slot *slots[SLOT_BUCKETS];
};

static pthread_mutex_t agent_lock = PTHREAD_MUTEX_INITIALIZER;
static void note_lost(uint64_t lost);
static struct tnf_agent *cur;
static unsigned int fork_gen;
static _Atomic uint64_t lost_seen;

/*
 * Processes exec_open forked (our children), to reap once they are gone.
 * Each is held by a pidfd: the application may reap the child itself, and
 * its pid may then belong to another child of the application, which a
 * waitpid() on the pid would wait for and reap.
 */
struct spawned {
	pid_t pid;
	int pidfd; /* -1 if pidfd_open failed */
};
static struct spawned *spawned;
static size_t nspawned;

void tnf_spawned_add(pid_t pid)
{
	struct spawned *p;

	pthread_mutex_lock(&agent_lock);
	p = realloc(spawned, (nspawned + 1) * sizeof(*p));
	if (p) {
		spawned = p;
		spawned[nspawned].pid = pid;
		spawned[nspawned].pidfd = syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
		nspawned++;
	}
	pthread_mutex_unlock(&agent_lock);
}

/* @pid was released alive: the application reaps it; our pidfd goes. */
void tnf_spawned_forget(pid_t pid)
{
	size_t i;

	pthread_mutex_lock(&agent_lock);
	for (i = 0; i < nspawned; i++)
		if (spawned[i].pid == pid) {
			if (spawned[i].pidfd >= 0)
				close(spawned[i].pidfd);
			spawned[i] = spawned[--nspawned];
			break;
		}
	pthread_mutex_unlock(&agent_lock);
}

/* Reap @pid if exec_open started it (and no one else reaped it); it must be gone already. */
void tnf_spawned_reap(pid_t pid)
{
	int pidfd = -1;
	bool ours = false;
	siginfo_t si;
	size_t i;

	pthread_mutex_lock(&agent_lock);
	for (i = 0; i < nspawned; i++)
		if (spawned[i].pid == pid) {
			pidfd = spawned[i].pidfd;
			spawned[i] = spawned[--nspawned];
			ours = true;
			break;
		}
	pthread_mutex_unlock(&agent_lock);
	if (ours && pidfd >= 0) {
		/* ECHILD if the application reaped it already */
		while (waitid(P_PIDFD, pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
		close(pidfd);
	} else if (ours) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

/*
 * Our descriptors, closed in the child of a fork() that does not exec: a child
 * holding them would hide the controller's death from the engine (and keep
 * its targets stopped) for as long as it lives.  Every direct handle, so
 * that the child can make their locks anew.  Both under fd_lock, which is
 * only ever held for a moment (a fork waits for it).
 */
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int *our_fds;
static size_t nour_fds, cap_fds;
static struct tnfctl_handle *all_handles;

static void atfork_prepare(void)
{
	pthread_mutex_lock(&fd_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&fd_lock);
}

/*
 * The child starts afresh: no engine, no reader thread.  Its inherited
 * handles fail (the connection is the parent's), and one another thread
 * was in at the fork fails too rather than hang on its lock.
 */
static void atfork_child(void)
{
	struct tnfctl_handle *h;
	size_t i;

	for (i = 0; i < nour_fds; i++)
		close(our_fds[i]);
	nour_fds = 0;
	for (h = all_handles; h; h = h->all_next)
		tnf_handle_lock_init(h);
	cur = NULL;
	fork_gen++;
	pthread_mutex_init(&agent_lock, NULL);
	pthread_mutex_unlock(&fd_lock);
}

static void atfork_install(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void fd_register(int fd)
{
	pthread_once(&atfork_once, atfork_install);
	pthread_mutex_lock(&fd_lock);
	if (nour_fds == cap_fds) {
		size_t cap = cap_fds ? 2 * cap_fds : 16;
		int *p = realloc(our_fds, cap * sizeof(*p));

		if (p) {
			our_fds = p;
			cap_fds = cap;
		}
	}
	if (nour_fds < cap_fds)
		our_fds[nour_fds++] = fd;
	pthread_mutex_unlock(&fd_lock);
}

static void handle_list_add(struct tnfctl_handle *h)
{
	pthread_once(&atfork_once, atfork_install);
	pthread_mutex_lock(&fd_lock);
	h->all_prev = NULL;
	h->all_next = all_handles;
	if (all_handles)
		all_handles->all_prev = h;
	all_handles = h;
	pthread_mutex_unlock(&fd_lock);
}

static void handle_list_del(struct tnfctl_handle *h)
{
	pthread_mutex_lock(&fd_lock);
	if (h->all_prev)
		h->all_prev->all_next = h->all_next;
	else if (all_handles == h)
		all_handles = h->all_next;
	if (h->all_next)
		h->all_next->all_prev = h->all_prev;
	pthread_mutex_unlock(&fd_lock);
}

static void fd_close(int fd)
{
	size_t i;

	pthread_mutex_lock(&fd_lock);
	for (i = 0; i < nour_fds; i++)
		if (our_fds[i] == fd) {
			our_fds[i] = our_fds[--nour_fds];
			break;
		}
	close(fd);
	pthread_mutex_unlock(&fd_lock);
}

/* ---- waking a thread in tnfctl_continue ---------------------------------- */

/*
 * Real-time signal that wakes one waiting thread: the highest one with no
 * handler when the first engine starts (SIGRTMAX normally), 0 if every one
 * has a handler.  Without it (or once the program has taken it for
 * itself), waits look at their handle every WAKE_POLL_MS.  It is sent only
 * once the waiter's reply is queued (or the connection is gone), so a wait
 * interrupted with nothing queued was interrupted by the caller's signal:
 * the handler has nothing to do.
 */
#define WAKE_POLL_MS 20
#define WAKE_LOOK_S  1 /* with the signal, a look anyway: the program may take it mid-wait */
static int wake_sig;
static void wake_handler(int sig)
{
	(void)sig;
}

static void wake_sig_choose(void)
{
	struct sigaction sa, old;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		if (sigaction(sig, NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		if (sigaction(sig, &sa, NULL) == 0) {
			wake_sig = sig;
			return;
		}
	}
}

static pthread_once_t wake_once = PTHREAD_ONCE_INIT;

/* ---- handle slots ---------------------------------------------------------- */

static struct tnf_slot **bucket(struct tnf_agent *a, uint32_t hid)
{
	return &a->slots[hid % SLOT_BUCKETS];
}

static struct tnf_slot *slot_find(struct tnf_agent *a, uint32_t hid)
{
	struct tnf_slot *s;

	for (s = *bucket(a, hid); s; s = s->hnext)
		if (s->hid == hid)
			return s;
	return NULL;
}

static uint32_t hid_new(struct tnf_agent *a)
{
	if (!++a->next_hid)
		a->next_hid = 1; /* 4 billion handles later: 0 means none */
	return a->next_hid;
}

static void slot_add(struct tnf_agent *a, struct tnf_slot *s, uint32_t hid)
{
	s->hid = hid;
	s->qtail = &s->q;
	pthread_cond_init(&s->cond, NULL);
	s->hnext = *bucket(a, hid);
	*bucket(a, hid) = s;
}

static void slot_clear_queue(struct tnf_slot *s)
{
	struct tnf_reply *r;

	while ((r = s->q)) {
		s->q = r->next;
		if (r->fd >= 0)
			close(r->fd);
		free(r);
	}
	s->qtail = &s->q;
}

static void slot_remove(struct tnf_agent *a, struct tnf_slot *s)
{
	struct tnf_slot **pp;

	for (pp = bucket(a, s->hid); *pp; pp = &(*pp)->hnext)
		if (*pp == s) {
			*pp = s->hnext;
			break;
		}
	slot_clear_queue(s);
	pthread_cond_destroy(&s->cond);
}

/* Whether wake_sig still runs our handler: the program may have taken it since. */
static bool wake_sig_ours(void)
{
	struct sigaction sa;

	return wake_sig && sigaction(wake_sig, NULL, &sa) == 0 && sa.sa_handler == wake_handler;
}

/*
 * Under agent_lock.  A program that took wake_sig since the wait began
 * (ignored, its default, a handler of its own) gets no signal from us: the
 * waiter finds its reply at its next look.
 */
static void slot_wake(struct tnf_slot *s)
{
	pthread_cond_signal(&s->cond);
	/* a failure (the queue of signals full): its next look finds the reply */
	if (s->sleeping && wake_sig_ours() && pthread_kill(s->waiter, wake_sig) == 0)
		s->sleeping = false;
}

/* ---- the reader ------------------------------------------------------------ */

/*
 * The engine died (SIGKILL, the OOM killer): the kernel detached its
 * targets, but a SIGSTOP that BPF had sent and the engine never collected
 * turns into a job-control stop that nobody ends (DESIGN section 3).  Once
 * the engine is gone for sure (its pidfd; its BPF links went with it), the
 * target of every handle is resumed, unless it was due to die with the
 * engine (an exec_open'd one).  Each pidfd is checked against the start
 * time recorded at the open: never another process that got the pid.
 */
static void engine_gone(struct tnf_agent *a)
{
	struct pollfd p = {.fd = a->engine_pidfd, .events = POLLIN};
	struct tnf_slot *s;
	size_t b;
	int fd;

	/* closed the connection but alive: it released the targets itself */
	if (p.fd < 0 || poll(&p, 1, 5000) != 1)
		return;
	pthread_mutex_lock(&agent_lock);
	for (b = 0; b < SLOT_BUCKETS; b++)
		for (s = a->slots[b]; s; s = s->hnext) {
			if (s->exec_child || s->pid <= 0 || !s->start)
				continue;
			fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
			if (fd >= 0 && tnf_proc_starttime(s->pid) == s->start)
				syscall(SYS_pidfd_send_signal, fd, SIGCONT, NULL, 0);
			if (fd >= 0)
				close(fd);
		}
	pthread_mutex_unlock(&agent_lock);
}

static void *reader_main(void *arg)
{
	struct tnf_agent *a = arg;
	struct tnf_reply *r = NULL;
	struct tnf_slot *s;
	bool closing;
	size_t b;
	ssize_t n;

	for (;;) {
		if (!r && !(r = malloc(sizeof(*r))))
			break; /* the waiters fail rather than hang */
		n = tnf_recv(a->sock, &r->rep, sizeof(r->rep), &r->fd);
		if (!tnf_rep_received(&r->rep, n))
			break;
		note_lost(r->rep.lost);
		pthread_mutex_lock(&agent_lock);
		s = slot_find(a, r->rep.hid);
		if (s) {
			r->next = NULL;
			*s->qtail = r;
			s->qtail = &r->next;
			r = NULL;
			slot_wake(s);
		} else if (r->fd >= 0) {
			close(r->fd); /* its handle is gone */
		}
		pthread_mutex_unlock(&agent_lock);
	}
	free(r); /* its descriptor, if any, is closed already (or it came with no packet) */
	pthread_mutex_lock(&agent_lock);
	closing = a->closing;
	pthread_mutex_unlock(&agent_lock);
	if (!closing) {
		if (getenv("TNFCTL_DEBUG"))
			fprintf(stderr, "libtnfctl: the engine closed the connection\n");
		engine_gone(a);
	}
	pthread_mutex_lock(&agent_lock);
	a->dead = true;
	for (b = 0; b < SLOT_BUCKETS; b++)
		for (s = a->slots[b]; s; s = s->hnext)
			slot_wake(s);
	pthread_cond_broadcast(&a->dead_cond);
	pthread_mutex_unlock(&agent_lock);
	return NULL;
}

/* ---- the connection -------------------------------------------------------- */

static tnfctl_errcode_t agent_start(void)
{
	struct tnf_agent *a = calloc(1, sizeof(*a));
	sigset_t all, old;
	tnfctl_errcode_t err;
	pid_t engine_pid;
	int e;

	if (!a)
		return TNFCTL_ERR_ALLOCFAIL;
	pthread_once(&wake_once, wake_sig_choose);
	err = tnf_engine_start(&a->sock, &engine_pid);
	if (err) {
		free(a);
		return err;
	}
	a->engine_pidfd = engine_pid ? (int)syscall(SYS_pidfd_open, engine_pid, 0) : -1;
	a->fork_gen = fork_gen;
	a->euid = geteuid();
	tnf_own_caps(&a->caps);
	pthread_cond_init(&a->dead_cond, NULL);
	/* The reader takes none of the caller's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(&a->reader, NULL, reader_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		close(a->sock); /* the engine sees a controller death: nothing was opened */
		if (a->engine_pidfd >= 0)
			close(a->engine_pidfd);
		pthread_cond_destroy(&a->dead_cond);
		free(a);
		errno = e;
		return TNFCTL_ERR_ALLOCFAIL;
	}
	fd_register(a->sock);
	if (a->engine_pidfd >= 0)
		fd_register(a->engine_pidfd);
	cur = a;
	return TNFCTL_ERR_NONE;
}

/* Unusable: its engine is gone, or it was inherited through a fork. */
static bool agent_dead(const struct tnf_agent *a)
{
	return a->dead || a->fork_gen != fork_gen;
}

bool tnf_client_inherited(struct tnfctl_handle *h)
{
	return h->agent && h->agent->fork_gen != fork_gen;
}

int tnf_client_engine_pidfd(struct tnfctl_handle *h)
{
	return h->agent ? h->agent->engine_pidfd : -1;
}

bool tnf_client_engine_dead(struct tnfctl_handle *h)
{
	bool dead;

	pthread_mutex_lock(&agent_lock);
	dead = h->agent && h->agent->dead && !h->agent->closing;
	pthread_mutex_unlock(&agent_lock);
	return dead;
}

/*
 * Our credentials are no longer those the engine was chosen for (a setuid,
 * capabilities dropped): what we open from now on goes to an engine of the
 * new ones, never through the old one's privileges.
 */
static bool agent_not_ours(const struct tnf_agent *a)
{
	uint64_t caps = 0;

	return a->euid != geteuid() || tnf_own_caps(&caps) || caps != a->caps;
}

/* The current engine, started if needed, with one more user.  Under agent_lock. */
static tnfctl_errcode_t agent_get_locked(struct tnf_agent **ap)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;

	if (cur && (agent_dead(cur) || agent_not_ours(cur)))
		cur = NULL; /* its handles still hold it */
	if (!cur)
		err = agent_start();
	if (err == TNFCTL_ERR_NONE) {
		cur->users++;
		*ap = cur;
	}
	return err;
}

static void agent_put(struct tnf_agent *a)
{
	struct tnf_req quit = {.op = TNF_OP_QUIT};
	bool inherited;

	pthread_mutex_lock(&agent_lock);
	if (--a->users) {
		pthread_mutex_unlock(&agent_lock);
		return;
	}
	if (cur == a)
		cur = NULL;
	inherited = a->fork_gen != fork_gen;
	a->closing = true;
	pthread_mutex_unlock(&agent_lock);
	if (inherited)
		return; /* its socket is closed here, its reader is the parent's */
	tnf_send(a->sock, &quit, sizeof(quit), -1);
	/* The reader sees the end of the connection and leaves. */
	shutdown(a->sock, SHUT_RDWR);
	pthread_join(a->reader, NULL);
	fd_close(a->sock);
	if (a->engine_pidfd >= 0)
		fd_close(a->engine_pidfd);
	pthread_cond_destroy(&a->dead_cond);
	free(a);
}

/* ---- handles --------------------------------------------------------------- */

static struct tnfctl_handle *handle_alloc(pid_t pid)
{
	struct tnfctl_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	tnf_handle_init(h);
	h->pid = pid;
	h->state = TNF_H_STOPPED;
	h->attrs.targ_pid = pid;
	h->attrs.trace_buf_state = TNFCTL_BUF_NONE;
	return h;
}

tnfctl_errcode_t tnf_client_new_handle(struct tnfctl_handle **hp)
{
	struct tnfctl_handle *h = handle_alloc(0);
	struct tnf_agent *a = NULL;
	tnfctl_errcode_t err;

	if (!h)
		return TNFCTL_ERR_ALLOCFAIL;
	pthread_mutex_lock(&agent_lock);
	err = agent_get_locked(&a);
	if (!err) {
		h->agent = a;
		slot_add(a, &h->slot, hid_new(a));
	}
	pthread_mutex_unlock(&agent_lock);
	if (err) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return err;
	}
	handle_list_add(h);
	*hp = h;
	return TNFCTL_ERR_NONE;
}

uint32_t tnf_client_new_hid(struct tnfctl_handle *parent)
{
	uint32_t hid;

	pthread_mutex_lock(&agent_lock);
	hid = hid_new(parent->agent);
	pthread_mutex_unlock(&agent_lock);
	return hid;
}

/* A FORK child's handle: the engine bound @hid to it at the FORK it reported. */
tnfctl_errcode_t tnf_client_adopt(struct tnfctl_handle *parent, uint32_t hid, pid_t pid,
				  struct tnfctl_handle **hp)
{
	struct tnfctl_handle *h = handle_alloc(pid);

	if (!h)
		return TNFCTL_ERR_ALLOCFAIL;
	h->open_flags = parent->open_flags;
	h->tty_intr = parent->tty_intr;
	pthread_mutex_lock(&agent_lock);
	h->agent = parent->agent;
	h->agent->users++;
	slot_add(h->agent, &h->slot, hid);
	pthread_mutex_unlock(&agent_lock);
	tnf_client_bind(h, pid, false);
	handle_list_add(h);
	*hp = h;
	return TNFCTL_ERR_NONE;
}

/* The target behind @h, for the resume engine_gone() does. */
void tnf_client_bind(struct tnfctl_handle *h, pid_t pid, bool exec_child)
{
	unsigned long long start = exec_child ? 0 : tnf_proc_starttime(pid);

	pthread_mutex_lock(&agent_lock);
	h->slot.pid = pid;
	h->slot.start = start;
	h->slot.exec_child = exec_child;
	pthread_mutex_unlock(&agent_lock);
}

/* No reply: an id the engine may hold a target for, released as a controller death would. */
void tnf_client_drop_hid(struct tnfctl_handle *h, uint32_t hid)
{
	struct tnf_req req = {.op = TNF_OP_DROP, .hid = hid};

	if (!agent_dead(h->agent))
		tnf_send(h->agent->sock, &req, sizeof(req), -1);
}

void tnf_client_free_handle(struct tnfctl_handle *h)
{
	struct tnf_agent *a = h->agent;

	if (a) {
		handle_list_del(h);
		/* still bound if no close reached the engine (a failed open, an error) */
		if (!h->closed)
			tnf_client_drop_hid(h, h->slot.hid);
		pthread_mutex_lock(&agent_lock);
		slot_remove(a, &h->slot);
		pthread_mutex_unlock(&agent_lock);
	}
	pthread_mutex_destroy(&h->lock);
	tnf_exec_data_free(&h->exec);
	free(h);
	if (a)
		agent_put(a);
}

static void note_lost(uint64_t lost)
{
	uint64_t cur = atomic_load(&lost_seen);

	while (lost > cur && !atomic_compare_exchange_weak(&lost_seen, &cur, lost))
		;
}

/* TNFCTL_DEBUG: why a call to the engine failed (INTERNAL says no more). */
static void link_dbg(const struct tnfctl_handle *h, const char *what)
{
	int e = errno;

	if (getenv("TNFCTL_DEBUG"))
		fprintf(stderr, "libtnfctl: pid %d: %s failed: %s\n", (int)h->pid, what,
			strerror(e));
	errno = e;
}

/* Waits for the reader to finish with a connection that has ended. */
static void wait_dead(struct tnf_agent *a)
{
	int cs;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	pthread_mutex_lock(&agent_lock);
	while (!agent_dead(a))
		pthread_cond_wait(&a->dead_cond, &agent_lock);
	pthread_mutex_unlock(&agent_lock);
	pthread_setcancelstate(cs, NULL);
}

/* A request without waiting; a dead engine's targets are resumed before it fails. */
static tnfctl_errcode_t client_send(struct tnfctl_handle *h, struct tnf_req *req)
{
	struct tnf_agent *a = h->agent;

	req->hid = h->slot.hid;
	if (agent_dead(a) || tnf_send(a->sock, req, sizeof(*req), -1)) {
		int e = agent_dead(a) ? ECONNRESET : errno;

		/* a dead engine's targets are resumed before any call returns */
		if (e == EPIPE || e == ECONNRESET)
			wait_dead(a);
		errno = e;
		link_dbg(h, "request");
		return TNFCTL_ERR_INTERNAL;
	}
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_client_request(struct tnfctl_handle *h, struct tnf_req *req)
{
	/* a reply left over from a call that failed on our side is no answer to this one */
	pthread_mutex_lock(&agent_lock);
	slot_clear_queue(&h->slot);
	pthread_mutex_unlock(&agent_lock);
	return client_send(h, req);
}

/*
 * The next reply from the queue, or INTERNAL once the connection is gone;
 * @fd: receives the descriptor that came with it (-1 if none), else it is
 * closed.  Under agent_lock.
 */
static tnfctl_errcode_t slot_pop_fd(struct tnfctl_handle *h, struct tnf_rep *rep, int *fd)
{
	struct tnf_reply *r = h->slot.q;

	if (!r) {
		errno = ECONNRESET;
		link_dbg(h, "reply");
		return TNFCTL_ERR_INTERNAL;
	}
	h->slot.q = r->next;
	if (!h->slot.q)
		h->slot.qtail = &h->slot.q;
	*rep = r->rep;
	if (fd)
		*fd = r->fd;
	else if (r->fd >= 0)
		close(r->fd);
	free(r);
	return TNFCTL_ERR_NONE;
}

static tnfctl_errcode_t slot_pop(struct tnfctl_handle *h, struct tnf_rep *rep)
{
	return slot_pop_fd(h, rep, NULL);
}

/*
 * Not a cancellation point: a cancel there would leave agent_lock held
 * (POSIX re-takes it).  @fd: as for slot_pop_fd (NULL: closed).
 */
tnfctl_errcode_t tnf_client_wait_fd(struct tnfctl_handle *h, struct tnf_rep *rep, int *fd)
{
	tnfctl_errcode_t err;
	int cs;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	pthread_mutex_lock(&agent_lock);
	while (!h->slot.q && !agent_dead(h->agent))
		pthread_cond_wait(&h->slot.cond, &agent_lock);
	err = slot_pop_fd(h, rep, fd);
	pthread_mutex_unlock(&agent_lock);
	pthread_setcancelstate(cs, NULL);
	return err;
}

/*
 * The wait of a tnfctl_continue was cancelled (ppoll is its only
 * cancellation point; agent_lock is not held there): the target is stopped
 * as for a signal (a STOP is harmless if one went already: the engine
 * ignores it unless the target runs) and its reply taken, so that the
 * handle stays usable (the caller's cleanup unlocks it).  A FORK's child,
 * bound to @child_hid, is let go: no handle will ever be returned for it.
 */
/*
 * The STOP of an interrupted wait: a send that fails for want of memory or
 * buffers (ENOBUFS, ENOMEM) is tried again, else the wait would never end;
 * @retry: here and now, every WAKE_POLL_MS; else the wait's loop tries again.
 * True once sent, or once the connection is gone (its end ends the wait).
 */
static bool send_stop(struct tnfctl_handle *h, struct tnf_req *stop, bool retry)
{
	struct timespec ts = {0, WAKE_POLL_MS * 1000000L};
	int e;

	for (;;) {
		if (client_send(h, stop) == TNFCTL_ERR_NONE)
			return true;
		e = errno;
		if (e == EPIPE || e == ECONNRESET || agent_dead(h->agent))
			return true;
		if (!retry)
			return false;
		nanosleep(&ts, NULL);
	}
}

struct wait_intr {
	struct tnfctl_handle *h;
	uint32_t child_hid;
	/* in memory: the cancellation unwinds with a longjmp */
	bool stop_due; /* a signal of the caller's interrupted the wait */
	bool stop_sent;
};

static void wait_intr_cancelled(void *arg)
{
	struct wait_intr *wi = arg;
	struct tnf_req stop = {.op = TNF_OP_STOP};
	struct tnf_slot *s = &wi->h->slot;
	struct tnf_rep rep;

	pthread_mutex_lock(&agent_lock);
	s->sleeping = false;
	pthread_mutex_unlock(&agent_lock);
	send_stop(wi->h, &stop, true);
	if (tnf_client_wait(wi->h, &rep) == TNFCTL_ERR_NONE && wi->child_hid &&
	    rep.event == TNFCTL_EVENT_FORK && (rep.flags & TNF_REPF_CHILD_BOUND))
		tnf_client_drop_hid(wi->h, wi->child_hid);
}

/*
 * tnfctl_continue's wait: every signal blocked on entry (by the caller of
 * this), then asleep in ppoll() with the caller's own mask (and wake_sig):
 * a signal that arrives at any point after entry interrupts the wait (ppoll
 * is never restarted, whatever SA_RESTART says), with no window for a lost
 * wake-up.  The first such signal asks the engine to stop the target; its
 * reply (EINTR, or an event that came first) ends the wait.
 */
tnfctl_errcode_t tnf_client_wait_intr(struct tnfctl_handle *h, const sigset_t *callers,
				      uint32_t child_hid, struct tnf_rep *rep)
{
	struct timespec poll_ts = {0, WAKE_POLL_MS * 1000000L}, zero = {0, 0};
	struct timespec look_ts = {WAKE_LOOK_S, 0};
	struct tnf_req stop = {.op = TNF_OP_STOP};
	struct wait_intr wi = {.h = h, .child_hid = child_hid};
	struct tnf_slot *s = &h->slot;
	bool by_sig;
	sigset_t mask, only;
	tnfctl_errcode_t err;
	int r, e;

	pthread_mutex_lock(&agent_lock);
	s->waiter = pthread_self();
	pthread_cleanup_push(wait_intr_cancelled, &wi);
	while (!s->q && !agent_dead(h->agent)) {
		/*
		 * Woken by our signal while it is ours and the caller does not
		 * block it (blocked, it is the caller's to take: a signalfd, a
		 * sigwait); else a look every WAKE_POLL_MS.
		 */
		by_sig = wake_sig_ours() && !sigismember(callers, wake_sig);
		mask = *callers;
		if (by_sig)
			sigdelset(&mask, wake_sig);
		s->sleeping = by_sig;
		pthread_mutex_unlock(&agent_lock);
		r = ppoll(NULL, 0, by_sig ? &look_ts : &poll_ts, &mask);
		e = errno;
		pthread_mutex_lock(&agent_lock);
		s->sleeping = false;
		/* nothing queued: not our wake-up, a signal of the caller's */
		if (r < 0 && e == EINTR && !s->q && !agent_dead(h->agent))
			wi.stop_due = true;
		if (wi.stop_due && !wi.stop_sent && !s->q && !agent_dead(h->agent)) {
			pthread_mutex_unlock(&agent_lock);
			/* not sent (no buffer): again at the next look */
			wi.stop_sent = send_stop(h, &stop, false);
			pthread_mutex_lock(&agent_lock);
		}
	}
	pthread_cleanup_pop(0);
	err = slot_pop(h, rep);
	pthread_mutex_unlock(&agent_lock);
	/* A wake-up sent as the wait ended is still pending: take it, not the next wait. */
	if (wake_sig) {
		e = errno; /* ECONNRESET: the engine is gone (slot_pop) */
		sigemptyset(&only);
		sigaddset(&only, wake_sig);
		while (sigtimedwait(&only, NULL, &zero) >= 0)
			;
		errno = e;
	}
	return err;
}

/*
 * A signal pending that @callers does not block and catches (not our
 * wake-up): a wait would end EINTR.  One ignored, by default too (SIGCHLD,
 * SIGWINCH), is dropped there, and a default action ends or stops us.
 */
bool tnf_client_signal_pending(const sigset_t *callers)
{
	struct sigaction sa;
	sigset_t p;
	int sig;

	if (sigpending(&p))
		return false;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&p, sig) == 1 && !sigismember(callers, sig) &&
		    !(sig == wake_sig && wake_sig_ours()) && !sigaction(sig, NULL, &sa) &&
		    ((sa.sa_flags & SA_SIGINFO) ||
		     (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)))
			return true;
	return false;
}

tnfctl_errcode_t tnf_client_wait(struct tnfctl_handle *h, struct tnf_rep *rep)
{
	return tnf_client_wait_fd(h, rep, NULL);
}

tnfctl_errcode_t tnf_client_call(struct tnfctl_handle *h, struct tnf_req *req, struct tnf_rep *rep)
{
	tnfctl_errcode_t err = tnf_client_request(h, req);

	while (!err) {
		err = tnf_client_wait(h, rep);
		if (!err && rep->kind == TNF_REP_DONE)
			break;
	}
	return err;
}

TNF_API uint64_t tnfctl_events_lost(void)
{
	struct tnf_req req = {.op = TNF_OP_LOST};
	struct tnfctl_handle h;
	struct tnf_rep rep;
	struct tnf_agent *a;

	/* Ask a live engine for a fresh count, on an id of no handle. */
	pthread_mutex_lock(&agent_lock);
	a = cur && !agent_dead(cur) ? cur : NULL;
	if (a) {
		a->users++;
		memset(&h, 0, sizeof(h));
		h.agent = a;
		slot_add(a, &h.slot, hid_new(a));
	}
	pthread_mutex_unlock(&agent_lock);
	if (!a)
		return atomic_load(&lost_seen);
	if (tnf_client_call(&h, &req, &rep) == TNFCTL_ERR_NONE)
		note_lost(rep.lost);
	pthread_mutex_lock(&agent_lock);
	slot_remove(a, &h.slot);
	pthread_mutex_unlock(&agent_lock);
	agent_put(a);
	return atomic_load(&lost_seen);
}
