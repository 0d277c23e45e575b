// SPDX-License-Identifier: BSD-2-Clause
/*
 * Placeholders for the issue-11 Linux extensions declared in tnfctl.h, so the
 * exported API matches the header while they are implemented.  Flags 0 and
 * TNFCTL_OPEN_EXEC_FAILED work (the latter told to the helper right after the
 * open: the target is stopped, no exec can be missed); each function moves to
 * its layer's file when implemented.
 */
#include "internal.h"

TNF_API tnfctl_errcode_t tnfctl_exec_open_flags(const char *pgmname, char *const *argv,
						char *const *envp, const char *ld_preload,
						const char *libtnfprobe_path, unsigned int flags,
						tnfctl_handle_t **retval)
{
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;

	if (flags & ~TNFCTL_OPEN_EXEC_FAILED)
		return TNFCTL_ERR_BADARG;
	err = tnfctl_exec_open(pgmname, argv, envp, ld_preload, libtnfprobe_path, &h);
	if (!err && flags && (err = tnf_handle_set_flags(h, flags)))
		tnfctl_close(h, TNFCTL_TARG_KILL);
	if (!err)
		*retval = h;
	return err;
}

TNF_API tnfctl_errcode_t tnfctl_pid_open_flags(pid_t pid, unsigned int flags,
					       tnfctl_handle_t **retval)
{
	tnfctl_errcode_t err;
	tnfctl_handle_t *h;

	if (flags & ~TNFCTL_OPEN_EXEC_FAILED)
		return TNFCTL_ERR_BADARG;
	err = tnfctl_pid_open(pid, &h);
	if (!err && flags && (err = tnf_handle_set_flags(h, flags)))
		tnfctl_close(h, TNFCTL_TARG_RESUME);
	if (!err)
		*retval = h;
	return err;
}
