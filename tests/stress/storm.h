/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * storm.h - a process storm and its ground truth, shared by
 * tests/stress/test_stress.c and tests/test_faults.c.  Include after
 * testlib.h.
 *
 * The workload (`BINARY --wl storm NSH NB NT NF LOG`) logs what it does to
 * LOG (O_APPEND, one write per line), from its own point of view and never
 * through libtnfctl:
 *   f PID TID CHILD   a fork by thread TID of PID created CHILD (by the parent)
 *   e PID PATH        PID is about to execve PATH (by the process itself, or
 *                     by the shell that started it)
 *   x PID STATUS      waitpid() said PID ended with exit STATUS (1000+SIG if a
 *                     signal ended it) (by the parent; the root logs its own
 *                     "x" just before it exits)
 * The root forks, at once, (1) a child that execs /bin/sh running a loop of
 * NSH /bin/true or /bin/false in the background (each awaited), (2) a
 * binary fork tree of NB processes (each waits for its children, exits
 * k % 200), (3) a process whose NT threads each fork NF children (exit j % 7).
 * Processes: 1 + 3 + NSH + (NB - 1) + NT * NF.
 *
 * The collectors record the events libtnfctl reports in the same textual
 * form; st_compare() then matches the two multisets: an expected line with
 * no event is lost, an event with no expected line is misattributed.
 * Multisets, because the 32768 pids of this kind of machine wrap in a storm.
 */
#ifndef STORM_H
#define STORM_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/* ------------------------------------------------------------------ */
/* the workload */

static int st_fd = -1;

static inline void st_log(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(st_fd, buf, n) != n)
		_exit(101);
}

static inline pid_t st_fork(void)
{
	pid_t p = fork();

	if (p < 0)
		_exit(100);
	if (p > 0)
		st_log("f %d %d %d\n", getpid(), (int)syscall(SYS_gettid), p);
	return p;
}

static inline void st_reap(pid_t p)
{
	int st;

	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			_exit(103);
	st_log("x %d %d\n", p, WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st));
}

static inline void st_bomb(int n)
{
	pid_t kids[2];
	int k = 0, i, nk;

again:
	nk = 0;
	for (i = 1; i <= 2 && 2 * k + i < n; i++) {
		pid_t p = st_fork();

		if (p == 0) {
			k = 2 * k + i;
			goto again;
		}
		kids[nk++] = p;
	}
	for (i = 0; i < nk; i++)
		st_reap(kids[i]);
	_exit(k % 200);
}

static int st_nf;

static void *st_forker(void *arg)
{
	int j;

	(void)arg;
	for (j = 0; j < st_nf; j++) {
		pid_t p = st_fork();

		if (p == 0)
			_exit(j % 7);
		st_reap(p);
	}
	return NULL;
}

static inline void st_threads(int nt)
{
	pthread_t th[64];
	int i;

	for (i = 0; i < nt && i < 64; i++)
		if (pthread_create(&th[i], NULL, st_forker, NULL))
			_exit(100);
	for (i = 0; i < nt && i < 64; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static const char st_script[] =
	"i=0; while [ $i -lt $1 ]; do "
	"if [ $((i % 3)) = 0 ]; then c=/bin/false; else c=/bin/true; fi; "
	"$c & p=$!; wait $p; s=$?; "
	"echo \"f $$ $$ $p\ne $p $c\nx $p $s\" >> \"$2\"; "
	"i=$((i + 1)); done";

/* storm NSH NB NT NF LOG */
static inline int st_workload(char **argv)
{
	pid_t kids[3];
	int i;

	st_fd = open(argv[4], O_WRONLY | O_APPEND | O_CLOEXEC);
	if (st_fd < 0)
		_exit(102);
	st_nf = atoi(argv[3]);
	kids[0] = st_fork();
	if (kids[0] == 0) {
		char *sh[] = {"sh", "-c", (char *)st_script, "sh", argv[0], argv[4], NULL};

		st_log("e %d /bin/sh\n", getpid());
		execv("/bin/sh", sh);
		_exit(104);
	}
	kids[1] = st_fork();
	if (kids[1] == 0)
		st_bomb(atoi(argv[1]));
	kids[2] = st_fork();
	if (kids[2] == 0)
		st_threads(atoi(argv[2]));
	for (i = 0; i < 3; i++)
		st_reap(kids[i]);
	st_log("x %d 0\n", getpid());
	return 0;
}

/*
 * The workload's environment: the caller's, with detect_leaks=0 appended
 * to LSAN_OPTIONS (parsed after ASAN_OPTIONS, so it has the last word) and,
 * if @probe is not NULL, LD_PRELOAD=@probe (what tnfctl_exec_open adds to
 * an inherited environment; an explicit one is used verbatim).
 *
 * The storm's processes run this binary (`--wl storm`), built with ASan by
 * make check SANITIZE=1.  LeakSanitizer's exit-time check in the root (the
 * one process that returns from main) clones a task to stop the others: a
 * FORK and an EXIT the workload's log does not have, and under ptrace the
 * check fails and the root exits 1.  The workload is not what is checked
 * for leaks; the test (the controller) keeps its check.  An ASan runtime
 * only reads LSAN_OPTIONS; without one it is inert.
 *
 * Returns a calloc'ed array (free() it) whose strings are environ's and
 * static buffers: the next call changes them.
 */
static inline char **st_workload_env(const char *probe)
{
	static char lsan[1024], pre[PATH_MAX + 16];
	const char *old = getenv("LSAN_OPTIONS");
	size_t n = 0, i, k = 0;
	char **env;

	if (old && *old)
		snprintf(lsan, sizeof(lsan), "LSAN_OPTIONS=%s:detect_leaks=0", old);
	else
		snprintf(lsan, sizeof(lsan), "LSAN_OPTIONS=detect_leaks=0");
	if (probe)
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", probe);
	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		abort();
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LSAN_OPTIONS=", 13) &&
		    (!probe || strncmp(environ[i], "LD_PRELOAD=", 11)))
			env[k++] = environ[i];
	env[k++] = lsan;
	if (probe)
		env[k++] = pre;
	env[k] = NULL;
	return env;
}

/* ------------------------------------------------------------------ */
/* what the library reported */

struct st_events {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	char **v;
	int n, cap;
	int live;	     /* stopping mode: follower threads still running */
	int errors;	     /* calls that failed */
	char errmsg[512];    /* the first failure */
	uint64_t lost;	     /* watch: LOST records; stopping: tnfctl_events_lost() delta */
	int other;	     /* events of a kind the storm never makes */
	int reopen_failures; /* stopping mode: pid_open after EXEC failed */
};

static struct st_events st_ev = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
};

static inline void st_reset(void)
{
	int i;

	pthread_mutex_lock(&st_ev.lock);
	for (i = 0; i < st_ev.n; i++)
		free(st_ev.v[i]);
	free(st_ev.v);
	st_ev.v = NULL;
	st_ev.n = st_ev.cap = st_ev.live = st_ev.errors = st_ev.other = 0;
	st_ev.reopen_failures = 0;
	st_ev.lost = 0;
	st_ev.errmsg[0] = '\0';
	pthread_mutex_unlock(&st_ev.lock);
}

static inline void st_add(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&st_ev.lock);
	if (st_ev.n == st_ev.cap) {
		st_ev.cap = st_ev.cap ? 2 * st_ev.cap : 4096;
		st_ev.v = realloc(st_ev.v, st_ev.cap * sizeof(*st_ev.v));
		if (!st_ev.v)
			abort();
	}
	st_ev.v[st_ev.n++] = strdup(buf);
	pthread_mutex_unlock(&st_ev.lock);
}

static inline void st_error(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&st_ev.lock);
	if (!st_ev.errors++) {
		va_start(ap, fmt);
		vsnprintf(st_ev.errmsg, sizeof(st_ev.errmsg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&st_ev.lock);
}

/* stopping mode: one thread per handle, as src/follow/stop.c does */

struct st_follower {
	tnfctl_handle_t *h;
	pid_t pid;
};

static void *st_follow(void *arg);

/*
 * One controller following every process of a storm holds a descriptor per
 * handle, and one more per tnfctl_continue waiting for a FORK: hundreds of
 * processes at once need more than a Debian login's 1024 (soft limit).
 */
static inline void st_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static inline void st_spawn(tnfctl_handle_t *h, pid_t pid)
{
	struct st_follower *f = malloc(sizeof(*f));
	pthread_attr_t attr;
	pthread_t t;

	if (!f)
		abort();
	f->h = h;
	f->pid = pid;
	pthread_mutex_lock(&st_ev.lock);
	st_ev.live++;
	pthread_mutex_unlock(&st_ev.lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&t, &attr, st_follow, f)) {
		st_error("pthread_create for pid %d", pid);
		tnfctl_close(h, TNFCTL_TARG_RESUME);
		free(f);
		pthread_mutex_lock(&st_ev.lock);
		if (--st_ev.live == 0)
			pthread_cond_broadcast(&st_ev.cv);
		pthread_mutex_unlock(&st_ev.lock);
	}
	pthread_attr_destroy(&attr);
}

static void *st_follow(void *arg)
{
	struct st_follower *f = arg;
	tnfctl_event_info_t *info = malloc(sizeof(*info));

	if (!info)
		abort();
	for (;;) {
		tnfctl_handle_t *child = NULL;
		tnfctl_event_t evt;
		tnfctl_errcode_t err = tnfctl_continue(f->h, &evt, &child);

		if (err != TNFCTL_ERR_NONE) {
			st_error("pid %d: tnfctl_continue: %s", f->pid, tnfctl_strerror(err));
			tnfctl_close(f->h, TNFCTL_TARG_RESUME);
			break;
		}
		if (evt == TNFCTL_EVENT_EINTR)
			continue;
		memset(info, 0, sizeof(*info));
		if (tnfctl_event_info_get(f->h, info) != TNFCTL_ERR_NONE) {
			st_error("pid %d: tnfctl_event_info_get failed", f->pid);
			info->pid = f->pid;
		}
		if (evt == TNFCTL_EVENT_FORK) {
			st_add("f %d %d %d", info->pid, info->tid, info->child_pid);
			if (child)
				st_spawn(child, info->child_pid);
		} else if (evt == TNFCTL_EVENT_EXEC) {
			pid_t pid = info->pid;

			st_add("e %d %s", info->pid, info->path);
			tnfctl_close(f->h, TNFCTL_TARG_SUSPEND);
			err = tnfctl_pid_open(pid, &f->h);
			if (err != TNFCTL_ERR_NONE) {
				kill(pid, SIGCONT);
				pthread_mutex_lock(&st_ev.lock);
				st_ev.reopen_failures++;
				pthread_mutex_unlock(&st_ev.lock);
				st_error("pid %d: tnfctl_pid_open after EXEC: %s", pid,
					 tnfctl_strerror(err));
				break;
			}
		} else if (evt == TNFCTL_EVENT_EXIT || evt == TNFCTL_EVENT_TARGGONE) {
			st_add("x %d %d", info->pid,
			       evt == TNFCTL_EVENT_EXIT ? info->exit_status : 1000 + info->term_signal);
			tnfctl_close(f->h, TNFCTL_TARG_DEFAULT);
			break;
		} else {
			pthread_mutex_lock(&st_ev.lock);
			st_ev.other++;
			pthread_mutex_unlock(&st_ev.lock);
			st_add("o %d %s %s", info->pid, tl_event_name(evt), info->path);
		}
	}
	free(info);
	free(f);
	pthread_mutex_lock(&st_ev.lock);
	if (--st_ev.live == 0)
		pthread_cond_broadcast(&st_ev.cv);
	pthread_mutex_unlock(&st_ev.lock);
	return NULL;
}

/* Waits until every follower has ended; returns 0, or -1 after @timeout_ms. */
static inline int st_wait_followers(int timeout_ms)
{
	struct timespec ts;
	int r = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&st_ev.lock);
	while (st_ev.live > 0 && r == 0)
		if (pthread_cond_timedwait(&st_ev.cv, &st_ev.lock, &ts) == ETIMEDOUT)
			r = -1;
	pthread_mutex_unlock(&st_ev.lock);
	return r;
}

/* passive mode: the watch's events until END (@timeout_ms of silence fails) */
static inline int st_collect_watch(tnfctl_watch_t *w, int timeout_ms, bool skip_root_exec,
				   pid_t root)
{
	static tnfctl_watch_event_t ev;

	for (;;) {
		int r = tnfctl_watch_next(w, &ev, timeout_ms);

		if (r <= 0) {
			st_error("tnfctl_watch_next returned %d before END", r);
			return -1;
		}
		switch (ev.kind) {
		case TNFCTL_WATCH_FORK:
			st_add("f %d %d %d", ev.pid, ev.tid, ev.child_pid);
			break;
		case TNFCTL_WATCH_EXEC:
			if (skip_root_exec && ev.pid == root) {
				skip_root_exec = false;
				break;
			}
			st_add("e %d %s", ev.pid, ev.path);
			break;
		case TNFCTL_WATCH_EXIT:
			st_add("x %d %d", ev.pid,
			       ev.term_signal ? 1000 + ev.term_signal : ev.exit_status);
			break;
		case TNFCTL_WATCH_LOST:
			st_ev.lost += ev.lost + ev.untracked;
			break;
		case TNFCTL_WATCH_END:
			return 0;
		default:
			st_ev.other++;
			st_add("o %d kind %d %s", ev.pid, (int)ev.kind, ev.path);
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* comparison */

struct st_result {
	int expected; /* lines of ground truth */
	int reported; /* events the library gave */
	int matched;
	int lost;	   /* expected, not reported */
	int misattributed; /* reported, not expected */
	int processes;	   /* distinct process lifetimes in the ground truth ("x" lines) */
	int forks, execs;
	char first_lost[128], first_mis[128];
};

static inline int st_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the log at @path into lines (malloc'ed array of strdup'ed lines). */
static inline int st_read_log(const char *path, char ***out)
{
	char **v = NULL, *buf, *line, *save = NULL;
	int n = 0, cap = 0, fd;
	struct stat sb;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb))
		fail_msg("cannot read the log %s", path);
	buf = malloc(sb.st_size + 1);
	if (!buf || read(fd, buf, sb.st_size) != sb.st_size)
		fail_msg("cannot read the log %s", path);
	buf[sb.st_size] = '\0';
	close(fd);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				abort();
		}
		v[n++] = strdup(line);
	}
	free(buf);
	*out = v;
	return n;
}

static inline void st_compare(char **exp, int nexp, struct st_result *r)
{
	int i = 0, j = 0;

	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&st_ev.lock);
	qsort(exp, nexp, sizeof(*exp), st_cmp);
	qsort(st_ev.v, st_ev.n, sizeof(*st_ev.v), st_cmp);
	r->expected = nexp;
	r->reported = st_ev.n;
	for (i = 0; i < nexp; i++) {
		r->processes += exp[i][0] == 'x';
		r->forks += exp[i][0] == 'f';
		r->execs += exp[i][0] == 'e';
	}
	i = 0;
	while (i < nexp || j < st_ev.n) {
		int c = i == nexp ? 1 : j == st_ev.n ? -1 : strcmp(exp[i], st_ev.v[j]);

		if (c == 0) {
			r->matched++;
			i++;
			j++;
		} else if (c < 0) {
			if (!r->lost++)
				snprintf(r->first_lost, sizeof(r->first_lost), "%s", exp[i]);
			i++;
		} else {
			if (!r->misattributed++)
				snprintf(r->first_mis, sizeof(r->first_mis), "%s", st_ev.v[j]);
			j++;
		}
	}
	pthread_mutex_unlock(&st_ev.lock);
}

static inline void st_free_lines(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The kernel's count of processes created since boot (/proc/stat). */
static inline unsigned long long st_proc_created(void)
{
	char buf[1 << 16], *p;

	if (tl_read_file("/proc/stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nprocesses ");
	return p ? strtoull(p + 11, NULL, 10) : 0;
}

static inline void st_new_log(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/tl_storm_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		fail_msg("mkstemp: %s", strerror(errno));
	close(fd);
}

#endif /* STORM_H */
