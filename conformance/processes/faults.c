/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the mock's fault points (libfiu), one per entry point that
 * can report an error, named rdmamock/<library>/<function>. Mock-only. */
#include <errno.h>
#include <fiu-control.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "fixtures.h"
#include "qp.h"

static void enable(const char *point, int err, unsigned flags)
{
	rc_require_mock("fault points are the mock's");
	if (fiu_enable(point, 1, (void *)(intptr_t)err, flags))
		fail_msg("fiu_enable(%s) failed", point);
}

void rdma_create_event_channel__fault_point(void **state)
{
	enable("rdmamock/rdmacm/rdma_create_event_channel", EMFILE, 0);
	errno = 0;
	assert_null(rdma_create_event_channel());
	RC_ASSERT_ERRNO("rdma_create_event_channel", errno, EMFILE);
}

void rdma_bind_addr__fault_point(void **state)
{
	struct sockaddr_storage addr;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	rc_require_mock("fault points are the mock's");
	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	enable("rdmamock/rdmacm/rdma_bind_addr", EADDRINUSE, FIU_ONETIME);
	errno = 0;
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&addr), -1);
	RC_ASSERT_ERRNO("rdma_bind_addr", errno, EADDRINUSE);
	/* FIU_ONETIME: the next call is not failed, and it binds. */
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&addr));
	assert_int_equal(fx_src_port(id), fx_port());
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* Verbs calls return a positive errno and leave errno alone. */
void ibv_query_device__fault_point(void **state)
{
	struct ibv_device_attr attr;
	struct ibv_device **list;
	struct ibv_context *ctx;

	rc_require_mock("fault points are the mock's");
	list = ibv_get_device_list(NULL);
	assert_non_null(list);
	assert_non_null(list[0]);
	ctx = ibv_open_device(list[0]);
	assert_non_null(ctx);
	enable("rdmamock/ibverbs/ibv_query_device", ENOMEM, 0);
	errno = 0;
	RC_ASSERT_ERRNO("ibv_query_device", ibv_query_device(ctx, &attr), ENOMEM);
	assert_int_equal(errno, 0);
	fiu_disable("rdmamock/ibverbs/ibv_query_device");
	assert_int_equal(ibv_query_device(ctx, &attr), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
}

void rdma_create_id__fault_point_without_errno(void **state)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	rc_require_mock("fault points are the mock's");
	ch = fx_channel();
	enable("rdmamock/rdmacm/rdma_create_id", 0, 0);
	errno = 0;
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), -1);
	/* The call's usual failure: the first of its errno table. */
	RC_ASSERT_ERRNO("rdma_create_id", errno, ENOMEM);
	rdma_destroy_event_channel(ch);
}

/* ---------------------------------------------------------------- the fabric's faults */

typedef int (*fault_add_fn)(const char *spec, char *err, size_t errlen);

static fault_add_fn fault_add(void)
{
	return (fault_add_fn)fx_mock_call("rdmamock_fault_add");
}

/* A spec that does not parse adds nothing, and the message names the bad
 * part and why. */
void rdmamock_fault_add__names_the_bad_part(void **state)
{
	static const struct {
		const char *spec, *says;
	} bad[] = {
		{ "rdmamock/rdmacm/rdma_conect", "'rdmamock/rdmacm/rdma_conect' is not a fault point" },
		{ "rdmamock/rdmacm/event/rejected stauts=28", "unknown key 'stauts'" },
		{ "rdmamock/rdmacm/event/rejected port=70000", "port=70000: not a port" },
		{ "rdmamock/rdmacm/rdma_create_id errno=EWHAT", "errno=EWHAT: not an errno" },
		{ "rdmamock/rdmacm/event/rejected data=abc", "data=abc: not hex bytes" },
		{ "rdmamock/rdmacm/event/rejected nth=0", "nth=0: not N or N+" },
		{ "rdmamock/rdmacm/event/rejected 28", "'28' is not key=value" },
	};
	fault_add_fn add = fault_add();
	struct rdma_event_channel *ch;
	char err[256];

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(add(bad[i].spec, err, sizeof err), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("%s: said \"%s\", not \"%s\"", bad[i].spec, err, bad[i].says);
	}
	/* All or nothing: the good fault before a bad one is not added. */
	assert_int_equal(add("rdmamock/rdmacm/rdma_create_event_channel errno=EMFILE; nonsense", err,
			     sizeof err), -EINVAL);
	ch = rdma_create_event_channel();
	assert_non_null(ch);
	rdma_destroy_event_channel(ch);
}

/* A spec the table has no room for is added whole or not at all: with 30
 * of its 32 places taken, three new faults are refused (-ENOSPC) and none
 * stays; two fit. (Aimed at pid 1, which is on no fabric.) */
void rdmamock_fault_add__table_full(void **state)
{
	int (*fault_clear)(void) = (int (*)(void))fx_mock_call("rdmamock_fault_clear");
	fault_add_fn add = fault_add();
	char spec[256], err[256];

	fx_require_backend();
	fault_clear();
	for (int k = 1; k <= 30; k++) {
		snprintf(spec, sizeof spec, "rdmamock/ibverbs/ibv_alloc_pd nth=%d pid=1", k);
		assert_int_equal(add(spec, err, sizeof err), 1);
	}
	assert_int_equal(add("rdmamock/ibverbs/ibv_alloc_pd nth=31 pid=1; rdmamock/ibverbs/ibv_alloc_pd nth=32 pid=1; "
			     "rdmamock/ibverbs/ibv_alloc_pd nth=33 pid=1", err, sizeof err), -ENOSPC);
	if (!strstr(err, "none added"))
		fail_msg("the refusal says \"%s\", not that none was added", err);
	assert_int_equal(fault_clear(), 30);
	for (int k = 1; k <= 30; k++) {
		snprintf(spec, sizeof spec, "rdmamock/ibverbs/ibv_alloc_pd nth=%d pid=1", k);
		assert_int_equal(add(spec, err, sizeof err), 1);
	}
	assert_int_equal(add("rdmamock/ibverbs/ibv_alloc_pd nth=31 pid=1; rdmamock/ibverbs/ibv_alloc_pd nth=32 pid=1",
			     err, sizeof err), 2);
	assert_int_equal(fault_clear(), 32);
}

/* nth=N fails the Nth hit only; nth=N+ the Nth and every one after. (Each
 * fault aimed at this process: a two-process run shares the fabric.) */
void rdmamock_fault_add__nth_hit(void **state)
{
	struct rdma_event_channel *ch[6];
	fault_add_fn add = fault_add();
	char spec[160], err[256];

	snprintf(spec, sizeof spec, "rdmamock/rdmacm/rdma_create_event_channel errno=EMFILE nth=2 pid=%d",
		 (int)getpid());
	assert_int_equal(add(spec, err, sizeof err), 1);
	for (int i = 0; i < 3; i++) {
		errno = 0;
		ch[i] = rdma_create_event_channel();
		if (i == 1) {
			assert_null(ch[i]);
			RC_ASSERT_ERRNO("rdma_create_event_channel", errno, EMFILE);
		} else {
			assert_non_null(ch[i]);
		}
	}
	assert_int_equal(((int (*)(void))fx_mock_call("rdmamock_fault_clear"))(), 1);
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/rdma_create_event_channel errno=24 nth=2+ pid=%d",
		 (int)getpid());
	assert_int_equal(add(spec, err, sizeof err), 1);
	for (int i = 3; i < 6; i++) {
		errno = 0;
		ch[i] = rdma_create_event_channel();
		assert_true(i == 3 ? ch[i] != NULL : ch[i] == NULL && errno == EMFILE);
	}
	assert_int_equal(((long (*)(const char *))fx_mock_call("rdmamock_fault_fired"))(
				 "rdmamock/rdmacm/rdma_create_event_channel"), 2);
	for (int i = 0; i < 6; i++)
		if (ch[i])
			rdma_destroy_event_channel(ch[i]);
}

/* A connection of this process's own up to ROUTE_RESOLVED. */
static void reach_route(struct fx *fx)
{
	fx_need_local_passive();
	fx_reach(fx, AF_INET, FX_ROUTE_RESOLVED);
}

/* The request reaches the listener within ms; fx_release destroys its id. */
static void server_hears(struct fx *fx, int ms)
{
	struct rdma_cm_event *ev = fx_expect(fx->server_ch, RDMA_CM_EVENT_CONNECT_REQUEST, ms);

	fx->server = ev->id;
	FX_OK(rdma_ack_cm_event(ev));
}

/* Add spec's n faults, then rdma_connect. */
static void connect_with(struct fx *fx, const char *spec, int n)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	char err[256];

	if (fault_add()(spec, err, sizeof err) != n)
		fail_msg("rdmamock_fault_add(%s): %s", spec, err);
	FX_OK(rdma_connect(fx->client, &param));
}

/* A fault aimed elsewhere (another port, another process) does not fire:
 * the request reaches the listener. */
void rdma_connect__fault_aimed_elsewhere(void **state)
{
	char spec[160];
	struct fx fx;

	reach_route(&fx);
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/event/rejected port=%u; rdmamock/rdmacm/event/rejected pid=%d",
		 (unsigned)fx.port + 1, (int)getppid());
	connect_with(&fx, spec, 2);
	server_hears(&fx, 2000);
	fx_release(&fx);
}

/* REJECTED with the fault's status and private data, where nobody
 * rejected: the listener never hears of the request. */
void rdma_connect__fault_rejected(void **state)
{
	static const uint8_t data[] = { 0xde, 0xad, 0xbe, 0xef };
	struct rdma_cm_event *ev;
	char spec[160];
	struct fx fx;

	reach_route(&fx);
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/event/rejected status=10 data=deadbeef port=%u pid=%d",
		 (unsigned)fx.port, (int)getpid());
	connect_with(&fx, spec, 1);
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_REJECTED, 2000);
	assert_int_equal(ev->status, 10);
	assert_true(ev->param.conn.private_data_len >= sizeof data);
	assert_memory_equal(ev->param.conn.private_data, data, sizeof data);
	FX_OK(rdma_ack_cm_event(ev));
	assert_true(fx_quiet(fx.server_ch, 200));
	fx_release(&fx);
}

/* The first REQ is lost: the CM sends it again after its timeout, and the
 * listener hears of the request then, not before. */
void rdma_connect__fault_req_lost(void **state)
{
	char spec[160];
	struct fx fx;

	reach_route(&fx);
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/event/unreachable nth=1 port=%u", (unsigned)fx.port);
	connect_with(&fx, spec, 1);
	assert_true(fx_quiet(fx.server_ch, 1000));
	server_hears(&fx, 10000);
	fx_release(&fx);
}

/* The second of three sends fails with the fault's status, as if the
 * device had failed it: the QP enters ERR, the third send and the receives
 * still posted are flushed. */
void ibv_post_send__fault_wc_status(void **state)
{
	enum ibv_wc_status want_send[] = { IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR };
	enum ibv_wc_status want_recv[] = { IBV_WC_SUCCESS, IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR };
	fault_add_fn add = fault_add();
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	char spec[160], err[256];
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/wc status=IBV_WC_REM_ACCESS_ERR qpn=%u nth=2",
		 q.qp->qp_num);
	assert_int_equal(add(spec, err, sizeof err), 1);
	for (uint64_t i = 0; i < 3; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)q.buf + 32, .length = 8, .lkey = q.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad_rwr;

		FX_VERBS_OK(ibv_post_recv(q.qp, &rwr, &bad_rwr));
	}
	for (uint64_t i = 0; i < 3; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	}
	for (int n = 0; n < 6; n++) {
		struct ibv_wc wc;

		fx_poll_one(q.cq, &wc);
		if (wc.wr_id < 3 && wc.status != want_send[wc.wr_id])
			fail_msg("send %d: %s, not %s", (int)wc.wr_id, ibv_wc_status_str(wc.status),
				 ibv_wc_status_str(want_send[wc.wr_id]));
		if (wc.wr_id >= 100 && wc.status != want_recv[wc.wr_id - 100])
			fail_msg("receive %d: %s, not %s", (int)wc.wr_id - 100, ibv_wc_status_str(wc.status),
				 ibv_wc_status_str(want_recv[wc.wr_id - 100]));
	}
	FX_VERBS_OK(ibv_query_qp(q.qp, &attr, IBV_QP_STATE, &init));
	assert_int_equal(attr.qp_state, IBV_QPS_ERR);
	fx_qp_release(&q);
}

/* An id of this process's own, on a channel, and its destination. */
static struct rdma_cm_id *new_id(struct rdma_event_channel *ch, struct sockaddr_storage *dst)
{
	struct rdma_cm_id *id;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), dst);
	return id;
}

static void add_for_me(const char *point_and_keys)
{
	char spec[200], err[256];

	snprintf(spec, sizeof spec, "%s pid=%d", point_and_keys, (int)getpid());
	if (fault_add()(spec, err, sizeof err) != 1)
		fail_msg("rdmamock_fault_add(%s): %s", spec, err);
}

/* ADDR_ERROR with the fault's status where the address would resolve; the
 * id is bound again, and resolves the next time. */
void rdma_resolve_addr__fault_addr_error(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage dst;
	struct rdma_cm_id *id = new_id(ch, &dst);
	struct rdma_cm_event *ev;

	add_for_me("rdmamock/rdmacm/event/addr_error status=-113 nth=1");
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	ev = fx_expect(ch, RDMA_CM_EVENT_ADDR_ERROR, 2000);
	assert_int_equal(ev->status, -EHOSTUNREACH);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 2000);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* ROUTE_ERROR (-ETIMEDOUT by default), as a path query that failed; the id
 * is back in ADDR_RESOLVED and resolves its route the next time. */
void rdma_resolve_route__fault_route_error(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage dst;
	struct rdma_cm_id *id = new_id(ch, &dst);
	struct rdma_cm_event *ev;

	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 2000);
	add_for_me("rdmamock/rdmacm/event/route_error nth=1");
	FX_OK(rdma_resolve_route(id, 2000));
	ev = fx_expect(ch, RDMA_CM_EVENT_ROUTE_ERROR, 2000);
	assert_int_equal(ev->status, -ETIMEDOUT);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_resolve_route(id, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 2000);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* The REP reaches the active side, and librdmacm cannot move its QP on:
 * CONNECT_ERROR with status -1 (upstream's ERR) and the QP in ERR; no RTU
 * goes back, so the passive side sees no ESTABLISHED. */
void rdma_connect__fault_connect_error(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	char keys[120];
	struct fx fx;

	fx_need_local_passive();
	fx_reach(&fx, AF_INET, FX_CONNECT_REQUESTED);
	snprintf(keys, sizeof keys, "rdmamock/rdmacm/event/connect_error errno=EIO port=%u", (unsigned)fx.port);
	add_for_me(keys);
	FX_OK(rdma_accept(fx.server, &param));
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_CONNECT_ERROR, 2000);
	assert_int_equal(ev->status, -1);
	FX_OK(rdma_ack_cm_event(ev));
	FX_VERBS_OK(ibv_query_qp(fx.client->qp, &attr, IBV_QP_STATE, &init));
	assert_int_equal(attr.qp_state, IBV_QPS_ERR);
	assert_true(fx_quiet(fx.server_ch, 500));
	fx_release(&fx);
}

/* A port taken down, as `ip link set NETDEV down` does to rxe's: the
 * device's contexts read GID_CHANGE then PORT_ERR, the port says DOWN, and
 * a reliable send goes unanswered until its retries run out. Brought up:
 * PORT_ACTIVE, and the port is ACTIVE again. */
void rdmamock_port_set__down_and_up(void **state)
{
	int (*port_set)(const char *, int) = (int (*)(const char *, int))fx_topology_call("rdmamock_port_set");
	static const enum ibv_event_type down[] = { IBV_EVENT_GID_CHANGE, IBV_EVENT_PORT_ERR };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	const char *name;
	struct ibv_wc wc;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC); /* retry_cnt 7: 8 tries, not endless as on rxe */
	fx_qp_to(&q, IBV_QPS_RTS);
	name = ibv_get_device_name(q.ctx->device);
	assert_int_equal(port_set(name, 0), 0);
	for (int i = 0; i < 2; i++) {
		fx_async_expect(q.ctx, down[i], 1000, &ev);
		assert_int_equal(ev.element.port_num, 1);
		ibv_ack_async_event(&ev);
	}
	FX_VERBS_OK(ibv_query_port(q.ctx, 1, &pa));
	assert_int_equal(pa.state, IBV_PORT_DOWN);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	fx_poll_one(q.cq, &wc);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(port_set(name, 1), 0);
	fx_async_expect(q.ctx, IBV_EVENT_PORT_ACTIVE, 1000, &ev);
	ibv_ack_async_event(&ev);
	FX_VERBS_OK(ibv_query_port(q.ctx, 1, &pa));
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	fx_qp_release(&q);
}

/* A QP's packets lost on the wire: only the first (nth=1), and the request
 * goes again after the QP's timeout (4.096 us << 14, 67 ms) and lands;
 * every one, and the retries run out with RETRY_EXC_ERR. */
void ibv_post_send__fault_drop(void **state)
{
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 100, .sg_list = &rsge, .num_sge = 1 }, *bad_rwr;
	uint64_t t0;
	struct ibv_wc wc;
	char keys[120];
	struct fx_qp q;

	rc_require_mock("faults are the mock's");
	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC); /* retry_cnt 7: 8 tries, not endless as on rxe */
	fx_qp_to(&q, IBV_QPS_RTS);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	rsge = (struct ibv_sge){ .addr = (uintptr_t)q.buf + 32, .length = 8, .lkey = q.mr->lkey };
	FX_VERBS_OK(ibv_post_recv(q.qp, &rwr, &bad_rwr));
	snprintf(keys, sizeof keys, "rdmamock/ibverbs/drop qpn=%u nth=1", q.qp->qp_num);
	add_for_me(keys);
	t0 = rc_now_ns();
	wr.wr_id = 1;
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	for (int n = 0; n < 2; n++) {
		fx_poll_one(q.cq, &wc);
		if (wc.status != IBV_WC_SUCCESS)
			fail_msg("wr %d: %s", (int)wc.wr_id, ibv_wc_status_str(wc.status));
	}
	if (rc_now_ns() - t0 < 60000000u)
		fail_msg("the lost request landed before its timeout: not sent again");
	assert_int_equal(((int (*)(void))fx_mock_call("rdmamock_fault_clear"))(), 1);
	snprintf(keys, sizeof keys, "rdmamock/ibverbs/drop qpn=%u", q.qp->qp_num);
	add_for_me(keys);
	wr.wr_id = 2;
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	fx_poll_one(q.cq, &wc);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	fx_qp_release(&q);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	FX_VERBS_OK(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init));
	return attr.qp_state;
}

/* q's buffer again, open to RDMA WRITEs (the fixture's MR is local only). */
static struct ibv_mr *write_target(struct fx_qp *q)
{
	struct ibv_mr *mr = ibv_reg_mr(q->pd, q->buf, sizeof q->buf,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	if (!mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

/* Signalled RDMA WRITEs from q's QP to its own buffer, n of them, none
 * polled. */
static void write_to_self(struct fx_qp *q, struct ibv_mr *target, int n)
{
	struct ibv_sge sge = { .addr = (uintptr_t)q->mr->addr, .length = 8, .lkey = q->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)target->addr + 32;
	wr.wr.rdma.rkey = target->rkey;
	for (int i = 0; i < n; i++) {
		wr.wr_id = (uint64_t)i + 1;
		FX_VERBS_OK(ibv_post_send(q->qp, &wr, &bad));
	}
}

/* The fixture's QP q on a device of kind, and s: one of q's PD whose send
 * CQ holds one completion (the smallest both rxe and mlx5 give for 1)
 * behind a longer send queue, in RTS. */
static void small_cq_qp(struct fx_qp *q, struct fx_qp *s, enum fx_device_kind kind)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
						  .max_recv_sge = 1 } };

	fx_qp_create(q, kind, IBV_QPT_RC);
	*s = *q;
	s->cq = ibv_create_cq(q->ctx, 1, NULL, NULL, 0);
	if (!s->cq)
		fail_msg("ibv_create_cq: %s", strerror(errno));
	init.send_cq = s->cq;
	init.recv_cq = q->cq;
	s->qp = ibv_create_qp(q->pd, &init);
	if (!s->qp)
		fail_msg("ibv_create_qp: %s", strerror(errno));
	fx_qp_to(s, IBV_QPS_RTS);
}

/* A CQ that overruns: each completion that finds it full is lost and
 * raises IBV_EVENT_CQ_ERR (rxe_cq_post); the requester's QP goes on. */
void ibv_post_send__cq_overrun(void **state)
{
	struct ibv_async_event ev;
	struct ibv_mr *target;
	struct ibv_cq *small;
	struct fx_qp q, s;
	struct ibv_wc wc;
	int n = 0;

	small_cq_qp(&q, &s, FX_DEV_UNDER_TEST);
	small = s.cq;
	target = write_target(&q);
	write_to_self(&s, target, small->cqe + 2);
	fx_async_expect(q.ctx, IBV_EVENT_CQ_ERR, 2000, &ev);
	assert_ptr_equal(ev.element.cq, small);
	ibv_ack_async_event(&ev);
	/* Let the rest of the writes complete (or be lost) before counting;
	 * rxe raises CQ_ERR for each lost one. */
	for (struct pollfd p = { .fd = q.ctx->async_fd, .events = POLLIN }; rc_poll(&p, 1, 200) == 1;) {
		FX_VERBS_OK(ibv_get_async_event(q.ctx, &ev));
		assert_int_equal(ev.event_type, IBV_EVENT_CQ_ERR);
		ibv_ack_async_event(&ev);
	}
	while (ibv_poll_cq(small, 1, &wc) == 1) {
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)n + 1);
		n++;
	}
	assert_int_equal(n, small->cqe);
	assert_int_equal(qp_state(s.qp), IBV_QPS_RTS);
	FX_VERBS_OK(ibv_dereg_mr(target));
	FX_VERBS_OK(ibv_destroy_qp(s.qp));
	FX_VERBS_OK(ibv_destroy_cq(small));
	fx_qp_release(&q);
}

/* An mlx5 CQ that overruns enters the error state: the firmware reports it
 * once (CQ_ERROR: IBV_EVENT_CQ_ERR), and the CQ takes no CQE after, even
 * with room again. The cqe completions it took are there, in order. */
void ibv_create_cq__mlx5_overrun_stops(void **state)
{
	struct ibv_async_event ev;
	struct ibv_mr *target;
	struct fx_qp q, s;
	struct ibv_wc wc;
	int n = 0, events = 1;

	small_cq_qp(&q, &s, FX_DEV_MLX5);
	target = write_target(&q);
	write_to_self(&s, target, s.cq->cqe + 2);
	fx_async_expect(q.ctx, IBV_EVENT_CQ_ERR, 2000, &ev);
	assert_ptr_equal(ev.element.cq, s.cq);
	ibv_ack_async_event(&ev);
	while (ibv_poll_cq(s.cq, 1, &wc) == 1) {
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)n + 1);
		n++;
	}
	assert_int_equal(n, s.cq->cqe);
	/* Room again, and one more write: no CQE, no second event. */
	write_to_self(&s, target, 1);
	for (struct pollfd p = { .fd = q.ctx->async_fd, .events = POLLIN }; rc_poll(&p, 1, 200) == 1;) {
		FX_VERBS_OK(ibv_get_async_event(q.ctx, &ev));
		events += ev.event_type == IBV_EVENT_CQ_ERR;
		ibv_ack_async_event(&ev);
	}
	assert_int_equal(events, 1);
	assert_int_equal(ibv_poll_cq(s.cq, 1, &wc), 0);
	FX_VERBS_OK(ibv_dereg_mr(target));
	FX_VERBS_OK(ibv_destroy_qp(s.qp));
	FX_VERBS_OK(ibv_destroy_cq(s.cq));
	fx_qp_release(&q);
}

/* rdmamock/ibverbs/cq_err: the second completion finds its CQ overrun. */
void ibv_post_send__fault_cq_err(void **state)
{
	struct ibv_async_event ev;
	struct ibv_mr *target;
	struct ibv_wc wc[4];
	char keys[120];
	struct fx_qp q;

	rc_require_mock("faults are the mock's");
	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	target = write_target(&q);
	snprintf(keys, sizeof keys, "rdmamock/ibverbs/cq_err qpn=%u nth=2", q.qp->qp_num);
	add_for_me(keys);
	write_to_self(&q, target, 3);
	fx_async_expect(q.ctx, IBV_EVENT_CQ_ERR, 1000, &ev);
	assert_ptr_equal(ev.element.cq, q.cq);
	ibv_ack_async_event(&ev);
	/* An mlx5 CQ is in error after its overrun: the third is lost too. */
	if (mlx5dv_is_supported(q.ctx->device)) {
		assert_int_equal(ibv_poll_cq(q.cq, 4, wc), 1);
	} else {
		assert_int_equal(ibv_poll_cq(q.cq, 4, wc), 2);
		assert_int_equal(wc[1].wr_id, 3);
	}
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(qp_state(q.qp), IBV_QPS_RTS);
	FX_VERBS_OK(ibv_dereg_mr(target));
	fx_qp_release(&q);
}

/* rdmamock/ibverbs/qp_fatal: the QP's second request meets a catastrophic
 * error. The first completed; the second and the receive flush; the QP is
 * in ERR and IBV_EVENT_QP_FATAL names it. */
void ibv_post_send__fault_qp_fatal(void **state)
{
	struct ibv_sge rsge;
	struct ibv_recv_wr rwr = { .wr_id = 100, .sg_list = &rsge, .num_sge = 1 }, *bad_rwr;
	struct ibv_async_event ev;
	struct ibv_mr *target;
	struct ibv_wc wc;
	char keys[120];
	struct fx_qp q;

	rc_require_mock("faults are the mock's");
	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	target = write_target(&q);
	rsge = (struct ibv_sge){ .addr = (uintptr_t)q.buf + 48, .length = 8, .lkey = q.mr->lkey };
	FX_VERBS_OK(ibv_post_recv(q.qp, &rwr, &bad_rwr));
	snprintf(keys, sizeof keys, "rdmamock/ibverbs/qp_fatal qpn=%u nth=2", q.qp->qp_num);
	add_for_me(keys);
	write_to_self(&q, target, 2);
	fx_poll_one(q.cq, &wc);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	for (int i = 0; i < 2; i++) {
		fx_poll_one(q.cq, &wc);
		assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
		assert_true(wc.wr_id == 2 || wc.wr_id == 100);
	}
	assert_int_equal(qp_state(q.qp), IBV_QPS_ERR);
	fx_async_expect(q.ctx, IBV_EVENT_QP_FATAL, 1000, &ev);
	assert_ptr_equal(ev.element.qp, q.qp);
	ibv_ack_async_event(&ev);
	FX_VERBS_OK(ibv_dereg_mr(target));
	fx_qp_release(&q);
}

/* rdmamock/ibverbs/port_down with ms=: at the QP's first ibv_post_send its
 * port goes down (GID_CHANGE, PORT_ERR), the send is lost, and 100 ms
 * later the port is back (PORT_ACTIVE). */
void ibv_post_send__fault_port_down(void **state)
{
	static const enum ibv_event_type events[] = { IBV_EVENT_GID_CHANGE, IBV_EVENT_PORT_ERR,
						      IBV_EVENT_PORT_ACTIVE };
	struct ibv_async_event ev;
	struct ibv_mr *target;
	struct ibv_port_attr pa;
	char keys[120];
	struct fx_qp q;

	rc_require_mock("faults are the mock's");
	fx_topology_call("rdmamock_port_set"); /* the port is every process's */
	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	target = write_target(&q);
	snprintf(keys, sizeof keys, "rdmamock/ibverbs/port_down qpn=%u nth=1 ms=100", q.qp->qp_num);
	add_for_me(keys);
	write_to_self(&q, target, 1);
	for (int i = 0; i < 3; i++) {
		fx_async_expect(q.ctx, events[i], 2000, &ev);
		assert_int_equal(ev.element.port_num, 1);
		ibv_ack_async_event(&ev);
	}
	FX_VERBS_OK(ibv_query_port(q.ctx, 1, &pa));
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	FX_VERBS_OK(ibv_dereg_mr(target));
	fx_qp_release(&q);
}

/* rdmamock/rdmacm/event/disconnected nth=1: the active side's peer sends a
 * DREQ as soon as the connection is up. The client reads DISCONNECTED
 * (status 0) after ESTABLISHED; the server hears nothing until the client
 * answers with rdma_disconnect, and then reads its own DISCONNECTED. */
void rdma_connect__fault_peer_disconnects(void **state)
{
	struct rdma_cm_event *ev;
	char spec[120];
	struct fx fx;

	rc_require_mock("faults are the mock's");
	fx_need_local_passive();
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/event/disconnected nth=1");
	add_for_me(spec);
	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_DISCONNECTED, 1000);
	assert_int_equal(ev->status, 0);
	assert_ptr_equal(ev->id, fx.client);
	FX_OK(rdma_ack_cm_event(ev));
	assert_true(fx_quiet(fx.server_ch, 200));
	FX_OK(rdma_disconnect(fx.client));
	ev = fx_expect(fx.server_ch, RDMA_CM_EVENT_DISCONNECTED, 1000);
	assert_int_equal(ev->status, 0);
	FX_OK(rdma_ack_cm_event(ev));
	fx_release(&fx);
}

/* rdmamock/rdmacm/event/vanish nth=1: the peer's host is gone once the
 * connection is up. A SEND runs out of retries (RETRY_EXC_ERR); the
 * client's DREQ goes unanswered, so neither side reads DISCONNECTED soon
 * (the client's comes with -ETIMEDOUT after the CM's DREQ retries, over a
 * minute: not waited for here). */
void rdma_connect__fault_peer_vanishes(void **state)
{
	struct ibv_send_wr wr = { .wr_id = 5, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	static char buf[16];
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char spec[120];
	struct rdma_cm_event *ev;
	struct fx fx;
	struct ibv_context *ctx;
	bool mlx5;
	uint64_t t0;

	rc_require_mock("faults are the mock's");
	rc_require_clock_jumps("the client's DREQ goes unanswered for 74 s");
	ctx = fx_open_device(FX_DEV_UNDER_TEST);
	mlx5 = mlx5dv_is_supported(ctx->device);
	FX_VERBS_OK(ibv_close_device(ctx));
	if (!mlx5)
		RC_SKIP("config: the device under test is rxe-like, which retries without end at "
			"retry_count 7 (measured on 6.1 and 7.2): a SEND to a vanished peer never completes");
	fx_need_local_passive();
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/event/vanish nth=1");
	add_for_me(spec);
	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	mr = ibv_reg_mr(fx.client->pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	FX_VERBS_OK(ibv_post_send(fx.client->qp, &wr, &bad));
	/* The retries take the CM's ACK timeout times retry_count, seconds on
	 * a loaded machine: wait for up to 30 s, not fx_poll_one's 5. */
	for (int tries = 0; ibv_poll_cq(fx.client->send_cq, 1, &wc) == 0; tries++) {
		if (tries == 30000)
			fail_msg("no completion within 30 s");
		usleep(1000);
	}
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	t0 = rc_now_ns();
	FX_OK(rdma_disconnect(fx.client));
	assert_true(fx_quiet(fx.server_ch, 300));
	assert_true(fx_quiet(fx.client_ch, 300));
	/* The DREQ's 16 tries, 74 s on the fabric's clock. */
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_DISCONNECTED, 5000);
	assert_int_equal(ev->status, -ETIMEDOUT);
	FX_OK(rdma_ack_cm_event(ev));
	if (rc_now_ns() - t0 < 70000000000u)
		fail_msg("DISCONNECTED %.1f s after rdma_disconnect: before the DREQ's retries",
			 (double)(rc_now_ns() - t0) / 1e9);
	FX_VERBS_OK(ibv_dereg_mr(mr));
	fx_release(&fx);
}

/* rdmamock_device_remove on a device in use, as `rdma link delete rxe0`
 * (measured on kernel 6.1): the listener, the client and the server each
 * read DEVICE_REMOVAL, status 0, at once; the QPs stay in RTS; the device
 * goes once the ids are destroyed. */
void rdmamock_device_remove__every_id_hears(void **state)
{
	int (*device_remove)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_device_remove");
	struct rdma_cm_id *heard[3];
	struct ibv_device **list;
	struct rdma_cm_event *ev;
	char name[64];
	int n;
	struct fx fx;

	rc_require_mock("removing a device is the mock's control API");
	fx_need_local_passive();
	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	snprintf(name, sizeof name, "%s", ibv_get_device_name(fx.client->verbs->device));
	assert_int_equal(device_remove(name), 0);
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_DEVICE_REMOVAL, 1000);
	assert_int_equal(ev->status, 0);
	heard[0] = ev->id;
	FX_OK(rdma_ack_cm_event(ev));
	for (int i = 1; i < 3; i++) {
		ev = fx_expect(fx.server_ch, RDMA_CM_EVENT_DEVICE_REMOVAL, 1000);
		assert_int_equal(ev->status, 0);
		heard[i] = ev->id;
		FX_OK(rdma_ack_cm_event(ev));
	}
	assert_ptr_equal(heard[0], fx.client);
	assert_true((heard[1] == fx.listener && heard[2] == fx.server) ||
		    (heard[1] == fx.server && heard[2] == fx.listener));
	assert_int_equal(qp_state(fx.client->qp), IBV_QPS_RTS);
	assert_int_equal(qp_state(fx.server->qp), IBV_QPS_RTS);
	fx_release(&fx);
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			fail_msg("%s is still listed after its last id was destroyed", name);
	ibv_free_device_list(list);
}

/* rdmamock/ibverbs/device_fatal at a QP's first ibv_post_send: the
 * context reads IBV_EVENT_DEVICE_FATAL; then commands fail with EIO, as on
 * a context uverbs disassociated: ibv_alloc_pd, ibv_query_port,
 * ibv_modify_qp, and ibv_destroy_qp unless RDMAV_ALLOW_DISASSOC_DESTROY is
 * set, when it succeeds. */
void ibv_post_send__fault_device_fatal(void **state)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	char keys[120];
	struct fx_qp q;

	rc_require_mock("faults are the mock's");
	fx_topology_call("rdmamock_device_fatal"); /* it removes the device: not on a shared fabric */
	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	snprintf(keys, sizeof keys, "rdmamock/ibverbs/device_fatal qpn=%u nth=1", q.qp->qp_num);
	add_for_me(keys);
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	fx_async_expect(q.ctx, IBV_EVENT_DEVICE_FATAL, 1000, &ev);
	ibv_ack_async_event(&ev);
	errno = 0;
	assert_null(ibv_alloc_pd(q.ctx));
	RC_ASSERT_ERRNO("ibv_alloc_pd", errno, EIO);
	RC_ASSERT_ERRNO("ibv_query_port", ibv_query_port(q.ctx, 1, &pa), EIO);
	RC_ASSERT_ERRNO("ibv_modify_qp", ibv_modify_qp(q.qp, &attr, IBV_QP_STATE), EIO);
	unsetenv("RDMAV_ALLOW_DISASSOC_DESTROY");
	RC_ASSERT_ERRNO("ibv_destroy_qp", ibv_destroy_qp(q.qp), EIO);
	setenv("RDMAV_ALLOW_DISASSOC_DESTROY", "1", 1);
	fx_qp_release(&q);
	unsetenv("RDMAV_ALLOW_DISASSOC_DESTROY");
}

/* rdmamock/rdmacm/event/addr_change nth=1: when the first connection is
 * up, its device's net device fails over: every id on the device (here
 * the client, the listener and the server, all on one device) reads
 * ADDR_CHANGE, status 0, and the connection goes on to a normal
 * disconnect. */
void rdma_connect__fault_addr_change(void **state)
{
	struct rdma_cm_event *ev;
	struct fx fx;

	rc_require_mock("faults are the mock's");
	fx_need_local_passive();
	fx_topology_call("rdmamock_addr_change"); /* every id of the device hears it */
	add_for_me("rdmamock/rdmacm/event/addr_change nth=1");
	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_ADDR_CHANGE, 1000);
	assert_int_equal(ev->status, 0);
	assert_ptr_equal(ev->id, fx.client);
	FX_OK(rdma_ack_cm_event(ev));
	for (int i = 0; i < 2; i++) {
		ev = fx_expect(fx.server_ch, RDMA_CM_EVENT_ADDR_CHANGE, 1000);
		assert_true(ev->id == fx.server || ev->id == fx.listener);
		FX_OK(rdma_ack_cm_event(ev));
	}
	FX_OK(rdma_disconnect(fx.client));
	fx_expect_ack(fx.server_ch, RDMA_CM_EVENT_DISCONNECTED, 1000);
	FX_OK(rdma_disconnect(fx.server));
	fx_expect_ack(fx.client_ch, RDMA_CM_EVENT_DISCONNECTED, 1000);
	fx_release(&fx);
}

/* rdmamock/rdmacm/event/delay ms=300: the REQ is held up on the way; the
 * listener hears of the request only after the delay, and the connection
 * then goes on as usual. */
void rdma_connect__fault_delay(void **state)
{
	char spec[160];
	struct fx fx;

	reach_route(&fx);
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/event/delay ms=300 port=%u pid=%d", (unsigned)fx.port,
		 (int)getpid());
	connect_with(&fx, spec, 1);
	assert_true(fx_quiet(fx.server_ch, 200));
	server_hears(&fx, 5000);
	fx_release(&fx);
}

/* rdmamock/ibverbs/delay nth=1 ms=200: the first send is held up, and the
 * second, posted after it, waits behind it; nothing completes before the
 * 200 ms are up (looked at after 100; a starved run may look later), then
 * both land in order. */
void ibv_post_send__fault_delay(void **state)
{
	struct ibv_sge sge, rsge[2];
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .num_sge = 1 }, *bad_rwr;
	uint64_t sends[2];
	struct ibv_wc wc;
	char keys[120];
	struct fx_qp q;
	int n = 0;
	uint64_t posted;
	int early;

	rc_require_mock("faults are the mock's");
	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	for (int i = 0; i < 2; i++) {
		rsge[i] = (struct ibv_sge){ .addr = (uintptr_t)q.buf + 16 + 16 * i, .length = 8,
					    .lkey = q.mr->lkey };
		rwr.wr_id = 100 + (uint64_t)i;
		rwr.sg_list = &rsge[i];
		FX_VERBS_OK(ibv_post_recv(q.qp, &rwr, &bad_rwr));
	}
	snprintf(keys, sizeof keys, "rdmamock/ibverbs/delay qpn=%u nth=1 ms=200", q.qp->qp_num);
	add_for_me(keys);
	posted = rc_now_ns();
	for (int i = 1; i <= 2; i++) {
		wr.wr_id = (uint64_t)i;
		FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	}
	rc_sleep_ms(100);
	early = ibv_poll_cq(q.cq, 1, &wc);
	assert_true(early >= 0);
	if (early && rc_now_ns() - posted < 200000000u)
		fail_msg("a completion (wr_id %llu) before the delay's 200 ms", (unsigned long long)wc.wr_id);
	for (int i = 0; i < 4; i++) {
		if (i > 0 || !early)
			fx_poll_one(q.cq, &wc);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		if (wc.opcode == IBV_WC_SEND)
			sends[n++] = wc.wr_id;
	}
	assert_int_equal(n, 2);
	assert_int_equal(sends[0], 1);
	assert_int_equal(sends[1], 2);
	fx_qp_release(&q);
}

/* A data-path fault aimed at a connection by its server's port: one aimed
 * at another port leaves this connection's SEND alone; one aimed at this
 * port fails the next with its status. */
void ibv_post_send__fault_aimed_by_connection(void **state)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED, .num_sge = 1 }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 9, .num_sge = 1 }, *bad_rwr;
	static char cbuf[16], sbuf[16];
	struct ibv_sge sge, rsge;
	struct ibv_mr *cmr, *smr;
	struct ibv_wc wc;
	char spec[160];
	struct fx fx;

	rc_require_mock("faults are the mock's");
	fx_need_local_passive();
	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	cmr = ibv_reg_mr(fx.client->pd, cbuf, sizeof cbuf, IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(fx.server->pd, sbuf, sizeof sbuf, IBV_ACCESS_LOCAL_WRITE);
	if (!cmr || !smr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	rsge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = 8, .lkey = smr->lkey };
	rwr.sg_list = &rsge;
	FX_VERBS_OK(ibv_post_recv(fx.server->qp, &rwr, &bad_rwr));
	sge = (struct ibv_sge){ .addr = (uintptr_t)cbuf, .length = 8, .lkey = cmr->lkey };
	wr.sg_list = &sge;
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/wc status=IBV_WC_REM_ACCESS_ERR port=%u",
		 (unsigned)fx.port + 1);
	add_for_me(spec);
	wr.wr_id = 1;
	FX_VERBS_OK(ibv_post_send(fx.client->qp, &wr, &bad));
	fx_poll_one(fx.client->send_cq, &wc);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/wc status=IBV_WC_REM_ACCESS_ERR addr=%s port=%u",
		 fx_addr(AF_INET), (unsigned)fx.port);
	add_for_me(spec);
	wr.wr_id = 2;
	FX_VERBS_OK(ibv_post_send(fx.client->qp, &wr, &bad));
	fx_poll_one(fx.client->send_cq, &wc);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	FX_VERBS_OK(ibv_dereg_mr(cmr));
	FX_VERBS_OK(ibv_dereg_mr(smr));
	fx_release(&fx);
}

/* rdmamock/rdmacm/event/delay at the REP and the DREQ (nth=2 and 3 of the
 * connection's messages: REQ, REP, DREQ): the client's CONNECT_RESPONSE
 * (without QPs) comes only after the delay, and the server's DISCONNECTED
 * only after the client's DREQ has been held up as long. */
void rdma_disconnect__fault_delay(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	char spec[160];
	struct fx fx;

	rc_require_mock("faults are the mock's");
	fx_need_local_passive();
	fx_reach_opts(&fx, AF_INET, FX_ROUTE_RESOLVED, FX_NO_QPS | FX_OTHER_DEVICE);
	snprintf(spec, sizeof spec, "rdmamock/rdmacm/event/delay ms=300 nth=2+ port=%u pid=%d", (unsigned)fx.port,
		 (int)getpid());
	add_for_me(spec);
	FX_OK(rdma_connect(fx.client, &param));
	server_hears(&fx, 2000);
	FX_OK(rdma_accept(fx.server, &param));
	assert_true(fx_quiet(fx.client_ch, 200));
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 2000);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_establish(fx.client)); /* the RTU: the server's ESTABLISHED */
	fx_expect_ack(fx.server_ch, RDMA_CM_EVENT_ESTABLISHED, 1000);
	FX_OK(rdma_disconnect(fx.client));
	assert_true(fx_quiet(fx.server_ch, 200));
	fx_expect_ack(fx.server_ch, RDMA_CM_EVENT_DISCONNECTED, 2000);
	fx_release(&fx);
}
