// SPDX-License-Identifier: BSD-2-Clause
/*
 * main.c - tnfdump [-r] [-x] FILE...: print TNF trace files, cooked (probe
 * lines, then the events of all files sorted by time) or raw (-r: every
 * record in file order).  --format=json prints the events as Chrome
 * trace-event JSON (json.c); --format=ctf DIR FILE... writes them as a
 * CTF trace into DIR (ctf.c).  A file that cannot be read is reported as
 * "tnfdump: FILE: reason" and makes the exit status 1; the other files
 * are still printed.  An all-zero file (a buffer never written) is only
 * reported.  A file whose writer counted events it lost (our libtnfprobe)
 * gets one line on stderr after the output, so that an incomplete trace
 * does not look complete; the exit status does not change.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"

enum format {
	FMT_TEXT,
	FMT_JSON,
	FMT_CTF
};

struct options {
	bool raw;
	bool hex;
	enum format format;
	struct event_table *table; /* FMT_TEXT */
	struct json_trace *json;   /* FMT_JSON */
	struct ctf_trace *ctf;	   /* FMT_CTF */
};

/* Drop counts of the files, reported once everything is printed. */
struct drop_note {
	const char *path;
	struct tnf_drops drops;
	uint64_t over; /* data blocks written over (the ring wrapped) */
};

static struct drop_note *notes;
static int nnotes;

static void note_drops(const char *path, struct tnf_file *f)
{
	struct tnf_drops d;

	uint64_t over = 0;

	if ((tnf_writer_drops(f, &d) != 1 || d.total == 0) &&
	    (tnf_writer_wrapped(f, &over) != 1 || !over))
		return;
	tnf_writer_wrapped(f, &over);
	notes[nnotes].path = path;
	notes[nnotes].drops = d;
	notes[nnotes].over = over;
	nnotes++;
}

/* "tnfdump: FILE: N events were dropped by the writer (reason: n, ...)" */
static void report_drops(void)
{
	const struct tnf_drops *d;
	const char *name, *sep;
	unsigned r;
	int i;

	for (i = 0; i < nnotes; i++) {
		d = &notes[i].drops;
		if (notes[i].over)
			fprintf(stderr,
				"tnfdump: %s: the trace wrapped: its oldest events were written "
				"over "
				"(%llu blocks; a larger buffer keeps more)\n",
				notes[i].path, (unsigned long long)notes[i].over);
		if (!d->total)
			continue;
		fprintf(stderr, "tnfdump: %s: %u %s dropped by the writer", notes[i].path, d->total,
			d->total == 1 ? "event was" : "events were");
		sep = " (";
		for (r = 0; r < TNF_DROP_REASONS; r++) {
			if (!d->by_reason[r])
				continue;
			name = tnf_drop_reason(r);
			fprintf(stderr, "%s%s: %u", sep, name ? name : "other", d->by_reason[r]);
			sep = ", ";
		}
		fputs(*sep == ',' ? ")\n" : "\n", stderr);
	}
}

static void usage(FILE *out)
{
	fputs("Usage: tnfdump [-r] [-x] <tnf_file> [<tnf_file> ...]\n"
	      "       tnfdump --format=json <tnf_file> [<tnf_file> ...]\n"
	      "       tnfdump --format=ctf <dir> <tnf_file> [<tnf_file> ...]\n"
	      "  -r, --raw   print every record in file order\n"
	      "  -x, --hex   print unsigned values in hexadecimal\n"
	      "  -f, --format=text|json|ctf\n"
	      "              text: the Solaris layout (default); json: Chrome\n"
	      "              trace-event JSON on stdout; ctf: a CTF 1.8 trace\n"
	      "              written into <dir> (created; must be empty)\n",
	      out);
}

static void file_error(const char *path, int err, struct tnf_file *f)
{
	if (-err == TNF_ERR_IO)
		fprintf(stderr, "tnfdump: %s: %s\n", path, strerror(errno));
	else if (f && tnf_error_offset(f))
		fprintf(stderr, "tnfdump: %s: %s at offset 0x%x\n", path, tnf_strerror(err),
			tnf_error_offset(f));
	else
		fprintf(stderr, "tnfdump: %s: %s\n", path, tnf_strerror(err));
}

/* Print one record raw, all or nothing (a failure leaves no half record). */
static int raw_one(struct tnf_file *f, struct tnf_datum rec, bool hex)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int err;

	m = open_memstream(&buf, &len);
	if (!m)
		return -TNF_ERR_NOMEM;
	err = raw_record(m, f, rec, hex);
	if (fclose(m) && !err)
		err = -TNF_ERR_NOMEM;
	if (!err)
		fwrite(buf, 1, len, stdout);
	free(buf);
	return err;
}

/* Returns 0, or a negative error that makes the file bad. */
static int one_record(const struct options *o, struct tnf_file *f, struct tnf_datum rec)
{
	if (o->raw)
		return raw_one(f, rec, o->hex);
	return cooked_record(o->table, stdout, f, rec, o->hex);
}

/* Said in every format alike (-r prints the records there are). */
static void no_events(const char *path)
{
	/* the USDT file of a probe enabled and never hit printed nothing at all */
	fprintf(stderr, "tnfdump: %s has no events\n", path);
}

static int export_event(const struct options *o, struct tnf_file *f, const struct tnf_event *ev)
{
	if (o->format == FMT_JSON)
		return json_event(o->json, f, ev);
	return ctf_event(o->ctf, f, ev);
}

/*
 * An export: cooked_check() walks the whole file first, as the text output
 * would, and alone decides which events exist and whether the file is bad,
 * so every format agrees.  The error is reported before the events are
 * rendered: rendering reads more (arrays, declared slot types), and a
 * failure there, though only degrading a value, would move
 * tnf_error_offset() and change the message.
 */
static int export_file(const char *path, const struct options *o, struct tnf_file *f)
{
	struct tnf_datum rec = {0, NULL};
	struct tnf_event *evs = NULL, *v;
	size_t n = 0, cap = 0, i;
	int err, bad;

	while ((err = tnf_record_next(f, &rec)) > 0) {
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(evs, cap * sizeof(*evs));
			if (!v) {
				err = -TNF_ERR_NOMEM;
				break;
			}
			evs = v;
		}
		err = cooked_check(f, rec, &evs[n]);
		if (err < 0)
			break;
		n += (size_t)err;
	}
	bad = err != 0;
	if (bad)
		file_error(path, err, f);
	else if (!n)
		no_events(path);
	for (i = 0; i < n; i++) {
		err = export_event(o, f, &evs[i]);
		if (err) {
			/* only out of memory: the rest of the file is lost */
			if (!bad)
				file_error(path, err, NULL);
			bad = 1;
			break;
		}
	}
	free(evs);
	return bad;
}

static int dump_file(const char *path, const struct options *o)
{
	struct tnf_datum rec = {0, NULL};
	struct tnf_file *f;
	size_t before;
	int err;

	err = tnf_open(path, &f);
	if (err == -TNF_ERR_ALLZERO) {
		fprintf(stderr, "tnfdump: %s is an empty TNF file\n", path);
		return 0;
	}
	if (err) {
		file_error(path, err, NULL);
		return 1;
	}
	note_drops(path, f);
	if (o->format != FMT_TEXT) {
		err = export_file(path, o, f);
		if (o->format == FMT_CTF)
			ctf_file_end(o->ctf);
		else
			json_file_end(o->json);
		tnf_close(f);
		return err;
	}
	before = o->raw ? 0 : table_len(o->table);
	while ((err = tnf_record_next(f, &rec)) > 0) {
		err = one_record(o, f, rec);
		if (err)
			break;
	}
	if (err)
		file_error(path, err, f);
	else if (!o->raw && table_len(o->table) == before)
		no_events(path);
	tnf_close(f);
	return err ? 1 : 0;
}

static int parse_format(const char *name, enum format *fmt)
{
	if (!strcmp(name, "text"))
		*fmt = FMT_TEXT;
	else if (!strcmp(name, "json"))
		*fmt = FMT_JSON;
	else if (!strcmp(name, "ctf"))
		*fmt = FMT_CTF;
	else {
		fprintf(stderr, "tnfdump: unknown format \"%s\"\n", name);
		usage(stderr);
		return 2;
	}
	return 0;
}

/* Prints or writes what the files gave; returns 0 or 1 (reported). */
static int finish(struct options *o, char *const files[], int nfiles)
{
	int status = 0;

	if (o->format == FMT_TEXT) {
		if (!o->raw)
			cooked_print(o->table, stdout);
		table_free(o->table);
	} else if (o->format == FMT_JSON) {
		if (json_print(o->json, stdout, files, nfiles)) {
			fputs("tnfdump: out of memory\n", stderr);
			status = 1;
		}
		json_free(o->json);
	} else {
		status = ctf_write(o->ctf);
		ctf_free(o->ctf);
	}
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"raw", no_argument, NULL, 'r'},
		{"hex", no_argument, NULL, 'x'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct options o = {false, false, FMT_TEXT, NULL, NULL, NULL};
	int c, i, status = 0;

	while ((c = getopt_long(argc, argv, "rxf:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o.raw = true;
			break;
		case 'x':
			o.hex = true;
			break;
		case 'f':
			if (parse_format(optarg, &o.format))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* the exports have no raw form; ctf takes DIR before the files */
	if ((o.raw && o.format != FMT_TEXT) || optind + (o.format == FMT_CTF) >= argc) {
		usage(stderr);
		return 2;
	}
	if (o.format == FMT_CTF && ctf_new(argv[optind++], &o.ctf))
		return 1;
	if (o.format == FMT_TEXT)
		o.table = table_new();
	else if (o.format == FMT_JSON)
		o.json = json_new();
	notes = calloc((size_t)(argc - optind), sizeof(*notes));
	if ((o.format == FMT_TEXT && !o.table) || (o.format == FMT_JSON && !o.json) || !notes) {
		fputs("tnfdump: out of memory\n", stderr);
		return 1;
	}
	for (i = optind; i < argc; i++)
		status |= dump_file(argv[i], &o);
	status |= finish(&o, argv + optind, argc - optind);
	if (fflush(stdout)) {
		fprintf(stderr, "tnfdump: write error: %s\n", strerror(errno));
		status = 1;
	}
	report_drops();
	free(notes);
	return status;
}
