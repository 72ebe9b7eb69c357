# kperf-bpf - top-level build. `make help` lists the targets.
#
# Layout of the build tree (git-ignored):
#   build/bpf/X.bpf.o, build/skel/X.skel.h    BPF objects and their skeletons
#   build/obj/...                              userspace objects (-fPIC)
#   build/lib/libkperf-bpf.{so*,a}             the library
#   build/bin/kperf-bpf                        the command
#   build/tests/, build/workloads/             test binaries and traced workloads
# `make asan` builds the same tree under build/asan with AddressSanitizer and UBSan.
# `make ARCH=arm64` cross-builds everything into build/arm64 (gcc-aarch64-linux-gnu and
# Debian's :arm64 -dev packages: `make deps-cross`); `make test-kernels` runs it under qemu.

VERSION    := 0.1.0
SOVERSION  := 0
PREFIX     ?= /usr/local
DESTDIR    ?=
ARCH       ?= x86
KERNEL_CACHE ?= /var/cache/kperf-kernels

# what differs by architecture: the compilers, pkg-config, where criterion comes from
ifeq ($(ARCH),x86)
BUILD      ?= build
CC         ?= gcc
CXX        ?= g++
PKG_CONFIG ?= pkg-config
CRITERION  := -lcriterion
GOARCH     := amd64
else ifeq ($(ARCH),arm64)
BUILD      ?= build/arm64
CROSS      ?= aarch64-linux-gnu-
CC         := $(CROSS)gcc
CXX        := $(CROSS)g++
PKG_CONFIG ?= $(CROSS)pkg-config
# libcriterion-dev cannot be installed for two architectures at once: the arm64 library
# comes from the test guests' root (tests/kernels/rootfs.sh), the headers are the host's
# aarch64 gcc omits the frame record of leaf functions unless told: the workloads keep it,
# so that a sample in a leaf unwinds through its caller (x86's frame pointers always do)
WL_ARCH_CFLAGS := -mno-omit-leaf-frame-pointer
# the Go workload is cross-built too (it was an x86-64 binary in build/arm64 before)
GOARCH     := arm64
CROSS_ROOT ?= $(KERNEL_CACHE)/rootfs-arm64
CROSS_LIBS := $(CROSS_ROOT)/usr/lib/aarch64-linux-gnu
CRITERION  := $(CROSS_LIBS)/libcriterion.so.3 -Wl,-rpath-link,$(CROSS_LIBS)
else
$(error ARCH=$(ARCH): kperf-bpf builds for x86 or arm64)
endif

CLANG      ?= clang
BPFTOOL    ?= bpftool
PYTHON     ?= /usr/bin/python3
SANITIZE   ?=

# libraries every userspace object may use; why each one is there: README.md "Dependencies"
PKGS       := libbpf libelf libdw zlib libdeflate libcjson libprotobuf-c capstone sqlite3
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# capstone: headers only, the library is dlopen'ed at the first disassembly (user/sym/capstone_dl.c)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(filter-out capstone,$(PKGS)) 2>/dev/null || echo -lbpf -lelf -ldw -lz -ldeflate -lcjson -lprotobuf-c -lsqlite3)

CFLAGS     ?= -O2 -g
CFLAGS     += -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	      -fPIC -fvisibility=hidden -D_GNU_SOURCE -Iinclude -Iuser -I$(BUILD) -Ibpf \
	      $(PKG_CFLAGS) $(SANITIZE)
LDFLAGS    += $(SANITIZE)
LDLIBS     := $(PKG_LIBS) -lstdc++ -lpthread -ldl -lm
# the command only (the agent's HTTP server): the library does not depend on it
AGENT_LIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)

# the host compiler's system directories, searched last (as libbpf-bootstrap does): libbpf's
# usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> lives in the multiarch directory
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
	      -Wall -Werror -Wno-unused-function $(CLANG_BPF_SYS_INCLUDES)

# modules: every folder of user/ is part of the library except the programs
PROGRAM_MODULES := cli agent
LIB_MODULES := $(filter-out $(PROGRAM_MODULES),$(notdir $(wildcard user/*)))
LIB_SRCS   := $(wildcard $(foreach m,$(LIB_MODULES),user/$(m)/*.c))
CLI_SRCS   := $(wildcard user/cli/*.c user/agent/*.c)
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
SKELS      := $(patsubst bpf/%.bpf.c,$(BUILD)/skel/%.skel.h,$(BPF_SRCS))
GEN_SYSCALLS := $(BUILD)/gen/syscall_table.h
GEN        := $(GEN_SYSCALLS) $(BUILD)/gen/profile.pb-c.h

LIB_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(BUILD)/obj/gen/profile.pb-c.o
CLI_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRCS))
SONAME     := libkperf-bpf.so.$(SOVERSION)
SHLIB      := $(BUILD)/lib/libkperf-bpf.so.$(VERSION)
STLIB      := $(BUILD)/lib/libkperf-bpf.a
CLI        := $(BUILD)/bin/kperf-bpf

UNIT_SRCS  := $(wildcard tests/unit/*.c)
INTEG_SRCS := $(wildcard tests/integration/*.c)
WORKLOAD_C := $(wildcard tests/workloads/*.c)
WORKLOAD_CXX := $(wildcard tests/workloads/*.cpp)
WORKLOADS  := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(filter-out tests/workloads/lib%.c,$(WORKLOAD_C))) \
	      $(patsubst tests/workloads/%.cpp,$(BUILD)/workloads/%,$(WORKLOAD_CXX))
WORKLOAD_LIBS := $(patsubst tests/workloads/lib%.c,$(BUILD)/workloads/lib%.so,$(filter tests/workloads/lib%.c,$(WORKLOAD_C)))
BENCH_SRCS := $(wildcard bench/*.c)
BENCHES    := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.PHONY: all lib cli deps deps-node deps-cross deps-kernels test test-unit test-integration test-python \
	test-fuzz test-kernels test-kernels-full demo install clean vmlinux asan format format-check bench help \
	workloads fuzz trixie-root forky-root

all: lib cli workloads

lib: $(SHLIB) $(STLIB) $(BUILD)/lib/libkperf-bpf.so

cli: $(CLI)

help:
	@echo "make deps         install the Debian packages kperf-bpf needs (apt-get)"
	@echo "make deps-node    node, npm and tests/node's npm packages (speedscope; part of deps)"
	@echo "make deps-cross   ... and what make ARCH=arm64 needs (adds dpkg's arm64 architecture)"
	@echo "make deps-kernels ... and what make test-kernels needs (qemu, kmod, mmdebstrap)"
	@echo "make [all]        BPF objects, skeletons, libkperf-bpf.{so,a}, kperf-bpf, test workloads"
	@echo "make test         unit, integration (root + BPF) and Python tests"
	@echo "make demo         deps + build + trace a built-in workload and print its syscall table"
	@echo "make asan         build with ASan+UBSan and run the C tests under it"
	@echo "make fuzz         libFuzzer targets of tests/fuzz (FUZZ_RUNS=$(FUZZ_RUNS) each;"
	@echo "                  make test runs FUZZ_TEST_RUNS=$(FUZZ_TEST_RUNS))"
	@echo "make bench        build and run the benchmarks (ratios, not pass/fail)"
	@echo "make install      PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)"
	@echo "make vmlinux      regenerate vmlinux/$(ARCH)/vmlinux.h (x86: this kernel's BTF;"
	@echo "                  arm64: the BTF of Debian 12's arm64 kernel package)"
	@echo "make ARCH=arm64   cross-build everything into build/arm64 (make deps-cross first)"
	@echo "make test-kernels boot Debian's 5.10, 6.1, 6.12 kernels (x86_64, arm64) under qemu"
	@echo "                  with the core tests inside (tests/kernels/core.list, ~15 min);"
	@echo "                  table kernel x capability (README)"
	@echo "make test-kernels-full  the same with every suite but skip.list's (~1.5 h)"
	@echo "make format-check / format   clang-format (kernel style) check / apply"
	@echo "make trixie-root  the Debian 13 root with python3.13 of the pyframes/py313_* tests"
	@echo "make forky-root   the Debian forky root with python3.14 (and 3.15) of pyframes/py314_*"

# ---- dependencies ----

# nodejs and openjdk-17-jdk-headless: the JIT tests (Node's --perf-basic-prof, a JVM's perf map);
# debootstrap: the Debian 13 and forky roots of the CPython 3.13, 3.14 tests (make trixie-root,
# make forky-root)
DEB_PKGS := make gcc g++ clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libdeflate-dev \
	    libcjson-dev libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev prometheus libcriterion-dev python3 python3-pytest python3-yaml pkg-config \
	    linux-libc-dev systemtap-sdt-dev elfutils binutils golang-go clang-format \
	    libcapstone-dev binutils-aarch64-linux-gnu linux-perf chromium libbpf-tools libc6-dbg \
	    libsqlite3-dev \
	    nodejs openjdk-17-jdk-headless debootstrap

# the cross toolchain and the arm64 libraries to link against (criterion: see CROSS_ROOT)
DEB_PKGS_CROSS := gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross \
	    libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libdeflate-dev:arm64 libcjson-dev:arm64 \
	    libprotobuf-c-dev:arm64 libcapstone-dev:arm64 systemtap-sdt-dev:arm64 libsqlite3-dev:arm64 libmicrohttpd-dev:arm64 mmdebstrap
# the kernel matrix: emulators, and what tests/kernels/fetch.sh uses to make an initramfs
DEB_PKGS_KERNELS := qemu-system-x86 qemu-system-arm kmod cpio xz-utils zstd

# install-missing PACKAGES: apt-get only what dpkg does not have
define install-missing
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "$@: all Debian packages present"; fi
endef

deps:
	$(call install-missing,$(DEB_PKGS))
	@$(MAKE) --no-print-directory deps-node

# Node and npm (Debian's, unless a node with its npm is already there: nodesource's nodejs
# ships npm and conflicts with Debian's package), then the npm packages of tests/node:
# speedscope, the real consumer the timeline tests load their Chrome traces with
NODE_DIR := tests/node
NODE_MODULES := $(NODE_DIR)/node_modules/.package-lock.json

deps-node:
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
		echo "deps-node: node $$(node --version) and npm $$(npm --version 2>/dev/null) present"; \
	else \
		echo "installing: nodejs npm"; export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm; \
	fi
	@$(MAKE) --no-print-directory $(NODE_MODULES)

$(NODE_MODULES): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: run make deps" >&2; exit 1; }
	cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error

deps-cross: deps
	@dpkg --print-foreign-architectures | grep -qx arm64 || \
		{ dpkg --add-architecture arm64 && apt-get update -qq; }
	$(call install-missing,$(DEB_PKGS_CROSS))

deps-kernels: deps-cross
	$(call install-missing,$(DEB_PKGS_KERNELS))

# ---- BPF ----

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# the fallback object is syscall.bpf.c built with KPERF_COMPAT: it changes with it
$(BUILD)/bpf/syscall_compat.bpf.o: bpf/syscall.bpf.c

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o | $(BUILD)/skel
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

$(GEN_SYSCALLS): scripts/gen_syscall_table.sh scripts/syscalls_x86_64_extra.txt | $(BUILD)/gen
	sh scripts/gen_syscall_table.sh $(ARCH) "$(CC)" > $@.tmp && mv $@.tmp $@

# the pprof schema, compiled by protoc-c. One run makes both files (&:): as two ordinary
# targets the recipe ran once for each, rewriting the header after profile.o was built,
# and the next make rebuilt profile.o and the library
$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h &: user/export/profile.proto | $(BUILD)/gen
	protoc-c --proto_path=user/export --c_out=$(BUILD)/gen $<

$(BUILD)/obj/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror -Wextra,$(CFLAGS)) -I$(BUILD)/gen -c $< -o $@

# ---- userspace ----

$(BUILD)/obj/%.o: %.c | $(SKELS) $(GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(SHLIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/lib/libkperf-bpf.so: $(SHLIB)
	ln -sf $(notdir $(SHLIB)) $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $@

$(STLIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CLI): $(CLI_OBJS) $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(STLIB) $(LDLIBS) $(AGENT_LIBS)

# ---- tests ----

TEST_CFLAGS := $(filter-out -fvisibility=hidden,$(CFLAGS)) -Wno-unused-parameter -Itests \
	       -DKPERF_SRCDIR='"$(abspath .)"'

# the agent's pure parts (workload identity, label escaping) are unit-tested too
AGENT_UNIT_OBJS := $(BUILD)/obj/user/agent/workload.o $(BUILD)/obj/user/agent/metrics.o

$(BUILD)/tests/unit: $(UNIT_SRCS) $(STLIB) $(AGENT_UNIT_OBJS) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $(UNIT_SRCS) $(AGENT_UNIT_OBJS) $(STLIB) $(LDFLAGS) $(LDLIBS) $(CRITERION)

# an arm64 shared object with known call-frame information (the unwind table tests), built on
# any host with binutils-aarch64-linux-gnu; its test skips where those are missing
AARCH64_AS ?= aarch64-linux-gnu-as
AARCH64_LD ?= aarch64-linux-gnu-ld
UNWIND_FIXTURES := $(if $(shell command -v $(AARCH64_AS) 2>/dev/null),$(BUILD)/tests/unwind_arm64.so)

$(BUILD)/tests/unwind_arm64.so: tests/unwind/arm64_cfi.S
	@mkdir -p $(dir $@)
	$(AARCH64_AS) $< -o $@.o
	$(AARCH64_LD) -shared --build-id --unresolved-symbols=ignore-all -o $@ $@.o

# BPF objects of the tests (e.g. one every verifier must reject), loaded by the integration tests
TEST_BPF   := $(patsubst tests/bpf/%.bpf.c,$(BUILD)/tests/bpf/%.bpf.o,$(wildcard tests/bpf/*.bpf.c))

$(BUILD)/tests/bpf/%.bpf.o: tests/bpf/%.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests/integration: $(INTEG_SRCS) $(STLIB) $(wildcard tests/*.h) $(TEST_BPF)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $(INTEG_SRCS) $(STLIB) $(LDFLAGS) $(LDLIBS) $(CRITERION)

# workloads: plain programs with -g and frame pointers, so that their stacks and lines resolve
WL_CFLAGS := -g -O1 -fno-omit-frame-pointer -fno-inline -Wall -pthread $(WL_ARCH_CFLAGS)

$(BUILD)/workloads/lib%.so: tests/workloads/lib%.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -shared -fPIC -o $@ $<

WL_KPERF = -Iinclude -L$(BUILD)/lib -lkperf-bpf -Wl,-rpath,'$$ORIGIN/../lib' $(SANITIZE)
# a workload whose first lines say uses_lib links libwl.so; uses_kperf, libkperf-bpf.so (the
# mstx markers), found next door in ../lib
$(BUILD)/workloads/%: tests/workloads/%.c $(WORKLOAD_LIBS) $(BUILD)/lib/libkperf-bpf.so
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -o $@ $< -L$(BUILD)/workloads -Wl,-rpath,'$$ORIGIN' \
		$(if $(findstring uses_lib,$(shell head -c 200 $<)),-lwl,) \
		$(if $(findstring uses_kperf,$(shell head -c 200 $<)),$(WL_KPERF),) -lm

$(BUILD)/workloads/%: tests/workloads/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(WL_CFLAGS) -o $@ $<

# the inline frame tests need real inlining: -O2, not the workloads' -fno-inline
$(BUILD)/workloads/inline_cxx: tests/workloads/inline_cxx.cpp
	@mkdir -p $(dir $@)
	$(CXX) -g -O2 -fno-omit-frame-pointer $(WL_ARCH_CFLAGS) -Wall -o $@ $<

# the .eh_frame unwinder's workload: built as distributions build, without frame pointers
# (-fno-optimize-sibling-calls keeps its call tree fixed)
$(BUILD)/workloads/nofp: tests/workloads/nofp.c $(BUILD)/workloads/libnofpdl.so
	@mkdir -p $(dir $@)
	$(CC) -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fasynchronous-unwind-tables \
		-Wall -o $@ $<

# the library nofp --dl opens after it started, built the same way
$(BUILD)/workloads/libnofpdl.so: tests/workloads/libnofpdl.c
	@mkdir -p $(dir $@)
	$(CC) -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fasynchronous-unwind-tables \
		-Wall -shared -fPIC -o $@ $<

# ... and its frames described in .debug_frame only (no unwind tables asked: gcc writes the
# call-frame information for the debugger), as some distributions' libraries are
$(BUILD)/workloads/nofp_dbg: tests/workloads/nofp.c
	@mkdir -p $(dir $@)
	$(CC) -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -Wall -o $@ $<

# a Go workload (UTrace's fetchG), built only where Go is installed; its test skips otherwise
GO         := $(shell command -v go 2>/dev/null)
GO_WORKLOADS := $(if $(GO),$(BUILD)/workloads/utrace_go)

$(BUILD)/workloads/utrace_go: $(wildcard tests/workloads/utrace_go/*)
	@mkdir -p $(dir $@)
	cd tests/workloads/utrace_go && GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOARCH=$(GOARCH) \
		GOCACHE=$(abspath $(BUILD))/go-cache $(GO) build -o $(abspath $@) .

# the JVM workload of the JIT tests, built only where a JDK is installed; its tests skip otherwise
JAVAC      := $(shell command -v javac 2>/dev/null)
JAVA_WORKLOADS := $(if $(JAVAC),$(BUILD)/workloads/JitHot.class)

$(BUILD)/workloads/JitHot.class: tests/workloads/jit/JitHot.java
	@mkdir -p $(dir $@)
	$(JAVAC) -d $(dir $@) $<

workloads: $(WORKLOADS) $(WORKLOAD_LIBS) $(GO_WORKLOADS) $(JAVA_WORKLOADS) $(BUILD)/workloads/nofp_dbg

# the benchmark programs are compiled too (not run): one that no longer builds is caught here
test: all $(BUILD)/tests/unit $(BUILD)/tests/integration $(FUZZERS) $(BENCHES)
	@$(MAKE) --no-print-directory -s format-check
	@# one after the other even under -j: the BPF tests check that nothing of theirs is left loaded
	$(MAKE) --no-print-directory -j1 test-unit test-integration test-python test-fuzz

test-unit: $(BUILD)/tests/unit workloads $(UNWIND_FIXTURES)
	KPERF_BUILD=$(abspath $(BUILD)) $(BUILD)/tests/unit --jobs 2

test-integration: $(BUILD)/tests/integration workloads $(CLI)
	KPERF_BUILD=$(abspath $(BUILD)) $(BUILD)/tests/integration --jobs 1

test-python: lib workloads $(CLI) $(NODE_MODULES)
	@if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then \
		KPERF_BUILD=$(abspath $(BUILD)) KPERF_BPF_LIB=$(abspath $(BUILD))/lib/libkperf-bpf.so \
		PYTHONPATH=python $(PYTHON) -m pytest -q tests/python; \
	else echo "test-python: no Python tests yet"; fi

# the Debian 13 root with python3.13 that the pyframes/py313_* tests run their workload in:
# 1-5 minutes (debootstrap), so made here, not by make test (those tests skip without it)
TRIXIE_ROOT ?= /var/cache/kperf-trixie
trixie-root:
	sh scripts/trixie_root.sh $(TRIXIE_ROOT)

# the Debian forky root with python3.14 (and python3.15, a version not read) of the
# pyframes/py314_* tests, made the same way (2-6 minutes; those tests skip without it)
FORKY_ROOT ?= /var/cache/kperf-forky
forky-root:
	sh scripts/forky_root.sh $(FORKY_ROOT)

# the kernel matrix (tests/kernels/run.sh): both architectures built, the arm64 guests' root
# first (the arm64 tests link its criterion); KERNELS="6.1 arm64" picks lines of kernels.list;
# the core set of tests (tests/kernels/core.list) unless KPERF_KERNEL_SET=full
test-kernels: all $(BUILD)/tests/unit $(BUILD)/tests/integration
	sh tests/kernels/rootfs.sh arm64
	$(MAKE) --no-print-directory ARCH=arm64 BUILD=build/arm64 SANITIZE= all \
		build/arm64/tests/unit build/arm64/tests/integration
	KPERF_BUILD=$(abspath $(BUILD)) KPERF_BUILD_ARM64=$(abspath build/arm64) \
		sh tests/kernels/run.sh $(KERNELS)

# the same guests with every suite and Python file but skip.list's (its own table in the README)
test-kernels-full:
	$(MAKE) --no-print-directory test-kernels KPERF_KERNEL_SET=full

# criterion does not fail a test on a LeakSanitizer or UBSan report: the logs are checked
asan:
	$(MAKE) BUILD=build/asan SANITIZE="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		all build/asan/tests/unit build/asan/tests/integration
	ASAN_OPTIONS=detect_leaks=1 KPERF_BUILD=$(abspath build/asan) build/asan/tests/unit --jobs 1 \
		> build/asan/unit.log 2>&1; \
		rc=$$?; tail -3 build/asan/unit.log; [ $$rc -eq 0 ] && \
		! grep -E "LeakSanitizer|runtime error|AddressSanitizer" build/asan/unit.log
	ASAN_OPTIONS=detect_leaks=1 KPERF_BUILD=$(abspath build/asan) build/asan/tests/integration --jobs 1 \
		> build/asan/integration.log 2>&1; rc=$$?; tail -3 build/asan/integration.log; \
		[ $$rc -eq 0 ] && ! grep -E "LeakSanitizer|runtime error|AddressSanitizer" build/asan/integration.log

demo: deps
	$(MAKE) --no-print-directory all
	$(CLI) trace -- $(BUILD)/workloads/syscalls

$(BUILD)/bench/%: bench/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(STLIB) $(LDFLAGS) $(LDLIBS)

bench: all $(BENCHES)
	@for b in bench/*.sh; do [ "$$b" != bench/build.sh ] && KPERF_BUILD=$(abspath $(BUILD)) sh "$$b"; done; true

# ---- fuzzing: libFuzzer targets in tests/fuzz (clang), seeded from tests/fuzz/seeds/<name> ----
# The library is built once more with the fuzzer's instrumentation (build/fuzz/obj); each
# target links it. `make fuzz` runs FUZZ_RUNS inputs per target; `make test` runs
# FUZZ_TEST_RUNS (a few seconds each) so a parser change that crashes is caught at once.

FUZZ_SRCS  := $(wildcard tests/fuzz/*.c)
FUZZERS    := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_RUNS  ?= 2000000
FUZZ_TEST_RUNS ?= 200000
FUZZ_TEST_SECONDS ?= 30
FUZZ_CFLAGS := -g -O1 -std=gnu11 -fsanitize=fuzzer-no-link,address,undefined -D_GNU_SOURCE -w \
	       -Iinclude -Iuser -I$(BUILD) -I$(BUILD)/gen -Ibpf $(PKG_CFLAGS)
FUZZ_LIB   := $(BUILD)/fuzz/libkperf-bpf-fuzz.a
FUZZ_OBJS  := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRCS)) $(BUILD)/fuzz/obj/gen/profile.pb-c.o

$(BUILD)/fuzz/obj/%.o: %.c | $(SKELS) $(GEN)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/fuzz/obj/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -I$(BUILD)/gen -c $< -o $@

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^

# a target of a part outside the library (the agent's) is built with that part's sources
FUZZ_EXTRA_agent_config := user/agent/config.c

.SECONDEXPANSION:
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB) $$(FUZZ_EXTRA_$$*)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_EXTRA_$*) $(FUZZ_LIB) $(PKG_LIBS) \
		-lstdc++ -lpthread -ldl -lm

# the longest input worth trying per target (event names longer than 511 bytes are refused
# at once; the rest are matched against every known name for a "did you mean": slow)
FUZZ_LEN_event_spec := 600

# run each target <runs> times (or for <2> seconds, if given, whichever ends first) over its
# seeds and the corpus it grew before
define run_fuzzers
	@for f in $(FUZZERS); do n=$$(basename $$f); mkdir -p $(BUILD)/fuzz/corpus/$$n; \
		len=8192; [ $$n = event_spec ] && len=$(FUZZ_LEN_event_spec); \
		echo "fuzz $$n: $(1) runs$(if $(2), (at most $(2) s))"; \
		$$f -runs=$(1) $(if $(2),-max_total_time=$(2)) -max_len=$$len -rss_limit_mb=1024 \
		$(BUILD)/fuzz/corpus/$$n \
		tests/fuzz/seeds/$$n > $(BUILD)/fuzz/$$n.log 2>&1 || \
		{ tail -40 $(BUILD)/fuzz/$$n.log; exit 1; }; tail -1 $(BUILD)/fuzz/$$n.log; done
endef

fuzz: $(FUZZERS)
	$(call run_fuzzers,$(FUZZ_RUNS))

test-fuzz: $(FUZZERS)
	$(call run_fuzzers,$(FUZZ_TEST_RUNS),$(FUZZ_TEST_SECONDS))

# ---- install ----

# where Debian's python3 looks: /usr/lib/python3/dist-packages for PREFIX=/usr,
# /usr/local/lib/python3.X/dist-packages for PREFIX=/usr/local; site-packages elsewhere
PYVER ?= $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(if \
	 $(filter /usr/local,$(PREFIX)),/usr/local/lib/python$(PYVER)/dist-packages,$(PREFIX)/lib/python$(PYVER)/site-packages))
LIBDIR ?= $(PREFIX)/lib
PY_PKGS := kperf ksym _libkperf msmemscope

install: lib cli
	install -d $(DESTDIR)$(PREFIX)/include/kperf $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(PREFIX)/bin
	install -m 644 include/kperf/*.h $(DESTDIR)$(PREFIX)/include/kperf/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libkperf-bpf.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@VERSION@|$(VERSION)|' \
		scripts/libkperf-bpf.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libkperf-bpf.pc
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	@# libkperf's three Python packages (kperf, ksym and the _libkperf layer), and msmemscope,
	@# with their subpackages (kperf.profiler)
	for d in $$(cd python && find $(PY_PKGS) -name __pycache__ -prune -o -type d -print); do \
		install -d $(DESTDIR)$(PYDIR)/$$d && \
		install -m 644 python/$$d/*.py $(DESTDIR)$(PYDIR)/$$d/ || exit 1; done
	echo '$(LIBDIR)/$(SONAME)' > $(DESTDIR)$(PYDIR)/kperf/_libpath.txt
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

# ---- maintenance ----

# x86: this machine's kernel; arm64: the BTF inside Debian 12's arm64 kernel package
vmlinux:
ifeq ($(ARCH),x86)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h
else
	@mkdir -p $(BUILD)
	k=$$(sh tests/kernels/fetch.sh arm64 bookworm linux-image-arm64) && \
		$(PYTHON) scripts/btf_from_image.py $$k/vmlinuz $(BUILD)/vmlinux.btf
	$(BPFTOOL) btf dump file $(BUILD)/vmlinux.btf format c > vmlinux/$(ARCH)/vmlinux.h
endif

FORMAT_FILES = $(shell git ls-files 'user/*.[ch]' 'include/*.h' 'bpf/*.[ch]' 'tests/*.[ch]' 'bench/*.c' 2>/dev/null)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

format:
	clang-format -i $(FORMAT_FILES)

clean:
	rm -rf $(BUILD)

$(BUILD)/bpf $(BUILD)/skel $(BUILD)/gen:
	mkdir -p $@

.SECONDARY:

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
