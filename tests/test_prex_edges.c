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
	rd_rest(&x->out, out, sizeof(out));
	rd_rest(&x->err, err, sizeof(err));
	assert_string_equal(out, "$all      'keys'=/.*/ \n");
	assert_string_equal(err, "");
	/* resumed, not killed: it still answers */
	tl_send(x->tgt, "ping");
	tl_expect(x->tgt, "pong");
	tl_send(x->tgt, "exit 0");
	tl_assert_exits(pid, "target after exit 0");
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
	assert_string_equal(err, "\"<stdin>\", line 2: syntax error on or before \"\\0\"\n"
				 "\"<stdin>\", line 3: syntax error on or before \"\\0\"\n"
				 "\"<stdin>\", line 4: syntax error on or before \"\\0\"\n");
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
				 "&debug    tnf_probe_debug\n"
				 "name=tl_thr \n");
	/* line 1 was run_then_stop's */
	assert_string_equal(err, "\"<stdin>\", line 6: syntax error on or before \"\r\"\n");
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
				 "&debug    tnf_probe_debug\n"
				 "&f2       main\n"
				 "&f1       main\n");
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
			    "\"<stdin>\", line 1: semantic error: cannot open \"adir\": Is a "
			    "directory\n"
			    "\"loop\", line 1: semantic error: cannot open \"loop\": files sourced "
			    "too deeply (a loop?)\n"
			    "\"<stdin>\", line 4: semantic error: cannot open \"nowhere\": No such "
			    "file or directory\n");
	prex_close_fds(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_sigint_mid_line),
		TL_TEST(test_nul_byte),
		TL_TEST(test_lexing),
		TL_TEST(test_redefined_moves_to_end),
		TL_TEST(test_source_dir_and_loop),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
