// SPDX-License-Identifier: BSD-2-Clause
/*
 * Multi-threaded targets: a process counts as stopped only when every one
 * of its threads is, after open and after each event; threads created while
 * running; exec from a non-leader thread.
 */
#include "testlib.h"

/* tl_threads: 6 threads (spinning, read, nanosleep, cond_wait, poll, main). */
#define NR_THREADS 6

static void test_all_threads_stopped_after_each_event(void **state)
{
	tnfctl_handle_t *h, *child = NULL;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	assert_int_equal(tl_nr_threads(p->pid), NR_THREADS);
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "after pid_open");

	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_assert_all_stopped(p->pid, "at FORK (no child handle)");

	tl_send(p, "dlopen libz.so.1");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_assert_all_stopped(p->pid, "at DLOPEN");
	tl_expect(p, "child");
	tl_expect(p, "forked");

	tl_send(p, "dlclose");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
	tl_assert_all_stopped(p->pid, "at DLCLOSE");

	tl_send(p, "fork 3");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	tl_assert_all_stopped(p->pid, "at FORK (with a child handle)");
	tl_assert_all_stopped(tl_targ_pid(child), "child at FORK");
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXIT);
	tl_close(child, TNFCTL_TARG_DEFAULT);

	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* Threads created while the target runs are stopped with it at the next event. */
static void test_threads_created_while_running(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	assert_int_equal(tl_nr_threads(p->pid), 1);
	tl_send(p, "threads 4");
	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	assert_string_equal(tl_expect(p, "threads"), "threads 5");
	assert_int_equal(tl_nr_threads(p->pid), 5);
	tl_assert_all_stopped(p->pid, "at FORK after creating 4 threads");

	tl_send(p, "threads 3");
	tl_send(p, "dlopen libz.so.1");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	assert_int_equal(tl_nr_threads(p->pid), 8);
	tl_assert_all_stopped(p->pid, "at DLOPEN after creating 3 more threads");

	tl_close(h, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "8 threads after close RESUME");
}

/* The exec_open'd multi-threaded program: its threads appear and stop with it. */
static void test_exec_opened_threads_stopped(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.threads_prog, NULL, &h), TNFCTL_ERR_NONE);
	tl_assert_all_stopped(p->pid, "after exec_open");
	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_expect(p, "ready");
	assert_int_equal(tl_nr_threads(p->pid), NR_THREADS);
	tl_assert_all_stopped(p->pid, "at FORK");
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after close SUSPEND");
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "after pid_open of the suspended target");
	tl_close(h, TNFCTL_TARG_KILL);
}

/*
 * exec from a non-leader thread: EXEC; SUSPEND leaves it stopped; pid_open
 * controls the new image from its sync point (its main has not run).
 */
static void test_exec_from_non_leader_thread(void **state)
{
	tnfctl_event_info_t info;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	char ready[64];

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "threads 3");
	tl_send(p, "thread_execself");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_expect(p, "threads 4");
	tl_info(h, &info);
	assert_int_equal(info.pid, p->pid);
	/* the calling thread, by its tid before the exec (the watch's rule too) */
	if (info.tid <= 0 || info.tid == p->pid)
		fail_msg("EXEC tid %d: expected the non-leader thread that called execve", info.tid);
	if (!strstr(info.path, "tl_target"))
		fail_msg("EXEC path \"%s\", expected the tl_target binary", info.path);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after EXEC and close SUSPEND");
	tl_expect_silence(p, "the new image must not run before pid_open");

	h = tl_pid_open(p->pid);
	assert_int_equal(tl_targ_pid(h), p->pid);
	assert_int_equal(tl_nr_threads(p->pid), 1);
	tl_assert_all_stopped(p->pid, "new image after pid_open");
	if (!tl_maps_has(p->pid, "libtnfprobe.so.1"))
		fail_msg("libtnfprobe.so.1 is not mapped in the new image at pid_open");
	tl_expect_silence(p, "pid_open must stop the new image before its main()");

	tl_send(p, "exit 7");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	snprintf(ready, sizeof(ready), "ready %d", p->pid);
	assert_string_equal(tl_expect(p, "ready"), ready);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 7);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(WEXITSTATUS(tl_reap(p->pid)), 7);
}

/* The same exec from the main thread of a multi-threaded target. */
static void test_exec_from_leader_of_threaded_target(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "execself");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after EXEC and close SUSPEND");
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "new image after pid_open");
	tl_expect_silence(p, "pid_open must stop the new image before its main()");
	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_expect(p, "ready");
	assert_int_equal(tl_nr_threads(p->pid), NR_THREADS);
	tl_assert_all_stopped(p->pid, "new image at FORK");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_running(p->pid, "after close DEFAULT");
}

/*
 * A leader that called pthread_exit() while its threads run on never reports
 * a ptrace-stop again: the process must still be attachable and followed to
 * its exit (exec_open'd or attached).
 */
static void test_leader_exited(void **state)
{
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	tl_send(p, "leaderexit");
	tl_expect(p, "leaderexit");
	h = tl_pid_open(p->pid);
	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_send(p, "exit 6");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 6);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_all_threads_stopped_after_each_event),
		TL_TEST(test_threads_created_while_running),
		TL_TEST(test_exec_opened_threads_stopped),
		TL_TEST(test_exec_from_non_leader_thread),
		TL_TEST(test_exec_from_leader_of_threaded_target),
		TL_TEST(test_leader_exited),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
