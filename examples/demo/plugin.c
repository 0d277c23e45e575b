// SPDX-License-Identifier: BSD-2-Clause
/* The plugin tnfdemo dlopens, so a tracer sees a library map and unmap. */
#include <stdio.h>
#include <tnf/probe.h>

/* Fires before dlopen returns: a controller must enable it at the DLOPEN stop. */
__attribute__((constructor)) static void plugin_init(void)
{
	TNF_PROBE_0(plugin_loaded, "demo plugin", "");
	printf("plugin: loaded\n");
}

__attribute__((visibility("default"))) int tnfdemo_plugin_hello(void)
{
	printf("plugin: hello\n");
	TNF_PROBE_2(plugin_hello, "demo plugin", "", tnf_int, answer, 42, tnf_double, ratio, 0.5);
	return 42;
}
