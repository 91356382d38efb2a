#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make check-middleware: ci/check-middleware.sh on the mock, on rxe0 (the
# generic device, which must do what rxe does), on mlx5_0 (what a ConnectX
# does) and on mlx5_0 with an InfiniBand port (a ConnectX on an IB
# subnet), each on a fabric of its own, with the system view that UCX and
# Open MPI read (and a sanitizer build's runtime first).
#   ci/check-middleware-mock.sh BUILD_DIR
set -uo pipefail
build=$1
lib=$build/mock/lib
view=$lib/librdmamock-sys.so
asan=$(sh ci/sanitizer-runtime.sh "$lib")
export LD_LIBRARY_PATH=$lib START_DELAY=${START_DELAY:-0.5} MW=$build/examples/middleware
export LD_PRELOAD=${asan:+$asan:}$view
[ -z "$asan" ] || export ASAN_OPTIONS=detect_leaks=0
export READY_CM="$build/bin/rdmamock-run --wait-listen"
# The fault cases: rdmamock-run aims faults at a program.
export FAULT_RUN=$build/bin/rdmamock-run
# qperf's client: its REQ held on the wire for what rxe's resolution takes
# (ci/check-middleware.sh says why).
mkdir -p "$build/check/middleware"
export QPERF_CLIENT=$build/check/middleware/qperf-client
printf '#!/bin/sh\nexec %s --fault "rdmamock/rdmacm/event/delay ms=20 nth=1" -- "$@"\n' \
	"$(realpath "$build/bin/rdmamock-run")" >"$QPERF_CLIENT"
chmod +x "$QPERF_CLIENT"
[ "$(id -u)" = 0 ] && export MPIRUN_ARGS="--allow-run-as-root"
# libfabric's cases want a device on a host interface that is not loopback
# (ci/check-middleware.sh says why).
. ci/host-if.sh
rc=0
# DEVICE:ADDRESS:KIND:PERSONALITY:LINK; the InfiniBand one's results go
# to mlx5_0-ib.
for d in rxe0:127.0.0.2:rxe:generic:roce mlx5_0:127.0.0.1:mlx5:mlx5:roce mlx5_0:127.0.0.1:mlx5:mlx5+ib:ib; do
	IFS=: read -r dev addr kind personality link <<<"$d"
	run=$dev topology=
	if [ "$link" = ib ]; then
		run=$dev-ib topology=$dev=$personality:$addr/8
	fi
	echo "== $run ($kind, $link)"
	fi_env=
	[ -n "$HOST_ADDRS" ] && fi_env="env RDMAMOCK_FABRIC=middleware-fi-$run-$$ RDMAMOCK_TOPOLOGY=$dev=$personality:$HOST_ADDRS"
	(
		[ -z "$topology" ] || export RDMAMOCK_TOPOLOGY=$topology
		RDMAMOCK_FABRIC=middleware-$run-$$ DEV=$dev ADDR=$addr KIND=$kind \
			LINK=$link FI_ENV=$fi_env FI_ADDR=$FI_ADDR FI_SKIP=$FI_SKIP \
			sh ci/check-middleware.sh -o "$build/check/middleware/$run"
	) || rc=1
done
mkdir -p "$build/results"
bash ci/middleware-matrix.sh "$build/results/middleware.md" "mock=$build/check/middleware/rxe0/middleware.tsv" \
	"mock-mlx5_0=$build/check/middleware/mlx5_0/middleware.tsv" \
	"mock-mlx5_0-ib=$build/check/middleware/mlx5_0-ib/middleware.tsv"
echo "check-middleware: the matrix is $build/results/middleware.md (make check-rxe adds rxe44 and rxe65)"
exit $rc
