// SPDX-License-Identifier: BSD-2-Clause
/*
 * Selectors and matching (reference §5.3, attribute grammar §3.2).
 *
 * A spec is an exact string (strcmp) or an ed(1)-style regex (POSIX basic,
 * as the original's libgen compile/step), matched unanchored (a match
 * anywhere; ^ and $ anchor).  A selector is
 * `left=right`; it matches a probe when some ;-unit of the probe's string
 * has a name matching left and a value matching right.  A selector list is
 * the OR of its selectors.  The string of a probe is
 *	enable on|off; trace on|off; object <obj>; funcs[ <f>...];<attr_string>
 * with function names that have an alias shown as &alias.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prex.h"

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		perror("prex");
		exit(1);
	}
	return p;
}

static const char *bracket_end(const char *p)
{
	/* p is just past '[': a leading '^' and a leading ']' are literal */
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p && *p != ']'; p++)
		if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *q = strchr(p + 2, p[1]);

			while (q && q[1] != ']')
				q = strchr(q + 1, p[1]);
			if (!q)
				return p + strlen(p);
			p = q + 1;
		}
	return p; /* at ']' or the end */
}

/*
 * The original's dialect in glibc's basic syntax: a backslash before an
 * ordinary character is that character (glibc's \+ \? \| \w ... are
 * GNU extensions the original did not have), \n is a newline.  \( \)
 * \{ \} \1-\9 \< \> and the escaped specials stay.  Returns a malloc'ed
 * string.
 */
static char *bre_of(const char *re)
{
	char *out = xmalloc(strlen(re) + 1), *o = out;
	const char *p, *end;

	for (p = re; *p; p++) {
		if (*p == '[') {
			/* a bracket expression is copied as it is */
			end = bracket_end(p + 1);
			memcpy(o, p, end - p + (*end != '\0'));
			o += end - p + (*end != '\0');
			p = *end ? end : end - 1;
			continue;
		}
		if (*p != '\\' || !p[1]) {
			*o++ = *p;
			continue;
		}
		p++;
		if (*p == 'n') {
			*o++ = '\n';
		} else if (strchr("(){}<>.*[]^$\\", *p) || (*p >= '1' && *p <= '9')) {
			*o++ = '\\';
			*o++ = *p;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

/*
 * glibc's regcomp copies the tree under a repetition once per repeat
 * (\{m,n\} max(m,n) times), so stacked or nested repetitions grow it
 * exponentially: /\(\(a\{99\}\)\{99\}\)\{99\}/ wants hundreds of GB.  This
 * estimates the tree size of a basic regex (atoms, with the copies) so
 * that such a regex is refused before regcomp sees it.
 */
#define REGEX_MAX_NODES 100000.0

static double regex_nodes(const char *re)
{
	double stack[64], last = 0; /* stack[d]: size of open group d so far */
	int depth = 0;
	const char *p;

	stack[0] = 0;
	for (p = re; *p; p++) {
		double factor = 0;

		if (p[0] == '\\' && p[1] == '(') {
			if (depth == 63)
				return REGEX_MAX_NODES + 1;
			stack[++depth] = 0;
			last = 0;
			p++;
			continue;
		}
		if (p[0] == '\\' && p[1] == ')' && depth > 0) {
			last = stack[depth--] + 1;
			p++;
		} else if (p[0] == '\\' && p[1] == '{') {
			char *end;
			unsigned long m = strtoul(p + 2, &end, 10), n = m;

			if (*end == ',')
				n = isdigit((unsigned char)end[1]) ? strtoul(end + 1, &end, 10) : m,
				end++;
			if (end[0] == '\\' && end[1] == '}')
				p = end + 1;
			else
				p++;
			factor = (double)(m > n ? m : n) + 1;
		} else if (*p == '*') {
			factor = 1;
		} else if (*p == '[') {
			p = bracket_end(p + 1);
			if (!*p)
				p--;
			last = 1;
		} else {
			if (p[0] == '\\' && p[1])
				p++;
			last = 1;
		}
		if (factor) {
			/* the repeated item is copied: replace its size by size * factor */
			stack[depth] += last * (factor - 1);
			last *= factor;
		} else {
			stack[depth] += last;
		}
		if (stack[depth] > REGEX_MAX_NODES)
			return stack[depth];
	}
	while (depth > 0) {
		stack[depth - 1] += stack[depth];
		depth--;
	}
	return stack[0];
}

/*
 * Nor is size the only cost: glibc's epsilon closures cost time quadratic
 * in copies of an item that can match nothing (/\(\(e*\)\{150\}\)\{150\}/:
 * 12 s), and worse when they nest.  No cheap rule bounds them all, so a
 * child process tries the regcomp first, for REGEX_COMPILE_SECONDS at
 * most; the regex is compiled here only if the child managed.
 * With at most one repetition operator no such nesting or copying exists
 * (the size bound above is enough), so the common regex needs no child.
 * True if it did, or if no child could be made (then it is compiled here).
 */
#define REGEX_COMPILE_SECONDS 1

/*
 * The child's verdicts, by regex: the same regex typed again (a script,
 * a set redefined) pays no fork, and a refused one not its second again.
 * Bounded: past REGEX_CACHE_MAX regexes the oldest verdict is forgotten.
 */
#define REGEX_CACHE_MAX 64

static struct {
	char *re; /* as given to regcomp, NULL in an unused slot */
	bool ok;
} regex_cache[REGEX_CACHE_MAX];
static unsigned int regex_cache_next; /* the slot filled next, oldest first */

/* With TNFCTL_DEBUG, which regex the child checked, and which verdict was reused. */
static void regex_debug(const char *str, const char *what)
{
	if (getenv("TNFCTL_DEBUG"))
		prex_msg("debug: regex /%s/: %s", str, what);
}

static int regex_cache_find(const char *re)
{
	int i;

	for (i = 0; i < REGEX_CACHE_MAX; i++)
		if (regex_cache[i].re && !strcmp(regex_cache[i].re, re))
			return i;
	return -1;
}

static void regex_cache_add(const char *re, bool ok)
{
	char *copy = strdup(re);
	unsigned int i = regex_cache_next++ % REGEX_CACHE_MAX;

	if (!copy)
		return; /* only a cache: checked again next time */
	free(regex_cache[i].re);
	regex_cache[i].re = copy;
	regex_cache[i].ok = ok;
}

static bool regex_compiles_in_time(const char *re, const char *str)
{
	int st, reps = 0, hit;
	const char *p;
	pid_t pid;

	for (p = re; *p; p++)
		reps += *p == '*' || (p[0] == '\\' && p[1] == '{');
	if (reps <= 1)
		return true;
	hit = regex_cache_find(re);
	if (hit >= 0) {
		regex_debug(str, "verdict of an earlier check reused");
		return regex_cache[hit].ok;
	}
	regex_debug(str, "checked in a child process");
	pid = fork();
	if (pid < 0)
		return true;
	if (pid == 0) {
		sigset_t alrm;
		regex_t r;

		sigemptyset(&alrm);
		sigaddset(&alrm, SIGALRM);
		sigprocmask(SIG_UNBLOCK, &alrm, NULL);
		signal(SIGALRM, SIG_DFL);
		alarm(REGEX_COMPILE_SECONDS);
		_exit(regcomp(&r, re, REG_NOSUB) == 0 ? 0 : 1);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return true;
	/* another signal than the alarm (a kill from outside) is no verdict */
	if (!WIFSIGNALED(st) || WTERMSIG(st) == SIGALRM)
		regex_cache_add(re, !WIFSIGNALED(st));
	return !WIFSIGNALED(st);
}

struct spec *spec_new(const char *str, bool regex)
{
	struct spec *s = xmalloc(sizeof(*s));
	char *bre = NULL;
	int err = 0;

	s->regex = regex;
	s->invalid = false;
	s->str = strdup(str);
	if (!s->str) {
		perror("prex");
		exit(1);
	}
	if (!regex)
		return s;
	bre = bre_of(str);
	if (!*bre) {
		/* ed's "no remembered search string": prex has none */
		semantic_error("invalid regular expression /%s/: empty", str);
	} else if (regex_nodes(bre) > REGEX_MAX_NODES) {
		semantic_error("invalid regular expression /%s/: too many repetitions of "
			       "repetitions",
			       str);
	} else if (!regex_compiles_in_time(bre, str)) {
		semantic_error("invalid regular expression /%s/: too complex (does not compile in "
			       "%d s)",
			       str, REGEX_COMPILE_SECONDS);
	} else if ((err = regcomp(&s->re, bre, REG_NOSUB))) {
		char why[256];

		regerror(err, &s->re, why, sizeof(why));
		semantic_error("invalid regular expression /%s/: %s", str, why);
	} else {
		free(bre);
		return s;
	}
	/* The original still runs the command, with this spec matching nothing. */
	free(bre);
	s->invalid = true;
	return s;
}

void spec_free(struct spec *s)
{
	if (!s)
		return;
	if (s->regex && !s->invalid)
		regfree(&s->re);
	free(s->str);
	free(s);
}

bool spec_match(const struct spec *s, const char *str)
{
	if (s->invalid)
		return false;
	if (s->regex)
		return regexec(&s->re, str, 0, NULL, 0) == 0;
	return strcmp(s->str, str) == 0;
}

void spec_print(FILE *fp, const struct spec *s)
{
	const char *p;

	if (!s->regex) {
		fprintf(fp, "'%s'", s->str);
		return;
	}
	/* written back the way it is typed: a slash inside is \/ */
	fputc('/', fp);
	for (p = s->str; *p; p++) {
		if (*p == '/')
			fputc('\\', fp);
		fputc(*p, fp);
	}
	fputc('/', fp);
}

struct exprlist *exprlist_new(void)
{
	struct exprlist *l = xmalloc(sizeof(*l));

	l->refs = 1;
	return l;
}

void exprlist_add(struct exprlist *l, struct spec *left, struct spec *right)
{
	struct expr *v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v) {
		perror("prex");
		exit(1);
	}
	l->v = v;
	l->v[l->n].left = left;
	l->v[l->n].right = right;
	l->n++;
}

struct exprlist *exprlist_get(struct exprlist *l)
{
	if (l)
		l->refs++;
	return l;
}

void exprlist_put(struct exprlist *l)
{
	int i;

	if (!l || --l->refs > 0)
		return;
	for (i = 0; i < l->n; i++) {
		spec_free(l->v[i].left);
		spec_free(l->v[i].right);
	}
	free(l->v);
	free(l);
}

/* `'left'=right ` per selector; a speclist (no left side) prints its specs. */
void exprlist_print(FILE *fp, const struct exprlist *l)
{
	int i;

	for (i = 0; l && i < l->n; i++) {
		if (l->v[i].left) {
			spec_print(fp, l->v[i].left);
			fputc('=', fp);
		}
		spec_print(fp, l->v[i].right);
		fputc(' ', fp);
	}
}

/*
 * Units are separated by ';' outside single quotes.  In a unit, leading
 * blanks are skipped, the name runs to the next blank, and the values are
 * what follows that one blank (so "keys a b" has name "keys", values "a b").
 */
void attr_walk(const struct spec *s, const char *attrs, attr_fn *fn, void *cd)
{
	const char *p = attrs;

	while (*p) {
		const char *u = p, *end;
		bool quoted = false;
		char *unit, *name, *values;
		size_t n;

		for (end = u; *end && (quoted || *end != ';'); end++)
			if (*end == '\'')
				quoted = !quoted;
		p = *end ? end + 1 : end;
		unit = strndup(u, end - u);
		if (!unit) {
			perror("prex");
			exit(1);
		}
		name = unit + strspn(unit, " \t");
		n = strcspn(name, " \t");
		if (n) {
			values = name + n;
			if (*values)
				*values++ = '\0';
			if (spec_match(s, name))
				fn(name, values, cd);
		}
		free(unit);
	}
}

/*
 * Values are blank-separated tokens; a single-quoted span is one token
 * without its quotes.  An empty value string is tested once, as "".
 */
void val_walk(const struct spec *s, const char *values, val_fn *fn, void *cd)
{
	char *buf = strdup(values), *p = buf, *tok;

	if (!buf) {
		perror("prex");
		exit(1);
	}
	if (!*values) {
		if (spec_match(s, ""))
			fn("", cd);
		free(buf);
		return;
	}
	while (*p) {
		char *end, save;

		p += strspn(p, " \t");
		if (!*p)
			break;
		if (*p == '\'') {
			tok = ++p;
			end = p += strcspn(p, "'");
			if (*p)
				p++;
		} else {
			/* a quote right after a word ends it and opens a span */
			tok = p;
			end = p += strcspn(p, " \t'");
		}
		save = *end;
		*end = '\0';
		if (spec_match(s, tok))
			fn(tok, cd);
		*end = save;
	}
	free(buf);
}

struct match_args {
	const struct spec *right;
	bool found;
};

static void value_found(const char *value, void *cd)
{
	(void)value;
	((struct match_args *)cd)->found = true;
}

static void unit_found(const char *name, const char *values, void *cd)
{
	struct match_args *m = cd;

	(void)name;
	if (!m->found)
		val_walk(m->right, values, value_found, m);
}

bool exprlist_match(const struct exprlist *l, const char *attrs)
{
	int i;

	for (i = 0; l && i < l->n; i++) {
		struct match_args m = {.right = l->v[i].right};

		attr_walk(l->v[i].left, attrs, unit_found, &m);
		if (m.found)
			return true;
	}
	return false;
}

char *probe_attrs(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_probe_state_t st;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;
	int i;

	if (tnfctl_probe_state_get(h, p, &st) != TNFCTL_ERR_NONE)
		return strdup("");
	fp = open_memstream(&buf, &len);
	if (!fp) {
		perror("prex");
		exit(1);
	}
	fprintf(fp, "enable %s; trace %s; ", st.enabled ? "on" : "off", st.traced ? "on" : "off");
	if (st.obj_name)
		fprintf(fp, "object %s; ", st.obj_name);
	fputs("funcs", fp);
	for (i = 0; st.func_names && st.func_names[i]; i++) {
		const char *alias = fcn_alias_of(st.func_names[i]);

		if (alias)
			fprintf(fp, " &%s", alias);
		else
			fprintf(fp, " %s", st.func_names[i]);
	}
	fprintf(fp, ";%s", st.attr_string ? st.attr_string : "");
	fclose(fp);
	return buf;
}
