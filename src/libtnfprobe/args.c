// SPDX-License-Identifier: BSD-2-Clause
/*
 * Arguments stored outside the event: strings (tnf_string array records)
 * and user records, placed after the event in the same block and referred
 * to by self-relative (reclaimable) references.  What does not fit in the
 * block is truncated (strings) or becomes a null reference (records).
 */
#include <string.h>

#include "rt.h"

static uint32_t slot_off(const uint32_t *slot)
{
	return (uint32_t)((const char *)slot - tnf_buf.base);
}

static uint32_t room_of(const struct tnf_thread *t)
{
	return t->blk ? t->blk + TNF_BLOCK_SIZE - t->pos : 0;
}

void tnf_put_string(tnf_probe_setup_t *set, uint32_t *slot, const char *str)
{
	struct tnf_thread *t = (struct tnf_thread *)set->tpd_p;
	uint32_t room = room_of(t), len, self, off, type, *w;

	*slot = 0;
	if (!str)
		return; /* a NULL string is a value, not a loss */
	type = room < 16 ? 0 : tnf_type_ref(T_STRING);
	if (!type) {
		tnf_drop(TNF_DROP_TRUNCATED);
		return;
	}
	len = strnlen(str, room);
	if (8 + len + 1 > room) {
		len = (room & ~7u) - 9;
		tnf_drop(TNF_DROP_TRUNCATED);
	}
	self = (8 + len + 1 + 3) & ~3u;
	off = t->pos;
	t->pos += tnf_round8(self);
	w = (uint32_t *)(tnf_buf.base + off);
	w[0] = tnf_ref_tag(type);
	w[1] = self;
	memcpy(w + 2, str, len);
	memset((char *)(w + 2) + len, 0, tnf_round8(self) - 8 - len);
	*slot = off - slot_off(slot);
}

/* Reads a C integer of @size bytes. */
static int64_t load_int(const void *p, unsigned long size, int is_signed)
{
	switch (size) {
	case 1:
		return is_signed ? (int64_t) * (const int8_t *)p : (int64_t) * (const uint8_t *)p;
	case 2:
		return is_signed ? (int64_t) * (const int16_t *)p : (int64_t) * (const uint16_t *)p;
	case 4:
		return is_signed ? (int64_t) * (const int32_t *)p : (int64_t) * (const uint32_t *)p;
	default:
		return *(const int64_t *)p;
	}
}

static void store_member(tnf_probe_setup_t *set, char *dst, const struct tnf_record_member *m,
			 const char *src)
{
	unsigned int kind = m->type ? m->type->kind : 0;
	double d;
	int64_t v;

	switch (kind) {
	case TNF_K_STRING:
		tnf_put_string(set, (uint32_t *)dst, *(const char *const *)src);
		return;
	case TNF_K_RECORD:
		tnf_put_record(set, (uint32_t *)dst, m->type, *(const void *const *)src);
		return;
	case TNF_K_FLOAT32:
	case TNF_K_FLOAT64:
		d = m->size == sizeof(float) ? *(const float *)src : *(const double *)src;
		if (kind == TNF_K_FLOAT32) {
			float f = (float)d;

			memcpy(dst, &f, 4);
		} else {
			memcpy(dst, &d, 8);
		}
		return;
	}
	v = load_int(src, m->size,
		     kind == TNF_K_CHAR || kind == TNF_K_INT8 || kind == TNF_K_INT16 ||
			     kind == TNF_K_INT32 || kind == TNF_K_INT64);
	switch (tnf_kinds[kind < TNF_K_MAX ? kind : 0].size) {
	case 1:
		*(uint8_t *)dst = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)dst = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)dst = (uint32_t)v;
		break;
	case 8:
		*(uint64_t *)dst = (uint64_t)v;
		break;
	}
}

void tnf_put_record(tnf_probe_setup_t *set, uint32_t *slot, const struct tnf_type_desc *type,
		    const void *rec)
{
	struct tnf_thread *t = (struct tnf_thread *)set->tpd_p;
	uint32_t offs[16], size, off, tt, i;
	char *p;

	*slot = 0;
	if (!rec)
		return; /* a NULL record is a value, not a loss */
	tt = type && type->kind == TNF_K_RECORD && type->nmembers <= 16 ? tnf_record_type(type) : 0;
	size = tt ? tnf_round8(tnf_record_layout(type, offs)) : 0;
	if (!tt || room_of(t) < size) {
		tnf_drop(TNF_DROP_TRUNCATED);
		return;
	}
	off = t->pos;
	t->pos += size;
	p = tnf_buf.base + off;
	memset(p, 0, size);
	*(uint32_t *)p = tnf_ref_tag(tt);
	*slot = off - slot_off(slot);
	for (i = 0; i < type->nmembers; i++)
		store_member(set, p + offs[i], &type->members[i],
			     (const char *)rec + type->members[i].offset);
}
