#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make install into a staging tree, and what it must hold there: the tools,
# the suite's front-end and pkg-config work from the staged tree alone, with
# no environment (the build tree is never named); the man pages render with
# no warning; make uninstall then leaves the tree as it found it (its
# listing before and after are printed and compared).
#   ci/check-install.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$1 out=$2
build_abs=$(realpath "$build")
stage=$(mktemp -d "${TMPDIR:-/tmp}/rdmacheck-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
fail() { echo "check-install: $*" >&2; exit 1; }
listing() { (cd "$stage" && find . | LC_ALL=C sort); }
mk() { make -s --no-print-directory BUILD="$build" DESTDIR="$stage" "$@"; }

listing >"$out/before.txt"
mk install-files >"$out/install.log" 2>&1 || { cat "$out/install.log"; fail "make install-files failed"; }
listing >"$out/installed.txt"
root=$stage/usr/local
clean_env=(env -i PATH=/usr/bin:/bin HOME="$stage" TMPDIR="${TMPDIR:-/tmp}")

"${clean_env[@]}" "$root/bin/rdmamock-run" -- ibv_devices >"$out/ibv_devices.log" 2>&1 ||
	{ cat "$out/ibv_devices.log"; fail "the staged rdmamock-run could not run ibv_devices"; }
grep -q mlx5_0 "$out/ibv_devices.log" || fail "ibv_devices on the staged mock lists no mlx5_0"
echo "check-install: the staged rdmamock-run runs ibv_devices on the mock, with no environment"
"${clean_env[@]}" "$root/bin/rdmamock-run" -- cat /sys/class/infiniband/mlx5_0/ports/1/state >"$out/sysview.log" 2>&1 ||
	{ cat "$out/sysview.log"; fail "the staged rdmamock-run could not show /sys/class/infiniband"; }
grep -qx '4: ACTIVE' "$out/sysview.log" || fail "the staged system view's port state reads $(cat "$out/sysview.log")"
echo "check-install: the staged rdmamock-run shows the system view (mlx5_0's port: $(cat "$out/sysview.log"))"

"${clean_env[@]}" "$root/bin/rdmacheck" -j 2 -t 'rdma_get_dst_port__*' >"$out/rdmacheck.log" 2>&1 ||
	{ cat "$out/rdmacheck.log"; fail "the staged rdmacheck failed"; }
grep -q "binary $root/libexec/rdmacheck/rdmacheck-mock" "$out/rdmacheck.log" ||
	fail "the staged rdmacheck did not run the staged rdmacheck-mock"
echo "check-install: the staged rdmacheck: $(tail -n 1 "$out/rdmacheck.log")"
case $(ldd "$root/libexec/rdmacheck/rdmacheck-mock") in
*"$build_abs"*) fail "the staged rdmacheck-mock loads a library of the build tree" ;;
esac

export PKG_CONFIG_PATH=$root/lib/pkgconfig
flags=$(pkg-config --cflags --libs rdmamock) || fail "pkg-config finds no rdmamock in the staged tree"
dropins=$(pkg-config --variable=dropindir rdmamock)
[ -e "$dropins/librdmacm.so.1" ] || fail "pkg-config's dropindir ($dropins) has no librdmacm.so.1"
printf '#include <rdmamock.h>\nint main(void) { return rdmamock_version() == 0; }\n' >"$out/pc.c"
# shellcheck disable=SC2086
${CC:-cc} -o "$out/pc" "$out/pc.c" $flags -Wl,-rpath,"$(pkg-config --variable=libdir rdmamock)" ||
	fail "a program built with pkg-config's flags for rdmamock did not build"
"$out/pc" || fail "that program did not run"
echo "check-install: pkg-config finds rdmamock in the staged tree: $flags; dropindir $dropins"

pages=$(find "$root/share/man" -type f -name '*.[137]' 2>/dev/null | LC_ALL=C sort)
n=0
for p in $pages; do
	n=$((n + 1))
	warn=$(cd "$(dirname "$(dirname "$p")")" && groff -man -ww -z -Tutf8 "$p" 2>&1 >/dev/null;
		MANWIDTH=80 man -l "$p" 2>&1 >/dev/null)
	[ -z "$warn" ] || fail "$p does not render cleanly: $warn"
done
[ "$n" -gt 0 ] || fail "make install installed no man page"
echo "check-install: $n man pages render with no warning"

mk uninstall >"$out/uninstall.log" 2>&1 || { cat "$out/uninstall.log"; fail "make uninstall failed"; }
listing >"$out/after.txt"
diff "$out/before.txt" "$out/after.txt" >"$out/left.diff" ||
	{ cat "$out/left.diff"; fail "make uninstall left these behind"; }
echo "check-install: make uninstall left the tree as it was: $(wc -l <"$out/installed.txt") entries installed, $(wc -l <"$out/after.txt") after (as before)"
