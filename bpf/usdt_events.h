/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * USDT probes of processes (src/libtnfctl/usdt_trace.c): a record is
 * kernel mode's (struct kt_hdr, ktrace_events.h), its fixed part the
 * probe's integer arguments, then the arguments read as strings (a status
 * byte and the NUL-ended bytes each), so that one writer makes both files.
 */
#ifndef TNF_USDT_EVENTS_H
#define TNF_USDT_EVENTS_H

#define US_MAX_ARGS 12 /* STAP_PROBE1..12 */
#define US_MAX_STRS 4  /* arguments read as strings per hit (KT_MAX_STRS) */
#define US_FIXED    (US_MAX_ARGS * 8)
/* libbpf's spec map, an object's (BPF_USDT_MAX_SPEC_CNT): a link takes one per site at most */
#define US_SPECS_MAX 256

/*
 * The link's cookie: the probe's slot in the controller's session (low 32
 * bits) and the mask of its arguments to read as strings (high 32 bits).
 */
#define US_COOKIE(slot, strmask) ((__u64)(strmask) << 32 | (slot))

#endif
