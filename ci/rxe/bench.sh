#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make bench-rxe: bench/bench.c on rdma_rxe and on the mock in one
# soft-RoCE guest (the debian12 stack: kernel 6.1, rdma-core 44; or STACK),
# each twice, taking turns, the better median of each row kept,
# then each row side by side with the ratio: how many times faster the mock
# is (rxe's time over the mock's; for MB/s, the mock's over rxe's). The
# tables are build/bench/rxe.tsv and build/bench/rxe-mock.tsv, the ratios
# build/bench/ratio.tsv.
#   ci/rxe/bench.sh BUILD_DIR [STACK]
set -uo pipefail
build=$1
stack=${2:-debian12}
lib=$build/mock/lib
out=$build/bench
mkdir -p "$out"
RXE_EXTRA_BINS="$build/bench/bench $lib/librdmacm.so.1 $lib/libibverbs.so.1 $lib/libmlx5.so.1 $lib/librdmamock.so.0"
# One guest (the two-host run would be a second guest for nothing).
export RXE_EXTRA_BINS RXE_DEBUG_SCRIPT=ci/rxe/bench-guest.sh RXE_TWOHOST=netns
# The guest runs no suite: run.sh's verdict on that is not ours.
bash ci/rxe/run.sh "$stack" "$build" >"$out/rxe-guest.log" 2>&1
log=$build/rxe/$stack/main-debug.log
[ -r "$log" ] || { echo "bench-rxe: the guest brought back no $log (see $out/rxe-guest.log)" >&2; exit 1; }
# The best of the turns, row by row: the least time, the most MB/s.
table() {
	sed -n "/^BENCH-TSV-BEGIN $1\$/,/^BENCH-TSV-END\$/p" "$log" | grep -v '^#\|^BENCH-TSV' |
		awk -F '\t' -v OFS='\t' '
			!($1 in best) { order[++n] = $1 }
			!($1 in best) || ($2 == "MB/s" ? $4 > best[$1] : $4 < best[$1]) { best[$1] = $4; line[$1] = $0 }
			END { for (i = 1; i <= n; i++) print line[order[i]] }'
}
table rxe >"$out/rxe.tsv"
table mock >"$out/rxe-mock.tsv"
[ -s "$out/rxe.tsv" ] && [ -s "$out/rxe-mock.tsv" ] ||
	{ echo "bench-rxe: a table is missing (see $log)" >&2; exit 1; }
awk -F '\t' -v OFS='\t' '
	NR == FNR { rxe[$1] = $4; next }
	$1 in rxe {
		r = $2 == "MB/s" ? $4 / rxe[$1] : rxe[$1] / $4
		print $1, $2, rxe[$1], $4, r
		if (r < 1 && $1 !~ /^floor: /) slower++
		n++
	}
	END { printf "# %d rows, %d where the mock is slower than rxe (the floor rows not counted)\n", n, slower > "/dev/stderr" }
' "$out/rxe.tsv" "$out/rxe-mock.tsv" >"$out/ratio.tsv" 2>"$out/ratio.summary"
printf '%-56s %-5s %12s %12s %9s\n' "median, $stack guest" unit rxe mock "mock is"
awk -F '\t' '{ printf "%-56s %-5s %12.2f %12.2f %8.1fx\n", $1, $2, $3, $4, $5 }' "$out/ratio.tsv"
cat "$out/ratio.summary"
# The connection cycle against the least the mock can take for it (the
# floor row: its libfiu checks and event descriptors, measured here).
awk -F '\t' '
	NR == FNR { if ($1 == "connection cycle, one thread") rxe = $4; next }
	$1 == "connection cycle, one thread" { mock = $4 }
	$1 ~ /^floor: a cycle.s / { floor = $4; what = substr($1, 8) }
	END {
		if (!rxe || !mock || !floor) exit
		printf "# one-thread connection cycle: rxe %.0f us, the mock %.0f us (%.1fx); 100x would be %.1f us;\n", rxe, mock, rxe / mock, rxe / 100
		printf "# the mock'"'"'s floor (%s): %.1f us, %.0f%% of that\n", what, floor, 100 * floor * 100 / rxe
	}' "$out/rxe.tsv" "$out/rxe-mock.tsv" | tee "$out/cycle.summary"
