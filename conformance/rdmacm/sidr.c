/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_connect(), rdma_accept(), rdma_reject() and
 * rdma_disconnect() on RDMA_PS_UDP ids (the IB CM's service ID resolution,
 * SIDR): the UD data of CONNECT_REQUEST, ESTABLISHED and UNREACHABLE, the
 * private data limits, the QPs, and udaddy (librdmacm/examples) as two
 * threads. The passive side is always local: the two-host peer serves
 * RDMA_PS_TCP only. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cm_ud.h"
#include "fixtures.h"
#include "qp.h"

#define WAIT_MS 5000
#define QUIET_MS 500
#define REQ_MAX 180 /* SIDR REQ private data (216) less the CM header (36) */
#define REP_MAX 136 /* SIDR REP private data */
#define SIDR_UNSUPPORTED 1 /* IB_SIDR_UNSUPPORTED: nobody listens */
#define SIDR_REJECT 2      /* IB_SIDR_REJECT */
#define ROCE_HOP_LIMIT 64

static const char hello[] = "hello-from-client";
static const char accept_data[] = "accept-data";
static const char reject_data[] = "reject-data";

enum { CLIENT_QP = 1 << 0, SERVER_QP = 1 << 1, BOTH_QPS = CLIENT_QP | SERVER_QP };

struct sidr {
	int family;
	struct rdma_event_channel *server_ch, *client_ch;
	struct rdma_cm_id *listener, *client, *server;
	struct fx_udp client_ep, server_ep;
	struct rdma_cm_event *request; /* CONNECT_REQUEST, held until answered */
	struct rdma_cm_event *answer;  /* the client's ESTABLISHED or UNREACHABLE */
};

/* A UDP listener at fx_addr(family):fx_port(), and a client id routed to
 * port (a QP after ADDR_RESOLVED if asked). */
static void sidr_route(struct sidr *s, int family, uint16_t port, unsigned qps)
{
	struct sockaddr_storage addr;

	fx_need_local_passive();
	memset(s, 0, sizeof *s);
	s->family = family;
	s->server_ch = fx_channel();
	s->client_ch = fx_channel();
	fx_sockaddr(family, fx_addr(family), fx_port(), &addr);
	FX_OK(rdma_create_id(s->server_ch, &s->listener, s, RDMA_PS_UDP));
	FX_OK(rdma_bind_addr(s->listener, (struct sockaddr *)&addr));
	FX_OK(rdma_listen(s->listener, 8));
	fx_sockaddr(family, fx_addr(family), port, &addr);
	FX_OK(rdma_create_id(s->client_ch, &s->client, s, RDMA_PS_UDP));
	FX_OK(rdma_resolve_addr(s->client, NULL, (struct sockaddr *)&addr, 2000));
	fx_expect_ack(s->client_ch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS);
	fx_require_qp_type(s->client->verbs, IBV_QPT_UD);
	if (qps & CLIENT_QP)
		FX_UDP_OK(fx_udp_create(&s->client_ep, s->client, FX_UDP_DEPTH));
	FX_OK(rdma_resolve_route(s->client, 2000));
	fx_expect_ack(s->client_ch, RDMA_CM_EVENT_ROUTE_RESOLVED, WAIT_MS);
}

static int sidr_connect(struct sidr *s, const void *data, uint8_t len)
{
	struct rdma_conn_param param = { .private_data = data, .private_data_len = len };

	return rdma_connect(s->client, &param);
}

/* Up to the listener's CONNECT_REQUEST (held in s->request); the server's
 * QP, if asked, made then with receives posted. */
static void sidr_request(struct sidr *s, int family, unsigned qps, const void *data, uint8_t len)
{
	sidr_route(s, family, fx_port(), qps);
	FX_OK(sidr_connect(s, data, len));
	s->request = fx_expect(s->server_ch, RDMA_CM_EVENT_CONNECT_REQUEST, WAIT_MS);
	s->server = s->request->id;
	if (qps & SERVER_QP)
		FX_UDP_OK(fx_udp_create(&s->server_ep, s->server, FX_UDP_DEPTH));
}

static int sidr_accept(struct sidr *s, const void *data, uint8_t len, uint32_t qp_num)
{
	struct rdma_conn_param param = { .private_data = data, .private_data_len = len,
					 .qp_num = qp_num };
	int ret = rdma_accept(s->server, &param);

	FX_OK(rdma_ack_cm_event(s->request));
	s->request = NULL;
	return ret;
}

/* Accept with data and read the client's answer into s->answer. */
static void sidr_establish(struct sidr *s, int family, unsigned qps, const void *data, uint8_t len)
{
	sidr_request(s, family, qps, hello, sizeof hello);
	FX_OK(sidr_accept(s, data, len, 0));
	s->answer = fx_expect(s->client_ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
}

static void sidr_release(struct sidr *s)
{
	if (s->request)
		rdma_ack_cm_event(s->request);
	if (s->answer)
		rdma_ack_cm_event(s->answer);
	fx_udp_release(&s->client_ep);
	fx_udp_release(&s->server_ep);
	if (s->server)
		FX_OK(rdma_destroy_id(s->server));
	if (s->client)
		FX_OK(rdma_destroy_id(s->client));
	if (s->listener)
		FX_OK(rdma_destroy_id(s->listener));
	if (s->client_ch)
		rdma_destroy_event_channel(s->client_ch);
	if (s->server_ch)
		rdma_destroy_event_channel(s->server_ch);
	memset(s, 0, sizeof *s);
}

/* The private data is data, then zeros up to len. */
static void assert_private_data(const struct rdma_ud_param *ud, uint8_t len, const void *data,
				size_t data_len)
{
	const uint8_t *p = ud->private_data;

	assert_int_equal(ud->private_data_len, len);
	assert_non_null(p);
	if (data_len)
		assert_memory_equal(p, data, data_len);
	for (size_t i = data_len; i < len; i++)
		if (p[i])
			fail_msg("private data byte %zu is 0x%02x, not 0", i, p[i]);
}

static void assert_qp_state(struct ibv_qp *qp, enum ibv_qp_state want, uint32_t qkey)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	FX_VERBS_OK(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_QKEY, &init));
	assert_string_equal(fx_qp_state_name(attr.qp_state), fx_qp_state_name(want));
	if (want != IBV_QPS_ERR)
		assert_int_equal(attr.qkey, qkey);
}

/* ---------------------------------------------------------------- the request */

static void request_private_data(int family)
{
	const struct rdma_ud_param *ud;
	struct sidr s;

	sidr_request(&s, family, CLIENT_QP, hello, sizeof hello);
	ud = &s.request->param.ud;
	assert_ptr_equal(s.request->listen_id, s.listener);
	assert_int_equal(s.request->status, 0);
	assert_private_data(ud, REQ_MAX, hello, sizeof hello);
	assert_int_equal(ud->qp_num, 0);
	assert_int_equal(ud->qkey, 0);
	assert_int_equal(ud->ah_attr.is_global, 0);
	assert_int_equal(ud->ah_attr.port_num, 0);
	assert_int_equal(ud->ah_attr.dlid, 0);
	assert_int_equal(ud->ah_attr.grh.hop_limit, 0);
	assert_null(s.server->qp);
	sidr_release(&s);
}

void rdma_connect__udp_request_private_data_ipv4(void **state) { request_private_data(AF_INET); }
void rdma_connect__udp_request_private_data_ipv6(void **state) { request_private_data(AF_INET6); }

/* ---------------------------------------------------------------- ESTABLISHED */

static void established(int family)
{
	const struct rdma_ud_param *ud;
	union ibv_gid server_gid;
	struct sidr s;
	int sgid;

	sidr_establish(&s, family, BOTH_QPS, accept_data, sizeof accept_data);
	ud = &s.answer->param.ud;
	assert_ptr_equal(s.answer->id, s.client);
	assert_int_equal(s.answer->status, 0);
	assert_int_equal(ud->qp_num, s.server->qp->qp_num);
	assert_int_equal(ud->qkey, RDMA_UDP_QKEY);
	assert_int_equal(ud->ah_attr.port_num, s.client->port_num);
	if (fx_port_ib(s.client->verbs, s.client->port_num)) {
		struct ibv_port_attr port;

		/* Within the subnet the SA's path has hop limit 0: the
		 * server's LID, no GRH (ib_init_ah_attr_from_path). */
		FX_VERBS_OK(ibv_query_port(s.server->verbs, s.server->port_num, &port));
		assert_int_equal(ud->ah_attr.is_global, 0);
		assert_int_equal(ud->ah_attr.dlid, port.lid);
		sidr_release(&s);
		return;
	}
	assert_int_equal(ud->ah_attr.is_global, 1);
	assert_int_equal(ud->ah_attr.grh.hop_limit, ROCE_HOP_LIMIT);
	fx_udp_addr_gid(rdma_get_peer_addr(s.client), &server_gid);
	assert_memory_equal(&ud->ah_attr.grh.dgid, &server_gid, sizeof server_gid);
	sgid = fx_udp_gid_index(s.client, rdma_get_local_addr(s.client));
	if (sgid < 0)
		fail_msg("no RoCE v2 GID holds the client's address");
	assert_int_equal(ud->ah_attr.grh.sgid_index, sgid);
	sidr_release(&s);
}

void rdma_connect__udp_established_ipv4(void **state) { established(AF_INET); }
void rdma_connect__udp_established_ipv6(void **state) { established(AF_INET6); }

void rdma_accept__udp_private_data(void **state)
{
	struct sidr s;

	sidr_establish(&s, AF_INET, BOTH_QPS, accept_data, sizeof accept_data);
	assert_private_data(&s.answer->param.ud, REP_MAX, accept_data, sizeof accept_data);
	sidr_release(&s);
}

void rdma_accept__udp_without_private_data(void **state)
{
	struct sidr s;

	sidr_establish(&s, AF_INET, BOTH_QPS, NULL, 0);
	assert_private_data(&s.answer->param.ud, REP_MAX, NULL, 0);
	sidr_release(&s);
}

static void fill_pattern(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)('A' + i % 26);
}

void rdma_accept__udp_private_data_136(void **state)
{
	uint8_t data[REP_MAX];
	struct sidr s;

	fill_pattern(data, sizeof data);
	sidr_establish(&s, AF_INET, BOTH_QPS, data, sizeof data);
	assert_private_data(&s.answer->param.ud, REP_MAX, data, sizeof data);
	sidr_release(&s);
}

/* Three messages along the event's address, each received with a GRH on
 * RoCE, without one within an InfiniBand subnet (the 40 bytes are still
 * the buffer's and byte_len's, as IPoIB counts on). */
static void send_to_server(int family)
{
	struct ibv_wc wc;
	struct sidr s;
	bool ib;

	sidr_establish(&s, family, BOTH_QPS, NULL, 0);
	ib = fx_port_ib(s.server->verbs, s.server->port_num);
	FX_UDP_OK(fx_udp_target(&s.client_ep, &s.answer->param.ud));
	for (uint8_t i = 1; i <= 3; i++) {
		FX_UDP_OK(fx_udp_send(&s.client_ep, i, FX_UDP_MSG, false));
		FX_UDP_OK(fx_udp_recv(&s.server_ep, &wc));
		assert_int_equal(wc.opcode, IBV_WC_RECV);
		assert_int_equal(wc.byte_len, FX_UDP_MSG + FX_UDP_GRH);
		assert_int_equal(!!(wc.wc_flags & IBV_WC_GRH), !ib);
		assert_int_equal(wc.qp_num, s.server->qp->qp_num);
		assert_int_equal(wc.src_qp, s.client->qp->qp_num);
		assert_int_equal(fx_udp_payload(&s.server_ep, &wc)[0], i);
	}
	sidr_release(&s);
}

void rdma_connect__udp_send_to_server_ipv4(void **state) { send_to_server(AF_INET); }
void rdma_connect__udp_send_to_server_ipv6(void **state) { send_to_server(AF_INET6); }

/* ---------------------------------------------------------------- QPs */

void rdma_create_qp__udp_rts_active(void **state)
{
	struct sidr s;

	sidr_route(&s, AF_INET, fx_port(), CLIENT_QP);
	assert_int_equal(s.client->qp->qp_type, IBV_QPT_UD);
	assert_qp_state(s.client->qp, IBV_QPS_RTS, RDMA_UDP_QKEY);
	sidr_release(&s);
}

void rdma_create_qp__udp_rts_passive(void **state)
{
	struct sidr s;

	sidr_request(&s, AF_INET, BOTH_QPS, hello, sizeof hello);
	assert_qp_state(s.server->qp, IBV_QPS_RTS, RDMA_UDP_QKEY);
	sidr_release(&s);
}

/* ---------------------------------------------------------------- after the answer */

void rdma_accept__udp_no_server_event(void **state)
{
	struct sidr s;

	sidr_establish(&s, AF_INET, BOTH_QPS, NULL, 0);
	assert_true(fx_quiet(s.server_ch, QUIET_MS));
	sidr_release(&s);
}

void rdma_disconnect__udp_no_event(void **state)
{
	bool client_quiet, server_quiet;
	struct sidr s;

	sidr_establish(&s, AF_INET, BOTH_QPS, NULL, 0);
	FX_OK(rdma_disconnect(s.client));
	FX_OK(rdma_disconnect(s.server));
	client_quiet = fx_quiet(s.client_ch, QUIET_MS);
	server_quiet = fx_quiet(s.server_ch, QUIET_MS);
	rc_note_documented(!client_quiet && !server_quiet);
	assert_true(client_quiet);
	assert_true(server_quiet);
	sidr_release(&s);
}

void rdma_disconnect__udp_qp_err(void **state)
{
	struct sidr s;

	sidr_establish(&s, AF_INET, BOTH_QPS, NULL, 0);
	FX_OK(rdma_disconnect(s.client));
	assert_qp_state(s.client->qp, IBV_QPS_ERR, 0);
	FX_OK(rdma_disconnect(s.server));
	assert_qp_state(s.server->qp, IBV_QPS_ERR, 0);
	sidr_release(&s);
}

/* ---------------------------------------------------------------- refusals */

static void expect_unreachable(struct sidr *s, int status, const void *data, size_t len)
{
	s->answer = fx_expect(s->client_ch, RDMA_CM_EVENT_UNREACHABLE, WAIT_MS);
	assert_ptr_equal(s->answer->id, s->client);
	assert_int_equal(s->answer->status, status);
	assert_private_data(&s->answer->param.ud, REP_MAX, data, len);
}

void rdma_reject__udp_unreachable(void **state)
{
	struct sidr s;

	sidr_request(&s, AF_INET, CLIENT_QP, hello, sizeof hello);
	FX_OK(rdma_reject(s.server, reject_data, sizeof reject_data));
	expect_unreachable(&s, SIDR_REJECT, reject_data, sizeof reject_data);
	assert_true(fx_quiet(s.server_ch, QUIET_MS));
	sidr_release(&s);
}

void rdma_reject__udp_without_private_data(void **state)
{
	struct sidr s;

	sidr_request(&s, AF_INET, CLIENT_QP, hello, sizeof hello);
	FX_OK(rdma_reject(s.server, NULL, 0));
	expect_unreachable(&s, SIDR_REJECT, NULL, 0);
	sidr_release(&s);
}

void rdma_reject__udp_private_data_137(void **state)
{
	uint8_t data[REP_MAX + 1];
	struct sidr s;

	fill_pattern(data, sizeof data);
	sidr_request(&s, AF_INET, CLIENT_QP, hello, sizeof hello);
	errno = 0;
	assert_int_equal(rdma_reject(s.server, data, sizeof data), -1);
	RC_ASSERT_ERRNO("rdma_reject", errno, EINVAL);
	assert_true(fx_quiet(s.client_ch, QUIET_MS));
	FX_OK(rdma_reject(s.server, data, REP_MAX));
	expect_unreachable(&s, SIDR_REJECT, data, REP_MAX);
	sidr_release(&s);
}

/* The lookup goes to the target: the peer in two-host mode, where no
 * UDP listener is either. */
void rdma_connect__udp_no_listener(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage addr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	fx_sockaddr(AF_INET, fx_target_addr(AF_INET), fx_free_port(), &addr);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS);
	FX_OK(rdma_resolve_route(id, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, WAIT_MS);
	fx_require_qp_type(id->verbs, IBV_QPT_UD);
	FX_OK(rdma_connect(id, &(struct rdma_conn_param){ .private_data = hello,
							 .private_data_len = sizeof hello }));
	ev = fx_expect(ch, RDMA_CM_EVENT_UNREACHABLE, WAIT_MS);
	assert_int_equal(ev->status, SIDR_UNSUPPORTED);
	assert_private_data(&ev->param.ud, REP_MAX, NULL, 0);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* ---------------------------------------------------------------- private data limits */

void rdma_connect__udp_private_data_180(void **state)
{
	uint8_t data[REQ_MAX];
	struct sidr s;

	fill_pattern(data, sizeof data);
	sidr_request(&s, AF_INET, CLIENT_QP, data, sizeof data);
	assert_private_data(&s.request->param.ud, REQ_MAX, data, sizeof data);
	sidr_release(&s);
}

void rdma_connect__udp_private_data_181(void **state)
{
	uint8_t data[REQ_MAX + 1];
	struct sidr s;

	fill_pattern(data, sizeof data);
	sidr_route(&s, AF_INET, fx_port(), CLIENT_QP);
	errno = 0;
	assert_int_equal(sidr_connect(&s, data, sizeof data), -1);
	RC_ASSERT_ERRNO("rdma_connect", errno, EINVAL);
	assert_true(fx_quiet(s.client_ch, QUIET_MS));
	assert_true(fx_quiet(s.server_ch, 0));
	sidr_release(&s);
}

void rdma_accept__udp_private_data_137(void **state)
{
	uint8_t data[REP_MAX + 1];
	struct sidr s;

	fill_pattern(data, sizeof data);
	sidr_request(&s, AF_INET, BOTH_QPS, hello, sizeof hello);
	errno = 0;
	assert_int_equal(sidr_accept(&s, data, sizeof data, 0), -1);
	RC_ASSERT_ERRNO("rdma_accept", errno, EINVAL);
	expect_unreachable(&s, SIDR_REJECT, NULL, 0);
	sidr_release(&s);
}

/* ---------------------------------------------------------------- without QPs */

#define SOME_QPN 0x1234

void rdma_connect__udp_without_qp(void **state)
{
	struct sidr s;

	sidr_request(&s, AF_INET, SERVER_QP, hello, sizeof hello);
	assert_null(s.client->qp);
	assert_private_data(&s.request->param.ud, REQ_MAX, hello, sizeof hello);
	FX_OK(sidr_accept(&s, NULL, 0, 0));
	s.answer = fx_expect(s.client_ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
	assert_int_equal(s.answer->param.ud.qp_num, s.server->qp->qp_num);
	sidr_release(&s);
}

void rdma_accept__udp_qp_num_without_qp(void **state)
{
	struct sidr s;

	sidr_request(&s, AF_INET, 0, hello, sizeof hello);
	FX_OK(sidr_accept(&s, NULL, 0, SOME_QPN));
	s.answer = fx_expect(s.client_ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
	assert_int_equal(s.answer->param.ud.qp_num, SOME_QPN);
	assert_int_equal(s.answer->param.ud.qkey, RDMA_UDP_QKEY);
	sidr_release(&s);
}

void rdma_accept__udp_qp_num_ignored_with_qp(void **state)
{
	struct sidr s;

	sidr_request(&s, AF_INET, BOTH_QPS, hello, sizeof hello);
	FX_OK(sidr_accept(&s, NULL, 0, SOME_QPN));
	s.answer = fx_expect(s.client_ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
	assert_int_equal(s.answer->param.ud.qp_num, s.server->qp->qp_num);
	sidr_release(&s);
}

static struct rdma_cm_id *qpless_server;

static void accept_null_param(void *arg)
{
	rdma_accept(qpless_server, NULL);
}

void rdma_accept__udp_no_qp_null_param(void **state)
{
	struct sidr s;

	sidr_request(&s, AF_INET, 0, hello, sizeof hello);
	qpless_server = s.server;
	fx_assert_crashes(accept_null_param, "rdma_accept");
	sidr_release(&s);
}

/* ---------------------------------------------------------------- udaddy */

/* udaddy's defaults: one connection, 10 messages (of 100 bytes there; of
 * one fixture message here). Each side is a thread with its own event
 * channel; neither may fail the test itself (cmocka fails on the test's
 * thread only), so each keeps its first failure for the test to report. */
#define MESSAGES 10
#define THREAD_WAIT_S 10

struct side {
	const char *name;
	struct sockaddr_storage addr; /* the server's */
	sem_t *listening;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id, *listener;
	struct fx_udp ep;
	char error[320];
};

/* udaddy's server: listen, accept with its QP (conn_param.qp_num), receive,
 * answer each message through an AH made from the first completion. */
static void *udaddy_server(void *arg)
{
	struct side *t = arg;
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event *ev = NULL;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;

	FX_THREAD_CALL(t, rdma_create_id(t->ch, &t->listener, t, RDMA_PS_UDP));
	FX_THREAD_CALL(t, rdma_bind_addr(t->listener, (struct sockaddr *)&t->addr));
	FX_THREAD_CALL(t, rdma_listen(t->listener, 0));
	sem_post(t->listening);
	FX_THREAD_TRY(t, fx_udp_event(t->ch, RDMA_CM_EVENT_CONNECT_REQUEST, WAIT_MS, &ev));
	t->id = ev->id;
	FX_THREAD_TRY(t, fx_udp_create(&t->ep, t->id, MESSAGES));
	param.qp_num = t->id->qp->qp_num;
	FX_THREAD_CALL(t, rdma_accept(t->id, &param));
	FX_THREAD_TRY(t, fx_udp_recv_n(&t->ep, MESSAGES, &wc));
	t->ep.ah = ibv_create_ah_from_wc(t->ep.pd, &wc, (struct ibv_grh *)t->ep.mem.recv[wc.wr_id],
					 t->id->port_num);
	if (!t->ep.ah)
		FX_THREAD_TRY(t, "ibv_create_ah_from_wc failed");
	t->ep.remote_qpn = ntohl(wc.imm_data);
	FX_THREAD_CALL(t, ibv_query_qp(t->id->qp, &attr, IBV_QP_QKEY, &init));
	t->ep.remote_qkey = attr.qkey;
	FX_THREAD_TRY(t, fx_udp_send_n(&t->ep, MESSAGES));
out:
	sem_post(t->listening); /* after a failure the client gives up at once */
	if (ev)
		rdma_ack_cm_event(ev);
	return NULL;
}

/* udaddy's client: resolve, route, QP and receives, connect; on
 * ESTABLISHED an AH from param.ud; send, then receive the replies. */
static void *udaddy_client(void *arg)
{
	struct side *t = arg;
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event *ev = NULL;

	FX_THREAD_CALL(t, rdma_create_id(t->ch, &t->id, t, RDMA_PS_UDP));
	FX_THREAD_TRY(t, fx_sem_wait(t->listening, 1, THREAD_WAIT_S, "the server was not listening"));
	FX_THREAD_CALL(t, rdma_resolve_addr(t->id, NULL, (struct sockaddr *)&t->addr, 2000));
	FX_THREAD_TRY(t, fx_udp_event(t->ch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS, &ev));
	rdma_ack_cm_event(ev);
	ev = NULL;
	FX_THREAD_CALL(t, rdma_resolve_route(t->id, 2000));
	FX_THREAD_TRY(t, fx_udp_event(t->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, WAIT_MS, &ev));
	rdma_ack_cm_event(ev);
	ev = NULL;
	FX_THREAD_TRY(t, fx_udp_create(&t->ep, t->id, MESSAGES));
	FX_THREAD_CALL(t, rdma_connect(t->id, &param));
	FX_THREAD_TRY(t, fx_udp_event(t->ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS, &ev));
	FX_THREAD_TRY(t, fx_udp_target(&t->ep, &ev->param.ud));
	FX_THREAD_TRY(t, fx_udp_send_n(&t->ep, MESSAGES));
	FX_THREAD_TRY(t, fx_udp_recv_n(&t->ep, MESSAGES, NULL));
out:
	if (ev)
		rdma_ack_cm_event(ev);
	return NULL;
}

static void side_release(struct side *t)
{
	fx_udp_release(&t->ep);
	if (t->id)
		rdma_destroy_id(t->id);
	if (t->listener)
		rdma_destroy_id(t->listener);
	rdma_destroy_event_channel(t->ch);
}

void rdma_connect__udaddy_two_threads(void **state)
{
	struct side server = { .name = "server" }, client = { .name = "client" };
	pthread_t threads[2];
	sem_t listening;

	fx_need_local_passive();
	fx_require_qp_type_under_test(IBV_QPT_UD);
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &server.addr);
	client.addr = server.addr;
	server.ch = fx_channel();
	client.ch = fx_channel();
	assert_int_equal(sem_init(&listening, 0, 0), 0);
	server.listening = client.listening = &listening;
	assert_int_equal(pthread_create(&threads[0], NULL, udaddy_server, &server), 0);
	assert_int_equal(pthread_create(&threads[1], NULL, udaddy_client, &client), 0);
	pthread_join(threads[1], NULL);
	pthread_join(threads[0], NULL);
	sem_destroy(&listening);
	side_release(&client);
	side_release(&server);
	if (server.error[0])
		fail_msg("%s", server.error);
	if (client.error[0])
		fail_msg("%s", client.error);
}
