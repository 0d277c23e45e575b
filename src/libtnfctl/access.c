// SPDX-License-Identifier: BSD-2-Clause
/*
 * Target access for the probe layer (DESIGN §2.3): read, write, getpid and
 * object iteration, the shape of tnfctl_ind_config_t.  Direct handles reach
 * another process through process_vm_readv/writev (/proc/PID/mem when a page
 * refuses); internal handles are the caller itself.  Indirect handles bring
 * their own.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "internal.h"
#include "target.h"

#define MAX_OBJS 4096

static int mem_fallback(pid_t pid, uintptr_t addr, void *buf, size_t len, bool wr)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = wr ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/*
 * The thread whose /proc entries and mm we use: the leader, unless it left
 * early (pthread_exit) and is a zombie with no memory; then a live thread.
 */
static pid_t mem_tid(struct tnfctl_handle *h)
{
	char path[64];
	struct dirent *d;
	pid_t t = h->pr.mem_tid ? h->pr.mem_tid : h->pid;
	DIR *dir;

	if (!tnf_proc_exiting(t))
		return h->pr.mem_tid = t;
	snprintf(path, sizeof(path), "/proc/%d/task", h->pid);
	dir = opendir(path);
	if (!dir)
		return h->pid;
	t = h->pid;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && !tnf_proc_exiting(atoi(d->d_name))) {
			t = atoi(d->d_name);
			break;
		}
	closedir(dir);
	return h->pr.mem_tid = t;
}

static ssize_t vm_rw(pid_t t, uintptr_t addr, void *buf, size_t len, bool wr)
{
	struct iovec l = {.iov_base = buf, .iov_len = len};
	struct iovec r = {.iov_base = (void *)addr, .iov_len = len};

	return wr ? process_vm_writev(t, &l, 1, &r, 1, 0) : process_vm_readv(t, &l, 1, &r, 1, 0);
}

static int direct_rw(struct tnfctl_handle *h, uintptr_t addr, void *buf, size_t len, bool wr)
{
	pid_t t = h->pr.mem_tid ? h->pr.mem_tid : h->pid;

	if (vm_rw(t, addr, buf, len, wr) == (ssize_t)len)
		return 0;
	t = mem_tid(h);
	if (vm_rw(t, addr, buf, len, wr) == (ssize_t)len)
		return 0;
	return mem_fallback(t, addr, buf, len, wr);
}

static int direct_read(void *p, uintptr_t addr, void *buf, size_t len)
{
	return direct_rw(p, addr, buf, len, false);
}

static int direct_write(void *p, uintptr_t addr, void *buf, size_t len)
{
	return direct_rw(p, addr, buf, len, true);
}

static pid_t direct_getpid(void *p)
{
	return ((struct tnfctl_handle *)p)->pid;
}

static int read_str(struct tnfctl_handle *h, uintptr_t addr, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len - 1; i++) {
		if (direct_read(h, addr + i, &buf[i], 1))
			return -1;
		if (!buf[i])
			return 0;
	}
	buf[len - 1] = '\0';
	return 0;
}

/* Objects of one namespace's link map from @lm; 0, -1 if unreadable, or @fn's return. */
static int walk_link_map(struct tnfctl_handle *h, pid_t t, uint64_t lm, tnfctl_ind_obj_f *fn,
			 void *cd)
{
	int i, ret = 0;

	for (i = 0; lm && i < MAX_OBJS && !ret; i++) {
		uint64_t f[4]; /* l_addr, l_name, l_ld, l_next */
		tnfctl_ind_obj_info_t oi = {.objfd = -1};
		char name[PATH_MAX], path[PATH_MAX + 32];
		ssize_t n;

		if (direct_read(h, lm, f, sizeof(f)))
			return -1;
		lm = f[3];
		if (!f[1] || read_str(h, f[1], name, sizeof(name)))
			continue;
		if (!name[0]) {
			/* The main program: its real name, read through /proc. */
			snprintf(path, sizeof(path), "/proc/%d/exe", t);
			oi.objfd = open(path, O_RDONLY | O_CLOEXEC);
			n = readlink(path, name, sizeof(name) - 1);
			name[n > 0 ? n : 0] = '\0';
			if (!name[0])
				snprintf(name, sizeof(name), "%.4000s", path);
		} else if (name[0] != '/') {
			/* dlopen("dir/lib.so") keeps the name relative to the target's cwd */
			snprintf(path, sizeof(path), "/proc/%d/cwd/%s", t, name);
			oi.objfd = open(path, O_RDONLY | O_CLOEXEC);
			if (oi.objfd < 0)
				continue; /* the vDSO has no file */
		}
		oi.text_base = oi.data_base = f[0];
		oi.objname = name;
		ret = fn(h, &oi, cd);
		if (oi.objfd >= 0)
			close(oi.objfd);
	}
	return ret;
}

/*
 * A static program (no interpreter, no link map): its executable is the
 * one object, for its USDT probes.  Its base is the load bias: 0, or a
 * static-pie's first mapping (its first PT_LOAD is at 0).
 */
static int static_exe_iter(struct tnfctl_handle *h, pid_t t, const struct tnf_maps_info *mi,
			   tnfctl_ind_obj_f *fn, void *cd)
{
	tnfctl_ind_obj_info_t oi = {.objfd = -1};
	char path[64], name[PATH_MAX];
	Elf64_Half type = 0;
	ssize_t n;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/exe", t);
	oi.objfd = open(path, O_RDONLY | O_CLOEXEC);
	if (oi.objfd < 0)
		return 1;
	n = readlink(path, name, sizeof(name) - 1);
	name[n > 0 ? n : 0] = '\0';
	if (!name[0])
		snprintf(name, sizeof(name), "%s", path);
	if (pread(oi.objfd, &type, sizeof(type), offsetof(Elf64_Ehdr, e_type)) != sizeof(type)) {
		close(oi.objfd);
		return 1;
	}
	oi.text_base = oi.data_base = type == ET_DYN ? mi->exe_base : 0;
	oi.objname = name;
	ret = fn(h, &oi, cd);
	close(oi.objfd);
	return ret;
}

/*
 * Walk the target's link maps from ld.so's _r_debug (r_version, r_map,
 * r_brk, r_state): the base namespace, then those dlmopen made.
 */
static int direct_obj_iter(void *p, tnfctl_ind_obj_f *fn, void *cd)
{
	struct tnfctl_handle *h = p;
	struct tnf_maps_info mi;
	uint64_t r_state_addr, lm, rd[TNF_RTLD_MAX_NS];
	int i, n, ret = 0;
	pid_t t = mem_tid(h);

	if (tnf_proc_maps(t, &mi) || tnf_rtld_locate(t, &mi, &r_state_addr))
		return h->pr.usdt_only && !mi.ldso_base && mi.exe_base
			       ? static_exe_iter(h, t, &mi, fn, cd)
			       : 1;
	/* not RT_CONSISTENT everywhere: Solaris' BADLMAPSTATE */
	if (tnf_rtld_consistent(t, r_state_addr) != 1)
		return 1;
	n = tnf_rtld_namespaces(t, r_state_addr, rd, TNF_RTLD_MAX_NS);
	if (n < 1)
		return 1;
	for (i = 0; i < n && !ret; i++) {
		if (direct_read(h, rd[i] + 8, &lm, sizeof(lm)))
			return 1;
		ret = walk_link_map(h, t, lm, fn, cd);
	}
	return ret < 0 ? 1 : ret;
}

void tnf_access_direct(struct tnfctl_handle *h)
{
	h->pr.mode = TNF_MODE_DIRECT;
	h->pr.ops.p_read = direct_read;
	h->pr.ops.p_write = direct_write;
	h->pr.ops.p_getpid = direct_getpid;
	h->pr.ops.p_obj_iter = direct_obj_iter;
	h->pr.proc = h;
}

/*
 * Aligned words are read with single loads, word by word (a whole control
 * block too): the probes' threads store into them while we read.
 */
static int self_read(void *p, uintptr_t addr, void *buf, size_t len)
{
	(void)p;
	if (len && !(len % sizeof(uint64_t)) && !(addr % sizeof(uint64_t))) {
		size_t i;

		for (i = 0; i < len; i += sizeof(uint64_t)) {
			uint64_t v = __atomic_load_n((uint64_t *)(addr + i), __ATOMIC_ACQUIRE);

			memcpy((char *)buf + i, &v, sizeof(v));
		}
		return 0;
	}
	if (len == sizeof(uint32_t) && !(addr % sizeof(uint32_t))) {
		uint32_t v = __atomic_load_n((uint32_t *)addr, __ATOMIC_ACQUIRE);

		memcpy(buf, &v, sizeof(v));
		return 0;
	}
	memcpy(buf, (void *)addr, len);
	return 0;
}

/*
 * Aligned 8- and 4-byte stores are single release stores: other threads may
 * be running probes.  What is longer (a chain cell, the file name) is
 * published by such a store made after it (the chain pointer, file_ready).
 */
static int self_write(void *p, uintptr_t addr, void *buf, size_t len)
{
	(void)p;
	if (len == sizeof(uint64_t) && !(addr % sizeof(uint64_t))) {
		uint64_t v;

		memcpy(&v, buf, sizeof(v));
		__atomic_store_n((uint64_t *)addr, v, __ATOMIC_RELEASE);
		return 0;
	}
	if (len == sizeof(uint32_t) && !(addr % sizeof(uint32_t))) {
		uint32_t v;

		memcpy(&v, buf, sizeof(v));
		__atomic_store_n((uint32_t *)addr, v, __ATOMIC_RELEASE);
		return 0;
	}
	memcpy((void *)addr, buf, len);
	return 0;
}

static pid_t self_getpid(void *p)
{
	(void)p;
	return getpid();
}

struct self_obj {
	uintptr_t base;
	char *name;
};

struct self_list {
	struct self_obj *v;
	size_t n, cap;
	unsigned long long gen;
};

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self_list *l = data;
	const char *name = info->dlpi_name;
	struct self_obj *nv;

	(void)size;
	char exe[PATH_MAX];
	ssize_t n;

	l->gen = info->dlpi_adds + info->dlpi_subs;
	if ((!name || !name[0]) && !l->n) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		name = exe;
	}
	if (!name || name[0] != '/')
		return 0;
	if (l->n == l->cap) {
		nv = realloc(l->v, (l->cap * 2 + 8) * sizeof(*nv));
		if (!nv)
			return 1;
		l->v = nv;
		l->cap = l->cap * 2 + 8;
	}
	l->v[l->n].base = info->dlpi_addr;
	l->v[l->n].name = strdup(name);
	if (!l->v[l->n].name)
		return 1;
	l->n++;
	return 0;
}

/* dl_iterate_phdr holds the loader lock: collect first, call back after. */
static int self_obj_iter(void *p, tnfctl_ind_obj_f *fn, void *cd)
{
	struct tnfctl_handle *h = p;
	struct self_list l = {0};
	int ret;
	size_t i;

	ret = dl_iterate_phdr(collect, &l);
	h->pr.dl_gen = l.gen;
	for (i = 0; i < l.n && !ret; i++) {
		tnfctl_ind_obj_info_t oi = {.objfd = -1,
					    .text_base = l.v[i].base,
					    .data_base = l.v[i].base,
					    .objname = l.v[i].name};

		ret = fn(h, &oi, cd);
	}
	for (i = 0; i < l.n; i++)
		free(l.v[i].name);
	free(l.v);
	return ret;
}

void tnf_access_internal(struct tnfctl_handle *h)
{
	h->pr.mode = TNF_MODE_INTERNAL;
	h->pr.ops.p_read = self_read;
	h->pr.ops.p_write = self_write;
	h->pr.ops.p_getpid = self_getpid;
	h->pr.ops.p_obj_iter = self_obj_iter;
	h->pr.proc = h;
}
