// SPDX-License-Identifier: BSD-2-Clause
/*
 * build/tnfctl-follow: its output for whole process trees, its exit status,
 * and SIGKILLs at random moments that must never leave a process of the
 * followed tree stopped or traced.
 *
 * Usage: tnfctl-follow -- CMD [ARGS...].  Output lines are printf("%10.3f %7d %-8s %s\n", ms, pid,
 * name, details); details: "child <pid>" (FORK), the path (EXEC, DLOPEN, DLCLOSE), "status <n>"
 * (EXIT), "signal <n> (...)" (TARGGONE).
 */
#include <sys/ptrace.h>
#include <sys/resource.h>
#include "testlib.h"

#define MAX_EVENTS 4096

struct fev {
	double ms;
	int pid;
	char name[16];
	char details[512];
};

struct follow_run {
	pid_t pid;
	int status; /* wait status of tnfctl-follow */
	int nev;
	struct fev ev[MAX_EVENTS];
	char *text; /* everything it printed */
	size_t tlen;
};

static int parse_line(const char *l, struct fev *e)
{
	int n = 0, i;

	if (sscanf(l, "%lf %d %15s %n", &e->ms, &e->pid, e->name, &n) < 3 || !n)
		return -1;
	if (!strchr(l, '.') || e->pid <= 0)
		return -1;
	for (i = 0; e->name[i]; i++)
		if (e->name[i] < 'A' || e->name[i] > 'Z')
			return -1;
	snprintf(e->details, sizeof(e->details), "%s", l + n);
	return 0;
}

static void add_text(struct follow_run *r, const char *buf, size_t n)
{
	r->text = realloc(r->text, r->tlen + n + 1);
	if (!r->text)
		abort();
	memcpy(r->text + r->tlen, buf, n);
	r->tlen += n;
	r->text[r->tlen] = '\0';
}

/* A command tnfctl-follow is run through (its argv goes after), or NULL. */
static const char *const *follow_prefix;

/*
 * Runs tnfctl-follow @opts (NULL-terminated, may be NULL) -- @args to its
 * exit; collects its lines.
 */
static void run_follow_opts(struct follow_run *r, char *const *opts, char *const *args,
			    int timeout_ms)
{
	char *argv[40];
	long long end = tl_now_ms() + timeout_ms;
	int out[2], i, n = 0, fd, exited = 0;
	char **env;

	memset(r, 0, sizeof(*r));
	for (i = 0; follow_prefix && follow_prefix[i]; i++)
		argv[n++] = (char *)follow_prefix[i];
	argv[n++] = tl.follow;
	for (i = 0; opts && opts[i] && n < 8; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	for (i = 0; args[i] && n < 38; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(out, O_CLOEXEC))
		abort();
	env = tl_env_build(NULL);
	r->pid = tl_spawn(argv, env, out[1], NULL);
	free(env);
	close(out[1]);
	fd = tl_pidfd_of(r->pid);
	while (!exited) {
		struct pollfd pfd[2] = {{.fd = out[0], .events = POLLIN},
					{.fd = fd, .events = POLLIN}};
		char buf[4096];
		int left = end - tl_now_ms();
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(pfd, 2, left) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & (POLLIN | POLLHUP)) {
			n = read(out[0], buf, sizeof(buf));
			if (n > 0)
				add_text(r, buf, n);
		}
		if (pfd[1].revents & POLLIN)
			exited = 1;
	}
	/* drain what it wrote before exiting */
	for (;;) {
		struct pollfd pfd = {.fd = out[0], .events = POLLIN};
		char buf[4096];
		ssize_t n;

		if (poll(&pfd, 1, 0) <= 0)
			break;
		n = read(out[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		add_text(r, buf, n);
	}
	close(out[0]);
	if (!exited) {
		print_error("tnfctl-follow output so far:\n%s\n", r->text ? r->text : "");
		fail_msg("tnfctl-follow did not exit within %d ms", timeout_ms);
	}
	r->status = tl_reap(r->pid);
	if (r->text) {
		char *save = NULL, *l, *copy = strdup(r->text);

		for (l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			if (r->nev < MAX_EVENTS && !parse_line(l, &r->ev[r->nev]))
				r->nev++;
		free(copy);
	}
}

static void run_follow(struct follow_run *r, char *const *args, int timeout_ms)
{
	run_follow_opts(r, NULL, args, timeout_ms);
}

static void free_run(struct follow_run *r)
{
	free(r->text);
	r->text = NULL;
}

static int count_events(struct follow_run *r, int pid, const char *name, const char *detail)
{
	int i, n = 0;

	for (i = 0; i < r->nev; i++) {
		if (pid && r->ev[i].pid != pid)
			continue;
		if (strcmp(r->ev[i].name, name))
			continue;
		if (detail && !strstr(r->ev[i].details, detail))
			continue;
		n++;
	}
	return n;
}

static void dump_run(struct follow_run *r)
{
	print_error("tnfctl-follow (wait status 0x%x) printed:\n%s\n", r->status,
		    r->text ? r->text : "");
}

/* Does python3 map libz before any user code (then ctypes.CDLL cannot add it)? */
/* python3's path in @py, or the test is skipped, saying why. */
static void need_python3(char *py, size_t size)
{
	if (!tl_find_in_path("python3", py, size)) {
		print_message("SKIP: python3 is not installed (command -v python3 fails)\n");
		skip();
	}
}

static int python_preloads_libz(void)
{
	char *argv[] = {"/bin/sh", "-c",
			"python3 -c 'import sys; sys.exit(\"libz.so\" in "
			"open(\"/proc/self/maps\").read())'",
			NULL};
	char **env = tl_env_build(NULL);
	pid_t pid;
	int st;

	pid = tl_spawn(argv, env, -1, NULL);
	free(env);
	st = tl_reap(pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

/* A bash tree: FORK, EXEC and EXIT of each child, DLOPEN in python3, bash's exit 3. */
static void test_follow_bash_tree(void **state)
{
	static struct follow_run r;
	char *args[] = {"bash", "-c",
			"for i in 1 2 3; do /bin/true; done; "
			"python3 -c \"import ctypes; ctypes.CDLL(\\\"libz.so.1\\\")\"; exit 3",
			NULL};
	int i, root = 0, nchild = 0, children[16], ntrue = 0, python = 0, libz_loaded;
	char py[PATH_MAX];

	(void)state;
	tl_require_root();
	need_python3(py, sizeof(py));
	libz_loaded = python_preloads_libz();
	run_follow(&r, args, 3 * tl.timeout_ms);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 3) {
		dump_run(&r);
		fail_msg("tnfctl-follow exited with wait status 0x%x, expected exit 3", r.status);
	}
	/* bash is the process whose EXIT says status 3 */
	for (i = 0; i < r.nev; i++)
		if (!strcmp(r.ev[i].name, "EXIT") && !strcmp(r.ev[i].details, "status 3"))
			root = r.ev[i].pid;
	if (!root) {
		dump_run(&r);
		fail_msg("no \"EXIT ... status 3\" line for bash");
	}
	for (i = 0; i < r.nev; i++) {
		if (r.ev[i].pid == root && !strcmp(r.ev[i].name, "FORK") && nchild < 16) {
			if (sscanf(r.ev[i].details, "child %d", &children[nchild]) != 1) {
				dump_run(&r);
				fail_msg("FORK details \"%s\" are not \"child <pid>\"",
					 r.ev[i].details);
			}
			nchild++;
		}
	}
	if (nchild != 4) {
		dump_run(&r);
		fail_msg("bash made %d FORK lines, expected 4 (3 x /bin/true, python3)", nchild);
	}
	for (i = 0; i < nchild; i++) {
		int c = children[i];

		if (!count_events(&r, c, "EXEC", NULL) ||
		    !count_events(&r, c, "EXIT", "status 0")) {
			dump_run(&r);
			fail_msg("child %d: missing its EXEC or its \"EXIT status 0\" line", c);
		}
		if (count_events(&r, c, "EXEC", "true"))
			ntrue++;
		else if (count_events(&r, c, "EXEC", "python"))
			python = c;
	}
	if (ntrue != 3 || !python) {
		dump_run(&r);
		fail_msg("expected 3 EXECs of /bin/true and one of python3, got %d and %s", ntrue,
			 python ? "one" : "none");
	}
	/* A DLOPEN only if it loads libz (issue 31): not when python3 maps it already. */
	if (count_events(&r, python, "DLOPEN", "libz.so.1") != !libz_loaded) {
		dump_run(&r);
		fail_msg("%d DLOPEN of libz.so.1 in python3 (pid %d, libz %s at start-up)",
			 count_events(&r, python, "DLOPEN", "libz.so.1"), python,
			 libz_loaded ? "mapped" : "not mapped");
	}
	free_run(&r);
}

/*
 * python3 ctypes, both modes (issue 31): CDLL(None) is dlopen(NULL), no
 * event; libbpf loaded twice (its first load maps libelf and libz too) is one
 * DLOPEN named as passed; closed twice, one DLCLOSE, at the unload.
 */
static void test_follow_python_ctypes(void **state)
{
	static struct follow_run r;
	char py[PATH_MAX];
	char *args[] = {py, "-c",
			"import ctypes, _ctypes\n"
			"ctypes.CDLL(None)\n"
			"a = ctypes.CDLL('libbpf.so.1'); b = ctypes.CDLL('libbpf.so.1')\n"
			"_ctypes.dlclose(b._handle); _ctypes.dlclose(a._handle)\n",
			NULL};
	char *opts[] = {NULL, NULL};
	int mode, i, nopen;

	(void)state;
	tl_require_root();
	need_python3(py, sizeof(py));
	for (mode = 0; mode < tl_follow_modes(); mode++) {
		opts[0] = mode ? "--no-stop" : NULL;
		run_follow_opts(&r, opts, args, 3 * tl.timeout_ms);
		for (i = nopen = 0; i < r.nev; i++) {
			if (!strcmp(r.ev[i].name, "DLOPEN") && !r.ev[i].details[0]) {
				dump_run(&r);
				fail_msg("%s: a DLOPEN with no name", mode ? "--no-stop" : "stop");
			}
			/* the one after it, in the same process, is the DLCLOSE of libbpf */
			if (!strcmp(r.ev[i].name, "DLOPEN") &&
			    !strcmp(r.ev[i].details, "libbpf.so.1") && nopen++ == 0 &&
			    (i + 1 >= r.nev || strcmp(r.ev[i + 1].name, "DLCLOSE") ||
			     !strstr(r.ev[i + 1].details, "libbpf.so.1"))) {
				dump_run(&r);
				fail_msg("%s: the next event is not the DLCLOSE of libbpf",
					 mode ? "--no-stop" : "stop");
			}
		}
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) || nopen != 1 ||
		    count_events(&r, 0, "DLOPEN", "libbpf") != 1 ||
		    count_events(&r, 0, "DLCLOSE", "libbpf") != 1 ||
		    count_events(&r, 0, "DLOPEN", "ld-linux")) {
			dump_run(&r);
			fail_msg("%s: expected exit 0, one DLOPEN \"libbpf.so.1\", one DLCLOSE of "
				 "it, nothing for CDLL(None)",
				 mode ? "--no-stop" : "stop");
		}
		free_run(&r);
	}
	tl_watch_half_end();
}

/* The bundled demo: exit 0 and every lifecycle event. */
static void test_follow_tnfdemo(void **state)
{
	static struct follow_run r;
	char *args[] = {tl.demo, NULL};

	(void)state;
	tl_require_root();
	run_follow(&r, args, 3 * tl.timeout_ms);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
		dump_run(&r);
		fail_msg("tnfctl-follow tnfdemo: wait status 0x%x, expected exit 0", r.status);
	}
	if (count_events(&r, 0, "FORK", "child ") < 3 || !count_events(&r, 0, "EXEC", "true") ||
	    !count_events(&r, 0, "DLOPEN", "libtnfdemo_plugin.so") ||
	    !count_events(&r, 0, "DLCLOSE", "libtnfdemo_plugin.so") ||
	    !count_events(&r, 0, "EXIT", "status 7") || count_events(&r, 0, "EXIT", NULL) < 4) {
		dump_run(&r);
		fail_msg("tnfctl-follow tnfdemo: missing FORK x3 / EXEC of true / DLOPEN and "
			 "DLCLOSE "
			 "of the plugin / EXIT status 7 / 4 EXITs");
	}
	if (!strstr(r.text, "tnfdemo: exiting 0")) {
		dump_run(&r);
		fail_msg("tnfdemo did not run to its end under tnfctl-follow");
	}
	free_run(&r);
}

/*
 * Releasers (tnfctl-release) that are our children now, reaped; each must
 * have ended by itself with status 0.  Returns how many.
 */
static int reap_releasers(void)
{
	struct tl_pinfo *ps;
	int n, i, found = 0, st;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++) {
		if (ps[i].ppid != getpid() || strcmp(ps[i].comm, "tnfctl-release"))
			continue;
		found++;
		assert_int_equal(waitpid(ps[i].pid, &st, 0), ps[i].pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail_msg("tnfctl-release %d: wait status 0x%x", ps[i].pid, st);
	}
	free(ps);
	return found;
}

/*
 * A command that cannot run (a script without #!): in both modes the
 * message execve's errno gives, exit 126, and no event at all (no EXIT of
 * the process that never became CMD, no JSON slice for it).
 */
static void test_follow_cannot_run_no_event(void **state)
{
	char dir[] = "/tmp/tl-follow-noexec-XXXXXX", script[64], out[80];
	char *args[] = {script, NULL};
	struct follow_run r;
	char json[4096];
	int mode, fd;

	(void)state;
	tl_require_root();
	assert_non_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/noshebang", dir);
	snprintf(out, sizeof(out), "--output=%s/out.json", dir);
	fd = open(script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, "echo hi\n", 8), 0);
	close(fd);
	/* mode: bit 0 --no-stop, bit 1 JSON to a file */
	for (mode = 0; mode < 4; mode++) {
		char *o[4] = {NULL};
		int k = 0;

		if ((mode & 1) && !tl_watch_supported())
			continue;
		if (mode & 2) {
			o[k++] = out;
			o[k++] = "--format=json";
		}
		if (mode & 1)
			o[k++] = "--no-stop";
		run_follow_opts(&r, o, args, tl.timeout_ms);
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 126 ||
		    !strstr(r.text, "noshebang: Exec format error") || r.nev) {
			dump_run(&r);
			fail_msg("mode %d: wait status 0x%x, %d event(s); expected exit 126, "
				 "the message and no event",
				 mode, r.status, r.nev);
		}
		free_run(&r);
		if (mode & 2) {
			snprintf(json, sizeof(json), "%s/out.json", dir);
			assert_true(tl_read_file(json, json, sizeof(json)) > 0);
			if (strstr(json, "\"ph\":\"X\""))
				fail_msg("mode %d: a JSON slice for a process that never ran:\n%s",
					 mode, json);
		}
	}
	snprintf(json, sizeof(json), "rm -rf %s", dir);
	assert_int_equal(system(json), 0);
	tl_watch_half_end();
}

/*
 * Under another tracer (`strace -f tnfctl-follow -- CMD`: strace holds CMD
 * before the engine can seize it): BUSY, said as such, exit 1 (README's
 * table); --no-stop, which ptraces nothing, follows CMD as usual.
 */
static void test_follow_under_another_tracer(void **state)
{
	static char strace[PATH_MAX];
	static const char *const prefix[] = {strace, "-f", "-o", "/dev/null", NULL};
	char *nostop[] = {"--no-stop", NULL};
	char *args[] = {"/bin/true", NULL};
	struct follow_run r;
	char *asan;

	(void)state;
	tl_require_root();
	if (!tl_find_in_path("strace", strace, sizeof(strace))) {
		print_message("SKIP: strace is not installed (Debian package strace)\n");
		skip();
	}
	asan = tl_asan_leaks_off();
	follow_prefix = prefix;
	run_follow_opts(&r, NULL, args, tl.timeout_ms);
	follow_prefix = NULL;
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 1 ||
	    !strstr(r.text, "/bin/true: target is already being controlled or traced")) {
		dump_run(&r);
		fail_msg("under strace -f: wait status 0x%x, expected exit 1 and BUSY's message",
			 r.status);
	}
	free_run(&r);
	if (!tl_watch_supported()) {
		tl_asan_leaks_restore(asan);
		tl_watch_half_end();
	}
	follow_prefix = prefix;
	run_follow_opts(&r, nostop, args, tl.timeout_ms);
	follow_prefix = NULL;
	tl_asan_leaks_restore(asan);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) || !strstr(r.text, "EXIT")) {
		dump_run(&r);
		fail_msg("--no-stop under strace -f: wait status 0x%x, expected exit 0 and an EXIT",
			 r.status);
	}
	free_run(&r);
}

/*
 * tnfctl-follow's messages share stderr with the tree's own output: each is
 * one write(), so that no line of the tree's lands inside one.  Under
 * `strace -f -e trace=write` (which makes the open BUSY: its message is the
 * one written), every write to fd 2 ends a line.
 */
static void test_follow_message_one_write(void **state)
{
	static char strace[PATH_MAX], log[PATH_MAX], line[16384];
	static const char *const prefix[] = {strace, "-f", "-qq", "-e", "trace=write",
					     "-s", "8192", "-o", log, NULL};
	char *args[] = {"/bin/true", NULL};
	char dir[] = "/tmp/tl-follow-writes-XXXXXX";
	struct follow_run r;
	int busy = 0;
	FILE *f;

	(void)state;
	tl_require_root();
	if (!tl_find_in_path("strace", strace, sizeof(strace))) {
		print_message("SKIP: strace is not installed (Debian package strace)\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/writes.strace", dir);
	follow_prefix = prefix;
	run_follow_opts(&r, NULL, args, tl.timeout_ms);
	follow_prefix = NULL;
	free_run(&r);
	f = fopen(log, "re");
	if (!f)
		fail_msg("%s: %s", log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		const char *w = strstr(line, " write(2, \"");

		if (!w)
			continue;
		busy += !!strstr(w, "already being controlled or traced");
		if (!strstr(w, "\\n\", "))
			fail_msg("a write of part of a line: %s", line);
	}
	fclose(f);
	unlink(log);
	rmdir(dir);
	if (!busy)
		fail_msg("no write of BUSY's message under strace -f");
}

/*
 * The dlopen probes' links belong to the engine (one set per libc, for all
 * its watches): a --no-stop run holds none, so none is released at its end
 * and no tnfctl-release process is started for it, with or without
 * TNFCTL_SYNC_RELEASE.
 */
static void test_follow_no_stop_releases_nothing(void **state)
{
	char *opts[] = {"--no-stop", NULL};
	char *args[] = {"/bin/true", NULL};
	struct follow_run r;

	(void)state;
	tl_require_root();
	tl_require_watch();
	run_follow_opts(&r, opts, args, tl.timeout_ms);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status))
		fail_msg("tnfctl-follow --no-stop: wait status 0x%x", r.status);
	free_run(&r);
	assert_int_equal(reap_releasers(), 0);
	setenv("TNFCTL_SYNC_RELEASE", "1", 1);
	run_follow_opts(&r, opts, args, tl.timeout_ms);
	unsetenv("TNFCTL_SYNC_RELEASE");
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status))
		fail_msg("tnfctl-follow --no-stop: wait status 0x%x", r.status);
	free_run(&r);
	assert_int_equal(reap_releasers(), 0);
}

/* tnfdemo -x 5: tnfctl-follow exits with the target's status. */
static void test_follow_exit_status(void **state)
{
	static struct follow_run r;
	char *args[] = {tl.demo, "-x", "5", NULL};

	(void)state;
	tl_require_root();
	run_follow(&r, args, 3 * tl.timeout_ms);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 5) {
		dump_run(&r);
		fail_msg("tnfctl-follow tnfdemo -x 5: wait status 0x%x, expected exit 5", r.status);
	}
	free_run(&r);
}

/*
 * Follows @n dd processes alive at once, each blocked on a FIFO until the
 * root has started them all; the root first prints `ulimit @ulimit`,
 * which must say 1024.  Every dd EXEC is reported, nothing is detached.
 */
static void follow_live_dds(int n, const char *ulimit)
{
	static struct follow_run r;
	char script[512];
	char *args[] = {"bash", "-c", script, NULL};
	int dd;

	snprintf(script, sizeof(script),
		 "ulimit %s; d=$(mktemp -d) && mkfifo $d/f && exec 3<>$d/f && rm -r $d && "
		 "for i in $(seq %d); do dd bs=1 count=1 status=none <&3 >/dev/null & done; "
		 "head -c %d /dev/zero >&3; wait",
		 ulimit, n, n);
	run_follow(&r, args, 6 * tl.timeout_ms + n * (tl.timeout_ms / 400));
	dd = count_events(&r, 0, "EXEC", "/dd");
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) || dd != n ||
	    strstr(r.text, "detached") || !strstr(r.text, "1024\n")) {
		dump_run(&r);
		fail_msg("%d live processes at ulimit %s 1024: %d dd EXECs, wait status 0x%x", n,
			 ulimit, dd, r.status);
	}
	free_run(&r);
}

/*
 * 600 processes alive at once under a soft RLIMIT_NOFILE of 1024 (Debian's
 * default): the library holds two descriptors per followed process in
 * the controller and two in the engine, so both raise their
 * soft limit to the hard one; the tree keeps the caller's 1024.  Before,
 * about 330 processes were followed and the rest "detached" with "memory
 * allocation failure".  The dd processes block on a FIFO until the root
 * has started them all, then each reads one byte and exits.
 */
static void test_follow_many_live_processes(void **state)
{
	struct rlimit old, low;

	(void)state;
	tl_require_root();
	if (getrlimit(RLIMIT_NOFILE, &old) || old.rlim_max < 8192) {
		print_message("SKIP: needs a hard RLIMIT_NOFILE of 8192 or more (it is %llu)\n",
			      (unsigned long long)old.rlim_max);
		skip();
	}
	low = old;
	low.rlim_cur = 1024;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	follow_live_dds(600, "-Sn");
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/*
 * 2000 live processes (10,000 with TL_STRESS=full, 500 in a slow lane)
 * under a hard RLIMIT_NOFILE of 1024 (Debian's default login limit), which
 * neither tnfctl-follow nor its engine can raise: handles are ids on one
 * connection, so neither holds a descriptor per followed process.  BUG
 * (fixed): a handle was a socket in each, 338 of 2000 were followed and
 * the rest "detached" (later 494, at two descriptors per process).
 */
static void test_follow_live_processes_hard_limit(void **state)
{
	/* in the child only: without CAP_SYS_RESOURCE a hard limit never comes back up */
	static const char *const prefix[] = {"/bin/sh", "-c",
					     "ulimit -n 1024 && exec \"$0\" \"$@\"", NULL};
	const char *stress = getenv("TL_STRESS");
	int n = stress && !strcmp(stress, "full") ? 10000 : tl.timeout_ms > 60000 ? 500 : 2000;
	struct rlimit old;

	(void)state;
	tl_require_root();
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	if (old.rlim_max < 1024) {
		print_message("SKIP: needs a hard RLIMIT_NOFILE of 1024 or more (it is %llu)\n",
			      (unsigned long long)old.rlim_max);
		skip();
	}
	tl_watchdog_extend(n / 20);
	follow_prefix = prefix;
	follow_live_dds(n, "-Hn");
	follow_prefix = NULL;
}

/* Runs tests/helpers/follow_json_check.py @what @file; fails the test if it finds fault. */
static void check_json(const char *py, const char *what, const char *file)
{
	char script[PATH_MAX + 64];
	char *argv[] = {(char *)py, script, (char *)what, (char *)file, NULL};
	char **env = tl_env_build(NULL);
	int st;

	snprintf(script, sizeof(script), "%s/../tests/helpers/follow_json_check.py", tl.bdir);
	st = tl_reap(tl_spawn(argv, env, -1, NULL));
	free(env);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("follow_json_check.py %s %s: the export is wrong (above)", what, file);
}

/*
 * --format=json in both modes, on a tree of known shape: 3 levels, each
 * waited for; an exec chain (sh -> env -> true) in one process; a failed
 * exec; a process killed by SIGKILL; a process that outlives its parent
 * (blocked on a fifo that the root writes only after that parent ended).
 * follow_json_check.py checks each slice, its parent, argv and end.
 */
static void test_follow_json_tree(void **state)
{
	static struct follow_run r;
	char dir[] = "/tmp/tl-follow-json-XXXXXX", fifo[64], file[64], opt[80], script[512];
	char *args[] = {"/bin/sh", "-c", script, NULL};
	char *opts[] = {"--format=json", opt, NULL, NULL};
	char py[PATH_MAX];
	int mode;

	(void)state;
	tl_require_root();
	need_python3(py, sizeof(py));
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/trace.json", dir);
	snprintf(opt, sizeof(opt), "--output=%s", file);
	snprintf(script, sizeof(script),
		 "/bin/sh -c '/bin/true; exit 4'\n"
		 "(exec /usr/bin/env /bin/true)\n"
		 "/nonexistent/prog 2>/dev/null\n"
		 "/bin/sh -c 'kill -9 $$'\n"
		 "/bin/sh -c '(read x < %s; /bin/true) & exit 0'\n"
		 "echo > %s\n"
		 "exit 5\n",
		 fifo, fifo);
	for (mode = 0; mode < tl_follow_modes(); mode++) {
		assert_int_equal(mkfifo(fifo, 0600), 0);
		opts[2] = mode ? "--no-stop" : NULL;
		run_follow_opts(&r, opts, args, 3 * tl.timeout_ms);
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 5) {
			dump_run(&r);
			fail_msg("tnfctl-follow %s: wait status 0x%x, expected exit 5",
				 mode ? "--no-stop" : "", r.status);
		}
		check_json(py, "tree", file);
		free_run(&r);
		unlink(fifo);
		unlink(file);
	}
	rmdir(dir);
	tl_watch_half_end();
}

/*
 * --format=ndjson is written as it happens: the EXIT of /bin/true is read
 * from the pipe while the tree still runs (its root blocked on a fifo that
 * the test writes only then).  Every line is one JSON event.
 */
static void test_follow_ndjson_streams(void **state)
{
	char dir[] = "/tmp/tl-follow-ndjson-XXXXXX", fifo[64], file[64], script[256];
	char *argv[] = {tl.follow, "--format=ndjson", "--", "/bin/sh", "-c", script, NULL};
	static char text[1 << 16];
	long long end = tl_now_ms() + tl.timeout_ms;
	size_t len = 0;
	int out[2], fd = -1, st;
	char py[PATH_MAX], **env;
	FILE *f;
	pid_t pid;

	(void)state;
	tl_require_root();
	need_python3(py, sizeof(py));
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/events.ndjson", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(script, sizeof(script), "/bin/true; read x < %s; exit 0", fifo);
	if (pipe2(out, O_CLOEXEC))
		abort();
	env = tl_env_build(NULL);
	pid = tl_spawn(argv, env, out[1], NULL);
	free(env);
	close(out[1]);
	/* the tree is blocked: what comes now was written as it happened */
	while (!strstr(text, "\"event\":\"EXIT\"")) {
		struct pollfd pfd = {.fd = out[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, end - tl_now_ms()) <= 0)
			fail_msg("no EXIT line while the tree runs; so far:\n%s", text);
		n = read(out[0], text + len, sizeof(text) - 1 - len);
		if (n <= 0)
			fail_msg("tnfctl-follow ended before the tree; it wrote:\n%s", text);
		len += n;
		text[len] = '\0';
	}
	while (fd < 0) {
		fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && (errno != ENXIO || tl_now_ms() > end))
			fail_msg("open %s: %s", fifo, strerror(errno));
		if (fd < 0)
			usleep(1000); /* polling interval: the shell opens it next */
	}
	assert_int_equal(write(fd, "\n", 1), 1);
	close(fd);
	for (;;) {
		ssize_t n = read(out[0], text + len, sizeof(text) - 1 - len);

		if (n <= 0)
			break;
		len += n;
	}
	text[len] = '\0';
	close(out[0]);
	st = tl_reap(pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("tnfctl-follow --format=ndjson: wait status 0x%x; it wrote:\n%s", st,
			 text);
	f = fopen(file, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	check_json(py, "ndjson", file);
	unlink(file);
	unlink(fifo);
	rmdir(dir);
}

/*
 * Probes and processes on one timeline: tnftrace traces tnfdemo's probes
 * under tnfctl-follow --no-stop --format=json; examples/trace-merge.py
 * merges that with tnfdump --format=json of the trace file.  Each probe
 * event must fall inside a slice of the process that fired it (one clock),
 * on a track named by the program.
 */
static void test_follow_merge_with_probes(void **state)
{
	char dir[] = "/tmp/tl-follow-merge-XXXXXX", cmd[8 * PATH_MAX], merged[64];
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	char py[PATH_MAX], **env;
	int st;

	(void)state;
	tl_require_root();
	tl_require_watch();
	need_python3(py, sizeof(py));
	assert_non_null(mkdtemp(dir));
	snprintf(merged, sizeof(merged), "%s/merged.json", dir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; %s --no-stop --format=json -o procs.json -- %s/tnftrace -q -o "
		 "demo.tnf -- %s >out.txt 2>&1; %s/tnfdump --format=json demo.tnf >probes.json; "
		 "%s %s/../examples/trace-merge.py procs.json probes.json >merged.json",
		 dir, tl.follow, tl.bdir, tl.demo, tl.bdir, py, tl.bdir);
	env = tl_env_build(NULL);
	st = tl_reap(tl_spawn(argv, env, -1, NULL));
	free(env);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("the run or the merge failed (wait status 0x%x): sh -c '%s'", st, cmd);
	check_json(py, "merged", merged);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	st = tl_reap(tl_spawn(argv, NULL, -1, NULL));
	assert_int_equal(st, 0);
}

/*
 * -o through a symbolic link: to a pipe or device (/dev/stdout) it is
 * followed; to a file it is refused (exit 1), the file left as it was.
 */
static void test_follow_output_links(void **state)
{
	static struct follow_run r;
	char dir[] = "/tmp/tl-follow-out-XXXXXX", file[64], link[64], opt[80];
	char *args[] = {"/bin/true", NULL};
	/* /proc/self/fd/1 rather than /dev/stdout: the 6.1 lane's /dev may lack it */
	char *opts[] = {"--format=ndjson", "--output=/proc/self/fd/1", NULL};
	struct stat st;

	(void)state;
	tl_require_root();
	run_follow_opts(&r, opts, args, 3 * tl.timeout_ms);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) ||
	    !strstr(r.text, "\"event\":\"ROOT\"")) {
		dump_run(&r);
		fail_msg("-o /proc/self/fd/1: wait status 0x%x, or no ROOT line", r.status);
	}
	free_run(&r);
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(opt, sizeof(opt), "--output=%s", link);
	assert_int_equal(close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)), 0);
	assert_int_equal(symlink(file, link), 0);
	opts[1] = opt;
	run_follow_opts(&r, opts, args, 3 * tl.timeout_ms);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 1 ||
	    !strstr(r.text, "a symbolic link to a file is refused")) {
		dump_run(&r);
		fail_msg("-o LINK-TO-FILE: wait status 0x%x, expected exit 1 and a message",
			 r.status);
	}
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 0);
	free_run(&r);
	unlink(link);
	unlink(file);
	rmdir(dir);
}

/*
 * `tnfctl-follow -- CMD | head -1`: the reader leaves, as it may.  Untraced,
 * `yes | head -1` ends by SIGPIPE (a shell shows 141), and a command that
 * does not write to the pipe (`sh -c '/bin/true; read y'`, whose line is
 * tnfctl-follow's first event) exits 0, silently.  tnfctl-follow writes its
 * events to the same pipe; the reader's leaving is no failure of its: no
 * "write error", and it ends as CMD did (by CMD's signal, or with CMD's
 * status), in both modes and every format.
 */
struct piped_follow {
	pid_t pid;
	int out, err, in; /* its stdout and stderr (read ends), CMD's stdin (write end) */
};

static void piped_follow_start(struct piped_follow *f, char *const *opts, char *const *cmd)
{
	int out[2], err[2], in[2];
	char *argv[16], **env;
	int n = 0, i;

	argv[n++] = tl.follow;
	for (i = 0; opts && opts[i]; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	for (i = 0; cmd[i] && n < 15; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC))
		abort();
	env = tl_env_build(NULL);
	fflush(stdout);
	fflush(stderr);
	f->pid = fork();
	if (f->pid < 0)
		abort();
	if (f->pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		execve(argv[0], argv, env);
		_exit(127);
	}
	free(env);
	tl_track_pid(f->pid);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	f->out = out[0];
	f->err = err[0];
	f->in = in[1];
}

/* Reads @fd until a whole line came (or EOF, or the timeout: a failure). */
static void read_a_line(int fd, const char *what)
{
	long long end = tl_now_ms() + tl.timeout_ms;
	char buf[4096];
	size_t len = 0;

	while (!memchr(buf, '\n', len)) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int left = end - tl_now_ms();
		ssize_t n;

		if (len == sizeof(buf) || poll(&pfd, 1, left > 0 ? left : 0) <= 0)
			fail_msg("%s: no line within %d ms", what, tl.timeout_ms);
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n <= 0)
			fail_msg("%s: its output ended before a line", what);
		len += n;
	}
}

static void test_follow_reader_leaves(void **state)
{
	char *yes[] = {"/usr/bin/yes", NULL};
	char *true_read[] = {"/bin/sh", "-c", "/bin/true; read y; exit 0", NULL};
	char *nostop[] = {"--no-stop", NULL, NULL}, *stop[] = {NULL, NULL};
	static const char *const formats[] = {NULL, "--format=ndjson", "--format=json"};
	char err[4096], what[128];
	int mode, fmt, c;

	(void)state;
	tl_require_root();
	for (c = 0; c < 2; c++)
		for (mode = 0; mode < tl_follow_modes(); mode++)
			for (fmt = 0; fmt < 3; fmt++) {
				char **opts = mode ? nostop : stop;
				struct piped_follow f;
				ssize_t n, len = 0;
				int st;

				opts[mode] = (char *)formats[fmt];
				snprintf(what, sizeof(what), "tnfctl-follow%s%s%s -- %s | head -1",
					 mode ? " --no-stop" : "", fmt ? " " : "",
					 fmt ? formats[fmt] : "", c ? "sh -c '/bin/true; read y'" : "yes");
				piped_follow_start(&f, opts, c ? true_read : yes);
				/* json comes at the end: that reader leaves before it */
				if (fmt != 2)
					read_a_line(f.out, what);
				close(f.out); /* head -1 has its line */
				close(f.in);  /* sh's read ends: it exits 0 */
				while ((n = read(f.err, err + len, sizeof(err) - 1 - len)) > 0)
					len += n;
				err[len] = '\0';
				close(f.err);
				st = tl_reap(f.pid);
				if (strstr(err, "write error"))
					fail_msg("%s: \"%s\"", what, err);
				if (c ? !WIFEXITED(st) || WEXITSTATUS(st)
				      : !WIFSIGNALED(st) || WTERMSIG(st) != SIGPIPE)
					fail_msg("%s: wait status 0x%x, expected %s; stderr \"%s\"",
						 what, st, c ? "exit 0" : "SIGPIPE", err);
			}
	tl_watch_half_end();
}

/*
 * examples/follow-timeline.sh reads --format=ndjson.  Given something else
 * (the --format=json trace, a JSON line that is no event, a file that is
 * not there) it said so with a Python traceback; now with one line naming
 * the file (and, for the JSON trace, the format to use), and exit 1.  The
 * errors come before gnuplot is needed.
 */
static void test_follow_timeline_bad_input(void **state)
{
	static const struct {
		const char *content; /* NULL: no such file */
		const char *want;
	} cases[] = {
		{"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
		 "{\"ph\":\"X\",\"cat\":\"process\",\"name\":\"sh\",\"pid\":1,\"tid\":1,\"ts\":1.0,"
		 "\"dur\":2.0,\"args\":{}}\n"
		 "],\"otherData\":{\"source\":\"tnfctl-follow\",\"ts_base_ns\":1}}\n",
		 "--format=json"},
		{"{\"time_ns\":1,\"event\":\"ROOT\",\"pid\":1,\"argv\":[\"sh\"]}\n{\"a\":1}\n",
		 "line 2"},
		{"{\"time_ns\":1,\"event\":\"ROOT\",\"pid\":1,\"argv\":[\"sh\"]}\n{\"time_ns\":\n",
		 "line 2"},
		{NULL, "No such file"},
	};
	char dir[] = "/tmp/tl-follow-timeline-XXXXXX", in[64], png[64], script[PATH_MAX + 64];
	char *argv[] = {"/bin/sh", script, in, png, NULL};
	char py[PATH_MAX], text[8192], **env;
	size_t i;

	(void)state;
	need_python3(py, sizeof(py));
	snprintf(script, sizeof(script), "%s/../examples/follow-timeline.sh", tl.bdir);
	assert_non_null(mkdtemp(dir));
	snprintf(in, sizeof(in), "%s/events", dir);
	snprintf(png, sizeof(png), "%s/out.png", dir);
	env = tl_env_build(NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int out[2], st;
		ssize_t n, len = 0;
		pid_t pid;

		unlink(in);
		if (cases[i].content) {
			FILE *f = fopen(in, "we");

			assert_non_null(f);
			fputs(cases[i].content, f);
			fclose(f);
		}
		if (pipe2(out, O_CLOEXEC))
			abort();
		pid = tl_spawn(argv, env, out[1], NULL);
		close(out[1]);
		while ((n = read(out[0], text + len, sizeof(text) - 1 - len)) > 0)
			len += n;
		text[len] = '\0';
		close(out[0]);
		st = tl_reap(pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 1 || strstr(text, "Traceback") ||
		    !strstr(text, cases[i].want) || !strstr(text, in) || !len ||
		    memchr(text, '\n', len - 1) || text[len - 1] != '\n')
		{
			print_error("follow-timeline.sh printed:\n%s\n", text);
			fail_msg("case %zu: wait status 0x%x, expected exit 1 and one line naming "
				 "%s with \"%s\"",
				 i, st, in, cases[i].want);
		}
		assert_int_equal(access(png, F_OK), -1);
	}
	free(env);
	unlink(in);
	rmdir(dir);
}

/*
 * BUG (fixed): a write error on the output (-o /dev/full) was reported but
 * tnfctl-follow exited 0; and a command that could not be run left -o
 * holding the start of a JSON file.  Now: exit 1; and valid, empty JSON.
 */
static void test_follow_output_errors(void **state)
{
	static struct follow_run r;
	char dir[] = "/tmp/tl-follow-err-XXXXXX", file[64], opt[80], py[PATH_MAX];
	char *args[] = {"/bin/true", NULL}, *missing[] = {"/nonexistent/prog", NULL};
	char *opts[] = {"--format=json", "--output=/dev/full", NULL, NULL};
	int mode;

	(void)state;
	tl_require_root();
	for (mode = 0; mode < 2; mode++) {
		opts[2] = mode ? "--no-stop" : NULL;
		run_follow_opts(&r, opts, args, 3 * tl.timeout_ms);
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 1 ||
		    !strstr(r.text, "/dev/full: write error")) {
			dump_run(&r);
			fail_msg("-o /dev/full%s: wait status 0x%x, expected exit 1 and a message",
				 mode ? " --no-stop" : "", r.status);
		}
		free_run(&r);
	}
	if (!tl_find_in_path("python3", py, sizeof(py))) {
		/* the write-error half ran; the JSON half is the test's other half */
		print_message("SKIP: the JSON check needs python3 (Debian package python3)\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/out.json", dir);
	snprintf(opt, sizeof(opt), "--output=%s", file);
	opts[1] = opt;
	for (mode = 0; mode < 2; mode++) {
		char cmd[PATH_MAX + 128];
		char *argv[] = {py, "-c", cmd, NULL};
		int st;

		opts[2] = mode ? "--no-stop" : NULL;
		run_follow_opts(&r, opts, missing, 3 * tl.timeout_ms);
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 127) {
			dump_run(&r);
			fail_msg("a missing command%s: wait status 0x%x, expected exit 127",
				 mode ? " --no-stop" : "", r.status);
		}
		free_run(&r);
		snprintf(cmd, sizeof(cmd), "import json; json.load(open('%s'))", file);
		st = tl_reap(tl_spawn(argv, NULL, -1, NULL));
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail_msg("-o after a missing command%s is not valid JSON",
				 mode ? " --no-stop" : "");
		unlink(file);
	}
	rmdir(dir);
}

/* Has @pid an fd open on @path? */
static int has_fd_on(pid_t pid, const char *path)
{
	char dirp[64], fdp[384], target[PATH_MAX];
	struct dirent *d;
	ssize_t n;
	int found = 0;
	DIR *dir;

	snprintf(dirp, sizeof(dirp), "/proc/%d/fd", pid);
	dir = opendir(dirp);
	while (dir && !found && (d = readdir(dir))) {
		snprintf(fdp, sizeof(fdp), "%s/%s", dirp, d->d_name);
		n = readlink(fdp, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			found = !strcmp(target, path);
		}
	}
	if (dir)
		closedir(dir);
	return found;
}

/*
 * Runs @argv under ptrace, stopping at each syscall entry and exit, until
 * it has an fd on @path: the return of its open(2) of @path.  There it is
 * sent @sig and let go; returns its wait status.
 */
static int signal_at_open(char *const *argv, const char *path, int sig)
{
	char **env = tl_env_build(NULL);
	int st, null_fd, deliver = 0;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		null_fd = open("/dev/null", O_WRONLY);
		dup2(null_fd, 1);
		dup2(null_fd, 2);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execve(argv[0], argv, env);
		_exit(127);
	}
	free(env);
	tl_track_pid(pid);
	/* the SIGTRAP of its execve */
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		fail_msg("%s under ptrace: wait status 0x%x at its exec", argv[0], st);
	ptrace(PTRACE_SETOPTIONS, pid, NULL,
	       (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)deliver) ||
		    waitpid(pid, &st, 0) != pid)
			fail_msg("ptrace/waitpid of %d: %s", pid, strerror(errno));
		if (!WIFSTOPPED(st))
			fail_msg("%s ended (wait status 0x%x) before opening %s", argv[0], st,
				 path);
		/* a signal of its own is delivered as it is resumed */
		deliver = WSTOPSIG(st) == (SIGTRAP | 0x80) ? 0 : WSTOPSIG(st);
		if (!deliver && has_fd_on(pid, path))
			break;
	}
	/* pending while it is stopped: taken as it returns from open(2) */
	kill(pid, sig);
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL))
		fail_msg("PTRACE_DETACH %d: %s", pid, strerror(errno));
	return tl_reap(pid);
}

/*
 * BUG (fixed): a signal that came right after tnfctl-follow had made its -o
 * file, before its handlers were installed, killed it there, leaving an
 * empty file (an existing one truncated).  Now the handlers come first, and
 * a signal that comes before the tree is started ends tnfctl-follow with no
 * output: the file it made is removed, an existing one is left as it was
 * (truncated only when the tree starts); with CMD by that signal, with -p
 * with 128+N.  The instant is exact: tnfctl-follow is stopped by ptrace at
 * the return of its open(2) of -o, signalled there, then let go.
 */
static void test_follow_signal_before_start(void **state)
{
	static const char keep[] = "an earlier run's events\n";
	char dir[] = "/tmp/tl-follow-early-XXXXXX", rdir[PATH_MAX], file[PATH_MAX + 16];
	char opt[PATH_MAX + 32], pidarg[16], buf[64];
	char *argv[] = {tl.follow, NULL, opt, "--", "/bin/true", NULL, NULL};
	int mode, existing, st, fd, sig;
	pid_t idle;
	ssize_t n;

	(void)state;
	tl_require_root();
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(dir, rdir));
	snprintf(file, sizeof(file), "%s/out", rdir);
	snprintf(opt, sizeof(opt), "--output=%s", file);
	/* -p: a process that is never attached to */
	idle = fork();
	if (idle == 0) {
		for (;;)
			pause();
	}
	tl_track_pid(idle);
	snprintf(pidarg, sizeof(pidarg), "%d", idle);
	for (mode = 0; mode < 3; mode++)
		for (existing = 0; existing < 2; existing++) {
			const char *what = mode == 0   ? "-- CMD"
					   : mode == 1 ? "--no-stop -- CMD"
						       : "-p PID";

			sig = existing ? SIGINT : SIGTERM;
			argv[1] = mode == 1 ? "--no-stop" : "--format=json";
			if (mode == 2) {
				argv[3] = "-p";
				argv[4] = pidarg;
			} else {
				argv[3] = "--";
				argv[4] = "/bin/true";
			}
			unlink(file);
			if (existing) {
				fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
				assert_true(fd >= 0);
				assert_int_equal(write(fd, keep, strlen(keep)),
						 (ssize_t)strlen(keep));
				close(fd);
			}
			st = signal_at_open(argv, file, sig);
			if (mode == 2 ? !WIFEXITED(st) || WEXITSTATUS(st) != 128 + sig
				      : !WIFSIGNALED(st) || WTERMSIG(st) != sig)
				fail_msg("%s, signal %d at the open of %s -o: wait status 0x%x, "
					 "expected %s %d",
					 what, sig, existing ? "an existing" : "a new", st,
					 mode == 2 ? "exit" : "signal",
					 mode == 2 ? 128 + sig : sig);
			if (!existing) {
				if (!access(file, F_OK))
					fail_msg("%s, signal before the tree: the -o file "
						 "it created is left behind",
						 what);
				continue;
			}
			fd = open(file, O_RDONLY | O_CLOEXEC);
			assert_true(fd >= 0);
			n = read(fd, buf, sizeof(buf));
			close(fd);
			if (n != (ssize_t)strlen(keep) || memcmp(buf, keep, n))
				fail_msg("%s, signal before the tree: the existing -o file was "
					 "changed (%zd bytes)",
					 what, n);
		}
	kill(idle, SIGKILL);
	tl_reap(idle);
	unlink(file);
	rmdir(dir);
}

/* Checks that no process of our subtree is stopped or traced; describes offenders. */
static int check_tree_free(char *msg, size_t size)
{
	struct tl_pinfo *ps;
	int i, n, bad = 0;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++) {
		pid_t tids[TL_MAX_TASKS];
		int j, nt, ok = 1;

		if (ps[i].state == 'Z' || ps[i].state == 'X')
			continue;
		nt = tl_tasks(ps[i].pid, tids, TL_MAX_TASKS);
		for (j = 0; j < nt; j++) {
			char st = tl_task_state(ps[i].pid, tids[j]);
			long tr = tl_task_status_field(ps[i].pid, tids[j], "TracerPid:");

			if (st == 't' || st == 'T' || tr > 0)
				ok = 0;
		}
		if (!ok) {
			char desc[1024];
			size_t off = strlen(msg);

			bad++;
			if (off + 2 < size)
				snprintf(msg + off, size - off, "%s%s", off ? "; " : "",
					 tl_describe(ps[i].pid, desc, sizeof(desc)));
		}
	}
	free(ps);
	return bad;
}

/* Waits for every live process named @comm in the subtree to die. */
static int wait_comm_dead(const char *comm, int timeout_ms)
{
	struct tl_pinfo *ps;
	int i, n, alive = 0;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++) {
		int fd;

		if (strcmp(ps[i].comm, comm) || ps[i].state == 'Z')
			continue;
		fd = tl_pidfd_open(ps[i].pid);
		if (fd >= 0 && tl_pidfd_wait(fd, timeout_ms))
			alive++;
		if (fd >= 0)
			close(fd);
	}
	free(ps);
	return alive;
}

/*
 * An engine that cannot be started or ends at once (a wrong TNFCTL_ENGINE,
 * an installation without it): the open fails, tnfctl-follow exits 1, and
 * the library's line on stderr names the engine's path and the reason;
 * nothing is left behind.
 */
static void test_follow_engine_missing(void **state)
{
	static const char *const scripts[] = {"#!/bin/sh\nexec sleep 600\n",
					      "#!/bin/sh\nprintf x >&3\nexec sleep 600\n"};
	char dir[] = "/tmp/tl-engine-XXXXXX", silent[64], babble[64];
	char *made[] = {silent, babble};
	const struct {
		const char *engine, *why;
	} cases[] = {
		{"/nonexistent/tnfctl-engine", "cannot be started: No such file or directory"},
		{"/etc/passwd", "cannot be started: Permission denied"},
		{"/bin/false", "ended before its first reply"},
		/* programs written below: one that says nothing, one that says nonsense */
		{silent, "did not answer in time"},
		{babble, "is not a tnfctl-engine"},
	};
	char *args[] = {"/bin/true", NULL};
	char *saved = getenv("TNFCTL_ENGINE") ? strdup(getenv("TNFCTL_ENGINE")) : NULL;
	char want[256];
	struct follow_run r;
	unsigned i;
	int fd;

	(void)state;
	tl_require_root();
	assert_non_null(mkdtemp(dir));
	snprintf(silent, sizeof(silent), "%s/silent", dir);
	snprintf(babble, sizeof(babble), "%s/babble", dir);
	for (i = 0; i < 2; i++) {
		fd = open(made[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
		assert_true(fd >= 0);
		assert_int_equal(tl_write_all(fd, scripts[i], strlen(scripts[i])), 0);
		close(fd);
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* only this thread reads the environment meanwhile */
		setenv("TNFCTL_ENGINE", cases[i].engine, 1);
		/* the silent one's wait, not a sleep (nothing answers in it); others: 30 s */
		if (cases[i].engine == silent)
			setenv("TNFCTL_ENGINE_TIMEOUT", "1", 1);
		run_follow(&r, args, tl.timeout_ms);
		unsetenv("TNFCTL_ENGINE_TIMEOUT");
		if (saved)
			setenv("TNFCTL_ENGINE", saved, 1);
		else
			unsetenv("TNFCTL_ENGINE");
		snprintf(want, sizeof(want), "libtnfctl: the engine %s %s", cases[i].engine,
			 cases[i].why);
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 1 || !r.text ||
		    !strstr(r.text, want))
			fail_msg("TNFCTL_ENGINE=%s: status 0x%x, wanted \"%s\" in:\n%s",
				 cases[i].engine, r.status, want, r.text ? r.text : "");
		assert_int_equal(r.nev, 0);
		free_run(&r);
	}
	unlink(silent);
	unlink(babble);
	rmdir(dir);
	free(saved);
}
/*
 * tnfctl-follow SIGKILLed at random moments while following a busy bash
 * loop: once its tnfctl-engine has exited, nothing of the tree is stopped
 * or traced, and the exec_open'd bash is dead.
 */
/* @argv spawned as @p, its output (stdout and stderr) on p's reply pipe. */
static void spawn_read_output(struct tl_proc *p, char *const *argv)
{
	int out[2];
	char **env;

	tl_proc_handed_over(p);
	if (pipe2(out, O_CLOEXEC))
		abort();
	close(p->reply_r);
	p->reply_r = out[0];
	env = tl_env_build(NULL);
	p->pid = tl_spawn(argv, env, out[1], NULL);
	free(env);
	close(out[1]);
}

/*
 * --no-stop whose engine is killed: tnfctl-follow says so and exits 1
 * (control lost) at once, rather than the command's status at its end;
 * the command runs on.
 */
static void test_follow_no_stop_engine_killed(void **state)
{
	char *argv[] = {tl.follow, "--no-stop", "--",
			"/bin/sh", "-c",	"echo started; exec sleep 600",
			NULL};
	struct tl_proc *p = tl_proc_new();
	struct tl_pinfo *ps;
	pid_t engine = -1;
	int n, i, st;
	int said = 0;
	const char *line;

	(void)state;
	tl_require_root();
	tl_require_watch();
	spawn_read_output(p, argv);
	while ((line = tl_read_line(p, tl.timeout_ms)) && !strstr(line, "started"))
		;
	assert_non_null(line);
	/* the one engine among our descendants: tnfctl-follow's (tests' engines do not linger) */
	n = tl_subtree(&ps);
	for (i = 0; i < n; i++)
		if (!strcmp(ps[i].comm, "tnfctl-engine")) {
			if (engine > 0)
				fail_msg("two tnfctl-engines: %d and %d", engine, ps[i].pid);
			engine = ps[i].pid;
		}
	free(ps);
	if (engine < 0)
		fail_msg("no tnfctl-engine under tnfctl-follow %d", p->pid);
	kill(engine, SIGKILL);
	while ((line = tl_read_line(p, tl.timeout_ms)))
		said |= strstr(line, "the engine (tnfctl-engine) ended; no longer followed") !=
			NULL;
	st = tl_reap(p->pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
		fail_msg("tnfctl-follow --no-stop: wait status 0x%x after its engine died, "
			 "expected exit 1",
			 st);
	assert_true(said);
	tl_kill_subtree(0);
	tl_reap_children();
}

static void test_follow_killed_at_random_moments(void **state)
{
	char *argv[] = {
		tl.follow, "--", "bash", "-c", "while :; do /bin/true; sh -c \"exit 0\"; done",
		NULL};
	unsigned int seed = tl_env_int("TL_SEED", (int)(time(NULL) ^ getpid()));
	char msg[8192];
	int run, runs = tl_env_int("TL_FOLLOW_RUNS", 20);

	(void)state;
	tl_require_root();
	tl_watchdog_extend(40 + runs * 12);
	print_message("random kills: seed %u (set TL_SEED to repeat)\n", seed);
	for (run = 0; run < runs; run++) {
		struct tl_proc *p = tl_proc_new();
		int want = 1 + rand_r(&seed) % 40, got = 0, bad, stalled, ntracers;

		spawn_read_output(p, argv);
		while (got < want && tl_read_line(p, tl.timeout_ms))
			got++;
		/* a stalled follower is a failure too, but check the kill first */
		stalled = got < want;
		/* its tracer helper exists (whoever is its parent) */
		tl_wait_tracers_gone(0, &ntracers);
		if (!ntracers && got)
			fail_msg("run %d: tnfctl-follow printed events, no tnfctl-engine found",
				 run);
		/* no controller is left once it is dead: every tracer must go */
		kill(p->pid, SIGKILL);
		tl_reap(p->pid);
		if (tl_wait_tracers_gone(tl.timeout_ms, NULL))
			fail_msg(
				"run %d (seed %u, killed after %d lines): a tnfctl-engine is alive "
				"%d ms after tnfctl-follow died",
				run, seed, want, tl.timeout_ms);
		tl_reap_children();

		msg[0] = '\0';
		bad = check_tree_free(msg, sizeof(msg));
		if (bad)
			fail_msg("run %d (seed %u, killed after %d lines): %d process(es) "
				 "stopped or traced after the tracer exited: %s",
				 run, seed, want, bad, msg);
		if (wait_comm_dead("bash", tl.timeout_ms))
			fail_msg("run %d (seed %u): the exec_open'd bash outlived its controller",
				 run, seed);
		tl_kill_subtree(0);
		if (tl_sweep(tl.timeout_ms, msg, sizeof(msg)))
			fail_msg("run %d: the tree did not go away after SIGKILL: %s", run, msg);
		tl_proc_close_fds(p);
		p->used = 0;
		if (stalled)
			fail_msg("run %d (seed %u): tnfctl-follow stalled: %d lines in %d ms, "
				 "waited for %d (the tree was clean after its SIGKILL)",
				 run, seed, got, tl.timeout_ms, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_follow_bash_tree),
		TL_TEST(test_follow_tnfdemo),
		TL_TEST(test_follow_python_ctypes),
		TL_TEST(test_follow_no_stop_releases_nothing),
		TL_TEST(test_follow_under_another_tracer),
		TL_TEST(test_follow_cannot_run_no_event),
		TL_TEST(test_follow_message_one_write),
		TL_TEST(test_follow_no_stop_engine_killed),
		TL_TEST(test_follow_exit_status),
		TL_TEST(test_follow_many_live_processes),
		TL_TEST(test_follow_live_processes_hard_limit),
		TL_TEST(test_follow_json_tree),
		TL_TEST(test_follow_ndjson_streams),
		TL_TEST(test_follow_merge_with_probes),
		TL_TEST(test_follow_output_links),
		TL_TEST(test_follow_output_errors),
		TL_TEST(test_follow_signal_before_start),
		TL_TEST(test_follow_reader_leaves),
		TL_TEST(test_follow_timeline_bad_input),
		TL_TEST(test_follow_engine_missing),
		TL_TEST(test_follow_killed_at_random_moments),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
