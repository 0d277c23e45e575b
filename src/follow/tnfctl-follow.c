// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl-follow - follow a process tree with libtnfctl and print its events.
 *
 *	tnfctl-follow [--no-stop] [--format=text|ndjson|json] [-o FILE] -- CMD [ARGS...]
 *	tnfctl-follow [--no-stop] [--format=text|ndjson|json] [-o FILE] -p PID
 *
 * Starts CMD under control (tnfctl_exec_open_opts) or attaches to PID
 * (tnfctl_pid_open_opts), then follows every process of the tree and prints
 * one line per event: milliseconds since start, pid, event, details (or, with
 * --format, one JSON object per event, or a Perfetto trace: follow_out.c).  It
 * never touches a probe, so it opens with TNFCTL_OPEN_NOPROBES: no process's
 * environment is changed (no LD_PRELOAD), and static programs, `env -i`
 * children and sanitizer builds are followed like any other.  CMD runs as
 * it would untraced, in tnfctl-follow's own job (TNFCTL_OPEN_FOREGROUND):
 * it reads the terminal, and the terminal's Ctrl-C, Ctrl-\ and Ctrl-Z reach
 * the whole job (tnfctl-follow ignores those it shares with the job and
 * waits for the job to end).  SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to
 * tnfctl-follow by kill(1) are passed on to every process of the tree
 * (those created before the signal came, also if their FORK is reported
 * later).  It exits, once every followed process has ended, with the root's
 * status (if a signal killed the root, it ends by that signal too, so that a
 * calling shell reacts as to the untraced command; 1 if the root could not
 * be followed to its end).  With -p it detaches on SIGINT, SIGQUIT, SIGTERM or
 * SIGHUP instead (the tree runs on) and exits with 128+N.  Exit codes: 2
 * usage error, 127 CMD not found, 126 CMD found but cannot be run (its
 * execve's reason is printed), 1 tnfctl-follow itself failed (e.g. no
 * privilege), else the root's status.  Built only on the public API of
 * <tnf/tnfctl.h>:
 *
 *	cc -D_GNU_SOURCE -I../common -o tnfctl-follow tnfctl-follow.c follow_out.c \
 *		../common/json_out.c $(pkg-config --cflags --libs tnfctl) -lpthread
 *
 * How it works:
 *  - One thread per handle, looping on tnfctl_continue().  A FORK hands the
 *    child's handle to a new thread.  After an EXEC the handle goes on in
 *    the new image (TNFCTL_OPEN_NOPROBES, a Linux extension): no close with
 *    SUSPEND and re-open, whose group-stop the process's parent would see
 *    (an interactive shell would report its job Stopped).
 *  - With -p, SIGINT, SIGQUIT, SIGTERM and SIGHUP detach: their handler records the signal in
 *    stop_sig and wakes the main thread through a pipe.  The main thread
 *    then sends SIGUSR1 (no-op handler, no SA_RESTART) to every follower, so
 *    a blocked tnfctl_continue() returns TNFCTL_EVENT_EINTR.  A follower
 *    that was between two calls sees stop_sig before its next one, and the
 *    kick is repeated every KICK_MS until no follower is left, so none can be
 *    missed.  Each follower closes its handle with RESUME: nothing is left
 *    stopped, not even the root.
 *  - These signals are caught, never blocked or ignored before the root is
 *    started: tnfctl_exec_open() forks the target from the calling thread,
 *    and exec keeps a blocked mask and ignored signals (it only resets
 *    caught ones).  SIGPIPE is ignored once the root runs: a reader of the
 *    output that leaves (`| head`) ends the output, silently, not
 *    tnfctl-follow, which ends as the tree does.
 *  - The last follower to end writes to an eventfd that the main thread
 *    polls together with the pipe: no busy waiting.
 *
 * With --no-stop it uses the passive watch instead (tnfctl_watch_*, a Linux
 * extension): nothing is ever stopped, the kernel adds each child to the
 * tree itself, and one thread reads every event of the tree in the order
 * the kernel wrote them (within a process: in time order).  It polls the
 * watch's fd together with the signal pipe; signals are passed on as in the
 * stopping mode (the pids come from the FORK and EXIT events).  With -p,
 * the processes the root had already created are followed too, and
 * SIGINT, SIGQUIT, SIGTERM and SIGHUP end it at once; the tree runs on.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

#include "fd_limit.h"
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

static const char *out_name = "stdout"; /* for a write error's message */
static uint64_t start_ns;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards the next two */
static struct follower *followers;			 /* live follower threads */
static int root_status = -1;				 /* -1: not known (yet) */
static int root_sig;		  /* the signal that ended the root, else 0 */
static int done_fd = -1;	  /* eventfd: all followers ended */
static int wake_fd[2] = {-1, -1}; /* self-pipe of on_term() */
static atomic_int stop_sig;	  /* -p: termination signal, 0 if none */
static atomic_uint fwd_pending;	  /* CMD: signals to pass on (bit N) */
static int fwd_sig;		  /* under lock: last signal passed on to the tree, 0 if none */
static uint64_t fwd_ns;		  /* under lock: when */
static bool attached;		  /* -p PID: detach on a signal instead of passing it on */

/* The signals tnfctl-follow passes on to the tree (CMD) or detaches on (-p). */
static const int term_sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

static const char *const event_names[] = {
	[TNFCTL_EVENT_EINTR] = "EINTR",	  [TNFCTL_EVENT_TARGGONE] = "TARGGONE",
	[TNFCTL_EVENT_DLOPEN] = "DLOPEN", [TNFCTL_EVENT_DLCLOSE] = "DLCLOSE",
	[TNFCTL_EVENT_EXEC] = "EXEC",	  [TNFCTL_EVENT_FORK] = "FORK",
	[TNFCTL_EVENT_EXIT] = "EXIT",	  [TNFCTL_EVENT_EXEC_FAILED] = "EXECFAIL",
};

/*
 * A message line on stderr, in one write(): the tree writes its own lines
 * to the same stderr, and a message written a piece at a time (stderr is
 * unbuffered: a write() per stdio call) could have one land in its middle.
 */
__attribute__((format(printf, 1, 2))) static void msg(const char *fmt, ...)
{
	static const char prefix[] = "tnfctl-follow: ";
	char small[1024], *buf = small;
	size_t len, off = 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = sizeof(prefix) - 1 + (size_t)n + 1;
	if (len + 1 > sizeof(small) && !(buf = malloc(len + 1)))
		return;
	memcpy(buf, prefix, sizeof(prefix) - 1);
	va_start(ap, fmt);
	vsnprintf(buf + sizeof(prefix) - 1, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf[len - 1] = '\n';
	flockfile(stderr); /* after what another thread prints with stdio */
	while (off < len) {
		ssize_t w = write(STDERR_FILENO, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += w;
	}
	funlockfile(stderr);
	if (buf != small)
		free(buf);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Write the event tnfctl_continue() just returned; @info receives its details. */
static void print_event(struct follower *f, tnfctl_event_t evt, tnfctl_event_info_t *info)
{
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	struct follow_ev e = {.event = event_names[evt], .core = -1};

	if (tnfctl_event_info_get(f->h, info) != TNFCTL_ERR_NONE) {
		memset(info, 0, sizeof(*info));
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
	tnfctl_event_info_t info;
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

static void on_sigusr1(int sig)
{
	(void)sig; /* only there to interrupt tnfctl_continue() */
}

/*
 * SIGINT, SIGQUIT, SIGTERM, SIGHUP: async-signal-safe, whichever thread runs
 * it.  One the terminal sent (SI_KERNEL) went to the whole foreground job,
 * the traced processes included: nothing to pass on; but for the SIGHUP of
 * a hang-up of the terminal we lead the session of: that one goes to the
 * session leader alone, which untraced would have been the command itself.
 */
static void on_term(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno, none = 0;
	ssize_t n;

	(void)uc;
	if (!attached) {
		if (si->si_code == SI_KERNEL && !(sig == SIGHUP && getsid(0) == getpid()))
			return;
		atomic_fetch_or(&fwd_pending, 1u << sig);
	} else {
		atomic_compare_exchange_strong(&stop_sig, &none, sig); /* the first one wins */
	}
	n = write(wake_fd[1], "", 1);
	(void)n; /* a full pipe is already readable */
	errno = saved_errno;
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
 * The root was killed by @sig: end the same way, so that a calling shell sees
 * it (bash stops a script on a child's SIGINT, not on an exit status of 130),
 * without a core file of our own.  Returns only if @sig does not kill us.
 */
static void die_like(int sig)
{
	struct rlimit no_core = {0, 0};
	sigset_t set;

	if (sig <= 0 || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
		return;
	fflush(NULL);
	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/*
 * Ends the output.  A write that failed is said, and tnfctl-follow failed
 * (true: exit 1, whatever the tree's status).  But a pipe whose reader has
 * left (`tnfctl-follow -- CMD | head`, -o >(cmd)) is no failure: the reader
 * wanted no more, the events after it went nowhere, and tnfctl-follow ends
 * as CMD does, as the untraced `CMD | head` would, without a message.
 */
static bool out_close(void)
{
	int e = follow_out_close(now_ns());

	if (!e || e == EPIPE)
		return false;
	msg("%s: write error: %s", out_name, strerror(e));
	return true;
}

static void usage(FILE *fp, int status)
{
	fputs("usage: tnfctl-follow [--no-stop] [--format=F] [-o FILE] -- CMD [ARGS...]\n"
	      "       tnfctl-follow [--no-stop] [--format=F] [-o FILE] -p PID\n"
	      "Follow CMD (or process PID) and every process it creates, one line per event.\n"
	      "  -o, --output FILE  write the events to FILE instead of stdout\n"
	      "      --format=F     text (the default: ms pid event details), ndjson (one\n"
	      "                     JSON object per event, flushed per line) or json (a\n"
	      "                     Chrome trace-event file for Perfetto: a slice per\n"
	      "                     process image, written when the tree has ended)\n"
	      "  -p, --pid PID      attach to a running process\n"
	      "      --no-stop      watch without stopping anything (tnfctl_watch_*); with -p,\n"
	      "                     the processes PID already created are followed too\n"
	      "  -h, --help         print this help\n",
	      fp);
	exit(status);
}

/* A usage error: say what is wrong, exit 2. */
__attribute__((format(printf, 1, 2), noreturn)) static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("tnfctl-follow: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'tnfctl-follow --help' for more information.\n", stderr);
	exit(2);
}

/* The capabilities BPF and ptrace need that the caller lacks, in @buf ("" if none). */
static void missing_caps(char *buf, size_t len)
{
	static const struct {
		int bit;
		const char *name;
	} caps[] = {{39, "CAP_BPF"}, {38, "CAP_PERFMON"}, {19, "CAP_SYS_PTRACE"}};
	unsigned long long eff = 0;
	char line[128];
	size_t i, n = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	buf[0] = '\0';
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (!(eff & (1ULL << caps[i].bit)) && n < len)
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", caps[i].name);
}

/*
 * The exit status of tnfctl-follow when CMD (@cmd) or PID cannot be
 * followed, after a message that says why; @e is the errno the open left.
 */
static int open_failed(const char *name, bool cmd, tnfctl_errcode_t err, int e)
{
	char caps[64];
	struct stat st;

	if (err == TNFCTL_ERR_ACCES && e == EPERM) {
		missing_caps(caps, sizeof(caps));
		msg("not permitted to trace: BPF and ptrace need root, or CAP_BPF, CAP_PERFMON "
		    "and CAP_SYS_PTRACE%s%s%s",
		    caps[0] ? " (missing: " : "", caps, caps[0] ? ")" : "");
		return 1;
	}
	if (err == TNFCTL_ERR_INTERNAL && stat("/sys/kernel/btf/vmlinux", &st)) {
		msg("this kernel has no BTF (/sys/kernel/btf/vmlinux): it needs "
		    "CONFIG_DEBUG_INFO_BTF=y");
		return 1;
	}
	if (cmd && (err == TNFCTL_ERR_FILENOTFOUND || err == TNFCTL_ERR_ACCES)) {
		/* The reason execve (or the $PATH lookup) gave, as a shell says it. */
		if (!e || (err == TNFCTL_ERR_FILENOTFOUND && e != ENOENT && e != ENOTDIR))
			e = err == TNFCTL_ERR_FILENOTFOUND ? ENOENT : EACCES;
		msg("%s: %s", name, strerror(e));
		return err == TNFCTL_ERR_FILENOTFOUND ? 127 : 126;
	}
	if (cmd)
		msg("%s: %s", name, tnfctl_strerror(err));
	else
		msg("pid %s: %s", name, tnfctl_strerror(err));
	return 1;
}

/* Write one watch event as the stopping mode writes its events. */
static void print_watch_event(tnfctl_watch_t *w, const tnfctl_watch_event_t *ev)
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
static int follow_no_stop(const char *name, pid_t pid, char **cmd)
{
	static tnfctl_watch_event_t ev; /* 4 KiB of path: not on the stack */
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
		follow_out_root(pid, 0, NULL, now_ns());
	if (spawned && (live = malloc(sizeof(*live) * (cap = 64))))
		live[nlive++] = pid;
	while (!end && !(sig = atomic_load(&stop_sig))) {
		while (!end && (r = tnfctl_watch_next(w, &ev, 0)) == 1) {
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

				follow_out_root(pid, getpid(),
						tnfctl_watch_event_exec(w, &x) == TNFCTL_ERR_NONE
							? x.argv
							: cmd,
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

/*
 * -o FILE: created 0600 or truncated, never through a symbolic link to a
 * file (in a shared directory that is how one is made to overwrite another's
 * file).  A link to a pipe, terminal or device is followed: /dev/stdout,
 * /dev/fd/N, bash's >(cmd).  Returns the fd, -1 (errno), or -2 (said).
 */
static int open_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;

	if (fd >= 0 || errno != ELOOP)
		return fd;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	/* checked on what was opened: the link may have changed since */
	if (fd >= 0 && !fstat(fd, &st) && !S_ISREG(st.st_mode))
		return fd;
	if (fd >= 0)
		close(fd);
	msg("%s: a symbolic link to a file is refused: give the file's own path", path);
	return -2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"pid", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},	  {"no-stop", no_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'f'}, {0},
	};
	enum follow_format format = FOLLOW_TEXT;
	FILE *out;
	const char *out_path = NULL, *pid_arg = NULL, *name;
	struct sigaction sa = {.sa_flags = 0}; /* no SA_RESTART */
	tnfctl_trace_attrs_t attrs;
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;
	pid_t pid = 0;
	int c, fd, sig, status, e;
	size_t i;
	bool no_stop = false, werr;
	char *end;
	long v;

	start_ns = now_ns();
	argv[0] = "tnfctl-follow"; /* getopt_long's messages name it, as ours do */
	while ((c = getopt_long(argc, argv, "+ho:p:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout, 0);
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'n':
			no_stop = true;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				format = FOLLOW_TEXT;
			else if (!strcmp(optarg, "ndjson"))
				format = FOLLOW_NDJSON;
			else if (!strcmp(optarg, "json"))
				format = FOLLOW_JSON;
			else
				bad_usage("--format: '%s' is not text, ndjson or json", optarg);
			break;
		case 'p':
			pid_arg = optarg;
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > INT_MAX)
				bad_usage(
					"-p: '%s' is not a process id (a positive decimal number)",
					optarg);
			pid = (pid_t)v;
			break;
		default:
			/* getopt_long has named the bad option. */
			fputs("Try 'tnfctl-follow --help' for more information.\n", stderr);
			exit(2);
		}
	}
	if (pid && optind < argc)
		bad_usage("both -p %s and a command '%s' given: follow one or the other", pid_arg,
			  argv[optind]);
	if (!pid && optind == argc)
		bad_usage("no command given, and no -p PID");
	attached = pid != 0;

	out = stdout;
	if (out_path) {
		fd = open_output(out_path);
		if (fd < 0 || !(out = fdopen(fd, "w"))) {
			if (fd != -2)
				msg("%s: %s", out_path, strerror(errno));
			return 1;
		}
		out_name = out_path;
	}
	follow_out_open(out, format, start_ns);

	done_fd = eventfd(0, EFD_CLOEXEC);
	if (done_fd < 0 || pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK)) {
		msg("eventfd/pipe: %s", strerror(errno));
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_sigusr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_term;
	sa.sa_flags = SA_SIGINFO;
	for (i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
		sigaction(term_sigs[i], &sa, NULL);

	if (no_stop)
		return follow_no_stop(pid ? pid_arg : argv[optind], pid, &argv[optind]);
	/* No probes, no preload; CMD in our job, on our terminal. */
	errno = 0;
	if (pid) {
		TNFCTL_OPTS(tnfctl_open_opts, opts, .flags = OPEN_FLAGS);

		name = pid_arg;
		err = tnfctl_pid_open_opts(pid, &opts, &h);
	} else {
		TNFCTL_OPTS(tnfctl_open_opts, opts, .flags = OPEN_FLAGS | TNFCTL_OPEN_FOREGROUND);

		name = argv[optind];
		err = tnfctl_exec_open_opts(name, &argv[optind], NULL, &opts, &h);
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
	follow_out_root(pid, attached ? 0 : getpid(), attached ? NULL : &argv[optind], now_ns());
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
