/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The mlx5 tests' program-side view of a QP and CQ (raw.h). */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"

void raw_cq_ring(struct fx_qp *q, struct mlx5dv_cq *dv)
{
	struct mlx5dv_obj obj = { .cq = { .in = q->cq, .out = dv } };

	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
	assert_non_null(dv->buf);
	assert_non_null(dv->dbrec);
	assert_int_equal(dv->cqe_size, 64);
	assert_int_equal(dv->cqe_cnt, (uint32_t)q->cq->cqe + 1);
	assert_int_equal(dv->cqe_cnt & (dv->cqe_cnt - 1), 0);
}

/* The 64-byte CQE of the entry at ci: the entry's last 64 bytes (the
 * provider's get_cqe64 for 128-byte entries). */
static struct mlx5_cqe64 *cqe_of(const struct mlx5dv_cq *dv, uint32_t ci)
{
	return (struct mlx5_cqe64 *)((char *)dv->buf + (size_t)(ci & (dv->cqe_cnt - 1)) * dv->cqe_size +
				     dv->cqe_size - 64);
}

int raw_cqe_ready(const struct mlx5dv_cq *dv, uint32_t ci)
{
	/* The opcode from the one atomic read: the device may write it
	 * from another thread (a retry's timer). */
	uint8_t op_own = __atomic_load_n(&cqe_of(dv, ci)->op_own, __ATOMIC_ACQUIRE);

	return (op_own >> 4) != MLX5_CQE_INVALID && (op_own & MLX5_CQE_OWNER_MASK) == !!(ci & dv->cqe_cnt);
}

struct mlx5_cqe64 *raw_cqe(const struct mlx5dv_cq *dv, uint32_t ci)
{
	for (uint64_t start = 0; !raw_cqe_ready(dv, ci);)
		if (!fx_pause(&start, 5000))
			fail_msg("no CQE at index %u in 5 s (op_own 0x%02x)", ci, cqe_of(dv, ci)->op_own);
	return cqe_of(dv, ci);
}

void raw_open(struct raw *r)
{
	raw_open_with(r, NULL, false);
}

void raw_open_with(struct raw *r, const struct ibv_qp_cap *cap, bool channel)
{
	struct mlx5dv_obj obj = { .qp = { .in = NULL, .out = &r->qp } };

	memset(r, 0, sizeof *r);
	fx_qp_create(&r->q, FX_DEV_MLX5, IBV_QPT_RC);
	if (cap || channel) {
		struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC };

		FX_VERBS_OK(ibv_destroy_qp(r->q.qp));
		if (channel) {
			r->channel = ibv_create_comp_channel(r->q.ctx);
			if (!r->channel)
				fail_msg("ibv_create_comp_channel: %s", strerror(errno));
			FX_VERBS_OK(ibv_destroy_cq(r->q.cq));
			r->q.cq = ibv_create_cq(r->q.ctx, 8, NULL, r->channel, 0);
			if (!r->q.cq)
				fail_msg("ibv_create_cq(with a channel): %s", strerror(errno));
		}
		init.send_cq = init.recv_cq = r->q.cq;
		init.cap = cap ? *cap
			       : (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
						      .max_send_sge = 1, .max_recv_sge = 1 };
		r->q.qp = ibv_create_qp(r->q.pd, &init);
		if (!r->q.qp)
			fail_msg("ibv_create_qp(RC, %u WRs of %u SGEs, %u inline): %s",
				 init.cap.max_send_wr, init.cap.max_send_sge, init.cap.max_inline_data,
				 strerror(errno));
	}
	raw_cq_ring(&r->q, &r->cq);
	obj.qp.in = r->q.qp;
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
	assert_non_null(r->qp.dbrec);
	assert_non_null(r->qp.sq.buf);
	assert_non_null(r->qp.bf.reg);
	assert_int_equal(r->qp.sq.stride, 64);
	assert_true(r->qp.sq.wqe_cnt >= 4);
	r->mr = ibv_reg_mr(r->q.pd, r->buf, sizeof r->buf,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
	if (!r->mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	fx_qp_to(&r->q, IBV_QPS_RTS);
	/* The fixture's QP takes remote writes; these tests read and add too. */
	FX_VERBS_OK(ibv_modify_qp(r->q.qp,
				  &(struct ibv_qp_attr){ .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
								      IBV_ACCESS_REMOTE_READ |
								      IBV_ACCESS_REMOTE_ATOMIC },
				  IBV_QP_ACCESS_FLAGS));
}

void raw_close(struct raw *r)
{
	FX_VERBS_OK(ibv_dereg_mr(r->mr));
	if (r->channel) {
		FX_VERBS_OK(ibv_destroy_qp(r->q.qp));
		FX_VERBS_OK(ibv_destroy_cq(r->q.cq));
		FX_VERBS_OK(ibv_destroy_comp_channel(r->channel));
		r->q.qp = NULL;
		r->q.cq = NULL;
	}
	fx_qp_release(&r->q);
}

void *raw_wqe(struct raw *r)
{
	return (char *)r->qp.sq.buf + (size_t)(r->sq_pi & (r->qp.sq.wqe_cnt - 1)) * 64;
}

void raw_ring(struct raw *r, const struct mlx5_wqe_ctrl_seg *ctrl)
{
	r->sq_pi++;
	__atomic_store_n(&r->qp.dbrec[MLX5_SND_DBR], htobe32(r->sq_pi & 0xffff), __ATOMIC_RELEASE);
	*(volatile uint64_t *)r->qp.bf.reg = *(const uint64_t *)ctrl;
}

struct mlx5_cqe64 *raw_take(struct raw *r)
{
	struct mlx5_cqe64 *cqe = raw_cqe(&r->cq, r->ci);

	r->ci++;
	__atomic_store_n(&r->cq.dbrec[0], htobe32(r->ci & 0xffffff), __ATOMIC_RELEASE);
	return cqe;
}

void raw_rdma_ring(struct raw *r, uint8_t opcode, int remote, int local, uint64_t add)
{
	struct mlx5_wqe_ctrl_seg *ctrl = raw_wqe(r);
	struct mlx5_wqe_raddr_seg *ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
	char *next = (char *)(ra + 1);
	bool atomic = opcode == MLX5_OPCODE_ATOMIC_FA;

	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)r->sq_pi, opcode, 0, r->q.qp->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, atomic ? 4 : 3, 0, 0);
	ra->raddr = htobe64((uintptr_t)&r->buf[remote]);
	ra->rkey = htobe32(r->mr->rkey);
	if (atomic) {
		((struct mlx5_wqe_atomic_seg *)next)->swap_add = htobe64(add);
		next += sizeof(struct mlx5_wqe_atomic_seg);
	}
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)next, 8, r->mr->lkey,
			    (uintptr_t)&r->buf[local]);
	raw_ring(r, ctrl);
}

struct mlx5_cqe64 *raw_req(struct raw *r, uint8_t opcode, uint16_t wqe)
{
	struct mlx5_cqe64 *cqe = raw_take(r);

	assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_REQ);
	assert_int_equal(be32toh(cqe->sop_drop_qpn) >> 24, opcode);
	assert_int_equal(be16toh(cqe->wqe_counter), wqe);
	return cqe;
}

struct mlx5_cqe64 *raw_rdma(struct raw *r, uint8_t opcode, int remote, int local, uint64_t add,
			    uint16_t wqe)
{
	raw_rdma_ring(r, opcode, remote, local, add);
	return raw_req(r, opcode, wqe);
}

void raw_poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0;

	for (uint64_t start = 0; got < n;) {
		int ret = ibv_poll_cq(cq, n - got, wc + got);

		assert_true(ret >= 0);
		got += ret;
		if (got < n && !fx_pause(&start, 5000))
			fail_msg("%d completions of %d in 5 s", got, n);
	}
}

struct ibv_ah *raw_ud_self(struct raw *r, struct ibv_ah_attr *attr, struct mlx5dv_ah *dvah, bool cq_ring)
{
	struct mlx5dv_obj obj;
	struct ibv_ah *ah;

	memset(r, 0, sizeof *r);
	fx_qp_create(&r->q, FX_DEV_MLX5, IBV_QPT_UD);
	if (cq_ring)
		raw_cq_ring(&r->q, &r->cq);
	obj = (struct mlx5dv_obj){ .qp = { .in = r->q.qp, .out = &r->qp } };
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
	r->mr = ibv_reg_mr(r->q.pd, r->buf, sizeof r->buf, IBV_ACCESS_LOCAL_WRITE);
	if (!r->mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	fx_qp_to(&r->q, IBV_QPS_RTS);
	FX_OK(ibv_query_gid(r->q.ctx, 1, 0, &attr->grh.dgid));
	ah = ibv_create_ah(r->q.pd, attr);
	if (!ah)
		fail_msg("ibv_create_ah: %s", strerror(errno));
	obj = (struct mlx5dv_obj){ .ah = { .in = ah, .out = dvah } };
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH));
	return ah;
}

void raw_require_bf(struct raw *r)
{
	const char *env = getenv("MLX5_SHUT_UP_BF");

	if (r->qp.bf.size)
		return;
	raw_close(r);
	if (env && strcmp(env, "0"))
		RC_SKIP("MLX5_SHUT_UP_BF=%s: no BlueFlame (bf.size 0)", env);
	fail_msg("bf.size 0 without MLX5_SHUT_UP_BF");
}
