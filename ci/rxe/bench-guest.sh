# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make bench-rxe's part in the guest (RXE_DEBUG_SCRIPT, sourced by
# ci/rxe/init): bench on rxe0 and the same binary on the mock's drop-in
# libraries (copied beside it in $BIN), taking turns, twice each (a TCG
# guest's timing drifts: the host takes the best of the turns), each table
# between markers in the debug log, which comes back to the host.
args="-r 3 -s 1000,10000,25000 -c 1000"
{ [ -e /sys/class/net/dummy0 ] || $IP link add dummy0 type dummy; } && $IP link set dummy0 up &&
	$IP addr add 192.0.2.1/24 dev dummy0 &&
	$RDMA link add rxe0 type rxe netdev dummy0 && wait_dev rxe0 ||
	echo "bench-rxe: cannot set up rxe0 on dummy0"
for turn in 1 2; do
	echo "== bench on rxe0 (192.0.2.1), turn $turn"
	# shellcheck disable=SC2086
	timeout 400 $BIN/bench -a 192.0.2.1 $args -o $R/bench-rxe.tsv
	echo "bench on rxe0: exit $?"
	echo "BENCH-TSV-BEGIN rxe"
	cat $R/bench-rxe.tsv
	echo "BENCH-TSV-END"
	echo "== bench on the mock, turn $turn"
	# shellcheck disable=SC2086
	timeout 200 env LD_LIBRARY_PATH=$BIN RDMAMOCK_FABRIC=bench $BIN/bench -a 127.0.0.1 $args \
		-o $R/bench-mock.tsv
	echo "bench on the mock: exit $?"
	echo "BENCH-TSV-BEGIN mock"
	cat $R/bench-mock.tsv
	echo "BENCH-TSV-END"
done
