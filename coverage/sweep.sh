#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The coverage build's examples under rdmamock-sweep (every point each
# reaches, its first two hits, once and from then on), for the second
# coverage report: what their error paths and the mock's reach under faults.
#   coverage/sweep.sh COVERAGE_BUILD_DIR
set -euo pipefail
build=$1
. ci/mock-env.sh "$build"
for e in port_probe qp_probe addrinfo_probe; do
	"$build/bin/rdmamock-sweep" --timeout 30 --max-nth 2 -- "$build/examples/$e"
done
