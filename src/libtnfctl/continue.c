// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_continue (tnfctl_pid_open(3TNF)), tnfctl_event_info_get and tnfctl_event_data_get. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "opts.h"

static void unlock_handle(void *arg)
{
	struct tnfctl_handle *h = arg;

	pthread_mutex_unlock(&h->lock);
}

/* Cancelled in the wait: the target stopped again (client.c), the handle unlocked and usable. */
/* @cs: the caller's cancel state, in force during the wait alone. */
static tnfctl_errcode_t wait_event(struct tnfctl_handle *h, const sigset_t *callers,
				   uint32_t child_hid, int cs, struct tnf_rep *rep)
{
	tnfctl_errcode_t err;

	pthread_cleanup_push(unlock_handle, h);
	tnf_cancel_restore(cs);
	err = tnf_client_wait_intr(h, callers, child_hid, rep);
	tnf_nocancel();
	pthread_cleanup_pop(0);
	return err;
}

static void record_event(struct tnfctl_handle *h, const struct tnf_rep *rep)
{
	tnfctl_event_info_t *e = &h->last;

	h->have_event = true;
	e->event = rep->event;
	e->pid = rep->pid ? rep->pid : h->pid;
	e->tid = rep->tid;
	e->time_ns = rep->time_ns;
	e->child_pid = rep->child_pid;
	e->exit_status = rep->exit_status;
	e->term_signal = rep->term_signal;
	memcpy(e->path, rep->path, sizeof(e->path));
	e->path[sizeof(e->path) - 1] = '\0';
	h->last_exec_errno = rep->event == TNFCTL_EVENT_EXEC_FAILED ? rep->exec_errno : 0;
	tnf_exec_data_free(&h->exec);
	/* The target is stopped (before the new image runs, or at the failed call's return). */
	if (rep->event == TNFCTL_EVENT_EXEC || rep->event == TNFCTL_EVENT_EXEC_FAILED)
		tnf_exec_data_capture(&h->exec, e->pid, rep->tid, e->path,
				      rep->event == TNFCTL_EVENT_EXEC ? 0 : rep->uargv,
				      rep->event == TNFCTL_EVENT_EXEC ? 0 : rep->exec_errno,
				      rep->flags & TNF_REPF_INTERP ? TNFCTL_EXEC_INTERP : 0);
}

static tnfctl_errcode_t continue_handle(tnfctl_handle_t *h, tnfctl_event_t *evt,
					tnfctl_handle_t **child_hndl, int cs)
{
	struct tnf_req req = {.op = TNF_OP_CONTINUE};
	sigset_t all, callers;
	tnfctl_errcode_t err;
	struct tnf_rep rep;
	int e = 0;

	if (!h || !evt || h->pr.mode != TNF_MODE_DIRECT)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	if (h->pr.in_create || h->pr.in_destroy) { /* called from a callback */
		err = TNFCTL_ERR_BADARG;
		goto out;
	}
	if (h->state == TNF_H_GONE) {
		err = TNFCTL_ERR_NOPROCESS;
		goto out;
	}
	if (h->state != TNF_H_STOPPED && h->state != TNF_H_EXEC_PENDING) {
		err = TNFCTL_ERR_BADARG;
		goto out;
	}
	if (child_hndl) {
		*child_hndl = NULL;
		/* the engine binds it to the child at a FORK */
		req.child_hid = tnf_client_new_hid(h);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &callers);
	/* rtld's start-up stop is no event: its probes are listed, and on. */
	for (;;) {
		req.arg = tnf_probes_startup_wanted(h) ? TNF_CONT_STARTUP : 0;
		err = tnf_client_request(h, &req);
		if (!err)
			err = wait_event(h, &callers, req.child_hid, cs, &rep);
		if (!err)
			err = rep.err;
		if (err || !(rep.flags & TNF_REPF_STARTUP))
			break;
		err = tnf_probes_startup(h);
		if (err)
			break;
		/*
		 * A signal taken while they were listed is the EINTR, the
		 * target kept there (the next wait could find the reply of
		 * a target that ran on first).
		 */
		if (tnf_client_signal_pending(&callers)) {
			rep.event = TNFCTL_EVENT_EINTR;
			rep.flags = 0;
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &callers, NULL);
	if (err) {
		if (err == TNFCTL_ERR_NOPROCESS)
			h->state = TNF_H_GONE;
		/* the engine's errno: out of descriptors or memory there */
		if (err == TNFCTL_ERR_ALLOCFAIL && rep.exit_status > 0)
			e = rep.exit_status;
		goto out;
	}
	record_event(h, &rep);
	*evt = rep.event;
	switch (rep.event) {
	case TNFCTL_EVENT_EXEC:
		/* NOPROBES (Linux): the handle goes on in the new image. */
		if (!(h->open_flags & TNFCTL_OPEN_NOPROBES))
			h->state = TNF_H_EXECED;
		else /* the old image's USDT probes (and uprobes) end with it */
			tnf_probes_image_gone(h);
		break;
	case TNFCTL_EVENT_EXIT:
	case TNFCTL_EVENT_TARGGONE:
		h->state = TNF_H_ENDED;
		break;
	case TNFCTL_EVENT_FORK:
		if (child_hndl && rep.child_pid > 0 && (rep.flags & TNF_REPF_CHILD_BOUND)) {
			err = tnf_client_adopt(h, req.child_hid, rep.child_pid, child_hndl);
			if (err) {
				/* the engine lets the child run free */
				tnf_client_drop_hid(h, req.child_hid);
			} else {
				/* A copy of the parent: same probes, same trace file. */
				if (!((*child_hndl)->open_flags & TNFCTL_OPEN_NOPROBES))
					tnf_probes_attach_direct(*child_hndl);
				/*
				 * Its USDT probes as the parent's (not an error of
				 * the parent's continue: one not attached is left
				 * disabled in the child, and says so).
				 */
				tnf_probes_fork(h, *child_hndl);
			}
		}
		/*
		 * Another thread's exec overtook the parent's stop at the fork:
		 * its memory is the new image's; EXEC comes next.
		 */
		if (rep.flags & TNF_REPF_EXEC_NEXT)
			h->state = TNF_H_EXEC_PENDING;
		break;
	case TNFCTL_EVENT_DLOPEN:
	case TNFCTL_EVENT_DLCLOSE:
		/* New probes exist, and their create callbacks ran, before we return. */
		if (h->pr.ready || h->pr.usdt_only)
			err = tnf_probes_sync(h);
		break;
	default:
		break;
	}
	if (h->state == TNF_H_STOPPED && h->pr.ready && !err)
		err = tnf_attrs_refresh(h);
	/*
	 * Killed after the event (only SIGKILL ends a stopped target): the
	 * event stands, and the next call reports how the target ended.
	 */
	if (err == TNFCTL_ERR_NOPROCESS)
		err = TNFCTL_ERR_NONE;
	/* An error after all: the caller never learns of a child handle, so release it. */
	if (err && child_hndl && *child_hndl) {
		tnfctl_close(*child_hndl, TNFCTL_TARG_RESUME);
		*child_hndl = NULL;
	}
out:
	if (err == TNFCTL_ERR_ALLOCFAIL && !e)
		e = errno;
	pthread_mutex_unlock(&h->lock);
	if (e)
		errno = e;
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_continue(tnfctl_handle_t *h, tnfctl_event_t *evt,
					 tnfctl_handle_t **child_hndl)
{
	int cs = tnf_nocancel();
	tnfctl_errcode_t err = continue_handle(h, evt, child_hndl, cs);

	tnf_cancel_restore(cs);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_event_exec_get(tnfctl_handle_t *h, struct tnfctl_exec_info *info)
{
	tnfctl_errcode_t err;

	if (!h || !info)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	err = tnf_exec_data_get(&h->exec, info);
	pthread_mutex_unlock(&h->lock);
	return err;
}

tnfctl_errcode_t tnf_handle_set_flags(struct tnfctl_handle *h, unsigned int flags)
{
	struct tnf_req req = {.op = TNF_OP_SET_FLAGS, .arg = flags};
	struct tnf_rep rep;
	tnfctl_errcode_t err;

	pthread_mutex_lock(&h->lock);
	err = tnf_client_call(h, &req, &rep);
	pthread_mutex_unlock(&h->lock);
	return err ? err : (tnfctl_errcode_t)rep.err;
}

TNF_API tnfctl_errcode_t tnfctl_event_info_get(tnfctl_handle_t *h, tnfctl_event_info_t *info)
{
	tnfctl_errcode_t err = TNFCTL_ERR_BADARG;

	if (!h || !info)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	if (h->have_event) {
		*info = h->last;
		err = TNFCTL_ERR_NONE;
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

/* Whether @path may be the start of a longer name: only a name execve refused as too long. */
unsigned int tnf_path_flags(bool exec_failed, int error, size_t path_len)
{
	return exec_failed && error == ENAMETOOLONG && path_len >= PATH_MAX - 1
		       ? TNFCTL_PATH_TRUNCATED
		       : 0;
}

TNF_API tnfctl_errcode_t tnfctl_event_data_get(tnfctl_handle_t *h, struct tnfctl_event_data *ev)
{
	tnfctl_errcode_t err = TNFCTL_ERR_BADARG;
	struct tnfctl_event_data d = {.sz = sizeof(d)};

	if (!h || !tnf_data_sz_ok(ev, TNFCTL_EVENT_DATA_SZ_MIN))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	if (h->have_event) {
		d.event = h->last.event;
		d.pid = h->last.pid;
		d.tid = h->last.tid;
		d.time_ns = h->last.time_ns;
		d.child_pid = h->last.child_pid;
		d.exit_status = h->last.exit_status;
		d.term_signal = h->last.term_signal;
		d.path = h->last.path;
		d.path_len = strlen(h->last.path);
		d.flags = tnf_path_flags(d.event == TNFCTL_EVENT_EXEC_FAILED, h->last_exec_errno,
					 d.path_len);
		tnf_data_out(ev, &d, sizeof(d));
		err = TNFCTL_ERR_NONE;
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}
