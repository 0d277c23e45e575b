// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_sdt: a program with plain <sys/sdt.h> USDT probes and no TNF probe
 * (test_usdt_control).  `tl_sdt CMDFD REPLYFD` writes "ready <pid> <address
 * of the tick semaphore>", then per command line:
 *   fire N -> N hits of tl_sdt:tick(i, 3 * i) (only while its semaphore is
 *             raised, as programs with semaphores do) and of
 *             tl_sdt:word(i, "w<i>"): "fired N sema <tick's semaphore>"
 *   exit   -> exit(0)
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sdt.h>

__extension__ volatile unsigned short tl_sdt_tick_semaphore __attribute__((section(".probes")));
__extension__ volatile unsigned short tl_sdt_word_semaphore __attribute__((section(".probes")));

int main(int argc, char **argv)
{
	char line[128], word[32];
	FILE *in;
	int out, n, i;

	if (argc < 3 || !(in = fdopen(atoi(argv[1]), "r")))
		return 2;
	out = atoi(argv[2]);
	dprintf(out, "ready %d %p\n", (int)getpid(), (void *)&tl_sdt_tick_semaphore);
	while (fgets(line, sizeof(line), in)) {
		if (sscanf(line, "fire %d", &n) == 1) {
			for (i = 0; i < n; i++) {
				long a = i, b = 3 * i;

				if (tl_sdt_tick_semaphore)
					DTRACE_PROBE2(tl_sdt, tick, a, b);
				snprintf(word, sizeof(word), "w%d", i);
				DTRACE_PROBE2(tl_sdt, word, a, word);
			}
			dprintf(out, "fired %d sema %u\n", n, (unsigned)tl_sdt_tick_semaphore);
		} else if (!strncmp(line, "exit", 4)) {
			exit(0);
		}
	}
	return 0;
}
