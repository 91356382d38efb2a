#!/usr/bin/env bash
# The drop-in promise: a program built against the system's rdma-core, and
# nothing else, runs unmodified on the mock.
#   ci/check-dropin.sh PROGRAM MOCK_LIB_DIR
# PROGRAM must have been linked with -lrdmacm against the system library.
set -euo pipefail
prog=$1 lib=$2
fail() { echo "check-dropin: $*" >&2; exit 1; }

[ -x "$prog" ] || fail "$prog is not an executable"
readelf -d "$prog" | grep -q 'NEEDED.*\[librdmacm\.so\.1\]' ||
	fail "$prog does not need librdmacm.so.1"
! readelf -d "$prog" | grep -qE 'R(UN)?PATH' ||
	fail "$prog carries a run path; the mock must come from LD_LIBRARY_PATH alone"
# Its references carry rdma-core's symbol versions, which the mock must meet.
objdump -T "$prog" | grep -qE 'UND.*RDMACM_1\.[0-9]+\)? +rdma_get_dst_port$' ||
	fail "$prog does not reference rdma_get_dst_port@RDMACM_1.x"

resolved=$(LD_LIBRARY_PATH="$lib" ldd "$prog" | awk '$1 == "librdmacm.so.1" { print $3 }')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$lib/librdmacm.so.1")" ] ||
	fail "with LD_LIBRARY_PATH=$lib, librdmacm.so.1 resolves to '$resolved'"

out=$(LD_LIBRARY_PATH="$lib" timeout 30 "$prog" 2>&1) || {
	printf '%s\n' "$out"
	fail "$prog failed on the mock"
}
printf '%s\n' "$out"
grep -q '^PASS' <<<"$out" || fail "$prog printed no PASS line"
echo "check-dropin: $(basename "$prog") built against the system's librdmacm ran unmodified on the mock"
