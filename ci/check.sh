#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make check: the runner checked on its own list, the ABI, the suite on the
# mock with its TAP and JUnit validated (and in its two-host mode), the
# drop-in test, faults from outside, and the suite on the real rdma-core
# (all skips without a device). Ends with one summary line.
#   ci/check.sh BUILD_DIR
# The steps run in two lanes at once, each step on a fabric of its own
# (RDMAMOCK_FABRIC), their output kept and printed in the order below; a
# lane stops at its first failed step, and the run fails if any step did.
set -euo pipefail
build=$1
out=$build/check
mkdir -p "$out"
conf=$build/conformance

s_runner() {
	bash ci/check-runner.sh "$conf/runner-selftest" "$out/runner"
}

s_license() {
	bash ci/check-spdx.sh .
}

s_install() {
	# A sanitizer's build loads its runtime first or not at all: the staged
	# tree's programs are checked on the plain build.
	if [ -n "${SANITIZE:-}" ]; then
		echo "install: checked on the build without SANITIZE"
		return 0
	fi
	bash ci/check-install.sh "$build" "$out/install"
}

s_abi() {
	bash ci/check-abi.sh "$build/mock/lib" "$out/abi"
	bash ci/readme-calls.sh check docs/libraries.md
	bash ci/check-devinfo.sh "$build/mock/lib"
}

s_mock() {
	# Each test on a private fabric of its own (the runner's default).
	env -u RDMAMOCK_FABRIC "$conf/rdmacheck-mock" -j "${JOBS:-$(nproc)}" --timeout "${TIMEOUT:-30}" \
		--profile fixtures/devices/mock \
		--tap "$out/mock.tap" --junit "$out/mock.xml" --results "$out/mock.tsv"
	prove --exec cat "$out/mock.tap" >"$out/prove.log" 2>&1 || {
		cat "$out/prove.log"; echo "check: prove rejected $out/mock.tap" >&2; return 1; }
	tail -n 1 "$out/prove.log"
	xmllint --noout "$out/mock.xml"
	echo "xmllint: $out/mock.xml is one well-formed document"
}

s_mock_ib() {
	# The same suite with mlx5_0 a ConnectX on an InfiniBand subnet: the
	# clauses of RoCE alone skip, naming the IB clause that stands for them.
	# Under ASan, without LeakSanitizer: its check at each test's exit is
	# two thirds of the suite's time there (measured: 49 s with it, 17 s
	# without); the suite on the mock and its two-host mode look for leaks,
	# so only the paths of an InfiniBand subnet alone go unchecked for them.
	local leaks=
	case ${SANITIZE:-} in *address*)
		leaks="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		echo "mock-ib: under ASan without LeakSanitizer (the other suite runs look for leaks)" ;;
	esac
	env -u RDMAMOCK_FABRIC $leaks RDMAMOCK_TOPOLOGY='mlx5_0=mlx5+ib:127.0.0.1/8,::1;rxe0=generic:127.0.0.2/8' \
		"$conf/rdmacheck-mock" -j "${JOBS:-$(nproc)}" --timeout "${TIMEOUT:-30}" \
		--profile fixtures/devices/mock --tap "$out/mock-ib.tap" --junit "$out/mock-ib.xml" \
		--results "$out/mock-ib.tsv"
	prove --exec cat "$out/mock-ib.tap" >/dev/null
	xmllint --noout "$out/mock-ib.xml"
}

s_2proc() {
	bash ci/check-2proc.sh "$build" "$out"
	prove --exec cat "$out/mock-2proc.tap" >/dev/null
	xmllint --noout "$out/mock-2proc.xml"
}

s_dropin() {
	bash ci/check-dropin.sh "$build/mock/lib" "$build/examples/port_probe" "$build/examples/qp_probe" \
		"$build/examples/addrinfo_probe"
}

s_fiu() {
	bash ci/check-faults.sh "$build/examples/port_probe" "$build/mock/lib"
}

s_run() {
	bash ci/check-run.sh "$build"
}

s_profile() {
	bash ci/check-profile.sh "$build" "$out/profile"
}

s_real() {
	# Under a sanitizer the suite against the system's rdma-core (no device:
	# all but 13 tests skip) checks the suite's own code alone, which the
	# suite on the mock runs too; its 771 processes each pay LeakSanitizer's
	# exit (measured: 118 s under clang's ASan, 3 s without).
	if [ -n "${SANITIZE:-}" ]; then
		rm -f "$out/real.tsv"
		echo "real: checked on the build without SANITIZE"
		return 0
	fi
	"$conf/rdmacheck-real" --timeout "${TIMEOUT:-30}" --tap "$out/real.tap" \
		--junit "$out/real.xml" --results "$out/real.tsv"
	prove --exec cat "$out/real.tap" >/dev/null
	xmllint --noout "$out/real.xml"
}

# The steps, in the order they are reported: function, lane, title.
steps=(
	"s_runner 2 runner self-test"
	"s_abi 2 ABI: every rdma-core symbol and version, and Debian's programs loaded on the mock"
	"s_license 2 licenses: every source file carries its SPDX line (LICENSE)"
	"s_mock 1 conformance suite on the mock"
	"s_mock_ib 1 conformance suite on the mock, mlx5_0 on InfiniBand"
	"s_2proc 1 the suite's two-host mode on the mock: rdmacheck-mock --serve in another process"
	"s_dropin 2 drop-in: a program built against the system's librdmacm, on the mock"
	"s_fiu 2 fault points from outside: fiu-run on an unmodified program"
	"s_run 2 rdmamock-run: faults in the fabric, on unmodified programs"
	"s_profile 2 device profiles: the mock's rxe0 recorded (--record-profile) and replayed (RDMAMOCK_PROFILE)"
	"s_real 2 conformance suite on the system's rdma-core"
	"s_install 2 make install into a staging tree: the staged tools, suite, pkg-config and man pages; make uninstall leaves nothing"
)

# lane N: its steps one after the other; each step's output and status in
# $out/step-FUNCTION.{log,rc}.
lane() {
	local s fn n title
	for s in "${steps[@]}"; do
		read -r fn n title <<<"$s"
		[ "$n" = "$1" ] || continue
		(set -e; export RDMAMOCK_FABRIC="check-${fn#s_}-$$"; "$fn") >"$out/step-$fn.log" 2>&1
		echo $? >"$out/step-$fn.rc"
		[ "$(cat "$out/step-$fn.rc")" = 0 ] || return 0
	done
}

for s in "${steps[@]}"; do
	read -r fn _ <<<"$s"
	rm -f "$out/step-$fn.log" "$out/step-$fn.rc"
done
set +e
lane 1 &
lane1=$!
lane 2 &
lane2=$!
wait $lane1 $lane2
set -e

failed=()
for s in "${steps[@]}"; do
	read -r fn _ title <<<"$s"
	printf '\n== %s\n' "$title"
	if [ ! -e "$out/step-$fn.rc" ]; then
		echo "(not run: an earlier step of its lane failed)"
		failed+=("$title (not run)")
		continue
	fi
	cat "$out/step-$fn.log"
	[ "$(cat "$out/step-$fn.rc")" = 0 ] || failed+=("$title")
done

printf '\n== %s\n' "summary"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'check: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
awk -F '\t' -v s="$SECONDS" '!/^#/ { n[$3]++ } END { printf "check: %d passed, %d failed, %d skipped, in %d s\n", n["pass"] + n["deviation"], n["fail"], n["skip"], s }' \
	"$out/mock.tsv" $(ls "$out/real.tsv" 2>/dev/null)
