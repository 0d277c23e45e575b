// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode's process filter (tnfctl_filter_state_set(3TNF) and
 * friends): the list of pids, each held by a pidfd so that a process that
 * exits leaves the list (as the Solaris kernel dropped it) and its pid,
 * reused, is not admitted; and its copy in the BPF program's map.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "ktrace.h"

static bool gone(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return pidfd >= 0 && poll(&p, 1, 0) == 1;
}

static void drop(struct tnf_kernel *k, int i)
{
	if (k->ks)
		kt_filter_update(k->ks, (uint32_t)k->pids[i].pid, false);
	if (k->pids[i].pidfd >= 0)
		close(k->pids[i].pidfd);
	k->pids[i] = k->pids[--k->npids];
}

/* Drops the processes that have exited; true if @pid was one of them. */
static bool prune(struct tnf_kernel *k, pid_t pid)
{
	bool was = false;
	int i;

	for (i = 0; i < k->npids;)
		if (gone(k->pids[i].pidfd)) {
			was |= k->pids[i].pid == pid;
			drop(k, i);
		} else {
			i++;
		}
	return was;
}

static int find(const struct tnf_kernel *k, pid_t pid)
{
	int i;

	for (i = 0; i < k->npids; i++)
		if (k->pids[i].pid == pid)
			return i;
	return -1;
}

/* The list into a freshly loaded program's map. */
tnfctl_errcode_t tnf_kfilter_load(struct tnf_kernel *k)
{
	int i, e;

	prune(k, 0);
	for (i = 0; i < k->npids; i++) {
		e = kt_filter_update(k->ks, (uint32_t)k->pids[i].pid, true);
		if (e)
			return tnf_kernel_err(e);
	}
	kt_set_filter(k->ks, k->filter);
	return TNFCTL_ERR_NONE;
}

void tnf_kfilter_free(struct tnf_kernel *k)
{
	while (k->npids)
		drop(k, k->npids - 1);
	free(k->pids);
	k->pids = NULL;
}

TNF_API tnfctl_errcode_t tnfctl_filter_state_set(tnfctl_handle_t *h, boolean_t on)
{
	if (!tnf_is_kernel(h))
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	h->kern->filter = on;
	if (h->kern->ks)
		kt_set_filter(h->kern->ks, on);
	tnf_kernel_refresh_attrs(h);
	pthread_mutex_unlock(&h->lock);
	return TNFCTL_ERR_NONE;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_get(tnfctl_handle_t *h, pid_t **list, int *n)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;
	int i;

	if (!tnf_is_kernel(h) || !list || !n)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	prune(k, 0);
	*list = NULL;
	*n = 0;
	if (k->npids) {
		*list = malloc((size_t)k->npids * sizeof(pid_t));
		if (*list) {
			for (i = 0; i < k->npids; i++)
				(*list)[i] = k->pids[i].pid;
			*n = k->npids;
		} else {
			err = TNFCTL_ERR_ALLOCFAIL;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_add(tnfctl_handle_t *h, pid_t pid)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;
	struct kt_pid *v;
	int fd = -1;

	if (!tnf_is_kernel(h) || pid < 0)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	prune(k, 0);
	if (find(k, pid) >= 0)
		goto out;
	if (k->npids == KT_MAX_PIDS) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out;
	}
	if (pid) {
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (fd < 0 || gone(fd)) { /* a zombie has exited too */
			err = fd < 0 && errno != ESRCH ? tnf_kernel_err(-errno)
						       : TNFCTL_ERR_NOPROCESS;
			goto out;
		}
	}
	v = realloc(k->pids, (size_t)(k->npids + 1) * sizeof(*v));
	if (!v) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out;
	}
	k->pids = v;
	if (k->ks)
		err = tnf_kernel_err(kt_filter_update(k->ks, (uint32_t)pid, true));
	if (!err) {
		k->pids[k->npids].pid = pid;
		k->pids[k->npids++].pidfd = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&h->lock);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_delete(tnfctl_handle_t *h, pid_t pid)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct tnf_kernel *k;
	int i;

	if (!tnf_is_kernel(h) || pid < 0)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	if (prune(k, pid)) {
		err = TNFCTL_ERR_NOPROCESS; /* it exited and left the list (Solaris: ESRCH) */
		goto out;
	}
	i = find(k, pid);
	if (i >= 0)
		drop(k, i);
	else if (pid && kill(pid, 0) && errno == ESRCH)
		err = TNFCTL_ERR_NOPROCESS;
	else
		err = TNFCTL_ERR_BADARG; /* not being traced */
out:
	pthread_mutex_unlock(&h->lock);
	return err;
}
