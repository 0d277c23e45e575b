// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode: one generic program, attached to each enabled and traced
 * tracepoint, copies the tracepoint's record (and its string fields) into
 * the ring buffer.  The per-tracepoint layout comes from the tracefs format
 * file, in kt_events, keyed by the serial the link carries as its cookie.
 * The pid filter admits tgids in kt_pids; key 0 stands for activity of no
 * process (kernel threads, the idle task).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "ktrace_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD 0x00200000

const volatile __u64 wake_bytes = 1 << 16; /* wake the consumer when this much is unread */
volatile __u32 tracing_on;
volatile __u32 consumer_tid; /* the library's own thread: its syscalls would feed back */
volatile __u32 filter_on;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 17); /* resized before load */
} kt_rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct kt_event_cfg);
} kt_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KT_MAX_PIDS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);   /* tgid, 0 for no process */
	__type(value, __u64); /* its start (a later process with the pid does not pass) */
} kt_pids SEC(".maps");

/* The no-cookie variant: slot -> serial of the tracepoint its stub is on, 0 for none. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} kt_slots SEC(".maps");

struct kt_scratch {
	struct kt_hdr h;
	__u8 data[KT_MAX_FIXED + KT_MAX_STRS * (KT_STR_MAX + 1) + 1];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kt_scratch);
} kt_buf SEC(".maps");

/* Records the ring buffer had no room for, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} kt_lost SEC(".maps");

static __always_inline int admitted(__u32 tgid)
{
	struct task_struct *t;
	__u32 key = tgid;
	__u64 *start;

	if (!filter_on)
		return 1;
	t = (struct task_struct *)bpf_get_current_task();
	if (!tgid || (BPF_CORE_READ(t, flags) & PF_KTHREAD))
		key = 0;
	start = bpf_map_lookup_elem(&kt_pids, &key);
	if (!start)
		return 0;
	return !key || *start == BPF_CORE_READ(t, group_leader, start_boottime) / KT_NSEC_PER_TICK;
}

/* Not 0: that would drop the event for perf's own users of the tracepoint. */
#define KT_PASS 1

/*
 * The record's common fields hold a pt_regs pointer here, so @key (the
 * link's serial) says which tracepoint.  A link being released has no
 * entry any more and does nothing.  Not inlined: one copy for the slot
 * stubs, and 5.10 checks a static function with the ctx pointer as is.
 */
static __noinline int kt_record(void *ctx, __u64 key)
{
	__u64 id = bpf_get_current_pid_tgid(), *lost;
	struct kt_event_cfg *cfg;
	struct kt_scratch *s;
	__u32 zero = 0, i;
	__u64 pos; /* 64 bits: a spilled 32-bit scalar loses its bounds */
	__u64 before, flags;

	if (!tracing_on || (__u32)id == consumer_tid)
		return KT_PASS;
	cfg = bpf_map_lookup_elem(&kt_events, &key);
	if (!cfg || !admitted(id >> 32))
		return KT_PASS;
	s = bpf_map_lookup_elem(&kt_buf, &zero);
	if (!s)
		return KT_PASS;
	s->h.ts = bpf_ktime_get_ns();
	s->h.probe = cfg->probe;
	s->h.cpu = bpf_get_smp_processor_id();
	s->h.pid = id >> 32;
	s->h.tid = (__u32)id;
	s->h.nstrs = 0;
	pos = cfg->fixed_size;
	if (pos > KT_MAX_FIXED)
		pos = KT_MAX_FIXED;
	if (pos && bpf_probe_read_kernel(s->data, pos, ctx))
		return KT_PASS;
	s->h.fixed_size = pos;
	for (i = 0; i < KT_MAX_STRS; i++) {
		__u32 off, word = 0;
		__u64 ptr = 0;
		long n = -1;

		if (i >= cfg->nstrs)
			break;
		off = cfg->str_off[i];
		if (pos > KT_MAX_FIXED + (KT_MAX_STRS - 1) * (KT_STR_MAX + 1))
			break;
		pos &= 0x7ff;
		switch (cfg->str_kind[i]) {
		case KT_STR_DATA_LOC:
			if (!bpf_probe_read_kernel(&word, 4, ctx + (off & 0x7ff)))
				n = bpf_probe_read_kernel_str(s->data + pos + 1, KT_STR_MAX,
							      ctx + (word & 0xffff));
			break;
		case KT_STR_REL_LOC:
			if (!bpf_probe_read_kernel(&word, 4, ctx + (off & 0x7ff)))
				n = bpf_probe_read_kernel_str(s->data + pos + 1, KT_STR_MAX,
							      ctx + (off & 0x7ff) + 4 +
								      (word & 0xffff));
			break;
		case KT_STR_USER_PTR:
			if (!bpf_probe_read_kernel(&ptr, 8, ctx + (off & 0x7ff)))
				n = bpf_probe_read_user_str(s->data + pos + 1, KT_STR_MAX,
							    (void *)ptr);
			break;
		}
		/* a status byte before the string: 1 read, 0 not (a page not present) */
		if (n <= 0) {
			s->data[pos] = 0;
			s->data[pos + 1] = 0;
			n = 1;
		} else {
			s->data[pos] = 1;
		}
		pos += n + 1;
		s->h.nstrs++;
	}
	pos += sizeof(struct kt_hdr);
	if (pos > sizeof(*s))
		return KT_PASS;
	/* no wake-up per record: the consumer polls, and is woken at a quarter full */
	before = bpf_ringbuf_query(&kt_rb, BPF_RB_AVAIL_DATA);
	flags = before < wake_bytes && before + pos + 8 >= wake_bytes ? BPF_RB_FORCE_WAKEUP
								      : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&kt_rb, s, pos, flags)) {
		lost = bpf_map_lookup_elem(&kt_lost, &zero);
		if (lost)
			*lost += 1;
	}
	return KT_PASS;
}

/* Kernels with cookies (5.15): one program on every tracepoint. */
SEC("tracepoint")
int kt_event(void *ctx)
{
	return kt_record(ctx, bpf_get_attach_cookie(ctx));
}

/* Without: stub n is on one tracepoint at a time, its serial in kt_slots[n]. */
static __always_inline int kt_slot(void *ctx, __u32 slot)
{
	__u64 *key = bpf_map_lookup_elem(&kt_slots, &slot);

	return kt_record(ctx, key ? *key : 0); /* serials start at 1 */
}

#define KT_SLOT(n)                                                                                 \
	SEC("tracepoint")                                                                          \
	int kt_slot##n(void *ctx)                                                                  \
	{                                                                                          \
		return kt_slot(ctx, 1##n - 100);                                                   \
	}
/* kt_slot00 .. kt_slot63 (1##n - 100: "08" is no octal number) */
#define KT_SLOT10(t)                                                                               \
	KT_SLOT(t##0)                                                                              \
	KT_SLOT(t##1)                                                                              \
	KT_SLOT(t##2)                                                                              \
	KT_SLOT(t##3)                                                                              \
	KT_SLOT(t##4)                                                                              \
	KT_SLOT(t##5)                                                                              \
	KT_SLOT(t##6)                                                                              \
	KT_SLOT(t##7)                                                                              \
	KT_SLOT(t##8)                                                                              \
	KT_SLOT(t##9)

KT_SLOT10(0)
KT_SLOT10(1)
KT_SLOT10(2)
KT_SLOT10(3)
KT_SLOT10(4)
KT_SLOT10(5)
KT_SLOT(60)
KT_SLOT(61)
KT_SLOT(62)
KT_SLOT(63)
_Static_assert(KT_SLOTS == 64, "one stub per slot above");
