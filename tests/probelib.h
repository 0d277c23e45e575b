/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * probelib.h - helpers shared by the probe tests (test_probes,
 * test_probe_edges): the probe targets, trace files in a private temporary
 * directory (removed at exit), probe lookup by name, and tnfdump output
 * read back and counted.  Include after testlib.h.
 */
#ifndef PROBELIB_H
#define PROBELIB_H

#include <ftw.h>

static char probes_prog[PATH_MAX], pre_lib[PATH_MAX], plug_lib[PATH_MAX];
static char internal_prog[PATH_MAX], tnfdump_prog[PATH_MAX];
static char tmpdir[64];
static int targ_cmd_fd, targ_reply_fd; /* the pipe ends start() gave the last target */

static inline int pl_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Only the process that made the directory removes it (forked children exit too). */
static pid_t pl_tmp_owner;

static inline void pl_rm_tmpdir(void)
{
	if (tmpdir[0] && getpid() == pl_tmp_owner)
		nftw(tmpdir, pl_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void paths(void)
{
	tl_path_of(probes_prog, "tests/helpers/tl_probes");
	tl_path_of(internal_prog, "tests/helpers/tl_internal");
	tl_path_of(pre_lib, "tests/solibs/libtl_pre.so");
	tl_path_of(plug_lib, "tests/solibs/libtl_plug.so");
	tl_path_of(tnfdump_prog, "tnfdump");
	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/tl-probes-XXXXXX");
		if (!mkdtemp(tmpdir))
			fail_msg("mkdtemp: %s", strerror(errno));
		pl_tmp_owner = getpid();
		atexit(pl_rm_tmpdir);
	}
}

/* A fresh (not existing) trace file name in the private directory. */
static inline void trace_path(char *buf, size_t len, const char *name)
{
	paths();
	snprintf(buf, len, "%s/%s-%d.tnf", tmpdir, name, getpid());
	unlink(buf);
}

/* Name of a probe from its attribute string ("name X;..."). */
static inline void probe_name(const char *attrs, char *buf, size_t len)
{
	size_t n;

	if (strncmp(attrs, "name ", 5)) {
		snprintf(buf, len, "?");
		return;
	}
	n = strcspn(attrs + 5, ";");
	snprintf(buf, len, "%.*s", (int)n, attrs + 5);
}

struct found {
	char name[64];
	tnfctl_probe_t *p;
	unsigned long id;
	char obj[PATH_MAX];
};

struct list {
	struct found v[64];
	int n;
};

/* A tnfctl_probe_op_t that appends each probe to a struct list. */
static inline tnfctl_errcode_t collect(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct list *l = cd;
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err = tnfctl_probe_state_get(h, p, &st);

	if (err)
		return err;
	if (l->n < 64) {
		probe_name(st.attr_string, l->v[l->n].name, sizeof(l->v[l->n].name));
		l->v[l->n].p = p;
		l->v[l->n].id = st.id;
		snprintf(l->v[l->n].obj, sizeof(l->v[l->n].obj), "%s", st.obj_name);
		l->n++;
	}
	return TNFCTL_ERR_NONE;
}

static inline struct found *find(struct list *l, const char *name)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

static inline tnfctl_probe_t *probe_of(tnfctl_handle_t *h, const char *name)
{
	static struct list l;
	struct found *f;

	memset(&l, 0, sizeof(l));
	tl_assert_err(tnfctl_probe_apply(h, collect, &l), TNFCTL_ERR_NONE);
	f = find(&l, name);
	if (!f)
		fail_msg("no probe %s", name);
	return f->p;
}

static inline tnfctl_errcode_t enable_trace(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_errcode_t err = tnfctl_probe_enable(h, p, cd);

	return err ? err : tnfctl_probe_trace(h, p, cd);
}

/* Continues @h until it exits, letting every FORK child run free. */
static inline void run_to_exit(tnfctl_handle_t *h)
{
	tnfctl_event_t evt;

	while ((evt = tl_continue(h, NULL)) == TNFCTL_EVENT_FORK)
		;
	if (evt != TNFCTL_EVENT_EXIT)
		fail_msg("expected EXIT, got %s", tl_event_name(evt));
}

/* tl_probes under exec_open, with libtl_pre.so preloaded after libtnfprobe. */
static inline tnfctl_handle_t *start(struct tl_proc **pp)
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
	targ_cmd_fd = p->t_cmd_r;
	targ_reply_fd = p->t_reply_w;
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

/*
 * Runs @argv (NULL-ended), its stdout and stderr into @out (through a file
 * in tmpdir named after @tag); returns its exit status, 128+N if signal N
 * ended it, or -1 (killed) if it did not end within the timeout.
 */
static inline int run_captured(char *const *argv, const char *tag, char *out, size_t len)
{
	char opath[PATH_MAX];
	int fd, st = 0, n;
	pid_t pid;

	paths();
	snprintf(opath, sizeof(opath), "%s/%s-%d.out", tmpdir, tag, getpid());
	fd = open(opath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	pid = tl_spawn(argv, environ, fd, NULL);
	if (tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms) != pid) {
		kill(pid, SIGKILL);
		tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms);
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

/* Runs tnfdump on @file, as run_captured. */
static inline int dump(const char *file, char *out, size_t len)
{
	char *argv[] = {tnfdump_prog, (char *)file, NULL};

	paths();
	return run_captured(argv, "dump", out, len);
}

/* Lines of @out that contain every one of @a and @b (@b may be NULL). */
static inline int count_lines_with(const char *out, const char *a, const char *b)
{
	const char *l = out;
	int n = 0;

	while (l && *l) {
		const char *e = strchr(l, '\n');
		char line[1024];
		size_t len = e ? (size_t)(e - l) : strlen(l);

		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (strstr(line, a) && (!b || strstr(line, b)))
			n++;
		l = e ? e + 1 : NULL;
	}
	return n;
}

/* Event lines of @probe in tnfdump output (that contain @data_has, if not NULL). */
static inline int count_events(const char *out, const char *probe, const char *data_has)
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

#endif
