# libtnfctl for Linux.  `make`, `make check`, `make install PREFIX=... DESTDIR=...`,
# `make vmlinux` (regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel).

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
BINDIR ?= $(PREFIX)/bin
INCDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
# tnfctl-engine, the helper the library starts by exec (src/engine/).
LIBEXECDIR ?= $(PREFIX)/libexec
ENGINE_DIR := $(LIBEXECDIR)/tnfctl

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

B := build
# make check SANITIZE=1 (make sanitize runs it): everything in build-san/, with
# ASan + UBSan in the libraries, tools, tests and test helpers.  Two exceptions:
# libtnfprobe.so.1 gets UBSan only (it is LD_PRELOADed into any target, even
# /bin/true, and an ASan-instrumented preload needs the ASan runtime loaded
# first; the runtime is covered by TSan and valgrind instead, see make tsan and
# make memcheck), and static_prog none (the sanitizers do not link statically).
SANITIZE ?=
ifeq ($(SANITIZE),1)
B := build-san
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
PROBE_SAN := -fsanitize=undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# SANITIZE=1 in the tests' environment too: test_packaging's make install
# then builds with the same flags.
SAN_ENV := SANITIZE=1 ASAN_OPTIONS=verify_asan_link_order=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The targets the tests trace: no leak check (tests/sanitize/target_options.c).
SAN_TARGET := tests/sanitize/target_options.c
endif
# make tsan: libtnfprobe and libtnfctl with TSan in build-tsan/, for the
# multi-threaded writer (tests/sanitize/tsan_writer.c).
ifeq ($(SANITIZE),thread)
B := build-tsan
SAN := -fsanitize=thread -fno-omit-frame-pointer
PROBE_SAN := $(SAN)
SAN_ENV := TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 TL_TSAN=1
endif
VERSION := 0.2.0

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(B) -Ibpf -Isrc/common
CFLAGS += $(SAN)
LDFLAGS += $(SAN)
LIBS_CTL := $(shell pkg-config --libs libbpf libelf) -lpthread
LIBS_TEST := $(shell pkg-config --libs cmocka libbpf) -lpthread -ldl

CTL_SRCS := $(wildcard src/libtnfctl/*.c)
CTL_OBJS := $(CTL_SRCS:%.c=$(B)/%.o)
# The engine: its own sources (the per-target state machine, ptrace, the
# BPF object) and the client's /proc, ELF, uprobe and wire layers it shares.
ENGINE_SRCS := $(wildcard src/engine/*.c)
ENGINE_SHARED := target elf kfeatures uprobe_link link_release ipc engine_name
ENGINE_OBJS := $(ENGINE_SRCS:%.c=$(B)/%.o) $(ENGINE_SHARED:%=$(B)/src/libtnfctl/%.o)
# Kernel mode writes its TNF file with libtnfprobe's writer: these sources
# again, inside libtnfctl, their symbols hidden (src/libtnfctl/ktrace_file.c).
KW_SRCS := $(addprefix src/libtnfprobe/,format.c types.c blocks.c drops.c args.c)
KW_OBJS := $(KW_SRCS:src/libtnfprobe/%.c=$(B)/kw/%.o)
CTL_OBJS += $(KW_OBJS)
PROBE_SRCS := $(wildcard src/libtnfprobe/*.c)
PROBE_OBJS := $(PROBE_SRCS:%.c=$(B)/%.o)
TNF_SRCS := $(wildcard src/libtnf/*.c)
TNF_OBJS := $(TNF_SRCS:%.c=$(B)/%.o)
DUMP_SRCS := $(wildcard src/tnfdump/*.c)
DUMP_OBJS := $(DUMP_SRCS:%.c=$(B)/%.o) $(B)/src/common/json_out.o
# tnfctl-follow (src/follow/): the tool, its output formats, and the JSON string writer it
# shares with tnfdump.
FOLLOW_SRCS := $(addprefix src/follow/,tnfctl-follow.c stop.c no_stop.c common.c follow_out.c) \
	src/common/json_out.c
TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(B)/tests/%)
# tests/stress/test_stress: short sizes in `make check`, full in `make stress`.
TEST_BINS += $(B)/tests/test_stress
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(B)/tests/helpers/%,$(wildcard tests/helpers/*.c))
TEST_SOLIBS := $(patsubst tests/solibs/%.c,$(B)/tests/solibs/%.so,$(wildcard tests/solibs/*.c))

all: $(B)/tnfctl-engine $(B)/libtnfctl.so.1 $(B)/libtnfctl.so $(B)/libtnfprobe.so.1 $(B)/libtnfprobe.so $(B)/tnfctl-follow $(B)/tnftrace \
	$(B)/demo/tnfdemo $(B)/demo/libtnfdemo_plugin.so $(B)/libtnf.a $(B)/tnfdump

$(B)/%.o: %.c | $(B)/tnfctl.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@

$(B)/tnfctl.bpf.o: bpf/tnfctl.bpf.c bpf/tnfctl_events.h bpf/rtld.bpf.h vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(B)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Ivmlinux/$(ARCH) -Ibpf -c $< -o $@

$(B)/tnfctl.skel.h: $(B)/tnfctl.bpf.o
	$(BPFTOOL) gen skeleton $< name tnfctl_bpf > $@.tmp && mv $@.tmp $@

# Passive tree watching (watch.c): its own object and skeleton.
$(B)/watch.bpf.o: bpf/watch.bpf.c bpf/watch_events.h bpf/rtld.bpf.h vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(B)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Ivmlinux/$(ARCH) -Ibpf -c $< -o $@

$(B)/watch.skel.h: $(B)/watch.bpf.o
	$(BPFTOOL) gen skeleton $< name tnfctl_watch_bpf > $@.tmp && mv $@.tmp $@

# The same source for kernels from 5.10 (no bpf_loop, atomic fetch, cookies):
# only its ELF bytes are used, opened with the skeleton above (watches.c).
$(B)/watch_compat.bpf.o: bpf/watch.bpf.c bpf/watch_events.h bpf/rtld.bpf.h vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(B)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DTNF_WATCH_COMPAT -Wall -Werror \
		-Ivmlinux/$(ARCH) -Ibpf -c $< -o $@

$(B)/watch_compat.skel.h: $(B)/watch_compat.bpf.o
	$(BPFTOOL) gen skeleton $< name tnfctl_watch_compat_bpf > $@.tmp && mv $@.tmp $@

$(B)/src/engine/watches.o $(B)/src/engine/watch_tree.o: $(B)/watch.skel.h $(B)/watch_compat.skel.h

# Kernel mode (kernel.c, ktrace.c): the generic tracepoint program.
$(B)/ktrace.bpf.o: bpf/ktrace.bpf.c bpf/ktrace_events.h vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(B)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Ivmlinux/$(ARCH) -Ibpf -c $< -o $@

$(B)/ktrace.skel.h: $(B)/ktrace.bpf.o
	$(BPFTOOL) gen skeleton $< name ktrace_bpf > $@.tmp && mv $@.tmp $@

$(B)/src/libtnfctl/ktrace.o: $(B)/ktrace.skel.h

# USDT probes of processes (usdt_trace.c): the program libbpf's attach_usdt attaches.
# (libbpf's usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> is per architecture.)
$(B)/usdt.bpf.o: bpf/usdt.bpf.c bpf/usdt_events.h bpf/ktrace_events.h vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(B)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Ivmlinux/$(ARCH) -Ibpf -idirafter /usr/include/$(shell $(CC) -dumpmachine) -c $< -o $@

$(B)/usdt.skel.h: $(B)/usdt.bpf.o
	$(BPFTOOL) gen skeleton $< name usdt_bpf > $@.tmp && mv $@.tmp $@

$(B)/src/libtnfctl/usdt_trace.o: $(B)/usdt.skel.h

$(B)/kw/%.o: src/libtnfprobe/%.c | $(B)/tnfctl.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@

$(B)/libtnfctl.so.1: $(CTL_OBJS) src/libtnfctl/libtnfctl.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libtnfctl.so.1 -Wl,--version-script=src/libtnfctl/libtnfctl.map \
		-Wl,-z,defs -o $@ $(CTL_OBJS) $(LIBS_CTL)

# The library finds the engine at a path fixed at build time ($TNFCTL_ENGINE
# overrides it): the build tree's library names the build tree's engine,
# and make install relinks the library with the installed path (as it
# relinks the tools with the installed rpath).
$(B)/src/libtnfctl/engine_start.o: CFLAGS += -DTNFCTL_ENGINE_PATH='"$(abspath $(B))/tnfctl-engine"'
$(B)/install/engine_start.o: src/libtnfctl/engine_start.c $(B)/install/engine_dir | $(B)/tnfctl.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc/libtnfctl -DTNFCTL_ENGINE_PATH='"$(ENGINE_DIR)/tnfctl-engine"' \
		-fPIC -fvisibility=hidden -c $< -o $@
$(B)/src/libtnfctl/engine_start.o $(B)/install/engine_start.o: Makefile
# The installed engine's directory, rewritten only when it changes: a make
# install with another PREFIX (or LIBEXECDIR) rebuilds the object above.
$(B)/install/engine_dir: FORCE
	@mkdir -p $(dir $@)
	@echo '$(ENGINE_DIR)' | cmp -s - $@ || echo '$(ENGINE_DIR)' > $@
FORCE:

$(B)/tnfctl-engine: $(ENGINE_OBJS)
	$(CC) $(LDFLAGS) -o $@ $(ENGINE_OBJS) $(LIBS_CTL)

$(ENGINE_SRCS:%.c=$(B)/%.o): CFLAGS += -Isrc/libtnfctl -Isrc/engine

$(B)/libtnfctl.so: $(B)/libtnfctl.so.1
	ln -sf libtnfctl.so.1 $@

$(B)/libtnfprobe.so: $(B)/libtnfprobe.so.1
	ln -sf libtnfprobe.so.1 $@

$(B)/libtnfctl.so.1 $(CTL_OBJS): CFLAGS += -Isrc/libtnfctl

# The in-target runtime: libc only (and UBSan's runtime with SANITIZE=1).
$(B)/libtnfprobe.so.1 $(PROBE_OBJS): SAN := $(PROBE_SAN)
$(B)/libtnfprobe.so.1: $(PROBE_OBJS) src/libtnfprobe/libtnfprobe.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libtnfprobe.so.1 -Wl,--version-script=src/libtnfprobe/libtnfprobe.map \
		-Wl,-z,defs -o $@ $(PROBE_OBJS)

# The trace-file reader (static), used by tnfdump and the tests.
$(B)/libtnf.a: $(TNF_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/tnfdump: $(DUMP_OBJS) $(B)/libtnf.a
	$(CC) $(LDFLAGS) -o $@ $(DUMP_OBJS) $(B)/libtnf.a -lm

$(B)/tnfctl-follow: $(FOLLOW_SRCS) $(wildcard src/follow/*.h) include/tnf/tnfctl.h $(B)/libtnfctl.so
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(FOLLOW_SRCS) -L$(B) -ltnfctl -lpthread -Wl,-rpath,'$$ORIGIN'

$(B)/tnftrace: src/tnftrace/tnftrace.c include/tnf/tnfctl.h $(B)/libtnfctl.so
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(B) -ltnfctl -lpthread -Wl,-rpath,'$$ORIGIN'

# The bundled demo: forks, execs, dlopens and runs threads, with probes.
$(B)/demo/tnfdemo: examples/demo/tnfdemo.c include/tnf/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(SAN_TARGET) -ldl -lpthread

$(B)/demo/libtnfdemo_plugin.so: examples/demo/plugin.c include/tnf/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $<

# prex: the interactive controller, on the public API only (+ libedit for the tty).
PREX_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard src/prex/*.c))
all: $(B)/prex
$(B)/prex: $(PREX_OBJS) $(B)/libtnfctl.so
	$(CC) $(LDFLAGS) -o $@ $(PREX_OBJS) -L$(B) -ltnfctl -ledit -lpthread -Wl,-rpath,'$$ORIGIN'
-include $(PREX_OBJS:.o=.d)

# ---- tests ----------------------------------------------------------------
$(B)/tests/%: tests/%.c tests/testlib.h tests/helpers/tl_btf.h tests/englib.h tests/holdlib.h tests/helpers/tl_pidfd_broker.h tests/probelib.h tests/prexlib.h \
		tests/tnf_swap.h tests/blocklib.h $(B)/libtnfctl.so $(B)/libtnf.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -Isrc/libtnf -o $@ $< -L$(B) -ltnfctl $(B)/libtnf.a $(LIBS_TEST) -lm \
		-Wl,-rpath,'$$ORIGIN/..'

$(B)/tests/helpers/static_prog: SAN :=
$(B)/tests/helpers/static_prog: tests/helpers/static_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

$(B)/tests/helpers/static_exit: SAN :=
$(B)/tests/helpers/static_exit: tests/helpers/static_exit.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

# tl_sdt and tl_sdt_tree linked statically: a static program's USDT probes (test_usdt_control).
TEST_HELPERS += $(B)/tests/helpers/tl_sdt_static $(B)/tests/helpers/tl_sdt_tree_static
$(B)/tests/helpers/tl_sdt_static $(B)/tests/helpers/tl_sdt_tree_static: SAN :=
$(B)/tests/helpers/%_static: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $< -lpthread

# Built with AddressSanitizer whatever SAN says: it checks that nothing is preloaded.
$(B)/tests/helpers/asan_prog: SAN :=
$(B)/tests/helpers/asan_prog: tests/helpers/asan_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=address -o $@ $<

# An ASan-built controller whatever SAN says (test_mt: threads that allocate
# while it opens and closes handles).
$(B)/tests/helpers/tl_asan_ctl: SAN :=
$(B)/tests/helpers/tl_asan_ctl: tests/helpers/tl_asan_ctl.c $(B)/libtnfctl.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=address -fno-omit-frame-pointer -o $@ $< -L$(B) -ltnfctl -lpthread \
		-Wl,-rpath,'$$ORIGIN/../..'

# A caller with a thread and a child handle per process of a large tree (test_scale).
$(B)/tests/helpers/tl_tree_ctl: tests/helpers/tl_tree_ctl.c $(B)/libtnfctl.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(B) -ltnfctl -lpthread -Wl,-rpath,'$$ORIGIN/../..'

$(B)/tests/helpers/%: tests/helpers/%.c tests/helpers/target_common.h include/tnf/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(SAN_TARGET) -ldl -lpthread

$(B)/tests/helpers/tl_pidfd_broker: tests/helpers/tl_pidfd_broker.h
$(B)/tests/helpers/tl_ctl: tests/helpers/tl_btf.h

# Shared objects with probes (preloaded or dlopened by the test targets).
$(B)/tests/solibs/%.so: tests/solibs/%.c include/tnf/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $<

# A program that controls its own probes (internal mode).
$(B)/tests/helpers/tl_internal: tests/helpers/tl_internal.c $(B)/libtnfctl.so $(B)/libtnfprobe.so.1
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(SAN_TARGET) -L$(B) -ltnfctl -ldl -lpthread -Wl,-rpath,'$$ORIGIN/../..'

# A program whose probes test_usdt traces with bpftrace, with or without TNF (internal mode).
$(B)/tests/helpers/tl_usdt: tests/helpers/tl_usdt.c include/tnf/probe.h $(B)/libtnfctl.so \
		$(B)/libtnfprobe.so.1
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(SAN_TARGET) -L$(B) -ltnfctl -ldl -lpthread -Wl,-rpath,'$$ORIGIN/../..'

# A C++ program that throws (libstdc++'s USDT probe libstdcxx:throw, test_usdt_control).
CXX ?= g++
TEST_HELPERS += $(B)/tests/helpers/tl_throw
$(B)/tests/helpers/tl_throw: tests/helpers/tl_throw.cc
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -Wall -Wextra -Werror -o $@ $<

tests: all $(TEST_BINS) $(TEST_HELPERS) $(TEST_SOLIBS)

$(B)/tests/test_faults: tests/stress/storm.h
$(B)/tests/test_stress: tests/stress/test_stress.c tests/stress/storm.h tests/testlib.h tests/helpers/tl_btf.h \
		tests/helpers/tl_pidfd_broker.h \
		tests/probelib.h tests/blocklib.h $(B)/libtnfctl.so $(B)/libtnf.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -Isrc/libtnf -o $@ $< -L$(B) -ltnfctl $(B)/libtnf.a $(LIBS_TEST) -lm \
		-Wl,-rpath,'$$ORIGIN/..'

# The stress tests at full size (10,000 processes, 1,000 dlopen cycles, 1,000,000
# events into a wrapping buffer; 300 rounds of concurrent dlclose; 10,000 live
# processes under a hard descriptor limit of 1024, by tnfctl-follow and by an
# API caller with a thread per child handle).
stress: tests
	$(SAN_ENV) TL_STRESS=full TL_TESTS=test_stress B=$(B) tests/run-tests
	$(SAN_ENV) TL_STRESS=full TL_TESTS="test_mt test_follow" \
		TL_FILTER='*hard_limit*' B=$(B) tests/run-tests
	$(SAN_ENV) TL_STRESS=full TL_TESTS="test_dlraces test_caps test_reattach test_races" B=$(B) tests/run-tests
	# 0abb632's hang (pid_open vs an exec from a thread) came once in ~150-250 rounds: 2,000
	$(SAN_ENV) TL_RACES_ROUNDS=2000 TL_BIN_TIMEOUT=1800 TL_TESTS=test_races \
		TL_FILTER='test_pid_open_vs_exec' B=$(B) tests/run-tests
	$(SAN_ENV) TL_FAULTS_RANDOM=1 TL_ENGINE_KILL_RUNS=100 TL_TESTS=test_faults B=$(B) tests/run-tests
	$(SAN_ENV) TL_ENGINE_ROUNDS=100 TL_TESTS=test_engine TL_FILTER='*at_random*' B=$(B) tests/run-tests

check: tests
	$(SAN_ENV) B=$(B) tests/run-tests

# The soak (tests/soak/soak): the race, reattach, dlrace and stress tests
# and a real build under tnfctl-follow, in turn, both stop modes, beside a
# busy loop per CPU, for SOAK_SECONDS (default 1800); any failure, hang or
# INTERNAL fails it.
SOAK_SECONDS ?= 1800
soak: all tests
	$(SAN_ENV) SOAK_SECONDS=$(SOAK_SECONDS) B=$(B) tests/soak/soak

# The shared libraries' ABI against the record in abi/ (tests/abi/abi-check:
# any difference fails), and that the check refuses a field inserted into a
# public struct (a throwaway build); abi-record rewrites the record after a
# deliberate, compatible change (say why in the commit).
abi-check: $(B)/libtnfctl.so.1 $(B)/libtnfprobe.so.1
	tests/abi/abi-check $(B)
	tests/abi/abi-check-catches

abi-record: $(B)/libtnfctl.so.1 $(B)/libtnfprobe.so.1
	tests/abi/abi-check --record $(B)

# make check-kernel KERNEL=<Debian kernel package, .deb or vmlinuz> [TL_TESTS=...]
# [TL_MODES=...]: the suite (or that part) on that kernel, booted in qemu,
# with this build (tests/kernel/check-kernel says how).
check-kernel: all tests
	@test -n "$(KERNEL)" || { echo "usage: make check-kernel KERNEL=<package|.deb|vmlinuz>" >&2; exit 2; }
	$(SAN_ENV) B=$(B) TL_TESTS="$(TL_TESTS)" TL_MODES="$(TL_MODES)" tests/kernel/check-kernel "$(KERNEL)"

# ---- sanitizers (README "Sanitizers") --------------------------------------
# make sanitize: the whole suite with ASan + UBSan (build-san/), then
# valgrind memcheck (tnfdump, test binaries in the kfunc mode, prex, tnftrace,
# tl_internal: tests/sanitize/memcheck says what and why), then the writer
# under TSan.
sanitize:
	$(MAKE) SANITIZE=1 check
	$(MAKE) memcheck
	$(MAKE) tsan

memcheck: tests
	B=$(B) tests/sanitize/memcheck

$(B)/tests/sanitize/tsan_writer: tests/sanitize/tsan_writer.c $(B)/libtnfctl.so $(B)/libtnfprobe.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(B) -ltnfctl -ltnfprobe -lpthread -Wl,-rpath,'$$ORIGIN/../..'

tsan:
	$(MAKE) SANITIZE=thread tsan-run

tsan-run: $(B)/tests/sanitize/tsan_writer $(B)/tnfdump tests
	rm -f $(B)/tsan.tnf
	$(SAN_ENV) $(B)/tests/sanitize/tsan_writer $(B)/tsan.tnf 5
	$(SAN_ENV) $(B)/tnfdump $(B)/tsan.tnf | grep -c tw_last
	# the client's threads: one connection shared by every handle and waiting thread
	$(SAN_ENV) TL_MODES=kfunc TL_TESTS="test_mt test_signals test_races" B=$(B) tests/run-tests

# The main job on the bundled demo: forks, execs, dlopens and runs threads.
demo: all
	$(B)/tnfctl-follow -- $(B)/demo/tnfdemo
	$(B)/tnftrace -o $(B)/demo/tnfdemo.tnf -- $(B)/demo/tnfdemo

# What a probe costs (disabled, traced) and trace bytes per event.
$(B)/bench/probe-cost: bench/probe-cost.c include/tnf/probe.h tests/helpers/tp_selfctl.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/helpers -o $@ $< -ldl -lpthread

# The figures of bench/README.md (P1-P7): programs, all of them (make
# bench, as root, ~10 min, installs the peers), and a seconds-long smoke run
# with tiny sizes and no installs (a missing peer is skipped).
BENCH_LTTNG := $(shell pkg-config --exists lttng-ust 2>/dev/null && echo 1)
$(B)/bench/probes: bench/probes.c bench/probes_tp.h include/tnf/probe.h $(B)/libtnfctl.so $(B)/libtnfprobe.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ibench $(if $(BENCH_LTTNG),,-DNO_LTTNG) -o $@ $< -L$(B) -ltnfctl \
		-Wl,--no-as-needed -ltnfprobe -Wl,--as-needed $(if $(BENCH_LTTNG),-llttng-ust) -ldl -lpthread \
		-Wl,-rpath,'$$ORIGIN/..'

$(B)/bench/execopen: bench/execopen.c include/tnf/tnfctl.h $(B)/libtnfctl.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(B) -ltnfctl -lpthread -Wl,-rpath,'$$ORIGIN/..'

$(B)/bench/ktrace: bench/ktrace.c include/tnf/tnfctl.h $(B)/libtnfctl.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(B) -ltnfctl -Wl,-rpath,'$$ORIGIN/..'

bench-progs: all $(B)/bench/probes $(B)/bench/execopen $(B)/bench/probe-cost $(B)/bench/ktrace

bench: bench-progs
	B=$(B) bench/run-all
	bench/follow-true-loop
	LD_PRELOAD=$(abspath $(B))/libtnfprobe.so.1 $(B)/bench/probe-cost

bench-smoke: bench-progs
	BENCH_SMOKE=1 B=$(B) bench/run-all

.PHONY: bench-progs bench-smoke

# libFuzzer targets (tests/fuzz/): the trace-file reader with tnfdump's renderers,
# and prex's command language.  `make fuzz` builds them into $(B)/fuzz/ and runs
# each for FUZZ_SECONDS on its seed corpus (tests/fuzz/corpus/<target>/; what
# the run finds goes to $(B)/fuzz/work/, a crash to $(B)/fuzz/crash-*); any
# crash fails the target.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := fuzz_tnf fuzz_prex
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc/common
FUZZ_TNF_SRCS := $(TNF_SRCS) $(filter-out src/tnfdump/main.c,$(DUMP_SRCS)) src/common/json_out.c
FUZZ_PREX_SRCS := $(addprefix src/prex/,lex.c parse.c match.c sets.c cmd.c history.c list.c help.c)

$(B)/fuzz/fuzz_tnf: tests/fuzz/fuzz_tnf.c $(FUZZ_TNF_SRCS) $(wildcard src/libtnf/*.h src/tnfdump/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_TNF_SRCS) -lm

$(B)/fuzz/fuzz_prex: tests/fuzz/fuzz_prex.c $(FUZZ_PREX_SRCS) src/prex/prex.h
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_PREX_SRCS)

fuzz-build: $(addprefix $(B)/fuzz/,$(FUZZ_TARGETS))

fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(B)/fuzz/work/$$t; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		$(B)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=25 -print_final_stats=1 \
			-artifact_prefix=$(B)/fuzz/crash-$$t- $(B)/fuzz/work/$$t tests/fuzz/corpus/$$t \
			2> $(B)/fuzz/$$t.log || { tail -n 60 $(B)/fuzz/$$t.log; exit 1; }; \
		grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' $(B)/fuzz/$$t.log || true; \
	done

.PHONY: fuzz fuzz-build

MAN1_PAGES := $(wildcard man/man1/*.1)
MAN3_PAGES := $(wildcard man/man3/*.3)
MAN8_PAGES := $(wildcard man/man8/*.8)

install: all $(B)/install/engine_start.o
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCDIR)/tnf \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(ENGINE_DIR)
	install -m 0755 $(B)/tnfctl-engine $(DESTDIR)$(ENGINE_DIR)/
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libtnfctl.so.1 -Wl,--version-script=src/libtnfctl/libtnfctl.map \
		-Wl,-z,defs -o $(DESTDIR)$(LIBDIR)/libtnfctl.so.1 \
		$(filter-out $(B)/src/libtnfctl/engine_start.o,$(CTL_OBJS)) $(B)/install/engine_start.o $(LIBS_CTL)
	install -m 0755 $(B)/libtnfprobe.so.1 $(DESTDIR)$(LIBDIR)/
	ln -sf libtnfctl.so.1 $(DESTDIR)$(LIBDIR)/libtnfctl.so
	ln -sf libtnfprobe.so.1 $(DESTDIR)$(LIBDIR)/libtnfprobe.so
	install -m 0644 include/tnf/tnfctl.h include/tnf/probe.h $(DESTDIR)$(INCDIR)/tnf/
	install -m 0755 $(B)/tnfdump $(DESTDIR)$(BINDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCDIR@|$(INCDIR)|g' \
		-e 's|@VERSION@|$(VERSION)|g' tnfctl.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/tnfctl.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/tnfctl.pc
	$(CC) $(CFLAGS) $(LDFLAGS) -o $(DESTDIR)$(BINDIR)/tnfctl-follow $(FOLLOW_SRCS) \
		-L$(B) -ltnfctl -lpthread -Wl,-rpath,$(LIBDIR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $(DESTDIR)$(BINDIR)/tnftrace src/tnftrace/tnftrace.c \
		-L$(B) -ltnfctl -lpthread -Wl,-rpath,$(LIBDIR)
	$(CC) $(LDFLAGS) -o $(DESTDIR)$(BINDIR)/prex $(PREX_OBJS) -L$(B) -ltnfctl -ledit -lpthread \
		-Wl,-rpath,$(LIBDIR)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(MAN1_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(MAN3_PAGES) $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 $(MAN8_PAGES) $(DESTDIR)$(MANDIR)/man8/

# Removes exactly what install installs (and the tnf/ include directory if
# it is left empty).  Keep the two lists in step.
uninstall:
	rm -f $(DESTDIR)$(ENGINE_DIR)/tnfctl-engine
	if [ -d $(DESTDIR)$(ENGINE_DIR) ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(ENGINE_DIR); fi
	rm -f $(DESTDIR)$(LIBDIR)/libtnfctl.so.1 $(DESTDIR)$(LIBDIR)/libtnfctl.so \
		$(DESTDIR)$(LIBDIR)/libtnfprobe.so.1 $(DESTDIR)$(LIBDIR)/libtnfprobe.so \
		$(DESTDIR)$(INCDIR)/tnf/tnfctl.h $(DESTDIR)$(INCDIR)/tnf/probe.h \
		$(DESTDIR)$(LIBDIR)/pkgconfig/tnfctl.pc \
		$(DESTDIR)$(BINDIR)/tnfdump $(DESTDIR)$(BINDIR)/tnfctl-follow $(DESTDIR)$(BINDIR)/tnftrace \
		$(DESTDIR)$(BINDIR)/prex
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1_PAGES)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3_PAGES)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(MAN8_PAGES)))
	if [ -d $(DESTDIR)$(INCDIR)/tnf ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(INCDIR)/tnf; fi

vmlinux:
	@mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v vmlinux.h)

clean:
	rm -rf $(B)

# `make -j2 clean all`: clean must end before anything is built.
ifneq ($(filter clean,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif

.PHONY: FORCE all tests check soak abi-check abi-record check-kernel stress sanitize memcheck tsan tsan-run demo bench install uninstall vmlinux format clean
.SECONDARY:

-include $(CTL_OBJS:.o=.d) $(ENGINE_SRCS:%.c=$(B)/%.d) $(PROBE_OBJS:.o=.d) $(TNF_OBJS:.o=.d) $(DUMP_OBJS:.o=.d)
