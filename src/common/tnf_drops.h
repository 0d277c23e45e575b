/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tnf_drops.h - where our writer (libtnfprobe) counts the events it could
 * not write, shared with the reader (libtnf).
 *
 * The counters live in the writer-private part of block 0, after the nine
 * public file-header words and the allocation words, so the file stays
 * what the original format describes.  The original writer keeps other
 * things in that area, so a reader believes the counters only when the
 * marker word holds TNF_DROPS_MAGIC.  All words are 32-bit, in the
 * writer's byte order.
 */
#ifndef TNF_DROPS_H
#define TNF_DROPS_H

#define TNF_DROPS_MAGIC	      0x7444726fu /* "orDt": our writer, drop counters follow */
#define TNF_DROPS_MAGIC_OFF   56u	  /* file offsets in block 0 */
#define TNF_DROPS_TOTAL_OFF   60u
#define TNF_DROPS_REASON_OFF  64u
#define TNF_DROPS_MAX_REASONS 8u /* room kept for reasons added later */
#define TNF_DROPS_END	      (TNF_DROPS_REASON_OFF + 4 * TNF_DROPS_MAX_REASONS)
/* The writer's block ticket (u64): data blocks handed out so far; past their count the ring
 * wrapped. */
#define TNF_TICKET_OFF	      40u

/* Why an event (or part of it) was not written. */
enum tnf_drop_reason {
	TNF_DROP_NESTED,	/* probe inside a probe: signal handler, connected function */
	TNF_DROP_FORMATTING,	/* another process was still formatting the file */
	TNF_DROP_NOBLOCK,	/* no free block found */
	TNF_DROP_TOOBIG,	/* the event does not fit in a block */
	TNF_DROP_NOSPACE,	/* no room for a type record (tag space full) */
	TNF_DROP_TRUNCATED,	/* a string truncated or a string/record argument nulled */
	TNF_DROP_KERNEL_RB,	/* kernel mode: the BPF ring buffer was full */
	TNF_DROP_KERNEL_NESTED, /* kernel mode: the kernel skipped the program (it ran on that CPU)
				 */
	TNF_DROP_NREASONS
};

#endif /* TNF_DROPS_H */
