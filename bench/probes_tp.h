/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * probes_tp.h - the LTTng-UST tracepoint provider of bench/probes.c: the
 * same payload as its TNF probe (a long and a short string).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tnfbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "probes_tp.h"

#if !defined(PROBES_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PROBES_TP_H

#include <lttng/tracepoint.h>

/* Enabled in the session by bench/probes-vs-lttng. */
LTTNG_UST_TRACEPOINT_EVENT(tnfbench, on, LTTNG_UST_TP_ARGS(long, i, const char *, s),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(long, i, i)
						       lttng_ust_field_string(s, s)))

/* Never enabled: LTTng's cost of a disabled tracepoint, next to TNF's. */
LTTNG_UST_TRACEPOINT_EVENT(tnfbench, off, LTTNG_UST_TP_ARGS(long, i, const char *, s),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(long, i, i)
						       lttng_ust_field_string(s, s)))

#endif

#include <lttng/tracepoint-event.h>
