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
};

/* A ConnectX-5 reports CQE version 1 and enhanced multi-packet WQEs; the optional
 * blocks comp_mask asks for are not reported. */
static int query_device(struct ibv_context *ctx, struct mlx5dv_context *attrs)
{
	attrs->version = 0;
	attrs->flags = MLX5DV_CONTEXT_FLAGS_CQE_V1 | MLX5DV_CONTEXT_FLAGS_MPW_ALLOWED |
		       MLX5DV_CONTEXT_FLAGS_ENHANCED_MPW;
	attrs->comp_mask = 0;
	return 0;
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

/* mlx5dv_open_device: an mlx5 device opens as ibv_open_device opens it;
 * DEVX (firmware commands from user space) is what the mock cannot give:
 * asking for it fails, and says so. Any other device: EOPNOTSUPP, as
 * upstream's is_mlx5_dev check gives. */
MOCK_EXPORT struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
						   struct mlx5dv_context_attr *attr)
{
	struct fab_device_info info;

	FAULT_NULL(LIB, "mlx5dv_open_device");
	if (device_info(device, &info) || info.personality != RDMAMOCK_MLX5) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr && (attr->flags & MLX5DV_CONTEXT_FLAGS_DEVX)) {
		static int said;

		mock_not_implemented("mlx5dv_open_device(MLX5DV_CONTEXT_FLAGS_DEVX)", &said);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr && attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	return ibv_open_device(device);
}

/* What the mock can give of mlx5dv_init_obj: a PD's number. QPs, CQs,
 * SRQs, work queues, device memory and AVs would hand over hardware rings,
 * doorbells and Ethernet addresses, which the mock does not have: asking
 * for any of them fails the whole call (EOPNOTSUPP) before anything is
 * written, and says so. */
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
	struct ibv_context *ctx;

	FAULT_POSITIVE(LIB, "mlx5dv_init_obj");
	MOCK_REQUIRE(obj, "mlx5dv_init_obj", "obj is NULL (upstream dereferences it)");
	ctx = obj_context(obj, obj_type);
	if (!ctx)
		return EINVAL;
	if (!dv_ops_of(ctx, NULL))
		return EOPNOTSUPP;
	if (obj_type & ~(uint64_t)MLX5DV_OBJ_PD) {
		static int said;

		mock_not_implemented("mlx5dv_init_obj (objects other than MLX5DV_OBJ_PD)", &said);
		return EOPNOTSUPP;
	}
	obj->pd.out->comp_mask = 0;
	obj->pd.out->pdn = obj->pd.in->handle;
	return 0;
}
