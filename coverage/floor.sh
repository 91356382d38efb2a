#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The coverage floor: compare lcov's summary of a tracefile with the
# figures in coverage/floor; fail, naming each figure below its floor.
#   coverage/floor.sh TRACEFILE [FLOOR_FILE]
set -euo pipefail
info=$1
floor=${2:-coverage/floor}
summary=$(lcov --config-file coverage/lcovrc --summary "$info" 2>&1)
status=0
while read -r what min; do
	case $what in '' | '#'*) continue ;; esac
	got=$(printf '%s\n' "$summary" | sed -n "s/^ *$what\.*: *\([0-9.]*\)%.*/\1/p")
	if [ -z "$got" ]; then
		echo "coverage floor: lcov printed no $what figure for $info" >&2
		status=1
	elif awk -v g="$got" -v m="$min" 'BEGIN { exit !(g + 0 < m + 0) }'; then
		echo "coverage floor: $what $got% is below the floor of $min% ($floor)" >&2
		status=1
	else
		echo "coverage floor: $what $got% (floor $min%)"
	fi
done <"$floor"
exit $status
