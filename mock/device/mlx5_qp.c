/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mlx5 work queues as a ConnectX lays them out (mlx5.h says when a QP has
 * them): the send queue in 64-byte WQE basic blocks, a WQE a control
 * segment and the segments its opcode takes; the receive queue in WQEs of
 * data segments; the doorbell record, [MLX5_RCV_DBR] the receive queue's
 * counter and [MLX5_SND_DBR] the send queue's, 16 bits each.
 *
 * ibv_post_send writes its WQE there and the device runs it at once;
 * ibv_post_recv writes its receive WQE and the record. A program writes
 * the same, and rings the doorbell (doorbell.c): the device then takes
 * what the record says is there. Either way the device reads the WQEs
 * back, so a program's WQE and the provider's are one queue. */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "device/mlx5.h"
#include "ibverbs/verbs.h"

#define BB MLX5_SEND_WQE_BB
#define DS 16u          /* the unit of qpn_ds */
#define MAX_WQE_BBS 16u /* ds is 6 bits: 63 units, under 16 blocks */

struct mlx5_qp_ring {
	char *sq;               /* sq_cnt blocks */
	char *rq;               /* rq_cnt WQEs of rq_stride */
	__be32 *dbrec;
	uint32_t sq_cnt, rq_cnt, rq_stride;
	uint32_t sq_pi;         /* blocks ibv_post_send has written */
	uint32_t sq_done;       /* blocks the device has taken */
	uint32_t rq_pi;         /* receive WQEs ibv_post_recv has written */
	uint32_t rq_done;       /* receive WQEs the device has taken */
	uint64_t *rq_wrid;      /* by receive WQE: ibv_post_recv's wr_id */
	uint16_t *sq_first;     /* by the mock's send mark: its WQE's first block */
	struct mock_qp *qp;
	struct mlx5_qp_ring *next; /* this process's QPs with rings (doorbells) */
	void *block;
};

static struct mlx5_qp_ring *rings; /* this process's, under the verbs lock */

static uint32_t pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* The blocks of the largest WQE the QP may post (the provider's sizing,
 * mlx5_calc_send_wqe: its transport's segments, then data segments or
 * inline data, whichever is longer). */
static uint32_t wqe_bbs(const struct mock_qp *qp)
{
	uint32_t over = qp->qp.qp_type == IBV_QPT_UD ? DS + sizeof(struct mlx5_wqe_datagram_seg)
		      : qp->qp.qp_type == IBV_QPT_UC ? DS + sizeof(struct mlx5_wqe_raddr_seg)
		      : DS + sizeof(struct mlx5_wqe_raddr_seg) + sizeof(struct mlx5_wqe_atomic_seg);
	uint32_t data = qp->cap.max_send_sge * DS;
	uint32_t inl = qp->cap.max_inline_data ? (qp->cap.max_inline_data + 4 + DS - 1) / DS * DS : 0;

	return (over + (data > inl ? data : inl) + BB - 1) / BB;
}

int mlx5_qp_make_ring(struct mock_qp *qp)
{
	uint32_t sq_cnt = pow2(qp->cap.max_send_wr * wqe_bbs(qp));
	uint32_t rq_cnt = qp->srq ? 0 : pow2(qp->cap.max_recv_wr);
	uint32_t rq_stride = pow2((qp->cap.max_recv_sge ? qp->cap.max_recv_sge : 1) * DS);
	size_t sq_size = (size_t)sq_cnt * BB, rq_size = (size_t)rq_cnt * rq_stride;
	size_t size = sizeof(struct mlx5_qp_ring) + BB + rq_size + sq_size + BB +
		      (size_t)rq_cnt * sizeof(uint64_t) + (size_t)sq_cnt * sizeof(uint16_t);
	char *block, *p;
	struct mlx5_qp_ring *r;

	if (!sq_cnt || !(block = fab_alloc_owned(fab_owner_of(qp), size)))
		return ENOMEM;
	r = (struct mlx5_qp_ring *)block;
	/* As the provider lays a QP's buffer out: the receive queue, then
	 * the send queue, block aligned; then the doorbell record. */
	p = (char *)(((uintptr_t)(r + 1) + BB - 1) & ~(uintptr_t)(BB - 1));
	r->rq = p;
	r->sq = p + rq_size;
	r->dbrec = (__be32 *)(r->sq + sq_size);
	r->rq_wrid = (uint64_t *)(r->sq + sq_size + BB);
	r->sq_first = (uint16_t *)(r->rq_wrid + rq_cnt);
	r->sq_cnt = sq_cnt;
	r->rq_cnt = rq_cnt;
	r->rq_stride = rq_stride;
	r->qp = qp;
	r->block = block;
	r->next = rings;
	rings = r;
	__atomic_store_n(&qp->ring, r, __ATOMIC_RELEASE);
	return 0;
}

void mlx5_qp_free(struct mock_qp *qp)
{
	struct mlx5_qp_ring **pos, *r = qp->ring;

	if (!r)
		return;
	for (pos = &rings; *pos; pos = &(*pos)->next)
		if (*pos == r) {
			*pos = r->next;
			break;
		}
	qp->ring = NULL;
	fab_free(r->block);
}

/* libmlx5's get_shut_up_bf: set, and not "0". */
static bool shut_up_bf(void)
{
	const char *env = getenv("MLX5_SHUT_UP_BF");

	return env && strcmp(env, "0");
}

void mlx5_qp_describe(const struct mock_qp *qp, struct mlx5dv_qp *out, void *uar)
{
	const struct mlx5_qp_ring *r = qp->ring;

	memset(out, 0, offsetof(struct mlx5dv_qp, comp_mask));
	out->dbrec = r->dbrec;
	out->sq.buf = r->sq;
	out->sq.wqe_cnt = r->sq_cnt;
	out->sq.stride = BB;
	out->rq.buf = r->rq;
	out->rq.wqe_cnt = r->rq_cnt;
	out->rq.stride = r->rq_stride;
	/* The BlueFlame register, where libmlx5 puts a QP's; a program
	 * writes its two buffers in turn (reg, then reg ^ size). It writes there a
	 * copy of the WQE it has put in the SQ (BlueFlame) or the control
	 * segment's first 8 bytes (a doorbell); the device reads the SQ
	 * either way, as the copy must be the same. With MLX5_SHUT_UP_BF set,
	 * as libmlx5 then gives a QP a non-cached UAR: size 0, doorbells
	 * only. */
	out->bf.reg = (char *)uar + MLX5_BF_OFFSET;
	out->bf.size = shut_up_bf() ? 0 : MLX5_BF_BUF_SIZE;
	/* No mmap offset, TIR or TIS to give: no output bit. */
	out->comp_mask = 0;
}

uint16_t mlx5_qp_wqe_index(const struct mock_qp *qp, uint64_t mark)
{
	const struct mlx5_qp_ring *r = qp->ring;

	return r->sq_first[mark & (r->sq_cnt - 1)];
}

/* ---------------------------------------------------------------- receives */

int mlx5_rq_post(struct mock_qp *qp, const struct ibv_recv_wr *wr)
{
	struct mlx5_qp_ring *r = qp->ring;
	uint32_t max = r->rq_stride / DS;
	struct mlx5_wqe_data_seg *seg;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max)
		return EINVAL;
	if (r->rq_pi - r->rq_done >= r->rq_cnt)
		return ENOMEM;
	seg = (struct mlx5_wqe_data_seg *)(r->rq + (size_t)(r->rq_pi & (r->rq_cnt - 1)) * r->rq_stride);
	for (i = 0; i < wr->num_sge; i++)
		mlx5dv_set_data_seg(&seg[i], wr->sg_list[i].length, wr->sg_list[i].lkey,
				    wr->sg_list[i].addr);
	/* Fewer than the stride holds: the list ends at the invalid key. */
	if ((uint32_t)i < max)
		mlx5dv_set_data_seg(&seg[i], 0, MLX5_INVALID_LKEY, 0);
	r->rq_wrid[r->rq_pi & (r->rq_cnt - 1)] = wr->wr_id;
	r->rq_pi++;
	__atomic_store_n(&r->dbrec[MLX5_RCV_DBR], htobe32(r->rq_pi & 0xffff), __ATOMIC_RELEASE);
	return 0;
}

int mlx5_rq_take(struct mock_qp *qp, struct ibv_recv_wr *wr, struct ibv_sge *sge, uint16_t *index)
{
	struct mlx5_qp_ring *r = qp->ring;
	uint32_t max = r->rq_stride / DS, n = 0;
	const struct mlx5_wqe_data_seg *seg;
	uint16_t posted;

	if (!r || !r->rq_cnt)
		return ENOENT;
	posted = (uint16_t)be32toh(__atomic_load_n(&r->dbrec[MLX5_RCV_DBR], __ATOMIC_ACQUIRE));
	if ((uint16_t)r->rq_done == posted)
		return ENOENT;
	seg = (const struct mlx5_wqe_data_seg *)(r->rq +
						 (size_t)(r->rq_done & (r->rq_cnt - 1)) * r->rq_stride);
	for (; n < max && be32toh(seg[n].lkey) != MLX5_INVALID_LKEY; n++) {
		sge[n].addr = be64toh(seg[n].addr);
		sge[n].length = be32toh(seg[n].byte_count);
		sge[n].lkey = be32toh(seg[n].lkey);
	}
	*wr = (struct ibv_recv_wr){ .wr_id = r->rq_wrid[r->rq_done & (r->rq_cnt - 1)],
				    .sg_list = sge, .num_sge = (int)n };
	/* A program's own receive has no wr_id of the provider's: its WQE's
	 * index in the CQE is what it goes by. */
	r->rq_wrid[r->rq_done & (r->rq_cnt - 1)] = 0;
	*index = (uint16_t)r->rq_done;
	r->rq_done++;
	return 0;
}

uint32_t mlx5_rq_max_sge(const struct mock_qp *qp)
{
	return qp->ring->rq_stride / DS;
}

/* ---------------------------------------------------------------- sends */

/* Copy len bytes into the send queue at *at (bytes from its start),
 * wrapping at its end as the device reads it. */
static void sq_put(struct mlx5_qp_ring *r, size_t *at, const void *src, size_t len)
{
	size_t size = (size_t)r->sq_cnt * BB;

	while (len) {
		size_t off = *at % size, n = size - off < len ? size - off : len;

		memcpy(r->sq + off, src, n);
		src = (const char *)src + n;
		*at += n;
		len -= n;
	}
}

static uint8_t wqe_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		return MLX5_OPCODE_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return MLX5_OPCODE_RDMA_WRITE_IMM;
	case IBV_WR_SEND_WITH_IMM:
		return MLX5_OPCODE_SEND_IMM;
	case IBV_WR_SEND_WITH_INV:
		return MLX5_OPCODE_SEND_INVAL;
	case IBV_WR_RDMA_READ:
		return MLX5_OPCODE_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return MLX5_OPCODE_ATOMIC_CS;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return MLX5_OPCODE_ATOMIC_FA;
	case IBV_WR_LOCAL_INV: /* the provider's UMR, as a bind is */
	case IBV_WR_BIND_MW:
		return MLX5_OPCODE_UMR;
	default:
		return MLX5_OPCODE_SEND;
	}
}

static bool has_raddr(uint8_t opcode)
{
	return opcode == MLX5_OPCODE_RDMA_WRITE || opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	       opcode == MLX5_OPCODE_RDMA_READ || opcode == MLX5_OPCODE_ATOMIC_CS ||
	       opcode == MLX5_OPCODE_ATOMIC_FA;
}

static bool is_atomic_op(uint8_t opcode)
{
	return opcode == MLX5_OPCODE_ATOMIC_CS || opcode == MLX5_OPCODE_ATOMIC_FA;
}

uint16_t mlx5_sq_write(struct mock_qp *qp, const struct ibv_send_wr *wr, uint64_t mark)
{
	struct mlx5_qp_ring *r = qp->ring;
	uint8_t opcode = wqe_opcode(wr->opcode);
	size_t start = (size_t)(r->sq_pi & (r->sq_cnt - 1)) * BB, at = start + DS;
	struct mlx5_wqe_ctrl_seg ctrl;
	uint32_t ds, nbb;
	uint16_t index = (uint16_t)r->sq_pi;
	/* The control segment's immediate: the data's, or the key a bind or
	 * an invalidation names, as the provider writes them. */
	__be32 imm = wr->opcode == IBV_WR_BIND_MW ? htobe32(wr->bind_mw.mw->rkey)
		     : wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_SEND_WITH_INV
			     ? htobe32(wr->invalidate_rkey)
			     : wr->imm_data;

	if (qp->qp.qp_type == IBV_QPT_UD) {
		/* The address handle's vector, then the remote QP and Q_Key. */
		struct mlx5_wqe_datagram_seg dg;

		dg.av = verbs_ah_of(wr->wr.ud.ah, "ibv_post_send")->av;
		dg.av.key.qkey.qkey = htobe32(wr->wr.ud.remote_qkey);
		dg.av.key.qkey.reserved = 0;
		dg.av.dqp_dct = htobe32(wr->wr.ud.remote_qpn | MLX5_EXTENDED_UD_AV);
		sq_put(r, &at, &dg, sizeof dg);
	} else if (qp->dc_type == MLX5DV_DCTYPE_DCI) {
		/* mlx5dv_wr_set_dc_addr's: the AH's vector, the DCT and key. */
		struct mlx5_wqe_datagram_seg dg = { .av = qp->raw_ah->av };

		dg.av.key.dc_key = htobe64(qp->raw_ah->dc_key);
		dg.av.dqp_dct = htobe32(qp->raw_ah->dc_dctn | MLX5_EXTENDED_UD_AV);
		sq_put(r, &at, &dg, sizeof dg);
	}
	if (qp->qp.qp_type != IBV_QPT_UD && has_raddr(opcode)) {
		struct mlx5_wqe_raddr_seg ra;
		uint64_t raddr = is_atomic_op(opcode) ? wr->wr.atomic.remote_addr : wr->wr.rdma.remote_addr;
		uint32_t rkey = is_atomic_op(opcode) ? wr->wr.atomic.rkey : wr->wr.rdma.rkey;

		ra = (struct mlx5_wqe_raddr_seg){ .raddr = htobe64(raddr), .rkey = htobe32(rkey) };
		sq_put(r, &at, &ra, sizeof ra);
		if (is_atomic_op(opcode)) {
			struct mlx5_wqe_atomic_seg as = {
				.swap_add = htobe64(opcode == MLX5_OPCODE_ATOMIC_CS ? wr->wr.atomic.swap
										 : wr->wr.atomic.compare_add),
				.compare = htobe64(opcode == MLX5_OPCODE_ATOMIC_CS ? wr->wr.atomic.compare_add : 0),
			};

			sq_put(r, &at, &as, sizeof as);
		}
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint32_t len = 0, hdr;

		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		hdr = htobe32(len | MLX5_INLINE_SEG);
		sq_put(r, &at, &hdr, sizeof hdr);
		for (int i = 0; i < wr->num_sge; i++)
			sq_put(r, &at, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
		at = (at + DS - 1) / DS * DS;
	} else {
		for (int i = 0; i < wr->num_sge; i++) {
			struct mlx5_wqe_data_seg seg;

			mlx5dv_set_data_seg(&seg, wr->sg_list[i].length, wr->sg_list[i].lkey,
					    wr->sg_list[i].addr);
			sq_put(r, &at, &seg, sizeof seg);
		}
	}
	ds = (uint32_t)((at - start) / DS);
	nbb = (ds * DS + BB - 1) / BB;
	mlx5dv_set_ctrl_seg(&ctrl, index, opcode, 0, qp->qp.qp_num,
			    (wr->send_flags & IBV_SEND_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
			    (wr->send_flags & IBV_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0),
			    (uint8_t)ds, 0, imm);
	at = start;
	sq_put(r, &at, &ctrl, sizeof ctrl);
	r->sq_first[mark & (r->sq_cnt - 1)] = index;
	r->sq_pi += nbb;
	/* The device takes it at once: it is not the program's to ring. */
	r->sq_done = r->sq_pi;
	__atomic_store_n(&r->dbrec[MLX5_SND_DBR], htobe32(r->sq_pi & 0xffff), __ATOMIC_RELEASE);
	return index;
}

/* Copy the WQE at block index out of the queue (it may wrap). */
static void sq_get(const struct mlx5_qp_ring *r, uint32_t index, void *out, uint32_t nbb)
{
	for (uint32_t i = 0; i < nbb; i++)
		memcpy((char *)out + (size_t)i * BB, r->sq + (size_t)((index + i) & (r->sq_cnt - 1)) * BB,
		       BB);
}

static enum ibv_wr_opcode wr_opcode(uint8_t opcode, bool *known)
{
	*known = true;
	switch (opcode) {
	case MLX5_OPCODE_SEND:
		return IBV_WR_SEND;
	case MLX5_OPCODE_SEND_IMM:
		return IBV_WR_SEND_WITH_IMM;
	case MLX5_OPCODE_RDMA_WRITE:
		return IBV_WR_RDMA_WRITE;
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		return IBV_WR_RDMA_WRITE_WITH_IMM;
	case MLX5_OPCODE_RDMA_READ:
		return IBV_WR_RDMA_READ;
	case MLX5_OPCODE_ATOMIC_CS:
		return IBV_WR_ATOMIC_CMP_AND_SWP;
	case MLX5_OPCODE_ATOMIC_FA:
		return IBV_WR_ATOMIC_FETCH_AND_ADD;
	case MLX5_OPCODE_NOP:
		return MLX5_WR_NOP;
	default:
		*known = false;
		return IBV_WR_SEND;
	}
}

int mlx5_sq_doorbell(struct mock_qp *qp, mlx5_run_wqe run)
{
	struct mlx5_qp_ring *r = qp->ring;
	int ran = 0;

	for (;;) {
		uint16_t posted = (uint16_t)be32toh(__atomic_load_n(&r->dbrec[MLX5_SND_DBR],
								    __ATOMIC_ACQUIRE));
		char wqe[MAX_WQE_BBS * BB];
		const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)wqe;
		struct ibv_sge sge[MAX_WQE_BBS * BB / DS];
		struct ibv_send_wr wr = { .sg_list = sge };
		const struct mlx5_wqe_av *av = NULL;
		struct mlx5_wqe_av dc_av;
		uint32_t ds, nbb, at = DS;
		uint8_t opcode;
		bool known;

		if ((uint16_t)r->sq_done == posted)
			return ran;
		sq_get(r, r->sq_done, wqe, 1);
		opcode = (uint8_t)(be32toh(ctrl->opmod_idx_opcode) & 0xff);
		ds = be32toh(ctrl->qpn_ds) & 0x3f;
		nbb = ds ? (ds * DS + BB - 1) / BB : 1;
		if (nbb > 1)
			sq_get(r, r->sq_done, wqe, nbb);
		wr.opcode = wr_opcode(opcode, &known);
		wr.imm_data = ctrl->imm;
		if (ctrl->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE)
			wr.send_flags |= IBV_SEND_SIGNALED;
		if (ctrl->fm_ce_se & MLX5_WQE_CTRL_SOLICITED)
			wr.send_flags |= IBV_SEND_SOLICITED;
		if (qp->qp.qp_type == IBV_QPT_UD) {
			const struct mlx5_wqe_datagram_seg *dg = (const void *)(wqe + at);

			av = &dg->av;
			wr.wr.ud.remote_qpn = be32toh(dg->av.dqp_dct) & 0xffffff;
			wr.wr.ud.remote_qkey = be32toh(dg->av.key.qkey.qkey);
			at += sizeof *dg;
		} else if (qp->qp.qp_type == IBV_QPT_DRIVER) {
			/* A DCI's vector: the base 16 bytes (key, DCT number,
			 * LID), then the GRH's 32 when MLX5_EXTENDED_UD_AV
			 * says the vector is the full one. */
			memset(&dc_av, 0, sizeof dc_av);
			memcpy(&dc_av, wqe + at, 16);
			if (be32toh(dc_av.dqp_dct) & MLX5_EXTENDED_UD_AV) {
				memcpy(&dc_av, wqe + at, sizeof dc_av);
				at += sizeof dc_av;
			} else {
				at += 16;
			}
			av = &dc_av;
		}
		if (qp->qp.qp_type != IBV_QPT_UD && known && has_raddr(opcode)) {
			const struct mlx5_wqe_raddr_seg *ra = (const void *)(wqe + at);

			wr.wr.rdma.remote_addr = be64toh(ra->raddr);
			wr.wr.rdma.rkey = be32toh(ra->rkey);
			at += sizeof *ra;
			if (is_atomic_op(opcode)) {
				const struct mlx5_wqe_atomic_seg *as = (const void *)(wqe + at);

				wr.wr.atomic.remote_addr = be64toh(ra->raddr);
				wr.wr.atomic.rkey = be32toh(ra->rkey);
				wr.wr.atomic.compare_add = be64toh(opcode == MLX5_OPCODE_ATOMIC_CS ? as->compare
												: as->swap_add);
				wr.wr.atomic.swap = be64toh(as->swap_add);
				at += sizeof *as;
			}
		}
		while (at < ds * DS) {
			const struct mlx5_wqe_data_seg *seg = (const void *)(wqe + at);
			uint32_t bc = be32toh(seg->byte_count);

			if (bc & MLX5_INLINE_SEG) {
				/* Inline data: one segment, read where it lies in
				 * the copy (the arena's, the same in every process). */
				sge[wr.num_sge++] = (struct ibv_sge){
					.addr = (uintptr_t)(wqe + at + 4), .length = bc & ~MLX5_INLINE_SEG };
				wr.send_flags |= IBV_SEND_INLINE;
				break;
			}
			sge[wr.num_sge++] = (struct ibv_sge){ .addr = be64toh(seg->addr), .length = bc,
							      .lkey = be32toh(seg->lkey) };
			at += sizeof *seg;
		}
		run(qp, &wr, av, (uint16_t)r->sq_done,
		    !known || (qp->qp.qp_type == IBV_QPT_UD && opcode != MLX5_OPCODE_SEND &&
			       opcode != MLX5_OPCODE_SEND_IMM)
			    ? IBV_WC_LOC_QP_OP_ERR
			    : IBV_WC_SUCCESS);
		r->sq_done += nbb;
		r->sq_pi = r->sq_done;
		ran++;
	}
}

struct mock_qp *mlx5_qp_next_rung(struct mock_qp *after)
{
	struct mlx5_qp_ring *r = after ? ((struct mlx5_qp_ring *)after->ring)->next : rings;

	for (; r; r = r->next) {
		uint16_t posted = (uint16_t)be32toh(__atomic_load_n(&r->dbrec[MLX5_SND_DBR],
								    __ATOMIC_ACQUIRE));

		if ((uint16_t)r->sq_done != posted)
			return r->qp;
	}
	return NULL;
}

void mlx5_sq_index(struct mock_qp *qp, uint64_t mark, uint16_t index)
{
	struct mlx5_qp_ring *r = qp->ring;

	r->sq_first[mark & (r->sq_cnt - 1)] = index;
}

/* ---------------------------------------------------------------- address vectors */

/* As the provider's mlx5_create_ah writes one: the static rate and the
 * SL (on RoCE three bits, one up; on InfiniBand four), the GRH's flow
 * label and SGID index, hop limit, traffic class and destination GID; on
 * InfiniBand also the destination LID, the source path bits and the GRH
 * flag (reserved on RoCE, whose packets always carry a GRH: not set). The
 * MAC and the RoCE v2 source port are the mock's fabric's business: left
 * zero. */
void mlx5_av_encode(const struct ibv_ah_attr *attr, bool ib, struct mlx5_wqe_av *av)
{
	memset(av, 0, sizeof *av);
	if (ib) {
		av->stat_rate_sl = (uint8_t)(attr->static_rate << 4 | (attr->sl & 0xf));
		av->fl_mlid = attr->src_path_bits & 0x7f;
		av->rlid = htobe16(attr->dlid);
	} else {
		av->stat_rate_sl = (uint8_t)(attr->static_rate << 4 | (attr->sl & 7) << 1);
	}
	if (!attr->is_global)
		return;
	av->grh_gid_fl = htobe32((attr->grh.flow_label & 0xfffff) | (uint32_t)ib << 30 |
				 (uint32_t)attr->grh.sgid_index << 20);
	av->hop_limit = attr->grh.hop_limit;
	av->tclass = attr->grh.traffic_class;
	memcpy(av->rgid, attr->grh.dgid.raw, sizeof av->rgid);
}

void mlx5_av_decode(const struct mlx5_wqe_av *av, bool ib, struct ibv_ah_attr *attr)
{
	uint32_t fl = be32toh(av->grh_gid_fl);

	memset(attr, 0, sizeof *attr);
	attr->static_rate = av->stat_rate_sl >> 4;
	attr->sl = ib ? av->stat_rate_sl & 0xf : (av->stat_rate_sl >> 1) & 7;
	attr->port_num = 1;
	attr->is_global = !ib || (fl & 1u << 30);
	if (ib) {
		attr->dlid = be16toh(av->rlid);
		attr->src_path_bits = av->fl_mlid & 0x7f;
	}
	attr->grh.flow_label = fl & 0xfffff;
	attr->grh.sgid_index = (uint8_t)(fl >> 20);
	attr->grh.hop_limit = av->hop_limit;
	attr->grh.traffic_class = av->tclass;
	memcpy(attr->grh.dgid.raw, av->rgid, sizeof av->rgid);
}
