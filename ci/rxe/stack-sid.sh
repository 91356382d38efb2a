#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The sid stack: Debian sid's kernel (linux-image-amd64 -> linux-image-<ver>,
# a stub whose parts are linux-binary-<ver>, linux-modules-<ver> and
# linux-base-<ver>) and sid's userspace: rdma-core 65 (librdmacm, libibverbs,
# ibverbs-providers), glibc, libnl, libcmocka, libfiu, iproute2 and the
# libraries they depend on. Everything is fetched with a private apt
# configuration under the cache and unpacked with dpkg -x; nothing is
# installed on the host. Writes $RXE_CACHE/sid/stack.env.
# Network: none while the private index is younger than RXE_REFRESH_HOURS
# (default 24) and the stack is unpacked; after that, apt-get update on the
# private index and downloads of the packages whose version changed. If that
# fails and a stack is cached, the cached stack is used (one line says so).
set -euo pipefail
RXE_TAG="rxe sid"
. "$(dirname "$0")/lib.sh"

dir=$RXE_CACHE/sid
apt_dir=$dir/apt
refresh_hours=${RXE_REFRESH_HOURS:-24}
# The packages named here; their library dependencies are added below.
NAMED="librdmacm1t64 libibverbs1 ibverbs-providers libc6 libgcc-s1 libnl-3-200 libibumad3 libpci3
       libnl-route-3-200 libcmocka0 libfiu0 iproute2"

# The cache is good while its index is young and it was made for the same
# named packages (a package added here must be fetched).
named_now=$(echo $NAMED)
if [ -r "$dir/stack.env" ] && fresh_enough "$apt_dir/updated" "$refresh_hours" &&
	[ "$(cat "$dir/named" 2>/dev/null)" = "$named_now" ]; then
	say "cached in $dir (index younger than ${refresh_hours} h; no network)"
	exit 0
fi

mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc" "$dir/debs"
cat >"$apt_dir/etc/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
SRC
APT_OPTS=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt_dir/lists"
	-o Dir::State::Status=/dev/null
	-o "Dir::Cache=$apt_dir/cache"
	-o "Dir::Cache::pkgcache=$apt_dir/cache/pkgcache.bin"
	-o "Dir::Cache::srcpkgcache=$apt_dir/cache/srcpkgcache.bin"
	-o APT::Sandbox::User=root
	-o Debug::NoLocking=1)
acache() { apt-cache "${APT_OPTS[@]}" "$@"; }

say "updating the private sid index ($apt_dir)"
if ! apt-get "${APT_OPTS[@]}" -q update >"$apt_dir/update.log" 2>&1 ||
	grep -qE '^(W|E):' "$apt_dir/update.log"; then
	if [ -r "$dir/stack.env" ]; then
		say "apt-get update of the private sid index failed; using the cached stack (see $apt_dir/update.log)"
		exit 0
	fi
	die "apt-get update of the private sid index failed: $(grep -E '^(W|E):' "$apt_dir/update.log" | head -n 1)"
fi
touch "$apt_dir/updated"

# The kernel: linux-image-amd64 -> linux-image-<ver>-amd64 -> its parts.
image=$(acache depends linux-image-amd64 |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
[ -n "$image" ] || die "sid's linux-image-amd64 names no linux-image-<ver>-amd64"
kver=${image#linux-image-}
kparts=$(acache depends "$image" | sed -n 's/^ *Depends: \(linux-\(binary\|modules\|base\)-[^ ]*\)$/\1/p' | sort -u)
[ "$(echo "$kparts" | wc -w)" -ge 2 ] || kparts=$image   # an old-style, self-contained image

# Userspace: the named packages and, recursively, their lib* dependencies
# (lib* and zlib*; first alternative; not through non-library packages such
# as systemd).
# One apt-cache call per level of the walk.
declare -A seen=()
level=($NAMED)
while [ ${#level[@]} -gt 0 ]; do
	for p in "${level[@]}"; do seen[$p]=1; done
	mapfile -t next < <(acache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
			--no-replaces --no-enhances "${level[@]}" 2>/dev/null |
		awk '/^ *\|?(Pre)?Depends: [^<]/ { if (!alt) print $2; alt = ($1 ~ /^\|/); next } { alt = 0 }' |
		grep -E '^(lib|zlib)' | sort -u)
	level=()
	for p in "${next[@]}"; do [ -n "${seen[$p]:-}" ] || level+=("$p"); done
done
userspace=$(printf '%s\n' "${!seen[@]}" | sort)

# name=version of every package wanted, from one apt-cache show.
# shellcheck disable=SC2086
manifest=$(acache show --no-all-versions $kparts $userspace |
	awk '/^Package: / { p = $2 } /^Version: / { print p "=" $2 }' | sort -u)
for p in $kparts $userspace; do
	grep -q "^$p=" <<<"$manifest" || die "sid has no package $p"
done

# What is cached: name=version of each .deb (apt-get download escapes the
# epoch in the file name, so read the control fields).
declare -A have=()
for f in "$dir"/debs/*.deb; do
	[ -e "$f" ] || continue
	nv=$(dpkg-deb -W --showformat='${Package}=${Version}' "$f" 2>/dev/null) || { rm -f "$f"; continue; }
	if grep -qxF "$nv" <<<"$manifest"; then have[$nv]=$f; else rm -f "$f"; fi   # superseded
done
missing=()
while read -r nv; do [ -n "${have[$nv]:-}" ] || missing+=("${nv%%=*}=${nv#*=}"); done <<<"$manifest"
if [ ${#missing[@]} -gt 0 ]; then
	say "downloading ${#missing[@]} packages: ${missing[*]%%=*}"
	( cd "$dir/debs" && apt-get "${APT_OPTS[@]}" -q download "${missing[@]}" >/dev/null 2>"$apt_dir/download.err" ) ||
		die "apt-get download (sid) failed: $(grep -m1 . "$apt_dir/download.err")"
fi

if [ -r "$dir/stack.env" ] && [ "$(cat "$dir/manifest" 2>/dev/null)" = "$manifest" ]; then
	say "no package changed; the unpacked stack is current"
	exit 0
fi

say "unpacking $(echo "$manifest" | wc -l) packages"
rm -rf "$dir/root.new"
mkdir -p "$dir/root.new"
for f in "$dir"/debs/*.deb; do dpkg -x "$f" "$dir/root.new"; done
r=$dir/root.new
modbase=$r/usr
[ -d "$modbase/lib/modules/$kver" ] || modbase=$r
[ -d "$modbase/lib/modules/$kver" ] || die "no lib/modules/$kver in the sid kernel packages"
vmlinuz=$(ls "$r"/boot/vmlinuz-"$kver" "$r"/usr/lib/modules/"$kver"/vmlinuz "$r"/usr/lib/linux/vmlinuz-"$kver" 2>/dev/null | head -n 1 || true)
[ -n "$vmlinuz" ] || vmlinuz=$(find "$r" -name "vmlinuz*" -type f | head -n 1)
[ -n "$vmlinuz" ] || die "no vmlinuz in $kparts"
depmod -b "$modbase" "$kver" || die "depmod -b $modbase $kver failed"
ipbin=$(ls "$r"/usr/bin/ip "$r"/usr/sbin/ip "$r"/bin/ip "$r"/sbin/ip 2>/dev/null | head -n 1 || true)
rdmabin=$(ls "$r"/usr/bin/rdma "$r"/usr/sbin/rdma "$r"/bin/rdma "$r"/sbin/rdma 2>/dev/null | head -n 1 || true)
[ -n "$ipbin" ] && [ -n "$rdmabin" ] || die "iproute2 (sid) has no ip or rdma binary"
rm -rf "$dir/root"
mv "$dir/root.new" "$dir/root"
echo "$manifest" >"$dir/manifest"
echo "$named_now" >"$dir/named"

pkgs=$(echo "$manifest" | paste -sd " ")
cat >"$dir/stack.env.new" <<ENV
# Written by ci/rxe/stack-sid.sh
STACK=sid
KVER=$kver
VMLINUZ=${vmlinuz/root.new/root}
MODBASE=${modbase/root.new/root}
SYSROOT=$dir/root
IP=${ipbin#$r}
RDMA=${rdmabin#$r}
MODULES="udp_tunnel ip6_udp_tunnel ib_core rdma_rxe configfs ib_cm iw_cm rdma_cm ib_uverbs_support? ib_uverbs rdma_ucm dummy veth"
KERNEL_PKG="$image $(echo "$manifest" | sed -n "s/^linux-binary-[^=]*=//p")"
PACKAGES="$pkgs"
ENV
mv "$dir/stack.env.new" "$dir/stack.env"
say "kernel $kver; $(echo "$manifest" | wc -l) packages: $(size_of "$dir/debs") in .debs, $(size_of "$dir/root") unpacked"
