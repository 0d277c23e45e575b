// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_asan_ctl: a controller built with -fsanitize=address whatever the
 * build's SANITIZE, whose other threads allocate without pause while its
 * main thread opens and closes handles.
 *
 *   tl_asan_ctl ROUNDS PROG
 *
 * Each round: tnfctl_exec_open_flags(PROG, NOPROBES), then tnfctl_close
 * with KILL; the last close of a round ends the engine, so every round
 * starts one.  A helper forked from this process (not exec'd) could wait
 * for ever on an allocator lock one of the threads held at the fork (GCC
 * 12's libasan has no fork interceptor).  Prints "round N" after each
 * round, then "done ROUNDS" and exits 0, or "error ROUND CODE MESSAGE"
 * and exits 1.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tnf/tnfctl.h>

#define NTHREADS 4

/* The engine's targets are traced: no exit-time leak check (it ptraces). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static atomic_int stop;

static void *allocate(void *arg)
{
	size_t n = (size_t)(uintptr_t)arg;
	void *keep[64] = {0};
	unsigned i = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		free(keep[i % 64]);
		keep[i % 64] = malloc(16 + (i * 37 + n) % 4096);
		i++;
	}
	for (i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	int rounds, i, ret = 0;

	if (argc != 3)
		return 2;
	rounds = atoi(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, allocate, (void *)(uintptr_t)i))
			return 1;
	for (i = 0; i < rounds && !ret; i++) {
		char *targv[] = {argv[2], NULL};
		tnfctl_handle_t *h;
		tnfctl_errcode_t err;

		err = tnfctl_exec_open_flags(argv[2], targv, NULL, NULL, NULL, TNFCTL_OPEN_NOPROBES,
					     &h);
		if (!err)
			err = tnfctl_close(h, TNFCTL_TARG_KILL);
		if (err) {
			printf("error %d %d %s\n", i, (int)err, tnfctl_strerror(err));
			ret = 1;
		} else {
			printf("round %d\n", i + 1);
		}
	}
	atomic_store(&stop, 1);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	if (!ret)
		printf("done %d\n", rounds);
	return ret;
}
