// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_tnf - libFuzzer target for the libtnf reader and tnfdump's renderers.
 *
 * One input is one trace file.  It is opened with tnf_open_mem(), every
 * record is walked with tnf_record_next(), and each record is taken apart
 * through the whole reader API (size, tag arg, event, type, slots,
 * elements, scalars, chars, nested records to a bounded depth).  Then the
 * same records go through the tnfdump renderers exactly as tnfdump drives
 * them: raw (-r, -x), cooked (table + print), json (+ print), and ctf
 * (records, file end, write into a scratch directory, emptied again).
 * Output goes to /dev/null.  Build: make fuzz (build/fuzz/fuzz_tnf).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/tnfdump/dump.h"

#define MAX_DEPTH   3
#define MAX_SLOTS   32
#define MAX_ELEMS   16
#define MAX_RECORDS 4096
#define MAX_VISITS  3000  /* datums taken apart per input: type graphs fan out */

static FILE *devnull;
static char ctfdir[64];

static volatile uint64_t sink; /* keeps the reads from being optimised away */
static unsigned visits;

static void take_apart(struct tnf_file *f, struct tnf_datum d, int depth)
{
	const struct tnf_type *t = d.type, *rt;
	struct tnf_datum v;
	unsigned i, n;
	int64_t iv;
	double fv;
	size_t len;
	const char *s;

	if (!d.off || !t || depth > MAX_DEPTH || visits++ > MAX_VISITS)
		return;
	sink += tnf_type_kind(t) + tnf_type_props(t) + tnf_type_size(t) + tnf_type_offset(t);
	sink += strlen(tnf_type_name(t)) + strlen(tnf_datum_type_name(d));
	if (tnf_type_meta(t))
		sink += strlen(tnf_type_name(tnf_type_meta(t)));
	sink += tnf_record_size(f, d);
	if (!tnf_get_int(f, d, &iv))
		sink += (uint64_t)iv;
	if (!tnf_get_float(f, d, &fv))
		sink += (uint64_t)(fv == fv);
	s = tnf_get_chars(f, d, &len);
	if (s && len)
		sink += (unsigned char)s[len - 1];
	if (tnf_datum_kind(d) == TNF_K_TYPE && !tnf_type_of_record(f, d, &rt))
		sink += strlen(tnf_type_name(rt));
	n = tnf_slot_count(d);
	for (i = 0; i < n && i < MAX_SLOTS; i++) {
		const char *name = tnf_slot_name(d, i);

		if (name)
			sink += (unsigned)tnf_slot_index(d, name);
		if (!tnf_slot_get(f, d, i, &v))
			take_apart(f, v, depth + 1);
	}
	sink += (unsigned)tnf_slot_index(d, "tnf_tag");
	n = tnf_element_count(f, d);
	for (i = 0; i < n && i < MAX_ELEMS; i++)
		if (!tnf_element_get(f, d, i, &v))
			take_apart(f, v, depth + 1);
	if (!tnf_slot_named(f, d, "time_delta", &v) && !tnf_get_int_named(f, d, "time_delta", &iv))
		sink += (uint64_t)iv;
}

static void walk(struct tnf_file *f)
{
	struct tnf_datum rec = {0, NULL}, tag;
	struct tnf_event ev;
	struct tnf_drops drops;
	uint32_t target;
	int n = 0;

	sink += tnf_file_info(f)->used_size + tnf_error_offset(f);
	if (tnf_writer_drops(f, &drops) == 1)
		sink += drops.total;
	while (n++ < MAX_RECORDS && tnf_record_next(f, &rec) > 0) {
		if (!tnf_tag_arg(f, rec, &tag))
			take_apart(f, tag, MAX_DEPTH);
		if (tnf_event_get(f, rec, &ev) == 1)
			sink += (uint64_t)ev.time + ev.tid + ev.pid + strlen(ev.probe_name);
		sink += (unsigned)tnf_is_probe_type(rec);
		if (!tnf_resolve(f, rec.off, &target))
			sink += target;
		(void)tnf_record_at(f, rec.off, &tag);
		take_apart(f, rec, 0);
	}
}

static void empty_ctfdir(void)
{
	DIR *d = opendir(ctfdir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

/* The renderers, as tnfdump's dump_file() and export_file() drive them (one file). */
static void render(const void *data, size_t size)
{
	struct event_table *table = table_new();
	struct json_trace *json = json_new();
	struct ctf_trace *ctf = NULL;
	struct tnf_datum rec = {0, NULL};
	struct tnf_event evs[64];
	struct tnf_file *f;
	char *files[] = {"fuzz.tnf"};
	bool raw_ok = true, cooked_ok = true, check_ok = true;
	size_t nev = 0, i;
	int n = 0, err;

	if (ctf_new(ctfdir, &ctf))
		ctf = NULL;
	if (!table || !json || tnf_open_mem(data, size, &f))
		goto out;
	while (n++ < MAX_RECORDS && tnf_record_next(f, &rec) > 0) {
		if (raw_ok)
			raw_ok = !raw_record(devnull, f, rec, n & 1);
		if (cooked_ok)
			cooked_ok = !cooked_record(table, devnull, f, rec, n & 2);
		if (check_ok && nev < sizeof(evs) / sizeof(evs[0])) {
			err = cooked_check(f, rec, &evs[nev]);
			check_ok = err >= 0;
			if (err > 0)
				nev++;
		}
	}
	for (i = 0; i < nev; i++) {
		json_event(json, f, &evs[i]);
		if (ctf)
			ctf_event(ctf, f, &evs[i]);
		cooked_value(devnull, f, evs[i].record);
	}
	if (ctf)
		ctf_file_end(ctf);
	tnf_close(f);
	cooked_print(table, devnull);
	json_print(json, devnull, files, 1);
	if (ctf)
		ctf_write(ctf);
out:
	table_free(table);
	json_free(json);
	ctf_free(ctf);
	empty_ctfdir();
}

static void remove_ctfdir(void)
{
	empty_ctfdir();
	rmdir(ctfdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	snprintf(ctfdir, sizeof(ctfdir), "/tmp/fuzz_tnf_ctf.%d", (int)getpid());
	atexit(remove_ctfdir);
	/* tnfdump's own complaints (ctf) are noise here */
	if (!getenv("FUZZ_VERBOSE")) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tnf_file *f;

	visits = 0;
	if (tnf_open_mem(data, size, &f) == 0) {
		walk(f);
		tnf_close(f);
	}
	render(data, size);
	return 0;
}
