/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RDMAMOCK_PROFILE=FILE: the mock as the device a recorded profile
 * describes (rdmacheck --record-profile; the format and the one parser
 * are fixtures/profile.h). A profile's attr lines replace the attributes
 * of the personality that models that device best: mlx5 for Mellanox's
 * vendor id, generic (rdma_rxe's behaviour) for the rest; and with no
 * RDMAMOCK_TOPOLOGY the fabric is that one device, under the name it had.
 * What the profile records and the mock cannot be (a second port, an MTU
 * of its own) is said once on stderr, naming the line, and the device
 * keeps the mock's. A profile with no attr lines replays nothing: a
 * hand-written profile only declares, for the suite. Every process reads
 * the variable for itself, as it reads RDMAMOCK_TOPOLOGY. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "control/mock.h"
#include "profile.h"

#define MELLANOX_VENDOR_ID 0x02c9

/* The recorded deviations the mock can behave as, each where it acts:
 * - ibverbs/post.c: WC_POST_IN_ERR, WC_RECV_IN_ERR_WAITS (kernel 6.1's rxe
 *   completes nothing posted to a QP in ERR), MW_BIND_ERR and
 *   MW_LOCAL_INV_TYPE1 (its statuses for a failed bind or invalidation);
 * - ibverbs/mw.c: MW_BOUNDS; ibverbs/recv.c: MW_SEND_WITH_INV;
 * - ibverbs/mr.c: REG_MR_READABLE (6.1's FOLL_FORCE);
 * - ibverbs/wr.c: QP_EX_SGE_LIST, QP_EX_INLINE_LIST[_OVER_CAPS], and
 *   ibverbs/cq_ex.c: CQ_EX_BATCH (rdma-core 44's rxe provider);
 * - ibverbs/qp.c: SRQ_LAST_WQE_REACHED, the other way round: the generic
 *   device follows 6.1 and raises no event, and a replayed rxe profile
 *   that does not record it raises it (7.2);
 * - siw's (kernel 6.1, rdma-core 44): SRQ_QP_POST_RECV (ibverbs/post.c),
 *   SRQ_CREATE_NO_SGE and SRQ_CREATE_LIMIT_IGNORED (ibverbs/srq.c),
 *   CQ_ARM_SOLICITED (ibverbs/cq.c), and siw_query_qp's missing state
 *   (ibverbs/qp.c), which every clause of one_cause fails by;
 * - fabric/cm.c: CM_QP_ACK_TIMEOUT (6.1's RoCE packet life time, 18);
 * - rdmacm/rsocket.c: RFCNTL_FD (rdma-core 44's rsocket takes no type
 *   flags). */
static const char *const replayable[] = {
	"WC_POST_IN_ERR", "WC_RECV_IN_ERR_WAITS", "MW_BIND_ERR", "MW_LOCAL_INV_TYPE1",
	"MW_BOUNDS", "MW_SEND_WITH_INV", "REG_MR_READABLE", "QP_EX_SGE_LIST",
	"QP_EX_INLINE_LIST", "QP_EX_INLINE_LIST_OVER_CAPS", "CQ_EX_BATCH",
	"SRQ_LAST_WQE_REACHED", "CM_QP_ACK_TIMEOUT", "RFCNTL_FD", "SRQ_QP_POST_RECV",
	"SRQ_CREATE_NO_SGE", "SRQ_CREATE_LIMIT_IGNORED", "CQ_ARM_SOLICITED",
};

/* Clauses a device fails for one cause, which the mock replays where the
 * profile records any of them: kernel 6.1's siw_query_qp sets no state. */
static const char *const one_cause[] = {
	"CM_QP_INIT", "CM_STATE_CONNECT", "CREATE_QP_REFUSED", "CM_QP_RTS", "CM_QP_DISCONNECT_ERR",
	"CM_EVENT_REJECTED_FIELDS", "END_BOTH_AT_ONCE", "DISCONNECT_NOT_CONNECTED",
	"SET_OPTION_IB_PATH", "CREATE_EP_AI_ROUTE", "CREATE_QP_EX", "END_SYNC_ID",
};

static bool listed(const char *const *list, size_t n, const char *clause)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], clause))
			return true;
	return false;
}

#define LISTED(list, clause) listed(list, sizeof list / sizeof list[0], clause)

static struct {
	pthread_once_t once;
	bool on;
	enum rdmamock_personality as;
	struct fab_profile attrs;
	struct rp_profile profile;
	char topology[FAB_NAME_MAX + 64];
} replay = { .once = PTHREAD_ONCE_INIT };

static void not_replayed(const struct rp_profile *p, enum rp_attr_id id, const char *mock)
{
	mock_log("RDMAMOCK_PROFILE: attr %s %s is not replayed: the mock's device has %s",
		 rp_attr_key(id), p->text[id], mock);
}

/* A number attribute into a field of the profile, when the profile has it. */
#define TAKE(field)                                                     \
	do {                                                            \
		if (p->has[RP_ATTR_##field])                            \
			a->field = (__typeof__(a->field))p->num[RP_ATTR_##field]; \
	} while (0)

static void take_attrs(const struct rp_profile *p, struct fab_profile *a)
{
	if (p->has[RP_ATTR_fw_ver])
		a->fw_ver = p->text[RP_ATTR_fw_ver];
	TAKE(vendor_id); TAKE(vendor_part_id); TAKE(hw_ver); TAKE(max_qp);
	TAKE(max_qp_wr); TAKE(device_cap_flags); TAKE(max_sge); TAKE(max_sge_rd);
	TAKE(max_cq); TAKE(max_cqe); TAKE(max_mr); TAKE(max_mr_size); TAKE(max_mw);
	TAKE(max_pd); TAKE(max_qp_rd_atom); TAKE(max_qp_init_rd_atom); TAKE(atomic_cap);
	TAKE(max_mcast_grp); TAKE(max_mcast_qp_attach); TAKE(max_ah); TAKE(max_srq);
	TAKE(max_srq_wr); TAKE(max_srq_sge); TAKE(max_pkeys); TAKE(local_ca_ack_delay);
	TAKE(max_dm_size); TAKE(hca_core_clock); TAKE(gid_tbl_len); TAKE(port_cap_flags);
	TAKE(max_msg_sz); TAKE(pkey_tbl_len); TAKE(active_width); TAKE(active_speed);
	TAKE(transport);
	if (p->has[RP_ATTR_device_cap_flags]) {
		a->xrc = a->device_cap_flags & IBV_DEVICE_XRC;
		a->srq_resize = a->device_cap_flags & IBV_DEVICE_SRQ_RESIZE;
	}
	if (p->has[RP_ATTR_completion_timestamp_mask])
		a->completion_timestamp = p->num[RP_ATTR_completion_timestamp_mask] != 0;
	if (p->has[RP_ATTR_gid_types]) {
		const char *t = p->text[RP_ATTR_gid_types];

		if (!strcmp(t, "roce-v1,roce-v2") || !strcmp(t, "roce-v2,roce-v1"))
			a->gid_roce_v1 = true;
		else if (!strcmp(t, "roce-v2") || !strcmp(t, "ib") || !strcmp(t, "-"))
			a->gid_roce_v1 = false;
		else
			not_replayed(p, RP_ATTR_gid_types, a->gid_roce_v1 ? "roce-v1,roce-v2" : "roce-v2");
	}
}

/* What the mock's devices are whatever the profile says: one port; RoCE
 * (InfiniBand only as an mlx5 device's +ib port, which a topology names);
 * MTU 4096, active 1024 on RoCE. */
static void check_fixed(const struct rp_profile *p)
{
	static const struct {
		enum rp_attr_id id;
		uint64_t value;
		const char *mock;
	} fixed[] = {
		{ RP_ATTR_phys_port_cnt, 1, "one port" },
		{ RP_ATTR_link_layer, IBV_LINK_LAYER_ETHERNET, "an Ethernet (RoCE) port" },
		{ RP_ATTR_max_mtu, IBV_MTU_4096, "max_mtu 4096" },
		{ RP_ATTR_active_mtu, IBV_MTU_1024, "active_mtu 1024 (RoCE on a 1500-byte netdev)" },
	};

	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (p->has[fixed[i].id] && p->num[fixed[i].id] != fixed[i].value)
			not_replayed(p, fixed[i].id, fixed[i].mock);
}

static bool can_replay(const char *clause)
{
	return LISTED(replayable, clause) || LISTED(one_cause, clause);
}

/* One line for the deviations the profile records and the mock cannot be:
 * there the device's personality does as it always does. */
static void say_unreplayed(const struct rp_profile *p)
{
	char list[512] = "";
	size_t n = 0, len;

	for (size_t i = 0; i < p->ndeviations; i++) {
		if (can_replay(p->deviations[i].word))
			continue;
		len = strlen(list);
		if (len + strlen(p->deviations[i].word) + 8 < sizeof list)
			snprintf(list + len, sizeof list - len, "%s%s", n ? ", " : "", p->deviations[i].word);
		n++;
	}
	if (n)
		mock_log("RDMAMOCK_PROFILE: %zu of its %zu deviations are not replayed (%s): there the "
			 "device behaves as the mock's %s personality", n, p->ndeviations, list,
			 replay.as == RDMAMOCK_MLX5 ? "mlx5" : "generic");
}

static void replay_load(void)
{
	const char *path = getenv("RDMAMOCK_PROFILE");
	struct rp_profile *p = &replay.profile;
	const char *name;
	char err[2048];
	bool any = false;

	if (!path || !*path)
		return;
	if (rp_load(path, p, err, sizeof err))
		mock_abort("RDMAMOCK_PROFILE", "%s", err);
	for (int i = 0; i < RP_ATTR__COUNT; i++)
		any |= p->has[i];
	if (!any) {
		mock_log("RDMAMOCK_PROFILE: %s (profile %s) has no attr lines, so nothing to replay: "
			 "its devices are the mock's own (rdmacheck --record-profile writes them)",
			 path, p->name);
		return;
	}
	replay.as = p->has[RP_ATTR_vendor_id] && p->num[RP_ATTR_vendor_id] == MELLANOX_VENDOR_ID ?
			    RDMAMOCK_MLX5 : RDMAMOCK_GENERIC;
	replay.attrs = *fab_personality_profile(replay.as);
	take_attrs(p, &replay.attrs);
	check_fixed(p);
	name = p->has[RP_ATTR_device] ? p->text[RP_ATTR_device] : "mock0";
	if (strlen(name) >= FAB_NAME_MAX || name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
							  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")])
		mock_abort("RDMAMOCK_PROFILE", "%s: attr device %s is not a device name the mock can give",
			   path, name);
	snprintf(replay.topology, sizeof replay.topology, "%s=%s:127.0.0.1/8,::1", name,
		 replay.as == RDMAMOCK_MLX5 ? "mlx5" : "generic");
	say_unreplayed(p);
	replay.on = true;
}

const struct fab_profile *fab_profile_of(enum rdmamock_personality p)
{
	pthread_once(&replay.once, replay_load);
	if (replay.on && (p == RDMAMOCK_MLX5) == (replay.as == RDMAMOCK_MLX5))
		return &replay.attrs;
	return fab_personality_profile(p);
}

const char *fab_replay_topology(void)
{
	pthread_once(&replay.once, replay_load);
	return replay.on ? replay.topology : NULL;
}

bool fab_replay_records(const char *clause)
{
	pthread_once(&replay.once, replay_load);
	if (!replay.on || !can_replay(clause))
		return false;
	if (!LISTED(one_cause, clause))
		return rp_deviation(&replay.profile, clause) != NULL;
	for (size_t i = 0; i < sizeof one_cause / sizeof one_cause[0]; i++)
		if (rp_deviation(&replay.profile, one_cause[i]))
			return true;
	return false;
}

bool fab_replay_is(enum rdmamock_personality p)
{
	pthread_once(&replay.once, replay_load);
	return replay.on && (p == RDMAMOCK_MLX5) == (replay.as == RDMAMOCK_MLX5);
}

bool fab_replay_deviates(enum rdmamock_personality p, const char *clause)
{
	return fab_replay_records(clause) && fab_replay_is(p);
}

bool fab_replay_lacks(enum rdmamock_personality p, const char *capability)
{
	return fab_replay_is(p) && rp_lacks(&replay.profile, capability);
}
