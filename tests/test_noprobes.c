// SPDX-License-Identifier: BSD-2-Clause
/*
 * TNFCTL_OPEN_NOPROBES and TNFCTL_OPEN_FOREGROUND (Linux extensions of
 * tnfctl_exec_open_flags / tnfctl_pid_open_flags): processes without
 * libtnfprobe (static, no preload, env -i) controlled with every event,
 * the environment left alone, child handles, the handle going on after
 * EXEC and the re-open after EXEC in the same mode, buffer calls refused with NOLIBTNFPROBE
 * (probe calls too without a link map: USDT probes are all such a handle has), and
 * exec failures that say why (errno).
 */
#include "testlib.h"

#define NP (TNFCTL_OPEN_NOPROBES)

/* exec_open_flags of @prog as a target (`prog CMDFD REPLYFD`), tracked. */
static tnfctl_errcode_t np_exec_target(struct tl_proc *p, const char *prog, char *const *envp,
				       unsigned int flags, tnfctl_handle_t **h)
{
	char cfd[16], rfd[16];
	char *argv[] = {(char *)prog, cfd, rfd, NULL};
	tnfctl_errcode_t err;

	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	tl_set_cloexec(p->t_cmd_r, 0);
	tl_set_cloexec(p->t_reply_w, 0);
	err = tnfctl_exec_open_flags(prog, argv, envp, NULL, NULL, flags, h);
	tl_proc_handed_over(p);
	if (err != TNFCTL_ERR_NONE)
		return err;
	tl_track_handle(*h);
	tl_proc_set_pid(p, tl_targ_pid(*h));
	return err;
}

/* Whether /proc/@pid/environ has a variable starting with @prefix. */
static int environ_has(pid_t pid, const char *prefix)
{
	char path[64], buf[1 << 16];
	int n, off;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	n = tl_read_file(path, buf, sizeof(buf));
	for (off = 0; n > 0 && off < n; off += strlen(buf + off) + 1)
		if (!strncmp(buf + off, prefix, strlen(prefix)))
			return 1;
	return 0;
}

static tnfctl_errcode_t np_op(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)h;
	(void)p;
	(void)cd;
	return TNFCTL_ERR_NONE;
}

/*
 * The probe layer of a NOPROBES handle: a buffer is NOLIBTNFPROBE; the
 * probe calls are @probes_err: NOLIBTNFPROBE with no link map yet (a
 * dynamic program stopped before ld.so ran), else they go over its USDT
 * probes (NONE; a static program's executable has none here:
 * test_usdt_control has the rest); attrs still answer.
 */
static void assert_probe_layer(tnfctl_handle_t *h, pid_t pid, tnfctl_errcode_t probes_err)
{
	tnfctl_trace_attrs_t attrs;

	tl_assert_err(tnfctl_probe_apply(h, np_op, NULL), probes_err);
	tl_assert_err(tnfctl_check_libs(h), probes_err);
	tl_assert_err(tnfctl_buffer_alloc(h, "/tmp/np-never.tnf", 65536), TNFCTL_ERR_NOLIBTNFPROBE);
	tl_assert_err(tnfctl_trace_attrs_get(h, &attrs), TNFCTL_ERR_NONE);
	assert_int_equal(attrs.targ_pid, pid);
	assert_int_equal(attrs.trace_buf_state, TNFCTL_BUF_NONE);
	assert_null(attrs.trace_file_name);
}

/*
 * A static program: the Solaris call refuses it (NOTDYNAMIC); with NOPROBES
 * it is stopped at its first instruction, and its FORK (with a child handle
 * in the same mode), the child's EXIT and its own EXIT are reported.
 */
static void test_noprobes_static_exec(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_handle_t *h, *child;
	tnfctl_event_info_t info;
	char line[64];

	(void)state;
	tl_require_root();
	tl_assert_err(np_exec_target(tl_proc_new(), tl.static_prog, NULL, 0, &h),
		      TNFCTL_ERR_NOTDYNAMIC);
	tl_assert_err(np_exec_target(p, tl.static_prog, NULL, NP, &h), TNFCTL_ERR_NONE);
	tl_assert_all_stopped(p->pid, "static target at exec_open_flags' return");
	tl_expect_silence(p, "main() must not have run at exec_open_flags' return");
	assert_probe_layer(h, p->pid, TNFCTL_ERR_NONE);

	tl_send(p, "fork 3");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	tl_info(h, &info);
	assert_probe_layer(child, info.child_pid, TNFCTL_ERR_NONE);
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXIT);
	tl_info(child, &info);
	assert_int_equal(info.exit_status, 3);
	tl_close(child, TNFCTL_TARG_DEFAULT);
	tl_send(p, "exit 5");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 5);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect(p, "ready");
	tl_expect(p, "child");
	snprintf(line, sizeof(line), "forked");
	tl_expect(p, line);
	if (!strstr(p->line, "status 3"))
		fail_msg("static target's child: \"%s\", expected status 3", p->line);
}

/*
 * A dynamic program with no preload: its environment is exactly the
 * caller's (no LD_PRELOAD added), libtnfprobe is not mapped, and dlopen,
 * dlclose, exec (re-opened with pid_open_flags) and exit are events.
 */
static void test_noprobes_env_unchanged_dl_exec(void **state)
{
	struct tl_proc *p = tl_proc_new();
	int cfd = p->t_cmd_r, rfd = p->t_reply_w; /* their numbers in the target */
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	char cmd[PATH_MAX + 64];

	(void)state;
	tl_require_root();
	unsetenv("LD_PRELOAD");
	tl_assert_err(np_exec_target(p, tl.target, NULL, NP | TNFCTL_OPEN_FOREGROUND, &h),
		      TNFCTL_ERR_NONE);
	tl_assert_all_stopped(p->pid, "at exec_open_flags' return");
	if (environ_has(p->pid, "LD_PRELOAD="))
		fail_msg("NOPROBES added LD_PRELOAD to the target's environment");
	assert_int_equal(getpgid(p->pid), getpgrp()); /* FOREGROUND: our group */
	assert_probe_layer(h, p->pid, TNFCTL_ERR_NOLIBTNFPROBE);

	tl_send(p, "dlopen libz.so.1");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_info(h, &info);
	if (!strstr(info.path, "libz.so.1"))
		fail_msg("DLOPEN path \"%s\" does not name libz.so.1", info.path);
	if (tl_maps_has(p->pid, "libtnfprobe"))
		fail_msg("libtnfprobe is mapped in a NOPROBES target");
	tl_send(p, "dlclose");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
	tl_expect(p, "ready");
	tl_expect(p, "dlopen ok");

	/* EXEC of a static program, then the documented re-open in the same mode */
	snprintf(cmd, sizeof(cmd), "exec %s %d %d", tl.static_prog, cfd, rfd);
	tl_send(p, "%s", cmd);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_expect(p, "dlclose 0");
	tl_close(h, TNFCTL_TARG_SUSPEND);
	/* (a Solaris pid_open here would be NOTDYNAMIC, and resume it: test_open) */
	tl_assert_err(tnfctl_pid_open_flags(p->pid, NP, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_all_stopped(p->pid, "re-opened after EXEC");
	tl_expect_silence(p, "the static image must not have run before the continue");
	tl_send(p, "exit 6");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 6);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect(p, "ready");
}

/*
 * NOPROBES (Linux): the handle goes on after an EXEC, with no close and
 * re-open: the new image's DLOPEN, an exec from a thread, a fork child's
 * exec and the EXIT all come on the same handles, and the target is never
 * in a group-stop (its parent would see one).  A Solaris handle still
 * refuses to continue after EXEC (BADARG: its probes were the old image's).
 */
static void test_noprobes_handle_goes_on_after_exec(void **state)
{
	struct tl_proc *p = tl_proc_new(), *q = tl_proc_new();
	tnfctl_handle_t *h, *child;
	tnfctl_event_info_t info;
	tnfctl_event_t evt;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_assert_err(np_exec_target(p, tl.target, NULL, NP, &h), TNFCTL_ERR_NONE);
	pid = p->pid;
	tl_send(p, "execself");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_assert_all_stopped(pid, "at the EXEC");
	tl_send(p, "dlopen libz.so.1");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_info(h, &info);
	if (!strstr(info.path, "libz.so.1"))
		fail_msg("DLOPEN in the new image: path \"%s\", expected libz.so.1", info.path);
	assert_int_equal(info.pid, pid);
	tl_send(p, "thread_execself");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_assert_all_stopped(pid, "at a thread's EXEC");
	tl_send(p, "fork_exec /bin/true");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXEC);
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXIT);
	tl_info(child, &info);
	assert_int_equal(info.exit_status, 0);
	tl_close(child, TNFCTL_TARG_DEFAULT);
	tl_send(p, "exit 5");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 5);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect(p, "ready");
	tl_expect(p, "ready");
	tl_expect(p, "dlopen ok");
	tl_expect(p, "ready");
	tl_expect(p, "forked");
	if (!strstr(p->line, "status 0"))
		fail_msg("the child that exec'd /bin/true: \"%s\", expected status 0", p->line);

	/* The Solaris protocol, unchanged */
	tl_assert_err(tl_exec_open_target(q, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_send(q, "execself");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_BADARG);
	tl_assert_all_stopped(q->pid, "a Solaris handle after EXEC and a refused continue");
	tl_close(h, TNFCTL_TARG_KILL);
}

/* A running process without libtnfprobe: pid_open refuses it, pid_open_flags takes it. */
static void test_noprobes_pid_open_plain(void **state)
{
	tnfctl_handle_t *h, *child;
	tnfctl_event_info_t info;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 0);
	tl_assert_err(tnfctl_pid_open(p->pid, &h), TNFCTL_ERR_NOLIBTNFPROBE);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, NP | TNFCTL_OPEN_FOREGROUND, &h),
		      TNFCTL_ERR_BADARG); /* FOREGROUND is for exec_open only */
	tl_assert_err(tnfctl_pid_open_flags(p->pid, NP, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_all_stopped(p->pid, "at pid_open_flags' return");
	assert_probe_layer(h, p->pid, TNFCTL_ERR_NONE);
	tl_send(p, "fork 4");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXIT);
	tl_close(child, TNFCTL_TARG_DEFAULT);
	tl_send(p, "kill 15");
	tl_expect_event(h, NULL, TNFCTL_EVENT_TARGGONE);
	tl_info(h, &info);
	assert_int_equal(info.term_signal, SIGTERM);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* env -i: the exec'd program has no environment at all, and is followed on. */
static void test_noprobes_env_i(void **state)
{
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16];
	char *argv[] = {"env", "-i", tl.target, cfd, rfd, NULL};
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	char path[64], buf[256];

	(void)state;
	tl_require_root();
	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	tl_set_cloexec(p->t_cmd_r, 0);
	tl_set_cloexec(p->t_reply_w, 0);
	tl_assert_err(tnfctl_exec_open_flags("env", argv, NULL, NULL, NULL, NP, &h),
		      TNFCTL_ERR_NONE);
	tl_proc_handed_over(p);
	tl_track_handle(h);
	tl_proc_set_pid(p, tl_targ_pid(h));
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_info(h, &info);
	if (strcmp(info.path, tl.target))
		fail_msg("EXEC path \"%s\", expected %s", info.path, tl.target);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, NP, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	snprintf(path, sizeof(path), "/proc/%d/environ", p->pid);
	assert_int_equal(tl_read_file(path, buf, sizeof(buf)), 0);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect(p, "ready");
}

/* A copy of /bin/true whose DT_NEEDED libc.so.6 names a library that does not exist. */
static int make_missing_lib_prog(char *out, size_t size)
{
	static const char from[] = "libc.so.6", to[] = "libq.so.6";
	char *buf = malloc(1 << 24), *hit;
	int fd, n;

	fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, 1 << 24) : -1;
	if (fd >= 0)
		close(fd);
	hit = n > 0 ? memmem(buf, n, from, sizeof(from)) : NULL;
	if (!hit) {
		free(buf);
		return -1;
	}
	memcpy(hit, to, sizeof(to));
	snprintf(out, size, "/tmp/tl-np-missing-lib-%d", getpid());
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || tl_write_all(fd, buf, n)) {
		free(buf);
		return -1;
	}
	close(fd);
	free(buf);
	return 0;
}

/*
 * A missing shared library: with NOPROBES the open succeeds (at the exec,
 * before the loader runs) and the loader's own exit (127) is the EXIT event;
 * the Solaris open fails with ACCES (died before the sync point).
 */
static void test_noprobes_missing_library(void **state)
{
	char prog[64];
	char *argv[] = {prog, NULL};
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	if (make_missing_lib_prog(prog, sizeof(prog))) {
		print_message("SKIP: no \"libc.so.6\" in /bin/true to rename\n");
		skip();
	}
	tl_assert_err(tnfctl_exec_open_flags(prog, argv, NULL, NULL, NULL, NP, &h),
		      TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_track_pid(tl_targ_pid(h));
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 127);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_err(tnfctl_exec_open(prog, argv, NULL, NULL, NULL, &h), TNFCTL_ERR_ACCES);
	unlink(prog);
}

/* A script without "#!": execve's ENOEXEC in errno, ACCES returned, no process left. */
static void test_exec_open_flags_enoexec_errno(void **state)
{
	char path[64];
	char *argv[] = {path, NULL};
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err;
	int fd;

	(void)state;
	tl_require_root();
	snprintf(path, sizeof(path), "/tmp/tl-np-noshebang-%d", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, "echo hi\n", 8), 0);
	close(fd);
	errno = 0;
	err = tnfctl_exec_open_flags(path, argv, NULL, NULL, NULL, NP, &h);
	fd = errno;
	unlink(path);
	tl_assert_err(err, TNFCTL_ERR_ACCES);
	assert_int_equal(fd, ENOEXEC);
	errno = 0;
	err = tnfctl_exec_open_flags("/nonexistent/tl-np", argv, NULL, NULL, NULL, NP, &h);
	tl_assert_err(err, TNFCTL_ERR_FILENOTFOUND);
	assert_int_equal(errno, ENOENT);
	tl_assert_err(tnfctl_exec_open_flags(tl.target, argv, NULL, NULL, NULL, 0x80, &h),
		      TNFCTL_ERR_BADARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_noprobes_static_exec),
		TL_TEST(test_noprobes_env_unchanged_dl_exec),
		TL_TEST(test_noprobes_handle_goes_on_after_exec),
		TL_TEST(test_noprobes_pid_open_plain),
		TL_TEST(test_noprobes_env_i),
		TL_TEST(test_noprobes_missing_library),
		TL_TEST(test_exec_open_flags_enoexec_errno),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
