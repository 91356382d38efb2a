# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make check-rxe: the real backend (rdmacheck-real, the examples) on the
# kernel's soft-RoCE driver (rdma_rxe) in qemu guests, for two stacks:
#   debian12  Debian 12's kernel 6.1 + the host's rdma-core 44   (rxe44)
#   sid       Debian sid's kernel 7.x + sid's rdma-core 65        (rxe65)
# each as a single host (rxe0 on dummy0) and as two hosts (a peer running
# rdmacheck-real --serve), then the clause matrix of the mock and every real
# run. Downloads are cached in $(RDMACHECK_CACHE) (default ~/.cache/rdmacheck).
# Included by the Makefile. See ci/rxe/README.md.
#
#   make check-rxe                  both stacks, the matrix, the verdict
#   make rxe-debian12 | rxe-sid     one stack, and its matrix
# Settings (environment or make variables): RXE_GUEST_TIMEOUT (900 s per
# guest), RXE_TEST_TIMEOUT (60 s per test), RXE_SUITE_TIMEOUT (300 s per run),
# RXE_ACCEL=kvm|tcg, RXE_TESTS='glob ...' (a subset), RXE_REFRESH_HOURS (24),
# RXE_TWOHOST=netns|guests, RXE_PHASE=all|guests|verdict (the guests only, or
# the verdict from the results they left).

RXE_OUT := $(BUILD)/rxe
# Appended to the --matrix command. By default --compare mock: a clause that
# passes on the mock and fails on rxe (or the reverse) fails the run;
# RXE_MATRIX_FLAGS= turns that off.
RXE_MATRIX_FLAGS ?= --compare mock
RXE_DEPS := ci/packages-vm.txt

rxe_run = @RXE_MATRIX_FLAGS='$(RXE_MATRIX_FLAGS)' bash ci/rxe/check.sh $(BUILD) $(1)

rxe-deps:
	@bash ci/deps.sh $(RXE_DEPS)

check-rxe: rxe-deps all
	$(call rxe_run,debian12 sid)

rxe-debian12: rxe-deps all
	$(call rxe_run,debian12)

rxe-sid: rxe-deps all
	$(call rxe_run,sid)

# soft-iWARP: siw.ko built for Debian 12's kernel from its source package
# (ci/rxe/siw.sh), the suite on siw0 as one host and two (siw44, siw44-2host).
check-siw: rxe-deps all
	$(call rxe_run,siw-debian12)

.PHONY: check-rxe rxe-deps rxe-debian12 rxe-sid check-siw
