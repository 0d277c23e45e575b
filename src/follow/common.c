// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl-follow: what both modes share (follow.h): the state the signal
 * handlers and the modes share, messages, why an open failed, and the end
 * (the output closed, the root's signal).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

#include "follow.h"
#include "follow_out.h"

const char *out_name = "stdout"; /* for a write error's message */

int done_fd = -1;	   /* eventfd: all followers ended */
int wake_fd[2] = {-1, -1}; /* self-pipe of on_term() */
atomic_int stop_sig;	   /* -p: termination signal, 0 if none */
atomic_uint fwd_pending;   /* CMD: signals to pass on (bit N) */
int fwd_sig;		   /* last signal passed on to the tree, 0 if none */
uint64_t fwd_ns;	   /* when (both under stop.c's lock in the stopping mode) */
bool attached;		   /* -p PID: detach on a signal instead of passing it on */

/* The signals tnfctl-follow passes on to the tree (CMD) or detaches on (-p). */
const int term_sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

/*
 * A message line on stderr, in one write(): the tree writes its own lines
 * to the same stderr, and a message written a piece at a time (stderr is
 * unbuffered: a write() per stdio call) could have one land in its middle.
 */
__attribute__((format(printf, 1, 2))) void msg(const char *fmt, ...)
{
	static const char prefix[] = "tnfctl-follow: ";
	char small[1024], *buf = small;
	size_t len, off = 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = sizeof(prefix) - 1 + (size_t)n + 1;
	if (len + 1 > sizeof(small) && !(buf = malloc(len + 1)))
		return;
	memcpy(buf, prefix, sizeof(prefix) - 1);
	va_start(ap, fmt);
	vsnprintf(buf + sizeof(prefix) - 1, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf[len - 1] = '\n';
	flockfile(stderr); /* after what another thread prints with stdio */
	while (off < len) {
		ssize_t w = write(STDERR_FILENO, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += w;
	}
	funlockfile(stderr);
	if (buf != small)
		free(buf);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The capabilities BPF and ptrace need that the caller lacks, in @buf ("" if none). */
static void missing_caps(char *buf, size_t len)
{
	static const struct {
		int bit;
		const char *name;
	} caps[] = {{39, "CAP_BPF"}, {38, "CAP_PERFMON"}, {19, "CAP_SYS_PTRACE"}};
	unsigned long long eff = 0;
	char line[128];
	size_t i, n = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	buf[0] = '\0';
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (!(eff & (1ULL << caps[i].bit)) && n < len)
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", caps[i].name);
}

/*
 * The exit status of tnfctl-follow when CMD (@cmd) or PID cannot be
 * followed, after a message that says why; @e is the errno the open left.
 */
int open_failed(const char *name, bool cmd, tnfctl_errcode_t err, int e)
{
	char caps[64];
	struct stat st;

	if (err == TNFCTL_ERR_ACCES && e == EPERM) {
		missing_caps(caps, sizeof(caps));
		msg("not permitted to trace: BPF and ptrace need root, or CAP_BPF, CAP_PERFMON "
		    "and CAP_SYS_PTRACE%s%s%s",
		    caps[0] ? " (missing: " : "", caps, caps[0] ? ")" : "");
		return 1;
	}
	if (err == TNFCTL_ERR_INTERNAL && stat("/sys/kernel/btf/vmlinux", &st)) {
		msg("this kernel has no BTF (/sys/kernel/btf/vmlinux): it needs "
		    "CONFIG_DEBUG_INFO_BTF=y");
		return 1;
	}
	if (cmd && (err == TNFCTL_ERR_FILENOTFOUND || err == TNFCTL_ERR_ACCES)) {
		/* The reason execve (or the $PATH lookup) gave, as a shell says it. */
		if (!e || (err == TNFCTL_ERR_FILENOTFOUND && e != ENOENT && e != ENOTDIR))
			e = err == TNFCTL_ERR_FILENOTFOUND ? ENOENT : EACCES;
		msg("%s: %s", name, strerror(e));
		return err == TNFCTL_ERR_FILENOTFOUND ? 127 : 126;
	}
	if (cmd)
		msg("%s: %s", name, tnfctl_strerror(err));
	else
		msg("pid %s: %s", name, tnfctl_strerror(err));
	return 1;
}

/*
 * The root was killed by @sig: end the same way, so that a calling shell sees
 * it (bash stops a script on a child's SIGINT, not on an exit status of 130),
 * without a core file of our own.  Returns only if @sig does not kill us.
 */
void die_like(int sig)
{
	struct rlimit no_core = {0, 0};
	sigset_t set;

	if (sig <= 0 || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
		return;
	fflush(NULL);
	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/*
 * Ends the output.  A write that failed is said, and tnfctl-follow failed
 * (true: exit 1, whatever the tree's status).  But a pipe whose reader has
 * left (`tnfctl-follow -- CMD | head`, -o >(cmd)) is no failure: the reader
 * wanted no more, the events after it went nowhere, and tnfctl-follow ends
 * as CMD does, as the untraced `CMD | head` would, without a message.
 */
bool out_close(void)
{
	int e = follow_out_close(now_ns());

	if (!e || e == EPIPE)
		return false;
	msg("%s: write error: %s", out_name, strerror(e));
	return true;
}
