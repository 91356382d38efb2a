#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Device profiles both ways, on the mock: --record-profile writes the
# mock's rxe0 as a profile; replayed (RDMAMOCK_PROFILE, rdmamock-run
# --profile, rdmacheck --profile) the mock is that device, so a second
# recording gives the same attributes; an edited profile is replayed as
# edited, and what the mock cannot be is said; recorded deviations make
# the mock fail as the device did; and the mock as each recorded device
# gives that device's verdicts.
#   ci/check-profile.sh BUILD_DIR OUTDIR
set -euo pipefail
build=$1 out=$2
. ci/mock-env.sh "$build"
mock=$build/conformance/rdmacheck-mock
mkdir -p "$out"
fail() { echo "check-profile: $*" >&2; exit 1; }
queries=(-t 'ibv_query_device*' -t 'ibv_query_port*' -t 'ibv_query_gid*')
attrs() { grep '^attr ' "$1"; }

# round_trip DEVICE ADDR: DEVICE (its address ADDR) recorded in the default
# topology, then replayed, where the fabric is DEVICE alone at 127.0.0.1,
# and recorded again: the same attributes.
round_trip() {
	local dev=$1 addr=$2
	env -u RDMAMOCK_PROFILE RDMACHECK_DEVICE="$dev" RDMACHECK_ADDR="$addr" "$mock" \
		--profile fixtures/devices/mock "${queries[@]}" --record-profile "$out/$dev" \
		>"$out/record-$dev.log" 2>&1 || fail "recording $dev failed (see $out/record-$dev.log)"
	grep -qx "name $dev" "$out/$dev" || fail "$out/$dev: no 'name $dev' line"
	[ "$(attrs "$out/$dev" | wc -l)" -ge 40 ] || fail "$out/$dev: fewer than 40 attr lines"
	grep -Eq "^attr device +$dev\$" "$out/$dev" || fail "$out/$dev: not the device $dev"
	RDMAMOCK_PROFILE=$(readlink -f "$out/$dev") "$mock" --profile fixtures/devices/mock "${queries[@]}" \
		--record-profile "$out/$dev-again" >"$out/replay-$dev.log" 2>&1 ||
		fail "the suite's queries on the replayed $dev failed (see $out/replay-$dev.log)"
	diff <(attrs "$out/$dev") <(attrs "$out/$dev-again") >"$out/replay-$dev.diff" ||
		fail "replayed, $dev reports other attributes (see $out/replay-$dev.diff)"
	echo "check-profile: $dev recorded ($(attrs "$out/$dev" | wc -l) attributes) and replayed: the same again"
}
round_trip rxe0 127.0.0.2
# mlx5_0: the mlx5 personality, with mlx5dv's attributes
round_trip mlx5_0 127.0.0.1
grep -Eq '^attr mlx5dv_flags +0x' "$out/mlx5_0" || fail "$out/mlx5_0: no mlx5dv_flags"

# an edited profile: another device, as edited
sed -e 's/^attr device .*/attr device siw7/' -e 's/^attr max_qp .*/attr max_qp 4242/' \
	-e 's/^attr atomic_cap .*/attr atomic_cap none/' -e 's/^attr transport .*/attr transport iwarp/' \
	-e 's/^attr active_mtu .*/attr active_mtu 2048/' \
	"$out/rxe0" >"$out/edited"
"$build"/bin/rdmamock-run --profile "$out/edited" "$mock" --profile fixtures/devices/mock "${queries[@]}" \
	-t 'ibv_post_send__ud_mtu' --record-profile "$out/edited-again" >"$out/edited.log" 2>&1 ||
	fail "the queries on the edited profile failed (see $out/edited.log)"
for want in 'device +siw7' 'max_qp +4242' 'atomic_cap +none' 'transport +iwarp' 'active_mtu +1024'; do
	grep -Eq "^attr $want\$" "$out/edited-again" || fail "edited profile replayed: no 'attr $want' (see $out/edited-again)"
done
grep -q 'RDMAMOCK_PROFILE: attr active_mtu 2048 is not replayed' "$out/edited.log" ||
	fail "an active_mtu the mock cannot give is not said (see $out/edited.log)"
grep -q '^lacks ud  *recorded: ' "$out/edited-again" ||
	fail "on a replayed iWARP device a UD QP is not skipped as lacking ud (see $out/edited-again)"
echo "check-profile: an edited profile replayed as edited (iWARP, max_qp 4242, no atomics), active_mtu 2048 said not replayed"

# rdmacheck --profile on the mock replays a recorded profile
"$build"/bin/rdmacheck --profile "$out/edited" -t 'ibv_query_device*' --record-profile "$out/frontend" \
	>"$out/frontend.log" 2>&1 || fail "rdmacheck --profile $out/edited failed (see $out/frontend.log)"
grep -Eq '^attr max_qp +4242$' "$out/frontend" || fail "rdmacheck --profile did not replay it"

# a bad profile stops rdmamock-run before the program, naming the line
printf 'name bad\nattr max_qp lots\n' >"$out/bad"
if "$build"/bin/rdmamock-run --profile "$out/bad" true 2>"$out/bad.log"; then fail "rdmamock-run took a bad profile"; fi
grep -q "$out/bad:2: attr max_qp: 'lots' is not a number" "$out/bad.log" || fail "bad profile: $(cat "$out/bad.log")"
echo "check-profile: rdmacheck --profile replays it; a bad profile is named by rdmamock-run before anything runs"

# recorded deviations replayed: rxe0's recording with rxe44's deviations
# (fixtures/devices/rxe and rxe-debian12) makes the mock fail those clauses as
# kernel 6.1's rxe and rdma-core 44's provider do; the suite, told of them,
# reports each as a deviation
{ cat "$out/rxe0"; grep -h '^deviation ' fixtures/devices/rxe fixtures/devices/rxe-debian12; } >"$out/rxe44-like"
deviating=(ibv_next_poll__batch ibv_wr_set_sge_list__concatenated ibv_wr_set_inline_data_list__concatenated
	ibv_wr_complete__inline_list_over_caps_not_mlx5 ibv_reg_mr__inaccessible_memory ibv_bind_mw__bounds
	ibv_post_send__send_with_inv ibv_post_send__bind_mw_without_bind_access ibv_post_send__local_inv_type1
	ibv_get_async_event__last_wqe_reached)
RDMAMOCK_PROFILE=$(readlink -f "$out/rxe44-like") "$mock" --profile "$out/rxe44-like" \
	$(printf -- '-t %s ' "${deviating[@]}") --results "$out/rxe44-like.tsv" >"$out/rxe44-like.log" 2>&1 ||
	fail "the replayed deviations failed the run (see $out/rxe44-like.log)"
for t in "${deviating[@]}"; do
	v=$(awk -F '\t' -v t="$t" '$1 == t { print $3 }' "$out/rxe44-like.tsv")
	[ "$v" = deviation ] || fail "$t replayed as rxe44: $v, not deviation (see $out/rxe44-like.log)"
done
# and the other way: a replayed rxe profile that does not record
# SRQ_LAST_WQE_REACHED raises the event, as rxe on kernel 7.2
RDMAMOCK_PROFILE=$(readlink -f "$out/rxe0") "$mock" --profile "$out/rxe0" \
	-t ibv_get_async_event__last_wqe_reached >"$out/rxe65-like.log" 2>&1 ||
	fail "replayed without SRQ_LAST_WQE_REACHED, the last WQE event did not come (see $out/rxe65-like.log)"
echo "check-profile: ${#deviating[@]} of rxe44's deviations replayed, each failing as on the device; without SRQ_LAST_WQE_REACHED the event comes, as on 7.2"

# the replay matrix: the mock as each device whose run is recorded in
# fixtures/devices/recorded (its profile and its verdicts, from the guests)
# gives that device's verdict on every test both ran
for d in fixtures/devices/recorded/*/; do
	n=$(basename "$d")
	JOBS=2 bash ci/rxe/replay.sh "$build" "$out" "$n" "$d" >"$out/replay-$n.out" 2>&1 ||
		fail "the mock as $n: $(cat "$out/replay-$n.out")"
	echo "check-profile: $(head -n 1 "$out/replay-$n.out")"
done
