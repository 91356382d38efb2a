/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: what libmlx5 tells of the device beyond ibv_query_device:
 * mlx5dv_query_device's optional blocks, mlx5dv_get_clock_info with
 * mlx5dv_ts_to_ns, mlx5dv_query_qp_lag_port / mlx5dv_modify_qp_lag_port,
 * and what mlx5dv_open_device refuses. */
#include <errno.h>
#include <infiniband/mlx5dv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "qp.h"
#include "raw.h"

/* Every block this build of mlx5dv.h knows. */
#define KNOWN_BLOCKS ((uint64_t)MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD * 2 - 1)

/* The provider answers the blocks comp_mask asks for, each or not, and
 * writes no other: a block it was not asked for keeps what was there. */
void mlx5dv_query_device__answers_what_is_asked(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);
	struct mlx5dv_context dv;

	memset(&dv, 0xa5, sizeof dv);
	dv.comp_mask = 0;
	FX_VERBS_OK(mlx5dv_query_device(ctx, &dv));
	assert_int_equal(dv.comp_mask, 0);
	assert_true(dv.max_clock_info_update_nsec == 0xa5a5a5a5a5a5a5a5ull);
	assert_int_equal(dv.cqe_comp_caps.max_num, 0xa5a5a5a5u);

	memset(&dv, 0xa5, sizeof dv);
	dv.comp_mask = MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE;
	FX_VERBS_OK(mlx5dv_query_device(ctx, &dv));
	assert_int_equal(dv.comp_mask & ~(uint64_t)MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE, 0);
	assert_int_equal(dv.cqe_comp_caps.max_num, 0xa5a5a5a5u);
	assert_int_equal(dv.striding_rq_caps.supported_qpts, 0xa5a5a5a5u);

	memset(&dv, 0, sizeof dv);
	dv.comp_mask = KNOWN_BLOCKS;
	FX_VERBS_OK(mlx5dv_query_device(ctx, &dv));
	assert_int_equal(dv.comp_mask & ~KNOWN_BLOCKS, 0);
	if (dv.comp_mask & MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE)
		assert_true(dv.max_clock_info_update_nsec > 0);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* An RC QP connected to itself whose sends complete on an extended CQ
 * that reads completion timestamps. */
static struct ibv_cq_ex *qp_with_timestamps(struct fx_qp *q)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 8,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq_ex *cqx;

	fx_qp_create(q, FX_DEV_MLX5, IBV_QPT_RC);
	cqx = ibv_create_cq_ex(q->ctx, &cq_attr);
	if (!cqx)
		fail_msg("ibv_create_cq_ex(COMPLETION_TIMESTAMP): %s", strerror(errno));
	FX_VERBS_OK(ibv_destroy_qp(q->qp));
	init.send_cq = ibv_cq_ex_to_cq(cqx);
	init.recv_cq = q->cq;
	q->qp = ibv_create_qp(q->pd, &init);
	if (!q->qp)
		fail_msg("ibv_create_qp(RC, sends on an extended CQ): %s", strerror(errno));
	fx_qp_to(q, IBV_QPS_RTS);
	return cqx;
}

/* A signalled SEND to itself, into a receive posted at q->buf + 32; its
 * completion's timestamp. */
static uint64_t send_timestamp(struct fx_qp *q, struct ibv_cq_ex *cqx)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)q->buf + 32, .length = 16, .lkey = q->mr->lkey };
	struct ibv_sge sge = { .addr = (uintptr_t)q->buf, .length = 8, .lkey = q->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_wc wc;
	uint64_t ts;
	int ret;

	FX_VERBS_OK(ibv_post_recv(q->qp, &rwr, &rbad));
	FX_VERBS_OK(ibv_post_send(q->qp, &wr, &bad));
	for (uint64_t start = 0; (ret = ibv_start_poll(cqx, &attr)) == ENOENT;)
		if (!fx_pause(&start, 5000))
			fail_msg("no completion of the SEND in 5 s");
	FX_VERBS_OK(ret);
	if (cqx->status != IBV_WC_SUCCESS)
		fail_msg("SEND: %s", ibv_wc_status_str(cqx->status));
	ts = ibv_wc_read_completion_ts(cqx);
	ibv_end_poll(cqx);
	fx_poll_one(q->cq, &wc);
	return ts;
}

/* mlx5dv_ts_to_ns turns the device's cycles into nanoseconds at the rate
 * ibv_query_device_ex reports (hca_core_clock, kHz), and a completion's
 * timestamp into a time after the clock page was read and no earlier
 * than the completion before it. */
void mlx5dv_get_clock_info__converts_timestamps(void **state)
{
	struct ibv_device_attr_ex attr;
	struct mlx5dv_clock_info ci;
	struct ibv_cq_ex *cqx;
	uint64_t ts1, ts2, ns1, ns2, second;
	struct fx_qp q;

	cqx = qp_with_timestamps(&q);
	FX_VERBS_OK(ibv_query_device_ex(q.ctx, NULL, &attr));
	assert_true(attr.hca_core_clock > 0);
	FX_VERBS_OK(mlx5dv_get_clock_info(q.ctx, &ci));
	assert_true(ci.mult > 0);
	second = mlx5dv_ts_to_ns(&ci, ci.last_cycles + attr.hca_core_clock * 1000u) -
		 mlx5dv_ts_to_ns(&ci, ci.last_cycles);
	if (second < 1000000000u - 1000u || second > 1000000000u + 1000u)
		fail_msg("a second of cycles (%llu at %llu kHz) converts to %llu ns",
			 (unsigned long long)attr.hca_core_clock * 1000u,
			 (unsigned long long)attr.hca_core_clock, (unsigned long long)second);
	ts1 = send_timestamp(&q, cqx);
	ts2 = send_timestamp(&q, cqx);
	ns1 = mlx5dv_ts_to_ns(&ci, ts1);
	ns2 = mlx5dv_ts_to_ns(&ci, ts2);
	if (ns1 < ci.nsec)
		fail_msg("a completion at %llu ns, before the clock page read at %llu ns",
			 (unsigned long long)ns1, (unsigned long long)ci.nsec);
	if (ns2 < ns1)
		fail_msg("completions out of order in time: %llu ns, then %llu ns",
			 (unsigned long long)ns1, (unsigned long long)ns2);
	FX_VERBS_OK(ibv_destroy_qp(q.qp));
	q.qp = NULL;
	FX_VERBS_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	fx_qp_release(&q);
}

/* On a device that is not mlx5 there are no direct-verbs ops: EOPNOTSUPP. */
void mlx5dv_get_clock_info__not_mlx5(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_NOT_MLX5);
	struct mlx5dv_clock_info ci;

	RC_ASSERT_ERRNO("mlx5dv_get_clock_info", mlx5dv_get_clock_info(ctx, &ci), EOPNOTSUPP);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* A QP's LAG port can be read or set only on a device with more than one
 * LAG port; on any other, EOPNOTSUPP. */
void mlx5dv_query_qp_lag_port__one_port(void **state)
{
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS };
	uint8_t port = 0, active = 0;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	FX_VERBS_OK(mlx5dv_query_device(q.ctx, &dv));
	if ((dv.comp_mask & MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS) && dv.num_lag_ports > 1) {
		fx_qp_release(&q);
		RC_SKIP("capability: one LAG port (the device has %u)", dv.num_lag_ports);
	}
	fx_qp_to(&q, IBV_QPS_RTS);
	RC_ASSERT_ERRNO("mlx5dv_query_qp_lag_port", mlx5dv_query_qp_lag_port(q.qp, &port, &active),
			EOPNOTSUPP);
	RC_ASSERT_ERRNO("mlx5dv_modify_qp_lag_port", mlx5dv_modify_qp_lag_port(q.qp, 1), EOPNOTSUPP);
	fx_qp_release(&q);
	fx_qp_create(&q, FX_DEV_NOT_MLX5, IBV_QPT_RC);
	RC_ASSERT_ERRNO("mlx5dv_query_qp_lag_port", mlx5dv_query_qp_lag_port(q.qp, &port, &active),
			EOPNOTSUPP);
	fx_qp_release(&q);
}

/* mlx5_alloc_context refuses a comp_mask bit or a flag it does not know:
 * NULL, errno EINVAL. */
void mlx5dv_open_device__unknown_attr(void **state)
{
	struct ibv_context *probe = fx_open_device(FX_DEV_MLX5);
	struct ibv_device *device = probe->device;
	struct mlx5dv_context_attr attr = { .flags = 1u << 20 };
	struct ibv_context *ctx;

	ctx = mlx5dv_open_device(device, &attr);
	if (ctx)
		fail_msg("mlx5dv_open_device opened with an unknown flag");
	RC_ASSERT_ERRNO("mlx5dv_open_device", errno, EINVAL);
	attr = (struct mlx5dv_context_attr){ .comp_mask = 1ull << 20 };
	ctx = mlx5dv_open_device(device, &attr);
	if (ctx)
		fail_msg("mlx5dv_open_device opened with an unknown comp_mask bit");
	RC_ASSERT_ERRNO("mlx5dv_open_device", errno, EINVAL);
	FX_VERBS_OK(ibv_close_device(probe));
}

/* ---------------------------------------------------------------- a CQ's ring */

#define IMM 0x0badcafeu

/* A receive at q->buf + 32, then a signalled SEND with immediate of 8
 * bytes, to itself. */
static void send_imm(struct fx_qp *q, uint32_t lkey)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)q->buf + 32, .length = 16, .lkey = q->mr->lkey };
	struct ibv_sge sge = { .addr = (uintptr_t)q->buf, .length = 8, .lkey = lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(IMM),
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	FX_VERBS_OK(ibv_post_recv(q->qp, &rwr, &rbad));
	FX_VERBS_OK(ibv_post_send(q->qp, &wr, &bad));
}

/* Each completion is a CQE as the device writes it: the owner bit of the
 * pass over the ring, the requester's opcode and QP number, its WQE's
 * index; the responder's byte count and immediate. Read in place, then
 * taken by ibv_poll_cq (which frees the send queue's slots, as only the
 * provider's poll does), past the end of the ring and round again. */
void mlx5dv_init_obj__cq_cqes(void **state)
{
	struct mlx5dv_cq dv;
	struct fx_qp q;
	uint32_t ci = 0;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	raw_cq_ring(&q, &dv);
	fx_qp_to(&q, IBV_QPS_RTS);
	for (uint16_t wqe = 0; ci <= dv.cqe_cnt + 1; wqe++) {
		bool req = false, resp = false;

		send_imm(&q, q.mr->lkey);
		struct ibv_wc wc[2];

		for (int i = 0; i < 2; i++) {
			struct mlx5_cqe64 *cqe = raw_cqe(&dv, ci + (uint32_t)i);
			uint32_t sop = be32toh(cqe->sop_drop_qpn);

			assert_int_equal(sop & 0xffffff, q.qp->qp_num);
			switch (mlx5dv_get_cqe_opcode(cqe)) {
			case MLX5_CQE_REQ:
				req = true;
				assert_int_equal(sop >> 24, MLX5_OPCODE_SEND_IMM);
				assert_int_equal(be16toh(cqe->wqe_counter), wqe);
				break;
			case MLX5_CQE_RESP_SEND_IMM:
				resp = true;
				assert_int_equal(be32toh(cqe->byte_cnt), 8);
				assert_int_equal(be32toh(cqe->imm_inval_pkey), IMM);
				break;
			default:
				fail_msg("CQE %u: opcode %u", ci + (uint32_t)i, mlx5dv_get_cqe_opcode(cqe));
			}
		}
		assert_true(req && resp);
		assert_int_equal(ibv_poll_cq(q.cq, 2, wc), 2);
		ci += 2;
		assert_int_equal(be32toh(dv.dbrec[0]) & 0xffffff, ci);
	}
	fx_qp_release(&q);
}

/* ibv_poll_cq reads the ring the program was given, and moves its
 * doorbell record past what it took. */
void mlx5dv_init_obj__cq_poll_reads_ring(void **state)
{
	struct ibv_wc wc[2];
	struct mlx5dv_cq dv;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	raw_cq_ring(&q, &dv);
	fx_qp_to(&q, IBV_QPS_RTS);
	send_imm(&q, q.mr->lkey);
	raw_poll_n(q.cq, wc, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].wr_id == 1) {
			assert_int_equal(wc[i].opcode, IBV_WC_RECV);
			assert_int_equal(wc[i].byte_len, 8);
			assert_true(wc[i].wc_flags & IBV_WC_WITH_IMM);
			assert_int_equal(be32toh(wc[i].imm_data), IMM);
		} else {
			assert_int_equal(wc[i].wr_id, 2);
			assert_int_equal(wc[i].opcode, IBV_WC_SEND);
		}
	}
	assert_int_equal(be32toh(dv.dbrec[0]) & 0xffffff, 2);
	raw_cqe(&dv, 0);
	raw_cqe(&dv, 1);
	fx_qp_release(&q);
}

/* A send from a bad lkey completes in error: an error CQE (REQ_ERR) with
 * the local protection syndrome and the QP's number. */
void mlx5dv_init_obj__cq_error_syndrome(void **state)
{
	struct mlx5_err_cqe *err;
	struct mlx5dv_cq dv;
	struct fx_qp q;
	uint32_t ci;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	raw_cq_ring(&q, &dv);
	fx_qp_to(&q, IBV_QPS_RTS);
	send_imm(&q, q.mr->lkey + 0x100);
	/* The receive may be flushed first or after: find the send's. */
	for (ci = 0;; ci++) {
		struct mlx5_cqe64 *cqe = raw_cqe(&dv, ci);

		if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ_ERR)
			break;
		if (ci == 2)
			fail_msg("no requester's error CQE among 3");
	}
	err = (struct mlx5_err_cqe *)raw_cqe(&dv, ci);
	assert_int_equal(err->syndrome, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	assert_int_equal(be32toh(err->s_wqe_opcode_qpn) & 0xffffff, q.qp->qp_num);
	fx_qp_release(&q);
}

/* ---------------------------------------------------------------- mlx5dv_create_cq */

static struct ibv_cq_ex *dv_cq(struct ibv_context *ctx, struct mlx5dv_cq_init_attr *dv)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS };

	return mlx5dv_create_cq(ctx, &attr, dv);
}

static void dv_cq_refused(struct ibv_context *ctx, struct mlx5dv_cq_init_attr *dv, int want,
			  const char *what)
{
	struct ibv_cq_ex *cq = dv_cq(ctx, dv);

	if (cq) {
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		fail_msg("mlx5dv_create_cq with %s succeeded", what);
	}
	RC_ASSERT_ERRNO("mlx5dv_create_cq", errno, want);
}

/* A CQE size of 128 gives a ring of 128-byte entries; any size but 64 and
 * 128, an unknown comp_mask bit, an unknown flag are refused (EINVAL);
 * so are compression and padding on a device that reports neither. */
void mlx5dv_create_cq__attributes(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);
	struct mlx5dv_context caps = { .comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION };
	struct mlx5dv_cq_init_attr dv = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
					  .cqe_size = 128 };
	struct mlx5dv_obj obj;
	struct mlx5dv_cq out;
	struct ibv_cq_ex *cq = dv_cq(ctx, &dv);

	if (!cq)
		fail_msg("mlx5dv_create_cq(cqe_size 128): %s", strerror(errno));
	obj = (struct mlx5dv_obj){ .cq = { .in = ibv_cq_ex_to_cq(cq), .out = &out } };
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
	assert_int_equal(out.cqe_size, 128);
	assert_int_equal(out.cqe_cnt, (uint32_t)ibv_cq_ex_to_cq(cq)->cqe + 1);
	FX_VERBS_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));

	dv.cqe_size = 100;
	dv_cq_refused(ctx, &dv, EINVAL, "cqe_size 100");
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = 1u << 20 };
	dv_cq_refused(ctx, &dv, EINVAL, "comp_mask bit 20");
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS,
					   .flags = 1u << 20 };
	dv_cq_refused(ctx, &dv, EINVAL, "flag bit 20");
	FX_VERBS_OK(mlx5dv_query_device(ctx, &caps));
	if ((caps.comp_mask & MLX5DV_CONTEXT_MASK_CQE_COMPRESION) && !caps.cqe_comp_caps.max_num) {
		dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE,
						   .cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH };
		dv_cq_refused(ctx, &dv, EINVAL, "compression on a device without it");
	}
	if (!(caps.flags & MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD)) {
		dv = (struct mlx5dv_cq_init_attr){
			.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS | MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
			.flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD, .cqe_size = 128 };
		dv_cq_refused(ctx, &dv, EINVAL, "128-byte padding on a device without it");
	}
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* On a device that is not mlx5: NULL, EOPNOTSUPP. */
void mlx5dv_create_cq__not_mlx5(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_NOT_MLX5);

	dv_cq_refused(ctx, NULL, EOPNOTSUPP, "a device that is not mlx5");
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* An empty CQ is refused, through the verbs call and the mlx5dv one. */
void mlx5dv_create_cq__no_entries(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);
	struct ibv_cq_init_attr_ex attr = { .cqe = 0, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq *cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);

	if (cq) {
		ibv_destroy_cq(cq);
		fail_msg("ibv_create_cq(cqe 0) succeeded on an mlx5 device");
	}
	RC_ASSERT_ERRNO("ibv_create_cq", errno, EINVAL);
	if (mlx5dv_create_cq(ctx, &attr, NULL))
		fail_msg("mlx5dv_create_cq(cqe 0) succeeded");
	RC_ASSERT_ERRNO("mlx5dv_create_cq", errno, EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ---------------------------------------------------------------- raw WQEs */

/* A program writes its WQEs and receive WQEs itself and rings the
 * doorbell; the device runs them and writes their CQEs: a SEND with
 * immediate into a receive the program wrote, an RDMA WRITE, an RDMA READ
 * and a fetch-and-add, each one block, each found in the CQ by its index. */
void mlx5dv_init_obj__qp_raw_wqes(void **state)
{
	struct mlx5_wqe_data_seg *rseg;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_cqe64 *cqe;
	uint32_t qpn, lkey;
	struct raw r;

	raw_open(&r);
	qpn = r.q.qp->qp_num;
	lkey = r.mr->lkey;

	/* A receive WQE of the program's own, into buf[8..9]. */
	rseg = (struct mlx5_wqe_data_seg *)((char *)r.qp.rq.buf +
					    (size_t)(r.rq_pi & (r.qp.rq.wqe_cnt - 1)) * r.qp.rq.stride);
	mlx5dv_set_data_seg(&rseg[0], 16, lkey, (uintptr_t)&r.buf[8]);
	if (r.qp.rq.stride > 16)
		mlx5dv_set_data_seg(&rseg[1], 0, MLX5_INVALID_LKEY, 0);
	r.rq_pi++;
	__atomic_store_n(&r.qp.dbrec[MLX5_RCV_DBR], htobe32(r.rq_pi & 0xffff), __ATOMIC_RELEASE);

	/* SEND with immediate of buf[0]. */
	r.buf[0] = 0x1122334455667788ull;
	ctrl = raw_wqe(&r);
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)r.sq_pi, MLX5_OPCODE_SEND_IMM, 0, qpn,
			    MLX5_WQE_CTRL_CQ_UPDATE, 2, 0, htobe32(IMM));
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ctrl + 1), 8, lkey, (uintptr_t)&r.buf[0]);
	raw_ring(&r, ctrl);
	for (int i = 0; i < 2; i++) {
		cqe = raw_take(&r);
		if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ) {
			assert_int_equal(be32toh(cqe->sop_drop_qpn) >> 24, MLX5_OPCODE_SEND_IMM);
			assert_int_equal(be16toh(cqe->wqe_counter), 0);
		} else {
			assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_RESP_SEND_IMM);
			assert_int_equal(be32toh(cqe->byte_cnt), 8);
			assert_int_equal(be32toh(cqe->imm_inval_pkey), IMM);
			assert_int_equal(be16toh(cqe->wqe_counter), 0);
		}
	}
	assert_true(r.buf[8] == 0x1122334455667788ull);

	/* RDMA WRITE of buf[0] to buf[16], READ of it into buf[24]. */
	raw_rdma(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0, 1);
	assert_true(r.buf[16] == 0x1122334455667788ull);
	cqe = raw_rdma(&r, MLX5_OPCODE_RDMA_READ, 16, 24, 0, 2);
	assert_int_equal(be32toh(cqe->byte_cnt), 8);
	assert_true(r.buf[24] == 0x1122334455667788ull);

	/* Fetch-and-add of 5 on buf[32], the old value into buf[40]. */
	r.buf[32] = 100;
	raw_rdma(&r, MLX5_OPCODE_ATOMIC_FA, 32, 40, 5, 3);
	assert_true(r.buf[32] == 105);
	assert_true(be64toh(r.buf[40]) == 100 || r.buf[40] == 100);
	raw_close(&r);
}

/* A WQE written to the BlueFlame register whole, as a program copies it
 * there: 8 bytes at a time, the control segment first. */
static void raw_bf_copy(struct raw *r, const void *wqe, size_t size)
{
	volatile uint64_t *reg = (volatile uint64_t *)((uintptr_t)r->qp.bf.reg ^ r->bf_offset);
	const uint64_t *src = wqe;

	r->sq_pi++;
	__atomic_store_n(&r->qp.dbrec[MLX5_SND_DBR], htobe32(r->sq_pi & 0xffff), __ATOMIC_RELEASE);
	for (size_t i = 0; i < size / 8; i++)
		reg[i] = src[i];
	r->bf_offset ^= r->qp.bf.size;
}

/* The BlueFlame register: two buffers of half a ConnectX's 512-byte
 * register, at 0x800 or 0xa00 in a UAR page, which a program writes in
 * turn with a copy of each WQE; the device runs the WQE either way. */
void mlx5dv_init_obj__qp_blueflame(void **state)
{
	uintptr_t offset;
	struct raw r;

	raw_open(&r);
	offset = (uintptr_t)r.qp.bf.reg % 4096;
	raw_require_bf(&r);
	assert_int_equal(r.qp.bf.size, 256);
	if (offset != 0x800 && offset != 0xa00)
		fail_msg("bf.reg at 0x%lx in its page, not 0x800 or 0xa00", (unsigned long)offset);
	/* Three RDMA WRITEs, each copied whole into the buffer its turn
	 * names (reg, reg ^ 256, reg), one block each. */
	for (int i = 0; i < 3; i++) {
		struct mlx5_wqe_ctrl_seg *ctrl = raw_wqe(&r);
		struct mlx5_wqe_raddr_seg *ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);

		r.buf[i] = 0xb1f0 + (uint64_t)i;
		mlx5dv_set_ctrl_seg(ctrl, (uint16_t)r.sq_pi, MLX5_OPCODE_RDMA_WRITE, 0, r.q.qp->qp_num,
				    MLX5_WQE_CTRL_CQ_UPDATE, 3, 0, 0);
		ra->raddr = htobe64((uintptr_t)&r.buf[16 + i]);
		ra->rkey = htobe32(r.mr->rkey);
		mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ra + 1), 8, r.mr->lkey,
				    (uintptr_t)&r.buf[i]);
		raw_bf_copy(&r, ctrl, 64);
		raw_req(&r, MLX5_OPCODE_RDMA_WRITE, (uint16_t)i);
		assert_true(r.buf[16 + i] == 0xb1f0 + (uint64_t)i);
	}
	raw_close(&r);
}

/* The RC QP of q swapped for one on an SRQ of 4 receives, handed over. */
static struct ibv_srq *raw_srq(struct raw *r, struct mlx5dv_srq *dv)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.send_cq = r->q.cq,
		.recv_cq = r->q.cq,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};
	struct mlx5dv_obj obj = { .srq = { .out = dv } };
	struct ibv_srq *srq = ibv_create_srq(r->q.pd, &sattr);

	if (!srq)
		fail_msg("ibv_create_srq: %s", strerror(errno));
	init.srq = srq;
	FX_VERBS_OK(ibv_destroy_qp(r->q.qp));
	r->q.qp = ibv_create_qp(r->q.pd, &init);
	if (!r->q.qp)
		fail_msg("ibv_create_qp(RC on an SRQ): %s", strerror(errno));
	obj.srq.in = srq;
	dv->comp_mask = MLX5DV_SRQ_MASK_SRQN;
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ));
	return srq;
}

/* An SRQ's WQEs as the provider lays them out: from head 0 to a tail one
 * less than a power of two, each a next segment linking it to the one
 * after. A receive the program links in itself (data segment, the
 * record's count) takes a SEND, whose CQE names the SRQ WQE it took. */
void mlx5dv_init_obj__srq_linked_list(void **state)
{
	struct ibv_sge sge = { .addr = (uintptr_t)0, .length = 8, .lkey = 0 };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct mlx5_wqe_srq_next_seg *next;
	struct mlx5dv_srq dv;
	struct ibv_srq *srq;
	struct raw r;
	bool received = false;
	uint32_t srqn;

	fx_qp_create(&r.q, FX_DEV_MLX5, IBV_QPT_RC);
	memset(&r.cq, 0, sizeof r.cq);
	raw_cq_ring(&r.q, &r.cq);
	r.ci = 0;
	r.mr = ibv_reg_mr(r.q.pd, r.buf, sizeof r.buf, IBV_ACCESS_LOCAL_WRITE);
	if (!r.mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	srq = raw_srq(&r, &dv);
	assert_int_equal(dv.head, 0);
	assert_true(dv.tail >= 4 && ((dv.tail + 1) & dv.tail) == 0);
	assert_int_equal(dv.stride, 32);
	assert_true(dv.comp_mask & MLX5DV_SRQ_MASK_SRQN);
	assert_int_equal(ibv_get_srq_num(srq, &srqn), 0);
	assert_int_equal(dv.srqn, srqn);
	for (uint32_t i = 0; i <= dv.tail; i++) {
		next = (struct mlx5_wqe_srq_next_seg *)((char *)dv.buf + (size_t)i * dv.stride);
		assert_int_equal(be16toh(next->next_wqe_index), (i + 1) & dv.tail);
	}
	fx_qp_to(&r.q, IBV_QPS_RTS);
	/* The program's receive at WQE 0, into buf[8]. */
	next = dv.buf;
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(next + 1), 16, r.mr->lkey, (uintptr_t)&r.buf[8]);
	__atomic_store_n(&dv.dbrec[0], htobe32(1), __ATOMIC_RELEASE);
	r.buf[0] = 0xfeedfacecafebeefull;
	sge.addr = (uintptr_t)&r.buf[0];
	sge.lkey = r.mr->lkey;
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr, &bad));
	for (int i = 0; i < 2; i++) {
		struct mlx5_cqe64 *cqe = raw_cqe(&r.cq, r.ci++);

		if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_RESP_SEND) {
			received = true;
			assert_int_equal(be16toh(cqe->wqe_counter), 0);
			assert_int_equal(be32toh(cqe->byte_cnt), 8);
		} else {
			assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_REQ);
		}
	}
	assert_true(received);
	assert_true(r.buf[8] == 0xfeedfacecafebeefull);
	FX_VERBS_OK(ibv_destroy_qp(r.q.qp));
	r.q.qp = NULL;
	FX_VERBS_OK(ibv_destroy_srq(srq));
	FX_VERBS_OK(ibv_dereg_mr(r.mr));
	fx_qp_release(&r.q);
}

/* An RC QP to itself on an SRQ of 4 handed over (raw_srq), in RTS, with
 * a region over r->buf for local writes. */
static struct ibv_srq *srq_open(struct raw *r, struct mlx5dv_srq *dv)
{
	struct ibv_srq *srq;

	fx_qp_create(&r->q, FX_DEV_MLX5, IBV_QPT_RC);
	memset(&r->cq, 0, sizeof r->cq);
	raw_cq_ring(&r->q, &r->cq);
	r->ci = 0;
	r->mr = ibv_reg_mr(r->q.pd, r->buf, sizeof r->buf, IBV_ACCESS_LOCAL_WRITE);
	if (!r->mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	srq = raw_srq(r, dv);
	fx_qp_to(&r->q, IBV_QPS_RTS);
	return srq;
}

static void srq_close(struct raw *r, struct ibv_srq *srq)
{
	FX_VERBS_OK(ibv_destroy_qp(r->q.qp));
	r->q.qp = NULL;
	FX_VERBS_OK(ibv_destroy_srq(srq));
	FX_VERBS_OK(ibv_dereg_mr(r->mr));
	fx_qp_release(&r->q);
}

/* A signalled SEND of the 8 bytes at buf[from] on r's QP. */
static void send8(struct raw *r, int from, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&r->buf[from], .length = 8, .lkey = r->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	FX_VERBS_OK(ibv_post_send(r->q.qp, &wr, &bad));
}

static struct mlx5_wqe_srq_next_seg *srq_wqe(const struct mlx5dv_srq *dv, uint32_t index)
{
	return (struct mlx5_wqe_srq_next_seg *)((char *)dv->buf + (size_t)index * dv->stride);
}

/* ibv_post_srq_recv on an SRQ handed over writes each receive at the
 * head of the list (a data segment after the next segment), following
 * the links, and counts it in the record; it takes as many as
 * ibv_query_srq's max_wr, then ENOMEM (the provider's head has met its
 * tail). Receives the device took and the provider polled go back on
 * the list: a post succeeds again. */
void mlx5dv_init_obj__srq_post_recv(void **state)
{
	struct ibv_srq_attr attr;
	struct mlx5dv_srq dv;
	struct ibv_srq *srq;
	struct ibv_wc wc[4];
	uint32_t posted = 0, index = 0;
	uint64_t next_recv = 100;
	int ret, n = 0;
	struct raw r;

	srq = srq_open(&r, &dv);
	FX_VERBS_OK(ibv_query_srq(srq, &attr));
	for (;; posted++) {
		struct ibv_sge sge = { .addr = (uintptr_t)&r.buf[8 + posted], .length = 8,
				       .lkey = r.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + posted, .sg_list = &sge, .num_sge = 1 }, *bad;

		if ((ret = ibv_post_srq_recv(srq, &wr, &bad)))
			break;
	}
	/* Not RC_ASSERT_ERRNO: ibv_post_srq_recv is inline, no table. */
	assert_int_equal(ret, ENOMEM);
	assert_int_equal(posted, attr.max_wr);
	assert_int_equal(be32toh(dv.dbrec[0]) & 0xffff, posted);
	for (uint32_t i = 0; i < posted; i++) {
		struct mlx5_wqe_data_seg *seg = (struct mlx5_wqe_data_seg *)(srq_wqe(&dv, index) + 1);

		assert_true(be64toh(seg->addr) == (uintptr_t)&r.buf[8 + i]);
		assert_int_equal(be32toh(seg->byte_count), 8);
		assert_int_equal(be32toh(seg->lkey), r.mr->lkey);
		index = be16toh(srq_wqe(&dv, index)->next_wqe_index);
	}
	r.buf[0] = 0xa1;
	r.buf[1] = 0xb2;
	send8(&r, 0, 1);
	send8(&r, 1, 2);
	while (n < 4) {
		int got = ibv_poll_cq(r.q.cq, 4 - n, wc + n);

		assert_true(got >= 0);
		n += got;
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].opcode == IBV_WC_RECV)
			assert_int_equal(wc[i].wr_id, next_recv++);
	}
	assert_int_equal(next_recv, 102);
	assert_true(r.buf[8] == 0xa1 && r.buf[9] == 0xb2);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)&r.buf[40], .length = 8, .lkey = r.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 200, .sg_list = &sge, .num_sge = 1 }, *bad;

		FX_VERBS_OK(ibv_post_srq_recv(srq, &wr, &bad));
	}
	srq_close(&r, srq);
}

/* The device takes an SRQ's receives along the list the next segments
 * make, not in the order of the buffer: a program that links WQE 0 to 2
 * and 2 to 1 and posts the three (the record's count 3) has three SENDs
 * land in WQEs 0, 2 and 1, and the responder's CQEs name them so. */
void mlx5dv_init_obj__srq_follows_links(void **state)
{
	static const uint16_t order[3] = { 0, 2, 1 };
	struct mlx5dv_srq dv;
	struct ibv_srq *srq;
	int recvs = 0;
	struct raw r;

	srq = srq_open(&r, &dv);
	srq_wqe(&dv, 0)->next_wqe_index = htobe16(2);
	srq_wqe(&dv, 2)->next_wqe_index = htobe16(1);
	srq_wqe(&dv, 1)->next_wqe_index = htobe16(3);
	for (int i = 0; i < 3; i++)
		mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(srq_wqe(&dv, i) + 1), 8, r.mr->lkey,
				    (uintptr_t)&r.buf[8 + i]);
	__atomic_store_n(&dv.dbrec[0], htobe32(3), __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++) {
		r.buf[i] = 0xc0 + (uint64_t)i;
		send8(&r, i, (uint64_t)i);
	}
	for (int i = 0; i < 6; i++) {
		struct mlx5_cqe64 *cqe = raw_take(&r);

		if (mlx5dv_get_cqe_opcode(cqe) != MLX5_CQE_RESP_SEND) {
			assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_REQ);
			continue;
		}
		assert_true(recvs < 3);
		assert_int_equal(be16toh(cqe->wqe_counter), order[recvs]);
		recvs++;
	}
	assert_int_equal(recvs, 3);
	assert_true(r.buf[8] == 0xc0 && r.buf[10] == 0xc1 && r.buf[9] == 0xc2);
	srq_close(&r, srq);
}

/* A UD SEND the program writes itself: its address vector the one
 * mlx5dv_init_obj gives for an address handle, the remote QP and Q_Key
 * beside it, two blocks long; the datagram lands behind its 40-byte GRH
 * and its CQE names the sender's QP. */
void mlx5dv_init_obj__ud_raw_send(void **state)
{
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct ibv_sge rsge;
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct mlx5_wqe_datagram_seg *dg;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5dv_ah dvah;
	struct ibv_ah *ah;
	struct raw r;
	bool sent = false, received = false;

	ah = raw_ud_self(&r, &attr, &dvah, true);
	assert_non_null(dvah.av);
	assert_int_equal(memcmp(dvah.av->rgid, attr.grh.dgid.raw, 16), 0);

	rsge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[8], .length = 48, .lkey = r.mr->lkey };
	FX_VERBS_OK(ibv_post_recv(r.q.qp, &rwr, &rbad));
	r.buf[0] = 0x0123456789abcdefull;
	/* Two blocks, the second at the block after: ctrl, datagram (48),
	 * data: 5 units of 16 bytes. */
	ctrl = raw_wqe(&r);
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)r.sq_pi, MLX5_OPCODE_SEND, 0, r.q.qp->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, 5, 0, 0);
	dg = (struct mlx5_wqe_datagram_seg *)(ctrl + 1);
	memcpy(&dg->av, dvah.av, sizeof dg->av);
	dg->av.dqp_dct = htobe32(r.q.qp->qp_num | MLX5_EXTENDED_UD_AV);
	dg->av.key.qkey.qkey = htobe32(0x11111111);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(dg + 1), 8, r.mr->lkey, (uintptr_t)&r.buf[0]);
	r.sq_pi++; /* the first block; raw_ring counts the second */
	raw_ring(&r, ctrl);
	for (int i = 0; i < 2; i++) {
		struct mlx5_cqe64 *cqe = raw_take(&r);

		if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ) {
			sent = true;
			assert_int_equal(be16toh(cqe->wqe_counter), 0);
		} else {
			received = true;
			assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_RESP_SEND);
			assert_int_equal(be32toh(cqe->byte_cnt), 40 + 8);
			assert_int_equal(be32toh(cqe->flags_rqpn) & 0xffffff, r.q.qp->qp_num);
		}
	}
	assert_true(sent && received);
	assert_true(r.buf[8 + 5] == 0x0123456789abcdefull);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	raw_close(&r);
}

/* ibv_post_send on a UD QP writes the datagram segment as the
 * provider's set_datagram_seg does: the AH's address vector (what
 * mlx5dv_init_obj gives for the AH), the remote QP number with
 * MLX5_EXTENDED_UD_AV, the Q_Key; ds 5 with one data segment. The
 * receive completes through ibv_poll_cq with IBV_WC_GRH (RoCE: every
 * datagram has one, the 40 bytes ahead of the data) and the sender's QP. */
void mlx5dv_init_obj__ud_post_send(void **state)
{
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct ibv_sge sge, rsge;
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct mlx5_wqe_datagram_seg *dg;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5dv_ah dvah;
	struct ibv_wc wc[2];
	struct ibv_ah *ah;
	struct raw r;

	ah = raw_ud_self(&r, &attr, &dvah, false);

	rsge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[8], .length = 48, .lkey = r.mr->lkey };
	FX_VERBS_OK(ibv_post_recv(r.q.qp, &rwr, &rbad));
	r.buf[0] = 0xfedcba9876543210ull;
	sge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[0], .length = 8, .lkey = r.mr->lkey };
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = r.q.qp->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr, &bad));
	ctrl = r.qp.sq.buf;
	assert_int_equal(be32toh(ctrl->opmod_idx_opcode), MLX5_OPCODE_SEND);
	assert_int_equal(be32toh(ctrl->qpn_ds), r.q.qp->qp_num << 8 | 5);
	dg = (struct mlx5_wqe_datagram_seg *)(ctrl + 1);
	assert_int_equal(be32toh(dg->av.dqp_dct), r.q.qp->qp_num | MLX5_EXTENDED_UD_AV);
	assert_int_equal(be32toh(dg->av.key.qkey.qkey), 0x11111111);
	assert_memory_equal(dg->av.rgid, dvah.av->rgid, sizeof dg->av.rgid);
	assert_int_equal(dg->av.grh_gid_fl, dvah.av->grh_gid_fl);
	assert_int_equal(dg->av.hop_limit, dvah.av->hop_limit);
	assert_int_equal(dg->av.stat_rate_sl, dvah.av->stat_rate_sl);
	assert_int_equal(be32toh(((struct mlx5_wqe_data_seg *)(dg + 1))->byte_count), 8);
	assert_int_equal(be32toh(r.qp.dbrec[MLX5_SND_DBR]), 2);

	raw_poll_n(r.q.cq, wc, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].wr_id == 1) {
			assert_int_equal(wc[i].opcode, IBV_WC_SEND);
			continue;
		}
		assert_int_equal(wc[i].wr_id, 3);
		assert_int_equal(wc[i].opcode, IBV_WC_RECV);
		assert_int_equal(wc[i].byte_len, 40 + 8);
		assert_true(wc[i].wc_flags & IBV_WC_GRH);
		assert_int_equal(wc[i].src_qp, r.q.qp->qp_num);
	}
	assert_true(r.buf[8 + 5] == 0xfedcba9876543210ull);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	raw_close(&r);
}

typedef int (*fault_add_fn)(const char *spec, char *err, size_t errlen);

/* A doorbell the device misses (rdmamock/mlx5/doorbell_lost) leaves its
 * WQE in the queue, the record ahead of the device: nothing moves and no
 * CQE comes, until the next doorbell runs both, in order. */
void mlx5dv_init_obj__doorbell_lost(void **state)
{
	fault_add_fn add = (fault_add_fn)fx_mock_call("rdmamock_fault_add");
	char spec[96], err[256];
	struct mlx5_cqe64 *cqe;
	struct raw r;

	raw_open(&r);
	snprintf(spec, sizeof spec, "rdmamock/mlx5/doorbell_lost qpn=%u nth=1", r.q.qp->qp_num);
	if (add(spec, err, sizeof err) != 1)
		fail_msg("rdmamock_fault_add(%s): %s", spec, err);
	r.buf[0] = 42;
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0);
	usleep(20000);
	cqe = (struct mlx5_cqe64 *)r.cq.buf;
	assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_INVALID);
	assert_true(r.buf[16] == 0);
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 24, 0, 0);
	raw_req(&r, MLX5_OPCODE_RDMA_WRITE, 0);
	raw_req(&r, MLX5_OPCODE_RDMA_WRITE, 1);
	assert_true(r.buf[16] == 42 && r.buf[24] == 42);
	raw_close(&r);
}

/* An error completion chosen by a fault (rdmamock/ibverbs/wc, the Nth of a
 * QP) reaches a program's own WQE as an error CQE with the status's
 * syndrome. */
void mlx5dv_init_obj__fault_error_cqe(void **state)
{
	fault_add_fn add = (fault_add_fn)fx_mock_call("rdmamock_fault_add");
	char spec[128], err[256];
	struct mlx5_err_cqe *ecqe;
	struct raw r;

	raw_open(&r);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/wc qpn=%u nth=2 status=IBV_WC_REM_ACCESS_ERR",
		 r.q.qp->qp_num);
	if (add(spec, err, sizeof err) != 1)
		fail_msg("rdmamock_fault_add(%s): %s", spec, err);
	raw_rdma(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0, 0);
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 24, 0, 0);
	ecqe = (struct mlx5_err_cqe *)raw_take(&r);
	assert_int_equal(ecqe->op_own >> 4, MLX5_CQE_REQ_ERR);
	assert_int_equal(ecqe->syndrome, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	assert_int_equal(be16toh(ecqe->wqe_counter), 1);
	assert_int_equal(be32toh(ecqe->s_wqe_opcode_qpn) & 0xffffff, r.q.qp->qp_num);
	raw_close(&r);
}

/* The port going down at a raw WQE's doorbell (rdmamock/ibverbs/port_down
 * aimed at the QP): the write is sent again after each local ACK timeout
 * (67 ms at the fixture's 14) and, with retry_cnt 7 spent (a ConnectX's 7
 * is seven retries), its CQE is MLX5_CQE_REQ_ERR with the retry syndrome.
 * The port is brought back up for what runs next. */
void mlx5dv_init_obj__fault_port_down(void **state)
{
	fault_add_fn add = (fault_add_fn)fx_mock_call("rdmamock_fault_add");
	int (*port_set)(const char *, int) = (int (*)(const char *, int))fx_topology_call("rdmamock_port_set");
	char spec[128], err[256];
	struct ibv_async_event ev;
	struct mlx5_err_cqe *ecqe;
	struct raw r;

	raw_open(&r);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/port_down qpn=%u nth=1 pid=%d", r.q.qp->qp_num,
		 (int)getpid());
	if (add(spec, err, sizeof err) != 1)
		fail_msg("rdmamock_fault_add(%s): %s", spec, err);
	r.buf[0] = 42;
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0);
	fx_async_expect(r.q.ctx, IBV_EVENT_GID_CHANGE, 2000, &ev);
	ibv_ack_async_event(&ev);
	fx_async_expect(r.q.ctx, IBV_EVENT_PORT_ERR, 2000, &ev);
	ibv_ack_async_event(&ev);
	ecqe = (struct mlx5_err_cqe *)raw_take(&r);
	assert_int_equal(ecqe->op_own >> 4, MLX5_CQE_REQ_ERR);
	assert_int_equal(ecqe->syndrome, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	assert_int_equal(be16toh(ecqe->wqe_counter), 0);
	assert_true(r.buf[16] == 0);
	assert_int_equal(port_set(ibv_get_device_name(r.q.ctx->device), 1), 0);
	fx_async_expect(r.q.ctx, IBV_EVENT_PORT_ACTIVE, 2000, &ev);
	ibv_ack_async_event(&ev);
	raw_close(&r);
}

/* ---------------------------------------------------------------- DC */

#define DC_KEY 0x1ee7a330c0ffeeull

struct dc {
	struct raw r;          /* r.q: the PD, the CQ (its ring r.cq), buf and its MR */
	struct ibv_srq *srq;
	struct ibv_qp *dct, *dci;
	struct mlx5dv_qp dci_dv;
	union ibv_gid gid;
};

static struct ibv_qp *dc_create(struct dc *d, enum mlx5dv_dc_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_DRIVER,
		.send_cq = d->r.q.cq,
		.recv_cq = d->r.q.cq,
		.srq = srq,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->r.q.pd,
		.cap = { .max_send_wr = type == MLX5DV_DCTYPE_DCI ? 16 : 0,
			 .max_send_sge = type == MLX5DV_DCTYPE_DCI ? 1 : 0 },
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = { .dc_type = type, .dct_access_key = DC_KEY },
	};

	return mlx5dv_create_qp(d->r.q.ctx, &attr, &dv);
}

/* The RoCE path both take: the port's GID 0, a GRH. */
static void dc_path(struct dc *d, struct ibv_qp_attr *attr)
{
	attr->path_mtu = IBV_MTU_1024;
	attr->ah_attr = (struct ibv_ah_attr){ .is_global = 1, .port_num = 1,
					      .grh = { .dgid = d->gid, .hop_limit = 64 } };
}

static void dct_to_rtr(struct dc *d)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						       IBV_ACCESS_REMOTE_ATOMIC };

	FX_VERBS_OK(ibv_modify_qp(d->dct, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						       IBV_QP_ACCESS_FLAGS));
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .min_rnr_timer = 1 };
	dc_path(d, &attr);
	FX_VERBS_OK(ibv_modify_qp(d->dct, &attr, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV |
						       IBV_QP_PATH_MTU));
}

static void dci_to_rts(struct dc *d, uint8_t timeout, uint8_t retry_cnt)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	FX_VERBS_OK(ibv_modify_qp(d->dci, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT));
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	dc_path(d, &attr);
	FX_VERBS_OK(ibv_modify_qp(d->dci, &attr, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_AV));
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = timeout,
				     .retry_cnt = retry_cnt, .rnr_retry = 7, .max_rd_atomic = 1 };
	FX_VERBS_OK(ibv_modify_qp(d->dci, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
						       IBV_QP_MAX_QP_RD_ATOMIC));
}

/* A PD, a CQ handed over as a ring, an SRQ, a region over buf; no DC QP. */
static void dc_open(struct dc *d)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 8, .max_sge = 1 } };

	memset(d, 0, sizeof *d);
	fx_qp_create(&d->r.q, FX_DEV_MLX5, IBV_QPT_RC);
	raw_cq_ring(&d->r.q, &d->r.cq);
	d->r.mr = ibv_reg_mr(d->r.q.pd, d->r.buf, sizeof d->r.buf,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC);
	if (!d->r.mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	d->srq = ibv_create_srq(d->r.q.pd, &sattr);
	if (!d->srq)
		fail_msg("ibv_create_srq: %s", strerror(errno));
	FX_OK(ibv_query_gid(d->r.q.ctx, 1, 0, &d->gid));
}

static void dc_close(struct dc *d)
{
	if (d->dci)
		FX_VERBS_OK(ibv_destroy_qp(d->dci));
	if (d->dct)
		FX_VERBS_OK(ibv_destroy_qp(d->dct));
	FX_VERBS_OK(ibv_destroy_srq(d->srq));
	raw_close(&d->r);
}

/* In a child: a DCT handed to mlx5dv_init_obj. */
static void dct_init_obj(void *unused)
{
	struct mlx5dv_qp out;
	struct mlx5dv_obj obj = { .qp = { .out = &out } };
	struct dc d;

	dc_open(&d);
	d.dct = dc_create(&d, MLX5DV_DCTYPE_DCT, d.srq);
	if (!d.dct)
		_exit(3);
	obj.qp.in = d.dct;
	mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP);
}

/* A DCT has no queues and no BlueFlame register: libmlx5 reads the
 * register through its NULL pointer, and the mock ends the process too,
 * naming the call. */
void mlx5dv_init_obj__dct_no_queues(void **state)
{
	FX_VERBS_OK(ibv_close_device(fx_open_device(FX_DEV_MLX5)));
	fx_assert_crashes(dct_init_obj, "mlx5dv_init_obj");
}

static void dc_modify_refused(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, const char *what)
{
	int ret = ibv_modify_qp(qp, attr, mask);

	if (ret != EINVAL)
		fail_msg("ibv_modify_qp(%s) gave %d, not EINVAL (%d)", what, ret, EINVAL);
}

/* A DCT goes from RESET to INIT to RTR, each with exactly the attributes
 * mlx5_ib_modify_dct takes, and no further; the device makes it at RTR,
 * and only then has it a number. */
void mlx5dv_create_qp__dct_states(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct dc d;

	dc_open(&d);
	if (!dc_create(&d, MLX5DV_DCTYPE_DCT, NULL)) /* a DCT needs an SRQ */
		RC_ASSERT_ERRNO("mlx5dv_create_qp", errno, EINVAL);
	else
		fail_msg("mlx5dv_create_qp made a DCT without an SRQ");
	d.dct = dc_create(&d, MLX5DV_DCTYPE_DCT, d.srq);
	if (!d.dct)
		fail_msg("mlx5dv_create_qp(DCT): %s", strerror(errno));
	assert_int_equal(d.dct->qp_type, IBV_QPT_DRIVER);
	assert_int_equal(d.dct->qp_num, 0);
	dc_modify_refused(d.dct, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT,
			  "DCT to INIT without access flags");
	dc_modify_refused(d.dct, &attr,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY,
			  "DCT to INIT with a Q_Key");
	dct_to_rtr(&d);
	assert_int_not_equal(d.dct->qp_num, 0);
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	dc_modify_refused(d.dct, &attr, IBV_QP_STATE, "DCT to RTS");
	attr.qp_state = IBV_QPS_ERR;
	dc_modify_refused(d.dct, &attr, IBV_QP_STATE, "DCT to ERR");
	dc_close(&d);
}

/* A DCI's transitions are modify_dci_qp_is_ok's: INIT with a P_Key index
 * and a port but no access flags, RTR with a path MTU (the path is
 * optional: each WQE names its own), RTS with the requester's attributes.
 * It takes no work from ibv_post_send. */
void mlx5dv_create_qp__dci_states(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct dc d;

	dc_open(&d);
	d.dci = dc_create(&d, MLX5DV_DCTYPE_DCI, NULL);
	if (!d.dci)
		fail_msg("mlx5dv_create_qp(DCI): %s", strerror(errno));
	assert_int_not_equal(d.dci->qp_num, 0);
	dc_modify_refused(d.dci, &attr,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			  "DCI to INIT with access flags");
	dci_to_rts(&d, 14, 7);
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .min_rnr_timer = 3 };
	FX_VERBS_OK(ibv_modify_qp(d.dci, &attr, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER));
	attr.timeout = 10;
	dc_modify_refused(d.dci, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT, "DCI RTS to RTS with a timeout");
	dc_close(&d);
}

/* What the provider refuses of a DC request: the DC attributes on a QP
 * type other than IBV_QPT_DRIVER, a DC type it does not know, send
 * operations on a DCT, DCI streams beyond the device's (none). */
void mlx5dv_create_qp__dc_refused(void **state)
{
	struct ibv_qp_init_attr_ex attr;
	struct mlx5dv_qp_init_attr dv;
	struct dc d;

	dc_open(&d);
#define DC_ATTRS(type, dctype)                                                                    \
	do {                                                                                      \
		attr = (struct ibv_qp_init_attr_ex){ .qp_type = (type), .send_cq = d.r.q.cq,       \
						     .recv_cq = d.r.q.cq, .srq = d.srq,            \
						     .comp_mask = IBV_QP_INIT_ATTR_PD,             \
						     .pd = d.r.q.pd,                               \
						     .cap = { .max_send_wr = 4, .max_send_sge = 1 } }; \
		dv = (struct mlx5dv_qp_init_attr){ .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,     \
						   .dc_init_attr = { .dc_type = (dctype) } };     \
	} while (0)
#define DC_REFUSED(what, err)                                                         \
	do {                                                                          \
		struct ibv_qp *qp = mlx5dv_create_qp(d.r.q.ctx, &attr, &dv);          \
		if (qp) {                                                             \
			ibv_destroy_qp(qp);                                           \
			fail_msg("mlx5dv_create_qp(%s) succeeded", what);             \
		}                                                                     \
		if (errno != (err))                                                   \
			fail_msg("mlx5dv_create_qp(%s): errno %d, not %d", what, errno, err); \
		RC_ASSERT_ERRNO("mlx5dv_create_qp", errno, err);                      \
	} while (0)
	DC_ATTRS(IBV_QPT_RC, MLX5DV_DCTYPE_DCT);
	DC_REFUSED("RC with DC attributes", EINVAL);
	DC_ATTRS(IBV_QPT_DRIVER, 7);
	DC_REFUSED("DC type 7", EINVAL);
	DC_ATTRS(IBV_QPT_DRIVER, MLX5DV_DCTYPE_DCT);
	attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	DC_REFUSED("DCT with send operations", EINVAL);
	DC_ATTRS(IBV_QPT_DRIVER, MLX5DV_DCTYPE_DCI);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	dv.dc_init_attr.dci_streams.log_num_concurent = 4;
	DC_REFUSED("DCI with 16 streams", EINVAL);
#undef DC_REFUSED
#undef DC_ATTRS
	dc_close(&d);
}

/* mlx5dv_create_qp of type on q's objects with dv (NULL: none); 0 and the
 * QP checked and destroyed, or the errno. */
static int dv_create(struct fx_qp *q, enum ibv_qp_type type, struct mlx5dv_qp_init_attr *dv)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = type, .send_cq = q->cq, .recv_cq = q->cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = q->pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct ibv_qp *qp;

	errno = 0;
	qp = mlx5dv_create_qp(q->ctx, &attr, dv);
	if (!qp)
		return errno;
	assert_int_equal(qp->qp_type, type);
	FX_VERBS_OK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &init));
	assert_int_equal(qa.qp_state, IBV_QPS_RESET);
	assert_int_equal(init.qp_type, type);
	FX_VERBS_OK(ibv_destroy_qp(qp));
	return 0;
}

/* RC, UC and UD QPs made by mlx5dv_create_qp: with no mlx5 attributes,
 * and with scatter to CQE disabled or allowed; both at once, a creation
 * flag or a comp_mask bit the provider does not know, or DC attributes
 * on these types are EINVAL (providers/mlx5 verbs.c create_qp). */
void mlx5dv_create_qp__create_flags(void **state)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	static const struct {
		uint64_t comp_mask;
		uint32_t create_flags;
		int want;
		const char *what;
	} cases[] = {
		{ MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS, 0, 0, "no flag" },
		{ MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS, MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE, 0,
		  "scatter to CQE disabled" },
		{ MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS, MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, 0,
		  "scatter to CQE allowed" },
		{ MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
		  MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE | MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, EINVAL,
		  "scatter to CQE disabled and allowed" },
		{ MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS, 1u << 31, EINVAL, "an unknown creation flag" },
		{ 1ull << 62, 0, EINVAL, "an unknown comp_mask bit" },
		{ MLX5DV_QP_INIT_ATTR_MASK_DC, 0, EINVAL, "DC attributes" },
	};
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		int err = dv_create(&q, types[t], NULL);

		if (err)
			fail_msg("type %d without mlx5 attributes: %s", types[t], strerror(err));
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
			struct mlx5dv_qp_init_attr dv = { .comp_mask = cases[c].comp_mask,
							  .create_flags = cases[c].create_flags };

			err = dv_create(&q, types[t], &dv);
			if (err != cases[c].want)
				fail_msg("type %d, %s: %s, not %s", types[t], cases[c].what, strerror(err),
					 strerror(cases[c].want));
			if (err)
				RC_ASSERT_ERRNO("mlx5dv_create_qp", err, cases[c].want);
		}
	}
	fx_qp_release(&q);
}

/* mlx5dv_create_qp and mlx5dv_init_obj on a device that is not mlx5:
 * EOPNOTSUPP, mlx5_get_dv_ops giving no ops; mlx5dv_init_obj naming no
 * object it knows: EINVAL, whatever the device (get_context_from_obj). */
void mlx5dv_create_qp__not_mlx5(void **state)
{
	struct ibv_qp_init_attr_ex attr;
	struct mlx5dv_obj obj;
	struct mlx5dv_pd dv_pd;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_NOT_MLX5, IBV_QPT_RC);
	attr = (struct ibv_qp_init_attr_ex){ .qp_type = IBV_QPT_RC, .send_cq = q.cq, .recv_cq = q.cq,
					     .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = q.pd,
					     .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						      .max_send_sge = 1, .max_recv_sge = 1 } };
	RC_ASSERT_FAILS_NULL("mlx5dv_create_qp", mlx5dv_create_qp(q.ctx, &attr, NULL), EOPNOTSUPP);
	obj = (struct mlx5dv_obj){ .pd = { .in = q.pd, .out = &dv_pd } };
	RC_ASSERT_ERRNO("mlx5dv_init_obj", mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD), EOPNOTSUPP);
	RC_ASSERT_ERRNO("mlx5dv_init_obj", mlx5dv_init_obj(&obj, 0), EINVAL);
	fx_qp_release(&q);
}

/* One DC WQE: control, the full address vector naming the DCT (its
 * number, MLX5_EXTENDED_UD_AV, the key, the GRH to the port's GID 0),
 * then for RDMA the remote address, then one 8-byte data segment
 * (buf[local]): two blocks. Rung for. */
static void dc_ring(struct dc *d, uint8_t opcode, uint64_t key, int remote, int local)
{
	struct mlx5_wqe_ctrl_seg *ctrl = raw_wqe(&d->r);
	struct mlx5_wqe_datagram_seg *dg = (struct mlx5_wqe_datagram_seg *)(ctrl + 1);
	char *next = (char *)(dg + 1);
	unsigned ds = 1 + 3 + 1;

	memset(dg, 0, sizeof *dg);
	dg->av.key.dc_key = htobe64(key);
	dg->av.dqp_dct = htobe32(d->dct->qp_num | MLX5_EXTENDED_UD_AV);
	dg->av.grh_gid_fl = htobe32(1u << 30);
	dg->av.hop_limit = 64;
	memcpy(dg->av.rgid, d->gid.raw, sizeof dg->av.rgid);
	if (opcode != MLX5_OPCODE_SEND) {
		struct mlx5_wqe_raddr_seg *ra = (struct mlx5_wqe_raddr_seg *)next;

		ra->raddr = htobe64((uintptr_t)&d->r.buf[remote]);
		ra->rkey = htobe32(d->r.mr->rkey);
		next += sizeof *ra;
		ds++;
	}
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)next, 8, d->r.mr->lkey,
			    (uintptr_t)&d->r.buf[local]);
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)d->r.sq_pi, opcode, 0, d->dci->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, (uint8_t)ds, 0, 0);
	d->r.sq_pi++; /* the first block; raw_ring counts the second */
	raw_ring(&d->r, ctrl);
}

/* A DCI reaches a DCT through its WQEs alone: an RDMA WRITE and an RDMA
 * READ on the DCT's PD, a SEND into its SRQ (the responder's CQE names the
 * DCT and the DCI), each completed with the requester's CQE; a WQE that
 * names another access key is never answered: its retries run out and
 * its CQE is an error with the transport retry syndrome. */
void mlx5dv_init_obj__dc_raw_wqes(void **state)
{
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct mlx5dv_obj obj;
	struct mlx5_cqe64 *cqe;
	struct dc d;
	bool sent = false, received = false;

	dc_open(&d);
	d.dct = dc_create(&d, MLX5DV_DCTYPE_DCT, d.srq);
	d.dci = dc_create(&d, MLX5DV_DCTYPE_DCI, NULL);
	if (!d.dct || !d.dci)
		fail_msg("mlx5dv_create_qp(DCT, DCI): %s", strerror(errno));
	obj = (struct mlx5dv_obj){ .qp = { .in = d.dci, .out = &d.r.qp } };
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
	assert_int_equal(d.r.qp.sq.stride, 64);
	dct_to_rtr(&d);
	dci_to_rts(&d, 1, 0);

	d.r.buf[0] = 0x1111222233334444ull;
	dc_ring(&d, MLX5_OPCODE_RDMA_WRITE, DC_KEY, 8, 0);
	raw_req(&d.r, MLX5_OPCODE_RDMA_WRITE, 0);
	assert_true(d.r.buf[8] == 0x1111222233334444ull);
	d.r.buf[9] = 0x5555666677778888ull;
	dc_ring(&d, MLX5_OPCODE_RDMA_READ, DC_KEY, 9, 10);
	raw_req(&d.r, MLX5_OPCODE_RDMA_READ, 2);
	assert_true(d.r.buf[10] == 0x5555666677778888ull);

	sge = (struct ibv_sge){ .addr = (uintptr_t)&d.r.buf[16], .length = 8, .lkey = d.r.mr->lkey };
	FX_VERBS_OK(ibv_post_srq_recv(d.srq, &rwr, &rbad));
	dc_ring(&d, MLX5_OPCODE_SEND, DC_KEY, 0, 0);
	for (int i = 0; i < 2; i++) {
		cqe = raw_take(&d.r);
		if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ) {
			sent = true;
			assert_int_equal(be16toh(cqe->wqe_counter), 4);
			assert_int_equal(be32toh(cqe->sop_drop_qpn) & 0xffffff, d.dci->qp_num);
		} else {
			received = true;
			assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_RESP_SEND);
			assert_int_equal(be32toh(cqe->byte_cnt), 8);
			assert_int_equal(be32toh(cqe->sop_drop_qpn) & 0xffffff, d.dct->qp_num);
			assert_int_equal(be32toh(cqe->flags_rqpn) & 0xffffff, d.dci->qp_num);
		}
	}
	assert_true(sent && received);
	assert_true(d.r.buf[16] == 0x1111222233334444ull);

	d.r.buf[20] = 7;
	dc_ring(&d, MLX5_OPCODE_RDMA_WRITE, DC_KEY + 1, 21, 20);
	cqe = raw_take(&d.r);
	assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_REQ_ERR);
	assert_int_equal(((struct mlx5_err_cqe *)cqe)->syndrome, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	assert_true(d.r.buf[21] == 0);
	dc_close(&d);
}

/* ---------------------------------------------------------------- mlx5dv_query_port */

/* A port of a device in legacy mode (no switchdev eswitch, not a
 * multi-port one) reports nothing: the kernel writes the whole struct,
 * zero, with no flag. A port the device lacks is EINVAL; a device without
 * mlx5 is EOPNOTSUPP. */
void mlx5dv_query_port__legacy_port(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);
	struct mlx5dv_port info, zero;
	struct ibv_device_attr attr;

	memset(&info, 0xa5, sizeof info);
	memset(&zero, 0, sizeof zero);
	FX_VERBS_OK(mlx5dv_query_port(ctx, 1, &info));
	if (info.flags & (MLX5DV_QUERY_PORT_VPORT | MLX5DV_QUERY_PORT_ESW_OWNER_VHCA_ID))
		RC_SKIP("capability: a legacy-mode port (%s's port 1 is an eswitch representor)",
			ibv_get_device_name(ctx->device));
	assert_int_equal(memcmp(&info, &zero, sizeof info), 0);
	FX_VERBS_OK(ibv_query_device(ctx, &attr));
	RC_ASSERT_ERRNO("_mlx5dv_query_port", mlx5dv_query_port(ctx, attr.phys_port_cnt + 1, &info),
			EINVAL);
	RC_ASSERT_ERRNO("_mlx5dv_query_port", mlx5dv_query_port(ctx, 0, &info), EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void mlx5dv_query_port__not_mlx5(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_NOT_MLX5);
	struct mlx5dv_port info;

	RC_ASSERT_ERRNO("_mlx5dv_query_port", mlx5dv_query_port(ctx, 1, &info), EOPNOTSUPP);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ---------------------------------------------------------------- mlx5dv_qp_ex */

/* A DCI made with send operations posts through ibv_wr_*, each request
 * addressed by mlx5dv_wr_set_dc_addr (an AH, the DCT's number and key):
 * an RDMA WRITE reaches the DCT's PD, a SEND its SRQ, the completions as
 * ibv_poll_cq reads them. ibv_post_send, which cannot say where a DCI's
 * request goes, is refused. */
void mlx5dv_wr_set_dc_addr__dci_posts(void **state)
{
	struct ibv_qp_init_attr_ex attr;
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCI, .dct_access_key = DC_KEY },
	};
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct mlx5dv_qp_ex *dvx;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc[2];
	struct ibv_ah *ah;
	struct dc d;
	int got = 0;

	dc_open(&d);
	attr = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_DRIVER,
		.send_cq = d.r.q.cq,
		.recv_cq = d.r.q.cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = d.r.q.pd,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	d.dct = dc_create(&d, MLX5DV_DCTYPE_DCT, d.srq);
	d.dci = mlx5dv_create_qp(d.r.q.ctx, &attr, &dv);
	if (!d.dct || !d.dci)
		fail_msg("mlx5dv_create_qp(DCT, DCI with send operations): %s", strerror(errno));
	dct_to_rtr(&d);
	dci_to_rts(&d, 14, 7);
	ah_attr.grh.dgid = d.gid;
	ah = ibv_create_ah(d.r.q.pd, &ah_attr);
	if (!ah)
		fail_msg("ibv_create_ah: %s", strerror(errno));
	qpx = ibv_qp_to_qp_ex(d.dci);
	assert_non_null(qpx);
	dvx = mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
	assert_non_null(dvx);

	d.r.buf[0] = 0x0a0b0c0d01020304ull;
	sge = (struct ibv_sge){ .addr = (uintptr_t)&d.r.buf[0], .length = 8, .lkey = d.r.mr->lkey };
	if (rc_backend_is_mock()) /* upstream posts a WQE without an address */
		assert_int_equal(ibv_post_send(d.dci, &wr, &bad), EINVAL);
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, d.r.mr->rkey, (uintptr_t)&d.r.buf[8]);
	mlx5dv_wr_set_dc_addr(dvx, ah, d.dct->qp_num, DC_KEY);
	ibv_wr_set_sge(qpx, d.r.mr->lkey, (uintptr_t)&d.r.buf[0], 8);
	FX_VERBS_OK(ibv_wr_complete(qpx));
	fx_poll_one(d.r.q.cq, &wc[0]);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].wr_id, 1);
	assert_true(d.r.buf[8] == 0x0a0b0c0d01020304ull);

	sge = (struct ibv_sge){ .addr = (uintptr_t)&d.r.buf[16], .length = 8, .lkey = d.r.mr->lkey };
	FX_VERBS_OK(ibv_post_srq_recv(d.srq, &rwr, &rbad));
	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	mlx5dv_wr_set_dc_addr(dvx, ah, d.dct->qp_num, DC_KEY);
	ibv_wr_set_sge(qpx, d.r.mr->lkey, (uintptr_t)&d.r.buf[0], 8);
	FX_VERBS_OK(ibv_wr_complete(qpx));
	for (int i = 0; i < 2; i++) {
		fx_poll_one(d.r.q.cq, &wc[i]);
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		got |= wc[i].opcode == IBV_WC_RECV ? 1 : wc[i].opcode == IBV_WC_SEND ? 2 : 4;
		if (wc[i].opcode == IBV_WC_RECV) {
			assert_int_equal(wc[i].wr_id, 5);
			assert_int_equal(wc[i].qp_num, d.dct->qp_num);
			assert_int_equal(wc[i].src_qp, d.dci->qp_num);
		}
	}
	assert_int_equal(got, 3);
	assert_true(d.r.buf[16] == 0x0a0b0c0d01020304ull);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	dc_close(&d);
}

/* ---------------------------------------------------------------- DEVX */

/* A ConnectX whose firmware has no DEVX (log_max_uctx 0, as the mock's):
 * a DEVX context is refused with EINVAL (mlx5_ib_devx_create), and the
 * DEVX calls on an ordinary context find no DEVX methods in the kernel
 * (EPROTONOSUPPORT): a consumer such as UCX falls back to verbs. Skipped
 * on a device that has DEVX. */
void mlx5dv_open_device__no_devx(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);
	struct mlx5dv_context_attr attr = { .flags = MLX5DV_CONTEXT_FLAGS_DEVX };
	struct ibv_context *devx = mlx5dv_open_device(ctx->device, &attr);
	uint32_t in[4] = { htobe32(0x100u << 16) }, out[4]; /* QUERY_HCA_CAP's opcode */

	if (devx) {
		FX_VERBS_OK(ibv_close_device(devx));
		FX_VERBS_OK(ibv_close_device(ctx));
		RC_SKIP("capability: a device without DEVX (%s has it)", ibv_get_device_name(ctx->device));
	}
	RC_ASSERT_ERRNO("mlx5dv_open_device", errno, EINVAL);
	assert_int_equal(mlx5dv_devx_general_cmd(ctx, in, sizeof in, out, sizeof out), EPROTONOSUPPORT);
	errno = 0;
	assert_null(mlx5dv_devx_obj_create(ctx, in, sizeof in, out, sizeof out));
	assert_int_equal(errno, EPROTONOSUPPORT);
	/* Reserved QPNs are DEVX objects the provider never learns of. */
	assert_int_equal(mlx5dv_reserved_qpn_alloc(ctx, &in[0]), EOPNOTSUPP);
	assert_int_equal(mlx5dv_reserved_qpn_dealloc(ctx, 0x123), EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}
