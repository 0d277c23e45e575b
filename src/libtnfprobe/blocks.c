// SPDX-License-Identifier: BSD-2-Clause
/*
 * Blocks: data blocks handed out round-robin by a ticket counter in the
 * file header (ticket / blocks = lap = generation - 1), each owned by one
 * thread through its A_lock, so the hot path never contends; tag space
 * (permanent type records) grows lock-free by CAS on a cursor.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "rt.h"

#define TAKE_TRIES 200

static void atomic_max32(uint32_t *p, uint32_t v)
{
	uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (cur < v &&
	       !__atomic_compare_exchange_n(p, &cur, v, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

static void atomic_max16(uint16_t *p, uint16_t v)
{
	uint16_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (cur < v &&
	       !__atomic_compare_exchange_n(p, &cur, v, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/*
 * A_lock of @bh is held: take it over if its owner is a process that is
 * gone (one that ended, or was killed, while holding it would otherwise pin
 * the block for the life of the file; enough of them and every later event
 * is lost).  The CAS on the owner makes one taker win.  Keeps errno: this
 * runs inside the traced program's code.
 */
static int take_from_dead(struct tnf_block_header *bh)
{
	uint32_t o = __atomic_load_n(&bh->owner, __ATOMIC_ACQUIRE);
	int saved = errno, dead;

	if (!o || (pid_t)o == tnf_pid)
		return 0;
	dead = kill((pid_t)o, 0) && errno == ESRCH;
	errno = saved;
	return dead && __atomic_compare_exchange_n(&bh->owner, &o, (uint32_t)tnf_pid, 0,
						   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Gives A_lock of @bh back: the owner goes first, so a taker never sees a stale one. */
static void block_unlock(struct tnf_block_header *bh)
{
	__atomic_store_n(&bh->owner, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bh->a_lock, 0, __ATOMIC_RELEASE);
}

/*
 * Takes the next data block whose generation is older than this lap and
 * whose A_lock is free or held by a dead process.  Returns its offset, or 0.
 */
uint32_t tnf_block_take(int for_tags)
{
	struct tnf_file_header *fh = tnf_fh();
	int i;

	for (i = 0; i < TAKE_TRIES; i++) {
		uint64_t t = __atomic_fetch_add(&fh->ticket, 1, __ATOMIC_RELAXED);
		uint32_t idx = (uint32_t)(t % tnf_buf.ndata);
		uint32_t gen = (uint32_t)(t / tnf_buf.ndata) + 1;
		uint32_t off = TNF_DATA_START + idx * TNF_BLOCK_SIZE;
		struct tnf_block_header *bh = tnf_bh(off);
		uint32_t g = __atomic_load_n(&bh->generation, __ATOMIC_RELAXED);
		uint8_t unlocked = 0;

		if (g == TNF_TAG_GEN || g >= gen)
			continue;
		if (__atomic_compare_exchange_n(&bh->a_lock, &unlocked, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			__atomic_store_n(&bh->owner, (uint32_t)tnf_pid, __ATOMIC_RELAXED);
		else if (!take_from_dead(bh))
			continue;
		g = __atomic_load_n(&bh->generation, __ATOMIC_RELAXED);
		if (g == TNF_TAG_GEN || g >= gen) {
			block_unlock(bh);
			continue;
		}
		/* empty it before the new generation makes it look valid */
		__atomic_store_n(&bh->bytes_valid, TNF_BLOCK_HDR, __ATOMIC_RELAXED);
		bh->b_lock = 0;
		bh->next_block = 0;
		__atomic_store_n(&bh->generation, for_tags ? TNF_TAG_GEN : gen, __ATOMIC_RELEASE);
		__atomic_store_n(&bh->tag, tnf_ref_tag(TNF_CELL_BLOCK_HEADER), __ATOMIC_RELEASE);
		atomic_max32(&fh->blocks_valid, off / TNF_BLOCK_SIZE);
		return off;
	}
	return 0;
}

/* Gives the thread's block back (the data in it stays valid). */
void tnf_block_release(struct tnf_thread *t)
{
	if (t->blk)
		block_unlock(tnf_bh(t->blk));
	t->blk = 0;
	t->pos = 0;
	t->valid = 0;
	t->sched = 0;
}

/* Moves the thread to a fresh block; 0 on success. */
int tnf_block_new(struct tnf_thread *t)
{
	uint32_t off = tnf_block_take(0);

	if (!off)
		return -1;
	tnf_block_release(t);
	t->blk = off;
	t->pos = off + TNF_BLOCK_HDR;
	t->valid = t->pos;
	return 0;
}

/* Publishes everything the thread wrote so far (release: data first). */
void tnf_commit_thread(struct tnf_thread *t)
{
	t->valid = t->pos;
	__atomic_store_n(&tnf_bh(t->blk)->bytes_valid, (uint16_t)(t->pos - t->blk),
			 __ATOMIC_RELEASE);
}

static void tag_block_init(uint32_t off)
{
	struct tnf_block_header *bh = tnf_bh(off);

	bh->a_lock = 1;
	bh->next_block = 0;
	__atomic_store_n(&bh->generation, TNF_TAG_GEN, __ATOMIC_RELAXED);
	atomic_max16(&bh->bytes_valid, TNF_BLOCK_HDR);
	__atomic_store_n(&bh->tag, tnf_ref_tag(TNF_CELL_BLOCK_HEADER), __ATOMIC_RELEASE);
}

/*
 * Space for a permanent (tag) record of @size bytes (a multiple of 8), from
 * the reserve, then from data blocks turned into tag blocks.  Lock-free: a
 * writer killed half-way leaves at most an unreferenced record.  Returns
 * the offset, zero-filled, or 0 when the file is full of tags.
 */
uint32_t tnf_tag_alloc(uint32_t size)
{
	struct tnf_file_header *fh = tnf_fh();
	uint32_t cur, in, nb, got;

	if (size > TNF_BLOCK_SIZE - TNF_BLOCK_HDR)
		return 0;
	for (;;) {
		cur = __atomic_load_n(&fh->tag_cursor, __ATOMIC_RELAXED);
		in = cur & (TNF_BLOCK_SIZE - 1);
		if (in && in + size <= TNF_BLOCK_SIZE) {
			if (__atomic_compare_exchange_n(&fh->tag_cursor, &cur, cur + size, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				got = cur;
				break;
			}
			continue;
		}
		nb = in ? (cur & ~(TNF_BLOCK_SIZE - 1)) + TNF_BLOCK_SIZE : cur;
		if (cur >= TNF_DATA_START || nb >= TNF_DATA_START) {
			nb = tnf_block_take(1);
			if (!nb)
				return 0;
		}
		tag_block_init(nb);
		/* a lost race leaves an empty tag block behind: harmless */
		if (__atomic_compare_exchange_n(&fh->tag_cursor, &cur, nb + TNF_BLOCK_HDR + size, 0,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			got = nb + TNF_BLOCK_HDR;
			break;
		}
	}
	memset(tnf_buf.base + got, 0, size);
	return got;
}

/* Marks a finished tag record valid for readers walking the block. */
void tnf_tag_done(uint32_t off, uint32_t size)
{
	atomic_max16(&tnf_bh(off)->bytes_valid,
		     (uint16_t)((off + size) & (TNF_BLOCK_SIZE - 1) ?: TNF_BLOCK_SIZE));
}
