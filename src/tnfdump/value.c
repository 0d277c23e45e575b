// SPDX-License-Identifier: BSD-2-Clause
/*
 * value.c - how tnfdump prints one value: scalars (signed in decimal,
 * unsigned in decimal or, with -x, hex; opaque always hex), references
 * (type name, quoted string, <type>) and NULL.
 */
#include <inttypes.h>

#include "dump.h"

int dump_scalar(FILE *out, struct tnf_file *f, struct tnf_datum d, bool hex)
{
	bool opaque = tnf_type_props(d.type) & TNF_PROP_OPAQUE;
	enum tnf_kind k = tnf_datum_kind(d);
	int64_t v = 0;
	double x;
	int err;

	if (k == TNF_K_FLOAT32 || k == TNF_K_FLOAT64) {
		err = tnf_get_float(f, d, &x);
		if (err)
			return err;
		fprintf(out, "%f", x);
		return 0;
	}
	if (k == TNF_K_SCALAR) {
		fputs("unhandled scalar", out);
		return 0;
	}
	err = tnf_get_int(f, d, &v);
	if (err)
		return err;
	switch (k) {
	case TNF_K_CHAR:
		fputc((int)(uint8_t)v, out);
		break;
	case TNF_K_INT8:
	case TNF_K_INT16:
	case TNF_K_INT32:
	case TNF_K_INT64:
		fprintf(out, "%" PRId64, v);
		break;
	case TNF_K_UINT8:
	case TNF_K_UINT16:
		fprintf(out, hex ? "0x%" PRIx64 : "%" PRIu64, (uint64_t)v);
		break;
	default: /* UINT32, UINT64 */
		fprintf(out, hex || opaque ? "0x%" PRIx64 : "%" PRIu64, (uint64_t)v);
		break;
	}
	return 0;
}

int dump_brief(FILE *out, struct tnf_file *f, struct tnf_datum d, bool hex, bool offset)
{
	const struct tnf_type *t;
	const char *s;
	size_t len;
	int err;

	if (!d.off) {
		fprintf(out, "0x%-8x <NULL>", 0);
		return 0;
	}
	if (tnf_type_props(d.type) & TNF_PROP_SCALAR)
		return dump_scalar(out, f, d, hex);
	if (!(tnf_type_props(d.type) & TNF_PROP_TAGGED)) {
		fprintf(out, "<inline %s>", tnf_datum_type_name(d));
		return 0;
	}
	if (offset)
		fprintf(out, "0x%-8x ", d.off);
	switch (tnf_datum_kind(d)) {
	case TNF_K_TYPE:
		err = tnf_type_of_record(f, d, &t);
		if (err)
			return err;
		fputs(tnf_type_name(t), out);
		break;
	case TNF_K_STRING:
		s = tnf_get_chars(f, d, &len);
		if (!s)
			return -TNF_ERR_BADRECORD;
		fprintf(out, "\"%.*s\"", (int)len, s);
		break;
	default:
		fprintf(out, "<%s>", tnf_datum_type_name(d));
	}
	return 0;
}
