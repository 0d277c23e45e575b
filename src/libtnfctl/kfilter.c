// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode's process filter (tnfctl_filter_state_set(3TNF) and
 * friends): the list of processes, each known by its pid and its start,
 * and its copy in the BPF program's map.  The program compares the start
 * too, so a new process given a listed pid does not pass; a process that
 * has exited leaves the list (as the Solaris kernel dropped it).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "ktrace.h"

static bool alive(const struct kt_pid *p)
{
	return !p->pid || tnf_start_ticks(p->pid) == p->start;
}

static void drop(struct tnf_kernel *k, int i)
{
	if (k->ks)
		kt_filter_update(k->ks, (uint32_t)k->pids[i].pid, 0, false);
	k->pids[i] = k->pids[--k->npids];
}

/* Drops the processes that have exited; true if @pid was one of them. */
static bool prune(struct tnf_kernel *k, pid_t pid)
{
	bool was = false;
	int i;

	for (i = 0; i < k->npids;)
		if (!alive(&k->pids[i])) {
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

/*
 * @pid's start if it is a live process (not a thread of one, not a
 * zombie); else 0 with *err set.
 */
static uint64_t process_start(pid_t pid, tnfctl_errcode_t *err)
{
	char path[64], line[128], state = 0;
	long tgid = -1;
	uint64_t start;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f) {
		*err = errno == ENOENT || errno == ESRCH ? TNFCTL_ERR_NOPROCESS
							 : tnf_kernel_err(-errno);
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "State: %c", &state) == 1 || sscanf(line, "Tgid: %ld", &tgid) == 1)
			if (state && tgid >= 0)
				break;
	fclose(f);
	*err = TNFCTL_ERR_NOPROCESS;
	if (tgid != pid) {
		if (tgid > 0)
			*err = TNFCTL_ERR_BADARG; /* a thread: the filter takes processes */
		return 0;
	}
	if (state == 'Z' || state == 'X')
		return 0;
	start = tnf_start_ticks(pid);
	if (start)
		*err = TNFCTL_ERR_NONE;
	return start;
}

/* The list into a freshly loaded program's map. */
tnfctl_errcode_t tnf_kfilter_load(struct tnf_kernel *k)
{
	int i, e;

	prune(k, 0);
	for (i = 0; i < k->npids; i++) {
		e = kt_filter_update(k->ks, (uint32_t)k->pids[i].pid, k->pids[i].start, true);
		if (e)
			return tnf_kernel_err(e);
	}
	kt_set_filter(k->ks, k->filter);
	return TNFCTL_ERR_NONE;
}

void tnf_kfilter_free(struct tnf_kernel *k)
{
	free(k->pids);
	k->pids = NULL;
	k->npids = 0;
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
	uint64_t start = 0;
	int i;

	if (!tnf_is_kernel(h) || pid < 0)
		return TNFCTL_ERR_BADARG;
	if (pid) {
		start = process_start(pid, &err);
		if (err)
			return err;
	}
	pthread_mutex_lock(&h->lock);
	k = h->kern;
	i = find(k, pid);
	if (i >= 0 && k->pids[i].start == start)
		goto out;
	if (i >= 0) /* an earlier process with that pid */
		drop(k, i);
	if (k->npids == KT_MAX_PIDS) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out;
	}
	v = realloc(k->pids, (size_t)(k->npids + 1) * sizeof(*v));
	if (!v) {
		err = TNFCTL_ERR_ALLOCFAIL;
		goto out;
	}
	k->pids = v;
	if (k->ks)
		err = tnf_kernel_err(kt_filter_update(k->ks, (uint32_t)pid, start, true));
	if (!err) {
		k->pids[k->npids].pid = pid;
		k->pids[k->npids++].start = start;
	}
out:
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
