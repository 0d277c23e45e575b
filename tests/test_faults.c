// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fault injection (issue 6, item 2):
 *  - the controller SIGKILLed at random points of open, continue and close
 *    (TL_FAULT_RUNS runs, default 100, over the phases in turn; TL_SEED,
 *    else the time, printed; a call that stays TL_TIMEOUT_MS fails it):
 *    the attached target runs on untraced, the exec'd target dies, nothing
 *    in the test's process tree is left stopped or traced;
 *  - the engine SIGKILLed at random points of the same: no call hangs,
 *    nothing is left stopped or traced;
 *  - the target SIGKILLed at random points of open, continue and close:
 *    NOPROCESS, TARGGONE (or the events before it), never a hang;
 *  - targets that block every signal, ignore SIGCONT, or sit in a
 *    job-control stop when attached;
 *  - pid reuse between the end of a target and a late call on its handle:
 *    the process that got the pid is never touched;
 *  - a full ring buffer: a watch with a 4 KiB ring on a storm reports its
 *    losses exactly, while the stopping mode follows the same storm with
 *    nothing lost.  (The stopping mode's own ring is 1 MiB, fixed in
 *    bpf/tnfctl.bpf.c: there is no knob to make it small.)
 * The controller of the first test is this binary (`test_faults --ctl`).
 */
#include <dirent.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "testlib.h"
#include "stress/storm.h"
#include "tnfctl_events.h"

static char self_exe[PATH_MAX];
static unsigned int seed, seed0;
static int runs, runs_all;

static unsigned int rnd(unsigned int n)
{
	return n ? (unsigned int)(rand_r(&seed) % n) : 0;
}

/* ------------------------------------------------------------------ */
/* the controller (run as `test_faults --ctl SHMFD A_PID`) */

enum ctl_phase {
	PH_START,
	PH_PID_OPEN,
	PH_CONT_A,
	PH_CLOSE_A,
	PH_EXEC_OPEN,
	PH_CONT_B,
	PH_CLOSE_B,
	PH_N
};

static const char *const phase_names[PH_N] = {
	"start",     "pid_open",	 "continue(attached)",	"close(attached, RESUME)",
	"exec_open", "continue(exec'd)", "close(exec'd, KILL)",
};

struct ctl_shm {
	volatile int phase;
	volatile int cycles;
	volatile pid_t b; /* the exec'd target of the current cycle */
	/* the call the test faults: the controller waits before and after it */
	volatile int hold_phase, hold_cycle;
	volatile int held; /* 1: before that call, 2: after it */
};

static struct ctl_shm *ctl_shm;
static int ctl_relfd; /* a byte from the test (or its end closed) releases a hold */

/* Enters @phase; waits for the test before its call if it is the one faulted. */
static void ctl_enter(int phase)
{
	ctl_shm->phase = phase;
	if (phase == ctl_shm->hold_phase && ctl_shm->cycles == ctl_shm->hold_cycle) {
		char x;

		ctl_shm->held = 1;
		while (read(ctl_relfd, &x, 1) < 0 && errno == EINTR)
			;
	}
}

/* The phase's call returned: waits for the test if it was the one faulted. */
static void ctl_done(void)
{
	if (ctl_shm->held == 1) {
		char x;

		ctl_shm->held = 2;
		while (read(ctl_relfd, &x, 1) < 0 && errno == EINTR)
			;
	}
}

static int ctl_main(int shmfd, pid_t a, int relfd)
{
	struct ctl_shm *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, shmfd, 0);
	char *bargv[] = {"sh", "-c", "while :; do /bin/true; done", NULL};

	if (shm == MAP_FAILED)
		return 3;
	ctl_shm = shm;
	ctl_relfd = relfd;
	for (;;) {
		tnfctl_handle_t *h;
		tnfctl_trace_attrs_t at;
		tnfctl_event_t evt;
		int i;

		ctl_enter(PH_PID_OPEN);
		if (tnfctl_pid_open(a, &h) != TNFCTL_ERR_NONE)
			return 4;
		ctl_done();
		ctl_enter(PH_CONT_A);
		for (i = 0; i < 3; i++)
			if (tnfctl_continue(h, &evt, NULL) != TNFCTL_ERR_NONE)
				return 5;
		ctl_done();
		ctl_enter(PH_CLOSE_A);
		if (tnfctl_close(h, TNFCTL_TARG_RESUME) != TNFCTL_ERR_NONE)
			return 6;
		ctl_done();
		ctl_enter(PH_EXEC_OPEN);
		if (tnfctl_exec_open("/bin/sh", bargv, NULL, NULL, NULL, &h) != TNFCTL_ERR_NONE)
			return 7;
		if (tnfctl_trace_attrs_get(h, &at) == TNFCTL_ERR_NONE)
			shm->b = at.targ_pid;
		ctl_done();
		ctl_enter(PH_CONT_B);
		for (i = 0; i < 3; i++)
			if (tnfctl_continue(h, &evt, NULL) != TNFCTL_ERR_NONE)
				return 8;
		ctl_done();
		ctl_enter(PH_CLOSE_B);
		if (tnfctl_close(h, TNFCTL_TARG_KILL) != TNFCTL_ERR_NONE)
			return 9;
		ctl_done();
		shm->cycles++;
	}
}

/* ------------------------------------------------------------------ */
/* checks */

/*
 * Nothing in the test's subtree is stopped or traced: waits up to the
 * timeout for it to be so (a tracer that just died leaves the kernel some
 * work), then fails naming what is not.
 */
static void assert_nothing_stopped(const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;
	char desc[2048] = "";

	for (;;) {
		struct tl_pinfo *ps;
		int i, n, bad = 0;

		n = tl_subtree(&ps);
		for (i = 0; i < n && !bad; i++) {
			pid_t tids[TL_MAX_TASKS];
			int j, nt;

			if (ps[i].state == 'Z' || ps[i].state == 'X')
				continue;
			nt = tl_tasks(ps[i].pid, tids, TL_MAX_TASKS);
			for (j = 0; j < nt; j++) {
				char st = tl_task_state(ps[i].pid, tids[j]);

				if (st == 't' || st == 'T' ||
				    tl_task_status_field(ps[i].pid, tids[j], "TracerPid:") > 0) {
					bad = 1;
					tl_describe(ps[i].pid, desc, sizeof(desc));
					break;
				}
			}
		}
		free(ps);
		if (!bad)
			return;
		if (tl_now_ms() > end)
			fail_msg("%s: left stopped or traced: %s", what, desc);
		poll(NULL, 0, 5);
	}
}

static unsigned long forkcount(struct tl_proc *p)
{
	tl_send(p, "forkcount");
	return strtoul(tl_expect(p, "forkcount ") + 10, NULL, 10);
}

/* The forkloop of @p goes on (its children are neither stopped nor lost). */
static void assert_forkloop_runs(struct tl_proc *p)
{
	unsigned long c0 = forkcount(p);
	long long end = tl_now_ms() + tl.timeout_ms;

	while (forkcount(p) < c0 + 10)
		if (tl_now_ms() > end)
			fail_msg("pid %d: its fork loop is stuck at %lu", p->pid, c0);
}

/*
 * Every phase had a run (certain once @runs reaches their number: they are
 * taken in turn, and the controller waits in the one chosen until killed).
 */
static void assert_every_phase(const char *what, const int counts[PH_N], int runs)
{
	int ph;

	if (runs < PH_N - PH_PID_OPEN) {
		print_message("# %s: %d runs, fewer than the %d phases: not all of them tried\n",
			      what, runs, PH_N - PH_PID_OPEN);
		return;
	}
	for (ph = PH_PID_OPEN; ph < PH_N; ph++)
		if (!counts[ph])
			fail_msg("%s: no run in %s (%d runs)", what, phase_names[ph], runs);
}

/* ------------------------------------------------------------------ */
/* 1. the controller killed at random points */

/*
 * The faulted call of run @run: the phases in turn (every one faulted once
 * runs >= their number, whatever the seed), the cycle at random.
 */
static int ctl_want(int run)
{
	return PH_PID_OPEN + run % (PH_N - PH_PID_OPEN);
}

/*
 * Starts the controller (`self --ctl SHMFD A RELFD`), to be faulted in
 * phase @want of cycle @cycle, and waits until it is there, before the
 * call.  Fails if it ends first, or stays in one phase for TL_TIMEOUT_MS:
 * a call hung (as did pid_open and continue, unnoticed, in the loop
 * that stopped waiting at its deadline).
 */
static pid_t ctl_start(struct ctl_shm *shm, int shmfd, pid_t a, int relfd, int want, int cycle,
		       int run, int *pfd)
{
	char sfd[16], apid[16], rfd[16];
	char *argv[] = {self_exe, "--ctl", sfd, apid, rfd, NULL};
	int keep[] = {shmfd, relfd, -1}, phase = -1, cycles = -1, st;
	char **env = tl_env_build(NULL);
	long long end = 0;
	pid_t c;

	snprintf(sfd, sizeof(sfd), "%d", shmfd);
	snprintf(apid, sizeof(apid), "%d", a);
	snprintf(rfd, sizeof(rfd), "%d", relfd);
	memset((void *)shm, 0, sizeof(*shm));
	shm->hold_phase = want;
	shm->hold_cycle = cycle;
	c = tl_spawn(argv, env, -1, keep);
	free(env);
	*pfd = tl_pidfd_of(c);
	while (shm->held != 1) {
		if (shm->phase != phase || shm->cycles != cycles) {
			phase = shm->phase;
			cycles = shm->cycles;
			end = tl_now_ms() + tl.timeout_ms;
		} else if (tl_now_ms() > end) {
			fail_msg(
				"run %d: a call hung: the controller was in %s (cycle %d) for over "
				"%d ms (TL_TIMEOUT_MS)",
				run, phase_names[phase], cycles, tl.timeout_ms);
		}
		/* a polling interval, not a synchronisation */
		if (!tl_pidfd_wait(*pfd, 1)) {
			st = tl_reap(c);
			fail_msg("run %d: the controller ended by itself (status 0x%x, phase %s)",
				 run, st, phase_names[shm->phase]);
		}
	}
	return c;
}

static void test_controller_killed_at_random(void **state)
{
	int shmfd, counts[PH_N] = {0}, run, b_died = 0, b_none = 0, in_call = 0;
	struct ctl_shm *shm;
	struct tl_proc *a;
	long long t0 = tl_now_ms();

	(void)state;
	tl_require_root();
	if (!tl_env_int("TL_FAULTS_RANDOM", 1)) {
		print_message("skipped: TL_FAULTS_RANDOM=0\n");
		skip();
	}
	tl_watchdog_extend(60 + runs * 3);
	a = tl_start_target(tl.target, 1);
	tl_send(a, "forkloop");
	tl_expect(a, "forkloop");
	shmfd = memfd_create("tl_faults", 0);
	assert_true(shmfd >= 0);
	assert_int_equal(ftruncate(shmfd, 4096), 0);
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, shmfd, 0);
	assert_true(shm != MAP_FAILED);
	for (run = 0; run < runs; run++) {
		/*
		 * A random point: 0-4 ms into the call of a phase (in turn) of
		 * the first or second cycle; the controller waits after that
		 * call, so a short one is killed right after it returned.
		 */
		int st, found, pfd, rel[2], delay = rnd(5);
		char what[128];
		int want = ctl_want(run), cycle = rnd(2);
		pid_t c, b;

		assert_int_equal(pipe2(rel, O_CLOEXEC), 0);
		c = ctl_start(shm, shmfd, a->pid, rel[0], want, cycle, run, &pfd);
		close(rel[0]);
		assert_int_equal(write(rel[1], "g", 1), 1); /* the call starts */
		/* the controller must not end first */
		if (!tl_pidfd_wait(pfd, delay)) {
			st = tl_reap(c);
			fail_msg("run %d: the controller ended by itself (status 0x%x, phase %s)",
				 run, st, phase_names[shm->phase]);
		}
		tl_pidfd_kill(pfd, SIGKILL);
		st = tl_reap(c);
		close(rel[1]);
		assert_true(WIFSIGNALED(st));
		counts[shm->phase]++;
		in_call += shm->held == 1;
		b = shm->b;
		if (tl_wait_tracers_gone(tl.timeout_ms, &found))
			fail_msg("run %d: tnfctl-engine did not exit after its controller died",
				 run);
		/* the exec'd target of the cycle (reparented to us) dies */
		if (b > 0) {
			tl_assert_exits(b, "exec'd target after the controller died");
			b_died++;
		} else {
			b_none++;
		}
		tl_reap_children();
		snprintf(what, sizeof(what), "run %d, after the controller died in %s (cycle %d)",
			 run, phase_names[shm->phase], shm->cycles);
		assert_nothing_stopped(what);
		/* the attached target runs on, untraced, and so does its fork loop */
		tl_assert_running(a->pid, "attached target after the controller died");
		tl_send(a, "tracer");
		assert_string_equal(tl_expect(a, "tracer"), "tracer 0");
		assert_forkloop_runs(a);
		/* the only processes left are the attached target and its children */
		{
			struct tl_pinfo *ps;
			int i, n = tl_subtree(&ps);

			for (i = 0; i < n; i++)
				if (ps[i].pid != a->pid && ps[i].ppid != a->pid &&
				    ps[i].state != 'Z')
					tl_assert_exits(ps[i].pid,
							"a process of the dead controller");
			free(ps);
		}
		tl_reap_children();
	}
	print_message("# controller killed: %d runs (TL_SEED %u), %d s; killed in:", runs, seed0,
		      (int)((tl_now_ms() - t0) / 1000));
	for (run = 0; run < PH_N; run++)
		print_message(" %s %d,", phase_names[run], counts[run]);
	print_message(" %d inside the call, %d after it; exec'd targets died %d (none yet %d); 0 "
		      "left stopped or traced\n",
		      in_call, runs - in_call, b_died, b_none);
	munmap((void *)shm, 4096);
	close(shmfd);
	assert_every_phase("controller killed", counts, runs);
}

/*
 * Pidfds of the live tnfctl-engines of the test's subtree (reparented to
 * it), at most @max; their number.  An engine ending may be one of them.
 */
static int engine_fds(int *fds, int max)
{
	struct tl_pinfo *ps;
	int i, ne = 0, n = tl_subtree(&ps);

	for (i = 0; i < n && ne < max; i++)
		if (tl_is_tracer(&ps[i]) && ps[i].state != 'Z' && ps[i].state != 'X') {
			fds[ne] = tl_pidfd_open(ps[i].pid);
			if (fds[ne] >= 0)
				ne++;
		}
	free(ps);
	return ne;
}

/*
 * The engine SIGKILLed at random points of the controller's cycle (its
 * phases as above; TL_ENGINE_KILL_RUNS runs, a fifth of TL_FAULT_RUNS by
 * default but one a phase at least, 100 in make stress): no call hangs
 * (each fails, or a later open starts a new engine and the controller
 * goes on), nothing is left stopped or traced,
 * the attached target runs on untraced and its fork loop with it, the
 * exec'd one dies with the engine.  The controller is then killed if it is
 * still running (a controller death, as above).
 */
static void test_engine_killed_at_random(void **state)
{
	/* each run waits for the killed engine's exit, slow while its uprobe links go */
	int runs = tl_env_int("TL_ENGINE_KILL_RUNS", (runs_all + 4) / 5 > PH_N - PH_PID_OPEN
							     ? (runs_all + 4) / 5
							     : PH_N - PH_PID_OPEN);
	int shmfd, counts[PH_N] = {0}, run, failed = 0, went_on = 0, in_call = 0;
	struct ctl_shm *shm;
	struct tl_proc *a;
	long long t0 = tl_now_ms();

	(void)state;
	tl_require_root();
	if (!tl_env_int("TL_FAULTS_RANDOM", 1)) {
		print_message("skipped: TL_FAULTS_RANDOM=0\n");
		skip();
	}
	tl_watchdog_extend(60 + runs * 3);
	a = tl_start_target(tl.target, 1);
	tl_send(a, "forkloop");
	tl_expect(a, "forkloop");
	shmfd = memfd_create("tl_faults", 0);
	assert_true(shmfd >= 0);
	assert_int_equal(ftruncate(shmfd, 4096), 0);
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, shmfd, 0);
	assert_true(shm != MAP_FAILED);
	for (run = 0; run < runs; run++) {
		int st, pfd, efds[8], ne = 0, k, rel[2], delay = rnd(5), phase, cycles;
		int want = ctl_want(run), cycle = rnd(2);
		char what[160];
		long long end;
		pid_t c;

		assert_int_equal(pipe2(rel, O_CLOEXEC), 0);
		c = ctl_start(shm, shmfd, a->pid, rel[0], want, cycle, run, &pfd);
		close(rel[0]);
		/* the engine of the open handle, before the call (the opens start their own) */
		if (want != PH_PID_OPEN && want != PH_EXEC_OPEN && !(ne = engine_fds(efds, 8)))
			fail_msg("run %d: no engine under the open handle (phase %s)", run,
				 phase_names[want]);
		assert_int_equal(write(rel[1], "g", 1), 1); /* the call starts */
		if (!tl_pidfd_wait(pfd, delay)) {
			st = tl_reap(c);
			fail_msg("run %d: the controller ended by itself (status 0x%x, phase %s)",
				 run, st, phase_names[shm->phase]);
		}
		/* an open's: the controller waits after the call, with its engine */
		end = tl_now_ms() + tl.timeout_ms;
		while (!ne && !(ne = engine_fds(efds, 8))) {
			if (tl_now_ms() > end)
				fail_msg("run %d: no engine to kill (phase %s)", run,
					 phase_names[shm->phase]);
			tl_pidfd_wait(pfd, 1);
		}
		phase = shm->phase;
		cycles = shm->cycles;
		counts[phase]++;
		in_call += shm->held == 1;
		for (k = 0; k < ne; k++) {
			tl_pidfd_kill(efds[k], SIGKILL);
			close(efds[k]);
		}
		close(rel[1]); /* the controller goes on after the call */
		/* a call fails and it exits, or it has gone on with a new engine */
		end = tl_now_ms() + tl.timeout_ms;
		while (tl_pidfd_wait(pfd, 1) && shm->cycles < cycles + 2)
			if (tl_now_ms() > end)
				fail_msg("run %d: the controller neither failed nor went on after "
					 "its engine died in %s",
					 run, phase_names[phase]);
		if (tl_pidfd_wait(pfd, 0)) {
			went_on++;
			tl_pidfd_kill(pfd, SIGKILL);
		} else {
			failed++;
		}
		st = tl_reap(c);
		if (tl_wait_tracers_gone(tl.timeout_ms, NULL))
			fail_msg("run %d: an engine stayed after its controller was gone", run);
		tl_reap_children();
		snprintf(what, sizeof(what), "run %d, after the engine died in %s (cycle %d)", run,
			 phase_names[phase], cycles);
		assert_nothing_stopped(what);
		tl_assert_running(a->pid, "attached target after the engine died");
		tl_send(a, "tracer");
		assert_string_equal(tl_expect(a, "tracer"), "tracer 0");
		assert_forkloop_runs(a);
		{
			struct tl_pinfo *ps;
			int i, n = tl_subtree(&ps);

			for (i = 0; i < n; i++)
				if (ps[i].pid != a->pid && ps[i].ppid != a->pid &&
				    ps[i].state != 'Z')
					tl_assert_exits(ps[i].pid,
							"a process of the dead engine's");
			free(ps);
		}
		tl_reap_children();
	}
	print_message("# engine killed: %d runs (TL_SEED %u), %d s; killed in:", runs, seed0,
		      (int)((tl_now_ms() - t0) / 1000));
	for (run = 0; run < PH_N; run++)
		print_message(" %s %d,", phase_names[run], counts[run]);
	print_message(" %d inside the call, %d after it; the controller failed a call %d, went on "
		      "%d; 0 left stopped or traced\n",
		      in_call, runs - in_call, failed, went_on);
	munmap((void *)shm, 4096);
	close(shmfd);
	assert_every_phase("engine killed", counts, runs);
}

/* ------------------------------------------------------------------ */
/* 2. the target killed at random points */

struct killer {
	int pidfd;
	int delay_ms;
	int wake[2]; /* closed by the test to stop waiting */
};

static void *killer_fn(void *arg)
{
	struct killer *k = arg;
	struct pollfd pfd[2] = {{.fd = k->pidfd, .events = POLLIN},
				{.fd = k->wake[0], .events = POLLIN}};

	/* a timed wait on the target and on the test: the random point */
	if (poll(pfd, 2, k->delay_ms) == 0)
		tl_pidfd_kill(k->pidfd, SIGKILL);
	return NULL;
}

enum {
	OUT_OPEN_NOPROC,
	OUT_CONT_NOPROC,
	OUT_TARGGONE,
	OUT_EXIT,
	OUT_SURVIVED,
	OUT_N
};

static void test_target_killed_at_random(void **state)
{
	static const char *const names[OUT_N] = {"pid_open NOPROCESS", "continue NOPROCESS",
						 "TARGGONE (SIGKILL)", "EXIT",
						 "killed after close"};
	int run, outcome[OUT_N] = {0}, events = 0, exec_runs = 0, open_ms;
	long long t0 = tl_now_ms(), longest = 0;

	(void)state;
	tl_require_root();
	if (!tl_env_int("TL_FAULTS_RANDOM", 1)) {
		print_message("skipped: TL_FAULTS_RANDOM=0\n");
		skip();
	}
	tl_watchdog_extend(60 + runs * 2);
	/*
	 * How long a pid_open takes here (a helper start, BPF loaded): the
	 * kill instants of pid_open runs spread over it and the continues after.
	 */
	{
		struct tl_proc *c = tl_start_target(tl.target, 1);
		tnfctl_handle_t *ch;
		long long o0;

		tl_send(c, "forkloop");
		tl_expect(c, "forkloop");
		o0 = tl_now_ms();

		tl_assert_err(tnfctl_pid_open(c->pid, &ch), TNFCTL_ERR_NONE);
		open_ms = tl_now_ms() - o0;
		tl_assert_err(tnfctl_close(ch, TNFCTL_TARG_RESUME), TNFCTL_ERR_NONE);
		kill(c->pid, SIGKILL);
		tl_reap(c->pid);
		tl_reap_children();
	}
	for (run = 0; run < runs; run++) {
		struct killer k = {.delay_ms = run % 2 ? rnd(60) : rnd(2 * open_ms + 60)};
		tnfctl_handle_t *h = NULL;
		tnfctl_errcode_t err;
		tnfctl_event_t evt;
		struct tl_proc *p = NULL;
		pthread_t kt;
		pid_t pid;
		int i, done = 0, exec_mode = run % 2;
		long long c0;

		if (exec_mode) {
			char *argv[] = {"sh", "-c", "while :; do /bin/true; done", NULL};

			exec_runs++;
			tl_assert_err(tnfctl_exec_open("/bin/sh", argv, NULL, NULL, NULL, &h),
				      TNFCTL_ERR_NONE);
			pid = tl_targ_pid(h);
			tl_track_pid(pid);
		} else {
			p = tl_start_target(tl.target, 1);
			tl_send(p, "forkloop");
			tl_expect(p, "forkloop");
			pid = p->pid;
		}
		k.pidfd = tl_pidfd_of(pid);
		assert_true(k.pidfd >= 0);
		assert_int_equal(pipe2(k.wake, O_CLOEXEC), 0);
		assert_int_equal(pthread_create(&kt, NULL, killer_fn, &k), 0);
		if (!exec_mode) {
			c0 = tl_now_ms();
			err = tnfctl_pid_open(pid, &h);
			if (tl_now_ms() - c0 > longest)
				longest = tl_now_ms() - c0;
			if (err == TNFCTL_ERR_NOPROCESS) {
				outcome[OUT_OPEN_NOPROC]++;
				done = 1;
				h = NULL;
			} else if (err != TNFCTL_ERR_NONE) {
				fail_msg("run %d: pid_open: %s", run, tl_err_name(err));
			}
		}
		for (i = 0; !done && i < 1000; i++) {
			c0 = tl_now_ms();
			err = tnfctl_continue(h, &evt, NULL);
			if (tl_now_ms() - c0 > longest)
				longest = tl_now_ms() - c0;
			if (tl.wd_fired)
				fail_msg("run %d: tnfctl_continue hung", run);
			if (err == TNFCTL_ERR_NOPROCESS) {
				outcome[OUT_CONT_NOPROC]++;
				done = 1;
			} else if (err != TNFCTL_ERR_NONE) {
				fail_msg("run %d: continue: %s", run, tl_err_name(err));
			} else if (evt == TNFCTL_EVENT_TARGGONE) {
				tnfctl_event_info_t info;

				tl_info(h, &info);
				assert_int_equal(info.term_signal, SIGKILL);
				outcome[OUT_TARGGONE]++;
				done = 1;
			} else if (evt == TNFCTL_EVENT_EXIT) {
				outcome[OUT_EXIT]++;
				done = 1;
			} else if (evt != TNFCTL_EVENT_FORK) {
				fail_msg("run %d: unexpected event %s", run, tl_event_name(evt));
			} else {
				events++;
			}
		}
		if (h) {
			c0 = tl_now_ms();
			err = tnfctl_close(h, exec_mode ? TNFCTL_TARG_KILL : TNFCTL_TARG_RESUME);
			if (tl_now_ms() - c0 > longest)
				longest = tl_now_ms() - c0;
			if (err != TNFCTL_ERR_NONE)
				fail_msg("run %d: close: %s", run, tl_err_name(err));
		}
		if (!done)
			outcome[OUT_SURVIVED]++;
		/* the killer fires now if it has not yet */
		tl_pidfd_kill(k.pidfd, SIGKILL);
		close(k.wake[1]);
		pthread_join(kt, NULL);
		close(k.wake[0]);
		tl_assert_exits(pid, "target after SIGKILL");
		tl_reap_children();
		assert_nothing_stopped("after the target was killed");
		if (p) {
			tl_proc_close_fds(p);
			p->used = 0;
		}
	}
	print_message("# target killed: %d runs (TL_SEED %u, %d exec_open, %d pid_open, a pid_open "
		      "took %d ms), %d FORK "
		      "events on the way, longest call %lld ms, %d s; outcomes:",
		      runs, seed0, exec_runs, runs - exec_runs, open_ms, events, longest,
		      (int)((tl_now_ms() - t0) / 1000));
	for (run = 0; run < OUT_N; run++)
		print_message(" %s %d,", names[run], outcome[run]);
	print_message(" hangs 0\n");
}

/* ------------------------------------------------------------------ */
/* 3. awkward targets */

/* Attach, one FORK, detach; then it must run, untraced. */
static void attach_fork_detach(struct tl_proc *p, tnfctl_targ_op_t op)
{
	tnfctl_handle_t *h = tl_pid_open(p->pid);

	tl_assert_all_stopped(p->pid, "after pid_open");
	tl_send(p, "fork 3");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_close(h, op);
	tl_expect(p, "child");
	assert_string_equal(strstr(tl_expect(p, "forked"), "status"), "status 3");
}

static void test_target_blocks_every_signal(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_event_info_t info;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	tl_send(p, "sigblockall");
	tl_expect(p, "sigblocked");
	attach_fork_detach(p, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "after close RESUME");
	/* SUSPEND leaves a stop the blocked mask cannot hide; a new handle takes it */
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after close SUSPEND");
	h = tl_pid_open(p->pid);
	tl_send(p, "exit 4");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 4);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(WEXITSTATUS(tl_reap(p->pid)), 4);
}

static void test_target_ignores_sigcont(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	tl_send(p, "sigign %d", SIGCONT);
	tl_expect(p, "sigign");
	attach_fork_detach(p, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "after close RESUME");
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	tl_assert_job_stopped(p->pid, "after close SUSPEND");
	/* attached in its job-control stop, then resumed: SIG_IGN does not matter */
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "after close RESUME of a SIGCONT-ignoring target");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

static void test_target_job_stopped_when_attached(void **state)
{
	long long end;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	kill(p->pid, SIGSTOP);
	end = tl_now_ms() + tl.timeout_ms;
	while (!tl_threads_are(p->pid, TL_JOB_STOPPED))
		if (tl_now_ms() > end)
			fail_msg("the target never entered its job-control stop");
		else
			poll(NULL, 0, 2);
	attach_fork_detach(p, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "after close RESUME of a target attached in a job stop");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

/* ------------------------------------------------------------------ */
/* 4. pid reuse */

/*
 * A child of ours (blocked in read) that has pid @want; -1 if it cannot be
 * had.  Once *@hold_w is closed it ends with status 0, after forking a
 * child and reaping it first if @forks (status 3 if that fork failed).
 */
static pid_t fork_with_pid(pid_t want, bool forks, int *hold_w)
{
	int i;

	for (i = 0; i < 200; i++) {
		char buf[16];
		int fd, pp[2], n;
		pid_t c;

		fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		n = snprintf(buf, sizeof(buf), "%d", want - 1);
		if (pipe2(pp, O_CLOEXEC)) {
			close(fd);
			return -1;
		}
		if (write(fd, buf, n) != n) {
			close(fd);
			close(pp[0]);
			close(pp[1]);
			return -1;
		}
		close(fd);
		c = fork();
		if (c == 0) {
			char x;

			close(pp[1]);
			while (read(pp[0], &x, 1) < 0 && errno == EINTR)
				;
			if (forks) {
				/* the raw syscall: nothing of the runtime's around it */
				pid_t g = syscall(SYS_fork);

				if (g == 0)
					_exit(0);
				if (g < 0 || waitpid(g, NULL, 0) != g)
					_exit(3);
			}
			_exit(0);
		}
		close(pp[0]);
		if (c == want) {
			tl_track_pid(c);
			*hold_w = pp[1];
			return c;
		}
		close(pp[1]);
		waitpid(c, NULL, 0);
	}
	return -1;
}

/* The new owner of the pid was not touched: alive, running, untraced. */
static void check_new_owner(pid_t pid, int hold_w, const char *what)
{
	int st;

	tl_assert_running(pid, what);
	assert_int_equal(tl_tracer_pid(pid), 0);
	close(hold_w);
	st = tl_reap(pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s: the process that reused pid %d ended with status 0x%x (killed?)",
			 what, pid, st);
}

/* EXIT, the pid reused, then late calls and close(KILL) on the old handle. */
static void test_pid_reuse_after_exit(void **state)
{
	tnfctl_handle_t *h;
	tnfctl_event_t evt;
	struct tl_proc *p;
	pid_t pid, n;
	int hold;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	pid = p->pid;
	h = tl_pid_open(pid);
	tl_send(p, "exit 5");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	assert_int_equal(WEXITSTATUS(tl_reap(pid)), 5);
	n = fork_with_pid(pid, false, &hold);
	if (n < 0) {
		print_message("SKIP: could not get pid %d again\n", pid);
		skip();
	}
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_BADARG);
	tl_assert_running(n, "the new owner of the pid after a late tnfctl_continue");
	tl_close(h, TNFCTL_TARG_KILL);
	check_new_owner(n, hold, "after tnfctl_close(KILL) of the old handle");
}

/*
 * EXIT taken and the handle still open, the pid reused by a process that
 * forks: the new owner is neither stopped nor traced.  The kernel side kept
 * the old process's entry, armed by the continue, until the handle was
 * closed, and took the new owner's fork for the old target's: a SIGSTOP
 * to a process nobody traces (a job-control stop its parent sees).
 */
static void test_pid_reuse_new_owner_forks(void **state)
{
	tnfctl_handle_t *h;
	struct tl_proc *p;
	pid_t pid, n;
	int hold, st;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	pid = p->pid;
	h = tl_pid_open(pid);
	tl_send(p, "exit 5");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	assert_int_equal(WEXITSTATUS(tl_reap(pid)), 5);
	n = fork_with_pid(pid, true, &hold);
	if (n < 0) {
		print_message("SKIP: could not get pid %d again\n", pid);
		tl_close(h, TNFCTL_TARG_DEFAULT);
		skip();
	}
	close(hold);
	/* it ends, or it stops: WUNTRACED reports either */
	assert_int_equal(tl_waitpid_timeout(n, &st, WUNTRACED, tl.timeout_ms), n);
	if (WIFSTOPPED(st))
		fail_msg("pid %d, reused by an untraced process, was stopped by signal %d when it "
			 "forked",
			 n, WSTOPSIG(st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * An exec_open'd target killed while stopped (no event taken), reaped, its
 * pid reused: tnfctl_continue says NOPROCESS (or TARGGONE), and close
 * DEFAULT (which kills an exec_open'd target) must not kill the new owner.
 */
static void test_pid_reuse_after_kill(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;
	tnfctl_event_t evt;
	pid_t pid, n;
	int hold, st;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	pid = p->pid;
	tl_assert_all_stopped(pid, "after exec_open");
	tl_pidfd_kill(p->pidfd, SIGKILL);
	/* ours (exec_open forks from the caller): reaped once the tracer lets go */
	assert_int_equal(tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms), pid);
	assert_true(WIFSIGNALED(st));
	n = fork_with_pid(pid, false, &hold);
	if (n < 0) {
		print_message("SKIP: could not get pid %d again\n", pid);
		tl_close(h, TNFCTL_TARG_DEFAULT);
		skip();
	}
	err = tnfctl_continue(h, &evt, NULL);
	if (err != TNFCTL_ERR_NOPROCESS &&
	    !(err == TNFCTL_ERR_NONE && evt == TNFCTL_EVENT_TARGGONE))
		fail_msg("continue after the target was killed and its pid reused: %s, event %s",
			 tl_err_name(err), err ? "-" : tl_event_name(evt));
	tl_assert_running(n, "the new owner of the pid after a late tnfctl_continue");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	check_new_owner(n, hold, "after tnfctl_close(DEFAULT) of the old exec_open handle");
}

/*
 * The BPF map of tracked processes of this test's tracer helper (found by
 * its name and value size among the helper's descriptors), or -1.
 */
static int helper_tracked_map(void)
{
	struct tl_pinfo *ps;
	int i, n, fd = -1;

	n = tl_subtree(&ps);
	for (i = 0; i < n && fd < 0; i++) {
		char path[64], line[128];
		struct dirent *de;
		DIR *d;

		if (!tl_is_tracer(&ps[i]) || ps[i].state == 'Z')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo", ps[i].pid);
		d = opendir(path);
		while (d && fd < 0 && (de = readdir(d))) {
			char fpath[320];
			unsigned int id = 0;
			FILE *f;

			snprintf(fpath, sizeof(fpath), "%s/%s", path, de->d_name);
			f = fopen(fpath, "re");
			while (f && fgets(line, sizeof(line), f))
				if (sscanf(line, "map_id: %u", &id) == 1)
					break;
			if (f)
				fclose(f);
			if (id) {
				struct bpf_map_info info = {0};
				__u32 len = sizeof(info);
				int mfd = bpf_map_get_fd_by_id(id);

				if (mfd >= 0 && !bpf_obj_get_info_by_fd(mfd, &info, &len) &&
				    !strcmp(info.name, "tracked") &&
				    info.value_size == sizeof(struct tnf_tgid_state))
					fd = mfd;
				else if (mfd >= 0)
					close(mfd);
			}
		}
		if (d)
			closedir(d);
	}
	free(ps);
	return fd;
}

/* A child of ours that waits on *go_w, then forks once, reaps that child and exits 0. */
static pid_t fork_on_go(int *go_w)
{
	int pp[2];
	pid_t c;

	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		char x;
		pid_t g;

		close(pp[1]);
		while (read(pp[0], &x, 1) < 0 && errno == EINTR)
			;
		g = fork();
		if (g == 0)
			_exit(0);
		_exit(g > 0 && waitpid(g, NULL, 0) == g ? 0 : 1);
	}
	close(pp[0]);
	tl_track_pid(c);
	*go_w = pp[1];
	return c;
}

static unsigned long long proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	assert_true(tl_read_file(path, buf, sizeof(buf)) > 0);
	p = strrchr(buf, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 1,
				" %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
				"%*d %*d %*d %*d %*d %llu",
				&t),
			 1);
	return t;
}

/*
 * An entry of the tracked map left by a process whose pid was then reused
 * (the helper untracks a dead target at once, but the pid may be reused
 * before it gets there) must never stop the pid's new owner, whatever its
 * flags say: the BPF side checks the process's start time.  Stale entries
 * were seen stopping foreign processes (a shell of another test, left in a
 * group-stop for good).  The control: the same entry with the right start
 * time does stop the process at its fork, so the check is what saves it.
 */
static void test_stale_entry_never_stops_a_stranger(void **state)
{
	struct tnf_tgid_state ent = {.flags = TNF_F_ARMED}, got;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int mfd, go, st;
	uint32_t key;
	pid_t q, w;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	mfd = helper_tracked_map();
	if (mfd < 0)
		fail_msg("the tracer helper's map of tracked processes was not found");

	/* a stranger: its pid in the map, with another process's start time */
	q = fork_on_go(&go);
	key = q;
	ent.start_ticks = proc_start_ticks(q) + 1;
	assert_int_equal(bpf_map_update_elem(mfd, &key, &ent, BPF_ANY), 0);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	w = tl_waitpid_timeout(q, &st, 0, tl.timeout_ms);
	if (w != q) {
		char desc[256];

		fail_msg("a process whose pid had a stale entry did not finish its fork: %s",
			 tl_describe(q, desc, sizeof(desc)));
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_not_equal(bpf_map_lookup_elem(mfd, &key, &got), 0); /* dropped */

	/* the control: the right start time, and the fork stops it */
	q = fork_on_go(&go);
	key = q;
	ent.start_ticks = proc_start_ticks(q);
	assert_int_equal(bpf_map_update_elem(mfd, &key, &ent, BPF_ANY), 0);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	if (tl_waitpid_timeout(q, &st, WUNTRACED, tl.timeout_ms) != q || !WIFSTOPPED(st)) {
		char desc[256];

		fail_msg("the control: an armed entry with its own start time did not stop it: %s",
			 tl_describe(q, desc, sizeof(desc)));
	}
	bpf_map_delete_elem(mfd, &key);
	kill(q, SIGKILL);
	tl_reap(q);
	tl_reap_children();
	close(mfd);
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "the attached target");
}

static int self_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

struct cont_res {
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
	int e;
};

static void *cont_thread(void *arg)
{
	struct cont_res *c = arg;
	tnfctl_event_t ev;

	c->err = tnfctl_continue(c->h, &ev, NULL);
	c->e = errno;
	return NULL;
}

/*
 * The engine killed while a tnfctl_continue waits: INTERNAL with errno
 * ECONNRESET, as libtnfctl(3) says, so that a tool can say the engine
 * ended.  BUG (fixed): the wait's last step (taking a pending wake-up
 * signal) left errno EAGAIN, and tnfctl-follow said "internal error".
 */
static void test_engine_killed_during_continue_econnreset(void **state)
{
	struct tl_proc *p;
	struct cont_res c = {0};
	pthread_t th;
	pid_t engine;
	int efd;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	c.h = tl_pid_open(p->pid);
	engine = tl_tracer_pid(p->pid);
	assert_true(engine > 0);
	th = tl_thread_start(cont_thread, &c);
	/* the target resumed: the continue is in its wait */
	tl_send(p, "ping");
	tl_expect(p, "pong");
	efd = tl_pidfd_open(engine);
	assert_true(efd >= 0);
	tl_pidfd_kill(efd, SIGKILL);
	assert_int_equal(tl_pidfd_wait(efd, tl.timeout_ms), 0);
	close(efd);
	tl_thread_join(th);
	tl_assert_err(c.err, TNFCTL_ERR_INTERNAL);
	if (c.e != ECONNRESET)
		fail_msg("errno after the engine's death: %s, expected ECONNRESET", strerror(c.e));
	tl_untrack_handle(c.h);
	tl_assert_err(tnfctl_close(c.h, TNFCTL_TARG_DEFAULT), TNFCTL_ERR_INTERNAL);
	tl_assert_running(p->pid, "the attached target after the engine's death");
}

/*
 * The engine killed under an exec_open'd target: the target dies with it,
 * and the close (INTERNAL) still reaps it and drops the pidfd the library
 * held for it.  BUG (fixed): the close skipped both, and each such target
 * stayed a zombie with a descriptor open for good.
 */
static void test_engine_killed_exec_opened_reaped(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_trace_attrs_t at;
	tnfctl_handle_t *h;
	int fds, efd;
	pid_t engine;

	(void)state;
	tl_require_root();
	fds = self_fds();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_trace_attrs_get(h, &at), TNFCTL_ERR_NONE);
	engine = tl_tracer_pid(at.targ_pid);
	assert_true(engine > 0);
	efd = tl_pidfd_open(engine);
	assert_true(efd >= 0);
	tl_pidfd_kill(efd, SIGKILL);
	assert_int_equal(tl_pidfd_wait(efd, tl.timeout_ms), 0);
	close(efd);
	tl_untrack_handle(h);
	tl_assert_err(tnfctl_close(h, TNFCTL_TARG_DEFAULT), TNFCTL_ERR_INTERNAL);
	errno = 0;
	assert_int_equal(waitpid(at.targ_pid, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD); /* reaped by the close */
	/* its two pipe ends handed over to it, the test's own pidfd of it (tl_proc) */
	assert_int_equal(self_fds(), fds - 2 + 1);
	tl_proc_handed_over(p);
}

/*
 * An exec_open'd target released alive (RESUME) is the application's to
 * reap: the pidfd the library held for it goes with the handle.  BUG
 * (fixed): it stayed open, one descriptor per such close, for good.
 */
static void test_exec_opened_resumed_holds_no_descriptor(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_trace_attrs_t at;
	tnfctl_handle_t *h;
	int fds;

	(void)state;
	tl_require_root();
	fds = self_fds();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_trace_attrs_get(h, &at), TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_RESUME);
	/* its two pipe ends handed over to it, the test's own pidfd of it (tl_proc) */
	assert_int_equal(self_fds(), fds - 2 + 1);
	p->pid = at.targ_pid;
	tl_send(p, "exit 0");
	assert_int_equal(WEXITSTATUS(tl_reap(at.targ_pid)), 0);
}

/* The pid of this test's tracer helper, or -1. */
static pid_t helper_pid(void)
{
	struct tl_pinfo *ps;
	int i, n = tl_subtree(&ps);
	pid_t pid = -1;

	for (i = 0; i < n; i++)
		if (tl_is_tracer(&ps[i]) && ps[i].state != 'Z')
			pid = ps[i].pid;
	free(ps);
	return pid;
}

/*
 * The helper killed under an open handle (the OOM killer, a stray kill):
 * the old handle's calls fail and its close still works, and the next open
 * starts a new helper instead of failing INTERNAL for ever, as it did.
 */
static void test_helper_killed_next_open_works(void **state)
{
	struct tl_proc *p, *q;
	tnfctl_handle_t *h, *h2;
	tnfctl_event_t evt;
	pid_t hp;
	int fd;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	hp = helper_pid();
	assert_true(hp > 0);
	fd = tl_pidfd_open(hp);
	assert_true(fd >= 0);
	tl_pidfd_kill(fd, SIGKILL);
	assert_int_equal(tl_pidfd_wait(fd, tl.timeout_ms), 0);
	close(fd);
	tl_reap_children();
	assert_int_not_equal(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	/* a new open, while the old handle is still open */
	q = tl_start_target(tl.target, 1);
	tl_assert_err(tnfctl_pid_open(q->pid, &h2), TNFCTL_ERR_NONE);
	assert_int_not_equal(helper_pid(), hp);
	tl_assert_all_stopped(q->pid, "a target opened after the helper was killed");
	tl_close(h2, TNFCTL_TARG_RESUME);
	tnfctl_close(h, TNFCTL_TARG_RESUME); /* frees it, whatever it says */
	tl_untrack_handle(h);
	tl_assert_running(q->pid, "the second target after its close");
	/*
	 * The first target, attached when the helper died: the kernel's detach
	 * (and the library's SIGCONT, for a stop BPF may have sent) let it
	 * run.  No SIGCONT from here, which hid any stop left behind: it
	 * answers, and is neither stopped nor traced.
	 */
	tl_send(p, "ping");
	tl_expect(p, "pong");
	tl_assert_running(p->pid, "the first target after its helper was killed");
	if (tl_wait_tracers_gone(tl.timeout_ms, NULL))
		fail_msg("a tracer helper is left after every handle was closed");
}

/* Waits for task @tid of @pid to be in state @st (/proc: no event tells). */
static void wait_state(pid_t pid, pid_t tid, char st, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;

	while (tl_task_state(pid, tid) != st) {
		if (tl_now_ms() > end)
			fail_msg("%s (pid %d): state %c, not %c after %d ms", what, (int)pid,
				 tl_task_state(pid, tid), st, tl.timeout_ms);
		poll(NULL, 0, 1); /* polling interval, not a synchronisation */
	}
}

struct cont_arg {
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
};

static void *continue_once(void *arg)
{
	struct cont_arg *c = arg;
	tnfctl_event_t evt;

	c->err = tnfctl_continue(c->h, &evt, NULL);
	return NULL;
}

/*
 * BUG (fixed): the engine killed after BPF stopped a target at an event
 * and before the engine collected that stop left the target stopped for
 * good: the kernel, detaching it, delivers the SIGSTOP it was reporting,
 * and nobody ends that job-control stop (adversarial helper: 3 in 60
 * random kills).  Made certain here: the engine is frozen (SIGSTOP), the
 * target forks (BPF stops it at the FORK), then the engine is killed.  The
 * library, seeing the engine gone, resumes the target.
 */
static void test_engine_killed_with_a_stop_pending(void **state)
{
	struct cont_arg c = {0};
	struct tl_proc *p;
	pthread_t t;
	pid_t hp;
	int fd;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	c.h = tl_pid_open(p->pid);
	hp = helper_pid();
	assert_true(hp > 0);
	fd = tl_pidfd_open(hp);
	assert_true(fd >= 0);
	t = tl_thread_start(continue_once, &c);
	tl_send(p, "ping");
	tl_expect(p, "pong"); /* running, under the continue */
	tl_pidfd_kill(fd, SIGSTOP);
	wait_state(hp, hp, 'T', "the frozen engine");
	tl_send(p, "fork 0");
	/* stopped by BPF at its fork, a stop the frozen engine cannot collect */
	wait_state(p->pid, p->pid, 't', "the target at its FORK");
	tl_pidfd_kill(fd, SIGKILL);
	assert_int_equal(tl_pidfd_wait(fd, tl.timeout_ms), 0);
	close(fd);
	tl_thread_join(t);
	assert_int_equal(c.err, TNFCTL_ERR_INTERNAL);
	/* resumed: it finishes the fork it was stopped in, and answers */
	tl_expect(p, "child ");
	tl_expect(p, "forked ");
	tl_send(p, "ping");
	tl_expect(p, "pong");
	assert_nothing_stopped("after the engine was killed with a stop pending");
	tnfctl_close(c.h, TNFCTL_TARG_RESUME); /* frees it, whatever it says */
	tl_untrack_handle(c.h);
}

/* ------------------------------------------------------------------ */
/* 5. a full ring buffer */

/*
 * Everything is gathered, the watch closed and the log freed, before the
 * first check: a failed check leaves nothing allocated behind it.
 */
static void test_full_ring_watch_and_stopping(void **state)
{
	char log[64], nsh[] = "50", nb[] = "200", nt[] = "2", nf[] = "50";
	char *argv[] = {self_exe, "--wl", "storm", nsh, nb, nt, nf, log, NULL};
	uint64_t lost0 = tnfctl_events_lost(), klost, wlost, wlost_now;
	char **exp, **env, serrmsg[sizeof(st_ev.errmsg)], werrmsg[sizeof(st_ev.errmsg)];
	int nexp, delivered, serrors, werrors, collected;
	struct st_result rs, rw;
	tnfctl_errcode_t err;
	tnfctl_watch_t *w;
	tnfctl_handle_t *h;
	pid_t root;

	(void)state;
	tl_require_root();
	tl_require_watch();
	st_raise_nofile();
	st_new_log(log, sizeof(log));
	st_reset();
	env = st_workload_env(tl.probe);
	err = tnfctl_exec_open(self_exe, argv, env, NULL, NULL, &h);
	free(env);
	tl_assert_err(err, TNFCTL_ERR_NONE);
	root = tl_targ_pid(h);
	tl_track_pid(root);
	/* the same tree, watched through a 4 KiB ring nobody reads until the end */
	setenv("TNFCTL_WATCH_RINGBUF", "4096", 1);
	err = tnfctl_watch_open(root, 0, &w);
	unsetenv("TNFCTL_WATCH_RINGBUF");
	if (err != TNFCTL_ERR_NONE) {
		tnfctl_close(h, TNFCTL_TARG_KILL);
		fail_msg("tnfctl_watch_open: %s", tl_err_name(err));
	}
	/* the stopping mode: the followers own the handles from here */
	st_spawn(h, root);
	if (st_wait_followers(6 * tl.timeout_ms)) {
		tnfctl_watch_close(w);
		fail_msg("the followers did not all end");
	}
	klost = tnfctl_events_lost() - lost0;
	serrors = st_ev.errors;
	snprintf(serrmsg, sizeof(serrmsg), "%s", st_ev.errmsg);
	nexp = st_read_log(log, &exp);
	unlink(log);
	st_compare(exp, nexp, &rs);
	/* the watch: what it delivered and what it says it lost */
	st_reset();
	collected = st_collect_watch(w, tl.timeout_ms, false, root);
	wlost = st_ev.lost;
	wlost_now = tnfctl_watch_lost(w);
	tnfctl_watch_close(w);
	werrors = st_ev.errors;
	snprintf(werrmsg, sizeof(werrmsg), "%s", st_ev.errmsg);
	pthread_mutex_lock(&st_ev.lock);
	delivered = st_ev.n;
	pthread_mutex_unlock(&st_ev.lock);
	st_compare(exp, nexp, &rw);
	st_free_lines(exp, nexp);

	print_message("# full ring, stopping mode: %d processes, %d events checked, %d lost, %d "
		      "misattributed, %llu kernel records lost\n",
		      rs.processes, rs.reported, rs.lost, rs.misattributed,
		      (unsigned long long)klost);
	if (serrors)
		fail_msg("stopping mode: %s", serrmsg);
	if (rs.lost)
		fail_msg("stopping mode: %d logged events not reported, the first \"%s\"", rs.lost,
			 rs.first_lost);
	if (rs.misattributed)
		fail_msg("stopping mode: %d reported events not in the log, the first \"%s\"",
			 rs.misattributed, rs.first_mis);
	assert_int_equal(klost, 0);
	print_message("# full ring, watch (4 KiB): %d of %d records delivered, %llu reported "
		      "lost, %d misattributed\n",
		      delivered, nexp, (unsigned long long)wlost, rw.misattributed);
	if (collected || werrors)
		fail_msg("watch: %s", werrmsg);
	assert_true(wlost > 0);
	if (rw.misattributed)
		fail_msg("watch: %d reported events not in the log, the first \"%s\"",
			 rw.misattributed, rw.first_mis);
	assert_int_equal(delivered + (int)wlost, nexp);
	assert_int_equal(wlost_now, wlost);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_stale_entry_never_stops_a_stranger),
		TL_TEST(test_helper_killed_next_open_works),
		TL_TEST(test_engine_killed_with_a_stop_pending),
		TL_TEST(test_engine_killed_exec_opened_reaped),
		TL_TEST(test_engine_killed_during_continue_econnreset),
		TL_TEST(test_exec_opened_resumed_holds_no_descriptor),
		TL_TEST(test_controller_killed_at_random),
		TL_TEST(test_engine_killed_at_random),
		TL_TEST(test_target_killed_at_random),
		TL_TEST(test_target_blocks_every_signal),
		TL_TEST(test_target_ignores_sigcont),
		TL_TEST(test_target_job_stopped_when_attached),
		TL_TEST(test_pid_reuse_after_exit),
		TL_TEST(test_pid_reuse_new_owner_forks),
		TL_TEST(test_pid_reuse_after_kill),
		TL_TEST(test_full_ring_watch_and_stopping),
		TL_FINAL_TEST,
	};

	if (argc == 5 && !strcmp(argv[1], "--ctl"))
		return ctl_main(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc >= 8 && !strcmp(argv[1], "--wl") && !strcmp(argv[2], "storm"))
		return st_workload(argv + 3);
	if (tl_self_exe(self_exe, sizeof(self_exe)))
		return 1;
	seed = seed0 = tl_env_int("TL_SEED", (int)time(NULL));
	runs = runs_all = tl_env_int("TL_FAULT_RUNS", 100);
	printf("# fault injection: seed %u (TL_SEED), %d runs (TL_FAULT_RUNS)\n", seed, runs);
	return tl_run(tests);
}
