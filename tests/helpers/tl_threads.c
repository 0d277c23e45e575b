// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_threads: a multi-threaded target.  Before "ready" it starts
 * TL_NR_WORKERS threads: one spinning, one blocked in read(), one in
 * nanosleep(), one in pthread_cond_wait() and one in poll().  Then it runs
 * the commands of target_common.h in the main thread.
 */
#include <poll.h>
#include <time.h>
#include "target_common.h"

#define TL_NR_WORKERS 5

static pthread_barrier_t started;
static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_cond = PTHREAD_COND_INITIALIZER;
static volatile unsigned long spins;

static void *spinner(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	for (;;)
		spins++;
	return NULL;
}

static void *reader(void *arg)
{
	int fds[2];
	char c;

	(void)arg;
	if (pipe(fds))
		abort();
	pthread_barrier_wait(&started);
	for (;;)
		if (read(fds[0], &c, 1) < 0 && errno != EINTR)
			abort();
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = {.tv_sec = 3600};

	(void)arg;
	pthread_barrier_wait(&started);
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	pthread_mutex_lock(&never_lock);
	for (;;)
		pthread_cond_wait(&never_cond, &never_lock);
	return NULL;
}

static void *poller(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	for (;;)
		poll(NULL, 0, -1);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[TL_NR_WORKERS])(void *) = {spinner, reader, sleeper, waiter, poller};
	int i;

	tgt_init(argc, argv);
	pthread_barrier_init(&started, NULL, TL_NR_WORKERS + 1);
	for (i = 0; i < TL_NR_WORKERS; i++) {
		if (tgt_start_thread(fns[i], NULL))
			abort();
		tgt_nthreads++;
	}
	pthread_barrier_wait(&started);
	return tgt_run();
}
