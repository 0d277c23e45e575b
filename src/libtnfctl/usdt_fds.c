// SPDX-License-Identifier: BSD-2-Clause
/*
 * The USDT session's descriptors, for a controller's forked child to let
 * go of: a child holding a copy of a uprobe's perf event keeps the uprobe
 * and its semaphore count after the parent detached it.  libbpf's USDT
 * link does not give its descriptors, so after each attach the perf
 * events and BPF links of /proc/self/fd that carry the session's program
 * and are not registered yet are claimed.  The registry's lock is held
 * across each attach and detach, and by the fork handler: a child never
 * sees an attach or detach half done.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <bpf/bpf.h>

#include "usdt.h"

static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;
static int *fds;
static size_t nfds, cap;

void tnf_usdt_fds_lock(void)
{
	pthread_mutex_lock(&fds_lock);
}

void tnf_usdt_fds_unlock(void)
{
	pthread_mutex_unlock(&fds_lock);
}

/* Caller holds the lock.  0, or -1 (ENOMEM). */
int tnf_usdt_fds_add(int fd)
{
	int *v;

	if (fd < 0)
		return 0;
	if (nfds == cap) {
		v = realloc(fds, (cap ? 2 * cap : 32) * sizeof(*v));
		if (!v)
			return -1;
		fds = v;
		cap = cap ? 2 * cap : 32;
	}
	fds[nfds++] = fd;
	return 0;
}

/* Caller holds the lock. */
void tnf_usdt_fds_del(int fd)
{
	size_t i;

	for (i = 0; i < nfds; i++)
		if (fds[i] == fd) {
			fds[i] = fds[--nfds];
			return;
		}
}

enum fd_kind {
	FD_OTHER,
	FD_PERF,
	FD_LINK
};

static enum fd_kind kind_of(int dir, const char *name)
{
	static const char perf[] = "anon_inode:[perf_event]", link[] = "anon_inode:bpf_link";
	char t[sizeof(perf)];
	ssize_t n = readlinkat(dir, name, t, sizeof(t));

	if (n == sizeof(perf) - 1 && !memcmp(t, perf, (size_t)n))
		return FD_PERF;
	if (n == sizeof(link) - 1 && !memcmp(t, link, (size_t)n))
		return FD_LINK;
	return FD_OTHER;
}

/* The id of the program attached through perf event or link @fd; 0 if none. */
static uint32_t prog_of(int fd, enum fd_kind k)
{
	__u64 off, addr;
	uint32_t id = 0, type, len;
	char buf[PATH_MAX];

	if (k == FD_PERF) {
		len = sizeof(buf);
		if (bpf_task_fd_query(getpid(), fd, 0, buf, &len, &id, &type, &off, &addr))
			return 0;
		return id;
	} else {
		struct bpf_link_info li;

		memset(&li, 0, sizeof(li));
		len = sizeof(li);
		if (bpf_obj_get_info_by_fd(fd, &li, &len))
			return 0;
		return li.prog_id;
	}
}

static bool registered(int fd)
{
	size_t i;

	for (i = 0; i < nfds; i++)
		if (fds[i] == fd)
			return true;
	return false;
}

/*
 * Caller holds the lock, right after an attach of program @prog_id: the
 * perf events and links through which @prog_id is attached that are not
 * registered yet are that attach's (every attach and detach of @prog_id
 * is made under the lock); registered, and added to *@own (*@n long).
 * Another thread's descriptors are never taken: they do not carry
 * @prog_id.  0, or -1 (ENOMEM, or /proc unreadable).
 */
int tnf_usdt_fds_claim(uint32_t prog_id, int **own, unsigned *n)
{
	struct dirent *e;
	enum fd_kind k;
	int fd, *v, r = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (!r && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = (int)strtol(e->d_name, NULL, 10);
		if (fd == dirfd(d) || registered(fd))
			continue;
		k = kind_of(dirfd(d), e->d_name);
		if (k == FD_OTHER || prog_of(fd, k) != prog_id)
			continue;
		v = realloc(*own, (*n + 1) * sizeof(*v));
		if (!v || tnf_usdt_fds_add(fd)) {
			if (v)
				*own = v;
			r = -1;
			break;
		}
		*own = v;
		v[(*n)++] = fd;
	}
	closedir(d);
	return r;
}

/*
 * In a forked child (the lock held by the fork's prepare handler): each
 * registered descriptor becomes a copy of an eventfd of the child's own,
 * which lets go of the parent's object and keeps the number for the
 * child's own close.
 */
void tnf_usdt_fds_child(void)
{
	int cover = nfds ? eventfd(0, EFD_CLOEXEC) : -1;
	size_t i;

	for (i = 0; cover >= 0 && i < nfds; i++)
		dup3(cover, fds[i], O_CLOEXEC);
	if (cover >= 0)
		close(cover);
	nfds = 0;
	pthread_mutex_init(&fds_lock, NULL);
}
