// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex -f on real process trees: which processes get a trace file (only
 * those with a probe a command selects), what the files weigh, and what
 * quit, quit resume and quit suspend leave behind (every followed process
 * gets the same action).  The trees are shell scripts; a FIFO in the work
 * directory tells the test when the script has started its children.
 */
#include "testlib.h"
#include "probelib.h"

#include "prexlib.h"

/* Trace files named <@trace>.* (the -f files), and their allocated bytes. */
static int follow_files(const char *trace, long long *bytes, bool remove_them)
{
	const char *base = strrchr(trace, '/') + 1;
	struct dirent *de;
	int n = 0;
	DIR *d;

	*bytes = 0;
	d = opendir(tmpdir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[PATH_MAX + 300];
		struct stat st;

		if (strncmp(de->d_name, base, strlen(base)) || de->d_name[strlen(base)] != '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		/*
		 * <trace>.usdt holds USDT records, not a TNF trace file: a
		 * sanitizer build's programs all load libstdc++, whose USDT
		 * probes `enable $all` enables (removed, not counted).
		 */
		if (!strcmp(de->d_name + strlen(base), ".usdt")) {
			if (remove_them)
				unlink(path);
			continue;
		}
		if (!stat(path, &st)) {
			*bytes += (long long)st.st_blocks * 512;
			n++;
		}
		if (remove_them)
			unlink(path);
	}
	closedir(d);
	return n;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, text, strlen(text)), 0);
	close(fd);
}

/*
 * 50 execs of /bin/true (no probe) under `enable $all`: every one is
 * followed, and not one trace file is made, not even the root's.
 */
static void test_probeless_tree_makes_no_file(void **state)
{
	static char err[1 << 16];
	const char *opts[] = {
		"-f", "-o", NULL, "/bin/sh", "-c", "for i in $(seq 50); do /bin/true; done", NULL};
	char trace[PATH_MAX];
	long long bytes;
	struct prex *x;
	int n;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "true50");
	opts[2] = trace;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "enable $all\nlist tracefile\ncontinue\n");
	tl_watchdog_extend(tl.test_timeout_s);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	n = count_str(err, "exec'd /bin/true\n");
	if (n != 50)
		fail_msg("expected 50 followed execs of /bin/true, got %d:\n%s", n, err);
	if (strstr(err, "tracing into"))
		fail_msg("a probe-less process got a trace file:\n%s", err);
	assert_int_equal(access(trace, F_OK), -1);
	n = follow_files(trace, &bytes, true);
	if (n || bytes)
		fail_msg("%d trace files (%lld bytes) for a tree without probes", n, bytes);
	prex_close_fds(x);
}

/*
 * A tree mixing the demo (with probes) and programs without: sh runs
 * /bin/true, the demo (which execs /bin/true itself and forks a child and a
 * grandchild), then a pipeline.  Only the demo's image gets a file, and it
 * holds the demo's whole trace, its forked children's events included.
 */
static void test_mixed_tree_traces_only_the_demo(void **state)
{
	static char err[1 << 16], out[1 << 16], dumped[1 << 17];
	const char *opts[] = {"-f", "-o", NULL, "/bin/sh", "-c", NULL, NULL};
	char trace[PATH_MAX], script[2 * PATH_MAX], file[PATH_MAX + 32];
	long long bytes;
	struct prex *x;
	const char *l;
	int demo_pid;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "mixed");
	opts[2] = trace;
	snprintf(script, sizeof(script), "/bin/true; %s; /bin/true; echo x | cat >/dev/null",
		 tl.demo);
	opts[5] = script;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "enable $all\ncontinue\n");
	tl_watchdog_extend(tl.test_timeout_s);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	rd_rest(&x->out, out, sizeof(out));
	l = strstr(out, "tnfdemo: pid ");
	if (!l)
		fail_msg("the demo did not run:\n%s\n%s", out, err);
	demo_pid = atoi(l + 13);
	snprintf(file, sizeof(file), "%s.%d", trace, demo_pid);
	/* one file: the demo's; its exec'd /bin/true and the rest made none */
	if (count_str(err, "tracing into") != 1 || !strstr(err, file))
		fail_msg("expected one trace file, %s:\n%s", file, err);
	assert_int_equal(count_str(err, "exec'd /bin/true\n"), 3);
	assert_int_equal(access(trace, F_OK), -1);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	assert_int_equal(count_events(dumped, "demo_start", NULL), 1);
	assert_int_equal(count_events(dumped, "demo_child", NULL), 2);
	assert_int_equal(count_events(dumped, "plugin_loaded", NULL), 1);
	assert_int_equal(count_events(dumped, "demo_exit", "status: 0"), 1);
	assert_int_equal(follow_files(trace, &bytes, true), 1);
	assert_true(bytes >= 4 * 1024 * 1024); /* the one file is the -s size */
	prex_close_fds(x);
}

/*
 * The demo as the root: its file (the -o name) is made by `enable`, at the
 * prompt; its exec of /bin/true makes none.
 */
static void test_demo_root_file_made_by_enable(void **state)
{
	static char err[1 << 16], out[1 << 16], dumped[1 << 17];
	const char *opts[] = {"-f", "-o", NULL, NULL, NULL};
	char trace[PATH_MAX];
	long long bytes;
	struct prex *x;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "demoroot");
	opts[2] = trace;
	opts[3] = tl.demo;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "list tracefile\nenable name=/^demo_/\nlist tracefile\ncontinue\n");
	tl_watchdog_extend(tl.test_timeout_s);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	rd_rest(&x->out, out, sizeof(out));
	/* none before the command selected a probe, the -o file after */
	if (!strstr(out, "Trace file: (none)\n") || !strstr(out, "Trace file: /"))
		fail_msg("list tracefile before and after enable:\n%s", out);
	assert_int_equal(count_str(err, "tracing into"), 1);
	assert_int_equal(count_str(err, "exec'd /bin/true\n"), 1);
	assert_int_equal(dump(trace, dumped, sizeof(dumped)), 0);
	assert_int_equal(count_events(dumped, "demo_start", NULL), 1);
	assert_int_equal(count_events(dumped, "demo_exit", NULL), 1);
	assert_int_equal(count_events(dumped, "plugin_loaded", NULL), 0); /* not selected */
	assert_int_equal(follow_files(trace, &bytes, true), 0);
	unlink(trace);
	prex_close_fds(x);
}

/*
 * An image whose own probes are not selected gets its file at the dlopen
 * that brings a selected probe, before that library's constructor fires it.
 */
static void test_file_made_at_dlopen(void **state)
{
	static char err[1 << 16], dumped[1 << 16];
	const char *opts[] = {"-f", "-o", NULL, "/bin/sh", "-c", NULL, NULL};
	char trace[PATH_MAX], cmds[256], text[2 * PATH_MAX], script[3 * PATH_MAX];
	char file[PATH_MAX + 32];
	long long bytes;
	struct prex *x;
	const char *l;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "atdlopen");
	opts[2] = trace;
	snprintf(cmds, sizeof(cmds), "%s/atdlopen.cmds", work_dir);
	snprintf(text, sizeof(text), "fire 2\ndlopen %s\nfireplug 2\nexit 0\n", plug_lib);
	write_file(cmds, text);
	snprintf(script, sizeof(script), "/bin/true; %s 3 4 3<%s 4>/dev/null", probes_prog, cmds);
	opts[5] = script;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "enable name=/^tl_plug/\ncontinue\n");
	tl_watchdog_extend(tl.test_timeout_s);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	/* the exec line carries no file; a later line does */
	l = strstr(err, "exec'd ");
	assert_non_null(l);
	l = strstr(err, ": tracing into ");
	if (count_str(err, "tracing into") != 1 || !l)
		fail_msg("expected one file made after the exec:\n%s", err);
	snprintf(file, sizeof(file), "%.*s", (int)strcspn(l + 15, "\n"), l + 15);
	assert_int_equal(dump(file, dumped, sizeof(dumped)), 0);
	assert_int_equal(count_events(dumped, "tl_plug_ctor", "constructor"), 1);
	assert_true(count_events(dumped, "tl_plug_tick", NULL) == 2);
	assert_int_equal(count_events(dumped, "tl_main_tick", NULL), 0);
	assert_int_equal(follow_files(trace, &bytes, true), 1);
	prex_close_fds(x);
}

/* ---- quit on a tree with children in the background ---- */

struct tree {
	struct prex *x;
	pid_t pids[4]; /* sh, then its three background children */
	int want;      /* pids on the script's line */
	char fifo[256];
	char script[1024];
	struct rd r; /* the FIFO's reading end */
	int go_w;    /* -p: sh's stdin */
	int hold_w;  /* our own writing end of the FIFO */
};

/*
 * The script: three background children (two sleeps and a subshell that
 * runs a sleep), their pids written to the FIFO, then `wait`.  dash runs the
 * subshell's sleep with vfork (the subshell waits in 'D' while its child is
 * stopped before exec, and is detached only once it returns from vfork);
 * without @vfork it runs it in the background (fork) instead.  With @gate
 * sh first says "up" on the FIFO and waits for a line on its stdin.
 */
static void tree_script(struct tree *t, bool gate, bool vfork)
{
	memset(t, 0, sizeof(*t));
	t->go_w = -1;
	t->want = 4;
	snprintf(t->fifo, sizeof(t->fifo), "%s/tree.fifo", work_dir);
	unlink(t->fifo);
	assert_int_equal(mkfifo(t->fifo, 0600), 0);
	/* the reader first, so that the script's open does not block */
	t->r.fd = open(t->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(t->r.fd >= 0);
	/* and a writer of ours, so that a closing script never reads as EOF */
	t->hold_w = open(t->fifo, O_WRONLY | O_CLOEXEC);
	assert_true(t->hold_w >= 0);
	snprintf(t->script, sizeof(t->script),
		 "%s%s%ssleep 1000 & a=$!; sleep 1000 & b=$!; (sleep 1000%s) & c=$!; "
		 "echo \"$$ $a $b $c\" > %s; wait",
		 gate ? "echo up > " : "", gate ? t->fifo : "", gate ? "; read x; " : "",
		 vfork ? "; :" : " & wait", t->fifo);
}

/* Reads the children's pids: sh has forked them all, each fork a stop prex handled. */
static void tree_read_pids(struct tree *t)
{
	const char *l = rd_line(&t->r, tl.timeout_ms);

	if (!l)
		fail_msg("the script did not report its children");
	if (sscanf(l, "%d %d %d %d", &t->pids[0], &t->pids[1], &t->pids[2], &t->pids[3]) != t->want)
		fail_msg("bad line from the script: \"%s\"", l);
}

/* prex -f -o @trace sh -c SCRIPT, continued until the children exist. */
static void tree_start_exec(struct tree *t, const char *trace)
{
	const char *opts[] = {"-f", "-o", trace, "/bin/sh", "-c", t->script, NULL};

	t->x = prex_spawn(opts, false, NULL, NULL);
	writes(t->x->in_w, "continue\n");
	tree_read_pids(t);
}

/*
 * sh (libtnfprobe preloaded, started by the test) then prex -f -p sh,
 * continued; sh forks its children only once prex follows it.
 */
static void tree_start_attach(struct tree *t, const char *trace)
{
	char pre[PATH_MAX + 16], pidstr[16];
	const char *extra[] = {pre, NULL};
	const char *opts[] = {"-f", "-o", trace, "-p", pidstr, NULL};
	char *argv[] = {"/bin/sh", "-c", t->script, NULL};
	int in[2];
	char **env;
	pid_t sh;

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", tl.probe);
	env = tl_env_build(extra);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	fflush(stdout);
	fflush(stderr);
	sh = fork();
	assert_true(sh >= 0);
	if (sh == 0) {
		dup2(in[0], 0);
		execve(argv[0], argv, env);
		_exit(127);
	}
	free(env);
	tl_track_pid(sh);
	close(in[0]);
	t->go_w = in[1];
	if (!rd_line(&t->r, tl.timeout_ms))
		fail_msg("sh did not start");
	snprintf(pidstr, sizeof(pidstr), "%d", (int)sh);
	t->x = prex_spawn(opts, false, NULL, NULL);
	rd_until(&t->x->out, "Target process stopped");
	writes(t->x->in_w, "continue\n");
	/* sh is stopped at the prompt until continue, so its forks are followed */
	writes(t->go_w, "go\n");
	tree_read_pids(t);
	assert_int_equal(t->pids[0], sh);
}

/* ^C: back at the prompt with every process stopped; then @quit. */
static int tree_quit(struct tree *t, const char *quit)
{
	const char *l;
	int i;

	kill(t->x->pid, SIGINT);
	while ((l = rd_line(&t->x->out, tl.timeout_ms)) && !strstr(l, "target processes stopped"))
		;
	if (!l) {
		char d[4][1024];

		for (i = 0; i < 4; i++)
			tl_describe(t->pids[i], d[i], sizeof(d[i]));
		fail_msg("prex did not stop the tree after SIGINT: %s; %s; %s; %s", d[0], d[1],
			 d[2], d[3]);
	}
	/* the subshell may wait in vfork for its stopped child ('D') */
	for (i = 0; i < 3; i++)
		tl_assert_all_stopped(t->pids[i], "a followed process at the prompt");
	writes(t->x->in_w, quit);
	return prex_wait(t->x);
}

static void tree_end(struct tree *t)
{
	close(t->r.fd);
	close(t->hold_w);
	if (t->go_w >= 0)
		close(t->go_w);
	prex_close_fds(t->x);
	unlink(t->fifo);
}

/* Nothing of the test's subtree (the tree is reparented to us) stays alive. */
static void assert_nothing_left(const char *what)
{
	char msg[8192];
	int left = tl_sweep(tl.timeout_ms, msg, sizeof(msg));

	if (left)
		fail_msg("%s: %d process(es) still alive: %s", what, left, msg);
}

static void assert_no_file(struct tree *t, const char *trace)
{
	static char err[1 << 16];
	long long bytes;

	rd_rest(&t->x->err, err, sizeof(err));
	if (strstr(err, "tracing into") || follow_files(trace, &bytes, true) ||
	    !access(trace, F_OK))
		fail_msg("a trace file was made for a tree without probes:\n%s", err);
}

/* Plain quit (and quit kill) of a tree prex started: every process dies. */
static void quit_kills_all(const char *quit)
{
	static struct tree t;
	char trace[PATH_MAX];
	int i;

	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "quitkill");
	tree_script(&t, false, true);
	tree_start_exec(&t, trace);
	/*
	 * ^C only once the vfork'd sleep has exec'd: a vfork parent cannot stop
	 * while its child is held stopped before its exec (known; not prex -f's).
	 */
	for (i = 0; i < 3; i++)
		rd_until(&t.x->err, "/sleep");
	assert_int_equal(tree_quit(&t, quit), 0);
	for (i = 0; i < 4; i++)
		tl_assert_exits(t.pids[i], "a process of the tree after quit");
	assert_nothing_left("after quit");
	assert_no_file(&t, trace);
	tree_end(&t);
}

static void test_quit_kills_whole_tree(void **state)
{
	(void)state;
	quit_kills_all("quit\n");
}

static void test_quit_kill_kills_whole_tree(void **state)
{
	(void)state;
	quit_kills_all("quit kill\n");
}

/*
 * A program without the probe runtime (env -i drops LD_PRELOAD): prex cannot
 * attach to it with its probes after the exec, and follows it without them
 * or lets it go.  Either way, quit kills it with the rest of the tree.
 */
static void test_quit_kills_image_without_runtime(void **state)
{
	static struct tree t;
	char trace[PATH_MAX];

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "quitnort");
	tree_script(&t, false, false);
	snprintf(t.script, sizeof(t.script),
		 "env -i /bin/sleep 1000 & a=$!; echo \"$$ $a\" > %s; wait", t.fifo);
	t.want = 2;
	tree_start_exec(&t, trace);
	rd_until(&t.x->err, "exec'd /bin/sleep");
	kill(t.x->pid, SIGINT);
	rd_until(&t.x->out, "stopped");
	writes(t.x->in_w, "quit\n");
	assert_int_equal(prex_wait(t.x), 0);
	tl_assert_exits(t.pids[0], "sh after quit");
	tl_assert_exits(t.pids[1], "the sleep without libtnfprobe after quit");
	assert_nothing_left("after quit");
	tree_end(&t);
}

/* quit resume: every process runs on, untraced and not stopped; then we kill them. */
static void test_quit_resume_whole_tree(void **state)
{
	static struct tree t;
	char trace[PATH_MAX];
	int i;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "quitresume");
	tree_script(&t, false, false);
	tree_start_exec(&t, trace);
	assert_int_equal(tree_quit(&t, "quit resume\n"), 0);
	for (i = 0; i < 4; i++)
		tl_assert_running(t.pids[i], "a process of the tree after quit resume");
	tl_kill_subtree(0);
	for (i = 0; i < 4; i++)
		tl_assert_exits(t.pids[i], "a process of the tree, killed by the test");
	/* only now: the tree held prex's stderr open */
	assert_no_file(&t, trace);
	assert_nothing_left("after the test killed the tree");
	tree_end(&t);
}

/*
 * Plain quit of an attached tree resumes every process; quit suspend leaves
 * every one in a job-control stop, detached, which another controller can
 * take: the test attaches to sh with tnfctl_pid_open.
 */
static void test_quit_attached_tree(void **state)
{
	static struct tree t;
	char trace[PATH_MAX];
	tnfctl_handle_t *h;
	int i;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "quitattach");
	tree_script(&t, true, false);
	tree_start_attach(&t, trace);
	assert_int_equal(tree_quit(&t, "quit suspend\n"), 0);
	for (i = 0; i < 4; i++)
		tl_assert_job_stopped(t.pids[i], "a process of the tree after quit suspend");
	h = tl_pid_open(t.pids[0]);
	tl_close(h, TNFCTL_TARG_SUSPEND);
	for (i = 0; i < 4; i++)
		tl_assert_job_stopped(t.pids[i], "still stopped after another controller");
	assert_no_file(&t, trace);
	tree_end(&t);
	tl_kill_subtree(0);
	for (i = 0; i < 4; i++)
		tl_assert_exits(t.pids[i], "a process of the tree, killed by the test");
	assert_nothing_left("after the test killed the tree");

	/* plain quit of an attached tree: everything runs on */
	tree_script(&t, true, false);
	tree_start_attach(&t, trace);
	assert_int_equal(tree_quit(&t, "quit\n"), 0);
	for (i = 0; i < 4; i++)
		tl_assert_running(t.pids[i], "a process of an attached tree after quit");
	tree_end(&t);
	tl_kill_subtree(0);
	assert_nothing_left("after the test killed the attached tree");
}

/*
 * SIGTERM or SIGHUP (a closed terminal window) to prex quits as `quit`
 * does, then prex ends by that signal: a tree prex started dies whole,
 * whether it was running or stopped at the prompt.  Before, prex just died:
 * the helper killed the root and resumed the followed children, which ran
 * on, reparented.
 */
static void signal_ends_tree(int sig, bool at_prompt)
{
	static struct tree t;
	char trace[PATH_MAX];
	int i, st = 0;

	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "quitsig");
	tree_script(&t, false, false);
	tree_start_exec(&t, trace);
	for (i = 0; i < 3; i++)
		rd_until(&t.x->err, "/sleep");
	if (at_prompt) {
		kill(t.x->pid, SIGINT);
		rd_until(&t.x->out, "target processes stopped");
	}
	kill(t.x->pid, sig);
	if (tl_waitpid_timeout(t.x->pid, &st, 0, tl.timeout_ms) != t.x->pid)
		fail_msg("prex did not end after %s", strsignal(sig));
	if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
		fail_msg("prex ended with status 0x%x, not by %s", st, strsignal(sig));
	for (i = 0; i < 4; i++)
		tl_assert_exits(t.pids[i], "a process of the tree after prex's signal");
	assert_nothing_left("after prex's signal");
	tree_end(&t);
}

static void test_sigterm_while_running_kills_tree(void **state)
{
	(void)state;
	signal_ends_tree(SIGTERM, false);
}

static void test_sighup_at_prompt_kills_tree(void **state)
{
	(void)state;
	signal_ends_tree(SIGHUP, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_probeless_tree_makes_no_file),
		TL_TEST(test_mixed_tree_traces_only_the_demo),
		TL_TEST(test_demo_root_file_made_by_enable),
		TL_TEST(test_file_made_at_dlopen),
		TL_TEST(test_quit_kills_whole_tree),
		TL_TEST(test_quit_kill_kills_whole_tree),
		TL_TEST(test_quit_kills_image_without_runtime),
		TL_TEST(test_quit_resume_whole_tree),
		TL_TEST(test_quit_attached_tree),
		TL_TEST(test_sigterm_while_running_kills_tree),
		TL_TEST(test_sighup_at_prompt_kills_tree),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
