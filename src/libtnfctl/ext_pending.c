// SPDX-License-Identifier: BSD-2-Clause
/*
 * Placeholders for the issue-11 Linux extensions declared in tnfctl.h, so the
 * exported API matches the header while they are implemented.  Flags 0 (and
 * only 0) works; each function moves to its layer's file when implemented.
 */
#include "internal.h"

TNF_API tnfctl_errcode_t tnfctl_exec_open_flags(const char *pgmname, char *const *argv,
						char *const *envp, const char *ld_preload,
						const char *libtnfprobe_path, unsigned int flags,
						tnfctl_handle_t **retval)
{
	if (flags)
		return TNFCTL_ERR_BADARG;
	return tnfctl_exec_open(pgmname, argv, envp, ld_preload, libtnfprobe_path, retval);
}

TNF_API tnfctl_errcode_t tnfctl_pid_open_flags(pid_t pid, unsigned int flags,
					       tnfctl_handle_t **retval)
{
	if (flags)
		return TNFCTL_ERR_BADARG;
	return tnfctl_pid_open(pid, retval);
}

TNF_API tnfctl_errcode_t tnfctl_event_exec_get(tnfctl_handle_t *hndl, struct tnfctl_exec_info *info)
{
	(void)hndl;
	(void)info;
	return TNFCTL_ERR_BADARG;
}

TNF_API tnfctl_errcode_t tnfctl_watch_event_exec(tnfctl_watch_t *w, struct tnfctl_exec_info *info)
{
	(void)w;
	(void)info;
	return TNFCTL_ERR_BADARG;
}
