// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel probes: the running kernel's tracepoints, from tracefs.  Each
 * tracepoint's format file gives its record layout; the fields that have a
 * TNF type (integers, pointers as opaque, strings) become the probe's
 * arguments, the rest are left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktrace.h"

static const char *const tracefs_dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

static bool has_events(const char *dir)
{
	char p[128];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", dir);
	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/*
 * Where tracefs is; mounted at its usual place when it is not (as perf
 * and bpftrace need it too).  NULL if there is none.
 */
const char *kt_tracefs(void)
{
	size_t i;

	for (i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]); i++)
		if (has_events(tracefs_dirs[i]))
			return tracefs_dirs[i];
	if (!mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL) && has_events(tracefs_dirs[0]))
		return tracefs_dirs[0];
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	const struct kt_probe *x = a, *y = b;
	int c = strcmp(x->subsys, y->subsys);

	return c ? c : strcmp(x->event, y->event);
}

static int add_probe(struct kt_probe **v, unsigned long *n, unsigned long *cap, const char *subsys,
		     const char *event)
{
	struct kt_probe *nv;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		nv = realloc(*v, *cap * sizeof(**v));
		if (!nv)
			return -ENOMEM;
		*v = nv;
	}
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].subsys = strdup(subsys);
	(*v)[*n].event = strdup(event);
	if (!(*v)[*n].subsys || !(*v)[*n].event) {
		free((*v)[*n].subsys);
		free((*v)[*n].event);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

/* Every tracepoint under @tracefs/events, sorted by subsystem and name. */
int kt_probes_list(const char *tracefs, struct kt_probe **out, unsigned long *np)
{
	char path[PATH_MAX];
	struct kt_probe *v = NULL;
	unsigned long n = 0, cap = 0;
	struct dirent *s, *e;
	DIR *top, *sub;
	int err = 0;

	snprintf(path, sizeof(path), "%s/events", tracefs);
	top = opendir(path);
	if (!top)
		return -errno;
	while (!err && (s = readdir(top))) {
		/* ftrace's own events are not tracepoints a program attaches to */
		if (s->d_name[0] == '.' || !strcmp(s->d_name, "ftrace") || s->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", tracefs, s->d_name);
		sub = opendir(path);
		if (!sub)
			continue;
		while (!err && (e = readdir(sub)))
			if (e->d_name[0] != '.' && e->d_type == DT_DIR)
				err = add_probe(&v, &n, &cap, s->d_name, e->d_name);
		closedir(sub);
	}
	closedir(top);
	if (err) {
		kt_probes_free(v, n);
		return err;
	}
	qsort(v, n, sizeof(*v), by_name);
	*out = v;
	*np = n;
	return 0;
}

static uint8_t int_kind(unsigned int size, bool is_signed)
{
	switch (size) {
	case 1:
		return is_signed ? TNF_K_INT8 : TNF_K_UINT8;
	case 2:
		return is_signed ? TNF_K_INT16 : TNF_K_UINT16;
	case 4:
		return is_signed ? TNF_K_INT32 : TNF_K_UINT32;
	case 8:
		return is_signed ? TNF_K_INT64 : TNF_K_UINT64;
	}
	return 0;
}

static bool is_char_type(const char *type)
{
	return strstr(type, "char") != NULL;
}

/* A syscall argument that names something (what strace prints as a string). */
static bool is_name_arg(const char *name)
{
	static const char *const exact[] = {"type",	    "special",	     "uargs", "_type",
					    "_description", "_callout_info", "key"};
	size_t i;

	if (strstr(name, "name") || strstr(name, "path") || strstr(name, "file") ||
	    strstr(name, "dir"))
		return true;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	return false;
}

/* One "field:TYPE NAME;\toffset:O;\tsize:S;\tsigned:G;" line into @p. */
static void parse_field(struct kt_probe *p, char *line, char **names, unsigned int *fixed)
{
	unsigned int off, size, sgn;
	char *decl = line, *semi, *name, *br;
	struct kt_field *f;
	const char *o;
	int kind = 0, str = 0;

	semi = strchr(decl, ';');
	o = semi ? strstr(semi, "offset:") : NULL;
	if (!o || sscanf(o, "offset:%u;\tsize:%u;\tsigned:%u;", &off, &size, &sgn) != 3)
		return;
	*semi = '\0';
	if (off + size > *fixed && off + size <= KT_MAX_FIXED)
		*fixed = off + size;
	name = strrchr(decl, ' ');
	if (!name || !strncmp(name + 1, "common_", 7))
		return;
	*name++ = '\0';
	br = strchr(name, '[');
	if (br)
		*br = '\0';
	if (p->nfields == KT_MAX_ARGS || off + size > KT_MAX_FIXED || !*name)
		return;
	if (!strncmp(decl, "__data_loc ", 11) || !strncmp(decl, "__rel_loc ", 10)) {
		if (!is_char_type(decl))
			return;
		str = decl[2] == 'd' ? KT_STR_DATA_LOC : KT_STR_REL_LOC;
	} else if (br) {
		if (!is_char_type(decl))
			return;
		kind = TNF_K_STRING;
	} else if (strchr(decl, '*')) {
		/*
		 * A name (file, path, fs type...) is read as a string; a data
		 * buffer (write's buf) is not (it need not end, and is the
		 * process's data); execve's argv (char **) is a pointer.
		 */
		if (!strcmp(p->subsys, "syscalls") && is_char_type(decl) && size == 8 &&
		    strchr(decl, '*') == strrchr(decl, '*') && is_name_arg(name))
			str = KT_STR_USER_PTR;
		else if (size == sizeof(void *))
			kind = TNF_K_OPAQUE;
	} else if (!strcmp(decl, "int") && size == 8) {
		kind = TNF_K_INT32; /* syscall arguments: an int in a long's slot */
		size = 4;
	} else {
		kind = int_kind(size, sgn);
	}
	if (str && p->cfg.nstrs == KT_MAX_STRS)
		return;
	if (!str && !kind)
		return;
	f = &p->fields[p->nfields];
	memset(f, 0, sizeof(*f));
	f->off = (uint16_t)off;
	f->size = (uint16_t)size;
	f->str = -1;
	f->kind = (uint8_t)(str ? TNF_K_STRING : kind);
	f->char_array = kind == TNF_K_STRING;
	if (str) {
		f->str = (int8_t)p->cfg.nstrs;
		p->cfg.str_off[p->cfg.nstrs] = (uint16_t)off;
		p->cfg.str_kind[p->cfg.nstrs] = (uint8_t)str;
		p->cfg.nstrs++;
	}
	names[p->nfields++] = strdup(name);
}

/* Reads @p's format file; @id is its probe id.  0 or -errno. */
int kt_probe_parse(const char *tracefs, struct kt_probe *p, unsigned long id)
{
	char path[PATH_MAX], *line = NULL, *names[KT_MAX_ARGS];
	unsigned int fixed = 0, tp_id = 0;
	size_t cap = 0, len;
	int i, err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs, p->subsys, p->event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	p->nfields = 0;
	memset(&p->cfg, 0, sizeof(p->cfg));
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "ID: %u", &tp_id) == 1)
			continue;
		if (!strncmp(line, "\tfield:", 7))
			parse_field(p, line + 7, names, &fixed);
	}
	free(line);
	fclose(f);
	if (!tp_id)
		err = -EINVAL;
	p->tp_id = tp_id;
	p->cfg.probe = (uint32_t)id;
	p->cfg.fixed_size = (uint16_t)fixed;
	/* "slots a b c" for the probe's attributes */
	len = 1;
	for (i = 0; i < p->nfields; i++)
		len += names[i] ? strlen(names[i]) + 1 : 4;
	{
		char *slots = malloc(len), *a;
		size_t n;

		if (slots) {
			slots[0] = '\0';
			for (i = 0; i < p->nfields; i++) {
				if (i)
					strcat(slots, " ");
				strcat(slots, names[i] ? names[i] : "arg");
			}
			n = strlen(p->event) + strlen(p->subsys) + len + 32;
			a = malloc(n);
			if (a)
				snprintf(a, n, "name %s;slots %s;keys %s", p->event, slots,
					 p->subsys);
			p->cb.attrs = a;
			free(slots);
		}
	}
	for (i = 0; i < p->nfields; i++)
		free(names[i]);
	if (!p->cb.attrs && !err)
		err = -ENOMEM;
	p->parsed = !err;
	return err;
}

void kt_probes_free(struct kt_probe *v, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		free(v[i].subsys);
		free(v[i].event);
		/* cb.attrs belongs to the probe handle (tnf_probes_release) */
	}
	free(v);
}
