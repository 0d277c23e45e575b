// SPDX-License-Identifier: BSD-2-Clause
/*
 * Security (issue 6, item 4), what test_open, test_probes, test_probe_edges
 * and test_watch do not already cover:
 *  - a set-uid target (a copy of tl_target, set-uid to uid 1, in a temp
 *    directory) and a process of another uid: a caller that dropped its
 *    privileges (setresuid 65534 in a forked child) gets ACCES from
 *    exec_open, pid_open and watch_open, both when the helper is started
 *    after the drop and when it was already running (started as root);
 *  - trace files in the shared sticky /tmp: a symlink or a file planted by
 *    another user is refused by buffer_alloc and by prex -o, the victim is
 *    untouched; files created by buffer_alloc, prex and tnftrace are 0600;
 *  - no descriptor of the controller in a target started by prex or by
 *    tnftrace (test_probe_edges checks exec_open);
 *  - a handle receives no event of a process outside its tree while an
 *    unrelated shell loop forks and execs beside it.
 */
#include <grp.h>
#include <stdbool.h>
#include <sys/mman.h>
#include "testlib.h"
#include "probelib.h"

#define OTHER_UID 1 /* daemon: neither root nor the unprivileged caller */
#define NOBODY	  65534

static char sdir[64], suid_prog[PATH_MAX];

static void rm_sdir(void)
{
	if (sdir[0] && getpid() == pl_tmp_owner)
		nftw(sdir, pl_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* A copy of tl_target, set-uid to OTHER_UID, in a directory everyone may enter. */
static void make_suid_copy(void)
{
	char buf[65536];
	int in, out;
	ssize_t n;
	struct stat sb;

	paths();
	if (sdir[0])
		return;
	snprintf(sdir, sizeof(sdir), "/tmp/tl-suid-XXXXXX");
	assert_non_null(mkdtemp(sdir));
	atexit(rm_sdir);
	assert_int_equal(chmod(sdir, 0755), 0);
	snprintf(suid_prog, sizeof(suid_prog), "%s/tl_target_suid", sdir);
	in = open(tl.target, O_RDONLY | O_CLOEXEC);
	out = open(suid_prog, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	assert_int_equal(fchown(out, OTHER_UID, OTHER_UID), 0);
	assert_int_equal(fchmod(out, 04755), 0);
	close(out);
	assert_int_equal(stat(suid_prog, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 04755);
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		_exit(99);
}

/* Effective uid of @pid from /proc/PID/status, -1 if unknown. */
static long euid_of(pid_t pid)
{
	char path[64], buf[4096], *l;
	long r, e;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (tl_read_file(path, buf, sizeof(buf)) <= 0 || !(l = strstr(buf, "\nUid:")))
		return -1;
	if (sscanf(l + 5, "%ld %ld", &r, &e) != 2)
		return -1;
	return e;
}

/* A process running as OTHER_UID (sleep), and the set-uid copy run by nobody. */
static pid_t start_as(uid_t uid, const char *prog, struct tl_proc **pp)
{
	struct tl_proc *p = tl_proc_new();
	char cfd[16], rfd[16];
	char *argv[] = {(char *)prog, cfd, rfd, NULL};
	char **env = tl_env_build(NULL);
	const char *l;
	pid_t pid;

	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	tl_set_cloexec(p->t_cmd_r, 0);
	tl_set_cloexec(p->t_reply_w, 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(99);
		execve(prog, argv, env);
		_exit(127);
	}
	free(env);
	tl_track_pid(pid);
	tl_proc_handed_over(p);
	tl_proc_set_pid(p, pid);
	l = tl_read_line(p, tl.timeout_ms);
	if (!l || strncmp(l, "ready", 5))
		fail_msg("%s as uid %d did not start", prog, (int)uid);
	*pp = p;
	return pid;
}

/*
 * While exec_open runs in the unprivileged child: the highest effective uid
 * a child of ours running the set-uid copy ever had (-1: never seen).
 */
static volatile int watch_stop, watch_euid = -1;

static void *watch_children(void *arg)
{
	pid_t self = getpid();

	(void)arg;
	while (!watch_stop) {
		DIR *d = opendir("/proc");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char path[300], buf[2048], *l;
			int ppid = 0;
			long r, eu;

			if (atoi(e->d_name) <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
			if (tl_read_file(path, buf, sizeof(buf)) <= 0 ||
			    !strstr(buf, "Name:\ttl_target_suid"))
				continue;
			l = strstr(buf, "\nPPid:");
			if (l)
				ppid = atoi(l + 6);
			l = strstr(buf, "\nUid:");
			if (ppid == self && l && sscanf(l + 5, "%ld %ld", &r, &eu) == 2 &&
			    eu > watch_euid)
				watch_euid = (int)eu;
		}
		if (d)
			closedir(d);
		usleep(500);
	}
	return NULL;
}

struct unpriv_result {
	int exec_err, exec_euid, pid_suid_err, pid_other_err, watch_err, watch_suid_err;
};

/*
 * In a forked child: (@helper_first: open a target as root first, so the
 * helper runs with root's credentials) drop to nobody, then try each way in.
 */
static void unprivileged_tries(bool helper_first, pid_t suid_pid, pid_t other_pid,
			       struct unpriv_result *res)
{
	struct unpriv_result *shared;
	int st;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		      0);
	assert_true(shared != MAP_FAILED);
	memset(shared, 0xff, sizeof(*shared));
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = {suid_prog, NULL};
		char *targv[] = {tl.target, NULL};
		tnfctl_handle_t *h0 = NULL, *h = NULL;
		tnfctl_watch_t *w = NULL;

		if (helper_first &&
		    tnfctl_exec_open(tl.target, targv, NULL, NULL, NULL, &h0) != TNFCTL_ERR_NONE)
			_exit(98);
		pthread_t thr;

		drop_to_nobody();
		if (pthread_create(&thr, NULL, watch_children, NULL))
			_exit(97);
		shared->exec_err = tnfctl_exec_open(suid_prog, argv, NULL, NULL, NULL, &h);
		if (shared->exec_err == TNFCTL_ERR_NONE) {
			tnfctl_trace_attrs_t a;

			if (tnfctl_trace_attrs_get(h, &a) == TNFCTL_ERR_NONE &&
			    euid_of(a.targ_pid) > watch_euid)
				watch_euid = (int)euid_of(a.targ_pid);
			tnfctl_close(h, TNFCTL_TARG_KILL);
		}
		watch_stop = 1;
		pthread_join(thr, NULL);
		shared->exec_euid = watch_euid;
		h = NULL;
		shared->pid_suid_err = tnfctl_pid_open(suid_pid, &h);
		if (h)
			tnfctl_close(h, TNFCTL_TARG_RESUME);
		h = NULL;
		shared->pid_other_err = tnfctl_pid_open(other_pid, &h);
		if (h)
			tnfctl_close(h, TNFCTL_TARG_RESUME);
		shared->watch_err = tnfctl_watch_open(other_pid, 0, &w);
		if (!shared->watch_err)
			tnfctl_watch_close(w);
		w = NULL;
		shared->watch_suid_err = tnfctl_watch_open(suid_pid, 0, &w);
		if (!shared->watch_suid_err)
			tnfctl_watch_close(w);
		if (h0)
			tnfctl_close(h0, TNFCTL_TARG_KILL);
		_exit(0);
	}
	tl_track_pid(pid);
	st = tl_reap(pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("the unprivileged child ended with status 0x%x", st);
	*res = *shared;
	munmap(shared, sizeof(*shared));
}

static bool watch_refused(int err)
{
	return err == TNFCTL_ERR_ACCES || (err == TNFCTL_ERR_KERNEL && !tl_watch_supported());
}

static void check_unpriv(const char *how, const struct unpriv_result *r)
{
	int bad = 0;

	print_message("%s: exec_open(set-uid) %s (target euid %d), pid_open(set-uid) %s, "
		      "pid_open(uid %d) %s, watch_open(uid %d) %s, watch_open(set-uid) %s\n",
		      how, tl_err_name(r->exec_err), r->exec_euid, tl_err_name(r->pid_suid_err),
		      OTHER_UID, tl_err_name(r->pid_other_err), OTHER_UID,
		      tl_err_name(r->watch_err), tl_err_name(r->watch_suid_err));
	if (r->exec_err != TNFCTL_ERR_ACCES) {
		print_error("BUG: %s: exec_open of a set-uid (uid %d) program by uid %d gave %s, "
			    "not ACCES; while it ran, the target's effective uid was %d\n",
			    how, OTHER_UID, NOBODY, tl_err_name(r->exec_err), r->exec_euid);
		bad = 1;
	}
	if (r->pid_suid_err != TNFCTL_ERR_ACCES || r->pid_other_err != TNFCTL_ERR_ACCES) {
		print_error("BUG: %s: pid_open by uid %d of a set-uid process / a uid %d process "
			    "gave %s / %s, not ACCES\n",
			    how, NOBODY, OTHER_UID, tl_err_name(r->pid_suid_err),
			    tl_err_name(r->pid_other_err));
		bad = 1;
	}
	/* where the watch cannot run at all, KERNEL refuses as well */
	if (!watch_refused(r->watch_err) || !watch_refused(r->watch_suid_err)) {
		print_error("BUG: %s: watch_open by uid %d of a uid %d process / a set-uid process "
			    "gave %s / %s, not ACCES\n",
			    how, NOBODY, OTHER_UID, tl_err_name(r->watch_err),
			    tl_err_name(r->watch_suid_err));
		bad = 1;
	}
	if (bad)
		fail_msg("%s: see BUG lines above", how);
}

static void setuid_scenario(bool helper_first)
{
	struct unpriv_result r;
	struct tl_proc *ps, *po;
	pid_t suid_pid, other_pid;

	tl_require_root();
	make_suid_copy();
	/* the set-uid copy run by nobody: real uid 65534, effective uid 1 */
	suid_pid = start_as(NOBODY, suid_prog, &ps);
	if (euid_of(suid_pid) != OTHER_UID)
		fail_msg("set-uid copy runs with euid %ld (is /tmp nosuid?)", euid_of(suid_pid));
	other_pid = start_as(OTHER_UID, tl.target, &po);
	unprivileged_tries(helper_first, suid_pid, other_pid, &r);
	check_unpriv(helper_first ? "helper started as root, then privileges dropped"
				  : "privileges dropped before any call",
		     &r);
	/* nothing was left stopped or traced */
	tl_send(ps, "ping");
	tl_expect(ps, "pong");
	tl_send(po, "ping");
	tl_expect(po, "pong");
	assert_int_equal(tl_tracer_pid(suid_pid), 0);
	assert_int_equal(tl_tracer_pid(other_pid), 0);
}

static void test_setuid_target_unprivileged(void **state)
{
	(void)state;
	setuid_scenario(false);
}

/*
 * A process that started the library as root (the helper runs with root's
 * credentials) and then dropped to nobody must get no more than nobody.
 *
 * BUG: (libtnfctl) exec_open does not check that the caller may trace the
 * program it execs: the caller forks the child, the helper (root, with
 * CAP_SYS_PTRACE) seizes it, and the kernel, seeing a capable tracer,
 * honours the set-uid bit.  The program runs with euid 1, stopped and
 * controlled on behalf of uid 65534; exec_open then fails only with
 * NOLIBTNFPROBE because the loader in secure mode drops the LD_PRELOAD
 * path.  Expected: ACCES, the set-uid program never run under the helper.
 */
static void test_setuid_target_helper_started_as_root(void **state)
{
	(void)state;
	setuid_scenario(true);
}

/* ---- trace files in a shared sticky directory ---- */

/* A file in /tmp (sticky, everyone writes) that nobody planted: a symlink or a file. */
static void plant(const char *path, const char *victim)
{
	int st;
	pid_t pid;

	unlink(path);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		drop_to_nobody();
		if (victim)
			_exit(symlink(victim, path) ? 1 : 0);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
		_exit(fd < 0 ? 1 : 0);
	}
	tl_track_pid(pid);
	st = tl_reap(pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void make_victim(char *victim, size_t len)
{
	int fd;

	trace_path(victim, len, "victim");
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "precious\n", 9), 9);
	close(fd);
	assert_int_equal(chmod(tmpdir, 0755), 0); /* the link must lead somewhere nobody can see */
}

static void assert_victim_untouched(const char *victim)
{
	char buf[64];
	struct stat sb;

	assert_int_equal(tl_read_file(victim, buf, sizeof(buf)), 9);
	assert_string_equal(buf, "precious\n");
	assert_int_equal(stat(victim, &sb), 0);
	assert_int_equal(sb.st_uid, 0);
}

static void assert_0600(const char *file)
{
	struct stat sb;

	if (lstat(file, &sb))
		fail_msg("%s: %s", file, strerror(errno));
	assert_true(S_ISREG(sb.st_mode));
	if ((sb.st_mode & 07777) != 0600)
		fail_msg("%s has mode %04o, not 0600", file, sb.st_mode & 07777);
	assert_int_equal(sb.st_uid, getuid());
}

static void test_buffer_alloc_in_sticky_tmp(void **state)
{
	char victim[PATH_MAX], file[128];
	struct tl_proc *p;
	tnfctl_handle_t *h;
	mode_t old = umask(0);

	(void)state;
	tl_require_root();
	make_victim(victim, sizeof(victim));
	h = start(&p);
	snprintf(file, sizeof(file), "/tmp/tl-sec-plant-%d.tnf", (int)getpid());
	plant(file, victim);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_ACCES);
	assert_victim_untouched(victim);
	plant(file, NULL);
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_ACCES);
	{
		struct stat sb;

		assert_int_equal(stat(file, &sb), 0);
		assert_int_equal(sb.st_uid, NOBODY);
		assert_int_equal(sb.st_size, 0);
	}
	unlink(file);
	/* a new one: 0600 whatever the umask */
	tl_assert_err(tnfctl_buffer_alloc(h, file, 256 * 1024), TNFCTL_ERR_NONE);
	assert_0600(file);
	tl_close(h, TNFCTL_TARG_KILL);
	unlink(file);
	umask(old);
}

/* Runs @argv with stdin from @input (a string), stdout+stderr into @out; returns the wait status.
 */
static int run_tool(char *const argv[], const char *input, char *out, size_t len)
{
	char opath[PATH_MAX];
	int in[2], fd, st = 0, n;
	char **env = tl_env_build(NULL);
	pid_t pid;

	paths();
	snprintf(opath, sizeof(opath), "%s/tool-%d.out", tmpdir, getpid());
	fd = open(opath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execve(argv[0], argv, env);
		_exit(127);
	}
	tl_track_pid(pid);
	free(env);
	close(in[0]);
	if (input)
		tl_write_all(in[1], input, strlen(input));
	close(in[1]);
	if (tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms) != pid)
		fail_msg("%s did not end", argv[0]);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(opath);
	return st;
}

static void test_prex_o_in_sticky_tmp(void **state)
{
	char victim[PATH_MAX], file[128], prex[PATH_MAX], out[8192];
	char *argv[] = {prex, "-o", file, tl.demo, NULL};
	mode_t old = umask(0);
	int st;

	(void)state;
	tl_require_root();
	tl_path_of(prex, "prex");
	make_victim(victim, sizeof(victim));
	snprintf(file, sizeof(file), "/tmp/tl-sec-prex-%d.tnf", (int)getpid());
	plant(file, victim);
	st = run_tool(argv, "continue\n", out, sizeof(out));
	print_message("prex -o <planted symlink>: status 0x%x: %s", st, out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	assert_victim_untouched(victim);
	plant(file, NULL);
	st = run_tool(argv, "continue\n", out, sizeof(out));
	print_message("prex -o <file of uid %d>: status 0x%x: %s", NOBODY, st, out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	{
		struct stat sb;

		assert_int_equal(stat(file, &sb), 0);
		assert_int_equal(sb.st_uid, NOBODY);
		assert_int_equal(sb.st_size, 0);
	}
	unlink(file);
	st = run_tool(argv, "continue\n", out, sizeof(out));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("prex -o %s: status 0x%x: %s", file, st, out);
	assert_0600(file);
	unlink(file);
	umask(old);
}

/* @file and the USDT records file the controller names after it (<file>.usdt). */
static void unlink_trace(const char *file)
{
	char usdt[160];

	unlink(file);
	snprintf(usdt, sizeof(usdt), "%s.usdt", file);
	unlink(usdt);
}

static void test_tnftrace_file_mode(void **state)
{
	char file[128], tnftrace[PATH_MAX], out[1 << 15];
	char *argv[] = {tnftrace, "-q", "-o", file, "--", tl.demo, NULL};
	mode_t old = umask(0);
	int st;

	(void)state;
	tl_require_root();
	tl_path_of(tnftrace, "tnftrace");
	snprintf(file, sizeof(file), "/tmp/tl-sec-tnftrace-%d.tnf", (int)getpid());
	unlink(file);
	st = run_tool(argv, NULL, out, sizeof(out));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("tnftrace: status 0x%x: %s", st, out);
	assert_0600(file);
	unlink_trace(file);
	umask(old);
}

/* ---- no descriptor of the controller in a target ---- */

/*
 * The fds of the target behind @p: 0-2, its two pipes, the trace file
 * @trace (its own runtime's) and what the test itself passes on (not
 * close-on-exec here) are expected; anything else is the controller's.
 */
static void assert_no_foreign_fd(struct tl_proc *p, int cfd, int rfd, const char *trace)
{
	char path[64], link[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int bad = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)p->pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		int fd, fl;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd <= 2 || fd == cfd || fd == rfd)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)p->pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		if (trace && !strcmp(link, trace))
			continue;
		fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC))
			continue; /* the test's own, inherited on purpose */
		print_error("target %d fd %d -> %s: the controller's\n", (int)p->pid, fd, link);
		bad++;
	}
	closedir(d);
	if (bad)
		fail_msg("%d controller descriptor(s) in the target", bad);
}

/* `TOOL ARGS... tl_target CFD RFD` with stdin a pipe: the tool's target, ready. */
static pid_t tool_with_target(char **argv, int nargs, struct tl_proc **pp, int *in_w)
{
	struct tl_proc *p = tl_proc_new();
	static char cfd[16], rfd[16];
	char **env = tl_env_build(NULL);
	int in[2], devnull;
	pid_t pid;

	snprintf(cfd, sizeof(cfd), "%d", p->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", p->t_reply_w);
	argv[nargs] = tl.target;
	argv[nargs + 1] = cfd;
	argv[nargs + 2] = rfd;
	argv[nargs + 3] = NULL;
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		tl_set_cloexec(p->t_cmd_r, 0);
		tl_set_cloexec(p->t_reply_w, 0);
		execve(argv[0], argv, env);
		_exit(127);
	}
	tl_track_pid(pid);
	free(env);
	close(in[0]);
	close(devnull);
	*in_w = in[1];
	tl_proc_handed_over(p);
	*pp = p;
	return pid;
}

static void target_ready(struct tl_proc *p)
{
	const char *l = tl_expect(p, "ready ");

	tl_proc_set_pid(p, atoi(l + 6));
}

static void test_no_controller_fd_in_prex_target(void **state)
{
	char prex[PATH_MAX], file[128];
	char *argv[16] = {prex, "-o", file};
	struct tl_proc *p;
	int in_w, st, cfd, rfd;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_path_of(prex, "prex");
	snprintf(file, sizeof(file), "/tmp/tl-sec-fd-prex-%d.tnf", (int)getpid());
	unlink(file);
	pid = tool_with_target(argv, 3, &p, &in_w);
	cfd = atoi(argv[4]);
	rfd = atoi(argv[5]);
	assert_int_equal(tl_write_all(in_w, "enable $all\ncontinue\n", 21), 0);
	target_ready(p);
	assert_no_foreign_fd(p, cfd, rfd, file);
	tl_send(p, "exit 0");
	close(in_w);
	if (tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms) != pid)
		fail_msg("prex did not end");
	assert_true(WIFEXITED(st));
	unlink_trace(file);
}

static void test_no_controller_fd_in_tnftrace_target(void **state)
{
	char tnftrace[PATH_MAX], file[128];
	char *argv[16] = {tnftrace, "-q", "-o", file, "--"};
	struct tl_proc *p;
	int in_w, st, cfd, rfd;
	pid_t pid;

	(void)state;
	tl_require_root();
	tl_path_of(tnftrace, "tnftrace");
	snprintf(file, sizeof(file), "/tmp/tl-sec-fd-tnftrace-%d.tnf", (int)getpid());
	unlink(file);
	pid = tool_with_target(argv, 5, &p, &in_w);
	cfd = atoi(argv[6]);
	rfd = atoi(argv[7]);
	target_ready(p);
	assert_no_foreign_fd(p, cfd, rfd, file);
	tl_send(p, "exit 0");
	close(in_w);
	if (tl_waitpid_timeout(pid, &st, 0, tl.timeout_ms) != pid)
		fail_msg("tnftrace did not end");
	assert_true(WIFEXITED(st));
	unlink_trace(file);
}

/* ---- no event from outside the tree ---- */

static pid_t ppid_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (tl_read_file(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return -1;
	if (sscanf(p + 2, "%*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

static void test_no_event_from_outside_the_tree(void **state)
{
	char *argv[] = {"/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done", NULL};
	/* forks until killed, so it is still there (not a zombie) when checked */
	char *other[] = {"/bin/sh", "-c", "while :; do /bin/true; done", NULL};
	char **env = tl_env_build(NULL);
	tnfctl_handle_t *h, *child;
	tnfctl_event_t evt;
	tnfctl_trace_attrs_t a;
	int forks = 0, foreign = 0, events = 0;
	pid_t root, bystander;

	(void)state;
	tl_require_root();
	bystander = tl_spawn(other, env, -1, NULL);
	free(env);
	tl_assert_err(tnfctl_exec_open(argv[0], argv, NULL, NULL, NULL, &h), TNFCTL_ERR_NONE);
	tl_track_handle(h);
	root = tl_targ_pid(h);
	tl_track_pid(root);
	for (;;) {
		child = NULL;
		tl_assert_err(tnfctl_continue(h, &evt, &child), TNFCTL_ERR_NONE);
		events++;
		if (evt == TNFCTL_EVENT_FORK) {
			pid_t c, pp;

			assert_non_null(child);
			tl_assert_err(tnfctl_trace_attrs_get(child, &a), TNFCTL_ERR_NONE);
			c = a.targ_pid;
			tl_track_pid(c);
			pp = ppid_of(c);
			if (pp != root) {
				print_error("FORK of %d (parent %d), not a child of the root %d\n",
					    (int)c, (int)pp, (int)root);
				foreign++;
			}
			forks++;
			tnfctl_close(child, TNFCTL_TARG_DEFAULT);
		} else if (evt == TNFCTL_EVENT_EXIT || evt == TNFCTL_EVENT_TARGGONE) {
			break;
		}
		if (events > 1000)
			fail_msg("more than 1000 events from a tree of 11 processes");
	}
	tl_close(h, TNFCTL_TARG_DEFAULT);
	print_message("%d events, %d forks, %d foreign; the bystander loop ran beside it\n", events,
		      forks, foreign);
	assert_int_equal(foreign, 0);
	assert_int_equal(forks, 10);
	tl_assert_running(bystander, "the unrelated loop");
	kill(bystander, SIGKILL);
	tl_reap(bystander);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_setuid_target_unprivileged),
		TL_TEST(test_setuid_target_helper_started_as_root),
		TL_TEST(test_buffer_alloc_in_sticky_tmp),
		TL_TEST(test_prex_o_in_sticky_tmp),
		TL_TEST(test_tnftrace_file_mode),
		TL_TEST(test_no_controller_fd_in_prex_target),
		TL_TEST(test_no_controller_fd_in_tnftrace_target),
		TL_TEST(test_no_event_from_outside_the_tree),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
