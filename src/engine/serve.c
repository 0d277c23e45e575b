// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine's wire and event loop: the client's connection (proto.h), its
 * requests handed to the state machine (tracer.c), the replies, and the
 * loop over the BPF ring buffer, waitpid (through a signalfd for SIGCHLD)
 * and the connection.  Handles are ids on the connection: the engine holds
 * no descriptor per target or per handle.
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
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <tnf/tnfctl.h>
#include "tracer.h"

/* A client's connection. */
struct tnf_conn {
	int fd;
};

static struct tnf_conn main_conn = {.fd = -1};
static int epfd = -1, sigfd = -1, rb_fd = -1;
static bool abandoning; /* the controller is gone: release everything, then exit */
bool tnf_debug_on;

/* ---- replies ------------------------------------------------------------ */

static void watch_fd(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* A reply to a handle that is gone (hid 0, or its connection closed) is dropped. */
void srv_send_rep(struct tnf_peer to, struct tnf_rep *rep)
{
	if (!to.hid || !to.conn || to.conn->fd < 0)
		return;
	rep->hid = to.hid;
	rep->lost = tnf_events_lost();
	tnf_send(to.conn->fd, rep, sizeof(*rep), -1);
}

void srv_reply_err(struct tnf_peer to, int err)
{
	struct tnf_rep rep;

	memset(&rep, 0, sizeof(rep));
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
	t = tgt_by_peer(from);
	if (!t) {
		on_unbound(from, req);
		return;
	}
	switch (req->op) {
	case TNF_OP_CONTINUE:
		op_continue(t, req->child_hid);
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

static void abandon_all(void)
{
	abandoning = true;
	if (main_conn.fd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, main_conn.fd, NULL);
		close(main_conn.fd);
		main_conn.fd = -1;
	}
	/* No new BPF stop from here on; account for those already sent. */
	tnf_events_untrack_all();
	tgt_drain_records();
	tgt_for_each(tgt_abandon);
	tnf_suspended_resume_all();
}

/* Every request waiting on the connection, then its end if it has ended. */
static void on_conn(struct tnf_conn *c)
{
	struct tnf_req req;
	int fd;
	ssize_t n;

	for (;;) {
		fd = -1;
		n = tnf_recv_nowait(c->fd, &req, sizeof(req), &fd);
		if (fd >= 0)
			close(fd); /* no request carries a descriptor */
		if (n != (ssize_t)sizeof(req))
			break;
		if (req.op == TNF_OP_QUIT)
			/* A deliberate end: what was suspended stays suspended. */
			tnf_suspended_keep();
		else
			on_request(c, &req);
		if (abandoning)
			return;
	}
	if (n > 0 || (n < 0 && errno == EAGAIN))
		return;
	/* The controller is gone (or has closed its last handle). */
	abandon_all();
}

/* ---- set-up and loop ---------------------------------------------------- */

static void setup_process(int sock)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct rlimit rl;
	sigset_t set;
	int sig;

	setsid();
	prctl(PR_SET_NAME, "tnfctl-engine");
	/*
	 * No descriptor per followed process or per handle: the BPF object's,
	 * its uprobe links (a few per distinct libc and ld.so), and one per
	 * connection.  The soft limit is raised for containers with many libc
	 * copies; the engine runs nothing else, so nothing inherits it.
	 */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	tnf_debug_on = getenv("TNFCTL_DEBUG") != NULL;
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (!tnf_debug_on)
			dup2(null, 2);
	}
	/* Keep only the main socket: nothing of the controller's must linger here. */
	if (sock != 3) {
		dup3(sock, 3, O_CLOEXEC);
		sock = 3;
	}
	close_range(4, ~0U, 0);
	main_conn.fd = sock;
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

int tnf_tracer_main(int sock)
{
	struct epoll_event evs[32];
	struct tnf_rep rep;
	bool use_kfunc = false;
	int i, n, e;

	setup_process(sock);
	memset(&rep, 0, sizeof(rep));
	rep.kind = TNF_REP_DONE;
	rep.err = choose_stop_mode(&use_kfunc);
	if (rep.err) {
		tnf_send(main_conn.fd, &rep, sizeof(rep), -1);
		return 1;
	}
	e = tnf_events_load(use_kfunc);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e || epfd < 0 || sigfd < 0) {
		rep.err = (e == -EPERM || e == -EACCES)			   ? TNFCTL_ERR_ACCES
			  : (e == -EMFILE || e == -ENFILE || e == -ENOMEM) ? TNFCTL_ERR_ALLOCFAIL
									   : TNFCTL_ERR_INTERNAL;
		rep.exit_status = e < 0 ? -e
				  : e	? 0
					: errno; /* the load's errno, for the message */
		tnf_send(main_conn.fd, &rep, sizeof(rep), -1);
		return 1;
	}
	/* the engine proper: the client resumes its targets if this process dies */
	rep.pid = getpid();
	rb_fd = tnf_events_epoll_fd();
	watch_fd(rb_fd);
	watch_fd(sigfd);
	watch_fd(main_conn.fd);
	tnf_send(main_conn.fd, &rep, sizeof(rep), -1);
	dbg("started, stop mode %s\n", use_kfunc ? "kfunc" : "ptrace");

	while (!abandoning || tgt_any()) {
		n = epoll_wait(epfd, evs, 32, -1);
		if (n < 0 && errno != EINTR)
			break;
		tgt_drain_records();
		tgt_reap_all();
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == rb_fd)
				continue;
			if (fd == sigfd) {
				if (drain_signals() && !abandoning)
					abandon_all(); /* asked to go: as if the controller died */
				continue;
			}
			if (fd == main_conn.fd)
				on_conn(&main_conn);
		}
		tgt_drain_records();
		tgt_reap_all();
		tgt_evaluate_all();
		tgt_free_destroyed();
	}
	dbg("exiting\n");
	tnf_events_unload();
	return 0;
}
