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
 *	cc -D_GNU_SOURCE -I../common -o tnfctl-follow *.c ../common/json_out.c \
 *		$(pkg-config --cflags --libs tnfctl) -lpthread
 *
 * How it works (the stopping mode: stop.c):
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
 *  - These signals are caught from before the -o file is made, and never
 *    left blocked or ignored when the root is started: tnfctl_exec_open()
 *    forks the target from the calling thread, and exec keeps a blocked
 *    mask and ignored signals (it only resets caught ones).  One that comes
 *    before the tree is started ends tnfctl-follow with no output
 *    (start_tree()): a -o file it created is removed, an existing one is
 *    left untouched (truncated only once the tree starts).  SIGPIPE is
 *    ignored once the root runs: a reader of the output that leaves
 *    (`| head`) ends the output, silently, not tnfctl-follow, which ends as
 *    the tree does.
 *  - The last follower to end writes to an eventfd that the main thread
 *    polls together with the pipe: no busy waiting.
 *
 * With --no-stop (no_stop.c) it uses the passive watch instead
 * (tnfctl_watch_*, a Linux extension): nothing is ever stopped, the kernel
 * adds each child to the tree itself, and one thread reads every event of
 * the tree in the order the kernel wrote them (within a process: in time
 * order).  It polls the watch's fd together with the signal pipe; signals
 * are passed on as in the stopping mode (the pids come from the FORK and
 * EXIT events).  With -p, the processes the root had already created are
 * followed too, and SIGINT, SIGQUIT, SIGTERM and SIGHUP end it at once; the
 * tree runs on.
 *
 * This file: the options, the output file and the signal handlers, then
 * one of the two modes.  What the parts share: follow.h; the output
 * formats: follow_out.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tnf/tnfctl.h>

#include "follow.h"
#include "follow_out.h"

static uint64_t start_ns;
static atomic_bool started;  /* the tree is being started: signals are passed on */
static atomic_int early_sig; /* the first signal that came before that, or 0 */

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
	if (!atomic_load(&started)) {
		/* before the tree: start_tree() ends us by it */
		atomic_compare_exchange_strong(&early_sig, &none, sig);
		errno = saved_errno;
		return;
	}
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

/*
 * -o FILE: created 0600 (*@created), or opened as it is: an existing file
 * is truncated only once the tree starts (start_tree()), so that a signal
 * before that leaves it as it was.  Never through a symbolic link to a
 * file (in a shared directory that is how one is made to overwrite
 * another's file).  A link to a pipe, terminal or device is followed:
 * /dev/stdout, /dev/fd/N, bash's >(cmd).  Returns the fd, -1 (errno), or
 * -2 (said).
 */
static int open_output(const char *path, bool *created)
{
	struct stat st;
	int fd;

	*created = false;
	do {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0) {
			*created = true;
			return fd;
		}
		if (errno == EEXIST)
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	} while (fd < 0 && errno == ENOENT); /* removed in between: create it */
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

/*
 * The tree is about to be started: from now on SIGINT, SIGQUIT, SIGTERM and
 * SIGHUP are passed on to it (or detach, -p).  One that came before ends
 * tnfctl-follow here, with no output: the -o file this run created is
 * removed, an existing one was not truncated yet.  It ends as the signal's
 * default action would have (with CMD), or with 128+N (-p, as after
 * detaching).  Else the existing -o file @fd (@created: by us) is truncated.
 * The signals are blocked meanwhile: each one is either seen here or after.
 */
static void start_tree(int fd, bool created, const char *path)
{
	struct stat st, now;
	sigset_t set, old;
	size_t i;
	int sig;

	sigemptyset(&set);
	for (i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
		sigaddset(&set, term_sigs[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	sig = atomic_load(&early_sig);
	if (!sig) {
		if (fd >= 0 && !created && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    ftruncate(fd, 0)) {
			msg("%s: %s", path, strerror(errno));
			exit(1);
		}
		atomic_store(&started, true);
		/* unblocked before the root is forked: it must not inherit the mask */
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}
	/* only the file we made: not one put in its place since */
	if (fd >= 0 && created && !fstat(fd, &st) && !lstat(path, &now) &&
	    st.st_dev == now.st_dev && st.st_ino == now.st_ino)
		unlink(path);
	if (!attached)
		die_like(sig);
	exit(128 + sig);
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
	const char *out_path = NULL, *pid_arg = NULL;
	struct sigaction sa = {.sa_flags = 0}; /* no SA_RESTART */
	pid_t pid = 0;
	int c, fd = -1;
	size_t i;
	bool no_stop = false, created = false;
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

	done_fd = eventfd(0, EFD_CLOEXEC);
	if (done_fd < 0 || pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK)) {
		msg("eventfd/pipe: %s", strerror(errno));
		return 1;
	}
	/* Caught before -o is created: a signal cannot leave it empty. */
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_sigusr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_term;
	sa.sa_flags = SA_SIGINFO;
	for (i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
		sigaction(term_sigs[i], &sa, NULL);

	out = stdout;
	if (out_path) {
		/* a FIFO's open waits for a reader; a signal interrupts it */
		while ((fd = open_output(out_path, &created)) == -1 && errno == EINTR &&
		       !atomic_load(&early_sig))
			;
		if (fd < 0 && !atomic_load(&early_sig)) {
			if (fd != -2)
				msg("%s: %s", out_path, strerror(errno));
			return 1;
		}
	}
	start_tree(fd, created, out_path);
	if (out_path) {
		if (!(out = fdopen(fd, "w"))) {
			msg("%s: %s", out_path, strerror(errno));
			return 1;
		}
		out_name = out_path;
	}
	follow_out_open(out, format, start_ns);

	if (no_stop)
		return follow_no_stop(pid ? pid_arg : argv[optind], pid, &argv[optind]);
	return follow_stop(pid ? pid_arg : argv[optind], pid, &argv[optind]);
}
