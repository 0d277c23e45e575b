// SPDX-License-Identifier: BSD-2-Clause
/* ELF queries through libelf. */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "elfsym.h"

static Elf *elf_open_fd(int fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

int tnf_elf_is_dynamic(int fd)
{
	size_t i, n;
	int ret = 0;
	Elf *e;

	e = elf_open_fd(fd);
	if (!e)
		return -1;
	if (elf_getphdrnum(e, &n)) {
		elf_end(e);
		return -1;
	}
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_INTERP)
			ret = 1;
	}
	elf_end(e);
	return ret;
}

static int find_in(Elf *e, Elf_Scn *scn, const char *name, GElf_Sym *out);

/*
 * ld.so itself: no PT_INTERP, and _r_debug exported (.dynsym).  A static
 * program has no PT_INTERP either, but keeps its _r_debug, if any, local.
 */
bool tnf_elf_is_rtld(const char *path)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	GElf_Sym sym;
	int fd;
	Elf *e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || tnf_elf_is_dynamic(fd) != 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	e = elf_open_fd(fd);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			found = !find_in(e, scn, "_r_debug", &sym);
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static int find_in(Elf *e, Elf_Scn *scn, const char *name, GElf_Sym *out)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t i, n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -1;
	d = elf_getdata(scn, NULL);
	if (!d)
		return -1;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *sn;

		if (!gelf_getsym(d, i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		sn = elf_strptr(e, sh.sh_link, s.st_name);
		if (sn && !strcmp(sn, name)) {
			*out = s;
			return 0;
		}
	}
	return -1;
}

/* Lookups are repeated for every process mapping the same ld.so and libc. */
struct sym_cache {
	struct sym_cache *next;
	dev_t dev;
	ino_t ino;
	int found;
	struct tnf_elf_sym sym;
	char name[];
};
static struct sym_cache *cache;

static int lookup_uncached(const char *path, const char *name, struct tnf_elf_sym *out);

/* The tracer helper and the controller's threads (probe layer) both use this. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

int tnf_elf_lookup(const char *path, const char *name, struct tnf_elf_sym *out)
{
	struct sym_cache *c;
	struct stat st;
	int found;

	if (stat(path, &st))
		return -1;
	pthread_mutex_lock(&cache_lock);
	for (c = cache; c; c = c->next)
		if (c->dev == st.st_dev && c->ino == st.st_ino && !strcmp(c->name, name)) {
			*out = c->sym;
			found = c->found;
			pthread_mutex_unlock(&cache_lock);
			return found;
		}
	c = calloc(1, sizeof(*c) + strlen(name) + 1);
	if (!c) {
		pthread_mutex_unlock(&cache_lock);
		return lookup_uncached(path, name, out);
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	strcpy(c->name, name);
	c->found = lookup_uncached(path, name, &c->sym);
	c->next = cache;
	cache = c;
	*out = c->sym;
	found = c->found;
	pthread_mutex_unlock(&cache_lock);
	return found;
}

static int lookup_uncached(const char *path, const char *name, struct tnf_elf_sym *out)
{
	Elf_Scn *scn = NULL;
	GElf_Sym sym;
	size_t i, n;
	int found = -1, pass, fd, ret = -1;
	Elf *e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	e = elf_open_fd(fd);
	if (!e)
		goto out_fd;
	/* .dynsym first: it is what rtld itself resolves against. */
	for (pass = 0; pass < 2 && found; pass++) {
		scn = NULL;
		while (found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				found = find_in(e, scn, name, &sym);
		}
	}
	if (found || elf_getphdrnum(e, &n))
		goto out;
	out->vaddr = sym.st_value;
	out->file_off = 0;
	out->load_vaddr = UINT64_MAX;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (out->load_vaddr == UINT64_MAX)
			out->load_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
		if (sym.st_value >= ph.p_vaddr && sym.st_value < ph.p_vaddr + ph.p_memsz)
			out->file_off = sym.st_value - ph.p_vaddr + ph.p_offset;
	}
	ret = out->file_off ? 0 : -1;
out:
	elf_end(e);
out_fd:
	close(fd);
	return ret;
}
