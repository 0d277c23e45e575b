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
#define ENOSYS 38

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by watch.c before load. */
const volatile bool want_dl = false;	    /* report dlopen/dlclose */
const volatile bool untrack_secure = false; /* drop a process that execs setuid/setgid */
const volatile __u64 delay_ns = 10000000;   /* longest a record waits for a wake-up */
const volatile __u64 wake_bytes = 1 << 18;  /* wake when this much is unread */

__u64 seq;
__u64 last_wake_ns; /* read by the consumer to arm its timer */

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

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

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	u32 tgid = p->tgid;
	struct tnf_wrec_str *r;
	unsigned long arg;
	u64 before;

	if (!is_tracked(tgid))
		return 0;
	/* A caller without CAP_SYS_PTRACE could not trace a setuid image. */
	if (untrack_secure && BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec)) {
		bpf_map_delete_elem(&tracked, &tgid);
		return 0;
	}
	r = (void *)rec_reserve(sizeof(*r), TNF_WREC_EXEC, tgid, old_pid, parent_tgid(p), &before);
	if (!r)
		return 0;
	bpf_probe_read_kernel_str(r->path, sizeof(r->path), BPF_CORE_READ(bprm, filename));
	/* The new stack holds the arguments: p is current, its mm is the new one. */
	arg = BPF_CORE_READ(p, mm, arg_start);
	r->arg0[0] = '\0';
	if (arg)
		bpf_probe_read_user_str(r->arg0, sizeof(r->arg0), (void *)arg);
	rec_submit(r, sizeof(*r), before, r->h.time_ns);
	return 0;
}

static __always_inline void exit_common(struct task_struct *p, bool group_dead)
{
	u32 tgid = p->tgid, tid = p->pid;
	struct tnf_wrec *r;
	u64 before;

	if (!is_tracked(tgid))
		return;
	bpf_map_delete_elem(&dl_args, &tid);
	if (!group_dead)
		return; /* one record per process: its last thread reports */
	r = rec_reserve(sizeof(*r), TNF_WREC_EXIT, tgid, tid, parent_tgid(p), &before);
	if (r) {
		r->exit_code = p->exit_code;
		rec_submit(r, sizeof(*r), before, r->time_ns);
	}
	/* After the submit: an empty map means every record is in the ring. */
	bpf_map_delete_elem(&tracked, &tgid);
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

static __always_inline int save_dl_arg(const void *user_str)
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
	if (user_str)
		bpf_probe_read_user_str(a->path, sizeof(a->path), user_str);
	bpf_map_update_elem(&dl_args, &tid, a, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_dlopen, const char *file)
{
	return save_dl_arg(file);
}

SEC("uprobe")
int BPF_KPROBE(on_dlclose, void *handle)
{
	const char *name = NULL;

	/* struct link_map: l_addr at 0, l_name at 8 (x86_64); freed by the call. */
	if (handle)
		bpf_probe_read_user(&name, sizeof(name), (char *)handle + 8);
	return save_dl_arg(name);
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
 * Run by watch.c (BPF_PROG_RUN) for the root and each descendant it finds in
 * /proc.  The check and the insert happen here, on the task that owns the
 * pid now: a pid that was freed and reused by a process outside the tree
 * (whose parent is not tracked) is refused, so a watch never sees it.
 */
SEC("syscall")
int add_proc(struct tnf_watch_add *a)
{
	struct tnf_watch_proc st = {};
	struct task_struct *t;
	u32 pid = a->pid, ppid = a->ppid;
	int ret = 0;

	if (!bpf_task_from_pid || !bpf_task_release) {
		a->ret = -ENOSYS;
		return 0;
	}
	t = bpf_task_from_pid(pid);
	if (!t) {
		a->ret = -ESRCH;
		return 0;
	}
	if (BPF_CORE_READ(t, tgid) != pid ||
	    (ppid && (parent_tgid(t) != ppid || !is_tracked(ppid)))) {
		ret = -ESRCH;
	} else if (bpf_map_update_elem(&tracked, &pid, &st, BPF_NOEXIST)) {
		ret = is_tracked(pid) ? -EEXIST : -ENOSPC;
	} else if (BPF_CORE_READ(t, signal, live.counter) == 0) {
		/* Already past its exit's check of the map: it will not remove itself. */
		bpf_map_delete_elem(&tracked, &pid);
		ret = -ESRCH;
	}
	bpf_task_release(t);
	a->ret = ret;
	return 0;
}
