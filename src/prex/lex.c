// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tokens of one logical line of prex input (reference §5.2):
 *   IDENT [a-zA-Z_.%][a-zA-Z0-9_.%]*, unless it is a reserved word
 *   $IDENT (set), &IDENT (function), 'exact' (no newline or quote inside),
 *   /regex/ (\/ stands for a slash), [0-9]+[kKmM]? (scaled by 1024 or
 *   1048576), '=' and ','; '#' comments to the end of the line (a
 *   trailing backslash included); a backslash-newline is a blank; anything
 *   else (a CR too) is one INVAL character.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "prex.h"

const char *const lex_words[] = {
	"add",	  "alloc",   "buffer", "clear",	  "connect", "continue", "create",  "dealloc",
	"delete", "disable", "enable", "fcns",	  "filter",  "help",	 "history", "tracefile",
	"kill",	  "ktrace",  "list",   "off",	  "on",	     "pfilter",	 "probes",  "quit",
	"resume", "sets",    "source", "suspend", "trace",   "untrace",	 "values",  NULL,
};

static bool ident_start(int c)
{
	return isalpha(c) || c == '_' || c == '.' || c == '%';
}

static bool ident_char(int c)
{
	return ident_start(c) || isdigit(c);
}

static char *xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r) {
		perror("prex");
		exit(1);
	}
	return r;
}

static int push(struct token **toks, int *n, int *cap, struct token t)
{
	if (*n == *cap) {
		struct token *nt;

		*cap = *cap ? *cap * 2 : 16;
		nt = realloc(*toks, *cap * sizeof(**toks));
		if (!nt) {
			perror("prex");
			exit(1);
		}
		*toks = nt;
	}
	(*toks)[(*n)++] = t;
	return 0;
}

static enum tok keyword(const char *s, size_t n)
{
	int i;

	for (i = 0; lex_words[i]; i++)
		if (strlen(lex_words[i]) == n && !strncmp(lex_words[i], s, n))
			return K_ADD + i;
	return T_IDENT;
}

/* The closing quote of the 'string' at @p, or NULL if it is not closed on its line. */
const char *lex_string_end(const char *p)
{
	const char *q = p + 1 + strcspn(p + 1, "'\n");

	return *q == '\'' ? q : NULL;
}

/*
 * The closing slash of the /regex/ at @p, or NULL if it is not closed on
 * its line; a backslash escapes any character, as in the original.
 */
const char *lex_regex_end(const char *p)
{
	const char *q = p + 1;

	while (*q && *q != '\n' && *q != '/')
		q += (q[0] == '\\' && q[1] && q[1] != '\n') ? 2 : 1;
	return *q == '/' ? q : NULL;
}

int lex_line(const char *text, int first_line, struct token **toks, int *ntoks)
{
	const char *p = text;
	int line = first_line, n = 0, cap = 0;

	*toks = NULL;
	for (;;) {
		struct token t = {.line = line};
		const char *s = p;

		/* A CR is no blank (an INVAL token), as in the original. */
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (p[0] == '\\' && p[1] == '\n') {
			p += 2;
			line++;
			continue;
		}
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (*p == '\n' || !*p) {
			t.type = T_EOL;
			t.raw = xstrndup("\\n", 2);
			t.text = xstrndup("", 0);
			push(toks, &n, &cap, t);
			break;
		}
		if (ident_start((unsigned char)*p)) {
			while (ident_char((unsigned char)*p))
				p++;
			t.type = keyword(s, p - s);
			t.text = xstrndup(s, p - s);
		} else if ((*p == '$' || *p == '&') && ident_start((unsigned char)p[1])) {
			p++;
			while (ident_char((unsigned char)*p))
				p++;
			t.type = *s == '$' ? T_SETNAME : T_FCNNAME;
			t.text = xstrndup(s + 1, p - s - 1);
		} else if (*p == '\'' && lex_string_end(p)) {
			size_t len = lex_string_end(p) - p - 1;

			t.type = T_VALSTR;
			t.text = xstrndup(p + 1, len);
			p += len + 2;
		} else if (*p == '/') {
			/* a regex runs to the next unescaped slash on this line */
			const char *q = lex_regex_end(p);
			char *out;
			size_t k = 0;

			if (!q) {
				p++;
				t.type = T_INVAL;
				t.text = xstrndup(s, 1);
			} else {
				out = xstrndup(p + 1, q - p - 1);
				for (p = out; *p; p++) {
					if (p[0] == '\\' && p[1] == '/')
						p++;
					else if (p[0] == '\\' && p[1])
						out[k++] = *p++; /* the pair stays for regcomp */
					out[k++] = *p;
				}
				out[k] = '\0';
				t.type = T_REGEXP;
				t.text = out;
				p = q + 1;
			}
		} else if (isdigit((unsigned char)*p)) {
			unsigned long v = 0;
			bool big = false; /* saturated: no wrap to a small size or pid */

			for (; isdigit((unsigned char)*p); p++) {
				big |= __builtin_mul_overflow(v, 10UL, &v);
				big |= __builtin_add_overflow(v, (unsigned long)(*p - '0'), &v);
			}
			if (*p == 'k' || *p == 'K')
				big |= __builtin_mul_overflow(v, 1024UL, &v), p++;
			else if (*p == 'm' || *p == 'M')
				big |= __builtin_mul_overflow(v, 1024UL * 1024, &v), p++;
			if (big)
				v = ULONG_MAX;
			t.type = T_INT;
			t.ival = v;
			t.text = xstrndup(s, p - s);
		} else if (*p == '=' || *p == ',') {
			t.type = *p == '=' ? T_EQ : T_COMMA;
			p++;
			t.text = xstrndup(s, 1);
		} else {
			p++;
			t.type = T_INVAL;
			t.text = xstrndup(s, 1);
		}
		t.raw = xstrndup(s, p - s);
		push(toks, &n, &cap, t);
	}
	*ntoks = n;
	return 0;
}

void lex_free(struct token *toks, int ntoks)
{
	int i;

	for (i = 0; i < ntoks; i++) {
		free(toks[i].text);
		free(toks[i].raw);
	}
	free(toks);
}
