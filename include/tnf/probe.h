/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <tnf/probe.h>: TNF probes for user programs (Solaris TNF_PROBE(3TNF)).
 *
 * A probe site expands to a static control block in the ELF section
 * "tnf_probes" and a test of its test_func and its USDT semaphore: a
 * disabled probe costs two loads and one predictable branch.  A controller (libtnfctl) finds the blocks
 * through the section headers of each loaded object and enables, traces and
 * connects a probe by single aligned pointer stores into its block.
 *
 * Each site is also a SystemTap SDT probe (USDT), made by <sys/sdt.h>'s
 * STAP_PROBEn with a semaphore: bpftrace, perf, libbpf and any other USDT
 * consumer list and fire TNF probes, with or without a TNF controller.  The
 * provider is TNF_USDT_PROVIDER (default "tnf"; define it before the
 * probes of a compilation unit to change it), the name is the probe's, the
 * arguments are the probe's (see TNF_PROBE_n).  <sys/sdt.h> (Debian's
 * systemtap-sdt-dev) is needed to compile a program with probes, not to run
 * it; defining TNF_NO_USDT leaves the SDT notes out.
 */
#ifndef TNF_PROBE_H
#define TNF_PROBE_H

#include <stddef.h>
#include <stdint.h>

#if !defined(NPROBE) && !defined(TNF_NO_USDT)
#if defined(_SYS_SDT_H) && !defined(_SDT_HAS_SEMAPHORES)
#error "<tnf/probe.h> needs <sys/sdt.h> with semaphores: include it first, or define _SDT_HAS_SEMAPHORES before <sys/sdt.h>"
#endif
#ifndef _SDT_HAS_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
#endif
#include <sys/sdt.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- control block: the ABI shared with libtnfctl ------------------------ */

/* Value of tnf_probe_control.version for this layout ("TNF" 1). */
#define TNF_PROBE_VERSION_1 0x544e4601UL

struct tnf_ops;
struct tnf_type_desc;
typedef struct tnf_probe_control tnf_probe_control_t;

/* Handed from the test function through the argument stores to probe_func. */
typedef struct tnf_probe_setup {
	struct tnf_ops *tpd_p;	     /* the firing thread's writer state */
	void *buffer_p;		     /* the event being built */
	tnf_probe_control_t *probe_p; /* the probe that fired */
} tnf_probe_setup_t;

typedef void *(*tnf_probe_test_func_t)(void *, tnf_probe_control_t *, tnf_probe_setup_t *);
typedef void *(*tnf_probe_alloc_func_t)(struct tnf_ops *, tnf_probe_control_t *,
					tnf_probe_setup_t *);
typedef void (*tnf_probe_func_t)(tnf_probe_setup_t *);

/*
 * Connected probe functions, most recently connected first.  Nodes live in
 * libtnfprobe's tnf_chain_pool and are written by the controller before it
 * publishes them with one store to tnf_probe_control.chain; tnf_trace_end
 * calls each node's func, then commit_func.
 */
struct tnf_probe_chain {
	tnf_probe_func_t func;
	const struct tnf_probe_chain *next;
};

/*
 * One per probe site, in section "tnf_probes".  Fields the controller
 * writes: test_func (NULL = disabled), alloc_func, probe_func, commit_func
 * (tnf_trace_commit = traced, tnf_trace_rollback = untraced), chain.  The
 * others are set at compile time (index is the runtime's cache).  A block
 * whose commit_func is NULL has never been touched by a controller.
 */
struct tnf_probe_control {
	uintptr_t version; /* TNF_PROBE_VERSION_1 */
	uintptr_t next;	   /* unused on Linux; kept for Solaris layout */
	tnf_probe_test_func_t test_func;
	tnf_probe_alloc_func_t alloc_func;
	tnf_probe_func_t probe_func;
	tnf_probe_func_t commit_func;
	uintptr_t index; /* runtime: reference to this probe's type record */
	const char *attrs;
	const struct tnf_type_desc *const *slot_types; /* NULL-terminated */
	unsigned long tnf_event_size;			/* bytes */
	const struct tnf_probe_chain *chain;		/* connected functions */
};

/* ---- argument types ------------------------------------------------------ */

/*
 * Kinds of slot types.  A probe's slot_types point at descriptors that live
 * in the probing object itself (static, per translation unit), so a program
 * with probes needs no symbol from libtnfprobe; the runtime keys built-in
 * types by kind and user records by descriptor address.
 */
#define TNF_K_PROBE_EVENT 1
#define TNF_K_TIME_DELTA  2
#define TNF_K_CHAR	  3
#define TNF_K_INT8	  4
#define TNF_K_UINT8	  5
#define TNF_K_INT16	  6
#define TNF_K_UINT16	  7
#define TNF_K_INT32	  8
#define TNF_K_UINT32	  9
#define TNF_K_INT64	  10
#define TNF_K_UINT64	  11
#define TNF_K_FLOAT32	  12
#define TNF_K_FLOAT64	  13
#define TNF_K_STRING	  14
#define TNF_K_OPAQUE	  15
#define TNF_K_SIZE	  16
#define TNF_K_RECORD	  17
#define TNF_K_MAX	  18

/* One member of a user record (TNF_DEFINE_RECORD_n). */
struct tnf_record_member {
	const struct tnf_type_desc *type;
	const char *name;
	unsigned long offset; /* offsetof() in the C struct, bytes */
	unsigned long size;   /* sizeof() of the C member, bytes */
};

/* What a slot holds.  Records add their name and members. */
struct tnf_type_desc {
	unsigned int kind; /* TNF_K_* */
	unsigned int nmembers;
	const char *name;
	const struct tnf_record_member *members;
};

/*
 * The public head of the runtime's per-thread writer state: encoders for
 * arguments that live outside the event (strings, records).  Each stores a
 * reference to the data it writes into *slot (0 = null reference).
 */
struct tnf_ops {
	void (*put_string)(tnf_probe_setup_t *setup, uint32_t *slot, const char *str);
	void (*put_record)(tnf_probe_setup_t *setup, uint32_t *slot,
			   const struct tnf_type_desc *type, const void *rec);
};

#if defined(__GNUC__) || defined(__clang__)
#define TNF_UNUSED_ __attribute__((unused))
#else
#define TNF_UNUSED_
#endif

/*
 * For each argument type T: T##_tnf_t is its slot in the event, T##_tnf_desc
 * its descriptor, T##_tnf_put() stores a value.  Slots follow C layout,
 * which is also the TNF layout (inline scalars at their natural alignment,
 * references 4 bytes).  T##_tnf_arg_t is the type a value is converted to
 * (once, when the probe fires), T##_tnf_sdt() what the USDT site gets of it:
 * the value itself, but the bits of a float or double (an integer of the
 * same size), as USDT consumers read integers.
 */
#define TNF_SCALAR_TYPE_(t, ctype, kind)                                                           \
	typedef ctype t##_tnf_t;                                                                   \
	typedef ctype t##_tnf_arg_t;                                                               \
	static const struct tnf_type_desc t##_tnf_desc TNF_UNUSED_ = {kind, 0, 0, 0};              \
	static inline void t##_tnf_put(tnf_probe_setup_t *s, t##_tnf_t *slot, t##_tnf_t v)         \
	{                                                                                          \
		(void)s;                                                                           \
		*slot = v;                                                                         \
	}

#define TNF_SDT_SAME_(t)                                                                           \
	static inline t##_tnf_arg_t t##_tnf_sdt(t##_tnf_arg_t v)                                   \
	{                                                                                          \
		return v;                                                                          \
	}
#define TNF_SDT_BITS_(t, utype)                                                                    \
	static inline utype t##_tnf_sdt(t##_tnf_arg_t v)                                           \
	{                                                                                          \
		union {                                                                            \
			t##_tnf_arg_t v;                                                           \
			utype u;                                                                   \
		} b;                                                                               \
		b.v = v;                                                                           \
		return b.u;                                                                        \
	}

#if __SIZEOF_LONG__ == 8
#define TNF_K_LONG_  TNF_K_INT64
#define TNF_K_ULONG_ TNF_K_UINT64
#else
#define TNF_K_LONG_  TNF_K_INT32
#define TNF_K_ULONG_ TNF_K_UINT32
#endif

typedef int64_t tnf_i64_a8_ __attribute__((aligned(8)));
typedef uint64_t tnf_u64_a8_ __attribute__((aligned(8)));
typedef double tnf_f64_a8_ __attribute__((aligned(8)));

TNF_SCALAR_TYPE_(tnf_probe_event, uint32_t, TNF_K_PROBE_EVENT)
TNF_SCALAR_TYPE_(tnf_time_delta, uint32_t, TNF_K_TIME_DELTA)
TNF_SCALAR_TYPE_(tnf_char, char, TNF_K_CHAR)
TNF_SCALAR_TYPE_(tnf_int8, int8_t, TNF_K_INT8)
TNF_SCALAR_TYPE_(tnf_uint8, uint8_t, TNF_K_UINT8)
TNF_SCALAR_TYPE_(tnf_short, int16_t, TNF_K_INT16)
TNF_SCALAR_TYPE_(tnf_ushort, uint16_t, TNF_K_UINT16)
TNF_SCALAR_TYPE_(tnf_int16, int16_t, TNF_K_INT16)
TNF_SCALAR_TYPE_(tnf_uint16, uint16_t, TNF_K_UINT16)
TNF_SCALAR_TYPE_(tnf_int, int32_t, TNF_K_INT32)
TNF_SCALAR_TYPE_(tnf_uint, uint32_t, TNF_K_UINT32)
TNF_SCALAR_TYPE_(tnf_int32, int32_t, TNF_K_INT32)
TNF_SCALAR_TYPE_(tnf_uint32, uint32_t, TNF_K_UINT32)
TNF_SCALAR_TYPE_(tnf_long, long, TNF_K_LONG_)
TNF_SCALAR_TYPE_(tnf_ulong, unsigned long, TNF_K_ULONG_)
TNF_SCALAR_TYPE_(tnf_longlong, tnf_i64_a8_, TNF_K_INT64)
TNF_SCALAR_TYPE_(tnf_ulonglong, tnf_u64_a8_, TNF_K_UINT64)
TNF_SCALAR_TYPE_(tnf_int64, tnf_i64_a8_, TNF_K_INT64)
TNF_SCALAR_TYPE_(tnf_uint64, tnf_u64_a8_, TNF_K_UINT64)
TNF_SCALAR_TYPE_(tnf_float, float, TNF_K_FLOAT32)
TNF_SCALAR_TYPE_(tnf_double, tnf_f64_a8_, TNF_K_FLOAT64)
TNF_SCALAR_TYPE_(tnf_float32, float, TNF_K_FLOAT32)
TNF_SCALAR_TYPE_(tnf_float64, tnf_f64_a8_, TNF_K_FLOAT64)
TNF_SCALAR_TYPE_(tnf_size, size_t, TNF_K_SIZE)

TNF_SDT_SAME_(tnf_probe_event)
TNF_SDT_SAME_(tnf_time_delta)
TNF_SDT_SAME_(tnf_char)
TNF_SDT_SAME_(tnf_int8)
TNF_SDT_SAME_(tnf_uint8)
TNF_SDT_SAME_(tnf_short)
TNF_SDT_SAME_(tnf_ushort)
TNF_SDT_SAME_(tnf_int16)
TNF_SDT_SAME_(tnf_uint16)
TNF_SDT_SAME_(tnf_int)
TNF_SDT_SAME_(tnf_uint)
TNF_SDT_SAME_(tnf_int32)
TNF_SDT_SAME_(tnf_uint32)
TNF_SDT_SAME_(tnf_long)
TNF_SDT_SAME_(tnf_ulong)
TNF_SDT_SAME_(tnf_longlong)
TNF_SDT_SAME_(tnf_ulonglong)
TNF_SDT_SAME_(tnf_int64)
TNF_SDT_SAME_(tnf_uint64)
TNF_SDT_BITS_(tnf_float, uint32_t)
TNF_SDT_BITS_(tnf_double, uint64_t)
TNF_SDT_BITS_(tnf_float32, uint32_t)
TNF_SDT_BITS_(tnf_float64, uint64_t)
TNF_SDT_SAME_(tnf_size)

/* tnf_opaque: a pointer-sized value, printed in hex. */
typedef uintptr_t tnf_opaque_tnf_t;
typedef const void *tnf_opaque_tnf_arg_t;
TNF_SDT_SAME_(tnf_opaque)
static const struct tnf_type_desc tnf_opaque_tnf_desc TNF_UNUSED_ = {TNF_K_OPAQUE, 0, 0, 0};
static inline void tnf_opaque_tnf_put(tnf_probe_setup_t *s, tnf_opaque_tnf_t *slot, const void *v)
{
	(void)s;
	*slot = (uintptr_t)v;
}

/* tnf_string: a reference to a string record written after the event. */
typedef uint32_t tnf_string_tnf_t;
typedef const char *tnf_string_tnf_arg_t;
TNF_SDT_SAME_(tnf_string)
static const struct tnf_type_desc tnf_string_tnf_desc TNF_UNUSED_ = {TNF_K_STRING, 0, 0, 0};
static inline void tnf_string_tnf_put(tnf_probe_setup_t *s, tnf_string_tnf_t *slot, const char *v)
{
	s->tpd_p->put_string(s, slot, v);
}

/* ---- user records -------------------------------------------------------- */

#define TNF_NMEMB_(ctype, t, n)                                                                    \
	{                                                                                          \
		&t##_tnf_desc, #n, offsetof(ctype, n), sizeof(((ctype *)0)->n)                     \
	}

#ifndef NPROBE
/*
 * TNF_DECLARE_RECORD(ctype, rec) - TNF_PROBE(3TNF)
 * Makes @rec usable as a probe argument type: the value is a pointer to a
 * @ctype (NULL gives a null reference); the probe stores a reference to a
 * record holding the members named by TNF_DEFINE_RECORD_n.  Put it in a
 * header; exactly one file uses TNF_DEFINE_RECORD_n(ctype, rec, ...).
 */
#define TNF_DECLARE_RECORD(ctype, rec)                                                             \
	extern const struct tnf_type_desc rec##_tnf_desc;                                          \
	static inline void rec##_tnf_put(tnf_probe_setup_t *s, uint32_t *slot, const ctype *v)     \
	{                                                                                          \
		s->tpd_p->put_record(s, slot, &rec##_tnf_desc, v);                                 \
	}                                                                                          \
	typedef const ctype *rec##_tnf_arg_t;                                                      \
	static inline const ctype *rec##_tnf_sdt(const ctype *v)                                   \
	{                                                                                          \
		return v;                                                                          \
	}                                                                                          \
	typedef uint32_t rec##_tnf_t

/*
 * TNF_DEFINE_RECORD_1..5(ctype, rec, type_1, member_1, ...) - TNF_PROBE(3TNF)
 * Names the members of @ctype that a @rec record holds, each with its TNF
 * argument type (a built-in tnf_* type, tnf_string for a char *, or another
 * record type for a pointer to a struct).  The C member may be narrower or
 * wider than the TNF type; it is converted.
 */
#define TNF_DEFINE_RECORD_(ctype, rec, n, ...)                                                     \
	static const struct tnf_record_member rec##_tnf_members[] = {__VA_ARGS__};                 \
	const struct tnf_type_desc rec##_tnf_desc = {TNF_K_RECORD, n, #rec, rec##_tnf_members}
#define TNF_DEFINE_RECORD_1(ctype, rec, t1, n1)                                                    \
	TNF_DEFINE_RECORD_(ctype, rec, 1, TNF_NMEMB_(ctype, t1, n1))
#define TNF_DEFINE_RECORD_2(ctype, rec, t1, n1, t2, n2)                                            \
	TNF_DEFINE_RECORD_(ctype, rec, 2, TNF_NMEMB_(ctype, t1, n1), TNF_NMEMB_(ctype, t2, n2))
#define TNF_DEFINE_RECORD_3(ctype, rec, t1, n1, t2, n2, t3, n3)                                    \
	TNF_DEFINE_RECORD_(ctype, rec, 3, TNF_NMEMB_(ctype, t1, n1), TNF_NMEMB_(ctype, t2, n2),    \
			   TNF_NMEMB_(ctype, t3, n3))
#define TNF_DEFINE_RECORD_4(ctype, rec, t1, n1, t2, n2, t3, n3, t4, n4)                            \
	TNF_DEFINE_RECORD_(ctype, rec, 4, TNF_NMEMB_(ctype, t1, n1), TNF_NMEMB_(ctype, t2, n2),    \
			   TNF_NMEMB_(ctype, t3, n3), TNF_NMEMB_(ctype, t4, n4))
#define TNF_DEFINE_RECORD_5(ctype, rec, t1, n1, t2, n2, t3, n3, t4, n4, t5, n5)                    \
	TNF_DEFINE_RECORD_(ctype, rec, 5, TNF_NMEMB_(ctype, t1, n1), TNF_NMEMB_(ctype, t2, n2),    \
			   TNF_NMEMB_(ctype, t3, n3), TNF_NMEMB_(ctype, t4, n4),                   \
			   TNF_NMEMB_(ctype, t5, n5))
#else
#define TNF_DECLARE_RECORD(ctype, rec)					struct tnf_probe_control
#define TNF_DEFINE_RECORD_1(ctype, rec, t1, n1)				struct tnf_probe_control
#define TNF_DEFINE_RECORD_2(ctype, rec, t1, n1, t2, n2)			struct tnf_probe_control
#define TNF_DEFINE_RECORD_3(ctype, rec, t1, n1, t2, n2, t3, n3)		struct tnf_probe_control
#define TNF_DEFINE_RECORD_4(ctype, rec, t1, n1, t2, n2, t3, n3, t4, n4) struct tnf_probe_control
#define TNF_DEFINE_RECORD_5(ctype, rec, t1, n1, t2, n2, t3, n3, t4, n4, t5, n5)                    \
	struct tnf_probe_control
#endif

/* ---- probes -------------------------------------------------------------- */

#define TNF_STR2_(x) #x
#define TNF_STR_(x)  TNF_STR2_(x)

/* The USDT provider of the probes that follow: define it to change it. */
#ifndef TNF_USDT_PROVIDER
#define TNF_USDT_PROVIDER tnf
#endif

#ifndef TNF_NO_USDT
/*
 * The semaphore of provider:name, as <sys/sdt.h> names it (the consumers
 * raise it in every process that maps the object while they trace).  One
 * per object: a hidden weak symbol in a COMDAT group in ".probes", defined
 * by the first site of each compilation unit (.ifndef), as <sys/sdt.h>
 * defines _.stapsdt.base.
 */
#define TNF_SEMA_(p, n)	 TNF_SEMA2_(p, n)
#define TNF_SEMA2_(p, n) p##_##n##_semaphore
#define TNF_SEMA_DECL_(p, n)                                                                       \
	extern volatile unsigned short TNF_SEMA_(p, n) __attribute__((visibility("hidden")))
#define TNF_SEMA_DEF_(p, n) TNF_SEMA_DEF2_(TNF_STR_(TNF_SEMA_(p, n)))
#define TNF_SEMA_DEF2_(sym)                                                                        \
	__asm__ __volatile__(".ifndef " sym "\n"                                                   \
			     ".pushsection .probes,\"awG\",@progbits," sym ",comdat\n"             \
			     ".weak " sym "\n"                                                     \
			     ".hidden " sym "\n"                                                   \
			     ".type " sym ",@object\n"                                             \
			     ".balign 2\n" sym ":\n"                                               \
			     ".2byte 0\n"                                                          \
			     ".size " sym ",2\n"                                                   \
			     ".popsection\n"                                                       \
			     ".endif\n")
#define TNF_SEMA_ON_(p, n)	   __atomic_load_n(&TNF_SEMA_(p, n), __ATOMIC_RELAXED)
/* <sys/sdt.h>'s STAP_PROBEn, with the provider macro expanded first */
#define TNF_USDT_(n, p, name, ...) STAP_PROBE##n(p, name, ##__VA_ARGS__)
#define TNF_USDT0_(p, name)	   STAP_PROBE(p, name)
#else
#define TNF_SEMA_DECL_(p, n)
#define TNF_SEMA_DEF_(p, n)	   ((void)0)
#define TNF_SEMA_ON_(p, n)	   0
#define TNF_USDT_(n, p, name, ...) ((void)0)
#define TNF_USDT0_(p, name)	   ((void)0)
#endif

/*
 * The body of every probe site: the static control block in "tnf_probes",
 * then one relaxed load of test_func, one of the USDT semaphore, and one
 * branch on both.  @slots is the "a1 a2 " part of the attribute string,
 * @fields the event's argument members, @types the argument descriptors,
 * @args the arguments' evaluation (once, only when the probe fires),
 * @usdt the SDT site, @puts the argument stores.  The SDT site is reached
 * whenever the branch is taken (a nop: free when no consumer has a uprobe
 * on it), so a USDT consumer sees every hit, TNF enabled or not.
 */
#define TNF_PROBE_(name, keys, detail, slots, fields, types, args, usdt, puts)                     \
	do {                                                                                       \
		struct tnf_ev_##name {                                                             \
			tnf_probe_event_tnf_t probe_event;                                         \
			tnf_time_delta_tnf_t time_delta;                                           \
			fields                                                                     \
		};                                                                                 \
		static const struct tnf_type_desc *const tnf_slots_[] = {                          \
			&tnf_probe_event_tnf_desc, &tnf_time_delta_tnf_desc types, 0};             \
		static struct tnf_probe_control tnf_cb_                                            \
			__attribute__((section("tnf_probes"), used, aligned(8))) = {               \
				TNF_PROBE_VERSION_1,                                               \
				(uintptr_t)-1,                                                     \
				0,                                                                 \
				0,                                                                 \
				0,                                                                 \
				0,                                                                 \
				0,                                                                 \
				"name " #name ";slots " slots ";keys " keys ";file " __FILE__      \
				";line " TNF_STR_(__LINE__) ";" detail,                            \
				tnf_slots_,                                                        \
				sizeof(struct tnf_ev_##name),                                      \
				0};                                                                \
		TNF_SEMA_DECL_(TNF_USDT_PROVIDER, name);                                           \
		tnf_probe_test_func_t tnf_test_ =                                                  \
			__atomic_load_n(&tnf_cb_.test_func, __ATOMIC_RELAXED);                     \
		if (__builtin_expect(                                                              \
			    ((uintptr_t)tnf_test_ | TNF_SEMA_ON_(TNF_USDT_PROVIDER, name)) != 0,   \
			    0)) {                                                                  \
			args TNF_SEMA_DEF_(TNF_USDT_PROVIDER, name);                               \
			usdt;                                                                      \
			if (tnf_test_) {                                                           \
				tnf_probe_setup_t tnf_set_;                                        \
				struct tnf_ev_##name *tnf_ev_ =                                    \
					(struct tnf_ev_##name *)tnf_test_(0, &tnf_cb_, &tnf_set_); \
				if (tnf_ev_) {                                                     \
					puts __atomic_load_n(&tnf_cb_.probe_func,                  \
							     __ATOMIC_RELAXED)(&tnf_set_);         \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
	} while (0)

#define TNF_F_(t, n)	t##_tnf_t n;
#define TNF_T_(t)	, &t##_tnf_desc
#define TNF_A_(t, k, v) t##_tnf_arg_t tnf_a##k##_ = (v);
#define TNF_S_(t, k)	t##_tnf_sdt(tnf_a##k##_)
#define TNF_P_(t, n, k) t##_tnf_put(&tnf_set_, &tnf_ev_->n, tnf_a##k##_);

/*
 * TNF_PROBE_0..5(name, keys, detail, type_1, argname_1, value_1, ...) -
 * TNF_PROBE(3TNF).  A probe point.  @name is an identifier (the probe's
 * name), @keys a string literal of space-separated group names, @detail a
 * string literal of "attr value;" units (vendor attributes as
 * "xyz%attr"; "sunw%debug 'text'" is shown by &debug).  Each argument is a
 * type (tnf_int, tnf_uint, tnf_long, tnf_ulong, tnf_longlong,
 * tnf_ulonglong, tnf_float, tnf_double, tnf_string, tnf_opaque, tnf_char,
 * tnf_int8, tnf_uint8, tnf_short, tnf_ushort, tnf_int16, tnf_uint16,
 * tnf_int32, tnf_uint32, tnf_int64, tnf_uint64, tnf_float32, tnf_float64,
 * tnf_size, or a record type from TNF_DECLARE_RECORD), a name for the slot
 * and a value.  Values are evaluated once, when the probe fires, and copied
 * (strings and records into the trace file; the caller keeps ownership).
 * A probe starts disabled and costs two loads and one branch until a
 * controller enables it or a USDT consumer attaches to it.  Defining
 * NPROBE compiles every probe to nothing.
 *
 * Linux extension: the site is also the USDT probe TNF_USDT_PROVIDER:name
 * (<sys/sdt.h>), whose arguments arg0.. are the probe's values as their C
 * types (integers with their size and sign, e.g. "-4@%eax" for a tnf_int;
 * the pointer for tnf_string, tnf_opaque and records; the bits of a
 * tnf_float/tnf_double as an unsigned integer of the same size).
 */
#ifndef NPROBE
#define TNF_PROBE_0(name, keys, detail)                                                            \
	TNF_PROBE_(name, keys, detail, "", , , , TNF_USDT0_(TNF_USDT_PROVIDER, name), )
#define TNF_PROBE_1(name, keys, detail, t1, n1, v1)                                                \
	TNF_PROBE_(name, keys, detail, #n1 " ", TNF_F_(t1, n1), TNF_T_(t1), TNF_A_(t1, 1, v1),     \
		   TNF_USDT_(1, TNF_USDT_PROVIDER, name, TNF_S_(t1, 1)), TNF_P_(t1, n1, 1))
#define TNF_PROBE_2(name, keys, detail, t1, n1, v1, t2, n2, v2)                                    \
	TNF_PROBE_(name, keys, detail, #n1 " " #n2 " ", TNF_F_(t1, n1) TNF_F_(t2, n2),             \
		   TNF_T_(t1) TNF_T_(t2), TNF_A_(t1, 1, v1) TNF_A_(t2, 2, v2),                     \
		   TNF_USDT_(2, TNF_USDT_PROVIDER, name, TNF_S_(t1, 1), TNF_S_(t2, 2)),            \
		   TNF_P_(t1, n1, 1) TNF_P_(t2, n2, 2))
#define TNF_PROBE_3(name, keys, detail, t1, n1, v1, t2, n2, v2, t3, n3, v3)                        \
	TNF_PROBE_(name, keys, detail, #n1 " " #n2 " " #n3 " ",                                    \
		   TNF_F_(t1, n1) TNF_F_(t2, n2) TNF_F_(t3, n3), TNF_T_(t1) TNF_T_(t2) TNF_T_(t3), \
		   TNF_A_(t1, 1, v1) TNF_A_(t2, 2, v2) TNF_A_(t3, 3, v3),                          \
		   TNF_USDT_(3, TNF_USDT_PROVIDER, name, TNF_S_(t1, 1), TNF_S_(t2, 2),             \
			     TNF_S_(t3, 3)),                                                       \
		   TNF_P_(t1, n1, 1) TNF_P_(t2, n2, 2) TNF_P_(t3, n3, 3))
#define TNF_PROBE_4(name, keys, detail, t1, n1, v1, t2, n2, v2, t3, n3, v3, t4, n4, v4)            \
	TNF_PROBE_(name, keys, detail, #n1 " " #n2 " " #n3 " " #n4 " ",                            \
		   TNF_F_(t1, n1) TNF_F_(t2, n2) TNF_F_(t3, n3) TNF_F_(t4, n4),                    \
		   TNF_T_(t1) TNF_T_(t2) TNF_T_(t3) TNF_T_(t4),                                    \
		   TNF_A_(t1, 1, v1) TNF_A_(t2, 2, v2) TNF_A_(t3, 3, v3) TNF_A_(t4, 4, v4),        \
		   TNF_USDT_(4, TNF_USDT_PROVIDER, name, TNF_S_(t1, 1), TNF_S_(t2, 2),             \
			     TNF_S_(t3, 3), TNF_S_(t4, 4)),                                        \
		   TNF_P_(t1, n1, 1) TNF_P_(t2, n2, 2) TNF_P_(t3, n3, 3) TNF_P_(t4, n4, 4))
#define TNF_PROBE_5(name, keys, detail, t1, n1, v1, t2, n2, v2, t3, n3, v3, t4, n4, v4, t5, n5,    \
		    v5)                                                                            \
	TNF_PROBE_(name, keys, detail, #n1 " " #n2 " " #n3 " " #n4 " " #n5 " ",                    \
		   TNF_F_(t1, n1) TNF_F_(t2, n2) TNF_F_(t3, n3) TNF_F_(t4, n4) TNF_F_(t5, n5),     \
		   TNF_T_(t1) TNF_T_(t2) TNF_T_(t3) TNF_T_(t4) TNF_T_(t5),                         \
		   TNF_A_(t1, 1, v1) TNF_A_(t2, 2, v2) TNF_A_(t3, 3, v3) TNF_A_(t4, 4, v4)         \
			   TNF_A_(t5, 5, v5),                                                      \
		   TNF_USDT_(5, TNF_USDT_PROVIDER, name, TNF_S_(t1, 1), TNF_S_(t2, 2),             \
			     TNF_S_(t3, 3), TNF_S_(t4, 4), TNF_S_(t5, 5)),                         \
		   TNF_P_(t1, n1, 1) TNF_P_(t2, n2, 2) TNF_P_(t3, n3, 3) TNF_P_(t4, n4, 4)         \
			   TNF_P_(t5, n5, 5))
#else
/* Values are named in sizeof only: no code, no evaluation, no unused warnings. */
#define TNF_U_(v)						(void)sizeof(v)
#define TNF_PROBE_0(name, keys, detail)				((void)0)
#define TNF_PROBE_1(name, keys, detail, t1, n1, v1)		(TNF_U_(v1))
#define TNF_PROBE_2(name, keys, detail, t1, n1, v1, t2, n2, v2) (TNF_U_(v1), TNF_U_(v2))
#define TNF_PROBE_3(name, keys, detail, t1, n1, v1, t2, n2, v2, t3, n3, v3)                        \
	(TNF_U_(v1), TNF_U_(v2), TNF_U_(v3))
#define TNF_PROBE_4(name, keys, detail, t1, n1, v1, t2, n2, v2, t3, n3, v3, t4, n4, v4)            \
	(TNF_U_(v1), TNF_U_(v2), TNF_U_(v3), TNF_U_(v4))
#define TNF_PROBE_5(name, keys, detail, t1, n1, v1, t2, n2, v2, t3, n3, v3, t4, n4, v4, t5, n5,    \
		    v5)                                                                            \
	(TNF_U_(v1), TNF_U_(v2), TNF_U_(v3), TNF_U_(v4), TNF_U_(v5))
#endif

/*
 * TNF_PROBE_0_DEBUG..TNF_PROBE_5_DEBUG - TNF_PROBE(3TNF).  As TNF_PROBE_n,
 * but only when TNF_DEBUG is defined (and NPROBE is not); the detail then
 * starts with "debug;".
 */
#if defined(TNF_DEBUG) && !defined(NPROBE)
#define TNF_PROBE_0_DEBUG(name, keys, detail) TNF_PROBE_0(name, keys, "debug;" detail)
#define TNF_PROBE_1_DEBUG(name, keys, detail, ...)                                                 \
	TNF_PROBE_1(name, keys, "debug;" detail, __VA_ARGS__)
#define TNF_PROBE_2_DEBUG(name, keys, detail, ...)                                                 \
	TNF_PROBE_2(name, keys, "debug;" detail, __VA_ARGS__)
#define TNF_PROBE_3_DEBUG(name, keys, detail, ...)                                                 \
	TNF_PROBE_3(name, keys, "debug;" detail, __VA_ARGS__)
#define TNF_PROBE_4_DEBUG(name, keys, detail, ...)                                                 \
	TNF_PROBE_4(name, keys, "debug;" detail, __VA_ARGS__)
#define TNF_PROBE_5_DEBUG(name, keys, detail, ...)                                                 \
	TNF_PROBE_5(name, keys, "debug;" detail, __VA_ARGS__)
#else
#define TNF_DU_(...) TNF_DU2_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
#define TNF_DU2_(t1, n1, v1, t2, n2, v2, t3, n3, v3, t4, n4, v4, t5, n5, v5, ...)                  \
	((void)sizeof(v1), (void)sizeof(v2), (void)sizeof(v3), (void)sizeof(v4), (void)sizeof(v5))
#define TNF_PROBE_0_DEBUG(name, keys, detail)	   ((void)0)
#define TNF_PROBE_1_DEBUG(name, keys, detail, ...) TNF_DU_(__VA_ARGS__)
#define TNF_PROBE_2_DEBUG(name, keys, detail, ...) TNF_DU_(__VA_ARGS__)
#define TNF_PROBE_3_DEBUG(name, keys, detail, ...) TNF_DU_(__VA_ARGS__)
#define TNF_PROBE_4_DEBUG(name, keys, detail, ...) TNF_DU_(__VA_ARGS__)
#define TNF_PROBE_5_DEBUG(name, keys, detail, ...) TNF_DU_(__VA_ARGS__)
#endif

/* ---- process and thread switches (tnf_process_disable(3TNF)) ------------ */

/*
 * tnf_process_disable(), tnf_process_enable() - tnf_process_disable(3TNF).
 * Turn tracing off (on) for the whole process: while off no probe writes a
 * record or runs a connected function.  Default: on.
 *
 * tnf_thread_disable(), tnf_thread_enable() - tnf_process_disable(3TNF).
 * The same for the calling thread only; a disabled thread gives back its
 * buffer block.  New threads start enabled.
 *
 * They live in libtnfprobe.so.1.  A program with probes may run without
 * it, so here they are weak and the calls below are no-ops when the
 * runtime is not loaded (at start-up or by LD_PRELOAD).
 */
void tnf_process_disable(void);
void tnf_process_enable(void);
void tnf_thread_disable(void);
void tnf_thread_enable(void);

#ifndef TNF_PROBE_RUNTIME_BUILD
#pragma weak tnf_process_disable
#pragma weak tnf_process_enable
#pragma weak tnf_thread_disable
#pragma weak tnf_thread_enable
#define tnf_process_disable() (tnf_process_disable ? tnf_process_disable() : (void)0)
#define tnf_process_enable()  (tnf_process_enable ? tnf_process_enable() : (void)0)
#define tnf_thread_disable()  (tnf_thread_disable ? tnf_thread_disable() : (void)0)
#define tnf_thread_enable()   (tnf_thread_enable ? tnf_thread_enable() : (void)0)
#endif

#ifdef __cplusplus
}
#endif
#endif
