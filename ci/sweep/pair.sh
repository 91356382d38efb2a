#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A server and its client on the fabric the sweep gives them, judged as one
# program by what it is made to say:
#   RUN=build/bin/rdmamock-run bash ci/sweep/pair.sh PORT SERVER [ARG]... -- CLIENT [ARG]...
# The client starts once the server listens on PORT (rdmamock-run
# --wait-listen). Then:
# - the client ends first: the server is stopped, and the client's exit
#   status is the pair's;
# - the server ends first, with 0 (done serving): the client is waited for;
# - the server ends first, failing: the client, which would wait for a
#   listener or a peer until the sweep's timeout and be judged a hang, is
#   stopped at once, and the pair exits 3, "the server failed";
# - either side is killed by a signal (a crash): the other is stopped, and
#   the pair kills itself with that signal, so that the sweep sees it as it
#   sees a program's own crash (a shell only reports a child's signal as an
#   exit status, 128 + SIG, which a program may also give);
# - either side still runs at the sweep's timeout: a hang, the sweep's to
#   judge (it kills the process group).
# The sides' own exit statuses 129-159 are taken for signals.
me=${0##*/}
port=$1
shift
server=() client=()
while (($#)) && [ "$1" != -- ]; do
	server+=("$1")
	shift
done
shift
client=("$@")
if [ -z "$port" ] || [ ${#server[@]} -eq 0 ] || [ ${#client[@]} -eq 0 ] || [ -z "$RUN" ]; then
	echo "usage: RUN=rdmamock-run $me PORT SERVER [ARG]... -- CLIENT [ARG]..." >&2
	exit 2
fi
ulimit -c 0 # a crash passed on leaves no core file behind

"${server[@]}" &
spid=$!
"$RUN" --wait-listen "$port" -- "${client[@]}" &
cpid=$!

# A side's status: a crash (128 + SIG, SIG not the TERM this script sends)
# is passed on as the pair's own signal, the other side stopped first.
pass_on_crash() {
	local side=$1 status=$2 sig

	((status > 128 && status < 160)) || return 0
	sig=$((status - 128))
	((sig != 15)) || return 0
	echo "$me: the $side was killed by SIG$(kill -l $sig)" >&2
	kill $spid $cpid 2>/dev/null
	trap - "$sig"
	kill -s "$sig" $$
	exit "$status" # a signal this shell cannot die of
}

# Both run until one ends (bash reaps them as they end, so kill -0 fails
# then; `wait -n` would miss a side that ended before it was called).
while kill -0 $spid 2>/dev/null && kill -0 $cpid 2>/dev/null; do
	sleep 0.05
done
if kill -0 $cpid 2>/dev/null; then
	wait $spid
	status=$?
	pass_on_crash server $status
	if ((status != 0)); then
		echo "$me: the server failed (exit $status) before the client ended: the client is stopped" >&2
		kill $cpid 2>/dev/null
		wait $cpid
		pass_on_crash client $?
		exit 3
	fi
fi
wait $cpid
status=$?
kill $spid 2>/dev/null
wait $spid
pass_on_crash server $?
pass_on_crash client $status
exit $status
