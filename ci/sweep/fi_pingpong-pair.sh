#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# libfabric's fi_pingpong (verbs provider, msg endpoints: rdmacm, then RC)
# as a server and a client on the fabric the sweep gives it (RUN:
# rdmamock-run), on a device that holds a host interface's addresses
# (FI_TOPOLOGY, FI_ADDR: libfabric skips loopback interfaces, see
# ci/host-if.sh); the client
# started once the server's control socket listens (rdmamock-pair, on a
# port of its choosing, so that runs go side by side).
export RDMAMOCK_TOPOLOGY="$FI_TOPOLOGY" IPATH_NO_BACKTRACE=1 # libinfinipath: no *.btr files
exec bash "$(dirname "$RUN")/rdmamock-pair" socket:auto fi_pingpong -p verbs -e msg -B @PORT@ -I 20 -S 512 -- \
	fi_pingpong -p verbs -e msg -P @PORT@ -I 20 -S 512 "$FI_ADDR"
