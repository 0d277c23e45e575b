// SPDX-License-Identifier: BSD-2-Clause
/*
 * execopen - P6: what starting a program under control costs, on the public
 * API, side by side in one run, interleaved in every round:
 *   cold     tnfctl_exec_open(PROG) to its stop at the rtld sync point, then
 *            tnfctl_close(RESUME) and waitpid (the target is our child),
 *            with an engine of its own each time (TNFCTL_ENGINE_PRIVATE):
 *            the engine's start and BPF load included
 *   running  the same with an engine already running (it lingers between
 *            the opens): a new caller's connection and the open, what a
 *            tool started against a warm engine pays
 *   held     the same while another handle is held open (a second target,
 *            kept stopped): the connection is up too, the open alone
 *   plain    fork + execv + waitpid of PROG
 * and prints the median per-round ratios to plain and the differences
 * from plain, with min and max, and the absolute times.
 *
 * execopen [-r ROUNDS] [-n PER_ROUND] [PROG]     (PROG: /bin/true)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static char *prog = "/bin/true";

static void fail(const char *what, tnfctl_errcode_t err)
{
	fprintf(stderr, "execopen: %s: %s\n", what, tnfctl_strerror(err));
	exit(1);
}

static void one_open(void)
{
	char *argv[] = {prog, NULL};
	tnfctl_trace_attrs_t a;
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
	int st;

	if ((err = tnfctl_exec_open(prog, argv, NULL, NULL, NULL, &h)))
		fail(prog, err);
	if ((err = tnfctl_trace_attrs_get(h, &a)))
		fail("trace_attrs_get", err);
	if ((err = tnfctl_close(h, TNFCTL_TARG_RESUME)))
		fail("close", err);
	if (waitpid(a.targ_pid, &st, 0) != a.targ_pid || !WIFEXITED(st)) {
		fprintf(stderr, "execopen: %s did not exit normally\n", prog);
		exit(1);
	}
}

static void one_plain(void)
{
	char *argv[] = {prog, NULL};
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		perror("execopen: fork");
		exit(1);
	}
	if (!pid) {
		execv(prog, argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "execopen: %s failed\n", prog);
		exit(1);
	}
}

/* mean µs of @n calls of @fn */
static double per_op(void (*fn)(void), int n)
{
	long long t0 = now_ns();

	for (int i = 0; i < n; i++)
		fn();
	return (now_ns() - t0) / 1e3 / n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void pr(const char *what, double *v, int n, const char *unit)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("  %-22s median %9.3f%s (min %.3f, max %.3f)\n", what, v[n / 2], unit, v[0],
	       v[n - 1]);
}

#define MAXR 101

static double cold_open(int n)
{
	double t;

	setenv("TNFCTL_ENGINE_PRIVATE", "1", 1);
	t = per_op(one_open, n);
	unsetenv("TNFCTL_ENGINE_PRIVATE");
	return t;
}

int main(int argc, char **argv)
{
	static double c[MAXR], o[MAXR], w[MAXR], p[MAXR], rc[MAXR], r1[MAXR], r2[MAXR],
		d1[MAXR], d2[MAXR];
	char *sargv[] = {"sleep", "1000", NULL};
	int rounds = 7, n = 20, ch, k;
	tnfctl_trace_attrs_t a;
	tnfctl_handle_t *keep;
	tnfctl_errcode_t err;

	while ((ch = getopt(argc, argv, "r:n:")) != -1) {
		switch (ch) {
		case 'r': rounds = atoi(optarg); break;
		case 'n': n = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: execopen [-r ROUNDS] [-n PER_ROUND] [PROG]\n");
			return 2;
		}
	}
	if (optind < argc)
		prog = argv[optind];
	if (rounds < 1 || rounds > MAXR || n < 1)
		return 2;
	/* the shared engine stays between the opens of "running" */
	setenv("TNFCTL_ENGINE_LINGER", "10", 1);
	one_plain(); /* page cache */
	one_open(); /* the shared engine up */
	for (k = 0; k < rounds; k++) {
		c[k] = cold_open(n);
		o[k] = per_op(one_open, n);
		if ((err = tnfctl_exec_open("sleep", sargv, NULL, NULL, NULL, &keep)))
			fail("sleep", err);
		if ((err = tnfctl_trace_attrs_get(keep, &a)))
			fail("trace_attrs_get", err);
		w[k] = per_op(one_open, n);
		tnfctl_close(keep, TNFCTL_TARG_KILL);
		waitpid(a.targ_pid, NULL, 0);
		p[k] = per_op(one_plain, n);
		rc[k] = c[k] / p[k];
		r1[k] = o[k] / p[k];
		r2[k] = w[k] / p[k];
		d1[k] = (o[k] - p[k]) / 1e3;
		d2[k] = (w[k] - p[k]) / 1e3;
	}
	printf("execopen: %s, %d rounds of %d of each, interleaved\n", prog, rounds, n);
	pr("cold / plain", rc, rounds, "x");
	pr("running / plain", r1, rounds, "x");
	pr("held / plain", r2, rounds, "x");
	pr("running - plain", d1, rounds, " ms");
	pr("held - plain", d2, rounds, " ms");
	pr("cold open", c, rounds, " us");
	pr("running open", o, rounds, " us");
	pr("held open", w, rounds, " us");
	pr("plain fork+exec+wait", p, rounds, " us");
	return 0;
}
