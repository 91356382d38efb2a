#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Run a program on the mock with a fault aimed at itself:
#   ci/fault-self.sh SPEC PROG [ARG]...
# SPEC is a fault of RDMAMOCK_FAULTS with commas for its spaces (one word
# for the scripts that split commands), aimed with pid= at this very
# process, which execs rdmamock-run (FAULT_RUN), which execs PROG: one pid.
spec=$(echo "$1" | tr , ' ')
shift
exec "$FAULT_RUN" --fault "$spec pid=$$" -- "$@"
