#!/usr/bin/env bash
# cmtime (rdmacm-utils) as a server and a client on the fabric the sweep
# gives it: the server binds 127.0.0.1:7712, the client (RUN: rdmamock-run)
# starts once it listens and times 4 connections. The pair's verdict is
# what the sweep judges, so each way the pair can end is made to say which:
# - the client ends first (as it does): the server, which never ends on its
#   own, is stopped, and the client's exit status is the pair's;
# - the server ends first (it failed): the client, which would wait for a
#   listener or a peer until the sweep's timeout and be judged a hang, is
#   stopped at once, and the pair exits 3, "the server failed";
# - either side is killed by a signal (a crash): the pair kills itself with
#   that signal, so the sweep sees it as it sees a program's own crash (a
#   shell only reports a child's signal as an exit status, 128 + SIG);
# - either side still runs at the sweep's timeout: a hang, the sweep's to
#   judge (it kills the process group).
#   RUN=build/bin/rdmamock-run bash ci/sweep/cmtime-pair.sh
port=7712
ulimit -c 0 # a crash passed on leaves no core file behind

cmtime -b 127.0.0.1 -p $port &
server=$!
"$RUN" --wait-listen $port -- cmtime -s 127.0.0.1 -p $port -c 4 &
client=$!

# A side's status: a crash (128 + SIG, SIG not the TERM this script sends)
# is passed on as the pair's own signal, the other side stopped first.
pass_on_crash() {
	local side=$1 status=$2 sig

	((status > 128 && status < 160)) || return 0
	sig=$((status - 128))
	[ $sig -ne 15 ] || return 0
	echo "cmtime-pair: the $side was killed by SIG$(kill -l $sig)" >&2
	kill $server $client 2>/dev/null
	trap - "$sig"
	kill -s "$sig" $$
	exit "$status" # a signal this shell cannot die of
}

# Both run until one ends (bash reaps them as they end, so kill -0 fails
# then; `wait -n` would miss a side that ended before it was called).
while kill -0 $server 2>/dev/null && kill -0 $client 2>/dev/null; do
	sleep 0.05
done
if kill -0 $client 2>/dev/null; then
	wait $server
	status=$?
	pass_on_crash server $status
	echo "cmtime-pair: the server ended first (exit $status): the client is stopped" >&2
	kill $client 2>/dev/null
	wait $client
	pass_on_crash client $?
	exit 3
fi
wait $client
status=$?
kill $server 2>/dev/null
wait $server
pass_on_crash server $?
pass_on_crash client $status
exit $status
