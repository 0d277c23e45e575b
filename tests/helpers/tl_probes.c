// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_probes: a test target with probes.  The commands of target_common.h,
 * plus:
 *   fire N           -> tl_main_tick(i) N times, then tl_main_str: "fired N"
 *   firepre N        -> libtl_pre's tl_pre_tick N times: "firedpre N"
 *   fireplug N       -> the last dlopened library's tl_plug_tick: "firedplug N"
 *   fork_fire N      -> a child fires tl_child(i) N times and exits:
 *                       "forkfired <pid> status <s>"
 *   threads_fire T N [S] -> T threads fire tl_thr(t, i) N times each, joined:
 *                       "threadsfired T N"; with S > 1 in S batches in
 *                       lockstep (a barrier after each), so the last batch
 *                       of every thread is among the last events written
 *   vfork_fire N     -> a vfork child fires tl_vchild(i) N times:
 *                       "vforkfired <pid> status <s>"
 *   chainlog         -> "chainlog <calls of libtl_pre's probe functions>"
 *   bgfire T N [S]   -> T threads start firing tl_thr(t, i) N times each, in
 *                       the background: "bgfiring T N".  With S > 1 they
 *                       fire in S batches, batch k (i from N*k/S on) once
 *                       bgstep has been done k times: the firing goes on
 *                       between the commands that follow
 *   bgstep           -> lets the bgfire threads fire their next batch:
 *                       "bgstep K" (K: batches let go so far, the first one
 *                       not counted)
 *   bgjoin           -> lets them fire what is left, waits for them: "bgjoined"
 */
#define TGT_EXTRA 1
static int tgt_extra(const char *cmd, char *arg);
#include "target_common.h"
#include <tnf/probe.h>

static void fire_main(int n)
{
	int i;

	for (i = 0; i < n; i++)
		TNF_PROBE_1(tl_main_tick, "tl main", "sunw%debug 'main tick'", tnf_int, i, i);
	TNF_PROBE_1(tl_main_str, "tl main", "", tnf_string, s, "main done");
}

struct thr_arg {
	int t, n, steps;
	pthread_barrier_t *lockstep; /* threads_fire's batches, or NULL */
};

/* bgfire's batches: batch k of every thread waits until bg_step >= k */
static pthread_mutex_t bg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bg_cond = PTHREAD_COND_INITIALIZER;
static int bg_step;

static void bg_wait(int k)
{
	pthread_mutex_lock(&bg_lock);
	while (bg_step < k)
		pthread_cond_wait(&bg_cond, &bg_lock);
	pthread_mutex_unlock(&bg_lock);
}

static void bg_set_step(int k)
{
	pthread_mutex_lock(&bg_lock);
	bg_step = k;
	pthread_cond_broadcast(&bg_cond);
	pthread_mutex_unlock(&bg_lock);
}

static void *thr_fire(void *p)
{
	struct thr_arg *a = p;
	int i = 0, k, steps = a->steps > 1 ? a->steps : 1;

	for (k = 0; k < steps; k++) {
		if (k && a->lockstep)
			pthread_barrier_wait(a->lockstep);
		else if (k)
			bg_wait(k);
		for (; i < (int)((long long)a->n * (k + 1) / steps); i++)
			TNF_PROBE_2(tl_thr, "tl thr", "", tnf_int, t, a->t, tnf_int, i, i);
	}
	return NULL;
}

static struct thr_arg bg_arg[64];
static pthread_t bg_th[64];
static int bg_n;

static void *sym(const char *name)
{
	void *s = NULL;

	if (tgt_ndl)
		s = dlsym(tgt_dl[tgt_ndl - 1], name);
	return s ? s : dlsym(RTLD_DEFAULT, name);
}

static int tgt_extra(const char *cmd, char *arg)
{
	if (!strcmp(cmd, "fire")) {
		fire_main(atoi(arg));
		tgt_reply("fired %d", atoi(arg));
	} else if (!strcmp(cmd, "firepre") || !strcmp(cmd, "fireplug")) {
		void (*fn)(int) =
			sym(cmd[4] == 'p' && cmd[5] == 'r' ? "tlpre_fire" : "tlplug_fire");

		if (fn)
			fn(atoi(arg));
		tgt_reply("%s %d", fn ? (cmd[5] == 'r' ? "firedpre" : "firedplug") : "nofunc",
			  atoi(arg));
	} else if (!strcmp(cmd, "fork_fire")) {
		int i, n = atoi(arg);
		pid_t pid = fork();

		if (pid == 0) {
			for (i = 0; i < n; i++)
				TNF_PROBE_1(tl_child, "tl child", "", tnf_int, i, i);
			_exit(0);
		}
		tgt_reply("forkfired %d status %d", (int)pid, tgt_wait(pid));
	} else if (!strcmp(cmd, "vfork_fire")) {
		int i, n = atoi(arg);
		pid_t pid = vfork();

		if (pid == 0) {
			/* shares the parent's memory and thread state until _exit */
			for (i = 0; i < n; i++)
				TNF_PROBE_1(tl_vchild, "tl child", "", tnf_int, i, i);
			_exit(0);
		}
		tgt_reply("vforkfired %d status %d", (int)pid, tgt_wait(pid));
	} else if (!strcmp(cmd, "threads_fire")) {
		struct thr_arg a[64];
		pthread_barrier_t lockstep;
		pthread_t th[64];
		int i, t = 0, n = 0, steps = 1;

		sscanf(arg, "%d %d %d", &t, &n, &steps);
		if (t > 64)
			t = 64;
		if (t < 1)
			t = 1;
		pthread_barrier_init(&lockstep, NULL, t);
		for (i = 0; i < t; i++) {
			a[i].t = i;
			a[i].n = n;
			a[i].steps = steps;
			a[i].lockstep = &lockstep;
			pthread_create(&th[i], NULL, thr_fire, &a[i]);
		}
		for (i = 0; i < t; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&lockstep);
		tgt_reply("threadsfired %d %d", t, n);
	} else if (!strcmp(cmd, "bgfire")) {
		int i, t = 0, n = 0, steps = 1;

		sscanf(arg, "%d %d %d", &t, &n, &steps);
		if (t > 64)
			t = 64;
		bg_set_step(0);
		for (i = 0; i < t; i++) {
			bg_arg[i].t = i;
			bg_arg[i].n = n;
			bg_arg[i].steps = steps;
			pthread_create(&bg_th[i], NULL, thr_fire, &bg_arg[i]);
		}
		bg_n = t;
		tgt_reply("bgfiring %d %d", t, n);
	} else if (!strcmp(cmd, "bgstep")) {
		int k;

		pthread_mutex_lock(&bg_lock);
		k = ++bg_step;
		pthread_cond_broadcast(&bg_cond);
		pthread_mutex_unlock(&bg_lock);
		tgt_reply("bgstep %d", k);
	} else if (!strcmp(cmd, "bgjoin")) {
		int i;

		bg_set_step(INT_MAX);
		for (i = 0; i < bg_n; i++)
			pthread_join(bg_th[i], NULL);
		bg_n = 0;
		tgt_reply("bgjoined");
	} else if (!strcmp(cmd, "chainlog")) {
		const char *(*fn)(void) = sym("tlpre_chain_log");

		tgt_reply("chainlog %s", fn ? fn() : "nofunc");
	} else {
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	tgt_init(argc, argv);
	return tgt_run();
}
