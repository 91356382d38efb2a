#!/bin/sh
# rping as a server and a client on the fabric the sweep gives it; the
# client starts once the server listens (RUN: rdmamock-run), and the server
# is stopped when the client ends, so a hang is the client's.
rping -s -a 127.0.0.1 -p 7711 -C 3 &
s=$!
"$RUN" --wait-listen 7711 -- rping -c -a 127.0.0.1 -p 7711 -C 3 -v
c=$?
kill $s 2>/dev/null
exit $c
