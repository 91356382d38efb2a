#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The sanitizer runtime a sanitizer build of the drop-in libraries needs
# loaded first into a program that was not built with it (gcc's libasan,
# clang's libclang_rt.asan); nothing for any other build.
#   ci/sanitizer-runtime.sh MOCK_LIB_DIR
ldd "$1/libibverbs.so.1" | awk '/libasan|libclang_rt\.asan/ { print $3; exit }'
