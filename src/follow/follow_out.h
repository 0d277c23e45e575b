/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tnfctl-follow's output: one writer per --format (text lines, NDJSON,
 * Chrome trace-event JSON), fed the same events by both modes.  Safe to
 * call from several threads (one lock inside).
 */
#ifndef FOLLOW_OUT_H
#define FOLLOW_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <tnf/tnfctl.h>

enum follow_format {
	FOLLOW_TEXT,   /* "%10.3f %7d %-8s %s": ms since start, pid, event, details */
	FOLLOW_NDJSON, /* one JSON object per event, flushed per line */
	FOLLOW_JSON,   /* Chrome trace-event JSON: a slice per process image */
};

struct follow_ev {
	uint64_t time_ns;		  /* CLOCK_MONOTONIC, ns */
	pid_t pid;			  /* process (tgid) */
	pid_t tid;			  /* thread, 0 if not known */
	pid_t ppid;			  /* parent, 0 if not known */
	const char *event;		  /* FORK EXEC EXECFAIL EXIT TARGGONE DLOPEN DLCLOSE */
	pid_t child;			  /* FORK: the new process */
	int status;			  /* EXIT: exit status (0-255) */
	int signal;			  /* TARGGONE: the signal that ended it */
	int core;			  /* TARGGONE: 1 if it dumped core, -1 if not known */
	const char *path;		  /* EXEC, EXECFAIL, DLOPEN, DLCLOSE, else NULL */
	const struct tnfctl_exec_info *x; /* EXEC, EXECFAIL: argv, cwd, errno; or NULL */
};

/* Writes to @fp (not closed here) in @fmt; times are relative to @start_ns. */
void follow_out_open(FILE *fp, enum follow_format fmt, uint64_t start_ns);

/*
 * The root process, whose own exec is no event: pid @pid, parent @ppid,
 * image @argv (NULL: read from /proc/PID/cmdline), @path the name it was
 * exec'd by, as an EXEC's path (NULL: not known, -p: the file
 * /proc/PID/exe names), started at @time_ns.
 */
void follow_out_root(pid_t pid, pid_t ppid, char *const *argv, const char *path, uint64_t time_ns);

void follow_out_event(const struct follow_ev *e);

/*
 * Ends the output at @end_ns: JSON gives each process still running a
 * slice to @end_ns (args.end "running") and closes the array.  Returns 0,
 * or the errno of the first write that failed (nothing was written after
 * it): EPIPE when the reader of a pipe has left.
 */
int follow_out_close(uint64_t end_ns);

#endif
