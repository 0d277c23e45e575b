// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl-engine: the helper program libtnfctl starts by exec (posix_spawn),
 * never as a fork of the caller that goes on without exec: the fork child
 * of a multi-threaded caller inherits locks other threads held (malloc, a
 * sanitizer's allocator, libbpf's), and only async-signal-safe calls are
 * defined there.  Its client's socket is descriptor 3 (a SOCK_SEQPACKET
 * unix socket, proto.h); tnfctl-engine(8) says how it is found and run.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tracer.h"

#define CLIENT_FD 3

#define LINGER_DEFAULT_MS 5000

static void usage(FILE *f)
{
	fprintf(f, "usage: tnfctl-engine [--linger=SECONDS] [--name=NAME | --private]\n"
		   "       tnfctl-engine --resident [--name=NAME]\n"
		   "The helper program of libtnfctl(3).  The library starts it, with its first\n"
		   "client's socket as descriptor 3; --resident starts one with no client, to\n"
		   "stay.  It serves every client of its user and privilege set, and ends when\n"
		   "its last client has gone and SECONDS passed ($TNFCTL_ENGINE_LINGER, else 5).\n"
		   "See tnfctl-engine(8).\n");
}

/* SECONDS (0 to 86400, decimals allowed) as ms, or -1. */
static long long parse_linger(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= 0 && v <= 86400))
		return -1;
	return (long long)(v * 1000);
}

/*
 * The caller never gains a privilege through the engine: the exec gave a
 * root engine every capability of the bounding set, a root caller may have
 * dropped some.  Keep only what the client has in its effective set.
 */
static int limit_caps(pid_t client)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	uint64_t eff;
	int i;

	if (tnf_proc_caps_eff(client, &eff) || syscall(SYS_capget, &h, d))
		return -1;
	for (i = 0; i < 2; i++) {
		uint32_t keep = (uint32_t)(eff >> (32 * i));

		d[i].permitted &= keep;
		d[i].effective &= keep;
		d[i].inheritable = 0;
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return (int)syscall(SYS_capset, &h, d);
}

/* Descriptor 3 is a client socket of our own user: anything else is not our caller. */
static int check_client(void)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int type = 0;

	len = sizeof(type);
	if (getsockopt(CLIENT_FD, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET) {
		fprintf(stderr,
			"tnfctl-engine: descriptor %d is not a client socket (libtnfctl starts "
			"the engine; --resident starts one by hand)\n",
			CLIENT_FD);
		return -1;
	}
	len = sizeof(cr);
	if (getsockopt(CLIENT_FD, SOL_SOCKET, SO_PEERCRED, &cr, &len) || cr.uid != geteuid()) {
		fprintf(stderr, "tnfctl-engine: the client is not of this user\n");
		return -1;
	}
	if (limit_caps(cr.pid)) {
		fprintf(stderr, "tnfctl-engine: cannot take the client's capabilities: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},     {"linger", required_argument, NULL, 'l'},
		{"resident", no_argument, NULL, 'r'}, {"name", required_argument, NULL, 'n'},
		{"private", no_argument, NULL, 'p'},  {NULL, 0, NULL, 0},
	};
	struct tnf_rep hello = {.kind = TNF_REP_HELLO, .exit_status = TNF_PROTO_VERSION};
	struct tnf_engine_opts o = {.linger_ms = LINGER_DEFAULT_MS};
	const char *env = getenv("TNFCTL_ENGINE_LINGER");
	bool linger_set = false;
	pid_t pid;
	int c;

	if (env && *env && parse_linger(env) >= 0)
		o.linger_ms = parse_linger(env);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'l':
			linger_set = true;
			o.linger_ms = parse_linger(optarg);
			if (o.linger_ms < 0) {
				fprintf(stderr,
					"tnfctl-engine: --linger=%s: not a number of seconds "
					"from 0 to 86400\n",
					optarg);
				return 2;
			}
			break;
		case 'r':
			o.resident = true;
			break;
		case 'n':
			if (!*optarg || strlen(optarg) >= TNF_ENGINE_NAME_MAX - 1) {
				fprintf(stderr, "tnfctl-engine: --name: empty or too long\n");
				return 2;
			}
			o.name = optarg;
			break;
		case 'p':
			o.private_ = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	/* In the foreground, as a service manager runs it: no client to answer. */
	if (o.resident && linger_set) {
		fprintf(stderr,
			"tnfctl-engine: --resident stays for good: --linger is not for it\n");
		return 2;
	}
	if (o.resident)
		return tnf_tracer_main(-1, &o);
	if (check_client())
		return 2;
	/* At once, before any slow start-up: the library bounds its wait for this. */
	if (tnf_send(CLIENT_FD, &hello, tnf_rep_len(&hello), -1))
		return 1;
	/* Nothing of the caller's but the socket (close_range: 5.9+; tracer.c closes again). */
	syscall(SYS_close_range, CLIENT_FD + 1, ~0U, 0);
	/*
	 * Not the caller's child: the library waits for this first process,
	 * and the engine (single-threaded here, freshly exec'd) goes on in
	 * its child, reparented to init or the caller's subreaper.
	 */
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "tnfctl-engine: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid > 0)
		_exit(0);
	return tnf_tracer_main(CLIENT_FD, &o);
}
