// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl-follow's stopping mode (the default): one thread per process,
 * looping on tnfctl_continue(); tnfctl-follow.c says how it works.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

#include "fd_limit.h"
#include "follow.h"
#include "follow_out.h"

/* Every process: no probes touched (no preload), failed execs reported. */
#define OPEN_FLAGS (TNFCTL_OPEN_NOPROBES | TNFCTL_OPEN_EXEC_FAILED)

#define KICK_MS 50 /* how often followers are re-kicked while stopping */

struct follower {
	tnfctl_handle_t *h;
	pid_t pid;
	bool root; /* its exit status becomes ours */
	pthread_t thread;
	struct follower *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards what follows, fwd_sig, fwd_ns */
static struct follower *followers;			 /* live follower threads */
static int root_status = -1;				 /* -1: not known (yet) */
static int root_sig; /* the signal that ended the root, else 0 */

static const char *const event_names[] = {
	[TNFCTL_EVENT_EINTR] = "EINTR",	  [TNFCTL_EVENT_TARGGONE] = "TARGGONE",
	[TNFCTL_EVENT_DLOPEN] = "DLOPEN", [TNFCTL_EVENT_DLCLOSE] = "DLCLOSE",
	[TNFCTL_EVENT_EXEC] = "EXEC",	  [TNFCTL_EVENT_FORK] = "FORK",
	[TNFCTL_EVENT_EXIT] = "EXIT",	  [TNFCTL_EVENT_EXEC_FAILED] = "EXECFAIL",
};

/* Write the event tnfctl_continue() just returned; @info receives its details. */
static void print_event(struct follower *f, tnfctl_event_t evt, struct tnfctl_event_data *info)
{
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	struct follow_ev e = {.event = event_names[evt], .core = -1};

	if (tnfctl_event_data_get(f->h, info) != TNFCTL_ERR_NONE) {
		memset(info, 0, sizeof(*info));
		info->sz = sizeof(*info);
		info->path = "";
		info->pid = f->pid;
		info->time_ns = now_ns();
	}
	e.time_ns = info->time_ns;
	e.pid = info->pid;
	e.tid = info->tid;
	e.child = info->child_pid;
	e.status = info->exit_status;
	e.signal = info->term_signal;
	if (evt == TNFCTL_EVENT_EXEC || evt == TNFCTL_EVENT_EXEC_FAILED ||
	    evt == TNFCTL_EVENT_DLOPEN || evt == TNFCTL_EVENT_DLCLOSE)
		e.path = info->path;
	if ((evt == TNFCTL_EVENT_EXEC || evt == TNFCTL_EVENT_EXEC_FAILED) &&
	    tnfctl_event_exec_get(f->h, &x) == TNFCTL_ERR_NONE)
		e.x = &x;
	follow_out_event(&e);
}

static void *follow(void *arg);

/*
 * Serve @h (pid @pid) from a new thread; on failure detach from it.  A
 * process created at @fork_ns (0: the root) before a signal was passed on
 * to the tree gets it too: it existed when the signal came.
 */
static int spawn(tnfctl_handle_t *h, pid_t pid, bool root, uint64_t fork_ns)
{
	struct follower *f = calloc(1, sizeof(*f));
	pthread_attr_t attr;
	int err = ENOMEM;

	if (f) {
		*f = (struct follower){.h = h, .pid = pid, .root = root};
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		/* Linked under the lock, so the thread cannot unlink itself first. */
		pthread_mutex_lock(&lock);
		err = pthread_create(&f->thread, &attr, follow, f);
		if (!err) {
			f->next = followers;
			followers = f;
			if (fwd_sig && fork_ns && fork_ns <= fwd_ns)
				kill(pid, fwd_sig);
		}
		pthread_mutex_unlock(&lock);
		pthread_attr_destroy(&attr);
	}
	if (err) {
		msg("pid %d: cannot follow: %s", pid, strerror(err));
		tnfctl_close(h, TNFCTL_TARG_RESUME);
		free(f);
	}
	return err;
}

static void *follow(void *arg)
{
	struct follower *f = arg, **p;
	struct tnfctl_event_data info = {.sz = sizeof(info)}; /* path: the handle's */
	tnfctl_handle_t *child;
	tnfctl_errcode_t err;
	tnfctl_event_t evt;
	sigset_t set;
	size_t i;

	/* The main thread takes the signals to pass on (or to detach on). */
	sigemptyset(&set);
	for (i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
		sigaddset(&set, term_sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		if (atomic_load(&stop_sig)) {
			tnfctl_close(f->h, TNFCTL_TARG_RESUME);
			break;
		}
		child = NULL;
		err = tnfctl_continue(f->h, &evt, &child);
		if (err == TNFCTL_ERR_NOPROCESS) {
			/* Killed while stopped at an event: only SIGKILL does that. */
			evt = TNFCTL_EVENT_TARGGONE;
			memset(&info, 0, sizeof(info));
			info.sz = sizeof(info);
			info.path = "";
			info.pid = f->pid;
			info.time_ns = now_ns();
			info.term_signal = SIGKILL;
			follow_out_event(&(struct follow_ev){.time_ns = info.time_ns,
							     .pid = info.pid,
							     .event = event_names[evt],
							     .signal = SIGKILL,
							     .core = -1});
		} else if (err != TNFCTL_ERR_NONE) {
			if (err == TNFCTL_ERR_ALLOCFAIL && (errno == EMFILE || errno == ENFILE))
				msg("pid %d: out of file descriptors (ulimit -n, %s); detached",
				    f->pid, strerror(errno));
			else if (err == TNFCTL_ERR_INTERNAL && errno == ECONNRESET)
				/* resumed, or (the exec'd root) killed with it: libtnfctl(3) */
				msg("pid %d: the engine (tnfctl-engine) ended; no longer followed",
				    f->pid);
			else
				msg("pid %d: %s; detached", f->pid, tnfctl_strerror(err));
			tnfctl_close(f->h, TNFCTL_TARG_RESUME);
			break;
		} else if (evt == TNFCTL_EVENT_EINTR) {
			continue; /* stop_sig is checked at the top */
		} else {
			print_event(f, evt, &info);
		}
		if (evt == TNFCTL_EVENT_FORK && child) {
			spawn(child, info.child_pid, false, info.time_ns ? info.time_ns : 1);
		} else if (evt == TNFCTL_EVENT_EXIT || evt == TNFCTL_EVENT_TARGGONE) {
			if (f->root) {
				pthread_mutex_lock(&lock);
				root_status = evt == TNFCTL_EVENT_EXIT ? info.exit_status
								       : 128 + info.term_signal;
				root_sig = evt == TNFCTL_EVENT_EXIT ? 0 : info.term_signal;
				pthread_mutex_unlock(&lock);
			}
			tnfctl_close(f->h, TNFCTL_TARG_DEFAULT);
			break;
		}
	}

	pthread_mutex_lock(&lock);
	for (p = &followers; *p != f; p = &(*p)->next)
		;
	*p = f->next;
	if (!followers)
		eventfd_write(done_fd, 1);
	pthread_mutex_unlock(&lock);
	free(f);
	return NULL;
}

/* Pass @sig on to every followed process (under lock). */
static void forward_locked(int sig)
{
	struct follower *f;

	fwd_sig = sig;
	fwd_ns = now_ns();
	for (f = followers; f; f = f->next)
		kill(f->pid, sig);
}

/* Wait for all followers to end; returns the termination signal taken, or 0. */
static int wait_all(void)
{
	struct pollfd pfd[2] = {{.fd = done_fd, .events = POLLIN},
				{.fd = wake_fd[0], .events = POLLIN}};
	struct follower *f;
	char buf[64];

	for (;;) {
		if (poll(pfd, 2, atomic_load(&stop_sig) ? KICK_MS : -1) < 0) {
			if (errno == EINTR)
				continue;
			msg("poll: %s", strerror(errno));
			exit(1);
		}
		if (pfd[0].revents & POLLIN)
			return atomic_load(&stop_sig);
		if (pfd[1].revents & POLLIN)
			while (read(wake_fd[0], buf, sizeof(buf)) > 0)
				;
		if (!attached) {
			unsigned int bits = atomic_exchange(&fwd_pending, 0);
			int sig;

			pthread_mutex_lock(&lock);
			for (sig = 1; sig < 32; sig++)
				if (bits & (1u << sig))
					forward_locked(sig);
			pthread_mutex_unlock(&lock);
			continue;
		}
		if (!atomic_load(&stop_sig))
			continue;
		pthread_mutex_lock(&lock);
		for (f = followers; f; f = f->next)
			pthread_kill(f->thread, SIGUSR1);
		pthread_mutex_unlock(&lock);
	}
}

/*
 * The name CMD @name was exec'd by, as an EXEC names it: found on $PATH as
 * execvp(3) and tnfctl_exec_open() do (the first executable file), or
 * @name itself if it holds a '/'.  NULL if not found; the caller frees it.
 */
static char *exec_name_of(const char *name)
{
	const char *env = getenv("PATH"), *p, *end;
	char *buf = NULL;

	if (strchr(name, '/'))
		return strdup(name);
	for (p = env ? env : "/usr/local/bin:/usr/bin:/bin";; p = end + 1) {
		end = strchrnul(p, ':');
		free(buf);
		if (asprintf(&buf, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "./", name) < 0)
			return NULL;
		if (!access(buf, X_OK))
			return buf;
		if (!*end)
			break;
	}
	free(buf);
	return NULL;
}

/* The stopping mode: see follow.h. */
int follow_stop(const char *name, pid_t pid, char **cmd)
{
	char *exec_name;
	tnfctl_trace_attrs_t attrs;
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;
	int sig, status, e;
	bool werr;

	/* No probes, no preload; CMD in our job, on our terminal. */
	errno = 0;
	if (pid) {
		TNFCTL_OPTS(tnfctl_open_opts, opts, .flags = OPEN_FLAGS);

		err = tnfctl_pid_open_opts(pid, &opts, &h);
	} else {
		TNFCTL_OPTS(tnfctl_open_opts, opts, .flags = OPEN_FLAGS | TNFCTL_OPEN_FOREGROUND);

		err = tnfctl_exec_open_opts(name, cmd, NULL, &opts, &h);
	}
	e = errno;
	if (err != TNFCTL_ERR_NONE) {
		follow_out_close(now_ns()); /* -o is left well-formed, with no event */
		return open_failed(name, !pid, err, e);
	}
	/* Only now: an ignored SIGPIPE would have been inherited across the exec. */
	signal(SIGPIPE, SIG_IGN);
	tnf_raise_fd_limit(); /* the root has the caller's limit */
	if (tnfctl_trace_attrs_get(h, &attrs) == TNFCTL_ERR_NONE)
		pid = attrs.targ_pid;
	/* exec_open returns at the exec: its image starts now */
	exec_name = attached ? NULL : exec_name_of(name);
	follow_out_root(pid, attached ? 0 : getpid(), attached ? NULL : cmd, exec_name, now_ns());
	free(exec_name);
	if (spawn(h, pid, true, 0))
		return 1;

	sig = wait_all();
	if (tnfctl_events_lost())
		msg("%llu kernel event records lost", (unsigned long long)tnfctl_events_lost());
	werr = out_close();
	pthread_mutex_lock(&lock);
	/* A signal taken (-p) detached us; with CMD the root's status is ours. */
	status = sig ? 128 + sig : root_status >= 0 ? root_status : 1;
	if (!sig && !attached)
		sig = root_sig;
	pthread_mutex_unlock(&lock);
	/* the events could not all be written: tnfctl-follow failed (1) */
	if (werr)
		return 1;
	if (!attached)
		die_like(sig);
	return status;
}
