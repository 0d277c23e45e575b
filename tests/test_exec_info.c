// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exec details (Linux extensions): the full argv and the cwd of every EXEC,
 * and failed execs as their own event, in the stopping API
 * (tnfctl_event_exec_get, TNFCTL_OPEN_EXEC_FAILED) and the watch
 * (tnfctl_watch_event_exec, TNFCTL_WATCH_EXEC_FAILED); and the watch's
 * DLOPEN name when it lies in a page the process never touched.
 *
 * The workloads are this binary run as `test_exec_info --wl KIND ARGS...`:
 * `exec SPEC` execs what the file SPEC holds (NUL-separated: the directory
 * to run in, the path, then every argument, so any byte can be passed) and
 * exits with 100 + errno if the execve fails: the errno the events must
 * carry is the one the workload itself saw.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "testlib.h"

/* ------------------------------------------------------------------ */
/* workloads */

static int wl_exec(const char *spec)
{
	static char buf[512 * 1024];
	char **argv;
	int fd = open(spec, O_RDONLY | O_CLOEXEC), n = 0, i;
	ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	char *p, *q;

	if (len <= 0)
		_exit(99);
	for (i = 0; i < len; i++)
		n += buf[i] == '\0';
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv || n < 2 || chdir(buf))
		_exit(98);
	p = buf + strlen(buf) + 1; /* the path */
	for (q = p + strlen(p) + 1, i = 0; i < n - 2; q += strlen(q) + 1, i++)
		argv[i] = q;
	execve(p, argv, environ);
	_exit(100 + errno);
}

/*
 * The dlopen name, 1 MiB into a 2 MiB read-only object: a page the process
 * has not touched (nor faulted in around anything else) before the call.
 */
static const struct {
	char before[1 << 20];
	char name[64];
	char after[(1 << 20) - 64];
} fresh __attribute__((aligned(4096))) = {.name = "./libtl_plug.so"};

static int wl_dl_fresh(const char *dir)
{
	void *h;

	if (chdir(dir))
		_exit(98);
	h = dlopen(fresh.name, RTLD_NOW);
	_exit(h ? 0 : 1);
}

/* fork_exec SPEC: a child does `exec SPEC`; the parent reaps it and exits 0. */
static int wl_fork_exec(const char *spec)
{
	pid_t p = fork();
	int st;

	if (p == 0)
		wl_exec(spec);
	if (p < 0)
		_exit(97);
	while (waitpid(p, &st, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

static int workload(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[0], "fork_exec"))
		return wl_fork_exec(argv[1]);
	if (argc == 2 && !strcmp(argv[0], "exec"))
		return wl_exec(argv[1]);
	if (argc == 2 && !strcmp(argv[0], "dl_fresh"))
		return wl_dl_fresh(argv[1]);
	return 2;
}

/* ------------------------------------------------------------------ */
/* the test side */

static char self_exe[PATH_MAX];

/* What the workload is asked to exec, and what must be reported. */
struct spec {
	char file[PATH_MAX]; /* the spec file */
	char dir[PATH_MAX];  /* cwd of the exec (realpath) */
	const char *path;
	char **argv;
	int argc;
	size_t bytes; /* of the argument strings, NULs included */
};

static void spec_write(struct spec *s, const char *dir, const char *path, char **argv)
{
	int fd, i;

	snprintf(s->file, sizeof(s->file), "/tmp/tl_exec_spec.XXXXXX");
	fd = mkstemp(s->file);
	assert_true(fd >= 0);
	assert_non_null(realpath(dir, s->dir));
	s->path = path;
	s->argv = argv;
	s->bytes = 0;
	assert_int_equal(tl_write_all(fd, s->dir, strlen(s->dir) + 1), 0);
	assert_int_equal(tl_write_all(fd, path, strlen(path) + 1), 0);
	for (i = 0; argv[i]; i++) {
		assert_int_equal(tl_write_all(fd, argv[i], strlen(argv[i]) + 1), 0);
		s->bytes += strlen(argv[i]) + 1;
	}
	s->argc = i;
	close(fd);
}

/* @x reports exactly @s's argv and cwd (or a prefix of the argv, flagged, if @trunc). */
static void check_exec(const struct tnfctl_exec_info *x, const struct spec *s, bool trunc,
		       bool want_cwd)
{
	size_t got = 0;
	int i;

	if (want_cwd)
		assert_string_equal(x->cwd, s->dir);
	if (!trunc) {
		assert_int_equal(x->flags & TNFCTL_EXEC_ARGV_TRUNCATED, 0);
		assert_int_equal(x->argc, s->argc);
		assert_int_equal(x->argv_bytes, s->bytes);
	} else {
		assert_true(x->flags & TNFCTL_EXEC_ARGV_TRUNCATED);
		assert_true(x->argc >= 1 && x->argc <= s->argc);
	}
	for (i = 0; i < x->argc; i++) {
		if (trunc && i == x->argc - 1) {
			/* The last one captured may be cut at the bound: a prefix. */
			if (strncmp(x->argv[i], s->argv[i], strlen(x->argv[i])))
				fail_msg("argv[%d] is not a prefix of what was passed", i);
		} else if (strcmp(x->argv[i], s->argv[i])) {
			fail_msg("argv[%d]: %zu bytes \"%.40s\", passed %zu bytes \"%.40s\"", i,
				 strlen(x->argv[i]), x->argv[i], strlen(s->argv[i]), s->argv[i]);
		}
		got += strlen(x->argv[i]) + 1;
	}
	assert_null(x->argv[x->argc]);
	if (trunc) {
		assert_true(got <= TNFCTL_EXEC_ARGV_MAX + 1); /* + the NUL ending the cut one */
		assert_true(got < s->bytes);
	}
}

/*
 * Stopping API: exec_open the workload with TNFCTL_OPEN_EXEC_FAILED, continue
 * to its exec; @want is EXEC or EXEC_FAILED.  Fills @x (its strings live in
 * the handle: returned open, the caller closes).  *@pid: the target.
 */
static tnfctl_handle_t *stop_run(const struct spec *s, tnfctl_event_t want,
				 struct tnfctl_exec_info *x, pid_t *pid)
{
	char *argv[] = {self_exe, "--wl", "exec", (char *)s->file, NULL};
	tnfctl_handle_t *h;

	tl_assert_err(tnfctl_exec_open_flags(self_exe, argv, NULL, NULL, NULL,
					     TNFCTL_OPEN_EXEC_FAILED, &h),
		      TNFCTL_ERR_NONE);
	tl_track_handle(h);
	*pid = tl_targ_pid(h);
	tl_track_pid(*pid);
	tl_expect_event(h, NULL, want);
	memset(x, 0, sizeof(*x));
	x->sz = sizeof(*x);
	tl_assert_err(tnfctl_event_exec_get(h, x), TNFCTL_ERR_NONE);
	return h;
}

static void stop_close(tnfctl_handle_t *h, pid_t pid)
{
	tl_close(h, TNFCTL_TARG_KILL);
	tl_assert_exits(pid, "exec_open'd target after close KILL"); /* reaped by the library */
}

/* Watch: watch_exec the workload; the first event after its own EXEC must be @want. */
struct wrun {
	tnfctl_watch_t *w;
	pid_t pid;
};

static void watch_start(struct wrun *r, const struct spec *s)
{
	char *argv[] = {self_exe, "--wl", "exec", (char *)s->file, NULL};

	tl_require_watch();
	tl_assert_err(tnfctl_watch_exec(self_exe, argv, NULL, 0, &r->w, &r->pid), TNFCTL_ERR_NONE);
	tl_track_pid(r->pid);
}

/* The next event of kind @kind (FORK, EXIT... skipped, each checked as the workload's). */
static void watch_next_kind(struct wrun *r, tnfctl_watch_kind_t kind, tnfctl_watch_event_t *ev)
{
	int n;

	for (;;) {
		n = tnfctl_watch_next(r->w, ev, tl.timeout_ms);
		if (n != 1)
			fail_msg("tnfctl_watch_next: %d (waiting for kind %d)", n, kind);
		if (ev->kind == kind)
			return;
		if (ev->kind == TNFCTL_WATCH_END || ev->kind == TNFCTL_WATCH_LOST)
			fail_msg("kind %d while waiting for %d", ev->kind, kind);
	}
}

static void watch_exec_info(struct wrun *r, tnfctl_watch_kind_t kind, struct tnfctl_exec_info *x)
{
	static tnfctl_watch_event_t ev;

	watch_next_kind(r, TNFCTL_WATCH_EXEC, &ev); /* the workload's own */
	assert_int_equal(ev.pid, r->pid);
	watch_next_kind(r, kind, &ev);
	assert_int_equal(ev.pid, r->pid);
	memset(x, 0, sizeof(*x));
	x->sz = sizeof(*x);
	tl_assert_err(tnfctl_watch_event_exec(r->w, x), TNFCTL_ERR_NONE);
}

static int watch_end(struct wrun *r)
{
	tnfctl_watch_close(r->w);
	return tl_reap(r->pid);
}

/* Every awkward byte: spaces, quotes, a newline, non-UTF-8, 1000 arguments, an 8 KiB one. */
static char **hard_argv(void)
{
	static char big[8193], *v[1100];
	static char num[1000][8];
	int i, n = 0;

	memset(big, 'B', 8192);
	big[8192] = '\0';
	v[n++] = "/bin/true";
	v[n++] = "two words";
	v[n++] = "it's \"quoted\" `x` $HOME \\";
	v[n++] = "line1\nline2\n";
	v[n++] = "\xff\xfe\x80 not utf-8 \xc3";
	v[n++] = "";
	v[n++] = big;
	for (i = 0; i < 1000; i++) {
		snprintf(num[i], sizeof(num[i]), "a%d", i);
		v[n++] = num[i];
	}
	v[n] = NULL;
	return v;
}

static void make_dir(char *dir)
{
	snprintf(dir, PATH_MAX, "/tmp/tl exec dir.XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void test_argv_roundtrip_stop(void **state)
{
	struct tnfctl_exec_info x;
	char dir[PATH_MAX];
	tnfctl_handle_t *h;
	struct spec s;
	pid_t pid;

	(void)state;
	tl_require_root();
	make_dir(dir);
	spec_write(&s, dir, "/bin/true", hard_argv());
	h = stop_run(&s, TNFCTL_EVENT_EXEC, &x, &pid);
	assert_string_equal(x.path, "/bin/true");
	assert_int_equal(x.error, 0);
	check_exec(&x, &s, false, true);
	stop_close(h, pid);
	unlink(s.file);
	rmdir(dir);
}

static void test_argv_roundtrip_watch(void **state)
{
	struct tnfctl_exec_info x;
	char dir[PATH_MAX];
	struct wrun r;
	struct spec s;
	int st;

	(void)state;
	tl_require_root();
	make_dir(dir);
	spec_write(&s, dir, "/bin/true", hard_argv());
	watch_start(&r, &s);
	watch_exec_info(&r, TNFCTL_WATCH_EXEC, &x);
	assert_string_equal(x.path, "/bin/true");
	assert_int_equal(x.error, 0);
	check_exec(&x, &s, false, true);
	assert_int_equal(x.flags, 0);
	st = watch_end(&r);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(s.file);
	rmdir(dir);
}

/* 4 arguments of 30000 bytes: more than the bound, flagged, the real size given. */
static char **big_argv(void)
{
	static char a[4][30001], *v[6];
	int i;

	v[0] = "/bin/true";
	for (i = 0; i < 4; i++) {
		memset(a[i], 'a' + i, 30000);
		a[i][30000] = '\0';
		v[i + 1] = a[i];
	}
	v[5] = NULL;
	return v;
}

static void test_argv_truncated(void **state)
{
	struct tnfctl_exec_info x;
	tnfctl_handle_t *h;
	struct wrun r;
	struct spec s;
	pid_t pid;

	(void)state;
	tl_require_root();
	spec_write(&s, "/", "/bin/true", big_argv());
	assert_true(s.bytes > TNFCTL_EXEC_ARGV_MAX);
	h = stop_run(&s, TNFCTL_EVENT_EXEC, &x, &pid);
	check_exec(&x, &s, true, true);
	assert_int_equal(x.argv_bytes, s.bytes);
	stop_close(h, pid);

	watch_start(&r, &s);
	watch_exec_info(&r, TNFCTL_WATCH_EXEC, &x);
	check_exec(&x, &s, true, true);
	assert_int_equal(x.argv_bytes, s.bytes);
	watch_end(&r);
	unlink(s.file);
}

/* An older caller's smaller struct gets only what fits; too small is BADARG. */
static void test_exec_info_size(void **state)
{
	struct tnfctl_exec_info x;
	char *argv[] = {"/bin/true", "x", NULL};
	tnfctl_handle_t *h;
	struct spec s;
	pid_t pid;

	(void)state;
	tl_require_root();
	spec_write(&s, "/", "/bin/true", argv);
	h = stop_run(&s, TNFCTL_EVENT_EXEC, &x, &pid);
	memset(&x, 0x5a, sizeof(x));
	x.sz = offsetof(struct tnfctl_exec_info, path);
	tl_assert_err(tnfctl_event_exec_get(h, &x), TNFCTL_ERR_NONE);
	assert_int_equal(x.argc, 2);
	assert_string_equal(x.argv[1], "x");
	assert_int_equal(x.sz, offsetof(struct tnfctl_exec_info, path));
	{
		const char *poison;

		memset(&poison, 0x5a, sizeof(poison));
		assert_ptr_equal(x.path, poison); /* past sz: untouched */
	}
	x.sz = sizeof(int);
	tl_assert_err(tnfctl_event_exec_get(h, &x), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_event_exec_get(h, NULL), TNFCTL_ERR_BADARG);
	stop_close(h, pid);
	unlink(s.file);
}

/* The files a failed exec is tried on; @which: 0 ENOENT, 1 EACCES, 2 ENOEXEC, 3 E2BIG. */
struct failcase {
	const char *name;
	int err;
};
static const struct failcase failcases[] = {
	{"ENOENT", ENOENT},
	{"EACCES", EACCES},
	{"ENOEXEC", ENOEXEC},
	{"E2BIG", E2BIG},
};

static void fail_setup(int which, char *path, struct spec *s)
{
	static char huge[200 * 1024];
	static char *argv[4];
	int fd;

	snprintf(path, PATH_MAX, "/tmp/tl_exec_fail.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, "\x01\x02 no magic, no #!\n", 20), 0);
	close(fd);
	chmod(path, which == 1 ? 0644 : 0755);
	argv[0] = "prog";
	argv[1] = "with space";
	argv[2] = NULL;
	if (which == 0)
		unlink(path); /* ENOENT */
	if (which == 3) {
		memset(huge, 'h', sizeof(huge) - 1); /* beyond MAX_ARG_STRLEN */
		argv[2] = huge;
		argv[3] = NULL;
	}
	spec_write(s, "/", path, argv);
}

static void check_failed(const struct tnfctl_exec_info *x, const struct spec *s, int which)
{
	if (x->error != failcases[which].err)
		fail_msg("%s: error %d, expected %d", failcases[which].name, x->error,
			 failcases[which].err);
	assert_string_equal(x->path, s->path);
	assert_string_equal(x->cwd, "/");
	/* The arguments the caller passed (cut, and flagged, only for E2BIG's huge one). */
	assert_true(x->argc >= 2);
	assert_string_equal(x->argv[0], "prog");
	assert_string_equal(x->argv[1], "with space");
	if (which == 3)
		assert_true(x->flags & TNFCTL_EXEC_ARGV_TRUNCATED);
	else
		assert_int_equal(x->argc, 2);
}

static void test_exec_failed_stop(void **state)
{
	struct tnfctl_exec_info x;
	char path[PATH_MAX];
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	struct spec s;
	int which;
	pid_t pid;

	(void)state;
	tl_require_root();
	for (which = 0; which < 4; which++) {
		fail_setup(which, path, &s);
		h = stop_run(&s, TNFCTL_EVENT_EXEC_FAILED, &x, &pid);
		check_failed(&x, &s, which);
		tl_assert_all_stopped(pid, "at EXEC_FAILED");
		/* Not an end: the process goes on, and exits with what it saw. */
		tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
		tl_info(h, &info);
		assert_int_equal(info.exit_status, 100 + failcases[which].err);
		tl_close(h, TNFCTL_TARG_DEFAULT);
		tl_assert_exits(pid, "after EXIT");
		unlink(path);
		unlink(s.file);
	}
}

/* A FORK child's handle inherits TNFCTL_OPEN_EXEC_FAILED. */
static void test_exec_failed_child_inherits(void **state)
{
	char *argv[] = {self_exe, "--wl", "fork_exec", NULL, NULL};
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	tnfctl_event_info_t info;
	tnfctl_handle_t *h, *c;
	char path[PATH_MAX];
	struct spec s;
	pid_t pid, cpid;

	(void)state;
	tl_require_root();
	fail_setup(0, path, &s);
	argv[3] = s.file;
	tl_assert_err(tnfctl_exec_open_flags(self_exe, argv, NULL, NULL, NULL,
					     TNFCTL_OPEN_EXEC_FAILED, &h),
		      TNFCTL_ERR_NONE);
	tl_track_handle(h);
	pid = tl_targ_pid(h);
	tl_track_pid(pid);
	tl_expect_event(h, &c, TNFCTL_EVENT_FORK);
	assert_non_null(c);
	cpid = tl_targ_pid(c);
	tl_expect_event(c, NULL, TNFCTL_EVENT_EXEC_FAILED);
	tl_assert_err(tnfctl_event_exec_get(c, &x), TNFCTL_ERR_NONE);
	assert_int_equal(x.error, ENOENT);
	assert_string_equal(x.path, path);
	tl_info(c, &info);
	assert_int_equal(info.pid, cpid);
	tl_expect_event(c, NULL, TNFCTL_EVENT_EXIT);
	tl_info(c, &info);
	assert_int_equal(info.exit_status, 100 + ENOENT);
	tl_close(c, TNFCTL_TARG_DEFAULT);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_exits(pid, "after EXIT");
	unlink(s.file);
}

/* Without TNFCTL_OPEN_EXEC_FAILED (Solaris behaviour): no event, the next one is EXIT. */
static void test_exec_failed_needs_flag(void **state)
{
	char *argv[] = {self_exe, "--wl", "exec", NULL, NULL};
	tnfctl_event_info_t info;
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	char path[PATH_MAX];
	tnfctl_handle_t *h;
	struct spec s;
	pid_t pid;

	(void)state;
	tl_require_root();
	fail_setup(0, path, &s);
	argv[3] = s.file;
	tl_assert_err(tnfctl_exec_open(self_exe, argv, NULL, NULL, NULL, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	pid = tl_targ_pid(h);
	tl_track_pid(pid);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 100 + ENOENT);
	tl_assert_err(tnfctl_event_exec_get(h, &x), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_exits(pid, "after EXIT");
	unlink(s.file);
	tl_assert_err(tnfctl_exec_open_flags(self_exe, argv, NULL, NULL, NULL, 0x80000000u, &h),
		      TNFCTL_ERR_BADARG);
}

static void test_exec_failed_watch(void **state)
{
	struct tnfctl_exec_info x;
	char path[PATH_MAX];
	struct wrun r;
	struct spec s;
	int which, st;

	(void)state;
	tl_require_root();
	for (which = 0; which < 4; which++) {
		fail_setup(which, path, &s);
		watch_start(&r, &s);
		watch_exec_info(&r, TNFCTL_WATCH_EXEC_FAILED, &x);
		check_failed(&x, &s, which);
		st = watch_end(&r);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 100 + failcases[which].err);
		unlink(path);
		unlink(s.file);
	}
}

/* The dlopen name in a page never touched before the call: 5 runs of 5 show it. */
static void test_dlopen_name_fresh_page(void **state)
{
	static tnfctl_watch_event_t ev;
	char dir[PATH_MAX];
	char *argv[] = {self_exe, "--wl", "dl_fresh", dir, NULL};
	tnfctl_watch_t *w;
	int run, st;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_require_watch();
	tl_path_of(dir, "tests/solibs");
	for (run = 0; run < 5; run++) {
		tl_assert_err(tnfctl_watch_exec(self_exe, argv, NULL, TNFCTL_WATCH_DL, &w, &pid),
			      TNFCTL_ERR_NONE);
		tl_track_pid(pid);
		for (;;) {
			if (tnfctl_watch_next(w, &ev, tl.timeout_ms) != 1)
				fail_msg("run %d: no DLOPEN", run);
			if (ev.kind == TNFCTL_WATCH_DLOPEN || ev.kind == TNFCTL_WATCH_END)
				break;
		}
		if (ev.kind != TNFCTL_WATCH_DLOPEN)
			fail_msg("run %d: no DLOPEN event", run);
		if (strcmp(ev.path, "./libtl_plug.so"))
			fail_msg("run %d: DLOPEN path \"%s\", expected \"./libtl_plug.so\"", run,
				 ev.path);
		tnfctl_watch_close(w);
		st = tl_reap(pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

/* Reads all of @path (malloc'd, NUL-terminated); *@len its size. */
static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	assert_non_null(fp);
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = (n + 65536 + 1) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = fread(buf + n, 1, cap - n - 1, fp);
		if (!r)
			break;
		n += r;
	}
	fclose(fp);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* tnfctl-follow [@opt] -o OUT -- the workload execing @s; returns its output. */
static char *follow_run(const char *opt, const struct spec *s)
{
	char out[] = "/tmp/tl_exec_follow.XXXXXX", *text;
	char *argv[10];
	int fd = mkstemp(out), n = 0, st;
	char **env;
	size_t len;
	pid_t pid;

	assert_true(fd >= 0);
	close(fd);
	argv[n++] = tl.follow;
	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "--";
	argv[n++] = self_exe;
	argv[n++] = "--wl";
	argv[n++] = "exec";
	argv[n++] = (char *)s->file;
	argv[n] = NULL;
	env = tl_env_build(NULL);
	pid = tl_spawn(argv, env, -1, NULL);
	free(env);
	st = tl_reap(pid);
	assert_true(WIFEXITED(st));
	text = slurp(out, &len);
	unlink(out);
	return text;
}

/*
 * The EXEC line's words (after "PATH: ", up to the root's EXIT line) given
 * back by sh are exactly the arguments passed.
 */
static void check_sh_roundtrip(const char *text, const struct spec *s)
{
	char want_hdr[PATH_MAX + 16], res[] = "/tmp/tl_exec_sh.XXXXXX", *words, *got, *e;
	char *argv[] = {
		"/bin/sh", "-c", "eval \"set -- $1\"; for a; do printf '%s\\0' \"$a\"; done",
		"sh",	   NULL, NULL};
	const char *b;
	size_t len, off = 0;
	int fd, st, i;
	pid_t pid;

	snprintf(want_hdr, sizeof(want_hdr), " EXEC     %s: ", s->path);
	b = strstr(text, want_hdr);
	if (!b)
		fail_msg("no EXEC line of %s in:\n%.2000s", s->path, text);
	b += strlen(want_hdr);
	e = strstr(b, " EXIT     status 0");
	assert_non_null(e);
	while (e > b && e[-1] != '\n')
		e--; /* the start of the EXIT line */
	assert_true(e > b);
	words = strndup(b, e - 1 - b); /* without the EXEC line's own newline */
	assert_non_null(words);
	argv[4] = words;
	fd = mkstemp(res);
	assert_true(fd >= 0);
	pid = tl_spawn(argv, NULL, fd, NULL);
	close(fd);
	st = tl_reap(pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	got = slurp(res, &len);
	unlink(res);
	for (i = 0; i < s->argc; i++) {
		if (off >= len || strcmp(got + off, s->argv[i]))
			fail_msg("argument %d did not come back from sh (got \"%.40s\")", i,
				 off < len ? got + off : "");
		off += strlen(s->argv[i]) + 1;
	}
	assert_int_equal(off, len);
	free(got);
	free(words);
}

/* tnfctl-follow in both modes: argv as sh words that round-trip, EXECFAIL lines. */
static void test_follow_prints_argv(void **state)
{
	static const char *const opts[] = {NULL, "--no-stop"};
	char path[PATH_MAX], line[PATH_MAX + 64], *text;
	struct spec s, f;
	int m, modes = 2;

	(void)state;
	tl_require_root();
	if (!tl_watch_supported())
		modes = 1;
	spec_write(&s, "/", "/bin/true", hard_argv());
	fail_setup(0, path, &f);
	for (m = 0; m < modes; m++) {
		text = follow_run(opts[m], &s);
		check_sh_roundtrip(text, &s);
		free(text);
		text = follow_run(opts[m], &f);
		snprintf(line, sizeof(line), " EXECFAIL %s: ENOENT (No such file or directory)\n",
			 path);
		if (!strstr(text, line))
			fail_msg("%s: no \"%s\" line in:\n%s", opts[m] ? opts[m] : "stopping mode",
				 line, text);
		free(text);
	}
	unlink(s.file);
	unlink(f.file);
	tl_watch_half_end();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv_roundtrip_stop, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_argv_roundtrip_watch, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_argv_truncated, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_exec_info_size, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_exec_failed_stop, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_exec_failed_needs_flag, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_exec_failed_child_inherits, tl_setup,
						tl_teardown),
		cmocka_unit_test_setup_teardown(test_exec_failed_watch, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_dlopen_name_fresh_page, tl_setup, tl_teardown),
		cmocka_unit_test_setup_teardown(test_follow_prints_argv, tl_setup, tl_teardown),
		TL_FINAL_TEST,
	};

	if (argc > 2 && !strcmp(argv[1], "--wl"))
		return workload(argc - 2, argv + 2);
	if (tl_self_exe(self_exe, sizeof(self_exe)))
		return 1;
	return tl_run(tests);
}
