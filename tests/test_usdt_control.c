// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex controls the USDT probes of unmodified programs: tl_sdt (plain
 * <sys/sdt.h> probes with semaphores) and python3.11 are listed, enabled
 * and traced, their records read back with tnfdump from the controller's
 * USDT file (<trace file>.usdt); a controller SIGKILLed while a USDT probe
 * is enabled leaves its semaphore at 0 and the program running; a TNF
 * probe, which is a USDT probe too, is listed once; prex -f on a tree
 * (tl_sdt_tree) records the hits of a forked child and an exec'd image.
 */
#include <dlfcn.h>
#include <glob.h>
#include <poll.h>
#include <linux/perf_event.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "testlib.h"
#include "probelib.h"
#include "prexlib.h"

#define PYTHON "/usr/bin/python3.11"
#define NFIRE  5

static char sdt_prog[PATH_MAX];

static void require_uprobes(void)
{
	require_uprobe_events();
	tl_path_of(sdt_prog, "tests/helpers/tl_sdt");
}

/* The semaphore at @addr of process @pid, read from /proc/PID/mem. */
static unsigned read_sema(pid_t pid, uintptr_t addr)
{
	char path[64];
	unsigned short v = 0xffff;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, sizeof(v), (off_t)addr), sizeof(v));
	close(fd);
	return v;
}

/* prex -p on tl_sdt (libtnfprobe preloaded); the semaphore's address in *@sema. */
static struct prex *attach_sdt(struct tl_proc **pp, uintptr_t *sema)
{
	static const char *opts[] = {"-p", NULL, NULL};
	static char pidstr[16];
	struct tl_proc *p = tl_start_target(sdt_prog, 1);

	*sema = (uintptr_t)strtoull(strchr(p->line + 6, ' ') + 1, NULL, 16);
	snprintf(pidstr, sizeof(pidstr), "%d", p->pid);
	opts[1] = pidstr;
	*pp = p;
	return prex_spawn(opts, false, NULL, NULL);
}

/* Listed with their attributes, enabled, traced: every hit's arguments in the file. */
static void test_sdt_list_enable_trace(void **state)
{
	static char out[16384], err[16384], dumped[65536];
	char file[PATH_MAX], want[PATH_MAX + 64];
	struct tl_proc *p;
	struct prex *x;
	uintptr_t sema;
	int i;

	(void)state;
	require_uprobes();
	setenv("TNFCTL_USDT_STRINGS", "tl_sdt:word:1", 1);
	setenv("TNFCTL_USDT_FILE", "", 1); /* empty: unset (prex still says where) */
	x = attach_sdt(&p, &sema);
	unsetenv("TNFCTL_USDT_STRINGS");
	unsetenv("TNFCTL_USDT_FILE");
	writes(x->in_w, "list name provider args strings object probes keys=usdt\n"
			"enable keys=tl_sdt\n"
			"continue\n");
	rd_until(&x->out, "name=word");
	tl_send(p, "fire %d", NFIRE);
	tl_expect(p, "fired 5 sema 1");
	tl_send(p, "exit");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	snprintf(file, sizeof(file), "%s/trace-%d.usdt", tmpdir, p->pid);
	snprintf(want, sizeof(want), "USDT records are in %s\n", file);
	if (!strstr(err, want))
		fail_msg("prex did not say \"%s\":\n%s", want, err);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	printf("%s", dumped);
	unlink(file);
	/* (count_events reads a decimal TID: the controller's records have the kernel's hex) */
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: "), NFIRE);
	assert_int_equal(count_lines_with(dumped, " word ", "arg0: "), NFIRE);
	for (i = 0; i < NFIRE; i++) {
		snprintf(want, sizeof(want), "arg0: %d arg1: %d", i, 3 * i);
		assert_int_equal(count_lines_with(dumped, " tick ", want), 1);
		snprintf(want, sizeof(want), "arg0: %d arg1: \"w%d\"", i, i);
		assert_int_equal(count_lines_with(dumped, " word ", want), 1);
	}
	prex_close_fds(x);
}

/* The tick line of `list ... probes keys=usdt`, as prex printed it before `continue`. */
static void test_sdt_attributes(void **state)
{
	static char out[16384];
	struct tl_proc *p;
	struct prex *x;
	uintptr_t sema;

	(void)state;
	require_uprobes();
	x = attach_sdt(&p, &sema);
	/* provider=: a sanitizer build also loads libstdc++, whose libstdcxx probes are listed */
	writes(x->in_w, "list name provider args sites probes provider=tl_sdt\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	assert_int_equal(count_lines_with(out, "name=tick provider=tl_sdt args=2 sites=1 ", NULL),
			 1);
	assert_int_equal(count_lines_with(out, "name=word provider=tl_sdt args=2 sites=1 ", NULL),
			 1);
	assert_int_equal(count_lines_with(out, "name=", NULL), 2);
	prex_close_fds(x);
	tl_send(p, "fire 1"); /* nothing left raised by the quit */
	tl_expect(p, "fired 1 sema 0");
}

/* python3.11's gc__start: one record per gc.collect(1), read as "arg0: 1". */
static void test_python_gc_start(void **state)
{
	static char out[16384], dumped[1 << 17];
	const char *opts[] = {PYTHON,
			      "-I",
			      "-S",
			      "-c",
			      "import gc\ngc.disable()\nfor i in range(7): gc.collect(1)\n",
			      NULL};
	char file[PATH_MAX];
	struct prex *x;
	glob_t g;

	(void)state;
	require_uprobes();
	if (access(PYTHON, X_OK)) {
		print_message("SKIP: " PYTHON " is missing\n");
		skip();
	}
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "enable name=gc__start\ncontinue\n");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	snprintf(file, sizeof(file), "%s/trace-*.usdt", tmpdir);
	assert_int_equal(glob(file, 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 1);
	assert_int_equal(dump(g.gl_pathv[0], dumped, sizeof(dumped)), 0);
	unlink(g.gl_pathv[0]);
	globfree(&g);
	assert_int_equal(count_lines_with(dumped, " gc__start ", "arg0: 1"), 7);
	prex_close_fds(x);
}

/*
 * python3.11, started here without libtnfprobe.so.1: `gc N` runs
 * gc.collect(1) N times and answers "collected N" (the interpreter's own
 * collections are off: gc.disable()).
 */
static const char py_gc_script[] = "import gc, os, sys\n"
				   "gc.disable()\n"
				   "cmd = os.fdopen(int(sys.argv[1]))\n"
				   "out = int(sys.argv[2])\n"
				   "os.write(out, b'ready %d\\n' % os.getpid())\n"
				   "for line in cmd:\n"
				   "    w = line.split()\n"
				   "    if w[0] == 'gc':\n"
				   "        for i in range(int(w[1])): gc.collect(1)\n"
				   "        os.write(out, b'collected %s\\n' % w[1].encode())\n"
				   "    elif w[0] == 'exit':\n"
				   "        sys.exit(0)\n";

static struct tl_proc *start_python(const char *script)
{
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16];
	char *argv[] = {PYTHON, "-I", "-S", "-c", (char *)script, cfd, rfd, NULL};
	int keep[3] = {p->t_cmd_r, p->t_reply_w, -1};
	char **env = tl_env_build(NULL); /* no LD_PRELOAD */
	pid_t pid;

	if (access(PYTHON, X_OK)) {
		print_message("SKIP: " PYTHON " is missing\n");
		skip();
	}
	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	pid = tl_spawn(argv, env, -1, keep);
	free(env);
	tl_proc_handed_over(p);
	tl_proc_set_pid(p, pid);
	tl_expect(p, "ready");
	assert_int_equal(atoi(p->line + 6), pid);
	return p;
}

/*
 * prex -p on a python3.11 without libtnfprobe.so.1: opened without probe
 * runtime, it still lists, enables and traces the USDT probes.
 */
static void test_python_no_runtime_gc_start(void **state)
{
	static char out[16384], err[4096], dumped[1 << 17];
	const char *opts[] = {"-p", NULL, NULL};
	char pidstr[16], file[PATH_MAX];
	struct tl_proc *p;
	struct prex *x;

	(void)state;
	require_uprobes();
	p = start_python(py_gc_script);
	snprintf(pidstr, sizeof(pidstr), "%d", p->pid);
	opts[1] = pidstr;
	x = prex_spawn(opts, false, NULL, NULL);
	/* the list comes after the enable: the uprobes are on when it is printed */
	writes(x->in_w, "enable name=gc__start\n"
			"list name provider probes name=gc__start\n"
			"continue\n");
	rd_until(&x->out, "name=gc__start provider=python");
	tl_send(p, "gc 6");
	tl_expect(p, "collected 6");
	tl_send(p, "exit");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_non_null(strstr(err, "has no libtnfprobe.so.1: only its USDT probes"));
	snprintf(file, sizeof(file), "%s/trace-%d.usdt", tmpdir, p->pid);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	assert_int_equal(count_lines_with(dumped, " gc__start ", "arg0: 1"), 6);
	prex_close_fds(x);
}

struct np_seen {
	tnfctl_probe_t *tick;
	int n, usdt;
};

static tnfctl_errcode_t np_scan(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct np_seen *s = cd;
	tnfctl_probe_state_t st;

	tl_assert_err(tnfctl_probe_state_get(h, p, &st), TNFCTL_ERR_NONE);
	s->n++;
	s->usdt += strstr(st.attr_string, ";keys usdt ") != NULL;
	if (!strncmp(st.attr_string, "name tick;provider tl_sdt;", 26))
		s->tick = p;
	return TNFCTL_ERR_NONE;
}

/*
 * The API on a process without libtnfprobe.so.1: pid_open refuses it;
 * opened with TNFCTL_OPEN_NOPROBES it has its USDT probes (and only
 * those), which enable and trace; connect and a buffer are refused.
 */
static void test_api_noprobes_handle(void **state)
{
	static char dumped[65536];
	struct np_seen seen = {0};
	char file[PATH_MAX];
	tnfctl_handle_t *h;
	tnfctl_event_t evt;
	struct tl_proc *p;

	(void)state;
	require_uprobes();
	setenv("TMPDIR", tmpdir, 1); /* where this process's .usdt file goes */
	p = tl_start_target(sdt_prog, 0);
	tl_assert_err(tnfctl_pid_open(p->pid, &h), TNFCTL_ERR_NOLIBTNFPROBE);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_probe_apply(h, np_scan, &seen), TNFCTL_ERR_NONE);
	assert_true(seen.n >= 2);
	assert_int_equal(seen.usdt, seen.n);
	assert_non_null(seen.tick);
	tl_assert_err(tnfctl_buffer_alloc(h, "/tmp/np-never.tnf", 65536), TNFCTL_ERR_NOLIBTNFPROBE);
	tl_assert_err(tnfctl_probe_connect(h, seen.tick, NULL, "tnf_probe_debug"),
		      TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_enable(h, seen.tick, NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 3");
	tl_send(p, "exit");
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(evt, TNFCTL_EVENT_EXIT);
	tl_expect(p, "fired 3 sema 1");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	snprintf(file, sizeof(file), "%s/trace-%d.usdt", tmpdir, p->pid);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: "), 3);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: 2 arg1: 6"), 1);
}

/*
 * In a controller's forked child, which has its own target B: USDT
 * control of B works (the child's session is its own), the inherited
 * handle on the parent's target A fails and its close does not end or
 * disturb the child's session (it used to clear the child's slot, and
 * B's hits were not recorded), and the parent's semaphore on A is kept.
 */
static void test_fork_child_own_session(void **state)
{
	static char dumped[65536];
	struct np_seen sa = {0};
	char file[PATH_MAX];
	struct tl_proc *a, *b;
	tnfctl_handle_t *ha;
	uintptr_t sema_a;
	int st;
	pid_t kid;

	(void)state;
	require_uprobes();
	setenv("TMPDIR", tmpdir, 1);
	a = tl_start_target(sdt_prog, 0);
	sema_a = (uintptr_t)strtoull(strchr(a->line + 6, ' ') + 1, NULL, 16);
	b = tl_start_target(sdt_prog, 0);
	tl_assert_err(tnfctl_pid_open_flags(a->pid, TNFCTL_OPEN_NOPROBES, &ha), TNFCTL_ERR_NONE);
	tl_track_handle(ha);
	tl_assert_err(tnfctl_probe_apply(ha, np_scan, &sa), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(ha, sa.tick, NULL), TNFCTL_ERR_NONE);
	kid = fork();
	assert_true(kid >= 0);
	if (!kid) {
		struct np_seen sb = {0};
		tnfctl_handle_t *hb;
		tnfctl_event_t evt;
		const char *l;

		if (tnfctl_pid_open_flags(b->pid, TNFCTL_OPEN_NOPROBES, &hb) ||
		    tnfctl_probe_apply(hb, np_scan, &sb) || !sb.tick ||
		    tnfctl_probe_enable(hb, sb.tick, NULL))
			_exit(2);
		if (tnfctl_probe_disable(ha, sa.tick, NULL) != TNFCTL_ERR_INTERNAL)
			_exit(3); /* the parent's */
		tnfctl_close(ha, TNFCTL_TARG_DEFAULT);
		tl_send(b, "fire 3");
		tl_send(b, "exit");
		if (tnfctl_continue(hb, &evt, NULL) || evt != TNFCTL_EVENT_EXIT)
			_exit(4);
		l = tl_read_line(b, tl.timeout_ms);
		if (!l || strcmp(l, "fired 3 sema 1"))
			_exit(5);
		_exit(tnfctl_close(hb, TNFCTL_TARG_DEFAULT) ? 6 : 0);
	}
	assert_int_equal(tl_waitpid_timeout(kid, &st, 0, tl.timeout_ms), kid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(read_sema(a->pid, sema_a), 1); /* the parent's, untouched */
	snprintf(file, sizeof(file), "%s/trace-%d.usdt", tmpdir, b->pid);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: "), 3);
	tl_assert_err(tnfctl_probe_disable(ha, sa.tick, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(read_sema(a->pid, sema_a), 0);
	tl_close(ha, TNFCTL_TARG_DEFAULT);
	snprintf(file, sizeof(file), "%s/trace-%d.usdt", tmpdir, a->pid);
	unlink(file);
}

static int foreign_fd = -1;

/* libbpf's messages during the attach: a thread of the caller opens a perf event then. */
static int open_foreign(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	struct perf_event_attr pa = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(pa),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
	};

	(void)level;
	(void)fmt;
	(void)ap;
	if (foreign_fd < 0)
		foreign_fd =
			(int)syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return 0;
}

/*
 * A perf event the caller opens while a USDT probe is attached, then
 * closes, is not taken for the probe's: a forked child keeps the file
 * that later has its number (the child's handler made it an eventfd when
 * the attach's new descriptors were all taken as the probe's).
 */
static void test_fork_child_keeps_callers_fds(void **state)
{
	struct np_seen seen = {0};
	libbpf_print_fn_t prev;
	tnfctl_handle_t *h;
	struct tl_proc *p;
	struct stat sb;
	int fd, st;
	pid_t kid;

	(void)state;
	require_uprobes();
	setenv("TMPDIR", tmpdir, 1);
	p = tl_start_target(sdt_prog, 0);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_probe_apply(h, np_scan, &seen), TNFCTL_ERR_NONE);
	/* the session's object loaded first: the perf event is opened by the attach */
	tl_assert_err(tnfctl_probe_enable(h, seen.tick, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_disable(h, seen.tick, NULL), TNFCTL_ERR_NONE);
	foreign_fd = -1;
	prev = libbpf_set_print(open_foreign);
	setenv("TNFCTL_DEBUG", "1", 1); /* libbpf's messages reach open_foreign */
	tl_assert_err(tnfctl_probe_enable(h, seen.tick, NULL), TNFCTL_ERR_NONE);
	unsetenv("TNFCTL_DEBUG");
	libbpf_set_print(prev);
	assert_true(foreign_fd >= 0); /* opened during the attach */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(dup3(fd, foreign_fd, O_CLOEXEC), foreign_fd); /* a plain file now */
	close(fd);
	kid = fork();
	assert_true(kid >= 0);
	if (!kid)
		_exit(!fstat(foreign_fd, &sb) && S_ISREG(sb.st_mode) ? 0 : 1);
	assert_int_equal(tl_waitpid_timeout(kid, &st, 0, tl.timeout_ms), kid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(foreign_fd);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * The .usdt file never exists under another name while it is set up (an
 * O_TMPFILE file, linked at its name once ready): a controller killed
 * meanwhile leaves nothing behind (it used to leave a .tnf-tmp-* file of
 * the file's size).  inotify sees every name made in the directory.
 */
static void test_usdt_file_no_temporary_name(void **state)
{
	char dir[PATH_MAX], file[PATH_MAX + 16], buf[4096];
	struct np_seen seen = {0};
	tnfctl_handle_t *h;
	struct tl_proc *p;
	int in, made = 0;
	ssize_t n;

	(void)state;
	require_uprobes();
	snprintf(dir, sizeof(dir), "%s/tmpname", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/x.usdt", dir);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO) >= 0);
	setenv("TNFCTL_USDT_FILE", file, 1);
	p = tl_start_target(sdt_prog, 0);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_probe_apply(h, np_scan, &seen), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, seen.tick, NULL), TNFCTL_ERR_NONE);
	unsetenv("TNFCTL_USDT_FILE");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		char *e = buf;

		while (e < buf + n) {
			struct inotify_event *ev = (struct inotify_event *)e;

			if (ev->len && strcmp(ev->name, "x.usdt"))
				fail_msg("a name other than x.usdt was made: %s", ev->name);
			made += ev->len && !strcmp(ev->name, "x.usdt");
			e += sizeof(*ev) + ev->len;
		}
	}
	close(in);
	assert_int_equal(made, 1);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * @prog (tl_sdt, or a build of it) under a NOPROBES handle: tl_sdt:tick
 * enabled (the session's file named by @usdt_file, NULL: the default),
 * fired @n times, then the program's exit.  The probes listed in
 * @seen; the path of the records' file in @file.
 */
static void sdt_fire(const char *prog, const char *usdt_file, int n, struct np_seen *seen,
		     char *file, size_t len)
{
	tnfctl_handle_t *h;
	tnfctl_event_t evt;
	struct tl_proc *p;

	setenv("TMPDIR", tmpdir, 1);
	if (usdt_file)
		setenv("TNFCTL_USDT_FILE", usdt_file, 1);
	p = tl_start_target(prog, 0);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_probe_apply(h, np_scan, seen), TNFCTL_ERR_NONE);
	assert_non_null(seen->tick);
	tl_assert_err(tnfctl_probe_enable(h, seen->tick, NULL), TNFCTL_ERR_NONE);
	unsetenv("TNFCTL_USDT_FILE"); /* read when the session starts, at the first enable */
	tl_send(p, "fire %d", n);
	tl_send(p, "exit");
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(evt, TNFCTL_EVENT_EXIT);
	tl_expect(p, "fired");
	assert_non_null(strstr(p->line, " sema 1"));
	tl_close(h, TNFCTL_TARG_DEFAULT);
	snprintf(file, len, "%s/trace-%d.usdt", tmpdir, p->pid);
}

/*
 * A static program (no link map) has its USDT probes all the same: its
 * executable is its one object (they were not listed: NOLIBTNFPROBE).
 */
static void test_static_program_sdt(void **state)
{
	static char dumped[65536];
	struct np_seen seen = {0};
	char prog[PATH_MAX], file[PATH_MAX];

	(void)state;
	require_uprobes();
	tl_path_of(prog, "tests/helpers/tl_sdt_static");
	sdt_fire(prog, NULL, 4, &seen, file, sizeof(file));
	assert_int_equal(seen.n, 2); /* tick and word */
	assert_int_equal(seen.usdt, 2);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: "), 4);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: 3 arg1: 9"), 1);
}

static int throw_created, throw_raise;
static volatile sig_atomic_t got_usr1;
static volatile int wait_blind;

/*
 * The library's waits (libtnfctl's ppoll is this one): armed, SIGUSR1
 * stays blocked in them, as when the reply is queued before the wait
 * looks (a target quicker than a descheduled caller).
 */
int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	sigset_t m;

	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, const struct timespec *,
				const sigset_t *))dlsym(RTLD_NEXT, "ppoll");
	if (wait_blind && mask) {
		m = *mask;
		sigaddset(&m, SIGUSR1);
		mask = &m;
	}
	return real(fds, n, ts, mask);
}

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/* The create callback: enables libstdcxx:throw, as prex's history would. */
static void *enable_throw(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_probe_state_t st;

	tl_assert_err(tnfctl_probe_state_get(h, p, &st), TNFCTL_ERR_NONE);
	if (!strncmp(st.attr_string, "name throw;provider libstdcxx;", 30)) {
		tl_assert_err(tnfctl_probe_enable(h, p, NULL), TNFCTL_ERR_NONE);
		throw_created++;
		if (throw_raise)
			raise(throw_raise);
	}
	return NULL;
}

/*
 * tl_throw 5 exec_open'd NOPROBES, stopped before ld.so ran: probe calls
 * are NOLIBTNFPROBE; the create callback enables libstdcxx:throw when the
 * continue lists the start-up objects' probes.  With @sig, the callback
 * raises it in the caller: SIGUSR1 (a handler without SA_RESTART) makes
 * the first event EINTR, even when the wait would find a reply before the
 * signal (wait_blind: the target was continued, and exited first);
 * SIGCHLD, ignored by default, does not.  Then the EXIT; every throw
 * recorded.
 */
static void startup_run(int sig, int throws)
{
	static char dumped[65536];
	char prog[PATH_MAX], file[PATH_MAX], n[16], said[PATH_MAX + 32];
	char *argv[] = {prog, n, NULL};
	struct sigaction sa = {.sa_handler = on_usr1}, old, dfl = {.sa_handler = SIG_DFL}, oldchld;
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	tnfctl_event_t evt;

	tl_path_of(prog, "tests/helpers/tl_throw");
	snprintf(n, sizeof(n), "%d", throws);
	snprintf(file, sizeof(file), "%s/startup.usdt", tmpdir);
	setenv("TNFCTL_USDT_FILE", file, 1);
	tl_assert_err(
		tnfctl_exec_open_flags(prog, argv, NULL, NULL, NULL, TNFCTL_OPEN_NOPROBES, &h),
		TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_probe_apply(h, np_scan, &(struct np_seen){0}),
		      TNFCTL_ERR_NOLIBTNFPROBE);
	throw_created = 0;
	throw_raise = sig;
	got_usr1 = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	sigaction(SIGCHLD, &dfl, &oldchld);
	tl_assert_err(tnfctl_register_funcs(h, enable_throw, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(throw_created, 0);
	wait_blind = sig == SIGUSR1;
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	wait_blind = 0;
	sigaction(SIGUSR1, &old, NULL);
	sigaction(SIGCHLD, &oldchld, NULL);
	unsetenv("TNFCTL_USDT_FILE");
	assert_int_equal(throw_created, 1);
	if (sig == SIGUSR1) {
		assert_true(got_usr1);
		if (evt != TNFCTL_EVENT_EINTR)
			fail_msg("a signal in the start-up listing: %s, not EINTR",
				 tl_event_name(evt));
		tl_assert_all_stopped(tl_targ_pid(h), "after EINTR");
		tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
		assert_int_equal(throw_created, 1); /* listed once */
	}
	assert_int_equal(evt, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 0); /* caught all */
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	assert_int_equal(count_lines_with(dumped, " throw ", "arg0: "), throws);
	if (!throws) {
		snprintf(said, sizeof(said), "tnfdump: %s has no events\n", file);
		assert_string_equal(dumped, said);
	}
}

/*
 * A dynamic program exec_open'd NOPROBES is stopped before ld.so ran: no
 * link map.  The continue lists the probes of its start-up objects at
 * rtld's start-up, before their code runs, with no event for it: the
 * create callback's enable there records every throw of main (none were
 * recorded: such an image's probes were never listed).
 */
static void test_api_noprobes_startup_lists(void **state)
{
	(void)state;
	require_uprobes();
	startup_run(0, 5);
}

/*
 * A signal the caller takes while the start-up's probes are listed (in a
 * create callback) is the continue's EINTR, with the target stopped (it
 * was taken then, and the continue ran on to the EXIT).
 */
static void test_api_noprobes_startup_signal(void **state)
{
	(void)state;
	require_uprobes();
	startup_run(SIGUSR1, 5);
}

/*
 * A signal the caller does not catch (SIGCHLD, ignored by default) taken
 * in the start-up listing is no EINTR: the continue goes on to the EXIT
 * (it was one: a caller whose own child exited then saw a stop).
 */
static void test_api_noprobes_startup_ignored_signal(void **state)
{
	(void)state;
	require_uprobes();
	startup_run(SIGCHLD, 5);
}

/*
 * A USDT probe enabled and never hit (tl_throw 0): its file is made with
 * no event, and tnfdump says so on stderr (it printed nothing at all).
 */
static void test_usdt_file_no_records_said(void **state)
{
	(void)state;
	require_uprobes();
	startup_run(0, 0);
}

/*
 * Two targets controlled one after the other, their sessions apart (the
 * first handle closed before the second enables), with one file named
 * (spelt another way the second time): the second session writes on into
 * the first one's file, so both targets' records are there (a new file
 * replaced it: prex -f kept only the last processes' records), under the
 * one type record the probe's attributes have.
 */
static void test_usdt_file_kept_across_sessions(void **state)
{
	static char dumped[65536];
	struct np_seen s1 = {0}, s2 = {0};
	char path[PATH_MAX], other[PATH_MAX], file[PATH_MAX];

	(void)state;
	require_uprobes();
	snprintf(path, sizeof(path), "%s/kept.usdt", tmpdir);
	snprintf(other, sizeof(other), "%s/./kept.usdt", tmpdir);
	sdt_fire(sdt_prog, path, 2, &s1, file, sizeof(file));
	sdt_fire(sdt_prog, other, 3, &s2, file, sizeof(file));
	assert_int_equal(dump(path, dumped, sizeof(dumped)), 0);
	unlink(path);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: 1 arg1: 3"), 2);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: 2 arg1: 6"), 1);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: "), 5);
	assert_int_equal(count_lines_with(dumped, "tnf_name: \"tick\"", NULL), 1);
}

/*
 * The file is truncated between two sessions: the second makes a new one
 * (it wrote on through its old mapping: SIGBUS).
 */
static void test_usdt_file_truncated_between_sessions(void **state)
{
	static char dumped[65536];
	struct np_seen s1 = {0}, s2 = {0};
	char path[PATH_MAX], file[PATH_MAX];

	(void)state;
	require_uprobes();
	snprintf(path, sizeof(path), "%s/cut.usdt", tmpdir);
	sdt_fire(sdt_prog, path, 2, &s1, file, sizeof(file));
	assert_int_equal(truncate(path, 0), 0);
	sdt_fire(sdt_prog, path, 3, &s2, file, sizeof(file));
	assert_int_equal(dump(path, dumped, sizeof(dumped)), 0);
	unlink(path);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: "), 3);
}

static char plant_path[PATH_MAX];
static int planted;

/* libbpf's messages while the session loads: another user makes the file then. */
static int plant(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int fd;

	(void)level;
	(void)fmt;
	(void)ap;
	if (planted)
		return 0;
	fd = open(plant_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		planted = write(fd, "nobody's\n", 9) == 9 && !fchown(fd, 65534, 65534);
		close(fd);
	}
	return 0;
}

/*
 * The .usdt file's path is taken by another user's file while the session
 * is set up (after the check at its creation): that file is left alone
 * and the enable fails ACCES (it was renamed over).
 */
static void test_usdt_file_planted_during_setup(void **state)
{
	struct np_seen seen = {0};
	libbpf_print_fn_t prev;
	tnfctl_handle_t *h;
	struct tl_proc *p;
	struct stat st;
	char buf[16];
	int fd;

	(void)state;
	require_uprobes();
	snprintf(plant_path, sizeof(plant_path), "%s/planted.usdt", tmpdir);
	planted = 0;
	p = tl_start_target(sdt_prog, 0);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_probe_apply(h, np_scan, &seen), TNFCTL_ERR_NONE);
	setenv("TNFCTL_USDT_FILE", plant_path, 1);
	setenv("TNFCTL_DEBUG", "1", 1);
	prev = libbpf_set_print(plant);
	tl_assert_err(tnfctl_probe_enable(h, seen.tick, NULL), TNFCTL_ERR_ACCES);
	libbpf_set_print(prev);
	unsetenv("TNFCTL_DEBUG");
	unsetenv("TNFCTL_USDT_FILE");
	assert_true(planted); /* made while the session was set up */
	assert_int_equal(lstat(plant_path, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	fd = open(plant_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 9);
	close(fd);
	assert_int_equal(unlink(plant_path), 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* TNFCTL_USDT_FILE names the controller's USDT file (prex -o sets it for -f). */
static void test_usdt_file_env(void **state)
{
	static char dumped[65536];
	struct np_seen seen = {0};
	char file[PATH_MAX], dflt[PATH_MAX];

	(void)state;
	require_uprobes();
	snprintf(file, sizeof(file), "%s/named.usdt", tmpdir);
	sdt_fire(sdt_prog, file, 2, &seen, dflt, sizeof(dflt));
	assert_int_equal(access(dflt, F_OK), -1);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	assert_int_equal(count_lines_with(dumped, " tick ", "arg0: "), 2);
}

/*
 * prex's `usdt strings`: python3.11's import__find__load__start(char
 * *module) with arg0 read as a string, one record per module a fresh
 * interpreter imports for `import json, decimal`; TNFCTL_USDT_STRINGS unset.
 */
static void test_prex_usdt_strings_imports(void **state)
{
	static char out[16384], dumped[1 << 18];
	const char *opts[] = {"-o", NULL, PYTHON, "-I", "-S", "-c", "import json, decimal", NULL};
	char trace[PATH_MAX], file[PATH_MAX + 8];
	struct prex *x;

	(void)state;
	require_uprobes();
	if (access(PYTHON, X_OK)) {
		print_message("SKIP: " PYTHON " is missing\n");
		skip();
	}
	unsetenv("TNFCTL_USDT_STRINGS");
	fresh_trace(trace, sizeof(trace), "usdt-strings");
	opts[1] = trace;
	x = prex_spawn(opts, false, NULL, NULL);

	writes(x->in_w, "usdt strings python import__find__load__start 0\n"
			"list name strings probes name=import__find__load__start\n"
			"enable name=import__find__load__start\n"
			"continue\n");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	assert_non_null(strstr(out, "name=import__find__load__start strings=0 "));
	snprintf(file, sizeof(file), "%s.usdt", trace);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	unlink(trace);
	assert_int_equal(count_lines_with(dumped, " import__find__load__start ", "arg0: \"json\""),
			 1);
	assert_int_equal(
		count_lines_with(dumped, " import__find__load__start ", "arg0: \"decimal\""), 1);
	assert_int_equal(
		count_lines_with(dumped, " import__find__load__start ", "arg0: \"json.decoder\""),
		1);
	/* every record's module is a string: no integer argument left */
	assert_int_equal(count_lines_with(dumped, " import__find__load__start ", "arg0: \""),
			 count_lines_with(dumped, " import__find__load__start ", "arg0: "));
	prex_close_fds(x);
}

/* libstdc++'s libstdcxx:throw: one record per exception tl_throw throws (and catches). */
static void test_libstdcxx_throw(void **state)
{
	static char out[16384], dumped[65536];
	const char *opts[] = {"-o", NULL, NULL, "7", NULL};
	char trace[PATH_MAX], file[PATH_MAX + 8], prog[PATH_MAX];
	struct prex *x;

	(void)state;
	require_uprobes();
	tl_path_of(prog, "tests/helpers/tl_throw");
	fresh_trace(trace, sizeof(trace), "usdt-throw");
	opts[1] = trace;
	opts[2] = prog;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "list name provider object probes name=throw\n"
			"enable name=throw\n"
			"continue\n");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	assert_non_null(strstr(out, "name=throw provider=libstdcxx object=/"));
	assert_non_null(strstr(out, "caught 7\n"));
	snprintf(file, sizeof(file), "%s.usdt", trace);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	unlink(file);
	unlink(trace);
	assert_int_equal(count_lines_with(dumped, " throw ", "arg0: "), 7);
	prex_close_fds(x);
}

/* prex SIGKILLed while tick is enabled: its semaphore back to 0, tl_sdt runs on. */
static void test_controller_killed(void **state)
{
	struct tl_proc *p;
	struct prex *x;
	uintptr_t sema;
	int st;

	(void)state;
	require_uprobes();
	x = attach_sdt(&p, &sema);
	/* the list comes after the attach (tl_sdt stopped) and the enable */
	writes(x->in_w, "enable name=tick\nlist name probes name=tick\ncontinue\n");
	rd_until(&x->out, "name=tick");
	tl_send(p, "fire 1");
	tl_expect(p, "fired 1 sema 1");
	assert_int_equal(read_sema(p->pid, sema), 1);
	kill(x->pid, SIGKILL);
	assert_int_equal(tl_waitpid_timeout(x->pid, &st, 0, tl.timeout_ms), x->pid);
	assert_int_equal(read_sema(p->pid, sema), 0);
	tl_send(p, "fire 2");
	tl_expect(p, "fired 2 sema 0");
	prex_close_fds(x);
}

/*
 * A controller forks while a USDT probe is enabled: its child (which does
 * not exec) lets go of the uprobes at once, so the parent's disable brings
 * the semaphore back to 0 while the child lives on (the child used to hold
 * copies of the perf events, and with them the uprobes and the semaphore).
 */
static void test_controller_fork_lets_go(void **state)
{
	struct np_seen seen = {0};
	char file[PATH_MAX], c;
	tnfctl_handle_t *h;
	struct tl_proc *p;
	uintptr_t sema;
	int go[2], ready[2], st;
	unsigned v;
	pid_t kid;

	(void)state;
	require_uprobes();
	setenv("TMPDIR", tmpdir, 1);
	p = tl_start_target(sdt_prog, 0);
	sema = (uintptr_t)strtoull(strchr(p->line + 6, ' ') + 1, NULL, 16);
	tl_assert_err(tnfctl_pid_open_flags(p->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_assert_err(tnfctl_probe_apply(h, np_scan, &seen), TNFCTL_ERR_NONE);
	assert_non_null(seen.tick);
	tl_assert_err(tnfctl_probe_enable(h, seen.tick, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(read_sema(p->pid, sema), 1);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (!kid) {
		/* the fork handlers have run when fork returns here */
		close(go[1]);
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		_exit(read(go[0], &c, 1) == 0 ? 0 : 1); /* until the parent closes go[1] */
	}
	close(go[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	tl_assert_err(tnfctl_probe_disable(h, seen.tick, NULL), TNFCTL_ERR_NONE);
	v = read_sema(p->pid, sema); /* the child still alive */
	close(go[1]);
	assert_int_equal(tl_waitpid_timeout(kid, &st, 0, tl.timeout_ms), kid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(v, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	snprintf(file, sizeof(file), "%s/trace-%d.usdt", tmpdir, p->pid);
	unlink(file);
}

/*
 * prex names a USDT probe that cannot be enabled, and the file it could
 * not make; libbpf's own lines stay out of prex's output (TNFCTL_DEBUG
 * unset).  Each in a session of its own: the .usdt file cannot be made,
 * then the target was killed while stopped.
 */
static void test_prex_usdt_errors_named(void **state)
{
	static char err[16384];
	char file[PATH_MAX], want[PATH_MAX + 128];
	struct tl_proc *p;
	struct prex *x;
	uintptr_t sema;

	(void)state;
	require_uprobes();
	unsetenv("TNFCTL_DEBUG");
	snprintf(file, sizeof(file), "%s/no-such-dir/x.usdt", tmpdir);
	setenv("TNFCTL_USDT_FILE", file, 1);
	x = attach_sdt(&p, &sema);
	unsetenv("TNFCTL_USDT_FILE");
	writes(x->in_w, "enable name=tick\nquit\n");
	close(x->in_w);
	prex_wait(x);
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want), "USDT probe tl_sdt:tick: file not found (its records file %s)",
		 file);
	if (!strstr(err, want))
		fail_msg("no \"%s\" in:\n%s", want, err);
	assert_null(strstr(err, "libbpf"));
	assert_null(strstr(err, "(dlopened)")); /* the typed command's error, said once */
	assert_int_equal(read_sema(p->pid, sema), 0);
	prex_close_fds(x);

	x = attach_sdt(&p, &sema);
	writes(x->in_w, "list name probes name=tick\n");
	rd_until(&x->out, "name=tick"); /* attached: the target is stopped */
	assert_int_equal(tl_pidfd_kill(p->pidfd, SIGKILL), 0);
	assert_int_equal(tl_pidfd_wait(p->pidfd, tl.timeout_ms), 0); /* a zombie */
	writes(x->in_w, "enable name=tick\nquit\n");
	close(x->in_w);
	prex_wait(x);
	rd_rest(&x->err, err, sizeof(err));
	if (!strstr(err, "USDT probe tl_sdt:tick: no such target process"))
		fail_msg("no USDT probe line in:\n%s", err);
	assert_null(strstr(err, "libbpf"));
	assert_null(strstr(err, "internal error"));
	prex_close_fds(x);
}

/* A TNF probe is a USDT probe too (<tnf/probe.h>): listed once, as a TNF probe. */
static void test_tnf_probe_listed_once(void **state)
{
	static char out[16384];
	const char *opts[] = {"-p", NULL, NULL};
	char pidstr[16], *l, *e;
	struct tl_proc *p;
	struct prex *x;
	int n = 0;

	(void)state;
	require_uprobes();
	p = tl_start_target(probes_prog, 1);
	snprintf(pidstr, sizeof(pidstr), "%d", p->pid);
	opts[1] = pidstr;
	x = prex_spawn(opts, false, NULL, NULL);
	/*
	 * The program's USDT probes (provider tnf) as USDT probes (none: they
	 * are its TNF probes), then every probe: each name once.  Another
	 * library's USDT probes (libstdc++'s in a sanitizer build) are in the
	 * second list only.
	 */
	writes(x->in_w, "list name probes provider=tnf\nlist name probes $all\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	for (l = strstr(out, "name="); l; l = strstr(e, "name=")) {
		char name[128];

		e = strchr(l, ' ');
		assert_non_null(e);
		snprintf(name, sizeof(name), "%.*s ", (int)(e - l), l);
		assert_int_equal(count_lines_with(out, name, NULL), 1);
		n++;
	}
	assert_true(n > 1);
	assert_int_equal(count_lines_with(out, "name=tl_main_tick ", NULL), 1);
	prex_close_fds(x);
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

/* Records of tl_sdt_tree:hit with arg0 @who written by process @pid (its PID and LWPID columns). */
static int count_hits(const char *dumped, int pid, int who)
{
	char want[32];
	const char *l;
	int n = 0;

	snprintf(want, sizeof(want), "arg0: %d ", who);
	for (l = dumped; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char line[512];
		double el, d;
		int p, lwp;

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(l, "\n"), l);
		if (sscanf(line, "%lf %lf %d %d", &el, &d, &p, &lwp) == 4 && p == pid &&
		    lwp == pid && strstr(line, " hit ") && strstr(line, want))
			n++;
	}
	return n;
}

/* Output of a prex -f session on tl_sdt_tree and the records of its .usdt file. */
struct tree_run {
	char out[16384], err[16384], dumped[1 << 17];
};

/*
 * prex -f -o TRACE ARGS... (@args after the -o file, NULL-terminated, at
 * most 6) with `enable name=hit` typed before `continue`: its output and
 * the records of TRACE.usdt (-o names it, though no TNF probe made TRACE)
 * in @r, and prex said where they went.
 */
static void tree_run(struct tree_run *r, const char *name, const char *const *args)
{
	const char *opts[10] = {"-f", "-o"};
	char trace[PATH_MAX], file[PATH_MAX + 8], want[PATH_MAX + 64];
	struct prex *x;
	int i;

	fresh_trace(trace, sizeof(trace), name);
	opts[2] = trace;
	for (i = 0; args[i] && i < 6; i++)
		opts[3 + i] = args[i];
	opts[3 + i] = NULL;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "enable name=hit\ncontinue\n");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, r->out, sizeof(r->out));
	rd_rest(&x->err, r->err, sizeof(r->err));
	prex_close_fds(x);
	snprintf(file, sizeof(file), "%s.usdt", trace);
	if (dump(file, r->dumped, sizeof(r->dumped)))
		fail_msg("no USDT file %s:\n%s", file, r->err);
	unlink(file);
	snprintf(want, sizeof(want), "USDT records are in %s\n", file);
	if (!strstr(r->err, want))
		fail_msg("prex did not say \"%s\":\n%s", want, r->err);
}

/* The pid tl_sdt_tree printed after "tree @who " ("parent", "child", "exec"). */
static int tree_pid(const struct tree_run *r, const char *who)
{
	char tag[32];
	const char *l;

	snprintf(tag, sizeof(tag), "tree %s ", who);
	l = strstr(r->out, tag);
	if (!l)
		fail_msg("no \"%s\" in:\n%s", tag, r->out);
	return atoi(l + strlen(tag));
}

/*
 * prex -f on tl_sdt_tree with hit enabled at the prompt: the parent hits
 * once, its forked child TREE_K times, the image the parent then execs
 * TREE_M times.  The child's handle has the probe enabled as the parent's
 * (with uprobes of its own: the kernel gives a child none of its parent's),
 * the new image has it from prex's history; every record is in the one
 * .usdt file, under the pid of the process that hit it.
 */
#define TREE_K 4
#define TREE_M 6
static void test_prex_follow_fork_exec(void **state)
{
	static struct tree_run r;
	char prog[PATH_MAX], k[16], m[16];
	const char *args[] = {prog, k, m, NULL};
	int parent, child;

	(void)state;
	require_uprobes();
	tl_path_of(prog, "tests/helpers/tl_sdt_tree");
	snprintf(k, sizeof(k), "%d", TREE_K);
	snprintf(m, sizeof(m), "%d", TREE_M);
	tree_run(&r, "usdt-tree", args);
	parent = tree_pid(&r, "parent");
	child = tree_pid(&r, "child");
	assert_int_equal(tree_pid(&r, "exec"), parent);
	assert_true(child > 0 && child != parent);
	assert_int_equal(count_hits(r.dumped, parent, 1), 1);
	if (count_hits(r.dumped, child, 2) != TREE_K)
		fail_msg("child %d: %d hits, not %d; prex said:\n%s\nrecords:\n%s", child,
			 count_hits(r.dumped, child, 2), TREE_K, r.err, r.dumped);
	assert_int_equal(count_hits(r.dumped, parent, 3), TREE_M);
	/* nothing else: every record is one of those */
	assert_int_equal(count_lines_with(r.dumped, " hit ", "arg0: "), 1 + TREE_K + TREE_M);
}

/*
 * prex -f on `tl_sdt_tree -T M`: a thread other than the main one execs.
 * The kernel ends the old main thread and gives the exec'ing thread the
 * process's pid; the new image's probe, enabled from prex's history,
 * records its TREE_M hits under that pid (an attacker saw it record
 * nothing; not reproduced since, and guarded here).
 */
static void test_prex_follow_thread_exec(void **state)
{
	static struct tree_run r;
	char prog[PATH_MAX], m[16];
	const char *args[] = {prog, "-T", m, NULL};
	int parent;

	(void)state;
	require_uprobes();
	tl_path_of(prog, "tests/helpers/tl_sdt_tree");
	snprintf(m, sizeof(m), "%d", TREE_M);
	tree_run(&r, "usdt-thread-exec", args);
	parent = tree_pid(&r, "parent");
	assert_int_equal(tree_pid(&r, "exec"), parent);
	assert_int_equal(count_hits(r.dumped, parent, 1), 1);
	assert_int_equal(count_hits(r.dumped, parent, 3), TREE_M);
	assert_int_equal(count_lines_with(r.dumped, " hit ", "arg0: "), 1 + TREE_M);
}

/*
 * prex -f: a shell execs a static program; its USDT probe takes the
 * history (`enable name=hit` typed before) and records every hit (the
 * static image was followed without any probe).
 */
static void test_prex_follow_exec_static(void **state)
{
	static struct tree_run r;
	char prog[PATH_MAX], cmd[PATH_MAX + 32];
	const char *args[] = {"/bin/sh", "-c", cmd, NULL};

	(void)state;
	require_uprobes();
	tl_path_of(prog, "tests/helpers/tl_sdt_tree_static");
	snprintf(cmd, sizeof(cmd), "exec %s -x %d", prog, TREE_M);
	tree_run(&r, "usdt-static", args);
	if (!strstr(r.err, "(static; USDT probes only)"))
		fail_msg("no static exec message in:\n%s", r.err);
	assert_int_equal(count_hits(r.dumped, tree_pid(&r, "exec"), 3), TREE_M);
}

/*
 * prex -f: a shell runs `env -i` on a dynamic program, which then has no
 * libtnfprobe.so.1 and is stopped at its exec before ld.so ran (no link
 * map).  Its USDT probe takes the history at rtld's start-up and records
 * every hit (it recorded none: no later stop listed its probes).
 */
static void test_prex_follow_exec_env_i(void **state)
{
	static struct tree_run r;
	char prog[PATH_MAX], cmd[PATH_MAX + 32];
	const char *args[] = {"/bin/sh", "-c", cmd, NULL};

	(void)state;
	require_uprobes();
	tl_path_of(prog, "tests/helpers/tl_sdt_tree");
	snprintf(cmd, sizeof(cmd), "exec env -i %s -x %d", prog, TREE_M);
	tree_run(&r, "usdt-env-i", args);
	if (!strstr(r.err, "(no libtnfprobe.so.1; USDT probes only)"))
		fail_msg("no exec message in:\n%s", r.err);
	assert_int_equal(count_hits(r.dumped, tree_pid(&r, "exec"), 3), TREE_M);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_sdt_list_enable_trace),
		TL_TEST(test_sdt_attributes),
		TL_TEST(test_python_gc_start),
		TL_TEST(test_controller_killed),
		TL_TEST(test_tnf_probe_listed_once),
		TL_TEST(test_python_no_runtime_gc_start),
		TL_TEST(test_api_noprobes_handle),
		TL_TEST(test_prex_usdt_strings_imports),
		TL_TEST(test_libstdcxx_throw),
		TL_TEST(test_prex_follow_fork_exec),
		TL_TEST(test_prex_follow_thread_exec),
		TL_TEST(test_controller_fork_lets_go),
		TL_TEST(test_usdt_file_env),
		TL_TEST(test_usdt_file_planted_during_setup),
		TL_TEST(test_static_program_sdt),
		TL_TEST(test_prex_follow_exec_static),
		TL_TEST(test_prex_follow_exec_env_i),
		TL_TEST(test_api_noprobes_startup_lists),
		TL_TEST(test_api_noprobes_startup_signal),
		TL_TEST(test_api_noprobes_startup_ignored_signal),
		TL_TEST(test_usdt_file_no_records_said),
		TL_TEST(test_usdt_file_kept_across_sessions),
		TL_TEST(test_usdt_file_truncated_between_sessions),
		TL_TEST(test_usdt_file_no_temporary_name),
		TL_TEST(test_fork_child_own_session),
		TL_TEST(test_fork_child_keeps_callers_fds),
		TL_TEST(test_prex_usdt_errors_named),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
