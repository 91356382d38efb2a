#!/usr/bin/env bash
# make sweep's rule on the conformance suite: each test, run alone and
# inline (rdmacheck-mock --inline, so that a crash is the run's), through
# the first hit of every call it makes, failed once with the call's usual
# errno and failed from then on (every errno of the tables is for programs:
# make sweep's examples; the suite's tests would only fail alike). Nothing
# may crash, hang or draw a sanitizer report; a test that fails is what it
# should do. ci/sweep/suite-known.txt lists what a test does under a fault
# as upstream would (lines TEST POINT nth=N[+]).
#   ci/sweep/suite.sh BUILD_DIR [TEST_GLOB]
set -euo pipefail
build=$1 glob=${2:-*}
runner=$build/conformance/rdmacheck-mock
sweep=$build/bin/rdmamock-sweep
out=$build/sweep-suite
. ci/mock-env.sh "$build"
rm -rf "$out"
mkdir -p "$out"
n=0 bad=0 runs=0
start=$(date +%s)
while read -r t _; do
	n=$((n + 1))
	# This test's lines of the known findings, without the test's name.
	awk -v t="$t" '$1 == t { $1 = ""; sub(/^ /, ""); print }' ci/sweep/suite-known.txt >"$out/$t.known"
	if ! "$sweep" --calls --one-errno --max-nth 1 --timeout 20 --known "$out/$t.known" --tap "$out/$t.tap" \
		-- "$runner" --inline -t "$t" >"$out/$t.log" 2>&1; then
		bad=$((bad + 1))
		echo "sweep-suite: $t:"
		grep -E "FINDING|rdmamock-sweep:|output:|rdmamock-run" "$out/$t.log" | sed 's/^/    /' | head -n 20
	fi
	runs=$((runs + $(sed -n 's/^rdmamock-sweep: \([0-9]*\) runs, .*/\1/p' "$out/$t.log" | tail -n 1 || echo 0)))
done < <("$runner" --list -t "$glob")
echo "sweep-suite: $n tests, $runs runs in $(($(date +%s) - start)) s; $bad with findings (TAP and logs in $out)"
[ "$bad" -eq 0 ]
