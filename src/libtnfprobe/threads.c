// SPDX-License-Identifier: BSD-2-Clause
/*
 * Threads: each thread's state is in TLS and starts enabled.  A thread's
 * first event arms a TSD destructor that gives its block back when it
 * exits; tnf_thread_disable/enable (tnf_process_disable(3TNF)) switch the
 * calling thread.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "rt.h"

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_ok;

uint32_t tnf_proc_name;

static void thread_exit(void *arg)
{
	struct tnf_thread *t = arg;

	if (!t->busy)
		tnf_block_release(t);
	t->registered = 0; /* a later probe in another destructor re-arms it */
}

/*
 * exit(): the TSD destructor does not run for the thread calling it, so its
 * block is given back here; other processes sharing the file may use it
 * at once instead of after this one is reaped.
 */
__attribute__((destructor)) static void process_exit(void)
{
	struct tnf_thread *t = &tnf_self;

	if (!t->busy)
		tnf_block_release(t);
}

static void make_key(void)
{
	key_ok = !pthread_key_create(&key, thread_exit);
}

void tnf_thread_register(struct tnf_thread *t)
{
	char comm[16] = "";

	t->ops.put_string = tnf_put_string;
	t->ops.put_record = tnf_put_record;
	t->tid = gettid();
	/*
	 * Names for the trace viewers, as they are at the first event: the
	 * program (argv[0]'s base name, which a fork child shares) and the
	 * thread's comm (pthread_setname_np).  Threads race for the first;
	 * tnf_name_string dedupes, so any winner stores the same string.
	 */
	if (!__atomic_load_n(&tnf_proc_name, __ATOMIC_RELAXED))
		__atomic_store_n(&tnf_proc_name, tnf_name_string(program_invocation_short_name),
				 __ATOMIC_RELAXED);
	if (!prctl(PR_GET_NAME, comm))
		t->name = tnf_name_string(comm);
	pthread_once(&key_once, make_key);
	if (key_ok)
		pthread_setspecific(key, t);
	t->registered = 1;
}

TNF_EXPORT void tnf_thread_disable(void)
{
	struct tnf_thread *t = &tnf_self;

	t->disabled = 1;
	if (!t->busy)
		tnf_block_release(t);
}

TNF_EXPORT void tnf_thread_enable(void)
{
	tnf_self.disabled = 0;
}
