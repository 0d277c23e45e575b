// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_strerror (libtnfctl(3TNF)). */
#include "internal.h"

static const char *const messages[] = {
	[TNFCTL_ERR_NONE] = "success",
	[TNFCTL_ERR_ACCES] = "permission denied",
	[TNFCTL_ERR_NOTARGET] = "target process finished",
	[TNFCTL_ERR_ALLOCFAIL] = "memory allocation failure",
	[TNFCTL_ERR_INTERNAL] = "internal error",
	[TNFCTL_ERR_SIZETOOSMALL] = "requested trace size is too small",
	[TNFCTL_ERR_SIZETOOBIG] = "requested trace size is too big",
	[TNFCTL_ERR_BADARG] = "bad input argument",
	[TNFCTL_ERR_NOTDYNAMIC] = "target is not a dynamic executable",
	[TNFCTL_ERR_NOLIBTNFPROBE] = "libtnfprobe.so.1 is not loaded in the target",
	[TNFCTL_ERR_BUFBROKEN] = "tracing is broken in the target",
	[TNFCTL_ERR_BUFEXISTS] = "a trace buffer already exists",
	[TNFCTL_ERR_NOBUF] = "no trace buffer",
	[TNFCTL_ERR_BADDEALLOC] = "cannot deallocate the trace buffer",
	[TNFCTL_ERR_NOPROCESS] = "no such target process",
	[TNFCTL_ERR_FILENOTFOUND] = "file not found",
	[TNFCTL_ERR_BUSY] = "target is already being controlled or traced",
	[TNFCTL_ERR_INVALIDPROBE] = "probe is no longer valid",
	[TNFCTL_ERR_USR1] = "user error 1",
	[TNFCTL_ERR_USR2] = "user error 2",
	[TNFCTL_ERR_USR3] = "user error 3",
	[TNFCTL_ERR_USR4] = "user error 4",
	[TNFCTL_ERR_USR5] = "user error 5",
	[TNFCTL_ERR_KERNEL] = "the running kernel lacks a feature this needs",
};

TNF_API const char *tnfctl_strerror(tnfctl_errcode_t err)
{
	if ((unsigned int)err >= sizeof(messages) / sizeof(messages[0]) || !messages[err])
		return "unknown error code";
	return messages[err];
}
