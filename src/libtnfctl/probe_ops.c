// SPDX-License-Identifier: BSD-2-Clause
/*
 * Probe operations (tnfctl_probe_apply(3TNF), tnfctl_probe_state_get(3TNF)):
 * each change is one aligned pointer store into the probe's control block.
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tnf/probe.h>
#include "internal.h"
#include "objfile.h"
#include "tnf_runtime.h"
#include "usdt.h"

#define CB_OFF(f) offsetof(struct tnf_probe_control, f)
#define MAX_CHAIN TNF_CHAIN_POOL_SIZE /* a longer chain would need a cycle */

static int gen_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(unsigned long long *)data = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

/* Internal handles see their own dlopen/dlclose by the loader's counters. */
static tnfctl_errcode_t internal_resync(struct tnfctl_handle *h)
{
	unsigned long long gen = 0;

	if (h->pr.mode != TNF_MODE_INTERNAL)
		return TNFCTL_ERR_NONE;
	dl_iterate_phdr(gen_cb, &gen);
	if (gen == h->pr.dl_gen)
		return tnf_attrs_refresh(h);
	if (tnf_probes_sync(h))
		return TNFCTL_ERR_INTERNAL;
	return tnf_attrs_refresh(h);
}

/*
 * Lock @h and check it can take probe operations (on @p, if not NULL: one
 * its object took along is INVALIDPROBE first, as for a NOPROBES handle
 * past an EXEC, whose new image has nothing listed yet).  Unlocks on error.
 */
static tnfctl_errcode_t enter(struct tnfctl_handle *h, struct tnfctl_probe_handle *p)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;

	if (!h)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	err = p && p->owner == h && !p->valid ? TNFCTL_ERR_INVALIDPROBE : tnf_probes_usable_usdt(h);
	if (!err)
		err = internal_resync(h);
	if (err)
		pthread_mutex_unlock(&h->lock);
	return err;
}

static tnfctl_errcode_t check_probe(struct tnfctl_handle *h, struct tnfctl_probe_handle *p,
				    bool need_buf)
{
	if (!p || p->owner != h)
		return TNFCTL_ERR_BADARG;
	if (!p->valid)
		return TNFCTL_ERR_INVALIDPROBE;
	if (need_buf && h->attrs.trace_buf_state == TNFCTL_BUF_NONE)
		return TNFCTL_ERR_NOBUF;
	if (need_buf && h->attrs.trace_buf_state == TNFCTL_BUF_BROKEN)
		return TNFCTL_ERR_BUFBROKEN;
	return TNFCTL_ERR_NONE;
}

static tnfctl_errcode_t store(struct tnfctl_handle *h, struct tnfctl_probe_handle *p, size_t off,
			      uintptr_t val)
{
	tnfctl_errcode_t err = check_probe(h, p, true);

	return err ? err : tnf_write(h, p->addr + off, &val, sizeof(val));
}

/* A USDT probe of @h (its operations are usdt.c's). */
static bool is_usdt(struct tnfctl_handle *h, struct tnfctl_probe_handle *p)
{
	return p && p->owner == h && p->usdt;
}

/* @what (TNF_KP_*) set to @on: a store of @val at @off for a TNF probe. */
static tnfctl_errcode_t do_set(struct tnfctl_handle *h, struct tnfctl_probe_handle *p, int what,
			       bool on, size_t off, uintptr_t val)
{
	tnfctl_errcode_t err = enter(h, p);

	if (err)
		return err;
	if (is_usdt(h, p))
		err = !p->valid ? TNFCTL_ERR_INVALIDPROBE
		      : what	? tnf_usdt_set(h, p, what, on)
				: TNFCTL_ERR_NONE;
	else
		err = store(h, p, off, val);
	pthread_mutex_unlock(&h->lock);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_probe_enable(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)cd;
	if (h && h->pr.mode == TNF_MODE_KERNEL)
		return tnf_kernel_probe_set(h, p, TNF_KP_ENABLE, true);
	return do_set(h, p, TNF_KP_ENABLE, true, CB_OFF(test_func), h ? h->pr.rt.test : 0);
}

TNF_API tnfctl_errcode_t tnfctl_probe_disable(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)cd;
	if (h && h->pr.mode == TNF_MODE_KERNEL)
		return tnf_kernel_probe_set(h, p, TNF_KP_ENABLE, false);
	return do_set(h, p, TNF_KP_ENABLE, false, CB_OFF(test_func), 0);
}

TNF_API tnfctl_errcode_t tnfctl_probe_trace(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)cd;
	if (h && h->pr.mode == TNF_MODE_KERNEL)
		return tnf_kernel_probe_set(h, p, TNF_KP_TRACE, true);
	return do_set(h, p, TNF_KP_TRACE, true, CB_OFF(commit_func), h ? h->pr.rt.commit : 0);
}

TNF_API tnfctl_errcode_t tnfctl_probe_untrace(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	(void)cd;
	if (h && h->pr.mode == TNF_MODE_KERNEL)
		return tnf_kernel_probe_set(h, p, TNF_KP_TRACE, false);
	return do_set(h, p, TNF_KP_TRACE, false, CB_OFF(commit_func), h ? h->pr.rt.rollback : 0);
}

TNF_API tnfctl_errcode_t tnfctl_probe_disconnect_all(tnfctl_handle_t *h, tnfctl_probe_t *p,
						     void *cd)
{
	(void)cd;
	if (h && h->pr.mode == TNF_MODE_KERNEL)
		return TNFCTL_ERR_BADARG; /* kernel probes have no functions */
	/* a USDT probe has none either: there is nothing to disconnect */
	return do_set(h, p, 0, false, CB_OFF(chain), 0);
}

static const char *base_name(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static uintptr_t find_func(struct tnfctl_handle *h, const char *lib, const char *func)
{
	struct tnf_obj *o;
	uintptr_t a;

	for (o = h->pr.objs; o; o = o->next) {
		if (lib && strcmp(base_name(o->name), lib))
			continue;
		a = tnf_obj_func(o, func);
		if (a)
			return a;
	}
	return 0;
}

/* A pool node {func, down}: reused when one already exists, as Solaris shared stubs. */
static tnfctl_errcode_t chain_node(struct tnfctl_handle *h, uintptr_t func, uintptr_t down,
				   uintptr_t *node)
{
	uintptr_t rt = h->pr.rt.runtime, cell[2] = {func, down};
	struct tnf_chain_ent *c;
	tnfctl_errcode_t err;
	uint32_t used, size;

	for (c = h->pr.chains; c; c = c->next)
		if (c->func == func && c->down == down) {
			*node = c->node;
			return TNFCTL_ERR_NONE;
		}
	err = tnf_read(h, rt + offsetof(struct tnf_runtime, chain_pool_size), &size, 4);
	if (!err)
		err = tnf_read(h, rt + offsetof(struct tnf_runtime, chain_pool_used), &used, 4);
	if (err)
		return err;
	if (used >= size || size > TNF_CHAIN_POOL_SIZE * 64)
		return TNFCTL_ERR_INTERNAL; /* pool exhausted, as Solaris' stub memory */
	c = calloc(1, sizeof(*c));
	if (!c)
		return TNFCTL_ERR_ALLOCFAIL;
	c->func = func;
	c->down = down;
	c->node = h->pr.rt.pool + (uintptr_t)used * sizeof(struct tnf_probe_chain);
	used++;
	err = tnf_write(h, c->node, cell, sizeof(cell));
	if (!err)
		err = tnf_write(h, rt + offsetof(struct tnf_runtime, chain_pool_used), &used, 4);
	if (err) {
		free(c);
		return err;
	}
	c->next = h->pr.chains;
	h->pr.chains = c;
	*node = c->node;
	return TNFCTL_ERR_NONE;
}

TNF_API tnfctl_errcode_t tnfctl_probe_connect(tnfctl_handle_t *h, tnfctl_probe_t *p,
					      const char *lib_base, const char *func)
{
	uintptr_t faddr, down, node;
	tnfctl_errcode_t err;

	if (h && h->pr.mode == TNF_MODE_KERNEL)
		return TNFCTL_ERR_BADARG; /* kernel probes have no functions */
	err = enter(h, p);
	if (err)
		return err;
	err = is_usdt(h, p) ? TNFCTL_ERR_BADARG : check_probe(h, p, true); /* no functions */
	if (err || !func)
		goto out;
	faddr = find_func(h, lib_base, func);
	if (!faddr) {
		err = TNFCTL_ERR_BADARG;
		goto out;
	}
	err = tnf_read(h, p->addr + CB_OFF(chain), &down, sizeof(down));
	if (!err)
		err = chain_node(h, faddr, down, &node);
	if (!err) /* the node is complete before this store publishes it */
		err = tnf_write(h, p->addr + CB_OFF(chain), &node, sizeof(node));
out:
	pthread_mutex_unlock(&h->lock);
	return err;
}

static char *func_name(struct tnfctl_handle *h, uintptr_t addr)
{
	struct tnf_obj *o;
	char buf[64];

	for (o = h->pr.objs; o; o = o->next) {
		const char *n = tnf_obj_sym_name(o, addr);

		if (n)
			return strdup(n);
	}
	snprintf(buf, sizeof(buf), "func@0x%lx", (unsigned long)addr);
	return strdup(buf);
}

/* Decode the chain into one allocation of names (strings after the pointers). */
static tnfctl_errcode_t decode_chain(struct tnfctl_handle *h, struct tnfctl_probe_handle *p,
				     uintptr_t chain)
{
	uintptr_t *funcs;
	char **names = NULL;
	size_t n = 0, i, len = 0;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	char **out, *s;

	free(p->func_names);
	free(p->func_addrs);
	p->func_names = NULL;
	p->func_addrs = NULL;
	if (!chain)
		return TNFCTL_ERR_NONE;
	funcs = malloc(MAX_CHAIN * sizeof(*funcs));
	if (!funcs)
		return TNFCTL_ERR_ALLOCFAIL;
	while (chain && n < MAX_CHAIN) {
		struct tnf_probe_chain c;

		err = tnf_read(h, chain, &c, sizeof(c));
		if (err)
			goto out_funcs;
		funcs[n++] = (uintptr_t)c.func;
		chain = (uintptr_t)c.next;
	}
	names = calloc(n, sizeof(*names));
	if (!names) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out_funcs;
	}
	for (i = 0; i < n; i++) {
		names[i] = func_name(h, funcs[i]);
		len += names[i] ? strlen(names[i]) + 1 : 1;
	}
	out = malloc((n + 1) * sizeof(char *) + len);
	p->func_addrs = malloc((n + 1) * sizeof(uintptr_t));
	if (!out || !p->func_addrs) {
		free(out);
		free(p->func_addrs);
		p->func_addrs = NULL;
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out;
	}
	s = (char *)(out + n + 1);
	for (i = 0; i < n; i++) {
		out[i] = s;
		strcpy(s, names[i] ? names[i] : "");
		s += strlen(s) + 1;
		p->func_addrs[i] = funcs[i];
	}
	out[n] = NULL;
	p->func_addrs[n] = 0;
	p->func_names = out;
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
out_funcs:
	free(funcs);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_probe_state_get(tnfctl_handle_t *h, tnfctl_probe_t *p,
						tnfctl_probe_state_t *st)
{
	struct tnf_probe_control cb;
	tnfctl_errcode_t err;

	if (!st)
		return TNFCTL_ERR_BADARG;
	if (h && h->pr.mode == TNF_MODE_KERNEL)
		return tnf_kernel_state_get(h, p, st);
	err = enter(h, p);
	if (err)
		return err;
	err = check_probe(h, p, false);
	if (!err && p->usdt) {
		if (tnf_usdt_refresh(p))
			err = TNFCTL_ERR_ALLOCFAIL;
		else
			tnf_usdt_state(p, st);
		pthread_mutex_unlock(&h->lock);
		return err;
	}
	if (!err)
		err = tnf_read(h, p->addr, &cb, sizeof(cb));
	if (!err)
		err = decode_chain(h, p, (uintptr_t)cb.chain);
	if (!err) {
		memset(st, 0, sizeof(*st));
		st->id = p->id;
		st->attr_string = p->attrs;
		st->enabled = cb.test_func ? B_TRUE : B_FALSE;
		st->traced = (uintptr_t)cb.commit_func == h->pr.rt.commit ? B_TRUE : B_FALSE;
		st->new_probe = p->new_probe ? B_TRUE : B_FALSE;
		st->obj_name = p->obj->name;
		st->func_names = (const char *const *)p->func_names;
		st->func_addrs = p->func_addrs;
		st->client_registered_data = p->client_data;
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_probe_apply(tnfctl_handle_t *h, tnfctl_probe_op_t op, void *cd)
{
	struct tnf_obj *o;
	tnfctl_errcode_t err;
	unsigned long i;

	if (!op)
		return TNFCTL_ERR_BADARG;
	err = enter(h, NULL);
	if (err)
		return err;
	if (h->pr.mode == TNF_MODE_KERNEL) {
		struct tnfctl_probe_handle *p;

		for (p = h->pr.all; p && !err; p = p->next_all)
			if (p->valid)
				err = op(h, p, cd);
	}
	for (o = h->pr.objs; o && !err; o = o->next)
		for (i = 0; i < o->nprobes && !err; i++)
			if (o->probes[i]->valid)
				err = op(h, o->probes[i], cd);
	pthread_mutex_unlock(&h->lock);
	return err;
}

static struct tnfctl_probe_handle *by_id(struct tnfctl_handle *h, unsigned long id)
{
	struct tnf_obj *o;

	for (o = h->pr.objs; o; o = o->next)
		if (id >= o->min_id && id - o->min_id < o->nprobes)
			return o->probes[id - o->min_id];
	return NULL;
}

TNF_API tnfctl_errcode_t tnfctl_probe_apply_ids(tnfctl_handle_t *h, ulong_t count, ulong_t *ids,
						tnfctl_probe_op_t op, void *cd)
{
	struct tnfctl_probe_handle *p;
	tnfctl_errcode_t err;
	ulong_t i;

	if (!op || (count && !ids))
		return TNFCTL_ERR_BADARG;
	err = enter(h, NULL);
	if (err)
		return err;
	for (i = 0; i < count && !err; i++) {
		p = h->pr.mode == TNF_MODE_KERNEL ? tnf_kernel_probe_by_id(h, ids[i])
						  : by_id(h, ids[i]);
		err = p && p->valid ? op(h, p, cd) : TNFCTL_ERR_INVALIDPROBE;
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}
