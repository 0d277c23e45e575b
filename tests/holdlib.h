/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The engine held at a racy point, for tests that force a race window
 * instead of waiting for it.  hold_start() makes this process's engine
 * tests/helpers/tl_engine_hold (a private engine, started by the next
 * tnfctl call), whose PTRACE_SEIZE and PTRACE_INTERRUPT calls come to a
 * thread here: each is let through as it is, except the first that
 * matches hold_arm()'s request, which waits in the engine until the
 * test's callback has made the racing thing happen.  Included by a test
 * after testlib.h; one hold per test, and the test's engine must end
 * before hold_end() returns (its last handle closed).
 *
 * The serving thread ends when the engine does, seen through its pidfd:
 * not on the listener's POLLHUP, which comes once no task uses the filter
 * any more; before Linux 6.11 ("seccomp: release task filters when the
 * task exits") a task stops using it only when reaped, and the engine's
 * reaper is this process (PR_SET_CHILD_SUBREAPER), whose thread waits in
 * hold_end() or the teardown for the serving thread to end.
 */
#ifndef TL_HOLDLIB_H
#define TL_HOLDLIB_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/un.h>

struct hold {
	int lsock;	    /* the name tl_engine_hold connects to */
	pthread_t thread;   /* serves the engine's calls */
	long op;	    /* the ptrace request to hold */
	pid_t not_tid;	    /* ... on any thread but this one */
	void (*at)(void *); /* run while the engine waits in it */
	void *arg;
	_Atomic int armed;	   /* hold_arm called */
	_Atomic int held;	   /* times it was held (0 or 1) */
	pid_t engine;		   /* the engine, once it called (killed by the teardown) */
	_Atomic int engine_fd;	   /* its pidfd, -1 before */
	_Atomic int stop;	   /* hold_end: serve no more */
	char old_engine[PATH_MAX]; /* $TNFCTL_ENGINE before, or "" */
	bool was_private;	   /* $TNFCTL_ENGINE_PRIVATE set before */
};

/* The listener tl_engine_hold sends on the connection it makes, or -1. */
static inline int hold_listener(struct hold *h)
{
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct pollfd pfd = {.fd = h->lsock, .events = POLLIN};
	struct cmsghdr *c;
	int s, fd = -1;

	if (poll(&pfd, 1, tl.timeout_ms) != 1)
		return -1;
	s = accept4(h->lsock, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0)
		return -1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) == 1 && (c = CMSG_FIRSTHDR(&m)) &&
	    c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	close(s);
	return fd;
}

/* The engine calls for the first time: it is known, and tracked. */
static inline void hold_engine_known(struct hold *h, pid_t pid)
{
	h->engine = pid;
	tl_track_pid(pid);
	h->engine_fd = tl_pidfd_open(pid);
}

/*
 * Until the engine has exited (or hold_end says so): every call let
 * through, the armed one after h->at.  A tick of 100 ms looks at h->stop.
 */
static inline void *hold_fn(void *arg)
{
	struct hold *h = arg;
	int fd = hold_listener(h);

	if (fd < 0) {
		fprintf(stderr, "hold: no listener from tl_engine_hold\n");
		return NULL;
	}
	for (;;) {
		struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN},
					{.fd = h->engine_fd, .events = POLLIN}};
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;

		if (poll(pfd, h->engine_fd >= 0 ? 2 : 1, 100) < 0 && errno == EINTR)
			continue;
		if (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break; /* no task uses the filter any more */
		if (!(pfd[0].revents & POLLIN)) {
			if (pfd[1].revents || h->stop)
				break; /* the engine has exited: no call can come */
			continue;
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req))
			continue;
		if (!h->engine)
			hold_engine_known(h, req.pid);
		if (h->armed && !h->held && (long)req.data.args[0] == h->op &&
		    (pid_t)req.data.args[1] != h->not_tid) {
			h->held = 1;
			h->at(h->arg);
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	close(fd);
	return NULL;
}

/*
 * This process's engine becomes a held one: call before its first tnfctl
 * call.  The first ptrace(@op) on a thread other than @not_tid (set it
 * later with hold_arm) waits in the engine while @at(@arg) runs.
 */
static inline void hold_start(struct hold *h, long op, void (*at)(void *), void *arg)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	static int nholds;
	char name[64], path[PATH_MAX];
	int len;

	memset(h, 0, sizeof(*h));
	h->engine_fd = -1;
	h->op = op;
	h->not_tid = -1;
	h->at = at;
	h->arg = arg;
	len = snprintf(name, sizeof(name), "tl-hold/%d/%d", (int)getpid(), nholds++);
	h->lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(h->lsock >= 0);
	memcpy(a.sun_path + 1, name, len);
	if (bind(h->lsock, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + len) ||
	    listen(h->lsock, 1))
		fail_msg("hold: cannot listen on @%s: %s", name, strerror(errno));
	setenv("TL_HOLD_NAME", name, 1);
	snprintf(h->old_engine, sizeof(h->old_engine), "%s",
		 getenv("TNFCTL_ENGINE") ? getenv("TNFCTL_ENGINE") : "");
	tl_path_of(path, "tnfctl-engine");
	setenv("TL_HOLD_ENGINE", *h->old_engine ? h->old_engine : path, 1);
	tl_path_of(path, "tests/helpers/tl_engine_hold");
	setenv("TNFCTL_ENGINE", path, 1);
	h->was_private = getenv("TNFCTL_ENGINE_PRIVATE") != NULL;
	setenv("TNFCTL_ENGINE_PRIVATE", "1", 1);
	h->thread = tl_thread_start(hold_fn, h);
}

/* Only a thread other than @not_tid is held (-1: any). */
static inline void hold_arm(struct hold *h, pid_t not_tid)
{
	h->not_tid = not_tid;
	h->armed = 1;
}

/*
 * Once the engine is gone (within the timeout, else the test fails): the
 * serving thread joined, the environment as it was.
 */
static inline void hold_end(struct hold *h)
{
	bool alive = h->engine_fd >= 0 && tl_pidfd_wait(h->engine_fd, tl.timeout_ms);

	h->stop = 1;
	tl_thread_join(h->thread);
	if (h->engine_fd >= 0)
		close(h->engine_fd);
	close(h->lsock);
	unsetenv("TL_HOLD_NAME");
	unsetenv("TL_HOLD_ENGINE");
	if (*h->old_engine)
		setenv("TNFCTL_ENGINE", h->old_engine, 1);
	else
		unsetenv("TNFCTL_ENGINE");
	if (!h->was_private)
		unsetenv("TNFCTL_ENGINE_PRIVATE");
	if (alive)
		fail_msg("hold: the engine %d still runs %d ms after its last handle closed",
			 (int)h->engine, tl.timeout_ms);
}

#endif
