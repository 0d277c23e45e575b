/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How libtnfprobe used the data blocks of a trace file, read from the file
 * (the writer's layout, src/libtnfprobe/rt.h): a count to assert on where a
 * time would be the wrong thing to.  In a fresh file that did not wrap,
 * written by live processes:
 *
 *  - every ticket (blocks handed out, a u64 at 40 in block 0) is one block
 *    holding events or tags: a block taken twice, or tickets burnt by
 *    retries in tnf_block_take, make them differ;
 *  - a thread moves to a new block only when its block is full, so at most
 *    one block per writing thread (the one it had when it stopped) is less
 *    than half full: a new block per event, or blocks given back early,
 *    make many.
 */
#ifndef TL_BLOCKLIB_H
#define TL_BLOCKLIB_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TL_BLK_SIZE	  512u
#define TL_BLK_DATA_START 0x18000u
#define TL_BLK_TAG_GEN	  0xFFFFFFFFu

struct tl_blocks {
	uint64_t ticket; /* data blocks handed out */
	unsigned ndata;	 /* data blocks in the file */
	unsigned events; /* data blocks of generation 1 (holding events) */
	unsigned tags;	 /* data blocks turned into tag blocks */
	unsigned later;	 /* data blocks of a later generation (the file wrapped) */
	unsigned sparse; /* event blocks less than half full */
	uint64_t bytes;	 /* bytes_valid of the event blocks, headers included */
};

/* 0, or -1 if @path cannot be read as a trace file of ours. */
static inline int tl_block_use(const char *path, struct tl_blocks *b)
{
	const unsigned char *m;
	struct stat st;
	uint32_t off;
	int fd;

	memset(b, 0, sizeof(*b));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_size < (off_t)TL_BLK_DATA_START) {
		close(fd);
		return -1;
	}
	m = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	memcpy(&b->ticket, m + 40, 8);
	b->ndata = (unsigned)((st.st_size / TL_BLK_SIZE * TL_BLK_SIZE - TL_BLK_DATA_START) /
			      TL_BLK_SIZE);
	for (off = TL_BLK_DATA_START; off + TL_BLK_SIZE <= (uint64_t)st.st_size;
	     off += TL_BLK_SIZE) {
		uint32_t gen;
		uint16_t valid;

		memcpy(&gen, m + off + 4, 4);
		memcpy(&valid, m + off + 8, 2);
		if (!gen)
			continue;
		if (gen == TL_BLK_TAG_GEN) {
			b->tags++;
		} else if (gen == 1) {
			b->events++;
			b->bytes += valid;
			b->sparse += valid < TL_BLK_SIZE / 2;
		} else {
			b->later++;
		}
	}
	munmap((void *)m, st.st_size);
	return 0;
}

/*
 * Fails the test unless the blocks of the fresh, unwrapped @path are used
 * as the header says (at most @writers threads wrote events into it).
 */
static inline void tl_assert_block_use(const char *path, unsigned writers, struct tl_blocks *out)
{
	struct tl_blocks b;

	if (tl_block_use(path, &b))
		fail_msg("%s: not a trace file", path);
	if (b.later || b.ticket >= b.ndata)
		fail_msg("%s wrapped (ticket %llu, %u data blocks): no count to check", path,
			 (unsigned long long)b.ticket, b.ndata);
	if (b.ticket != (uint64_t)b.events + b.tags)
		fail_msg("%s: %llu blocks handed out, %u hold events and %u tags", path,
			 (unsigned long long)b.ticket, b.events, b.tags);
	if (b.sparse > writers)
		fail_msg("%s: %u event blocks less than half full, %u threads wrote (%u event "
			 "blocks, %llu bytes)",
			 path, b.sparse, writers, b.events, (unsigned long long)b.bytes);
	if (out)
		*out = b;
}

#endif
