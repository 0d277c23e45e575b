// SPDX-License-Identifier: BSD-2-Clause
/*
 * The probe-control commands (enable, disable, trace, untrace, connect,
 * clear): recorded in the history, then applied at once to every matching
 * probe of every controlled process (or of the kernel, prex -k).  Also
 * `list tracefile` and the refusal of the kernel-only commands in user mode.
 */
#include <stdlib.h>
#include <string.h>

#include "prex.h"

const struct kernel_ops *kernel_ops;

struct apply_args {
	enum cmd_kind kind;
	const char *fcn;
	const struct exprlist *l;
};

static tnfctl_errcode_t apply_op(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct apply_args *a = cd;

	return cmd_apply_probe(h, p, a->kind, a->fcn, a->l);
}

static void apply_target(tnfctl_handle_t *h, pid_t pid, const char *tracefile, void *cd)
{
	tnfctl_errcode_t err;

	(void)tracefile;
	/* probes listed now (USDT, at the first probe call) replay the history quietly */
	history_in_command = 1;
	err = target_probe_apply(h, apply_op, cd);
	history_in_command = 0;
	if (err) {
		const char *hint =
			kernel_ops && err == TNFCTL_ERR_ALLOCFAIL ? PREX_KERNEL_CAP_HINT : "";

		if (targets_count() > 1)
			prex_msg("process %d: error on probe operation: %s%s", (int)pid,
				 tnfctl_strerror(err), hint);
		else
			prex_msg("error on probe operation: %s%s", tnfctl_strerror(err), hint);
	}
}

void cmd_probe(enum cmd_kind kind, const char *fcn, const char *setname, struct exprlist *l)
{
	struct apply_args a = {.kind = kind, .fcn = fcn};

	if (setname) {
		l = set_find(setname);
		if (!l) {
			semantic_error("no set named \"$%s\"", setname);
			return;
		}
		exprlist_get(l);
	} else {
		exprlist_get(l);
	}
	/* kernel probes have no functions (the original's help: "user only") */
	if (kernel_ops && (kind == CMD_CONNECT || kind == CMD_CLEAR)) {
		semantic_error("\"%s\" is not available in kernel mode: kernel probes have no "
			       "functions",
			       kind == CMD_CONNECT ? "connect" : "clear");
		exprlist_put(l);
		return;
	}
	if (kind == CMD_CONNECT && !fcn_entry(fcn)) {
		semantic_error("no function named \"&%s\"", fcn);
		exprlist_put(l);
		return;
	}
	history_add(kind, fcn, l);
	a.l = l;
	targets_foreach(apply_target, &a);
	exprlist_put(l);
}

static void print_tracefile(tnfctl_handle_t *h, pid_t pid, const char *tracefile, void *cd)
{
	(void)h;
	if (*(int *)cd > 1)
		printf("Trace file of process %d: %s\n", (int)pid,
		       tracefile ? tracefile : "(none)");
	else if (!g_opt.follow && g_tracefile_given[0])
		printf("Current trace file is: %s\n", g_tracefile_given); /* the original's line */
	else
		printf("Trace file: %s\n", tracefile ? tracefile : "(none)");
}

void cmd_list_tracefile(void)
{
	int n = targets_count();

	if (kernel_ops) {
		kernel_ops->list_tracefile();
		return;
	}
	targets_foreach(print_tracefile, &n);
}

/*
 * usdt strings: one more item of TNFCTL_USDT_STRINGS, which libtnfctl
 * reads again for each USDT probe not attached when it is listed or
 * switched.  Set while every target is stopped: no other thread of ours
 * reads the environment then.
 */
void cmd_usdt_strings(const char *prov, const char *name, const unsigned long *args, int n)
{
	const char *old = getenv("TNFCTL_USDT_STRINGS");
	size_t len = strlen(prov) + strlen(name) + 8 + 4 * (size_t)n + (old ? strlen(old) : 0);
	char *v;
	int i, off;

	if (kernel_ops) {
		semantic_error("\"usdt\" is not available in kernel mode");
		return;
	}
	if (strpbrk(prov, ": \t") || strpbrk(name, ": \t") || !*prov || !*name) {
		semantic_error("a USDT provider or name has no ':' nor blank");
		return;
	}
	for (i = 0; i < n; i++)
		if (args[i] >= PREX_USDT_MAX_ARGS) {
			semantic_error("USDT arguments are 0 to %d", PREX_USDT_MAX_ARGS - 1);
			return;
		}
	v = malloc(len);
	if (!v) {
		perror("prex");
		exit(1);
	}
	off = snprintf(v, len, "%s%s%s:%s:", old ? old : "", old && *old ? " " : "", prov, name);
	for (i = 0; i < n; i++)
		off += snprintf(v + off, len - (size_t)off, "%s%lu", i ? "," : "", args[i]);
	setenv("TNFCTL_USDT_STRINGS", v, 1);
	free(v);
}

void cmd_kernel_only(const char *what)
{
	/* the original's words, as a semantic error like the others here */
	semantic_error("\"%s\" is only available in kernel mode (prex invoked with the -k flag)",
		       what);
}
