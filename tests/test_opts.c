// SPDX-License-Identifier: BSD-2-Clause
/*
 * The options structs (struct tnfctl_open_opts, struct tnfctl_watch_opts)
 * keep their rules: a larger struct with a zero tail works, a non-zero
 * tail is refused, an older caller's smaller struct is read only up to its
 * sz, and out-of-range values are refused before anything starts.
 */
#include <sys/mman.h>
#include "testlib.h"

static char *true_argv[] = {"/bin/true", NULL};

/* The options struct of a newer program: fields this library lacks after it. */
struct newer_watch_opts {
	struct tnfctl_watch_opts o;
	uint64_t tail[2];
};

struct newer_open_opts {
	struct tnfctl_open_opts o;
	uint64_t tail[2];
};

/* /bin/true under a watch with @opts: NONE, and its tree ends. */
static void watch_true(const struct tnfctl_watch_opts *opts)
{
	tnfctl_watch_event_t ev;
	tnfctl_watch_t *w;
	pid_t pid;
	int r;

	tl_require_watch();
	tl_assert_err(tnfctl_watch_exec_opts("/bin/true", true_argv, NULL, opts, &w, &pid),
		      TNFCTL_ERR_NONE);
	tl_track_pid(pid);
	while ((r = tnfctl_watch_next(w, &ev, tl.timeout_ms)) == 1 && ev.kind != TNFCTL_WATCH_END)
		;
	assert_int_equal(r, 1);
	tnfctl_watch_close(w);
	assert_int_equal(tl_reap(pid), 0);
}

/* No process was started: the calls refused before any fork. */
static void assert_no_child(void)
{
	int st;

	assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* A newer program's larger struct, its unknown fields zero: accepted. */
static void test_opts_larger_zero_tail(void **state)
{
	struct newer_watch_opts wo;
	struct newer_open_opts oo;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	memset(&oo, 0, sizeof(oo));
	oo.o.sz = sizeof(oo);
	oo.o.flags = TNFCTL_OPEN_NOPROBES;
	tl_assert_err(tnfctl_exec_open_opts("/bin/true", true_argv, NULL, &oo.o, &h),
		      TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_close(h, TNFCTL_TARG_KILL), TNFCTL_ERR_NONE);
	/* the watch's half last: it skips where the watch cannot run */
	memset(&wo, 0, sizeof(wo));
	wo.o.sz = sizeof(wo);
	wo.o.flags = TNFCTL_WATCH_DL;
	watch_true(&wo.o);
}

/* A non-zero byte past the known fields (an option this library lacks): BADARG. */
static void test_opts_nonzero_tail_refused(void **state)
{
	struct newer_watch_opts wo;
	struct newer_open_opts oo;
	tnfctl_handle_t *h = NULL;
	tnfctl_watch_t *w = NULL;
	pid_t pid = 0;

	(void)state;
	memset(&wo, 0, sizeof(wo));
	wo.o.sz = sizeof(wo);
	wo.tail[1] = 1;
	tl_assert_err(tnfctl_watch_exec_opts("/bin/true", true_argv, NULL, &wo.o, &w, &pid),
		      TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_watch_open_opts(getpid(), &wo.o, &w), TNFCTL_ERR_BADARG);
	assert_null(w);
	memset(&oo, 0, sizeof(oo));
	oo.o.sz = sizeof(oo);
	((unsigned char *)&oo)[sizeof(oo) - 1] = 0x80;
	tl_assert_err(tnfctl_exec_open_opts("/bin/true", true_argv, NULL, &oo.o, &h),
		      TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_pid_open_opts(getpid(), &oo.o, &h), TNFCTL_ERR_BADARG);
	assert_null(h);
	assert_no_child();
}

/*
 * An older program's struct (sz covering only sz and flags): the fields
 * past it are not read, whatever the memory there holds.
 */
static void test_opts_older_caller(void **state)
{
	struct tnfctl_watch_opts o;

	(void)state;
	tl_require_root();
	memset(&o, 0, sizeof(o));
	o.sz = offsetof(struct tnfctl_watch_opts, delay_ms);
	o.delay_ms = 5000; /* out of range if it were read */
	o.ring_size = 1;
	watch_true(&o);
}

/*
 * A garbage sz (over the 1024 allowed) is refused, not scanned: the struct
 * ends a page whose next page is unmapped, where a scan would crash.
 */
static void garbage_sz_refused(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct tnfctl_watch_opts *o;
	tnfctl_watch_t *w = NULL;
	char *p;

	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(munmap(p + pg, pg), 0);
	o = (struct tnfctl_watch_opts *)(p + pg - sizeof(*o));
	o->sz = 1025;
	tl_assert_err(tnfctl_watch_open_opts(getpid(), o, &w), TNFCTL_ERR_BADARG);
	o->sz = (size_t)-1;
	tl_assert_err(tnfctl_watch_open_opts(getpid(), o, &w), TNFCTL_ERR_BADARG);
	assert_null(w);
	munmap(p, pg);
}

/* sz too small, values out of range, options of the other kind: BADARG, nothing started. */
static void test_opts_bad_values(void **state)
{
	TNFCTL_OPTS(tnfctl_watch_opts, wo);
	TNFCTL_OPTS(tnfctl_open_opts, oo, .ld_preload = "libc.so.6");
	tnfctl_handle_t *h = NULL;
	tnfctl_watch_t *w = NULL;
	pid_t pid = 0;

	(void)state;
	wo.sz = 0;
	tl_assert_err(tnfctl_watch_open_opts(getpid(), &wo, &w), TNFCTL_ERR_BADARG);
	wo.sz = sizeof(size_t) - 1;
	tl_assert_err(tnfctl_watch_open_opts(getpid(), &wo, &w), TNFCTL_ERR_BADARG);
	garbage_sz_refused();
	wo.sz = sizeof(wo);
	wo.delay_ms = 1001;
	tl_assert_err(tnfctl_watch_exec_opts("/bin/true", true_argv, NULL, &wo, &w, &pid),
		      TNFCTL_ERR_BADARG);
	wo.delay_ms = 0;
	wo.ring_size = 4095;
	tl_assert_err(tnfctl_watch_exec_opts("/bin/true", true_argv, NULL, &wo, &w, &pid),
		      TNFCTL_ERR_BADARG);
	wo.ring_size = (size_t)2 << 30;
	tl_assert_err(tnfctl_watch_exec_opts("/bin/true", true_argv, NULL, &wo, &w, &pid),
		      TNFCTL_ERR_BADARG);
	wo.ring_size = 0;
	/* FOREGROUND is tnfctl_watch_exec's alone */
	wo.flags = TNFCTL_WATCH_FOREGROUND;
	tl_assert_err(tnfctl_watch_open_opts(getpid(), &wo, &w), TNFCTL_ERR_BADARG);
	wo.flags = 0x80;
	tl_assert_err(tnfctl_watch_exec_opts("/bin/true", true_argv, NULL, &wo, &w, &pid),
		      TNFCTL_ERR_BADARG);
	assert_null(w);
	/* the exec-only fields on a pid_open */
	tl_assert_err(tnfctl_pid_open_opts(getpid(), &oo, &h), TNFCTL_ERR_BADARG);
	oo.ld_preload = NULL;
	oo.flags = TNFCTL_OPEN_FOREGROUND;
	tl_assert_err(tnfctl_pid_open_opts(getpid(), &oo, &h), TNFCTL_ERR_BADARG);
	assert_null(h);
	assert_no_child();
}

/* NULL options are the defaults. */
static void test_opts_null_defaults(void **state)
{
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_exec_open_opts(tl.demo, (char *[]){tl.demo, NULL}, NULL, NULL, &h),
		      TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_close(h, TNFCTL_TARG_KILL), TNFCTL_ERR_NONE);
	watch_true(NULL); /* last: it skips where the watch cannot run */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_opts_larger_zero_tail), TL_TEST(test_opts_nonzero_tail_refused),
		TL_TEST(test_opts_older_caller),     TL_TEST(test_opts_bad_values),
		TL_TEST(test_opts_null_defaults),    TL_FINAL_TEST,
	};

	return tl_run(tests);
}
