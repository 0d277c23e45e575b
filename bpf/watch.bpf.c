// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel side of passive tree watching (tnfctl_watch_*, src/libtnfctl/watch.c).
 *
 * One object per watch.  The `tracked` map holds the tgids of the tree: the
 * root and its descendants found at open (added by add_proc, which checks
 * parenthood in the kernel), and every fork child of a tracked process,
 * added here before the child can run.  A process leaves the map when its
 * last thread exits.  Nothing is ever stopped.
 *
 * Records are submitted without a wake-up; user space is woken only when
 * the unread part of the ring crosses wake_bytes, or by the first record
 * after a quiet period of delay_ns.  Records written inside that period are
 * picked up by the consumer's own timer at last_wake_ns + delay_ns, so no
 * record waits longer than delay_ns for a waiting consumer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "watch_events.h"

#define ESRCH  3
#define EEXIST 17
#define ENOSPC 28

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by watch.c before load. */
const volatile bool want_dl = false;		   /* report dlopen/dlclose */
const volatile bool untrack_secure = false;	   /* drop a process that execs setuid/setgid */
const volatile __u64 delay_ns = 10000000;	   /* longest a record waits for a wake-up */
const volatile __u64 wake_bytes = 1 << 18;	   /* wake when this much is unread */
const volatile __u32 argv_max = TNF_EXEC_ARGV_MAX; /* argv bytes per record (<= ring / 8) */

__u64 seq;
__u64 last_wake_ns; /* read by the consumer to arm its timer */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, u32);
	__type(value, struct tnf_watch_proc);
} tracked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, struct tnf_watch_dl);
} dl_args SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by watch.c before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TNF_WLOST_NR);
	__type(key, u32);
	__type(value, u64);
} lost SEC(".maps");

/* Scratch for a dl_args value (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_watch_dl);
} scratch SEC(".maps");

/*
 * Scratch for an exec record (variable size, sent with bpf_ringbuf_output):
 * one per CPU (too big for a per-CPU value), max_entries set by watch.c.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_wexec_buf);
} exec_scratch SEC(".maps");

static __always_inline void count_lost(u32 idx)
{
	u64 *n = bpf_map_lookup_elem(&lost, &idx);

	if (n)
		*n += 1;
}

static __always_inline bool is_tracked(u32 tgid)
{
	return bpf_map_lookup_elem(&tracked, &tgid) != NULL;
}

/*
 * Reserve @size bytes (a constant once inlined) and fill the header.  The
 * unread size before the reserve is left in *@before for rec_submit.
 */
static __always_inline struct tnf_wrec *rec_reserve(u64 size, u32 kind, u32 tgid, u32 tid,
						    u32 ptgid, u64 *before)
{
	u64 s = __sync_fetch_and_add(&seq, 1);
	struct tnf_wrec *r;

	*before = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	r = bpf_ringbuf_reserve(&events, size, 0);
	if (!r) {
		count_lost(TNF_WLOST_RECORDS);
		return NULL;
	}
	r->seq = s;
	r->time_ns = bpf_ktime_get_ns();
	r->kind = kind;
	r->tgid = tgid;
	r->tid = tid;
	r->ptgid = ptgid;
	r->child = 0;
	r->exit_code = 0;
	return r;
}

/* Batched wake-ups: see the comment at the top. */
static __always_inline void rec_submit(void *r, u64 size, u64 before, u64 now)
{
	u64 flags = BPF_RB_NO_WAKEUP;

	if ((before < wake_bytes && before + size + 8 >= wake_bytes) ||
	    (before == 0 && now - last_wake_ns >= delay_ns)) {
		last_wake_ns = now;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(r, flags);
}

static __always_inline u32 parent_tgid(struct task_struct *t)
{
	return BPF_CORE_READ(t, real_parent, tgid);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct tnf_watch_proc cst = {};
	struct tnf_wrec *r;
	u64 before;

	if (ptgid == ctgid || !is_tracked(ptgid))
		return 0; /* a new thread, or not ours */
	/* Before the child can run: it cannot do anything unseen. */
	if (bpf_map_update_elem(&tracked, &ctgid, &cst, BPF_ANY))
		count_lost(TNF_WLOST_UNTRACKED);
	r = rec_reserve(sizeof(*r), TNF_WREC_FORK, ptgid, parent->pid, parent_tgid(parent),
			&before);
	if (!r)
		return 0;
	r->child = ctgid;
	rec_submit(r, sizeof(*r), before, r->time_ns);
	return 0;
}

struct cwd_walk {
	struct dentry *d, *root_d;
	struct vfsmount *vm, *root_m;
	struct mount *m;
	u64 mnt_off;
	u32 base; /* where the cwd starts in the scratch's data */
	u32 off;  /* bytes written */
	bool complete;
};

/* One step up from c->d (bpf_loop callback: verified once, whatever the depth). */
static long cwd_step(u64 i, struct cwd_walk *c)
{
	u32 cpu = bpf_get_smp_processor_id(), off = c->off;
	struct dentry *d = c->d, *parent;
	struct vfsmount *vm = c->vm;
	struct mount *m = c->m, *pm;
	struct tnf_wexec_buf *b;
	long n;

	if (d == c->root_d && vm == c->root_m)
		goto done;
	if (d == BPF_CORE_READ(vm, mnt_root)) {
		pm = BPF_CORE_READ(m, mnt_parent);
		if (pm == m)
			goto done; /* the namespace's root */
		c->d = BPF_CORE_READ(m, mnt_mountpoint);
		c->m = pm;
		c->vm = (void *)pm + c->mnt_off;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d)
		goto done;
	b = bpf_map_lookup_elem(&exec_scratch, &cpu);
	if (!b || off > TNF_EXEC_CWD_MAX - TNF_EXEC_NAME_MAX)
		return 1;
	n = bpf_probe_read_kernel_str(b->data + (c->base & 511) + off, TNF_EXEC_NAME_MAX,
				      BPF_CORE_READ(d, d_name.name));
	if (n <= 0)
		return 1;
	c->off = off + n;
	c->d = parent;
	return 0;
done:
	c->complete = true;
	return 1;
}

/*
 * The working directory of @t, its components leaf first, each
 * NUL-terminated, at @base in the scratch's data (TNF_EXEC_CWD_MAX bytes).
 * Walks dentries and mounts as d_path does, without its locks: the cwd of
 * a task in execve does not change under it.
 */
static __always_inline u32 read_cwd(struct task_struct *t, u32 base, u32 *flags)
{
	struct cwd_walk c = {.mnt_off = bpf_core_field_offset(struct mount, mnt), .base = base};

	c.d = BPF_CORE_READ(t, fs, pwd.dentry);
	c.vm = BPF_CORE_READ(t, fs, pwd.mnt);
	c.root_d = BPF_CORE_READ(t, fs, root.dentry);
	c.root_m = BPF_CORE_READ(t, fs, root.mnt);
	c.m = (void *)c.vm - c.mnt_off;
	bpf_loop(64, cwd_step, &c, 0);
	if (!c.complete)
		*flags |= TNF_WX_CWD_TRUNC;
	return c.off;
}

/* Send @b (header filled but seq, time and wake-up) of @size bytes. */
static __always_inline void exec_output(struct tnf_wexec_buf *b, u64 size)
{
	u64 before, flags = BPF_RB_NO_WAKEUP, now;

	b->r.h.seq = __sync_fetch_and_add(&seq, 1);
	now = b->r.h.time_ns = bpf_ktime_get_ns();
	before = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	if ((before < wake_bytes && before + size + 8 >= wake_bytes) ||
	    (before == 0 && now - last_wake_ns >= delay_ns)) {
		last_wake_ns = now;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (size > sizeof(*b))
		size = sizeof(*b);
	if (bpf_ringbuf_output(&events, b, size, flags))
		count_lost(TNF_WLOST_RECORDS);
}

/* The scratch record with its header, path and cwd filled; *@off: where argv goes. */
static __always_inline struct tnf_wexec_buf *exec_begin(u32 kind, struct task_struct *p, u32 tid,
							const char *path, bool user_path, u32 *off)
{
	u32 cpu = bpf_get_smp_processor_id(), n;
	struct tnf_wexec_buf *b;
	long len;

	b = bpf_map_lookup_elem(&exec_scratch, &cpu);
	if (!b)
		return NULL;
	b->r.h.kind = kind;
	b->r.h.tgid = p->tgid;
	b->r.h.tid = tid;
	b->r.h.ptgid = parent_tgid(p);
	b->r.h.child = 0;
	b->r.h.exit_code = 0;
	b->r.flags = 0;
	b->r.argv_bytes = b->r.argv_len = 0;
	if (user_path)
		len = bpf_probe_read_user_str(b->data, TNF_WATCH_PATH_MAX, path);
	else
		len = bpf_probe_read_kernel_str(b->data, TNF_WATCH_PATH_MAX, path);
	if (len <= 0) {
		b->data[0] = '\0';
		len = 1;
	}
	n = len;
	if (n > TNF_WATCH_PATH_MAX)
		n = TNF_WATCH_PATH_MAX;
	b->r.path_len = n;
	len = read_cwd(p, n, &b->r.flags);
	b->r.cwd_len = len;
	*off = n + (u32)len;
	return b;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	u32 tgid = p->tgid, off, cap;
	struct tnf_wexec_buf *b;
	unsigned long start, end;

	if (!is_tracked(tgid))
		return 0;
	/* A caller without CAP_SYS_PTRACE could not trace a setuid image. */
	if (untrack_secure && BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec)) {
		bpf_map_delete_elem(&tracked, &tgid);
		return 0;
	}
	b = exec_begin(TNF_WREC_EXEC, p, old_pid, BPF_CORE_READ(bprm, filename), false, &off);
	if (!b) {
		count_lost(TNF_WLOST_RECORDS);
		return 0;
	}
	/*
	 * The new stack holds the arguments, just written by the kernel (so
	 * present): p is current, its mm is the new one.
	 */
	start = BPF_CORE_READ(p, mm, arg_start);
	end = BPF_CORE_READ(p, mm, arg_end);
	if (end > start) {
		b->r.argv_bytes = end - start;
		cap = end - start < argv_max ? end - start : argv_max;
		if (cap < end - start)
			b->r.flags |= TNF_WX_ARGV_TRUNC;
		/* Masks: identities here (off <= 4352, cap <= 65536), bounds for the verifier. */
		off &= TNF_EXEC_ARGV_OFF_MASK;
		cap &= 2 * TNF_EXEC_ARGV_MAX - 1;
		if (bpf_probe_read_user(b->data + off, cap, (void *)start) == 0)
			b->r.argv_len = cap;
		else
			b->r.flags |= TNF_WX_ARGV_TRUNC;
	}
	exec_output(b, sizeof(b->r) + off + b->r.argv_len);
	return 0;
}

struct argv_walk {
	const char *const *argv;
	u32 off; /* where argv starts in the scratch's data */
	u32 a;	 /* bytes read */
	bool trunc, complete;
};

/* Argument @i (bpf_loop callback). */
static long argv_step(u64 i, struct argv_walk *w)
{
	u32 cpu = bpf_get_smp_processor_id(), a = w->a;
	struct tnf_wexec_buf *b;
	const char *const *argv = w->argv;
	const char *arg;
	long n, size;
	char c;

	if (bpf_probe_read_user(&arg, sizeof(arg), &argv[i])) {
		w->trunc = true;
		return 1;
	}
	if (!arg) {
		w->complete = true;
		return 1;
	}
	b = bpf_map_lookup_elem(&exec_scratch, &cpu);
	if (!b || a >= argv_max) {
		w->trunc = true;
		return 1;
	}
	size = ((argv_max - a - 1) & (TNF_EXEC_ARGV_MAX - 1)) + 1;
	n = bpf_probe_read_user_str(b->data + (w->off & TNF_EXEC_ARGV_OFF_MASK) +
					    (a & (TNF_EXEC_ARGV_MAX - 1)),
				    size, arg);
	if (n <= 0) {
		w->trunc = true;
		return 1;
	}
	/* Filled to the bound: cut unless the string really ends there. */
	if (n == size && (bpf_probe_read_user(&c, 1, arg + n - 1) || c != '\0')) {
		w->a = a + n;
		w->trunc = true;
		return 1;
	}
	w->a = a + n;
	return 0;
}

/*
 * A failed execve or execveat of a tracked process: its path and argv are
 * still in the caller's memory, which the kernel has just read (the argv
 * strings too, unless it failed before copying them: ENOENT, EACCES).
 */
static __always_inline int exec_failed(long ret, const char *file, const char *const *argv)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task_btf();
	struct argv_walk w = {.argv = argv};
	u32 tgid = cur->tgid, off;
	struct tnf_wexec_buf *b;

	if (ret >= 0 || !is_tracked(tgid))
		return 0;
	b = exec_begin(TNF_WREC_EXEC_FAILED, cur, cur->pid, file, true, &off);
	if (!b) {
		count_lost(TNF_WLOST_RECORDS);
		return 0;
	}
	b->r.h.exit_code = -ret;
	w.off = off;
	if (argv)
		bpf_loop(TNF_EXEC_ARGC_MAX, argv_step, &w, 0);
	if (argv && (!w.complete || w.trunc))
		b->r.flags |= TNF_WX_ARGV_TRUNC;
	b->r.argv_len = b->r.argv_bytes = w.a;
	exec_output(b, sizeof(b->r) + (off & TNF_EXEC_ARGV_OFF_MASK) +
			       (w.a & (2 * TNF_EXEC_ARGV_MAX - 1)));
	return 0;
}

/* x86_64 syscall numbers (the compat entry points are not watched). */
#define NR_execve   59
#define NR_execveat 322

/* A failed execve (@nr) or execveat: its filename and argv from @regs. */
static __always_inline int failed_exec_of(long nr, const struct pt_regs *regs, long ret)
{
	const char *const *argv;
	const char *file;

	/* One exec_failed call site: inlined twice, it was verified twice (10 800 insns, 18 ms). */
	if (nr == NR_execve) {
		file = (const char *)BPF_CORE_READ(regs, di);
		argv = (const char *const *)BPF_CORE_READ(regs, si);
	} else if (nr == NR_execveat) {
		file = (const char *)BPF_CORE_READ(regs, si);
		argv = (const char *const *)BPF_CORE_READ(regs, dx);
	} else {
		return 0;
	}
	return exec_failed(ret, file, argv);
}

/*
 * The raw sys_exit tracepoint (no tracefs needed; fexit is not allowed
 * everywhere): every syscall's return while a watch is open, one compare
 * for all but a failed execve.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	return ret < 0 ? failed_exec_of(BPF_CORE_READ(regs, orig_ax), regs, ret) : 0;
}

/* The same where trampolines are allowed: only execve's own returns pay. */
SEC("fexit/__x64_sys_execve")
int BPF_PROG(on_execve_ret, const struct pt_regs *regs, long ret)
{
	return ret < 0 ? failed_exec_of(NR_execve, regs, ret) : 0;
}

SEC("fexit/__x64_sys_execveat")
int BPF_PROG(on_execveat_ret, const struct pt_regs *regs, long ret)
{
	return ret < 0 ? failed_exec_of(NR_execveat, regs, ret) : 0;
}

static __always_inline void exit_common(struct task_struct *p, bool group_dead)
{
	u32 tgid = p->tgid, tid = p->pid, ptgid;
	struct tnf_wrec *r, wake = {.kind = TNF_WREC_WAKE};
	u64 before;

	if (!is_tracked(tgid))
		return;
	bpf_map_delete_elem(&dl_args, &tid);
	if (!group_dead)
		return; /* one record per process: its last thread reports */
	ptgid = parent_tgid(p);
	r = rec_reserve(sizeof(*r), TNF_WREC_EXIT, tgid, tid, ptgid, &before);
	if (r) {
		r->exit_code = p->exit_code;
		rec_submit(r, sizeof(*r), before, r->time_ns);
	}
	/* After the submit: an empty map means every record is in the ring. */
	bpf_map_delete_elem(&tracked, &tgid);
	/* Likely the tree's last: wake the consumer now that the map says so. */
	if (!is_tracked(ptgid)) {
		wake.tgid = tgid;
		wake.time_ns = last_wake_ns = bpf_ktime_get_ns();
		bpf_ringbuf_output(&events, &wake, sizeof(wake), BPF_RB_FORCE_WAKEUP);
	}
}

/* Kernels with group_dead in the tracepoint (6.16 and later). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p, bool group_dead)
{
	exit_common(p, group_dead);
	return 0;
}

/*
 * Older kernels: signal->live is already decremented here, but two threads
 * leaving at once may both read 0; the consumer drops a second EXIT.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit_live, struct task_struct *p)
{
	exit_common(p, BPF_CORE_READ(p, signal, live.counter) == 0);
	return 0;
}

static __always_inline int save_dl_arg(const void *user_str, bool at_return)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, tid = (u32)id, zero = 0;
	struct tnf_watch_dl *a;

	if (!want_dl || !is_tracked(tgid))
		return 0;
	a = bpf_map_lookup_elem(&scratch, &zero);
	if (!a)
		return 0;
	a->path[0] = '\0';
	a->uptr = at_return ? (u64)user_str : 0;
	if (user_str && !at_return)
		bpf_probe_read_user_str(a->path, sizeof(a->path), user_str);
	bpf_map_update_elem(&dl_args, &tid, a, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_dlopen, const char *file)
{
	/*
	 * Read at the return: the name may lie in a page not faulted in yet,
	 * which a uprobe cannot fault in; dlopen has read it by then.
	 */
	return save_dl_arg(file, true);
}

/* dlmopen(lmid, file, mode): an object in any link-map namespace, as dlopen. */
SEC("uprobe")
int BPF_KPROBE(on_dlmopen, long lmid, const char *file)
{
	return save_dl_arg(file, true);
}

SEC("uprobe")
int BPF_KPROBE(on_dlclose, void *handle)
{
	const char *name = NULL;

	/* struct link_map: l_addr at 0, l_name at 8 (x86_64); freed by the call. */
	if (handle)
		bpf_probe_read_user(&name, sizeof(name), (char *)handle + 8);
	return save_dl_arg(name, false);
}

/* One record per successful call, at its return. */
static __always_inline int dl_return(u32 kind, bool ok)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, tid = (u32)id;
	struct task_struct *cur;
	struct tnf_watch_dl *a;
	struct tnf_wrec_str *r;
	u64 before;

	a = bpf_map_lookup_elem(&dl_args, &tid);
	if (!a)
		return 0;
	if (ok && is_tracked(tgid)) {
		cur = (struct task_struct *)bpf_get_current_task();
		r = (void *)rec_reserve(sizeof(*r), kind, tgid, tid, parent_tgid(cur), &before);
		if (r) {
			if (a->uptr)
				bpf_probe_read_user_str(r->path, sizeof(r->path), (void *)a->uptr);
			else
				bpf_probe_read_kernel_str(r->path, sizeof(r->path), a->path);
			r->arg0[0] = '\0';
			rec_submit(r, sizeof(*r), before, r->h.time_ns);
		}
	}
	bpf_map_delete_elem(&dl_args, &tid);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(on_dlopen_ret, void *ret)
{
	return dl_return(TNF_WREC_DLOPEN, ret != NULL);
}

SEC("uretprobe")
int BPF_KRETPROBE(on_dlclose_ret, long ret)
{
	return dl_return(TNF_WREC_DLCLOSE, ret == 0);
}

/*
 * Adds an existing process: the root, or a descendant watch_tree.c found in
 * /proc.  watch.c sets add_req and runs this task iterator (iter/task, 5.8),
 * narrowed to that one task where the kernel can (6.1), else over every task;
 * the program picks the task either way.  The check and the insert happen
 * here, on the task that owns the pid now: a pid that was freed and reused
 * by a process outside the tree (whose parent is not tracked) is refused, so
 * a watch never sees it.  (A task iterator rather than a syscall program
 * with the bpf_task_from_pid kfunc, which is 6.2: Debian 12 runs 6.1.)
 */
struct tnf_watch_add add_req;
__u64 add_barrier;

SEC("iter/task")
int add_proc(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct tnf_watch_proc st = {};
	u32 pid = add_req.pid, ppid = add_req.ppid;
	int ret = 0;

	if (!t || t->pid != pid || t->tgid != pid)
		return 0;
	if (ppid && (parent_tgid(t) != ppid || !is_tracked(ppid))) {
		ret = -ESRCH;
	} else if (bpf_map_update_elem(&tracked, &pid, &st, BPF_NOEXIST)) {
		ret = is_tracked(pid) ? -EEXIST : -ENOSPC;
	} else {
		/*
		 * A full barrier (lock xadd) between the insert and the read of
		 * live: the exit path decrements live (a full barrier too), then
		 * looks the tgid up, so one of the two sees the other.
		 */
		__sync_fetch_and_add(&add_barrier, 1);
		if (BPF_CORE_READ(t, signal, live.counter) == 0) {
			/* Already past its exit's check of the map: it will not remove itself. */
			bpf_map_delete_elem(&tracked, &pid);
			ret = -ESRCH;
		}
	}
	add_req.ret = ret;
	return 0;
}
