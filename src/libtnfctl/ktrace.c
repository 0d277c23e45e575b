// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode's BPF side: the generic tracepoint program (ktrace.bpf.c),
 * one link per enabled, traced tracepoint while tracing is on, and the
 * consumer thread that turns ring-buffer records into the TNF file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ktrace.h"
#include "ktrace.skel.h"

struct kt_state {
	struct ktrace_bpf *skel;
	struct ring_buffer *rb;
	struct kt_probe *probes;
	unsigned long n;
	pthread_mutex_t lock; /* the ring buffer and the file: consumer vs drain */
	pthread_t thread;
	bool running;
	int stop_fd;
	uint64_t lost_written;
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct kt_state *ks = ctx;
	const struct kt_hdr *h = data;
	const uint8_t *fixed;
	size_t fixed_len;

	if (len < sizeof(*h) || !h->probe || h->probe > ks->n)
		return 0;
	fixed = (const uint8_t *)(h + 1);
	fixed_len = h->fixed_size;
	if (fixed_len > len - sizeof(*h))
		return 0;
	ktf_event(&ks->probes[h->probe - 1], h, fixed, (const char *)fixed + fixed_len,
		  len - sizeof(*h) - fixed_len);
	return 0;
}

uint64_t kt_lost_total(struct kt_state *ks)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint64_t *v, sum = 0;
	uint32_t zero = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(ks->skel->maps.kt_lost), &zero, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

/* Caller holds ks->lock. */
static void consume_locked(struct kt_state *ks)
{
	uint64_t lost;

	ring_buffer__consume(ks->rb);
	lost = kt_lost_total(ks);
	if (lost > ks->lost_written) {
		ktf_lost(lost - ks->lost_written);
		ks->lost_written = lost;
	}
}

static void *consumer(void *arg)
{
	struct kt_state *ks = arg;
	struct epoll_event ev[2];
	int ep, n, i;
	bool stop = false;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return NULL;
	ev[0].events = EPOLLIN;
	ev[0].data.u32 = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, ring_buffer__epoll_fd(ks->rb), &ev[0]);
	ev[0].data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, ks->stop_fd, &ev[0]);
	while (!stop) {
		/* a timeout: lost counts reach the file even when nothing arrives */
		n = epoll_wait(ep, ev, 2, 1000);
		for (i = 0; i < n; i++)
			if (ev[i].data.u32 == 1)
				stop = true;
		pthread_mutex_lock(&ks->lock);
		consume_locked(ks);
		pthread_mutex_unlock(&ks->lock);
	}
	close(ep);
	return NULL;
}

int kt_load(struct kt_state **out, uint64_t rb_size, struct kt_probe *probes, unsigned long n)
{
	struct kt_state *ks = calloc(1, sizeof(*ks));
	int err;

	if (!ks)
		return -ENOMEM;
	ks->probes = probes;
	ks->n = n;
	ks->stop_fd = -1;
	pthread_mutex_init(&ks->lock, NULL);
	ks->skel = ktrace_bpf__open();
	if (!ks->skel) {
		err = -errno;
		goto fail;
	}
	err = bpf_map__set_max_entries(ks->skel->maps.kt_rb, (uint32_t)rb_size);
	if (!err)
		err = ktrace_bpf__load(ks->skel);
	if (err)
		goto fail;
	ks->rb = ring_buffer__new(bpf_map__fd(ks->skel->maps.kt_rb), on_record, ks, NULL);
	if (!ks->rb) {
		err = -errno;
		goto fail;
	}
	ks->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ks->stop_fd < 0) {
		err = -errno;
		goto fail;
	}
	*out = ks;
	return 0;
fail:
	kt_unload(ks);
	return err ? err : -EINVAL;
}

/*
 * TNFCTL_KTRACE_STALL=1 (a testing aid) leaves the consumer out: the ring
 * buffer is drained only when tracing stops, as if the consumer could not
 * keep up, so an overflow can be made on purpose.
 */
int kt_start_consumer(struct kt_state *ks)
{
	const char *stall = getenv("TNFCTL_KTRACE_STALL");
	int err;

	if (stall && *stall == '1')
		return 0;
	err = pthread_create(&ks->thread, NULL, consumer, ks);

	if (err)
		return -err;
	ks->running = true;
	return 0;
}

/* Everything the kernel wrote so far is in the file when this returns. */
void kt_drain(struct kt_state *ks)
{
	pthread_mutex_lock(&ks->lock);
	consume_locked(ks);
	pthread_mutex_unlock(&ks->lock);
}

void kt_unload(struct kt_state *ks)
{
	unsigned long i;
	uint64_t one = 1;

	if (!ks)
		return;
	for (i = 0; i < ks->n; i++)
		kt_detach(ks, &ks->probes[i]);
	if (ks->running) {
		if (write(ks->stop_fd, &one, sizeof(one)) != sizeof(one))
			(void)0; /* an eventfd write of 1 does not fail */
		pthread_join(ks->thread, NULL);
	}
	if (ks->rb)
		kt_drain(ks);
	ring_buffer__free(ks->rb);
	ktrace_bpf__destroy(ks->skel);
	if (ks->stop_fd >= 0)
		close(ks->stop_fd);
	pthread_mutex_destroy(&ks->lock);
	free(ks);
}

int kt_attach(struct kt_state *ks, struct kt_probe *p)
{
	LIBBPF_OPTS(bpf_tracepoint_opts, o, .bpf_cookie = p->cfg.probe);
	uint32_t key = p->cfg.probe;
	struct bpf_link *l;

	if (p->link)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(ks->skel->maps.kt_events), &key, &p->cfg, BPF_ANY))
		return -errno;
	l = bpf_program__attach_tracepoint_opts(ks->skel->progs.kt_event, p->subsys, p->event, &o);
	if (!l) {
		int err = -errno;

		bpf_map_delete_elem(bpf_map__fd(ks->skel->maps.kt_events), &key);
		return err;
	}
	p->link = l;
	return 0;
}

void kt_detach(struct kt_state *ks, struct kt_probe *p)
{
	uint32_t key = p->cfg.probe;

	if (!p->link)
		return;
	bpf_link__destroy(p->link);
	p->link = NULL;
	bpf_map_delete_elem(bpf_map__fd(ks->skel->maps.kt_events), &key);
}

void kt_set_tracing(struct kt_state *ks, bool on)
{
	__atomic_store_n(&ks->skel->bss->tracing_on, on ? 1 : 0, __ATOMIC_RELEASE);
}

void kt_set_filter(struct kt_state *ks, bool on)
{
	__atomic_store_n(&ks->skel->bss->filter_on, on ? 1 : 0, __ATOMIC_RELEASE);
}

int kt_filter_update(struct kt_state *ks, uint32_t pid, bool add)
{
	uint8_t one = 1;
	int fd = bpf_map__fd(ks->skel->maps.kt_pids);

	if (add)
		return bpf_map_update_elem(fd, &pid, &one, BPF_ANY) ? -errno : 0;
	return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
}
