// SPDX-License-Identifier: BSD-2-Clause
/*
 * A failed open after an EXEC (issue 13, item 7).  The documented pattern
 * is: EXEC, tnfctl_close(SUSPEND), tnfctl_pid_open of the new image.  When
 * that open fails (a static image: NOTDYNAMIC; no libtnfprobe.so.1:
 * NOLIBTNFPROBE) the library resumes the process, which only its own
 * SUSPEND had stopped; a process stopped by someone else's SIGSTOP stays
 * in its job-control stop after a failed open.
 *
 * TL_REATTACH_ROUNDS rounds of each (default 3; 30 with TL_STRESS=full).
 */
#include "testlib.h"
#include <stdbool.h>

static int rounds(void)
{
	const char *s = getenv("TL_STRESS");

	return tl_env_int("TL_REATTACH_ROUNDS", s && !strcmp(s, "full") ? 30 : 3);
}

/* A target that has exited: its slot for the next round. */
static void proc_release(struct tl_proc *p)
{
	pthread_mutex_lock(&tl.lock);
	tl_proc_close_fds(p);
	p->used = 0;
	pthread_mutex_unlock(&tl.lock);
}

/* The command and reply fds a target was started with (its argv[1], argv[2]). */
static void target_fds(pid_t pid, int *cfd, int *rfd)
{
	char path[64], buf[PATH_MAX * 2];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	n = tl_read_file(path, buf, sizeof(buf));
	assert_true(n > 0);
	*cfd = atoi(buf + strlen(buf) + 1);
	*rfd = atoi(buf + strlen(buf) + 1 + strlen(buf + strlen(buf) + 1) + 1);
}

/* pid_open, exec of @prog (LD_PRELOAD dropped when @noprobe), SUSPEND, pid_open. */
static void exec_then_reopen(const char *prog, bool noprobe, tnfctl_errcode_t want)
{
	tnfctl_handle_t *h, *h2 = NULL;
	struct tl_proc *p;
	int st, cfd, rfd;

	p = tl_start_target(tl.target, 1);
	target_fds(p->pid, &cfd, &rfd);
	h = tl_pid_open(p->pid);
	if (noprobe) {
		tl_send(p, "unsetenv LD_PRELOAD");
		/* unsetenv makes no event: the reply comes with the EXEC */
	}
	tl_send(p, "exec %s %d %d", prog, cfd, rfd);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after close SUSPEND at EXEC");
	tl_assert_err(tnfctl_pid_open(p->pid, &h2), want);
	assert_null(h2);
	/* resumed: the new image runs, untraced */
	if (noprobe)
		tl_expect(p, "unsetenv");
	tl_expect(p, "ready");
	tl_send(p, "ping");
	tl_expect(p, "pong");
	tl_assert_running(p->pid, "after the failed re-open");
	assert_int_equal(tl_tracer_pid(p->pid), 0);
	tl_send(p, "exit 3");
	st = tl_reap(p->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	proc_release(p);
}

static void test_reopen_static_image_resumed(void **state)
{
	int r;

	(void)state;
	tl_require_root();
	for (r = 0; r < rounds(); r++)
		exec_then_reopen(tl.static_prog, false, TNFCTL_ERR_NOTDYNAMIC);
}

static void test_reopen_probeless_image_resumed(void **state)
{
	int r;

	(void)state;
	tl_require_root();
	for (r = 0; r < rounds(); r++)
		exec_then_reopen(tl.target, true, TNFCTL_ERR_NOLIBTNFPROBE);
}

/* Someone else's SIGSTOP: a failed open leaves the process in that stop. */
static void foreign_stop_kept(const char *prog, tnfctl_errcode_t want)
{
	tnfctl_handle_t *h = NULL;
	struct tl_proc *p;
	int st;

	p = tl_start_target(prog, 0);
	assert_int_equal(kill(p->pid, SIGSTOP), 0);
	assert_int_equal(waitpid(p->pid, &st, WUNTRACED), p->pid);
	assert_true(WIFSTOPPED(st));
	tl_assert_job_stopped(p->pid, "after our SIGSTOP");
	tl_assert_err(tnfctl_pid_open(p->pid, &h), want);
	assert_null(h);
	tl_assert_job_stopped(p->pid, "after the failed open");
	assert_int_equal(kill(p->pid, SIGCONT), 0);
	tl_send(p, "ping");
	tl_expect(p, "pong");
	tl_assert_running(p->pid, "after our SIGCONT");
	tl_send(p, "exit 4");
	st = tl_reap(p->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 4);
	proc_release(p);
}

static void test_failed_open_keeps_foreign_stop(void **state)
{
	int r;

	(void)state;
	tl_require_root();
	for (r = 0; r < rounds(); r++) {
		foreign_stop_kept(tl.static_prog, TNFCTL_ERR_NOTDYNAMIC);
		foreign_stop_kept(tl.target, TNFCTL_ERR_NOLIBTNFPROBE);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_reopen_static_image_resumed),
		TL_TEST(test_reopen_probeless_image_resumed),
		TL_TEST(test_failed_open_keeps_foreign_stop),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
