// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reaching the engine: the running one of our user and privilege set,
 * found by name and its credentials checked; else tnfctl-engine
 * ($TNFCTL_ENGINE, else where the build put it) started by exec with our
 * capabilities.  Either way its start-up answer (HELLO with the wire's
 * version, then ready or why not) is awaited within a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "proto.h"

/* Out of descriptors (RLIMIT_NOFILE) or memory is ALLOCFAIL, not INTERNAL. */
static tnfctl_errcode_t socketpair_cloexec(int sv[2])
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
static int engine_spawn(const char *path, const char *name, int sock, pid_t *pidp)
{
	char name_arg[TNF_ENGINE_NAME_MAX + 16];
	/* its path: a wrong $TNFCTL_ENGINE's own messages then name it, not us */
	char *const argv[] = {(char *)path, name_arg, NULL};
	posix_spawn_file_actions_t fa;
	struct caps_saved caps;
	posix_spawnattr_t at;
	sigset_t none, all;
	int rc, fd = sock;
	char **env;

	/*
	 * The name it is to listen on, as we computed it: the engine's own
	 * view of its program would differ under a wrapper ($TNFCTL_ENGINE
	 * running it under valgrind), and callers would never find it.
	 */
	if (name)
		snprintf(name_arg, sizeof(name_arg), "--name=%s", name + 1);
	else
		snprintf(name_arg, sizeof(name_arg), "--private");
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
	} else if (!tnf_rep_received(&hello, r = tnf_recv(sock, &hello, sizeof(hello), NULL))) {
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

/* The engine's ready reply (its pid) or why it cannot start, after HELLO. */
static tnfctl_errcode_t engine_ready(int sock, const char *path, pid_t *engine_pid)
{
	struct tnf_rep rep;
	ssize_t n;

	n = tnf_recv(sock, &rep, sizeof(rep), NULL);
	if (!tnf_rep_received(&rep, n) || rep.err != TNFCTL_ERR_NONE) {
		if (!tnf_rep_received(&rep, n)) {
			engine_failed(path, "ended before its first reply",
				      n < 0   ? errno
				      : n > 0 ? EPROTO
					      : ECONNRESET);
			return TNFCTL_ERR_INTERNAL;
		}
		/* The BPF load's errno (EPERM: no privilege), for the caller's message. */
		errno = rep.exit_status > 0 ? rep.exit_status : EPERM;
		return (tnfctl_errcode_t)rep.err;
	}
	*engine_pid = rep.pid > 0 ? rep.pid : 0;
	return TNFCTL_ERR_NONE;
}

static bool debug_on(void)
{
	return getenv("TNFCTL_DEBUG") != NULL;
}

#define RUNNING_TIMEOUT_S 5

/*
 * The running engine of our user and privilege set, found by its name
 * (engine_name.c).  0: connected, *@sockp and *@pidp set; 1: none we may
 * use (start one); -1: it went as we connected (an engine at its end of
 * life closes its name first): look again.
 */
static int engine_connect(const char *name, int len, int *sockp, pid_t *pidp)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timespec ts;
	struct tnf_rep rep;
	long long deadline;
	pid_t pid = 0;
	int s, e, i, wait_s;
	ssize_t n;

	memcpy(a.sun_path, name, len);
	/*
	 * Not blocking: a full backlog (an engine swamped, or a squatter's
	 * listen(0) with its own connection queued) is EAGAIN at once, and we
	 * start our own rather than wait for ever.
	 */
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return 1;
	if (connect(s, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + len) ||
	    fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK)) {
		close(s); /* ECONNREFUSED: nobody holds the name */
		return 1;
	}
	e = tnf_peer_check(s, &pid);
	if (e) {
		/* Another user's (or privilege set's) process holds the name. */
		if (debug_on())
			fprintf(stderr,
				"libtnfctl: @%s: not ours (%s): starting a private engine\n",
				name + 1, strerror(-e));
		close(s);
		return 1;
	}
	/*
	 * A running engine answers at once; one that does not (stopped, or
	 * stuck) is left for one of our own, after RUNNING_TIMEOUT_S (or
	 * $TNFCTL_ENGINE_TIMEOUT if shorter), and we say so.
	 */
	wait_s = engine_timeout_s() < RUNNING_TIMEOUT_S ? engine_timeout_s() : RUNNING_TIMEOUT_S;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 + wait_s * 1000LL;
	for (i = 0; i < 2; i++) {
		if (!poll_until(s, deadline)) {
			fprintf(stderr,
				"libtnfctl: the running engine (pid %d) did not answer in %d s: "
				"starting another\n",
				(int)pid, wait_s);
			close(s);
			return 1;
		}
		n = tnf_recv(s, &rep, sizeof(rep), NULL);
		if (!tnf_rep_received(&rep, n)) {
			close(s);
			return n == 0 || (n < 0 && errno == ECONNRESET) ? -1 : 1;
		}
		if (i == 0 && (rep.kind != TNF_REP_HELLO || rep.exit_status != TNF_PROTO_VERSION)) {
			close(s);
			return 1;
		}
	}
	if (rep.kind != TNF_REP_DONE || rep.err || rep.pid != pid) {
		close(s);
		return 1;
	}
	*sockp = s;
	*pidp = pid;
	return 0;
}

/*
 * A caller in a pid namespace below the initial one: its pids are not the
 * ones the kernel's BPF programs see (NSpid has more than one), so no
 * event would ever match its targets.  Refused, not hung.
 */
static bool in_child_pidns(void)
{
	char line[256];
	bool nested = false;
	FILE *f = fopen("/proc/self/status", "re");
	int a, b;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "NSpid: %d %d", &a, &b) == 2) {
			nested = true;
			break;
		}
	if (f)
		fclose(f);
	return nested;
}

/*
 * The engine, connected: the running one of our user and privilege set if
 * there is one, else a new one.  *@sock is our end, *@engine_pid the
 * engine proper (0 if not known).  On an error no engine of ours is left
 * and errno says why (the BPF load's errno for ACCES/KERNEL).
 */
tnfctl_errcode_t tnf_engine_start(int *sock, pid_t *engine_pid)
{
	const char *path = engine_path();
	char name[TNF_ENGINE_NAME_MAX];
	tnfctl_errcode_t err;
	int sv[2], e, len, i, r = 1;
	const char *what;
	pid_t pid;

	if (in_child_pidns()) {
		fprintf(stderr, "libtnfctl: a caller in a pid namespace other than the initial one "
				"is not supported: its pids are not the kernel's\n");
		errno = EOPNOTSUPP;
		return TNFCTL_ERR_INTERNAL;
	}
	/* TNFCTL_DEBUG: the engine's trace is this caller's alone (and its stderr not held) */
	len = secure_getenv("TNFCTL_ENGINE_PRIVATE") || debug_on() ? -1
								   : tnf_engine_name(name, path);
	for (i = 0; len > 0 && i < 3; i++) {
		r = engine_connect(name, len, sock, engine_pid);
		if (r >= 0)
			break;
	}
	if (r == 0)
		return TNFCTL_ERR_NONE;
	err = socketpair_cloexec(sv);
	if (err)
		return err;
	e = engine_spawn(path, len > 0 ? name : NULL, sv[1], &pid);
	close(sv[1]);
	if (e) {
		close(sv[0]);
		engine_failed(path, "cannot be started", e);
		return e == ENOMEM || e == EAGAIN || e == EMFILE || e == ENFILE
			       ? TNFCTL_ERR_ALLOCFAIL
			       : TNFCTL_ERR_INTERNAL;
	}
	e = engine_hello(sv[0], pid, &what);
	if (e) {
		close(sv[0]);
		engine_failed(path, what, e);
		return TNFCTL_ERR_INTERNAL;
	}
	err = engine_ready(sv[0], path, engine_pid);
	if (err) {
		close(sv[0]);
		return err;
	}
	*sock = sv[0];
	return TNFCTL_ERR_NONE;
}
