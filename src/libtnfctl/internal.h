/* SPDX-License-Identifier: BSD-2-Clause */
/* Controller-side internals shared by the API files (open.c, continue.c ...). */
#ifndef TNFCTL_INTERNAL_H
#define TNFCTL_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <tnf/tnfctl.h>
#include "exec_info.h"
#include "proto.h"

#define TNF_API __attribute__((visibility("default")))

enum tnf_hstate {
	TNF_H_STOPPED,	    /* target stopped, handle usable */
	TNF_H_EXECED,	    /* after EXEC: only close is allowed */
	TNF_H_EXEC_PENDING, /* after a FORK the parent's exec overtook: continue (EXEC) or close */
	TNF_H_ENDED,	    /* after EXIT/TARGGONE: only close is allowed */
	TNF_H_GONE,	    /* killed while stopped (NOPROCESS) */
};

enum tnf_mode {
	TNF_MODE_DIRECT,   /* pid_open / exec_open / a FORK child */
	TNF_MODE_INTERNAL, /* tnfctl_internal_open: the caller's own probes */
	TNF_MODE_INDIRECT, /* tnfctl_indirect_open: the client's callbacks */
	TNF_MODE_KERNEL,   /* tnfctl_kernel_open: the kernel's tracepoints (kernel.c) */
};

struct tnf_obj;
struct tnf_usdt;

/* A probe handle lives until tnfctl_close, valid or not. */
struct tnfctl_probe_handle {
	struct tnfctl_probe_handle *next_all; /* every probe of the handle, in id order */
	struct tnfctl_handle *owner;
	struct tnf_obj *obj; /* NULL once the object is gone */
	bool valid;
	bool new_probe;
	bool create_due; /* the create callback is yet to run on it (run_create) */
	unsigned long id;
	uintptr_t addr;	       /* the control block in the target (0: a USDT probe) */
	struct tnf_usdt *usdt; /* a USDT probe (usdt.h), NULL for a TNF probe */
	char *attrs;
	void *client_data;
	char **func_names; /* last tnfctl_probe_state_get result */
	uintptr_t *func_addrs;
};

/* Addresses in the target of libtnfprobe's runtime (0: not found). */
struct tnf_rt_addrs {
	uintptr_t runtime, pool, test, alloc, end, commit, rollback;
};

/* Node cache for tnfctl_probe_connect: (func, next) -> node. */
struct tnf_chain_ent {
	struct tnf_chain_ent *next;
	uintptr_t func, down, node;
};

struct tnf_probes {
	enum tnf_mode mode;
	tnfctl_ind_config_t ops; /* read/write/getpid/obj_iter of the target */
	void *proc;		 /* first argument of the ops */
	struct tnf_obj *objs;	 /* link-map order */
	struct tnfctl_probe_handle *all, **all_tail;
	unsigned long next_id;
	struct tnf_rt_addrs rt;
	struct tnf_chain_ent *chains;
	void *(*create)(tnfctl_handle_t *, tnfctl_probe_t *);
	void (*destroy)(void *);
	char *buf_name;		   /* trace file named by this handle or found in the target */
	unsigned long long dl_gen; /* internal mode: dlpi_adds + dlpi_subs at last sync */
	pid_t mem_tid;		   /* direct mode: a live thread to reach memory through */
	bool ready;		   /* probe layer initialised */
	bool usdt_used;		   /* a USDT probe was attached: the session counts it (usdt.h) */
	bool usdt_only;		   /* NOPROBES: USDT probes only, no runtime (probes.c) */
	bool usdt_asked;	   /* NOPROBES: a probe call came (tnf_probes_startup_wanted) */
	unsigned in_create;	   /* create callbacks running: no continue, no close (BADARG) */
	unsigned in_destroy;	   /* destroy callbacks running: no register_funcs either */
	unsigned funcs_gen;	   /* register_funcs calls, to tell a callback's own */
};

struct tnf_agent;
struct tnf_kernel;
struct tnf_reply;

/* A handle's place on the engine connection (client.c); its fields are under the client's lock. */
struct tnf_slot {
	struct tnf_slot *hnext; /* the id's hash chain */
	uint32_t hid;		/* its id on the wire (proto.h) */
	struct tnf_reply *q, **qtail;
	pthread_cond_t cond; /* an ordinary call waits here */
	pthread_t waiter;    /* tnfctl_continue's thread, woken by a signal ... */
	bool sleeping;	     /* ... while it sleeps */
	/* the target, resumed if the engine dies */
	pid_t pid;
	unsigned long long start; /* its start time (/proc): never another process with the pid */
	bool exec_child;
};

struct tnfctl_handle {
	pthread_mutex_t lock;	 /* one call at a time per handle */
	struct tnf_slot slot;	 /* direct mode: its id on the engine connection */
	struct tnf_agent *agent; /* the connection serving it (client.c) */
	struct tnfctl_handle *all_next, *all_prev; /* every direct handle (client.c) */
	bool closed; /* a close reached the engine: the id is free there */
	pid_t pid;
	bool exec_child;	 /* started by exec_open: killed by a DEFAULT close */
	unsigned int open_flags; /* TNFCTL_OPEN_*, inherited by child handles */
	bool tty_intr;		 /* exec_open'd without FOREGROUND, or a child or re-open of one */
	enum tnf_hstate state;
	bool have_event;
	tnfctl_event_info_t last;
	int last_exec_errno;	   /* EXEC_FAILED: execve's errno */
	struct tnf_exec_data exec; /* of the last event, if EXEC or EXEC_FAILED */
	tnfctl_trace_attrs_t attrs;
	struct tnf_probes pr;
	struct tnf_kernel *kern; /* kernel mode only */
};

/*
 * The calls that talk to the engine are no cancellation points (a thread
 * cancelled half-way would leave a target attached and a handle nobody
 * has); only tnfctl_continue's wait is, and it stops the target first.
 */
static inline int tnf_nocancel(void)
{
	int cs;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	return cs;
}

static inline void tnf_cancel_restore(int cs)
{
	pthread_setcancelstate(cs, NULL);
}

/* continue.c: the handle's TNFCTL_OPEN_* flags, told to the helper */
tnfctl_errcode_t tnf_handle_set_flags(struct tnfctl_handle *h, unsigned int flags);

/* engine_start.c: a new engine and our end of its connection */
tnfctl_errcode_t tnf_engine_start(int *sock, pid_t *engine_pid);

/* client.c: the engine connection; a handle is an id on it */
tnfctl_errcode_t tnf_client_new_handle(struct tnfctl_handle **hp);
void tnf_client_free_handle(struct tnfctl_handle *h);
void tnf_client_bind(struct tnfctl_handle *h, pid_t pid, bool exec_child);
/* A request and its DONE reply. */
tnfctl_errcode_t tnf_client_call(struct tnfctl_handle *h, struct tnf_req *req, struct tnf_rep *rep);
/* A new request, then tnf_client_wait for each of its replies. */
tnfctl_errcode_t tnf_client_request(struct tnfctl_handle *h, struct tnf_req *req);
tnfctl_errcode_t tnf_client_wait(struct tnfctl_handle *h, struct tnf_rep *rep);
/* @fd: receives the descriptor that came with the reply (-1: none), the caller's to close. */
tnfctl_errcode_t tnf_client_wait_fd(struct tnfctl_handle *h, struct tnf_rep *rep, int *fd);
/* A pidfd of the engine serving @h (readable once it has died), or -1; owned by the client. */
int tnf_client_engine_pidfd(struct tnfctl_handle *h);
/* @h came to this process through a fork: its connection is the parent's. */
bool tnf_client_inherited(struct tnfctl_handle *h);
/* Interrupted by the caller's signals (tnfctl_continue); every signal blocked on entry. */
tnfctl_errcode_t tnf_client_wait_intr(struct tnfctl_handle *h, const sigset_t *callers,
				      uint32_t child_hid, struct tnf_rep *rep);
bool tnf_client_signal_pending(const sigset_t *callers);
uint32_t tnf_client_new_hid(struct tnfctl_handle *parent);
void tnf_client_drop_hid(struct tnfctl_handle *h, uint32_t hid);
tnfctl_errcode_t tnf_client_adopt(struct tnfctl_handle *parent, uint32_t hid, pid_t pid,
				  struct tnfctl_handle **hp);
void tnf_spawned_add(pid_t pid);
void tnf_spawned_reap(pid_t pid);
void tnf_spawned_forget(pid_t pid);
/* The engine serving @h is gone (its exec_open'd targets died with it). */
bool tnf_client_engine_dead(struct tnfctl_handle *h);
/* Processes left stopped by our tnfctl_close(SUSPEND) (suspended.c). */
void tnf_suspended_add(pid_t pid, bool tty_intr);
int tnf_suspended_take(pid_t pid, bool *tty_intr);
void tnf_suspended_resume(int pidfd);

/* exec.c: program lookup and environment */
tnfctl_errcode_t tnf_find_program(const char *pgm, char **path);
tnfctl_errcode_t tnf_check_dynamic(const char *path);
tnfctl_errcode_t tnf_check_setid(const char *path);
char **tnf_build_env(const char *ld_preload, const char *libtnfprobe_path, bool runtime);
void tnf_free_env(char **env);
char *tnf_self_dir(void);

/* probes.c: a fresh handle's lock (recursive: create callbacks may call probe ops) */
void tnf_handle_init(struct tnfctl_handle *h);
void tnf_handle_lock_init(struct tnfctl_handle *h);

/* access.c: the target-memory and object-iteration backends */
void tnf_access_direct(struct tnfctl_handle *h);
void tnf_access_internal(struct tnfctl_handle *h);

/* probes.c: discovery, ids, state; buffer.c: trace file and attributes */
tnfctl_errcode_t tnf_probes_init(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_probes_sync(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_probes_usable(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_probes_usable_usdt(struct tnfctl_handle *h);
bool tnf_probes_startup_wanted(const struct tnfctl_handle *h);
tnfctl_errcode_t tnf_probes_startup(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_probes_fork(struct tnfctl_handle *h, struct tnfctl_handle *c);
void tnf_probes_image_gone(struct tnfctl_handle *h);
void tnf_probes_release(struct tnfctl_handle *h);
void tnf_probes_detach_target(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_probes_claim_external(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_probes_attach_direct(struct tnfctl_handle *h);
void tnf_bare_handle_free(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_attrs_refresh(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_read(struct tnfctl_handle *h, uintptr_t addr, void *buf, size_t len);
tnfctl_errcode_t tnf_write(struct tnfctl_handle *h, uintptr_t addr, const void *buf, size_t len);

/* buffer.c: trace file creation, shared with kernel mode */
tnfctl_errcode_t tnf_map_errno(int e);
int tnf_create_file(const char *path, uint64_t size, uid_t owner, tnfctl_errcode_t *err);
/* A trace file under a temporary name beside its path, renamed into place on success. */
struct tnf_tmpfile {
	int dirfd;	  /* the path's directory */
	int fd;		  /* an O_TMPFILE file, given its name at commit; else -1 */
	const char *base; /* the path's last component (in the caller's path) */
	char name[32];	  /* the temporary name, "" once renamed or removed */
};
int tnf_create_tmpfile(const char *path, uint64_t size, uid_t owner, struct tnf_tmpfile *t,
		       tnfctl_errcode_t *err);
tnfctl_errcode_t tnf_tmpfile_commit(struct tnf_tmpfile *t);
void tnf_tmpfile_discard(struct tnf_tmpfile *t);
tnfctl_errcode_t tnf_abs_path(const char *name, char *path, size_t len);

/* target.c: a process's start as BPF computes it (start_boottime in USER_HZ ticks), 0 if gone */
uint64_t tnf_start_ticks(pid_t tgid);

/* kernel.c: kernel-mode handles (TNF_MODE_KERNEL) */
tnfctl_errcode_t tnf_kernel_buffer_alloc(struct tnfctl_handle *h, const char *name, uint_t size);
tnfctl_errcode_t tnf_kernel_probe_set(struct tnfctl_handle *h, struct tnfctl_probe_handle *p,
				      int what, bool on);
tnfctl_errcode_t tnf_kernel_state_get(struct tnfctl_handle *h, struct tnfctl_probe_handle *p,
				      tnfctl_probe_state_t *st);
struct tnfctl_probe_handle *tnf_kernel_probe_by_id(struct tnfctl_handle *h, unsigned long id);
void tnf_kernel_close(struct tnfctl_handle *h);

/* continue.c: TNFCTL_PATH_TRUNCATED when @path_len bytes may be the start of a longer name */
unsigned int tnf_path_flags(bool exec_failed, int error, size_t path_len);
#define TNF_KP_ENABLE 1
#define TNF_KP_TRACE  2

#endif
