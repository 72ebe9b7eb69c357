# kperf-bpf - top-level build. `make help` lists the targets.
#
# Layout of the build tree (git-ignored):
#   build/bpf/X.bpf.o, build/skel/X.skel.h    BPF objects and their skeletons
#   build/obj/...                              userspace objects (-fPIC)
#   build/lib/libkperf-bpf.{so*,a}             the library
#   build/bin/kperf-bpf                        the command
#   build/tests/, build/workloads/             test binaries and traced workloads
# `make asan` builds the same tree under build/asan with AddressSanitizer and UBSan.

VERSION    := 0.1.0
SOVERSION  := 0
PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD      ?= build
ARCH       := x86

CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
PYTHON     ?= /usr/bin/python3
SANITIZE   ?=

# libraries every userspace object may use; why each one is there: README.md "Dependencies"
PKGS       := libbpf libelf libdw zlib libcjson libprotobuf-c capstone
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -lelf -ldw -lz -lcjson -lprotobuf-c -lcapstone)

CFLAGS     ?= -O2 -g
CFLAGS     += -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	      -fPIC -fvisibility=hidden -D_GNU_SOURCE -Iinclude -Iuser -I$(BUILD) -Ibpf \
	      $(PKG_CFLAGS) $(SANITIZE)
LDFLAGS    += $(SANITIZE)
LDLIBS     := $(PKG_LIBS) -lstdc++ -lpthread -ldl -lm

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
	      -Wall -Werror -Wno-unused-function

# modules: every folder of user/ is part of the library except the programs
PROGRAM_MODULES := cli agent
LIB_MODULES := $(filter-out $(PROGRAM_MODULES),$(notdir $(wildcard user/*)))
LIB_SRCS   := $(wildcard $(foreach m,$(LIB_MODULES),user/$(m)/*.c))
CLI_SRCS   := $(wildcard user/cli/*.c)
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

.PHONY: all lib cli deps test test-unit test-integration test-python demo install clean \
	vmlinux asan format format-check bench help workloads fuzz

all: lib cli workloads

lib: $(SHLIB) $(STLIB) $(BUILD)/lib/libkperf-bpf.so

cli: $(CLI)

help:
	@echo "make deps         install the Debian packages kperf-bpf needs (apt-get)"
	@echo "make [all]        BPF objects, skeletons, libkperf-bpf.{so,a}, kperf-bpf, test workloads"
	@echo "make test         unit, integration (root + BPF) and Python tests"
	@echo "make demo         deps + build + trace a built-in workload and print its syscall table"
	@echo "make asan         build with ASan+UBSan and run the C tests under it"
	@echo "make fuzz         libFuzzer targets of tests/fuzz (FUZZ_RUNS=$(FUZZ_RUNS) each)"
	@echo "make bench        build and run the benchmarks (ratios, not pass/fail)"
	@echo "make install      PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)"
	@echo "make vmlinux      regenerate vmlinux/$(ARCH)/vmlinux.h from this kernel's BTF"
	@echo "make format-check / format   clang-format (kernel style) check / apply"

# ---- dependencies ----

DEB_PKGS := make gcc g++ clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev \
	    libcjson-dev libprotobuf-c-dev protobuf-c-compiler libcriterion-dev python3 python3-pytest pkg-config \
	    linux-libc-dev systemtap-sdt-dev elfutils binutils golang-go clang-format \
	    libcapstone-dev binutils-aarch64-linux-gnu linux-perf

deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: all Debian packages present"; fi

# ---- BPF ----

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o | $(BUILD)/skel
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

$(GEN_SYSCALLS): scripts/gen_syscall_table.sh scripts/syscalls_x86_64_extra.txt | $(BUILD)/gen
	sh scripts/gen_syscall_table.sh > $@.tmp && mv $@.tmp $@

# the pprof schema, compiled by protoc-c
$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h: user/export/profile.proto | $(BUILD)/gen
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
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(STLIB) $(LDLIBS)

# ---- tests ----

TEST_CFLAGS := $(filter-out -fvisibility=hidden,$(CFLAGS)) -Wno-unused-parameter -Itests \
	       -DKPERF_SRCDIR='"$(abspath .)"'

$(BUILD)/tests/unit: $(UNIT_SRCS) $(STLIB) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $(UNIT_SRCS) $(STLIB) $(LDFLAGS) $(LDLIBS) -lcriterion

$(BUILD)/tests/integration: $(INTEG_SRCS) $(STLIB) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $(INTEG_SRCS) $(STLIB) $(LDFLAGS) $(LDLIBS) -lcriterion

# workloads: plain programs with -g and frame pointers, so that their stacks and lines resolve
WL_CFLAGS := -g -O1 -fno-omit-frame-pointer -fno-inline -Wall -pthread

$(BUILD)/workloads/lib%.so: tests/workloads/lib%.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/workloads/%: tests/workloads/%.c $(WORKLOAD_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(WL_CFLAGS) -o $@ $< -L$(BUILD)/workloads -Wl,-rpath,'$$ORIGIN' \
		$(if $(findstring uses_lib,$(shell head -c 200 $<)),-lwl,) -lm

$(BUILD)/workloads/%: tests/workloads/%.cpp
	@mkdir -p $(dir $@)
	g++ $(WL_CFLAGS) -o $@ $<

# a Go workload (UTrace's fetchG), built only where Go is installed; its test skips otherwise
GO         := $(shell command -v go 2>/dev/null)
GO_WORKLOADS := $(if $(GO),$(BUILD)/workloads/utrace_go)

$(BUILD)/workloads/utrace_go: $(wildcard tests/workloads/utrace_go/*)
	@mkdir -p $(dir $@)
	cd tests/workloads/utrace_go && GO111MODULE=off GOFLAGS= CGO_ENABLED=0 \
		GOCACHE=$(abspath $(BUILD))/go-cache $(GO) build -o $(abspath $@) .

workloads: $(WORKLOADS) $(WORKLOAD_LIBS) $(GO_WORKLOADS)

test: all $(BUILD)/tests/unit $(BUILD)/tests/integration
	$(MAKE) --no-print-directory test-unit test-integration test-python

test-unit: $(BUILD)/tests/unit workloads
	KPERF_BUILD=$(abspath $(BUILD)) $(BUILD)/tests/unit --jobs 2

test-integration: $(BUILD)/tests/integration workloads $(CLI)
	KPERF_BUILD=$(abspath $(BUILD)) $(BUILD)/tests/integration --jobs 1

test-python: lib workloads $(CLI)
	@if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then \
		KPERF_BUILD=$(abspath $(BUILD)) KPERF_BPF_LIB=$(abspath $(BUILD))/lib/libkperf-bpf.so \
		PYTHONPATH=python $(PYTHON) -m pytest -q tests/python; \
	else echo "test-python: no Python tests yet"; fi

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
	@for b in bench/*.sh; do [ -f "$$b" ] && KPERF_BUILD=$(abspath $(BUILD)) sh "$$b"; done; true

# ---- fuzzing: libFuzzer targets in tests/fuzz (clang), seeded from tests/fuzz/seeds/<name> ----

FUZZ_SRCS  := $(wildcard tests/fuzz/*.c)
FUZZERS    := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_RUNS  ?= 200000

$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) | $(SKELS) $(GEN)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude \
		-Iuser -I$(BUILD) -I$(BUILD)/gen -Ibpf $(PKG_CFLAGS) -o $@ $< $(LIB_SRCS) \
		$(BUILD)/gen/profile.pb-c.c $(PKG_LIBS) -lstdc++ -lpthread -ldl -lm

fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do n=$$(basename $$f); mkdir -p $(BUILD)/fuzz/corpus/$$n; \
		$$f -runs=$(FUZZ_RUNS) -max_len=8192 $(BUILD)/fuzz/corpus/$$n tests/fuzz/seeds/$$n \
		|| exit 1; done

# ---- install ----

# where Debian's python3 looks: /usr/lib/python3/dist-packages for PREFIX=/usr,
# /usr/local/lib/python3.X/dist-packages for PREFIX=/usr/local; site-packages elsewhere
PYVER ?= $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(if \
	 $(filter /usr/local,$(PREFIX)),/usr/local/lib/python$(PYVER)/dist-packages,$(PREFIX)/lib/python$(PYVER)/site-packages))
LIBDIR ?= $(PREFIX)/lib

install: lib cli
	install -d $(DESTDIR)$(PREFIX)/include/kperf $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PYDIR)/kperf
	install -m 644 include/kperf/*.h $(DESTDIR)$(PREFIX)/include/kperf/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libkperf-bpf.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@VERSION@|$(VERSION)|' \
		scripts/libkperf-bpf.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libkperf-bpf.pc
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	@if [ -d python/kperf ]; then \
		install -m 644 python/kperf/*.py $(DESTDIR)$(PYDIR)/kperf/ && \
		echo '$(LIBDIR)/$(SONAME)' > $(DESTDIR)$(PYDIR)/kperf/_libpath.txt; fi
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

# ---- maintenance ----

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

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

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
