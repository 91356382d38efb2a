#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make check-rxe / rxe-<stack>: run the stacks' guests one after the other,
# then a fresh mock run, the clause matrix of the mock and every real run that
# came back, and the verdict.
#   ci/rxe/check.sh BUILD_DIR STACK...
# RXE_PHASE=guests runs the guests only (CI starts them beside its other
# steps), RXE_PHASE=verdict the rest on the results they left; the default,
# all, both. RXE_TOGETHER=1 runs the stacks' guests side by side.
# Fails (exit 1) when a stack's guest did not bring back a run it should have,
# when a real run has a failing test (a `fail` line in its TSV, or the
# runner's non-zero exit in the guest), when the mock run fails, or when the
# matrix command fails (e.g. RXE_MATRIX_FLAGS='--compare mock' found a
# difference).
set -uo pipefail
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
RXE_TAG=rxe
. "$here/lib.sh"
out=$build/rxe
mkdir -p "$out"
export RXE_TIMINGS=$out/timings.tsv
conf=$build/conformance
t0=$(now)
phase=${RXE_PHASE:-all}

declare -A column=([debian12]=rxe44 [sid]=rxe65 [siw-debian12]=siw44)
verdict=()
for stack in "$@"; do
	[ -n "${column[$stack]:-}" ] || { say "unknown stack $stack (debian12, sid or siw-debian12)"; exit 2; }
done
case $phase in
all | guests)
	: >"$RXE_TIMINGS"
	if [ "${RXE_TOGETHER:-0}" = 1 ]; then
		# The stacks' guests side by side: each line is tagged with its stack.
		declare -A pid=()
		for stack in "$@"; do
			say "== stack $stack (side by side: RXE_TOGETHER=1)"
			bash "$here/run.sh" "$stack" "$build" &
			pid[$stack]=$!
		done
		for stack in "$@"; do
			wait "${pid[$stack]}" ||
				verdict+=("$stack: the guest run failed (see the lines above and $out/$stack/console.log)")
		done
	else
		for stack in "$@"; do
			echo
			say "== stack $stack"
			if ! bash "$here/run.sh" "$stack" "$build"; then
				verdict+=("$stack: the guest run failed (see the lines above and $out/$stack/console.log)")
			fi
		done
	fi
	if [ "$phase" = guests ]; then
		say "guests done in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s; ${#verdict[@]} failed"
		[ ${#verdict[@]} = 0 ]
		exit
	fi
	;;
verdict) say "the guests' results as their run left them (RXE_PHASE=verdict)" ;;
*)
	say "RXE_PHASE=$phase: all, guests or verdict"
	exit 2
	;;
esac

echo
say "== mock run (fresh) and the clause matrix"
mock_profile=()
[ -r fixtures/devices/mock ] && mock_profile=(--profile fixtures/devices/mock)
if ! "$conf/rdmacheck-mock" --timeout "${TIMEOUT:-30}" "${mock_profile[@]}" \
	--results "$out/mock.tsv" >"$out/mock.log" 2>&1; then
	verdict+=("mock: the suite failed on the mock ($(tail -n 1 "$out/mock.log"); see $out/mock.log)")
fi
say "mock: $(tail -n 1 "$out/mock.log")"
if ! bash ci/check-2proc.sh "$build" "$out/2proc" >"$out/2proc.log" 2>&1; then
	verdict+=("mock-2proc: the suite against a peer process failed (see $out/2proc.log)")
fi
say "mock-2proc: $(grep -E '^[0-9]+ passed' "$out/2proc.log" || tail -n 1 "$out/2proc.log")"

cols=(--column "mock=$out/mock.tsv")
[ -s "$out/2proc/mock-2proc.tsv" ] && cols+=(--column "mock-2proc=$out/2proc/mock-2proc.tsv")
for stack in "$@"; do
	[ -s "$out/$stack/single/rdmacheck.tsv" ] &&
		cols+=(--column "${column[$stack]}=$out/$stack/single/rdmacheck.tsv")
	[ -s "$out/$stack/twohost/rdmacheck.tsv" ] &&
		cols+=(--column "${column[$stack]}-2host=$out/$stack/twohost/rdmacheck.tsv")
done
# shellcheck disable=SC2086
"$conf/rdmacheck-mock" --matrix "$out/matrix.md" "${cols[@]}" ${RXE_MATRIX_FLAGS:-} >"$out/matrix.log" 2>&1
mrc=$?
if [ -s "$out/matrix.md" ]; then
	echo
	cat "$out/matrix.md"
	echo
fi
cat "$out/matrix.log"
[ $mrc -eq 0 ] || verdict+=("matrix: rdmacheck-mock --matrix ${RXE_MATRIX_FLAGS:-} exited $mrc (see $out/matrix.log)")

# ---- the mock as each device that recorded its profile: what differs,
# counted and listed; any difference fails the verdict
echo
say "== the mock as each recorded device (RDMAMOCK_PROFILE), test by test"
for stack in "$@"; do
	[ -s "$out/$stack/single/recorded" ] || continue
	col=${column[$stack]}
	bash "$here/replay.sh" "$build" "$out" "$col" "$out/$stack/single"
	case $?/$col in
	0/*) ;;
	2/*) verdict+=("replay: the mock as $col differs from the device on $(wc -l <"$out/replay-$col.diff") test(s) (see $out/replay-$col.diff)") ;;
	*) verdict+=("replay: the mock could not replay $col's recorded profile") ;;
	esac
done

# ---- per run: counts, failing tests, examples
echo
say "== summary"
printf '%-22s %6s %6s %6s %6s  %s\n' run pass fail skip dev "runner exit / examples"
for stack in "$@"; do
	for run in single twohost; do
		d=$out/$stack/$run
		name="${column[$stack]}$([ $run = twohost ] && echo -2host) ($stack)"
		if [ -e "$d/skipped" ]; then
			printf '%-22s skipped: %s\n' "$name" "$(cat "$d/skipped")"
			continue
		fi
		if [ ! -s "$d/rdmacheck.tsv" ]; then
			printf '%-22s MISSING: no results came back\n' "$name"
			verdict+=("$stack/$run: missing (no rdmacheck.tsv came back from the guest)")
			continue
		fi
		read -r p f s v < <(awk -F '\t' '!/^#/ && NF >= 3 { n[$3]++ }
			END { print n["pass"] + 0, n["fail"] + 0, n["skip"] + 0, n["deviation"] + 0 }' "$d/rdmacheck.tsv")
		rc=$(cat "$d/exit" 2>/dev/null || echo '?')
		ex=""
		[ -s "$d/examples.log" ] && ex=$(awk '/^\$ / { n = $2 } /^exit: / { printf "%s%s=%s", sep, n, $2; sep = " " }' "$d/examples.log")
		printf '%-22s %6s %6s %6s %6s  exit %s%s\n' "$name" "$p" "$f" "$s" "$v" "$rc" "${ex:+; $ex}"
		if [ "$f" -gt 0 ] || [ "$rc" != 0 ]; then
			verdict+=("$stack/$run: $f failing test(s), runner exit $rc")
			grep -P '\tfail\t' "$d/rdmacheck.tsv" | awk -F '\t' -v r="$stack/$run" '{ printf "    FAIL %-12s %s: %s\n", r, $1, $5 }'
		fi
	done
done

# ---- Debian's programs, side by side: the mock (fresh) and each guest
echo
say "== Debian's programs, server and client as two processes"
cols=("mock=$out/programs-mock/programs.tsv")
# The verdict of a CI run takes make check-programs' results of that run,
# as it takes check-middleware's below; otherwise a fresh run.
if [ "$phase" = verdict ] && [ -s "$build/check/programs/programs.tsv" ]; then
	say "programs on the mock: make check-programs' results of this run ($build/check/programs)"
elif ! START_DELAY=0.5 bash "$here/../check-programs-mock.sh" "$build" >"$out/programs-mock.log" 2>&1; then
	verdict+=("programs: a program failed on the mock ($(tail -n 1 "$out/programs-mock.log"); see $out/programs-mock.log)")
fi
mkdir -p "$out/programs-mock"
cp "$build/check/programs/programs.tsv" "$out/programs-mock/programs.tsv" 2>/dev/null
for stack in "$@"; do
	cols+=("${column[$stack]}=$out/$stack/single/programs/programs.tsv")
done
# One row a program, a column a run: pass, or FAIL and the reason.
{
	printf '| program |'
	for c in "${cols[@]}"; do printf ' %s |' "${c%%=*}"; done
	printf '\n|---|'
	for c in "${cols[@]}"; do printf -- '---|'; done
	printf '\n'
	cut -f1 "$out/programs-mock/programs.tsv" 2>/dev/null | while read -r prog; do
		printf '| `%s` |' "$prog"
		for c in "${cols[@]}"; do
			cell=$(awk -F '\t' -v p="$prog" '$1 == p { print ($2 == "pass" ? "pass" : $2 == "skip" ? "skip: " $3 : "FAIL: " $3) }' "${c#*=}" 2>/dev/null)
			printf ' %s |' "${cell:-—}"
		done
		printf '\n'
	done
} >"$out/programs.md"
cat "$out/programs.md"

# ---- the middleware, side by side: the mock's rxe0 and mlx5_0 (make
# check-middleware's last run, or a fresh one) and each guest's rxe0
echo
say "== middleware (UCX, libfabric, Open MPI, qperf, librpma)"
mw=$build/check/middleware
if [ ! -s "$mw/rxe0/middleware.tsv" ] &&
	! bash "$here/../check-middleware-mock.sh" "$build" >"$out/middleware-mock.log" 2>&1; then
	verdict+=("middleware: a case failed on the mock ($(tail -n 1 "$out/middleware-mock.log"); see $out/middleware-mock.log)")
fi
cols=("mock=$mw/rxe0/middleware.tsv" "mock-mlx5_0=$mw/mlx5_0/middleware.tsv" "mock-mlx5_0-ib=$mw/mlx5_0-ib/middleware.tsv")
for stack in "$@"; do
	cols+=("${column[$stack]}=$out/$stack/single/middleware/middleware.tsv")
	[ -s "$out/$stack/single/middleware/middleware.tsv" ] ||
		verdict+=("middleware: no results came back from the $stack guest (see $out/$stack/single/middleware.log)")
done
mkdir -p "$build/results"
if ! bash "$here/../middleware-matrix.sh" "$build/results/middleware.md" "${cols[@]}"; then
	verdict+=("middleware: the mock's rxe0 and rxe differ (see $build/results/middleware.md)")
fi
cat "$build/results/middleware.md"

echo
say "== timings (s)"
awk -F '\t' '{ printf "  %-10s %-12s %8s\n", $1, $2, $3 }' "$RXE_TIMINGS"
say "total: $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s; results in $out/<stack>/{single,twohost}/, matrix $out/matrix.md"

if [ ${#verdict[@]} -gt 0 ]; then
	for v in "${verdict[@]}"; do say "FAILED: $v"; done
	exit 1
fi
say "passed: every real run came back with no failing test"
