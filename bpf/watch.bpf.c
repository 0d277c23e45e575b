// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel side of passive tree watching (tnfctl_watch_*): one object per
 * engine (src/engine/watches.c), shared by every watch it serves.
 *
 * A watch is a slot (0..TNF_WATCH_SLOTS-1).  The `tracked` map holds, per
 * tgid, the mask of the slots whose tree holds the process: the roots and
 * the descendants found at open (added by add_proc, which checks parenthood
 * in the kernel), and every fork child of a tracked process, which inherits
 * its parent's mask here, before it can run.  A process in nested or
 * overlapping trees is in each of them, and each of their watches gets its
 * records.  A process leaves a slot when its last thread exits (or, for a
 * caller without CAP_SYS_PTRACE, when it execs a setuid image); an untracked
 * process costs one lookup, however many watches are open.
 *
 * Each slot's records go to its own ring buffer, the inner map at that
 * index of `rings`, whose descriptor its client holds: no watch reads
 * another's records.  They are submitted without a wake-up; user space is
 * woken only when the unread part of the ring crosses the slot's
 * wake_bytes, or by the first record after a quiet period of delay_ns.
 * Records written inside that period are picked up by the consumer's own
 * timer at last_wake_ns + delay_ns.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "watch_events.h"
#include "rtld.bpf.h"

#define ESRCH  3
#define EEXIST 17
#define ENOSPC 28

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Built twice (Makefile): as is, and with -DTNF_WATCH_COMPAT for kernels
 * from 5.10 (BTF, tp_btf, ring buffers, iter/task, bounded loops, XADD)
 * that lack what the first uses: bpf_loop (5.17), atomic fetch and OR
 * (5.12), bpf_get_current_task_btf (5.11), uprobe attach cookies (5.15).
 * The engine picks one at load from what the kernel has (watches.c); the
 * differences are the few macros and functions below, the logic is one.
 */
#ifdef TNF_WATCH_COMPAT
/*
 * No bpf_loop: a bounded loop (5.3) over a global function (5.6) that runs
 * the callback, so that the verifier checks the callback's body once, not
 * at each step (a cwd walk whose steps fork the state ran past 1M
 * instructions).  5.10's global functions take scalars only: the loop's
 * context goes through the per-CPU loop_ctx (no program here interrupts
 * another on its CPU, as for the other scratch maps), copied with
 * bpf_probe_read_kernel, which does not ask for the struct's padding to
 * have been written.
 */
struct tnf_loop_buf {
	u64 b[12];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_loop_buf);
} loop_ctx SEC(".maps");

#define TNF_LOOP_CB(cb, type)                                                                      \
	_Static_assert(sizeof(type) <= sizeof(struct tnf_loop_buf), #cb "'s context");             \
	__noinline long cb##_g(u64 i)                                                              \
	{                                                                                          \
		u32 zero = 0;                                                                      \
		type *c = bpf_map_lookup_elem(&loop_ctx, &zero);                                   \
                                                                                                   \
		/* used, so that a call passes it (the verifier wants a scalar there) */           \
		asm volatile("" ::"r"(i));                                                         \
		return c ? cb(i, c) : 1;                                                           \
	}
#define tnf_loop(n, cb, ctx)                                                                       \
	do {                                                                                       \
		u32 __z = 0, __i;                                                                  \
		void *__b = bpf_map_lookup_elem(&loop_ctx, &__z);                                  \
                                                                                                   \
		if (!__b)                                                                          \
			break;                                                                     \
		bpf_probe_read_kernel(__b, sizeof(*(ctx)), ctx);                                   \
		for (__i = 0; __i < (n); __i++)                                                    \
			if (cb##_g(__i))                                                           \
				break;                                                             \
		bpf_probe_read_kernel(ctx, sizeof(*(ctx)), __b);                                   \
	} while (0)
#define current_task() ((struct task_struct *)bpf_get_current_task())
#else
#define TNF_LOOP_CB(cb, type)
#define tnf_loop(n, cb, ctx) bpf_loop(n, cb, ctx, 0)
#define current_task()	     bpf_get_current_task_btf()
#endif

/* Written by the engine (watches.c). */
__u64 active;  /* slots open */
__u64 dl_mask; /* slots that report dlopen/dlclose */
/*
 * The compat object's stand-in for the attach cookie: each ld.so probed,
 * its &_r_debug.r_state - &_dl_debug_state, 0 after the last (watch_tree.c).
 * In both objects, so that they have the same globals (one skeleton).
 */
__u64 rtld_delta[TNF_RTLD_PROBED_MAX];
__u32 rtld_overflow; /* an ld.so probed whose delta is not in rtld_delta */
struct tnf_wslot_cfg wcfg[TNF_WATCH_SLOTS];

/* Read by each slot's client (mapped read-only). */
struct tnf_wslot wslots[TNF_WATCH_SLOTS] SEC(".data.wslots");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, u32);
	__type(value, struct tnf_watch_proc);
} tracked SEC(".maps");

/* 4 KiB values: allocated per call in flight, not 4096 of them up front. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u32);
	__type(value, struct tnf_watch_dl);
} dl_args SEC(".maps");

/* One ring buffer per slot, created by the engine at the watch's open. */
struct ring_tmpl {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, TNF_WATCH_SLOTS);
	__type(key, u32);
	__array(values, struct ring_tmpl);
} rings SEC(".maps");

/*
 * The engine's: processes of DL watches that exec'd a file not seen before
 * (a libc to probe).  Read on the engine's timer, not woken per record.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} notices SEC(".maps");

/* The files exec'd by DL watches' processes that the engine has looked at (or will). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct tnf_exe_key);
	__type(value, u32);
} exe_seen SEC(".maps");

/* Scratch for a dl_args value (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_watch_dl);
} scratch SEC(".maps");

/* Scratch for a DLOPEN/DLCLOSE record, sent to each slot. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_wrec_str);
} str_scratch SEC(".maps");

/*
 * Scratch for an exec record (variable size, sent with bpf_ringbuf_output):
 * one per CPU (too big for a per-CPU value), max_entries set by the engine.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tnf_wexec_buf);
} exec_scratch SEC(".maps");

/* The slots @tgid is in (0: none). */
static __always_inline u64 slots_of(u32 tgid)
{
	struct tnf_watch_proc *p = bpf_map_lookup_elem(&tracked, &tgid);

	return p ? p->mask & active : 0;
}

static __always_inline bool in_slot(u32 tgid, u32 s)
{
	return (slots_of(tgid) >> (s & (TNF_WATCH_SLOTS - 1))) & 1;
}

/* Whether a record of @size bytes into @ring should wake the slot's consumer. */
static __always_inline u64 wake_flag(u32 s, void *ring, u64 size, u64 now)
{
	u64 before = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	struct tnf_wslot_cfg *c = &wcfg[s & (TNF_WATCH_SLOTS - 1)];
	struct tnf_wslot *w = &wslots[s & (TNF_WATCH_SLOTS - 1)];

	if ((before < c->wake_bytes && before + size + 8 >= c->wake_bytes) ||
	    (before == 0 && now - w->last_wake_ns >= c->delay_ns)) {
		w->last_wake_ns = now;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/*
 * The per-slot loops are bpf_loop callbacks (5.17): verified once, where an
 * unrolled loop over every slot made the verifier walk each one.
 */
enum emit_src {
	SRC_CTX,  /* the record in the context (FORK, EXIT) */
	SRC_STR,  /* str_scratch (DLOPEN, DLCLOSE) */
	SRC_EXEC, /* exec_scratch (EXEC, EXEC_FAILED) */
};

struct emit_ctx {
	u64 mask;
	u32 src;  /* enum emit_src */
	u32 off;  /* SRC_EXEC: where argv starts in data[] */
	u32 alen; /* SRC_EXEC: argv bytes captured */
	u32 flags;
	struct tnf_wrec r; /* SRC_CTX */
};

#ifdef TNF_WATCH_COMPAT
/*
 * No fetch-and-add: the consumer numbers the records in the order it reads
 * them, a hole where it counts lost ones (src/libtnfctl/watch.c).
 */
#define slot_seq(s) 0
#else
#define slot_seq(s) __sync_fetch_and_add(&wslots[s].seq, 1)
#endif

/* The record to slot @s, with that slot's sequence number, if @s is in the mask. */
static long emit_one(u64 i, struct emit_ctx *c)
{
	u32 s = i & (TNF_WATCH_SLOTS - 1), key = s, zero = 0, cpu, n;
	struct tnf_wexec_buf *b;
	struct tnf_wrec_str *str;
	void *ring;
	u64 size, seq;

	if (!((c->mask >> s) & 1))
		return 0;
	/* The key apart from s: s stays in a register, with its bound. */
	ring = bpf_map_lookup_elem(&rings, &key);
	if (!ring)
		return 0;
	seq = slot_seq(s);
	if (c->src == SRC_CTX) {
		c->r.seq = seq;
		if (bpf_ringbuf_output(ring, &c->r, sizeof(c->r),
				       wake_flag(s, ring, sizeof(c->r), c->r.time_ns)))
			__sync_fetch_and_add(&wslots[s].lost[TNF_WLOST_RECORDS], 1);
		return 0;
	}
	if (c->src == SRC_STR) {
		str = bpf_map_lookup_elem(&str_scratch, &zero);
		if (!str)
			return 1;
		str->h.seq = seq;
		n = str->path_len;
		if (n > TNF_WATCH_PATH_MAX)
			n = TNF_WATCH_PATH_MAX;
		size = offsetof(struct tnf_wrec_str, path) + n;
		if (bpf_ringbuf_output(ring, str, size, wake_flag(s, ring, size, str->h.time_ns)))
			__sync_fetch_and_add(&wslots[s].lost[TNF_WLOST_RECORDS], 1);
		return 0;
	}
	cpu = bpf_get_smp_processor_id();
	b = bpf_map_lookup_elem(&exec_scratch, &cpu);
	if (!b)
		return 1;
	/* Each slot's argv bound (its ring's eighth). */
	n = c->alen;
	b->r.flags = c->flags;
	if (n > wcfg[s].argv_max) {
		n = wcfg[s].argv_max;
		b->r.flags |= TNF_WX_ARGV_TRUNC;
	}
	b->r.argv_len = n;
	b->r.h.seq = seq;
	size = sizeof(b->r) + (c->off & TNF_EXEC_ARGV_OFF_MASK) + (n & (2 * TNF_EXEC_ARGV_MAX - 1));
	if (size > sizeof(*b))
		size = sizeof(*b);
	if (bpf_ringbuf_output(ring, b, size, wake_flag(s, ring, size, b->r.h.time_ns)))
		__sync_fetch_and_add(&wslots[s].lost[TNF_WLOST_RECORDS], 1);
	return 0;
}
TNF_LOOP_CB(emit_one, struct emit_ctx)

static __always_inline void emit(struct emit_ctx *c)
{
	tnf_loop(TNF_WATCH_SLOTS, emit_one, c);
}

struct slots_ctx {
	u64 mask;
	u32 tgid;
	u32 what; /* enum slots_op */
};

enum slots_op {
	OP_JOIN,	   /* a process joins: nlive + 1 */
	OP_LEAVE,	   /* a process leaves: nlive - 1, the last wakes the consumer */
	OP_LOST,	   /* a record could not be written */
	OP_LOST_UNTRACKED, /* a fork child could not be tracked */
};

/* Slot @s loses a process: true if it was the last. */
static __always_inline bool nlive_drop(u32 s)
{
#ifdef TNF_WATCH_COMPAT
	/*
	 * XADD, then a plain read.  The last decrement's read sees 0 unless a
	 * process joined in between (a fork, add_proc: then one is left, whose
	 * own leave reads 0 later); two leaving at once may both see 0 and both
	 * send a WAKE, which the consumer ignores but for the wake-up.
	 */
	__sync_fetch_and_add(&wslots[s].nlive, -1);
	return *(volatile long long *)&wslots[s].nlive == 0;
#else
	return __sync_sub_and_fetch(&wslots[s].nlive, 1) == 0;
#endif
}

/*
 * Clears the bits of @mask in @p's mask; what is left.  Only two change a
 * tracked process's mask in place: add_proc (the engine's, one run at a
 * time) setting a bit it found clear, and leave(), run by the process's own
 * exec (one at a time) or by add_proc (a process whose threads have all
 * exited: no exec).  The fork that creates the entry and the exit that
 * deletes it do not modify it.
 */
static __always_inline u64 mask_clear(struct tnf_watch_proc *p, u64 mask)
{
#ifdef TNF_WATCH_COMPAT
	/*
	 * No atomic AND before 5.12: subtracting bits that are set clears just
	 * them, and nobody clears them meanwhile (above); an add of a clear bit
	 * by add_proc commutes with it (no carry, no borrow).
	 */
	__sync_fetch_and_add(&p->mask, -(p->mask & mask));
	return *(volatile u64 *)&p->mask;
#else
	return __sync_and_and_fetch(&p->mask, ~mask);
#endif
}

/* Sets @bit, clear until now, in @p's mask (add_proc only; see mask_clear). */
static __always_inline void mask_set_clear_bit(struct tnf_watch_proc *p, u64 bit)
{
#ifdef TNF_WATCH_COMPAT
	__sync_fetch_and_add(&p->mask, bit); /* the OR of a clear bit (no OR before 5.12) */
#else
	__sync_fetch_and_or(&p->mask, bit);
#endif
}

static long slot_op(u64 i, struct slots_ctx *c)
{
	u32 s = i & (TNF_WATCH_SLOTS - 1), key = s;
	struct tnf_wrec wake = {};
	void *ring;

	if (!((c->mask >> s) & 1))
		return 0;
	switch (c->what) {
	case OP_JOIN:
		__sync_fetch_and_add(&wslots[s].nlive, 1);
		return 0;
	case OP_LOST:
		__sync_fetch_and_add(&wslots[s].lost[TNF_WLOST_RECORDS], 1);
		return 0;
	case OP_LOST_UNTRACKED:
		__sync_fetch_and_add(&wslots[s].lost[TNF_WLOST_UNTRACKED], 1);
		return 0;
	}
	if (!nlive_drop(s))
		return 0;
	/* The tree's last process: its consumer sees the end at once. */
	ring = bpf_map_lookup_elem(&rings, &key);
	if (!ring)
		return 0;
	wake.kind = TNF_WREC_WAKE;
	wake.tgid = c->tgid;
	wake.time_ns = wslots[s].last_wake_ns = bpf_ktime_get_ns();
	bpf_ringbuf_output(ring, &wake, sizeof(wake), BPF_RB_FORCE_WAKEUP);
	return 0;
}
TNF_LOOP_CB(slot_op, struct slots_ctx)

static __always_inline void for_slots(u64 mask, u32 tgid, u32 what)
{
	struct slots_ctx c = {.mask = mask, .tgid = tgid, .what = what};

	tnf_loop(TNF_WATCH_SLOTS, slot_op, &c);
}

/*
 * @tgid leaves the slots in @mask (@gone: it has exited, and leaves the map
 * whatever slots it was in); out of the map once it is in no open slot.
 */
static __always_inline void leave(u32 tgid, u64 mask, bool gone)
{
	struct tnf_watch_proc *p = bpf_map_lookup_elem(&tracked, &tgid);

	if (!p)
		return;
	if (gone || !(mask_clear(p, mask) & active))
		bpf_map_delete_elem(&tracked, &tgid);
	for_slots(mask, tgid, OP_LEAVE);
}

static __always_inline u32 parent_tgid(struct task_struct *t)
{
	return BPF_CORE_READ(t, real_parent, tgid);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct emit_ctx c = {.src = SRC_CTX};
	struct tnf_watch_proc cst, *pp;
	u64 mask;

	if (ptgid == ctgid || !(mask = slots_of(ptgid)))
		return 0; /* a new thread, or not ours */
	/* Before the child can run: it cannot do anything unseen. */
	cst.mask = mask;
	pp = bpf_map_lookup_elem(&tracked, &ptgid);
	cst.lm_tail = pp ? pp->lm_tail : 0; /* the same image */
	if (bpf_map_update_elem(&tracked, &ctgid, &cst, BPF_ANY))
		for_slots(mask, ctgid, OP_LOST_UNTRACKED);
	else
		for_slots(mask, ctgid, OP_JOIN);
	c.mask = mask;
	c.r.time_ns = bpf_ktime_get_ns();
	c.r.kind = TNF_WREC_FORK;
	c.r.tgid = ptgid;
	c.r.tid = parent->pid;
	c.r.ptgid = parent_tgid(parent);
	c.r.child = ctgid;
	emit(&c);
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
	n = bpf_probe_read_kernel_str(b->data + (c->base & 8191) + off, TNF_EXEC_NAME_MAX,
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
TNF_LOOP_CB(cwd_step, struct cwd_walk)

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
	tnf_loop(64, cwd_step, &c);
	if (!c.complete)
		*flags |= TNF_WX_CWD_TRUNC;
	return c.off;
}

/*
 * Send @b (header filled but seq and time; @off: where its argv starts) to
 * every slot in @mask, its argv cut to each slot's argv_max.
 */
static __always_inline void exec_output(struct tnf_wexec_buf *b, u32 off, u64 mask)
{
	struct emit_ctx c = {.mask = mask, .src = SRC_EXEC, .off = off};

	c.alen = b->r.argv_len;
	c.flags = b->r.flags;
	b->r.h.time_ns = bpf_ktime_get_ns();
	emit(&c);
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
	b->r.h.tgid = BPF_CORE_READ(p, tgid); /* @p: a BTF pointer or not (current_task()) */
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

/* Sets bit @i of *@m if slot @i drops a process that execs a setuid image. */
static long secure_slot(u64 i, u64 *m)
{
	if (wcfg[i & (TNF_WATCH_SLOTS - 1)].untrack_secure)
		*m |= 1ull << (i & (TNF_WATCH_SLOTS - 1));
	return 0;
}
TNF_LOOP_CB(secure_slot, u64)

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	u32 tgid = p->tgid, off, cap;
	struct tnf_wnotice *nt;
	struct tnf_wexec_buf *b;
	unsigned long start, end;
	u64 mask = slots_of(tgid), secure = 0;
	struct tnf_watch_proc *tp;

	if (!mask)
		return 0;
	tp = bpf_map_lookup_elem(&tracked, &tgid);
	if (tp)
		tp->lm_tail = 0; /* a new image */
	/* A caller without CAP_SYS_PTRACE could not trace a setuid image. */
	if (BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec)) {
		tnf_loop(TNF_WATCH_SLOTS, secure_slot, &secure);
		secure &= mask;
		if (secure)
			leave(tgid, secure, false);
		mask &= ~secure;
		if (!mask)
			return 0;
	}
	/* A new image may map a libc the engine has not probed yet: once per file. */
	if (mask & dl_mask) {
		struct tnf_exe_key k = {
			.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
			.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
		};
		u32 one = 1;

		if (!bpf_map_lookup_elem(&exe_seen, &k) &&
		    !bpf_map_update_elem(&exe_seen, &k, &one, BPF_NOEXIST) &&
		    (nt = bpf_ringbuf_reserve(&notices, sizeof(*nt), 0))) {
			nt->tgid = tgid;
			nt->pad = 0;
			nt->exe = k;
			bpf_ringbuf_submit(nt, BPF_RB_NO_WAKEUP);
		}
	}
	b = exec_begin(TNF_WREC_EXEC, p, old_pid, BPF_CORE_READ(bprm, filename), false, &off);
	if (!b) {
		for_slots(mask, tgid, OP_LOST);
		return 0;
	}
	/* A #! script or binfmt_misc: the kernel ran an interpreter, argv rewritten. */
	if (BPF_CORE_READ(bprm, interp) != BPF_CORE_READ(bprm, filename))
		b->r.flags |= TNF_WX_INTERP;
	/*
	 * The new stack holds the arguments, just written by the kernel (so
	 * present): p is current, its mm is the new one.
	 */
	start = BPF_CORE_READ(p, mm, arg_start);
	end = BPF_CORE_READ(p, mm, arg_end);
	if (end > start) {
		b->r.argv_bytes = end - start;
		cap = end - start < TNF_EXEC_ARGV_MAX ? end - start : TNF_EXEC_ARGV_MAX;
		if (cap < end - start)
			b->r.flags |= TNF_WX_ARGV_TRUNC;
		/* Masks: identities here (off <= 8192, cap <= 65536), bounds for the verifier. */
		off &= TNF_EXEC_ARGV_OFF_MASK;
		cap &= 2 * TNF_EXEC_ARGV_MAX - 1;
		if (bpf_probe_read_user(b->data + off, cap, (void *)start) == 0)
			b->r.argv_len = cap;
		else
			b->r.flags |= TNF_WX_ARGV_TRUNC;
	}
	exec_output(b, off, mask);
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
	if (!b || a >= TNF_EXEC_ARGV_MAX) {
		w->trunc = true;
		return 1;
	}
	size = ((TNF_EXEC_ARGV_MAX - a - 1) & (TNF_EXEC_ARGV_MAX - 1)) + 1;
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
TNF_LOOP_CB(argv_step, struct argv_walk)

/*
 * A failed execve or execveat of a tracked process: its path and argv are
 * still in the caller's memory, which the kernel has just read (the argv
 * strings too, unless it failed before copying them: ENOENT, EACCES).
 */
static __always_inline int exec_failed(long ret, const char *file, const char *const *argv)
{
	struct task_struct *cur = current_task();
	struct argv_walk w = {.argv = argv};
	u32 tgid = BPF_CORE_READ(cur, tgid), off;
	struct tnf_wexec_buf *b;
	u64 mask;

	if (ret >= 0 || !(mask = slots_of(tgid)))
		return 0;
	b = exec_begin(TNF_WREC_EXEC_FAILED, cur, BPF_CORE_READ(cur, pid), file, true, &off);
	if (!b) {
		for_slots(mask, tgid, OP_LOST);
		return 0;
	}
	b->r.h.exit_code = -ret;
	w.off = off;
	if (argv)
		tnf_loop(TNF_EXEC_ARGC_MAX, argv_step, &w);
	if (argv && (!w.complete || w.trunc))
		b->r.flags |= TNF_WX_ARGV_TRUNC;
	b->r.argv_len = b->r.argv_bytes = w.a;
	exec_output(b, off, mask);
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
	u32 tgid = p->tgid, tid = p->pid;
	struct tnf_watch_proc *tp = bpf_map_lookup_elem(&tracked, &tgid);
	struct emit_ctx c = {.src = SRC_CTX};
	u64 mask;

	if (!tp)
		return;
	bpf_map_delete_elem(&dl_args, &tid);
	if (!group_dead)
		return; /* one record per process: its last thread reports */
	mask = tp->mask & active;
	if (!mask) {
		/* in closed watches' trees only: the engine's sweep may not have seen it */
		bpf_map_delete_elem(&tracked, &tgid);
		return;
	}
	c.mask = mask;
	c.r.time_ns = bpf_ktime_get_ns();
	c.r.kind = TNF_WREC_EXIT;
	c.r.tgid = tgid;
	c.r.tid = tid;
	c.r.ptgid = parent_tgid(p);
	c.r.exit_code = p->exit_code;
	emit(&c);
	/* After the records: a slot with no process left has every record in its ring. */
	leave(tgid, mask, true);
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

static __always_inline int save_dl_arg(const void *user_str, bool at_rtld)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, tid = (u32)id, zero = 0;
	struct tnf_watch_dl *a;

	if (!(slots_of(tgid) & dl_mask))
		return 0;
	a = bpf_map_lookup_elem(&scratch, &zero);
	if (!a)
		return 0;
	a->path[0] = '\0';
	a->uptr = at_rtld ? (u64)user_str : 0;
	a->pending = 0;
	a->internal = 0;
	if (user_str && !at_rtld)
		bpf_probe_read_user_str(a->path, sizeof(a->path), user_str);
	bpf_map_update_elem(&dl_args, &tid, a, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_dlopen, const char *file)
{
	/*
	 * Read at rtld's RT_CONSISTENT: the name may lie in a page not faulted
	 * in yet, which a uprobe cannot fault in; rtld has read it by then.
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

/*
 * rtld's start-up (no DLOPEN, as in the stopping mode): until it is done,
 * ld.so's own map is second in the chain, after the executable's; never
 * after (the vDSO and the start-up objects come before it).  No map at all
 * yet: ld.so run as a command (`ld.so PROG`) mapping PROG, before its
 * start-up proper.  struct r_debug: r_map at 8, r_ldbase at 32; struct
 * link_map: l_addr at 0.
 */
static __always_inline bool rtld_starting(u64 rd)
{
	u64 lm = 0, base = 0, ldbase = 0;

	if (bpf_probe_read_user(&lm, sizeof(lm), (void *)(rd + 8)))
		return false;
	if (!lm)
		return true;
	if (bpf_probe_read_user(&ldbase, sizeof(ldbase), (void *)(rd + 32)) ||
	    bpf_probe_read_user(&lm, sizeof(lm), (void *)(lm + 24)) || !lm ||
	    bpf_probe_read_user(&base, sizeof(base), (void *)lm))
		return false;
	return base == ldbase;
}

/* &_r_debug.r_state of the ld.so whose _dl_debug_state fired; 0 if unknown. */
static __always_inline u64 r_state_of(struct pt_regs *ctx)
{
	u64 ip = PT_REGS_IP(ctx);
#ifdef TNF_WATCH_COMPAT
	u64 d, brk, unset = 0;
	u32 i, nunset = 0;

	/*
	 * No cookie: try each ld.so's delta.  The right one is the one whose
	 * r_debug's r_brk (at 16, set by rtld's debug set-up) is this very
	 * address; a wrong one reads elsewhere
	 * in (or past) this ld.so, which would have to hold a copy of the
	 * address by chance.
	 */
	for (i = 0; i < TNF_RTLD_PROBED_MAX; i++) {
		d = rtld_delta[i];
		if (!d)
			break;
		if (bpf_probe_read_user(&brk, sizeof(brk), (void *)(ip + d - 8)))
			continue;
		if (brk == ip)
			return ip + d;
		if (!brk) {
			nunset++;
			unset = ip + d;
		}
	}
	/*
	 * Before rtld has set r_brk (ld.so run as a command, mapping the
	 * program: its start-up, which has no DL events, but lm_tail is kept):
	 * the probe fired in a file the engine probed, so, when every one is
	 * listed, the right delta reads r_brk as the address or as 0; if no
	 * delta reads the address and just one reads 0, it is that one.
	 */
	return nunset == 1 && !rtld_overflow ? unset : 0;
#else
	return ip + bpf_get_attach_cookie(ctx);
#endif
}

/*
 * rtld's _dl_debug_state, in a thread inside dlopen/dlmopen/dlclose: the
 * one place that says whether the call changed the link map (the libc
 * probes alone see a dlopen of a loaded object or dlopen(NULL) as any
 * other).  The same rule as the stopping mode: an event at the
 * RT_CONSISTENT that follows an RT_ADD (DLOPEN) or RT_DELETE (DLCLOSE),
 * nothing for objects removed before the map was consistent again (a
 * failed dlopen).  The cookie is &_r_debug.r_state - &_dl_debug_state in
 * this ld.so (watch_tree.c), so no per-process address is needed.  A change
 * with no dlopen/dlclose call (libc loading NSS or iconv modules) is
 * reported too, as in the stopping mode, a DLOPEN named by the first object
 * it added: the one after the tail of the last consistent map.
 */
SEC("uprobe")
int BPF_KPROBE(on_dl_debug_state)
{
	u64 id = bpf_get_current_pid_tgid(), mask;
	u32 tgid = id >> 32, tid = (u32)id, zero = 0;
	struct task_struct *cur;
	struct emit_ctx ec = {.src = SRC_STR};
	struct tnf_watch_dl *a;
	struct tnf_wrec_str *r;
	u64 r_state;
	u64 rd = 0, lm = 0, name = 0, tail = 0;
	struct tnf_watch_proc *tp;
	int state;
	long n;

	tp = bpf_map_lookup_elem(&tracked, &tgid);
	if (!tp || !(tp->mask & active & dl_mask))
		return 0;
	r_state = r_state_of(ctx);
	if (!r_state) {
		/* an ld.so not told apart: its events counted lost, not guessed */
		for_slots(tp->mask & active & dl_mask, tgid, OP_LOST);
		return 0;
	}
	a = bpf_map_lookup_elem(&dl_args, &tid);
	state = rtld_state(r_state, &rd);
	if (state == 0) {
		tail = tp->lm_tail;
		tp->lm_tail = lm_tail(r_state - 24);
	}
	if (!a) {
		if ((state != 1 && state != 2) || rtld_starting(rd))
			return 0;
		/* libc's own load or unload: an entry until its RT_CONSISTENT */
		a = bpf_map_lookup_elem(&scratch, &zero);
		if (!a)
			return 0;
		a->path[0] = '\0';
		a->uptr = 0;
		a->pending = 0;
		a->internal = 1;
		bpf_map_update_elem(&dl_args, &tid, a, BPF_ANY);
		a = bpf_map_lookup_elem(&dl_args, &tid);
		if (!a)
			return 0;
	}
	if (state == 1 || state == 2) { /* RT_ADD, RT_DELETE */
		a->pending = state == 2 && a->pending == 1 ? 0 : state;
		return 0;
	}
	if (state != 0 || !a->pending) {
		if (a->internal && state == 0)
			bpf_map_delete_elem(&dl_args, &tid);
		return 0;
	}
	mask = slots_of(tgid) & dl_mask;
	r = bpf_map_lookup_elem(&str_scratch, &zero);
	if (!mask || !r)
		return 0;
	if (a->uptr) {
		bpf_probe_read_user_str(a->path, sizeof(a->path), (void *)a->uptr);
		a->uptr = 0;
	} else if (a->internal && a->pending == 1 && tail) {
		/* the first object added, as bpf/tnfctl.bpf.c's next_name() */
		if (!bpf_probe_read_user(&lm, sizeof(lm), (void *)(tail + 24)) && lm &&
		    !bpf_probe_read_user(&name, sizeof(name), (void *)(lm + 8)) && name)
			bpf_probe_read_user_str(a->path, sizeof(a->path), (void *)name);
	}
	cur = (struct task_struct *)bpf_get_current_task();
	r->h.time_ns = bpf_ktime_get_ns();
	r->h.kind = a->pending == 1 ? TNF_WREC_DLOPEN : TNF_WREC_DLCLOSE;
	r->h.tgid = tgid;
	r->h.tid = tid;
	r->h.ptgid = parent_tgid(cur);
	r->h.child = 0;
	r->h.exit_code = 0;
	n = bpf_probe_read_kernel_str(r->path, sizeof(r->path), a->path);
	if (n <= 0) {
		r->path[0] = '\0';
		n = 1;
	}
	r->path_len = n;
	r->pad = 0;
	a->pending = 0;
	if (a->internal)
		bpf_map_delete_elem(&dl_args, &tid);
	ec.mask = mask;
	emit(&ec);
	return 0;
}

/* The call is over: its events, if any, were sent at rtld's RT_CONSISTENT. */
static __always_inline int dl_return(void)
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

/*
 * Adds an existing process to slot add_req.slot: the root, or a descendant
 * the engine found in /proc.  The engine sets add_req and runs this task
 * iterator (iter/task, 5.8), narrowed to that one task where the kernel can
 * (6.1), else over every task; the program picks the task either way.  The
 * check and the insert happen here, on the task that owns the pid now: a
 * pid that was freed and reused by a process outside the tree (whose parent
 * is not in the slot) is refused, so a watch never sees it.  (A task
 * iterator rather than a syscall program with the bpf_task_from_pid kfunc,
 * which is 6.2: Debian 12 runs 6.1.)
 */
struct tnf_watch_add add_req;
__u64 add_barrier;

SEC("iter/task")
int add_proc(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct tnf_watch_proc st = {}, *cur;
	u32 pid = add_req.pid, ppid = add_req.ppid, s = add_req.slot & (TNF_WATCH_SLOTS - 1);
	u64 bit = 1ull << s;
	int ret = 0;

	if (!t || t->pid != pid || t->tgid != pid)
		return 0;
	cur = bpf_map_lookup_elem(&tracked, &pid);
	if (ppid && (parent_tgid(t) != ppid || !in_slot(ppid, s))) {
		ret = -ESRCH;
	} else if (cur && (cur->mask & bit)) {
		ret = -EEXIST;
	} else {
		if (cur) {
			/* In another watch's tree already: in this one too. */
			mask_set_clear_bit(cur, bit);
		} else {
			st.mask = bit;
			if (bpf_map_update_elem(&tracked, &pid, &st, BPF_NOEXIST))
				ret = -ENOSPC;
		}
		if (!ret) {
			for_slots(bit, pid, OP_JOIN);
			/*
			 * A full barrier (lock xadd) between the insert and the
			 * read of live: the exit path decrements live (a full
			 * barrier too), then looks the tgid up, so one of the two
			 * sees the other.
			 */
			__sync_fetch_and_add(&add_barrier, 1);
			if (BPF_CORE_READ(t, signal, live.counter) == 0) {
				/* Already past its exit's check of the map: it will not leave
				 * itself. */
				leave(pid, bit, false);
				ret = -ESRCH;
			}
		}
	}
	add_req.ret = ret;
	return 0;
}
