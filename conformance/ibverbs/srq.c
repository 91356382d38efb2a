/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_create_srq(), ibv_modify_srq(), ibv_query_srq(),
 * ibv_post_srq_recv(), ibv_destroy_srq(): limits and granted sizes,
 * resizing, the limit event, QPs on an SRQ (ibv_post_recv refused,
 * destroy refused, the last-WQE event), and srq_pingpong's shape: two
 * sides, each with one SRQ under several RC QPs, in two threads. */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "qp.h"

#define EVENT_MS 2000 /* an asynchronous event that must come */
#define QUIET_MS 100  /* one that must not, after a completion was seen */

/* A device under test with a PD: what the create tests need. */
struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr; /* over buf, local write */
	struct ibv_device_attr attr;
	char buf[64];
};

static void dev_open(struct dev *d, struct ibv_context *ctx)
{
	memset(d, 0, sizeof *d);
	d->ctx = ctx;
	FX_VERBS_OK(ibv_query_device(ctx, &d->attr));
	d->pd = ibv_alloc_pd(ctx);
	if (!d->pd)
		fail_msg("ibv_alloc_pd: %s", strerror(errno));
	d->mr = ibv_reg_mr(d->pd, d->buf, sizeof d->buf, IBV_ACCESS_LOCAL_WRITE);
	if (!d->mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
}

static void dev_close(struct dev *d)
{
	FX_VERBS_OK(ibv_dereg_mr(d->mr));
	FX_VERBS_OK(ibv_dealloc_pd(d->pd));
	FX_VERBS_OK(ibv_close_device(d->ctx));
}

static struct ibv_srq *srq_create(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge,
				  uint32_t limit, struct ibv_srq_init_attr *init)
{
	struct ibv_srq_init_attr local;
	struct ibv_srq *srq;

	if (!init)
		init = &local;
	memset(init, 0, sizeof *init);
	init->attr.max_wr = max_wr;
	init->attr.max_sge = max_sge;
	init->attr.srq_limit = limit;
	srq = ibv_create_srq(pd, init);
	if (!srq)
		fail_msg("ibv_create_srq(max_wr %u, max_sge %u, srq_limit %u): %s", max_wr, max_sge,
			 limit, strerror(errno));
	return srq;
}

static uint32_t srq_size(struct ibv_srq *srq)
{
	struct ibv_srq_attr attr;

	FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
	return attr.max_wr;
}

/* n receives into [buf, buf + len), wr_ids first, first + 1, ... */
static void post_srq_recvs(struct ibv_srq *srq, struct ibv_mr *mr, void *buf, uint32_t len, int n,
			   uint64_t first)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };

	for (int i = 0; i < n; i++) {
		struct ibv_recv_wr wr = { .wr_id = first + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		FX_VERBS_OK(ibv_post_srq_recv(srq, &wr, &bad));
	}
}

/* ---------------------------------------------------------------- creation */

void ibv_create_srq__over_max_wr(void **state)
{
	struct ibv_srq_init_attr init = { 0 };
	struct dev d;

	dev_open(&d, fx_open_device(FX_DEV_UNDER_TEST));
	init.attr.max_wr = (uint32_t)d.attr.max_srq_wr + 1;
	init.attr.max_sge = 1;
	errno = 0;
	assert_null(ibv_create_srq(d.pd, &init));
	RC_ASSERT_ERRNO("ibv_create_srq", errno, EINVAL);
	dev_close(&d);
}

void ibv_create_srq__over_max_sge(void **state)
{
	struct ibv_srq_init_attr init = { 0 };
	struct dev d;

	dev_open(&d, fx_open_device(FX_DEV_UNDER_TEST));
	init.attr.max_wr = 10;
	init.attr.max_sge = (uint32_t)d.attr.max_srq_sge + 1;
	errno = 0;
	assert_null(ibv_create_srq(d.pd, &init));
	RC_ASSERT_ERRNO("ibv_create_srq", errno, EINVAL);
	dev_close(&d);
}

void ibv_create_srq__granted_at_least_requested(void **state)
{
	struct ibv_srq_init_attr init;
	struct ibv_srq_attr attr;
	struct ibv_srq *srq;
	struct dev d;

	dev_open(&d, fx_open_device(FX_DEV_UNDER_TEST));
	srq = srq_create(d.pd, 10, 1, 0, &init);
	RC_ASSERT_IN_RANGE(init.attr.max_wr, 10, d.attr.max_srq_wr * 2ull);
	RC_ASSERT_IN_RANGE(init.attr.max_sge, 1, d.attr.max_srq_sge);
	FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
	RC_ASSERT_IN_RANGE(attr.max_wr, 10, d.attr.max_srq_wr * 2ull);
	RC_ASSERT_IN_RANGE(attr.max_sge, 1, d.attr.max_srq_sge);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}

void ibv_create_srq__no_sge(void **state)
{
	struct ibv_srq_init_attr init;
	struct ibv_srq_attr attr;
	struct ibv_srq *srq;
	struct dev d;

	dev_open(&d, fx_open_device(FX_DEV_UNDER_TEST));
	srq = srq_create(d.pd, 10, 0, 0, &init);
	RC_ASSERT_IN_RANGE(init.attr.max_sge, 1, d.attr.max_srq_sge);
	FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
	RC_ASSERT_IN_RANGE(attr.max_sge, 1, d.attr.max_srq_sge);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}

void ibv_create_srq__limit_not_checked(void **state)
{
	struct dev d;

	dev_open(&d, fx_open_device(FX_DEV_UNDER_TEST));
	FX_VERBS_OK(ibv_destroy_srq(srq_create(d.pd, 10, 1, 11, NULL)));
	dev_close(&d);
}

/* ---------------------------------------------------------------- resizing and the limit */

void ibv_modify_srq__resize(void **state)
{
	struct ibv_srq_attr attr = { 0 };
	struct ibv_srq *srq;
	struct dev d;

	dev_open(&d, fx_open_device_cap(IBV_DEVICE_SRQ_RESIZE, true, "srq-resize"));
	srq = srq_create(d.pd, 10, 1, 0, NULL);
	attr.max_wr = 20;
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR));
	RC_ASSERT_IN_RANGE(srq_size(srq), 20, d.attr.max_srq_wr * 2ull);
	attr.max_wr = 5;
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR));
	RC_ASSERT_IN_RANGE(srq_size(srq), 5, d.attr.max_srq_wr * 2ull);
	post_srq_recvs(srq, d.mr, d.buf, sizeof d.buf, 4, 0);
	attr.max_wr = 64;
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR));
	RC_ASSERT_IN_RANGE(srq_size(srq), 64, d.attr.max_srq_wr * 2ull);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}

static void resize_refused(struct ibv_srq *srq, uint32_t max_wr)
{
	struct ibv_srq_attr attr = { .max_wr = max_wr };
	uint32_t before = srq_size(srq);
	int ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);

	if (ret != EINVAL)
		fail_msg("ibv_modify_srq(IBV_SRQ_MAX_WR %u) returned %d, not EINVAL", max_wr, ret);
	assert_int_equal(srq_size(srq), before);
}

void ibv_modify_srq__resize_invalid(void **state)
{
	struct ibv_srq *srq;
	struct dev d;

	dev_open(&d, fx_open_device_cap(IBV_DEVICE_SRQ_RESIZE, true, "srq-resize"));
	srq = srq_create(d.pd, 10, 1, 0, NULL);
	resize_refused(srq, 0);
	resize_refused(srq, (uint32_t)d.attr.max_srq_wr + 1);
	post_srq_recvs(srq, d.mr, d.buf, sizeof d.buf, 8, 0);
	resize_refused(srq, 4);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}

void ibv_modify_srq__resize_unsupported(void **state)
{
	struct ibv_srq *srq;
	struct dev d;

	dev_open(&d, fx_open_device_cap(IBV_DEVICE_SRQ_RESIZE, false, "no-srq-resize"));
	srq = srq_create(d.pd, 10, 1, 0, NULL);
	resize_refused(srq, 20);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}

void ibv_modify_srq__limit_over_size(void **state)
{
	struct ibv_srq_attr attr = { .srq_limit = 100000 };
	struct ibv_srq *srq;
	struct dev d;

	dev_open(&d, fx_open_device(FX_DEV_UNDER_TEST));
	srq = srq_create(d.pd, 10, 1, 0, NULL);
	RC_ASSERT_ERRNO("ibv_modify_srq", ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), EINVAL);
	FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
	assert_int_equal(attr.srq_limit, 0);
	attr.srq_limit = 0;
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT));
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}

/* ---------------------------------------------------------------- QPs on an SRQ */

/* fx_qp_create's QP swapped for an RC QP whose receives come from an SRQ
 * of max_wr entries (*srq), which fx_qp_to then connects to itself. */
static void qp_on_srq(struct fx_qp *q, uint32_t max_wr, struct ibv_srq **srq)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};

	fx_qp_create(q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	init.send_cq = init.recv_cq = q->cq;
	*srq = init.srq = srq_create(q->pd, max_wr, 1, 0, NULL);
	FX_VERBS_OK(ibv_destroy_qp(q->qp));
	q->qp = ibv_create_qp(q->pd, &init);
	if (!q->qp)
		fail_msg("ibv_create_qp(RC on an SRQ): %s", strerror(errno));
}

static void release_with_srq(struct fx_qp *q, struct ibv_srq *srq)
{
	FX_VERBS_OK(ibv_destroy_qp(q->qp));
	q->qp = NULL;
	FX_VERBS_OK(ibv_destroy_srq(srq));
	fx_qp_release(q);
}

/* One 8-byte SEND from the QP to itself: one receive of its SRQ taken. */
static void consume_one(struct fx_qp *q)
{
	struct ibv_sge sge = { .addr = (uintptr_t)q->buf, .length = 8, .lkey = q->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	bool sent = false, received = false;
	struct ibv_wc wc;

	FX_VERBS_OK(ibv_post_send(q->qp, &wr, &bad));
	for (int i = 0; i < 2; i++) {
		fx_poll_one(q->cq, &wc);
		if (wc.status != IBV_WC_SUCCESS)
			fail_msg("completion of wr_id 0x%llx: %s", (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status));
		sent |= wc.opcode == IBV_WC_SEND;
		received |= wc.opcode == IBV_WC_RECV;
	}
	assert_true(sent && received);
}

void ibv_modify_srq__limit_event(void **state)
{
	struct ibv_srq_attr attr = { .srq_limit = 3 };
	struct ibv_async_event ev;
	struct ibv_srq *srq;
	struct fx_qp q;

	qp_on_srq(&q, 10, &srq);
	fx_qp_to(&q, IBV_QPS_RTS);
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT));
	FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
	assert_int_equal(attr.srq_limit, 3);
	post_srq_recvs(srq, q.mr, q.buf + 32, 32, 5, 0);
	for (int consumed = 1; consumed <= 5; consumed++) {
		consume_one(&q);
		if (consumed != 3) {
			if (!fx_async_quiet(q.ctx, QUIET_MS))
				fail_msg("an asynchronous event with %d receives left", 5 - consumed);
			continue;
		}
		fx_async_expect(q.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, EVENT_MS, &ev);
		assert_ptr_equal(ev.element.srq, srq);
		ibv_ack_async_event(&ev);
		FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
		assert_int_equal(attr.srq_limit, 0);
	}
	release_with_srq(&q, srq);
}

static void ack_async_event(void *event)
{
	ibv_ack_async_event(event);
}

/* An SRQ whose limit event was read and not yet acked: ibv_destroy_srq
 * returns only once another thread acks it, which it does once the
 * destroying thread blocks
 * (libibverbs cmd_srq.c ibv_cmd_destroy_srq waits for events_completed). */
void ibv_ack_async_event__destroy_waits(void **state)
{
	int err;
	bool acked;
	struct ibv_srq_attr attr = { .srq_limit = 3 };
	struct ibv_async_event ev;
	struct fx_once_blocked acker;
	struct ibv_srq *srq;
	struct fx_qp q;

	qp_on_srq(&q, 10, &srq);
	fx_qp_to(&q, IBV_QPS_RTS);
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT));
	post_srq_recvs(srq, q.mr, q.buf + 32, 32, 5, 0);
	for (int i = 0; i < 3; i++)
		consume_one(&q);
	fx_async_expect(q.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, EVENT_MS, &ev);
	FX_VERBS_OK(ibv_destroy_qp(q.qp));
	q.qp = NULL;
	fx_once_blocked(&acker, ack_async_event, &ev);
	err = ibv_destroy_srq(srq);
	acked = fx_once_blocked_done(&acker);
	/* The acker goes before any verdict: it holds ev, on this stack. */
	fx_once_blocked_join(&acker);
	if (err)
		fail_msg("ibv_destroy_srq(srq): %s", strerror(err));
	if (!acked)
		fail_msg("ibv_destroy_srq returned before the event was acked");
	fx_qp_release(&q);
}

/* Armed while already below the limit: nothing drops below it, so no
 * event (measured on rxe; mlx5 is not measured, hence a non-mlx5 device). */
void ibv_modify_srq__armed_below_limit(void **state)
{
	struct ibv_srq_attr attr = { .srq_limit = 3 };
	struct ibv_srq *srq;
	struct dev d;

	dev_open(&d, fx_open_device(FX_DEV_NOT_MLX5));
	srq = srq_create(d.pd, 10, 1, 0, NULL);
	post_srq_recvs(srq, d.mr, d.buf, sizeof d.buf, 2, 0);
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT));
	assert_true(fx_async_quiet(d.ctx, 300));
	post_srq_recvs(srq, d.mr, d.buf, sizeof d.buf, 1, 2);
	assert_true(fx_async_quiet(d.ctx, 300));
	FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
	assert_int_equal(attr.srq_limit, 3);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}

void ibv_post_recv__qp_with_srq(void **state)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	struct ibv_srq *srq;
	struct fx_qp q;
	int ret;

	qp_on_srq(&q, 10, &srq);
	fx_qp_to(&q, IBV_QPS_INIT);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	ret = ibv_post_recv(q.qp, &wr, &bad);
	if (ret == 0)
		fail_msg("ibv_post_recv on a QP with an SRQ returned 0");
	print_message("ibv_post_recv on a QP with an SRQ: %d (%s)\n", ret, strerror(ret));
	release_with_srq(&q, srq);
}

void ibv_destroy_srq__in_use(void **state)
{
	struct ibv_srq *srq;
	struct fx_qp q;

	qp_on_srq(&q, 10, &srq);
	RC_ASSERT_ERRNO("ibv_destroy_srq", ibv_destroy_srq(srq), EBUSY);
	release_with_srq(&q, srq);
}

void ibv_get_async_event__last_wqe_reached(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_srq *srq;
	struct fx_qp q;

	qp_on_srq(&q, 10, &srq);
	fx_qp_to(&q, IBV_QPS_RTS);
	post_srq_recvs(srq, q.mr, q.buf + 32, 32, 2, 0);
	consume_one(&q);
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, IBV_QP_STATE));
	fx_async_expect(q.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, EVENT_MS, &ev);
	assert_ptr_equal(ev.element.qp, q.qp);
	ibv_ack_async_event(&ev);
	release_with_srq(&q, srq);
}

/* ---------------------------------------------------------------- srq_pingpong */

/* Like libibverbs/examples/srq_pingpong.c: each side has one CQ and one
 * SRQ under PP_QPS RC QPs; QP i of the client is connected to QP i of
 * the server, with the QP number, PSN and GID each side would send over
 * TCP handed over in memory. The client sends on every QP; a side sends
 * on a QP again once its last send and a receive there have completed,
 * PP_ROUNDS times per pair. A message carries its pair and round, so a
 * receive completion's qp_num can be checked against the sender. */
enum { PP_QPS = 4, PP_ROUNDS = 25, PP_RX_DEPTH = 16, PP_MSG = 64, PP_WAIT_S = 10 };
enum { PP_RECV = 1, PP_SEND = 2 }; /* wr_id >> 32, and the pending bits */

struct pp_dest {
	uint32_t qpn, psn;
	union ibv_gid gid;
};

struct pp_msg {
	uint32_t pair, round;
};

struct pp_side {
	const char *name;
	bool active;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp[PP_QPS];
	struct ibv_ah_attr path; /* to port 1 (fx_ah_to_self): the peer is on it */
	struct pp_dest me[PP_QPS];
	const struct pp_dest *peer;
	pthread_barrier_t *connected;
	unsigned pending[PP_QPS], sent[PP_QPS], received[PP_QPS];
	char buf[(PP_RX_DEPTH + PP_QPS) * PP_MSG]; /* receive slots, then a send slot per QP */
	char error[256];
};

static bool pp_fail(struct pp_side *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool pp_fail(struct pp_side *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof s->error, fmt, ap);
	va_end(ap);
	return false;
}

static int pp_post_recv(struct pp_side *s, uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&s->buf[slot * PP_MSG], .length = PP_MSG,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)PP_RECV << 32 | slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(s->srq, &wr, &bad);
}

/* Resources, QPs in INIT, the SRQ full: what the program does before
 * exchanging addresses. In the test's thread, so failures fail it. */
static void pp_init(struct pp_side *s, const char *name, bool active)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	memset(s, 0, sizeof *s);
	s->name = name;
	s->active = active;
	s->ctx = fx_open_device(FX_DEV_UNDER_TEST);
	fx_ah_to_self(s->ctx, 1, &s->path);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		fail_msg("%s: ibv_alloc_pd: %s", name, strerror(errno));
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof s->buf, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		fail_msg("%s: ibv_reg_mr: %s", name, strerror(errno));
	s->cq = ibv_create_cq(s->ctx, PP_RX_DEPTH + PP_QPS, NULL, NULL, 0);
	if (!s->cq)
		fail_msg("%s: ibv_create_cq: %s", name, strerror(errno));
	s->srq = srq_create(s->pd, PP_RX_DEPTH, 1, 0, NULL);
	for (int i = 0; i < PP_QPS; i++) {
		struct ibv_qp_init_attr init = {
			.send_cq = s->cq, .recv_cq = s->cq, .srq = s->srq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		};

		s->qp[i] = ibv_create_qp(s->pd, &init);
		if (!s->qp[i])
			fail_msg("%s: ibv_create_qp(RC on the SRQ) #%d: %s", name, i, strerror(errno));
		FX_VERBS_OK(ibv_modify_qp(s->qp[i], &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
		s->me[i].qpn = s->qp[i]->qp_num;
		s->me[i].psn = (s->qp[i]->qp_num * 2654435761u + (unsigned)i) & 0xffffff;
		s->me[i].gid = s->path.grh.dgid;
	}
	for (uint32_t slot = 0; slot < PP_RX_DEPTH; slot++)
		FX_VERBS_OK(pp_post_recv(s, slot));
}

static void pp_release(struct pp_side *s)
{
	for (int i = 0; i < PP_QPS; i++)
		FX_VERBS_OK(ibv_destroy_qp(s->qp[i]));
	FX_VERBS_OK(ibv_destroy_srq(s->srq));
	FX_VERBS_OK(ibv_destroy_cq(s->cq));
	FX_VERBS_OK(ibv_dereg_mr(s->mr));
	FX_VERBS_OK(ibv_dealloc_pd(s->pd));
	FX_VERBS_OK(ibv_close_device(s->ctx));
}

/* pp_connect_ctx: RTR towards the peer's QP, then RTS. */
static bool pp_connect(struct pp_side *s)
{
	for (int i = 0; i < PP_QPS; i++) {
		struct ibv_qp_attr attr = {
			.qp_state = IBV_QPS_RTR,
			.path_mtu = IBV_MTU_1024,
			.dest_qp_num = s->peer[i].qpn,
			.rq_psn = s->peer[i].psn,
			.max_dest_rd_atomic = 1,
			.min_rnr_timer = 12,
			.ah_attr = s->path,
		};
		int ret;

		if (attr.ah_attr.is_global)
			attr.ah_attr.grh.dgid = s->peer[i].gid;
		ret = ibv_modify_qp(s->qp[i], &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
		if (ret)
			return pp_fail(s, "ibv_modify_qp(QP %d to RTR): %s", i, strerror(ret));
		attr.qp_state = IBV_QPS_RTS;
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.sq_psn = s->me[i].psn;
		attr.max_rd_atomic = 1;
		ret = ibv_modify_qp(s->qp[i], &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
		if (ret)
			return pp_fail(s, "ibv_modify_qp(QP %d to RTS): %s", i, strerror(ret));
	}
	return true;
}

static bool pp_send(struct pp_side *s, int i)
{
	char *slot = &s->buf[(PP_RX_DEPTH + i) * PP_MSG];
	struct pp_msg msg = { .pair = (uint32_t)i, .round = s->sent[i] };
	struct ibv_sge sge = { .addr = (uintptr_t)slot, .length = sizeof msg, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)PP_SEND << 32 | (uint32_t)i, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int ret;

	memcpy(slot, &msg, sizeof msg);
	ret = ibv_post_send(s->qp[i], &wr, &bad);
	if (ret)
		return pp_fail(s, "ibv_post_send(QP %d, round %u): %s", i, s->sent[i], strerror(ret));
	s->sent[i]++;
	s->pending[i] = PP_SEND | PP_RECV;
	return true;
}

static int pp_find(const struct pp_side *s, uint32_t qpn)
{
	for (int i = 0; i < PP_QPS; i++)
		if (s->qp[i]->qp_num == qpn)
			return i;
	return -1;
}

/* One completion: the QP it names must be this side's, and a received
 * message must come from the sender paired with that QP, in order. */
static bool pp_complete(struct pp_side *s, const struct ibv_wc *wc, unsigned *scnt, unsigned *rcnt)
{
	unsigned kind = (unsigned)(wc->wr_id >> 32);
	int i = pp_find(s, wc->qp_num);

	if (wc->status != IBV_WC_SUCCESS)
		return pp_fail(s, "wr_id 0x%llx completed with %s", (unsigned long long)wc->wr_id,
			       ibv_wc_status_str(wc->status));
	if (i < 0)
		return pp_fail(s, "a completion names QP 0x%x, none of this side's", wc->qp_num);
	if (kind == PP_SEND) {
		++*scnt;
	} else if (kind == PP_RECV) {
		uint32_t slot = (uint32_t)wc->wr_id;
		struct pp_msg msg;
		int ret;

		memcpy(&msg, &s->buf[slot * PP_MSG], sizeof msg);
		if (wc->byte_len != sizeof msg || msg.pair != (uint32_t)i || msg.round != s->received[i])
			return pp_fail(s, "QP %d (0x%x) received %u bytes: pair %u round %u, expected pair %d round %u",
				       i, wc->qp_num, wc->byte_len, msg.pair, msg.round, i, s->received[i]);
		s->received[i]++;
		++*rcnt;
		ret = pp_post_recv(s, slot);
		if (ret)
			return pp_fail(s, "ibv_post_srq_recv: %s", strerror(ret));
	} else {
		return pp_fail(s, "a completion for unknown wr_id 0x%llx", (unsigned long long)wc->wr_id);
	}
	s->pending[i] &= ~kind;
	if (!s->pending[i] && s->sent[i] < PP_ROUNDS)
		return pp_send(s, i);
	return true;
}

static bool pp_loop(struct pp_side *s)
{
	const unsigned total = PP_QPS * PP_ROUNDS;
	unsigned scnt = 0, rcnt = 0;
	time_t deadline = time(NULL) + PP_WAIT_S;

	for (int i = 0; i < PP_QPS; i++) {
		s->pending[i] = PP_RECV;
		if (s->active && !pp_send(s, i))
			return false;
	}
	while (scnt < total || rcnt < total) {
		struct ibv_wc wc[8];
		int n = ibv_poll_cq(s->cq, 8, wc);

		if (n < 0)
			return pp_fail(s, "ibv_poll_cq: %d", n);
		if (n == 0 && time(NULL) > deadline)
			return pp_fail(s, "after %d s, %u of %u sends and %u of %u receives completed",
				       PP_WAIT_S, scnt, total, rcnt, total);
		if (n == 0)
			sched_yield();
		for (int k = 0; k < n; k++)
			if (!pp_complete(s, &wc[k], &scnt, &rcnt))
				return false;
	}
	return true;
}

static void *pp_run(void *arg)
{
	struct pp_side *s = arg;
	bool connected = pp_connect(s);

	/* The client sends once both sides are connected, as the program's
	 * address exchange orders it; wait here even after a failure. */
	pthread_barrier_wait(s->connected);
	if (connected)
		pp_loop(s);
	return NULL;
}

void srq_pingpong__two_threads(void **state)
{
	static struct pp_side server, client; /* large: not on the stack */
	pthread_barrier_t connected;
	pthread_t thread;

	pp_init(&server, "server", false);
	pp_init(&client, "client", true);
	server.peer = client.me;
	client.peer = server.me;
	assert_int_equal(pthread_barrier_init(&connected, NULL, 2), 0);
	server.connected = client.connected = &connected;
	assert_int_equal(pthread_create(&thread, NULL, pp_run, &server), 0);
	pp_run(&client);
	pthread_join(thread, NULL);
	pthread_barrier_destroy(&connected);
	if (server.error[0] || client.error[0])
		fail_msg("%s%s%s%s%s", server.error[0] ? "server: " : "", server.error,
			 server.error[0] && client.error[0] ? "; " : "",
			 client.error[0] ? "client: " : "", client.error);
	for (int i = 0; i < PP_QPS; i++) {
		assert_int_equal(client.received[i], PP_ROUNDS);
		assert_int_equal(server.received[i], PP_ROUNDS);
	}
	pp_release(&server);
	pp_release(&client);
}

/* ---------------------------------------------------------------- posting */

/* A chain one longer than the SRQ holds: the receives that fit are posted,
 * the one that does not fails the call with ENOMEM and is *bad_wr (rxe's
 * rxe_post_srq_recv, mlx5's mlx5_post_srq_recv); a receive with more
 * scatter entries than max_sge is EINVAL, itself *bad_wr. */
void ibv_post_srq_recv__full_and_too_many_sge(void **state)
{
	struct ibv_srq_init_attr init;
	struct ibv_recv_wr *wrs, *bad;
	struct ibv_sge sge[3];
	struct ibv_srq *srq;
	uint32_t size;
	struct dev d;
	int ret;

	dev_open(&d, fx_open_device(FX_DEV_UNDER_TEST));
	srq = srq_create(d.pd, 7, 1, 0, &init);
	size = srq_size(srq);
	for (int i = 0; i < 3; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)d.buf + 16 * i, 16, d.mr->lkey };
	/* Too many scatter entries, into an empty queue. */
	{
		struct ibv_recv_wr wr = { .wr_id = 99, .sg_list = sge, .num_sge = 3 };

		bad = NULL;
		assert_int_equal(ibv_post_srq_recv(srq, &wr, &bad), EINVAL);
		assert_ptr_equal(bad, &wr);
	}
	wrs = calloc(size + 1, sizeof *wrs);
	assert_non_null(wrs);
	for (uint32_t i = 0; i <= size; i++)
		wrs[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = sge, .num_sge = 1,
					       .next = i < size ? &wrs[i + 1] : NULL };
	bad = NULL;
	ret = ibv_post_srq_recv(srq, wrs, &bad);
	assert_int_equal(ret, ENOMEM);
	assert_ptr_equal(bad, &wrs[size]);
	/* The ones before it were posted: still full. */
	wrs[size].next = NULL;
	bad = NULL;
	assert_int_equal(ibv_post_srq_recv(srq, &wrs[size], &bad), ENOMEM);
	assert_ptr_equal(bad, &wrs[size]);
	free(wrs);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	dev_close(&d);
}
