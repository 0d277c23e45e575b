// SPDX-License-Identifier: BSD-2-Clause
/*
 * The trace file (tnfctl_buffer_alloc(3TNF)) and the trace attributes read
 * back from the target's runtime (tnfctl_trace_attrs_get(3TNF)).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "tnf_runtime.h"

#define RT_OFF(f) offsetof(struct tnf_runtime, f)

tnfctl_errcode_t tnf_attrs_refresh(struct tnfctl_handle *h)
{
	tnfctl_trace_attrs_t *a = &h->attrs;
	struct tnf_runtime *rt;
	tnfctl_errcode_t err;
	uint32_t st;

	if (!h->pr.ready)
		return TNFCTL_ERR_NONE;
	rt = malloc(sizeof(*rt));
	if (!rt)
		return TNFCTL_ERR_ALLOCFAIL;
	err = tnf_read(h, h->pr.rt.runtime, rt, sizeof(*rt));
	if (err)
		goto out;
	rt->file_name[sizeof(rt->file_name) - 1] = '\0';
	if (rt->file_ready && rt->file_name[0] &&
	    (!h->pr.buf_name || strcmp(h->pr.buf_name, rt->file_name))) {
		free(h->pr.buf_name);
		h->pr.buf_name = strdup(rt->file_name);
	}
	st = rt->state;
	a->targ_pid = h->pr.ops.p_getpid(h->pr.proc);
	a->trace_file_name = h->pr.buf_name;
	a->trace_buf_size = h->pr.buf_name ? rt->file_size : 0;
	a->trace_min_size = rt->file_min;
	if ((st & TNF_STATE_MASK) == TNF_STATE_BROKEN)
		a->trace_buf_state = TNFCTL_BUF_BROKEN;
	else if (!h->pr.buf_name)
		a->trace_buf_state = TNFCTL_BUF_NONE;
	else
		a->trace_buf_state = TNFCTL_BUF_OK;
	a->trace_state = (st & TNF_STATE_STOPPED) ? B_FALSE : B_TRUE;
	a->filter_state = B_FALSE;
out:
	free(rt);
	return err;
}

tnfctl_errcode_t tnf_map_errno(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return TNFCTL_ERR_FILENOTFOUND;
	case EACCES:
	case EPERM:
	case ELOOP:
	case EROFS:
		return TNFCTL_ERR_ACCES;
	case ENAMETOOLONG:
		return TNFCTL_ERR_BADARG;
	case ENOMEM:
	case ENOSPC:
	case EDQUOT:
		return TNFCTL_ERR_ALLOCFAIL;
	default:
		return TNFCTL_ERR_INTERNAL;
	}
}

/*
 * An existing file is replaced only if it is a plain file of ours with a
 * single link; a symlink or someone else's file (e.g. planted in /tmp) is
 * refused.  O_EXCL|O_NOFOLLOW then closes the race with a new plant.
 */
static bool replaceable(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && st->st_nlink == 1;
}

/* Sizes the new file @fd; 0, or -1 with *@err (the caller removes it). */
static int fill_file(int fd, uint64_t size, uid_t owner, tnfctl_errcode_t *err)
{
	/* Real blocks, so that the target never takes SIGBUS on a full disk. */
	int r = posix_fallocate(fd, 0, (off_t)size);

	if (r) {
		*err = tnf_map_errno(r);
		return -1;
	}
	/* A target of another uid (root tracing a user) must be able to open it. */
	if (owner != geteuid() && fchown(fd, owner, (gid_t)-1))
		(void)0;
	return 0;
}

int tnf_create_file(const char *path, uint64_t size, uid_t owner, tnfctl_errcode_t *err)
{
	struct stat st;
	int fd;

	if (!lstat(path, &st)) {
		if (!replaceable(&st)) {
			*err = TNFCTL_ERR_ACCES;
			return -1;
		}
		if (unlink(path) && errno != ENOENT) {
			*err = tnf_map_errno(errno);
			return -1;
		}
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		*err = errno == EEXIST ? TNFCTL_ERR_ACCES : tnf_map_errno(errno);
		return -1;
	}
	if (fill_file(fd, size, owner, err)) {
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * As tnf_create_file(), but with no name (O_TMPFILE) or, where the
 * filesystem has no O_TMPFILE, under a temporary name in @path's
 * directory; tnf_tmpfile_commit() gives it @path.  Until then a file
 * already at @path is left as it is, so a failed allocation does not lose
 * it, and a controller killed meanwhile leaves no file behind (an
 * unnamed one).
 */
int tnf_create_tmpfile(const char *path, uint64_t size, uid_t owner, struct tnf_tmpfile *t,
		       tnfctl_errcode_t *err)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;
	unsigned int r;
	int fd = -1, i;

	t->dirfd = -1;
	t->fd = -1;
	t->name[0] = '\0';
	/* tnf_abs_path() made it absolute */
	if (!slash || !slash[1] || (size_t)(slash - path) >= sizeof(dir)) {
		*err = TNFCTL_ERR_BADARG;
		return -1;
	}
	if (slash == path) {
		strcpy(dir, "/");
	} else {
		memcpy(dir, path, slash - path);
		dir[slash - path] = '\0';
	}
	t->base = slash + 1;
	t->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->dirfd < 0) {
		*err = tnf_map_errno(errno);
		return -1;
	}
	if (!fstatat(t->dirfd, t->base, &st, AT_SYMLINK_NOFOLLOW) && !replaceable(&st)) {
		*err = TNFCTL_ERR_ACCES;
		goto fail;
	}
	fd = openat(t->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (fill_file(fd, size, owner, err) ||
		    ((t->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 &&
		     (*err = tnf_map_errno(errno)))) {
			close(fd);
			tnf_tmpfile_discard(t);
			return -1;
		}
		return fd;
	}
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)getpid() * 2654435761u;
	/* a name taken (planted or ours from a crashed run): the next one */
	for (i = 0; i < 100 && fd < 0; i++) {
		snprintf(t->name, sizeof(t->name), ".tnf-tmp-%08x", r + i * 40503u);
		fd = openat(t->dirfd, t->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0 && errno != EEXIST) {
			*err = tnf_map_errno(errno);
			goto fail;
		}
	}
	if (fd < 0) {
		*err = TNFCTL_ERR_ACCES;
		goto fail;
	}
	if (fill_file(fd, size, owner, err)) {
		close(fd);
		tnf_tmpfile_discard(t);
		return -1;
	}
	return fd;
fail:
	t->name[0] = '\0';
	tnf_tmpfile_discard(t);
	return -1;
}

/*
 * The O_TMPFILE file @t->fd linked at @name in its directory (by its
 * /proc/self/fd name: AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
 */
static int link_tmpfile(struct tnf_tmpfile *t, const char *name)
{
	char proc[32];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", t->fd);
	return linkat(AT_FDCWD, proc, t->dirfd, name, AT_SYMLINK_FOLLOW);
}

/*
 * An O_TMPFILE file: linked at its path when nothing is there, else at a
 * temporary name then renamed over it (the name lives only that long).
 */
static tnfctl_errcode_t commit_unnamed(struct tnf_tmpfile *t)
{
	unsigned int r;
	int i, e = EEXIST;

	if (!link_tmpfile(t, t->base))
		return TNFCTL_ERR_NONE;
	if (errno != EEXIST)
		return tnf_map_errno(errno);
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)getpid() * 2654435761u;
	for (i = 0; i < 100 && e == EEXIST; i++) {
		snprintf(t->name, sizeof(t->name), ".tnf-tmp-%08x", r + i * 40503u);
		e = link_tmpfile(t, t->name) ? errno : 0;
	}
	if (e) {
		t->name[0] = '\0';
		return e == EEXIST ? TNFCTL_ERR_ACCES : tnf_map_errno(e);
	}
	return TNFCTL_ERR_NONE; /* renamed by the caller */
}

/* Gives the file its path (renamed over what is there); on failure it is removed. */
tnfctl_errcode_t tnf_tmpfile_commit(struct tnf_tmpfile *t)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct stat st;

	if (t->fd >= 0) {
		err = commit_unnamed(t);
		if (err || !t->name[0]) {
			tnf_tmpfile_discard(t);
			return err;
		}
	}
	/*
	 * What is at the path now (made since the check at creation) is
	 * replaced only if it is ours: in a sticky directory no one else can
	 * swap it before the rename.
	 */
	if (!fstatat(t->dirfd, t->base, &st, AT_SYMLINK_NOFOLLOW) && !replaceable(&st)) {
		tnf_tmpfile_discard(t);
		return TNFCTL_ERR_ACCES;
	}
	if (renameat(t->dirfd, t->name, t->dirfd, t->base)) {
		err = tnf_map_errno(errno);
		tnf_tmpfile_discard(t);
		return err;
	}
	t->name[0] = '\0';
	tnf_tmpfile_discard(t);
	return err;
}

/* Removes the temporary file, if any. */
void tnf_tmpfile_discard(struct tnf_tmpfile *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->dirfd < 0)
		return;
	if (t->name[0])
		unlinkat(t->dirfd, t->name, 0);
	close(t->dirfd);
	t->dirfd = -1;
	t->fd = -1;
	t->name[0] = '\0';
}

/* @name made absolute (relative to the cwd) into @path. */
tnfctl_errcode_t tnf_abs_path(const char *name, char *path, size_t len)
{
	char cwd[PATH_MAX];

	if (name[0] == '/') {
		if (strlen(name) >= len)
			return TNFCTL_ERR_BADARG;
		strcpy(path, name);
		return TNFCTL_ERR_NONE;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return tnf_map_errno(errno);
	if (snprintf(path, len, "%s/%s", cwd, name) >= (int)len)
		return TNFCTL_ERR_BADARG;
	return TNFCTL_ERR_NONE;
}

static uid_t target_uid(struct tnfctl_handle *h)
{
	char path[64], line[256];
	unsigned int r, e;
	uid_t uid = geteuid();
	FILE *f;

	if (h->pr.mode != TNF_MODE_DIRECT)
		return uid;
	snprintf(path, sizeof(path), "/proc/%d/status", h->pid);
	f = fopen(path, "re");
	if (!f)
		return uid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u", &r, &e) == 2) {
			uid = e;
			break;
		}
	fclose(f);
	return uid;
}

static tnfctl_errcode_t alloc_locked(struct tnfctl_handle *h, const char *name, uint_t size)
{
	char path[PATH_MAX];
	uintptr_t rt = h->pr.rt.runtime;
	uint64_t sz = size;
	uint32_t one = 1;
	tnfctl_errcode_t err;
	int fd;

	err = tnf_attrs_refresh(h);
	if (err)
		return err;
	if (h->pr.buf_name)
		return TNFCTL_ERR_BUFEXISTS;
	if (size < h->attrs.trace_min_size)
		return TNFCTL_ERR_SIZETOOSMALL;
	if (size > TNF_TRACE_FILE_MAX)
		return TNFCTL_ERR_SIZETOOBIG; /* the runtime would refuse to map it */
	if (!name || !name[0])
		return TNFCTL_ERR_BADARG;
	err = tnf_abs_path(name, path, sizeof(path));
	if (err)
		return err;
	if (strlen(path) >= TNF_RUNTIME_NAME_MAX)
		return TNFCTL_ERR_BADARG;
	fd = tnf_create_file(path, sz, target_uid(h), &err);
	if (fd < 0)
		return err;
	close(fd);
	/* Size and name first; file_ready last tells the runtime to map it. */
	err = tnf_write(h, rt + RT_OFF(file_size), &sz, sizeof(sz));
	if (!err)
		err = tnf_write(h, rt + RT_OFF(file_name), path, strlen(path) + 1);
	if (!err)
		err = tnf_write(h, rt + RT_OFF(file_ready), &one, sizeof(one));
	if (err) {
		unlink(path);
		return err;
	}
	return tnf_attrs_refresh(h);
}

TNF_API tnfctl_errcode_t tnfctl_buffer_alloc(tnfctl_handle_t *h, const char *name, uint_t size)
{
	tnfctl_errcode_t err;

	if (!h)
		return TNFCTL_ERR_BADARG;
	if (h->pr.mode == TNF_MODE_KERNEL)
		return tnf_kernel_buffer_alloc(h, name, size);
	pthread_mutex_lock(&h->lock);
	err = tnf_probes_usable(h);
	if (!err)
		err = alloc_locked(h, name, size);
	pthread_mutex_unlock(&h->lock);
	return err;
}
