// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel-mode functions (tnfctl_kernel_open(3TNF)).  Kernel tracing is not
 * implemented on Linux yet: these return what Solaris returned when kernel
 * tracing was unavailable.
 */
#include "internal.h"

TNF_API tnfctl_errcode_t tnfctl_kernel_open(tnfctl_handle_t **retval)
{
	(void)retval;
	return TNFCTL_ERR_FILENOTFOUND;
}

TNF_API tnfctl_errcode_t tnfctl_buffer_dealloc(tnfctl_handle_t *h)
{
	(void)h;
	return TNFCTL_ERR_BADARG;
}

TNF_API tnfctl_errcode_t tnfctl_trace_state_set(tnfctl_handle_t *h, boolean_t on)
{
	(void)h;
	(void)on;
	return TNFCTL_ERR_BADARG;
}

TNF_API tnfctl_errcode_t tnfctl_filter_state_set(tnfctl_handle_t *h, boolean_t on)
{
	(void)h;
	(void)on;
	return TNFCTL_ERR_BADARG;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_get(tnfctl_handle_t *h, pid_t **list, int *n)
{
	(void)h;
	(void)list;
	(void)n;
	return TNFCTL_ERR_BADARG;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_add(tnfctl_handle_t *h, pid_t pid)
{
	(void)h;
	(void)pid;
	return TNFCTL_ERR_BADARG;
}

TNF_API tnfctl_errcode_t tnfctl_filter_list_delete(tnfctl_handle_t *h, pid_t pid)
{
	(void)h;
	(void)pid;
	return TNFCTL_ERR_BADARG;
}
