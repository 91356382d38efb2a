#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rping as a server and a client on the fabric the sweep gives it (RUN:
# rdmamock-run): the client starts once the server listens, and the server
# is stopped when the client ends, so a hang is the client's; a server that
# fails first stops the client (exit 3), and a crash of either side is the
# pair's (rdmamock-pair).
exec bash "$(dirname "$RUN")/rdmamock-pair" 7711 rping -s -a 127.0.0.1 -p 7711 -C 3 -- rping -c -a 127.0.0.1 -p 7711 -C 3 -v
