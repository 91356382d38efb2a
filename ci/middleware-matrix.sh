#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The middleware matrix: each case of ci/check-middleware.sh, a column per
# run (the mock's rxe0 and mlx5_0, rxe44, rxe65), and whether the mock's
# rxe0 does what rxe does.
#   ci/middleware-matrix.sh OUT.md MOCK=TSV [NAME=TSV ...]
# The first column is the one the others are compared with; a case that
# passes there and fails in a column named rxe* (or the reverse) is a
# difference: listed, and the exit status is 1. A missing TSV is a column
# of "no run".
set -uo pipefail
out=$1
shift
[ $# -ge 1 ] || { echo "usage: $0 OUT.md NAME=TSV..." >&2; exit 2; }
names=() files=()
for c in "$@"; do
	names+=("${c%%=*}")
	files+=("${c#*=}")
done
for i in "${!files[@]}"; do
	if [ -r "${files[$i]}" ]; then awk -F '\t' -v f=$((i + 1)) 'NF >= 2 { print f "\t" $0 }' "${files[$i]}"; fi
done | awk -F '\t' -v names="${names[*]}" '
	BEGIN { n = split(names, col, " ") }
	{
		if (!($2 in seen)) { seen[$2] = 1; order[++cases] = $2 }
		res[$2, $1] = $3
		why[$2, $1] = $4
	}
	function cell(c, f,   r) {
		r = res[c, f]
		if (r == "") return "no run"
		if (r == "pass" && why[c, f] ~ /^fails as on the device/) return "pass (fails as rxe)"
		if (r == "pass" && why[c, f] ~ /^reports the fault/) return "pass (reports the fault)"
		if (r == "pass") return "pass"
		if (r == "skip") return "skip: " why[c, f]
		return "**FAIL**: " why[c, f]
	}
	END {
		print "# Middleware: the mock and rdma_rxe, case by case"
		print ""
		print "A case passes when the program does its work and exits 0, or, where"
		print "the real device was measured to fail, when it fails with the same"
		print "words (\"fails as rxe\"). Cases: ci/check-middleware.sh."
		print ""
		printf "| case |"; for (f = 1; f <= n; f++) printf " %s |", col[f]; print ""
		printf "|---|"; for (f = 1; f <= n; f++) printf "---|"; print ""
		for (i = 1; i <= cases; i++) {
			c = order[i]
			printf "| %s |", c
			for (f = 1; f <= n; f++) printf " %s |", cell(c, f)
			print ""
			for (f = 2; f <= n; f++)
				if (col[f] ~ /^rxe/ && res[c, f] != "" && res[c, 1] != "" &&
				    res[c, f] != "skip" && res[c, 1] != "skip" &&
				    (res[c, f] == "pass") != (res[c, 1] == "pass"))
					diff[++ndiff] = sprintf("- %s: %s %s, %s %s", c, col[1], res[c, 1], col[f], res[c, f])
		}
		print ""
		if (ndiff) {
			print "## Where " col[1] " and rxe differ (the mock is wrong until a measurement says otherwise)"
			print ""
			for (i = 1; i <= ndiff; i++) print diff[i]
		} else {
			print col[1] " and every rxe column that ran agree on every case they both ran."
		}
		exit ndiff ? 1 : 0
	}' >"$out"
