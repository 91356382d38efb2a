/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the queues mlx5dv_init_obj hands over, driven as a program
 * drives them (UCX's mlx5 transports): WQEs of several segments and of
 * inline data written in the send queue, rung for past the end of the
 * ring; selective signalling and NOPs; error CQEs and flushes; the
 * arming of a CQ through its doorbell. The layouts are mlx5dv.h's (PRM); mlx5-only tests. */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>

#include "raw.h"

#define DS 16 /* the unit of qpn_ds */

/* The WQE of size bytes at wqe, copied into the send queue block by
 * block from the producer index (wrapping at the end of the ring, as the
 * provider continues a WQE at the queue's start), the record moved past
 * it and the doorbell rung; its first index. */
static uint16_t put_wqe(struct raw *r, const void *wqe, size_t size)
{
	uint32_t nbb = (uint32_t)((size + 63) / 64);
	uint16_t index = (uint16_t)r->sq_pi;

	for (uint32_t i = 0; i < nbb; i++) {
		size_t n = size - i * 64 < 64 ? size - i * 64 : 64;
		char *block = (char *)r->qp.sq.buf + (size_t)((r->sq_pi + i) & (r->qp.sq.wqe_cnt - 1)) * 64;

		memcpy(block, (const char *)wqe + i * 64, n);
	}
	r->sq_pi += nbb - 1;
	raw_ring(r, wqe);
	return index;
}

/* A control segment of ds units, at the producer index. */
static void ctrl_at(struct raw *r, struct mlx5_wqe_ctrl_seg *ctrl, uint8_t opcode, uint8_t fm_ce_se,
		    unsigned ds, __be32 imm)
{
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)r->sq_pi, opcode, 0, r->q.qp->qp_num, fm_ce_se, (uint8_t)ds,
			    0, imm);
}

/* A receive WQE of the program's own: n data segments (up to the
 * stride), the list ended by the invalid key when shorter. */
static void put_recv(struct raw *r, const struct ibv_sge *sge, int n)
{
	struct mlx5_wqe_data_seg *seg =
		(struct mlx5_wqe_data_seg *)((char *)r->qp.rq.buf +
					     (size_t)(r->rq_pi & (r->qp.rq.wqe_cnt - 1)) * r->qp.rq.stride);
	int i;

	for (i = 0; i < n; i++)
		mlx5dv_set_data_seg(&seg[i], sge[i].length, sge[i].lkey, sge[i].addr);
	if ((unsigned)i < r->qp.rq.stride / DS)
		mlx5dv_set_data_seg(&seg[i], 0, MLX5_INVALID_LKEY, 0);
	r->rq_pi++;
	__atomic_store_n(&r->qp.dbrec[MLX5_RCV_DBR], htobe32(r->rq_pi & 0xffff), __ATOMIC_RELEASE);
}

/* Of the next two CQEs (a message to the QP itself), the requester's and
 * the responder's, taken. */
static void take_pair(struct raw *r, struct mlx5_cqe64 *req, struct mlx5_cqe64 *resp)
{
	bool got_req = false, got_resp = false;

	for (int i = 0; i < 2; i++) {
		struct mlx5_cqe64 *cqe = raw_take(r);
		uint8_t op = mlx5dv_get_cqe_opcode(cqe);

		if (op == MLX5_CQE_REQ || op == MLX5_CQE_REQ_ERR) {
			*req = *cqe;
			got_req = true;
		} else {
			*resp = *cqe;
			got_resp = true;
		}
	}
	if (!got_req || !got_resp)
		fail_msg("two CQEs of one message: %s", got_req ? "two requester's" : "two responder's");
}

/* ---------------------------------------------------------------- segments */

/* A SEND with immediate gathered from three data segments (8, 16 and 8
 * bytes: ds 4) lands in a receive WQE of two scatter segments (16 and
 * 16): the bytes in order across both; the responder's CQE counts 32 and
 * carries the immediate, the requester's names the WQE. */
void mlx5dv_init_obj__wqe_gather_scatter(void **state)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 3,
				  .max_recv_sge = 2 };
	struct mlx5_cqe64 req, resp;
	struct ibv_sge rsge[2];
	char wqe[64] = { 0 };
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_data_seg *seg = (void *)(ctrl + 1);
	struct raw r;

	raw_open_with(&r, &cap, false);
	assert_true(r.qp.rq.stride >= 32);
	for (int i = 0; i < 4; i++)
		r.buf[i] = 0x0101010101010101ull * (uint64_t)(i + 1);
	rsge[0] = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[16], .length = 16, .lkey = r.mr->lkey };
	rsge[1] = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[24], .length = 16, .lkey = r.mr->lkey };
	put_recv(&r, rsge, 2);
	ctrl_at(&r, ctrl, MLX5_OPCODE_SEND_IMM, MLX5_WQE_CTRL_CQ_UPDATE, 4, htobe32(0x5ca77e2));
	mlx5dv_set_data_seg(&seg[0], 8, r.mr->lkey, (uintptr_t)&r.buf[0]);
	mlx5dv_set_data_seg(&seg[1], 16, r.mr->lkey, (uintptr_t)&r.buf[1]);
	mlx5dv_set_data_seg(&seg[2], 8, r.mr->lkey, (uintptr_t)&r.buf[3]);
	put_wqe(&r, wqe, sizeof wqe);
	take_pair(&r, &req, &resp);
	assert_int_equal(be32toh(req.sop_drop_qpn) >> 24, MLX5_OPCODE_SEND_IMM);
	assert_int_equal(be16toh(req.wqe_counter), 0);
	assert_int_equal(mlx5dv_get_cqe_opcode(&resp), MLX5_CQE_RESP_SEND_IMM);
	assert_int_equal(be32toh(resp.byte_cnt), 32);
	assert_int_equal(be32toh(resp.imm_inval_pkey), 0x5ca77e2);
	assert_int_equal(be32toh(resp.sop_drop_qpn) & 0xffffff, r.q.qp->qp_num);
	assert_memory_equal(&r.buf[16], &r.buf[0], 16);
	assert_memory_equal(&r.buf[24], &r.buf[2], 16);
	raw_close(&r);
}

/* Inline data (MLX5_INLINE_SEG): an RDMA WRITE with immediate of 12
 * inline bytes lands and consumes a receive, which ibv_poll_cq reads as
 * IBV_WC_RECV_RDMA_WITH_IMM (MLX5_CQE_RESP_WR_IMM) with the immediate and
 * length; a SEND of 100 bytes from a buffer no region covers, the WQE two
 * blocks long (ds 8), arrives whole. */
void mlx5dv_init_obj__wqe_inline(void **state)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				  .max_recv_sge = 1, .max_inline_data = 128 };
	char wqe[128] = { 0 }, payload[100];
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_inl_data_seg *inl;
	struct mlx5_wqe_raddr_seg *ra;
	struct mlx5_cqe64 req, resp;
	struct ibv_sge rsge = { .addr = 0, .length = 128, .lkey = 0 };
	struct ibv_wc wc[2];
	struct raw r;

	raw_open_with(&r, &cap, false);
	rsge.addr = (uintptr_t)&r.buf[8];
	rsge.lkey = r.mr->lkey;

	/* RDMA WRITE with immediate: control, remote address, 12 inline
	 * bytes (4 + 12 rounded up to 16: ds 3); its completions through
	 * ibv_poll_cq, which keeps the consumer index from then on. */
	put_recv(&r, &rsge, 1);
	ctrl_at(&r, ctrl, MLX5_OPCODE_RDMA_WRITE_IMM, MLX5_WQE_CTRL_CQ_UPDATE, 3, htobe32(0xabcd));
	ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
	ra->raddr = htobe64((uintptr_t)&r.buf[40]);
	ra->rkey = htobe32(r.mr->rkey);
	inl = (struct mlx5_wqe_inl_data_seg *)(ra + 1);
	inl->byte_count = htobe32(12 | MLX5_INLINE_SEG);
	memcpy(inl + 1, "twelve bytes", 12);
	assert_int_equal(put_wqe(&r, wqe, 48), 0);
	raw_poll_n(r.q.cq, wc, 2);
	r.ci += 2;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].opcode == IBV_WC_RDMA_WRITE) {
			/* handle_good_req: MLX5_OPCODE_RDMA_WRITE_IMM */
			assert_true(wc[i].wc_flags & IBV_WC_WITH_IMM);
			continue;
		}
		assert_int_equal(wc[i].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_true(wc[i].wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(be32toh(wc[i].imm_data), 0xabcd);
		assert_int_equal(wc[i].byte_len, 12);
		assert_int_equal(wc[i].qp_num, r.q.qp->qp_num);
	}
	assert_memory_equal(&r.buf[40], "twelve bytes", 12);

	/* A SEND of 100 inline bytes: ds 8, two blocks. */
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (char)(i * 7 + 1);
	put_recv(&r, &rsge, 1);
	memset(wqe, 0, sizeof wqe);
	ctrl_at(&r, ctrl, MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, 8, 0);
	inl = (struct mlx5_wqe_inl_data_seg *)(ctrl + 1);
	inl->byte_count = htobe32(sizeof payload | MLX5_INLINE_SEG);
	memcpy(inl + 1, payload, sizeof payload);
	assert_int_equal(put_wqe(&r, wqe, sizeof wqe), 1);
	take_pair(&r, &req, &resp);
	assert_int_equal(mlx5dv_get_cqe_opcode(&req), MLX5_CQE_REQ);
	assert_int_equal(be16toh(req.wqe_counter), 1);
	assert_int_equal(mlx5dv_get_cqe_opcode(&resp), MLX5_CQE_RESP_SEND);
	assert_int_equal(be32toh(resp.byte_cnt), sizeof payload);
	assert_memory_equal(&r.buf[8], payload, sizeof payload);
	raw_close(&r);
}

/* ---------------------------------------------------------------- the rings */

/* The send queue and the CQ driven round and round: RDMA WRITEs of one
 * block and of two (60 bytes inline), a two-block one whenever the
 * producer index is at the queue's last block, so that it goes on at the
 * first; each completes with a CQE naming its first block's index, with
 * the owner bit of the CQ's pass, and its data lands. */
void mlx5dv_init_obj__wqe_rings_wrap(void **state)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
				  .max_recv_sge = 1, .max_inline_data = 60 };
	uint32_t straddled = 0, cnt, n;
	struct raw r;

	raw_open_with(&r, &cap, false);
	cnt = r.qp.sq.wqe_cnt;
	n = 3 * cnt > 2 * r.cq.cqe_cnt + 2 ? 3 * cnt : 2 * r.cq.cqe_cnt + 2;
	for (uint32_t i = 0; i < n; i++) {
		char wqe[128] = { 0 };
		struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
		struct mlx5_wqe_raddr_seg *ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
		bool two = (r.sq_pi & (cnt - 1)) == cnt - 1 || i % 2 == 1;
		uint64_t *target = &r.buf[16 + i % 8];
		uint16_t index;
		struct mlx5_cqe64 *cqe;

		r.buf[0] = 0x1000 + (uint64_t)i;
		ra->rkey = htobe32(r.mr->rkey);
		if (two) {
			struct mlx5_wqe_inl_data_seg *inl = (void *)(ra + 1);

			/* ctrl 16, raddr 16, 4 + 60 inline: ds 6, two blocks;
			 * the value in the inline data's last 8 bytes, in the
			 * second block. */
			ctrl_at(&r, ctrl, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE, 6, 0);
			inl->byte_count = htobe32(60 | MLX5_INLINE_SEG);
			memcpy((char *)(inl + 1) + 52, &r.buf[0], 8);
			ra->raddr = htobe64((uintptr_t)target - 52);
			straddled += (r.sq_pi & (cnt - 1)) == cnt - 1;
		} else {
			ctrl_at(&r, ctrl, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE, 3, 0);
			ra->raddr = htobe64((uintptr_t)target);
			mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ra + 1), 8, r.mr->lkey,
					    (uintptr_t)&r.buf[0]);
		}
		index = put_wqe(&r, wqe, two ? 128 : 64);
		cqe = raw_take(&r);
		assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_REQ);
		assert_int_equal(cqe->op_own & MLX5_CQE_OWNER_MASK, !!((r.ci - 1) & r.cq.cqe_cnt));
		assert_int_equal(be16toh(cqe->wqe_counter), index);
		assert_true(*target == 0x1000 + (uint64_t)i);
	}
	assert_true(straddled >= 2);
	assert_true(r.ci > 2 * r.cq.cqe_cnt);
	raw_close(&r);
}

/* Selective signalling, as UCX posts: WQEs without MLX5_WQE_CTRL_CQ_UPDATE
 * write no CQE; a signalled NOP after them (nothing on the wire, ds 1)
 * completes with the NOP's opcode and index, and tells the program the
 * WQEs before it are done: their data has landed. */
void mlx5dv_init_obj__wqe_unsignalled_then_nop(void **state)
{
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_cqe64 *cqe;
	struct raw r;

	raw_open_with(&r, &(struct ibv_qp_cap){ .max_send_wr = 8, .max_recv_wr = 1,
						  .max_send_sge = 1, .max_recv_sge = 1 }, false);
	for (int i = 0; i < 3; i++) {
		struct mlx5_wqe_raddr_seg *ra;

		ctrl = raw_wqe(&r);
		ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
		r.buf[i] = 0x7700 + (uint64_t)i;
		ctrl_at(&r, ctrl, MLX5_OPCODE_RDMA_WRITE, 0, 3, 0);
		ra->raddr = htobe64((uintptr_t)&r.buf[16 + i]);
		ra->rkey = htobe32(r.mr->rkey);
		mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ra + 1), 8, r.mr->lkey,
				    (uintptr_t)&r.buf[i]);
		raw_ring(&r, ctrl);
	}
	ctrl = raw_wqe(&r);
	ctrl_at(&r, ctrl, MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE, 1, 0);
	raw_ring(&r, ctrl);
	cqe = raw_req(&r, MLX5_OPCODE_NOP, 3);
	assert_non_null(cqe);
	for (int i = 0; i < 3; i++)
		assert_true(r.buf[16 + i] == 0x7700 + (uint64_t)i);
	assert_false(raw_cqe_ready(&r.cq, r.ci));
	raw_close(&r);
}

/* ---------------------------------------------------------------- errors */

/* An RDMA WRITE from a key no region has: MLX5_CQE_REQ_ERR with the local
 * protection syndrome, its index, the QP's number and the WQE's opcode
 * (s_wqe_opcode_qpn); the QP is in ERR, so the WQE rung after it and the
 * receive WQE the program posted are flushed: MLX5_CQE_REQ_ERR and
 * MLX5_CQE_RESP_ERR with MLX5_CQE_SYNDROME_WR_FLUSH_ERR, read by
 * ibv_poll_cq as IBV_WC_LOC_PROT_ERR and IBV_WC_WR_FLUSH_ERR. */
void mlx5dv_init_obj__wqe_error_then_flush(void **state)
{
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_raddr_seg *ra;
	struct ibv_sge rsge;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc[3];
	int seen = 0, n = 0, prot_at = -1, flush_at = -1;
	struct raw r;

	raw_open(&r);
	rsge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[8], .length = 8, .lkey = r.mr->lkey };
	put_recv(&r, &rsge, 1);
	ctrl = raw_wqe(&r);
	ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
	ctrl_at(&r, ctrl, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE, 3, 0);
	ra->raddr = htobe64((uintptr_t)&r.buf[16]);
	ra->rkey = htobe32(r.mr->rkey);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ra + 1), 8, r.mr->lkey + 0x100,
			    (uintptr_t)&r.buf[0]);
	raw_ring(&r, ctrl);
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 24, 0, 0);
	/* Three error CQEs, read in place: the receive's flush may come
	 * anywhere, the two WQEs' in their order. */
	for (int i = 0; i < 3; i++) {
		struct mlx5_err_cqe *err = (struct mlx5_err_cqe *)raw_cqe(&r.cq, (uint32_t)i);
		uint8_t op = mlx5dv_get_cqe_opcode((struct mlx5_cqe64 *)err);
		uint32_t s = be32toh(err->s_wqe_opcode_qpn);

		assert_int_equal(s & 0xffffff, r.q.qp->qp_num);
		if (op == MLX5_CQE_RESP_ERR) {
			assert_int_equal(err->syndrome, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
			seen |= 1;
			continue;
		}
		assert_int_equal(op, MLX5_CQE_REQ_ERR);
		assert_int_equal(s >> 24, MLX5_OPCODE_RDMA_WRITE);
		if (be16toh(err->wqe_counter) == 0) {
			assert_int_equal(err->syndrome, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
			prot_at = i;
			seen |= 2;
		} else {
			assert_int_equal(be16toh(err->wqe_counter), 1);
			assert_int_equal(err->syndrome, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
			flush_at = i;
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	assert_true(prot_at < flush_at);
	FX_VERBS_OK(ibv_query_qp(r.q.qp, &attr, IBV_QP_STATE, &init));
	assert_int_equal(attr.qp_state, IBV_QPS_ERR);
	/* The provider's reading of the same CQEs. */
	while (n < 3) {
		int got = ibv_poll_cq(r.q.cq, 3 - n, wc + n);

		assert_true(got > 0);
		n += got;
	}
	r.ci = 3;
	assert_int_equal(wc[prot_at].status, IBV_WC_LOC_PROT_ERR);
	assert_int_equal(wc[flush_at].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[3 - prot_at - flush_at].status, IBV_WC_WR_FLUSH_ERR);
	assert_true(r.buf[24] == 0);
	raw_close(&r);
}

/* An RDMA WRITE to a key the responder does not know: the requester's
 * MLX5_CQE_REQ_ERR with MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, which
 * ibv_poll_cq reads as IBV_WC_REM_ACCESS_ERR; nothing is written. */
void mlx5dv_init_obj__wqe_remote_access_error(void **state)
{
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_raddr_seg *ra;
	struct mlx5_err_cqe *err;
	struct ibv_wc wc;
	struct raw r;

	raw_open(&r);
	r.buf[0] = 99;
	ctrl = raw_wqe(&r);
	ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
	ctrl_at(&r, ctrl, MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE, 3, 0);
	ra->raddr = htobe64((uintptr_t)&r.buf[16]);
	ra->rkey = htobe32(r.mr->rkey + 0x100);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ra + 1), 8, r.mr->lkey, (uintptr_t)&r.buf[0]);
	raw_ring(&r, ctrl);
	err = (struct mlx5_err_cqe *)raw_cqe(&r.cq, 0);
	assert_int_equal(mlx5dv_get_cqe_opcode((struct mlx5_cqe64 *)err), MLX5_CQE_REQ_ERR);
	assert_int_equal(err->syndrome, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	fx_poll_one(r.q.cq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(wc.qp_num, r.q.qp->qp_num);
	assert_true(r.buf[16] == 0);
	raw_close(&r);
}

/* ---------------------------------------------------------------- arming */

/* Arm the CQ as the provider's mlx5_arm_cq does (and UCX after it): the
 * arming record, sequence number, command and consumer index, then the
 * same 8 bytes with the CQ's number stored to the doorbell register. */
static void arm(struct raw *r, uint32_t sn, bool solicited)
{
	uint32_t db[2];
	uint64_t word;

	db[0] = htobe32((sn & 3) << 28 | (solicited ? MLX5_CQ_DB_REQ_NOT_SOL : MLX5_CQ_DB_REQ_NOT) |
			(r->ci & 0xffffff));
	db[1] = htobe32(r->cq.cqn);
	/* [1]: the provider's MLX5_CQ_ARM_DB, the record's arming half. */
	__atomic_store_n(&r->cq.dbrec[1], db[0], __ATOMIC_RELEASE);
	memcpy(&word, db, sizeof word);
	*(volatile uint64_t *)((char *)r->cq.cq_uar + MLX5_CQ_DOORBELL) = word;
}

/* Whether the channel reads the CQ's event within ms; acked. */
static bool cq_event(struct ibv_comp_channel *ch, struct ibv_cq *want, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&pfd, 1, ms) != 1)
		return false;
	FX_OK(ibv_get_cq_event(ch, &cq, &ctx));
	assert_ptr_equal(cq, want);
	ibv_ack_cq_events(cq, 1);
	return true;
}

/* A CQ armed through its doorbell, as the provider's mlx5_arm_cq arms it:
 * the first arming of a new CQ (sequence number 0, consumer index 0, the
 * record all zero) fires at the next CQE; an arming with the next
 * sequence number at an index behind a CQE already written fires at once;
 * a CQ not armed stays quiet. */
void mlx5dv_init_obj__cq_arm_doorbell(void **state)
{
	struct raw r;

	raw_open_with(&r, NULL, true);
	arm(&r, 0, false);
	assert_false(cq_event(r.channel, r.q.cq, 50));
	raw_rdma(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0, 0);
	assert_true(cq_event(r.channel, r.q.cq, 2000));
	/* Not armed again: a completion makes no event. */
	raw_rdma(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0, 1);
	assert_false(cq_event(r.channel, r.q.cq, 50));
	/* A CQE past the index armed at: the event at once. */
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0);
	raw_cqe(&r.cq, r.ci);
	arm(&r, 1, false);
	assert_true(cq_event(r.channel, r.q.cq, 2000));
	raw_req(&r, MLX5_OPCODE_RDMA_WRITE, 2);
	raw_close(&r);
}

/* ---------------------------------------------------------------- one queue for both */

/* n completions through ibv_poll_cq, waited for up to 5 s; the
 * program's consumer index follows. */
static void poll_n(struct raw *r, struct ibv_wc *wc, int n)
{
	raw_poll_n(r->q.cq, wc, n);
	r->ci += (uint32_t)n;
}

/* ibv_post_send and ibv_post_recv write their WQEs in the queues
 * mlx5dv_init_obj gave, as the provider does, and move the records: an
 * RDMA WRITE of two SGEs (control, remote address, two data segments:
 * ds 4), a compare-and-swap (its atomic segment: swap, then compare), an
 * inline SEND (ds 3), a receive of one SGE (the list ended by the invalid
 * key); the program's own WQE then goes at the index the record names
 * and completes there. */
void mlx5dv_init_obj__post_send_wqes(void **state)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 2,
				  .max_recv_sge = 2, .max_inline_data = 32 };
	struct ibv_sge sge[2], rsge;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 4, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_raddr_seg *ra;
	struct mlx5_wqe_data_seg *seg;
	struct mlx5_wqe_atomic_seg *as;
	struct mlx5_wqe_inl_data_seg *inl;
	struct ibv_wc wc[4];
	char text[20] = "twenty bytes inline";
	uint32_t qpn;
	int seen = 0;
	struct raw r;

	raw_open_with(&r, &cap, false);
	qpn = r.q.qp->qp_num;
	r.buf[0] = 0x1111;
	r.buf[1] = 0x2222;
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[0], .length = 8, .lkey = r.mr->lkey };
	sge[1] = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[1], .length = 8, .lkey = r.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 2, .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { .remote_addr = (uintptr_t)&r.buf[16], .rkey = r.mr->rkey } };
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr, &bad));
	ctrl = r.qp.sq.buf;
	assert_int_equal(be32toh(ctrl->opmod_idx_opcode), MLX5_OPCODE_RDMA_WRITE);
	assert_int_equal(be32toh(ctrl->qpn_ds), qpn << 8 | 4);
	assert_true(ctrl->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE);
	ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
	assert_true(be64toh(ra->raddr) == (uintptr_t)&r.buf[16]);
	assert_int_equal(be32toh(ra->rkey), r.mr->rkey);
	seg = (struct mlx5_wqe_data_seg *)(ra + 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(be32toh(seg[i].byte_count), 8);
		assert_int_equal(be32toh(seg[i].lkey), r.mr->lkey);
		assert_true(be64toh(seg[i].addr) == sge[i].addr);
	}
	assert_int_equal(be32toh(r.qp.dbrec[MLX5_SND_DBR]), 1);

	r.buf[32] = 5;
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[40], .length = 8, .lkey = r.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = sge, .num_sge = 1,
				   .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .send_flags = IBV_SEND_SIGNALED,
				   .wr.atomic = { .remote_addr = (uintptr_t)&r.buf[32], .rkey = r.mr->rkey,
						  .compare_add = 5, .swap = 9 } };
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr, &bad));
	ctrl = (struct mlx5_wqe_ctrl_seg *)((char *)r.qp.sq.buf + 64);
	assert_int_equal(be32toh(ctrl->opmod_idx_opcode), 1u << 8 | MLX5_OPCODE_ATOMIC_CS);
	assert_int_equal(be32toh(ctrl->qpn_ds), qpn << 8 | 4);
	as = (struct mlx5_wqe_atomic_seg *)((struct mlx5_wqe_raddr_seg *)(ctrl + 1) + 1);
	assert_true(be64toh(as->swap_add) == 9);
	assert_true(be64toh(as->compare) == 5);
	assert_int_equal(be32toh(r.qp.dbrec[MLX5_SND_DBR]), 2);

	rsge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[48], .length = 32, .lkey = r.mr->lkey };
	FX_VERBS_OK(ibv_post_recv(r.q.qp, &rwr, &rbad));
	seg = r.qp.rq.buf;
	assert_true(be64toh(seg[0].addr) == rsge.addr);
	assert_int_equal(be32toh(seg[0].byte_count), 32);
	assert_int_equal(be32toh(seg[0].lkey), r.mr->lkey);
	if (r.qp.rq.stride >= 32)
		assert_int_equal(be32toh(seg[1].lkey), MLX5_INVALID_LKEY);
	assert_int_equal(be32toh(r.qp.dbrec[MLX5_RCV_DBR]), 1);
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)text, .length = sizeof text };
	wr = (struct ibv_send_wr){ .wr_id = 3, .sg_list = sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr, &bad));
	ctrl = (struct mlx5_wqe_ctrl_seg *)((char *)r.qp.sq.buf + 128);
	assert_int_equal(be32toh(ctrl->opmod_idx_opcode), 2u << 8 | MLX5_OPCODE_SEND);
	assert_int_equal(be32toh(ctrl->qpn_ds), qpn << 8 | 3);
	inl = (struct mlx5_wqe_inl_data_seg *)(ctrl + 1);
	assert_int_equal(be32toh(inl->byte_count), sizeof text | MLX5_INLINE_SEG);
	assert_memory_equal(inl + 1, text, sizeof text);

	poll_n(&r, wc, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		seen |= 1 << (wc[i].wr_id - 1);
		if (wc[i].wr_id == 2) {
			assert_int_equal(wc[i].opcode, IBV_WC_COMP_SWAP);
			assert_int_equal(wc[i].byte_len, 8);
		} else if (wc[i].wr_id == 4) {
			assert_int_equal(wc[i].opcode, IBV_WC_RECV);
			assert_int_equal(wc[i].byte_len, sizeof text);
		}
	}
	assert_int_equal(seen, 0xf);
	assert_true(r.buf[16] == 0x1111 && r.buf[17] == 0x2222);
	assert_true(r.buf[32] == 9);
	assert_true(r.buf[40] == 5 || be64toh(r.buf[40]) == 5);
	assert_memory_equal(&r.buf[48], text, sizeof text);

	r.sq_pi = be32toh(r.qp.dbrec[MLX5_SND_DBR]);
	raw_rdma(&r, MLX5_OPCODE_RDMA_WRITE, 24, 0, 0, 3);
	assert_true(r.buf[24] == 0x1111);
	raw_close(&r);
}

/* The control segment of the WQE at block index: its opcode, index and
 * ds (upstream's mlx5_post_send), and its immediate. */
static struct mlx5_wqe_ctrl_seg *ctrl_of(struct raw *r, uint32_t index, uint8_t opcode, unsigned ds)
{
	struct mlx5_wqe_ctrl_seg *ctrl =
		(void *)((char *)r->qp.sq.buf + (size_t)(index & (r->qp.sq.wqe_cnt - 1)) * 64);

	assert_int_equal(be32toh(ctrl->opmod_idx_opcode), index << 8 | opcode);
	assert_int_equal(be32toh(ctrl->qpn_ds), r->q.qp->qp_num << 8 | ds);
	return ctrl;
}

/* ibv_post_send of the other opcodes, each in the WQE the provider writes
 * and completed as the provider reports it: an RDMA WRITE with immediate
 * (MLX5_OPCODE_RDMA_WRITE_IMM, the immediate in the control segment; the
 * requester's completion IBV_WC_RDMA_WRITE with IBV_WC_WITH_IMM, the
 * responder's IBV_WC_RECV_RDMA_WITH_IMM), a SEND with immediate (SEND_IMM;
 * IBV_WC_SEND with IBV_WC_WITH_IMM), an RDMA READ (RDMA_READ, remote
 * address and data segment; IBV_WC_RDMA_READ of its length) and a
 * fetch-and-add (ATOMIC_FA, the value to add in swap_add; IBV_WC_FETCH_ADD
 * of 8 bytes). */
void mlx5dv_init_obj__post_send_opcodes(void **state)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_sge sge, rsge[2];
	struct ibv_send_wr wr[4], *bad;
	struct ibv_recv_wr rwr[2], *rbad;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_raddr_seg *ra;
	struct ibv_wc wc[6];
	unsigned seen = 0;
	struct raw r;

	raw_open_with(&r, &cap, false);
	for (int i = 0; i < 2; i++) {
		rsge[i] = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[48 + 8 * i], .length = 16,
					    .lkey = r.mr->lkey };
		rwr[i] = (struct ibv_recv_wr){ .wr_id = 10 + (uint64_t)i, .sg_list = &rsge[i],
					       .num_sge = 1, .next = i ? NULL : &rwr[1] };
	}
	FX_VERBS_OK(ibv_post_recv(r.q.qp, rwr, &rbad));
	r.buf[0] = 0xa1;
	r.buf[8] = 0xb2;
	r.buf[32] = 40;
	sge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[0], .length = 8, .lkey = r.mr->lkey };
	wr[0] = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				      .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				      .imm_data = htobe32(0x1111),
				      .wr.rdma = { .remote_addr = (uintptr_t)&r.buf[16], .rkey = r.mr->rkey } };
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr[0], &bad));
	ctrl = ctrl_of(&r, 0, MLX5_OPCODE_RDMA_WRITE_IMM, 3);
	assert_int_equal(be32toh(ctrl->imm), 0x1111);
	ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
	assert_true(be64toh(ra->raddr) == (uintptr_t)&r.buf[16]);

	wr[1] = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				      .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				      .imm_data = htobe32(0x2222) };
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr[1], &bad));
	ctrl = ctrl_of(&r, 1, MLX5_OPCODE_SEND_IMM, 2);
	assert_int_equal(be32toh(ctrl->imm), 0x2222);

	sge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[24], .length = 8, .lkey = r.mr->lkey };
	wr[2] = (struct ibv_send_wr){ .wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				      .send_flags = IBV_SEND_SIGNALED,
				      .wr.rdma = { .remote_addr = (uintptr_t)&r.buf[8], .rkey = r.mr->rkey } };
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr[2], &bad));
	ctrl = ctrl_of(&r, 2, MLX5_OPCODE_RDMA_READ, 3);
	ra = (struct mlx5_wqe_raddr_seg *)(ctrl + 1);
	assert_true(be64toh(ra->raddr) == (uintptr_t)&r.buf[8]);
	assert_int_equal(be32toh(ra->rkey), r.mr->rkey);

	sge = (struct ibv_sge){ .addr = (uintptr_t)&r.buf[40], .length = 8, .lkey = r.mr->lkey };
	wr[3] = (struct ibv_send_wr){ .wr_id = 4, .sg_list = &sge, .num_sge = 1,
				      .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
				      .wr.atomic = { .remote_addr = (uintptr_t)&r.buf[32], .rkey = r.mr->rkey,
						     .compare_add = 2 } };
	FX_VERBS_OK(ibv_post_send(r.q.qp, &wr[3], &bad));
	ctrl = ctrl_of(&r, 3, MLX5_OPCODE_ATOMIC_FA, 4);
	assert_true(be64toh(((struct mlx5_wqe_atomic_seg *)((struct mlx5_wqe_raddr_seg *)(ctrl + 1) + 1))
				    ->swap_add) == 2);
	assert_int_equal(be32toh(r.qp.dbrec[MLX5_SND_DBR]), 4);

	poll_n(&r, wc, 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		seen |= 1u << wc[i].wr_id;
		switch (wc[i].wr_id) {
		case 1:
			assert_int_equal(wc[i].opcode, IBV_WC_RDMA_WRITE);
			assert_true(wc[i].wc_flags & IBV_WC_WITH_IMM);
			break;
		case 2:
			assert_int_equal(wc[i].opcode, IBV_WC_SEND);
			assert_true(wc[i].wc_flags & IBV_WC_WITH_IMM);
			break;
		case 3:
			assert_int_equal(wc[i].opcode, IBV_WC_RDMA_READ);
			assert_int_equal(wc[i].byte_len, 8);
			break;
		case 4:
			assert_int_equal(wc[i].opcode, IBV_WC_FETCH_ADD);
			assert_int_equal(wc[i].byte_len, 8);
			break;
		default: /* the receives, in order: the WRITE's, then the SEND's */
			assert_true(wc[i].wc_flags & IBV_WC_WITH_IMM);
			if (wc[i].wr_id == 10) {
				assert_int_equal(wc[i].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
				assert_int_equal(be32toh(wc[i].imm_data), 0x1111);
			} else {
				assert_int_equal(wc[i].opcode, IBV_WC_RECV);
				assert_int_equal(be32toh(wc[i].imm_data), 0x2222);
				assert_int_equal(wc[i].byte_len, 8);
			}
		}
	}
	assert_int_equal(seen, 0xc1e);
	assert_true(r.buf[16] == 0xa1);
	assert_true(r.buf[48 + 8] == 0xa1);
	assert_true(r.buf[24] == 0xb2);
	assert_true(r.buf[32] == 42);
	assert_true(r.buf[40] == 40 || be64toh(r.buf[40]) == 40);
	raw_close(&r);
}

/* ibv_resize_cq of a CQ whose ring the program has: mlx5dv_init_obj then
 * describes the new ring, with the CQ's one doorbell record; the CQEs not
 * yet consumed follow the index the record names, one on (the slot of the
 * resize CQE), in order, each with the owner bit of its place; the ring
 * goes on from them. */
void mlx5dv_init_obj__cq_resized(void **state)
{
	struct mlx5dv_obj obj;
	__be32 *dbrec;
	struct ibv_wc wc[2];
	struct raw r;

	raw_open(&r);
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0);
	raw_rdma_ring(&r, MLX5_OPCODE_RDMA_WRITE, 17, 0, 0);
	raw_cqe(&r.cq, 1);
	dbrec = r.cq.dbrec;
	FX_VERBS_OK(ibv_resize_cq(r.q.cq, 100));
	obj = (struct mlx5dv_obj){ .cq = { .in = r.q.cq, .out = &r.cq } };
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
	assert_true(r.cq.cqe_cnt >= 101);
	assert_int_equal(r.cq.cqe_cnt, (uint32_t)r.q.cq->cqe + 1);
	assert_ptr_equal(r.cq.dbrec, dbrec);
	/* past the slot of the resize CQE */
	r.ci = (be32toh(r.cq.dbrec[0]) & 0xffffff) + 1;
	for (uint16_t i = 0; i < 2; i++) {
		struct mlx5_cqe64 *cqe = raw_cqe(&r.cq, r.ci + i);

		assert_int_equal(mlx5dv_get_cqe_opcode(cqe), MLX5_CQE_REQ);
		assert_int_equal(be16toh(cqe->wqe_counter), i);
	}
	poll_n(&r, wc, 2);
	assert_int_equal(wc[0].opcode, IBV_WC_RDMA_WRITE);
	assert_int_equal(wc[1].opcode, IBV_WC_RDMA_WRITE);
	raw_rdma(&r, MLX5_OPCODE_RDMA_WRITE, 18, 0, 0, 2);
	raw_close(&r);
}
