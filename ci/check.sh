#!/usr/bin/env bash
# make check: the runner checked on its own list, the suite on the mock with
# its TAP and JUnit validated, the drop-in test, and the suite on the real
# rdma-core (all skips without a device). Ends with one summary line.
#   ci/check.sh BUILD_DIR
set -euo pipefail
build=$1
out=$build/check
mkdir -p "$out"
conf=$build/conformance
step() { printf '\n== %s\n' "$*"; }

step "runner self-test"
bash ci/check-runner.sh "$conf/runner-selftest" "$out/runner"

step "ABI: every rdma-core symbol and version, and Debian's programs loaded on the mock"
bash ci/check-abi.sh "$build/mock/lib" "$out/abi"
bash ci/readme-calls.sh check README.md
bash ci/check-devinfo.sh "$build/mock/lib"

step "conformance suite on the mock"
"$conf/rdmacheck-mock" -j "${JOBS:-$(nproc)}" --timeout "${TIMEOUT:-30}" --profile fixtures/devices/mock --tap "$out/mock.tap" \
	--junit "$out/mock.xml" --results "$out/mock.tsv"
prove --exec cat "$out/mock.tap" >"$out/prove.log" 2>&1 || {
	cat "$out/prove.log"; echo "check: prove rejected $out/mock.tap" >&2; exit 1; }
tail -n 1 "$out/prove.log"
xmllint --noout "$out/mock.xml"
echo "xmllint: $out/mock.xml is one well-formed document"

step "the suite's two-host mode on the mock: rdmacheck-mock --serve in another process"
bash ci/check-2proc.sh "$build" "$out"
prove --exec cat "$out/mock-2proc.tap" >/dev/null
xmllint --noout "$out/mock-2proc.xml"

step "drop-in: a program built against the system's librdmacm, on the mock"
bash ci/check-dropin.sh "$build/mock/lib" "$build/examples/port_probe" "$build/examples/qp_probe" "$build/examples/addrinfo_probe"

step "fault points from outside: fiu-run on an unmodified program"
bash ci/check-faults.sh "$build/examples/port_probe" "$build/mock/lib"

step "rdmamock-run: faults in the fabric, on unmodified programs"
bash ci/check-run.sh "$build"

step "conformance suite on the system's rdma-core"
"$conf/rdmacheck-real" --timeout "${TIMEOUT:-30}" --tap "$out/real.tap" \
	--junit "$out/real.xml" --results "$out/real.tsv"
prove --exec cat "$out/real.tap" >/dev/null
xmllint --noout "$out/real.xml"

step "summary"
awk -F '\t' -v s="$SECONDS" '!/^#/ { n[$3]++ } END { printf "check: %d passed, %d failed, %d skipped, in %d s\n", n["pass"] + n["deviation"], n["fail"], n["skip"], s }' \
	"$out/mock.tsv" "$out/real.tsv"
