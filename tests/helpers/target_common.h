/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command loop shared by the test targets (tl_target, tl_threads,
 * static_prog).  A target is started as `PROG CMDFD REPLYFD`; it writes
 * "ready <pid>" to REPLYFD from main() and then executes one command per
 * line read from CMDFD, answering on REPLYFD with one line per command
 * (every reply is a single write(), so lines never interleave).
 *
 * Commands:
 *   ping                 -> "pong"
 *   tracer               -> "tracer <TracerPid>"
 *   fork N               -> child writes "child <pid> tracer <TracerPid>" and
 *                           _exit(N); parent waits: "forked <pid> status <s>"
 *   fork_exec PATH       -> child execs PATH: "forked <pid> status <s>"
 *   vfork N              -> vfork child _exit(N): "vforked <pid> status <s>"
 *   untraced_fork N      -> clone(CLONE_UNTRACED) child _exit(N) once traced, as
 *                           LeakSanitizer's stop-the-world task is made:
 *                           "uforked <pid> status <s>"
 *   untraced_fork_exit N -> the same, but the child _exit(N)s at once
 *   vfork_exec PATH      -> vfork child execs PATH: "vforked <pid> status <s>"
 *   spawn PATH           -> posix_spawn PATH: "spawned <pid> status <s>"
 *   exec PATH [ARG...]   -> execv from the main thread
 *   unsetenv NAME        -> "unsetenv NAME" (e.g. LD_PRELOAD before an exec)
 *   execself             -> exec this program again with the same fds
 *   thread_execself      -> the same, from a new (non-leader) thread
 *   dlopen LIB           -> "dlopen ok" / "dlopen fail <why>" (LIB NULL: dlopen(NULL))
 *   dlclose              -> "dlclose <rc>"
 *   dlmopen LIB          -> dlmopen(LM_ID_NEWLM): "dlmopen ok" / "dlmopen fail <why>"
 *   iconv CHARSET        -> iconv_open(CHARSET, "UTF-8"), which makes libc load
 *                           a gconv module itself: "iconv ok" / "iconv fail <errno>"
 *   mtdlclose N [SEED]   -> N threads dlclose the last N handles at once (a
 *                           barrier first; with SEED, each spins a pseudo-random
 *                           while after it): "mtdlclosed <sum of the rcs>"
 *   threads N            -> N more threads blocked in read(): "threads <total>"
 *   exit N               -> exit(N)
 *   kill SIG             -> kill(getpid(), SIG); "survived" if still alive
 *   sigblockall          -> blocks every signal (in this thread): "sigblocked"
 *   sigign SIG           -> ignores SIG: "sigign SIG"
 *   forkloop             -> a thread forks children that _exit(0) and reaps
 *                           them, for ever: "forkloop"
 *   forkcount            -> "forkcount <children of forkloop reaped so far>"
 * <s> is the exit status, or -SIG for a child killed by a signal.
 * Unknown commands get "error <cmd>".
 */
#ifndef TARGET_COMMON_H
#define TARGET_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef TGT_NO_DL
#include <dlfcn.h>
#include <iconv.h>
#endif

extern char **environ;

static int tgt_cmd_fd = 0;
static int tgt_reply_fd = 1;
static char tgt_self[PATH_MAX];
static char tgt_argv0[PATH_MAX];
static char tgt_inbuf[4096];
static size_t tgt_inlen;
static int tgt_nthreads = 1;
#ifndef TGT_NO_DL
static void *tgt_dl[32];
static int tgt_ndl;
#endif

static void tgt_reply(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	while (write(tgt_reply_fd, buf, n) < 0 && errno == EINTR)
		;
}

static long tgt_tracer_pid(void)
{
	char buf[4096];
	ssize_t n;
	char *p;
	int fd;

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "TracerPid:");
	if (!p)
		return -1;
	return strtol(p + 10, NULL, 10);
}

static int tgt_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return -WTERMSIG(st);
	return -1000;
}

static int tgt_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -2000;
	}
	return tgt_status(st);
}

/* Reads one command line; returns 0, or -1 at EOF. */
static int tgt_read_cmd(char *line, size_t size)
{
	for (;;) {
		char *nl = memchr(tgt_inbuf, '\n', tgt_inlen);
		ssize_t n;

		if (nl) {
			size_t len = nl - tgt_inbuf;

			if (len >= size)
				len = size - 1;
			memcpy(line, tgt_inbuf, len);
			line[len] = '\0';
			tgt_inlen -= nl + 1 - tgt_inbuf;
			memmove(tgt_inbuf, nl + 1, tgt_inlen);
			return 0;
		}
		if (tgt_inlen == sizeof(tgt_inbuf))
			tgt_inlen = 0;
		n = read(tgt_cmd_fd, tgt_inbuf + tgt_inlen, sizeof(tgt_inbuf) - tgt_inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		tgt_inlen += n;
	}
}

static void tgt_execself(void)
{
	char cfd[16], rfd[16];
	char *argv[] = {tgt_argv0, cfd, rfd, NULL};

	snprintf(cfd, sizeof(cfd), "%d", tgt_cmd_fd);
	snprintf(rfd, sizeof(rfd), "%d", tgt_reply_fd);
	execv(tgt_self, argv);
	tgt_reply("exec failed %d", errno);
}

static void *tgt_exec_thread(void *arg)
{
	(void)arg;
	tgt_execself();
	_exit(126);
}

static void *tgt_nop_thread(void *arg)
{
	return arg;
}

static void *tgt_churn_thread(void *arg)
{
	pthread_t t;

	(void)arg;
	for (;;)
		if (pthread_create(&t, NULL, tgt_nop_thread, NULL) == 0)
			pthread_join(t, NULL);
	return NULL;
}

static volatile unsigned long tgt_forks;

static void *tgt_forkloop_thread(void *arg)
{
	(void)arg;
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0) {
			tgt_wait(pid);
			tgt_forks++;
		}
	}
	return NULL;
}

static void tgt_command(char *line);
static int tgt_read_cmd(char *line, size_t size);

#ifndef TGT_NO_DL
struct tgt_dlc {
	pthread_barrier_t *start;
	void *handle;
	unsigned int spin;
	int rc;
};

static void *tgt_dlclose_thread(void *arg)
{
	struct tgt_dlc *c = arg;
	volatile unsigned int i;

	pthread_barrier_wait(c->start);
	for (i = 0; i < c->spin; i++)
		;
	c->rc = dlclose(c->handle);
	return NULL;
}

/* mtdlclose: the last @n handles closed by @n threads at once. */
static void tgt_mtdlclose(int n, unsigned int seed)
{
	struct tgt_dlc c[32];
	pthread_t t[32];
	pthread_barrier_t b;
	int i, started = 0, sum = 0;

	if (n < 1 || n > tgt_ndl) {
		tgt_reply("error mtdlclose");
		return;
	}
	pthread_barrier_init(&b, NULL, n);
	for (i = 0; i < n; i++) {
		c[i].start = &b;
		c[i].handle = tgt_dl[--tgt_ndl];
		c[i].spin = seed ? rand_r(&seed) % 50000 : 0;
		c[i].rc = -1;
		if (pthread_create(&t[i], NULL, tgt_dlclose_thread, &c[i]))
			break;
		started++;
	}
	if (started < n) {
		/* the barrier would never open: give up (the test fails on the reply) */
		tgt_reply("error mtdlclose threads");
		_exit(3);
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		sum += c[i].rc;
	}
	pthread_barrier_destroy(&b);
	tgt_reply("mtdlclosed %d", sum);
}
#endif

/* Runs the command loop, for "leaderexit". */
static void *tgt_loop_thread(void *arg)
{
	char line[512];

	(void)arg;
	while (tgt_read_cmd(line, sizeof(line)) == 0)
		tgt_command(line);
	exit(0);
}

static void *tgt_block_thread(void *arg)
{
	int fds[2];
	char c;

	(void)arg;
	if (pipe(fds) == 0) {
		for (;;) {
			if (read(fds[0], &c, 1) < 0 && errno != EINTR)
				break;
		}
	}
	for (;;)
		pause();
	return NULL;
}

static int tgt_start_thread(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

static void tgt_do_exec(char *args)
{
	char *argv[32];
	int argc = 0;
	char *save = NULL;
	char *tok;

	for (tok = strtok_r(args, " ", &save); tok && argc < 31; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (!argc) {
		tgt_reply("error exec");
		return;
	}
	execv(argv[0], argv);
	tgt_reply("exec failed %d", errno);
}

static void tgt_fork(int code, const char *path)
{
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		tgt_reply("error fork %d", errno);
		return;
	}
	if (pid == 0) {
		if (path) {
			execl(path, path, (char *)NULL);
			_exit(127);
		}
		tgt_reply("child %d tracer %ld", (int)getpid(), tgt_tracer_pid());
		_exit(code);
	}
	tgt_reply("forked %d status %d", (int)pid, tgt_wait(pid));
}

/*
 * No ptrace fork option attaches it: the tracer must seize it itself.
 * @wait: the child waits until it is traced (or its parent dies), else
 * it exits at once, before the tracer can seize it.
 */
static void tgt_untraced_fork(int code, bool wait)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);

	if (pid < 0) {
		tgt_reply("error clone %d", errno);
		return;
	}
	if (pid == 0) {
		struct timespec ms = {0, 1000000};

		/* The parent's death (the test's teardown) ends the wait. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (wait && tgt_tracer_pid() <= 0 && getppid() != 1)
			nanosleep(&ms, NULL);
		_exit(code);
	}
	tgt_reply("uforked %d status %d", (int)pid, tgt_wait(pid));
}

static void tgt_vfork(int code, const char *path)
{
	pid_t pid;

	pid = vfork();
	if (pid < 0) {
		tgt_reply("error vfork %d", errno);
		return;
	}
	if (pid == 0) {
		if (path) {
			execl(path, path, (char *)NULL);
			_exit(127);
		}
		_exit(code);
	}
	tgt_reply("vforked %d status %d", (int)pid, tgt_wait(pid));
}

static void tgt_spawn(const char *path)
{
	char *argv[] = {(char *)path, NULL};
	pid_t pid;
	int err;

	err = posix_spawn(&pid, path, NULL, NULL, argv, environ);
	if (err) {
		tgt_reply("error spawn %d", err);
		return;
	}
	tgt_reply("spawned %d status %d", (int)pid, tgt_wait(pid));
}

static void tgt_command(char *line)
{
	char *arg = strchr(line, ' ');

	if (arg)
		*arg++ = '\0';
	else
		arg = line + strlen(line);

	if (!strcmp(line, "ping")) {
		tgt_reply("pong");
	} else if (!strcmp(line, "tracer")) {
		tgt_reply("tracer %ld", tgt_tracer_pid());
	} else if (!strcmp(line, "fork")) {
		tgt_fork(atoi(arg), NULL);
	} else if (!strcmp(line, "untraced_fork")) {
		tgt_untraced_fork(atoi(arg), true);
	} else if (!strcmp(line, "untraced_fork_exit")) {
		tgt_untraced_fork(atoi(arg), false);
	} else if (!strcmp(line, "fork_exec")) {
		tgt_fork(0, arg);
	} else if (!strcmp(line, "vfork")) {
		tgt_vfork(atoi(arg), NULL);
	} else if (!strcmp(line, "vfork_exec")) {
		tgt_vfork(0, arg);
	} else if (!strcmp(line, "spawn")) {
		tgt_spawn(arg);
	} else if (!strcmp(line, "exec")) {
		tgt_do_exec(arg);
	} else if (!strcmp(line, "unsetenv")) {
		unsetenv(arg);
		tgt_reply("unsetenv %s", arg);
	} else if (!strcmp(line, "execself")) {
		tgt_execself();
	} else if (!strcmp(line, "thread_execself")) {
		if (tgt_start_thread(tgt_exec_thread, NULL))
			tgt_reply("error thread");
		else
			for (;;)
				pause();
#ifndef TGT_NO_DL
	} else if (!strcmp(line, "dlopen")) {
		void *h = dlopen(strcmp(arg, "NULL") ? arg : NULL, RTLD_NOW | RTLD_LOCAL);

		if (h && tgt_ndl < 32) {
			tgt_dl[tgt_ndl++] = h;
			tgt_reply("dlopen ok");
		} else {
			tgt_reply("dlopen fail %s", dlerror());
		}
	} else if (!strcmp(line, "dlclose")) {
		if (tgt_ndl)
			tgt_reply("dlclose %d", dlclose(tgt_dl[--tgt_ndl]));
		else
			tgt_reply("dlclose none");
	} else if (!strcmp(line, "dlmopen")) {
		void *h = dlmopen(LM_ID_NEWLM, arg, RTLD_NOW | RTLD_LOCAL);

		if (h && tgt_ndl < 32) {
			tgt_dl[tgt_ndl++] = h;
			tgt_reply("dlmopen ok");
		} else {
			tgt_reply("dlmopen fail %s", dlerror());
		}
	} else if (!strcmp(line, "iconv")) {
		iconv_t cd = iconv_open(arg, "UTF-8");

		if (cd == (iconv_t)-1)
			tgt_reply("iconv fail %d", errno);
		else
			tgt_reply("iconv ok");
	} else if (!strcmp(line, "mtdlclose")) {
		char *s = strchr(arg, ' ');

		tgt_mtdlclose(atoi(arg), s ? (unsigned int)strtoul(s + 1, NULL, 10) : 0);
#endif
	} else if (!strcmp(line, "leaderexit")) {
		/* The main thread leaves; another one takes the commands from now on. */
		if (tgt_start_thread(tgt_loop_thread, NULL)) {
			tgt_reply("leaderexit failed");
		} else {
			tgt_reply("leaderexit");
			pthread_exit(NULL);
		}
	} else if (!strcmp(line, "churn")) {
		/* One thread that creates and joins short-lived threads forever. */
		if (tgt_start_thread(tgt_churn_thread, NULL))
			tgt_reply("churn failed");
		else
			tgt_reply("churn");
	} else if (!strcmp(line, "threads")) {
		int i, n = atoi(arg);

		for (i = 0; i < n; i++) {
			if (tgt_start_thread(tgt_block_thread, NULL))
				break;
			tgt_nthreads++;
		}
		tgt_reply("threads %d", tgt_nthreads);
	} else if (!strcmp(line, "sigblockall")) {
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		tgt_reply("sigblocked");
	} else if (!strcmp(line, "sigign")) {
		signal(atoi(arg), SIG_IGN);
		tgt_reply("sigign %d", atoi(arg));
	} else if (!strcmp(line, "forkloop")) {
		if (tgt_start_thread(tgt_forkloop_thread, NULL))
			tgt_reply("forkloop failed");
		else
			tgt_reply("forkloop");
	} else if (!strcmp(line, "forkcount")) {
		tgt_reply("forkcount %lu", tgt_forks);
	} else if (!strcmp(line, "exit")) {
		exit(atoi(arg));
	} else if (!strcmp(line, "kill")) {
		kill(getpid(), atoi(arg));
		tgt_reply("survived");
#ifdef TGT_EXTRA
	} else if (tgt_extra(line, arg)) {
		/* handled by the program's own commands */
#endif
	} else {
		tgt_reply("error %s", line);
	}
}

/* Parses `PROG CMDFD REPLYFD`, remembers how to exec ourselves again. */
static void tgt_init(int argc, char **argv)
{
	ssize_t n;

	if (argc >= 3) {
		tgt_cmd_fd = atoi(argv[1]);
		tgt_reply_fd = atoi(argv[2]);
	}
	snprintf(tgt_argv0, sizeof(tgt_argv0), "%s", argv[0]);
	n = readlink("/proc/self/exe", tgt_self, sizeof(tgt_self) - 1);
	if (n > 0)
		tgt_self[n] = '\0';
	else
		snprintf(tgt_self, sizeof(tgt_self), "%s", argv[0]);
}

static int tgt_run(void)
{
	char line[1024];

	tgt_reply("ready %d", (int)getpid());
	while (tgt_read_cmd(line, sizeof(line)) == 0)
		tgt_command(line);
	return 0;
}

#endif /* TARGET_COMMON_H */
