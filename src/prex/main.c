// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex - control the TNF probes of a process (Solaris prex(1), reference
 * §5), written on the public <tnf/tnfctl.h> API only.
 *
 *	prex [-f] [-o file] [-l "libs"] [-s KB] cmd [args...]
 *	prex [-f] [-o file] [-s KB] -p pid
 *	prex [-o file] [-s KB] -k       (kernel mode: the kernel's tracepoints)
 *
 * Start-up: open the target (stopped before any of its code ran, or
 * attached), create its trace file, define &debug and $all, register the
 * history replay as the create callback, then read $HOME/.prexrc,
 * ./.prexrc and the input until `continue`; run until ^C, the target's end
 * or exec; repeat.  Kernel mode (kernel.c) opens the kernel instead and
 * reads commands until quit; the kernel buffer and its file are made by
 * `buffer alloc`.  Exit status (the table in README.md): 0; 2 for a usage
 * error; 127 when cmd is not found (or the loader cannot start it), 126 when
 * it cannot be run; 1 for a target that cannot be attached, missing
 * privilege, a trace file that cannot be made, a kernel that cannot be
 * opened, or a close that failed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fd_limit.h"
#include "prex.h"

struct prex_opts g_opt = {.size = PREX_DEFAULT_SIZE};
char g_tracefile[PATH_MAX];
char g_tracefile_given[PATH_MAX];

static bool continue_requested;

void prex_request_continue(void)
{
	continue_requested = true;
}

void prex_quit(tnfctl_targ_op_t op)
{
	int rc, sig;

	/* Orphaned process groups: the kernel sends a stopped one SIGHUP then SIGCONT. */
	if (op == TNFCTL_TARG_SUSPEND && g_opt.cmd)
		fprintf(stderr,
			"%s: note: %s prex started gets SIGHUP and SIGCONT when prex "
			"exits (its process group is orphaned); it ends unless it ignores SIGHUP\n",
			g_opt.argv0, g_opt.follow ? "every process of the tree" : "a target");
	rc = targets_close(op);

	edit_end();
	fflush(stdout);
	sig = prex_term_signal();
	if (sig) {
		/* the caller sees prex end by the signal, as it would have */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	exit(rc);
}

/* A usage error (exit 2, on stderr), or the answer to --help (exit 0, on stdout). */
static void usage(const char *msg)
{
	FILE *out = msg ? stderr : stdout;

	if (msg)
		fprintf(stderr, "%s: %s\n", g_opt.argv0, msg);
	/* the original's layout; -f and the long names are ours */
	fprintf(out,
		"usage: %s [options] <cmd> [cmd-args...]\n"
		"usage: %s [options] -p <pid>\n"
		"usage: %s [-o <outfilename>] [-s <kbytes-size>] -k\n"
		"options:\n"
		"\t-o <outfilename>   set trace output file name (--output)\n"
		"\t-s <kbytes-size>   set trace file size (--size; default 4096, 384 with -k)\n"
		"\t-l <sharedobjs>    shared objects to be preloaded (cmd only) (--preload)\n"
		"\t-f                 follow forked children and exec'd images (--follow)\n"
		"\t-k                 kernel mode: control the kernel's tracepoints (--kernel)\n",
		g_opt.argv0, g_opt.argv0, g_opt.argv0);
	exit(msg ? 1 : 0); /* the original's status for a usage error */
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"preload", required_argument, NULL, 'l'},
		{"size", required_argument, NULL, 's'},	  {"pid", required_argument, NULL, 'p'},
		{"kernel", no_argument, NULL, 'k'},	  {"follow", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	bool kernel = false;
	long l;
	int c;

	while ((c = getopt_long(argc, argv, "+o:l:s:p:kfth", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			g_opt.outname = optarg;
			break;
		case 'l':
			g_opt.preload = optarg;
			break;
		case 's':
			/*
			 * As the original's atoi: the leading number, 0 if none
			 * (raised to the minimum with a warning); only a size
			 * that overflows is an error.
			 */
			errno = 0;
			l = strtol(optarg, NULL, 10);
			if (errno || l > 4194303)
				usage("bad trace file size (KB)");
			g_opt.size = l > 0 ? (unsigned long)l * 1024 : 0;
			g_opt.size_given = true;
			break;
		case 'p':
			/* atoi too: no number is no pid ("need to specify cmd or pid") */
			errno = 0;
			l = strtol(optarg, NULL, 10);
			g_opt.pid = errno || l <= 0 || l > INT_MAX ? 0 : (pid_t)l;
			break;
		case 'k':
			kernel = true;
			break;
		case 'f':
			g_opt.follow = true;
			break;
		case 't':
			g_opt.test = true;
			break;
		case 'h':
			usage(NULL);
			break;
		default:
			usage("unrecognized argument");
		}
	}
	if (optind < argc)
		g_opt.cmd = &argv[optind];
	if (kernel) {
		/* -o is allowed: it names the kernel trace file (the original refused it) */
		if (g_opt.cmd)
			usage("can't specify a command in kernel mode");
		if (g_opt.pid)
			usage("can't specify a pid in kernel mode");
		if (g_opt.preload)
			usage("can't use the preload option in kernel mode");
		if (g_opt.follow)
			usage("can't follow processes in kernel mode");
		g_opt.kernel = true;
		if (!g_opt.size_given)
			g_opt.size = PREX_KERNEL_SIZE;
		return;
	}
	if (!g_opt.cmd && !g_opt.pid)
		usage("need to specify cmd or pid");
	if (g_opt.cmd && g_opt.pid)
		usage("can't specify both cmd and pid");
	if (g_opt.pid && g_opt.preload)
		usage("can't use the preload option with attach");
}

/*
 * Exits after an open failure that says what is wrong (@e: the errno the
 * open left): no privilege or no BTF (1), cmd not found (127), found but
 * not runnable (126, with execve's reason; the loader's own message when a
 * library is missing).  Returns for the other errors.
 */
static void open_failed(tnfctl_errcode_t err, int e)
{
	const char *what = g_opt.pid ? "trouble attaching to target process"
				     : "trouble creating target process";
	struct stat st;

	if (err == TNFCTL_ERR_ACCES && e == EPERM) {
		prex_msg("%s: not permitted: BPF and ptrace need root, or CAP_BPF, CAP_PERFMON "
			 "and CAP_SYS_PTRACE",
			 what);
		exit(1);
	}
	if (err == TNFCTL_ERR_INTERNAL && stat("/sys/kernel/btf/vmlinux", &st)) {
		prex_msg("%s: this kernel has no BTF (/sys/kernel/btf/vmlinux): it needs "
			 "CONFIG_DEBUG_INFO_BTF=y",
			 what);
		exit(1);
	}
	if (g_opt.pid)
		return;
	if (err == TNFCTL_ERR_FILENOTFOUND) {
		prex_msg("%s: %s: %s", what, g_opt.cmd[0], strerror(ENOENT));
		exit(127);
	}
	if (err == TNFCTL_ERR_ACCES && e == ELIBACC)
		exit(127); /* the loader has said which library */
	if (err == TNFCTL_ERR_ACCES && e && e != EPERM) {
		prex_msg("%s: %s: %s", what, g_opt.cmd[0], strerror(e));
		exit(126);
	}
}

/* -p: the root has no probe runtime (opened with TNFCTL_OPEN_NOPROBES) */
static bool root_noprobes;

static tnfctl_handle_t *open_target(pid_t *pid)
{
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;

	errno = 0;
	if (g_opt.pid)
		err = tnfctl_pid_open(g_opt.pid, &h);
	else
		err = tnfctl_exec_open(g_opt.cmd[0], g_opt.cmd, NULL, g_opt.preload, NULL, &h);
	/* -p on a process without the runtime (or static): its USDT probes need none */
	if ((err == TNFCTL_ERR_NOLIBTNFPROBE || err == TNFCTL_ERR_NOTDYNAMIC) && g_opt.pid &&
	    !tnfctl_pid_open_flags(g_opt.pid, TNFCTL_OPEN_NOPROBES, &h)) {
		prex_msg("process %d %s: only its USDT probes can be controlled", (int)g_opt.pid,
			 err == TNFCTL_ERR_NOTDYNAMIC ? "is static" : "has no libtnfprobe.so.1");
		root_noprobes = true;
		err = TNFCTL_ERR_NONE;
	}
	if (err)
		open_failed(err, errno);
	if (err == TNFCTL_ERR_NOLIBTNFPROBE) {
		prex_msg("%s: %s; is libtnfprobe.so.1 loaded in the target (LD_PRELOAD)?",
			 g_opt.pid ? "trouble attaching to target process"
				   : "trouble creating target process",
			 tnfctl_strerror(err));
		exit(1);
	}
	if (err) {
		prex_msg("%s: %s",
			 g_opt.pid ? "trouble attaching to target process"
				   : "trouble creating target process",
			 tnfctl_strerror(err));
		exit(1);
	}
	tnf_raise_fd_limit(); /* -f: the root has the caller's limit, its tree too */
	if (tnfctl_trace_attrs_get(h, &a)) {
		prex_msg("cannot read the target's attributes");
		tnfctl_close(h, TNFCTL_TARG_DEFAULT);
		exit(1);
	}
	*pid = a.targ_pid;
	return h;
}

/* 0 if a file can be made where @path names one (its directory), else -1 with errno. */
int prex_dir_writable(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0'; /* "/name": the root */
	else
		*slash = '\0';
	return access(dir, W_OK | X_OK);
}

/* The trace file: kept if the target has one, else created (§4.1). */
static tnfctl_errcode_t set_tracefile(tnfctl_handle_t *h, pid_t pid)
{
	const char *tmp = getenv("TMPDIR");
	tnfctl_trace_attrs_t a;
	tnfctl_errcode_t err;
	char name[PATH_MAX];

	err = tnfctl_trace_attrs_get(h, &a);
	if (err)
		return err;
	if (a.trace_buf_state == TNFCTL_BUF_BROKEN)
		return TNFCTL_ERR_BUFBROKEN;
	if (a.trace_buf_state == TNFCTL_BUF_OK) {
		snprintf(g_tracefile, sizeof(g_tracefile), "%s",
			 a.trace_file_name ? a.trace_file_name : "");
		if (g_opt.outname || g_opt.size_given)
			prex_msg("the target already has trace file %s; -o and -s are ignored",
				 g_tracefile);
		return TNFCTL_ERR_NONE;
	}
	if (g_opt.size < a.trace_min_size) {
		prex_msg("trace file size %lu KB is below the minimum; using %zu KB",
			 g_opt.size / 1024, a.trace_min_size / 1024);
		g_opt.size = a.trace_min_size;
	}
	if (g_opt.outname)
		snprintf(name, sizeof(name), "%s", g_opt.outname);
	else if (snprintf(name, sizeof(name), "%s/trace-%d", tmp && *tmp ? tmp : "/tmp",
			  (int)pid) >= (int)sizeof(name))
		return TNFCTL_ERR_BADARG;
	if (g_opt.follow) {
		/* made when a probe command first selects a probe (target.c) */
		char cwd[PATH_MAX];

		if (name[0] == '/')
			snprintf(g_tracefile, sizeof(g_tracefile), "%s", name);
		else if (!getcwd(cwd, sizeof(cwd)) ||
			 snprintf(g_tracefile, sizeof(g_tracefile), "%s/%s", cwd, name) >=
				 (int)sizeof(g_tracefile))
			return TNFCTL_ERR_BADARG;
		/* say now, not at the first enable, that the files cannot be made */
		if (prex_dir_writable(g_tracefile)) {
			snprintf(g_tracefile_given, sizeof(g_tracefile_given), "%s", name);
			return errno == ENOENT || errno == ENOTDIR ? TNFCTL_ERR_FILENOTFOUND
								   : TNFCTL_ERR_ACCES;
		}
		return TNFCTL_ERR_NONE;
	}
	err = tnfctl_buffer_alloc(h, name, (uint_t)g_opt.size);
	if (err) {
		/* the message below names the file */
		snprintf(g_tracefile_given, sizeof(g_tracefile_given), "%s", name);
		return err;
	}
	snprintf(g_tracefile_given, sizeof(g_tracefile_given), "%s", name);
	/* the absolute path, for list tracefile and the -f file names */
	if (!tnfctl_trace_attrs_get(h, &a) && a.trace_file_name)
		snprintf(g_tracefile, sizeof(g_tracefile), "%s", a.trace_file_name);
	else
		snprintf(g_tracefile, sizeof(g_tracefile), "%s", name);
	return TNFCTL_ERR_NONE;
}

/*
 * Every USDT record of the session goes into one file named after the
 * trace file (with -f, the root's), unless the user named one, and prex
 * says which at its exit.  Set once the target runs its own environment:
 * it does not inherit this.
 */
static char usdt_file[PATH_MAX + 8];
static struct timespec usdt_since;

/* At exit: where the USDT records went, when this session wrote them. */
static void say_usdt_file(void)
{
	struct stat st;

	if (usdt_file[0] && !stat(usdt_file, &st) &&
	    (st.st_mtim.tv_sec > usdt_since.tv_sec ||
	     (st.st_mtim.tv_sec == usdt_since.tv_sec && st.st_mtim.tv_nsec >= usdt_since.tv_nsec)))
		prex_msg("USDT records are in %s", usdt_file);
}

static void set_usdt_file(pid_t pid)
{
	const char *tmp = getenv("TMPDIR"), *env = getenv("TNFCTL_USDT_FILE");

	if (env && *env) /* empty: unset, as libtnfctl takes it */
		snprintf(usdt_file, sizeof(usdt_file), "%s", env);
	else if (g_tracefile[0])
		snprintf(usdt_file, sizeof(usdt_file), "%s.usdt", g_tracefile);
	else if (g_opt.outname)
		snprintf(usdt_file, sizeof(usdt_file), "%s.usdt", g_opt.outname);
	else /* libtnfctl's own default, named here to be said */
		snprintf(usdt_file, sizeof(usdt_file), "%s/trace-%d.usdt",
			 tmp && *tmp ? tmp : "/tmp", (int)pid);
	if (!env || !*env)
		setenv("TNFCTL_USDT_FILE", usdt_file, 1);
	clock_gettime(CLOCK_REALTIME_COARSE, &usdt_since); /* as file times */
	atexit(say_usdt_file);
}

static void print_stopped(pid_t root)
{
	int n = targets_count();

	if (g_opt.test)
		printf("prex(%d), target(%d): ", (int)getpid(), (int)root);
	if (n > 1)
		printf("%d target processes stopped\n", n);
	else
		printf("Target process stopped\n");
	printf("Type \"continue\" to resume the target, \"help\" for help ...\n");
}

/*
 * prex -k: the kernel never stops, so commands are read until quit (or the
 * end of a script); `continue` is ignored.
 */
static int kernel_main(void)
{
	struct exprlist *all;

	kernel_open();
	/* ^C drops the line being typed; SIGTERM and SIGHUP close as quit does */
	targets_install_signals();
	/* no &debug: kernel probes have no functions */
	all = exprlist_new();
	exprlist_add(all, spec_new("keys", false), spec_new(".*", true));
	set_define("all", all);
	source_init();
	printf("Type \"help\" for help ...\n");
	for (;;) {
		char *text;
		int line;

		if (!source_read(&text, &line))
			prex_quit(TNFCTL_TARG_DEFAULT);
		parse_line(text, line);
		free(text);
	}
}

int main(int argc, char **argv)
{
	tnfctl_errcode_t err;
	struct exprlist *all;
	tnfctl_handle_t *h;
	pid_t pid;

	g_opt.argv0 = argv[0];
	parse_args(argc, argv);
	/* lines reach a pipe in order with the stderr messages */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (g_opt.kernel)
		return kernel_main();

	h = open_target(&pid);
	targets_install_signals();
	/* no runtime, no trace file: USDT records go to the controller's own (.usdt) */
	err = root_noprobes ? TNFCTL_ERR_NONE : set_tracefile(h, pid);
	if (err) {
		/* the original's words, then which file */
		prex_msg("trouble initializing tracefile: %s%s%s", tnfctl_strerror(err),
			 g_tracefile_given[0] ? ": " : "", g_tracefile_given);
		tnfctl_close(h, TNFCTL_TARG_DEFAULT);
		return 1;
	}
	set_usdt_file(pid);

	fcn_define("debug", "tnf_probe_debug");
	all = exprlist_new();
	exprlist_add(all, spec_new("keys", false), spec_new(".*", true));
	set_define("all", all);

	/* replays the history on every probe that appears later (dlopen) */
	err = tnfctl_register_funcs(h, history_replay, NULL);
	if (err || target_start(h, pid, root_noprobes)) {
		prex_msg("error in probe discovery: %s",
			 err ? tnfctl_strerror(err) : "cannot start a thread");
		tnfctl_close(h, TNFCTL_TARG_DEFAULT);
		return 1;
	}
	targets_check_broken();
	source_init();

	for (;;) {
		char *text;
		int line;

		print_stopped(pid);
		continue_requested = false;
		while (!continue_requested) {
			if (!source_read(&text, &line))
				prex_quit(TNFCTL_TARG_DEFAULT); /* end of a script */
			parse_line(text, line);
			free(text);
		}
		if (targets_run() || prex_term_signal())
			prex_quit(TNFCTL_TARG_DEFAULT); /* every target has ended, or SIGTERM */
		targets_check_broken();
	}
}
