// SPDX-License-Identifier: BSD-2-Clause
/*
 * build/tnfctl-follow as a user runs it, in both modes (stopping, and
 * --no-stop): an ASan program with nothing preloaded, static programs,
 * env -i and -p of a probe-less process with every event; on a pty,
 * interactive programs that read what is typed, Ctrl-C and SIGTERM ending
 * a whole traced tree with nothing left running, and the exit status;
 * usage and open errors that name what is wrong, with the documented exit
 * codes.
 */
#include <pty.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "testlib.h"

static const char *const modes[] = {NULL, "--no-stop"};
#define MODE_NAME(m) ((m) ? (m) : "stopping mode")

/* ---- running tnfctl-follow on a pipe ---- */

struct run {
	int status; /* wait status */
	char out[1 << 16];
	size_t len;
};

/* Collects @fd until EOF and @pid's exit (within the timeout). */
static void collect(struct run *r, int fd, pid_t pid)
{
	long long end = tl_now_ms() + 4 * tl.timeout_ms;
	ssize_t n;

	r->len = 0;
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int left = end - tl_now_ms();

		if (left <= 0)
			fail_msg("tnfctl-follow: no EOF within %d ms; output: %.*s",
				 4 * tl.timeout_ms, (int)r->len, r->out);
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			break;
		n = read(fd, r->out + r->len, sizeof(r->out) - 1 - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		r->len += n;
	}
	r->out[r->len] = '\0';
	close(fd);
	r->status = tl_reap(pid);
}

/* Starts tnfctl-follow [MODE] ARGS (NULL-terminated) with stdout+stderr on *@fd. */
static pid_t follow_start(const char *mode, char *const *args, int *fd)
{
	char *argv[32], **env;
	int out[2], i = 0, j;
	pid_t pid;

	argv[i++] = tl.follow;
	if (mode)
		argv[i++] = (char *)mode;
	for (j = 0; args[j] && i < 30; j++)
		argv[i++] = args[j];
	argv[i] = NULL;
	if (pipe2(out, O_CLOEXEC))
		abort();
	env = tl_env_build(NULL);
	pid = tl_spawn(argv, env, out[1], NULL);
	free(env);
	close(out[1]);
	*fd = out[0];
	return pid;
}

/* tnfctl-follow ARGS (NULL-terminated, up to 24) with stdout+stderr on a pipe. */
static void follow_pipe(struct run *r, const char *mode, char *const *args)
{
	int fd;
	pid_t pid = follow_start(mode, args, &fd);

	collect(r, fd, pid);
}

static void expect_exit(const struct run *r, int code, const char *what, const char *mode)
{
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != code)
		fail_msg("%s (%s): wait status 0x%x, expected exit %d; output:\n%s", what,
			 MODE_NAME(mode), r->status, code, r->out);
}

static void expect_out(const struct run *r, const char *needle, const char *what, const char *mode)
{
	if (!strstr(r->out, needle))
		fail_msg("%s (%s): no \"%s\" in the output:\n%s", what, MODE_NAME(mode), needle,
			 r->out);
}

static char helper_path[PATH_MAX + 64];

static const char *helper(const char *name)
{
	snprintf(helper_path, sizeof(helper_path), "%s/tests/helpers/%s", tl.bdir, name);
	return helper_path;
}

/*
 * An ASan program starts only if nothing comes before its runtime in the
 * library list: under tnfctl-follow it runs, unpreloaded, and exits 0.
 */
static void test_follow_asan_both_modes(void **state)
{
	char *args[] = {"--", NULL, NULL};
	static struct run r;
	size_t m;

	(void)state;
	tl_require_root();
	args[1] = (char *)helper("asan_prog");
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		follow_pipe(&r, modes[m], args);
		expect_exit(&r, 0, "ASan program", modes[m]);
		expect_out(&r, "asan_prog: LD_PRELOAD (unset)", "ASan program", modes[m]);
		if (strstr(r.out, "ASan runtime does not come first"))
			fail_msg("ASan refused to start (%s):\n%s", MODE_NAME(modes[m]), r.out);
	}
	tl_watch_half_end();
}

/*
 * The root SIGKILLed while it may be stopped at one of its events (a shell
 * forking in a loop is stopped at each FORK): tnfctl-follow ends by SIGKILL
 * as the root did.  It used to take the NOPROCESS of tnfctl_continue (the
 * documented "killed while stopped") for lost control: "detached", exit 1.
 */
static void test_follow_root_killed_while_stopped(void **state)
{
	char *args[] = {"--", "/bin/sh", "-c", "while :; do /bin/true; done", NULL};
	static struct run r;
	int round, rounds = 20;

	(void)state;
	tl_require_root();
	for (round = 0; round < rounds; round++) {
		int out[1], forks = 0, want = 1 + round % 5;
		pid_t pid, root = 0;
		char *l;

		pid = follow_start(NULL, args, &out[0]);
		r.len = 0;
		while (!root) {
			struct pollfd pfd = {.fd = out[0], .events = POLLIN};
			ssize_t n;

			if (poll(&pfd, 1, tl.timeout_ms) <= 0)
				fail_msg("round %d: no FORK line within %d ms: %.*s", round,
					 tl.timeout_ms, (int)r.len, r.out);
			n = read(out[0], r.out + r.len, sizeof(r.out) - 1 - r.len);
			if (n <= 0)
				fail_msg("round %d: tnfctl-follow ended early: %.*s", round,
					 (int)r.len, r.out);
			r.len += n;
			r.out[r.len] = '\0';
			for (forks = 0, l = r.out; (l = strstr(l, " FORK ")); l++)
				if (++forks == want) {
					while (l > r.out && l[-1] != '\n')
						l--;
					if (sscanf(l, "%*s %d", &root) != 1)
						fail_msg("round %d: unparsed line: %s", round, l);
					break;
				}
		}
		kill(root, SIGKILL);
		collect(&r, out[0], pid);
		if (!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGKILL ||
		    strstr(r.out, "detached"))
			fail_msg("round %d: root killed (after its FORK %d): tnfctl-follow's wait "
				 "status 0x%x, expected SIGKILL; output:\n%s",
				 round, want, r.status, r.out);
	}
}

/* Lines "<ms> <pid> <EVENT> <details>" naming @event with @detail. */
static int count_lines(const char *out, const char *event, const char *detail)
{
	const char *l;
	int n = 0;

	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char ev[16], rest[512];
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		double ms;
		int pid, k = 0;

		if (len >= sizeof(rest))
			continue;
		memcpy(rest, l, len);
		rest[len] = '\0';
		if (sscanf(rest, "%lf %d %15s %n", &ms, &pid, ev, &k) < 3 || !k)
			continue;
		if (!strcmp(ev, event) && strstr(rest + k, detail))
			n++;
	}
	return n;
}

static void expect_lines(const struct run *r, const char *event, const char *detail, int want)
{
	int got = count_lines(r->out, event, detail);

	if (got != want)
		fail_msg("%d %s lines with \"%s\", expected %d; output:\n%s", got, event, detail,
			 want, r->out);
}

/*
 * The stopping mode follows a static program (and its child), env -i and the
 * program it execs without an environment, with every event.
 */
static void test_follow_static_and_env_i(void **state)
{
	char script[PATH_MAX * 2 + 128];
	char *args[] = {"--", "/bin/sh", "-c", script, NULL};
	static struct run r;

	(void)state;
	tl_require_root();
	snprintf(script, sizeof(script), "%s 4; env -i /bin/sh -c 'exit 3'; exit 9",
		 helper("static_exit"));
	follow_pipe(&r, NULL, args);
	expect_exit(&r, 9, "sh running a static program and env -i", NULL);
	expect_lines(&r, "EXEC", "static_exit: ", 1); /* "path: argv" */
	expect_lines(&r, "EXIT", "status 7", 1);      /* the static program's child */
	expect_lines(&r, "EXIT", "status 4", 1);
	expect_lines(&r, "EXEC", "/usr/bin/env: ", 1);
	expect_lines(&r, "EXEC", "/bin/sh: ", 1);
	expect_lines(&r, "EXIT", "status 3", 1);
	expect_lines(&r, "EXIT", "status 9", 1);
	/* sh forks twice, static_exit once */
	expect_lines(&r, "FORK", "child", 3);
	if (strstr(r.out, "no longer followed") || strstr(r.out, "detached"))
		fail_msg("a process was lost:\n%s", r.out);
}

/* NDJSON records of @event whose text also holds @detail. */
static int count_json(const char *out, const char *event, const char *detail)
{
	char key[64];
	const char *l;
	int n = 0;

	snprintf(key, sizeof(key), "\"event\":\"%s\"", event);
	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		const char *k = memmem(l, len, key, strlen(key));

		if (k && memmem(l, len, detail, strlen(detail)))
			n++;
	}
	return n;
}

static void expect_json(const struct run *r, const char *event, const char *detail, int want)
{
	int got = count_json(r->out, event, detail);

	if (got != want)
		fail_msg("%d %s records with '%s', expected %d; output:\n%s", got, event, detail,
			 want, r->out);
}

/*
 * -p of a running process that has no libtnfprobe: its fork, child and exit.
 * The target is told to fork only once the ROOT record is out: it is
 * written after tnfctl_pid_open returned, when the target is stopped until
 * the first tnfctl_continue, which arms the FORK stop.  (The engine's seize
 * alone is not that point: a target may run between the seize and its
 * interrupt; a slow CI machine once took the fork in that window.)
 */
static void test_follow_pid_probe_less(void **state)
{
	struct tl_proc *p;
	char pid_s[16];
	char *argv[] = {tl.follow, "--format=ndjson", "-p", pid_s, NULL};
	static struct run r;
	static char early[4096];
	size_t elen = 0;
	char **env;
	int out[2];
	pid_t f;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 0);
	snprintf(pid_s, sizeof(pid_s), "%d", p->pid);
	if (pipe2(out, O_CLOEXEC))
		abort();
	env = tl_env_build(NULL);
	f = tl_spawn(argv, env, out[1], NULL);
	free(env);
	close(out[1]);
	early[0] = '\0';
	while (!strstr(early, "\"event\":\"ROOT\"")) {
		struct pollfd pfd = {.fd = out[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, tl.timeout_ms) <= 0)
			fail_msg("tnfctl-follow -p %d: no ROOT record within %d ms: %s", p->pid,
				 tl.timeout_ms, early);
		n = read(out[0], early + elen, sizeof(early) - 1 - elen);
		if (n <= 0)
			fail_msg("tnfctl-follow -p %d ended before its ROOT record: %s", p->pid,
				 early);
		elen += n;
		early[elen] = '\0';
	}
	tl_send(p, "fork 3");
	tl_expect(p, "child");
	tl_expect(p, "forked");
	tl_send(p, "exit 5");
	collect(&r, out[0], f);
	if (elen + r.len >= sizeof(r.out))
		fail_msg("tnfctl-follow wrote more than %zu bytes", sizeof(r.out));
	memmove(r.out + elen, r.out, r.len + 1);
	memcpy(r.out, early, elen);
	r.len += elen;
	expect_exit(&r, 5, "-p of a probe-less process", NULL);
	expect_json(&r, "FORK", "\"child\":", 1);
	expect_json(&r, "EXIT", "\"status\":3", 1);
	expect_json(&r, "EXIT", "\"status\":5", 1);
}

/* Usage errors name the bad argument and exit 2; open errors exit 127/126 with the reason. */
static void test_follow_errors(void **state)
{
	char noexec[64], *a1[] = {"-p", "abc", NULL}, *a2[] = {"-p", "0", NULL},
			 *a3[] = {"-p", "1", "--", "true", NULL}, *a4[] = {NULL},
			 *a5[] = {"--", "/nonexistent/tl-prog", NULL}, *a6[] = {"--", noexec, NULL};
	static struct run r;
	size_t m;
	int fd;

	(void)state;
	tl_require_root();
	follow_pipe(&r, NULL, a1);
	expect_exit(&r, 2, "-p abc", NULL);
	expect_out(&r, "'abc' is not a process id", "-p abc", NULL);
	follow_pipe(&r, NULL, a2);
	expect_exit(&r, 2, "-p 0", NULL);
	expect_out(&r, "'0' is not a process id", "-p 0", NULL);
	follow_pipe(&r, NULL, a3);
	expect_exit(&r, 2, "-p 1 -- true", NULL);
	expect_out(&r, "both -p 1 and a command", "-p 1 -- true", NULL);
	follow_pipe(&r, NULL, a4);
	expect_exit(&r, 2, "no arguments", NULL);
	expect_out(&r, "no command given", "no arguments", NULL);
	snprintf(noexec, sizeof(noexec), "/tmp/tl-fj-noshebang-%d", getpid());
	fd = open(noexec, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, "echo hi\n", 8), 0);
	close(fd);
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		follow_pipe(&r, modes[m], a5);
		expect_exit(&r, 127, "a missing program", modes[m]);
		expect_out(&r, "/nonexistent/tl-prog: No such file or directory",
			   "a missing program", modes[m]);
	}
	/* execve's own reason and 126, in both modes (--no-stop said 127) */
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		follow_pipe(&r, modes[m], a6);
		expect_exit(&r, 126, "a script without #!", modes[m]);
		expect_out(&r, "Exec format error", "a script without #!", modes[m]);
	}
	unlink(noexec);
	tl_watch_half_end();
}

/* @argv (a build artefact @argv[0]) with stdout+stderr on a pipe, stdin /dev/null. */
static void tool_pipe(struct run *r, char *const *argv)
{
	char path[PATH_MAX + 64], *av[16], **env;
	int out[2], i;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", tl.bdir, argv[0]);
	av[0] = path;
	for (i = 1; argv[i] && i < 15; i++)
		av[i] = argv[i];
	av[i] = NULL;
	if (pipe2(out, O_CLOEXEC))
		abort();
	env = tl_env_build(NULL);
	pid = tl_spawn(av, env, out[1], NULL);
	free(env);
	close(out[1]);
	collect(r, out[0], pid);
}

/*
 * The exit-code table (README): usage 2, not found 127, cannot run 126 with
 * execve's reason, for prex, tnftrace and tnfdump as for tnfctl-follow.
 */
static void test_tools_exit_codes(void **state)
{
	char script[64];
	char *prex_missing[] = {"prex", "/nonexistent/tl-prog", NULL},
	     *prex_noexec[] = {"prex", script, NULL}, *prex_usage[] = {"prex", "-x", "true", NULL},
	     *tt_missing[] = {"tnftrace", "--", "/nonexistent/tl-prog", NULL},
	     *tt_noexec[] = {"tnftrace", "--", script, NULL}, *tt_usage[] = {"tnftrace", NULL},
	     *td_usage[] = {"tnfdump", NULL};
	static struct run r;
	int fd;

	(void)state;
	tl_require_root();
	snprintf(script, sizeof(script), "/tmp/tl-fj-tools-%d", getpid());
	fd = open(script, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, "echo hi\n", 8), 0);
	close(fd);
	tool_pipe(&r, prex_missing);
	expect_exit(&r, 127, "prex of a missing program", NULL);
	expect_out(&r, "No such file or directory", "prex of a missing program", NULL);
	tool_pipe(&r, prex_noexec);
	expect_exit(&r, 126, "prex of a script without #!", NULL);
	expect_out(&r, "Exec format error", "prex of a script without #!", NULL);
	tool_pipe(&r, prex_usage);
	expect_exit(&r, 1, "prex -x", NULL); /* 1, as the original prex */
	tool_pipe(&r, tt_missing);
	expect_exit(&r, 127, "tnftrace of a missing program", NULL);
	expect_out(&r, "No such file or directory", "tnftrace of a missing program", NULL);
	tool_pipe(&r, tt_noexec);
	expect_exit(&r, 126, "tnftrace of a script without #!", NULL);
	expect_out(&r, "Exec format error", "tnftrace of a script without #!", NULL);
	tool_pipe(&r, tt_usage);
	expect_exit(&r, 2, "tnftrace without a program", NULL);
	tool_pipe(&r, td_usage);
	expect_exit(&r, 2, "tnfdump without a file", NULL);
	unlink(script);
}

/* A program whose libc.so.6 is renamed: the loader's own message and its 127. */
static void test_follow_missing_library(void **state)
{
	static const char from[] = "libc.so.6", to[] = "libq.so.6";
	char prog[64], *args[] = {"--", prog, NULL}, *buf, *hit;
	static struct run r;
	int fd, n;

	(void)state;
	tl_require_root();
	buf = malloc(1 << 24);
	fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, 1 << 24) : -1;
	if (fd >= 0)
		close(fd);
	hit = n > 0 ? memmem(buf, n, from, sizeof(from)) : NULL;
	if (!hit) {
		free(buf);
		print_message("SKIP: no \"libc.so.6\" in /bin/true to rename\n");
		skip();
	}
	memcpy(hit, to, sizeof(to));
	snprintf(prog, sizeof(prog), "/tmp/tl-fj-missing-lib-%d", getpid());
	fd = open(prog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, buf, n), 0);
	close(fd);
	free(buf);
	follow_pipe(&r, NULL, args);
	unlink(prog);
	expect_exit(&r, 127, "a missing shared library", NULL);
	expect_out(&r, "libq.so.6: cannot open shared object file", "a missing shared library",
		   NULL);
	if (strstr(r.out, "ermission denied"))
		fail_msg("a missing library reported as a permission problem:\n%s", r.out);
}

/*
 * Run as `nobody`: the message names the privilege (root, or CAP_BPF,
 * CAP_PERFMON and CAP_SYS_PTRACE), without TNFCTL_DEBUG, and exits 1.
 */
static void test_follow_not_root_message(void **state)
{
	char *args[] = {"setpriv",	   "--reuid=65534",
			"--regid=65534",   "--clear-groups",
			"--inh-caps=-all", "--bounding-set=-all",
			tl.follow,	   "--",
			"/bin/true",	   NULL};
	char setpriv[PATH_MAX], **env;
	static struct run r;
	int out[2];
	pid_t pid;

	(void)state;
	tl_require_root();
	if (access("/usr/bin/setpriv", X_OK) && access("/bin/setpriv", X_OK)) {
		print_message("SKIP: setpriv (util-linux) is not installed\n");
		skip();
	}
	snprintf(setpriv, sizeof(setpriv), "%s",
		 access("/usr/bin/setpriv", X_OK) ? "/bin/setpriv" : "/usr/bin/setpriv");
	args[0] = setpriv;
	if (pipe2(out, O_CLOEXEC))
		abort();
	env = tl_env_build(NULL);
	pid = tl_spawn(args, env, out[1], NULL);
	free(env);
	close(out[1]);
	collect(&r, out[0], pid);
	expect_exit(&r, 1, "as nobody", NULL);
	expect_out(&r, "need root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE", "as nobody", NULL);
	expect_out(&r, "missing: CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE", "as nobody", NULL);
}

/* ---- on a pty ---- */

struct pty_run {
	pid_t pid;
	int master;
	char buf[1 << 16];
	size_t len;
};

/* tnfctl-follow [MODE] -o /dev/null ARGS on a new pty, as a session leader's job. */
static void pty_follow(struct pty_run *t, const char *mode, char *const *args)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 200};
	char *argv[32], **env;
	int i = 0, j;
	pid_t pid;

	argv[i++] = tl.follow;
	if (mode)
		argv[i++] = (char *)mode;
	argv[i++] = "-o";
	argv[i++] = "/dev/null";
	for (j = 0; args[j] && i < 30; j++)
		argv[i++] = args[j];
	argv[i] = NULL;
	env = tl_env_build(NULL);
	fflush(stdout);
	fflush(stderr);
	pid = forkpty(&t->master, NULL, NULL, &ws);
	assert_true(pid >= 0);
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execve(argv[0], argv, env);
		_exit(127);
	}
	free(env);
	tl_set_cloexec(t->master, 1);
	tl_track_pid(pid);
	t->pid = pid;
	t->len = 0;
}

/*
 * Reads the pty until @needle has appeared (raw bytes, with "\r\n"); what
 * came up to it is in @seen (@len bytes at most), when not NULL.
 */
static void pty_until_seen(struct pty_run *t, const char *needle, const char *what, char *seen,
			   size_t len)
{
	long long end = tl_now_ms() + tl.timeout_ms;

	for (;;) {
		struct pollfd pfd = {.fd = t->master, .events = POLLIN};
		char *hit;
		ssize_t n;
		int left;

		t->buf[t->len] = '\0';
		hit = memmem(t->buf, t->len, needle, strlen(needle));
		if (hit) {
			size_t used = hit + strlen(needle) - t->buf;

			if (seen)
				snprintf(seen, len, "%.*s", (int)used, t->buf);

			t->len -= used;
			memmove(t->buf, t->buf + used, t->len);
			return;
		}
		if (t->len >= sizeof(t->buf) - 1)
			t->len = 0;
		left = end - tl_now_ms();
		if (left <= 0)
			break;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		n = read(t->master, t->buf + t->len, sizeof(t->buf) - 1 - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		t->len += n;
	}
	{
		struct tl_pinfo *ps;
		int i, n = tl_subtree(&ps);
		char desc[1024];

		for (i = 0; i < n; i++) {
			char path[64], st[4096], *l;

			print_error("  %s\n", tl_describe(ps[i].pid, desc, sizeof(desc)));
			snprintf(path, sizeof(path), "/proc/%d/status", ps[i].pid);
			if (tl_read_file(path, st, sizeof(st)) > 0)
				for (l = strtok(st, "\n"); l; l = strtok(NULL, "\n"))
					if (strstr(l, "Sig") || strstr(l, "ShdPnd"))
						print_error("    %s\n", l);
		}
		free(ps);
	}
	fail_msg("%s: no \"%s\" on the pty within %d ms; last output: \"%s\"", what, needle,
		 tl.timeout_ms, t->buf);
}

static void pty_until(struct pty_run *t, const char *needle, const char *what)
{
	pty_until_seen(t, needle, what, NULL, 0);
}

static void pty_write(struct pty_run *t, const char *s)
{
	assert_int_equal(tl_write_all(t->master, s, strlen(s)), 0);
}

/* Waits for tnfctl-follow's exit; returns its wait status. */
static int pty_wait(struct pty_run *t)
{
	int st;

	if (tl_waitpid_timeout(t->pid, &st, 0, 4 * tl.timeout_ms) != t->pid)
		fail_msg("tnfctl-follow on the pty did not exit within %d ms", 4 * tl.timeout_ms);
	if (t->master >= 0)
		close(t->master);
	return st;
}

/* cat on the terminal under tnfctl-follow echoes what is typed (no SIGTTIN stop). */
static void test_follow_pty_cat(void **state)
{
	char *args[] = {"--", "cat", NULL};
	static struct pty_run t;
	size_t m;
	int st;

	(void)state;
	tl_require_root();
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		pty_follow(&t, modes[m], args);
		pty_write(&t, "hello tnf\n");
		/* the terminal's echo, then cat's copy */
		pty_until(&t, "hello tnf\r\nhello tnf\r\n", MODE_NAME(modes[m]));
		pty_write(&t, "\x04"); /* end of file */
		st = pty_wait(&t);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail_msg("cat (%s): wait status 0x%x, expected exit 0", MODE_NAME(modes[m]),
				 st);
	}
	tl_watch_half_end();
}

/* Whether @nr is a syscall that waits for terminal input. */
static int waits_for_input(long nr)
{
	static const long nrs[] = {
		SYS_read,   SYS_pselect6, SYS_ppoll,
#ifdef SYS_select
		SYS_select,
#endif
#ifdef SYS_poll
		SYS_poll,
#endif
	};
	size_t i;

	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++)
		if (nr == nrs[i])
			return 1;
	return 0;
}

/*
 * Waits until a process named @comm in our subtree is blocked waiting for
 * input.  A REPL that gets SIGINT after printing its prompt but before it
 * blocks in select() sees it only at the next key (CPython's readline loop
 * checks signals when select() fails with EINTR): ^C must come after.
 */
static void wait_reading_drain(struct pty_run *t, const char *comm, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;

	for (;;) {
		struct pollfd none = {.fd = -1};
		struct tl_pinfo *ps;
		int i, n, found = 0;

		n = tl_subtree(&ps);
		for (i = 0; i < n && !found; i++) {
			char path[64], buf[256];

			if (strcmp(ps[i].comm, comm) || ps[i].state != 'S')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/syscall", ps[i].pid);
			found = tl_read_file(path, buf, sizeof(buf)) > 0 &&
				waits_for_input(strtol(buf, NULL, 10));
		}
		free(ps);
		if (found)
			return;
		if (tl_now_ms() > end) {
			char desc[1024];

			n = tl_subtree(&ps);
			for (i = 0; i < n; i++)
				print_error("  %s\n", tl_describe(ps[i].pid, desc, sizeof(desc)));
			free(ps);
			if (t) {
				t->buf[t->len] = '\0';
				print_error("pty output: \"%s\"\n",
					    t->len > 2000 ? t->buf + t->len - 2000 : t->buf);
			}
			fail_msg("%s: no %s waiting for input within %d ms", what, comm,
				 tl.timeout_ms);
		}
		if (t) {
			/* Keep the pty drained: a writer blocked on a full pty holds the tree. */
			struct pollfd pfd = {.fd = t->master, .events = POLLIN};
			ssize_t r;

			if (poll(&pfd, 1, 2) > 0) {
				if (t->len >= sizeof(t->buf) - 4096)
					t->len = 0;
				r = read(t->master, t->buf + t->len, sizeof(t->buf) - 1 - t->len);
				if (r > 0)
					t->len += r;
			}
			continue;
		}
		poll(&none, 0, 2);
	}
}

static void wait_reading(const char *comm, const char *what)
{
	wait_reading_drain(NULL, comm, what);
}

/* Waits until @pid is in a job-control stop (state T or t, as /proc shows it). */
static void wait_stopped(pid_t pid, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;
	char st;

	while ((st = tl_proc_state(pid)) != 'T' && st != 't') {
		struct pollfd none = {.fd = -1};

		if (tl_now_ms() > end)
			fail_msg("%s: pid %d not stopped within %d ms (state %c)", what, pid,
				 tl.timeout_ms, st);
		poll(&none, 0, 2);
	}
}

/* The live process named @comm in our subtree (the first found). */
static pid_t find_live(const char *comm)
{
	struct tl_pinfo *ps;
	int i, n = tl_subtree(&ps);
	pid_t pid = 0;

	for (i = 0; i < n && !pid; i++)
		if (!strcmp(ps[i].comm, comm) && ps[i].state != 'Z')
			pid = ps[i].pid;
	free(ps);
	return pid;
}

/*
 * @cat, bash's job on @t, reading: Ctrl-Z stops it (bash says so), `fg`
 * resumes it, it copies a line, and ^D ends it back to the "tl$ " prompt.
 */
static void ctrl_z_fg_cat(struct pty_run *t, pid_t cat)
{
	pty_write(t, "\x1a");
	pty_until(t, "Stopped", "bash after Ctrl-Z");
	wait_stopped(cat, "cat after Ctrl-Z");
	pty_write(t, "fg\n");
	wait_reading("cat", "cat after fg");
	pty_write(t, "after fg\n");
	pty_until(t, "after fg\r\nafter fg\r\n", "cat after fg");
	pty_write(t, "\x04");
	pty_until(t, "tl$ ", "bash's prompt after cat");
}

/*
 * Ctrl-Z under an interactive bash (a job-control shell: the job's group is
 * not orphaned, so the stop is real): bash reports the job Stopped, cat is
 * in a group-stop, `fg` resumes both and cat reads again.
 */
static void test_follow_pty_ctrl_z(void **state)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 200};
	char cmd[PATH_MAX + 64], **env;
	char *argv[] = {"/bin/bash", "--norc", "--noprofile", "-i", NULL};
	const char *extra[] = {"PS1=tl$ ", NULL};
	static struct pty_run t;
	size_t m;
	pid_t pid, cat;
	int st;

	(void)state;
	tl_require_root();
	if (access(argv[0], X_OK)) {
		print_message("SKIP: no /bin/bash\n");
		skip();
	}
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		env = tl_env_build(extra);
		fflush(stdout);
		fflush(stderr);
		pid = forkpty(&t.master, NULL, NULL, &ws);
		assert_true(pid >= 0);
		if (pid == 0) {
			sigset_t none;

			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			execve(argv[0], argv, env);
			_exit(127);
		}
		free(env);
		tl_set_cloexec(t.master, 1);
		tl_track_pid(pid);
		t.pid = pid;
		t.len = 0;
		snprintf(cmd, sizeof(cmd), "%s %s -o /dev/null -- cat\n", tl.follow,
			 modes[m] ? modes[m] : "");
		pty_until(&t, "tl$ ", "bash's prompt");
		pty_write(&t, cmd);
		wait_reading("cat", MODE_NAME(modes[m]));
		cat = find_live("cat");
		ctrl_z_fg_cat(&t, cat);
		pty_write(&t, "exit $?\n");
		st = pty_wait(&t);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail_msg("cat after Ctrl-Z and fg (%s): bash's status 0x%x, expected 0",
				 MODE_NAME(modes[m]), st);
	}
	tl_watch_half_end();
}

/*
 * An interactive bash run by tnfctl-follow, with cat as its job: each exec
 * in the tree (env, bash, cat) is followed on, and bash's job control is as
 * untraced.  Re-opening a process after its exec once stopped it with a
 * group-stop that bash saw: it reported cat Stopped at once, before any key.
 */
static void test_follow_pty_shell_jobs(void **state)
{
	char *args[] = {"--",	  "/usr/bin/env", "PS1=tl$ ", "/bin/bash",
			"--norc", "--noprofile",  "-i",	      NULL};
	static struct pty_run t;
	pid_t cat;
	size_t m;
	int st;

	(void)state;
	tl_require_root();
	if (access("/bin/bash", X_OK) || access("/usr/bin/env", X_OK)) {
		print_message("SKIP: no /bin/bash or /usr/bin/env\n");
		skip();
	}
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		pty_follow(&t, modes[m], args);
		pty_until(&t, "tl$ ", "bash's prompt");
		pty_write(&t, "cat\n");
		wait_reading("cat", MODE_NAME(modes[m]));
		cat = find_live("cat");
		pty_write(&t, "typed line\n");
		pty_until(&t, "typed line\r\ntyped line\r\n", "cat, bash's job");
		ctrl_z_fg_cat(&t, cat);
		pty_write(&t, "exit 3\n");
		st = pty_wait(&t);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 3)
			fail_msg("bash -i under tnfctl-follow (%s): wait status 0x%x, expected "
				 "exit 3",
				 MODE_NAME(modes[m]), st);
	}
	tl_watch_half_end();
}

/* python3's REPL: it reads the terminal, Ctrl-C is its KeyboardInterrupt, its exit is ours. */
static void test_follow_pty_python_repl(void **state)
{
	char *args[] = {"--", "python3", "-q", NULL};
	static struct pty_run t;
	size_t m;
	int st;

	(void)state;
	tl_require_root();
	if (system("python3 -c pass >/dev/null 2>&1")) {
		print_message("SKIP: no python3\n");
		skip();
	}
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		pty_follow(&t, modes[m], args);
		pty_until(&t, ">>> ", MODE_NAME(modes[m]));
		pty_write(&t, "print(6 * 7)\n");
		pty_until(&t, "42\r\n", MODE_NAME(modes[m]));
		pty_until(&t, ">>> ", MODE_NAME(modes[m]));
		wait_reading("python3", MODE_NAME(modes[m]));
		pty_write(&t, "\x03");
		pty_until(&t, "KeyboardInterrupt", MODE_NAME(modes[m]));
		pty_until(&t, ">>> ", MODE_NAME(modes[m]));
		pty_write(&t, "import sys; sys.exit(3)\n");
		st = pty_wait(&t);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 3)
			fail_msg("python3 (%s): wait status 0x%x, expected exit 3",
				 MODE_NAME(modes[m]), st);
	}
	tl_watch_half_end();
}

/*
 * prex on a pty: while its target runs (`continue`) the target has the
 * terminal (cat echoes a typed line), ^C still stops it and brings the
 * prompt back (Solaris prex), and `continue` gives the terminal back.
 */
/*
 * PREX_F: prex -f of `sh -c cat`: cat is a followed child whose image prex
 * re-opened after its exec; the terminal's ^C is prex's for it too (it was
 * delivered to cat, which died of it).  PREX_F_BLOCKED: prex -f of
 * `sigint_block cat`, whose parent blocks SIGINT: the ^C stays queued in
 * the parent while cat takes it; prex stops the parent too, and the queued
 * SIGINT, delivered once the parent unblocks it after cat's end, is that
 * ^C again: not a new stop (once "target processes stopped" came at
 * every continue, the shell's queued ^C), and not the parent's death.
 */
enum prex_pty_kind {
	PREX_ONE,
	PREX_F,
	PREX_F_BLOCKED,
	PREX_F_BLOCKED_EXEC,
};

static char prex_home[64], prex_trace[64];

/*
 * prex @args (after the program name; "@trace" stands for a trace file in
 * /tmp) on a new pty, in a home without ~/.prexrc, up to its first prompt.
 */
static void prex_pty_start(struct pty_run *t, const char *const *args)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 200};
	char prex[PATH_MAX + 16], homevar[80], usdt[80], *argv[16], **env;
	const char *extra[] = {homevar, NULL};
	pid_t pid;
	int i;

	tl_require_root();
	snprintf(prex, sizeof(prex), "%s/prex", tl.bdir);
	snprintf(prex_trace, sizeof(prex_trace), "/tmp/tl-fj-prex-%d.tnf", getpid());
	snprintf(prex_home, sizeof(prex_home), "/tmp/tl-fj-home-%d", getpid());
	snprintf(homevar, sizeof(homevar), "HOME=%s", prex_home);
	argv[0] = prex;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = strcmp(args[i], "@trace") ? (char *)args[i] : prex_trace;
	argv[i + 1] = NULL;
	mkdir(prex_home, 0700);
	tl_track_path(prex_home);
	tl_track_path(prex_trace);
	snprintf(usdt, sizeof(usdt), "%s.usdt", prex_trace);
	tl_track_path(usdt);
	env = tl_env_build(extra);
	fflush(stdout);
	fflush(stderr);
	pid = forkpty(&t->master, NULL, NULL, &ws);
	assert_true(pid >= 0);
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (chdir(prex_home))
			_exit(126);
		execve(argv[0], argv, env);
		_exit(127);
	}
	free(env);
	tl_set_cloexec(t->master, 1);
	tl_track_pid(pid);
	t->pid = pid;
	t->len = 0;
	pty_until(t, "prex> ", "prex's first prompt");
}

/* prex's end: it must exit 0; its files are removed. */
static void prex_pty_end(struct pty_run *t)
{
	int st = pty_wait(t);

	unlink(prex_trace);
	rmdir(prex_home);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("prex: wait status 0x%x, expected exit 0", st);
}

static void prex_pty_cat(enum prex_pty_kind kind)
{
	char blocker[PATH_MAX + 32];
	const char *args1[] = {"-o", "@trace", "cat", NULL};
	const char *argsf[] = {"-f", "-o", "@trace", "sh", "-c", "cat; echo cat rc=$?", NULL};
	const char *argsb[] = {"-f", "-o", "@trace", blocker, "cat", NULL};
	const char *argsx[] = {"-f", "-o", "@trace", blocker, "--exec", "cat", NULL};
	bool follow = kind != PREX_ONE;
	static struct pty_run t;

	snprintf(blocker, sizeof(blocker), "%s/tests/helpers/sigint_block", tl.bdir);
	prex_pty_start(&t, kind == PREX_ONE	    ? args1
			   : kind == PREX_F	    ? argsf
			   : kind == PREX_F_BLOCKED ? argsb
						    : argsx);
	pty_write(&t, "continue\n");
	wait_reading("cat", "cat under prex");
	pty_write(&t, "typed line\n");
	pty_until(&t, "typed line\r\ntyped line\r\n", "cat under prex");
	wait_reading("cat", "cat under prex");
	pty_write(&t, "\x03");
	pty_until(&t, follow ? "target processes stopped" : "Target process stopped",
		  "^C under prex");
	pty_until(&t, "prex> ", "the prompt after ^C");
	pty_write(&t, "continue\n");
	wait_reading("cat", "cat under prex, continued");
	pty_write(&t, "again\n");
	pty_until(&t, "again\r\nagain\r\n", "cat under prex after a second continue");
	pty_write(&t, "\x04");
	if (kind == PREX_F) {
		/* then prex ends with the tree */
		pty_until(&t, "cat rc=0", "cat's end under prex -f (not killed by the ^C)");
	} else if (kind == PREX_F_BLOCKED || kind == PREX_F_BLOCKED_EXEC) {
		pty_until(&t, "unblocked, child status 0",
			  "the SIGINT-blocking parent's end under prex -f (no second stop)");
	} else {
		pty_until(&t, "target process exited", "cat's end under prex");
	}
	prex_pty_end(&t);
}

static void test_prex_pty_interactive_target(void **state)
{
	(void)state;
	prex_pty_cat(PREX_ONE);
}

/*
 * prex on python3's REPL on a pty: ^C at its prompt stops it, `continue`
 * gives it back the terminal in its own modes (readline's: no echo), so a
 * typed line shows once (it showed twice: the terminal came back in
 * prex's modes, echo on, while readline echoed too).
 */
static void test_prex_pty_python_modes(void **state)
{
	/* the binary itself: a python3 on $PATH may be a wrapper that execs */
	const char *args[] = {"-o", "@trace", "/usr/bin/python3.11", "-q", NULL};
	static struct pty_run t;
	const char *first;
	char seen[4096];

	(void)state;
	if (system("/usr/bin/python3.11 -c 'import readline' >/dev/null 2>&1")) {
		print_message("SKIP: no /usr/bin/python3.11 with readline\n");
		skip();
	}
	prex_pty_start(&t, args);
	pty_write(&t, "continue\n");
	pty_until(&t, ">>> ", "python3's prompt under prex");
	wait_reading("python3.11", "python3 under prex");
	pty_write(&t, "\x03");
	pty_until(&t, "Target process stopped", "^C under prex");
	pty_until(&t, "prex> ", "the prompt after ^C");
	pty_write(&t, "continue\n");
	wait_reading("python3.11", "python3 under prex, continued");
	pty_write(&t, "6*7\n");
	pty_until_seen(&t, "42\r\n", "python3's answer after continue", seen, sizeof(seen));
	first = strstr(seen, "6*7");
	if (!first || strstr(first + 3, "6*7"))
		fail_msg("the typed line did not show once: \"%s\"", seen);
	pty_write(&t, "import sys; sys.exit(0)\n");
	pty_until(&t, "target process exited", "python3's end under prex");
	prex_pty_end(&t);
}

static void test_prex_f_pty_ctrl_c_child(void **state)
{
	(void)state;
	prex_pty_cat(PREX_F);
}

static void test_prex_f_pty_ctrl_c_queued_in_parent(void **state)
{
	(void)state;
	prex_pty_cat(PREX_F_BLOCKED);
}

/* The same, the parent unblocking SIGINT in a new image (prex re-opens it after the exec). */
static void test_prex_f_pty_ctrl_c_queued_across_exec(void **state)
{
	(void)state;
	prex_pty_cat(PREX_F_BLOCKED_EXEC);
}

/*
 * prex -f of a shell whose background subshell forks /bin/true in a loop
 * while it reads lines: each ^C lands somewhere in a fork (dash vforks).
 * Every ^C must stop the tree and give the prompt (a vfork parent waiting
 * for its stopped child once hung prex for good), and after `continue` the
 * tree must run on: a line typed then is read by the shell (a copy of the
 * ^C still queued in a process stopped by the ^C, a fork child not yet
 * continued or a vfork parent, once stopped the tree again at `continue`,
 * and the line went to prex).
 */
static void prex_pty_ctrl_c_forking(const char *shell)
{
	const char *args[] = {"-f",
			      "-o",
			      "@trace",
			      shell,
			      "-c",
			      "(while :; do /bin/true; done) & "
			      "while read x; do echo \"got $x\"; done; kill $!",
			      NULL};
	static struct pty_run t;
	char line[32], what[96];
	int i, rounds = 15;

	prex_pty_start(&t, args);
	pty_write(&t, "continue\n");
	for (i = 0; i < rounds; i++) {
		snprintf(line, sizeof(line), "line%d\n", i);
		snprintf(what, sizeof(what), "%s round %d: the line read after continue", shell, i);
		/* The shell has the terminal once it reads (prex gives it at continue). */
		wait_reading_drain(&t, strrchr(shell, '/') + 1, what);
		pty_write(&t, line);
		line[strlen(line) - 1] = '\0';
		snprintf(line, sizeof(line), "got line%d", i);
		pty_until(&t, line, what);
		pty_write(&t, "\x03");
		snprintf(what, sizeof(what), "%s round %d: ^C", shell, i);
		pty_until(&t, "stopped", what);
		pty_until(&t, "prex> ", what);
		pty_write(&t, "continue\n");
	}
	wait_reading_drain(&t, strrchr(shell, '/') + 1, "the shell's end");
	pty_write(&t, "\x04");
	prex_pty_end(&t);
}

static void test_prex_f_pty_ctrl_c_forking_dash(void **state)
{
	(void)state;
	prex_pty_ctrl_c_forking("/bin/sh");
}

static void test_prex_f_pty_ctrl_c_forking_bash(void **state)
{
	(void)state;
	prex_pty_ctrl_c_forking("/bin/bash");
}

/* Live (not zombie) processes named @comm in our subtree. */
static int count_live(const char *comm)
{
	struct tl_pinfo *ps;
	int i, n, live = 0;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++)
		if (!strcmp(ps[i].comm, comm) && ps[i].state != 'Z' && ps[i].state != 'X')
			live++;
	free(ps);
	return live;
}

/* Waits until @want processes named @comm are alive in our subtree. */
static void wait_live(const char *comm, int want, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;

	while (count_live(comm) < want) {
		struct pollfd none = {.fd = -1};

		if (tl_now_ms() > end)
			fail_msg("%s: %d of %d %s processes started within %d ms", what,
				 count_live(comm), want, comm, tl.timeout_ms);
		poll(&none, 0, 5);
	}
}

/*
 * After tnfctl-follow's exit: nothing of its tree may still run.  The watch's
 * END comes at the last exit tracepoint, inside do_exit(), a moment before
 * that process is a zombie (wider under TCG): a process already exiting is
 * given until the timeout to become one.
 */
static void assert_tree_gone(const char *comm, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;
	int left;

	for (;;) {
		struct pollfd none = {.fd = -1};

		tl_reap_children();
		left = count_live(comm);
		if (!left)
			return;
		if (tl_now_ms() > end)
			break;
		poll(&none, 0, 5);
	}
	fail_msg("%s: %d %s process(es) still running after tnfctl-follow exited", what, left,
		 comm);
}

/*
 * A shell pipeline of three sleeps: Ctrl-C on the terminal ends all of them,
 * and tnfctl-follow, after they are gone, ends by the root's SIGINT as an
 * untraced command would (a calling shell then stops its script; an exit
 * status of 130 would not stop it).
 */
static void test_follow_pty_ctrl_c_tree(void **state)
{
	char *args[] = {"--", "/bin/sh", "-c", "sleep 1000 | sleep 1001 | sleep 1002", NULL};
	static struct pty_run t;
	size_t m;
	int st;

	(void)state;
	tl_require_root();
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		pty_follow(&t, modes[m], args);
		wait_live("sleep", 3, MODE_NAME(modes[m]));
		pty_write(&t, "\x03");
		st = pty_wait(&t);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGINT)
			fail_msg("Ctrl-C (%s): wait status 0x%x, expected killed by SIGINT",
				 MODE_NAME(modes[m]), st);
		assert_tree_gone("sleep", MODE_NAME(modes[m]));
	}
	tl_watch_half_end();
}

/*
 * SIGTERM (and SIGHUP) sent to tnfctl-follow reach the whole tree: a shell
 * with sleeping children in the background ends, and so do they; then
 * tnfctl-follow ends by the same signal, as the root did.
 */
static void test_follow_sigterm_tree(void **state)
{
	char *args[] = {"--", "/bin/sh", "-c", "sleep 1000 & sleep 1001 & sleep 1002; wait", NULL};
	static const int sigs[] = {SIGTERM, SIGHUP};
	static struct pty_run t;
	size_t m, s;
	int st;

	(void)state;
	tl_require_root();
	for (m = 0; m < (size_t)tl_follow_modes(); m++)
		for (s = 0; s < 2; s++) {
			pty_follow(&t, modes[m], args);
			wait_live("sleep", 3, MODE_NAME(modes[m]));
			kill(t.pid, sigs[s]);
			st = pty_wait(&t);
			if (!WIFSIGNALED(st) || WTERMSIG(st) != sigs[s])
				fail_msg("%s (%s): wait status 0x%x, expected killed by it",
					 strsignal(sigs[s]), MODE_NAME(modes[m]), st);
			assert_tree_gone("sleep", MODE_NAME(modes[m]));
		}
	tl_watch_half_end();
}

/*
 * The terminal hangs up (its window closed, an ssh connection lost) with
 * tnfctl-follow as its session leader: the tree ends as it does untraced
 * (the shell, its session leader then, dies of the SIGHUP and so do its
 * children), and tnfctl-follow by the same SIGHUP.  Checked untraced first.
 */
static void test_follow_pty_hangup(void **state)
{
	char *args[] = {"--", "/bin/sh", "-c", "sleep 1000 & sleep 1001 & sleep 1002; wait", NULL};
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	static struct pty_run t;
	char **env;
	size_t m;
	int st;

	(void)state;
	tl_require_root();
	env = tl_env_build(NULL);
	fflush(stdout);
	fflush(stderr);
	t.pid = forkpty(&t.master, NULL, NULL, &ws);
	assert_true(t.pid >= 0);
	if (t.pid == 0) {
		execve(args[1], args + 1, env);
		_exit(127);
	}
	free(env);
	tl_track_pid(t.pid);
	wait_live("sleep", 3, "untraced");
	close(t.master);
	t.master = -1;
	st = pty_wait(&t);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGHUP)
		fail_msg("hang-up, untraced: wait status 0x%x, expected killed by SIGHUP", st);
	assert_tree_gone("sleep", "untraced");
	for (m = 0; m < (size_t)tl_follow_modes(); m++) {
		pty_follow(&t, modes[m], args);
		wait_live("sleep", 3, MODE_NAME(modes[m]));
		close(t.master);
		t.master = -1;
		st = pty_wait(&t);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGHUP)
			fail_msg("hang-up (%s): wait status 0x%x, expected killed by SIGHUP",
				 MODE_NAME(modes[m]), st);
		assert_tree_gone("sleep", MODE_NAME(modes[m]));
	}
	tl_watch_half_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_follow_asan_both_modes),
		TL_TEST(test_follow_static_and_env_i),
		TL_TEST(test_follow_pid_probe_less),
		TL_TEST(test_follow_errors),
		TL_TEST(test_follow_missing_library),
		TL_TEST(test_tools_exit_codes),
		TL_TEST(test_follow_not_root_message),
		TL_TEST(test_follow_pty_cat),
		TL_TEST(test_follow_pty_python_repl),
		TL_TEST(test_follow_pty_ctrl_z),
		TL_TEST(test_follow_pty_shell_jobs),
		TL_TEST(test_follow_root_killed_while_stopped),
		TL_TEST(test_prex_pty_interactive_target),
		TL_TEST(test_prex_pty_python_modes),
		TL_TEST(test_follow_pty_ctrl_c_tree),
		TL_TEST(test_follow_sigterm_tree),
		TL_TEST(test_follow_pty_hangup),
		TL_TEST(test_prex_f_pty_ctrl_c_child),
		TL_TEST(test_prex_f_pty_ctrl_c_queued_in_parent),
		TL_TEST(test_prex_f_pty_ctrl_c_queued_across_exec),
		TL_TEST(test_prex_f_pty_ctrl_c_forking_dash),
		TL_TEST(test_prex_f_pty_ctrl_c_forking_bash),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
