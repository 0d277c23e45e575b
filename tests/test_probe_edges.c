// SPDX-License-Identifier: BSD-2-Clause
/*
 * Edge cases of the probe layer found by adversarial testing: bad input to
 * tnfdump (FIFOs, devices), trace files shared by many short-lived
 * processes, and misuse of the probe functions of libtnfctl.  A test marked
 * "Was a bug" names the libtnfctl defect it caught (fixed in 8723f75).
 */
#include "testlib.h"
#include "probelib.h"

/* ---------------------------------------------------------------- */
/* tnfdump on things that are not trace files */

/* A FIFO with no writer: tnfdump used to block for ever in open(2). */
static void test_tnfdump_fifo_does_not_hang(void **state)
{
	static char out[8192];
	char fifo[PATH_MAX];

	(void)state;
	paths();
	snprintf(fifo, sizeof(fifo), "%s/fifo-%d", tmpdir, getpid());
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(dump(fifo, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "tnfdump: "));
	assert_non_null(strstr(out, fifo));
	unlink(fifo);
}

/* /dev/zero, a directory, a missing and an unreadable file: status 1, one line each. */
static void test_tnfdump_non_files(void **state)
{
	static char out[8192];
	char path[PATH_MAX];
	int fd;

	(void)state;
	paths();
	assert_int_equal(dump("/dev/zero", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "tnfdump: /dev/zero: "));
	assert_int_equal(dump(tmpdir, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "Is a directory"));
	snprintf(path, sizeof(path), "%s/none-%d", tmpdir, getpid());
	assert_int_equal(dump(path, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "No such file"));
	if (geteuid() != 0) { /* root reads a mode-000 file anyway */
		snprintf(path, sizeof(path), "%s/unreadable-%d", tmpdir, getpid());
		fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(dump(path, out, sizeof(out)), 1);
		unlink(path);
	}
}

/* ---------------------------------------------------------------- */
/* the runtime: many processes sharing one small file */

/*
 * 100 forked children each fire one probe and exit, then the parent fires
 * 20000 events into a 128 KiB file.  Each child held a data block when it
 * died; those blocks used to stay locked for ever, so the parent ran out of
 * blocks and lost everything after its first block, the last events
 * included.  The newest events must be in the file.
 */
static void test_dead_children_do_not_pin_blocks(void **state)
{
	static char out[4 << 20];
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int i;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "dead");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 128 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_str"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_child"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 1"); /* the parent maps the file first */
	for (i = 0; i < 100; i++)
		tl_send(p, "fork_fire 1");
	tl_send(p, "fire 20000");
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_main_tick", "i: 19999"), 1);
	assert_true(count_events(out, "tl_main_str", NULL) >= 1); /* the last one */
	assert_true(count_events(out, "tl_main_tick", NULL) > 1000);
	unlink(file);
}

/* ---------------------------------------------------------------- */
/* libtnfctl: bad arguments and dead targets */

/*
 * Was a bug (libtnfctl, probe_ops.c find_func -> objfile.c tnf_obj_sym): connect
 * accepts any defined .dynsym symbol, data included.  Connecting
 * "tnf_runtime" (a data object of libtnfprobe) returns NONE and the target
 * then calls into its data on the next firing and dies of SIGSEGV.
 * Expected: BADARG (not a function), and the target keeps running.
 */
static void test_connect_data_symbol(void **state)
{
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;
	tnfctl_errcode_t err;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "datasym");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_NONE);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NONE);
	err = tnfctl_probe_connect(h, tick, NULL, "tnf_runtime");
	if (err == TNFCTL_ERR_NONE) {
		/* show what it does to the target */
		tl_send(p, "fire 1");
		if (tl_continue(h, NULL) == TNFCTL_EVENT_TARGGONE)
			fail_msg("connect of data symbol \"tnf_runtime\" returned NONE; "
				 "the target then died when the probe fired");
	}
	tl_assert_err(err, TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_KILL);
	unlink(file);
}

/*
 * Was a bug (libtnfctl, buffer.c alloc_locked): a size above what the runtime
 * maps (1 GiB, TNF_FILE_MAX) is accepted: a 2 GiB file is created and
 * fallocated, NONE is returned, and the target breaks at its first probe
 * (BUFBROKEN).  Expected: SIZETOOBIG up front, no file left behind.
 */
static void test_buffer_alloc_too_big(void **state)
{
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
	tnfctl_trace_attrs_t a;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "toobig");
	err = tnfctl_buffer_alloc(h, file, 0x80000000u);
	unlink(file);
	tl_assert_err(err, TNFCTL_ERR_SIZETOOBIG);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_NONE);
	tl_close(h, TNFCTL_TARG_KILL);
}

/* One buffer_alloc whose result is checked at the end of the test (all are tried). */
static int check_alloc(tnfctl_handle_t *h, const char *name, tnfctl_errcode_t want,
		       const char *what)
{
	tnfctl_errcode_t got = tnfctl_buffer_alloc(h, name, 256 * 1024);

	if (got == want)
		return 0;
	print_error("buffer_alloc (%s): expected TNFCTL_ERR_%s, got TNFCTL_ERR_%s\n", what,
		    tl_err_name(want), tl_err_name(got));
	return 1;
}

/*
 * Names that cannot be created.  Was a bug (libtnfctl, buffer.c map_errno): a
 * component longer than NAME_MAX (ENAMETOOLONG) gives INTERNAL, where the
 * header promises BADARG for a name that is too long; a path through a
 * plain file (ENOTDIR) gives INTERNAL, not FILENOTFOUND.  (EROFS and
 * ENOSPC-like errors are mapped to INTERNAL too, by the same switch.)
 */
static void test_buffer_alloc_bad_names(void **state)
{
	char file[PATH_MAX + 64], longname[PATH_MAX + 8];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_trace_attrs_t a;
	int bad = 0;

	(void)state;
	tl_require_root();
	h = start(&p);
	snprintf(file, sizeof(file), "%s/no/such/dir/x.tnf", tmpdir);
	bad += check_alloc(h, file, TNFCTL_ERR_FILENOTFOUND, "missing directory");
	bad += check_alloc(h, "", TNFCTL_ERR_BADARG, "empty name");
	/* PATH_MAX bytes and more, absolute and relative */
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	longname[0] = '/';
	bad += check_alloc(h, longname, TNFCTL_ERR_BADARG, "absolute name > PATH_MAX");
	bad += check_alloc(h, longname + 1, TNFCTL_ERR_BADARG, "relative name > PATH_MAX");
	/* one component longer than NAME_MAX */
	snprintf(file, sizeof(file), "%s/%.300s", tmpdir, longname + 1);
	bad += check_alloc(h, file, TNFCTL_ERR_BADARG, "component > NAME_MAX");
	bad += check_alloc(h, "/etc/hostname/x.tnf", TNFCTL_ERR_FILENOTFOUND,
			   "through a plain file (ENOTDIR)");
	bad += check_alloc(h, "/sys/x.tnf", TNFCTL_ERR_ACCES, "sysfs (EACCES even for root)");
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_NONE);
	tl_close(h, TNFCTL_TARG_KILL);
	if (bad)
		fail_msg("%d buffer_alloc results differ from the header", bad);
}

static tnfctl_errcode_t nop_op(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)h;
	(void)p;
	(void)cd;
	return TNFCTL_ERR_NONE;
}

/* A target SIGKILLed while stopped: every probe call says NOPROCESS, none hangs. */
static void test_killed_while_stopped(void **state)
{
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;
	tnfctl_probe_state_t st;
	tnfctl_event_t evt;
	ulong_t id = 0;
	pid_t pid;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "killed");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_NONE);
	tick = probe_of(h, "tl_main_tick");
	pid = tl_targ_pid(h);
	assert_int_equal(kill(pid, SIGKILL), 0);
	tl_assert_exits(pid, "killed target");
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_probe_connect(h, tick, NULL, "tlpre_func_a"), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_probe_apply(h, tnfctl_probe_enable, NULL), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_probe_apply_ids(h, 1, &id, tnfctl_probe_trace, NULL),
		      TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_check_libs(h), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_probe_disable(h, tick, NULL), TNFCTL_ERR_NOPROCESS);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	unlink(file);
}

/* After EXIT: BADARG from every probe function (the header's "past EXEC/EXIT"). */
static void test_probe_calls_after_exit(void **state)
{
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;
	tnfctl_probe_state_t st;

	(void)state;
	tl_require_root();
	h = start(&p);
	tick = probe_of(h, "tl_main_tick");
	tl_send(p, "exit 3");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	trace_path(file, sizeof(file), "afterexit");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_BADARG);
	assert_int_equal(access(file, F_OK), -1);
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply(h, nop_op, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_check_libs(h), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* NULLs and probes of another handle: BADARG, nothing changes. */
static void test_null_and_foreign(void **state)
{
	struct tl_proc *p1, *p2;
	tnfctl_handle_t *h1, *h2;
	tnfctl_probe_t *t1;
	tnfctl_probe_state_t st;
	tnfctl_trace_attrs_t a;
	ulong_t ids[1] = {0};

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_probe_apply(NULL, nop_op, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply_ids(NULL, 1, ids, nop_op, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_state_get(NULL, NULL, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_enable(NULL, NULL, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_connect(NULL, NULL, NULL, "x"), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_register_funcs(NULL, NULL, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_check_libs(NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_buffer_alloc(NULL, "/tmp/x", 1 << 20), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_trace_attrs_get(NULL, &a), TNFCTL_ERR_BADARG);
	h1 = start(&p1);
	h2 = start(&p2);
	t1 = probe_of(h1, "tl_main_tick");
	tl_assert_err(tnfctl_probe_state_get(h2, t1, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_state_get(h1, NULL, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_state_get(h1, t1, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_disable(h2, t1, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply(h1, NULL, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply_ids(h1, 1, NULL, nop_op, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply_ids(h1, 0, NULL, nop_op, NULL), TNFCTL_ERR_NONE);
	ids[0] = 100000;
	tl_assert_err(tnfctl_probe_apply_ids(h1, 1, ids, nop_op, NULL), TNFCTL_ERR_INVALIDPROBE);
	ids[0] = (ulong_t)-1;
	tl_assert_err(tnfctl_probe_apply_ids(h1, 1, ids, nop_op, NULL), TNFCTL_ERR_INVALIDPROBE);
	tl_assert_err(tnfctl_trace_attrs_get(h1, NULL), TNFCTL_ERR_BADARG);
	tl_close(h1, TNFCTL_TARG_KILL);
	tl_close(h2, TNFCTL_TARG_KILL);
}

static int count_names(const char *const *names)
{
	int n = 0;

	while (names && names[n])
		n++;
	return n;
}

/*
 * More connects than the 1024-node pool: INTERNAL, the chain intact.
 * Was a bug (libtnfctl, probe_ops.c decode_chain, MAX_CHAIN 256): state_get
 * silently lists only the 256 most recent of the 1024 connected functions.
 */
static void test_connect_pool_exhausted(void **state)
{
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	int i, n;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "pool");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_NONE);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NONE);
	for (i = 0; i < 1100 && !err; i++)
		err = tnfctl_probe_connect(h, tick, "libtl_pre.so",
					   i % 2 ? "tlpre_func_a" : "tlpre_func_b");
	tl_assert_err(err, TNFCTL_ERR_INTERNAL);
	assert_int_equal(i, 1025);
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_NONE);
	n = count_names(st.func_names);
	/* the chain in the target still works (each call logs one letter) */
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_expect(p, "ready");
	tl_send(p, "fire 1");
	tl_expect(p, "fired 1");
	tl_send(p, "chainlog");
	tl_expect(p, "chainlog ");
	assert_true(strlen(p->line) - strlen("chainlog ") >= 500); /* replies are cut at 512 */
	tl_send(p, "exit 0");
	tl_assert_exits(p->pid, "target");
	unlink(file);
	assert_int_equal(n, 1024);
}

/* No fd of the controller (tracer sockets, object files) leaks into a target. */
static void test_no_controller_fd_in_target(void **state)
{
	char path[64], link[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	struct dirent *e;
	DIR *d;
	int fd;

	(void)state;
	tl_require_root();
	h = start(&p);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)p->pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd <= 2 || fd == targ_cmd_fd || fd == targ_reply_fd)
			continue;
		/* inherited on purpose: open without FD_CLOEXEC in the test itself */
		n = fcntl(fd, F_GETFD);
		if (n >= 0 && !(n & FD_CLOEXEC))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)p->pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		fail_msg("target fd %d -> %s: not the test's, so the controller's", fd, link);
	}
	closedir(d);
	tl_close(h, TNFCTL_TARG_KILL);
}

static unsigned long seen_max_id;
static int seen_reused, seen_created;

static void *enable_all_new(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_probe_state_t st;

	if (tnfctl_probe_state_get(h, p, &st) == TNFCTL_ERR_NONE && st.new_probe) {
		if (seen_created && st.id <= seen_max_id)
			seen_reused++;
		if (st.id > seen_max_id)
			seen_max_id = st.id;
		seen_created++;
	}
	tnfctl_probe_enable(h, p, NULL);
	return NULL;
}

/*
 * 200 dlopen/dlclose cycles with a create callback that enables each new
 * probe: new ids every time, the constructor probe fires each time, and
 * the controller's fd count does not grow.
 */
static void test_dlopen_dlclose_200(void **state)
{
	static char out[4 << 20];
	char file[PATH_MAX], plug[PATH_MAX], cmd[PATH_MAX + 16];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int i, fds0, fds1;

	(void)state;
	tl_require_root();
	h = start(&p);
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	trace_path(file, sizeof(file), "dl200");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 1 << 20), TNFCTL_ERR_NONE);
	seen_max_id = 0;
	seen_reused = seen_created = 0;
	tl_assert_err(tnfctl_register_funcs(h, enable_all_new, NULL), TNFCTL_ERR_NONE);
	snprintf(cmd, sizeof(cmd), "dlopen %s", plug);
	fds0 = -1;
	for (i = 0; i < 200; i++) {
		tl_send(p, "%s", cmd);
		tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
		tl_send(p, "dlclose");
		tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
		if (i == 9)
			fds0 = tl_count_fds(getpid());
	}
	fds1 = tl_count_fds(getpid());
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(seen_reused, 0);
	assert_true(fds1 <= fds0);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_plug_ctor", NULL), 200);
	unlink(file);
}

/* Checks that each thread's "t: T i: I" values only grow; returns the events seen. */
static int check_thread_order(const char *out, int nthreads)
{
	int last[64], n = 0;
	const char *l = out;

	memset(last, -1, sizeof(last));
	while ((l = strstr(l, " tl_thr "))) {
		int t, i;
		const char *d = strstr(l, "t: ");

		if (!d || sscanf(d, "t: %d i: %d", &t, &i) != 2 || t < 0 || t >= nthreads)
			fail_msg("bad tl_thr line near \"%.80s\"", l);
		if (i <= last[t])
			fail_msg("thread %d: i %d after %d", t, i, last[t]);
		last[t] = i;
		n++;
		l++;
	}
	return n;
}

/*
 * 8 threads fire 100000 events into a 128 KiB file: it wraps hundreds of
 * times; tnfdump must read it, exit 0, and show each thread's newest
 * events in order.
 */
static void test_small_buffer_8_threads_wrap(void **state)
{
	static char out[8 << 20];
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int n;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "wrap8");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 128 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_thr"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "threads_fire 8 12500");
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	n = check_thread_order(out, 8);
	assert_true(n > 100);
	unlink(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_tnfdump_fifo_does_not_hang),
		TL_TEST(test_tnfdump_non_files),
		TL_TEST(test_dead_children_do_not_pin_blocks),
		TL_TEST(test_connect_data_symbol),
		TL_TEST(test_buffer_alloc_too_big),
		TL_TEST(test_buffer_alloc_bad_names),
		TL_TEST(test_killed_while_stopped),
		TL_TEST(test_probe_calls_after_exit),
		TL_TEST(test_null_and_foreign),
		TL_TEST(test_connect_pool_exhausted),
		TL_TEST(test_no_controller_fd_in_target),
		TL_TEST(test_dlopen_dlclose_200),
		TL_TEST(test_small_buffer_8_threads_wrap),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
