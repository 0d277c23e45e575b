/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prexlib.h - how the prex tests drive prex (test_prex, test_prex_edges):
 * commands on a pipe (or a pty), HOME and the current directory in a
 * private directory, the target tl_probes on its own pipes, and line
 * readers for prex's output.  Include after testlib.h and probelib.h.
 */
#ifndef PREXLIB_H
#define PREXLIB_H

#include <pty.h>
#include <stdbool.h>
#include <termios.h>

static char prex_prog[PATH_MAX], home_dir[128], work_dir[128];

/* A line reader on a pipe or a pty master. */
struct rd {
	int fd;
	char buf[1 << 16];
	size_t len;
	char line[8192];
};

struct prex {
	pid_t pid;
	int in_w; /* prex's stdin */
	struct rd out, err;
	struct tl_proc *tgt; /* the tl_probes target's pipes */
	int cfd, rfd;	     /* their numbers in the target */
	char trace[PATH_MAX];
};

static inline void prex_paths(void)
{
	paths();
	tl_path_of(prex_prog, "prex");
	snprintf(home_dir, sizeof(home_dir), "%s/home", tmpdir);
	snprintf(work_dir, sizeof(work_dir), "%s/work", tmpdir);
	mkdir(home_dir, 0700);
	mkdir(work_dir, 0700);
}

/* One line (without its newline) within @timeout_ms; NULL on timeout or EOF. */
static inline const char *rd_line(struct rd *r, int timeout_ms)
{
	long long end = tl_now_ms() + timeout_ms;

	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
		ssize_t n;
		int left;

		if (nl) {
			size_t len = nl - r->buf;

			if (len >= sizeof(r->line))
				len = sizeof(r->line) - 1;
			memcpy(r->line, r->buf, len);
			r->line[len] = '\0';
			if (len && r->line[len - 1] == '\r')
				r->line[len - 1] = '\0';
			r->len -= nl + 1 - r->buf;
			memmove(r->buf, nl + 1, r->len);
			return r->line;
		}
		if (r->len == sizeof(r->buf))
			r->len = 0;
		left = end - tl_now_ms();
		n = poll(&pfd, 1, left > 0 ? left : 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		r->len += n;
	}
}

/*
 * Every line until EOF, each followed by '\n', into @out.  No EOF within
 * the timeout fails: a process still holding the pipe (a target resumed
 * by prex inherits its stdout and stderr) must be ended first, or the
 * test would wait out the timeout on every run.
 */
#define rd_rest(r, out, size) rd_rest_at(r, out, size, TL_AT)
static inline void rd_rest_at(struct rd *r, char *out, size_t size, TL_LOC)
{
	struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
	const char *l;
	size_t off = 0;

	out[0] = '\0';
	while ((l = rd_line(r, tl.timeout_ms)))
		if (off < size)
			off += snprintf(out + off, size - off, "%s\n", l);
	/* rd_line ends on EOF or a timeout: only EOF leaves the pipe readable */
	if (poll(&pfd, 1, 0) != 1)
		TL_FAILF("prex's output did not end within %d ms (got \"%s\")", tl.timeout_ms, out);
}

/* Reads lines until one contains @needle (failing on timeout); returns it. */
#define rd_until(r, needle) rd_until_at(r, needle, TL_AT)
static inline const char *rd_until_at(struct rd *r, const char *needle, TL_LOC)
{
	const char *l;

	while ((l = rd_line(r, tl.timeout_ms)))
		if (strstr(l, needle))
			return l;
	TL_FAILF("no line with \"%s\" from prex within %d ms", needle, tl.timeout_ms);
	return NULL;
}

/* Reads raw bytes until @needle appears (pty output has no useful lines). */
#define rd_until_raw(r, needle) rd_until_raw_at(r, needle, TL_AT)
static inline void rd_until_raw_at(struct rd *r, const char *needle, TL_LOC)
{
	long long end = tl_now_ms() + tl.timeout_ms;

	for (;;) {
		struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
		char *hit;
		ssize_t n;
		int left;

		r->buf[r->len] = '\0';
		hit = memmem(r->buf, r->len, needle, strlen(needle));
		if (hit) {
			size_t used = hit + strlen(needle) - r->buf;

			r->len -= used;
			memmove(r->buf, hit + strlen(needle), r->len);
			return;
		}
		if (r->len >= sizeof(r->buf) - 1) {
			memmove(r->buf, r->buf + r->len / 2, r->len - r->len / 2);
			r->len -= r->len / 2;
		}
		left = end - tl_now_ms();
		if (left <= 0)
			break;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		n = read(r->fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		r->len += n;
	}
	r->buf[r->len] = '\0';
	TL_FAILF("pty: no \"%s\" within %d ms; last output: \"%s\"", needle, tl.timeout_ms, r->buf);
}

static inline void writes(int fd, const char *s)
{
	assert_int_equal(tl_write_all(fd, s, strlen(s)), 0);
}

/* Our environment without LD_PRELOAD, HOME, TMPDIR and TERM, plus ours of these. */
static char **prex_env(const char *tmp, const char *term)
{
	static char home[PATH_MAX + 8], tmpd[PATH_MAX + 16], termv[64];
	char **env;
	size_t n = 0, i, k = 0;

	snprintf(home, sizeof(home), "HOME=%s", home_dir);
	snprintf(tmpd, sizeof(tmpd), "TMPDIR=%s", tmp ? tmp : tmpdir);
	snprintf(termv, sizeof(termv), "TERM=%s", term ? term : "dumb");
	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		abort();
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "HOME=", 5) &&
		    strncmp(environ[i], "TMPDIR=", 7) && strncmp(environ[i], "TERM=", 5))
			env[k++] = environ[i];
	env[k++] = home;
	env[k++] = tmpd;
	env[k++] = termv;
	return env;
}

/*
 * Starts `prex OPTS... [tl_probes CMDFD REPLYFD]` (the target when @target)
 * with stdin, stdout and stderr on pipes, in @cwd (default: the private
 * work directory).
 */
/* A command prex is run through (its argv goes first, then prex's path), or NULL. */
static const char *const *prex_prefix;

static inline struct prex *prex_spawn(const char *const *opts, bool target, const char *cwd,
				      const char *tmp)
{
	static struct prex x;
	int in[2], out[2], err[2];
	char cfd[16], rfd[16];
	char *argv[32];
	char **env;
	int n = 0, i;
	pid_t pid;

	prex_paths();
	memset(&x, 0, sizeof(x));
	for (i = 0; prex_prefix && prex_prefix[i]; i++)
		argv[n++] = (char *)prex_prefix[i];
	argv[n++] = prex_prefix ? prex_prog : "prex";
	for (i = 0; opts && opts[i]; i++)
		argv[n++] = (char *)opts[i];
	if (target) {
		x.tgt = tl_proc_new();
		snprintf(cfd, sizeof(cfd), "%d", x.tgt->t_cmd_r);
		snprintf(rfd, sizeof(rfd), "%d", x.tgt->t_reply_w);
		x.cfd = x.tgt->t_cmd_r;
		x.rfd = x.tgt->t_reply_w;
		argv[n++] = probes_prog;
		argv[n++] = cfd;
		argv[n++] = rfd;
	}
	argv[n] = NULL;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		abort();
	env = prex_env(tmp, NULL);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		if (x.tgt) {
			tl_set_cloexec(x.tgt->t_cmd_r, 0);
			tl_set_cloexec(x.tgt->t_reply_w, 0);
		}
		if (chdir(cwd ? cwd : work_dir))
			_exit(126);
		execve(prex_prefix ? prex_prefix[0] : prex_prog, argv, env);
		_exit(127);
	}
	free(env);
	tl_track_pid(pid);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (x.tgt)
		tl_proc_handed_over(x.tgt);
	x.pid = pid;
	x.in_w = in[1];
	x.out.fd = out[0];
	x.err.fd = err[0];
	return &x;
}

/* The target announced itself (it only runs after `continue`). */
#define target_ready(x) tgt_ready((x)->tgt)
static inline pid_t tgt_ready(struct tl_proc *p)
{
	const char *l = tl_expect(p, "ready ");
	pid_t pid = atoi(l + 6);

	tl_proc_set_pid(p, pid);
	return pid;
}

/* Waits up to @ms for prex to exit; returns its exit status (-1 if killed by a signal). */
static inline int prex_wait_ms(struct prex *x, int ms)
{
	int st = 0;

	if (tl_waitpid_timeout(x->pid, &st, 0, ms) != x->pid)
		fail_msg("prex (pid %d) did not exit within %d ms", x->pid, ms);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline int prex_wait(struct prex *x)
{
	return prex_wait_ms(x, tl.timeout_ms);
}

static inline void prex_close_fds(struct prex *x)
{
	close(x->in_w);
	close(x->out.fd);
	close(x->err.fd);
}

/* Occurrences of @needle in @s (not overlapping). */
static inline int count_str(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* Root and the kernel's uprobe events (CONFIG_UPROBE_EVENTS), else skipped; prex's paths set. */
static inline void require_uprobe_events(void)
{
	tl_require_root();
	if (access("/sys/bus/event_source/devices/uprobe", F_OK)) {
		print_message("SKIP: the kernel has no uprobe events (CONFIG_UPROBE_EVENTS)\n");
		skip();
	}
	prex_paths();
}

/* "Target process stopped" and the hint, as prex prints them at each stop. */
#define STOPPED                                                                                    \
	"Target process stopped\nType \"continue\" to resume the target, \"help\" for help ...\n"

static inline void fresh_trace(char *buf, size_t len, const char *name)
{
	trace_path(buf, len, name);
}

#endif
