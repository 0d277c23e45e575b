// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_exec_open helpers: $PATH lookup, static-executable check, LD_PRELOAD. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The caller's environment with LD_PRELOAD = "[old] [dir/]libtnfprobe.so.1 [extra]". */
char **tnf_build_env(const char *ld_preload, const char *libtnfprobe_path)
{
	const char *old = getenv("LD_PRELOAD");
	char *dir = NULL, *pre = NULL;
	size_t n = 0, i = 0;
	char **env, **e;
	int len;

	if (!libtnfprobe_path)
		libtnfprobe_path = dir = tnf_self_dir();
	len = asprintf(&pre, "LD_PRELOAD=%s%s%s%s%s%s%s", old && *old ? old : "",
		       old && *old ? " " : "", libtnfprobe_path ? libtnfprobe_path : "",
		       libtnfprobe_path ? "/" : "", TNFCTL_LIBTNFPROBE,
		       ld_preload && *ld_preload ? " " : "", ld_preload ? ld_preload : "");
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
