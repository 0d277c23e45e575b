// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode (tnfctl_kernel_open and friends) on the real kernel: the
 * tracepoints as probes, the records of a workload of known shape checked
 * one by one against what the workload did, the process filter, the
 * buffer states and error codes, a forced ring-buffer overflow, and a
 * kernel trace merged with a user trace of the same period.  The *_compat
 * tests run the same scenarios with TNFCTL_KTRACE_COMPAT=1: the stub
 * programs of kernels without BPF cookies (5.10 .. 5.14), on this kernel.
 */
#include <stdbool.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include "testlib.h"
#include "probelib.h"
#include "tnf.h"
#include "tnf_drops.h"

/* Opens the kernel handle, or skips (with the reason) where there is no tracefs. */
static tnfctl_handle_t *kopen(void)
{
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err;

	tl_require_root();
	paths();
	err = tnfctl_kernel_open(&h);
	if (err == TNFCTL_ERR_FILENOTFOUND) {
		print_message("skipped: no tracefs on this kernel (tnfctl_kernel_open: %s)\n",
			      tnfctl_strerror(err));
		skip();
	}
	/* the one KERNEL expected: no BTF or ring buffer (tnfctl_kernel_open(3)) */
	if (err == TNFCTL_ERR_KERNEL && !tl_kernel_mode_supported()) {
		print_message("SKIP: kernel mode needs BTF and the BPF ring buffer (Linux 5.8); "
			      "tnfctl_kernel_open said %s\n",
			      tnfctl_strerror(err));
		skip();
	}
	tl_assert_err(err, TNFCTL_ERR_NONE);
	tl_track_handle(h);
	return h;
}

static void kclose(tnfctl_handle_t *h)
{
	tl_untrack_handle(h);
	tl_assert_err(tnfctl_close(h, TNFCTL_TARG_DEFAULT), TNFCTL_ERR_NONE);
}

/* The programs of the kernel handle's object, by name, among this process's descriptors. */
static void kprogs(int *events, int *slots)
{
	char path[PATH_MAX], target[64];
	struct bpf_prog_info info;
	struct dirent *de;
	uint32_t len;
	ssize_t n;
	DIR *d = opendir("/proc/self/fd");

	assert_non_null(d);
	*events = *slots = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "anon_inode:bpf-prog"))
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(atoi(de->d_name), &info, &len))
			continue;
		if (!strcmp(info.name, "kt_event"))
			(*events)++;
		else if (!strncmp(info.name, "kt_slot", 7))
			(*slots)++;
	}
	closedir(d);
}

/*
 * tnfctl_buffer_alloc, and the variant it loaded: the 64 slot stubs where
 * the kernel has no cookies or TNFCTL_KTRACE_COMPAT=1, else kt_event alone.
 */
static void kalloc(tnfctl_handle_t *h, const char *path, uint_t size)
{
	const char *force = getenv("TNFCTL_KTRACE_COMPAT");
	bool stubs = (force && *force == '1') || !tl_kernel_has_cookies();
	int events, slots;

	tl_assert_err(tnfctl_buffer_alloc(h, path, size), TNFCTL_ERR_NONE);
	kprogs(&events, &slots);
	if (stubs ? events != 0 || slots != 64 : events != 1 || slots != 0)
		fail_msg("%d kt_event and %d kt_slot programs loaded, want %s", events, slots,
			 stubs ? "0 and 64 (no cookies)" : "1 and 0 (cookies)");
}

/* A scenario again, with the no-cookie variant forced: the same assertions. */
#define KCOMPAT_TEST(fn) KCOMPAT_UNIT(#fn "_compat", fn##_compat)
#define KCOMPAT_UNIT(name, fn)                                                                     \
	(struct CMUnitTest)                                                                        \
	{                                                                                          \
		name, fn, tl_kcompat_setup, tl_kcompat_teardown, NULL                              \
	}
#define KCOMPAT(fn)                                                                                \
	static void fn##_compat(void **state)                                                      \
	{                                                                                          \
		/* without cookies the plain test runs the stubs already */                        \
		if (!tl_kernel_has_cookies()) {                                                    \
			print_message("SKIP: no BPF cookies here: %s runs the stubs\n", #fn);      \
			skip();                                                                    \
		}                                                                                  \
		fn(state);                                                                         \
	}

struct kfind {
	const char *name;
	tnfctl_probe_t *p;
	unsigned long id;
	char attrs[512];
	unsigned long n; /* probes seen */
	unsigned long max_id;
	int dup_ids;
};

static tnfctl_errcode_t kfind_op(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct kfind *f = cd;
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err = tnfctl_probe_state_get(h, p, &st);
	size_t n = strlen(f->name);

	if (err)
		return err;
	f->n++;
	if (st.id <= f->max_id)
		f->dup_ids++; /* ids come in increasing order, each once */
	f->max_id = st.id;
	if (!strncmp(st.attr_string, "name ", 5) && !strncmp(st.attr_string + 5, f->name, n) &&
	    st.attr_string[5 + n] == ';') {
		f->p = p;
		f->id = st.id;
		snprintf(f->attrs, sizeof(f->attrs), "%s", st.attr_string);
	}
	return TNFCTL_ERR_NONE;
}

static tnfctl_probe_t *kprobe(tnfctl_handle_t *h, const char *name, unsigned long *id)
{
	struct kfind f = {.name = name};

	tl_assert_err(tnfctl_probe_apply(h, kfind_op, &f), TNFCTL_ERR_NONE);
	if (!f.p)
		fail_msg("no kernel probe %s among %lu", name, f.n);
	if (id)
		*id = f.id;
	return f.p;
}

static void ktrace_probe(tnfctl_handle_t *h, const char *name)
{
	tnfctl_probe_t *p = kprobe(h, name, NULL);

	tl_assert_err(tnfctl_probe_enable(h, p, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_trace(h, p, NULL), TNFCTL_ERR_NONE);
}

/* One event of a kernel trace file. */
struct kev {
	char probe[64];
	uint32_t pid;
	uint64_t tid;
	int cpu;
	int kernel;
	int64_t time;
	int64_t parent_pid, child_pid;
	char filename[PATH_MAX];
	int has_filename;
	int argv_kind; /* kind of an "argv" slot, 0 if none */
	int buf_kind;  /* kind of a "buf" slot, 0 if none */
};

struct ktrace {
	struct kev *v;
	int n;
	struct tnf_drops drops;
};

static void read_trace(const char *path, struct ktrace *t)
{
	struct tnf_datum rec = {0, NULL}, d;
	struct tnf_event ev;
	struct tnf_file *f;
	int err, cap = 0;

	memset(t, 0, sizeof(*t));
	err = tnf_open(path, &f);
	if (err)
		fail_msg("tnf_open %s: %s", path, tnf_strerror(err));
	tnf_writer_drops(f, &t->drops);
	while ((err = tnf_record_next(f, &rec)) > 0) {
		struct kev *k;
		const char *s;
		size_t len;

		if (tnf_event_get(f, rec, &ev) != 1)
			continue;
		if (t->n == cap) {
			cap = cap ? cap * 2 : 256;
			t->v = realloc(t->v, (size_t)cap * sizeof(*t->v));
			assert_non_null(t->v);
		}
		k = &t->v[t->n++];
		memset(k, 0, sizeof(*k));
		snprintf(k->probe, sizeof(k->probe), "%s", ev.probe_name);
		k->pid = ev.pid;
		k->tid = ev.tid;
		k->cpu = ev.cpuid;
		k->kernel = ev.kernel;
		k->time = ev.time;
		k->parent_pid = k->child_pid = -1;
		tnf_get_int_named(f, rec, "parent_pid", &k->parent_pid);
		tnf_get_int_named(f, rec, "child_pid", &k->child_pid);
		if (tnf_slot_named(f, rec, "filename", &d) == 0 &&
		    (s = tnf_get_chars(f, d, &len)) != NULL) {
			snprintf(k->filename, sizeof(k->filename), "%.*s", (int)len, s);
			k->has_filename = 1;
		}
		if (tnf_slot_named(f, rec, "argv", &d) == 0)
			k->argv_kind = (int)tnf_datum_kind(d);
		if (tnf_slot_named(f, rec, "buf", &d) == 0)
			k->buf_kind = (int)tnf_datum_kind(d);
	}
	if (err < 0)
		fail_msg("%s: %s", path, tnf_strerror(err));
	tnf_close(f);
}

/* Children that wait for a byte on a pipe, open one file each, and exit. */
#define NKIDS 5

struct kids {
	pid_t pid[NKIDS];
	int go[NKIDS]; /* write end: a byte lets the child go */
	char path[NKIDS][PATH_MAX];
};

static void kids_start(struct kids *k, int n, const char *tag)
{
	int i, fds[2];

	for (i = 0; i < n; i++) {
		/* long names: each takes a good part of a 512-byte block of the file */
		snprintf(k->path[i], sizeof(k->path[i]), "%s/kt-%s-%d-%d-%0200d", tmpdir, tag,
			 getpid(), i, 0);
		assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
		k->pid[i] = fork();
		assert_true(k->pid[i] >= 0);
		if (!k->pid[i]) {
			char path[PATH_MAX], c;
			int fd;

			/* on the stack: a page the BPF program can read at the syscall */
			snprintf(path, sizeof(path), "%s", k->path[i]);
			if (read(fds[0], &c, 1) != 1)
				_exit(2);
			fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
			_exit(fd < 0 ? 0 : 1); /* the file does not exist */
		}
		close(fds[0]);
		k->go[i] = fds[1];
		tl_track_pid(k->pid[i]);
	}
}

static void kids_run(struct kids *k, int n)
{
	int i, st;

	for (i = 0; i < n; i++) {
		assert_int_equal(write(k->go[i], "g", 1), 1);
		close(k->go[i]);
	}
	for (i = 0; i < n; i++) {
		assert_int_equal(tl_waitpid_timeout(k->pid[i], &st, 0, tl.timeout_ms), k->pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

static int kid_index(const struct kids *k, int n, int64_t pid)
{
	int i;

	for (i = 0; i < n; i++)
		if (k->pid[i] == pid)
			return i;
	return -1;
}

/* A child that waits for a byte on a pipe, runs fn(arg), and exits 0. */
struct kid {
	pid_t pid;
	int go; /* write end: a byte lets it go */
};

static struct kid kid_start(void (*fn)(const void *), const void *arg)
{
	struct kid k;
	int fds[2];
	char c;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	k.pid = fork();
	assert_true(k.pid >= 0);
	if (!k.pid) {
		if (read(fds[0], &c, 1) != 1)
			_exit(2);
		fn(arg);
		_exit(0);
	}
	close(fds[0]);
	k.go = fds[1];
	tl_track_pid(k.pid);
	return k;
}

/* Lets @k go and waits for it to exit 0. */
static void kid_finish(struct kid *k)
{
	int st;

	assert_int_equal(write(k->go, "g", 1), 1);
	close(k->go);
	assert_int_equal(tl_waitpid_timeout(k->pid, &st, 0, tl.timeout_ms), k->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* *(int *)arg getppid calls: a syscall of known count, nothing else. */
static void getppid_loop(const void *arg)
{
	int i, n = *(const int *)arg;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* Tracing on into @path (a new buffer of @size bytes unless 0), for @pid only. */
static void trace_only(tnfctl_handle_t *h, pid_t pid, const char *path, uint_t size)
{
	tl_assert_err(tnfctl_filter_list_add(h, pid), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	if (size)
		kalloc(h, path, size);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
}

/* The events of @probe by @pid in @t. */
static int count_of(const struct ktrace *t, pid_t pid, const char *probe)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		if (t->v[i].pid == (uint32_t)pid && !strcmp(t->v[i].probe, probe))
			n++;
	return n;
}

/* tnfdump's stderr for @path (its report of what the file lost). */
static void dump_stderr(const char *path, char *out, size_t len)
{
	char cmd[2 * PATH_MAX + 32];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' 2>&1 >/dev/null", tnfdump_prog, path);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	assert_int_equal(pclose(f), 0);
}

/* tnfdump --format=json: @pid's openat of @file on its thread's track, with its CPU. */
static void json_has_kernel_event(const char *path, pid_t pid, const char *file)
{
	char cmd[2 * PATH_MAX + 64], line[8192], want[128];
	int found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' --format=json '%s'", tnfdump_prog, path);
	snprintf(want, sizeof(want), "\"pid\":%d,\"tid\":%d,\"args\":{\"tnf_cpuid\":", pid, pid);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "\"name\":\"sys_enter_openat\"") && strstr(line, want) &&
		    strstr(line, file))
			found++;
	assert_int_equal(pclose(f), 0);
	if (found != 1)
		fail_msg("%d JSON events of pid %d's openat of %s with its CPU, want 1", found, pid,
			 file);
}

/* Known tracepoints are probes, with their fields as slots; ids 1..N, each once. */
static void test_kernel_probes_listed(void **state)
{
	tnfctl_handle_t *h;
	struct kfind f = {.name = "sched_process_fork"};
	struct kfind g = {.name = "sys_enter_openat"};
	tnfctl_probe_state_t st;

	(void)state;
	h = kopen();
	tl_assert_err(tnfctl_probe_apply(h, kfind_op, &f), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_apply(h, kfind_op, &g), TNFCTL_ERR_NONE);
	assert_non_null(f.p);
	assert_non_null(g.p);
	assert_true(f.n > 100);
	assert_int_equal(f.dup_ids, 0);
	assert_int_equal(f.max_id, f.n);
	assert_non_null(strstr(f.attrs, ";keys sched"));
	assert_non_null(strstr(f.attrs, "child_pid"));
	assert_non_null(strstr(f.attrs, "parent_pid"));
	assert_non_null(strstr(g.attrs, ";keys syscalls"));
	assert_non_null(strstr(g.attrs, "filename"));
	/* a fresh probe: disabled, traced, no functions, no object */
	tl_assert_err(tnfctl_probe_state_get(h, f.p, &st), TNFCTL_ERR_NONE);
	assert_int_equal(st.id, f.id);
	assert_int_equal(st.enabled, B_FALSE);
	assert_int_equal(st.traced, B_TRUE);
	assert_null(st.obj_name);
	assert_null(st.func_names);
	/* ids stay: the same probe by id */
	tl_assert_err(tnfctl_probe_apply_ids(h, 1, &f.id, tnfctl_probe_enable, NULL),
		      TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_state_get(h, f.p, &st), TNFCTL_ERR_NONE);
	assert_int_equal(st.enabled, B_TRUE);
	tl_assert_err(tnfctl_probe_disable(h, f.p, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_untrace(h, f.p, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_state_get(h, f.p, &st), TNFCTL_ERR_NONE);
	assert_int_equal(st.enabled, B_FALSE);
	assert_int_equal(st.traced, B_FALSE);
	kclose(h);
}

/*
 * sched_process_fork and sys_enter_openat over a workload of five children:
 * each of our forks is there once with the right pids, each child's openat
 * once with its own file name, on a CPU, as a kernel record.
 */
static void test_kernel_trace_workload(void **state)
{
	char path[PATH_MAX];
	tnfctl_trace_attrs_t a;
	struct ktrace t;
	struct kids k;
	tnfctl_handle_t *h;
	int forks[NKIDS] = {0}, opens[NKIDS] = {0}, i, j;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kwork");
	ktrace_probe(h, "sched_process_fork");
	ktrace_probe(h, "sys_enter_openat");
	kalloc(h, path, 4 << 20);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	kids_start(&k, NKIDS, "work");
	kids_run(&k, NKIDS);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_string_equal(a.trace_file_name, path);
	/* tracing is off and drained: the file is complete now */
	read_trace(path, &t);
	assert_int_equal(t.drops.total, 0);
	for (i = 0; i < t.n; i++) {
		struct kev *e = &t.v[i];

		assert_true(e->kernel);
		assert_true(e->cpu >= 0);
		/* (the test's own threads are sched_process_fork records too) */
		if (!strcmp(e->probe, "sched_process_fork") &&
		    kid_index(&k, NKIDS, e->child_pid) >= 0) {
			j = kid_index(&k, NKIDS, e->child_pid);
			forks[j]++;
			assert_int_equal(e->pid, getpid());
			assert_int_equal(e->parent_pid, getpid());
		} else if (!strcmp(e->probe, "sys_enter_openat") &&
			   kid_index(&k, NKIDS, e->pid) >= 0) {
			j = kid_index(&k, NKIDS, e->pid);
			assert_true(e->has_filename);
			assert_string_equal(e->filename, k.path[j]);
			assert_int_equal(e->tid, e->pid);
			opens[j]++;
		}
	}
	for (i = 0; i < NKIDS; i++) {
		if (forks[i] != 1 || opens[i] != 1)
			fail_msg("child %d (pid %d): %d fork and %d openat records, want 1 and 1",
				 i, k.pid[i], forks[i], opens[i]);
	}
	free(t.v);
	json_has_kernel_event(path, k.pid[0], k.path[0]);
	kclose(h);
}

/* The filter admits exactly the listed pids. */
static void test_kernel_filter(void **state)
{
	char path[PATH_MAX];
	tnfctl_trace_attrs_t a;
	struct ktrace t;
	struct kids k;
	tnfctl_handle_t *h;
	pid_t *list = NULL;
	int n = -1, i, seen[NKIDS] = {0}, others = 0;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kfilter");
	ktrace_probe(h, "sys_enter_openat");
	kids_start(&k, NKIDS, "filter");
	tl_assert_err(tnfctl_filter_list_add(h, k.pid[1]), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_list_add(h, k.pid[3]), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_list_add(h, k.pid[3]), TNFCTL_ERR_NONE); /* once in the list */
	tl_assert_err(tnfctl_filter_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_list_get(h, &list, &n), TNFCTL_ERR_NONE);
	assert_int_equal(n, 2);
	assert_true((list[0] == k.pid[1] && list[1] == k.pid[3]) ||
		    (list[0] == k.pid[3] && list[1] == k.pid[1]));
	free(list);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.filter_state, B_TRUE);
	kalloc(h, path, 1 << 20);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	kids_run(&k, NKIDS);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(path, &t);
	for (i = 0; i < t.n; i++) {
		int j = kid_index(&k, NKIDS, t.v[i].pid);

		if (j >= 0)
			seen[j]++;
		else
			others++;
	}
	free(t.v);
	if (seen[0] || seen[1] != 1 || seen[2] || seen[3] != 1 || seen[4] || others)
		fail_msg("records per child %d %d %d %d %d, others %d; want 0 1 0 1 0, 0", seen[0],
			 seen[1], seen[2], seen[3], seen[4], others);
	/* the children have exited: they have left the list, as on Solaris */
	tl_assert_err(tnfctl_filter_list_get(h, &list, &n), TNFCTL_ERR_NONE);
	assert_int_equal(n, 0);
	assert_null(list);
	/* the children are gone: deleting them says so, and they leave the list */
	tl_assert_err(tnfctl_filter_list_delete(h, k.pid[1]), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_filter_list_delete(h, k.pid[1]), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_filter_list_delete(h, k.pid[3]), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_filter_list_get(h, &list, &n), TNFCTL_ERR_NONE);
	assert_int_equal(n, 0);
	assert_null(list);
	kclose(h);
}

/* execve's argv (char **) is a pointer, not a string; its file name is one. */
static void execve_kid(const void *arg)
{
	char *argv[] = {(char *)arg, NULL}, secret[] = "hunter2";
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (write(null, secret, sizeof(secret)) != sizeof(secret))
		_exit(4);
	execve(arg, argv, environ);
	_exit(3);
}

static void test_kernel_execve_args(void **state)
{
	char path[PATH_MAX], prog[] = "/bin/true";
	struct ktrace t;
	tnfctl_handle_t *h;
	struct kid k;
	int i, writes = 0;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kexecve");
	ktrace_probe(h, "sys_enter_execve");
	ktrace_probe(h, "sys_enter_write");
	k = kid_start(execve_kid, prog);
	trace_only(h, k.pid, path, 1 << 20);
	kid_finish(&k);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(path, &t);
	for (i = 0; i < t.n; i++) {
		if (t.v[i].pid != (uint32_t)k.pid)
			continue;
		if (!strcmp(t.v[i].probe, "sys_enter_write")) {
			/* a data buffer is the process's data: a pointer, not a string */
			assert_int_not_equal(t.v[i].buf_kind, 0);
			if (t.v[i].buf_kind == TNF_K_STRING)
				fail_msg("write's buf recorded as a string");
			writes++; /* (valgrind, if under it, writes too) */
		} else if (!strcmp(t.v[i].probe, "sys_enter_execve")) {
			assert_string_equal(t.v[i].filename, prog);
			if (t.v[i].argv_kind == TNF_K_STRING)
				fail_msg("execve's argv recorded as a string");
			assert_int_not_equal(t.v[i].argv_kind, 0);
		}
	}
	assert_true(writes >= 1);
	assert_int_equal(count_of(&t, k.pid, "sys_enter_execve"), 1);
	free(t.v);
	kclose(h);
}

/* Long strings, many to a block: every one whole, nothing counted lost. */
static void openat_loop(const void *arg)
{
	int i;

	for (i = 0; i < 2000; i++)
		syscall(SYS_openat, AT_FDCWD, arg, O_RDONLY | O_CLOEXEC);
}

static void test_kernel_long_strings(void **state)
{
	char path[PATH_MAX], name[PATH_MAX];
	struct ktrace t;
	tnfctl_handle_t *h;
	struct kid k;
	int i, whole = 0, cut = 0;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "klong");
	snprintf(name, sizeof(name), "%s/%0200d", tmpdir, 7);
	ktrace_probe(h, "sys_enter_openat");
	k = kid_start(openat_loop, name);
	trace_only(h, k.pid, path, 4 << 20);
	kid_finish(&k);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(path, &t);
	for (i = 0; i < t.n; i++)
		if (t.v[i].pid == (uint32_t)k.pid && !strcmp(t.v[i].probe, "sys_enter_openat") &&
		    !strcmp(t.v[i].filename, name))
			whole++;
		else if (t.v[i].pid == (uint32_t)k.pid)
			cut++;
	free(t.v);
	if (whole != 2000 || cut || t.drops.total)
		fail_msg("%d whole, %d cut or other, %u counted lost; want 2000, 0, 0", whole, cut,
			 t.drops.total);
	kclose(h);
}

/* perf's own users of a tracepoint we trace still see every event. */
static void test_kernel_perf_coexists(void **state)
{
	struct perf_event_attr pa;
	char path[PATH_MAX], idf[PATH_MAX], buf[32];
	tnfctl_handle_t *h;
	uint64_t count = 0;
	int pfd, n = 100;
	struct kid k;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kperf");
	ktrace_probe(h, "sys_enter_getppid");
	snprintf(idf, sizeof(idf), "/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id");
	if (tl_read_file(idf, buf, sizeof(buf)) <= 0) {
		snprintf(idf, sizeof(idf),
			 "/sys/kernel/debug/tracing/events/syscalls/sys_enter_getppid/id");
		assert_true(tl_read_file(idf, buf, sizeof(buf)) > 0);
	}
	k = kid_start(getppid_loop, &n);
	/* a counting perf event on the same tracepoint, for the child */
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = strtoull(buf, NULL, 10);
	pfd = (int)syscall(SYS_perf_event_open, &pa, k.pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	assert_true(pfd >= 0);
	kalloc(h, path, 1 << 20);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	kid_finish(&k);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	assert_int_equal(read(pfd, &count, sizeof(count)), sizeof(count));
	close(pfd);
	if (count != 100)
		fail_msg("perf counted %llu of the child's 100 getppid calls",
			 (unsigned long long)count);
	kclose(h);
}

/* Root without the capabilities BPF tracing needs is refused at the open. */
static void test_kernel_open_needs_caps(void **state)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	tnfctl_handle_t *h;
	int st;
	pid_t kid;

	(void)state;
	h = kopen(); /* skips where there is no kernel mode at all */
	kclose(h);
	kid = fork();
	if (!kid) {
		memset(d, 0, sizeof(d)); /* no effective, permitted or inheritable capability */
		if (syscall(SYS_capset, &hdr, d))
			_exit(100);
		_exit(tnfctl_kernel_open(&h));
	}
	tl_track_pid(kid);
	assert_int_equal(tl_waitpid_timeout(kid, &st, 0, tl.timeout_ms), kid);
	assert_true(WIFEXITED(st));
	tl_assert_err((tnfctl_errcode_t)WEXITSTATUS(st), TNFCTL_ERR_ACCES);
}

/* @n getppid calls of a fresh child, filtered to it, traced: how many are in the file. */
static int getppid_records(tnfctl_handle_t *h, const char *path, int n, bool alloc)
{
	struct ktrace t;
	struct kid k;
	int got;

	k = kid_start(getppid_loop, &n);
	trace_only(h, k.pid, path, alloc ? 4 << 20 : 0);
	kid_finish(&k);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(path, &t);
	got = count_of(&t, k.pid, "sys_enter_getppid");
	free(t.v);
	return got;
}

/*
 * A fork of the controller shares the BPF object, ring buffer and file:
 * its copy of the handle takes no call but close, which changes nothing
 * of the parent's, and its life does not stop the parent's tracing.
 */
static void test_kernel_fork_of_controller(void **state)
{
	char path[PATH_MAX];
	tnfctl_handle_t *h;
	int hold[2], st;
	pid_t kid, holder;
	char c;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kfork");
	ktrace_probe(h, "sys_enter_getppid");
	assert_int_equal(getppid_records(h, path, 100, true), 100);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	/* a child that closes its copy while the parent traces */
	kid = fork();
	if (!kid) {
		tnfctl_trace_attrs_t a;

		if (tnfctl_trace_attrs_get(h, &a) ||
		    tnfctl_trace_state_set(h, B_FALSE) != TNFCTL_ERR_BADARG)
			_exit(1);
		_exit(tnfctl_close(h, TNFCTL_TARG_DEFAULT) ? 2 : 0);
	}
	tl_track_pid(kid);
	assert_int_equal(tl_waitpid_timeout(kid, &st, 0, tl.timeout_ms), kid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	/* a child that holds its copy while the parent turns tracing off and on */
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	holder = fork();
	if (!holder) {
		close(hold[1]);
		_exit(read(hold[0], &c, 1) == 0 ? 0 : 1);
	}
	close(hold[0]);
	tl_track_pid(holder);
	assert_int_equal(getppid_records(h, path, 300, false), 300);
	close(hold[1]);
	assert_int_equal(tl_waitpid_timeout(holder, &st, 0, tl.timeout_ms), holder);
	kclose(h);
}

/* Descriptors of @pid that are BPF objects or perf events (the tracepoint links). */
static int bpf_fds_of(pid_t pid)
{
	char dir[64], path[PATH_MAX], target[256];
	struct dirent *de;
	int n = 0;
	ssize_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strstr(target, "anon_inode:bpf") || strstr(target, "perf_event"))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * A fork of the controller that does not exec lets go of the links,
 * programs and maps at once: the parent's close detaches everything while
 * the child lives on (it held them until it closed its copy or ended).
 */
static void test_kernel_fork_child_holds_no_links(void **state)
{
	char path[PATH_MAX];
	tnfctl_handle_t *h;
	int hold[2], ready[2], st;
	pid_t holder;
	char c;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kforkfd");
	ktrace_probe(h, "sys_enter_getppid");
	kalloc(h, path, 4 << 20);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	assert_true(bpf_fds_of(getpid()) > 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	holder = fork();
	if (!holder) {
		close(hold[1]);
		close(ready[0]);
		close(ready[1]); /* the parent's read ends: the fork handlers have run */
		_exit(read(hold[0], &c, 1) == 0 ? 0 : 1);
	}
	tl_track_pid(holder);
	close(hold[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 0);
	close(ready[0]);
	assert_int_equal(bpf_fds_of(holder), 0);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	kclose(h);
	close(hold[1]);
	assert_int_equal(tl_waitpid_timeout(holder, &st, 0, tl.timeout_ms), holder);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A new process given a listed process's pid does not pass the filter. */
static void test_kernel_filter_reused_pid(void **state)
{
	char path[PATH_MAX], buf[32];
	struct ktrace t;
	tnfctl_handle_t *h;
	int tries, fd, n, none = 0, some = 1000;
	struct kid a, b = {.pid = -1};

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kreuse");
	ktrace_probe(h, "sys_enter_getppid");
	a = kid_start(getppid_loop, &none);
	trace_only(h, a.pid, path, 1 << 20);
	kid_finish(&a);
	/* a is gone and still in the program's map; give its pid to b */
	for (tries = 0; tries < 500 && b.pid != a.pid; tries++) {
		fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			print_message("skipped: /proc/sys/kernel/ns_last_pid: %s\n",
				      strerror(errno));
			kclose(h);
			skip();
		}
		snprintf(buf, sizeof(buf), "%d", a.pid - 1);
		assert_true(write(fd, buf, strlen(buf)) > 0);
		close(fd);
		b = kid_start(getppid_loop, &some);
		if (b.pid != a.pid)
			kid_finish(&b);
	}
	if (b.pid != a.pid) {
		print_message("skipped: pid %d was not given again in %d tries\n", a.pid, tries);
		kclose(h);
		skip();
	}
	kid_finish(&b);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(path, &t);
	n = count_of(&t, b.pid, "sys_enter_getppid");
	free(t.v);
	if (n)
		fail_msg("%d records of pid %d's new process, which was never listed", n, b.pid);
	kclose(h);
}

static int tid_out[2], tid_go[2];

static void *tid_thread(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char c;

	(void)arg;
	if (write(tid_out[1], &tid, sizeof(tid)) == sizeof(tid))
		(void)!read(tid_go[0], &c, 1); /* lives until the test lets it go */
	return NULL;
}

/* The tid of a live thread of ours (not a process); thread_done() ends it. */
static pid_t thread_tid(void)
{
	pid_t tid = 0;

	assert_int_equal(pipe2(tid_out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(tid_go, O_CLOEXEC), 0);
	tl_thread_start(tid_thread, NULL);
	assert_int_equal(read(tid_out[0], &tid, sizeof(tid)), sizeof(tid));
	return tid;
}

static void thread_done(void)
{
	close(tid_go[1]);
	close(tid_out[0]);
	close(tid_out[1]);
}

/* A trace that outgrew its ring says so: its oldest events are gone. */
#define KWRAP_BATCH   400 /* under 40 KB of ring records: less than the 64 KiB ring buffer */
#define KWRAP_BATCHES 50  /* ~16 bytes each in the file: 320 KB into a 128 KiB file */

/* A child that calls getppid KWRAP_BATCH times at each byte on @go, answering on @done. */
static pid_t batch_kid(int *go, int *done)
{
	int g[2], d[2], i;
	pid_t pid;
	char c;

	assert_int_equal(pipe2(g, O_CLOEXEC), 0);
	assert_int_equal(pipe2(d, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(g[1]); /* EOF at the test's close */
		close(d[0]);
		while (read(g[0], &c, 1) == 1) {
			for (i = 0; i < KWRAP_BATCH; i++)
				syscall(SYS_getppid);
			if (write(d[1], "d", 1) != 1)
				_exit(2);
		}
		_exit(0);
	}
	tl_track_pid(pid);
	close(g[0]);
	close(d[1]);
	*go = g[1];
	*done = d[0];
	return pid;
}

/*
 * More events than the file holds, none dropped: the file wraps and
 * tnfdump says so.  Tracing is on for one batch at a time, and its end
 * drains the ring buffer, so the consumer's speed does not matter (with
 * one run of 20000 calls, a slow consumer (a sanitizer build, a loaded
 * machine) let the ring buffer overflow and the file never wrapped).
 */
static void test_kernel_wrap_reported(void **state)
{
	char path[PATH_MAX], out[4096], c;
	int go, done, b, st;
	struct ktrace t;
	tnfctl_handle_t *h;
	pid_t pid;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kwrap");
	ktrace_probe(h, "sys_enter_getppid");
	pid = batch_kid(&go, &done);
	tl_assert_err(tnfctl_filter_list_add(h, pid), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	kalloc(h, path, 128 * 1024);
	for (b = 0; b < KWRAP_BATCHES; b++) {
		tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
		assert_int_equal(write(go, "g", 1), 1);
		assert_int_equal(read(done, &c, 1), 1);
		tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	}
	close(go);
	close(done);
	assert_int_equal(tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	read_trace(path, &t);
	assert_true(t.n > 0 && t.n < KWRAP_BATCH * KWRAP_BATCHES);
	assert_int_equal(t.drops.total, 0);
	free(t.v);
	dump_stderr(path, out, sizeof(out));
	if (!strstr(out, "the trace wrapped: its oldest events were written over"))
		fail_msg("tnfdump does not say the trace wrapped:\n%s", out);
	kclose(h);
}

/* The library's own thread is not traced: its syscalls would feed the ring they drain. */
static void test_kernel_consumer_not_traced(void **state)
{
	char path[PATH_MAX];
	struct ktrace t;
	tnfctl_handle_t *h;
	int i, main_tid = (int)syscall(SYS_gettid), ours = 0;
	int n = 30000; /* several quarter-rings of records: the consumer wakes meanwhile */
	struct kid k;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kself");
	ktrace_probe(h, "sys_enter_getppid");
	ktrace_probe(h, "sys_enter_bpf");
	ktrace_probe(h, "sys_enter_epoll_wait");
	ktrace_probe(h, "sys_enter_epoll_pwait");
	k = kid_start(getppid_loop, &n);
	kalloc(h, path, 4 << 20);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	kid_finish(&k);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(path, &t);
	for (i = 0; i < t.n; i++)
		if (t.v[i].pid == (uint32_t)getpid() && t.v[i].tid != (uint64_t)main_tid &&
		    strcmp(t.v[i].probe, "sys_enter_getppid"))
			ours++;
	assert_int_equal(count_of(&t, k.pid, "sys_enter_getppid"), n);
	free(t.v);
	if (ours)
		fail_msg("%d records of the library's own thread's syscalls", ours);
	kclose(h);
}

/* Each function's states and error codes, as Solaris gave them. */
static void test_kernel_states_and_errors(void **state)
{
	char path[PATH_MAX];
	tnfctl_trace_attrs_t a;
	tnfctl_handle_t *h, *h2 = NULL;
	tnfctl_probe_t *p;
	tnfctl_event_t evt;
	unsigned long bad = 999999;
	pid_t gone;
	int st;

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kstates");
	tl_assert_err(tnfctl_kernel_open(&h2), TNFCTL_ERR_BUSY);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.targ_pid, 0);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_NONE);
	assert_int_equal(a.trace_state, B_FALSE);
	assert_int_equal(a.filter_state, B_FALSE);
	assert_int_equal(a.trace_min_size, 128 * 1024);
	assert_null(a.trace_file_name);
	tl_assert_err(tnfctl_buffer_dealloc(h), TNFCTL_ERR_NOBUF);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NOBUF);
	tl_assert_err(tnfctl_buffer_alloc(h, path, 64 * 1024), TNFCTL_ERR_SIZETOOSMALL);
	kalloc(h, path, 128 * 1024);
	tl_assert_err(tnfctl_buffer_alloc(h, path, 128 * 1024), TNFCTL_ERR_BUFEXISTS);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_OK);
	assert_int_equal(a.trace_buf_size, 128 * 1024);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_state, B_TRUE);
	tl_assert_err(tnfctl_buffer_dealloc(h), TNFCTL_ERR_BADDEALLOC);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_buffer_dealloc(h), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	assert_int_equal(a.trace_buf_state, TNFCTL_BUF_NONE);
	assert_int_equal(a.trace_state, B_FALSE);
	assert_null(a.trace_file_name);
	assert_int_equal(a.trace_buf_size, 0);
	/* a second buffer after the first: a fresh file */
	kalloc(h, path, 256 * 1024);
	tl_assert_err(tnfctl_buffer_dealloc(h), TNFCTL_ERR_NONE);

	/* the process filter */
	gone = fork();
	if (!gone)
		_exit(0);
	assert_int_equal(tl_waitpid_timeout(gone, &st, 0, tl.timeout_ms), gone);
	tl_assert_err(tnfctl_filter_list_add(h, gone), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_filter_list_add(h, -5), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_filter_list_delete(h, -1), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_filter_list_add(h, thread_tid()), TNFCTL_ERR_BADARG);
	thread_done();
	tl_assert_err(tnfctl_filter_list_delete(h, gone), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_filter_list_delete(h, getpid()), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_filter_list_add(h, getpid()), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_list_add(h, 0), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_list_delete(h, getpid()), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_list_delete(h, 0), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_list_get(h, NULL, &st), TNFCTL_ERR_BADARG);

	/* what a kernel handle refuses */
	p = kprobe(h, "sched_process_exec", NULL);
	tl_assert_err(tnfctl_probe_connect(h, p, NULL, "tnf_probe_debug"), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_disconnect_all(h, p, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_continue(h, &evt, NULL), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_probe_apply_ids(h, 1, &bad, tnfctl_probe_enable, NULL),
		      TNFCTL_ERR_INVALIDPROBE);
	tl_assert_err(tnfctl_check_libs(h), TNFCTL_ERR_NONE);
	kclose(h);
	/* closed: another kernel handle may open */
	h = kopen();
	kclose(h);
}

/* A full ring buffer: what could not be written is counted, in the file. */
static void test_kernel_overflow_counted(void **state)
{
	char path[PATH_MAX], out[4096];
	struct ktrace t;
	tnfctl_handle_t *h;
	int ours, n = 100000;
	struct kid k;

	(void)state;
	/* the consumer drains only when tracing stops (a consumer that cannot keep up) */
	setenv("TNFCTL_KTRACE_STALL", "1", 1);
	h = kopen();
	trace_path(path, sizeof(path), "koverflow");
	ktrace_probe(h, "sys_enter_getppid");
	k = kid_start(getppid_loop, &n);
	trace_only(h, k.pid, path, 4 << 20);
	kid_finish(&k);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	unsetenv("TNFCTL_KTRACE_STALL");
	read_trace(path, &t);
	ours = count_of(&t, k.pid, "sys_enter_getppid");
	free(t.v);
	/* a 1 MiB ring (a quarter of the file) holds fewer: all counted, none silently gone */
	assert_true(ours > 0);
	assert_true(t.drops.total > 0);
	assert_int_equal(t.drops.by_reason[TNF_DROP_KERNEL_RB], t.drops.total);
	if (ours + (int)t.drops.total != n)
		fail_msg("%d written + %u lost != %d getppid calls", ours, t.drops.total, n);
	dump_stderr(path, out, sizeof(out));
	if (!strstr(out, "kernel ring buffer full"))
		fail_msg("tnfdump does not report the loss:\n%s", out);
	kclose(h);
}

/*
 * One timeline: a kernel trace and a user trace of the same period, given
 * to one tnfdump, come out in time order: the demo's exec before its first
 * probe event, its exit after its last.
 */
static void test_kernel_user_merged(void **state)
{
	char kpath[PATH_MAX], upath[PATH_MAX], tnftrace[PATH_MAX];
	struct ktrace kt, ut;
	tnfctl_handle_t *h;
	int64_t exec_t = -1, exit_t = -1, first_u = INT64_MAX, last_u = INT64_MIN;
	uint32_t demo = 0;
	int i, st, devnull, demo_u = 0;
	pid_t pid;

	(void)state;
	h = kopen();
	trace_path(kpath, sizeof(kpath), "kmerge");
	trace_path(upath, sizeof(upath), "umerge");
	tl_path_of(tnftrace, "tnftrace");
	ktrace_probe(h, "sched_process_exec");
	ktrace_probe(h, "sched_process_exit");
	kalloc(h, kpath, 1 << 20);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	{
		char *argv[] = {tnftrace, "-q", "-o", upath, "--", tl.demo, NULL};

		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		pid = tl_spawn(argv, environ, devnull, NULL);
		close(devnull);
		assert_int_equal(tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms), pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(kpath, &kt);
	read_trace(upath, &ut);
	assert_true(ut.n > 0);
	for (i = 0; i < kt.n && !demo; i++)
		if (!strcmp(kt.v[i].probe, "sched_process_exec") &&
		    !strcmp(kt.v[i].filename, tl.demo))
			demo = kt.v[i].pid;
	if (!demo)
		fail_msg("no exec of %s in the kernel trace", tl.demo);
	for (i = 0; i < ut.n; i++) {
		assert_false(ut.v[i].kernel);
		if (ut.v[i].pid != demo)
			continue;
		demo_u++;
		if (ut.v[i].time < first_u)
			first_u = ut.v[i].time;
		if (ut.v[i].time > last_u)
			last_u = ut.v[i].time;
	}
	for (i = 0; i < kt.n; i++) {
		if (kt.v[i].pid != demo)
			continue;
		if (!strcmp(kt.v[i].probe, "sched_process_exec") && exec_t < 0)
			exec_t = kt.v[i].time;
		if (!strcmp(kt.v[i].probe, "sched_process_exit") && kt.v[i].tid == demo)
			exit_t = kt.v[i].time;
	}
	if (exec_t < 0 || exit_t < 0)
		fail_msg("no exec or exit record of the demo (pid %u) in the kernel trace", demo);
	/* with none, the bounds below would compare nothing */
	if (!demo_u)
		fail_msg("no user event of the demo (pid %u) in its own trace", demo);
	if (!(exec_t < first_u && last_u < exit_t))
		fail_msg("not one clock: exec %lld, user events %lld..%lld, exit %lld",
			 (long long)exec_t, (long long)first_u, (long long)last_u,
			 (long long)exit_t);
	free(kt.v);
	free(ut.v);
	kclose(h);
}

/* The sys_enter_* probes but two, for test_kernel_slot_cap. */
struct ksys {
	tnfctl_probe_t *p[64];
	int n;
};

static tnfctl_errcode_t ksys_op(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct ksys *k = cd;
	tnfctl_probe_state_t st;

	if (tnfctl_probe_state_get(h, p, &st) || k->n == 64)
		return TNFCTL_ERR_NONE;
	if (!strncmp(st.attr_string, "name sys_enter_", 15) &&
	    strncmp(st.attr_string, "name sys_enter_getppid;", 23) &&
	    strncmp(st.attr_string, "name sys_enter_openat;", 22))
		k->p[k->n++] = p;
	return TNFCTL_ERR_NONE;
}

/*
 * Without cookies 64 tracepoints are traced at once (a stub program
 * each): the next enable fails with ALLOCFAIL and leaves its probe
 * disabled.  Disabling one lets the next take its slot, and the slot's
 * old tracepoint writes nothing more, not even as the new one.
 */
static void test_kernel_slot_cap(void **state)
{
	char path[PATH_MAX], file[PATH_MAX];
	tnfctl_probe_t *getppid_p, *openat_p;
	tnfctl_probe_state_t st;
	struct ksys sys = {.n = 0};
	struct ktrace t;
	tnfctl_handle_t *h;
	int i, getppids = 0, opens = 0, others = 0;
	uint64_t tid = (uint64_t)syscall(SYS_gettid);

	(void)state;
	h = kopen();
	trace_path(path, sizeof(path), "kcap");
	snprintf(file, sizeof(file), "%s/kcap-%d-not-there", tmpdir, getpid());
	getppid_p = kprobe(h, "sys_enter_getppid", NULL);
	openat_p = kprobe(h, "sys_enter_openat", NULL);
	tl_assert_err(tnfctl_probe_apply(h, ksys_op, &sys), TNFCTL_ERR_NONE);
	assert_int_equal(sys.n, 64);
	kalloc(h, path, 4 << 20);
	tl_assert_err(tnfctl_filter_list_add(h, getpid()), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_filter_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_trace_state_set(h, B_TRUE), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, getppid_p, NULL), TNFCTL_ERR_NONE);
	for (i = 0; i < 63; i++)
		tl_assert_err(tnfctl_probe_enable(h, sys.p[i], NULL), TNFCTL_ERR_NONE);
	syscall(SYS_getppid);
	/* all 64 slots taken */
	tl_assert_err(tnfctl_probe_enable(h, openat_p, NULL), TNFCTL_ERR_ALLOCFAIL);
	tl_assert_err(tnfctl_probe_state_get(h, openat_p, &st), TNFCTL_ERR_NONE);
	assert_int_equal(st.enabled, B_FALSE);
	/* traced but not enabled takes no slot: it stays as it was */
	tl_assert_err(tnfctl_probe_trace(h, sys.p[63], NULL), TNFCTL_ERR_NONE);
	/* one disabled: its slot goes to the next */
	tl_assert_err(tnfctl_probe_disable(h, getppid_p, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, openat_p, NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, sys.p[63], NULL), TNFCTL_ERR_ALLOCFAIL);
	for (i = 0; i < 3; i++)
		syscall(SYS_getppid);
	syscall(SYS_openat, AT_FDCWD, file, O_RDONLY | O_CLOEXEC);
	tl_assert_err(tnfctl_trace_state_set(h, B_FALSE), TNFCTL_ERR_NONE);
	read_trace(path, &t);
	assert_int_equal(t.drops.total, 0);
	for (i = 0; i < t.n; i++) {
		if (t.v[i].pid != (uint32_t)getpid() || t.v[i].tid != tid)
			continue;
		if (!strcmp(t.v[i].probe, "sys_enter_getppid"))
			getppids++;
		else if (!strcmp(t.v[i].probe, "sys_enter_openat") && t.v[i].has_filename &&
			 !strcmp(t.v[i].filename, file))
			opens++;
		else if (!strcmp(t.v[i].probe, "sys_enter_openat"))
			others++;
	}
	free(t.v);
	if (getppids != 1 || opens != 1 || others)
		fail_msg("%d getppid records (want 1: before the disable), %d openat of %s "
			 "(want 1), %d other openat records of this thread (want 0)",
			 getppids, opens, file, others);
	kclose(h);
}

KCOMPAT(test_kernel_trace_workload)
KCOMPAT(test_kernel_filter)
KCOMPAT(test_kernel_execve_args)
KCOMPAT(test_kernel_long_strings)
KCOMPAT(test_kernel_perf_coexists)
KCOMPAT(test_kernel_fork_of_controller)
KCOMPAT(test_kernel_fork_child_holds_no_links)
KCOMPAT(test_kernel_filter_reused_pid)
KCOMPAT(test_kernel_states_and_errors)
KCOMPAT(test_kernel_overflow_counted)
KCOMPAT(test_kernel_wrap_reported)
KCOMPAT(test_kernel_consumer_not_traced)
KCOMPAT(test_kernel_user_merged)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_kernel_probes_listed),
		TL_TEST(test_kernel_trace_workload),
		TL_TEST(test_kernel_filter),
		TL_TEST(test_kernel_execve_args),
		TL_TEST(test_kernel_long_strings),
		TL_TEST(test_kernel_perf_coexists),
		TL_TEST(test_kernel_fork_of_controller),
		TL_TEST(test_kernel_fork_child_holds_no_links),
		TL_TEST(test_kernel_filter_reused_pid),
		TL_TEST(test_kernel_states_and_errors),
		TL_TEST(test_kernel_open_needs_caps),
		TL_TEST(test_kernel_overflow_counted),
		TL_TEST(test_kernel_wrap_reported),
		TL_TEST(test_kernel_consumer_not_traced),
		TL_TEST(test_kernel_user_merged),
		/* the no-cookie variant (5.10 .. 5.14) forced */
		KCOMPAT_UNIT("test_kernel_slot_cap", test_kernel_slot_cap),
		KCOMPAT_TEST(test_kernel_trace_workload),
		KCOMPAT_TEST(test_kernel_filter),
		KCOMPAT_TEST(test_kernel_execve_args),
		KCOMPAT_TEST(test_kernel_long_strings),
		KCOMPAT_TEST(test_kernel_perf_coexists),
		KCOMPAT_TEST(test_kernel_fork_of_controller),
		KCOMPAT_TEST(test_kernel_fork_child_holds_no_links),
		KCOMPAT_TEST(test_kernel_filter_reused_pid),
		KCOMPAT_TEST(test_kernel_states_and_errors),
		KCOMPAT_TEST(test_kernel_overflow_counted),
		KCOMPAT_TEST(test_kernel_wrap_reported),
		KCOMPAT_TEST(test_kernel_consumer_not_traced),
		KCOMPAT_TEST(test_kernel_user_merged),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
