# normtune -- every build and test entry point.
#
#   make            build build/normtune (installs missing Debian packages
#                   when run as root with apt-get, else names them and stops)
#   make test       build and run the CPU test suite (CI runs this), a test
#                   file per CPU at a time; one line per test file, V=1
#                   shows full command lines and every test's output
#   make test-compile  every variant of every op's sweeps compiles (NVRTC, slow)
#   make test-asan  the CPU suite built with ASan + UBSan into build-asan/
#   make fuzz       libFuzzer harnesses (tests/fuzz/), FUZZ_TIME s each
#   make tune       default sweep on the GPU -> results.db -> normtune_dispatch.h
#   make test-gpu   GPU tests (needs a CUDA device)
#   make lib        production library build/libnormtune.{a,so}
#   make bench      the library against a copy and an add, and its peers
#                   (needs a CUDA device; BENCH_OUT=build/bench)
#
# NOBUILD=1 makes tune, test-gpu and bench use the binaries already in build/
# (for GPU machines that have no Lua headers: build elsewhere, copy build/).

CUDA ?= $(firstword $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)) /usr/local/cuda)
CC ?= cc
B ?= build
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(SAN) -D_GNU_SOURCE -I. -I$(B)/gen \
    -I/usr/include/lua5.4 -I$(CUDA)/include -pthread
LUA_A = $(firstword $(wildcard /usr/lib/*/liblua5.4.a /usr/lib/liblua5.4.a /usr/local/lib/liblua5.4.a))
LDLIBS = $(LUA_A) -lsqlite3 -L$(CUDA)/lib64 -lcudart_static -lnvrtc \
    -Wl,-rpath,$(CUDA)/lib64 -lpthread -ldl -lrt -lm

# The runner's own device code, not of any family (not in their hashes):
# the validation and yardstick kernels, the seeded fill, the ops' float64
# references on the device.
DREF_SRC := $(sort $(wildcard kernels/*/dref.cuh))
CHECK_SRC := kernels/check.cuh kernels/traffic.h kernels/fill.h kernels/dref.h $(DREF_SRC)
# The device sources NVRTC sees, in hash order (the library hashes the same list).
KSRC := kernels/nt_args.h $(sort $(filter-out kernels/check.cuh $(DREF_SRC),$(wildcard kernels/*.cuh \
    kernels/*/*.cuh kernels/*/tensors.h)))
CORE_SRC := $(filter-out tuner/main.c tuner/embed.c tuner/famhash.c kernels/%/test_op.c, \
    $(wildcard kernels/*.c kernels/*/*.c search/*.c db/*.c lua/*.c tuner/*.c))
CORE_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC)) $(B)/obj/gen/embedded.o
# The CPU tests: tests/test_*.c, and each op's own kernels/<op>/test_*.c
# (built to $(B)/tests/<op>/test_*).
TEST_BIN := $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/test_*.c)) \
    $(patsubst kernels/%.c,$(B)/tests/%,$(wildcard kernels/*/test_*.c))
TEST_SH := $(wildcard tests/test_*.sh)
GPU_BIN := $(patsubst tests/gpu/%.c,$(B)/gpu/%,$(wildcard tests/gpu/test_*.c))
BIN := $(B)/normtune
# The default sweeps: lua/sweeps/<op>.lua of every op folder kernels/<op>/,
# each followed by its lua/sweeps/<op>_n8.lua where there is one (rows of an
# odd number of 16-byte chunks); make tune runs them in turn into one DB;
# other scripts are not default.
OPS := $(patsubst kernels/%/,%,$(wildcard kernels/*/))
SWEEP ?= $(filter $(foreach o,$(OPS),lua/sweeps/$(o).lua lua/sweeps/$(o)_n8.lua),$(sort $(wildcard lua/sweeps/*.lua)))
DB ?= results.db
HEADER ?= normtune_dispatch.h
# make tune starts a DB that does not exist yet as a copy of SEED: the
# results the project ships (H200s).  On a GPU of a model SEED holds, the
# sweep reuses them (GPUs of one model are one device) and measures only
# what they lack; another model's run never uses them (results do not
# cross models: it is a cold campaign), and the export takes the model of
# the GPU just tuned (--newest).  SEED= starts from an empty database.
SEED ?= data/results.db
# DEVICES=all (or 0,1,3): make tune runs each sweep on those GPUs of this
# host at once, a shard each (normtune run --devices); unset, on one GPU.
DEVICES ?=
# REMEASURE=alone: the points each problem's search measured or reused
# within 6% of its pick are timed again alone after an L2 flush, as make
# bench times a call, and the header follows that order (normtune run
# --remeasure); unset, each script's own setting (docs/lua-api.md,
# search.remeasure).
REMEASURE ?=

# Quiet by default: "  CC build/obj/x.o" instead of the command line.
# V=1 prints every command (and makes tests/run.sh print all test output).
# make test builds through a second make with QUIET=1: nothing per file
# (an error still shows in full), so that a passing run stays short.
V ?= 0
QUIET ?= 0
ifeq ($(V),1)
Q :=
msg = @:
else ifeq ($(QUIET),1)
Q := @
msg = @:
else
Q := @
msg = @printf '  %-6s %s\n' '$(1)' '$(2)'
endif
# make test builds and runs tests NPROC at a time (tests/run.sh: NT_JOBS).
NPROC := $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps test test-gpu tune compile-check clean lib install
all: $(BIN)

# Check the build dependencies; install them with apt-get when we can.
deps:
	@missing=""; \
	[ -f /usr/include/lua5.4/lua.h ] && [ -n "$(LUA_A)" ] || missing="$$missing liblua5.4-dev"; \
	[ -f /usr/include/sqlite3.h ] || missing="$$missing libsqlite3-dev"; \
	command -v sqlite3 >/dev/null 2>&1 || missing="$$missing sqlite3"; \
	command -v pkg-config >/dev/null 2>&1 || missing="$$missing pkg-config"; \
	command -v gnuplot >/dev/null 2>&1 || missing="$$missing gnuplot-nox"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "normtune: installing$$missing with apt-get"; \
	    apt-get update -q >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null || \
	    { echo "normtune: error: apt-get could not install$$missing"; exit 1; }; \
	  else \
	    echo "normtune: error: missing Debian packages:$$missing (run as root: apt-get install$$missing)"; exit 1; \
	  fi; \
	fi; \
	[ -f "$(CUDA)/include/nvrtc.h" ] && [ -f "$(CUDA)/lib64/libcudart_static.a" ] || \
	  { echo "normtune: error: CUDA toolkit (nvrtc.h, libcudart_static.a) not found under $(CUDA); set CUDA=/path/to/cuda"; exit 1; }

$(B)/embed: tuner/embed.c
	@mkdir -p $(B)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=c11 $(WARN) -O2 -o $@ $<

# Kernel sources and the schema, embedded into the binary.
$(B)/gen/embedded.c: $(B)/embed $(KSRC) $(CHECK_SRC) db/schema.sql
	@mkdir -p $(B)/gen
	$(call msg,GEN,$@)
	$(Q){ $(B)/embed nt_kernel $(KSRC); $(B)/embed nt_check $(CHECK_SRC); \
	  $(B)/embed store_schema db/schema.sql; } > $@.tmp && mv $@.tmp $@

$(B)/obj/gen/embedded.o: $(B)/gen/embedded.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=c11 -O2 -c -o $@ $<

$(B)/obj/%.o: %.c $(wildcard */*.h) | deps
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libcore.a: $(CORE_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@; ar rcs $@ $^

$(BIN): $(B)/obj/tuner/main.o $(B)/libcore.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/%.c tests/t.h $(B)/libcore.a | deps
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libcore.a $(LDLIBS)

$(B)/tests/%: kernels/%.c tests/t.h $(B)/libcore.a | deps
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libcore.a $(LDLIBS)

$(B)/gpu/%: tests/gpu/%.c tests/t.h $(B)/libcore.a | deps
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libcore.a $(LDLIBS)

# The CPU suite: built NPROC files at a time, then run NPROC tests at a time.
# A test that runs make itself (test_lib_build.sh) must build the default
# tree whatever this make was given, hence the env -u.  The GPU test
# programs are built (not run) too, so that an API change that breaks them
# shows in CI, which has no GPU.
TEST_DEPS := $(BIN) $(TEST_BIN) $(B)/gpu/test_kernels
test:
	@$(MAKE) --no-print-directory -j$(NPROC) QUIET=1 $(TEST_DEPS)
	@env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u B -u SAN -u CFLAGS \
	  NORMTUNE=$(abspath $(BIN)) CC="$(CC)" V=$(V) NT_JOBS=$(NPROC) sh tests/run.sh $(TEST_BIN) $(TEST_SH)

# Every variant of every sweep script of each op (lua/sweeps/<op>.lua and
# <op>_*.lua) compiles for sm_90a with NVRTC, and no forward variant, nor
# the backward's loop and cstage, spills (tests/compile_all.sh; CI runs it
# as its own step).
test-compile: $(BIN)
	@NORMTUNE=$(abspath $(BIN)) V=$(V) sh tests/run.sh tests/compile_all.sh

# ---- sanitizers and fuzzing ---------------------------------------------------
#
#   make test-asan   the CPU suite (make test) built with AddressSanitizer and
#                    UndefinedBehaviorSanitizer into build-asan/; any report,
#                    a leak included, fails the test that caused it
#   make fuzz [FUZZ_TIME=30]  build the libFuzzer harnesses tests/fuzz/fuzz_*.c
#                    with clang into build-fuzz/ and run each FUZZ_TIME seconds
#                    on tests/fuzz/seeds/NAME plus build-fuzz/corpus/NAME
#
# SAN is added to every compile and link of the project's C sources.  For
# test-asan the sanitizer options make a report exit 99 and go to a file
# under build-asan/san/, which tests/run.sh turns into a FAIL line.
SAN ?=
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_ENV = ASAN_OPTIONS=exitcode=99:detect_leaks=1:abort_on_error=0:log_path=$(abspath $(1))/san/asan \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99:log_path=$(abspath $(1))/san/ubsan \
    LSAN_OPTIONS=exitcode=99 NT_SANLOG=$(abspath $(1))/san

.PHONY: test-compile test-asan fuzz fuzz-deps fuzz-build
# The sanitizers run the scripts' Lua several times slower: their budget (a
# guard against runaway scripts, 5 s of CPU and 7 of wall-clock time by
# default, docs/lua-api.md) is raised for them, so that no test of a large
# shipped sweep depends on how loaded the machine is.
test-asan:
	@rm -rf build-asan/san; mkdir -p build-asan/san
	@$(call SAN_ENV,build-asan) NORMTUNE_SCRIPT_BUDGET=60,120 $(MAKE) --no-print-directory B=build-asan \
	  SAN="$(ASAN_FLAGS)" CFLAGS="-O2 -g" test

FUZZ_CC ?= $(firstword $(shell command -v clang-14 clang 2>/dev/null) clang-14)
FUZZ_TIME ?= 30
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

# clang with libFuzzer (Debian: clang-14 and libclang-rt-14-dev).
fuzz-deps:
	@mkdir -p build-fuzz; p=build-fuzz/probe; \
	printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >$$p.c; \
	if ! $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $$p $$p.c >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "normtune: installing clang-14 libclang-rt-14-dev with apt-get"; \
	    apt-get update -q >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang-14 libclang-rt-14-dev >/dev/null || \
	    { echo "normtune: error: apt-get could not install clang-14 libclang-rt-14-dev"; exit 1; }; \
	  else \
	    echo "normtune: error: $(FUZZ_CC) cannot build a libFuzzer program (run as root: apt-get install clang-14 libclang-rt-14-dev)"; \
	    exit 1; \
	  fi; \
	fi; rm -f $$p $$p.c

fuzz-build: $(FUZZ_BIN)
$(B)/fuzz/fuzz_cache: tuner/compile.c   # it includes the parser's source

$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(B)/libcore.a | deps
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(B)/libcore.a $(LDLIBS)

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory B=build-fuzz CC=$(FUZZ_CC) \
	  SAN="$(ASAN_FLAGS) -fsanitize=fuzzer-no-link" CFLAGS="-O1 -g" fuzz-build
	@sh tests/fuzz/run.sh build-fuzz $(FUZZ_TIME)

ifeq ($(NOBUILD),1)
GPU_DEPS :=
else
GPU_DEPS := $(BIN) $(GPU_BIN)
endif

# GPU tests, then compute-sanitizer memcheck and racecheck on small shapes
# GPU tests print everything (V=1): the device's UUID, errors and the
# library's speed ratios belong in the log of a GPU run.  They run one at a
# time (NT_JOBS=1): they share the GPU, and some time it.
test-gpu: $(GPU_DEPS)
	@NORMTUNE=$(abspath $(BIN)) NORMTUNE_DISPATCH=$(abspath $(DISPATCH)) V=1 NT_JOBS=1 sh tests/run.sh $(GPU_BIN) tests/gpu/sanitize.sh tests/gpu/test_interrupt.sh tests/gpu/test_unrunnable.sh tests/gpu/test_device.sh tests/gpu/test_rematch.sh tests/gpu/test_yardstick.sh

tune: $(if $(filter 1,$(NOBUILD)),,$(BIN))
	$(BIN) export --check --db $(DB) -o $(HEADER)
	@if [ ! -e "$(DB)" ] && [ -n "$(SEED)" ]; then \
	  echo "make tune: $(DB) starts as a copy of $(SEED) (SEED= for an empty one)"; \
	  cp "$(SEED)" "$(DB).seed" && chmod u+w "$(DB).seed" && mv "$(DB).seed" "$(DB)" || exit 1; \
	fi
	settle=; for s in $(SWEEP); do $(BIN) run $$s --db $(DB) $$settle $(if $(DEVICES),--devices $(DEVICES)) $(if $(REMEASURE),--remeasure $(REMEASURE)) || exit 1; settle='--settle 0'; done
	$(BIN) export --db $(DB) --newest -o $(HEADER)
	$(BIN) report --db $(DB) --newest

clean:
	rm -rf $(B) build-asan build-fuzz

# ---- the production library: docs/api.md ------------------------------------
#
#   make lib [DISPATCH=header.h]   build/libnormtune.{a,so} from kernels/ and a
#                                  dispatch header (default: the shipped one)
#   make install PREFIX=/usr/local normtune.h with normtune_ops.h, both
#                                  libraries, normtune.pc
#   make examples                  build/examples/rmsnorm_bwd (build tree)
#
# build/famhash (tuner/famhash.c) knows every family's current source hash:
# `famhash --check $(DISPATCH)` refuses a header (format 2) any of whose
# families was tuned with other sources, one line per stale family, before
# nvcc runs and before anything under build/ is replaced; a checked copy
# goes to build/lib/nt_dispatch.h, rewritten only when its content changes.
# `famhash` writes build/lib/nt_famhash.h (the hashes again, which
# normtune.cu static_asserts per family, and the families' device sources).
# Objects go to build/lib/; all of them are linked into one relocatable
# object whose only global symbols are normtune_*, which both libraries are
# made of.  LIB_GENCODE: sm_90a, plus sm_80 and sm_100a when nvcc
# --list-gpu-arch has them.
DISPATCH ?= kernels/normtune_dispatch.h
PREFIX ?= /usr/local
NVCC ?= $(CUDA)/bin/nvcc
LIB_ARCHS = $(shell $(NVCC) --list-gpu-arch 2>/dev/null)
LIB_GENCODE ?= $(if $(filter compute_80,$(LIB_ARCHS)),-gencode=arch=compute_80$(,)code=sm_80) \
    -gencode=arch=compute_90a,code=sm_90a \
    $(if $(filter compute_100,$(LIB_ARCHS)),-gencode=arch=compute_100a$(,)code=sm_100a)
, := ,
OP_CSRC := $(filter-out $(wildcard kernels/*/test_*.c),$(wildcard kernels/*/*.c))
LIB_CSRC := kernels/family.c kernels/launch.c kernels/dispatch.c kernels/ops.c kernels/ref.c \
    $(OP_CSRC)
LIB_OBJ := $(B)/lib/normtune.o $(patsubst kernels/%.c,$(B)/lib/%.o,$(LIB_CSRC))
LIB_HDR := $(B)/lib/nt_dispatch.h
LIB_FAMHASH := $(B)/lib/nt_famhash.h
LIB_LIBS := -L$(CUDA)/lib64 -lcudart -Wl,-rpath,$(CUDA)/lib64 -lpthread -ldl -lrt -lm
LIB_CFLAGS = -std=c11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -I. -I$(CUDA)/include -fPIC \
    -fvisibility=hidden
FAMHASH := $(B)/famhash
FAMHASH_OBJ := $(patsubst %.c,$(B)/obj/%.o,tuner/famhash.c kernels/family.c kernels/ops.c \
    kernels/ref.c kernels/nt.c $(OP_CSRC)) $(B)/obj/gen/embedded.o
# build/apigen (kernels/apigen.c built with NT_APIGEN_MAIN) writes what
# follows from the op tables: the public header's op part
# build/include/normtune_ops.h (every op's kernels/<op>/api.h, checked
# against its table, in the registry's order; build/include/ also gets a
# copy of normtune.h and is what make install installs), the calls'
# definitions build/lib/nt_api.h that normtune.cu includes, and the call
# table build/lib/nt_api_calls.h that tests iterate (a benchmark target
# builds as $(B)/gpu/test_lib does and loops over nt_api_calls[] the same
# way: every op of the registry, none named).  Each is replaced only when its
# text changes, so that a change to an op's C files that leaves its calls
# as they were does not recompile normtune.cu.
APIGEN := $(B)/apigen
APIGEN_OBJ := $(B)/obj/apigen_main.o $(filter-out $(B)/obj/tuner/famhash.o,$(FAMHASH_OBJ))
LIB_INC := $(B)/include/normtune.h $(B)/include/normtune_ops.h

.PHONY: examples FORCE
FORCE:

lib: $(B)/libnormtune.a $(B)/libnormtune.so

$(FAMHASH): $(FAMHASH_OBJ)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lpthread -lm

$(LIB_HDR): $(FAMHASH) FORCE
	@mkdir -p $(B)/lib
	@$(FAMHASH) --check '$(DISPATCH)' || exit 1; \
	cmp -s '$(DISPATCH)' $@ || cp '$(DISPATCH)' $@

$(LIB_FAMHASH): $(FAMHASH) FORCE
	@mkdir -p $(B)/lib
	@$(FAMHASH) > $@.tmp && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(B)/obj/apigen_main.o: kernels/apigen.c kernels/apigen.h kernels/family.h | deps
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -DNT_APIGEN_MAIN -c -o $@ $<

$(APIGEN): $(APIGEN_OBJ)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lpthread -lm

$(B)/include/normtune.h: kernels/normtune.h
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

$(B)/include/normtune_ops.h: $(APIGEN) $(wildcard kernels/*/api.h)
	@mkdir -p $(dir $@)
	$(call msg,GEN,$@)
	$(Q)$(APIGEN) header kernels > $@.tmp && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(B)/lib/nt_api.h $(B)/lib/nt_api_calls.h: $(B)/lib/nt_%.h: $(APIGEN)
	@mkdir -p $(dir $@)
	$(call msg,GEN,$@)
	$(Q)$(APIGEN) $(if $(filter api,$*),lib,calls) > $@.tmp && \
	  { cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(B)/lib/normtune.o: kernels/normtune.cu $(LIB_INC) kernels/family.h kernels/launch.h \
    kernels/dispatch.h $(KSRC) $(LIB_HDR) $(LIB_FAMHASH) $(B)/lib/nt_api.h
	$(call msg,NVCC,$@)
	$(Q)$(NVCC) -std=c++17 -O3 $(LIB_GENCODE) -Xcompiler -fPIC,-fvisibility=hidden,-fno-exceptions,-fno-threadsafe-statics,-Wall \
	  -I. -Ikernels -I$(B)/lib -I$(B)/include -I$(CUDA)/include -c -o $@ $<

$(B)/lib/%.o: kernels/%.c $(wildcard kernels/*.h kernels/*/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(B)/lib/normtune_all.o: $(LIB_OBJ)
	ld -r -o $@.tmp $^
	objcopy -w --keep-global-symbol='normtune_*' $@.tmp $@
	rm -f $@.tmp

$(B)/lib/normtune.map:
	@mkdir -p $(dir $@)
	printf '{\n  global: normtune_*;\n  local: *;\n};\n' > $@

$(B)/libnormtune.a: $(B)/lib/normtune_all.o
	rm -f $@.tmp; ar rcs $@.tmp $< && mv $@.tmp $@

$(B)/libnormtune.so: $(B)/lib/normtune_all.o $(B)/lib/normtune.map
	$(CC) -shared -o $@.tmp $< -Wl,-soname,libnormtune.so \
	  -Wl,--version-script=$(B)/lib/normtune.map -Wl,--no-undefined $(LIB_LIBS) && mv $@.tmp $@

install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(LIB_INC) $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(B)/libnormtune.a $(DESTDIR)$(PREFIX)/lib/libnormtune.a
	install -m 755 $(B)/libnormtune.so $(DESTDIR)$(PREFIX)/lib/libnormtune.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@CUDA@|$(CUDA)|g' normtune.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/normtune.pc

examples: $(B)/libnormtune.a
	@mkdir -p $(B)/examples
	$(MAKE) -C examples BIN=$(abspath $(B)/examples/rmsnorm_bwd) \
	  NORMTUNE_CFLAGS="-I$(abspath $(B)/include) -I$(CUDA)/include" \
	  NORMTUNE_LIBS="$(abspath $(B)/libnormtune.a) $(LIB_LIBS)"

# The library's GPU test links the library, not libcore's kernels (an
# explicit rule: it takes precedence over the $(B)/gpu/% pattern), and the
# op registry with the ops' references (the library's copies are hidden).
$(B)/gpu/test_lib: tests/gpu/test_lib.c tests/t.h kernels/family.c kernels/ops.c kernels/ref.c \
    $(OP_CSRC) $(wildcard kernels/*.h kernels/*/*.h) tuner/gate.c tuner/gate.h tuner/uuid.h \
    $(B)/libnormtune.a $(B)/lib/nt_api_calls.h
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) -std=c11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -I. -I$(B)/lib -I$(B)/include -I$(CUDA)/include -pthread \
	  -o $@ tests/gpu/test_lib.c kernels/family.c kernels/ops.c kernels/ref.c $(OP_CSRC) \
	  tuner/gate.c $(B)/libnormtune.a -L$(CUDA)/lib64 -lcudart_static -lpthread -ldl -lrt -lm

# ---- make bench: the library against its yardsticks and its peers -------------
#
#   make bench [BENCH_OUT=build/bench] [NOBUILD=1]
#
# $(B)/gpu/bench (tests/gpu/bench.c, linked as $(B)/gpu/test_lib is, with
# the add yardstick tests/gpu/bench_add.cu built by nvcc for LIB_GENCODE)
# times every op of the library at the shapes of BENCH_SHAPES beside a
# device copy and an add kernel; then, when $(PYTHON) can import torch,
# tests/gpu/peers_fwd.py (PEERS_FWD_ARGS) and tests/gpu/peers_bwd.py.
# tests/gpu/bench_run.sh runs them in turn and writes everything under
# BENCH_OUT: bench.txt, bench.csv, bench_pct.csv, bench.svg (normtune
# plot, when gnuplot is there), peers_fwd.{txt,md}, peers_bwd.{txt,md}.
# PEERS_REPEAT (5) is the passes of each shape the peers scripts make (their
# --repeat): each cell the median of the passes, and each verdict against
# the fastest peer with the passes normtune won.  BENCH_PEERS=0 leaves the
# peers scripts out.  Without a GPU the bench
# says so and make bench fails.  NOBUILD=1 runs what build/ holds (built
# elsewhere, carried over).
BENCH_OUT ?= $(B)/bench
BENCH_SHAPES ?= tests/gpu/bench_shapes.txt
BENCH := $(B)/gpu/bench
PYTHON ?= python3
PEERS_FWD_ARGS ?= --no-compile
BENCH_PEERS ?= 1
PEERS_REPEAT ?= 5

.PHONY: bench bench-build
bench-build: $(BENCH) $(BIN) $(B)/libnormtune.so

$(B)/gpu/bench_add.o: tests/gpu/bench_add.cu tests/gpu/bench_add.h
	@mkdir -p $(dir $@)
	$(call msg,NVCC,$@)
	$(Q)$(NVCC) -std=c++17 -O3 $(LIB_GENCODE) -Xcompiler -fno-exceptions,-fno-threadsafe-statics,-Wall -I. -c -o $@ $<

$(BENCH): tests/gpu/bench.c tests/gpu/bench_add.h $(B)/gpu/bench_add.o kernels/family.c \
    kernels/ops.c kernels/ref.c $(OP_CSRC) $(wildcard kernels/*.h kernels/*/*.h) \
    $(B)/libnormtune.a $(B)/lib/nt_api_calls.h
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) -std=c11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -I. -I$(B)/lib -I$(B)/include -I$(CUDA)/include -pthread \
	  -o $@ tests/gpu/bench.c kernels/family.c kernels/ops.c kernels/ref.c $(OP_CSRC) \
	  $(B)/gpu/bench_add.o $(B)/libnormtune.a -L$(CUDA)/lib64 -lcudart_static -lpthread -ldl -lrt -lm

bench: $(if $(filter 1,$(NOBUILD)),,bench-build)
	@BENCH=$(abspath $(BENCH)) NORMTUNE=$(abspath $(BIN)) BENCH_SHAPES=$(BENCH_SHAPES) \
	  BENCH_OUT=$(BENCH_OUT) PYTHON="$(PYTHON)" NT_LIB=$(abspath $(B)/libnormtune.so) \
	  NT_DISPATCH=$(abspath $(DISPATCH)) PEERS_FWD_ARGS="$(PEERS_FWD_ARGS)" PEERS_REPEAT=$(PEERS_REPEAT) \
	  BENCH_PEERS=$(BENCH_PEERS) sh tests/gpu/bench_run.sh
