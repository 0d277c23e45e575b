// SPDX-License-Identifier: BSD-2-Clause
/*
 * tl_ctor: proves where exec_open stops.  Its constructor writes "ctor" and
 * main() writes "main" to the fd named by $TL_CTOR_FD (inherited from the
 * test); then it exits with $TL_CTOR_STATUS (default 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void say(const char *what)
{
	const char *s = getenv("TL_CTOR_FD");
	int fd;

	if (!s)
		return;
	fd = atoi(s);
	while (write(fd, what, strlen(what)) < 0 && errno == EINTR)
		;
}

__attribute__((constructor)) static void tl_ctor_init(void)
{
	say("ctor\n");
}

int main(void)
{
	const char *st = getenv("TL_CTOR_STATUS");

	say("main\n");
	return st ? atoi(st) : 0;
}
