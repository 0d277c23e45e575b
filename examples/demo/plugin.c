// SPDX-License-Identifier: BSD-2-Clause
/* The plugin tnfdemo dlopens, so a tracer sees a library map and unmap. */
#include <stdio.h>

__attribute__((constructor)) static void plugin_init(void)
{
	printf("plugin: loaded\n");
}

__attribute__((visibility("default"))) int tnfdemo_plugin_hello(void)
{
	printf("plugin: hello\n");
	return 42;
}
