// SPDX-License-Identifier: BSD-2-Clause
/*
 * cooked.c - tnfdump's default output: a line per probe description as it
 * is met, then a table of every event of every file, sorted by absolute
 * time (stable), with elapsed and delta milliseconds, PID, LWPID, TID,
 * CPU, the probe name and its argument slots.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"

struct row {
	int64_t time;
	size_t seq; /* insertion order: equal times keep it */
	uint64_t tid;
	uint32_t pid;
	uint32_t lwpid;
	int kernel;
	int cpuid;
	char *text; /* " <probe name padded> slot: value ..." */
};

struct event_table {
	struct row *rows;
	size_t n;
	size_t cap;
};

struct event_table *table_new(void)
{
	return calloc(1, sizeof(struct event_table));
}

void table_free(struct event_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->rows[i].text);
	free(t->rows);
	free(t);
}

static int target(FILE *out, struct tnf_file *f, struct tnf_datum d, bool hex, int depth);

/* A struct record inside an event: "{ type: <tag> slot: value ... }". */
static int nested_struct(FILE *out, struct tnf_file *f, struct tnf_datum d, bool hex, int depth)
{
	struct tnf_datum v;
	unsigned i, n = tnf_slot_count(d);
	int tag = tnf_slot_index(d, "tnf_tag"), err;

	fputs("{ type: ", out);
	if (tag >= 0) {
		err = tnf_slot_get(f, d, (unsigned)tag, &v);
		if (!err)
			err = dump_brief(out, f, v, hex, false);
		if (err)
			return err;
	}
	for (i = 0; i < n; i++) {
		if ((int)i == tag)
			continue;
		fprintf(out, " %s: ", tnf_slot_name(d, i));
		err = tnf_slot_get(f, d, i, &v);
		if (!err)
			err = target(out, f, v, hex, depth + 1);
		if (err)
			return err;
	}
	fputs(" }", out);
	return 0;
}

static int target(FILE *out, struct tnf_file *f, struct tnf_datum d, bool hex, int depth)
{
	if (d.off && tnf_datum_kind(d) == TNF_K_STRUCT &&
	    (tnf_type_props(d.type) & TNF_PROP_TAGGED)) {
		if (depth >= DUMP_MAX_NEST) {
			fputs("{ ... }", out);
			return 0;
		}
		return nested_struct(out, f, d, hex, depth);
	}
	return dump_brief(out, f, d, hex, false);
}

static bool probe_slot_hidden(const char *name)
{
	static const char *const hidden[] = {"tnf_tag", "tnf_properties", "tnf_slot_types",
					     "tnf_type_size", "tnf_slot_names"};
	size_t i;

	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (!strcmp(name, hidden[i]))
			return true;
	return false;
}

static int probe_line(FILE *out, struct tnf_file *f, struct tnf_datum rec, bool hex)
{
	struct tnf_datum v;
	unsigned i, n = tnf_slot_count(rec);
	int err;

	fputs("probe\t", out);
	for (i = 0; i < n; i++) {
		if (probe_slot_hidden(tnf_slot_name(rec, i)))
			continue;
		fprintf(out, " %s: ", tnf_slot_name(rec, i));
		err = tnf_slot_get(f, rec, i, &v);
		if (!err)
			err = dump_brief(out, f, v, hex, false);
		if (err)
			return err;
	}
	fputc('\n', out);
	return 0;
}

static int event_text(struct tnf_file *f, const struct tnf_event *ev, bool hex, char **text)
{
	struct tnf_datum v;
	unsigned i, n = tnf_slot_count(ev->record);
	size_t len;
	FILE *out;
	int err = 0;

	out = open_memstream(text, &len);
	if (!out)
		return -TNF_ERR_NOMEM;
	fprintf(out, " %-25s", ev->probe_name);
	for (i = ev->first_arg; !err && i < n; i++) {
		fprintf(out, " %s: ", tnf_slot_name(ev->record, i));
		err = tnf_slot_get(f, ev->record, i, &v);
		if (!err)
			err = target(out, f, v, hex, 0);
	}
	if (fclose(out) && !err)
		err = -TNF_ERR_NOMEM;
	if (err) {
		free(*text);
		*text = NULL;
	}
	return err;
}

static int add_event(struct event_table *t, struct tnf_file *f, const struct tnf_event *ev,
		     bool hex)
{
	struct row *r;
	int err;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;

		r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			return -TNF_ERR_NOMEM;
		t->rows = r;
		t->cap = cap;
	}
	r = &t->rows[t->n];
	err = event_text(f, ev, hex, &r->text);
	if (err)
		return err;
	r->time = ev->time;
	r->seq = t->n;
	r->tid = ev->tid;
	r->pid = ev->pid;
	r->lwpid = ev->lwpid;
	r->kernel = ev->kernel;
	r->cpuid = ev->cpuid;
	t->n++;
	return 0;
}

int cooked_record(struct event_table *t, FILE *out, struct tnf_file *f, struct tnf_datum rec,
		  bool hex)
{
	struct tnf_event ev;
	int err;

	if (tnf_is_probe_type(rec))
		return probe_line(out, f, rec, hex);
	err = tnf_event_get(f, rec, &ev);
	if (err <= 0)
		return err;
	return add_event(t, f, &ev, hex);
}

/*
 * The judgement every format shares: the exports run exactly the reads the
 * text output does, so a file is bad (and from which record on) whatever
 * the format.  The text is thrown away; hex only changes how numbers look.
 */
int cooked_check(struct tnf_file *f, struct tnf_datum rec, struct tnf_event *ev)
{
	char *text = NULL;
	size_t len;
	FILE *sink;
	int err;

	if (tnf_is_probe_type(rec)) {
		sink = open_memstream(&text, &len);
		if (!sink)
			return -TNF_ERR_NOMEM;
		err = probe_line(sink, f, rec, false);
		if (fclose(sink) && !err)
			err = -TNF_ERR_NOMEM;
		free(text);
		return err;
	}
	err = tnf_event_get(f, rec, ev);
	if (err <= 0)
		return err;
	err = event_text(f, ev, false, &text);
	free(text);
	return err ? err : 1;
}

int cooked_value(FILE *out, struct tnf_file *f, struct tnf_datum d)
{
	return target(out, f, d, false, 0);
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void header(FILE *out)
{
	static const char fmt[] = "%16s %16s %5s %5s %10s %3s %-25s %s\n";

	fprintf(out, fmt, "----------------", "----------------", "-----", "-----", "----------",
		"---", "-------------------------", "------------------------");
	fprintf(out, fmt, "Elapsed (ms)", "Delta (ms)", "PID", "LWPID", "   TID    ", "CPU",
		"Probe Name", "Data / Description . . .");
	fprintf(out, fmt, "----------------", "----------------", "-----", "-----", "----------",
		"---", "-------------------------", "------------------------");
}

size_t table_len(const struct event_table *t)
{
	return t->n;
}

void cooked_print(struct event_table *t, FILE *out)
{
	int64_t base, now, last = 0;
	size_t i;

	if (!t->n)
		return;
	qsort(t->rows, t->n, sizeof(*t->rows), row_cmp);
	header(out);
	base = t->rows[0].time;
	for (i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];

		now = (int64_t)((uint64_t)r->time - (uint64_t)base);
		if (r->kernel)
			fprintf(out, "%16.6f %16.6f %5u %5u 0x%-8llx %3d", now / 1000000.0,
				(double)(now - last) / 1000000.0, r->pid, r->lwpid,
				(unsigned long long)r->tid, r->cpuid);
		else
			fprintf(out, "%16.6f %16.6f %5u %5u %10llu %3s", now / 1000000.0,
				(double)(now - last) / 1000000.0, r->pid, r->lwpid,
				(unsigned long long)r->tid, "-");
		fprintf(out, "%s\n", r->text);
		last = now;
	}
}
