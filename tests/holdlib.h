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
 */
#ifndef TL_HOLDLIB_H
#define TL_HOLDLIB_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/un.h>

struct hold {
	int lsock;	     /* the name tl_engine_hold connects to */
	pthread_t thread;    /* serves the engine's calls */
	long op;	     /* the ptrace request to hold */
	pid_t not_tid;	     /* ... on any thread but this one */
	void (*at)(void *);  /* run while the engine waits in it */
	void *arg;
	_Atomic int armed;   /* hold_arm called */
	_Atomic int held;    /* times it was held (0 or 1) */
	pid_t engine;	     /* the engine, once it called (killed by the teardown) */
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

/* Until the engine is gone: every call let through, the armed one after h->at. */
static inline void *hold_fn(void *arg)
{
	struct hold *h = arg;
	int fd = hold_listener(h);

	if (fd < 0) {
		fprintf(stderr, "hold: no listener from tl_engine_hold\n");
		return NULL;
	}
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;

		if (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			continue;
		if (!(pfd.revents & POLLIN))
			break; /* POLLHUP: the engine is gone */
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req))
			continue;
		if (!h->engine) {
			h->engine = req.pid;
			tl_track_pid(req.pid);
		}
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

/* Once the engine is gone: the serving thread joined, the environment as it was. */
static inline void hold_end(struct hold *h)
{
	tl_thread_join(h->thread);
	close(h->lsock);
	unsetenv("TL_HOLD_NAME");
	unsetenv("TL_HOLD_ENGINE");
	if (*h->old_engine)
		setenv("TNFCTL_ENGINE", h->old_engine, 1);
	else
		unsetenv("TNFCTL_ENGINE");
	if (!h->was_private)
		unsetenv("TNFCTL_ENGINE_PRIVATE");
}

#endif
