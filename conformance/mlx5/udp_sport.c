/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: mlx5dv_modify_qp_udp_sport(): RTS only, RC and UC only,
 * mlx5 devices with the rts2rts UDP-sport capability only, 0 or a positive
 * errno with errno untouched; and (mock-only) the port a QP then carries. */
#include <errno.h>
#include <dlfcn.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "fixtures.h"
#include "qp.h"

#define SPORT 0xc0de /* 49374: in the RoCE v2 source port range */
#define ERRNO_SENTINEL 0x5a5a

/* The call, with errno watched: returns the result; *errno_kept says
 * whether errno still holds what it held before. */
static int set_sport(struct ibv_qp *qp, uint16_t port, bool *errno_kept)
{
	int ret;

	errno = ERRNO_SENTINEL;
	ret = mlx5dv_modify_qp_udp_sport(qp, port);
	*errno_kept = errno == ERRNO_SENTINEL;
	return ret;
}

static void in_state(enum ibv_qp_type type, enum ibv_qp_state state, int expected)
{
	struct fx_qp q;
	bool kept;

	if (expected == 0)
		RC_REQUIRE_CAPABILITY("udp-sport");
	fx_qp_create(&q, FX_DEV_MLX5, type);
	fx_qp_to(&q, state);
	if (expected)
		RC_ASSERT_ERRNO("mlx5dv_modify_qp_udp_sport", set_sport(q.qp, SPORT, &kept), expected);
	else
		assert_int_equal(set_sport(q.qp, SPORT, &kept), 0);
	assert_true(kept);
	fx_qp_release(&q);
}

void mlx5dv_modify_qp_udp_sport__rc_reset(void **state) { in_state(IBV_QPT_RC, IBV_QPS_RESET, EOPNOTSUPP); }
void mlx5dv_modify_qp_udp_sport__rc_init(void **state) { in_state(IBV_QPT_RC, IBV_QPS_INIT, EOPNOTSUPP); }
void mlx5dv_modify_qp_udp_sport__rc_rtr(void **state) { in_state(IBV_QPT_RC, IBV_QPS_RTR, EOPNOTSUPP); }
void mlx5dv_modify_qp_udp_sport__rc_rts(void **state) { in_state(IBV_QPT_RC, IBV_QPS_RTS, 0); }
void mlx5dv_modify_qp_udp_sport__rc_sqd(void **state) { in_state(IBV_QPT_RC, IBV_QPS_SQD, EOPNOTSUPP); }
void mlx5dv_modify_qp_udp_sport__rc_err(void **state) { in_state(IBV_QPT_RC, IBV_QPS_ERR, EOPNOTSUPP); }
void mlx5dv_modify_qp_udp_sport__uc_rts(void **state) { in_state(IBV_QPT_UC, IBV_QPS_RTS, 0); }
void mlx5dv_modify_qp_udp_sport__uc_sqe(void **state) { in_state(IBV_QPT_UC, IBV_QPS_SQE, EOPNOTSUPP); }
void mlx5dv_modify_qp_udp_sport__ud_rts(void **state) { in_state(IBV_QPT_UD, IBV_QPS_RTS, EOPNOTSUPP); }

/* The documentation says the failure is "the value of errno"; upstream
 * returns it and leaves errno alone. */
void mlx5dv_modify_qp_udp_sport__errno_untouched(void **state)
{
	struct fx_qp q;
	bool kept;
	int ret;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	ret = set_sport(q.qp, SPORT, &kept);
	RC_ASSERT_ERRNO("mlx5dv_modify_qp_udp_sport", ret, EOPNOTSUPP);
	assert_true(kept);
	rc_note_documented(errno == ret);
	fx_qp_release(&q);
}

void mlx5dv_modify_qp_udp_sport__not_mlx5(void **state)
{
	struct fx_qp q;
	bool kept;

	fx_qp_create(&q, FX_DEV_NOT_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	RC_ASSERT_ERRNO("mlx5dv_modify_qp_udp_sport", set_sport(q.qp, SPORT, &kept), EOPNOTSUPP);
	assert_true(kept);
	fx_qp_release(&q);
}

/* ---------------------------------------------------------------- with rdma_cm */

void mlx5dv_modify_qp_udp_sport__connected_then_disconnected(void **state)
{
	struct fx fx;
	bool kept;

	RC_REQUIRE_CAPABILITY("mlx5dv");
	RC_REQUIRE_CAPABILITY("udp-sport");
	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	if (!mlx5dv_is_supported(fx.client->verbs->device))
		RC_SKIP("capability: mlx5dv (the device under test is %s)",
			ibv_get_device_name(fx.client->verbs->device));
	assert_int_equal(set_sport(fx.client->qp, SPORT, &kept), 0);
	FX_OK(rdma_disconnect(fx.client));
	assert_int_equal(fx.client->qp->state, IBV_QPS_ERR);
	RC_ASSERT_ERRNO("mlx5dv_modify_qp_udp_sport", set_sport(fx.client->qp, SPORT, &kept), EOPNOTSUPP);
	assert_true(kept);
	fx_release(&fx);
}

/* ---------------------------------------------------------------- the mock's view */

static uint16_t carried_sport(struct ibv_qp *qp)
{
	int (*sport_of)(const struct ibv_qp *, uint16_t *) =
		(int (*)(const struct ibv_qp *, uint16_t *))fx_mock_call("rdmamock_qp_udp_sport");
	uint16_t port = 0;

	if (sport_of(qp, &port))
		fail_msg("rdmamock_qp_udp_sport: the QP is unknown to the mock");
	return port;
}

void mlx5dv_modify_qp_udp_sport__observed(void **state)
{
	struct fx_qp q;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS };
	uint16_t before;
	bool kept;

	fx_mock_call("rdmamock_qp_udp_sport");
	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	before = carried_sport(q.qp);
	RC_ASSERT_IN_RANGE(before, 49152, 65535);
	assert_int_equal(set_sport(q.qp, SPORT, &kept), 0);
	assert_int_equal(carried_sport(q.qp), SPORT);
	/* RTS to RTS keeps it; RESET forgets it. */
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, IBV_QP_STATE));
	assert_int_equal(carried_sport(q.qp), SPORT);
	attr.qp_state = IBV_QPS_RESET;
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, IBV_QP_STATE));
	assert_int_not_equal(carried_sport(q.qp), SPORT);
	RC_ASSERT_IN_RANGE(carried_sport(q.qp), 49152, 65535);
	fx_qp_release(&q);
}

void mlx5dv_modify_qp_udp_sport__without_capability(void **state)
{
	int (*set_cap)(const char *, int, int) =
		(int (*)(const char *, int, int))fx_topology_call("rdmamock_device_set_cap");
	struct fx_qp q;
	bool kept;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	if (set_cap(ibv_get_device_name(q.ctx->device), 1 /* RDMAMOCK_CAP_UDP_SPORT */, 0))
		fail_msg("rdmamock_device_set_cap failed");
	RC_ASSERT_ERRNO("mlx5dv_modify_qp_udp_sport", set_sport(q.qp, SPORT, &kept), EOPNOTSUPP);
	assert_true(kept);
	fx_qp_release(&q);
}

/* The library checks its own record of the state (qp->state, which
 * ibv_modify_qp and ibv_query_qp keep); a QP the device moved to ERR by
 * itself (a failed request) still passes that check, and the firmware's
 * RTS2RTS_QP refuses it: bad resource state, EINVAL. Once ibv_query_qp has
 * seen ERR, the library refuses first: EOPNOTSUPP. Found by make fuzz
 * (the mock set the port on a QP in ERR). */
void mlx5dv_modify_qp_udp_sport__device_moved_to_err(void **state)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;
	struct fx_qp q;
	bool kept;

	RC_REQUIRE_CAPABILITY("udp-sport");
	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	/* Its MR allows no remote write: the responder refuses the WRITE. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)q.buf + 32;
	wr.wr.rdma.rkey = q.mr->rkey;
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	fx_poll_one(q.cq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	RC_ASSERT_ERRNO("mlx5dv_modify_qp_udp_sport", set_sport(q.qp, SPORT, &kept), EINVAL);
	assert_true(kept);
	FX_VERBS_OK(ibv_query_qp(q.qp, &attr, IBV_QP_STATE, &init));
	assert_int_equal(attr.qp_state, IBV_QPS_ERR);
	RC_ASSERT_ERRNO("mlx5dv_modify_qp_udp_sport", set_sport(q.qp, SPORT, &kept), EOPNOTSUPP);
	fx_qp_release(&q);
}
