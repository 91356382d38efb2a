#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmamock-sweep, and make sweep's rule on our own examples: under every
# fault each can meet (the first hit of each point, once and from then
# on), nothing crashes, hangs, draws a sanitizer report or leaks (the
# mock's ledger, strict in the sweep's runs). And the sweep finds known
# upstream bugs: rping -c hangs when rdma_connect fails; cmtime's client
# crashes when rdma_create_id fails and hangs when rdma_get_cm_event does.
# JUnit: rping's sweep is written as XML and checked.
#   ci/check-sweep.sh BUILD_DIR [MAX_NTH]
set -euo pipefail
build=$1 max_nth=${2:-1}
sweep=$build/bin/rdmamock-sweep
fail() { echo "check-sweep: $*" >&2; exit 1; }
# A run's testcase in a JUnit report: its line and the next (failure, skipped).
testcase() { grep -A1 " name=\"$2\" " "$1" || true; }
. ci/mock-env.sh "$build"

for e in port_probe qp_probe addrinfo_probe; do
	"$sweep" --jobs 4 --timeout 30 --max-nth "$max_nth" --tap "$build/sweep-$e.tap" -- "$build/examples/$e" ||
		fail "$e: findings under faults (above)"
done

# The upstream bug: found, and with the known-findings file, known.
export RUN=$PWD/$build/bin/rdmamock-run
junit=$build/sweep-rping.xml
out=$("$sweep" --timeout 10 --one-errno --points 'rdmamock/rdmacm/rdma_connect' --max-nth 1 --junit "$junit" \
	-- sh ci/sweep/rping-pair.sh) &&
	{ printf '%s\n' "$out"; fail "rping: the hang after a failed rdma_connect was not found"; }
grep -q "FINDING  rdmamock/rdmacm/rdma_connect nth=1 .*HANG" <<<"$out" ||
	{ printf '%s\n' "$out"; fail "rping: no HANG finding for rdma_connect nth=1"; }
# The JUnit report: well-formed, and the finding in it as a failure.
xmllint --noout "$junit" || fail "rping: $junit is not well-formed XML"
tc=$(testcase "$junit" 'rdmamock/rdmacm/rdma_connect nth=1')
grep -q '<failure type="HANG" message="HANG (killed after 10 s)">rdmamock-run --fault &apos;rdmamock/rdmacm/rdma_connect nth=1&apos;' <<<"$tc" ||
	fail "rping: $junit has no HANG failure for rdma_connect nth=1"
"$sweep" --timeout 10 --one-errno --points 'rdmamock/rdmacm/rdma_connect' --max-nth 1 --known ci/sweep/known.txt \
	--junit "$junit" -- sh ci/sweep/rping-pair.sh >/dev/null || fail "rping: the known findings still fail the sweep"
tc=$(testcase "$junit" 'rdmamock/rdmacm/rdma_connect nth=1')
grep -q '<skipped message="known: HANG' <<<"$tc" ||
	fail "rping: $junit does not report the known HANG as skipped"

# cmtime's (rdmacm-utils 44): its client crashes when rdma_create_id fails
# (nth=3, the client's second id: the ledger refuses its freed id, SIGABRT) and hangs when
# rdma_get_cm_event fails (nth=2, the client's first); ci/sweep/known.txt.
# A normal pair takes a tenth of a second: 10 s judges a hang cheaply.
cm_create='rdmamock/rdmacm/rdma_create_id' cm_event='rdmamock/rdmacm/rdma_get_cm_event'
# The mock's ledger refuses the client's freed id before anything reads it
# ("rdma_resolve_addr: id ... is not a live id"), and aborts: in a sanitizer
# build too, as nothing dereferences it first.
crash='CRASH (Aborted)'
out=$("$sweep" --timeout 10 --one-errno --points "$cm_create" --max-nth 3 -- sh ci/sweep/cmtime-pair.sh) &&
	{ printf '%s\n' "$out"; fail "cmtime: the crash after a failed rdma_create_id was not found"; }
grep -q "FINDING  $cm_create nth=3 .*$crash" <<<"$out" ||
	{ printf '%s\n' "$out"; fail "cmtime: no $crash finding for rdma_create_id nth=3"; }
out=$("$sweep" --timeout 10 --one-errno --points "$cm_event" --max-nth 2 -- sh ci/sweep/cmtime-pair.sh) &&
	{ printf '%s\n' "$out"; fail "cmtime: the hang after a failed rdma_get_cm_event was not found"; }
grep -q "FINDING  $cm_event nth=2 .*HANG" <<<"$out" ||
	{ printf '%s\n' "$out"; fail "cmtime: no HANG finding for rdma_get_cm_event nth=2"; }
"$sweep" --timeout 10 --one-errno --points "$cm_create" --max-nth 3 --known ci/sweep/known.txt -- sh ci/sweep/cmtime-pair.sh \
	>/dev/null || fail "cmtime: the known findings for rdma_create_id still fail the sweep"
"$sweep" --timeout 10 --one-errno --points "$cm_event" --max-nth 2 --known ci/sweep/known.txt -- sh ci/sweep/cmtime-pair.sh \
	>/dev/null || fail "cmtime: the known findings for rdma_get_cm_event still fail the sweep"
echo "check-sweep: the examples meet every fault without a crash, hang, leak or sanitizer report; rping's hang after a failed rdma_connect is found, and known; so are cmtime's crash after a failed rdma_create_id and hang after a failed rdma_get_cm_event"
