// SPDX-License-Identifier: BSD-2-Clause
/*
 * `list [specs] probes $set|selectors`: one line per matching probe with
 * `attr=values ` for each unit whose name a spec matches (`<no value>` for
 * an empty one, `<no attr> ` when no unit matched a spec); the default specs
 * are name enable trace file line funcs.
 * `list values specs`: each matching attribute name in sorted order,
 * `name =`, then its distinct values, sorted, one per indented line.
 */
#include <stdlib.h>
#include <string.h>

#include "prex.h"

struct lp_args {
	const struct exprlist *specs, *sel;
};

static void print_unit(const char *name, const char *values, void *cd)
{
	*(bool *)cd = true;
	printf("%s=%s ", name, *values ? values : "<no value>");
}

static tnfctl_errcode_t list_one(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct lp_args *a = cd;
	char *attrs = probe_attrs(h, p);
	int i;

	if (exprlist_match(a->sel, attrs)) {
		for (i = 0; i < a->specs->n; i++) {
			bool seen = false;

			attr_walk(a->specs->v[i].right, attrs, print_unit, &seen);
			if (!seen)
				printf("<no attr> ");
		}
		putchar('\n');
	}
	free(attrs);
	return TNFCTL_ERR_NONE;
}

static void list_target(tnfctl_handle_t *h, pid_t pid, const char *tracefile, void *cd)
{
	tnfctl_errcode_t err;

	(void)tracefile;
	/* several processes (prex -f): say whose probes follow */
	if (targets_count() > 1)
		printf("process %d:\n", (int)pid);
	err = tnfctl_probe_apply(h, list_one, cd);
	if (err)
		semantic_error("listing error: %s", tnfctl_strerror(err));
}

static struct exprlist *default_specs(void)
{
	static const char *const names[] = {"name", "enable", "trace", "file", "line", "funcs"};
	static struct exprlist *l;
	size_t i;

	if (!l) {
		l = exprlist_new();
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			exprlist_add(l, NULL, spec_new(names[i], false));
	}
	return l;
}

void list_probes(struct exprlist *speclist, const char *setname, struct exprlist *sel)
{
	struct lp_args a;

	if (setname) {
		sel = set_find(setname);
		if (!sel) {
			/* the original's words here (enable $nosuch names the set) */
			semantic_error("missing or invalid set");
			return;
		}
	}
	a.specs = speclist && speclist->n ? speclist : default_specs();
	a.sel = sel;
	targets_foreach(list_target, &a);
}

/* ---- list values ---- */

struct strv {
	char **v;
	int n;
};

struct attrv {
	char *name;
	struct strv vals;
};

struct lv_args {
	const struct exprlist *specs;
	struct attrv *attrs;
	int n;
	struct attrv *cur;
};

static void strv_add(struct strv *s, const char *str)
{
	char **nv;
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return;
	nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	if (!nv || !(nv[s->n] = strdup(str))) {
		perror("prex");
		exit(1);
	}
	s->v = nv;
	s->n++;
}

static void add_value(const char *value, void *cd)
{
	strv_add(&((struct lv_args *)cd)->cur->vals, value);
}

static void add_unit(const char *name, const char *values, void *cd)
{
	static struct spec *all;
	struct lv_args *a = cd;
	int i;

	if (!all)
		all = spec_new(".*", true);
	for (i = 0; i < a->n; i++)
		if (!strcmp(a->attrs[i].name, name))
			break;
	if (i == a->n) {
		struct attrv *na = realloc(a->attrs, (a->n + 1) * sizeof(*na));

		if (!na || !(na[a->n].name = strdup(name))) {
			perror("prex");
			exit(1);
		}
		na[a->n].vals.v = NULL;
		na[a->n].vals.n = 0;
		a->attrs = na;
		a->n++;
	}
	a->cur = &a->attrs[i];
	val_walk(all, values, add_value, a);
}

static tnfctl_errcode_t scan_one(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	struct lv_args *a = cd;
	char *attrs = probe_attrs(h, p);
	int i;

	for (i = 0; i < a->specs->n; i++)
		attr_walk(a->specs->v[i].right, attrs, add_unit, a);
	free(attrs);
	return TNFCTL_ERR_NONE;
}

static void scan_target(tnfctl_handle_t *h, pid_t pid, const char *tracefile, void *cd)
{
	tnfctl_errcode_t err = tnfctl_probe_apply(h, scan_one, cd);

	(void)pid;
	(void)tracefile;
	if (err)
		semantic_error("probe traversal error: %s", tnfctl_strerror(err));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_attr(const void *a, const void *b)
{
	return strcmp(((const struct attrv *)a)->name, ((const struct attrv *)b)->name);
}

void list_values(struct exprlist *speclist)
{
	struct lv_args a = {.specs = speclist};
	int i, j;

	if (!speclist)
		return;
	targets_foreach(scan_target, &a);
	if (!a.n) /* no attribute matched: qsort must not get a NULL array */
		return;
	qsort(a.attrs, a.n, sizeof(*a.attrs), cmp_attr);
	for (i = 0; i < a.n; i++) {
		if (a.attrs[i].vals.n)
			qsort(a.attrs[i].vals.v, a.attrs[i].vals.n, sizeof(char *), cmp_str);
		printf("%s =\n", a.attrs[i].name);
		for (j = 0; j < a.attrs[i].vals.n; j++) {
			printf("\t   %s\n", a.attrs[i].vals.v[j]);
			free(a.attrs[i].vals.v[j]);
		}
		free(a.attrs[i].vals.v);
		free(a.attrs[i].name);
	}
	free(a.attrs);
}

/* Every value of the attribute @attr over all probes, sorted; NULL if none. */
char **attr_values(const char *attr, int *n)
{
	struct exprlist *l = exprlist_new();
	struct lv_args a;
	char **v = NULL;
	int i;

	exprlist_add(l, NULL, spec_new(attr, false));
	a = (struct lv_args){.specs = l};
	targets_foreach(scan_target, &a);
	exprlist_put(l);
	*n = 0;
	for (i = 0; i < a.n; i++) {
		/* one attribute matched exactly: its values are the answer */
		v = a.attrs[i].vals.v;
		*n = a.attrs[i].vals.n;
		free(a.attrs[i].name);
	}
	free(a.attrs);
	if (*n)
		qsort(v, *n, sizeof(char *), cmp_str);
	return v;
}
