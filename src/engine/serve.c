// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine's wire and event loop: the client's sockets (one main socket,
 * one per handle, proto.h), its requests handed to the state machine
 * (tracer.c), the replies, and the loop over the BPF ring buffer, waitpid
 * (through a signalfd for SIGCHLD) and the sockets.
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

static int epfd = -1, sigfd = -1, rb_fd = -1, main_sock = -1;
static bool abandoning; /* the controller is gone: release everything, then exit */
bool tnf_debug_on;

/* ---- sockets and replies ------------------------------------------------ */

void srv_watch_fd(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * The fds dropped while one epoll batch is handled: a later event of that
 * batch for the same number is stale (its socket is closed, and the number
 * may be a new socket's already, or a child socket's not watched at all:
 * reading it there took an EOF for its end and closed it twice).
 */
static int *batch_dropped;
static size_t nbatch_dropped, cap_batch_dropped;

static bool dropped_in_batch(int fd)
{
	size_t i;

	for (i = 0; i < nbatch_dropped; i++)
		if (batch_dropped[i] == fd)
			return true;
	return false;
}

void srv_drop_fd(int fd)
{
	if (fd < 0)
		return;
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	if (nbatch_dropped == cap_batch_dropped) {
		size_t cap = cap_batch_dropped ? cap_batch_dropped * 2 : 64;
		int *p = realloc(batch_dropped, cap * sizeof(*p));

		if (!p)
			return; /* then only a stale event can be misread, as before */
		batch_dropped = p;
		cap_batch_dropped = cap;
	}
	batch_dropped[nbatch_dropped++] = fd;
}

void srv_send_rep(int sock, struct tnf_rep *rep)
{
	if (sock < 0)
		return;
	rep->lost = tnf_events_lost();
	tnf_send(sock, rep, sizeof(*rep), -1);
}

void srv_reply_err(int sock, int err)
{
	struct tnf_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.kind = TNF_REP_DONE;
	rep.err = err;
	srv_send_rep(sock, &rep);
}

/* ---- requests ----------------------------------------------------------- */

static void on_handle_sock(int sock)
{
	struct target *t = tgt_by_sock(sock);
	struct tnf_req req;
	struct tnf_rep rep;
	int fd = -1;
	ssize_t n;

	n = tnf_recv_nowait(sock, &req, sizeof(req), &fd);
	if (n != (ssize_t)sizeof(req)) {
		if (fd >= 0)
			close(fd);
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			if (t)
				tgt_abandon(t);
			else
				srv_drop_fd(sock);
		}
		return;
	}
	if (!t) {
		switch (req.op) {
		case TNF_OP_PID_OPEN:
			op_pid_open(sock, req.pid, req.arg != 0, req.flags);
			break;
		case TNF_OP_EXEC_ATTACH:
			op_exec_attach(sock, req.pid, req.flags);
			break;
		case TNF_OP_LOST:
			memset(&rep, 0, sizeof(rep));
			rep.kind = TNF_REP_DONE;
			srv_send_rep(sock, &rep);
			break;
		default:
			srv_reply_err(sock, TNFCTL_ERR_BADARG);
			break;
		}
		if (fd >= 0)
			close(fd);
		return;
	}
	switch (req.op) {
	case TNF_OP_CONTINUE:
		/* The child handle's socket was not installed here (RLIMIT_NOFILE). */
		if (req.arg && fd < 0) {
			struct tnf_rep rep = {.kind = TNF_REP_DONE,
					      .err = TNFCTL_ERR_ALLOCFAIL,
					      .exit_status = EMFILE};

			srv_send_rep(sock, &rep);
			break;
		}
		op_continue(t, req.arg != 0, fd);
		fd = -1;
		break;
	case TNF_OP_STOP:
		if (t->phase == PH_RUNNING) {
			t->stop_requested = true;
			tgt_evaluate(t);
		}
		break;
	case TNF_OP_CLOSE:
		op_close(t, req.arg);
		break;
	case TNF_OP_SET_FLAGS:
		t->open_flags = req.arg;
		srv_reply_err(sock,
			      (req.arg & TNFCTL_OPEN_EXEC_FAILED) && tnf_events_want_exec_failed()
				      ? TNFCTL_ERR_INTERNAL
				      : TNFCTL_ERR_NONE);
		break;
	default:
		srv_reply_err(sock, TNFCTL_ERR_BADARG);
		break;
	}
	if (fd >= 0)
		close(fd);
}

static void abandon_all(void)
{
	abandoning = true;
	srv_drop_fd(main_sock);
	main_sock = -1;
	/* No new BPF stop from here on; account for those already sent. */
	tnf_events_untrack_all();
	tgt_drain_records();
	tgt_for_each(tgt_abandon);
	tnf_suspended_resume_all();
}

static void on_main_sock(void)
{
	struct tnf_req req;
	int fd = -1;
	ssize_t n = tnf_recv_nowait(main_sock, &req, sizeof(req), &fd);

	if (n == (ssize_t)sizeof(req) && req.op == TNF_OP_NEW_HANDLE && fd >= 0) {
		srv_watch_fd(fd);
		return;
	}
	if (n == (ssize_t)sizeof(req) && req.op == TNF_OP_QUIT) {
		/* A deliberate end: what was suspended stays suspended. */
		tnf_suspended_keep();
		return;
	}
	if (fd >= 0)
		close(fd);
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
	 * Two descriptors per followed process: a tree of a few hundred live
	 * processes outgrows a soft limit of 1024.  The helper runs nothing
	 * else, so nothing inherits the raised limit.
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
	main_sock = sock;
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
		tnf_send(main_sock, &rep, sizeof(rep), -1);
		return 1;
	}
	e = tnf_events_load(use_kfunc);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e || epfd < 0 || sigfd < 0) {
		rep.err = (e == -EPERM || e == -EACCES) ? TNFCTL_ERR_ACCES : TNFCTL_ERR_INTERNAL;
		rep.exit_status = e < 0 ? -e
				  : e	? 0
					: errno; /* the load's errno, for the message */
		tnf_send(main_sock, &rep, sizeof(rep), -1);
		return 1;
	}
	/* the engine proper: the client resumes its targets if this process dies */
	rep.pid = getpid();
	rb_fd = tnf_events_epoll_fd();
	srv_watch_fd(rb_fd);
	srv_watch_fd(sigfd);
	srv_watch_fd(main_sock);
	tnf_send(main_sock, &rep, sizeof(rep), -1);
	dbg("started, stop mode %s\n", use_kfunc ? "kfunc" : "ptrace");

	while (!abandoning || tgt_any()) {
		n = epoll_wait(epfd, evs, 32, -1);
		if (n < 0 && errno != EINTR)
			break;
		nbatch_dropped = 0;
		tgt_drain_records();
		tgt_reap_all();
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == rb_fd || dropped_in_batch(fd))
				continue;
			if (fd == sigfd) {
				if (drain_signals() && !abandoning)
					abandon_all(); /* asked to go: as if the controller died */
				continue;
			}
			if (fd == main_sock)
				on_main_sock();
			else
				on_handle_sock(fd);
		}
		tgt_drain_records();
		tgt_reap_all();
		tgt_evaluate_all();
	}
	dbg("exiting\n");
	tnf_events_unload();
	return 0;
}
