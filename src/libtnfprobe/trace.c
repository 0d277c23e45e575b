// SPDX-License-Identifier: BSD-2-Clause
/*
 * The probe path: test -> alloc (event in the thread's own block, schedule
 * record when needed) -> argument stores -> end (connected functions, then
 * commit or rollback).  No lock and no atomic read-modify-write unless a new
 * block or a type record is needed.
 */
#include "rt.h"

__thread struct tnf_thread tnf_self __attribute__((tls_model("initial-exec")));

/* Number of arguments stored outside the event (strings, records). */
static uint32_t outside_args(const tnf_probe_control_t *cb)
{
	const struct tnf_type_desc *const *st = cb->slot_types;
	uint32_t n = 0;

	for (; st && *st; st++)
		n += tnf_kind(*st)->tagged;
	return n;
}

/*
 * tnf_sched_rec: tid and lwpid are both the kernel thread id (Linux has no
 * separate user-level thread id), pid is getpid(), then the names.
 */
static void write_sched(struct tnf_thread *t, int64_t now)
{
	uint32_t *w = (uint32_t *)(tnf_buf.base + t->pos);
	uint32_t type = tnf_type_ref(T_SCHED_REC), name;

	w[0] = tnf_ref_tag(type);
	w[1] = (uint32_t)t->tid;
	w[2] = (uint32_t)t->tid;
	w[3] = (uint32_t)tnf_pid;
	*(int64_t *)(w + 4) = now;
	name = __atomic_load_n(&tnf_proc_name, __ATOMIC_RELAXED);
	w[6] = name ? tnf_ref_perm(name) : 0;
	w[7] = t->name ? tnf_ref_perm(t->name) : 0;
	t->sched = t->pos;
	t->time_base = now;
	t->pos += TNF_SCHED_SIZE;
	tnf_commit_thread(t); /* the schedule stays even if the event rolls back */
}

TNF_EXPORT void *tnf_trace_alloc(struct tnf_ops *ops, tnf_probe_control_t *cb,
				 tnf_probe_setup_t *set)
{
	struct tnf_thread *t = (struct tnf_thread *)ops;
	uint32_t tag, size, room, need, ev, *w;
	int64_t now;
	int sched;

	if (t->busy) {
		/* a probe inside a probe (signal handler, connected function) */
		tnf_drop(TNF_DROP_NESTED);
		return NULL;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!tnf_buf_usable())
		goto drop;
	if (__builtin_expect(!t->registered, 0))
		tnf_thread_register(t);
	tag = (uint32_t)__atomic_load_n(&cb->index, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!tag, 0)) {
		tag = tnf_probe_tag(cb);
		if (!tag) {
			tnf_drop(TNF_DROP_NOSPACE);
			goto drop;
		}
	}
	size = tnf_round8((uint32_t)cb->tnf_event_size);
	if (size < 8 || size > TNF_BLOCK_SIZE - TNF_BLOCK_HDR - TNF_SCHED_SIZE) {
		tnf_drop(TNF_DROP_TOOBIG);
		goto drop;
	}
	now = tnf_now();
	sched = !t->sched || now < t->time_base || now - t->time_base > (int64_t)UINT32_MAX;
	/* leave room for strings and records in the same block */
	need = size + outside_args(cb) * 64 + (sched ? TNF_SCHED_SIZE : 0);
	room = t->blk ? t->blk + TNF_BLOCK_SIZE - t->pos : 0;
	if (room < need) {
		if (tnf_block_new(t)) {
			tnf_drop(TNF_DROP_NOBLOCK);
			goto drop;
		}
		sched = 1;
	}
	if (sched)
		write_sched(t, now);
	ev = t->pos;
	t->pos += size;
	w = (uint32_t *)(tnf_buf.base + ev);
	__builtin_memset(w + 2, 0, size - 8);
	/* PAIR: tag16 (directory cell) and the schedule, self-relative */
	w[0] = (tag << 16) | ((uint32_t)(t->sched - ev) & 0xfffc) | TNF_REF_PAIR;
	w[1] = (uint32_t)(now - t->time_base);
	set->tpd_p = ops;
	set->buffer_p = w;
	set->probe_p = cb;
	return w;
drop:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
	return NULL;
}

/* Enabled probes call this first: NULL (nothing happens) or the event. */
TNF_EXPORT void *tnf_probe_test(void *unused, tnf_probe_control_t *cb, tnf_probe_setup_t *set)
{
	struct tnf_thread *t = &tnf_self;
	tnf_probe_alloc_func_t alloc;

	(void)unused;
	if (t->disabled)
		return NULL;
	/* the macro calls probe_func next: a block not set up yet stays quiet */
	if (!__atomic_load_n(&cb->probe_func, __ATOMIC_RELAXED))
		return NULL;
	alloc = __atomic_load_n(&cb->alloc_func, __ATOMIC_RELAXED);
	if (!alloc)
		alloc = tnf_trace_alloc;
	return alloc(&t->ops, cb, set);
}

TNF_EXPORT void tnf_trace_commit(tnf_probe_setup_t *set)
{
	struct tnf_thread *t = (struct tnf_thread *)set->tpd_p;

	if (t->blk)
		tnf_commit_thread(t);
}

TNF_EXPORT void tnf_trace_rollback(tnf_probe_setup_t *set)
{
	struct tnf_thread *t = (struct tnf_thread *)set->tpd_p;

	t->pos = t->valid;
}

/* Connected functions (most recent first), then commit or rollback. */
TNF_EXPORT void tnf_trace_end(tnf_probe_setup_t *set)
{
	struct tnf_thread *t = (struct tnf_thread *)set->tpd_p;
	tnf_probe_control_t *cb = set->probe_p;
	const struct tnf_probe_chain *c;
	tnf_probe_func_t commit;

	for (c = __atomic_load_n(&cb->chain, __ATOMIC_ACQUIRE); c; c = c->next)
		if (c->func)
			c->func(set);
	commit = __atomic_load_n(&cb->commit_func, __ATOMIC_RELAXED);
	if (commit == tnf_trace_rollback)
		tnf_trace_rollback(set);
	else if (!commit || commit == tnf_trace_commit)
		tnf_trace_commit(set);
	else
		commit(set);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
	if (t->disabled)
		tnf_block_release(t); /* disabled from a connected function */
}
