// SPDX-License-Identifier: BSD-2-Clause
/*
 * A controller killed with SIGKILL: its attached target must run on (not
 * stopped, not traced) and its exec_open'd target must die, once the
 * tnfctl-engine helper (reparented to the test, a subreaper) has exited.
 *
 * The controller is build/tests/helpers/tl_ctl, a fresh process that
 * dlopens libtnfctl.so.1.
 */
#include "testlib.h"

struct ctl {
	pid_t pid;
	int report_r;
	struct tl_proc rep; /* only reply_r/buf are used, to read its lines */
	pid_t tracer;
	pid_t holder; /* "hold" mode: the controller's forked child */
};

/*
 * Starts tl_ctl on the attached target @a (pid_open) and on a tl_target it
 * exec_opens with @b's pipes; @run: continue them, else leave them stopped.
 */
static void start_controller(struct ctl *c, struct tl_proc *a, struct tl_proc *b, int run)
{
	char rfd[16], apid[16], bc[16], br[16];
	char *argv[] = {tl.ctl, tl.libctl, rfd, run == 1 ? "run" : run == 2 ? "hold" : "stop",
			"p",	apid,	   "e", tl.target,
			bc,	br,	   NULL};
	int rep[2], keep[4];
	char **env;
	pid_t opened_a, opened_b;
	char comm[64];

	memset(c, 0, sizeof(*c));
	if (pipe2(rep, O_CLOEXEC))
		abort();
	snprintf(rfd, sizeof(rfd), "%d", rep[1]);
	snprintf(apid, sizeof(apid), "%d", a->pid);
	snprintf(bc, sizeof(bc), "%d", b->t_cmd_r);
	snprintf(br, sizeof(br), "%d", b->t_reply_w);
	keep[0] = rep[1];
	keep[1] = b->t_cmd_r;
	keep[2] = b->t_reply_w;
	keep[3] = -1;
	env = tl_env_build(NULL);
	c->pid = tl_spawn(argv, env, -1, keep);
	free(env);
	close(rep[1]);
	tl_proc_handed_over(b);
	c->rep.reply_r = rep[0];
	c->rep.pid = c->pid;

	opened_a = atoi(tl_expect(&c->rep, "opened ") + 7);
	assert_int_equal(opened_a, a->pid);
	opened_b = atoi(tl_expect(&c->rep, "opened ") + 7);
	assert_true(opened_b > 0);
	tl_proc_set_pid(b, opened_b);
	if (run == 2)
		c->holder = atoi(tl_expect(&c->rep, "holder ") + 7);
	tl_expect(&c->rep, run == 1 ? "running" : "stopped");

	/* the tracer helper: whatever its parent, it is the targets' TracerPid */
	c->tracer = tl_tracer_pid(a->pid);
	if (c->tracer <= 0)
		fail_msg("the attached target %d is not traced after the controller opened it",
			 a->pid);
	tl_comm(c->tracer, comm, sizeof(comm));
	if (strcmp(comm, "tnfctl-engine"))
		fail_msg("the target's tracer %d is \"%s\", not tnfctl-engine", c->tracer, comm);
	assert_int_equal(tl_tracer_pid(b->pid), c->tracer);
}

static void kill_controller(struct ctl *c)
{
	int st, found;

	kill(c->pid, SIGKILL);
	st = tl_reap(c->pid);
	assert_true(WIFSIGNALED(st));
	close(c->rep.reply_r);
	/* the tracer (reparented to us, a subreaper) cleans up and exits */
	if (tl_wait_tracers_gone(tl.timeout_ms, &found))
		fail_msg("tnfctl-engine %d did not exit within %d ms after its controller died",
			 c->tracer, tl.timeout_ms);
	if (!found)
		fail_msg("tnfctl-engine %d is not in the test's process subtree", c->tracer);
	tl_reap_children();
}

static void check_after_death(struct tl_proc *a, struct tl_proc *b)
{
	tl_assert_running(a->pid, "attached target after the controller died");
	tl_send(a, "tracer");
	assert_string_equal(tl_expect(a, "tracer"), "tracer 0");
	tl_assert_exits(b->pid, "exec_open'd target after the controller died");
}

/* Killed while both targets run (the controller blocked in tnfctl_continue). */
static void test_controller_killed_while_targets_run(void **state)
{
	struct tl_proc *a, *b;
	struct ctl c;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.threads_prog, 1);
	b = tl_proc_new();
	start_controller(&c, a, b, 1);
	/* both answer: both were resumed by tnfctl_continue */
	tl_send(a, "ping");
	tl_expect(a, "pong");
	tl_send(b, "ping");
	tl_expect(b, "ready");
	tl_expect(b, "pong");
	kill_controller(&c);
	check_after_death(a, b);
}

/* Killed while both targets are stopped (after open, no continue). */
static void test_controller_killed_while_targets_stopped(void **state)
{
	struct tl_proc *a, *b;
	struct ctl c;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.threads_prog, 1);
	b = tl_proc_new();
	start_controller(&c, a, b, 0);
	tl_assert_all_stopped(a->pid, "attached target before the controller dies");
	tl_assert_all_stopped(b->pid, "exec_open'd target before the controller dies");
	kill_controller(&c);
	check_after_death(a, b);
	tl_send(a, "ping");
	tl_expect(a, "pong");
}

/*
 * The controller forked a child (no exec) that outlives it: the child's copies
 * of the library's sockets must not hide the controller's death.
 */
static void test_controller_killed_child_lives_on(void **state)
{
	struct tl_proc *a, *b;
	struct ctl c;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.threads_prog, 1);
	b = tl_proc_new();
	start_controller(&c, a, b, 2);
	assert_true(c.holder > 0);
	kill_controller(&c);
	check_after_death(a, b);
	if (kill(c.holder, 0))
		fail_msg("the controller's forked child %d should still be alive", c.holder);
	kill(c.holder, SIGKILL);
	tl_reap(c.holder);
}

/* Killed while the targets keep making events (forks) under control. */
static void test_controller_killed_during_events(void **state)
{
	struct tl_proc *a, *b;
	struct ctl c;
	int i;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	b = tl_proc_new();
	start_controller(&c, a, b, 1);
	tl_send(a, "ping");
	tl_expect(a, "pong");
	/* tl_ctl continues through every FORK: kill it in the middle of them */
	for (i = 0; i < 20; i++)
		tl_send(a, "fork 0");
	tl_send(b, "fork 0");
	tl_expect(b, "ready");
	tl_expect(a, "child");
	kill_controller(&c);
	/* every fork completes: no child or parent was left stopped */
	tl_expect(a, "forked");
	for (i = 1; i < 20; i++) {
		tl_expect(a, "child");
		tl_expect(a, "forked");
	}
	check_after_death(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_controller_killed_while_targets_run),
		TL_TEST(test_controller_killed_while_targets_stopped),
		TL_TEST(test_controller_killed_during_events),
		TL_TEST(test_controller_killed_child_lives_on),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
