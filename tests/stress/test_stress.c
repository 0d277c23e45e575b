// SPDX-License-Identifier: BSD-2-Clause
/*
 * Stress (issue 6, item 1).  Short sizes by default (run by `make check`
 * through tests/run-tests, in both TNFCTL_STOP_MODE modes); `make stress`
 * sets TL_STRESS=full:
 *
 *  - a storm of processes (shell loop of /bin/true and /bin/false, a fork
 *    tree, threads that fork; storm.h) followed in the stopping mode (one
 *    thread per handle, child handles on every FORK, the EXEC dance of
 *    tnfctl-follow) and in the passive mode (tnfctl_watch_exec), every event
 *    checked against the workload's own log: 0 lost, 0 misattributed;
 *    short ~1,000 processes, full ~10,000;
 *  - dlopen/dlclose cycles of libtl_plug.so in a tl_probes target whose 4
 *    other threads fire probes meanwhile (a batch let go after each
 *    dlopen), every new probe enabled by the create callback: every
 *    DLOPEN/DLCLOSE reported, the constructor probe and the ticks of each
 *    load in the trace file, the threads' events all there, in order and
 *    no batch before its dlopen, no block of the file wasted (blocklib.h);
 *    short 100 cycles of 4 x 2,000 events, full 1,000 of 4 x 20,000;
 *  - 8 threads fire into a 128 KiB trace file that wraps many times; tnfdump
 *    (cooked and raw) reads it, each thread's events are in order under one
 *    tid of their own; short 8 x 12,500 events, full 8 x 125,000.
 *
 * Sizes can also be set one by one: TL_STRESS_SH, TL_STRESS_BOMB,
 * TL_STRESS_THREADS, TL_STRESS_FORKS (storm), TL_STRESS_DL (cycles),
 * TL_STRESS_DL_EVENTS (per thread), TL_STRESS_DL_THREADS, TL_STRESS_DL_BUF
 * (trace file bytes), TL_STRESS_WRAP.
 *
 * The times printed are apart (run, tnfdump, checks); what a probe costs is
 * read from the trace itself (tl_thr to tl_thr in one thread), never from a
 * total divided by the events.
 */
#include "testlib.h"
#include "probelib.h"
#include "storm.h"
#include "blocklib.h"

static char self_exe[PATH_MAX];
static int full;

static int size(const char *name, int short_size, int full_size)
{
	return tl_env_int(name, full ? full_size : short_size);
}

/* ------------------------------------------------------------------ */
/* the storm */

struct storm {
	char log[64];
	char nsh[16], nb[16], nt[16], nf[16];
	char *argv[9];
	int expected_procs;
	unsigned long long created0;
	long long t0;
};

static void storm_init(struct storm *s)
{
	int nsh = size("TL_STRESS_SH", 300, 3000), nb = size("TL_STRESS_BOMB", 300, 3000);
	int nt = size("TL_STRESS_THREADS", 4, 8), nf = size("TL_STRESS_FORKS", 100, 500);

	memset(s, 0, sizeof(*s));
	st_new_log(s->log, sizeof(s->log));
	snprintf(s->nsh, sizeof(s->nsh), "%d", nsh);
	snprintf(s->nb, sizeof(s->nb), "%d", nb);
	snprintf(s->nt, sizeof(s->nt), "%d", nt);
	snprintf(s->nf, sizeof(s->nf), "%d", nf);
	s->argv[0] = self_exe;
	s->argv[1] = "--wl";
	s->argv[2] = "storm";
	s->argv[3] = s->nsh;
	s->argv[4] = s->nb;
	s->argv[5] = s->nt;
	s->argv[6] = s->nf;
	s->argv[7] = s->log;
	s->argv[8] = NULL;
	s->expected_procs = 1 + 3 + nsh + (nb - 1) + nt * nf;
	st_reset();
	s->created0 = st_proc_created();
	s->t0 = tl_now_ms();
	/* one follower thread per live process, and the tracer's descriptors */
	tl_watchdog_extend(full ? 900 : 240);
}

static void storm_check(struct storm *s, const char *mode)
{
	unsigned long long created = st_proc_created() - s->created0;
	struct st_result r;
	char **exp;
	int nexp;

	nexp = st_read_log(s->log, &exp);
	unlink(s->log);
	st_compare(exp, nexp, &r);
	st_free_lines(exp, nexp);
	print_message("# storm, %s mode: %d processes (%d forks, %d execs), %d events checked "
		      "against %d logged, %d lost, %d misattributed, %llu records lost in the "
		      "kernel, /proc/stat: %llu processes created, %.1f s\n",
		      mode, r.processes, r.forks, r.execs, r.reported, r.expected, r.lost,
		      r.misattributed, (unsigned long long)st_ev.lost, created,
		      (tl_now_ms() - s->t0) / 1000.0);
	if (st_ev.errors)
		fail_msg("%d library call(s) failed, the first: %s", st_ev.errors, st_ev.errmsg);
	/* the log is complete: every process of the plan logged its exit */
	assert_int_equal(r.processes, s->expected_procs);
	assert_int_equal(r.forks, s->expected_procs - 1);
	if (created < (unsigned long long)r.forks)
		fail_msg("/proc/stat counts %llu processes created, the log %d forks", created,
			 r.forks);
	if (r.lost)
		fail_msg("%d logged events not reported, the first \"%s\"", r.lost, r.first_lost);
	if (r.misattributed)
		fail_msg("%d reported events not in the log, the first \"%s\"", r.misattributed,
			 r.first_mis);
	assert_int_equal(st_ev.other, 0);
	assert_int_equal(st_ev.lost, 0);
	assert_int_equal(r.matched, r.expected);
}

static void test_storm_stopping(void **state)
{
	uint64_t lost0 = tnfctl_events_lost();
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;
	struct storm s;
	struct rlimit rl;
	char **env;

	(void)state;
	tl_require_root();
	storm_init(&s);
	/* every process is a handle: the tracer and we hold descriptors for each */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	env = st_workload_env(tl.probe);
	err = tnfctl_exec_open(self_exe, s.argv, env, NULL, NULL, &h);
	free(env);
	tl_assert_err(err, TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	tl_track_pid(a.targ_pid);
	st_spawn(h, a.targ_pid);
	/* A hang detector: TL_TIMEOUT_MS scales it (raised 10x under TCG). */
	if (st_wait_followers((full ? 30 : 3) * tl.timeout_ms))
		fail_msg("the followers did not all end (%d left, %d events so far)", st_ev.live,
			 st_ev.n);
	st_ev.lost = tnfctl_events_lost() - lost0;
	storm_check(&s, "stopping");
}

static void test_storm_passive(void **state)
{
	tnfctl_errcode_t err;
	tnfctl_watch_t *w;
	struct storm s;
	char **env;
	pid_t root;
	int st;

	(void)state;
	tl_require_root();
	storm_init(&s);
	env = st_workload_env(NULL);
	err = tnfctl_watch_exec(self_exe, s.argv, env, 0, &w, &root);
	free(env);
	tl_assert_err(err, TNFCTL_ERR_NONE);
	tl_track_pid(root);
	st_collect_watch(w, tl.timeout_ms, true, root);
	st_ev.lost += tnfctl_watch_lost(w);
	tnfctl_watch_close(w);
	assert_int_equal(tl_waitpid_timeout(root, &st, 0, tl.timeout_ms), root);
	assert_int_equal(st, 0);
	storm_check(&s, "passive");
}

/* ------------------------------------------------------------------ */
/* dlopen/dlclose cycles in a multi-threaded target */

static int created_probes;

static void *enable_new(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	if (tnfctl_probe_enable(h, p, NULL) == TNFCTL_ERR_NONE &&
	    tnfctl_probe_trace(h, p, NULL) == TNFCTL_ERR_NONE)
		created_probes++;
	return NULL;
}

/* tnfdump of @file into @out, all of it: a truncated dump would look like lost events. */
static void dump_whole(const char *file, char *out, size_t size)
{
	assert_int_equal(dump(file, out, size), 0);
	if (strlen(out) >= size - 1)
		fail_msg("tnfdump printed more than the test's %zu MiB for it", size >> 20);
}

/* One line of tnfdump output copied to @line; the next line, or NULL at the end. */
static const char *dump_line(const char *l, char *line, size_t size)
{
	const char *e = strchr(l, '\n');
	size_t len = e ? (size_t)(e - l) : strlen(l);

	snprintf(line, size, "%.*s", (int)len, l);
	return e && e[1] ? e + 1 : NULL;
}

/* Elapsed times (ms) of the first @max events of @probe, in file order; returns the count. */
static int event_times(const char *out, const char *probe, double *ms, int max)
{
	const char *l = out;
	int n = 0;

	while (l && n < max) {
		char line[1024], name[64], cpu[8];
		unsigned long long tid;
		double de;
		int pid, lwp;

		l = dump_line(l, line, sizeof(line));
		if (sscanf(line, "%lf %lf %d %d %llu %7s %63s", &ms[n], &de, &pid, &lwp, &tid, cpu,
			   name) == 7 &&
		    !strcmp(name, probe))
			n++;
	}
	return n;
}

/* What thr_check found of the tl_thr events (and was told of them). */
struct thr_seen {
	int nthreads;
	int count[64]; /* events of each thread */
	pid_t tid[64];
	double first_ms[64], last_ms[64];
	/*
	 * Paced firing (tl_probes' "bgfire T N S"): with steps > 1, batch k
	 * of a thread's @per events cannot start before release_ms[k - 1].
	 */
	int per, steps, nreleases;
	const double *release_ms;
	/* when not NULL: ns from each event to the thread's next in the same batch */
	double *gap_ns;
	int ngaps, max_gaps;
};

/* The batch of event @i of a paced thread. */
static int batch_of(const struct thr_seen *s, int i)
{
	int k = (int)((long long)i * s->steps / s->per);

	while (k + 1 < s->steps && (long long)s->per * (k + 1) / s->steps <= i)
		k++;
	while (k > 0 && (long long)s->per * k / s->steps > i)
		k--;
	return k;
}

/*
 * The tl_thr lines of tnfdump output: each thread's "t: T i: I" in order
 * under one tid of its own, a paced batch never before its release.
 * Returns the count of lines.
 *
 * Each line is copied out before sscanf: glibc's sscanf takes strlen() of
 * all of its input, and scanning in place in the dump made this quadratic
 * (tens of seconds at 100% CPU in __rawmemchr for the 80,000 lines of
 * TL_STRESS_DL_EVENTS=20000, an 8 MB dump), which the test's total time
 * then made look like ~600 us per probe.
 */
static int thr_check(const char *out, struct thr_seen *s)
{
	const char *l = out;
	int last[64], n = 0;

	memset(last, -1, sizeof(last));
	while (l) {
		char line[1024], name[64], cpu[8];
		const char *d;
		unsigned long long ttid;
		double el, de;
		int t, i, k, pid, lwp;

		l = dump_line(l, line, sizeof(line));
		if (!strstr(line, " tl_thr "))
			continue;
		d = strstr(line, "t: ");
		if (!d || sscanf(d, "t: %d i: %d", &t, &i) != 2 || t < 0 || t >= s->nthreads ||
		    sscanf(line, "%lf %lf %d %d %llu %7s %63s", &el, &de, &pid, &lwp, &ttid, cpu,
			   name) != 7 ||
		    strcmp(name, "tl_thr"))
			fail_msg("bad tl_thr line \"%.100s\"", line);
		if (i <= last[t])
			fail_msg("thread %d: i %d after %d", t, i, last[t]);
		if (s->tid[t] && s->tid[t] != lwp)
			fail_msg("thread %d: events under tids %d and %d", t, s->tid[t], lwp);
		if (s->steps > 1 && s->per > 0 && (k = batch_of(s, i)) > 0 && k <= s->nreleases &&
		    el < s->release_ms[k - 1])
			fail_msg("thread %d: event %d (batch %d) at %.6f ms, before its release "
				 "at %.6f ms",
				 t, i, k, el, s->release_ms[k - 1]);
		if (s->gap_ns && s->count[t] && s->ngaps < s->max_gaps &&
		    (s->steps <= 1 || s->per <= 0 || batch_of(s, i) == batch_of(s, last[t])))
			s->gap_ns[s->ngaps++] = (el - s->last_ms[t]) * 1e6;
		s->tid[t] = lwp;
		if (!s->count[t])
			s->first_ms[t] = el;
		s->last_ms[t] = el;
		last[t] = i;
		s->count[t]++;
		n++;
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void test_dlopen_cycles_threads(void **state)
{
	static double ctor_ms[100000];
	int cycles = size("TL_STRESS_DL", 100, 1000), ticks = 10,
	    nthr = tl_env_int("TL_STRESS_DL_THREADS", 4),
	    per = size("TL_STRESS_DL_EVENTS", 2000, 20000);
	char file[PATH_MAX], cmd[PATH_MAX + 16];
	struct thr_seen seen = {0};
	struct tl_blocks blocks;
	size_t out_size;
	char *out;
	int i, n, nctor, during = 0, dlopens = 0, dlcloses = 0;
	double gap_med = 0, gap_max = 0;
	tnfctl_event_info_t info;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	long long t0 = tl_now_ms(), t_run, t_dump;

	(void)state;
	tl_require_root();
	tl_watchdog_extend(full ? 900 : 240);
	if (nthr < 1 || nthr > 64)
		nthr = 4;
	if (cycles > (int)(sizeof(ctor_ms) / sizeof(ctor_ms[0])))
		cycles = sizeof(ctor_ms) / sizeof(ctor_ms[0]);
	/* tnfdump prints ~100 bytes an event */
	out_size = ((size_t)nthr * per + (size_t)cycles * (ticks + 1)) * 160 + (4 << 20);
	out = malloc(out_size);
	assert_non_null(out);
	h = start(&p);
	trace_path(file, sizeof(file), "dlstress");
	tl_assert_err(tnfctl_buffer_alloc(h, file, tl_env_int("TL_STRESS_DL_BUF", 32 << 20)),
		      TNFCTL_ERR_NONE);
	created_probes = 0;
	tl_assert_err(tnfctl_register_funcs(h, enable_new, NULL), TNFCTL_ERR_NONE);
	/*
	 * 4 threads fire tl_thr while the main thread loads and unloads: in
	 * cycles + 1 batches, one let go (bgstep) right after each dlopen, so
	 * that they fire through the dlopen stops, the create callbacks'
	 * enables, the plug's ticks and the dlclose stops.  All at once, they
	 * were done before the first dlopen.
	 */
	tl_send(p, "bgfire %d %d %d", nthr, per, cycles + 1);
	snprintf(cmd, sizeof(cmd), "dlopen %s", plug_lib);
	for (i = 0; i < cycles; i++) {
		tl_send(p, "%s", cmd);
		tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
		tl_info(h, &info);
		if (strcmp(info.path, plug_lib))
			fail_msg("cycle %d: DLOPEN of \"%s\"", i, info.path);
		dlopens++;
		/* the replies of the commands done so far (not to fill the pipe) */
		if (i == 0) {
			tl_expect(p, "ready");
			tl_expect(p, "bgfiring");
		} else {
			assert_string_equal(tl_expect(p, "dlclose"), "dlclose 0");
		}
		tl_send(p, "bgstep");
		tl_send(p, "fireplug %d", ticks);
		tl_send(p, "dlclose");
		tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
		dlcloses++;
		tl_expect(p, "dlopen ok");
		tl_expect(p, "bgstep");
		tl_expect(p, "firedplug");
	}
	tl_send(p, "bgjoin");
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_string_equal(tl_expect(p, "dlclose"), "dlclose 0");
	tl_expect(p, "bgjoined");
	t_run = tl_now_ms();
	dump_whole(file, out, out_size);
	t_dump = tl_now_ms();
	nctor = event_times(out, "tl_plug_ctor", ctor_ms, cycles + 1);
	assert_int_equal(nctor, cycles);
	assert_int_equal(count_events(out, "tl_plug_tick", NULL), cycles * ticks);
	seen.nthreads = nthr;
	seen.per = per;
	seen.steps = cycles + 1;
	seen.release_ms = ctor_ms;
	seen.nreleases = nctor;
	seen.max_gaps = nthr * per;
	seen.gap_ns = malloc(sizeof(double) * (seen.max_gaps > 0 ? seen.max_gaps : 1));
	assert_non_null(seen.gap_ns);
	n = thr_check(out, &seen);
	for (i = 0; i < nthr; i++)
		if (seen.count[i] != per)
			fail_msg("thread %d: %d tl_thr events in the file, fired %d", i,
				 seen.count[i], per);
	if (seen.ngaps) {
		qsort(seen.gap_ns, seen.ngaps, sizeof(double), cmp_double);
		gap_med = seen.gap_ns[seen.ngaps / 2];
		gap_max = seen.gap_ns[seen.ngaps - 1];
	}
	free(seen.gap_ns);
	/* the threads and the main thread wrote, no block wasted (blocklib.h) */
	tl_assert_block_use(file, nthr + 1, &blocks);
	/* how much of the firing went on between the first and the last dlopen */
	if (nctor > 0) {
		const char *l = out;

		while (l) {
			char line[1024];
			double el;

			l = dump_line(l, line, sizeof(line));
			if (strstr(line, " tl_thr ") && sscanf(line, "%lf", &el) == 1 &&
			    el >= ctor_ms[0] && el <= ctor_ms[nctor - 1])
				during++;
		}
	}
	/*
	 * The times apart.  What a probe costs here is in the trace: the gap
	 * from each tl_thr event to the same thread's next in the same batch
	 * (median; the largest takes in a stop or a preemption).  The wall
	 * times are the run (the controller's cycles), tnfdump, and the
	 * checks here: dividing the total by the events is no probe cost.
	 */
	print_message("# dlopen/dlclose: %d cycles (%d DLOPEN, %d DLCLOSE), %d probes created "
		      "and enabled, %d plug events + %d thread events checked (%d fired during "
		      "the cycles), 0 lost; %llu blocks (%u of tags, %u less than half full); "
		      "tl_thr to tl_thr in a thread: median %.0f ns, max %.0f us; run %.2f s, "
		      "tnfdump %.2f s, checks %.2f s\n",
		      cycles, dlopens, dlcloses, created_probes, cycles * (ticks + 1), n, during,
		      (unsigned long long)blocks.ticket, blocks.tags, blocks.sparse, gap_med,
		      gap_max / 1000.0, (t_run - t0) / 1000.0, (t_dump - t_run) / 1000.0,
		      (tl_now_ms() - t_dump) / 1000.0);
	free(out);
	unlink(file);
}

/* ------------------------------------------------------------------ */
/* 8 threads into a wrapping buffer */

static void test_wrap_8_threads(void **state)
{
	static char out[64 << 20];
	int per = size("TL_STRESS_WRAP", 12500, 125000), i, n, active = 0;
	struct thr_seen seen = {.nthreads = 8};
	char file[PATH_MAX], *argv[] = {tnfdump_prog, "-r", file, NULL};
	struct tl_proc *p;
	tnfctl_handle_t *h;
	long long t0 = tl_now_ms();
	const char *c;
	int fd, st;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_watchdog_extend(full ? 900 : 240);
	h = start(&p);
	trace_path(file, sizeof(file), "wrapstress");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 128 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_thr"), NULL), TNFCTL_ERR_NONE);
	/* in lockstep batches of 100: the last batch of all 8 survives the wrap */
	tl_send(p, "threads_fire 8 %d %d", per, per / 100);
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect(p, "ready");
	tl_expect(p, "threadsfired 8");
	dump_whole(file, out, sizeof(out));
	/* tnfdump says the file wrapped (it did: see below), and nothing else */
	for (c = strstr(out, "tnfdump:"); c; c = strstr(c + 1, "tnfdump:"))
		if (!strncmp(c, "tnfdump: ", 9) && strstr(c, "\n") &&
		    (!strstr(c, "the trace wrapped") ||
		     strstr(c, "the trace wrapped") > strchr(c, '\n')))
			fail_msg("tnfdump complained: %.300s", c);
	if (!strstr(out, "the trace wrapped: its oldest events were written over"))
		fail_msg("tnfdump did not say that the trace wrapped");
	n = thr_check(out, &seen);
	for (i = 0; i < 8; i++) {
		int j;

		active += seen.count[i] > 0;
		for (j = 0; j < i; j++)
			if (seen.tid[i] && seen.tid[i] == seen.tid[j])
				fail_msg("threads %d and %d share tid %d", j, i, seen.tid[i]);
	}
	assert_true(n > 1000);
	assert_true(n < 8 * per); /* it did wrap */
	if (active != 8)
		fail_msg("only %d of the 8 threads' events survived the wrap: their last "
			 "batches were written together",
			 active);
	/* the raw dump reads the same file without error */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid = tl_spawn(argv, environ, fd, NULL);
	close(fd);
	assert_int_equal(tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms), pid);
	assert_int_equal(st, 0);
	print_message("# wrap: 8 threads x %d events into 128 KiB (about %d times its size), "
		      "%d events read back in order, %d threads present, %.1f s\n",
		      per, (int)((8LL * per * 32) / (128 * 1024)), n, active,
		      (tl_now_ms() - t0) / 1000.0);
	unlink(file);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_storm_stopping),
		TL_TEST(test_storm_passive),
		TL_TEST(test_dlopen_cycles_threads),
		TL_TEST(test_wrap_8_threads),
		TL_FINAL_TEST,
	};

	if (argc >= 8 && !strcmp(argv[1], "--wl") && !strcmp(argv[2], "storm"))
		return st_workload(argv + 3);
	if (tl_self_exe(self_exe, sizeof(self_exe)))
		return 1;
	full = getenv("TL_STRESS") && !strcmp(getenv("TL_STRESS"), "full");
	printf("# stress sizes: %s\n", full ? "full (TL_STRESS=full)" : "short");
	return tl_run(tests);
}
