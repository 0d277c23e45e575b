/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dump.h - tnfdump internals: value formatting (value.c), raw output
 * (raw.c), cooked output and the event table (cooked.c).
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
/* The header and the events sorted by time (nothing if there are none). */
void cooked_print(struct event_table *t, FILE *out);

#endif /* TNFDUMP_DUMP_H */
