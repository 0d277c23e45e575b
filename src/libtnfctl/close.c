// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_close (tnfctl_close(3TNF)). */
#include "internal.h"

/* From a create or destroy callback (the handle is in use below it): BADARG. */
static bool in_callback(tnfctl_handle_t *h)
{
	bool in;

	pthread_mutex_lock(&h->lock);
	in = h->pr.in_create || h->pr.in_destroy;
	pthread_mutex_unlock(&h->lock);
	return in;
}

static tnfctl_errcode_t close_handle(tnfctl_handle_t *h, tnfctl_targ_op_t op)
{
	struct tnf_req req = {.op = TNF_OP_CLOSE, .arg = op};
	tnfctl_errcode_t err;
	struct tnf_rep rep;
	bool dead;

	if (!h)
		return TNFCTL_ERR_NONE;
	if (in_callback(h))
		return TNFCTL_ERR_BADARG;
	if (op != TNFCTL_TARG_DEFAULT && op != TNFCTL_TARG_KILL && op != TNFCTL_TARG_RESUME &&
	    op != TNFCTL_TARG_SUSPEND)
		return TNFCTL_ERR_BADARG;
	if (h->pr.mode == TNF_MODE_KERNEL) {
		tnf_kernel_close(h);
		return TNFCTL_ERR_NONE;
	}
	if (h->pr.mode != TNF_MODE_DIRECT) {
		/* Probe states and the trace file stay as they are in the target. */
		pthread_mutex_lock(&h->lock);
		tnf_probes_detach_target(h);
		pthread_mutex_unlock(&h->lock);
		tnf_bare_handle_free(h);
		return TNFCTL_ERR_NONE;
	}
	pthread_mutex_lock(&h->lock);
	if (h->state == TNF_H_STOPPED)
		tnf_probes_detach_target(h);
	err = tnf_client_call(h, &req, &rep);
	if (!err)
		err = rep.err;
	/* the engine has let the target go: its id is free there */
	h->closed = !err;
	dead = h->state == TNF_H_GONE || h->state == TNF_H_ENDED || op == TNFCTL_TARG_KILL ||
	       (op == TNFCTL_TARG_DEFAULT && h->exec_child);
	/*
	 * An exec_open'd target is our child: collect it once it is gone (it
	 * died with a dead engine too).  Released alive, it is the
	 * application's to reap: no longer ours to hold.
	 */
	if (h->exec_child && ((dead && !err) || tnf_client_engine_dead(h)))
		tnf_spawned_reap(h->pid);
	else if (h->exec_child && !err)
		tnf_spawned_forget(h->pid);
	if (op == TNFCTL_TARG_SUSPEND && !dead && !err)
		tnf_suspended_add(h->pid, h->tty_intr);
	pthread_mutex_unlock(&h->lock);
	tnf_probes_release(h);
	tnf_client_free_handle(h);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_close(tnfctl_handle_t *h, tnfctl_targ_op_t op)
{
	int cs = tnf_nocancel();
	tnfctl_errcode_t err = close_handle(h, op);

	tnf_cancel_restore(cs);
	return err;
}
