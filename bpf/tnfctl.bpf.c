// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel side of libtnfctl's event capture (DESIGN §2.1).
 *
 * Tracked processes live in the `tracked` map (filled by the tracer helper,
 * and in the kernel for fork children).  Untracked processes cost one map
 * lookup.  Every record that stops a thread is submitted before the stop can
 * be observed (the stop happens on the return to user space), so the helper
 * always finds the record when it sees the SIGSTOP, once it has read every
 * record reserved before (tnf_events_poll_reserved: a record another CPU
 * reserved earlier and has not submitted yet holds back the ones after it).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "tnfctl_events.h"
#include "rtld.bpf.h"

_Static_assert(TNF_RTLD_NS_MAX == TNF_RTLD_MAX_NS, "one namespace bound");

#define SIGSTOP 19

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Set by the helper before load (TNFCTL_STOP_MODE); no longer changes what
 * runs: a followed fork child is auto-attached by ptrace in both modes (so
 * its parent never sees it stopped), and the bpf_send_signal_task kfunc is
 * not referenced: a weak ksym the kernel lacks makes libbpf walk the module
 * BTFs, which needs CAP_SYS_ADMIN.
 */
const volatile bool use_kfunc = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, u32);
	__type(value, struct tnf_tgid_state);
} tracked SEC(".maps");

/* 4 KiB values: allocated per call in flight, not 16384 of them up front. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u32);
	__type(value, struct tnf_dl_arg);
} dl_args SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} lost SEC(".maps");

/* Scratch for building a dl_args value (too big for comfort on the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_dl_arg);
} scratch SEC(".maps");

/*
 * A record is built here and sent with bpf_ringbuf_output up to the end of
 * its path: a reserve's size must be a constant, and 4 KiB per FORK or EXIT
 * would fill the ring 64 times sooner.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_rec);
} rec_buf SEC(".maps");

static void count_lost(void)
{
	u32 zero = 0;
	u64 *n = bpf_map_lookup_elem(&lost, &zero);

	if (n)
		*n += 1;
}

static struct tnf_rec *rec_begin(u32 kind, u32 tgid, u32 tid)
{
	u32 zero = 0;
	struct tnf_rec *r = bpf_map_lookup_elem(&rec_buf, &zero);

	if (!r) {
		count_lost();
		return NULL;
	}
	r->time_ns = bpf_ktime_get_ns();
	r->kind = kind;
	r->flags = 0;
	r->tgid = tgid;
	r->tid = tid;
	r->child = 0;
	r->old_tid = 0;
	r->exit_code = 0;
	r->path_len = 1;
	r->uargv = 0;
	r->path[0] = '\0';
	return r;
}

/* The string at @src (user memory if @user) as @r's path. */
static void rec_path(struct tnf_rec *r, const void *src, bool user)
{
	long n = user ? bpf_probe_read_user_str(r->path, sizeof(r->path), src)
		      : bpf_probe_read_kernel_str(r->path, sizeof(r->path), src);

	if (n <= 0) {
		r->path[0] = '\0';
		n = 1;
	}
	r->path_len = n;
}

static void rec_submit(struct tnf_rec *r)
{
	u32 n = r->path_len;

	if (n > TNF_PATH_MAX)
		n = TNF_PATH_MAX;
	if (bpf_ringbuf_output(&events, r, offsetof(struct tnf_rec, path) + n, 0))
		count_lost();
}

static __always_inline u64 start_ticks(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_boottime) / TNF_NSEC_PER_TICK;
}

/* @t's process's entry; one left by a process whose pid was reused is dropped. */
static struct tnf_tgid_state *tracked_of(struct task_struct *t)
{
	u32 tgid = BPF_CORE_READ(t, tgid);
	struct tnf_tgid_state *st = bpf_map_lookup_elem(&tracked, &tgid);

	if (st && st->start_ticks != start_ticks(t)) {
		bpf_map_delete_elem(&tracked, &tgid);
		return NULL;
	}
	return st;
}

static __always_inline struct tnf_tgid_state *tracked_current(void)
{
	return tracked_of((struct task_struct *)bpf_get_current_task());
}

static bool stop_current(void)
{
	return bpf_send_signal_thread(SIGSTOP) == 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct tnf_tgid_state *st, cst = {};
	struct tnf_rec *r;
	u32 flags;

	if (ptgid == ctgid)
		return 0; /* a new thread, not a fork */
	st = tracked_of(parent);
	if (!st || !(st->flags & TNF_F_ARMED))
		return 0;
	flags = st->flags;
	r = rec_begin(TNF_REC_FORK, ptgid, parent->pid);
	if (!r)
		return 0;
	r->child = ctgid;
	if (child->mm == parent->mm)
		r->flags |= TNF_RF_VFORK;
	if (flags & TNF_F_FOLLOW) {
		cst.r_state_addr = st->r_state_addr;
		cst.lm_tail = st->lm_tail; /* the same image */
		cst.start_ticks = start_ticks(child);
		if (bpf_map_update_elem(&tracked, &ctgid, &cst, BPF_ANY) == 0)
			r->flags |= TNF_RF_CHILD_TRACKED;
	}
	if (!(flags & TNF_F_FOLLOW) || !(flags & TNF_F_PTRACE_FORK)) {
		if (stop_current())
			r->flags |= TNF_RF_STOPPED;
	}
	rec_submit(r);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	u32 tgid = p->tgid;
	struct tnf_tgid_state *st;
	struct tnf_rec *r;

	st = tracked_of(p);
	if (!st || !(st->flags & TNF_F_ARMED))
		return 0;
	st->rtld_pending = 0;
	st->r_state_addr = 0;
	st->lm_tail = 0;
	r = rec_begin(TNF_REC_EXEC, tgid, p->pid);
	if (!r)
		return 0;
	r->old_tid = old_pid;
	rec_path(r, BPF_CORE_READ(bprm, filename), false);
	if (BPF_CORE_READ(bprm, interp) != BPF_CORE_READ(bprm, filename))
		r->flags |= TNF_RF_INTERP;
	if (stop_current())
		r->flags |= TNF_RF_STOPPED;
	rec_submit(r);
	return 0;
}

/*
 * A failed execve of a target that asked for it: stop at the return of the
 * call (the controller reads the argv from the stopped target's memory).
 */
static __always_inline int exec_failed(long ret, const char *file, u64 argv)
{
	u64 id = bpf_get_current_pid_tgid();
	struct tnf_tgid_state *st;
	struct tnf_rec *r;

	if (ret >= 0)
		return 0;
	st = tracked_current();
	if (!st ||
	    (st->flags & (TNF_F_ARMED | TNF_F_EXEC_FAILED)) != (TNF_F_ARMED | TNF_F_EXEC_FAILED))
		return 0;
	r = rec_begin(TNF_REC_EXEC_FAILED, id >> 32, (u32)id);
	if (!r)
		return 0;
	r->exit_code = -ret;
	r->uargv = argv;
	rec_path(r, file, true);
	if (stop_current())
		r->flags |= TNF_RF_STOPPED;
	rec_submit(r);
	return 0;
}

#define NR_execve   59 /* x86_64; the compat entry points are not followed */
#define NR_execveat 322

/* A failed execve (@nr) or execveat: its filename and argv from @regs. */
static __always_inline int failed_exec_of(long nr, const struct pt_regs *regs, long ret)
{
	if (nr == NR_execve)
		return exec_failed(ret, (const char *)BPF_CORE_READ(regs, di),
				   BPF_CORE_READ(regs, si));
	if (nr == NR_execveat)
		return exec_failed(ret, (const char *)BPF_CORE_READ(regs, si),
				   BPF_CORE_READ(regs, dx));
	return 0;
}

/* The raw sys_exit tracepoint, attached once a handle asks for failed execs. */
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

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	u32 tgid = p->tgid, tid = p->pid;
	struct tnf_rec *r;

	if (!tracked_of(p))
		return 0;
	bpf_map_delete_elem(&dl_args, &tid);
	/* One record per process: only the last thread to leave reports. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0) {
		/* A leader leaving early never reports a ptrace-stop again: say so. */
		if (tid == tgid) {
			r = rec_begin(TNF_REC_LEADER_GONE, tgid, tid);
			if (r)
				rec_submit(r);
		}
		return 0;
	}
	/*
	 * The process is gone, and so goes its entry, before its pid can be
	 * reused: a new owner's forks and execs are not the old one's (the
	 * helper keeps a target until its handle is closed).
	 */
	bpf_map_delete_elem(&tracked, &tgid);
	r = rec_begin(TNF_REC_EXIT, tgid, tid);
	if (!r)
		return 0;
	r->exit_code = p->exit_code;
	rec_submit(r);
	return 0;
}

/*
 * @at_rtld: keep the address and read the name at rtld's RT_CONSISTENT: it
 * may lie in a page not faulted in yet, which a uprobe cannot fault in;
 * rtld has read it by then.
 */
static int save_dl_arg(const void *user_str, bool at_rtld)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tid = (u32)id, zero = 0;
	struct tnf_dl_arg *a;

	if (!tracked_current())
		return 0;
	a = bpf_map_lookup_elem(&scratch, &zero);
	if (!a)
		return 0;
	a->path[0] = '\0';
	a->notified = 0;
	a->uptr = at_rtld ? (u64)user_str : 0;
	if (user_str && !at_rtld)
		bpf_probe_read_user_str(a->path, sizeof(a->path), user_str);
	bpf_map_update_elem(&dl_args, &tid, a, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_dlopen, const char *file)
{
	return save_dl_arg(file, true);
}

SEC("uprobe")
int BPF_KPROBE(on_dlmopen, long lmid, const char *file)
{
	return save_dl_arg(file, true);
}

SEC("uprobe")
int BPF_KPROBE(on_dlclose, void *handle)
{
	const char *name = NULL;

	/* struct link_map: l_addr at 0, l_name at 8 (x86_64). */
	if (handle)
		bpf_probe_read_user(&name, sizeof(name), (char *)handle + 8);
	return save_dl_arg(name, false);
}

/*
 * An object libc loaded itself (NSS, iconv): no dlopen name, so the first
 * object added, by its link-map name: the one after the tail of the last
 * consistent map (@tail; struct link_map: l_name at 8, l_next at 24).  Not
 * the tail seen at RT_ADD: glibc 2.35+ links the object before its RT_ADD,
 * older ones after.
 */
static __always_inline void next_name(u64 tail, struct tnf_rec *r)
{
	u64 lm = 0, name = 0;

	if (!tail || bpf_probe_read_user(&lm, sizeof(lm), (void *)(tail + 24)) || !lm ||
	    bpf_probe_read_user(&name, sizeof(name), (void *)(lm + 8)) || !name)
		return;
	rec_path(r, (void *)name, true);
}

SEC("uprobe")
int BPF_KPROBE(on_dl_debug_state)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, tid = (u32)id, kind;
	struct tnf_tgid_state *st;
	struct tnf_dl_arg *a;
	struct tnf_rec *r;
	int state = -1;
	u64 tail;

	st = tracked_current();
	if (!st || !st->r_state_addr)
		return 0;
	state = rtld_state(st->r_state_addr, NULL);
	if (state == 1 || state == 2) { /* RT_ADD, RT_DELETE */
		/* Removed before the map was consistent (a failed dlopen): no change. */
		st->rtld_pending = state == 2 && st->rtld_pending == 1 ? 0 : state;
		return 0;
	}
	if (state != 0)
		return 0;
	tail = st->lm_tail;
	st->lm_tail = lm_tail(st->r_state_addr - 24);
	if (st->flags & TNF_F_STOP_SYNC) {
		kind = TNF_REC_SYNC;
		st->flags &= ~TNF_F_STOP_SYNC;
	} else if (st->rtld_pending && (st->flags & TNF_F_ARMED)) {
		kind = st->rtld_pending == 1 ? TNF_REC_DLOPEN : TNF_REC_DLCLOSE;
	} else {
		st->rtld_pending = 0;
		return 0;
	}
	st->rtld_pending = 0;
	r = rec_begin(kind, tgid, tid);
	if (!r)
		return 0;
	a = bpf_map_lookup_elem(&dl_args, &tid);
	if (a && kind != TNF_REC_SYNC) {
		if (a->uptr) {
			bpf_probe_read_user_str(a->path, sizeof(a->path), (void *)a->uptr);
			a->uptr = 0;
		}
		rec_path(r, a->path, false);
	} else if (kind == TNF_REC_DLOPEN) {
		next_name(tail, r);
	}
	if (stop_current())
		r->flags |= TNF_RF_STOPPED;
	rec_submit(r);
	return 0;
}

/*
 * The call is over.  A dlopen that added nothing (dlopen(NULL), an object
 * already loaded, RTLD_NOLOAD, a failure) and a dlclose that only dropped a
 * reference made rtld report no change: they are no event (DESIGN §3).
 */
static int dl_return(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&dl_args, &tid);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(on_dlopen_ret, void *ret)
{
	return dl_return();
}

SEC("uretprobe")
int BPF_KRETPROBE(on_dlclose_ret, long ret)
{
	return dl_return();
}
