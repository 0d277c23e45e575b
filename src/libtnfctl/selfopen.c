// SPDX-License-Identifier: BSD-2-Clause
/*
 * Handles without a tracer: tnfctl_internal_open(3TNF) (the caller's own
 * probes) and tnfctl_indirect_open(3TNF) (the client's access callbacks),
 * plus the exclusivity marks every mode leaves in the target's runtime.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "tnf_runtime.h"

#define RT_OFF(f) offsetof(struct tnf_runtime, f)

/* An external controller (direct or indirect) marks the target; BUSY if it controls itself. */
tnfctl_errcode_t tnf_probes_claim_external(struct tnfctl_handle *h)
{
	uintptr_t rt = h->pr.rt.runtime;
	uint32_t internal;
	int32_t pid = h->pr.ops.p_getpid(h->pr.proc);
	tnfctl_errcode_t err;

	err = tnf_read(h, rt + RT_OFF(internal_tracing), &internal, 4);
	if (err)
		return err;
	if (internal)
		return TNFCTL_ERR_BUSY;
	return tnf_write(h, rt + RT_OFF(external_pid), &pid, 4);
}

/* pid_open, exec_open and FORK children: the probe layer over process_vm_*. */
tnfctl_errcode_t tnf_probes_attach_direct(struct tnfctl_handle *h)
{
	tnfctl_errcode_t err;

	tnf_access_direct(h);
	err = tnf_probes_init(h);
	if (!err)
		err = tnf_probes_claim_external(h);
	if (err)
		h->pr.ready = false;
	return err;
}

static struct tnfctl_handle *bare_handle(void)
{
	struct tnfctl_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	tnf_handle_init(h);
	h->state = TNF_H_STOPPED;
	h->attrs.trace_buf_state = TNFCTL_BUF_NONE;
	return h;
}

void tnf_bare_handle_free(struct tnfctl_handle *h)
{
	tnf_probes_release(h);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/*
 * A program that traces itself need not link the runtime (--as-needed
 * drops a library nothing calls): load it from libtnfctl's directory, else
 * from the search path.  It stays loaded; probes may point into it.
 */
static bool load_runtime(void)
{
	char *dir = tnf_self_dir(), path[PATH_MAX];
	void *dl = NULL;

	if (dir &&
	    snprintf(path, sizeof(path), "%s/%s", dir, TNFCTL_LIBTNFPROBE) < (int)sizeof(path))
		dl = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	free(dir);
	if (!dl)
		dl = dlopen(TNFCTL_LIBTNFPROBE, RTLD_NOW | RTLD_GLOBAL);
	return dl != NULL;
}

TNF_API tnfctl_errcode_t tnfctl_internal_open(tnfctl_handle_t **retval)
{
	struct tnfctl_handle *h;
	struct tnf_runtime *rt;
	tnfctl_errcode_t err;
	uint32_t zero = 0;

	if (!retval)
		return TNFCTL_ERR_BADARG;
	h = bare_handle();
	if (!h)
		return TNFCTL_ERR_ALLOCFAIL;
	h->pid = getpid();
	tnf_access_internal(h);
	err = tnf_probes_init(h);
	if (err == TNFCTL_ERR_NOLIBTNFPROBE && !h->pr.rt.runtime && load_runtime())
		err = tnf_probes_init(h);
	if (err)
		goto fail;
	rt = (struct tnf_runtime *)h->pr.rt.runtime;
	/* A forked child inherits its parent's external mark: only our own pid counts. */
	if (__atomic_load_n(&rt->external_pid, __ATOMIC_ACQUIRE) == getpid() ||
	    !__atomic_compare_exchange_n(&rt->internal_tracing, &zero, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		err = TNFCTL_ERR_BUSY;
		goto fail;
	}
	*retval = h;
	return TNFCTL_ERR_NONE;
fail:
	h->pr.ready = false; /* nothing of ours to undo in the runtime */
	tnf_bare_handle_free(h);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_indirect_open(void *prochandle, tnfctl_ind_config_t *config,
					      tnfctl_handle_t **retval)
{
	struct tnfctl_handle *h;
	tnfctl_errcode_t err;

	if (!config || !retval || !config->p_read || !config->p_write || !config->p_getpid ||
	    !config->p_obj_iter)
		return TNFCTL_ERR_BADARG;
	h = bare_handle();
	if (!h)
		return TNFCTL_ERR_ALLOCFAIL;
	h->pr.mode = TNF_MODE_INDIRECT;
	h->pr.ops = *config;
	h->pr.proc = prochandle;
	h->pid = config->p_getpid(prochandle);
	err = tnf_probes_init(h);
	if (!err)
		err = tnf_probes_claim_external(h);
	if (err) {
		h->pr.ready = false;
		tnf_bare_handle_free(h);
		return err;
	}
	*retval = h;
	return TNFCTL_ERR_NONE;
}
