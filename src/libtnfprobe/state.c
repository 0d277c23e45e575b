// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runtime state: the controller-visible tnf_runtime and chain pool, the
 * lazy mapping of the trace file, fork handling and the process switch.
 * Start-up only registers a fork handler: it never blocks and opens nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

/* Bumped whenever the controller/runtime contract changes. */
TNF_EXPORT const int tnf_probe_runtime_version = TNF_RUNTIME_VERSION;

TNF_EXPORT struct tnf_runtime tnf_runtime = {
	.version = TNF_RUNTIME_VERSION,
	.size = sizeof(struct tnf_runtime),
	.state = TNF_STATE_NOBUFFER,
	.file_min = TNF_TRACE_FILE_MIN,
	.file_size = TNF_TRACE_FILE_DEFAULT,
	.chain_pool_size = TNF_CHAIN_POOL_SIZE,
};

TNF_EXPORT struct tnf_probe_chain tnf_chain_pool[TNF_CHAIN_POOL_SIZE];

struct tnf_buf tnf_buf;
pid_t tnf_pid;

/*
 * Threads of this process that hit a probe while another one maps the file
 * wait for it (a few system calls) rather than lose their events.  The
 * thread that maps is marked busy, so a probe in its own signal handler is
 * dropped before it could get here.
 */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

int64_t tnf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void state_set(uint32_t want)
{
	uint32_t s = __atomic_load_n(&tnf_runtime.state, __ATOMIC_RELAXED);

	/* keep STOPPED, which the controller or the process switch owns */
	while (!__atomic_compare_exchange_n(&tnf_runtime.state, &s, (s & ~TNF_STATE_MASK) | want, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

void tnf_set_broken(void)
{
	state_set(TNF_STATE_BROKEN);
}

static uint32_t log2_ceil(uint64_t n)
{
	uint32_t k = 0;

	while ((1ull << k) < n)
		k++;
	return k;
}

/* Maps the file the controller prepared; 0 when usable now. */
static int map_file(void)
{
	char name[TNF_RUNTIME_NAME_MAX];
	uint64_t size;
	struct stat st;
	void *p;
	int fd;

	pthread_mutex_lock(&map_lock);
	if ((__atomic_load_n(&tnf_runtime.state, __ATOMIC_ACQUIRE) & TNF_STATE_MASK) !=
	    TNF_STATE_NOBUFFER)
		goto out; /* a thread that finished meanwhile mapped it */
	size = __atomic_load_n(&tnf_runtime.file_size, __ATOMIC_RELAXED);
	__builtin_memcpy(name, (const char *)tnf_runtime.file_name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	if (name[0] != '/' || size < TNF_TRACE_FILE_MIN || size > TNF_FILE_MAX)
		goto broken;
	fd = open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		goto broken;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < size) {
		close(fd);
		goto broken;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd); /* the mapping keeps the file; no fd stays open */
	if (p == MAP_FAILED)
		goto broken;
	tnf_buf.size = (uint32_t)size & ~(TNF_BLOCK_SIZE - 1);
	tnf_buf.log_size = log2_ceil(tnf_buf.size);
	tnf_buf.ndata = (tnf_buf.size - TNF_DATA_START) / TNF_BLOCK_SIZE;
	tnf_pid = getpid();
	__atomic_store_n(&tnf_buf.base, (char *)p, __ATOMIC_RELEASE);
	if (tnf_format() < -1)
		goto broken;
	state_set(TNF_STATE_RUNNING);
out:
	pthread_mutex_unlock(&map_lock);
	return 0;
broken:
	tnf_set_broken();
	pthread_mutex_unlock(&map_lock);
	return -1;
}

/* Whether an event may be written now (called with the thread busy). */
int tnf_buf_usable(void)
{
	uint32_t s, m;
	int mapped = 0;

again:
	s = __atomic_load_n(&tnf_runtime.state, __ATOMIC_ACQUIRE);
	if (__builtin_expect(s == TNF_STATE_RUNNING || s == TNF_STATE_FORKED, 1)) {
		/* acquire: pairs with the store below, made by any of our threads */
		if (__builtin_expect(__atomic_load_n(&tnf_buf.formatted, __ATOMIC_ACQUIRE), 1))
			return 1;
		/* another process is formatting: drop until its magic appears */
		m = __atomic_load_n(&tnf_fh()->magic, __ATOMIC_ACQUIRE);
		if (m == TNF_MAGIC) {
			/* several threads may get here at once */
			__atomic_store_n(&tnf_buf.formatted, 1, __ATOMIC_RELEASE);
			return 1;
		}
		if (m != TNF_MAGIC_FORMATTING)
			tnf_set_broken();
		else
			tnf_drop(TNF_DROP_FORMATTING);
		return 0;
	}
	if (!mapped && s == TNF_STATE_NOBUFFER &&
	    __atomic_load_n(&tnf_runtime.file_ready, __ATOMIC_ACQUIRE)) {
		if (map_file())
			return 0;
		mapped = 1;
		goto again;
	}
	return 0;
}

/*
 * fork child: a new pid, the buffer (if any) is shared with the parent, and
 * the forking thread's block still belongs to the parent's thread.
 */
static void after_fork_child(void)
{
	struct tnf_thread *t = &tnf_self;
	uint32_t s;

	tnf_pid = getpid();
	t->blk = 0;
	t->pos = 0;
	t->valid = 0;
	t->sched = 0;
	t->tid = gettid();
	s = __atomic_load_n(&tnf_runtime.state, __ATOMIC_RELAXED);
	if ((s & TNF_STATE_MASK) == TNF_STATE_RUNNING)
		state_set(TNF_STATE_FORKED);
	/* a mapping thread of the parent does not exist here */
	pthread_mutex_init(&map_lock, NULL);
	tnf_types_after_fork();
}

__attribute__((constructor)) static void tnf_probe_init(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

/* tnf_process_disable(3TNF): every allocation fails while STOPPED is set. */
TNF_EXPORT void tnf_process_disable(void)
{
	__atomic_fetch_or(&tnf_runtime.state, TNF_STATE_STOPPED, __ATOMIC_RELEASE);
}

TNF_EXPORT void tnf_process_enable(void)
{
	__atomic_fetch_and(&tnf_runtime.state, ~(uint32_t)TNF_STATE_STOPPED, __ATOMIC_RELEASE);
}
