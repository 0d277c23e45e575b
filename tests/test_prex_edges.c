// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex on bad input and edge cases (adversarial round): a SIGINT at the
 * prompt in the middle of a line read from a pipe, NUL bytes in a line,
 * `source` of a directory and of a file that sources itself.  prex runs
 * as in test_prex.c: commands on a pipe, HOME and the current directory
 * in a private directory, the target tl_probes on its own pipes.
 */
#include <stdbool.h>
#include <sys/ioctl.h>
#include "testlib.h"
#include "probelib.h"

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

static void prex_paths(void)
{
	paths();
	tl_path_of(prex_prog, "prex");
	snprintf(home_dir, sizeof(home_dir), "%s/home", tmpdir);
	snprintf(work_dir, sizeof(work_dir), "%s/work", tmpdir);
	mkdir(home_dir, 0700);
	mkdir(work_dir, 0700);
}

/* One line (without its newline) within @timeout_ms; NULL on timeout or EOF. */
static const char *rd_line(struct rd *r, int timeout_ms)
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

/* Every line until EOF, each followed by '\n', into @out. */
static void rd_rest(struct rd *r, char *out, size_t size)
{
	const char *l;
	size_t off = 0;

	out[0] = '\0';
	while ((l = rd_line(r, tl.timeout_ms)) && off < size)
		off += snprintf(out + off, size - off, "%s\n", l);
}

/* Reads lines until one contains @needle (failing on timeout); returns it. */
#define rd_until(r, needle) rd_until_at(r, needle, TL_AT)
static const char *rd_until_at(struct rd *r, const char *needle, TL_LOC)
{
	const char *l;

	while ((l = rd_line(r, tl.timeout_ms)))
		if (strstr(l, needle))
			return l;
	TL_FAILF("no line with \"%s\" from prex within %d ms", needle, tl.timeout_ms);
	return NULL;
}

static void writes(int fd, const char *s)
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
static struct prex *prex_spawn(const char *const *opts, bool target, const char *cwd,
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
	argv[n++] = "prex";
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
		execve(prex_prog, argv, env);
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
static pid_t tgt_ready(struct tl_proc *p)
{
	const char *l = tl_expect(p, "ready ");
	pid_t pid = atoi(l + 6);

	tl_proc_set_pid(p, pid);
	return pid;
}

/* Waits for prex to exit; returns its exit status (-1 if killed by a signal). */
static int prex_wait(struct prex *x)
{
	int st = 0;

	if (tl_waitpid_timeout(x->pid, &st, 0, tl.timeout_ms) != x->pid)
		fail_msg("prex (pid %d) did not exit within %d ms", x->pid, tl.timeout_ms);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void prex_close_fds(struct prex *x)
{
	close(x->in_w);
	close(x->out.fd);
	close(x->err.fd);
}

#define STOPPED                                                                                    \
	"Target process stopped\nType \"continue\" to resume the target, \"help\" for help.\n"

/*
 * Waits until prex (@pid, single reader of @in_w's pipe) has taken every
 * byte written and sits in read(2) again, i.e. a signal now interrupts
 * that read.  Polls /proc: there is no event to wait for.
 */
static void wait_reading(pid_t pid, int in_w)
{
	long long end = tl_now_ms() + tl.timeout_ms;
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (;;) {
		int queued = -1, fd;
		ssize_t n = -1;

		if (ioctl(in_w, FIONREAD, &queued) == 0 && queued == 0) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, buf, sizeof(buf) - 1);
				close(fd);
			}
			/* "0 0x0 ..." : blocked in read on fd 0 (x86-64 and arm64 differ) */
			if (n > 0) {
				buf[n] = '\0';
				if (!strncmp(buf, "0 0x0 ", 6) || !strncmp(buf, "63 0x0 ", 7))
					return;
			}
		}
		if (tl_now_ms() > end)
			fail_msg("prex did not go back to reading its stdin");
		usleep(1000); /* polling interval, not a synchronisation */
	}
}

/* `continue`, then ^C once the target runs: back at the prompt, target stopped. */
static pid_t run_then_stop(struct prex *x)
{
	pid_t pid;

	writes(x->in_w, "continue\n");
	rd_until(&x->out, "Type \"continue\""); /* the first stop */
	pid = target_ready(x);
	tl_send(x->tgt, "ping");
	tl_expect(x->tgt, "pong"); /* running, prex in its run loop */
	kill(x->pid, SIGINT);
	rd_until(&x->out, "Type \"continue\"");
	tl_assert_all_stopped(pid, "target after ^C");
	return pid;
}

/* ---------------------------------------------------------------- */

/*
 * BUG (fixed): a SIGINT while prex, at the prompt, had read part of a line
 * from a pipe ran the part as a whole command, then took the stream's
 * error flag for the end of the input and quit, killing the target.
 */
static void test_sigint_mid_line(void **state)
{
	static char out[8192], err[8192];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;
	pid_t pid;

	(void)state;
	tl_require_root();
	prex_paths();
	trace_path(trace, sizeof(trace), "edges-sigint");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	pid = run_then_stop(x);

	writes(x->in_w, "list se");
	wait_reading(x->pid, x->in_w);
	kill(x->pid, SIGINT);
	/* prex must still be there, reading the rest of the line */
	wait_reading(x->pid, x->in_w);
	tl_assert_all_stopped(pid, "target after ^C at the prompt");
	writes(x->in_w, "ts\nquit resume\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, "$all      'keys'=/.*/ \n");
	assert_string_equal(err, "");
	/* resumed, not killed: it still answers */
	tl_send(x->tgt, "ping");
	tl_expect(x->tgt, "pong");
	tl_send(x->tgt, "exit 0");
	tl_assert_exits(pid, "target after exit 0");
	prex_close_fds(x);
}

/*
 * BUG (fixed): a NUL byte cut the line short, so `quit\0 resume` was run
 * as `quit`.  Now the statement is a syntax error naming "\0".
 */
static void test_nul_byte(void **state)
{
	static char out[8192], err[8192];
	static const char in[] = "quit\0 resume\nlist\0 sets\n\0\nlist sets\nquit\n";
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;
	pid_t pid;

	(void)state;
	tl_require_root();
	prex_paths();
	trace_path(trace, sizeof(trace), "edges-nul");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	pid = run_then_stop(x);
	assert_int_equal(tl_write_all(x->in_w, in, sizeof(in) - 1), 0);
	assert_int_equal(prex_wait(x), 0);
	tl_assert_exits(pid, "target after quit");
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, "$all      'keys'=/.*/ \n");
	assert_string_equal(err, "\"<stdin>\", line 2: syntax error on or before \"\\0\"\n"
				 "\"<stdin>\", line 3: syntax error on or before \"\\0\"\n"
				 "\"<stdin>\", line 4: syntax error on or before \"\\0\"\n");
	prex_close_fds(x);
}

/*
 * BUG (fixed): `source DIR` was silently accepted (fopen opens a directory
 * and the read error looked like its end).  A file that sources itself
 * stops at the nesting limit with one message, and prex goes on.
 */
static void test_source_dir_and_loop(void **state)
{
	static char out[8192], err[8192];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX], path[PATH_MAX];
	struct prex *x;
	FILE *fp;

	(void)state;
	tl_require_root();
	prex_paths();
	snprintf(path, sizeof(path), "%s/adir", work_dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/loop", work_dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("source loop\n", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/cont", work_dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("list sets \\\n", fp); /* backslash-newline at the file's end */
	fclose(fp);
	trace_path(trace, sizeof(trace), "edges-source");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "source adir\nsource loop\nsource 'cont'\nsource nowhere\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, STOPPED "$all      'keys'=/.*/ \n");
	assert_string_equal(err,
			    "\"<stdin>\", line 1: semantic error: cannot open \"adir\": Is a "
			    "directory\n"
			    "\"loop\", line 1: semantic error: cannot open \"loop\": files sourced "
			    "too deeply (a loop?)\n"
			    "\"<stdin>\", line 4: semantic error: cannot open \"nowhere\": No such "
			    "file or directory\n");
	prex_close_fds(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_sigint_mid_line),
		TL_TEST(test_nul_byte),
		TL_TEST(test_source_dir_and_loop),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
