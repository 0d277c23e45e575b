// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl-follow's writers (follow_out.h).
 *
 * JSON is the Chrome trace-event format (the Perfetto UI and
 * chrome://tracing open it), written as the events come: each process is a
 * track (pid = tid = its pid) holding one complete slice ("ph":"X") per
 * image, from its fork (or exec) to its next exec or its end, named by the
 * program (argv[0]'s basename) with args argv, cwd, path, ppid and how it
 * ended (end: exec, exit with status, signal with signal and signame, or
 * running when the trace ended).  A slice is written when it ends, so
 * only the live processes are kept in memory.  Failed execs, dlopen and
 * dlclose are instants on their thread.  Each process's metadata
 * (process_name, thread_name, process_sort_index: the order in which
 * processes appeared, so a parent is above its children) is written once,
 * at its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "follow_out.h"
#include "json_out.h"

#define NBUCKETS 4096

struct proc {
	pid_t pid, ppid;
	uint64_t start_ns;
	unsigned int sort; /* order of appearance */
	char *name;	   /* the image's program name */
	char *args;	   /* its JSON members "argv":[...],"cwd":...,"path":... */
	struct proc *next;
};

static FILE *out;
static enum follow_format fmt;
static uint64_t start_ns;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static struct proc *procs[NBUCKETS];
static unsigned int nsort;
static uint64_t root_ns;  /* when following began (the root's image) */
static bool first = true; /* JSON: no comma before the first event */
static int out_err;	  /* the first failed write's errno; nothing is written after it */

/* Under out_lock, after writing with errno cleared before: a failed write is kept. */
static void out_check(void)
{
	if (!out_err && ferror(out))
		out_err = errno ? errno : EIO;
}

static double rel_ms(uint64_t t)
{
	return (double)(int64_t)(t - start_ns) / 1e6;
}

static void put_str(FILE *fp, const char *s)
{
	json_out_string(fp, s ? s : "", s ? strlen(s) : 0);
}

/* ,"signal":N,"signame":"SIGxxx" */
static void put_signal(FILE *fp, int sig)
{
	const char *abbrev = sigabbrev_np(sig);

	fprintf(fp, ",\"signal\":%d,\"signame\":\"SIG%s\"", sig, abbrev ? abbrev : "?");
}

/* ---- text --------------------------------------------------------------- */

/*
 * @s as one sh word: as is when only safe characters, else in single quotes
 * (every byte literal, a newline and non-UTF-8 bytes included; ' as '\'').
 */
static void put_quoted(FILE *fp, const char *s)
{
	const char *p;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			    "_@%+=:,./-") == strlen(s)) {
		fputs(s, fp);
		return;
	}
	fputc('\'', fp);
	for (p = s; *p; p++)
		if (*p == '\'')
			fputs("'\\''", fp);
		else
			fputc(*p, fp);
	fputc('\'', fp);
}

/*
 * EXEC: "PATH: ARGV", the arguments as sh words (a truncated argv says so);
 * EXECFAIL: "PATH: ENAME (message)"; FORK "child N", EXIT "status N",
 * TARGGONE "signal N (name)"; DLOPEN, DLCLOSE the path.
 */
static void text_event(const struct follow_ev *e)
{
	const struct tnfctl_exec_info *x = e->x;
	const char *name;
	int i;

	fprintf(out, "%10.3f %7d %-8s ", rel_ms(e->time_ns), e->pid, e->event);
	if (!strcmp(e->event, "FORK")) {
		fprintf(out, "child %d", e->child);
	} else if (!strcmp(e->event, "EXIT")) {
		fprintf(out, "status %d", e->status);
	} else if (!strcmp(e->event, "TARGGONE")) {
		fprintf(out, "signal %d (%s)", e->signal, strsignal(e->signal));
	} else if (x) {
		put_quoted(out, x->path ? x->path : e->path ? e->path : "");
		if (x->error) {
			name = strerrorname_np(x->error);
			fprintf(out, ": %s (%s)", name ? name : "errno", strerror(x->error));
			if (!name)
				fprintf(out, " %d", x->error);
		} else {
			fputc(':', out);
			for (i = 0; i < x->argc; i++) {
				fputc(' ', out);
				put_quoted(out, x->argv[i]);
			}
			if (x->flags & TNFCTL_EXEC_ARGV_TRUNCATED)
				fprintf(out, " [argv truncated: %zu bytes]", x->argv_bytes);
			if (x->interp_argc > 0) {
				fputs(" [interpreter:", out);
				for (i = 0; i < x->interp_argc; i++) {
					fputc(' ', out);
					put_quoted(out, x->interp_argv[i]);
				}
				fputc(']', out);
			}
		}
	} else if (e->path) {
		fputs(e->path, out);
	}
	fputc('\n', out);
}

/* ---- NDJSON ------------------------------------------------------------- */

static void put_argv(FILE *fp, char *const *argv, int argc)
{
	int i;

	fputc('[', fp);
	for (i = 0; i < argc; i++) {
		if (i)
			fputc(',', fp);
		put_str(fp, argv[i]);
	}
	fputc(']', fp);
}

static void put_errno(FILE *fp, int e)
{
	const char *name = strerrorname_np(e);

	fprintf(fp, ",\"errno\":%d,\"error\":", e);
	put_str(fp, name ? name : "");
	fputs(",\"message\":", fp);
	put_str(fp, strerror(e));
}

static void ndjson_event(const struct follow_ev *e)
{
	const struct tnfctl_exec_info *x = e->x;

	fprintf(out, "{\"time_ns\":%llu,\"ms\":%.3f,\"event\":\"%s\",\"pid\":%d",
		(unsigned long long)e->time_ns, rel_ms(e->time_ns), e->event, e->pid);
	if (e->tid)
		fprintf(out, ",\"tid\":%d", e->tid);
	if (e->ppid)
		fprintf(out, ",\"ppid\":%d", e->ppid);
	if (!strcmp(e->event, "FORK"))
		fprintf(out, ",\"child\":%d", e->child);
	else if (!strcmp(e->event, "EXIT"))
		fprintf(out, ",\"status\":%d", e->status);
	if (!strcmp(e->event, "TARGGONE")) {
		put_signal(out, e->signal);
		if (e->core >= 0)
			fprintf(out, ",\"core_dumped\":%s", e->core ? "true" : "false");
	}
	if (x || e->path) {
		fputs(",\"path\":", out);
		put_str(out, x && x->path ? x->path : e->path);
	}
	if (x) {
		fputs(",\"argv\":", out);
		put_argv(out, x->argv, x->argc);
		fputs(",\"cwd\":", out);
		put_str(out, x->cwd);
		fprintf(out, ",\"argv_bytes\":%zu,\"argv_truncated\":%s", x->argv_bytes,
			x->flags & TNFCTL_EXEC_ARGV_TRUNCATED ? "true" : "false");
		if (x->interp_argc > 0) {
			fputs(",\"interp\":", out);
			put_argv(out, x->interp_argv, x->interp_argc);
		}
		if (x->error)
			put_errno(out, x->error);
	}
	fputs("}\n", out);
}

/* ---- JSON: the live processes ------------------------------------------ */

static struct proc **proc_slot(pid_t pid)
{
	struct proc **pp = &procs[(unsigned int)pid % NBUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort();
	return d;
}

/* The program name of an image: argv[0]'s basename, else the path's. */
static char *image_name(char *const *argv, int argc, const char *path)
{
	const char *s = argc > 0 && argv[0][0] ? argv[0] : path ? path : "";
	const char *slash = strrchr(s, '/');

	return xstrdup(slash && slash[1] ? slash + 1 : s);
}

/* The JSON members of an image's args. */
static char *image_args(char *const *argv, int argc, const char *cwd, const char *path)
{
	size_t len = 0;
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		abort();
	fputs("\"argv\":", fp);
	put_argv(fp, argv, argc);
	if (cwd && *cwd) {
		fputs(",\"cwd\":", fp);
		put_str(fp, cwd);
	}
	if (path && *path) {
		fputs(",\"path\":", fp);
		put_str(fp, path);
	}
	fclose(fp);
	return buf;
}

static struct proc *proc_new(pid_t pid, pid_t ppid, uint64_t t)
{
	struct proc *p = calloc(1, sizeof(*p)), **pp = proc_slot(pid);

	if (!p)
		abort();
	p->pid = pid;
	p->ppid = ppid;
	p->start_ns = t;
	p->sort = nsort++;
	p->next = *pp;
	*pp = p;
	return p;
}

static char **read_cmdline(pid_t pid, char **buf);
static void proc_image_of(struct proc *p, pid_t pid);

/*
 * A process first seen by an event of its own: one that was running when
 * following began (--no-stop -p) or whose fork was not seen.  Its image is
 * what /proc says, from when following began.
 */
static struct proc *proc_get(const struct follow_ev *e)
{
	struct proc *p = *proc_slot(e->pid);

	if (!p) {
		p = proc_new(e->pid, e->ppid,
			     root_ns && root_ns < e->time_ns ? root_ns : e->time_ns);
		proc_image_of(p, e->pid);
	}
	if (!p->ppid)
		p->ppid = e->ppid;
	return p;
}

static void json_sep(void)
{
	fputs(first ? "\n" : ",\n", out);
	first = false;
}

static double rel_us(uint64_t t)
{
	return (double)(int64_t)(t - start_ns) / 1e3;
}

/* The slice of @p's current image, ended at @t; @how: its "end" and details. */
static void json_slice(const struct proc *p, uint64_t t, const char *how, const struct follow_ev *e)
{
	json_sep();
	fputs("{\"ph\":\"X\",\"cat\":\"process\",\"name\":", out);
	put_str(out, p->name);
	fprintf(out, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s", p->pid, p->pid,
		rel_us(p->start_ns), t > p->start_ns ? (t - p->start_ns) / 1e3 : 0.0, p->args);
	if (p->ppid)
		fprintf(out, ",\"ppid\":%d", p->ppid);
	fprintf(out, ",\"end\":\"%s\"", how);
	if (!strcmp(how, "exit")) {
		fprintf(out, ",\"status\":%d", e->status);
	} else if (!strcmp(how, "signal")) {
		put_signal(out, e->signal);
	}
	fputs("}}", out);
}

/* Metadata once per process, at its end: its last image's name, its place. */
static void json_proc_end(struct proc *p)
{
	struct proc **pp = proc_slot(p->pid);

	json_sep();
	fprintf(out,
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":", p->pid);
	put_str(out, p->name);
	fputs("}},\n", out);
	fprintf(out,
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
		p->pid, p->pid);
	put_str(out, p->name);
	fputs("}},\n", out);
	fprintf(out,
		"{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,"
		"\"args\":{\"sort_index\":%u}}",
		p->pid, p->sort);
	*pp = p->next;
	free(p->name);
	free(p->args);
	free(p);
}

/* An instant named "exec failed: PATH", "dlopen: PATH" or "dlclose: PATH". */
static void json_instant(const struct follow_ev *e)
{
	const char *path = e->x && e->x->path ? e->x->path : e->path ? e->path : "";
	const char *what = !strcmp(e->event, "EXECFAIL") ? "exec failed"
			   : !strcmp(e->event, "DLOPEN") ? "dlopen"
							 : "dlclose";
	size_t wlen = strlen(what), plen = strlen(path);
	char *name = malloc(wlen + 2 + plen + 1);

	if (!name)
		abort();
	memcpy(name, what, wlen);
	memcpy(name + wlen, ": ", 2);
	memcpy(name + wlen + 2, path, plen + 1);
	json_sep();
	fprintf(out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":", e->event);
	put_str(out, name);
	free(name);
	fprintf(out, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"path\":", e->pid,
		e->tid ? e->tid : e->pid, rel_us(e->time_ns));
	put_str(out, path);
	if (e->x) {
		fputs(",\"argv\":", out);
		put_argv(out, e->x->argv, e->x->argc);
		if (e->x->interp_argc > 0) {
			fputs(",\"interp\":", out);
			put_argv(out, e->x->interp_argv, e->x->interp_argc);
		}
		if (e->x->error)
			put_errno(out, e->x->error);
	}
	fputs("}}", out);
}

static void json_event(const struct follow_ev *e)
{
	struct proc *p = proc_get(e), *c;

	if (!strcmp(e->event, "FORK")) {
		c = *proc_slot(e->child);
		if (c) /* its own events came first: it is the fork's child */
			return;
		/* A forked child runs its parent's image until it execs. */
		c = proc_new(e->child, e->pid, e->time_ns);
		c->name = xstrdup(p->name);
		c->args = xstrdup(p->args);
	} else if (!strcmp(e->event, "EXEC") && (!e->x || !e->x->error)) {
		json_slice(p, e->time_ns, "exec", e);
		free(p->name);
		free(p->args);
		if (e->x) {
			p->name = image_name(e->x->argv, e->x->argc, e->x->path);
			p->args = image_args(e->x->argv, e->x->argc, e->x->cwd, e->x->path);
		} else {
			p->name = image_name(NULL, 0, e->path);
			p->args = image_args(NULL, 0, NULL, e->path);
		}
		p->start_ns = e->time_ns;
	} else if (!strcmp(e->event, "EXIT") || !strcmp(e->event, "TARGGONE")) {
		json_slice(p, e->time_ns, strcmp(e->event, "EXIT") ? "signal" : "exit", e);
		json_proc_end(p);
	} else {
		json_instant(e);
	}
}

/* ---- the interface ------------------------------------------------------ */

void follow_out_open(FILE *fp, enum follow_format f, uint64_t t)
{
	out = fp;
	fmt = f;
	start_ns = t;
	if (fmt == FOLLOW_JSON)
		fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", out);
}

/* /proc/PID/cmdline as an argv (NULL-terminated, in one allocation). */
static char **read_cmdline(pid_t pid, char **buf)
{
	char path[64], **argv;
	size_t len = 0, cap = 4096, n = 0, i;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	*buf = malloc(cap + 1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!*buf || fd < 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (len < cap && (r = read(fd, *buf + len, cap - len)) > 0)
		len += r;
	close(fd);
	(*buf)[len] = '\0';
	for (i = 0; i < len; i++)
		n += !(*buf)[i];
	argv = calloc(n + 2, sizeof(*argv));
	if (!argv)
		return NULL;
	for (i = 0, n = 0; i < len; i += strlen(*buf + i) + 1)
		argv[n++] = *buf + i;
	return argv;
}

/* readlink /proc/PID/@name into @buf ("" if it cannot be read). */
static void proc_link(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* PPid of /proc/PID/status, 0 if it cannot be read. */
static pid_t proc_ppid(pid_t pid)
{
	char path[64], line[128];
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	if (f)
		fclose(f);
	return ppid;
}

/* @p's image as /proc shows it: argv, cwd, exe ("pid N" if it is gone). */
static void proc_image_of(struct proc *p, pid_t pid)
{
	char **argv, *buf = NULL, cwd[PATH_MAX], exe[PATH_MAX], pidname[32];
	int argc = 0;

	argv = read_cmdline(pid, &buf);
	while (argv && argv[argc])
		argc++;
	proc_link(pid, "cwd", cwd, sizeof(cwd));
	proc_link(pid, "exe", exe, sizeof(exe));
	if (argc) {
		p->name = image_name(argv, argc, exe);
	} else {
		snprintf(pidname, sizeof(pidname), "pid %d", (int)pid);
		p->name = xstrdup(pidname);
	}
	p->args = image_args(argv, argc, cwd, exe);
	free(argv);
	free(buf);
}

void follow_out_root(pid_t pid, pid_t ppid, char *const *argv, const char *path, uint64_t t)
{
	char **own = NULL, *buf = NULL, cwd[PATH_MAX], exe[PATH_MAX];
	struct proc *p;
	int argc = 0;

	if (fmt == FOLLOW_TEXT)
		return;
	if (!argv)
		argv = own = read_cmdline(pid, &buf);
	while (argv && argv[argc])
		argc++;
	proc_link(pid, "cwd", cwd, sizeof(cwd));
	if (path && strlen(path) < sizeof(exe))
		strcpy(exe, path);
	else
		proc_link(pid, "exe", exe, sizeof(exe));
	if (!ppid)
		ppid = proc_ppid(pid);
	pthread_mutex_lock(&out_lock);
	root_ns = t;
	errno = 0;
	if (out_err) {
		/* nothing more is written */
	} else if (fmt == FOLLOW_NDJSON) {
		/* the first line: the root and its image, whose exec is no event */
		fprintf(out, "{\"time_ns\":%llu,\"ms\":%.3f,\"event\":\"ROOT\",\"pid\":%d",
			(unsigned long long)t, rel_ms(t), pid);
		if (ppid)
			fprintf(out, ",\"ppid\":%d", ppid);
		fputs(",\"argv\":", out);
		put_argv(out, argv, argc);
		fputs(",\"cwd\":", out);
		put_str(out, cwd);
		fputs(",\"path\":", out);
		put_str(out, exe);
		fputs("}\n", out);
		fflush(out);
	} else {
		p = proc_new(pid, ppid, t);
		p->name = image_name(argv, argc, exe);
		p->args = image_args(argv, argc, cwd, exe);
	}
	out_check();
	pthread_mutex_unlock(&out_lock);
	free(own);
	free(buf);
}

void follow_out_event(const struct follow_ev *e)
{
	pthread_mutex_lock(&out_lock);
	if (out_err) {
		pthread_mutex_unlock(&out_lock);
		return;
	}
	errno = 0;
	switch (fmt) {
	case FOLLOW_TEXT:
		text_event(e);
		break;
	case FOLLOW_NDJSON:
		ndjson_event(e);
		break;
	case FOLLOW_JSON:
		json_event(e);
		break;
	}
	/* as it happens: `| jq` and `tail -f` see each event at once */
	if (fmt != FOLLOW_JSON)
		fflush(out);
	out_check();
	pthread_mutex_unlock(&out_lock);
}

int follow_out_close(uint64_t t)
{
	struct follow_ev running = {.time_ns = t};
	size_t i;
	int e;

	pthread_mutex_lock(&out_lock);
	errno = 0;
	if (fmt == FOLLOW_JSON && !out_err) {
		for (i = 0; i < NBUCKETS; i++)
			while (procs[i]) {
				json_slice(procs[i], t, "running", &running);
				json_proc_end(procs[i]);
			}
		/* CLOCK_MONOTONIC, as tnfdump's: trace-merge.py aligns on it */
		fprintf(out,
			"\n],\"otherData\":{\"source\":\"tnfctl-follow\",\"ts_base_ns\":%llu}}\n",
			(unsigned long long)start_ns);
	}
	if (!out_err)
		fflush(out);
	out_check();
	e = out_err;
	pthread_mutex_unlock(&out_lock);
	return e;
}
