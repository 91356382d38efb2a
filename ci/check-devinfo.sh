#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Debian's ibv_devices and ibv_devinfo -v, unmodified, on the mock: every
# device of the topology with its port and every GID the mock's table holds,
# nothing reported as not implemented.
#   ci/check-devinfo.sh MOCK_LIB_DIR
set -euo pipefail
lib=$1
fail() { echo "check-devinfo: $*" >&2; exit 1; }
# A sanitizer build of the mock needs its runtime first in a program not
# built with it; the program's own leaks are not the mock's to report.
preload=() asan=$(sh ci/sanitizer-runtime.sh "$lib")
[ -z "$asan" ] || preload=("LD_PRELOAD=$asan" "ASAN_OPTIONS=detect_leaks=0")
run() { timeout 30 env "${preload[@]}" LD_LIBRARY_PATH="$lib" "$@"; }

devices=$(run ibv_devices 2>&1) || fail "ibv_devices failed: $devices"
info=$(run ibv_devinfo -v 2>&1) || fail "ibv_devinfo -v failed: $info"
! grep -q 'not implemented' <<<"$devices$info" || fail "a call it made is not implemented: $(grep 'not implemented' <<<"$info")"

# The default topology: mlx5_0 on 127.0.0.1 and ::1, rxe0 on 127.0.0.2.
declare -A gids=([mlx5_0]='::ffff:127.0.0.1 ::1' [rxe0]='::ffff:127.0.0.2')
for dev in "${!gids[@]}"; do
	grep -q "^[[:space:]]*$dev[[:space:]]" <<<"$devices" || fail "ibv_devices does not list $dev"
	section=$(awk -v d="$dev" '/^hca_id:/ { on = ($2 == d) } on' <<<"$info")
	[ -n "$section" ] || fail "ibv_devinfo -v prints no hca_id $dev"
	grep -q 'PORT_ACTIVE' <<<"$section" || fail "$dev: port 1 is not PORT_ACTIVE"
	grep -q 'link_layer:[[:space:]]*Ethernet' <<<"$section" || fail "$dev: link layer is not Ethernet"
	for gid in ${gids[$dev]}; do
		grep -qE "GID\[ *[0-9]+\]:[[:space:]]*$gid, RoCE v2" <<<"$section" ||
			fail "$dev: no RoCE v2 GID $gid in ibv_devinfo -v"
	done
	echo "check-devinfo: $dev: $(grep -c 'GID\[' <<<"$section") GIDs, $(grep -c ':' <<<"$section") lines"
done
