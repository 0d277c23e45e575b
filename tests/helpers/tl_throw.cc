// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_throw N: throws and catches a C++ exception N times (libstdc++'s
 * USDT probe libstdcxx:throw fires in __cxa_throw each time), then
 * prints "caught N" (test_usdt_control).
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

/* Not inlined: the throw must reach __cxa_throw, not be folded away. */
__attribute__((noinline)) static void thrower(int i)
{
	throw std::runtime_error(std::to_string(i));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 0, caught = 0;

	for (int i = 0; i < n; i++) {
		try {
			thrower(i);
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	std::printf("caught %d\n", caught);
	return caught == n ? 0 : 1;
}
