/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <tnf/tnfctl.h> - TNF probe and process control (libtnfctl for Linux).
 *
 * Source compatible with the Solaris <tnf/tnfctl.h>: same type names, enum
 * values and argument order.  Link with -ltnfctl (pkg-config tnfctl).
 *
 * Every function is MT-Safe: independent handles may be used at the same
 * time from different threads, and a handle may be passed between threads
 * (one thread at a time per handle).  A tnfctl_continue() blocked on one
 * handle never blocks calls on another.
 *
 * Linux notes common to all process-control functions:
 *  - Events are captured in the kernel by BPF programs; ptrace is used only
 *    to stop and resume.  The controller therefore needs root, or
 *    CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE + CAP_CHECKPOINT_RESTORE (the
 *    last for /proc/PID/map_files; CAP_SYS_ADMIN before Linux 5.9), in its
 *    effective set.  Without them every open fails with TNFCTL_ERR_ACCES.
 *    On a kernel without what the BPF side needs (BTF, tp_btf, the BPF
 *    ring buffer, BPF atomics: Linux 5.12 or later; tested on 6.1, 6.12
 *    and 6.18) every open fails with TNFCTL_ERR_KERNEL,
 *    as does every open when TNFCTL_STOP_MODE=kfunc forces a stop mode the
 *    kernel lacks (the bpf_send_signal_task kfunc, 6.13).
 *  - On the first open the library connects to the engine,
 *    tnfctl-engine(8): a helper program that owns the BPF object and all
 *    ptrace state.  One engine serves every caller process of a user,
 *    privilege set (effective capabilities), pid namespace and cgroup: the
 *    one already running, found by the name of its abstract unix socket
 *    with both sides' credentials checked (SO_PEERCRED), else a new one,
 *    started by exec (never a fork of the caller without exec, so a
 *    multi-threaded caller is safe), with no more capabilities than the
 *    caller's effective set.  It is found at a path fixed at build time
 *    ($libexecdir/tnfctl/tnfctl-engine), or at $TNFCTL_ENGINE (ignored in
 *    a set-id program).  It ends once it has had no caller for
 *    $TNFCTL_ENGINE_LINGER seconds (5 by default).  If a controller dies,
 *    the engine resumes every target it attached to and kills every
 *    exec_open'd target of it not yet released, so no process is ever left
 *    stopped; other controllers' targets are not touched.  An engine
 *    that cannot be started fails the open with TNFCTL_ERR_INTERNAL
 *    (errno says why: ENOENT, EACCES, ...; the library writes one line
 *    naming the path and the reason to stderr), or
 *    TNFCTL_ERR_ALLOCFAIL when out of memory or processes.  If the engine
 *    dies (killed), the library resumes every handle's target (SIGCONT),
 *    unless it was exec_open'd and not released (those die with the
 *    engine), then fails every call on those handles with
 *    TNFCTL_ERR_INTERNAL and errno ECONNRESET.  A caller in a pid namespace
 *    other than the initial one is refused (TNFCTL_ERR_INTERNAL, errno
 *    EOPNOTSUPP).
 *  - Handles are ids on one connection per process to the engine: a handle
 *    of tnfctl_pid_open() or of a FORK holds no descriptor (one of
 *    tnfctl_exec_open() holds a pidfd of its child, to reap it, until the
 *    close).  The library runs one thread of its own (all signals blocked)
 *    that takes the engine's replies, and installs a handler for one
 *    real-time signal, the highest with no handler when the first engine
 *    starts (SIGRTMAX unless the program handles it), sent only to a thread
 *    of the caller's blocked in tnfctl_continue() to wake it.  A thread
 *    whose mask blocks that signal (a program that takes it with sigwait
 *    or a signalfd) is not sent it and looks for its event every 20 ms
 *    instead; a program that takes the signal for itself later (a handler,
 *    SIG_IGN, SIG_DFL) gets no more of it, and a thread waiting then finds
 *    its event within a second.  tnfctl_continue() is a cancellation point
 *    in its wait alone: a thread cancelled there leaves the target stopped
 *    and the handle usable, as an EINTR would.  The opens and
 *    tnfctl_close() are no cancellation points.
 *  - A target is only ever controlled if the caller could ptrace it.
 *
 * ABI: libtnfctl.so.1 versions its symbols.  The Solaris API, the
 * functions of tnfctl_*(3TNF), is version node TNFCTL_1, which never
 * changes; the Linux extensions (the functions marked so below) are
 * TNFCTL_LINUX_0.1, and each later release's additions a node of their
 * own, TNFCTL_LINUX_<major>.<minor>, inheriting the one before (0.2:
 * tnfctl_event_data_get and tnfctl_watch_read).  A
 * program records the node of each function it uses, so the loader
 * refuses one built against a later release on an older library (with
 * "version TNFCTL_LINUX_... not found") instead of failing at the call.
 * Public structs never change layout: one that may gain fields starts
 * with a size field (sz) the caller sets, and the library reads and
 * writes no byte past it.  The ABI is recorded in abi/ and checked by
 * `make abi-check` (libabigail's abidiff).
 */
#ifndef _TNF_TNFCTL_H
#define _TNF_TNFCTL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memset, for TNFCTL_OPTS */
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Name of the in-target runtime that every controlled process must map. */
#define TNFCTL_LIBTNFPROBE "libtnfprobe.so.1"

/* Solaris basic types that glibc lacks. */
#ifndef _TNF_BOOLEAN_T_DEFINED
#define _TNF_BOOLEAN_T_DEFINED
typedef enum {
	B_FALSE = 0,
	B_TRUE = 1
} boolean_t;
#endif
#ifndef _TNF_UINT_T_DEFINED
#define _TNF_UINT_T_DEFINED
typedef unsigned int uint_t;
#endif
#ifndef _TNF_ULONG_T_DEFINED
#define _TNF_ULONG_T_DEFINED
typedef unsigned long ulong_t;
#endif

/* Opaque control handle. */
typedef struct tnfctl_handle tnfctl_handle_t;

/* Opaque probe handle (the probe functions arrive with the probes layer). */
typedef struct tnfctl_probe_handle tnfctl_probe_t;

/* State of the target's trace buffer. */
typedef enum {
	TNFCTL_BUF_OK,	  /* a trace file is mapped and being written */
	TNFCTL_BUF_NONE,  /* no trace file yet */
	TNFCTL_BUF_BROKEN /* tracing failed in the target */
} tnfctl_bufstate_t;

/* Trace attributes, see tnfctl_trace_attrs_get(). */
typedef struct tnfctl_trace_attrs {
	pid_t targ_pid;			   /* target process id (tgid); 0 for the kernel */
	const char *trace_file_name;	   /* absolute path, or NULL if none */
	size_t trace_buf_size;		   /* bytes; 0 when there is no file (buffer) */
	size_t trace_min_size;		   /* bytes; smallest size buffer_alloc accepts */
	tnfctl_bufstate_t trace_buf_state; /* see tnfctl_bufstate_t */
	boolean_t trace_state;		   /* process-wide tracing switch; kernel:
					      tnfctl_trace_state_set's master switch */
	boolean_t filter_state;		   /* kernel: the process filter is on
					      (tnfctl_filter_state_set); B_FALSE for
					      a process handle */
	long pad;
} tnfctl_trace_attrs_t;

/* Probe state, filled by tnfctl_probe_state_get() (probes layer). */
typedef struct tnfctl_probe_state {
	ulong_t id;
	const char *attr_string;
	boolean_t enabled;
	boolean_t traced;
	boolean_t new_probe;
	const char *obj_name;
	const char *const *func_names;
	const uintptr_t *func_addrs;
	void *client_registered_data;
	long pad;
} tnfctl_probe_state_t;

/* Error codes, in the Solaris order (the values are part of the ABI). */
typedef enum {
	TNFCTL_ERR_NONE = 0,	  /* success */
	TNFCTL_ERR_ACCES,	  /* permission denied */
	TNFCTL_ERR_NOTARGET,	  /* target finished (never returned) */
	TNFCTL_ERR_ALLOCFAIL,	  /* memory allocation failure */
	TNFCTL_ERR_INTERNAL,	  /* internal error */
	TNFCTL_ERR_SIZETOOSMALL,  /* requested trace size too small */
	TNFCTL_ERR_SIZETOOBIG,	  /* requested trace size too big */
	TNFCTL_ERR_BADARG,	  /* bad argument */
	TNFCTL_ERR_NOTDYNAMIC,	  /* target is not a dynamic executable */
	TNFCTL_ERR_NOLIBTNFPROBE, /* libtnfprobe.so.1 not mapped in target */
	TNFCTL_ERR_BUFBROKEN,	  /* tracing broken in the target */
	TNFCTL_ERR_BUFEXISTS,	  /* a trace buffer already exists */
	TNFCTL_ERR_NOBUF,	  /* no trace buffer */
	TNFCTL_ERR_BADDEALLOC,	  /* cannot deallocate buffer */
	TNFCTL_ERR_NOPROCESS,	  /* no such target process */
	TNFCTL_ERR_FILENOTFOUND,  /* file not found */
	TNFCTL_ERR_BUSY,	  /* target already controlled */
	TNFCTL_ERR_INVALIDPROBE,  /* probe no longer valid */
	TNFCTL_ERR_USR1,	  /* reserved for client callbacks */
	TNFCTL_ERR_USR2,
	TNFCTL_ERR_USR3,
	TNFCTL_ERR_USR4,
	TNFCTL_ERR_USR5,
	/*
	 * Linux extension: the running kernel lacks a BPF feature this needs
	 * (BTF, tp_btf, the BPF ring buffer, task iterators; or the
	 * bpf_send_signal_task kfunc when TNFCTL_STOP_MODE=kfunc forces it).
	 */
	TNFCTL_ERR_KERNEL
} tnfctl_errcode_t;

/* Why tnfctl_continue() returned. */
typedef enum {
	TNFCTL_EVENT_EINTR,    /* a signal interrupted the caller */
	TNFCTL_EVENT_TARGGONE, /* target ended without calling exit */
	TNFCTL_EVENT_DLOPEN,   /* target mapped a new object */
	TNFCTL_EVENT_DLCLOSE,  /* target unmapped an object */
	TNFCTL_EVENT_EXEC,     /* target exec'd a new image */
	TNFCTL_EVENT_FORK,     /* target created a process */
	TNFCTL_EVENT_EXIT      /* target called exit */
} tnfctl_event_t;

/* What tnfctl_close() does to the target. */
typedef enum {
	TNFCTL_TARG_DEFAULT, /* kill if started by exec_open, else resume */
	TNFCTL_TARG_KILL,    /* kill the target */
	TNFCTL_TARG_RESUME,  /* detach and let it run */
	TNFCTL_TARG_SUSPEND  /* detach and leave it stopped */
} tnfctl_targ_op_t;

/* Indirect mode (tnfctl_indirect_open, probes layer). */
typedef struct tnfctl_ind_obj_info {
	int objfd;	     /* -1 if not available */
	uintptr_t text_base; /* load address of the text */
	uintptr_t data_base; /* load address of the data */
	const char *objname; /* absolute path of the object */
} tnfctl_ind_obj_info_t;

typedef int tnfctl_ind_obj_f(void *, const struct tnfctl_ind_obj_info *, void *);

typedef struct tnfctl_ind_config {
	int (*p_read)(void *, uintptr_t, void *, size_t);
	int (*p_write)(void *, uintptr_t, void *, size_t);
	pid_t (*p_getpid)(void *);
	int (*p_obj_iter)(void *, tnfctl_ind_obj_f *, void *);
} tnfctl_ind_config_t;

/*
 * tnfctl_strerror - message for an error code (libtnfctl(3TNF)).
 * @err: any value; codes outside the enum get "unknown error code".
 * Returns a static string; never NULL, never to be freed.
 */
const char *tnfctl_strerror(tnfctl_errcode_t err);

/*
 * tnfctl_pid_open - attach to a running process (tnfctl_pid_open(3TNF)).
 * @pid:    the target's process id (tgid).
 * @retval: receives the new handle; owned by the caller until
 *          tnfctl_close().  Untouched on error.
 *
 * On success every thread of the target is in a ptrace-stop.  A process
 * left stopped right after an exec (tnfctl_close(h, TNFCTL_TARG_SUSPEND)
 * after TNFCTL_EVENT_EXEC) is first run to its rtld sync point: all start-up
 * objects mapped, no constructor and no main run.  A process in a
 * job-control stop is attached and its stop ended (it is the handle that
 * holds it now).
 *
 * When the open fails, the process is left as it was found, with one
 * exception: a process that only this controller's SUSPEND close left
 * stopped (the EXEC pattern above, when the new image is static or has no
 * libtnfprobe.so.1) is resumed, on every error but NOPROCESS and BUSY
 * (another tracer holds it then).  A process in someone else's job-control
 * stop (a SIGSTOP the caller did not get from a SUSPEND) stays in it; one
 * that was running runs on.
 *
 * Errors:
 *  TNFCTL_ERR_BADARG        @pid is the caller's own process, or NULL @retval.
 *  TNFCTL_ERR_NOPROCESS     no such process, or it died during the attach.
 *  TNFCTL_ERR_BUSY          another tracer holds it (TracerPid), or another
 *                           handle of this process does.
 *  TNFCTL_ERR_ACCES         ptrace refused, no BPF privileges, or the
 *                           kernel refuses the process's /proc files (mem,
 *                           maps, exe, map_files): e.g. CAP_SYS_PTRACE
 *                           permitted but not effective.
 *  TNFCTL_ERR_NOTDYNAMIC    the executable has no PT_INTERP/PT_DYNAMIC.
 *  TNFCTL_ERR_NOLIBTNFPROBE libtnfprobe.so.1 is not mapped.
 *  TNFCTL_ERR_KERNEL        the kernel lacks a BPF feature (see the top).
 *  TNFCTL_ERR_ALLOCFAIL     out of memory.
 *  TNFCTL_ERR_INTERNAL      anything else.
 * After each of these the process is released as said above.
 */
tnfctl_errcode_t tnfctl_pid_open(pid_t pid, tnfctl_handle_t **retval);

/*
 * tnfctl_exec_open - start a program under control (tnfctl_pid_open(3TNF)).
 * @pgmname: program; searched on $PATH when it contains no '/'.
 * @argv:    NULL-terminated argument vector (argv[0] should name @pgmname).
 * @envp:    environment, used verbatim, or NULL to inherit the caller's with
 *           LD_PRELOAD set to "[old] [libtnfprobe_path/]libtnfprobe.so.1
 *           [ld_preload]".
 * @ld_preload: space-separated extra libraries to preload, or NULL.
 * @libtnfprobe_path: directory holding libtnfprobe.so.1, or NULL for the
 *           directory of the loaded libtnfctl.so.1.
 * @retval:  receives the handle; owned by the caller until tnfctl_close().
 *
 * All strings are copied; the caller keeps ownership.  The child inherits
 * the caller's open file descriptors (those without FD_CLOEXEC) and signal
 * dispositions, starts with an empty signal mask, runs in its own process
 * group, and is killed if the controller dies before the
 * handle is closed with RESUME or SUSPEND.  On success the target is
 * stopped at its rtld sync point: every start-up object mapped, no user
 * code (no constructor, no main) run.
 *
 * Errors:
 *  TNFCTL_ERR_BADARG        NULL @pgmname, @argv or @retval.
 *  TNFCTL_ERR_FILENOTFOUND  @pgmname not found.
 *  TNFCTL_ERR_ACCES         found but not executable; set-uid, set-gid or
 *                           with file capabilities that would give it
 *                           credentials the caller could not ptrace (unless
 *                           the caller has CAP_SYS_PTRACE); the program died
 *                           before the sync point (missing library, bad
 *                           format), or no BPF/ptrace privileges (the
 *                           kernel refuses its /proc files: e.g.
 *                           CAP_SYS_PTRACE permitted but not effective; the
 *                           child is killed and reaped).
 *  TNFCTL_ERR_BUSY          another tracer holds the new process (a caller
 *                           run under `strace -f` or a debugger that follows
 *                           forks); the child is killed and reaped.
 *  TNFCTL_ERR_NOTDYNAMIC    a static executable (checked before exec).
 *  TNFCTL_ERR_NOLIBTNFPROBE libtnfprobe.so.1 not mapped (child killed).
 *  TNFCTL_ERR_KERNEL        the kernel lacks a BPF feature (see the top).
 *  TNFCTL_ERR_ALLOCFAIL     out of memory.
 *  TNFCTL_ERR_INTERNAL      anything else (the child is killed).
 */
tnfctl_errcode_t tnfctl_exec_open(const char *pgmname, char *const *argv, char *const *envp,
				  const char *ld_preload, const char *libtnfprobe_path,
				  tnfctl_handle_t **retval);

/*
 * tnfctl_continue - run the target until an event (tnfctl_pid_open(3TNF)).
 * @hndl:       a handle from tnfctl_pid_open/exec_open or a child handle.
 * @evt:        receives the event (see below).
 * @child_hndl: NULL to let children created by fork/vfork/clone run free
 *              and untraced; else receives, on TNFCTL_EVENT_FORK, a handle
 *              on the stopped child, owned by the caller (close it with
 *              tnfctl_close; its DEFAULT resumes it).
 *
 * Resumes every thread and blocks until one of:
 *  DLOPEN/DLCLOSE  the link map became consistent after an object was
 *                  added/removed; the new object's constructors have not run.
 *                  Its probes already exist (new ids) and the create
 *                  callback (tnfctl_register_funcs) has run for each; probes
 *                  of a removed object are now TNFCTL_ERR_INVALIDPROBE.
 *                  One DLOPEN per dlopen() call that added objects, however
 *                  many dependencies it brought, at rtld's RT_CONSISTENT
 *                  after RT_ADD (mapped, not yet relocated); one DLCLOSE per
 *                  dlclose() that removed objects (the last reference's),
 *                  after they are unmapped.  No event for dlopen(NULL), a
 *                  dlopen of an object already loaded (RTLD_NOLOAD too), a
 *                  dlclose that only drops a reference, or a failed dlopen
 *                  whose objects were removed before the map was consistent
 *                  (a missing dependency); one that fails later (a symbol
 *                  not found at relocation) is a DLOPEN then a DLCLOSE.
 *                  An object libc loads by itself (NSS, iconv modules) is a
 *                  DLOPEN too, named by its link-map name ("" if the link
 *                  map was never seen consistent since the open, or holds
 *                  more than 256 objects).
 *                  The watch (TNFCTL_WATCH_DL) follows the same rule.
 *                  (Linux) Objects of every link-map namespace count:
 *                  dlmopen() is reported as dlopen(), and the probes of an
 *                  object in another namespace are listed with the others.
 *                  Reported only once every namespace's link map is
 *                  consistent (another thread in the middle of a dlopen or
 *                  dlclose runs on until it is).
 *  EXEC            a successful execve; stopped before the new image's first
 *                  instruction.  The handle is then only good for close;
 *                  SUSPEND then tnfctl_pid_open() controls the new image.
 *                  (Linux: a TNFCTL_OPEN_NOPROBES handle goes on in the
 *                  new image instead; see tnfctl_pid_open_flags below.)
 *  FORK            parent stopped at the return of fork/vfork/clone
 *                  (after a vfork with @child_hndl set, the parent thread
 *                  counts as stopped while it waits in the kernel for the
 *                  child to exec or exit).  A child followed through
 *                  @child_hndl is traced from its birth: its real parent
 *                  never sees it stopped or continued (no CLD_STOPPED,
 *                  CLD_CONTINUED, nor their SIGCHLD).
 *                  When another thread's execve overtook the fork (the
 *                  forking thread died in the exec before it returned),
 *                  FORK is still reported, with its child handle, and the
 *                  next call reports EXEC; until then the parent's probe
 *                  and buffer functions return BADARG, as after EXEC.
 *                  DLOPEN, DLCLOSE and EXEC_FAILED events of an image an
 *                  exec ended are not reported.
 *  EXIT            the target called exit/exit_group and is gone.
 *  TARGGONE        the target ended another way (a signal).
 *  EINTR           a signal interrupted the caller; the target is stopped.
 * Signals sent to the target are delivered as if no one were watching.
 * Each return with the target stopped re-reads the trace attributes
 * (tnfctl_trace_attrs_get shows a buffer that broke meanwhile).  A
 * FORK child handle controls the child's probes too: they are a copy of the
 * parent's, writing into the same trace file.
 * After EXIT and TARGGONE only tnfctl_close() is useful.
 *
 * Errors:
 *  TNFCTL_ERR_BADARG     not a direct handle, NULL @evt, or the handle is
 *                        past an EXEC (without TNFCTL_OPEN_NOPROBES),
 *                        EXIT or TARGGONE event.
 *  TNFCTL_ERR_NOPROCESS  the target was killed while stopped (only SIGKILL
 *                        can do that).
 *  TNFCTL_ERR_ALLOCFAIL  no descriptor (RLIMIT_NOFILE) or memory in the
 *                        engine, which it needed for a moment to arm the
 *                        target (errno is EMFILE or ENFILE when
 *                        descriptors ran out; the target is still
 *                        stopped, the handle usable).  A child handle
 *                        holds no descriptor: it is an id on the
 *                        process's one connection to the engine.
 *  TNFCTL_ERR_INTERNAL   the engine failed.
 */
tnfctl_errcode_t tnfctl_continue(tnfctl_handle_t *hndl, tnfctl_event_t *evt,
				 tnfctl_handle_t **child_hndl);

/*
 * tnfctl_close - release a handle (tnfctl_close(3TNF)).
 * @hndl: handle to free (NULL is accepted and does nothing).
 * @targ_op: DEFAULT kills an exec_open'd target and resumes an attached one
 *           (and child handles); KILL kills it and waits until it is gone;
 *           RESUME detaches and lets it run; SUSPEND detaches and leaves it
 *           in a job-control stop another controller can attach to.
 *           Checked, then ignored, for internal, indirect and kernel handles.
 * The handle is freed.  The operation has taken effect when this returns:
 * KILL: the target is gone; RESUME: every thread detached and running;
 * SUSPEND: every thread detached and in the job-control stop ('T').
 * (An exec_open'd target is in its own process group with the caller as
 * parent: when the caller exits, the kernel sends that orphaned, stopped
 * group SIGHUP and SIGCONT, ending a target that does not ignore SIGHUP.
 * Attach the next controller before the caller exits.)
 * Nothing is left behind: no stopped thread, no BPF tracking of the target.
 * (A thread blocked in vfork() is detached once the vfork returns.)
 * A kernel handle (tnfctl_kernel_open): tracing is turned off (every BPF
 * program detached), what the ring buffer still holds is written to the
 * trace file, the file is synced and closed (it stays on disk, complete,
 * for tnfdump(1)), the BPF object is unloaded, the destroy callback runs
 * for every probe, and another kernel handle may then be opened.
 *
 * Errors:
 *  TNFCTL_ERR_BADARG    @targ_op is not one of the four (handle untouched).
 *  TNFCTL_ERR_INTERNAL  the engine failed (handle freed anyway).
 */
tnfctl_errcode_t tnfctl_close(tnfctl_handle_t *hndl, tnfctl_targ_op_t targ_op);

/*
 * tnfctl_trace_attrs_get - trace attributes (tnfctl_trace_attrs_get(3TNF)).
 * @hndl: handle.  @attrs: filled on success (caller-owned).
 * Direct handles report what was read from the target at open, at each
 * return of tnfctl_continue(), by tnfctl_check_libs() and by
 * tnfctl_buffer_alloc(); internal handles read it at the call.
 * trace_file_name (absolute path, NULL if none) points into the handle and
 * is valid until the next call on it; trace_buf_size and trace_min_size are
 * bytes; trace_buf_state is BROKEN once the target failed to map or write
 * its file (permanent for that process), NONE while no file is named, else
 * OK; trace_state is B_FALSE while tnf_process_disable() is in effect.
 * A kernel handle's attributes are those of its last call (nothing to read
 * elsewhere): targ_pid 0; trace_file_name the buffer's file while there
 * is a buffer (tnfctl_buffer_alloc), else NULL; trace_buf_size the
 * file's size in bytes while there is a buffer, else 0; trace_min_size 128
 * KiB; trace_buf_state OK while there is a buffer, BROKEN if the writer
 * gave up on the file (no room for a type record), else NONE;
 * trace_state the master switch (tnfctl_trace_state_set);
 * filter_state the filter mode (tnfctl_filter_state_set).
 * Errors: TNFCTL_ERR_BADARG for a NULL argument.
 */
tnfctl_errcode_t tnfctl_trace_attrs_get(tnfctl_handle_t *hndl, tnfctl_trace_attrs_t *attrs);

/*
 * tnfctl_internal_open - control the calling process's own probes
 * (tnfctl_internal_open(3TNF)).
 * @retval: receives the handle; owned by the caller until tnfctl_close().
 * If libtnfprobe.so.1 is not loaded in the caller yet (linked or
 * preloaded), it is loaded (dlopen) from the directory of libtnfctl.so.1,
 * else from the default search path, and stays loaded.
 * Objects dlopened or dlclosed later are noticed at the next call on the
 * handle (through the loader's dl_iterate_phdr counters).  Probe changes
 * are single pointer stores, safe while other threads fire the probes.
 * tnfctl_continue() is not available (BADARG); tnfctl_close() leaves probe
 * states and the trace file as they are.
 * Errors:
 *  TNFCTL_ERR_BADARG        NULL @retval.
 *  TNFCTL_ERR_NOLIBTNFPROBE libtnfprobe.so.1 is not loaded and cannot be.
 *  TNFCTL_ERR_BUSY          an internal handle is already open in this
 *                           process, or an external controller has it.
 *  TNFCTL_ERR_ALLOCFAIL, TNFCTL_ERR_INTERNAL.
 */
tnfctl_errcode_t tnfctl_internal_open(tnfctl_handle_t **retval);

/*
 * tnfctl_indirect_open - control a process through the client's own access
 * functions (tnfctl_indirect_open(3TNF)), e.g. a debugger's or a core's.
 * @prochandle: passed back as the first argument of every callback.
 * @config:     p_read/p_write (copy @size bytes at a target address; return
 *              0 on success), p_getpid, and p_obj_iter (call the function
 *              for the executable and every loaded object in link-map order
 *              with {objfd or -1, text_base = load bias, objname}; stop and
 *              return its value when it returns non-zero; 0 after a full
 *              pass).  Copied: the caller keeps ownership.  An objfd is
 *              duplicated, never closed.
 * @retval:     receives the handle; owned by the caller until tnfctl_close().
 * The target must be stopped at a consistent link map whenever a call is
 * made on the handle; after it dlopens or dlcloses, call
 * tnfctl_check_libs().  tnfctl_continue() is not available (BADARG).
 * Errors:
 *  TNFCTL_ERR_BADARG        NULL @config, @retval or callback.
 *  TNFCTL_ERR_NOLIBTNFPROBE no libtnfprobe.so.1 runtime in the objects.
 *  TNFCTL_ERR_BUSY          the target controls its own probes
 *                           (tnfctl_internal_open in the target).
 *  TNFCTL_ERR_ALLOCFAIL; TNFCTL_ERR_INTERNAL (a callback failed).
 */
tnfctl_errcode_t tnfctl_indirect_open(void *prochandle, tnfctl_ind_config_t *config,
				      tnfctl_handle_t **retval);

/*
 * tnfctl_check_libs - re-read the target's loaded objects and trace state
 * (tnfctl_check_libs(3TNF)).  New objects' probes get new ids (never
 * reused) and the create callback; probes of objects gone become invalid.
 * Needed for indirect handles after a dlopen/dlclose; harmless elsewhere
 * (direct handles do it at each DLOPEN/DLCLOSE stop).  A kernel handle:
 * does nothing and returns TNFCTL_ERR_NONE (the tracepoints are read once,
 * at tnfctl_kernel_open(); one added later, by a module, is not seen).
 * Errors: BADARG (NULL, or a direct handle past EXEC/EXIT), NOPROCESS
 * (target killed), ALLOCFAIL, INTERNAL (the link map is not consistent, or
 * a callback failed).
 */
tnfctl_errcode_t tnfctl_check_libs(tnfctl_handle_t *hndl);

/*
 * tnfctl_buffer_alloc - create the trace file and hand it to the target,
 * or create a kernel handle's buffer (tnfctl_buffer_alloc(3TNF)).
 * @hndl:  a process handle (direct, internal or indirect) or a kernel
 *         handle (tnfctl_kernel_open).
 * @trace_file_name: path; a relative one is resolved against the caller's
 *         (the controller's) current directory.  Copied.  Kernel handle
 *         only: NULL or "" for $TMPDIR/ktrace-<the caller's pid> (/tmp
 *         when TMPDIR is unset or empty).
 * @trace_buffer_size: bytes; at least trace_min_size (128 KiB), at most
 *         1 GiB.
 * The file is created with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, and made
 * @trace_buffer_size bytes long with real blocks (posix_fallocate), then
 * owned by the target's uid when that differs.  An existing plain file of
 * the caller's with one link is replaced; anything else (a symlink, another
 * user's file) is refused.  The target maps it at its next probe hit; the
 * file then holds its live trace (tnfdump(1) reads it at any time).
 *
 * Kernel handle: the buffer is a trace file too (a Linux extension:
 * Solaris kept the kernel's buffer in memory and ignored the name),
 * created as above (owned by the caller) and @trace_buffer_size bytes
 * long, plus a BPF ring buffer (kernel memory) that stages the records on
 * their way to the file: the smallest power of two of pages that holds a
 * quarter of @trace_buffer_size bytes, and at least 64 KiB.  The BPF
 * program is loaded with the filter list (tnfctl_filter_list_add), and a
 * thread of the library writes what the ring buffer receives into the
 * file until tnfctl_buffer_dealloc() or tnfctl_close(); the file wraps
 * like a Solaris kernel buffer (the oldest blocks are reused).  Nothing is
 * recorded until tracing is on (tnfctl_trace_state_set).  On an error
 * after the file was created, the file is removed.
 *
 * Errors:
 *  TNFCTL_ERR_BUFEXISTS     the target already has a trace file (kernel:
 *                           the handle has a buffer).
 *  TNFCTL_ERR_SIZETOOSMALL  @trace_buffer_size < trace_min_size (128 KiB).
 *  TNFCTL_ERR_SIZETOOBIG    @trace_buffer_size > 1 GiB, the most the
 *                           runtime maps (Solaris had no upper bound).
 *  TNFCTL_ERR_BADARG        NULL or empty name for a process handle,
 *                           path or a component too long, NULL handle,
 *                           or a direct handle past EXEC/EXIT.
 *  TNFCTL_ERR_ACCES         refused (existing symlink or foreign file,
 *                           permission denied, read-only file system;
 *                           kernel: BPF not permitted, which needs root or
 *                           CAP_BPF + CAP_PERFMON);
 *                           FILENOTFOUND (no such directory, or a path
 *                           through a non-directory); ALLOCFAIL (no space,
 *                           quota or memory; kernel: no memory for the
 *                           BPF object or its ring buffer); NOPROCESS
 *                           (target killed); INTERNAL (kernel: the BPF
 *                           program could not be loaded).
 */
tnfctl_errcode_t tnfctl_buffer_alloc(tnfctl_handle_t *hndl, const char *trace_file_name,
				     uint_t trace_buffer_size);

/*
 * tnfctl_register_funcs - per-probe client data (tnfctl_register_funcs(3TNF)).
 * @create:  called with every current probe now, and with each probe
 *           discovered later (after a dlopen: before tnfctl_continue
 *           returns, so before the object's constructors run); its return
 *           value becomes the probe's client_registered_data.  May call
 *           probe functions on the same handle, and register_funcs (the
 *           new create then runs once on every probe); tnfctl_continue
 *           and tnfctl_close from it are BADARG.  A NOPROBES handle lists
 *           its USDT probes for it (tnfctl_pid_open_flags).  NULL for none.
 * @destroy: called with that data for every probe handle ever created
 *           (dlclosed ones included) when the handle is closed, and for
 *           every existing probe when another pair is registered; calls
 *           on the handle from it are BADARG.
 * Errors: TNFCTL_ERR_BADARG for a NULL handle, or a call from a destroy
 * callback.
 */
tnfctl_errcode_t tnfctl_register_funcs(tnfctl_handle_t *hndl,
				       void *(*create)(tnfctl_handle_t *, tnfctl_probe_t *),
				       void (*destroy)(void *));

/* A probe operation: its return value stops tnfctl_probe_apply[_ids]. */
typedef tnfctl_errcode_t (*tnfctl_probe_op_t)(tnfctl_handle_t *, tnfctl_probe_t *, void *);

/*
 * tnfctl_probe_apply - call @probe_op(hndl, probe, clientdata) on every
 * valid probe: objects in link-map order, probes in declaration (section)
 * order within each (tnfctl_probe_apply(3TNF)); a kernel handle's in id
 * order.  Stops at the first non-zero return and returns it
 * (TNFCTL_ERR_USR1..5 are for clients).
 * Errors: BADARG (NULL handle or op, direct handle past EXEC/EXIT),
 * NOPROCESS, the op's code.
 */
tnfctl_errcode_t tnfctl_probe_apply(tnfctl_handle_t *hndl, tnfctl_probe_op_t probe_op,
				    void *clientdata);

/*
 * tnfctl_probe_apply_ids - the same for the probes with the @probe_count
 * ids in @probe_ids (caller-owned), in array order.  Ids start at 0 in
 * discovery order and are never reused within a handle (a kernel handle's:
 * 1..N, see tnfctl_kernel_open).
 * Errors: TNFCTL_ERR_INVALIDPROBE for an id of no current probe (processing
 * stops there), BADARG, the op's code.
 */
tnfctl_errcode_t tnfctl_probe_apply_ids(tnfctl_handle_t *hndl, ulong_t probe_count,
					ulong_t *probe_ids, tnfctl_probe_op_t probe_op,
					void *clientdata);

/*
 * tnfctl_probe_state_get - a probe's state (tnfctl_probe_state_get(3TNF)).
 * @state: filled on success (caller-owned).  attr_string and obj_name are
 *         owned by the handle and live until tnfctl_close(); func_names
 *         and func_addrs (NULL-terminated; NULL when nothing is connected;
 *         most recently connected first; a name is the .dynsym name or
 *         "func@0x<addr>") are owned by the probe handle and valid until
 *         the next tnfctl_probe_state_get() of that probe or tnfctl_close().
 *         enabled: the probe fires; traced: its records are committed;
 *         new_probe: its object arrived at the last dlopen sync.
 *         A kernel probe: obj_name, func_names and func_addrs are NULL,
 *         new_probe is B_TRUE (every probe arrived at the open).
 *         A USDT probe (Linux extension): attr_string "name N;provider P;
 *         keys usdt P;args K;slots arg0 ..;sites S[;strings I ..]",
 *         obj_name its object, func_names and func_addrs NULL.  The
 *         strings are TNFCTL_USDT_STRINGS' as it is at this call (or at
 *         its last enable/trace while attached): a controller may
 *         setenv() it between calls (prex's `usdt strings`).  The hits
 *         go to "<trace file>.usdt" ($TMPDIR/trace-<pid>.usdt without
 *         one), or to $TNFCTL_USDT_FILE when set as the file is made (the
 *         first USDT probe enabled and traced).
 * Errors: INVALIDPROBE (its object was dlclosed; a kernel probe whose
 * tracepoint format could not be read), BADARG (NULL, or a probe of
 * another handle), NOPROCESS, ALLOCFAIL, INTERNAL.
 */
tnfctl_errcode_t tnfctl_probe_state_get(tnfctl_handle_t *hndl, tnfctl_probe_t *probe_hndl,
					tnfctl_probe_state_t *state);

/*
 * tnfctl_probe_enable/disable/trace/untrace/disconnect_all - change one
 * probe (tnfctl_probe_state_get(3TNF)); usable as tnfctl_probe_op_t
 * (@ignored is not used).  Each is one aligned pointer store into the
 * probe's control block, safe while the target's threads run.  A fresh
 * probe is disabled and traced.  disconnect_all removes every function
 * connected with tnfctl_probe_connect().
 * Errors: TNFCTL_ERR_NOBUF (no trace file yet), BUFBROKEN (the target's
 * tracing broke), INVALIDPROBE, BADARG, NOPROCESS, INTERNAL.
 * A kernel probe (tnfctl_kernel_open) needs no buffer: the state is kept
 * in the handle, and the BPF program is attached to the tracepoint while
 * the probe is enabled and traced, tracing is on and a buffer exists, and
 * detached otherwise.  Errors then: BADARG (NULL, or a probe of another
 * handle; disconnect_all always: kernel probes have no functions),
 * INVALIDPROBE, and while tracing is on the attach's: ACCES,
 * FILENOTFOUND (the tracepoint is gone), ALLOCFAIL, INTERNAL (the state
 * is changed all the same).
 * A USDT probe (Linux extension) needs no buffer either: uprobes (with
 * the kernel's semaphore count) are on its sites while it is enabled and
 * traced, its hits written by this process into "<trace file>.usdt"
 * (tnfctl_probe_state_get(3)); disconnect_all does nothing.  Errors then:
 * BADARG, INVALIDPROBE, BUSY (a kernel-mode buffer has this process's
 * writer), and the attach's: ACCES, FILENOTFOUND, ALLOCFAIL, INTERNAL
 * (the state is left as it was).
 */
tnfctl_errcode_t tnfctl_probe_enable(tnfctl_handle_t *hndl, tnfctl_probe_t *probe_hndl,
				     void *ignored);
tnfctl_errcode_t tnfctl_probe_disable(tnfctl_handle_t *hndl, tnfctl_probe_t *probe_hndl,
				      void *ignored);
tnfctl_errcode_t tnfctl_probe_trace(tnfctl_handle_t *hndl, tnfctl_probe_t *probe_hndl,
				    void *ignored);
tnfctl_errcode_t tnfctl_probe_untrace(tnfctl_handle_t *hndl, tnfctl_probe_t *probe_hndl,
				      void *ignored);
tnfctl_errcode_t tnfctl_probe_disconnect_all(tnfctl_handle_t *hndl, tnfctl_probe_t *probe_hndl,
					     void *ignored);

/*
 * tnfctl_probe_connect - make @func run each time the probe fires, before
 * its record is committed, ahead of the functions connected earlier
 * (tnfctl_probe_state_get(3TNF)).  @func is a symbol in the .dynsym of the
 * object whose file basename is @lib_base, or of the first object in
 * link-map order that defines it when @lib_base is NULL; it is called with
 * the probe's tnf_probe_setup_t * (see <tnf/probe.h>).  "tnf_probe_debug"
 * (libtnfprobe) prints each firing to stderr.  A NULL @func does nothing.
 * The chain is data (nodes in libtnfprobe's pool), no code is written into
 * the target.  Both strings are the caller's.
 * Errors: BADARG (@lib_base not found, or no function @func there: a data
 * symbol is refused; a kernel handle, whose probes have no functions),
 * NOBUF, BUFBROKEN, INVALIDPROBE, INTERNAL (the pool of 1024 chain nodes
 * is used up).
 */
tnfctl_errcode_t tnfctl_probe_connect(tnfctl_handle_t *hndl, tnfctl_probe_t *probe_hndl,
				      const char *lib_base, const char *func);

/*
 * ---------------------------------------------------------------------
 * Kernel tracing (tnfctl_kernel_open(3TNF) and friends).
 *
 * The kernel probes are the running kernel's tracepoints, those tracefs
 * lists under events/ (tracefs is looked for at /sys/kernel/tracing and
 * /sys/kernel/debug/tracing; if it is at neither, the library mounts it
 * at /sys/kernel/tracing and leaves it mounted).  The ftrace subsystem's
 * internal events (events/ftrace) are not listed.  Probe ids are 1..N in
 * (subsystem, name) order, fixed at the open and stable for the life of
 * the handle.  A tracepoint whose format file cannot be read keeps its id
 * but is not a usable probe (TNFCTL_ERR_INVALIDPROBE; tnfctl_probe_apply
 * skips it).
 *
 * A probe's attribute string is "name <event>;slots <fields>;keys
 * <subsystem>", e.g. "name sys_enter_openat;slots __syscall_nr dfd
 * filename flags mode;keys syscalls".  Its arguments (the slots) are the
 * tracepoint's own fields (not the common_ header), in the format file's
 * order:
 *  - integers of 1, 2, 4 or 8 bytes, signed or unsigned as the format
 *    says (an `int' in an 8-byte slot, as the syscalls' arguments are, as
 *    a 32-bit int);
 *  - pointers, as tnf_opaque (tnfdump prints them in hex);
 *  - char arrays, and __data_loc and __rel_loc char[] strings, as strings;
 *  - in the syscalls subsystem, `char *' arguments that name something
 *    (the field's name has name, path, file or dir in it, or is type), as
 *    strings read from the calling process's memory at the event; a data
 *    buffer (write's buf) is a pointer: its bytes are the process's data.
 * A string holds at most 255 bytes.  A user string in a page of the
 * process that is not present in memory (not yet touched, or swapped out)
 * is recorded as a NULL string: the BPF program may not fault pages in.
 * At most 14 arguments per probe, of which at most 4 copied strings
 * (__data_loc, __rel_loc and user strings; char arrays do not count), from
 * the first 512 bytes of the tracepoint's record; the other fields
 * (structs, other arrays, those beyond these limits) are left out.
 *
 * A fresh probe is disabled and traced, as in a process.  The BPF
 * program writes for a tracepoint only while its probe is enabled and
 * traced, tracing is on (tnfctl_trace_state_set) and a buffer exists
 * (tnfctl_buffer_alloc).  It is attached the first time all hold and stays
 * attached until the buffer goes (the kernel releases a link in ~0.1 s):
 * a tracepoint never enabled and traced while tracing was on costs
 * nothing, one that was and is off costs a map lookup per hit.  A forked
 * child's copy of a kernel handle takes no call but tnfctl_close()
 * (TNFCTL_ERR_BADARG), which changes nothing of the parent's; the child
 * holds none of the parent's BPF links, programs or maps (they are let go
 * at the fork), so the parent's close detaches everything while the child
 * lives on.  Until it closes its copy, tnfctl_kernel_open() in the child
 * returns TNFCTL_ERR_BUSY.  tnfctl_probe_connect() and
 * tnfctl_probe_disconnect_all() return TNFCTL_ERR_BADARG (kernel probes
 * have no functions), as does tnfctl_continue(); tnfctl_check_libs() does
 * nothing.
 *
 * The records: each event, with a Solaris kernel schedule record
 * (tnf_sched_rec: tid as tnf_kthread_id, lwpid, pid, time_base, cpuid)
 * giving its thread id, its process id (0 for the idle task), the time
 * (CLOCK_MONOTONIC in ns, bpf_ktime_get_ns(): the clock of libtnfprobe's
 * records, so tnfdump(1) given a kernel trace and user traces of the same
 * period prints them on one time line) and the CPU.  The original Solaris
 * tnfdump reads these files.  Records the ring buffer had no room for (the
 * library's thread did not keep up) are counted in the file's drop
 * counters, reason "kernel ring buffer full", and events the kernel did
 * not run the program for (a tracepoint hit on a CPU while the program
 * runs there, e.g. in an interrupt: the program's recursion_misses) with
 * reason "kernel event during another, not run"; tnfdump reports both
 * (before 6.7 the kernel skips those hits without counting them).  A kernel
 * trace file is read whole once tracing is off: while the library's
 * thread writes it, a reader can meet a half-written block.
 *
 * Privileges: tnfctl_kernel_open() needs CAP_SYS_ADMIN, or CAP_BPF with
 * CAP_PERFMON, in the caller's effective set (what the BPF side needs
 * later), and a readable tracefs.  Kernels from 5.10: without BPF
 * cookies on perf-event links (before 5.15, or with
 * TNFCTL_KTRACE_COMPAT=1, read at each tnfctl_buffer_alloc()) each traced
 * tracepoint takes one of 64 programs, and enabling a probe (or turning
 * tracing on) that would make 65 attached to enabled, traced probes fails
 * with TNFCTL_ERR_ALLOCFAIL; disabling one frees its program.
 * One kernel handle per process at a time; handles of different
 * processes are independent (each its own BPF object, ring buffer and
 * file).  tnfctl_close() of a kernel handle: see tnfctl_close above.
 * ---------------------------------------------------------------------
 */

/*
 * tnfctl_kernel_open - open a kernel handle (tnfctl_kernel_open(3TNF)).
 * @retval: receives the handle; owned by the caller until tnfctl_close().
 *          Untouched on error.
 * Lists the tracepoints and reads their formats.  On return there is no
 * buffer, tracing and the filter are off, the filter list is empty and
 * every probe is disabled and traced.
 * Errors:
 *  TNFCTL_ERR_BADARG        NULL @retval.
 *  TNFCTL_ERR_BUSY          this process already has a kernel handle.
 *  TNFCTL_ERR_FILENOTFOUND  no tracefs, and none can be mounted (a kernel
 *                           without it; as Solaris without /dev/tnfctl).
 *  TNFCTL_ERR_ACCES         no privilege: neither CAP_SYS_ADMIN nor
 *                           CAP_BPF + CAP_PERFMON is effective (root
 *                           without them too), or tracefs is not readable.
 *  TNFCTL_ERR_KERNEL        no BTF or no BPF ring buffer (before 5.8).
 *  TNFCTL_ERR_ALLOCFAIL     out of memory.
 *  TNFCTL_ERR_INTERNAL      anything else.
 */
tnfctl_errcode_t tnfctl_kernel_open(tnfctl_handle_t **retval);

/*
 * tnfctl_buffer_dealloc - free a kernel handle's buffer
 * (tnfctl_buffer_alloc(3TNF)).
 * @hndl: a kernel handle.
 * Everything the ring buffer holds is written to the trace file, the BPF
 * object and its ring buffer are unloaded, and the file is synced and
 * closed; it stays on disk for tnfdump(1).  Probe states and the filter
 * list are kept; tnfctl_buffer_alloc() may then create a new buffer.
 * Errors:
 *  TNFCTL_ERR_BADARG      @hndl is NULL or not a kernel handle.
 *  TNFCTL_ERR_NOBUF       the handle has no buffer.
 *  TNFCTL_ERR_BADDEALLOC  tracing is on.
 */
tnfctl_errcode_t tnfctl_buffer_dealloc(tnfctl_handle_t *hndl);

/*
 * tnfctl_trace_state_set - the kernel's master tracing switch
 * (tnfctl_trace_state_set(3TNF)).
 * @hndl: a kernel handle.
 * @on:   B_TRUE: the BPF program is attached to the tracepoint of every
 *        enabled, traced probe, and events are recorded; B_FALSE: every
 *        program is detached, and what the ring buffer holds is in the
 *        file when the call returns.  Setting the current state again
 *        changes nothing.
 * Errors:
 *  TNFCTL_ERR_BADARG   @hndl is NULL or not a kernel handle.
 *  TNFCTL_ERR_NOBUF    @on is B_TRUE and the handle has no buffer.
 *  TNFCTL_ERR_ACCES, TNFCTL_ERR_FILENOTFOUND, TNFCTL_ERR_ALLOCFAIL,
 *  TNFCTL_ERR_INTERNAL a tracepoint could not be attached (not permitted;
 *                      the tracepoint is gone; no memory; other): tracing
 *                      is left off.
 */
tnfctl_errcode_t tnfctl_trace_state_set(tnfctl_handle_t *hndl, boolean_t on);

/*
 * tnfctl_filter_state_set - the process filter (tnfctl_trace_state_set(3TNF)).
 * @hndl: a kernel handle.
 * @on:   B_TRUE: only events of the processes in the filter list are
 *        recorded (none while the list is empty); B_FALSE: events of every
 *        process.  Takes effect at once; the list is kept while the filter
 *        is off.  filter_state (tnfctl_trace_attrs_get) reports it.
 * Errors: TNFCTL_ERR_BADARG (@hndl is NULL or not a kernel handle).
 */
tnfctl_errcode_t tnfctl_filter_state_set(tnfctl_handle_t *hndl, boolean_t on);

/*
 * tnfctl_filter_list_get - the filter list (tnfctl_trace_state_set(3TNF)).
 * @hndl:     a kernel handle.
 * @pid_list: receives a malloc'd array of the pids in the list, in no
 *            particular order; the caller owns it and frees it with
 *            free(3).  NULL when the list is empty.
 * @count:    receives the number of pids (0 when the list is empty).
 * Errors: TNFCTL_ERR_BADARG (@hndl NULL or not a kernel handle, NULL
 * @pid_list or @count), TNFCTL_ERR_ALLOCFAIL (*pid_list NULL, *count 0).
 */
tnfctl_errcode_t tnfctl_filter_list_get(tnfctl_handle_t *hndl, pid_t **pid_list, int *count);

/*
 * tnfctl_filter_list_add - add a process to the filter list
 * (tnfctl_trace_state_set(3TNF)).
 * @hndl: a kernel handle.
 * @pid:  a process id (all the process's threads; its children are not
 *        added), or 0 for the activity of no process (kernel threads and
 *        the idle task).  A pid already in the list is not added twice.
 *        A listed process that exits leaves the list; a new process given
 *        the same pid does not pass (the program checks the process's
 *        start time too).  Pids are the kernel's global ones (the initial
 *        PID namespace, as in the records): a caller inside a PID
 *        namespace (a container) names other processes than the program
 *        sees, and nothing of them passes.
 * Errors:
 *  TNFCTL_ERR_BADARG     @hndl is NULL or not a kernel handle, @pid < 0, or
 *                        @pid is a thread's id (not a process's).
 *  TNFCTL_ERR_NOPROCESS  no process @pid (or it has exited: a zombie).
 *  TNFCTL_ERR_ALLOCFAIL  out of memory, or the list holds 65536 pids, or
 *                        out of descriptors (errno EMFILE).
 *  TNFCTL_ERR_INTERNAL   the BPF program's copy of the list could not be
 *                        updated.
 */
tnfctl_errcode_t tnfctl_filter_list_add(tnfctl_handle_t *hndl, pid_t pid);

/*
 * tnfctl_filter_list_delete - remove a process from the filter list
 * (tnfctl_trace_state_set(3TNF)).
 * @hndl: a kernel handle.
 * @pid:  a pid in the list.
 * Errors:
 *  TNFCTL_ERR_BADARG     @hndl is NULL or not a kernel handle, @pid < 0,
 *                        or @pid is not in the list and the process exists.
 *  TNFCTL_ERR_NOPROCESS  the process has exited (it left the list when it
 *                        did, as on Solaris).
 *  TNFCTL_ERR_INTERNAL   the BPF program's copy could not be updated.
 */
tnfctl_errcode_t tnfctl_filter_list_delete(tnfctl_handle_t *hndl, pid_t pid);

/*
 * ---------------------------------------------------------------------
 * Linux extensions (not in Solaris).  Guarded so that strictly portable
 * code can check for them.
 * ---------------------------------------------------------------------
 */
#define TNFCTL_LINUX_EXTENSIONS 1

/*
 * Options structs (struct tnfctl_open_opts, struct tnfctl_watch_opts), as
 * libbpf's: the first field, sz, is the size of the struct the caller was
 * built with; fields are only ever added at the end.  Declare one with
 *
 *	TNFCTL_OPTS(tnfctl_watch_opts, opts, .flags = TNFCTL_WATCH_DL);
 *
 * which zero-fills it (padding included) and sets sz (a statement
 * expression, a GNU extension: at block scope only; in C++ the designators
 * must follow the declaration order).  sz must not exceed the object's
 * real size.  The library reads no byte past sz (a field that does not fit
 * whole in sz has its default), and refuses with TNFCTL_ERR_BADARG an sz
 * smaller than sizeof(size_t) or over 1024, or any non-zero byte past the
 * fields it knows (a newer program asking for an option this library
 * lacks).  A NULL options pointer means every default.  The struct is the
 * caller's; the library keeps no pointer into it after the call.  The
 * *_opts functions are in version node TNFCTL_LINUX_0.1.
 */
#define TNFCTL_OPTS(TYPE, NAME, ...)                                                               \
	struct TYPE NAME = ({                                                                      \
		memset(&NAME, 0, sizeof(struct TYPE));                                             \
		(struct TYPE){.sz = sizeof(struct TYPE), __VA_ARGS__};                             \
	})

/*
 * Details of the last event tnfctl_continue() returned on a handle.  Frozen
 * as first released (programs built against it keep working); new code
 * uses struct tnfctl_event_data and tnfctl_event_data_get() below, which
 * can grow.
 */
typedef struct tnfctl_event_info {
	tnfctl_event_t event; /* the event itself */
	pid_t pid;	      /* target tgid */
	pid_t tid;	      /* thread that caused it (0 if unknown); EXEC: the thread that
				 called execve, by its tid before the exec (as the watch) */
	uint64_t time_ns;     /* CLOCK_MONOTONIC when it happened, ns */
	pid_t child_pid;      /* FORK: the new process */
	int exit_status;      /* EXIT: the status passed to exit (0-255) */
	int term_signal;      /* TARGGONE: the signal that ended it, else 0 */
	char path[4096];      /* EXEC: new program; DLOPEN: the name passed to dlopen;
				 DLCLOSE: the object's link-map name (l_name: the dlopen
				 name if it held a '/', else the path rtld found);
				 "" if unknown; whole (as in struct tnfctl_event_data) */
} tnfctl_event_info_t;

/*
 * tnfctl_event_info_get - details of the last event (Linux extension).
 * @hndl: a direct handle; @info: filled on success (caller-owned).
 * Errors: TNFCTL_ERR_BADARG for NULL arguments or before any event.
 */
tnfctl_errcode_t tnfctl_event_info_get(tnfctl_handle_t *hndl, tnfctl_event_info_t *info);

/*
 * Growable event structs (struct tnfctl_event_data, struct tnfctl_watch_data),
 * filled by the library: the caller sets the first field, sz, to the size of
 * the struct it was built with (sizeof); fields are only ever added at the
 * end.  The library fills each field that lies within sz, and sets to zero
 * any byte past the fields it knows, up to sz (so a program built against a
 * newer header reads its new fields as 0).  An sz smaller than the struct of
 * the first release (up to and including @path_len, the two structs'
 * TNFCTL_*_DATA_SZ_MIN) or over 1024 is refused with TNFCTL_ERR_BADARG.
 * Paths are whole: the kernel takes no name longer than PATH_MAX (4096
 * bytes, NUL included) for an exec or an open, so every path an event names
 * fits; the one exception, an execve that failed with ENAMETOOLONG, gives the
 * first 4095 bytes of the name and sets TNFCTL_PATH_TRUNCATED.  Their
 * strings are owned by the handle or the watch.  Declare one with
 *
 *	struct tnfctl_watch_data ev = {.sz = sizeof(ev)};
 */
#define TNFCTL_PATH_TRUNCATED 0x1u /* @path is the start of a longer name */

struct tnfctl_event_data {
	size_t sz;	      /* sizeof(struct tnfctl_event_data), set by the caller */
	tnfctl_event_t event; /* the event itself */
	pid_t pid;	      /* target tgid */
	pid_t tid;	      /* as in struct tnfctl_event_info */
	uint64_t time_ns;     /* CLOCK_MONOTONIC when it happened, ns */
	pid_t child_pid;      /* FORK: the new process */
	int exit_status;      /* EXIT: the status passed to exit (0-255) */
	int term_signal;      /* TARGGONE: the signal that ended it, else 0 */
	unsigned int flags;   /* TNFCTL_PATH_TRUNCATED */
	const char *path;     /* EXEC, EXEC_FAILED: the filename given to execve;
				 DLOPEN/DLCLOSE: as in struct tnfctl_event_info; ""
				 otherwise; never NULL; owned by the handle, valid
				 until its next tnfctl_continue() or tnfctl_close() */
	size_t path_len;      /* strlen(@path), bytes */
};
#define TNFCTL_EVENT_DATA_SZ_MIN (offsetof(struct tnfctl_event_data, path_len) + sizeof(size_t))

/*
 * tnfctl_event_data_get - details of the last event tnfctl_continue()
 * returned on @hndl, with its path whole (Linux extension, version node
 * TNFCTL_LINUX_0.2; what
 * tnfctl_event_info_get() gives, in a struct that can grow, rules above).
 * @hndl: a direct handle; @ev: caller-owned, @ev->sz set.
 * Errors: TNFCTL_ERR_BADARG for NULL arguments, an @ev->sz out of range,
 * or before any event.
 */
tnfctl_errcode_t tnfctl_event_data_get(tnfctl_handle_t *hndl, struct tnfctl_event_data *ev);

/*
 * tnfctl_events_lost - kernel event records that could not be reserved in
 * the ring buffer (Linux extension), as last reported by the engine.
 * A lost record never becomes a hang or a wrong event: the event is
 * reported from ptrace state where possible, and counted here.
 * The count is cumulative over the life of the calling process.
 */
uint64_t tnfctl_events_lost(void);

/*
 * Process control without the probe runtime, and the terminal (Linux
 * extensions).  Flags of tnfctl_exec_open_flags() and tnfctl_pid_open_flags();
 * with @flags 0 they behave exactly as tnfctl_exec_open()/tnfctl_pid_open().
 * Child handles from tnfctl_continue() (FORK) inherit their parent's flags.
 *
 *  TNFCTL_OPEN_NOPROBES    control a process without libtnfprobe.so.1:
 *                          nothing is added to LD_PRELOAD (the environment is
 *                          the caller's, or @envp, unchanged; with @envp NULL
 *                          and @ld_preload set, LD_PRELOAD is
 *                          "[old:]ld_preload"; @libtnfprobe_path is ignored),
 *                          static executables and processes without the
 *                          runtime are accepted (no NOTDYNAMIC, no
 *                          NOLIBTNFPROBE); events (FORK, EXEC, EXIT,
 *                          TARGGONE, DLOPEN, DLCLOSE, EINTR) and child handles
 *                          as usual.  Nothing waits for rtld: exec_open_flags
 *                          returns with the target stopped at the first
 *                          instruction of the new image (for a dynamic one,
 *                          ld.so's entry: no library but ld.so mapped yet, so
 *                          a missing library is the target's EXIT with status
 *                          127, the loader's message on its stderr), and
 *                          pid_open_flags where it stopped the process (not
 *                          run to its sync point after an exec).  rtld's
 *                          start-up is not a DLOPEN.  A static program has no
 *                          DLOPEN/DLCLOSE.  Its probes are its USDT probes
 *                          only (they need nothing in the target; a TNF
 *                          probe is listed as the USDT probe it also is),
 *                          listed at the first probe call and at each
 *                          DLOPEN: probe_apply[_ids], probe_state_get,
 *                          enable/disable/trace/untrace and check_libs work
 *                          on them as on any handle's USDT probes
 *                          (tnfctl_probe_state_get(3)); probe_connect is
 *                          BADARG per probe, disconnect_all does nothing.
 *                          A static program's are its executable's.
 *                          A dynamic one stopped before ld.so ran
 *                          (exec_open_flags' return, the EXEC stop) has
 *                          no link map yet: those calls return
 *                          TNFCTL_ERR_NOLIBTNFPROBE.  Once one was called,
 *                          or with a create callback registered, the next
 *                          tnfctl_continue() stops it (no event) where
 *                          rtld has mapped its start-up objects, before
 *                          their code runs, lists their probes and runs
 *                          the create callback on each.  An EXEC drops the
 *                          old image's probes (INVALIDPROBE, uprobes gone).
 *                          buffer_alloc is always NOLIBTNFPROBE;
 *                          trace_attrs_get gives targ_pid, TNFCTL_BUF_NONE,
 *                          no file, tracing off; register_funcs' create
 *                          callback runs for its USDT probes.
 *                          After an EXEC the handle stays valid: the process
 *                          is stopped before the new image runs, and the
 *                          next tnfctl_continue() runs the new image (its
 *                          DLOPEN/DLCLOSE come as usual), with no close and
 *                          re-open.  That re-open (close SUSPEND, then
 *                          pid_open_flags with the same flags) still works,
 *                          but SUSPEND is a real group-stop that the process's
 *                          parent sees (waitpid WUNTRACED; a shell reports
 *                          its job Stopped).
 *  TNFCTL_OPEN_FOREGROUND  exec_open only (pid_open_flags: BADARG): the child
 *                          stays in the caller's process group (the caller's
 *                          job), so it reads the terminal as the caller would,
 *                          and the terminal's signals (Ctrl-C, Ctrl-\, Ctrl-Z)
 *                          reach it as they reach the caller; signals are
 *                          delivered as usual (a group-stop is kept with
 *                          PTRACE_LISTEN until SIGCONT).  Without it (and with
 *                          tnfctl_exec_open) the child has a group of its own,
 *                          and a SIGINT the terminal sends it (only possible
 *                          once the controller gave it the terminal with
 *                          tcsetpgrp, as prex does while it runs) is taken as
 *                          the controller's ^C: not delivered, and
 *                          tnfctl_continue returns EINTR with it stopped.
 *                          One ^C reaches every process of the group: the
 *                          SIGINT still queued in one (stopped first, or
 *                          blocking SIGINT) when its tnfctl_continue returned
 *                          EINTR is that ^C, dropped when it comes out, not
 *                          another EINTR.
 *  TNFCTL_OPEN_EXEC_FAILED also return TNFCTL_EVENT_EXEC_FAILED for an execve
 *                          that failed (the target is stopped at the return of
 *                          the call; tnfctl_event_exec_get() gives the errno).
 *                          Caught by fexit programs on the execve and
 *                          execveat syscalls (only execs pay), or where the
 *                          kernel allows no BPF trampoline, at the raw
 *                          sys_exit tracepoint: every syscall of the machine
 *                          then runs one BPF program at its return.  Attached
 *                          at the first such open; a kernel with neither
 *                          reports none.
 *                          Without it a failed execve is not an event, as on
 *                          Solaris.
 */
#define TNFCTL_OPEN_NOPROBES	0x1u
#define TNFCTL_OPEN_FOREGROUND	0x2u
#define TNFCTL_OPEN_EXEC_FAILED 0x4u

/* tnfctl_continue() with TNFCTL_OPEN_EXEC_FAILED: an execve failed. */
#define TNFCTL_EVENT_EXEC_FAILED ((tnfctl_event_t)(TNFCTL_EVENT_EXIT + 1))

/*
 * tnfctl_exec_open_flags - tnfctl_exec_open() with @flags (TNFCTL_OPEN_*
 * above; any other bit: BADARG).  Arguments, ownership and errors as for
 * tnfctl_exec_open(), plus: without NOPROBES a static program is
 * NOTDYNAMIC as there.  On FILENOTFOUND or ACCES errno says why: ENOENT,
 * EACCES or ENOEXEC (execve's own errno when the program got that far),
 * ELIBACC when the loader ended it before the sync point (without
 * NOPROBES: a missing library; the loader said which on the child's
 * stderr), EPERM when the caller lacks the privilege BPF and ptrace need
 * (root, or the capabilities at the top of this file).  tnfctl_exec_open()
 * sets errno the same way.
 *
 * tnfctl_pid_open_flags - tnfctl_pid_open() with @flags (only
 * TNFCTL_OPEN_NOPROBES; other bits: BADARG).  Errors as for
 * tnfctl_pid_open() (with NOPROBES never NOTDYNAMIC nor NOLIBTNFPROBE);
 * errno EPERM with ACCES when BPF is not permitted.  A NOPROBES handle
 * goes on after an EXEC (see TNFCTL_OPEN_NOPROBES); a re-open after a
 * SUSPEND close needs the same flags again: the mode is not remembered
 * across the close.
 */
tnfctl_errcode_t tnfctl_exec_open_flags(const char *pgmname, char *const *argv,
					char *const *envp, const char *ld_preload,
					const char *libtnfprobe_path, unsigned int flags,
					tnfctl_handle_t **retval);
tnfctl_errcode_t tnfctl_pid_open_flags(pid_t pid, unsigned int flags, tnfctl_handle_t **retval);

/* Options of tnfctl_exec_open_opts() and tnfctl_pid_open_opts(). */
struct tnfctl_open_opts {
	size_t sz;		      /* sizeof(struct tnfctl_open_opts): TNFCTL_OPTS sets it */
	unsigned int flags;	      /* TNFCTL_OPEN_* (pid_open: NOPROBES only); default 0 */
	const char *ld_preload;	      /* exec only: as tnfctl_exec_open()'s; default NULL */
	const char *libtnfprobe_path; /* exec only: as tnfctl_exec_open()'s; default NULL */
};

/*
 * tnfctl_exec_open_opts - tnfctl_exec_open() with options (Linux
 * extension; the way to start a program with options, which later releases
 * extend in @opts, never with a new function).  @pgmname, @argv, @envp,
 * @retval: as for tnfctl_exec_open(); @opts: NULL or the options above (the
 * caller's, read during the call only).  Errors and errno: as for
 * tnfctl_exec_open_flags() (which is this function with @flags), plus
 * BADARG for @opts as the options rules above say (then nothing is
 * started).
 *
 * tnfctl_pid_open_opts - tnfctl_pid_open() with options: @opts->flags as
 * tnfctl_pid_open_flags()'s (the exec-only fields must be NULL: BADARG
 * otherwise).  Errors: as for tnfctl_pid_open_flags(), plus BADARG for
 * @opts.
 */
tnfctl_errcode_t tnfctl_exec_open_opts(const char *pgmname, char *const *argv, char *const *envp,
				       const struct tnfctl_open_opts *opts,
				       tnfctl_handle_t **retval);
tnfctl_errcode_t tnfctl_pid_open_opts(pid_t pid, const struct tnfctl_open_opts *opts,
				      tnfctl_handle_t **retval);

/*
 * Exec details (Linux extension): the arguments and working directory of an
 * EXEC or EXEC_FAILED event.  The caller sets @sz to
 * sizeof(struct tnfctl_exec_info); the library fills only the fields that fit
 * in @sz, so a program built against an older header keeps working when the
 * struct grows (fields are only ever added at the end).
 *
 * At most TNFCTL_EXEC_ARGV_MAX bytes of argument strings (NULs included) are
 * captured (the watch: at most an eighth of its ring buffer, if smaller);
 * beyond that @argv ends with the argument that reached the bound, cut there,
 * TNFCTL_EXEC_ARGV_TRUNCATED is set and @argv_bytes still gives the full
 * size.  Nothing is ever cut silently.  EXEC: the arguments of the new image
 * (its stack's argument area, as /proc/PID/cmdline shows it before it runs).
 * EXEC_FAILED: those the caller passed, read from its memory at the failed
 * call (best effort: unreadable ones set TRUNCATED; the watch walks at most
 * 1024 pointers), @argv_bytes then counts the bytes read.
 *
 * An interpreted file (a #! script; a binfmt_misc format) runs with a
 * vector the kernel rewrote: the interpreter, its #! argument, the filename,
 * then execve's argv[1...] (execve's argv[0] is dropped).  @argv is
 * execve's vector again, with the filename as argv[0] (the argv[0] the
 * caller passed is not kept by the kernel, and usually is the filename),
 * TNFCTL_EXEC_INTERP is set and @interp_argv holds the interpreter and its
 * arguments: `./configure --prefix=/usr` run by /bin/sh gives @argv
 * {"./configure", "--prefix=/usr"} and @interp_argv {"/bin/sh"}, as strace
 * reports the execve.  Both modes.
 */
#define TNFCTL_EXEC_ARGV_MAX	   65536u /* bytes of argument strings captured */
#define TNFCTL_EXEC_ARGV_TRUNCATED 0x1u	  /* not every argument byte was captured */
#define TNFCTL_EXEC_CWD_TRUNCATED  0x2u	  /* @cwd is cut short (the watch: 64 components, 4 KiB) */
#define TNFCTL_EXEC_INTERP	   0x4u	  /* EXEC: run by an interpreter: @interp_argv (0.2) */

struct tnfctl_exec_info {
	size_t sz;	     /* sizeof(struct tnfctl_exec_info), set by the caller */
	int argc;	     /* arguments captured in @argv */
	char *const *argv;   /* @argc strings then NULL; owned by the handle or
				watch, valid until its next event or close */
	const char *path;    /* filename given to execve, as the kernel saw it (same
				owner; whole, as an event's path) */
	const char *cwd;     /* working directory at the execve (absolute), "" if unknown */
	int error;	     /* EXEC_FAILED: the errno execve returned; else 0 */
	unsigned int flags;  /* TNFCTL_EXEC_* */
	size_t argv_bytes;   /* bytes of argument strings in the new image (NULs
				included), even when not all were captured; of
				@argv alone for an interpreted file */
	/* since 0.2: */
	int interp_argc;	    /* EXEC of an interpreted file: the strings of
				       @interp_argv; else 0 */
	char *const *interp_argv; /* the interpreter and its arguments, as the kernel
				     ran it (a #! line's, binfmt_misc's; nested #!
				     lines: the outermost interpreter first), then
				     NULL; never NULL itself; same owner as @argv */
};

/*
 * tnfctl_event_exec_get - argv, cwd and errno of the last event
 * tnfctl_continue() returned on @hndl, if it was EXEC or EXEC_FAILED (Linux
 * extension).  @info: caller-owned, @info->sz set (struct above); its
 * pointers are owned by @hndl, valid until the next tnfctl_continue() or
 * tnfctl_close() on it.  Read from the stopped target's /proc files, so exact.
 * Errors: BADARG (NULL, @info->sz smaller than up to @argv, the last event
 * was not an exec, or there was no memory to keep its details).
 */
tnfctl_errcode_t tnfctl_event_exec_get(tnfctl_handle_t *hndl, struct tnfctl_exec_info *info);

/*
 * ---------------------------------------------------------------------
 * Passive tree watching (Linux extension, not in Solaris).
 *
 * A watch observes every fork, exec, exit, dlopen and dlclose of a whole
 * process tree and never stops anything: no ptrace, no signal, no handle.
 * The tree is the root and all its descendants: those alive at open (found
 * in /proc) and every process any of them creates later (added by the
 * kernel at fork, before the child runs).  A watch never reports a process
 * outside its tree, and never one the caller could not ptrace: the root
 * must pass the kernel's ptrace access check for the caller, and without
 * CAP_SYS_PTRACE a process stops being watched when it execs a setuid or
 * setgid image.  A process whose parent exited before the open was
 * reparented and is not part of the tree.
 *
 * A watch is served by the engine (tnfctl-engine(8)), as the handles are:
 * the engine keeps one BPF object for all its watches, loaded at its first
 * watch and attached while any is open, and gives each watch a slot in it
 * and a ring buffer of its own, whose descriptor the caller holds and reads
 * directly (no record passes through the engine, and no watch can read
 * another's).  A process in several watched trees (nested or overlapping
 * watches) is reported to each of them.  An open with an engine already
 * running loads nothing: no BTF is read and no verifier runs.  An engine
 * serves at most 64 watches at once (TNFCTL_ERR_ALLOCFAIL past that).  It
 * needs what the BPF side of every open needs (root, or CAP_BPF +
 * CAP_PERFMON + CAP_SYS_PTRACE) and BPF task iterators (5.8) besides
 * (without them the open fails with TNFCTL_ERR_KERNEL; tested on 5.10, 6.1,
 * 6.12 and 6.18; before 5.17 a second BPF object, README "Requirements").
 * A watch holds four descriptors of its own (the ring buffer, libbpf's
 * epoll set for it, an epoll set and a timer) beside the engine
 * connection every handle and watch of the process shares.  Watches are
 * independent of each other and of the handles of the stopping API; one
 * thread at a time per watch.  If the engine is killed, tnfctl_watch_next()
 * returns -TNFCTL_ERR_INTERNAL with errno ECONNRESET once the records
 * written before are delivered.  Every descriptor it opens is close-on-exec.
 *
 * Delivery is batched: the kernel wakes the consumer only when a quarter of
 * the ring buffer is unread or when a record follows a quiet period, and
 * the consumer's own timer collects what was written in between.  While a
 * caller waits in tnfctl_watch_next() (or polls tnfctl_watch_fd()), every
 * event is delivered at most TNFCTL_WATCH_DELAY_MS (10 ms by default;
 * environment TNFCTL_WATCH_DELAY_MS=1..1000 at open) after it happened,
 * plus scheduling latency.
 *
 * Environment, read at open:
 *   TNFCTL_WATCH_RINGBUF  ring buffer size in bytes (rounded up to a power
 *                         of two, 4096 to 1 GiB; default 1 MiB: about 18000
 *                         FORK or EXIT records of 56 bytes; an EXEC takes 56
 *                         plus its path, cwd and arguments: ~100 bytes for
 *                         /bin/true, 1-3 KiB for a build's cc1, so 10000
 *                         short EXECs or 500 of 2 KiB)
 *   TNFCTL_WATCH_DELAY_MS the delivery bound above
 *   TNFCTL_NO_UPROBE_MULTI  non-empty: probe dlopen/dlclose with one perf
 *                         uprobe link each even where the kernel has
 *                         uprobe_multi links (6.6+); read once per process.
 *                         Each perf link's release waits for its own RCU
 *                         grace period (~0.1 s), one after the other.
 *   TNFCTL_WATCH_COMPAT   non-empty: the engine loads the watch's object
 *                         for kernels without bpf_loop, atomic fetch or
 *                         attach cookies (5.10) even where they are (to
 *                         test it); read once per process.
 * ---------------------------------------------------------------------
 */
#define TNFCTL_WATCH_DELAY_MS 10

/*
 * Flags of tnfctl_watch_open() and tnfctl_watch_exec().  TNFCTL_WATCH_DL
 * probes dlopen/dlmopen/dlclose in each libc the tree maps, and rtld's
 * _dl_debug_state in each ld.so (which tells whether a call changed the link
 * map), seen at open and at each EXEC (a process with a libc not seen before
 * may dlopen unseen until then);
 * the engine attaches those probes once per file for all its watches and
 * keeps them until it ends, so only the first watch of an engine pays for
 * the attach (tenths of a second where many processes map that libc).
 */
#define TNFCTL_WATCH_DL 0x1u /* also report dlopen() and dlclose() (link-map changes) */
/*
 * tnfctl_watch_exec() only: the command stays in the caller's process group
 * (its job) instead of a group of its own, as TNFCTL_OPEN_FOREGROUND does
 * for tnfctl_exec_open_flags().
 */
#define TNFCTL_WATCH_FOREGROUND 0x2u

typedef struct tnfctl_watch tnfctl_watch_t;

typedef enum {
	TNFCTL_WATCH_FORK = 1, /* @pid created process @child_pid (fork, vfork, clone) */
	TNFCTL_WATCH_EXEC,     /* @pid exec'd @path (argv[0] @argv0), from thread @tid;
				  every argument and the cwd: tnfctl_watch_event_exec() */
	TNFCTL_WATCH_EXIT,     /* @pid ended: @exit_status, or @term_signal */
	TNFCTL_WATCH_DLOPEN,   /* a dlopen(@path) of @pid added objects (the rule of
				  tnfctl_continue's DLOPEN/DLCLOSE) */
	TNFCTL_WATCH_DLCLOSE,  /* a dlclose() in @pid removed the object @path */
	TNFCTL_WATCH_LOST,     /* records were lost: @lost, @untracked */
	TNFCTL_WATCH_END,      /* every process of the tree has ended; nothing follows */
	TNFCTL_WATCH_EXEC_FAILED /* an execve(@path) of @pid failed: tnfctl_watch_event_exec() */
} tnfctl_watch_kind_t;

/*
 * A watch's event as first released, frozen (programs built against it keep
 * working): tnfctl_watch_next() fills it.  New code uses struct
 * tnfctl_watch_data and tnfctl_watch_read(), which can grow, and give
 * argv0 whole.
 */
typedef struct tnfctl_watch_event {
	tnfctl_watch_kind_t kind;
	pid_t pid;	    /* process (tgid) */
	pid_t tid;	    /* thread (EXEC: the thread that called execve; EXIT: the last) */
	pid_t ppid;	    /* @pid's parent at the time of the event */
	uint64_t seq;	    /* kernel sequence number; a hole is a lost record */
	uint64_t time_ns;   /* CLOCK_MONOTONIC when it happened, ns (LOST, END: when seen) */
	pid_t child_pid;    /* FORK: the new process, already watched */
	int exit_status;    /* EXIT: the status passed to exit (0-255), -1 if signalled */
	int term_signal;    /* EXIT: the signal that ended it, else 0 */
	int core_dumped;    /* EXIT: 1 if it dumped core */
	uint64_t lost;	    /* LOST: records the ring buffer had no room for, since the last LOST */
	uint64_t untracked; /* LOST: children not watched (tracked map full), since the last */
	char path[4096]; /* EXEC, EXEC_FAILED: filename given to execve; DLOPEN: the name given to
			    dlopen; DLCLOSE: the object's link-map name; "" otherwise; whole
			    (as in struct tnfctl_watch_data) */
	char argv0[256]; /* EXEC, EXEC_FAILED: argv[0], cut at 255 bytes (whole in
			    struct tnfctl_watch_data) */
} tnfctl_watch_event_t;

/* A watch's event, growable (the rules of struct tnfctl_event_data). */
struct tnfctl_watch_data {
	size_t sz;		  /* sizeof(struct tnfctl_watch_data), set by the caller */
	tnfctl_watch_kind_t kind; /* the fields up to @untracked: as in tnfctl_watch_event_t */
	pid_t pid;
	pid_t tid;
	pid_t ppid;
	uint64_t seq;
	uint64_t time_ns;
	pid_t child_pid;
	int exit_status;
	int term_signal;
	int core_dumped;
	uint64_t lost;
	uint64_t untracked;
	unsigned int flags; /* TNFCTL_PATH_TRUNCATED */
	const char *argv0;  /* EXEC, EXEC_FAILED: argv[0] as captured (see struct
			       tnfctl_exec_info), else ""; never NULL */
	const char *path;   /* as tnfctl_watch_event_t's, whole; never NULL; the
			       strings are owned by the watch, valid until its next
			       tnfctl_watch_read() or tnfctl_watch_next(), or its close */
	size_t path_len;    /* strlen(@path), bytes */
};
#define TNFCTL_WATCH_DATA_SZ_MIN (offsetof(struct tnfctl_watch_data, path_len) + sizeof(size_t))

/*
 * tnfctl_watch_open - watch @root and all its descendants, without stopping.
 * @root: a process the caller may ptrace (the caller itself included).
 * @flags: 0 or TNFCTL_WATCH_DL.
 * @w: receives the watch (caller-owned; free with tnfctl_watch_close).
 * Events happen from the return on (nothing from before the open).
 * Errors: BADARG (NULL @w, unknown flags), NOPROCESS (@root <= 0 or no such
 * process), ACCES (no right to trace @root, or no BPF), KERNEL (the kernel
 * lacks a BPF feature, see above), ALLOCFAIL, INTERNAL.
 */
tnfctl_errcode_t tnfctl_watch_open(pid_t root, unsigned int flags, tnfctl_watch_t **w);

/*
 * tnfctl_watch_exec - start a command and watch it from its exec on.
 * @pgm: looked up on $PATH when it holds no '/'; @argv: its arguments
 * (NULL-terminated, argv[0] included); @envp: its environment, or NULL for
 * the caller's.  @flags, @w: as for tnfctl_watch_open.  @pid: receives the
 * command's pid.  The command is forked in its own process group (in the
 * caller's with TNFCTL_WATCH_FOREGROUND, a Linux extension), held
 * before execve until the watch is in place, then released, so the first
 * event is its EXEC.  It is the caller's child: the caller reaps it
 * (waitpid) and may signal it; the watch never does.  If execve fails the
 * child exits with status 127 (an EXIT with no EXEC).
 * Errors: BADARG, FILENOTFOUND (not found), ACCES (not executable, or no
 * BPF), KERNEL (as for tnfctl_watch_open), ALLOCFAIL, INTERNAL.  On error
 * no process is left.
 */
tnfctl_errcode_t tnfctl_watch_exec(const char *pgm, char *const argv[], char *const envp[],
				   unsigned int flags, tnfctl_watch_t **w, pid_t *pid);

/*
 * tnfctl_watch_next - the next event, in the order the kernel wrote them.
 * @ev: filled when 1 is returned (caller-owned).  @timeout_ms: how long to
 * wait; 0 does not wait, -1 (any negative value) waits for ever.
 * Returns 1 with an event, 0 if none came within @timeout_ms or a signal
 * interrupted the wait, or a negative tnfctl_errcode_t (-TNFCTL_ERR_BADARG,
 * -TNFCTL_ERR_INTERNAL).  Records lost are reported in the stream by a LOST
 * event after the records delivered with them (the holes in @seq show where).
 * Once the last process of the tree has ended and every record is
 * delivered, END is returned, and returned again by every later call.
 */
int tnfctl_watch_next(tnfctl_watch_t *w, tnfctl_watch_event_t *ev, int timeout_ms);

/*
 * tnfctl_watch_read - tnfctl_watch_next() into the growable struct
 * tnfctl_watch_data (Linux extension, version node TNFCTL_LINUX_0.2; rules
 * above it): the same events,
 * returns and errors, plus -TNFCTL_ERR_BADARG for an @ev->sz out of range
 * (then no event is consumed).  @ev: caller-owned, @ev->sz set; its
 * strings are the watch's (see the struct).
 */
int tnfctl_watch_read(tnfctl_watch_t *w, struct tnfctl_watch_data *ev, int timeout_ms);

/*
 * tnfctl_watch_fd - a descriptor that polls readable (POLLIN) when
 * tnfctl_watch_next() has something to return, for poll/epoll.  Call
 * tnfctl_watch_next(w, ev, 0) until it returns 0, then poll again; the
 * delivery bound holds this way too.  Owned by the watch (do not close).
 */
int tnfctl_watch_fd(tnfctl_watch_t *w);

/*
 * tnfctl_watch_lost - records lost so far on @w: the ring buffer's reserve
 * failures plus children that could not be watched (tracked map full), as
 * last read (LOST events carry the same counts as they arise).
 */
uint64_t tnfctl_watch_lost(tnfctl_watch_t *w);

/*
 * tnfctl_watch_close - end the watch and free @w (NULL is accepted).
 * Kills, stops and reaps nothing: the tree runs on unwatched.  The engine
 * frees the watch's slot (its processes leave the engine's maps; its ring
 * buffer goes with the caller's descriptor); the probes stay with the
 * engine for its other watches, so nothing waits for a grace period.
 */
void tnfctl_watch_close(tnfctl_watch_t *w);

/*
 * tnfctl_watch_event_exec - argv, cwd and errno of the EXEC or EXEC_FAILED
 * event tnfctl_watch_next() returned last on @w (struct above; pointers owned
 * by @w, valid until the next tnfctl_watch_next() or close).  Captured in the
 * kernel at the exec (argv from the new image's stack; the cwd from its
 * dentries, relative to the process's root).  EXEC_FAILED needs fexit
 * programs on the execve syscalls (x86_64); without them no EXEC_FAILED
 * event is reported.
 * Errors: BADARG (NULL, @info->sz too small, last event not an exec).
 */
tnfctl_errcode_t tnfctl_watch_event_exec(tnfctl_watch_t *w, struct tnfctl_exec_info *info);

/* Options of tnfctl_watch_open_opts() and tnfctl_watch_exec_opts(). */
struct tnfctl_watch_opts {
	size_t sz;	       /* sizeof(struct tnfctl_watch_opts): TNFCTL_OPTS sets it */
	unsigned int flags;    /* TNFCTL_WATCH_DL, TNFCTL_WATCH_FOREGROUND (exec only) */
	unsigned int delay_ms; /* delivery bound, 1-1000 ms; 0: $TNFCTL_WATCH_DELAY_MS,
				  else TNFCTL_WATCH_DELAY_MS */
	size_t ring_size;      /* ring buffer, bytes (4096 to 1 GiB, rounded up to a power
				  of two); 0: $TNFCTL_WATCH_RINGBUF, else 1 MiB */
};

/*
 * tnfctl_watch_open_opts, tnfctl_watch_exec_opts - tnfctl_watch_open() and
 * tnfctl_watch_exec() with options (Linux extension; later options come in
 * @opts, never as new functions).  @opts: NULL (every default) or the
 * options above, the caller's, read during the call only; a @delay_ms or
 * @ring_size out of its range is BADARG (the environment's values are
 * clamped, as before).  Other arguments, ownership and errors as for
 * tnfctl_watch_open() and tnfctl_watch_exec(), plus BADARG for @opts as
 * the options rules say (then nothing is started or watched).
 */
tnfctl_errcode_t tnfctl_watch_open_opts(pid_t root, const struct tnfctl_watch_opts *opts,
					tnfctl_watch_t **w);
tnfctl_errcode_t tnfctl_watch_exec_opts(const char *pgm, char *const argv[], char *const envp[],
					const struct tnfctl_watch_opts *opts, tnfctl_watch_t **w,
					pid_t *pid);

#ifdef __cplusplus
}
#endif

#endif /* _TNF_TNFCTL_H */
