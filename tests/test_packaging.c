// SPDX-License-Identifier: BSD-2-Clause
/*
 * Packaging hygiene: the man pages render without a single groff warning
 * and every .so link resolves; every public name has a page; `make install`
 * into a staging directory gives a tree an out-of-tree program builds
 * against with nothing but pkg-config; `make uninstall` removes every file
 * again; the shared libraries export exactly the public API, under the
 * right sonames.
 *
 * The repository root is $B/.. (the build directory's parent).  Needs man
 * (man-db), groff, pkg-config, nm and readelf (binutils); no root.  Every
 * temporary directory is removed, pass or fail.
 */
#include "testlib.h"

/* Paths are built with snprintf into PATH_MAX buffers: a truncated one only fails a test. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <ctype.h>
#include <ftw.h>

#define OUT_MAX (1 << 20)

static char root[PATH_MAX];   /* the repository */
static char mandir[PATH_MAX]; /* root/man */

static const char *const man_sections[] = {"man1", "man3", "man8"};

/* ------------------------------------------------------------------ */
/* helpers */

/* Runs @cmd with sh -c; its stdout (the command decides about stderr) into @out. */
static int run(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char *out, size_t size, const char *fmt, ...)
{
	char cmd[16384];
	size_t len = 0;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	if ((size_t)vsnprintf(cmd, sizeof(cmd), fmt, ap) >= sizeof(cmd))
		fail_msg("command too long");
	va_end(ap);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p)
		fail_msg("popen(%s): %s", cmd, strerror(errno));
	if (out && size) {
		len = fread(out, 1, size - 1, p);
		out[len] = '\0';
	}
	while (fgetc(p) != EOF) /* drain whatever does not fit */
		;
	st = pclose(p);
	return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

static void rm_tree(const char *dir)
{
	if (dir && *dir)
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char staging[256]; /* the current test's temporary directory */

static void make_staging(void)
{
	snprintf(staging, sizeof(staging), "/tmp/tl-packaging-XXXXXX");
	if (!mkdtemp(staging))
		fail_msg("mkdtemp: %s", strerror(errno));
}

static int pk_setup(void **state)
{
	staging[0] = '\0';
	return tl_setup(state);
}

static int pk_teardown(void **state)
{
	rm_tree(staging);
	staging[0] = '\0';
	return tl_teardown(state);
}

/* `make` in the repository, with the build directory of the test run. */
static int make_in_root(char *out, size_t size, const char *args)
{
	/* A make above us (make check) must not lend its jobserver to this one. */
	return run(out, size,
		   "cd '%s' && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory "
		   "B='%s' %s 2>&1",
		   root, tl.bdir, args);
}

static void install_to(const char *dest)
{
	static char out[OUT_MAX];
	char args[PATH_MAX + 64];

	snprintf(args, sizeof(args), "install DESTDIR='%s' PREFIX=/usr/local", dest);
	if (make_in_root(out, sizeof(out), args))
		fail_msg("make %s failed:\n%s", args, out);
}

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return 1;
	return 0;
}

/* Words of @list (separated by blanks) that are not words of @other. */
static void missing_words(const char *list, const char *other, char *out, size_t size)
{
	char *copy = strdup(list), *save = NULL, *w;

	out[0] = '\0';
	assert_non_null(copy);
	for (w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (!has_word(other, w) && strlen(out) + strlen(w) + 2 < size) {
			strcat(out, " ");
			strcat(out, w);
		}
	free(copy);
}

/* The functions <tnf/tnfctl.h> declares, as "name name ... ". */
static void header_functions(char *names, size_t size)
{
	static char text[1 << 18];
	char path[PATH_MAX], *p, *q, *stmt, *save = NULL;

	snprintf(path, sizeof(path), "%s/include/tnf/tnfctl.h", root);
	if (tl_read_file(path, text, sizeof(text)) <= 0)
		fail_msg("cannot read %s", path);
	/* comments and preprocessor lines out */
	for (p = text; (p = strstr(p, "/*"));) {
		q = strstr(p + 2, "*/");
		if (!q)
			fail_msg("unterminated comment in %s", path);
		memset(p, ' ', q + 2 - p);
	}
	for (p = text; *p; p = q) {
		q = strchrnul(p, '\n');
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#')
			memset(p, ' ', q - p);
		if (*q)
			q++;
	}
	names[0] = '\0';
	for (stmt = strtok_r(text, ";", &save); stmt; stmt = strtok_r(NULL, ";", &save)) {
		if (strstr(stmt, "typedef"))
			continue;
		for (p = stmt; (p = strstr(p, "tnfctl_")); p = q) {
			size_t n;

			q = p + strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
			n = q - p;
			if (p > stmt && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
				continue;
			while (*q == ' ' || *q == '\t' || *q == '\n')
				q++;
			if (*q != '(')
				continue;
			if (strlen(names) + n + 2 >= size)
				fail_msg("too many functions");
			strncat(names, p, n);
			strcat(names, " ");
		}
	}
}

/* The names of every version node's global: list of a version script. */
static void map_globals(const char *rel, char *names, size_t size)
{
	char path[PATH_MAX], text[16384], *p, *end, *save, *w;
	int nodes = 0;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (tl_read_file(path, text, sizeof(text)) <= 0)
		fail_msg("cannot read %s", path);
	names[0] = '\0';
	/* each version node's global: list, up to its local: or its end */
	for (p = strstr(text, "global:"); p; p = end ? strstr(end + 1, "global:") : NULL) {
		end = strpbrk(p, "}");
		if (!end)
			fail_msg("%s: a version node without its end", path);
		*end = '\0';
		if (strstr(p, "local:"))
			*strstr(p, "local:") = '\0';
		save = NULL;
		for (w = strtok_r(p + 7, " \t\n;", &save); w; w = strtok_r(NULL, " \t\n;", &save)) {
			if (strlen(names) + strlen(w) + 2 >= size)
				fail_msg("too many names in %s", path);
			strcat(names, w);
			strcat(names, " ");
		}
		nodes++;
	}
	if (!nodes)
		fail_msg("%s: no global: section", path);
}

/* The dynamic symbols a library defines (version nodes left out). */
static void exports_of(const char *lib, char *names, size_t size)
{
	static char out[OUT_MAX];
	char *line, *save = NULL, addr[64], type[8], name[256];

	if (run(out, sizeof(out), "nm -D --defined-only '%s/%s' 2>&1", tl.bdir, lib))
		fail_msg("nm -D %s failed:\n%s", lib, out);
	names[0] = '\0';
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
			fail_msg("nm line \"%s\"", line);
		if (!strcmp(type, "A"))
			continue;
		name[strcspn(name, "@")] = '\0';
		if (strlen(names) + strlen(name) + 2 >= size)
			fail_msg("too many exports");
		strcat(names, name);
		strcat(names, " ");
	}
}

static void check_soname(const char *lib)
{
	char out[65536], want[128];

	if (run(out, sizeof(out), "readelf -d '%s/%s' 2>&1", tl.bdir, lib))
		fail_msg("readelf -d %s failed:\n%s", lib, out);
	snprintf(want, sizeof(want), "Library soname: [%s]", lib);
	if (!strstr(out, want))
		fail_msg("%s: no \"%s\" in readelf -d:\n%s", lib, want, out);
}

static int group_setup(void **state)
{
	char path[PATH_MAX];

	if (tl_group_setup(state))
		return -1;
	snprintf(root, sizeof(root), "%s/..", tl.bdir);
	if (!realpath(root, path)) {
		perror(root);
		return -1;
	}
	snprintf(root, sizeof(root), "%s", path);
	snprintf(mandir, sizeof(mandir), "%s/man", root);
	snprintf(path, sizeof(path), "%s/Makefile", root);
	if (access(path, R_OK)) {
		fprintf(stderr, "%s: not the repository (no Makefile)\n", root);
		return -1;
	}
	printf("# repository %s\n", root);
	return 0;
}

/* ------------------------------------------------------------------ */
/* (a) man pages */

static void require_man_tools(void)
{
	char out[4096];

	if (run(out, sizeof(out), "man --version 2>&1") || !strstr(out, "man"))
		fail_msg("man (package man-db) is needed: %s", out);
	if (run(out, sizeof(out), "groff --version 2>&1"))
		fail_msg("groff (package groff-base) is needed: %s", out);
}

/* Calls @fn(section, file name) for each page of man/man1, man/man3 and man/man8. */
static int for_each_page(void (*fn)(const char *sec, const char *name, void *cd), void *cd)
{
	char dir[PATH_MAX];
	struct dirent *de;
	unsigned i;
	int n = 0;
	DIR *d;

	for (i = 0; i < sizeof(man_sections) / sizeof(man_sections[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", mandir, man_sections[i]);
		d = opendir(dir);
		if (!d)
			fail_msg("%s: %s", dir, strerror(errno));
		while ((de = readdir(d))) {
			const char *dot = strrchr(de->d_name, '.');

			if (de->d_name[0] == '.')
				continue;
			if (!dot || strcmp(dot + 1, man_sections[i] + 3))
				fail_msg("%s/%s: not a section %s page", dir, de->d_name,
					 man_sections[i] + 3);
			fn(man_sections[i], de->d_name, cd);
			n++;
		}
		closedir(d);
	}
	return n;
}

struct render_stats {
	int pages, links, bad;
};

/* "name" without its ".N" */
static void page_name(const char *file, char *name, size_t size)
{
	snprintf(name, size, "%s", file);
	*strrchr(name, '.') = '\0';
}

static void render_one(const char *sec, const char *file, void *cd)
{
	static char text[1 << 18], out[OUT_MAX];
	struct render_stats *rs = cd;
	char path[PATH_MAX], target[PATH_MAX], name[256], *p;
	int st, so;

	snprintf(path, sizeof(path), "%s/%s/%s", mandir, sec, file);
	if (tl_read_file(path, text, sizeof(text)) <= 0)
		fail_msg("cannot read %s", path);
	page_name(file, name, sizeof(name));

	/* roff source hygiene: no trailing blanks, text ends with a newline */
	for (p = text; (p = strpbrk(p, " \t")); p++)
		if (p[1] == '\n' || p[1] == '\0') {
			print_error("%s/%s: trailing whitespace\n", sec, file);
			rs->bad++;
			break;
		}
	if (text[strlen(text) - 1] != '\n') {
		print_error("%s/%s: no final newline\n", sec, file);
		rs->bad++;
	}

	so = !strncmp(text, ".so ", 4);
	if (so) {
		/* a link: one line, ".so manN/page.N", to a real page */
		rs->links++;
		snprintf(target, sizeof(target), "%s", text + 4);
		target[strcspn(target, "\n")] = '\0';
		if (strchr(text, '\n') != text + strlen(text) - 1) {
			print_error("%s/%s: a .so link page must be one line\n", sec, file);
			rs->bad++;
		}
		snprintf(path, sizeof(path), "%s/%s", mandir, target);
		if (tl_read_file(path, text, sizeof(text)) <= 0) {
			print_error("%s/%s: .so %s does not resolve\n", sec, file, target);
			rs->bad++;
			return;
		}
		if (!strncmp(text, ".so ", 4)) {
			print_error("%s/%s: .so %s is itself a link\n", sec, file, target);
			rs->bad++;
		}
	} else {
		rs->pages++;
		/* every real page has the sections a reader looks for */
		static const char *const need[] = {".TH ", ".SH NAME", ".SH SYNOPSIS",
						   ".SH DESCRIPTION", ".SH SEE ALSO"};
		static const char *const need3[] = {".SH RETURN VALUE", ".SH ERRORS",
						    ".SH ATTRIBUTES", ".SH NOTES", ".SH STANDARDS"};
		unsigned i;

		for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
			if (!strstr(text, need[i])) {
				print_error("%s/%s: no %s\n", sec, file, need[i]);
				rs->bad++;
			}
		if (!strcmp(sec, "man3") && strcmp(name, "libtnfctl"))
			for (i = 0; i < sizeof(need3) / sizeof(need3[0]); i++)
				if (!strstr(text, need3[i])) {
					print_error("%s/%s: no %s\n", sec, file, need3[i]);
					rs->bad++;
				}
	}

	/* man -l, all warnings: stderr must stay empty */
	st = run(out, sizeof(out),
		 "cd '%s' && MANWIDTH=80 LC_ALL=C.UTF-8 MAN_KEEP_FORMATTING= "
		 "man -l --warnings=all '%s/%s' 2>&1 >/dev/null",
		 mandir, sec, file);
	if (st || out[0]) {
		print_error("%s/%s: man -l --warnings=all (status %d):\n%s", sec, file, st, out);
		rs->bad++;
	}
	/* groff directly, every warning enabled, no output */
	st = run(out, sizeof(out), "cd '%s' && groff -man -ww -z '%s/%s' 2>&1", mandir, sec, file);
	if (st || out[0]) {
		print_error("%s/%s: groff -man -ww -z (status %d):\n%s", sec, file, st, out);
		rs->bad++;
	}
	/* and what a reader sees names the page (a link: in the NAME of its target) */
	st = run(out, sizeof(out),
		 "cd '%s' && MANWIDTH=80 LC_ALL=C.UTF-8 man -l '%s/%s' 2>/dev/null | col -b",
		 mandir, sec, file);
	p = strstr(out, "NAME");
	if (st || !p || !strstr(p, name)) {
		print_error("%s/%s: the rendered page does not show \"%s\" under NAME\n", sec, file,
			    name);
		rs->bad++;
	}
}

static void test_man_pages_render(void **state)
{
	struct render_stats rs = {0, 0, 0};

	(void)state;
	require_man_tools();
	for_each_page(render_one, &rs);
	printf("# %d pages, %d .so links\n", rs.pages, rs.links);
	if (rs.bad)
		fail_msg("%d problem(s) in the man pages (listed above)", rs.bad);
	assert_true(rs.pages >= 19);
	assert_true(rs.links >= 30);
}

/* Every public function and macro has a page of its own name. */
static void test_every_name_has_a_page(void **state)
{
	static const char *const probe_names[] = {
		"TNF_PROBE_0",	       "TNF_PROBE_1",	      "TNF_PROBE_2",
		"TNF_PROBE_3",	       "TNF_PROBE_4",	      "TNF_PROBE_5",
		"TNF_PROBE_0_DEBUG",   "TNF_PROBE_1_DEBUG",   "TNF_PROBE_2_DEBUG",
		"TNF_PROBE_3_DEBUG",   "TNF_PROBE_4_DEBUG",   "TNF_PROBE_5_DEBUG",
		"TNF_DECLARE_RECORD",  "TNF_DEFINE_RECORD_1", "TNF_DEFINE_RECORD_2",
		"TNF_DEFINE_RECORD_3", "TNF_DEFINE_RECORD_4", "TNF_DEFINE_RECORD_5",
		"tnf_process_disable", "tnf_process_enable",  "tnf_thread_disable",
		"tnf_thread_enable",   "libtnfctl",	      "TNF_PROBE",
	};
	static const char *const tools[] = {"prex", "tnfdump", "tnfctl-follow", "tnftrace"};
	char names[8192], *w, *save = NULL, path[PATH_MAX];
	unsigned i;
	int missing = 0, n = 0;

	(void)state;
	header_functions(names, sizeof(names));
	for (w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save), n++) {
		snprintf(path, sizeof(path), "%s/man3/%s.3", mandir, w);
		if (access(path, R_OK)) {
			print_error("no man page for %s (man/man3/%s.3)\n", w, w);
			missing++;
		}
	}
	/* the 27 Solaris functions, 8 extensions and 10 tnfctl_watch_* */
	assert_int_equal(n, 45);
	for (i = 0; i < sizeof(probe_names) / sizeof(probe_names[0]); i++) {
		snprintf(path, sizeof(path), "%s/man3/%s.3", mandir, probe_names[i]);
		if (access(path, R_OK)) {
			print_error("no man page for %s\n", probe_names[i]);
			missing++;
		}
	}
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(path, sizeof(path), "%s/man1/%s.1", mandir, tools[i]);
		if (access(path, R_OK)) {
			print_error("no man page for %s(1)\n", tools[i]);
			missing++;
		}
	}
	if (missing)
		fail_msg("%d name(s) without a man page", missing);
}

/* ------------------------------------------------------------------ */
/* (b) install, then an out-of-tree consumer with nothing but pkg-config */

static const char consumer_src[] =
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"#include <tnf/tnfctl.h>\n"
	"#include <tnf/probe.h>\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tchar line[4096];\n"
	"\tFILE *maps;\n"
	"\n"
	"\tTNF_PROBE_2(consumer_start, \"consumer\", \"sunw%debug 'starts'\",\n"
	"\t\t    tnf_int, argc, argc, tnf_string, argv0, argv[0]);\n"
	"\ttnf_thread_disable();\n"
	"\ttnf_thread_enable();\n"
	"\tprintf(\"%s\\n\", tnfctl_strerror(TNFCTL_ERR_BADARG));\n"
	"\t/* which libtnfctl.so.1 was loaded */\n"
	"\tmaps = fopen(\"/proc/self/maps\", \"r\");\n"
	"\twhile (maps && fgets(line, sizeof(line), maps))\n"
	"\t\tif (strstr(line, \"/libtnfctl.so.1\")) {\n"
	"\t\t\tprintf(\"%s\", strchr(line, '/'));\n"
	"\t\t\tbreak;\n"
	"\t\t}\n"
	"\treturn 0;\n"
	"}\n";

static void test_install_and_consumer(void **state)
{
	static char out[OUT_MAX];
	static const char *const linked[] = {"tnfctl-follow", "tnftrace", "prex"};
	char flags[4096], want[PATH_MAX + 64], path[PATH_MAX], version[64] = "", *p;
	int fd, i;

	(void)state;
	tl_watchdog_extend(600);
	make_staging();
	install_to(staging);

	/* the pkg-config file, as a consumer sees it */
	if (run(flags, sizeof(flags),
		"PKG_CONFIG_PATH='%s/usr/local/lib/pkgconfig' PKG_CONFIG_SYSROOT_DIR='%s' "
		"pkg-config --cflags --libs tnfctl 2>&1",
		staging, staging))
		fail_msg("pkg-config --cflags --libs tnfctl failed: %s", flags);
	flags[strcspn(flags, "\n")] = '\0';
	printf("# pkg-config: %s\n", flags);
	snprintf(want, sizeof(want), "-I%s/usr/local/include", staging);
	if (!has_word(flags, want))
		fail_msg("no %s in \"%s\"", want, flags);
	snprintf(want, sizeof(want), "-L%s/usr/local/lib", staging);
	if (!has_word(flags, want))
		fail_msg("no %s in \"%s\"", want, flags);
	if (!has_word(flags, "-ltnfctl"))
		fail_msg("no -ltnfctl in \"%s\"", flags);

	/* Version: the Makefile's */
	if (run(out, sizeof(out), "sed -n 's/^VERSION := //p' '%s/Makefile'", root) || !out[0])
		fail_msg("no VERSION in the Makefile");
	if (sscanf(out, "%63s", version) != 1)
		fail_msg("no VERSION in the Makefile");
	if (run(out, sizeof(out),
		"PKG_CONFIG_PATH='%s/usr/local/lib/pkgconfig' pkg-config --modversion tnfctl 2>&1",
		staging))
		fail_msg("pkg-config --modversion: %s", out);
	out[strcspn(out, "\n")] = '\0';
	assert_string_equal(out, version);
	snprintf(path, sizeof(path), "%s/usr/local/lib/pkgconfig/tnfctl.pc", staging);
	if (tl_read_file(path, out, sizeof(out)) <= 0)
		fail_msg("cannot read %s", path);
	if (!strstr(out, "\nRequires.private: libbpf libelf\n"))
		fail_msg("tnfctl.pc lacks \"Requires.private: libbpf libelf\":\n%s", out);
	if (strncmp(out, "prefix=/usr/local\n", 18) || strstr(out, staging))
		fail_msg("tnfctl.pc must name the final prefix, not the staging one:\n%s", out);

	/* build and run the consumer */
	snprintf(path, sizeof(path), "%s/consumer.c", staging);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(tl_write_all(fd, consumer_src, sizeof(consumer_src) - 1), 0);
	close(fd);
	if (run(out, sizeof(out),
		"cd '%s' && cc -Wall -Wextra -Werror -o consumer consumer.c %s "
		"-Wl,-rpath,'%s/usr/local/lib' 2>&1",
		staging, flags, staging))
		fail_msg("the consumer does not build:\n%s", out);
	if (run(out, sizeof(out), "env -u LD_LIBRARY_PATH -u LD_PRELOAD '%s/consumer' 2>&1",
		staging))
		fail_msg("the consumer failed:\n%s", out);
	p = strchr(out, '\n');
	assert_non_null(p);
	*p++ = '\0';
	assert_string_equal(out, "bad input argument");
	snprintf(want, sizeof(want), "%s/usr/local/lib/libtnfctl.so.1", staging);
	p[strcspn(p, "\n")] = '\0';
	assert_string_equal(p, want);

	/* the installed pages are found by man, links included */
	if (run(out, sizeof(out),
		"MANPATH='%s/usr/local/share/man' man -w tnfctl_exec_open prex TNF_PROBE_3 2>&1",
		staging))
		fail_msg("man -w on the installed pages: %s", out);
	/* man follows the .so link to the page that documents it */
	snprintf(want, sizeof(want), "%s/usr/local/share/man/man3/tnfctl_pid_open.3", staging);
	if (!strstr(out, want))
		fail_msg("man -w gave:\n%s", out);
	if (run(out, sizeof(out),
		"cd '%s/usr/local/share/man' && MANWIDTH=80 man -l --warnings=all "
		"man3/tnfctl_exec_open.3 2>&1 >/dev/null",
		staging) ||
	    out[0])
		fail_msg("the installed tnfctl_exec_open(3) link: %s", out);

	/* the engine where the installed library looks for it (not the build tree) */
	snprintf(path, sizeof(path), "%s/usr/local/libexec/tnfctl/tnfctl-engine", staging);
	if (access(path, X_OK))
		fail_msg("no executable engine at %s", path);
	if (run(out, sizeof(out), "strings '%s/usr/local/lib/libtnfctl.so.1' 2>&1", staging))
		fail_msg("strings on the installed libtnfctl.so.1: %s", out);
	if (!strstr(out, "\n/usr/local/libexec/tnfctl/tnfctl-engine\n"))
		fail_msg("the installed libtnfctl.so.1 does not name the installed engine "
			 "(/usr/local/libexec/tnfctl/tnfctl-engine)");
	p = strstr(out, "/tnfctl-engine\n");
	if (p && strstr(p + 1, "/tnfctl-engine\n"))
		fail_msg("the installed libtnfctl.so.1 names another engine too");

	/* the installed tools run */
	if (run(out, sizeof(out), "'%s/usr/local/bin/tnfdump' --help 2>&1", staging))
		fail_msg("installed tnfdump --help: %s", out);
	/* they find libtnfctl where it is installed: rpath /usr/local/lib, not the build dir */
	for (i = 0; i < 3; i++) {
		if (run(out, sizeof(out), "readelf -d '%s/usr/local/bin/%s' 2>&1", staging,
			linked[i]))
			fail_msg("readelf -d %s: %s", linked[i], out);
		if (!strstr(out, "path: [/usr/local/lib]"))
			fail_msg("installed %s: no rpath /usr/local/lib:\n%s", linked[i], out);
		if (run(out, sizeof(out),
			"LD_LIBRARY_PATH='%s/usr/local/lib' '%s/usr/local/bin/%s' --help 2>&1",
			staging, staging, linked[i]) > 2)
			fail_msg("installed %s --help: %s", linked[i], out);
	}
}

/* ------------------------------------------------------------------ */
/* (c) uninstall leaves nothing behind */

static char leftovers[8192];
static int nleft;

static int note_file(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag != FTW_D && flag != FTW_DP) {
		nleft++;
		if (strlen(leftovers) + strlen(path) + 2 < sizeof(leftovers)) {
			strcat(leftovers, path);
			strcat(leftovers, "\n");
		}
	}
	return 0;
}

static int count_files(const char *dir)
{
	leftovers[0] = '\0';
	nleft = 0;
	if (nftw(dir, note_file, 16, FTW_PHYS))
		fail_msg("nftw(%s): %s", dir, strerror(errno));
	return nleft;
}

static void test_uninstall_leaves_nothing(void **state)
{
	static char out[OUT_MAX];
	char args[PATH_MAX + 64];
	int installed;

	(void)state;
	tl_watchdog_extend(600);
	make_staging();
	install_to(staging);
	installed = count_files(staging);
	printf("# make install: %d files and links\n", installed);
	assert_true(installed > 60);

	snprintf(args, sizeof(args), "uninstall DESTDIR='%s' PREFIX=/usr/local", staging);
	if (make_in_root(out, sizeof(out), args))
		fail_msg("make %s failed:\n%s", args, out);
	if (count_files(staging))
		fail_msg("make uninstall left %d file(s):\n%s", nleft, leftovers);
	/* and a second uninstall, of nothing, is fine too */
	if (make_in_root(out, sizeof(out), args))
		fail_msg("a second make %s failed:\n%s", args, out);
}

/* ------------------------------------------------------------------ */
/* (d) exports and sonames */

static void compare_exports(const char *lib, const char *want, const char *what)
{
	char got[16384], diff[8192];

	exports_of(lib, got, sizeof(got));
	missing_words(got, want, diff, sizeof(diff));
	if (diff[0])
		fail_msg("%s exports what %s does not list:%s", lib, what, diff);
	missing_words(want, got, diff, sizeof(diff));
	if (diff[0])
		fail_msg("%s does not export what %s lists:%s", lib, what, diff);
}

static void test_exports_and_sonames(void **state)
{
	char want[16384];

	(void)state;
	header_functions(want, sizeof(want));
	compare_exports("libtnfctl.so.1", want, "include/tnf/tnfctl.h");
	/* the version script says the same as the header */
	{
		char map[16384], diff[8192];

		map_globals("src/libtnfctl/libtnfctl.map", map, sizeof(map));
		missing_words(map, want, diff, sizeof(diff));
		if (diff[0])
			fail_msg("libtnfctl.map lists what tnfctl.h does not declare:%s", diff);
	}
	map_globals("src/libtnfprobe/libtnfprobe.map", want, sizeof(want));
	compare_exports("libtnfprobe.so.1", want, "src/libtnfprobe/libtnfprobe.map");
	check_soname("libtnfctl.so.1");
	check_soname("libtnfprobe.so.1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TL_TEST(test_man_pages_render),
		TL_TEST(test_every_name_has_a_page),
		cmocka_unit_test_setup_teardown(test_install_and_consumer, pk_setup, pk_teardown),
		cmocka_unit_test_setup_teardown(test_uninstall_leaves_nothing, pk_setup,
						pk_teardown),
		TL_TEST(test_exports_and_sonames),
		TL_FINAL_TEST,
	};

	return cmocka_run_group_tests(tests, group_setup, tl_group_teardown);
}
