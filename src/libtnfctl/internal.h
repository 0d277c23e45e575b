/* SPDX-License-Identifier: BSD-2-Clause */
/* Controller-side internals shared by the API files (open.c, continue.c ...). */
#ifndef TNFCTL_INTERNAL_H
#define TNFCTL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <tnf/tnfctl.h>
#include "proto.h"

#define TNF_API __attribute__((visibility("default")))

enum tnf_hstate {
	TNF_H_STOPPED, /* target stopped, handle usable */
	TNF_H_EXECED,  /* after EXEC: only close is allowed */
	TNF_H_ENDED,   /* after EXIT/TARGGONE: only close is allowed */
	TNF_H_GONE,    /* killed while stopped (NOPROCESS) */
};

struct tnfctl_handle {
	pthread_mutex_t lock; /* one call at a time per handle */
	int sock;	      /* our end of the handle socket */
	pid_t pid;
	bool exec_child; /* started by exec_open: killed by a DEFAULT close */
	enum tnf_hstate state;
	bool have_event;
	tnfctl_event_info_t last;
	tnfctl_trace_attrs_t attrs;
};

/* client.c: the tracer helper process and handle sockets */
tnfctl_errcode_t tnf_client_new_handle(struct tnfctl_handle **hp);
void tnf_client_free_handle(struct tnfctl_handle *h);
tnfctl_errcode_t tnf_client_call(struct tnfctl_handle *h, const struct tnf_req *req, int fd,
				 struct tnf_rep *rep);
tnfctl_errcode_t tnf_client_wait(struct tnfctl_handle *h, struct tnf_rep *rep);
int tnf_client_socketpair(int sv[2]);
tnfctl_errcode_t tnf_client_adopt(int sock, pid_t pid, struct tnfctl_handle **hp);
void tnf_client_note_lost(uint64_t lost);
void tnf_spawned_add(pid_t pid);
void tnf_spawned_reap(pid_t pid);

/* exec.c: program lookup and environment */
tnfctl_errcode_t tnf_find_program(const char *pgm, char **path);
tnfctl_errcode_t tnf_check_dynamic(const char *path);
char **tnf_build_env(const char *ld_preload, const char *libtnfprobe_path);
void tnf_free_env(char **env);

#endif
