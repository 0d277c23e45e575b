// SPDX-License-Identifier: BSD-2-Clause
/*
 * tp_probes SCENARIO [FILE [SIZE [N [W]]]] - a program with probes for
 * test_probe_runtime and test_export: it plays its own controller (tp_selfctl.h), runs one
 * scenario writing FILE, prints what the test checks on stdout and exits 0.
 * Runs with or without libtnfprobe in LD_PRELOAD.
 */
#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "tp_selfctl.h"

struct point {
	int x;
	long y;
	const char *label;
};

struct seg {
	struct point *a;
	short n;
};

TNF_DECLARE_RECORD(struct point, point_rec);
TNF_DEFINE_RECORD_3(struct point, point_rec, tnf_int, x, tnf_long, y, tnf_string, label);
TNF_DECLARE_RECORD(struct seg, seg_rec);
TNF_DEFINE_RECORD_2(struct seg, seg_rec, point_rec, a, tnf_short, n);

static void fail(const char *what)
{
	printf("FAIL %s (errno %d)\n", what, errno);
	exit(1);
}

static void all_types(void)
{
	struct point pt = {-3, 1234567890123L, "pt"};
	struct seg sg = {&pt, -2};

	TNF_PROBE_5(ints, "tp types", "sunw%debug 'some ints'", tnf_int, i, -5, tnf_uint, u,
		    4000000000u, tnf_long, l, -9000000000L, tnf_ulong, ul, 18000000000000000000ul,
		    tnf_longlong, ll, -7);
	TNF_PROBE_5(smalls, "tp types", "", tnf_char, c, 'A', tnf_int8, i8, -8, tnf_uint8, u8, 250,
		    tnf_short, s, -300, tnf_ushort, us, 65000);
	TNF_PROBE_5(more, "tp types", "", tnf_int16, i16, -16, tnf_uint16, u16, 16, tnf_ulonglong,
		    ull, 12345678901234567890ull, tnf_size, sz, (size_t)42, tnf_opaque, op,
		    (void *)0x1000);
	TNF_PROBE_4(floats, "tp types", "", tnf_float, f, 1.5f, tnf_double, d, -2.25, tnf_string, s,
		    "hello world", tnf_string, nul, (const char *)NULL);
	TNF_PROBE_2(records, "tp types", "", point_rec, p, &pt, seg_rec, g, &sg);
	TNF_PROBE_1(nullrec, "tp types", "", point_rec, p, (struct point *)NULL);
	TNF_PROBE_0(empty, "tp types", "");
	TNF_PROBE_1_DEBUG(dbgonly, "tp", "", tnf_int, x, 1);
}

static void tick(int i)
{
	TNF_PROBE_1(tick, "tp loop", "", tnf_int, i, i);
}

static void *worker(void *arg)
{
	int who = (int)(long)arg, i;

	for (i = 0; i < 500; i++)
		TNF_PROBE_2(worker, "tp thread", "", tnf_int, who, who, tnf_int, i, i);
	return NULL;
}

/* "named": a thread that names itself before its first event */
static int named_n;

static void *named_worker(void *arg)
{
	int who = (int)(long)arg, i;
	char name[16];

	snprintf(name, sizeof(name), "tp-worker-%d", who);
	pthread_setname_np(pthread_self(), name);
	for (i = 0; i < named_n; i++)
		TNF_PROBE_2(named_worker, "tp thread", "", tnf_int, who, who, tnf_int, i, i);
	return NULL;
}

/* connected functions: log their order and whether the record was committed */
static char clog[256];

static int committed(tnf_probe_setup_t *set)
{
	uintptr_t ev = (uintptr_t)set->buffer_p;
	uintptr_t blk = ev & ~(uintptr_t)511;
	uint16_t valid = *(uint16_t *)(blk + 8);

	return blk + valid > ev;
}

static void fn_a(tnf_probe_setup_t *set)
{
	strcat(clog, committed(set) ? "A+" : "A-");
}

static void fn_b(tnf_probe_setup_t *set)
{
	strcat(clog, committed(set) ? "B+" : "B-");
}

static void sw(int v)
{
	TNF_PROBE_1(sw, "tp sw", "", tnf_int, v, v);
}

static void inner(int v)
{
	TNF_PROBE_1(inner, "tp nest", "", tnf_int, v, v);
}

static void on_usr1(int sig)
{
	(void)sig;
	inner(1);
}

static void fn_raise(tnf_probe_setup_t *set)
{
	(void)set;
	raise(SIGUSR1); /* the handler's probe nests in this one: dropped */
	inner(2);	/* a probe inside a connected function: dropped */
}

static void *thread_switch(void *arg)
{
	(void)arg;
	tnf_thread_disable();
	sw(200);
	tnf_thread_enable();
	sw(201);
	return NULL;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		fail("opendir");
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	const char *sc = argc > 1 ? argv[1] : "";
	const char *file = argc > 2 ? argv[2] : "";
	size_t size = argc > 3 ? strtoul(argv[3], NULL, 0) : TNF_TRACE_FILE_MIN * 2;
	int i;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(sc, "noruntime")) {
		/* without libtnfprobe: probes stay off, switches are no-ops */
		if (tp_ctl_init() == 0)
			fail("runtime present");
		tnf_process_disable();
		tnf_thread_disable();
		all_types();
		tick(1);
		tnf_thread_enable();
		tnf_process_enable();
		printf("ok\n");
		return 0;
	}
	if (tp_ctl_init())
		fail("no runtime");
	if (strcmp(sc, "broken") && tp_ctl_file(file, size, 1))
		fail("create");
	if (!strcmp(sc, "broken")) {
		tp_ctl_file(file, size, 0);
		tp_enable_all();
		tick(1);
		tick(2);
		printf("state %u\n", tp.rt->state);
		return 0;
	}
	tp_enable_all();
	if (!strcmp(sc, "types")) {
		i = count_fds();
		all_types();
		printf("state %u fds %d %d\n", tp.rt->state, i, count_fds());
	} else if (!strcmp(sc, "fork")) {
		pid_t pid;
		int st;

		tick(0);
		pid = fork();
		if (pid < 0)
			fail("fork");
		if (pid == 0) {
			for (i = 100; i < 110; i++)
				tick(i);
			printf("child state %u\n", tp.rt->state);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		tick(1);
		printf("pids child %d parent %d\n", (int)pid, (int)getpid());
	} else if (!strcmp(sc, "vfork")) {
		pid_t pid;
		int st;

		tick(0);
		pid = vfork();
		if (pid < 0)
			fail("vfork");
		if (pid == 0) {
			tick(50);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		tick(1);
		printf("vchild %d parent %d\n", (int)pid, (int)getpid());
	} else if (!strcmp(sc, "threads")) {
		pthread_t t[4];

		tick(0); /* maps the file: threads racing to map would drop events */
		for (i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)(long)i))
				fail("pthread_create");
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("done\n");
	} else if (!strcmp(sc, "named")) {
		/*
		 * Names in the trace file: W ticks (to wrap a small file), then 2
		 * named threads of N events each, then a fork child.
		 */
		int w = argc > 5 ? atoi(argv[5]) : 0;
		pthread_t t[2];
		pid_t pid;
		int st;

		named_n = argc > 4 ? atoi(argv[4]) : 50;
		for (i = 0; i <= w; i++)
			tick(i);
		for (i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, named_worker, (void *)(long)i))
				fail("pthread_create");
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pid = fork();
		if (pid < 0)
			fail("fork");
		if (pid == 0) {
			tick(100);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		tick(1);
		printf("pids %d %d\n", (int)getpid(), (int)pid);
	} else if (!strcmp(sc, "wrap")) {
		int n = argc > 4 ? atoi(argv[4]) : 20000;

		for (i = 0; i < n; i++)
			tick(i);
		printf("last %d\n", n - 1);
	} else if (!strcmp(sc, "switches")) {
		sw(1); /* traced */
		tp_trace("sw", 0);
		sw(2); /* untraced: nothing */
		tp_connect("sw", fn_a);
		tp_connect("sw", fn_b);
		sw(3); /* untraced + connected: B then A run, no record */
		printf("log3 %s\n", clog);
		clog[0] = '\0';
		tp_trace("sw", 1);
		sw(4); /* traced + connected: B, A run before the commit */
		printf("log4 %s\n", clog);
		clog[0] = '\0';
		tp_disconnect("sw");
		sw(5);
		tp_enable("sw", 0);
		sw(6); /* disabled */
		printf("log5 %s\n", clog);
		tp_enable("sw", 1);
		tnf_process_disable();
		sw(7);
		printf("stopped %u\n", tp.rt->state);
		tnf_process_enable();
		sw(8);
		tnf_thread_disable();
		sw(9);
		tnf_thread_enable();
		sw(10);
		{
			pthread_t t;

			pthread_create(&t, NULL, thread_switch, NULL);
			pthread_join(t, NULL);
		}
		printf("state %u\n", tp.rt->state);
	} else if (!strcmp(sc, "debug")) {
		tp_connect("ints", tp.debug);
		tp_connect("floats", tp.debug);
		tp_trace("floats", 0);
		all_types();
	} else if (!strcmp(sc, "emptystr")) {
		/* a string first in the payload, empty, then missing */
		TNF_PROBE_2(emptystr, "tp", "", tnf_string, s, "", tnf_int, n, 1);
		TNF_PROBE_2(emptystr, "tp", "", tnf_string, s, (const char *)NULL, tnf_int, n, 2);
	} else if (!strcmp(sc, "longstr")) {
		/* more than a block can hold: truncated, and counted */
		static char big[1024];

		memset(big, 'x', sizeof(big) - 1);
		TNF_PROBE_1(longstr, "tp", "", tnf_string, s, big);
	} else if (!strcmp(sc, "nested")) {
		signal(SIGUSR1, on_usr1);
		tp_connect("sw", fn_raise);
		sw(1);
		inner(3);
		raise(SIGUSR1); /* outside any probe: recorded */
	} else {
		fail("scenario");
	}
	return 0;
}
