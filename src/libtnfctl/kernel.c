// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode (tnfctl_kernel_open(3TNF)): the kernel's tracepoints as
 * probes, the kernel buffer (a BPF ring buffer drained into a TNF file),
 * the master tracing switch and the process filter.  A tracepoint costs
 * nothing until it is enabled, traced and tracing is on: only then is the
 * program attached to it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "ktrace.h"
#include "tnf_runtime.h"

#define KT_MIN_SIZE (128u * 1024) /* as Solaris' kernel buffer */

struct tnf_kernel {
	const char *tracefs;
	struct kt_probe *probes;
	struct tnfctl_probe_handle **ph; /* by id - 1 */
	unsigned long n;
	struct kt_state *ks; /* the loaded BPF object, while there is a buffer */
	char *file;
	uint64_t size;
	bool tracing, filter;
	pid_t *pids;
	int npids;
};

/* The writer's state is per process (ktrace_file.c): one kernel handle at a time. */
static int kernel_open_count;

static tnfctl_errcode_t err_of(int e)
{
	if (e < 0)
		e = -e;
	switch (e) {
	case 0:
		return TNFCTL_ERR_NONE;
	case EPERM:
	case EACCES:
		return TNFCTL_ERR_ACCES;
	case ENOMEM:
		return TNFCTL_ERR_ALLOCFAIL;
	case ENOENT:
		return TNFCTL_ERR_FILENOTFOUND;
	default:
		return TNFCTL_ERR_INTERNAL;
	}
}

static void refresh_attrs(struct tnfctl_handle *h)
{
	struct tnf_kernel *k = h->kern;

	h->attrs.targ_pid = 0;
	h->attrs.trace_file_name = k->file;
	h->attrs.trace_buf_size = k->ks ? k->size : 0;
	h->attrs.trace_min_size = KT_MIN_SIZE;
	h->attrs.trace_buf_state = k->ks ? TNFCTL_BUF_OK : TNFCTL_BUF_NONE;
	h->attrs.trace_state = k->tracing ? B_TRUE : B_FALSE;
	h->attrs.filter_state = k->filter ? B_TRUE : B_FALSE;
}

static void free_kernel(struct tnf_kernel *k)
{
	if (!k)
		return;
	kt_probes_free(k->probes, k->n);
	free(k->ph);
	free(k->file);
	free(k->pids);
	free(k);
}

TNF_API tnfctl_errcode_t tnfctl_kernel_open(tnfctl_handle_t **retval)
{
	struct tnfctl_handle *h = NULL;
	struct tnf_kernel *k = NULL;
	tnfctl_errcode_t err;
	unsigned long i;
	int e;

	if (!retval)
		return TNFCTL_ERR_BADARG;
	if (__atomic_fetch_add(&kernel_open_count, 1, __ATOMIC_ACQ_REL)) {
		__atomic_fetch_sub(&kernel_open_count, 1, __ATOMIC_ACQ_REL);
		return TNFCTL_ERR_BUSY;
	}
	k = calloc(1, sizeof(*k));
	h = calloc(1, sizeof(*h));
	if (!k || !h) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto fail;
	}
	k->tracefs = kt_tracefs();
	if (!k->tracefs) {
		err = geteuid() ? TNFCTL_ERR_ACCES : TNFCTL_ERR_FILENOTFOUND;
		goto fail;
	}
	e = kt_probes_list(k->tracefs, &k->probes, &k->n);
	if (e) {
		err = err_of(e);
		goto fail;
	}
	k->ph = calloc(k->n ? k->n : 1, sizeof(*k->ph));
	if (!k->ph) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto fail;
	}
	tnf_handle_init(h);
	h->sock = -1;
	h->state = TNF_H_STOPPED;
	h->pr.mode = TNF_MODE_KERNEL;
	h->kern = k;
	for (i = 0; i < k->n; i++) {
		struct tnfctl_probe_handle *p;

		e = kt_probe_parse(k->tracefs, &k->probes[i], i + 1);
		if (e == -ENOMEM) {
			err = TNFCTL_ERR_ALLOCFAIL;
			goto fail_probes;
		}
		p = calloc(1, sizeof(*p));
		if (!p) {
			free((char *)k->probes[i].cb.attrs);
			err = TNFCTL_ERR_ALLOCFAIL;
			goto fail_probes;
		}
		p->owner = h;
		p->valid = !e; /* a tracepoint whose format cannot be read is not a probe */
		p->new_probe = true;
		p->id = i + 1;
		k->probes[i].traced =
			true; /* a fresh probe is disabled and traced, as in a process */
		p->attrs = (char *)k->probes[i].cb.attrs;
		*h->pr.all_tail = p;
		h->pr.all_tail = &p->next_all;
		k->ph[i] = p;
	}
	h->pr.ready = true;
	refresh_attrs(h);
	*retval = h;
	return TNFCTL_ERR_NONE;
fail_probes:
	h->kern = NULL;
	free_kernel(k);
	tnf_bare_handle_free(h);
	__atomic_fetch_sub(&kernel_open_count, 1, __ATOMIC_ACQ_REL);
	return err;
fail:
	free_kernel(k);
	free(h);
	__atomic_fetch_sub(&kernel_open_count, 1, __ATOMIC_ACQ_REL);
	return err;
}

static bool is_kernel(struct tnfctl_handle *h)
{
	return h && h->pr.mode == TNF_MODE_KERNEL && h->kern;
}

/* Attach or detach @p's program to match its state (@h locked). */
static tnfctl_errcode_t sync_probe(struct tnf_kernel *k, struct kt_probe *p)
{
	if (k->ks && k->tracing && p->enabled && p->traced)
		return err_of(kt_attach(k->ks, p));
	if (k->ks)
		kt_detach(k->ks, p);
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_kernel_probe_set(struct tnfctl_handle *h, struct tnfctl_probe_handle *p,
				      int what, bool on)
{
	struct tnf_kernel *k;
	struct kt_probe *kp;
	tnfctl_errcode_t err;

	if (!is_kernel(h) || !p || p->owner != h)
		return TNFCTL_ERR_BADARG;
	if (!p->valid)
		return TNFCTL_ERR_INVALIDPROBE;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	kp = &k->probes[p->id - 1];
	if (what == TNF_KP_ENABLE)
		kp->enabled = on;
	else
		kp->traced = on;
	err = sync_probe(k, kp);
	pthread_mutex_unlock(&h->lock);
	return err;
}

tnfctl_errcode_t tnf_kernel_state_get(struct tnfctl_handle *h, struct tnfctl_probe_handle *p,
				      tnfctl_probe_state_t *st)
{
	struct kt_probe *kp;

	if (!p || p->owner != h || !st)
		return TNFCTL_ERR_BADARG;
	if (!p->valid)
		return TNFCTL_ERR_INVALIDPROBE;
	pthread_mutex_lock(&h->lock);
	kp = &h->kern->probes[p->id - 1];
	memset(st, 0, sizeof(*st));
	st->id = p->id;
	st->attr_string = p->attrs;
	st->enabled = kp->enabled ? B_TRUE : B_FALSE;
	st->traced = kp->traced ? B_TRUE : B_FALSE;
	st->new_probe = p->new_probe ? B_TRUE : B_FALSE;
	st->client_registered_data = p->client_data;
	pthread_mutex_unlock(&h->lock);
	return TNFCTL_ERR_NONE;
}

struct tnfctl_probe_handle *tnf_kernel_probe_by_id(struct tnfctl_handle *h, unsigned long id)
{
	return id >= 1 && id <= h->kern->n ? h->kern->ph[id - 1] : NULL;
}

/* The default file: $TMPDIR/ktrace-<pid> (prex's user-mode default is trace-<pid>). */
static tnfctl_errcode_t default_file(char *path, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (snprintf(path, len, "%s/ktrace-%d", tmp, (int)getpid()) >= (int)len)
		return TNFCTL_ERR_BADARG;
	return TNFCTL_ERR_NONE;
}

/*
 * The ring buffer only stages records on their way to the file: a power of
 * two of pages, at least a quarter of the file (and 64 KiB).
 */
static uint64_t rb_size_for(uint64_t size)
{
	uint64_t r = (uint64_t)sysconf(_SC_PAGESIZE), want = size / 4;

	if (want < 64 * 1024)
		want = 64 * 1024;
	while (r < want && r < (1ull << 28))
		r <<= 1;
	return r;
}

static tnfctl_errcode_t load_filter(struct tnf_kernel *k)
{
	int i, e;

	for (i = 0; i < k->npids; i++) {
		e = kt_filter_update(k->ks, (uint32_t)k->pids[i], true);
		if (e)
			return err_of(e);
	}
	kt_set_filter(k->ks, k->filter);
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_kernel_buffer_alloc(struct tnfctl_handle *h, const char *name, uint_t size)
{
	char path[PATH_MAX];
	struct tnf_kernel *k;
	tnfctl_errcode_t err;
	unsigned long i;
	int fd = -1, e;

	if (!is_kernel(h))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	if (k->ks) {
		err = TNFCTL_ERR_BUFEXISTS;
		goto out;
	}
	if (size < KT_MIN_SIZE) {
		err = TNFCTL_ERR_SIZETOOSMALL;
		goto out;
	}
	if (size > TNF_TRACE_FILE_MAX) {
		err = TNFCTL_ERR_SIZETOOBIG;
		goto out;
	}
	err = name && name[0] ? tnf_abs_path(name, path, sizeof(path))
			      : default_file(path, sizeof(path));
	if (err)
		goto out;
	fd = tnf_create_file(path, size, geteuid(), &err);
	if (fd < 0)
		goto out;
	e = ktf_open(fd, size);
	close(fd);
	if (e) {
		unlink(path);
		err = err_of(e);
		goto out;
	}
	for (i = 0; i < k->n; i++)
		ktf_probe_reset(&k->probes[i]);
	e = kt_load(&k->ks, rb_size_for(size), k->probes, k->n);
	if (!e && (err = load_filter(k)) == TNFCTL_ERR_NONE)
		e = kt_start_consumer(k->ks);
	if (e || err) {
		kt_unload(k->ks);
		k->ks = NULL;
		ktf_close();
		unlink(path);
		err = err ? err : err_of(e);
		goto out;
	}
	free(k->file);
	k->file = strdup(path);
	k->size = size;
	err = TNFCTL_ERR_NONE;
out:
	refresh_attrs(h);
	pthread_mutex_unlock(&h->lock);
	return err;
}

/* Stops the consumer after it has written everything, closes the file. */
static void dealloc_locked(struct tnf_kernel *k)
{
	kt_unload(k->ks);
	k->ks = NULL;
	ktf_close();
}

TNF_API tnfctl_errcode_t tnfctl_buffer_dealloc(tnfctl_handle_t *h)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;

	if (!is_kernel(h))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	if (!h->kern->ks)
		err = TNFCTL_ERR_NOBUF;
	else if (h->kern->tracing)
		err = TNFCTL_ERR_BADDEALLOC;
	else
		dealloc_locked(h->kern);
	refresh_attrs(h);
	pthread_mutex_unlock(&h->lock);
	return err;
}

static void tracing_off_locked(struct tnf_kernel *k)
{
	unsigned long i;

	k->tracing = false;
	if (!k->ks)
		return;
	kt_set_tracing(k->ks, false);
	for (i = 0; i < k->n; i++)
		kt_detach(k->ks, &k->probes[i]);
	/* the links are gone: what the kernel wrote is all in the ring buffer */
	kt_drain(k->ks);
}

TNF_API tnfctl_errcode_t tnfctl_trace_state_set(tnfctl_handle_t *h, boolean_t on)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;
	unsigned long i;

	if (!is_kernel(h))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	if (!on) {
		tracing_off_locked(k);
	} else if (!k->ks) {
		err = TNFCTL_ERR_NOBUF;
	} else if (!k->tracing) {
		k->tracing = true;
		kt_set_tracing(k->ks, true);
		for (i = 0; i < k->n && !err; i++)
			if (h->kern->ph[i]->valid)
				err = sync_probe(k, &k->probes[i]);
		if (err)
			tracing_off_locked(k);
	}
	refresh_attrs(h);
	pthread_mutex_unlock(&h->lock);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_filter_state_set(tnfctl_handle_t *h, boolean_t on)
{
	if (!is_kernel(h))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	h->kern->filter = on;
	if (h->kern->ks)
		kt_set_filter(h->kern->ks, on);
	refresh_attrs(h);
	pthread_mutex_unlock(&h->lock);
	return TNFCTL_ERR_NONE;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_get(tnfctl_handle_t *h, pid_t **list, int *n)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;

	if (!is_kernel(h) || !list || !n)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	*list = NULL;
	*n = 0;
	if (k->npids) {
		*list = malloc((size_t)k->npids * sizeof(pid_t));
		if (*list) {
			memcpy(*list, k->pids, (size_t)k->npids * sizeof(pid_t));
			*n = k->npids;
		} else {
			err = TNFCTL_ERR_ALLOCFAIL;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

static int find_pid(const struct tnf_kernel *k, pid_t pid)
{
	int i;

	for (i = 0; i < k->npids; i++)
		if (k->pids[i] == pid)
			return i;
	return -1;
}

static bool process_exists(pid_t pid)
{
	return pid == 0 || !kill(pid, 0) || errno != ESRCH;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_add(tnfctl_handle_t *h, pid_t pid)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;
	pid_t *v;

	if (!is_kernel(h) || pid < 0)
		return TNFCTL_ERR_BADARG;
	if (!process_exists(pid))
		return TNFCTL_ERR_NOPROCESS;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	if (find_pid(k, pid) >= 0)
		goto out;
	v = realloc(k->pids, (size_t)(k->npids + 1) * sizeof(*v));
	if (!v) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out;
	}
	k->pids = v;
	if (k->ks)
		err = err_of(kt_filter_update(k->ks, (uint32_t)pid, true));
	if (!err)
		k->pids[k->npids++] = pid;
out:
	pthread_mutex_unlock(&h->lock);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_delete(tnfctl_handle_t *h, pid_t pid)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;
	int i;

	if (!is_kernel(h))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	i = find_pid(k, pid);
	if (i < 0) {
		/* Solaris dropped an exited process from the list: ESRCH */
		err = process_exists(pid) ? TNFCTL_ERR_BADARG : TNFCTL_ERR_NOPROCESS;
		goto out;
	}
	if (k->ks)
		err = err_of(kt_filter_update(k->ks, (uint32_t)pid, false));
	if (!err) {
		k->pids[i] = k->pids[--k->npids];
		if (!process_exists(pid))
			err = TNFCTL_ERR_NOPROCESS;
	}
out:
	pthread_mutex_unlock(&h->lock);
	return err;
}

/* tnfctl_close on a kernel handle: tracing off, the file complete and closed. */
void tnf_kernel_close(struct tnfctl_handle *h)
{
	struct tnf_kernel *k = h->kern;

	pthread_mutex_lock(&h->lock);
	tracing_off_locked(k);
	if (k->ks)
		dealloc_locked(k);
	h->kern = NULL;
	pthread_mutex_unlock(&h->lock);
	free_kernel(k);
	tnf_bare_handle_free(h);
	__atomic_fetch_sub(&kernel_open_count, 1, __ATOMIC_ACQ_REL);
}
