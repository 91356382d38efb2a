/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_create_cq_ex() and its polling API (ibv_start_poll,
 * ibv_next_poll, ibv_end_poll, ibv_wc_read_*), and ibv_resize_cq(). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>

#include "fixtures.h"
#include "qp.h"

#define WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM)
#define IMM 0x12345678u

static struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 8, .wc_flags = wc_flags };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &attr);

	if (!cq)
		fx_skip_unprovided(errno, "ibv_create_cq_ex", "cq-ex");
	if (!cq)
		fail_msg("ibv_create_cq_ex(wc_flags 0x%llx): %s", (unsigned long long)wc_flags,
			 strerror(errno));
	return cq;
}

/* fx_qp_create's QP swapped for one whose receives complete on an
 * extended CQ (*cqx); its sends still complete on q->cq. */
static void qp_of_kind_on_cq_ex(struct fx_qp *q, enum fx_device_kind kind, struct ibv_cq_ex **cqx)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	fx_qp_create(q, kind, IBV_QPT_RC);
	*cqx = create_cq_ex(q->ctx, WC_FLAGS);
	FX_VERBS_OK(ibv_destroy_qp(q->qp));
	init.send_cq = q->cq;
	init.recv_cq = ibv_cq_ex_to_cq(*cqx);
	q->qp = ibv_create_qp(q->pd, &init);
	if (!q->qp)
		fail_msg("ibv_create_qp(RC, receives on an extended CQ): %s", strerror(errno));
	fx_qp_to(q, IBV_QPS_RTS);
}

static void qp_on_cq_ex(struct fx_qp *q, struct ibv_cq_ex **cqx)
{
	qp_of_kind_on_cq_ex(q, FX_DEV_UNDER_TEST, cqx);
}

static void release_with_cq_ex(struct fx_qp *q, struct ibv_cq_ex *cqx)
{
	FX_VERBS_OK(ibv_destroy_qp(q->qp));
	q->qp = NULL;
	FX_VERBS_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	fx_qp_release(q);
}

/* n receives (wr_ids 1..n) of 16 bytes each at q->buf + 32, then n SENDs
 * with immediate of 8 bytes from q->buf; returns once every send has
 * completed, so the receives' completions are written too (a responder
 * completes a receive before it acknowledges the message). */
static void send_to_self(struct fx_qp *q, int n)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)q->buf + 32, .length = 16, .lkey = q->mr->lkey };
	struct ibv_sge ssge = { .addr = (uintptr_t)q->buf, .length = 8, .lkey = q->mr->lkey };
	struct ibv_wc wc;

	for (int i = 1; i <= n; i++) {
		struct ibv_recv_wr rwr = { .wr_id = (uint64_t)i, .sg_list = &rsge, .num_sge = 1 }, *rbad;

		FX_VERBS_OK(ibv_post_recv(q->qp, &rwr, &rbad));
	}
	for (int i = 1; i <= n; i++) {
		struct ibv_send_wr swr = { .wr_id = 100u + (unsigned)i, .sg_list = &ssge, .num_sge = 1,
					   .opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htonl(IMM),
					   .send_flags = IBV_SEND_SIGNALED }, *sbad;

		FX_VERBS_OK(ibv_post_send(q->qp, &swr, &sbad));
	}
	for (int i = 1; i <= n; i++) {
		fx_poll_one(q->cq, &wc);
		if (wc.status != IBV_WC_SUCCESS)
			fail_msg("send wr_id %llu: %s", (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status));
	}
}

/* ibv_start_poll until it finds a completion (5 s at most); an ENOENT
 * batch is never ended. */
static int start_poll_wait(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr attr = { 0 };

	for (int waited_ms = 0; waited_ms < 5000; waited_ms++) {
		int ret = ibv_start_poll(cq, &attr);

		if (ret != ENOENT)
			return ret;
		poll(NULL, 0, 1);
	}
	fail_msg("ibv_start_poll: ENOENT for 5 s");
	return ENOENT;
}

static void check_recv(struct ibv_cq_ex *cq, const struct fx_qp *q, uint64_t wr_id)
{
	if (cq->status != IBV_WC_SUCCESS)
		fail_msg("receive wr_id %llu: %s", (unsigned long long)cq->wr_id,
			 ibv_wc_status_str(cq->status));
	assert_int_equal(cq->wr_id, wr_id);
	assert_int_equal(ibv_wc_read_opcode(cq), IBV_WC_RECV);
	assert_int_equal(ibv_wc_read_byte_len(cq), 8);
	assert_true(ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(ibv_wc_read_imm_data(cq)), IMM);
	assert_int_equal(ibv_wc_read_qp_num(cq), q->qp->qp_num);
}

void ibv_start_poll__empty(void **state)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_cq_ex *cq = create_cq_ex(ctx, WC_FLAGS);

	/* Not RC_ASSERT_ERRNO here and below: ibv_start_poll and ibv_next_poll are
	 * inline calls of the CQ's ops, no exported symbol with an errno table. */
	assert_int_equal(ibv_start_poll(cq, &attr), ENOENT);
	/* Still valid: the same answer again, without ibv_end_poll. */
	assert_int_equal(ibv_start_poll(cq, &attr), ENOENT);
	FX_VERBS_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ibv_start_poll with a comp_mask bit set, a completion waiting: mlx5
 * refuses it (mlx5_start_poll: EINVAL) and the completion stays for the
 * next start; rxe's cq_start_poll never reads attr: 0 and the completion. */
static void start_poll_comp_mask(enum fx_device_kind kind, bool refused)
{
	struct ibv_poll_cq_attr odd = { .comp_mask = 1 };
	struct ibv_cq_ex *cq;
	struct fx_qp q;
	int ret = ENOENT;

	qp_of_kind_on_cq_ex(&q, kind, &cq);
	send_to_self(&q, 1);
	for (int waited_ms = 0; ret == ENOENT && waited_ms < 5000; waited_ms++) {
		ret = ibv_start_poll(cq, &odd);
		if (ret == ENOENT)
			poll(NULL, 0, 1);
	}
	if (refused) {
		assert_int_equal(ret, EINVAL);
		assert_int_equal(start_poll_wait(cq), 0);
	} else {
		assert_int_equal(ret, 0);
	}
	check_recv(cq, &q, 1);
	ibv_end_poll(cq);
	release_with_cq_ex(&q, cq);
}

void ibv_start_poll__comp_mask_mlx5(void **state) { start_poll_comp_mask(FX_DEV_MLX5, true); }
void ibv_start_poll__comp_mask_not_mlx5(void **state) { start_poll_comp_mask(FX_DEV_NOT_MLX5, false); }

void ibv_start_poll__reads_fields(void **state)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_cq_ex *cq;
	struct fx_qp q;

	qp_on_cq_ex(&q, &cq);
	assert_int_equal(ibv_start_poll(cq, &attr), ENOENT);
	send_to_self(&q, 1);
	assert_int_equal(start_poll_wait(cq), 0);
	check_recv(cq, &q, 1);
	ibv_end_poll(cq);
	release_with_cq_ex(&q, cq);
}

void ibv_next_poll__batch(void **state)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_cq_ex *cq;
	struct fx_qp q;

	qp_on_cq_ex(&q, &cq);
	send_to_self(&q, 2);
	assert_int_equal(start_poll_wait(cq), 0);
	check_recv(cq, &q, 1);
	assert_int_equal(ibv_next_poll(cq), 0);
	check_recv(cq, &q, 2);
	assert_int_equal(ibv_next_poll(cq), ENOENT);
	ibv_end_poll(cq);
	assert_int_equal(ibv_start_poll(cq, &attr), ENOENT);
	release_with_cq_ex(&q, cq);
}

void ibv_create_cq_ex__unknown_wc_flag(void **state)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 8, .wc_flags = WC_FLAGS | 1ull << 40 };
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);

	errno = 0;
	assert_null(ibv_create_cq_ex(ctx, &attr));
	/* Not RC_ASSERT_ERRNO: ibv_create_cq_ex is inline, no exported symbol. */
	assert_int_equal(errno, EOPNOTSUPP);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_create_cq_ex__unknown_comp_mask(void **state)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 8, .wc_flags = WC_FLAGS, .comp_mask = 1u << 20 };
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);

	assert_null(ibv_create_cq_ex(ctx, &attr));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* The creation flags (IBV_CQ_INIT_ATTR_MASK_FLAGS): SINGLE_THREADED is
 * taken by both devices. A flag rdma-core does not define (1 << 2) fails
 * mlx5's create_cq (EINVAL), and on rxe is dropped by libibverbs'
 * command (ibv_icmd_create_cq_ex passes the kernel IGNORE_OVERRUN alone),
 * so the CQ is made. */
static void create_flags(enum fx_device_kind kind)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 8, .wc_flags = WC_FLAGS,
					    .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS };
	struct ibv_context *ctx = fx_open_device(kind);
	bool mlx5 = kind == FX_DEV_MLX5;
	struct ibv_cq_ex *cq;

	attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	cq = ibv_create_cq_ex(ctx, &attr);
	if (!cq)
		fx_skip_unprovided(errno, "ibv_create_cq_ex", "cq-ex");
	if (!cq)
		fail_msg("ibv_create_cq_ex(IBV_CREATE_CQ_ATTR_SINGLE_THREADED): %s", strerror(errno));
	FX_VERBS_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));

	attr.flags = 1u << 2;
	errno = 0;
	cq = ibv_create_cq_ex(ctx, &attr);
	if (mlx5) {
		assert_null(cq);
		assert_int_equal(errno, EINVAL);
	} else {
		if (!cq)
			fail_msg("ibv_create_cq_ex(flags 1 << 2) on rxe: %s", strerror(errno));
		FX_VERBS_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	}
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_create_cq_ex__create_flags_mlx5(void **state) { create_flags(FX_DEV_MLX5); }
void ibv_create_cq_ex__create_flags_not_mlx5(void **state) { create_flags(FX_DEV_NOT_MLX5); }

/* ---------------------------------------------------------------- ibv_resize_cq */

void ibv_resize_cq__grow(void **state)
{
	struct fx_qp q;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	bool received = false;
	struct ibv_wc wc;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	FX_PROVIDED_OK("ibv_resize_cq", "resize-cq", ibv_resize_cq(q.cq, 100));
	RC_ASSERT_IN_RANGE(q.cq->cqe, 100, 1u << 30);
	/* A message to itself: its send and receive complete on the CQ. */
	FX_VERBS_OK(ibv_post_recv(q.qp, &rwr, &rbad));
	FX_VERBS_OK(ibv_post_send(q.qp, &swr, &sbad));
	for (int i = 0; i < 2; i++) {
		fx_poll_one(q.cq, &wc);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		received |= wc.opcode == IBV_WC_RECV;
	}
	assert_true(received);
	fx_qp_release(&q);
}

static void resize_refused(struct ibv_cq *cq, int cqe)
{
	int before = cq->cqe, ret = ibv_resize_cq(cq, cqe);

	fx_skip_unprovided(ret, "ibv_resize_cq", "resize-cq");
	if (ret != EINVAL)
		fail_msg("ibv_resize_cq(%d) returned %d, not EINVAL", cqe, ret);
	assert_int_equal(cq->cqe, before);
}

void ibv_resize_cq__invalid(void **state)
{
	struct ibv_device_attr attr;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	FX_VERBS_OK(ibv_query_device(q.ctx, &attr));
	resize_refused(q.cq, 0);
	resize_refused(q.cq, attr.max_cqe + 1);
	fx_qp_release(&q);
}

#define UD_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
		     IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS)

/* A UD datagram to the QP itself, received on an extended CQ that asked
 * for the sender's fields: ibv_wc_read_src_qp names the QP, _byte_len
 * counts the 40-byte GRH, _dlid_path_bits (and _sl on InfiniBand) are
 * the address handle's 0, _slid is the port's LID (0 on RoCE), and _wc_flags has
 * IBV_WC_GRH exactly when the message carried one (always on RoCE). */
void ibv_wc_read_src_qp__ud_sender(void **state)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_port_attr port;
	struct ibv_ah_attr ah_attr;
	struct ibv_cq_ex *cqx;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct fx_qp q;
	bool ib;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_UD);
	cqx = create_cq_ex(q.ctx, UD_WC_FLAGS);
	FX_VERBS_OK(ibv_destroy_qp(q.qp));
	init.send_cq = q.cq;
	init.recv_cq = ibv_cq_ex_to_cq(cqx);
	q.qp = ibv_create_qp(q.pd, &init);
	if (!q.qp)
		fail_msg("ibv_create_qp(UD, receives on an extended CQ): %s", strerror(errno));
	fx_qp_to(&q, IBV_QPS_RTS);
	fx_ah_to_self(q.ctx, 64, &ah_attr);
	ah = ibv_create_ah(q.pd, &ah_attr);
	if (!ah)
		fail_msg("ibv_create_ah: %s", strerror(errno));
	ib = fx_port_ib(q.ctx, 1);
	FX_OK(ibv_query_port(q.ctx, 1, &port));
	rsge = (struct ibv_sge){ .addr = (uintptr_t)q.buf + 8, .length = 56, .lkey = q.mr->lkey };
	ssge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	swr.wr.ud = (typeof(swr.wr.ud)){ .ah = ah, .remote_qpn = q.qp->qp_num, .remote_qkey = 0x11111111 };
	FX_VERBS_OK(ibv_post_recv(q.qp, &rwr, &rbad));
	FX_VERBS_OK(ibv_post_send(q.qp, &swr, &sbad));
	fx_poll_one(q.cq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	FX_VERBS_OK(start_poll_wait(cqx));
	assert_int_equal(cqx->status, IBV_WC_SUCCESS);
	assert_int_equal(cqx->wr_id, 1);
	assert_int_equal(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	assert_int_equal(ibv_wc_read_byte_len(cqx), 40 + 8);
	assert_int_equal(ibv_wc_read_qp_num(cqx), q.qp->qp_num);
	assert_int_equal(ibv_wc_read_src_qp(cqx), q.qp->qp_num);
	/* On RoCE mlx5 puts the packet's type where the SL goes
	 * (UD_RECV_ROCE_TYPE). */
	if (ib)
		assert_int_equal(ibv_wc_read_sl(cqx), 0);
	assert_int_equal(ibv_wc_read_dlid_path_bits(cqx), 0);
	assert_int_equal(ibv_wc_read_slid(cqx), ib ? port.lid : 0);
	assert_int_equal(!!(ibv_wc_read_wc_flags(cqx) & IBV_WC_GRH), !!ah_attr.is_global);
	ibv_end_poll(cqx);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	release_with_cq_ex(&q, cqx);
}
