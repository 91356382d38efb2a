/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the calls a program makes around the heart of a connection,
 * each with its documented result: the string and rate conversions, the
 * device list, completion channels and their events, memory registration,
 * ibv_query_device, and librdmacm's rdma_event_str, rdma_listen,
 * rdma_destroy_qp, rdma_establish and rdma_ack_cm_event. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <rdma/rdma_verbs.h>

#include "link.h"
#include "qp.h"

/* ---------------------------------------------------------------- strings */

void ibv_wc_status_str__names(void **state)
{
	assert_string_equal(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	assert_string_equal(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR), "RNR retry counter exceeded");
	assert_string_equal(ibv_wc_status_str((enum ibv_wc_status)1000), "unknown");
}

void ibv_event_type_str__names(void **state)
{
	assert_string_equal(ibv_event_type_str(IBV_EVENT_CQ_ERR), "CQ error");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_PORT_ACTIVE), "port active");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_DEVICE_FATAL), "local catastrophic error");
	assert_string_equal(ibv_event_type_str((enum ibv_event_type)1000), "unknown");
}

void ibv_node_type_str__names(void **state)
{
	assert_string_equal(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	assert_string_equal(ibv_node_type_str(IBV_NODE_RNIC), "iWARP NIC");
	assert_string_equal(ibv_node_type_str((enum ibv_node_type)1000), "unknown");
}

void ibv_port_state_str__names(void **state)
{
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
	assert_string_equal(ibv_port_state_str(IBV_PORT_DOWN), "down");
	assert_string_equal(ibv_port_state_str((enum ibv_port_state)1000), "unknown");
}

/* rdma-core 49 and later (Debian 12's 44 has none): looked
 * up at run time, and skipped where the library lacks it. */
void ibv_wr_opcode_str__names(void **state)
{
	const char *(*str)(enum ibv_wr_opcode) =
		(const char *(*)(enum ibv_wr_opcode))dlsym(RTLD_DEFAULT, "ibv_wr_opcode_str");

	if (!str)
		RC_SKIP("libibverbs without ibv_wr_opcode_str (rdma-core < 49)");
	assert_string_equal(str(IBV_WR_SEND), "send");
	assert_string_equal(str(IBV_WR_RDMA_READ), "rdma-read");
	assert_string_equal(str(IBV_WR_ATOMIC_FETCH_AND_ADD), "atomic-fetch-and-add");
	assert_string_equal(str((enum ibv_wr_opcode)1000), "unknown");
}

void rdma_event_str__names(void **state)
{
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED");
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_DISCONNECTED), "RDMA_CM_EVENT_DISCONNECTED");
	assert_string_equal(rdma_event_str((enum rdma_cm_event_type)1000), "UNKNOWN EVENT");
}

/* ---------------------------------------------------------------- rates */

void ibv_rate_to_mult__table(void **state)
{
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_2_5_GBPS), 1);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_10_GBPS), 4);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_120_GBPS), 48);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_MAX), -1);
}

void mult_to_ibv_rate__table(void **state)
{
	assert_int_equal(mult_to_ibv_rate(1), IBV_RATE_2_5_GBPS);
	assert_int_equal(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
	assert_int_equal(mult_to_ibv_rate(3), IBV_RATE_MAX);
}

void ibv_rate_to_mbps__table(void **state)
{
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_10_GBPS), 10000);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_MAX), -1);
}

void mbps_to_ibv_rate__table(void **state)
{
	assert_int_equal(mbps_to_ibv_rate(10000), IBV_RATE_10_GBPS);
	assert_int_equal(mbps_to_ibv_rate(103125), IBV_RATE_100_GBPS);
	assert_int_equal(mbps_to_ibv_rate(12345), IBV_RATE_MAX);
}

/* ---------------------------------------------------------------- devices */

static void device_list(void)
{
	struct ibv_device **list;
	int n = -1;

	fx_require_backend();
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	assert_true(n >= 1);
	assert_null(list[n]);
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		assert_non_null(name);
		assert_true(name[0] != '\0');
		assert_string_equal(name, list[i]->name);
		assert_true(ibv_get_device_guid(list[i]) != 0);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(name, ibv_get_device_name(list[j]));
	}
	ibv_free_device_list(list);
}

void ibv_get_device_list__names_and_guids(void **state) { device_list(); }
void ibv_get_device_name__unique(void **state) { device_list(); }
void ibv_get_device_guid__nonzero(void **state) { device_list(); }
void ibv_free_device_list__after_use(void **state) { device_list(); }

/* The node GUID the context reports is the device's; closing returns 0. */
static void query_and_close(void)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_device_attr attr;

	FX_VERBS_OK(ibv_query_device(ctx, &attr));
	assert_true(attr.node_guid == ibv_get_device_guid(ctx->device));
	assert_true(attr.phys_port_cnt >= 1);
	assert_true(attr.max_qp_wr > 0 && attr.max_cqe > 0 && attr.max_mr_size > 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

void ibv_query_device__node_guid(void **state) { query_and_close(); }
void ibv_close_device__returns_0(void **state) { query_and_close(); }

/* ---------------------------------------------------------------- channels */

/* A completion channel's fd is readable once a CQ armed with
 * ibv_req_notify_cq gets a completion; ibv_get_cq_event names that CQ and
 * its context, and ibv_ack_cq_events lets it be destroyed. A channel with
 * a CQ on it cannot be destroyed (EBUSY). */
static void cq_event(void **state)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_comp_channel *ch;
	struct fx_qp q, self;
	struct ibv_cq *cq, *got = NULL;
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *bad;
	void *got_ctx = NULL;
	struct pollfd pfd;
	struct ibv_wc wc;

	/* The fixture's device, PD and MR; a QP of our own on this CQ, whose
	 * receive flushes when it goes to ERR. */
	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	ch = ibv_create_comp_channel(q.ctx);
	assert_non_null(ch);
	assert_true(fcntl(ch->fd, F_GETFL) >= 0);
	cq = ibv_create_cq(q.ctx, 4, state, ch, 0);
	assert_non_null(cq);
	RC_ASSERT_ERRNO("ibv_destroy_comp_channel", ibv_destroy_comp_channel(ch), EBUSY);
	init.send_cq = init.recv_cq = cq;
	self = (struct fx_qp){ .ctx = q.ctx, .pd = q.pd, .cq = cq, .qp = ibv_create_qp(q.pd, &init) };
	assert_non_null(self.qp);
	sge = (struct ibv_sge){ (uintptr_t)q.buf, 8, q.mr->lkey };
	FX_VERBS_OK(ibv_req_notify_cq(cq, 0));
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	assert_int_equal(rc_poll(&pfd, 1, 50), 0);
	fx_qp_to(&self, IBV_QPS_INIT);
	FX_VERBS_OK(ibv_post_recv(self.qp, &rwr, &bad));
	FX_VERBS_OK(ibv_modify_qp(self.qp, &err, IBV_QP_STATE));
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	FX_VERBS_OK(ibv_get_cq_event(ch, &got, &got_ctx));
	assert_ptr_equal(got, cq);
	assert_ptr_equal(got_ctx, state);
	ibv_ack_cq_events(cq, 1);
	fx_poll_one(cq, &wc);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	FX_VERBS_OK(ibv_destroy_qp(self.qp));
	FX_VERBS_OK(ibv_destroy_cq(cq));
	FX_VERBS_OK(ibv_destroy_comp_channel(ch));
	fx_qp_release(&q);
}

void ibv_get_cq_event__after_completion(void **state) { cq_event(state); }
void ibv_ack_cq_events__then_destroy(void **state) { cq_event(state); }
void ibv_create_comp_channel__fd(void **state) { cq_event(state); }
void ibv_destroy_comp_channel__busy(void **state) { cq_event(state); }

/* Arming a CQ that already holds a completion nobody polled: a ConnectX is
 * armed at the consumer index (libmlx5's mlx5_arm_cq writes it into the
 * arm doorbell), so the event fires at once; rxe arms for the next
 * completion only (rxe_req_notify_cq reports missed ones only when asked,
 * and uverbs never asks): nothing comes. */
void ibv_req_notify_cq__completion_not_polled(void **state)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *got;
	struct fx_qp q, self;
	struct pollfd pfd;
	struct ibv_wc wc;
	void *got_ctx;
	bool mlx5;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	mlx5 = mlx5dv_is_supported(q.ctx->device);
	ch = ibv_create_comp_channel(q.ctx);
	assert_non_null(ch);
	cq = ibv_create_cq(q.ctx, 4, NULL, ch, 0);
	assert_non_null(cq);
	init.send_cq = init.recv_cq = cq;
	self = (struct fx_qp){ .ctx = q.ctx, .pd = q.pd, .cq = cq, .qp = ibv_create_qp(q.pd, &init) };
	assert_non_null(self.qp);
	sge = (struct ibv_sge){ (uintptr_t)q.buf, 8, q.mr->lkey };
	fx_qp_to(&self, IBV_QPS_INIT);
	FX_VERBS_OK(ibv_post_recv(self.qp, &rwr, &bad));
	FX_VERBS_OK(ibv_modify_qp(self.qp, &err, IBV_QP_STATE));
	/* The flushed receive is in the CQ, unarmed: no event. Then arm. */
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	assert_int_equal(rc_poll(&pfd, 1, 100), 0);
	FX_VERBS_OK(ibv_req_notify_cq(cq, 0));
	assert_int_equal(rc_poll(&pfd, 1, 200), mlx5 ? 1 : 0);
	if (mlx5) {
		FX_VERBS_OK(ibv_get_cq_event(ch, &got, &got_ctx));
		assert_ptr_equal(got, cq);
		ibv_ack_cq_events(cq, 1);
	}
	fx_poll_one(cq, &wc);
	assert_int_equal(wc.wr_id, 5);
	FX_VERBS_OK(ibv_destroy_qp(self.qp));
	FX_VERBS_OK(ibv_destroy_cq(cq));
	FX_VERBS_OK(ibv_destroy_comp_channel(ch));
	fx_qp_release(&q);
}

/* A QP of q's PD on cq, in INIT with one receive posted: moved to ERR,
 * it flushes the receive into cq. */
static struct ibv_qp *receiving_qp(struct fx_qp *q, struct ibv_cq *cq, uint64_t wr_id)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_sge sge = { (uintptr_t)q->buf, 8, q->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct fx_qp self = { .ctx = q->ctx, .pd = q->pd, .cq = cq, .qp = ibv_create_qp(q->pd, &init) };

	if (!self.qp)
		fail_msg("ibv_create_qp: %s", strerror(errno));
	fx_qp_to(&self, IBV_QPS_INIT);
	FX_VERBS_OK(ibv_post_recv(self.qp, &rwr, &bad));
	return self.qp;
}

static void to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	FX_VERBS_OK(ibv_modify_qp(qp, &err, IBV_QP_STATE));
}

/* The man page's non-blocking mode: with the channel's fd O_NONBLOCK and
 * no event on it, ibv_get_cq_event returns -1 at once with errno EAGAIN
 * (libibverbs reads the fd). Two CQs on the channel, each armed and each
 * with a completion: destroying one whose event was never read drops
 * that event (the kernel's ib_uverbs_release_ucq frees the CQ's queued
 * events, and ibv_destroy_cq waits only for events that were read), so
 * the channel then holds the other CQ's event alone. */
static void channel_events(void **state)
{
	struct ibv_cq *a, *b, *got = NULL;
	struct ibv_qp *qa, *qb;
	struct ibv_comp_channel *ch;
	struct pollfd pfd;
	struct ibv_wc wc;
	void *got_ctx = NULL;
	struct fx_qp q;
	int flags;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	ch = ibv_create_comp_channel(q.ctx);
	assert_non_null(ch);
	flags = fcntl(ch->fd, F_GETFL);
	assert_true(flags >= 0);
	assert_int_equal(fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK), 0);
	a = ibv_create_cq(q.ctx, 4, &a, ch, 0);
	b = ibv_create_cq(q.ctx, 4, &b, ch, 0);
	assert_non_null(a);
	assert_non_null(b);
	FX_VERBS_OK(ibv_req_notify_cq(a, 0));
	FX_VERBS_OK(ibv_req_notify_cq(b, 0));
	errno = 0;
	assert_int_equal(ibv_get_cq_event(ch, &got, &got_ctx), -1);
	assert_int_equal(errno, EAGAIN);

	/* A's event first (the fd readable: only A's can be there), then B's. */
	qa = receiving_qp(&q, a, 1);
	qb = receiving_qp(&q, b, 2);
	to_err(qa);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	to_err(qb);
	fx_poll_one(b, &wc);
	assert_int_equal(wc.wr_id, 2);
	FX_VERBS_OK(ibv_destroy_qp(qa));
	FX_VERBS_OK(ibv_destroy_cq(a));

	/* B's event, waited for (it may trail B's completion by a moment). */
	assert_int_equal(fcntl(ch->fd, F_SETFL, flags), 0);
	FX_VERBS_OK(ibv_get_cq_event(ch, &got, &got_ctx));
	assert_ptr_equal(got, b);
	assert_ptr_equal(got_ctx, &b);
	ibv_ack_cq_events(b, 1);
	assert_int_equal(fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK), 0);
	errno = 0;
	assert_int_equal(ibv_get_cq_event(ch, &got, &got_ctx), -1);
	assert_int_equal(errno, EAGAIN);
	FX_VERBS_OK(ibv_destroy_qp(qb));
	FX_VERBS_OK(ibv_destroy_cq(b));
	FX_VERBS_OK(ibv_destroy_comp_channel(ch));
	fx_qp_release(&q);
}

void ibv_get_cq_event__nonblocking_empty(void **state) { channel_events(state); }
void ibv_destroy_cq__drops_its_unread_events(void **state) { channel_events(state); }

/* ---------------------------------------------------------------- memory */

/* ibv_reg_mr fills the MR as registered; remote write or atomic access
 * without local write is refused with EINVAL; ibv_dereg_mr gives 0. */
static void reg_mr(void)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[8192];
	struct ibv_mr *mr;

	assert_non_null(pd);
	mr = ibv_reg_mr(pd, buf + 100, 4000, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	assert_ptr_equal(mr->addr, buf + 100);
	assert_int_equal(mr->length, 4000);
	assert_ptr_equal(mr->pd, pd);
	assert_ptr_equal(mr->context, ctx);
	assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE));
	RC_ASSERT_ERRNO("ibv_reg_mr", errno, EINVAL);
	assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_ATOMIC));
	RC_ASSERT_ERRNO("ibv_reg_mr", errno, EINVAL);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	FX_VERBS_OK(ibv_dealloc_pd(pd));
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_reg_mr__fields(void **state) { reg_mr(); }
void ibv_dereg_mr__returns_0(void **state) { reg_mr(); }

/* ---------------------------------------------------------------- librdmacm */

/* rdma_destroy_qp destroys the QP rdma_create_qp made and clears id->qp
 * (and the CQs it made for the id). */
void rdma_destroy_qp__clears_id(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	assert_non_null(fx.client->qp);
	rdma_destroy_qp(fx.client);
	assert_null(fx.client->qp);
	assert_null(fx.client->send_cq);
	assert_null(fx.client->recv_cq);
	fx_release(&fx);
}

/* Without a QP the active side reads CONNECT_RESPONSE, and its
 * rdma_establish gives 0 and the passive side ESTABLISHED. Across two
 * devices, as events.c says why. */
void rdma_establish__without_qp(void **state)
{
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_ESTABLISHED, FX_NO_QPS | FX_OTHER_DEVICE);
	assert_int_equal(fx.client_log[fx.client_events - 1], RDMA_CM_EVENT_CONNECT_RESPONSE);
	if (fx.server)
		assert_int_equal(fx.server_log[fx.server_events - 1], RDMA_CM_EVENT_ESTABLISHED);
	fx_release(&fx);
}

/* rdma_listen on a bound id keeps its port and accepts connections. */
void rdma_listen__keeps_port(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_LISTENING);
	assert_int_equal(fx_src_port(fx.listener), fx.port);
	fx_release(&fx);
}

/* rdma_ack_cm_event checks for NULL (EINVAL) before anything else. */
void rdma_ack_cm_event__null(void **state)
{
	fx_require_backend();
	assert_int_equal(rdma_ack_cm_event(NULL), -1);
	RC_ASSERT_ERRNO("rdma_ack_cm_event", errno, EINVAL);
}

/* ---------------------------------------------------------------- verbs, continued */

void ibv_destroy_cq__idle(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);

	assert_non_null(cq);
	assert_true(cq->cqe >= 8);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* The limit armed with ibv_modify_srq reads back, with max_wr at least
 * what was asked for. */
void ibv_query_srq__limit(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	struct ibv_srq *srq;

	assert_non_null(pd);
	srq = ibv_create_srq(pd, &init);
	assert_non_null(srq);
	FX_VERBS_OK(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT));
	memset(&attr, 0, sizeof attr);
	FX_PROVIDED_OK("ibv_query_srq", "query-srq", ibv_query_srq(srq, &attr));
	assert_int_equal(attr.srq_limit, 4);
	assert_true(attr.max_wr >= 16);
	FX_VERBS_OK(ibv_destroy_srq(srq));
	FX_VERBS_OK(ibv_dealloc_pd(pd));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* With a kernel that copies pinned pages on fork (5.13 and later: what
 * ibv_is_fork_initialized reports as IBV_FORK_UNNEEDED), ibv_fork_init
 * has nothing to do and succeeds at any time. */
void ibv_fork_init__unneeded(void **state)
{
	fx_require_backend();
	if (ibv_is_fork_initialized() != IBV_FORK_UNNEEDED)
		RC_SKIP("config: this kernel needs ibv_fork_init (no copy-on-fork of pinned pages)");
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
}

/* An MR at a chosen I/O virtual address: addr is the buffer, the iova is
 * what remote peers name (ibv_reg_mr_iova2 takes the access as unsigned). */
static void reg_iova(bool two)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[8192] __attribute__((aligned(4096)));
	uint64_t iova = 0x10000000;
	struct ibv_mr *mr;

	assert_non_null(pd);
	mr = two ? ibv_reg_mr_iova2(pd, buf, 4096, iova, IBV_ACCESS_LOCAL_WRITE)
		 : ibv_reg_mr_iova(pd, buf, 4096, iova, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		fail_msg("ibv_reg_mr_iova%s: %s", two ? "2" : "", strerror(errno));
	assert_ptr_equal(mr->addr, buf);
	assert_int_equal(mr->length, 4096);
	assert_ptr_equal(mr->pd, pd);
	FX_VERBS_OK(ibv_dereg_mr(mr));
	FX_VERBS_OK(ibv_dealloc_pd(pd));
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_reg_mr_iova__fields(void **state) { reg_iova(false); }
void ibv_reg_mr_iova2__fields(void **state) { reg_iova(true); }

/* ---------------------------------------------------------------- mlx5dv */

/* mlx5dv_open_device opens exactly the devices mlx5dv_is_supported
 * accepts; others are refused with EOPNOTSUPP. */
static void mlx5dv_devices(void)
{
	struct mlx5dv_context_attr attr = { 0 };
	struct ibv_device **list;
	int n = 0, mlx5 = 0;

	fx_require_backend();
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	for (int i = 0; i < n; i++) {
		struct ibv_context *ctx = mlx5dv_open_device(list[i], &attr);

		if (mlx5dv_is_supported(list[i])) {
			mlx5++;
			if (!ctx)
				fail_msg("mlx5dv_open_device(%s): %s", ibv_get_device_name(list[i]),
					 strerror(errno));
			FX_VERBS_OK(ibv_close_device(ctx));
		} else {
			if (ctx)
				fail_msg("mlx5dv_open_device(%s) opened a device mlx5dv_is_supported refuses",
					 ibv_get_device_name(list[i]));
			RC_ASSERT_ERRNO("mlx5dv_open_device", errno, EOPNOTSUPP);
		}
	}
	ibv_free_device_list(list);
}

void mlx5dv_is_supported__agrees_with_open(void **state) { mlx5dv_devices(); }
void mlx5dv_open_device__only_mlx5(void **state) { mlx5dv_devices(); }

/* On an mlx5 device 0; on another, EOPNOTSUPP (no mlx5 context ops). */
void mlx5dv_query_device__by_device(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);
	struct mlx5dv_context dv = { 0 };

	assert_int_equal(mlx5dv_query_device(ctx, &dv), 0);
	FX_VERBS_OK(ibv_close_device(ctx));
	ctx = fx_open_device(FX_DEV_NOT_MLX5);
	RC_ASSERT_ERRNO("mlx5dv_query_device", mlx5dv_query_device(ctx, &dv), EOPNOTSUPP);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void mlx5dv_init_obj__pd(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2;
	struct mlx5dv_pd dvpd = { 0 };
	struct mlx5dv_obj obj = { .pd = { .in = pd, .out = &dvpd } };

	assert_non_null(pd);
	assert_int_equal(mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD), 0);
	pd2 = ibv_alloc_pd(ctx);
	assert_non_null(pd2);
	{
		struct mlx5dv_pd dvpd2 = { 0 };
		struct mlx5dv_obj obj2 = { .pd = { .in = pd2, .out = &dvpd2 } };

		assert_int_equal(mlx5dv_init_obj(&obj2, MLX5DV_OBJ_PD), 0);
		/* Each PD has its own protection domain number. */
		assert_true(dvpd.pdn != dvpd2.pdn);
	}
	FX_VERBS_OK(ibv_dealloc_pd(pd2));
	FX_VERBS_OK(ibv_dealloc_pd(pd));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ---------------------------------------------------------------- librdmacm, continued */

/* rdma_create_qp_ex with the PD in attr_ex: id->qp in INIT, its CQs made. */
void rdma_create_qp_ex__init(void **state)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_ADDR_RESOLVED, FX_NO_QPS);
	attr.pd = fx.client->pd;
	FX_OK(rdma_create_qp_ex(fx.client, &attr));
	assert_non_null(fx.client->qp);
	assert_int_equal(fx_qp_state(fx.client->qp), IBV_QPS_INIT);
	assert_non_null(fx.client->send_cq);
	assert_non_null(fx.client->recv_cq);
	fx_release(&fx);
}

/* rdma_create_srq gives the id a basic SRQ on its PD (a CQ is made only
 * for an XRC SRQ), and rdma_destroy_srq takes it away. */
static void cm_srq(bool ex)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_init_attr_ex attr_ex = {
		.attr = { .max_wr = 8, .max_sge = 1 }, .srq_type = IBV_SRQT_BASIC,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE,
	};
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_ADDR_RESOLVED, FX_NO_QPS);
	if (ex)
		FX_OK(rdma_create_srq_ex(fx.client, &attr_ex));
	else
		FX_OK(rdma_create_srq(fx.client, NULL, &attr));
	assert_non_null(fx.client->srq);
	assert_ptr_equal(fx.client->srq->pd, fx.client->pd);
	assert_null(fx.client->recv_cq);
	rdma_destroy_srq(fx.client);
	assert_null(fx.client->srq);
	fx_release(&fx);
}

void rdma_create_srq__on_id(void **state) { cm_srq(false); }
void rdma_create_srq_ex__on_id(void **state) { cm_srq(true); }
void rdma_destroy_srq__clears_id(void **state) { cm_srq(false); }

/* rdma_create_qp_ex without IBV_QP_INIT_ATTR_PD in comp_mask takes the
 * id's PD (librdmacm's own for its device) and says so in attr_ex. */
void rdma_create_qp_ex__pd_of_id(void **state)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_ADDR_RESOLVED, FX_NO_QPS);
	assert_non_null(fx.client->pd);
	FX_OK(rdma_create_qp_ex(fx.client, &attr));
	assert_non_null(fx.client->qp);
	assert_ptr_equal(fx.client->qp->pd, fx.client->pd);
	assert_ptr_equal(attr.pd, fx.client->pd);
	assert_true(attr.comp_mask & IBV_QP_INIT_ATTR_PD);
	fx_release(&fx);
}

/* rdma_create_srq_ex needs the SRQ type in comp_mask: without it -1,
 * errno EINVAL, and the id has no SRQ. */
void rdma_create_srq_ex__without_type(void **state)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = 8, .max_sge = 1 }, .srq_type = IBV_SRQT_BASIC,
	};
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_ADDR_RESOLVED, FX_NO_QPS);
	errno = 0;
	assert_int_equal(rdma_create_srq_ex(fx.client, &attr), -1);
	RC_ASSERT_ERRNO("rdma_create_srq_ex", errno, EINVAL);
	assert_null(fx.client->srq);
	fx_release(&fx);
}

/* An SRQ the device refuses (max_wr above max_srq_wr): -1 with the
 * verbs' errno (EINVAL), the id left without an SRQ or CQs. */
void rdma_create_srq__over_max_wr(void **state)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_sge = 1 } };
	struct ibv_device_attr dev;
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_ADDR_RESOLVED, FX_NO_QPS);
	FX_VERBS_OK(ibv_query_device(fx.client->verbs, &dev));
	attr.attr.max_wr = (uint32_t)dev.max_srq_wr + 1;
	errno = 0;
	assert_int_equal(rdma_create_srq(fx.client, NULL, &attr), -1);
	RC_ASSERT_ERRNO("rdma_create_srq", errno, EINVAL);
	assert_null(fx.client->srq);
	assert_null(fx.client->recv_cq);
	fx_release(&fx);
}

/* rdma_destroy_ep gives back what rdma_create_ep took: the port of a
 * passive endpoint can be bound again at once. */
void rdma_destroy_ep__frees_port(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP }, *res;
	struct sockaddr_storage sa;
	struct rdma_cm_id *ep, *id;
	char port[8];

	fx_require_backend();
	snprintf(port, sizeof port, "%u", fx_port());
	FX_OK(rdma_getaddrinfo(fx_addr(AF_INET), port, &hints, &res));
	FX_OK(rdma_create_ep(&ep, res, NULL, NULL));
	rdma_freeaddrinfo(res);
	assert_int_equal(fx_src_port(ep), fx_port());
	rdma_destroy_ep(ep);
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &sa);
	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&sa));
	FX_OK(rdma_destroy_id(id));
}

/* RDMA_OPTION_ID_TOS is taken (0); an unknown level is refused by the
 * kernel with ENOSYS. */
void rdma_set_option__tos(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct rdma_cm_id *id;
	uint8_t tos = 32;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos), 0);
	assert_int_equal(rdma_set_option(id, 99, RDMA_OPTION_ID_TOS, &tos, sizeof tos), -1);
	RC_ASSERT_ERRNO("rdma_set_option", errno, ENOSYS);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* The port space sets the id's QP type (librdmacm rdma_create_id): UD
 * for RDMA_PS_IPOIB as for RDMA_PS_UDP; a port space the kernel does not
 * know is refused (ucma_get_qp_type): -1, errno EINVAL. */
void rdma_create_id__port_space(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct rdma_cm_id *id = NULL;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_IPOIB));
	assert_int_equal(id->ps, RDMA_PS_IPOIB);
	assert_int_equal(id->qp_type, IBV_QPT_UD);
	FX_OK(rdma_destroy_id(id));
	errno = 0;
	assert_int_equal(rdma_create_id(ch, &id, NULL, (enum rdma_port_space)0x9999), -1);
	RC_ASSERT_ERRNO("rdma_create_id", errno, EINVAL);
	rdma_destroy_event_channel(ch);
}

/* An option name the kernel does not know at level RDMA_OPTION_ID is
 * refused (ucma_set_option_id's default): -1, errno ENOSYS. */
void rdma_set_option__unknown_id_option(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct rdma_cm_id *id;
	int value = 1;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	errno = 0;
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, 99, &value, sizeof value), -1);
	RC_ASSERT_ERRNO("rdma_set_option", errno, ENOSYS);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

static void set_option_refused(struct rdma_cm_id *id, int optname, void *optval, size_t optlen)
{
	errno = 0;
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, optname, optval, optlen), -1);
	RC_ASSERT_ERRNO("rdma_set_option", errno, EINVAL);
}

/* RDMA_OPTION_ID_ACK_TIMEOUT takes a uint8_t, on an RC id only (kernel
 * rdma_set_ack_timeout): an int, or a UDP id, is EINVAL. On a connected
 * id the value becomes the timeout rdma_init_qp_attr gives for RTS. */
void rdma_set_option__ack_timeout(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *udp;
	struct fx_link l;
	uint8_t timeout = 20;
	int wide = 20, mask = 0;

	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &udp, NULL, RDMA_PS_UDP));
	set_option_refused(udp, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout);
	FX_OK(rdma_destroy_id(udp));
	rdma_destroy_event_channel(ch);

	fx_link_up(&l, NULL, NULL);
	fx_require_ib_qp_attributes(l.c.id->verbs);
	set_option_refused(l.c.id, RDMA_OPTION_ID_ACK_TIMEOUT, &wide, sizeof wide);
	FX_OK(rdma_init_qp_attr(l.c.id, &attr, &mask));
	assert_true(mask & IBV_QP_TIMEOUT);
	assert_int_not_equal(attr.timeout, timeout); /* the CM's own, from the path */
	FX_OK(rdma_set_option(l.c.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout));
	memset(&attr, 0, sizeof attr);
	attr.qp_state = IBV_QPS_RTS;
	FX_OK(rdma_init_qp_attr(l.c.id, &attr, &mask));
	assert_true(mask & IBV_QP_TIMEOUT);
	assert_int_equal(attr.timeout, timeout);
	fx_link_release(&l);
}

/* RDMA_OPTION_ID_REUSEADDR (kernel rdma_set_reuseaddr): turning it on is
 * taken in any state but listening; turning it off only on an idle id.
 * Refused: -1, errno EINVAL. */
void rdma_set_option__reuseaddr_states(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage sa;
	struct rdma_cm_id *id;
	int on = 1, off = 0;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &off, sizeof off));
	FX_OK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &on, sizeof on));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &sa);
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&sa));
	FX_OK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &on, sizeof on));
	set_option_refused(id, RDMA_OPTION_ID_REUSEADDR, &off, sizeof off);
	FX_OK(rdma_listen(id, 1));
	set_option_refused(id, RDMA_OPTION_ID_REUSEADDR, &on, sizeof on);
	set_option_refused(id, RDMA_OPTION_ID_REUSEADDR, &off, sizeof off);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* RDMA_OPTION_ID_AFONLY (kernel rdma_set_afonly) is taken on an idle or
 * bound id only: once it listens, -1, errno EINVAL. */
void rdma_set_option__afonly_states(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage sa;
	struct rdma_cm_id *id;
	int on = 1;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, sizeof on));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &sa);
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&sa));
	FX_OK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, sizeof on));
	FX_OK(rdma_listen(id, 1));
	set_option_refused(id, RDMA_OPTION_ID_AFONLY, &on, sizeof on);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* An established connection cannot be rejected (the IB CM's
 * cm_send_rej_locked takes no REJ in ESTABLISHED): -1, errno EINVAL on
 * either side, and the peer hears nothing. */
void rdma_reject__established(void **state)
{
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	errno = 0;
	assert_int_equal(rdma_reject(l.s.id, NULL, 0), -1);
	RC_ASSERT_ERRNO("rdma_reject", errno, EINVAL);
	errno = 0;
	assert_int_equal(rdma_reject(l.c.id, NULL, 0), -1);
	RC_ASSERT_ERRNO("rdma_reject", errno, EINVAL);
	assert_true(fx_quiet(l.client_ch, 200));
	assert_true(fx_quiet(l.server_ch, 200));
	fx_link_release(&l);
}

/* An active id destroyed while its REQ is unanswered sends a REJ with
 * reason IB_CM_REJ_TIMEOUT (the IB CM's cm_destroy_id in REQ_SENT), which
 * puts the passive side's CM id back to idle; ucma drops the events of a
 * new connection not yet accepted (ucma_event_handler: its uid is still
 * 0), so the passive side reads nothing, and its accept then fails:
 * -1, errno EINVAL. On iWARP the active side's stream is gone (its
 * destroy closes the TCP connection): the accept fails with ECONNRESET
 * (measured on siw). */
void rdma_destroy_id__request_unanswered(void **state)
{
	struct fx_link l;

	fx_link_request(&l, fx_addr(AF_INET), NULL);
	if (l.c.id->qp)
		rdma_destroy_qp(l.c.id);
	if (l.c.mr)
		FX_VERBS_OK(ibv_dereg_mr(l.c.mr));
	free(l.c.buf);
	FX_OK(rdma_destroy_id(l.c.id));
	memset(&l.c, 0, sizeof l.c);
	assert_true(fx_quiet(l.server_ch, 500));
	errno = 0;
	assert_int_equal(rdma_accept(l.s.id, NULL), -1);
	RC_ASSERT_ERRNO("rdma_accept", errno, fx_cm_iwarp(l.s.id) ? ECONNRESET : EINVAL);
	assert_true(fx_quiet(l.server_ch, 200));
	fx_link_release(&l);
}

/* An id with an SRQ gives it to a QP created without one (librdmacm
 * rdma_create_qp_ex), and rdma_create_qp says so in the attributes. */
void rdma_create_qp__srq_of_id(void **state)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_ADDR_RESOLVED, FX_NO_QPS);
	FX_OK(rdma_create_srq(fx.client, NULL, &sattr));
	FX_OK(rdma_create_qp(fx.client, NULL, &attr));
	assert_non_null(fx.client->qp);
	assert_ptr_equal(fx.client->qp->srq, fx.client->srq);
	assert_ptr_equal(attr.srq, fx.client->srq);
	rdma_destroy_qp(fx.client);
	rdma_destroy_srq(fx.client);
	fx_release(&fx);
}

/* ---------------------------------------------------------------- ECE */

/* rdma_set_local_ece refuses a vendor id of 0 and an id that has a QP;
 * rdma_get_remote_ece refuses an id that has a QP (both EINVAL). */
static void ece_args(void)
{
	struct ibv_ece ece = { .vendor_id = 0x15b3, .options = 1 }, zero = { 0 };
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	assert_int_equal(rdma_set_local_ece(fx.client, &ece), -1);
	RC_ASSERT_ERRNO("rdma_set_local_ece", errno, EINVAL);
	assert_int_equal(rdma_get_remote_ece(fx.client, &ece), -1);
	RC_ASSERT_ERRNO("rdma_get_remote_ece", errno, EINVAL);
	rdma_destroy_qp(fx.client);
	assert_int_equal(rdma_set_local_ece(fx.client, &zero), -1);
	RC_ASSERT_ERRNO("rdma_set_local_ece", errno, EINVAL);
	assert_int_equal(rdma_set_local_ece(fx.client, &ece), 0);
	assert_int_equal(rdma_get_remote_ece(fx.client, &zero), 0);
	assert_int_equal(zero.vendor_id, 0);
	fx_release(&fx);
}

void rdma_set_local_ece__arguments(void **state) { ece_args(); }
void rdma_get_remote_ece__arguments(void **state) { ece_args(); }

/* rdma_reject_ece rejects with reason 35 (the IBTA's vendor option not
 * supported), which the active side reads as REJECTED's status. */
void rdma_reject_ece__status(void **state)
{
	struct fx_link l;
	struct rdma_cm_event *ev;

	fx_link_request(&l, fx_addr(AF_INET), NULL);
	FX_OK(rdma_reject_ece(l.s.id, NULL, 0));
	ev = fx_expect(l.client_ch, RDMA_CM_EVENT_REJECTED, 5000);
	assert_int_equal(ev->status, fx_reject_status(l.c.id, 35));
	FX_OK(rdma_ack_cm_event(ev));
	fx_link_release(&l);
}

/* ibv_query_ece: rxe has no ECE (libibverbs answers EOPNOTSUPP for a
 * provider without query_ece); mlx5 reports its vendor id, 0x15b3
 * (mlx5_query_ece), once the QP exists. ibv_set_ece: EOPNOTSUPP on rxe;
 * mlx5_set_ece refuses another vendor's id (EINVAL), and takes its own
 * only from firmware with ECE (else EOPNOTSUPP). */
static void verbs_ece(bool set)
{
	struct ibv_ece ece = { 0 };
	struct fx_qp q;
	int ret;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	if (mlx5dv_is_supported(q.ctx->device)) {
		FX_VERBS_OK(ibv_query_ece(q.qp, &ece));
		assert_int_equal(ece.vendor_id, 0x15b3);
		assert_int_equal(ece.comp_mask, 0);
		if (set) {
			RC_ASSERT_ERRNO("ibv_set_ece",
					ibv_set_ece(q.qp, &(struct ibv_ece){ .vendor_id = 0x8086 }), EINVAL);
			ret = ibv_set_ece(q.qp, &ece);
			if (ret)
				RC_ASSERT_ERRNO("ibv_set_ece", ret, EOPNOTSUPP);
		}
	} else {
		ret = set ? ibv_set_ece(q.qp, &(struct ibv_ece){ .vendor_id = 0x15b3 })
			  : ibv_query_ece(q.qp, &ece);
		RC_ASSERT_ERRNO(set ? "ibv_set_ece" : "ibv_query_ece", ret, EOPNOTSUPP);
	}
	fx_qp_release(&q);
}

void ibv_query_ece__by_device(void **state) { verbs_ece(false); }
void ibv_set_ece__by_device(void **state) { verbs_ece(true); }

/* ---------------------------------------------------------------- rdma_notify */

/* What rdma_notify does on an RNIC: nothing. */
#define NOTIFY_IWARP "rdma_notify tells the IB CM only; on an RNIC it does nothing and returns 0 " \
	"(kernel cma.c rdma_notify)"

static void notify_refused(struct rdma_cm_id *id, enum ibv_event_type event, int err)
{
	errno = 0;
	assert_int_equal(rdma_notify(id, event), -1);
	RC_ASSERT_ERRNO("rdma_notify", errno, err);
}

/* An id with no connection has no IB CM id to tell (kernel cma.c
 * rdma_notify): -1, errno EINVAL. */
void rdma_notify__no_connection(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct rdma_cm_id *id;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	notify_refused(id, IBV_EVENT_COMM_EST, EINVAL);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* The passive side accepted; the active side has not read its event, so
 * no RTU was sent. COMM_EST (a message arrived first, as a program learns
 * from IBV_EVENT_COMM_EST) establishes the passive side at once (ib_cm
 * cm_establish); the RTU that follows changes nothing; and COMM_EST on an
 * established connection is refused, EISCONN. */
void rdma_notify__comm_est_before_rtu(void **state)
{
	struct rdma_cm_event *ev;
	struct fx_link l;

	fx_link_request(&l, fx_addr(AF_INET), NULL);
	fx_require_ib_cm(l.c.id, NOTIFY_IWARP);
	FX_OK(rdma_accept(l.s.id, NULL));
	FX_OK(rdma_ack_cm_event(l.request));
	l.request = NULL;
	FX_OK(rdma_notify(l.s.id, IBV_EVENT_COMM_EST));
	ev = fx_expect(l.server_ch, RDMA_CM_EVENT_ESTABLISHED, 5000);
	assert_ptr_equal(ev->id, l.s.id);
	assert_int_equal(ev->status, 0);
	FX_OK(rdma_ack_cm_event(ev));
	fx_expect_ack(l.client_ch, RDMA_CM_EVENT_ESTABLISHED, 5000);
	assert_true(fx_quiet(l.server_ch, 200));
	notify_refused(l.s.id, IBV_EVENT_COMM_EST, EISCONN);
	notify_refused(l.c.id, IBV_EVENT_COMM_EST, EISCONN);
	fx_link_release(&l);
}

/* The IB CM takes COMM_EST and PATH_MIG only (ib_cm_notify): any other
 * event is refused, EINVAL, even on an established connection. */
void rdma_notify__other_event(void **state)
{
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	fx_require_ib_cm(l.c.id, NOTIFY_IWARP);
	notify_refused(l.c.id, IBV_EVENT_LID_CHANGE, EINVAL);
	notify_refused(l.s.id, IBV_EVENT_SQ_DRAINED, EINVAL);
	fx_link_release(&l);
}

/* PATH_MIG moves an established connection to its alternate path
 * (cm_migrate); before ESTABLISHED (the passive side has sent its REP)
 * it is refused, EINVAL, and the connection then comes up as before. */
void rdma_notify__path_mig_before_established(void **state)
{
	struct fx_link l;

	fx_link_request(&l, fx_addr(AF_INET), NULL);
	fx_require_ib_cm(l.c.id, NOTIFY_IWARP);
	FX_OK(rdma_accept(l.s.id, NULL));
	FX_OK(rdma_ack_cm_event(l.request));
	l.request = NULL;
	notify_refused(l.s.id, IBV_EVENT_PATH_MIG, EINVAL);
	fx_expect_ack(l.client_ch, RDMA_CM_EVENT_ESTABLISHED, 5000);
	fx_expect_ack(l.server_ch, RDMA_CM_EVENT_ESTABLISHED, 5000);
	fx_link_release(&l);
}

/* ---------------------------------------------------------------- data placement */

/* Whether a QP's RDMA WRITE data lands in order: 1 or 0 (rdma-core 44's
 * verbs.h), and 0 for a QP not in RTS (mlx5_query_qp_data_in_order asks
 * the firmware only for an RTS QP; rxe has no such query, and
 * libibverbs' default answers 0). */
void ibv_query_qp_data_in_order__answers(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;
	struct fx_qp q;
	int in_order;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	FX_FIELD(&f, ibv_query_qp_data_in_order(q.qp, IBV_WR_RDMA_WRITE, 0), 0);
	fx_qp_release(&q);
	fx_link_up(&l, NULL, NULL);
	in_order = ibv_query_qp_data_in_order(l.c.id->qp, IBV_WR_RDMA_WRITE, 0);
	FX_FIELD(&f, in_order == 0 || in_order == 1, 1);
	fx_fields_done(&f);
	fx_link_release(&l);
}
