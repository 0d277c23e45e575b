// SPDX-License-Identifier: BSD-2-Clause
/*
 * libtl_audit.so: an LD_AUDIT module that stops its process (SIGSTOP) in
 * la_version, which ld.so calls during start-up after it has set r_map and
 * RT_CONSISTENT but before its first RT_ADD: nothing else (no LD_PRELOAD
 * object, no DT_NEEDED library) is loaded yet.  The tests attach there.
 */
#include <link.h>
#include <signal.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT unsigned int la_version(unsigned int version)
{
	raise(SIGSTOP);
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}
