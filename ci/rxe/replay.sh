#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The mock as a device a real run recorded (rdmacheck --record-profile in
# the guest): the suite on the mock with that profile replayed
# (RDMAMOCK_PROFILE) and declared (--profile), then each test's verdict
# beside the device's. Tests that are one backend's by design (mock-only,
# real-only, the mock's clock) are left out, and so are those the device's
# rdma-core is too old for (a call it lacks: the host's library, not the
# device), and those a sanitizer build of the mock skips. Prints the count
# and the tests that differ; their list goes to OUT/replay-NAME.diff. Exit
# 0 when every verdict is the device's, 2 when some differ, 1 when the
# replay could not run.
#   ci/rxe/replay.sh BUILD_DIR OUT_DIR NAME RUN_DIR
set -uo pipefail
build=$1 out=$2 name=$3 run=$4
mkdir -p "$out"
recorded=$run/recorded
if [ ! -s "$recorded" ]; then
	echo "replay $name: no recorded profile came back ($recorded)"
	exit 1
fi
prof=$(readlink -f "$recorded")
RDMAMOCK_PROFILE=$prof "$build/conformance/rdmacheck-mock" -j "${JOBS:-$(nproc)}" --timeout "${TIMEOUT:-30}" \
	--profile "$prof" --results "$out/replay-$name.tsv" >"$out/replay-$name.log" 2>&1
if [ ! -s "$out/replay-$name.tsv" ]; then
	echo "replay $name: the suite on the mock left no results (see $out/replay-$name.log)"
	exit 1
fi
awk -F '\t' -v name="$name" -v lib='^(librdmacm|libibverbs) (without|before)' '
	/^#/ || NF < 3 { next }
	FNR == NR { dev[$1] = $3; why[$1] = $5; next }
	($1 in dev) && why[$1] ~ lib { lib_n++; next }
	($1 in dev) && why[$1] !~ /^(mock-only|real-only|the mock.s clock)/ && $5 !~ /^(mock-only|real-only)/ &&
	    !($3 == "skip" && $5 ~ /[Ss]anitizer|ASan/) {
		n++
		if (dev[$1] != $3) {
			d++
			printf "%s\t%s\t%s=%s\tmock=%s\t%s\n", $1, $2, name, dev[$1], $3, (dev[$1] == "skip" ? why[$1] : $5)
		}
	}
	END {
		printf "replay %s: %d tests compared, %d differ; %d left out that need a call the device\047s rdma-core lacks\n",
		       name, n, d, lib_n > "/dev/stderr"
	}
' "$run/rdmacheck.tsv" "$out/replay-$name.tsv" >"$out/replay-$name.diff" 2>"$out/replay-$name.count"
cat "$out/replay-$name.count"
if [ -s "$out/replay-$name.diff" ]; then
	awk -F '\t' '{ n[$2]++ } END { for (c in n) k++; printf "  in %d clauses; the first: ", k }' "$out/replay-$name.diff"
	head -n 5 "$out/replay-$name.diff" | cut -f1,3,4 | tr '\t' ' ' | paste -sd ';' -
fi
[ -s "$out/replay-$name.diff" ] && exit 2
exit 0
