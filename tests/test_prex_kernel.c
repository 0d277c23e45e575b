// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex -k on the real kernel, driven as a user would: commands on its
 * stdin, its stdout and stderr read line by line (each command's answer is
 * waited for before the test goes on, so the kernel's state is known when
 * the workload runs), the kernel trace file read back with tnfdump.  Also
 * the kernel commands' error paths, with the original prex's messages, and
 * their refusal in user mode.  Skipped, with the reason, where the kernel
 * has no tracefs (tnfctl_kernel_open: FILENOTFOUND) or lacks a BPF feature.
 * The *_compat and slot-cap tests force the no-cookie variant
 * (TNFCTL_KTRACE_COMPAT=1), as kernels before 5.15 run it.
 */
#include "testlib.h"
#include "probelib.h"

#include "prexlib.h"

#define HELLO "Type \"help\" for help ..."

/*
 * Reads the first line of a started `prex -k`; skips the test where the
 * kernel cannot be traced, fails on any other start error.  kprex_start()
 * also starts it, with OPTS.
 */
static struct prex *kprex_started(struct prex *x)
{
	static char err[8192];
	const char *l;

	l = rd_line(&x->out, tl.timeout_ms);
	if (l) {
		assert_string_equal(l, HELLO);
		return x;
	}
	close(x->in_w);
	rd_rest(&x->err, err, sizeof(err));
	prex_wait(x);
	close(x->out.fd);
	close(x->err.fd);
	if (strstr(err, "trouble attaching to the kernel: file not found") ||
	    (strstr(err, "trouble attaching to the kernel: the running kernel lacks") &&
	     !tl_kernel_mode_supported())) {
		print_message("SKIP: kernel tracing is not available here: %s", err);
		skip();
	}
	fail_msg("prex -k did not start: %s", err);
	return NULL;
}

static struct prex *kprex_start(const char *const *opts)
{
	tl_require_root();
	return kprex_started(prex_spawn(opts, false, NULL, NULL));
}

/* The next stdout line of prex, which must be @want. */
#define out_is(x, want) out_is_at(x, want, TL_AT)
static void out_is_at(struct prex *x, const char *want, TL_LOC)
{
	const char *l = rd_line(&x->out, tl.timeout_ms);

	if (!l)
		TL_FAILF("no line \"%s\" from prex within %d ms", want, tl.timeout_ms);
	else if (strcmp(l, want))
		TL_FAILF("prex printed \"%s\", expected \"%s\"", l, want);
}

/* ---------------------------------------------------------------- */

/* -k with a command, -p, -l or -f is a usage error; -o is not (see the sessions). */
static void test_kernel_usage(void **state)
{
	static const char *const cases[][4] = {
		{"-k", "/bin/true", NULL},
		{"-k", "-p", "1", NULL},
		{"-k", "-l", "x.so", NULL},
		{"-k", "-f", NULL},
	};
	static const char *const want[] = {
		"prex: can't specify a command in kernel mode\n",
		"prex: can't specify a pid in kernel mode\n",
		"prex: can't use the preload option in kernel mode\n",
		"prex: can't follow processes in kernel mode\n",
	};
	static const char *const help[] = {"--help", NULL};
	static char err[8192], out[8192];
	struct prex *x;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		x = prex_spawn(cases[i], false, NULL, NULL);
		close(x->in_w);
		rd_rest(&x->err, err, sizeof(err));
		if (strncmp(err, want[i], strlen(want[i])))
			fail_msg("case %zu: expected \"%s\" first on stderr, got \"%s\"", i,
				 want[i], err);
		assert_non_null(
			strstr(err, "usage: prex [-o <outfilename>] [-s <kbytes-size>] -k\n"));
		assert_null(strstr(err, "not available"));
		assert_int_equal(prex_wait(x), 1); /* the original's status for a usage error */
		close(x->out.fd);
		close(x->err.fd);
	}
	x = prex_spawn(help, false, NULL, NULL);
	close(x->in_w);
	rd_rest(&x->out, out, sizeof(out));
	assert_non_null(strstr(out, "\t-k                 kernel mode: control the kernel's "
				    "tracepoints (--kernel)\n"));
	assert_int_equal(prex_wait(x), 0);
	close(x->out.fd);
	close(x->err.fd);
}

/*
 * -o that cannot be created, or -s over the kernel buffer's 1 GiB: prex -k
 * says so and exits 1 before anything is traced (it used to start, fail at
 * `buffer alloc` and exit 0 having traced nothing).
 */
static void test_kernel_bad_outfile_exits_1(void **state)
{
	static const char *const cases[][6] = {
		{"-k", "-o", "/nonexistent-dir-tnf/k.tnf", NULL},
		{"-k", "-o", "/", NULL},
		{"-k", "-s", "2000000", NULL},
	};
	static const char *const want[] = {
		"prex: cannot create trace file /nonexistent-dir-tnf/k.tnf: No such file or "
		"directory\n",
		"prex: cannot create trace file /: Is a directory\n",
		"prex: trace file size 2000000 KB is too big: the kernel buffer is at most "
		"1048576 KB\n",
	};
	static char err[8192], out[8192];
	struct prex *x;
	size_t i;

	(void)state;
	tl_require_root();
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		x = prex_spawn(cases[i], false, NULL, NULL);
		close(x->in_w); /* nothing to read: the old prex ended 0 at the EOF */
		rd_rest(&x->err, err, sizeof(err));
		rd_rest(&x->out, out, sizeof(out));
		if (strcmp(err, want[i]))
			fail_msg("case %zu: expected \"%s\" on stderr, got \"%s\"", i, want[i],
				 err);
		assert_null(strstr(out, "allocated"));
		assert_int_equal(prex_wait(x), 1);
		close(x->out.fd);
		close(x->err.fd);
	}
}

/*
 * Numbers past 2^64 saturate instead of wrapping: "pfilter add 2^64+1" was
 * pid 1 (init) and "buffer alloc 2^64+256k" a 256 KiB buffer.
 */
static void test_kernel_huge_numbers_saturate(void **state)
{
	static char err[16384], want[16384];
	const char *opts[] = {"-k", "-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;

	(void)state;
	prex_paths();
	fresh_trace(trace, sizeof(trace), "khuge");
	opts[2] = trace;
	x = kprex_start(opts);
	writes(x->in_w, "pfilter add 18446744073709551617\n"
			"buffer alloc 18446744073709813760\n"
			"buffer alloc 36893488147419103232k\n"
			"pfilter\n"
			"buffer\n"
			"quit\n");
	out_is(x, "Process filtering is off");
	out_is(x, "Process filter set is empty.");
	out_is(x, "No trace buffer allocated");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "Process 18446744073709551615: bad input argument\n"
		 "error in allocating buffer: requested trace size is too big: %s\n"
		 "error in allocating buffer: requested trace size is too big: %s\n",
		 trace, trace);
	assert_string_equal(err, want);
	prex_close_fds(x);
}

/* ---- a session that traces a workload ---- */

#define NKIDS 3

/* Children that wait for a byte, open their file, fork a child and report its pid. */
struct kids {
	pid_t pid[NKIDS + 1], grandchild[NKIDS];
	int go[NKIDS], report[NKIDS];
	char path[NKIDS + 1][PATH_MAX];
};

/* openat(@path) from a copy on this stack: a page the BPF program can read. */
static void open_path(const char *path)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s", path);
	fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		_exit(3); /* the file must not exist */
}

static void kids_start(struct kids *k)
{
	int i, go[2], rep[2];

	for (i = 0; i < NKIDS; i++) {
		snprintf(k->path[i], sizeof(k->path[i]), "%s/kprex-%d-%d", tmpdir, getpid(), i);
		assert_int_equal(pipe2(go, O_CLOEXEC), 0);
		assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
		k->pid[i] = fork();
		assert_true(k->pid[i] >= 0);
		if (!k->pid[i]) {
			pid_t g;
			char c;
			int st;

			if (read(go[0], &c, 1) != 1)
				_exit(2);
			open_path(k->path[i]);
			g = fork();
			if (g < 0)
				_exit(4);
			if (!g)
				_exit(0);
			if (waitpid(g, &st, 0) != g || write(rep[1], &g, sizeof(g)) != sizeof(g))
				_exit(5);
			_exit(0);
		}
		tl_track_pid(k->pid[i]);
		close(go[0]);
		close(rep[1]);
		k->go[i] = go[1];
		k->report[i] = rep[0];
	}
	snprintf(k->path[NKIDS], sizeof(k->path[NKIDS]), "%s/kprex-%d-late", tmpdir, getpid());
}

/* Lets the children go, reaps them; then a late child, forked now, opens its file. */
static void kids_run(struct kids *k)
{
	int i, st;

	for (i = 0; i < NKIDS; i++) {
		assert_int_equal(write(k->go[i], "g", 1), 1);
		close(k->go[i]);
	}
	for (i = 0; i < NKIDS; i++) {
		assert_int_equal(tl_waitpid_timeout(k->pid[i], &st, 0, tl.timeout_ms), k->pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_int_equal(read(k->report[i], &k->grandchild[i], sizeof(pid_t)),
				 sizeof(pid_t));
		close(k->report[i]);
	}
	k->pid[NKIDS] = fork();
	assert_true(k->pid[NKIDS] >= 0);
	if (!k->pid[NKIDS]) {
		open_path(k->path[NKIDS]);
		_exit(0);
	}
	tl_track_pid(k->pid[NKIDS]);
	assert_int_equal(tl_waitpid_timeout(k->pid[NKIDS], &st, 0, tl.timeout_ms), k->pid[NKIDS]);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* One event line of tnfdump's table. */
struct ev {
	int pid;
	char probe[64];
	const char *line;
};

static bool parse_event(const char *line, struct ev *e)
{
	char tid[32];
	double el, de;
	int lwp, cpu;

	e->line = line;
	return sscanf(line, "%lf %lf %d %d %31s %d %63s", &el, &de, &e->pid, &lwp, tid, &cpu,
		      e->probe) == 7;
}

/* Does @line have "@field: @value" as a whole value? */
static bool has_int(const char *line, const char *field, long value)
{
	char want[96];
	const char *p;
	size_t n;

	n = (size_t)snprintf(want, sizeof(want), " %s: %ld", field, value);
	for (p = strstr(line, want); p; p = strstr(p + 1, want))
		if (p[n] == '\0' || p[n] == ' ')
			return true;
	return false;
}

/*
 * The whole session: probes listed and selected by name, a buffer with
 * the default size (384 KiB) in the -o file, the process filter on the
 * test and its children (so that nothing else fills the buffer, and a
 * child outside the list shows it works), tracing on, the workload,
 * tracing off, quit.  The file then has each child's fork of its own child
 * and each child's openat of its own file, and nothing of any process
 * outside the filter.
 */
static void test_kernel_session_traces_workload(void **state)
{
	static char dumped[1 << 20], err[8192], line[PATH_MAX + 64], set[256];
	const char *opts[] = {"-k", "-o", NULL, NULL};
	int forks[NKIDS] = {0}, opens[NKIDS] = {0}, late_fork = 0, late_open = 0, i, n = 0;
	char trace[PATH_MAX];
	struct prex *x;
	struct kids k;
	char *l, *nl;

	(void)state;
	prex_paths();
	fresh_trace(trace, sizeof(trace), "ksession");
	opts[2] = trace;
	x = kprex_start(opts);
	kids_start(&k);
	writes(x->in_w, "list name 'enable' 'trace' probes name=sched_process_fork "
			"name=sys_enter_openat\n"
			"create $w name=sched_process_fork name=sys_enter_openat\n"
			"enable $w\n"
			"trace $w\n"
			"list name 'enable' 'trace' probes $w\n"
			"buffer alloc\n");
	out_is(x, "name=sched_process_fork enable=off trace=on ");
	out_is(x, "name=sys_enter_openat enable=off trace=on ");
	out_is(x, "name=sched_process_fork enable=on trace=on ");
	out_is(x, "name=sys_enter_openat enable=on trace=on ");
	out_is(x, "Buffer of size 393216 bytes allocated");
	snprintf(line, sizeof(line), "Current trace file is: %s", trace);
	out_is(x, line);

	snprintf(line, sizeof(line), "pfilter add %d,%d,%d,%d\npfilter on\npfilter\n", getpid(),
		 k.pid[0], k.pid[1], k.pid[2]);
	writes(x->in_w, line);
	out_is(x, "Process filtering is on");
	snprintf(set, sizeof(set), "Process filter set is {%d, %d, %d, %d}", getpid(), k.pid[0],
		 k.pid[1], k.pid[2]);
	out_is(x, set);
	writes(x->in_w, "ktrace on\nktrace\n");
	out_is(x, "Tracing is on");

	kids_run(&k);

	writes(x->in_w, "ktrace off\nktrace\nlist tracefile\nquit\n");
	out_is(x, "Tracing is off");
	snprintf(line, sizeof(line), "Current trace file is: %s", trace);
	out_is(x, line);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(err, "");
	assert_null(rd_line(&x->out, tl.timeout_ms));
	prex_close_fds(x);

	assert_int_equal(dump(trace, dumped, sizeof(dumped)), 0);
	for (l = dumped; l && *l; l = nl ? nl + 1 : NULL) {
		struct ev e;

		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (!parse_event(l, &e))
			continue;
		n++;
		/* only the processes of the filter list */
		if (e.pid != getpid() && e.pid != k.pid[0] && e.pid != k.pid[1] &&
		    e.pid != k.pid[2])
			fail_msg("an event of pid %d, outside the filter: %s", e.pid, l);
		for (i = 0; i < NKIDS; i++) {
			if (e.pid != k.pid[i])
				continue;
			if (!strcmp(e.probe, "sched_process_fork") &&
			    has_int(l, "parent_pid", k.pid[i]) &&
			    has_int(l, "child_pid", k.grandchild[i]))
				forks[i]++;
			if (!strcmp(e.probe, "sys_enter_openat") && strstr(l, k.path[i]))
				opens[i]++;
		}
		if (!strcmp(e.probe, "sched_process_fork") && e.pid == getpid() &&
		    has_int(l, "parent_pid", getpid()) && has_int(l, "child_pid", k.pid[NKIDS]))
			late_fork++;
		if (strstr(l, k.path[NKIDS]))
			late_open++;
	}
	for (i = 0; i < NKIDS; i++)
		if (forks[i] != 1 || opens[i] != 1)
			fail_msg("child %d (pid %d): %d fork events of grandchild %d and %d openat "
				 "events of %s, want 1 and 1; the trace:\n%s",
				 i, k.pid[i], forks[i], k.grandchild[i], opens[i], k.path[i],
				 dumped);
	/* the test is in the list, the late child is not */
	assert_int_equal(late_fork, 1);
	assert_int_equal(late_open, 0);
	assert_true(n >= 2 * NKIDS + 1);
}

/* ---- the error paths ---- */

static long pid_max(void)
{
	char buf[32];

	assert_true(tl_read_file("/proc/sys/kernel/pid_max", buf, sizeof(buf)) > 0);
	return atol(buf);
}

/*
 * A buffer alloc that fails leaves a file already at the -o path as it
 * was, and no temporary file beside it: the old file used to be unlinked
 * before the new one was made, and was lost with the failure.  The
 * failure: prex runs with a file size limit (RLIMIT_FSIZE, SIGXFSZ
 * ignored) below the buffer, so sizing the new file fails with EFBIG.
 */
static void test_kernel_failed_alloc_keeps_outfile(void **state)
{
	static const char *const limited[] = {
		"/bin/sh", "-c", "ulimit -f 64 && trap '' XFSZ && exec \"$@\"", "sh", NULL};
	static const char old[] = "a trace file of an earlier run\n";
	static char err[8192], buf[256];
	const char *opts[] = {"-k", "-o", NULL, NULL};
	char dir[PATH_MAX], trace[PATH_MAX + 8];
	struct dirent *de;
	struct prex *x;
	DIR *d;
	int fd;

	(void)state;
	tl_require_root();
	prex_paths();
	snprintf(dir, sizeof(dir), "%s/kalloc-%d", tmpdir, (int)getpid());
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(trace, sizeof(trace), "%s/k.tnf", dir);
	fd = open(trace, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, old, strlen(old)), (ssize_t)strlen(old));
	close(fd);
	opts[2] = trace;
	prex_prefix = limited;
	x = prex_spawn(opts, false, NULL, NULL);
	prex_prefix = NULL;
	x = kprex_started(x);
	writes(x->in_w, "buffer alloc 1m\nbuffer\nquit\n");
	out_is(x, "No trace buffer allocated");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	assert_non_null(strstr(err, "error in allocating buffer: "));
	prex_close_fds(x);
	assert_int_equal(tl_read_file(trace, buf, sizeof(buf)), (int)strlen(old));
	assert_string_equal(buf, old);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "k.tnf"))
			fail_msg("left in the -o directory: %s", de->d_name);
	closedir(d);
	unlink(trace);
	rmdir(dir);
}

/*
 * Every kernel command's error, with the original's words and streams: no
 * buffer yet, a size below the minimum, a second buffer, dealloc while
 * tracing, a pid that is no process, one not in the list, one whose
 * process has exited, an empty list while filtering (warned after each
 * statement), connect, and continue (ignored: prex reads on).  -s sets
 * the size of a plain buffer alloc.
 */
static void test_kernel_errors(void **state)
{
	static char err[16384], want[16384], line[PATH_MAX + 64];
	const char *opts[] = {"-k", "-s", "200", "-o", NULL, NULL};
	const char *warn = "Warning: Process filtering on, but pid filter list is empty\n";
	char trace[PATH_MAX];
	long nopid = pid_max() + 1;
	struct prex *x;
	int go[2], st;
	pid_t kid, me = getpid();
	char c;

	(void)state;
	prex_paths();
	fresh_trace(trace, sizeof(trace), "kerrors");
	opts[4] = trace;
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (!kid)
		_exit(read(go[0], &c, 1) == 1 ? 0 : 2);
	tl_track_pid(kid);
	close(go[0]);
	x = kprex_start(opts);
	snprintf(want, sizeof(want),
		 "ktrace on\n"	       /* 1 */
		 "buffer dealloc\n"    /* 2 */
		 "list tracefile\n"    /* 3 */
		 "buffer\n"	       /* 4 */
		 "buffer alloc 1k\n"   /* 5 */
		 "buffer alloc\n"      /* 6 */
		 "buffer\n"	       /* 7 */
		 "ktrace on\n"	       /* 8 */
		 "ktrace\n"	       /* 9 */
		 "buffer dealloc\n"    /* 10 */
		 "pfilter add %ld\n"   /* 11 */
		 "pfilter delete %d\n" /* 12 */
		 "pfilter add %d,%d\n" /* 13 */
		 "pfilter on\n"	       /* 14 */
		 "pfilter\n",	       /* 15 */
		 nopid, me, me, kid);
	writes(x->in_w, want);
	out_is(x, "No trace buffer allocated");
	out_is(x, "Buffer of size 131072 bytes allocated");
	snprintf(line, sizeof(line), "Current trace file is: %s", trace);
	out_is(x, line);
	out_is(x, "Trace buffer size is 131072 bytes");
	out_is(x, line);
	out_is(x, "Tracing is on");
	out_is(x, "Process filtering is on");
	snprintf(line, sizeof(line), "Process filter set is {%d, %d}", me, kid);
	out_is(x, line);

	/* the child in the list exits, and is reaped: gone */
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	assert_int_equal(tl_waitpid_timeout(kid, &st, 0, tl.timeout_ms), kid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	snprintf(want, sizeof(want),
		 "pfilter delete %d\n"	 /* 16 */
		 "pfilter delete %d\n"	 /* 17 */
		 "pfilter\n"		 /* 18 */
		 "connect &debug $all\n" /* 19 */
		 "continue\n"		 /* 20 */
		 "pfilter off\n"	 /* 21 */
		 "ktrace\n"		 /* 22 */
		 "ktrace off\n"		 /* 23 */
		 "buffer dealloc\n"	 /* 24 */
		 "list tracefile\n"	 /* 25 */
		 "buffer alloc\n"	 /* 26 */
		 "quit\n",		 /* 27 */
		 kid, me);
	writes(x->in_w, want);
	snprintf(line, sizeof(line), "Process %d has exited", kid);
	out_is(x, line); /* on stdout, as the original */
	out_is(x, "Process filtering is on");
	out_is(x, "Process filter set is empty.");
	out_is(x, "Tracing is on");
	out_is(x, "buffer deallocated");
	out_is(x, "Buffer of size 204800 bytes allocated");
	snprintf(line, sizeof(line), "Current trace file is: %s", trace);
	out_is(x, line);
	assert_int_equal(prex_wait(x), 0);
	assert_null(rd_line(&x->out, tl.timeout_ms));
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "error in setting tracing state: no trace buffer (allocate one with "
		 "\"buffer alloc\")\n"
		 "There is no buffer to deallocate\n"
		 "There is no trace file in kernel mode until a buffer is allocated "
		 "(buffer alloc)\n"
		 "Size 1024 is less than the minimum buffer size of 131072 -- buffer size set "
		 "to 131072 bytes\n"
		 "There is already a buffer allocated\n"
		 "Can't deallocate the buffer when tracing is active\n"
		 "Process %ld: no such target process\n"
		 "Process %d is not being traced\n"
		 "%s" /* 17: the list is empty now */
		 "%s" /* 18 */
		 "\"<STDIN>\", line 19: semantic error: \"connect\" is not available in kernel "
		 "mode: kernel probes have no functions\n"
		 "%s" /* 19 */
		 "%s" /* 20 */
		 "There is no trace file in kernel mode until a buffer is allocated "
		 "(buffer alloc)\n",
		 nopid, me, warn, warn, warn, warn);
	assert_string_equal(err, want);
	prex_close_fds(x);
	/* the file of the second buffer, complete: a valid trace */
	assert_int_equal(dump(trace, err, sizeof(err)), 0);
}

/* In user mode the kernel commands are refused, saying what they need. */
static void test_kernel_commands_in_user_mode(void **state)
{
	static char out[65536], err[8192];
	const char *opts[] = {"-o", NULL, NULL};
	const char *what[] = {"buffer", "buffer",  "buffer", "ktrace",
			      "ktrace", "pfilter", "pfilter"};
	char trace[PATH_MAX], want[8192];
	struct prex *x;
	size_t i, off = 0;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "kuser");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "buffer\nbuffer alloc 2m\nbuffer dealloc\nktrace\nktrace on\n"
			"pfilter add 1,2\npfilter off\nbuffer alloc x\nhelp kernel_mode\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	for (i = 0; i < sizeof(what) / sizeof(what[0]); i++)
		off += snprintf(want + off, sizeof(want) - off,
				"\"<STDIN>\", line %zu: semantic error: \"%s\" is only available "
				"in kernel mode (prex invoked with the -k flag)\n",
				i + 1, what[i]);
	snprintf(want + off, sizeof(want) - off,
		 "\"<STDIN>\", line 8: syntax error on or before \"x\"\n");
	assert_string_equal(err, want);
	assert_non_null(strstr(out, STOPPED "prex -k controls the kernel's probes"));
	assert_null(strstr(out, "not available"));
	prex_close_fds(x);
}

/* ---- the no-cookie variant (5.10 .. 5.14), forced by TNFCTL_KTRACE_COMPAT=1 ---- */

/* The session above, its events the same with the slot stubs. */
static void test_kernel_session_traces_workload_compat(void **state)
{
	if (!tl_kernel_has_cookies()) {
		print_message("SKIP: no BPF cookies here: the plain session runs the stubs\n");
		skip();
	}
	test_kernel_session_traces_workload(state);
}

/*
 * More than 64 tracepoints traced at once without cookies: the enable
 * stops at the cap, with the error and what it may mean; tracing goes on.
 */
static void test_kernel_slot_cap_message(void **state)
{
	static char err[8192];
	const char *opts[] = {"-k", "-o", NULL, NULL};
	const char *want = "prex: error on probe operation: memory allocation failure (out of "
			   "memory, or more than 64 tracepoints traced at once on a kernel "
			   "without BPF cookies, before Linux 5.15)\n";
	char trace[PATH_MAX], line[PATH_MAX + 64];
	struct prex *x;

	(void)state;
	prex_paths();
	fresh_trace(trace, sizeof(trace), "kcap");
	opts[2] = trace;
	x = kprex_start(opts);
	writes(x->in_w, "buffer alloc\nktrace on\nenable name=/^sys_enter_/\nktrace\n"
			"ktrace off\nquit\n");
	out_is(x, "Buffer of size 393216 bytes allocated");
	snprintf(line, sizeof(line), "Current trace file is: %s", trace);
	out_is(x, line);
	out_is(x, "Tracing is on");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(err, want);
	assert_null(rd_line(&x->out, tl.timeout_ms));
	prex_close_fds(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_kernel_usage),
		TL_TEST(test_kernel_bad_outfile_exits_1),
		TL_TEST(test_kernel_huge_numbers_saturate),
		TL_TEST(test_kernel_session_traces_workload),
		TL_TEST(test_kernel_errors),
		TL_TEST(test_kernel_failed_alloc_keeps_outfile),
		TL_TEST(test_kernel_commands_in_user_mode),
		{"test_kernel_session_traces_workload_compat",
		 test_kernel_session_traces_workload_compat, tl_kcompat_setup, tl_kcompat_teardown,
		 NULL},
		{"test_kernel_slot_cap_message", test_kernel_slot_cap_message, tl_kcompat_setup,
		 tl_kcompat_teardown, NULL},
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
