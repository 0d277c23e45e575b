/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fd_limit.h - for the tools that follow process trees (tnfctl-follow,
 * prex -f): an enabled USDT probe holds a perf event and a link per call
 * site in each followed process, so a tree of a few hundred live processes
 * outgrows a soft RLIMIT_NOFILE of 1024.  Called once the root is started
 * (it already has the caller's limit, and its tree inherits that, not
 * ours): the soft limit goes up to the hard one.
 */
#ifndef TNF_FD_LIMIT_H
#define TNF_FD_LIMIT_H

#include <sys/resource.h>

static inline void tnf_raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

#endif
