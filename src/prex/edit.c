// SPDX-License-Identifier: BSD-2-Clause
/*
 * Line editing on a terminal (libedit): emacs key bindings, a history of
 * the lines typed (up/down arrows, ^P/^N), and Tab completion of reserved
 * words, $set names and &function names.  Only used when stdin is a tty.
 */
#include <errno.h>
#include <histedit.h>
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

/* The @i-th candidate word for a word starting with @first, NULL past the end. */
static const char *candidate(char first, int i, char *buf, size_t len)
{
	const char *name;

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

static unsigned char complete(EditLine *e, int ch)
{
	const LineInfo *li = el_line(e);
	const char *start = li->cursor, *match = NULL;
	char buf[256], common[256] = "";
	size_t wlen, clen = 0;
	int i, nmatch = 0;

	(void)ch;
	while (start > li->buffer && !strchr(" \t=", start[-1]))
		start--;
	wlen = li->cursor - start;
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
		match = c;
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
