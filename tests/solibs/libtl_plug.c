// SPDX-License-Identifier: BSD-2-Clause
/*
 * libtl_plug.so: dlopened by tl_probes.  Its constructor fires a probe, so a
 * controller can only see it if the probe was enabled at the DLOPEN stop,
 * before constructors run.
 */
#include <tnf/probe.h>

#define EXPORT __attribute__((visibility("default")))

__attribute__((constructor)) static void plug_init(void)
{
	TNF_PROBE_1(tl_plug_ctor, "tl plug ctor", "", tnf_string, where, "constructor");
}

EXPORT void tlplug_fire(int n)
{
	int i;

	for (i = 0; i < n; i++)
		TNF_PROBE_1(tl_plug_tick, "tl plug", "", tnf_int, i, i);
}
