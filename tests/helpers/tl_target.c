// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_target: the general test target.  `tl_target CMDFD REPLYFD` writes
 * "ready <pid>" and then runs the commands of target_common.h.
 */
#include "target_common.h"

int main(int argc, char **argv)
{
	tgt_init(argc, argv);
	return tgt_run();
}
