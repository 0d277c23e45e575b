// SPDX-License-Identifier: BSD-2-Clause
/*
 * Client side of the engine (tnfctl-engine, src/engine/): starts it by exec
 * on the first open, hands it one socket per handle, and lets it go when
 * the last handle is closed.
 *
 * All ptrace requests must come from the tracing thread, and waitpid() on
 * tracees must not steal the application's own children, so the tracing is
 * done by a helper process of our own (it also outlives a killed controller
 * long enough to resume its targets, see src/engine/tracer.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/capability.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
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

/*
 * A helper and the handles it serves.  A new open goes to `cur`; if that
 * helper died (killed by someone), a new one is started, and the old one's
 * handles keep their struct until they are closed.
 */
struct tnf_agent {
	int sock;
	int engine_pidfd; /* the engine proper (its first reply names it), or -1 */
	unsigned int users;
};

static pthread_mutex_t agent_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tnf_agent *cur;
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
 * Our sockets, closed in the child of a fork() that does not exec: a child
 * holding them would hide the controller's death from the helper (and keep
 * its targets stopped) for as long as it lives.
 */
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int *our_fds;
static size_t nour_fds, cap_fds;

static void atfork_prepare(void)
{
	pthread_mutex_lock(&fd_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&fd_lock);
}

static void atfork_child(void)
{
	size_t i;

	for (i = 0; i < nour_fds; i++)
		close(our_fds[i]);
	nour_fds = 0;
	/* The child starts afresh: no helper, no handle (another thread may have held the lock). */
	cur = NULL;
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

/* Out of descriptors (RLIMIT_NOFILE) or memory is ALLOCFAIL, not INTERNAL. */
tnfctl_errcode_t tnf_client_socketpair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0)
		return TNFCTL_ERR_NONE;
	if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS)
		return TNFCTL_ERR_ALLOCFAIL;
	return TNFCTL_ERR_INTERNAL;
}

/* $TNFCTL_ENGINE (ignored in a set-id program), else where the build put it. */
static const char *engine_path(void)
{
	const char *e = secure_getenv("TNFCTL_ENGINE");

	return e && *e ? e : TNFCTL_ENGINE_PATH;
}

/*
 * Why the engine could not be started, on stderr whatever TNFCTL_DEBUG
 * says: an installation without its engine is broken, and INTERNAL alone
 * would not say where to look.  errno is left as @e.
 */
static void engine_failed(const char *path, const char *what, int e)
{
	fprintf(stderr, "libtnfctl: the engine %s %s: %s\n", path, what, strerror(e));
	errno = e;
}

/*
 * An exec drops the capabilities of a caller that is not root (set by file
 * capabilities, or kept across setuid): the engine would lack CAP_BPF and
 * the rest.  Ambient capabilities carry them across the exec, for this
 * thread's spawn only (ambient sets are per thread).  Fills @saved with
 * what to restore.  The engine keeps no more than our effective set.
 */
struct caps_saved {
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];
	uint64_t raised; /* ambient capabilities raised here */
};

static void ambient_raise(struct caps_saved *sv)
{
	struct __user_cap_data_struct d[2];
	uint64_t eff;
	int cap;

	memset(sv, 0, sizeof(*sv));
	sv->h.version = _LINUX_CAPABILITY_VERSION_3;
	if (geteuid() == 0 || syscall(SYS_capget, &sv->h, sv->d))
		return;
	eff = sv->d[0].effective | (uint64_t)sv->d[1].effective << 32;
	if (!eff)
		return;
	memcpy(d, sv->d, sizeof(d));
	d[0].inheritable |= d[0].effective;
	d[1].inheritable |= d[1].effective;
	if (syscall(SYS_capset, &sv->h, d))
		return;
	for (cap = 0; cap < 64; cap++)
		if ((eff >> cap & 1) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 0 &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) == 0)
			sv->raised |= 1ULL << cap;
}

static void ambient_restore(struct caps_saved *sv)
{
	int cap;

	if (!sv->h.version || geteuid() == 0)
		return;
	for (cap = 0; cap < 64; cap++)
		if (sv->raised >> cap & 1)
			prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, cap, 0, 0);
	syscall(SYS_capset, &sv->h, sv->d);
}

/*
 * Our environment without TNFCTL_ENGINE: a program there that is itself a
 * libtnfctl caller must not start itself again, without end.  The strings
 * stay ours; the array is the caller's to free.
 */
static char **engine_env(void)
{
	size_t n = 0, k = 0, i;
	char **env;

	while (environ && environ[n])
		n++;
	env = calloc(n + 1, sizeof(*env));
	for (i = 0; env && i < n; i++)
		if (strncmp(environ[i], "TNFCTL_ENGINE=", 14))
			env[k++] = environ[i];
	return env;
}

/*
 * Starts the engine by exec, its end of the socket as descriptor 3, with
 * no signal blocked or ignored, its pid in @pidp.  The engine's first
 * process forks the engine proper and exits (tnfctl-engine's main), so that
 * the engine is not our child: the application never sees its SIGCHLD nor
 * has to reap it.  Returns 0, or an errno.
 */
static int engine_spawn(const char *path, int sock, pid_t *pidp)
{
	char *const argv[] = {"tnfctl-engine", NULL};
	posix_spawn_file_actions_t fa;
	struct caps_saved caps;
	posix_spawnattr_t at;
	sigset_t none, all;
	int rc, fd = sock;
	char **env;

	/* dup2 onto itself would keep close-on-exec: move it first */
	if (sock == 3 && (fd = fcntl(sock, F_DUPFD_CLOEXEC, 4)) < 0)
		return errno;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	rc = posix_spawn_file_actions_adddup2(&fa, fd, 3);
	/* not the caller's input: an engine reads nothing but its socket */
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&at, &all);
	env = rc ? NULL : engine_env();
	if (!rc && !env)
		rc = ENOMEM;
	if (!rc) {
		ambient_raise(&caps);
		rc = posix_spawn(pidp, path, &fa, &at, argv, env);
		ambient_restore(&caps);
	}
	free(env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (fd != sock)
		close(fd);
	return rc;
}

/* Seconds the engine has for its HELLO: $TNFCTL_ENGINE_TIMEOUT (1 to 3600), else 30. */
static int engine_timeout_s(void)
{
	const char *s = secure_getenv("TNFCTL_ENGINE_TIMEOUT");
	long v = s && *s ? strtol(s, NULL, 10) : 0;

	return v >= 1 && v <= 3600 ? (int)v : 30;
}

/* Waits for @fd to be readable until @deadline (ms, CLOCK_MONOTONIC): 1, 0 at the deadline. */
static int poll_until(int fd, long long deadline)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct timespec ts;
	long long left;
	int n;

	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		left = deadline - (ts.tv_sec * 1000LL + ts.tv_nsec / 1000000);
		n = poll(&p, 1, left > 0 ? (int)left : 0);
	} while (n < 0 && errno == EINTR); /* the caller's signals do not move the deadline */
	return n > 0;
}

/*
 * The engine's first packet, HELLO with our protocol version, and the exit
 * of its first process (which forks the engine proper), both within
 * engine_timeout_s(): a program there that never answers (not an engine,
 * or one stuck) must not hang the open.  It is killed then, through a
 * pidfd; a process it left behind holding the socket is not ours to find.
 * After HELLO the engine's start-up (the BPF load) is its own: unbounded.
 * 0, or an errno; @what says which step failed.
 */
static int engine_hello(int sock, pid_t pid, const char **what)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct timespec ts;
	struct tnf_rep hello;
	long long deadline;
	int e = 0, st;
	ssize_t r;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 + engine_timeout_s() * 1000LL;
	*what = "ended before its first reply";
	if (!poll_until(sock, deadline)) {
		*what = "did not answer in time (killed; TNFCTL_ENGINE_TIMEOUT)";
		e = ETIMEDOUT;
	} else if ((r = tnf_recv(sock, &hello, sizeof(hello), NULL)) != (ssize_t)sizeof(hello)) {
		if (r > 0)
			*what = "is not a tnfctl-engine (its first packet)";
		e = r < 0 ? errno : r > 0 ? EPROTO : ECONNRESET;
	} else if (hello.kind != TNF_REP_HELLO) {
		*what = "is not a tnfctl-engine (its first packet)";
		e = EPROTO;
	} else if (hello.exit_status != TNF_PROTO_VERSION) {
		*what = "is of another release (its protocol version)";
		e = EPROTO;
	} else if (pidfd >= 0 && !poll_until(pidfd, deadline)) {
		*what = "did not start its engine process in time (killed; TNFCTL_ENGINE_TIMEOUT)";
		e = ETIMEDOUT;
	}
	if (e && pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	if (pidfd >= 0)
		close(pidfd);
	/* ECHILD if the application reaped it first */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return e;
}

static tnfctl_errcode_t agent_start(void)
{
	struct tnf_agent *a = calloc(1, sizeof(*a));
	const char *path = engine_path();
	tnfctl_errcode_t err;
	const char *what;
	struct tnf_rep rep;
	int sv[2], e;
	ssize_t n;
	pid_t pid;

	if (!a)
		return TNFCTL_ERR_ALLOCFAIL;
	err = tnf_client_socketpair(sv);
	if (err) {
		free(a);
		return err;
	}
	e = engine_spawn(path, sv[1], &pid);
	close(sv[1]);
	if (e) {
		close(sv[0]);
		free(a);
		engine_failed(path, "cannot be started", e);
		return e == ENOMEM || e == EAGAIN || e == EMFILE || e == ENFILE
			       ? TNFCTL_ERR_ALLOCFAIL
			       : TNFCTL_ERR_INTERNAL;
	}
	e = engine_hello(sv[0], pid, &what);
	if (e) {
		close(sv[0]);
		free(a);
		engine_failed(path, what, e);
		return TNFCTL_ERR_INTERNAL;
	}
	n = tnf_recv(sv[0], &rep, sizeof(rep), NULL);
	if (n != (ssize_t)sizeof(rep) || rep.err != TNFCTL_ERR_NONE) {
		close(sv[0]);
		free(a);
		if (n != (ssize_t)sizeof(rep)) {
			engine_failed(path, "ended before its first reply",
				      n < 0 ? errno : ECONNRESET);
			return TNFCTL_ERR_INTERNAL;
		}
		/* The BPF load's errno (EPERM: no privilege), for the caller's message. */
		errno = rep.exit_status > 0 ? rep.exit_status : EPERM;
		return (tnfctl_errcode_t)rep.err;
	}
	a->sock = sv[0];
	a->engine_pidfd = rep.pid > 0 ? (int)syscall(SYS_pidfd_open, rep.pid, 0) : -1;
	fd_register(a->sock);
	cur = a;
	return TNFCTL_ERR_NONE;
}

/* The helper closed its end: it died (nothing else makes it go while we hold handles). */
static bool agent_dead(const struct tnf_agent *a)
{
	struct pollfd p = {.fd = a->sock, .events = POLLIN};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* The current helper, started if needed, with one more user.  Under agent_lock. */
static tnfctl_errcode_t agent_get_locked(struct tnf_agent **ap)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;

	if (cur && agent_dead(cur))
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
	pthread_mutex_lock(&agent_lock);
	if (--a->users == 0) {
		struct tnf_req quit = {.op = TNF_OP_QUIT};

		tnf_send(a->sock, &quit, sizeof(quit), -1);
		fd_close(a->sock);
		if (a->engine_pidfd >= 0)
			close(a->engine_pidfd);
		if (cur == a)
			cur = NULL;
		free(a);
	}
	pthread_mutex_unlock(&agent_lock);
}

static struct tnfctl_handle *handle_alloc(int sock, pid_t pid)
{
	struct tnfctl_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	tnf_handle_init(h);
	h->sock = sock;
	h->pid = pid;
	h->state = TNF_H_STOPPED;
	h->attrs.targ_pid = pid;
	h->attrs.trace_buf_state = TNFCTL_BUF_NONE;
	return h;
}

tnfctl_errcode_t tnf_client_new_handle(struct tnfctl_handle **hp)
{
	struct tnf_req req = {.op = TNF_OP_NEW_HANDLE};
	struct tnfctl_handle *h = NULL;
	struct tnf_agent *a = NULL;
	tnfctl_errcode_t err;
	int sv[2] = {-1, -1};

	pthread_mutex_lock(&agent_lock);
	err = agent_get_locked(&a);
	if (!err)
		err = tnf_client_socketpair(sv);
	if (!err && !(h = handle_alloc(sv[0], 0)))
		err = TNFCTL_ERR_ALLOCFAIL;
	if (!err && tnf_send(a->sock, &req, sizeof(req), sv[1]))
		err = TNFCTL_ERR_INTERNAL;
	pthread_mutex_unlock(&agent_lock);
	if (sv[1] >= 0)
		close(sv[1]);
	if (err) {
		if (sv[0] >= 0)
			close(sv[0]);
		free(h);
		if (a)
			agent_put(a);
		return err;
	}
	fd_register(sv[0]);
	h->agent = a;
	*hp = h;
	return TNFCTL_ERR_NONE;
}

/* A child handle of @parent's: its helper already holds the other end of @sock. */
tnfctl_errcode_t tnf_client_adopt(struct tnfctl_handle *parent, int sock, pid_t pid,
				  struct tnfctl_handle **hp)
{
	struct tnfctl_handle *h = handle_alloc(sock, pid);

	if (!h)
		return TNFCTL_ERR_ALLOCFAIL;
	h->start = tnf_proc_starttime(pid);
	fd_register(sock);
	pthread_mutex_lock(&agent_lock);
	h->agent = parent->agent;
	h->agent->users++;
	h->open_flags = parent->open_flags;
	h->tty_intr = parent->tty_intr;
	pthread_mutex_unlock(&agent_lock);
	*hp = h;
	return TNFCTL_ERR_NONE;
}

void tnf_client_free_handle(struct tnfctl_handle *h)
{
	struct tnf_agent *a = h->agent;

	fd_close(h->sock);
	pthread_mutex_destroy(&h->lock);
	tnf_exec_data_free(&h->exec);
	free(h);
	if (a)
		agent_put(a);
}

void tnf_client_note_lost(uint64_t lost)
{
	uint64_t cur = atomic_load(&lost_seen);

	while (lost > cur && !atomic_compare_exchange_weak(&lost_seen, &cur, lost))
		;
}

/* TNFCTL_DEBUG: why a call to the helper failed (INTERNAL says no more). */
static void link_dbg(const struct tnfctl_handle *h, const char *what, ssize_t n)
{
	int e = errno;

	if (getenv("TNFCTL_DEBUG"))
		fprintf(stderr, "libtnfctl: pid %d: %s %s\n", (int)h->pid, what,
			n == 0	? "failed: the helper closed the handle"
			: n > 0 ? "failed: short packet"
				: strerror(e));
	errno = e;
}

/*
 * The engine died under @h (SIGKILL, the OOM killer): the kernel detached
 * the target, but a SIGSTOP that BPF had sent and the engine never
 * collected turns into a job-control stop that nobody ends (DESIGN section
 * 3).  Once the engine is gone for sure (its pidfd; its BPF links went with
 * it), the target is resumed, unless it was due to die with the engine (an
 * exec_open'd one).  The pidfd is checked against the start time recorded
 * at the open: never another process that got the pid.
 */
static void engine_gone(struct tnfctl_handle *h)
{
	struct tnf_agent *a = h->agent;
	struct pollfd p = {.fd = a ? a->engine_pidfd : -1, .events = POLLIN};
	int fd;

	if (!a || p.fd < 0 || h->exec_child || h->pid <= 0 || !h->start)
		return;
	/* closed the socket but alive: it released the target itself */
	if (poll(&p, 1, 5000) != 1)
		return;
	fd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	if (fd >= 0 && tnf_proc_starttime(h->pid) == h->start)
		syscall(SYS_pidfd_send_signal, fd, SIGCONT, NULL, 0);
	if (fd >= 0)
		close(fd);
}

tnfctl_errcode_t tnf_client_wait(struct tnfctl_handle *h, struct tnf_rep *rep)
{
	ssize_t n = tnf_recv(h->sock, rep, sizeof(*rep), NULL);

	if (n != (ssize_t)sizeof(*rep)) {
		if (n >= 0)
			errno = n ? EPROTO : ECONNRESET;
		if (n == 0 || errno == ECONNRESET) {
			int e = errno;

			engine_gone(h);
			errno = e;
		}
		link_dbg(h, "reply", n);
		return TNFCTL_ERR_INTERNAL;
	}
	tnf_client_note_lost(rep->lost);
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_client_send(struct tnfctl_handle *h, const struct tnf_req *req, int fd)
{
	if (tnf_send(h->sock, req, sizeof(*req), fd)) {
		int e = errno;

		if (e == EPIPE || e == ECONNRESET)
			engine_gone(h);
		errno = e;
		link_dbg(h, "request", -1);
		return TNFCTL_ERR_INTERNAL;
	}
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_client_call(struct tnfctl_handle *h, const struct tnf_req *req, int fd,
				 struct tnf_rep *rep)
{
	tnfctl_errcode_t err;

	if (tnf_client_send(h, req, fd))
		return TNFCTL_ERR_INTERNAL;
	do
		err = tnf_client_wait(h, rep);
	while (err == TNFCTL_ERR_NONE && rep->kind != TNF_REP_DONE);
	return err;
}

TNF_API uint64_t tnfctl_events_lost(void)
{
	struct tnf_req req = {.op = TNF_OP_LOST};
	struct tnf_rep rep;
	int sv[2];

	/* Ask a live helper for a fresh count on a throwaway handle socket. */
	pthread_mutex_lock(&agent_lock);
	if (cur && tnf_client_socketpair(sv) == 0) {
		struct tnf_req nh = {.op = TNF_OP_NEW_HANDLE};

		if (tnf_send(cur->sock, &nh, sizeof(nh), sv[1]) == 0 &&
		    tnf_send(sv[0], &req, sizeof(req), -1) == 0 &&
		    tnf_recv(sv[0], &rep, sizeof(rep), NULL) == (ssize_t)sizeof(rep))
			tnf_client_note_lost(rep.lost);
		close(sv[0]);
		close(sv[1]);
	}
	pthread_mutex_unlock(&agent_lock);
	return atomic_load(&lost_seen);
}
