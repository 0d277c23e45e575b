// SPDX-License-Identifier: BSD-2-Clause
/*
 * Processes this controller left stopped with tnfctl_close(SUSPEND), so that
 * a tnfctl_pid_open of one that fails resumes it (only our own stop is ours
 * to end; someone else's SIGSTOP is left alone).  Kept here, not in the
 * tracer helper, which ends with the last handle.  A pidfd names each one,
 * so a pid reused since is not taken for it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

struct susp {
	pid_t pid;
	int pidfd;
	bool tty_intr; /* the handle's terminal-^C rule, for the re-open */
};

static pthread_mutex_t susp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct susp *susp;
static size_t nsusp;

void tnf_suspended_add(pid_t pid, bool tty_intr)
{
	int fd = syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
	struct susp *p;

	size_t i;

	if (fd < 0)
		return;
	pthread_mutex_lock(&susp_lock);
	/* Those gone since (never re-opened) are forgotten here. */
	for (i = 0; i < nsusp; i++)
		if (syscall(SYS_pidfd_send_signal, susp[i].pidfd, 0, NULL, 0)) {
			close(susp[i].pidfd);
			susp[i--] = susp[--nsusp];
		}
	p = realloc(susp, (nsusp + 1) * sizeof(*p));
	if (p) {
		susp = p;
		susp[nsusp].pid = pid;
		susp[nsusp].tty_intr = tty_intr;
		susp[nsusp++].pidfd = fd;
		fd = -1;
	}
	pthread_mutex_unlock(&susp_lock);
	if (fd >= 0)
		close(fd);
}

/*
 * Forget @pid: a pidfd (close-on-exec, the caller's to close) if it is
 * still the process our SUSPEND left stopped (then *@tty_intr is its
 * handle's terminal-^C rule), else -1.
 */
int tnf_suspended_take(pid_t pid, bool *tty_intr)
{
	int fd = -1;
	size_t i;

	pthread_mutex_lock(&susp_lock);
	for (i = 0; i < nsusp; i++)
		if (susp[i].pid == pid) {
			if (fd < 0 &&
			    syscall(SYS_pidfd_send_signal, susp[i].pidfd, 0, NULL, 0) == 0) {
				fd = susp[i].pidfd;
				*tty_intr = susp[i].tty_intr;
			} else {
				close(susp[i].pidfd);
			}
			susp[i--] = susp[--nsusp];
		}
	pthread_mutex_unlock(&susp_lock);
	return fd;
}

/* Ends our SUSPEND's stop of the process of @pidfd (from tnf_suspended_take), closes it. */
void tnf_suspended_resume(int pidfd)
{
	if (pidfd < 0)
		return;
	syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
	close(pidfd);
}
