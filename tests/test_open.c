// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnfctl_exec_open and tnfctl_pid_open: where they leave the target and
 * every error code they document.
 */
#include <dirent.h>
#include <elf.h>
#include <sys/ptrace.h>
#include "testlib.h"

/* ---- exec_open ----------------------------------------------------- */

/* exec_open stops before any constructor, with every thread stopped. */
static void test_exec_open_stops_before_constructors(void **state)
{
	struct pollfd pfd;
	tnfctl_handle_t *h = NULL;
	char fdnum[16], line[64];
	char *argv[] = {tl.ctor, NULL};
	int fds[2], n;
	pid_t pid;

	(void)state;
	tl_require_root();
	if (pipe(fds)) /* no O_CLOEXEC: the target inherits fds[1] */
		fail_msg("pipe: %s", strerror(errno));
	tl_set_cloexec(fds[0], 1);
	/* envp NULL inherits our environment: put TL_CTOR_FD in it */
	snprintf(fdnum, sizeof(fdnum), "%d", fds[1]);
	setenv("TL_CTOR_FD", fdnum, 1);
	setenv("TL_CTOR_STATUS", "5", 1);
	n = tnfctl_exec_open(tl.ctor, argv, NULL, NULL, NULL, &h);
	unsetenv("TL_CTOR_FD");
	unsetenv("TL_CTOR_STATUS");
	close(fds[1]);
	tl_assert_err(n, TNFCTL_ERR_NONE);
	tl_track_handle(h);
	pid = tl_targ_pid(h);
	assert_true(pid > 0);
	tl_track_pid(pid);

	tl_assert_all_stopped(pid, "after exec_open");
	if (!tl_maps_has(pid, "libtnfprobe.so.1"))
		fail_msg("libtnfprobe.so.1 is not mapped in the exec_open'd target");
	if (getpgid(pid) != pid)
		fail_msg("exec_open'd target is in process group %d, expected its own (%d)",
			 (int)getpgid(pid), (int)pid);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 0) > 0) {
		n = read(fds[0], line, sizeof(line) - 1);
		line[n > 0 ? n : 0] = '\0';
		fail_msg("user code ran before exec_open returned: \"%s\"", line);
	}

	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	{
		tnfctl_event_info_t info;

		tl_info(h, &info);
		assert_int_equal(info.exit_status, 5);
	}
	if (poll(&pfd, 1, tl.timeout_ms) <= 0)
		fail_msg("the target never ran its constructor");
	n = read(fds[0], line, sizeof(line) - 1);
	line[n > 0 ? n : 0] = '\0';
	assert_string_equal(line, "ctor\nmain\n");
	tl_close(h, TNFCTL_TARG_DEFAULT);
	close(fds[0]);
}

/* exec_open of a multi-threaded program: its one thread is stopped, fds inherited. */
static void test_exec_open_target_runs_after_continue(void **state)
{
	struct tl_proc *p = tl_proc_new();
	tnfctl_handle_t *h;
	tnfctl_event_info_t info;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.threads_prog, NULL, &h), TNFCTL_ERR_NONE);
	assert_int_equal(tl_nr_threads(p->pid), 1);
	tl_assert_all_stopped(p->pid, "after exec_open");
	tl_expect_silence(p, "the target must not have run main()");
	tl_send(p, "exit 17");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_expect(p, "ready");
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 17);
	assert_int_equal(info.pid, p->pid);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* A name without '/' is searched on $PATH. */
static void test_exec_open_path_search(void **state)
{
	char *argv[] = {"true", NULL};
	tnfctl_handle_t *h = NULL;
	tnfctl_event_info_t info;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_exec_open("true", argv, NULL, NULL, NULL, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_track_pid(tl_targ_pid(h));
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 0);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static void test_exec_open_not_found(void **state)
{
	char *argv1[] = {"/nonexistent/tnfctl-test-prog", NULL};
	char *argv2[] = {"tnfctl-test-no-such-program", NULL};
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_exec_open(argv1[0], argv1, NULL, NULL, NULL, &h),
		      TNFCTL_ERR_FILENOTFOUND);
	tl_assert_err(tnfctl_exec_open(argv2[0], argv2, NULL, NULL, NULL, &h),
		      TNFCTL_ERR_FILENOTFOUND);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
}

static void test_exec_open_not_executable(void **state)
{
	char path[] = "/tmp/tnfctl-test-noexec-XXXXXX";
	char *argv[] = {path, NULL};
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err;
	int fd;

	(void)state;
	tl_require_root();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	tl_write_all(fd, "#!/bin/sh\nexit 0\n", 17);
	fchmod(fd, 0644);
	close(fd);
	err = tnfctl_exec_open(path, argv, NULL, NULL, NULL, &h);
	unlink(path);
	tl_assert_err(err, TNFCTL_ERR_ACCES);
}

static void test_exec_open_static(void **state)
{
	char *argv[] = {tl.static_prog, NULL};
	tnfctl_handle_t *h = NULL;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_exec_open(tl.static_prog, argv, NULL, NULL, NULL, &h),
		      TNFCTL_ERR_NOTDYNAMIC);
}

/* envp used verbatim: without LD_PRELOAD there is no libtnfprobe. */
static void test_exec_open_envp_without_libtnfprobe(void **state)
{
	struct tl_proc *p = tl_proc_new();
	char *envp[] = {"PATH=/usr/bin:/bin", "TL_MARK=1", NULL};
	tnfctl_handle_t *h = NULL;

	(void)state;
	tl_require_root();
	tl_assert_err(tl_exec_open_target(p, tl.target, envp, &h), TNFCTL_ERR_NOLIBTNFPROBE);
	/* the child is killed: the teardown requires the subtree to end */
}

/* envp with LD_PRELOAD is used verbatim too, and works. */
static void test_exec_open_envp_with_libtnfprobe(void **state)
{
	struct tl_proc *p = tl_proc_new();
	char pre[PATH_MAX + 16];
	char *envp[] = {"PATH=/usr/bin:/bin", pre, "TL_MARK=1", NULL};
	tnfctl_handle_t *h = NULL;
	char path[64], env[4096];
	int n, i, found = 0;

	(void)state;
	tl_require_root();
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", tl.probe);
	tl_assert_err(tl_exec_open_target(p, tl.target, envp, &h), TNFCTL_ERR_NONE);
	snprintf(path, sizeof(path), "/proc/%d/environ", p->pid);
	n = tl_read_file(path, env, sizeof(env));
	for (i = 0; i < n; i += strlen(env + i) + 1)
		found += !strcmp(env + i, "TL_MARK=1");
	assert_int_equal(found, 1);
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/* Copies @src to a temp dir with its DT_NEEDED "libc.so.6" renamed to a missing library. */
static int make_missing_needed(const char *src, char *dir, char *out, size_t size)
{
	static char img[4 << 20];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh;
	int fd, n, i, patched = 0;

	n = tl_read_file(src, img, sizeof(img));
	if (n < (int)sizeof(*eh) || memcmp(img, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		const char *name = img + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name;
		char *p, *end;

		if (sh[i].sh_type != SHT_STRTAB || strcmp(name, ".dynstr"))
			continue;
		p = img + sh[i].sh_offset;
		end = p + sh[i].sh_size;
		for (; p < end; p += strlen(p) + 1) {
			if (!strcmp(p, "libc.so.6")) {
				memcpy(p, "libQ.so.6", 9);
				patched++;
			}
		}
	}
	if (!patched || !mkdtemp(dir))
		return -1;
	snprintf(out, size, "%s/prog", dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return -1;
	if (tl_write_all(fd, img, n)) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The program dies in ld.so before the sync point (missing DT_NEEDED). */
static void test_exec_open_missing_library(void **state)
{
	char dir[] = "/tmp/tnfctl-test-needed-XXXXXX";
	char prog[PATH_MAX];
	char *argv[] = {prog, NULL};
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err;

	(void)state;
	tl_require_root();
	if (make_missing_needed(tl.target, dir, prog, sizeof(prog)))
		fail_msg("could not make a copy of %s with a missing DT_NEEDED", tl.target);
	err = tnfctl_exec_open(prog, argv, NULL, NULL, NULL, &h);
	unlink(prog);
	rmdir(dir);
	tl_assert_err(err, TNFCTL_ERR_ACCES);
}

static void test_exec_open_badarg(void **state)
{
	char *argv[] = {"true", NULL};
	tnfctl_handle_t *h = NULL;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_exec_open(NULL, argv, NULL, NULL, NULL, &h), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_exec_open("true", NULL, NULL, NULL, NULL, &h), TNFCTL_ERR_BADARG);
	tl_assert_err(tnfctl_exec_open("true", argv, NULL, NULL, NULL, NULL), TNFCTL_ERR_BADARG);
}

/* ld_preload adds libraries after libtnfprobe; libtnfprobe_path picks its directory. */
static void test_exec_open_ld_preload_and_probe_path(void **state)
{
	char *argv[] = {"true", NULL};
	tnfctl_handle_t *h = NULL;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_exec_open("true", argv, NULL, "libz.so.1", tl.bdir, &h),
		      TNFCTL_ERR_NONE);
	tl_track_handle(h);
	pid = tl_targ_pid(h);
	tl_track_pid(pid);
	tl_assert_all_stopped(pid, "after exec_open");
	if (!tl_maps_has(pid, "libz.so.1"))
		fail_msg("ld_preload \"libz.so.1\" is not mapped in the target");
	if (!tl_maps_has(pid, tl.probe))
		fail_msg("%s is not mapped in the target", tl.probe);
	tl_close(h, TNFCTL_TARG_KILL);

	h = NULL;
	tl_assert_err(tnfctl_exec_open("true", argv, NULL, NULL, "/nonexistent-tnfctl-dir", &h),
		      TNFCTL_ERR_NOLIBTNFPROBE);
}

/*
 * envp NULL: LD_PRELOAD becomes "[old:]<dir>/libtnfprobe.so.1[:ld_preload]",
 * colon-separated, so a tool that removes its own entry by colon-separated
 * entry (valgrind does, at exec) leaves ours alone.
 */
static void test_exec_open_ld_preload_composition(void **state)
{
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16], path[64], env[16384], real[PATH_MAX];
	char *argv[] = {tl.target, cfd, rfd, NULL};
	char *words[8], *save = NULL, *w, *val = NULL;
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err;
	int n, i, nw = 0;

	(void)state;
	tl_require_root();
	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	tl_set_cloexec(p->t_cmd_r, 0);
	tl_set_cloexec(p->t_reply_w, 0);
	setenv("LD_PRELOAD", "libz.so.1", 1);
	err = tnfctl_exec_open(tl.target, argv, NULL, "libm.so.6", NULL, &h);
	unsetenv("LD_PRELOAD");
	tl_proc_handed_over(p);
	tl_assert_err(err, TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_proc_set_pid(p, tl_targ_pid(h));

	snprintf(path, sizeof(path), "/proc/%d/environ", p->pid);
	n = tl_read_file(path, env, sizeof(env));
	for (i = 0; i < n; i += strlen(env + i) + 1)
		if (!strncmp(env + i, "LD_PRELOAD=", 11))
			val = env + i + 11;
	if (!val)
		fail_msg("the exec_open'd target has no LD_PRELOAD");
	print_message("LD_PRELOAD=%s\n", val);
	for (w = strtok_r(val, ":", &save); w && nw < 8; w = strtok_r(NULL, ":", &save))
		words[nw++] = w;
	if (nw != 3)
		fail_msg("LD_PRELOAD has %d entries, expected 3 (old, libtnfprobe, ld_preload)",
			 nw);
	assert_string_equal(words[0], "libz.so.1");
	if (!realpath(words[1], real) || strcmp(real, tl.probe))
		fail_msg("LD_PRELOAD entry \"%s\" is not %s", words[1], tl.probe);
	assert_string_equal(words[2], "libm.so.6");
	tl_send(p, "exit 0");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

/*
 * Runs tl_ctl as uid 65534 (@mode "unpriv": no privilege; "capped": only
 * CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE and CAP_CHECKPOINT_RESTORE) on @what; returns the error code
 * it reports, 0 once every open worked (tl_ctl is then killed: a
 * controller death).
 */
static int capped_open(const char *mode, char *const what[])
{
	char rfd[16];
	char *argv[16] = {tl.ctl, tl.libctl, rfd, (char *)mode};
	struct tl_proc *rep = tl_proc_new();
	int keep[2], i, code = -1;
	const char *l;
	char **env;
	pid_t pid;

	for (i = 0; what[i] && i < 10; i++)
		argv[4 + i] = what[i];
	argv[4 + i] = NULL;
	snprintf(rfd, sizeof(rfd), "%d", rep->t_reply_w);
	keep[0] = rep->t_reply_w;
	keep[1] = -1;
	env = tl_env_build(NULL);
	pid = tl_spawn(argv, env, -1, keep);
	free(env);
	tl_proc_handed_over(rep);
	rep->pid = pid;
	while ((l = tl_read_line(rep, tl.timeout_ms)) && !strncmp(l, "opened ", 7))
		;
	if (!l)
		fail_msg("tl_ctl %s: no answer in %d ms", mode, tl.timeout_ms);
	if (!strcmp(l, "stopped")) {
		kill(pid, SIGKILL);
		tl_reap(pid);
		return 0;
	}
	if (strncmp(l, "error open ", 11))
		fail_msg("tl_ctl %s: \"%s\"", mode, l);
	code = atoi(l + 11);
	tl_reap(pid);
	return code;
}

static int unprivileged_open(char *const what[])
{
	return capped_open("unpriv", what);
}

/* Without BPF/ptrace privileges every open fails with ACCES. */
static void test_open_without_privileges_acces(void **state)
{
	char pid[16];
	char *exec_what[] = {"e", "/bin/true", "x", "y", NULL};
	char *pid_what[] = {"p", pid, NULL};
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	snprintf(pid, sizeof(pid), "%d", p->pid);
	tl_assert_err(unprivileged_open(exec_what), TNFCTL_ERR_ACCES);
	tl_assert_err(unprivileged_open(pid_what), TNFCTL_ERR_ACCES);
	tl_assert_running(p->pid, "target after an unprivileged pid_open");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

/*
 * A caller that is not root but holds the documented capabilities (file
 * capabilities, or kept across setuid) opens: the
 * engine is exec'd, and an exec drops such a caller's capabilities unless
 * the library carries them (ambient), so this failed with ACCES when it
 * did not.
 */
static void test_open_with_capabilities_only(void **state)
{
	char *exec_what[] = {"e", "/bin/true", "x", "y", NULL};

	(void)state;
	tl_require_root();
	tl_assert_err(capped_open("capped", exec_what), TNFCTL_ERR_NONE);
}

/* ---- pid_open ------------------------------------------------------ */

static void test_pid_open_stops_every_thread(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;
	char comm[64];
	long tracer;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	h = tl_pid_open(p->pid);
	assert_int_equal(tl_nr_threads(p->pid), 6);
	tl_assert_all_stopped(p->pid, "after pid_open");
	assert_int_equal(tl_targ_pid(h), p->pid);
	tracer = tl_tracer_pid(p->pid);
	assert_true(tracer > 0);
	tl_comm(tracer, comm, sizeof(comm));
	assert_string_equal(comm, "tnfctl-engine");
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "after close RESUME");
}

/* A thread id is not a process id, and a kernel thread cannot be traced. */
static void test_pid_open_thread_id_and_kthread(void **state)
{
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;
	char path[64], line[128];
	struct dirent *de;
	struct tl_proc *p;
	pid_t tid = 0;
	FILE *f;
	DIR *d;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	snprintf(path, sizeof(path), "/proc/%d/task", p->pid);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (atoi(de->d_name) > 0 && atoi(de->d_name) != p->pid)
			tid = atoi(de->d_name);
	closedir(d);
	assert_true(tid > 0);
	tl_assert_err(tnfctl_pid_open(tid, &h), TNFCTL_ERR_NOPROCESS);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
	tl_assert_running(p->pid, "after pid_open of one of its threads");

	/* kthreadd is pid 2 where the kernel says so */
	f = fopen("/proc/2/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strcmp(line, "Kthread:\t1\n")) {
			tl_assert_err(tnfctl_pid_open(2, &h), TNFCTL_ERR_ACCES);
			assert_ptr_equal(h, (tnfctl_handle_t *)&h);
		}
	if (f)
		fclose(f);
}

/* An empty $PATH component is the current directory, as for execvp. */
static void test_exec_open_empty_path_component(void **state)
{
	char *argv[] = {"tl_target", NULL};
	char cwd[PATH_MAX], dir[PATH_MAX], *old, *saved = NULL;
	tnfctl_handle_t *h = NULL;
	tnfctl_errcode_t err;

	(void)state;
	tl_require_root();
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(dir, sizeof(dir), "%s", tl.target);
	*strrchr(dir, '/') = '\0';
	old = getenv("PATH");
	if (old)
		saved = strdup(old);
	setenv("PATH", "/nonexistent-tnfctl-dir:", 1);
	assert_int_equal(chdir(dir), 0);
	err = tnfctl_exec_open("tl_target", argv, NULL, NULL, NULL, &h);
	assert_int_equal(chdir(cwd), 0);
	if (saved)
		setenv("PATH", saved, 1);
	else
		unsetenv("PATH");
	free(saved);
	tl_assert_err(err, TNFCTL_ERR_NONE);
	tl_close(h, TNFCTL_TARG_KILL);
}

static void test_pid_open_self_badarg(void **state)
{
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	tl_assert_err(tnfctl_pid_open(getpid(), &h), TNFCTL_ERR_BADARG);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
	p = tl_start_target(tl.target, 1);
	tl_assert_err(tnfctl_pid_open(p->pid, NULL), TNFCTL_ERR_BADARG);
	tl_assert_running(p->pid, "after pid_open with NULL retval");
}

static void test_pid_open_no_such_process(void **state)
{
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;
	pid_t pid;

	(void)state;
	tl_require_root();
	pid = fork();
	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(tl_waitpid_timeout(pid, NULL, 0, tl.timeout_ms), pid);
	tl_assert_err(tnfctl_pid_open(pid, &h), TNFCTL_ERR_NOPROCESS);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
}

/* A second tracer (a child of the test that PTRACE_SEIZEs the target) gives BUSY. */
static void test_pid_open_traced_by_other_busy(void **state)
{
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;
	struct tl_proc *p;
	int sync[2], hold[2];
	char c = 0;
	pid_t seizer;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	if (pipe2(sync, O_CLOEXEC) || pipe2(hold, O_CLOEXEC))
		fail_msg("pipe");
	seizer = fork();
	if (seizer == 0) {
		char ok;

		close(sync[0]);
		close(hold[1]);
		ok = ptrace(PTRACE_SEIZE, p->pid, 0, 0) == 0 ? 'y' : 'n';

		if (write(sync[1], &ok, 1) != 1)
			_exit(1);
		/* hold the target until the test closes the pipe or kills us */
		while (read(hold[0], &ok, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	assert_true(seizer > 0);
	tl_track_pid(seizer);
	close(sync[1]);
	close(hold[0]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);
	assert_int_equal(c, 'y');
	assert_int_equal(tl_tracer_pid(p->pid), seizer);

	tl_assert_err(tnfctl_pid_open(p->pid, &h), TNFCTL_ERR_BUSY);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
	assert_int_equal(tl_tracer_pid(p->pid), seizer);

	close(hold[1]);
	tl_reap(seizer);
	tl_assert_running(p->pid, "after the other tracer left");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

static void test_pid_open_twice_busy(void **state)
{
	tnfctl_handle_t *h, *h2 = (tnfctl_handle_t *)&h2;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.target, 1);
	h = tl_pid_open(p->pid);
	tl_assert_err(tnfctl_pid_open(p->pid, &h2), TNFCTL_ERR_BUSY);
	assert_ptr_equal(h2, (tnfctl_handle_t *)&h2);
	/* the first handle still works */
	tl_assert_all_stopped(p->pid, "after the failed second pid_open");
	tl_send(p, "exit 3");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

static void test_pid_open_static_notdynamic(void **state)
{
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.static_prog, 1);
	tl_assert_err(tnfctl_pid_open(p->pid, &h), TNFCTL_ERR_NOTDYNAMIC);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
	tl_assert_running(p->pid, "static target after a refused pid_open");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

static void test_pid_open_without_libtnfprobe(void **state)
{
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 0);
	tl_assert_err(tnfctl_pid_open(p->pid, &h), TNFCTL_ERR_NOLIBTNFPROBE);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
	tl_assert_running(p->pid, "target without libtnfprobe after pid_open");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

/* A job-control stopped process is attached and held by the handle. */
static void test_pid_open_job_stopped_target(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;
	int st = 0;

	(void)state;
	tl_require_root();
	p = tl_start_target(tl.threads_prog, 1);
	kill(p->pid, SIGSTOP);
	assert_int_equal(tl_waitpid_timeout(p->pid, &st, WUNTRACED, tl.timeout_ms), p->pid);
	assert_true(WIFSTOPPED(st));
	tl_assert_job_stopped(p->pid, "after SIGSTOP");
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "after pid_open of a job-control stopped process");
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_assert_running(p->pid, "after close RESUME");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

/*
 * A process that has exited and is not yet reaped (a zombie: /proc and
 * kill(pid, 0) still answer for it) is no process to open: NOPROCESS, with
 * and without NOPROBES.  (tnfctl-follow's pid_open after an EXEC meets one
 * when the tree's SIGTERM kills the process between close and open; a
 * handle on it would wait for events forever.)
 */
static void test_pid_open_zombie_noprocess(void **state)
{
	tnfctl_handle_t *h = (tnfctl_handle_t *)&h;
	siginfo_t si;
	pid_t pid;

	(void)state;
	tl_require_root();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	tl_track_pid(pid);
	memset(&si, 0, sizeof(si));
	/* WNOWAIT: it stays a zombie. */
	assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_pid, pid);
	tl_assert_err(tnfctl_pid_open(pid, &h), TNFCTL_ERR_NOPROCESS);
	tl_assert_err(tnfctl_pid_open_flags(pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NOPROCESS);
	assert_ptr_equal(h, (tnfctl_handle_t *)&h);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/*
 * tl_target with libtnfprobe.so.1 preloaded, stopped by libtl_audit.so in
 * ld.so's start-up before its first RT_ADD: r_map is set and every link map
 * RT_CONSISTENT, but nothing is loaded yet.
 */
static struct tl_proc *start_in_rtld_startup(void)
{
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16], pre[PATH_MAX + 16], audit[PATH_MAX + 64];
	char *argv[] = {tl.target, cfd, rfd, NULL};
	const char *extra[] = {pre, audit, NULL};
	int keep[3], st = 0;
	char **env;
	pid_t pid;

	if (tl_env_int("SANITIZE", 0) == 1) {
		/* ASan's runtime must be the first object loaded; the audit module is */
		print_message("skipped: the target is built with ASan, which cannot start "
			      "under LD_AUDIT\n");
		skip();
	}
	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", tl.probe);
	snprintf(audit, sizeof(audit), "LD_AUDIT=%s/tests/solibs/libtl_audit.so", tl.bdir);
	keep[0] = p->t_cmd_r;
	keep[1] = p->t_reply_w;
	keep[2] = -1;
	env = tl_env_build(extra);
	pid = tl_spawn(argv, env, -1, keep);
	free(env);
	tl_proc_handed_over(p);
	tl_proc_set_pid(p, pid);
	assert_int_equal(tl_waitpid_timeout(pid, &st, WUNTRACED, tl.timeout_ms), pid);
	if (!WIFSTOPPED(st))
		fail_msg("the audited target did not stop in start-up: wait status 0x%x", st);
	return p;
}

/*
 * pid_open of a process in ld.so's start-up (just exec'd, as a pid_open
 * racing an exec can find it) runs it to the rtld sync point: its
 * LD_PRELOAD libtnfprobe.so.1 is about to be loaded, not missing.
 */
static void test_pid_open_in_rtld_startup(void **state)
{
	struct tl_proc *p;
	tnfctl_handle_t *h;

	(void)state;
	tl_require_root();
	p = start_in_rtld_startup();
	h = tl_pid_open(p->pid);
	tl_assert_all_stopped(p->pid, "after pid_open in rtld start-up");
	tl_close(h, TNFCTL_TARG_RESUME);
	tl_expect(p, "ready");
	tl_send(p, "ping");
	tl_expect(p, "pong");
}

/*
 * The same with NOPROBES: the open ends at once, and rtld's start-up
 * RT_CONSISTENT is no DLOPEN; the first event is the exit.
 */
static void test_pid_open_noprobes_in_rtld_startup(void **state)
{
	tnfctl_event_info_t info;
	tnfctl_handle_t *h;
	struct tl_proc *p;

	(void)state;
	tl_require_root();
	p = start_in_rtld_startup();
	tl_assert_err(tnfctl_pid_open_flags(p->pid, TNFCTL_OPEN_NOPROBES, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	tl_send(p, "exit 3");
	tl_expect_event(h, NULL, TNFCTL_EVENT_EXIT);
	tl_info(h, &info);
	assert_int_equal(info.exit_status, 3);
	tl_close(h, TNFCTL_TARG_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_exec_open_stops_before_constructors),
		TL_TEST(test_exec_open_target_runs_after_continue),
		TL_TEST(test_exec_open_path_search),
		TL_TEST(test_exec_open_not_found),
		TL_TEST(test_exec_open_not_executable),
		TL_TEST(test_exec_open_static),
		TL_TEST(test_exec_open_envp_without_libtnfprobe),
		TL_TEST(test_exec_open_envp_with_libtnfprobe),
		TL_TEST(test_exec_open_missing_library),
		TL_TEST(test_exec_open_badarg),
		TL_TEST(test_exec_open_ld_preload_and_probe_path),
		TL_TEST(test_exec_open_ld_preload_composition),
		TL_TEST(test_open_without_privileges_acces),
		TL_TEST(test_open_with_capabilities_only),
		TL_TEST(test_pid_open_stops_every_thread),
		TL_TEST(test_pid_open_self_badarg),
		TL_TEST(test_pid_open_thread_id_and_kthread),
		TL_TEST(test_exec_open_empty_path_component),
		TL_TEST(test_pid_open_no_such_process),
		TL_TEST(test_pid_open_traced_by_other_busy),
		TL_TEST(test_pid_open_twice_busy),
		TL_TEST(test_pid_open_static_notdynamic),
		TL_TEST(test_pid_open_without_libtnfprobe),
		TL_TEST(test_pid_open_job_stopped_target),
		TL_TEST(test_pid_open_zombie_noprocess),
		TL_TEST(test_pid_open_in_rtld_startup),
		TL_TEST(test_pid_open_noprobes_in_rtld_startup),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
