// SPDX-License-Identifier: BSD-2-Clause
/*
 * Every input the fuzzers (tests/fuzz/) ever crashed on, kept as
 * tests/fuzz/corpus/<target>/regress-*, fed through the normal code path:
 *  - fuzz_tnf: libtnf in this process (open, every record, events), then
 *    the real tnfdump in each output format (-r, -x, text, json, ctf);
 *  - fuzz_prex: the real prex controlling the bundled demo, the file on its
 *    stdin (then `quit kill`).
 * Each target has at least one (regress-ctf-empty-string: an event whose
 * first argument is an empty string, the fuzz_tnf crash 7d2f9d4 fixed in
 * the CTF writer).
 * Each must end by itself with its documented status (tnfdump 0 or 1; prex
 * 0 or 1), by no signal, and say nothing a sanitizer says (the suite built
 * with SANITIZE=1 turns each of these crashes back into a report).
 */
#include "testlib.h"
#include "tnf.h"

static char corpus[PATH_MAX];

static int corpus_files(const char *target, char names[][2 * PATH_MAX], int max)
{
	char dir[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%.*s/%s", PATH_MAX - 64, corpus, target);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)) && n < max)
		if (!strncmp(de->d_name, "regress-", 8))
			snprintf(names[n++], 2 * PATH_MAX, "%.*s/%s", PATH_MAX - 1, dir,
				 de->d_name);
	closedir(d);
	return n;
}

static void find_corpus(void)
{
	const char *data = getenv("TNF_TESTDATA");

	/* TNF_TESTDATA is tests/data/tnf-original */
	snprintf(corpus, sizeof(corpus), "%.*s/../../fuzz/corpus", PATH_MAX - 32,
		 data ? data : "tests/data/tnf-original");
}

/* Runs @argv with stdin from @in (or /dev/null), output into @out; returns the wait status. */
static int run(char *const argv[], const char *in, char *out, size_t outsize)
{
	char tmp[] = "/tmp/tl-fuzzreg-XXXXXX";
	int fd = mkstemp(tmp), ifd, st;
	char **env = tl_env_build(NULL);
	pid_t pid;

	assert_true(fd >= 0);
	unlink(tmp);
	ifd = open(in ? in : "/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(ifd >= 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(ifd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execve(argv[0], argv, env);
		_exit(127);
	}
	tl_track_pid(pid);
	free(env);
	close(ifd);
	st = tl_reap(pid);
	lseek(fd, 0, SEEK_SET);
	{
		ssize_t n = read(fd, out, outsize - 1);

		out[n > 0 ? n : 0] = '\0';
	}
	close(fd);
	return st;
}

static void assert_clean_end(const char *what, const char *file, int st, const char *out)
{
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		fail_msg("%s on %s: %s %d; output:\n%s", what, file,
			 WIFEXITED(st) ? "exit status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), out);
	if (strstr(out, "runtime error") || strstr(out, "Sanitizer"))
		fail_msg("%s on %s: sanitizer report:\n%s", what, file, out);
}

static void test_tnf_regressions(void **state)
{
	static char names[64][2 * PATH_MAX], out[1 << 16];
	char tnfdump[PATH_MAX], ctfdir[64];
	int n, i, k;

	(void)state;
	find_corpus();
	tl_path_of(tnfdump, "tnfdump");
	n = corpus_files("fuzz_tnf", names, 64);
	/* every kept crash is a regress-* file: none found is a broken tree, not a pass */
	if (n == 0)
		fail_msg("no tests/fuzz/corpus/fuzz_tnf/regress-* input");
	for (i = 0; i < n; i++) {
		struct tnf_datum rec = {0, NULL};
		struct tnf_event ev;
		struct tnf_file *f;
		int records = 0;

		if (tnf_open(names[i], &f) == 0) {
			while (tnf_record_next(f, &rec) > 0 && records++ < 100000)
				(void)tnf_event_get(f, rec, &ev);
			tnf_close(f);
		}
		{
			char *modes[][4] = {{"-r"}, {"-x"}, {"--format=text"}, {"--format=json"}};

			for (k = 0; k < 4; k++) {
				char *argv[] = {tnfdump, modes[k][0], names[i], NULL};

				assert_clean_end(modes[k][0], names[i],
						 run(argv, NULL, out, sizeof(out)), out);
			}
		}
		snprintf(ctfdir, sizeof(ctfdir), "/tmp/tl-fuzzreg-ctf-%d", (int)getpid());
		{
			char *argv[] = {tnfdump, "--format=ctf", ctfdir, names[i], NULL};
			char cmd[128];

			assert_clean_end("--format=ctf", names[i],
					 run(argv, NULL, out, sizeof(out)), out);
			snprintf(cmd, sizeof(cmd), "rm -rf %s", ctfdir);
			assert_int_equal(system(cmd), 0);
		}
	}
	print_message("%d tnf regression inputs\n", n);
}

static void test_prex_regressions(void **state)
{
	static char names[64][2 * PATH_MAX], out[1 << 16];
	char prex[PATH_MAX], trace[64], script[64];
	int n, i;

	(void)state;
	tl_require_root();
	find_corpus();
	tl_path_of(prex, "prex");
	n = corpus_files("fuzz_prex", names, 64);
	if (n == 0)
		fail_msg("no tests/fuzz/corpus/fuzz_prex/regress-* input");
	snprintf(trace, sizeof(trace), "/tmp/tl-fuzzreg-%d.tnf", (int)getpid());
	snprintf(script, sizeof(script), "/tmp/tl-fuzzreg-%d.prex", (int)getpid());
	for (i = 0; i < n; i++) {
		char *argv[] = {prex, "-o", trace, tl.demo, NULL};
		static char text[1 << 16];
		int st;
		int len, fd;

		len = tl_read_file(names[i], text, sizeof(text) - 16);
		if (len < 0) {
			fail_msg("cannot read %s", names[i]);
			return; /* not reached; GCC does not know (-Warray-bounds with ASan) */
		}
		memcpy(text + len, "\nquit kill\n", 12);
		fd = open(script, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(tl_write_all(fd, text, len + 11), 0);
		close(fd);
		unlink(trace);
		st = run(argv, script, out, sizeof(out));
		assert_clean_end("prex", names[i], st, out);
		unlink(trace);
		unlink(script);
	}
	print_message("%d prex regression inputs\n", n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_tnf_regressions),
		TL_TEST(test_prex_regressions),
		TL_FINAL_TEST,
	};

	return tl_run(tests);
}
