// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine's passive watches.  One BPF object (bpf/watch.bpf.c), loaded
 * at the first watch and kept for the engine's life, serves every watch of
 * every client: a watch is a slot, its bit in each tracked process's mask,
 * its own ring buffer at its index of the `rings` map-of-maps.  The ring's
 * descriptor and the read-only counters (`.data.wslots`) go to the client
 * (SCM_RIGHTS), which reads its records straight from the kernel; none
 * passes through here.  The tracepoints are attached while a watch is open,
 * so that with none open no fork, exec or exit pays for them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kfeatures.h"
#include "watches.h"
#include "watch.skel.h"
#include "watch_compat.skel.h"

#define RING_MIN (4096ull)
#define RING_MAX (1ull << 30)

/* Who a slot serves. */
static struct {
	struct tnf_conn *conn;
	uint32_t hid;
	bool used;
} owners[TNF_WATCH_SLOTS];

static struct tnfctl_watch_bpf *skel;
static struct ring_buffer *notices;
static bool legacy_exit; /* no group_dead in the exit tracepoint */
static bool iter_all;	 /* the kernel cannot narrow a task iterator to one task (< 6.1) */
static bool compat;	 /* the object built with TNF_WATCH_COMPAT is loaded */
static enum tnf_failed_exec failed_exec;

static tnfctl_errcode_t errno_err(int e)
{
	e = e < 0 ? -e : e;
	if (e == EPERM || e == EACCES)
		return TNFCTL_ERR_ACCES;
	if (e == ENOMEM || e == EMFILE || e == ENFILE)
		return TNFCTL_ERR_ALLOCFAIL;
	if (e == ESRCH)
		return TNFCTL_ERR_NOPROCESS;
	return TNFCTL_ERR_INTERNAL;
}

/*
 * A DL watch's process exec'd a file not seen before: its libc probed.  If
 * it maps none (gone already, not mapped yet, static), the file is
 * forgotten, so that its next exec is looked at again.
 */
static int on_notice(void *ctx, void *data, size_t len)
{
	const struct tnf_wnotice *n = data;

	(void)ctx;
	if (len < sizeof(*n) || !skel->bss->dl_mask)
		return 0;
	if (!watch_attach_libc_of(skel, n->tgid))
		bpf_map_delete_elem(bpf_map__fd(skel->maps.exe_seen), &n->exe);
	return 0;
}

/*
 * The object built with TNF_WATCH_COMPAT (bpf/watch.bpf.c), opened with the
 * skeleton of the other: the same programs, maps and globals by name (a
 * difference fails the open), only its ELF bytes are its own.
 */
static struct tnfctl_watch_bpf *open_compat(void)
{
	struct tnfctl_watch_bpf *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	err = tnfctl_watch_bpf__create_skeleton(s);
	if (!err) {
		s->skeleton->data =
			(void *)tnfctl_watch_compat_bpf__elf_bytes(&s->skeleton->data_sz);
		err = bpf_object__open_skeleton(s->skeleton, NULL);
	}
	if (err) {
		tnfctl_watch_bpf__destroy(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/* The compat object is loaded: no attach cookies (watch_tree.c). */
bool watch_compat(void)
{
	return compat;
}

static tnfctl_errcode_t load(void)
{
	const struct tnf_kfeatures *kf = tnf_kfeatures();
	struct tnfctl_watch_bpf *s;
	int err;

	if (skel)
		return TNFCTL_ERR_NONE;
	if (!kf->base || !kf->iter_task) {
		dbg("watch: the kernel lacks BTF, ring buffers or BPF task iterators\n");
		return TNFCTL_ERR_KERNEL;
	}
	/*
	 * Each feature past 5.10 probed: without one, the object built for
	 * 5.10 (bounded loops, XADD, bpf_get_current_task, no cookies).
	 */
	compat = kf->watch_compat_forced || !kf->loop || !kf->atomic_fetch || !kf->attach_cookie ||
		 !kf->current_task_btf;
	if (compat)
		dbg("watch: the object for kernels without bpf_loop, atomic fetch, attach "
		    "cookies or bpf_get_current_task_btf%s\n",
		    kf->watch_compat_forced ? " (TNFCTL_WATCH_COMPAT)" : "");
	s = compat ? open_compat() : tnfctl_watch_bpf__open();
	if (!s)
		return errno_err(errno);
	legacy_exit = !tnf_kfeatures()->exit_group_dead;
	tnf_uprobe_prepare(s->progs.on_dlopen);
	tnf_uprobe_prepare(s->progs.on_dlopen_ret);
	tnf_uprobe_prepare(s->progs.on_dlmopen);
	tnf_uprobe_prepare(s->progs.on_dlclose);
	tnf_uprobe_prepare(s->progs.on_dlclose_ret);
	tnf_uprobe_prepare(s->progs.on_dl_debug_state);
	bpf_program__set_autoload(legacy_exit ? s->progs.on_exit : s->progs.on_exit_live, false);
	/* Failed execs: fexit on the execve syscalls, else sys_exit. */
	failed_exec = tnf_failed_exec_prepare(s->progs.on_sys_exit, s->progs.on_execve_ret,
					      s->progs.on_execveat_ret);
	err = bpf_map__set_max_entries(s->maps.exec_scratch, libbpf_num_possible_cpus());
	err = err ?: tnfctl_watch_bpf__load(s);
	if (!err) {
		notices = ring_buffer__new(bpf_map__fd(s->maps.notices), on_notice, NULL, NULL);
		err = notices ? 0 : -errno;
	}
	if (err) {
		dbg("watch: cannot load the BPF object: %s\n", strerror(-err));
		tnfctl_watch_bpf__destroy(s);
		/* the verifier's refusal on a kernel of other features is no internal error */
		return err == -EPERM || err == -EACCES || err == -ENOMEM ? errno_err(err)
									 : TNFCTL_ERR_KERNEL;
	}
	skel = s;
	if (wrings_start(bpf_map__fd(s->maps.rings)))
		dbg("watch: no thread for the ring pool: every open makes its ring\n");
	dbg("watch: BPF object loaded\n");
	return TNFCTL_ERR_NONE;
}

static int attach_tracepoints(void)
{
	struct tnfctl_watch_bpf *s = skel;
	struct bpf_program *exit_prog = legacy_exit ? s->progs.on_exit_live : s->progs.on_exit;
	struct bpf_link **exit_link = legacy_exit ? &s->links.on_exit_live : &s->links.on_exit;

	if (s->links.on_fork)
		return 0;
	/* Kept in the skeleton's links: detach_tracepoints and its destroy detach them. */
	if (!(s->links.on_fork = bpf_program__attach(s->progs.on_fork)) ||
	    !(s->links.on_exec = bpf_program__attach(s->progs.on_exec)) ||
	    !(*exit_link = bpf_program__attach(exit_prog)))
		return -errno;
	if (failed_exec == TNF_FX_SYS_EXIT &&
	    !(s->links.on_sys_exit = bpf_program__attach(s->progs.on_sys_exit)))
		return -errno;
	if (failed_exec == TNF_FX_FEXIT &&
	    (!(s->links.on_execve_ret = bpf_program__attach(s->progs.on_execve_ret)) ||
	     !(s->links.on_execveat_ret = bpf_program__attach(s->progs.on_execveat_ret))))
		return -errno;
	return 0;
}

static void detach_one(struct bpf_link **l)
{
	bpf_link__destroy(*l);
	*l = NULL;
}

static void detach_tracepoints(void)
{
	detach_one(&skel->links.on_fork);
	detach_one(&skel->links.on_exec);
	detach_one(&skel->links.on_exit);
	detach_one(&skel->links.on_exit_live);
	detach_one(&skel->links.on_sys_exit);
	detach_one(&skel->links.on_execve_ret);
	detach_one(&skel->links.on_execveat_ret);
}

/* Runs add_proc once over the task @pid, or over every task (see bpf/watch.bpf.c). */
static int run_add_iter(pid_t pid)
{
	union bpf_iter_link_info li = {.task.tid = pid};
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &li, .link_info_len = sizeof(li));
	struct bpf_link *l = NULL;
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	/* A kernel before 6.1 refuses the task parameter (E2BIG, EINVAL): walk them all. */
	if (!iter_all) {
		l = bpf_program__attach_iter(skel->progs.add_proc, &opts);
		if (!l && errno != EPERM && errno != EACCES && errno != ENOMEM && errno != ESRCH)
			iter_all = true;
	}
	if (iter_all)
		l = bpf_program__attach_iter(skel->progs.add_proc, NULL);
	if (!l)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(l));
	if (fd < 0)
		err = -errno;
	/* The program writes nothing: one read runs it over the tasks. */
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) != 0)
		if (n < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(l);
	return err;
}

/* Add @pid to @slot's tree (a child of @ppid in it, or its root if 0), in the kernel. */
int watch_add(unsigned int slot, pid_t pid, pid_t ppid)
{
	struct tnf_watch_add *a = &skel->bss->add_req;
	int err;

	a->pid = pid;
	a->ppid = ppid;
	a->slot = slot;
	a->ret = -ESRCH; /* no such task: the program never got to it */
	err = run_add_iter(pid);
	if (err)
		return err;
	return a->ret == -EEXIST ? 0 : a->ret;
}

/*
 * Take @bit out of every tracked process.  `active` no longer has it, so no
 * fork passes it on from now; a fork that read `active` just before is
 * caught by the sweep at the slot's next open.
 */
static void sweep(uint64_t bit)
{
	int fd = bpf_map__fd(skel->maps.tracked);
	struct tnf_watch_proc v;
	uint32_t key, next;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v) || !(v.mask & bit))
			continue;
		v.mask &= ~bit;
		if (v.mask)
			bpf_map_update_elem(fd, &key, &v, BPF_EXIST);
		else
			bpf_map_delete_elem(fd, &key);
	}
}

static void slot_close(unsigned int s)
{
	uint64_t bit = 1ull << s;

	__atomic_and_fetch(&skel->bss->active, ~bit, __ATOMIC_SEQ_CST);
	__atomic_and_fetch(&skel->bss->dl_mask, ~bit, __ATOMIC_SEQ_CST);
	sweep(bit);
	owners[s].used = false;
	owners[s].conn = NULL;
	wrings_put(s);
	dbg("watch: slot %u closed\n", s);
	if (!skel->bss->active)
		detach_tracepoints();
}

static int slot_of(struct tnf_peer p)
{
	unsigned int s;

	for (s = 0; s < TNF_WATCH_SLOTS; s++)
		if (owners[s].used && owners[s].conn == p.conn && owners[s].hid == p.hid)
			return (int)s;
	return -1;
}

static uint64_t ring_bytes(uint64_t want)
{
	uint64_t s;

	for (s = RING_MIN; s < want && s < RING_MAX; s <<= 1)
		;
	return s;
}

/*
 * A slot with its ring (watch_rings.c), settings and counters, open (its
 * tree still empty); *@ring_fd: the ring's descriptor.
 */
static tnfctl_errcode_t slot_open(const struct tnf_req *req, int *slot, int *ring_fd)
{
	uint64_t size = ring_bytes(req->size), delay = req->delay_ns, bit;
	struct tnf_wslot_cfg *c;
	int s;

	s = wrings_take(size, ring_fd);
	if (s < 0)
		return errno == ENOSPC ? TNFCTL_ERR_ALLOCFAIL : errno_err(errno);
	bit = 1ull << s;
	c = &skel->bss->wcfg[s];
	sweep(bit);
	if (delay < 1000000 || delay > 1000000000)
		delay = TNFCTL_WATCH_DELAY_MS * 1000000ull;
	c->delay_ns = delay;
	c->wake_bytes = size / 4;
	/* A record must fit in the ring with room to spare. */
	c->argv_max = size / 8 < TNF_EXEC_ARGV_MAX ? size / 8 : TNF_EXEC_ARGV_MAX;
	c->untrack_secure = !watch_caller_may_trace_all();
	memset(&skel->data_wslots->wslots[s], 0, sizeof(skel->data_wslots->wslots[s]));
	__atomic_or_fetch(&skel->bss->active, bit, __ATOMIC_SEQ_CST);
	if (req->flags & TNFCTL_WATCH_DL)
		__atomic_or_fetch(&skel->bss->dl_mask, bit, __ATOMIC_SEQ_CST);
	*slot = s;
	return TNFCTL_ERR_NONE;
}

static void op_open(struct tnf_peer from, const struct tnf_req *req)
{
	struct tnf_rep rep;
	tnfctl_errcode_t err;
	int s, ring_fd = -1, e;

	if (slot_of(from) >= 0 || (req->flags & ~(TNFCTL_WATCH_DL | TNF_WATCH_HELD))) {
		srv_reply_err(from, TNFCTL_ERR_BADARG);
		return;
	}
	err = req->pid > 0 ? tnf_check_may_trace(req->pid) : TNFCTL_ERR_NOPROCESS;
	err = err ?: load();
	if (err) {
		srv_reply_err(from, err);
		return;
	}
	err = slot_open(req, &s, &ring_fd);
	if (err) {
		srv_reply_err(from, err);
		return;
	}
	owners[s].used = true;
	owners[s].conn = from.conn;
	owners[s].hid = from.hid;
	/* The root first, then the tracepoints: its children are added from then on. */
	e = watch_add(s, req->pid, 0);
	e = e ?: attach_tracepoints();
	if (!e && (req->flags & TNFCTL_WATCH_DL)) {
		watch_attach_libc_of(skel, getpid()); /* what an exec'd image most likely maps */
		watch_attach_libc_of(skel, req->pid);
	}
	err = e ? errno_err(e) : TNFCTL_ERR_NONE;
	/* A command started held has no descendants yet. */
	if (!err && !(req->flags & TNF_WATCH_HELD))
		err = watch_add_descendants(s, req->pid,
					    (req->flags & TNFCTL_WATCH_DL) ? skel : NULL);
	if (err) {
		close(ring_fd);
		slot_close(s);
		srv_reply_err(from, err);
		return;
	}
	dbg("watch: slot %u open on %d\n", s, req->pid);
	memset(&rep, 0, offsetof(struct tnf_rep, path) + 1);
	rep.kind = TNF_REP_WATCH_MAP;
	srv_send_rep_fd(from, &rep, bpf_map__fd(skel->maps.data_wslots));
	rep.kind = TNF_REP_DONE;
	rep.slot = s;
	rep.flags = (legacy_exit ? TNF_REPF_LEGACY_EXIT : 0) | (compat ? TNF_REPF_CLIENT_SEQ : 0);
	rep.pid = req->pid;
	srv_send_rep_fd(from, &rep, ring_fd);
	close(ring_fd); /* `rings` holds the ring, and the client its descriptor */
}

/* A request about a watch: true if it was one. */
bool watch_op(struct tnf_peer from, const struct tnf_req *req)
{
	int s;

	if (req->op == TNF_OP_WATCH_OPEN) {
		op_open(from, req);
		return true;
	}
	s = skel ? slot_of(from) : -1;
	if (s < 0)
		return false;
	if (req->op == TNF_OP_DROP)
		slot_close(s);
	else
		srv_reply_err(from, TNFCTL_ERR_BADARG);
	return true;
}

/* The client has gone: its watches with it. */
void watches_conn_gone(struct tnf_conn *c)
{
	unsigned int s;

	for (s = 0; skel && s < TNF_WATCH_SLOTS; s++)
		if (owners[s].used && owners[s].conn == c)
			slot_close(s);
}

/*
 * The notices wake nobody (one per exec would cost each exec a wake-up of
 * the engine): while a DL watch is open, the loop reads them at least every
 * NOTICE_MS, by then the new image has mapped its libc.
 */
#define NOTICE_MS 20
int watches_timeout(int timeout)
{
	if (!watches_dl_any())
		return timeout;
	return timeout < 0 || timeout > NOTICE_MS ? NOTICE_MS : timeout;
}

void watches_drain_notices(void)
{
	if (watches_dl_any())
		ring_buffer__consume(notices);
}

/* Counters of the engine's watches, for TNF_OP_WATCH_STATS (the tests' view of the maps). */
void watches_stats(struct tnf_rep *rep)
{
	int fd = skel ? bpf_map__fd(skel->maps.tracked) : -1;
	uint32_t key, next;
	bool first = true;
	unsigned int s;

	rep->child_pid = 0;   /* tracked processes */
	rep->exit_status = 0; /* open slots */
	for (s = 0; s < TNF_WATCH_SLOTS; s++)
		rep->exit_status += owners[s].used;
	while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		rep->child_pid++;
	}
	rep->flags = skel && skel->links.on_fork; /* tracepoints attached */
}

/* A DL watch is open: the dlopen/dlclose uprobes are wanted. */
bool watches_dl_any(void)
{
	return skel && skel->bss->dl_mask;
}

void watches_release_uprobes(void)
{
	watch_detach_all(true);
}

void watches_unload(void)
{
	if (skel)
		wrings_stop();
	watch_detach_all(false);
	ring_buffer__free(notices);
	notices = NULL;
	tnfctl_watch_bpf__destroy(skel);
	skel = NULL;
}
