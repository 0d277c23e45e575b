/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tp_selfctl.h - a program with probes acting as its own controller (until
 * libtnfctl drives probes): finds its control blocks between
 * __start_tnf_probes and __stop_tnf_probes, resolves the runtime's symbols
 * with dlsym (libtnfprobe comes from LD_PRELOAD), creates the trace file
 * and changes probes by the same single stores the controller makes.
 */
#ifndef TP_SELFCTL_H
#define TP_SELFCTL_H

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tnf/probe.h>
#include "tnf_runtime.h"

extern tnf_probe_control_t __start_tnf_probes[] __attribute__((weak));
extern tnf_probe_control_t __stop_tnf_probes[] __attribute__((weak));

struct tp_rt {
	struct tnf_runtime *rt;
	struct tnf_probe_chain *pool;
	tnf_probe_test_func_t test;
	tnf_probe_alloc_func_t alloc;
	tnf_probe_func_t end, commit, rollback, debug;
};

static struct tp_rt tp;

/* 0 when libtnfprobe is loaded; every probe is made "virgin-initialised". */
static inline int tp_ctl_init(void)
{
	tnf_probe_control_t *cb;

	tp.rt = (struct tnf_runtime *)dlsym(RTLD_DEFAULT, TNF_RUNTIME_SYM);
	tp.pool = (struct tnf_probe_chain *)dlsym(RTLD_DEFAULT, TNF_SYM_CHAIN_POOL);
	tp.test = (tnf_probe_test_func_t)dlsym(RTLD_DEFAULT, TNF_SYM_TEST);
	tp.alloc = (tnf_probe_alloc_func_t)dlsym(RTLD_DEFAULT, TNF_SYM_ALLOC);
	tp.end = (tnf_probe_func_t)dlsym(RTLD_DEFAULT, TNF_SYM_END);
	tp.commit = (tnf_probe_func_t)dlsym(RTLD_DEFAULT, TNF_SYM_COMMIT);
	tp.rollback = (tnf_probe_func_t)dlsym(RTLD_DEFAULT, TNF_SYM_ROLLBACK);
	tp.debug = (tnf_probe_func_t)dlsym(RTLD_DEFAULT, TNF_SYM_DEBUG);
	if (!tp.rt || !tp.pool || !tp.test || !tp.alloc || !tp.end || !tp.commit || !tp.rollback ||
	    !tp.debug)
		return -1;
	for (cb = __start_tnf_probes; cb < __stop_tnf_probes; cb++) {
		if (cb->commit_func)
			continue;
		cb->alloc_func = tp.alloc;
		cb->probe_func = tp.end;
		__atomic_store_n(&cb->commit_func, tp.commit, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Creates @path (0600, @size zero bytes) and hands it to the runtime. */
static inline int tp_ctl_file(const char *path, size_t size, int create)
{
	char zero[65536];
	size_t done = 0;
	int fd;

	if (create) {
		unlink(path);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		memset(zero, 0, sizeof(zero));
		while (done < size) {
			size_t n = size - done < sizeof(zero) ? size - done : sizeof(zero);
			ssize_t w = write(fd, zero, n);

			if (w <= 0) {
				close(fd);
				return -1;
			}
			done += (size_t)w;
		}
		close(fd);
	}
	tp.rt->file_size = size;
	strncpy(tp.rt->file_name, path, sizeof(tp.rt->file_name) - 1);
	__atomic_store_n(&tp.rt->file_ready, 1, __ATOMIC_RELEASE);
	return 0;
}

static inline tnf_probe_control_t *tp_probe(const char *name)
{
	size_t n = strlen(name);
	tnf_probe_control_t *cb;

	for (cb = __start_tnf_probes; cb < __stop_tnf_probes; cb++)
		if (!strncmp(cb->attrs, "name ", 5) && !strncmp(cb->attrs + 5, name, n) &&
		    cb->attrs[5 + n] == ';')
			return cb;
	abort();
}

static inline void tp_enable(const char *name, int on)
{
	__atomic_store_n(&tp_probe(name)->test_func, on ? tp.test : NULL, __ATOMIC_RELEASE);
}

static inline void tp_enable_all(void)
{
	tnf_probe_control_t *cb;

	for (cb = __start_tnf_probes; cb < __stop_tnf_probes; cb++)
		__atomic_store_n(&cb->test_func, tp.test, __ATOMIC_RELEASE);
}

static inline void tp_trace(const char *name, int on)
{
	__atomic_store_n(&tp_probe(name)->commit_func, on ? tp.commit : tp.rollback,
			 __ATOMIC_RELEASE);
}

static inline void tp_connect(const char *name, tnf_probe_func_t func)
{
	tnf_probe_control_t *cb = tp_probe(name);
	struct tnf_probe_chain *node = &tp.pool[tp.rt->chain_pool_used++];

	node->func = func;
	node->next = cb->chain;
	__atomic_store_n(&cb->chain, node, __ATOMIC_RELEASE);
}

static inline void tp_disconnect(const char *name)
{
	__atomic_store_n(&tp_probe(name)->chain, NULL, __ATOMIC_RELEASE);
}

#endif
