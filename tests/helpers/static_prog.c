// SPDX-License-Identifier: BSD-2-Clause
/*
 * static_prog: a statically linked target (no PT_INTERP, no PT_DYNAMIC).
 * Same protocol as tl_target, without the dlopen commands.
 */
#define TGT_NO_DL
#include "target_common.h"

int main(int argc, char **argv)
{
	tgt_init(argc, argv);
	return tgt_run();
}
