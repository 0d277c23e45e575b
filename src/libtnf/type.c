// SPDX-License-Identifier: BSD-2-Clause
/*
 * type.c - the type cache of a file.  A type is a record whose tag is its
 * metatype; the root type is self-tagged.  From the type records we derive
 * properties (own, by name, and inherited along derived_base), the data
 * kind, the storage size and alignment, and the slot layout.  Every
 * construction is bounded: types being built are already in the cache (a
 * cycle sees a partial type instead of recursing), the nesting depth and
 * the number of types are limited.
 */
#include <stdlib.h>
#include <string.h>

#include "tnf_impl.h"

/* Type header words fixed by the TNF ABI. */
#define TYPE_NAME	  4  /* all types */
#define TYPE_PROPERTIES	  8  /* all types */
#define TYPE_SLOT_TYPES	  12 /* struct and array types */
#define TYPE_DERIVED_BASE 12 /* derived types */
#define TYPE_TYPE_SIZE	  16 /* struct types (tagged by the root) */
#define TYPE_HEADER_SIZE  16 /* array types */
#define ARRAY_HDR	  8  /* {tag, self_size} */

static const struct {
	const char *name;
	unsigned prop;
} prop_names[] = {
	{"tnf_tagged", TNF_PROP_TAGGED}, {"tnf_inline", TNF_PROP_INLINE},
	{"tnf_scalar", TNF_PROP_SCALAR}, {"tnf_derived", TNF_PROP_DERIVED},
	{"tnf_array", TNF_PROP_ARRAY},	 {"tnf_string", TNF_PROP_STRING},
	{"tnf_struct", TNF_PROP_STRUCT}, {"tnf_type", TNF_PROP_TYPE},
	{"tnf_opaque", TNF_PROP_OPAQUE},
};

static const struct {
	const char *name;
	enum tnf_kind kind;
	uint32_t size;
} scalar_names[] = {
	{"tnf_char", TNF_K_CHAR, 1},	   {"tnf_int8", TNF_K_INT8, 1},
	{"tnf_uint8", TNF_K_UINT8, 1},	   {"tnf_int16", TNF_K_INT16, 2},
	{"tnf_uint16", TNF_K_UINT16, 2},   {"tnf_int32", TNF_K_INT32, 4},
	{"tnf_uint32", TNF_K_UINT32, 4},   {"tnf_int64", TNF_K_INT64, 8},
	{"tnf_uint64", TNF_K_UINT64, 8},   {"tnf_float32", TNF_K_FLOAT32, 4},
	{"tnf_float64", TNF_K_FLOAT64, 8},
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static unsigned prop_of_name(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prop_names); i++)
		if (strlen(prop_names[i].name) == len && !memcmp(prop_names[i].name, name, len))
			return prop_names[i].prop;
	return 0;
}

static int scalar_index(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(scalar_names); i++)
		if (!strcmp(scalar_names[i].name, name))
			return (int)i;
	return -1;
}

static size_t hash_off(uint32_t off, size_t size)
{
	return ((off >> 2) * 2654435761u) & (size - 1);
}

static struct tnf_type *lookup(const struct tnf_file *f, uint32_t off)
{
	size_t i;

	if (!f->tab)
		return NULL;
	for (i = hash_off(off, f->tab_size); f->tab[i]; i = (i + 1) & (f->tab_size - 1))
		if (f->tab[i]->off == off)
			return f->tab[i];
	return NULL;
}

static int insert(struct tnf_file *f, struct tnf_type *t)
{
	struct tnf_type **old = f->tab;
	size_t old_size = f->tab_size, i, j;

	if ((f->ntypes + 1) * 2 > f->tab_size) {
		size_t size = old_size ? old_size * 2 : 64;

		f->tab = calloc(size, sizeof(*f->tab));
		if (!f->tab) {
			f->tab = old;
			return -TNF_ERR_NOMEM;
		}
		f->tab_size = size;
		for (i = 0; i < old_size; i++) {
			if (!old[i])
				continue;
			for (j = hash_off(old[i]->off, size); f->tab[j]; j = (j + 1) & (size - 1))
				;
			f->tab[j] = old[i];
		}
		free(old);
	}
	for (i = hash_off(t->off, f->tab_size); f->tab[i]; i = (i + 1) & (f->tab_size - 1))
		;
	f->tab[i] = t;
	f->ntypes++;
	return 0;
}

static void type_free(struct tnf_type *t)
{
	unsigned i;

	if (t->own_slots) {
		for (i = 0; i < t->nslots; i++)
			free((char *)t->slots[i].name);
		free(t->slots);
	}
	free(t->name);
	free(t);
}

void tnf_types_free(struct tnf_file *f)
{
	size_t i;

	for (i = 0; i < f->tab_size; i++)
		if (f->tab[i])
			type_free(f->tab[i]);
	free(f->tab);
	f->tab = NULL;
	f->tab_size = 0;
	f->ntypes = 0;
}

/* Elements of the array of references at @rec: count and first cell. */
static int ref_array(struct tnf_file *f, uint32_t rec, uint32_t *count)
{
	uint32_t self_size;

	if (!tnf_rd32(f, (uint64_t)rec + 4, &self_size) || self_size < ARRAY_HDR ||
	    (uint64_t)rec + self_size > f->end)
		return tnf_set_err(f, TNF_ERR_BADTYPE, rec);
	*count = (self_size - ARRAY_HDR) / 4;
	return 0;
}

int tnf_slot_typed(struct tnf_file *f, uint32_t rec, const struct tnf_type *t, const char *tname,
		   const struct tnf_slot **slot)
{
	unsigned i;

	(void)f;
	(void)rec;
	*slot = NULL;
	if (!t)
		return -TNF_ERR_NOTFOUND;
	t = tnf_layout(t);
	if (!t->slots_done)
		return -TNF_ERR_NOTFOUND;
	for (i = 0; i < t->nslots; i++) {
		if (t->slots[i].type && !strcmp(tnf_type_name(t->slots[i].type), tname)) {
			*slot = &t->slots[i];
			return 0;
		}
	}
	return -TNF_ERR_NOTFOUND;
}

/* An inline u32 slot, found by its type name, of type record @t. */
static bool slot_u32(struct tnf_file *f, const struct tnf_type *t, const char *tname, uint32_t *v)
{
	const struct tnf_slot *s;

	if (tnf_slot_typed(f, t->off, t->meta, tname, &s) || s->ref || s->size != 4)
		return false;
	return tnf_rd32(f, (uint64_t)t->off + s->offset, v);
}

/* The record a reference slot, found by its type name, of @t refers to. */
static int slot_ref(struct tnf_file *f, const struct tnf_type *t, const char *tname, uint32_t *rec)
{
	const struct tnf_slot *s;

	*rec = 0;
	if (tnf_slot_typed(f, t->off, t->meta, tname, &s) || !s->ref)
		return 0;
	return tnf_resolve(f, t->off + s->offset, rec);
}

/* Properties named by the type record at @off: its own name and the
 * names in its properties array (no inheritance). */
static int own_props(struct tnf_file *f, uint32_t off, unsigned *props)
{
	uint32_t arr, n, i, elt, name;
	const char *s;
	size_t len;
	int err;

	err = tnf_resolve(f, off + TYPE_NAME, &name);
	if (!err && !name)
		err = tnf_set_err(f, TNF_ERR_BADTYPE, off);
	if (!err)
		err = tnf_string_chars(f, name, &s, &len);
	if (err)
		return err;
	*props = prop_of_name(s, len);
	err = tnf_resolve(f, off + TYPE_PROPERTIES, &arr);
	if (err || !arr)
		return err;
	err = ref_array(f, arr, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		err = tnf_resolve(f, arr + ARRAY_HDR + 4 * i, &elt);
		if (!err && !elt)
			err = tnf_set_err(f, TNF_ERR_BADTYPE, arr);
		if (!err)
			err = tnf_resolve(f, elt + TYPE_NAME, &name);
		if (!err && !name)
			err = tnf_set_err(f, TNF_ERR_BADTYPE, elt);
		if (!err)
			err = tnf_string_chars(f, name, &s, &len);
		if (err)
			return err;
		*props |= prop_of_name(s, len);
	}
	return 0;
}

/*
 * Properties of the type at @off with those inherited along derived_base,
 * its ultimate base and the base's own properties.  Read from the records
 * directly (not from the cache), so that it is right even inside a cycle.
 */
static int inherited_props(struct tnf_file *f, uint32_t off, unsigned *props, uint32_t *base,
			   unsigned *base_props)
{
	uint32_t cur = off, next;
	unsigned p, depth;
	int err;

	*props = 0;
	for (depth = 0; depth < MAX_TYPE_DEPTH; depth++) {
		err = own_props(f, cur, &p);
		if (err)
			return err;
		*props |= p;
		*base = cur;
		*base_props = p;
		if (!(p & TNF_PROP_DERIVED))
			return 0;
		err = tnf_resolve(f, cur + TYPE_DERIVED_BASE, &next);
		if (err)
			return err;
		if (!next)
			return 0; /* tnf_derived itself */
		cur = next;
	}
	return tnf_set_err(f, TNF_ERR_BADTYPE, off);
}

static int init_slots(struct tnf_file *f, struct tnf_type *t)
{
	uint32_t arr, n, i, elt, off = 0, size, align;
	const struct tnf_type *et;
	struct tnf_slot *slots;
	int err;

	t->slots_done = true; /* a cycle back to us sees no slots */
	err = tnf_resolve(f, t->off + TYPE_SLOT_TYPES, &arr);
	if (err || !arr)
		return err; /* abstract: no slots */
	err = ref_array(f, arr, &n);
	if (err)
		return err;
	if (n > MAX_SLOTS)
		return tnf_set_err(f, TNF_ERR_BADTYPE, arr);
	slots = calloc(n ? n : 1, sizeof(*slots));
	if (!slots)
		return -TNF_ERR_NOMEM;
	for (i = 0; i < n; i++) {
		err = tnf_resolve(f, arr + ARRAY_HDR + 4 * i, &elt);
		if (!err && !elt)
			err = tnf_set_err(f, TNF_ERR_BADTYPE, arr);
		if (!err)
			err = tnf_type_get(f, elt, &et);
		if (err)
			goto fail;
		if (et->props & TNF_PROP_TAGGED) {
			size = 4;
			align = 4;
			slots[i].ref = true;
		} else if ((et->props & TNF_PROP_INLINE) && et->size != TNF_SIZE_SELF &&
			   et->size > 0) {
			size = et->size;
			align = et->align;
		} else {
			err = tnf_set_err(f, TNF_ERR_BADTYPE, elt);
			goto fail;
		}
		off = (off + align - 1) & ~(align - 1);
		slots[i].offset = off;
		slots[i].size = size;
		slots[i].type = et;
		slots[i].name = strdup(tnf_type_name(et));
		if (!slots[i].name) {
			err = -TNF_ERR_NOMEM;
			goto fail;
		}
		off += size;
		if (off > (1u << 24)) {
			err = tnf_set_err(f, TNF_ERR_BADTYPE, t->off);
			goto fail;
		}
	}
	t->slots = slots;
	t->nslots = n;
	t->own_slots = true;

	return 0;
fail:
	for (i = 0; i < n; i++)
		free((char *)slots[i].name);
	free(slots);
	return err;
}

/* Slot names, from the optional slot_names array. */
static int slot_names(struct tnf_file *f, struct tnf_type *t)
{
	uint32_t names = 0, nnames = 0, i;
	int err;

	err = slot_ref(f, t, "tnf_slot_names", &names);
	if (!err && names)
		err = ref_array(f, names, &nnames);
	for (i = 0; !err && i < t->nslots && i < nnames; i++) {
		char *name;

		err = tnf_copy_string(f, names + ARRAY_HDR + 4 * i, &name);
		if (!err && name) {
			free((char *)t->slots[i].name);
			t->slots[i].name = name;
		}
	}
	return err;
}

/* Storage size (after base and slots are known). */
static uint32_t storage_size(struct tnf_file *f, const struct tnf_type *t)
{
	const struct tnf_type *bt = t->base;
	uint32_t v;
	unsigned i;
	int k;

	if (t->meta && t->meta->meta == t->meta) {
		/* a type whose metatype is the root carries its type_size */
		if (tnf_rd32(f, (uint64_t)t->off + TYPE_TYPE_SIZE, &v))
			return v;
		return 0;
	}
	k = scalar_index(tnf_type_name(bt));
	if (k >= 0)
		return scalar_names[k].size;
	if (slot_u32(f, bt, "tnf_type_size", &v))
		return v;
	for (i = 0; bt->slots_done && i < bt->nslots; i++)
		if (bt->slots[i].type && !strcmp(tnf_type_name(bt->slots[i].type), "tnf_self_size"))
			return TNF_SIZE_SELF;
	return 0;
}

/* Size and alignment; redone once the types it depends on are built. */
static void size_type(struct tnf_file *f, struct tnf_type *t)
{
	uint32_t v;

	t->size = storage_size(f, t);
	t->align = 4;
	if ((t->props & TNF_PROP_SCALAR) && slot_u32(f, t->base, "tnf_align", &v))
		t->align = v;
	if (t->align == 0 || t->align > 64 || (t->align & (t->align - 1)))
		t->align = 4;
}

/* Array header size and element type. */
static int array_info(struct tnf_file *f, struct tnf_type *t)
{
	uint32_t v, elt;
	int err;

	t->hdr_size = ARRAY_HDR;
	if (tnf_rd32(f, (uint64_t)t->off + TYPE_HEADER_SIZE, &v) && v >= ARRAY_HDR && v <= 256)
		t->hdr_size = v;
	err = slot_ref(f, t, "tnf_element_type", &elt);
	if (err || !elt)
		return err;
	return tnf_type_get(f, elt, &t->elem);
}

/*
 * After an outermost construction every type it reached is built, so what
 * depends on other types being complete (sizes, slot names, element types:
 * a cycle saw them partial) is done now, for every type not yet finished.
 * Finishing may build more types; the loop goes on until none is left.
 */
static void finish_pending(struct tnf_file *f)
{
	bool again = true;
	size_t i;

	if (f->finishing)
		return;
	f->finishing = true;
	while (again) {
		again = false;
		for (i = 0; i < f->tab_size; i++) {
			struct tnf_type *t = f->tab[i];

			if (!t || !t->done || t->sized)
				continue;
			t->sized = true;
			again = true;
			size_type(f, t);
			if (t->own_slots && slot_names(f, t))
				t->failed = true;
			if (t->base == t && (t->props & TNF_PROP_ARRAY) && array_info(f, t))
				t->failed = true;
		}
	}
	f->finishing = false;
}

static enum tnf_kind kind_of(unsigned props, const char *name)
{
	int k;

	if (props & TNF_PROP_SCALAR) {
		k = scalar_index(name);
		return k >= 0 ? scalar_names[k].kind : TNF_K_SCALAR;
	}
	if (props & TNF_PROP_ARRAY)
		return strcmp(name, "tnf_string") ? TNF_K_ARRAY : TNF_K_STRING;
	if (props & TNF_PROP_TYPE)
		return TNF_K_TYPE;
	if (props & TNF_PROP_STRUCT)
		return TNF_K_STRUCT;
	return TNF_K_UNKNOWN;
}

static int build(struct tnf_file *f, struct tnf_type *t)
{
	uint32_t meta, boff;
	unsigned base_props;
	const struct tnf_type *b;
	char *base_name = NULL;
	int err;

	err = tnf_copy_string(f, t->off + TYPE_NAME, &t->name);
	if (err)
		return err;
	if (!t->name)
		return tnf_set_err(f, TNF_ERR_BADTYPE, t->off);
	err = inherited_props(f, t->off, &t->props, &boff, &base_props);
	if (err)
		return err;
	if (boff != t->off) {
		err = tnf_copy_string(f, boff + TYPE_NAME, &base_name);
		if (err)
			return err;
	}
	t->kind = kind_of(base_props, base_name ? base_name : t->name);
	free(base_name);

	err = tnf_resolve(f, t->off, &meta);
	if (err)
		return err;
	if (!meta)
		return tnf_set_err(f, TNF_ERR_BADTYPE, t->off);
	if (meta == t->off) {
		t->meta = t;
	} else {
		err = tnf_type_get(f, meta, &t->meta);
		if (err)
			return err;
	}
	t->base = t;
	if (boff != t->off) {
		err = tnf_type_get(f, boff, &b);
		if (err)
			return err;
		t->base = b;
	}

	/* a derived type has its base's layout (see tnf_layout()) */
	if (t->base == t && (t->props & (TNF_PROP_STRUCT | TNF_PROP_ARRAY))) {
		err = init_slots(f, t);
		if (err)
			return err;
	}
	size_type(f, t);

	return 0;
}

int tnf_type_get(struct tnf_file *f, uint32_t off, const struct tnf_type **out)
{
	struct tnf_type *t;
	uint32_t v;
	int err;

	t = lookup(f, off);
	if (t) {
		if (t->failed)
			return tnf_set_err(f, TNF_ERR_BADTYPE, off);
		*out = t;
		return 0;
	}
	if (!tnf_rd32(f, off, &v) ||
	    ((v & REF_KIND_MASK) != REF_TAG && (v & REF_KIND_MASK) != REF_PAIR))
		return tnf_set_err(f, TNF_ERR_BADTYPE, off);
	if (f->ntypes >= MAX_TYPES || f->depth >= MAX_TYPE_DEPTH)
		return tnf_set_err(f, TNF_ERR_BADTYPE, off);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -TNF_ERR_NOMEM;
	t->off = off;
	err = insert(f, t);
	if (err) {
		free(t);
		return err;
	}
	f->depth++;
	err = build(f, t);
	f->depth--;
	if (err) {
		t->failed = true; /* stays cached, so a later lookup fails fast */
		return err;
	}
	t->done = true;
	if (f->depth == 0)
		finish_pending(f);
	if (t->failed)
		return tnf_set_err(f, TNF_ERR_BADTYPE, off);
	*out = t;
	return 0;
}

int tnf_record_type(struct tnf_file *f, uint32_t rec, const struct tnf_type **out)
{
	uint32_t tag;
	int err;

	err = tnf_resolve(f, rec, &tag);
	if (err)
		return err;
	if (!tag)
		return tnf_set_err(f, TNF_ERR_BADRECORD, rec);
	return tnf_type_get(f, tag, out);
}

const char *tnf_type_name(const struct tnf_type *t)
{
	return t && t->name ? t->name : "";
}

enum tnf_kind tnf_type_kind(const struct tnf_type *t)
{
	return t ? t->kind : TNF_K_UNKNOWN;
}

unsigned tnf_type_props(const struct tnf_type *t)
{
	return t ? t->props : 0;
}

uint32_t tnf_type_size(const struct tnf_type *t)
{
	return t ? t->size : 0;
}

const struct tnf_type *tnf_type_meta(const struct tnf_type *t)
{
	return t ? t->meta : NULL;
}

uint32_t tnf_type_offset(const struct tnf_type *t)
{
	return t ? t->off : 0;
}
