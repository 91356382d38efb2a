#!/usr/bin/env bash
# Checks the suite runner on its own selftest list: each test's verdict, the
# exit codes, and that prove and xmllint accept the TAP and JUnit it writes.
# usage: ci/check-runner.sh build/conformance/runner-selftest OUTDIR
set -u

bin=${1:?usage: $0 RUNNER_SELFTEST OUTDIR}
out=${2:?usage: $0 RUNNER_SELFTEST OUTDIR}
mkdir -p "$out" || exit 1
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

# ---- the full run: every test's verdict, documented flag and reason
expect_exit 1 "selftest run" "$bin" --timeout 2 --tap "$out/selftest.tap" \
	--junit "$out/selftest.xml" --results "$out/selftest.tsv"
cp "$out/last.log" "$out/selftest.log"

# test | verdict | documented | start of the reason
expected='
assert__equal_passes|pass|-|
assert__unequal_fails|fail|-|0x1 != 0x2 at
skip__with_reason|skip|-|reason with <xml> & chars
skip__not_taken|pass|-|
capability__missing|skip|-|capability: mlx5dv
crash__sigsegv|fail|-|crashed: SIGSEGV
crash__abort|fail|-|crashed: SIGABRT
exit__before_return|fail|-|exited with status 0 before the test finished
hang__with_child|fail|-|timed out after 2 s
output__bad_bytes|fail|-|failing on purpose
diverge__documented_held|pass|held|
diverge__documented_not_held|pass|not-held|
run_child__segv_reported|pass|-|
run_child__exit_code_and_message|pass|-|'

nexpected=0
while IFS='|' read -r name verdict documented reason; do
	[ -n "$name" ] || continue
	nexpected=$((nexpected + 1))
	line=$(awk -F'\t' -v n="$name" '$1 == n' "$out/selftest.tsv")
	[ -n "$line" ] || { fail "$name: missing from selftest.tsv"; continue; }
	IFS=$'\t' read -r _ _ got_verdict got_documented got_reason <<<"$line"
	[ "$got_verdict" = "$verdict" ] ||
		fail "$name: verdict '$got_verdict', expected '$verdict'"
	[ "$got_documented" = "$documented" ] ||
		fail "$name: documented '$got_documented', expected '$documented'"
	case "$got_reason" in
	"$reason"*) ;;
	*) fail "$name: reason '$got_reason', expected it to start '$reason'" ;;
	esac
done <<<"$expected"

head -n1 "$out/selftest.tsv" | grep -qx '# rdmacheck results backend=real' ||
	fail "selftest.tsv: bad first line"
ntsv=$(grep -vc '^#' "$out/selftest.tsv")
[ "$ntsv" = "$nexpected" ] || fail "selftest.tsv has $ntsv tests, expected $nexpected"
tail -n1 "$out/selftest.log" | grep -qx '6 passed, 6 failed, 2 skipped' ||
	fail "closing line: '$(tail -n1 "$out/selftest.log")'"

# ---- the reports: prove parses the TAP (the failures are on purpose)
prove -e cat "$out/selftest.tap" >"$out/prove.log" 2>&1
grep -q 'Parse errors' "$out/prove.log" && fail "prove: parse errors (see $out/prove.log)"
grep -q 'Failed 6/14 subtests' "$out/prove.log" ||
	fail "prove did not count 6 of 14 failed (see $out/prove.log)"
xmllint --noout "$out/selftest.xml" 2>"$out/xmllint.log" ||
	fail "xmllint rejects selftest.xml (see $out/xmllint.log)"
grep -q '<testsuite name="rdmacheck-real" tests="14" failures="6" errors="0" skipped="2"' \
	"$out/selftest.xml" || fail "selftest.xml: wrong testsuite counts"

# ---- options
expect_exit 1 "--strict turns a capability skip into a failure" \
	"$bin" --strict -t capability__missing --results "$out/strict.tsv"
grep -q $'^capability__missing\tST_CAPABILITY\tfail\t' "$out/strict.tsv" ||
	fail "--strict: capability__missing did not fail"
expect_exit 0 "-t selecting passing tests" "$bin" -t 'assert__equal*' -t 'diverge__*'
grep -qx '3 passed, 0 failed, 0 skipped' "$out/last.log" || fail "-t ran the wrong tests"
expect_exit 2 "-t matching nothing" "$bin" -t 'no_such_test*'
grep -q "no_such_test\*" "$out/last.log" || fail "-t error does not name the glob"
expect_exit 2 "unknown option" "$bin" --no-such-option
expect_exit 0 "--list" "$bin" --list
[ "$(grep -c ' ST_' "$out/last.log")" = "$nexpected" ] || fail "--list: wrong lines"

# ---- the matrix, from this run and an edited copy standing for another
sed -e 's/backend=real/backend=mock/' \
	-e 's/^\(diverge__documented_not_held\t[^\t]*\t[^\t]*\t\)not-held/\1held/' \
	"$out/selftest.tsv" >"$out/other.tsv"
expect_exit 0 "--matrix" "$bin" --matrix "$out/matrix.md" \
	--column "real=$out/selftest.tsv" --column "mock=$out/other.tsv"
matrix_has() {
	grep -qF -- "$1" "$out/matrix.md" || fail "matrix.md lacks: $1"
}
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

if [ "$failures" -ne 0 ]; then
	echo "check-runner: $failures check(s) failed" >&2
	exit 1
fi
echo "check-runner: all checks passed ($nexpected selftest verdicts, TAP, JUnit, matrix)"
