// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_usdt: a program whose TNF probes are also USDT probes, of provider
 * tl_usdt (TNF_USDT_PROVIDER, set for this file), for test_usdt.
 *   tl_usdt fire N PLUGIN         fire every probe N times, then dlopen
 *                                 PLUGIN (libtl_plug.so, provider tnf) and
 *                                 fire its tl_plug_tick N times; no
 *                                 controller: the TNF probes stay disabled
 *   tl_usdt traced FILE N PLUGIN  the same with every probe enabled and
 *                                 traced into FILE (tnfctl_internal_open),
 *                                 the plugin's after its dlopen
 * Hit i (0 <= i < N) of each probe has these values:
 *   usdt_zero   (none)
 *   usdt_ints   i: i - 2; neg: -1000000007 * (i + 1); b: 250 + i (a uint8)
 *   usdt_mix    s: -i (a short); p: 0x1000 + i (opaque); d: 0.5 * i (a
 *               double); c: 42 (a constant); str: "usdt"
 *   tl_plug_tick  i: i
 * and the program prints "fired N" (or "traced N probes K") at the end.
 */
#define TNF_USDT_PROVIDER tl_usdt

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tnf/probe.h>
#include <tnf/tnfctl.h>

static tnfctl_errcode_t on(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_errcode_t err = tnfctl_probe_enable(h, p, NULL);

	(*(int *)cd)++;
	return err ? err : tnfctl_probe_trace(h, p, NULL);
}

static void fire(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		TNF_PROBE_0(usdt_zero, "tl usdt", "");
		TNF_PROBE_3(usdt_ints, "tl usdt", "", tnf_int, i, i - 2, tnf_long, neg,
			    -1000000007L * (i + 1), tnf_uint8, b, (uint8_t)(250 + i));
		TNF_PROBE_5(usdt_mix, "tl usdt", "", tnf_short, s, (short)-i, tnf_opaque, p,
			    (void *)(uintptr_t)(0x1000 + i), tnf_double, d, 0.5 * i, tnf_ulong, c,
			    42, tnf_string, str, "usdt");
	}
}

int main(int argc, char **argv)
{
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err;
	void (*plug)(int);
	int n, k = 0;
	void *dl;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 4 && !strcmp(argv[1], "fire")) {
		n = atoi(argv[2]);
	} else if (argc == 5 && !strcmp(argv[1], "traced")) {
		n = atoi(argv[3]);
		err = tnfctl_internal_open(&h);
		if (!err)
			err = tnfctl_buffer_alloc(h, argv[2], 1024 * 1024);
		if (!err)
			err = tnfctl_probe_apply(h, on, &k);
		if (err) {
			printf("tnfctl %s\n", tnfctl_strerror(err));
			return 1;
		}
	} else {
		fprintf(stderr, "usage: tl_usdt fire N PLUGIN | traced FILE N PLUGIN\n");
		return 2;
	}
	fire(n);
	dl = dlopen(argv[argc - 1], RTLD_NOW);
	plug = dl ? (void (*)(int))dlsym(dl, "tlplug_fire") : NULL;
	if (!plug) {
		printf("dlopen %s\n", dlerror());
		return 1;
	}
	if (h) {
		k = 0;
		err = tnfctl_check_libs(h);
		if (!err)
			err = tnfctl_probe_apply(h, on, &k);
		if (err) {
			printf("tnfctl %s\n", tnfctl_strerror(err));
			return 1;
		}
	}
	plug(n);
	if (h) {
		printf("traced %d probes %d\n", n, k);
		return tnfctl_close(h, TNFCTL_TARG_DEFAULT);
	}
	printf("fired %d\n", n);
	return 0;
}
