// SPDX-License-Identifier: BSD-2-Clause
/*
 * Counting what is lost.  Every event (or argument) the writer cannot
 * write is counted in the trace file itself, so the reader can say that
 * the trace is incomplete instead of the loss going unnoticed.  The
 * counters are shared by every process writing the file, hence atomic;
 * a drop is rare, so the two increments cost nothing on the hot path.
 * Async-signal-safe: a nested probe in a signal handler counts here.
 */
#include "rt.h"

void tnf_drop(enum tnf_drop_reason why)
{
	struct tnf_file_header *fh =
		(struct tnf_file_header *)__atomic_load_n(&tnf_buf.base, __ATOMIC_ACQUIRE);
	uint32_t s = __atomic_load_n(&tnf_runtime.state, __ATOMIC_RELAXED) & TNF_STATE_MASK;

	/* a broken mapping may be a file that is not ours: leave it alone */
	if (!fh || (s != TNF_STATE_RUNNING && s != TNF_STATE_FORKED))
		return;
	__atomic_fetch_add(&fh->drops_total, 1, __ATOMIC_RELAXED);
	if ((unsigned)why < TNF_DROPS_MAX_REASONS)
		__atomic_fetch_add(&fh->drops[why], 1, __ATOMIC_RELAXED);
}
