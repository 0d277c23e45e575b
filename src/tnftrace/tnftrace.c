// SPDX-License-Identifier: BSD-2-Clause
/*
 * tnftrace: trace every TNF probe of a program, written on the public API.
 *
 *   tnftrace [-o FILE] [-s KB] [-q] -- PROGRAM [ARG...]
 *
 * Starts PROGRAM stopped (tnfctl_exec_open), creates its trace file
 * (default $TMPDIR/tnftrace-<pid>.tnf, 4096 KB), enables and traces every
 * probe, including those of libraries it dlopens later (the create callback
 * does it at the DLOPEN stop, before their constructors run), runs it to
 * its exit and prints the file with tnfdump.  Children it forks keep
 * writing into the same file.  Exit status: the program's (128+N if a
 * signal N killed it), 2 for usage, 1 for other failures.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tnf/tnfctl.h>

static int quiet;

static tnfctl_errcode_t enable_trace(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd)
{
	tnfctl_errcode_t err = tnfctl_probe_enable(h, p, cd);

	return err ? err : tnfctl_probe_trace(h, p, cd);
}

/* Runs for each probe discovered after a dlopen, while the target is stopped. */
static void *on_new_probe(tnfctl_handle_t *h, tnfctl_probe_t *p)
{
	tnfctl_errcode_t err = enable_trace(h, p, NULL);

	if (err)
		fprintf(stderr, "tnftrace: enabling a new probe: %s\n", tnfctl_strerror(err));
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: tnftrace [-o FILE] [-s KB] [-q] -- PROGRAM [ARG...]\n");
	return 2;
}

/* tnfdump next to this binary, else on $PATH. */
static int run_tnfdump(const char *file)
{
	char self[PATH_MAX], dump[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	snprintf(dump, sizeof(dump), "tnfdump");
	if (n > 0) {
		self[n] = '\0';
		snprintf(dump, sizeof(dump), "%s/tnfdump", dirname(self));
		if (access(dump, X_OK))
			snprintf(dump, sizeof(dump), "tnfdump");
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execlp(dump, "tnfdump", file, (char *)NULL);
		fprintf(stderr, "tnftrace: %s: %s\n", dump, strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * The exit status for a PROGRAM that cannot be started (the table in
 * README.md), after a message that says why; @e is the errno the open left.
 */
static int open_failed(const char *prog, tnfctl_errcode_t err, int e)
{
	struct stat st;

	if (err == TNFCTL_ERR_ACCES && e == EPERM) {
		fprintf(stderr, "tnftrace: not permitted: BPF and ptrace need root, or CAP_BPF, "
				"CAP_PERFMON and CAP_SYS_PTRACE\n");
		return 1;
	}
	if (err == TNFCTL_ERR_INTERNAL && stat("/sys/kernel/btf/vmlinux", &st)) {
		fprintf(stderr, "tnftrace: this kernel has no BTF (/sys/kernel/btf/vmlinux): it "
				"needs CONFIG_DEBUG_INFO_BTF=y\n");
		return 1;
	}
	if (err == TNFCTL_ERR_FILENOTFOUND) {
		fprintf(stderr, "tnftrace: %s: %s\n", prog, strerror(ENOENT));
		return 127;
	}
	if (err == TNFCTL_ERR_ACCES && e == ELIBACC)
		return 127; /* the loader has said which library */
	if (err == TNFCTL_ERR_ACCES) {
		fprintf(stderr, "tnftrace: %s: %s\n", prog, strerror(e ? e : EACCES));
		return 126;
	}
	fprintf(stderr, "tnftrace: %s: %s\n", prog, tnfctl_strerror(err));
	return 1;
}

static const char *event_name(tnfctl_event_t e)
{
	static const char *const names[] = {"EINTR", "TARGGONE", "DLOPEN", "DLCLOSE",
					    "EXEC",  "FORK",	 "EXIT"};

	return (unsigned int)e < sizeof(names) / sizeof(names[0]) ? names[e] : "?";
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"size", required_argument, NULL, 's'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	char file[PATH_MAX] = "", *end;
	const char *tmp = getenv("TMPDIR");
	unsigned long kb = 4096;
	struct tnfctl_event_data info;
	tnfctl_handle_t *h;
	tnfctl_errcode_t err;
	tnfctl_event_t evt;
	int c, status = 1, done = 0;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+o:s:q", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			snprintf(file, sizeof(file), "%s", optarg);
			break;
		case 's':
			kb = strtoul(optarg, &end, 10);
			if (*end || !kb || kb > 4u * 1024 * 1024)
				return usage();
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();
	errno = 0;
	err = tnfctl_exec_open(argv[optind], argv + optind, NULL, NULL, NULL, &h);
	if (err)
		return open_failed(argv[optind], err, errno);
	{
		tnfctl_trace_attrs_t a;

		tnfctl_trace_attrs_get(h, &a);
		pid = a.targ_pid;
	}
	if (!file[0])
		snprintf(file, sizeof(file), "%s/tnftrace-%d.tnf", tmp && *tmp ? tmp : "/tmp",
			 (int)pid);
	err = tnfctl_buffer_alloc(h, file, (uint_t)(kb * 1024));
	if (!err)
		err = tnfctl_probe_apply(h, enable_trace, NULL);
	if (!err)
		err = tnfctl_register_funcs(h, on_new_probe, NULL);
	if (err) {
		fprintf(stderr, "tnftrace: %s: %s\n", file, tnfctl_strerror(err));
		tnfctl_close(h, TNFCTL_TARG_KILL);
		return 1;
	}
	if (!quiet)
		fprintf(stderr, "tnftrace: pid %d tracing into %s\n", (int)pid, file);
	while (!done) {
		err = tnfctl_continue(h, &evt, NULL);
		if (err) {
			fprintf(stderr, "tnftrace: %s\n", tnfctl_strerror(err));
			tnfctl_close(h, TNFCTL_TARG_KILL);
			return 1;
		}
		memset(&info, 0, sizeof(info));
		info.sz = sizeof(info);
		info.path = "";
		tnfctl_event_data_get(h, &info);
		if (!quiet && evt == TNFCTL_EVENT_FORK)
			fprintf(stderr, "tnftrace: FORK child %d\n", (int)info.child_pid);
		else if (!quiet && evt != TNFCTL_EVENT_EXIT)
			fprintf(stderr, "tnftrace: %s %s\n", event_name(evt), info.path);
		switch (evt) {
		case TNFCTL_EVENT_EXIT:
			status = info.exit_status;
			done = 1;
			break;
		case TNFCTL_EVENT_TARGGONE:
			status = 128 + info.term_signal;
			done = 1;
			break;
		case TNFCTL_EVENT_EXEC:
			/* The new image has no trace file: let it run to its end untraced. */
			tnfctl_close(h, TNFCTL_TARG_RESUME);
			h = NULL;
			while (waitpid(pid, &c, 0) < 0 && errno == EINTR)
				;
			status = WIFEXITED(c) ? WEXITSTATUS(c) : 128 + WTERMSIG(c);
			done = 1;
			break;
		case TNFCTL_EVENT_EINTR:
			tnfctl_close(h, TNFCTL_TARG_KILL);
			return 130;
		default: /* DLOPEN, DLCLOSE (probes already handled), FORK */
			break;
		}
	}
	if (h)
		tnfctl_close(h, TNFCTL_TARG_DEFAULT);
	if (run_tnfdump(file) != 0)
		return 1;
	return status;
}
