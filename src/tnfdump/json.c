// SPDX-License-Identifier: BSD-2-Clause
/*
 * json.c - tnfdump --format=json: the events of every file as one Chrome
 * trace-event JSON object, which chrome://tracing and the Perfetto UI open.
 *
 *   {"traceEvents": [metadata..., events...], "displayTimeUnit": "ns",
 *    "otherData": {...}}
 *
 * Each probe event is an instant event ("ph":"i", "s":"t") named after the
 * probe, its "cat" the probe's keys joined by commas (the trace viewers
 * split categories on commas), "ts" in microseconds with nanosecond
 * precision relative to the earliest event of all files (otherData
 * "ts_base_ns" keeps that event's absolute time), and its argument slots
 * in "args".  Values: integers are JSON numbers unless their magnitude
 * exceeds 2^53 (a double cannot hold them exactly): then a decimal string;
 * opaque values are "0x..." strings; chars and strings are strings (invalid
 * UTF-8 bytes become U+FFFD); NULL references are null; records are
 * objects with their type in "tnf_tag", then their slots; a value libtnf
 * cannot read (a damaged file the cooked pass still accepts) is null.
 * Which events exist, and whether a file is bad, is the cooked output's
 * judgement (cooked_check()), so the exit status never depends on the
 * format.  Metadata events name each process and thread: by the
 * "process_name" and "thread_name" slots of the events' schedule records
 * (our writer's: the program and the thread's comm at its first event),
 * else "pid N" and "tid N" (the original writer's files have no names).
 * User-level records carry no CPU (a thread moves between CPUs within one
 * schedule record), so there is none in the JSON; a kernel record's CPU
 * (its schedule record's cpuid) is the first of its args, "tnf_cpuid", and
 * it sits on its thread's track.  Events are sorted by time, stable in
 * file order: kernel and user traces of one period interleave.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "json_out.h"

/* Largest integer a JSON reader that uses doubles holds exactly. */
#define JSON_EXACT_MAX (1ULL << 53)

struct jrow {
	int64_t time;
	size_t seq;
	uint64_t tid;
	uint32_t pid;
	uint32_t lwpid;
	int kernel;
	int pname; /* index in json_trace.names, -1 = none */
	int tname;
	char *text; /* everything of the event after its "ts" */
};

struct json_trace {
	struct jrow *rows;
	size_t n;
	size_t cap;
	char **names; /* process and thread names, each once */
	int nnames;
	uint32_t last_sched; /* the current file's last schedule record */
	int last_pname;
	int last_tname;
};

struct json_trace *json_new(void)
{
	return calloc(1, sizeof(struct json_trace));
}

void json_free(struct json_trace *j)
{
	size_t i;

	if (!j)
		return;
	for (i = 0; i < j->n; i++)
		free(j->rows[i].text);
	for (i = 0; i < (size_t)j->nnames; i++)
		free(j->names[i]);
	free(j->names);
	free(j->rows);
	free(j);
}

/* A JSON string: control characters escaped, invalid UTF-8 as U+FFFD. */
static void json_string(FILE *out, const char *str, size_t n)
{
	json_out_string(out, str, n);
}

static void json_cstring(FILE *out, const char *s)
{
	json_string(out, s, strlen(s));
}

static void json_uint(FILE *out, uint64_t v)
{
	fprintf(out, v > JSON_EXACT_MAX ? "\"%" PRIu64 "\"" : "%" PRIu64, v);
}

static void json_int(FILE *out, int64_t v)
{
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;

	fprintf(out, mag > JSON_EXACT_MAX ? "\"%" PRId64 "\"" : "%" PRId64, v);
}

/* JSON has no NaN or infinity: those become strings. */
static void json_float(FILE *out, double x, bool single)
{
	if (isnan(x))
		fputs("\"nan\"", out);
	else if (isinf(x))
		fputs(x < 0 ? "\"-inf\"" : "\"inf\"", out);
	else
		fprintf(out, single ? "%.9g" : "%.17g", x);
}

static int json_scalar(FILE *out, struct tnf_file *f, struct tnf_datum d)
{
	enum tnf_kind k = tnf_datum_kind(d);
	int64_t v;
	double x;
	char c;
	int err;

	if (k == TNF_K_FLOAT32 || k == TNF_K_FLOAT64) {
		err = tnf_get_float(f, d, &x);
		if (!err)
			json_float(out, x, k == TNF_K_FLOAT32);
		return err;
	}
	if (k == TNF_K_SCALAR) {
		fputs("\"unhandled scalar\"", out);
		return 0;
	}
	err = tnf_get_int(f, d, &v);
	if (err)
		return err;
	if (k == TNF_K_CHAR) {
		c = (char)v;
		json_string(out, &c, 1);
	} else if (tnf_type_props(d.type) & TNF_PROP_OPAQUE) {
		fprintf(out, "\"0x%" PRIx64 "\"", (uint64_t)v);
	} else if (k == TNF_K_INT8 || k == TNF_K_INT16 || k == TNF_K_INT32 || k == TNF_K_INT64) {
		json_int(out, v);
	} else {
		json_uint(out, (uint64_t)v);
	}
	return 0;
}

static int json_value(FILE *out, struct tnf_file *f, struct tnf_datum d, int depth);

/*
 * A slot or element: @err is how getting @d went.  A value libtnf cannot
 * read whole is null (the cooked pass already judged the file; this reads
 * what the text output never does, e.g. array elements), and it is built
 * aside first so that no half-written value breaks the document.
 */
static int json_member(FILE *out, struct tnf_file *f, int err, struct tnf_datum d, int depth)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!err) {
		m = open_memstream(&buf, &len);
		if (!m)
			return -TNF_ERR_NOMEM;
		err = json_value(m, f, d, depth);
		if (fclose(m) && !err)
			err = -TNF_ERR_NOMEM;
	}
	if (err == -TNF_ERR_NOMEM) {
		free(buf);
		return err;
	}
	if (err)
		fputs("null", out);
	else
		fwrite(buf, 1, len, out);
	free(buf);
	return 0;
}

/* Slots @from.. of @d as "name":value pairs, each preceded by @sep. */
static int json_slots(FILE *out, struct tnf_file *f, struct tnf_datum d, unsigned from,
		      const char *sep, int depth)
{
	unsigned i, n = tnf_slot_count(d);
	struct tnf_datum v;
	int err;

	for (i = from; i < n; i++) {
		if (!strcmp(tnf_slot_name(d, i), "tnf_tag"))
			continue;
		fputs(sep, out);
		sep = ",";
		json_cstring(out, tnf_slot_name(d, i));
		fputc(':', out);
		err = tnf_slot_get(f, d, i, &v);
		err = json_member(out, f, err, v, depth);
		if (err)
			return err;
	}
	return 0;
}

static int json_array(FILE *out, struct tnf_file *f, struct tnf_datum d, int depth)
{
	unsigned i, n = tnf_element_count(f, d);
	struct tnf_datum v;
	int err;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		err = tnf_element_get(f, d, i, &v);
		err = json_member(out, f, err, v, depth + 1);
		if (err)
			return err;
	}
	fputc(']', out);
	return 0;
}

static int json_value(FILE *out, struct tnf_file *f, struct tnf_datum d, int depth)
{
	const struct tnf_type *t;
	const char *s;
	size_t len;
	int err;

	if (!d.off) {
		fputs("null", out);
		return 0;
	}
	if (tnf_type_props(d.type) & TNF_PROP_SCALAR)
		return json_scalar(out, f, d);
	if (!(tnf_type_props(d.type) & TNF_PROP_TAGGED)) {
		fprintf(out, "\"<inline %s>\"", tnf_datum_type_name(d));
		return 0;
	}
	switch (tnf_datum_kind(d)) {
	case TNF_K_TYPE:
		err = tnf_type_of_record(f, d, &t);
		if (!err)
			json_cstring(out, tnf_type_name(t));
		return err;
	case TNF_K_STRING:
		s = tnf_get_chars(f, d, &len);
		if (!s)
			return -TNF_ERR_BADRECORD;
		json_string(out, s, len);
		return 0;
	case TNF_K_STRUCT:
		/* the same limit as the cooked output, which bounds loops too */
		if (depth >= DUMP_MAX_NEST) {
			fputs("\"{ ... }\"", out);
			return 0;
		}
		fputs("{\"tnf_tag\":", out);
		json_cstring(out, tnf_datum_type_name(d));
		err = json_slots(out, f, d, 0, ",", depth + 1);
		fputc('}', out);
		return err;
	case TNF_K_ARRAY:
		if (depth >= DUMP_MAX_NEST) {
			fputs("\"[ ... ]\"", out);
			return 0;
		}
		return json_array(out, f, d, depth);
	default:
		fputc('"', out);
		fprintf(out, "<%s>", tnf_datum_type_name(d));
		fputc('"', out);
		return 0;
	}
}

/*
 * The probe's keys (the "keys" attribute of its tnf_string, e.g. "keys tp
 * types;file ...") joined by commas.
 */
static void json_category(FILE *out, struct tnf_file *f, const struct tnf_event *ev)
{
	struct tnf_datum probe, attr;
	const char *s = NULL, *end, *p, *q;
	char *cat = NULL;
	size_t len = 0, clen = 0;
	FILE *m;

	if (!tnf_record_at(f, tnf_type_offset(ev->record.type), &probe) &&
	    !tnf_slot_named(f, probe, "tnf_string", &attr) && attr.off)
		s = tnf_get_chars(f, attr, &len);
	m = open_memstream(&cat, &clen);
	if (!m) {
		fputs("\"\"", out);
		return;
	}
	for (end = s ? s + len : NULL; s && s < end; s = p + 1) {
		p = memchr(s, ';', (size_t)(end - s));
		if (!p)
			p = end;
		if (p - s < 4 || memcmp(s, "keys", 4) || (p - s > 4 && s[4] != ' '))
			continue;
		/* each word, the first without a comma before it */
		for (q = s + 4; q < p; q++) {
			if (*q == ' ')
				continue;
			if (q[-1] == ' ' && ftell(m) > 0)
				fputc(',', m);
			fputc(*q, m);
		}
		break;
	}
	fclose(m);
	json_string(out, cat ? cat : "", cat ? clen : 0);
	free(cat);
}

/* The event after its "ts": name, cat, phase, pid, tid, args. */
static int json_event_text(struct tnf_file *f, const struct tnf_event *ev, char **text)
{
	size_t len;
	FILE *out;
	int err;

	out = open_memstream(text, &len);
	if (!out)
		return -TNF_ERR_NOMEM;
	fputs("\"name\":", out);
	json_cstring(out, ev->probe_name);
	fputs(",\"cat\":", out);
	json_category(out, f, ev);
	fprintf(out, ",\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu32 ",\"tid\":", ev->pid);
	json_uint(out, ev->tid);
	fputs(",\"args\":{", out);
	if (ev->kernel)
		fprintf(out, "\"tnf_cpuid\":%d", ev->cpuid);
	err = json_slots(out, f, ev->record, ev->first_arg, ev->kernel ? "," : "", 0);
	fputs("}}", out);
	if (fclose(out) && !err)
		err = -TNF_ERR_NOMEM;
	if (err) {
		free(*text);
		*text = NULL;
	}
	return err;
}

/* The index of name @s (@len bytes) in j->names, added if new; -1 if none. */
static int json_intern(struct json_trace *j, const char *s, size_t len)
{
	char **v;
	int i;

	if (!s || !len)
		return -1;
	for (i = 0; i < j->nnames; i++)
		if (strlen(j->names[i]) == len && !memcmp(j->names[i], s, len))
			return i;
	v = realloc(j->names, (size_t)(j->nnames + 1) * sizeof(*v));
	if (!v)
		return -2;
	j->names = v;
	v[j->nnames] = strndup(s, len);
	if (!v[j->nnames])
		return -2;
	return j->nnames++;
}

/* Slot @slot of schedule record @sched as a name index: -1 none, -2 no memory. */
static int sched_name(struct json_trace *j, struct tnf_file *f, struct tnf_datum sched,
		      const char *slot)
{
	struct tnf_datum d;
	const char *s;
	size_t len = 0;

	if (tnf_slot_named(f, sched, slot, &d) || !d.off || tnf_datum_kind(d) != TNF_K_STRING)
		return -1;
	s = tnf_get_chars(f, d, &len);
	return json_intern(j, s, s ? strnlen(s, len) : 0);
}

/* The names of @ev's schedule record, read once per record. */
static int event_names(struct json_trace *j, struct tnf_file *f, const struct tnf_event *ev)
{
	if (j->last_sched && j->last_sched == ev->sched.off)
		return 0;
	j->last_pname = sched_name(j, f, ev->sched, "process_name");
	j->last_tname = sched_name(j, f, ev->sched, "thread_name");
	if (j->last_pname == -2 || j->last_tname == -2) {
		j->last_sched = 0;
		return -TNF_ERR_NOMEM;
	}
	j->last_sched = ev->sched.off;
	return 0;
}

void json_file_end(struct json_trace *j)
{
	j->last_sched = 0;
}

int json_event(struct json_trace *j, struct tnf_file *f, const struct tnf_event *ev)
{
	struct jrow *r;
	int err;

	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 256;

		r = realloc(j->rows, cap * sizeof(*r));
		if (!r)
			return -TNF_ERR_NOMEM;
		j->rows = r;
		j->cap = cap;
	}
	err = event_names(j, f, ev);
	if (err)
		return err;
	r = &j->rows[j->n];
	err = json_event_text(f, ev, &r->text);
	if (err)
		return err;
	r->time = ev->time;
	r->seq = j->n;
	r->tid = ev->tid;
	r->pid = ev->pid;
	r->lwpid = ev->lwpid;
	r->kernel = ev->kernel;
	r->pname = j->last_pname;
	r->tname = j->last_tname;
	j->n++;
	return 0;
}

static int jrow_time_cmp(const void *a, const void *b)
{
	const struct jrow *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int jrow_thread_cmp(const void *a, const void *b)
{
	const struct jrow *x = *(const struct jrow *const *)a, *y = *(const struct jrow *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* @name: the index of the thread's name, -1 = none. */
static void json_thread_name(FILE *out, const struct json_trace *j, const struct jrow *r, int name)
{
	fprintf(out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":", r->pid);
	json_uint(out, r->tid);
	if (name >= 0) {
		fputs(",\"args\":{\"name\":", out);
		json_cstring(out, j->names[name]);
		fputs("}},\n", out);
	} else if (r->kernel && r->tid > UINT32_MAX) {
		/* a Solaris kernel thread's address; Linux kernel traces carry the tid */
		fprintf(out, ",\"args\":{\"name\":\"kthread 0x%" PRIx64 "\"}},\n", r->tid);
	} else if (r->lwpid && r->lwpid != r->tid) {
		fprintf(out, ",\"args\":{\"name\":\"tid %" PRIu64 " (lwp %" PRIu32 ")\"}},\n",
			r->tid, r->lwpid);
	} else {
		fprintf(out, ",\"args\":{\"name\":\"tid %" PRIu64 "\"}},\n", r->tid);
	}
}

static void json_process_name(FILE *out, const struct json_trace *j, uint32_t pid, int name)
{
	fprintf(out,
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu32
		",\"tid\":0,\"args\":{\"name\":",
		pid);
	if (name >= 0)
		json_cstring(out, j->names[name]);
	else
		fprintf(out, "\"pid %" PRIu32 "\"", pid);
	fputs("}},\n", out);
}

/*
 * process_name once per pid (the first name one of its events has),
 * thread_name once per (pid, tid) (likewise).
 */
static int json_metadata(FILE *out, const struct json_trace *j)
{
	const struct jrow **v;
	size_t i, k, t;
	int pname, tname;

	v = malloc((j->n ? j->n : 1) * sizeof(*v));
	if (!v)
		return -TNF_ERR_NOMEM;
	for (i = 0; i < j->n; i++)
		v[i] = &j->rows[i];
	qsort(v, j->n, sizeof(*v), jrow_thread_cmp);
	for (i = 0; i < j->n; i = k) {
		pname = -1;
		for (k = i; k < j->n && v[k]->pid == v[i]->pid; k++)
			if (pname < 0)
				pname = v[k]->pname;
		json_process_name(out, j, v[i]->pid, pname);
		for (t = i; t < k;) {
			const struct jrow *first = v[t];

			tname = -1;
			for (; t < k && v[t]->tid == first->tid; t++)
				if (tname < 0)
					tname = v[t]->tname;
			json_thread_name(out, j, first, tname);
		}
	}
	free(v);
	return 0;
}

/* Microseconds with nanosecond precision, e.g. 1234.567. */
static void json_ts(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

int json_print(struct json_trace *j, FILE *out, char *const files[], int nfiles)
{
	int64_t base;
	size_t i;
	int k, err;

	/* no rows: rows is NULL, which qsort must not be given */
	if (j->n)
		qsort(j->rows, j->n, sizeof(*j->rows), jrow_time_cmp);
	base = j->n ? j->rows[0].time : 0;
	fputs("{\"traceEvents\":[\n", out);
	err = json_metadata(out, j);
	if (err)
		return err;
	for (i = 0; i < j->n; i++) {
		fputs("{\"ts\":", out);
		json_ts(out, (uint64_t)j->rows[i].time - (uint64_t)base);
		fprintf(out, ",%s%s\n", j->rows[i].text, i + 1 < j->n ? "," : "");
	}
	fputs("],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"source\":\"tnfdump\","
	      "\"ts_base_ns\":",
	      out);
	json_int(out, base);
	fputs(",\"files\":[", out);
	for (k = 0; k < nfiles; k++) {
		if (k)
			fputc(',', out);
		json_cstring(out, files[k]);
	}
	fputs("]}}\n", out);
	return 0;
}
