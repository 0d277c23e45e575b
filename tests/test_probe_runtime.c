// SPDX-License-Identifier: BSD-2-Clause
/*
 * libtnfprobe: the trace files written by programs with probes.  Each test
 * runs tests/helpers/tp_probes (its own controller, libtnfprobe in
 * LD_PRELOAD) on one scenario, then checks the file twice: with a small
 * structural walk of our own (header, directory, blocks, references) and
 * through $B/tnfdump's output (exact values).
 */
#include <sys/mman.h>

#include "testlib.h"
#include "tnf.h"
#include "tnf_swap.h"
#include "blocklib.h"

struct tp_run {
	char dir[64];
	char file[128];
	char out[1 << 16];   /* the helper's stdout */
	char err[1 << 16];   /* its stderr */
	char dump[1 << 20];  /* tnfdump's output */
	char dump_err[4096]; /* and its stderr */
};

static struct tp_run run;

static void tp_mkdir(void)
{
	snprintf(run.dir, sizeof(run.dir), "/tmp/tp-test-XXXXXX");
	if (!mkdtemp(run.dir))
		fail_msg("mkdtemp: %s", strerror(errno));
	snprintf(run.file, sizeof(run.file), "%s/trace.tnf", run.dir);
}

static void tp_rmdir(void)
{
	char p[256];

	unlink(run.file);
	snprintf(p, sizeof(p), "%s/out", run.dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/err", run.dir);
	unlink(p);
	rmdir(run.dir);
}

/* Runs @argv with stdout/stderr to files; returns the exit status. */
static int tp_exec(char *const argv[], int preload, char *out, size_t osz, char *err, size_t esz)
{
	char opath[256], epath[256], pre[PATH_MAX + 16];
	const char *extra[] = {pre, NULL};
	char **env;
	int ofd, efd, st = -1;
	pid_t pid;

	snprintf(opath, sizeof(opath), "%s/out", run.dir);
	snprintf(epath, sizeof(epath), "%s/err", run.dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", tl.probe);
	ofd = open(opath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	efd = open(epath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(ofd >= 0 && efd >= 0);
	env = tl_env_build(preload ? extra : NULL);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execve(argv[0], argv, env);
		_exit(127);
	}
	tl_track_pid(pid);
	free(env);
	close(ofd);
	close(efd);
	if (tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms) != pid)
		fail_msg("%s did not exit", argv[0]);
	tl_read_file(opath, out, osz);
	if (err)
		tl_read_file(epath, err, esz);
	return st;
}

/* Runs the helper on @scenario (@size bytes of file, 0 = default). */
static void tp_scenario(const char *scenario, unsigned size, const char *extra, int preload)
{
	char helper[PATH_MAX], sz[32];
	char *argv[] = {helper, (char *)scenario, run.file, sz, (char *)extra, NULL};
	int st;

	tl_path_of(helper, "tests/helpers/tp_probes");
	snprintf(sz, sizeof(sz), "%u", size ? size : 2 * 131072);
	if (!extra)
		argv[4] = NULL;
	st = tp_exec(argv, preload, run.out, sizeof(run.out), run.err, sizeof(run.err));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("tp_probes %s: status 0x%x, output:\n%s%s", scenario, st, run.out,
			 run.err);
}

/* $B/tnfdump on the trace file, into run.dump. */
static void tp_dump(void)
{
	char tool[PATH_MAX];
	char *argv[] = {tool, run.file, NULL};
	int st;

	tl_path_of(tool, "tnfdump");
	st = tp_exec(argv, 0, run.dump, sizeof(run.dump), run.dump_err, sizeof(run.dump_err));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("tnfdump: status 0x%x: %s", st, run.dump_err);
}

static void tp_expect_out(const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "%s\n", line);
	if (!strstr(run.out, want))
		fail_msg("helper output lacks \"%s\":\n%s", line, run.out);
}

/* ---- events from tnfdump ------------------------------------------------ */

struct tp_event {
	double ms;
	int pid, lwpid;
	long tid;
	char name[32];
	char data[256];
};

static struct tp_event events[4096];

/* Parses tnfdump's event table; returns the number of events. */
static int tp_events(void)
{
	char *line = run.dump, *nl;
	int n = 0, dashes = 0;

	for (; line && *line; line = nl ? nl + 1 : NULL) {
		struct tp_event *e = &events[n];
		int off = 0;

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(line, "----", 4)) {
			dashes++;
			goto next;
		}
		if (dashes < 2 || n == (int)(sizeof(events) / sizeof(events[0])))
			goto next;
		if (sscanf(line, "%lf %*f %d %d %ld - %31s %n", &e->ms, &e->pid, &e->lwpid, &e->tid,
			   e->name, &off) < 5)
			fail_msg("bad tnfdump line \"%s\"", line);
		snprintf(e->data, sizeof(e->data), "%s", off ? line + off : "");
		n++;
next:
		if (nl)
			*nl = '\n';
	}
	return n;
}

static int tp_count(int n, const char *name, const char *data)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		if (!strcmp(events[i].name, name) && (!data || !strcmp(events[i].data, data)))
			c++;
	return c;
}

static const struct tp_event *tp_find(int n, const char *name, const char *data)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(events[i].name, name) && !strcmp(events[i].data, data))
			return &events[i];
	fail_msg("no event %s \"%s\" in:\n%s", name, data, run.dump);
	return NULL;
}

/* ---- our own walk of the file ------------------------------------------- */

struct tp_file {
	const char *b;
	uint32_t size;
};

static uint32_t w32(const struct tp_file *f, uint32_t off)
{
	if (off + 4 > f->size)
		fail_msg("offset 0x%x outside the file", off);
	return *(const uint32_t *)(f->b + off);
}

/* Target of the reference in the cell at @off, through directory cells. */
static uint32_t tp_deref(const struct tp_file *f, uint32_t off)
{
	uint32_t v = w32(f, off), t;

	if (!v)
		return 0;
	if ((v & 3) == 3)
		fail_msg("reserved reference kind at 0x%x", off);
	t = v & 0x80000000 ? (v & 0x7ffffffc) : off + (v & 0x7ffffffc);
	while (t >= 512 && t < 0x10000)
		t = tp_deref(f, t);
	return t;
}

/* The name of the type of the record at @off ("" for none). */
static const char *tp_type_name(const struct tp_file *f, uint32_t rec)
{
	uint32_t type = tp_deref(f, rec), name;

	if (!type)
		return "";
	name = tp_deref(f, type + 4);
	return name ? f->b + name + 8 : "";
}

/*
 * Checks header, directory and every data block; returns the number of
 * events (PAIR records) in valid data blocks.
 */
static int tp_walk(unsigned size)
{
	struct tp_file f;
	uint32_t blk, p, type;
	int fd, events = 0;
	void *m;

	fd = open(run.file, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(m != MAP_FAILED);
	f.b = m;
	f.size = size;
	assert_int_equal(w32(&f, 0), 0x544E4600);
	assert_int_equal(w32(&f, 8), 1);	   /* file_version */
	assert_int_equal(w32(&f, 12), 36);	   /* file_header_size */
	assert_int_equal(w32(&f, 20), 24);	   /* block_header_size */
	assert_int_equal(w32(&f, 24), 512);	   /* block_size */
	assert_int_equal(w32(&f, 28), 0x10000);	   /* directory_size */
	assert_int_equal(w32(&f, 32), size / 512); /* block_count */
	assert_string_equal(tp_type_name(&f, 4), "tnf_file_header");
	assert_string_equal(tp_type_name(&f, 0x10000), "tnf_block_header");
	assert_string_equal(tp_type_name(&f, tp_deref(&f, 0x208)), "tnf_struct_type");
	for (blk = 0x10000; blk < size; blk += 512) {
		uint32_t gen = w32(&f, blk + 4);
		uint16_t valid = *(const uint16_t *)(f.b + blk + 8);

		if (!w32(&f, blk))
			continue;
		assert_string_equal(tp_type_name(&f, blk), "tnf_block_header");
		if (valid < 24 || valid > 512)
			fail_msg("block 0x%x: bytes_valid %u", blk, valid);
		if (blk < 0x18000 && gen != 0xffffffff)
			fail_msg("tag reserve block 0x%x has generation %u", blk, gen);
		for (p = blk + 24; p < blk + valid;) {
			uint32_t w = w32(&f, p);

			if ((w & 3) == 0) {
				p += 4;
				continue;
			}
			if ((w & 3) == 1) {
				uint32_t cell = (w >> 16) & 0xfffc;
				int16_t arg = (int16_t)(w & 0xfffc);

				if (gen == 0xffffffff)
					fail_msg("event in tag block 0x%x", blk);
				type = tp_deref(&f, cell);
				assert_string_equal(tp_type_name(&f, type), "tnf_probe_type");
				assert_true(arg != 0);
				assert_string_equal(tp_type_name(&f, p + arg), "tnf_sched_rec");
				p += w32(&f, type + 16); /* tnf_type_size */
				events++;
			} else {
				const char *tn = tp_type_name(&f, p);

				type = tp_deref(&f, p);
				if (!*tn)
					fail_msg("record at 0x%x without a type", p);
				/* arrays (strings) carry their size, structs in the type */
				if (!strcmp(tp_type_name(&f, type), "tnf_array_type") ||
				    !strcmp(tn, "tnf_name") || !strcmp(tn, "tnf_properties") ||
				    !strcmp(tn, "tnf_slot_types") || !strcmp(tn, "tnf_slot_names"))
					p += w32(&f, p + 4);
				else if (!strcmp(tp_type_name(&f, type), "tnf_derived_type"))
					p += 16;
				else if (!strcmp(tp_type_name(&f, type), "tnf_scalar_type"))
					p += 20;
				else if (!strcmp(tn, "tnf_type"))
					p += 12;
				else
					p += w32(&f, type + 16);
			}
			p = (p + 3) & ~3u;
		}
		if (p > blk + 512)
			fail_msg("block 0x%x: record past its end", blk);
	}
	munmap(m, size);
	return events;
}

/* ---- whole files ----------------------------------------------------------- */

static char *tp_slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void tp_spill(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

/* The drop counters of the trace file (libtnf): 1 if our writer's. */
static int tp_drops(struct tnf_drops *d)
{
	struct tnf_file *f;
	int r;

	assert_int_equal(tnf_open(run.file, &f), 0);
	r = tnf_writer_drops(f, d);
	tnf_close(f);
	return r;
}

/* The first @from in @s (of @size bytes) becomes @to. */
static void rename_in(char *s, size_t size, const char *from, const char *to)
{
	char *p = strstr(s, from);
	size_t fl = strlen(from), tl_ = strlen(to);

	if (!p)
		return;
	assert_true(strlen(s) - fl + tl_ < size);
	memmove(p + tl_, p + fl, strlen(p + fl) + 1);
	memcpy(p, to, tl_);
}

/* ---- tests ---------------------------------------------------------------- */

static int tp_setup(void **state)
{
	tl_setup(state);
	tp_mkdir();
	return 0;
}

static int tp_teardown(void **state)
{
	tp_rmdir();
	return tl_teardown(state);
}

/* Every argument type, records included, comes back with its exact value. */
static void test_probe_all_types(void **state)
{
	const char *ints = "i: -5 u: 4000000000 l: -9000000000 ul: 18000000000000000000 ll: -7";
	int n, fds_before, fds_after;
	unsigned st;

	(void)state;
	tp_scenario("types", 0, NULL, 1);
	assert_int_equal(sscanf(run.out, "state %u fds %d %d", &st, &fds_before, &fds_after), 3);
	assert_int_equal(st, 0); /* RUNNING */
	/* the mapping keeps no fd */
	assert_int_equal(fds_before, fds_after);
	assert_int_equal(tp_walk(2 * 131072), 7);
	tp_dump();
	/* nothing was lost: no drop line */
	assert_string_equal(run.dump_err, "");
	if (!strstr(run.dump, "probe\t tnf_name: \"ints\" tnf_string: \"keys tp types;file "
			      "tests/helpers/tp_probes.c;line "))
		fail_msg("no probe line for ints:\n%s", run.dump);
	assert_non_null(strstr(run.dump, ";sunw%debug 'some ints'\""));
	n = tp_events();
	assert_int_equal(n, 7);
	tp_find(n, "ints", ints);
	tp_find(n, "smalls", "c: A i8: -8 u8: 250 s: -300 us: 65000");
	tp_find(n, "more", "i16: -16 u16: 16 ull: 12345678901234567890 sz: 42 op: 0x1000");
	tp_find(n, "floats", "f: 1.500000 d: -2.250000 s: \"hello world\" nul: 0x0        <NULL>");
	tp_find(n, "records",
		"p: { type: point_rec x: -3 y: 1234567890123 label: \"pt\" } g: { type: seg_rec "
		"a: { type: point_rec x: -3 y: 1234567890123 label: \"pt\" } n: -2 }");
	tp_find(n, "nullrec", "p: 0x0        <NULL>");
	tp_find(n, "empty", "");
	assert_int_equal(tp_count(n, "dbgonly", NULL), 0); /* TNF_DEBUG is not defined */
	assert_int_equal(events[0].pid, events[0].lwpid);
}

/* A forked child writes into the same file under its own pid. */
static void test_probe_fork(void **state)
{
	int n, child, parent, i;
	char d[32];

	(void)state;
	tp_scenario("fork", 0, NULL, 1);
	assert_int_equal(
		sscanf(strstr(run.out, "pids "), "pids child %d parent %d", &child, &parent), 2);
	tp_expect_out("child state 2"); /* FORKED */
	assert_int_equal(tp_walk(2 * 131072), 12);
	tp_dump();
	n = tp_events();
	assert_int_equal(n, 12);
	assert_int_equal(tp_find(n, "tick", "i: 0")->pid, parent);
	assert_int_equal(tp_find(n, "tick", "i: 1")->pid, parent);
	for (i = 100; i < 110; i++) {
		snprintf(d, sizeof(d), "i: %d", i);
		assert_int_equal(tp_find(n, "tick", d)->pid, child);
		assert_int_equal(tp_find(n, "tick", d)->lwpid, child);
	}
}

/* A vfork child writes as its (suspended) parent. */
static void test_probe_vfork(void **state)
{
	int n, child, parent;

	(void)state;
	tp_scenario("vfork", 0, NULL, 1);
	assert_int_equal(sscanf(run.out, "vchild %d parent %d", &child, &parent), 2);
	tp_dump();
	n = tp_events();
	assert_int_equal(n, 3);
	assert_int_equal(tp_find(n, "tick", "i: 50")->pid, parent);
	assert_int_equal(tp_find(n, "tick", "i: 1")->pid, parent);
}

/*
 * Four threads at once: every event there, each thread under its own id,
 * and no block wasted (blocklib.h: no ticket burnt, at most one block per
 * writer, the main thread included, less than half full).
 */
static void test_probe_threads(void **state)
{
	struct tl_blocks b;
	int n, who, i, lwp[4];
	char d[32];

	(void)state;
	tp_scenario("threads", 1 << 20, NULL, 1);
	assert_int_equal(tp_walk(1 << 20), 2001);
	tl_assert_block_use(run.file, 5, &b);
	print_message("# blocks: %llu handed out, %u of events (%llu bytes), %u of tags, "
		      "%u less than half full\n",
		      (unsigned long long)b.ticket, b.events, (unsigned long long)b.bytes, b.tags,
		      b.sparse);
	tp_dump();
	n = tp_events();
	assert_int_equal(n, 2001);
	assert_int_equal(tp_count(n, "worker", NULL), 2000);
	for (who = 0; who < 4; who++) {
		for (i = 0; i < 500; i += 7) {
			snprintf(d, sizeof(d), "who: %d i: %d", who, i);
			assert_int_equal(tp_count(n, "worker", d), 1);
		}
		snprintf(d, sizeof(d), "who: %d i: 499", who);
		lwp[who] = tp_find(n, "worker", d)->lwpid;
		for (i = 0; i < who; i++)
			assert_int_not_equal(lwp[i], lwp[who]);
	}
	for (i = 0; i < n; i++) {
		if (strcmp(events[i].name, "worker"))
			continue;
		assert_true(sscanf(events[i].data, "who: %d", &who) == 1);
		assert_int_equal(events[i].lwpid, lwp[who]);
		assert_int_equal(events[i].tid, lwp[who]);
	}
}

/* A small file wraps: the oldest events are gone, the newest complete. */
static void test_probe_wrap(void **state)
{
	int n, i, first, walked;

	(void)state;
	tp_scenario("wrap", 131072, "20000", 1);
	tp_expect_out("last 19999");
	walked = tp_walk(131072);
	tp_dump();
	assert_non_null(strstr(run.dump, "probe\t tnf_name: \"tick\""));
	n = tp_events();
	assert_int_equal(n, walked);
	assert_true(n > 1000);
	/* sorted by time: consecutive i, ending in the last one */
	assert_int_equal(sscanf(events[0].data, "i: %d", &first), 1);
	assert_true(first > 0);
	for (i = 0; i < n; i++) {
		char d[32];

		snprintf(d, sizeof(d), "i: %d", first + i);
		assert_string_equal(events[i].data, d);
	}
	assert_int_equal(first + n - 1, 19999);
}

/* trace/untrace/disable/connect/disconnect and the process/thread switches. */
static void test_probe_switches(void **state)
{
	const char *want[] = {"v: 1", "v: 4", "v: 5", "v: 8", "v: 10", "v: 201"};
	int n, i;

	(void)state;
	tp_scenario("switches", 0, NULL, 1);
	tp_expect_out("log3 B-A-"); /* untraced: both run, most recent first */
	tp_expect_out("log4 B-A-"); /* traced: both run before the commit */
	tp_expect_out("log5 ");	    /* disconnected, then disabled */
	tp_expect_out("stopped 16");
	tp_expect_out("state 0");
	tp_dump();
	n = tp_events();
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++)
		assert_string_equal(events[i].data, want[i]);
	assert_int_not_equal(events[5].lwpid, events[0].lwpid);
}

/* &debug prints one line per event on stderr, traced or not. */
static void test_probe_debug(void **state)
{
	(void)state;
	tp_scenario("debug", 0, NULL, 1);
	if (!strstr(run.err, "probe ints; sunw%debug \"'some ints'\"; i=-5; u=4000000000; "
			     "l=-9000000000; ul=18000000000000000000; ll=-7; \n"))
		fail_msg("debug line for ints missing:\n%s", run.err);
	if (!strstr(run.err,
		    "probe floats; f=1.500000; d=-2.250000; s=\"hello world\"; nul=\"\"; \n"))
		fail_msg("debug line for floats missing:\n%s", run.err);
	tp_dump();
	assert_int_equal(tp_count(tp_events(), "floats", NULL), 0); /* untraced */
}

/* A probe from a signal handler inside a probe, or in a connected function, is dropped. */
static void test_probe_nested(void **state)
{
	char want[512];
	struct tnf_drops d;
	int n;

	(void)state;
	tp_scenario("nested", 0, NULL, 1);
	tp_dump();
	n = tp_events();
	assert_int_equal(n, 3);
	tp_find(n, "sw", "v: 1");
	tp_find(n, "inner", "v: 3");
	assert_int_equal(tp_count(n, "inner", "v: 1"), 1); /* only the one outside a probe */
	assert_int_equal(tp_count(n, "inner", "v: 2"), 0);
	/* both drops are counted in the file and reported after the table */
	snprintf(want, sizeof(want),
		 "tnfdump: %s: 2 events were dropped by the writer (nested probe: 2)\n", run.file);
	assert_string_equal(run.dump_err, want);
	assert_int_equal(tp_drops(&d), 1);
	assert_int_equal(d.total, 2);
	assert_int_equal(d.by_reason[TNF_DROP_NESTED], 2);
}

/* A string longer than the room left in a block is truncated: counted. */
static void test_probe_truncated(void **state)
{
	struct tnf_drops d;

	(void)state;
	tp_scenario("longstr", 0, NULL, 1);
	tp_dump();
	assert_int_equal(tp_drops(&d), 1);
	assert_int_equal(d.total, 1);
	assert_int_equal(d.by_reason[TNF_DROP_TRUNCATED], 1);
	assert_non_null(strstr(run.dump_err, "1 event was dropped by the writer "
					     "(argument truncated: 1)\n"));
}

/*
 * Our files, byte-swapped as a writer of the other order would have made
 * them, print exactly the same (cooked, -x, -r; drop line included).
 */
static void swapped_same(void)
{
	static const char *const opts[] = {"", "-x", "-r"};
	char tool[PATH_MAX], sw[256], *out[2], err[2][4096], *data, *swapped;
	char *argv[] = {tool, NULL, NULL, NULL};
	struct tnf_drops d[2];
	struct tnf_file *f;
	size_t len;
	int i, k, st[2];

	data = tp_slurp(run.file, &len);
	swapped = tnf_swap_copy(data, len);
	assert_non_null(swapped);
	assert_int_equal(tnf_open_mem(data, len, &f), 0);
	assert_int_equal(tnf_writer_drops(f, &d[0]), 1);
	tnf_close(f);
	assert_int_equal(tnf_open_mem(swapped, len, &f), 0);
	assert_int_equal(tnf_file_info(f)->swapped, 1);
	assert_int_equal(tnf_writer_drops(f, &d[1]), 1);
	tnf_close(f);
	assert_memory_equal(&d[0], &d[1], sizeof(d[0]));
	snprintf(sw, sizeof(sw), "%s/swapped.tnf", run.dir);
	tp_spill(sw, swapped, len);
	tl_path_of(tool, "tnfdump");
	for (i = 0; i < 3; i++) {
		for (k = 0; k < 2; k++) {
			out[k] = malloc(sizeof(run.dump));
			assert_non_null(out[k]);
			argv[1] = *opts[i] ? (char *)opts[i] : (k ? sw : run.file);
			argv[2] = *opts[i] ? (k ? sw : run.file) : NULL;
			st[k] = tp_exec(argv, 0, out[k], sizeof(run.dump), err[k], sizeof(err[k]));
		}
		assert_int_equal(st[0], st[1]);
		assert_string_equal(out[0], out[1]);
		/* the same drop line, but for the other name */
		rename_in(err[1], sizeof(err[1]), sw, run.file);
		assert_string_equal(err[0], err[1]);
		free(out[0]);
		free(out[1]);
	}
	unlink(sw);
	free(swapped);
	free(data);
}

static void test_probe_swapped(void **state)
{
	static const char *const scenarios[] = {"types", "nested", "threads"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		tp_scenario(scenarios[i], 0, NULL, 1);
		swapped_same();
	}
}

/* Without libtnfprobe a program with probes runs, its probes off. */
static void test_probe_no_runtime(void **state)
{
	(void)state;
	tp_scenario("noruntime", 0, NULL, 0);
	tp_expect_out("ok");
}

/* A trace file that cannot be opened makes the buffer BROKEN. */
static void test_probe_broken(void **state)
{
	(void)state;
	tp_scenario("broken", 0, NULL, 1);
	tp_expect_out("state 3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_probe_all_types, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_fork, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_vfork, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_threads, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_wrap, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_switches, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_debug, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_nested, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_truncated, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_swapped, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_no_runtime, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_probe_broken, tp_setup, tp_teardown),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
