#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmamock-run on unmodified programs, with no LD_LIBRARY_PATH from us: a
# fault given with --fault reaches the program, a bad one is named before
# anything runs, the exit status passes through, what the program leaves
# behind is listed (the ledger is on), and a server and a client
# started by one script meet on the run's own fabric, where a fault in the
# fabric rejects the client.
#   ci/check-run.sh BUILD_DIR
set -euo pipefail
build=$1
run=$build/bin/rdmamock-run
fail() { echo "check-run: $*" >&2; exit 1; }
. ci/mock-env.sh "$build"

# expect STATUS REGEX CMD...: CMD exits STATUS and prints REGEX.
expect() {
	local want=$1 re=$2 status=0 out
	shift 2
	out=$(timeout 30 "$@" 2>&1) || status=$?
	[ "$status" = "$want" ] || { printf '%s\n' "$out"; fail "$*: exit $status, not $want"; }
	grep -Eq -- "$re" <<<"$out" || { printf '%s\n' "$out"; fail "$*: output lacks /$re/"; }
}

expect 2 'rdma_connect: Connection refused' \
	"$run" --fault 'rdmamock/rdmacm/rdma_connect errno=ECONNREFUSED' -- "$build/examples/port_probe"
# The ledger is on: port_probe gives up after the refusal and leaves its ids.
expect 2 'rdmamock: leak: id 0x[0-9a-f]+ \(port [0-9]+\) created by rdma_create_id, never destroyed' \
	"$run" --fault 'rdmamock/rdmacm/rdma_connect errno=ECONNREFUSED' -- "$build/examples/port_probe"
expect 2 "--fault: errno=ECONREFUSED: not an errno" \
	"$run" --fault 'rdmamock/rdmacm/rdma_connect errno=ECONREFUSED' -- sh -c 'echo ran'
expect 7 '^run-[0-9]+ .*/mock/lib$' "$run" sh -c 'echo "$RDMAMOCK_FABRIC $LD_LIBRARY_PATH"; exit 7'
expect 127 'no-such-program: No such file' "$run" no-such-program
expect 0 'mlx5_0' "$run" ibv_devices

# One script, two processes: the listener never hears of the request.
cat >"$build/check-run-pair.sh" <<'PAIR'
rping -s -a 127.0.0.1 -p 7611 -C 1 >/dev/null 2>&1 &
sleep 1
rping -c -a 127.0.0.1 -p 7611 -C 1 -v
status=$?
kill $! 2>/dev/null
exit $status
PAIR
expect 255 'RDMA_CM_EVENT_REJECTED, error 10' \
	"$run" --fault 'rdmamock/rdmacm/event/rejected status=10 port=7611' -- sh "$build/check-run-pair.sh"
echo "check-run: rdmamock-run: faults reach unmodified programs, bad ones are named, statuses pass through, leaks are listed, a script's processes share its fabric"
