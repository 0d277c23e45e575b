// SPDX-License-Identifier: BSD-2-Clause
/*
 * libtnfprobe.so.1: the in-target runtime of libtnfctl.
 *
 * For now a placeholder: the controller only checks that it is mapped into
 * the target.  It depends on nothing but libc and does nothing at load time,
 * so preloading it can never change a target's behaviour.  The exported
 * symbols are fixed by libtnfprobe.map.
 */

/* Bumped whenever the controller/runtime contract changes. */
const int tnf_probe_runtime_version = 1;
