// SPDX-License-Identifier: BSD-2-Clause
/*
 * One engine per user and privilege set (DESIGN section 2): callers share
 * it, one caller's death releases only its own targets, it lingers for the
 * time it is given and then ends, it serves no client of another user, a
 * root caller does not use a process of another user that holds its name,
 * and a client that reads nothing holds up no other.
 *
 * The callers are build/tests/helpers/tl_ctl (fresh processes), or this
 * test itself.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include "testlib.h"
#include "englib.h"

struct ctl {
	pid_t pid;
	struct tl_proc rep; /* only reply_r is used, to read its lines */
};

/*
 * tl_ctl @mode on the targets @t (NULL-ended; "stop": held stopped, "run":
 * in tnfctl_continue, "suspend": the first SUSPENDed), with
 * TNFCTL_ENGINE_LINGER=@linger (NULL: as inherited); its "opened" lines and
 * then @want awaited.
 */
static void ctl_run(struct ctl *c, const char *mode, const char *linger, const char *want,
		    struct tl_proc *const *t)
{
	char rfd[16], pids[4][16];
	char *argv[16] = {tl.ctl, tl.libctl, rfd, (char *)mode};
	const char *old = getenv("TNFCTL_ENGINE_LINGER");
	char *saved = old ? strdup(old) : NULL;
	int rep[2], keep[2], n = 4, i;
	char **env;

	memset(c, 0, sizeof(*c));
	if (pipe2(rep, O_CLOEXEC))
		abort();
	snprintf(rfd, sizeof(rfd), "%d", rep[1]);
	for (i = 0; t[i] && i < 4; i++) {
		snprintf(pids[i], sizeof(pids[i]), "%d", t[i]->pid);
		argv[n++] = "p";
		argv[n++] = pids[i];
	}
	argv[n] = NULL;
	keep[0] = rep[1];
	keep[1] = -1;
	if (linger)
		setenv("TNFCTL_ENGINE_LINGER", linger, 1);
	env = tl_env_build(NULL);
	c->pid = tl_spawn(argv, env, -1, keep);
	free(env);
	if (saved)
		setenv("TNFCTL_ENGINE_LINGER", saved, 1);
	else
		unsetenv("TNFCTL_ENGINE_LINGER");
	free(saved);
	close(rep[1]);
	c->rep.reply_r = rep[0];
	c->rep.pid = c->pid;
	for (i = 0; t[i] && i < 4; i++)
		assert_int_equal(atoi(tl_expect(&c->rep, "opened ") + 7), t[i]->pid);
	tl_expect(&c->rep, want);
}

/* tl_ctl holding @t open (@mode "stop": stopped; "run": in tnfctl_continue), linger @linger. */
static void ctl_start_mode(struct ctl *c, struct tl_proc *t, const char *linger, const char *mode)
{
	struct tl_proc *const ts[] = {t, NULL};

	ctl_run(c, mode, linger, !strcmp(mode, "run") ? "running" : "stopped", ts);
}

static void ctl_start(struct ctl *c, struct tl_proc *t, const char *linger)
{
	ctl_start_mode(c, t, linger, "stop");
}

static void ctl_kill(struct ctl *c)
{
	kill(c->pid, SIGKILL);
	assert_true(WIFSIGNALED(tl_reap(c->pid)));
	close(c->rep.reply_r);
}

/* The tnfctl-engine that traces @pid. */
static pid_t engine_of(pid_t pid)
{
	char comm[64];
	pid_t e = tl_tracer_pid(pid);

	if (e <= 0)
		fail_msg("%d is not traced", pid);
	tl_comm(e, comm, sizeof(comm));
	if (strcmp(comm, "tnfctl-engine"))
		fail_msg("the tracer of %d is \"%s\", not tnfctl-engine", pid, comm);
	return e;
}

/* @pid runs on, traced by nobody: its controller's death released it. */
static void expect_released(struct tl_proc *t, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;

	while (tl_tracer_pid(t->pid) != 0) {
		struct pollfd none = {.fd = -1};

		if (tl_now_ms() > end)
			fail_msg("%s: still traced by %ld after %d ms", what, tl_tracer_pid(t->pid),
				 tl.timeout_ms);
		poll(&none, 0, 5);
	}
	tl_send(t, "ping");
	tl_expect(t, "pong");
}

/* @h, the last handle on @engine (linger 0), closed; then the engine's end (and its name's). */
static void engine_close_and_wait(tnfctl_handle_t *h, pid_t engine)
{
	int pidfd = tl_pidfd_open(engine);

	assert_true(pidfd >= 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	if (tl_pidfd_wait(pidfd, tl.timeout_ms))
		fail_msg("tnfctl-engine %d did not end after its last handle", engine);
	close(pidfd);
}

/*
 * Two callers (processes) share one engine; killing one releases its
 * target and leaves the other's held; killing the other ends the engine
 * (no linger).
 */
static void test_callers_share_one_engine(void **state)
{
	struct tl_proc *a, *b;
	struct ctl ca, cb;
	pid_t engine;
	int pidfd;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	b = tl_start_target(tl.target, 1);
	ctl_start(&ca, a, "0");
	ctl_start(&cb, b, "0");
	engine = engine_of(a->pid);
	assert_int_equal(engine_of(b->pid), engine);
	tl_assert_all_stopped(b->pid, "b, held by its caller");

	ctl_kill(&ca);
	expect_released(a, "a, after its caller died");
	assert_int_equal(engine_of(b->pid), engine);
	tl_assert_all_stopped(b->pid, "b, whose caller lives");

	pidfd = tl_pidfd_open(engine);
	assert_true(pidfd >= 0);
	ctl_kill(&cb);
	expect_released(b, "b, after its caller died");
	if (tl_pidfd_wait(pidfd, tl.timeout_ms))
		fail_msg("tnfctl-engine %d did not end after its last caller", engine);
	close(pidfd);
}

/*
 * With a linger, the engine outlives its last caller: the next caller
 * uses it (no new start); then, with nobody, it ends by itself.
 */
static void test_engine_lingers_then_ends(void **state)
{
	struct tl_proc *a, *b;
	struct ctl ca, cb;
	pid_t engine;
	int pidfd;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	b = tl_start_target(tl.target, 1);
	ctl_start(&ca, a, "3600");
	engine = engine_of(a->pid);
	pidfd = tl_pidfd_open(engine);
	assert_true(pidfd >= 0);
	ctl_kill(&ca);
	expect_released(a, "a, after its caller died");
	assert_int_equal(tl_pidfd_wait(pidfd, 0), -1); /* lingering */

	/* the next caller, with a short linger of its own: the same engine */
	ctl_start(&cb, b, "0.2");
	assert_int_equal(engine_of(b->pid), engine);
	ctl_kill(&cb);
	expect_released(b, "b, after its caller died");
	/* the engine's linger is the one it started with: it stays */
	assert_int_equal(tl_pidfd_wait(pidfd, 0), -1);
	/* Asked to go, it goes (its targets released already). */
	kill(engine, SIGTERM);
	if (tl_pidfd_wait(pidfd, tl.timeout_ms) != 0)
		fail_msg("tnfctl-engine %d did not end on SIGTERM", engine);
	close(pidfd);
}

/* With a linger of 0.1 s and no caller left, the engine ends by itself. */
static void test_engine_ends_after_linger(void **state)
{
	struct tl_proc *a;
	struct ctl ca;
	pid_t engine;
	int pidfd;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	ctl_start(&ca, a, "0.1");
	engine = engine_of(a->pid);
	pidfd = tl_pidfd_open(engine);
	assert_true(pidfd >= 0);
	ctl_kill(&ca);
	expect_released(a, "a, after its caller died");
	if (tl_pidfd_wait(pidfd, tl.timeout_ms) != 0)
		fail_msg("tnfctl-engine %d did not end after its linger", engine);
	close(pidfd);
}

/* The number forkloop's thread has reaped so far. */
static long forkcount(struct tl_proc *t)
{
	tl_send(t, "forkcount");
	return atol(tl_expect(t, "forkcount ") + 10);
}

/*
 * Two callers share the engine, each continuing a target that forks without
 * pause (a FORK event after another); one is SIGKILLed at a random moment.
 * Its target is released; the other's run goes on (its target still forks
 * under the same engine); then that one is killed too.  TL_ENGINE_ROUNDS
 * rounds (default 10), TL_SEED.
 */
static void test_caller_killed_at_random_beside_another(void **state)
{
	unsigned int seed = (unsigned int)tl_env_int("TL_SEED", (int)time(NULL));
	int rounds = tl_env_int("TL_ENGINE_ROUNDS", 10), r;
	struct tl_proc *a, *b;

	(void)state;
	tl_require_root();
	print_message("# %d rounds, TL_SEED %u\n", rounds, seed);
	a = tl_start_target(tl.target, 1);
	b = tl_start_target(tl.target, 1);
	tl_send(a, "forkloop");
	tl_expect(a, "forkloop");
	tl_send(b, "forkloop");
	tl_expect(b, "forkloop");
	for (r = 0; r < rounds; r++) {
		struct pollfd none = {.fd = -1};
		struct ctl ca, cb;
		pid_t engine;
		long n0;

		ctl_start_mode(&ca, a, "0", "run");
		ctl_start_mode(&cb, b, "0", "run");
		engine = engine_of(a->pid);
		assert_int_equal(engine_of(b->pid), engine);
		poll(&none, 0, (int)(rand_r(&seed) % 30));
		ctl_kill(&ca);
		expect_released(a, "a, after its caller died");
		/* b runs on under its caller: it forks, each fork an event of b's handle */
		n0 = forkcount(b);
		while (forkcount(b) <= n0)
			;
		assert_int_equal(engine_of(b->pid), engine);
		ctl_kill(&cb);
		expect_released(b, "b, after its caller died");
	}
}

/* A client of another uid that finds the name is refused: no HELLO, the end. */
static void test_client_of_another_uid_refused(void **state)
{
	char name[TNF_ENGINE_NAME_MAX];
	struct tl_proc *a;
	tnfctl_handle_t *h;
	int len, st, rep[2];
	pid_t child;
	char res[64] = "";

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	h = tl_pid_open(a->pid);
	len = engine_name(engine_of(a->pid), name);
	if (pipe2(rep, O_CLOEXEC))
		abort();
	child = fork();
	if (child == 0) {
		struct tnf_rep r;
		ssize_t n;
		int s;
		char msg[32];

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		s = connect_name(name, len);
		if (s < 0)
			_exit(4);
		n = recv(s, &r, sizeof(r), 0);
		/* 0: closed with nothing sent; a HELLO would be n > 0 */
		snprintf(msg, sizeof(msg), "recv %zd", n);
		(void)!write(rep[1], msg, strlen(msg));
		_exit(0);
	}
	close(rep[1]);
	st = tl_reap(child);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 4)
		fail_msg("uid 65534 could not even connect to the engine's name");
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(read(rep[0], res, sizeof(res) - 1) > 0);
	close(rep[0]);
	if (strcmp(res, "recv 0"))
		fail_msg("a client of uid 65534 got \"%s\" from root's engine, expected its end",
			 res);
	/* the engine serves its own caller still */
	tl_assert_all_stopped(a->pid, "a, after the refused client");
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * A process of uid 65534 holds the name root's engine would have (and
 * greets whoever connects as an engine would, HELLO and ready): a root
 * caller does not use it, and gets an engine of its own, of root.
 */
static void test_root_caller_ignores_squatter(void **state)
{
	char name[TNF_ENGINE_NAME_MAX];
	struct tl_proc *a;
	tnfctl_handle_t *h;
	int len, ready[2], accepted[2];
	pid_t squatter, engine;
	char buf[64];

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	h = tl_pid_open(a->pid);
	engine = engine_of(a->pid);
	len = engine_name(engine, name);
	engine_close_and_wait(h, engine);
	if (pipe2(ready, O_CLOEXEC) || pipe2(accepted, O_CLOEXEC))
		abort();
	squatter = fork();
	if (squatter == 0) {
		struct tnf_rep hello = {.kind = TNF_REP_HELLO, .exit_status = TNF_PROTO_VERSION};
		struct tnf_rep hi_ready = {.kind = TNF_REP_DONE, .pid = getpid()};
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int l, c;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		memcpy(sa.sun_path, name, len);
		if (l < 0 ||
		    bind(l, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + len) ||
		    listen(l, 8))
			_exit(4);
		(void)!write(ready[1], "r", 1);
		for (;;) {
			c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
			if (c < 0)
				_exit(5);
			(void)!write(accepted[1], "a", 1);
			(void)!send(c, &hello, tnf_rep_len(&hello), MSG_NOSIGNAL);
			(void)!send(c, &hi_ready, tnf_rep_len(&hi_ready), MSG_NOSIGNAL);
		}
	}
	close(ready[1]);
	close(accepted[1]);
	if (read(ready[0], buf, 1) != 1)
		fail_msg("the squatter could not bind the engine's name");
	h = tl_pid_open(a->pid);
	engine = engine_of(a->pid);
	assert_int_equal(tl_task_status_field(engine, engine, "Uid:"), 0);
	/* it did find the squatter (and left it) */
	assert_int_equal(read(accepted[0], buf, 1), 1);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_assert_running(a->pid, "a, closed");
	kill(squatter, SIGKILL);
	tl_reap(squatter);
	close(ready[0]);
	close(accepted[0]);
}

/*
 * A client that sends requests and reads none of the replies (a stopped or
 * busy caller) holds up no other: the engine queues what its socket cannot
 * take.  Then every reply reaches it, in order.
 */
static void test_client_not_reading_holds_up_nobody(void **state)
{
	char name[TNF_ENGINE_NAME_MAX];
	struct tl_proc *a, *b;
	tnfctl_handle_t *h, *hb;
	struct tnf_req req = {.op = TNF_OP_LOST};
	struct tnf_rep rep;
	tnfctl_event_t ev;
	int len, s, i, n = 20000;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	b = tl_start_target(tl.target, 1);
	h = tl_pid_open(a->pid);
	len = engine_name(engine_of(a->pid), name);
	s = connect_name(name, len);
	assert_true(s >= 0);
	for (i = 0; i < 2; i++) /* HELLO, ready */
		assert_true(recv(s, &rep, sizeof(rep), 0) > 0);
	for (i = 1; i <= n; i++) {
		req.hid = (uint32_t)i;
		assert_int_equal(send(s, &req, sizeof(req), MSG_NOSIGNAL), (ssize_t)sizeof(req));
	}
	/* another handle's whole life, on the same engine, while those wait */
	hb = tl_pid_open(b->pid);
	assert_int_equal(engine_of(b->pid), engine_of(a->pid));
	tl_send(b, "exit 4");
	tl_assert_err(tnfctl_continue(hb, &ev, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(ev, TNFCTL_EVENT_EXIT);
	tl_close(hb, TNFCTL_TARG_DEFAULT);
	for (i = 1; i <= n; i++) {
		ssize_t r = recv(s, &rep, sizeof(rep), 0);

		if (r <= 0 || rep.hid != (uint32_t)i || rep.kind != TNF_REP_DONE)
			fail_msg("reply %d of %d: recv %zd, hid %u, kind %u", i, n, r, rep.hid,
				 rep.kind);
	}
	close(s);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * A client that floods requests and reads no reply is cut off once 16 MiB
 * of replies wait for it (a controller death for it alone); the engine
 * serves the others on.
 */
static void test_client_flooding_is_cut_off(void **state)
{
	char name[TNF_ENGINE_NAME_MAX];
	struct tl_proc *a;
	tnfctl_handle_t *h;
	struct tnf_req req = {.op = TNF_OP_LOST};
	struct tnf_rep rep;
	int len, s, i, sent = 0, got = 0, max = 1000000;
	ssize_t r;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	h = tl_pid_open(a->pid);
	len = engine_name(engine_of(a->pid), name);
	s = connect_name(name, len);
	assert_true(s >= 0);
	for (i = 0; i < 2; i++) /* HELLO, ready */
		assert_true(recv(s, &rep, sizeof(rep), 0) > 0);
	for (sent = 0; sent < max; sent++) {
		req.hid = (uint32_t)sent + 1;
		if (send(s, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
			break;
	}
	while ((r = recv(s, &rep, sizeof(rep), 0)) > 0)
		got++;
	if (r != 0 || got >= sent)
		fail_msg("a client that read none of %d replies was not cut off (recv %zd after "
			 "%d replies)",
			 sent, r, got);
	close(s);
	/* the engine serves its other caller on */
	tl_assert_all_stopped(a->pid, "a, after the flood");
	tl_send(a, "exit 6");
	{
		tnfctl_event_t ev;

		tl_assert_err(tnfctl_continue(h, &ev, NULL), TNFCTL_ERR_NONE);
		assert_int_equal(ev, TNFCTL_EVENT_EXIT);
	}
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * Caller X suspends P (SUSPEND close) and lives on; caller Y's open of P
 * fails; X is killed: P is resumed, as it would be had Y never tried.
 * BUG (fixed): any open of P forgot who had suspended it before it knew
 * whether it would succeed, and P stayed stopped for good.
 */
static void test_failed_open_keeps_suspender_answerable(void **state)
{
	struct tl_proc *p, *q;
	tnfctl_handle_t *h;
	struct ctl cx;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 0); /* no libtnfprobe: a plain open fails */
	q = tl_start_target(tl.target, 0);
	ctl_run(&cx, "suspend", NULL, "suspended", (struct tl_proc *const[]){p, q, NULL});
	tl_assert_job_stopped(p->pid, "P, suspended by X");
	tl_assert_err(tnfctl_pid_open(p->pid, &h), TNFCTL_ERR_NOLIBTNFPROBE);
	tl_assert_job_stopped(p->pid, "P, after Y's failed open");
	ctl_kill(&cx);
	/* resumed by X's death: it answers */
	tl_send(p, "ping");
	tl_expect(p, "pong");
	expect_released(q, "Q, after X died");
}

/*
 * A client that ends with QUIT while it still holds a target (a raw or
 * buggy client; the library never does): the target is released as at a
 * controller death.  BUG (fixed): it stayed stopped, and the engine never
 * ended.
 */
static void test_quit_with_a_target_held_releases_it(void **state)
{
	char name[TNF_ENGINE_NAME_MAX];
	struct tl_proc *a, *b;
	tnfctl_handle_t *h;
	struct tnf_req req = {.op = TNF_OP_PID_OPEN, .hid = 1, .flags = TNFCTL_OPEN_NOPROBES};
	struct tnf_rep rep;
	int len, s, i;

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	b = tl_start_target(tl.target, 0);
	h = tl_pid_open(a->pid);
	len = engine_name(engine_of(a->pid), name);
	s = connect_name(name, len);
	assert_true(s >= 0);
	for (i = 0; i < 2; i++) /* HELLO, ready */
		assert_true(recv(s, &rep, sizeof(rep), 0) > 0);
	req.pid = b->pid;
	assert_int_equal(send(s, &req, sizeof(req), MSG_NOSIGNAL), (ssize_t)sizeof(req));
	assert_true(recv(s, &rep, sizeof(rep), 0) > 0);
	assert_int_equal(rep.err, TNFCTL_ERR_NONE);
	tl_assert_all_stopped(b->pid, "b, opened by the raw client");
	req.op = TNF_OP_QUIT;
	req.hid = 0;
	assert_int_equal(send(s, &req, sizeof(req), MSG_NOSIGNAL), (ssize_t)sizeof(req));
	close(s);
	expect_released(b, "b, after its client's QUIT");
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * The name held by a uid 65534 process whose backlog is full (listen(0),
 * its own connection queued, nothing ever accepted): a root caller does
 * not wait on it.  BUG (fixed): its connect() blocked for ever.
 */
static void test_root_caller_ignores_full_squatter(void **state)
{
	char name[TNF_ENGINE_NAME_MAX];
	struct tl_proc *a;
	tnfctl_handle_t *h;
	int len, ready[2];
	pid_t squatter, engine;
	char buf[4];

	(void)state;
	tl_require_root();
	a = tl_start_target(tl.target, 1);
	h = tl_pid_open(a->pid);
	engine = engine_of(a->pid);
	len = engine_name(engine, name);
	engine_close_and_wait(h, engine);
	if (pipe2(ready, O_CLOEXEC))
		abort();
	squatter = fork();
	if (squatter == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		socklen_t sl = offsetof(struct sockaddr_un, sun_path) + len;
		int l, c;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		memcpy(sa.sun_path, name, len);
		if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, sl) || listen(l, 0))
			_exit(4);
		/* fill the backlog (0 takes one) */
		while (connect(c, (struct sockaddr *)&sa, sl) == 0)
			c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		(void)!write(ready[1], "r", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], buf, 1) != 1)
		fail_msg("the squatter could not bind the engine's name");
	close(ready[0]);
	h = tl_pid_open(a->pid);
	engine = engine_of(a->pid);
	assert_int_equal(tl_task_status_field(engine, engine, "Uid:"), 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	kill(squatter, SIGKILL);
	tl_reap(squatter);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_callers_share_one_engine),
		TL_TEST(test_caller_killed_at_random_beside_another),
		TL_TEST(test_engine_lingers_then_ends),
		TL_TEST(test_engine_ends_after_linger),
		TL_TEST(test_client_of_another_uid_refused),
		TL_TEST(test_root_caller_ignores_squatter),
		TL_TEST(test_root_caller_ignores_full_squatter),
		TL_TEST(test_failed_open_keeps_suspender_answerable),
		TL_TEST(test_quit_with_a_target_held_releases_it),
		TL_TEST(test_client_not_reading_holds_up_nobody),
		TL_TEST(test_client_flooding_is_cut_off),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
