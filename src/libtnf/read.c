// SPDX-License-Identifier: BSD-2-Clause
/*
 * read.c - bounded, byte-order-aware reads of the mapped file, and the
 * resolution of 32-bit reference cells and 16-bit tag args (permanent and
 * reclaimable space, generation and bytes_valid checks, forwarding chains).
 */
#include <stdlib.h>
#include <string.h>

#include "tnf_impl.h"

int tnf_set_err(struct tnf_file *f, int err, uint32_t off)
{
	f->err_off = off;
	return -err;
}

static bool in_file(const struct tnf_file *f, uint64_t off, uint64_t len)
{
	return off <= f->end && len <= f->end - off;
}

bool tnf_rd8(const struct tnf_file *f, uint64_t off, uint8_t *v)
{
	if (!in_file(f, off, 1))
		return false;
	*v = f->base[off];
	return true;
}

bool tnf_rd16(const struct tnf_file *f, uint64_t off, uint16_t *v)
{
	uint16_t x;

	if (!in_file(f, off, 2))
		return false;
	memcpy(&x, f->base + off, 2);
	*v = f->swap ? __builtin_bswap16(x) : x;
	return true;
}

bool tnf_rd32(const struct tnf_file *f, uint64_t off, uint32_t *v)
{
	uint32_t x;

	if (!in_file(f, off, 4))
		return false;
	memcpy(&x, f->base + off, 4);
	*v = f->swap ? __builtin_bswap32(x) : x;
	return true;
}

bool tnf_rd64(const struct tnf_file *f, uint64_t off, uint64_t *v)
{
	uint64_t x;

	if (!in_file(f, off, 8))
		return false;
	memcpy(&x, f->base + off, 8);
	*v = f->swap ? __builtin_bswap64(x) : x;
	return true;
}

/* Generation and bytes_valid of the block holding @off (false: unreadable). */
static bool block_state(const struct tnf_file *f, uint32_t off, uint32_t *gen, uint32_t *bv)
{
	uint32_t blk = off & ~(f->info.block_size - 1);
	uint16_t v16;

	if (!tnf_rd32(f, (uint64_t)blk + f->gen_off, gen))
		return false;
	if (f->bv_size == 2) {
		if (!tnf_rd16(f, (uint64_t)blk + f->bv_off, &v16))
			return false;
		*bv = v16;
		return true;
	}
	return tnf_rd32(f, (uint64_t)blk + f->bv_off, bv);
}

/*
 * Reclaimable space: @val is added to the virtual address of @src (its
 * block's generation above the physical offset).  The target is accepted
 * only if its block still holds that generation and the target lies below
 * its bytes_valid, or if either block is a (never reclaimed) tag block.
 * *dst = 0 when the referent has been overwritten or is out of the file.
 */
static int vaddr_to_phys(struct tnf_file *f, uint32_t src, uint32_t val, uint32_t *dst)
{
	uint32_t src_gen, dst_gen, bv, exp, exp_gen, off, blk, dummy;
	int32_t gen_delta;

	*dst = 0;
	if (!f->blk_ready)
		return 0;
	if (!block_state(f, src, &src_gen, &dummy))
		return tnf_set_err(f, TNF_ERR_BADREF, src);
	exp = src + val;
	/* arithmetic shift: a negative offset steps back a generation */
	gen_delta = (int32_t)exp >> f->info.file_log_size;
	exp_gen = src_gen + (uint32_t)gen_delta;
	off = exp & f->addr_mask;
	if (off < f->data_start || (uint64_t)off + 4 > f->end)
		return 0;
	blk = off & ~(f->info.block_size - 1);
	if (!block_state(f, off, &dst_gen, &bv))
		return 0;
	if (src_gen == TAG_GENERATION || dst_gen == TAG_GENERATION ||
	    (dst_gen == exp_gen && off - blk < bv))
		*dst = off;
	return 0;
}

static int permanent(struct tnf_file *f, uint32_t cell, uint32_t v, uint32_t *dst)
{
	uint32_t val = v & ~(REF_KIND_MASK | REF_PERMANENT);

	if (val & REF_SIGN)
		return tnf_set_err(f, TNF_ERR_BADREF, cell);
	*dst = val;
	return 0;
}

/* Follow forwarding cells from @cur; check that a record starts there. */
static int chase(struct tnf_file *f, uint32_t cur, uint32_t *target)
{
	uint32_t v;
	int i, err;

	*target = 0;
	for (i = 0; i < MAX_FWD_CHAIN; i++) {
		if (!tnf_rd32(f, cur, &v))
			return tnf_set_err(f, TNF_ERR_BADREF, cur);
		if (v == 0)
			return tnf_set_err(f, TNF_ERR_BADREF, cur);
		if ((v & REF_KIND_MASK) == REF_RSVD)
			return tnf_set_err(f, TNF_ERR_BADREF, cur);
		if ((v & REF_KIND_MASK) != REF_FWD) {
			*target = cur;
			return 0;
		}
		if (v & REF_PERMANENT)
			err = permanent(f, cur, v, &cur);
		else
			err = vaddr_to_phys(f, cur, v & ~(REF_KIND_MASK | REF_PERMANENT), &cur);
		if (err)
			return err;
		if (cur == 0)
			return 0;
	}
	return tnf_set_err(f, TNF_ERR_BADREF, cur);
}

int tnf_resolve(struct tnf_file *f, uint32_t cell, uint32_t *target)
{
	uint32_t v, cur = 0, tag16;
	int err;

	*target = 0;
	if (!tnf_rd32(f, cell, &v))
		return tnf_set_err(f, TNF_ERR_BADREF, cell);
	if (v == 0)
		return 0;
	switch (v & REF_KIND_MASK) {
	case REF_RSVD:
		return tnf_set_err(f, TNF_ERR_BADREF, cell);
	case REF_PAIR:
		/* the high half: the tag, absolute (into the directory) or relative */
		tag16 = v >> 16;
		if ((tag16 & REF_KIND_MASK) == REF_PAIR) {
			cur = tag16 & ~REF_KIND_MASK;
		} else if ((tag16 & REF_KIND_MASK) == REF_FWD) {
			err = vaddr_to_phys(f, cell,
					    (uint32_t)(int32_t)(int16_t)(tag16 & ~REF_KIND_MASK),
					    &cur);
			if (err)
				return err;
		} else {
			return tnf_set_err(f, TNF_ERR_BADREF, cell);
		}
		break;
	default:
		if (v & REF_PERMANENT)
			err = permanent(f, cell, v, &cur);
		else
			err = vaddr_to_phys(f, cell, v & ~(REF_KIND_MASK | REF_PERMANENT), &cur);
		if (err)
			return err;
	}
	if (cur == 0)
		return 0;
	return chase(f, cur, target);
}

int tnf_resolve_ref16(struct tnf_file *f, uint32_t cell, uint32_t *target)
{
	uint32_t v, cur;
	int16_t r16;
	int err;

	*target = 0;
	if (!tnf_rd32(f, cell, &v))
		return tnf_set_err(f, TNF_ERR_BADREF, cell);
	if ((v & REF_KIND_MASK) != REF_PAIR)
		return 0;
	r16 = (int16_t)(v & 0xffff & ~REF_KIND_MASK);
	if (r16 == 0)
		return 0;
	err = vaddr_to_phys(f, cell, (uint32_t)(int32_t)r16, &cur);
	if (err || cur == 0)
		return err;
	return chase(f, cur, target);
}

/* The chars of the string record at @rec: up to the first NUL or its end. */
int tnf_string_chars(struct tnf_file *f, uint32_t rec, const char **s, size_t *len)
{
	uint32_t self_size;
	uint64_t start = (uint64_t)rec + 8, lim;
	const char *p, *nul;

	if (!tnf_rd32(f, (uint64_t)rec + 4, &self_size) || self_size < 8)
		return tnf_set_err(f, TNF_ERR_BADRECORD, rec);
	lim = (uint64_t)rec + self_size;
	if (lim > f->end)
		return tnf_set_err(f, TNF_ERR_BADRECORD, rec);
	p = (const char *)f->base + start;
	nul = memchr(p, 0, lim - start);
	*s = p;
	*len = nul ? (size_t)(nul - p) : (size_t)(lim - start);
	return 0;
}

/* A NUL-terminated copy of the string the reference at @ref_cell names. */
int tnf_copy_string(struct tnf_file *f, uint32_t ref_cell, char **out)
{
	uint32_t rec;
	const char *s;
	size_t len;
	int err;

	*out = NULL;
	err = tnf_resolve(f, ref_cell, &rec);
	if (err)
		return err;
	if (rec == 0)
		return 0;
	err = tnf_string_chars(f, rec, &s, &len);
	if (err)
		return err;
	if (len > MAX_NAME)
		len = MAX_NAME;
	*out = strndup(s, len);
	return *out ? 0 : -TNF_ERR_NOMEM;
}
