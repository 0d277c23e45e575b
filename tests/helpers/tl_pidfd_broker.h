/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tl_pidfd_broker.h - the requests of tests/helpers/tl_pidfd_broker, which
 * makes pidfd_open and pidfd_send_signal for a test under valgrind 3.19.
 */
#ifndef TL_PIDFD_BROKER_H
#define TL_PIDFD_BROKER_H

#include <sys/types.h>

enum { TL_BROKER_OPEN = 1, TL_BROKER_KILL = 2 };

/* Attached (SCM_RIGHTS): the reply socket, then for KILL the pidfd. */
struct tl_broker_req {
	int op;
	pid_t pid; /* OPEN */
	int sig;   /* KILL */
};

/* On the reply socket; for a successful OPEN the pidfd is attached. */
struct tl_broker_rep {
	int ret; /* 0 or -1 */
	int err; /* errno when ret is -1 */
};

#endif
