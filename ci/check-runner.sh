#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Checks the suite runner on its own selftest list: each test's verdict, the
# exit codes, that prove and xmllint accept the TAP and JUnit it writes, the
# device profile (declared skips, deviations, malformed files) and the
# matrix with --compare.
# usage: ci/check-runner.sh build/conformance/runner-selftest OUTDIR
set -u

bin=${1:?usage: $0 RUNNER_SELFTEST OUTDIR}
out=${2:?usage: $0 RUNNER_SELFTEST OUTDIR}
profiles=$(dirname "$0")/../conformance/runner/selftest/profiles
mkdir -p "$out" || exit 1
unset RDMACHECK_PROFILE # the runs below choose their profile themselves
failures=0

fail() {
	echo "check-runner: FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect_exit CODE DESCRIPTION COMMAND...: output goes to $out/last.log
expect_exit() {
	local want=$1 what=$2 got
	shift 2
	"$@" >"$out/last.log" 2>&1
	got=$?
	[ "$got" = "$want" ] || fail "$what: exit $got, expected $want (see $out/last.log)"
}

# has FILE TEXT...: FILE holds each TEXT (a fixed string)
has() {
	local file=$1 text
	shift
	for text; do
		grep -qF -- "$text" "$file" || fail "$(basename "$file") lacks: $text"
	done
}

# check_verdicts TSV EXPECTED: each "test|verdict|documented|reason start"
# line of EXPECTED against the results file; sets nexpected
check_verdicts() {
	local tsv=$1 name verdict documented reason line got_verdict got_documented got_reason
	nexpected=0
	while IFS='|' read -r name verdict documented reason; do
		[ -n "$name" ] || continue
		nexpected=$((nexpected + 1))
		line=$(awk -F'\t' -v n="$name" '$1 == n' "$tsv")
		[ -n "$line" ] || { fail "$name: missing from $tsv"; continue; }
		IFS=$'\t' read -r _ _ got_verdict got_documented got_reason <<<"$line"
		[ "$got_verdict" = "$verdict" ] ||
			fail "$name: verdict '$got_verdict', expected '$verdict'"
		[ "$got_documented" = "$documented" ] ||
			fail "$name: documented '$got_documented', expected '$documented'"
		case "$got_reason" in
		"$reason"*) ;;
		*) fail "$name: reason '$got_reason', expected it to start '$reason'" ;;
		esac
	done <<<"$2"
	[ "$(grep -vc '^#' "$tsv")" = "$nexpected" ] ||
		fail "$tsv has $(grep -vc '^#' "$tsv") tests, expected $nexpected"
}

# ---- the full run: every test's verdict, documented flag and reason. The
# timeout is for hang__with_child; 6 s leaves the quick tests room where CI
# runs this at nice 10 beside the guests (a 2 s bound timed four of them
# out under clang's ASan there).
expect_exit 1 "selftest run" "$bin" --timeout 6 --tap "$out/selftest.tap" \
	--junit "$out/selftest.xml" --results "$out/selftest.tsv"
cp "$out/last.log" "$out/selftest.log"

# test | verdict | documented | start of the reason
check_verdicts "$out/selftest.tsv" '
assert__equal_passes|pass|-|
assert__unequal_fails|fail|-|0x1 != 0x2 at
skip__with_reason|skip|-|reason with <xml> & chars
skip__not_taken|pass|-|
capability__missing|skip|-|capability: mlx5dv (the selftest device has none)
capability__undeclared|skip|-|capability: infiniband
capability__required|pass|-|
deviation__fails|fail|-|0x1 != 0x2 at
deviation__passes|pass|-|
crash__sigsegv|fail|-|crashed: SIGSEGV
crash__abort|fail|-|crashed: SIGABRT
exit__before_return|fail|-|exited with status 0 before the test finished
hang__with_child|fail|-|timed out after 6 s; last step: forked; now waiting
output__bad_bytes|fail|-|failing on purpose
diverge__documented_held|pass|held|
diverge__documented_not_held|pass|not-held|
run_child__segv_reported|pass|-|
run_child__exit_code_and_message|pass|-|'
nall=$nexpected

head -n1 "$out/selftest.tsv" | grep -qx '# rdmacheck results backend=real' ||
	fail "selftest.tsv: bad first line"
tail -n1 "$out/selftest.log" | grep -qx '8 passed, 7 failed, 3 skipped' ||
	fail "closing line: '$(tail -n1 "$out/selftest.log")'"
grep -qx 'undeclared capability skips: mlx5dv (1 test), infiniband (1 test)' \
	"$out/selftest.log" || fail "selftest.log: no undeclared capability line"

# ---- the reports: prove parses the TAP (the failures are on purpose)
prove -e cat "$out/selftest.tap" >"$out/prove.log" 2>&1
grep -q 'Parse errors' "$out/prove.log" && fail "prove: parse errors (see $out/prove.log)"
grep -q "Failed 7/$nall subtests" "$out/prove.log" ||
	fail "prove did not count 7 of $nall failed (see $out/prove.log)"
xmllint --noout "$out/selftest.xml" 2>"$out/xmllint.log" ||
	fail "xmllint rejects selftest.xml (see $out/xmllint.log)"
grep -q "<testsuite name=\"rdmacheck-real\" tests=\"$nall\" failures=\"7\" errors=\"0\" skipped=\"3\"" \
	"$out/selftest.xml" || fail "selftest.xml: wrong testsuite counts"

# ---- options
expect_exit 1 "--strict turns a capability skip into a failure" \
	"$bin" --strict -t capability__missing --results "$out/strict.tsv"
grep -q $'^capability__missing\tST_CAPABILITY\tfail\t' "$out/strict.tsv" ||
	fail "--strict: capability__missing did not fail"
expect_exit 0 "-t selecting passing tests" "$bin" -t 'assert__equal*' -t 'diverge__*'
grep -qx '3 passed, 0 failed, 0 skipped' "$out/last.log" || fail "-t ran the wrong tests"
# -j where the tests cannot have a fabric each (this binary is on no mock,
# or RDMAMOCK_FABRIC names one): said, and one test at a time.
expect_exit 0 "-j without a fabric for each test" env RDMAMOCK_FABRIC=one "$bin" -j 2 -t 'assert__equal*'
has "$out/last.log" "-j: " "one at a time"
expect_exit 2 "-t matching nothing" "$bin" -t 'no_such_test*'
grep -q "no_such_test\*" "$out/last.log" || fail "-t error does not name the glob"
expect_exit 2 "unknown option" "$bin" --no-such-option
expect_exit 0 "--list" "$bin" --list
[ "$(grep -c ' ST_' "$out/last.log")" = "$nall" ] || fail "--list: wrong lines"

# ---- the matrix, from this run and an edited copy standing for another
sed -e 's/backend=real/backend=mock/' \
	-e 's/^\(diverge__documented_not_held\t[^\t]*\t[^\t]*\t\)not-held/\1held/' \
	"$out/selftest.tsv" >"$out/other.tsv"
expect_exit 0 "--matrix" "$bin" --matrix "$out/matrix.md" \
	--column "real=$out/selftest.tsv" --column "mock=$out/other.tsv"
matrix_has() { has "$out/matrix.md" "$@"; }
matrix_has '| `ST_ASSERT` | selftest_assert | runner selftest | A passing assertion is a pass \| a failing one a failure. | FAIL (1/2) | FAIL (1/2) |'
matrix_has '| pass (1/2, 1 skip) | pass (1/2, 1 skip) |'
matrix_has '| skip: capability: mlx5dv (the selftest device has none) |'
matrix_has '| pass | pass; documented holds → stale divergence | diverges from the documentation: '
matrix_has '| `ST_UNTESTED` | selftest_untested | runner selftest | A clause no test checks shows an empty cell. | — | — |  |'
matrix_has '### `ST_DIVERGE` (selftest_diverge)'
expect_exit 2 "--matrix with a missing results file" \
	"$bin" --matrix - --column "x=$out/no-such.tsv"
grep -q "no-such.tsv" "$out/last.log" || fail "--matrix error does not name the file"
printf '# rdmacheck results backend=real\nt\tNO_SUCH_CLAUSE\tpass\t-\t\n' >"$out/bad.tsv"
expect_exit 2 "--matrix with an unknown clause" \
	"$bin" --matrix - --column "x=$out/bad.tsv"
grep -q NO_SUCH_CLAUSE "$out/last.log" || fail "--matrix error does not name the clause"

# ---- a device profile: declared and undeclared capability skips, a known
# deviation (prove takes its TODO as expected) and a stale one
expect_exit 0 "profile run" "$bin" --profile "$profiles/selftest" \
	-t 'capability__*' -t 'deviation__*' --tap "$out/profile.tap" \
	--junit "$out/profile.xml" --results "$out/profile.tsv"
cp "$out/last.log" "$out/profile.log"
check_verdicts "$out/profile.tsv" '
capability__missing|skip|-|capability: mlx5dv (the selftest device has none) [declared]
capability__undeclared|skip|-|capability: infiniband (the selftest device has no IB port)
capability__required|skip|-|capability: mlx5dv (the selftest device is not an mlx5 device; profile selftest) [declared]
deviation__fails|deviation|-|the selftest device is known to fail this (fails: 0x1 != 0x2 at
deviation__passes|pass|-|stale deviation'
grep -q 'infiniband.*\[declared\]' "$out/profile.tsv" &&
	fail "profile.tsv: an undeclared capability skip says declared"
head -n1 "$out/profile.tsv" | grep -qx '# rdmacheck results backend=real profile=selftest' ||
	fail "profile.tsv: bad first line"
has "$out/profile.log" \
	'dev     deviation__fails: the selftest device is known to fail this (fails: ' \
	'rdmacheck: backend real, profile selftest, binary ' \
	'undeclared capability skips: infiniband (1 test)' \
	'stale deviation ST_STALE: it passes now; remove it from profile selftest'
[ "$(tail -n2 "$out/profile.log")" = $'1 known deviation\n1 passed, 0 failed, 3 skipped' ] ||
	fail "profile.log: last lines '$(tail -n2 "$out/profile.log")'"
has "$out/profile.tap" \
	'not ok 4 - deviation__fails # TODO known deviation: the selftest device is known'
prove -e cat "$out/profile.tap" >"$out/prove-profile.log" 2>&1 ||
	fail "prove rejects profile.tap (see $out/prove-profile.log)"
xmllint --noout "$out/profile.xml" 2>"$out/xmllint.log" ||
	fail "xmllint rejects profile.xml (see $out/xmllint.log)"
has "$out/profile.xml" 'tests="5" failures="0" errors="0" skipped="4"' \
	'<skipped message="known deviation: the selftest device is known to fail this'

expect_exit 0 "RDMACHECK_PROFILE" env RDMACHECK_PROFILE="$profiles/selftest" \
	"$bin" -t deviation__fails
has "$out/last.log" 'dev     deviation__fails: ' '1 known deviation'
expect_exit 1 "--strict: a stale deviation fails the run" \
	"$bin" --strict --profile "$profiles/selftest" -t 'deviation__*'
has "$out/last.log" 'stale deviation ST_STALE: it passes now' '1 known deviation'
expect_exit 1 "--strict: a declared capability skip is a failure too" \
	"$bin" --strict --profile "$profiles/selftest" -t capability__missing \
	--results "$out/strict-declared.tsv"
has "$out/strict-declared.tsv" $'capability__missing\tST_CAPABILITY\tfail\t-\tstrict: capability: mlx5dv'

# malformed profiles: exit 2, naming the file and line
for bad in 'bad-keyword:4: unknown keyword '\''lack'\' \
	'bad-clause:3: deviation ST_NO_SUCH_CLAUSE: no such clause' \
	'no-reason:3: '\''lacks'\'' wants a capability and a reason' \
	'bad-capability:3: capability '\''MLX5_DV'\'' is not one word' \
	'bad-attr:4: attr atomic_cap: '\''some'\'' is not one of none, hca, glob' \
	'bad-attr-key:3: unknown attribute '\''max_queue_pairs'\'''; do
	file=${bad%%:*}
	expect_exit 2 "malformed profile $file" "$bin" --profile "$profiles/$file"
	has "$out/last.log" "$profiles/$bad"
done
expect_exit 2 "unreadable profile" "$bin" --profile "$profiles/no-such"
has "$out/last.log" "profile $profiles/no-such: cannot read it: "

# include: another profile's lacks and deviations under this one's name
expect_exit 0 "profile with include" "$bin" --profile "$profiles/selftest-include" -t 'deviation__*'
has "$out/last.log" 'profile selftest-include,' 'dev     deviation__fails: ' '1 known deviation' \
	'stale deviation ST_STALE: it passes now; remove it from profile selftest-include'
expect_exit 2 "include of a missing profile" "$bin" --profile "$profiles/include-missing"
has "$out/last.log" "profile $profiles/include-missing:3: include no-such-profile: $profiles/no-such-profile: cannot read it: "
expect_exit 2 "include loop" "$bin" --profile "$profiles/include-loop"
has "$out/last.log" 'include include-loop: nested more than 4 deep'

# --record-profile: the run written as a profile (the profile's own reasons
# kept, the rest recorded) that loads back and turns the failure into a
# known deviation
expect_exit 1 "--record-profile" "$bin" --profile "$profiles/selftest" -t 'capability__*' \
	-t 'deviation__*' -t 'assert__*' --record-profile "$out/recorded"
has "$out/last.log" "rdmacheck: profile recorded in $out/recorded"
has "$out/recorded" 'name recorded' \
	'# 2 passed, 1 failed, 3 skipped, 1 known deviation; a partial run (-t)' \
	'# no attributes: this binary has no device fixtures' \
	'lacks mlx5dv               the selftest device is not an mlx5 device' \
	'lacks infiniband           recorded: the selftest device has no IB port' \
	'deviation ST_ASSERT  recorded: assert__unequal_fails failed: 0x1 != 0x2 at ' \
	'deviation ST_DEVIATION  the selftest device is known to fail this'
grep -q 'ST_STALE\|lacks non-mlx5' "$out/recorded" &&
	fail "recorded: a clause that passed, or a capability no test asked for, is in it"
expect_exit 0 "a recorded profile loads back" "$bin" --profile "$out/recorded" \
	-t 'capability__*' -t 'deviation__*' -t 'assert__*'
has "$out/last.log" 'profile recorded,' '2 known deviations' '2 passed, 0 failed, 3 skipped'
expect_exit 2 "--record-profile to an unwritable place" "$bin" -t 'assert__equal*' \
	--record-profile /proc/no-such/profile
has "$out/last.log" 'rdmacheck: cannot open /proc/no-such/profile: '

# --report: one HTML page, well-formed and valid (xmllint, tidy), the
# device's absence said, each clause a row with its outcome; --baseline
# lists what changed since an earlier run's results
expect_exit 1 "--report" "$bin" --profile "$profiles/selftest" -t 'capability__*' \
	-t 'deviation__*' -t 'assert__*' --results "$out/report-now.tsv" --report "$out/report.html" \
	--baseline "$out/profile.tsv"
has "$out/last.log" "rdmacheck: report written to $out/report.html"
xmllint --noout "$out/report.html" 2>"$out/xmllint-report.log" ||
	fail "xmllint: report.html is not well-formed (see $out/xmllint-report.log)"
tidy -qe "$out/report.html" >"$out/tidy.log" 2>&1 ||
	fail "tidy: report.html has errors or warnings (see $out/tidy.log)"
has "$out/report.html" '<!DOCTYPE html>' '<td>(not known)</td>' \
	'<tr id="ST_DEVIATION">' 'class="o dev">documented difference</td>' \
	'<p><b>The device profile'"'"'s deviation:</b> the selftest device is known to fail this</p>' \
	'<h2>Changes since ' \
	'<li><a href="#ST_ASSERT">ST_ASSERT</a>: <span class="none">not run</span> before, <span class="fail">fail</span> now</li>'
expect_exit 2 "--baseline that is no results file" "$bin" -t 'assert__equal*' --report "$out/r2.html" \
	--baseline "$profiles/selftest"
has "$out/last.log" "not an rdmacheck results file" "r2.html not written: --baseline could not be read"
expect_exit 2 "--baseline without --report" "$bin" --baseline "$out/profile.tsv"
has "$out/last.log" '--baseline goes with --report'

# ---- --compare: the full run against an edited copy where a passing
# clause fails and another has no result; then against the profile run
sed -e 's/backend=real/backend=mock/' \
	-e 's/^\(diverge__documented_held\t[^\t]*\t\)pass\t\([^\t]*\)\t/\1fail\t\2\tbroken on purpose/' \
	-e '/^run_child__/d' "$out/selftest.tsv" >"$out/differs.tsv"
expect_exit 1 "--compare with a difference" "$bin" --matrix "$out/compare.md" \
	--column "mock=$out/selftest.tsv" --column "rxe44=$out/differs.tsv" --compare mock
has "$out/last.log" \
	'differs: ST_DIVERGE: mock=pass rxe44=FAIL (first failing test: diverge__documented_held: broken on purpose)' \
	'warning: ST_RUN_CHILD: mock=pass rxe44=— (no result)'
[ "$(grep -c '^differs:' "$out/last.log")" = 1 ] ||
	fail "--compare: a clause failing, skipped or a deviation in both counted as a difference"
has "$out/compare.md" '## Mock vs real' \
	'- ST_DIVERGE: mock=pass rxe44=FAIL (first failing test: diverge__documented_held: broken on purpose)' \
	'- ST_RUN_CHILD: mock=pass rxe44=— (no result)'
expect_exit 1 "--compare, the base failing" "$bin" --matrix "$out/compare.md" \
	--column "mock=$out/differs.tsv" --column "real=$out/selftest.tsv" --compare mock
has "$out/last.log" 'differs: ST_DIVERGE: mock=FAIL real=pass (first failing test: diverge__documented_held'
grep -q '^warning:' "$out/last.log" && fail "--compare: a warning where the base has no result"
expect_exit 0 "--compare with agreeing columns" "$bin" --matrix "$out/agree.md" \
	--column "real=$out/selftest.tsv" --column "profile=$out/profile.tsv" --compare real
grep -q '^differs:' "$out/last.log" && fail "--compare: agreeing columns differ"
has "$out/agree.md" '## Mock vs real' 'No clause differs.' \
	'| FAIL (1/1) | deviation (1/1) |'
has "$out/last.log" 'warning: ST_RUN_CHILD: real=pass profile=— (no result)'
expect_exit 2 "--compare without --matrix" "$bin" --compare mock
expect_exit 2 "--compare naming no column" "$bin" --matrix - \
	--column "real=$out/selftest.tsv" --compare nope
has "$out/last.log" '--compare nope'

if [ "$failures" -ne 0 ]; then
	echo "check-runner: $failures check(s) failed" >&2
	exit 1
fi
echo "check-runner: all checks passed ($nall selftest verdicts, TAP, JUnit, profiles, matrix, --compare)"
