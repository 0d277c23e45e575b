// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfdemo: the bundled program for tnfctl-follow and the tests to trace.
 *
 * In a fixed order it runs two threads, forks+execs /bin/true, forks a child
 * that forks a grandchild exiting 7, and dlopens/dlcloses its plugin, so one
 * run shows every lifecycle event a follower reports.  No sleeps: a run must
 * stay well under a second.  `-x N` sets the final exit status.
 *
 * It also carries TNF probes (see <tnf/probe.h>), in main, in the threads,
 * in a forked child and in the plugin (one in its constructor), for
 * tnftrace and the probe tests.  Without a controller they cost a load and
 * a branch each.
 */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tnf/probe.h>

#define NR_THREADS  2
#define PLUGIN_NAME "libtnfdemo_plugin.so"

struct worker {
	pthread_t thread;
	unsigned long seed;
	unsigned long result;
};

static void die(const char *what)
{
	fprintf(stderr, "tnfdemo: %s\n", what);
	exit(1);
}

static void die_errno(const char *what)
{
	fprintf(stderr, "tnfdemo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned long x = w->seed;
	char name[16];
	int i;

	/* the trace file keeps it: tnfdump --format=json names the thread's track */
	snprintf(name, sizeof(name), "demo-worker-%lu", w->seed);
	pthread_setname_np(pthread_self(), name);
	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	w->result = x;
	TNF_PROBE_2(demo_worker_done, "demo thread", "", tnf_ulong, seed, w->seed, tnf_opaque,
		    result, (void *)x);
	return NULL;
}

static void step_threads(void)
{
	struct worker w[NR_THREADS];
	int i, err;

	for (i = 0; i < NR_THREADS; i++) {
		w[i].seed = i + 1;
		err = pthread_create(&w[i].thread, NULL, worker_fn, &w[i]);
		if (err) {
			errno = err;
			die_errno("pthread_create");
		}
	}
	for (i = 0; i < NR_THREADS; i++) {
		err = pthread_join(w[i].thread, NULL);
		if (err) {
			errno = err;
			die_errno("pthread_join");
		}
	}
	printf("tnfdemo: %d threads joined\n", NR_THREADS);
}

/* Flush first so buffered output is not duplicated into the child. */
static pid_t xfork(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die_errno("fork");
	return pid;
}

static int wait_status(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void step_exec(void)
{
	pid_t pid = xfork();

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		fprintf(stderr, "tnfdemo: exec /bin/true: %s\n", strerror(errno));
		_exit(1);
	}
	if (wait_status(pid) != 0)
		die("/bin/true child failed");
	printf("tnfdemo: exec child %d exited 0\n", (int)pid);
}

static void step_grandchild(void)
{
	pid_t pid = xfork();

	if (pid == 0) {
		pid_t gc = fork();

		if (gc < 0) {
			fprintf(stderr, "tnfdemo: fork: %s\n", strerror(errno));
			_exit(1);
		}
		TNF_PROBE_1(demo_child, "demo fork", "", tnf_int, grandchild, (int)gc);
		if (gc == 0)
			_exit(7);
		_exit(wait_status(gc) == 7 ? 0 : 1);
	}
	if (wait_status(pid) != 0)
		die("grandchild did not exit 7");
	printf("tnfdemo: child %d reaped a grandchild exiting 7\n", (int)pid);
}

/* The plugin sits next to the executable, wherever the build tree is. */
static void plugin_path(char *buf, size_t size, const char *argv0)
{
	char exe[PATH_MAX];
	ssize_t n;
	int len;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
	} else {
		if (strlen(argv0) >= sizeof(exe))
			die("argv[0] too long");
		strcpy(exe, argv0);
	}
	len = snprintf(buf, size, "%s/%s", dirname(exe), PLUGIN_NAME);
	if (len < 0 || (size_t)len >= size)
		die("plugin path too long");
}

static void step_plugin(const char *argv0)
{
	char path[PATH_MAX];
	int (*hello)(void);
	void *handle;

	plugin_path(path, sizeof(path), argv0);
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle)
		die(dlerror());
	*(void **)&hello = dlsym(handle, "tnfdemo_plugin_hello");
	if (!hello)
		die(dlerror());
	printf("tnfdemo: plugin returned %d\n", hello());
	if (dlclose(handle))
		die(dlerror());
	printf("tnfdemo: plugin closed\n");
}

static int parse_status(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 255)
		die("-x wants an exit status 0..255");
	return v;
}

int main(int argc, char **argv)
{
	int status = 0;
	int opt;

	while ((opt = getopt(argc, argv, "x:")) != -1) {
		switch (opt) {
		case 'x':
			status = parse_status(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-x STATUS]\n", argv[0]);
			return 1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: %s [-x STATUS]\n", argv[0]);
		return 1;
	}

	printf("tnfdemo: pid %d\n", (int)getpid());
	TNF_PROBE_1(demo_start, "demo main", "sunw%debug 'demo starts'", tnf_string, argv0,
		    argv[0]);
	step_threads();
	TNF_PROBE_1(demo_step, "demo main", "", tnf_string, done, "threads");
	step_exec();
	TNF_PROBE_1(demo_step, "demo main", "", tnf_string, done, "exec");
	step_grandchild();
	TNF_PROBE_1(demo_step, "demo main", "", tnf_string, done, "grandchild");
	step_plugin(argv[0]);
	TNF_PROBE_1(demo_step, "demo main", "", tnf_string, done, "plugin");
	printf("tnfdemo: exiting %d\n", status);
	TNF_PROBE_1(demo_exit, "demo main", "", tnf_int, status, status);
	return status;
}
