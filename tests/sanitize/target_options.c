// SPDX-License-Identifier: BSD-2-Clause
/*
 * Linked into the test targets (test helpers, the demo) by make check
 * SANITIZE=1.  LeakSanitizer's exit-time check stops the process's threads
 * with ptrace from a task it clones: in a target that the tests trace, that
 * clone is a FORK event the test does not expect, and the ptrace fails
 * ("LeakSanitizer does not work under ptrace").  So no leak check in the
 * targets; the controllers (the tests, prex, tnfdump, tnfctl-follow,
 * tnftrace) keep theirs.  ASAN_OPTIONS in the environment still wins.
 */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
