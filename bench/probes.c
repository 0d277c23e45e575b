// SPDX-License-Identifier: BSD-2-Clause
/*
 * probes - P3, P4, P5 side by side in one process, interleaved in every
 * round: ns per loop iteration of
 *   plain       the bare loop
 *   tnf_off     a disabled TNF probe                          (P3)
 *   ust_off     a disabled LTTng-UST tracepoint (reference)
 *   tnf_on      an enabled, traced 2-argument TNF probe        (P4)
 *   ust_on      an LTTng-UST tracepoint with the same payload  (P4)
 * with 1 thread, then tnf_on, ust_on and plain with 2 threads (P5:
 * throughput with 2 threads over throughput with 1; the bare loop's shows
 * what the machine gives two threads at that moment).  The payload of both is a long
 * (the loop counter) and the string "abc".
 *
 * TNF goes through the public API only: tnfctl_internal_open, then
 * tnfctl_buffer_alloc (a 64 MiB trace file in $TMPDIR or /tmp), then
 * tnfctl_probe_apply enabling "tnf_on".  LTTng records only if a session
 * with tnfbench:on enabled is active when the program starts (that is what
 * bench/probes-vs-lttng sets up); built without LTTng (-DNO_LTTNG) the ust
 * columns are skipped.
 *
 * probes [-r ROUNDS] [-n ITERS]       the figures
 * probes -w FILE -n EVENTS            write EVENTS tnf_on events into a new
 *                                     trace file FILE (for P7) and exit
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tnf/probe.h>
#include <tnf/tnfctl.h>

#ifndef NO_LTTNG
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "probes_tp.h"
#endif

/* per thread: a shared one would bounce its cache line between the 2 threads */
static __thread volatile long sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void loop_plain(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void loop_tnf_off(long n)
{
	for (long i = 0; i < n; i++) {
		sink += i;
		TNF_PROBE_2(tnf_off, "bench", "", tnf_long, i, i, tnf_string, s, "abc");
	}
}

__attribute__((noinline)) static void loop_tnf_on(long n)
{
	for (long i = 0; i < n; i++) {
		sink += i;
		TNF_PROBE_2(tnf_on, "bench", "", tnf_long, i, i, tnf_string, s, "abc");
	}
}

#ifndef NO_LTTNG
__attribute__((noinline)) static void loop_ust_off(long n)
{
	for (long i = 0; i < n; i++) {
		sink += i;
		lttng_ust_tracepoint(tnfbench, off, i, "abc");
	}
}

__attribute__((noinline)) static void loop_ust_on(long n)
{
	for (long i = 0; i < n; i++) {
		sink += i;
		lttng_ust_tracepoint(tnfbench, on, i, "abc");
	}
}
#endif

struct job {
	void (*fn)(long);
	long n;
	pthread_barrier_t *bar;
	long long t0, t1;
};

static void *worker(void *arg)
{
	struct job *j = arg;

	pthread_barrier_wait(j->bar);
	j->t0 = now_ns();
	j->fn(j->n);
	j->t1 = now_ns();
	return NULL;
}

/*
 * ns per iteration of @fn run @n times in each of @nthr threads: from the
 * first thread's start to the last one's end, over n.
 */
static double run(void (*fn)(long), long n, int nthr)
{
	pthread_barrier_t bar;
	pthread_t t[2];
	struct job j[2];
	long long t0, t1;
	int i;

	pthread_barrier_init(&bar, NULL, nthr);
	for (i = 0; i < nthr; i++) {
		j[i] = (struct job){fn, n, &bar, 0, 0};
		if (pthread_create(&t[i], NULL, worker, &j[i]))
			abort();
	}
	for (i = 0; i < nthr; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
	t0 = j[0].t0;
	t1 = j[0].t1;
	for (i = 1; i < nthr; i++) {
		t0 = j[i].t0 < t0 ? j[i].t0 : t0;
		t1 = j[i].t1 > t1 ? j[i].t1 : t1;
	}
	return (double)(t1 - t0) / n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* "median M (min A, max B)" of @v[0..n) (sorted in place). */
static void pr(const char *what, double *v, int n, const char *unit)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("  %-34s median %8.3f%s (min %.3f, max %.3f)\n", what, v[n / 2], unit, v[0],
	       v[n - 1]);
}

static tnfctl_errcode_t enable_on(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err;

	(void)cd;
	if ((err = tnfctl_probe_state_get(h, p, &st)))
		return err;
	if (strncmp(st.attr_string, "name tnf_on;", 12))
		return TNFCTL_ERR_NONE;
	if ((err = tnfctl_probe_enable(h, p, NULL)))
		return err;
	return tnfctl_probe_trace(h, p, NULL);
}

static int tnf_setup(const char *file, size_t size)
{
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;

	if ((err = tnfctl_internal_open(&h)) || (err = tnfctl_buffer_alloc(h, file, size)) ||
	    (err = tnfctl_probe_apply(h, enable_on, NULL))) {
		fprintf(stderr, "probes: %s: %s\n", file, tnfctl_strerror(err));
		return -1;
	}
	tnfctl_close(h, TNFCTL_TARG_DEFAULT); /* probe states and the file stay */
	return 0;
}

#define MAXR 101
enum { PLAIN, TNF_OFF, UST_OFF, TNF_ON, UST_ON, TNF_ON2, UST_ON2, PLAIN2, NV };

int main(int argc, char **argv)
{
	static double v[NV][MAXR], d[MAXR];
	const char *wfile = NULL, *tmpdir = getenv("TMPDIR");
	char file[4096];
	long n = 1000000;
	int rounds = 9, c, k, ust = 1;

	while ((c = getopt(argc, argv, "r:n:w:")) != -1) {
		switch (c) {
		case 'r': rounds = atoi(optarg); break;
		case 'n': n = atol(optarg); break;
		case 'w': wfile = optarg; break;
		default:
			fprintf(stderr, "usage: probes [-r ROUNDS] [-n ITERS] | -w FILE -n EVENTS\n");
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAXR || n < 1)
		return 2;
	if (wfile) {
		/* ~24 bytes an event; generous, so that nothing wraps */
		if (tnf_setup(wfile, ((size_t)n * 64 + (1u << 20)) & ~(size_t)4095))
			return 1;
		loop_tnf_on(n);
		return 0;
	}
	snprintf(file, sizeof(file), "%s/tnfbench-probes.%d.tnf", tmpdir ? tmpdir : "/tmp",
		 (int)getpid());
	if (tnf_setup(file, 64u << 20))
		return 1;
	loop_tnf_on(1000); /* maps and formats the file, writes the probe's type */
#ifdef NO_LTTNG
	ust = 0;
#else
	loop_ust_on(1000);
#endif
	for (k = 0; k < rounds; k++) {
		v[PLAIN][k] = run(loop_plain, n, 1);
		v[PLAIN2][k] = run(loop_plain, n, 2);
		v[TNF_OFF][k] = run(loop_tnf_off, n, 1);
		v[TNF_ON][k] = run(loop_tnf_on, n, 1);
		v[TNF_ON2][k] = run(loop_tnf_on, n, 2);
#ifndef NO_LTTNG
		v[UST_OFF][k] = run(loop_ust_off, n, 1);
		v[UST_ON][k] = run(loop_ust_on, n, 1);
		v[UST_ON2][k] = run(loop_ust_on, n, 2);
#endif
	}
	unlink(file);

	printf("probes: %d rounds of %ld iterations per thread, variants interleaved\n", rounds, n);
	printf("P3 disabled probe, ns per iteration:\n");
	for (k = 0; k < rounds; k++)
		d[k] = v[TNF_OFF][k] - v[PLAIN][k];
	pr("TNF disabled minus bare loop", d, rounds, " ns");
	if (ust) {
		for (k = 0; k < rounds; k++)
			d[k] = v[UST_OFF][k] - v[PLAIN][k];
		pr("LTTng-UST disabled minus bare loop", d, rounds, " ns");
	}
	printf("P4 enabled, recorded 2-argument event, 1 thread, ns per event:\n");
	if (ust) {
		for (k = 0; k < rounds; k++)
			d[k] = v[TNF_ON][k] / v[UST_ON][k];
		pr("TNF / LTTng-UST", d, rounds, "x");
	}
	printf("P5 throughput with 2 threads / with 1 thread:\n");
	for (k = 0; k < rounds; k++)
		d[k] = 2 * v[PLAIN][k] / v[PLAIN2][k];
	pr("bare loop (what the machine gives)", d, rounds, "x");
	for (k = 0; k < rounds; k++)
		d[k] = 2 * v[TNF_ON][k] / v[TNF_ON2][k];
	pr("TNF", d, rounds, "x");
	if (ust) {
		for (k = 0; k < rounds; k++)
			d[k] = 2 * v[UST_ON][k] / v[UST_ON2][k];
		pr("LTTng-UST", d, rounds, "x");
	}
	printf("absolute, ns per iteration (2 threads: ns per event of the pair):\n");
	pr("bare loop", v[PLAIN], rounds, " ns");
	pr("TNF disabled", v[TNF_OFF], rounds, " ns");
	pr("TNF traced, 1 thread", v[TNF_ON], rounds, " ns");
	for (k = 0; k < rounds; k++)
		v[TNF_ON2][k] /= 2;
	pr("TNF traced, 2 threads", v[TNF_ON2], rounds, " ns");
	if (ust) {
		pr("LTTng-UST disabled", v[UST_OFF], rounds, " ns");
		pr("LTTng-UST recorded, 1 thread", v[UST_ON], rounds, " ns");
		for (k = 0; k < rounds; k++)
			v[UST_ON2][k] /= 2;
		pr("LTTng-UST recorded, 2 threads", v[UST_ON2], rounds, " ns");
	} else {
		printf("  LTTng-UST: skipped (built without liblttng-ust-dev)\n");
	}
	return 0;
}
