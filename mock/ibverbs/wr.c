/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: the ibv_wr_* posting API of a QP created with send_ops_flags
 * (struct ibv_qp_ex's function pointers, called by the header's inline
 * ibv_wr_* wrappers). Between ibv_wr_start and ibv_wr_complete each
 * operation call opens a work request, the setters fill it in, and
 * complete posts them all, in order, as ibv_post_send would; abort drops
 * them. Inline data is copied when it is set, as the providers copy it
 * into the WQE. An operation the QP was not created for fails
 * ibv_wr_complete and posts nothing. A builder past the send queue's
 * room, or a setter past the QP's max_send_sge or max_inline_data, fails
 * it too, as both providers check at the call: ENOMEM on mlx5
 * (mlx5_wq_overflow, _mlx5_send_wr_set_sge_list,
 * _mlx5_send_wr_set_inline_data), ENOSPC on rxe (check_qp_queue_full,
 * wr_set_sge_list, wr_set_inline_data[_list]).
 *
 * mlx5dv_qp_ex_from_ibv_qp_ex gives the mlx5 builders: a DCI's
 * mlx5dv_wr_set_dc_addr names each request's DCT. The rest (memory keys,
 * signature, crypto, DMA memcpy, raw WQEs) belong to send operations the
 * mock does not create a QP for; upstream leaves their pointers NULL on
 * such a QP, and here each aborts, named. */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define LIB "ibverbs"

struct pending {
	struct ibv_send_wr wr;
	struct ibv_sge *sge; /* wr.sg_list points here */
	char *inline_data;   /* copied at set time */
	bool has_dc;         /* a DCI's: mlx5dv_wr_set_dc_addr's address */
	enum ibv_wc_status fails; /* what the device makes of it (replayed defects) */
	struct mock_ah dc;
};

struct send_batch {
	bool open;
	int err; /* the first error while building: complete returns it */
	size_t n, cap;
	struct pending *wrs;
};

static struct mock_qp *qp_ex_of(struct ibv_qp_ex *qpx, const char *call)
{
	struct mock_qp *mqp = verbs_qp_of((struct ibv_qp *)qpx, call);

	MOCK_REQUIRE(mqp->extended, call, "the QP was not created with send_ops_flags");
	return mqp;
}

static void drop_pending(struct send_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->wrs[i].sge);
		free(b->wrs[i].inline_data);
	}
	b->n = 0;
	b->err = 0;
	b->open = false;
}

static struct mock_qp *building(struct ibv_qp_ex *qpx, const char *call)
{
	struct mock_qp *mqp = qp_ex_of(qpx, call);

	MOCK_REQUIRE(mqp->batch && mqp->batch->open, call, "outside ibv_wr_start ... ibv_wr_complete");
	return mqp;
}

/* The batch fails with err, unless it failed already: complete returns
 * the first error. */
static void batch_fail(struct send_batch *b, int err)
{
	if (!b->err)
		b->err = err;
}

/* What a QP's provider says of a request past its queue or its caps. */
static int over_caps_err(const struct mock_qp *mqp)
{
	return mqp->personality == RDMAMOCK_MLX5 ? ENOMEM : ENOSPC;
}

/* A new work request of `opcode`, if the QP was created for it. */
static struct ibv_send_wr *open_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
				   uint64_t ops_flag, const char *call)
{
	struct mock_qp *mqp = building(qpx, call);
	struct send_batch *b = mqp->batch;
	struct pending *p;

	if (!(mqp->send_ops_flags & ops_flag)) {
		batch_fail(b, EINVAL);
		return NULL;
	}
	if (mqp->sq_posted - mqp->sq_freed + b->n >= mqp->cap.max_send_wr) {
		batch_fail(b, over_caps_err(mqp));
		return NULL;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8;
		struct pending *more = realloc(b->wrs, cap * sizeof *more);

		if (!more) {
			batch_fail(b, ENOMEM);
			return NULL;
		}
		b->wrs = more;
		b->cap = cap;
	}
	p = &b->wrs[b->n++];
	memset(p, 0, sizeof *p);
	p->wr.wr_id = qpx->wr_id;
	p->wr.send_flags = qpx->wr_flags;
	p->wr.opcode = opcode;
	return &p->wr;
}

/* The request the setters fill: the last one opened. */
static struct pending *last(struct ibv_qp_ex *qpx, const char *call)
{
	struct send_batch *b = building(qpx, call)->batch;

	return b->n && !b->err ? &b->wrs[b->n - 1] : NULL;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	open_wr(qpx, IBV_WR_SEND, IBV_QP_EX_WITH_SEND, "ibv_wr_send");
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = open_wr(qpx, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM,
					 "ibv_wr_send_imm");

	if (wr)
		wr->imm_data = imm;
}

static void rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint64_t flag, uint32_t rkey,
		 uint64_t addr, __be32 imm, const char *call)
{
	struct ibv_send_wr *wr = open_wr(qpx, op, flag, call);

	if (wr) {
		wr->wr.rdma.rkey = rkey;
		wr->wr.rdma.remote_addr = addr;
		wr->imm_data = imm;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE, rkey, addr, 0, "ibv_wr_rdma_write");
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, rkey, addr, imm,
	     "ibv_wr_rdma_write_imm");
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ, rkey, addr, 0, "ibv_wr_rdma_read");
}

static void atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint64_t flag, uint32_t rkey,
		   uint64_t addr, uint64_t compare_add, uint64_t swap, const char *call)
{
	struct ibv_send_wr *wr = open_wr(qpx, op, flag, call);

	if (wr) {
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.remote_addr = addr;
		wr->wr.atomic.compare_add = compare_add;
		wr->wr.atomic.swap = swap;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, rkey, addr,
	       compare, swap, "ibv_wr_atomic_cmp_swp");
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, rkey, addr,
	       add, 0, "ibv_wr_atomic_fetch_add");
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct pending *p = last(qpx, "ibv_wr_set_ud_addr");

	if (p) {
		p->wr.wr.ud.ah = ah;
		p->wr.wr.ud.remote_qpn = remote_qpn;
		p->wr.wr.ud.remote_qkey = remote_qkey;
	}
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct pending *p = last(qpx, "ibv_wr_set_xrc_srqn");

	if (p)
		p->wr.qp_type.xrc.remote_srqn = remote_srqn;
}

/* rdma-core before 64: rxe's ibv_wr_set_sge_list counts the first SGE's
 * length once per SGE (QP_EX_SGE_LIST, replayed). The kernel sends that
 * many bytes from the list, and fails the request where the list holds
 * fewer (LOC_QP_OP_ERR, measured on rdma-core 44). */
static void claim_first_length(struct pending *p, uint64_t claimed)
{
	for (int i = 0; i < p->wr.num_sge; i++) {
		if (p->sge[i].length > claimed)
			p->sge[i].length = (uint32_t)claimed;
		claimed -= p->sge[i].length;
	}
	if (claimed)
		p->fails = IBV_WC_LOC_QP_OP_ERR;
}

static void set_sges(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list, const char *call)
{
	struct mock_qp *mqp = building(qpx, call);
	struct pending *p = last(qpx, call);

	if (!p)
		return;
	if (n > mqp->cap.max_send_sge) {
		batch_fail(mqp->batch, over_caps_err(mqp));
		return;
	}
	MOCK_REQUIRE(list || !n, call, "sg_list is NULL with %zu entries (upstream reads it)", n);
	free(p->sge);
	p->sge = n ? malloc(n * sizeof *list) : NULL;
	if (n && !p->sge) {
		mqp->batch->err = ENOMEM;
		return;
	}
	if (n)
		memcpy(p->sge, list, n * sizeof *list);
	p->wr.sg_list = p->sge;
	p->wr.num_sge = (int)n;
	p->fails = IBV_WC_SUCCESS;
	if (n > 1 && fab_replay_deviates(mqp->personality, "QP_EX_SGE_LIST"))
		claim_first_length(p, n * list[0].length);
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	set_sges(qpx, 1, &sge, "ibv_wr_set_sge");
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list)
{
	set_sges(qpx, n, list, "ibv_wr_set_sge_list");
}

/* rdma-core before 64: rxe's ibv_wr_set_inline_data_list never adds the
 * buffers up (fixed by 1e8ed0aff): each is checked alone against
 * max_inline_data (QP_EX_INLINE_LIST_OVER_CAPS) and the SEND carries 0
 * bytes (QP_EX_INLINE_LIST), both replayed. */
static void set_inline(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *bufs,
		       bool list, const char *call)
{
	struct mock_qp *mqp = building(qpx, call);
	struct pending *p = last(qpx, call);
	bool unsummed = list && fab_replay_deviates(mqp->personality, "QP_EX_INLINE_LIST_OVER_CAPS");
	size_t total = 0, largest = 0;
	char *out;

	if (!p)
		return;
	MOCK_REQUIRE(bufs || !n, call, "buf_list is NULL with %zu entries (upstream reads it)", n);
	for (size_t i = 0; i < n; i++) {
		total += bufs[i].length;
		if (bufs[i].length > largest)
			largest = bufs[i].length;
	}
	if ((unsummed ? largest : total) > mqp->cap.max_inline_data) {
		batch_fail(mqp->batch, over_caps_err(mqp));
		return;
	}
	free(p->inline_data);
	p->inline_data = out = malloc(total ? total : 1);
	free(p->sge);
	p->sge = calloc(1, sizeof *p->sge);
	if (!out || !p->sge) {
		mqp->batch->err = ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		mock_copy_in(out, bufs[i].addr, bufs[i].length, call, "inline data");
		out += bufs[i].length;
	}
	p->sge->addr = (uintptr_t)p->inline_data;
	p->sge->length = (uint32_t)total;
	if (list && fab_replay_deviates(mqp->personality, "QP_EX_INLINE_LIST"))
		p->sge->length = 0;
	p->wr.sg_list = p->sge;
	p->wr.num_sge = 1;
	p->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	set_inline(qpx, 1, &buf, false, "ibv_wr_set_inline_data");
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *bufs)
{
	set_inline(qpx, n, bufs, true, "ibv_wr_set_inline_data_list");
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct mock_qp *mqp = qp_ex_of(qpx, "ibv_wr_start");

	MOCK_REQUIRE(!mqp->batch->open, "ibv_wr_start", "a batch is already open on this QP");
	drop_pending(mqp->batch);
	mqp->batch->open = true;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct mock_qp *mqp = building(qpx, "ibv_wr_complete");
	struct send_batch *b = mqp->batch;
	int err = b->err;

	verbs_lock_take();
	for (size_t i = 0; !err && i < b->n; i++) {
		mqp->raw_ah = b->wrs[i].has_dc ? &b->wrs[i].dc : NULL;
		mqp->wr_fails = b->wrs[i].fails;
		err = verbs_post_one_send(mqp, &b->wrs[i].wr);
		mqp->raw_ah = NULL;
		mqp->wr_fails = IBV_WC_SUCCESS;
	}
	verbs_lock_give();
	drop_pending(b);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	drop_pending(building(qpx, "ibv_wr_abort")->batch);
}

/* Memory windows and invalidation (mw.c): the requests ibv_post_send
 * takes, bind_mw's window and key as given. */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr = open_wr(qpx, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW, "ibv_wr_bind_mw");

	MOCK_REQUIRE(info, "ibv_wr_bind_mw", "bind_info is NULL (upstream reads it)");
	if (wr) {
		wr->bind_mw.mw = mw;
		wr->bind_mw.rkey = rkey;
		wr->bind_mw.bind_info = *info;
	}
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *wr = open_wr(qpx, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV,
					 "ibv_wr_local_inv");

	if (wr)
		wr->invalidate_rkey = rkey;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *wr = open_wr(qpx, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV,
					 "ibv_wr_send_inv");

	if (wr)
		wr->invalidate_rkey = rkey;
}

/* TSO and atomic write are not modelled: the QP was never created for
 * them (create_qp_ex refuses the flags), so the call fails the batch as
 * an operation the QP lacks. */

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	open_wr(qpx, IBV_WR_TSO, IBV_QP_EX_WITH_TSO, "ibv_wr_send_tso");
}

static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *data)
{
	batch_fail(building(qpx, "ibv_wr_atomic_write")->batch, EINVAL);
}

/* ---------------------------------------------------------------- mlx5dv_qp_ex */

static struct mock_qp *of_dv(struct mlx5dv_qp_ex *dv)
{
	return (struct mock_qp *)((char *)dv - offsetof(struct mock_qp, dvx));
}

static void dv_set_dc_addr(struct mlx5dv_qp_ex *dv, struct ibv_ah *ah, uint32_t remote_dctn,
			   uint64_t remote_dc_key)
{
	struct mock_qp *mqp = of_dv(dv);
	struct pending *p = last(&mqp->qpx, "mlx5dv_wr_set_dc_addr");

	MOCK_REQUIRE(mqp->dc_type == MLX5DV_DCTYPE_DCI, "mlx5dv_wr_set_dc_addr",
		     "QP 0x%x is not a DCI (upstream sets it only on one)", mqp->qp.qp_num);
	if (!p)
		return;
	p->dc = *verbs_ah_of(ah, "mlx5dv_wr_set_dc_addr");
	p->dc.dc_dctn = remote_dctn & 0xffffff;
	p->dc.dc_key = remote_dc_key;
	p->has_dc = true;
}

/* The device reports no DCI streams: the stream is the DCI's one. */
static void dv_set_dc_addr_stream(struct mlx5dv_qp_ex *dv, struct ibv_ah *ah, uint32_t remote_dctn,
				  uint64_t remote_dc_key, uint16_t stream_id)
{
	dv_set_dc_addr(dv, ah, remote_dctn, remote_dc_key);
}

#define DV_ABSENT(name, call, ...)                                                              \
	static void name(struct mlx5dv_qp_ex *dv, ##__VA_ARGS__)                               \
	{                                                                                       \
		MOCK_REQUIRE(false, call,                                                       \
			     "QP 0x%x was not created with the send operation (upstream's pointer " \
			     "is NULL)", of_dv(dv)->qp.qp_num);                                   \
	}
DV_ABSENT(dv_mr_interleaved, "mlx5dv_wr_mr_interleaved", struct mlx5dv_mkey *k, uint32_t a,
	  uint32_t r, uint16_t n, struct mlx5dv_mr_interleaved *d)
DV_ABSENT(dv_mr_list, "mlx5dv_wr_mr_list", struct mlx5dv_mkey *k, uint32_t a, uint16_t n,
	  struct ibv_sge *s)
DV_ABSENT(dv_mkey_configure, "mlx5dv_wr_mkey_configure", struct mlx5dv_mkey *k, uint8_t n,
	  struct mlx5dv_mkey_conf_attr *a)
DV_ABSENT(dv_set_mkey_access_flags, "mlx5dv_wr_set_mkey_access_flags", uint32_t a)
DV_ABSENT(dv_set_mkey_layout_list, "mlx5dv_wr_set_mkey_layout_list", uint16_t n,
	  const struct ibv_sge *s)
DV_ABSENT(dv_set_mkey_layout_interleaved, "mlx5dv_wr_set_mkey_layout_interleaved", uint32_t r,
	  uint16_t n, const struct mlx5dv_mr_interleaved *d)
DV_ABSENT(dv_set_mkey_sig_block, "mlx5dv_wr_set_mkey_sig_block",
	  const struct mlx5dv_sig_block_attr *a)
DV_ABSENT(dv_raw_wqe, "mlx5dv_wr_raw_wqe", const void *w)
DV_ABSENT(dv_memcpy, "mlx5dv_wr_memcpy", uint32_t dl, uint64_t da, uint32_t sl, uint64_t sa, size_t n)
DV_ABSENT(dv_set_mkey_crypto, "mlx5dv_wr_set_mkey_crypto", const struct mlx5dv_crypto_attr *a)
#undef DV_ABSENT

struct mlx5dv_qp_ex *verbs_qp_ex_dv(struct ibv_qp_ex *qpx)
{
	return &qp_ex_of(qpx, "mlx5dv_qp_ex_from_ibv_qp_ex")->dvx;
}

void verbs_qp_ex_init(struct mock_qp *mqp)
{
	struct ibv_qp_ex *qpx = &mqp->qpx;

	mqp->batch = calloc(1, sizeof *mqp->batch);
	MOCK_REQUIRE(mqp->batch, "ibv_create_qp_ex", "out of memory for the QP's posting state");
	qpx->comp_mask = 0;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_send_tso = wr_send_tso;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_atomic_write = wr_atomic_write;
	mqp->dvx = (struct mlx5dv_qp_ex){
		.wr_set_dc_addr = dv_set_dc_addr,
		.wr_mr_interleaved = dv_mr_interleaved,
		.wr_mr_list = dv_mr_list,
		.wr_mkey_configure = dv_mkey_configure,
		.wr_set_mkey_access_flags = dv_set_mkey_access_flags,
		.wr_set_mkey_layout_list = dv_set_mkey_layout_list,
		.wr_set_mkey_layout_interleaved = dv_set_mkey_layout_interleaved,
		.wr_set_mkey_sig_block = dv_set_mkey_sig_block,
		.wr_raw_wqe = dv_raw_wqe,
		.wr_set_dc_addr_stream = dv_set_dc_addr_stream,
		.wr_memcpy = dv_memcpy,
		.wr_set_mkey_crypto = dv_set_mkey_crypto,
	};
}

void verbs_qp_ex_free(struct mock_qp *mqp)
{
	if (!mqp->batch)
		return;
	drop_pending(mqp->batch);
	free(mqp->batch->wrs);
	free(mqp->batch);
	mqp->batch = NULL;
}
