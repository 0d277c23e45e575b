// SPDX-License-Identifier: BSD-2-Clause
/*
 * static_exit N: a statically linked program (no PT_INTERP) that forks a
 * child exiting 7, reaps it, and exits with status N.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(7);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 99;
	return argc > 1 ? atoi(argv[1]) : 0;
}
