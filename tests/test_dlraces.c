// SPDX-License-Identifier: BSD-2-Clause
/*
 * Link-map races and namespaces (issue 13, items 4 and 5):
 *
 *  - several threads dlclose one library at once (dlopened 4 times, 4
 *    threads dlclose after a barrier): one DLCLOSE, the unload, whichever
 *    thread makes it, and no call gives INTERNAL;
 *  - dlmopen(LM_ID_NEWLM) of a library with probes, then dlclose: DLOPEN
 *    and DLCLOSE are reported with the object's name, its probes are listed
 *    and controllable (they fire into the trace file), and the ids of the
 *    other probes do not change.
 *
 * Rounds: TL_DLRACE_ROUNDS (default 100; 1000 with TL_STRESS=full, as `make
 * stress` runs it); the threads spin a pseudo-random while after the barrier,
 * from TL_SEED (printed) plus the round.  Every round ends with the
 * target resumed and untraced, checked before it is told to exit.
 */
#include "testlib.h"
#include "probelib.h"

static int rounds(void)
{
	const char *s = getenv("TL_STRESS");

	return tl_env_int("TL_DLRACE_ROUNDS", s && !strcmp(s, "full") ? 1000 : 100);
}

/* Nothing of ours left on @pid: running, no tracer. */
static void assert_released(pid_t pid)
{
	tl_assert_running(pid, "after close RESUME");
	assert_int_equal(tl_tracer_pid(pid), 0);
}

static int count_plug(tnfctl_handle_t *h)
{
	struct list l;
	int i, n = 0;

	memset(&l, 0, sizeof(l));
	tl_assert_err(tnfctl_probe_apply(h, collect, &l), TNFCTL_ERR_NONE);
	for (i = 0; i < l.n; i++)
		if (strstr(l.v[i].obj, "libtl_plug.so"))
			n++;
	return n;
}

/*
 * One round: 4 dlopens, then 4 threads dlclose at once.  Returns NULL, or
 * what went wrong (the handle is then in an unknown state).
 */
static const char *mtdlclose_round(tnfctl_handle_t *h, struct tl_proc *p, int first,
				   unsigned int seed, char *why, size_t len)
{
	tnfctl_event_info_t info;
	tnfctl_errcode_t err;
	tnfctl_event_t evt;
	char cmd[PATH_MAX + 16];
	int i;

	/* Only the first dlopen maps it: one DLOPEN (issue 31). */
	snprintf(cmd, sizeof(cmd), "dlopen %s", plug_lib);
	for (i = 0; i < 4; i++)
		tl_send(p, "%s", cmd);
	err = tnfctl_continue(h, &evt, NULL);
	if (err || evt != TNFCTL_EVENT_DLOPEN) {
		snprintf(why, len, "dlopen: %s, event %s", tl_err_name(err),
			 err ? "-" : tl_event_name(evt));
		return why;
	}
	tl_expect(p, first ? "ready" : "mtdlclosed 0");
	if (count_plug(h) != 2) {
		snprintf(why, len, "%d probes of libtl_plug listed after dlopen", count_plug(h));
		return why;
	}
	/* Only the last dlclose unloads it, whichever thread makes it: one DLCLOSE. */
	tl_send(p, "mtdlclose 4 %u", seed);
	err = tnfctl_continue(h, &evt, NULL);
	if (err || evt != TNFCTL_EVENT_DLCLOSE) {
		snprintf(why, len, "DLCLOSE: %s, event %s", tl_err_name(err),
			 err ? "-" : tl_event_name(evt));
		return why;
	}
	tl_info(h, &info);
	if (!strstr(info.path, "libtl_plug.so")) {
		snprintf(why, len, "DLCLOSE names \"%.200s\"", info.path);
		return why;
	}
	for (i = 0; i < 4; i++)
		tl_expect(p, "dlopen ok");
	if (count_plug(h)) {
		snprintf(why, len, "%d probes of libtl_plug listed after DLCLOSE", count_plug(h));
		return why;
	}
	if (tl_maps_has(p->pid, "libtl_plug.so")) {
		snprintf(why, len, "libtl_plug.so still mapped after DLCLOSE");
		return why;
	}
	return NULL;
}

static void test_concurrent_dlclose(void **state)
{
	unsigned int seed = tl_env_int("TL_SEED", (int)(time(NULL) ^ getpid()));
	int r, n = rounds(), failed = 0, first = 1;
	char why[512], firstwhy[600] = "";
	tnfctl_handle_t *h;
	struct tl_proc *p;
	long long t0 = tl_now_ms();

	(void)state;
	tl_require_root();
	tl_watchdog_extend(60 + n);
	h = start(&p);
	for (r = 0; r < n; r++) {
		if (!mtdlclose_round(h, p, first, seed + r + 1, why, sizeof(why))) {
			first = 0;
			continue;
		}
		if (!failed++)
			snprintf(firstwhy, sizeof(firstwhy), "round %d: %s", r, why);
		/* a fresh target for the next round */
		tnfctl_close(h, TNFCTL_TARG_KILL);
		tl_untrack_handle(h);
		tl_assert_exits(p->pid, "killed after a failed round");
		pthread_mutex_lock(&tl.lock);
		tl_proc_close_fds(p);
		p->used = 0; /* its slot for the next target */
		pthread_mutex_unlock(&tl.lock);
		h = start(&p);
		first = 1;
	}
	tl_close(h, TNFCTL_TARG_RESUME);
	if (!first)
		tl_expect(p, "mtdlclosed 0");
	assert_released(p->pid);
	tl_send(p, "exit 0");
	tl_assert_exits(p->pid, "told to exit");
	print_message("# concurrent dlclose: %d rounds (TL_SEED %u), %d failed, %.1f s%s%s\n", n,
		      seed, failed, (tl_now_ms() - t0) / 1000.0, failed ? "; the first: " : "",
		      firstwhy);
	if (failed)
		fail_msg("%d of %d rounds failed, the first %s", failed, n, firstwhy);
}

static void *enable_all(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	enable_trace(h, p, NULL);
	return NULL;
}

/*
 * dlmopen(LM_ID_NEWLM) of libtl_plug.so: DLOPEN names it, its probes are
 * listed (with new ids, the old ones kept) and fire into the trace file once
 * enabled at the DLOPEN stop (its constructor's probe too); dlclose gives
 * DLCLOSE and the probes go.  Twice, so that the emptied namespace is reused.
 */
static void test_dlmopen_namespace(void **state)
{
	char tfile[PATH_MAX], cmd[PATH_MAX + 16], *out;
	tnfctl_handle_t *h;
	tnfctl_event_info_t info;
	tnfctl_probe_state_t st;
	struct list before, after;
	struct found *f, *g;
	struct tl_proc *p;
	int i, k;

	(void)state;
	tl_require_root();
	if (tl_env_int("SANITIZE", 0) == 1) {
		/* dlmopen loads a second ASan runtime in the new namespace: it aborts */
		print_message("skipped: the target is built with ASan, which cannot dlmopen\n");
		skip();
	}
	h = start(&p);
	trace_path(tfile, sizeof(tfile), "dlmopen");
	tl_assert_err(tnfctl_buffer_alloc(h, tfile, 256 * 1024), TNFCTL_ERR_NONE);
	memset(&before, 0, sizeof(before));
	tl_assert_err(tnfctl_probe_apply(h, collect, &before), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_register_funcs(h, enable_all, NULL), TNFCTL_ERR_NONE);
	snprintf(cmd, sizeof(cmd), "dlmopen %s", plug_lib);
	for (k = 0; k < 2; k++) {
		tl_send(p, "%s", cmd);
		tl_expect_event(h, NULL, TNFCTL_EVENT_DLOPEN);
		tl_info(h, &info);
		if (!strstr(info.path, "libtl_plug.so"))
			fail_msg("DLOPEN of dlmopen names \"%s\"", info.path);
		tl_expect(p, k ? "dlclose 0" : "ready");
		tl_assert_all_stopped(p->pid, "at the DLOPEN of dlmopen");
		memset(&after, 0, sizeof(after));
		tl_assert_err(tnfctl_probe_apply(h, collect, &after), TNFCTL_ERR_NONE);
		for (i = 0; i < before.n; i++) {
			g = find(&after, before.v[i].name);
			if (!g || g->id != before.v[i].id)
				fail_msg("probe %s changed id or went (%lu)", before.v[i].name,
					 before.v[i].id);
		}
		f = find(&after, "tl_plug_tick");
		if (!f || !find(&after, "tl_plug_ctor"))
			fail_msg("the probes of the dlmopen'd object are not listed");
		assert_non_null(strstr(f->obj, "libtl_plug.so"));
		tl_assert_err(tnfctl_probe_state_get(h, f->p, &st), TNFCTL_ERR_NONE);
		assert_true(st.enabled);
		tl_send(p, "fireplug 3");
		tl_send(p, "dlclose");
		tl_expect_event(h, NULL, TNFCTL_EVENT_DLCLOSE);
		tl_info(h, &info);
		if (!strstr(info.path, "libtl_plug.so"))
			fail_msg("DLCLOSE of the dlmopen'd object names \"%s\"", info.path);
		tl_expect(p, "dlmopen ok");
		assert_string_equal(tl_expect(p, "firedplug"), "firedplug 3");
		tl_assert_err(tnfctl_probe_state_get(h, f->p, &st), TNFCTL_ERR_INVALIDPROBE);
		if (tl_maps_has(p->pid, "libtl_plug.so"))
			fail_msg("libtl_plug.so still mapped at DLCLOSE");
	}
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_expect(p, "dlclose 0");
	assert_released(p->pid);
	tl_send(p, "exit 0");
	tl_assert_exits(p->pid, "told to exit");
	out = malloc(1 << 20);
	assert_non_null(out);
	assert_int_equal(dump(tfile, out, 1 << 20), 0);
	assert_int_equal(count_events(out, "tl_plug_ctor", NULL), 2);
	assert_int_equal(count_events(out, "tl_plug_tick", NULL), 6);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_concurrent_dlclose),
		TL_TEST(test_dlmopen_namespace),
		TL_FINAL_TEST,
	};

	paths();
	return tl_run(tests);
}
