/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_post_send(): the work requests a provider refuses at
 * the call, before the device sees them, each with its errno and bad_wr,
 * and the queue left able to take the next. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "fixtures.h"
#include "link.h"
#include "qp.h"

/* An RC QP of a device of `kind` connected to itself, in RTS, with a CQ
 * roomy enough for every request it may flush; its granted caps in *cap. */
static void self_rts(struct fx_qp *q, enum fx_device_kind kind, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr;

	fx_qp_create(q, kind, IBV_QPT_RC);
	FX_VERBS_OK(ibv_destroy_qp(q->qp));
	FX_VERBS_OK(ibv_destroy_cq(q->cq));
	q->cq = ibv_create_cq(q->ctx, 256, NULL, NULL, 0);
	if (!q->cq)
		fail_msg("ibv_create_cq: %s", strerror(errno));
	init.send_cq = init.recv_cq = q->cq;
	q->qp = ibv_create_qp(q->pd, &init);
	if (!q->qp)
		fail_msg("ibv_create_qp: %s", strerror(errno));
	fx_qp_to(q, IBV_QPS_RTS);
	FX_VERBS_OK(ibv_query_qp(q->qp, &attr, IBV_QP_CAP, &init));
	*cap = init.cap;
}

/* ibv_post_send refuses wr: it returns want, names wr in bad_wr. */
static void post_refused(struct ibv_qp *qp, struct ibv_send_wr *wr, int want, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int ret = ibv_post_send(qp, wr, &bad);

	if (ret != want)
		fail_msg("%s: ibv_post_send gave %d (%s), not %s", what, ret, strerror(ret),
			 strerror(want));
	RC_ASSERT_ERRNO("ibv_post_send", ret, want);
	assert_ptr_equal(bad, wr);
}

/* The QP to ERR and every completion it flushed polled: n of them. */
static int drain(struct fx_qp *q)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[16];
	int n = 0, got;
	uint64_t start = 0;

	FX_VERBS_OK(ibv_modify_qp(q->qp, &attr, IBV_QP_STATE));
	do {
		got = ibv_poll_cq(q->cq, 16, wc);
		assert_true(got >= 0);
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				fail_msg("completion %d: %s, not flushed", n + i, ibv_wc_status_str(wc[i].status));
		n += got;
	} while (got || fx_pause(&start, 200));
	return n;
}

/* The send queue holds max_send_wr requests, as ibv_query_qp reports it:
 * with the first SEND retried for ever (no receive posted, rnr_retry 7),
 * none completes, the queue fills, and the next request is ENOMEM on
 * both providers (mlx5_wq_overflow, rxe's queue_full). Moved to ERR, the
 * QP flushes each one it took. */
void ibv_post_send__queue_full(void **state)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_cap cap;
	struct fx_qp q;

	self_rts(&q, FX_DEV_UNDER_TEST, &cap);
	sge = (struct ibv_sge){ (uintptr_t)q.buf, 8, q.mr->lkey };
	if (cap.max_send_wr > 255) {
		fx_qp_release(&q);
		fail_msg("asked for 4 send requests, granted %u", cap.max_send_wr);
	}
	for (uint32_t i = 0; i < cap.max_send_wr; i++) {
		wr.wr_id = i;
		FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	}
	wr.wr_id = cap.max_send_wr;
	post_refused(q.qp, &wr, ENOMEM, "a request past max_send_wr");
	assert_int_equal(drain(&q), cap.max_send_wr);
	fx_qp_release(&q);
}

/* A request gathering from more buffers than max_send_sge, and an inline
 * SEND longer than max_inline_data: mlx5 refuses both with ENOMEM
 * (_mlx5_post_send, set_data_inl_seg), rxe with EINVAL
 * (validate_send_wr). The queue takes a right request after each. */
static void over_caps(enum fx_device_kind kind, int want)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge *sges, one;
	struct ibv_qp_cap cap;
	struct fx_qp q;
	char *data;

	self_rts(&q, kind, &cap);
	sges = calloc(cap.max_send_sge + 1u, sizeof *sges);
	data = calloc(cap.max_inline_data + 1u, 1);
	assert_non_null(sges);
	assert_non_null(data);
	for (uint32_t i = 0; i <= cap.max_send_sge; i++)
		sges[i] = (struct ibv_sge){ (uintptr_t)q.buf, 1, q.mr->lkey };
	wr.sg_list = sges;
	wr.num_sge = (int)cap.max_send_sge + 1;
	post_refused(q.qp, &wr, want, "one SGE past max_send_sge");

	one = (struct ibv_sge){ (uintptr_t)data, cap.max_inline_data + 1u, 0 };
	wr.sg_list = &one;
	wr.num_sge = 1;
	wr.send_flags |= IBV_SEND_INLINE;
	post_refused(q.qp, &wr, want, "inline data one byte past max_inline_data");

	/* Nothing of either reached the queue: the next right request is the
	 * only one flushed. */
	wr.sg_list = sges;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	assert_int_equal(drain(&q), 1);
	free(data);
	free(sges);
	fx_qp_release(&q);
}

void ibv_post_send__over_caps_mlx5(void **state) { over_caps(FX_DEV_MLX5, ENOMEM); }
void ibv_post_send__over_caps_not_mlx5(void **state) { over_caps(FX_DEV_NOT_MLX5, EINVAL); }

/* rxe's validate_send_wr: an atomic's remote address 8-byte aligned and
 * its buffer at least 8 bytes, else EINVAL at the call. (mlx5's provider
 * does not look; its device fails the request.) */
void ibv_post_send__atomic_misaligned_not_mlx5(void **state)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_qp_cap cap;
	struct fx_qp q;

	self_rts(&q, FX_DEV_NOT_MLX5, &cap);
	sge = (struct ibv_sge){ (uintptr_t)q.buf, 8, q.mr->lkey };
	wr.wr.atomic.remote_addr = (uintptr_t)q.buf + 4;
	wr.wr.atomic.rkey = q.mr->rkey;
	post_refused(q.qp, &wr, EINVAL, "an atomic at a remote address not 8-byte aligned");
	wr.wr.atomic.remote_addr = (uintptr_t)q.buf;
	sge.length = 4;
	post_refused(q.qp, &wr, EINVAL, "an atomic into 4 bytes");
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	post_refused(q.qp, &wr, EINVAL, "a compare-and-swap into 4 bytes");
	assert_int_equal(drain(&q), 0);
	fx_qp_release(&q);
}
