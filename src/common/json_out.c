// SPDX-License-Identifier: BSD-2-Clause
/* JSON string output (json_out.h). */
#include <stdint.h>

#include "json_out.h"

/* Length of the well-formed UTF-8 sequence at @s (at most @n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	c = s[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff)
		return 0;
	return len;
}

void json_out_string(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, len;

	fputc('"', out);
	while (i < n) {
		if (s[i] == '"' || s[i] == '\\') {
			fputc('\\', out);
			fputc(s[i++], out);
		} else if (s[i] == '\n') {
			fputs("\\n", out), i++;
		} else if (s[i] == '\t') {
			fputs("\\t", out), i++;
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			fprintf(out, "\\u%04x", s[i++]);
		} else if ((len = utf8_len(s + i, n - i)) == 0) {
			fputs("\\ufffd", out), i++;
		} else {
			fwrite(s + i, 1, len, out);
			i += len;
		}
	}
	fputc('"', out);
}
