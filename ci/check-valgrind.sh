#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make check-valgrind: the suite's addrinfo tests under valgrind, children
# traced: nothing the suite resolves is leaked, and no invalid access. A
# sanitizer build has its own checker, so it skips.
#   ci/check-valgrind.sh BUILD_DIR
set -euo pipefail
# A test's child (rc_run_child) gets 60 s, not 10: under valgrind its exit
# alone, the leak check of the fabric's mappings, takes seconds, and with
# two tests at once it overran 10 s (a dry run of CI, measured).
build=$1
out=$build/check
mkdir -p "$out"
if [ -n "${SANITIZE:-}" ]; then
	echo "check-valgrind: skipped: a sanitizer build has its own leak checker"
	exit 0
fi
RDMACHECK_CHILD_TIMEOUT=60 valgrind -q --trace-children=yes --leak-check=full --errors-for-leak-kinds=definite \
	--error-exitcode=99 "$build/conformance/rdmacheck-mock" -j "${JOBS:-1}" --timeout 120 -t '*addrinfo*' \
	>"$out/valgrind.log" 2>&1 ||
	{ cat "$out/valgrind.log"; echo "check-valgrind: valgrind found a leak or an error" >&2; exit 1; }
tail -n 1 "$out/valgrind.log"
