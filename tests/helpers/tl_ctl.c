// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_ctl: a throw-away controller for the controller-death tests.
 *
 *   tl_ctl LIBTNFCTL REPORTFD run|stop|unpriv [p PID | e PROG ARG1 ARG2]...
 *
 * dlopens LIBTNFCTL (so it starts from a clean process), opens every target
 * (p: tnfctl_pid_open, e: tnfctl_exec_open of PROG ARG1 ARG2 with the
 * inherited environment), writes "opened <pid>" for each to REPORTFD, then
 * with "run" starts one thread per handle looping in tnfctl_continue().  It
 * writes "running" and waits to be killed.  "hold" is "stop" plus a forked
 * child (reported as "holder <pid>") that outlives the controller.  Errors: "error <what>", exit 1;
 * a failed open is "error open <code> <message>".  "unpriv" first drops
 * every privilege (uid/gid 65534, no groups) and stops after the opens;
 * "capped" is uid/gid 65534 too, keeping only CAP_BPF, CAP_PERFMON,
 * CAP_SYS_PTRACE and CAP_CHECKPOINT_RESTORE (permitted and effective), the
 * documented minimum, and CAP_SYS_ADMIN where the kernel has no
 * uprobe_multi links (before 6.6, or TNFCTL_NO_UPROBE_MULTI): a perf
 * uprobe needs it (README, Requirements); and before 5.11, an unlimited
 * RLIMIT_MEMLOCK.  "suspend" opens with
 * TNFCTL_OPEN_NOPROBES, closes the first handle with TNFCTL_TARG_SUSPEND,
 * keeps the others, writes "suspended" and waits to be killed.
 */
#include <grp.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <tnf/tnfctl.h>
#include "tl_btf.h"

#define MAX_HANDLES 8

static tnfctl_errcode_t (*f_pid_open)(pid_t, tnfctl_handle_t **);
static tnfctl_errcode_t (*f_exec_open)(const char *, char *const *, char *const *, const char *,
				       const char *, tnfctl_handle_t **);
static tnfctl_errcode_t (*f_continue)(tnfctl_handle_t *, tnfctl_event_t *, tnfctl_handle_t **);
static tnfctl_errcode_t (*f_pid_open_flags)(pid_t, unsigned int, tnfctl_handle_t **);
static tnfctl_errcode_t (*f_close)(tnfctl_handle_t *, tnfctl_targ_op_t);
static tnfctl_errcode_t (*f_attrs)(tnfctl_handle_t *, tnfctl_trace_attrs_t *);
static const char *(*f_strerror)(tnfctl_errcode_t);
static int report_fd;

static void report(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	while (write(report_fd, buf, n) < 0 && errno == EINTR)
		;
}

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		report("error dlsym %s", name);
		exit(1);
	}
	return p;
}

/* The kernel has uprobe_multi links: its BTF names struct bpf_uprobe_multi_link. */
static int have_uprobe_multi(void)
{
	const char *no = getenv("TNFCTL_NO_UPROBE_MULTI");

	return !(no && *no) && tl_btf_has_name("bpf_uprobe_multi_link");
}

/* uid/gid 65534 with the documented minimum of capabilities only. */
static int drop_to_capped(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	static const int caps[] = {CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_CHECKPOINT_RESTORE};
	int admin = !have_uprobe_multi();
	unsigned int i;

	/*
	 * Before 5.11, BPF memory counts against RLIMIT_MEMLOCK, which libbpf
	 * raises only with CAP_SYS_RESOURCE: there the documented minimum
	 * includes `ulimit -l unlimited`.  libbpf's own test: the helper that
	 * came with memcg accounting.
	 */
	if (!tl_btf_has_name("BPF_FUNC_ktime_get_coarse_ns")) {
		struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};

		if (setrlimit(RLIMIT_MEMLOCK, &inf))
			return -1;
	}
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return -1;
	memset(d, 0, sizeof(d));
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		d[caps[i] / 32].permitted |= 1u << (caps[i] % 32);
		d[caps[i] / 32].effective |= 1u << (caps[i] % 32);
	}
	if (admin) {
		d[CAP_SYS_ADMIN / 32].permitted |= 1u << (CAP_SYS_ADMIN % 32);
		d[CAP_SYS_ADMIN / 32].effective |= 1u << (CAP_SYS_ADMIN % 32);
	}
	return (int)syscall(SYS_capset, &h, d);
}

static void *cont_loop(void *arg)
{
	tnfctl_handle_t *h = arg;
	tnfctl_event_t evt;

	for (;;) {
		if (f_continue(h, &evt, NULL) != TNFCTL_ERR_NONE)
			break;
		if (evt == TNFCTL_EVENT_EXIT || evt == TNFCTL_EVENT_TARGGONE ||
		    evt == TNFCTL_EVENT_EXEC)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	tnfctl_handle_t *h[MAX_HANDLES];
	int nh = 0, i, run, suspend;
	void *lib;

	if (argc < 4)
		return 2;
	report_fd = atoi(argv[2]);
	run = !strcmp(argv[3], "run");
	if (!strcmp(argv[3], "unpriv") && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
					   setresuid(65534, 65534, 65534))) {
		report("error cannot drop privileges");
		return 1;
	}
	if (!strcmp(argv[3], "capped") && drop_to_capped()) {
		report("error cannot drop to the capabilities");
		return 1;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		report("error dlopen %s", dlerror());
		return 1;
	}
	*(void **)&f_pid_open = sym(lib, "tnfctl_pid_open");
	*(void **)&f_exec_open = sym(lib, "tnfctl_exec_open");
	*(void **)&f_continue = sym(lib, "tnfctl_continue");
	*(void **)&f_attrs = sym(lib, "tnfctl_trace_attrs_get");
	*(void **)&f_strerror = sym(lib, "tnfctl_strerror");
	*(void **)&f_pid_open_flags = sym(lib, "tnfctl_pid_open_flags");
	*(void **)&f_close = sym(lib, "tnfctl_close");
	suspend = !strcmp(argv[3], "suspend");

	for (i = 4; i < argc && nh < MAX_HANDLES;) {
		tnfctl_trace_attrs_t attrs;
		tnfctl_errcode_t err;

		if (!strcmp(argv[i], "p") && i + 1 < argc) {
			err = suspend ? f_pid_open_flags(atoi(argv[i + 1]), TNFCTL_OPEN_NOPROBES,
							 &h[nh])
				      : f_pid_open(atoi(argv[i + 1]), &h[nh]);
			i += 2;
		} else if (!strcmp(argv[i], "e") && i + 3 < argc) {
			char *targv[] = {argv[i + 1], argv[i + 2], argv[i + 3], NULL};

			err = f_exec_open(argv[i + 1], targv, NULL, NULL, NULL, &h[nh]);
			i += 4;
		} else {
			report("error usage");
			return 2;
		}
		if (err != TNFCTL_ERR_NONE) {
			report("error open %d %s", (int)err, f_strerror(err));
			return 1;
		}
		if (f_attrs(h[nh], &attrs) != TNFCTL_ERR_NONE) {
			report("error attrs");
			return 1;
		}
		report("opened %d", (int)attrs.targ_pid);
		nh++;
	}
	for (i = 0; run && i < nh; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, cont_loop, h[i])) {
			report("error pthread_create");
			return 1;
		}
	}
	if (!strcmp(argv[3], "hold")) {
		/* A child that keeps a copy of everything but never uses the library. */
		pid_t holder = fork();

		if (holder == 0) {
			close(report_fd);
			for (;;)
				pause();
		}
		report("holder %d", (int)holder);
	}
	if (suspend) {
		if (nh < 1 || f_close(h[0], TNFCTL_TARG_SUSPEND) != TNFCTL_ERR_NONE) {
			report("error close");
			return 1;
		}
		report("suspended");
		for (;;)
			pause();
	}
	report(run ? "running" : "stopped");
	for (;;)
		pause();
}
