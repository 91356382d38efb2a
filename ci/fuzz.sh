#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make fuzz: the API-sequence fuzzer (fuzz/api.c) on the ASan+UBSan build.
# Every input of fuzz/regressions runs once (each one that crashed or
# broke an invariant before its fix), then libFuzzer runs for SECONDS from
# the seed corpus (fuzz/corpus; what it finds goes to BUILD/fuzz/corpus, a
# crashing input to BUILD/fuzz/crash-*). Exit 0 only when nothing crashed or broke an
# invariant; the figures (runs, coverage, corpus) are printed either way.
#   ci/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
build=$1 seconds=$2
fuzzer=$build/fuzz/api-fuzzer
out=$build/fuzz
mkdir -p "$out/corpus"
# libFuzzer brings libstdc++ in ahead of the shared ASan runtime.
runtime=$(bash ci/sanitizer-runtime.sh "$build/mock/lib")
export LD_PRELOAD=${runtime}${LD_PRELOAD:+:$LD_PRELOAD}
export RDMAMOCK_FABRIC=private
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
opts=(-timeout=20 -rss_limit_mb=4096 -max_len=257 -artifact_prefix="$out/")

shopt -s nullglob
regressions=(fuzz/regressions/*)
if [ ${#regressions[@]} -gt 0 ]; then
	if ! "$fuzzer" "${opts[@]}" "${regressions[@]}" >"$out/regressions.log" 2>&1; then
		tail -n 30 "$out/regressions.log" >&2
		echo "fuzz: a regression input fails again ($out/regressions.log)" >&2
		exit 1
	fi
	echo "fuzz: ${#regressions[@]} regression inputs pass"
fi

rc=0
start=$SECONDS
"$fuzzer" "${opts[@]}" -max_total_time="$seconds" -print_final_stats=1 \
	"$out/corpus" fuzz/corpus >"$out/fuzz.log" 2>&1 || rc=$?
stat() { awk -v k="stat::$1:" '$1 == k { print $2 }' "$out/fuzz.log"; }
# The last status line: "#RUNS  NEW  cov: C ft: F corp: K/SIZE ...".
last=$(tr '\r' '\n' <"$out/fuzz.log" | grep -E '^#[0-9]+' | tail -n 1 || true)
field() { printf '%s\n' "$last" | sed -n "s/.* $1: \([^ ]*\).*/\1/p"; }
echo "fuzz: $(stat number_of_executed_units) runs, $(stat average_exec_per_sec)/s, in $((SECONDS - start)) s;" \
	"coverage $(field cov) edges, $(field ft) features; corpus $(field corp);" \
	"peak RSS $(stat peak_rss_mb) MB"
if [ $rc -ne 0 ]; then
	grep -E 'fuzz: invariant|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' \
		"$out/fuzz.log" | head -n 5 >&2 || true
	ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* 2>/dev/null >&2 || true
	echo "fuzz: failed (rc $rc; $out/fuzz.log). Minimise with: LD_PRELOAD=$runtime $fuzzer -minimize_crash=1 -runs=10000 CRASH" >&2
	exit 1
fi
echo "fuzz: clean; corpus $(ls "$out/corpus" | wc -l) inputs in $out/corpus"
