// SPDX-License-Identifier: BSD-2-Clause
/*
 * The controller's USDT session: the BPF object of bpf/usdt.bpf.c, the
 * consumer thread that turns its ring buffer into a TNF file with kernel
 * mode's writer (ktrace_file.c), and a link per enabled and traced probe.
 * The writer's state is per process, so there is one session (one file)
 * per controller process, shared by its handles, and none while a kernel
 * handle has a buffer (BUSY).  The links are libbpf's attach_usdt: perf
 * uprobes with the kernel's semaphore reference count, so a controller
 * killed at any moment leaves no uprobe and no semaphore raised behind:
 * the kernel drops both with the link's last descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "kfeatures.h"
#include "tnf_drops.h"
#include "usdt.h"
#include "usdt_events.h"
#include "usdt.skel.h"

#define US_POLL_MS   50		/* longest a record waits in the ring buffer */
#define US_FILE_SIZE (4u << 20) /* unless the target's own trace file is larger */
#define US_INST_MAX  256	/* BPF objects of a session (us_inst) */

/*
 * One BPF object of the session.  Without BPF cookies (before 5.15)
 * libbpf tells a hit's USDT spec by its absolute address, one spec per
 * address in an object: a forked child's probe is at its parent's address
 * (EEXIST), so it is attached through another object.  The first owns the
 * ring buffer, the scratch and the lost counter; the others share them.
 * An object also takes no more links than its spec map holds: a link
 * needs a spec per site, and libbpf before 1.3 frees its list of free
 * spec ids on an attach that fails before it took one (E2BIG, the map
 * full: prex -f on 300 processes died of a double free in libbpf).
 */
struct us_inst {
	struct usdt_bpf *skel;
	uint32_t prog_id; /* usdt_hit's, to claim its links' descriptors (usdt_fds.c) */
	unsigned specs;	  /* spec ids its links may hold: a link's sites at most */
};

struct us_session {
	struct us_inst *inst;
	unsigned ninst;
	struct ring_buffer *rb;
	pthread_mutex_t lock; /* slots and the file: consumer vs the API */
	pthread_t thread;
	int stop_fd;
	struct kt_probe **slots; /* by slot - 1; NULL once the probe is gone */
	uint32_t nslots, cap;
	uint64_t lost_written;
	char *file;
	dev_t dev; /* the file's, to know it again (kept) */
	ino_t ino;
	pid_t hold_pid; /* a target that exec'd: kept for its next image (tnf_usdt_put) */
	uint64_t gen;	/* never the same in a process and its forked children */
};

/* Lock order: us_lock, then the session's lock; the fds lock is taken last. */
static pthread_mutex_t us_lock = PTHREAD_MUTEX_INITIALIZER;
static struct us_session *us;
static uint64_t us_gen;

/*
 * The file of the session that ended last stays the writer's (ktf_pause):
 * the next session of this process, if its path names that same file,
 * writes on into it, so the records of the handles before it are kept (a
 * new file replaced them: prex -f lost every process's records but the
 * last ones').  A kernel buffer takes the writer back (tnf_usdt_let_go).
 */
static struct {
	char *path;
	struct stat st; /* as the session left it: another write or a truncate changes it */
	pid_t pid;
} kept;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/*
 * A forked controller's child lets go of the session at once (its uprobes,
 * programs and maps; see usdt_fds.c) rather than keep the parent's uprobes
 * and semaphores raised until it exits.  The session stays the parent's:
 * the child's handles fail (client.c) and their links' destroy closes
 * only the child's covering copies.  Only the fds lock is taken at a
 * fork: us_lock may be held across a call that forks (a follower).
 */
static void fork_prepare(void)
{
	tnf_usdt_fds_lock();
}

static void fork_parent(void)
{
	tnf_usdt_fds_unlock();
}

static void fork_child(void)
{
	tnf_usdt_fds_child();
	us = NULL;
	pthread_mutex_init(&us_lock, NULL);
}

static void fork_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct us_session *s = ctx;
	const struct kt_hdr *h = data;
	const uint8_t *fixed = (const uint8_t *)(h + 1);

	if (len < sizeof(*h) + US_FIXED || h->fixed_size != US_FIXED || !h->probe ||
	    h->probe > s->nslots || !s->slots[h->probe - 1])
		return 0;
	ktf_event(s->slots[h->probe - 1], h, fixed, (const char *)fixed + US_FIXED,
		  len - sizeof(*h) - US_FIXED);
	return 0;
}

static uint64_t lost_total(struct us_session *s)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint64_t *v, sum = 0;
	uint32_t zero = 0;

	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(s->inst[0].skel->maps.us_lost), &zero, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

/* Caller holds s->lock. */
static void consume_locked(struct us_session *s)
{
	uint64_t lost;

	ring_buffer__consume(s->rb);
	lost = lost_total(s);
	if (lost > s->lost_written) {
		ktf_lost(lost - s->lost_written, TNF_DROP_KERNEL_RB);
		s->lost_written = lost;
	}
}

static void *consumer(void *arg)
{
	struct us_session *s = arg;
	struct pollfd pf[2] = {{.fd = ring_buffer__epoll_fd(s->rb), .events = POLLIN},
			       {.fd = s->stop_fd, .events = POLLIN}};

	for (;;) {
		poll(pf, 2, US_POLL_MS);
		pthread_mutex_lock(&s->lock);
		consume_locked(s);
		pthread_mutex_unlock(&s->lock);
		if (pf[1].revents)
			return NULL;
	}
}

/* Everything the kernel wrote so far is in the file when this returns. */
static void drain(struct us_session *s)
{
	kt_quiesce(); /* no program started before this still runs */
	pthread_mutex_lock(&s->lock);
	consume_locked(s);
	pthread_mutex_unlock(&s->lock);
}

/* The object's programs and maps, for a forked child to let go of; caller holds the fds lock. */
static int inst_fds(struct usdt_bpf *skel, bool add)
{
	struct bpf_object *obj = skel->obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	int e = 0;

	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog))
		if (add)
			e |= tnf_usdt_fds_add(bpf_program__fd(prog));
		else
			tnf_usdt_fds_del(bpf_program__fd(prog));
	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map))
		if (add)
			e |= tnf_usdt_fds_add(bpf_map__fd(map));
		else
			tnf_usdt_fds_del(bpf_map__fd(map));
	return e;
}

/* A new object of @s (caller holds the fds lock): 0 or -errno. */
static int inst_new(struct us_session *s)
{
	struct us_inst *v, *first = s->inst;
	struct bpf_prog_info pi;
	uint32_t len = sizeof(pi);
	struct usdt_bpf *sk;
	int e = 0;

	if (s->ninst == US_INST_MAX)
		return -ENOSPC;
	v = realloc(s->inst, (s->ninst + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->inst = first = v;
	sk = usdt_bpf__open();
	if (!sk)
		return -errno;
	if (s->ninst)
		e = bpf_map__reuse_fd(sk->maps.us_rb, bpf_map__fd(first->skel->maps.us_rb)) ?:
		    bpf_map__reuse_fd(sk->maps.us_buf, bpf_map__fd(first->skel->maps.us_buf)) ?:
		    bpf_map__reuse_fd(sk->maps.us_lost, bpf_map__fd(first->skel->maps.us_lost));
	if (!e)
		e = usdt_bpf__load(sk);
	memset(&pi, 0, sizeof(pi));
	if (!e && bpf_obj_get_info_by_fd(bpf_program__fd(sk->progs.usdt_hit), &pi, &len))
		e = -errno;
	if (!e && inst_fds(sk, true))
		e = -ENOMEM;
	if (e) {
		inst_fds(sk, false);
		usdt_bpf__destroy(sk);
		return e;
	}
	s->inst[s->ninst].skel = sk;
	s->inst[s->ninst].specs = 0;
	s->inst[s->ninst++].prog_id = pi.id;
	return 0;
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/*
 * The kept file, if @path names it (however spelt) and it is as the last
 * session left it: a file truncated or rewritten since is another's (the
 * writer's state no longer matches it; a truncated one faulted SIGBUS).
 */
static bool kept_reusable(const char *path)
{
	struct stat st;

	return kept.path && kept.pid == getpid() && !ktf_broken() && !lstat(path, &st) &&
	       st.st_dev == kept.st.st_dev && st.st_ino == kept.st.st_ino &&
	       st.st_size == kept.st.st_size && same_time(st.st_mtim, kept.st.st_mtim) &&
	       same_time(st.st_ctim, kept.st.st_ctim);
}

static void kept_release(void)
{
	if (!kept.path)
		return;
	if (kept.pid == getpid())
		ktf_close();
	else
		ktf_forget(); /* a forked child's copy of its parent's */
	free(kept.path);
	kept.path = NULL;
}

/* @keep: the file stays the writer's (kept) rather than closed. */
static void session_free(struct us_session *s, bool keep)
{
	uint64_t one = 1;
	unsigned i;

	if (s->thread) {
		if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
			(void)0; /* an eventfd write of 1 does not fail */
		pthread_join(s->thread, NULL);
	}
	if (s->rb)
		drain(s);
	ring_buffer__free(s->rb);
	tnf_usdt_fds_lock();
	for (i = 0; i < s->ninst; i++) {
		inst_fds(s->inst[i].skel, false);
		usdt_bpf__destroy(s->inst[i].skel);
	}
	tnf_usdt_fds_unlock();
	free(s->inst);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	if (keep && s->file)
		ktf_pause();
	/* kept only if its path still names it, as it is now (written out) */
	if (keep && s->file && !lstat(s->file, &kept.st) && kept.st.st_dev == s->dev &&
	    kept.st.st_ino == s->ino) {
		kept.path = s->file;
		kept.pid = getpid();
		s->file = NULL;
	} else {
		ktf_close();
	}
	pthread_mutex_destroy(&s->lock);
	free(s->slots);
	free(s->file);
	free(s);
}

/* A kernel buffer wants the writer: the kept file is closed (complete already). */
void tnf_usdt_let_go(void)
{
	pthread_mutex_lock(&us_lock);
	if (!us)
		kept_release();
	pthread_mutex_unlock(&us_lock);
}

/* $TNFCTL_USDT_FILE, else "<the target's trace file>.usdt", else $TMPDIR/trace-<pid>.usdt. */
static tnfctl_errcode_t file_name(struct tnfctl_handle *h, pid_t pid, char *path, size_t len)
{
	const char *tf = h->attrs.trace_file_name ? h->attrs.trace_file_name : h->pr.buf_name;
	const char *tmp = getenv("TMPDIR"), *env = getenv("TNFCTL_USDT_FILE");
	char name[PATH_MAX];
	int n;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (env && *env)
		n = snprintf(name, sizeof(name), "%s", env);
	else if (tf)
		n = snprintf(name, sizeof(name), "%s.usdt", tf);
	else
		n = snprintf(name, sizeof(name), "%s/trace-%d.usdt", tmp, (int)pid);
	if (n >= (int)sizeof(name))
		return TNFCTL_ERR_BADARG;
	return tnf_abs_path(name, path, len);
}

static tnfctl_errcode_t session_new(struct tnfctl_handle *h, pid_t pid)
{
	uint64_t size =
		h->attrs.trace_buf_size > US_FILE_SIZE ? h->attrs.trace_buf_size : US_FILE_SIZE;
	struct us_session *s = calloc(1, sizeof(*s));
	tnfctl_errcode_t err;
	struct tnf_tmpfile tf = {.dirfd = -1, .fd = -1};
	bool reuse = false;
	char path[PATH_MAX];
	struct stat st;
	int fd, e;

	if (!s)
		return TNFCTL_ERR_ALLOCFAIL;
	s->stop_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	err = file_name(h, pid, path, sizeof(path));
	if (err) {
		free(s);
		return err;
	}
	if (kept_reusable(path)) {
		reuse = true;
		s->dev = kept.st.st_dev;
		s->ino = kept.st.st_ino;
		free(kept.path);
		kept.path = NULL;
	} else {
		kept_release();
		fd = tnf_create_tmpfile(path, size, geteuid(), &tf, &err);
		if (fd < 0) {
			free(s);
			return err;
		}
		e = fstat(fd, &st) ? -errno : ktf_open(fd, size);
		close(fd);
		if (e) {
			tnf_tmpfile_discard(&tf);
			free(s);
			return tnf_kernel_err(e);
		}
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	pthread_once(&fork_once, fork_install);
	s->file = strdup(path);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e = !s->file ? -ENOMEM : s->stop_fd < 0 ? -errno : 0;
	tnf_usdt_fds_lock();
	if (!e)
		e = inst_new(s);
	tnf_usdt_fds_unlock();
	if (!e && !(s->rb = ring_buffer__new(bpf_map__fd(s->inst[0].skel->maps.us_rb), on_record, s,
					     NULL)))
		e = -errno;
	if (!e)
		e = -pthread_create(&s->thread, NULL, consumer, s);
	err = e ? tnf_kernel_err(e) : reuse ? TNFCTL_ERR_NONE : tnf_tmpfile_commit(&tf);
	if (err) {
		/* a new file is closed and goes; a kept one stays kept */
		session_free(s, reuse);
		if (!reuse)
			tnf_tmpfile_discard(&tf);
		return err;
	}
	s->gen = ++us_gen;
	us = s;
	return TNFCTL_ERR_NONE;
}

static tnfctl_errcode_t add_slot(struct us_session *s, struct tnf_usdt *u)
{
	struct kt_probe **v;

	if (u->slot && u->gen == s->gen)
		return TNFCTL_ERR_NONE;
	pthread_mutex_lock(&s->lock);
	if (s->nslots == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		v = realloc(s->slots, s->cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&s->lock);
			return TNFCTL_ERR_ALLOCFAIL;
		}
		s->slots = v;
	}
	s->slots[s->nslots++] = &u->kp;
	u->slot = s->nslots;
	u->gen = s->gen;
	pthread_mutex_unlock(&s->lock);
	return TNFCTL_ERR_NONE;
}

/*
 * Caller holds us_lock and the fds lock: @u's link gone, its descriptors
 * no longer registered, its specs free in its object.
 */
static void link_destroy(struct tnf_usdt *u)
{
	unsigned i;
	int go = -1;

	if (us && u->gen == us->gen && u->inst < us->ninst)
		us->inst[u->inst].specs -= u->sites;
	for (i = 0; i < u->nfds; i++)
		tnf_usdt_fds_del(u->fds[i]);
	/*
	 * No hit can come: the last references go off-thread (each perf
	 * link's ~0.1 s, under both locks, made prex -f take 160 ms per
	 * process that exited).
	 */
	if (u->gone)
		go = tnf_links_hand_off(u->fds, u->nfds);
	free(u->fds);
	u->fds = NULL;
	u->nfds = 0;
	bpf_link__destroy(u->link);
	u->link = NULL;
	if (go >= 0)
		close(go);
}

/*
 * Room for @n more descriptors: libbpf before 1.3 also loses its list of
 * free spec ids when an attach fails for want of one (EMFILE opening the
 * ELF file), so the attach is not tried without room for all it opens.
 */
static bool fds_room(int fd, unsigned n)
{
	int got[64];
	unsigned i, k = 0;

	for (i = 0; i < n && i < 64; i++, k++)
		if ((got[i] = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
			break;
	for (i = 0; i < k; i++)
		close(got[i]);
	return k == n || k == 64;
}

/*
 * attach_usdt, through the first object where @u's address is free (us_inst),
 * and the perf events and links it opened registered in @u and usdt_fds.c.
 */
static tnfctl_errcode_t attach_tracked(struct tnf_usdt *u, const struct bpf_usdt_opts *o)
{
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	unsigned i;
	int e;

	tnf_usdt_fds_lock();
	/* its ELF file, /proc/PID/maps, a perf event and a link per site */
	if (!fds_room(us->stop_fd, 2 * u->sites + 2)) {
		tnf_usdt_fds_unlock();
		errno = EMFILE;
		return TNFCTL_ERR_ALLOCFAIL;
	}
	tnf_libbpf_quiet(true); /* a failure is the error code's to say */
	for (i = 0;; i++) {
		if (i == us->ninst && (e = -inst_new(us)))
			break;
		if (us->inst[i].specs && us->inst[i].specs + u->sites > US_SPECS_MAX)
			continue;
		u->link = bpf_program__attach_usdt(us->inst[i].skel->progs.usdt_hit, u->pid,
						   u->path, u->provider, u->name, o);
		e = errno;
		if (u->link || e != EEXIST)
			break;
	}
	tnf_libbpf_quiet(false);
	if (!u->link && (e == ESRCH || (kill(u->pid, 0) && errno == ESRCH)))
		err = TNFCTL_ERR_NOPROCESS; /* the target died while stopped */
	else if (!u->link)
		err = tnf_kernel_err(e ? e : EINVAL);
	if (u->link) {
		u->inst = i;
		us->inst[i].specs += u->sites;
		if (tnf_usdt_fds_claim(us->inst[i].prog_id, &u->fds, &u->nfds))
			err = TNFCTL_ERR_ALLOCFAIL;
	}
	if (err && u->link)
		link_destroy(u);
	tnf_usdt_fds_unlock();
	return err;
}

/*
 * With the caller's signals held: the verifier gives up (EAGAIN) on a
 * pending signal, in the session's load and in libbpf's feature probes at
 * the first attach, so a caller signalled every few ms (prex's ^C kick)
 * never enabled a probe (INTERNAL).
 */
tnfctl_errcode_t tnf_usdt_attach(struct tnfctl_handle *h, struct tnf_usdt *u)
{
	LIBBPF_OPTS(bpf_usdt_opts, o);
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&us_lock);
	if (!us)
		err = session_new(h, u->pid);
	if (!err)
		err = add_slot(us, u);
	if (!err) {
		o.usdt_cookie = US_COOKIE((uint64_t)u->slot, u->strmask);
		err = attach_tracked(u, &o);
	}
	if (!err)
		h->pr.usdt_used = true;
	pthread_mutex_unlock(&us_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* Its uprobes gone; what they wrote is in the file. */
void tnf_usdt_detach(struct tnf_usdt *u)
{
	if (!u->link)
		return;
	pthread_mutex_lock(&us_lock);
	tnf_usdt_fds_lock();
	link_destroy(u);
	tnf_usdt_fds_unlock();
	if (us && u->gen == us->gen)
		drain(us);
	pthread_mutex_unlock(&us_lock);
}

/* The session lets go of @u's type (detached already). */
void tnf_usdt_forget(struct tnf_usdt *u)
{
	pthread_mutex_lock(&us_lock);
	if (us && u->slot && u->gen == us->gen && u->slot <= us->nslots) {
		pthread_mutex_lock(&us->lock);
		us->slots[u->slot - 1] = NULL;
		pthread_mutex_unlock(&us->lock);
	}
	u->slot = 0;
	pthread_mutex_unlock(&us_lock);
}

/*
 * @h is closed: the session ends with the last handle that used it (its
 * probes already forgotten), and its file is then complete.  Except when
 * @h's target exec'd (a follower closes the old image's handle and opens
 * the new one's, as prex -f does): the session is then held for that pid,
 * so that the new image's records go on into the same file rather than a
 * new session's replacing it.  The hold ends when a handle of that pid is
 * closed in turn, or once that process is gone.
 */
void tnf_usdt_put(struct tnfctl_handle *h)
{
	bool used = h->pr.usdt_used;

	h->pr.usdt_used = false;
	if (tnf_client_inherited(h))
		return; /* the parent's session, not this process's */
	pthread_mutex_lock(&us_lock);
	if (us && us->hold_pid && (h->pid == us->hold_pid || kill(us->hold_pid, 0))) {
		us->hold_pid = 0;
		used = true; /* the session may end now */
	}
	if (us && used && h->state == TNF_H_EXECED)
		us->hold_pid = h->pid;
	if (us && used && !us->hold_pid) {
		uint32_t i;
		bool live = false;

		pthread_mutex_lock(&us->lock);
		for (i = 0; i < us->nslots; i++)
			live |= us->slots[i] != NULL;
		pthread_mutex_unlock(&us->lock);
		if (!live) {
			session_free(us, true);
			us = NULL;
		}
	}
	pthread_mutex_unlock(&us_lock);
}

const char *tnf_usdt_file(void)
{
	return us ? us->file : NULL;
}
