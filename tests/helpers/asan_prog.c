// SPDX-License-Identifier: BSD-2-Clause
/*
 * asan_prog: built with -fsanitize=address.  ASan refuses to start when
 * another library comes before its runtime in the initial library list
 * (e.g. one added by LD_PRELOAD), so running at all shows that nothing was
 * preloaded; it also prints its LD_PRELOAD, forks a child that uses the
 * heap, and exits 0.
 *
 * LeakSanitizer's exit-time check ptrace-attaches to the process itself,
 * which fails under any tracer (strace -f and gdb too), so it is off here;
 * ASan itself is on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static int use_heap(void)
{
	char *p = malloc(64);
	int r;

	if (!p)
		return 1;
	strcpy(p, "heap");
	r = strcmp(p, "heap") != 0;
	free(p);
	return r;
}

int main(void)
{
	const char *pre = getenv("LD_PRELOAD");
	int st;
	pid_t pid;

	printf("asan_prog: LD_PRELOAD %s\n", pre ? pre : "(unset)");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(use_heap());
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return use_heap();
}
