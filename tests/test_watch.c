// SPDX-License-Identifier: BSD-2-Clause
/*
 * Passive tree watching (tnfctl_watch_*): exact events on trees of known
 * shape, checked against what the workload itself logs (its pids, tids and
 * exit statuses), never against the library.  The workloads are this binary
 * run as `test_watch --wl KIND ARGS...`, so their shape is in this file.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <grp.h>
#include <stdbool.h>
#include <linux/capability.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include "testlib.h"
#include "englib.h"

/* ------------------------------------------------------------------ */
/* workloads (run in the watched processes) */

static void wl_log(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write on an O_APPEND file or a pipe: lines never mix. */
	if (n > 0 && write(fd, buf, n) != n)
		_exit(101);
}

static int wl_open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd < 0)
		_exit(102);
	return fd;
}

/*
 * bomb N LOG: a binary tree of N processes; process k forks 2k+1 and 2k+2
 * (those below N), logs "k pid ppid", waits for its children and exits
 * with k % 200.
 */
static int wl_bomb(int n, const char *log)
{
	int fd = wl_open_log(log), k = 0, i, nk, st;
	pid_t kids[2], p;

again:
	wl_log(fd, "%d %d %d\n", k, getpid(), getppid());
	nk = 0;
	for (i = 1; i <= 2 && 2 * k + i < n; i++) {
		p = fork();
		if (p == 0) {
			k = 2 * k + i;
			goto again;
		}
		if (p < 0)
			_exit(100);
		kids[nk++] = p;
	}
	for (i = 0; i < nk; i++)
		while (waitpid(kids[i], &st, 0) < 0 && errno == EINTR)
			;
	_exit(k % 200);
}

struct wl_thr {
	int fd, forks;
};

static void *wl_forker(void *arg)
{
	struct wl_thr *t = arg;
	int j, st;
	pid_t p;

	for (j = 0; j < t->forks; j++) {
		p = fork();
		if (p == 0)
			_exit(7);
		if (p < 0)
			_exit(100);
		wl_log(t->fd, "fork %d %d\n", (int)syscall(SYS_gettid), p);
		waitpid(p, &st, 0);
	}
	return NULL;
}

/* threads T F LOG: T threads each fork F children that exit 7. */
static int wl_threads(int nt, int nf, const char *log)
{
	struct wl_thr t = {wl_open_log(log), nf};
	pthread_t th[16];
	int i;

	for (i = 0; i < nt && i < 16; i++)
		if (pthread_create(&th[i], NULL, wl_forker, &t))
			_exit(100);
	for (i = 0; i < nt && i < 16; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static void *wl_exec_thread(void *arg)
{
	int fd = *(int *)arg;

	wl_log(fd, "exec %d %d\n", (int)syscall(SYS_gettid), getpid());
	execl("/bin/true", "/bin/true", (char *)NULL);
	_exit(99);
}

/*
 * dl LIB: dlopen LIB, then dlclose it.  It ends with _exit, as the other
 * workloads do: returning from main would run LeakSanitizer's exit-time
 * check under make check SANITIZE=1, which clones a task and, under the
 * stopping mode's ptrace, fails (exit status 1).
 */
static int wl_dl(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);

	_exit(h && !dlclose(h) ? 0 : 1);
}

/* thread_exec LOG: a non-leader thread execs /bin/true. */
static int wl_thread_exec(const char *log)
{
	static int fd;
	pthread_t th;

	fd = wl_open_log(log);
	if (pthread_create(&th, NULL, wl_exec_thread, &fd))
		_exit(100);
	for (;;)
		pause();
}

/*
 * tree REPLYFD GOFD: the root forks A and B, A forks A1; each says "ready
 * pid ppid", waits for EOF on GOFD, then forks a child that exits 3, says
 * "forked pid child", reaps its children and exits 0.
 */
static int wl_tree(int reply, int go)
{
	int st, depth = 0;
	char c;
	pid_t p, x;

	p = fork(); /* A */
	if (p == 0) {
		depth = 1;
		p = fork(); /* A1 */
		if (p == 0)
			depth = 2;
	} else if (p > 0) {
		p = fork(); /* B */
		if (p == 0)
			depth = 1;
	}
	if (p < 0)
		_exit(100);
	(void)depth;
	wl_log(reply, "ready %d %d\n", getpid(), getppid());
	while (read(go, &c, 1) > 0 || errno == EINTR)
		;
	x = fork();
	if (x == 0)
		_exit(3);
	if (x < 0)
		_exit(100);
	waitpid(x, &st, 0);
	wl_log(reply, "forked %d %d\n", getpid(), x);
	while (waitpid(-1, &st, 0) > 0 || errno == EINTR)
		;
	_exit(0);
}

/*
 * nest FIFO LOG N: a child that waits for a byte on FIFO, then runs a bomb
 * of N (logged to LOG) under it; the root waits for it.
 */
static int wl_nest(const char *fifo, const char *log, int n)
{
	pid_t c = fork();
	int st = 0, fd;
	char b;

	if (c < 0)
		_exit(3);
	if (c == 0) {
		fd = open(fifo, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || read(fd, &b, 1) != 1)
			_exit(4);
		close(fd);
		wl_bomb(n, log);
	}
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	/* _exit: a sanitizer's leak check at exit would fork a process of its own */
	_exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 5);
}

/* watcher PID: a watch on PID, "watching" on stdout, then nothing until killed. */
static int wl_watcher(pid_t pid)
{
	tnfctl_watch_t *w;

	if (tnfctl_watch_open(pid, 0, &w) != TNFCTL_ERR_NONE)
		return 3;
	printf("watching\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int workload(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[0], "nest"))
		return wl_nest(argv[1], argv[2], atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[0], "watcher"))
		return wl_watcher(atoi(argv[1]));
	if (argc == 3 && !strcmp(argv[0], "bomb"))
		return wl_bomb(atoi(argv[1]), argv[2]);
	if (argc == 4 && !strcmp(argv[0], "threads"))
		return wl_threads(atoi(argv[1]), atoi(argv[2]), argv[3]);
	if (argc == 2 && !strcmp(argv[0], "thread_exec"))
		return wl_thread_exec(argv[1]);
	if (argc == 2 && !strcmp(argv[0], "dl"))
		return wl_dl(argv[1]);
	if (argc == 3 && !strcmp(argv[0], "tree"))
		return wl_tree(atoi(argv[1]), atoi(argv[2]));
	return 2;
}

/* ------------------------------------------------------------------ */
/* the test side */

static char self_exe[PATH_MAX];
static tnfctl_watch_t *open_watches[16];
static int nfds_at_setup;

/*
 * Descriptors a watch may leave behind: BPF maps, programs and links, perf
 * events, epoll and timer fds.  (Pipes are left out: testlib's waitpid
 * helper closes its own from a detached thread, a little later.)
 */
static int count_fds(const char *what)
{
	char path[300], target[128];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	ssize_t len;
	int n = 0;

	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (!strncmp(target, "anon_inode:", 11) && !strstr(target, "pidfd") &&
		    strstr(target, what))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

static int w_setup(void **state)
{
	nfds_at_setup = count_fds("");
	return tl_setup(state);
}

static void w_track(tnfctl_watch_t *w)
{
	size_t i;

	for (i = 0; i < sizeof(open_watches) / sizeof(open_watches[0]); i++)
		if (!open_watches[i]) {
			open_watches[i] = w;
			return;
		}
	abort();
}

static void w_close(tnfctl_watch_t *w)
{
	size_t i;

	for (i = 0; i < sizeof(open_watches) / sizeof(open_watches[0]); i++)
		if (open_watches[i] == w)
			open_watches[i] = NULL;
	tnfctl_watch_close(w);
}

/* Closes what a failed test left open, then requires every fd and link back. */
static int w_teardown(void **state)
{
	size_t i;
	int ret, n;

	for (i = 0; i < sizeof(open_watches) / sizeof(open_watches[0]); i++)
		if (open_watches[i]) {
			tnfctl_watch_close(open_watches[i]);
			open_watches[i] = NULL;
		}
	ret = tl_teardown(state);
	n = count_fds("");
	if (n != nfds_at_setup) {
		print_error("ERROR: %d BPF, perf, epoll or timer descriptors open after the "
			    "test, %d before\n",
			    n, nfds_at_setup);
		ret = -1;
	}
	if (count_fds("bpf_link") || count_fds("bpf-link")) {
		print_error("ERROR: BPF links left open\n");
		ret = -1;
	}
	return ret;
}

#define W_TEST(fn) cmocka_unit_test_setup_teardown(fn, w_setup, w_teardown)

/* A copy of an event, small enough to keep thousands. */
struct wev {
	tnfctl_watch_kind_t kind;
	pid_t pid, tid, ppid, child;
	int status, sig;
	uint64_t seq, lost, untracked;
	char path[256];
	char argv0[128];
};

struct wevs {
	struct wev *v;
	int n, cap;
	int count[TNFCTL_WATCH_END + 1];
};

static const char *kind_name(int k)
{
	static const char *const names[] = {"?",      "FORK",	 "EXEC", "EXIT",
					    "DLOPEN", "DLCLOSE", "LOST", "END"};

	return k >= 0 && k <= TNFCTL_WATCH_END ? names[k] : "?";
}

/* Reads events up to END (not stored); fails on a timeout or an error. */
static void collect(tnfctl_watch_t *w, struct wevs *out)
{
	tnfctl_watch_event_t ev;
	struct wev *e;
	int r;

	memset(out, 0, sizeof(*out));
	for (;;) {
		r = tnfctl_watch_next(w, &ev, tl.timeout_ms);
		if (r <= 0)
			fail_msg("tnfctl_watch_next returned %d after %d events (no END)", r,
				 out->n);
		if (ev.kind < TNFCTL_WATCH_FORK || ev.kind > TNFCTL_WATCH_END)
			fail_msg("unknown event kind %d", ev.kind);
		out->count[ev.kind]++;
		if (ev.kind == TNFCTL_WATCH_END)
			return;
		if (out->n == out->cap) {
			out->cap = out->cap ? 2 * out->cap : 256;
			out->v = realloc(out->v, out->cap * sizeof(*out->v));
			assert_non_null(out->v);
		}
		e = &out->v[out->n++];
		e->kind = ev.kind;
		e->pid = ev.pid;
		e->tid = ev.tid;
		e->ppid = ev.ppid;
		e->child = ev.child_pid;
		e->status = ev.exit_status;
		e->sig = ev.term_signal;
		e->seq = ev.seq;
		e->lost = ev.lost;
		e->untracked = ev.untracked;
		snprintf(e->path, sizeof(e->path), "%.255s", ev.path);
		snprintf(e->argv0, sizeof(e->argv0), "%.127s", ev.argv0);
	}
}

static void dump(const struct wevs *ev)
{
	int i;

	for (i = 0; i < ev->n && i < 40; i++)
		print_message("  %s pid %d tid %d child %d status %d path %s\n",
			      kind_name(ev->v[i].kind), ev->v[i].pid, ev->v[i].tid, ev->v[i].child,
			      ev->v[i].status, ev->v[i].path);
}

static void expect_counts(const struct wevs *ev, int forks, int execs, int exits, int dl)
{
	if (ev->count[TNFCTL_WATCH_FORK] != forks || ev->count[TNFCTL_WATCH_EXEC] != execs ||
	    ev->count[TNFCTL_WATCH_EXIT] != exits ||
	    ev->count[TNFCTL_WATCH_DLOPEN] + ev->count[TNFCTL_WATCH_DLCLOSE] != dl ||
	    ev->count[TNFCTL_WATCH_LOST]) {
		dump(ev);
		fail_msg("got %d FORK, %d EXEC, %d EXIT, %d DLOPEN, %d DLCLOSE, %d LOST; "
			 "expected %d, %d, %d, %d DL, 0",
			 ev->count[TNFCTL_WATCH_FORK], ev->count[TNFCTL_WATCH_EXEC],
			 ev->count[TNFCTL_WATCH_EXIT], ev->count[TNFCTL_WATCH_DLOPEN],
			 ev->count[TNFCTL_WATCH_DLCLOSE], ev->count[TNFCTL_WATCH_LOST], forks,
			 execs, exits, dl);
	}
}

/* Index of the event of @kind for @pid (the @nth one), -1 if none. */
static int find(const struct wevs *ev, tnfctl_watch_kind_t kind, pid_t pid, int nth)
{
	int i;

	for (i = 0; i < ev->n; i++)
		if (ev->v[i].kind == kind && ev->v[i].pid == pid && nth-- == 0)
			return i;
	return -1;
}

static int find_fork_of(const struct wevs *ev, pid_t child)
{
	int i;

	for (i = 0; i < ev->n; i++)
		if (ev->v[i].kind == TNFCTL_WATCH_FORK && ev->v[i].child == child)
			return i;
	return -1;
}

/* A fresh, empty log file; @path gets its name (removed by log_done). */
static void log_new(char *path)
{
	int fd;

	strcpy(path, "/tmp/tl_watch_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

static char *log_read(const char *path)
{
	static char buf[1 << 20];

	assert_true(tl_read_file(path, buf, sizeof(buf)) >= 0);
	return buf;
}

struct bomb_proc {
	int k;
	pid_t pid, ppid;
};

/* The "k pid ppid" lines of a bomb log, by k; returns how many. */
static int bomb_parse(const char *path, struct bomb_proc *bp, int n)
{
	char *s = log_read(path), *line, *save = NULL;
	int cnt = 0, k, pid, ppid;

	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%d %d %d", &k, &pid, &ppid) != 3 || k < 0 || k >= n)
			fail_msg("bad log line \"%s\"", line);
		bp[k] = (struct bomb_proc){k, pid, ppid};
		cnt++;
	}
	return cnt;
}

static pid_t watch_exec_self_opts(char **argv, const struct tnfctl_watch_opts *opts,
				  tnfctl_watch_t **w)
{
	tnfctl_errcode_t err;
	pid_t pid = -1;

	err = tnfctl_watch_exec_opts(self_exe, argv, NULL, opts, w, &pid);
	if (err != TNFCTL_ERR_NONE)
		fail_msg("tnfctl_watch_exec_opts: %s", tnfctl_strerror(err));
	w_track(*w);
	tl_track_pid(pid);
	return pid;
}

static pid_t watch_exec_self(char **argv, unsigned int flags, tnfctl_watch_t **w)
{
	TNFCTL_OPTS(tnfctl_watch_opts, opts, .flags = flags);

	return watch_exec_self_opts(argv, &opts, w);
}

/*
 * Checks a bomb of @n against its log: one EXEC (the root's), a FORK per
 * logged parent/child pair before anything the child does, an EXIT per
 * process with status k % 200, nothing else.
 */
static void check_bomb(const struct wevs *ev, const char *log, int n, pid_t root)
{
	struct bomb_proc *bp = calloc(n, sizeof(*bp));
	int k, f, x, i;

	assert_non_null(bp);
	assert_int_equal(bomb_parse(log, bp, n), n);
	assert_int_equal(bp[0].pid, root);
	expect_counts(ev, n - 1, 1, n, 0);
	assert_int_equal(ev->v[0].kind, TNFCTL_WATCH_EXEC);
	assert_int_equal(ev->v[0].pid, root);
	assert_string_equal(ev->v[0].path, self_exe);
	for (k = 0; k < n; k++) {
		x = find(ev, TNFCTL_WATCH_EXIT, bp[k].pid, 0);
		if (x < 0)
			fail_msg("no EXIT for process %d (pid %d)", k, bp[k].pid);
		assert_int_equal(ev->v[x].status, k % 200);
		assert_int_equal(ev->v[x].sig, 0);
		if (k == 0)
			continue;
		f = find_fork_of(ev, bp[k].pid);
		if (f < 0)
			fail_msg("no FORK of process %d (pid %d)", k, bp[k].pid);
		assert_int_equal(ev->v[f].pid, bp[k].ppid);
		assert_int_equal(ev->v[f].pid, bp[(k - 1) / 2].pid);
		assert_true(f < x);
		/* nothing of the child before its FORK */
		for (i = 0; i < f; i++)
			assert_int_not_equal(ev->v[i].pid, bp[k].pid);
	}
	free(bp);
}

/* 50 /bin/true from a shell loop: the shell logs each child's pid. */
static void test_shell_loop(void **state)
{
	char log[64], *argv[] = {"/bin/sh",
				 "-c",
				 "i=0; while [ $i -lt 50 ]; do /bin/true & echo $! >>\"$1\"; "
				 "wait $!; i=$((i+1)); done; exit 5",
				 "sh",
				 log,
				 NULL};
	char *s, *line, *save = NULL;
	tnfctl_watch_t *w;
	struct wevs ev;
	pid_t root, kids[50];
	int n = 0, i, f, e, x;

	(void)state;
	tl_require_root();
	tl_require_watch();
	log_new(log);
	if (tnfctl_watch_exec("/bin/sh", argv, NULL, 0, &w, &root) != TNFCTL_ERR_NONE)
		fail_msg("tnfctl_watch_exec failed");
	w_track(w);
	tl_track_pid(root);
	collect(w, &ev);
	assert_int_equal(tl_reap(root), 5 << 8);
	s = log_read(log);
	for (line = strtok_r(s, "\n", &save); line && n < 50; line = strtok_r(NULL, "\n", &save))
		kids[n++] = atoi(line);
	unlink(log);
	assert_int_equal(n, 50);
	/* the shell's own exec, then 50 x (FORK, EXEC, EXIT), then the shell's EXIT */
	expect_counts(&ev, 50, 51, 51, 0);
	assert_int_equal(ev.v[0].kind, TNFCTL_WATCH_EXEC);
	assert_int_equal(ev.v[0].pid, root);
	assert_string_equal(ev.v[0].path, "/bin/sh");
	for (i = 0; i < 50; i++) {
		f = find_fork_of(&ev, kids[i]);
		e = find(&ev, TNFCTL_WATCH_EXEC, kids[i], 0);
		x = find(&ev, TNFCTL_WATCH_EXIT, kids[i], 0);
		if (f < 0 || e < 0 || x < 0)
			fail_msg("child %d (pid %d): FORK %d EXEC %d EXIT %d", i, kids[i], f, e, x);
		assert_int_equal(ev.v[f].pid, root);
		assert_true(f < e && e < x);
		assert_string_equal(ev.v[e].path, "/bin/true");
		assert_string_equal(ev.v[e].argv0, "/bin/true");
		assert_int_equal(ev.v[e].ppid, root);
		assert_int_equal(ev.v[x].status, 0);
	}
	x = ev.n - 1;
	assert_int_equal(ev.v[x].kind, TNFCTL_WATCH_EXIT);
	assert_int_equal(ev.v[x].pid, root);
	assert_int_equal(ev.v[x].status, 5);
	assert_int_equal(ev.v[x].ppid, getpid());
	assert_int_equal(tnfctl_watch_lost(w), 0);
	/* END again, at once */
	{
		tnfctl_watch_event_t e2;

		assert_int_equal(tnfctl_watch_next(w, &e2, -1), 1);
		assert_int_equal(e2.kind, TNFCTL_WATCH_END);
	}
	free(ev.v);
	w_close(w);
}

/* A bounded fork bomb of 500 processes: every fork, every exit, exact statuses. */
static void test_fork_bomb(void **state)
{
	char log[64], n[] = "500", *argv[] = {self_exe, "--wl", "bomb", n, log, NULL};
	tnfctl_watch_t *w;
	struct wevs ev;
	pid_t root;

	(void)state;
	tl_require_root();
	tl_require_watch();
	log_new(log);
	root = watch_exec_self(argv, 0, &w);
	collect(w, &ev);
	assert_int_equal(tl_reap(root), 0);
	check_bomb(&ev, log, 500, root);
	unlink(log);
	assert_int_equal(tnfctl_watch_lost(w), 0);
	free(ev.v);
	w_close(w);
}

/* Threads that fork: each FORK names the thread that forked, from its own log line. */
static void test_threads_fork(void **state)
{
	char log[64], *argv[] = {self_exe, "--wl", "threads", "4", "5", log, NULL};
	char *s, *line, *save = NULL;
	tnfctl_watch_t *w;
	struct wevs ev;
	pid_t root;
	int n = 0, tid, child, f, x;

	(void)state;
	tl_require_root();
	tl_require_watch();
	log_new(log);
	root = watch_exec_self(argv, 0, &w);
	collect(w, &ev);
	assert_int_equal(tl_reap(root), 0);
	expect_counts(&ev, 20, 1, 21, 0);
	s = log_read(log);
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "fork %d %d", &tid, &child) != 2)
			fail_msg("bad log line \"%s\"", line);
		n++;
		f = find_fork_of(&ev, child);
		x = find(&ev, TNFCTL_WATCH_EXIT, child, 0);
		if (f < 0 || x < 0)
			fail_msg("child %d: FORK %d EXIT %d", child, f, x);
		assert_int_equal(ev.v[f].pid, root);
		assert_int_equal(ev.v[f].tid, tid);
		assert_int_not_equal(tid, root);
		assert_true(f < x);
		assert_int_equal(ev.v[x].status, 7);
		assert_int_equal(ev.v[x].ppid, root);
	}
	unlink(log);
	assert_int_equal(n, 20);
	/* the threads' own ends are not process exits: one EXIT for the root, last */
	assert_int_equal(find(&ev, TNFCTL_WATCH_EXIT, root, 1), -1);
	assert_int_equal(ev.v[ev.n - 1].pid, root);
	assert_int_equal(ev.v[ev.n - 1].kind, TNFCTL_WATCH_EXIT);
	free(ev.v);
	w_close(w);
}

/* Exec from a non-leader thread: one EXEC from that tid, no EXIT for the threads it ends. */
static void test_exec_from_thread(void **state)
{
	char log[64], *argv[] = {self_exe, "--wl", "thread_exec", log, NULL};
	tnfctl_watch_t *w;
	struct wevs ev;
	pid_t root;
	int tid, pid, e;

	(void)state;
	tl_require_root();
	tl_require_watch();
	log_new(log);
	root = watch_exec_self(argv, 0, &w);
	collect(w, &ev);
	assert_int_equal(tl_reap(root), 0);
	if (sscanf(log_read(log), "exec %d %d", &tid, &pid) != 2)
		fail_msg("bad log \"%s\"", log_read(log));
	unlink(log);
	assert_int_equal(pid, root);
	assert_int_not_equal(tid, root);
	expect_counts(&ev, 0, 2, 1, 0);
	assert_int_equal(ev.v[0].kind, TNFCTL_WATCH_EXEC);
	assert_int_equal(ev.v[0].tid, root);
	e = find(&ev, TNFCTL_WATCH_EXEC, root, 1);
	assert_int_equal(e, 1);
	assert_int_equal(ev.v[e].tid, tid);
	assert_string_equal(ev.v[e].path, "/bin/true");
	assert_string_equal(ev.v[e].argv0, "/bin/true");
	assert_int_equal(ev.v[2].kind, TNFCTL_WATCH_EXIT);
	assert_int_equal(ev.v[2].pid, root);
	assert_int_equal(ev.v[2].status, 0);
	free(ev.v);
	w_close(w);
}

/* dlopen/dlclose in a running tl_target, attached: exactly these and its EXIT. */
static void test_dlopen_dlclose(void **state)
{
	char plug[PATH_MAX];
	tnfctl_watch_t *w;
	struct tl_proc *p;
	struct wevs ev;

	(void)state;
	tl_require_root();
	tl_require_watch();
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	p = tl_start_target(tl.target, 0);
	assert_int_equal(tnfctl_watch_open(p->pid, TNFCTL_WATCH_DL, &w), TNFCTL_ERR_NONE);
	w_track(w);
	tl_send(p, "dlopen %s", plug);
	tl_expect(p, "dlopen ok");
	tl_send(p, "dlopen /nonexistent/libnothing.so");
	tl_expect(p, "dlopen fail");
	tl_send(p, "dlclose");
	tl_expect(p, "dlclose 0");
	tl_send(p, "exit 4");
	collect(w, &ev);
	assert_int_equal(WEXITSTATUS(tl_reap(p->pid)), 4);
	expect_counts(&ev, 0, 0, 1, 2);
	assert_int_equal(ev.v[0].kind, TNFCTL_WATCH_DLOPEN);
	assert_int_equal(ev.v[0].pid, p->pid);
	assert_int_equal(ev.v[0].tid, p->pid);
	assert_string_equal(ev.v[0].path, plug);
	assert_int_equal(ev.v[1].kind, TNFCTL_WATCH_DLCLOSE);
	assert_string_equal(ev.v[1].path, plug);
	assert_int_equal(ev.v[2].kind, TNFCTL_WATCH_EXIT);
	assert_int_equal(ev.v[2].status, 4);
	free(ev.v);
	w_close(w);
}

/*
 * The rule, as in the stopping mode (test_events' test_dlopen_rule_sequence):
 * dlopen(NULL), libbpf twice (its first brings libelf and libz), libc (loaded
 * already), four dlcloses: one DLOPEN "libbpf.so.1", one DLCLOSE at the
 * unload (the third dlclose), and the EXIT.
 */
static void test_dlopen_rule_sequence(void **state)
{
	static const char *const cmds[] = {
		"dlopen NULL",
		"dlopen libbpf.so.1",
		"dlopen libbpf.so.1",
		"dlopen libc.so.6",
		"dlclose",
		"dlclose",
		"dlclose",
		"dlclose",
	};
	tnfctl_watch_t *w;
	struct tl_proc *p;
	struct wevs ev;
	size_t i;

	(void)state;
	tl_require_root();
	tl_require_watch();
	p = tl_start_target(tl.target, 0);
	assert_int_equal(tnfctl_watch_open(p->pid, TNFCTL_WATCH_DL, &w), TNFCTL_ERR_NONE);
	w_track(w);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		tl_send(p, "%s", cmds[i]);
		tl_expect(p, i < 4 ? "dlopen ok" : "dlclose 0");
		/* the unload is the third dlclose: libbpf is mapped until then */
		if (i == 5 && !tl_maps_has(p->pid, "libbpf.so"))
			fail_msg("libbpf unloaded before its last dlclose");
	}
	if (tl_maps_has(p->pid, "libbpf.so"))
		fail_msg("libbpf still mapped after its last dlclose");
	tl_send(p, "exit 6");
	collect(w, &ev);
	assert_int_equal(WEXITSTATUS(tl_reap(p->pid)), 6);
	expect_counts(&ev, 0, 0, 1, 2);
	assert_int_equal(ev.v[0].kind, TNFCTL_WATCH_DLOPEN);
	assert_string_equal(ev.v[0].path, "libbpf.so.1");
	assert_int_equal(ev.v[1].kind, TNFCTL_WATCH_DLCLOSE);
	if (!strstr(ev.v[1].path, "libbpf.so.1"))
		fail_msg("DLCLOSE path \"%s\" does not name libbpf.so.1", ev.v[1].path);
	assert_int_equal(ev.v[2].kind, TNFCTL_WATCH_EXIT);
	assert_int_equal(ev.v[2].status, 6);
	free(ev.v);
	w_close(w);
}

/*
 * An object libc loads itself (iconv_open's gconv module): a DLOPEN named by
 * the object, as in the stopping mode (test_events' test_dlopen_by_libc).
 */
static void test_dlopen_by_libc(void **state)
{
	tnfctl_watch_t *w;
	struct tl_proc *p;
	struct wevs ev;
	char line[256];
	const char *l;

	(void)state;
	tl_require_root();
	tl_require_watch();
	p = tl_start_target(tl.target, 0);
	assert_int_equal(tnfctl_watch_open(p->pid, TNFCTL_WATCH_DL, &w), TNFCTL_ERR_NONE);
	w_track(w);
	/* its first RT_CONSISTENT seen: the map's tail is known from there */
	tl_send(p, "dlopen libz.so.1");
	tl_expect(p, "dlopen ok");
	tl_send(p, "iconv EBCDIC-US");
	l = tl_read_line(p, tl.timeout_ms);
	snprintf(line, sizeof(line), "%s", l ? l : "(no reply)");
	tl_send(p, "exit 0");
	collect(w, &ev);
	tl_reap(p->pid);
	if (strcmp(line, "iconv ok")) {
		print_message("skipped: iconv_open(EBCDIC-US): %s\n", line);
		free(ev.v);
		w_close(w);
		skip();
	}
	expect_counts(&ev, 0, 0, 1, 2);
	assert_string_equal(ev.v[0].path, "libz.so.1");
	assert_int_equal(ev.v[1].kind, TNFCTL_WATCH_DLOPEN);
	if (!strstr(ev.v[1].path, "/EBCDIC-US.so"))
		fail_msg("DLOPEN path \"%s\" is not the gconv module EBCDIC-US.so", ev.v[1].path);
	free(ev.v);
	w_close(w);
}

/* dlmopen(LM_ID_NEWLM) is reported as DLOPEN, its dlclose as DLCLOSE (issue 13). */
static void test_dlmopen_dlclose(void **state)
{
	char plug[PATH_MAX];
	tnfctl_watch_t *w;
	struct tl_proc *p;
	struct wevs ev;

	(void)state;
	tl_require_root();
	tl_require_watch();
	if (tl_env_int("SANITIZE", 0) == 1) {
		/* dlmopen loads a second ASan runtime in the new namespace: it aborts */
		print_message("skipped: the target is built with ASan, which cannot dlmopen\n");
		skip();
	}
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	p = tl_start_target(tl.target, 0);
	assert_int_equal(tnfctl_watch_open(p->pid, TNFCTL_WATCH_DL, &w), TNFCTL_ERR_NONE);
	w_track(w);
	tl_send(p, "dlmopen %s", plug);
	tl_expect(p, "dlmopen ok");
	tl_send(p, "dlclose");
	tl_expect(p, "dlclose 0");
	tl_send(p, "exit 5");
	collect(w, &ev);
	assert_int_equal(WEXITSTATUS(tl_reap(p->pid)), 5);
	expect_counts(&ev, 0, 0, 1, 2);
	assert_int_equal(ev.v[0].kind, TNFCTL_WATCH_DLOPEN);
	assert_int_equal(ev.v[0].pid, p->pid);
	assert_string_equal(ev.v[0].path, plug);
	assert_int_equal(ev.v[1].kind, TNFCTL_WATCH_DLCLOSE);
	assert_string_equal(ev.v[1].path, plug);
	assert_int_equal(ev.v[2].kind, TNFCTL_WATCH_EXIT);
	free(ev.v);
	w_close(w);
}

/* Without TNFCTL_WATCH_DL: no DL event, even in a process that dlopens. */
static void test_no_dl_without_flag(void **state)
{
	char plug[PATH_MAX];
	tnfctl_watch_t *w;
	struct tl_proc *p;
	struct wevs ev;

	(void)state;
	tl_require_root();
	tl_require_watch();
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	p = tl_start_target(tl.target, 0);
	assert_int_equal(tnfctl_watch_open(p->pid, 0, &w), TNFCTL_ERR_NONE);
	w_track(w);
	tl_send(p, "dlopen %s", plug);
	tl_expect(p, "dlopen ok");
	tl_send(p, "exit 0");
	collect(w, &ev);
	tl_reap(p->pid);
	expect_counts(&ev, 0, 0, 1, 0);
	free(ev.v);
	w_close(w);
}

static int read_line_fd(int fd, char *buf, size_t size)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	size_t n = 0;
	char c;

	while (n < size - 1) {
		if (poll(&pfd, 1, tl.timeout_ms) <= 0 || read(fd, &c, 1) != 1)
			return -1;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return 0;
}

/*
 * Attach to a running root with children and a grandchild: the descendants
 * found at open are watched as well as the root.
 */
static void test_descendants_at_open(void **state)
{
	int reply[2], go[2], i, f, x, k;
	char rfd[16], gfd[16], line[128], *argv[] = {self_exe, "--wl", "tree", rfd, gfd, NULL};
	pid_t pids[4], ppids[4], kids[4], root, a, b;
	int keep[3];
	tnfctl_watch_t *w;
	struct wevs ev;
	char **env;

	(void)state;
	tl_require_root();
	tl_require_watch();
	assert_int_equal(pipe2(reply, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	snprintf(rfd, sizeof(rfd), "%d", reply[1]);
	snprintf(gfd, sizeof(gfd), "%d", go[0]);
	keep[0] = reply[1];
	keep[1] = go[0];
	keep[2] = -1;
	env = tl_env_build(NULL);
	root = tl_spawn(argv, env, -1, keep);
	free(env);
	close(reply[1]);
	close(go[0]);
	for (i = 0; i < 4; i++) {
		if (read_line_fd(reply[0], line, sizeof(line)) ||
		    sscanf(line, "ready %d %d", &pids[i], &ppids[i]) != 2)
			fail_msg("no ready line from the tree (%d so far)", i);
	}
	assert_int_equal(tnfctl_watch_open(root, 0, &w), TNFCTL_ERR_NONE);
	w_track(w);
	close(go[1]); /* EOF: every process goes on */
	collect(w, &ev);
	for (i = 0; i < 4; i++) {
		if (read_line_fd(reply[0], line, sizeof(line)) ||
		    sscanf(line, "forked %d %d", &a, &b) != 2)
			fail_msg("no forked line from the tree (%d so far)", i);
		for (k = 0; k < 4 && pids[k] != a; k++)
			;
		assert_true(k < 4);
		kids[k] = b;
	}
	close(reply[0]);
	assert_int_equal(tl_reap(root), 0);
	expect_counts(&ev, 4, 0, 8, 0);
	for (i = 0; i < 4; i++) {
		f = find_fork_of(&ev, kids[i]);
		x = find(&ev, TNFCTL_WATCH_EXIT, kids[i], 0);
		assert_true(f >= 0 && x > f);
		assert_int_equal(ev.v[f].pid, pids[i]);
		assert_int_equal(ev.v[x].status, 3);
		x = find(&ev, TNFCTL_WATCH_EXIT, pids[i], 0);
		assert_true(x >= 0);
		assert_int_equal(ev.v[x].status, 0);
	}
	free(ev.v);
	w_close(w);
}

/*
 * A 4 KiB ring (the ring_size option; $TNFCTL_WATCH_RINGBUF in test_faults)
 * that nobody reads while 300 processes come and go: records are lost, and
 * every one of them is accounted for (LOST events, holes in seq,
 * tnfctl_watch_lost), never silently.
 */
static void test_lost_records_reported(void **state)
{
	char log[64], n[] = "300", *argv[] = {self_exe, "--wl", "bomb", n, log, NULL};
	TNFCTL_OPTS(tnfctl_watch_opts, opts, .ring_size = 4096);
	uint64_t lost = 0, maxseq = 0;
	tnfctl_watch_t *w;
	struct wevs ev;
	pid_t root;
	int i, delivered = 0, st;

	(void)state;
	tl_require_root();
	tl_require_watch();
	log_new(log);
	root = watch_exec_self_opts(argv, &opts, &w);
	/* The whole tree ends before a single record is read. */
	assert_int_equal(tl_waitpid_timeout(root, &st, 0, tl.timeout_ms), root);
	assert_int_equal(st, 0);
	collect(w, &ev);
	unlink(log);
	for (i = 0; i < ev.n; i++) {
		if (ev.v[i].kind == TNFCTL_WATCH_LOST) {
			lost += ev.v[i].lost;
			assert_int_equal(ev.v[i].untracked, 0);
			continue;
		}
		delivered++;
		if (ev.v[i].seq > maxseq)
			maxseq = ev.v[i].seq;
	}
	print_message("# %d records delivered, %llu lost\n", delivered, (unsigned long long)lost);
	assert_true(lost > 0);
	assert_true(ev.count[TNFCTL_WATCH_LOST] >= 1);
	/* 1 EXEC, 299 FORK, 300 EXIT */
	assert_int_equal(delivered + lost, 600);
	assert_true(maxseq < 600);
	assert_int_equal(tnfctl_watch_lost(w), lost);
	free(ev.v);
	w_close(w);
}

struct side_tree {
	char log[64], n[8];
	tnfctl_watch_t *w;
	pid_t root;
	struct wevs ev;
};

static void *collect_thread(void *arg)
{
	struct side_tree *t = arg;
	tnfctl_watch_event_t ev;
	struct wev *e;
	int r;

	/* collect() without cmocka (not on the test's thread) */
	memset(&t->ev, 0, sizeof(t->ev));
	while ((r = tnfctl_watch_next(t->w, &ev, tl.timeout_ms)) == 1 &&
	       ev.kind != TNFCTL_WATCH_END) {
		t->ev.count[ev.kind]++;
		if (t->ev.n == t->ev.cap) {
			t->ev.cap = t->ev.cap ? 2 * t->ev.cap : 256;
			t->ev.v = realloc(t->ev.v, t->ev.cap * sizeof(*t->ev.v));
			if (!t->ev.v)
				abort();
		}
		e = &t->ev.v[t->ev.n++];
		memset(e, 0, sizeof(*e));
		e->kind = ev.kind;
		e->pid = ev.pid;
		e->tid = ev.tid;
		e->ppid = ev.ppid;
		e->child = ev.child_pid;
		e->status = ev.exit_status;
		snprintf(e->path, sizeof(e->path), "%.255s", ev.path);
	}
	t->ev.count[TNFCTL_WATCH_END] = r == 1;
	return NULL;
}

static bool in_log(const struct bomb_proc *bp, int n, pid_t pid)
{
	int k;

	for (k = 0; k < n; k++)
		if (bp[k].pid == pid)
			return true;
	return false;
}

/*
 * Eight watched trees and an unwatched one run side by side, the eight
 * watches slots of the one BPF object of the engine: each watch sees
 * exactly its own tree (every FORK and EXIT of it, no pid of the others).
 */
#define SIDE_TREES 8
static void test_trees_side_by_side(void **state)
{
	struct side_tree t[SIDE_TREES];
	char clog[64], *cargv[] = {self_exe, "--wl", "bomb", "200", clog, NULL};
	struct bomb_proc *bp = calloc(200, sizeof(*bp)), *cp = calloc(200, sizeof(*cp));
	pthread_t th[SIDE_TREES];
	pid_t c;
	int i, j;
	char **env;

	(void)state;
	tl_require_root();
	tl_require_watch();
	assert_true(bp && cp);
	log_new(clog);
	for (i = 0; i < SIDE_TREES; i++) {
		char *argv[] = {self_exe, "--wl", "bomb", t[i].n, t[i].log, NULL};

		log_new(t[i].log);
		snprintf(t[i].n, sizeof(t[i].n), "200");
		t[i].root = watch_exec_self(argv, 0, &t[i].w);
		th[i] = tl_thread_start(collect_thread, &t[i]);
	}
	env = tl_env_build(NULL);
	c = tl_spawn(cargv, env, -1, NULL);
	free(env);
	for (i = 0; i < SIDE_TREES; i++)
		tl_thread_join(th[i]);
	assert_int_equal(tl_reap(c), 0);
	assert_int_equal(bomb_parse(clog, cp, 200), 200);
	unlink(clog);
	for (i = 0; i < SIDE_TREES; i++) {
		assert_int_equal(tl_reap(t[i].root), 0);
		if (!t[i].ev.count[TNFCTL_WATCH_END])
			fail_msg("watch %d: no END", i);
		check_bomb(&t[i].ev, t[i].log, 200, t[i].root);
		memset(bp, 0, 200 * sizeof(*bp));
		bomb_parse(t[i].log, bp, 200);
		unlink(t[i].log);
		for (j = 0; j < t[i].ev.n; j++) {
			const struct wev *e = &t[i].ev.v[j];

			if (!in_log(bp, 200, e->pid) ||
			    (e->kind == TNFCTL_WATCH_FORK && !in_log(bp, 200, e->child)))
				fail_msg("watch %d saw pid %d (child %d), not of its tree", i,
					 e->pid, e->child);
			assert_false(in_log(cp, 200, e->pid));
		}
		free(t[i].ev.v);
		w_close(t[i].w);
	}
	free(bp);
	free(cp);
}

/* Bad arguments; a process the caller may not trace is refused. */
static void test_errors_and_permission(void **state)
{
	tnfctl_watch_t *w = NULL;
	pid_t pid, gone;
	int st;

	(void)state;
	tl_require_root();
	tl_require_watch();
	assert_int_equal(tnfctl_watch_open(getpid(), 0, NULL), TNFCTL_ERR_BADARG);
	assert_int_equal(tnfctl_watch_open(getpid(), 0x80, &w), TNFCTL_ERR_BADARG);
	assert_int_equal(tnfctl_watch_open(0, 0, &w), TNFCTL_ERR_NOPROCESS);
	gone = fork();
	if (gone == 0)
		_exit(0);
	tl_track_pid(gone);
	tl_reap(gone);
	assert_int_equal(tnfctl_watch_open(gone, 0, &w), TNFCTL_ERR_NOPROCESS);
	assert_int_equal(tnfctl_watch_next(NULL, NULL, 0), -TNFCTL_ERR_BADARG);
	assert_int_equal(tnfctl_watch_fd(NULL), -1);
	tnfctl_watch_close(NULL);
	{
		char *argv[] = {"no-such-program-here", NULL};

		assert_int_equal(tnfctl_watch_exec(argv[0], argv, NULL, 0, &w, &pid),
				 TNFCTL_ERR_FILENOTFOUND);
	}
	/* nobody may not trace us (root): refused before any BPF */
	pid = fork();
	if (pid == 0) {
		tnfctl_errcode_t err;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(99);
		err = tnfctl_watch_open(getppid(), 0, &w);
		_exit(err);
	}
	tl_track_pid(pid);
	st = tl_reap(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), TNFCTL_ERR_ACCES);
}

/* tnfctl-follow --no-stop prints the tree's lines, as the stopping mode does. */
static void test_follow_no_stop(void **state)
{
	char out[64], buf[8192],
		*argv[] = {tl.follow, "--no-stop", "-o", out,
			   "--",      "/bin/sh",   "-c", "/bin/true; (exit 6); exit 3",
			   NULL};
	int forks = 0, execs = 0, exits = 0, st;
	char *line, *save = NULL, ev[16], rest[512];
	double ms;
	pid_t pid, p;
	char **env;

	(void)state;
	tl_require_root();
	tl_require_watch();
	log_new(out);
	env = tl_env_build(NULL);
	pid = tl_spawn(argv, env, -1, NULL);
	free(env);
	st = tl_reap(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	assert_true(tl_read_file(out, buf, sizeof(buf)) > 0);
	unlink(out);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		rest[0] = '\0';
		if (sscanf(line, "%lf %d %15s %511[^\n]", &ms, &p, ev, rest) < 3)
			fail_msg("bad line \"%s\"", line);
		forks += !strcmp(ev, "FORK") && !strncmp(rest, "child ", 6);
		/* "PATH: ARGV", the arguments as sh words */
		execs += !strcmp(ev, "EXEC") && !strcmp(rest, "/bin/true: /bin/true");
		exits += !strcmp(ev, "EXIT") && !strncmp(rest, "status ", 7);
		if (!strcmp(ev, "EXEC") && strcmp(rest, "/bin/true: /bin/true"))
			fail_msg("unexpected EXEC line \"%s\" (the root's own exec is not printed)",
				 line);
	}
	assert_int_equal(forks, 2);
	assert_int_equal(execs, 1);
	assert_int_equal(exits, 3);
}

/*
 * DLOPEN and DLCLOSE through either kind of uprobe link, in the watch and in
 * the stopping mode's helper: uprobe_multi where the kernel has it, perf
 * links otherwise (forced by TNFCTL_NO_UPROBE_MULTI, read once per process,
 * hence tnfctl-follow).
 */
static void test_dl_both_link_kinds(void **state)
{
	const char *no_multi[] = {"TNFCTL_NO_UPROBE_MULTI=1", NULL};
	char out[64], buf[8192], plug[PATH_MAX], want[PATH_MAX + 16], *argv[10];
	int kind, nostop, st, i;
	char **env;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_require_watch();
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	for (kind = 0; kind < 4; kind++) {
		nostop = kind & 1;
		i = 0;
		argv[i++] = tl.follow;
		if (nostop)
			argv[i++] = "--no-stop";
		argv[i++] = "-o";
		argv[i++] = out;
		argv[i++] = "--";
		argv[i++] = self_exe;
		argv[i++] = "--wl";
		argv[i++] = "dl";
		argv[i++] = plug;
		argv[i] = NULL;
		log_new(out);
		env = tl_env_build(kind & 2 ? no_multi : NULL);
		pid = tl_spawn(argv, env, -1, NULL);
		free(env);
		st = tl_reap(pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		assert_true(tl_read_file(out, buf, sizeof(buf)) > 0);
		unlink(out);
		snprintf(want, sizeof(want), " DLOPEN   %s\n", plug);
		if (!strstr(buf, want))
			fail_msg("%s, %s links: no \"%s\" in:\n%s",
				 nostop ? "--no-stop" : "stopping", kind & 2 ? "perf" : "multi",
				 want, buf);
		snprintf(want, sizeof(want), " DLCLOSE  %s\n", plug);
		if (!strstr(buf, want))
			fail_msg("%s, %s links: no \"%s\" in:\n%s",
				 nostop ? "--no-stop" : "stopping", kind & 2 ? "perf" : "multi",
				 want, buf);
	}
}

/*
 * The object for kernels without bpf_loop, atomic fetch, attach cookies or
 * bpf_get_current_task_btf (5.10), forced here by TNFCTL_WATCH_COMPAT (read
 * once per process, hence tnfctl-follow), gives what the object for new
 * kernels gives: the events of `tnfctl-follow --no-stop -- sh -c SCRIPT`
 * under each, their times dropped and their pids numbered in order of
 * appearance, are the same lines.  Where the kernel lacks one of those, both
 * runs load the compat object (nothing to compare, the lines are checked).
 */
static void follow_events(const char *script, bool compat, char *lines, size_t size)
{
	const char *force[] = {"TNFCTL_WATCH_COMPAT=1", NULL};
	char out[64], buf[16384], ev[16], rest[4096], *line, *save = NULL, *argv[9];
	char scope_was[128];
	const char *scope;
	pid_t pids[64], pid, p;
	int npids = 0, i, j, st, c;
	size_t n = 0;
	char **env;
	double ms;

	log_new(out);
	i = 0;
	argv[i++] = tl.follow;
	argv[i++] = "--no-stop";
	argv[i++] = "-o";
	argv[i++] = out;
	argv[i++] = "--";
	argv[i++] = "/bin/sh";
	argv[i++] = "-c";
	argv[i++] = (char *)script;
	argv[i] = NULL;
	/*
	 * An engine of its own: the engine reads TNFCTL_WATCH_COMPAT, and the
	 * normal run's engine may not have exited yet.
	 */
	scope = getenv("TNFCTL_ENGINE_SCOPE");
	snprintf(scope_was, sizeof(scope_was), "%s", scope ? scope : "");
	if (compat) {
		snprintf(rest, sizeof(rest), "%.56s.compat", scope_was);
		setenv("TNFCTL_ENGINE_SCOPE", rest, 1);
	}
	env = tl_env_build(compat ? force : NULL);
	pid = tl_spawn(argv, env, -1, NULL);
	free(env);
	if (scope)
		setenv("TNFCTL_ENGINE_SCOPE", scope_was, 1);
	else
		unsetenv("TNFCTL_ENGINE_SCOPE");
	st = tl_reap(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	assert_true(tl_read_file(out, buf, sizeof(buf)) > 0);
	unlink(out);
	lines[0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		rest[0] = '\0';
		if (sscanf(line, "%lf %d %15s %4095[^\n]", &ms, &p, ev, rest) < 3)
			fail_msg("bad line \"%s\"", line);
		for (j = 0; j < npids && pids[j] != p; j++)
			;
		if (j == npids && npids < 64)
			pids[npids++] = p;
		/* "child PID": the child's pid numbered too */
		if (!strcmp(ev, "FORK") && sscanf(rest, "child %d", &c) == 1) {
			for (i = 0; i < npids && pids[i] != c; i++)
				;
			if (i == npids && npids < 64)
				pids[npids++] = c;
			snprintf(rest, sizeof(rest), "child P%d", i);
		}
		n += snprintf(lines + n, size - n, "P%d %s %s\n", j, ev, rest);
		assert_true(n < size);
	}
}

static void compat_same_events(const char *script, const char *const *want)
{
	char normal[16384], compat[16384];
	int i;

	tl_require_root();
	tl_require_watch();
	follow_events(script, false, normal, sizeof(normal));
	follow_events(script, true, compat, sizeof(compat));
	if (strcmp(normal, compat))
		fail_msg("the compat object's events:\n%s\ndiffer from the other's:\n%s", compat,
			 normal);
	for (i = 0; want[i]; i++)
		if (!strstr(compat, want[i]))
			fail_msg("no \"%s\" in:\n%s", want[i], compat);
}

/* FORK, EXEC with its argv, a failed exec, EXIT with its status. */
static void test_compat_object_exec(void **state)
{
	const char *want[] = {"P0 FORK child P1\n",   "P1 EXEC /bin/echo: /bin/echo a 'b c'\n",
			      "P1 EXIT status 0\n",   "P2 EXECFAIL /nonexistent/x: ENOENT",
			      "P2 EXIT status 127\n", "P3 EXIT status 6\n",
			      "P0 EXIT status 3\n",   NULL};

	(void)state;
	compat_same_events(
		"/bin/echo a 'b c' >/dev/null; /nonexistent/x y z 2>/dev/null; (exit 6); exit 3",
		want);
}

/* DLOPEN and DLCLOSE, found through rtld's _dl_debug_state without cookies. */
static void test_compat_object_dl(void **state)
{
	char plug[PATH_MAX], script[2 * PATH_MAX + 64], open[PATH_MAX + 16], close[PATH_MAX + 16];
	const char *want[] = {open, close, "P1 EXIT status 0\n", NULL};

	(void)state;
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	snprintf(script, sizeof(script), "%s --wl dl %s; exit 3", self_exe, plug);
	snprintf(open, sizeof(open), "P1 DLOPEN %s\n", plug);
	snprintf(close, sizeof(close), "P1 DLCLOSE %s\n", plug);
	compat_same_events(script, want);
}

/* A "forked PID status S" reply of @pid: S. */
static void parse_forked(const char *line, pid_t pid, int *status)
{
	int got = -1;

	if (!line || sscanf(line, "forked %d status %d", &got, status) != 2 || got != pid)
		fail_msg("reply \"%s\", expected forked %d", line ? line : "(none)", pid);
}

/* The only child of @pid (from /proc), or -1. */
static pid_t only_child(pid_t pid)
{
	char path[64], buf[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	n = tl_read_file(path, buf, sizeof(buf));
	return n > 0 ? atoi(buf) : -1;
}

/*
 * Nested trees: watch A on a root R, watch B on R's child C.  Everything C's
 * subtree does reaches both; R's own events reach A alone.
 */
static void test_nested_trees(void **state)
{
	char log[64], fifo[64], *argv[] = {self_exe, "--wl", "nest", fifo, log, "15", NULL};
	struct bomb_proc bp[15];
	struct wevs ea, eb;
	tnfctl_watch_t *a, *b;
	pid_t root, c;
	int fd, i, j;

	(void)state;
	tl_require_root();
	tl_require_watch();
	log_new(log);
	snprintf(fifo, sizeof(fifo), "%s.fifo", log);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	root = watch_exec_self(argv, 0, &a);
	/* Returns once C has opened it for reading: C is there. */
	fd = open(fifo, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	c = only_child(root);
	assert_true(c > 0);
	assert_int_equal(tnfctl_watch_open(c, 0, &b), TNFCTL_ERR_NONE);
	w_track(b);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	unlink(fifo);
	collect(b, &eb);
	collect(a, &ea);
	assert_int_equal(tl_reap(root), 0);
	assert_int_equal(bomb_parse(log, bp, 15), 15);
	unlink(log);
	assert_int_equal(bp[0].pid, c);
	/* B: the bomb under C, its FORKs and EXITs, nothing else */
	expect_counts(&eb, 14, 0, 15, 0);
	for (i = 0; i < eb.n; i++)
		if (!in_log(bp, 15, eb.v[i].pid))
			fail_msg("watch B saw pid %d, not of C's tree", eb.v[i].pid);
	/* A: R's EXEC, FORK of C, all of B's, R's EXIT */
	expect_counts(&ea, 15, 1, 16, 0);
	assert_int_equal(ea.v[0].kind, TNFCTL_WATCH_EXEC);
	assert_int_equal(ea.v[0].pid, root);
	assert_true(find_fork_of(&ea, c) >= 0);
	assert_true(find(&ea, TNFCTL_WATCH_EXIT, root, 0) >= 0);
	for (i = 0; i < eb.n; i++) {
		const struct wev *e = &eb.v[i];

		j = e->kind == TNFCTL_WATCH_FORK ? find_fork_of(&ea, e->child)
						 : find(&ea, e->kind, e->pid, 0);
		if (j < 0)
			fail_msg("watch A lacks B's %s of %d", kind_name(e->kind), e->pid);
		assert_int_equal(ea.v[j].pid, e->pid);
	}
	free(ea.v);
	free(eb.v);
	w_close(b);
	w_close(a);
}

/* The engine's watch counters until they are @slots and @tracked, within the test's timeout. */
static long long wait_stats(const char *name, int len, int slots, int tracked)
{
	long long t0 = tl_now_ms(), end = t0 + tl.timeout_ms;
	struct engine_stats st;

	for (;;) {
		engine_stats(name, len, &st);
		if (st.slots == slots && st.tracked == tracked)
			return tl_now_ms() - t0;
		if (tl_now_ms() > end)
			fail_msg("the engine has %d watches, %d tracked processes; expected %d, %d",
				 st.slots, st.tracked, slots, tracked);
		poll(NULL, 0, 2);
	}
}

/* Until the engine holds no uprobe link, within the test's timeout. */
static long long wait_uprobes(const char *name, int len)
{
	long long t0 = tl_now_ms(), end = t0 + tl.timeout_ms;
	struct engine_stats st;

	for (;;) {
		engine_stats(name, len, &st);
		if (!st.uprobes)
			return tl_now_ms() - t0;
		if (tl_now_ms() > end)
			fail_msg("the engine still holds %d uprobe links", st.uprobes);
		poll(NULL, 0, 20);
	}
}

/*
 * A watcher killed with SIGKILL leaves nothing of its own in the engine's
 * maps, and watches opened and closed do not make them grow; the last
 * watch's close detaches the tracepoints, and the uprobes go soon after.
 */
static void test_watcher_killed_leaves_nothing(void **state)
{
	char arg[16], name[TNF_ENGINE_NAME_MAX], line[64];
	char *argv[] = {self_exe, "--wl", "watcher", arg, NULL};
	struct tl_proc *p, *q;
	struct engine_stats st;
	tnfctl_watch_t *w0, *w;
	tnfctl_handle_t *h;
	int out[2], keep[] = {-1}, len, i;
	long long ms;
	pid_t watcher, engine;
	char **env;

	(void)state;
	tl_require_root();
	tl_require_watch();
	p = tl_start_target(tl.target, 1);
	q = tl_start_target(tl.target, 0);
	assert_int_equal(tnfctl_watch_open(q->pid, 0, &w0), TNFCTL_ERR_NONE);
	w_track(w0);
	engine = engine_of_self();
	assert_true(engine > 0);
	len = engine_name_of(engine, name);
	if (len < 0) {
		/* valgrind's LD_PRELOAD makes every engine private: nothing to share or ask */
		print_message("skipped: the engine is private here (LD_PRELOAD: valgrind?)\n");
		w_close(w0);
		tl_send(p, "exit 0");
		tl_send(q, "exit 0");
		tl_reap(p->pid);
		tl_reap(q->pid);
		skip();
	}
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	snprintf(arg, sizeof(arg), "%d", p->pid);
	env = tl_env_build(NULL);
	watcher = tl_spawn(argv, env, out[1], keep);
	free(env);
	close(out[1]);
	assert_int_equal(read_line_fd(out[0], line, sizeof(line)), 0);
	close(out[0]);
	assert_string_equal(line, "watching");
	/* the watcher's watch is a slot of our engine's object */
	engine_stats(name, len, &st);
	assert_int_equal(st.slots, 2);
	assert_int_equal(st.tracked, 2);
	assert_true(st.attached);
	kill(watcher, SIGKILL);
	assert_true(WIFSIGNALED(tl_reap(watcher)));
	ms = wait_stats(name, len, 1, 1);
	print_message("the killed watcher's slot and entry were gone %lld ms after its reap\n", ms);
	for (i = 0; i < 50; i++) {
		assert_int_equal(tnfctl_watch_open(p->pid, i & 1 ? TNFCTL_WATCH_DL : 0, &w),
				 TNFCTL_ERR_NONE);
		if (i == 1) {
			engine_stats(name, len, &st);
			assert_true(st.uprobes > 0); /* a DL watch's */
		}
		tnfctl_watch_close(w);
	}
	/* a close is a DROP on the connection: ask again until the engine has read them */
	wait_stats(name, len, 1, 1);
	/* with no DL watch left, the libc uprobes go too (after the engine's linger for them) */
	ms = wait_uprobes(name, len);
	print_message("the uprobes were released %lld ms after the last DL watch\n", ms);
	/* the last watch closed (a handle keeps the engine): its tracepoints go */
	h = tl_pid_open(p->pid);
	w_close(w0);
	wait_stats(name, len, 0, 0);
	engine_stats(name, len, &st);
	assert_false(st.attached);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_send(p, "exit 0");
	tl_send(q, "exit 0");
	tl_reap(p->pid);
	tl_reap(q->pid);
}

/*
 * A watch and a stopping-mode handle on one process at once: both see it
 * through.  The stopping mode's tracepoints are attached while it has a
 * target only.
 */
static void test_watch_beside_handle(void **state)
{
	char name[TNF_ENGINE_NAME_MAX];
	struct engine_stats es;
	tnfctl_handle_t *h;
	tnfctl_watch_t *w;
	tnfctl_event_info_t info;
	struct tl_proc *p;
	struct wevs ev;
	pid_t c;
	int st, f, x, len;

	(void)state;
	tl_require_root();
	tl_require_watch();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	assert_int_equal(tnfctl_watch_open(p->pid, 0, &w), TNFCTL_ERR_NONE);
	w_track(w);
	tl_send(p, "fork_exec /bin/true");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_info(h, &info);
	c = info.child_pid;
	/* a private engine (valgrind's LD_PRELOAD) has no name to ask it by */
	len = engine_name_of(engine_of_self(), name);
	if (len >= 0) {
		engine_stats(name, len, &es);
		assert_true(es.attached && es.stop_attached);
	}
	tl_send(p, "exit 9");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	parse_forked(tl_expect(p, "forked "), c, &st);
	assert_int_equal(st, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	/* an engine with no target: its stopping tracepoints are gone, the watch's stay */
	if (len >= 0) {
		engine_stats(name, len, &es);
		assert_true(es.attached);
		assert_false(es.stop_attached);
	}
	collect(w, &ev);
	assert_int_equal(WEXITSTATUS(tl_reap(p->pid)), 9);
	expect_counts(&ev, 1, 1, 2, 0);
	f = find_fork_of(&ev, c);
	assert_true(f >= 0);
	assert_int_equal(ev.v[f].pid, p->pid);
	x = find(&ev, TNFCTL_WATCH_EXEC, c, 0);
	assert_true(x > f);
	assert_string_equal(ev.v[x].path, "/bin/true");
	x = find(&ev, TNFCTL_WATCH_EXIT, p->pid, 0);
	assert_true(x >= 0);
	assert_int_equal(ev.v[x].status, 9);
	free(ev.v);
	w_close(w);
}

/*
 * Slots are reused: a watch closed while its tree forks at full speed, then
 * a watch of a quiet process, twelve times (a target record each; testlib has 16).  Each quiet
 * watch sees exactly its process's EXIT, never a record of the busy tree (whose watch's slot and
 * ring it may inherit).
 */
static void test_reused_slots_isolated(void **state)
{
	struct tl_proc *x, *y;
	tnfctl_watch_t *wx, *wy;
	struct wevs ev;
	int round;

	(void)state;
	tl_require_root();
	tl_require_watch();
	x = tl_start_target(tl.target, 0);
	tl_send(x, "forkloop");
	tl_expect(x, "forkloop");
	for (round = 0; round < 12; round++) {
		y = tl_start_target(tl.target, 0);
		assert_int_equal(tnfctl_watch_open(x->pid, 0, &wx), TNFCTL_ERR_NONE);
		assert_int_equal(tnfctl_watch_open(y->pid, 0, &wy), TNFCTL_ERR_NONE);
		w_track(wy);
		tnfctl_watch_close(wx);
		tl_send(y, "exit 6");
		collect(wy, &ev);
		assert_int_equal(WEXITSTATUS(tl_reap(y->pid)), 6);
		expect_counts(&ev, 0, 0, 1, 0);
		assert_int_equal(ev.v[0].pid, y->pid);
		free(ev.v);
		w_close(wy);
	}
	kill(x->pid, SIGKILL);
	tl_reap(x->pid);
}

/* The highest BPF program id in the system: a load, anywhere, makes a higher one. */
static uint32_t last_prog_id(void)
{
	uint32_t id = 0, next;

	while (!bpf_prog_get_next_id(id, &next))
		id = next;
	return id;
}

/*
 * The highest id of the programs @engine holds (its program and link
 * descriptors' fdinfo): only our engine's loads count, not those of
 * another run beside this one (memcheck's second lane).
 */
static uint32_t engine_prog_id(pid_t engine)
{
	char path[64], line[128];
	struct dirent *e;
	uint32_t max = 0;
	unsigned int id;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", engine);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.16s", engine, e->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "prog_id: %u", &id) == 1 && id > max)
				max = id;
		if (f)
			fclose(f);
	}
	closedir(d);
	return max;
}

/*
 * With the engine running (a watch open), more watches and a stopping-mode
 * open load nothing: no program is loaded, so no verifier ran.
 */
static void test_warm_open_loads_nothing(void **state)
{
	tnfctl_watch_t *w0, *w1, *w2;
	struct tl_proc *p, *q;
	tnfctl_handle_t *h;
	uint32_t before;
	pid_t engine;

	(void)state;
	tl_require_root();
	tl_require_watch();
	p = tl_start_target(tl.target, 1);
	q = tl_start_target(tl.target, 0);
	/* the first watch and the first handle: the engine loads what they need */
	assert_int_equal(tnfctl_watch_open(q->pid, TNFCTL_WATCH_DL, &w0), TNFCTL_ERR_NONE);
	w_track(w0);
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	engine = engine_of_self();
	assert_true(engine > 0);
	before = last_prog_id();
	assert_true(before > 0 && engine_prog_id(engine) > 0);
	assert_int_equal(tnfctl_watch_open(p->pid, TNFCTL_WATCH_DL, &w1), TNFCTL_ERR_NONE);
	w_track(w1);
	assert_int_equal(tnfctl_watch_open(q->pid, 0, &w2), TNFCTL_ERR_NONE);
	w_track(w2);
	h = tl_pid_open(p->pid);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	if (engine_prog_id(engine) > before)
		fail_msg("the engine loaded BPF programs for warm opens (ids %u..%u)", before + 1,
			 engine_prog_id(engine));
	w_close(w2);
	w_close(w1);
	w_close(w0);
	tl_send(p, "exit 0");
	tl_send(q, "exit 0");
	tl_reap(p->pid);
	tl_reap(q->pid);
}

/*
 * The engine killed under an open watch: tnfctl_watch_next() fails with
 * ECONNRESET once the records written before are read, and does not wait
 * for an END that cannot come; the watched process runs on.
 */
static void test_engine_killed_under_watch(void **state)
{
	tnfctl_watch_event_t ev;
	struct tl_proc *p;
	tnfctl_watch_t *w;
	pid_t engine;
	int r, pidfd;

	(void)state;
	tl_require_root();
	tl_require_watch();
	p = tl_start_target(tl.target, 0);
	assert_int_equal(tnfctl_watch_open(p->pid, 0, &w), TNFCTL_ERR_NONE);
	w_track(w);
	engine = engine_of_self();
	assert_true(engine > 0);
	pidfd = tl_pidfd_open(engine);
	assert_true(pidfd >= 0);
	kill(engine, SIGKILL);
	if (tl_pidfd_wait(pidfd, tl.timeout_ms))
		fail_msg("the engine %d did not die", engine);
	close(pidfd);
	do
		r = tnfctl_watch_next(w, &ev, tl.timeout_ms);
	while (r == 1 && ev.kind != TNFCTL_WATCH_END);
	if (r != -TNFCTL_ERR_INTERNAL || errno != ECONNRESET)
		fail_msg("tnfctl_watch_next returned %d (errno %d), expected -INTERNAL, ECONNRESET",
			 r, errno);
	w_close(w);
	tl_send(p, "ping");
	tl_expect(p, "pong");
	tl_send(p, "exit 0");
	tl_reap(p->pid);
}

/*
 * Clears CAP_SYS_PTRACE from our effective and permitted sets: a child
 * then has no capability the engine (which keeps only ours) lacks.
 */
static int drop_ptrace_cap(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
	d[CAP_SYS_PTRACE / 32].permitted &= ~(1u << (CAP_SYS_PTRACE % 32));
	return (int)syscall(SYS_capset, &h, d);
}

/*
 * A caller without CAP_SYS_PTRACE watches a process that execs a `cat`
 * setuid to nobody: the exec is secure, so the process leaves the tree with
 * no record, only the ring's wake-up.  The first read comes after that
 * wake-up's delivery bound (1 ms here) has passed, so no timer is due
 * either.  The watch must still end.  A drain that consumed only a wake-up
 * used to skip the end-of-tree check and wait for more, for ever: seen on
 * 6.1 under qemu as `tnfctl-follow --no-stop -- /bin/true` hanging after
 * its EXIT, when the last process's wake-up came after the EXIT's batch.
 */
static void test_setuid_exec_ends_tree(void **state)
{
	TNFCTL_OPTS(tnfctl_watch_opts, opts, .delay_ms = 1);
	char dir[] = "/tmp/tl_suid.XXXXXX", path[64];
	struct timespec bound = {0, 2000000};
	tnfctl_watch_event_t ev;
	int st, r, events = 0;
	struct statvfs sv;
	tnfctl_watch_t *w;
	pid_t caller;

	(void)state;
	tl_require_root();
	tl_require_watch();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cat", dir);
	tl_copy_file("/bin/cat", path);
	if (chown(path, 65534, 65534) || chmod(path, 04755) || statvfs(path, &sv)) {
		unlink(path);
		rmdir(dir);
		fail_msg("setting up %s: %s", path, strerror(errno));
	}
	if (sv.f_flag & ST_NOSUID) {
		unlink(path);
		rmdir(dir);
		print_message("SKIP: /tmp is mounted nosuid: no secure exec to watch\n");
		skip();
	}
	caller = fork();
	if (caller == 0) {
		char *argv[] = {path, NULL}, c = 'x';
		int in[2], out[2];
		pid_t target;

		if (drop_ptrace_cap() || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
			_exit(90);
		/* our own child (which we may trace), held until the watch is open */
		target = fork();
		if (target == 0) {
			if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || read(0, &c, 1) != 1)
				_exit(120);
			execv(path, argv);
			_exit(121);
		}
		close(in[0]);
		close(out[1]);
		r = tnfctl_watch_open_opts(target, &opts, &w);
		if (r != TNFCTL_ERR_NONE || write(in[1], "gx", 2) != 2) {
			fprintf(stderr, "tnfctl_watch_open_opts: %s\n", tnfctl_strerror(r));
			kill(target, SIGKILL);
			waitpid(target, NULL, 0);
			_exit(91);
		}
		/* cat echoed the x: it runs the new image, the exec has left the tree */
		if (read(out[0], &c, 1) != 1 || c != 'x' || nanosleep(&bound, NULL))
			_exit(92);
		do {
			r = tnfctl_watch_next(w, &ev, -1); /* as tnfctl-follow reads */
			events += r == 1 && ev.kind != TNFCTL_WATCH_END;
		} while (r == 1 && ev.kind != TNFCTL_WATCH_END);
		tnfctl_watch_close(w);
		close(in[1]);
		if (waitpid(target, &st, 0) != target || !WIFEXITED(st) || WEXITSTATUS(st))
			_exit(93);
		/* 94: an error; 95: the setuid image was followed */
		_exit(r != 1 ? 94 : events ? 95 : 0);
	}
	tl_track_pid(caller);
	r = tl_waitpid_timeout(caller, &st, 0, tl.timeout_ms);
	unlink(path);
	rmdir(dir);
	if (r != caller)
		fail_msg("no END within %d ms: the watch waits for ever", tl.timeout_ms);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("the caller without CAP_SYS_PTRACE: wait status 0x%x", st);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		W_TEST(test_shell_loop),
		W_TEST(test_fork_bomb),
		W_TEST(test_threads_fork),
		W_TEST(test_exec_from_thread),
		W_TEST(test_dlopen_dlclose),
		W_TEST(test_dlopen_rule_sequence),
		W_TEST(test_dlopen_by_libc),
		W_TEST(test_dlmopen_dlclose),
		W_TEST(test_no_dl_without_flag),
		W_TEST(test_descendants_at_open),
		W_TEST(test_lost_records_reported),
		W_TEST(test_trees_side_by_side),
		W_TEST(test_errors_and_permission),
		W_TEST(test_follow_no_stop),
		W_TEST(test_dl_both_link_kinds),
		W_TEST(test_compat_object_exec),
		W_TEST(test_compat_object_dl),
		W_TEST(test_nested_trees),
		W_TEST(test_watcher_killed_leaves_nothing),
		W_TEST(test_watch_beside_handle),
		W_TEST(test_reused_slots_isolated),
		W_TEST(test_warm_open_loads_nothing),
		W_TEST(test_engine_killed_under_watch),
		W_TEST(test_setuid_exec_ends_tree),
		TL_FINAL_TEST,
	};

	if (argc > 2 && !strcmp(argv[1], "--wl"))
		return workload(argc - 2, argv + 2);
	if (tl_self_exe(self_exe, sizeof(self_exe)))
		return 1;
	return tl_run(tests);
}
