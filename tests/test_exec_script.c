// SPDX-License-Identifier: BSD-2-Clause
/*
 * An interpreted file (#! script) is reported as execve was given it, as
 * strace reports it: argv {"./s", "a", "b"}, not the kernel's rewritten
 * {"/bin/sh", "./s", "a", "b"}, with the interpreter and its #! argument
 * apart (TNFCTL_EXEC_INTERP, interp_argv), in the stopping API and the
 * watch; nested #! lines; and a plain program whose argv[1] happens to be
 * its own path is left alone.
 *
 * The workload is this binary run as `test_exec_script --wl DIR PATH
 * ARGS...`: it changes to DIR and execs PATH with argv {PATH, ARGS...}.
 */
#include <stdbool.h>
#include <sys/stat.h>
#include "testlib.h"

static char self_exe[PATH_MAX];
static char dir[PATH_MAX];

static int workload(int argc, char **argv)
{
	if (argc < 2 || chdir(argv[0]))
		return 2;
	execv(argv[1], argv + 1);
	_exit(100 + errno);
}

static void write_script(const char *name, const char *text)
{
	char path[PATH_MAX + 8];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, text, strlen(text)), 0);
	close(fd);
}

static int setup(void **state)
{
	char s3[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "/tmp/tl_script.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	write_script("s1", "#!/bin/sh\nexit 0\n");
	write_script("s2", "#!/bin/sh -e\nexit 0\n");
	snprintf(s3, sizeof(s3), "#!%s/s2\n", dir); /* nested: s2 is itself a script */
	write_script("s3", s3);
	return tl_setup(state);
}

static int teardown(void **state)
{
	char path[PATH_MAX + 8];
	const char *n[] = {"s1", "s2", "s3"};
	unsigned i;

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, n[i]);
		unlink(path);
	}
	rmdir(dir);
	return tl_teardown(state);
}

/* What must be reported for `exec PATH ARGS` from dir. */
struct want {
	const char *const *argv;   /* execve's */
	const char *const *interp; /* NULL: not interpreted */
};

static void check(const struct tnfctl_exec_info *x, const char *path, const struct want *w)
{
	int i;

	assert_string_equal(x->path, path);
	for (i = 0; w->argv[i]; i++) {
		assert_true(i < x->argc);
		assert_string_equal(x->argv[i], w->argv[i]);
	}
	assert_int_equal(x->argc, i);
	assert_null(x->argv[i]);
	assert_non_null(x->interp_argv);
	if (!w->interp) {
		assert_int_equal(x->flags & TNFCTL_EXEC_INTERP, 0);
		assert_int_equal(x->interp_argc, 0);
		assert_null(x->interp_argv[0]);
		return;
	}
	assert_true(x->flags & TNFCTL_EXEC_INTERP);
	for (i = 0; w->interp[i]; i++) {
		assert_true(i < x->interp_argc);
		assert_string_equal(x->interp_argv[i], w->interp[i]);
	}
	assert_int_equal(x->interp_argc, i);
	assert_null(x->interp_argv[i]);
}

/* Stopping API: the EXEC of PATH by the workload, checked against @w. */
static void stop_case(const char *path, char *const *args, const struct want *w)
{
	char *argv[16] = {self_exe, "--wl", dir, (char *)path};
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	tnfctl_handle_t *h;
	pid_t pid;
	int i;

	for (i = 0; args[i]; i++)
		argv[4 + i] = args[i];
	tl_assert_err(
		tnfctl_exec_open_flags(self_exe, argv, NULL, NULL, NULL, TNFCTL_OPEN_NOPROBES, &h),
		TNFCTL_ERR_NONE);
	tl_track_handle(h);
	pid = tl_targ_pid(h);
	tl_track_pid(pid);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_assert_err(tnfctl_event_exec_get(h, &x), TNFCTL_ERR_NONE);
	check(&x, path, w);
	tl_close(h, TNFCTL_TARG_KILL);
	tl_assert_exits(pid, "target after close KILL");
}

/* Watch: the same through tnfctl_watch_read and tnfctl_watch_event_exec. */
static void watch_case(const char *path, char *const *args, const struct want *w)
{
	char *argv[16] = {self_exe, "--wl", dir, (char *)path};
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	struct tnfctl_watch_data ev = {.sz = sizeof(ev)};
	tnfctl_watch_t *wt;
	int i, n, execs = 0;
	pid_t pid;

	for (i = 0; args[i]; i++)
		argv[4 + i] = args[i];
	tl_assert_err(tnfctl_watch_exec(self_exe, argv, NULL, 0, &wt, &pid), TNFCTL_ERR_NONE);
	tl_track_pid(pid);
	while ((n = tnfctl_watch_read(wt, &ev, tl.timeout_ms)) == 1 &&
	       ev.kind != TNFCTL_WATCH_END) {
		if (ev.kind != TNFCTL_WATCH_EXEC || ++execs != 2)
			continue;
		assert_string_equal(ev.argv0, w->argv[0]);
		tl_assert_err(tnfctl_watch_event_exec(wt, &x), TNFCTL_ERR_NONE);
		check(&x, path, w);
	}
	assert_int_equal(n, 1);
	assert_int_equal(execs, 2);
	tnfctl_watch_close(wt);
	assert_int_equal(WEXITSTATUS(tl_reap(pid)), 0);
}

static char *const ab[] = {"a", "b c", NULL};
static const char *const s1_argv[] = {"./s1", "a", "b c", NULL};
static const char *const s1_interp[] = {"/bin/sh", NULL};
static const struct want s1 = {s1_argv, s1_interp};

static void test_script_stop(void **state)
{
	(void)state;
	tl_require_root();
	stop_case("./s1", ab, &s1);
}

static void test_script_watch(void **state)
{
	(void)state;
	tl_require_root();
	tl_require_watch();
	watch_case("./s1", ab, &s1);
}

/* "#!/bin/sh -e": the #! line's argument goes with the interpreter. */
static const char *const s2_argv[] = {"./s2", "a", "b c", NULL};
static const char *const s2_interp[] = {"/bin/sh", "-e", NULL};
static const struct want s2 = {s2_argv, s2_interp};

static void test_script_arg_stop(void **state)
{
	(void)state;
	tl_require_root();
	stop_case("./s2", ab, &s2);
}

static void test_script_arg_watch(void **state)
{
	(void)state;
	tl_require_root();
	tl_require_watch();
	watch_case("./s2", ab, &s2);
}

/* s3's interpreter is the script s2: both levels, outermost interpreter first. */
static void nested_want(struct want *w, const char **interp, char *s2path)
{
	static const char *const argv[] = {"./s3", "a", "b c", NULL};

	snprintf(s2path, PATH_MAX + 8, "%s/s2", dir);
	interp[0] = "/bin/sh";
	interp[1] = "-e";
	interp[2] = s2path;
	interp[3] = NULL;
	w->argv = argv;
	w->interp = interp;
}

static void test_script_nested_stop(void **state)
{
	static char s2path[PATH_MAX + 8];
	const char *interp[4];
	struct want w;

	(void)state;
	tl_require_root();
	nested_want(&w, interp, s2path);
	stop_case("./s3", ab, &w);
}

static void test_script_nested_watch(void **state)
{
	static char s2path[PATH_MAX + 8];
	const char *interp[4];
	struct want w;

	(void)state;
	tl_require_root();
	tl_require_watch();
	nested_want(&w, interp, s2path);
	watch_case("./s3", ab, &w);
}

/* A plain program whose argv[1] is its own path: not an interpreter's vector. */
static char *const echo_args[] = {"/bin/echo", NULL};
static const char *const echo_argv[] = {"/bin/echo", "/bin/echo", NULL};
static const struct want echo = {echo_argv, NULL};

static void test_plain_stop(void **state)
{
	(void)state;
	tl_require_root();
	stop_case("/bin/echo", echo_args, &echo);
}

static void test_plain_watch(void **state)
{
	(void)state;
	tl_require_root();
	tl_require_watch();
	watch_case("/bin/echo", echo_args, &echo);
}

/*
 * tnfctl-follow's NDJSON, both modes: a script's EXEC line gives execve's
 * argv and "interp"; ROOT's path is the name exec'd (sh found on $PATH:
 * "/.../sh"), as an EXEC's is, not the file it resolves to (dash).
 */
static void test_follow_ndjson_script(void **state)
{
	static const char *const modes[] = {"--no-stop", "--format=ndjson"};
	char out[PATH_MAX + 16], cmd[PATH_MAX + 64], buf[16384], **env;
	size_t m;
	pid_t pid;
	int st;

	(void)state;
	tl_require_root();
	snprintf(out, sizeof(out), "%s/out.ndjson", dir);
	snprintf(cmd, sizeof(cmd), "cd %s && ./s2 a", dir);
	env = tl_env_build(NULL);
	for (m = tl_watch_supported() ? 0 : 1; m < 2; m++) {
		char *argv[] = {tl.follow,
				(char *)modes[m],
				"--format=ndjson",
				"-o",
				out,
				"--",
				"sh",
				"-c",
				cmd,
				NULL};

		pid = tl_spawn(argv, env, -1, NULL);
		st = tl_reap(pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_true(tl_read_file(out, buf, sizeof(buf)) > 0);
		if (!strstr(buf, "\"event\":\"ROOT\"") || !strstr(buf, "/sh\"}\n") ||
		    strstr(buf, "dash"))
			fail_msg("%s: ROOT's path is not the name exec'd:\n%s", modes[m], buf);
		if (!strstr(buf, "\"path\":\"./s2\",\"argv\":[\"./s2\",\"a\"]") ||
		    !strstr(buf, "\"interp\":[\"/bin/sh\",\"-e\"]"))
			fail_msg("%s: the script's EXEC is not execve's:\n%s", modes[m], buf);
		unlink(out);
	}
	free(env);
	tl_watch_half_end();
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(test_script_stop),	      T(test_script_watch),
		T(test_script_arg_stop),      T(test_script_arg_watch),
		T(test_script_nested_stop),   T(test_script_nested_watch),
		T(test_plain_stop),	      T(test_plain_watch),
		T(test_follow_ndjson_script), TL_FINAL_TEST,
	};

	if (argc > 2 && !strcmp(argv[1], "--wl"))
		return workload(argc - 2, argv + 2);
	if (tl_self_exe(self_exe, sizeof(self_exe)))
		return 1;
	return tl_run(tests);
}
