// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_exec_open helpers: $PATH lookup, static-executable check, LD_PRELOAD. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "elfsym.h"
#include "internal.h"

extern char **environ;

/* 0: usable, FILENOTFOUND: absent, ACCES: exists but cannot be executed. */
static tnfctl_errcode_t check_candidate(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno == EACCES ? TNFCTL_ERR_ACCES : TNFCTL_ERR_FILENOTFOUND;
	if (!S_ISREG(st.st_mode) || access(path, X_OK))
		return TNFCTL_ERR_ACCES;
	return TNFCTL_ERR_NONE;
}

tnfctl_errcode_t tnf_find_program(const char *pgm, char **path)
{
	tnfctl_errcode_t best = TNFCTL_ERR_FILENOTFOUND, e;
	const char *p, *env;
	char *buf;

	if (!*pgm)
		return TNFCTL_ERR_FILENOTFOUND;
	if (strchr(pgm, '/')) {
		e = check_candidate(pgm);
		if (e)
			return e;
		*path = strdup(pgm);
		return *path ? TNFCTL_ERR_NONE : TNFCTL_ERR_ALLOCFAIL;
	}
	env = getenv("PATH");
	if (!env)
		env = "/usr/local/bin:/usr/bin:/bin";
	buf = malloc(strlen(env) + strlen(pgm) + 3);
	if (!buf)
		return TNFCTL_ERR_ALLOCFAIL;
	for (p = env;; p++) {
		const char *end = strchrnul(p, ':');
		int len = end - p;

		/* An empty component means the current directory. */
		if (len)
			sprintf(buf, "%.*s/%s", len, p, pgm);
		else
			sprintf(buf, "./%s", pgm);
		e = check_candidate(buf);
		if (e == TNFCTL_ERR_NONE) {
			*path = buf;
			return TNFCTL_ERR_NONE;
		}
		if (e == TNFCTL_ERR_ACCES)
			best = TNFCTL_ERR_ACCES;
		if (!*end)
			break;
		p = end;
	}
	free(buf);
	return best;
}

tnfctl_errcode_t tnf_check_dynamic(const char *path)
{
	char magic[2];
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? TNFCTL_ERR_FILENOTFOUND : TNFCTL_ERR_ACCES;
	/* A "#!" script runs its interpreter, which the kernel checks. */
	if (pread(fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!') {
		close(fd);
		return TNFCTL_ERR_NONE;
	}
	r = tnf_elf_is_dynamic(fd);
	close(fd);
	if (r < 0)
		return TNFCTL_ERR_NONE; /* not ELF: let execve fail, reported as ACCES */
	return r ? TNFCTL_ERR_NONE : TNFCTL_ERR_NOTDYNAMIC;
}

/* Whether the caller holds CAP_SYS_PTRACE (bit 19 of CapEff). */
static bool caller_may_ptrace_anyone(void)
{
	unsigned long long caps = 0;
	char line[128];
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &caps) == 1;
	fclose(f);
	return found && (caps & (1ULL << 19));
}

static bool in_groups(gid_t gid)
{
	gid_t list[256];
	int i, n;

	if (gid == getegid())
		return true;
	n = getgroups(256, list);
	for (i = 0; i < n; i++)
		if (list[i] == gid)
			return true;
	return false;
}

/*
 * The helper that will trace the child may be more privileged than the
 * caller (started before the caller dropped privileges): with a capable
 * tracer the kernel honours set-id bits and file capabilities, and the
 * caller would control a process it could not ptrace itself.  Refuse such
 * a program unless the caller could trace it anyway.
 */
tnfctl_errcode_t tnf_check_setid(const char *path)
{
	struct statvfs fs;
	struct stat st;
	bool gains;

	if (stat(path, &st))
		return TNFCTL_ERR_NONE; /* execve will say what is wrong */
	if (!statvfs(path, &fs) && (fs.f_flag & ST_NOSUID))
		return TNFCTL_ERR_NONE;
	gains = ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
		((st.st_mode & S_ISGID) && !in_groups(st.st_gid)) ||
		getxattr(path, "security.capability", NULL, 0) > 0;
	return gains && !caller_may_ptrace_anyone() ? TNFCTL_ERR_ACCES : TNFCTL_ERR_NONE;
}

/* Directory of the loaded libtnfctl.so.1 (malloc'd), or NULL. */
char *tnf_self_dir(void)
{
	Dl_info info;
	char *copy, *dir;

	if (!dladdr((void *)tnf_build_env, &info) || !info.dli_fname)
		return NULL;
	copy = strdup(info.dli_fname);
	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

void tnf_free_env(char **env)
{
	char **e;

	if (!env)
		return;
	for (e = env; *e; e++)
		free(*e);
	free(env);
}

/*
 * The caller's environment with LD_PRELOAD = "[old:][dir/]libtnfprobe.so.1[:extra]"
 * (without @runtime: "[old:]extra").
 * Colons, not spaces, between the parts: a tool that edits LD_PRELOAD entry
 * by colon-separated entry keeps ours (valgrind, removing its own preloads
 * from a program it does not follow into exec, would drop "vgpreload.so
 * libtnfprobe.so.1 extra.so" whole when it ends in .so).
 */
char **tnf_build_env(const char *ld_preload, const char *libtnfprobe_path, bool runtime)
{
	const char *old = getenv("LD_PRELOAD");
	char *dir = NULL, *pre = NULL;
	size_t n = 0, i = 0;
	char **env, **e;
	int len;

	if (!runtime)
		len = asprintf(&pre, "LD_PRELOAD=%s%s%s", old && *old ? old : "",
			       old && *old && ld_preload && *ld_preload ? ":" : "",
			       ld_preload ? ld_preload : "");
	else {
		if (!libtnfprobe_path)
			libtnfprobe_path = dir = tnf_self_dir();
		len = asprintf(&pre, "LD_PRELOAD=%s%s%s%s%s%s%s", old && *old ? old : "",
			       old && *old ? ":" : "", libtnfprobe_path ? libtnfprobe_path : "",
			       libtnfprobe_path ? "/" : "", TNFCTL_LIBTNFPROBE,
			       ld_preload && *ld_preload ? ":" : "", ld_preload ? ld_preload : "");
	}
	free(dir);
	if (len < 0)
		return NULL;
	for (e = environ; e && *e; e++)
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env) {
		free(pre);
		return NULL;
	}
	for (e = environ; e && *e; e++) {
		if (!strncmp(*e, "LD_PRELOAD=", 11))
			continue;
		env[i] = strdup(*e);
		if (!env[i++])
			goto fail;
	}
	env[i] = pre;
	return env;
fail:
	free(pre);
	tnf_free_env(env);
	return NULL;
}
