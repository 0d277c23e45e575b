// SPDX-License-Identifier: BSD-2-Clause
/*
 * sigint_block [--exec] PROG [ARG...]: blocks SIGINT, runs PROG (SIGINT
 * unblocked there) and waits for it, then unblocks SIGINT; a SIGINT that
 * came in the meantime (the terminal's ^C to the group) kills it there.
 * Otherwise it prints "unblocked, child status S" and exits 0.  With
 * --exec it first execs itself (SIGINT still blocked, a queued one still
 * queued) to unblock it in the new image.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	bool exec_after = false;
	char status[16];
	sigset_t intr;
	pid_t pid;
	int st;

	if (argc == 3 && !strcmp(argv[1], "--unblock")) {
		sigemptyset(&intr);
		sigaddset(&intr, SIGINT);
		sigprocmask(SIG_UNBLOCK, &intr, NULL);
		printf("unblocked, child status %s\n", argv[2]);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--exec")) {
		exec_after = true;
		argv++;
		argc--;
	}
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
	snprintf(status, sizeof(status), "%d", WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	if (exec_after) {
		char *args[] = {"/proc/self/exe", "--unblock", status, NULL};

		fflush(stdout);
		execv(args[0], args);
		return 4;
	}
	sigprocmask(SIG_UNBLOCK, &intr, NULL);
	printf("unblocked, child status %s\n", status);
	return 0;
}
