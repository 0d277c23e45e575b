// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_pidfd_broker: pidfd_open(2) and pidfd_send_signal(2) for a test
 * program that cannot make them itself.  valgrind 3.19 (Debian 12) knows
 * neither syscall and fails both with ENOSYS, so a test binary run under
 * memcheck starts this program (exec'd, so it runs natively: valgrind
 * does not follow exec by default) and asks it instead; testlib.h does
 * that by itself when pidfd_open fails with ENOSYS.
 *
 *   tl_pidfd_broker FD
 *
 * FD is its end of a SOCK_SEQPACKET socket pair.  Each request is one
 * struct tl_broker_req with a reply socket attached (SCM_RIGHTS), and for
 * TL_BROKER_KILL the pidfd to signal after it; the reply, one struct
 * tl_broker_rep on the reply socket, carries the new pidfd for
 * TL_BROKER_OPEN.  A reply socket per request lets any thread, or a forked
 * child of the test, ask at any time.  It exits when the other end is
 * closed (the test and all its forks are gone).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tl_pidfd_broker.h"

static int recv_req(int sock, struct tl_broker_req *req, int fds[2])
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = {.iov_base = req, .iov_len = sizeof(*req)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	ssize_t n;

	fds[0] = fds[1] = -1;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1; /* the test is gone */
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fds, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
	return n == sizeof(*req) ? 0 : 1;
}

static void reply(int sock, long ret, int err, int fd)
{
	struct tl_broker_rep rep = {.ret = ret < 0 ? -1 : 0, .err = ret < 0 ? err : 0};
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &rep, .iov_len = sizeof(rep)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(sock, &m, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	struct tl_broker_req req;
	int sock, fds[2], r;

	if (argc != 2)
		return 2;
	sock = atoi(argv[1]);
	while ((r = recv_req(sock, &req, fds)) >= 0) {
		long ret = -1;
		int fd = -1;

		errno = EINVAL;
		if (r == 0 && req.op == TL_BROKER_OPEN) {
			ret = syscall(SYS_pidfd_open, req.pid, 0);
			fd = ret;
		} else if (r == 0 && req.op == TL_BROKER_KILL && fds[1] >= 0) {
			ret = syscall(SYS_pidfd_send_signal, fds[1], req.sig, NULL, 0);
		}
		if (fds[0] >= 0)
			reply(fds[0], ret, errno, fd);
		if (fd >= 0)
			close(fd);
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
	}
	return 0;
}
