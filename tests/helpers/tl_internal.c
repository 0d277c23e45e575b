// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_internal: a program that controls its own probes with
 * tnfctl_internal_open (linked with libtnfctl and libtnfprobe).
 *   tl_internal run FILE PLUGIN  trace its own probes into FILE, dlopen
 *                                PLUGIN and trace its probes too; prints one
 *                                line per step
 *   tl_internal simple FILE      open, create FILE, enable every probe, fire 5
 *   tl_internal try              print and exit with internal_open's error
 *   tl_internal hold             open, print "held", wait for EOF on stdin
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tnf/probe.h>
#include <tnf/tnfctl.h>

/*
 * Enable and trace every TNF probe; count them.  USDT probes of other
 * objects (a sanitizer runtime pulls in libstdc++ and its three) are
 * left alone: the counts printed are of this program's own probes.
 */
static tnfctl_errcode_t on(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_probe_state_t st;
	tnfctl_errcode_t err;

	err = tnfctl_probe_state_get(h, p, &st);
	if (err)
		return err;
	if (strstr(st.attr_string, ";keys usdt "))
		return TNFCTL_ERR_NONE;
	err = tnfctl_probe_enable(h, p, NULL);
	(*(int *)cd)++;
	return err ? err : tnfctl_probe_trace(h, p, NULL);
}

static void fire(int n)
{
	int i;

	for (i = 0; i < n; i++)
		TNF_PROBE_1(tl_self_tick, "tl self", "", tnf_int, i, i);
}

int main(int argc, char **argv)
{
	tnfctl_handle_t *h, *h2;
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;
	void (*plug)(int);
	void *dl;
	int n = 0;
	char c;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2)
		return 2;
	err = tnfctl_internal_open(&h);
	if (!strcmp(argv[1], "try")) {
		printf("open %d\n", err);
		return err;
	}
	if (err) {
		printf("open %d\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "simple") && argc >= 3) {
		/* open, file, enable, fire: nothing else touches the loader first */
		err = tnfctl_buffer_alloc(h, argv[2], 256 * 1024);
		if (!err)
			err = tnfctl_probe_apply(h, on, &n);
		fire(5);
		printf("simple %d probes %d\n", err, n);
		return tnfctl_close(h, TNFCTL_TARG_DEFAULT);
	}
	if (!strcmp(argv[1], "hold")) {
		printf("held\n");
		while (read(0, &c, 1) > 0)
			;
		return tnfctl_close(h, TNFCTL_TARG_DEFAULT);
	}
	if (argc < 4)
		return 2;
	fire(1); /* disabled: no record */
	printf("second %d\n", tnfctl_internal_open(&h2));
	printf("enable-nobuf %d\n", tnfctl_probe_apply(h, on, &n));
	printf("alloc %d\n", tnfctl_buffer_alloc(h, argv[2], 256 * 1024));
	n = 0;
	err = tnfctl_probe_apply(h, on, &n);
	printf("apply %d probes %d\n", err, n);
	tnfctl_trace_attrs_get(h, &a);
	printf("attrs %s %zu %d\n", a.trace_file_name ? a.trace_file_name : "(null)",
	       a.trace_buf_size, a.trace_buf_state);
	fire(3);
	dl = dlopen(argv[3], RTLD_NOW);
	plug = dl ? (void (*)(int))dlsym(dl, "tlplug_fire") : NULL;
	n = 0;
	err = tnfctl_probe_apply(h, on, &n);
	printf("apply-after-dlopen %d probes %d\n", err, n);
	if (plug)
		plug(2);
	printf("close %d\n", tnfctl_close(h, TNFCTL_TARG_DEFAULT));
	printf("reopen %d\n", tnfctl_internal_open(&h2));
	tnfctl_close(h2, TNFCTL_TARG_DEFAULT);
	return 0;
}
