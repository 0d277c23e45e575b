// SPDX-License-Identifier: BSD-2-Clause
/*
 * Threads: each thread's state is in TLS and starts enabled.  A thread's
 * first event arms a TSD destructor that gives its block back when it
 * exits; tnf_thread_disable/enable (tnf_process_disable(3TNF)) switch the
 * calling thread.
 */
#include <pthread.h>
#include <unistd.h>

#include "rt.h"

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_ok;

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
	t->ops.put_string = tnf_put_string;
	t->ops.put_record = tnf_put_record;
	t->tid = gettid();
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
