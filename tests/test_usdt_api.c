// SPDX-License-Identifier: BSD-2-Clause
/*
 * The API around the USDT probes of a TNFCTL_OPEN_NOPROBES handle, at its
 * edges (an attacker's findings): create callbacks that register other
 * functions or none, or call tnfctl_continue/tnfctl_close (BADARG); a
 * create callback alone lists a running or static program's probes; a
 * caller signalled every millisecond still enables; the old image's probes
 * are INVALIDPROBE after an EXEC.  Targets: tl_sdt (probes tick and word),
 * tl_sdt_static, tl_sdt_tree.
 */
#include <pthread.h>
#include "testlib.h"
#include "probelib.h"

static char sdt_prog[PATH_MAX], static_prog[PATH_MAX], tree_prog[PATH_MAX];

static void require_uprobes(void)
{
	tl_require_root();
	if (access("/sys/bus/event_source/devices/uprobe", F_OK)) {
		print_message("SKIP: the kernel has no uprobe events (CONFIG_UPROBE_EVENTS)\n");
		skip();
	}
	paths();
	tl_path_of(sdt_prog, "tests/helpers/tl_sdt");
	tl_path_of(static_prog, "tests/helpers/tl_sdt_static");
	tl_path_of(tree_prog, "tests/helpers/tl_sdt_tree");
}

/* @prog (tl_sdt or tl_sdt_static) started and pid_open'd NOPROBES: stopped, running main's loop. */
static tnfctl_handle_t *open_sdt(const char *prog, struct tl_proc **pp)
{
	tnfctl_handle_t *h;

	*pp = tl_start_target(prog, 0);
	tl_assert_err(tnfctl_pid_open_flags((*pp)->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	return h;
}

static void end_sdt(tnfctl_handle_t *h, struct tl_proc *p)
{
	tnfctl_event_t evt;

	tl_send(p, "exit");
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(evt, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static int created, created2, destroyed;

/* One of tl_sdt's probes (a sanitizer build's programs also load libstdc++'s). */
static bool sdt_probe(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_probe_state_t st;

	tl_assert_err(tnfctl_probe_state_get(h, p, &st), TNFCTL_ERR_NONE);
	return strstr(st.attr_string, ";provider tl_sdt;") != NULL;
}

static void *count_create(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	return sdt_probe(h, p) ? (void *)(intptr_t)++created : NULL;
}

/* Counts the data it is given (register_funcs also gives it the NULL of a probe not created). */
static void count_destroy(void *cd)
{
	destroyed += cd != NULL;
}

/* @prog (tl_sdt, tl_sdt_static) opened as open_sdt, @create and @destroy registered. */
static tnfctl_handle_t *registered(const char *prog, struct tl_proc **pp,
				   void *(*create)(tnfctl_handle_t *, tnfctl_probe_t *),
				   void (*destroy)(void *))
{
	tnfctl_handle_t *h = open_sdt(prog, pp);

	created = created2 = destroyed = 0;
	tl_assert_err(tnfctl_register_funcs(h, create, destroy), TNFCTL_ERR_NONE);
	return h;
}

/* A create callback alone lists the probes of a running program (no probe call). */
static void test_register_funcs_lists_running(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	require_uprobes();
	h = registered(sdt_prog, &p, count_create, NULL);
	assert_int_equal(created, 2); /* tick and word (it was 0) */
	end_sdt(h, p);
}

/* ... and of a static one (its executable is its one object). */
static void test_register_funcs_lists_static(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	require_uprobes();
	h = registered(static_prog, &p, count_create, NULL);
	assert_int_equal(created, 2);
	end_sdt(h, p);
}

static void *unregister(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	if (!sdt_probe(h, p))
		return NULL;
	created++;
	tl_assert_err(tnfctl_register_funcs(h, NULL, NULL), TNFCTL_ERR_NONE);
	return NULL;
}

/* A create callback that unregisters: the next probe gets none (the caller jumped to 0). */
static void test_create_unregisters(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	require_uprobes();
	h = registered(sdt_prog, &p, unregister, NULL);
	assert_int_equal(created, 1);
	end_sdt(h, p);
}

static void *count_create2(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	return sdt_probe(h, p) ? (void *)(intptr_t)(100 + ++created2) : NULL;
}

static void *reregister(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	if (!sdt_probe(h, p))
		return NULL;
	created++;
	tl_assert_err(tnfctl_register_funcs(h, count_create2, NULL), TNFCTL_ERR_NONE);
	return (void *)(intptr_t)1;
}

static tnfctl_errcode_t check_data(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_probe_state_t st;

	(void)cd;
	tl_assert_err(tnfctl_probe_state_get(h, p, &st), TNFCTL_ERR_NONE);
	if (sdt_probe(h, p) && (intptr_t)st.client_registered_data <= 100)
		fail_msg("probe %lu: data %p, not the second create's", st.id,
			 st.client_registered_data);
	return TNFCTL_ERR_NONE;
}

/*
 * A create callback that registers other functions: those run once on
 * every probe, and the first callback's data goes to its destroy (probes
 * were created twice, and that data leaked).
 */
static void test_create_registers_again(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	require_uprobes();
	h = registered(sdt_prog, &p, reregister, count_destroy);
	assert_int_equal(created, 1);
	assert_int_equal(created2, 2);
	assert_int_equal(destroyed, 1);
	tl_assert_err(tnfctl_probe_apply(h, check_data, NULL), TNFCTL_ERR_NONE);
	end_sdt(h, p);
}

static tnfctl_handle_t *cb_handle;
static tnfctl_errcode_t nested_register, nested_apply;

static tnfctl_errcode_t nop(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)h;
	(void)p;
	(void)cd;
	return TNFCTL_ERR_NONE;
}

static void *alloc_create(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	(void)h;
	(void)p;
	created++;
	return malloc(16);
}

/* Calls the library on the handle, then frees its datum. */
static void calling_destroy(void *cd)
{
	if (!cd)
		return;
	destroyed++;
	nested_register = tnfctl_register_funcs(cb_handle, NULL, NULL);
	nested_apply = tnfctl_probe_apply(cb_handle, nop, NULL);
	free(cd);
}

/*
 * A destroy callback that calls the library on the handle: BADARG, and
 * each datum is destroyed once (a nested register_funcs destroyed them
 * all again: a double free).
 */
static void test_destroy_calls_refused(void **state)
{
	struct tl_proc *p;

	(void)state;
	require_uprobes();
	cb_handle = registered(sdt_prog, &p, alloc_create, calling_destroy);
	assert_true(created >= 2);
	nested_register = nested_apply = TNFCTL_ERR_NONE;
	tl_assert_err(tnfctl_register_funcs(cb_handle, NULL, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(destroyed, created);
	tl_assert_err(nested_register, TNFCTL_ERR_BADARG);
	tl_assert_err(nested_apply, TNFCTL_ERR_BADARG);
	end_sdt(cb_handle, p);
}

static void *check_libs_create(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	if (!sdt_probe(h, p))
		return NULL;
	if (!created++)
		tl_assert_err(tnfctl_check_libs(h), TNFCTL_ERR_NONE);
	return NULL;
}

/* tnfctl_check_libs from a create callback: the other probes still get theirs (none did). */
static void test_check_libs_in_create(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	require_uprobes();
	h = registered(sdt_prog, &p, check_libs_create, NULL);
	assert_int_equal(created, 2);
	end_sdt(h, p);
}

static tnfctl_errcode_t nested_continue, nested_close;

static void *misuse(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_event_t evt;

	(void)p;
	nested_continue = tnfctl_continue(h, &evt, NULL);
	nested_close = tnfctl_close(h, TNFCTL_TARG_RESUME);
	return NULL;
}

/* tnfctl_continue and tnfctl_close from a create callback: BADARG, the handle goes on. */
static void test_continue_close_in_create(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	require_uprobes();
	nested_continue = nested_close = TNFCTL_ERR_NONE;
	h = registered(sdt_prog, &p, misuse, NULL);
	tl_assert_err(nested_continue, TNFCTL_ERR_BADARG);
	tl_assert_err(nested_close, TNFCTL_ERR_BADARG);
	tl_assert_all_stopped(p->pid, "after the callbacks");
	end_sdt(h, p);
}

static volatile int kicking;
static pthread_t kicked;

static void on_usr1(int sig)
{
	(void)sig;
}

static void *kicker(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&kicking, __ATOMIC_ACQUIRE)) {
		pthread_kill(kicked, SIGUSR1);
		usleep(1000);
	}
	return NULL;
}

/*
 * The caller takes a signal every millisecond (as prex's ^C kick does)
 * while it enables the first USDT probe: the enable loads the session's
 * BPF object all the same (the verifier gave up on the pending signal:
 * INTERNAL).
 */
static void test_enable_under_signals(void **state)
{
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	char file[PATH_MAX];
	tnfctl_errcode_t err;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	pthread_t t;

	(void)state;
	require_uprobes();
	snprintf(file, sizeof(file), "%s/kick.usdt", tmpdir);
	setenv("TNFCTL_USDT_FILE", file, 1);
	h = open_sdt(sdt_prog, &p);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	kicked = pthread_self();
	kicking = 1;
	assert_int_equal(pthread_create(&t, NULL, kicker, NULL), 0);
	err = tnfctl_probe_apply(h, tnfctl_probe_enable, NULL);
	__atomic_store_n(&kicking, 0, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	sigaction(SIGUSR1, &old, NULL);
	unsetenv("TNFCTL_USDT_FILE");
	tl_assert_err(err, TNFCTL_ERR_NONE);
	tl_send(p, "fire 2");
	end_sdt(h, p);
	tl_expect(p, "fired 2 sema 1");
	unlink(file);
}

static tnfctl_probe_t *hit;

static void *keep_hit(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_probe_state_t st;

	tl_assert_err(tnfctl_probe_state_get(h, p, &st), TNFCTL_ERR_NONE);
	if (strstr(st.attr_string, "name hit;"))
		hit = p;
	return NULL;
}

/*
 * After an EXEC the old image's probes are INVALIDPROBE (they were
 * NOLIBTNFPROBE: the new image, before ld.so ran, has nothing listed).
 */
static void test_exec_old_probes_invalid(void **state)
{
	char *argv[] = {tree_prog, "0", "1", NULL};
	tnfctl_probe_state_t st;
	tnfctl_handle_t *h;
	tnfctl_event_t evt;

	(void)state;
	require_uprobes();
	tl_assert_err(
		tnfctl_exec_open_flags(tree_prog, argv, NULL, NULL, NULL, TNFCTL_OPEN_NOPROBES, &h),
		TNFCTL_ERR_NONE);
	tl_track_handle(h);
	hit = NULL;
	tl_assert_err(tnfctl_register_funcs(h, keep_hit, NULL), TNFCTL_ERR_NONE);
	do /* its fork child runs free */
		tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	while (evt == TNFCTL_EVENT_FORK);
	assert_int_equal(evt, TNFCTL_EVENT_EXEC);
	assert_non_null(hit); /* listed at rtld's start-up */
	tl_assert_err(tnfctl_probe_state_get(h, hit, &st), TNFCTL_ERR_INVALIDPROBE);
	tl_assert_err(tnfctl_probe_enable(h, hit, NULL), TNFCTL_ERR_INVALIDPROBE);
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_NONE);
	assert_int_equal(evt, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_register_funcs_lists_running),
		TL_TEST(test_register_funcs_lists_static),
		TL_TEST(test_create_unregisters),
		TL_TEST(test_create_registers_again),
		TL_TEST(test_continue_close_in_create),
		TL_TEST(test_destroy_calls_refused),
		TL_TEST(test_check_libs_in_create),
		TL_TEST(test_enable_under_signals),
		TL_TEST(test_exec_old_probes_invalid),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
