// SPDX-License-Identifier: BSD-2-Clause
/* The options structs' validity check (the rules in tnfctl.h, as libbpf's). */
#include <string.h>
#include "opts.h"

/*
 * @opts (NULL: the defaults) against the @known bytes of its struct this
 * library was built with: an sz too small to hold itself or over
 * TNF_OPTS_SZ_MAX, or a non-zero byte between @known and sz (an option of
 * a newer release), is invalid.
 */
bool tnf_opts_valid(const void *opts, size_t known)
{
	const unsigned char *p = opts;
	size_t sz, i;

	if (!opts)
		return true;
	memcpy(&sz, opts, sizeof(sz));
	/* no options struct will ever be a page: a garbage sz is refused, not scanned */
	if (sz < sizeof(size_t) || sz > TNF_OPTS_SZ_MAX)
		return false;
	for (i = known; i < sz; i++)
		if (p[i])
			return false;
	return true;
}

/* An event struct's sz (the caller's, at @dst): at least @min, at most TNF_OPTS_SZ_MAX. */
bool tnf_data_sz_ok(const void *dst, size_t min)
{
	size_t sz;

	if (!dst)
		return false;
	memcpy(&sz, dst, sizeof(sz));
	return sz >= min && sz <= TNF_OPTS_SZ_MAX;
}

/*
 * Fill the caller's event struct @dst (its sz checked) from @src, the
 * library's (@known bytes): what lies within sz, zeros past @known.
 */
void tnf_data_out(void *dst, const void *src, size_t known)
{
	size_t sz;

	memcpy(&sz, dst, sizeof(sz));
	memcpy((char *)dst + sizeof(sz), (const char *)src + sizeof(sz),
	       (sz < known ? sz : known) - sizeof(sz));
	if (sz > known)
		memset((char *)dst + known, 0, sz - known);
}
