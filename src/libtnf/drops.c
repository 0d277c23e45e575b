// SPDX-License-Identifier: BSD-2-Clause
/*
 * drops.c - the drop counters our writer keeps in the writer-private part
 * of block 0 (tnf_drops.h).  They are read only when the writer's marker
 * is there: the original writer uses the same bytes for other things.
 */
#include <string.h>

#include "tnf_impl.h"
#include "tnf_drops.h"

_Static_assert(TNF_DROP_REASONS == TNF_DROPS_MAX_REASONS, "tnf.h and tnf_drops.h disagree");
_Static_assert(TNF_DROP_NREASONS <= TNF_DROPS_MAX_REASONS, "too many drop reasons");

static const char *const reasons[TNF_DROP_NREASONS] = {
	[TNF_DROP_NESTED] = "nested probe",
	[TNF_DROP_FORMATTING] = "file being formatted",
	[TNF_DROP_NOBLOCK] = "no free block",
	[TNF_DROP_TOOBIG] = "event larger than a block",
	[TNF_DROP_NOSPACE] = "no room for a type record",
	[TNF_DROP_TRUNCATED] = "argument truncated",
	[TNF_DROP_KERNEL_RB] = "kernel ring buffer full",
	[TNF_DROP_KERNEL_NESTED] = "kernel event during another, not run",
};

const char *tnf_drop_reason(unsigned i)
{
	return i < TNF_DROP_NREASONS ? reasons[i] : NULL;
}

int tnf_writer_wrapped(const struct tnf_file *f, uint64_t *blocks)
{
	const struct tnf_file_info *fi = tnf_file_info(f);
	uint32_t magic, w0, w1;
	uint64_t ticket, ndata;

	*blocks = 0;
	if (!fi || !tnf_rd32(f, TNF_DROPS_MAGIC_OFF, &magic) || magic != TNF_DROPS_MAGIC ||
	    !tnf_rd32(f, TNF_TICKET_OFF, &w0) || !tnf_rd32(f, TNF_TICKET_OFF + 4, &w1) ||
	    !fi->block_size || fi->block_count * (uint64_t)fi->block_size <= fi->directory_size)
		return 0;
	/* a u64 in the writer's order: its low word comes first on a little-endian writer */
	ticket = (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) != !!fi->swapped
			 ? (uint64_t)w1 << 32 | w0
			 : (uint64_t)w0 << 32 | w1;
	/* data blocks: those after the directory and the tag reserve (0x18000) */
	ndata = fi->block_count - 0x18000u / fi->block_size;
	if (ticket > ndata)
		*blocks = ticket - ndata;
	return 1;
}

int tnf_writer_drops(const struct tnf_file *f, struct tnf_drops *out)
{
	uint32_t magic;
	unsigned i;

	if (!f || !out)
		return -TNF_ERR_INVAL;
	memset(out, 0, sizeof(*out));
	/* byte-order aware: a file of the other order says so in its marker too */
	if (!tnf_rd32(f, TNF_DROPS_MAGIC_OFF, &magic) || magic != TNF_DROPS_MAGIC)
		return 0;
	if (!tnf_rd32(f, TNF_DROPS_TOTAL_OFF, &out->total))
		return 0;
	for (i = 0; i < TNF_DROP_REASONS; i++)
		if (!tnf_rd32(f, TNF_DROPS_REASON_OFF + 4 * i, &out->by_reason[i]))
			return 0;
	return 1;
}
