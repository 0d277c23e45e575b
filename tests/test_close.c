// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_close: each targ_op and the state it leaves the target in. */
#include "testlib.h"

/* DEFAULT on an exec_open'd target kills it. */
static void test_close_default_kills_exec_opened(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_exits(p->pid, "exec_open'd target after close DEFAULT");
}

/* DEFAULT on an exec_open'd target that has run (and is stopped at an event) kills it too. */
static void test_close_default_kills_exec_opened_after_events(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_expect(p, "ready");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_exits(p->pid, "exec_open'd target after FORK and close DEFAULT");
}

/* DEFAULT on an attached target resumes it, untraced. */
static void test_close_default_resumes_pid_opened(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "after pid_open");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_running(p->pid, "attached target after close DEFAULT");
	tl_send(p, "ping");
	tl_expect(p, "pong");
	tl_send(p, "fork 0");
	tl_expect(p, "child");
	tl_expect(p, "forked");
	tl_send(p, "execself");
	tl_expect(p, "ready");
	tl_assert_running(p->pid, "released target after fork and exec");
}

/* KILL: the target is gone when close returns. */
static void test_close_kill_pid_opened(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int st;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_KILL);
	tl_assert_dead_now(p->pid, "attached target right after close KILL");
	st = tl_reap(p->pid);
	assert_true(WIFSIGNALED(st));
}

static void test_close_kill_exec_opened(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_KILL);
	tl_assert_dead_now(p->pid, "exec_open'd target right after close KILL");
}

/* RESUME: running and no longer traced (TracerPid 0 on every thread). */
static void test_close_resume_pid_opened(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "after close RESUME");
	tl_expect(p, "child");
	tl_expect(p, "forked");
	tl_send(p, "tracer");
	assert_string_equal(tl_expect(p, "tracer"), "tracer 0");
	/* no BPF tracking is left either: its events no longer stop it */
	tl_send(p, "fork 3");
	tl_expect(p, "child");
	assert_string_equal(strstr(tl_expect(p, "forked"), "status"), "status 3");
	tl_send(p, "dlopen libz.so.1");
	tl_expect(p, "dlopen ok");
	tl_send(p, "dlclose");
	tl_expect(p, "dlclose 0");
	tl_assert_running(p->pid, "after events of the released target");
}

/* RESUME releases an exec_open'd target: it runs on after the handle is gone. */
static void test_close_resume_exec_opened(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.threads_prog, NULL, &h), TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_expect(p, "ready");
	tl_assert_running(p->pid, "exec_open'd target after close RESUME");
	tl_send(p, "tracer");
	assert_string_equal(tl_expect(p, "tracer"), "tracer 0");
}

/* SUSPEND: job-control stopped, untraced, and pid_open can take it again. */
static void test_close_suspend_pid_opened(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after close SUSPEND");
	tl_send(p, "ping");
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "after pid_open of the suspended target");
	tl_expect_silence(p, "the target must not run between SUSPEND and pid_open");
	tl_send(p, "exit 4");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "pong");
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* SUSPEND on an exec_open'd target: not killed, stopped, re-attachable. */
static void test_close_suspend_exec_opened(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "exec_open'd target after close SUSPEND");
	tl_expect_silence(p, "a suspended target must not run");
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "after pid_open of the suspended target");
	tl_send(p, "exit 12");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "ready");
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 12);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* SUSPEND then SIGCONT from someone else: the target simply runs. */
static void test_close_suspend_then_sigcont(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after close SUSPEND");
	kill(p->pid, SIGCONT);
	tl_send(p, "ping");
	tl_expect(p, "pong");
	tl_assert_running(p->pid, "after SIGCONT");
}

/* A bad op is BADARG and leaves the handle usable. */
static void test_close_bad_op(void **state)
{
	tnfctl_event_info_t info;
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_assert_err(tnfctl_close(h, (tnfctl_targ_op_t)42), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_close(h, (tnfctl_targ_op_t)-1), TNFCTL_ERR_BADARG);
	tl_assert_all_stopped(p->pid, "after a refused close");
	assert_int_equal(tl_targ_pid(h), p->pid);
	tl_send(p, "exit 8");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 8);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static void test_close_null(void **state)
{
	(void)state;
	tl_assert_err(tnfctl_close(NULL, TNFCTL_TARG_DEFAULT), TNFCTL_ERR_NONE);
}

/* Closing after the target's EXIT works with any op. */
static void test_close_after_exit(void **state)
{
	tnfctl_targ_op_t ops[] = {TNFCTL_TARG_DEFAULT, TNFCTL_TARG_KILL, TNFCTL_TARG_RESUME,
				  TNFCTL_TARG_SUSPEND};
	size_t i;

	(void)state;
	tl_require_root();
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct tl_proc *p = tl_proc_new();
		tnfctl_handle_t *h;

		tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
		tl_send(p, "exit 0");
		tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
		tl_close(h, ops[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_close_default_kills_exec_opened),
		TL_TEST(test_close_default_kills_exec_opened_after_events),
		TL_TEST(test_close_default_resumes_pid_opened),
		TL_TEST(test_close_kill_pid_opened),
		TL_TEST(test_close_kill_exec_opened),
		TL_TEST(test_close_resume_pid_opened),
		TL_TEST(test_close_resume_exec_opened),
		TL_TEST(test_close_suspend_pid_opened),
		TL_TEST(test_close_suspend_exec_opened),
		TL_TEST(test_close_suspend_then_sigcont),
		TL_TEST(test_close_bad_op),
		TL_TEST(test_close_null),
		TL_TEST(test_close_after_exit),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
