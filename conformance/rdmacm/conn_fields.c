/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: every field of the events of a connection's life
 * (param.conn, status, id, listen_id), the addresses on each side, and the
 * QP attributes the CM programs on each side (ibv_query_qp,
 * rdma_init_qp_attr). The two sides offer different depths and retry
 * counts, so a value taken from the wrong side or message shows. */
#include <arpa/inet.h>
#include <string.h>

#include "link.h"
#include "qp.h"

/* The REQ and REP sizes of private data a RoCE connection carries: the IB
 * CM's message sizes (92, 196, 148) less the CMA header in a REQ (36). */
#define REQ_DATA 56
#define REP_DATA 196
#define REJ_DATA 148
#define REJ_CONSUMER 28

static const char req_data[] = "rdmacheck-req";
static const char rep_data[] = "rdmacheck-rep";

static const struct rdma_conn_param cparam = {
	.private_data = req_data, .private_data_len = sizeof req_data,
	.responder_resources = 4, .initiator_depth = 2, .flow_control = 1,
	.retry_count = 5, .rnr_retry_count = 6,
};

static const struct rdma_conn_param sparam = {
	.private_data = rep_data, .private_data_len = sizeof rep_data,
	.responder_resources = 1, .initiator_depth = 2, .flow_control = 1,
	.rnr_retry_count = 3,
};

static void data_field(struct fx_fields *f, const char *what, const struct rdma_conn_param *p,
		       const char *want, size_t want_len, size_t len)
{
	uint8_t expect[256] = { 0 };

	memcpy(expect, want, want_len);
	fx_field_mem(f, what, p->private_data, expect, len);
}

static void addr_field(struct fx_fields *f, const char *what, struct sockaddr *got,
		       const char *addr, uint16_t port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)got;
	struct sockaddr_in want;

	inet_pton(AF_INET, addr, &want.sin_addr);
	fx_field(f, what, got->sa_family, AF_INET);
	fx_field(f, what, ntohl(in->sin_addr.s_addr), ntohl(want.sin_addr.s_addr));
	fx_field(f, what, ntohs(in->sin_port), port);
}

/* ---------------------------------------------------------------- events */

void rdma_get_cm_event__connect_request_fields(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;
	const struct rdma_cm_event *ev = &l.req.ev;
	const struct rdma_conn_param *p = &ev->param.conn;
	uint16_t cport;

	fx_link_request(&l, fx_addr(AF_INET), &cparam);
	fx_require_ib_cm(l.c.id, FX_IWARP_NO_IB_CM_FIELDS);
	cport = fx_src_port(l.c.id);
	FX_FIELD(&f, ev->status, 0);
	FX_FIELD(&f, ev->listen_id == l.listener, 1);
	FX_FIELD(&f, ev->id == l.s.id && ev->id != l.listener, 1);
	FX_FIELD(&f, p->private_data_len, REQ_DATA);
	data_field(&f, "private_data", p, req_data, sizeof req_data, REQ_DATA);
	/* Seen from the passive end: the REQ's initiator depth is what it
	 * must answer, its responder resources what it may ask for. */
	FX_FIELD(&f, p->responder_resources, cparam.initiator_depth);
	FX_FIELD(&f, p->initiator_depth, cparam.responder_resources);
	FX_FIELD(&f, p->flow_control, 1);
	FX_FIELD(&f, p->retry_count, cparam.retry_count);
	FX_FIELD(&f, p->rnr_retry_count, cparam.rnr_retry_count);
	FX_FIELD(&f, p->srq, 0);
	FX_FIELD(&f, p->qp_num, l.c.id->qp->qp_num);
	addr_field(&f, "server local", rdma_get_local_addr(l.s.id), l.addr, fx_port());
	addr_field(&f, "server peer", rdma_get_peer_addr(l.s.id), l.addr, cport);
	fx_fields_done(&f);
	fx_link_release(&l);
}

void rdma_get_cm_event__established_active_fields(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;
	const struct rdma_cm_event *ev = &l.c_est.ev;
	const struct rdma_conn_param *p = &ev->param.conn;

	fx_link_request(&l, fx_addr(AF_INET), &cparam);
	fx_require_ib_cm(l.c.id, FX_IWARP_NO_IB_CM_FIELDS);
	fx_link_accept(&l, &sparam);
	FX_FIELD(&f, ev->status, 0);
	FX_FIELD(&f, ev->id == l.c.id, 1);
	FX_FIELD(&f, ev->listen_id == NULL, 1);
	FX_FIELD(&f, p->private_data_len, REP_DATA);
	data_field(&f, "private_data", p, rep_data, sizeof rep_data, REP_DATA);
	FX_FIELD(&f, p->responder_resources, sparam.initiator_depth);
	FX_FIELD(&f, p->initiator_depth, sparam.responder_resources);
	FX_FIELD(&f, p->flow_control, 1);
	FX_FIELD(&f, p->retry_count, 0);
	FX_FIELD(&f, p->rnr_retry_count, sparam.rnr_retry_count);
	FX_FIELD(&f, p->srq, 0);
	FX_FIELD(&f, p->qp_num, l.s.id->qp->qp_num);
	addr_field(&f, "client local", rdma_get_local_addr(l.c.id), l.addr, fx_src_port(l.c.id));
	addr_field(&f, "client peer", rdma_get_peer_addr(l.c.id), l.addr, fx_port());
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* The active side's ESTABLISHED when the passive side accepts with
 * librdmacm's defaults (conn_param NULL): the depths the REQ asked for,
 * capped by the device; the REP's flow control 0 and RNR retry 7; its
 * private data all zeros. */
void rdma_get_cm_event__established_active_accept_defaults(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;
	const struct rdma_cm_event *ev = &l.c_est.ev;
	const struct rdma_conn_param *p = &ev->param.conn;

	fx_link_request(&l, fx_addr(AF_INET), &cparam);
	fx_require_ib_cm(l.c.id, FX_IWARP_NO_IB_CM_FIELDS);
	fx_link_accept_as_given(&l, NULL);
	FX_FIELD(&f, ev->status, 0);
	FX_FIELD(&f, p->private_data_len, REP_DATA);
	data_field(&f, "private_data", p, "", 0, REP_DATA);
	FX_FIELD(&f, p->responder_resources, cparam.responder_resources);
	FX_FIELD(&f, p->initiator_depth, cparam.initiator_depth);
	FX_FIELD(&f, p->flow_control, 0);
	FX_FIELD(&f, p->retry_count, 0);
	FX_FIELD(&f, p->rnr_retry_count, 7);
	FX_FIELD(&f, p->srq, 0);
	FX_FIELD(&f, p->qp_num, l.s.id->qp->qp_num);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* The same with RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH asked of
 * rdma_accept, flow control 0 and no private data: the depths are the
 * REQ's, capped by the device, and the rest is as given. */
void rdma_get_cm_event__established_active_accept_max_depths(void **state)
{
	struct rdma_conn_param s = { .responder_resources = RDMA_MAX_RESP_RES,
				     .initiator_depth = RDMA_MAX_INIT_DEPTH, .rnr_retry_count = 2,
				     .retry_count = 4 };
	struct fx_fields f = { 0 };
	struct fx_link l;
	const struct rdma_conn_param *p = &l.c_est.ev.param.conn;

	fx_link_request(&l, fx_addr(AF_INET), &cparam);
	fx_require_ib_cm(l.c.id, FX_IWARP_NO_IB_CM_FIELDS);
	fx_link_accept_as_given(&l, &s);
	FX_FIELD(&f, p->private_data_len, REP_DATA);
	data_field(&f, "private_data", p, "", 0, REP_DATA);
	FX_FIELD(&f, p->responder_resources, cparam.responder_resources);
	FX_FIELD(&f, p->initiator_depth, cparam.initiator_depth);
	FX_FIELD(&f, p->flow_control, 0);
	FX_FIELD(&f, p->retry_count, 0);
	FX_FIELD(&f, p->rnr_retry_count, 2);
	fx_fields_done(&f);
	fx_link_release(&l);
}

static void no_conn_param(struct fx_fields *f, const struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *p = &ev->param.conn;

	FX_FIELD(f, ev->status, 0);
	FX_FIELD(f, ev->listen_id == NULL, 1);
	FX_FIELD(f, p->private_data == NULL, 1);
	FX_FIELD(f, p->private_data_len, 0);
	FX_FIELD(f, p->responder_resources, 0);
	FX_FIELD(f, p->initiator_depth, 0);
	FX_FIELD(f, p->flow_control, 0);
	FX_FIELD(f, p->retry_count, 0);
	FX_FIELD(f, p->rnr_retry_count, 0);
	FX_FIELD(f, p->srq, 0);
	FX_FIELD(f, p->qp_num, 0);
}

void rdma_get_cm_event__established_passive_fields(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;

	fx_link_request(&l, fx_addr(AF_INET), &cparam);
	fx_require_ib_cm(l.c.id, FX_IWARP_NO_IB_CM_FIELDS);
	fx_link_accept(&l, &sparam);
	FX_FIELD(&f, l.s_est.ev.id == l.s.id, 1);
	no_conn_param(&f, &l.s_est.ev);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* Both DISCONNECTEDs: the passive side's (the DREQ) and the active side's
 * (the DREP once the passive side disconnects). */
void rdma_get_cm_event__disconnected_fields(void **state)
{
	struct fx_fields f = { 0 };
	struct rdma_cm_event *ev;
	struct fx_link l;

	fx_link_up(&l, &cparam, &sparam);
	FX_OK(rdma_disconnect(l.c.id));
	ev = fx_expect(l.server_ch, RDMA_CM_EVENT_DISCONNECTED, 5000);
	FX_FIELD(&f, ev->id == l.s.id, 1);
	no_conn_param(&f, ev);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_disconnect(l.s.id));
	ev = fx_expect(l.client_ch, RDMA_CM_EVENT_DISCONNECTED, 5000);
	FX_FIELD(&f, ev->id == l.c.id, 1);
	no_conn_param(&f, ev);
	FX_OK(rdma_ack_cm_event(ev));
	fx_fields_done(&f);
	fx_link_release(&l);
}

void rdma_get_cm_event__rejected_fields(void **state)
{
	static const char why[] = "no room";
	struct fx_fields f = { 0 };
	struct rdma_cm_event *ev;
	struct fx_link l;

	fx_link_request(&l, fx_addr(AF_INET), &cparam);
	FX_OK(rdma_reject(l.s.id, why, sizeof why));
	ev = fx_expect(l.client_ch, RDMA_CM_EVENT_REJECTED, 5000);
	FX_FIELD(&f, ev->status, fx_reject_status(l.c.id, REJ_CONSUMER));
	FX_FIELD(&f, ev->id == l.c.id, 1);
	FX_FIELD(&f, ev->listen_id == NULL, 1);
	FX_FIELD(&f, ev->param.conn.private_data_len, fx_private_data_len(l.c.id, sizeof why, REJ_DATA));
	data_field(&f, "private_data", &ev->param.conn, why, sizeof why,
		   fx_private_data_len(l.c.id, sizeof why, REJ_DATA));
	FX_FIELD(&f, ev->param.conn.qp_num, 0);
	FX_FIELD(&f, ev->param.conn.responder_resources, 0);
	FX_FIELD(&f, ev->param.conn.initiator_depth, 0);
	FX_OK(rdma_ack_cm_event(ev));
	/* librdmacm moves the active side's QP to ERR on REJECTED; the
	 * passive side's stays in INIT, where rdma_create_qp left it. */
	FX_FIELD(&f, fx_qp_state(l.c.id->qp), IBV_QPS_ERR);
	FX_FIELD(&f, fx_qp_state(l.s.id->qp), IBV_QPS_INIT);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* The private data's buffer on every transport: the peer's bytes, then
 * zeros to the IB CM message's field, or on iWARP just the bytes sent. */
void rdma_get_cm_event__private_data_len(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;
	const struct rdma_conn_param *req = &l.req.ev.param.conn, *est = &l.c_est.ev.param.conn;
	unsigned req_len, rep_len;

	fx_link_request(&l, fx_addr(AF_INET), &cparam);
	fx_link_accept(&l, &sparam);
	req_len = fx_private_data_len(l.c.id, sizeof req_data, REQ_DATA);
	rep_len = fx_private_data_len(l.c.id, sizeof rep_data, REP_DATA);
	FX_FIELD(&f, req->private_data_len, req_len);
	data_field(&f, "CONNECT_REQUEST private_data", req, req_data, sizeof req_data, req_len);
	FX_FIELD(&f, est->private_data_len, rep_len);
	data_field(&f, "ESTABLISHED private_data", est, rep_data, sizeof rep_data, rep_len);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* The events before a connection: ADDR_RESOLVED and ROUTE_RESOLVED carry
 * no parameters (librdmacm clears the event; the kernel's is empty). */
void rdma_get_cm_event__resolution_fields(void **state)
{
	static const enum rdma_cm_event_type types[] = { RDMA_CM_EVENT_ADDR_RESOLVED,
							 RDMA_CM_EVENT_ROUTE_RESOLVED };
	struct rdma_event_channel *ch = fx_channel();
	struct fx_fields f = { 0 };
	struct sockaddr_storage sa;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &sa);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 2000));
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		if (i)
			FX_OK(rdma_resolve_route(id, 2000));
		ev = fx_expect(ch, types[i], 5000);
		FX_FIELD(&f, ev->id == id, 1);
		no_conn_param(&f, ev);
		FX_OK(rdma_ack_cm_event(ev));
	}
	fx_fields_done(&f);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* TIMEWAIT_EXIT on each side once both have disconnected: no parameters. */
void rdma_get_cm_event__timewait_exit_fields(void **state)
{
	struct fx_fields f = { 0 };
	struct rdma_cm_event *ev;
	struct fx_link l;

	fx_link_up(&l, &cparam, &sparam);
	fx_require_ib_cm(l.c.id, FX_IWARP_NO_TIMEWAIT);
	FX_OK(rdma_disconnect(l.c.id));
	fx_expect_ack(l.server_ch, RDMA_CM_EVENT_DISCONNECTED, 5000);
	FX_OK(rdma_disconnect(l.s.id));
	fx_expect_ack(l.client_ch, RDMA_CM_EVENT_DISCONNECTED, 5000);
	ev = fx_expect(l.client_ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 5000);
	FX_FIELD(&f, ev->id == l.c.id, 1);
	no_conn_param(&f, ev);
	FX_OK(rdma_ack_cm_event(ev));
	ev = fx_expect(l.server_ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 5000);
	FX_FIELD(&f, ev->id == l.s.id, 1);
	no_conn_param(&f, ev);
	FX_OK(rdma_ack_cm_event(ev));
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* Without QPs the active side reads CONNECT_RESPONSE: the REP's fields as
 * ESTABLISHED has them with a QP, the QP number the passive side gave in
 * its conn_param. Each side names a QP number of its own, so the IB CM
 * does not take the REP for a stale connection's (as it does when both
 * are 0 on one device). */
void rdma_get_cm_event__connect_response_fields(void **state)
{
	struct rdma_conn_param c = cparam, s = sparam;
	struct rdma_event_channel *cch, *sch;
	struct rdma_cm_id *listener, *client, *server;
	struct fx_fields f = { 0 };
	struct sockaddr_storage sa;
	struct rdma_cm_event *ev;
	const struct rdma_conn_param *p;

	fx_need_local_passive();
	c.qp_num = 0x1234;
	s.qp_num = 0x5678;
	cch = fx_channel();
	sch = fx_channel();
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &sa);
	FX_OK(rdma_create_id(sch, &listener, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(listener, (struct sockaddr *)&sa));
	FX_OK(rdma_listen(listener, 4));
	FX_OK(rdma_create_id(cch, &client, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(client, NULL, (struct sockaddr *)&sa, 2000));
	fx_expect_ack(cch, RDMA_CM_EVENT_ADDR_RESOLVED, 5000);
	FX_OK(rdma_resolve_route(client, 2000));
	fx_expect_ack(cch, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000);
	fx_require_cm_qp(client);
	FX_OK(rdma_connect(client, &c));
	ev = fx_expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 5000);
	FX_FIELD(&f, ev->param.conn.qp_num, c.qp_num);
	server = ev->id;
	FX_OK(rdma_accept(server, &s));
	FX_OK(rdma_ack_cm_event(ev));
	ev = fx_expect(cch, RDMA_CM_EVENT_CONNECT_RESPONSE, 5000);
	p = &ev->param.conn;
	FX_FIELD(&f, ev->status, 0);
	FX_FIELD(&f, ev->id == client, 1);
	FX_FIELD(&f, ev->listen_id == NULL, 1);
	FX_FIELD(&f, p->private_data_len, REP_DATA);
	data_field(&f, "private_data", p, rep_data, sizeof rep_data, REP_DATA);
	FX_FIELD(&f, p->responder_resources, s.initiator_depth);
	FX_FIELD(&f, p->initiator_depth, s.responder_resources);
	FX_FIELD(&f, p->flow_control, 1);
	FX_FIELD(&f, p->retry_count, 0);
	FX_FIELD(&f, p->rnr_retry_count, s.rnr_retry_count);
	FX_FIELD(&f, p->srq, 0);
	FX_FIELD(&f, p->qp_num, s.qp_num);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_establish(client));
	ev = fx_expect(sch, RDMA_CM_EVENT_ESTABLISHED, 5000);
	FX_FIELD(&f, ev->id == server, 1);
	no_conn_param(&f, ev);
	FX_OK(rdma_ack_cm_event(ev));
	fx_fields_done(&f);
	FX_OK(rdma_destroy_id(server));
	FX_OK(rdma_destroy_id(client));
	FX_OK(rdma_destroy_id(listener));
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
}

/* ---------------------------------------------------------------- QP attributes */

/* Kernels from 6.2 add the flush rights where the device can flush
 * (cm_init_qp_init_attr: IB_DEVICE_FLUSH_GLOBAL or _PERSISTENT, which
 * ibv_query_device_ex reports as bits 38 and 39 of device_cap_flags_ex;
 * rxe can from 6.2, mlx5 cannot). */
#define DEVICE_FLUSH ((1ULL << 38) | (1ULL << 39))
#define ACCESS_FLUSH ((1U << 8) | (1U << 9)) /* IBV_ACCESS_FLUSH_GLOBAL, _PERSISTENT */

static unsigned flush_access(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;

	FX_VERBS_OK(ibv_query_device_ex(ctx, NULL, &attr));
	return attr.device_cap_flags_ex & DEVICE_FLUSH ? ACCESS_FLUSH : 0;
}

/* What the CM programs into one side's QP: req and rep are the messages'
 * params as sent, mine_req says whether this side sent the REQ. */
static void cm_programmed(struct fx_fields *f, struct rdma_cm_id *me, struct rdma_cm_id *peer,
			  bool active)
{
	const struct rdma_conn_param *mine = active ? &cparam : &sparam;
	const struct rdma_conn_param *theirs = active ? &sparam : &cparam;
	struct ibv_qp_attr a, p;
	struct ibv_ah_attr path; /* the peer is on the same port */
	unsigned rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		      flush_access(me->verbs);

	fx_require_ib_qp_attributes(me->verbs);
	fx_query_qp(me->qp, &a);
	fx_query_qp(peer->qp, &p);
	FX_FIELD(f, a.qp_state, IBV_QPS_RTS);
	FX_FIELD(f, a.qp_access_flags, rw);
	FX_FIELD(f, a.pkey_index, 0);
	FX_FIELD(f, a.port_num, 1);
	/* RoCE: the net device's MTU, 1500 here (iboe_get_mtu); InfiniBand:
	 * the SA path's, the ports' 4096. */
	fx_ah_to_self(me->verbs, 64, &path);
	FX_FIELD(f, a.path_mtu, path.is_global ? IBV_MTU_1024 : IBV_MTU_4096);
	FX_FIELD(f, a.dest_qp_num, peer->qp->qp_num);
	FX_FIELD(f, a.rq_psn, p.sq_psn);
	FX_FIELD(f, a.sq_psn, p.rq_psn);
	/* This side answers as many reads as it offered (its responder
	 * resources, the passive side's own, the active side's from the
	 * REP's initiator depth) and issues as many as the other answers. */
	FX_FIELD(f, a.max_dest_rd_atomic, active ? theirs->initiator_depth : mine->responder_resources);
	FX_FIELD(f, a.max_rd_atomic, active ? theirs->responder_resources : mine->initiator_depth);
	FX_FIELD(f, a.min_rnr_timer, 0);
	FX_FIELD(f, a.retry_cnt, cparam.retry_count);
	/* The RNR retries this side makes are those the other side's
	 * message asked for. */
	FX_FIELD(f, a.rnr_retry, theirs->rnr_retry_count);
	/* RoCE: a GRH to the address's GID; InfiniBand: the SA's path
	 * within the subnet, the LID alone. */
	FX_FIELD(f, a.ah_attr.is_global, path.is_global);
	FX_FIELD(f, a.ah_attr.port_num, 1);
	FX_FIELD(f, a.ah_attr.sl, 0);
	FX_FIELD(f, a.ah_attr.dlid, path.dlid);
	FX_FIELD(f, a.ah_attr.grh.sgid_index, path.grh.sgid_index);
	FX_FIELD(f, a.ah_attr.grh.hop_limit, path.grh.hop_limit);
	FX_FIELD(f, a.ah_attr.grh.traffic_class, 0);
	fx_field_mem(f, "ah_attr.grh.dgid", &a.ah_attr.grh.dgid, &path.grh.dgid, sizeof path.grh.dgid);
}

void rdma_connect__qp_attributes(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;

	fx_link_up(&l, &cparam, &sparam);
	cm_programmed(&f, l.c.id, l.s.id, true);
	fx_fields_done(&f);
	fx_link_release(&l);
}

void rdma_accept__qp_attributes(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;

	fx_link_up(&l, &cparam, &sparam);
	cm_programmed(&f, l.s.id, l.c.id, false);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* The local ACK timeout the CM programs (cm_ack_timeout): the path's
 * packet life time plus one, or the peer's CA ACK delay if larger, rounded
 * up when the other is within half. On RoCE the packet life time is
 * CMA_IBOE_PACKET_LIFETIME: 16 in current kernels (17 on rxe, whose delay
 * is 15; 18 on a ConnectX, 16), 18 in 6.1 (19 there, measured;
 * rxe-debian12's profile names it); on InfiniBand the SA's (OpenSM's
 * default 0x12, so 19). */
void rdma_connect__ack_timeout(void **state)
{
	struct fx_fields f = { 0 };
	struct ibv_qp_attr a;
	struct fx_link l;
	uint8_t life;

	fx_link_up(&l, &cparam, &sparam);
	fx_require_ib_qp_attributes(l.c.id->verbs);
	life = fx_port_ib(l.c.id->verbs, l.c.id->port_num) ? 0x12 : 16;
	fx_query_qp(l.c.id->qp, &a);
	FX_FIELD(&f, a.timeout, fx_ack_timeout(l.s.id->verbs, life));
	fx_query_qp(l.s.id->qp, &a);
	FX_FIELD(&f, a.timeout, fx_ack_timeout(l.c.id->verbs, life));
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* rdma_init_qp_attr, asked for each state once connected, gives what the
 * QP holds (except the depths rdma_accept and rdma_connect override). */
static void init_attr_matches(struct fx_fields *f, struct rdma_cm_id *id)
{
	static const enum ibv_qp_state states[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr q, a;
	int mask;

	fx_query_qp(id->qp, &q);
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
		memset(&a, 0, sizeof a);
		a.qp_state = states[i];
		FX_OK(rdma_init_qp_attr(id, &a, &mask));
		if (mask & IBV_QP_ACCESS_FLAGS)
			FX_FIELD(f, a.qp_access_flags, q.qp_access_flags);
		if (mask & IBV_QP_PATH_MTU)
			FX_FIELD(f, a.path_mtu, q.path_mtu);
		if (mask & IBV_QP_DEST_QPN)
			FX_FIELD(f, a.dest_qp_num, q.dest_qp_num);
		if (mask & IBV_QP_RQ_PSN)
			FX_FIELD(f, a.rq_psn, q.rq_psn);
		if (mask & IBV_QP_SQ_PSN)
			FX_FIELD(f, a.sq_psn, q.sq_psn);
		if (mask & IBV_QP_TIMEOUT)
			FX_FIELD(f, a.timeout, q.timeout);
		if (mask & IBV_QP_RETRY_CNT)
			FX_FIELD(f, a.retry_cnt, q.retry_cnt);
		if (mask & IBV_QP_RNR_RETRY)
			FX_FIELD(f, a.rnr_retry, q.rnr_retry);
		if (mask & IBV_QP_MIN_RNR_TIMER)
			FX_FIELD(f, a.min_rnr_timer, q.min_rnr_timer);
		if (mask & IBV_QP_AV)
			fx_field_mem(f, "ah_attr.grh.dgid", &a.ah_attr.grh.dgid, &q.ah_attr.grh.dgid,
				     sizeof q.ah_attr.grh.dgid);
	}
	FX_FIELD(f, mask & (IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY),
		 IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY);
}

void rdma_init_qp_attr__connected(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;

	fx_link_up(&l, &cparam, &sparam);
	fx_require_ib_qp_attributes(l.c.id->verbs);
	init_attr_matches(&f, l.c.id);
	init_attr_matches(&f, l.s.id);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* A depth that is not a power of two is rounded up: rxe (rxe_qp_from_attr
 * rounds with roundup_pow_of_two) and mlx5 (mlx5_ib stores its log2 with
 * fls(n - 1), and ibv_query_qp reads back the power). */
void rdma_accept__depth_rounded_up(void **state)
{
	struct rdma_conn_param c = cparam, s = sparam;
	struct fx_fields f = { 0 };
	struct ibv_qp_attr a;
	struct fx_link l;

	c.initiator_depth = 3;
	s.responder_resources = 3;
	s.initiator_depth = 3;
	fx_link_up(&l, &c, &s);
	fx_query_qp(l.s.id->qp, &a);
	FX_FIELD(&f, a.max_dest_rd_atomic, 4);
	FX_FIELD(&f, a.max_rd_atomic, 4);
	fx_fields_done(&f);
	fx_link_release(&l);
}
