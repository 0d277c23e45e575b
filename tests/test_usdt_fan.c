// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex -f on a fan of hundreds of live processes (tests/helpers/tl_sdt_fan),
 * a USDT probe enabled in all of them: every hit recorded, prex's
 * descriptors not growing with the fan, and under a hard RLIMIT_NOFILE of
 * 256 every process whose probe could not be attached named.
 */
#include "testlib.h"
#include "probelib.h"

#include "prexlib.h"

static char fan_prog[PATH_MAX];

static void require_uprobes(void)
{
	require_uprobe_events();
	tl_path_of(fan_prog, "tests/helpers/tl_sdt_fan");
}

/* The fan's records in @trace's .usdt file: hits of the parent, of the children. */
static void fan_hits(const char *trace, int *parent, int *children)
{
	static char dumped[1 << 20];
	char file[PATH_MAX + 8];

	snprintf(file, sizeof(file), "%s.usdt", trace);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	*parent = count_lines_with(dumped, " hit ", "arg0: 1 ");
	*children = count_lines_with(dumped, " hit ", "arg0: 2 ");
}

/*
 * A fan of N live processes, tl_sdt_fan:hit enabled: each process's hit is
 * recorded, the root's and every child's.  BUG (fixed): past 128
 * processes (two specs each) libbpf's spec map of the session's BPF object
 * was full, each attach failed E2BIG, and libbpf 1.1 freed its list of
 * free spec ids twice: prex died of a double free.  N: 300 (40 in a slow
 * lane: the uprobes' releases alone would take minutes under TCG; at most
 * 200 without BPF cookies, before 5.15, where each forked child's probe,
 * at its parent's address, takes a BPF object of its own, and a session
 * has 256); prex is given a second a process (a hang, not a speed).
 */
static void test_fan_every_hit(void **state)
{
	static char err[1 << 16];
	const char *opts[] = {"-f", "-o", NULL, fan_prog, NULL, NULL};
	int n = tl.timeout_ms > 60000 ? 40 : tl_kernel_has_cookies() ? 300 : 200, parent, children;
	char trace[PATH_MAX], ns[16];
	struct prex *x;

	(void)state;
	require_uprobes();
	tl_watchdog_extend(n * 2);
	fresh_trace(trace, sizeof(trace), "fan");
	snprintf(ns, sizeof(ns), "%d", n);
	opts[2] = trace;
	opts[4] = ns;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "enable name=hit\ncontinue\n");
	assert_int_equal(prex_wait_ms(x, tl.timeout_ms + n * 1000), 0);
	rd_rest(&x->err, err, sizeof(err));
	assert_null(strstr(err, "USDT probe"));
	fan_hits(trace, &parent, &children);
	assert_int_equal(parent, 1);
	assert_int_equal(children, n);
	/* each perf link's release takes the kernel ~0.1 s, one after the other */
	assert_int_equal(tl_wait_releasers(n * 2 * 500), 0);
	prex_close_fds(x);
}

/*
 * prex -f holds no descriptor per followed process: N live processes, each
 * with its objects' probes listed.  BUG (fixed): each object of each
 * process kept its ELF file open (4 per process here), and under a limit
 * of 1024 no probe of a process past ~250 was listed.  N: 200.
 */
static void test_fan_fds_flat(void **state)
{
	static char out[1 << 16];
	const char *opts[] = {"-f", "-o", NULL, fan_prog, "-w", "200", NULL};
	char trace[PATH_MAX];
	struct prex *x;
	const char *l;
	int fds, fan;

	(void)state;
	require_uprobes();
	fresh_trace(trace, sizeof(trace), "fanfds");
	opts[2] = trace;
	x = prex_spawn(opts, false, NULL, NULL);
	/* each process's probes are listed (prex's create callback), none enabled */
	writes(x->in_w, "continue\n");
	l = rd_until(&x->out, "forked 200");
	fan = atoi(strstr(l, "fan ") + 4);
	fds = tl_count_fds(x->pid);
	print_message("# prex following 201 processes: %d descriptors\n", fds);
	kill(fan, SIGUSR1);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	assert_true(fds <= 64);
	prex_close_fds(x);
}

/*
 * Under a hard RLIMIT_NOFILE of 256, a fan of 75 children with a
 * grandchild each, the probe enabled: each process's perf events and links
 * (two each) are the controller's, so not all fit, but no process is lost
 * silently: every one is recorded or named ("process PID: USDT probe
 * tl_sdt_fan:hit: ... (Too many open files)", or "USDT probes not listed"
 * when not even its ELF files could be opened), and prex ends as it
 * should.  BUG (fixed): under 1024, 155 of a fan of 401 were left out
 * without a word; then a named child's own children were (their copies
 * disabled), and a child whose objects could not be opened.
 */
static void test_fan_hard_limit_named(void **state)
{
	static char err[1 << 17];
	char trace[PATH_MAX];
	const char *opts[] = {"-f", "-o", trace, fan_prog, "-2", "75", NULL};
	/* in prex only: without CAP_SYS_RESOURCE a hard limit never comes back up */
	static const char *const sh[] = {"/bin/sh", "-c", "ulimit -n 256 && exec \"$0\" \"$@\"",
					 NULL};
	const char *const *saved = prex_prefix;
	int parent, children, named;
	struct prex *x;

	(void)state;
	require_uprobes();
	tl_watchdog_extend(300);
	fresh_trace(trace, sizeof(trace), "fanlim");
	prex_prefix = sh;
	x = prex_spawn(opts, false, NULL, NULL);
	prex_prefix = saved;
	writes(x->in_w, "enable name=hit\ncontinue\n");
	assert_int_equal(prex_wait_ms(x, tl.timeout_ms + 150 * 1000), 0);
	rd_rest(&x->err, err, sizeof(err));
	/* its probe not attached, or its probes not even listed */
	named = count_str(err, ": USDT probe tl_sdt_fan:hit: ") +
		count_str(err, ": USDT probes not listed: ");
	fan_hits(trace, &parent, &children);
	print_message("# 151 processes under 256 descriptors: %d recorded, %d named\n",
		      parent + children, named);
	assert_int_equal(parent, 1);
	assert_true(named > 0);
	assert_int_equal(children + named, 150);
	assert_int_equal(tl_wait_releasers((children + 1) * 2 * 500), 0);
	assert_true(count_str(err, "(Too many open files)") > 0);
	prex_close_fds(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_fan_every_hit),
		TL_TEST(test_fan_fds_flat),
		TL_TEST(test_fan_hard_limit_named),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
