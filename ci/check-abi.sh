#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The drop-in promise at link level: the mock's libraries export every
# (symbol, version) pair that rdma-core does, and every RDMA program and
# library Debian ships loads on them with no undefined symbol or version.
#   ci/check-abi.sh MOCK_LIB_DIR OUT_DIR
# Compares the mock with
#   - the .map files (what the build was told to export),
#   - the system's rdma-core (Debian 12: rdma-core 44), read with readelf,
#   - mock/abi/rdma-core-65.abi, the pairs of rdma-core 65 (Debian sid),
# and runs `ldd -r` with the mock on every binary and shared object of
# the packages below. Names every missing pair and every failing file.
set -euo pipefail
lib=$1
out=$2
mkdir -p "$out"
LIBS="libibverbs.so.1 librdmacm.so.1 libmlx5.so.1"
PACKAGES="rdmacm-utils ibverbs-utils perftest ibverbs-providers python3-pyverbs"
status=0
fail() { echo "check-abi: $*" >&2; status=1; }

# LIB SYMBOL VERSION for every versioned symbol a library defines.
exports() {
	readelf --dyn-syms -W "$1" | awk -v lib="$(basename "$1")" \
		'$7 != "UND" && $8 ~ /@/ { s = $8; sub(/@@?/, " ", s); print lib, s }' | sort -u
}

# missing NAME EXPECTED_FILE: the pairs of EXPECTED_FILE the mock lacks.
missing() {
	local name=$1 expected=$2 lacking
	lacking=$(comm -13 "$out/mock.abi" "$expected")
	if [ -n "$lacking" ]; then
		fail "$(wc -l <<<"$lacking") (symbol, version) pairs of $name are missing from the mock:"
		sed 's/^/  /' <<<"$lacking" >&2
	else
		echo "check-abi: every pair of $name ($(wc -l <"$expected")) is exported by the mock"
	fi
}

for so in $LIBS; do exports "$lib/$so"; done | sort -u >"$out/mock.abi"
echo "check-abi: the mock exports $(wc -l <"$out/mock.abi") (symbol, version) pairs"

# What the .map files say; awk checks them against the .calls tables too.
for pair in libibverbs:ibverbs librdmacm:rdmacm libmlx5:mlx5; do
	name=${pair%%:*} dir=mock/${pair#*:}
	awk -v mode=pairs -v lib="$name.so.1" -f mock/abi/abi.awk "$dir/$name.map" "$dir/$name.calls"
done | sort -u >"$out/map.abi"
missing ".map files" "$out/map.abi"
extra=$(comm -23 "$out/mock.abi" "$out/map.abi")
[ -z "$extra" ] || fail "exported but in no .map: $extra"

for so in $LIBS; do
	path=$(ldconfig -p | awk -v so="$so" '!p && $1 == so && /x86-64|x86_64/ { p = $NF } END { print p }')
	[ -n "$path" ] || { fail "the system has no $so (make deps installs rdma-core)"; continue; }
	exports "$path"
done | sort -u >"$out/system.abi"
missing "the system's rdma-core ($(dpkg-query -W -f='${Version}' libibverbs1 2>/dev/null || echo '?'))" "$out/system.abi"
grep -v "^#" mock/abi/rdma-core-65.abi | sort -u >"$out/rdma-core-65.abi"
missing "rdma-core 65 (mock/abi/rdma-core-65.abi)" "$out/rdma-core-65.abi"

# Every ELF file of the packages, loaded with the mock first.
checked=0
for pkg in $PACKAGES; do
	dpkg-query -W "$pkg" >/dev/null 2>&1 || { fail "package $pkg is not installed (make deps)"; continue; }
	while read -r f; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		head -c 4 "$f" | grep -q $'\x7fELF' || continue
		checked=$((checked + 1))
		problems=$(LD_LIBRARY_PATH="$lib" ldd -r "$f" 2>&1 |
			grep -E 'undefined symbol|not found|version .* not found' || true)
		if [ -n "$problems" ]; then
			fail "$f on the mock:"
			printf '  %s\n' "$problems" >&2
		fi
	done < <(dpkg -L "$pkg")
done
echo "check-abi: ldd -r with the mock on $checked files of $PACKAGES"
[ $status -eq 0 ] && echo "check-abi: no missing pair, no undefined symbol"
exit $status
