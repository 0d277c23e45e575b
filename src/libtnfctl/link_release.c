// SPDX-License-Identifier: BSD-2-Clause
/*
 * Uprobe links released off the caller's critical path.  When the last
 * reference to a uprobe link goes, the kernel waits for an RCU tasks-trace
 * grace period (tens of ms for a uprobe_multi link, ~0.1 s for each perf
 * link, one after the other under a global mutex).  Here a detached
 * process takes a reference to every link, waits until the caller has
 * dropped its own, and drops them at its exit: the caller goes on at once.
 *
 * The detached process is the grandchild of a double clone: its parent
 * exits at once (with no exit signal, so the caller's SIGCHLD handler and
 * wait(2) never see it), and it is reparented to init or the nearest
 * subreaper.  It runs with every signal blocked, keeps no descriptor but
 * the links and the pipe it waits on, and only makes raw system calls (it
 * is a fork of a possibly multi-threaded process).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "kfeatures.h"

/* Runs in the clones too: no sanitizer state of the caller's threads is touched there. */
#define NO_SAN __attribute__((no_sanitize("address", "thread", "undefined")))

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static NO_SAN bool kept(int fd, const int *fds, size_t n, int go)
{
	size_t i;

	if (fd == go)
		return true;
	for (i = 0; i < n; i++)
		if (fds[i] == fd)
			return true;
	return false;
}

/* The smallest kept descriptor >= @from, or -1. */
static NO_SAN int next_kept(int from, const int *fds, size_t n, int go)
{
	int best = go >= from ? go : -1;
	size_t i;

	for (i = 0; i < n; i++)
		if (fds[i] >= from && (best < 0 || fds[i] < best))
			best = fds[i];
	return best;
}

/* close_range(2) (5.9+), or one by one below the descriptor limit where seccomp refuses it. */
static NO_SAN void close_fds(unsigned int lo, unsigned int hi)
{
	struct rlimit rl;
	unsigned int fd;

	if (!syscall(SYS_close_range, lo, hi, 0))
		return;
	if (syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl) || rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	for (fd = lo; fd <= hi && fd < rl.rlim_cur; fd++)
		syscall(SYS_close, fd);
}

static NO_SAN __attribute__((noreturn)) void releaser(const int *fds, size_t n, int go)
{
	unsigned int from = 0;
	char c;
	long r;
	int k;

	syscall(SYS_prctl, PR_SET_NAME, "tnfctl-release", 0, 0, 0);
	/* All but the links and @go: a pipe the caller writes ends as before */
	while ((k = next_kept((int)from, fds, n, go)) >= 0) {
		if ((unsigned int)k > from)
			close_fds(from, (unsigned int)k - 1);
		from = (unsigned int)k + 1;
		while (kept((int)from, fds, n, go))
			from++;
	}
	close_fds(from, ~0U);
	/* EOF once the caller has dropped its references (or died). */
	do
		r = syscall(SYS_read, go, &c, 1);
	while (r > 0 || (r < 0 && errno == EINTR));
	syscall(SYS_exit_group, 0);
	__builtin_unreachable();
}

/* The detached process's parent: clones it, and exits. */
static NO_SAN __attribute__((noreturn)) void middle(const int *fds, size_t n, int go)
{
	long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, NULL, NULL, 0UL);

	if (pid == 0)
		releaser(fds, n, go);
	syscall(SYS_exit_group, pid > 0 ? 0 : 1);
	__builtin_unreachable();
}

/*
 * Hands a reference to each of the @n link descriptors @fds to a detached
 * process.  Returns the write end of the pipe it waits on: the caller
 * drops its own references, then closes it.  -1 if nothing was handed (the
 * caller releases inline): TNFCTL_SYNC_RELEASE set, the caller init or a
 * subreaper (the releaser would become its child), or a clone refused.
 */
int tnf_links_hand_off(const int *fds, size_t n)
{
	const char *sync = getenv("TNFCTL_SYNC_RELEASE");
	sigset_t all, old;
	int p[2], st, sub = 0;
	long pid;

	if (!n || (sync && *sync) || getpid() == 1 ||
	    prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&sub, 0, 0, 0) || sub)
		return -1;
	if (pipe2(p, O_CLOEXEC))
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* exit signal 0: no SIGCHLD, and only a __WCLONE wait reaps it */
	pid = syscall(SYS_clone, 0UL, 0UL, NULL, NULL, 0UL);
	if (pid == 0)
		middle(fds, n, p[0]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (pid > 0) {
		while ((pid = waitpid((pid_t)pid, &st, __WCLONE)) < 0 && errno == EINTR)
			;
		if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			return p[1];
	}
	close(p[1]);
	return -1;
}
