// SPDX-License-Identifier: BSD-2-Clause
/*
 * libtl_pre.so: preloaded into tl_probes by the probe tests.  Holds probes
 * of its own and two probe functions that log their calls, to check the
 * order of a connected chain.
 */
#include <string.h>
#include <tnf/probe.h>

#define EXPORT __attribute__((visibility("default")))

static char chain_log[4096];

static void log_call(const char *tag)
{
	size_t n = strlen(chain_log);

	if (n + strlen(tag) + 1 < sizeof(chain_log))
		strcat(chain_log, tag);
}

EXPORT void tlpre_func_a(tnf_probe_setup_t *s)
{
	(void)s;
	log_call("a");
}

EXPORT void tlpre_func_b(tnf_probe_setup_t *s)
{
	(void)s;
	log_call("b");
}

EXPORT const char *tlpre_chain_log(void)
{
	return chain_log[0] ? chain_log : "-";
}

EXPORT void tlpre_fire(int n)
{
	int i;

	for (i = 0; i < n; i++)
		TNF_PROBE_1(tl_pre_tick, "tl pre", "", tnf_int, i, i);
}
