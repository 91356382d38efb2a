# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced (sh): the first host interface that is up and not loopback, for
# libfabric's verbs provider, which skips loopback interfaces. A mock
# device given its addresses (HOST_ADDRS, for RDMAMOCK_TOPOLOGY) mirrors
# it, as rxe0 has dummy0's in the guests; FI_ADDR is its IPv4 address. Or
# FI_SKIP says why there is none.
HOST_ADDRS= FI_ADDR= FI_SKIP=
host_if=$(ip -o -4 addr show scope global up 2>/dev/null | awk '{ print $2; exit }')
if [ -n "$host_if" ]; then
	FI_ADDR=$(ip -o -4 addr show dev "$host_if" scope global | awk '{ split($4, a, "/"); print a[1]; exit }')
	HOST_ADDRS=$(ip -o addr show dev "$host_if" |
		awk '$3 == "inet" || $3 == "inet6" { printf "%s%s", sep, $4; sep = "," }')
else
	FI_SKIP="no network interface here but loopback, which libfabric's verbs provider skips"
fi
