/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What tnfctl-follow's parts share: main() and the signal handlers
 * (tnfctl-follow.c), messages and the end (common.c), the stopping mode
 * (stop.c) and --no-stop (no_stop.c).
 */
#ifndef FOLLOW_H
#define FOLLOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <tnf/tnfctl.h>

extern const char *out_name;	/* for a write error's message */
extern int done_fd;		/* eventfd: all followers ended */
extern int wake_fd[2];		/* self-pipe of on_term() */
extern atomic_int stop_sig;	/* -p: termination signal, 0 if none */
extern atomic_uint fwd_pending; /* CMD: signals to pass on (bit N) */
extern int fwd_sig;		/* last signal passed on to the tree, 0 if none */
extern uint64_t fwd_ns;		/* when (both under stop.c's lock in the stopping mode) */
extern bool attached;		/* -p PID: detach on a signal instead of passing it on */

/* The signals tnfctl-follow passes on to the tree (CMD) or detaches on (-p). */
extern const int term_sigs[4];

/* A message line on stderr ("tnfctl-follow: ..."), in one write(). */
__attribute__((format(printf, 1, 2))) void msg(const char *fmt, ...);

uint64_t now_ns(void);

/* The exit status when CMD (@cmd) or PID cannot be followed, after a message. */
int open_failed(const char *name, bool cmd, tnfctl_errcode_t err, int e);

/* The root was killed by @sig: end the same way; returns only if @sig does not kill us. */
void die_like(int sig);

/* Ends the output; true if a write failed (said): exit 1. */
bool out_close(void);

/*
 * Follow the tree of CMD (@name, argv @cmd) or of @pid (@name: its -p
 * argument) until it has ended or a termination signal came; returns the
 * exit status.  follow_stop: one thread per process (stop.c); follow_no_stop:
 * the passive watch (no_stop.c).
 */
int follow_stop(const char *name, pid_t pid, char **cmd);
int follow_no_stop(const char *name, pid_t pid, char **cmd);

#endif
