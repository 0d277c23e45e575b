/* SPDX-License-Identifier: BSD-2-Clause */
/* One loaded object of a target: its ELF file, probe blocks and symbols. */
#ifndef TNFCTL_OBJFILE_H
#define TNFCTL_OBJFILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tnfctl_probe_handle;

struct tnf_obj {
	struct tnf_obj *next;
	char *name;	/* as the link map names it */
	uintptr_t base; /* l_addr: load bias */
	int fd;
	Elf *elf;
	bool mark;   /* seen by the current sync */
	bool is_new; /* added by the last sync */
	unsigned long min_id, nprobes;
	struct tnfctl_probe_handle **probes;
};

/* Probe control blocks found in the object's file. */
struct tnf_obj_block {
	uintptr_t addr; /* in the target */
	char *attrs;	/* malloc'd */
};

/* Takes ownership of @fd.  0, or -1 if it is not a usable ELF object. */
int tnf_obj_open(struct tnf_obj *o, int fd);
void tnf_obj_close(struct tnf_obj *o);
/* The blocks of section "tnf_probes", in declaration order (file in link order, line).  0, or -1
 * (ENOMEM). */
int tnf_obj_blocks(struct tnf_obj *o, struct tnf_obj_block **blocks, size_t *n);
/* Address in the target of defined dynamic symbol @name; 0 if none. */
uintptr_t tnf_obj_sym(struct tnf_obj *o, const char *name);
/* The same for a function (STT_FUNC): what a probe may be connected to. */
uintptr_t tnf_obj_func(struct tnf_obj *o, const char *name);
/* Name of the dynamic symbol at target address @addr, or NULL (points into the ELF data). */
const char *tnf_obj_sym_name(struct tnf_obj *o, uintptr_t addr);

#endif
