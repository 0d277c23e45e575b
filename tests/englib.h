/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The engine's wire, for tests that speak it themselves: its name, a raw
 * connection, and the counters of its watch maps (TNF_OP_WATCH_STATS).
 * Included by a test after testlib.h.
 */
#ifndef TL_ENGLIB_H
#define TL_ENGLIB_H

#include <sys/un.h>
#include "../src/libtnfctl/proto.h"

/*
 * The listening name of @engine ("@tnfctl-engine/..." in /proc/net/unix),
 * its sun_path; its length, or -1 if it has none (a private engine).
 */
static inline int engine_name_of(pid_t engine, char name[TNF_ENGINE_NAME_MAX])
{
	char line[512], path[PATH_MAX], link[64];
	FILE *f = fopen("/proc/net/unix", "re");
	int len = -1;

	assert_non_null(f);
	while (len < 0 && fgets(line, sizeof(line), f)) {
		unsigned long inode;
		char sockname[256];
		struct dirent *de;
		DIR *d;

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s", &inode, sockname) != 2 ||
		    strncmp(sockname, "@tnfctl-engine/", 15))
			continue;
		/* every descriptor of the engine: its BPF objects' put the socket anywhere */
		snprintf(path, sizeof(path), "/proc/%d/fd", engine);
		d = opendir(path);
		while (d && (de = readdir(d))) {
			char want[64];
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", engine, de->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			snprintf(want, sizeof(want), "socket:[%lu]", inode);
			if (!strcmp(link, want)) {
				name[0] = '\0';
				len = (int)strlen(sockname);
				memcpy(name + 1, sockname + 1, len - 1);
				break;
			}
		}
		if (d)
			closedir(d);
	}
	fclose(f);
	return len;
}

/* engine_name_of, failing the test if @engine has no name. */
static inline int engine_name(pid_t engine, char name[TNF_ENGINE_NAME_MAX])
{
	int len = engine_name_of(engine, name);

	if (len < 0)
		fail_msg("engine %d listens on no @tnfctl-engine/ name", engine);
	return len;
}

static inline int connect_name(const char *name, int len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	memcpy(a.sun_path, name, len);
	if (connect(s, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + len)) {
		close(s);
		return -1;
	}
	return s;
}

/* The tnfctl-engine we started (our child, as the library spawns it), or -1. */
static inline pid_t engine_of_self(void)
{
	struct tl_pinfo *ps;
	pid_t e = -1;
	int n, i;

	n = tl_subtree(&ps);
	for (i = 0; i < n; i++)
		if (ps[i].ppid == getpid() && !strcmp(ps[i].comm, "tnfctl-engine"))
			e = ps[i].pid;
	free(ps);
	return e;
}

struct engine_stats {
	int slots;	    /* watches open */
	int tracked;	    /* entries in the tracked map */
	bool attached;	    /* the watch tracepoints are attached */
	bool stop_attached; /* the stopping mode's tracepoints are attached */
	int uprobes;	    /* uprobe links, of both */
};

/*
 * The watch counters of the engine named @name (@len bytes), asked on a
 * connection of our own: its greeting (HELLO, ready), then WATCH_STATS.
 */
static inline void engine_stats(const char *name, int len, struct engine_stats *st)
{
	struct tnf_req req = {.op = TNF_OP_WATCH_STATS, .hid = 1};
	struct tnf_rep rep;
	int s = connect_name(name, len), i;

	if (s < 0)
		fail_msg("cannot connect to the engine: %s", strerror(errno));
	for (i = 0; i < 2; i++)
		if (!tnf_rep_received(&rep, recv(s, &rep, sizeof(rep), 0)))
			fail_msg("no greeting from the engine");
	if (send(s, &req, sizeof(req), 0) != sizeof(req) ||
	    !tnf_rep_received(&rep, recv(s, &rep, sizeof(rep), 0)) || rep.kind != TNF_REP_DONE)
		fail_msg("no WATCH_STATS reply from the engine");
	close(s);
	st->slots = rep.exit_status;
	st->tracked = rep.child_pid;
	st->attached = rep.flags != 0;
	st->stop_attached = rep.tid != 0;
	st->uprobes = rep.pid;
}

#endif
