// SPDX-License-Identifier: BSD-2-Clause
/*
 * vfork and posix_spawn (clone with CLONE_VFORK|CLONE_VM): a FORK event
 * with and without a child handle, and no hang either way.
 */
#include "testlib.h"

static void parse_status_reply(const char *line, const char *word, pid_t *pid, int *status)
{
	char w[32];

	if (sscanf(line, "%31s %d status %d", w, pid, status) != 3 || strcmp(w, word))
		fail_msg("cannot parse reply \"%s\" (expected \"%s <pid> status <s>\")", line,
			 word);
}

static void test_vfork_without_child_handle(void **state)
{
	tnfctl_event_info_t info;
	struct tl_proc *p;
	tnfctl_handle_t *h;
	pid_t cpid, rpid;
	int status;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "vfork 4");
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_info(h, &info);
	cpid = info.child_pid;
	assert_true(cpid > 0);
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	parse_status_reply(tl_expect(p, "vforked"), "vforked", &rpid, &status);
	assert_int_equal(rpid, cpid);
	assert_int_equal(status, 4);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static void test_vfork_with_child_handle(void **state)
{
	tnfctl_handle_t *h, *child = NULL;
	tnfctl_event_info_t info;
	struct tl_proc *p;
	pid_t cpid, rpid;
	int status;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "vfork 4");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	tl_info(h, &info);
	cpid = info.child_pid;
	assert_int_equal(tl_targ_pid(child), cpid);
	tl_assert_all_stopped(cpid, "vfork child at FORK");
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXIT);
	tl_info(child, &info);
	assert_int_equal(info.exit_status, 4);
	tl_close(child, TNFCTL_TARG_DEFAULT);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	parse_status_reply(tl_expect(p, "vforked"), "vforked", &rpid, &status);
	assert_int_equal(rpid, cpid);
	assert_int_equal(status, 4);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* vfork + exec under a child handle: the child's EXEC, then it runs on after close. */
static void test_vfork_exec_with_child_handle(void **state)
{
	tnfctl_handle_t *h, *child = NULL;
	tnfctl_event_info_t info;
	struct tl_proc *p;
	pid_t cpid, rpid;
	int status;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "vfork_exec /bin/true");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	cpid = tl_targ_pid(child);
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXEC);
	tl_info(child, &info);
	assert_string_equal(info.path, "/bin/true");
	tl_close(child, TNFCTL_TARG_DEFAULT);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	parse_status_reply(tl_expect(p, "vforked"), "vforked", &rpid, &status);
	assert_int_equal(rpid, cpid);
	assert_int_equal(status, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static void test_posix_spawn_without_child_handle(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	pid_t cpid, rpid;
	int status;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, NULL, &h), TNFCTL_ERR_NONE);
	tl_send(p, "spawn /bin/true");
	tl_send(p, "exit 2");
	tl_expect_event(h, NULL, TNFCTL_EVENT_FORK);
	tl_info(h, &info);
	cpid = info.child_pid;
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 2);
	tl_expect(p, "ready");
	parse_status_reply(tl_expect(p, "spawned"), "spawned", &rpid, &status);
	assert_int_equal(rpid, cpid);
	assert_int_equal(status, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static void test_posix_spawn_with_child_handle(void **state)
{
	tnfctl_handle_t *h, *child = NULL;
	tnfctl_event_info_t info;
	struct tl_proc *p;
	pid_t cpid, rpid;
	int status;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "spawn /bin/true");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	cpid = tl_targ_pid(child);
	tl_info(h, &info);
	assert_int_equal(info.child_pid, cpid);
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXEC);
	tl_info(child, &info);
	assert_string_equal(info.path, "/bin/true");
	tl_close(child, TNFCTL_TARG_DEFAULT);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	parse_status_reply(tl_expect(p, "spawned"), "spawned", &rpid, &status);
	assert_int_equal(rpid, cpid);
	assert_int_equal(status, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* A posix_spawn child followed through its exec to its exit. */
static void test_posix_spawn_child_followed_to_exit(void **state)
{
	tnfctl_handle_t *h, *child = NULL, *exec_h;
	tnfctl_event_info_t info;
	struct tl_proc *p;
	pid_t cpid;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_send(p, "spawn /bin/true");
	tl_expect_event(h, &child, TNFCTL_EVENT_FORK);
	assert_non_null(child);
	cpid = tl_targ_pid(child);
	tl_expect_event(child, NULL, TNFCTL_EVENT_EXEC);
	tl_close(child, TNFCTL_TARG_SUSPEND);
	exec_h = tl_pid_open(cpid);
	tl_assert_all_stopped(cpid, "spawned /bin/true after pid_open");
	tl_expect_event(exec_h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(exec_h, &info);
	assert_int_equal(info.exit_status, 0);
	tl_close(exec_h, TNFCTL_TARG_DEFAULT);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "spawned");
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_vfork_without_child_handle),
		TL_TEST(test_vfork_with_child_handle),
		TL_TEST(test_vfork_exec_with_child_handle),
		TL_TEST(test_posix_spawn_without_child_handle),
		TL_TEST(test_posix_spawn_with_child_handle),
		TL_TEST(test_posix_spawn_child_followed_to_exit),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
