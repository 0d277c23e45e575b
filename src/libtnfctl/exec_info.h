/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Exec details (struct tnfctl_exec_info) kept by a handle or a watch for its
 * last EXEC or EXEC_FAILED event: one allocation holding the strings and the
 * argv vector.  exec_info.c; the stopping API's capture from /proc is there
 * too, the watch's comes from its BPF records (watch.c).
 */
#ifndef TNFCTL_EXEC_INFO_H
#define TNFCTL_EXEC_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <tnf/tnfctl.h>

struct tnf_exec_data {
	char *buf; /* argv pointers, then path, cwd and argument strings */
	char **argv;
	int argc;
	char **interp_argv; /* TNFCTL_EXEC_INTERP: the interpreter's vector (own block) */
	int interp_argc;
	const char *path, *cwd;
	int error;
	unsigned int flags;
	size_t argv_bytes;
	bool valid;
};

/*
 * Replace @d's contents.  @args: @alen bytes of NUL-separated strings (a
 * last one without its NUL is cut there and gets one); with
 * TNFCTL_EXEC_INTERP in @flags, the kernel's rewritten vector of an
 * interpreted file, split back into the interpreter's and execve's.
 * Returns 0 or -ENOMEM (then @d is left invalid).
 */
int tnf_exec_data_set(struct tnf_exec_data *d, const char *path, const char *cwd, const char *args,
		      size_t alen, size_t argv_bytes, unsigned int flags, int error);
void tnf_exec_data_free(struct tnf_exec_data *d);
tnfctl_errcode_t tnf_exec_data_get(const struct tnf_exec_data *d, struct tnfctl_exec_info *info);

/*
 * Stopping API: fill @d from the stopped target @pid (thread @tid).  After an
 * EXEC (@uargv 0) from /proc/PID/cmdline and /proc/PID/stat; after an
 * EXEC_FAILED from the argv array at @uargv in its memory.  @path is the
 * kernel's record of the filename; @flags: TNFCTL_EXEC_INTERP if the kernel
 * ran it by an interpreter.
 */
int tnf_exec_data_capture(struct tnf_exec_data *d, pid_t pid, pid_t tid, const char *path,
			  unsigned long long uargv, int error, unsigned int flags);

#endif
