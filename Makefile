# normtune -- every build and test entry point.
#
#   make            build build/normtune (installs missing Debian packages
#                   when run as root with apt-get, else names them and stops)
#   make test       build and run the CPU test suite (CI runs this)
#   make tune       default sweep on the GPU -> results.db -> normtune_dispatch.h
#   make test-gpu   GPU tests (needs a CUDA device)
#   make lib        production library build/libnormtune.{a,so} (issue 4)
#
# NOBUILD=1 makes tune and test-gpu use the binaries already in build/
# (for GPU machines that have no Lua headers: build elsewhere, copy build/).

CUDA ?= $(firstword $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)) /usr/local/cuda)
CC ?= cc
B := build
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -I. -I$(B)/gen \
    -I/usr/include/lua5.4 -I$(CUDA)/include -pthread
LUA_A = $(firstword $(wildcard /usr/lib/*/liblua5.4.a /usr/lib/liblua5.4.a /usr/local/lib/liblua5.4.a))
LDLIBS = $(LUA_A) -lsqlite3 -L$(CUDA)/lib64 -lcudart_static -lnvrtc \
    -Wl,-rpath,$(CUDA)/lib64 -lpthread -ldl -lrt -lm

# The device sources NVRTC sees, in hash order (the library hashes the same list).
KSRC := kernels/nt_args.h $(sort $(filter-out kernels/check.cuh,$(wildcard kernels/*.cuh)))
CORE_SRC := $(filter-out tuner/main.c tuner/embed.c, \
    $(wildcard kernels/*.c search/*.c db/*.c lua/*.c tuner/*.c))
CORE_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC)) $(B)/obj/gen/embedded.o
TEST_BIN := $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/test_*.c))
TEST_SH := $(wildcard tests/test_*.sh)
GPU_BIN := $(patsubst tests/gpu/%.c,$(B)/gpu/%,$(wildcard tests/gpu/test_*.c))
BIN := $(B)/normtune
SWEEP ?= lua/sweeps/rmsnorm_bwd.lua
DB ?= results.db
HEADER ?= normtune_dispatch.h

.PHONY: all deps test test-gpu tune compile-check clean lib install
all: $(BIN)

# Check the build dependencies; install them with apt-get when we can.
deps:
	@missing=""; \
	[ -f /usr/include/lua5.4/lua.h ] && [ -n "$(LUA_A)" ] || missing="$$missing liblua5.4-dev"; \
	[ -f /usr/include/sqlite3.h ] || missing="$$missing libsqlite3-dev"; \
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
	$(CC) -std=c11 $(WARN) -O2 -o $@ $<

# Kernel sources and the schema, embedded into the binary.
$(B)/gen/embedded.c: $(B)/embed $(KSRC) kernels/check.cuh db/schema.sql
	@mkdir -p $(B)/gen
	{ $(B)/embed nt_kernel $(KSRC); $(B)/embed nt_check kernels/check.cuh; \
	  $(B)/embed store_schema db/schema.sql; } > $@.tmp && mv $@.tmp $@

$(B)/obj/gen/embedded.o: $(B)/gen/embedded.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -c -o $@ $<

$(B)/obj/%.o: %.c $(wildcard */*.h) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libcore.a: $(CORE_OBJ)
	rm -f $@; ar rcs $@ $^

$(BIN): $(B)/obj/tuner/main.o $(B)/libcore.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/%.c tests/t.h $(B)/libcore.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libcore.a $(LDLIBS)

$(B)/gpu/%: tests/gpu/%.c tests/t.h $(B)/libcore.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libcore.a $(LDLIBS)

test: $(BIN) $(TEST_BIN)
	@NORMTUNE=$(abspath $(BIN)) CC="$(CC)" sh tests/run.sh $(TEST_BIN) $(TEST_SH)

ifeq ($(NOBUILD),1)
GPU_DEPS :=
else
GPU_DEPS := $(BIN) $(GPU_BIN)
endif

test-gpu: $(GPU_DEPS)
	@NORMTUNE=$(abspath $(BIN)) sh tests/run.sh $(GPU_BIN)

tune: $(if $(filter 1,$(NOBUILD)),,$(BIN))
	$(BIN) run $(SWEEP) --db $(DB)
	$(BIN) export --db $(DB) -o $(HEADER)

clean:
	rm -rf $(B)
