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
#include <linux/capability.h>
#include <sys/syscall.h>

#include "internal.h"
#include "kfeatures.h"
#include "ktrace.h"
#include "tnf_runtime.h"
#include "usdt.h"

#define KT_MIN_SIZE (128u * 1024) /* as Solaris' kernel buffer */

/* The writer's state is per process (ktrace_file.c): one kernel handle at a time. */
static int kernel_open_count;

tnfctl_errcode_t tnf_kernel_err(int e)
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
	case EMFILE: /* out of descriptors: errno says so */
	case ENFILE:
		return TNFCTL_ERR_ALLOCFAIL;
	case ENOENT:
		return TNFCTL_ERR_FILENOTFOUND;
	case EBUSY: /* the writer has a file already (ktf_open) */
		return TNFCTL_ERR_BUSY;
	case ENOSPC: /* KT_SLOTS probes traced at once, without BPF cookies (ktrace.c) */
		return TNFCTL_ERR_ALLOCFAIL;
	default:
		return TNFCTL_ERR_INTERNAL;
	}
}

void tnf_kernel_refresh_attrs(struct tnfctl_handle *h)
{
	struct tnf_kernel *k = h->kern;

	h->attrs.targ_pid = 0;
	h->attrs.trace_file_name = k->ks ? k->file : NULL;
	h->attrs.trace_buf_size = k->ks ? k->size : 0;
	h->attrs.trace_min_size = KT_MIN_SIZE;
	h->attrs.trace_buf_state = !k->ks	  ? TNFCTL_BUF_NONE
				   : ktf_broken() ? TNFCTL_BUF_BROKEN
						  : TNFCTL_BUF_OK;
	h->attrs.trace_state = k->tracing ? B_TRUE : B_FALSE;
	h->attrs.filter_state = k->filter ? B_TRUE : B_FALSE;
}

/* CAP_BPF with CAP_PERFMON (5.8+), or CAP_SYS_ADMIN, in the effective set. */
static bool may_trace_kernel(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d)); /* valgrind knows capget's first struct only */
	if (syscall(SYS_capget, &hdr, d))
		return false;
#define HAS(c) ((d[(c) / 32].effective >> ((c) % 32)) & 1)
	return HAS(21) || (HAS(39) && HAS(38)); /* SYS_ADMIN; BPF and PERFMON */
#undef HAS
}

static void free_kernel(struct tnf_kernel *k)
{
	if (!k)
		return;
	kt_probes_free(k->probes, k->n);
	free(k->ph);
	free(k->file);
	tnf_kfilter_free(k);
	free(k);
}

/*
 * The open kernel handle, for the fork handlers: a child that does not exec
 * lets go of the links, programs and maps at once, so the parent's close
 * detaches everything (the child kept them until it closed its copy).
 * Lock order: kfork_lock, then the handle's lock.
 */
static pthread_mutex_t kfork_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t kfork_once = PTHREAD_ONCE_INIT;
static struct tnfctl_handle *kfork_handle;

static void kfork_prepare(void)
{
	pthread_mutex_lock(&kfork_lock);
	if (kfork_handle)
		pthread_mutex_lock(&kfork_handle->lock);
}

static void kfork_parent(void)
{
	if (kfork_handle)
		pthread_mutex_unlock(&kfork_handle->lock);
	pthread_mutex_unlock(&kfork_lock);
}

static void kfork_child(void)
{
	struct tnfctl_handle *h = kfork_handle;

	if (h) {
		/* no call was in progress: the prepare handler held the lock */
		kt_fork_child(h->kern->ks);
		tnf_handle_lock_init(h);
	}
	pthread_mutex_unlock(&kfork_lock);
}

static void kfork_install(void)
{
	pthread_atfork(kfork_prepare, kfork_parent, kfork_child);
}

static void kfork_set(struct tnfctl_handle *h)
{
	pthread_once(&kfork_once, kfork_install);
	pthread_mutex_lock(&kfork_lock);
	kfork_handle = h;
	pthread_mutex_unlock(&kfork_lock);
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
	if (!may_trace_kernel()) {
		err = TNFCTL_ERR_ACCES;
		goto fail;
	}
	/* BTF and the ring buffer; without cookies a stub per tracepoint (ktrace.c) */
	if (!tnf_kfeatures()->base) {
		err = TNFCTL_ERR_KERNEL;
		goto fail;
	}
	k->tracefs = kt_tracefs();
	if (!k->tracefs) {
		err = geteuid() ? TNFCTL_ERR_ACCES : TNFCTL_ERR_FILENOTFOUND;
		goto fail;
	}
	e = kt_probes_list(k->tracefs, &k->probes, &k->n);
	if (e) {
		err = tnf_kernel_err(e);
		goto fail;
	}
	k->ph = calloc(k->n ? k->n : 1, sizeof(*k->ph));
	if (!k->ph) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto fail;
	}
	tnf_handle_init(h);
	h->state = TNF_H_STOPPED;
	h->pr.mode = TNF_MODE_KERNEL;
	k->owner = getpid();
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
	tnf_kernel_refresh_attrs(h);
	kfork_set(h);
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

/*
 * A kernel handle of this process: a forked child's copy shares the
 * parent's BPF object, ring buffer and file, and takes no call but close.
 */
bool tnf_is_kernel(struct tnfctl_handle *h)
{
	return h && h->pr.mode == TNF_MODE_KERNEL && h->kern && h->kern->owner == getpid();
}

/* @p's program writes or not, to match its state (@h locked). */
static tnfctl_errcode_t sync_probe(struct tnf_kernel *k, struct kt_probe *p)
{
	if (k->ks && k->tracing && p->enabled && p->traced)
		return tnf_kernel_err(kt_activate(k->ks, p));
	if (k->ks)
		kt_deactivate(k->ks, p);
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_kernel_probe_set(struct tnfctl_handle *h, struct tnfctl_probe_handle *p,
				      int what, bool on)
{
	struct tnf_kernel *k;
	struct kt_probe *kp;
	tnfctl_errcode_t err;
	bool old;

	if (!tnf_is_kernel(h) || !p || p->owner != h)
		return TNFCTL_ERR_BADARG;
	if (!p->valid)
		return TNFCTL_ERR_INVALIDPROBE;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	kp = &k->probes[p->id - 1];
	old = what == TNF_KP_ENABLE ? kp->enabled : kp->traced;
	if (what == TNF_KP_ENABLE)
		kp->enabled = on;
	else
		kp->traced = on;
	err = sync_probe(k, kp);
	if (err && what == TNF_KP_ENABLE) /* not attached: the state stays as it was */
		kp->enabled = old;
	else if (err)
		kp->traced = old;
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

	char name[PATH_MAX];

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (snprintf(name, sizeof(name), "%s/ktrace-%d", tmp, (int)getpid()) >= (int)sizeof(name))
		return TNFCTL_ERR_BADARG;
	return tnf_abs_path(name, path, len);
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

tnfctl_errcode_t tnf_kernel_buffer_alloc(struct tnfctl_handle *h, const char *name, uint_t size)
{
	struct tnf_tmpfile tf;
	char path[PATH_MAX];
	struct tnf_kernel *k;
	tnfctl_errcode_t err;
	unsigned long i;
	int fd = -1, e;

	if (!tnf_is_kernel(h))
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
	/* renamed over @path only once all is set up: a failure keeps the old file */
	fd = tnf_create_tmpfile(path, size, geteuid(), &tf, &err);
	if (fd < 0)
		goto out;
	tnf_usdt_let_go();
	e = ktf_open(fd, size);
	close(fd);
	if (e) {
		tnf_tmpfile_discard(&tf);
		err = tnf_kernel_err(e);
		goto out;
	}
	for (i = 0; i < k->n; i++)
		ktf_probe_reset(&k->probes[i]);
	e = kt_load(&k->ks, rb_size_for(size), k->probes, k->n);
	if (!e && (err = tnf_kfilter_load(k)) == TNFCTL_ERR_NONE)
		e = kt_start_consumer(k->ks);
	if (!e && !err)
		err = tnf_tmpfile_commit(&tf);
	if (e || err) {
		kt_unload(k->ks);
		k->ks = NULL;
		ktf_close();
		tnf_tmpfile_discard(&tf);
		err = err ? err : tnf_kernel_err(e);
		goto out;
	}
	free(k->file);
	k->file = strdup(path);
	k->size = size;
	err = TNFCTL_ERR_NONE;
out:
	tnf_kernel_refresh_attrs(h);
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

	if (!tnf_is_kernel(h))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	if (!h->kern->ks)
		err = TNFCTL_ERR_NOBUF;
	else if (h->kern->tracing)
		err = TNFCTL_ERR_BADDEALLOC;
	else
		dealloc_locked(h->kern);
	tnf_kernel_refresh_attrs(h);
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
		kt_deactivate(k->ks, &k->probes[i]);
	/* no program writes any more: what the kernel wrote is all in the ring buffer */
	kt_quiesce();
	kt_drain(k->ks);
}

TNF_API tnfctl_errcode_t tnfctl_trace_state_set(tnfctl_handle_t *h, boolean_t on)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;
	unsigned long i;

	if (!tnf_is_kernel(h))
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
	tnf_kernel_refresh_attrs(h);
	pthread_mutex_unlock(&h->lock);
	return err;
}

/* tnfctl_close on a kernel handle: tracing off, the file complete and closed. */
void tnf_kernel_close(struct tnfctl_handle *h)
{
	struct tnf_kernel *k = h->kern;

	kfork_set(NULL);
	pthread_mutex_lock(&h->lock);
	if (k->owner != getpid()) {
		/* a forked child's copy: let go of the parent's object, change nothing */
		kt_forget(k->ks);
		k->ks = NULL;
		ktf_forget();
	}
	tracing_off_locked(k);
	if (k->ks)
		dealloc_locked(k);
	h->kern = NULL;
	pthread_mutex_unlock(&h->lock);
	free_kernel(k);
	tnf_bare_handle_free(h);
	__atomic_fetch_sub(&kernel_open_count, 1, __ATOMIC_ACQ_REL);
}
