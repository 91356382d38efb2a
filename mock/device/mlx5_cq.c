/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mlx5 completion queues as rings of 64-byte CQEs (mlx5.h says when a CQ
 * has one). The layout is mlx5dv.h's; which field carries what, and the
 * syndromes of error CQEs, follow the mlx5 provider's reading of them
 * (providers/mlx5/cq.c: handle_good_req, handle_responder,
 * mlx5_handle_error_cqe) and the kernel's ownership rule: the device
 * writes the entry, then its op_own byte, whose owner bit is the parity
 * of the pass over the ring; software owns an entry whose opcode is not
 * INVALID and whose owner bit matches its own pass. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device/mlx5.h"
#include "ibverbs/verbs.h"

/* What a CQE does not carry, kept by slot as the provider keeps its wrid
 * tables: the WR's id, the QP (the mock's), and the send-queue slots a
 * send completion frees. */
struct mlx5_cq_slot {
	uint64_t wr_id;
	struct mock_qp *qp;
	uint64_t sq_mark;
	bool is_send;
};

struct mlx5_cq_ring {
	char *buf;                  /* cqe_cnt entries of cqe_size, 64-byte aligned */
	uint32_t cqe_size;          /* 64, or 128: the CQE in the entry's last 64 bytes */
	__be32 *dbrec;              /* [0] the consumer's index (24 bits), [1] arming:
				     * the CQ's for its life, as upstream's (a ring
				     * of a resize takes it over) */
	struct mlx5_cq_slot *slots;
	uint32_t cqe_cnt;           /* a power of two */
	uint32_t pi;                /* entries the device has written */
	uint32_t ci;                /* entries ibv_poll_cq has taken */
	uint32_t cqn;
	uint32_t arm_seen;          /* the arming record (dbrec[1]) as last acted on */
	struct mock_cq *cq;
	struct mlx5_cq_ring *next;  /* this process's CQs with rings (their arming) */
	void *block;                /* the allocation all of it but dbrec lives in */
};

#define CQE64 64u
#define DBREC_SIZE 64u /* a cache line of its own */
#define INDEX_MASK 0xffffffu
#define ARM_DB 1 /* the provider's MLX5_CQ_ARM_DB: the arming half of the record */
/* An arming record no program writes (bits 30 and 31 are above the
 * sequence number's two), the one a new ring has seen: the first arming
 * of a CQ, with sequence number 0, MLX5_CQ_DB_REQ_NOT and consumer index
 * 0, is a record of zeros (providers/mlx5/cq.c mlx5_arm_cq), and must
 * count as a change. */
#define ARM_NONE 0xffffffffu

static struct mlx5_cq_ring *cq_rings; /* this process's, under the verbs lock */

static void unlink_ring(struct mlx5_cq_ring *r)
{
	for (struct mlx5_cq_ring **pos = &cq_rings; *pos; pos = &(*pos)->next)
		if (*pos == r) {
			*pos = r->next;
			return;
		}
}

/* The 64-byte CQE of the entry at index: the entry's last 64 bytes. */
static struct mlx5_cqe64 *cqe_at(const struct mlx5_cq_ring *r, uint32_t index)
{
	return (struct mlx5_cqe64 *)(r->buf + (size_t)(index & (r->cqe_cnt - 1)) * r->cqe_size +
				     r->cqe_size - CQE64);
}

/* A ring of cqe_cnt entries; its doorbell record dbrec, or a new one (zero)
 * when NULL. */
static struct mlx5_cq_ring *ring_new(int owner, uint32_t cqe_cnt, uint32_t cqe_size, __be32 *dbrec)
{
	size_t size = sizeof(struct mlx5_cq_ring) + CQE64 + (size_t)cqe_cnt * cqe_size +
		      (size_t)cqe_cnt * sizeof(struct mlx5_cq_slot);
	__be32 *own = dbrec ? NULL : fab_alloc_owned(owner, DBREC_SIZE);
	char *block = dbrec || own ? fab_alloc_owned(owner, size) : NULL, *p;
	struct mlx5_cq_ring *r;

	if (!block) {
		fab_free(own);
		return NULL;
	}
	r = (struct mlx5_cq_ring *)block;
	p = (char *)(((uintptr_t)(r + 1) + CQE64 - 1) & ~(uintptr_t)(CQE64 - 1));
	r->buf = p;
	r->dbrec = dbrec ? dbrec : own;
	r->slots = (struct mlx5_cq_slot *)(p + (size_t)cqe_cnt * cqe_size);
	r->cqe_cnt = cqe_cnt;
	r->cqe_size = cqe_size;
	r->arm_seen = ARM_NONE;
	r->block = block;
	/* The provider's mlx5_alloc_cq_buf: every entry INVALID, owner 0. */
	for (uint32_t i = 0; i < cqe_cnt; i++)
		cqe_at(r, i)->op_own = MLX5_CQE_INVALID << 4;
	return r;
}

static uint8_t owner_of(const struct mlx5_cq_ring *r, uint32_t index)
{
	return !!(index & r->cqe_cnt);
}

/* Software's test of an entry at index. */
static bool cqe_valid(const struct mlx5_cq_ring *r, uint32_t index)
{
	uint8_t op_own = __atomic_load_n(&cqe_at(r, index)->op_own, __ATOMIC_ACQUIRE);

	return (op_own >> 4) != MLX5_CQE_INVALID && (op_own & MLX5_CQE_OWNER_MASK) == owner_of(r, index);
}

/* ---------------------------------------------------------------- the format */

static uint8_t req_opcode(const struct ibv_wc *wc)
{
	bool imm = wc->wc_flags & IBV_WC_WITH_IMM;

	switch (wc->opcode) {
	case IBV_WC_SEND:
		return imm ? MLX5_OPCODE_SEND_IMM : MLX5_OPCODE_SEND;
	case IBV_WC_RDMA_WRITE:
		return imm ? MLX5_OPCODE_RDMA_WRITE_IMM : MLX5_OPCODE_RDMA_WRITE;
	case IBV_WC_RDMA_READ:
		return MLX5_OPCODE_RDMA_READ;
	case IBV_WC_COMP_SWAP:
		return MLX5_OPCODE_ATOMIC_CS;
	case IBV_WC_FETCH_ADD:
		return MLX5_OPCODE_ATOMIC_FA;
	case IBV_WC_LOCAL_INV:
		return MLX5_OPCODE_LOCAL_INVAL;
	case IBV_WC_BIND_MW:
		return MLX5_OPCODE_UMR;
	case IBV_WC_TSO:
		return MLX5_OPCODE_TSO;
	default:
		return MLX5_OPCODE_NOP;
	}
}

/* handle_good_req's reading of a requester's opcode. */
static void req_decode(uint8_t opcode, struct ibv_wc *wc)
{
	switch (opcode) {
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		wc->wc_flags |= IBV_WC_WITH_IMM;
		/* fall through */
	case MLX5_OPCODE_RDMA_WRITE:
		wc->opcode = IBV_WC_RDMA_WRITE;
		break;
	case MLX5_OPCODE_SEND_IMM:
		wc->wc_flags |= IBV_WC_WITH_IMM;
		/* fall through */
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_INVAL:
		wc->opcode = IBV_WC_SEND;
		break;
	case MLX5_OPCODE_RDMA_READ:
		wc->opcode = IBV_WC_RDMA_READ;
		break;
	case MLX5_OPCODE_ATOMIC_CS:
		wc->opcode = IBV_WC_COMP_SWAP;
		break;
	case MLX5_OPCODE_ATOMIC_FA:
		wc->opcode = IBV_WC_FETCH_ADD;
		break;
	case MLX5_OPCODE_LOCAL_INVAL:
		wc->opcode = IBV_WC_LOCAL_INV;
		break;
	case MLX5_OPCODE_UMR:
		wc->opcode = IBV_WC_BIND_MW;
		break;
	case MLX5_OPCODE_TSO:
		wc->opcode = IBV_WC_TSO;
		break;
	}
}

static uint8_t resp_opcode(const struct ibv_wc *wc)
{
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		return MLX5_CQE_RESP_WR_IMM;
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		return MLX5_CQE_RESP_SEND_IMM;
	if (wc->wc_flags & IBV_WC_WITH_INV)
		return MLX5_CQE_RESP_SEND_INV;
	return MLX5_CQE_RESP_SEND;
}

static const struct {
	enum ibv_wc_status status;
	uint8_t syndrome;
} syndromes[] = {
	{ IBV_WC_LOC_LEN_ERR, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR },
	{ IBV_WC_LOC_QP_OP_ERR, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR },
	{ IBV_WC_LOC_PROT_ERR, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR },
	{ IBV_WC_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR },
	{ IBV_WC_MW_BIND_ERR, MLX5_CQE_SYNDROME_MW_BIND_ERR },
	{ IBV_WC_BAD_RESP_ERR, MLX5_CQE_SYNDROME_BAD_RESP_ERR },
	{ IBV_WC_LOC_ACCESS_ERR, MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR },
	{ IBV_WC_REM_INV_REQ_ERR, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR },
	{ IBV_WC_REM_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR },
	{ IBV_WC_REM_OP_ERR, MLX5_CQE_SYNDROME_REMOTE_OP_ERR },
	{ IBV_WC_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR },
	{ IBV_WC_RNR_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR },
	{ IBV_WC_REM_ABORT_ERR, MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR },
};

/* A status with no syndrome of its own reads, as any syndrome the
 * provider does not know, IBV_WC_GENERAL_ERR. */
static uint8_t syndrome_of(enum ibv_wc_status status)
{
	for (size_t i = 0; i < sizeof syndromes / sizeof syndromes[0]; i++)
		if (syndromes[i].status == status)
			return syndromes[i].syndrome;
	return 0xff;
}

static enum ibv_wc_status status_of(uint8_t syndrome)
{
	for (size_t i = 0; i < sizeof syndromes / sizeof syndromes[0]; i++)
		if (syndromes[i].syndrome == syndrome)
			return syndromes[i].status;
	return IBV_WC_GENERAL_ERR;
}

static void encode(struct mlx5_cqe64 *cqe, const struct ibv_wc *wc, bool is_send,
		   uint16_t wqe_counter, uint64_t timestamp, uint8_t *opcode)
{
	uint32_t qpn = wc->qp_num & INDEX_MASK;

	memset(cqe, 0, offsetof(struct mlx5_cqe64, op_own));
	cqe->wqe_counter = htobe16(wqe_counter);
	if (wc->status != IBV_WC_SUCCESS) {
		/* No timestamp: an error CQE's bytes there are the hardware
		 * syndrome and its type, which the mock leaves 0. */
		struct mlx5_err_cqe *err = (struct mlx5_err_cqe *)cqe;

		err->syndrome = syndrome_of(wc->status);
		err->vendor_err_synd = (uint8_t)wc->vendor_err;
		err->s_wqe_opcode_qpn = htobe32((uint32_t)(is_send ? req_opcode(wc) : 0) << 24 | qpn);
		*opcode = is_send ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR;
		return;
	}
	cqe->timestamp = htobe64(timestamp);
	cqe->byte_cnt = htobe32(wc->byte_len);
	if (is_send) {
		cqe->sop_drop_qpn = htobe32((uint32_t)req_opcode(wc) << 24 | qpn);
		*opcode = MLX5_CQE_REQ;
		return;
	}
	cqe->sop_drop_qpn = htobe32(qpn);
	*opcode = resp_opcode(wc);
	if (*opcode == MLX5_CQE_RESP_SEND_INV)
		cqe->imm_inval_pkey = htobe32(wc->invalidated_rkey);
	else if (wc->wc_flags & IBV_WC_WITH_IMM)
		cqe->imm_inval_pkey = wc->imm_data; /* network order in both */
	cqe->flags_rqpn = htobe32((wc->src_qp & INDEX_MASK) | (uint32_t)(wc->sl & 0xf) << 24 |
				  (wc->wc_flags & IBV_WC_GRH ? 1u << 28 : 0));
	cqe->slid = htobe16(wc->slid);
	cqe->ml_path = wc->dlid_path_bits & 0x7f;
}

/* The provider's reading: handle_good_req, handle_responder,
 * mlx5_handle_error_cqe. */
static void decode(const struct mlx5_cqe64 *cqe, uint8_t opcode, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof *wc);
	if (opcode == MLX5_CQE_REQ_ERR || opcode == MLX5_CQE_RESP_ERR) {
		const struct mlx5_err_cqe *err = (const struct mlx5_err_cqe *)cqe;
		uint32_t s = be32toh(err->s_wqe_opcode_qpn);

		wc->status = status_of(err->syndrome);
		wc->vendor_err = err->vendor_err_synd;
		wc->qp_num = s & INDEX_MASK;
		if (opcode == MLX5_CQE_REQ_ERR)
			req_decode((uint8_t)(s >> 24), wc);
		else
			wc->opcode = IBV_WC_RECV;
		return;
	}
	wc->status = IBV_WC_SUCCESS;
	wc->byte_len = be32toh(cqe->byte_cnt);
	wc->qp_num = be32toh(cqe->sop_drop_qpn) & INDEX_MASK;
	if (opcode == MLX5_CQE_REQ) {
		req_decode((uint8_t)(be32toh(cqe->sop_drop_qpn) >> 24), wc);
		return;
	}
	switch (opcode) {
	case MLX5_CQE_RESP_WR_IMM:
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = cqe->imm_inval_pkey;
		break;
	case MLX5_CQE_RESP_SEND_IMM:
		wc->opcode = IBV_WC_RECV;
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = cqe->imm_inval_pkey;
		break;
	case MLX5_CQE_RESP_SEND_INV:
		wc->opcode = IBV_WC_RECV;
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = be32toh(cqe->imm_inval_pkey);
		break;
	default:
		wc->opcode = IBV_WC_RECV;
		break;
	}
	wc->src_qp = be32toh(cqe->flags_rqpn) & INDEX_MASK;
	wc->sl = (be32toh(cqe->flags_rqpn) >> 24) & 0xf;
	if ((be32toh(cqe->flags_rqpn) >> 28) & 3)
		wc->wc_flags |= IBV_WC_GRH;
	wc->slid = be16toh(cqe->slid);
	wc->dlid_path_bits = cqe->ml_path & 0x7f;
}

/* ---------------------------------------------------------------- the ring */

static void put(struct mlx5_cq_ring *r, const struct ibv_wc *wc, struct mock_qp *qp, bool is_send,
		uint64_t sq_mark, bool solicited, uint16_t wqe_counter, uint64_t timestamp)
{
	uint32_t index = r->pi;
	struct mlx5_cqe64 *cqe = cqe_at(r, index);
	struct mlx5_cq_slot *slot = &r->slots[index & (r->cqe_cnt - 1)];
	uint8_t opcode;

	slot->wr_id = wc->wr_id;
	slot->qp = qp;
	slot->sq_mark = sq_mark;
	slot->is_send = is_send;
	encode(cqe, wc, is_send, wqe_counter, timestamp, &opcode);
	/* The entry is whole before the program can see it is there. */
	__atomic_store_n(&cqe->op_own,
			 (uint8_t)(opcode << 4 | (solicited ? 2 : 0) | owner_of(r, index)),
			 __ATOMIC_RELEASE);
	r->pi = index + 1;
}

/* Take the entry at r->ci into e, and consume it. */
static bool take(struct mlx5_cq_ring *r, struct mock_cqe *e)
{
	uint32_t index = r->ci;
	const struct mlx5_cqe64 *cqe;
	const struct mlx5_cq_slot *slot;

	if (!cqe_valid(r, index))
		return false;
	cqe = cqe_at(r, index);
	slot = &r->slots[index & (r->cqe_cnt - 1)];
	decode(cqe, cqe->op_own >> 4, &e->wc);
	e->wc.wr_id = slot->wr_id;
	e->qp = slot->qp;
	e->is_send = slot->is_send;
	e->sq_mark = slot->sq_mark;
	e->timestamp = be64toh(cqe->timestamp);
	e->later.nseg = 0;
	__atomic_store_n(&r->ci, index + 1, __ATOMIC_RELAXED); /* mlx5_cq_ready reads it unlocked */
	__atomic_store_n(&r->dbrec[0], htobe32(r->ci & INDEX_MASK), __ATOMIC_RELEASE);
	return true;
}

static uint32_t cq_number(const struct mock_cq *cq)
{
	/* Its place in the arena, which every process of the fabric shares:
	 * unique among the live CQs, and the same seen from anywhere. */
	return (uint32_t)(((uintptr_t)cq >> 6) & INDEX_MASK);
}

int mlx5_cq_make_ring(struct mock_cq *cq)
{
	struct mlx5_cq_ring *r = ring_new(fab_owner_of(cq), (uint32_t)cq->cq.cqe + 1, cq->cqe_size, NULL);

	if (!r)
		return ENOMEM;
	r->cqn = cq_number(cq);
	r->cq = cq;
	r->next = cq_rings;
	cq_rings = r;
	__atomic_store_n(&cq->ring, r, __ATOMIC_RELEASE);
	return 0;
}

void mlx5_cq_describe(const struct mock_cq *cq, struct mlx5dv_cq *out, void *uar)
{
	const struct mlx5_cq_ring *r = cq->ring;

	out->buf = r->buf;
	out->dbrec = r->dbrec;
	out->cqe_cnt = r->cqe_cnt;
	out->cqe_size = r->cqe_size;
	out->cq_uar = uar;
	out->cqn = r->cqn;
	out->comp_mask = 0;
}

bool mlx5_cq_full(const struct mock_cq *cq)
{
	const struct mlx5_cq_ring *r = cq->ring;
	uint32_t consumed = be32toh(__atomic_load_n(&r->dbrec[0], __ATOMIC_ACQUIRE));

	return ((r->pi - consumed) & INDEX_MASK) >= r->cqe_cnt;
}

void mlx5_cq_write(struct mock_cq *cq, const struct ibv_wc *wc, struct mock_qp *qp, bool is_send,
		   uint64_t sq_mark, bool solicited, uint16_t wqe_counter, uint64_t timestamp)
{
	put(cq->ring, wc, qp, is_send, sq_mark, solicited, wqe_counter, timestamp);
}

bool mlx5_cq_ready(const struct mock_cq *cq)
{
	const struct mlx5_cq_ring *r = __atomic_load_n(&cq->ring, __ATOMIC_ACQUIRE);

	return cqe_valid(r, __atomic_load_n(&r->ci, __ATOMIC_RELAXED));
}

bool mlx5_cq_read(struct mock_cq *cq, struct mock_cqe *e)
{
	return take(cq->ring, e);
}

uint32_t mlx5_cq_pending(const struct mock_cq *cq)
{
	return cq->ring->pi - cq->ring->ci;
}

void mlx5_cq_clean(struct mock_cq *cq, const struct mock_qp *qp)
{
	struct mlx5_cq_ring *r = cq->ring;
	uint32_t freed = 0;

	/* From the newest back to the oldest unconsumed: an entry of qp goes,
	 * another moves up past those gone. */
	for (uint32_t index = r->pi; index-- != r->ci;) {
		struct mlx5_cq_slot *slot = &r->slots[index & (r->cqe_cnt - 1)];

		if (slot->qp == qp) {
			freed++;
			continue;
		}
		if (freed) {
			uint32_t to = index + freed;
			struct mlx5_cqe64 *dst = cqe_at(r, to);
			uint8_t owner = dst->op_own & MLX5_CQE_OWNER_MASK;

			memcpy(dst, cqe_at(r, index), CQE64);
			dst->op_own = (uint8_t)((dst->op_own & ~MLX5_CQE_OWNER_MASK) | owner);
			r->slots[to & (r->cqe_cnt - 1)] = *slot;
		}
	}
	if (!freed)
		return;
	/* The slots the entries left are software's now: consumed. */
	__atomic_store_n(&r->ci, r->ci + freed, __ATOMIC_RELAXED);
	__atomic_store_n(&r->dbrec[0], htobe32(r->ci & INDEX_MASK), __ATOMIC_RELEASE);
}

int mlx5_cq_resize(struct mock_cq *cq, uint32_t cqe_cnt)
{
	struct mlx5_cq_ring *old = cq->ring;
	struct mlx5_cq_ring *r = ring_new(fab_owner_of(cq), cqe_cnt, old->cqe_size, old->dbrec);
	struct mock_cqe e;
	uint32_t start;

	if (!r)
		return ENOMEM;
	r->cqn = old->cqn;
	/* The doorbell record stays the CQ's, as upstream's does for the CQ's
	 * life (a program keeps the pointer mlx5dv_init_obj gave it), with
	 * what was last acted on, so that it does not read as a new arming. */
	r->arm_seen = old->arm_seen;
	r->cq = cq;
	unlink_ring(old);
	r->next = cq_rings;
	cq_rings = r;
	/* The provider's mlx5_cq_resize_copy_cqes: what is not yet polled
	 * moves to the new buffer one index on (the old ring's next slot held
	 * the resize CQE), and the consumer's index steps past that slot; the
	 * record keeps the index the last poll wrote, until the next. */
	start = old->ci;
	r->ci = r->pi = start + 1;
	while (take(old, &e))
		put(r, &e.wc, e.qp, e.is_send, e.sq_mark, false,
		    be16toh(cqe_at(old, old->ci - 1)->wqe_counter), e.timestamp);
	__atomic_store_n(&r->dbrec[0], htobe32(start & INDEX_MASK), __ATOMIC_RELEASE);
	cq->ring = r;
	fab_free(old->block);
	return 0;
}

void mlx5_cq_free(struct mock_cq *cq)
{
	if (cq->ring) {
		unlink_ring(cq->ring);
		fab_free(cq->ring->dbrec);
		fab_free(cq->ring->block);
	}
	cq->ring = NULL;
}

int mlx5_cq_attr(const struct mlx5dv_cq_init_attr *dv, uint32_t *cqe_size)
{
	const uint64_t known = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE | MLX5DV_CQ_INIT_ATTR_MASK_FLAGS |
			       MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
	const char *env = getenv("MLX5_CQE_SIZE");
	int size = 64;

	if (dv && (dv->comp_mask & ~known))
		return EINVAL;
	if (dv && (dv->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE))
		size = dv->cqe_size;
	else if (env)
		size = atoi(env);
	if (size != 64 && size != 128)
		return EINVAL;
	*cqe_size = (uint32_t)size;
	if (!dv)
		return 0;
	/* The mock writes no compressed CQEs (cqe_comp_caps.max_num 0). */
	if (dv->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE)
		return EINVAL;
	/* A flag it does not know, and CQE_PAD, the only one it does: the mock
	 * pads no 128-byte CQEs (no MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD). */
	if ((dv->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_FLAGS) && dv->flags)
		return EINVAL;
	return 0;
}

struct mock_cq *mlx5_cq_next_armed(struct mock_cq *after, bool *solicited, bool *pending)
{
	struct mlx5_cq_ring *r = after ? after->ring->next : cq_rings;

	for (; r; r = r->next) {
		uint32_t arm = be32toh(__atomic_load_n(&r->dbrec[ARM_DB], __ATOMIC_ACQUIRE));

		if (arm == r->arm_seen)
			continue;
		r->arm_seen = arm;
		/* The command in bits 24 to 27, the consumer index armed at in
		 * the low 24: CQEs written past it fire the event at once. */
		*solicited = arm & MLX5_CQ_DB_REQ_NOT_SOL;
		*pending = ((r->pi - arm) & INDEX_MASK) != 0;
		return r->cq;
	}
	return NULL;
}
