#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Fault points reach unmodified programs through fiu-run: fail rdma_connect
# in port_probe with ECONNREFUSED and expect the program to report exactly
# that call and errno.
#   ci/check-faults.sh PROGRAM MOCK_LIB_DIR
set -euo pipefail
prog=$1 lib=$2
fail() { echo "check-faults: $*" >&2; exit 1; }

status=0
# For a sanitizer build: fiu-run preloads its library ahead of the ASan
# runtime, and the program exits at the failed call without freeing.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
out=$(LD_LIBRARY_PATH="$lib" timeout 30 fiu-run \
	-c "enable name=rdmamock/rdmacm/rdma_connect,failinfo=111" "$prog" 2>&1) || status=$?
[ "$status" -eq 2 ] || { printf '%s\n' "$out"; fail "expected exit 2 from $prog, got $status"; }
grep -q 'rdma_connect: Connection refused' <<<"$out" ||
	{ printf '%s\n' "$out"; fail "$prog did not report rdma_connect failing with ECONNREFUSED"; }
echo "check-faults: fiu-run failed rdma_connect in an unmodified $(basename "$prog") with ECONNREFUSED (111)"
