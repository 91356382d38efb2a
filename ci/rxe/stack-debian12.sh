#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The debian12 stack: Debian 12's kernel (the image package linux-image-amd64
# depends on), downloaded into the cache and unpacked with dpkg -x, never
# installed; the userspace (rdma-core 44, glibc, iproute2) is the host's own.
# Writes $RXE_CACHE/debian12/stack.env for mkinitramfs.sh.
# Network: none when the kernel apt-cache names is already cached; otherwise
# apt-get download (and one apt-get update if the host's lists are stale).
set -euo pipefail
RXE_TAG="rxe debian12"
. "$(dirname "$0")/lib.sh"

dir=$RXE_CACHE/debian12
mkdir -p "$dir/debs"

image=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
if [ -z "$image" ]; then
	# No lists yet on this machine: fall back to a cached kernel, else update.
	if [ -r "$dir/stack.env" ]; then
		say "apt-cache names no linux-image-amd64; reusing the cached kernel"
		exit 0
	fi
	say "apt-cache names no linux-image-amd64: running apt-get update"
	apt-get update -qq || die "apt-get update failed (needed to find linux-image-amd64)"
	image=$(apt-cache depends linux-image-amd64 |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$image" ] || die "apt-cache depends linux-image-amd64 names no linux-image-<ver>-amd64"
fi
kver=${image#linux-image-}

if [ -r "$dir/stack.env" ] && grep -qx "KVER=$kver" "$dir/stack.env" &&
	[ -r "$dir/root/boot/vmlinuz-$kver" ] && [ -r "$dir/root/lib/modules/$kver/modules.dep" ]; then
	say "kernel $kver: cached in $dir"
	exit 0
fi

say "kernel $kver: downloading $image"
deb=$(ls "$dir"/debs/"${image}"_*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
	( cd "$dir/debs" && apt-get download -q "$image" >/dev/null 2>"$dir/download.err" ) || {
		say "apt-get download $image failed; updating the host's lists once"
		apt-get update -qq || die "apt-get update failed"
		( cd "$dir/debs" && apt-get download -q "$image" >/dev/null ) ||
			die "apt-get download $image failed (see $dir/download.err)"
	}
	deb=$(ls "$dir"/debs/"${image}"_*.deb | head -n 1)
fi
# Keep only the current kernel's .deb.
find "$dir/debs" -name 'linux-image-*.deb' ! -path "$deb" -delete

rm -rf "$dir/root.new"
mkdir -p "$dir/root.new"
dpkg -x "$deb" "$dir/root.new"
[ -r "$dir/root.new/boot/vmlinuz-$kver" ] || die "$deb has no boot/vmlinuz-$kver"
depmod -b "$dir/root.new" "$kver" || die "depmod -b $dir/root.new $kver failed"
rm -rf "$dir/root"
mv "$dir/root.new" "$dir/root"

version=$(dpkg-deb -f "$deb" Version)
cat >"$dir/stack.env.new" <<ENV
# Written by ci/rxe/stack-debian12.sh
STACK=debian12
KVER=$kver
VMLINUZ=$dir/root/boot/vmlinuz-$kver
MODBASE=$dir/root
SYSROOT=/
IP=/bin/ip
RDMA=/usr/bin/rdma
MODULES="crc32_generic crc32-pclmul? udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe configfs ib_cm iw_cm rdma_cm rdma_ucm dummy veth"
KERNEL_PKG="$image $version"
ENV
mv "$dir/stack.env.new" "$dir/stack.env"
say "kernel $kver ($image $version) unpacked: $(size_of "$dir/debs") in .debs, $(size_of "$dir/root") unpacked"
