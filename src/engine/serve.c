// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine's wire and event loop: its clients' connections (proto.h),
 * their requests handed to the state machine (tracer.c), the replies, and
 * the loop over the BPF ring buffer, waitpid (through a signalfd for
 * SIGCHLD), the listening socket and the connections.  Handles are ids on
 * a connection: the engine holds no descriptor per target or per handle.
 * It ends when its last client has gone and linger_ms passed with none.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <tnf/tnfctl.h>
#include "tracer.h"
#include "watches.h"

/*
 * A client's connection.  Replies the socket cannot take at once wait in
 * @out, in order: a client that does not read (stopped, or busy) never
 * holds up the engine's other clients.  What waits is what that client
 * asked for, one reply per request or per event of a CONTINUE (10,000
 * handles: about 1 MiB); past OUT_MAX it is cut off, as a controller death.
 */
#define OUT_MAX (16u << 20)
struct tnf_outbuf {
	struct tnf_outbuf *next;
	size_t len;
	int fd; /* sent with it (SCM_RIGHTS), or -1 */
	char data[];
};

struct tnf_conn {
	struct tnf_conn *next;
	int fd;
	bool quit; /* QUIT came: a deliberate end, not a controller death */
	struct tnf_outbuf *out, **out_tail;
	size_t out_bytes;
};

static struct tnf_conn *conns;
static int epfd = -1, sigfd = -1, rb_fd = -1, lfd = -1;
static bool abandoning;	   /* asked to go: release everything, then exit */
static bool listen_paused; /* out of descriptors: accept again once one is closed */
static long long linger_ms = 5000, idle_since = -1;
static bool resident;
bool tnf_debug_on;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- replies ------------------------------------------------------------ */

static void watch_fd(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void conn_want_out(struct tnf_conn *c, bool on)
{
	struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.fd = c->fd};

	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void conn_drop_out(struct tnf_conn *c)
{
	struct tnf_outbuf *o;

	while ((o = c->out)) {
		c->out = o->next;
		if (o->fd >= 0)
			close(o->fd);
		free(o);
	}
	c->out_tail = &c->out;
	c->out_bytes = 0;
}

/* What waits goes out while the socket takes it. */
static void conn_flush(struct tnf_conn *c)
{
	struct tnf_outbuf *o;

	while ((o = c->out)) {
		if (tnf_send_flags(c->fd, o->data, o->len, o->fd, MSG_DONTWAIT)) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return;
			conn_drop_out(c); /* gone: its end comes as EPOLLIN/EPOLLHUP */
			break;
		}
		c->out = o->next;
		c->out_bytes -= o->len;
		if (o->fd >= 0)
			close(o->fd);
		free(o);
	}
	c->out_tail = &c->out;
	conn_want_out(c, false);
}

/* @fd: a descriptor that goes with it (the caller keeps its own), or -1. */
static void conn_send(struct tnf_conn *c, const void *buf, size_t len, int fd)
{
	struct tnf_outbuf *o;

	if (!c->out) {
		if (!tnf_send_flags(c->fd, buf, len, fd, MSG_DONTWAIT))
			return;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return; /* gone: its end comes as EPOLLIN/EPOLLHUP */
	}
	o = c->out_bytes + len <= OUT_MAX ? malloc(sizeof(*o) + len) : NULL;
	if (o && fd >= 0 && (o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		free(o);
		o = NULL;
	}
	if (!o) {
		/* The client would wait for ever: cut it off, a controller death. */
		dbg("%s: closing a connection\n", c->out_bytes + len > OUT_MAX
							  ? "a client reads nothing"
							  : "no memory for a reply");
		shutdown(c->fd, SHUT_RDWR);
		return;
	}
	c->out_bytes += len;
	o->next = NULL;
	o->len = len;
	if (fd < 0)
		o->fd = -1;
	memcpy(o->data, buf, len);
	if (!c->out)
		conn_want_out(c, true);
	*c->out_tail = o;
	c->out_tail = &o->next;
}

/* A reply to a handle that is gone (hid 0, or its connection closed) is dropped. */
/* @fd: a descriptor that goes with it (the caller keeps its own), or -1. */
void srv_send_rep_fd(struct tnf_peer to, struct tnf_rep *rep, int fd)
{
	if (!to.hid || !to.conn)
		return;
	rep->hid = to.hid;
	rep->lost = tnf_events_lost();
	conn_send(to.conn, rep, tnf_rep_len(rep), fd);
}

void srv_send_rep(struct tnf_peer to, struct tnf_rep *rep)
{
	srv_send_rep_fd(to, rep, -1);
}

void srv_reply_err(struct tnf_peer to, int err)
{
	struct tnf_rep rep;

	memset(&rep, 0, offsetof(struct tnf_rep, path) + 1);
	rep.kind = TNF_REP_DONE;
	rep.err = err;
	srv_send_rep(to, &rep);
}

/* ---- requests ----------------------------------------------------------- */

/* A request for a handle id the engine has no target for (yet). */
static void on_unbound(struct tnf_peer from, const struct tnf_req *req)
{
	struct tnf_rep rep;

	switch (req->op) {
	case TNF_OP_PID_OPEN:
		op_pid_open(from, req->pid, req->arg != 0, req->flags);
		break;
	case TNF_OP_EXEC_ATTACH:
		op_exec_attach(from, req->pid, req->flags);
		break;
	case TNF_OP_LOST:
		memset(&rep, 0, sizeof(rep));
		rep.kind = TNF_REP_DONE;
		srv_send_rep(from, &rep);
		break;
	case TNF_OP_WATCH_STATS:
		memset(&rep, 0, sizeof(rep));
		rep.kind = TNF_REP_DONE;
		watches_stats(&rep);
		rep.tid = tnf_events_attached(); /* the stopping mode's tracepoints */
		rep.pid = (int32_t)(tnf_events_uprobes() + watch_uprobes());
		srv_send_rep(from, &rep);
		break;
	case TNF_OP_DROP:
	case TNF_OP_STOP:
		break; /* no reply: the target has gone already */
	default:
		srv_reply_err(from, TNFCTL_ERR_BADARG);
		break;
	}
}

static void on_request(struct tnf_conn *c, const struct tnf_req *req)
{
	struct tnf_peer from = {.conn = c, .hid = req->hid};
	struct target *t;

	if (!req->hid)
		return; /* a client bug: no one to answer */
	if (watch_op(from, req))
		return;
	t = tgt_by_peer(from);
	if (!t) {
		on_unbound(from, req);
		return;
	}
	switch (req->op) {
	case TNF_OP_CONTINUE:
		op_continue(t, req->child_hid, req->arg);
		break;
	case TNF_OP_STOP:
		if (t->phase == PH_RUNNING) {
			t->stop_requested = true;
			tgt_evaluate(t);
		}
		break;
	case TNF_OP_CLOSE:
		op_close(t, req->arg);
		break;
	case TNF_OP_DROP:
		tgt_abandon(t);
		break;
	case TNF_OP_SET_FLAGS:
		t->open_flags = req->arg;
		srv_reply_err(from,
			      (req->arg & TNFCTL_OPEN_EXEC_FAILED) && tnf_events_want_exec_failed()
				      ? TNFCTL_ERR_INTERNAL
				      : TNFCTL_ERR_NONE);
		break;
	default:
		srv_reply_err(from, TNFCTL_ERR_BADARG);
		break;
	}
}

/* ---- connections -------------------------------------------------------- */

static struct tnf_conn *conn_of(int fd)
{
	struct tnf_conn *c;

	for (c = conns; c; c = c->next)
		if (c->fd == fd)
			return c;
	return NULL;
}

static struct tnf_conn *conn_add(int fd)
{
	struct tnf_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->out_tail = &c->out;
	c->next = conns;
	conns = c;
	watch_fd(fd);
	idle_since = -1;
	return c;
}

/*
 * The end of a connection: its targets are released as at a controller
 * death (section 3: exec_open'd ones killed, others resumed); what it left
 * suspended is resumed too, unless it ended with QUIT (a deliberate end).
 */
static void conn_close(struct tnf_conn *c)
{
	struct tnf_conn **p;

	for (p = &conns; *p && *p != c; p = &(*p)->next)
		;
	if (*p)
		*p = c->next;
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->quit) {
		tnf_suspended_keep(c);
	} else {
		tnf_suspended_resume_all(c);
	}
	/*
	 * No new BPF stop for its targets from here on; account for those
	 * already sent.  A target still held at a QUIT (a client's bug) is a
	 * controller death all the same.
	 */
	tgt_drain_records();
	tgt_conn_gone(c);
	watches_conn_gone(c);
	conn_drop_out(c);
	free(c);
	if (listen_paused && lfd >= 0) {
		listen_paused = false;
		watch_fd(lfd);
	}
}

/* Asked to go (SIGTERM, SIGINT, SIGHUP): as if every client died. */
static void abandon_all(void)
{
	abandoning = true;
	if (lfd >= 0) {
		close(lfd); /* unbinds the name: the next client starts an engine */
		lfd = -1;
	}
	while (conns)
		conn_close(conns);
	tnf_events_untrack_all();
	tgt_drain_records();
	tgt_for_each(tgt_abandon);
	tnf_suspended_resume_all(NULL);
}

/* Every request waiting on the connection, then its end if it has ended. */
static void on_conn(struct tnf_conn *c, uint32_t events)
{
	struct tnf_req req;
	int fd, batch;
	ssize_t n;

	if (events & EPOLLOUT)
		conn_flush(c);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	/*
	 * A bounded batch: a client that never stops sending must not starve
	 * the others, nor the ring buffer (epoll reports the rest next turn).
	 */
	for (batch = 0; batch < 256; batch++) {
		fd = -1;
		n = tnf_recv_nowait(c->fd, &req, sizeof(req), &fd);
		if (fd >= 0)
			close(fd); /* no request carries a descriptor */
		if (n != (ssize_t)sizeof(req))
			break;
		if (req.op == TNF_OP_QUIT)
			c->quit = true; /* what it suspended stays suspended */
		else
			on_request(c, &req);
	}
	if (batch == 256 || n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)))
		return;
	conn_close(c);
}

/* The start-up answer of a new connection: HELLO, then ready with our pid. */
static void conn_greet(struct tnf_conn *c)
{
	struct tnf_rep rep;

	memset(&rep, 0, offsetof(struct tnf_rep, path) + 1);
	rep.kind = TNF_REP_HELLO;
	rep.exit_status = TNF_PROTO_VERSION;
	conn_send(c, &rep, tnf_rep_len(&rep), -1);
	rep.kind = TNF_REP_DONE;
	rep.exit_status = 0;
	rep.pid = getpid();
	conn_send(c, &rep, tnf_rep_len(&rep), -1);
}

/* New clients on the name: served if they are of our user and privilege set. */
static void on_listen(void)
{
	struct tnf_conn *c;
	pid_t pid;
	int fd, e;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* level-triggered: wait for a connection to close first */
				epoll_ctl(epfd, EPOLL_CTL_DEL, lfd, NULL);
				listen_paused = true;
			}
			return;
		}
		e = tnf_peer_check(fd, &pid);
		if (e) {
			dbg("a client refused (pid %d): %s\n", (int)pid, strerror(-e));
			close(fd);
			continue;
		}
		c = conn_add(fd);
		if (!c) {
			close(fd);
			continue;
		}
		dbg("client %d connected\n", (int)pid);
		conn_greet(c);
	}
}

static int oom_adj(void)
{
	char buf[32] = "";
	int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd);
	return atoi(buf);
}

static int oom_adj_set(int v)
{
	char buf[32];
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC), n, ret;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d", v);
	ret = write(fd, buf, n) == n ? 0 : -1;
	close(fd);
	return ret;
}

/*
 * What the first caller's process passed on that would hold back or kill
 * every other caller (a CPU-time or memory limit, a niceness, an OOM
 * score, preloaded code): undone where we may; where not, the engine
 * stays private to that caller.  (Its cgroups are in its name.)
 */
static bool fit_to_share(void)
{
	static const int res[] = {RLIMIT_CPU, RLIMIT_AS, RLIMIT_DATA, RLIMIT_FSIZE,
				  RLIMIT_SIGPENDING};
	bool ok = true;
	struct rlimit rl;
	size_t i;
	int prio;

	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		if (getrlimit(res[i], &rl))
			continue;
		if (rl.rlim_cur != rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(res[i], &rl);
		}
		if (rl.rlim_max != RLIM_INFINITY && res[i] != RLIMIT_SIGPENDING) {
			dbg("a hard limit (resource %d): private to its first client\n", res[i]);
			ok = false;
		}
	}
	errno = 0;
	prio = getpriority(PRIO_PROCESS, 0);
	if (!errno && prio > 0 && setpriority(PRIO_PROCESS, 0, 0)) {
		dbg("nice %d: private to its first client\n", prio);
		ok = false;
	}
	if (oom_adj() > 0 && oom_adj_set(0)) {
		dbg("oom_score_adj > 0: private to its first client\n");
		ok = false;
	}
	/* the first caller's preloaded code runs in here: not the others' to share */
	if (getenv("LD_PRELOAD")) {
		dbg("LD_PRELOAD: private to its first client\n");
		ok = false;
	}
	return ok;
}

/*
 * The name clients find us by; a name someone else holds (a squatter, or
 * an engine started at the same instant) leaves us private to the client
 * that started us.
 */
static void listen_start(const struct tnf_engine_opts *o)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int len;

	if (o->private_ || !fit_to_share())
		return;
	if (o->name) {
		a.sun_path[0] = '\0';
		len = (int)strlen(o->name) + 1;
		memcpy(a.sun_path + 1, o->name, len - 1);
	} else {
		len = tnf_engine_name(a.sun_path, "/proc/self/exe");
		if (len < 0)
			return;
	}
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0)
		return;
	if (bind(lfd, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + len) ||
	    listen(lfd, SOMAXCONN)) {
		if (o->resident)
			fprintf(stderr, "tnfctl-engine: cannot listen on @%s: %s\n", a.sun_path + 1,
				errno == EADDRINUSE ? "an engine (or another process) holds it"
						    : strerror(errno));
		dbg("%s: %s: private to its first client\n", a.sun_path + 1, strerror(errno));
		close(lfd);
		lfd = -1;
		return;
	}
	dbg("listening on @%s\n", a.sun_path + 1);
	watch_fd(lfd);
}

/*
 * True once the engine should end: asked to, with its targets released;
 * or (not resident) with no client and no target for linger_ms.  The name
 * goes first, so that a client connecting now is refused and starts an
 * engine rather than waiting on one that ends.
 */
static bool time_to_go(int *timeout)
{
	*timeout = -1;
	if (abandoning)
		return !tgt_any();
	if (lfd < 0 && !resident)
		linger_ms = 0; /* nobody could find us: a private engine */
	if (resident || conns || tgt_any()) {
		idle_since = -1;
		return false;
	}
	if (idle_since < 0)
		idle_since = now_ms();
	if (now_ms() - idle_since < linger_ms) {
		*timeout = (int)(idle_since + linger_ms - now_ms());
		return false;
	}
	if (lfd >= 0) {
		on_listen(); /* one last look: someone may have just connected */
		if (conns)
			return false;
		close(lfd);
		lfd = -1;
	}
	return true;
}

/*
 * A uprobe costs every process that maps its file (the kernel writes its
 * breakpoint into each at mmap), used or not: a process start pays for the
 * stopping mode's rtld probe and a watch's libc probes while they are
 * attached.  So they are released once the engine has had no target and
 * no DL watch for UPROBE_LINGER_MS (not at once: a caller that opens again
 * soon finds them attached).  Returns the loop's timeout, shortened to that
 * deadline.
 */
#define UPROBE_LINGER_MS 1000
static int uprobes_linger(int timeout)
{
	static long long idle_since = -1;
	long long left;

	if (tgt_any() || watches_dl_any()) {
		idle_since = -1;
		return timeout;
	}
	if (idle_since < 0)
		idle_since = now_ms();
	left = idle_since + UPROBE_LINGER_MS - now_ms();
	if (left <= 0) {
		tnf_events_release_uprobes();
		watches_release_uprobes();
		return timeout;
	}
	return timeout < 0 || timeout > left ? (int)left : timeout;
}

/* ---- set-up and loop ---------------------------------------------------- */

/* @sock: the first client's socket, or -1 (resident: no client yet). */
static void setup_process(int sock)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct rlimit rl;
	sigset_t set;
	int sig;

	/* not the caller's session; resident: in the foreground, where it was started */
	if (sock >= 0)
		setsid();
	/* A lingering engine must not hold its first caller's directory (an unmount). */
	if (chdir("/"))
		dbg("chdir /: %s\n", strerror(errno));
	prctl(PR_SET_NAME, "tnfctl-engine");
	/*
	 * No descriptor per followed process or per handle: the BPF object's,
	 * its uprobe links (a few per distinct libc and ld.so), the listening
	 * socket and one per connection.  The soft limit is raised for many
	 * clients and containers with many libc copies; the engine runs
	 * nothing else, so nothing inherits it.
	 */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	tnf_debug_on = getenv("TNFCTL_DEBUG") != NULL;
	/*
	 * Links released here, never handed to a detached process (one that a
	 * caller's subreaper would find): the engine's own threads wait out
	 * the grace periods.
	 */
	setenv("TNFCTL_SYNC_RELEASE", "1", 1);
	if (null >= 0) {
		dup2(null, 0);
		/* resident: its messages go where it was started (a unit's journal) */
		if (sock >= 0)
			dup2(null, 1);
		if (sock >= 0 && !tnf_debug_on)
			dup2(null, 2);
	}
	/* Keep only the first client's socket: nothing of the caller's must linger here. */
	if (sock >= 0 && sock != 3) {
		dup3(sock, 3, O_CLOEXEC);
		sock = 3;
	}
	close_range(sock >= 0 ? 4 : 3, ~0U, 0);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_SETMASK, &set, NULL);
	sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/*
 * The stop mode: the kfunc where the kernel has it, unless TNFCTL_STOP_MODE
 * forces one.  A forced kfunc the kernel lacks is refused: accepted, it
 * would never stop a fork child.
 */
static tnfctl_errcode_t choose_stop_mode(bool *use_kfunc)
{
	const char *mode = getenv("TNFCTL_STOP_MODE");
	bool have = tnf_events_kfunc_available();

	if (!tnf_events_kernel_ok())
		return TNFCTL_ERR_KERNEL;
	if (mode && !strcmp(mode, "kfunc") && !have)
		return TNFCTL_ERR_KERNEL;
	*use_kfunc = have && !(mode && !strcmp(mode, "ptrace"));
	return TNFCTL_ERR_NONE;
}

static bool drain_signals(void)
{
	struct signalfd_siginfo si;
	bool quit = false;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		dbg("signal %u from pid %u: releasing every target\n", si.ssi_signo, si.ssi_pid);
		quit = true;
	}
	return quit;
}

/* The first client (@sock) learns why we cannot start; a resident engine says it. */
static int start_failed(int sock, struct tnf_rep *rep)
{
	if (sock >= 0)
		tnf_send(sock, rep, tnf_rep_len(rep), -1);
	else
		fprintf(stderr, "tnfctl-engine: cannot start: %s%s\n",
			rep->err == TNFCTL_ERR_KERNEL ? "the kernel lacks a feature this needs"
			: rep->exit_status	      ? strerror(rep->exit_status)
						      : "internal error",
			rep->err == TNFCTL_ERR_ACCES ? " (no privilege to load BPF)" : "");
	return 1;
}

int tnf_tracer_main(int sock, const struct tnf_engine_opts *o)
{
	struct epoll_event evs[32];
	struct tnf_rep rep;
	bool use_kfunc = false;
	int i, n, e, timeout;

	resident = o->resident;
	linger_ms = o->linger_ms;
	setup_process(sock);
	if (sock >= 0)
		sock = 3;
	memset(&rep, 0, sizeof(rep));
	rep.kind = TNF_REP_DONE;
	rep.err = choose_stop_mode(&use_kfunc);
	if (rep.err)
		return start_failed(sock, &rep);
	e = tnf_events_load(use_kfunc);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e || epfd < 0 || sigfd < 0) {
		rep.err = (e == -EPERM || e == -EACCES)			   ? TNFCTL_ERR_ACCES
			  : (e == -EMFILE || e == -ENFILE || e == -ENOMEM) ? TNFCTL_ERR_ALLOCFAIL
									   : TNFCTL_ERR_INTERNAL;
		rep.exit_status = e < 0 ? -e
				  : e	? 0
					: errno; /* the load's errno, for the message */
		return start_failed(sock, &rep);
	}
	rb_fd = tnf_events_epoll_fd();
	watch_fd(rb_fd);
	watch_fd(sigfd);
	listen_start(o);
	if (sock >= 0) {
		struct tnf_conn *c;

		fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
		c = conn_add(sock);
		if (!c)
			return 1; /* the client sees its end: nothing was opened */
		/* the engine proper: the client resumes its targets if this process dies */
		rep.pid = getpid();
		conn_send(c, &rep, tnf_rep_len(&rep), -1);
	} else if (lfd < 0) {
		return 1; /* resident: listen_start said why */
	}
	dbg("started, stop mode %s\n", use_kfunc ? "kfunc" : "ptrace");

	while (!time_to_go(&timeout)) {
		timeout = watches_timeout(uprobes_linger(timeout));
		n = epoll_wait(epfd, evs, 32, timeout);
		if (n < 0 && errno != EINTR)
			break;
		tgt_drain_records();
		tgt_reap_all();
		watches_drain_notices();
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			struct tnf_conn *c;

			if (fd == rb_fd)
				continue;
			if (fd == sigfd) {
				if (drain_signals() && !abandoning)
					abandon_all();
				continue;
			}
			if (fd == lfd) {
				on_listen();
				continue;
			}
			c = conn_of(fd);
			if (c)
				on_conn(c, evs[i].events);
		}
		tgt_drain_records();
		tgt_reap_all();
		tgt_evaluate_all();
		tgt_free_destroyed();
		if (!tgt_any())
			tnf_events_idle();
	}
	dbg("exiting\n");
	if (lfd >= 0)
		close(lfd);
	while (conns)
		conn_close(conns);
	watches_unload();
	tnf_events_unload();
	return 0;
}
