/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel mode (tnfctl_kernel_open(3TNF)): the tracepoints as probes
 * (kprobes.c), the BPF side and its consumer (ktrace.c), and the TNF file
 * the consumer writes (ktrace_file.c, over libtnfprobe's writer).
 */
#ifndef TNF_KTRACE_H
#define TNF_KTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <tnf/probe.h>
#include <tnf/tnfctl.h>
#include "ktrace_events.h"

#define KT_MAX_ARGS 14 /* a TNF probe type holds 16 slots: tag, time_delta, these */

/* One tracepoint field kept as an event argument. */
struct kt_field {
	uint16_t off;	 /* in the tracepoint's record */
	uint16_t size;	 /* bytes in the record (char arrays: the array) */
	uint16_t ev_off; /* in the TNF event */
	uint8_t kind;	 /* TNF_K_* */
	int8_t str;	 /* index among the copied strings, -1 if none */
	bool char_array; /* a string inside the fixed record */
};

/* A kernel probe: one tracepoint. */
struct kt_probe {
	char *subsys;
	char *event;
	uint32_t tp_id; /* the tracepoint's id (common_type) */
	bool parsed;	/* format read (lazily: 2000+ of them) */
	bool enabled, traced;
	int nfields;
	struct kt_field fields[KT_MAX_ARGS];
	struct kt_event_cfg cfg; /* what the BPF program needs */
	struct bpf_link *link;	 /* attached while enabled, traced and tracing is on */
	int perf_fd;		 /* the link's perf event (the link closes it) */
	uint64_t serial;	 /* the link's cookie and kt_events key */
	int slot;		 /* its stub program without cookies (ktrace.c), or -1 */
	bool active;		 /* its kt_events entry is there: the program writes */
	/* the TNF probe type (libtnfprobe's control block shape) */
	tnf_probe_control_t cb;
	const struct tnf_type_desc *slots[KT_MAX_ARGS + 3];
};

struct kt_state;
struct tnfctl_handle;

/* A process of the filter: its pid and start (0 for pid 0, no process). */
struct kt_pid {
	pid_t pid;
	uint64_t start;
};

/* A kernel handle's state (tnfctl_handle.kern). */
struct tnf_kernel {
	const char *tracefs;
	struct kt_probe *probes;
	struct tnfctl_probe_handle **ph; /* by id - 1 */
	unsigned long n;
	struct kt_state *ks; /* the loaded BPF object, while there is a buffer */
	char *file;
	uint64_t size;
	bool tracing, filter;
	struct kt_pid *pids;
	int npids;
	pid_t owner; /* the process that opened it (a fork's copy is not usable) */
};

/* kernel.c */
bool tnf_is_kernel(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_kernel_err(int e); /* -errno to an error code */
void tnf_kernel_refresh_attrs(struct tnfctl_handle *h);

/* kfilter.c: the process filter's list and its BPF map */
tnfctl_errcode_t tnf_kfilter_load(struct tnf_kernel *k);
void tnf_kfilter_free(struct tnf_kernel *k);

/* kprobes.c */
int kt_probes_list(const char *tracefs, struct kt_probe **out, unsigned long *n);
int kt_probe_parse(const char *tracefs, struct kt_probe *p, unsigned long id);
void kt_probes_free(struct kt_probe *p, unsigned long n);
const char *kt_tracefs(void);

/* ktrace.c: the BPF object, its links and the consumer thread */
struct kt_state;
int kt_load(struct kt_state **ks, uint64_t rb_size, struct kt_probe *probes, unsigned long n);
void kt_unload(struct kt_state *ks);
int kt_activate(struct kt_state *ks, struct kt_probe *p);
void kt_deactivate(struct kt_state *ks, struct kt_probe *p);
void kt_quiesce(void);
void kt_forget(struct kt_state *ks);
void kt_fork_child(struct kt_state *ks);
void kt_set_tracing(struct kt_state *ks, bool on);
void kt_set_filter(struct kt_state *ks, bool on);
int kt_filter_update(struct kt_state *ks, uint32_t pid, uint64_t start, bool add);
int kt_start_consumer(struct kt_state *ks);
void kt_drain(struct kt_state *ks);
uint64_t kt_lost_total(struct kt_state *ks);

/* ktrace_file.c: one kernel trace file per process (the writer's state is global) */
int ktf_open(int fd, uint64_t size);
void ktf_close(void);
void ktf_pause(void);
void ktf_event(struct kt_probe *p, const struct kt_hdr *h, const uint8_t *fixed, const char *strs,
	       size_t strs_len);
void ktf_lost(uint64_t n, unsigned int reason);
void ktf_forget(void);
void ktf_probe_reset(struct kt_probe *p);
bool ktf_broken(void);

#endif
