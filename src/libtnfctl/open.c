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
#include "tracer.h"

extern char **environ;

/*
 * The tracer helper keeps the credentials it was started with; the caller's
 * own right to ptrace @pid is what counts (opening /proc/PID/mem makes the
 * kernel's ptrace access check with the caller's credentials).
 */
static tnfctl_errcode_t check_caller_may_trace(pid_t pid)
{
	int fd = tnf_proc_open_task_file(pid, "mem");

	if (fd >= 0) {
		close(fd);
		return TNFCTL_ERR_NONE;
	}
	if ((errno == ENOENT || errno == ESRCH) && !tnf_proc_kthread(pid))
		return TNFCTL_ERR_NOPROCESS;
	return TNFCTL_ERR_ACCES;
}

TNF_API tnfctl_errcode_t tnfctl_pid_open(pid_t pid, tnfctl_handle_t **retval)
{
	struct tnf_req req = {.op = TNF_OP_PID_OPEN, .pid = pid};
	struct tnfctl_handle *h;
	struct tnf_rep rep;
	tnfctl_errcode_t err;
	bool ours;

	if (!retval || pid == getpid())
		return TNFCTL_ERR_BADARG;
	if (pid <= 0)
		return TNFCTL_ERR_NOPROCESS;
	/* Stopped by our own SUSPEND alone: a failed open resumes it. */
	ours = tnf_suspended_take(pid);
	req.arg = ours;
	err = check_caller_may_trace(pid);
	if (!err)
		err = tnf_client_new_handle(&h);
	if (err) {
		if (ours && err != TNFCTL_ERR_NOPROCESS)
			kill(pid, SIGCONT);
		return err;
	}
	err = tnf_client_call(h, &req, -1, &rep);
	if (!err)
		err = rep.err;
	if (err) {
		tnf_client_free_handle(h);
		return err;
	}
	h->pid = pid;
	h->attrs.targ_pid = pid;
	err = tnf_probes_attach_direct(h);
	if (err) {
		tnfctl_close(h, TNFCTL_TARG_RESUME);
		return err;
	}
	*retval = h;
	return TNFCTL_ERR_NONE;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * The child waits on @go until the helper has seized it, so that the exec
 * itself is seen.  Only async-signal-safe calls between fork and execve.
 */
static pid_t spawn_waiting(const char *path, char *const *argv, char *const *envp, int go[2])
{
	pid_t pid = fork();
	sigset_t none;
	char c;

	if (pid != 0)
		return pid;
	close(go[1]);
	setpgid(0, 0);
	/* The caller's blocked signals are the caller's business, not the program's. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (read(go[0], &c, 1) == 1)
		execve(path, argv, envp);
	_exit(127);
}

TNF_API tnfctl_errcode_t tnfctl_exec_open(const char *pgmname, char *const *argv, char *const *envp,
					  const char *ld_preload, const char *libtnfprobe_path,
					  tnfctl_handle_t **retval)
{
	struct tnf_req req = {.op = TNF_OP_EXEC_ATTACH};
	struct tnfctl_handle *h = NULL;
	char **env = NULL, *path = NULL;
	tnfctl_errcode_t err;
	struct tnf_rep rep;
	int go[2] = {-1, -1};
	pid_t pid;

	if (!pgmname || !argv || !retval)
		return TNFCTL_ERR_BADARG;
	err = tnf_find_program(pgmname, &path);
	if (err)
		return err;
	err = tnf_check_dynamic(path);
	if (!err)
		err = tnf_check_setid(path);
	if (err)
		goto out;
	if (!envp) {
		env = tnf_build_env(ld_preload, libtnfprobe_path);
		if (!env) {
			err = TNFCTL_ERR_ALLOCFAIL;
			goto out;
		}
	}
	err = tnf_client_new_handle(&h);
	if (err)
		goto out;
	if (pipe2(go, O_CLOEXEC)) {
		err = TNFCTL_ERR_INTERNAL;
		goto out_h;
	}
	pid = spawn_waiting(path, argv, envp ? envp : env, go);
	close(go[0]);
	if (pid < 0) {
		close(go[1]);
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out_h;
	}
	req.pid = pid;
	err = tnf_send(h->sock, &req, sizeof(req), -1) ? TNFCTL_ERR_INTERNAL
						       : tnf_client_wait(h, &rep);
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
		reap(pid);
		goto out_h;
	}
	h->pid = pid;
	h->attrs.targ_pid = pid;
	h->exec_child = true;
	tnf_spawned_add(pid);
	err = tnf_probes_attach_direct(h);
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
out:
	tnf_free_env(env);
	free(path);
	return err;
}
