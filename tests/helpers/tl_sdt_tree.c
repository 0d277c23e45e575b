// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_sdt_tree: a tree of processes that fire a plain <sys/sdt.h> USDT probe
 * (test_usdt_control, prex -f).  `tl_sdt_tree K M` fires tl_sdt_tree:hit(1,
 * 0) once, forks a child that fires hit(2, i) K times and exits, waits for
 * it, then execs itself as `tl_sdt_tree -x M`, which fires hit(3, i) M
 * times.  Each hit only while the probe's semaphore is raised, as programs
 * with semaphores do.  Prints "tree parent PID", "tree child PID" and
 * "tree exec PID" on stdout (before the hits of that process).
 * `tl_sdt_tree -T M` fires hit(1, 0) once, then a second thread execs
 * `tl_sdt_tree -x M` (the kernel makes that thread the leader, under the
 * process's pid) while the main thread waits.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sdt.h>
#include <sys/wait.h>

__extension__ volatile unsigned short tl_sdt_tree_hit_semaphore __attribute__((section(".probes")));

static void fire(long who, int n)
{
	long i;

	for (i = 0; i < n; i++)
		if (tl_sdt_tree_hit_semaphore)
			DTRACE_PROBE2(tl_sdt_tree, hit, who, i);
}

static void *exec_thread(void *arg)
{
	execl("/proc/self/exe", "tl_sdt_tree", "-x", (const char *)arg, (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int status;
	pid_t c;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "-x")) {
		printf("tree exec %d\n", (int)getpid());
		fire(3, atoi(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "-T")) {
		printf("tree parent %d\n", (int)getpid());
		fire(1, 1);
		if (pthread_create(&t, NULL, exec_thread, argv[2]))
			return 1;
		pthread_join(t, NULL); /* the exec ends this thread */
		return 127;
	}
	if (argc != 3)
		return 2;
	printf("tree parent %d\n", (int)getpid());
	fire(1, 1);
	c = fork();
	if (c < 0)
		return 1;
	if (!c) {
		printf("tree child %d\n", (int)getpid());
		fire(2, atoi(argv[1]));
		_exit(0);
	}
	if (waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	execl("/proc/self/exe", "tl_sdt_tree", "-x", argv[2], (char *)NULL);
	return 127;
}
