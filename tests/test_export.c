// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_export.c - tnfdump --format=json and --format=ctf, checked by real
 * readers against what tnfdump's cooked output prints for the same files:
 *  - the JSON is loaded by python3's json module (a script below checks its
 *    shape: metadata first, instant events in time order, every pid and
 *    tid named) and each event is compared with the cooked line (elapsed
 *    time, pid, tid, name, category from the probe's keys, argument
 *    values); the exact JSON types of every argument kind are checked on
 *    a file our runtime wrote, and escapes on a copy whose string holds a
 *    quote, a backslash, control characters and invalid UTF-8;
 *  - the CTF trace is read back by babeltrace2 and each event compared
 *    field by field (time, pid, lwpid, tid, name, every argument leaf)
 *    with the cooked line;
 *  - 600 damaged copies (fixed seed) of small64.tnf and of a file our
 *    runtime wrote give the same exit status and stderr in text, json and
 *    ctf modes, and a readable copy's exports load in python3/babeltrace2.
 * Files: the original writer's small64.tnf, threads64.tnf and small.tnf
 * ($TNF_TESTDATA) and tests/helpers/tp_probes' "types" scenario.  Needs
 * python3 and babeltrace2 (Debian packages python3, babeltrace2); a test
 * whose tool is missing is skipped and says so.
 */
#include <spawn.h>
#include "testlib.h"

/* one tool run longer than this is a hang (30 s at the default TL_TIMEOUT_MS) */
#define CHILD_SECS (3 * tl.timeout_ms / 2000)
#define MAX_EVENTS 256	  /* events of one test's files */
#define MAX_LEAVES 64	  /* argument values of one event */
#define LINE_MAX_  4096	  /* one output line */
#define TYPES_SIZE 262144 /* trace file of the "types" scenario */

static char datadir[PATH_MAX];
static char tnfdump[PATH_MAX];
static char work[64]; /* this test's temporary directory */

/*
 * The JSON checker: prints EVENT lines in the cooked output's terms, ARGS
 * lines (the exact JSON of the args), THREAD, PROC, PROCS, FILES and BASE
 * lines;
 * a failed assertion exits non-zero with the reason on stderr.
 */
static const char json_checker[] =
	"import decimal, json, sys\n"
	"doc = json.load(open(sys.argv[1], encoding='utf-8'), parse_float=decimal.Decimal)\n"
	"assert sorted(doc) == ['displayTimeUnit', 'otherData', 'traceEvents'], sorted(doc)\n"
	"assert doc['displayTimeUnit'] == 'ns'\n"
	"def cooked(v):\n"
	"    if v is None: return '0x0        <NULL>'\n"
	"    if isinstance(v, dict):\n"
	"        return '{ type: ' + v['tnf_tag'] + ''.join(' %s: %s' % (k, cooked(x))\n"
	"            for k, x in v.items() if k != 'tnf_tag') + ' }'\n"
	"    if isinstance(v, decimal.Decimal): return '%f' % v\n"
	"    if isinstance(v, bool): raise Exception('bool')\n"
	"    if isinstance(v, int): return str(v)\n"
	"    if v.startswith('0x') or v.lstrip('-').isdigit(): return v\n"
	"    return '\"' + v + '\"'\n"
	"procs, threads, prev, events = {}, {}, None, False\n"
	"for e in doc['traceEvents']:\n"
	"    if e['ph'] == 'M':\n"
	"        assert not events, 'metadata after events'\n"
	"        assert e['name'] in ('process_name', 'thread_name'), e\n"
	"        if e['name'] == 'process_name': procs[e['pid']] = e['args']['name']\n"
	"        else: threads[(e['pid'], e['tid'])] = e['args']['name']\n"
	"        continue\n"
	"    events = True\n"
	"    assert e['ph'] == 'i' and e['s'] == 't', e\n"
	"    assert isinstance(e['ts'], decimal.Decimal), e\n"
	"    assert prev is None or e['ts'] >= prev, 'ts out of order'\n"
	"    prev = e['ts']\n"
	"    assert e['pid'] in procs, e\n"
	"    assert (e['pid'], e['tid']) in threads, e\n"
	"    ms = (e['ts'] / 1000).quantize(decimal.Decimal('0.000001'))\n"
	"    a = e['args']\n"
	"    print('EVENT %s %d %d %s|%s|%s' % (ms, e['pid'], e['tid'], e['name'], e['cat'],\n"
	"          ' '.join('%s: %s' % (k, cooked(v)) for k, v in a.items())))\n"
	"    print('ARGS %s %s' % (e['name'], json.dumps(a, default=float)))\n"
	"for (p, t), n in sorted(threads.items()): print('THREAD %d %d %s' % (p, t, n))\n"
	"for p, n in sorted(procs.items()): print('PROC %d %s' % (p, n))\n"
	"print('PROCS %d' % len(procs))\n"
	"print('FILES %d' % len(doc['otherData']['files']))\n"
	"print('BASE %s' % doc['otherData']['ts_base_ns'])\n";

static int find_data(void)
{
	const char *env = getenv("TNF_TESTDATA");
	char path[PATH_MAX + 32];
	int n;

	if (env && *env)
		n = snprintf(datadir, sizeof(datadir), "%s", env);
	else
		n = snprintf(datadir, sizeof(datadir), "%s/../tests/data/tnf-original", tl.bdir);
	if (n < 0 || (size_t)n >= sizeof(datadir))
		return 0;
	tl_path_of(tnfdump, "tnfdump");
	snprintf(path, sizeof(path), "%s/small64.tnf", datadir);
	return access(path, R_OK) == 0;
}

#define NEED_DATA()                                                                                \
	do {                                                                                       \
		if (!find_data()) {                                                                \
			print_message("SKIP: no TNF test data in %s\n", datadir);                  \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* 1 if @prog is an executable in $PATH. */
static int have_tool(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[PATH_MAX], full[PATH_MAX * 2];
	const char *p, *e;

	for (p = path ? path : "/usr/bin:/bin"; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		snprintf(dir, sizeof(dir), "%.*s", (int)(e - p), p);
		snprintf(full, sizeof(full), "%s/%s", *dir ? dir : ".", prog);
		if (access(full, X_OK) == 0)
			return 1;
	}
	return 0;
}

#define NEED_TOOL(prog, pkg)                                                                       \
	do {                                                                                       \
		if (!have_tool(prog)) {                                                            \
			print_message("SKIP: %s is not installed (Debian package %s)\n", prog,     \
				      pkg);                                                        \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		len = (size_t)n;
		buf = malloc(len + 1);
		if (buf && fread(buf, 1, len, f) != len) {
			free(buf);
			buf = NULL;
		}
		if (buf)
			buf[len] = '\0';
	}
	fclose(f);
	return buf;
}

static void in_work(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", work, name);

	assert_true(n > 0 && (size_t)n < size);
}

/*
 * Starts @argv (argv[0] looked up in $PATH unless it has a '/') with stdout
 * into work/@out and stderr into work/@err, LD_PRELOAD=libtnfprobe when
 * @preload.  posix_spawn, not fork: a fork copies this process's page
 * tables, which under ASan (terabytes of shadow mappings) cost more than
 * the tnfdump run itself.  The child is tracked (killed at teardown).
 */
static pid_t start(char *const argv[], const char *out, const char *err, int preload)
{
	char opath[PATH_MAX], epath[PATH_MAX], pre[PATH_MAX + 16];
	const char *extra[] = {pre, NULL};
	posix_spawn_file_actions_t fa;
	char **env;
	pid_t pid;
	int rc;

	in_work(opath, sizeof(opath), out);
	in_work(epath, sizeof(epath), err);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", tl.probe);
	env = tl_env_build(preload ? extra : NULL);
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(
		posix_spawn_file_actions_addopen(&fa, 1, opath, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		0);
	assert_int_equal(
		posix_spawn_file_actions_addopen(&fa, 2, epath, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		0);
	fflush(stdout);
	fflush(stderr);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (rc)
		fail_msg("posix_spawnp %s: %s", argv[0], strerror(rc));
	tl_track_pid(pid);
	return pid;
}

/*
 * The wait status of @pid, started by start(); one running longer than
 * CHILD_SECS is a hang (a failure; teardown kills it).  Waits on a pidfd:
 * no waiter thread per run.
 */
static int finish(pid_t pid, const char *what)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
	siginfo_t si;
	int n;

	assert_true(pidfd >= 0);
	while ((n = poll(&pfd, 1, CHILD_SECS * 1000)) < 0 && errno == EINTR)
		;
	if (n == 0) {
		close(pidfd);
		fail_msg("%s: still running after %d s", what, CHILD_SECS);
	}
	memset(&si, 0, sizeof(si));
	while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		assert_int_equal(errno, EINTR);
	close(pidfd);
	if (si.si_code == CLD_EXITED)
		return W_EXITCODE(si.si_status, 0);
	return si.si_status | (si.si_code == CLD_DUMPED ? WCOREFLAG : 0);
}

/* Runs @argv to its end (start() says how); returns its wait status. */
static int run(char *const argv[], const char *out, const char *err, int preload)
{
	return finish(start(argv, out, err, preload), argv[0]);
}

/* Only tnfdump's notes that a file wrapped ("the trace wrapped"), if anything. */
static int only_wrap_notes(const char *text)
{
	char line[1024];
	const char *l = text;

	while (l && *l) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);

		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		if (!strstr(line, "the trace wrapped: its oldest events were written over"))
			return 0;
		l = e ? e + 1 : NULL;
	}
	return 1;
}

/* run() that must exit 0 with nothing on stderr but notes of wrapped files. */
static void run_ok(char *const argv[], const char *out, const char *err)
{
	char epath[PATH_MAX], *text;
	int st = run(argv, out, err, 0);

	in_work(epath, sizeof(epath), err);
	text = slurp(epath);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || (text && !only_wrap_notes(text)))
		fail_msg("%s: status 0x%x, stderr:\n%s", argv[0], st, text ? text : "");
	free(text);
}

static void rm_tree(const char *path)
{
	char sub[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(path);

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		rm_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

static int ex_setup(void **state)
{
	tl_setup(state);
	snprintf(work, sizeof(work), "/tmp/tl-export-XXXXXX");
	if (!mkdtemp(work))
		fail_msg("mkdtemp: %s", strerror(errno));
	return 0;
}

static int ex_teardown(void **state)
{
	rm_tree(work);
	return tl_teardown(state);
}

static void data_path(char *buf, const char *name)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", datadir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

/* work/SCENARIO.tnf (@path), TYPES_SIZE bytes, written by tp_probes @scenario. */
static void scenario_file(const char *scenario, char *path)
{
	char helper[PATH_MAX], sz[32], name[64];
	char *argv[] = {helper, (char *)scenario, path, sz, NULL};
	int st;

	tl_path_of(helper, "tests/helpers/tp_probes");
	snprintf(name, sizeof(name), "%s.tnf", scenario);
	in_work(path, PATH_MAX, name);
	snprintf(sz, sizeof(sz), "%u", TYPES_SIZE);
	st = run(argv, "helper.out", "helper.err", 1);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("tp_probes %s: status 0x%x", scenario, st);
}

/*
 * work/types.tnf from tp_probes' "types" scenario: every argument kind.
 * With @escapes, its "hello world" (11 bytes) becomes a string that needs
 * every kind of JSON escape, of the same length so the record stays valid.
 */
static void types_file(char *path, int escapes)
{
	static const char special[11] = "a\"\\\n\t\x01\x7f\xff\xe2\x82\xac"; /* ..., '€' */
	char *buf, *p;
	size_t len = TYPES_SIZE;
	int fd, n = 0;

	scenario_file("types", path);
	if (!escapes)
		return;
	buf = malloc(len);
	assert_non_null(buf);
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, len), (ssize_t)len);
	for (p = buf; (p = memmem(p, len - (size_t)(p - buf), "hello world", 11)); p += 11, n++)
		memcpy(p, special, 11);
	assert_int_equal(n, 1);
	assert_int_equal(pwrite(fd, buf, len, 0), (ssize_t)len);
	close(fd);
	free(buf);
}

/* ---- the cooked output, parsed ------------------------------------------ */

struct cooked_event {
	char elapsed[32];
	unsigned pid, lwpid;
	unsigned long long tid;
	char name[64];
	char cat[128];
	char data[1024];
};

struct cooked {
	struct cooked_event ev[MAX_EVENTS];
	int n;
	char *text;
};

/* The probe's keys from its "probe" line, words joined by commas. */
static void probe_keys(const char *text, const char *name, char *cat, size_t size)
{
	char want[128], *p, *q;
	const char *line, *k;
	size_t len = 0;

	snprintf(want, sizeof(want), "probe\t tnf_name: \"%s\" tnf_string: \"keys ", name);
	*cat = '\0';
	line = strstr(text, want);
	if (!line)
		return;
	k = line + strlen(want);
	while (*k && *k != ';' && *k != '"' && len + 2 < size) {
		if (*k == ' ') {
			if (len && cat[len - 1] != ',')
				cat[len++] = ',';
		} else {
			cat[len++] = *k;
		}
		k++;
	}
	cat[len] = '\0';
	p = cat;
	q = p + strlen(p);
	if (q > p && q[-1] == ',')
		q[-1] = '\0';
}

/* tnfdump FILES... (cooked) into *c. */
static void cooked_of(char *const files[], struct cooked *c)
{
	char *argv[16], opath[PATH_MAX], *line, *nl;
	int i, n = 0, dashes = 0;

	argv[n++] = tnfdump;
	for (i = 0; files[i] && n < 15; i++)
		argv[n++] = files[i];
	argv[n] = NULL;
	run_ok(argv, "cooked.out", "cooked.err");
	in_work(opath, sizeof(opath), "cooked.out");
	c->text = slurp(opath);
	assert_non_null(c->text);
	c->n = 0;
	for (line = c->text; line && *line; line = nl ? nl + 1 : NULL) {
		struct cooked_event *e = &c->ev[c->n];
		int off = 0;

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0'; /* sscanf's spaces must not reach the next line */
		if (!strncmp(line, "----", 4))
			dashes++;
		if (dashes < 2 || !strncmp(line, "----", 4))
			goto next;
		assert_true(c->n < MAX_EVENTS);
		if (sscanf(line, "%31s %*s %u %u %llu - %63s %n", e->elapsed, &e->pid, &e->lwpid,
			   &e->tid, e->name, &off) < 5)
			fail_msg("bad cooked line \"%s\"", line);
		snprintf(e->data, sizeof(e->data), "%s", off ? line + off : "");
		c->n++;
next:
		if (nl)
			*nl = '\n';
	}
	for (i = 0; i < c->n; i++)
		probe_keys(c->text, c->ev[i].name, c->ev[i].cat, sizeof(c->ev[i].cat));
}

/* ---- JSON ---------------------------------------------------------------- */

/* tnfdump --format=json FILES..., checked by python3; its report in *rep. */
static char *json_report(char *const files[])
{
	char *argv[16], jpath[PATH_MAX], rpath[PATH_MAX], *rep;
	char *py[] = {"python3", "-c", (char *)json_checker, jpath, NULL};
	int i, n = 0, st;

	argv[n++] = tnfdump;
	argv[n++] = "--format=json";
	for (i = 0; files[i] && n < 15; i++)
		argv[n++] = files[i];
	argv[n] = NULL;
	run_ok(argv, "trace.json", "json.err");
	in_work(jpath, sizeof(jpath), "trace.json");
	st = run(py, "report", "report.err", 0);
	in_work(rpath, sizeof(rpath), "report.err");
	rep = slurp(rpath);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("the JSON checker failed (status 0x%x):\n%s", st, rep ? rep : "");
	free(rep);
	in_work(rpath, sizeof(rpath), "report");
	rep = slurp(rpath);
	assert_non_null(rep);
	return rep;
}

/* @rep has the whole line @line. */
static void expect_line(const char *rep, const char *line)
{
	char want[LINE_MAX_];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (strncmp(rep, want + 1, strlen(want + 1)) && !strstr(rep, want))
		fail_msg("the JSON checker's report lacks \"%s\":\n%s", line, rep);
}

/*
 * Every event of the JSON is the cooked line at the same place: elapsed
 * ms, pid, tid, name, keys, arguments.  Events named @skip (a char
 * argument, which the cooked output prints bare) are compared by name.
 */
static void json_matches_cooked(const char *rep, const struct cooked *c, const char *skip)
{
	char want[LINE_MAX_ + 256], *copy = strdup(rep), *line, *nl;
	int i = 0;

	assert_non_null(copy);
	for (line = copy; line && *line; line = nl ? nl + 1 : NULL) {
		const struct cooked_event *e = &c->ev[i];

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, "EVENT ", 6))
			continue;
		if (i >= c->n)
			fail_msg("JSON has more events than the cooked output (%d): %s", c->n,
				 line);
		snprintf(want, sizeof(want), "EVENT %s %u %llu %s|%s|%s", e->elapsed, e->pid,
			 e->tid, e->name, e->cat, e->data);
		if (skip && !strcmp(e->name, skip))
			snprintf(want, sizeof(want), "%.*s", (int)strlen(line), line);
		if (strcmp(line, want))
			fail_msg("event %d:\n  json   %s\n  cooked %s", i, line, want);
		i++;
	}
	assert_int_equal(i, c->n);
	free(copy);
}

static void json_one(const char *name, int nevents, const char *thread_line)
{
	char path[PATH_MAX], line[256];
	char *files[] = {path, NULL};
	struct cooked *c = calloc(1, sizeof(*c));
	char *rep;

	assert_non_null(c);
	data_path(path, name);
	cooked_of(files, c);
	assert_int_equal(c->n, nevents);
	rep = json_report(files);
	json_matches_cooked(rep, c, NULL);
	expect_line(rep, "PROCS 1");
	expect_line(rep, "FILES 1");
	expect_line(rep, thread_line);
	/* the original writer's files name nobody: "pid N" */
	snprintf(line, sizeof(line), "PROC %u pid %u", c->ev[0].pid, c->ev[0].pid);
	expect_line(rep, line);
	snprintf(line, sizeof(line), "EVENT 0.000000 %u", c->ev[0].pid);
	assert_non_null(strstr(rep, line));
	free(rep);
	free(c->text);
	free(c);
}

static void test_json_small64(void **state)
{
	(void)state;
	NEED_DATA();
	NEED_TOOL("python3", "python3");
	json_one("small64.tnf", 13, "THREAD 24545 1 tid 1 (lwp 24545)");
}

static void test_json_threads64(void **state)
{
	(void)state;
	NEED_DATA();
	NEED_TOOL("python3", "python3");
	json_one("threads64.tnf", 18, "THREAD 24547 3 tid 3 (lwp 24549)");
	/* the other two threads too */
	json_one("threads64.tnf", 18, "THREAD 24547 1 tid 1 (lwp 24547)");
	json_one("threads64.tnf", 18, "THREAD 24547 2 tid 2 (lwp 24548)");
}

/* Several files are one trace, sorted by time across them. */
static void test_json_several(void **state)
{
	char a[PATH_MAX], b[PATH_MAX], d[PATH_MAX];
	char *files[] = {a, b, d, NULL};
	struct cooked *c = calloc(1, sizeof(*c));
	char *rep;

	(void)state;
	NEED_DATA();
	NEED_TOOL("python3", "python3");
	assert_non_null(c);
	data_path(a, "threads64.tnf");
	data_path(b, "small64.tnf");
	data_path(d, "small.tnf");
	cooked_of(files, c);
	rep = json_report(files);
	json_matches_cooked(rep, c, NULL);
	expect_line(rep, "PROCS 3");
	expect_line(rep, "FILES 3");
	free(rep);
	free(c->text);
	free(c);
}

/* Every argument kind of our runtime, with its exact JSON value. */
static void test_json_types(void **state)
{
	static const char *const args[] = {
		"ARGS ints {\"i\": -5, \"u\": 4000000000, \"l\": -9000000000, \"ul\": "
		"\"18000000000000000000\", \"ll\": -7}",
		"ARGS smalls {\"c\": \"A\", \"i8\": -8, \"u8\": 250, \"s\": -300, \"us\": 65000}",
		"ARGS more {\"i16\": -16, \"u16\": 16, \"ull\": \"12345678901234567890\", \"sz\": "
		"42, "
		"\"op\": \"0x1000\"}",
		"ARGS floats {\"f\": 1.5, \"d\": -2.25, \"s\": \"hello world\", \"nul\": null}",
		"ARGS records {\"p\": {\"tnf_tag\": \"point_rec\", \"x\": -3, \"y\": "
		"1234567890123, "
		"\"label\": \"pt\"}, \"g\": {\"tnf_tag\": \"seg_rec\", \"a\": {\"tnf_tag\": "
		"\"point_rec\", \"x\": -3, \"y\": 1234567890123, \"label\": \"pt\"}, \"n\": -2}}",
		"ARGS nullrec {\"p\": null}",
		"ARGS empty {}",
	};
	char path[PATH_MAX], line[64];
	char *files[] = {path, NULL};
	struct cooked *c = calloc(1, sizeof(*c));
	char *rep;
	size_t i;

	(void)state;
	NEED_TOOL("python3", "python3");
	assert_non_null(c);
	types_file(path, 0);
	cooked_of(files, c);
	assert_int_equal(c->n, 7);
	rep = json_report(files);
	json_matches_cooked(rep, c, "smalls");
	for (i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		expect_line(rep, args[i]);
	/* our writer names the process and the thread: the program's name */
	snprintf(line, sizeof(line), "THREAD %u %llu tp_probes", c->ev[0].pid, c->ev[0].tid);
	expect_line(rep, line);
	snprintf(line, sizeof(line), "PROC %u tp_probes", c->ev[0].pid);
	expect_line(rep, line);
	assert_non_null(strstr(rep, "|tp,types|"));
	free(rep);
	free(c->text);
	free(c);
}

/* Lines of @rep that start with @prefix and end with @suffix. */
static int count_lines(const char *rep, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);
	const char *p, *e;
	int n = 0;

	for (p = rep; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		if ((size_t)(e - p) >= pl + sl && !strncmp(p, prefix, pl) &&
		    !strncmp(e - sl, suffix, sl))
			n++;
	}
	return n;
}

/*
 * tp_probes "named" into a @size-byte file: @wrap ticks, then two threads
 * that name themselves write @n events each, then a fork child ticks.  The
 * process_name and thread_name metadata must come from the file's
 * schedule records: the program for the processes and the main threads,
 * each worker's own name.  Returns the number of tick events left.
 */
static int json_names(size_t size, int n, int wrap)
{
	char helper[PATH_MAX], path[PATH_MAX], sz[32], num[16], w[16], line[128];
	char opath[PATH_MAX], *argv[] = {helper, "named", path, sz, num, w, NULL};
	char *files[] = {path, NULL}, *rep, *out;
	int parent = 0, child = 0, st, ticks;

	tl_path_of(helper, "tests/helpers/tp_probes");
	in_work(path, PATH_MAX, "named.tnf");
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(num, sizeof(num), "%d", n);
	snprintf(w, sizeof(w), "%d", wrap);
	st = run(argv, "helper.out", "helper.err", 1);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("tp_probes named: status 0x%x", st);
	in_work(opath, sizeof(opath), "helper.out");
	out = slurp(opath);
	assert_non_null(out);
	assert_int_equal(sscanf(out, "pids %d %d", &parent, &child), 2);
	free(out);
	rep = json_report(files);
	expect_line(rep, "PROCS 2");
	snprintf(line, sizeof(line), "PROC %d tp_probes", parent);
	expect_line(rep, line);
	snprintf(line, sizeof(line), "PROC %d tp_probes", child);
	expect_line(rep, line);
	/* four threads, each named: no "tid N" */
	assert_int_equal(count_lines(rep, "THREAD ", ""), 4);
	snprintf(line, sizeof(line), "THREAD %d %d tp_probes", parent, parent);
	expect_line(rep, line);
	snprintf(line, sizeof(line), "THREAD %d %d tp_probes", child, child);
	expect_line(rep, line);
	snprintf(line, sizeof(line), "THREAD %d ", parent);
	assert_int_equal(count_lines(rep, line, " tp-worker-0"), 1);
	assert_int_equal(count_lines(rep, line, " tp-worker-1"), 1);
	assert_int_equal(count_lines(rep, "ARGS named_worker ", ""), 2 * n);
	ticks = count_lines(rep, "ARGS tick ", "");
	free(rep);
	return ticks;
}

static void test_json_names(void **state)
{
	(void)state;
	NEED_TOOL("python3", "python3");
	/* tick 0, the child's, the parent's last */
	assert_int_equal(json_names(TYPES_SIZE, 50, 0), 3);
}

/*
 * A file that wraps: the oldest blocks are overwritten, the names stay (they
 * are in tag space, which never wraps).
 */
static void test_json_names_wrapped(void **state)
{
	int n;

	(void)state;
	NEED_TOOL("python3", "python3");
	n = json_names(131072, 50, 20000);
	if (n <= 2 || n >= 20000)
		fail_msg("%d of 20003 ticks left: the file did not wrap", n);
}

/* Quote, backslash, newline, tab, controls, invalid UTF-8, a real '€'. */
static void test_json_escapes(void **state)
{
	char path[PATH_MAX], jpath[PATH_MAX];
	char *files[] = {path, NULL};
	char *rep, *json;

	(void)state;
	NEED_TOOL("python3", "python3");
	types_file(path, 1);
	rep = json_report(files);
	expect_line(rep, "ARGS floats {\"f\": 1.5, \"d\": -2.25, \"s\": "
			 "\"a\\\"\\\\\\n\\t\\u0001\\u007f\\ufffd\\u20ac\", \"nul\": null}");
	/* the raw text: escapes as written, the valid '€' kept as UTF-8 */
	in_work(jpath, sizeof(jpath), "trace.json");
	json = slurp(jpath);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"s\":\"a\\\"\\\\\\n\\t\\u0001\\u007f\\ufffd\xe2\x82\xac\""));
	free(json);
	free(rep);
}

/* ---- CTF ------------------------------------------------------------------ */

struct leaf {
	char path[128];
	char val[512];
};

struct leaves {
	struct leaf v[MAX_LEAVES];
	int n;
};

static void leaf_add(struct leaves *l, const char *prefix, const char *name, size_t nlen,
		     const char *val, size_t vlen)
{
	assert_true(l->n < MAX_LEAVES);
	snprintf(l->v[l->n].path, sizeof(l->v[0].path), "%s%.*s", prefix, (int)nlen, name);
	snprintf(l->v[l->n].val, sizeof(l->v[0].val), "%.*s", (int)vlen, val);
	l->n++;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* A quoted string at @p (no escapes in what our files hold); its end. */
static const char *quoted_end(const char *p)
{
	const char *q = strchr(p + 1, '"');

	if (!q)
		fail_msg("unterminated string: %s", p);
	return q + 1;
}

/*
 * The cooked fields "name: value ..." at *@p, until '}' or the end:
 * records "{ type: T name: value ... }" nest with "name." prefixes.
 */
static void cooked_leaves(const char **pp, const char *prefix, struct leaves *l)
{
	const char *p = *pp, *name, *colon, *end;
	char sub[128];

	for (;;) {
		p = skip_ws(p);
		if (!*p || *p == '}')
			break;
		name = p;
		colon = strstr(p, ": ");
		if (!colon)
			fail_msg("bad cooked data: %s", p);
		p = colon + 2;
		if (colon - name == 4 && !strncmp(name, "type", 4) && prefix[0]) {
			p = strchrnul(p, ' '); /* the record's type: CTF has it in the class */
			continue;
		}
		if (*p == '{') {
			snprintf(sub, sizeof(sub), "%s%.*s.", prefix, (int)(colon - name), name);
			p++;
			cooked_leaves(&p, sub, l);
			if (*p != '}')
				fail_msg("bad cooked record: %s", p);
			p++;
			continue;
		}
		if (!strncmp(p, "0x0        <NULL>", 17)) {
			leaf_add(l, prefix, name, (size_t)(colon - name), "NULL", 4);
			p += 17;
			continue;
		}
		end = *p == '"' ? quoted_end(p) : strchrnul(p, ' ');
		leaf_add(l, prefix, name, (size_t)(colon - name), p, (size_t)(end - p));
		p = end;
	}
	*pp = p;
}

static void bt_struct(const char **pp, const char *prefix, struct leaves *l);

/*
 * A variant's content "{ value }": a string, "{ }" (the null option) or a
 * struct.
 */
static void bt_variant(const char **pp, const char *prefix, const char *name, size_t nlen,
		       struct leaves *l)
{
	const char *p = skip_ws(*pp + 1), *end;
	char sub[128];

	if (*p == '"') {
		end = quoted_end(p);
		leaf_add(l, prefix, name, nlen, p, (size_t)(end - p));
		p = end;
	} else if (!strncmp(p, "{ }", 3)) {
		leaf_add(l, prefix, name, nlen, "NULL", 4);
		p += 3;
	} else {
		snprintf(sub, sizeof(sub), "%s%.*s.", prefix, (int)nlen, name);
		bt_struct(&p, sub, l);
	}
	p = skip_ws(p);
	if (*p != '}')
		fail_msg("bad babeltrace2 variant: %s", p);
	*pp = p + 1;
}

/* babeltrace2's "{ name = value, ... }" at *@pp; enum selectors skipped. */
static void bt_struct(const char **pp, const char *prefix, struct leaves *l)
{
	const char *p = *pp, *name, *eq, *end;

	if (*p != '{')
		fail_msg("bad babeltrace2 struct: %s", p);
	p = skip_ws(p + 1);
	while (*p && *p != '}') {
		name = p;
		eq = strstr(p, " = ");
		if (!eq)
			fail_msg("bad babeltrace2 field: %s", p);
		p = eq + 3;
		if (*p == '(') { /* the enum saying null or value */
			p = strchr(p, ')');
			assert_non_null(p);
			p++;
		} else if (*p == '{') {
			bt_variant(&p, prefix, name, (size_t)(eq - name), l);
		} else {
			end = *p == '"' ? quoted_end(p) : p + strcspn(p, ", }");
			leaf_add(l, prefix, name, (size_t)(eq - name), p, (size_t)(end - p));
			p = end;
		}
		if (*p == ',')
			p++;
		p = skip_ws(p);
	}
	if (*p != '}')
		fail_msg("unterminated babeltrace2 struct");
	*pp = p + 1;
}

/* Same value: same text, same number (1.5 and 1.500000), or a char. */
static int same_value(const char *ctf, const char *cooked)
{
	char *e1, *e2;
	double a, b;

	/* babeltrace2 prints hex digits in upper case */
	if (!strcmp(ctf, cooked) || (!strncmp(ctf, "0x", 2) && !strcasecmp(ctf, cooked)))
		return 1;
	a = strtod(ctf, &e1);
	b = strtod(cooked, &e2);
	if (*ctf && *cooked && !*e1 && !*e2 && a == b)
		return 1;
	/* a TNF char is an 8-bit integer with UTF-8 encoding in CTF */
	return strlen(cooked) == 1 && !*e1 && a == (double)(unsigned char)cooked[0];
}

/* "[cycles] name: { context }, { payload }" against a cooked event. */
static void ctf_event_matches(const char *line, unsigned long long base,
			      const struct cooked_event *e, int i)
{
	struct leaves *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	unsigned long long cycles, tid, ns;
	unsigned pid, lwpid;
	char name[64], elapsed[40];
	const char *p;
	int cpu, off = 0, k;

	assert_true(a && b);
	if (sscanf(line, "[%llu] %63[^:]: { pid = %u, lwpid = %u, tid = %llu, cpu = %d }, %n",
		   &cycles, name, &pid, &lwpid, &tid, &cpu, &off) < 6 ||
	    !off)
		fail_msg("bad babeltrace2 line: %s", line);
	ns = cycles - base;
	snprintf(elapsed, sizeof(elapsed), "%llu.%06llu", ns / 1000000, ns % 1000000);
	if (strcmp(elapsed, e->elapsed) || strcmp(name, e->name) || pid != e->pid ||
	    lwpid != e->lwpid || tid != e->tid || cpu != -1)
		fail_msg("event %d:\n  ctf    %s\n  cooked %s %u %u %llu %s %s", i, line,
			 e->elapsed, e->pid, e->lwpid, e->tid, e->name, e->data);
	p = line + off;
	bt_struct(&p, "", a);
	p = e->data;
	cooked_leaves(&p, "", b);
	if (a->n != b->n)
		fail_msg("event %d: %d fields in CTF, %d cooked:\n  %s\n  %s", i, a->n, b->n, line,
			 e->data);
	for (k = 0; k < a->n; k++)
		if (strcmp(a->v[k].path, b->v[k].path) || !same_value(a->v[k].val, b->v[k].val))
			fail_msg("event %d field %d: ctf %s = %s, cooked %s = %s", i, k,
				 a->v[k].path, a->v[k].val, b->v[k].path, b->v[k].val);
	free(a);
	free(b);
}

/* tnfdump --format=ctf into work/ctf, read back by babeltrace2. */
static void ctf_check(char *const files[], int nevents)
{
	char *argv[16], dir[PATH_MAX], opath[PATH_MAX];
	char *bt[] = {"babeltrace2", "--clock-cycles", "--no-delta", dir, NULL};
	struct cooked *c = calloc(1, sizeof(*c));
	unsigned long long base = 0;
	char *text, *line, *nl;
	struct stat st;
	int i, n = 0;

	assert_non_null(c);
	cooked_of(files, c);
	assert_int_equal(c->n, nevents);
	in_work(dir, sizeof(dir), "ctf");
	argv[n++] = tnfdump;
	argv[n++] = "--format=ctf";
	argv[n++] = dir;
	for (i = 0; files[i] && n < 15; i++)
		argv[n++] = files[i];
	argv[n] = NULL;
	run_ok(argv, "ctf.out", "ctf.err");
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	run_ok(bt, "bt.out", "bt.err");
	in_work(opath, sizeof(opath), "bt.out");
	text = slurp(opath);
	assert_non_null(text);
	n = 0;
	for (line = text; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (n >= c->n)
			fail_msg("babeltrace2 printed more than %d events: %s", c->n, line);
		if (!n)
			sscanf(line, "[%llu]", &base);
		ctf_event_matches(line, base, &c->ev[n], n);
		n++;
	}
	assert_int_equal(n, c->n);
	free(text);
	free(c->text);
	free(c);
}

static void test_ctf_small64(void **state)
{
	char a[PATH_MAX];
	char *files[] = {a, NULL};

	(void)state;
	NEED_DATA();
	NEED_TOOL("babeltrace2", "babeltrace2");
	data_path(a, "small64.tnf");
	ctf_check(files, 13);
}

static void test_ctf_threads64(void **state)
{
	char a[PATH_MAX];
	char *files[] = {a, NULL};

	(void)state;
	NEED_DATA();
	NEED_TOOL("babeltrace2", "babeltrace2");
	data_path(a, "threads64.tnf");
	ctf_check(files, 18);
}

/* Three files in one trace; "triple" has two layouts (32- and 64-bit). */
static void test_ctf_several(void **state)
{
	char a[PATH_MAX], b[PATH_MAX], d[PATH_MAX], meta[PATH_MAX], *text, *p;
	char *files[] = {a, b, d, NULL};
	int triples = 0;

	(void)state;
	NEED_DATA();
	NEED_TOOL("babeltrace2", "babeltrace2");
	data_path(a, "small64.tnf");
	data_path(b, "threads64.tnf");
	data_path(d, "small.tnf");
	ctf_check(files, 13 + 18 + 13);
	in_work(meta, sizeof(meta), "ctf/metadata");
	text = slurp(meta);
	assert_non_null(text);
	assert_true(!strncmp(text, "/* CTF 1.8 */", 13));
	for (p = text; (p = strstr(p, "name = \"triple\";")); p++)
		triples++;
	assert_int_equal(triples, 2);
	free(text);
}

static void test_ctf_types(void **state)
{
	char path[PATH_MAX];
	char *files[] = {path, NULL};

	(void)state;
	NEED_TOOL("babeltrace2", "babeltrace2");
	types_file(path, 0);
	ctf_check(files, 7);
}

/*
 * An event whose payload starts with an empty (or NULL) string: the CTF
 * writer appended 0 bytes to an empty buffer, NULL + 0 (UBSan, fuzz_tnf).
 */
static void test_ctf_empty_string(void **state)
{
	char path[PATH_MAX];
	char *files[] = {path, NULL};

	(void)state;
	NEED_TOOL("babeltrace2", "babeltrace2");
	scenario_file("emptystr", path);
	ctf_check(files, 2);
}

/* ---- errors ---------------------------------------------------------------- */

/* Status and stderr of tnfdump @args... (at most 8). */
static int dump_err(const char *const args[], char **err)
{
	char *argv[12], epath[PATH_MAX];
	int i, n = 0, st;

	argv[n++] = tnfdump;
	for (i = 0; args[i] && n < 11; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	st = run(argv, "err.out", "err.err", 0);
	in_work(epath, sizeof(epath), "err.err");
	*err = slurp(epath);
	assert_non_null(*err);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Bad files: the exports say what the cooked mode says, with its status. */
static void test_export_bad_files(void **state)
{
	char nt[PATH_MAX], tr[PATH_MAX], ok[PATH_MAX], dir[PATH_MAX];
	const char *cooked[] = {nt, ok, tr, "/nonexistent/x.tnf", NULL};
	const char *json[] = {"--format=json", nt, ok, tr, "/nonexistent/x.tnf", NULL};
	const char *ctf[] = {"-f", "ctf", dir, nt, ok, tr, "/nonexistent/x.tnf", NULL};
	char *want, *got;

	(void)state;
	NEED_DATA();
	data_path(nt, "nottnf.tnf");
	data_path(tr, "truncated.tnf");
	data_path(ok, "small64.tnf");
	in_work(dir, sizeof(dir), "ctf");
	assert_int_equal(dump_err(cooked, &want), 1);
	assert_non_null(strstr(want, "not a TNF file"));
	assert_int_equal(dump_err(json, &got), 1);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(dump_err(ctf, &got), 1);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* ---- damaged files: every format judges them alike ---------------------- */

#define NDAMAGED 300 /* damaged copies of each file */

static uint64_t dmg_state;

static uint32_t dmg_rng(void)
{
	dmg_state ^= dmg_state << 13;
	dmg_state ^= dmg_state >> 7;
	dmg_state ^= dmg_state << 17;
	return (uint32_t)(dmg_state >> 16);
}

/*
 * Damage a copy where it has content (a trace file is mostly unused
 * blocks): flipped bits, random bytes, and words likely to be references
 * or sizes; a few copies are cut short too.
 */
static size_t damage(uint8_t *p, size_t len)
{
	unsigned k = 1 + dmg_rng() % 3, i, tries;
	uint32_t off, w;

	for (i = 0; i < k; i++) {
		off = dmg_rng() % (uint32_t)(len - 4);
		for (tries = 0; tries < 64 && !p[off]; tries++)
			off = dmg_rng() % (uint32_t)(len - 4);
		switch (dmg_rng() % 4) {
		case 0:
			p[off] ^= 1u << (dmg_rng() % 8);
			break;
		case 1:
			p[off] = (uint8_t)dmg_rng();
			break;
		default:
			off &= ~3u;
			switch (dmg_rng() % 5) {
			case 0:
				w = 0;
				break;
			case 1:
				w = 0xffffffff;
				break;
			case 2:
				w = 0x80000002 |
				    (dmg_rng() % (uint32_t)len & ~3u); /* reclaimable */
				break;
			case 3:
				w = dmg_rng() % (uint32_t)len & ~3u; /* permanent */
				break;
			default:
				w = (dmg_rng() << 16) | 1; /* a PAIR */
				break;
			}
			memcpy(p + off, &w, 4);
		}
	}
	if (dmg_rng() % 16 == 0)
		len = len / 2 + dmg_rng() % (uint32_t)(len / 2);
	return len;
}

static void write_file(const char *path, const uint8_t *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	close(fd);
}

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	p = malloc(*len);
	assert_non_null(p);
	assert_int_equal(read(fd, p, *len), (ssize_t)*len);
	close(fd);
	return p;
}

/* Exit status of a run started by start(), and its stderr (owned by the caller). */
static int status_of(pid_t pid, char *const argv[], const char *err, char **text)
{
	char epath[PATH_MAX];
	int st = finish(pid, argv[1]);

	in_work(epath, sizeof(epath), err);
	*text = slurp(epath);
	assert_non_null(*text);
	/* a crash or a hang is its own bug, never "a bad file" */
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		fail_msg("%s: status 0x%x, stderr:\n%s", argv[1], st, *text);
	return WEXITSTATUS(st);
}

/*
 * The damaged copies of one file: text, json and ctf give the same exit
 * status and stderr, and what an export wrote for a readable copy is read
 * by babeltrace2 (now) and python3's json module (all at once, in @jsons,
 * which counts the JSON files kept).  Returns how many copies were bad.
 */
static unsigned damaged_formats(const uint8_t *orig, size_t olen, const char *what, int *jsons)
{
	char vpath[PATH_MAX], jpath[PATH_MAX], cdir[PATH_MAX], jname[32];
	char *text[] = {tnfdump, vpath, NULL};
	char *json[] = {tnfdump, "--format=json", vpath, NULL};
	char *ctf[] = {tnfdump, "--format=ctf", cdir, vpath, NULL};
	char *bt[] = {"babeltrace2", cdir, NULL};
	char *terr, *jerr, *cerr;
	unsigned i, bad = 0;
	uint8_t *v = malloc(olen);
	size_t len;
	pid_t tp, jp, cp;
	int ts, js, cs;

	assert_non_null(v);
	in_work(vpath, sizeof(vpath), "v.tnf");
	in_work(cdir, sizeof(cdir), "c");
	for (i = 0; i < NDAMAGED; i++) {
		memcpy(v, orig, olen);
		len = damage(v, olen);
		write_file(vpath, v, len);
		rm_tree(cdir);
		/* the three formats side by side: one copy's runs use every CPU */
		tp = start(text, "t.out", "t.err", 0);
		jp = start(json, "j.out", "j.err", 0);
		cp = start(ctf, "c.out", "c.err", 0);
		ts = status_of(tp, text, "t.err", &terr);
		js = status_of(jp, json, "j.err", &jerr);
		cs = status_of(cp, ctf, "c.err", &cerr);
		if (js != ts || cs != ts || strcmp(jerr, terr) || strcmp(cerr, terr)) {
			in_work(jpath, sizeof(jpath), "disagree.tnf");
			rename(vpath, jpath);
			fail_msg("%s copy %u (kept as %s): status text %d json %d ctf %d\n"
				 "text: %sjson: %sctf: %s",
				 what, i, jpath, ts, js, cs, terr, jerr, cerr);
		}
		free(terr);
		free(jerr);
		free(cerr);
		if (ts) {
			bad++;
			continue;
		}
		/* kept for one python3 run at the end: one per copy is slow */
		snprintf(jname, sizeof(jname), "j%d.json", (*jsons)++);
		in_work(jpath, sizeof(jpath), "j.out");
		in_work(vpath, sizeof(vpath), jname);
		assert_int_equal(rename(jpath, vpath), 0);
		in_work(vpath, sizeof(vpath), "v.tnf");
		run_ok(bt, "bt.out", "bt.err");
	}
	free(v);
	return bad;
}

/*
 * Damaged copies of small64.tnf and of a file our runtime wrote (fixed
 * seed): a file is readable or not whatever the format, and a readable
 * one exports to JSON and CTF that their readers accept.
 */
static void test_export_damaged(void **state)
{
	static const char loader[] = "import json, sys\n"
				     "for p in sys.argv[1:]:\n"
				     "    doc = json.load(open(p, encoding='utf-8'))\n"
				     "    assert isinstance(doc['traceEvents'], list), p\n";
	char path[PATH_MAX], script[PATH_MAX], name[32];
	char **argv;
	unsigned bad;
	int i, jsons = 0;
	uint8_t *p;
	size_t len;

	(void)state;
	NEED_DATA();
	NEED_TOOL("python3", "python3");
	NEED_TOOL("babeltrace2", "babeltrace2");
	dmg_state = 4242;
	data_path(path, "small64.tnf");
	p = read_file(path, &len);
	bad = damaged_formats(p, len, "small64.tnf", &jsons);
	free(p);
	types_file(path, 0);
	p = read_file(path, &len);
	bad += damaged_formats(p, len, "types.tnf", &jsons);
	free(p);
	/* the copies must be a mix, or the comparison proves little */
	print_message("%u of %u damaged copies are bad files\n", bad, 2 * NDAMAGED);
	assert_true(bad > 0 && jsons > 0);

	in_work(script, sizeof(script), "load.py");
	write_file(script, (const uint8_t *)loader, sizeof(loader) - 1);
	argv = calloc((size_t)jsons + 3, sizeof(*argv));
	assert_non_null(argv);
	argv[0] = "python3";
	argv[1] = strdup(script);
	for (i = 0; i < jsons; i++) {
		snprintf(name, sizeof(name), "j%d.json", i);
		in_work(path, sizeof(path), name);
		argv[i + 2] = strdup(path);
	}
	run_ok(argv, "py.out", "py.err");
	for (i = 1; i < jsons + 2; i++)
		free(argv[i]);
	free(argv);
}

static void test_export_usage(void **state)
{
	char ok[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];
	const char *unknown[] = {"--format=xml", ok, NULL};
	const char *unknown2[] = {"-f", "", ok, NULL};
	const char *raw[] = {"-r", "--format=json", ok, NULL};
	const char *nofile[] = {"--format=ctf", dir, NULL};
	const char *notempty[] = {"--format=ctf", dir, ok, NULL};
	const char *notdir[] = {"--format=ctf", file, ok, NULL};
	struct stat st;
	char *err;
	int fd;

	(void)state;
	NEED_DATA();
	data_path(ok, "small64.tnf");
	in_work(dir, sizeof(dir), "ctf");
	in_work(file, sizeof(file), "plain");
	assert_int_equal(dump_err(unknown, &err), 2);
	assert_non_null(strstr(err, "unknown format \"xml\""));
	assert_non_null(strstr(err, "Usage: tnfdump"));
	free(err);
	assert_int_equal(dump_err(unknown2, &err), 2);
	assert_non_null(strstr(err, "Usage: tnfdump"));
	free(err);
	assert_int_equal(dump_err(raw, &err), 2);
	assert_non_null(strstr(err, "Usage: tnfdump"));
	free(err);
	assert_int_equal(dump_err(nofile, &err), 2);
	assert_non_null(strstr(err, "Usage: tnfdump"));
	free(err);
	/* a directory with anything in it is never written into */
	assert_int_equal(mkdir(dir, 0755), 0);
	in_work(file, sizeof(file), "ctf/old");
	assert_int_equal(mkdir(file, 0700), 0);
	assert_int_equal(dump_err(notempty, &err), 1);
	assert_non_null(strstr(err, "directory is not empty"));
	free(err);
	in_work(file, sizeof(file), "ctf/metadata");
	assert_int_equal(stat(file, &st), -1);
	/* a plain file where the directory should be */
	in_work(file, sizeof(file), "plain");
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(dump_err(notdir, &err), 1);
	assert_non_null(strstr(err, "Not a directory"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json_small64, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_json_threads64, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_json_several, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_json_types, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_json_escapes, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_json_names, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_json_names_wrapped, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_ctf_small64, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_ctf_threads64, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_ctf_several, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_ctf_types, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_ctf_empty_string, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_export_bad_files, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_export_usage, ex_setup, ex_teardown),
		cmocka_unit_test_setup_teardown(test_export_damaged, ex_setup, ex_teardown),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
