// SPDX-License-Identifier: BSD-2-Clause
/*
 * Named sets ($name = a selector list) and function aliases (&name = a
 * target symbol), kept in definition order.  Redefining a name replaces the
 * old definition and moves it to the end of the list, as the original did;
 * the history keeps its own references, so it is not affected (early
 * binding).
 */
#include <stdlib.h>
#include <string.h>

#include "prex.h"

struct named {
	char *name;
	struct exprlist *l; /* sets */
	char *entry;	    /* functions */
};

static struct named *sets, *fcns;
static int nsets, nfcns;

static struct named *find(struct named *v, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static struct named *add(struct named **v, int *n, const char *name)
{
	struct named *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv || !(nv[*n].name = strdup(name))) {
		perror("prex");
		exit(1);
	}
	*v = nv;
	nv[*n].l = NULL;
	nv[*n].entry = NULL;
	return &nv[(*n)++];
}

/* The entry for @name, moved to the end of @v (a new one if there is none). */
static struct named *define(struct named **v, int *n, const char *name)
{
	struct named *old = find(*v, *n, name), keep;

	if (!old)
		return add(v, n, name);
	keep = *old;
	memmove(old, old + 1, (size_t)(*v + *n - old - 1) * sizeof(*old));
	(*v)[*n - 1] = keep;
	return &(*v)[*n - 1];
}

void set_define(const char *name, struct exprlist *l)
{
	struct named *s = define(&sets, &nsets, name);

	exprlist_put(s->l);
	s->l = l;
}

struct exprlist *set_find(const char *name)
{
	struct named *s = find(sets, nsets, name);

	return s ? s->l : NULL;
}

void sets_list(void)
{
	int i;

	for (i = 0; i < nsets; i++) {
		printf("$%-8s ", sets[i].name);
		exprlist_print(stdout, sets[i].l);
		putchar('\n');
	}
}

void fcn_define(const char *name, const char *entry)
{
	struct named *f = define(&fcns, &nfcns, name);

	free(f->entry);
	f->entry = strdup(entry);
	if (!f->entry) {
		perror("prex");
		exit(1);
	}
}

const char *fcn_entry(const char *name)
{
	struct named *f = find(fcns, nfcns, name);

	return f ? f->entry : NULL;
}

const char *fcn_alias_of(const char *entry)
{
	int i;

	for (i = 0; i < nfcns; i++)
		if (!strcmp(fcns[i].entry, entry))
			return fcns[i].name;
	return NULL;
}

void fcns_list(void)
{
	int i;

	/* the original's columns, the symbol padded too */
	for (i = 0; i < nfcns; i++)
		printf("&%-8s %-24s\n", fcns[i].name, fcns[i].entry);
}

const char *set_name_at(int i)
{
	return i < nsets ? sets[i].name : NULL;
}

const char *fcn_name_at(int i)
{
	return i < nfcns ? fcns[i].name : NULL;
}

/* Forgets every set and function (a fresh start: the parser fuzzer). */
void sets_reset(void)
{
	int i;

	for (i = 0; i < nsets; i++) {
		free(sets[i].name);
		exprlist_put(sets[i].l);
	}
	for (i = 0; i < nfcns; i++) {
		free(fcns[i].name);
		free(fcns[i].entry);
	}
	free(sets);
	free(fcns);
	sets = fcns = NULL;
	nsets = nfcns = 0;
}
