// SPDX-License-Identifier: BSD-2-Clause
/*
 * The probe layer against real targets: discovery and ids, states, the
 * trace file, records read back with tnfdump, dlopen/dlclose, fork, threads,
 * connected functions, internal and indirect handles, and each error code.
 */
#include <sys/uio.h>
#include "testlib.h"
#include "probelib.h"

/* ---------------------------------------------------------------- */

/* Every probe of the program and its preloaded library, ids 0.., link-map order. */
static void test_discovery_and_fresh_state(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;
	struct list l = {0};
	struct found *main_tick, *pre;
	tnfctl_probe_state_t st;
	int i;

	(void)state;
	tl_require_root();
	h = start(&p);
	tl_assert_err(tnfctl_probe_apply(h, collect, &l), TNFCTL_ERR_NONE);
	for (i = 0; i < l.n; i++)
		if (l.v[i].id != (unsigned long)i)
			fail_msg("probe %d (%s) has id %lu", i, l.v[i].name, l.v[i].id);
	main_tick = find(&l, "tl_main_tick");
	pre = find(&l, "tl_pre_tick");
	assert_non_null(main_tick);
	assert_non_null(find(&l, "tl_main_str"));
	assert_non_null(find(&l, "tl_thr"));
	assert_non_null(find(&l, "tl_child"));
	assert_non_null(pre);
	assert_null(find(&l, "tl_plug_tick")); /* not loaded yet */
	/* The executable comes before the preloaded library; declaration order within. */
	assert_true(main_tick->id < pre->id);
	assert_true(main_tick->id < find(&l, "tl_main_str")->id);
	assert_true(find(&l, "tl_main_str")->id < find(&l, "tl_thr")->id);
	assert_true(find(&l, "tl_thr")->id < find(&l, "tl_child")->id);
	assert_non_null(strstr(pre->obj, "libtl_pre.so"));
	tl_assert_err(tnfctl_probe_state_get(h, main_tick->p, &st), TNFCTL_ERR_NONE);
	assert_false(st.enabled);
	assert_true(st.traced);
	assert_null(st.func_names);
	assert_null(st.func_addrs);
	assert_true(st.new_probe);
	assert_non_null(strstr(st.attr_string, "name tl_main_tick;slots i ;keys tl main;file "));
	assert_non_null(strstr(st.attr_string, "tl_probes.c;line "));
	assert_non_null(strstr(st.attr_string, ";sunw%debug 'main tick'"));
	tl_close(h, TNFCTL_TARG_KILL);
}

/* Before a buffer: NOBUF; the buffer's argument checks; then attributes. */
static void test_buffer_alloc_errors_and_attrs(void **state)
{
	char file[PATH_MAX], cwd[PATH_MAX], rel[128];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;
	tnfctl_trace_attrs_t a;
	struct stat sb;

	(void)state;
	tl_require_root();
	h = start(&p);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_NONE);
	assert_null(a.trace_file_name);
	assert_int_equal(a.trace_min_size, 128 * 1024);
	assert_true(a.trace_state);
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NOBUF);
	tl_assert_err(tnfctl_probe_trace(h, tick, NULL), TNFCTL_ERR_NOBUF);
	tl_assert_err(tnfctl_probe_connect(h, tick, NULL, "tlpre_func_a"), TNFCTL_ERR_NOBUF);
	tl_assert_err(tnfctl_buffer_alloc(h, NULL, 1 << 20), TNFCTL_ERR_BADARG);
	trace_path(file, sizeof(file), "errs");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 1000), TNFCTL_ERR_SIZETOOSMALL);
	/* A relative name is the controller's cwd's. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	snprintf(rel, sizeof(rel), "rel-%d.tnf", getpid());
	unlink(rel);
	tl_assert_err(tnfctl_buffer_alloc(h, rel, 256 * 1024), TNFCTL_ERR_NONE);
	assert_int_equal(chdir(cwd), 0);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	snprintf(file, sizeof(file), "%s/%s", tmpdir, rel);
	assert_non_null(a.trace_file_name);
	assert_string_equal(a.trace_file_name, file);
	assert_int_equal(a.trace_buf_size, 256 * 1024);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_OK);
	assert_int_equal(stat(file, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(sb.st_size, 256 * 1024);
	tl_assert_err(tnfctl_buffer_alloc(h, "/tmp/other.tnf", 256 * 1024), TNFCTL_ERR_BUFEXISTS);
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_KILL);
	unlink(file);
}

/* A planted symlink or another user's file is refused; our own old file is replaced. */
static void test_buffer_alloc_refuses_plants(void **state)
{
	char file[PATH_MAX], victim[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	struct stat sb;
	int fd;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "plant");
	trace_path(victim, sizeof(victim), "victim");
	fd = open(victim, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(victim, file), 0);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_ACCES);
	assert_int_equal(stat(victim, &sb), 0);
	assert_int_equal(sb.st_size, 0); /* untouched */
	unlink(file);
	fd = open(file, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	close(fd);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_ACCES);
	assert_int_equal(chown(file, getuid(), getgid()), 0);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_NONE);
	assert_int_equal(stat(file, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	tl_close(h, TNFCTL_TARG_KILL);
	unlink(file);
	unlink(victim);
}

/* Enabled and traced probes land in the file; disabled ones do not. */
static void test_records_in_file(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "records");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_pre_tick"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 5");
	tl_send(p, "firepre 3");
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 5);
	assert_int_equal(count_events(out, "tl_main_tick", "i: 4"), 1);
	assert_int_equal(count_events(out, "tl_pre_tick", NULL), 3);
	assert_int_equal(count_events(out, "tl_main_str", NULL), 0); /* never enabled */
	assert_non_null(strstr(out, "tnf_name: \"tl_main_tick\""));
	unlink(file);
}

static int ctor_seen;

static void *enable_new(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_probe_state_t st;
	char name[64];

	if (tnfctl_probe_state_get(h, p, &st) == TNFCTL_ERR_NONE) {
		probe_name(st.attr_string, name, sizeof(name));
		if (!strcmp(name, "tl_plug_ctor") && st.new_probe)
			ctor_seen++;
	}
	tnfctl_probe_enable(h, p, NULL);
	return (void *)(uintptr_t)0x5eed;
}

static int destroyed;

static void count_destroy(void *d)
{
	if (d == (void *)(uintptr_t)0x5eed)
		destroyed++;
}

/*
 * A dlopened library's probes exist at the DLOPEN stop, with the create
 * callback run before tnfctl_continue returns: a probe in its constructor
 * enabled there fires.  After dlclose its probes are INVALIDPROBE and a new
 * dlopen gets fresh ids.
 */
static void test_dlopen_constructor_probe_and_dlclose(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX], cmd[PATH_MAX + 16];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *plug;
	tnfctl_probe_state_t st;
	unsigned long old_id, max_id = 0;
	struct list l = {0};
	int i;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "dlopen");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	ctor_seen = destroyed = 0;
	tl_assert_err(tnfctl_register_funcs(h, enable_new, count_destroy), TNFCTL_ERR_NONE);
	snprintf(cmd, sizeof(cmd), "dlopen %s", plug_lib);
	tl_send(p, "%s", cmd);
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	assert_int_equal(ctor_seen, 1);
	plug = probe_of(h, "tl_plug_tick");
	tl_assert_err(tnfctl_probe_state_get(h, plug, &st), TNFCTL_ERR_NONE);
	assert_true(st.enabled);
	assert_true(st.new_probe);
	assert_ptr_equal(st.client_registered_data, (void *)(uintptr_t)0x5eed);
	assert_non_null(strstr(st.obj_name, "libtl_plug.so"));
	old_id = st.id;
	tl_assert_err(tnfctl_probe_apply(h, collect, &l), TNFCTL_ERR_NONE);
	for (i = 0; i < l.n; i++)
		max_id = l.v[i].id > max_id ? l.v[i].id : max_id;
	tl_send(p, "fireplug 2");
	tl_send(p, "dlclose");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
	tl_expect_at(p, "ready", TL_AT);
	tl_expect_at(p, "dlopen ok", TL_AT);
	tl_expect_at(p, "firedplug 2", TL_AT);
	tl_assert_err(tnfctl_probe_state_get(h, plug, &st), TNFCTL_ERR_INVALIDPROBE);
	tl_assert_err(tnfctl_probe_enable(h, plug, NULL), TNFCTL_ERR_INVALIDPROBE);
	tl_assert_err(tnfctl_probe_apply_ids(h, 1, &old_id, enable_trace, NULL),
		      TNFCTL_ERR_INVALIDPROBE);
	tl_send(p, "%s", cmd);
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	assert_int_equal(ctor_seen, 2);
	plug = probe_of(h, "tl_plug_tick");
	tl_assert_err(tnfctl_probe_state_get(h, plug, &st), TNFCTL_ERR_NONE);
	assert_true(st.id > max_id); /* never reused */
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	/* destroy ran for every probe handle ever created, dlclosed ones included */
	assert_true(destroyed >= l.n + 2);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_plug_ctor", "where: \"constructor\""), 2);
	assert_int_equal(count_events(out, "tl_plug_tick", NULL), 2);
	unlink(file);
}

/* apply_ids in array order; an unknown id stops with INVALIDPROBE. */
static void test_apply_ids(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;
	struct list all = {0}, some = {0};
	ulong_t ids[3];

	(void)state;
	tl_require_root();
	h = start(&p);
	tl_assert_err(tnfctl_probe_apply(h, collect, &all), TNFCTL_ERR_NONE);
	assert_true(all.n >= 3);
	ids[0] = all.v[2].id;
	ids[1] = all.v[0].id;
	tl_assert_err(tnfctl_probe_apply_ids(h, 2, ids, collect, &some), TNFCTL_ERR_NONE);
	assert_int_equal(some.n, 2);
	assert_string_equal(some.v[0].name, all.v[2].name);
	assert_string_equal(some.v[1].name, all.v[0].name);
	ids[0] = all.v[1].id;
	ids[1] = 100000;
	ids[2] = all.v[0].id;
	some.n = 0;
	tl_assert_err(tnfctl_probe_apply_ids(h, 3, ids, collect, &some), TNFCTL_ERR_INVALIDPROBE);
	assert_int_equal(some.n, 1);
	tl_assert_err(tnfctl_probe_apply(h, NULL, NULL), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_KILL);
}

static tnfctl_errcode_t stop_at_second(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)h;
	(void)p;
	return ++*(int *)cd == 2 ? TNFCTL_ERR_USR3 : TNFCTL_ERR_NONE;
}

/* A client code stops the iteration and comes back unchanged. */
static void test_apply_stops_at_client_code(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int n = 0;

	(void)state;
	tl_require_root();
	h = start(&p);
	tl_assert_err(tnfctl_probe_apply(h, stop_at_second, &n), TNFCTL_ERR_USR3);
	assert_int_equal(n, 2);
	tl_close(h, TNFCTL_TARG_KILL);
}

/*
 * Connected functions run most recent first, before the commit; untraced,
 * they still run but no record is written; disconnect_all removes them.
 */
static void test_connect_untrace_disconnect(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX], cmd[PATH_MAX + 16];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;
	tnfctl_probe_state_t st;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "connect");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_probe_connect(h, tick, NULL, "no_such_function"), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_connect(h, tick, "libnosuch.so", "tlpre_func_a"),
		      TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_connect(h, tick, NULL, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_connect(h, tick, "libtl_pre.so", "tlpre_func_a"),
		      TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_connect(h, tick, NULL, "tlpre_func_b"), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_NONE);
	assert_non_null(st.func_names);
	assert_string_equal(st.func_names[0], "tlpre_func_b");
	assert_string_equal(st.func_names[1], "tlpre_func_a");
	assert_null(st.func_names[2]);
	assert_true(st.func_addrs[0] && st.func_addrs[1] && !st.func_addrs[2]);
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 2");
	tl_send(p, "chainlog");
	snprintf(cmd, sizeof(cmd), "dlopen %s", plug_lib);
	tl_send(p, "%s", cmd);
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_expect_at(p, "ready", TL_AT);
	tl_expect_at(p, "fired 2", TL_AT);
	tl_expect_at(p, "chainlog baba", TL_AT);
	tl_assert_err(tnfctl_probe_untrace(h, tick, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_NONE);
	assert_false(st.traced);
	assert_true(st.enabled);
	tl_send(p, "fire 1");
	tl_send(p, "chainlog");
	tl_send(p, "dlclose");
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
	tl_expect_at(p, "dlopen ok", TL_AT);
	tl_expect_at(p, "fired 1", TL_AT);
	tl_expect_at(p, "chainlog bababa", TL_AT);
	tl_assert_err(tnfctl_probe_disconnect_all(h, tick, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_trace(h, tick, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_NONE);
	assert_null(st.func_names);
	assert_null(st.func_addrs);
	tl_send(p, "fire 3");
	tl_send(p, "chainlog");
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect_at(p, "dlclose 0", TL_AT);
	tl_expect_at(p, "fired 3", TL_AT);
	tl_expect_at(p, "chainlog bababa", TL_AT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	/* 2 traced, 1 untraced (rolled back), 3 traced after */
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 5);
	unlink(file);
}

/* disable stops records; a probe fires only while enabled. */
static void test_disable(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX], cmd[PATH_MAX + 16];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "disable");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NONE);
	snprintf(cmd, sizeof(cmd), "dlopen %s", plug_lib);
	tl_send(p, "fire 4");
	tl_send(p, "%s", cmd);
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_assert_err(tnfctl_probe_disable(h, tick, NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 7");
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 4);
	unlink(file);
}

/* A child forked with no child handle writes into the same file with its own pid. */
static void test_fork_child_same_file(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX], want[64];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int child = 0, st = -1;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "fork");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_child"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 2");
	tl_send(p, "fork_fire 6");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_expect_at(p, "ready", TL_AT);
	tl_expect_at(p, "fired 2", TL_AT);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect_at(p, "forkfired", TL_AT);
	assert_int_equal(sscanf(p->line, "forkfired %d status %d", &child, &st), 2);
	assert_int_equal(st, 0);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_child", NULL), 6);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 2);
	snprintf(want, sizeof(want), " %5d %5d ", child, child);
	{
		/* every tl_child line carries the child's pid */
		const char *s = out;
		int n = 0;

		while ((s = strstr(s, want))) {
			n++;
			s++;
		}
		assert_int_equal(n, 6);
	}
	unlink(file);
}

/* A vfork child fires into the parent's file (as the parent: shared memory) and all is well. */
static void test_vfork_child_fires(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "vfork");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_vchild"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "vfork_fire 5");
	tl_send(p, "fire 2");
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_expect_at(p, "ready", TL_AT);
	tl_expect_at(p, "vforkfired", TL_AT);
	assert_non_null(strstr(p->line, "status 0"));
	tl_expect_at(p, "fired 2", TL_AT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_vchild", NULL), 5);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 2);
}

/*
 * exec from a non-leader thread with probes enabled: EXEC; after SUSPEND
 * and pid_open the new image has fresh, virgin probes and no trace file,
 * and a new file records its probes.
 */
static void test_exec_from_thread_new_image(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX], file2[PATH_MAX];
	tnfctl_probe_state_t st;
	tnfctl_trace_attrs_t a;
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "exec1");
	trace_path(file2, sizeof(file2), "exec2");
	tnfctl_probe_t *tick;

	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_thr"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NONE);
	tl_send(p, "threads_fire 2 10");
	tl_send(p, "thread_execself");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXEC);
	/* the old image's probes are gone with it */
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	h = tl_pid_open(p->pid);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_NONE);
	assert_null(a.trace_file_name);
	tl_assert_err(tnfctl_probe_state_get(h, probe_of(h, "tl_main_tick"), &st), TNFCTL_ERR_NONE);
	assert_false(st.enabled);
	tl_assert_err(tnfctl_buffer_alloc(h, file2, 512 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 4");
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_thr", NULL), 20);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 0);
	assert_int_equal(dump(file2, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 4);
}

/*
 * A target running as another user: root controls it, and the file it
 * creates (0600) is given to the target's uid, which writes its records.
 */
static void test_target_of_other_uid(void **state)
{
	static char out[1 << 20];
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16], pre[2 * PATH_MAX + 32], file[PATH_MAX];
	char *argv[] = {probes_prog, cfd, rfd, NULL};
	const char *extra[] = {pre, NULL};
	tnfctl_handle_t *h;
	struct stat sb;
	char **env;
	pid_t pid;

	(void)state;
	tl_require_root();
	paths();
	if (access(probes_prog, X_OK) || faccessat(AT_FDCWD, probes_prog, X_OK, AT_EACCESS)) {
		print_message("SKIP: %s is not executable\n", probes_prog);
		skip();
	}
	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s %s", tl.probe, pre_lib);
	env = tl_env_build(extra);
	tl_set_cloexec(p->t_cmd_r, 0);
	tl_set_cloexec(p->t_reply_w, 0);
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(126);
		execve(probes_prog, argv, env);
		_exit(127);
	}
	free(env);
	tl_proc_handed_over(p);
	tl_proc_set_pid(p, pid);
	{
		const char *l = tl_read_line(p, tl.timeout_ms);

		int st;

		if (!l || strncmp(l, "ready", 5)) {
			st = tl_reap(pid);
			/* 126: setuid refused; 127: execve or ld.so refused (a 0700 dir) */
			if (WIFEXITED(st) && (WEXITSTATUS(st) == 126 || WEXITSTATUS(st) == 127)) {
				print_message(
					"SKIP: uid 65534 cannot run the build tree's programs "
					"here (exit %d)\n",
					WEXITSTATUS(st));
				skip();
			}
			/* anything else is the preloaded runtime failing in that process */
			fail_msg("the uid 65534 target said \"%s\", then ended with status 0x%x",
				 l ? l : "(nothing)", st);
		}
	}
	h = tl_pid_open(pid);
	/* /tmp, not our 0700 directory: the target must reach the file */
	snprintf(file, sizeof(file), "/tmp/tl-otheruid-%d.tnf", getpid());
	unlink(file);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_NONE);
	assert_int_equal(stat(file, &sb), 0);
	assert_int_equal(sb.st_uid, 65534);
	assert_int_equal(sb.st_mode & 07777, 0600);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 3");
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	tl_reap(pid);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	unlink(file);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 3);
}

/* 4 threads at once: exactly N records per thread. */
static void test_threads_exact_counts(void **state)
{
	static char out[4 << 20];
	char file[PATH_MAX], what[32];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int t;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "threads");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 4 << 20), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_thr"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "threads_fire 4 500");
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_thr", NULL), 2000);
	for (t = 0; t < 4; t++) {
		snprintf(what, sizeof(what), "t: %d ", t);
		assert_int_equal(count_events(out, "tl_thr", what), 500);
	}
	unlink(file);
}

/* Probe states and the file persist after RESUME; a new controller finds both. */
static void test_state_persists_after_resume(void **state)
{
	static char out[1 << 20];
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_state_t st;
	tnfctl_trace_attrs_t a;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "persist");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_untrace(h, probe_of(h, "tl_main_str"), NULL), TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_send(p, "fire 3");
	tl_expect_at(p, "ready", TL_AT);
	tl_expect_at(p, "fired 3", TL_AT);
	h = tl_pid_open(p->pid);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_non_null(a.trace_file_name);
	assert_string_equal(a.trace_file_name, file);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_OK);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_BUFEXISTS);
	tl_assert_err(tnfctl_probe_state_get(h, probe_of(h, "tl_main_tick"), &st), TNFCTL_ERR_NONE);
	assert_true(st.enabled);
	assert_true(st.traced);
	tl_assert_err(tnfctl_probe_state_get(h, probe_of(h, "tl_main_str"), &st), TNFCTL_ERR_NONE);
	assert_false(st.traced);
	tl_close(h, TNFCTL_TARG_KILL);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_main_tick", NULL), 3);
	unlink(file);
}

/* The target cannot map its file: BROKEN, and probe changes say BUFBROKEN. */
static void test_broken_buffer(void **state)
{
	char file[PATH_MAX], cmd[PATH_MAX + 16];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	tnfctl_probe_t *tick;
	tnfctl_trace_attrs_t a;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "broken");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_NONE);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_probe_enable(h, tick, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(unlink(file), 0);
	tl_send(p, "fire 1");
	snprintf(cmd, sizeof(cmd), "dlopen %s", plug_lib);
	tl_send(p, "%s", cmd);
	tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
	tl_expect_at(p, "ready", TL_AT);
	tl_expect_at(p, "fired 1", TL_AT);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_BROKEN);
	tl_assert_err(tnfctl_probe_disable(h, tick, NULL), TNFCTL_ERR_BUFBROKEN);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 512 * 1024), TNFCTL_ERR_BUFEXISTS);
	tl_close(h, TNFCTL_TARG_KILL);
}

/* Bad arguments: NULLs, a probe of another handle, a handle past EXIT. */
static void test_probe_badargs(void **state)
{
	struct tl_proc *p, *q;
	tnfctl_handle_t *h, *g;
	tnfctl_probe_state_t st;
	tnfctl_probe_t *tick;

	(void)state;
	tl_require_root();
	h = start(&p);
	g = start(&q);
	tick = probe_of(h, "tl_main_tick");
	tl_assert_err(tnfctl_probe_state_get(NULL, tick, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_state_get(h, NULL, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_state_get(h, tick, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_state_get(g, tick, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_enable(NULL, tick, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_check_libs(NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_register_funcs(NULL, NULL, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_buffer_alloc(NULL, "/tmp/x", 1 << 20), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_check_libs(h), TNFCTL_ERR_NONE);
	tl_close(g, TNFCTL_TARG_KILL);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_assert_err(tnfctl_probe_state_get(h, tick, &st), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply(h, collect, NULL), TNFCTL_ERR_BADARG);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* Runs tl_internal with @args; its stdout into @out; returns the exit status. */
static int run_internal(const char *args, char *out, size_t len)
{
	char cmd[PATH_MAX * 4];
	size_t n = 0, r;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s", internal_prog, args);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (n + 1 < len && (r = fread(out + n, 1, len - 1 - n, f)) > 0)
		n += r;
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A process traces its own probes, including a library it dlopens later. */
static void test_internal_mode(void **state)
{
	static char out[1 << 20], dout[1 << 20];
	char file[PATH_MAX], args[PATH_MAX * 2 + 8], want[PATH_MAX + 64];

	(void)state;
	paths();
	trace_path(file, sizeof(file), "internal");
	snprintf(args, sizeof(args), "run %s %s", file, plug_lib);
	assert_int_equal(run_internal(args, out, sizeof(out)), 0);
	printf("%s", out);
	assert_non_null(strstr(out, "second 16\n"));	   /* BUSY */
	assert_non_null(strstr(out, "enable-nobuf 12\n")); /* NOBUF */
	assert_non_null(strstr(out, "alloc 0\n"));
	assert_non_null(strstr(out, "apply 0 probes 1\n"));
	snprintf(want, sizeof(want), "attrs %s 262144 0\n", file);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "apply-after-dlopen 0 probes 3\n"));
	assert_non_null(strstr(out, "close 0\n"));
	assert_non_null(strstr(out, "reopen 0\n"));
	assert_int_equal(dump(file, dout, sizeof(dout)), 0);
	assert_int_equal(count_events(dout, "tl_self_tick", NULL), 3);
	assert_int_equal(count_events(dout, "tl_plug_tick", NULL), 2);
	assert_int_equal(count_events(dout, "tl_plug_ctor", NULL), 0); /* before enabling */
	unlink(file);
}

/*
 * A program that links neither libtnfprobe nor preloads it: internal_open
 * loads the runtime after the program's probes were found, and they must
 * still be set up (they used to stay inert: enabled, and silent).
 */
static void test_internal_mode_loads_runtime(void **state)
{
	static char out[4096], dout[1 << 20];
	char file[PATH_MAX], args[PATH_MAX + 16];

	(void)state;
	paths();
	trace_path(file, sizeof(file), "internal-simple");
	snprintf(args, sizeof(args), "simple %s", file);
	assert_int_equal(run_internal(args, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "simple 0 probes 1\n"));
	assert_int_equal(dump(file, dout, sizeof(dout)), 0);
	assert_int_equal(count_events(dout, "tl_self_tick", NULL), 5);
}

/* Internal and external control exclude each other (BUSY both ways). */
static void test_internal_external_busy(void **state)
{
	char *argv[] = {internal_prog, "try", NULL};
	tnfctl_handle_t *h;
	tnfctl_event_info_t info;
	int in[2], outp[2], st;
	pid_t pid;
	char buf[64];
	ssize_t n;

	(void)state;
	tl_require_root();
	paths();
	/* external first: the target's own internal_open gets BUSY */
	tl_assert_err(tnfctl_exec_open(internal_prog, argv, NULL, NULL, NULL, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_track_pid(tl_targ_pid(h));
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_assert_err(tnfctl_event_info_get(h, &info), TNFCTL_ERR_NONE);
	assert_int_equal(info.exit_status, TNFCTL_ERR_BUSY);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	/* internal first: pid_open gets BUSY and leaves it running */
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(outp, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		char pre[PATH_MAX];

		dup2(in[0], 0);
		dup2(outp[1], 1);
		snprintf(pre, sizeof(pre), "%s", internal_prog);
		execl(pre, pre, "hold", (char *)NULL);
		_exit(127);
	}
	tl_track_pid(pid);
	close(in[0]);
	close(outp[1]);
	for (n = 0; n < (ssize_t)sizeof(buf) - 1 && (n == 0 || buf[n - 1] != '\n');) {
		ssize_t r = read(outp[0], buf + n, sizeof(buf) - 1 - n);

		assert_true(r > 0);
		n += r;
	}
	buf[n] = '\0';
	assert_string_equal(buf, "held\n");
	tl_assert_err(tnfctl_pid_open(pid, &h), TNFCTL_ERR_BUSY);
	/* resumed: it sees EOF and exits 0 by itself */
	close(in[1]);
	assert_int_equal(tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(outp[0]);
}

/* ---- indirect mode: our own callbacks over process_vm_* and /proc/PID/maps ---- */

struct ind {
	pid_t pid;
	int reads, writes, iters;
};

static int ind_read(void *ph, uintptr_t addr, void *buf, size_t len)
{
	struct ind *c = ph;
	struct iovec l = {buf, len}, r = {(void *)addr, len};

	c->reads++;
	return process_vm_readv(c->pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int ind_write(void *ph, uintptr_t addr, void *buf, size_t len)
{
	struct ind *c = ph;
	struct iovec l = {buf, len}, r = {(void *)addr, len};

	c->writes++;
	return process_vm_writev(c->pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

static pid_t ind_getpid(void *ph)
{
	return ((struct ind *)ph)->pid;
}

/* Objects: the first mapping (offset 0) of each file; PIE/DSO bias = its start. */
static int ind_iter(void *ph, tnfctl_ind_obj_f *fn, void *cd)
{
	struct ind *c = ph;
	char path[64], line[PATH_MAX + 128], seen[64][PATH_MAX];
	int nseen = 0, ret = 0, i;
	FILE *f;

	c->iters++;
	snprintf(path, sizeof(path), "/proc/%d/maps", c->pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned long start, off;
		char name[PATH_MAX] = "";
		tnfctl_ind_obj_info_t oi = {.objfd = -1};

		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &start, &off, name) < 3 ||
		    name[0] != '/' || off != 0)
			continue;
		for (i = 0; i < nseen; i++)
			if (!strcmp(seen[i], name))
				break;
		if (i < nseen || nseen == 64)
			continue;
		snprintf(seen[nseen++], PATH_MAX, "%s", name);
		oi.text_base = oi.data_base = start;
		oi.objname = name;
		ret = fn(ph, &oi, cd);
	}
	fclose(f);
	return ret;
}

static void test_indirect_mode(void **state)
{
	tnfctl_ind_config_t cfg = {ind_read, ind_write, ind_getpid, ind_iter};
	struct tl_proc *p;
	tnfctl_handle_t *h, *ih;
	tnfctl_probe_state_t st;
	struct list l = {0}, il = {0};
	struct ind c = {0};
	char file[PATH_MAX];
	struct found *f;

	(void)state;
	tl_require_root();
	h = start(&p);
	c.pid = tl_targ_pid(h);
	tl_assert_err(tnfctl_indirect_open(&c, NULL, &ih), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_indirect_open(&c, &cfg, &ih), TNFCTL_ERR_NONE);
	assert_true(c.iters > 0 && c.reads > 0);
	tl_assert_err(tnfctl_continue(ih, (tnfctl_event_t[]){0}, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply(ih, collect, &il), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_apply(h, collect, &l), TNFCTL_ERR_NONE);
	assert_int_equal(il.n, l.n);
	f = find(&il, "tl_main_tick");
	assert_non_null(f);
	/* NOBUF until the file exists, then a change made through the callbacks */
	tl_assert_err(tnfctl_probe_enable(ih, f->p, NULL), TNFCTL_ERR_NOBUF);
	trace_path(file, sizeof(file), "indirect");
	tl_assert_err(tnfctl_buffer_alloc(ih, file, 256 * 1024), TNFCTL_ERR_NONE);
	c.writes = 0;
	tl_assert_err(tnfctl_probe_enable(ih, f->p, NULL), TNFCTL_ERR_NONE);
	assert_true(c.writes > 0);
	tl_close(ih, TNFCTL_TARG_DEFAULT);
	tl_assert_err(tnfctl_check_libs(h), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_state_get(h, probe_of(h, "tl_main_tick"), &st), TNFCTL_ERR_NONE);
	assert_true(st.enabled);
	tl_close(h, TNFCTL_TARG_KILL);
	unlink(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_discovery_and_fresh_state),
		TL_TEST(test_buffer_alloc_errors_and_attrs),
		TL_TEST(test_buffer_alloc_refuses_plants),
		TL_TEST(test_records_in_file),
		TL_TEST(test_dlopen_constructor_probe_and_dlclose),
		TL_TEST(test_apply_ids),
		TL_TEST(test_apply_stops_at_client_code),
		TL_TEST(test_connect_untrace_disconnect),
		TL_TEST(test_disable),
		TL_TEST(test_fork_child_same_file),
		TL_TEST(test_vfork_child_fires),
		TL_TEST(test_exec_from_thread_new_image),
		TL_TEST(test_target_of_other_uid),
		TL_TEST(test_threads_exact_counts),
		TL_TEST(test_state_persists_after_resume),
		TL_TEST(test_broken_buffer),
		TL_TEST(test_probe_badargs),
		TL_TEST(test_internal_mode),
		TL_TEST(test_internal_mode_loads_runtime),
		TL_TEST(test_internal_external_busy),
		TL_TEST(test_indirect_mode),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
