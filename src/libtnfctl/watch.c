// SPDX-License-Identifier: BSD-2-Clause
/*
 * Passive tree watching (tnfctl_watch_*): a watch is a slot of the BPF
 * object the engine keeps for all its watches (src/engine/watches.c).  Its
 * ring buffer's descriptor comes from the engine at the open; its records
 * are drained from there in batches, with no hop through the engine, and
 * handed out one by one.  Nothing here stops or signals a process, and
 * nothing here loads BPF.
 */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "internal.h"
#include "exec_info.h"
#include "opts.h"
#include "proto.h"
#include "target.h"
#include "watch.h"

#define RING_MIN     4096ull
#define RING_MAX     (1ull << 30)
#define RING_DEFAULT TNF_WATCH_RING_DEFAULT

/* A LOST or END in the queue, among the kernel's records. */
enum {
	PSEUDO_LOST = 0x100,
	PSEUDO_END
};
struct pseudo {
	struct tnf_wrec h;
	uint64_t lost[TNF_WLOST_NR];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return def;
	return v < min ? min : v > max ? max : v;
}

/*
 * @opts against its rules and its ranges, with @allowed flags: NONE or
 * BADARG.  A field left 0 takes the environment's value, else the default.
 */
tnfctl_errcode_t tnf_watch_opts_check(const struct tnfctl_watch_opts *opts, unsigned int allowed)
{
	unsigned int delay = TNF_OPTS_GET(opts, tnfctl_watch_opts, delay_ms, 0u);
	size_t ring = TNF_OPTS_GET(opts, tnfctl_watch_opts, ring_size, (size_t)0);

	if (!tnf_opts_valid(opts, TNF_OPTS_END(tnfctl_watch_opts, ring_size)) ||
	    (TNF_OPTS_GET(opts, tnfctl_watch_opts, flags, 0u) & ~allowed) || delay > 1000 ||
	    (ring && (ring < RING_MIN || ring > RING_MAX)))
		return TNFCTL_ERR_BADARG;
	return TNFCTL_ERR_NONE;
}

/* Append one record (or pseudo record) to the queue. */
static int q_push(struct tnfctl_watch *w, const void *data, uint32_t len)
{
	size_t need = 8 + ((len + 7) & ~7u);
	unsigned char *nq;

	if (w->qhead == w->qtail)
		w->qhead = w->qtail = 0;
	if (w->qtail + need > w->qcap) {
		if (w->qhead) { /* compact first */
			memmove(w->q, w->q + w->qhead, w->qtail - w->qhead);
			w->qtail -= w->qhead;
			w->qhead = 0;
		}
		if (w->qtail + need > w->qcap) {
			size_t cap = w->qcap ? w->qcap : 65536;

			while (w->qtail + need > cap)
				cap *= 2;
			nq = realloc(w->q, cap);
			if (!nq)
				return -ENOMEM;
			w->q = nq;
			w->qcap = cap;
		}
	}
	memcpy(w->q + w->qtail, &len, sizeof(len));
	memcpy(w->q + w->qtail + 8, data, len);
	w->qtail += need;
	return 0;
}

/*
 * Old kernels (no group_dead): two threads leaving at once may both report
 * their process's exit.  A tgid that exited is not reused before it is
 * reaped, so a second EXIT with no FORK of that tgid in between is a double.
 */
static bool double_exit(struct tnfctl_watch *w, const struct tnf_wrec *r)
{
	unsigned int i, n = w->nrecent < 16 ? w->nrecent : 16;

	if (r->kind == TNF_WREC_FORK) {
		for (i = 0; i < n; i++)
			if (w->recent_exit[i] == r->child)
				w->recent_exit[i] = 0;
		return false;
	}
	if (r->kind != TNF_WREC_EXIT)
		return false;
	for (i = 0; i < n; i++)
		if (w->recent_exit[i] == r->tgid)
			return true;
	w->recent_exit[w->nrecent++ % 16] = r->tgid;
	return false;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct tnfctl_watch *w = ctx;
	const struct tnf_wrec *r = data;

	if (len < sizeof(*r) || r->kind == TNF_WREC_WAKE)
		return 0;
	if (w->legacy_exit && double_exit(w, r))
		return 0;
	return q_push(w, data, len);
}

static void read_lost(struct tnfctl_watch *w, uint64_t tot[TNF_WLOST_NR])
{
	int k;

	for (k = 0; k < TNF_WLOST_NR; k++)
		tot[k] = __atomic_load_n(&w->st->lost[k], __ATOMIC_RELAXED);
}

/* Queue a LOST after what was drained, if anything new was lost. */
static int note_lost(struct tnfctl_watch *w)
{
	struct pseudo p = {.h.kind = PSEUDO_LOST};
	uint64_t tot[TNF_WLOST_NR];
	bool any = false;
	int k;

	read_lost(w, tot);
	for (k = 0; k < TNF_WLOST_NR; k++) {
		p.lost[k] = tot[k] - w->lost_reported[k];
		any |= p.lost[k] != 0;
	}
	if (!any)
		return 0;
	p.h.time_ns = now_ns();
	memcpy(w->lost_reported, tot, sizeof(tot));
	return q_push(w, &p, sizeof(p));
}

static bool tree_empty(struct tnfctl_watch *w)
{
	return __atomic_load_n(&w->st->nlive, __ATOMIC_ACQUIRE) <= 0;
}

/* Move what the ring holds to the queue; notice the end of the tree. */
static int drain(struct tnfctl_watch *w)
{
	struct pseudo end = {.h.kind = PSEUDO_END};
	bool empty;
	int n;

	if (w->ended)
		return 0;
	n = ring_buffer__consume(w->rb);
	if (n < 0)
		return n;
	/*
	 * Only what was queued defers the end-of-tree check: a batch of just
	 * the last process's wake-up (or a dropped doubled EXIT) queues
	 * nothing, and no other wake-up or timer is coming.
	 */
	if (w->qhead != w->qtail)
		return note_lost(w);
	/* The last EXIT is submitted before its tgid leaves the map. */
	empty = tree_empty(w);
	n = ring_buffer__consume(w->rb);
	if (n < 0 || (n = note_lost(w)) < 0)
		return n;
	if (empty) {
		w->ended = true;
		end.h.time_ns = now_ns();
		return q_push(w, &end, sizeof(end));
	}
	return 0;
}

static void copy_str(char *dst, size_t size, const char *src, size_t srcmax)
{
	size_t n = strnlen(src, srcmax);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

_Static_assert(TNF_EXEC_ARGV_MAX == TNFCTL_EXEC_ARGV_MAX, "one argv bound");
_Static_assert(TNF_WX_ARGV_TRUNC == TNFCTL_EXEC_ARGV_TRUNCATED &&
		       TNF_WX_CWD_TRUNC == TNFCTL_EXEC_CWD_TRUNCATED &&
		       TNF_WX_INTERP == TNFCTL_EXEC_INTERP,
	       "record flags are the API's");

/* The cwd from its components, leaf first and NUL-terminated: "/a/b". */
static void cwd_of(const char *comp, size_t len, char *out, size_t size)
{
	size_t n = 0, i = len, start, l;

	while (i > 0) {
		start = i - 1; /* at the NUL ending the previous (outer) component */
		while (start > 0 && comp[start - 1] != '\0')
			start--;
		l = i - 1 - start;
		if (n + l + 2 > size)
			break;
		out[n++] = '/';
		memcpy(out + n, comp + start, l);
		n += l;
		i = start;
	}
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
}

/* EXEC, EXEC_FAILED: the event's fields and the watch's exec details. */
static void exec_event(struct tnfctl_watch *w, const struct tnf_wrec_exec *x, uint32_t len,
		       struct tnfctl_watch_data *ev)
{
	const char *data = (const char *)(x + 1), *path = "", *args = "";
	size_t plen = 0, clen = 0, alen = 0;
	char cwd[PATH_MAX];

	if (len >= sizeof(*x) && sizeof(*x) + x->path_len + x->cwd_len + x->argv_len <= len) {
		plen = x->path_len;
		clen = x->cwd_len;
		alen = x->argv_len;
		path = data;
		args = data + plen + clen;
	}
	copy_str(w->path, sizeof(w->path), path, plen);
	cwd_of(data + plen, clen, cwd, sizeof(cwd));
	if (tnf_exec_data_set(&w->exec, w->path, cwd, args, alen, x->argv_bytes, x->flags,
			      x->h.kind == TNF_WREC_EXEC_FAILED ? x->h.exit_code : 0))
		w->exec.valid = false;
	else if (w->exec.argc > 0)
		ev->argv0 = w->exec.argv[0];
	if (x->h.kind == TNF_WREC_EXEC_FAILED)
		ev->flags = tnf_path_flags(true, x->h.exit_code, strlen(w->path));
}

/* @ev (the library's struct, whole) from record @r of @len bytes. */
static void to_event(struct tnfctl_watch *w, const struct tnf_wrec *r, uint32_t len,
		     struct tnfctl_watch_data *ev)
{
	const struct tnf_wrec_str *s = (const void *)r;
	const struct pseudo *p = (const void *)r;
	const size_t head = offsetof(struct tnf_wrec_str, path);

	memset(ev, 0, sizeof(*ev));
	ev->sz = sizeof(*ev);
	ev->pid = r->tgid;
	ev->tid = r->tid;
	ev->ppid = r->ptgid;
	ev->seq = r->seq;
	/*
	 * The object for kernels without atomic fetch (5.10) numbers nothing:
	 * the records in the order read, the lost ones a hole before the LOST
	 * that counts them (after the records drained with them, as the
	 * kernel's own numbers would place them, give or take a batch).
	 */
	if (w->client_seq && r->kind < PSEUDO_LOST)
		ev->seq = w->next_seq++;
	else if (w->client_seq && r->kind == PSEUDO_LOST)
		w->next_seq += p->lost[TNF_WLOST_RECORDS];
	ev->time_ns = r->time_ns;
	ev->argv0 = "";
	w->path[0] = '\0';
	w->exec.valid = false;
	switch (r->kind) {
	case TNF_WREC_FORK:
		ev->kind = TNFCTL_WATCH_FORK;
		ev->child_pid = r->child;
		break;
	case TNF_WREC_EXIT:
		ev->kind = TNFCTL_WATCH_EXIT;
		ev->term_signal = r->exit_code & 0x7f;
		ev->core_dumped = !!(r->exit_code & 0x80);
		ev->exit_status = ev->term_signal ? -1 : (r->exit_code >> 8) & 0xff;
		break;
	case TNF_WREC_EXEC:
	case TNF_WREC_EXEC_FAILED:
		ev->kind = r->kind == TNF_WREC_EXEC ? TNFCTL_WATCH_EXEC : TNFCTL_WATCH_EXEC_FAILED;
		exec_event(w, (const void *)r, len, ev);
		break;
	case TNF_WREC_DLOPEN:
	case TNF_WREC_DLCLOSE:
		ev->kind = r->kind == TNF_WREC_DLOPEN ? TNFCTL_WATCH_DLOPEN : TNFCTL_WATCH_DLCLOSE;
		if (len > head)
			copy_str(w->path, sizeof(w->path), s->path, len - head);
		break;
	case PSEUDO_LOST:
		ev->kind = TNFCTL_WATCH_LOST;
		ev->lost = p->lost[TNF_WLOST_RECORDS];
		ev->untracked = p->lost[TNF_WLOST_UNTRACKED];
		break;
	default:
		ev->kind = TNFCTL_WATCH_END;
		break;
	}
	ev->path = w->path;
	ev->path_len = strlen(w->path);
}

/* Pop the oldest queued record into @ev; END stays queued for ever. */
static bool q_pop(struct tnfctl_watch *w, struct tnfctl_watch_data *ev)
{
	const struct tnf_wrec *r;
	uint32_t len;

	if (w->qhead == w->qtail)
		return false;
	memcpy(&len, w->q + w->qhead, sizeof(len));
	r = (const void *)(w->q + w->qhead + 8);
	to_event(w, r, len, ev);
	if (r->kind != PSEUDO_END)
		w->qhead += 8 + ((len + 7) & ~7u);
	return true;
}

/*
 * Records written while the kernel holds back its wake-up (within delay_ns
 * of the last one) are collected by this timer; outside that window the
 * next record wakes us itself.
 */
static void arm_timer(struct tnfctl_watch *w)
{
	uint64_t at = __atomic_load_n(&w->st->last_wake_ns, __ATOMIC_RELAXED) + w->delay_ns;
	struct itimerspec its = {0};

	if (at > now_ns()) {
		its.it_value.tv_sec = at / 1000000000u;
		its.it_value.tv_nsec = at % 1000000000u;
	}
	timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The engine has ended (killed): once its pidfd is readable, or its connection is gone. */
static bool engine_dead(struct tnfctl_watch *w)
{
	struct pollfd p = {.fd = w->engine_pidfd, .events = POLLIN};

	if (!w->engine_gone)
		w->engine_gone = tnf_client_engine_dead(w->h) || (p.fd >= 0 && poll(&p, 1, 0) == 1);
	return w->engine_gone;
}

/* The next event into @ev (the library's struct): 1, 0 or -tnfctl_errcode_t. */
static int watch_next(struct tnfctl_watch *w, struct tnfctl_watch_data *ev, int timeout_ms)
{
	long long deadline = timeout_ms < 0 ? -1 : (long long)(now_ns() / 1000000) + timeout_ms;
	struct epoll_event evs[3];
	uint64_t ticks;
	long long left;
	int n;

	for (;;) {
		if (q_pop(w, ev))
			return 1;
		if (drain(w) < 0)
			return -TNFCTL_ERR_INTERNAL;
		if (w->qhead != w->qtail)
			continue;
		/* Its programs went with it: nothing more will come. */
		if (engine_dead(w)) {
			errno = ECONNRESET;
			return -TNFCTL_ERR_INTERNAL;
		}
		arm_timer(w);
		left = deadline < 0 ? -1 : deadline - (long long)(now_ns() / 1000000);
		if (deadline >= 0 && left <= 0)
			return 0;
		n = epoll_wait(w->epfd, evs, 3, left > INT32_MAX ? INT32_MAX : (int)left);
		if (n < 0)
			return errno == EINTR ? 0 : -TNFCTL_ERR_INTERNAL;
		if (read(w->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
			return -TNFCTL_ERR_INTERNAL;
	}
}

TNF_API int tnfctl_watch_read(tnfctl_watch_t *w, struct tnfctl_watch_data *ev, int timeout_ms)
{
	struct tnfctl_watch_data d;
	int r;

	if (!w || !tnf_data_sz_ok(ev, TNFCTL_WATCH_DATA_SZ_MIN))
		return -TNFCTL_ERR_BADARG;
	r = watch_next(w, &d, timeout_ms);
	if (r == 1)
		tnf_data_out(ev, &d, sizeof(d));
	return r;
}

/* The frozen struct of the first release: paths copied in, argv0 cut at 255 bytes. */
TNF_API int tnfctl_watch_next(tnfctl_watch_t *w, tnfctl_watch_event_t *ev, int timeout_ms)
{
	struct tnfctl_watch_data d;
	int r;

	if (!w || !ev)
		return -TNFCTL_ERR_BADARG;
	r = watch_next(w, &d, timeout_ms);
	if (r != 1)
		return r;
	ev->kind = d.kind;
	ev->pid = d.pid;
	ev->tid = d.tid;
	ev->ppid = d.ppid;
	ev->seq = d.seq;
	ev->time_ns = d.time_ns;
	ev->child_pid = d.child_pid;
	ev->exit_status = d.exit_status;
	ev->term_signal = d.term_signal;
	ev->core_dumped = d.core_dumped;
	ev->lost = d.lost;
	ev->untracked = d.untracked;
	copy_str(ev->path, sizeof(ev->path), d.path, d.path_len + 1);
	copy_str(ev->argv0, sizeof(ev->argv0), d.argv0, strlen(d.argv0) + 1);
	return 1;
}

TNF_API int tnfctl_watch_fd(tnfctl_watch_t *w)
{
	return w ? w->epfd : -1;
}

TNF_API uint64_t tnfctl_watch_lost(tnfctl_watch_t *w)
{
	uint64_t tot[TNF_WLOST_NR], sum = 0;
	int k;

	if (!w)
		return 0;
	read_lost(w, tot);
	for (k = 0; k < TNF_WLOST_NR; k++)
		sum += tot[k];
	return sum;
}

TNF_API void tnfctl_watch_close(tnfctl_watch_t *w)
{
	if (!w)
		return;
	ring_buffer__free(w->rb);
	if (w->ring_fd >= 0)
		close(w->ring_fd);
	if (w->st_map)
		munmap(w->st_map, w->st_len);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->tfd >= 0)
		close(w->tfd);
	/* The engine frees the slot at the handle's DROP. */
	if (w->h)
		tnf_client_free_handle(w->h);
	free(w->q);
	tnf_exec_data_free(&w->exec);
	free(w);
}

TNF_API tnfctl_errcode_t tnfctl_watch_event_exec(tnfctl_watch_t *w, struct tnfctl_exec_info *info)
{
	if (!w)
		return TNFCTL_ERR_BADARG;
	return tnf_exec_data_get(&w->exec, info);
}

/* The slot's counters, mapped read-only from the map the engine sent (@fd, closed here). */
static int map_counters(struct tnfctl_watch *w, int fd)
{
	long page = sysconf(_SC_PAGESIZE);

	w->st_len = ((sizeof(struct tnf_wslot) * TNF_WATCH_SLOTS + page - 1) / page) * page;
	w->st_map = mmap(NULL, w->st_len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (w->st_map == MAP_FAILED) {
		w->st_map = NULL;
		return -errno;
	}
	w->st = w->st_map;
	return 0;
}

/* WATCH_OPEN on the engine: the slot's counters, then its ring buffer. */
static tnfctl_errcode_t engine_open(struct tnfctl_watch *w, unsigned int flags, uint64_t ring)
{
	struct tnf_req req = {.op = TNF_OP_WATCH_OPEN,
			      .pid = w->root,
			      .flags = flags,
			      .size = ring,
			      .delay_ns = w->delay_ns};
	struct tnf_rep rep;
	tnfctl_errcode_t err;
	int fd = -1, e;

	err = tnf_client_request(w->h, &req);
	while (!err) {
		err = tnf_client_wait_fd(w->h, &rep, &fd);
		if (err)
			break;
		if (rep.kind == TNF_REP_WATCH_MAP && fd >= 0 && !w->st_map) {
			e = map_counters(w, fd); /* the DONE says which slot is ours */
			fd = -1;
			if (e)
				err = TNFCTL_ERR_ALLOCFAIL;
		} else if (rep.kind == TNF_REP_DONE) {
			err = rep.err;
			if (!err && (fd < 0 || !w->st_map || rep.slot >= TNF_WATCH_SLOTS))
				err = TNFCTL_ERR_INTERNAL;
			if (!err) {
				w->ring_fd = fd;
				fd = -1;
				w->st += rep.slot;
				w->legacy_exit = rep.flags & TNF_REPF_LEGACY_EXIT;
				w->client_seq = rep.flags & TNF_REPF_CLIENT_SEQ;
			}
			break;
		}
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/*
 * A watch on @root, its root in the engine's maps and (unless
 * TNF_WATCH_HELD) the descendants it has now.
 */
tnfctl_errcode_t tnf_watch_new(pid_t root, unsigned int flags, const struct tnfctl_watch_opts *opts,
			       struct tnfctl_watch **wp)
{
	unsigned int delay = TNF_OPTS_GET(opts, tnfctl_watch_opts, delay_ms, 0u);
	/* the bytes asked for; the engine rounds them up to a power of two */
	uint64_t ring = TNF_OPTS_GET(opts, tnfctl_watch_opts, ring_size, (size_t)0);
	struct epoll_event ee = {.events = EPOLLIN};
	struct tnfctl_watch *w = calloc(1, sizeof(*w));
	tnfctl_errcode_t err;

	if (!w)
		return TNFCTL_ERR_ALLOCFAIL;
	w->epfd = w->tfd = w->ring_fd = -1;
	w->root = root;
	w->flags = flags & ~TNF_WATCH_HELD;
	if (!delay)
		delay = env_u64("TNFCTL_WATCH_DELAY_MS", TNFCTL_WATCH_DELAY_MS, 1, 1000);
	w->delay_ns = (uint64_t)delay * 1000000;
	if (!ring)
		ring = env_u64("TNFCTL_WATCH_RINGBUF", RING_DEFAULT, RING_MIN, RING_MAX);
	err = tnf_client_new_handle(&w->h);
	err = err ?: engine_open(w, flags, ring);
	if (err)
		goto fail;
	w->engine_pidfd = tnf_client_engine_pidfd(w->h);
	err = TNFCTL_ERR_ALLOCFAIL;
	w->rb = ring_buffer__new(w->ring_fd, on_record, w, NULL);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!w->rb || w->epfd < 0 || w->tfd < 0)
		goto fail;
	ee.data.fd = w->ring_fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, ee.data.fd, &ee))
		goto fail;
	ee.data.fd = w->tfd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tfd, &ee))
		goto fail;
	ee.data.fd = w->engine_pidfd;
	if (w->engine_pidfd >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->engine_pidfd, &ee))
		goto fail;
	*wp = w;
	return TNFCTL_ERR_NONE;
fail:
	tnfctl_watch_close(w);
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_watch_open_opts(pid_t root, const struct tnfctl_watch_opts *opts,
						tnfctl_watch_t **wp)
{
	tnfctl_errcode_t err;

	if (!wp || tnf_watch_opts_check(opts, TNFCTL_WATCH_DL))
		return TNFCTL_ERR_BADARG;
	if (root <= 0)
		return TNFCTL_ERR_NOPROCESS;
	/* The engine checks with its credentials: ours are what count (as for pid_open). */
	err = tnf_check_may_trace(root);
	return err
		       ?: tnf_watch_new(root, TNF_OPTS_GET(opts, tnfctl_watch_opts, flags, 0u),
					opts, wp);
}

TNF_API tnfctl_errcode_t tnfctl_watch_open(pid_t root, unsigned int flags, tnfctl_watch_t **wp)
{
	TNFCTL_OPTS(tnfctl_watch_opts, opts, .flags = flags);

	return tnfctl_watch_open_opts(root, &opts, wp);
}
