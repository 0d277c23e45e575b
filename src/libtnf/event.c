// SPDX-License-Identifier: BSD-2-Clause
/*
 * event.c - events: struct records whose tag arg reaches a schedule record
 * (tnf_sched_rec: tid, lwpid, pid, time_base), and probe descriptions.
 */
#include <string.h>

#include "tnf_impl.h"

int tnf_tag_arg(struct tnf_file *f, struct tnf_datum rec, struct tnf_datum *out)
{
	uint32_t target;
	int err;

	if (!f || !out || !rec.off)
		return -TNF_ERR_INVAL;
	out->off = 0;
	out->type = NULL;
	err = tnf_resolve_ref16(f, rec.off, &target);
	if (err || !target)
		return err;
	return tnf_datum_for(f, target, out);
}

/* Slot named @a (else @b), or -1. */
static int slot_either(struct tnf_datum d, const char *a, const char *b)
{
	int i = tnf_slot_index(d, a);

	return i >= 0 ? i : tnf_slot_index(d, b);
}

/* Integer slot @i of @d; *found = false if it is missing or not an integer. */
static int int_slot(struct tnf_file *f, struct tnf_datum d, int i, int64_t *v, bool *found,
		    const struct tnf_type **type)
{
	struct tnf_datum s;
	int err;

	*found = false;
	*v = 0;
	if (i < 0)
		return 0;
	err = tnf_slot_get(f, d, (unsigned)i, &s);
	if (err)
		return err;
	err = tnf_get_int(f, s, v);
	if (err == -TNF_ERR_INVAL)
		return 0;
	if (err)
		return err;
	*found = true;
	if (type)
		*type = s.type;
	return 0;
}

int tnf_event_get(struct tnf_file *f, struct tnf_datum rec, struct tnf_event *ev)
{
	const struct tnf_type *tid_type = NULL;
	struct tnf_datum sched;
	int64_t base, delta, v;
	enum tnf_kind k;
	bool found;
	int err, di;

	if (!f || !ev)
		return -TNF_ERR_INVAL;
	if (tnf_datum_kind(rec) != TNF_K_STRUCT)
		return 0;
	err = tnf_tag_arg(f, rec, &sched);
	if (err)
		return err;
	if (tnf_datum_kind(sched) != TNF_K_STRUCT)
		return 0;
	err = int_slot(f, sched, slot_either(sched, "time_base", "tnf_time_base"), &base, &found,
		       NULL);
	if (err || !found)
		return err;
	di = slot_either(rec, "time_delta", "tnf_time_delta");
	err = int_slot(f, rec, di, &delta, &found, NULL);
	if (err || !found)
		return err;

	memset(ev, 0, sizeof(*ev));
	ev->record = rec;
	ev->sched = sched;
	ev->probe_name = tnf_datum_type_name(rec);
	ev->time = (int64_t)((uint64_t)base + (uint32_t)delta);
	ev->first_arg = (unsigned)di + 1;
	ev->cpuid = -1;
	err = int_slot(f, sched, slot_either(sched, "tid", "tnf_thread_id"), &v, &found, &tid_type);
	if (err)
		return err;
	if (found) {
		k = tnf_type_kind(tid_type);
		ev->tid = k == TNF_K_INT64 || k == TNF_K_UINT64 ? (uint64_t)v : (uint32_t)v;
	}
	err = int_slot(f, sched, slot_either(sched, "lwpid", "tnf_lwpid"), &v, &found, NULL);
	if (err)
		return err;
	ev->lwpid = (uint32_t)v;
	err = int_slot(f, sched, slot_either(sched, "pid", "tnf_pid"), &v, &found, NULL);
	if (err)
		return err;
	ev->pid = (uint32_t)v;
	if (tid_type && !strcmp(tnf_type_name(tid_type), "tnf_kthread_id")) {
		ev->kernel = 1;
		err = int_slot(f, sched, slot_either(sched, "cpuid", "tnf_cpuid"), &v, &found,
			       NULL);
		if (err)
			return err;
		ev->cpuid = (int)v;
	}
	return 1;
}

int tnf_is_probe_type(struct tnf_datum rec)
{
	return tnf_datum_kind(rec) == TNF_K_TYPE &&
	       !strcmp(tnf_datum_type_name(rec), "tnf_probe_type");
}
