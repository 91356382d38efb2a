#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Assemble a guest's initramfs from a stack (stack.env written by
# stack-<name>.sh) and this build's binaries:
#   ci/rxe/mkinitramfs.sh STACK_ENV BUILD_DIR OUT_DIR
# Writes OUT_DIR/initramfs.cpio.gz (and keeps the tree in OUT_DIR/initramfs-tree).
# The guest gets: static busybox; the stack's modules in load order
# (decompressed); rdmacheck-real and the examples; iproute2's ip and rdma;
# libibverbs' providers and /etc/libibverbs.d; the shared-library closure of
# all of these resolved inside the stack's SYSROOT (objdump -p NEEDED,
# recursively; for debian12 the SYSROOT is the host), plus libgcc_s.so.1
# (glibc loads it at run time for pthread_exit/cancel).
set -euo pipefail
env_file=$1 build=$2 out=$3
# shellcheck disable=SC1090
. "$env_file"
RXE_TAG="rxe $STACK"
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)

bins=("$build/conformance/rdmacheck-real" "$build/examples/port_probe"
	"$build/examples/qp_probe" "$build/examples/addrinfo_probe")
for b in "${bins[@]}"; do [ -x "$b" ] || die "missing $b (run make all first)"; done
[ -x /bin/busybox ] || die "missing /bin/busybox (package busybox-static)"
objdump -p /bin/busybox | grep -c NEEDED >/dev/null && die "/bin/busybox is not static (install busybox-static)"
sysroot=${SYSROOT%/}
[ -d "$sysroot/" ] || die "stack root $SYSROOT is missing"

t=$out/initramfs-tree
rm -rf "$t"
mkdir -p "$t"/{bin,sbin,dev,proc,sys,tmp,run,etc/rxe,lib/modules,lib64,opt/rdmacheck,opt/iproute2} \
	"$t"/usr/lib/x86_64-linux-gnu/libibverbs "$t"/etc/libibverbs.d
ln -s usr/lib/x86_64-linux-gnu "$t/lib/x86_64-linux-gnu"
cp /bin/busybox "$t/bin/busybox"

# ---- modules, in load order: each named module after its dependencies
: >"$t/etc/rxe/modules"
declare -A have_mod=()
# e1000: the NIC of the two-guest mode (harmless where there is none);
# siw: soft-iWARP, which ci/rxe/siw.sh built into the stack's kernel, for
# the siw runs only: an rxe run loads what CI's does, which never builds it.
driver_modules=
[ "${RXE_DRIVER:-rxe}" = siw ] && driver_modules=siw
for m in $MODULES $driver_modules e1000?; do
	optional=0
	case $m in *\?) optional=1; m=${m%\?} ;; esac
	if ! deps=$(modprobe -C /dev/null -d "$MODBASE" -S "$KVER" --show-depends "$m" 2>&1); then
		[ $optional = 1 ] && { say "module $m: not in kernel $KVER (optional, skipped)"; continue; }
		die "module $m: not found for kernel $KVER: $deps"
	fi
	while read -r verb path _; do
		[ "$verb" = insmod ] || continue     # "builtin NAME": nothing to load
		name=$(basename "$path"); name=${name%%.ko*}
		[ -n "${have_mod[$name]:-}" ] && continue
		have_mod[$name]=1
		case $path in
		*.ko.xz)  xz -dc "$path" >"$t/lib/modules/$name.ko" ;;
		*.ko.zst) zstd -qdc "$path" >"$t/lib/modules/$name.ko" ;;
		*.ko.gz)  gzip -dc "$path" >"$t/lib/modules/$name.ko" ;;
		*.ko)     cp "$path" "$t/lib/modules/$name.ko" ;;
		*) die "module $m: unexpected file $path" ;;
		esac
		# The named module may be optional (crc32-pclmul needs the CPU's PCLMULQDQ).
		if [ "$name" = "${m//-/_}" ] || [ "$name" = "$m" ]; then
			echo "$name $optional" >>"$t/etc/rxe/modules"
		else
			echo "$name 0" >>"$t/etc/rxe/modules"
		fi
	done <<<"$deps"
done

# ---- files from the sysroot: resolve a path inside it, following symlinks
# the way they would resolve on the stack's own root.
in_root() {   # in_root PATH -> host path of the real file (merged /usr: /lib64 is /usr/lib64)
	in_root1 "$1" || in_root1 "/usr$1"
}
in_root1() {
	local p=$1 n=0 l
	while [ -L "$sysroot$p" ] && [ $n -lt 20 ]; do
		l=$(readlink "$sysroot$p")
		case $l in /*) p=$l ;; *) p=$(dirname "$p")/$l ;; esac
		n=$((n + 1))
	done
	[ -e "$sysroot$p" ] || return 1
	echo "$sysroot$p"
}
LIBDIRS="/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib"
find_lib() {  # find_lib SONAME -> host path of the real file
	local d
	for d in $LIBDIRS; do in_root "$d/$1" && return 0; done
	# The middleware's own libraries (UCX, libfabric, Open MPI, librpma and
	# theirs) are the host's on either stack, as their programs are; what
	# the stack has, rdma-core first, comes from the stack.
	if [ -n "${HOST_FALLBACK:-}" ]; then
		for d in $LIBDIRS; do [ -e "$d/$1" ] && { readlink -f "$d/$1"; return 0; }; done
	fi
	return 1
}

declare -A done_lib=()
queue=()
need_of() { objdump -p "$1" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'; }
add_obj() {   # scan an object's NEEDED and queue what is new
	local so
	for so in $(need_of "$1"); do
		[ -n "${done_lib[$so]:-}" ] || queue+=("$so")
	done
}

for b in "${bins[@]}"; do cp "$b" "$t/opt/rdmacheck/"; add_obj "$b"; done
# Debian's RDMA programs and the script that runs them as on the mock
# (make check-programs): the host's binaries, the stack's libraries.
cp "$here/../check-programs.sh" "$here/../pairs.sh" "$t/opt/rdmacheck/"
for p in rping ucmatose cmtime udaddy mckey rdma_server rdma_client rdma_xserver rdma_xclient \
	rstream riostream rcopy udpong \
	ibv_devinfo ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong \
	ibv_xsrq_pingpong ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat \
	ib_atomic_bw ib_atomic_lat; do
	b=$(command -v "$p") || die "no $p on the host (make deps installs rdmacm-utils, ibverbs-utils, perftest)"
	cp "$b" "$t/opt/rdmacheck/"
	add_obj "$b"
done
# The middleware users write on (make check-middleware's, the host's
# Debian 12 programs on either stack): their programs, the plugins they
# open at run time at the host's paths (UCX's transports, Open MPI's
# components and their help texts), our programs on them
# (examples/middleware), and the check itself. Missing packages are said,
# and their cases then fail in the guest with "not found".
cp "$here/../check-middleware.sh" "$t/opt/rdmacheck/"
nmw=0
for p in ucx_info ucx_perftest fi_info fi_pingpong qperf; do
	if b=$(command -v "$p"); then
		cp "$b" "$t/opt/rdmacheck/"; add_obj "$b"; nmw=$((nmw + 1))
	else
		say "no $p on the host (make deps installs the middleware): its cases will fail in the guest"
	fi
done
for b in "$build"/examples/middleware/*; do
	[ -x "$b" ] && [ -f "$b" ] || continue
	mkdir -p "$t/opt/rdmacheck/middleware"
	cp "$b" "$t/opt/rdmacheck/middleware/"; add_obj "$b"; nmw=$((nmw + 1))
done
# A tree of the host's, at its own path: its files (not static libraries
# or headers), its links, and what its shared objects need. A shared
# object's soname is marked found there (another may need it by name),
# unless the loader's path has it too (libpmix.so.2, which Open MPI's
# components need from /usr/lib/x86_64-linux-gnu): the queue puts it there.
copy_tree() {
	local f so
	[ -d "$1" ] || return 0
	while IFS= read -r f; do
		mkdir -p "$t$(dirname "$f")"
		if [ -L "$f" ]; then
			ln -sfn "$(readlink "$f")" "$t$f"
			continue
		fi
		cp "$f" "$t$f"
		nmw=$((nmw + 1))
		[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
		add_obj "$f"
		so=$(objdump -p "$f" | awk '$1 == "SONAME" { print $2 }')
		[ -n "$so" ] && [ ! -e "$(dirname "$f")/$so" ] && ln -sf "$(basename "$f")" "$t$(dirname "$f")/$so"
		[ -n "$so" ] && [ ! -e "/usr/lib/x86_64-linux-gnu/$so" ] && done_lib[$so]=1
	done < <(find "$1" \( -type f -o -type l \) ! -name '*.a' ! -name '*.la' ! -path '*/include/*' \
		! -name '*.mod' ! -path '*/pkgconfig/*')
}
# UCX's transports; Open MPI's components, help texts and settings, and
# the PMIx it is built on.
for tree in /usr/lib/x86_64-linux-gnu/ucx /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 \
	/usr/share/openmpi /etc/openmpi; do
	copy_tree "$tree"
done
if b=$(command -v orterun); then
	mkdir -p "$t/usr/bin"
	cp "$b" "$t/usr/bin/orterun"; add_obj "$b"
	ln -sf /usr/bin/orterun "$t/opt/rdmacheck/mpirun"
	nmw=$((nmw + 1))
else
	say "no mpirun on the host (make deps installs openmpi-bin): its cases will fail in the guest"
fi
HOST_FALLBACK=1
# libfiu's POSIX preload, the stack's own: the clauses of how real rdma-core
# reports a failed system call (conformance/processes/posix_faults.c) run under it.
if fiu_posix=$(in_root /usr/lib/fiu/fiu_posix_preload.so); then
	mkdir -p "$t/usr/lib/fiu"
	cp "$fiu_posix" "$t/usr/lib/fiu/fiu_posix_preload.so"
	add_obj "$fiu_posix"
else
	say "no libfiu POSIX preload in $SYSROOT: its clauses will be skipped"
fi
# Debugging: more programs (RXE_EXTRA_BINS) and a script run instead of the
# usual runs (RXE_DEBUG_SCRIPT; its output comes back as debug.log).
# A library among them that the stack does not have (librdmamock.so.0, for
# make bench-rxe) is found there, with LD_LIBRARY_PATH.
for b in ${RXE_EXTRA_BINS:-}; do
	cp "$b" "$t/opt/rdmacheck/"
	find_lib "$(basename "$b")" >/dev/null || done_lib[$(basename "$b")]=1
	add_obj "$b"
done
if [ -n "${RXE_DEBUG_SCRIPT:-}" ]; then cp "$RXE_DEBUG_SCRIPT" "$t/etc/rxe/debug.sh"; fi
ipbin=$(in_root "$IP") || die "no $IP in $SYSROOT"
rdmabin=$(in_root "$RDMA") || die "no $RDMA in $SYSROOT"
cp "$ipbin" "$t/opt/iproute2/ip"; add_obj "$ipbin"
cp "$rdmabin" "$t/opt/iproute2/rdma"; add_obj "$rdmabin"
provdir=/usr/lib/x86_64-linux-gnu/libibverbs
nprov=0
for p in "$sysroot$provdir"/*.so; do
	[ -e "$p" ] || continue
	real=$(in_root "$provdir/$(basename "$p")") || continue
	cp "$real" "$t$provdir/$(basename "$p")"
	add_obj "$real"; nprov=$((nprov + 1))
done
ls "$t$provdir"/librxe-* >/dev/null 2>&1 ||
	die "no rxe provider (librxe-rdmav*.so) in $SYSROOT$provdir"
cp "$sysroot"/etc/libibverbs.d/*.driver "$t/etc/libibverbs.d/" 2>/dev/null ||
	die "no /etc/libibverbs.d/*.driver in $SYSROOT"
queue+=(libgcc_s.so.1)
# The test harness is the suite's, not the stack's: always the host's cmocka,
# whose ABI the suite was built against (sid's cmocka 2 dropped 1.x symbols
# and prints failures in another form).
host_cmocka=$(ldconfig -p | awk '!p && $1 == "libcmocka.so.0" { p = $NF } END { print p }')
[ -n "$host_cmocka" ] || die "no libcmocka.so.0 on the host"
cp -L "$host_cmocka" "$t/usr/lib/x86_64-linux-gnu/libcmocka.so.0"
done_lib[libcmocka.so.0]=1
add_obj "$host_cmocka"

while [ ${#queue[@]} -gt 0 ]; do
	so=${queue[0]}; queue=("${queue[@]:1}")
	[ -n "${done_lib[$so]:-}" ] && continue
	done_lib[$so]=1
	real=$(find_lib "$so") || die "library $so (needed by the guest's programs) is not in $SYSROOT"
	cp "$real" "$t/usr/lib/x86_64-linux-gnu/$so"
	add_obj "$real"
done
# The dynamic loader, at the path the programs name (PT_INTERP).
interp=$(readelf -l "$build/conformance/rdmacheck-real" | sed -n "s/.*Requesting program interpreter: \(.*\)]/\1/p")
[ -n "$interp" ] || interp=/lib64/ld-linux-x86-64.so.2
ldso=$(in_root "$interp") || die "no dynamic loader $interp in $SYSROOT"
mkdir -p "$t$(dirname "$interp")"
cp "$ldso" "$t$interp"

# ---- configuration files
printf '127.0.0.1\tlocalhost\n127.0.1.1\trxe-guest\n::1\tlocalhost ip6-localhost ip6-loopback\n192.0.2.1\trxe-a\n192.0.2.2\trxe-b\n' >"$t/etc/hosts"
printf 'hosts: files\nnetworks: files\nservices: files\nprotocols: files\n' >"$t/etc/nsswitch.conf"
printf 'root:x:0:0:root:/:/bin/sh\n' >"$t/etc/passwd"
printf 'root:x:0:\n' >"$t/etc/group"
for f in /etc/services /etc/protocols; do
	if [ -r "$sysroot$f" ]; then cp "$sysroot$f" "$t$f"; elif [ -r "$f" ]; then cp "$f" "$t$f"; fi
done
cat >"$t/etc/rxe/config" <<CFG
STACK=$STACK
KVER=$KVER
SUITE_TIMEOUT=${RXE_SUITE_TIMEOUT:-900}
TEST_TIMEOUT=${RXE_TEST_TIMEOUT:-60}
WATCHDOG=${RXE_GUEST_WATCHDOG:-540}
PEER_WAIT=${RXE_PEER_WAIT:-120}
TESTS="${RXE_TESTS:-}"
SUITE_ARGS="${RXE_SUITE_ARGS:-}"
CFG
cp "$here/init" "$t/init"
# The driver's profile for this stack (rxe-<stack>, siw-<stack>) where it
# has one, else the driver's (RXE_DRIVER, from run.sh: rxe or siw).
devices=$here/../../fixtures/devices
drv=${RXE_DRIVER:-rxe}
default_profile=$devices/$drv
[ -r "$devices/$drv-$STACK" ] && default_profile=$devices/$drv-$STACK
profile=${RXE_PROFILE-$default_profile}
# Its folder comes along: a profile may include another beside it.
if [ -n "$profile" ] && [ -r "$profile" ]; then
	find "$(dirname "$profile")" -maxdepth 1 -type f -exec cp {} "$t/etc/rxe/" \;
	cp "$profile" "$t/etc/rxe/profile"
fi
# Whether this rxe has network-namespace support (per-netns UDP sockets:
# sid's 7.x has it). Without it a peer in a namespace is unreachable (6.1
# opens its socket in init_net only), and run.sh uses two guests instead.
rxe_syms=$(nm "$t/lib/modules/rdma_rxe.ko" 2>/dev/null || true)
if grep -q register_pernet_subsys <<<"$rxe_syms"; then
	echo netns >"$out/rxe-netns"
else
	echo guests >"$out/rxe-netns"
fi
chmod 755 "$t/init"

( cd "$t" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 ) | gzip -6 >"$out/initramfs.cpio.gz.new"
mv "$out/initramfs.cpio.gz.new" "$out/initramfs.cpio.gz"
say "initramfs: $(size_of "$out/initramfs.cpio.gz") ($(size_of "$t") unpacked; $(wc -l <"$t/etc/rxe/modules") modules, ${#done_lib[@]} libraries, $nprov providers, $nmw middleware files)"
