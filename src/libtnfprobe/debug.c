// SPDX-License-Identifier: BSD-2-Clause
/*
 * &debug (tnf_probe_debug): one line per event on fd 2, in a single
 * write(2), as the Solaris debug function printed it:
 *   probe <name>; [sunw%debug "<value>"; ]<slot>=<value>; ...
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

#define LINE_MAX_ 1024
#define NAME_MAX_ 31
#define ATTR_MAX_ 127

struct line {
	char buf[LINE_MAX_];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 2)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - 1 - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof(l->buf) - 1 - l->len ? (size_t)n
								  : sizeof(l->buf) - 2 - l->len;
}

/* The value of unit @attr in @attrs; units end at ';' outside quotes. */
static const char *attr(const char *attrs, const char *name, size_t *len)
{
	size_t nl = strlen(name);
	const char *p = attrs;

	while (p && *p) {
		const char *e = p;
		int q = 0;

		while (*e && (q || *e != ';')) {
			if (*e == '\'')
				q = !q;
			e++;
		}
		if (!strncmp(p, name, nl) && (p[nl] == ' ' || p + nl == e)) {
			const char *v = p + nl;

			while (v < e && *v == ' ')
				v++;
			*len = (size_t)(e - v);
			return v;
		}
		p = *e ? e + 1 : NULL;
	}
	return NULL;
}

static void add_value(struct line *l, const struct tnf_type_desc *d, const char *p)
{
	const char *s;
	uint32_t ref;

	switch (d->kind) {
	case TNF_K_CHAR:
		add(l, "'%c'; ", *p);
		break;
	case TNF_K_INT8:
		add(l, "%d; ", *(const int8_t *)p);
		break;
	case TNF_K_UINT8:
		add(l, "%u; ", *(const uint8_t *)p);
		break;
	case TNF_K_INT16:
		add(l, "%d; ", *(const int16_t *)p);
		break;
	case TNF_K_UINT16:
		add(l, "%u; ", *(const uint16_t *)p);
		break;
	case TNF_K_INT32:
		add(l, "%d; ", *(const int32_t *)p);
		break;
	case TNF_K_UINT32:
		add(l, "%u; ", *(const uint32_t *)p);
		break;
	case TNF_K_INT64:
		add(l, "%lld; ", (long long)*(const int64_t *)p);
		break;
	case TNF_K_UINT64:
		add(l, "%llu; ", (unsigned long long)*(const uint64_t *)p);
		break;
	case TNF_K_SIZE:
		add(l, "%lu; ", *(const unsigned long *)p);
		break;
	case TNF_K_FLOAT32:
		add(l, "%f; ", *(const float *)p);
		break;
	case TNF_K_FLOAT64:
		add(l, "%f; ", *(const double *)p);
		break;
	case TNF_K_STRING:
		ref = *(const uint32_t *)p;
		s = ref ? p + ref + 8 : "";
		add(l, "\"%.*s\"; ", ATTR_MAX_, s);
		break;
	case TNF_K_OPAQUE:
		add(l, "0x%lx; ", (unsigned long)*(const uintptr_t *)p);
		break;
	default: /* records: the reference */
		add(l, "0x%x; ", *(const uint32_t *)p);
		break;
	}
}

TNF_EXPORT void tnf_probe_debug(tnf_probe_setup_t *set)
{
	tnf_probe_control_t *cb = set->probe_p;
	const struct tnf_type_desc *const *st = cb->slot_types;
	const char *ev = set->buffer_p, *v, *names;
	struct line l = {.len = 0};
	uint32_t off = 0;
	size_t len, nlen = 0;
	int i;

	v = attr(cb->attrs, "name", &len);
	add(&l, "probe %.*s; ", (int)(len > NAME_MAX_ ? NAME_MAX_ : len), v ? v : "");
	v = attr(cb->attrs, "sunw%debug", &len);
	if (v)
		add(&l, "sunw%%debug \"%.*s\"; ", (int)(len > ATTR_MAX_ ? ATTR_MAX_ : len), v);
	names = attr(cb->attrs, "slots", &nlen);
	for (i = 0; st && st[i]; i++) {
		const struct tnf_kind_info *k = tnf_kind(st[i]);
		const char *e;
		size_t n;

		off = (off + k->align - 1) & ~(uint32_t)(k->align - 1);
		if (i >= 2 && names) {
			while (nlen && *names == ' ')
				names++, nlen--;
			e = memchr(names, ' ', nlen);
			n = e ? (size_t)(e - names) : nlen;
			add(&l, "%.*s=", (int)(n > NAME_MAX_ ? NAME_MAX_ : n), names);
			names += n;
			nlen -= n;
			add_value(&l, st[i], ev + off);
		}
		off += k->size;
	}
	l.buf[l.len++] = '\n';
	if (write(STDERR_FILENO, l.buf, l.len) < 0)
		return;
}
