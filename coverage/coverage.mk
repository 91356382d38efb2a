# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make coverage: the mock built with gcov in a tree of its own (the normal
# build is left alone), the suite and the drop-in example run on it, and
# lcov/genhtml's report of mock/ in build/coverage/html; then the examples under
# rdmamock-sweep, from zero, in build/coverage/sweep-html; the suite runs
# again on the mock as each recorded device (RDMAMOCK_PROFILE). It fails when the
# suite's figures for mock/ fall below the floor in coverage/floor.

COV_DIR  := build/coverage
COV_TREE := $(COV_DIR)/tree
LCOV     := lcov --quiet --config-file coverage/lcovrc

coverage:
	@$(MAKE) --no-print-directory BUILD=$(COV_TREE) COVERAGE=1 all
	@find $(COV_TREE) -name '*.gcda' -delete
	@echo "coverage: running the suite on the instrumented mock"
	@$(COV_TREE)/conformance/rdmacheck-mock --timeout $(TIMEOUT) >$(COV_DIR)/suite.log 2>&1 || \
	  { tail -n 30 $(COV_DIR)/suite.log; echo "coverage: the suite failed" >&2; exit 1; }
	@tail -n 1 $(COV_DIR)/suite.log
	@# The suite again on the mock as each recorded device
	@# (fixtures/devices/recorded: rxe44, rxe65, siw44), so that the
	@# replay's paths count, iWARP's among them.
	@for d in rxe44 rxe65 siw44; do p=$(CURDIR)/fixtures/devices/recorded/$$d/recorded; \
	  RDMAMOCK_PROFILE=$$p $(COV_TREE)/conformance/rdmacheck-mock -j 2 --timeout $(TIMEOUT) \
	    --profile $$p >$(COV_DIR)/replay-$$d.log 2>&1 || \
	  { tail -n 30 $(COV_DIR)/replay-$$d.log; echo "coverage: the suite failed on the replayed $$d" >&2; exit 1; }; \
	  echo "coverage: as the replayed $$d: $$(tail -n 1 $(COV_DIR)/replay-$$d.log)"; done
	@LD_LIBRARY_PATH=$(COV_TREE)/mock/lib $(COV_TREE)/examples/port_probe >$(COV_DIR)/example.log 2>&1 || \
	  { cat $(COV_DIR)/example.log; exit 1; }
	@# lcov 1.16 under Debian 12's perl warns of redefined subroutines: noise.
	@$(LCOV) --capture --directory $(COV_TREE)/mock/obj --base-directory $(CURDIR) \
	  --output-file $(COV_DIR)/all.info 2>&1 | { grep -v '^Subroutine .* redefined' || true; }
	@$(LCOV) --extract $(COV_DIR)/all.info '$(CURDIR)/mock/*' --output-file $(COV_DIR)/mock.info
	@genhtml --quiet --config-file coverage/lcovrc --title "rdmacheck: mock/" \
	  --output-directory $(COV_DIR)/html $(COV_DIR)/mock.info
	@echo "coverage: HTML report in $(COV_DIR)/html/index.html"
	@lcov --config-file coverage/lcovrc --summary $(COV_DIR)/mock.info 2>&1 | \
	  sed -n 's/^ *\(lines\|functions\|branches\)/coverage of mock\/: \1/p'
	@bash coverage/floor.sh $(COV_DIR)/mock.info
	@# The second report: our examples under rdmamock-sweep, from zero, so
	@# that the error paths only faults reach show (examples/ and mock/).
	@find $(COV_TREE) -name '*.gcda' -delete
	@echo "coverage: the examples under rdmamock-sweep"
	@bash coverage/sweep.sh $(COV_TREE) >$(COV_DIR)/sweep.log 2>&1 || \
	  { tail -n 30 $(COV_DIR)/sweep.log; echo "coverage: the sweep failed" >&2; exit 1; }
	@$(LCOV) --capture --directory $(COV_TREE)/mock/obj --directory $(COV_TREE)/examples \
	  --base-directory $(CURDIR) --output-file $(COV_DIR)/sweep-all.info 2>&1 | \
	  { grep -v '^Subroutine .* redefined' || true; }
	@$(LCOV) --extract $(COV_DIR)/sweep-all.info '$(CURDIR)/examples/*' '$(CURDIR)/mock/*' \
	  --output-file $(COV_DIR)/sweep.info
	@genhtml --quiet --config-file coverage/lcovrc --title "rdmacheck: the examples under rdmamock-sweep" \
	  --output-directory $(COV_DIR)/sweep-html $(COV_DIR)/sweep.info
	@echo "coverage: HTML report of the sweep in $(COV_DIR)/sweep-html/index.html"
	@$(LCOV) --extract $(COV_DIR)/sweep.info '$(CURDIR)/examples/*' --output-file $(COV_DIR)/sweep-examples.info
	@lcov --config-file coverage/lcovrc --summary $(COV_DIR)/sweep-examples.info 2>&1 | \
	  sed -n 's/^ *\(lines\|functions\|branches\)/coverage of examples\/ under the sweep: \1/p'

.PHONY: coverage
