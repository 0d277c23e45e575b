// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_tnfdump.c - libtnf and tnfdump against the files the original
 * Solaris/illumos writer made and what the original tnfdump printed for
 * them (cooked, -x, -r), error cases, several files in one table, the
 * reader API, and robustness: every prefix of a file at a stride and
 * thousands of randomly damaged copies must end with status 0 or 1, never
 * by a signal and never hang.
 *
 * The reference files are found in $TNF_TESTDATA, else in
 * <build dir>/../../shared/testdata/tnf-original; the tests are skipped
 * when they are missing.
 */
#include "testlib.h"

#include "tnf.h"
#include "tnf_swap.h"

#define NVARIANTS   2000 /* damaged copies */
#define PREFIX_STEP 509	 /* bytes between tested prefix lengths */
/* a single run longer than this is a hang (20 s at the default TL_TIMEOUT_MS) */
#define CHILD_SECS  (tl.timeout_ms / 1000)

static char datadir[PATH_MAX];
static char tnfdump[PATH_MAX];

static int find_data(void)
{
	const char *env = getenv("TNF_TESTDATA");
	char path[PATH_MAX + 32];

	int n;

	if (env && *env)
		n = snprintf(datadir, sizeof(datadir), "%s", env);
	else
		n = snprintf(datadir, sizeof(datadir), "%s/../../shared/testdata/tnf-original",
			     tl.bdir);
	if (n < 0 || (size_t)n >= sizeof(datadir))
		return 0;
	n = snprintf(tnfdump, sizeof(tnfdump), "%s/tnfdump", tl.bdir);
	if (n < 0 || (size_t)n >= sizeof(tnfdump))
		return 0;
	n = snprintf(path, sizeof(path), "%s/small64.tnf", datadir);
	return n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0;
}

#define NEED_DATA()                                                                                \
	do {                                                                                       \
		if (!find_data()) {                                                                \
			print_message("no TNF test data in %s\n", datadir);                        \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

static char *read_all(const char *path, size_t *len)
{
	char *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

static void write_all(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void data_path(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", datadir, name);

	assert_true(n > 0 && (size_t)n < size);
}

/*
 * Runs tnfdump with @args (NULL-ended), stdout and stderr into files under
 * a fresh temporary directory; returns the wait status.  *out and *err
 * receive what it printed (malloc'ed).
 */
static int run_dump(const char *const args[], char **out, char **err)
{
	char dir[] = "/tmp/tl-tnfdump-XXXXXX", opath[64], epath[64];
	char *argv[16];
	int ofd, efd, status = 0, i, n = 0;
	size_t len;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	snprintf(opath, sizeof(opath), "%s/out", dir);
	snprintf(epath, sizeof(epath), "%s/err", dir);
	ofd = open(opath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	efd = open(epath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(ofd >= 0 && efd >= 0);
	argv[n++] = tnfdump;
	for (i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		alarm(CHILD_SECS);
		execv(argv[0], argv);
		_exit(127);
	}
	tl_track_pid(pid);
	close(ofd);
	close(efd);
	assert_int_equal(tl_waitpid_timeout(pid, &status, 0, (CHILD_SECS + 5) * 1000), pid);
	*out = read_all(opath, &len);
	*err = read_all(epath, &len);
	assert_non_null(*out);
	assert_non_null(*err);
	unlink(opath);
	unlink(epath);
	rmdir(dir);
	return status;
}

/* Lines of @text (modified in place). */
static char **split_lines(char *text, size_t *n)
{
	size_t cap = 64;
	char **v = malloc(cap * sizeof(*v)), *p = text, *nl;

	assert_non_null(v);
	*n = 0;
	while (*p) {
		if (*n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		v[(*n)++] = p;
		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return v;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Event lines with the same elapsed time may come in any order: sort each
 * run of equal-time lines (the first 16 columns). */
static void sort_equal_times(char **v, size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		for (j = i + 1; j < n && strlen(v[i]) > 16 && strlen(v[j]) > 16 && v[i][0] == ' ' &&
				!strncmp(v[i], v[j], 16);
		     j++)
			;
		qsort(v + i, j - i, sizeof(*v), str_cmp);
		i = j;
	}
}

/* tnfdump ARGS... FILE must print exactly EXPECT (up to equal-time order). */
static void expect_output(const char *opt, const char *file, const char *expect)
{
	char in[PATH_MAX], ex[PATH_MAX], *out, *err, *want;
	const char *args[4] = {NULL, NULL, NULL, NULL};
	char **a, **b;
	size_t na, nb, i, len;
	int status;

	data_path(in, sizeof(in), file);
	data_path(ex, sizeof(ex), expect);
	if (opt) {
		args[0] = opt;
		args[1] = in;
	} else {
		args[0] = in;
	}
	status = run_dump(args, &out, &err);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0 || *err)
		print_error("tnfdump %s %s: status %d, stderr: %s\n", opt ? opt : "", file,
			    WEXITSTATUS(status), err);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(err, "");
	want = read_all(ex, &len);
	assert_non_null(want);
	if (strcmp(out, want)) {
		a = split_lines(out, &na);
		b = split_lines(want, &nb);
		sort_equal_times(a, na);
		sort_equal_times(b, nb);
		for (i = 0; i < na && i < nb; i++)
			if (strcmp(a[i], b[i]))
				print_error("line %zu:\n  got  %s\n  want %s\n", i + 1, a[i], b[i]);
		assert_int_equal(na, nb);
		for (i = 0; i < na; i++)
			assert_string_equal(a[i], b[i]);
		free(a);
		free(b);
	}
	free(out);
	free(err);
	free(want);
}

static void test_cooked_small64(void **state)
{
	(void)state;
	NEED_DATA();
	expect_output(NULL, "small64.tnf", "small64.txt");
}

static void test_hex_small64(void **state)
{
	(void)state;
	NEED_DATA();
	expect_output("-x", "small64.tnf", "small64.x.txt");
}

static void test_raw_small64(void **state)
{
	(void)state;
	NEED_DATA();
	expect_output("-r", "small64.tnf", "small64.raw.txt");
}

static void test_cooked_small32(void **state)
{
	(void)state;
	NEED_DATA();
	expect_output(NULL, "small.tnf", "small.txt");
}

static void test_raw_small32(void **state)
{
	(void)state;
	NEED_DATA();
	expect_output("-r", "small.tnf", "small.raw.txt");
}

static void test_cooked_threads64(void **state)
{
	(void)state;
	NEED_DATA();
	expect_output(NULL, "threads64.tnf", "threads64.txt");
}

static void test_raw_threads64(void **state)
{
	(void)state;
	NEED_DATA();
	expect_output("-r", "threads64.tnf", "threads64.raw.txt");
}

/* @text with every @from replaced by @to (malloc'ed). */
static char *replace_all(const char *text, const char *from, const char *to)
{
	size_t fl = strlen(from), tl_ = strlen(to), n = 0;
	const char *p;
	char *r, *q;

	for (p = text; (p = strstr(p, from)); p += fl)
		n++;
	r = malloc(strlen(text) + n * tl_ + 1);
	assert_non_null(r);
	for (q = r; (p = strstr(text, from)); text = p + fl) {
		memcpy(q, text, (size_t)(p - text));
		q += p - text;
		memcpy(q, to, tl_);
		q += tl_;
	}
	strcpy(q, text);
	return r;
}

/*
 * A byte-swapped copy of @path, written by a writer of the other byte
 * order, must print exactly what the original prints: cooked, -x and -r,
 * the same stderr (up to the file name) and the same status.
 */
static void expect_swapped_same(const char *path)
{
	static const char *const opts[] = {NULL, "-x", "-r"};
	char dir[] = "/tmp/tl-swap-XXXXXX", sw[PATH_MAX];
	const char *args[3] = {NULL, NULL, NULL};
	char *data, *swapped, *out[2], *err[2], *e;
	struct tnf_file *f;
	struct tnf_drops d;
	int status[2], i, k;
	size_t len;

	data = read_all(path, &len);
	assert_non_null(data);
	/* the original writer's private words are no drop counters */
	assert_int_equal(tnf_open_mem(data, len, &f), 0);
	assert_int_equal(tnf_writer_drops(f, &d), 0);
	assert_int_equal(d.total, 0);
	tnf_close(f);
	swapped = tnf_swap_copy(data, len);
	assert_non_null(swapped);
	assert_memory_not_equal(data, swapped, 4);
	assert_int_equal(tnf_open_mem(swapped, len, &f), 0);
	assert_int_equal(tnf_file_info(f)->swapped, 1);
	tnf_close(f);
	assert_non_null(mkdtemp(dir));
	snprintf(sw, sizeof(sw), "%s/swapped.tnf", dir);
	write_all(sw, swapped, len);
	for (i = 0; i < 3; i++) {
		for (k = 0; k < 2; k++) {
			args[0] = opts[i] ? opts[i] : (k ? sw : path);
			args[1] = opts[i] ? (k ? sw : path) : NULL;
			status[k] = run_dump(args, &out[k], &err[k]);
		}
		if (strcmp(out[0], out[1]))
			print_error("tnfdump %s: the swapped copy prints differently\n",
				    opts[i] ? opts[i] : "");
		assert_int_equal(status[0], status[1]);
		assert_string_equal(out[0], out[1]);
		e = replace_all(err[1], sw, path);
		assert_string_equal(err[0], e);
		free(e);
		for (k = 0; k < 2; k++) {
			free(out[k]);
			free(err[k]);
		}
	}
	unlink(sw);
	rmdir(dir);
	free(swapped);
	free(data);
}

static void test_swapped(void **state)
{
	static const char *const files[] = {"small64.tnf", "threads64.tnf", "small.tnf"};
	char in[PATH_MAX];
	size_t i;

	(void)state;
	NEED_DATA();
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		data_path(in, sizeof(in), files[i]);
		expect_swapped_same(in);
	}
}

/* tnfdump FILE fails with status 1 and "tnfdump: FILE: <reason>". */
static void expect_failure(const char *path, const char *reason)
{
	const char *args[] = {path, NULL};
	char want[PATH_MAX + 128], *out, *err;
	int status;

	status = run_dump(args, &out, &err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	snprintf(want, sizeof(want), "tnfdump: %s: %s", path, reason);
	if (!strstr(err, want))
		print_error("stderr: %s\nwant: %s\n", err, want);
	assert_non_null(strstr(err, want));
	assert_string_equal(out, "");
	free(out);
	free(err);
}

static void test_not_tnf(void **state)
{
	char path[PATH_MAX];

	(void)state;
	NEED_DATA();
	data_path(path, sizeof(path), "nottnf.tnf");
	expect_failure(path, "not a TNF file");
}

static void test_truncated(void **state)
{
	char path[PATH_MAX];

	(void)state;
	NEED_DATA();
	data_path(path, sizeof(path), "truncated.tnf");
	expect_failure(path, "truncated");
}

static void test_usage_and_missing(void **state)
{
	const char *none[] = {NULL};
	const char *bad[] = {"-q", "x", NULL};
	char *out, *err;
	int status;

	(void)state;
	find_data();
	status = run_dump(none, &out, &err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 2);
	assert_non_null(strstr(err, "Usage: tnfdump"));
	assert_string_equal(out, "");
	free(out);
	free(err);
	status = run_dump(bad, &out, &err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 2);
	assert_non_null(strstr(err, "Usage: tnfdump"));
	free(out);
	free(err);
	expect_failure("/nonexistent/trace.tnf", "No such file or directory");
}

static void test_empty_and_zero(void **state)
{
	char dir[] = "/tmp/tl-tnfzero-XXXXXX", empty[64], zero[64], *out, *err;
	const char *args[] = {zero, NULL};
	static char zeros[131072];
	int status;

	(void)state;
	find_data();
	assert_non_null(mkdtemp(dir));
	snprintf(empty, sizeof(empty), "%s/empty.tnf", dir);
	snprintf(zero, sizeof(zero), "%s/zero.tnf", dir);
	write_all(empty, "", 0);
	write_all(zero, zeros, sizeof(zeros));
	expect_failure(empty, "empty file");
	/* all zeros: a buffer never written; reported, status unchanged */
	status = run_dump(args, &out, &err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(err, "is an empty TNF file"));
	assert_string_equal(out, "");
	free(out);
	free(err);
	unlink(empty);
	unlink(zero);
	rmdir(dir);
}

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)); text++)
		n++;
	return n;
}

/* Events of all files go into one table, sorted together. */
static void test_several_files(void **state)
{
	char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], *out, *err;
	const char *args[] = {a, c, b, NULL};
	int status;

	(void)state;
	NEED_DATA();
	data_path(a, sizeof(a), "small64.tnf");
	data_path(b, sizeof(b), "small.tnf");
	data_path(c, sizeof(c), "nottnf.tnf");
	status = run_dump(args, &out, &err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1); /* nottnf */
	assert_non_null(strstr(err, "not a TNF file"));
	assert_int_equal(count_lines_with(out, "Elapsed (ms)"), 1);
	assert_int_equal(count_lines_with(out, "probe\t"), 10);
	assert_int_equal(count_lines_with(out, " prog_start "), 2);
	assert_int_equal(count_lines_with(out, " tick "), 10);
	assert_int_equal(count_lines_with(out, " 24545 24545 "), 13);
	assert_int_equal(count_lines_with(out, " 24540 24540 "), 13);
	free(out);
	free(err);
}

/* The reader API on small64.tnf. */
static void test_library_api(void **state)
{
	char path[PATH_MAX];
	const struct tnf_file_info *info;
	struct tnf_datum rec = {0, NULL}, v;
	struct tnf_event ev;
	struct tnf_file *f;
	int64_t last = INT64_MIN, first = 0, x;
	int err, events = 0, probes = 0, records = 0;
	size_t len;
	const char *s;

	(void)state;
	NEED_DATA();
	data_path(path, sizeof(path), "small64.tnf");
	assert_int_equal(tnf_open(path, &f), 0);
	info = tnf_file_info(f);
	assert_int_equal(info->swapped, 0);
	assert_int_equal(info->block_size, 512);
	assert_int_equal(info->directory_size, 65536);
	assert_int_equal(info->block_count, 256);
	assert_int_equal(info->file_log_size, 17);
	assert_int_equal(info->block_header_size, 24);

	while ((err = tnf_record_next(f, &rec)) > 0) {
		records++;
		if (records == 1) {
			assert_int_equal(rec.off, 4);
			assert_string_equal(tnf_datum_type_name(rec), "tnf_file_header");
		}
		if (tnf_is_probe_type(rec)) {
			probes++;
			assert_int_equal(tnf_slot_named(f, rec, "tnf_name", &v), 0);
			assert_non_null(tnf_get_chars(f, v, &len));
		}
		err = tnf_event_get(f, rec, &ev);
		assert_true(err >= 0);
		if (!err)
			continue;
		if (!events) {
			first = ev.time;
			assert_string_equal(ev.probe_name, "prog_start");
			assert_int_equal(ev.pid, 24545);
			assert_int_equal(ev.lwpid, 24545);
			assert_int_equal(ev.tid, 1);
			assert_int_equal(ev.kernel, 0);
			assert_string_equal(tnf_slot_name(rec, ev.first_arg), "mode");
			assert_int_equal(tnf_slot_get(f, rec, ev.first_arg, &v), 0);
			assert_int_equal(tnf_datum_kind(v), TNF_K_STRING);
			s = tnf_get_chars(f, v, &len);
			assert_non_null(s);
			assert_int_equal(len, 5);
			assert_memory_equal(s, "small", 5);
			assert_int_equal(tnf_get_int_named(f, ev.sched, "time_base", &x), 0);
			assert_int_equal(x, 1008907879993LL);
		}
		if (!strcmp(ev.probe_name, "triple")) {
			assert_int_equal(tnf_slot_named(f, rec, "ptr", &v), 0);
			assert_true(tnf_type_props(v.type) & TNF_PROP_OPAQUE);
			assert_int_equal(tnf_slot_named(f, rec, "n", &v), 0);
			assert_int_equal(tnf_datum_kind(v), TNF_K_INT64);
		}
		assert_true(ev.time >= last);
		last = ev.time;
		events++;
	}
	assert_int_equal(err, 0);
	assert_int_equal(probes, 5);
	assert_int_equal(events, 13);
	assert_int_equal(last - first, 8312); /* prog_end at 0.008312 ms */
	assert_int_equal(tnf_slot_index(rec, "no such slot"), -1);
	assert_string_equal(tnf_strerror(-TNF_ERR_NOTTNF), "not a TNF file");
	tnf_close(f);
}

/* ---- robustness ---------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* Damage a copy: flipped bits, random bytes, and words likely to be
 * references (permanent, reclaimable, reserved), sizes and extremes,
 * mostly where the file has content (header, tags, first data block). */
static void damage(uint8_t *p, size_t len)
{
	static const uint32_t regions[][2] = {
		{0, 0x300}, {0x10000, 0x11400}, {0x18000, 0x18200}, {0, 0}};
	unsigned k = 1 + rng() % 8, i;
	uint32_t lo, hi, off, w;

	for (i = 0; i < k; i++) {
		unsigned r = rng() % 4;

		lo = regions[r][0];
		hi = regions[r][1] ? regions[r][1] : (uint32_t)len;
		if (hi > len)
			hi = (uint32_t)len;
		if (hi < lo + 8)
			continue;
		off = lo + rng() % (hi - lo - 4);
		switch (rng() % 10) {
		case 0:
		case 1:
		case 2:
		case 3:
			p[off] ^= 1u << (rng() % 8);
			break;
		case 4:
		case 5:
			p[off] = (uint8_t)rng();
			break;
		default:
			off &= ~3u;
			switch (rng() % 7) {
			case 0:
				w = 0;
				break;
			case 1:
				w = 0xffffffff;
				break;
			case 2:
				w = 0x80000002 | (rng() % 0x20000 & ~3u);
				break;
			case 3:
				w = rng() % 0x20000 & ~3u;
				break;
			case 4:
				w = 0x7fffffff;
				break;
			case 5:
				w = (rng() << 16) | 1; /* a PAIR */
				break;
			default:
				w = rng();
			}
			memcpy(p + off, &w, 4);
		}
	}
}

/* Everything a reader may look at, through the API: must not crash. */
static void walk_all(struct tnf_file *f)
{
	struct tnf_datum rec = {0, NULL}, v, e;
	struct tnf_event ev;
	unsigned i, j, n, m;
	size_t len;
	int64_t x;
	double d;
	int guard = 0;

	while (tnf_record_next(f, &rec) > 0 && guard++ < 1000000) {
		tnf_event_get(f, rec, &ev);
		tnf_tag_arg(f, rec, &v);
		tnf_get_chars(f, rec, &len);
		n = tnf_slot_count(rec);
		for (i = 0; i < n; i++) {
			if (tnf_slot_get(f, rec, i, &v))
				continue;
			tnf_get_int(f, v, &x);
			tnf_get_float(f, v, &d);
			tnf_get_chars(f, v, &len);
			tnf_slot_count(v);
		}
		m = tnf_element_count(f, rec);
		for (j = 0; j < m && j < 4096; j++)
			if (!tnf_element_get(f, rec, j, &e))
				tnf_get_chars(f, e, &len);
	}
}

/* Runs @fn in a child with a time limit; the child must exit 0 or 1. */
static void in_child(void (*fn)(const uint8_t *, size_t), const uint8_t *p, size_t len,
		     const char *what, size_t which)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(CHILD_SECS);
		fn(p, len);
		_exit(0);
	}
	tl_track_pid(pid);
	assert_int_equal(tl_waitpid_timeout(pid, &status, 0, (CHILD_SECS + 5) * 1000), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		print_error("%s %zu: status 0x%x\n", what, which, status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
}

static void lib_walk(const uint8_t *p, size_t len)
{
	struct tnf_file *f;

	if (tnf_open_mem(p, len, &f))
		_exit(1);
	walk_all(f);
	tnf_close(f);
}

/* tnfdump, cooked and raw, on @len bytes of @p written to a file. */
static void dump_variant(const uint8_t *p, size_t len, const char *what, size_t which)
{
	char dir[] = "/tmp/tl-tnffuzz-XXXXXX", path[64], *out, *err;
	const char *cooked[] = {path, NULL}, *raw[] = {"-r", "-x", path, NULL};
	int status, r;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v.tnf", dir);
	write_all(path, p, len);
	for (r = 0; r < 2; r++) {
		status = run_dump(r ? raw : cooked, &out, &err);
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
			print_error("tnfdump%s on %s %zu: status 0x%x\n", r ? " -r" : "", what,
				    which, status);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
		if (WEXITSTATUS(status) == 1)
			assert_non_null(strstr(err, "tnfdump: "));
		free(out);
		free(err);
	}
	unlink(path);
	rmdir(dir);
}

static uint8_t *load(const char *name, size_t *len)
{
	char path[PATH_MAX];
	uint8_t *p;

	data_path(path, sizeof(path), name);
	p = (uint8_t *)read_all(path, len);
	assert_non_null(p);
	return p;
}

static void test_prefixes(void **state)
{
	size_t len, l;
	uint8_t *p;

	(void)state;
	NEED_DATA();
	p = load("small64.tnf", &len);
	for (l = 0; l <= len; l += PREFIX_STEP) {
		in_child(lib_walk, p, l, "prefix", l);
		if ((l / PREFIX_STEP) % 4 == 0)
			dump_variant(p, l, "prefix", l);
	}
	free(p);
}

static void test_damaged_library(void **state)
{
	size_t len64, len32, i;
	uint8_t *p64, *p32, *v;

	(void)state;
	NEED_DATA();
	p64 = load("small64.tnf", &len64);
	p32 = load("small.tnf", &len32);
	v = malloc(len64 > len32 ? len64 : len32);
	assert_non_null(v);
	rng_state = 2000;
	for (i = 0; i < NVARIANTS; i++) {
		size_t len = i % 4 ? len64 : len32;

		memcpy(v, i % 4 ? p64 : p32, len);
		damage(v, len);
		in_child(lib_walk, v, len, "variant", i);
	}
	free(v);
	free(p64);
	free(p32);
}

/* The swapped path gets the same treatment: damaged swapped copies. */
static void test_damaged_swapped(void **state)
{
	uint8_t *p64, *sw, *v;
	size_t len, i;

	(void)state;
	NEED_DATA();
	p64 = load("small64.tnf", &len);
	sw = tnf_swap_copy(p64, len);
	assert_non_null(sw);
	v = malloc(len);
	assert_non_null(v);
	rng_state = 3000;
	for (i = 0; i < NVARIANTS / 4; i++) {
		memcpy(v, sw, len);
		damage(v, len);
		in_child(lib_walk, v, len, "swapped variant", i);
	}
	free(v);
	free(sw);
	free(p64);
}

static void test_damaged_tnfdump(void **state)
{
	size_t len64, len32, i;
	uint8_t *p64, *p32, *v;

	(void)state;
	NEED_DATA();
	p64 = load("small64.tnf", &len64);
	p32 = load("small.tnf", &len32);
	v = malloc(len64 > len32 ? len64 : len32);
	assert_non_null(v);
	rng_state = 2000;
	for (i = 0; i < NVARIANTS; i++) {
		size_t len = i % 4 ? len64 : len32;

		memcpy(v, i % 4 ? p64 : p32, len);
		damage(v, len);
		/* the same variants as the library test; tnfdump on every 4th */
		if (i % 4 == 1)
			dump_variant(v, len, "variant", i);
	}
	free(v);
	free(p64);
	free(p32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_cooked_small64),
		TL_TEST(test_hex_small64),
		TL_TEST(test_raw_small64),
		TL_TEST(test_cooked_small32),
		TL_TEST(test_raw_small32),
		TL_TEST(test_cooked_threads64),
		TL_TEST(test_raw_threads64),
		TL_TEST(test_swapped),
		TL_TEST(test_not_tnf),
		TL_TEST(test_truncated),
		TL_TEST(test_usage_and_missing),
		TL_TEST(test_empty_and_zero),
		TL_TEST(test_several_files),
		TL_TEST(test_library_api),
		TL_TEST(test_prefixes),
		TL_TEST(test_damaged_library),
		TL_TEST(test_damaged_swapped),
		TL_TEST(test_damaged_tnfdump),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
