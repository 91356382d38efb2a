#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The suite's two-host mode on the mock: `rdmacheck-mock --serve` in one
# process answers the connections of the suite in another, on a fabric of
# this run's own. The peer is on rxe0 (127.0.0.2, fd00::2), the suite on
# mlx5_0 (127.0.0.1, fd00::1); one fabric is one host, so the peer listens
# on a port of its own (RDMACHECK_PEER_PORT). Writes the suite's TAP, JUnit
# and results (the matrix's mock-2proc column) and the peer's log.
#   ci/check-2proc.sh BUILD_DIR OUT_DIR [RUNNER_ARGS...]
set -euo pipefail
build=$1 out=$2
shift 2
mock=$build/conformance/rdmacheck-mock
mkdir -p "$out"
export RDMAMOCK_FABRIC=2proc-$$
export RDMAMOCK_TOPOLOGY='mlx5_0=mlx5:127.0.0.1/8,fd00::1/64,192.0.2.1/24;rxe0=generic:127.0.0.2/8,fd00::2/64'
peer_port=7571
# Made before the peer starts, so that the wait below never reads a file
# its shell has not yet opened.
: >"$out/serve.log"

RDMACHECK_ADDR=127.0.0.2 RDMACHECK_ADDR6=fd00::2 RDMACHECK_PORT=$peer_port \
	"$mock" --serve >"$out/serve.log" 2>&1 &
peer=$!
stop_peer() { kill "$peer" 2>/dev/null || true; }
trap stop_peer EXIT
for _ in $(seq 50); do
	[ "$(grep -c listening "$out/serve.log")" -ge 2 ] && break
	kill -0 "$peer" 2>/dev/null || break
	sleep 0.1
done
if [ "$(grep -c listening "$out/serve.log")" -lt 2 ]; then
	echo "2proc: the peer (rdmacheck-mock --serve) is not listening on both addresses:" >&2
	tail -n 5 "$out/serve.log" >&2
	exit 1
fi

rc=0
RDMACHECK_ADDR=127.0.0.1 RDMACHECK_ADDR6=fd00::1 RDMACHECK_PEER=127.0.0.2 RDMACHECK_PEER6=fd00::2 \
	RDMACHECK_PEER_PORT=$peer_port RDMACHECK_UNANSWERED=192.0.2.99 \
	"$mock" --timeout "${TIMEOUT:-30}" --profile fixtures/devices/mock --tap "$out/mock-2proc.tap" \
	--junit "$out/mock-2proc.xml" --results "$out/mock-2proc.tsv" "$@" >"$out/mock-2proc.log" 2>&1 || rc=$?
tail -n 2 "$out/mock-2proc.log"
kill "$peer"
wait "$peer" || { echo "2proc: the peer exited with $? (see $out/serve.log)" >&2; rc=1; }
trap - EXIT
echo "2proc: the peer logged $(grep -c . "$out/serve.log") lines ($out/serve.log)"
if [ $rc -ne 0 ]; then
	grep -E '^(FAIL|not ok)' "$out/mock-2proc.log" >&2 || true
	echo "2proc: the suite against a peer process failed (rc $rc; $out/mock-2proc.log)" >&2
fi
exit $rc
