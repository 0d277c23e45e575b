// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl_continue: each event kind and what tnfctl_event_info_get reports
 * for it (FORK with and without a child handle, EXEC, EXIT, TARGGONE,
 * DLOPEN, DLCLOSE), and what a handle is good for afterwards.
 */
#include "testlib.h"

/* Parses "<word> <pid> status <s>" replies. */
static void parse_status_reply(const char *line, pid_t *pid, int *status)
{
	char word[32];

	if (sscanf(line, "%31s %d status %d", word, pid, status) != 3)
		fail_msg("cannot parse reply \"%s\"", line);
}

static int is_true_path(const char *path)
{
	return !strcmp(path, "/bin/true") || !strcmp(path, "/usr/bin/true");
}

/* FORK with a NULL child handle: the child runs free and untraced. */
static void test_fork_without_child_handle(void **state)
{
	tnfctl_event_info_t info;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	pid_t child = 0, cpid, fork_child;
	long tracer = -1;
	int status = -1;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "fork 5");
	tl_send(p, "exit 9");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_info(h, &info);
	assert_int_equal(info.event, TNFCTL_EVENT_FORK);
	assert_int_equal(info.pid, p->pid);
	fork_child = info.child_pid;
	assert_true(fork_child > 0);
	tl_assert_all_stopped(p->pid, "parent at FORK");

	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 9);
	/* the child ran to its exit while nobody held it */
	if (sscanf(tl_expect(p, "child "), "child %d tracer %ld", &child, &tracer) != 2)
		fail_msg("bad child line \"%s\"", p->line);
	parse_status_reply(tl_expect(p, "forked "), &cpid, &status);
	assert_int_equal(child, cpid);
	assert_int_equal(child, fork_child);
	assert_int_equal(status, 5);
	if (tracer != 0)
		fail_msg("the free-running child was traced (TracerPid %ld)", tracer);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * @rounds times `@cmd @code` in one target: a CLONE_UNTRACED child's FORK
 * comes with a handle that follows the child to its EXIT (status @code).
 */
static void untraced_child_rounds(const char *cmd, int code, int rounds)
{
	tnfctl_handle_t *h, *child;
	tnfctl_event_info_t info;
	char line[64];
	struct tl_proc *p;
	pid_t rpid;
	int status, round;

	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	snprintf(line, sizeof(line), "%s %d", cmd, code);
	for (round = 0; round < rounds; round++) {
		child = NULL;
		tl_send(p, line);
		tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
		assert_non_null(child);
		tl_info(h, &info);
		assert_int_equal(tl_targ_pid(child), info.child_pid);
		tl_expect_event(child, NULL, TNFCTL_EVENT_EXIT);
		tl_info(child, &info);
		assert_int_equal(info.exit_status, code);
		tl_close(child, TNFCTL_TARG_DEFAULT);
	}
	tl_send(p, "exit 9");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	for (round = 0; round < rounds; round++) {
		parse_status_reply(tl_expect(p, "uforked "), &rpid, &status);
		assert_int_equal(status, code);
	}
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * A child made with CLONE_UNTRACED (LeakSanitizer's stop-the-world task) is
 * not attached by the ptrace fork options: its FORK still comes, with a
 * handle that follows it to its EXIT (it waited for a stop that never came).
 */
static void test_fork_clone_untraced_child_handle(void **state)
{
	(void)state;
	untraced_child_rounds("untraced_fork", 4, 1);
}

/*
 * The same, but the child exits at once: the tracer seizes it and sees it
 * exit before the FORK is reported, or (a slow tracer: valgrind, a loaded
 * machine) finds a zombie it cannot seize.  Either way its handle reports
 * its EXIT, with its status, from the exit record.  Natively most rounds
 * take the first way; under memcheck (CI) they take the second.
 */
static void test_fork_clone_untraced_child_exits_first(void **state)
{
	(void)state;
	untraced_child_rounds("untraced_fork_exit", 6, 10);
}

/* FORK with a child handle: the child is stopped and controlled to its EXIT. */
static void test_fork_with_child_handle(void **state)
{
	tnfctl_handle_t *h, *child = NULL;
	tnfctl_event_info_t info;
	struct tl_proc *p;
	pid_t cpid, rpid;
	long tracer;
	int status;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "fork 5");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	tl_info(h, &info);
	cpid = info.child_pid;
	assert_true(cpid > 0);
	assert_int_equal(tl_targ_pid(child), cpid);
	tl_assert_all_stopped(p->pid, "parent at FORK");
	tl_assert_all_stopped(cpid, "child at FORK");
	assert_true(tl_tracer_pid(cpid) > 0);
	tl_expect_silence(p, "the stopped child must not have run");

	tl_expect_event(child, NULL, TNFCTL_EVENT_EXIT);
	tl_info(child, &info);
	assert_int_equal(info.pid, cpid);
	assert_int_equal(info.exit_status, 5);
	if (sscanf(tl_expect(p, "child "), "child %d tracer %ld", &rpid, &tracer) != 2)
		fail_msg("bad child line \"%s\"", p->line);
	assert_int_equal(rpid, cpid);
	if (tracer <= 0)
		fail_msg("the child under a child handle was not traced (TracerPid %ld)", tracer);
	tl_close(child, TNFCTL_TARG_DEFAULT);

	tl_send(p, "exit 9");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	parse_status_reply(tl_expect(p, "forked "), &rpid, &status);
	assert_int_equal(rpid, cpid);
	assert_int_equal(status, 5);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* A child handle's DEFAULT close resumes the child, untraced. */
static void test_child_handle_default_close_resumes(void **state)
{
	tnfctl_handle_t *h, *child = NULL;
	struct tl_proc *p;
	pid_t cpid, rpid;
	long tracer;
	int status;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "fork 6");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	cpid = tl_targ_pid(child);
	tl_close(child, TNFCTL_TARG_DEFAULT);
	/* the child now runs on its own: it reports and exits 6 */
	if (sscanf(tl_expect(p, "child "), "child %d tracer %ld", &rpid, &tracer) != 2)
		fail_msg("bad child line \"%s\"", p->line);
	assert_int_equal(rpid, cpid);
	assert_int_equal(tracer, 0);
	tl_send(p, "exit 1");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	parse_status_reply(tl_expect(p, "forked "), &rpid, &status);
	assert_int_equal(status, 6);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* EXEC: path reported, handle then only good for close; DEFAULT lets an attached target run. */
static void test_exec_event(void **state)
{
	tnfctl_event_info_t info;
	tnfctl_event_t evt;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int st;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "exec /bin/true");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_info(h, &info);
	assert_int_equal(info.event, TNFCTL_EVENT_EXEC);
	assert_int_equal(info.pid, p->pid);
	if (!is_true_path(info.path))
		fail_msg("EXEC path \"%s\", expected /bin/true", info.path);
	tl_assert_all_stopped(p->pid, "at EXEC");
	{
		char exe[PATH_MAX], link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", p->pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		if (!is_true_path(exe))
			fail_msg("at EXEC the process runs \"%s\", not the new image", exe);
		if (tl_maps_has(p->pid, "libc.so.6"))
			fail_msg("at EXEC the new image has already mapped libc (ld.so ran)");
	}
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	st = tl_reap(p->pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("/bin/true after EXEC + close DEFAULT: wait status 0x%x", st);
}

/* EXEC on an exec_open'd target, DEFAULT close kills it. */
static void test_exec_event_exec_open_default_kills(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	pid = p->pid;
	tl_send(p, "exec /bin/sleep 1000");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_expect(p, "ready");
	tl_info(h, &info);
	assert_string_equal(info.path, "/bin/sleep");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_exits(pid, "exec_open'd target after EXEC and close DEFAULT");
}

/* EXIT with the status passed to exit(). */
static void test_exit_event_status(void **state)
{
	tnfctl_event_info_t info;
	tnfctl_event_t evt;
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_assert_err(tnfctl_event_info_get(h, &info), TNFCTL_ERR_BADARG);
	tl_send(p, "exit 42");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.event, TNFCTL_EVENT_EXIT);
	assert_int_equal(info.pid, p->pid);
	assert_int_equal(info.exit_status, 42);
	assert_int_equal(info.term_signal, 0);
	assert_true(info.time_ns > 0);
	tl_assert_exits(p->pid, "target after EXIT");
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(WEXITSTATUS(tl_reap(p->pid)), 42);
}

/* exit(0) is EXIT with status 0, not TARGGONE. */
static void test_exit_event_status_zero(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 0);
	assert_int_equal(info.term_signal, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* A target that kills itself with a signal: TARGGONE with that signal. */
static void test_targgone_event_signal(void **state)
{
	tnfctl_event_info_t info;
	tnfctl_event_t evt;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int st;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "kill 15");
	tl_expect_event(h, NULL, TNFCTL_EVENT_TARGGONE);
	tl_info(h, &info);
	assert_int_equal(info.event, TNFCTL_EVENT_TARGGONE);
	assert_int_equal(info.term_signal, SIGTERM);
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	st = tl_reap(p->pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
}

/* DLOPEN and DLCLOSE report the object; it is mapped at DLOPEN and gone after DLCLOSE. */
static void test_dlopen_dlclose_events(void **state)
{
	tnfctl_event_info_t info;
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	assert_false(tl_maps_has(p->pid, "libz.so"));
	tl_send(p, "dlopen libz.so.1");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_info(h, &info);
	assert_int_equal(info.event, TNFCTL_EVENT_DLOPEN);
	assert_int_equal(info.pid, p->pid);
	if (!strstr(info.path, "libz.so.1"))
		fail_msg("DLOPEN path \"%s\" does not name libz.so.1", info.path);
	if (!tl_maps_has(p->pid, "libz.so"))
		fail_msg("libz is not mapped at the DLOPEN event");
	tl_assert_all_stopped(p->pid, "at DLOPEN");
	tl_expect_silence(p, "dlopen() must not have returned yet");

	tl_send(p, "dlclose");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
	tl_expect(p, "dlopen ok");
	tl_info(h, &info);
	assert_int_equal(info.event, TNFCTL_EVENT_DLCLOSE);
	if (!strstr(info.path, "libz.so.1"))
		fail_msg("DLCLOSE path \"%s\" does not name libz.so.1", info.path);
	if (tl_maps_has(p->pid, "libz.so"))
		fail_msg("libz is still mapped at the DLCLOSE event");
	tl_assert_all_stopped(p->pid, "at DLCLOSE");

	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "dlclose 0");
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * The rule (issue 31): DLOPEN is a dlopen that added objects, once (libbpf
 * brings libelf and libz: one event), named as passed; DLCLOSE is the
 * dlclose that removed them, once.  dlopen(NULL), a dlopen of a loaded
 * object (libbpf again, libc) and a dlclose that only drops a reference are
 * no event: the first event after the unload is the EXIT.
 */
static void test_dlopen_rule_sequence(void **state)
{
	static const char *const cmds[] = {
		"dlopen NULL",
		"dlopen libbpf.so.1",
		"dlopen libbpf.so.1",
		"dlopen libc.so.6",
		"dlclose",
		"dlclose",
		"dlclose",
		"dlclose",
	};
	tnfctl_event_info_t info;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	size_t i;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	if (tl_maps_has(p->pid, "libbpf.so") || tl_maps_has(p->pid, "libz.so"))
		fail_msg("the target maps libbpf or libz before its dlopen");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		tl_send(p, "%s", cmds[i]);
	tl_send(p, "exit 0");

	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_info(h, &info);
	if (strcmp(info.path, "libbpf.so.1"))
		fail_msg("DLOPEN path \"%s\", expected libbpf.so.1 as passed", info.path);
	if (!tl_maps_has(p->pid, "libbpf.so") || !tl_maps_has(p->pid, "libz.so"))
		fail_msg("libbpf and its new dependency libz are not mapped at DLOPEN");
	tl_expect(p, "dlopen ok"); /* dlopen(NULL), before: no event */
	tl_expect_silence(p, "stopped in the first dlopen of libbpf");

	tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
	tl_info(h, &info);
	if (!strstr(info.path, "libbpf.so.1"))
		fail_msg("DLCLOSE path \"%s\" does not name libbpf.so.1", info.path);
	if (tl_maps_has(p->pid, "libbpf.so"))
		fail_msg("libbpf is still mapped at the DLCLOSE event");
	for (i = 0; i < 3; i++)
		tl_expect(p, "dlopen ok");
	tl_expect(p, "dlclose 0"); /* libc, then libbpf once: references only */
	tl_expect(p, "dlclose 0");
	tl_expect_silence(p, "stopped in the dlclose that unloads libbpf");

	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "dlclose 0");
	tl_expect(p, "dlclose 0"); /* dlclose of the dlopen(NULL) handle: no event */
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * An object libc loads itself (iconv_open's gconv module, as NSS modules):
 * a link-map change with no dlopen call, a DLOPEN named by the object added
 * (the watch says the same: test_watch's test_dlopen_by_libc).
 */
static void test_dlopen_by_libc(void **state)
{
	tnfctl_event_info_t info;
	tnfctl_event_t evt;
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	/* its first RT_CONSISTENT seen: the map's tail is known from there */
	tl_send(p, "dlopen libz.so.1");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_send(p, "iconv EBCDIC-US");
	tl_send(p, "exit 0");
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	if (evt != TNFCTL_EVENT_DLOPEN) {
		tl_expect(p, "dlopen ok");
		tl_expect(p, "iconv fail");
		print_message("skipped: iconv_open(EBCDIC-US) fails, no gconv module\n");
		tl_close(h, TNFCTL_TARG_DEFAULT);
		skip();
	}
	tl_info(h, &info);
	if (!strstr(info.path, "/EBCDIC-US.so"))
		fail_msg("DLOPEN path \"%s\" is not the gconv module EBCDIC-US.so", info.path);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "dlopen ok");
	tl_expect(p, "iconv ok");
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* A dlopen of the demo plugin on an exec_open'd target; the plugin's path is reported. */
static void test_dlopen_event_full_path(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_event_info_t info;
	char plugin[PATH_MAX];
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_path_of(plugin, "demo/libtnfdemo_plugin.so");
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_send(p, "dlopen %s", plugin);
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_info(h, &info);
	if (!strstr(info.path, "libtnfdemo_plugin.so"))
		fail_msg("DLOPEN path \"%s\", expected %s", info.path, plugin);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "ready");
	tl_expect(p, "dlopen ok");
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_fork_without_child_handle),
		TL_TEST(test_fork_with_child_handle),
		TL_TEST(test_fork_clone_untraced_child_handle),
		TL_TEST(test_fork_clone_untraced_child_exits_first),
		TL_TEST(test_child_handle_default_close_resumes),
		TL_TEST(test_exec_event),
		TL_TEST(test_exec_event_exec_open_default_kills),
		TL_TEST(test_exit_event_status),
		TL_TEST(test_exit_event_status_zero),
		TL_TEST(test_targgone_event_signal),
		TL_TEST(test_dlopen_dlclose_events),
		TL_TEST(test_dlopen_event_full_path),
		TL_TEST(test_dlopen_rule_sequence),
		TL_TEST(test_dlopen_by_libc),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
