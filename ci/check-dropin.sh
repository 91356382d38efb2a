#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The drop-in promise: programs built against the system's rdma-core, and
# nothing else, run unmodified on the mock.
#   ci/check-dropin.sh MOCK_LIB_DIR PROGRAM...
# Each PROGRAM must have been linked against the system's libraries.
set -euo pipefail
lib=$1
shift
fail() { echo "check-dropin: $*" >&2; exit 1; }

for prog in "$@"; do
	name=$(basename "$prog")
	[ -x "$prog" ] || fail "$prog is not an executable"
	# A run path may name a sanitizer runtime's folder (a clang sanitizer
	# build), never one holding rdma-core: the mock comes from
	# LD_LIBRARY_PATH alone.
	for dir in $(readelf -d "$prog" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p' | tr ':' ' '); do
		for so in librdmacm.so.1 libibverbs.so.1 libmlx5.so.1; do
			[ ! -e "$dir/$so" ] || fail "$name's run path holds $dir/$so; the mock must come from LD_LIBRARY_PATH alone"
		done
	done
	needed=$(readelf -d "$prog" | sed -n 's/.*NEEDED.*\[\(lib\(rdmacm\|ibverbs\|mlx5\)\.so\.1\)\]/\1/p')
	[ -n "$needed" ] || fail "$name needs none of librdmacm, libibverbs, libmlx5"
	# Its references carry rdma-core's symbol versions, which the mock must meet.
	grep -qE 'UND.*\((RDMACM|IBVERBS|MLX5)_1\.[0-9]+\)' <<<"$(objdump -T "$prog")" ||
		fail "$name has no versioned rdma-core references"
	for so in $needed; do
		resolved=$(LD_LIBRARY_PATH="$lib" ldd "$prog" | awk -v so="$so" '$1 == so { print $3 }')
		[ "$(readlink -f "$resolved")" = "$(readlink -f "$lib/$so")" ] ||
			fail "with LD_LIBRARY_PATH=$lib, $so resolves to '$resolved' for $name"
	done
	out=$(LD_LIBRARY_PATH="$lib" timeout 30 "$prog" 2>&1) || {
		printf '%s\n' "$out"
		fail "$name failed on the mock"
	}
	printf '%s\n' "$out"
	grep -q '^PASS' <<<"$out" || fail "$name printed no PASS line"
	echo "check-dropin: $name, built against the system's $(echo $needed | tr ' ' ','), ran unmodified on the mock"
done
