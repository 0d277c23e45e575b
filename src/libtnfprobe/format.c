// SPDX-License-Identifier: BSD-2-Clause
/*
 * Formatting a fresh trace file.  A parent and a forked child (or two
 * threads) may map the same zero-filled file at once: the one that moves the
 * magic word from 0 to TNF_MAGIC_FORMATTING formats, the others drop their
 * events until the real magic appears.  Nothing ever waits.
 */
#include "rt.h"

/* Checks a file some other process formatted. */
static int check_formatted(const struct tnf_file_header *fh)
{
	if (fh->block_size != TNF_BLOCK_SIZE || fh->directory_size != TNF_DIR_END ||
	    fh->block_header_size != TNF_BLOCK_HDR ||
	    (uint64_t)fh->block_count * TNF_BLOCK_SIZE > tnf_buf.size)
		return -2;
	tnf_buf.formatted = 1;
	return 0;
}

/* 0: formatted (by us or earlier), -1: another writer is formatting, -2: bad. */
int tnf_format(void)
{
	struct tnf_file_header *fh = tnf_fh();
	uint32_t *cells = (uint32_t *)(tnf_buf.base + TNF_CELL_FILE_HEADER);
	uint32_t m = 0, fht, bht, root;

	if (!__atomic_compare_exchange_n(&fh->magic, &m, TNF_MAGIC_FORMATTING, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_ACQUIRE)) {
		if (m == TNF_MAGIC)
			return check_formatted(fh);
		return m == TNF_MAGIC_FORMATTING ? -1 : -2;
	}
	fh->tag = tnf_ref_tag(TNF_CELL_FILE_HEADER);
	fh->file_version = 1;
	fh->file_header_size = 36; /* the nine public words */
	fh->file_log_size = tnf_buf.log_size;
	fh->block_header_size = TNF_BLOCK_HDR;
	fh->block_size = TNF_BLOCK_SIZE;
	fh->directory_size = TNF_DIR_END;
	fh->block_count = tnf_buf.size / TNF_BLOCK_SIZE;
	fh->blocks_valid = TNF_DATA_START / TNF_BLOCK_SIZE;
	fh->ticket = 0;
	fh->tag_cursor = TNF_RESERVE_START;
	fh->dir_next = TNF_CELL_FIRST;
	/*
	 * Marks the counters as ours.  They are not zeroed: the file came
	 * zero-filled, and drops other processes counted while we formatted
	 * must stay counted.
	 */
	fh->drops_magic = TNF_DROPS_MAGIC;

	tnf_types_lock();
	fht = tnf_type_ref_locked(T_FILE_HEADER);
	bht = tnf_type_ref_locked(T_BLOCK_HEADER);
	root = tnf_type_ref_locked(T_STRUCT_TYPE);
	/* what every event needs, so that it sits in the first tag blocks */
	tnf_type_ref_locked(T_PROBE_TYPE);
	tnf_type_ref_locked(T_SCHED_REC);
	tnf_type_ref_locked(T_PROBE_EVENT);
	tnf_type_ref_locked(T_TIME_DELTA);
	tnf_types_unlock();
	if (!fht || !bht || !root)
		return -2;
	cells[0] = tnf_ref_perm(fht);
	cells[1] = tnf_ref_perm(bht);
	cells[2] = tnf_ref_perm(root);
	tnf_buf.formatted = 1;
	__atomic_store_n(&fh->magic, TNF_MAGIC, __ATOMIC_RELEASE);
	return 0;
}
