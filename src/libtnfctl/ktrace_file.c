// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel trace file: libtnfprobe's writer (format, types, blocks,
 * strings, drop counters: the same sources, linked into libtnfctl with
 * hidden symbols) driven by the kernel-mode consumer.  Each CPU writes
 * through its own writer state, as the Solaris kernel's per-CPU buffers
 * did, and a schedule record (tnf_kthread_id, CPU) starts each run of one
 * thread's events in a block.  The writer's state is per process: one
 * kernel trace file per process at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../libtnfprobe/rt.h"
#include "ktrace.h"

/* What libtnfprobe's writer sources expect of their process. */
struct tnf_runtime tnf_runtime = {.state = TNF_STATE_NOBUFFER};
struct tnf_buf tnf_buf;
pid_t tnf_pid;

void tnf_set_broken(void)
{
	__atomic_store_n(&tnf_runtime.state, TNF_STATE_BROKEN, __ATOMIC_RELEASE);
}

static struct tnf_thread *cpus;
static unsigned int ncpus;

/*
 * The probe types in the file, by attribute string: a probe of another
 * process, handle or (kept file) session with the same attributes takes
 * the same tag rather than a new type record each (tag space is never
 * reclaimed: a long prex -f filled it).
 */
struct known_type {
	struct known_type *next;
	uint32_t tag;
	char attrs[];
};
static struct known_type *known;

static void known_forget(void)
{
	struct known_type *k, *n;

	for (k = known; k; k = n) {
		n = k->next;
		free(k);
	}
	known = NULL;
}

static uint32_t known_tag(const char *attrs)
{
	struct known_type *k;

	for (k = known; attrs && k; k = k->next)
		if (!strcmp(k->attrs, attrs))
			return k->tag;
	return 0;
}

static void known_add(const char *attrs, uint32_t tag)
{
	size_t n = attrs ? strlen(attrs) + 1 : 0;
	struct known_type *k = n ? malloc(sizeof(*k) + n) : NULL;

	if (!k)
		return; /* written again next time */
	k->tag = tag;
	memcpy(k->attrs, attrs, n);
	k->next = known;
	known = k;
}

static const struct tnf_type_desc kinds[TNF_K_MAX] = {
#define K(k) [k] = {k, 0, NULL, NULL}
	K(TNF_K_PROBE_EVENT), K(TNF_K_TIME_DELTA), K(TNF_K_CHAR),   K(TNF_K_INT8),
	K(TNF_K_UINT8),	      K(TNF_K_INT16),	   K(TNF_K_UINT16), K(TNF_K_INT32),
	K(TNF_K_UINT32),      K(TNF_K_INT64),	   K(TNF_K_UINT64), K(TNF_K_FLOAT32),
	K(TNF_K_FLOAT64),     K(TNF_K_STRING),	   K(TNF_K_OPAQUE), K(TNF_K_SIZE),
#undef K
};

static uint32_t log2_ceil(uint64_t n)
{
	uint32_t k = 0;

	while ((1ull << k) < n)
		k++;
	return k;
}

/* Maps and formats the (zero-filled) file @fd of @size bytes: 0 or -errno. */
int ktf_open(int fd, uint64_t size)
{
	void *p;

	if (size < TNF_TRACE_FILE_MIN || size > TNF_FILE_MAX)
		return -EINVAL;
	if (tnf_buf.base && tnf_pid != getpid())
		ktf_forget(); /* a forked child's copy of its parent's: never written here */
	if (tnf_buf.base)     /* a kernel buffer or the USDT file (usdt_trace.c) has the writer */
		return -EBUSY;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	tnf_types_reset();
	known_forget();
	tnf_buf.size = (uint32_t)size & ~(TNF_BLOCK_SIZE - 1);
	tnf_buf.log_size = log2_ceil(tnf_buf.size);
	tnf_buf.ndata = (tnf_buf.size - TNF_DATA_START) / TNF_BLOCK_SIZE;
	tnf_buf.formatted = 0;
	tnf_pid = getpid();
	__atomic_store_n(&tnf_buf.base, (char *)p, __ATOMIC_RELEASE);
	__atomic_store_n(&tnf_runtime.state, TNF_STATE_RUNNING, __ATOMIC_RELEASE);
	if (tnf_format()) {
		ktf_close();
		return -EIO;
	}
	return 0;
}

/* The writer gave up on the file (a type record it could not write). */
bool ktf_broken(void)
{
	return tnf_buf.base &&
	       __atomic_load_n(&tnf_runtime.state, __ATOMIC_ACQUIRE) == TNF_STATE_BROKEN;
}

/* In a forked child: the mapping is the parent's file, let go untouched. */
void ktf_forget(void)
{
	if (!tnf_buf.base)
		return;
	free(cpus);
	cpus = NULL;
	ncpus = 0;
	known_forget();
	munmap(tnf_buf.base, tnf_buf.size);
	memset(&tnf_buf, 0, sizeof(tnf_buf));
	tnf_runtime.state = TNF_STATE_NOBUFFER;
}

/* Every CPU's block released: the file is complete. */
static void release_writers(void)
{
	unsigned int i;

	for (i = 0; i < ncpus; i++)
		tnf_block_release(&cpus[i]);
	free(cpus);
	cpus = NULL;
	ncpus = 0;
	msync(tnf_buf.base, tnf_buf.size, MS_SYNC);
}

/* The file stays the writer's, complete, for a later USDT session of this process (usdt_trace.c).
 */
void ktf_pause(void)
{
	if (tnf_buf.base && tnf_pid == getpid())
		release_writers();
}

void ktf_close(void)
{
	if (!tnf_buf.base)
		return;
	release_writers();
	known_forget();
	munmap(tnf_buf.base, tnf_buf.size);
	memset(&tnf_buf, 0, sizeof(tnf_buf));
	tnf_runtime.state = TNF_STATE_NOBUFFER;
}

static struct tnf_thread *cpu_writer(uint32_t cpu)
{
	struct tnf_thread *n;

	if (cpu >= 65536)
		return NULL;
	if (cpu >= ncpus) {
		n = realloc(cpus, (cpu + 1) * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + ncpus, 0, (cpu + 1 - ncpus) * sizeof(*n));
		cpus = n;
		ncpus = cpu + 1;
	}
	return &cpus[cpu];
}

/* The probe's TNF type: slots tag, time_delta, then its fields (first event). */
static void build_type(struct kt_probe *p)
{
	uint32_t off = 8, al = 4;
	int i;

	p->slots[0] = &kinds[TNF_K_PROBE_EVENT];
	p->slots[1] = &kinds[TNF_K_TIME_DELTA];
	for (i = 0; i < p->nfields; i++) {
		const struct tnf_kind_info *k = &tnf_kinds[p->fields[i].kind];

		p->slots[i + 2] = &kinds[p->fields[i].kind];
		off = (off + k->align - 1) & ~(uint32_t)(k->align - 1);
		p->fields[i].ev_off = (uint16_t)off;
		off += k->size;
		if (k->align > al)
			al = k->align;
	}
	p->slots[p->nfields + 2] = NULL;
	p->cb.slot_types = p->slots;
	p->cb.tnf_event_size = (off + al - 1) & ~(al - 1);
}

/* A new file: the probe's type is written again on its next event. */
void ktf_probe_reset(struct kt_probe *p)
{
	p->cb.index = 0;
}

static void write_ksched(struct tnf_thread *t, const struct kt_hdr *h)
{
	uint32_t *w = (uint32_t *)(tnf_buf.base + t->pos);

	w[0] = tnf_ref_tag(tnf_type_ref(T_KSCHED_REC));
	w[1] = 0;
	*(uint64_t *)(w + 2) = h->tid;
	w[4] = h->tid;
	w[5] = h->pid;
	*(int64_t *)(w + 6) = (int64_t)h->ts;
	w[8] = h->cpu;
	w[9] = 0;
	t->sched = t->pos;
	t->time_base = (int64_t)h->ts;
	t->tid = (pid_t)h->tid;
	t->pos += TNF_KSCHED_SIZE;
}

static void store_int(char *dst, const struct kt_field *f, const uint8_t *src)
{
	uint64_t v = 0;
	int64_t s;

	memcpy(&v, src, f->size < 8 ? f->size : 8);
	switch (f->kind) {
	case TNF_K_INT8:
	case TNF_K_UINT8:
		*(uint8_t *)dst = (uint8_t)v;
		break;
	case TNF_K_INT16:
	case TNF_K_UINT16:
		*(uint16_t *)dst = (uint16_t)v;
		break;
	case TNF_K_INT32:
	case TNF_K_UINT32:
		*(uint32_t *)dst = (uint32_t)v;
		break;
	default:
		if (f->kind == TNF_K_INT64 && f->size < 8) { /* sign-extend */
			s = (int64_t)(v << (64 - 8 * f->size)) >> (64 - 8 * f->size);
			v = (uint64_t)s;
		}
		*(uint64_t *)dst = v;
	}
}

/* The @i-th string of @strs (status byte, NUL-ended bytes), NULL if not read. */
static const char *nth_str(const char *strs, size_t len, int i)
{
	const char *s = strs, *end = strs + len, *z;

	for (; s + 1 < end; i--) {
		z = memchr(s + 1, '\0', (size_t)(end - s - 1));
		if (!z)
			return NULL;
		if (!i)
			return *s ? s + 1 : NULL;
		s = z + 1;
	}
	return NULL;
}

void ktf_event(struct kt_probe *p, const struct kt_hdr *h, const uint8_t *fixed, const char *strs,
	       size_t strs_len)
{
	struct tnf_thread *t = cpu_writer(h->cpu);
	tnf_probe_setup_t set;
	uint32_t tag, size, need, room, ev, *w;
	char cbuf[KT_STR_MAX];
	int sched, i;

	if (!t || !tnf_buf.base)
		return;
	if (!p->cb.slot_types)
		build_type(p);
	tag = (uint32_t)p->cb.index;
	if (!tag && (tag = known_tag(p->cb.attrs)))
		p->cb.index = tag;
	if (!tag && (tag = tnf_probe_tag(&p->cb)))
		known_add(p->cb.attrs, tag);
	if (!tag) {
		tnf_drop(TNF_DROP_NOSPACE);
		return;
	}
	size = tnf_round8((uint32_t)p->cb.tnf_event_size);
	sched = !t->sched || t->tid != (pid_t)h->tid || (int64_t)h->ts < t->time_base ||
		(int64_t)h->ts - t->time_base > (int64_t)UINT32_MAX;
	need = size + (sched ? TNF_KSCHED_SIZE : 0);
	for (i = 0; i < p->nfields; i++) {
		const struct kt_field *f = &p->fields[i];
		const char *s;

		if (f->kind != TNF_K_STRING)
			continue;
		s = f->char_array ? NULL : nth_str(strs, strs_len, f->str);
		/* a tnf_string record: tag, size, the bytes and a NUL, 8-aligned */
		need += tnf_round8(9 + (f->char_array ? f->size : s ? (uint32_t)strlen(s) : 0));
	}
	if (need > TNF_BLOCK_SIZE - TNF_BLOCK_HDR)
		need = TNF_BLOCK_SIZE - TNF_BLOCK_HDR;
	room = t->blk ? t->blk + TNF_BLOCK_SIZE - t->pos : 0;
	if (room < need) {
		if (tnf_block_new(t)) {
			tnf_drop(TNF_DROP_NOBLOCK);
			return;
		}
		sched = 1;
	}
	if (sched)
		write_ksched(t, h);
	ev = t->pos;
	t->pos += size;
	w = (uint32_t *)(tnf_buf.base + ev);
	memset(w, 0, size);
	w[0] = (tag << 16) | ((uint32_t)(t->sched - ev) & 0xfffc) | TNF_REF_PAIR;
	w[1] = (uint32_t)((int64_t)h->ts - t->time_base);
	set.tpd_p = &t->ops;
	set.buffer_p = w;
	set.probe_p = &p->cb;
	for (i = 0; i < p->nfields; i++) {
		const struct kt_field *f = &p->fields[i];
		char *dst = (char *)w + f->ev_off;
		const char *s;

		if (f->kind != TNF_K_STRING) {
			if (f->off + f->size <= h->fixed_size)
				store_int(dst, f, fixed + f->off);
			continue;
		}
		if (f->char_array) {
			size_t n = f->size < sizeof(cbuf) - 1 ? f->size : sizeof(cbuf) - 1;

			if (f->off + n > h->fixed_size)
				n = f->off < h->fixed_size ? h->fixed_size - f->off : 0;
			memcpy(cbuf, fixed + f->off, n);
			cbuf[n] = '\0';
			s = cbuf;
		} else {
			s = nth_str(strs, strs_len, f->str);
		}
		tnf_put_string(&set, (uint32_t *)dst, s);
	}
	tnf_commit_thread(t);
}

/* Events the kernel side could not record (TNF_DROP_KERNEL_*), counted in the file. */
void ktf_lost(uint64_t n, unsigned int reason)
{
	struct tnf_file_header *fh = tnf_fh();

	if (!tnf_buf.base || !n)
		return;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	__atomic_fetch_add(&fh->drops_total, (uint32_t)n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fh->drops[reason], (uint32_t)n, __ATOMIC_RELAXED);
}
