// SPDX-License-Identifier: BSD-2-Clause
/*
 * uprobe links.  A perf uprobe link's release waits for an RCU tasks-trace
 * grace period while holding a global mutex (~0.1 s each, one after the
 * other); a uprobe_multi link (Linux 6.6+) waits without it, so links
 * released together share one.  libbpf 1.1 predates uprobe_multi: its
 * attach type and BPF_LINK_CREATE attributes are spelt here from the
 * kernel's UAPI.  Where it can, tnf_uprobe_release_all() hands the last
 * references to a detached process (link_release.c) and waits for none.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "kfeatures.h"

#define TNF_BPF_TRACE_UPROBE_MULTI    48
#define TNF_BPF_F_UPROBE_MULTI_RETURN 1U

struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, um_flags, pid, pad;
};

void tnf_uprobe_prepare(struct bpf_program *prog)
{
	if (tnf_kfeatures()->uprobe_multi)
		bpf_program__set_expected_attach_type(prog, TNF_BPF_TRACE_UPROBE_MULTI);
}

/* @cookie: what bpf_get_attach_cookie() gives the program (uprobe_multi: 6.6, perf: 5.15). */
int tnf_uprobe_attach_cookie(struct bpf_program *prog, bool ret, const char *path, uint64_t off,
			     uint64_t cookie, struct tnf_ulink *l)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret, .bpf_cookie = cookie);
	struct link_create_uprobe_multi a = {
		.prog_fd = bpf_program__fd(prog),
		.attach_type = TNF_BPF_TRACE_UPROBE_MULTI,
		.path = (uintptr_t)path,
		.offsets = (uintptr_t)&off,
		.cookies = (uintptr_t)&cookie,
		.cnt = 1,
		.um_flags = ret ? TNF_BPF_F_UPROBE_MULTI_RETURN : 0,
	};

	l->link = NULL;
	l->fd = -1;
	if (bpf_program__expected_attach_type(prog) == TNF_BPF_TRACE_UPROBE_MULTI) {
		l->fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
		return l->fd < 0 ? -errno : 0;
	}
	l->link = bpf_program__attach_uprobe_opts(prog, -1, path, off, &o);
	return l->link ? 0 : -errno;
}

int tnf_uprobe_attach(struct bpf_program *prog, bool ret, const char *path, uint64_t off,
		      struct tnf_ulink *l)
{
	return tnf_uprobe_attach_cookie(prog, ret, path, off, 0, l);
}

static void release(struct tnf_ulink *l)
{
	if (l->link)
		bpf_link__destroy(l->link);
	else if (l->fd >= 0)
		close(l->fd);
	l->link = NULL;
	l->fd = -1;
}

static void *release_thread(void *arg)
{
	release(arg);
	return NULL;
}

void tnf_uprobe_release_all(struct tnf_ulink *l, size_t n)
{
	int *fds = calloc(n ? n : 1, sizeof(*fds)), go = -1;
	pthread_t *th = NULL;
	bool *started = NULL;
	size_t i, k = 0;

	for (i = 0; fds && i < n; i++)
		if ((fds[k] = l[i].link ? bpf_link__fd(l[i].link) : l[i].fd) >= 0)
			k++;
	if (fds)
		go = tnf_links_hand_off(fds, k);
	free(fds);
	if (go >= 0) {
		/* the detached process holds them: these releases are not the last */
		for (i = 0; i < n; i++)
			release(&l[i]);
		close(go);
		return;
	}
	th = calloc(n, sizeof(*th));
	started = calloc(n, sizeof(*started));
	for (i = 0; th && started && i < n; i++)
		started[i] = !pthread_create(&th[i], NULL, release_thread, &l[i]);
	for (i = 0; i < n; i++) {
		if (started && started[i])
			pthread_join(th[i], NULL);
		else
			release(&l[i]);
	}
	free(th);
	free(started);
}

struct release_job {
	struct tnf_ulink *l;
	size_t n;
};

static void *release_all_thread(void *arg)
{
	struct release_job *j = arg;

	tnf_uprobe_release_all(j->l, j->n);
	free(j->l);
	free(j);
	return NULL;
}

/*
 * Release @n links on a detached thread (signals blocked): the grace
 * periods off the caller's time.  @l (malloc'd) is taken over.
 */
void tnf_uprobe_release_async(struct tnf_ulink *l, size_t n)
{
	struct release_job *j = malloc(sizeof(*j));
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t th;
	int e = -1;

	if (!n) {
		free(l);
		free(j);
		return;
	}
	if (j && !pthread_attr_init(&at)) {
		j->l = l;
		j->n = n;
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		e = pthread_create(&th, &at, release_all_thread, j);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&at);
	}
	if (e) {
		free(j);
		tnf_uprobe_release_all(l, n);
		free(l);
	}
}
