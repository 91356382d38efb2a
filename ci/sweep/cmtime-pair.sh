#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# cmtime (rdmacm-utils) as a server and a client on the fabric the sweep
# gives it (RUN: rdmamock-run): the server binds 127.0.0.1:7712, the client
# starts once it listens and times 4 connections, the server is stopped
# when the client ends. cmtime's server never ends on its own: if it does,
# it failed, and the client is stopped (exit 3) rather than left to be
# judged a hang; a crash of either side is the pair's (rdmamock-pair).
exec bash "$(dirname "$RUN")/rdmamock-pair" 7712 cmtime -b 127.0.0.1 -p 7712 -- cmtime -s 127.0.0.1 -p 7712 -c 4
