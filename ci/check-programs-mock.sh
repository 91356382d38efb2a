#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make check-programs: ci/check-programs.sh on the mock's drop-in libraries,
# on a fabric of this run's own, with a sanitizer build's runtime preloaded
# into Debian's programs (their own leaks are not the mock's).
#   ci/check-programs-mock.sh BUILD_DIR
set -euo pipefail
build=$1
lib=$build/mock/lib
export LD_LIBRARY_PATH=$lib RDMAMOCK_FABRIC=check-programs-$$ START_DELAY=${START_DELAY:-0.5}
# A client starts once its server listens on the fabric.
export READY_CM="$build/bin/rdmamock-run --wait-listen"
asan=$(sh ci/sanitizer-runtime.sh "$lib")
[ -z "$asan" ] || export LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0
sh ci/check-programs.sh -o "$build/check/programs"
# Again on a ConnectX whose port is InfiniBand: the verbs programs and
# perftest address by LID (no -g, no -x), the CM ones through the SA's path.
RDMAMOCK_TOPOLOGY=mlx5_0=mlx5+ib:127.0.0.1/8,::1 RDMAMOCK_FABRIC=check-programs-ib-$$ LINK=ib \
	sh ci/check-programs.sh -o "$build/check/programs-ib"
