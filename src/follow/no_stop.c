// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl-follow --no-stop: the passive watch (tnfctl_watch_*), one thread
 * reading every event of the tree; tnfctl-follow.c says how it works.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

#include "follow.h"
#include "follow_out.h"

/* Write one watch event as the stopping mode writes its events. */
static void print_watch_event(tnfctl_watch_t *w, const struct tnfctl_watch_data *ev)
{
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	struct follow_ev e = {.time_ns = ev->time_ns,
			      .pid = ev->pid,
			      .tid = ev->tid,
			      .ppid = ev->ppid,
			      .core = -1};

	switch (ev->kind) {
	case TNFCTL_WATCH_FORK:
		e.event = "FORK";
		e.child = ev->child_pid;
		break;
	case TNFCTL_WATCH_EXEC:
	case TNFCTL_WATCH_EXEC_FAILED:
		e.event = ev->kind == TNFCTL_WATCH_EXEC ? "EXEC" : "EXECFAIL";
		e.path = ev->path;
		if (tnfctl_watch_event_exec(w, &x) == TNFCTL_ERR_NONE)
			e.x = &x;
		break;
	case TNFCTL_WATCH_DLOPEN:
	case TNFCTL_WATCH_DLCLOSE:
		e.event = ev->kind == TNFCTL_WATCH_DLOPEN ? "DLOPEN" : "DLCLOSE";
		e.path = ev->path;
		break;
	case TNFCTL_WATCH_EXIT:
		e.event = ev->term_signal ? "TARGGONE" : "EXIT";
		e.status = ev->exit_status;
		e.signal = ev->term_signal;
		e.core = ev->core_dumped;
		break;
	default:
		return; /* LOST is counted and reported at the end */
	}
	follow_out_event(&e);
}

/*
 * --no-stop: follow the tree of CMD (@cmd) or of @pid with a watch until its
 * last process has ended (END) or a termination signal came.
 */
int follow_no_stop(const char *name, pid_t pid, char **cmd)
{
	struct tnfctl_watch_data ev = {.sz = sizeof(ev)}; /* its strings are the watch's */
	struct pollfd pfd[2] = {{.events = POLLIN}, {.fd = wake_fd[0], .events = POLLIN}};
	bool spawned = !pid, skip_exec = !pid, end = false;
	int r = 0, status = -1, sig = 0, st, e, exec_errno = 0;
	bool werr, lost_control = false;
	tnfctl_errcode_t err;
	unsigned long long lost;
	tnfctl_watch_t *w;
	char buf[64];
	pid_t *live = NULL; /* CMD: the tree's live processes, to pass signals on to */
	size_t nlive = 0, cap = 0, i;
	unsigned int bits;

	errno = 0;
	if (pid) {
		TNFCTL_OPTS(tnfctl_watch_opts, opts, .flags = TNFCTL_WATCH_DL);

		err = tnfctl_watch_open_opts(pid, &opts, &w);
	} else {
		TNFCTL_OPTS(tnfctl_watch_opts, opts,
			    .flags = TNFCTL_WATCH_DL | TNFCTL_WATCH_FOREGROUND);

		err = tnfctl_watch_exec_opts(name, cmd, NULL, &opts, &w, &pid);
	}
	e = errno;
	if (err != TNFCTL_ERR_NONE) {
		follow_out_close(now_ns()); /* -o is left well-formed, with no event */
		return open_failed(name, spawned, err, e);
	}
	signal(SIGPIPE, SIG_IGN);
	pfd[0].fd = tnfctl_watch_fd(w);
	/* CMD's image starts at its EXEC, below; PID's now */
	if (!spawned)
		follow_out_root(pid, 0, NULL, NULL, now_ns());
	if (spawned && (live = malloc(sizeof(*live) * (cap = 64))))
		live[nlive++] = pid;
	while (!end && !(sig = atomic_load(&stop_sig))) {
		while (!end && (r = tnfctl_watch_read(w, &ev, 0)) == 1) {
			end = ev.kind == TNFCTL_WATCH_END;
			if (live && ev.kind == TNFCTL_WATCH_FORK) {
				pid_t *p = nlive < cap ? live
						       : realloc(live, sizeof(*live) * (cap *= 2));

				if (p) {
					live = p;
					live[nlive++] = ev.child_pid;
				}
				/* Created before a signal we passed on: it gets it too. */
				if (fwd_sig && ev.time_ns <= fwd_ns)
					kill(ev.child_pid, fwd_sig);
			} else if (live && ev.kind == TNFCTL_WATCH_EXIT) {
				for (i = 0; i < nlive; i++)
					if (live[i] == ev.pid)
						live[i--] = live[--nlive];
			}
			/* exec_open returns after the root's exec: never printed */
			if (skip_exec && ev.kind == TNFCTL_WATCH_EXEC && ev.pid == pid) {
				struct tnfctl_exec_info x = {.sz = sizeof(x)};
				bool got = tnfctl_watch_event_exec(w, &x) == TNFCTL_ERR_NONE;

				follow_out_root(pid, getpid(), got ? x.argv : cmd, ev.path,
						ev.time_ns);
				skip_exec = false;
				continue;
			}
			/* CMD's own execve failed: said below as the stopping mode says it. */
			if (skip_exec && ev.kind == TNFCTL_WATCH_EXEC_FAILED && ev.pid == pid) {
				struct tnfctl_exec_info x = {.sz = sizeof(x)};

				if (tnfctl_watch_event_exec(w, &x) == TNFCTL_ERR_NONE && x.error) {
					exec_errno = x.error;
					continue;
				}
			}
			if (ev.kind == TNFCTL_WATCH_EXIT && ev.pid == pid)
				status = ev.term_signal ? 128 + ev.term_signal : ev.exit_status;
			/* CMD never ran (its execve failed): no event, as in the stopping mode */
			if (skip_exec && ev.kind == TNFCTL_WATCH_EXIT && ev.pid == pid)
				continue;
			print_watch_event(w, &ev);
		}
		/* Every event read: pass the signals that came on to the live tree. */
		bits = spawned ? atomic_exchange(&fwd_pending, 0) : 0;
		for (sig = 1; bits && sig < 32; sig++)
			if (bits & (1u << sig)) {
				fwd_sig = sig;
				fwd_ns = now_ns();
				for (i = 0; i < nlive; i++)
					kill(live[i], sig);
			}
		sig = 0;
		if (r < 0) {
			/* control lost (1): the tree runs on, unwatched, as in the stopping mode */
			if (r == -TNFCTL_ERR_INTERNAL && errno == ECONNRESET)
				msg("%s: the engine (tnfctl-engine) ended; no longer followed",
				    name);
			else
				msg("%s: %s", name, tnfctl_strerror(-r));
			lost_control = true;
			break;
		}
		if (end)
			break;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR) {
			msg("poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents & POLLIN)
			while (read(wake_fd[0], buf, sizeof(buf)) > 0)
				;
	}
	free(live);
	lost = tnfctl_watch_lost(w);
	tnfctl_watch_close(w);
	if (lost)
		msg("%llu kernel event records lost", lost);
	werr = out_close();
	if (lost_control)
		return 1;
	if (sig)
		return werr ? 1 : 128 + sig; /* the tree runs on, unwatched */
	/* Our own child: its status does not depend on a record that may be lost. */
	if (spawned && waitpid(pid, &st, 0) == pid) {
		status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		if (exec_errno && WIFEXITED(st) && WEXITSTATUS(st) == 127) {
			msg("%s: %s", name, strerror(exec_errno));
			return exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
		}
		if (WIFSIGNALED(st) && !werr)
			die_like(WTERMSIG(st));
	}
	/* the events could not all be written: tnfctl-follow failed (1) */
	return werr || status < 0 ? 1 : status;
}
