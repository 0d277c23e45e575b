// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_tree_ctl: an API caller that follows a tree of N live processes with
 * a child handle and a thread per process (tnfctl_continue(3TNF)'s FORK
 * example), for the scale tests.
 *
 *   tl_tree_ctl N
 *
 * Starts (tnfctl_exec_open_flags, NOPROBES) a bash whose N subshells each
 * block on a FIFO until all N exist, then read one line and exit 0.  Every
 * handle's thread loops in tnfctl_continue until EXIT or TARGGONE, then
 * closes it.  From the Nth FORK on (the subshells alive), each FORK counts
 * its own descriptors and the engine's.  Prints "processes P ends E
 * root_status S fds F engine_fds G" (P: the root and every FORK child; E:
 * EXIT and TARGGONE events) and exits 0, or "error WHAT CODE MESSAGE" for
 * each failure and exits 1.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tnf/tnfctl.h>

static atomic_int ends, errors, max_fds, max_engine_fds, root_status = -1;
static atomic_int forks_seen;
static int n_children;
static tnfctl_handle_t *root;
/* live follow() threads: main waits for none */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_cond = PTHREAD_COND_INITIALIZER;
static int live;

static void live_add(int d)
{
	pthread_mutex_lock(&live_lock);
	live += d;
	if (!live)
		pthread_cond_signal(&live_cond);
	pthread_mutex_unlock(&live_lock);
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n - (pid == getpid()); /* the directory's own descriptor */
}

/* The engine: the tracer of @pid. */
static pid_t tracer_of(pid_t pid)
{
	char path[64], line[256];
	pid_t t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &t) == 1)
			break;
	fclose(f);
	return t;
}

static void note_max(atomic_int *m, int v)
{
	int cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

static void fail(const char *what, tnfctl_errcode_t err)
{
	printf("error %s %d %s\n", what, (int)err, tnfctl_strerror(err));
	atomic_fetch_add(&errors, 1);
}

static void *follow(void *arg);

static void start_thread(tnfctl_handle_t *h)
{
	pthread_attr_t at;
	pthread_t th;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 128 * 1024);
	live_add(1);
	if (pthread_create(&th, &at, follow, h)) {
		fail("pthread_create", TNFCTL_ERR_ALLOCFAIL);
		tnfctl_close(h, TNFCTL_TARG_RESUME);
		live_add(-1);
	}
	pthread_attr_destroy(&at);
}

static void *follow(void *arg)
{
	tnfctl_handle_t *h = arg, *child;
	tnfctl_event_info_t info;
	tnfctl_errcode_t err;
	tnfctl_event_t evt;

	for (;;) {
		err = tnfctl_continue(h, &evt, &child);
		if (!err)
			err = tnfctl_event_info_get(h, &info);
		if (err) {
			fail("continue", err);
			break;
		}
		if (evt == TNFCTL_EVENT_FORK && child) {
			if (atomic_fetch_add(&forks_seen, 1) + 1 >= n_children) {
				note_max(&max_fds, count_fds(getpid()));
				note_max(&max_engine_fds, count_fds(tracer_of(info.pid)));
			}
			start_thread(child);
		}
		if (evt == TNFCTL_EVENT_EXIT || evt == TNFCTL_EVENT_TARGGONE) {
			atomic_fetch_add(&ends, 1);
			if (h == root)
				root_status = evt == TNFCTL_EVENT_EXIT ? info.exit_status : 128;
			break;
		}
	}
	tnfctl_close(h, TNFCTL_TARG_RESUME);
	live_add(-1);
	return NULL;
}

int main(int argc, char **argv)
{
	char script[512];
	char *targv[] = {"bash", "-c", script, NULL};
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;

	if (argc != 2)
		return 2;
	n_children = atoi(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(script, sizeof(script),
		 "d=$(mktemp -d) && mkfifo $d/f && exec 3<>$d/f && rm -r $d && "
		 "for i in $(seq %d); do read -r -u 3 _ & done; "
		 "yes | head -n %d >&3; wait",
		 n_children, n_children);
	err = tnfctl_exec_open_flags("bash", targv, NULL, NULL, NULL, TNFCTL_OPEN_NOPROBES, &h);
	if (err) {
		fail("exec_open", err);
		return 1;
	}
	root = h;
	start_thread(h);
	/* the threads end with their processes */
	pthread_mutex_lock(&live_lock);
	while (live)
		pthread_cond_wait(&live_cond, &live_lock);
	pthread_mutex_unlock(&live_lock);
	printf("processes %d ends %d root_status %d fds %d engine_fds %d\n",
	       atomic_load(&forks_seen) + 1, atomic_load(&ends), atomic_load(&root_status),
	       atomic_load(&max_fds), atomic_load(&max_engine_fds));
	return atomic_load(&errors) ? 1 : 0;
}
