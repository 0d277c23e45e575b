/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tnf_swap.h - test helper: a byte-swapped copy of a TNF trace file, as a
 * writer of the other byte order would have made it.  No real file of the
 * other order exists, so this is how libtnf's swapped path gets tested.
 *
 * The copy is made by walking the original with libtnf's own type
 * knowledge (tnf_impl.h): the magic, every directory cell, then every
 * record in file order (file header, block headers, types, events,
 * schedules, strings, arrays), each slot and element swapped according to
 * its size (references and PAIR words as 32-bit cells, scalars by their
 * storage size, 1-byte values and string chars left alone).  Words of a
 * used block that no record covers are forwarding cells: 32-bit.  Our own
 * writer's private words in block 0 (drop counters) are swapped by their
 * layout, as libtnf reads them.  Bytes no reader looks at (never-used
 * blocks, uncommitted tails) are copied as they are.
 */
#ifndef TNF_SWAP_H
#define TNF_SWAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tnf_impl.h"
#include "tnf_drops.h"

struct tnf_swap {
	struct tnf_file *f;
	const uint8_t *in;
	uint8_t *out;
	uint8_t *done; /* bytes a record accounted for */
	size_t size;
};

static void swap_bytes(struct tnf_swap *s, uint64_t off, uint32_t n)
{
	uint32_t i;

	if (off + n > s->size)
		return;
	for (i = 0; i < n; i++)
		s->out[off + i] = s->in[off + n - 1 - i];
}

/* One inline or reference value of type @t, @size bytes at @pos. */
static void swap_value(struct tnf_swap *s, uint32_t pos, const struct tnf_type *t, bool ref,
		       uint32_t size, unsigned depth);

static void swap_slots(struct tnf_swap *s, uint32_t pos, const struct tnf_type *t, unsigned depth)
{
	const struct tnf_type *l = tnf_layout(t);
	unsigned i;

	if (!l->slots_done || depth > MAX_TYPE_DEPTH)
		return;
	for (i = 0; i < l->nslots; i++)
		swap_value(s, pos + l->slots[i].offset, l->slots[i].type, l->slots[i].ref,
			   l->slots[i].size, depth + 1);
}

static void swap_value(struct tnf_swap *s, uint32_t pos, const struct tnf_type *t, bool ref,
		       uint32_t size, unsigned depth)
{
	if (ref) {
		swap_bytes(s, pos, 4);
		return;
	}
	/* an inline struct: its own slots */
	if (t && t->kind == TNF_K_STRUCT) {
		swap_slots(s, pos, t, depth);
		return;
	}
	if (size == 2 || size == 4 || size == 8)
		swap_bytes(s, pos, size);
}

/* The elements of an array record (a string's chars stay bytes). */
static void swap_elements(struct tnf_swap *s, struct tnf_datum d)
{
	const struct tnf_type *l = tnf_layout(d.type), *e = l->elem;
	uint32_t n, i, esize;
	bool ref;

	if (!e || d.type->kind == TNF_K_STRING)
		return;
	ref = e->props & TNF_PROP_TAGGED;
	esize = ref ? 4 : e->size;
	n = tnf_element_count(s->f, d);
	for (i = 0; i < n; i++)
		swap_value(s, d.off + l->hdr_size + i * esize, e, ref, esize, 0);
}

static void swap_record(struct tnf_swap *s, struct tnf_datum d)
{
	/* the self_size of a self-sized record is read before it is swapped */
	uint32_t size = tnf_record_size(s->f, d);

	swap_slots(s, d.off, d.type, 0);
	if (d.type->kind == TNF_K_ARRAY || d.type->kind == TNF_K_STRING)
		swap_elements(s, d);
	if ((uint64_t)d.off + size <= s->size)
		memset(s->done + d.off, 1, size);
}

/* Words of a used block that no record covers: forwarding cells. */
static void swap_fwd_words(struct tnf_swap *s)
{
	const struct tnf_file *f = s->f;
	uint32_t bs = f->info.block_size, blk, w, bv;
	uint16_t bv16;

	for (blk = f->data_start; (uint64_t)blk + bs <= f->end; blk += bs) {
		if (!memcmp(s->in + blk, "\0\0\0\0", 4))
			continue;
		if (f->bv_size == 2 && tnf_rd16(f, blk + f->bv_off, &bv16))
			bv = bv16;
		else if (f->bv_size != 4 || !tnf_rd32(f, blk + f->bv_off, &bv))
			continue;
		if (bv > bs)
			bv = bs;
		for (w = blk; w + 4 <= blk + bv; w += 4)
			if (!memcmp(s->done + w, "\0\0\0\0", 4))
				swap_bytes(s, w, 4);
	}
}

/* Our writer's private words in block 0 (only if it marked the file). */
static void swap_writer_area(struct tnf_swap *s)
{
	uint32_t magic, off;

	if (!tnf_rd32(s->f, TNF_DROPS_MAGIC_OFF, &magic) || magic != TNF_DROPS_MAGIC)
		return;
	/* allocation words (libtnfprobe rt.h): ticket (u64), tag_cursor, dir_next */
	swap_bytes(s, 40, 8);
	swap_bytes(s, 48, 4);
	swap_bytes(s, 52, 4);
	for (off = TNF_DROPS_MAGIC_OFF; off < TNF_DROPS_END; off += 4)
		swap_bytes(s, off, 4);
}

/*
 * tnf_swap_copy - a malloc'ed byte-swapped copy of the @size bytes of
 * trace file at @data, or NULL if libtnf cannot read the whole file.
 */
static inline void *tnf_swap_copy(const void *data, size_t size)
{
	struct tnf_swap s = {.in = data, .size = size};
	struct tnf_datum rec = {0, NULL};
	uint32_t off;
	int err;

	if (tnf_open_mem(data, size, &s.f))
		return NULL;
	s.out = malloc(size);
	s.done = calloc(1, size);
	if (!s.out || !s.done)
		goto fail;
	memcpy(s.out, data, size);
	swap_bytes(&s, 0, 4); /* the magic */
	for (off = s.f->info.block_size; off + 4 <= s.f->data_start; off += 4)
		swap_bytes(&s, off, 4); /* directory cells */
	while ((err = tnf_record_next(s.f, &rec)) > 0)
		swap_record(&s, rec);
	if (err)
		goto fail;
	swap_fwd_words(&s);
	swap_writer_area(&s);
	free(s.done);
	tnf_close(s.f);
	return s.out;
fail:
	free(s.out);
	free(s.done);
	tnf_close(s.f);
	return NULL;
}

#endif /* TNF_SWAP_H */
