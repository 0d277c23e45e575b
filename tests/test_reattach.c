// SPDX-License-Identifier: BSD-2-Clause
/*
 * A failed open after an EXEC (issue 13, item 7).  The documented pattern
 * is: EXEC, tnfctl_close(SUSPEND), tnfctl_pid_open of the new image.  When
 * that open fails (a static image: NOTDYNAMIC; no libtnfprobe.so.1:
 * NOLIBTNFPROBE) the library resumes the process, which only its own
 * SUSPEND had stopped; a process stopped by someone else's SIGSTOP stays
 * in its job-control stop after a failed open.  The same holds when the
 * re-open fails because the tracer helper died before it answered: the
 * library, not the helper, then resumes the process.
 *
 * TL_REATTACH_ROUNDS rounds of each (default 3; 30 with TL_STRESS=full).
 */
#include "testlib.h"
#include <stdbool.h>
#include <sys/syscall.h>

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

/* The one live tnfctl-engine of our subtree. */
static pid_t the_tracer(void)
{
	struct tl_pinfo *ps;
	pid_t found = 0;
	int i, n, k = 0;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++)
		if (tl_is_tracer(&ps[i]) && ps[i].state != 'Z' && ps[i].state != 'X') {
			found = ps[i].pid;
			k++;
		}
	free(ps);
	if (k != 1)
		fail_msg("%d live tnfctl-engine helpers, expected 1", k);
	return found;
}

/* Until @pred(@pid, @tid) holds: a state change, bounded by TL_TIMEOUT_MS. */
static void wait_until(bool (*pred)(pid_t, pid_t), pid_t pid, pid_t tid, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;

	while (!pred(pid, tid)) {
		if (tl_now_ms() > end)
			fail_msg("timed out waiting until %s", what);
		sched_yield();
	}
}

static bool is_stopped(pid_t pid, pid_t tid)
{
	return tl_task_state(pid, tid) == 'T';
}

/*
 * Thread @tid of this process waits for the engine's reply: asleep on its
 * handle's condition variable (the library's reader thread takes replies
 * off the connection), the request sent before it.
 */
static bool in_reply_wait(pid_t pid, pid_t tid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	return tl_read_file(path, buf, sizeof(buf)) > 0 && atol(buf) == SYS_futex;
}

struct reopen {
	pid_t pid;
	_Atomic pid_t tid;
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
};

static void *reopen_thread(void *arg)
{
	struct reopen *r = arg;

	r->tid = gettid();
	r->err = tnfctl_pid_open(r->pid, &r->h);
	return NULL;
}

/*
 * close(SUSPEND), then a pid_open whose helper dies (SIGKILL, while it is
 * held in a SIGSTOP so that the request is surely in flight) before it
 * answers: the open fails and the process runs again.  Before the fix the
 * process stayed stopped for good (nobody was left to resume it).
 */
static void helper_dies_in_reopen(void)
{
	struct reopen r = {0};
	tnfctl_handle_t *h, *hq;
	struct tl_proc *p, *q;
	pthread_t th;
	pid_t tracer;
	int st;

	p = tl_start_target(tl.target, 1);
	q = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	hq = tl_pid_open(q->pid); /* keeps the helper up across h's close */
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after close SUSPEND");
	tracer = the_tracer();
	assert_int_equal(kill(tracer, SIGSTOP), 0);
	wait_until(is_stopped, tracer, tracer, "the helper is stopped");
	r.pid = p->pid;
	assert_int_equal(pthread_create(&th, NULL, reopen_thread, &r), 0);
	while (!r.tid)
		sched_yield();
	wait_until(in_reply_wait, getpid(), r.tid, "pid_open waits for the helper's reply");
	assert_int_equal(kill(tracer, SIGKILL), 0);
	pthread_join(th, NULL);
	assert_null(r.h);
	assert_int_not_equal(r.err, TNFCTL_ERR_NONE);
	/* resumed, untraced */
	tl_send(p, "ping");
	tl_expect(p, "pong");
	tl_assert_running(p->pid, "after the failed re-open");
	assert_int_equal(tl_tracer_pid(p->pid), 0);
	/* q's handle died with its helper; q runs on, untraced */
	tnfctl_close(hq, TNFCTL_TARG_RESUME);
	tl_untrack_handle(hq);
	tl_send(q, "ping");
	tl_expect(q, "pong");
	assert_int_equal(tl_tracer_pid(q->pid), 0);
	tl_send(p, "exit 3");
	tl_send(q, "exit 4");
	st = tl_reap(p->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	st = tl_reap(q->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 4);
	proc_release(p);
	proc_release(q);
}

static void test_reopen_helper_dies_resumed(void **state)
{
	int r;

	(void)state;
	tl_require_root();
	for (r = 0; r < rounds(); r++)
		helper_dies_in_reopen();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_reopen_static_image_resumed),
		TL_TEST(test_reopen_probeless_image_resumed),
		TL_TEST(test_failed_open_keeps_foreign_stop),
		TL_TEST(test_reopen_helper_dies_resumed),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
