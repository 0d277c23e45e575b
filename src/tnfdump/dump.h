/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dump.h - tnfdump internals: value formatting (value.c), raw output
 * (raw.c), cooked output and the event table (cooked.c), exports (json.c,
 * ctf.c).
 */
#ifndef TNFDUMP_DUMP_H
#define TNFDUMP_DUMP_H

#include <stdbool.h>
#include <stdio.h>

#include "../libtnf/tnf.h"

/* Nesting limit for records printed inside records (cooked output). */
#define DUMP_MAX_NEST 8

/* value.c: the formats of the original tnfdump */
int dump_scalar(FILE *out, struct tnf_file *f, struct tnf_datum d, bool hex);
/* A brief value: NULL, scalar, type name, "string" or <type>.  With
 * @offset, a record is prefixed by its file offset (raw output). */
int dump_brief(FILE *out, struct tnf_file *f, struct tnf_datum d, bool hex, bool offset);

/* raw.c: one record as "0x<off>: { slots }" */
int raw_record(FILE *out, struct tnf_file *f, struct tnf_datum rec, bool hex);

/* cooked.c */
struct event_table;
struct event_table *table_new(void);
void table_free(struct event_table *t);
/* A probe description prints its line now; an event joins the table. */
int cooked_record(struct event_table *t, FILE *out, struct tnf_file *f, struct tnf_datum rec,
		  bool hex);
/* The events in @t so far. */
size_t table_len(const struct event_table *t);
/* The header and the events sorted by time (nothing if there are none). */
void cooked_print(struct event_table *t, FILE *out);
/*
 * The reads cooked_record() does for @rec, without output: <0 the file is
 * bad from @rec on, 0 not an event, 1 an event (*ev filled).
 */
int cooked_check(struct tnf_file *f, struct tnf_datum rec, struct tnf_event *ev);
/* One value as the cooked output prints it after "slot: ". */
int cooked_value(FILE *out, struct tnf_file *f, struct tnf_datum d);

/* json.c: --format=json, Chrome trace-event JSON of the events */
struct json_trace;
struct json_trace *json_new(void);
void json_free(struct json_trace *j);
/*
 * An event cooked_check() accepted joins the trace.  A value libtnf cannot
 * read is null: only -TNF_ERR_NOMEM fails.
 */
int json_event(struct json_trace *j, struct tnf_file *f, const struct tnf_event *ev);
/* After each file's events: schedule records are known by offset. */
void json_file_end(struct json_trace *j);
/* Metadata, then the events sorted by time; @files go to otherData. */
int json_print(struct json_trace *j, FILE *out, char *const files[], int nfiles);

/* ctf.c: --format=ctf DIR, a CTF 1.8 trace of the events */
struct ctf_trace;
/* Creates @dir (0700) or takes an empty one; reports why not on stderr. */
int ctf_new(const char *dir, struct ctf_trace **out);
void ctf_free(struct ctf_trace *c);
/*
 * An event cooked_check() accepted joins the trace.  A field whose type or
 * value libtnf cannot read is degraded (null, text or zero): only
 * -TNF_ERR_NOMEM fails.
 */
int ctf_event(struct ctf_trace *c, struct tnf_file *f, const struct tnf_event *ev);
/* Before the file ctf_event() read is closed (forgets its types). */
void ctf_file_end(struct ctf_trace *c);
/* Writes the metadata and stream files; 0, or 1 after a message. */
int ctf_write(struct ctf_trace *c);

#endif /* TNFDUMP_DUMP_H */
