// SPDX-License-Identifier: BSD-2-Clause
/* What the running kernel offers, from /sys/kernel/btf/vmlinux, once. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kfeatures.h"

static struct tnf_kfeatures kf;

static bool exit_passes_group_dead(const struct btf *btf)
{
	const struct btf_type *t;
	int id = btf__find_by_name_kind(btf, "btf_trace_sched_process_exit", BTF_KIND_TYPEDEF);

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* pointer */
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* func proto */
	return t && btf_is_func_proto(t) && btf_vlen(t) == 3;
}

static bool has_enumerator(const struct btf *btf, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e;
	int i;

	if (!t)
		return false;
	for (i = 0, e = btf_enum(t); i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), name))
			return true;
	return false;
}

/*
 * BPF atomic fetch-and-add (5.12; the watch's sequence numbers): a tiny
 * socket filter doing one on its stack.  Only a verifier's EINVAL counts as
 * missing: without privileges (EPERM) the real load says so later.
 */
static bool has_atomic_fetch(void)
{
	const struct bpf_insn insns[] = {
		/* *(u64 *)(r10 - 8) = 0; r1 = 1; r1 = atomic_fetch_add(r10 - 8, r1) */
		{.code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1},
		{.code = BPF_STX | BPF_ATOMIC | BPF_DW,
		 .dst_reg = BPF_REG_10,
		 .src_reg = BPF_REG_1,
		 .off = -8,
		 .imm = BPF_ADD | BPF_FETCH},
		/* return 0 */
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != EINVAL;
}

/*
 * An fexit program on @func that reads its first argument, loads and
 * attaches: BPF trampolines are not allowed everywhere (EPERM seen on a
 * 6.18 guest kernel), and 5.10's verifier refuses the read where
 * the argument's type is a forward declaration (struct pt_regs of
 * the syscall wrappers), so try one as ours are.
 */
static bool has_fexit(const struct btf *btf, const char *func)
{
	const struct bpf_insn insns[] = {
		/* r0 = *(u64 *)(r1 + 0): the first argument */
		{.code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC), fd, link;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FEXIT);

	if (id <= 0)
		return false;
	o.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &o);
	if (fd < 0)
		return false;
	link = bpf_link_create(fd, 0, BPF_TRACE_FEXIT, NULL);
	if (link >= 0)
		close(link);
	close(fd);
	return link >= 0;
}

static void probe(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const char *no_multi = getenv("TNFCTL_NO_UPROBE_MULTI");
	const char *compat = getenv("TNFCTL_WATCH_COMPAT");

	if (!btf)
		return; /* no BTF: nothing of ours loads */
	kf.base =
		btf__find_by_name_kind(btf, "btf_trace_sched_process_fork", BTF_KIND_TYPEDEF) > 0 &&
		btf__find_by_name_kind(btf, "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF) > 0 &&
		has_enumerator(btf, "bpf_map_type", "BPF_MAP_TYPE_RINGBUF");
	kf.atomic_fetch = has_atomic_fetch();
	kf.attach_cookie = has_enumerator(btf, "bpf_func_id", "BPF_FUNC_get_attach_cookie");
	kf.iter_task = btf__find_by_name_kind(btf, "bpf_iter__task", BTF_KIND_STRUCT) > 0;
	kf.loop = has_enumerator(btf, "bpf_func_id", "BPF_FUNC_loop");
	kf.current_task_btf = has_enumerator(btf, "bpf_func_id", "BPF_FUNC_get_current_task_btf");
	kf.watch_compat_forced = compat && *compat;
	kf.send_signal_task =
		btf__find_by_name_kind(btf, "bpf_send_signal_task", BTF_KIND_FUNC) > 0;
	kf.exit_group_dead = exit_passes_group_dead(btf);
	kf.fexit_execve =
		has_fexit(btf, "__x64_sys_execve") && has_fexit(btf, "__x64_sys_execveat");
	/* What libbpf_find_vmlinux_btf_id("sys_exit", BPF_TRACE_RAW_TP) looks for, without parsing
	 * BTF again. */
	kf.raw_tp_sys_exit =
		btf__find_by_name_kind(btf, "btf_trace_sys_exit", BTF_KIND_TYPEDEF) > 0;
	kf.uprobe_multi = !(no_multi && *no_multi) &&
			  btf__find_by_name_kind(btf, "bpf_uprobe_multi_link", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
}

enum tnf_failed_exec tnf_failed_exec_prepare(struct bpf_program *sys_exit,
					     struct bpf_program *execve,
					     struct bpf_program *execveat)
{
	enum tnf_failed_exec fx = TNF_FX_NONE;

	if (tnf_kfeatures()->fexit_execve)
		fx = TNF_FX_FEXIT;
	else if (tnf_kfeatures()->raw_tp_sys_exit)
		fx = TNF_FX_SYS_EXIT;
	bpf_program__set_autoload(sys_exit, fx == TNF_FX_SYS_EXIT);
	bpf_program__set_autoload(execve, fx == TNF_FX_FEXIT);
	bpf_program__set_autoload(execveat, fx == TNF_FX_FEXIT);
	return fx;
}

const struct tnf_kfeatures *tnf_kfeatures(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, probe);
	return &kf;
}
