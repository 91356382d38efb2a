/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mlx5 shared receive queues as a ConnectX lays them out (mlx5.h says when
 * an SRQ has one): WQEs of a stride, each a next segment (the index of the
 * WQE after it) then data segments; the doorbell record counts the WQEs
 * posted. The device takes them along the list the next segments make,
 * from its own head, as long as it has taken fewer than the record says,
 * and a receive's CQE names the WQE it took. Software keeps the list: the
 * provider's books (head, tail: the WQE a freed one is linked after) are
 * kept here for ibv_post_srq_recv's WQEs; a program that posts its own
 * keeps its own list, as UCX does, and the device only follows it. */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "device/mlx5.h"
#include "ibverbs/verbs.h"

#define DS 16u

struct mlx5_srq_ring {
	char *buf;
	__be32 *dbrec;          /* [0] the WQEs posted, 16 bits */
	uint32_t cnt, stride;   /* cnt WQEs, a power of two */
	uint16_t dev_head;      /* the next WQE the device takes */
	uint16_t dev_taken;     /* how many it has taken */
	uint16_t head, tail;    /* ibv_post_srq_recv's, as the provider's */
	uint16_t posted;        /* ibv_post_srq_recv's counter */
	uint64_t *wrid;
	uint8_t *by_verbs;      /* the WQE is ibv_post_srq_recv's */
	void *block;
};

static uint32_t pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static struct mlx5_wqe_srq_next_seg *next_of(const struct mlx5_srq_ring *r, uint32_t index)
{
	return (struct mlx5_wqe_srq_next_seg *)(r->buf + (size_t)(index & (r->cnt - 1)) * r->stride);
}

int mlx5_srq_make_ring(struct mock_srq *srq)
{
	/* The provider's mlx5_create_srq: max_wr + 1 rounded up to a power
	 * of two, the WQE a next segment and max_sge data segments rounded
	 * up to a power of two, 32 bytes at least. */
	uint32_t cnt = pow2(srq->attr.max_wr + 1);
	uint32_t stride = pow2(DS + (srq->attr.max_sge ? srq->attr.max_sge : 1) * DS) < 32
				 ? 32
				 : pow2(DS + (srq->attr.max_sge ? srq->attr.max_sge : 1) * DS);
	size_t size = sizeof(struct mlx5_srq_ring) + 64 + (size_t)cnt * stride + 64 +
		      (size_t)cnt * (sizeof(uint64_t) + 1);
	char *block, *p;
	struct mlx5_srq_ring *r;

	if (!(block = fab_alloc_owned(fab_owner_of(srq), size)))
		return ENOMEM;
	r = (struct mlx5_srq_ring *)block;
	p = (char *)(((uintptr_t)(r + 1) + 63) & ~(uintptr_t)63);
	r->buf = p;
	r->dbrec = (__be32 *)(p + (size_t)cnt * stride);
	r->wrid = (uint64_t *)(p + (size_t)cnt * stride + 64);
	r->by_verbs = (uint8_t *)(r->wrid + cnt);
	r->cnt = cnt;
	r->stride = stride;
	r->tail = (uint16_t)(cnt - 1);
	r->block = block;
	for (uint32_t i = 0; i < cnt; i++)
		next_of(r, i)->next_wqe_index = htobe16((uint16_t)((i + 1) & (cnt - 1)));
	__atomic_store_n(&srq->ring, r, __ATOMIC_RELEASE);
	return 0;
}

void mlx5_srq_free(struct mock_srq *srq)
{
	if (srq->ring)
		fab_free(srq->ring->block);
	srq->ring = NULL;
}

void mlx5_srq_describe(const struct mock_srq *srq, struct mlx5dv_srq *out)
{
	const struct mlx5_srq_ring *r = srq->ring;
	uint64_t asked = out->comp_mask;

	out->buf = r->buf;
	out->dbrec = r->dbrec;
	out->stride = r->stride;
	out->head = 0;
	out->tail = r->cnt - 1;
	out->comp_mask = 0;
	if (asked & MLX5DV_SRQ_MASK_SRQN) {
		out->srqn = srq->srq_num;
		out->comp_mask |= MLX5DV_SRQ_MASK_SRQN;
	}
}

int mlx5_srq_post(struct mock_srq *srq, const struct ibv_recv_wr *wr)
{
	struct mlx5_srq_ring *r = srq->ring;
	uint32_t max = (r->stride - DS) / DS;
	struct mlx5_wqe_data_seg *seg;
	uint16_t index = r->head;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max)
		return EINVAL;
	/* The provider's "SRQ is full": its head has met its tail. */
	if (r->head == r->tail)
		return ENOMEM;
	seg = (struct mlx5_wqe_data_seg *)(next_of(r, index) + 1);
	for (i = 0; i < wr->num_sge; i++)
		mlx5dv_set_data_seg(&seg[i], wr->sg_list[i].length, wr->sg_list[i].lkey,
				    wr->sg_list[i].addr);
	if ((uint32_t)i < max)
		mlx5dv_set_data_seg(&seg[i], 0, MLX5_INVALID_LKEY, 0);
	r->wrid[index] = wr->wr_id;
	r->by_verbs[index] = 1;
	r->head = be16toh(next_of(r, index)->next_wqe_index);
	r->posted++;
	__atomic_store_n(&r->dbrec[0], htobe32(r->posted), __ATOMIC_RELEASE);
	return 0;
}

int mlx5_srq_take(struct mock_srq *srq, struct ibv_recv_wr *wr, struct ibv_sge *sge, uint16_t *index)
{
	struct mlx5_srq_ring *r = srq->ring;
	uint32_t max = (r->stride - DS) / DS, n = 0;
	const struct mlx5_wqe_data_seg *seg;
	uint16_t posted, at;

	if (!r)
		return ENOENT;
	posted = (uint16_t)be32toh(__atomic_load_n(&r->dbrec[0], __ATOMIC_ACQUIRE));
	if (r->dev_taken == posted)
		return ENOENT;
	at = r->dev_head & (uint16_t)(r->cnt - 1);
	seg = (const struct mlx5_wqe_data_seg *)(next_of(r, at) + 1);
	for (; n < max && be32toh(seg[n].lkey) != MLX5_INVALID_LKEY; n++) {
		sge[n].addr = be64toh(seg[n].addr);
		sge[n].length = be32toh(seg[n].byte_count);
		sge[n].lkey = be32toh(seg[n].lkey);
	}
	*wr = (struct ibv_recv_wr){ .wr_id = r->by_verbs[at] ? r->wrid[at] : 0, .sg_list = sge,
				    .num_sge = (int)n };
	*index = at;
	r->dev_head = be16toh(next_of(r, at)->next_wqe_index);
	r->dev_taken++;
	/* The provider frees its WQE when the completion is polled; the
	 * receive is the device's now, its SGEs copied: it may go back on
	 * the list at once, after the tail. */
	if (r->by_verbs[at]) {
		r->by_verbs[at] = 0;
		next_of(r, r->tail)->next_wqe_index = htobe16(at);
		r->tail = at;
	}
	return 0;
}

uint32_t mlx5_srq_max_sge(const struct mock_srq *srq)
{
	return (srq->ring->stride - DS) / DS;
}

uint32_t mlx5_srq_outstanding(const struct mock_srq *srq)
{
	const struct mlx5_srq_ring *r = srq->ring;
	uint16_t posted = (uint16_t)be32toh(__atomic_load_n(&r->dbrec[0], __ATOMIC_ACQUIRE));

	return (uint16_t)(posted - r->dev_taken);
}
