// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exec races forced, not waited for: the engine is held inside one ptrace
 * call (tests/holdlib.h, a seccomp listener) while a thread of the target
 * execs, so the window the race needs is open every time.
 *
 *  - tnfctl_pid_open while a thread not yet seized execs (0abb632's
 *    window): the engine's seize of the second thread waits until the
 *    thread has exec'd; the kernel drops the seized old leader in silence
 *    and the new leader is nobody's.  The open must succeed with the new
 *    image stopped (the engine's seize_all starts over when the leader it
 *    seized is no longer traced: before, the open waited for the old
 *    leader's stop for ever);
 *  - a failed execve's EXEC_FAILED queued when another thread's exec ends
 *    the image (f0d7f1a): the engine's PTRACE_INTERRUPT of the other
 *    thread waits until that thread has exec'd.  The next event is EXEC:
 *    an EXEC_FAILED of a thread of the old image is not reported;
 *  - the engine killed while held in the seize of the second thread: the
 *    open fails (INTERNAL, the engine gone) instead of waiting for its
 *    answer, and the leader it had seized runs on, nobody's.
 *
 * The workloads are this binary (`test_exec_holds --wl NAME CMDFD
 * REPLYFD`); each says "ready" once its threads run, and its exec closes
 * REPLYFD (close-on-exec), which is how the test knows the exec is done.
 */
#include "testlib.h"
#include "holdlib.h"

static char self_exe[PATH_MAX];

/* ------------------------------------------------------------------ */
/* workloads */

static int wl_cmd = -1, wl_reply = -1, wl_ready[2];

static void wl_exec_idle(void)
{
	char *argv[] = {self_exe, "--wl", "idle", NULL};

	execv(self_exe, argv);
	_exit(120);
}

/* A second thread: "ready", then on a command byte it execs. */
static void *wl_exec_thread(void *arg)
{
	char c;

	(void)arg;
	if (write(wl_ready[1], "r", 1) != 1)
		_exit(121);
	if (read(wl_cmd, &c, 1) != 1)
		_exit(122);
	wl_exec_idle();
	return NULL;
}

static void wl_thread_ready(void)
{
	pthread_t t;
	char c;

	if (pipe2(wl_ready, O_CLOEXEC) || pthread_create(&t, NULL, wl_exec_thread, NULL) ||
	    read(wl_ready[0], &c, 1) != 1)
		_exit(123);
}

static int workload(int argc, char **argv)
{
	char *fail_argv[] = {"/nonexistent/tl-exec-holds", NULL};
	const char *w = argv[2];

	if (!strcmp(w, "idle"))
		for (;;)
			pause();
	if (argc < 5)
		return 127;
	wl_cmd = atoi(argv[3]);
	wl_reply = atoi(argv[4]);
	tl_set_cloexec(wl_cmd, 1);
	tl_set_cloexec(wl_reply, 1);
	wl_thread_ready();
	if (!strcmp(w, "thread_exec")) {
		tl_write_all(wl_reply, "ready\n", 6);
		for (;;)
			pause();
	}
	if (!strcmp(w, "failed_exec")) {
		tl_write_all(wl_reply, "ready\n", 6);
		execv(fail_argv[0], fail_argv);
		for (;;)
			pause();
	}
	return 127;
}

/* ------------------------------------------------------------------ */

struct race {
	struct tl_proc *p;
	int exec_done;	   /* 1: the exec closed the reply pipe while the engine waited */
	struct hold *hold; /* at_kill_engine's */
};

/* Held in the engine: the second thread execs; back once its exec is past de_thread. */
static void at_hold_exec(void *arg)
{
	struct race *r = arg;
	struct pollfd pfd = {.fd = r->p->reply_r, .events = POLLIN};
	char buf[64];

	tl_send(r->p, "x");
	for (;;) {
		if (poll(&pfd, 1, tl.timeout_ms) != 1)
			return; /* exec_done stays 0: the test fails on it */
		if (read(r->p->reply_r, buf, sizeof(buf)) == 0)
			break;
	}
	r->exec_done = 1;
}

/* Held in the engine: the engine is killed there. */
static void at_kill_engine(void *arg)
{
	struct race *r = arg;

	tl_pidfd_kill(r->hold->engine_fd, SIGKILL);
	/* the call the engine waits in ends with it: an answer after would be too late */
	if (!tl_pidfd_wait(r->hold->engine_fd, tl.timeout_ms))
		r->exec_done = 1;
}

/* `self --wl NAME CMDFD REPLYFD` with libtnfprobe preloaded, for @p. */
static void wl_argv(struct tl_proc *p, const char *name, char *argv[6], char fds[2][16])
{
	snprintf(fds[0], sizeof(fds[0]), "%d", p->t_cmd_r);
	snprintf(fds[1], sizeof(fds[1]), "%d", p->t_reply_w);
	argv[0] = self_exe;
	argv[1] = "--wl";
	argv[2] = (char *)name;
	argv[3] = fds[0];
	argv[4] = fds[1];
	argv[5] = NULL;
}

static char **wl_env(char *pre)
{
	const char *extra[] = {pre, "LSAN_OPTIONS=detect_leaks=0", NULL};

	snprintf(pre, PATH_MAX + 16, "LD_PRELOAD=%s", tl.probe);
	return tl_env_build(extra);
}

/*
 * The thread_exec workload, started and ready, for a pid_open whose seize
 * of its second thread is held (hold_start with @at, armed): its pid.
 */
static pid_t start_thread_exec(struct race *r, struct hold *hold, void (*at)(void *))
{
	int keep[3] = {r->p->t_cmd_r, r->p->t_reply_w, -1};
	char fds[2][16], pre[PATH_MAX + 16], *argv[6], **env;
	pid_t pid;

	hold_start(hold, PTRACE_SEIZE, at, r);
	wl_argv(r->p, "thread_exec", argv, fds);
	env = wl_env(pre);
	pid = tl_spawn(argv, env, -1, keep);
	free(env);
	tl_proc_handed_over(r->p);
	tl_proc_set_pid(r->p, pid);
	tl_expect(r->p, "ready");
	hold_arm(hold, pid); /* the seize of the other thread */
	return pid;
}

/* 0abb632: the engine seizes the leader, and the second thread execs before its own seize. */
static void test_pid_open_vs_unseized_thread_exec(void **state)
{
	struct race r = {.p = tl_proc_new()};
	tnfctl_handle_t *h;
	struct hold hold;
	pid_t pid;

	(void)state;
	tl_require_root();
	pid = start_thread_exec(&r, &hold, at_hold_exec);
	tl_assert_err(tnfctl_pid_open(pid, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	assert_int_equal(hold.held, 1);
	assert_int_equal(r.exec_done, 1);
	/*
	 * The exec was over before the open: the handle holds the new image
	 * (its one thread ptrace-stopped, by the engine), and no EXEC is due.
	 */
	tl_assert_all_stopped(pid, "after pid_open across the exec");
	assert_true(tl_tracer_pid(pid) > 0);
	tl_close(h, TNFCTL_TARG_KILL);
	hold_end(&hold);
}

/* f0d7f1a: EXEC_FAILED of the leader queued, then the other thread's exec ends the image. */
static void test_exec_failed_then_exec(void **state)
{
	struct race r = {.p = tl_proc_new()};
	char fds[2][16], pre[PATH_MAX + 16], *argv[6], **env;
	tnfctl_trace_attrs_t attrs;
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;
	struct hold hold;

	(void)state;
	tl_require_root();
	hold_start(&hold, PTRACE_INTERRUPT, at_hold_exec, &r);
	wl_argv(r.p, "failed_exec", argv, fds);
	env = wl_env(pre);
	tl_set_cloexec(r.p->t_cmd_r, 0);
	tl_set_cloexec(r.p->t_reply_w, 0);
	err = tnfctl_exec_open_flags(self_exe, argv, env, NULL, NULL, TNFCTL_OPEN_EXEC_FAILED,
				     &h);
	free(env);
	tl_proc_handed_over(r.p);
	tl_assert_err(err, TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_trace_attrs_get(h, &attrs), TNFCTL_ERR_NONE);
	tl_proc_set_pid(r.p, attrs.targ_pid);
	/* the leader's failed execve stops it; the stop of the other thread is held */
	hold_arm(&hold, attrs.targ_pid);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	assert_int_equal(hold.held, 1);
	assert_int_equal(r.exec_done, 1);
	tl_close(h, TNFCTL_TARG_KILL);
	hold_end(&hold);
}

/* The engine dies while the open waits for it: the open fails, the target is left running. */
static void test_pid_open_engine_killed_in_seize(void **state)
{
	struct race r = {.p = tl_proc_new()};
	tnfctl_handle_t *h = NULL;
	struct hold hold;
	pid_t pid;

	(void)state;
	tl_require_root();
	r.hold = &hold;
	pid = start_thread_exec(&r, &hold, at_kill_engine);
	tl_assert_err(tnfctl_pid_open(pid, &h), TNFCTL_ERR_INTERNAL);
	assert_null(h);
	assert_int_equal(hold.held, 1);
	/* its seize of the leader ended with it (no EXITKILL for a pid_open) */
	assert_int_equal(tl_tracer_pid(pid), 0);
	tl_assert_running(pid, "after its engine died in the open");
	/*
	 * The open returns once the engine is dead, which may be before the
	 * hold thread, back from its wait for that death, has said so: read
	 * it once that thread is joined (it failed that way under load).
	 */
	hold_end(&hold);
	assert_int_equal(r.exec_done, 1); /* the engine died in the held call */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_pid_open_vs_unseized_thread_exec),
		TL_TEST(test_exec_failed_then_exec),
		TL_TEST(test_pid_open_engine_killed_in_seize),
		TL_FINAL_TEST,
	};

	if (tl_self_exe(self_exe, sizeof(self_exe)))
		return 1;
	if (argc >= 3 && !strcmp(argv[1], "--wl"))
		return workload(argc, argv);
	return tl_run(tests);
}
