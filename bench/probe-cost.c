// SPDX-License-Identifier: BSD-2-Clause
/*
 * probe-cost - what a probe costs, side by side in one run: ns per loop
 * iteration (a) without a probe, (b) with a disabled probe, (c) with an
 * enabled, traced probe of two arguments (tnf_long, tnf_string); each round
 * runs the three loops back to back, and the costs over no probe are the
 * median of the per-round differences; then bytes of trace file per 1000
 * events.  Run with
 * libtnfprobe in LD_PRELOAD (make bench does); it is its own controller.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include "tp_selfctl.h"

#define ROUNDS 9
#define ITERS  2000000

static volatile long sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void loop_plain(long n)
{
	long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void loop_disabled(long n)
{
	long i;

	for (i = 0; i < n; i++) {
		sink += i;
		TNF_PROBE_2(off, "bench", "", tnf_long, i, i, tnf_string, s, "abc");
	}
}

__attribute__((noinline)) static void loop_traced(long n)
{
	long i;

	for (i = 0; i < n; i++) {
		sink += i;
		TNF_PROBE_2(on, "bench", "", tnf_long, i, i, tnf_string, s, "abc");
	}
}

static double per_call(void (*fn)(long), long n)
{
	long long t0 = now_ns();

	fn(n);
	return (double)(now_ns() - t0) / n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	const char *file = "/tmp/probe-cost.tnf";
	size_t size = 64u << 20;
	double r[3][ROUNDS], d[3][ROUNDS];
	uint64_t t0, t1;
	char *map;
	int i, k, fd;

	if (tp_ctl_init() || tp_ctl_file(file, size, 1)) {
		fprintf(stderr, "probe-cost: needs LD_PRELOAD=libtnfprobe.so.1 and /tmp\n");
		return 1;
	}
	tp_enable("on", 1);
	loop_traced(1000); /* maps and formats the file, writes the probe's type */
	for (k = 0; k < ROUNDS; k++) {
		r[0][k] = per_call(loop_plain, ITERS);
		r[1][k] = per_call(loop_disabled, ITERS);
		r[2][k] = per_call(loop_traced, ITERS);
		/* the cost over the loop without a probe of the same round */
		d[1][k] = r[1][k] - r[0][k];
		d[2][k] = r[2][k] - r[0][k];
	}
	for (i = 0; i < 3; i++) {
		qsort(r[i], ROUNDS, sizeof(double), cmp);
		if (i)
			qsort(d[i], ROUNDS, sizeof(double), cmp);
	}
	printf("probe-cost: ns per iteration, median of %d rounds of %d;\n"
	       "  (+x): median (min..max) of the per-round differences from no probe\n",
	       ROUNDS, ITERS);
	printf("  no probe               %7.2f\n", r[0][ROUNDS / 2]);
	for (i = 1; i < 3; i++)
		printf("  %-22s %7.2f  (%+.2f; %+.2f..%+.2f)\n",
		       i == 1 ? "disabled probe" : "traced 2-arg probe", r[i][ROUNDS / 2],
		       d[i][ROUNDS / 2], d[i][0], d[i][ROUNDS - 1]);

	/* data blocks handed out (file header ticket) per events written */
	fd = open(file, O_RDONLY | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (map == MAP_FAILED)
		return 1;
	t0 = *(volatile uint64_t *)(map + 40);
	loop_traced(100000);
	t1 = *(volatile uint64_t *)(map + 40);
	printf("  trace file per 1000 events: %.0f bytes (tnf_long + 3-char tnf_string)\n",
	       (double)(t1 - t0) * 512 / 100);
	unlink(file);
	return 0;
}
