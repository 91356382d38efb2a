#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make sweep's rule on middleware: rdmamock-sweep over Debian's
# ucx_perftest and fi_pingpong pairs (ci/sweep/*-pair.sh), the first hit
# of every fault point each reaches, once and from then on, with the
# point's usual errno. What they do under a fault that is their own (UCX
# aborting on a transport error by design, a double free in an error path
# of UCX's or libfabric's, a wait for a lost completion) is listed in
# ci/sweep/middleware-known.txt; anything else fails. Two of those bugs
# must be found, or the sweep no longer reaches the error paths.
#   ci/sweep/middleware.sh BUILD_DIR
set -euo pipefail
build=$1
sweep=$build/bin/rdmamock-sweep
known=ci/sweep/middleware-known.txt
fail() { echo "sweep-middleware: $*" >&2; exit 1; }
. ci/mock-env.sh "$build"
. ci/host-if.sh
export RUN=$PWD/$build/bin/rdmamock-run IPATH_NO_BACKTRACE=1 # libinfinipath: no *.btr files here

# pair TIMEOUT MUST_FIND: a pair's sweep, and the finding it must make
# (known); its report in $build/sweep-PAIR.log.
pair() {
	local name=$1 timeout=$2 must=$3 log=$build/sweep-$1.log
	if ! command -v "$name" >/dev/null; then
		echo "sweep-middleware: $name: not installed (make deps), skipped"
		return 0
	fi
	"$sweep" --jobs 2 --timeout "$timeout" --max-nth 1 --one-errno --known "$known" \
		--tap "$build/sweep-$name.tap" -- sh "ci/sweep/$name-pair.sh" >"$log" ||
		{ cat "$log"; fail "$name: findings not in $known (above)"; }
	grep -q "^known  *$must " "$log" || { cat "$log"; fail "$name: the known '$must' was not found"; }
	tail -n 1 "$log"
}

# UCX gives up on a silent peer after 5 s and 7 RC retries (8.6 s): 20 s.
pair ucx_perftest 20 'rdmamock/ibverbs/ibv_req_notify_cq nth=1'
if [ -n "$FI_SKIP" ]; then
	echo "sweep-middleware: fi_pingpong: skipped: $FI_SKIP"
else
	# A pair takes under a second, but a peer gone silent (event/vanish,
	# drop) ends only once the RC retries run out: 7 of 1.07 s, 9.4 s
	# measured by hand, past 10 s on a loaded machine. Its hangs wait for
	# ever, and take these 20 s each.
	export FI_TOPOLOGY="rxe0=generic:$HOST_ADDRS" FI_ADDR
	pair fi_pingpong 20 'rdmamock/rdmacm/event/connect_error nth=1'
fi
echo "sweep-middleware: ucx_perftest and fi_pingpong meet every fault they reach; what they do is known ($known)"
