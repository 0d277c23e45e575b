// SPDX-License-Identifier: BSD-2-Clause
/*
 * TNF probes as USDT probes (<tnf/probe.h> with <sys/sdt.h>): bpftrace
 * lists the probes of a program (tl_usdt, provider tl_usdt) and of a
 * library (libtl_plug.so, the default provider tnf), and fires them with
 * their argument values at every hit, whether the TNF probes are disabled
 * (no controller) or enabled and traced (tnfctl_internal_open in the
 * program; the TNF file is checked too).  bpftrace runs the program with
 * -c, so its probes are attached before the program starts.
 */
#include "testlib.h"
#include "probelib.h"

#define BPFTRACE "/usr/bin/bpftrace"
#define NHITS	 40

static char usdt_prog[PATH_MAX];

/* Skips the test, with the reason, where bpftrace or uprobes are missing. */
static void require_bpftrace(void)
{
	tl_require_root();
	if (access(BPFTRACE, X_OK)) {
		print_message("SKIP: " BPFTRACE " is missing (Debian: apt-get install bpftrace)\n");
		skip();
	}
	if (access("/sys/bus/event_source/devices/uprobe", F_OK)) {
		print_message("SKIP: the kernel has no uprobe events (CONFIG_UPROBE_EVENTS)\n");
		skip();
	}
	paths();
	tl_path_of(usdt_prog, "tests/helpers/tl_usdt");
}

/* Runs bpftrace with @args (NULL-ended), its stdout and stderr into @out; returns its status. */
static int run_bpftrace(const char *const *args, char *out, size_t len)
{
	char *argv[16];
	int st, i;

	argv[0] = (char *)BPFTRACE;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	st = run_captured(argv, "bpftrace", out, len);
	if (st == -1)
		fail_msg("bpftrace did not end within %d ms", tl.timeout_ms);
	printf("%s", out);
	return st;
}

/* How many whole lines of @out are @line. */
static int count_lines(const char *out, const char *line)
{
	size_t len = strlen(line);
	const char *l;
	int n = 0;

	for (l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, line, len) && (l[len] == '\n' || l[len] == '\0'))
			n++;
	return n;
}

/* Lines of @out that start with @prefix. */
static int count_prefixed(const char *out, const char *prefix)
{
	size_t len = strlen(prefix);
	const char *l;
	int n = 0;

	for (l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, prefix, len))
			n++;
	return n;
}

/* `bpftrace -l 'usdt:@path:*'` gives exactly @want (NULL-ended), each once. */
static void check_list(const char *path, const char *const *want)
{
	static char out[1 << 16];
	char pat[PATH_MAX + 16], line[2 * PATH_MAX];
	const char *args[] = {"-l", pat, NULL};
	int i;

	snprintf(pat, sizeof(pat), "usdt:%s:*", path);
	assert_int_equal(run_bpftrace(args, out, sizeof(out)), 0);
	for (i = 0; want[i]; i++) {
		snprintf(line, sizeof(line), "usdt:%s:%s", path, want[i]);
		if (count_lines(out, line) != 1)
			fail_msg("\"%s\" listed %d times, not once", line, count_lines(out, line));
	}
	snprintf(line, sizeof(line), "usdt:%s:", path);
	assert_int_equal(count_prefixed(out, line), i);
}

/* Every TNF probe of the program and of its library is listed, with its provider. */
static void test_usdt_list(void **state)
{
	static const char *const prog_probes[] = {"tl_usdt:usdt_zero", "tl_usdt:usdt_ints",
						  "tl_usdt:usdt_mix", NULL};
	static const char *const plug_probes[] = {"tnf:tl_plug_ctor", "tnf:tl_plug_tick", NULL};

	(void)state;
	require_bpftrace();
	check_list(usdt_prog, prog_probes);
	check_list(plug_lib, plug_probes);
}

/*
 * Runs `tl_usdt ARGS` under bpftrace with every probe of the program
 * printing its arguments, and checks NHITS hits of each with their values
 * (tl_usdt.c says which).  The order of lines is not checked: bpftrace's
 * per-CPU buffers may interleave them.  The library's probes are not
 * traced here: bpftrace 0.17 with -c resolves a library's probes in the
 * command's process before it runs, where the library is not loaded yet
 * ("Error finding location"), so the command could not be run by -c.
 */
static void fire_under_bpftrace(const char *cmd)
{
	static char out[1 << 20];
	char script[6 * PATH_MAX], line[256];
	const char *args[] = {"-e", script, "-c", cmd, NULL};
	double d;
	uint64_t bits;
	int i;

	snprintf(script, sizeof(script),
		 "usdt:%1$s:tl_usdt:usdt_zero { printf(\"zero\\n\"); }\n"
		 "usdt:%1$s:tl_usdt:usdt_ints { printf(\"ints %%d %%ld %%u\\n\", arg0, arg1, "
		 "arg2); }\n"
		 "usdt:%1$s:tl_usdt:usdt_mix { printf(\"mix %%d %%lx %%lx %%lu %%d\\n\", arg0, "
		 "arg1, arg2, arg3, arg4 != 0); }\n",
		 usdt_prog);
	assert_int_equal(run_bpftrace(args, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "Attaching 3 probes...\n"));
	assert_int_equal(count_lines(out, "zero"), NHITS);
	assert_int_equal(count_prefixed(out, "ints "), NHITS);
	assert_int_equal(count_prefixed(out, "mix "), NHITS);
	for (i = 0; i < NHITS; i++) {
		snprintf(line, sizeof(line), "ints %d %ld %u", i - 2, -1000000007L * (i + 1),
			 (unsigned)(uint8_t)(250 + i));
		if (count_lines(out, line) != 1)
			fail_msg("hit %d: no \"%s\"", i, line);
		d = 0.5 * i;
		memcpy(&bits, &d, sizeof(bits));
		snprintf(line, sizeof(line), "mix %d %x %llx 42 1", -i, 0x1000 + i,
			 (unsigned long long)bits);
		if (count_lines(out, line) != 1)
			fail_msg("hit %d: no \"%s\"", i, line);
	}
}

/* TNF probes disabled (no controller): bpftrace alone raises the semaphores. */
static void test_usdt_fires_tnf_disabled(void **state)
{
	char cmd[4 * PATH_MAX];

	(void)state;
	require_bpftrace();
	snprintf(cmd, sizeof(cmd), "%s fire %d %s", usdt_prog, NHITS, plug_lib);
	fire_under_bpftrace(cmd);
}

/* TNF probes enabled and traced through the API: both see every hit. */
static void test_usdt_fires_tnf_enabled(void **state)
{
	static char dout[1 << 20];
	char cmd[4 * PATH_MAX], file[PATH_MAX];

	(void)state;
	require_bpftrace();
	trace_path(file, sizeof(file), "usdt");
	snprintf(cmd, sizeof(cmd), "%s traced %s %d %s", usdt_prog, file, NHITS, plug_lib);
	fire_under_bpftrace(cmd);
	assert_int_equal(dump(file, dout, sizeof(dout)), 0);
	assert_int_equal(count_events(dout, "usdt_zero", NULL), NHITS);
	assert_int_equal(count_events(dout, "usdt_ints", NULL), NHITS);
	/* hit 39 */
	assert_int_equal(count_events(dout, "usdt_ints", "i: 37 neg: -40000000280 b: 33"), 1);
	assert_int_equal(count_events(dout, "usdt_mix", "c: 42 str: \"usdt\""), NHITS);
	assert_int_equal(count_events(dout, "tl_plug_tick", NULL), NHITS);
	unlink(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_usdt_list),
		TL_TEST(test_usdt_fires_tnf_disabled),
		TL_TEST(test_usdt_fires_tnf_enabled),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
