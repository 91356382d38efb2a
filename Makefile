# rdmacheck: the only entry point (GNU Make; no Python, CMake or autotools).
# Quiet by default; V=1 prints full command lines. Changing CC, COVERAGE or
# SANITIZE rebuilds everything (the flags are stamped).

.SUFFIXES:
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

BUILD    ?= build
COVERAGE ?= 0
SANITIZE ?=
V        ?= 0
TIMEOUT  ?= 30

ifeq ($(origin CC),default)
CC := gcc
endif

ifeq ($(V),1)
Q :=
msg =
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q := @
msg =
else
Q := @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

# ---------------------------------------------------------------- flags
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 \
             -Wno-unused-parameter
OPT       := -O2
ifeq ($(COVERAGE),1)
OPT       := -O0
COV_FLAGS := --coverage
endif
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
CFLAGS_ALL  := -std=gnu11 -g $(OPT) -D_GNU_SOURCE -pthread -fPIC $(WARN) \
               $(COV_FLAGS) $(SAN_FLAGS) $(CFLAGS)
LDFLAGS_ALL := -pthread $(COV_FLAGS) $(SAN_FLAGS) $(LDFLAGS)

# libfiu installs under /usr/lib, outside the multiarch directory.
FIU_CFLAGS := $(shell pkg-config --cflags libfiu 2>/dev/null) -DFIU_ENABLE=1
FIU_LIBS   := $(or $(shell pkg-config --libs libfiu 2>/dev/null),-lfiu)
CMOCKA_LIBS := $(or $(shell pkg-config --libs cmocka 2>/dev/null),-lcmocka)

STAMP := $(BUILD)/flags.stamp
FLAGS_ID := $(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL)
$(STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(FLAGS_ID)' | cmp -s - $@ || echo '$(FLAGS_ID)' > $@
FORCE:

# ---------------------------------------------------------------- mock
MOCKLIB := $(BUILD)/mock/lib
MOCKOBJ := $(BUILD)/mock/obj
MOCK_CFLAGS := -Imock/include -Imock $(FIU_CFLAGS)
# The drop-ins export only MOCK_EXPORT symbols; the core exports what its
# version script names (the control API, and the fabric to the drop-ins).
VISIBILITY := -fvisibility=hidden

CORE_SRC  := mock/fabric.c mock/fabric_cm.c mock/fabric_qp.c mock/addr.c mock/topology.c \
             mock/control.c \
             mock/fault.c mock/log.c
VERBS_SRC := mock/verbs_device.c mock/verbs_mr.c mock/verbs_cq.c mock/verbs_qp.c mock/verbs_post.c
MLX5_SRC  := mock/mlx5.c
CM_SRC    := mock/cm.c mock/cm_event.c mock/cm_conn.c mock/cm_qp.c mock/cm_ep.c \
             mock/cm_getaddrinfo.c

core_objs  = $(patsubst mock/%.c,$(MOCKOBJ)/%.o,$(CORE_SRC))
verbs_objs = $(patsubst mock/%.c,$(MOCKOBJ)/%.o,$(VERBS_SRC))
cm_objs    = $(patsubst mock/%.c,$(MOCKOBJ)/%.o,$(CM_SRC))
mlx5_objs  = $(patsubst mock/%.c,$(MOCKOBJ)/%.o,$(MLX5_SRC))

LIB_CORE  := $(MOCKLIB)/librdmamock.so.0
LIB_VERBS := $(MOCKLIB)/libibverbs.so.1
LIB_CM    := $(MOCKLIB)/librdmacm.so.1
LIB_MLX5  := $(MOCKLIB)/libmlx5.so.1
MOCK_LIBS := $(LIB_CORE) $(LIB_VERBS) $(LIB_CM) $(LIB_MLX5)

$(MOCKOBJ)/%.o: mock/%.c $(STAMP) Makefile
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) $(MOCK_CFLAGS) $(VISIBILITY) -MMD -MP -c $< -o $@

# A drop-in library: its soname, its version script, no undefined symbols,
# and the other mock libraries found beside it.
define dropin_link
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -o $@ $(1) $(LDFLAGS_ALL) -Wl,-soname,$(notdir $@) \
	  -Wl,--version-script=$(2) -Wl,-z,defs -Wl,-rpath,'$$ORIGIN' $(3)
endef

$(LIB_CORE): $(core_objs) mock/librdmamock.map
	$(call dropin_link,$(core_objs),mock/librdmamock.map,$(FIU_LIBS) -ldl)
	$(Q)ln -sf $(notdir $@) $(MOCKLIB)/librdmamock.so

$(LIB_VERBS): $(verbs_objs) mock/libibverbs.map $(LIB_CORE)
	$(call dropin_link,$(verbs_objs),mock/libibverbs.map,$(LIB_CORE) $(FIU_LIBS))

$(LIB_CM): $(cm_objs) mock/librdmacm.map $(LIB_VERBS) $(LIB_CORE)
	$(call dropin_link,$(cm_objs),mock/librdmacm.map,$(LIB_VERBS) $(LIB_CORE) $(FIU_LIBS))

$(core_objs): VISIBILITY :=

$(LIB_MLX5): $(mlx5_objs) mock/libmlx5.map $(LIB_VERBS) $(LIB_CORE)
	$(call dropin_link,$(mlx5_objs),mock/libmlx5.map,$(LIB_VERBS) $(LIB_CORE) $(FIU_LIBS))

mock: $(MOCK_LIBS)

# ---------------------------------------------------------------- suite
SUITEOBJ := $(BUILD)/conformance/obj
SUITE_CFLAGS := -Iconformance -Iconformance/include -Ifixtures $(FIU_CFLAGS)
RUNNER_SRC := conformance/runner.c conformance/report.c conformance/backend.c
TEST_SRC   := $(filter-out $(RUNNER_SRC),$(wildcard conformance/*.c)) \
              $(wildcard fixtures/*.c)
suite_objs  = $(patsubst %.c,$(SUITEOBJ)/%.o,$(RUNNER_SRC) $(TEST_SRC))
SUITE_LIBS := $(CMOCKA_LIBS) $(FIU_LIBS) -ldl

$(SUITEOBJ)/%.o: %.c $(STAMP)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) $(SUITE_CFLAGS) -MMD -MP -c $< -o $@

RC_MOCK := $(BUILD)/conformance/rdmacheck-mock
RC_REAL := $(BUILD)/conformance/rdmacheck-real

# Same objects, two links: the mock's drop-in libraries, or the system's.
$(RC_MOCK): $(suite_objs) $(LIB_CM) $(LIB_VERBS) $(LIB_MLX5)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(suite_objs) $(LDFLAGS_ALL) $(LIB_CM) $(LIB_VERBS) $(LIB_MLX5) \
	  -Wl,-rpath,'$$ORIGIN/../mock/lib' $(SUITE_LIBS)

$(RC_REAL): $(suite_objs)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(suite_objs) $(LDFLAGS_ALL) -lrdmacm -libverbs -lmlx5 $(SUITE_LIBS)

# The runner checked on a list of its own (pass, fail, skip, crash, hang).
SELFTEST_OBJ := $(BUILD)/conformance/selftest
SELFTEST_CFLAGS := -Iconformance/selftest -Iconformance/include
selftest_objs = $(SELFTEST_OBJ)/runner.o $(SELFTEST_OBJ)/report.o \
                $(SELFTEST_OBJ)/backend.o $(SELFTEST_OBJ)/registry.o \
                $(SELFTEST_OBJ)/selftest.o
$(SELFTEST_OBJ)/%.o: conformance/%.c $(STAMP)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) $(SELFTEST_CFLAGS) -MMD -MP -c $< -o $@
$(SELFTEST_OBJ)/%.o: conformance/selftest/%.c $(STAMP)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) $(SELFTEST_CFLAGS) -MMD -MP -c $< -o $@
RC_SELFTEST := $(BUILD)/conformance/runner-selftest
$(RC_SELFTEST): $(selftest_objs)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS_ALL) $(SUITE_LIBS)

suite: $(RC_MOCK) $(RC_REAL)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

.PHONY: all mock suite FORCE
all: mock suite
.DEFAULT_GOAL := all

# ---------------------------------------------------------------- examples
# Built against the system's rdma-core only: they are the drop-in test.
EXAMPLES := $(BUILD)/examples/port_probe $(BUILD)/examples/qp_probe
EXAMPLE_LIBS_port_probe := -lrdmacm
EXAMPLE_LIBS_qp_probe   := -lrdmacm -libverbs -lmlx5
$(BUILD)/examples/%: examples/%.c $(STAMP)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) $(EXAMPLE_LIBS_$*)

examples: $(EXAMPLES)
all: examples $(RC_SELFTEST)

# ---------------------------------------------------------------- run, check
RESULTS := $(BUILD)/results

# The main job: the suite on the mock and on the system's rdma-core, then
# the clause matrix of both.
run: all
	@mkdir -p $(RESULTS)
	@rc=0; \
	$(RC_MOCK) --timeout $(TIMEOUT) --tap $(RESULTS)/mock.tap --junit $(RESULTS)/mock.xml \
	  --results $(RESULTS)/mock.tsv || rc=1; \
	$(RC_REAL) --timeout $(TIMEOUT) --tap $(RESULTS)/real.tap --junit $(RESULTS)/real.xml \
	  --results $(RESULTS)/real.tsv || rc=1; \
	$(RC_MOCK) --matrix $(RESULTS)/matrix.md --column mock=$(RESULTS)/mock.tsv \
	  --column real=$(RESULTS)/real.tsv || rc=1; \
	echo; cat $(RESULTS)/matrix.md; \
	echo; echo "results: $(RESULTS)/{mock,real}.{tap,xml,tsv}, matrix: $(RESULTS)/matrix.md"; \
	exit $$rc

check: all
	@TIMEOUT=$(TIMEOUT) bash ci/check.sh $(BUILD)

deps:
	@bash ci/deps.sh ci/packages.txt

clean:
	rm -rf $(BUILD)

include coverage/coverage.mk

.PHONY: examples run check deps clean

# Every fault point the mock's sources declare, as rdmamock/<library>/<call>.
fault-points:
	@for f in mock/*.c; do \
	  lib=$$(sed -n 's/^#define LIB "\(.*\)"/\1/p' $$f); \
	  grep -oE 'FAULT_(MINUS1|NULL|POSITIVE)\(LIB, "[a-z0-9_]+"\)|FAULT_NAME\(LIB, "[a-z0-9_]+"\)' $$f | \
	    sed -E "s|.*\"([a-z0-9_]+)\".*|rdmamock/$$lib/\1|"; \
	done | sort -u

.PHONY: fault-points
