/* SPDX-License-Identifier: BSD-2-Clause */
/* What the running kernel's BTF names: testlib.h and the tl_ctl helper. */
#ifndef TL_BTF_H
#define TL_BTF_H

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* The kernel's BTF holds the string @name (a type or enumerator name). */
static inline bool tl_btf_has_name(const char *name)
{
	size_t nlen = strlen(name) + 1; /* the NUL included */
	char buf[65536 + 256];
	size_t keep = 0;
	ssize_t n;
	bool found = false;
	int fd;

	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && !found && (n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t len = keep + (size_t)n;

		found = memmem(buf, len, name, nlen) != NULL;
		keep = len < nlen ? len : nlen;
		memmove(buf, buf + len - keep, keep);
	}
	if (fd >= 0)
		close(fd);
	return found;
}

#endif
