// SPDX-License-Identifier: BSD-2-Clause
/* Target processes seen through /proc: status, mappings, memory, rtld state. */
#include <dirent.h>
#include <errno.h>
#include <elf.h>
#include <time.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <tnf/tnfctl.h>
#include "elfsym.h"
#include "target.h"

/* A numeric field of /proc/@where/status (@where: "PID" or "PID/task/TID"), or -1. */
static int status_field_path(const char *where, const char *field)
{
	char path[96], line[256];
	size_t flen = strlen(field);
	int val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", where);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			val = atoi(line + flen + 1);
			break;
		}
	fclose(f);
	return val;
}

static int status_field(pid_t pid, const char *field)
{
	char where[16];

	snprintf(where, sizeof(where), "%d", pid);
	return status_field_path(where, field);
}

int tnf_proc_tgid(pid_t tid)
{
	return status_field(tid, "Tgid");
}

int tnf_proc_tracer(pid_t pid)
{
	return status_field(pid, "TracerPid");
}

/* The effective capabilities of process @pid (CapEff, hex): 0, or -1. */
int tnf_proc_caps_eff(pid_t pid, uint64_t *eff)
{
	char path[64], line[256];
	unsigned long long v;
	int ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &v) == 1) {
			*eff = v;
			ret = 0;
			break;
		}
	if (f)
		fclose(f);
	return ret;
}

/* Does @tracer trace a thread of process @tgid (its leader may be a zombie we never held)? */
bool tnf_proc_traced_by(pid_t tgid, pid_t tracer)
{
	char path[64], where[32];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (tnf_proc_tracer(tgid) == tracer)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	while (d && !found && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(where, sizeof(where), "%d/task/%.10s", tgid, de->d_name);
			found = status_field_path(where, "TracerPid") == tracer;
		}
	if (d)
		closedir(d);
	return found;
}

#define TNF_PF_EXITING 0x4 /* include/linux/sched.h: the task is in do_exit() */

/*
 * /proc/@path (a stat file) read into @buf: the fields after the command
 * name (which may hold spaces and parentheses), or NULL if it is gone.
 */
static const char *stat_fields(const char *path, char *buf, size_t size)
{
	ssize_t n;
	char *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

/*
 * The state letter of /proc/PID/task/TID/stat ('R', 'T', 'Z'...), or 0 if
 * gone; with @exiting, 'X' too for a task already in do_exit() (killed: its
 * memory may be gone while it still shows R or D).
 */
static char task_state_of(pid_t pid, pid_t tid, bool exiting)
{
	char path[64], buf[512];
	unsigned long flags = 0;
	const char *f;
	char st = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = stat_fields(path, buf, sizeof(buf));
	/* state ppid pgrp session tty_nr tpgid flags */
	if (!f || sscanf(f, "%c %*d %*d %*d %*d %*d %lu", &st, &flags) < 1)
		return 0;
	return exiting && (flags & TNF_PF_EXITING) && st != 'Z' ? 'X' : st;
}

static char task_state(pid_t pid, pid_t tid)
{
	return task_state_of(pid, tid, false);
}

/* A zombie or dead task (state Z or X), or no such task. */
bool tnf_proc_exiting(pid_t tid)
{
	char st = task_state_of(tid, tid, true);

	return !st || st == 'Z' || st == 'X';
}

/* Whether @tid is (still) a thread of @tgid: a zombie is, a thread released is not. */
bool tnf_proc_task_exists(pid_t tgid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", tgid, tid);
	return access(path, F_OK) == 0;
}

/*
 * Open /proc/PID/@name, or failing that the same file of any of its threads
 * (a leader that called pthread_exit() has no memory nor exe; its threads
 * do).  Returns an fd, or -1 with errno from the most telling failure.
 */
static bool refused(int fd)
{
	int e = errno;

	if (fd >= 0) {
		close(fd);
		return false;
	}
	return e == EPERM || e == EACCES;
}

/*
 * Whether the kernel refuses us @pid's /proc files that an open needs
 * (mem, maps, exe, map_files): their checks use the effective capability
 * set (PTRACE_MODE_FSCREDS, CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE for
 * map_files) where PTRACE_SEIZE uses the permitted one, so a seize can work
 * while these fail.  Such a failure is the caller's lack of privilege.
 */
bool tnf_proc_refused(pid_t pid)
{
	char path[320];
	struct dirent *de;
	DIR *d;
	bool r;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	if (refused(open(path, O_RDONLY | O_CLOEXEC)))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (refused(open(path, O_RDONLY | O_CLOEXEC)))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (refused(open(path, O_RDONLY | O_CLOEXEC)))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/map_files", pid);
	d = opendir(path);
	if (!d)
		return errno == EPERM || errno == EACCES;
	while ((de = readdir(d)) && de->d_name[0] == '.')
		;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%.200s", pid, de ? de->d_name : "");
	r = de && refused(open(path, O_RDONLY | O_CLOEXEC));
	closedir(d);
	return r;
}

int tnf_proc_open_task_file(pid_t pid, const char *name)
{
	char path[320];
	struct dirent *de;
	int fd, e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	e = errno;
	if (fd >= 0 || (e != ENOENT && e != ESRCH))
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && fd < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", pid, de->d_name, name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT && errno != ESRCH)
			e = errno;
	}
	if (d)
		closedir(d);
	errno = e;
	return fd;
}

/* Kernel threads cannot be traced. */
bool tnf_proc_kthread(pid_t pid)
{
	return status_field(pid, "Kthread") == 1;
}

/*
 * Whether we may ptrace @pid: opening /proc/PID/mem makes the kernel's
 * ptrace access check with our credentials.
 */
tnfctl_errcode_t tnf_check_may_trace(pid_t pid)
{
	int fd = tnf_proc_open_task_file(pid, "mem");

	if (fd >= 0) {
		close(fd);
		return TNFCTL_ERR_NONE;
	}
	if ((errno == ENOENT || errno == ESRCH) && !tnf_proc_kthread(pid))
		return TNFCTL_ERR_NOPROCESS;
	return TNFCTL_ERR_ACCES;
}

/* @sig queued for the whole process @pid (not yet acted on), from /proc/PID/status ShdPnd. */
bool tnf_proc_sig_queued(pid_t pid, int sig)
{
	char path[64], line[256];
	bool pending = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "ShdPnd:", 7)) {
			pending = strtoull(line + 7, NULL, 16) & (1ULL << (sig - 1));
			break;
		}
	fclose(f);
	return pending;
}

/* A SIGSTOP queued for the whole process (e.g. by a SUSPEND close) and not yet acted on. */
bool tnf_proc_sigstop_pending(pid_t pid)
{
	return tnf_proc_sig_queued(pid, SIGSTOP);
}

/* In a job-control stop, or with one on its way (a SIGSTOP queued for the process). */
bool tnf_proc_job_stopped(pid_t pid)
{
	return task_state(pid, pid) == 'T' || tnf_proc_sigstop_pending(pid);
}

/* Start time (clock ticks since boot): tells a process from a later one with its pid. */
unsigned long long tnf_proc_starttime(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	const char *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = stat_fields(path, buf, sizeof(buf));
	/* fields 3..22: state ... starttime */
	if (!f || sscanf(f,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu",
			 &start) != 1)
		return 0;
	return start;
}

static bool all_threads_job_stopped(pid_t pid)
{
	char path[64];
	struct dirent *de;
	bool ok = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return true;
	while (ok && (de = readdir(d))) {
		char st;

		if (de->d_name[0] == '.')
			continue;
		st = task_state(pid, atoi(de->d_name));
		if (st && st != 'T' && st != 'Z' && st != 'X')
			ok = false;
	}
	closedir(d);
	return ok;
}

/*
 * After a detach the kernel wakes each thread, which then re-enters the
 * group-stop on its own; nothing notifies a former tracer, so look (briefly)
 * until every thread shows 'T'.
 */
void tnf_proc_wait_stopped(pid_t pid)
{
	struct timespec ts = {.tv_nsec = 20000}, start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!all_threads_job_stopped(pid)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec >
		    100000000L)
			break; /* 100 ms: the process is not cooperating; do not hold others */
		nanosleep(&ts, NULL);
	}
}

/* AT_BASE (ld.so's base; 0 without an interpreter) and AT_PHDR of @pid. */
static void auxv_get(pid_t pid, uint64_t *base, uint64_t *phdr)
{
	uint64_t av[2];
	char path[64];
	int fd;

	*base = *phdr = 0;
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_BASE)
			*base = av[1];
		else if (av[0] == AT_PHDR)
			*phdr = av[1];
	close(fd);
}

int tnf_proc_maps(pid_t pid, struct tnf_maps_info *mi)
{
	char path[64], line[4608], exe[512] = "";
	uint64_t base, phdr, exe_base = 0;
	FILE *f;

	auxv_get(pid, &base, &phdr);
	memset(mi, 0, sizeof(*mi));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char range[80], *name, *bn;
		int pos = 0;

		if (sscanf(line, "%79s %*s %llx %*s %*s %n", range, &off, &pos) < 2 || !pos)
			continue;
		if (sscanf(range, "%llx-%llx", &start, &end) != 2)
			continue;
		name = line + pos;
		name[strcspn(name, "\n")] = '\0';
		if (name[0] != '/')
			continue;
		bn = strrchr(name, '/') + 1;
		if (!strcmp(bn, TNFCTL_LIBTNFPROBE))
			mi->has_libtnfprobe = true;
		if (off != 0)
			continue;
		if (base && start == base && !mi->ldso_base) {
			mi->ldso_base = start;
			snprintf(mi->ldso_path, sizeof(mi->ldso_path), "/proc/%d/map_files/%s", pid,
				 range);
		}
		/* no interpreter: the executable's first mapping holds its headers */
		if (!base && phdr >= start && phdr < end && !exe_base) {
			exe_base = start;
			snprintf(exe, sizeof(exe), "/proc/%d/map_files/%s", pid, range);
		}
		if (!mi->has_libc && !strncmp(bn, "libc.so", 7)) {
			mi->has_libc = true;
			snprintf(mi->libc_path, sizeof(mi->libc_path), "/proc/%d/map_files/%s", pid,
				 range);
		}
	}
	fclose(f);
	mi->exe_base = exe_base;
	/* `ld.so PROG`: ld.so is the executable (AT_BASE 0), and PROG's rtld */
	if (exe_base && tnf_elf_is_rtld(exe)) {
		mi->ldso_base = exe_base;
		memcpy(mi->ldso_path, exe, sizeof(mi->ldso_path));
	}
	return mi->ldso_base ? 0 : -1;
}

int tnf_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	char path[64];
	ssize_t n;
	int fd;

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

int tnf_rtld_locate(pid_t pid, const struct tnf_maps_info *mi, uint64_t *r_state_addr)
{
	struct tnf_elf_sym s;

	(void)pid;
	if (tnf_elf_lookup(mi->ldso_path, "_r_debug", &s))
		return -1;
	/* struct r_debug: r_version, r_map, r_brk, r_state (offset 24 on LP64). */
	*r_state_addr = mi->ldso_base - s.load_vaddr + s.vaddr + 24;
	return 0;
}

/*
 * The struct r_debug of each link-map namespace, the base one first, into
 * @rd (at most @max); returns how many, or -1.  glibc 2.35+ (r_version 2)
 * chains the other namespaces' (dlmopen) from the base one's r_next, the
 * field after r_ldbase in struct r_debug_extended (offset 40 on LP64); a
 * namespace emptied by dlclose stays in the chain with a NULL r_map.
 */
int tnf_rtld_namespaces(pid_t pid, uint64_t r_state_addr, uint64_t *rd, int max)
{
	uint64_t r = r_state_addr - 24;
	int version, n = 0;

	if (tnf_proc_read(pid, r, &version, sizeof(version)))
		return -1;
	while (r && n < max) {
		rd[n++] = r;
		if (version < 2)
			break;
		if (tnf_proc_read(pid, r + 40, &r, sizeof(r)))
			return -1;
	}
	return n;
}

/*
 * 1 once rtld's start-up has begun loading objects, 0 before, -1 on error.
 * dl_main sets r_map (and RT_CONSISTENT) well before its first RT_ADD,
 * while the chain is the executable, maybe the vDSO, and then ld.so's own
 * map, linked second: not started in any of these.  Once objects are
 * loaded, ld.so's map is in the chain and never second (the vDSO, preloads
 * and DT_NEEDED objects come before it).  struct r_debug: r_ldbase at
 * offset 32; struct link_map: l_addr at 0, l_next at 24.
 */
#define RTLD_CHAIN_MAX 65536

int tnf_rtld_started(pid_t pid, uint64_t r_state_addr)
{
	uint64_t r_map, ldbase, lm, l_addr;
	int pos;

	if (tnf_proc_read(pid, r_state_addr - 16, &r_map, sizeof(r_map)) ||
	    tnf_proc_read(pid, r_state_addr + 8, &ldbase, sizeof(ldbase)))
		return -1;
	if (!r_map || tnf_proc_read(pid, r_map + 24, &lm, sizeof(lm)))
		return r_map ? -1 : 0;
	for (pos = 2; lm && pos < RTLD_CHAIN_MAX; pos++) {
		if (tnf_proc_read(pid, lm, &l_addr, sizeof(l_addr)))
			return -1;
		if (l_addr == ldbase)
			return pos > 2;
		if (tnf_proc_read(pid, lm + 24, &lm, sizeof(lm)))
			return -1;
	}
	/* ld.so not linked yet; a chain that long has long started */
	return pos >= RTLD_CHAIN_MAX;
}

/*
 * 1 when start-up is done and the link map of every namespace is
 * consistent (no thread is in the middle of adding or removing objects),
 * 0 if not, -1 on error.
 */
int tnf_rtld_consistent(pid_t pid, uint64_t r_state_addr)
{
	uint64_t rd[TNF_RTLD_MAX_NS];
	int i, n, state;

	n = tnf_rtld_namespaces(pid, r_state_addr, rd, TNF_RTLD_MAX_NS);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (tnf_proc_read(pid, rd[i] + 24, &state, sizeof(state)))
			return -1;
		if (state != 0)
			return 0;
	}
	return tnf_rtld_started(pid, r_state_addr);
}

/*
 * Name of the last object in the link map (the one a dlopen just added),
 * for an rtld notification whose dlopen argument we did not see (a dlopen
 * from inside libc).  struct link_map on LP64: l_addr, l_name, l_ld, l_next.
 */
int tnf_rtld_last_object(pid_t pid, uint64_t r_state_addr, char *buf, size_t len)
{
	uint64_t lm, next, name = 0;
	int i;

	if (!len || tnf_proc_read(pid, r_state_addr - 16, &lm, sizeof(lm)) || !lm)
		return -1;
	for (i = 0; i < 4096; i++) {
		if (tnf_proc_read(pid, lm + 24, &next, sizeof(next)))
			return -1;
		if (!next)
			break;
		lm = next;
	}
	if (tnf_proc_read(pid, lm + 8, &name, sizeof(name)) || !name)
		return -1;
	for (i = 0; i < (int)len - 1; i++) {
		if (tnf_proc_read(pid, name + i, &buf[i], 1))
			return -1;
		if (!buf[i])
			return 0;
	}
	buf[len - 1] = '\0';
	return 0;
}

/* The boottime offset of our time namespace, in ticks (/proc shows times with it). */
static uint64_t timens_boot_ticks(void)
{
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	long long sec = 0, nsec = 0;
	char line[128], name[32];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %lld %lld", name, &sec, &nsec) == 3 &&
		    !strcmp(name, "boottime"))
			break;
	if (f)
		fclose(f);
	return (uint64_t)(sec * 1000000000LL + nsec) / TNF_NSEC_PER_TICK;
}

static uint64_t boot_offset;

static void boot_offset_init(void)
{
	boot_offset = timens_boot_ticks();
}

/* @tgid's start time as the BPF side computes it, or 0 if it is gone. */
uint64_t tnf_start_ticks(pid_t tgid)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint64_t ticks = tnf_proc_starttime(tgid);

	pthread_once(&once, boot_offset_init); /* kernel mode calls this from any thread */
	return ticks ? ticks - boot_offset : 0;
}
