// SPDX-License-Identifier: BSD-2-Clause
/*
 * prex -f: will a freshly exec'd image (stopped at its exec) load
 * libtnfprobe.so.1?  It will not when it is static, or when neither its
 * LD_PRELOAD nor its own DT_NEEDED names the runtime.  Such an image is
 * opened with TNFCTL_OPEN_NOPROBES at once: tnfctl_pid_open() would fail on
 * it only after letting it run.  A library that needs the runtime
 * indirectly is not looked for; the image is then followed without probes.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prex.h"

#define RUNTIME "libtnfprobe.so"

static bool preloads_runtime(pid_t pid)
{
	char path[64], buf[1 << 16];
	ssize_t n;
	size_t off;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true; /* cannot tell: let tnfctl_pid_open() decide */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || n == sizeof(buf) - 1)
		return true; /* cannot tell */
	buf[n] = '\0';
	for (off = 0; off < (size_t)n; off += strlen(buf + off) + 1)
		if (!strncmp(buf + off, "LD_PRELOAD=", 11) && strstr(buf + off, RUNTIME))
			return true;
	return false;
}

static bool pread_all(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len;
}

/* File offset of virtual address @va, through the PT_LOAD headers. */
static off_t va_to_off(const Elf64_Phdr *ph, int n, Elf64_Addr va)
{
	int i;

	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va < ph[i].p_vaddr + ph[i].p_filesz)
			return (off_t)(ph[i].p_offset + (va - ph[i].p_vaddr));
	return -1;
}

/* 1: needs the runtime itself, 0: does not, -1: static. */
static int elf_needs_runtime(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	Elf64_Dyn dyn[512];
	Elf64_Addr strtab = 0;
	int i, n, nd = 0, interp = 0, res = 0;
	off_t stroff;

	if (!pread_all(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		return 1; /* not one we read: let tnfctl_pid_open() decide */
	n = eh.e_phnum < 64 ? eh.e_phnum : 64;
	if (!pread_all(fd, ph, n * sizeof(ph[0]), (off_t)eh.e_phoff))
		return 1;
	for (i = 0; i < n; i++) {
		interp |= ph[i].p_type == PT_INTERP;
		if (ph[i].p_type == PT_DYNAMIC) {
			nd = ph[i].p_filesz / sizeof(dyn[0]);
			if (nd > 512)
				nd = 512;
			if (!pread_all(fd, dyn, nd * sizeof(dyn[0]), (off_t)ph[i].p_offset))
				return 1;
		}
	}
	if (!interp)
		return -1;
	for (i = 0; i < nd && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
	stroff = strtab ? va_to_off(ph, n, strtab) : -1;
	if (stroff < 0)
		return 1;
	for (i = 0; i < nd && dyn[i].d_tag != DT_NULL && !res; i++) {
		char name[256];
		ssize_t got;

		if (dyn[i].d_tag != DT_NEEDED)
			continue;
		got = pread(fd, name, sizeof(name) - 1, stroff + (off_t)dyn[i].d_un.d_val);
		if (got <= 0)
			return 1;
		name[got] = '\0';
		res = !strncmp(name, RUNTIME, strlen(RUNTIME));
	}
	return res;
}

bool image_lacks_runtime(pid_t pid, bool *is_static)
{
	char path[64];
	int fd, r;

	*is_static = false;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	r = elf_needs_runtime(fd);
	close(fd);
	if (r < 0) {
		*is_static = true;
		return true;
	}
	return !r && !preloads_runtime(pid);
}
