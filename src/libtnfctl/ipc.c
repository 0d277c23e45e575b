// SPDX-License-Identifier: BSD-2-Clause
/* Packet send/receive with an optional file descriptor (SCM_RIGHTS). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "proto.h"

/* @flags: sendmsg's, beside MSG_NOSIGNAL (MSG_DONTWAIT: the engine's). */
int tnf_send_flags(int sock, const void *buf, size_t len, int fd, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL | flags);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

int tnf_send(int sock, const void *buf, size_t len, int fd)
{
	return tnf_send_flags(sock, buf, len, fd, 0);
}

/* Returns the packet length, 0 on EOF, -1 on error (errno set). */
static ssize_t recv_flags(int sock, void *buf, size_t len, int *fd, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	ssize_t n;

	if (fd)
		*fd = -1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int got;

			memcpy(&got, CMSG_DATA(c), sizeof(int));
			if (fd && *fd < 0)
				*fd = got;
			else
				close(got);
		}
	}
	return n;
}

ssize_t tnf_recv(int sock, void *buf, size_t len, int *fd)
{
	return recv_flags(sock, buf, len, fd, 0);
}

/*
 * The helper's: an epoll batch can hold a stale event for a socket closed
 * earlier in the batch whose number a new handle's socket took; blocking
 * there would stall every target until that handle's first request.
 */
ssize_t tnf_recv_nowait(int sock, void *buf, size_t len, int *fd)
{
	return recv_flags(sock, buf, len, fd, MSG_DONTWAIT);
}
