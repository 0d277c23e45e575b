// SPDX-License-Identifier: BSD-2-Clause
/*
 * Paths of any length the kernel accepts come through whole: EXEC,
 * EXEC_FAILED and DLOPEN of a 300-byte and a 4000-byte path, in the
 * stopping API (tnfctl_event_data_get, and the frozen tnfctl_event_info_t)
 * and the watch (tnfctl_watch_read, and the frozen tnfctl_watch_event_t);
 * a name execve refuses as too long is flagged as cut; the growable
 * structs keep their sz rules.
 *
 * The workloads are this binary run as `test_long_paths --wl KIND PATH`:
 * `exec PATH` execs PATH (exit 100 + errno if that fails), `dlopen PATH`
 * dlopens and dlcloses it (exit 0, or 1).
 */
#include <dlfcn.h>
#include <elf.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "testlib.h"

static int workload(int argc, char **argv)
{
	void *h;

	if (argc == 2 && !strcmp(argv[0], "exec")) {
		execl(argv[1], argv[1], (char *)NULL);
		_exit(100 + errno);
	}
	if (argc == 2 && !strcmp(argv[0], "dlopen")) {
		h = dlopen(argv[1], RTLD_NOW);
		_exit(h && !dlclose(h) ? 0 : 1);
	}
	return 2;
}

static char self_exe[PATH_MAX];

/* A file at a path of exactly @len bytes under a fresh directory tree. */
struct long_path {
	char path[8192];
	char top[32];
};

/*
 * Directories of 200-byte names down to where a last name of 1-251 bytes
 * makes @len; @src copied there (NULL: no file, for a failed exec).
 */
static void long_path_make(struct long_path *lp, size_t len, const char *src)
{
	size_t n;

	snprintf(lp->top, sizeof(lp->top), "/tmp/tl_long.XXXXXX");
	assert_non_null(mkdtemp(lp->top));
	strcpy(lp->path, lp->top);
	n = strlen(lp->path);
	while (len - n > 252) {
		lp->path[n++] = '/';
		memset(lp->path + n, 'd', 200);
		n += 200;
		lp->path[n] = '\0';
		assert_int_equal(mkdir(lp->path, 0700), 0);
	}
	lp->path[n++] = '/';
	memset(lp->path + n, 'f', len - n);
	lp->path[len] = '\0';
	assert_int_equal(strlen(lp->path), len);
	if (src)
		tl_copy_file(src, lp->path);
}

static void long_path_remove(struct long_path *lp)
{
	char *slash;

	unlink(lp->path);
	while ((slash = strrchr(lp->path, '/')) && strlen(lp->path) > strlen(lp->top)) {
		*slash = '\0';
		rmdir(lp->path);
	}
}

/* ------------------------------------------------------------------ */
/* the stopping API */

/* Exec-open `self --wl KIND ARG` (no runtime, failed execs too) and continue to @want. */
static tnfctl_handle_t *stop_to(const char *kind, const char *arg, tnfctl_event_t want)
{
	char *argv[] = {self_exe, "--wl", (char *)kind, (char *)arg, NULL};
	tnfctl_handle_t *h;

	tl_assert_err(tnfctl_exec_open_flags(self_exe, argv, NULL, NULL, NULL,
					     TNFCTL_OPEN_NOPROBES | TNFCTL_OPEN_EXEC_FAILED, &h),
		      TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_track_pid(tl_targ_pid(h));
	tl_expect_event(h, NULL, want);
	return h;
}

/* The last event names @path whole, through both structs; @flags its TNFCTL_PATH_* flags. */
static void stop_check_path(tnfctl_handle_t *h, const char *path, unsigned int flags)
{
	struct tnfctl_event_data d = {.sz = sizeof(d)};
	static tnfctl_event_info_t info;

	tl_assert_err(tnfctl_event_data_get(h, &d), TNFCTL_ERR_NONE);
	assert_int_equal(d.path_len, strlen(path));
	assert_string_equal(d.path, path);
	assert_int_equal(d.flags, flags);
	assert_int_equal(d.pid, tl_targ_pid(h));
	tl_assert_err(tnfctl_event_info_get(h, &info), TNFCTL_ERR_NONE);
	assert_string_equal(info.path, path);
	assert_int_equal(info.event, d.event);
}

static void stop_end(tnfctl_handle_t *h)
{
	pid_t pid = tl_targ_pid(h);

	tl_close(h, TNFCTL_TARG_KILL);
	tl_assert_exits(pid, "target after close KILL");
}

static void stop_exec(size_t len)
{
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	struct long_path lp;
	tnfctl_handle_t *h;

	long_path_make(&lp, len, "/bin/true");
	h = stop_to("exec", lp.path, TNFCTL_EVENT_EXEC);
	stop_check_path(h, lp.path, 0);
	tl_assert_err(tnfctl_event_exec_get(h, &x), TNFCTL_ERR_NONE);
	assert_string_equal(x.path, lp.path);
	assert_int_equal(x.argc, 1);
	assert_string_equal(x.argv[0], lp.path);
	stop_end(h);
	long_path_remove(&lp);
}

static void test_exec_300_stop(void **state)
{
	(void)state;
	tl_require_root();
	stop_exec(300);
}

static void test_exec_4000_stop(void **state)
{
	(void)state;
	tl_require_root();
	stop_exec(4000);
}

/* A missing file in a 4000-byte directory path: EXEC_FAILED (ENOENT) with it whole. */
static void test_exec_failed_4000_stop(void **state)
{
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	struct long_path lp;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	long_path_make(&lp, 4000, NULL);
	h = stop_to("exec", lp.path, TNFCTL_EVENT_EXEC_FAILED);
	stop_check_path(h, lp.path, 0);
	tl_assert_err(tnfctl_event_exec_get(h, &x), TNFCTL_ERR_NONE);
	assert_int_equal(x.error, ENOENT);
	stop_end(h);
	long_path_remove(&lp);
}

/* 5000 bytes: execve says ENAMETOOLONG; the first 4095 bytes, flagged. */
static void test_exec_too_long_stop(void **state)
{
	struct tnfctl_event_data d = {.sz = sizeof(d)};
	static char name[5001];
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	memset(name, 'n', 5000);
	name[0] = '/';
	h = stop_to("exec", name, TNFCTL_EVENT_EXEC_FAILED);
	tl_assert_err(tnfctl_event_data_get(h, &d), TNFCTL_ERR_NONE);
	assert_int_equal(d.path_len, PATH_MAX - 1);
	assert_memory_equal(d.path, name, PATH_MAX - 1);
	assert_int_equal(d.flags, TNFCTL_PATH_TRUNCATED);
	stop_end(h);
}

static void stop_dlopen(size_t len)
{
	char plug[PATH_MAX];
	struct long_path lp;
	tnfctl_handle_t *h;

	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	long_path_make(&lp, len, plug);
	h = stop_to("dlopen", lp.path, TNFCTL_EVENT_DLOPEN);
	stop_check_path(h, lp.path, 0);
	stop_end(h);
	long_path_remove(&lp);
}

static void test_dlopen_300_stop(void **state)
{
	(void)state;
	tl_require_root();
	stop_dlopen(300);
}

static void test_dlopen_4000_stop(void **state)
{
	(void)state;
	tl_require_root();
	stop_dlopen(4000);
}

/* ------------------------------------------------------------------ */
/* the watch */

struct wrun {
	tnfctl_watch_t *w;
	pid_t pid;
};

static void watch_start(struct wrun *r, const char *kind, const char *arg)
{
	char *argv[] = {self_exe, "--wl", (char *)kind, (char *)arg, NULL};

	tl_require_watch();
	tl_assert_err(tnfctl_watch_exec(self_exe, argv, NULL, TNFCTL_WATCH_DL, &r->w, &r->pid),
		      TNFCTL_ERR_NONE);
	tl_track_pid(r->pid);
}

/* The workload's next event of @kind after its own EXEC (of self), by tnfctl_watch_read. */
static void watch_read_kind(struct wrun *r, tnfctl_watch_kind_t kind, struct tnfctl_watch_data *ev)
{
	bool self_seen = false;
	int n;

	for (;;) {
		n = tnfctl_watch_read(r->w, ev, tl.timeout_ms);
		if (n != 1)
			fail_msg("tnfctl_watch_read: %d (waiting for kind %d)", n, kind);
		if (ev->kind == TNFCTL_WATCH_EXEC && !self_seen) {
			self_seen = true;
			continue;
		}
		if (ev->kind == kind && self_seen)
			return;
		if (ev->kind == TNFCTL_WATCH_END || ev->kind == TNFCTL_WATCH_LOST)
			fail_msg("kind %d while waiting for %d", ev->kind, kind);
	}
}

static int watch_end(struct wrun *r)
{
	tnfctl_watch_close(r->w);
	return tl_reap(r->pid);
}

static void watch_exec(size_t len)
{
	struct tnfctl_watch_data ev = {.sz = sizeof(ev)};
	struct tnfctl_exec_info x = {.sz = sizeof(x)};
	struct long_path lp;
	struct wrun r;
	int st;

	long_path_make(&lp, len, "/bin/true");
	watch_start(&r, "exec", lp.path);
	watch_read_kind(&r, TNFCTL_WATCH_EXEC, &ev);
	assert_int_equal(ev.pid, r.pid);
	assert_int_equal(ev.path_len, len);
	assert_string_equal(ev.path, lp.path);
	assert_string_equal(ev.argv0, lp.path);
	assert_int_equal(ev.flags, 0);
	tl_assert_err(tnfctl_watch_event_exec(r.w, &x), TNFCTL_ERR_NONE);
	assert_string_equal(x.path, lp.path);
	st = watch_end(&r);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	long_path_remove(&lp);
}

static void test_exec_300_watch(void **state)
{
	(void)state;
	tl_require_root();
	watch_exec(300);
}

static void test_exec_4000_watch(void **state)
{
	(void)state;
	tl_require_root();
	watch_exec(4000);
}

static void test_exec_failed_4000_watch(void **state)
{
	struct tnfctl_watch_data ev = {.sz = sizeof(ev)};
	struct long_path lp;
	struct wrun r;
	int st;

	(void)state;
	tl_require_root();
	long_path_make(&lp, 4000, NULL);
	watch_start(&r, "exec", lp.path);
	watch_read_kind(&r, TNFCTL_WATCH_EXEC_FAILED, &ev);
	assert_string_equal(ev.path, lp.path);
	assert_int_equal(ev.flags, 0);
	st = watch_end(&r);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 100 + ENOENT);
	long_path_remove(&lp);
}

static void test_exec_too_long_watch(void **state)
{
	struct tnfctl_watch_data ev = {.sz = sizeof(ev)};
	static char name[5001];
	struct wrun r;
	int st;

	(void)state;
	tl_require_root();
	memset(name, 'n', 5000);
	name[0] = '/';
	watch_start(&r, "exec", name);
	watch_read_kind(&r, TNFCTL_WATCH_EXEC_FAILED, &ev);
	assert_int_equal(ev.path_len, PATH_MAX - 1);
	assert_memory_equal(ev.path, name, PATH_MAX - 1);
	assert_int_equal(ev.flags, TNFCTL_PATH_TRUNCATED);
	st = watch_end(&r);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 100 + ENAMETOOLONG);
}

static void watch_dlopen(size_t len)
{
	struct tnfctl_watch_data ev = {.sz = sizeof(ev)};
	char plug[PATH_MAX];
	struct long_path lp;
	struct wrun r;
	int st;

	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	long_path_make(&lp, len, plug);
	watch_start(&r, "dlopen", lp.path);
	watch_read_kind(&r, TNFCTL_WATCH_DLOPEN, &ev);
	assert_string_equal(ev.path, lp.path);
	assert_int_equal(ev.path_len, len);
	st = watch_end(&r);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	long_path_remove(&lp);
}

static void test_dlopen_300_watch(void **state)
{
	(void)state;
	tl_require_root();
	watch_dlopen(300);
}

static void test_dlopen_4000_watch(void **state)
{
	(void)state;
	tl_require_root();
	watch_dlopen(4000);
}

/* ------------------------------------------------------------------ */
/* the frozen structs, and the growable ones' sz rules */

/*
 * tnfctl_watch_event_t as released in 0.1, copied here and frozen: a
 * program built then passes this layout to tnfctl_watch_next.
 */
struct watch_event_v0_1 {
	int kind;
	pid_t pid, tid, ppid;
	uint64_t seq, time_ns;
	pid_t child_pid;
	int exit_status, term_signal, core_dumped;
	uint64_t lost, untracked;
	char path[4096];
	char argv0[256];
};
_Static_assert(sizeof(struct watch_event_v0_1) == sizeof(tnfctl_watch_event_t),
	       "tnfctl_watch_event_t is frozen");
_Static_assert(offsetof(struct watch_event_v0_1, argv0) == offsetof(tnfctl_watch_event_t, argv0),
	       "tnfctl_watch_event_t is frozen");

struct event_info_v0_1 {
	int event;
	pid_t pid, tid;
	uint64_t time_ns;
	pid_t child_pid;
	int exit_status, term_signal;
	char path[4096];
};
_Static_assert(sizeof(struct event_info_v0_1) == sizeof(tnfctl_event_info_t),
	       "tnfctl_event_info_t is frozen");

/* The frozen layout gets the long path whole, and argv0 cut at 255 bytes. */
static void test_frozen_watch_event(void **state)
{
	int (*next)(tnfctl_watch_t *, struct watch_event_v0_1 *, int) = (void *)tnfctl_watch_next;
	static struct watch_event_v0_1 ev;
	struct long_path lp;
	struct wrun r;
	int n, execs = 0;

	(void)state;
	tl_require_root();
	long_path_make(&lp, 300, "/bin/true");
	watch_start(&r, "exec", lp.path);
	while ((n = next(r.w, &ev, tl.timeout_ms)) == 1 && ev.kind != TNFCTL_WATCH_END) {
		if (ev.kind != TNFCTL_WATCH_EXEC || ++execs != 2)
			continue;
		assert_string_equal(ev.path, lp.path);
		assert_int_equal(strlen(ev.argv0), 255);
		assert_memory_equal(ev.argv0, lp.path, 255);
	}
	assert_int_equal(n, 1);
	assert_int_equal(execs, 2);
	assert_int_equal(WEXITSTATUS(watch_end(&r)), 0);
	long_path_remove(&lp);
}

static void test_frozen_event_info(void **state)
{
	tnfctl_errcode_t (*get)(tnfctl_handle_t *, struct event_info_v0_1 *) =
		(void *)tnfctl_event_info_get;
	static struct event_info_v0_1 info;
	struct long_path lp;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	long_path_make(&lp, 4000, "/bin/true");
	h = stop_to("exec", lp.path, TNFCTL_EVENT_EXEC);
	tl_assert_err(get(h, &info), TNFCTL_ERR_NONE);
	assert_int_equal(info.event, TNFCTL_EVENT_EXEC);
	assert_string_equal(info.path, lp.path);
	stop_end(h);
	long_path_remove(&lp);
}

/* A newer program's struct: fields this library lacks after the known ones. */
struct newer_event_data {
	struct tnfctl_event_data d;
	uint64_t tail[3];
};
struct newer_watch_data {
	struct tnfctl_watch_data d;
	uint64_t tail[3];
};

/* sz: too small or too large refused (and no event consumed), larger zero-filled. */
static void test_data_sz_rules(void **state)
{
	struct newer_watch_data big;
	struct newer_event_data ebig;
	struct tnfctl_watch_data ev;
	struct tnfctl_event_data d;
	tnfctl_handle_t *h;
	struct wrun r;

	(void)state;
	tl_require_root();
	watch_start(&r, "exec", "/bin/true");
	ev.sz = TNFCTL_WATCH_DATA_SZ_MIN - 1;
	assert_int_equal(tnfctl_watch_read(r.w, &ev, 0), -TNFCTL_ERR_BADARG);
	ev.sz = 1025;
	assert_int_equal(tnfctl_watch_read(r.w, &ev, 0), -TNFCTL_ERR_BADARG);
	assert_int_equal(tnfctl_watch_read(r.w, NULL, 0), -TNFCTL_ERR_BADARG);
	/* Nothing was consumed: the first event is still the workload's EXEC. */
	memset(&big, 0xff, sizeof(big));
	big.d.sz = sizeof(big);
	assert_int_equal(tnfctl_watch_read(r.w, &big.d, tl.timeout_ms), 1);
	assert_int_equal(big.d.kind, TNFCTL_WATCH_EXEC);
	assert_int_equal(big.d.pid, r.pid);
	assert_string_equal(big.d.path, self_exe);
	assert_int_equal(big.d.sz, sizeof(big));
	assert_int_equal(big.tail[0] | big.tail[1] | big.tail[2], 0);
	assert_int_equal(WEXITSTATUS(watch_end(&r)), 0);

	h = stop_to("exec", "/bin/true", TNFCTL_EVENT_EXEC);
	d.sz = TNFCTL_EVENT_DATA_SZ_MIN - 1;
	tl_assert_err(tnfctl_event_data_get(h, &d), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_event_data_get(h, NULL), TNFCTL_ERR_BADARG);
	memset(&ebig, 0xff, sizeof(ebig));
	ebig.d.sz = sizeof(ebig);
	tl_assert_err(tnfctl_event_data_get(h, &ebig.d), TNFCTL_ERR_NONE);
	assert_int_equal(ebig.d.event, TNFCTL_EVENT_EXEC);
	assert_string_equal(ebig.d.path, "/bin/true");
	assert_int_equal(ebig.tail[0] | ebig.tail[1] | ebig.tail[2], 0);
	stop_end(h);
}

/* Before any event there is nothing to give. */
static void test_data_before_event(void **state)
{
	struct tnfctl_event_data d = {.sz = sizeof(d)};
	char *argv[] = {"/bin/true", NULL};
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_exec_open_flags("/bin/true", argv, NULL, NULL, NULL,
					     TNFCTL_OPEN_NOPROBES, &h),
		      TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_track_pid(tl_targ_pid(h));
	tl_assert_err(tnfctl_event_data_get(h, &d), TNFCTL_ERR_BADARG);
	stop_end(h);
}

/* ------------------------------------------------------------------ */
/* `ld.so PROG`: ld.so run as a command, PROG's dlopen */

/* Our own PT_INTERP (the ld.so that runs us) into @buf. */
static void ldso_of_self(char *buf, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(self_exe, O_RDONLY | O_CLOEXEC), i;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		assert_int_equal(pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)),
				 (ssize_t)sizeof(ph));
		if (ph.p_type == PT_INTERP && ph.p_filesz < len) {
			assert_int_equal(pread(fd, buf, ph.p_filesz, ph.p_offset),
					 (ssize_t)ph.p_filesz);
			buf[ph.p_filesz] = '\0';
			close(fd);
			return;
		}
	}
	fail_msg("%s has no PT_INTERP", self_exe);
}

/*
 * BUG (fixed): run through its loader (`ld.so PROG`: the executable is
 * ld.so, AT_BASE 0), PROG's dlopen gave no DLOPEN in the stopping mode (the
 * library found no ld.so in the maps), and the watch reported rtld's
 * mapping of PROG as a DLOPEN with no name.  Now both report what PROG run
 * directly gives: one DLOPEN named as passed, one DLCLOSE, then EXIT 0.
 */
static void test_dlopen_via_ldso_stop(void **state)
{
	char ldso[PATH_MAX], plug[PATH_MAX];
	char *argv[] = {ldso, self_exe, "--wl", "dlopen", plug, NULL};
	struct tnfctl_event_data d = {.sz = sizeof(d)};
	static const tnfctl_event_t want[] = {TNFCTL_EVENT_DLOPEN, TNFCTL_EVENT_DLCLOSE,
					      TNFCTL_EVENT_EXIT};
	tnfctl_event_t evt;
	tnfctl_handle_t *h;
	size_t i;

	(void)state;
	tl_require_root();
	ldso_of_self(ldso, sizeof(ldso));
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	tl_assert_err(tnfctl_exec_open_flags(ldso, argv, NULL, NULL, NULL,
					     TNFCTL_OPEN_NOPROBES | TNFCTL_OPEN_EXEC_FAILED, &h),
		      TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_track_pid(tl_targ_pid(h));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
		if (evt != want[i])
			fail_msg("%s %s: event %zu is %d, expected %d", ldso, self_exe, i, evt,
				 want[i]);
		tl_assert_err(tnfctl_event_data_get(h, &d), TNFCTL_ERR_NONE);
		if (evt == TNFCTL_EVENT_DLOPEN)
			assert_string_equal(d.path, plug);
		if (evt == TNFCTL_EVENT_EXIT)
			assert_int_equal(d.exit_status, 0);
	}
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static void test_dlopen_via_ldso_watch(void **state)
{
	char ldso[PATH_MAX], plug[PATH_MAX];
	char *argv[] = {ldso, self_exe, "--wl", "dlopen", plug, NULL};
	struct tnfctl_watch_data ev = {.sz = sizeof(ev)};
	int n, opens = 0, closes = 0, st;
	char bad[PATH_MAX] = "";
	struct wrun r;

	(void)state;
	tl_require_root();
	tl_require_watch();
	ldso_of_self(ldso, sizeof(ldso));
	tl_path_of(plug, "tests/solibs/libtl_plug.so");
	tl_assert_err(tnfctl_watch_exec(ldso, argv, NULL, TNFCTL_WATCH_DL, &r.w, &r.pid),
		      TNFCTL_ERR_NONE);
	tl_track_pid(r.pid);
	for (;;) {
		n = tnfctl_watch_read(r.w, &ev, tl.timeout_ms);
		if (n != 1)
			fail_msg("tnfctl_watch_read: %d before END", n);
		if (ev.kind == TNFCTL_WATCH_END)
			break;
		if (ev.kind == TNFCTL_WATCH_LOST)
			fail_msg("events lost");
		if (ev.kind == TNFCTL_WATCH_DLOPEN && strcmp(ev.path, plug) && !bad[0])
			snprintf(bad, sizeof(bad), "%s", ev.path);
		opens += ev.kind == TNFCTL_WATCH_DLOPEN;
		closes += ev.kind == TNFCTL_WATCH_DLCLOSE;
	}
	st = watch_end(&r);
	if (opens != 1 || closes != 1 || bad[0])
		fail_msg("%s %s: %d DLOPEN (one named \"%s\") and %d DLCLOSE, expected one "
			 "each, the DLOPEN named %s",
			 ldso, self_exe, opens, bad, closes, plug);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_exec_300_stop),
		TL_TEST(test_exec_4000_stop),
		TL_TEST(test_exec_failed_4000_stop),
		TL_TEST(test_exec_too_long_stop),
		TL_TEST(test_dlopen_300_stop),
		TL_TEST(test_dlopen_4000_stop),
		TL_TEST(test_exec_300_watch),
		TL_TEST(test_exec_4000_watch),
		TL_TEST(test_exec_failed_4000_watch),
		TL_TEST(test_exec_too_long_watch),
		TL_TEST(test_dlopen_300_watch),
		TL_TEST(test_dlopen_4000_watch),
		TL_TEST(test_dlopen_via_ldso_stop),
		TL_TEST(test_dlopen_via_ldso_watch),
		TL_TEST(test_frozen_watch_event),
		TL_TEST(test_frozen_event_info),
		TL_TEST(test_data_sz_rules),
		TL_TEST(test_data_before_event),
		TL_FINAL_TEST,
	};

	if (argc > 2 && !strcmp(argv[1], "--wl"))
		return workload(argc - 2, argv + 2);
	if (tl_self_exe(self_exe, sizeof(self_exe)))
		return 1;
	return tl_run(tests);
}
