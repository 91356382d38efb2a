# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Shared helpers for the soft-RoCE guest scripts (sourced, not run).
# Each script sets RXE_TAG (e.g. "rxe debian12") before sourcing.

RXE_CACHE=${RDMACHECK_CACHE:-$HOME/.cache/rdmacheck}

say()  { printf '[%s] %s\n' "${RXE_TAG:-rxe}" "$*"; }
die()  { printf '[%s] FAILED: %s\n' "${RXE_TAG:-rxe}" "$*" >&2; exit 1; }

now()  { date +%s.%N; }
# stage_start NAME / stage_end: print how long a stage took.
stage_start() { _stage_name=$1; _stage_t0=$(now); }
stage_end() {
	local t1; t1=$(now)
	_stage_secs=$(awk -v a="$_stage_t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	say "stage ${_stage_name}: ${_stage_secs} s${1:+ ($1)}"
	printf '%s\t%s\t%s\n' "${RXE_STACK:-}" "$_stage_name" "$_stage_secs" >>"${RXE_TIMINGS:-/dev/null}"
}

# fresh_enough FILE HOURS: FILE exists and is younger than HOURS.
fresh_enough() {
	[ -e "$1" ] || return 1
	local age=$(( $(date +%s) - $(stat -c %Y "$1") ))
	[ "$age" -lt $(( $2 * 3600 )) ]
}

# human size of a file or directory
size_of() { du -sh "$1" 2>/dev/null | cut -f1; }
