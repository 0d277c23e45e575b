// SPDX-License-Identifier: BSD-2-Clause
/*
 * The USDT session's descriptors, for a controller's forked child to let
 * go of: a child holding a copy of a uprobe's perf event keeps the uprobe
 * and its semaphore count after the parent detached it.  libbpf's USDT
 * link does not give its descriptors, so an attach is bracketed by two
 * scans of /proc/self/fd and the perf events and BPF links it opened are
 * registered (one opened by another thread meanwhile would be taken too:
 * the child would only lose that copy).  The registry's lock is held
 * across each attach and detach, and by the fork handler: a child never
 * sees an attach or detach half done.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usdt.h"

static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;
static int *fds;
static size_t nfds, cap;
static int cover_fd = -1; /* the session's eventfd, while there is one */

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

static bool is_uprobe_fd(int dir, const char *name)
{
	static const char perf[] = "anon_inode:[perf_event]", link[] = "anon_inode:bpf_link";
	char t[sizeof(perf)];
	ssize_t n = readlinkat(dir, name, t, sizeof(t));

	return (n == sizeof(perf) - 1 && !memcmp(t, perf, (size_t)n)) ||
	       (n == sizeof(link) - 1 && !memcmp(t, link, (size_t)n));
}

/*
 * The perf event and BPF link descriptors open now, in *@set (a bitmap
 * by descriptor, malloc'd, *@nbits long).  0, or -1.
 */
int tnf_usdt_fds_scan(unsigned char **set, size_t *nbits)
{
	unsigned char *b = NULL, *nb;
	size_t n = 0;
	struct dirent *e;
	DIR *d;
	long fd;

	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		fd = strtol(e->d_name, NULL, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d) ||
		    !is_uprobe_fd(dirfd(d), e->d_name))
			continue;
		if ((size_t)fd >= n) {
			size_t want = ((size_t)fd / 8 + 64) * 8;

			nb = realloc(b, want / 8);
			if (!nb) {
				free(b);
				closedir(d);
				return -1;
			}
			memset(nb + n / 8, 0, (want - n) / 8);
			b = nb;
			n = want;
		}
		b[fd / 8] |= (unsigned char)(1u << (fd % 8));
	}
	closedir(d);
	*set = b;
	*nbits = n;
	return 0;
}

/* Caller holds the lock: what a child's registered descriptors become copies of. */
void tnf_usdt_fds_set_cover(int fd)
{
	cover_fd = fd;
}

/*
 * In a forked child (the lock held by the fork's prepare handler): each
 * registered descriptor becomes a copy of the cover, which lets go of the
 * parent's object and keeps the number for the child's own close.
 */
void tnf_usdt_fds_child(void)
{
	size_t i;

	for (i = 0; cover_fd >= 0 && i < nfds; i++)
		dup3(cover_fd, fds[i], O_CLOEXEC);
	nfds = 0;
	cover_fd = -1;
	pthread_mutex_init(&fds_lock, NULL);
}
