// SPDX-License-Identifier: BSD-2-Clause
/*
 * The controlled processes.  Each handle is served by its own thread, the
 * pattern of src/follow/stop.c: the thread parks while prex is at
 * the prompt (the target stays stopped) and loops on tnfctl_continue()
 * after `continue`.  The main thread reads commands while every thread is
 * parked, so a handle is only ever used by one thread at a time.
 *
 * Stopping: SIGINT (the terminal's ^C reaches prex only; the target has its
 * own process group) wakes the main thread through a pipe.  It clears
 * `running` and sends SIGUSR1 (a no-op handler without SA_RESTART) to each
 * thread still running, so its tnfctl_continue() returns EINTR with the
 * target stopped; the thread then parks.  A thread between two calls when
 * the kick came would miss it, so the kick is repeated every KICK_MS until
 * all are parked.  Target threads block SIGINT, so only the main thread
 * takes it.
 *
 * Events: DLOPEN and DLCLOSE continue silently (libtnfctl has already run
 * the history on the new probes); EXIT and TARGGONE end the target.  EXEC
 * ends it too (it is resumed, as Solaris prex did) unless prex -f, which
 * re-attaches to the new image.  With -f a FORK's child handle gets a
 * thread of its own.
 *
 * Trace files under -f: a process gets its own file only when a probe
 * command (typed, or replayed after an exec or a dlopen) first selects one
 * of its probes; libtnfctl refuses probe writes without a file (NOBUF), and
 * a refused write changed nothing, so the command is applied again once the
 * file exists.  A probe-less program (make, sh, cc) never gets one, and a
 * forked child writes into its parent's file if the parent had one.
 *
 * Quit under -f closes every followed process with the same action; plain
 * quit is kill when prex started the root, resume when it attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "prex.h"

#define KICK_MS 50

enum tstate {
	T_PARKED,
	T_RUNNING,
	T_DONE
};

struct target {
	tnfctl_handle_t *h;
	pid_t pid;
	enum tstate state;
	int nfiles;	  /* trace files made for this pid, to name the next one */
	bool first_image; /* the root before any exec: its file is g_tracefile */
	bool noprobes;	  /* opened with TNFCTL_OPEN_NOPROBES: USDT probes only, no file */
	pthread_t thread;
	bool has_thread;
	struct target *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct target *targets; /* newest first; guarded by lock */
static bool running;	       /* after `continue`, until stopped */
static bool quitting;	       /* threads must end */
static int wake_fd[2] = {-1, -1};
static volatile sig_atomic_t got_sigint;
static volatile sig_atomic_t got_term; /* SIGTERM or SIGHUP: quit as `quit` does */
static int close_errors;	       /* closes that failed in target threads */
static pid_t root_pgid;		       /* the root's process group, when prex started it */

static void wake_main(void)
{
	ssize_t n = write(wake_fd[1], "", 1);

	(void)n; /* a full pipe is readable already */
}

static void on_sigint(int sig)
{
	int saved = errno;

	(void)sig;
	got_sigint = 1;
	wake_main();
	errno = saved;
}

static void on_term(int sig)
{
	int saved = errno;

	got_term = sig;
	wake_main();
	errno = saved;
}

int prex_term_signal(void)
{
	return got_term;
}

static void on_sigusr1(int sig)
{
	(void)sig; /* only there to interrupt tnfctl_continue() */
}

static void install_unless_ignored(int sig, const struct sigaction *sa)
{
	struct sigaction old;

	if (!sigaction(sig, NULL, &old) && old.sa_handler != SIG_IGN)
		sigaction(sig, sa, NULL);
}

void targets_install_signals(void)
{
	struct sigaction sa = {.sa_flags = 0}; /* no SA_RESTART */

	if (pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK)) {
		perror("prex: pipe");
		exit(1);
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_sigusr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	/*
	 * A window closed or a kill: end the targets as quit does (a tree
	 * prex started would run on, reparented, if prex just died).  A
	 * signal ignored at start (nohup) stays ignored.
	 */
	sa.sa_handler = on_term;
	install_unless_ignored(SIGTERM, &sa);
	install_unless_ignored(SIGHUP, &sa);
	/* a target that closes a pipe prex writes to must not kill prex */
	signal(SIGPIPE, SIG_IGN);
}

static void finish(struct target *t)
{
	pthread_mutex_lock(&lock);
	t->state = T_DONE;
	t->h = NULL;
	pthread_mutex_unlock(&lock);
	wake_main();
}

static void close_target(struct target *t, tnfctl_targ_op_t op)
{
	tnfctl_errcode_t err = tnfctl_close(t->h, op);

	if (err) {
		prex_msg("error on closing process %d: %s", (int)t->pid, tnfctl_strerror(err));
		pthread_mutex_lock(&lock);
		close_errors = 1;
		pthread_mutex_unlock(&lock);
	}
}

static void *serve(void *arg);

static int spawn_thread(struct target *t)
{
	sigset_t block, old;
	int err;

	/* the thread inherits a mask with SIGINT, SIGTERM and SIGHUP blocked */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = pthread_create(&t->thread, NULL, serve, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		t->has_thread = true;
	return err;
}

/* Links a new target (parked) and starts its thread; called with lock held. */
static struct target *add_locked(tnfctl_handle_t *h, pid_t pid)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->h = h;
	t->pid = pid;
	t->state = T_PARKED;
	if (spawn_thread(t)) {
		free(t);
		return NULL;
	}
	t->next = targets;
	targets = t;
	return t;
}

int target_start(tnfctl_handle_t *h, pid_t pid, bool noprobes)
{
	struct target *t;

	pthread_mutex_lock(&lock);
	t = add_locked(h, pid);
	if (t) {
		t->first_image = true;
		t->noprobes = noprobes;
	}
	if (g_opt.cmd)
		root_pgid = getpgid(pid);
	pthread_mutex_unlock(&lock);
	return t ? 0 : -1;
}

/*
 * prex -k: the kernel is the one target, with no thread (it never stops
 * and `continue` is ignored), so the probe commands, list and quit reach it
 * as they reach a process.
 */
int target_kernel(tnfctl_handle_t *h)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->h = h;
	t->state = T_PARKED;
	pthread_mutex_lock(&lock);
	t->next = targets;
	targets = t;
	pthread_mutex_unlock(&lock);
	return 0;
}

/*
 * Gives @t its trace file: g_tracefile for the root's first image, else
 * <g_tracefile>.<pid>, then .<pid>.<n> for the n-th file of that pid.
 * @exec_path names the image just exec'd, for the message.
 */
static tnfctl_errcode_t make_file(struct target *t, const char *exec_path)
{
	char name[PATH_MAX + 32];
	tnfctl_errcode_t err;

	if (t->first_image)
		snprintf(name, sizeof(name), "%s", g_tracefile);
	else if (!t->nfiles)
		snprintf(name, sizeof(name), "%s.%d", g_tracefile, (int)t->pid);
	else
		snprintf(name, sizeof(name), "%s.%d.%d", g_tracefile, (int)t->pid, t->nfiles + 1);
	err = tnfctl_buffer_alloc(t->h, name, (uint_t)g_opt.size);
	if (err) {
		prex_msg("process %d: cannot create trace file %s: %s; its probes stay as they are",
			 (int)t->pid, name, tnfctl_strerror(err));
		return err;
	}
	t->nfiles++;
	if (exec_path)
		prex_msg("process %d exec'd %s; tracing into %s", (int)t->pid, exec_path, name);
	else
		prex_msg("process %d: tracing into %s", (int)t->pid, name);
	return TNFCTL_ERR_NONE;
}

/* tnfctl_probe_apply(), making the trace file first when a write needs one. */
static tnfctl_errcode_t apply(struct target *t, tnfctl_probe_op_t op, void *cd,
			      const char *exec_path)
{
	tnfctl_errcode_t err;

	/* no runtime: only USDT probes, which need no file */
	if (t->noprobes) {
		err = tnfctl_probe_apply(t->h, op, cd);
		return err == TNFCTL_ERR_NOLIBTNFPROBE ? TNFCTL_ERR_NONE : err;
	}
	err = tnfctl_probe_apply(t->h, op, cd);
	if (err != TNFCTL_ERR_NOBUF)
		return err;
	/* nothing was written: the first write that selected a probe failed */
	err = make_file(t, exec_path);
	return err ? err : tnfctl_probe_apply(t->h, op, cd);
}

tnfctl_errcode_t target_probe_apply(tnfctl_handle_t *h, tnfctl_probe_op_t op, void *cd)
{
	struct target *t;

	pthread_mutex_lock(&lock);
	for (t = targets; t && t->h != h; t = t->next)
		;
	pthread_mutex_unlock(&lock);
	return t ? apply(t, op, cd, NULL) : TNFCTL_ERR_BADARG;
}

/* The history, on every probe of @t (a new image, or after a refused replay). */
static void apply_history(struct target *t, const char *exec_path)
{
	tnfctl_errcode_t err = apply(t, history_apply_probe, NULL, exec_path);

	if (err)
		prex_msg("process %d: error on probe operation: %s", (int)t->pid,
			 tnfctl_strerror(err));
}

/* prex -f: a FORK gave a handle on the stopped child. */
static void adopt(struct target *parent, tnfctl_handle_t *h, pid_t pid)
{
	tnfctl_errcode_t err;
	struct target *t;

	/*
	 * The child's probes are copies of the parent's, already set: only
	 * probes of objects it loads later need the history.
	 */
	if (!parent->noprobes) {
		history_no_replay = 1;
		err = tnfctl_register_funcs(h, history_replay, NULL);
		history_no_replay = 0;
		if (err)
			prex_msg("process %d: %s", (int)pid, tnfctl_strerror(err));
	}
	/*
	 * Its USDT probes the history enables, not attached (out of
	 * descriptors, say): named.  Before its thread runs it: then the
	 * handle is that thread's.
	 */
	if (history_enables()) {
		history_pid = pid;
		err = tnfctl_probe_apply(h, history_usdt_retry, NULL);
		if (err && err != TNFCTL_ERR_NOLIBTNFPROBE)
			prex_msg("process %d: USDT probes not listed: %s%s", (int)pid,
				 tnfctl_strerror(err),
				 err == TNFCTL_ERR_ALLOCFAIL && (errno == EMFILE || errno == ENFILE)
					 ? " (Too many open files)"
					 : "");
		history_pid = 0;
	}
	pthread_mutex_lock(&lock);
	t = add_locked(h, pid);
	if (t)
		t->noprobes = parent->noprobes; /* a child handle keeps the flags */
	pthread_mutex_unlock(&lock);
	if (!t) {
		prex_msg("process %d: cannot follow child %d; it runs on", (int)parent->pid,
			 (int)pid);
		tnfctl_close(h, TNFCTL_TARG_RESUME);
		return;
	}
	prex_msg("process %d forked %d; following it", (int)parent->pid, (int)pid);
}

/*
 * prex -f: the new image of @t has no probe runtime; @h (NOPROBES) has its
 * USDT probes, which take the history now (a static program's) and as
 * later probe calls find more (a dynamic one's, once ld.so has run).
 */
static bool follow_noprobes(struct target *t, tnfctl_handle_t *h, pid_t pid, const char *path)
{
	t->h = h;
	t->pid = pid;
	t->noprobes = true;
	history_no_replay = 1;
	tnfctl_register_funcs(h, history_replay, NULL);
	history_no_replay = 0;
	apply_history(t, path);
	return true;
}

/* prex -f: the target exec'd; control the new image.  False if let go. */
static bool reattach(struct target *t, const char *path)
{
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;
	pid_t pid = t->pid;
	int files = t->nfiles;
	bool is_static;

	if (!t->noprobes && tnfctl_trace_attrs_get(t->h, &a) == TNFCTL_ERR_NONE)
		pid = a.targ_pid;
	tnfctl_close(t->h, TNFCTL_TARG_SUSPEND);
	t->h = NULL;
	t->first_image = false;
	t->noprobes = false;
	/* no probe runtime (static, env -i): follow it with its USDT probes only */
	if (image_lacks_runtime(pid, &is_static) &&
	    !tnfctl_pid_open_flags(pid, TNFCTL_OPEN_NOPROBES, &h)) {
		prex_msg("process %d exec'd %s (%s; USDT probes only)", (int)pid, path,
			 is_static ? "static" : "no libtnfprobe.so.1");
		return follow_noprobes(t, h, pid, path);
	}
	err = tnfctl_pid_open(pid, &h);
	if (err == TNFCTL_ERR_NOLIBTNFPROBE || err == TNFCTL_ERR_NOTDYNAMIC) {
		/* it runs on now: follow it from here, USDT probes only */
		if (!tnfctl_pid_open_flags(pid, TNFCTL_OPEN_NOPROBES, &h)) {
			prex_msg("process %d exec'd %s (%s; USDT probes only)", (int)pid, path,
				 tnfctl_strerror(err));
			return follow_noprobes(t, h, pid, path);
		}
	}
	if (err) {
		/* The library resumed it: only our SUSPEND had stopped it. */
		prex_msg("process %d exec'd %s; cannot follow the new image: %s", (int)pid, path,
			 tnfctl_strerror(err));
		return false;
	}
	t->h = h;
	t->pid = pid;
	/* the create callback is for probes of objects loaded later */
	history_no_replay = 1;
	err = tnfctl_register_funcs(h, history_replay, NULL);
	history_no_replay = 0;
	if (err)
		prex_msg("process %d: %s", (int)pid, tnfctl_strerror(err));
	/* a fresh image: the whole history applies to all its probes */
	apply_history(t, path);
	if (t->nfiles == files)
		prex_msg("process %d exec'd %s", (int)pid, path);
	return true;
}

static void *serve(void *arg)
{
	struct target *t = arg;
	tnfctl_event_info_t info;
	tnfctl_handle_t *child;
	tnfctl_errcode_t err;
	tnfctl_event_t evt;

	for (;;) {
		pthread_mutex_lock(&lock);
		while (!running && !quitting) {
			if (t->state != T_PARKED) {
				t->state = T_PARKED;
				wake_main();
			}
			pthread_cond_wait(&cond, &lock);
		}
		if (quitting) {
			t->state = T_PARKED; /* main closes the handle */
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		t->state = T_RUNNING;
		pthread_mutex_unlock(&lock);

		child = NULL;
		err = tnfctl_continue(t->h, &evt, g_opt.follow ? &child : NULL);
		if (err) {
			prex_msg("cannot continue target %d: %s", (int)t->pid,
				 tnfctl_strerror(err));
			close_target(t, TNFCTL_TARG_DEFAULT);
			break;
		}
		if (history_need_file) {
			/* a new object's probes were selected and there is no file */
			history_need_file = 0;
			apply_history(t, NULL);
		}
		memset(&info, 0, sizeof(info));
		tnfctl_event_info_get(t->h, &info);
		if (evt == TNFCTL_EVENT_FORK && child) {
			adopt(t, child, info.child_pid);
		} else if (evt == TNFCTL_EVENT_EXEC) {
			if (g_opt.follow) {
				if (reattach(t, info.path))
					continue;
				break;
			}
			prex_msg("target process exec'd %s; resuming it", info.path);
			close_target(t, TNFCTL_TARG_RESUME);
			break;
		} else if (evt == TNFCTL_EVENT_EXIT) {
			if (g_opt.follow)
				prex_msg("process %d exited (status %d)", (int)t->pid,
					 info.exit_status);
			else
				prex_msg("target process exited");
			close_target(t, TNFCTL_TARG_DEFAULT);
			break;
		} else if (evt == TNFCTL_EVENT_TARGGONE) {
			if (g_opt.follow)
				prex_msg("process %d ended without calling exit (signal %d)",
					 (int)t->pid, info.term_signal);
			else
				prex_msg("target process ended without calling exit (signal %d)",
					 info.term_signal);
			close_target(t, TNFCTL_TARG_DEFAULT);
			break;
		}
		/*
		 * EINTR while running, not kicked: the target had the terminal
		 * and ^C was typed (libtnfctl took it as ours); stop them all.
		 */
		if (evt == TNFCTL_EVENT_EINTR) {
			pthread_mutex_lock(&lock);
			if (running) {
				got_sigint = 1;
				wake_main();
			}
			pthread_mutex_unlock(&lock);
		}
		/* EINTR, DLOPEN, DLCLOSE: loop (and park if stopping) */
	}
	finish(t);
	return NULL;
}

/*
 * While the targets run, the root's process group has the terminal (when
 * prex has it), so that an interactive program reads what is typed; prex
 * takes it back when they stop.  SIGTTOU is blocked around the switch:
 * prex is in the background when it takes the terminal back.  The modes
 * go with the terminal, as a shell's job control does: a target stopped
 * in a read with its own modes (python's readline: no echo) gets them
 * back at `continue`, prex its own at the stop.
 */
static struct termios target_modes, prex_modes;
static bool target_modes_ok, prex_modes_ok;

static pid_t tty_give(void)
{
	pid_t mine = getpgrp(), pg = -1;
	struct target *t;
	sigset_t ttou, old;

	if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != mine)
		return -1;
	pthread_mutex_lock(&lock);
	for (t = targets; t; t = t->next)
		if (t->state != T_DONE)
			pg = getpgid(t->pid); /* newest first: the last one is the root */
	pthread_mutex_unlock(&lock);
	if (pg <= 0 || pg == mine)
		return -1;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &ttou, &old);
	prex_modes_ok = !tcgetattr(STDIN_FILENO, &prex_modes);
	if (target_modes_ok)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &target_modes);
	if (tcsetpgrp(STDIN_FILENO, pg))
		mine = -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return mine;
}

static void tty_take_back(pid_t mine)
{
	sigset_t ttou, old;

	if (mine <= 0)
		return;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(STDIN_FILENO, mine);
	target_modes_ok = !tcgetattr(STDIN_FILENO, &target_modes);
	if (prex_modes_ok)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &prex_modes);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static int run_targets(void);

int targets_run(void)
{
	pid_t mine = tty_give();
	int r = run_targets();

	tty_take_back(mine);
	return r;
}

static int run_targets(void)
{
	struct pollfd pfd = {.fd = wake_fd[0], .events = POLLIN};
	char buf[64];

	pthread_mutex_lock(&lock);
	got_sigint = 0;
	running = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (;;) {
		struct target *t;
		int live = 0, busy = 0;
		bool stopping;

		pthread_mutex_lock(&lock);
		for (t = targets; t; t = t->next) {
			live += t->state != T_DONE;
			busy += t->state == T_RUNNING;
		}
		stopping = !running;
		if (stopping)
			for (t = targets; t; t = t->next)
				if (t->state == T_RUNNING)
					pthread_kill(t->thread, SIGUSR1);
		pthread_mutex_unlock(&lock);
		if (!live)
			return 1;
		if (stopping && !busy)
			return 0;
		if (poll(&pfd, 1, stopping ? KICK_MS : -1) < 0 && errno != EINTR) {
			perror("prex: poll");
			exit(1);
		}
		while (read(wake_fd[0], buf, sizeof(buf)) > 0)
			;
		if (got_sigint || got_term) {
			got_sigint = 0;
			pthread_mutex_lock(&lock);
			running = false;
			pthread_mutex_unlock(&lock);
		}
	}
}

int targets_count(void)
{
	struct target *t;
	int n = 0;

	pthread_mutex_lock(&lock);
	for (t = targets; t; t = t->next)
		n += t->state != T_DONE;
	pthread_mutex_unlock(&lock);
	return n;
}

/* Oldest first: the root, then its descendants in the order they came. */
static int snapshot(struct target ***out)
{
	struct target *t, **v;
	int n = 0, i;

	pthread_mutex_lock(&lock);
	for (t = targets; t; t = t->next)
		n++;
	v = calloc(n + 1, sizeof(*v));
	if (!v) {
		perror("prex");
		exit(1);
	}
	i = n;
	for (t = targets; t; t = t->next)
		v[--i] = t;
	pthread_mutex_unlock(&lock);
	*out = v;
	return n;
}

void targets_foreach(target_fn *fn, void *cd)
{
	struct target **v;
	int i, n = snapshot(&v);

	for (i = 0; i < n; i++) {
		tnfctl_trace_attrs_t a;

		if (v[i]->state == T_DONE)
			continue;
		/* without the runtime: its USDT probes (NOLIBTNFPROBE: none can be read) */
		if (v[i]->noprobes && tnfctl_check_libs(v[i]->h) == TNFCTL_ERR_NOLIBTNFPROBE)
			continue;
		if (tnfctl_trace_attrs_get(v[i]->h, &a))
			a.trace_file_name = NULL;
		fn(v[i]->h, v[i]->pid, a.trace_file_name, cd);
	}
	free(v);
}

void targets_check_broken(void)
{
	struct target **v;
	int i, n = snapshot(&v);

	for (i = 0; i < n; i++) {
		tnfctl_trace_attrs_t a;

		if (v[i]->state == T_DONE || v[i]->noprobes || tnfctl_trace_attrs_get(v[i]->h, &a))
			continue;
		if (a.trace_buf_state == TNFCTL_BUF_BROKEN)
			printf("Tracing broke in process %d because of an internal error; "
			       "restart prex and the target\n",
			       (int)v[i]->pid);
	}
	free(v);
}

/*
 * quit kill of a tree prex started: also SIGKILL the root's process group,
 * so that a process prex had to let go (one it could not re-attach after an
 * exec) dies with the rest.  @holder, a member still stopped under our
 * control, guarantees the group is still the one exec_open made.
 */
static void kill_group(struct target *holder)
{
	if (root_pgid > 1 && root_pgid != getpgrp() && getpgid(holder->pid) == root_pgid)
		kill(-root_pgid, SIGKILL);
}

int targets_close(tnfctl_targ_op_t op)
{
	struct target **v, *holder = NULL;
	int i, n, rc = 0;

	/* -f: one action for the whole tree; plain quit as for the root */
	if (g_opt.follow && op == TNFCTL_TARG_DEFAULT)
		op = g_opt.cmd ? TNFCTL_TARG_KILL : TNFCTL_TARG_RESUME;
	pthread_mutex_lock(&lock);
	quitting = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	n = snapshot(&v);
	for (i = 0; i < n; i++)
		if (v[i]->has_thread)
			pthread_join(v[i]->thread, NULL);
	for (i = 0; i < n; i++) {
		tnfctl_errcode_t err;

		if (v[i]->state == T_DONE || !v[i]->h)
			continue;
		if (g_opt.follow && g_opt.cmd && op == TNFCTL_TARG_KILL && !holder &&
		    getpgid(v[i]->pid) == root_pgid) {
			holder = v[i]; /* closed last */
			continue;
		}
		err = tnfctl_close(v[i]->h, op);
		if (err) {
			prex_msg("trouble quitting: %s", tnfctl_strerror(err));
			rc = 1;
		}
	}
	if (holder) {
		tnfctl_errcode_t err;

		kill_group(holder);
		err = tnfctl_close(holder->h, op);
		if (err) {
			prex_msg("trouble quitting: %s", tnfctl_strerror(err));
			rc = 1;
		}
	}
	free(v);
	return rc || close_errors;
}
