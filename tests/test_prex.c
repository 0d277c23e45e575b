// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex driven as a user would: commands on its stdin (a pipe, or a pty for
 * the prompt, line editing and ^C), its stdout and stderr compared line by
 * line, the target (tl_probes) commanded over its own pipes, and the trace
 * files read back with tnfdump.  prex runs with HOME and the current
 * directory in a private directory, so no user's .prexrc gets in.
 */
#include "testlib.h"
#include "probelib.h"

#include "prexlib.h"

/* ---------------------------------------------------------------- */

/* Line of the first line of source file @rel (under the tree) that contains @what. */
static int source_line(const char *rel, const char *what)
{
	char path[2 * PATH_MAX], line[1024];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/../%s", tl.bdir, rel);
	f = fopen(path, "re");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, what)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no \"%s\" in %s", what, path);
	return -1;
}

static void test_usage_errors(void **state)
{
	static const char *const cases[][6] = {
		{NULL},
		{"-p", "1", "/bin/true", NULL},
		{"-l", "x.so", "-p", "1", NULL},
		{"-k", "-f", NULL},
		{"-k", "/bin/true", NULL},
		{"-k", "-p", "1", NULL},
		{"-k", "-l", "x.so", NULL},
		{"-x", "/bin/true", NULL},
		{"-p", "abc", NULL},
	};
	static const char *const want[] = {
		"need to specify cmd or pid",
		"can't specify both cmd and pid",
		"can't use the preload option with attach",
		"can't follow processes in kernel mode",
		"can't specify a command in kernel mode",
		"can't specify a pid in kernel mode",
		"can't use the preload option in kernel mode",
		"unrecognized argument",
		"need to specify cmd or pid",
	};
	static char err[8192];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct prex *x = prex_spawn(cases[i], false, NULL, NULL);

		close(x->in_w);
		rd_rest(&x->err, err, sizeof(err));
		if (!strstr(err, want[i]))
			fail_msg("case %zu: expected \"%s\" in stderr, got \"%s\"", i, want[i],
				 err);
		if (i < 9 && !strstr(err, "usage: prex [options] <cmd> [cmd-args...]\nusage: prex "
					  "[options] -p <pid>\n"))
			fail_msg("case %zu: no usage text in \"%s\"", i, err);
		assert_int_equal(prex_wait(x), 1); /* usage: 1, as the original */
		close(x->out.fd);
		close(x->err.fd);
	}
}

/* --help is not an error: the usage on stdout, status 0. */
static void test_help_option(void **state)
{
	static const char *const args[] = {"--help", NULL};
	static char out[8192], err[8192];
	struct prex *x;

	(void)state;
	x = prex_spawn(args, false, NULL, NULL);
	close(x->in_w);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_non_null(strstr(
		out,
		"usage: prex [options] <cmd> [cmd-args...]\nusage: prex [options] -p <pid>\n"));
	assert_string_equal(err, "");
	assert_int_equal(prex_wait(x), 0);
	close(x->out.fd);
	close(x->err.fd);
}

/* Every command through a pipe, compared line by line; then the trace file. */
static void test_session_every_command(void **state)
{
	static char out[65536], err[8192], dumped[65536], want[8192];
	const char *opts[] = {"-o", NULL, "-l", pre_lib, NULL};
	struct prex *x;
	char trace[PATH_MAX];
	pid_t pid;
	int st;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "session");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "create $m name=tl_main_tick name=tl_main_str\n"
			"list sets\n"
			"enable $m\n"
			"list name 'enable' 'trace' funcs probes $m\n"
			"create &tick tlpre_func_a\n"
			"connect &tick name=tl_main_tick\n"
			"connect &debug name=tl_main_str\n"
			"list name funcs probes $m\n"
			"untrace name=tl_main_str\n"
			"list name 'trace' probes $m\n"
			"trace name=tl_main_str\n"
			"clear name=tl_main_str\n"
			"list name funcs probes $m\n"
			"disable name=tl_main_tick\n"
			"enable name=tl_main_tick\n"
			"list fcns\n"
			"list history\n"
			"list tracefile\n"
			"list values sunw%debug\n"
			"buffer alloc 512k\n"
			"ktrace on\n"
			"pfilter add 1,2\n"
			"# a comment line, then a continued one\n"
			"list name \\\n"
			"  probes name=tl_main_str\n"
			"continue\n");
	pid = target_ready(x);
	tl_send(x->tgt, "fire 2");
	tl_expect(x->tgt, "fired 2");
	tl_send(x->tgt, "chainlog");
	tl_expect(x->tgt, "chainlog aa");
	tl_send(x->tgt, "exit 0");
	assert_int_equal(prex_wait(x), 0);
	tl_assert_exits(pid, "target after exit 0");
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want),
		 STOPPED "$all      'keys'=/.*/ \n"
			 "$m        'name'='tl_main_tick' 'name'='tl_main_str' \n"
			 "name=tl_main_tick enable=on trace=on funcs=<no value> \n"
			 "name=tl_main_str enable=on trace=on funcs=<no value> \n"
			 "name=tl_main_tick funcs=&tick \n"
			 "name=tl_main_str funcs=&debug \n"
			 "name=tl_main_tick trace=on \n"
			 "name=tl_main_str trace=off \n"
			 "name=tl_main_tick funcs=&tick \n"
			 "name=tl_main_str funcs=<no value> \n"
			 "&debug    tnf_probe_debug         \n"
			 "&tick     tlpre_func_a            \n"
			 "[0] enable  'name'='tl_main_tick' 'name'='tl_main_str' \n"
			 "[1] connect &tick 'name'='tl_main_tick' \n"
			 "[2] connect &debug 'name'='tl_main_str' \n"
			 "[3] untrace 'name'='tl_main_str' \n"
			 "[4] trace   'name'='tl_main_str' \n"
			 "[5] clear   'name'='tl_main_str' \n"
			 "[6] disable 'name'='tl_main_tick' \n"
			 "[7] enable  'name'='tl_main_tick' \n"
			 "Current trace file is: %s\n"
			 "sunw%%debug =\n"
			 "\t   main tick\n"
			 "name=tl_main_str \n",
		 trace);
	assert_string_equal(out, want);
	assert_string_equal(
		err,
		"\"<STDIN>\", line 20: semantic error: \"buffer\" is only available in kernel "
		"mode (prex invoked with the -k flag)\n"
		"\"<STDIN>\", line 21: semantic error: \"ktrace\" is only available in kernel "
		"mode (prex invoked with the -k flag)\n"
		"\"<STDIN>\", line 22: semantic error: \"pfilter\" is only available in kernel "
		"mode (prex invoked with the -k flag)\n"
		"prex: target process exited\n");
	st = dump(trace, dumped, sizeof(dumped));
	assert_int_equal(st, 0);
	assert_int_equal(count_events(dumped, "tl_main_tick", NULL), 2);
	assert_int_equal(count_events(dumped, "tl_main_str", "main done"), 1);
	assert_int_equal(count_events(dumped, "tl_pre_tick", NULL), 0);
	prex_close_fds(x);
}

/* Selector semantics: unanchored regex, OR, each attribute, quoting, errors. */
static void test_selectors(void **state)
{
	static char out[65536], err[8192], want[8192];
	const char *opts[] = {"-o", NULL, "-l", pre_lib, NULL};
	char trace[PATH_MAX], src[PATH_MAX + 16];
	struct prex *x;
	FILE *f;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "selectors");
	opts[1] = trace;
	snprintf(src, sizeof(src), "%s/bad.prex", work_dir);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs("list name probes name=tl_thr\n\nenable name=/\\(/\n", f);
	fclose(f);
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "list name probes name=/main_t/\n"			    /* 1 */
			"list name probes name=/^tl_main/ name=tl_thr\n"	    /* 2 */
			"list name probes /^thr$/\n"				    /* 3 */
			"list name probes thr\n"				    /* 4 */
			"list name probes object=/libtl_pre/\n"			    /* 5 */
			"enable name=tl_thr\n"					    /* 6 */
			"list name probes 'enable'='on'\n"			    /* 7 */
			"untrace name=tl_child\n"				    /* 8 */
			"list name probes 'trace'='off'\n"			    /* 9 */
			"connect &debug name=tl_main_str\n"			    /* 10 */
			"list name probes funcs='&debug'\n"			    /* 11 */
			"list name probes funcs=/debug/ 'sunw%debug'='main tick'\n" /* 12 */
			"list name probes name='trace' name=/^$/\n"		    /* 13 */
			"list name probes\n"					    /* 14 */
			"list name probes name=/[/\n"				    /* 15 */
			"list probes trace=on\n"				    /* 16 */
			"connect &nosuch name=tl_thr\n"				    /* 17 */
			"enable $nosuch\n"					    /* 18 */
			"list name keys probes name=/pre/\n"			    /* 19 */
			"list name nokey /^lin/ probes name=tl_main_str\n"	    /* 20 */
			"source bad.prex\n"					    /* 21 */
			"list name probes name=tl_main_str $all\n"		    /* 22 */
			"list probes name='bad \n"				    /* 23 */
			"list name probes $nosuch\n"				    /* 24 */
			"list name probes name=/\\(/ name=tl_child\n"		    /* 25 */
			"create $bad name=/\\(/ name=tl_main_tick\n"		    /* 26 */
			"list name probes $bad\n"				    /* 27 */
			"quit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want),
		 STOPPED "name=tl_main_tick \n"
			 "name=tl_main_tick \n"
			 "name=tl_main_str \n"
			 "name=tl_thr \n"
			 "name=tl_thr \n"
			 "name=tl_thr \n"
			 "name=tl_pre_tick \n"
			 "name=tl_thr \n"
			 "name=tl_child \n"
			 "name=tl_main_str \n"
			 "name=tl_main_tick \n"
			 "name=tl_main_str \n"
			 "name=tl_pre_tick keys=tl pre \n"
			 "name=tl_main_str <no attr> line=%d \n"
			 "name=tl_thr \n"
			 /* a bad regex matches nothing; the rest of the command runs */
			 "name=tl_child \n"
			 "name=tl_main_tick \n",
		 source_line("tests/helpers/tl_probes.c", "TNF_PROBE_1(tl_main_str"));
	assert_string_equal(out, want);
	snprintf(want, sizeof(want),
		 "\"<STDIN>\", line 15: semantic error: invalid regular expression /[/: "
		 "Invalid regular expression\n"
		 "\"<STDIN>\", line 16: syntax error on or before \"trace\"\n"
		 "prex: numbers and the words prex reserves are quoted in selectors: "
		 "line='221', 'enable'='on'\n"
		 "\"<STDIN>\", line 17: semantic error: no function named \"&nosuch\"\n"
		 "\"<STDIN>\", line 18: semantic error: no set named \"$nosuch\"\n"
		 "\"bad.prex\", line 3: semantic error: invalid regular expression /\\(/: "
		 "Unmatched ( or \\(\n"
		 "\"<STDIN>\", line 22: syntax error on or before \"$all\"\n"
		 "\"<STDIN>\", line 23: syntax error on or before \"'\"\n"
		 "\"<STDIN>\", line 24: semantic error: missing or invalid set\n"
		 "\"<STDIN>\", line 25: semantic error: invalid regular expression /\\(/: "
		 "Unmatched ( or \\(\n"
		 "\"<STDIN>\", line 26: semantic error: invalid regular expression /\\(/: "
		 "Unmatched ( or \\(\n");
	assert_string_equal(err, want);
	prex_close_fds(x);
}

/*
 * The original's regex dialect (ed(1), POSIX basic): \( \) groups,
 * \{m,n\} intervals and back-references work; ( ) + ? { | are plain
 * characters, and glibc's \+ \? \| are too; a backslash escapes any
 * character inside /.../; // and /\(/ are invalid; a leading * is plain.
 */
static void test_selectors_basic_regex(void **state)
{
	static char out[65536], err[8192];
	const char *opts[] = {"-o", NULL, "-l", pre_lib, NULL};
	char trace[PATH_MAX];
	struct prex *x;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "bre");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "list name probes name=/^tl_\\(main\\)_t/\n"	   /* 1: group */
			"list name probes name=/^tl_m\\{1,2\\}ain_str$/\n" /* 2: interval */
			"list name probes name=/\\(i\\).*\\1/\n"	   /* 3: back-reference */
			"list name probes name=/tl_thr|tl_child/\n"	   /* 4: | is plain */
			"list name probes name=/^tl_th+r$/\n"		   /* 5: + is plain */
			"list name probes name=/^tl_th\\+r$/\n"		   /* 6: \+ is + */
			"list name probes name=/^tl_thr\\?$/\n"		   /* 7: \? is ? */
			"list name probes name=/(tl_thr)/\n"		   /* 8: ( ) are plain */
			"list name probes name=/^tl_c{0}hild/\n"	   /* 9: { is plain */
			"list name probes name=/"
			"*tick/\n"				     /* 10: leading * */
			"list name probes name=/x\\\\/\n"	     /* 11: \\ in /.../ */
			"list name probes name=/^tl_\\thr$/\n"	     /* 12: \t is t */
			"list name probes name=/tl_t.*r$/ name=//\n" /* 13: // */
			"list name probes name=/\\(/\n"		     /* 14: \( alone */
			"list name probes name=/^tl_c\\/hild/ name=/^tl_chil\\d$/\n" /* 15 */
			"quit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, STOPPED "name=tl_main_tick \n"
					 "name=tl_main_str \n"
					 "name=tl_main_tick \n"
					 "name=tl_thr \n"
					 /* 13: the invalid // matches nothing, the other runs */
					 "name=tl_thr \n"
					 "name=tl_child \n");
	assert_string_equal(
		err, "\"<STDIN>\", line 13: semantic error: invalid regular expression //: "
		     "empty\n"
		     "\"<STDIN>\", line 14: semantic error: invalid regular expression /\\(/: "
		     "Unmatched ( or \\(\n");
	prex_close_fds(x);
}

/* `list tracefile` prints the name as given with -o, as the original did (not made absolute). */
static void test_list_tracefile_as_typed(void **state)
{
	static char out[8192], err[8192];
	const char *opts[] = {"-o", "rel-typed.tnf", NULL};
	char path[PATH_MAX];
	struct prex *x;
	struct stat st;

	(void)state;
	tl_require_root();
	prex_paths();
	snprintf(path, sizeof(path), "%s/rel-typed.tnf", work_dir);
	unlink(path);
	x = prex_spawn(opts, true, work_dir, NULL);
	writes(x->in_w, "list tracefile\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, STOPPED "Current trace file is: rel-typed.tnf\n");
	assert_string_equal(err, "");
	assert_int_equal(stat(path, &st), 0);
	unlink(path);
	prex_close_fds(x);
}

/* The history is replayed on a dlopened library's probes before its constructor runs. */
static void test_history_replay_dlopen(void **state)
{
	static char out[8192], dumped[65536];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX], want[1024];
	struct prex *x;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "replay");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	/* $p is copied when used: redefining it later changes nothing */
	writes(x->in_w, "create $p name=tl_plug_ctor name=tl_main_str\n"
			"enable $p\n"
			"create $p name=tl_plug_tick\n"
			"untrace name=tl_main_str\n"
			"list history\n"
			"continue\n");
	target_ready(x);
	tl_send(x->tgt, "dlopen %s", plug_lib);
	tl_expect(x->tgt, "dlopen ok");
	tl_send(x->tgt, "fireplug 3");
	tl_expect(x->tgt, "firedplug 3");
	tl_send(x->tgt, "fire 1");
	tl_expect(x->tgt, "fired 1");
	tl_send(x->tgt, "exit 0");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	snprintf(want, sizeof(want),
		 STOPPED "[0] enable  'name'='tl_plug_ctor' 'name'='tl_main_str' \n"
			 "[1] untrace 'name'='tl_main_str' \n");
	assert_string_equal(out, want);
	assert_int_equal(dump(trace, dumped, sizeof(dumped)), 0);
	assert_int_equal(count_events(dumped, "tl_plug_ctor", "constructor"), 1);
	assert_int_equal(count_events(dumped, "tl_plug_tick", NULL), 0);
	assert_int_equal(count_events(dumped, "tl_main_str", NULL), 0);
	prex_close_fds(x);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* $HOME/.prexrc runs first, then ./.prexrc, then stdin; errors name the file. */
static void test_prexrc(void **state)
{
	static char out[8192], err[8192], want[8192];
	char rc_home[PATH_MAX + 16], rc_here[PATH_MAX + 16], trace[PATH_MAX];
	const char *opts[] = {"-o", NULL, NULL};
	struct prex *x;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "prexrc");
	opts[1] = trace;
	snprintf(rc_home, sizeof(rc_home), "%s/.prexrc", home_dir);
	snprintf(rc_here, sizeof(rc_here), "%s/.prexrc", work_dir);
	write_file(rc_home, "create $h name=tl_main_tick\nbogus\n");
	write_file(rc_here, "create $c name=tl_main_str\nlist sets\n");
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "list name probes $h $c\nlist name probes $c\n");
	close(x->in_w); /* EOF of a script: quit */
	assert_int_equal(prex_wait(x), 0);
	unlink(rc_home);
	unlink(rc_here);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, STOPPED "$all      'keys'=/.*/ \n"
					 "$h        'name'='tl_main_tick' \n"
					 "$c        'name'='tl_main_str' \n"
					 "name=tl_main_str \n");
	snprintf(want, sizeof(want),
		 "\"%s\", line 2: syntax error on or before \"bogus\"\n"
		 "\"<STDIN>\", line 1: syntax error on or before \"$c\"\n",
		 rc_home);
	assert_string_equal(err, want);
	close(x->out.fd);
	close(x->err.fd);
}

/* ^C (SIGINT) while the target runs: the prompt comes back with it stopped. */
static void test_sigint_stops_target(void **state)
{
	static char dumped[65536];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;
	pid_t pid;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "sigint");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "continue\n");
	rd_until(&x->out, "Target process stopped");
	pid = target_ready(x);
	tl_send(x->tgt, "ping");
	tl_expect(x->tgt, "pong"); /* running, prex in its run loop */
	kill(x->pid, SIGINT);
	rd_until(&x->out, "Target process stopped");
	rd_until(&x->out, "Type \"continue\"");
	tl_assert_all_stopped(pid, "target after ^C");
	writes(x->in_w, "enable name=tl_main_tick\ncontinue\n");
	tl_send(x->tgt, "fire 2");
	tl_expect(x->tgt, "fired 2");
	kill(x->pid, SIGINT);
	rd_until(&x->out, "Target process stopped");
	tl_assert_all_stopped(pid, "target after the second ^C");
	writes(x->in_w, "quit\n"); /* DEFAULT: kills what prex started */
	assert_int_equal(prex_wait(x), 0);
	tl_assert_exits(pid, "target after quit");
	assert_int_equal(dump(trace, dumped, sizeof(dumped)), 0);
	assert_int_equal(count_events(dumped, "tl_main_tick", NULL), 2);
	prex_close_fds(x);
}

/* quit resume / suspend / kill, and the end of a script (quit). */
static void test_quit_variants(void **state)
{
	static const char *const how[] = {"quit resume\n", "quit suspend\n", "quit kill\n", ""};
	size_t i;

	(void)state;
	tl_require_root();
	for (i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		const char *opts[] = {"-o", NULL, NULL};
		char trace[PATH_MAX], name[32];
		struct prex *x;
		pid_t pid;

		snprintf(name, sizeof(name), "quit%zu", i);
		fresh_trace(trace, sizeof(trace), name);
		opts[1] = trace;
		x = prex_spawn(opts, true, NULL, NULL);
		writes(x->in_w, "continue\n");
		pid = target_ready(x);
		tl_send(x->tgt, "ping");
		tl_expect(x->tgt, "pong");
		kill(x->pid, SIGINT);
		rd_until(&x->out, "Type \"continue\"");
		if (*how[i])
			writes(x->in_w, how[i]);
		else
			close(x->in_w);
		assert_int_equal(prex_wait(x), 0);
		if (i == 0) {
			tl_send(x->tgt, "tracer");
			tl_expect(x->tgt, "tracer 0");
		} else if (i == 1) {
			tl_assert_job_stopped(pid, "target after quit suspend");
		} else {
			tl_assert_exits(pid, "target after quit kill / end of script");
		}
		if (*how[i])
			close(x->in_w);
		close(x->out.fd);
		close(x->err.fd);
	}
}

/* The target execs (prex lets it go and ends), or is killed (prex reports it). */
static void test_exec_and_targgone(void **state)
{
	static char err[8192], want[2 * PATH_MAX];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;
	pid_t pid;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "exec");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "continue\n");
	pid = target_ready(x);
	tl_send(x->tgt, "exec %s %d %d", probes_prog, x->cfd, x->rfd);
	assert_int_equal(prex_wait(x), 0);
	rd_until(&x->err, "target process exec'd");
	snprintf(want, sizeof(want), "prex: target process exec'd %s; resuming it", probes_prog);
	assert_string_equal(x->err.line, want);
	/* the new image runs, untraced */
	tl_expect(x->tgt, "ready ");
	tl_send(x->tgt, "tracer");
	tl_expect(x->tgt, "tracer 0");
	tl_send(x->tgt, "exit 0");
	tl_assert_exits(pid, "the exec'd target");
	prex_close_fds(x);

	fresh_trace(trace, sizeof(trace), "gone");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "continue\n");
	target_ready(x);
	tl_send(x->tgt, "kill 9");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(err, "prex: target process ended without calling exit (signal 9)\n");
	prex_close_fds(x);
}

/* Attach (-p): default file name under $TMPDIR; a second attach keeps the file. */
static void test_attach_tracefile(void **state)
{
	static char out[4096], err[4096], want[3 * PATH_MAX];
	const char *opts[] = {"-p", NULL, NULL, NULL, NULL, NULL, NULL};
	char pidstr[16], other[PATH_MAX], tmp[PATH_MAX];
	struct tl_proc *p;
	struct prex *x;
	struct stat st;

	(void)state;
	tl_require_root();
	prex_paths();
	snprintf(tmp, sizeof(tmp), "%s/tmp", tmpdir);
	mkdir(tmp, 0700);
	p = tl_start_target(probes_prog, 1);
	snprintf(pidstr, sizeof(pidstr), "%d", p->pid);
	opts[1] = pidstr;
	opts[2] = "-s";
	opts[3] = "abc"; /* 0 KB, as the original's atoi: raised to the minimum */
	x = prex_spawn(opts, false, NULL, tmp);
	writes(x->in_w, "list tracefile\nquit\n"); /* plain quit resumes an attached one */
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want), STOPPED "Current trace file is: %s/trace-%d\n", tmp, p->pid);
	assert_string_equal(out, want);
	assert_string_equal(err, "prex: trace file size 0 KB is below the minimum; using 128 KB\n");
	snprintf(want, sizeof(want), "%s/trace-%d", tmp, p->pid);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_size, 131072);
	assert_int_equal(st.st_mode & 0777, 0600);
	prex_close_fds(x);
	tl_send(p, "ping");
	tl_expect(p, "pong");

	fresh_trace(other, sizeof(other), "attach-other");
	opts[2] = "-o";
	opts[3] = other;
	x = prex_spawn(opts, false, NULL, tmp);
	writes(x->in_w, "list tracefile\nquit resume\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want), STOPPED "Trace file: %s/trace-%d\n", tmp, p->pid);
	assert_string_equal(out, want);
	snprintf(want, sizeof(want),
		 "prex: the target already has trace file %s/trace-%d; -o and -s are ignored\n",
		 tmp, p->pid);
	assert_string_equal(err, want);
	assert_int_equal(access(other, F_OK), -1);
	prex_close_fds(x);
	tl_send(p, "tracer");
	tl_expect(p, "tracer 0");

	/*
	 * A process without libtnfprobe.so.1: attached for its USDT probes
	 * only, with a message and no trace file; quit leaves it running.
	 */
	p = tl_start_target(probes_prog, 0);
	snprintf(pidstr, sizeof(pidstr), "%d", p->pid);
	opts[2] = NULL;
	x = prex_spawn(opts, false, NULL, tmp);
	writes(x->in_w, "list tracefile\n");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, STOPPED "Trace file: (none)\n");
	snprintf(want, sizeof(want),
		 "prex: process %d has no libtnfprobe.so.1: only its USDT probes can be "
		 "controlled\n",
		 p->pid);
	assert_string_equal(err, want);
	snprintf(want, sizeof(want), "%s/trace-%d", tmp, p->pid);
	assert_int_equal(access(want, F_OK), -1);
	prex_close_fds(x);
	tl_send(p, "tracer");
	tl_expect(p, "tracer 0");
}

/*
 * prex's messages share stderr (and stdout) with the target's own output,
 * a line at a time: each of its lines is one write(), so that no line of
 * the target's lands inside one of prex's.  prex -p on a target it did not
 * start (strace -f would hold a started one first), under `strace -f -e
 * trace=write`: every write prex (or its engine) makes to fd 1 or 2 ends a
 * line, among them "target process exited", written by the thread that
 * serves the target while the target runs.
 */
static void test_message_lines_one_write(void **state)
{
	static char strace[PATH_MAX], log[PATH_MAX], err[4096], line[16384];
	static const char *prefix[] = {strace, "-f", "-qq", "-e", "trace=write", "-s", "8192",
				       "-o", log, NULL};
	const char *opts[] = {"-p", NULL, NULL};
	char pidstr[16];
	int writes_seen = 0, exited_seen = 0;
	struct tl_proc *p;
	struct prex *x;
	char *asan;
	FILE *f;

	(void)state;
	tl_require_root();
	if (!tl_find_in_path("strace", strace, sizeof(strace))) {
		print_message("SKIP: strace is not installed (Debian package strace)\n");
		skip();
	}
	prex_paths();
	snprintf(log, sizeof(log), "%s/prex-writes.strace", tmpdir);
	p = tl_start_target(probes_prog, 1);
	snprintf(pidstr, sizeof(pidstr), "%d", p->pid);
	opts[1] = pidstr;
	asan = tl_asan_leaks_off();
	prex_prefix = prefix;
	x = prex_spawn(opts, false, NULL, NULL);
	prex_prefix = NULL;
	tl_asan_leaks_restore(asan);
	rd_until(&x->out, "Type \"continue\"");
	writes(x->in_w, "continue\n");
	tl_send(p, "exit 0");
	rd_until(&x->err, "target process exited");
	close(x->in_w);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	close(x->out.fd);
	close(x->err.fd);
	tl_assert_exits(p->pid, "target after exit 0");

	f = fopen(log, "re");
	if (!f)
		fail_msg("%s: %s", log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		const char *w = strstr(line, " write(1, \"");

		if (!w)
			w = strstr(line, " write(2, \"");
		if (!w)
			continue;
		writes_seen++;
		if (strstr(w, "target process exited\\n\", "))
			exited_seen++;
		/* the string, not truncated (-s), ends with the line's newline */
		if (!strstr(w, "\\n\", "))
			fail_msg("a write of part of a line: %s", line);
	}
	fclose(f);
	if (!exited_seen)
		fail_msg("no write of \"target process exited\" among %d writes in %s", writes_seen,
			 log);
}

/* help, help <command>, help <topic>, and an unknown topic. */
static void test_help(void **state)
{
	static char out[65536], err[4096];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "help");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "help\nhelp quit\nhelp create\nhelp processes\nhelp intro\n"
			"help functions\nhelp kernel_mode\nhelp probe_spec\nhelp set_spec\n"
			"help nosuch\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_non_null(strstr(out, "Topics: intro functions kernel_mode probe_spec processes "
				    "set_spec\n"));
	assert_non_null(strstr(out, "quit [kill | resume | suspend]\n"));
	assert_non_null(strstr(out, "create &function symbol\n"));
	assert_non_null(strstr(out, "<trace file>.<pid>"));
	assert_non_null(strstr(out, "prex -k controls the kernel's probes"));
	assert_non_null(strstr(out, "$all (keys=/.*/)"));
	/* the original's answer to an unknown topic: on stdout, the general help after it */
	assert_non_null(strstr(out, "\nNo help for nosuch\nCommands:\n"));
	assert_string_equal(err, "");
	prex_close_fds(x);
}

/*
 * prex -f on a shell script: a pipeline (fork + exec of tl_probes, which
 * forks a child), a plain exec of tl_probes that dlopens the plugin, and a
 * background subshell.  Every process is followed and every exec'd image
 * traces into <file>.<pid>, with the history applied.
 */
static void test_follow_script(void **state)
{
	static char err[65536], dumped[65536];
	const char *opts[] = {"-f", "-o", NULL, "/bin/sh", NULL, NULL};
	char trace[PATH_MAX], script[256], cmds[256], text[6 * PATH_MAX], path[PATH_MAX + 300];
	int npids = 0;
	struct prex *x;
	const char *l;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "follow");
	opts[2] = trace;
	snprintf(script, sizeof(script), "%s/follow.sh", work_dir);
	snprintf(cmds, sizeof(cmds), "%s/follow.cmds", work_dir);
	snprintf(text, sizeof(text), "dlopen %s\nfireplug 2\nexit 0\n", plug_lib);
	write_file(cmds, text);
	snprintf(text, sizeof(text),
		 "printf 'fire 2\\nfork_fire 3\\nexit 0\\n' | %s >/dev/null\n"
		 "%s 3 4 3<%s 4>/dev/null\n"
		 "(printf 'fire 1\\nexit 0\\n' | %s >/dev/null) &\n"
		 "wait\n",
		 probes_prog, probes_prog, cmds, probes_prog);
	write_file(script, text);
	opts[4] = script;
	x = prex_spawn(opts, false, NULL, NULL);
	writes(x->in_w, "enable name=tl_main_tick name=tl_child name=tl_plug_ctor\ncontinue\n");
	tl_watchdog_extend(tl.test_timeout_s);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->err, err, sizeof(err));
	/* "prex: process P exec'd PROG; tracing into FILE.P", once per image */
	for (l = err; (l = strstr(l, "exec'd ")); l++) {
		assert_non_null(strstr(l, "; tracing into "));
		npids++;
	}
	if (npids != 3)
		fail_msg("expected 3 exec'd images in prex's messages, got %d:\n%s", npids, err);
	assert_non_null(strstr(err, "forked"));
	/* find the files <trace>.<pid> */
	{
		DIR *d = opendir(tmpdir);
		struct dirent *de;
		const char *base = strrchr(trace, '/') + 1;
		int ticks = 0, plugs = 0, kids = 0, files = 0;

		assert_non_null(d);
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, base, strlen(base)) ||
			    de->d_name[strlen(base)] != '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
			assert_int_equal(dump(path, dumped, sizeof(dumped)), 0);
			files++;
			ticks += count_events(dumped, "tl_main_tick", NULL);
			plugs += count_events(dumped, "tl_plug_ctor", "constructor");
			kids += count_events(dumped, "tl_child", NULL);
			unlink(path);
		}
		closedir(d);
		assert_int_equal(files, 3);
		assert_int_equal(ticks, 3);
		assert_int_equal(plugs, 1);
		assert_int_equal(kids, 3);
	}
	prex_close_fds(x);
}

/* ---- through a pty: the prompt, line editing and ^C ---- */

struct ptyx {
	pid_t pid;
	struct rd m; /* the master */
	struct tl_proc *tgt;
};

static void pty_start(struct ptyx *t, const char *trace)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 200};
	char cfd[16], rfd[16];
	char *argv[] = {"prex", "-o", (char *)trace, probes_prog, cfd, rfd, NULL};
	char **env;
	int master;
	pid_t pid;

	prex_paths();
	t->tgt = tl_proc_new();
	snprintf(cfd, sizeof(cfd), "%d", t->tgt->t_cmd_r);
	snprintf(rfd, sizeof(rfd), "%d", t->tgt->t_reply_w);
	env = prex_env(NULL, "vt100");
	fflush(stdout);
	fflush(stderr);
	pid = forkpty(&master, NULL, NULL, &ws);
	assert_true(pid >= 0);
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		tl_set_cloexec(t->tgt->t_cmd_r, 0);
		tl_set_cloexec(t->tgt->t_reply_w, 0);
		if (chdir(work_dir))
			_exit(126);
		execve(prex_prog, argv, env);
		_exit(127);
	}
	free(env);
	tl_set_cloexec(master, 1);
	tl_track_pid(pid);
	tl_proc_handed_over(t->tgt);
	t->pid = pid;
	t->m.fd = master;
	t->m.len = 0;
}

static void test_pty_prompt_editing_ctrl_c(void **state)
{
	static struct ptyx t;
	static char dumped[65536];
	char trace[PATH_MAX];
	pid_t pid;

	(void)state;
	tl_require_root();
	prex_paths();
	fresh_trace(trace, sizeof(trace), "pty");
	pty_start(&t, trace);
	rd_until_raw(&t.m, "Target process stopped");
	rd_until_raw(&t.m, "prex> ");
	/* a typo fixed with backspace */
	writes(t.m.fd, "lisx\x7ft sets\r");
	rd_until_raw(&t.m, "$all      'keys'=/.*/");
	rd_until_raw(&t.m, "prex> ");
	/* $zz is the last set: the completion of $a must still be $all */
	writes(t.m.fd, "create $zz keys=x\r");
	rd_until_raw(&t.m, "prex> ");
	writes(t.m.fd, "ena\t$a\t\r");
	rd_until_raw(&t.m, "prex> ");
	writes(t.m.fd, "list history\r"); /* Tab completed "enable" and "$all" */
	rd_until_raw(&t.m, "[0] enable  'keys'=/.*/");
	rd_until_raw(&t.m, "prex> ");
	/* after name=, Tab completes a probe name; a keys word too */
	writes(t.m.fd, "trace name=tl_main_t\t keys=ch\t\r");
	rd_until_raw(&t.m, "prex> ");
	writes(t.m.fd, "list history\r");
	rd_until_raw(&t.m, "[1] trace   'name'='tl_main_tick' 'keys'='child' ");
	rd_until_raw(&t.m, "prex> ");
	writes(t.m.fd, "list name 'enable' probes name=tl_main_tick\r");
	rd_until_raw(&t.m, "name=tl_main_tick enable=on");
	rd_until_raw(&t.m, "prex> ");
	writes(t.m.fd, "continue\r");
	pid = tgt_ready(t.tgt);
	tl_send(t.tgt, "fire 3");
	tl_expect(t.tgt, "fired 3");
	/* ^C while the target runs: the terminal sends SIGINT to prex only */
	writes(t.m.fd, "\x03");
	rd_until_raw(&t.m, "Target process stopped");
	rd_until_raw(&t.m, "prex> ");
	tl_assert_all_stopped(pid, "target after ^C on the terminal");
	/* ^P recalls the last line from the history */
	writes(t.m.fd, "\x10\x10\r");
	rd_until_raw(&t.m, "name=tl_main_tick enable=on");
	rd_until_raw(&t.m, "prex> ");
	writes(t.m.fd, "quit\r");
	{
		int st = 0;

		if (tl_waitpid_timeout(t.pid, &st, 0, tl.timeout_ms) != t.pid)
			fail_msg("prex on the pty did not exit");
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	tl_assert_exits(pid, "target after quit on the pty");
	assert_int_equal(dump(trace, dumped, sizeof(dumped)), 0);
	assert_int_equal(count_events(dumped, "tl_main_tick", NULL), 3);
	close(t.m.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_usage_errors),
		TL_TEST(test_help_option),
		TL_TEST(test_session_every_command),
		TL_TEST(test_selectors),
		TL_TEST(test_selectors_basic_regex),
		TL_TEST(test_list_tracefile_as_typed),
		TL_TEST(test_history_replay_dlopen),
		TL_TEST(test_prexrc),
		TL_TEST(test_sigint_stops_target),
		TL_TEST(test_quit_variants),
		TL_TEST(test_exec_and_targgone),
		TL_TEST(test_attach_tracefile),
		TL_TEST(test_message_lines_one_write),
		TL_TEST(test_help),
		TL_TEST(test_follow_script),
		TL_TEST(test_pty_prompt_editing_ctrl_c),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
