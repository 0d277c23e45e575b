// SPDX-License-Identifier: BSD-2-Clause
/*
 * USDT probes as probes of a handle: their attributes, their state and
 * what enable/trace mean for them.  A USDT probe has no control block: it
 * is "enabled and traced" in the controller, which then holds uprobes on
 * its sites (usdt_trace.c); either off, and they are gone.  As a TNF
 * probe, a fresh one is disabled and traced.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "objfile.h"
#include "usdt.h"

/*
 * TNFCTL_USDT_STRINGS="provider:name:I[,J...] ...": the arguments I, J
 * (from 0) of provider:name are read as C strings (a `char *` in the
 * target) instead of recorded as integers.  Either part may be "*".
 * Read again whenever a probe that is not attached is looked at or
 * switched (tnf_usdt_refresh): a controller (prex's `usdt strings`) may
 * set it between calls.
 */
static uint32_t strings_of(const char *prov, const char *name)
{
	const char *env = getenv("TNFCTL_USDT_STRINGS"), *s;
	uint32_t mask = 0;
	char item[256];
	int len;

	for (s = env; s && *s; s += len) {
		char *p, *n, *a, *tok;

		s += strspn(s, " \t");
		len = (int)strcspn(s, " \t");
		if (!len || len >= (int)sizeof(item))
			continue;
		memcpy(item, s, (size_t)len);
		item[len] = '\0';
		p = item;
		n = strchr(p, ':');
		a = n ? strchr(n + 1, ':') : NULL;
		if (!a)
			continue;
		*n++ = '\0';
		*a++ = '\0';
		if ((strcmp(p, "*") && strcmp(p, prov)) || (strcmp(n, "*") && strcmp(n, name)))
			continue;
		for (tok = strtok(a, ","); tok; tok = strtok(NULL, ",")) {
			char *end;
			long i = strtol(tok, &end, 10);

			if (!*end && i >= 0 && i < TNF_USDT_MAX_ARGS)
				mask |= 1u << i;
		}
	}
	return mask;
}

/* The TNF type the writer gives its records: arg0.. as tnf_int64 or tnf_string. */
static int build_kp(struct tnf_usdt *u)
{
	size_t len = strlen(u->name) + strlen(u->provider) + 64 + 8 * (size_t)u->nargs;
	char *a = malloc(len);
	int i, nstr = 0, off;

	if (!a)
		return -1;
	off = snprintf(a, len, "name %s;slots", u->name);
	for (i = 0; i < u->nargs; i++)
		off += snprintf(a + off, len - (size_t)off, " arg%d", i);
	snprintf(a + off, len - (size_t)off, ";keys usdt %s", u->provider);
	u->kp.cb.attrs = a;
	u->kp.nfields = u->nargs;
	for (i = 0; i < u->nargs; i++) {
		struct kt_field *f = &u->kp.fields[i];

		f->off = (uint16_t)(8 * i);
		f->size = 8;
		f->str = -1;
		f->kind = TNF_K_INT64;
		if (u->strmask & (1u << i) && nstr < KT_MAX_STRS) {
			f->kind = TNF_K_STRING;
			f->str = (int8_t)nstr++;
		}
	}
	return 0;
}

struct tnf_usdt *tnf_usdt_new(struct tnfctl_handle *h, const struct tnf_usdt_def *d,
			      const char *path)
{
	struct tnf_usdt *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->provider = strdup(d->provider);
	u->name = strdup(d->name);
	u->path = strdup(path);
	u->pid = h->pr.ops.p_getpid(h->pr.proc);
	u->nargs = d->nargs;
	u->strmask = strings_of(d->provider, d->name) & ((1u << d->nargs) - 1);
	u->sites = d->sites;
	u->traced = true;
	if (!u->provider || !u->name || !u->path || build_kp(u)) {
		tnf_usdt_free(u);
		return NULL;
	}
	return u;
}

char *tnf_usdt_attrs(const struct tnf_usdt *u, unsigned sites)
{
	const char *slots = strstr(u->kp.cb.attrs, ";slots") + 7;
	size_t slen = strcspn(slots, ";");
	char strs[64] = "";
	char *a = NULL;
	int i, off = 0;

	for (i = 0; i < u->nargs; i++)
		if (u->strmask & (1u << i))
			off += snprintf(strs + off, sizeof(strs) - (size_t)off, "%s%d",
					off ? " " : ";strings ", i);
	if (asprintf(&a, "name %s;provider %s;keys usdt %s;args %d;slots %.*s;sites %u%s", u->name,
		     u->provider, u->provider, u->nargs, (int)slen, slots, sites, strs) < 0)
		return NULL;
	return a;
}

/* @p, not attached, gets the string mask @mask (a new TNF type); -1 on ENOMEM. */
static int set_mask(struct tnfctl_probe_handle *p, uint32_t mask)
{
	struct tnf_usdt *u = p->usdt;
	char *attrs;

	if (mask == u->strmask)
		return 0;
	/* a new TNF type: records written with the old one keep theirs */
	tnf_usdt_forget(u);
	free((char *)u->kp.cb.attrs);
	memset(&u->kp, 0, sizeof(u->kp));
	u->strmask = mask;
	attrs = build_kp(u) ? NULL : tnf_usdt_attrs(u, u->sites);
	if (!attrs) {
		u->strmask = UINT32_MAX; /* no mask is that: tried again next time */
		return -1;
	}
	free(p->attrs);
	p->attrs = attrs;
	return 0;
}

int tnf_usdt_refresh(struct tnfctl_probe_handle *p)
{
	struct tnf_usdt *u = p->usdt;

	/* attached, it keeps the record layout its uprobes were given */
	if (u->link)
		return 0;
	return set_mask(p, strings_of(u->provider, u->name) & ((1u << u->nargs) - 1));
}

/*
 * @c, a FORK child's probe, takes the state of @pu, its parent's copy: the
 * same string mask, enabled and traced, and then its own uprobes (the
 * kernel gives a child none of its parent's: a perf uprobe event filters
 * on the one process it was opened for).  Not attached: left disabled.
 */
tnfctl_errcode_t tnf_usdt_inherit(struct tnfctl_handle *ch, struct tnfctl_probe_handle *c,
				  const struct tnf_usdt *pu)
{
	struct tnf_usdt *u = c->usdt;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;

	if (pu->strmask != UINT32_MAX && set_mask(c, pu->strmask))
		return TNFCTL_ERR_ALLOCFAIL;
	u->enabled = pu->enabled;
	u->traced = pu->traced;
	if (u->enabled && u->traced)
		err = tnf_usdt_attach(ch, u);
	if (err)
		u->enabled = false;
	return err;
}

tnfctl_errcode_t tnf_usdt_set(struct tnfctl_handle *h, struct tnfctl_probe_handle *p, int what,
			      bool on)
{
	struct tnf_usdt *u = p->usdt;
	bool *field = what == TNF_KP_ENABLE ? &u->enabled : &u->traced, old = *field;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;

	/* a forked child's copy: the uprobes and the session are the parent's */
	if (tnf_client_inherited(h))
		return TNFCTL_ERR_INTERNAL;

	if (tnf_usdt_refresh(p))
		return TNFCTL_ERR_ALLOCFAIL;
	*field = on;
	if (u->enabled && u->traced && !u->link)
		err = tnf_usdt_attach(h, u);
	else if (!(u->enabled && u->traced))
		tnf_usdt_detach(u);
	if (err)
		*field = old; /* not attached: the state stays as it was */
	return err;
}

void tnf_usdt_state(struct tnfctl_probe_handle *p, tnfctl_probe_state_t *st)
{
	memset(st, 0, sizeof(*st));
	st->id = p->id;
	st->attr_string = p->attrs;
	st->enabled = p->usdt->enabled ? B_TRUE : B_FALSE;
	st->traced = p->usdt->traced ? B_TRUE : B_FALSE;
	st->new_probe = p->new_probe ? B_TRUE : B_FALSE;
	st->obj_name = p->obj ? p->obj->name : NULL;
	st->client_registered_data = p->client_data;
}

void tnf_usdt_free(struct tnf_usdt *u)
{
	if (!u)
		return;
	tnf_usdt_detach(u);
	tnf_usdt_forget(u);
	free((char *)u->kp.cb.attrs);
	free(u->provider);
	free(u->name);
	free(u->path);
	free(u);
}
