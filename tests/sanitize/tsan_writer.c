// SPDX-License-Identifier: BSD-2-Clause
/*
 * tsan_writer FILE [SECONDS] - the multi-threaded writer under TSan (make
 * tsan): libtnfprobe and libtnfctl built with -fsanitize=thread, 8 threads
 * firing probes (ints, strings, a record) into a 128 KiB file that wraps many
 * times, threads that come and go (their TSD destructor gives the block
 * back), and a controller thread on tnfctl_internal_open that keeps
 * enabling, disabling, tracing, untracing and reading the probes' state and
 * the trace attributes while they fire.  Prints "events N" (probe calls)
 * and exits 0; TSan makes any data race exit non-zero (halt_on_error).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tnf/probe.h>
#include <tnf/tnfctl.h>

#define NTHREADS 8

struct pt {
	int x;
	const char *label;
};
TNF_DECLARE_RECORD(struct pt, pt_rec);
TNF_DEFINE_RECORD_2(struct pt, pt_rec, tnf_int, x, tnf_string, label);

static int stop;
static unsigned long fired[NTHREADS + 1]; /* + the short-lived threads */

static void *writer(void *arg)
{
	int who = (int)(long)arg;
	struct pt p = {who, "point"};
	unsigned long i;

	for (i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		TNF_PROBE_2(tw_tick, "tw hot", "", tnf_int, who, who, tnf_ulong, i, i);
		TNF_PROBE_1(tw_str, "tw str", "", tnf_string, s, (i & 1) ? "odd" : "even");
		if (!(i % 64))
			TNF_PROBE_1(tw_rec, "tw rec", "", pt_rec, p, &p);
		if (!(i % 4096) && who == 0) {
			/* a short-lived thread: first event registers, exit releases */
			pthread_t t;

			if (!pthread_create(&t, NULL, writer, (void *)(long)NTHREADS))
				pthread_join(t, NULL);
		}
		if (who == NTHREADS && i > 200)
			break; /* the short-lived ones end soon */
	}
	__atomic_fetch_add(&fired[who], i, __ATOMIC_RELAXED);
	return NULL;
}

static int phase;

static tnfctl_errcode_t toggle(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err;

	(void)cd;
	err = tnfctl_probe_state_get(h, p, &st);
	if (err)
		return err;
	switch (phase % 4) {
	case 0:
		err = tnfctl_probe_enable(h, p, NULL);
		return err ? err : tnfctl_probe_trace(h, p, NULL);
	case 1:
		return tnfctl_probe_untrace(h, p, NULL);
	case 2:
		return tnfctl_probe_disable(h, p, NULL);
	default:
		err = tnfctl_probe_trace(h, p, NULL);
		return err ? err : tnfctl_probe_enable(h, p, NULL);
	}
}

static void *controller(void *arg)
{
	tnfctl_handle_t *h = arg;
	tnfctl_trace_attrs_t a;
	struct timespec ts = {0, 2000000};
	tnfctl_errcode_t err;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		err = tnfctl_probe_apply(h, toggle, NULL);
		if (err) {
			fprintf(stderr, "apply: %s\n", tnfctl_strerror(err));
			exit(1);
		}
		tnfctl_trace_attrs_get(h, &a);
		phase++;
		nanosleep(&ts, NULL);
	}
	/* leave everything traced for the last burst */
	phase = 0;
	tnfctl_probe_apply(h, toggle, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w[NTHREADS], c;
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
	unsigned long total = 0;
	int secs = argc > 2 ? atoi(argv[2]) : 3, i;

	if (argc < 2) {
		fprintf(stderr, "usage: tsan_writer FILE [SECONDS]\n");
		return 2;
	}
	err = tnfctl_internal_open(&h);
	if (!err)
		err = tnfctl_buffer_alloc(h, argv[1], 128 * 1024);
	if (err) {
		fprintf(stderr, "tsan_writer: %s\n", tnfctl_strerror(err));
		return 1;
	}
	phase = 0;
	tnfctl_probe_apply(h, toggle, NULL);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(long)i);
	pthread_create(&c, NULL, controller, h);
	sleep(secs);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(c, NULL);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(w[i], NULL);
	/* everything traced again: the last events are there for tnfdump */
	for (i = 0; i < 200; i++)
		TNF_PROBE_1(tw_last, "tw last", "", tnf_int, i, i);
	for (i = 0; i <= NTHREADS; i++)
		total += fired[i];
	printf("events %lu\n", total);
	return tnfctl_close(h, TNFCTL_TARG_DEFAULT) ? 1 : 0;
}
