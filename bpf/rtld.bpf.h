/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtld's link-map state as both BPF objects read it (bpf/tnfctl.bpf.c,
 * bpf/watch.bpf.c), from the target's memory: struct r_debug_extended
 * (r_version at 0, r_map at 8, r_state at 24, r_next at 40) and struct
 * link_map (l_name at 8, l_next at 24), x86_64.  Include after the helpers.
 */
#ifndef TNFCTL_RTLD_BPF_H
#define TNFCTL_RTLD_BPF_H

/* Link-map namespaces rtld can have (glibc's DL_NNS). */
#define TNF_RTLD_NS_MAX 16
/* Objects a link map may hold for a DLOPEN by libc itself to be named (else ""). */
#define TNF_LM_WALK_MAX 256

/*
 * r_state of the namespace rtld is changing, or 0 when every one is
 * RT_CONSISTENT, -1 if unreadable.  glibc 2.35+ keeps one struct r_debug
 * per link-map namespace (dlmopen), chained from the base one by r_next
 * once r_version is 2; rtld changes one namespace at a time (under its load
 * lock), so the first state that is not RT_CONSISTENT is the one.  *@nsrd
 * (if not NULL): the r_debug of the namespace whose state was read last.
 */
static __always_inline int rtld_state(u64 r_state_addr, u64 *nsrd)
{
	u64 rd = r_state_addr - 24;
	int version = 0, state = -1, i;

	if (bpf_probe_read_user(&version, sizeof(version), (void *)rd))
		return -1;
	for (i = 0; i < TNF_RTLD_NS_MAX && rd; i++) {
		if (bpf_probe_read_user(&state, sizeof(state), (void *)(rd + 24)))
			return -1;
		if (nsrd)
			*nsrd = rd;
		if (state != 0 || version < 2)
			return state;
		if (bpf_probe_read_user(&rd, sizeof(rd), (void *)(rd + 40)))
			return -1;
	}
	return 0;
}

/*
 * The last object of the link map of @rd, 0 if it is empty or longer than
 * TNF_LM_WALK_MAX objects: the verifier walks each step (17 insns) through
 * every exit, and a bigger bound costs each engine start (4096: 70k insns).
 */
static __always_inline u64 lm_tail(u64 rd)
{
	u64 lm = 0, next = 0;
	int i;

	if (bpf_probe_read_user(&lm, sizeof(lm), (void *)(rd + 8)))
		return 0;
	for (i = 0; i < TNF_LM_WALK_MAX && lm; i++) {
		if (bpf_probe_read_user(&next, sizeof(next), (void *)(lm + 24)))
			return 0;
		if (!next)
			return lm;
		lm = next;
	}
	return 0;
}

#endif
