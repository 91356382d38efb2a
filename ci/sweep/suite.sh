#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make sweep's rule on the conformance suite: each test, run alone and
# inline (rdmacheck-mock --inline, so that a crash is the run's), through
# the first hit of every call it makes, failed once with the call's usual
# errno (every errno of the tables, and failing from then on, are for
# programs, make sweep's examples: a test stops at its first failed call).
# Nothing may crash, hang, leak or draw a sanitizer report; a test that
# fails is what it should do. Three tests at a time, six runs each: they
# mostly wait. ci/sweep/suite-known.txt lists what a test does under a
# fault as upstream would (lines TEST POINT nth=N[+], or TEST (no fault)),
# and the tests not swept at all (TEST *).
#   ci/sweep/suite.sh BUILD_DIR [TEST_GLOB]
set -euo pipefail
build=$1 glob=${2:-*}
runner=$build/conformance/rdmacheck-mock
sweep=$build/bin/rdmamock-sweep
out=$build/sweep-suite

# One test's sweep; its report in $out/TEST.log, a line in $out/TEST.bad
# when it has findings.
sweep_one() {
	local t=$1
	# This test's lines of the known findings, without the test's name.
	awk -v t="$t" '$1 == t { $1 = ""; sub(/^ /, ""); print }' ci/sweep/suite-known.txt >"$out/$t.known"
	local rc=0 try
	# "TEST *": not swept at all (the file says why).
	if grep -qx '\*' "$out/$t.known"; then
		echo "rdmamock-sweep: not swept (ci/sweep/suite-known.txt)" >"$out/$t.log"
		return 0
	fi
	for try in 1 2; do
		rc=0
		"$sweep" --jobs 6 --calls --one-errno --once --max-nth 1 --timeout 15 --known "$out/$t.known" \
			--tap "$out/$t.tap" -- "$runner" --inline -t "$t" >"$out/$t.log" 2>&1 || rc=$?
		# 2: the test failed with no fault at all, which a timing-bound
		# test may under this load; once more, and the first is kept.
		[ "$rc" -eq 2 ] && [ "$try" -eq 1 ] || break
		mv "$out/$t.log" "$out/$t.first-try"
	done
	[ "$rc" -eq 0 ] || echo "$t" >"$out/$t.bad"
}
if [ "$glob" = --one ]; then
	sweep_one "$3"
	exit 0
fi

. ci/mock-env.sh "$build"
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
# Three tests at a time, each with six runs at once: the runs mostly wait.
"$runner" --list -t "$glob" | awk '{ print $1 }' | xargs -P 3 -n 1 bash "$0" "$build" --one
n=0 bad=0 runs=0
for log in "$out"/*.log; do
	t=$(basename "$log" .log)
	n=$((n + 1))
	r=$(sed -n 's/^rdmamock-sweep: \([0-9]*\) runs, .*/\1/p' "$log" | tail -n 1)
	runs=$((runs + ${r:-0}))
	[ -e "$out/$t.bad" ] || continue
	bad=$((bad + 1))
	echo "sweep-suite: $t:"
	grep -E "FINDING|rdmamock-sweep:|output:|rdmamock-run" "$log" | sed 's/^/    /' | head -n 20
done
echo "sweep-suite: $n tests, $runs runs in $(($(date +%s) - start)) s; $bad with findings (TAP and logs in $out)"
[ "$bad" -eq 0 ]
