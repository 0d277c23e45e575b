// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex on bad input and edge cases (adversarial round): a SIGINT at the
 * prompt in the middle of a line read from a pipe, NUL bytes in a line,
 * `source` of a directory and of a file that sources itself.  prex runs
 * as in test_prex.c: commands on a pipe, HOME and the current directory
 * in a private directory, the target tl_probes on its own pipes.
 */
#include <stdbool.h>
#include <sys/ioctl.h>
#include "testlib.h"
#include "probelib.h"

#include "prexlib.h"

/*
 * Waits until prex (@pid, single reader of @in_w's pipe) has taken every
 * byte written and sits in read(2) again, i.e. a signal now interrupts
 * that read.  Polls /proc: there is no event to wait for.
 */
static void wait_reading(pid_t pid, int in_w)
{
	long long end = tl_now_ms() + tl.timeout_ms;
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (;;) {
		int queued = -1, fd;
		ssize_t n = -1;

		if (ioctl(in_w, FIONREAD, &queued) == 0 && queued == 0) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, buf, sizeof(buf) - 1);
				close(fd);
			}
			/* "0 0x0 ..." : blocked in read on fd 0 (x86-64 and arm64 differ) */
			if (n > 0) {
				buf[n] = '\0';
				if (!strncmp(buf, "0 0x0 ", 6) || !strncmp(buf, "63 0x0 ", 7))
					return;
			}
		}
		if (tl_now_ms() > end)
			fail_msg("prex did not go back to reading its stdin");
		usleep(1000); /* polling interval, not a synchronisation */
	}
}

/* `continue`, then ^C once the target runs: back at the prompt, target stopped. */
static pid_t run_then_stop(struct prex *x)
{
	pid_t pid;

	writes(x->in_w, "continue\n");
	rd_until(&x->out, "Type \"continue\""); /* the first stop */
	pid = target_ready(x);
	tl_send(x->tgt, "ping");
	tl_expect(x->tgt, "pong"); /* running, prex in its run loop */
	kill(x->pid, SIGINT);
	rd_until(&x->out, "Type \"continue\"");
	tl_assert_all_stopped(pid, "target after ^C");
	return pid;
}

/* ---------------------------------------------------------------- */

/*
 * BUG (fixed): a SIGINT while prex, at the prompt, had read part of a line
 * from a pipe ran the part as a whole command, then took the stream's
 * error flag for the end of the input and quit, killing the target.
 */
static void test_sigint_mid_line(void **state)
{
	static char out[8192], err[8192];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;
	pid_t pid;

	(void)state;
	tl_require_root();
	prex_paths();
	trace_path(trace, sizeof(trace), "edges-sigint");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	pid = run_then_stop(x);

	writes(x->in_w, "list se");
	wait_reading(x->pid, x->in_w);
	kill(x->pid, SIGINT);
	/* prex must still be there, reading the rest of the line */
	wait_reading(x->pid, x->in_w);
	tl_assert_all_stopped(pid, "target after ^C at the prompt");
	writes(x->in_w, "ts\nquit resume\n");
	assert_int_equal(prex_wait(x), 0);
	/* resumed, not killed: it still answers */
	tl_send(x->tgt, "ping");
	tl_expect(x->tgt, "pong");
	tl_send(x->tgt, "exit 0");
	tl_assert_exits(pid, "target after exit 0");
	/* only now: the target held prex's stdout and stderr open */
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, "$all      'keys'=/.*/ \n");
	assert_string_equal(err, "");
	prex_close_fds(x);
}

/*
 * Runs prex on the test target, stopped by a `continue` and a SIGINT
 * first (so line 1 of stdin is that continue), then the @len bytes of
 * @in, which must end with `quit`; prex's stdout and stderr in @out, @err.
 */
static void run_script(const char *name, const char *in, size_t len, char *out, size_t osz,
		       char *err, size_t esz)
{
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;
	pid_t pid;

	tl_require_root();
	prex_paths();
	trace_path(trace, sizeof(trace), name);
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	pid = run_then_stop(x);
	assert_int_equal(tl_write_all(x->in_w, in, len), 0);
	assert_int_equal(prex_wait(x), 0);
	tl_assert_exits(pid, "target after quit");
	rd_rest(&x->out, out, osz);
	rd_rest(&x->err, err, esz);
	prex_close_fds(x);
}

/*
 * BUG (fixed): a NUL byte cut the line short, so `quit\0 resume` was run
 * as `quit`.  Now the statement is a syntax error naming "\0".
 */
static void test_nul_byte(void **state)
{
	static char out[8192], err[8192];
	static const char in[] = "quit\0 resume\nlist\0 sets\n\0\nlist sets\nquit\n";

	(void)state;
	run_script("edges-nul", in, sizeof(in) - 1, out, sizeof(out), err, sizeof(err));
	assert_string_equal(out, "$all      'keys'=/.*/ \n");
	assert_string_equal(err, "\"<STDIN>\", line 2: syntax error on or before \"\\0\"\n"
				 "\"<STDIN>\", line 3: syntax error on or before \"\\0\"\n"
				 "\"<STDIN>\", line 4: syntax error on or before \"\\0\"\n");
}

/*
 * Lexing as the original: a '#' comment ends at its newline even after a
 * trailing backslash (the next line ran inside the comment); a '#' in a
 * /regex/ is no comment; a CR is an invalid token, not a blank; a
 * backslash escapes any character inside /.../ (/x\\/ is a regex).
 */
static void test_lexing(void **state)
{
	static char out[8192], err[8192];
	static const char in[] = "list sets # a comment \\\n"
				 "list fcns\n"
				 "list name probes name=/a#b/ \\\n"
				 "name=tl_thr\n"
				 "list sets\r\n"
				 "list name probes name=/x\\\\/\n"
				 "quit\n";

	(void)state;
	run_script("edges-lex", in, sizeof(in) - 1, out, sizeof(out), err, sizeof(err));
	assert_string_equal(out, "$all      'keys'=/.*/ \n"
				 "&debug    tnf_probe_debug         \n"
				 "name=tl_thr \n");
	/* line 1 was run_then_stop's */
	assert_string_equal(err, "\"<STDIN>\", line 6: syntax error on or before \"\r\"\n");
}

/*
 * Scripted sessions, each with its exact stdout (after the first stop's
 * banner), stderr and exit status: the commands, selector forms and
 * errors, as the original prex answers them (reference §5), and the
 * places where ours differs on purpose (README "prex and the original").
 * The target is tl_probes, stopped before main: its probes are tl_main_tick
 * ("tl main"), tl_main_str ("tl main"), tl_thr, tl_child and tl_vchild.
 */
struct session {
	const char *name, *in, *out, *err;
	int status;
};

static const struct session sessions[] = {
	{"selector-forms",
	 "list name probes tl\n"
	 "list name probes 'tl main'\n"
	 "list name probes main\n"
	 "list name probes name=tl_thr name=/vch/\n"
	 "list name probes /^tl m/\n"
	 "list name 'keys' probes name='tl_child'\n"
	 "list /^na/ probes name=tl_main_str\n"
	 "quit\n",
	 /* a value is matched word by word: tl is in every keys, 'tl main' in none */
	 "name=tl_main_tick \nname=tl_main_str \nname=tl_thr \nname=tl_child \n"
	 "name=tl_vchild \n"
	 "name=tl_main_tick \nname=tl_main_str \n"
	 "name=tl_thr \nname=tl_vchild \n"
	 "name=tl_child keys=tl child \n"
	 "name=tl_main_str \n",
	 "", 0},
	{"probe-commands-and-history",
	 "enable name=tl_thr\n"
	 "disable $all\n"
	 "trace name=/main/\n"
	 "untrace 'name'='tl_child'\n"
	 "connect &debug name=tl_main_str\n"
	 "clear name=tl_main_str\n"
	 "enable\n"
	 "list history\n"
	 "list 'enable' 'trace' funcs probes name=tl_main_str name=tl_child\n"
	 "quit\n",
	 "[0] enable  'name'='tl_thr' \n"
	 "[1] disable 'keys'=/.*/ \n"
	 "[2] trace   'name'=/main/ \n"
	 "[3] untrace 'name'='tl_child' \n"
	 "[4] connect &debug 'name'='tl_main_str' \n"
	 "[5] clear   'name'='tl_main_str' \n"
	 /* as the original: an empty selector list is kept and matches nothing */
	 "[6] enable  \n"
	 "enable=off trace=on funcs=<no value> \n"
	 "enable=off trace=off funcs=<no value> \n",
	 "", 0},
	{"sets-and-functions",
	 "create $m name=/^tl_main/\n"
	 "create &tick tnf_probe_debug\n"
	 "create &debug main\n"
	 "list sets\n"
	 "list fcns\n"
	 "list name probes $m\n"
	 "quit\n",
	 "$all      'keys'=/.*/ \n"
	 "$m        'name'=/^tl_main/ \n"
	 "&tick     tnf_probe_debug         \n"
	 "&debug    main                    \n"
	 "name=tl_main_tick \nname=tl_main_str \n",
	 "", 0},
	{"unknown-names",
	 "enable $nosuch\n"
	 "list probes $nosuch\n"
	 "connect &nosuch name=tl_thr\n"
	 "connect &nosuch $all\n"
	 "quit\n",
	 "",
	 "\"<STDIN>\", line 1: semantic error: no set named \"$nosuch\"\n"
	 "\"<STDIN>\", line 2: semantic error: missing or invalid set\n"
	 "\"<STDIN>\", line 3: semantic error: no function named \"&nosuch\"\n"
	 "\"<STDIN>\", line 4: semantic error: no function named \"&nosuch\"\n",
	 0},
	{"bad-regex-runs-the-rest",
	 "create $s name=/\\(/ name=tl_thr\n"
	 "list sets\n"
	 "list name probes $s\n"
	 "list name probes // name=tl_child\n"
	 "quit\n",
	 "$all      'keys'=/.*/ \n"
	 "$s        'name'=/\\(/ 'name'='tl_thr' \n"
	 "name=tl_thr \nname=tl_child \n",
	 "\"<STDIN>\", line 1: semantic error: invalid regular expression /\\(/: "
	 "Unmatched ( or \\(\n"
	 "\"<STDIN>\", line 4: semantic error: invalid regular expression //: empty\n",
	 0},
	{"syntax-errors",
	 "quit now\n"
	 "list\n"
	 "enable name=\n"
	 "frobnicate $all\n"
	 "list sets extra\n"
	 "list probes name=tl_thr line=37\n"
	 "list probes $all enable=on\n"
	 "create $s\n"
	 "list sets\n"
	 "quit\n",
	 "$all      'keys'=/.*/ \n"
	 "$s        \n",
	 "\"<STDIN>\", line 1: syntax error on or before \"now\"\n"
	 "\"<STDIN>\", line 2: syntax error on or before \"\\n\"\n"
	 "\"<STDIN>\", line 3: syntax error on or before \"\\n\"\n"
	 "\"<STDIN>\", line 4: syntax error on or before \"frobnicate\"\n"
	 "\"<STDIN>\", line 5: syntax error on or before \"extra\"\n"
	 /* the two mistakes the README warns of get a hint */
	 "\"<STDIN>\", line 6: syntax error on or before \"37\"\n"
	 "prex: numbers and the words prex reserves are quoted in selectors: "
	 "line='221', 'enable'='on'\n"
	 "\"<STDIN>\", line 7: syntax error on or before \"enable\"\n"
	 "prex: numbers and the words prex reserves are quoted in selectors: "
	 "line='221', 'enable'='on'\n",
	 0},
	{"source",
	 "source /tmp/x.prex\n"
	 "source 'nosuch.prex'\n"
	 "quit\n",
	 "",
	 "\"<STDIN>\", line 1: syntax error on or before \"/tmp/\"\n"
	 "prex: a file name that is not a plain word goes in single quotes: "
	 "source '/path/to/file'\n"
	 "\"<STDIN>\", line 2: semantic error: cannot open \"nosuch.prex\": "
	 "No such file or directory\n",
	 0},
	/*
	 * A line over 1 MiB ends its source (reading on grew prex's memory
	 * without bound); stdin goes on.
	 */
	{"source-endless-line",
	 "source '/dev/zero'\n"
	 "list sets\n"
	 "quit\n",
	 "$all      'keys'=/.*/ \n",
	 "prex: /dev/zero: line 1 is longer than 1048576 bytes: the rest of it is not read\n", 0},
	/* ours runs a last line without its newline (the original dropped it) */
	{"last-line-unterminated", "list sets", "$all      'keys'=/.*/ \n", "", 0},
	/* the end of stdin is quit (DEFAULT: the target prex started is killed) */
	{"eof-is-quit", "list fcns\n", "&debug    tnf_probe_debug         \n", "", 0},
};

static void run_session(const struct session *t)
{
	static char out[65536], err[65536], want[65536];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX], name[128];
	struct prex *x;
	int st;

	snprintf(name, sizeof(name), "session-%s", t->name);
	trace_path(trace, sizeof(trace), name);
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	assert_int_equal(tl_write_all(x->in_w, t->in, strlen(t->in)), 0);
	close(x->in_w);
	x->in_w = -1;
	st = prex_wait(x);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	snprintf(want, sizeof(want), STOPPED "%s", t->out);
	if (strcmp(out, want) || strcmp(err, t->err) || st != t->status)
		fail_msg("session %s:\n--- stdout\n%s--- want\n%s--- stderr\n%s--- want\n%s"
			 "--- status %d, want %d",
			 t->name, out, want, err, t->err, st, t->status);
	close(x->out.fd);
	close(x->err.fd);
}

static void test_sessions(void **state)
{
	size_t i;

	(void)state;
	tl_require_root();
	prex_paths();
	for (i = 0; i < sizeof(sessions) / sizeof(sessions[0]); i++)
		run_session(&sessions[i]);
}

/* -o in a directory that does not exist: the message names the file; exit 1. */
static void test_tracefile_missing_dir(void **state)
{
	static char out[8192], err[8192];
	const char *opts[] = {"-o", "/nonexistent-tl-dir/x.tnf", NULL};
	struct prex *x;

	(void)state;
	tl_require_root();
	prex_paths();
	x = prex_spawn(opts, true, NULL, NULL);
	close(x->in_w);
	x->in_w = -1;
	assert_int_equal(prex_wait(x), 1);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(err, "prex: trouble initializing tracefile: file not found: "
				 "/nonexistent-tl-dir/x.tnf\n");
	close(x->out.fd);
	close(x->err.fd);
}

/*
 * Where the original crashed: `create &debug ...` freed a string literal,
 * and a few hundred connects overflowed its 2048-byte attribute buffer.
 * Ours redefines &debug and lists every connected function.
 */
static void test_original_crashes(void **state)
{
	static char in[65536], out[65536], err[8192], want[8192];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX];
	struct prex *x;
	size_t n = 0;
	int i;

	(void)state;
	tl_require_root();
	prex_paths();
	trace_path(trace, sizeof(trace), "edges-crashes");
	opts[1] = trace;
	n += snprintf(in + n, sizeof(in) - n, "create &debug tnf_probe_debug\n");
	for (i = 0; i < 300; i++)
		n += snprintf(in + n, sizeof(in) - n, "connect &debug name=tl_thr\n");
	n += snprintf(in + n, sizeof(in) - n, "list funcs probes name=tl_thr\nquit\n");
	x = prex_spawn(opts, true, NULL, NULL);
	assert_int_equal(tl_write_all(x->in_w, in, n), 0);
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	n = snprintf(want, sizeof(want), STOPPED "funcs=");
	for (i = 0; i < 300; i++)
		n += snprintf(want + n, sizeof(want) - n, "&debug ");
	snprintf(want + n, sizeof(want) - n, "\n");
	assert_string_equal(out, want);
	assert_string_equal(err, "");
	prex_close_fds(x);
}

/* A redefined set or function alias moves to the end of its list, as in the original. */
static void test_redefined_moves_to_end(void **state)
{
	static char out[8192], err[8192];
	static const char in[] = "create $a name=x\n"
				 "create $b name=y\n"
				 "create $a name=z\n"
				 "create &f1 main\n"
				 "create &f2 main\n"
				 "create &f1 main\n"
				 "list sets\n"
				 "list fcns\n"
				 "quit\n";

	(void)state;
	run_script("edges-redef", in, sizeof(in) - 1, out, sizeof(out), err, sizeof(err));
	assert_string_equal(out, "$all      'keys'=/.*/ \n"
				 "$b        'name'='y' \n"
				 "$a        'name'='z' \n"
				 "&debug    tnf_probe_debug         \n"
				 "&f2       main                    \n"
				 "&f1       main                    \n");
	assert_string_equal(err, "");
}

/*
 * BUG (fixed): `source DIR` was silently accepted (fopen opens a directory
 * and the read error looked like its end).  A file that sources itself
 * stops at the nesting limit with one message, and prex goes on.
 */
static void test_source_dir_and_loop(void **state)
{
	static char out[8192], err[8192];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX], path[PATH_MAX];
	struct prex *x;
	FILE *fp;

	(void)state;
	tl_require_root();
	prex_paths();
	snprintf(path, sizeof(path), "%s/adir", work_dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/loop", work_dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("source loop\n", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/cont", work_dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("list sets \\\n", fp); /* backslash-newline at the file's end */
	fclose(fp);
	trace_path(trace, sizeof(trace), "edges-source");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "source adir\nsource loop\nsource 'cont'\nsource nowhere\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, STOPPED "$all      'keys'=/.*/ \n");
	assert_string_equal(err,
			    "\"<STDIN>\", line 1: semantic error: cannot open \"adir\": Is a "
			    "directory\n"
			    "\"loop\", line 1: semantic error: cannot open \"loop\": files sourced "
			    "too deeply (a loop?)\n"
			    "\"<STDIN>\", line 4: semantic error: cannot open \"nowhere\": No such "
			    "file or directory\n");
	prex_close_fds(x);
}

/*
 * The 1 MiB cap on a line holds for a command continued over lines too:
 * backslash-newlines joined into one command without bound (an endless
 * `yes '\\'` grew prex's memory until it was killed).  Past the cap the
 * command is dropped with a message naming the file and the command's
 * line, the rest of the file is not read, and prex goes on on stdin.
 */
static void test_source_endless_continuation(void **state)
{
	static char out[8192], err[8192];
	const char *opts[] = {"-o", NULL, NULL};
	char trace[PATH_MAX], path[PATH_MAX];
	struct prex *x;
	FILE *fp;
	int i;

	(void)state;
	tl_require_root();
	prex_paths();
	snprintf(path, sizeof(path), "%s/endless", work_dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("list sets \\\n", fp);
	for (i = 0; i < 600000; i++) /* 1.2 MB, every line short */
		fputs("\\\n", fp);
	fputs("list fcns\n", fp); /* past the cap: not read */
	assert_int_equal(fclose(fp), 0);
	trace_path(trace, sizeof(trace), "edges-endless");
	opts[1] = trace;
	x = prex_spawn(opts, true, NULL, NULL);
	writes(x->in_w, "source endless\nlist sets\nquit\n");
	assert_int_equal(prex_wait(x), 0);
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, STOPPED "$all      'keys'=/.*/ \n");
	assert_string_equal(err, "prex: endless: the command of line 1 is continued past 1048576 "
				 "bytes: the rest of it is not read\n");
	prex_close_fds(x);
	unlink(path);
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

/* The next debug line of regex @re after @from is @want; returns past it. */
static const char *next_check(const char *from, const char *re, const char *want)
{
	const char *e = strstr(from, re);

	if (!e || strncmp(e + strlen(re), want, strlen(want)))
		fail_msg("expected \"%s%s\" after \"%.60s\"", re, want, from);
	return e + 1;
}

/*
 * A regex with more than one repetition is compiled first in a child
 * process, which a regex too slow to compile costs up to a second.  The
 * verdict is kept per regex: the same regex again pays no second child,
 * whether it passed (/x*y*\/) or was refused (the second one compiles for
 * seconds); the 64 newest verdicts are kept, so past 64 others the first
 * is checked again.  The time saved is the only effect, so the test
 * counts the checks, as prex reports them with TNFCTL_DEBUG.
 */
static void test_regex_check_cached(void **state)
{
	static char in[16384], out[65536], err[262144];
	static const char fast[] = "prex: debug: regex /x*y*/: ";
	static const char slow[] = "prex: debug: regex /\\(\\(e*\\)\\{150\\}\\)\\{150\\}/: ";
	const char *verdict[2], *e;
	size_t n = 0;
	int i;

	(void)state;
	n += snprintf(in + n, sizeof(in) - n,
		      "create $a name=/x*y*/\n"
		      "create $b name=/x*y*/\n"
		      "create $c name=/\\(\\(e*\\)\\{150\\}\\)\\{150\\}/\n"
		      "create $d name=/\\(\\(e*\\)\\{150\\}\\)\\{150\\}/\n");
	for (i = 0; i < 64; i++)
		n += snprintf(in + n, sizeof(in) - n, "create $f name=/x*y*z%d*/\n", i);
	n += snprintf(in + n, sizeof(in) - n, "create $g name=/x*y*/\nquit\n");
	assert_int_equal(setenv("TNFCTL_DEBUG", "1", 1), 0);
	run_script("edges-regex-cache", in, n, out, sizeof(out), err, sizeof(err));
	unsetenv("TNFCTL_DEBUG");
	/* $a checks, $b reuses; 63 others leave it in the cache, the 64th evicts it */
	if (!strstr(err, "prex: debug: regex /x*y*z63*/: checked in a child process\n"))
		fail_msg("no check of the 64th other regex:\n%s", err);
	assert_int_equal(count_of(err, "checked in a child process\n"), 2 + 1 + 64);
	assert_int_equal(count_of(err, "verdict of an earlier check reused\n"), 2);
	e = next_check(err, fast, "checked in a child process\n");
	e = next_check(e, fast, "verdict of an earlier check reused\n");
	next_check(e, fast, "checked in a child process\n");
	e = next_check(err, slow, "checked in a child process\n");
	next_check(e, slow, "verdict of an earlier check reused\n");
	/*
	 * The same verdict both times ("too complex" where the child was too
	 * slow); stdin's lines 4 and 5, after run_script()'s "continue".
	 */
	verdict[0] = strstr(err, "\"<STDIN>\", line 4: ");
	verdict[1] = strstr(err, "\"<STDIN>\", line 5: ");
	assert_true(!verdict[0] == !verdict[1]);
	if (verdict[0]) {
		n = strcspn(verdict[0], "\n");
		assert_int_equal(n, strcspn(verdict[1], "\n"));
		assert_memory_equal(verdict[0] + 20, verdict[1] + 20, n - 20);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_sigint_mid_line),
		TL_TEST(test_nul_byte),
		TL_TEST(test_lexing),
		TL_TEST(test_redefined_moves_to_end),
		TL_TEST(test_sessions),
		TL_TEST(test_original_crashes),
		TL_TEST(test_tracefile_missing_dir),
		TL_TEST(test_source_dir_and_loop),
		TL_TEST(test_source_endless_continuation),
		TL_TEST(test_regex_check_cached),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
