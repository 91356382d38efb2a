#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# soft-iWARP (siw) for a stack's kernel: Debian builds its kernels without
# it (# CONFIG_RDMA_SIW is not set), so the module is built here, out of
# tree, from Debian's own kernel source package of the same version
# (linux-source-X.Y) against the matching headers (linux-headers-KVER, its
# -common and linux-kbuild-X.Y), with the host's compiler: the one Debian 12
# builds its kernel with (gcc 12). Nothing is installed on the host: the
# packages are fetched into the cache and unpacked with dpkg -x. The module
# goes into the stack's unpacked kernel (lib/modules/KVER/updates/siw.ko,
# then depmod), where mkinitramfs.sh finds it; a stamp names the kernel
# package it was built for, so a cached stack touches no network.
#   ci/rxe/siw.sh STACK        (after ci/rxe/stack-STACK.sh)
set -euo pipefail
stack=${1:?usage: siw.sh STACK}
RXE_TAG="siw $stack"
. "$(dirname "$0")/lib.sh"

dir=$RXE_CACHE/$stack
[ -r "$dir/stack.env" ] || die "no $dir/stack.env: run ci/rxe/stack-$stack.sh first"
. "$dir/stack.env"
# The kernel package and its version: "linux-image-KVER VERSION".
read -r _ kversion <<<"$KERNEL_PKG"
modules=$MODBASE/lib/modules/$KVER
stamp=$modules/updates/siw.stamp
if [ -r "$modules/updates/siw.ko" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$KERNEL_PKG" ]; then
	say "siw.ko for $KVER: cached"
	exit 0
fi

if [ "$stack" != debian12 ]; then
	# sid's kernel is built by sid's gcc, which needs sid's C library: the
	# host cannot run it, and a module built by another compiler is not
	# what the kernel was tested with.
	die "siw is built for the debian12 stack only (the host's gcc 12 is the compiler of Debian 12's kernel, not of $stack's)"
fi
series=$(sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p' <<<"$kversion")
[ -n "$series" ] || die "cannot read the kernel series from version $kversion"
pkgs=("linux-source-$series=$kversion" "linux-headers-$KVER=$kversion"
	"linux-headers-${KVER%-amd64}-common=$kversion" "linux-kbuild-$series=$kversion")

work=$dir/siw
rm -rf "$work"
mkdir -p "$work/debs" "$work/root"
stage_start siw-fetch
( cd "$work/debs" && apt-get download -q "${pkgs[@]}" >/dev/null 2>"$work/download.err" ) || {
	say "apt-get download failed; updating the host's lists once"
	apt-get update -qq || die "apt-get update failed"
	( cd "$work/debs" && apt-get download -q "${pkgs[@]}" >/dev/null 2>"$work/download.err" ) ||
		die "apt-get download ${pkgs[*]} failed: $(grep -m1 '^E:' "$work/download.err")"
}
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
stage_end "$(size_of "$work/debs")"

stage_start siw-build
src=$work/src
mkdir -p "$src"
tar -xJf "$work/root/usr/src/linux-source-$series.tar.xz" -C "$src" --strip-components=5 \
	"linux-source-$series/drivers/infiniband/sw/siw"
[ -r "$src/siw_main.c" ] || die "linux-source-$series has no drivers/infiniband/sw/siw"
# The headers' Makefile includes its -common twin by an absolute path.
hdr=$work/root/usr/src/linux-headers-$KVER
sed -i "s|^include /usr/src/|include $work/root/usr/src/|" "$hdr/Makefile"
make -s -C "$hdr" M="$src" CONFIG_RDMA_SIW=m modules >"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log"; die "building siw.ko failed (see $work/build.log)"; }
mkdir -p "$modules/updates"
strip --strip-debug -o "$modules/updates/siw.ko" "$src/siw.ko"
depmod -b "$MODBASE" "$KVER" || die "depmod -b $MODBASE $KVER failed"
echo "$KERNEL_PKG" >"$stamp"
stage_end "$(modinfo -F vermagic "$modules/updates/siw.ko")"
# What stays cached is the module; the source (140 MB) goes.
rm -rf "$work"
say "siw.ko for $KVER built from linux-source-$series $kversion"
