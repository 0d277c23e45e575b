// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_pid_open and tnfctl_exec_open (tnfctl_pid_open(3TNF)). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "internal.h"
#include "opts.h"
#include "target.h"

extern char **environ;

static tnfctl_errcode_t pid_open(pid_t pid, unsigned int flags, tnfctl_handle_t **retval)
{
	struct tnf_req req = {.op = TNF_OP_PID_OPEN, .pid = pid, .flags = flags};
	struct tnfctl_handle *h;
	struct tnf_rep rep;
	tnfctl_errcode_t err;
	bool tty_intr = false;
	int susp_fd;

	if (!retval || pid == getpid() ||
	    (flags & ~(TNFCTL_OPEN_NOPROBES | TNFCTL_OPEN_EXEC_FAILED)))
		return TNFCTL_ERR_BADARG;
	if (pid <= 0)
		return TNFCTL_ERR_NOPROCESS;
	/*
	 * Stopped by our own SUSPEND alone: a failed open resumes it (the
	 * helper does when it answers with an error; we do when it cannot).
	 */
	susp_fd = tnf_suspended_take(pid, &tty_intr);
	req.arg = susp_fd >= 0;
	if (tty_intr)
		req.flags |= TNF_OPEN_TTY_INTR;
	/* The engine keeps the credentials it was started with: ours are what count. */
	err = tnf_check_may_trace(pid);
	if (!err)
		err = tnf_client_new_handle(&h);
	if (err) {
		tnf_suspended_resume(susp_fd);
		return err;
	}
	err = tnf_client_call(h, &req, &rep);
	if (err) {
		/* the helper died before it answered */
		tnf_client_free_handle(h);
		tnf_suspended_resume(susp_fd);
		return err;
	}
	if (susp_fd >= 0)
		close(susp_fd);
	err = rep.err;
	if (err) {
		tnf_client_free_handle(h);
		return err;
	}
	h->pid = pid;
	tnf_client_bind(h, pid, false);
	h->attrs.targ_pid = pid;
	h->open_flags = flags;
	h->tty_intr = tty_intr;
	err = flags & TNFCTL_OPEN_NOPROBES ? TNFCTL_ERR_NONE : tnf_probes_attach_direct(h);
	/* EXEC_FAILED: the helper attaches its sys_exit program (INTERNAL if it cannot) */
	if (!err && (flags & TNFCTL_OPEN_EXEC_FAILED))
		err = tnf_handle_set_flags(h, flags);
	if (err) {
		tnfctl_close(h, TNFCTL_TARG_RESUME);
		return err;
	}
	*retval = h;
	return TNFCTL_ERR_NONE;
}

TNF_API tnfctl_errcode_t tnfctl_pid_open_opts(pid_t pid, const struct tnfctl_open_opts *opts,
					      tnfctl_handle_t **retval)
{
	tnfctl_errcode_t err;
	int cs;

	if (!tnf_opts_valid(opts, TNF_OPTS_END(tnfctl_open_opts, libtnfprobe_path)) ||
	    TNF_OPTS_GET(opts, tnfctl_open_opts, ld_preload, NULL) ||
	    TNF_OPTS_GET(opts, tnfctl_open_opts, libtnfprobe_path, NULL))
		return TNFCTL_ERR_BADARG;
	cs = tnf_nocancel();
	err = pid_open(pid, TNF_OPTS_GET(opts, tnfctl_open_opts, flags, 0u), retval);
	tnf_cancel_restore(cs);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_pid_open_flags(pid_t pid, unsigned int flags,
					       tnfctl_handle_t **retval)
{
	TNFCTL_OPTS(tnfctl_open_opts, opts, .flags = flags);

	return tnfctl_pid_open_opts(pid, &opts, retval);
}

TNF_API tnfctl_errcode_t tnfctl_pid_open(pid_t pid, tnfctl_handle_t **retval)
{
	return tnfctl_pid_open_opts(pid, NULL, retval);
}

/* Its wait status (0 if it could not be had). */
static int reap(pid_t pid)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/*
 * The child waits on @go until the helper has seized it, so that the exec
 * itself is seen; a failed execve's errno goes back on @ep (close-on-exec:
 * EOF after a successful one).  Only async-signal-safe calls between fork
 * and execve.
 */
static pid_t spawn_waiting(const char *path, char *const *argv, char *const *envp, int go[2],
			   int ep[2], bool own_group)
{
	pid_t pid = fork();
	sigset_t none;
	ssize_t n;
	char c;
	int e;

	if (pid != 0)
		return pid;
	close(go[1]);
	close(ep[0]);
	if (own_group)
		setpgid(0, 0);
	/* The caller's blocked signals are the caller's business, not the program's. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (read(go[0], &c, 1) == 1) {
		execve(path, argv, envp);
		e = errno;
		n = write(ep[1], &e, sizeof(e));
		(void)n;
	}
	_exit(127);
}

/* The errno of the child's failed execve, or @dflt if it sent none. */
static int exec_errno(int fd, int dflt)
{
	int e;

	return read(fd, &e, sizeof(e)) == (ssize_t)sizeof(e) ? e : dflt;
}

#define OPEN_EXEC_FLAGS (TNFCTL_OPEN_NOPROBES | TNFCTL_OPEN_FOREGROUND | TNFCTL_OPEN_EXEC_FAILED)

static tnfctl_errcode_t exec_open(const char *pgmname, char *const *argv, char *const *envp,
				  const char *ld_preload, const char *libtnfprobe_path,
				  unsigned int flags, tnfctl_handle_t **retval)
{
	struct tnf_req req = {.op = TNF_OP_EXEC_ATTACH, .flags = flags};
	bool noprobes = flags & TNFCTL_OPEN_NOPROBES;
	struct tnfctl_handle *h = NULL;
	char **env = NULL, *path = NULL;
	int go[2] = {-1, -1}, ep[2] = {-1, -1};
	int exec_err = 0, st;
	tnfctl_errcode_t err;
	struct tnf_rep rep;
	pid_t pid;

	if (!pgmname || !argv || !retval || (flags & ~OPEN_EXEC_FLAGS))
		return TNFCTL_ERR_BADARG;
	err = tnf_find_program(pgmname, &path);
	if (err) {
		errno = err == TNFCTL_ERR_FILENOTFOUND ? ENOENT : EACCES;
		return err;
	}
	err = noprobes ? TNFCTL_ERR_NONE : tnf_check_dynamic(path);
	if (!err)
		err = tnf_check_setid(path);
	if (err) {
		errno = EACCES;
		goto out;
	}
	/* NOPROBES: the environment is left alone unless the caller preloads something. */
	if (!envp && (!noprobes || ld_preload)) {
		env = tnf_build_env(ld_preload, libtnfprobe_path, !noprobes);
		if (!env) {
			err = TNFCTL_ERR_ALLOCFAIL;
			goto out;
		}
	}
	err = tnf_client_new_handle(&h);
	if (err)
		goto out;
	/* out of descriptors is ALLOCFAIL (errno EMFILE or ENFILE), as everywhere */
	if (pipe2(ep, O_CLOEXEC)) {
		err = errno == EMFILE || errno == ENFILE ? TNFCTL_ERR_ALLOCFAIL
							 : TNFCTL_ERR_INTERNAL;
		goto out_h;
	}
	if (pipe2(go, O_CLOEXEC)) {
		err = errno == EMFILE || errno == ENFILE ? TNFCTL_ERR_ALLOCFAIL
							 : TNFCTL_ERR_INTERNAL;
		goto out_h;
	}
	pid = spawn_waiting(path, argv,
			    envp  ? envp
			    : env ? env
				  : environ,
			    go, ep, !(flags & TNFCTL_OPEN_FOREGROUND));
	close(go[0]);
	close(ep[1]);
	ep[1] = -1;
	if (pid < 0) {
		close(go[1]);
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out_h;
	}
	req.pid = pid;
	err = tnf_client_request(h, &req);
	if (!err)
		err = tnf_client_wait(h, &rep);
	if (!err && rep.kind == TNF_REP_DONE)
		err = rep.err ? (tnfctl_errcode_t)rep.err : TNFCTL_ERR_INTERNAL;
	if (err) {
		/* Never seized: the child is still ours alone. */
		close(go[1]);
		kill(pid, SIGKILL);
		reap(pid);
		goto out_h;
	}
	/* Seized: let it exec and wait for the rtld sync point. */
	if (write(go[1], "x", 1) != 1)
		err = TNFCTL_ERR_INTERNAL;
	close(go[1]);
	while (!err) {
		err = tnf_client_wait(h, &rep);
		if (!err && rep.kind == TNF_REP_DONE) {
			err = rep.err;
			break;
		}
	}
	if (err) {
		/* The helper has killed it (or it died); collect the zombie. */
		kill(pid, SIGKILL);
		st = reap(pid);
		/* exit 127 after a successful execve: the loader failed (it said why) */
		exec_err = exec_errno(ep[0], WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ELIBACC : 0);
		if (exec_err)
			err = exec_err == ENOENT ? TNFCTL_ERR_FILENOTFOUND : TNFCTL_ERR_ACCES;
		goto out_h;
	}
	h->pid = pid;
	h->attrs.targ_pid = pid;
	h->exec_child = true;
	tnf_client_bind(h, pid, true);
	h->open_flags = flags;
	h->tty_intr = !(flags & TNFCTL_OPEN_FOREGROUND);
	tnf_spawned_add(pid);
	err = noprobes ? TNFCTL_ERR_NONE : tnf_probes_attach_direct(h);
	if (!err && (flags & TNFCTL_OPEN_EXEC_FAILED))
		err = tnf_handle_set_flags(h, flags);
	if (err) {
		tnfctl_close(h, TNFCTL_TARG_KILL);
		h = NULL;
		goto out;
	}
	*retval = h;
	h = NULL;
out_h:
	if (h)
		tnf_client_free_handle(h);
	if (ep[0] >= 0)
		close(ep[0]);
	if (ep[1] >= 0)
		close(ep[1]);
out:
	tnf_free_env(env);
	free(path);
	/* Why the program could not be started: its execve's errno, if it got that far. */
	if (exec_err)
		errno = exec_err;
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_exec_open_opts(const char *pgmname, char *const *argv,
					       char *const *envp,
					       const struct tnfctl_open_opts *opts,
					       tnfctl_handle_t **retval)
{
	tnfctl_errcode_t err;
	int cs;

	if (!tnf_opts_valid(opts, TNF_OPTS_END(tnfctl_open_opts, libtnfprobe_path)))
		return TNFCTL_ERR_BADARG;
	cs = tnf_nocancel();
	err = exec_open(pgmname, argv, envp, TNF_OPTS_GET(opts, tnfctl_open_opts, ld_preload, NULL),
			TNF_OPTS_GET(opts, tnfctl_open_opts, libtnfprobe_path, NULL),
			TNF_OPTS_GET(opts, tnfctl_open_opts, flags, 0u), retval);
	tnf_cancel_restore(cs);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_exec_open_flags(const char *pgmname, char *const *argv,
						char *const *envp, const char *ld_preload,
						const char *libtnfprobe_path, unsigned int flags,
						tnfctl_handle_t **retval)
{
	TNFCTL_OPTS(tnfctl_open_opts, opts, .flags = flags, .ld_preload = ld_preload,
		    .libtnfprobe_path = libtnfprobe_path);

	return tnfctl_exec_open_opts(pgmname, argv, envp, &opts, retval);
}

TNF_API tnfctl_errcode_t tnfctl_exec_open(const char *pgmname, char *const *argv, char *const *envp,
					  const char *ld_preload, const char *libtnfprobe_path,
					  tnfctl_handle_t **retval)
{
	return tnfctl_exec_open_flags(pgmname, argv, envp, ld_preload, libtnfprobe_path, 0, retval);
}
