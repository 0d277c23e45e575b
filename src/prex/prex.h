/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prex - the interactive probe controller (Solaris prex(1) command language)
 * built only on the public <tnf/tnfctl.h> API.  Shared declarations of the
 * files in src/prex/, each with one job:
 *
 *   main.c     options, start-up, the prompt/run cycle, quit
 *   kernel.c   prex -k: the kernel handle and the kernel-only commands
 *   target.c   the controlled processes: one thread per handle, the run
 *              loop, SIGINT, following forks and execs (-f), trace files
 *              made on demand (-f), quit
 *   image.c    -f: does a new image lack the probe runtime (static, no preload)?
 *   source.c   the input stack (stdin, .prexrc files, `source`), prompt,
 *              error messages naming the source and line
 *   edit.c     line editing, history and completion (libedit) on a tty
 *   lex.c      tokens of one logical line
 *   parse.c    statements, dispatched to the commands
 *   match.c    specs, selector lists and attribute-string matching
 *   sets.c     named sets ($name) and function aliases (&name)
 *   history.c  the command history and its replay on new probes
 *   cmd.c      probe-control commands, list tracefile, the kernel-only
 *              commands' dispatch
 *   list.c     list probes, values, sets, fcns
 *   help.c     help text
 */
#ifndef PREX_H
#define PREX_H

#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <tnf/tnfctl.h>

#define PREX_DEFAULT_SIZE (4u * 1024 * 1024) /* trace file bytes, as Solaris */
#define PREX_KERNEL_SIZE  (384u * 1024)	     /* kernel buffer bytes (-k), as Solaris */

/* ---- main.c ---- */
struct prex_opts {
	const char *argv0;   /* our argv[0]: the prompt and message prefix */
	const char *outname; /* -o, or NULL */
	unsigned long size;  /* -s in bytes (default PREX_DEFAULT_SIZE) */
	bool size_given;
	const char *preload; /* -l */
	pid_t pid;	     /* -p */
	char **cmd;	     /* exec mode: the command and its arguments */
	bool follow;	     /* -f */
	bool test;	     /* -t: pids on the stopped line, line-buffered */
	bool kernel;	     /* -k */
};
extern struct prex_opts g_opt;
extern char g_tracefile[PATH_MAX]; /* the first target's trace file */
/* The name prex gave it, as typed with -o (or $TMPDIR/trace-PID); "" if none. */
extern char g_tracefile_given[PATH_MAX];
void prex_quit(tnfctl_targ_op_t op) __attribute__((noreturn));
/* Parser result: the user typed `continue`. */
void prex_request_continue(void);

/* ---- source.c ---- */
void source_init(void);
int source_push(const char *path); /* 0, or -1 with errno */
bool source_full(void);		   /* no room for one more `source` */
/*
 * Reads one logical line (backslash-newline joined, ending in '\n') into
 * *text (malloc'ed, the caller frees).  Returns 1 on a line, 0 when stdin
 * (not a tty) reached its end.
 */
int source_read(char **text, int *first_line);
bool source_is_tty(void);	/* is the input being read the terminal? */
const char *source_name(void);	/* name of the source of the current line */
void source_set_line(int line); /* line that messages refer to */
void syntax_error(int line, const char *tok);
void semantic_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void prex_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int prex_dir_writable(const char *path); /* main.c: 0, or -1 with errno */

/* ---- edit.c ---- */
int edit_init(void);			/* 0 if line editing is on */
char *edit_getline(const char *prompt); /* malloc'ed line with '\n', NULL at EOF */
void edit_end(void);

/* ---- lex.c ---- */
enum tok {
	T_EOL,
	T_IDENT,
	T_SETNAME,
	T_FCNNAME,
	T_VALSTR,
	T_REGEXP,
	T_INT,
	T_EQ,
	T_COMMA,
	T_INVAL,
	/* reserved words, in the order of lex_words[] */
	K_ADD,
	K_ALLOC,
	K_BUFFER,
	K_CLEAR,
	K_CONNECT,
	K_CONTINUE,
	K_CREATE,
	K_DEALLOC,
	K_DELETE,
	K_DISABLE,
	K_ENABLE,
	K_FCNS,
	K_FILTER,
	K_HELP,
	K_HISTORY,
	K_TRACEFILE,
	K_KILL,
	K_KTRACE,
	K_LIST,
	K_OFF,
	K_ON,
	K_PFILTER,
	K_PROBES,
	K_QUIT,
	K_RESUME,
	K_SETS,
	K_SOURCE,
	K_SUSPEND,
	K_TRACE,
	K_UNTRACE,
	K_VALUES,
	K_LAST
};
struct token {
	enum tok type;
	char *text;	    /* value: name without $ or &, string without quotes */
	char *raw;	    /* as written, for error messages */
	unsigned long ival; /* T_INT */
	int line;
};
extern const char *const lex_words[]; /* K_ADD.. K_VALUES, NULL-ended */
/* Splits @text (one logical line) into tokens ending with T_EOL. */
int lex_line(const char *text, int first_line, struct token **toks, int *ntoks);
const char *lex_string_end(const char *p); /* @p at a quote: its closing one, or NULL */
const char *lex_regex_end(const char *p);  /* @p at a slash: the closing one, or NULL */
void lex_free(struct token *toks, int ntoks);

/* ---- parse.c ---- */
void parse_line(const char *text, int first_line);

/* ---- match.c ---- */
struct spec {
	bool regex;
	bool invalid; /* a regex that did not compile: matches nothing, as in the original */
	char *str;
	regex_t re;
};
struct expr {
	struct spec *left, *right;
};
/* An immutable selector list, shared by sets and history entries. */
struct exprlist {
	int refs;
	int n;
	struct expr *v;
};
struct spec *spec_new(const char *str, bool regex); /* a bad regex is reported, ->invalid */
void spec_free(struct spec *s);
bool spec_match(const struct spec *s, const char *str);
void spec_print(FILE *fp, const struct spec *s);
struct exprlist *exprlist_new(void);
void exprlist_add(struct exprlist *l, struct spec *left, struct spec *right);
struct exprlist *exprlist_get(struct exprlist *l);
void exprlist_put(struct exprlist *l);
void exprlist_print(FILE *fp, const struct exprlist *l);
bool exprlist_match(const struct exprlist *l, const char *attrs);
/* Calls @fn for each ;-unit of @attrs whose name @s matches. */
typedef void attr_fn(const char *name, const char *values, void *cd);
void attr_walk(const struct spec *s, const char *attrs, attr_fn *fn, void *cd);
/* Calls @fn for each value token of @values that @s matches. */
typedef void val_fn(const char *value, void *cd);
void val_walk(const struct spec *s, const char *values, val_fn *fn, void *cd);
/* "enable on|off; trace on|off; object O; funcs[ F...];" + attr_string, malloc'ed. */
char *probe_attrs(tnfctl_handle_t *h, tnfctl_probe_t *p);
/* Every value of @attr over all probes, sorted, *@n of them; the caller frees all. */
char **attr_values(const char *attr, int *n);

/* ---- sets.c ---- */
void set_define(const char *name, struct exprlist *l); /* takes a reference */
struct exprlist *set_find(const char *name);	       /* borrowed */
void sets_list(void);
void fcn_define(const char *name, const char *entry);
const char *fcn_entry(const char *name);     /* entry symbol of &name, or NULL */
const char *fcn_alias_of(const char *entry); /* name of an alias of @entry, or NULL */
void fcns_list(void);
/* Completion: the @i-th set (or function) name, NULL past the end. */
const char *set_name_at(int i);
const char *fcn_name_at(int i);
void sets_reset(void); /* forget them all (tests) */

/* ---- history.c ---- */
enum cmd_kind {
	CMD_ENABLE,
	CMD_DISABLE,
	CMD_CONNECT,
	CMD_CLEAR,
	CMD_TRACE,
	CMD_UNTRACE
};
void history_add(enum cmd_kind kind, const char *fcn, struct exprlist *l);
void history_list(void);
void history_reset(void); /* forget it all (tests) */
/* Applies one command to probe @p when it matches. */
tnfctl_errcode_t cmd_apply_probe(tnfctl_handle_t *h, tnfctl_probe_t *p, enum cmd_kind kind,
				 const char *fcn, const struct exprlist *l);
/* The create callback: replays the whole history on a new probe. */
void *history_replay(tnfctl_handle_t *h, tnfctl_probe_t *p);
/* A fork child's USDT probe the history leaves enabled, disabled: enabled, or named. */
tnfctl_errcode_t history_usdt_retry(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd);
bool history_enables(void);
/* The whole history on one probe (a tnfctl_probe_op_t); the first error. */
tnfctl_errcode_t history_apply_probe(tnfctl_handle_t *h, tnfctl_probe_t *p, void *cd);
/* Nonzero in a thread that registers the callback on an inherited copy. */
extern __thread int history_no_replay;
/* Set by history_replay() when a probe write was refused for want of a file. */
extern __thread int history_need_file;
/* A typed probe command is being applied: it reports its own error (cmd.c). */
extern __thread int history_in_command;
/* prex -f: the process a USDT probe's error names (0: none). */
extern __thread pid_t history_pid;

/* ---- cmd.c ---- */
void cmd_probe(enum cmd_kind kind, const char *fcn, const char *setname, struct exprlist *l);
void cmd_list_tracefile(void);
void cmd_kernel_only(const char *what);
#define PREX_USDT_MAX_ARGS 12 /* <sys/sdt.h>'s STAP_PROBE1..12 */
/* usdt strings: arguments @args of @prov:@name read as C strings (TNFCTL_USDT_STRINGS). */
void cmd_usdt_strings(const char *prov, const char *name, const unsigned long *args, int n);
/*
 * The kernel-only commands (kernel.c).  Called through this table, set by
 * kernel_open(): NULL in user mode, where they are refused, and in the
 * fuzz harness, which links the parser without libtnfctl.
 */
struct kernel_ops {
	void (*buffer_show)(void);
	void (*buffer_alloc)(unsigned long size, bool given);
	void (*buffer_dealloc)(void);
	void (*ktrace_show)(void);
	void (*ktrace_set)(bool on);
	void (*pfilter_show)(void);
	void (*pfilter_set)(bool on);
	void (*pfilter_add)(const unsigned long *pids, int n);
	void (*pfilter_delete)(const unsigned long *pids, int n);
	void (*list_tracefile)(void);
	void (*after_statement)(void); /* the empty-filter warning */
};
extern const struct kernel_ops *kernel_ops;
/*
 * What an ALLOCFAIL of a kernel probe operation may mean (kernel.c): the
 * no-cookie variant's cap.  "" for anything else.
 */
#define PREX_KERNEL_CAP_HINT                                                                       \
	" (out of memory, or more than 64 tracepoints traced at once on a kernel "                 \
	"without BPF cookies, before Linux 5.15)"

/* ---- kernel.c ---- */
/* prex -k: opens the kernel (exits on failure), registers it as the one target. */
void kernel_open(void);

/* ---- list.c ---- */
void list_probes(struct exprlist *speclist, const char *setname, struct exprlist *sel);
void list_values(struct exprlist *speclist);

/* ---- help.c ---- */
void help_general(void);
void help_on(const char *word);
extern const char *const help_topics[];

/* ---- image.c ---- */
/* A process stopped at its exec will not load libtnfprobe.so.1 (static: @is_static). */
bool image_lacks_runtime(pid_t pid, bool *is_static);

/* ---- target.c ---- */
struct target;
typedef void target_fn(tnfctl_handle_t *h, pid_t pid, const char *tracefile, void *cd);
/* The first one, parked; @noprobes: opened with TNFCTL_OPEN_NOPROBES (USDT probes only). */
int target_start(tnfctl_handle_t *h, pid_t pid, bool noprobes);
int target_kernel(tnfctl_handle_t *h); /* prex -k: the kernel, no thread */
int targets_count(void);
void targets_foreach(target_fn *fn, void *cd); /* live targets, while all are stopped */
/*
 * tnfctl_probe_apply() on the target of @h; with -f a target without a
 * trace file gets one first when @op selects one of its probes.
 */
tnfctl_errcode_t target_probe_apply(tnfctl_handle_t *h, tnfctl_probe_op_t op, void *cd);
/* Runs every target until SIGINT (returns 0, all stopped) or all are gone (1). */
int targets_run(void);
/* Closes every live target with @op; returns 0 or 1 if a close failed. */
int targets_close(tnfctl_targ_op_t op);
void targets_install_signals(void);
/* SIGTERM or SIGHUP if one came (prex then quits as `quit` does), else 0. */
int prex_term_signal(void);
/* Prints the BROKEN notice for targets whose tracing broke. */
void targets_check_broken(void);

#endif /* PREX_H */
