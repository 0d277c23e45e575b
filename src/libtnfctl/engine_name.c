// SPDX-License-Identifier: BSD-2-Clause
/*
 * Whom an engine serves, and how a client finds it (DESIGN section 2: one
 * engine per user and privilege set).  The engine listens on an abstract
 * unix socket whose name carries all that decides what it may do for a
 * client: the effective uid, the effective capabilities, the pid namespace
 * (pids mean one namespace's pids); the cgroups (a service's or CI job's
 * engine is killed or frozen with its cgroup, never another's); the stop
 * mode it runs, and the engine program itself (device and inode: another
 * build or release is another engine).  Anyone may bind any abstract name, so the name only finds a
 * candidate: each side checks the other's credentials (tnf_peer_check).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "proto.h"
#include "target.h"

int tnf_own_caps(uint64_t *eff)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	/* zeroed: valgrind takes capget's data for one struct, as in version 1 */
	struct __user_cap_data_struct d[2] = {0};

	if (syscall(SYS_capget, &h, d))
		return -1;
	*eff = d[0].effective | (uint64_t)d[1].effective << 32;
	return 0;
}

/* TNFCTL_STOP_MODE as the engine reads it: one engine per mode. */
static const char *stop_mode(void)
{
	const char *m = getenv("TNFCTL_STOP_MODE");

	if (m && (!strcmp(m, "ptrace") || !strcmp(m, "kfunc")))
		return m;
	return "auto";
}

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

/* A hash of /proc/self/cgroup: every hierarchy's path (v1 and v2). */
static int cgroups_hash(uint32_t *out)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -1;
	*out = (uint32_t)fnv1a(buf, (size_t)n, 0xcbf29ce484222325ULL);
	return 0;
}

/*
 * $TNFCTL_ENGINE_SCOPE: callers that must not share an engine with the
 * rest of their user's (a test run beside another) name a scope of their
 * own; up to 64 of [A-Za-z0-9._-].  "" if unset, NULL if not valid.
 */
static const char *scope(void)
{
	const char *s = getenv("TNFCTL_ENGINE_SCOPE");
	size_t n;

	if (!s || !*s)
		return "";
	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
	return s[n] || n > 64 ? NULL : s;
}

/*
 * The abstract socket name (a NUL, then the text) of the engine that may
 * serve this process, @engine_path being its program ("/proc/self/exe" in
 * the engine):
 * "tnfctl-engine/vWIRE/EUID/CAPS/PIDNS/CGROUPS/MODE/DEV:INO[/SCOPE]", or,
 * where that would not fit, "tnfctl-engine/vWIRE/EUID/#HASH" of it.
 * Returns the address's length in sun_path, or -1 (then no engine is
 * shared).
 */
int tnf_engine_name(char name[TNF_ENGINE_NAME_MAX], const char *engine_path)
{
	const char *sc = scope();
	char full[512];
	struct stat exe, ns;
	uint32_t cg;
	uint64_t caps;
	int n;

	if (!sc || stat(engine_path, &exe) || stat("/proc/self/ns/pid", &ns) ||
	    tnf_own_caps(&caps) || cgroups_hash(&cg))
		return -1;
	n = snprintf(full, sizeof(full), "tnfctl-engine/v%d/%u/%llx/%lx/%08x/%s/%lx:%lx%s%s",
		     TNF_PROTO_VERSION, (unsigned)geteuid(), (unsigned long long)caps,
		     (unsigned long)ns.st_ino, cg, stop_mode(), (unsigned long)exe.st_dev,
		     (unsigned long)exe.st_ino, *sc ? "/" : "", sc);
	if (n < 0 || n >= (int)sizeof(full))
		return -1;
	if (n >= TNF_ENGINE_NAME_MAX - 1)
		n = snprintf(full, sizeof(full), "tnfctl-engine/v%d/%u/#%016llx", TNF_PROTO_VERSION,
			     (unsigned)geteuid(),
			     (unsigned long long)fnv1a(full, (size_t)n, 0xcbf29ce484222325ULL));
	name[0] = '\0';
	memcpy(name + 1, full, (size_t)n + 1); /* its NUL too: printed as text (--name) */
	return n + 1;
}

/*
 * The process at the other end of @sock may be served by us, or serve us:
 * the same effective uid and capabilities (SO_PEERCRED's, and its
 * /proc/PID/status) and the same pid namespace.  Its pid in *@pid.
 * 0, or -EPERM (another user or privilege set), or -errno.
 */
int tnf_peer_check(int sock, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct stat mine_ns, its_ns;
	uint64_t mine, its;
	char path[64];

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return -errno;
	/* pid 0: a process of another pid namespace, not visible in ours */
	if (cr.uid != geteuid() || cr.pid <= 0)
		return -EPERM;
	if (tnf_own_caps(&mine) || tnf_proc_caps_eff(cr.pid, &its) || mine != its)
		return -EPERM;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)cr.pid);
	if (stat("/proc/self/ns/pid", &mine_ns) || stat(path, &its_ns) ||
	    mine_ns.st_ino != its_ns.st_ino || mine_ns.st_dev != its_ns.st_dev)
		return -EPERM;
	*pid = cr.pid;
	return 0;
}
