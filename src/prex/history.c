// SPDX-License-Identifier: BSD-2-Clause
/*
 * The history: every probe-control command, in order, with its selector
 * list bound when it was typed (a $set is copied then, so redefining the set
 * later changes nothing here).  When a target maps a new object, libtnfctl
 * calls history_replay() for each of its probes at the DLOPEN stop, before
 * the object's constructors run, so a constructor's probes obey commands
 * typed before the object existed.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "prex.h"

struct hcmd {
	enum cmd_kind kind;
	char *fcn; /* connect: the alias, looked up at each use */
	struct exprlist *l;
};

static struct hcmd *hist;
static int nhist;

__thread int history_no_replay;
__thread pid_t history_pid;
__thread int history_need_file;
__thread int history_in_command;

void history_add(enum cmd_kind kind, const char *fcn, struct exprlist *l)
{
	struct hcmd *nh = realloc(hist, (nhist + 1) * sizeof(*hist));

	if (!nh) {
		perror("prex");
		exit(1);
	}
	hist = nh;
	hist[nhist].kind = kind;
	hist[nhist].fcn = fcn ? strdup(fcn) : NULL;
	hist[nhist].l = exprlist_get(l);
	nhist++;
}

void history_reset(void)
{
	int i;

	for (i = 0; i < nhist; i++) {
		free(hist[i].fcn);
		exprlist_put(hist[i].l);
	}
	free(hist);
	hist = NULL;
	nhist = 0;
}

void history_list(void)
{
	static const char *const names[] = {
		[CMD_ENABLE] = "enable", [CMD_DISABLE] = "disable", [CMD_CONNECT] = "connect",
		[CMD_CLEAR] = "clear",	 [CMD_TRACE] = "trace",	    [CMD_UNTRACE] = "untrace",
	};
	int i;

	for (i = 0; i < nhist; i++) {
		printf("[%d] %-7s ", i, names[hist[i].kind]);
		if (hist[i].kind == CMD_CONNECT)
			printf("&%s ", hist[i].fcn);
		exprlist_print(stdout, hist[i].l);
		putchar('\n');
	}
}

/*
 * A USDT probe's failure, named: the generic line that follows does not
 * say which probe, nor which file could not be made.
 */
static void usdt_error(const char *attrs, tnfctl_errcode_t err)
{
	const char *n = strstr(attrs, ";name "), *pv = strstr(attrs, ";provider ");
	const char *file = getenv("TNFCTL_USDT_FILE");
	char who[32] = "", why[PATH_MAX + 64] = "";
	int e = errno;

	if (!strstr(attrs, ";keys usdt ") || !n || !pv)
		return;
	n += 6;
	pv += 10;
	if (history_pid) /* prex -f: which process */
		snprintf(who, sizeof(who), "process %d: ", (int)history_pid);
	if (file && (err == TNFCTL_ERR_FILENOTFOUND || err == TNFCTL_ERR_ACCES))
		snprintf(why, sizeof(why), " (its records file %s)", file);
	else if (err == TNFCTL_ERR_ALLOCFAIL && (e == EMFILE || e == ENFILE))
		snprintf(why, sizeof(why), " (%s)", strerror(e));
	prex_msg("%sUSDT probe %.*s:%.*s: %s%s", who, (int)strcspn(pv, ";"), pv,
		 (int)strcspn(n, ";"), n, tnfctl_strerror(err), why);
}

tnfctl_errcode_t cmd_apply_probe(tnfctl_handle_t *h, tnfctl_probe_t *p, enum cmd_kind kind,
				 const char *fcn, const struct exprlist *l)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	char *attrs = probe_attrs(h, p);
	const char *entry;

	if (exprlist_match(l, attrs)) {
		switch (kind) {
		case CMD_ENABLE:
			err = tnfctl_probe_enable(h, p, NULL);
			break;
		case CMD_DISABLE:
			err = tnfctl_probe_disable(h, p, NULL);
			break;
		case CMD_TRACE:
			err = tnfctl_probe_trace(h, p, NULL);
			break;
		case CMD_UNTRACE:
			err = tnfctl_probe_untrace(h, p, NULL);
			break;
		case CMD_CLEAR:
			err = tnfctl_probe_disconnect_all(h, p, NULL);
			break;
		case CMD_CONNECT:
			entry = fcn_entry(fcn);
			err = entry ? tnfctl_probe_connect(h, p, NULL, entry) : TNFCTL_ERR_BADARG;
			break;
		}
		if (err)
			usdt_error(attrs, err);
	}
	free(attrs);
	return err;
}

/*
 * A fork child's USDT probe that the history leaves enabled and traced
 * (a probe starts disabled and traced), disabled: its copy could not be
 * attached, or its parent's was not (a named process's children).
 * Enabled here, or named with its error.
 */
tnfctl_errcode_t history_usdt_retry(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_probe_state_t st;
	bool enabled = false, traced = true;
	tnfctl_errcode_t err;
	char *attrs;
	int i;

	(void)cd;
	if (tnfctl_probe_state_get(h, p, &st) || st.enabled || !st.attr_string ||
	    !strstr(st.attr_string, ";keys usdt "))
		return TNFCTL_ERR_NONE;
	attrs = probe_attrs(h, p);
	for (i = 0; attrs && i < nhist; i++) {
		if (!exprlist_match(hist[i].l, attrs))
			continue;
		if (hist[i].kind == CMD_ENABLE || hist[i].kind == CMD_DISABLE)
			enabled = hist[i].kind == CMD_ENABLE;
		else if (hist[i].kind == CMD_TRACE || hist[i].kind == CMD_UNTRACE)
			traced = hist[i].kind == CMD_TRACE;
	}
	if (attrs && enabled && traced) {
		err = tnfctl_probe_enable(h, p, NULL);
		if (err)
			usdt_error(attrs, err);
	}
	free(attrs);
	return TNFCTL_ERR_NONE;
}

/* Whether a command of the history enables probes. */
bool history_enables(void)
{
	int i;

	for (i = 0; i < nhist; i++)
		if (hist[i].kind == CMD_ENABLE)
			return true;
	return false;
}

tnfctl_errcode_t history_apply_probe(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	int i;

	(void)cd;
	for (i = 0; i < nhist && !err; i++)
		err = cmd_apply_probe(h, p, hist[i].kind, hist[i].fcn, hist[i].l);
	return err;
}

void *history_replay(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_errcode_t err;

	/* a fork child's copy of a probe already has the parent's state */
	if (history_no_replay)
		return NULL;
	err = history_apply_probe(h, p, NULL);
	if (err == TNFCTL_ERR_NOBUF)
		history_need_file = 1; /* prex -f: the caller makes it and replays */
	else if (err && !history_in_command)
		prex_msg("error on a new (dlopened) probe: %s", tnfctl_strerror(err));
	return NULL;
}
