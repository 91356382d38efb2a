# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the checks that run programs through a build's tools: none of
# the caller's mock environment, and a sanitizer build's runtime preloaded
# first into Debian's programs (their own leaks are not the mock's).
#   . ci/mock-env.sh BUILD_DIR
unset LD_LIBRARY_PATH RDMAMOCK_FABRIC RDMAMOCK_FAULTS RDMAMOCK_COUNT
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
asan=$(sh ci/sanitizer-runtime.sh "$1/mock/lib")
[ -z "$asan" ] || export LD_PRELOAD=$asan
