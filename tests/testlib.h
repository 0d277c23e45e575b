/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * testlib.h - shared helpers of the libtnfctl tests (included by each
 * tests/test_*.c; everything here is static).
 *
 * Every test binary:
 *  - makes itself a child subreaper, so everything it starts, directly or
 *    not (the library's tnfctl-engine, targets, their children), stays in
 *    its process subtree;
 *  - runs each test between tl_setup/tl_teardown: the teardown kills every
 *    process the test registered, joins its threads, closes its handles and
 *    then requires the whole subtree to end (the tracer included, as the
 *    last handle is closed); whatever is left is reported as a failure and
 *    then killed and reaped;
 *  - ends with TL_FINAL_TEST, which asserts that no child process remains;
 *  - has a watchdog: a test running longer than TL_TEST_TIMEOUT seconds
 *    (default 120, 360 with SANITIZE set) gets its processes killed, so a
 *    blocked tnfctl call returns and the test fails instead of hanging;
 *  - prints each test's run time and time limit after it ("# tl-time:"),
 *    which tests/run-tests checks against half the limit.
 *
 * Nothing here sleeps to synchronise: targets report over pipes, exits are
 * seen through pidfds and waitpid, and every wait has a timeout
 * (TL_TIMEOUT_MS, default 20000, 60000 with SANITIZE set) that turns a
 * hang into a failure.
 */
#ifndef TESTLIB_H
#define TESTLIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

#include "helpers/tl_btf.h"
#include "helpers/tl_pidfd_broker.h"

extern char **environ;

#define TL_MAX_PIDS    4096
#define TL_MAX_HANDLES 64
#define TL_MAX_THREADS 32
#define TL_MAX_PATHS   8
#define TL_MAX_PROCS   16
#define TL_MAX_TASKS   256

#define TL_LOC const char *file, int line
#define TL_AT  __FILE__, __LINE__
#define TL_FAILF(...)                                                                              \
	do {                                                                                       \
		print_error("ERROR: " __VA_ARGS__);                                                \
		print_error("\n");                                                                 \
		_fail(file, line);                                                                 \
	} while (0)

/* A target process and the pipes to talk to it. */
struct tl_proc {
	int used;
	pid_t pid;
	int pidfd;
	int cmd_w;   /* test -> target commands */
	int reply_r; /* target -> test replies */
	int t_cmd_r; /* the target's ends, until handed over */
	int t_reply_w;
	char line[4096]; /* last line read */
	char buf[8192];
	size_t len;
};

struct tl_state {
	pthread_mutex_t lock;
	/* processes a test started (killed in the teardown) */
	pid_t pids[TL_MAX_PIDS];
	int pidfds[TL_MAX_PIDS];
	char pidfd_lent[TL_MAX_PIDS]; /* handed out by tl_pidfd_of: kept until the teardown */
	int npids;
	/* handles a test holds (closed with KILL in the teardown) */
	tnfctl_handle_t *handles[TL_MAX_HANDLES];
	int nhandles;
	/* threads a test started (joined in the teardown) */
	pthread_t threads[TL_MAX_THREADS];
	int nthreads;
	/* files and empty directories a test made (removed in the teardown) */
	char paths[TL_MAX_PATHS][PATH_MAX];
	int npaths;
	struct tl_proc procs[TL_MAX_PROCS];
	/* watchdog */
	pthread_t wd_thread;
	int wd_ready;
	pthread_cond_t wd_cond;
	int wd_armed;
	int wd_stage;
	struct timespec wd_deadline;
	volatile int wd_fired;
	/* this test's start and time limit (the watchdog's, extensions included) */
	long long t_start_ms;
	long long t_limit_ms;
	/* settings */
	int timeout_ms;
	int test_timeout_s;
	int inited;
	/* tnfctl-engine helpers reaped dead of a signal other than SIGKILL */
	int tracer_crashes;
	/* build artefacts (absolute) */
	char bdir[PATH_MAX];
	char target[PATH_MAX];
	char threads_prog[PATH_MAX];
	char ctor[PATH_MAX];
	char static_prog[PATH_MAX];
	char ctl[PATH_MAX];
	char probe[PATH_MAX];
	char libctl[PATH_MAX];
	char follow[PATH_MAX];
	char demo[PATH_MAX];
};

static struct tl_state tl __attribute__((unused)) = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ------------------------------------------------------------------ */
/* small utilities */

static inline long long tl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * valgrind 3.19 (make memcheck) fails pidfd_open and pidfd_send_signal
 * with ENOSYS.  tl_group_setup then starts tests/helpers/tl_pidfd_broker,
 * which runs natively and makes them for us: its socket is tl_broker_sock.
 */
static int tl_broker_sock __attribute__((unused)) = -1;

/* One request to the broker; returns what the syscall returned, errno set. */
static inline int tl_broker_call(int op, pid_t pid, int pidfd, int sig)
{
	struct tl_broker_req req = {.op = op, .pid = pid, .sig = sig};
	struct tl_broker_rep rep;
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} cb;
	struct iovec iov = {.iov_base = &req, .iov_len = sizeof(req)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb.buf};
	struct cmsghdr *c;
	int sv[2], fds[2], nfds = op == TL_BROKER_KILL ? 2 : 1, fd = -1;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	fds[0] = sv[1];
	fds[1] = pidfd;
	memset(&cb, 0, sizeof(cb));
	m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	do
		n = sendmsg(tl_broker_sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	close(sv[1]);
	if (n != sizeof(req)) {
		close(sv[0]);
		return -1;
	}
	iov.iov_base = &rep;
	iov.iov_len = sizeof(rep);
	m.msg_controllen = sizeof(cb.buf);
	do
		n = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	close(sv[0]);
	for (c = CMSG_FIRSTHDR(&m); n > 0 && c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (n != sizeof(rep)) {
		if (fd >= 0)
			close(fd);
		errno = EIO;
		return -1;
	}
	if (rep.ret) {
		errno = rep.err;
		return -1;
	}
	return op == TL_BROKER_OPEN ? fd : 0;
}

static inline int tl_pidfd_open(pid_t pid)
{
	if (tl_broker_sock >= 0)
		return tl_broker_call(TL_BROKER_OPEN, pid, -1, 0);
	return syscall(SYS_pidfd_open, pid, 0);
}

static inline int tl_pidfd_kill(int pidfd, int sig)
{
	if (tl_broker_sock >= 0)
		return tl_broker_call(TL_BROKER_KILL, 0, pidfd, sig);
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Waits up to @timeout_ms for the process behind @pidfd to exit (be a zombie or gone). */
static inline int tl_pidfd_wait(int pidfd, int timeout_ms)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
	long long end = tl_now_ms() + timeout_ms;

	for (;;) {
		int left = end - tl_now_ms();
		int n;

		if (left < 0)
			left = 0;
		n = poll(&pfd, 1, left);
		if (n > 0)
			return 0;
		if (n == 0)
			return -1;
		if (errno != EINTR)
			return -1;
	}
}

static inline int tl_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

static inline int tl_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* /proc: process and thread states */

/* State letter of one thread ('t' ptrace-stop, 'T' job-control stop), 0 if gone. */
static inline char tl_task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (tl_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	return p[2];
}

/* State letter of a process (its leader), 0 if gone. */
static inline char tl_proc_state(pid_t pid)
{
	return tl_task_state(pid, pid);
}

/* A numeric field of /proc/PID/task/TID/status, -1 if unreadable. */
static inline long tl_task_status_field(pid_t pid, pid_t tid, const char *field)
{
	char path[64], buf[8192];
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (tl_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, field);
	if (!p)
		return -1;
	return strtol(p + strlen(field), NULL, 10);
}

static inline long tl_tracer_pid(pid_t pid)
{
	return tl_task_status_field(pid, pid, "TracerPid:");
}

static inline int tl_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	n = tl_read_file(path, buf, size);
	if (n <= 0) {
		snprintf(buf, size, "?");
		return -1;
	}
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* Thread ids of @pid; returns the count, -1 if the process is gone. */
static inline int tl_tasks(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		tids[n++] = atoi(de->d_name);
	}
	closedir(d);
	return n;
}

static inline int tl_nr_threads(pid_t pid)
{
	pid_t tids[TL_MAX_TASKS];

	return tl_tasks(pid, tids, TL_MAX_TASKS);
}

/* "pid 12 (comm): 12:t/tracer 40 13:S/tracer 0" */
static inline const char *tl_describe(pid_t pid, char *buf, size_t size)
{
	pid_t tids[TL_MAX_TASKS];
	char comm[64];
	size_t off;
	int i, n;

	char path[64], stat[512], *p;
	int ppid = 0, pgrp = 0, fd;
	ssize_t len;

	tl_comm(pid, comm, sizeof(comm));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (len > 0) {
		stat[len] = '\0';
		p = strrchr(stat, ')');
		if (p)
			sscanf(p + 1, " %*c %d %d", &ppid, &pgrp);
	}
	off = snprintf(buf, size, "pid %d (%s, ppid %d, pgrp %d):", pid, comm, ppid, pgrp);
	n = tl_tasks(pid, tids, TL_MAX_TASKS);
	if (n < 0 && off < size)
		off += snprintf(buf + off, size - off, " gone");
	for (i = 0; i < n && off < size; i++) {
		char st = tl_task_state(pid, tids[i]);

		off += snprintf(buf + off, size - off, " %d:%c/tracer %ld", tids[i], st ? st : '-',
				tl_task_status_field(pid, tids[i], "TracerPid:"));
	}
	return buf;
}

enum tl_want {
	TL_PTRACE_STOPPED, /* every thread 't' */
	TL_JOB_STOPPED,	   /* every thread 'T', untraced */
	TL_ANY_STOPPED,	   /* every thread 't' or 'T' */
	TL_RUNNING,	   /* no thread stopped, none traced */
};

static inline const char *tl_want_name(enum tl_want want)
{
	switch (want) {
	case TL_PTRACE_STOPPED:
		return "every thread ptrace-stopped ('t')";
	case TL_JOB_STOPPED:
		return "every thread job-control stopped ('T') and untraced";
	case TL_ANY_STOPPED:
		return "every thread stopped ('t' or 'T')";
	case TL_RUNNING:
		return "no thread stopped and none traced";
	}
	return "?";
}

/* Returns 1 when every thread of @pid matches @want (and there is one). */
static inline int tl_threads_are(pid_t pid, enum tl_want want)
{
	pid_t tids[TL_MAX_TASKS];
	int i, n;

	n = tl_tasks(pid, tids, TL_MAX_TASKS);
	if (n <= 0)
		return 0;
	for (i = 0; i < n; i++) {
		char st = tl_task_state(pid, tids[i]);
		long tr = tl_task_status_field(pid, tids[i], "TracerPid:");
		int ok = 0;

		switch (want) {
		case TL_PTRACE_STOPPED:
			ok = st == 't';
			break;
		case TL_JOB_STOPPED:
			ok = st == 'T' && tr == 0;
			break;
		case TL_ANY_STOPPED:
			ok = st == 't' || st == 'T';
			break;
		case TL_RUNNING:
			ok = st && st != 't' && st != 'T' && st != 'Z' && st != 'X' && tr == 0;
			break;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

static inline void tl_check_threads_at(pid_t pid, enum tl_want want, const char *what, TL_LOC)
{
	char desc[2048];

	if (!tl_threads_are(pid, want))
		TL_FAILF("%s: expected %s, got %s", what, tl_want_name(want),
			 tl_describe(pid, desc, sizeof(desc)));
}

#define tl_assert_all_stopped(pid, what) tl_check_threads_at(pid, TL_PTRACE_STOPPED, what, TL_AT)
#define tl_assert_job_stopped(pid, what) tl_check_threads_at(pid, TL_JOB_STOPPED, what, TL_AT)
#define tl_assert_any_stopped(pid, what) tl_check_threads_at(pid, TL_ANY_STOPPED, what, TL_AT)
#define tl_assert_running(pid, what)	 tl_check_threads_at(pid, TL_RUNNING, what, TL_AT)

/* Is /proc/PID/maps mentioning @needle? */
static inline int tl_maps_has(pid_t pid, const char *needle)
{
	static char buf[1 << 20];
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (tl_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	return strstr(buf, needle) != NULL;
}

/* ------------------------------------------------------------------ */
/* the process subtree of the test binary */

struct tl_pinfo {
	pid_t pid;
	pid_t ppid;
	char state;
	char comm[32];
};

static inline int tl_read_pinfo(pid_t pid, struct tl_pinfo *pi)
{
	char path[64], buf[1024];
	char *l, *r;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (tl_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	l = strchr(buf, '(');
	r = strrchr(buf, ')');
	if (!l || !r || r < l || r[1] != ' ')
		return -1;
	pi->pid = pid;
	snprintf(pi->comm, sizeof(pi->comm), "%.*s", (int)(r - l - 1), l + 1);
	pi->state = r[2];
	pi->ppid = strtol(r + 4, NULL, 10);
	return 0;
}

/*
 * Every process below the test binary (children, grandchildren, ...).
 * Returns the count; @out is malloc'ed, free it.
 */
static inline int tl_subtree(struct tl_pinfo **out)
{
	struct tl_pinfo *all = NULL, *res;
	int nall = 0, cap = 0, nres = 0, i, grew;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc");
	if (!d) {
		*out = NULL;
		return 0;
	}
	while ((de = readdir(d))) {
		struct tl_pinfo pi;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (tl_read_pinfo(atoi(de->d_name), &pi))
			continue;
		if (nall == cap) {
			cap = cap ? cap * 2 : 512;
			all = realloc(all, cap * sizeof(*all));
			if (!all)
				abort();
		}
		all[nall++] = pi;
	}
	closedir(d);
	res = calloc(nall + 1, sizeof(*res));
	if (!res)
		abort();
	/* grow the set from our own pid until it is closed under "child of" */
	do {
		grew = 0;
		for (i = 0; i < nall; i++) {
			int j, in = all[i].ppid == getpid();

			if (all[i].pid == 0)
				continue;
			for (j = 0; !in && j < nres; j++)
				in = all[i].ppid == res[j].pid;
			if (in) {
				res[nres++] = all[i];
				all[i].pid = 0;
				grew = 1;
			}
		}
	} while (grew);
	free(all);
	*out = res;
	return nres;
}

static inline int tl_is_tracer(const struct tl_pinfo *pi)
{
	return !strcmp(pi->comm, "tnfctl-engine");
}

/*
 * SIGKILL every live process of the subtree (optionally sparing tracers).
 * Again until a pass finds none alive: a process forked after a pass's
 * snapshot by one it then killed is not in that snapshot (a subshell's
 * `sleep` outlived the tree that way).  Each pass waits for the processes
 * it killed to be dead, so a pass finds only new ones.
 */
static inline void tl_kill_subtree(int spare_tracer)
{
	long long end = tl_now_ms() + tl.timeout_ms;
	struct tl_pinfo *ps;
	int i, n, killed;

	do {
		int fds[256], nfds = 0;

		killed = 0;
		n = tl_subtree(&ps);
		for (i = 0; i < n; i++) {
			int fd;

			if (ps[i].state == 'Z' || ps[i].state == 'X')
				continue;
			if (spare_tracer && tl_is_tracer(&ps[i]))
				continue;
			fd = tl_pidfd_open(ps[i].pid);
			if (fd < 0)
				continue;
			tl_pidfd_kill(fd, SIGKILL);
			killed++;
			if (nfds < 256)
				fds[nfds++] = fd;
			else
				close(fd);
		}
		free(ps);
		for (i = 0; i < nfds; i++) {
			tl_pidfd_wait(fds[i], (int)(end - tl_now_ms() > 0 ? end - tl_now_ms() : 0));
			close(fds[i]);
		}
	} while (killed && tl_now_ms() < end);
}

/*
 * Waits up to @timeout_ms for every live tnfctl-engine of the subtree to
 * exit (it may be a child or, after its parent died, reparented to us).
 * Returns how many are still alive; @found (if set) gets how many there
 * were, counting those already exited but not yet reaped (zombies).
 */
static inline int tl_wait_tracers_gone(int timeout_ms, int *found)
{
	long long end = tl_now_ms() + timeout_ms;
	struct tl_pinfo *ps;
	int i, n, alive = 0, nfound = 0;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++) {
		int fd, left;

		if (!tl_is_tracer(&ps[i]))
			continue;
		nfound++;
		if (ps[i].state == 'Z' || ps[i].state == 'X')
			continue;
		fd = tl_pidfd_open(ps[i].pid);
		if (fd < 0)
			continue;
		left = end - tl_now_ms();
		if (tl_pidfd_wait(fd, left > 0 ? left : 0))
			alive++;
		close(fd);
	}
	free(ps);
	if (found)
		*found = nfound;
	return alive;
}

/*
 * Reaps our zombie children.  A tnfctl-engine helper that died of a signal
 * other than SIGKILL (the teardown's) crashed: the test saw it only as an
 * INTERNAL (ECONNRESET); it is named here and fails the teardown.
 */
static inline void tl_reap_children(void)
{
	struct tl_pinfo pi;
	siginfo_t si;
	int st;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) || !si.si_pid)
			break;
		if (si.si_code != CLD_EXITED && si.si_status != SIGKILL &&
		    !tl_read_pinfo(si.si_pid, &pi) && !strcmp(pi.comm, "tnfctl-engine")) {
			print_error("ERROR: tnfctl-engine %d died of signal %d (%s)\n",
				    (int)si.si_pid, si.si_status, strsignal(si.si_status));
			__atomic_add_fetch(&tl.tracer_crashes, 1, __ATOMIC_SEQ_CST);
		}
		if (waitpid(si.si_pid, &st, WNOHANG | __WALL) <= 0)
			break;
	}
}

/*
 * Waits up to @timeout_ms for every process of the subtree to end, reaping
 * our zombie children.  What is still alive then is described in @msg
 * (if @msg), killed and reaped.  Returns the number of such leftovers.
 */
/*
 * Waits up to @ms for the library's link releasers (tnfctl-release, our
 * subtree's: we are a subreaper) to end; how many are left.
 */
static inline int tl_wait_releasers(int ms)
{
	long long deadline = tl_now_ms() + ms;
	struct tl_pinfo *ps;
	int i, n, left;

	for (;;) {
		tl_reap_children();
		n = tl_subtree(&ps);
		for (i = left = 0; i < n; i++)
			left += ps[i].state != 'Z' && ps[i].state != 'X' &&
				!strcmp(ps[i].comm, "tnfctl-release");
		free(ps);
		if (!left || tl_now_ms() > deadline)
			return left;
		poll(NULL, 0, 100);
	}
}

static inline int tl_sweep(int timeout_ms, char *msg, size_t msz)
{
	long long deadline = tl_now_ms() + timeout_ms;
	/* the library's link releasers end by themselves, one perf link per ~0.1 s */
	long long releasers_end = tl_now_ms() + tl.timeout_ms;
	int leftovers = 0, killed = 0;

	if (msg && msz)
		msg[0] = '\0';
	for (;;) {
		struct pollfd pfds[64];
		struct tl_pinfo *ps;
		int i, n, live = 0, np = 0, left, releasers = 0;

		tl_reap_children();
		n = tl_subtree(&ps);
		for (i = 0; i < n; i++) {
			if (ps[i].state == 'Z' || ps[i].state == 'X')
				continue;
			live++;
			releasers += !strcmp(ps[i].comm, "tnfctl-release");
			if (np < 64) {
				pfds[np].fd = tl_pidfd_open(ps[i].pid);
				pfds[np].events = POLLIN;
				if (pfds[np].fd >= 0)
					np++;
			}
		}
		if (n == 0) {
			free(ps);
			break;
		}
		left = deadline - tl_now_ms();
		if (left <= 0 && !killed && live && releasers == live &&
		    tl_now_ms() < releasers_end)
			left = 100;
		if (left <= 0) {
			if (killed) {
				/* even SIGKILL did not help: report and give up */
				free(ps);
				for (i = 0; i < np; i++)
					close(pfds[i].fd);
				if (!leftovers)
					leftovers = n;
				break;
			}
			for (i = 0; i < n; i++) {
				char desc[1024];
				size_t off = msg ? strlen(msg) : 0;

				if (ps[i].state == 'Z' || ps[i].state == 'X')
					continue;
				leftovers++;
				if (msg && off + 2 < msz)
					snprintf(msg + off, msz - off, "%s%s", off ? "; " : "",
						 tl_describe(ps[i].pid, desc, sizeof(desc)));
			}
			for (i = 0; i < np; i++)
				tl_pidfd_kill(pfds[i].fd, SIGKILL);
			tl_kill_subtree(0);
			killed = 1;
			deadline = tl_now_ms() + 10000;
			left = 100;
		}
		free(ps);
		/* wake when one of them exits; rescan now and then for new ones */
		if (live)
			poll(pfds, np, left < 100 ? left : 100);
		else
			poll(NULL, 0, left < 10 ? left : 10);
		for (i = 0; i < np; i++)
			close(pfds[i].fd);
	}
	return leftovers;
}

/* ------------------------------------------------------------------ */
/* waitpid with a timeout (a helper thread does the blocking wait) */

struct tl_waiter {
	pid_t pid;
	int options;
	int status;
	pid_t ret;
	int err;
	int fds[2];
	int refs;
	pthread_mutex_t lock;
};

static inline void tl_waiter_put(struct tl_waiter *w)
{
	int last;

	pthread_mutex_lock(&w->lock);
	last = --w->refs == 0;
	pthread_mutex_unlock(&w->lock);
	if (last) {
		close(w->fds[0]);
		close(w->fds[1]);
		free(w);
	}
}

static inline void *tl_waiter_fn(void *arg)
{
	struct tl_waiter *w = arg;

	do {
		w->ret = waitpid(w->pid, &w->status, w->options);
	} while (w->ret < 0 && errno == EINTR);
	w->err = errno;
	tl_write_all(w->fds[1], "x", 1);
	tl_waiter_put(w);
	return NULL;
}

/* waitpid(@pid, @status, @options) giving up after @timeout_ms (-1, ETIMEDOUT). */
static inline pid_t tl_waitpid_timeout(pid_t pid, int *status, int options, int timeout_ms)
{
	struct tl_waiter *w = calloc(1, sizeof(*w));
	struct pollfd pfd;
	pthread_t t;
	pid_t ret;

	if (!w)
		abort();
	w->pid = pid;
	w->options = options;
	w->refs = 2;
	pthread_mutex_init(&w->lock, NULL);
	if (pipe2(w->fds, O_CLOEXEC))
		abort();
	if (pthread_create(&t, NULL, tl_waiter_fn, w))
		abort();
	pfd.fd = w->fds[0];
	pfd.events = POLLIN;
	while (poll(&pfd, 1, timeout_ms) < 0 && errno == EINTR)
		;
	if (!(pfd.revents & POLLIN)) {
		pthread_detach(t);
		tl_waiter_put(w);
		errno = ETIMEDOUT;
		return -1;
	}
	/*
	 * Joined, not left to end on its own: a thread still exiting when the
	 * caller forks next can hold libasan's allocator lock (GCC 12's has no
	 * fork interceptor), and the child waits on it for ever.
	 */
	pthread_join(t, NULL);
	ret = w->ret;
	if (status)
		*status = w->status;
	errno = w->err;
	tl_waiter_put(w);
	return ret;
}

/* ------------------------------------------------------------------ */
/* registries: processes, handles and threads a test owns */

/*
 * Entries past this many, whose process has exited and whose pidfd was not
 * handed out, are dropped: a test forking thousands of children must not
 * hold a pidfd for each (a Debian login's open-files limit is 1024).
 */
#define TL_PIDFDS_KEPT 64

static inline int tl_pidfd_exited(int fd)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	return fd < 0 || poll(&pf, 1, 0) != 0;
}

/* Drops the exited entries not lent out, keeping the order (call locked). */
static inline void tl_prune_pids(void)
{
	int i, k = 0;

	for (i = 0; i < tl.npids; i++) {
		if (!tl.pidfd_lent[i] && tl_pidfd_exited(tl.pidfds[i])) {
			if (tl.pidfds[i] >= 0)
				close(tl.pidfds[i]);
			continue;
		}
		tl.pids[k] = tl.pids[i];
		tl.pidfds[k] = tl.pidfds[i];
		tl.pidfd_lent[k++] = tl.pidfd_lent[i];
	}
	tl.npids = k;
}

static inline void tl_track_pid(pid_t pid)
{
	int i;

	if (pid <= 0)
		return;
	pthread_mutex_lock(&tl.lock);
	/*
	 * A pid seen before may be a new process now (fork loops wrap the pid
	 * space within a run): an entry whose process has exited does not count,
	 * and tl_pidfd_of gives the newest entry.
	 */
	for (i = 0; i < tl.npids; i++)
		if (tl.pids[i] == pid && !tl_pidfd_exited(tl.pidfds[i]))
			break;
	if (i == tl.npids && tl.npids >= TL_PIDFDS_KEPT)
		tl_prune_pids();
	if (i >= tl.npids && tl.npids < TL_MAX_PIDS) {
		tl.pids[tl.npids] = pid;
		tl.pidfds[tl.npids] = tl_pidfd_open(pid);
		tl.pidfd_lent[tl.npids] = 0;
		tl.npids++;
	}
	pthread_mutex_unlock(&tl.lock);
}

/*
 * A pidfd for a tracked pid (owned by the registry, valid until the
 * teardown), -1 if unknown.
 */
static inline int tl_pidfd_of(pid_t pid)
{
	int i, fd = -1, at = -1;

	pthread_mutex_lock(&tl.lock);
	for (i = 0; i < tl.npids; i++)
		if (tl.pids[i] == pid)
			at = i;
	if (at >= 0) {
		fd = tl.pidfds[at];
		tl.pidfd_lent[at] = 1;
	}
	pthread_mutex_unlock(&tl.lock);
	return fd;
}

/* A copy of the registry's pidfd for @pid (the caller closes it), -1 if unknown. */
static inline int tl_pidfd_dup_of(pid_t pid)
{
	int i, fd = -1;

	pthread_mutex_lock(&tl.lock);
	for (i = 0; i < tl.npids; i++)
		if (tl.pids[i] == pid)
			fd = tl.pidfds[i];
	if (fd >= 0)
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&tl.lock);
	return fd;
}

static inline void tl_track_handle(tnfctl_handle_t *h)
{
	pthread_mutex_lock(&tl.lock);
	if (h && tl.nhandles < TL_MAX_HANDLES)
		tl.handles[tl.nhandles++] = h;
	pthread_mutex_unlock(&tl.lock);
}

static inline void tl_untrack_handle(tnfctl_handle_t *h)
{
	int i;

	pthread_mutex_lock(&tl.lock);
	for (i = 0; i < tl.nhandles; i++) {
		if (tl.handles[i] == h) {
			tl.handles[i] = tl.handles[--tl.nhandles];
			break;
		}
	}
	pthread_mutex_unlock(&tl.lock);
}

/* Open fds of process @pid (/proc/PID/fd), -1 if unreadable. */
static inline int tl_count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return pid == getpid() ? n - 1 : n; /* not the DIR's own fd */
}

/*
 * A file, or an empty directory, the teardown removes if it is still
 * there (a test that fails midway leaves nothing in /tmp).
 */
static inline void tl_track_path(const char *path)
{
	pthread_mutex_lock(&tl.lock);
	if (tl.npaths < TL_MAX_PATHS)
		snprintf(tl.paths[tl.npaths++], PATH_MAX, "%s", path);
	pthread_mutex_unlock(&tl.lock);
}

/* Starts a thread the teardown joins (it must end once the targets are dead). */
static inline pthread_t tl_thread_start(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg))
		abort();
	pthread_mutex_lock(&tl.lock);
	if (tl.nthreads < TL_MAX_THREADS)
		tl.threads[tl.nthreads++] = t;
	pthread_mutex_unlock(&tl.lock);
	return t;
}

static inline void tl_thread_join(pthread_t t)
{
	int i, found = 0;

	pthread_mutex_lock(&tl.lock);
	for (i = 0; i < tl.nthreads; i++) {
		if (pthread_equal(tl.threads[i], t)) {
			tl.threads[i] = tl.threads[--tl.nthreads];
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&tl.lock);
	if (found)
		pthread_join(t, NULL);
}

/* ------------------------------------------------------------------ */
/* targets and their pipes */

static inline void tl_proc_close_fds(struct tl_proc *p)
{
	int *fds[] = {&p->cmd_w, &p->reply_r, &p->t_cmd_r, &p->t_reply_w};
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* A fresh target record with its two pipes (all ends FD_CLOEXEC). */
static inline struct tl_proc *tl_proc_new(void)
{
	struct tl_proc *p = NULL;
	int cmd[2], reply[2];
	int i;

	pthread_mutex_lock(&tl.lock);
	for (i = 0; i < TL_MAX_PROCS; i++) {
		if (!tl.procs[i].used) {
			p = &tl.procs[i];
			p->used = 1;
			break;
		}
	}
	pthread_mutex_unlock(&tl.lock);
	if (!p)
		abort();
	p->pid = 0;
	p->pidfd = -1;
	p->len = 0;
	p->line[0] = '\0';
	if (pipe2(cmd, O_CLOEXEC) || pipe2(reply, O_CLOEXEC))
		abort();
	p->t_cmd_r = cmd[0];
	p->cmd_w = cmd[1];
	p->reply_r = reply[0];
	p->t_reply_w = reply[1];
	return p;
}

static inline void tl_set_cloexec(int fd, int on)
{
	int fl = fcntl(fd, F_GETFD);

	fcntl(fd, F_SETFD, on ? fl | FD_CLOEXEC : fl & ~FD_CLOEXEC);
}

/* The target has its ends now: drop ours. */
static inline void tl_proc_handed_over(struct tl_proc *p)
{
	if (p->t_cmd_r >= 0)
		close(p->t_cmd_r);
	if (p->t_reply_w >= 0)
		close(p->t_reply_w);
	p->t_cmd_r = p->t_reply_w = -1;
}

static inline void tl_proc_set_pid(struct tl_proc *p, pid_t pid)
{
	p->pid = pid;
	tl_track_pid(pid);
	p->pidfd = tl_pidfd_of(pid);
}

/* Reads one line from the target; NULL on timeout or EOF. */
static inline const char *tl_read_line(struct tl_proc *p, int timeout_ms)
{
	long long end = tl_now_ms() + timeout_ms;

	for (;;) {
		char *nl = memchr(p->buf, '\n', p->len);
		struct pollfd pfd = {.fd = p->reply_r, .events = POLLIN};
		ssize_t n;
		int left;

		if (nl) {
			size_t len = nl - p->buf;

			if (len >= sizeof(p->line))
				len = sizeof(p->line) - 1;
			memcpy(p->line, p->buf, len);
			p->line[len] = '\0';
			p->len -= nl + 1 - p->buf;
			memmove(p->buf, nl + 1, p->len);
			return p->line;
		}
		if (p->len == sizeof(p->buf))
			p->len = 0;
		left = end - tl_now_ms();
		if (left < 0)
			left = 0;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		n = read(p->reply_r, p->buf + p->len, sizeof(p->buf) - p->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		p->len += n;
	}
}

static inline const char *tl_expect_at(struct tl_proc *p, const char *prefix, TL_LOC)
{
	const char *l = tl_read_line(p, tl.timeout_ms);

	if (!l)
		TL_FAILF("pid %d: no line from the target within %d ms (waiting for \"%s\")",
			 p->pid, tl.timeout_ms, prefix);
	if (strncmp(l, prefix, strlen(prefix)))
		TL_FAILF("pid %d: expected a line starting \"%s\", got \"%s\"", p->pid, prefix, l);
	return l;
}

/* Reads a reply line and asserts it starts with @prefix; returns the line. */
#define tl_expect(p, prefix) tl_expect_at(p, prefix, TL_AT)

/* Asserts the target has written nothing (it cannot have run). */
static inline void tl_expect_silence_at(struct tl_proc *p, const char *why, TL_LOC)
{
	struct pollfd pfd = {.fd = p->reply_r, .events = POLLIN};

	if (p->len || poll(&pfd, 1, 0) > 0) {
		const char *l = tl_read_line(p, 0);

		TL_FAILF("pid %d: %s, but it wrote \"%s\"", p->pid, why, l ? l : "(partial line)");
	}
}
#define tl_expect_silence(p, why) tl_expect_silence_at(p, why, TL_AT)

static inline void tl_send(struct tl_proc *p, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n > (int)sizeof(buf) - 2)
		abort();
	buf[n++] = '\n';
	tl_write_all(p->cmd_w, buf, n);
}

/* An environment copy without LD_PRELOAD, plus @extra entries (NULL-ended). */
static inline char **tl_env_build(const char *const *extra)
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	for (i = 0; extra && extra[i]; i++)
		;
	env = calloc(n + i + 1, sizeof(*env));
	if (!env)
		abort();
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			env[k++] = environ[i];
	for (i = 0; extra && extra[i]; i++)
		env[k++] = (char *)extra[i];
	env[k] = NULL;
	return env;
}

/*
 * fork+execve @argv[0] with @envp.  @out (if >= 0) becomes stdout and
 * stderr; @keep lists fds (ended by -1) that stay open across the exec.
 * The child is tracked.  Returns its pid.
 */
static inline pid_t tl_spawn(char *const argv[], char *const envp[], int out, const int *keep)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		sigset_t none;
		int i;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		for (i = 0; keep && keep[i] >= 0; i++)
			tl_set_cloexec(keep[i], 0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	tl_track_pid(pid);
	return pid;
}

/*
 * Starts @prog as a target (`prog CMDFD REPLYFD`), with libtnfprobe.so.1 in
 * LD_PRELOAD when @preload, and waits for its "ready <pid>".
 */
static inline struct tl_proc *tl_start_target_at(const char *prog, int preload, TL_LOC)
{
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16], pre[PATH_MAX + 16];
	char *argv[] = {(char *)prog, cfd, rfd, NULL};
	const char *extra[] = {pre, NULL};
	int keep[3];
	char **env;
	pid_t pid;

	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", tl.probe);
	keep[0] = p->t_cmd_r;
	keep[1] = p->t_reply_w;
	keep[2] = -1;
	env = tl_env_build(preload ? extra : NULL);
	pid = tl_spawn(argv, env, -1, keep);
	free(env);
	tl_proc_handed_over(p);
	tl_proc_set_pid(p, pid);
	tl_expect_at(p, "ready", file, line);
	if (atoi(p->line + 6) != pid)
		TL_FAILF("target announced \"%s\", expected pid %d", p->line, pid);
	return p;
}
#define tl_start_target(prog, preload) tl_start_target_at(prog, preload, TL_AT)

/*
 * tnfctl_exec_open of @prog as a target (`prog CMDFD REPLYFD`); @envp as for
 * tnfctl_exec_open.  On success the handle and the pid are tracked.
 */
static inline tnfctl_errcode_t tl_exec_open_target(struct tl_proc *p, const char *prog,
						   char *const *envp, tnfctl_handle_t **h)
{
	char cfd[16], rfd[16];
	char *argv[] = {(char *)prog, cfd, rfd, NULL};
	tnfctl_trace_attrs_t attrs;
	tnfctl_errcode_t err;

	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	tl_set_cloexec(p->t_cmd_r, 0);
	tl_set_cloexec(p->t_reply_w, 0);
	err = tnfctl_exec_open(prog, argv, envp, NULL, NULL, h);
	tl_proc_handed_over(p);
	if (err != TNFCTL_ERR_NONE)
		return err;
	tl_track_handle(*h);
	if (tnfctl_trace_attrs_get(*h, &attrs) == TNFCTL_ERR_NONE)
		tl_proc_set_pid(p, attrs.targ_pid);
	return err;
}

/* ------------------------------------------------------------------ */
/* tnfctl wrappers that assert */

static inline const char *tl_event_name(int evt)
{
	switch (evt) {
	case TNFCTL_EVENT_EINTR:
		return "EINTR";
	case TNFCTL_EVENT_TARGGONE:
		return "TARGGONE";
	case TNFCTL_EVENT_DLOPEN:
		return "DLOPEN";
	case TNFCTL_EVENT_DLCLOSE:
		return "DLCLOSE";
	case TNFCTL_EVENT_EXEC:
		return "EXEC";
	case TNFCTL_EVENT_FORK:
		return "FORK";
	case TNFCTL_EVENT_EXIT:
		return "EXIT";
	case TNFCTL_EVENT_EXEC_FAILED:
		return "EXEC_FAILED";
	}
	return "(bad event)";
}

static inline const char *tl_err_name(tnfctl_errcode_t err)
{
	static const char *const names[] = {
		"NONE",		"ACCES",      "NOTARGET",     "ALLOCFAIL",  "INTERNAL",
		"SIZETOOSMALL", "SIZETOOBIG", "BADARG",	      "NOTDYNAMIC", "NOLIBTNFPROBE",
		"BUFBROKEN",	"BUFEXISTS",  "NOBUF",	      "BADDEALLOC", "NOPROCESS",
		"FILENOTFOUND", "BUSY",	      "INVALIDPROBE", "USR1",	    "USR2",
		"USR3",		"USR4",	      "USR5",	      "KERNEL",
	};

	if ((unsigned)err < sizeof(names) / sizeof(names[0]))
		return names[err];
	return "(bad code)";
}

/* Asserts @got == @want for a tnfctl call, naming both codes. */
#define tl_assert_err(got, want)                                                                   \
	do {                                                                                       \
		tnfctl_errcode_t _g = (got), _w = (want);                                          \
		if (_g != _w)                                                                      \
			fail_msg("%s: expected TNFCTL_ERR_%s, got TNFCTL_ERR_%s (%s)", #got,       \
				 tl_err_name(_w), tl_err_name(_g), tnfctl_strerror(_g));           \
	} while (0)

static inline tnfctl_handle_t *tl_pid_open_at(pid_t pid, TL_LOC)
{
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err = tnfctl_pid_open(pid, &h);

	if (err != TNFCTL_ERR_NONE)
		TL_FAILF("tnfctl_pid_open(%d): TNFCTL_ERR_%s (%s)", pid, tl_err_name(err),
			 tnfctl_strerror(err));
	if (!h)
		TL_FAILF("tnfctl_pid_open(%d) succeeded with a NULL handle", pid);
	tl_track_handle(h);
	return h;
}
#define tl_pid_open(pid) tl_pid_open_at(pid, TL_AT)

static inline void tl_close_at(tnfctl_handle_t *h, tnfctl_targ_op_t op, TL_LOC)
{
	tnfctl_errcode_t err = tnfctl_close(h, op);

	if (err != TNFCTL_ERR_BADARG)
		tl_untrack_handle(h);
	if (err != TNFCTL_ERR_NONE)
		TL_FAILF("tnfctl_close(op %d): TNFCTL_ERR_%s (%s)", op, tl_err_name(err),
			 tnfctl_strerror(err));
}
#define tl_close(h, op) tl_close_at(h, op, TL_AT)

static inline pid_t tl_targ_pid(tnfctl_handle_t *h)
{
	tnfctl_trace_attrs_t attrs;

	if (tnfctl_trace_attrs_get(h, &attrs) != TNFCTL_ERR_NONE)
		return -1;
	return attrs.targ_pid;
}

static inline void tl_info_at(tnfctl_handle_t *h, tnfctl_event_info_t *info, TL_LOC)
{
	tnfctl_errcode_t err;

	memset(info, 0, sizeof(*info));
	err = tnfctl_event_info_get(h, info);
	if (err != TNFCTL_ERR_NONE)
		TL_FAILF("tnfctl_event_info_get: TNFCTL_ERR_%s", tl_err_name(err));
}
#define tl_info(h, info) tl_info_at(h, info, TL_AT)

/*
 * tnfctl_continue that must succeed; a child handle it returns on FORK is
 * tracked (with its pid).  Returns the event.
 */
static inline tnfctl_event_t tl_continue_at(tnfctl_handle_t *h, tnfctl_handle_t **child, TL_LOC)
{
	tnfctl_event_t evt = (tnfctl_event_t)-1;
	tnfctl_errcode_t err;

	if (child)
		*child = NULL;
	err = tnfctl_continue(h, &evt, child);
	if (tl.wd_fired)
		TL_FAILF("the watchdog fired: tnfctl_continue blocked for more than %d s "
			 "(returned %s, event %s)",
			 tl.test_timeout_s, tl_err_name(err), tl_event_name(evt));
	if (err != TNFCTL_ERR_NONE)
		TL_FAILF("tnfctl_continue: TNFCTL_ERR_%s (%s)", tl_err_name(err),
			 tnfctl_strerror(err));
	if (child && evt == TNFCTL_EVENT_FORK && *child) {
		tl_track_handle(*child);
		tl_track_pid(tl_targ_pid(*child));
	}
	return evt;
}
#define tl_continue(h, child) tl_continue_at(h, child, TL_AT)

static inline void tl_expect_event_at(tnfctl_handle_t *h, tnfctl_handle_t **child,
				      tnfctl_event_t want, TL_LOC)
{
	tnfctl_event_t evt = tl_continue_at(h, child, file, line);

	if (evt != want) {
		tnfctl_event_info_t info;

		memset(&info, 0, sizeof(info));
		tnfctl_event_info_get(h, &info);
		TL_FAILF("expected event %s, got %s (pid %d tid %d child %d status %d "
			 "signal %d path \"%s\")",
			 tl_event_name(want), tl_event_name(evt), info.pid, info.tid,
			 info.child_pid, info.exit_status, info.term_signal, info.path);
	}
}
#define tl_expect_event(h, child, want) tl_expect_event_at(h, child, want, TL_AT)

/* Asserts the process behind @pid ends within the timeout. */
static inline void tl_assert_exits_at(pid_t pid, int timeout_ms, const char *what, TL_LOC)
{
	char desc[1024];
	int fd = tl_pidfd_dup_of(pid);

	if (fd < 0) {
		fd = tl_pidfd_open(pid);
		if (fd < 0)
			return; /* already gone and reaped */
	}
	if (tl_pidfd_wait(fd, timeout_ms)) {
		close(fd);
		TL_FAILF("%s: pid %d still alive after %d ms: %s", what, pid, timeout_ms,
			 tl_describe(pid, desc, sizeof(desc)));
	}
	close(fd);
}
#define tl_assert_exits(pid, what)    tl_assert_exits_at(pid, tl.timeout_ms, what, TL_AT)
/* The process must already be dead (zombie or gone) right now. */
#define tl_assert_dead_now(pid, what) tl_assert_exits_at(pid, 0, what, TL_AT)

/* Reaps our child @pid (already exited or exiting); returns its wait status. */
static inline int tl_reap_at(pid_t pid, TL_LOC)
{
	int st = 0;

	if (tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms) != pid)
		TL_FAILF("waitpid(%d): %s", pid, strerror(errno));
	return st;
}
#define tl_reap(pid) tl_reap_at(pid, TL_AT)

/* ------------------------------------------------------------------ */
/* watchdog */

static inline void tl_timespec_in(struct timespec *ts, int seconds)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += seconds;
}

/* What each process of the subtree is doing, for a test that hangs (kernel stacks: root). */
static inline void tl_dump_subtree(void)
{
	char desc[1024], path[96], buf[2048];
	pid_t tids[TL_MAX_TASKS];
	struct tl_pinfo *ps;
	int i, j, n, k, fd;
	ssize_t len;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++) {
		fprintf(stderr, "watchdog: %s\n", tl_describe(ps[i].pid, desc, sizeof(desc)));
		k = tl_tasks(ps[i].pid, tids, TL_MAX_TASKS);
		for (j = 0; j < k; j++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", ps[i].pid, tids[j]);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			if (fd >= 0)
				close(fd);
			buf[len > 0 ? len : 0] = '\0';
			fprintf(stderr, "watchdog:   task %d kernel stack:\n%s", tids[j], buf);
		}
	}
	free(ps);
}

static inline void *tl_watchdog_fn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&tl.lock);
	/* Idle before any test forks: a fork while this thread is still starting
	 * can leave GCC 12 libasan's locks held in the child (no fork interceptor). */
	tl.wd_ready = 1;
	pthread_cond_broadcast(&tl.wd_cond);
	for (;;) {
		struct timespec now;
		int stage;

		while (!tl.wd_armed)
			pthread_cond_wait(&tl.wd_cond, &tl.lock);
		if (pthread_cond_timedwait(&tl.wd_cond, &tl.lock, &tl.wd_deadline) != ETIMEDOUT)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!tl.wd_armed || now.tv_sec < tl.wd_deadline.tv_sec)
			continue;
		stage = ++tl.wd_stage;
		tl_timespec_in(&tl.wd_deadline, 15);
		tl.wd_fired = 1;
		pthread_mutex_unlock(&tl.lock);
		if (stage == 1) {
			fprintf(stderr,
				"watchdog: test still running after %d s: killing its targets\n",
				tl.test_timeout_s);
			tl_dump_subtree();
			tl_kill_subtree(1);
		} else if (stage == 2) {
			fprintf(stderr, "watchdog: still stuck: killing tnfctl-engine too\n");
			tl_kill_subtree(0);
		} else {
			fprintf(stderr, "watchdog: still stuck: giving up on this binary\n");
			tl_kill_subtree(0);
			tl_sweep(5000, NULL, 0);
			_exit(125);
		}
		pthread_mutex_lock(&tl.lock);
	}
	return NULL;
}

static inline void tl_watchdog_arm(int seconds)
{
	pthread_mutex_lock(&tl.lock);
	tl.wd_armed = seconds > 0;
	tl.wd_stage = 0;
	tl.wd_fired = 0;
	tl_timespec_in(&tl.wd_deadline, seconds);
	pthread_cond_signal(&tl.wd_cond);
	pthread_mutex_unlock(&tl.lock);
}

/* ------------------------------------------------------------------ */
/* setup, teardown, skip */

static inline void tl_path_of(char *buf, const char *rel)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", tl.bdir, rel) >= PATH_MAX)
		abort();
}

/*
 * LeakSanitizer cannot run under ptrace: a SANITIZE=1 tool run under
 * strace fails at its exit ("LeakSanitizer has encountered a fatal
 * error").  Adds detect_leaks=0 to $ASAN_OPTIONS for the children started
 * until tl_asan_leaks_restore(the value returned).
 */
static inline char *tl_asan_leaks_off(void)
{
	const char *old = getenv("ASAN_OPTIONS");
	char *saved = old ? strdup(old) : NULL;
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s%sdetect_leaks=0", old ? old : "", old && *old ? ":" : "");
	setenv("ASAN_OPTIONS", buf, 1);
	return saved;
}

static inline void tl_asan_leaks_restore(char *saved)
{
	if (saved)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
}

/* @name's full path in @out (searching $PATH), or 0: for tests that need a tool. */
static inline int tl_find_in_path(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int found = 0;

	if (!path)
		path = "/usr/bin:/bin";
	copy = strdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, size, "%s/%s", dir, name);
		found = access(out, X_OK) == 0;
	}
	free(copy);
	return found;
}

static inline int tl_env_int(const char *name, int def)
{
	const char *s = getenv(name);

	return s && *s ? atoi(s) : def;
}

/*
 * How much slower than a native build this lane runs its tests: 3 under
 * the sanitizers (SANITIZE=1 or thread in the environment, as make sets
 * it), else 1.  The default time limits scale with it; a limit set in the
 * environment (the TCG kernel lane's, memcheck's) is taken as it is.
 */
static inline int tl_lane_factor(void)
{
	const char *s = getenv("SANITIZE");

	return s && *s ? 3 : 1;
}

/*
 * The path of this test binary, for the workloads it runs as its own
 * targets: $TL_SELF_EXE if set, else /proc/self/exe.  make memcheck runs a
 * copy of the binary on private copies of ld.so and libc, and sets
 * TL_SELF_EXE to the build's: the targets must map the system's libc,
 * where the library puts its uprobes, not the copy.  0, or -1.
 */
static inline int tl_self_exe(char *buf, size_t size)
{
	const char *s = getenv("TL_SELF_EXE");
	ssize_t n;

	if (s && *s)
		return snprintf(buf, size, "%s", s) < (int)size ? 0 : -1;
	n = readlink("/proc/self/exe", buf, size - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * Starts tests/helpers/tl_pidfd_broker if pidfd_open fails with ENOSYS
 * (valgrind 3.19), as a grandchild that its parent's exit hands to init
 * (or to our own reaper): it ends when the last copy of our end of its
 * socket is closed.  0 when pidfds work or the broker runs, -1 if not.
 */
static inline int tl_broker_start(void)
{
	char path[PATH_MAX], arg[16];
	int sv[2], st, fd;
	pid_t pid;

	fd = syscall(SYS_pidfd_open, getpid(), 0);
	if (fd >= 0 || errno != ENOSYS) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	tl_path_of(path, "tests/helpers/tl_pidfd_broker");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (fork() == 0) {
			fd = dup(sv[1]); /* without FD_CLOEXEC */
			snprintf(arg, sizeof(arg), "%d", fd);
			execl(path, path, arg, (char *)NULL);
		}
		_exit(0);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	tl_broker_sock = sv[0];
	printf("# no pidfd_open here (valgrind?): %s makes them\n", path);
	return 0;
}

static inline int tl_group_setup(void **state)
{
	const char *b = getenv("B");
	char exe[PATH_MAX];
	pthread_condattr_t ca;
	ssize_t n;

	(void)state;
	if (tl.inited)
		return 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	tl.timeout_ms = tl_env_int("TL_TIMEOUT_MS", 20000 * tl_lane_factor());
	tl.test_timeout_s = tl_env_int("TL_TEST_TIMEOUT", 120 * tl_lane_factor());

	/* build dir: $B (default "build"), else two levels above this binary */
	if (!realpath(b && *b ? b : "build", tl.bdir)) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return -1;
		exe[n] = '\0';
		snprintf(tl.bdir, sizeof(tl.bdir), "%s", dirname(dirname(exe)));
	}
	/* Before we are a subreaper: the broker is not in our subtree. */
	if (tl_broker_start())
		return -1;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		perror("PR_SET_CHILD_SUBREAPER");
		return -1;
	}
	tl_path_of(tl.target, "tests/helpers/tl_target");
	tl_path_of(tl.threads_prog, "tests/helpers/tl_threads");
	tl_path_of(tl.ctor, "tests/helpers/tl_ctor");
	tl_path_of(tl.static_prog, "tests/helpers/static_prog");
	tl_path_of(tl.ctl, "tests/helpers/tl_ctl");
	tl_path_of(tl.probe, "libtnfprobe.so.1");
	tl_path_of(tl.libctl, "libtnfctl.so.1");
	tl_path_of(tl.follow, "tnfctl-follow");
	tl_path_of(tl.demo, "demo/tnfdemo");

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&tl.wd_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&tl.wd_thread, NULL, tl_watchdog_fn, NULL))
		return -1;
	pthread_mutex_lock(&tl.lock);
	while (!tl.wd_ready)
		pthread_cond_wait(&tl.wd_cond, &tl.lock);
	pthread_mutex_unlock(&tl.lock);
	tl.inited = 1;
	printf("# build dir %s, TNFCTL_STOP_MODE=%s\n", tl.bdir,
	       getenv("TNFCTL_STOP_MODE") ? getenv("TNFCTL_STOP_MODE") : "(auto)");
	return 0;
}

static inline int tl_group_teardown(void **state)
{
	(void)state;
	tl_watchdog_arm(0);
	return 0;
}

static inline int tl_setup(void **state)
{
	(void)state;
	tl.t_start_ms = tl_now_ms();
	tl.t_limit_ms = tl.test_timeout_s * 1000LL;
	tl_watchdog_arm(tl.test_timeout_s);
	return 0;
}

/* Lets one test run longer before the watchdog fires. */
/* Never shortens: TL_TEST_TIMEOUT is raised for slow machines (the 6.1 lane). */
static inline void tl_watchdog_extend(int seconds)
{
	int s = seconds > tl.test_timeout_s ? seconds : tl.test_timeout_s;

	tl.t_limit_ms = tl_now_ms() - tl.t_start_ms + s * 1000LL;
	tl_watchdog_arm(s);
}

/*
 * "# tl-time: <ms> ms of <ms> ms": the test's run time and its limit, for
 * tests/run-tests, which names a test that used more than half its limit
 * (so a slower machine is seen coming before the watchdog fires there).
 */
static inline void tl_report_time(void)
{
	printf("# tl-time: %lld ms of %lld ms\n", tl_now_ms() - tl.t_start_ms, tl.t_limit_ms);
}

/*
 * Kills what the test started, joins its threads, closes its handles, then
 * requires the whole process subtree (tnfctl-engine included) to end.
 */
static inline int tl_teardown(void **state)
{
	tnfctl_handle_t *handles[TL_MAX_HANDLES];
	pthread_t threads[TL_MAX_THREADS];
	char msg[8192];
	int i, nh, nt, left;

	(void)state;
	pthread_mutex_lock(&tl.lock);
	for (i = 0; i < tl.npids; i++)
		if (tl.pidfds[i] >= 0)
			tl_pidfd_kill(tl.pidfds[i], SIGKILL);
	nt = tl.nthreads;
	memcpy(threads, tl.threads, nt * sizeof(threads[0]));
	tl.nthreads = 0;
	pthread_mutex_unlock(&tl.lock);

	for (i = 0; i < nt; i++)
		pthread_join(threads[i], NULL);

	pthread_mutex_lock(&tl.lock);
	nh = tl.nhandles;
	memcpy(handles, tl.handles, nh * sizeof(handles[0]));
	tl.nhandles = 0;
	pthread_mutex_unlock(&tl.lock);
	for (i = 0; i < nh; i++)
		tnfctl_close(handles[i], TNFCTL_TARG_KILL);

	left = tl_sweep(10000, msg, sizeof(msg));

	pthread_mutex_lock(&tl.lock);
	for (i = 0; i < tl.npids; i++)
		if (tl.pidfds[i] >= 0)
			close(tl.pidfds[i]);
	tl.npids = 0;
	/* the last made first: a directory after its files */
	while (tl.npaths > 0) {
		const char *path = tl.paths[--tl.npaths];

		if (unlink(path) && errno == EISDIR)
			rmdir(path);
	}
	for (i = 0; i < TL_MAX_PROCS; i++) {
		if (tl.procs[i].used) {
			tl_proc_close_fds(&tl.procs[i]);
			tl.procs[i].used = 0;
		}
	}
	pthread_mutex_unlock(&tl.lock);
	tl_watchdog_arm(0);
	tl_report_time();
	if (left) {
		print_error("ERROR: %d process(es) still alive after the test (killed now): %s\n",
			    left, msg);
		return -1;
	}
	if (__atomic_exchange_n(&tl.tracer_crashes, 0, __ATOMIC_SEQ_CST)) {
		print_error("ERROR: a tnfctl-engine helper crashed during the test\n");
		return -1;
	}
	return 0;
}

/*
 * Setup and teardown of tests run again with TNFCTL_KTRACE_COMPAT=1 (kernel
 * mode's programs for kernels without BPF cookies): the caller's value is
 * put back after.
 */
static inline char **tl_kcompat_was(void)
{
	static char *was;

	return &was;
}

static inline int tl_kcompat_setup(void **state)
{
	const char *was = getenv("TNFCTL_KTRACE_COMPAT");

	*tl_kcompat_was() = was ? strdup(was) : NULL;
	setenv("TNFCTL_KTRACE_COMPAT", "1", 1); /* read by the library, inherited by prex */
	return tl_setup(state);
}

static inline int tl_kcompat_teardown(void **state)
{
	char **was = tl_kcompat_was();

	if (*was)
		setenv("TNFCTL_KTRACE_COMPAT", *was, 1);
	else
		unsetenv("TNFCTL_KTRACE_COMPAT");
	free(*was);
	*was = NULL;
	return tl_teardown(state);
}

/* Copies @from to the new file @to (mode 0755), failing the test on error. */
static inline void tl_copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(tl_write_all(out, buf, n), 0);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

/* Skips the calling test (with the reason printed) unless it can trace. */
#define tl_require_root()                                                                          \
	do {                                                                                       \
		if (geteuid() != 0) {                                                              \
			print_message("SKIP: needs root (BPF and ptrace)\n");                      \
			skip();                                                                    \
		}                                                                                  \
		if (access("/sys/kernel/btf/vmlinux", R_OK)) {                                     \
			print_message("SKIP: /sys/kernel/btf/vmlinux is missing\n");               \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/*
 * Whether the passive watch can run here: it needs task iterators and ring
 * buffers (5.8) beyond BTF (README, Requirements); newer features
 * (bpf_loop, atomic fetch, attach cookies) only choose its object.  Where
 * it can, a watch that cannot open is a failure.
 */
static inline bool tl_watch_supported(void)
{
	return tl_btf_has_name("bpf_iter__task") && tl_btf_has_name("BPF_MAP_TYPE_RINGBUF");
}

/* Whether kernel mode can run here: it needs BTF and the BPF ring buffer (5.8). */
static inline bool tl_kernel_mode_supported(void)
{
	return tl_btf_has_name("BPF_MAP_TYPE_RINGBUF");
}

/*
 * Whether kernel mode runs its one program with BPF cookies (5.15) here:
 * else (or with TNFCTL_KTRACE_COMPAT=1) a stub program per tracepoint.
 */
static inline bool tl_kernel_has_cookies(void)
{
	return tl_btf_has_name("BPF_FUNC_get_attach_cookie");
}

/* Skips the calling test, with the reason, where the watch cannot run. */
#define tl_require_watch()                                                                         \
	do {                                                                                       \
		if (!tl_watch_supported()) {                                                       \
			print_message("SKIP: the watch needs task iterators and ring buffers "     \
				      "(Linux 5.8)\n");                                            \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* How many of tnfctl-follow's modes a test can run: 2 with --no-stop, else 1. */
static inline int tl_follow_modes(void)
{
	return tl_watch_supported() ? 2 : 1;
}

/*
 * For a test of both modes (the stopping API, then the watch): where the
 * watch cannot run, the test runs its stopping half and ends here, reported
 * as skipped with the reason, not as passed.
 */
#define tl_watch_half_end()                                                                        \
	do {                                                                                       \
		if (!tl_watch_supported()) {                                                       \
			print_message("SKIP: the stopping half passed; the watch's half needs "    \
				      "task iterators and ring buffers (Linux 5.8)\n");            \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* Last test of every binary: nothing it started is left, no child at all. */
static inline void tl_test_no_leftovers(void **state)
{
	char msg[8192];
	int left, st;
	pid_t w;

	(void)state;
	left = tl_sweep(10000, msg, sizeof(msg));
	if (left)
		fail_msg("%d process(es) left alive by this binary (killed now): %s", left, msg);
	w = waitpid(-1, &st, WNOHANG | __WALL);
	if (w != -1 || errno != ECHILD)
		fail_msg("a child process remains after reaping (waitpid gave %d)", (int)w);
}

#define TL_TEST(fn)   cmocka_unit_test_setup_teardown(fn, tl_setup, tl_teardown)
#define TL_FINAL_TEST cmocka_unit_test(tl_test_no_leftovers)
/* TL_FILTER=PATTERN runs only the tests whose names match (cmocka's * and ?). */
#define tl_run(tests)                                                                              \
	(getenv("TL_FILTER") ? cmocka_set_test_filter(getenv("TL_FILTER")) : (void)0,              \
	 cmocka_run_group_tests(tests, tl_group_setup, tl_group_teardown))

#endif /* TESTLIB_H */
