// SPDX-License-Identifier: BSD-2-Clause
/*
 * Edge cases of the probe layer found by adversarial testing: bad input to
 * tnfdump (FIFOs, devices), trace files shared by many short-lived
 * processes, and misuse of the probe functions of libtnfctl.  A test marked
 * "BUG:" documents a libtnfctl defect that is not fixed yet.
 */
#include "testlib.h"

static char probes_prog[PATH_MAX], pre_lib[PATH_MAX], tnfdump_prog[PATH_MAX];
static char tmpdir[64];

static void paths(void)
{
	tl_path_of(probes_prog, "tests/helpers/tl_probes");
	tl_path_of(pre_lib, "tests/solibs/libtl_pre.so");
	tl_path_of(tnfdump_prog, "tnfdump");
	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/tl-edges-XXXXXX");
		if (!mkdtemp(tmpdir))
			fail_msg("mkdtemp: %s", strerror(errno));
	}
}

static void trace_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s-%d.tnf", tmpdir, name, getpid());
	unlink(buf);
}

/*
 * Runs tnfdump on @file, stdout and stderr into @out; returns its exit
 * status, or -1 (killed) if it did not end within the timeout.
 */
static int dump(const char *file, char *out, size_t len)
{
	char *argv[] = {tnfdump_prog, (char *)file, NULL};
	char opath[PATH_MAX];
	int fd, st = 0, n;
	pid_t pid;

	paths();
	snprintf(opath, sizeof(opath), "%s/dump-%d.out", tmpdir, getpid());
	fd = open(opath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	pid = tl_spawn(argv, environ, fd, NULL);
	if (tl_waitpid_timeout(pid, &st, 0, 10000) != pid) {
		kill(pid, SIGKILL);
		tl_waitpid_timeout(pid, &st, 0, 10000);
		st = -1;
	}
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(opath);
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Event lines of @probe in tnfdump output (optionally with @data_has). */
static int count_events(const char *out, const char *probe, const char *data_has)
{
	const char *l = out;
	int n = 0;

	while (l && *l) {
		const char *e = strchr(l, '\n');
		char name[64], line[1024], cpu[8];
		unsigned long long tid;
		double el, de;
		int pid, lwp;
		size_t len = e ? (size_t)(e - l) : strlen(l);

		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (sscanf(line, "%lf %lf %d %d %llu %7s %63s", &el, &de, &pid, &lwp, &tid, cpu,
			   name) == 7 &&
		    !strcmp(name, probe) && (!data_has || strstr(line, data_has)))
			n++;
		l = e ? e + 1 : NULL;
	}
	return n;
}

/* Name of a probe from its attribute string ("name X;..."). */
static void probe_name(const char *attrs, char *buf, size_t len)
{
	size_t n;

	if (strncmp(attrs, "name ", 5)) {
		snprintf(buf, len, "?");
		return;
	}
	n = strcspn(attrs + 5, ";");
	snprintf(buf, len, "%.*s", (int)n, attrs + 5);
}

struct lookup {
	const char *name;
	tnfctl_probe_t *found;
};

static tnfctl_errcode_t look(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct lookup *l = cd;
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err = tnfctl_probe_state_get(h, p, &st);
	char name[64];

	if (err)
		return err;
	probe_name(st.attr_string, name, sizeof(name));
	if (!strcmp(name, l->name))
		l->found = p;
	return TNFCTL_ERR_NONE;
}

static tnfctl_probe_t *probe_of(tnfctl_handle_t *h, const char *name)
{
	struct lookup l = {name, NULL};

	tl_assert_err(tnfctl_probe_apply(h, look, &l), TNFCTL_ERR_NONE);
	if (!l.found)
		fail_msg("no probe %s", name);
	return l.found;
}

/* Continues @h until it exits, letting every FORK child run free. */
static void run_to_exit(tnfctl_handle_t *h)
{
	tnfctl_event_t evt;

	while ((evt = tl_continue(h, NULL)) == TNFCTL_EVENT_FORK)
		;
	if (evt != TNFCTL_EVENT_EXIT)
		fail_msg("expected EXIT, got %s", tl_event_name(evt));
}

/* tl_probes under exec_open, with libtl_pre.so preloaded after libtnfprobe. */
static tnfctl_handle_t *start(struct tl_proc **pp)
{
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16];
	char *argv[] = {probes_prog, cfd, rfd, NULL};
	tnfctl_trace_attrs_t a;
	tnfctl_handle_t *h;

	paths();
	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	tl_set_cloexec(p->t_cmd_r, 0);
	tl_set_cloexec(p->t_reply_w, 0);
	tl_assert_err(tnfctl_exec_open(probes_prog, argv, NULL, pre_lib, NULL, &h),
		      TNFCTL_ERR_NONE);
	tl_proc_handed_over(p);
	tl_track_handle(h);
	tl_assert_err(tnfctl_trace_attrs_get(h, &a), TNFCTL_ERR_NONE);
	tl_proc_set_pid(p, a.targ_pid);
	tl_track_pid(a.targ_pid);
	*pp = p;
	return h;
}

/* ---------------------------------------------------------------- */
/* tnfdump on things that are not trace files */

/* A FIFO with no writer: tnfdump used to block for ever in open(2). */
static void test_tnfdump_fifo_does_not_hang(void **state)
{
	static char out[8192];
	char fifo[PATH_MAX];

	(void)state;
	paths();
	snprintf(fifo, sizeof(fifo), "%s/fifo-%d", tmpdir, getpid());
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(dump(fifo, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "tnfdump: "));
	assert_non_null(strstr(out, fifo));
	unlink(fifo);
}

/* /dev/zero, a directory, a missing and an unreadable file: status 1, one line each. */
static void test_tnfdump_non_files(void **state)
{
	static char out[8192];
	char path[PATH_MAX];
	int fd;

	(void)state;
	paths();
	assert_int_equal(dump("/dev/zero", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "tnfdump: /dev/zero: "));
	assert_int_equal(dump(tmpdir, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "Is a directory"));
	snprintf(path, sizeof(path), "%s/none-%d", tmpdir, getpid());
	assert_int_equal(dump(path, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "No such file"));
	if (geteuid() != 0) { /* root reads a mode-000 file anyway */
		snprintf(path, sizeof(path), "%s/unreadable-%d", tmpdir, getpid());
		fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(dump(path, out, sizeof(out)), 1);
		unlink(path);
	}
}

/* ---------------------------------------------------------------- */
/* the runtime: many processes sharing one small file */

/*
 * 100 forked children each fire one probe and exit, then the parent fires
 * 20000 events into a 128 KiB file.  Each child held a data block when it
 * died; those blocks used to stay locked for ever, so the parent ran out of
 * blocks and lost everything after its first block, the last events
 * included.  The newest events must be in the file.
 */
static void test_dead_children_do_not_pin_blocks(void **state)
{
	static char out[4 << 20];
	char file[PATH_MAX];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int i;

	(void)state;
	tl_require_root();
	h = start(&p);
	trace_path(file, sizeof(file), "dead");
	tl_assert_err(tnfctl_buffer_alloc(h, file, 128 * 1024), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_tick"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_main_str"), NULL), TNFCTL_ERR_NONE);
	tl_assert_err(tnfctl_probe_enable(h, probe_of(h, "tl_child"), NULL), TNFCTL_ERR_NONE);
	tl_send(p, "fire 1"); /* the parent maps the file first */
	for (i = 0; i < 100; i++)
		tl_send(p, "fork_fire 1");
	tl_send(p, "fire 20000");
	tl_send(p, "exit 0");
	run_to_exit(h);
	tl_close(h, TNFCTL_TARG_DEFAULT);
	assert_int_equal(dump(file, out, sizeof(out)), 0);
	assert_int_equal(count_events(out, "tl_main_tick", "i: 19999"), 1);
	assert_true(count_events(out, "tl_main_str", NULL) >= 1); /* the last one */
	assert_true(count_events(out, "tl_main_tick", NULL) > 1000);
	unlink(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_tnfdump_fifo_does_not_hang),
		TL_TEST(test_tnfdump_non_files),
		TL_TEST(test_dead_children_do_not_pin_blocks),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
