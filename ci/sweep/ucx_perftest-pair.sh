#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UCX's ucx_perftest as a server and a client on the fabric the sweep gives
# it (RUN: rdmamock-run), over rc_verbs (UCX_TLS=rc_v: rc_verbs with
# ud_verbs for its wire-up) on mlx5_0: 20 tag-matched ping-pongs after 5
# to warm up, the client started once the server's control socket listens
# (rdmamock-pair, on a port of its choosing, so that runs go side by side).
# UCX gives up on a silent UD peer after 5 s instead of its 30 (the RC
# retries' 7 x 1 s stay), so that a lost peer ends within the sweep's time.
# When one side fails and exits, the other, writing to the control socket
# of the one that left, would die of SIGPIPE or report EPIPE as timing
# decides; SIGPIPE is ignored so that it reports (ucx_perftest does not
# ignore it itself), and a sweep's verdict does not turn on that race.
export UCX_TLS=rc_v,self UCX_NET_DEVICES=mlx5_0:1 UCX_UD_VERBS_TIMEOUT=5s
trap '' PIPE
exec bash "$(dirname "$RUN")/rdmamock-pair" socket:auto ucx_perftest -p @PORT@ -- \
	ucx_perftest -p @PORT@ 127.0.0.1 -t tag_lat -n 20 -w 5
