// SPDX-License-Identifier: BSD-2-Clause
/*
 * The probe layer: discovery in link-map order, ids, and the sync after a
 * dlopen/dlclose (tnfctl_check_libs(3TNF), tnfctl_register_funcs(3TNF)).
 * Objects are told apart by load base and name; ids only ever grow.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tnf/probe.h>
#include "internal.h"
#include "objfile.h"
#include "tnf_runtime.h"
#include "target.h"
#include "usdt.h"

#define CB_OFF(f) offsetof(struct tnf_probe_control, f)

/* Recursive; also in a forked child, where the fork's thread held it (its owner is a tid). */
void tnf_handle_lock_init(struct tnfctl_handle *h)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&h->lock, &a);
	pthread_mutexattr_destroy(&a);
}

void tnf_handle_init(struct tnfctl_handle *h)
{
	tnf_handle_lock_init(h);
	h->pr.all_tail = &h->pr.all;
}

/* A direct target that is gone makes every access fail: say NOPROCESS, not INTERNAL. */
static tnfctl_errcode_t access_err(struct tnfctl_handle *h)
{
	pid_t t = h->pr.mem_tid ? h->pr.mem_tid : h->pid;

	if (h->pr.mode == TNF_MODE_DIRECT && (kill(h->pid, 0) || tnf_proc_exiting(t)))
		return TNFCTL_ERR_NOPROCESS;
	/* /proc refused to us (a capability permitted but not effective) */
	if (h->pr.mode == TNF_MODE_DIRECT && tnf_proc_refused(t))
		return TNFCTL_ERR_ACCES;
	return TNFCTL_ERR_INTERNAL;
}

tnfctl_errcode_t tnf_read(struct tnfctl_handle *h, uintptr_t addr, void *buf, size_t len)
{
	return h->pr.ops.p_read(h->pr.proc, addr, buf, len) ? access_err(h) : TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_write(struct tnfctl_handle *h, uintptr_t addr, const void *buf, size_t len)
{
	return h->pr.ops.p_write(h->pr.proc, addr, (void *)buf, len) ? access_err(h)
								     : TNFCTL_ERR_NONE;
}

struct sync_ctx {
	struct tnfctl_handle *h;
	struct tnf_obj *list, **tail;
	tnfctl_errcode_t err;
};

static struct tnf_obj *take_old(struct tnfctl_handle *h, const tnfctl_ind_obj_info_t *oi)
{
	struct tnf_obj **pp, *o;

	for (pp = &h->pr.objs; (o = *pp); pp = &o->next)
		if (o->base == oi->text_base && !strcmp(o->name, oi->objname)) {
			*pp = o->next;
			return o;
		}
	return NULL;
}

static int sync_one(void *proc, const tnfctl_ind_obj_info_t *oi, void *cd)
{
	struct sync_ctx *c = cd;
	struct tnf_obj *o;
	int fd;

	(void)proc;
	if (!oi || !oi->objname)
		return 0;
	o = take_old(c->h, oi);
	if (o) {
		o->is_new = false;
	} else {
		fd = oi->objfd >= 0 ? fcntl(oi->objfd, F_DUPFD_CLOEXEC, 0)
				    : open(oi->objname, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM)) {
			/* not silently without its probes: the caller is out of them */
			c->err = TNFCTL_ERR_ALLOCFAIL;
			return 1;
		}
		if (fd < 0)
			return 0; /* nothing we can read probes from */
		o = calloc(1, sizeof(*o));
		if (!o || !(o->name = strdup(oi->objname))) {
			free(o);
			close(fd);
			c->err = TNFCTL_ERR_ALLOCFAIL;
			return 1;
		}
		o->base = oi->text_base;
		if (tnf_obj_open(o, fd)) {
			free(o->name);
			free(o);
			return 0;
		}
		o->is_new = true;
	}
	o->next = NULL;
	*c->tail = o;
	c->tail = &o->next;
	return 0;
}

static void obj_free(struct tnf_obj *o)
{
	unsigned long i;

	for (i = 0; i < o->nprobes; i++) {
		o->probes[i]->valid = false;
		o->probes[i]->obj = NULL;
		if (o->probes[i]->usdt) { /* its uprobes go with the object */
			o->probes[i]->usdt->gone = true;
			tnf_usdt_detach(o->probes[i]->usdt);
		}
	}
	free(o->probes);
	tnf_obj_close(o);
	free(o->name);
	free(o);
}

static void find_runtime(struct tnfctl_handle *h)
{
	struct tnf_rt_addrs *rt = &h->pr.rt;
	struct tnf_obj *o;

	if (rt->runtime)
		return;
	for (o = h->pr.objs; o; o = o->next) {
		struct tnf_rt_addrs r = {.runtime = tnf_obj_sym(o, TNF_RUNTIME_SYM)};

		if (!r.runtime)
			continue;
		r.pool = tnf_obj_sym(o, TNF_SYM_CHAIN_POOL);
		r.test = tnf_obj_sym(o, TNF_SYM_TEST);
		r.alloc = tnf_obj_sym(o, TNF_SYM_ALLOC);
		r.end = tnf_obj_sym(o, TNF_SYM_END);
		r.commit = tnf_obj_sym(o, TNF_SYM_COMMIT);
		r.rollback = tnf_obj_sym(o, TNF_SYM_ROLLBACK);
		if (r.pool && r.test && r.alloc && r.end && r.commit && r.rollback)
			*rt = r;
		return; /* the first definition in link-map order is rtld's choice too */
	}
}

/* A block no controller has touched yet becomes "disabled, traced". */
static tnfctl_errcode_t init_virgin(struct tnfctl_handle *h, uintptr_t addr)
{
	struct tnf_rt_addrs *rt = &h->pr.rt;
	struct tnf_probe_control cb;
	tnfctl_errcode_t err;

	err = tnf_read(h, addr, &cb, sizeof(cb));
	if (err || cb.version != TNF_PROBE_VERSION_1 || cb.commit_func)
		return err;
	/* commit_func last: it is what marks the block as initialised. */
	err = tnf_write(h, addr + CB_OFF(alloc_func), &rt->alloc, sizeof(uintptr_t));
	if (!err)
		err = tnf_write(h, addr + CB_OFF(probe_func), &rt->end, sizeof(uintptr_t));
	if (!err)
		err = tnf_write(h, addr + CB_OFF(commit_func), &rt->commit, sizeof(uintptr_t));
	return err;
}

static struct tnfctl_probe_handle *new_probe(struct tnfctl_handle *h, struct tnf_obj *o)
{
	struct tnfctl_probe_handle *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->owner = h;
	p->obj = o;
	p->valid = true;
	p->new_probe = true;
	p->id = h->pr.next_id++;
	*h->pr.all_tail = p;
	h->pr.all_tail = &p->next_all;
	o->probes[o->nprobes++] = p;
	return p;
}

/* "name X;" of a TNF probe's attributes is @name. */
static bool names(const char *attrs, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(attrs, "name ", 5) && !strncmp(attrs + 5, name, n) &&
	       (attrs[5 + n] == ';' || !attrs[5 + n]);
}

/*
 * A TNF_PROBE site is a USDT probe too (<tnf/probe.h>): the note of an
 * object that also has a TNF probe of that name is that probe, listed
 * once, as the TNF probe, whatever the provider the site was built with.
 */
static bool is_tnf_site(const struct tnf_usdt_def *d, struct tnf_obj *o)
{
	unsigned long i;

	for (i = 0; i < o->nprobes; i++)
		if (!o->probes[i]->usdt && names(o->probes[i]->attrs, d->name))
			return true;
	return false;
}

/* The USDT probes of @o, after its TNF probes (its ids follow theirs). */
static tnfctl_errcode_t add_usdt(struct tnfctl_handle *h, struct tnf_obj *o,
				 struct tnf_usdt_def *defs, size_t nd)
{
	struct tnfctl_probe_handle *p;
	size_t i;

	for (i = 0; i < nd; i++) {
		struct tnf_usdt *u;

		if (is_tnf_site(&defs[i], o))
			continue;
		u = tnf_usdt_new(h, &defs[i], o->name);
		if (!u)
			return TNFCTL_ERR_ALLOCFAIL;
		p = new_probe(h, o);
		if (!p || !(p->attrs = tnf_usdt_attrs(u, defs[i].sites))) {
			tnf_usdt_free(u);
			if (p) /* in the lists already: freed with the handle */
				p->valid = false;
			return TNFCTL_ERR_ALLOCFAIL;
		}
		p->usdt = u;
	}
	return TNFCTL_ERR_NONE;
}

static tnfctl_errcode_t add_probes(struct tnfctl_handle *h, struct tnf_obj *o)
{
	struct tnf_usdt_def *defs = NULL;
	struct tnf_obj_block *bl;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	size_t i, n, nd = 0;

	if (tnf_obj_blocks(o, &bl, &n))
		return TNFCTL_ERR_ALLOCFAIL;
	/* no runtime to control them: a TNF probe is then the USDT probe it also is */
	for (i = 0; h->pr.usdt_only && i < n; i++)
		free(bl[i].attrs);
	if (h->pr.usdt_only)
		n = 0;
	if (tnf_obj_usdt(o, &defs, &nd))
		err = TNFCTL_ERR_ALLOCFAIL;
	o->min_id = h->pr.next_id;
	o->probes = n + nd ? calloc(n + nd, sizeof(*o->probes)) : NULL;
	if (n + nd && !o->probes)
		err = TNFCTL_ERR_ALLOCFAIL;
	for (i = 0; i < n; i++) {
		struct tnfctl_probe_handle *p;

		if (err || (h->pr.rt.runtime && (err = init_virgin(h, bl[i].addr))))
			continue;
		p = new_probe(h, o);
		if (!p) {
			err = TNFCTL_ERR_ALLOCFAIL;
			continue;
		}
		p->addr = bl[i].addr;
		p->attrs = bl[i].attrs;
		bl[i].attrs = NULL;
	}
	if (!err)
		err = add_usdt(h, o, defs, nd);
	for (i = 0; i < n; i++)
		free(bl[i].attrs);
	free(bl);
	tnf_usdt_defs_free(defs, nd);
	return err;
}

/*
 * The create callback on each probe due, once.  A callback may register
 * other functions or none: register_funcs then runs the new create on every
 * probe (none is left due), and the data the old one made for its probe is
 * the old destroy's.
 */
static void run_create(struct tnfctl_handle *h)
{
	struct tnfctl_probe_handle *p;
	void (*destroy)(void *);
	unsigned gen;
	void *cd;

	for (p = h->pr.all; p; p = p->next_all) {
		if (!p->create_due)
			continue;
		p->create_due = false;
		if (!h->pr.create)
			continue;
		gen = h->pr.funcs_gen;
		destroy = h->pr.destroy;
		h->pr.in_create++;
		cd = h->pr.create(h, p);
		h->pr.in_create--;
		if (gen == h->pr.funcs_gen)
			p->client_data = cd;
		else if (destroy)
			destroy(cd);
	}
}

/* The destroy callback on every probe's data, once: calls on @h from it are BADARG. */
static void destroy_all(struct tnfctl_handle *h)
{
	void (*destroy)(void *) = h->pr.destroy;
	struct tnfctl_probe_handle *p;
	void *cd;

	h->pr.in_destroy++;
	for (p = h->pr.all; p; p = p->next_all) {
		cd = p->client_data;
		p->client_data = NULL;
		if (destroy)
			destroy(cd);
	}
	h->pr.in_destroy--;
}

tnfctl_errcode_t tnf_probes_sync(struct tnfctl_handle *h)
{
	struct sync_ctx c = {.h = h};
	struct tnfctl_probe_handle *p;
	struct tnf_obj *o, *next;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	bool had_rt;
	int r;

	c.tail = &c.list;
	r = h->pr.ops.p_obj_iter(h->pr.proc, sync_one, &c);
	if (r) {
		/* Keep what we had: put the objects seen back in front. */
		*c.tail = h->pr.objs;
		h->pr.objs = c.list;
		return c.err ? c.err : (r >= TNFCTL_ERR_USR1 ? (tnfctl_errcode_t)r : access_err(h));
	}
	for (o = h->pr.objs; o; o = next) { /* what is left was unloaded */
		next = o->next;
		obj_free(o);
	}
	h->pr.objs = c.list;
	had_rt = h->pr.rt.runtime != 0;
	if (!h->pr.usdt_only)
		find_runtime(h);
	/* The runtime arrived after these probes were found (internal_open loads it). */
	for (p = h->pr.all; p && !had_rt && h->pr.rt.runtime && !err; p = p->next_all)
		if (p->valid && !p->usdt)
			err = init_virgin(h, p->addr);
	for (p = h->pr.all; p; p = p->next_all)
		p->new_probe = false;
	for (o = h->pr.objs; o && !err; o = o->next)
		if (o->is_new && !o->probes)
			err = add_probes(h, o);
	/* (a sync from a create callback leaves the probes due before it due) */
	for (p = h->pr.all; p; p = p->next_all)
		if (p->new_probe && p->valid)
			p->create_due = true;
	run_create(h);
	return err;
}

tnfctl_errcode_t tnf_probes_init(struct tnfctl_handle *h)
{
	struct tnf_runtime rt;
	tnfctl_errcode_t err;

	err = tnf_probes_sync(h);
	if (err)
		return err;
	if (!h->pr.rt.runtime)
		return TNFCTL_ERR_NOLIBTNFPROBE;
	err = tnf_read(h, h->pr.rt.runtime, &rt, offsetof(struct tnf_runtime, file_name));
	if (err)
		return err;
	if (rt.version != TNF_RUNTIME_VERSION)
		return TNFCTL_ERR_NOLIBTNFPROBE;
	h->pr.ready = true;
	return tnf_attrs_refresh(h);
}

/* Forget the target's exclusivity marks (it may now be controlled otherwise). */
void tnf_probes_detach_target(struct tnfctl_handle *h)
{
	uintptr_t rt = h->pr.rt.runtime;
	uint32_t zero = 0;
	int32_t ext;

	if (!h->pr.ready || !rt)
		return;
	if (h->pr.mode == TNF_MODE_INTERNAL) {
		tnf_write(h, rt + offsetof(struct tnf_runtime, internal_tracing), &zero, 4);
		return;
	}
	if (!tnf_read(h, rt + offsetof(struct tnf_runtime, external_pid), &ext, 4) &&
	    ext == h->pr.ops.p_getpid(h->pr.proc))
		tnf_write(h, rt + offsetof(struct tnf_runtime, external_pid), &zero, 4);
}

void tnf_probes_release(struct tnfctl_handle *h)
{
	struct tnfctl_probe_handle *p, *pn;
	struct tnf_chain_ent *c, *cn;
	struct tnf_obj *o, *on;

	destroy_all(h);
	for (p = h->pr.all; p; p = pn) {
		pn = p->next_all;
		if (p->usdt && (h->state == TNF_H_ENDED || h->state == TNF_H_GONE))
			p->usdt->gone = true;
		tnf_usdt_free(p->usdt);
		free(p->attrs);
		free(p->func_names);
		free(p->func_addrs);
		free(p);
	}
	h->pr.all = NULL;
	h->pr.all_tail = &h->pr.all;
	tnf_usdt_put(h);
	for (o = h->pr.objs; o; o = on) {
		on = o->next;
		o->nprobes = 0;
		obj_free(o);
	}
	h->pr.objs = NULL;
	for (c = h->pr.chains; c; c = cn) {
		cn = c->next;
		free(c);
	}
	h->pr.chains = NULL;
	free(h->pr.buf_name);
	h->pr.buf_name = NULL;
}

/*
 * Drop every probe of the image @h had (an EXEC of a NOPROBES handle): their
 * uprobes go with them; the new image's are listed at the next probe call.
 */
void tnf_probes_image_gone(struct tnfctl_handle *h)
{
	struct tnf_obj *o, *on;

	for (o = h->pr.objs; o; o = on) {
		on = o->next;
		obj_free(o);
	}
	h->pr.objs = NULL;
	h->pr.usdt_only = false;
}

/*
 * A TNFCTL_OPEN_NOPROBES handle (no libtnfprobe in the target) has USDT
 * probes all the same: they need nothing in the target.  They are listed
 * at its first probe call, so a follower that never asks reads no note.
 * A static program's executable is its one object; a dynamic one stopped
 * before ld.so ran has no link map yet: NOLIBTNFPROBE, and its probes are
 * listed at rtld's start-up (tnf_probes_startup).
 */
static tnfctl_errcode_t usdt_only_init(struct tnfctl_handle *h)
{
	tnfctl_errcode_t err;

	h->pr.usdt_asked = true;
	if (h->pr.usdt_only)
		return TNFCTL_ERR_NONE;
	tnf_access_direct(h);
	h->pr.usdt_only = true;
	err = tnf_probes_sync(h);
	if (err) {
		tnf_probes_image_gone(h);
		return err == TNFCTL_ERR_INTERNAL ? TNFCTL_ERR_NOLIBTNFPROBE : err;
	}
	return TNFCTL_ERR_NONE;
}

/* @p of the parent and @q of its FORK child are the same USDT probe. */
static bool same_usdt(const struct tnfctl_probe_handle *p, const struct tnfctl_probe_handle *q)
{
	return p->valid && p->usdt && p->obj && p->obj->base == q->obj->base &&
	       !strcmp(p->usdt->provider, q->usdt->provider) &&
	       !strcmp(p->usdt->name, q->usdt->name) && !strcmp(p->usdt->path, q->usdt->path);
}

/*
 * @c is the handle of @h's FORK child, its objects those of @h.  A TNF
 * probe's state is in the target's memory, which the fork copied; a USDT
 * probe's is the controller's, so the child's USDT probes take the state of
 * the parent's (tnf_usdt_inherit: enabled and traced ones get uprobes of
 * their own).  A NOPROBES parent whose USDT probes were listed has its
 * child's listed now.  The first error; the child's probes are usable
 * whatever it is (one not attached is left disabled).
 */
tnfctl_errcode_t tnf_probes_fork(struct tnfctl_handle *h, struct tnfctl_handle *c)
{
	struct tnfctl_probe_handle *p, *q;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE, e;

	if (h->pr.usdt_only && (err = tnf_probes_usable_usdt(c)))
		return err;
	for (q = c->pr.all; q; q = q->next_all) {
		if (!q->valid || !q->usdt || !q->obj)
			continue;
		for (p = h->pr.all; p && !same_usdt(p, q); p = p->next_all)
			;
		e = p ? tnf_usdt_inherit(c, q, p->usdt) : TNFCTL_ERR_NONE;
		if (!err)
			err = e;
	}
	return err;
}

/*
 * A NOPROBES handle whose probes were asked for (a probe call, or a create
 * callback) and are not listed: its image may be stopped before ld.so ran,
 * so the next CONTINUE asks for a stop at rtld's start-up (TNF_CONT_STARTUP).
 */
bool tnf_probes_startup_wanted(const struct tnfctl_handle *h)
{
	return (h->open_flags & TNFCTL_OPEN_NOPROBES) && h->pr.mode == TNF_MODE_DIRECT &&
	       !h->pr.ready && !h->pr.usdt_only && (h->pr.usdt_asked || h->pr.create);
}

/*
 * Stopped at rtld's start-up (TNF_REPF_STARTUP): its objects are mapped and
 * none of their code has run.  Their USDT probes are listed now, and the
 * create callbacks run on them, as at a DLOPEN.
 */
tnfctl_errcode_t tnf_probes_startup(struct tnfctl_handle *h)
{
	tnfctl_errcode_t err = usdt_only_init(h);

	/* killed meanwhile: the next CONTINUE reports how it ended */
	return err == TNFCTL_ERR_NOPROCESS ? TNFCTL_ERR_NONE : err;
}

/* As tnf_probes_usable(), for probe calls: USDT probes will do. */
tnfctl_errcode_t tnf_probes_usable_usdt(struct tnfctl_handle *h)
{
	if (h->pr.in_destroy)
		return TNFCTL_ERR_BADARG;
	if (h->pr.ready || !(h->open_flags & TNFCTL_OPEN_NOPROBES) || h->pr.mode != TNF_MODE_DIRECT)
		return tnf_probes_usable(h);
	if (h->state != TNF_H_STOPPED)
		return h->state == TNF_H_GONE ? TNFCTL_ERR_NOPROCESS : TNFCTL_ERR_BADARG;
	return usdt_only_init(h);
}

/* Whether @h (locked) takes probe and buffer calls now. */
tnfctl_errcode_t tnf_probes_usable(struct tnfctl_handle *h)
{
	if (h->pr.in_destroy) /* called from a destroy callback */
		return TNFCTL_ERR_BADARG;
	if (!h->pr.ready && (h->open_flags & TNFCTL_OPEN_NOPROBES))
		return TNFCTL_ERR_NOLIBTNFPROBE;
	if (!h->pr.ready)
		return TNFCTL_ERR_BADARG;
	if (h->pr.mode == TNF_MODE_DIRECT && h->state != TNF_H_STOPPED)
		return h->state == TNF_H_GONE ? TNFCTL_ERR_NOPROCESS : TNFCTL_ERR_BADARG;
	return TNFCTL_ERR_NONE;
}

TNF_API tnfctl_errcode_t tnfctl_check_libs(tnfctl_handle_t *h)
{
	tnfctl_errcode_t err;

	if (!h)
		return TNFCTL_ERR_BADARG;
	if (h->pr.mode == TNF_MODE_KERNEL)
		return TNFCTL_ERR_NONE; /* the tracepoints were read at open */
	pthread_mutex_lock(&h->lock);
	err = tnf_probes_usable_usdt(h);
	if (!err)
		err = tnf_probes_sync(h);
	if (!err)
		err = tnf_attrs_refresh(h);
	pthread_mutex_unlock(&h->lock);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_register_funcs(tnfctl_handle_t *h,
					       void *(*create)(tnfctl_handle_t *, tnfctl_probe_t *),
					       void (*destroy)(void *))
{
	struct tnfctl_probe_handle *p;

	if (!h)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	if (h->pr.in_destroy) {
		pthread_mutex_unlock(&h->lock);
		return TNFCTL_ERR_BADARG;
	}
	destroy_all(h);
	h->pr.funcs_gen++;
	h->pr.create = NULL;
	h->pr.destroy = NULL;
	/* a NOPROBES handle lists its USDT probes now, for @create to see them */
	if (create && (h->open_flags & TNFCTL_OPEN_NOPROBES))
		(void)tnf_probes_usable_usdt(h);
	h->pr.create = create;
	h->pr.destroy = destroy;
	for (p = h->pr.all; p; p = p->next_all)
		p->create_due = p->valid;
	run_create(h);
	pthread_mutex_unlock(&h->lock);
	return TNFCTL_ERR_NONE;
}
