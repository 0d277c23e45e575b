// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_sdt_fan [-w] [-2] N: a fan of N live processes with a plain
 * <sys/sdt.h> USDT probe (test_usdt_fan, prex -f at scale).  Forks N
 * children, each waiting on a pipe (with -2, each child first forks a
 * grandchild that does the same), and prints "fan PID forked N"; with -w
 * it then waits for SIGUSR1.  Then it closes the pipe: each child (and
 * grandchild) fires tl_sdt_fan:hit(2, i) and exits, and the parent fires
 * hit(1, N), reaps them all and exits 0.  Each hit only while the probe's
 * semaphore is raised.  The two are two sites with two argument specs: a
 * process takes two of libbpf's specs.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sdt.h>
#include <sys/wait.h>

__extension__ volatile unsigned short tl_sdt_fan_hit_semaphore __attribute__((section(".probes")));

int main(int argc, char **argv)
{
	int wait_sig = 0, grand = 0, n = argc > 1 ? atoi(argv[argc - 1]) : 0, p[2], i, sig;
	int bad = 0, st;
	sigset_t usr1;
	char c;

	for (i = 1; i < argc - 1; i++) {
		wait_sig |= !strcmp(argv[i], "-w");
		grand |= !strcmp(argv[i], "-2");
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	if (n < 0 || pipe(p))
		return 2;
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 3;
		if (pid == 0) {
			pid_t g = grand ? fork() : -1;

			close(p[1]);
			if (read(p[0], &c, 1) != 0)
				_exit(4);
			if (tl_sdt_fan_hit_semaphore)
				STAP_PROBE2(tl_sdt_fan, hit, 2, i);
			if (g > 0 && (waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st)))
				_exit(5);
			_exit(0);
		}
	}
	printf("fan %d forked %d\n", (int)getpid(), n);
	fflush(stdout);
	if (wait_sig)
		sigwait(&usr1, &sig);
	close(p[1]);
	if (tl_sdt_fan_hit_semaphore)
		STAP_PROBE2(tl_sdt_fan, hit, 1, n);
	while (wait(&st) > 0)
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	return bad ? 1 : 0;
}
