// SPDX-License-Identifier: BSD-2-Clause
/*
 * record.c - records in file order, and the values inside them: slots,
 * scalars, arrays and strings.
 */
#include <string.h>

#include "tnf_impl.h"

int tnf_datum_for(struct tnf_file *f, uint32_t rec, struct tnf_datum *out)
{
	const struct tnf_type *t;
	int err;

	err = tnf_record_type(f, rec, &t);
	if (err)
		return err;
	out->off = rec;
	out->type = t;
	return 0;
}

int tnf_record_at(struct tnf_file *f, uint32_t off, struct tnf_datum *rec)
{
	if (off == 0)
		return -TNF_ERR_INVAL;
	return tnf_datum_for(f, off, rec);
}

uint32_t tnf_record_size(struct tnf_file *f, struct tnf_datum d)
{
	uint32_t v;

	if (!d.type)
		return 0;
	if (d.type->size != TNF_SIZE_SELF)
		return d.type->size;
	if (!tnf_rd32(f, (uint64_t)d.off + 4, &v))
		return 0;
	return v;
}

/* A record must have a size and stay inside its block (or block 0). */
static int checked_record(struct tnf_file *f, uint32_t off, struct tnf_datum *out)
{
	uint32_t size, lim;
	int err;

	err = tnf_datum_for(f, off, out);
	if (err)
		return err;
	if (out->type->kind != TNF_K_STRUCT && out->type->kind != TNF_K_TYPE &&
	    out->type->kind != TNF_K_ARRAY && out->type->kind != TNF_K_STRING)
		return tnf_set_err(f, TNF_ERR_BADRECORD, off);
	size = tnf_record_size(f, *out);
	if (off < f->data_start)
		lim = f->info.block_size;
	else
		lim = (off & ~(f->info.block_size - 1)) + f->info.block_size;
	if (size < 4 || size > lim - off)
		return tnf_set_err(f, TNF_ERR_BADRECORD, off);
	return 0;
}

/* The first used block at or after @blk: 1 with *rec, 0 at the end. */
static int next_block(struct tnf_file *f, uint64_t blk, struct tnf_datum *rec)
{
	uint32_t v;
	int err;

	for (; blk + f->info.block_size <= f->end; blk += f->info.block_size) {
		if (!tnf_rd32(f, blk, &v))
			break;
		if (v == 0)
			continue;
		err = checked_record(f, (uint32_t)blk, rec);
		return err ? err : 1;
	}
	return 0;
}

int tnf_record_next(struct tnf_file *f, struct tnf_datum *rec)
{
	struct tnf_datum d;
	uint32_t bv, v, size, blk, nval;
	uint16_t bv16;
	int err;

	if (!f || !rec)
		return -TNF_ERR_INVAL;
	if (rec->off == 0) {
		err = checked_record(f, 4, &d);
		if (err)
			return err;
		*rec = d;
		return 1;
	}
	size = tnf_record_size(f, *rec);
	if (size < 4)
		return tnf_set_err(f, TNF_ERR_BADRECORD, rec->off);
	if (rec->off < f->data_start) {
		err = next_block(f, f->data_start, &d);
		goto out;
	}
	blk = rec->off & ~(f->info.block_size - 1);
	nval = rec->off + ((size + 3) & ~3u);
	if (f->bv_size == 2) {
		if (!tnf_rd16(f, (uint64_t)blk + f->bv_off, &bv16))
			return tnf_set_err(f, TNF_ERR_BADRECORD, blk);
		bv = bv16;
	} else if (!tnf_rd32(f, (uint64_t)blk + f->bv_off, &bv)) {
		return tnf_set_err(f, TNF_ERR_BADRECORD, blk);
	}
	if (bv > f->info.block_size)
		return tnf_set_err(f, TNF_ERR_BADRECORD, blk);
	/* the next record in this block: skip forwarding words */
	while ((uint64_t)nval + 4 <= (uint64_t)blk + bv) {
		if (!tnf_rd32(f, nval, &v))
			return tnf_set_err(f, TNF_ERR_BADRECORD, nval);
		if ((v & REF_KIND_MASK) == REF_FWD) {
			nval += 4;
			continue;
		}
		if ((v & REF_KIND_MASK) == REF_RSVD)
			return tnf_set_err(f, TNF_ERR_BADRECORD, nval);
		err = checked_record(f, nval, &d);
		if (err)
			return err;
		*rec = d;
		return 1;
	}
	err = next_block(f, (uint64_t)blk + f->info.block_size, &d);
out:
	if (err == 1)
		*rec = d;
	return err;
}

enum tnf_kind tnf_datum_kind(struct tnf_datum d)
{
	return d.type ? d.type->kind : TNF_K_UNKNOWN;
}

const char *tnf_datum_type_name(struct tnf_datum d)
{
	return tnf_type_name(d.type);
}

/* The slots of @d's type, or NULL (scalars, NULL datum). */
static const struct tnf_slot *slots_of(struct tnf_datum d, unsigned *n)
{
	const struct tnf_type *l;

	*n = 0;
	if (!d.type || d.type->kind < TNF_K_ARRAY)
		return NULL;
	l = tnf_layout(d.type);
	if (!l->slots_done)
		return NULL;
	*n = l->nslots;
	return l->slots;
}

unsigned tnf_slot_count(struct tnf_datum d)
{
	unsigned n;

	slots_of(d, &n);
	return n;
}

const char *tnf_slot_name(struct tnf_datum d, unsigned i)
{
	const struct tnf_slot *s;
	unsigned n;

	s = slots_of(d, &n);
	return i < n ? s[i].name : NULL;
}

int tnf_slot_index(struct tnf_datum d, const char *name)
{
	const struct tnf_slot *s;
	unsigned i, n;

	s = slots_of(d, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return (int)i;
	for (i = 0; i < n; i++)
		if (!strcmp(tnf_type_name(s[i].type), name))
			return (int)i;
	return -1;
}

/* The value of a slot or element of type @t stored at @pos. */
static int value_at(struct tnf_file *f, uint32_t pos, const struct tnf_type *t, bool ref,
		    uint32_t size, struct tnf_datum *out)
{
	uint32_t target;
	int err;

	out->off = 0;
	out->type = NULL;
	if (ref) {
		err = tnf_resolve(f, pos, &target);
		if (err || !target)
			return err;
		return tnf_datum_for(f, target, out);
	}
	if ((uint64_t)pos + size > f->end)
		return tnf_set_err(f, TNF_ERR_BADRECORD, pos);
	out->off = pos;
	out->type = t;
	return 0;
}

int tnf_slot_get(struct tnf_file *f, struct tnf_datum d, unsigned i, struct tnf_datum *out)
{
	const struct tnf_slot *s;
	unsigned n;

	if (!f || !out)
		return -TNF_ERR_INVAL;
	s = slots_of(d, &n);
	if (i >= n)
		return -TNF_ERR_NOTFOUND;
	s += i;
	return value_at(f, d.off + s->offset, s->type, s->ref, s->size, out);
}

int tnf_slot_named(struct tnf_file *f, struct tnf_datum d, const char *name, struct tnf_datum *out)
{
	int i = tnf_slot_index(d, name);

	if (i < 0)
		return -TNF_ERR_NOTFOUND;
	return tnf_slot_get(f, d, (unsigned)i, out);
}

int tnf_get_int(struct tnf_file *f, struct tnf_datum d, int64_t *v)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	bool ok;

	switch (tnf_datum_kind(d)) {
	case TNF_K_CHAR:
	case TNF_K_UINT8:
		ok = tnf_rd8(f, d.off, &u8);
		*v = u8;
		break;
	case TNF_K_INT8:
		ok = tnf_rd8(f, d.off, &u8);
		*v = (int8_t)u8;
		break;
	case TNF_K_UINT16:
		ok = tnf_rd16(f, d.off, &u16);
		*v = u16;
		break;
	case TNF_K_INT16:
		ok = tnf_rd16(f, d.off, &u16);
		*v = (int16_t)u16;
		break;
	case TNF_K_UINT32:
		ok = tnf_rd32(f, d.off, &u32);
		*v = u32;
		break;
	case TNF_K_INT32:
		ok = tnf_rd32(f, d.off, &u32);
		*v = (int32_t)u32;
		break;
	case TNF_K_INT64:
	case TNF_K_UINT64:
		ok = tnf_rd64(f, d.off, &u64);
		*v = (int64_t)u64;
		break;
	default:
		return -TNF_ERR_INVAL;
	}
	return ok ? 0 : tnf_set_err(f, TNF_ERR_BADRECORD, d.off);
}

int tnf_get_float(struct tnf_file *f, struct tnf_datum d, double *v)
{
	uint32_t u32;
	uint64_t u64;
	float x;
	double y;

	switch (tnf_datum_kind(d)) {
	case TNF_K_FLOAT32:
		if (!tnf_rd32(f, d.off, &u32))
			return tnf_set_err(f, TNF_ERR_BADRECORD, d.off);
		memcpy(&x, &u32, 4);
		*v = x;
		return 0;
	case TNF_K_FLOAT64:
		if (!tnf_rd64(f, d.off, &u64))
			return tnf_set_err(f, TNF_ERR_BADRECORD, d.off);
		memcpy(&y, &u64, 8);
		*v = y;
		return 0;
	default:
		return -TNF_ERR_INVAL;
	}
}

int tnf_get_int_named(struct tnf_file *f, struct tnf_datum d, const char *name, int64_t *v)
{
	struct tnf_datum s;
	int err;

	err = tnf_slot_named(f, d, name, &s);
	if (err)
		return err;
	return tnf_get_int(f, s, v);
}

/* Element size, or 0 if @d is not a usable array. */
static uint32_t elem_size(const struct tnf_datum d, bool *ref)
{
	const struct tnf_type *e;

	if (!d.type || (d.type->kind != TNF_K_ARRAY && d.type->kind != TNF_K_STRING))
		return 0;
	e = tnf_layout(d.type)->elem;
	if (!e)
		return 0;
	*ref = e->props & TNF_PROP_TAGGED;
	if (*ref)
		return 4;
	if (e->size == TNF_SIZE_SELF)
		return 0;
	return e->size;
}

unsigned tnf_element_count(struct tnf_file *f, struct tnf_datum d)
{
	uint32_t self_size, esize, hdr;
	bool ref = false;

	esize = elem_size(d, &ref);
	if (!esize || !tnf_rd32(f, (uint64_t)d.off + 4, &self_size))
		return 0;
	hdr = tnf_layout(d.type)->hdr_size;
	if (self_size < hdr || (uint64_t)d.off + self_size > f->end)
		return 0;
	return (self_size - hdr) / esize;
}

int tnf_element_get(struct tnf_file *f, struct tnf_datum d, unsigned i, struct tnf_datum *out)
{
	uint32_t esize;
	bool ref = false;

	if (!f || !out)
		return -TNF_ERR_INVAL;
	esize = elem_size(d, &ref);
	if (i >= tnf_element_count(f, d))
		return -TNF_ERR_NOTFOUND;
	return value_at(f, d.off + tnf_layout(d.type)->hdr_size + i * esize,
			tnf_layout(d.type)->elem, ref, esize, out);
}

const char *tnf_get_chars(struct tnf_file *f, struct tnf_datum d, size_t *len)
{
	const char *s;

	if (tnf_datum_kind(d) != TNF_K_STRING)
		return NULL;
	if (tnf_string_chars(f, d.off, &s, len))
		return NULL;
	return s;
}

int tnf_type_of_record(struct tnf_file *f, struct tnf_datum d, const struct tnf_type **out)
{
	if (tnf_datum_kind(d) != TNF_K_TYPE)
		return -TNF_ERR_INVAL;
	return tnf_type_get(f, d.off, out);
}
