// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode (prex -k, reference §5.1 and §5.4): the kernel's tracepoints
 * are the probes, and the kernel-only commands control the kernel buffer
 * (here a trace file, -o or $TMPDIR/ktrace-<pid>), the master switch and
 * the process filter.  The messages are the original prex's (prbk.c), on
 * the same streams; the rest of prex (selectors, sets, history, list)
 * works on the kernel handle as on a process.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fd_limit.h"
#include "ktrace_events.h"
#include "prex.h"
#include "tnf_runtime.h"

_Static_assert(KT_SLOTS == 64, "PREX_KERNEL_CAP_HINT names the no-cookie cap");

static tnfctl_handle_t *kh;
static bool broken_told; /* the BROKEN notice is given once */

/* The attributes, or false after the original's message. */
static bool attrs(tnfctl_trace_attrs_t *a)
{
	tnfctl_errcode_t err = tnfctl_trace_attrs_get(kh, a);

	if (err) {
		fflush(stdout);
		fprintf(stderr, "error on checking trace attributes : %s\n", tnfctl_strerror(err));
		return false;
	}
	return true;
}

static void kcmd_buffer_show(void)
{
	tnfctl_trace_attrs_t a;

	if (!attrs(&a))
		return;
	if (a.trace_buf_state == TNFCTL_BUF_NONE) {
		printf("No trace buffer allocated\n");
		return;
	}
	printf("Trace buffer size is %zu bytes\n", a.trace_buf_size);
	if (a.trace_file_name)
		printf("Current trace file is: %s\n", a.trace_file_name);
	if (a.trace_buf_state == TNFCTL_BUF_BROKEN)
		printf("Tracing system has failed -- tracing suspended\n");
}

static void kcmd_buffer_alloc(unsigned long size, bool given)
{
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;

	if (!attrs(&a))
		return;
	fflush(stdout);
	if (a.trace_buf_state != TNFCTL_BUF_NONE) {
		fprintf(stderr, "There is already a buffer allocated\n");
		return;
	}
	if (!given)
		size = g_opt.size;
	if (size < a.trace_min_size) {
		fprintf(stderr,
			"Size %lu is less than the minimum buffer size of %zu -- "
			"buffer size set to %zu bytes\n",
			size, a.trace_min_size, a.trace_min_size);
		size = a.trace_min_size;
	}
	/* uint_t: a larger size must not wrap into a small one */
	err = size > UINT_MAX ? TNFCTL_ERR_SIZETOOBIG
			      : tnfctl_buffer_alloc(kh, g_opt.outname, (uint_t)size);
	if (err) {
		/* ACCES: the file, or loading the BPF program (root without CAP_BPF) */
		fprintf(stderr, "error in allocating buffer: %s%s%s%s\n", tnfctl_strerror(err),
			g_opt.outname ? ": " : "", g_opt.outname ? g_opt.outname : "",
			err == TNFCTL_ERR_ACCES
				? " (the trace file, or BPF tracing: it needs root, "
				  "or CAP_BPF and CAP_PERFMON)"
				: "");
		return;
	}
	if (!attrs(&a))
		return;
	broken_told = false;
	printf("Buffer of size %zu bytes allocated\n", a.trace_buf_size);
	if (a.trace_file_name)
		printf("Current trace file is: %s\n", a.trace_file_name);
}

static void kcmd_buffer_dealloc(void)
{
	tnfctl_errcode_t err = tnfctl_buffer_dealloc(kh);

	fflush(stdout);
	switch (err) {
	case TNFCTL_ERR_NONE:
		printf("buffer deallocated\n");
		break;
	case TNFCTL_ERR_NOBUF:
		fprintf(stderr, "There is no buffer to deallocate\n");
		break;
	case TNFCTL_ERR_BADDEALLOC:
		fprintf(stderr, "Can't deallocate the buffer when tracing is active\n");
		break;
	default:
		fprintf(stderr, "error in deleting buffer: %s\n", tnfctl_strerror(err));
		break;
	}
}

static void kcmd_ktrace_show(void)
{
	tnfctl_trace_attrs_t a;

	if (attrs(&a))
		printf("Tracing is %s\n", a.trace_state ? "on" : "off");
}

static void kcmd_ktrace_set(bool on)
{
	tnfctl_errcode_t err = tnfctl_trace_state_set(kh, on ? B_TRUE : B_FALSE);

	if (!err)
		return;
	fflush(stdout);
	/* the original's line; the hint is ours */
	fprintf(stderr, "error in setting tracing state: %s%s\n", tnfctl_strerror(err),
		err == TNFCTL_ERR_NOBUF	      ? " (allocate one with \"buffer alloc\")"
		: err == TNFCTL_ERR_ALLOCFAIL ? PREX_KERNEL_CAP_HINT
					      : "");
}

static void kcmd_pfilter_show(void)
{
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;
	pid_t *pids = NULL;
	int i, n = 0;

	if (!attrs(&a))
		return;
	printf("Process filtering is %s\n", a.filter_state ? "on" : "off");
	err = tnfctl_filter_list_get(kh, &pids, &n);
	if (err) {
		fflush(stdout);
		fprintf(stderr, "error in getting process filter list: %s\n", tnfctl_strerror(err));
		return;
	}
	printf("Process filter set is ");
	if (!n)
		printf("empty.\n");
	for (i = 0; i < n; i++)
		printf("%s%d%s", i ? "" : "{", (int)pids[i], i < n - 1 ? ", " : "}\n");
	free(pids); /* the original never did */
}

static void kcmd_pfilter_set(bool on)
{
	tnfctl_errcode_t err = tnfctl_filter_state_set(kh, on ? B_TRUE : B_FALSE);

	if (err) {
		fflush(stdout);
		fprintf(stderr, "pfilter: %s\n", tnfctl_strerror(err));
	}
}

/* A typed number that is no pid_t would wrap into another pid. */
static bool pid_ok(unsigned long v)
{
	if (v <= INT_MAX)
		return true;
	fflush(stdout);
	fprintf(stderr, "Process %lu: %s\n", v, tnfctl_strerror(TNFCTL_ERR_BADARG));
	return false;
}

static void kcmd_pfilter_add(const unsigned long *pids, int n)
{
	tnfctl_errcode_t err;
	int i;

	for (i = 0; i < n; i++) {
		if (!pid_ok(pids[i]))
			continue;
		err = tnfctl_filter_list_add(kh, (pid_t)pids[i]);
		if (err) {
			fflush(stdout);
			fprintf(stderr, "Process %lu: %s\n", pids[i], tnfctl_strerror(err));
		}
	}
}

static void kcmd_pfilter_delete(const unsigned long *pids, int n)
{
	tnfctl_errcode_t err;
	int i;

	for (i = 0; i < n; i++) {
		if (!pid_ok(pids[i]))
			continue;
		err = tnfctl_filter_list_delete(kh, (pid_t)pids[i]);
		fflush(stdout);
		switch (err) {
		case TNFCTL_ERR_NONE:
			break;
		case TNFCTL_ERR_BADARG:
			fprintf(stderr, "Process %lu is not being traced\n", pids[i]);
			break;
		case TNFCTL_ERR_NOPROCESS:
			/* on stdout, as the original: it is no longer in the list either way */
			printf("Process %lu has exited\n", pids[i]);
			break;
		default:
			fprintf(stderr, "Process %lu: %s\n", pids[i], tnfctl_strerror(err));
			break;
		}
	}
}

static void kcmd_list_tracefile(void)
{
	tnfctl_trace_attrs_t a;

	if (!attrs(&a))
		return;
	if (a.trace_buf_state != TNFCTL_BUF_NONE && a.trace_file_name) {
		printf("Current trace file is: %s\n", a.trace_file_name);
		return;
	}
	/* the original had none at all in kernel mode; here it comes with the buffer */
	fflush(stdout);
	fprintf(stderr, "There is no trace file in kernel mode until a buffer is allocated "
			"(buffer alloc)\n");
}

/*
 * After each statement, as the original: a filter that is on with an empty
 * list lets nothing through.  Also says once that tracing broke.
 */
static void kcmd_after_statement(void)
{
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;
	pid_t *pids = NULL;
	int n = 0;

	if (!attrs(&a))
		return;
	if (a.trace_buf_state == TNFCTL_BUF_BROKEN && !broken_told) {
		printf("Tracing system has failed -- tracing suspended\n");
		broken_told = true;
	}
	if (!a.filter_state)
		return;
	err = tnfctl_filter_list_get(kh, &pids, &n);
	fflush(stdout);
	if (err)
		fprintf(stderr, "error in getting process filter list: %s\n", tnfctl_strerror(err));
	else if (!n)
		fprintf(stderr, "Warning: Process filtering on, but pid filter list is empty\n");
	free(pids);
}

static const struct kernel_ops ops = {
	.buffer_show = kcmd_buffer_show,
	.buffer_alloc = kcmd_buffer_alloc,
	.buffer_dealloc = kcmd_buffer_dealloc,
	.ktrace_show = kcmd_ktrace_show,
	.ktrace_set = kcmd_ktrace_set,
	.pfilter_show = kcmd_pfilter_show,
	.pfilter_set = kcmd_pfilter_set,
	.pfilter_add = kcmd_pfilter_add,
	.pfilter_delete = kcmd_pfilter_delete,
	.list_tracefile = kcmd_list_tracefile,
	.after_statement = kcmd_after_statement,
};

/*
 * -o and -s are checked before anything is traced: the buffer (and its file)
 * is made only at `buffer alloc`, and a script that fails there would end
 * with 0 having traced nothing.
 */
static void check_outfile_args(void)
{
	struct stat st;

	if (g_opt.size_given && g_opt.size > TNF_TRACE_FILE_MAX) {
		prex_msg("trace file size %lu KB is too big: the kernel buffer is at most %lu KB",
			 g_opt.size / 1024, (unsigned long)TNF_TRACE_FILE_MAX / 1024);
		exit(1);
	}
	if (!g_opt.outname)
		return;
	if (!stat(g_opt.outname, &st) && S_ISDIR(st.st_mode)) {
		prex_msg("cannot create trace file %s: %s", g_opt.outname, strerror(EISDIR));
		exit(1);
	}
	if (prex_dir_writable(g_opt.outname)) {
		prex_msg("cannot create trace file %s: %s", g_opt.outname, strerror(errno));
		exit(1);
	}
}

void kernel_open(void)
{
	tnfctl_errcode_t err;

	check_outfile_args();
	/* two descriptors per traced tracepoint: enable $all is 2300 of them */
	tnf_raise_fd_limit();
	err = tnfctl_kernel_open(&kh);

	if (err == TNFCTL_ERR_ACCES) {
		prex_msg("trouble attaching to the kernel: %s: kernel tracing needs the "
			 "privileges of BPF tracing (root, or CAP_BPF and CAP_PERFMON)",
			 tnfctl_strerror(err));
		exit(1);
	}
	if (err == TNFCTL_ERR_FILENOTFOUND) {
		prex_msg("trouble attaching to the kernel: %s: no tracefs "
			 "(/sys/kernel/tracing) to read the tracepoints from",
			 tnfctl_strerror(err));
		exit(1);
	}
	if (err == TNFCTL_ERR_KERNEL) {
		prex_msg("trouble attaching to the kernel: %s: kernel tracing needs BTF "
			 "(/sys/kernel/btf/vmlinux) and the BPF ring buffer (Linux 5.8)",
			 tnfctl_strerror(err));
		exit(1);
	}
	if (err) {
		prex_msg("trouble attaching to the kernel: %s", tnfctl_strerror(err));
		exit(1);
	}
	/* as in user mode; the kernel's probes never change, so it only runs now */
	err = tnfctl_register_funcs(kh, history_replay, NULL);
	if (err || target_kernel(kh)) {
		prex_msg("error in probe discovery: %s",
			 err ? tnfctl_strerror(err) : "out of memory");
		tnfctl_close(kh, TNFCTL_TARG_DEFAULT);
		exit(1);
	}
	kernel_ops = &ops;
}
