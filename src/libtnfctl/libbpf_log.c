// SPDX-License-Identifier: BSD-2-Clause
/*
 * libbpf's messages during the library's own calls whose failure it
 * reports as an error code (a USDT attach to a target that died): dropped,
 * unless TNFCTL_DEBUG is set, so that a tool's user sees one message, the
 * tool's.  Every other message goes to the print function that was set
 * before (libbpf's own, or the caller's); a caller that sets its own
 * afterwards gets them all.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <bpf/libbpf.h>

#include "usdt.h"

static libbpf_print_fn_t prev;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread int quiet;

static int filter(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (quiet && !getenv("TNFCTL_DEBUG"))
		return 0;
	return prev ? prev(level, fmt, ap) : 0;
}

static void install(void)
{
	prev = libbpf_set_print(filter);
}

void tnf_libbpf_quiet(bool on)
{
	pthread_once(&once, install);
	quiet += on ? 1 : -1;
}
