/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The options structs' rules (tnfctl.h, "Options structs"): sz first, no
 * byte read past it, unknown non-zero bytes refused.
 */
#ifndef TNF_OPTS_H
#define TNF_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/* The end of @field in struct @type: the size an older caller's sz covers. */
#define TNF_OPTS_END(type, field) (offsetof(struct type, field) + sizeof(((struct type *)0)->field))

/* @field of @opts if the caller's struct holds it and it is not 0, else @def. */
#define TNF_OPTS_GET(opts, type, field, def)                                                       \
	((opts) && (opts)->sz >= TNF_OPTS_END(type, field) && (opts)->field ? (opts)->field : (def))

/* The largest sz accepted (tnfctl.h says so). */
#define TNF_OPTS_SZ_MAX 1024

bool tnf_opts_valid(const void *opts, size_t known);

/* The growable event structs (tnfctl.h): sz check, then the fill by sz. */
bool tnf_data_sz_ok(const void *dst, size_t min);
void tnf_data_out(void *dst, const void *src, size_t known);

#endif
