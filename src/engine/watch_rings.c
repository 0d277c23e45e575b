// SPDX-License-Identifier: BSD-2-Clause
/*
 * The watch slots' ring buffers in the `rings` map-of-maps.  Each update or
 * delete of an outer map waits for an RCU grace period before it returns
 * (the kernel makes sure no program still sees the old inner map): about
 * 20 ms on 6.1.  So a thread keeps a few slots ready, each with a fresh ring
 * of the default size already in the map, and takes a closed slot's ring
 * out in the background; an open that finds a ready slot makes no update.
 * Only an open of another size, or one that finds the pool empty, makes its
 * update itself.
 *
 * A closed slot gets a fresh ring (its old one may be held by a process
 * that inherited the descriptor).  A program that saw the slot's bit in
 * `active` before the close may still write an old tree's record into the
 * fresh ring; the update's grace period ends every such program, so the
 * fresh ring is emptied after it and before any watch gets it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "watches.h"

#define POOL 4 /* slots kept ready: 4 MiB; about 50 opens a second without a wait */

enum rstate {
	R_EMPTY, /* no ring in the map */
	R_READY, /* a fresh ring of TNF_WATCH_RING_DEFAULT bytes in the map, fd kept */
	R_USED,	 /* a watch's */
	R_DIRTY, /* a closed watch's ring still in the map */
	R_BUSY,	 /* the thread is updating it */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static enum rstate state[TNF_WATCH_SLOTS];
static int ready_fd[TNF_WATCH_SLOTS];
static unsigned int next_slot; /* taken in turn: a freed slot rests longest */
static int outer = -1;
static bool stopping, started;
static bool failed; /* no memory for a ring: opens make their own */
static pthread_t thread;

static int new_ring(uint64_t size)
{
	return bpf_map_create(BPF_MAP_TYPE_RINGBUF, "tnf_wring", 0, 0, size, NULL);
}

static int count(enum rstate st)
{
	int s, n = 0;

	for (s = 0; s < TNF_WATCH_SLOTS; s++)
		n += state[s] == st;
	return n;
}

/*
 * Under lock: a slot for the thread, a dirty one first (*@fill: to get a
 * fresh ring, else to be emptied: the pool is full), else an empty one to
 * fill, or -1.
 */
static int pick(bool *fill)
{
	int s;

	*fill = count(R_READY) + count(R_BUSY) < POOL && !failed;
	for (s = 0; s < TNF_WATCH_SLOTS; s++)
		if (state[s] == R_DIRTY)
			return s;
	for (s = 0; *fill && s < TNF_WATCH_SLOTS; s++)
		if (state[s] == R_EMPTY)
			return s;
	return -1;
}

static int discard(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

/*
 * A fresh ring of @size bytes for slot @s, in the map and emptied of what a
 * program of the slot's last watch wrote during the update: its descriptor,
 * or -1 with errno.
 */
static int fresh_ring(unsigned int s, uint64_t size)
{
	struct ring_buffer *rb;
	int fd = new_ring(size), e;

	if (fd < 0)
		return -1;
	if (bpf_map_update_elem(outer, &s, &fd, BPF_ANY))
		goto fail;
	rb = ring_buffer__new(fd, discard, NULL, NULL);
	if (!rb)
		goto fail;
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static void *refill(void *arg)
{
	unsigned int key;
	bool fill;
	int s, fd;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!stopping && (s = pick(&fill)) < 0)
			pthread_cond_wait(&work, &lock);
		if (stopping)
			break;
		state[s] = R_BUSY;
		pthread_mutex_unlock(&lock);
		key = s;
		fd = fill ? fresh_ring(key, TNF_WATCH_RING_DEFAULT) : -1;
		if (fd < 0)
			bpf_map_delete_elem(outer, &key); /* its old ring goes, at least */
		pthread_mutex_lock(&lock);
		state[s] = fd >= 0 ? R_READY : R_EMPTY;
		ready_fd[s] = fd;
		failed |= fill && fd < 0;
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* @rings_fd: the outer map.  Returns 0 or a negative errno (opens then make their own). */
int wrings_start(int rings_fd)
{
	sigset_t all, old;
	int e;

	outer = rings_fd;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* signals are the main loop's (signalfd) */
	e = pthread_create(&thread, NULL, refill, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	started = e == 0;
	return -e;
}

void wrings_stop(void)
{
	int s;

	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&lock);
	if (started)
		pthread_join(thread, NULL);
	started = false;
	for (s = 0; s < TNF_WATCH_SLOTS; s++)
		if (state[s] == R_READY)
			close(ready_fd[s]);
}

/*
 * A slot for a new watch, with a fresh ring of @size bytes (a power of two)
 * in the map: a ready one of the pool, else one made here.  *@fd gets the
 * ring's descriptor (the caller's to close).  Returns the slot, or -1 with
 * errno (ENOSPC: every slot in use).
 */
int wrings_take(uint64_t size, int *fd)
{
	unsigned int i, key;
	int s = -1, e;

	pthread_mutex_lock(&lock);
	for (i = 0; size == TNF_WATCH_RING_DEFAULT && i < TNF_WATCH_SLOTS && s < 0; i++)
		if (state[(next_slot + i) % TNF_WATCH_SLOTS] == R_READY)
			s = (next_slot + i) % TNF_WATCH_SLOTS;
	if (s >= 0) {
		state[s] = R_USED;
		*fd = ready_fd[s];
		next_slot = s + 1;
		pthread_cond_signal(&work); /* one to make ready again */
		pthread_mutex_unlock(&lock);
		return s;
	}
	/* An empty slot, else a dirty one */
	for (i = 0; i < 2 * TNF_WATCH_SLOTS && s < 0; i++) {
		key = (next_slot + i) % TNF_WATCH_SLOTS;
		if (state[key] == (i < TNF_WATCH_SLOTS ? R_EMPTY : R_DIRTY))
			s = key;
	}
	if (s >= 0) {
		state[s] = R_USED;
		next_slot = s + 1;
	}
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&lock);
	if (s < 0) {
		errno = ENOSPC;
		return -1;
	}
	*fd = fresh_ring(s, size);
	if (*fd < 0) {
		e = errno;
		wrings_put(s);
		errno = e;
		return -1;
	}
	return s;
}

/* Slot @s's watch has ended (no program writes to it any more): its ring goes, in the background.
 */
void wrings_put(unsigned int s)
{
	pthread_mutex_lock(&lock);
	state[s] = R_DIRTY;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&lock);
}
