// SPDX-License-Identifier: BSD-2-Clause
/*
 * ctf.c - tnfdump --format=ctf DIR FILE...: the events of every file as a
 * CTF 1.8 trace that babeltrace2 (and Trace Compass) read: DIR/metadata in
 * TSDL and DIR/stream_0, one stream of packets holding every event sorted
 * by time (stable, in file order).
 *
 * Mapping:
 *  - clock "monotonic", 1 GHz, offset 0: the TNF event time in ns as it is
 *    in the file (the writer's monotonic clock, not wall time);
 *  - stream event header { id, timestamp }, event context { pid, lwpid,
 *    tid, cpu } (cpu is -1 for user records);
 *  - one event class per probe name and argument layout, named after the
 *    probe, with one field per argument slot, named after the slot:
 *    integers of the slot's width and signedness (opaque ones in base 16,
 *    chars as 8-bit UTF-8 characters), float/double, and for every
 *    reference (strings, records) an enum { null, value } followed by a
 *    variant on it, so that a NULL reference stays NULL: the value of a
 *    string is a string, of a record a struct of its slots (tnf_tag left
 *    out), of anything else the text the cooked output prints;
 *  - field names get a leading underscore, which CTF readers drop, so a
 *    slot named like a TSDL keyword still works;
 *  - the events, and whether a file is bad, are what the cooked output
 *    judges (cooked_check()): a slot whose declared type cannot be read is
 *    a null-or-text variant holding what the cooked output prints, and an
 *    unreadable value is null, "" or 0, never a failed file.
 * Every integer is byte aligned and the file has the writer's byte order,
 * so a value is stored as its bytes, without padding.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump.h"

#define CTF_MAGIC	  0xC1FC1FC1u
#define CTF_PACKET_BYTES  (1u << 20) /* content per packet, before the last event */
#define CTF_PACKET_HEADER 40	     /* magic, stream_id, 4 x u64 of context */
#define CTF_MAX_FIELDS	  65536	     /* fields of one struct */

/* A growable byte buffer. */
struct buf {
	unsigned char *p;
	size_t n;
	size_t cap;
	bool oom;
};

static void buf_put(struct buf *b, const void *data, size_t n)
{
	unsigned char *p;
	size_t cap;

	/* n == 0 on an empty buffer: p is NULL, and NULL + 0 is undefined */
	if (b->oom || n == 0)
		return;
	if (b->n + n > b->cap) {
		cap = b->cap ? b->cap : 64;
		while (cap < b->n + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
}

static void buf_text(struct buf *b, const char *s, size_t n)
{
	buf_put(b, s, n);
	buf_put(b, "", 1);
}

struct ctf_class {
	char *name;
	char *fields; /* the TSDL of its payload struct's fields */
};

struct ctf_row {
	int64_t time;
	size_t seq;
	uint64_t tid;
	uint32_t id;
	uint32_t pid;
	uint32_t lwpid;
	int32_t cpu;
	unsigned char *data; /* the payload */
	size_t len;
};

/* The class of an event type of the file being read. */
struct ctf_seen {
	const struct tnf_type *type;
	uint32_t id;
};

struct ctf_trace {
	char *dir;
	int dirfd;
	struct ctf_class *classes;
	size_t nclasses;
	/* types live as long as their file's handle: emptied at its end */
	struct ctf_seen *seen;
	size_t nseen;
	struct ctf_row *rows;
	size_t n;
	size_t cap;
};

/* How a slot of a given declared type is written. */
enum ctf_field {
	CF_INT,	       /* integer of the type's width */
	CF_FLOAT,      /* float or double */
	CF_TEXT,       /* inline non-scalar or unknown scalar: its description */
	CF_REF_TEXT,   /* reference: null or a string */
	CF_REF_STRUCT, /* reference to a record: null or a struct */
	CF_DEGRADED,   /* type unknown: null or the text the cooked output prints */
};

static enum ctf_field classify(const struct tnf_type *t, int depth)
{
	unsigned props = tnf_type_props(t);
	enum tnf_kind k = tnf_type_kind(t);

	if (props & TNF_PROP_SCALAR) {
		if (k == TNF_K_FLOAT32 || k == TNF_K_FLOAT64)
			return CF_FLOAT;
		return k >= TNF_K_CHAR && k <= TNF_K_UINT64 ? CF_INT : CF_TEXT;
	}
	if (!(props & TNF_PROP_TAGGED))
		return CF_TEXT;
	/* records nest as deep as the cooked output shows them */
	return k == TNF_K_STRUCT && depth < DUMP_MAX_NEST ? CF_REF_STRUCT : CF_REF_TEXT;
}

static unsigned int_bytes(enum tnf_kind k)
{
	switch (k) {
	case TNF_K_CHAR:
	case TNF_K_INT8:
	case TNF_K_UINT8:
		return 1;
	case TNF_K_INT16:
	case TNF_K_UINT16:
		return 2;
	case TNF_K_INT32:
	case TNF_K_UINT32:
		return 4;
	default:
		return 8;
	}
}

static bool int_signed(enum tnf_kind k)
{
	return k == TNF_K_INT8 || k == TNF_K_INT16 || k == TNF_K_INT32 || k == TNF_K_INT64;
}

/*
 * The declared type of slot @i of struct type @t, from the slot types
 * array of its type record (a derived type's layout is its base's).
 */
static int slot_type(struct tnf_file *f, const struct tnf_type *t, unsigned i,
		     const struct tnf_type **out)
{
	struct tnf_datum rec, types, ty;
	int err, hops;

	err = tnf_record_at(f, tnf_type_offset(t), &rec);
	for (hops = 0; !err && hops < DUMP_MAX_NEST; hops++) {
		if (!tnf_slot_named(f, rec, "tnf_slot_types", &types) && types.off) {
			err = tnf_element_get(f, types, i, &ty);
			if (err)
				return err;
			if (!ty.off || tnf_datum_kind(ty) != TNF_K_TYPE)
				return -TNF_ERR_BADTYPE;
			return tnf_type_of_record(f, ty, out);
		}
		err = tnf_slot_named(f, rec, "tnf_derived_base", &rec);
		if (!err && !rec.off)
			err = -TNF_ERR_BADTYPE;
	}
	return err ? err : -TNF_ERR_BADTYPE;
}

/* A datum standing for type @t, to ask libtnf for its slot names. */
static struct tnf_datum type_datum(const struct tnf_type *t)
{
	struct tnf_datum d = {1, t};

	return d;
}

/*
 * How slot @i of struct type @t is written, with its declared type in *st
 * (NULL if degraded).  It is decided from the type alone, so the metadata
 * and every payload agree.  The cooked pass that judged the file never
 * reads declared types, so one that cannot be read, or an inline one
 * libtnf does not store as declared (its values could not fill the
 * declared field), degrades the field instead of failing the file.
 */
static enum ctf_field field_of(struct tnf_file *f, const struct tnf_type *t, unsigned i, int depth,
			       const struct tnf_type **st)
{
	struct tnf_datum v;
	enum ctf_field cf;

	if (slot_type(f, t, i, st))
		goto degraded;
	cf = classify(*st, depth);
	if (cf == CF_REF_TEXT || cf == CF_REF_STRUCT)
		return cf;
	/* an inline slot's datum carries libtnf's idea of its type */
	if (tnf_slot_get(f, type_datum(t), i, &v) || !v.off || v.type != *st)
		goto degraded;
	return cf;
degraded:
	*st = NULL;
	return CF_DEGRADED;
}

/* Field names of one struct, to keep them distinct. */
struct names {
	char **v;
	unsigned n;
};

static void names_free(struct names *nm)
{
	while (nm->n)
		free(nm->v[--nm->n]);
	free(nm->v);
}

static bool names_has(const struct names *nm, const char *s)
{
	unsigned i;

	for (i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], s))
			return true;
	return false;
}

/*
 * "_" + @name with every character that is not allowed in a TSDL
 * identifier made '_', then @suffix; a name taken already gets "_<n>".
 */
static char *field_name(struct names *nm, const char *name, const char *suffix)
{
	size_t i, len = strlen(name);
	char *s, *t, **nv;
	unsigned k;

	s = malloc(len + strlen(suffix) + 2);
	if (!s)
		return NULL;
	s[0] = '_';
	for (i = 0; i < len; i++) {
		char c = name[i];

		s[i + 1] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					   (c >= '0' && c <= '9') || c == '_'
				   ? c
				   : '_';
	}
	strcpy(s + len + 1, suffix);
	for (k = 2; names_has(nm, s) && k < 100000; k++) {
		if (asprintf(&t, "%.*s_%u%s", (int)(len + 1), s, k, suffix) < 0) {
			free(s);
			return NULL;
		}
		if (!names_has(nm, t)) {
			free(s);
			s = t;
			break;
		}
		free(t);
	}
	nv = nm->n < CTF_MAX_FIELDS ? realloc(nm->v, (nm->n + 1) * sizeof(*nm->v)) : NULL;
	if (!nv) {
		free(s);
		return NULL;
	}
	nm->v = nv;
	nm->v[nm->n++] = s;
	return s;
}

static int decl_fields(FILE *m, struct tnf_file *f, const struct tnf_type *t, unsigned from,
		       int depth);

/* Fields of the event payload are two tabs in; records one more each. */
static void indent(FILE *m, int depth)
{
	int i;

	for (i = 0; i < depth + 2; i++)
		fputc('\t', m);
}

static void decl_int(FILE *m, const struct tnf_type *t)
{
	enum tnf_kind k = tnf_type_kind(t);

	fprintf(m, "integer { size = %u; align = 8; signed = %s;", int_bytes(k) * 8,
		int_signed(k) ? "true" : "false");
	if (k == TNF_K_CHAR)
		fputs(" encoding = UTF8;", m);
	if (tnf_type_props(t) & TNF_PROP_OPAQUE)
		fputs(" base = 16;", m);
	fputs(" }", m);
}

/* The TSDL declaration of one slot, written as @cf, of declared type @t. */
static int decl_slot(FILE *m, struct tnf_file *f, enum ctf_field cf, const struct tnf_type *t,
		     struct names *nm, const char *name, int depth)
{
	char *fname, *tag;
	int err = 0;

	fname = field_name(nm, name, "");
	if (!fname)
		return -TNF_ERR_NOMEM;
	indent(m, depth);
	switch (cf) {
	case CF_INT:
		decl_int(m, t);
		break;
	case CF_FLOAT:
		fputs(tnf_type_kind(t) == TNF_K_FLOAT32 ? "floating_point { exp_dig = 8; "
							  "mant_dig = 24; align = 8; }"
							: "floating_point { exp_dig = 11; "
							  "mant_dig = 53; align = 8; }",
		      m);
		break;
	case CF_TEXT:
		fputs("string", m);
		break;
	case CF_REF_TEXT:
	case CF_REF_STRUCT:
	case CF_DEGRADED:
		tag = field_name(nm, name, "_ref");
		if (!tag)
			return -TNF_ERR_NOMEM;
		fprintf(m,
			"enum : integer { size = 8; align = 8; signed = false; } "
			"{ null = 0, value = 1 } %s;\n",
			tag);
		indent(m, depth);
		fprintf(m, "variant <%s> { struct { } null; ", tag);
		if (cf != CF_REF_STRUCT) {
			fputs("string value; }", m);
			break;
		}
		fputs("struct {\n", m);
		err = decl_fields(m, f, t, 0, depth + 1);
		indent(m, depth);
		fputs("} value; }", m);
		break;
	}
	fprintf(m, " %s;\n", fname);
	return err;
}

/* The slots @from.. of struct type @t, tnf_tag left out. */
static int decl_fields(FILE *m, struct tnf_file *f, const struct tnf_type *t, unsigned from,
		       int depth)
{
	struct tnf_datum d = type_datum(t);
	unsigned i, n = tnf_slot_count(d);
	struct names nm = {NULL, 0};
	const struct tnf_type *st;
	enum ctf_field cf;
	int err = 0;

	for (i = from; !err && i < n; i++) {
		if (!strcmp(tnf_slot_name(d, i), "tnf_tag"))
			continue;
		cf = field_of(f, t, i, depth, &st);
		err = decl_slot(m, f, cf, st, &nm, tnf_slot_name(d, i), depth);
	}
	names_free(&nm);
	return err;
}

/*
 * An integer of declared type @t.  The field has its width whatever
 * happens: a value that cannot be read (a damaged record) is written as 0,
 * as a NULL has no place in a plain integer.
 */
static void put_int(struct buf *b, struct tnf_file *f, const struct tnf_type *t, bool ok,
		    struct tnf_datum v)
{
	unsigned n = int_bytes(tnf_type_kind(t));
	int64_t x = 0;
	uint32_t u32;
	uint16_t u16;
	uint8_t u8;

	if (!ok || v.type != t || tnf_get_int(f, v, &x))
		x = 0;
	/* host order: the metadata declares the host's byte order */
	if (n == 1) {
		u8 = (uint8_t)x;
		buf_put(b, &u8, 1);
	} else if (n == 2) {
		u16 = (uint16_t)x;
		buf_put(b, &u16, 2);
	} else if (n == 4) {
		u32 = (uint32_t)x;
		buf_put(b, &u32, 4);
	} else {
		buf_put(b, &x, 8);
	}
}

/* A float or double of declared type @t; unreadable is 0, as put_int(). */
static void put_float(struct buf *b, struct tnf_file *f, const struct tnf_type *t, bool ok,
		      struct tnf_datum v)
{
	double x = 0;
	float y;

	if (!ok || v.type != t || tnf_get_float(f, v, &x))
		x = 0;
	if (tnf_type_kind(t) == TNF_K_FLOAT32) {
		y = (float)x;
		buf_put(b, &y, 4);
	} else {
		buf_put(b, &x, 8);
	}
}

/* What the cooked output prints for a value that has no CTF shape. */
static int put_text(struct buf *b, struct tnf_file *f, struct tnf_datum v)
{
	const struct tnf_type *t;
	const char *s;
	char *text;
	size_t len;
	int err;

	if (tnf_type_props(v.type) & TNF_PROP_SCALAR) {
		buf_text(b, "unhandled scalar", 16);
		return 0;
	}
	if (!(tnf_type_props(v.type) & TNF_PROP_TAGGED))
		err = asprintf(&text, "<inline %s>", tnf_datum_type_name(v));
	else if (tnf_datum_kind(v) == TNF_K_STRING) {
		s = tnf_get_chars(f, v, &len);
		if (!s)
			return -TNF_ERR_BADRECORD;
		buf_text(b, s, len);
		return 0;
	} else if (tnf_datum_kind(v) == TNF_K_TYPE) {
		err = tnf_type_of_record(f, v, &t);
		if (err)
			return err;
		buf_text(b, tnf_type_name(t), strlen(tnf_type_name(t)));
		return 0;
	} else if (tnf_datum_kind(v) == TNF_K_STRUCT)
		err = asprintf(&text, "{ ... }");
	else
		err = asprintf(&text, "<%s>", tnf_datum_type_name(v));
	if (err < 0)
		return -TNF_ERR_NOMEM;
	buf_text(b, text, strlen(text));
	free(text);
	return 0;
}

/*
 * What the cooked output prints for @v, for a degraded field.  A char
 * prints as itself and may be NUL, which would end the CTF string early.
 */
static int put_cooked(struct buf *b, struct tnf_file *f, struct tnf_datum v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	int err;

	m = open_memstream(&text, &len);
	if (!m)
		return -TNF_ERR_NOMEM;
	err = cooked_value(m, f, v);
	if (fclose(m) && !err)
		err = -TNF_ERR_NOMEM;
	if (!err)
		buf_text(b, text, strnlen(text, len));
	free(text);
	return err;
}

static int put_fields(struct buf *b, struct tnf_file *f, const struct tnf_type *t,
		      struct tnf_datum rec, unsigned from, int depth);

/* The value @v of a slot declared with type @t, as decl_slot() laid it out. */
/*
 * Slot value @v (@ok: libtnf gave it) of a field written as @cf with
 * declared type @t, laid out as decl_slot() declared it.  Only running out
 * of memory fails: a value that cannot be read is degraded (null, "" or
 * 0), as the file was already judged readable.
 */
static int put_slot(struct buf *b, struct tnf_file *f, enum ctf_field cf, const struct tnf_type *t,
		    bool ok, struct tnf_datum v, int depth)
{
	struct buf tb = {NULL, 0, 0, false};
	uint8_t tag;
	int err = 0;

	switch (cf) {
	case CF_INT:
		put_int(b, f, t, ok, v);
		return 0;
	case CF_FLOAT:
		put_float(b, f, t, ok, v);
		return 0;
	case CF_TEXT:
		err = ok && v.off ? put_text(b, f, v) : -TNF_ERR_BADRECORD;
		if (err == -TNF_ERR_NOMEM)
			return err;
		if (err)
			buf_text(b, "", 0);
		return 0;
	case CF_REF_STRUCT:
		/*
		 * A record of another type than the slot declares has no
		 * place in the declared struct: it goes out as NULL rather
		 * than misread.
		 */
		tag = ok && v.off && v.type == t;
		buf_put(b, &tag, 1);
		return tag ? put_fields(b, f, t, v, 0, depth + 1) : 0;
	default:
		break;
	}
	/* text built aside: an unreadable value becomes NULL, not half a string */
	if (ok && v.off) {
		if (cf == CF_REF_TEXT && (tnf_type_props(v.type) & TNF_PROP_TAGGED))
			err = put_text(&tb, f, v);
		else
			err = put_cooked(&tb, f, v);
	}
	if (tb.oom || err == -TNF_ERR_NOMEM) {
		free(tb.p);
		return -TNF_ERR_NOMEM;
	}
	tag = ok && v.off && !err;
	buf_put(b, &tag, 1);
	if (tag)
		buf_put(b, tb.p, tb.n);
	free(tb.p);
	return 0;
}

static int put_fields(struct buf *b, struct tnf_file *f, const struct tnf_type *t,
		      struct tnf_datum rec, unsigned from, int depth)
{
	struct tnf_datum d = type_datum(t), v;
	unsigned i, n = tnf_slot_count(d);
	const struct tnf_type *st;
	enum ctf_field cf;
	int err = 0;

	for (i = from; !err && i < n; i++) {
		if (!strcmp(tnf_slot_name(d, i), "tnf_tag"))
			continue;
		cf = field_of(f, t, i, depth, &st);
		err = tnf_slot_get(f, rec, i, &v);
		err = put_slot(b, f, cf, st, !err, v, depth);
	}
	return err;
}

/* The id of the class of @ev's probe name and payload layout (added). */
static int new_class_of(struct ctf_trace *c, struct tnf_file *f, const struct tnf_event *ev,
			uint32_t *id)
{
	struct ctf_class *v;
	char *fields = NULL;
	size_t len, i;
	FILE *m;
	int err;

	m = open_memstream(&fields, &len);
	if (!m)
		return -TNF_ERR_NOMEM;
	err = decl_fields(m, f, ev->record.type, ev->first_arg, 0);
	if (fclose(m) && !err)
		err = -TNF_ERR_NOMEM;
	for (i = 0; !err && i < c->nclasses; i++) {
		if (!strcmp(c->classes[i].name, ev->probe_name) &&
		    !strcmp(c->classes[i].fields, fields)) {
			free(fields);
			*id = (uint32_t)i;
			return 0;
		}
	}
	v = err ? NULL : realloc(c->classes, (c->nclasses + 1) * sizeof(*v));
	if (!v || !(v[c->nclasses].name = strdup(ev->probe_name))) {
		free(fields);
		if (v)
			c->classes = v;
		return err ? err : -TNF_ERR_NOMEM;
	}
	c->classes = v;
	v[c->nclasses].fields = fields;
	*id = (uint32_t)c->nclasses++;
	return 0;
}

/* class_of() through the classes already found for this file's types. */
static int class_of(struct ctf_trace *c, struct tnf_file *f, const struct tnf_event *ev,
		    uint32_t *id)
{
	struct ctf_seen *v;
	size_t i;
	int err;

	for (i = 0; i < c->nseen; i++) {
		if (c->seen[i].type == ev->record.type) {
			*id = c->seen[i].id;
			return 0;
		}
	}
	err = new_class_of(c, f, ev, id);
	if (err)
		return err;
	v = realloc(c->seen, (c->nseen + 1) * sizeof(*v));
	if (!v)
		return -TNF_ERR_NOMEM;
	c->seen = v;
	v[c->nseen].type = ev->record.type;
	v[c->nseen++].id = *id;
	return 0;
}

void ctf_file_end(struct ctf_trace *c)
{
	free(c->seen);
	c->seen = NULL;
	c->nseen = 0;
}

static struct ctf_row *new_row(struct ctf_trace *c)
{
	struct ctf_row *r;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;

		r = realloc(c->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		c->rows = r;
		c->cap = cap;
	}
	return &c->rows[c->n];
}

int ctf_event(struct ctf_trace *c, struct tnf_file *f, const struct tnf_event *ev)
{
	struct buf b = {NULL, 0, 0, false};
	struct ctf_row *r;
	int err;

	r = new_row(c);
	if (!r)
		return -TNF_ERR_NOMEM;
	err = class_of(c, f, ev, &r->id);
	if (!err)
		err = put_fields(&b, f, ev->record.type, ev->record, ev->first_arg, 0);
	if (!err && b.oom)
		err = -TNF_ERR_NOMEM;
	if (err) {
		free(b.p);
		return err;
	}
	r->data = b.p;
	r->len = b.n;
	r->time = ev->time;
	r->seq = c->n;
	r->tid = ev->tid;
	r->pid = ev->pid;
	r->lwpid = ev->lwpid;
	r->cpu = ev->cpuid;
	c->n++;
	return 0;
}

static bool dir_empty(int fd)
{
	struct dirent *e;
	bool empty = true;
	DIR *d;
	int dfd = dup(fd);

	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return false;
	}
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

int ctf_new(const char *dir, struct ctf_trace **out)
{
	struct ctf_trace *c;
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "tnfdump: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "tnfdump: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	/* never mix with, or overwrite, another trace */
	if (!dir_empty(fd)) {
		fprintf(stderr, "tnfdump: %s: directory is not empty\n", dir);
		close(fd);
		return 1;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		fputs("tnfdump: out of memory\n", stderr);
		free(c);
		close(fd);
		return 1;
	}
	c->dirfd = fd;
	*out = c;
	return 0;
}

void ctf_free(struct ctf_trace *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		free(c->rows[i].data);
	for (i = 0; i < c->nclasses; i++) {
		free(c->classes[i].name);
		free(c->classes[i].fields);
	}
	free(c->rows);
	free(c->classes);
	free(c->seen);
	free(c->dir);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c);
}

static FILE *create_in(struct ctf_trace *c, const char *name)
{
	int fd = openat(c->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	FILE *fp;

	if (fd < 0)
		return NULL;
	fp = fdopen(fd, "w");
	if (!fp)
		close(fd);
	return fp;
}

static void tsdl_string(FILE *m, const char *s)
{
	fputc('"', m);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', m);
		if ((unsigned char)*s < 0x20)
			fprintf(m, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, m);
	}
	fputc('"', m);
}

static void write_metadata(struct ctf_trace *c, FILE *m)
{
	size_t i;

	fprintf(m,
		"/* CTF 1.8 */\n\n"
		"/* written by tnfdump from TNF trace files */\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n"
		"trace {\n"
		"\tmajor = 1;\n"
		"\tminor = 8;\n"
		"\tbyte_order = %s;\n"
		"\tpacket.header := struct {\n"
		"\t\tuint32_t magic;\n"
		"\t\tuint32_t stream_id;\n"
		"\t};\n"
		"};\n\n"
		"env {\n"
		"\tdomain = \"tnf\";\n"
		"\ttracer_name = \"tnfdump\";\n"
		"};\n\n"
		"clock {\n"
		"\tname = monotonic;\n"
		"\tdescription = \"TNF event time: the writer's monotonic clock, ns\";\n"
		"\tfreq = 1000000000;\n"
		"\toffset = 0;\n"
		"};\n\n"
		"typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n\n"
		"stream {\n"
		"\tid = 0;\n"
		"\tpacket.context := struct {\n"
		"\t\tuint64_clock_monotonic_t timestamp_begin;\n"
		"\t\tuint64_clock_monotonic_t timestamp_end;\n"
		"\t\tuint64_t content_size;\n"
		"\t\tuint64_t packet_size;\n"
		"\t};\n"
		"\tevent.header := struct {\n"
		"\t\tuint32_t id;\n"
		"\t\tuint64_clock_monotonic_t timestamp;\n"
		"\t};\n"
		"\tevent.context := struct {\n"
		"\t\tuint32_t _pid;\n"
		"\t\tuint32_t _lwpid;\n"
		"\t\tuint64_t _tid;\n"
		"\t\tint32_t _cpu;\n"
		"\t};\n"
		"};\n",
		__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "le" : "be");
	for (i = 0; i < c->nclasses; i++) {
		fputs("\nevent {\n\tname = ", m);
		tsdl_string(m, c->classes[i].name);
		fprintf(m, ";\n\tid = %zu;\n\tstream_id = 0;\n\tfields := struct {\n%s\t};\n};\n",
			i, c->classes[i].fields);
	}
}

/* One packet: rows [@from, @to), header and context first. */
static void write_packet(FILE *s, const struct ctf_row *rows, size_t from, size_t to)
{
	uint64_t ctx[4], bytes = CTF_PACKET_HEADER;
	uint32_t hdr[2] = {CTF_MAGIC, 0}, u32;
	size_t i;

	for (i = from; i < to; i++)
		bytes += 32 + rows[i].len;
	ctx[0] = from < to ? (uint64_t)rows[from].time : 0;
	ctx[1] = from < to ? (uint64_t)rows[to - 1].time : 0;
	ctx[2] = bytes * 8; /* content_size and packet_size are in bits */
	ctx[3] = bytes * 8;
	fwrite(hdr, sizeof(hdr), 1, s);
	fwrite(ctx, sizeof(ctx), 1, s);
	for (i = from; i < to; i++) {
		const struct ctf_row *r = &rows[i];
		uint64_t ts = (uint64_t)r->time;

		fwrite(&r->id, 4, 1, s);
		fwrite(&ts, 8, 1, s);
		fwrite(&r->pid, 4, 1, s);
		fwrite(&r->lwpid, 4, 1, s);
		fwrite(&r->tid, 8, 1, s);
		u32 = (uint32_t)r->cpu;
		fwrite(&u32, 4, 1, s);
		if (r->len) /* an event without fields has no data buffer */
			fwrite(r->data, 1, r->len, s);
	}
}

static void write_stream(struct ctf_trace *c, FILE *s)
{
	size_t from = 0, i, bytes;

	/* an empty trace still gets one (empty) packet */
	do {
		bytes = 0;
		for (i = from; i < c->n && bytes < CTF_PACKET_BYTES; i++)
			bytes += 32 + c->rows[i].len;
		write_packet(s, c->rows, from, i);
		from = i;
	} while (from < c->n);
}

static int row_cmp(const void *a, const void *b)
{
	const struct ctf_row *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int close_checked(struct ctf_trace *c, FILE *fp, const char *name)
{
	if (ferror(fp) | fclose(fp)) {
		fprintf(stderr, "tnfdump: %s/%s: %s\n", c->dir, name, strerror(errno));
		return 1;
	}
	return 0;
}

int ctf_write(struct ctf_trace *c)
{
	FILE *m, *s;
	int status;

	/* no rows: rows is NULL, which qsort must not be given */
	if (c->n)
		qsort(c->rows, c->n, sizeof(*c->rows), row_cmp);
	m = create_in(c, "metadata");
	if (!m) {
		fprintf(stderr, "tnfdump: %s/metadata: %s\n", c->dir, strerror(errno));
		return 1;
	}
	write_metadata(c, m);
	status = close_checked(c, m, "metadata");
	s = create_in(c, "stream_0");
	if (!s) {
		fprintf(stderr, "tnfdump: %s/stream_0: %s\n", c->dir, strerror(errno));
		return 1;
	}
	write_stream(c, s);
	return status | close_checked(c, s, "stream_0");
}
