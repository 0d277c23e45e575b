// SPDX-License-Identifier: BSD-2-Clause
/*
 * Opens by a root controller that lacks one capability in its effective
 * set only (issue 13, item 6): the kernel then refuses /proc/PID/mem, maps,
 * exe or map_files with EPERM (their checks use the effective set, while
 * PTRACE_SEIZE uses the permitted one).  Each open must give ACCES or work,
 * never INTERNAL and never hang, and leave nothing behind: the exec_open'd
 * child killed and reaped, the pid_open'd process running and untraced.
 *
 * TL_CAPS_ROUNDS rounds of every capability (default 3; 20 with
 * TL_STRESS=full).
 */
#include "testlib.h"
#include <dirent.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif
/* A case of two capabilities at once: both refused /proc/PID/map_files. */
#define CAP_MAP_FILES 1000

static int cap_rounds(void)
{
	const char *s = getenv("TL_STRESS");

	return tl_env_int("TL_CAPS_ROUNDS", s && !strcmp(s, "full") ? 20 : 3);
}

static int drop_one(int cap);

/* Takes @cap out of the effective set, keeps it permitted. */
static int drop_effective(int cap)
{
	if (cap == CAP_MAP_FILES)
		return drop_effective(CAP_SYS_ADMIN) || drop_effective(CAP_CHECKPOINT_RESTORE);
	return drop_one(cap);
}

static int drop_one(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	if (syscall(SYS_capset, &h, d))
		return -1;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) || (d[cap / 32].effective & (1u << (cap % 32))) ||
	    !(d[cap / 32].permitted & (1u << (cap % 32))))
		return -1;
	return 0;
}

/* Children of ours other than the tracer helper (a failed exec_open's child). */
static int other_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], buf[512], *c;
		int ppid;

		if (atoi(e->d_name) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (tl_read_file(path, buf, sizeof(buf)) <= 0 || !(c = strrchr(buf, ')')))
			continue;
		if (sscanf(c + 2, "%*c %d", &ppid) == 1 && ppid == getpid() &&
		    !strstr(buf, "(tnfctl-engine)"))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

struct cap_result {
	int dropped, exec_err, pid_err, watch_err, exec_run, pid_run, leftovers;
};

static void cap_child(int cap, pid_t other, struct cap_result *res)
{
	char *argv[] = {tl.target, NULL};
	tnfctl_handle_t *h = NULL;
	tnfctl_watch_t *w = NULL;
	tnfctl_event_t evt;

	res->dropped = drop_effective(cap) == 0;
	if (!res->dropped)
		_exit(0);
	/* tl_target without its pipes: it exits at once once it runs */
	res->exec_err = tnfctl_exec_open(tl.target, argv, NULL, NULL, NULL, &h);
	if (!res->exec_err) {
		res->exec_run = tnfctl_continue(h, &evt, NULL);
		if (!res->exec_run && evt != TNFCTL_EVENT_EXIT)
			res->exec_run = -1;
		tnfctl_close(h, TNFCTL_TARG_KILL);
	}
	h = NULL;
	res->pid_err = tnfctl_pid_open(other, &h);
	if (!res->pid_err) {
		tnfctl_trace_attrs_t a;

		res->pid_run = tnfctl_trace_attrs_get(h, &a);
		tnfctl_close(h, TNFCTL_TARG_RESUME);
	}
	res->watch_err = tnfctl_watch_open(other, 0, &w);
	if (!res->watch_err)
		tnfctl_watch_close(w);
	res->leftovers = other_children();
	_exit(0);
}

static const char *cap_name(int cap)
{
	switch (cap) {
	case CAP_SYS_PTRACE:
		return "CAP_SYS_PTRACE";
	case CAP_BPF:
		return "CAP_BPF";
	case CAP_PERFMON:
		return "CAP_PERFMON";
	case CAP_SYS_ADMIN:
		return "CAP_SYS_ADMIN";
	case CAP_DAC_OVERRIDE:
		return "CAP_DAC_OVERRIDE";
	case CAP_MAP_FILES:
		return "CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE";
	default:
		return "?";
	}
}

static int ok_err(int err)
{
	return err == TNFCTL_ERR_NONE || err == TNFCTL_ERR_ACCES;
}

/* A kernel without what the watch needs says so, whatever the capabilities. */
static int ok_watch_err(int err)
{
	return ok_err(err) || (err == TNFCTL_ERR_KERNEL && !tl_watch_supported());
}

static void test_effective_caps_dropped(void **state)
{
	static const int caps[] = {CAP_SYS_PTRACE, CAP_BPF,	     CAP_PERFMON,
				   CAP_SYS_ADMIN,  CAP_DAC_OVERRIDE, CAP_MAP_FILES};
	int i, r, n = cap_rounds(), bad = 0, tested = 0, st;
	struct cap_result *res;
	struct tl_proc *po;
	pid_t pid;

	(void)state;
	tl_require_root();
	po = tl_start_target(tl.target, 1);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(res != MAP_FAILED);
	for (r = 0; r < n; r++)
		for (i = 0; i < (int)(sizeof(caps) / sizeof(caps[0])); i++) {
			memset(res, 0, sizeof(*res));
			res->exec_err = res->pid_err = res->watch_err = -1;
			fflush(stdout);
			pid = fork();
			assert_true(pid >= 0);
			if (pid == 0)
				cap_child(caps[i], po->pid, res);
			tl_track_pid(pid);
			st = tl_reap(pid);
			if (!WIFEXITED(st))
				fail_msg("the controller without %s ended with status 0x%x",
					 cap_name(caps[i]), st);
			if (!res->dropped) {
				print_message("SKIP: cannot drop %s from the effective set\n",
					      cap_name(caps[i]));
				continue;
			}
			tested++;
			if (!r)
				print_message(
					"# without %s (effective): exec_open %s, pid_open %s, "
					"watch_open %s\n",
					cap_name(caps[i]), tl_err_name(res->exec_err),
					tl_err_name(res->pid_err), tl_err_name(res->watch_err));
			if (!ok_err(res->exec_err) || !ok_err(res->pid_err) ||
			    !ok_watch_err(res->watch_err) || res->exec_run || res->pid_run ||
			    res->leftovers) {
				print_error("BUG: round %d without %s: exec_open %s (then %s), "
					    "pid_open %s (then %s), watch_open %s, %d child(ren) "
					    "left\n",
					    r, cap_name(caps[i]), tl_err_name(res->exec_err),
					    tl_err_name(res->exec_run), tl_err_name(res->pid_err),
					    tl_err_name(res->pid_run), tl_err_name(res->watch_err),
					    res->leftovers);
				bad++;
			}
			/* the pid_open'd process was left running, untraced */
			tl_send(po, "ping");
			tl_expect(po, "pong");
			assert_int_equal(tl_tracer_pid(po->pid), 0);
			tl_assert_running(po->pid, "after the open without a capability");
		}
	munmap(res, sizeof(*res));
	print_message("# %d rounds of %zu capabilities, %d opens without one, %d bad\n", n,
		      sizeof(caps) / sizeof(caps[0]), tested, bad);
	tl_send(po, "exit 0");
	tl_reap(po->pid);
	if (bad)
		fail_msg("%d opens gave something else than NONE or ACCES (BUG lines above)", bad);
	/* no capability could be dropped (none held): nothing was tested */
	if (!tested) {
		print_message("SKIP: none of the capabilities is in the effective set\n");
		skip();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_effective_caps_dropped),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
