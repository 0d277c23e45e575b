// SPDX-License-Identifier: BSD-2-Clause
/*
 * sigint_block PROG [ARG...]: blocks SIGINT, runs PROG (SIGINT unblocked
 * there) and waits for it, then unblocks SIGINT; a SIGINT that came in the
 * meantime (the terminal's ^C to the group) kills it there.  Otherwise it
 * prints "unblocked, child status S" and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sigset_t intr;
	pid_t pid;
	int st;

	if (argc < 2)
		return 2;
	sigemptyset(&intr);
	sigaddset(&intr, SIGINT);
	sigprocmask(SIG_BLOCK, &intr, NULL);
	pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &intr, NULL);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 3;
	sigprocmask(SIG_UNBLOCK, &intr, NULL);
	printf("unblocked, child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	return 0;
}
