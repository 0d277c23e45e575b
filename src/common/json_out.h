/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON string output, shared by tnfdump (--format=json) and tnfctl-follow
 * (--format=json|ndjson).
 */
#ifndef TNF_JSON_OUT_H
#define TNF_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes the @n bytes at @s to @out as one JSON string, quotes included:
 * '"' and '\' escaped, control characters as \n, \t or \u00XX, bytes that
 * are not well-formed UTF-8 as U+FFFD (so any byte string gives valid JSON).
 */
void json_out_string(FILE *out, const char *s, size_t n);

#endif
