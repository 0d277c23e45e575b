// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exec details of the stopping API and the watch (struct tnfctl_exec_info):
 * storage, the size-checked copy out, and the stopping API's capture from the
 * stopped target's /proc files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "exec_info.h"

/*
 * An interpreted file: binfmt_script (or binfmt_misc) dropped execve's
 * argv[0] and put the interpreter, its #! argument and the filename as
 * given in front of argv[1...], once per level of nesting, so the filename
 * is the first string after argv[0] equal to it.  Give execve's vector
 * (with the filename as argv[0], as the kernel kept it) and the
 * interpreter's apart.  Not found (cut, or a binfmt_misc entry without it):
 * left whole, flag cleared.
 */
static int split_interp(struct tnf_exec_data *d)
{
	size_t drop = 0;
	int j, k;

	for (j = 1; j < d->argc && strcmp(d->argv[j], d->path); j++)
		;
	if (j >= d->argc) {
		d->flags &= ~TNFCTL_EXEC_INTERP;
		return 0;
	}
	d->interp_argv = malloc((j + 1) * sizeof(char *));
	if (!d->interp_argv) {
		tnf_exec_data_free(d);
		return -ENOMEM;
	}
	for (k = 0; k < j; k++) {
		d->interp_argv[k] = d->argv[k];
		drop += strlen(d->argv[k]) + 1;
	}
	d->interp_argv[j] = NULL;
	d->interp_argc = j;
	d->argv += j;
	d->argc -= j;
	d->argv_bytes = d->argv_bytes > drop ? d->argv_bytes - drop : 0;
	return 0;
}

int tnf_exec_data_set(struct tnf_exec_data *d, const char *path, const char *cwd, const char *args,
		      size_t alen, size_t argv_bytes, unsigned int flags, int error)
{
	size_t plen = strlen(path) + 1, clen = strlen(cwd) + 1, n = 0, i;
	char *p, *s;
	int argc = 0;

	tnf_exec_data_free(d);
	for (i = 0; i < alen; i++)
		argc += args[i] == '\0';
	if (alen && args[alen - 1] != '\0')
		argc++;
	d->buf = malloc((argc + 1) * sizeof(char *) + plen + clen + alen + 1);
	if (!d->buf)
		return -ENOMEM;
	d->argv = (char **)d->buf;
	p = d->buf + (argc + 1) * sizeof(char *);
	d->path = memcpy(p, path, plen);
	p += plen;
	d->cwd = memcpy(p, cwd, clen);
	p += clen;
	memcpy(p, args, alen);
	p[alen] = '\0';
	for (s = p; n < (size_t)argc; s += strlen(s) + 1)
		d->argv[n++] = s;
	d->argv[argc] = NULL;
	d->argc = argc;
	d->argv_bytes = argv_bytes;
	d->flags = flags;
	d->error = error;
	d->valid = true;
	return (flags & TNFCTL_EXEC_INTERP) ? split_interp(d) : 0;
}

void tnf_exec_data_free(struct tnf_exec_data *d)
{
	free(d->buf);
	free(d->interp_argv);
	memset(d, 0, sizeof(*d));
}

tnfctl_errcode_t tnf_exec_data_get(const struct tnf_exec_data *d, struct tnfctl_exec_info *info)
{
	static char *const no_interp[] = {NULL};
	struct tnfctl_exec_info full;
	size_t sz;

	if (!info || info->sz < offsetof(struct tnfctl_exec_info, argv) + sizeof(info->argv))
		return TNFCTL_ERR_BADARG;
	if (!d->valid)
		return TNFCTL_ERR_BADARG;
	full = (struct tnfctl_exec_info){
		.sz = info->sz,
		.argc = d->argc,
		.argv = d->argv,
		.path = d->path,
		.cwd = d->cwd,
		.error = d->error,
		.flags = d->flags,
		.argv_bytes = d->argv_bytes,
		.interp_argc = d->interp_argc,
		.interp_argv = d->interp_argv ? d->interp_argv : no_interp,
	};
	/* Only what the caller's struct has room for (an older, smaller one). */
	sz = info->sz < sizeof(full) ? info->sz : sizeof(full);
	memcpy(info, &full, sz);
	return TNFCTL_ERR_NONE;
}

/* Fields 48 and 49 of /proc/PID/stat: the argument area of the image. */
static size_t argv_area_size(pid_t pid)
{
	unsigned long long start = 0, end = 0;
	char path[64], buf[1024], *p;
	int fd, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the comm may hold spaces and parentheses */
	if (!p)
		return 0;
	/* p + 2 is field 3; skip to field 48. */
	for (p += 2, i = 3; i < 48 && p; i++)
		if ((p = strchr(p, ' ')))
			p++;
	if (!p || sscanf(p, "%llu %llu", &start, &end) != 2 || end < start)
		return 0;
	return end - start;
}

static size_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	while (got < size &&
	       ((n = read(fd, buf + got, size - got)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			got += n;
	close(fd);
	return got;
}

/* The argument strings at @uargv in @pid's memory, at most @max bytes; *@trunc if cut. */
static size_t read_user_argv(pid_t pid, unsigned long long uargv, char *buf, size_t max,
			     bool *trunc)
{
	unsigned long long ptr;
	size_t got = 0, i, room;
	char path[64];
	ssize_t n;
	char *nul;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*trunc = true;
		return 0;
	}
	for (i = 0; uargv; i++) {
		if (pread(fd, &ptr, sizeof(ptr), uargv + i * sizeof(ptr)) != sizeof(ptr)) {
			*trunc = true;
			break;
		}
		if (!ptr)
			break;
		/* One string, in chunks that never cross a page (pread stops at a hole). */
		for (;;) {
			room = max - got;
			if (!room) {
				*trunc = true;
				goto out;
			}
			if (room > 4096 - (ptr & 4095))
				room = 4096 - (ptr & 4095);
			n = pread(fd, buf + got, room, ptr);
			if (n <= 0) {
				*trunc = true;
				goto out;
			}
			nul = memchr(buf + got, '\0', n);
			if (nul) {
				got = nul - buf + 1;
				break;
			}
			got += n;
			ptr += n;
		}
	}
out:
	close(fd);
	return got;
}

int tnf_exec_data_capture(struct tnf_exec_data *d, pid_t pid, pid_t tid, const char *path,
			  unsigned long long uargv, int error, unsigned int flags)
{
	char proc[64], cwd[PATH_MAX] = "";
	size_t len, bytes;
	bool trunc = false;
	char *args;
	ssize_t n;
	int r;

	args = malloc(TNFCTL_EXEC_ARGV_MAX);
	if (!args)
		return -ENOMEM;
	snprintf(proc, sizeof(proc), "/proc/%d/task/%d/cwd", pid, tid > 0 ? tid : pid);
	n = readlink(proc, cwd, sizeof(cwd));
	if (n < 0 || n >= (ssize_t)sizeof(cwd))
		n = 0;
	cwd[n] = '\0';
	if (!error) {
		/* Stopped before the new image's first instruction: /proc is exact. */
		snprintf(proc, sizeof(proc), "/proc/%d/cmdline", pid);
		len = read_file(proc, args, TNFCTL_EXEC_ARGV_MAX);
		bytes = argv_area_size(pid);
		if (bytes < len)
			bytes = len;
		trunc = bytes > len;
	} else {
		len = bytes = read_user_argv(pid, uargv, args, TNFCTL_EXEC_ARGV_MAX, &trunc);
	}
	if (trunc)
		flags |= TNFCTL_EXEC_ARGV_TRUNCATED;
	r = tnf_exec_data_set(d, path, cwd, args, len, bytes, flags, error);
	free(args);
	return r;
}
