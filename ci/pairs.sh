# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the checks that run programs as a server and a client (POSIX
# sh: it runs under busybox in the soft-RoCE guests): each run bounded, a
# verdict per program in $results (NAME, pass or FAIL, why), a failure
# shown with the last lines each side wrote.
# The caller calls pairs_begin first, and sets START_DELAY,
# CLIENT_TIMEOUT, SERVER_TIMEOUT, SERVER_AFTER (optional: the seconds a
# server may outlive its client, 30), READY_CM (optional), and defines
# wanted NAME (whether to run it). RACE names a function that says whether
# a failed run lost a known race of the program's own (run again, up to 4
# runs, saying RACE_NOTE); by default none.
RACE=${RACE:-false}
SERVER_AFTER=${SERVER_AFTER:-30}
passed=0 failed=0 skipped=0

# pairs_begin NAME [-r] [-o OUT_DIR]: the caller's options (-r: report, exit
# 0 whatever failed); sets report_only, out (the logs' folder, made) and
# results ($out/NAME.tsv, emptied).
pairs_begin() {
	report_only=0
	out=${TMPDIR:-/tmp}/check-$1.$$
	results_name=$1
	shift
	while getopts "ro:" opt; do
		case $opt in
		r) report_only=1 ;;
		o) out=$OPTARG ;;
		*) echo "usage: $0 [-r] [-o OUT_DIR]" >&2; exit 2 ;;
		esac
	done
	mkdir -p "$out"
	results=$out/$results_name.tsv
	: >"$results"
}

# last LINES FILE: the file's last lines, indented, for a failure report.
last() {
	tail -n "$1" "$2" 2>/dev/null | awk '{ print "        " $0 }'
}

verdict() { # NAME pass|FAIL|skip REASON
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$results"
	if [ "$2" = pass ]; then
		passed=$((passed + 1))
		echo "pass    $1${3:+: $3}"
	elif [ "$2" = skip ]; then
		skipped=$((skipped + 1))
		echo "skip    $1: $3"
	else
		failed=$((failed + 1))
		echo "FAIL    $1: $3"
	fi
}

# ready SPEC: wait, at most 10 s, until the server can be reached, so the
# client never starts too early (a perftest client then crashes, and its
# server waits for ever). tcp:PORT: a TCP socket listens there (the verbs
# programs' side channel, from /proc/net/tcp{,6}); cm:PORT, udp-cm:PORT: a
# CM id listens in the TCP or UDP port space, asked through READY_CM (the
# mock: rdmamock-run --wait-listen), else START_DELAY; "": START_DELAY.
ready() {
	case $1 in
	tcp:*)
		hex=$(printf '%04X' "${1#tcp:}")
		i=0
		while [ $i -lt 100 ]; do
			cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
				awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' &&
				return 0
			sleep 0.1
			i=$((i + 1))
		done
		sleep "$START_DELAY" ;;
	cm:* | udp-cm:*)
		if [ -n "${READY_CM:-}" ]; then
			case $1 in cm:*) where=tcp:${1#cm:} ;; *) where=udp:${1#udp-cm:} ;; esac
			# shellcheck disable=SC2086
			timeout 10 $READY_CM "$where" -- true && return 0
		else
			sleep "$START_DELAY"
		fi ;;
	*) sleep "$START_DELAY" ;;
	esac
}

# split_sides SERVER_CMD -- CLIENT_CMD: sets scmd, ccmd and their logs.
split_sides() {
	scmd="" ccmd=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd="$scmd $1"; shift; done
	shift
	ccmd="$*"
	slog=$out/$name.server cl=$out/$name.client
}

# sides: both commands and the last lines each wrote, under a failure.
sides() {
	echo "      server:$scmd"
	last 4 "$slog"
	echo "      client: $ccmd"
	last 4 "$cl"
}

# run_single CMD...: one bounded run of a program without a peer; sets
# log (its output) and rc.
run_single() {
	log=$out/$name.out
	timeout "$CLIENT_TIMEOUT" "$@" >"$log" 2>&1
	rc=$?
}

# One run of pair's server and client: sets crc and src, their statuses.
run_pair() {
	# shellcheck disable=SC2086
	timeout "$SERVER_TIMEOUT" $scmd >"$slog" 2>&1 &
	spid=$!
	ready "$readiness"
	# shellcheck disable=SC2086
	timeout "$CLIENT_TIMEOUT" $ccmd >"$cl" 2>&1
	crc=$?
	if [ "$sev" = forever ] || { [ "$crc" != 0 ] && $RACE; }; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		src=0
	else
		# Once its client has ended, a server has SERVER_AFTER s to end
		# too: one that waits for what will not come (a message lost, a
		# client that failed) is stopped then, not at SERVER_TIMEOUT.
		rm -f "$slog.stuck"
		(
			trap 'kill $s; exit 0' TERM
			sleep "$SERVER_AFTER" &
			s=$!
			wait $s && : >"$slog.stuck" && kill "$spid"
		) >/dev/null 2>&1 &
		wpid=$!
		wait "$spid"
		src=$?
		kill "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
		[ -e "$slog.stuck" ] && src=stuck
	fi
}

# pair NAME READY SERVER_EVIDENCE CLIENT_EVIDENCE SERVER_CMD -- CLIENT_CMD
# READY: how to know the server listens (see ready). Evidence is an
# extended regex the side's output must match ("" for none; "forever" as
# SERVER_EVIDENCE: the server runs until stopped).
pair() {
	name=$1 readiness=$2 sev=$3 cev=$4
	shift 4
	wanted "$name" || return 0
	split_sides "$@"
	run_pair
	tries=1
	while [ "$crc" != 0 ] && [ $tries -lt 4 ] && $RACE; do
		echo "note    $name: $RACE_NOTE: run again"
		run_pair
		tries=$((tries + 1))
	done
	why=""
	# 124: coreutils' timeout; 143: busybox's (the guests)
	case $crc in 124 | 143) why="the client did not end within $CLIENT_TIMEOUT s" ;; esac
	[ -z "$why" ] && case $src in
	124 | 143) why="the server did not end within $SERVER_TIMEOUT s" ;;
	stuck) why="the server did not end within $SERVER_AFTER s of its client" ;;
	esac
	[ -z "$why" ] && [ "$crc" != 0 ] && why="the client exited $crc"
	[ -z "$why" ] && [ "$src" != 0 ] && why="the server exited $src"
	if [ -z "$why" ] && [ -n "$cev" ] && ! grep -Eq "$cev" "$cl"; then
		why="the client's output lacks /$cev/"
	fi
	if [ -z "$why" ] && [ -n "$sev" ] && [ "$sev" != forever ] && ! grep -Eq "$sev" "$slog"; then
		why="the server's output lacks /$sev/"
	fi
	if [ -z "$why" ]; then
		verdict "$name" pass ""
	else
		verdict "$name" FAIL "$why"
		sides
	fi
}

# single NAME EVIDENCE CMD...: a program that needs no peer.
single() {
	name=$1 ev=$2
	shift 2
	wanted "$name" || return 0
	run_single "$@"
	if [ "$rc" != 0 ]; then
		verdict "$name" FAIL "exited $rc"
		last 4 "$log"
	elif ! grep -Eq "$ev" "$log"; then
		verdict "$name" FAIL "its output lacks /$ev/"
		last 4 "$log"
	else
		verdict "$name" pass ""
	fi
}

# pair_fails NAME READY WHY SERVER_CMD -- CLIENT_CMD: a pair that fails on
# the real device (a measured limit of the device or of the program): it
# passes when the client fails too (exits non-zero or by a signal) and
# either side's output matches WHY (an extended regex), as it did there.
# The server is stopped once the client has ended. FAILS_AS says what the
# pass means (by default "fails as on the device").
pair_fails() {
	name=$1 readiness=$2 why_re=$3
	shift 3
	wanted "$name" || return 0
	sev=forever
	split_sides "$@"
	run_pair
	case $crc in
	0) verdict "$name" FAIL "the client passed; on the real device it fails with /$why_re/" ;;
	124 | 143) verdict "$name" FAIL "the client did not end within $CLIENT_TIMEOUT s" ;;
	*)
		if cat "$cl" "$slog" | grep -Eq "$why_re"; then
			verdict "$name" pass "${FAILS_AS:-fails as on the device}: $(cat "$cl" "$slog" | grep -E -m 1 "$why_re")"
			return 0
		fi
		verdict "$name" FAIL "the client exited $crc without /$why_re/" ;;
	esac
	sides
}

# single_fails NAME WHY CMD...: a program that fails on the real device:
# it passes when it fails too, saying WHY (an extended regex).
single_fails() {
	name=$1 why_re=$2
	shift 2
	wanted "$name" || return 0
	run_single "$@"
	tries=1
	while [ "$rc" != 0 ] && [ $tries -lt 3 ] && ! grep -Eq "$why_re" "$log" && $RACE; do
		echo "note    $name: $RACE_NOTE: run again"
		tries=$((tries + 1))
		run_single "$@"
	done
	case $rc in
	0) verdict "$name" FAIL "it passed; on the real device it fails with /$why_re/" ;;
	124 | 143) verdict "$name" FAIL "it did not end within $CLIENT_TIMEOUT s" ;;
	*)
		if grep -Eq "$why_re" "$log"; then
			verdict "$name" pass "${FAILS_AS:-fails as on the device}: $(grep -E -m 1 "$why_re" "$log")"
			return 0
		fi
		verdict "$name" FAIL "it exited $rc without /$why_re/" ;;
	esac
	last 4 "$log"
}
