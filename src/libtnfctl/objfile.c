// SPDX-License-Identifier: BSD-2-Clause
/*
 * ELF side of probe discovery.  Control blocks are read from the object's
 * file, not from target memory: a dlopened object is reported before rtld
 * relocates it, so its pointers (attrs) are not yet valid in the target.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tnf/probe.h>
#include "objfile.h"
#include "tnf_runtime.h"

#define BLOCK_SIZE sizeof(struct tnf_probe_control)
#define ATTRS_OFF  offsetof(struct tnf_probe_control, attrs)
#define ATTRS_MAX  4096

int tnf_obj_open(struct tnf_obj *o, int fd)
{
	GElf_Ehdr eh;

	o->fd = fd;
	elf_version(EV_CURRENT);
	o->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* Only objects of our own class and machine can hold our blocks. */
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF || !gelf_getehdr(o->elf, &eh) ||
	    gelf_getclass(o->elf) != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)) {
		tnf_obj_close(o);
		return -1;
	}
	/*
	 * The file is mapped (else read in now): no descriptor per object of
	 * each followed process (prex -f ran out of them at 250 processes).
	 */
	if (!elf_cntl(o->elf, ELF_C_FDREAD)) {
		close(fd);
		o->fd = -1;
	}
	return 0;
}

void tnf_obj_close(struct tnf_obj *o)
{
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	o->elf = NULL;
	o->fd = -1;
}

static Elf_Scn *find_section(Elf *e, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(e, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* Bytes of the file image at link-time address @vaddr (PT_LOAD file part). */
static const char *file_at(Elf *e, uint64_t vaddr, size_t *avail)
{
	size_t i, n, size;
	char *raw = elf_rawfile(e, &size);

	if (!raw || elf_getphdrnum(e, &n))
		return NULL;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr >= ph.p_vaddr + ph.p_filesz)
			continue;
		if (ph.p_offset + (vaddr - ph.p_vaddr) >= size)
			return NULL;
		*avail = size - (ph.p_offset + (vaddr - ph.p_vaddr));
		if (*avail > ph.p_vaddr + ph.p_filesz - vaddr)
			*avail = ph.p_vaddr + ph.p_filesz - vaddr;
		return raw + ph.p_offset + (vaddr - ph.p_vaddr);
	}
	return NULL;
}

/* Value of symbol @idx of the symbol table linked from a relocation section. */
static int reloc_sym_value(Elf *e, GElf_Shdr *rsh, size_t idx, uint64_t *val)
{
	Elf_Scn *symscn = elf_getscn(e, rsh->sh_link);
	Elf_Data *d = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Sym sym;

	if (!d || !gelf_getsym(d, (int)idx, &sym) || sym.st_shndx == SHN_UNDEF)
		return -1;
	*val = sym.st_value;
	return 0;
}

static bool is_relative(unsigned int type)
{
#if defined(__x86_64__)
	return type == R_X86_64_RELATIVE;
#elif defined(__aarch64__)
	return type == R_AARCH64_RELATIVE;
#else
	(void)type;
	return false;
#endif
}

/*
 * The link-time value each block's attrs pointer gets once rtld has
 * relocated the object: a RELA addend (plus symbol), else the file's own
 * word (REL, RELR, or an ET_EXEC with no relocation).
 */
static void resolve_attrs(Elf *e, const GElf_Shdr *psh, uint64_t *vals, size_t n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		cnt = sh.sh_size / sh.sh_entsize;
		for (i = 0; d && i < cnt; i++) {
			GElf_Rela r;
			uint64_t off, base = 0;
			size_t b;

			if (!gelf_getrela(d, (int)i, &r) || r.r_offset < psh->sh_addr)
				continue;
			off = r.r_offset - psh->sh_addr;
			b = off / BLOCK_SIZE;
			if (b >= n || off % BLOCK_SIZE != ATTRS_OFF)
				continue;
			if (!is_relative(GELF_R_TYPE(r.r_info)) && GELF_R_SYM(r.r_info) &&
			    reloc_sym_value(e, &sh, GELF_R_SYM(r.r_info), &base))
				continue;
			vals[b] = base + r.r_addend;
		}
	}
}

/* The value of attribute @key ("file", "line") in an attribute string. */
static const char *attr_val(const char *attrs, const char *key, size_t *len)
{
	size_t kl = strlen(key);
	const char *s = attrs;

	while (s && *s) {
		if (!strncmp(s, key, kl) && s[kl] == ' ') {
			*len = strcspn(s + kl + 1, ";");
			return s + kl + 1;
		}
		s = strchr(s, ';');
		s = s ? s + 1 : NULL;
	}
	*len = 0;
	return "";
}

struct order {
	struct tnf_obj_block b;
	size_t file_rank; /* section position of the file's first block: link order */
	long line;
};

static int by_decl(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->file_rank != y->file_rank)
		return x->file_rank < y->file_rank ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->b.addr < y->b.addr ? -1 : x->b.addr > y->b.addr;
}

/*
 * Compilers lay out a file's static blocks in any order (gcc reverses
 * them): order by source file in link order, then by line, which is the
 * declaration order.
 */
static void sort_declared(struct tnf_obj_block *bl, size_t n)
{
	struct order *v = calloc(n, sizeof(*v));
	size_t i, j, fl, gl;

	if (!v)
		return; /* section order, then */
	for (i = 0; i < n; i++) {
		const char *f = attr_val(bl[i].attrs, "file", &fl);

		v[i].b = bl[i];
		v[i].line = atol(attr_val(bl[i].attrs, "line", &gl));
		v[i].file_rank = i;
		for (j = 0; j < i; j++) {
			const char *g = attr_val(bl[j].attrs, "file", &gl);

			if (gl == fl && !strncmp(f, g, fl)) {
				v[i].file_rank = v[j].file_rank;
				break;
			}
		}
	}
	qsort(v, n, sizeof(*v), by_decl);
	for (i = 0; i < n; i++)
		bl[i] = v[i].b;
	free(v);
}

int tnf_obj_blocks(struct tnf_obj *o, struct tnf_obj_block **blocks, size_t *np)
{
	struct tnf_obj_block *bl = NULL;
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(o->elf, TNF_PROBE_SECTION, &sh);
	Elf_Data *d;
	uint64_t *vals;
	size_t i, n, k = 0;

	*blocks = NULL;
	*np = 0;
	if (!scn || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC))
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < sh.sh_size)
		return 0;
	n = sh.sh_size / BLOCK_SIZE;
	if (!n)
		return 0;
	vals = calloc(n, sizeof(*vals));
	bl = calloc(n, sizeof(*bl));
	if (!vals || !bl) {
		free(vals);
		free(bl);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct tnf_probe_control cb;

		memcpy(&cb, (char *)d->d_buf + i * BLOCK_SIZE, sizeof(cb));
		vals[i] = (uintptr_t)cb.attrs;
	}
	resolve_attrs(o->elf, &sh, vals, n);
	for (i = 0; i < n; i++) {
		struct tnf_probe_control cb;
		const char *s;
		size_t avail = 0;

		memcpy(&cb, (char *)d->d_buf + i * BLOCK_SIZE, sizeof(cb));
		if (cb.version != TNF_PROBE_VERSION_1)
			continue;
		s = vals[i] ? file_at(o->elf, vals[i], &avail) : NULL;
		if (!s)
			continue;
		if (avail > ATTRS_MAX)
			avail = ATTRS_MAX;
		bl[k].attrs = strndup(s, avail);
		if (!bl[k].attrs)
			goto nomem;
		bl[k].addr = o->base + sh.sh_addr + i * BLOCK_SIZE;
		k++;
	}
	free(vals);
	sort_declared(bl, k);
	*blocks = bl;
	*np = k;
	return 0;
nomem:
	while (k--)
		free(bl[k].attrs);
	free(bl);
	free(vals);
	return -1;
}

static Elf_Data *dynsym(Elf *e, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_DYNSYM && sh->sh_entsize)
			return elf_getdata(scn, NULL);
	return NULL;
}

static uintptr_t lookup(struct tnf_obj *o, const char *name, bool func_only)
{
	GElf_Shdr sh;
	Elf_Data *d = dynsym(o->elf, &sh);
	size_t i, n;

	if (!d)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *nm;

		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
			continue;
		if (func_only && GELF_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		nm = elf_strptr(o->elf, sh.sh_link, s.st_name);
		if (nm && !strcmp(nm, name))
			return o->base + s.st_value;
	}
	return 0;
}

uintptr_t tnf_obj_sym(struct tnf_obj *o, const char *name)
{
	return lookup(o, name, false);
}

uintptr_t tnf_obj_func(struct tnf_obj *o, const char *name)
{
	return lookup(o, name, true);
}

const char *tnf_obj_sym_name(struct tnf_obj *o, uintptr_t addr)
{
	GElf_Shdr sh;
	Elf_Data *d = dynsym(o->elf, &sh);
	size_t i, n;

	if (!d || addr < o->base)
		return NULL;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;

		if (gelf_getsym(d, (int)i, &s) && s.st_shndx != SHN_UNDEF &&
		    GELF_ST_TYPE(s.st_info) == STT_FUNC && o->base + s.st_value == addr)
			return elf_strptr(o->elf, sh.sh_link, s.st_name);
	}
	return NULL;
}
