// SPDX-License-Identifier: BSD-2-Clause
/*
 * The USDT probes of an object's file: the "stapsdt" notes (type 3) of
 * .note.stapsdt, as <sys/sdt.h> lays them out: pc, _.stapsdt.base and the
 * semaphore (address-sized), then "provider\0name\0args\0".  Several call
 * sites of one provider:name are one probe; libbpf's attach_usdt finds the
 * sites again itself when the probe is attached.
 */
#include <stdlib.h>
#include <string.h>
#include "objfile.h"
#include "usdt.h"

#define NT_STAPSDT 3

/* "-4@%eax 8@$3" holds 2 arguments. */
static int count_args(const char *s, size_t len)
{
	int n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && (i == 0 || s[i - 1] == ' '))
			n++;
	return n;
}

static struct tnf_usdt_def *find_def(struct tnf_usdt_def *v, size_t n, const char *prov,
				     const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].provider, prov) && !strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* One note's desc: add a site to its probe.  0, or -1 on ENOMEM. */
static int add_site(struct tnf_usdt_def **v, size_t *n, size_t *cap, const char *desc, size_t len,
		    size_t asz)
{
	const char *prov, *name, *args, *end = desc + len;
	struct tnf_usdt_def *d, *nv;
	uint64_t sema = 0;

	if (len < 3 * asz + 3)
		return 0;
	memcpy(&sema, desc + 2 * asz, asz);
	prov = desc + 3 * asz;
	name = memchr(prov, '\0', (size_t)(end - prov));
	if (!name || ++name >= end)
		return 0;
	args = memchr(name, '\0', (size_t)(end - name));
	if (!args || ++args > end || !*prov || !*name)
		return 0;
	d = find_def(*v, *n, prov, name);
	if (d) {
		d->sites++;
		return 0;
	}
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		nv = realloc(*v, *cap * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv;
	}
	d = &(*v)[*n];
	memset(d, 0, sizeof(*d));
	d->provider = strdup(prov);
	d->name = strdup(name);
	if (!d->provider || !d->name) {
		free(d->provider);
		free(d->name);
		return -1;
	}
	d->nargs = args < end ? count_args(args, strnlen(args, (size_t)(end - args))) : 0;
	if (d->nargs > TNF_USDT_MAX_ARGS)
		d->nargs = TNF_USDT_MAX_ARGS;
	d->sites = 1;
	d->sema = sema != 0;
	(*n)++;
	return 0;
}

int tnf_obj_usdt(struct tnf_obj *o, struct tnf_usdt_def **defs, size_t *np)
{
	size_t asz = gelf_getclass(o->elf) == ELFCLASS64 ? 8 : 4, n = 0, cap = 0, shstrndx;
	struct tnf_usdt_def *v = NULL;
	Elf_Scn *scn = NULL;

	*defs = NULL;
	*np = 0;
	if (elf_getshdrstrndx(o->elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(o->elf, scn))) {
		size_t off = 0, noff, doff;
		const char *sname;
		Elf_Data *d;
		GElf_Shdr sh;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(o->elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)d->d_buf + noff, "stapsdt", 8))
				continue;
			if (add_site(&v, &n, &cap, (char *)d->d_buf + doff, nh.n_descsz, asz)) {
				tnf_usdt_defs_free(v, n);
				return -1;
			}
		}
	}
	*defs = v;
	*np = n;
	return 0;
}

void tnf_usdt_defs_free(struct tnf_usdt_def *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].provider);
		free(v[i].name);
	}
	free(v);
}
