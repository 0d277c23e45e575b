// SPDX-License-Identifier: BSD-2-Clause
/*
 * User side of event capture (DESIGN §2.1): loads the BPF skeleton, attaches
 * the uprobes to the ld.so and libc that targets actually map, keeps the
 * tracked-tgid map, and drains the ring buffer.  Runs in the tracer helper.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "elfsym.h"
#include "kfeatures.h"
#include "tracer.h"
#include "tnfctl.skel.h"

struct uprobe_key {
	dev_t dev;
	ino_t ino;
	uint64_t off;
};

static struct tnfctl_bpf *skel;
static enum tnf_failed_exec failed_exec; /* how failed execs are caught */
static struct ring_buffer *rb;
/* The ring's consumer and producer positions (its first two pages), read-only. */
static const uint64_t *rb_cons = MAP_FAILED, *rb_prod = MAP_FAILED;
static void (*rec_cb)(const struct tnf_rec *);
static struct uprobe_key *attached;
static struct tnf_ulink *attached_links;
static size_t nattached;

/* A record is sent up to its path's end: whole again here, path NUL-ended. */
static int on_record(void *ctx, void *data, size_t len)
{
	static struct tnf_rec r;
	const size_t head = offsetof(struct tnf_rec, path);

	(void)ctx;
	if (len < head + 1 || len > sizeof(r) || !rec_cb)
		return 0;
	memcpy(&r, data, len);
	r.path[len - head - 1] = '\0';
	r.path_len = len - head;
	rec_cb(&r);
	return 0;
}

bool tnf_events_kfunc_available(void)
{
	return tnf_kfeatures()->send_signal_task;
}

bool tnf_events_kernel_ok(void)
{
	return tnf_kfeatures()->base;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("TNFCTL_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static void unmap_positions(void)
{
	if (rb_cons != MAP_FAILED)
		munmap((void *)rb_cons, getpagesize());
	if (rb_prod != MAP_FAILED)
		munmap((void *)rb_prod, getpagesize());
	rb_cons = rb_prod = MAP_FAILED;
}

int tnf_events_load(bool use_kfunc)
{
	int err, fd;

	libbpf_set_print(silent_print);
	skel = tnfctl_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->use_kfunc = use_kfunc;
	tnf_uprobe_prepare(skel->progs.on_dl_debug_state);
	tnf_uprobe_prepare(skel->progs.on_dlopen);
	tnf_uprobe_prepare(skel->progs.on_dlopen_ret);
	tnf_uprobe_prepare(skel->progs.on_dlmopen);
	tnf_uprobe_prepare(skel->progs.on_dlclose);
	tnf_uprobe_prepare(skel->progs.on_dlclose_ret);
	/*
	 * Failed execs: fexit on the execve syscalls where trampolines are
	 * allowed, else the sys_exit tracepoint; with neither, no failed-exec
	 * events (the rest works).
	 */
	failed_exec = tnf_failed_exec_prepare(skel->progs.on_sys_exit, skel->progs.on_execve_ret,
					      skel->progs.on_execveat_ret);
	err = tnfctl_bpf__load(skel);
	if (err)
		goto fail;
	/* The tracepoints at the first target (attach_tracepoints), uprobes per object. */

	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL, NULL);
	if (!rb) {
		err = -errno;
		goto fail;
	}
	fd = bpf_map__fd(skel->maps.events);
	rb_cons = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, 0);
	rb_prod = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, getpagesize());
	if (rb_cons == MAP_FAILED || rb_prod == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	unmap_positions();
	ring_buffer__free(rb);
	rb = NULL;
	tnfctl_bpf__destroy(skel);
	skel = NULL;
	return err ? err : -EINVAL;
}

/*
 * Failed execs: the sys_exit tracepoint runs at every syscall's return of
 * the whole system, so it is attached only once a handle asks for them.
 */
int tnf_events_want_exec_failed(void)
{
	if (!skel)
		return -EINVAL;
	if (failed_exec == TNF_FX_FEXIT) {
		if (!skel->links.on_execve_ret &&
		    !(skel->links.on_execve_ret = bpf_program__attach(skel->progs.on_execve_ret)))
			return -errno;
		if (!skel->links.on_execveat_ret &&
		    !(skel->links.on_execveat_ret =
			      bpf_program__attach(skel->progs.on_execveat_ret)))
			return -errno;
		return 0;
	}
	if (failed_exec == TNF_FX_NONE)
		return 0;
	if (!skel->links.on_sys_exit &&
	    !(skel->links.on_sys_exit = bpf_program__attach(skel->progs.on_sys_exit)))
		return -errno;
	return 0;
}

int tnf_events_epoll_fd(void)
{
	return ring_buffer__epoll_fd(rb);
}

int tnf_events_poll(void (*cb)(const struct tnf_rec *))
{
	rec_cb = cb;
	return ring_buffer__consume(rb);
}

/*
 * tnf_events_poll, through every record reserved before the call.  The ring
 * hands records out in the order they were reserved: one that another CPU
 * has reserved and not yet submitted holds back those after it, submitted
 * or not.  The program writing it never blocks, so wait for it to run on
 * to its submit.
 */
int tnf_events_poll_reserved(void (*cb)(const struct tnf_rec *))
{
	uint64_t end = __atomic_load_n(rb_prod, __ATOMIC_ACQUIRE);
	int n = 0, r;

	rec_cb = cb;
	for (;;) {
		r = ring_buffer__consume(rb);
		if (r < 0)
			return r;
		n += r;
		if (__atomic_load_n(rb_cons, __ATOMIC_ACQUIRE) >= end)
			return n;
		sched_yield();
	}
}

uint64_t tnf_events_lost(void)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *vals;
	uint32_t zero = 0;
	int i;

	if (ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.lost), &zero, vals) == 0)
		for (i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

/*
 * Track @tgid with @flags.  An entry is only ever created for a process we
 * trace (a tracee cannot be reaped, so its pid cannot be reused, until we
 * have waited for it): the entry's start time is then surely its own.  An
 * entry that exists (a fork child the BPF side added) is updated only if it
 * is still that process's.
 */
/*
 * The fork/exec/exit tracepoints, attached while the engine has a target:
 * an idle engine (lingering, resident, or serving only watches) costs the
 * host's processes nothing.  Kept in the skeleton's links: its destroy
 * detaches them.
 */
static int attach_tracepoints(void)
{
	if (skel->links.on_fork)
		return 0;
	if (!(skel->links.on_fork = bpf_program__attach(skel->progs.on_fork)) ||
	    !(skel->links.on_exec = bpf_program__attach(skel->progs.on_exec)) ||
	    !(skel->links.on_exit = bpf_program__attach(skel->progs.on_exit))) {
		tnf_events_idle();
		return -errno;
	}
	dbg("tracepoints attached\n");
	return 0;
}

bool tnf_events_attached(void)
{
	return skel && skel->links.on_fork;
}

/* No target left: the tracepoints go (records already written stay in the ring). */
void tnf_events_idle(void)
{
	if (!skel || !skel->links.on_fork)
		return;
	bpf_link__destroy(skel->links.on_fork);
	bpf_link__destroy(skel->links.on_exec);
	bpf_link__destroy(skel->links.on_exit);
	skel->links.on_fork = skel->links.on_exec = skel->links.on_exit = NULL;
	dbg("tracepoints detached: no target\n");
}

int tnf_events_track(pid_t tgid, unsigned int flags, uint64_t r_state_addr)
{
	struct tnf_tgid_state st = {.flags = flags, .r_state_addr = r_state_addr};
	uint32_t key = tgid;
	int fd = bpf_map__fd(skel->maps.tracked), e;
	uint64_t ticks;

	e = attach_tracepoints();
	if (e)
		return e;
	errno = 0; /* only this read's errno says why */
	ticks = tnf_start_ticks(tgid);

	/* /proc unreadable for want of a descriptor or memory is no missing process */
	if (!ticks)
		return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -errno : -ESRCH;
	/* Keep what rtld told the kernel side (RT_ADD/RT_DELETE seen). */
	if (bpf_map_lookup_elem(fd, &key, &st) == 0 && st.start_ticks == ticks) {
		st.flags = flags;
		st.r_state_addr = r_state_addr;
	} else if (tnf_proc_traced_by(tgid, getpid())) {
		st = (struct tnf_tgid_state){
			.flags = flags, .r_state_addr = r_state_addr, .start_ticks = ticks};
	} else {
		return -ESRCH;
	}
	return bpf_map_update_elem(fd, &key, &st, BPF_ANY) ? -errno : 0;
}

int tnf_events_untrack(pid_t tgid)
{
	uint32_t key = tgid;

	return bpf_map_delete_elem(bpf_map__fd(skel->maps.tracked), &key);
}

void tnf_events_untrack_all(void)
{
	int fd = bpf_map__fd(skel->maps.tracked);
	uint32_t key, next;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
}

/* Attach @prog at @sym of the file behind @path, once per (inode, offset). */
static int attach_once(struct bpf_program *prog, bool ret, const char *path, const char *sym)
{
	struct tnf_elf_sym es;
	struct tnf_ulink link;
	struct uprobe_key k;
	struct stat st;
	size_t i;
	void *p;
	int e;

	if (stat(path, &st) || tnf_elf_lookup(path, sym, &es))
		return -ENOENT;
	k.dev = st.st_dev;
	k.ino = st.st_ino;
	k.off = es.file_off | (uint64_t)ret << 63;
	for (i = 0; i < nattached; i++)
		if (attached[i].dev == k.dev && attached[i].ino == k.ino &&
		    attached[i].off == k.off)
			return 0;
	e = tnf_uprobe_attach(prog, ret, path, es.file_off, &link);
	if (e)
		return e;
	p = realloc(attached, (nattached + 1) * sizeof(*attached));
	if (p)
		attached = p;
	p = p ? realloc(attached_links, (nattached + 1) * sizeof(*attached_links)) : NULL;
	if (!p) {
		tnf_uprobe_release_all(&link, 1);
		return -ENOMEM;
	}
	attached_links = p;
	attached[nattached] = k;
	attached_links[nattached++] = link;
	return 0;
}

int tnf_events_attach_rtld(const char *ldso_path)
{
	return attach_once(skel->progs.on_dl_debug_state, false, ldso_path, "_dl_debug_state");
}

int tnf_events_attach_libc(const char *libc_path)
{
	int e = 0;

	e = e ?: attach_once(skel->progs.on_dlopen, false, libc_path, "dlopen");
	e = e ?: attach_once(skel->progs.on_dlopen_ret, true, libc_path, "dlopen");
	/* dlmopen: the same events, for an object of any link-map namespace. */
	e = e ?: attach_once(skel->progs.on_dlmopen, false, libc_path, "dlmopen");
	e = e ?: attach_once(skel->progs.on_dlopen_ret, true, libc_path, "dlmopen");
	e = e ?: attach_once(skel->progs.on_dlclose, false, libc_path, "dlclose");
	e = e ?: attach_once(skel->progs.on_dlclose_ret, true, libc_path, "dlclose");
	return e;
}

size_t tnf_events_uprobes(void)
{
	return nattached;
}

/* The engine has had no target for a while: the uprobes go, on a thread of their own. */
void tnf_events_release_uprobes(void)
{
	if (!nattached)
		return;
	dbg("releasing %zu uprobe links: no target\n", nattached);
	tnf_uprobe_release_async(attached_links, nattached);
	free(attached);
	attached_links = NULL;
	attached = NULL;
	nattached = 0;
}

/* At the helper's exit: the uprobe links released together, not one by one. */
void tnf_events_unload(void)
{
	tnf_uprobe_release_all(attached_links, nattached);
	free(attached_links);
	free(attached);
	attached_links = NULL;
	attached = NULL;
	nattached = 0;
	unmap_positions();
	ring_buffer__free(rb);
	rb = NULL;
	tnfctl_bpf__destroy(skel);
	skel = NULL;
}
