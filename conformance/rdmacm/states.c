/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_connect(), rdma_resolve_route(), rdma_listen(),
 * rdma_establish(), rdma_disconnect(), rdma_get_cm_event() and
 * rdma_create_qp() called where the id's state does not allow them: the
 * errno librdmacm (cma.c) or the kernel's CM (drivers/infiniband/core
 * cma.c, whose state changes are compare-and-exchange: the call fails and
 * the id stays where it was) gives, and that the id still goes on from
 * where it was. Only the active side is used: these run in two-host mode
 * too. */
#include <errno.h>
#include <string.h>

#include "link.h"
#include "qp.h"

#define WAIT_MS 5000
#define QUIET_MS 300

static const struct rdma_conn_param conn = {
	.responder_resources = 1,
	.initiator_depth = 1,
	.retry_count = 7,
	.rnr_retry_count = 7,
};

/* ---------------------------------------------------------------- rdma_connect */

/* cma.c rdma_connect: only from ROUTE_RESOLVED. The id keeps its resolved
 * address and its route can still be resolved. */
void rdma_connect__route_not_resolved(void **state)
{
	struct rdma_conn_param p = conn;
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	RC_ASSERT_FAILS("rdma_connect", rdma_connect(fx.client, &p), EINVAL);
	assert_true(fx_quiet(fx.client_ch, QUIET_MS));
	assert_int_equal(fx_qp_state(fx.client->qp), IBV_QPS_INIT);
	fx_advance(&fx, FX_ESTABLISHED);
	fx_release(&fx);
}

/* A connected id is past ROUTE_RESOLVED: a second rdma_connect is refused
 * and the connection goes on (no event, the QP still in RTS). */
void rdma_connect__established(void **state)
{
	struct rdma_conn_param p = conn;
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	RC_ASSERT_FAILS("rdma_connect", rdma_connect(fx.client, &p), EINVAL);
	assert_true(fx_quiet(fx.client_ch, QUIET_MS));
	assert_int_equal(fx_qp_state(fx.client->qp), IBV_QPS_RTS);
	fx_release(&fx);
}

/* ---------------------------------------------------------------- rdma_resolve_route */

/* cma.c rdma_resolve_route: only from ADDR_RESOLVED (or ADDRINFO_RESOLVED). */
void rdma_resolve_route__route_resolved(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ROUTE_RESOLVED);
	RC_ASSERT_FAILS("rdma_resolve_route", rdma_resolve_route(fx.client, 2000), EINVAL);
	assert_true(fx_quiet(fx.client_ch, QUIET_MS));
	/* Still ROUTE_RESOLVED: it connects. */
	fx_advance(&fx, FX_ESTABLISHED);
	fx_release(&fx);
}

/* ---------------------------------------------------------------- rdma_listen */

/* cma.c rdma_listen: only from ADDR_BOUND (an IDLE id is bound first); a
 * listening id, and an id whose address is resolved, are neither. */
void rdma_listen__listening(void **state)
{
	struct fx fx;
	uint16_t port;

	fx_need_local_passive();
	fx_reach(&fx, AF_INET, FX_LISTENING);
	port = fx_src_port(fx.listener);
	RC_ASSERT_FAILS("rdma_listen", rdma_listen(fx.listener, 4), EINVAL);
	assert_int_equal(fx_src_port(fx.listener), port);
	/* It still listens: a client's request arrives. */
	fx_advance(&fx, FX_CONNECT_REQUESTED);
	fx_release(&fx);
}

void rdma_listen__addr_resolved(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	RC_ASSERT_FAILS("rdma_listen", rdma_listen(fx.client, 4), EINVAL);
	fx_advance(&fx, FX_ROUTE_RESOLVED);
	fx_release(&fx);
}

/* An idle id is bound first: to the IPv4 wildcard and an ephemeral
 * port, which rdma_get_src_port then gives. */
void rdma_listen__idle_binds_wildcard(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	const struct sockaddr_in *sin;
	struct rdma_cm_id *id;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_listen(id, 4));
	sin = (const struct sockaddr_in *)rdma_get_local_addr(id);
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(sin->sin_addr.s_addr, htonl(INADDR_ANY));
	assert_int_not_equal(rdma_get_src_port(id), 0);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* ---------------------------------------------------------------- rdma_establish */

/* librdmacm rdma_establish is for an id without a QP; with one the
 * library has already established the connection itself. */
void rdma_establish__with_qp(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	RC_ASSERT_FAILS("rdma_establish", rdma_establish(fx.client), EINVAL);
	assert_true(fx_quiet(fx.client_ch, QUIET_MS));
	fx_release(&fx);
}

/* ---------------------------------------------------------------- rdma_disconnect */

/* librdmacm ucma_shutdown: an id with no device has nothing to shut. */
void rdma_disconnect__no_device(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_FRESH);
	RC_ASSERT_FAILS("rdma_disconnect", rdma_disconnect(fx.client), EINVAL);
	fx_release(&fx);
}

/* An id that never sent a REQ has no IB CM id (cma.c rdma_disconnect:
 * EINVAL), but librdmacm's ucma_shutdown has moved its QP to ERR first
 * (to SQD on iWARP). */
void rdma_disconnect__never_connected(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	assert_int_equal(fx_qp_state(fx.client->qp), IBV_QPS_INIT);
	RC_ASSERT_FAILS("rdma_disconnect", rdma_disconnect(fx.client), EINVAL);
	assert_int_equal(fx_qp_state(fx.client->qp), fx_disconnected_state(fx.client));
	assert_true(fx_quiet(fx.client_ch, QUIET_MS));
	fx_release(&fx);
}

/* ---------------------------------------------------------------- rdma_get_cm_event */

void rdma_get_cm_event__null_event(void **state)
{
	struct rdma_event_channel *ch = fx_channel();

	RC_ASSERT_FAILS("rdma_get_cm_event", rdma_get_cm_event(ch, NULL), EINVAL);
	rdma_destroy_event_channel(ch);
}

/* ---------------------------------------------------------------- rdma_create_qp */

static struct ibv_qp_init_attr rc_attr(uint32_t depth)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return a;
}

/* cma.c rdma_create_qp_ex: one QP per id. */
void rdma_create_qp__twice(void **state)
{
	struct ibv_qp_init_attr a = rc_attr(4);
	struct ibv_qp *qp;
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	qp = fx.client->qp;
	assert_non_null(qp);
	RC_ASSERT_FAILS("rdma_create_qp", rdma_create_qp(fx.client, NULL, &a), EINVAL);
	assert_ptr_equal(fx.client->qp, qp);
	fx_release(&fx);
}

/* cma.c rdma_create_qp_ex: a PD given must be of the id's context; one
 * of another context of the same device is not. */
void rdma_create_qp__pd_of_other_context(void **state)
{
	struct ibv_qp_init_attr a = rc_attr(4);
	struct ibv_context *other;
	struct ibv_pd *pd;
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	rdma_destroy_qp(fx.client);
	other = ibv_open_device(fx.client->verbs->device);
	assert_non_null(other);
	assert_ptr_not_equal(other, fx.client->verbs);
	pd = ibv_alloc_pd(other);
	assert_non_null(pd);
	RC_ASSERT_FAILS("rdma_create_qp", rdma_create_qp(fx.client, pd, &a), EINVAL);
	assert_null(fx.client->qp);
	assert_null(fx.client->send_cq);
	assert_null(fx.client->recv_cq);
	FX_VERBS_OK(ibv_dealloc_pd(pd));
	FX_VERBS_OK(ibv_close_device(other));
	FX_OK(rdma_create_qp(fx.client, NULL, &a));
	fx_release(&fx);
}

/* The device refuses the QP (more SGEs than max_sge) after librdmacm made
 * its CQs and their channels: rdma_create_qp_ex destroys them again, and
 * the id is as it was. */
void rdma_create_qp__refused_frees_cqs(void **state)
{
	struct ibv_device_attr dev;
	struct ibv_qp_init_attr a;
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	rdma_destroy_qp(fx.client);
	FX_VERBS_OK(ibv_query_device(fx.client->verbs, &dev));
	a = rc_attr(4);
	a.cap.max_send_sge = (uint32_t)dev.max_sge + 1;
	RC_ASSERT_FAILS("rdma_create_qp", rdma_create_qp(fx.client, NULL, &a), EINVAL);
	assert_null(fx.client->qp);
	assert_null(fx.client->send_cq);
	assert_null(fx.client->recv_cq);
	assert_null(fx.client->send_cq_channel);
	assert_null(fx.client->recv_cq_channel);
	a = rc_attr(4);
	FX_OK(rdma_create_qp(fx.client, NULL, &a));
	assert_int_equal(fx_qp_state(fx.client->qp), IBV_QPS_INIT);
	fx_release(&fx);
}
