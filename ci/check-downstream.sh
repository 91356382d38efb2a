#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The downstream example (examples/downstream) as another project uses
# rdmacheck: make install into a staging tree, the example copied out of
# our tree, and its own make check with only the staged tree, found through
# pkg-config. Then make uninstall.
#   ci/check-downstream.sh BUILD_DIR
set -uo pipefail
build=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmacheck-downstream.XXXXXX")
trap 'make -s --no-print-directory BUILD="$build" DESTDIR="$tmp/stage" uninstall >/dev/null 2>&1; rm -rf "$tmp"' EXIT
fail() { echo "check-downstream: $*" >&2; exit 1; }
make -s --no-print-directory BUILD="$build" DESTDIR="$tmp/stage" install-files >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "make install-files failed"; }
cp -r examples/downstream "$tmp/echo"
# Nothing of our tree on the way: a clean environment, the staged tree only.
env -i PATH=/usr/bin:/bin HOME="$tmp" TMPDIR="${TMPDIR:-/tmp}" \
	make -C "$tmp/echo" check PKG_CONFIG_PATH="$tmp/stage/usr/local/lib/pkgconfig" >"$tmp/check.log" 2>&1 ||
	{ cat "$tmp/check.log"; fail "the example's make check failed (above)"; }
grep -E 'PASSED|rdmamock-sweep: [0-9]+ runs,|lines\.|functions\.|^check:' "$tmp/check.log"
case $(cat "$tmp/check.log") in
*"$(realpath .)"*) fail "the example's make check named a path of our tree" ;;
esac
echo "check-downstream: the example's make check passed on a staged install alone"
