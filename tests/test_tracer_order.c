// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tracer helper's state machine (src/libtnfctl/tracer.c and ptrace.c,
 * compiled in here) fed ring-buffer records and wait statuses in a chosen
 * order, with ptrace, kill and the BPF side replaced by fakes.  No process
 * is traced: this is for the orders a real kernel gives only now and then.
 *
 * The ring buffer hands out records in the order they were reserved: a
 * record reserved earlier on another CPU and not yet submitted holds back
 * the ones after it.  So the SIGSTOP that a record sent can be collected
 * (waitpid) while the record cannot be read yet.  Under make check
 * SANITIZE=1, test_faults' full-ring test hung now and then on exactly
 * this with an EXEC record: the SIGSTOP was taken for a user's, the record
 * then renewed the thread list, and the tracer waited for a stop that had
 * already happened.  With other records the tracer delivered that SIGSTOP:
 * the target made a job-control stop, and could be left in it.  The fakes
 * model the kernel: tnf_events_poll reads the records submitted so far,
 * tnf_events_poll_reserved also those still being written (it waits).
 */
#define ptrace fake_ptrace
#define kill fake_kill
#include "../src/libtnfctl/tracer.c"
#include "../src/libtnfctl/ptrace.c"
#undef ptrace
#undef kill

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define TGID 4242

/* ---- fakes ---------------------------------------------------------------- */

static struct tnf_rec fake_recs[8];
static int fake_nrecs;	  /* records reserved by the "kernel" */
static int fake_readable; /* how many of them tnf_events_poll can read */
static int fake_next;	  /* the next one it reads */
static struct tnf_rep fake_reps[8];
static int fake_nreps;
static long fake_cont_sig = -1; /* the signal of the last PTRACE_CONT */
static int fake_nconts;

long fake_ptrace(enum __ptrace_request req, ...)
{
	va_list ap;
	long data;

	va_start(ap, req);
	(void)va_arg(ap, pid_t);
	(void)va_arg(ap, void *);
	data = va_arg(ap, long);
	va_end(ap);
	if (req == PTRACE_CONT) {
		fake_cont_sig = data;
		fake_nconts++;
	}
	return 0;
}

int fake_kill(pid_t pid, int sig)
{
	(void)pid;
	(void)sig;
	return 0;
}

int tnf_events_poll(void (*cb)(const struct tnf_rec *))
{
	int n = 0;

	for (; fake_next < fake_readable; fake_next++, n++)
		cb(&fake_recs[fake_next]);
	return n;
}

int tnf_events_poll_reserved(void (*cb)(const struct tnf_rec *))
{
	fake_readable = fake_nrecs;
	return tnf_events_poll(cb);
}

int tnf_send(int sock, const void *buf, size_t len, int fd)
{
	(void)sock;
	(void)fd;
	if (len == sizeof(struct tnf_rep) && fake_nreps < 8)
		memcpy(&fake_reps[fake_nreps++], buf, len);
	return 0;
}

ssize_t tnf_recv(int sock, void *buf, size_t len, int *fd)
{
	(void)sock;
	(void)buf;
	(void)len;
	(void)fd;
	return 0;
}

int tnf_events_load(bool use_kfunc)
{
	(void)use_kfunc;
	return -1;
}

int tnf_events_epoll_fd(void)
{
	return -1;
}

uint64_t tnf_events_lost(void)
{
	return 0;
}

int tnf_events_track(pid_t tgid, unsigned int flags, uint64_t r_state_addr)
{
	(void)tgid;
	(void)flags;
	(void)r_state_addr;
	return 0;
}

int tnf_events_untrack(pid_t tgid)
{
	(void)tgid;
	return 0;
}

int tnf_events_attach_rtld(const char *ldso_path)
{
	(void)ldso_path;
	return 0;
}

int tnf_events_attach_libc(const char *libc_path)
{
	(void)libc_path;
	return 0;
}

void tnf_events_untrack_all(void)
{
}

bool tnf_events_kfunc_available(void)
{
	return true;
}

void tnf_events_unload(void)
{
}

int tnf_proc_tgid(pid_t tid)
{
	return tid;
}

int tnf_proc_tracer(pid_t pid)
{
	(void)pid;
	return getpid();
}

bool tnf_proc_sigstop_pending(pid_t pid)
{
	(void)pid;
	return false;
}

bool tnf_proc_kthread(pid_t pid)
{
	(void)pid;
	return false;
}

bool tnf_proc_exiting(pid_t tid)
{
	(void)tid;
	return false;
}

int tnf_proc_open_task_file(pid_t pid, const char *name)
{
	(void)pid;
	(void)name;
	errno = ENOENT;
	return -1;
}

unsigned long long tnf_proc_starttime(pid_t pid)
{
	(void)pid;
	return 0;
}

void tnf_proc_wait_stopped(pid_t pid)
{
	(void)pid;
}

int tnf_proc_maps(pid_t pid, struct tnf_maps_info *mi)
{
	(void)pid;
	(void)mi;
	return -1;
}

int tnf_rtld_locate(pid_t pid, const struct tnf_maps_info *mi, uint64_t *r_state_addr)
{
	(void)pid;
	(void)mi;
	(void)r_state_addr;
	return -1;
}

int tnf_rtld_consistent(pid_t pid, uint64_t r_state_addr)
{
	(void)pid;
	(void)r_state_addr;
	return 0;
}

int tnf_rtld_last_object(pid_t pid, uint64_t r_state_addr, char *buf, size_t len)
{
	(void)pid;
	(void)r_state_addr;
	(void)buf;
	(void)len;
	return -1;
}

int tnf_elf_is_dynamic(int fd)
{
	(void)fd;
	return 1;
}

/* ---- helpers -------------------------------------------------------------- */

/* A record the "kernel" reserved; tnf_events_poll reads it after fake_submit(). */
static void fake_record(unsigned int kind, unsigned int flags, const char *path)
{
	struct tnf_rec *r = &fake_recs[fake_nrecs++];

	memset(r, 0, sizeof(*r));
	r->seq = fake_nrecs;
	r->kind = kind;
	r->flags = flags;
	r->tgid = TGID;
	r->tid = TGID;
	r->old_tid = TGID;
	if (path)
		snprintf(r->path, sizeof(r->path), "%s", path);
}

static void fake_submit(void)
{
	fake_readable = fake_nrecs;
}

/* A status of the (single) thread, as the tracer's waitpid gets it. */
static void fake_wait(int status)
{
	on_wait(TGID, status);
}

/* The rest of the tracer's loop: the records, then every target evaluated. */
static void loop_tail(void)
{
	drain_records();
	evaluate_all();
}

#define SIGSTOP_DELIVERY ((SIGSTOP << 8) | 0x7f)

/* An idle, stopped, single-threaded target, then tnfctl_continue on it. */
static struct target *continued_target(void)
{
	struct target *t = target_new(TGID, open("/dev/null", O_RDONLY | O_CLOEXEC));
	struct thr *th;

	assert_non_null(t);
	assert_true(t->sock >= 0);
	th = thr_add(t, TGID);
	assert_non_null(th);
	th->stopped = true;
	t->phase = PH_IDLE;
	op_continue(t, false, -1);
	assert_int_equal(t->phase, PH_RUNNING);
	assert_false(thr_find(t, TGID)->stopped);
	assert_int_equal(fake_cont_sig, 0);
	return t;
}

static int setup(void **state)
{
	(void)state;
	fake_nrecs = fake_readable = fake_next = fake_nreps = fake_nconts = 0;
	fake_cont_sig = -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	while (targets)
		target_destroy(targets);
	return 0;
}

/* The event reported on the handle, and the thread stopped with nothing to deliver. */
static void assert_reported(struct target *t, int event, const char *what)
{
	struct thr *th;

	if (fake_nreps != 1)
		fail_msg("%s: %d replies, expected the event (phase %d)", what, fake_nreps,
			 t->phase);
	assert_int_equal(fake_reps[0].kind, TNF_REP_DONE);
	assert_int_equal(fake_reps[0].err, TNFCTL_ERR_NONE);
	assert_int_equal(fake_reps[0].event, event);
	assert_int_equal(t->phase, PH_IDLE);
	th = thr_find(t, TGID);
	assert_non_null(th);
	assert_true(th->stopped);
	assert_int_equal(th->expect_sigstop, 0);
}

/* The next tnfctl_continue resumes the thread without a signal. */
static void assert_resumed_quietly(struct target *t, const char *what)
{
	int n = fake_nconts;

	op_continue(t, false, -1);
	assert_int_equal(fake_nconts, n + 1);
	if (fake_cont_sig != 0)
		fail_msg("%s: resumed with signal %ld: the record's own SIGSTOP delivered",
			 what, fake_cont_sig);
}

/* ---- tests ---------------------------------------------------------------- */

/* The usual order: the EXEC record, then its SIGSTOP. */
static void test_exec_record_then_stop(void **state)
{
	struct target *t = continued_target();

	(void)state;
	fake_record(TNF_REC_EXEC, TNF_RF_STOPPED, "/bin/true");
	fake_submit();
	loop_tail();
	assert_int_equal(fake_nreps, 0);
	fake_wait(SIGSTOP_DELIVERY);
	loop_tail();
	assert_reported(t, TNFCTL_EVENT_EXEC, "EXEC record, then the stop");
	assert_string_equal(fake_reps[0].path, "/bin/true");
	assert_resumed_quietly(t, "EXEC record, then the stop");
}

/*
 * The SIGSTOP collected while the EXEC record is held back (not submitted,
 * or behind one that is not): the order of the hang.
 */
static void test_exec_stop_then_record(void **state)
{
	struct target *t = continued_target();

	(void)state;
	fake_record(TNF_REC_EXEC, TNF_RF_STOPPED, "/bin/true");
	fake_wait(SIGSTOP_DELIVERY);
	loop_tail();
	assert_reported(t, TNFCTL_EVENT_EXEC, "the stop before the EXEC record");
	assert_resumed_quietly(t, "the stop before the EXEC record");
}

/* The same with a DLOPEN record (no new thread list): the stop is not the user's. */
static void test_dlopen_stop_then_record(void **state)
{
	struct target *t = continued_target();

	(void)state;
	fake_record(TNF_REC_DLOPEN, TNF_RF_STOPPED, "/lib/libx.so");
	fake_wait(SIGSTOP_DELIVERY);
	loop_tail();
	assert_reported(t, TNFCTL_EVENT_DLOPEN, "the stop before the DLOPEN record");
	assert_resumed_quietly(t, "the stop before the DLOPEN record");
}

/* A FORK record (the parent's stop; the child untracked). */
static void test_fork_stop_then_record(void **state)
{
	struct target *t = continued_target();

	(void)state;
	fake_record(TNF_REC_FORK, TNF_RF_STOPPED, NULL);
	fake_recs[0].child = TGID + 1;
	fake_wait(SIGSTOP_DELIVERY);
	loop_tail();
	assert_reported(t, TNFCTL_EVENT_FORK, "the stop before the FORK record");
	assert_int_equal(fake_reps[0].child_pid, TGID + 1);
	assert_resumed_quietly(t, "the stop before the FORK record");
}

/* A SIGSTOP with no record at all is the user's: delivered when resumed. */
static void test_user_sigstop_delivered(void **state)
{
	struct target *t = continued_target();

	(void)state;
	fake_wait(SIGSTOP_DELIVERY);
	loop_tail();
	assert_int_equal(fake_nreps, 0);
	assert_int_equal(t->phase, PH_RUNNING);
	assert_int_equal(fake_cont_sig, SIGSTOP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exec_record_then_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_stop_then_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dlopen_stop_then_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_stop_then_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_sigstop_delivered, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
