// SPDX-License-Identifier: BSD-2-Clause
/*
 * raw.c - tnfdump -r: a record with its offset, one line per slot (the
 * tag arg after the first), then array elements by index or a string's
 * chars.
 */
#include "dump.h"

static int raw_slots(FILE *out, struct tnf_file *f, struct tnf_datum rec, bool hex)
{
	struct tnf_datum v;
	unsigned i, n = tnf_slot_count(rec);
	int err;

	for (i = 0; i < n; i++) {
		err = tnf_slot_get(f, rec, i, &v);
		if (err)
			return err;
		fprintf(out, "%24s ", tnf_slot_name(rec, i));
		err = dump_brief(out, f, v, hex, true);
		if (err)
			return err;
		fputc('\n', out);
		if (i == 0) {
			err = tnf_tag_arg(f, rec, &v);
			if (err)
				return err;
			if (v.off) {
				fprintf(out, "%24s ", "tnf_tag_arg");
				err = dump_brief(out, f, v, hex, true);
				if (err)
					return err;
				fputc('\n', out);
			}
		}
	}
	return 0;
}

static int raw_elements(FILE *out, struct tnf_file *f, struct tnf_datum rec, bool hex)
{
	struct tnf_datum v;
	const char *s;
	unsigned i, n;
	size_t len;
	int err;

	if (tnf_datum_kind(rec) == TNF_K_STRING) {
		s = tnf_get_chars(f, rec, &len);
		if (!s)
			return -TNF_ERR_BADRECORD;
		fprintf(out, "%24s \"%.*s\"\n", "chars", (int)len, s);
		return 0;
	}
	n = tnf_element_count(f, rec);
	for (i = 0; i < n; i++) {
		err = tnf_element_get(f, rec, i, &v);
		if (err)
			return err;
		fprintf(out, "%24u ", i);
		err = dump_brief(out, f, v, hex, true);
		if (err)
			return err;
		fputc('\n', out);
	}
	return 0;
}

int raw_record(FILE *out, struct tnf_file *f, struct tnf_datum rec, bool hex)
{
	int err;

	fprintf(out, "0x%-8x: {\n", rec.off);
	err = raw_slots(out, f, rec, hex);
	if (!err && (tnf_datum_kind(rec) == TNF_K_ARRAY || tnf_datum_kind(rec) == TNF_K_STRING))
		err = raw_elements(out, f, rec, hex);
	if (err)
		return err;
	fputs("\t}\n", out);
	return 0;
}
