/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * USDT probes (<sys/sdt.h>'s .note.stapsdt) of the objects a target has
 * loaded, as probes of the handle: found in the object's file
 * (usdt_notes.c), controlled by uprobes with the kernel's semaphore
 * reference count, and recorded by the controller into a TNF file with
 * kernel mode's writer (usdt_trace.c); the probe operations (usdt.c).
 */
#ifndef TNFCTL_USDT_H
#define TNFCTL_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tnf/tnfctl.h>
#include "ktrace.h"

#define TNF_USDT_MAX_ARGS 12 /* <sys/sdt.h> has STAP_PROBE1..12 */

struct tnf_obj;
struct tnfctl_handle;
struct tnfctl_probe_handle;

/* One provider:name of an object: all its call sites. */
struct tnf_usdt_def {
	char *provider, *name;
	int nargs;	/* of the first site (every site of a probe has the same) */
	unsigned sites; /* call sites */
	bool sema;	/* has a semaphore */
};

/* usdt_notes.c: the notes of @o's file, one entry per provider:name.  0, or -1 (ENOMEM). */
int tnf_obj_usdt(struct tnf_obj *o, struct tnf_usdt_def **defs, size_t *n);
void tnf_usdt_defs_free(struct tnf_usdt_def *defs, size_t n);

/* A USDT probe of a handle (tnfctl_probe_handle.usdt). */
struct tnf_usdt {
	char *provider, *name, *path; /* path: the object's file */
	pid_t pid;		      /* the process its uprobes filter on */
	int nargs;
	uint32_t strmask; /* arguments read as C strings (TNFCTL_USDT_STRINGS) */
	unsigned sites;
	bool enabled, traced;
	struct bpf_link *link; /* attached while enabled and traced */
	int *fds;	       /* its perf events and links (usdt_fds.c) */
	unsigned nfds;
	uint32_t slot;	    /* its index in the session (0: none yet) */
	uint64_t gen;	    /* that session's (a forked child's copy is not its own) */
	unsigned inst;	    /* the session's BPF object its link is in */
	bool gone;	    /* its image is gone (exit, exec, unload): released off-thread */
	struct kt_probe kp; /* its TNF type, for the writer */
};

/* usdt.c: a new USDT probe of @h for @d in object @path; NULL on ENOMEM. */
struct tnf_usdt *tnf_usdt_new(struct tnfctl_handle *h, const struct tnf_usdt_def *d,
			      const char *path);
/* "name N;provider P;keys usdt P;args K;slots ...;sites S[;strings I J]" (malloc'd). */
char *tnf_usdt_attrs(const struct tnf_usdt *u, unsigned sites);
tnfctl_errcode_t tnf_usdt_set(struct tnfctl_handle *h, struct tnfctl_probe_handle *p, int what,
			      bool on);
void tnf_usdt_state(struct tnfctl_probe_handle *p, tnfctl_probe_state_t *st);
/* A probe not attached takes TNFCTL_USDT_STRINGS as it is now; -1 on ENOMEM. */
int tnf_usdt_refresh(struct tnfctl_probe_handle *p);
/* A FORK child's probe @c takes the state of its parent's copy @pu (attached anew). */
tnfctl_errcode_t tnf_usdt_inherit(struct tnfctl_handle *ch, struct tnfctl_probe_handle *c,
				  const struct tnf_usdt *pu);
/* The probe's uprobes gone (its object unloaded, the handle closed), its memory freed. */
void tnf_usdt_free(struct tnf_usdt *u);

/* usdt_trace.c: the controller's one USDT session (BPF object, consumer, file). */
tnfctl_errcode_t tnf_usdt_attach(struct tnfctl_handle *h, struct tnf_usdt *u);
void tnf_usdt_detach(struct tnf_usdt *u);
void tnf_usdt_forget(struct tnf_usdt *u);
/* @h is being closed: the session ends with the last handle that used it. */
void tnf_usdt_put(struct tnfctl_handle *h);
/* The session's file, or NULL if none is open (for the man page's rule, tests). */
const char *tnf_usdt_file(void);
/* A kernel buffer wants the writer: the file kept since the last session is closed. */
void tnf_usdt_let_go(void);

/* libbpf_log.c: libbpf's messages dropped on this thread while on (nests). */
void tnf_libbpf_quiet(bool on);

/* usdt_fds.c: the descriptors a forked controller's child lets go of. */
void tnf_usdt_fds_lock(void);
void tnf_usdt_fds_unlock(void);
int tnf_usdt_fds_add(int fd);
void tnf_usdt_fds_del(int fd);
int tnf_usdt_fds_claim(uint32_t prog_id, int **own, unsigned *n);
void tnf_usdt_fds_child(void);

#endif
