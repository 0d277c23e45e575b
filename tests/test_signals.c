// SPDX-License-Identifier: BSD-2-Clause
/*
 * Signals: EINTR for the caller, targets killed while running or stopped,
 * and a real SIGSTOP/SIGCONT sent to a controlled target by someone else.
 */
#include "testlib.h"

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/*
 * A kicker thread: once the target answers "pong" (so it is running, i.e.
 * tnfctl_continue has resumed it), it either signals the controller thread
 * or kills the target.  If the controller does not come back within the
 * timeout, it kills the target so the test fails instead of hanging.
 */
struct kicker {
	struct tl_proc *p;
	pthread_t victim;
	int action; /* 0: pthread_kill(victim, SIGUSR1); else kill(target, action) */
	int saw_pong;
	int done_fds[2];
	int timed_out;
};

static void *kicker_fn(void *arg)
{
	struct kicker *k = arg;
	struct pollfd pfd;
	const char *l;

	tl_send(k->p, "ping");
	l = tl_read_line(k->p, tl.timeout_ms);
	while (l && !strncmp(l, "ready", 5)) /* an exec_open'd target says "ready" first */
		l = tl_read_line(k->p, tl.timeout_ms);
	k->saw_pong = l && !strcmp(l, "pong");
	if (k->saw_pong) {
		if (k->action)
			kill(k->p->pid, k->action);
		else
			pthread_kill(k->victim, SIGUSR1);
	}
	pfd.fd = k->done_fds[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, tl.timeout_ms) <= 0) {
		k->timed_out = 1;
		kill(k->p->pid, SIGKILL);
	}
	return NULL;
}

static void kicker_start(struct kicker *k, struct tl_proc *p, int action, pthread_t *t)
{
	memset(k, 0, sizeof(*k));
	k->p = p;
	k->victim = pthread_self();
	k->action = action;
	if (pipe2(k->done_fds, O_CLOEXEC))
		abort();
	*t = tl_thread_start(kicker_fn, k);
}

static void kicker_finish(struct kicker *k, pthread_t t)
{
	tl_write_all(k->done_fds[1], "x", 1);
	tl_thread_join(t);
	close(k->done_fds[0]);
	close(k->done_fds[1]);
}

/*
 * Interrupted again and again while a thread creates and joins threads: any
 * ptrace-stop (a clone event) uses up a pending PTRACE_INTERRUPT, which must
 * then be sent again, or tnfctl_continue never returns.
 */
static void test_eintr_while_threads_churn(void **state)
{
	struct sigaction sa, old;
	tnfctl_event_t evt;
	tnfctl_errcode_t err;
	struct kicker k;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	pthread_t t;
	int i;

	(void)state;
	tl_require_root();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);

	p = tl_start_target(tl.target, 1);
	tl_send(p, "churn");
	tl_expect(p, "churn");
	h = tl_pid_open(p->pid);
	for (i = 0; i < 100; i++) {
		evt = (tnfctl_event_t)-1;
		kicker_start(&k, p, 0, &t);
		err = tnfctl_continue(h, &evt, NULL);
		kicker_finish(&k, t);
		if (k.timed_out)
			fail_msg("round %d: tnfctl_continue was not interrupted (returned %s)", i,
				 tl_err_name(err));
		tl_assert_err(err, TNFCTL_ERR_NONE);
		if (evt != TNFCTL_EVENT_EINTR)
			fail_msg("round %d: expected EINTR, got %s", i, tl_event_name(evt));
		tl_assert_all_stopped(p->pid, "after EINTR with threads churning");
	}
	sigaction(SIGUSR1, &old, NULL);
	tl_close(h, TNFCTL_TARG_KILL);
}

/* A signal to the caller interrupts tnfctl_continue: EINTR, target stopped. */
static void test_eintr_from_signal(void **state)
{
	struct sigaction sa, old;
	tnfctl_event_info_t info;
	tnfctl_event_t evt = (tnfctl_event_t)-1;
	tnfctl_errcode_t err;
	struct kicker k;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	pthread_t t;

	(void)state;
	tl_require_root();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART */
	sigaction(SIGUSR1, &sa, &old);
	got_usr1 = 0;

	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	kicker_start(&k, p, 0, &t);
	err = tnfctl_continue(h, &evt, NULL);
	kicker_finish(&k, t);
	sigaction(SIGUSR1, &old, NULL);

	assert_true(k.saw_pong);
	if (k.timed_out)
		fail_msg("tnfctl_continue was not interrupted by SIGUSR1 (returned %s, event %s "
			 "after the target was killed)",
			 tl_err_name(err), tl_event_name(evt));
	tl_assert_err(err, TNFCTL_ERR_NONE);
	assert_true(got_usr1);
	if (evt != TNFCTL_EVENT_EINTR)
		fail_msg("expected event EINTR, got %s", tl_event_name(evt));
	tl_info(h, &info);
	assert_int_equal(info.event, TNFCTL_EVENT_EINTR);
	tl_assert_all_stopped(p->pid, "after EINTR");

	/* the handle goes on normally */
	tl_send(p, "exit 4");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 4);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* A target killed by someone else while running: TARGGONE with the signal. */
static void test_killed_while_running_targgone(void **state)
{
	tnfctl_event_info_t info;
	tnfctl_event_t evt;
	struct kicker k;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	pthread_t t;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	kicker_start(&k, p, SIGKILL, &t);
	evt = tl_continue(h, NULL);
	kicker_finish(&k, t);
	assert_true(k.saw_pong);
	assert_false(k.timed_out);
	if (evt != TNFCTL_EVENT_TARGGONE)
		fail_msg("expected TARGGONE, got %s", tl_event_name(evt));
	tl_info(h, &info);
	assert_int_equal(info.term_signal, SIGKILL);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(WTERMSIG(tl_reap(p->pid)), SIGKILL);
}

/* A catchable fatal signal from outside is delivered as if nobody watched. */
static void test_sigterm_delivered_targgone(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_event_info_t info;
	tnfctl_event_t evt;
	struct kicker k;
	tnfctl_handle_t *h;
	pthread_t t;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	kicker_start(&k, p, SIGTERM, &t);
	evt = tl_continue(h, NULL);
	kicker_finish(&k, t);
	if (evt != TNFCTL_EVENT_TARGGONE)
		fail_msg("expected TARGGONE, got %s", tl_event_name(evt));
	tl_info(h, &info);
	assert_int_equal(info.term_signal, SIGTERM);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* Killed while stopped: the next tnfctl_continue gives NOPROCESS. */
static void test_killed_while_stopped_noprocess(void **state)
{
	tnfctl_event_t evt;
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	kill(p->pid, SIGKILL);
	tl_assert_exits(p->pid, "SIGKILLed stopped target");
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NOPROCESS);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(WTERMSIG(tl_reap(p->pid)), SIGKILL);
}

/* The same for an exec_open'd target stopped at an event. */
static void test_killed_while_stopped_noprocess_exec_opened(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_event_t evt;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_send(p, "fork 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	kill(p->pid, SIGKILL);
	tl_assert_exits(p->pid, "SIGKILLed stopped target");
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NOPROCESS);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

struct cont_arg {
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
	tnfctl_event_t evt;
	_Atomic int returned; /* read by the main thread while this one runs */
};

static void *cont_fn(void *arg)
{
	struct cont_arg *c = arg;

	c->err = tnfctl_continue(c->h, &c->evt, NULL);
	c->returned = 1;
	return NULL;
}

/*
 * A SIGSTOP sent by someone else while the target runs is delivered: the
 * real parent sees a job-control stop, tnfctl_continue does not return,
 * and SIGCONT lets the target go on to its next event.
 */
static void test_real_sigstop_delivered(void **state)
{
	struct cont_arg c = {0};
	tnfctl_event_info_t info;
	struct tl_proc *p;
	pthread_t t;
	int st = 0;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	c.h = tl_pid_open(p->pid);
	t = tl_thread_start(cont_fn, &c);
	tl_send(p, "ping");
	tl_expect(p, "pong");

	kill(p->pid, SIGSTOP);
	if (tl_waitpid_timeout(p->pid, &st, WUNTRACED, tl.timeout_ms) != p->pid)
		fail_msg("the target never entered a job-control stop after SIGSTOP");
	assert_true(WIFSTOPPED(st));
	assert_int_equal(WSTOPSIG(st), SIGSTOP);
	tl_assert_any_stopped(p->pid, "after a real SIGSTOP");
	tl_send(p, "ping");
	tl_expect_silence(p, "a job-control stopped target must not run");
	if (c.returned)
		fail_msg("tnfctl_continue returned (%s, event %s) for a job-control stop",
			 tl_err_name(c.err), tl_event_name(c.evt));

	kill(p->pid, SIGCONT);
	tl_expect(p, "pong");
	tl_send(p, "exit 5");
	tl_thread_join(t);
	tl_assert_err(c.err, TNFCTL_ERR_NONE);
	if (c.evt != TNFCTL_EVENT_EXIT)
		fail_msg("expected EXIT after SIGCONT, got %s", tl_event_name(c.evt));
	tl_info(c.h, &info);
	assert_int_equal(info.exit_status, 5);
	tl_close(c.h, TNFCTL_TARG_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_eintr_from_signal),
		TL_TEST(test_eintr_while_threads_churn),
		TL_TEST(test_killed_while_running_targgone),
		TL_TEST(test_sigterm_delivered_targgone),
		TL_TEST(test_killed_while_stopped_noprocess),
		TL_TEST(test_killed_while_stopped_noprocess_exec_opened),
		TL_TEST(test_real_sigstop_delivered),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
