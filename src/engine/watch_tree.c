// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tree of a watch as /proc shows it at open (the root's descendants),
 * the caller's right to trace (the engine's own: a client's uid, effective
 * capabilities and pid namespace are the engine's, tnf_peer_check), and the
 * dlopen/dlclose uprobes attached once per libc inode for every watch,
 * through /proc/PID/map_files (as events.c does).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "elfsym.h"
#include "kfeatures.h"
#include "target.h"
#include "watches.h"
#include "watch.skel.h"

#define CAP_SYS_PTRACE 19

/* CAP_SYS_PTRACE in the effective set: the caller may trace a setuid image. */
bool watch_caller_may_trace_all(void)
{
	unsigned long long eff = 0;
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &eff) == 1;
	fclose(f);
	return found && (eff >> CAP_SYS_PTRACE & 1);
}

struct pp {
	pid_t pid, ppid;
};

/* Every process's (pid, ppid), from /proc/PID/stat. */
static int scan_proc(struct pp **out, size_t *n)
{
	size_t cap = 0, cnt = 0;
	struct pp *v = NULL, *nv;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[300], buf[512], *p;
		ssize_t len;
		int fd, ppid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
		if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
			continue;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto fail;
			v = nv;
		}
		v[cnt].pid = atoi(de->d_name);
		v[cnt++].ppid = ppid;
	}
	closedir(d);
	*out = v;
	*n = cnt;
	return 0;
fail:
	closedir(d);
	free(v);
	return -1;
}

static bool in_set(const pid_t *set, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == pid)
			return true;
	return false;
}

/*
 * Adds the root's descendants.  The kernel adds the children of a tracked
 * process from now on, so the scan is repeated until it finds nobody new:
 * a child forked by a descendant before that descendant was added is then
 * found too.  A process whose parent exited before the open was reparented
 * and is no longer a descendant.
 */
tnfctl_errcode_t watch_add_descendants(unsigned int slot, pid_t root,
				       struct tnfctl_watch_bpf *dl_skel)
{
	bool all = watch_caller_may_trace_all(), grew = true;
	size_t nset = 1, capset = 64, n, i;
	pid_t *set = malloc(capset * sizeof(*set)), *ns;
	tnfctl_errcode_t err = TNFCTL_ERR_NONE;
	struct pp *v;

	if (!set)
		return TNFCTL_ERR_ALLOCFAIL;
	set[0] = root;
	while (grew && !err) {
		grew = false;
		if (scan_proc(&v, &n)) {
			err = TNFCTL_ERR_INTERNAL;
			break;
		}
		for (i = 0; i < n && !err; i++) {
			if (!in_set(set, nset, v[i].ppid) || in_set(set, nset, v[i].pid))
				continue;
			/* Never watch what the caller could not trace. */
			if (!all && tnf_check_may_trace(v[i].pid))
				continue;
			if (watch_add(slot, v[i].pid, v[i].ppid))
				continue; /* gone, or not the child we saw */
			if (nset == capset) {
				capset *= 2;
				ns = realloc(set, capset * sizeof(*set));
				if (!ns) {
					err = TNFCTL_ERR_ALLOCFAIL;
					break;
				}
				set = ns;
			}
			set[nset++] = v[i].pid;
			grew = true;
			if (dl_skel)
				watch_attach_libc_of(dl_skel, v[i].pid);
		}
		free(v);
	}
	free(set);
	return err;
}

/* The probed libcs and ld.sos, and their links, for every DL watch (serve.c releases them). */
static struct {
	dev_t dev;
	ino_t ino;
} * libcs;
static size_t nlibcs;
static struct tnf_ulink *links;
static size_t nlinks;

static int attach(struct bpf_program *prog, bool ret, const char *path, uint64_t off,
		  uint64_t cookie)
{
	struct tnf_ulink *nl = realloc(links, (nlinks + 1) * sizeof(*nl));
	int err;

	if (!nl)
		return -ENOMEM;
	links = nl;
	err = tnf_uprobe_attach_cookie(prog, ret, path, off, cookie, &nl[nlinks]);
	if (!err)
		nlinks++;
	return err;
}

/*
 * Attach the dlopen/dlmopen/dlclose probes to the libc that @pid maps, once
 * per inode.  A uprobe fires in every process mapping that file; the
 * programs keep only the processes of DL watches.  False if @pid maps no
 * libc (yet, or any more).
 */
static bool seen(const char *path, struct stat *st)
{
	size_t i;
	void *nl;

	if (stat(path, st))
		return true;
	for (i = 0; i < nlibcs; i++)
		if (libcs[i].dev == st->st_dev && libcs[i].ino == st->st_ino)
			return true;
	nl = realloc(libcs, (nlibcs + 1) * sizeof(*libcs));
	if (!nl)
		return true;
	libcs = nl;
	libcs[nlibcs].dev = st->st_dev;
	libcs[nlibcs++].ino = st->st_ino;
	return false;
}

/*
 * rtld's _dl_debug_state in the ld.so @pid maps, once per inode: it tells
 * on_dl_debug_state whether a dlopen/dlclose changed the link map.  The
 * cookie takes the program from the probed address to _r_debug.r_state
 * (offset 24 of struct r_debug on LP64), both in this file.
 */
static void attach_rtld(struct tnfctl_watch_bpf *skel, const struct tnf_maps_info *mi)
{
	struct tnf_elf_sym ds, rd;
	struct stat st;
	uint64_t delta;
	unsigned int i;

	if (!mi->ldso_base || tnf_elf_lookup(mi->ldso_path, "_dl_debug_state", &ds) ||
	    tnf_elf_lookup(mi->ldso_path, "_r_debug", &rd) || seen(mi->ldso_path, &st))
		return;
	dbg("watch: probing _dl_debug_state in %s\n", mi->ldso_path);
	delta = rd.vaddr + 24 - ds.vaddr;
	if (watch_compat()) {
		/* No cookies: the program tries each ld.so's delta (bpf/watch.bpf.c). */
		for (i = 0; i < TNF_RTLD_PROBED_MAX && skel->bss->rtld_delta[i] != delta; i++)
			if (!skel->bss->rtld_delta[i]) {
				skel->bss->rtld_delta[i] = delta;
				break;
			}
		if (i == TNF_RTLD_PROBED_MAX)
			skel->bss->rtld_overflow = 1;
		if (i == TNF_RTLD_PROBED_MAX)
			dbg("watch: more than %d ld.so layouts: DL events in %s's processes are "
			    "counted lost\n",
			    TNF_RTLD_PROBED_MAX, mi->ldso_path);
		delta = 0;
	}
	attach(skel->progs.on_dl_debug_state, false, mi->ldso_path, ds.file_off, delta);
}

bool watch_attach_libc_of(struct tnfctl_watch_bpf *skel, pid_t pid)
{
	struct tnf_elf_sym so, sc, sm;
	struct tnf_maps_info mi;
	struct stat st;
	void *nl;
	size_t i;

	tnf_proc_maps(pid, &mi); /* -1 without ld.so (static), libc may still be there */
	attach_rtld(skel, &mi);
	if (!mi.has_libc || stat(mi.libc_path, &st))
		return false;
	for (i = 0; i < nlibcs; i++)
		if (libcs[i].dev == st.st_dev && libcs[i].ino == st.st_ino)
			return true;
	if (tnf_elf_lookup(mi.libc_path, "dlopen", &so) ||
	    tnf_elf_lookup(mi.libc_path, "dlclose", &sc))
		return true; /* a libc without them: nothing to probe */
	nl = realloc(libcs, (nlibcs + 1) * sizeof(*libcs));
	if (!nl)
		return false;
	libcs = nl;
	libcs[nlibcs].dev = st.st_dev;
	libcs[nlibcs++].ino = st.st_ino;
	dbg("watch: probing dlopen/dlclose in %s\n", mi.libc_path);
	attach(skel->progs.on_dlopen, false, mi.libc_path, so.file_off, 0);
	attach(skel->progs.on_dlopen_ret, true, mi.libc_path, so.file_off, 0);
	attach(skel->progs.on_dlclose, false, mi.libc_path, sc.file_off, 0);
	attach(skel->progs.on_dlclose_ret, true, mi.libc_path, sc.file_off, 0);
	/* dlmopen (a libc without it has no link-map namespaces) */
	if (!tnf_elf_lookup(mi.libc_path, "dlmopen", &sm)) {
		attach(skel->progs.on_dlmopen, false, mi.libc_path, sm.file_off, 0);
		attach(skel->progs.on_dlopen_ret, true, mi.libc_path, sm.file_off, 0);
	}
	return true;
}

size_t watch_uprobes(void)
{
	return nlinks;
}

/* @async: on a thread of their own (the engine goes on); else here. */
void watch_detach_all(bool async)
{
	if (!nlinks && !nlibcs)
		return;
	if (async && nlinks) {
		dbg("watch: releasing %zu uprobe links: no DL watch\n", nlinks);
		tnf_uprobe_release_async(links, nlinks);
	} else {
		tnf_uprobe_release_all(links, nlinks);
		free(links);
	}
	free(libcs);
	links = NULL;
	libcs = NULL;
	nlinks = nlibcs = 0;
}
