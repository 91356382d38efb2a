/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_set_option(RDMA_OPTION_IB, RDMA_OPTION_IB_PATH), a
 * path record of one's own in place of rdma_resolve_route's (what
 * rdma_create_ep does with an rdma_addrinfo's ai_route). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"
#include "qp.h"

/* The path record rdma_resolve_route gives id's destination, as the SA's
 * wire format carries it (struct ibv_path_record), flagged the primary
 * bidirectional path. */
static struct ibv_path_data resolved_path(struct rdma_cm_id *client)
{
	struct rdma_event_channel *ch = fx_channel();
	struct ibv_path_data pd = { .flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
						IBV_PATH_FLAG_BIDIRECTIONAL };
	struct ibv_path_record *r = &pd.path;
	const struct ibv_sa_path_rec *p;
	struct rdma_cm_id *id;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, rdma_get_peer_addr(client), 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 2000);
	FX_OK(rdma_resolve_route(id, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 2000);
	assert_int_equal(id->route.num_paths, 1);
	p = id->route.path_rec;
	r->service_id = htobe64(RDMA_IB_IP_PS_TCP | ntohs(rdma_get_dst_port(client)));
	r->dgid = p->dgid;
	r->sgid = p->sgid;
	r->dlid = p->dlid;
	r->slid = p->slid;
	r->flowlabel_hoplimit = htobe32((be32toh(p->flow_label) << 8) | p->hop_limit);
	r->tclass = p->traffic_class;
	r->reversible_numpath = (uint8_t)((p->reversible ? 0x80 : 0) | 1);
	r->pkey = p->pkey;
	r->qosclass_sl = htobe16(p->sl & 0xf);
	r->mtu = (uint8_t)(2 << 6 | p->mtu);
	r->rate = (uint8_t)(2 << 6 | p->rate);
	r->packetlifetime = (uint8_t)(2 << 6 | p->packet_life_time);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
	return pd;
}

/* A path record of one's own on an id whose address is resolved: records
 * of a partial length are refused (EINVAL), so is a set with no primary
 * bidirectional GMP path (EINVAL), and an unknown option of the IB level
 * (ENOSYS). Of two records the one so flagged is taken: ROUTE_RESOLVED
 * follows, the route is that path (MTU 256, packet life time 10, not the
 * resolved 1024), and a second path is refused (EINVAL, the route is
 * resolved). Both QPs of the connection then have path MTU 256 and the
 * ACK timeout that packet life time gives with the peer's ACK delay (15
 * between rxe devices). Measured on rxe. */
void rdma_set_option__ib_path(void **state)
{
	struct ibv_path_data pd, two[2];
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct fx fx;

	fx_need_local_passive();
	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	pd = resolved_path(fx.client);
	RC_ASSERT_FAILS("rdma_set_option",
			rdma_set_option(fx.client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd, sizeof pd - 1),
			EINVAL);
	two[0] = pd;
	two[0].flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_OUTBOUND;
	RC_ASSERT_FAILS("rdma_set_option",
			rdma_set_option(fx.client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, two, sizeof two[0]),
			EINVAL);
	RC_ASSERT_FAILS("rdma_set_option",
			rdma_set_option(fx.client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH + 99, &pd, sizeof pd),
			ENOSYS);

	pd.path.mtu = (uint8_t)(2 << 6 | IBV_MTU_256);
	pd.path.packetlifetime = (uint8_t)(2 << 6 | 10);
	two[1] = pd;
	FX_OK(rdma_set_option(fx.client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, two, sizeof two));
	fx_expect_ack(fx.client_ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 2000);
	assert_int_equal(fx.client->route.num_paths, 1);
	assert_int_equal(fx.client->route.path_rec->mtu, IBV_MTU_256);
	assert_int_equal(fx.client->route.path_rec->packet_life_time, 10);
	RC_ASSERT_FAILS("rdma_set_option",
			rdma_set_option(fx.client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd, sizeof pd),
			EINVAL);

	fx.state_reached = FX_ROUTE_RESOLVED;
	fx_advance(&fx, FX_ESTABLISHED);
	FX_VERBS_OK(ibv_query_qp(fx.client->qp, &attr, IBV_QP_PATH_MTU | IBV_QP_TIMEOUT, &init));
	assert_int_equal(attr.path_mtu, IBV_MTU_256);
	assert_int_equal(attr.timeout, fx_ack_timeout(fx.server->verbs, 10));
	FX_VERBS_OK(ibv_query_qp(fx.server->qp, &attr, IBV_QP_PATH_MTU | IBV_QP_TIMEOUT, &init));
	assert_int_equal(attr.path_mtu, IBV_MTU_256);
	assert_int_equal(attr.timeout, fx_ack_timeout(fx.client->verbs, 10));
	fx_release(&fx);
}

/* rdma_create_ep with an rdma_addrinfo that carries a route (ai_route, as
 * an ACM-backed rdma_getaddrinfo gives it): librdmacm sets it as the path
 * (rdma_set_option RDMA_OPTION_IB_PATH) in place of rdma_resolve_route,
 * so the endpoint's route is that record's (MTU 256, packet life time
 * 10), not the one route resolution would give (cma.c rdma_create_ep). */
void rdma_create_ep__ai_route(void **state)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_path_data *route;
	struct rdma_cm_id *ep;
	char port[16];
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	route = malloc(sizeof *route);
	assert_non_null(route);
	*route = resolved_path(fx.client);
	route->path.mtu = (uint8_t)(2 << 6 | IBV_MTU_256);
	route->path.packetlifetime = (uint8_t)(2 << 6 | 10);
	snprintf(port, sizeof port, "%u", fx_target_port());
	FX_OK(rdma_getaddrinfo(fx_target_addr(AF_INET), port, &hints, &res));
	assert_null(res->ai_route);
	res->ai_route = route; /* rdma_freeaddrinfo frees it */
	res->ai_route_len = sizeof *route;
	FX_OK(rdma_create_ep(&ep, res, NULL, NULL));
	assert_int_equal(ep->route.num_paths, 1);
	assert_int_equal(ep->route.path_rec->mtu, IBV_MTU_256);
	assert_int_equal(ep->route.path_rec->packet_life_time, 10);
	rdma_destroy_ep(ep);
	rdma_freeaddrinfo(res);
	fx_release(&fx);
}
