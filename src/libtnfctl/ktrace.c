// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel mode's BPF side: the generic tracepoint program (ktrace.bpf.c),
 * a link per tracepoint once it has been enabled and traced while tracing
 * was on, and the consumer thread that turns ring-buffer records into the
 * TNF file.  A link's program writes only while its kt_events entry
 * exists (the probe enabled, traced, tracing on); the link itself stays
 * until the buffer goes: the kernel takes ~0.1 s to release each, and
 * refuses the same program twice on a tracepoint (EEXIST) while an old
 * link is still being released.
 *
 * Without BPF cookies (before 5.15, or TNFCTL_KTRACE_COMPAT=1) the program
 * cannot tell tracepoints apart: each link gets one of KT_SLOTS stub
 * programs instead, its slot holding the serial in kt_slots.  A slot is
 * taken back from a link whose probe writes nothing only when all are in
 * use; with KT_SLOTS probes active the next one fails (-ENOSPC).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <linux/membarrier.h>
#include <linux/perf_event.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kfeatures.h"
#include "ktrace.h"
#include "ktrace.skel.h"
#include "tnf_drops.h"

#define KT_POLL_MS 50 /* longest a record waits in the ring buffer */

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
	uint64_t missed_written; /* runs the kernel skipped (recursion) */
	uint64_t serial;	 /* of the last link attached */
	bool compat;		 /* the slot stubs, not kt_event */
	struct bpf_program *slot_prog[KT_SLOTS];
	struct kt_probe *slot_owner[KT_SLOTS]; /* whose link holds the slot */
};

/*
 * The no-cookie variant where the kernel has no cookies, or where
 * TNFCTL_KTRACE_COMPAT=1 asks for it (read at each load: the tests run both).
 */
static bool want_compat(void)
{
	const char *force = getenv("TNFCTL_KTRACE_COMPAT");

	return !tnf_kfeatures()->attach_cookie || (force && *force == '1');
}

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

/*
 * Events the program never saw: the kernel does not run it for a
 * tracepoint hit while it already runs on that CPU (an interrupt during
 * it), and counts that in the program's recursion_misses.
 */
static uint64_t prog_missed(struct bpf_program *prog)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	/* 0 where the kernel does not count a tracepoint program's misses (before 6.7) */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return info.recursion_misses;
}

static uint64_t kt_missed_total(struct kt_state *ks)
{
	uint64_t sum = 0;
	int i;

	if (!ks->compat)
		return prog_missed(ks->skel->progs.kt_event);
	for (i = 0; i < KT_SLOTS; i++)
		sum += prog_missed(ks->slot_prog[i]);
	return sum;
}

/* Caller holds ks->lock. */
static void consume_locked(struct kt_state *ks)
{
	uint64_t lost, missed;

	ring_buffer__consume(ks->rb);
	lost = kt_lost_total(ks);
	if (lost > ks->lost_written) {
		ktf_lost(lost - ks->lost_written, TNF_DROP_KERNEL_RB);
		ks->lost_written = lost;
	}
	missed = kt_missed_total(ks);
	if (missed > ks->missed_written) {
		ktf_lost(missed - ks->missed_written, TNF_DROP_KERNEL_NESTED);
		ks->missed_written = missed;
	}
}

static void detach_all(struct kt_state *ks);

static void *consumer(void *arg)
{
	struct kt_state *ks = arg;
	struct epoll_event ev[2];
	int ep, n, i;
	bool stop = false;

	__atomic_store_n(&ks->skel->bss->consumer_tid, (uint32_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return NULL;
	ev[0].events = EPOLLIN;
	ev[0].data.u32 = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, ring_buffer__epoll_fd(ks->rb), &ev[0]);
	ev[0].data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, ks->stop_fd, &ev[0]);
	while (!stop) {
		/*
		 * The program wakes us only when a quarter of the ring is unread:
		 * the timeout bounds how long a record waits (and brings the lost
		 * counts to the file when nothing arrives).
		 */
		n = epoll_wait(ep, ev, 2, KT_POLL_MS);
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

/* Only the variant in use is loaded (kt_event needs bpf_get_attach_cookie). */
static int pick_variant(struct kt_state *ks)
{
	char name[16];
	int i;

	ks->compat = want_compat();
	bpf_program__set_autoload(ks->skel->progs.kt_event, !ks->compat);
	for (i = 0; i < KT_SLOTS; i++) {
		snprintf(name, sizeof(name), "kt_slot%02d", i);
		ks->slot_prog[i] = bpf_object__find_program_by_name(ks->skel->obj, name);
		if (!ks->slot_prog[i])
			return -ENOENT;
		bpf_program__set_autoload(ks->slot_prog[i], ks->compat);
	}
	return 0;
}

int kt_load(struct kt_state **out, uint64_t rb_size, struct kt_probe *probes, unsigned long n)
{
	struct kt_state *ks = calloc(1, sizeof(*ks));
	unsigned long i;
	int err;

	if (!ks)
		return -ENOMEM;
	ks->probes = probes;
	ks->n = n;
	ks->stop_fd = -1;
	for (i = 0; i < n; i++)
		probes[i].slot = -1;
	pthread_mutex_init(&ks->lock, NULL);
	ks->skel = ktrace_bpf__open();
	if (!ks->skel) {
		err = -errno;
		goto fail;
	}
	ks->skel->rodata->wake_bytes = rb_size / 4;
	err = pick_variant(ks);
	if (!err)
		err = bpf_map__set_max_entries(ks->skel->maps.kt_rb, (uint32_t)rb_size);
	if (!err) {
		sigset_t all, old;

		/* the verifier gives up (EAGAIN) with a signal pending (usdt_trace.c) */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		err = ktrace_bpf__load(ks->skel);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
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
	uint64_t one = 1;

	if (!ks)
		return;
	detach_all(ks);
	kt_quiesce();
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

/*
 * bpf_program__attach_tracepoint_opts() with the perf event opened here, so
 * its descriptor is known (p->perf_fd; the link owns it): a forked child
 * lets go of both (kt_fork_child).
 */
static struct bpf_link *attach_tracepoint(struct kt_state *ks, struct kt_probe *p, uint64_t key)
{
	/* no cookie at all for a stub: libbpf refuses one where links cannot carry it */
	LIBBPF_OPTS(bpf_perf_event_opts, o, .bpf_cookie = ks->compat ? 0 : key);
	struct bpf_program *prog = ks->compat ? ks->slot_prog[p->slot] : ks->skel->progs.kt_event;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = p->tp_id,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	struct bpf_link *l;
	int pfd, e;

	pfd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return NULL;
	l = bpf_program__attach_perf_event_opts(prog, pfd, &o);
	if (!l) {
		e = errno;
		close(pfd);
		errno = e;
		return NULL;
	}
	p->perf_fd = pfd;
	return l;
}

/*
 * Sets slot @i's serial: 0 frees it.  The stub reads it at each hit, so a
 * hit of the old link finds the old serial (no kt_events entry) or 0.
 */
static int slot_set(struct kt_state *ks, int i, uint64_t serial)
{
	uint32_t key = (uint32_t)i;

	return bpf_map_update_elem(bpf_map__fd(ks->skel->maps.kt_slots), &key, &serial, BPF_ANY)
		       ? -errno
		       : 0;
}

/*
 * Takes @p's link and slot away (its probe writes nothing: no kt_events
 * entry).  The link is released here, not handed off, and every run of it
 * waited for, before the slot can carry another tracepoint's serial.
 */
static void slot_reclaim(struct kt_state *ks, struct kt_probe *p)
{
	int i = p->slot;

	slot_set(ks, i, 0);
	bpf_link__destroy(p->link);
	kt_quiesce();
	p->link = NULL;
	p->serial = 0;
	p->slot = -1;
	ks->slot_owner[i] = NULL;
}

/* A free slot for @p, or one taken back from an inactive probe; -ENOSPC if none. */
static int slot_take(struct kt_state *ks, struct kt_probe *p)
{
	int i;

	for (i = 0; i < KT_SLOTS; i++)
		if (!ks->slot_owner[i])
			goto found;
	for (i = 0; i < KT_SLOTS; i++)
		if (!ks->slot_owner[i]->active) {
			slot_reclaim(ks, ks->slot_owner[i]);
			goto found;
		}
	return -ENOSPC;
found:
	ks->slot_owner[i] = p;
	p->slot = i;
	return 0;
}

static void slot_release(struct kt_state *ks, struct kt_probe *p)
{
	if (p->slot < 0)
		return;
	slot_set(ks, p->slot, 0);
	ks->slot_owner[p->slot] = NULL;
	p->slot = -1;
}

/* @p's program writes from now on: its link made, or its entry put back. */
int kt_activate(struct kt_state *ks, struct kt_probe *p)
{
	uint64_t key = p->link ? p->serial : ks->serial + 1;
	int fd = bpf_map__fd(ks->skel->maps.kt_events), err;
	struct bpf_link *l;

	if (p->active)
		return 0;
	if (!p->link && ks->compat) {
		err = slot_take(ks, p);
		if (!err)
			err = slot_set(ks, p->slot, key);
		if (err) {
			slot_release(ks, p);
			return err;
		}
	}
	if (bpf_map_update_elem(fd, &key, &p->cfg, BPF_ANY)) {
		err = -errno;
		slot_release(ks, p);
		return err;
	}
	if (!p->link) {
		l = attach_tracepoint(ks, p, key);
		if (!l) {
			err = -errno;
			bpf_map_delete_elem(fd, &key);
			slot_release(ks, p);
			return err;
		}
		ks->serial = key;
		p->link = l;
		p->serial = key;
	}
	p->active = true;
	return 0;
}

/* @p's program writes nothing more (the link stays: see the top). */
void kt_deactivate(struct kt_state *ks, struct kt_probe *p)
{
	uint64_t key = p->serial;

	if (!p->active)
		return;
	bpf_map_delete_elem(bpf_map__fd(ks->skel->maps.kt_events), &key);
	p->active = false;
}

#define KT_RELEASE_THREADS 64

struct kt_release {
	struct bpf_link **links;
	size_t n, next;
	pthread_mutex_t lock;
};

static void *release_thread(void *arg)
{
	struct kt_release *r = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&r->lock);
		i = r->next++;
		pthread_mutex_unlock(&r->lock);
		if (i >= r->n)
			return NULL;
		bpf_link__destroy(r->links[i]);
	}
}

/*
 * Releases @n links.  The kernel waits out an RCU tasks-trace grace period
 * (about 0.1 s) for each perf link it releases, one after the other: a
 * detached process (link_release.c) takes the last references where it can,
 * else threads release them together so that the grace periods overlap.
 * Their kt_events entries are gone already: they write nothing meanwhile.
 */
static void release_links(struct bpf_link **links, size_t n)
{
	struct kt_release r = {.links = links, .n = n, .lock = PTHREAD_MUTEX_INITIALIZER};
	pthread_t th[KT_RELEASE_THREADS];
	int *fds = calloc(n ? n : 1, sizeof(*fds)), go = -1;
	size_t i, k;

	for (i = 0; fds && i < n; i++)
		fds[i] = bpf_link__fd(links[i]);
	if (fds)
		go = tnf_links_hand_off(fds, n);
	free(fds);
	if (go >= 0) {
		for (i = 0; i < n; i++)
			bpf_link__destroy(links[i]); /* not the last reference */
		close(go);
		return;
	}
	for (k = 0; k < KT_RELEASE_THREADS && k + 1 < n; k++)
		if (pthread_create(&th[k], NULL, release_thread, &r))
			break;
	release_thread(&r);
	for (i = 0; i < k; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&r.lock);
}

/* The program stops writing for @p's link at once. */
/* Every link released (the buffer goes); nothing is written for them meanwhile. */
static void detach_all(struct kt_state *ks)
{
	struct bpf_link **v = calloc(ks->n ? ks->n : 1, sizeof(*v));
	unsigned long i;
	size_t n = 0;

	for (i = 0; i < ks->n; i++) {
		struct bpf_link *l = ks->probes[i].link;

		kt_deactivate(ks, &ks->probes[i]);
		slot_release(ks, &ks->probes[i]);
		if (!l)
			continue;
		ks->probes[i].link = NULL;
		ks->probes[i].serial = 0;
		if (v)
			v[n++] = l;
		else
			release_links(&l, 1); /* no memory: one at a time */
	}
	if (n)
		release_links(v, n);
	free(v);
}

/*
 * Waits until no program started before the call is still running: they
 * run under rcu_read_lock(), and MEMBARRIER_CMD_GLOBAL waits for an RCU
 * grace period.  Without it (nohz_full), a record may follow the drain.
 */
void kt_quiesce(void)
{
	syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

void kt_set_tracing(struct kt_state *ks, bool on)
{
	__atomic_store_n(&ks->skel->bss->tracing_on, on ? 1 : 0, __ATOMIC_RELEASE);
}

void kt_set_filter(struct kt_state *ks, bool on)
{
	__atomic_store_n(&ks->skel->bss->filter_on, on ? 1 : 0, __ATOMIC_RELEASE);
}

int kt_filter_update(struct kt_state *ks, uint32_t pid, uint64_t start, bool add)
{
	int fd = bpf_map__fd(ks->skel->maps.kt_pids);

	if (add)
		return bpf_map_update_elem(fd, &pid, &start, BPF_ANY) ? -errno : 0;
	return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
}

static void cover_fd(int fd, int cover)
{
	if (fd >= 0)
		dup3(cover, fd, O_CLOEXEC);
}

/*
 * In a forked child, from the fork handler (so nothing is allocated): each
 * link, perf event, program and map descriptor becomes a copy of the stop
 * eventfd, which lets go of the parent's objects at once and keeps the
 * numbers for kt_forget to close.  (No file is opened: the child's own
 * syscalls are what the parent may be tracing.)
 */
void kt_fork_child(struct kt_state *ks)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	unsigned long i;

	if (!ks || ks->stop_fd < 0)
		return;
	obj = ks->skel->obj;
	for (i = 0; i < ks->n; i++)
		if (ks->probes[i].link) {
			cover_fd(bpf_link__fd(ks->probes[i].link), ks->stop_fd);
			cover_fd(ks->probes[i].perf_fd, ks->stop_fd);
		}
	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog))
		cover_fd(bpf_program__fd(prog), ks->stop_fd);
	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map))
		cover_fd(bpf_map__fd(map), ks->stop_fd);
}

/*
 * In a forked child: the descriptors and mappings are the parent's too, so
 * nothing is detached, drained, woken or written; they are only let go.
 */
void kt_forget(struct kt_state *ks)
{
	unsigned long i;

	if (!ks)
		return;
	for (i = 0; i < ks->n; i++)
		if (ks->probes[i].link) {
			bpf_link__disconnect(ks->probes[i].link);
			bpf_link__destroy(ks->probes[i].link);
			ks->probes[i].link = NULL;
		}
	ring_buffer__free(ks->rb);
	ktrace_bpf__destroy(ks->skel);
	if (ks->stop_fd >= 0)
		close(ks->stop_fd);
	free(ks);
}
