// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_engine_hold: a $TNFCTL_ENGINE for tests that hold the engine at a
 * racy point (tests/holdlib.h).  It installs a seccomp filter that hands
 * every PTRACE_SEIZE and PTRACE_INTERRUPT of the engine to a listener,
 * sends the listener to the test on the abstract unix socket named by
 * $TL_HOLD_NAME, and execs $TL_HOLD_ENGINE with its own arguments.  The
 * test answers each call (SECCOMP_USER_NOTIF_FLAG_CONTINUE: it runs as
 * it would have), and answers the one it holds only once it has made the
 * race happen.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HOLD_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HOLD_ARCH AUDIT_ARCH_AARCH64
#else
#error "tl_engine_hold: no seccomp arch for this machine"
#endif

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HOLD_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* the request: args[0]'s low word (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PTRACE_SEIZE, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PTRACE_INTERRUPT, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		       &prog);
}

/* @fd to the test, on the abstract name @name. */
static int send_listener(const char *name, int fd)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char cbuf[CMSG_SPACE(sizeof(int))], byte = 'L';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	size_t len = strlen(name);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0 || len + 1 > sizeof(a.sun_path))
		return -1;
	memcpy(a.sun_path + 1, name, len);
	if (connect(s, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + len))
		return -1;
	memset(cbuf, 0, sizeof(cbuf));
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(s, &m, 0) != 1)
		return -1;
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = getenv("TL_HOLD_NAME");
	const char *engine = getenv("TL_HOLD_ENGINE");
	int fd;

	(void)argc;
	if (!engine) {
		fprintf(stderr, "tl_engine_hold: no $TL_HOLD_ENGINE\n");
		return 127;
	}
	if (name && *name) {
		fd = install_filter();
		if (fd < 0 || send_listener(name, fd)) {
			fprintf(stderr, "tl_engine_hold: %s\n", strerror(errno));
			return 127;
		}
		close(fd);
	}
	argv[0] = (char *)engine;
	execv(engine, argv);
	fprintf(stderr, "tl_engine_hold: %s: %s\n", engine, strerror(errno));
	return 127;
}
