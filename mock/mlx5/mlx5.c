/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The drop-in libmlx5: the direct-verbs calls the suite needs, with
 * providers/mlx5/mlx5.c's behaviour. Calls reach the device's ops table;
 * a device of another personality has none, and every call is
 * EOPNOTSUPP, as upstream's mlx5_get_dv_ops gives for a non-mlx5 device. */
#include <infiniband/mlx5dv.h>
#include <string.h>

#include "fabric/fabric.h"
#include "control/mock.h"

#define LIB "mlx5"

struct dv_ops {
	int (*query_device)(struct ibv_context *ctx, struct mlx5dv_context *attrs);
	int (*modify_qp_udp_sport)(struct ibv_qp *qp, uint16_t port, uint32_t caps);
	int (*get_clock_info)(struct ibv_context *ctx, struct mlx5dv_clock_info *ci);
	int (*lag_port)(struct ibv_qp *qp);
};

/* The clock page's conversion (mlx5dv_ts_to_ns): ns = cycles * mult >> shift.
 * shift 23 keeps the rounding of mult under 4 ns a second at 156.25 MHz and
 * the product below 2^64 for 2^64 / mult cycles (over 30 minutes); the
 * kernel refreshes its page well inside that, and the period reported is
 * how often a program that keeps a copy should read it again. */
#define CLOCK_SHIFT 23
#define CLOCK_UPDATE_NS (10ull * 1000000000u)

/* What upstream's _mlx5dv_query_device answers: CQE version 1 and enhanced
 * multi-packet WQEs, no BlueFlame flag (the mock maps no UAR pages), and
 * each optional block comp_mask asks for that the device reports, filled
 * with what the mock does. It compresses no CQEs and has no striding RQ,
 * software parsing, tunnel offloads, dynamic UARs, flow actions, DC
 * on-demand paging, signature, DCI streams, DMA memcpy or crypto engines:
 * those read zero, as on a device without them. It has a clock page (its
 * refresh period). It maps no clock register and has one port, no LAG:
 * those two blocks stay out of comp_mask, as the provider leaves them out.
 * A bit the caller did not ask for, or that this build does not know, is
 * never set, and its block never written: the caller's struct may be an
 * older, shorter one. */
static int query_device(struct ibv_context *ctx, struct mlx5dv_context *attrs)
{
	const uint64_t answered =
		MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_SWP |
		MLX5DV_CONTEXT_MASK_STRIDING_RQ | MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS |
		MLX5DV_CONTEXT_MASK_DYN_BFREGS | MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE |
		MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS | MLX5DV_CONTEXT_MASK_DC_ODP_CAPS |
		MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD | MLX5DV_CONTEXT_MASK_DCI_STREAMS |
		MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH | MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD;
	uint64_t asked = attrs->comp_mask;

	(void)ctx;
	attrs->version = 0;
	attrs->flags = MLX5DV_CONTEXT_FLAGS_CQE_V1 | MLX5DV_CONTEXT_FLAGS_MPW_ALLOWED |
		       MLX5DV_CONTEXT_FLAGS_ENHANCED_MPW;
#define ZERO_IF_ASKED(bit, field)                                    \
	do {                                                         \
		if (asked & (bit))                                   \
			memset(&attrs->field, 0, sizeof attrs->field); \
	} while (0)
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_CQE_COMPRESION, cqe_comp_caps);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_SWP, sw_parsing_caps);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_STRIDING_RQ, striding_rq_caps);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS, tunnel_offloads_caps);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_DYN_BFREGS, max_dynamic_bfregs);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS, flow_action_flags);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_DC_ODP_CAPS, dc_odp_caps);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD, sig_caps);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_DCI_STREAMS, dci_streams_caps);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH, max_wr_memcpy_length);
	ZERO_IF_ASKED(MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD, crypto_caps);
#undef ZERO_IF_ASKED
	if (asked & MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE)
		attrs->max_clock_info_update_nsec = CLOCK_UPDATE_NS;
	attrs->comp_mask = asked & answered;
	return 0;
}

/* The clock page as the kernel keeps it, read now: the device's cycles
 * (the counter completion timestamps come from) and the nanoseconds they
 * stand for, the remainder in frac, so that mlx5dv_ts_to_ns of a
 * completion's timestamp gives the fabric clock's time of it. */
static int get_clock_info(struct ibv_context *ctx, struct mlx5dv_clock_info *ci)
{
	uint64_t khz = fab_profile_of(RDMAMOCK_MLX5)->hca_core_clock;
	uint64_t cycles = fab_device_cycles(khz, fab_now_ns());

	(void)ctx;
	ci->last_cycles = cycles;
	ci->nsec = cycles * 1000000u / khz;
	ci->frac = ((cycles * 1000000u % khz) << CLOCK_SHIFT) / khz;
	ci->mult = (uint32_t)((1000000ull << CLOCK_SHIFT) / khz);
	ci->shift = CLOCK_SHIFT;
	ci->mask = (1ull << 48) - 1; /* completion_timestamp_mask */
	return 0;
}

/* Upstream's lag_operation_supported: only on a device with more than one
 * LAG port, which the mock's single-port devices are not. */
static int lag_port(struct ibv_qp *qp)
{
	(void)qp;
	return EOPNOTSUPP;
}

/* Rejections come from the library, before any firmware command, and
 * leave errno alone: by qp->state, its own record of the state (a QP the
 * device moved to ERR by itself is RTS there until ibv_query_qp). The
 * firmware's RTS2RTS then takes any port value, on a QP in RTS (else bad
 * resource state: EINVAL). */
static int modify_qp_udp_sport(struct ibv_qp *qp, uint16_t port, uint32_t caps)
{
	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC)
		return EOPNOTSUPP;
	if (qp->state != IBV_QPS_RTS || !(caps & FAB_CAP_UDP_SPORT))
		return EOPNOTSUPP;
	return fab_qp_set_udp_sport(qp->qp_num, port) ? EINVAL : 0;
}

static const struct dv_ops mlx5_ops = {
	.query_device = query_device,
	.modify_qp_udp_sport = modify_qp_udp_sport,
	.get_clock_info = get_clock_info,
	.lag_port = lag_port,
};

/* The fabric device behind an ibv_device, found by its GUID. */
static int device_info(struct ibv_device *device, struct fab_device_info *info)
{
	MOCK_REQUIRE(device, "mlx5dv", "device is NULL (upstream dereferences it)");
	return fab_device_by_guid(ibv_get_device_guid(device), info);
}

static const struct dv_ops *dv_ops_of(struct ibv_context *ctx, uint32_t *caps)
{
	struct fab_device_info info;

	MOCK_REQUIRE(ctx, "mlx5dv", "context is NULL (upstream dereferences it)");
	if (device_info(ctx->device, &info) || info.personality != RDMAMOCK_MLX5)
		return NULL;
	if (caps && fab_device_caps(info.serial, caps))
		return NULL;
	return &mlx5_ops;
}

MOCK_EXPORT bool mlx5dv_is_supported(struct ibv_device *device)
{
	struct fab_device_info info;

	return device_info(device, &info) == 0 && info.personality == RDMAMOCK_MLX5;
}

MOCK_EXPORT int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out)
{
	const struct dv_ops *ops;

	FAULT_POSITIVE(LIB, "mlx5dv_query_device");
	ops = dv_ops_of(ctx_in, NULL);
	if (!ops)
		return EOPNOTSUPP;
	MOCK_REQUIRE(attrs_out, "mlx5dv_query_device", "attrs_out is NULL (upstream writes it)");
	return ops->query_device(ctx_in, attrs_out);
}

MOCK_EXPORT int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport)
{
	const struct dv_ops *ops;
	uint32_t caps = 0;

	FAULT_POSITIVE(LIB, "mlx5dv_modify_qp_udp_sport");
	MOCK_REQUIRE(qp, "mlx5dv_modify_qp_udp_sport", "qp is NULL (upstream dereferences it)");
	ops = dv_ops_of(qp->context, &caps);
	if (!ops)
		return EOPNOTSUPP;
	return ops->modify_qp_udp_sport(qp, udp_sport, caps);
}

/* An extended CQ with the mlx5 attributes: its CQE size (64 or 128);
 * compression and padding refused, as on a device without them (EINVAL,
 * the provider's answer). The provider (the verbs layer) makes it. */
MOCK_EXPORT struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context,
					       struct ibv_cq_init_attr_ex *cq_attr,
					       struct mlx5dv_cq_init_attr *mlx5_cq_attr)
{
	FAULT_NULL(LIB, "mlx5dv_create_cq");
	if (!dv_ops_of(context, NULL)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fab_dv_provider()->cq_create(context, cq_attr, mlx5_cq_attr);
}

/* Device memory of a type: MEMIC, which ibv_alloc_dm gives too; the
 * steering and header-modify ICM types, which the mock does not model,
 * fail as on a device without them (EOPNOTSUPP, the kernel's answer), and
 * say so once; an unknown type EOPNOTSUPP, a comp_mask bit EINVAL, as the
 * provider checks. */
MOCK_EXPORT struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context,
					   struct ibv_alloc_dm_attr *dm_attr,
					   struct mlx5dv_alloc_dm_attr *mlx5_dm_attr)
{
	static int said;

	FAULT_NULL(LIB, "mlx5dv_alloc_dm");
	MOCK_REQUIRE(dm_attr && mlx5_dm_attr, "mlx5dv_alloc_dm",
		     "dm_attr or mlx5_dm_attr is NULL (upstream reads them)");
	if (!dv_ops_of(context, NULL)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	switch (mlx5_dm_attr->type) {
	case MLX5DV_DM_TYPE_MEMIC:
	case MLX5DV_DM_TYPE_STEERING_SW_ICM:
	case MLX5DV_DM_TYPE_HEADER_MODIFY_SW_ICM:
	case MLX5DV_DM_TYPE_HEADER_MODIFY_PATTERN_SW_ICM:
		break;
	default:
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (dm_attr->comp_mask || mlx5_dm_attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	if (mlx5_dm_attr->type != MLX5DV_DM_TYPE_MEMIC) {
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			mock_log("mlx5dv_alloc_dm: the mock has no steering or header-modify ICM; "
				 "type %d fails with EOPNOTSUPP, as on a device without it",
				 (int)mlx5_dm_attr->type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fab_dv_provider()->dm_alloc(context, dm_attr);
}

/* The provider's create_qp checks of the mlx5 attributes, in its order: 0,
 * or the errno. What the mock does not model is refused with EOPNOTSUPP
 * and said once: the flags of raw packet and RSS QPs, packet-based credit
 * mode and signature pipelining (the device reports neither), and the
 * mlx5 send operations of mlx5dv_qp_ex (a DCI's included). */
static int check_qp_dv(const struct ibv_qp_init_attr_ex *attr, const struct mlx5dv_qp_init_attr *dv)
{
	const uint64_t known = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_DC |
			       MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS |
			       MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	const uint32_t flags = MLX5DV_QP_CREATE_TUNNEL_OFFLOADS |
			       MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC |
			       MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC |
			       MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE |
			       MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE |
			       MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE | MLX5DV_QP_CREATE_SIG_PIPELINING;
	static int said_dc, said_flags, said_ops;

	if (!dv)
		return attr->qp_type == IBV_QPT_DRIVER ? EINVAL : 0;
	if (dv->comp_mask & ~known)
		return EINVAL;
	if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC) && attr->qp_type != IBV_QPT_DRIVER)
		return EINVAL;
	if (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) {
		if (dv->create_flags & ~flags)
			return EINVAL;
		if ((dv->create_flags & MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE) &&
		    (dv->create_flags & MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE))
			return EINVAL;
		/* Scatter to CQE is the device's to use or not: the mock's
		 * never scatters (no CQE says MLX5_INLINE_SCATTER_*). */
		if (dv->create_flags & ~(uint32_t)(MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE |
						   MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE)) {
			mock_not_implemented("mlx5dv_create_qp (tunnel offloads, self loopback, "
					     "packet-based credit mode, signature pipelining)",
					     &said_flags);
			return EOPNOTSUPP;
		}
	}
	if (attr->qp_type == IBV_QPT_DRIVER) {
		if (!(dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC) ||
		    (dv->dc_init_attr.dc_type != MLX5DV_DCTYPE_DCT &&
		     dv->dc_init_attr.dc_type != MLX5DV_DCTYPE_DCI))
			return EINVAL;
		/* create_dct: a PD and nothing else of ibv's; no send
		 * operations, no DCI streams. */
		if (dv->dc_init_attr.dc_type == MLX5DV_DCTYPE_DCT)
			return (attr->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) ||
					       (dv->comp_mask & ~(uint64_t)(MLX5DV_QP_INIT_ATTR_MASK_DC |
									MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS))
				       ? EINVAL
				       : 0;
		/* The device reports no DCI streams (dci_streams_caps 0):
		 * asking for more than it has is EINVAL, as the provider
		 * checks; asking for none still needs the engine. */
		if (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)
			return dv->dc_init_attr.dci_streams.log_num_concurent ||
					       dv->dc_init_attr.dci_streams.log_num_errored
				       ? EINVAL
				       : EOPNOTSUPP;
		/* Its ibv send operations are the ibv_wr_* ones, with
		 * mlx5dv_wr_set_dc_addr; of the mlx5 ones the provider allows a
		 * DCI (raw WQEs, DMA memcpy) the mock has neither. */
		if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) && dv->send_ops_flags) {
			if (dv->send_ops_flags & ~(uint64_t)(MLX5DV_QP_EX_WITH_RAW_WQE |
							     MLX5DV_QP_EX_WITH_MEMCPY))
				return EOPNOTSUPP;
			mock_not_implemented("mlx5dv_create_qp (a DCI's raw-WQE and memcpy send "
					     "operations)", &said_dc);
			return EOPNOTSUPP;
		}
		return 0;
	}
	if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) && dv->send_ops_flags) {
		mock_not_implemented("mlx5dv_create_qp (the mlx5 send operations of mlx5dv_qp_ex)",
				     &said_ops);
		return EOPNOTSUPP;
	}
	return 0;
}

/* A QP with the mlx5 attributes: RC, UC and UD as ibv_create_qp_ex makes
 * them (their queues as mlx5dv_init_obj hands them over); a DCI or DCT
 * as the provider's DC path makes it. */
MOCK_EXPORT struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context,
					    struct ibv_qp_init_attr_ex *qp_attr,
					    struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	int err;

	FAULT_NULL(LIB, "mlx5dv_create_qp");
	if (!dv_ops_of(context, NULL)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	MOCK_REQUIRE(qp_attr, "mlx5dv_create_qp", "qp_attr is NULL (upstream dereferences it)");
	err = check_qp_dv(qp_attr, mlx5_qp_attr);
	if (err) {
		errno = err;
		return NULL;
	}
	if (qp_attr->qp_type == IBV_QPT_DRIVER)
		return fab_dv_provider()->qp_create_dc(context, qp_attr,
						       (int)mlx5_qp_attr->dc_init_attr.dc_type,
						       mlx5_qp_attr->dc_init_attr.dct_access_key);
	return ibv_create_qp_ex(context, qp_attr);
}

/* The mlx5 builders of a QP made with send operations (upstream's is a
 * view of the same QP, no check): on the mock a QP of another device, or
 * one without send operations, aborts, named. */
MOCK_EXPORT struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	MOCK_REQUIRE(qp, "mlx5dv_qp_ex_from_ibv_qp_ex", "qp is NULL (upstream dereferences it)");
	MOCK_REQUIRE(dv_ops_of(qp->qp_base.context, NULL), "mlx5dv_qp_ex_from_ibv_qp_ex",
		     "QP 0x%x is not on an mlx5 device (upstream reads past its struct)",
		     qp->qp_base.qp_num);
	return fab_dv_provider()->qp_ex_dv(qp);
}

/* mlx5dv_query_port's call (MLX5_IB_METHOD_QUERY_PORT): a port of the
 * device, else EINVAL; what the kernel fills only for a port of an
 * eswitch in switchdev mode or of a multi-port device, and the mock's are
 * neither: every field zero, no flag set, the caller's whole struct
 * written (a newer, longer one zeroed to its end). A struct shorter than
 * the kernel's (up to reg_c0) is EINVAL, as uverbs refuses it. */
MOCK_EXPORT int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num,
				   struct mlx5dv_port *info, size_t info_len)
{
	FAULT_POSITIVE(LIB, "_mlx5dv_query_port");
	if (!dv_ops_of(context, NULL))
		return EOPNOTSUPP;
	if (port_num != 1 || info_len < offsetof(struct mlx5dv_port, reg_c0) + sizeof info->reg_c0)
		return EINVAL;
	MOCK_REQUIRE(info, "mlx5dv_query_port", "info is NULL (the kernel faults writing it)");
	memset(info, 0, info_len);
	return 0;
}

MOCK_EXPORT int mlx5dv_get_clock_info(struct ibv_context *ctx_in,
				      struct mlx5dv_clock_info *clock_info)
{
	const struct dv_ops *ops;

	FAULT_POSITIVE(LIB, "mlx5dv_get_clock_info");
	ops = dv_ops_of(ctx_in, NULL);
	if (!ops)
		return EOPNOTSUPP;
	MOCK_REQUIRE(clock_info, "mlx5dv_get_clock_info", "clock_info is NULL (upstream writes it)");
	return ops->get_clock_info(ctx_in, clock_info);
}

MOCK_EXPORT int mlx5dv_query_qp_lag_port(struct ibv_qp *qp, uint8_t *port_num,
					 uint8_t *active_port_num)
{
	const struct dv_ops *ops;

	FAULT_POSITIVE(LIB, "mlx5dv_query_qp_lag_port");
	MOCK_REQUIRE(qp, "mlx5dv_query_qp_lag_port", "qp is NULL (upstream dereferences it)");
	ops = dv_ops_of(qp->context, NULL);
	if (!ops)
		return EOPNOTSUPP;
	(void)port_num;
	(void)active_port_num;
	return ops->lag_port(qp);
}

MOCK_EXPORT int mlx5dv_modify_qp_lag_port(struct ibv_qp *qp, uint8_t port_num)
{
	const struct dv_ops *ops;

	FAULT_POSITIVE(LIB, "mlx5dv_modify_qp_lag_port");
	MOCK_REQUIRE(qp, "mlx5dv_modify_qp_lag_port", "qp is NULL (upstream dereferences it)");
	ops = dv_ops_of(qp->context, NULL);
	if (!ops)
		return EOPNOTSUPP;
	(void)port_num;
	return ops->lag_port(qp);
}

/* mlx5dv_open_device: an mlx5 device opens as ibv_open_device opens it.
 * The mock's ConnectX has no DEVX (firmware commands from user space; its
 * log_max_uctx is 0): asking for a DEVX context fails with EINVAL, as the
 * kernel's mlx5_ib_devx_create refuses it there, and says so once; the
 * DEVX calls fail as that device's kernel, which has no DEVX methods,
 * fails them (EPROTONOSUPPORT). Any other device: EOPNOTSUPP, as
 * upstream's is_mlx5_dev check gives; then, as mlx5_alloc_context checks,
 * a comp_mask bit or a flag it does not know: EINVAL. */
MOCK_EXPORT struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
						   struct mlx5dv_context_attr *attr)
{
	struct fab_device_info info;

	FAULT_NULL(LIB, "mlx5dv_open_device");
	if (device_info(device, &info) || info.personality != RDMAMOCK_MLX5) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr && (attr->comp_mask || (attr->flags & ~(uint64_t)MLX5DV_CONTEXT_FLAGS_DEVX))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr && (attr->flags & MLX5DV_CONTEXT_FLAGS_DEVX)) {
		static int said;

		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			mock_log("mlx5dv_open_device: %s has no DEVX (MLX5DV_CONTEXT_FLAGS_DEVX: EINVAL, "
				 "as on a ConnectX without it)", info.name);
		errno = EINVAL;
		return NULL;
	}
	return ibv_open_device(device);
}

/* What the mock gives of mlx5dv_init_obj: a PD's number, and the rings
 * the provider, the verbs layer, makes on the first call: a CQ's CQEs, a
 * QP's and an SRQ's work queues and doorbell records (device/mlx5.h), an
 * AH's address vector, device memory's mapping. Work queues (RWQs) have
 * no model: asking for one fails the whole call (EOPNOTSUPP) before
 * anything is written, and says so. */
static struct ibv_context *obj_context(struct mlx5dv_obj *obj, uint64_t type)
{
	if (type & MLX5DV_OBJ_QP)
		return obj->qp.in->context;
	if (type & MLX5DV_OBJ_CQ)
		return obj->cq.in->context;
	if (type & MLX5DV_OBJ_SRQ)
		return obj->srq.in->context;
	if (type & MLX5DV_OBJ_RWQ)
		return obj->rwq.in->context;
	if (type & MLX5DV_OBJ_DM)
		return obj->dm.in->context;
	if (type & MLX5DV_OBJ_AH)
		return obj->ah.in->context;
	if (type & MLX5DV_OBJ_PD)
		return obj->pd.in->context;
	return NULL;
}

MOCK_EXPORT int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	const uint64_t known = MLX5DV_OBJ_PD | MLX5DV_OBJ_CQ | MLX5DV_OBJ_QP | MLX5DV_OBJ_SRQ | MLX5DV_OBJ_DM |
			       MLX5DV_OBJ_AH;
	const struct fab_dv_provider *provider = fab_dv_provider();
	struct ibv_context *ctx;
	int err = 0;

	FAULT_POSITIVE(LIB, "mlx5dv_init_obj");
	MOCK_REQUIRE(obj, "mlx5dv_init_obj", "obj is NULL (upstream dereferences it)");
	ctx = obj_context(obj, obj_type);
	if (!ctx)
		return EINVAL;
	if (!dv_ops_of(ctx, NULL))
		return EOPNOTSUPP;
	if (obj_type & ~known) {
		static int said;

		mock_not_implemented("mlx5dv_init_obj (work queues)",
				     &said);
		return EOPNOTSUPP;
	}
	/* Each object asked for, in the provider's order, by the provider's
	 * side (the verbs layer), which makes its rings on the first call. */
#define EXPOSE(type, member)                                                                   \
	do {                                                                                   \
		if (!err && (obj_type & (type))) {                                             \
			MOCK_REQUIRE(obj->member.in && obj->member.out, "mlx5dv_init_obj",      \
				     "obj->" #member ".in or .out is NULL (upstream dereferences them)"); \
			err = provider->member##_expose(obj->member.in, obj->member.out);        \
		}                                                                              \
	} while (0)
	EXPOSE(MLX5DV_OBJ_QP, qp);
	EXPOSE(MLX5DV_OBJ_CQ, cq);
	EXPOSE(MLX5DV_OBJ_SRQ, srq);
	EXPOSE(MLX5DV_OBJ_DM, dm);
	EXPOSE(MLX5DV_OBJ_AH, ah);
#undef EXPOSE
	if (!err && (obj_type & MLX5DV_OBJ_PD)) {
		obj->pd.out->comp_mask = 0;
		obj->pd.out->pdn = obj->pd.in->handle;
	}
	return err;
}
