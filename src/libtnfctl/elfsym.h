/* SPDX-License-Identifier: BSD-2-Clause */
/* ELF queries through libelf: dynamic check and symbol lookup. */
#ifndef TNFCTL_ELF_H
#define TNFCTL_ELF_H

#include <stdbool.h>
#include <stdint.h>

struct tnf_elf_sym {
	uint64_t vaddr;	     /* st_value */
	uint64_t file_off;   /* offset of the symbol in the file (for uprobes) */
	uint64_t load_vaddr; /* page-aligned p_vaddr of the first PT_LOAD */
};

/* 1: has PT_INTERP (dynamic, run by rtld), 0: static, -1: not an ELF file. */
int tnf_elf_is_dynamic(int fd);
/* @path is ld.so itself (run as a command, it is the executable). */
bool tnf_elf_is_rtld(const char *path);
/* Look @name up in .dynsym then .symtab of @path.  0 on success. */
int tnf_elf_lookup(const char *path, const char *name, struct tnf_elf_sym *out);

#endif
