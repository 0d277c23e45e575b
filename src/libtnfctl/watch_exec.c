// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl_watch_exec: fork the command, hold it before execve on a pipe
 * (as open.c's exec_open does) until the watch tracks it, then release it,
 * so that its exec and everything after are seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "internal.h"
#include "opts.h"
#include "proto.h"
#include "watch.h"

extern char **environ;

/* Only async-signal-safe calls between fork and execve. */
static pid_t spawn_held(const char *path, char *const *argv, char *const *envp, int go[2],
			bool own_group)
{
	pid_t pid = fork();
	sigset_t none;
	char c;

	if (pid != 0)
		return pid;
	close(go[1]);
	if (own_group)
		setpgid(0, 0);
	/* The caller's blocked signals are the caller's business, not the program's. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (read(go[0], &c, 1) == 1)
		execve(path, argv, envp);
	_exit(127);
}

TNF_API tnfctl_errcode_t tnfctl_watch_exec_opts(const char *pgm, char *const argv[],
						char *const envp[],
						const struct tnfctl_watch_opts *opts,
						tnfctl_watch_t **wp, pid_t *pidp)
{
	struct tnfctl_watch *w = NULL;
	tnfctl_errcode_t err;
	unsigned int flags;
	int go[2], st;
	char *path;
	pid_t pid;

	if (!pgm || !argv || !wp || !pidp ||
	    tnf_watch_opts_check(opts, TNFCTL_WATCH_DL | TNFCTL_WATCH_FOREGROUND))
		return TNFCTL_ERR_BADARG;
	flags = TNF_OPTS_GET(opts, tnfctl_watch_opts, flags, 0u);
	err = tnf_find_program(pgm, &path);
	if (err)
		return err;
	if (pipe2(go, O_CLOEXEC)) {
		free(path);
		return TNFCTL_ERR_INTERNAL;
	}
	pid = spawn_held(path, argv, envp ? envp : environ, go, !(flags & TNFCTL_WATCH_FOREGROUND));
	flags &= ~TNFCTL_WATCH_FOREGROUND;
	close(go[0]);
	free(path);
	if (pid < 0) {
		close(go[1]);
		return TNFCTL_ERR_ALLOCFAIL;
	}
	err = tnf_watch_new(pid, flags | TNF_WATCH_HELD, opts, &w);
	if (err) {
		/* Never released: it dies before its execve. */
		close(go[1]);
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return err;
	}
	/* Released.  Should the write fail, it reads EOF and exits 127: reported too. */
	st = write(go[1], "x", 1);
	(void)st;
	close(go[1]);
	*wp = w;
	*pidp = pid;
	return TNFCTL_ERR_NONE;
}

TNF_API tnfctl_errcode_t tnfctl_watch_exec(const char *pgm, char *const argv[], char *const envp[],
					   unsigned int flags, tnfctl_watch_t **wp, pid_t *pidp)
{
	TNFCTL_OPTS(tnfctl_watch_opts, opts, .flags = flags);

	return tnfctl_watch_exec_opts(pgm, argv, envp, &opts, wp, pidp);
}
