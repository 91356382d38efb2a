#!/usr/bin/env bash
# rdmamock-sweep, and make sweep's rule on our own examples: under every
# fault each can meet (the first hit of each point, once and from then
# on), nothing crashes, hangs, draws a sanitizer report or leaks (the
# mock's ledger, strict in the sweep's runs). And the sweep
# finds a known upstream bug: rping -c hangs when rdma_connect fails.
#   ci/check-sweep.sh BUILD_DIR [MAX_NTH]
set -euo pipefail
build=$1 max_nth=${2:-1}
sweep=$build/bin/rdmamock-sweep
fail() { echo "check-sweep: $*" >&2; exit 1; }
. ci/mock-env.sh "$build"

for e in port_probe qp_probe addrinfo_probe; do
	"$sweep" --timeout 30 --max-nth "$max_nth" --tap "$build/sweep-$e.tap" -- "$build/examples/$e" ||
		fail "$e: findings under faults (above)"
done

# The upstream bug: found, and with the known-findings file, known.
export RUN=$PWD/$build/bin/rdmamock-run
out=$("$sweep" --timeout 30 --points 'rdmamock/rdmacm/rdma_connect' --max-nth 1 -- sh ci/sweep/rping-pair.sh) &&
	{ printf '%s\n' "$out"; fail "rping: the hang after a failed rdma_connect was not found"; }
grep -q "FINDING  rdmamock/rdmacm/rdma_connect nth=1 .*HANG" <<<"$out" ||
	{ printf '%s\n' "$out"; fail "rping: no HANG finding for rdma_connect nth=1"; }
"$sweep" --timeout 30 --points 'rdmamock/rdmacm/rdma_connect' --max-nth 1 --known ci/sweep/known.txt \
	-- sh ci/sweep/rping-pair.sh >/dev/null || fail "rping: the known findings still fail the sweep"
echo "check-sweep: the examples meet every fault without a crash, hang, leak or sanitizer report; rping's hang after a failed rdma_connect is found, and known"
