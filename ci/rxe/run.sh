#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# One soft-RoCE stack end to end:
#   ci/rxe/run.sh STACK BUILD_DIR        (STACK: debian12 | sid | siw-debian12)
# siw-STACK: the same stack with soft-iWARP (siw, built by siw.sh) as the
# driver under test in place of rdma_rxe: siw0 and siw1 for rxe0 and rxe1,
# the two-host run always on two guests.
# 1. fetch or reuse the stack (kernel, and for sid the userspace) in the cache;
# 2. build the initramfs with this build's binaries;
# 3. boot it in qemu (KVM if it works here, else TCG), each guest bounded by
#    RXE_GUEST_TIMEOUT (default 900 s):
#    - netns mode (the kernel's rxe has network-namespace support): one guest
#      runs the single-host run, then the two-host run with the peer in a
#      network namespace;
#    - guests mode (no such support, e.g. Debian 12's 6.1): one guest runs the
#      single-host run; then two guests, client and peer, joined by a qemu
#      dgram link (unix sockets, no host network), run the two-host run.
#    RXE_TWOHOST=netns|guests overrides the choice.
# 4. take the results from each guest's second serial port and put them in
#    BUILD_DIR/rxe/STACK/{single,twohost}/ and BUILD_DIR/rxe/STACK/console.log.
# Exit 0 when every run that should happen came back (failing tests are
# judged by check.sh); 1 with one line naming what failed otherwise.
set -euo pipefail
stack=$1 build=$2
[ -n "$stack" ] && [ -n "$build" ] || { echo "usage: ci/rxe/run.sh STACK BUILD_DIR" >&2; exit 2; }
driver=rxe base=$stack
case $stack in siw-*) driver=siw base=${stack#siw-} ;; esac
here=$(cd "$(dirname "$0")" && pwd)
RXE_TAG="rxe $stack"
RXE_STACK=$stack
. "$here/lib.sh"

out=$build/rxe/$stack
rm -rf "$out"   # nothing stale from an earlier run
mkdir -p "$out"
export RXE_TIMINGS=${RXE_TIMINGS:-$build/rxe/timings.tsv}
guest_timeout=${RXE_GUEST_TIMEOUT:-2400}
# The guest's own watchdog fires first, so partial results still come back.
if [ "$guest_timeout" -gt 180 ]; then wd=$((guest_timeout - 45)); else wd=$((guest_timeout * 3 / 4)); fi
export RXE_GUEST_WATCHDOG=${RXE_GUEST_WATCHDOG:-$wd}
t_all=$(now)

stage_start fetch
bash "$here/stack-$base.sh" || die "preparing the $base stack failed (see above)"
if [ $driver = siw ]; then bash "$here/siw.sh" "$base" || die "building siw for the $base stack failed (see above)"; fi
envf=$RXE_CACHE/$base/stack.env
[ -r "$envf" ] || die "no $envf after preparing the stack"
# shellcheck disable=SC1090
. "$envf"
stage_end "kernel $KVER"

stage_start initramfs
RXE_DRIVER=$driver bash "$here/mkinitramfs.sh" "$envf" "$build" "$out" || die "building the initramfs failed (see above)"
stage_end
mode=${RXE_TWOHOST:-$(cat "$out/rxe-netns")}
# siw's sockets in a network namespace are untried here: two guests.
[ $driver = rxe ] || mode=${RXE_TWOHOST:-guests}

# What this stack is made of, for the report.
{
	echo "stack: $stack"
	echo "kernel: $KVER ($KERNEL_PKG)"
	echo "driver: $driver"
	if [ "$base" = debian12 ]; then
		dpkg-query -W -f='host: ${Package}=${Version}\n' librdmacm1 libibverbs1 ibverbs-providers \
			libc6 libgcc-s1 libnl-3-200 libnl-route-3-200 libcmocka0 libfiu0 iproute2 busybox-static 2>/dev/null
	else
		echo "$PACKAGES" | tr ' ' '\n' | sed 's/^/sid: /'
		dpkg-query -W -f='host: ${Package}=${Version}\n' busybox-static 2>/dev/null
	fi
	echo "two-host mode: $mode"
} >"$out/versions.txt"

# ---- accelerator: KVM when it works here, else TCG. "Works" means a tiny
# guest boots: on some nested hosts /dev/kvm opens but qemu aborts or the
# guest never runs. The answer is remembered per host kernel and qemu version.
kvm_works() {
	local key probe d ans
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	key="$(uname -r) $(qemu-system-x86_64 --version | head -n 1)"
	probe=$RXE_CACHE/kvm-probe
	if [ -r "$probe" ] && [ "$(head -n 1 "$probe")" = "$key" ]; then
		[ "$(sed -n 2p "$probe")" = yes ]
		return
	fi
	d=$(mktemp -d)
	mkdir -p "$d/root/bin"
	cp /bin/busybox "$d/root/bin/busybox"
	printf '#!/bin/busybox sh\n/bin/busybox echo KVM-PROBE-OK\n/bin/busybox poweroff -f\n' >"$d/root/init"
	chmod 755 "$d/root/init"
	( cd "$d/root" && find . | cpio -o -H newc --quiet -R 0:0 ) | gzip -1 >"$d/probe.cpio.gz"
	( timeout --kill-after=5 30 qemu-system-x86_64 -nodefaults -nic none -no-reboot -accel kvm -cpu max \
		-smp 2 -m 256 -display none -monitor none -serial "file:$d/console" \
		-kernel "$VMLINUZ" -initrd "$d/probe.cpio.gz" \
		-append "console=ttyS0 panic=-1 loglevel=1 rdinit=/init" </dev/null ) >/dev/null 2>&1 || true
	if grep -q -a KVM-PROBE-OK "$d/console" 2>/dev/null; then ans=yes; else ans=no; fi
	rm -rf "$d"
	mkdir -p "$RXE_CACHE"
	printf '%s\n%s\n' "$key" "$ans" >"$probe"
	[ $ans = yes ]
}
accel=${RXE_ACCEL:-}
if [ -z "$accel" ]; then
	stage_start kvm-probe
	if kvm_works; then accel=kvm; else accel=tcg; fi
	stage_end "$accel"
fi
case $accel in
kvm) accel_opts=(-accel kvm -cpu max) ;;
*)   accel_opts=(-accel tcg,thread=multi -cpu max) ;;
esac

# ---- guests
# boot NAME ROLE SMP [QEMU_OPTS...]: start a guest in the background; sets
# qpid_NAME. Its console goes to console-NAME.log, its results to
# results-NAME.serial (ttyS1).
declare -A qpid=() tpid=()
boot() {
	local name=$1 role=$2 smp=$3
	shift 3
	rm -f "$out/console-$name.log" "$out/results-$name.serial"
	timeout --kill-after=10 "$guest_timeout" qemu-system-x86_64 \
		-nodefaults -nic none -no-reboot "${accel_opts[@]}" -smp "$smp" -m 1024 \
		-display none -monitor none \
		-chardev file,id=con,path="$out/console-$name.log" -serial chardev:con \
		-chardev file,id=res,path="$out/results-$name.serial" -serial chardev:res \
		-kernel "$VMLINUZ" -initrd "$out/initramfs.cpio.gz" \
		-append "console=ttyS0,115200 panic=-1 loglevel=4 rdinit=/init rxe.role=$role rxe.driver=$driver" \
		"$@" </dev/null >"$out/qemu-$name.log" 2>&1 &
	qpid[$name]=$!
	# Show the guest's progress lines while it runs.
	tail -n +1 -F --pid="${qpid[$name]}" "$out/console-$name.log" 2>/dev/null |
		grep --line-buffered -a '^rxe-guest:' | sed -u "s/^rxe-guest:/[$RXE_TAG] $name/" &
	tpid[$name]=$!
}
# wait_guest NAME: wait for it; sets rc_NAME and says what went wrong.
declare -A qrc=()
wait_guest() {
	local name=$1 rc=0
	wait "${qpid[$name]}" || rc=$?
	qrc[$name]=$rc
	wait "${tpid[$name]}" 2>/dev/null || true   # the last progress lines
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		say "$name: qemu killed after $guest_timeout s; its last console line: $(grep -a -v '^\s*$' "$out/console-$name.log" | tail -n 1 | tr -d '\r' | cut -c1-160)"
	elif [ "$rc" -ne 0 ]; then
		say "$name: qemu exited with $rc: $(tail -n 1 "$out/qemu-$name.log")"
	fi
}
# extract NAME: decode the guest's results into $out/guest-NAME; 0 if they
# check out. The block is taken from ttyS1, else from the console.
extract() {
	local name=$1 f begin sum size why
	for f in "$out/results-$name.serial" "$out/console-$name.log"; do
		[ -s "$f" ] || continue
		tr -d "\r" <"$f" >"$out/results-$name.txt"
		begin=$(grep -a -m1 "^RDMACHECK-RESULTS-BEGIN " "$out/results-$name.txt") || continue
		read -r _ sum size <<<"$begin"
		sed -n "/^RDMACHECK-RESULTS-BEGIN $sum/,/^RDMACHECK-RESULTS-END $sum/p" "$out/results-$name.txt" |
			sed '1d;$d' | base64 -d >"$out/results-$name.tgz" 2>/dev/null || continue
		[ "$(md5sum <"$out/results-$name.tgz" | cut -d' ' -f1)" = "$sum" ] ||
			{ say "$name: the results in $f fail their checksum"; continue; }
		rm -rf "$out/guest-$name" && mkdir -p "$out/guest-$name"
		tar -xzf "$out/results-$name.tgz" -C "$out/guest-$name" || continue
		rm -f "$out/results-$name.txt"
		return 0
	done
	case ${qrc[$name]} in
	0) why="the guest powered off without sending results" ;;
	124|137) why="the guest timed out after $guest_timeout s" ;;
	*) why="qemu failed (exit ${qrc[$name]}: $(tail -n 1 "$out/qemu-$name.log"))" ;;
	esac
	grep -q -a 'Kernel panic' "$out/console-$name.log" 2>/dev/null &&
		why="kernel panic: $(grep -a -m1 'Kernel panic' "$out/console-$name.log" | tr -d '\r')"
	say "$([ "$name" = peer ] || echo "FAILED: ")$name: no results came back: $why; see $out/console-$name.log"
	return 1
}

status=0
guests=()
if [ "$mode" = netns ]; then
	stage_start boot+tests
	say "one guest, kernel $KVER ($accel, 2 cpus, at most $guest_timeout s); progress:"
	boot main all 2
	wait_guest main
	stage_end "qemu exit ${qrc[main]}"
	guests=(main)
else
	stage_start boot+single
	say "single host: one guest, kernel $KVER ($accel, 2 cpus, at most $guest_timeout s); progress:"
	boot main single 2
	wait_guest main
	stage_end "qemu exit ${qrc[main]}"
	stage_start boot+twohost
	say "two hosts: two guests (client, peer) on a qemu dgram link, kernel $KVER ($accel); progress:"
	sock=$(mktemp -d)
	dgram_link() { echo "-netdev dgram,id=n0,local.type=unix,local.path=$sock/$1,remote.type=unix,remote.path=$sock/$2"; }
	# shellcheck disable=SC2046
	boot peer peer 1 $(dgram_link peer client) -device e1000,netdev=n0,mac=52:54:00:12:34:02
	# shellcheck disable=SC2046
	boot client client 2 $(dgram_link client peer) -device e1000,netdev=n0,mac=52:54:00:12:34:01
	wait_guest client
	# The peer powers off when the client says stop; give it 60 s more.
	for _ in $(seq 600); do kill -0 "${qpid[peer]}" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "${qpid[peer]}" 2>/dev/null; then
		say "peer: still running 60 s after the client; stopping it"
		kill "${qpid[peer]}" 2>/dev/null || true
	fi
	wait_guest peer
	rm -rf "$sock"
	stage_end "qemu exit client ${qrc[client]}, peer ${qrc[peer]}"
	guests=(main client peer)
fi

# ---- results into place
for g in "${guests[@]}"; do
	{ echo "==== guest $g (console-$g.log)"; tr -d '\r' <"$out/console-$g.log" 2>/dev/null; } >>"$out/console.log"
	if ! extract "$g"; then
		# The peer only serves; the client's results are the run.
		if [ "$g" = peer ]; then say "peer: (its serve.log is missing; the two-host results come from the client)"; else status=1; fi
		continue
	fi
	r=$out/guest-$g/results
	for run in single twohost; do
		[ -d "$r/$run" ] || continue
		mkdir -p "$out/$run"
		cp -r "$r/$run/." "$out/$run/"
	done
	if [ -d "$r/peer" ]; then
		mkdir -p "$out/twohost"
		for f in serve.log serve.exit skipped; do
			if [ -e "$r/peer/$f" ]; then cp "$r/peer/$f" "$out/twohost/peer-$f"; fi
		done
	fi
	for f in guest.log dmesg.log debug.log; do
		if [ -e "$r/$f" ]; then cp "$r/$f" "$out/$g-$f"; fi
	done
	while read -r line; do
		[ -n "$line" ] || continue
		say "FAILED in guest $g: $line"
		status=1
	done <"$r/failures"
	say "$g: guest uptime $(cat "$r/uptime" 2>/dev/null || echo '?') s"
done

for run in single twohost; do
	d=$out/$run
	if [ -e "$d/skipped" ]; then
		say "$run: skipped: $(cat "$d/skipped")"
	elif [ ! -s "$d/rdmacheck.tsv" ]; then
		say "$run: MISSING: no results (rdmacheck.tsv) came back"
		status=1
	else
		counts=$(awk -F '\t' '!/^#/ && NF >= 3 { n[$3]++ } END { printf "%d passed, %d failed, %d skipped, %d known deviations", n["pass"], n["fail"], n["skip"], n["deviation"] }' "$d/rdmacheck.tsv")
		say "$run: $counts (runner exit $(cat "$d/exit" 2>/dev/null || echo '?')); $d/"
	fi
done
if [ -s "$out/single/examples.log" ]; then
	say "examples: $(awk '/^\$ / { n = $2 } /^exit: / { printf "%s%s exit %s", sep, n, $2; sep = ", " }' "$out/single/examples.log")"
fi
say "total $(awk -v a="$t_all" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s; initramfs $(size_of "$out/initramfs.cpio.gz")"
exit $status
