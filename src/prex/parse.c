// SPDX-License-Identifier: BSD-2-Clause
/*
 * Statements (one per logical line), parsed by recursive descent over the
 * line's tokens and run when the whole line is valid:
 *
 *   enable|disable|trace|untrace|clear   $set | selector...
 *   connect &fcn                         $set | selector...
 *   create $set selector...  |  create &fcn IDENT
 *   list [spec...] probes $set | selector...
 *   list values spec...  |  list sets|fcns|history|tracefile
 *   source 'file'|IDENT  |  help [word]  |  continue  |  quit [kill|resume|suspend]
 *   buffer [alloc [INT] | dealloc]  |  ktrace [on|off]
 *   pfilter [on | off | add|delete INT[,INT]...]
 *   usdt strings provider name INT[,INT]...
 *
 *   selector := spec '=' spec | spec      spec := IDENT | 'string' | /regex/
 *
 * A syntax error names the first token that does not fit; the rest of the
 * line is dropped.  A semantic error (bad regex, unknown set or function,
 * ...) drops the statement.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prex.h"

struct parser {
	struct token *t;
	int n, i;
	bool bad;  /* a syntax error was reported */
	bool sel;  /* in or after a selector list: a number or reserved word there wants quotes */
	bool quit; /* `quit`: done once the tokens are freed */
	tnfctl_targ_op_t quit_op;
};

static struct token *peek(struct parser *p)
{
	return &p->t[p->i < p->n ? p->i : p->n - 1];
}

static struct token *next(struct parser *p)
{
	struct token *t = peek(p);

	if (p->i < p->n - 1)
		p->i++;
	return t;
}

static void fail_at(struct parser *p, struct token *t)
{
	if (!p->bad) {
		syntax_error(t->line, t->raw);
		if (p->sel && (t->type == T_INT || (t->type >= K_ADD && t->type < K_LAST)))
			prex_msg("numbers and the words prex reserves are quoted in selectors: "
				 "line='221', 'enable'='on'");
	}
	p->bad = true;
}

static void fail(struct parser *p)
{
	fail_at(p, peek(p));
}

static bool accept(struct parser *p, enum tok type)
{
	if (peek(p)->type != type)
		return false;
	next(p);
	return true;
}

static bool expect_eol(struct parser *p)
{
	if (peek(p)->type == T_EOL)
		return true;
	fail(p);
	return false;
}

static bool is_spec(enum tok t)
{
	return t == T_IDENT || t == T_VALSTR || t == T_REGEXP;
}

static struct spec *parse_spec(struct parser *p)
{
	struct token *t = next(p);

	source_set_line(t->line);
	return spec_new(t->text, t->type == T_REGEXP);
}

/* selector*: always a list (maybe empty), NULL after an error */
static struct exprlist *parse_exprlist(struct parser *p)
{
	struct exprlist *l = exprlist_new();

	p->sel = true;
	while (is_spec(peek(p)->type)) {
		struct spec *left = parse_spec(p), *right;

		if (accept(p, T_EQ)) {
			if (!is_spec(peek(p)->type)) {
				fail(p);
				spec_free(left);
				break;
			}
			right = parse_spec(p);
		} else {
			/* a bare value selects on keys */
			right = left;
			left = spec_new("keys", false);
		}
		exprlist_add(l, left, right);
	}
	if (p->bad) {
		exprlist_put(l);
		return NULL;
	}
	return l;
}

/* spec*: a list of specs with no left side */
static struct exprlist *parse_speclist(struct parser *p)
{
	struct exprlist *l = exprlist_new();

	p->sel = true;
	while (is_spec(peek(p)->type))
		exprlist_add(l, NULL, parse_spec(p));
	return l;
}

static void parse_probe_cmd(struct parser *p, enum cmd_kind kind)
{
	const char *fcn = NULL;
	struct exprlist *l;

	if (kind == CMD_CONNECT) {
		if (peek(p)->type != T_FCNNAME)
			return fail(p);
		fcn = next(p)->text;
	}
	if (peek(p)->type == T_SETNAME) {
		const char *set = next(p)->text;

		p->sel = true;
		if (expect_eol(p))
			cmd_probe(kind, fcn, set, NULL);
		return;
	}
	l = parse_exprlist(p);
	if (l && expect_eol(p))
		cmd_probe(kind, fcn, NULL, l);
	exprlist_put(l);
}

static void parse_create(struct parser *p)
{
	struct token *t = peek(p);
	struct exprlist *l;

	if (t->type == T_SETNAME || t->type == T_FCNNAME)
		next(p);
	if (t->type == T_SETNAME) {
		l = parse_exprlist(p);
		if (l && expect_eol(p))
			set_define(t->text, exprlist_get(l));
		exprlist_put(l);
	} else if (t->type == T_FCNNAME) {
		struct token *sym = peek(p);

		if (sym->type != T_IDENT)
			return fail(p);
		next(p);
		if (expect_eol(p))
			fcn_define(t->text, sym->text);
	} else {
		fail(p);
	}
}

static void parse_list(struct parser *p)
{
	struct exprlist *specs, *sel;
	struct token *t = peek(p);

	switch (t->type) {
	case K_SETS:
	case K_FCNS:
	case K_HISTORY:
	case K_TRACEFILE:
		next(p);
		if (!expect_eol(p))
			return;
		if (t->type == K_SETS)
			sets_list();
		else if (t->type == K_FCNS)
			fcns_list();
		else if (t->type == K_HISTORY)
			history_list();
		else
			cmd_list_tracefile();
		return;
	case K_VALUES:
		next(p);
		specs = parse_speclist(p);
		if (specs && expect_eol(p))
			list_values(specs);
		exprlist_put(specs);
		return;
	default:
		break;
	}
	specs = parse_speclist(p);
	if (!specs)
		return;
	if (!accept(p, K_PROBES)) {
		fail(p);
		exprlist_put(specs);
		return;
	}
	if (peek(p)->type == T_SETNAME) {
		const char *set = next(p)->text;

		p->sel = true;
		if (expect_eol(p))
			list_probes(specs, set, NULL);
	} else {
		sel = parse_exprlist(p);
		if (sel && expect_eol(p))
			list_probes(specs, NULL, sel);
		exprlist_put(sel);
	}
	exprlist_put(specs);
}

/* pid[,pid]...: malloc'ed in *@v, their number; -1 after a syntax error */
static int parse_pids(struct parser *p, unsigned long **v)
{
	int n = 0;

	*v = NULL;
	do {
		unsigned long *nv;

		if (peek(p)->type != T_INT) {
			fail(p);
			return -1;
		}
		nv = realloc(*v, (n + 1) * sizeof(*nv));
		if (!nv) {
			perror("prex");
			exit(1);
		}
		*v = nv;
		nv[n++] = next(p)->ival;
	} while (accept(p, T_COMMA));
	return n;
}

/*
 * The kernel-only commands: run in kernel mode; in user mode refused once
 * parsed, so that typos still get syntax errors.  @what is the word after
 * the command (T_EOL: none; T_INT: buffer alloc with a size).
 */
static void parse_kernel(struct parser *p, enum tok cmd)
{
	const struct kernel_ops *k = kernel_ops;
	enum tok what = peek(p)->type;
	unsigned long size = 0, *pids = NULL;
	int n = 0;

	if ((cmd == K_BUFFER && (what == K_ALLOC || what == K_DEALLOC)) ||
	    (cmd != K_BUFFER && (what == K_ON || what == K_OFF))) {
		next(p);
	} else if (cmd == K_PFILTER && (what == K_ADD || what == K_DELETE)) {
		next(p);
		n = parse_pids(p, &pids);
	} else {
		what = T_EOL;
	}
	if (what == K_ALLOC && peek(p)->type == T_INT) {
		size = next(p)->ival;
		what = T_INT;
	}
	if (n < 0 || !expect_eol(p))
		goto out;
	if (!k) {
		cmd_kernel_only(lex_words[cmd - K_ADD]);
	} else if (cmd == K_BUFFER) {
		if (what == K_ALLOC || what == T_INT)
			k->buffer_alloc(size, what == T_INT);
		else if (what == K_DEALLOC)
			k->buffer_dealloc();
		else
			k->buffer_show();
	} else if (cmd == K_KTRACE) {
		if (what == T_EOL)
			k->ktrace_show();
		else
			k->ktrace_set(what == K_ON);
	} else if (what == K_ADD) {
		k->pfilter_add(pids, n);
	} else if (what == K_DELETE) {
		k->pfilter_delete(pids, n);
	} else if (what == T_EOL) {
		k->pfilter_show();
	} else {
		k->pfilter_set(what == K_ON);
	}
out:
	free(pids);
}

/*
 * usdt strings provider name I[,J]...: `usdt` and `strings` are plain
 * words (not reserved: `keys=usdt` and the `strings` attribute stay as
 * they are); provider and name are words or 'quoted' ('*': any).
 */
static void parse_usdt(struct parser *p)
{
	struct token *prov, *name, *w = next(p);
	unsigned long *args;
	int n;

	if (w->type != T_IDENT || strcmp(w->text, "strings"))
		return fail_at(p, w);
	prov = peek(p);
	if (prov->type != T_IDENT && prov->type != T_VALSTR)
		return fail(p);
	next(p);
	name = peek(p);
	if (name->type != T_IDENT && name->type != T_VALSTR)
		return fail(p);
	next(p);
	n = parse_pids(p, &args);
	if (n > 0 && expect_eol(p))
		cmd_usdt_strings(prov->text, name->text, args, n);
	free(args);
}

static void statement(struct parser *p)
{
	struct token *t = next(p);
	struct token *w;

	source_set_line(t->line);
	switch (t->type) {
	case T_EOL:
		return;
	case K_ENABLE:
		return parse_probe_cmd(p, CMD_ENABLE);
	case K_DISABLE:
		return parse_probe_cmd(p, CMD_DISABLE);
	case K_TRACE:
		return parse_probe_cmd(p, CMD_TRACE);
	case K_UNTRACE:
		return parse_probe_cmd(p, CMD_UNTRACE);
	case K_CLEAR:
		return parse_probe_cmd(p, CMD_CLEAR);
	case K_CONNECT:
		return parse_probe_cmd(p, CMD_CONNECT);
	case K_CREATE:
		return parse_create(p);
	case K_LIST:
		return parse_list(p);
	case K_SOURCE:
		w = peek(p);
		if (w->type != T_VALSTR && w->type != T_IDENT) {
			fail(p);
			/* a path with / or - is no IDENT: say how to write it */
			prex_msg("a file name that is not a plain word goes in single quotes: "
				 "source '/path/to/file'");
			return;
		}
		next(p);
		if (expect_eol(p) && source_push(w->text))
			semantic_error("cannot open \"%s\": %s", w->text,
				       source_full() ? "files sourced too deeply (a loop?)"
						     : strerror(errno));
		return;
	case K_HELP:
		w = peek(p);
		if (w->type == T_EOL)
			return help_general();
		if (w->type != T_IDENT && (w->type < K_ADD || w->type >= K_LAST))
			return fail(p);
		next(p);
		if (expect_eol(p))
			help_on(w->text);
		return;
	case K_CONTINUE:
		/* the kernel never stops: ignored there, as in the original */
		if (expect_eol(p) && !kernel_ops)
			prex_request_continue();
		return;
	case K_QUIT:
		if (accept(p, K_KILL))
			p->quit_op = TNFCTL_TARG_KILL;
		else if (accept(p, K_RESUME))
			p->quit_op = TNFCTL_TARG_RESUME;
		else if (accept(p, K_SUSPEND))
			p->quit_op = TNFCTL_TARG_SUSPEND;
		else
			p->quit_op = TNFCTL_TARG_DEFAULT;
		p->quit = expect_eol(p);
		return;
	case K_BUFFER:
	case K_KTRACE:
	case K_PFILTER:
		return parse_kernel(p, t->type);
	case T_IDENT:
		if (!strcmp(t->text, "usdt"))
			return parse_usdt(p);
		return fail_at(p, t);
	default:
		return fail_at(p, t);
	}
}

void parse_line(const char *text, int first_line)
{
	struct parser p = {0};

	lex_line(text, first_line, &p.t, &p.n);
	statement(&p);
	lex_free(p.t, p.n);
	fflush(stdout);
	if (p.quit)
		prex_quit(p.quit_op);
	/* after every statement, an empty or a failed one too, as the original */
	if (kernel_ops)
		kernel_ops->after_statement();
}
