// SPDX-License-Identifier: BSD-2-Clause
/*
 * USDT probes of processes: one program, attached by libbpf's attach_usdt
 * to every site of each enabled and traced probe (a uprobe with the
 * kernel's semaphore reference count), writes one record per hit: the
 * time (CLOCK_MONOTONIC, the trace files' one clock), the process and
 * thread, the integer arguments and the ones asked for as strings.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "ktrace_events.h"
#include "usdt_events.h"
#define BPF_USDT_MAX_SPEC_CNT US_SPECS_MAX
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} us_rb SEC(".maps");

struct us_scratch {
	struct kt_hdr h;
	__u64 args[US_MAX_ARGS];
	__u8 strs[US_MAX_STRS * (KT_STR_MAX + 1)];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct us_scratch);
} us_buf SEC(".maps");

/* Records the ring buffer had no room for, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} us_lost SEC(".maps");

SEC("usdt")
int usdt_hit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_usdt_cookie(ctx), *lost;
	__u32 zero = 0, mask = cookie >> 32, i;
	struct us_scratch *s;
	__u64 pos = 0; /* 64 bits: a spilled 32-bit scalar loses its bounds */
	int n;

	s = bpf_map_lookup_elem(&us_buf, &zero);
	if (!s)
		return 0;
	s->h.ts = bpf_ktime_get_ns();
	s->h.probe = (__u32)cookie;
	s->h.cpu = bpf_get_smp_processor_id();
	s->h.pid = id >> 32;
	s->h.tid = (__u32)id;
	s->h.fixed_size = US_FIXED;
	s->h.nstrs = 0;
	n = bpf_usdt_arg_cnt(ctx);
	for (i = 0; i < US_MAX_ARGS; i++) {
		long v = 0;

		if ((int)i < n)
			bpf_usdt_arg(ctx, i, &v);
		s->args[i] = v;
	}
	for (i = 0; i < US_MAX_ARGS; i++) {
		long r;

		if ((int)i >= n || s->h.nstrs >= US_MAX_STRS)
			break;
		if (!(mask & (1u << i)))
			continue;
		if (pos > (US_MAX_STRS - 1) * (KT_STR_MAX + 1))
			break;
		r = bpf_probe_read_user_str(s->strs + pos + 1, KT_STR_MAX, (void *)s->args[i]);
		/* a status byte before the string: 1 read, 0 not (a page not present) */
		if (r <= 0) {
			s->strs[pos] = 0;
			s->strs[pos + 1] = 0;
			r = 1;
		} else {
			s->strs[pos] = 1;
		}
		pos += r + 1;
		s->h.nstrs++;
	}
	pos += sizeof(struct kt_hdr) + US_FIXED;
	if (pos > sizeof(*s))
		return 0;
	if (bpf_ringbuf_output(&us_rb, s, pos, 0)) {
		lost = bpf_map_lookup_elem(&us_lost, &zero);
		if (lost)
			*lost += 1;
	}
	return 0;
}
