// SPDX-License-Identifier: BSD-2-Clause
/*
 * Line editing on a terminal (libedit): emacs key bindings, a history of
 * the lines typed (up/down arrows, ^P/^N), and Tab completion of reserved
 * words, $set names, &function names and, after ATTR=, the values of ATTR
 * among the probes (name= completes probe names).  Only used when stdin is
 * a tty.
 */
#include <errno.h>
#include <histedit.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "prex.h"

static EditLine *el;
static History *hist;
static const char *cur_prompt = "";

static char *prompt_fn(EditLine *e)
{
	(void)e;
	return (char *)cur_prompt;
}

/* After ATTR=: the values of ATTR among the probes (the word is a value). */
static bool value_mode;
static char **values;
static int nvalues;

#define IDENT_FIRST "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.%"

/* A value as it must be typed: an identifier as is, else in single quotes. */
static const char *typed_value(const char *v, char *buf, size_t len)
{
	bool ident =
		*v && strchr(IDENT_FIRST, *v) && strspn(v, IDENT_FIRST "0123456789") == strlen(v);
	int i;

	for (i = 0; ident && lex_words[i]; i++)
		if (!strcmp(lex_words[i], v))
			ident = false;
	if (ident)
		return v;
	snprintf(buf, len, "'%s'", v);
	return buf;
}

/* The @i-th candidate word for a word starting with @first, NULL past the end. */
static const char *candidate(char first, int i, char *buf, size_t len)
{
	const char *name;

	if (value_mode)
		return i < nvalues ? typed_value(values[i], buf, len) : NULL;
	if (first == '$' || first == '&') {
		name = first == '$' ? set_name_at(i) : fcn_name_at(i);
		if (!name)
			return NULL;
		snprintf(buf, len, "%c%s", first, name);
		return buf;
	}
	if (i < K_LAST - K_ADD)
		return lex_words[i];
	i -= K_LAST - K_ADD;
	return help_topics[i];
}

static void load_values(const char *line, const char *eq);
static int complete_word(EditLine *e, const char *start, size_t wlen);

static unsigned char complete(EditLine *e, int ch)
{
	const LineInfo *li = el_line(e);
	const char *start = li->cursor;
	size_t wlen;
	int i;

	(void)ch;
	while (start > li->buffer && !strchr(" \t=", start[-1]))
		start--;
	wlen = li->cursor - start;
	value_mode = start > li->buffer && start[-1] == '=';
	if (value_mode)
		load_values(li->buffer, start - 1);
	i = complete_word(e, start, wlen);
	for (; nvalues > 0; nvalues--)
		free(values[nvalues - 1]);
	free(values);
	values = NULL;
	value_mode = false;
	return (unsigned char)i;
}

/* ATTR of "ATTR=" ending at @eq (quotes taken off): its values become the candidates. */
static void load_values(const char *line, const char *eq)
{
	const char *a = eq;
	char attr[256];
	size_t n;

	while (a > line && !strchr(" \t", a[-1]))
		a--;
	n = eq - a;
	if (n >= 2 && a[0] == '\'' && a[n - 1] == '\'')
		a++, n -= 2;
	if (!n || n >= sizeof(attr))
		return;
	memcpy(attr, a, n);
	attr[n] = '\0';
	values = attr_values(attr, &nvalues);
}

static int complete_word(EditLine *e, const char *start, size_t wlen)
{
	char buf[256], common[256] = "", match[256] = "";
	size_t clen = 0;
	int i, nmatch = 0;

	for (i = 0;; i++) {
		const char *c = candidate(wlen ? *start : 0, i, buf, sizeof(buf));

		if (!c)
			break;
		if (strncmp(c, start, wlen))
			continue;
		if (!nmatch++) {
			snprintf(common, sizeof(common), "%s", c);
			clen = strlen(common);
		} else {
			while (clen && strncmp(common, c, clen))
				clen--;
			common[clen] = '\0';
		}
		/* @c may be @buf, which the next candidate overwrites */
		snprintf(match, sizeof(match), "%s", c);
	}
	if (!nmatch)
		return CC_ERROR;
	if (nmatch == 1) {
		snprintf(common, sizeof(common), "%s ", match);
		clen = strlen(common);
	}
	if (clen > wlen) {
		el_insertstr(e, common + wlen);
		return CC_REFRESH;
	}
	/* ambiguous and nothing to add: show the choices */
	fputc('\n', stdout);
	for (i = 0;; i++) {
		const char *c = candidate(wlen ? *start : 0, i, buf, sizeof(buf));

		if (!c)
			break;
		if (!strncmp(c, start, wlen))
			printf("%s  ", c);
	}
	fputc('\n', stdout);
	return CC_REDISPLAY;
}

int edit_init(void)
{
	HistEvent ev;

	el = el_init(g_opt.argv0, stdin, stdout, stderr);
	if (!el)
		return -1;
	hist = history_init();
	if (hist) {
		history(hist, &ev, H_SETSIZE, 500);
		history(hist, &ev, H_SETUNIQUE, 1);
		el_set(el, EL_HIST, history, hist);
	}
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_PROMPT, prompt_fn);
	/*
	 * el_wset, not el_set: the narrow one wcsdup()s the name and help and
	 * el_end() never frees them (libedit; LeakSanitizer found it).
	 */
	el_wset(el, EL_ADDFN, L"prex-complete", L"complete a word", complete);
	el_set(el, EL_BIND, "^I", "prex-complete", NULL);
	el_source(el, NULL); /* the user's ~/.editrc, if any */
	return 0;
}

char *edit_getline(const char *prompt)
{
	const char *line;
	int n;

	cur_prompt = prompt;
	for (;;) {
		errno = 0;
		line = el_gets(el, &n);
		if (line || n == 0)
			break;
		if (errno != EINTR)
			break;
		if (prex_term_signal())
			prex_quit(TNFCTL_TARG_DEFAULT);
		/* ^C at the prompt drops the line being typed */
		fputc('\n', stdout);
		el_reset(el);
	}
	if (!line)
		return NULL;
	if (hist && line[strspn(line, " \t\n")]) {
		HistEvent ev;
		char *copy = strdup(line), *nl;

		if (copy) {
			nl = strchr(copy, '\n');
			if (nl)
				*nl = '\0';
			history(hist, &ev, H_ENTER, copy);
			free(copy);
		}
	}
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		return strdup(line);
	/* a line ended by ^D instead of Return */
	{
		char *r = malloc(n + 2);

		if (r) {
			memcpy(r, line, n);
			r[n] = '\n';
			r[n + 1] = '\0';
		}
		return r;
	}
}

void edit_end(void)
{
	if (el)
		el_end(el);
	if (hist)
		history_end(hist);
	el = NULL;
	hist = NULL;
}
