// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_prex - libFuzzer target for prex's command language: the lexer, the
 * parser, selector compilation (regcomp of /regex/ specs), sets, function
 * aliases, the history, and the matching of selectors against probe
 * attribute strings (enable, trace, connect, list probes, list values ...).
 *
 * An input is a prex script.  It is cut into logical lines as prex's
 * source_read() does (backslash-newline joins, a line with a NUL byte is
 * refused) and each goes through the real parse_line().  The controlled
 * process is a fake: targets_foreach() and the few tnfctl_probe_*
 * functions prex calls are defined here over four probes held in memory,
 * so nothing is started or traced.  A comment line "#!attrs TEXT" sets the
 * attribute string of the fourth probe (a comment to prex itself).
 * `source` opens nothing; `quit` unwinds to the next input.  Every input
 * starts with no sets, functions or history.  Output goes to /dev/null.
 * Build: make fuzz (build/fuzz/fuzz_prex).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/prex/prex.h"

/* ---- what main.c, source.c and target.c give the parser ---- */

struct prex_opts g_opt = {.argv0 = "prex", .size = PREX_DEFAULT_SIZE};
char g_tracefile[PATH_MAX];
char g_tracefile_given[PATH_MAX];
static jmp_buf quit_jmp;
static int continues;

void prex_request_continue(void)
{
	continues++;
}

void prex_quit(tnfctl_targ_op_t op)
{
	longjmp(quit_jmp, 1 + (int)op);
}

int source_push(const char *path)
{
	(void)path;
	errno = ENOENT;
	return -1;
}

bool source_full(void)
{
	return false;
}

void source_set_line(int line)
{
	(void)line;
}

void syntax_error(int line, const char *tok)
{
	printf("syntax error line %d near %s\n", line, tok);
}

static void vmsg(const char *fmt, va_list ap)
{
	vprintf(fmt, ap);
	putchar('\n');
}

void semantic_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void prex_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/* ---- a fake target with four probes ---- */

#define NPROBES 4
#define MAXFUNCS 4

struct tnfctl_probe_handle {
	ulong_t id;
	char attrs[512];
	boolean_t enabled, traced;
	const char *funcs[MAXFUNCS + 1];
	char func_store[MAXFUNCS][64];
	int nfuncs;
};

static struct tnfctl_probe_handle probes[NPROBES];
static const char *const base_attrs[NPROBES] = {
	("name demo_start;keys demo main;file examples/demo/tnfdemo.c;line 218;"
	 "sunw%debug 'demo starts';slots argv0"),
	"name plugin_hello;keys plugin 'two words' x;file plugin.c;line 12;slots answer ratio",
	"name ;keys;file ;line 0;",
};

static void probes_reset(void)
{
	int i;

	memset(probes, 0, sizeof(probes));
	for (i = 0; i < NPROBES; i++) {
		probes[i].id = (ulong_t)i;
		probes[i].traced = B_TRUE;
		probes[i].funcs[0] = NULL;
		if (base_attrs[i])
			snprintf(probes[i].attrs, sizeof(probes[i].attrs), "%s", base_attrs[i]);
	}
}

int targets_count(void)
{
	return 2; /* two processes (prex -f): the "process N:" paths */
}

void targets_foreach(target_fn *fn, void *cd)
{
	fn((tnfctl_handle_t *)probes, 4242, "/tmp/trace-4242", cd);
	fn((tnfctl_handle_t *)probes, 4243, NULL, cd);
}

tnfctl_errcode_t tnfctl_probe_apply(tnfctl_handle_t *h, tnfctl_probe_op_t op, void *cd)
{
	tnfctl_errcode_t err;
	int i;

	for (i = 0; i < NPROBES; i++)
		if ((err = op(h, &probes[i], cd)))
			return err;
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t target_probe_apply(tnfctl_handle_t *h, tnfctl_probe_op_t op, void *cd)
{
	return tnfctl_probe_apply(h, op, cd);
}

tnfctl_errcode_t tnfctl_probe_state_get(tnfctl_handle_t *h, tnfctl_probe_t *p,
					tnfctl_probe_state_t *st)
{
	(void)h;
	memset(st, 0, sizeof(*st));
	st->id = p->id;
	st->attr_string = p->attrs;
	st->enabled = p->enabled;
	st->traced = p->traced;
	st->obj_name = p->id & 1 ? "/usr/lib/libplugin.so" : NULL;
	st->func_names = p->funcs;
	return TNFCTL_ERR_NONE;
}

#define SETTER(fn, field, val)                                                                     \
	tnfctl_errcode_t fn(tnfctl_handle_t *h, tnfctl_probe_t *p, void *ignored)                  \
	{                                                                                          \
		(void)h;                                                                           \
		(void)ignored;                                                                     \
		p->field = val;                                                                    \
		return TNFCTL_ERR_NONE;                                                            \
	}
SETTER(tnfctl_probe_enable, enabled, B_TRUE)
SETTER(tnfctl_probe_disable, enabled, B_FALSE)
SETTER(tnfctl_probe_trace, traced, B_TRUE)
SETTER(tnfctl_probe_untrace, traced, B_FALSE)

tnfctl_errcode_t tnfctl_probe_disconnect_all(tnfctl_handle_t *h, tnfctl_probe_t *p, void *ignored)
{
	(void)h;
	(void)ignored;
	p->nfuncs = 0;
	p->funcs[0] = NULL;
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnfctl_probe_connect(tnfctl_handle_t *h, tnfctl_probe_t *p, const char *lib_base,
				      const char *func)
{
	(void)h;
	(void)lib_base;
	if (p->nfuncs == MAXFUNCS)
		return TNFCTL_ERR_BADARG; /* an error path of cmd.c */
	snprintf(p->func_store[p->nfuncs], sizeof(p->func_store[0]), "%s", func);
	p->funcs[p->nfuncs] = p->func_store[p->nfuncs];
	p->funcs[++p->nfuncs] = NULL;
	return TNFCTL_ERR_NONE;
}

const char *tnfctl_strerror(tnfctl_errcode_t err)
{
	return err ? "fake error" : "No error";
}

/* ---- the input ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!getenv("FUZZ_VERBOSE") && !freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 2);
	size_t pos = 0;
	int line = 1;

	if (!text)
		return 0;
	probes_reset();
	sets_reset();
	history_reset();
	/* prex defines these at start-up (main.c) */
	parse_line("create &debug tnf_probe_debug\n", 0);
	parse_line("create $all /.*/\n", 0);
	if (setjmp(quit_jmp)) {
		free(text);
		return 0;
	}
	while (pos < size) {
		size_t len = 0;
		bool nul = false;
		int first = line;

		/* one logical line: physical lines joined while they end in '\' */
		while (pos < size) {
			char c = (char)data[pos++];

			if (c == '\n') {
				line++;
				if (len && text[len - 1] == '\\') {
					text[len++] = c;
					continue;
				}
				break;
			}
			if (!c) {
				nul = true;
				c = ' ';
			}
			text[len++] = c;
		}
		text[len++] = '\n';
		text[len] = '\0';
		if (nul) {
			syntax_error(first, "\\0");
			continue;
		}
		if (len > 8 && !strncmp(text, "#!attrs ", 8)) {
			text[len - 1] = '\0';
			snprintf(probes[NPROBES - 1].attrs, sizeof(probes[0].attrs), "%s", text + 8);
			continue;
		}
		parse_line(text, first);
	}
	free(text);
	return 0;
}
