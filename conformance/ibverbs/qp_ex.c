/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_create_qp_ex() with send_ops_flags, ibv_qp_to_qp_ex(),
 * and the ibv_wr_* posting API: ibv_wr_start, ibv_wr_send,
 * ibv_wr_rdma_write, ibv_wr_set_sge, ibv_wr_set_sge_list,
 * ibv_wr_set_inline_data, ibv_wr_set_inline_data_list, ibv_wr_send_imm,
 * ibv_wr_rdma_write_imm, ibv_wr_rdma_read, ibv_wr_atomic_fetch_add,
 * ibv_wr_atomic_cmp_swp, ibv_wr_set_ud_addr, ibv_wr_complete,
 * ibv_wr_abort. */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "fixtures.h"
#include "qp.h"

#define OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE)
#define RXE_VENDOR_ID 0xffffff /* kernel rxe_param.h */

/* fx_qp_create's resources under an RC QP from ibv_create_qp_ex with
 * send_ops_flags, connected to itself in RTS; data is a second buffer
 * any QP of the PD may write (*data_mr). */
struct xqp {
	struct fx_qp q;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *data_mr;
	char data[256];
};

static struct ibv_qp *create_ex(struct fx_qp *q, uint64_t ops)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.send_cq = q->cq,
		.recv_cq = q->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | (ops ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0),
		.pd = q->pd,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(q->ctx, &init);
}

/* xqp_create on a device of `kind` with the operations ops; with more
 * than OPS the QP and the data's region also take remote reads and
 * atomics. */
static void xqp_create_on(struct xqp *x, enum fx_device_kind kind, uint64_t ops)
{
	const int more = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	fx_qp_create(&x->q, kind, IBV_QPT_RC);
	FX_VERBS_OK(ibv_destroy_qp(x->q.qp));
	x->q.qp = create_ex(&x->q, ops);
	if (!x->q.qp)
		fx_skip_unprovided(errno, "ibv_create_qp_ex", "qp-ex");
	if (!x->q.qp)
		fail_msg("ibv_create_qp_ex(RC, send_ops_flags 0x%llx): %s", (unsigned long long)ops,
			 strerror(errno));
	x->qpx = ibv_qp_to_qp_ex(x->q.qp);
	if (!x->qpx)
		fail_msg("ibv_qp_to_qp_ex: NULL for a QP created with send_ops_flags");
	memset(x->data, 0, sizeof x->data);
	x->data_mr = ibv_reg_mr(x->q.pd, x->data, sizeof x->data,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					(ops & ~(uint64_t)OPS ? more : 0));
	if (!x->data_mr)
		fail_msg("ibv_reg_mr(remote write): %s", strerror(errno));
	fx_qp_to(&x->q, IBV_QPS_RTS);
	if (ops & ~(uint64_t)OPS)
		FX_VERBS_OK(ibv_modify_qp(x->q.qp,
					  &(struct ibv_qp_attr){ .qp_access_flags =
									 IBV_ACCESS_REMOTE_WRITE | more },
					  IBV_QP_ACCESS_FLAGS));
}

static void xqp_create_ops(struct xqp *x, uint64_t ops)
{
	xqp_create_on(x, FX_DEV_UNDER_TEST, ops);
}

static void xqp_create(struct xqp *x)
{
	xqp_create_ops(x, OPS);
}

static void xqp_release(struct xqp *x)
{
	FX_VERBS_OK(ibv_destroy_qp(x->q.qp));
	x->q.qp = NULL;
	FX_VERBS_OK(ibv_dereg_mr(x->data_mr));
	fx_qp_release(&x->q);
}

/* A receive of up to 64 bytes into data + 64 * slot (slot 1..3). */
static void post_recv(struct xqp *x, uint64_t wr_id, int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&x->data[64 * slot], .length = 64,
			       .lkey = x->data_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	FX_VERBS_OK(ibv_post_recv(x->q.qp, &wr, &bad));
}

/* The next completion, which must be successful. */
static void next_wc(struct xqp *x, struct ibv_wc *wc)
{
	fx_poll_one(x->q.cq, wc);
	if (wc->status != IBV_WC_SUCCESS)
		fail_msg("wr_id %llu (opcode %d) completed with %s", (unsigned long long)wc->wr_id,
			 (int)wc->opcode, ibv_wc_status_str(wc->status));
}

/* The n send-side and n receive completions of n messages, each side in
 * the order it completed (the two sides interleave in any order). */
static void completions(struct xqp *x, int n, struct ibv_wc *sends, struct ibv_wc *recvs)
{
	int ns = 0, nr = 0;

	while (ns < n || nr < n) {
		struct ibv_wc wc;

		next_wc(x, &wc);
		if (wc.opcode & IBV_WC_RECV) {
			if (nr == n)
				fail_msg("an extra receive completion, wr_id %llu", (unsigned long long)wc.wr_id);
			recvs[nr++] = wc;
		} else {
			if (ns == n)
				fail_msg("an extra send completion, wr_id %llu", (unsigned long long)wc.wr_id);
			sends[ns++] = wc;
		}
	}
}

void ibv_qp_to_qp_ex__created_with_send_ops(void **state)
{
	struct xqp x;
	struct fx_qp plain;

	fx_qp_create(&plain, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	assert_null(ibv_qp_to_qp_ex(plain.qp));
	fx_qp_release(&plain);
	fx_qp_create(&x.q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	FX_VERBS_OK(ibv_destroy_qp(x.q.qp));
	x.q.qp = create_ex(&x.q, OPS);
	if (!x.q.qp)
		fx_skip_unprovided(errno, "ibv_create_qp_ex", "qp-ex");
	if (!x.q.qp)
		fail_msg("ibv_create_qp_ex(RC, send_ops_flags SEND | RDMA_WRITE): %s", strerror(errno));
	x.qpx = ibv_qp_to_qp_ex(x.q.qp);
	assert_non_null(x.qpx);
	assert_ptr_equal(&x.qpx->qp_base, x.q.qp);
	assert_int_equal(x.q.qp->state, IBV_QPS_RESET);
	fx_qp_release(&x.q);
}

/* The provider's ibv_create_qp_ex without send_ops_flags: whether the QP
 * has an extended view is the provider's answer. rxe_create_qp_ex marks
 * every QP it makes (VERBS_QP_EX), mlx5_create_qp_ex only those with
 * send_ops_flags. Every rxe and mlx5 device is checked (the mock has one
 * of each); any other provider is not judged. */
static bool extended_without_ops(struct ibv_device *dev, bool *judged)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		/* With IBV_QP_INIT_ATTR_PD alone the header's ibv_create_qp_ex
		 * calls ibv_create_qp; create_flags 0 takes the provider's
		 * create_qp_ex. */
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
	};
	struct ibv_device_attr attr;
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	bool rxe, mlx5, ok;

	if (!ctx)
		fail_msg("ibv_open_device(%s): %s", ibv_get_device_name(dev), strerror(errno));
	FX_VERBS_OK(ibv_query_device(ctx, &attr));
	rxe = attr.vendor_id == RXE_VENDOR_ID;
	mlx5 = mlx5dv_is_supported(dev);
	*judged = rxe || mlx5;
	if (!*judged) {
		FX_VERBS_OK(ibv_close_device(ctx));
		return true;
	}
	init.pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2, NULL, NULL, 0);
	if (!init.pd || !cq)
		fail_msg("ibv_alloc_pd or ibv_create_cq on %s: %s", ibv_get_device_name(dev),
			 strerror(errno));
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp_ex(ctx, &init);
	if (!qp)
		fail_msg("ibv_create_qp_ex(RC, no send_ops_flags) on %s: %s", ibv_get_device_name(dev),
			 strerror(errno));
	qpx = ibv_qp_to_qp_ex(qp);
	ok = mlx5 ? qpx == NULL : qpx && &qpx->qp_base == qp;
	if (!ok)
		print_message("%s (%s): ibv_qp_to_qp_ex gave %p\n", ibv_get_device_name(dev),
			      mlx5 ? "mlx5: NULL expected" : "rxe: the QP expected", (void *)qpx);
	FX_VERBS_OK(ibv_destroy_qp(qp));
	FX_VERBS_OK(ibv_destroy_cq(cq));
	FX_VERBS_OK(ibv_dealloc_pd(init.pd));
	FX_VERBS_OK(ibv_close_device(ctx));
	return ok;
}

void ibv_qp_to_qp_ex__created_without_send_ops(void **state)
{
	struct ibv_device **list;
	int n = 0, judged = 0, bad = 0;

	fx_require_backend();
	list = ibv_get_device_list(&n);
	if (!list)
		fail_msg("ibv_get_device_list: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		bool was_judged;

		bad += !extended_without_ops(list[i], &was_judged);
		judged += was_judged;
	}
	ibv_free_device_list(list);
	if (!judged)
		RC_SKIP("no rxe or mlx5 device: the provider decides");
	assert_int_equal(bad, 0);
}

void ibv_create_qp_ex__unsupported_send_ops(void **state)
{
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	errno = 0;
	assert_null(create_ex(&q, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO));
	/* Not RC_ASSERT_ERRNO: ibv_create_qp_ex is inline, no exported symbol. */
	assert_int_equal(errno, EOPNOTSUPP);
	fx_qp_release(&q);
}

void ibv_wr_complete__send(void **state)
{
	struct ibv_wc send, recv;
	struct xqp x;

	xqp_create(&x);
	memcpy(x.data, "sixteen bytes!!", 16);
	post_recv(&x, 1, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 7;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x.qpx);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 16);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(send.wr_id, 7);
	assert_int_equal(send.opcode, IBV_WC_SEND);
	assert_int_equal(recv.wr_id, 1);
	assert_int_equal(recv.byte_len, 16);
	assert_memory_equal(&x.data[64], "sixteen bytes!!", 16);
	xqp_release(&x);
}

void ibv_wr_complete__batch_in_order(void **state)
{
	struct ibv_wc sends[3], recvs[3];
	struct xqp x;

	xqp_create(&x);
	for (int i = 1; i <= 3; i++)
		post_recv(&x, 10u + (unsigned)i, i);
	ibv_wr_start(x.qpx);
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	for (int i = 1; i <= 3; i++) {
		x.data[i] = (char)('0' + i);
		x.qpx->wr_id = (uint64_t)i;
		ibv_wr_send(x.qpx);
		ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)&x.data[i], 1);
	}
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 3, sends, recvs);
	for (int i = 1; i <= 3; i++) {
		assert_int_equal(sends[i - 1].wr_id, i);
		assert_int_equal(recvs[i - 1].wr_id, 10 + i);
		assert_int_equal(recvs[i - 1].byte_len, 1);
		assert_int_equal(x.data[64 * i], '0' + i);
	}
	xqp_release(&x);
}

void ibv_wr_abort__discards(void **state)
{
	struct ibv_wc send, recv, extra;
	struct xqp x;

	xqp_create(&x);
	memcpy(x.data, "aborted\0kept", 12);
	post_recv(&x, 1, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 1;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x.qpx);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 8);
	ibv_wr_abort(x.qpx);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 2;
	ibv_wr_send(x.qpx);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)&x.data[8], 4);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(send.wr_id, 2);
	assert_int_equal(recv.byte_len, 4);
	assert_memory_equal(&x.data[64], "kept", 4);
	assert_int_equal(ibv_poll_cq(x.q.cq, 1, &extra), 0);
	xqp_release(&x);
}

void ibv_wr_rdma_write__lands(void **state)
{
	struct ibv_wc wc;
	struct xqp x;

	xqp_create(&x);
	memcpy(x.data, "written remotely", 16);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 5;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x.qpx, x.data_mr->rkey, (uintptr_t)&x.data[128]);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 16);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	next_wc(&x, &wc);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	assert_memory_equal(&x.data[128], "written remotely", 16);
	xqp_release(&x);
}

void ibv_wr_set_inline_data__copied_at_set(void **state)
{
	char inl[16];
	struct ibv_wc send, recv;
	struct xqp x;

	xqp_create(&x);
	post_recv(&x, 1, 1);
	memcpy(inl, "copied at set!!", 16);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 3;
	x.qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(x.qpx);
	ibv_wr_set_inline_data(x.qpx, inl, sizeof inl);
	memset(inl, 'x', sizeof inl);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(send.wr_id, 3);
	assert_int_equal(recv.byte_len, 16);
	assert_memory_equal(&x.data[64], "copied at set!!", 16);
	xqp_release(&x);
}

void ibv_wr_set_sge_list__concatenated(void **state)
{
	struct ibv_wc send, recv;
	struct ibv_sge list[2];
	struct xqp x;

	xqp_create(&x);
	memcpy(x.data, "first sixteen---", 16);
	memcpy(&x.data[32], "+eight!!", 8);
	list[0] = (struct ibv_sge){ .addr = (uintptr_t)x.data, .length = 16, .lkey = x.data_mr->lkey };
	list[1] = (struct ibv_sge){ .addr = (uintptr_t)&x.data[32], .length = 8,
				    .lkey = x.data_mr->lkey };
	post_recv(&x, 1, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 4;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x.qpx);
	ibv_wr_set_sge_list(x.qpx, 2, list);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(recv.byte_len, 24);
	assert_memory_equal(&x.data[64], "first sixteen---+eight!!", 24);
	xqp_release(&x);
}

#define IMM_OPS (OPS | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)

void ibv_wr_send_imm__immediate(void **state)
{
	struct ibv_wc send, recv;
	struct xqp x;

	xqp_create_ops(&x, IMM_OPS);
	memcpy(x.data, "with immediate", 14);
	post_recv(&x, 1, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 8;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x.qpx, htobe32(0x12345678));
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 14);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(send.wr_id, 8);
	assert_int_equal(send.opcode, IBV_WC_SEND);
	assert_int_equal(recv.opcode, IBV_WC_RECV);
	assert_true(recv.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh(recv.imm_data), 0x12345678);
	assert_int_equal(recv.byte_len, 14);
	assert_memory_equal(&x.data[64], "with immediate", 14);
	xqp_release(&x);
}

void ibv_wr_rdma_write_imm__consumes_receive(void **state)
{
	struct ibv_wc send, recv;
	struct xqp x;

	xqp_create_ops(&x, IMM_OPS);
	memcpy(x.data, "written, announced", 18);
	post_recv(&x, 2, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 9;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(x.qpx, x.data_mr->rkey, (uintptr_t)&x.data[128], htobe32(0xfeed));
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 18);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(send.wr_id, 9);
	assert_int_equal(send.opcode, IBV_WC_RDMA_WRITE);
	assert_int_equal(recv.wr_id, 2);
	assert_int_equal(recv.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_true(recv.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh(recv.imm_data), 0xfeed);
	assert_int_equal(recv.byte_len, 18);
	assert_memory_equal(&x.data[128], "written, announced", 18);
	xqp_release(&x);
}

#define REMOTE_OPS (OPS | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)

void ibv_wr_rdma_read__lands(void **state)
{
	struct ibv_wc wc;
	struct xqp x;

	xqp_create_ops(&x, REMOTE_OPS);
	memcpy(&x.data[128], "read from remote", 16);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 10;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x.qpx, x.data_mr->rkey, (uintptr_t)&x.data[128]);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 16);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	next_wc(&x, &wc);
	assert_int_equal(wc.wr_id, 10);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc.byte_len, 16);
	assert_memory_equal(x.data, "read from remote", 16);
	xqp_release(&x);
}

/* The 8 bytes an atomic returned, in the byte order the device writes. */
static uint64_t atomic_result(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

void ibv_wr_atomic__fetch_add_and_cmp_swp(void **state)
{
	struct ibv_device_attr attr;
	uint64_t v = 40, got;
	struct ibv_wc wc[3];
	struct xqp x;

	xqp_create_ops(&x, REMOTE_OPS);
	FX_VERBS_OK(ibv_query_device(x.q.ctx, &attr));
	if (attr.atomic_cap == IBV_ATOMIC_NONE) {
		xqp_release(&x);
		RC_SKIP("capability: atomics (atomic_cap IBV_ATOMIC_NONE)");
	}
	memcpy(&x.data[128], &v, sizeof v);
	ibv_wr_start(x.qpx);
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	x.qpx->wr_id = 11;
	ibv_wr_atomic_fetch_add(x.qpx, x.data_mr->rkey, (uintptr_t)&x.data[128], 2);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)&x.data[0], 8);
	x.qpx->wr_id = 12;
	ibv_wr_atomic_cmp_swp(x.qpx, x.data_mr->rkey, (uintptr_t)&x.data[128], 42, 1000);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)&x.data[8], 8);
	x.qpx->wr_id = 13;
	ibv_wr_atomic_cmp_swp(x.qpx, x.data_mr->rkey, (uintptr_t)&x.data[128], 42, 7);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)&x.data[16], 8);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	for (int i = 0; i < 3; i++) {
		next_wc(&x, &wc[i]);
		assert_int_equal(wc[i].wr_id, 11 + i);
		assert_int_equal(wc[i].opcode, i ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD);
	}
	/* Added, swapped (42 matched), not swapped (1000 did not). */
	memcpy(&got, &x.data[128], sizeof got);
	assert_true(got == 1000);
	got = atomic_result(&x.data[0]);
	assert_true(got == 40 || be64toh(got) == 40);
	got = atomic_result(&x.data[8]);
	assert_true(got == 42 || be64toh(got) == 42);
	got = atomic_result(&x.data[16]);
	assert_true(got == 1000 || be64toh(got) == 1000);
	xqp_release(&x);
}

void ibv_wr_set_inline_data_list__concatenated(void **state)
{
	char a[8] = "inline, ", b[9] = "in pieces";
	struct ibv_data_buf bufs[2] = { { .addr = a, .length = sizeof a },
					{ .addr = b, .length = sizeof b } };
	struct ibv_wc send, recv;
	struct xqp x;

	xqp_create(&x);
	post_recv(&x, 1, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 6;
	x.qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(x.qpx);
	ibv_wr_set_inline_data_list(x.qpx, 2, bufs);
	memset(a, 'x', sizeof a);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(recv.byte_len, 17);
	assert_memory_equal(&x.data[64], "inline, in pieces", 17);
	xqp_release(&x);
}

/* A UD QP from ibv_create_qp_ex with send operations: each SEND names its
 * destination with ibv_wr_set_ud_addr (an address handle, the remote QP
 * and Q_Key); the datagram reaches the QP itself behind its 40-byte GRH
 * and the receive names the sender. */
void ibv_wr_set_ud_addr__ud_send(void **state)
{
	struct ibv_qp_init_attr_ex init;
	struct ibv_ah_attr ah_attr;
	struct ibv_wc send, recv;
	struct ibv_ah *ah;
	struct xqp x;

	fx_qp_create(&x.q, FX_DEV_UNDER_TEST, IBV_QPT_UD);
	FX_VERBS_OK(ibv_destroy_qp(x.q.qp));
	init = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_UD,
		.send_cq = x.q.cq,
		.recv_cq = x.q.cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = x.q.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	x.q.qp = ibv_create_qp_ex(x.q.ctx, &init);
	if (!x.q.qp)
		fail_msg("ibv_create_qp_ex(UD, send_ops_flags SEND): %s", strerror(errno));
	x.qpx = ibv_qp_to_qp_ex(x.q.qp);
	assert_non_null(x.qpx);
	memset(x.data, 0, sizeof x.data);
	x.data_mr = ibv_reg_mr(x.q.pd, x.data, sizeof x.data, IBV_ACCESS_LOCAL_WRITE);
	if (!x.data_mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	fx_qp_to(&x.q, IBV_QPS_RTS);
	fx_ah_to_self(x.q.ctx, 64, &ah_attr);
	ah = ibv_create_ah(x.q.pd, &ah_attr);
	if (!ah)
		fail_msg("ibv_create_ah: %s", strerror(errno));
	memcpy(x.data, "datagram", 8);
	post_recv(&x, 1, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_id = 14;
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x.qpx);
	ibv_wr_set_ud_addr(x.qpx, ah, x.q.qp->qp_num, 0x11111111);
	ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 8);
	FX_VERBS_OK(ibv_wr_complete(x.qpx));
	completions(&x, 1, &send, &recv);
	assert_int_equal(send.wr_id, 14);
	assert_int_equal(recv.byte_len, 40 + 8);
	assert_int_equal(recv.src_qp, x.q.qp->qp_num);
	assert_memory_equal(&x.data[64 + 40], "datagram", 8);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	xqp_release(&x);
}

/* The caps the QP was granted, as ibv_query_qp reports them. */
static struct ibv_qp_cap granted(struct xqp *x)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	FX_VERBS_OK(ibv_query_qp(x->q.qp, &attr, IBV_QP_CAP, &init));
	return init.cap;
}

/* One SEND of `len` bytes from data, signaled with wr_id, in a region of
 * its own: it must be the next message on the QP, whatever a failed
 * region before it built. */
static void send_after_failure(struct xqp *x, uint64_t wr_id, uint32_t len)
{
	struct ibv_wc send, recv;

	ibv_wr_start(x->qpx);
	x->qpx->wr_id = wr_id;
	x->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x->qpx);
	ibv_wr_set_sge(x->qpx, x->data_mr->lkey, (uintptr_t)x->data, len);
	FX_VERBS_OK(ibv_wr_complete(x->qpx));
	completions(x, 1, &send, &recv);
	assert_int_equal(send.wr_id, wr_id);
	assert_int_equal(recv.byte_len, len);
}

/* ibv_wr_complete of a region that failed returns want and posts none of
 * it (the man page: "the entire posting will be aborted"). */
static void complete_refused(struct xqp *x, int want, const char *what)
{
	int ret = ibv_wr_complete(x->qpx);

	if (ret != want)
		fail_msg("%s: ibv_wr_complete gave %d (%s), not %d (%s)", what, ret, strerror(ret),
			 want, strerror(want));
}

/* A region of max_send_wr + 1 SENDs, with the queue empty: the builder
 * past the queue's room fails the region, mlx5 with ENOMEM
 * (_common_wqe_init_op: mlx5_wq_overflow), rxe with ENOSPC
 * (check_qp_queue_full); none of the region is posted, and the next
 * region's SEND is the first message the receive takes. */
static void queue_full(enum fx_device_kind kind, int want)
{
	struct ibv_qp_cap cap;
	struct xqp x;

	xqp_create_on(&x, kind, OPS);
	cap = granted(&x);
	if (cap.max_send_wr > 1024) {
		xqp_release(&x);
		fail_msg("asked for 8 send requests, granted %u", cap.max_send_wr);
	}
	post_recv(&x, 1, 1);
	ibv_wr_start(x.qpx);
	x.qpx->wr_flags = IBV_SEND_SIGNALED;
	for (uint32_t i = 0; i <= cap.max_send_wr; i++) {
		x.qpx->wr_id = 100 + i;
		ibv_wr_send(x.qpx);
		ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 1);
	}
	complete_refused(&x, want, "max_send_wr + 1 SENDs in one region");
	send_after_failure(&x, 7, 4);
	xqp_release(&x);
}

void ibv_wr_complete__queue_full_mlx5(void **state) { queue_full(FX_DEV_MLX5, ENOMEM); }
void ibv_wr_complete__queue_full_not_mlx5(void **state) { queue_full(FX_DEV_NOT_MLX5, ENOSPC); }

/* A right SEND, then one whose setter passes the QP's caps: an SGE list
 * of max_send_sge + 1 entries, or inline data (one buffer, then a list)
 * of max_inline_data + 1 bytes. The region fails, mlx5 with ENOMEM
 * (_mlx5_send_wr_set_sge_list, _mlx5_send_wr_set_inline_data), rxe with
 * ENOSPC (wr_set_sge_list, wr_set_inline_data, wr_set_inline_data_list),
 * and the right SEND before it is not posted either. */
static void over_caps(enum fx_device_kind kind, int want, int first, int last)
{
	struct ibv_data_buf halves[2];
	struct ibv_qp_cap cap;
	struct ibv_sge *sges;
	struct xqp x;
	char *inl;

	xqp_create_on(&x, kind, OPS);
	cap = granted(&x);
	sges = calloc(cap.max_send_sge + 1u, sizeof *sges);
	inl = calloc(cap.max_inline_data + 1u, 1);
	assert_non_null(sges);
	assert_non_null(inl);
	for (uint32_t i = 0; i <= cap.max_send_sge; i++)
		sges[i] = (struct ibv_sge){ (uintptr_t)x.data, 1, x.data_mr->lkey };
	halves[0] = (struct ibv_data_buf){ inl, cap.max_inline_data / 2 };
	halves[1] = (struct ibv_data_buf){ inl + halves[0].length,
					   cap.max_inline_data + 1u - halves[0].length };
	post_recv(&x, 1, 1);
	for (int round = first; round <= last; round++) {
		ibv_wr_start(x.qpx);
		x.qpx->wr_id = 10u + (unsigned)round;
		x.qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(x.qpx);
		ibv_wr_set_sge(x.qpx, x.data_mr->lkey, (uintptr_t)x.data, 2);
		ibv_wr_send(x.qpx);
		if (round == 0) {
			ibv_wr_set_sge_list(x.qpx, cap.max_send_sge + 1u, sges);
			complete_refused(&x, want, "max_send_sge + 1 SGEs");
			continue;
		}
		x.qpx->wr_flags |= IBV_SEND_INLINE;
		if (round == 1)
			ibv_wr_set_inline_data(x.qpx, inl, cap.max_inline_data + 1u);
		else
			ibv_wr_set_inline_data_list(x.qpx, 2, halves);
		complete_refused(&x, want, round == 1 ? "inline data of max_inline_data + 1 bytes"
						      : "an inline list of max_inline_data + 1 bytes");
	}
	send_after_failure(&x, 7, 4);
	free(inl);
	free(sges);
	xqp_release(&x);
}

void ibv_wr_complete__over_caps_mlx5(void **state) { over_caps(FX_DEV_MLX5, ENOMEM, 0, 1); }
void ibv_wr_complete__over_caps_not_mlx5(void **state) { over_caps(FX_DEV_NOT_MLX5, ENOSPC, 0, 1); }

/* The inline list apart: rdma-core before 64 never adds up its buffers on
 * rxe (QP_EX_INLINE_LIST_OVER_CAPS). */
void ibv_wr_complete__inline_list_over_caps_mlx5(void **state) { over_caps(FX_DEV_MLX5, ENOMEM, 2, 2); }
void ibv_wr_complete__inline_list_over_caps_not_mlx5(void **state) { over_caps(FX_DEV_NOT_MLX5, ENOSPC, 2, 2); }
