// SPDX-License-Identifier: BSD-2-Clause
/*
 * ktrace - the driver of bench/ktrace-cost: what one enabled kernel
 * tracepoint costs under the library's kernel mode (tnfctl_kernel_open).
 *
 *   ktrace loop [-s SYSCALL] [-n N] [-t TIMEFILE]
 *       The workload: N getppid() (SYSCALL getppid, the default) or N
 *       openat("/dev/null") + close (SYSCALL openat), one after the other
 *       in one thread.  Writes the loop's time in ns, "WALL CPU"
 *       (CLOCK_MONOTONIC and the thread's CLOCK_THREAD_CPUTIME_ID, round
 *       the loop only: no start-up, no exit), to TIMEFILE, or stdout.
 *
 *   ktrace tnf [-s SYSCALL] [-n N] [-t TIMEFILE] [-b BYTES] -f TNFFILE
 *       tnfctl_kernel_open, enables and traces the one probe
 *       syscalls/sys_enter_SYSCALL, tnfctl_buffer_alloc(TNFFILE, BYTES)
 *       (default 64 MiB), tracing on, then runs "ktrace loop" (this program,
 *       fork + exec, so that the workload is the same process image as
 *       under bpftrace -c and perf record), waits for it, tracing off (which
 *       drains what the kernel wrote into the file), tnfctl_close.  Prints
 *       on stdout "open_ms O setup_ms S off_ms F close_ms C" (the kernel
 *       open, buffer_alloc + tracing on, tracing off, close), the loop's
 *       time goes to TIMEFILE as above.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

static const char *sc = "getppid";
static long n = 1000000;
static const char *timefile;
static const char *tnffile;
static unsigned long bytes = 64ul << 20;

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void usage(void)
{
	fprintf(stderr, "usage: ktrace loop [-s getppid|openat] [-n N] [-t TIMEFILE]\n"
			"       ktrace tnf [-s getppid|openat] [-n N] [-t TIMEFILE] [-b BYTES] "
			"-f TNFFILE\n");
	exit(2);
}

static int loop(void)
{
	long long t0, t1, c0, c1;
	FILE *f = stdout;
	long i;

	if (!strcmp(sc, "getppid")) {
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		t1 = now_ns();
		c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} else {
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

			if (fd < 0) {
				perror("ktrace: /dev/null");
				return 1;
			}
			close(fd);
		}
		t1 = now_ns();
		c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	}
	if (timefile && !(f = fopen(timefile, "w"))) {
		perror(timefile);
		return 1;
	}
	fprintf(f, "%lld %lld\n", t1 - t0, c1 - c0);
	return fclose(f) ? 1 : 0;
}

static char want[64];
static int nwant;

static tnfctl_errcode_t pick(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err;

	(void)cd;
	if ((err = tnfctl_probe_state_get(h, p, &st)))
		return err;
	if (strncmp(st.attr_string, want, strlen(want)) || !strstr(st.attr_string, "keys syscalls"))
		return TNFCTL_ERR_NONE;
	nwant++;
	if ((err = tnfctl_probe_enable(h, p, NULL)))
		return err;
	return tnfctl_probe_trace(h, p, NULL);
}

static void fail(const char *what, tnfctl_errcode_t err)
{
	fprintf(stderr, "ktrace: %s: %s\n", what, tnfctl_strerror(err));
	exit(1);
}

static int tnf(void)
{
	char nbuf[32], self[4096];
	char *argv[] = {self, "loop", "-s", (char *)sc, "-n", nbuf, "-t", (char *)timefile, NULL};
	long long t0, t1, t2, t3, t4, t5;
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
	ssize_t len;
	pid_t pid;
	int st;

	if (!tnffile || !timefile)
		usage();
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		perror("ktrace: /proc/self/exe");
		return 1;
	}
	self[len] = 0;
	snprintf(nbuf, sizeof(nbuf), "%ld", n);
	snprintf(want, sizeof(want), "name sys_enter_%s;", sc);

	t0 = now_ns();
	if ((err = tnfctl_kernel_open(&h)))
		fail("tnfctl_kernel_open", err);
	if ((err = tnfctl_probe_apply(h, pick, NULL)))
		fail("tnfctl_probe_apply", err);
	if (nwant != 1) {
		fprintf(stderr, "ktrace: %d probes match \"%s...keys syscalls\"\n", nwant, want);
		return 1;
	}
	t1 = now_ns();
	if ((err = tnfctl_buffer_alloc(h, tnffile, bytes)))
		fail("tnfctl_buffer_alloc", err);
	if ((err = tnfctl_trace_state_set(h, B_TRUE)))
		fail("tnfctl_trace_state_set on", err);
	t2 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("ktrace: fork");
		return 1;
	}
	if (!pid) {
		execv(self, argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "ktrace: the workload failed\n");
		return 1;
	}
	t3 = now_ns();
	if ((err = tnfctl_trace_state_set(h, B_FALSE)))
		fail("tnfctl_trace_state_set off", err);
	t4 = now_ns();
	if ((err = tnfctl_close(h, TNFCTL_TARG_DEFAULT)))
		fail("tnfctl_close", err);
	t5 = now_ns();
	printf("open_ms %.3f setup_ms %.3f off_ms %.3f close_ms %.3f\n", (t1 - t0) / 1e6,
	       (t2 - t1) / 1e6, (t4 - t3) / 1e6, (t5 - t4) / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	char *end;
	int opt;

	if (argc < 2)
		usage();
	cmd = argv[1];
	argv++;
	argc--;
	while ((opt = getopt(argc, argv, "s:n:t:b:f:h")) != -1) {
		switch (opt) {
		case 's':
			sc = optarg;
			break;
		case 'n':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || n < 1)
				usage();
			break;
		case 't':
			timefile = optarg;
			break;
		case 'b':
			errno = 0;
			bytes = strtoul(optarg, &end, 10);
			if (errno || *end || !bytes)
				usage();
			break;
		case 'f':
			tnffile = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || (strcmp(sc, "getppid") && strcmp(sc, "openat")))
		usage();
	if (!strcmp(cmd, "loop"))
		return loop();
	if (!strcmp(cmd, "tnf"))
		return tnf();
	usage();
	return 2;
}
