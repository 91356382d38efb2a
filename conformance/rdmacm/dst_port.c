/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_get_dst_port() in every state of a connection.
 * Ports are compared in host order (fx_dst_port); the byte order itself
 * has a clause of its own. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "fixtures.h"

/* ---------------------------------------------------------------- no peer */

void rdma_get_dst_port__fresh_id(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_FRESH);
	assert_int_equal(fx_dst_port(fx.client), 0);
	fx_release(&fx);
}

static void no_peer(int family, enum fx_state state)
{
	struct fx fx;

	fx_reach(&fx, family, state);
	assert_int_equal(fx_dst_port(fx.listener), 0);
	fx_release(&fx);
}

void rdma_get_dst_port__bound_ipv4(void **state) { no_peer(AF_INET, FX_BOUND); }
void rdma_get_dst_port__bound_ipv6(void **state) { no_peer(AF_INET6, FX_BOUND); }
void rdma_get_dst_port__listening_ipv4(void **state) { no_peer(AF_INET, FX_LISTENING); }
void rdma_get_dst_port__listening_ipv6(void **state) { no_peer(AF_INET6, FX_LISTENING); }
void rdma_get_dst_port__listener_after_connection(void **state) { no_peer(AF_INET, FX_ESTABLISHED); }

/* ---------------------------------------------------------------- a peer, no connection */

/* Upstream reports the peer's port whenever the id has a remote address,
 * connected or not (before the connection and after it); the man page says 0. */
static void keeps_peer_port(int family, enum fx_state state, bool passive)
{
	struct fx fx;
	uint16_t port;

	if (passive)
		fx_need_local_passive();
	fx_reach(&fx, family, state);
	port = fx_dst_port(passive ? fx.server : fx.client);
	assert_int_equal(port, passive ? fx.client_port : fx.port);
	rc_note_documented(port == 0);
	fx_release(&fx);
}

void rdma_get_dst_port__resolve_called_ipv4(void **state) { keeps_peer_port(AF_INET, FX_RESOLVE_CALLED, false); }
void rdma_get_dst_port__resolve_called_ipv6(void **state) { keeps_peer_port(AF_INET6, FX_RESOLVE_CALLED, false); }
void rdma_get_dst_port__addr_resolved_ipv4(void **state) { keeps_peer_port(AF_INET, FX_ADDR_RESOLVED, false); }
void rdma_get_dst_port__addr_resolved_ipv6(void **state) { keeps_peer_port(AF_INET6, FX_ADDR_RESOLVED, false); }
void rdma_get_dst_port__route_resolved_ipv4(void **state) { keeps_peer_port(AF_INET, FX_ROUTE_RESOLVED, false); }
void rdma_get_dst_port__route_resolved_ipv6(void **state) { keeps_peer_port(AF_INET6, FX_ROUTE_RESOLVED, false); }
void rdma_get_dst_port__connect_request_passive_ipv4(void **state) { keeps_peer_port(AF_INET, FX_CONNECT_REQUESTED, true); }
void rdma_get_dst_port__connect_request_passive_ipv6(void **state) { keeps_peer_port(AF_INET6, FX_CONNECT_REQUESTED, true); }
void rdma_get_dst_port__rejected_active_ipv4(void **state) { keeps_peer_port(AF_INET, FX_REJECTED, false); }

/* ---------------------------------------------------------------- connected */

static void connected(int family, bool passive)
{
	struct fx fx;

	if (passive)
		fx_need_local_passive();
	fx_reach(&fx, family, FX_ESTABLISHED);
	if (passive)
		assert_int_equal(fx_dst_port(fx.server), fx.client_port);
	else
		assert_int_equal(fx_dst_port(fx.client), fx.port);
	assert_int_not_equal(fx.client_port, 0);
	fx_release(&fx);
}

void rdma_get_dst_port__established_active_ipv4(void **state) { connected(AF_INET, false); }
void rdma_get_dst_port__established_active_ipv6(void **state) { connected(AF_INET6, false); }
void rdma_get_dst_port__established_passive_ipv4(void **state) { connected(AF_INET, true); }
void rdma_get_dst_port__established_passive_ipv6(void **state) { connected(AF_INET6, true); }

/* ---------------------------------------------------------------- disconnected */

void rdma_get_dst_port__disconnected_active_ipv4(void **state) { keeps_peer_port(AF_INET, FX_DISCONNECTED, false); }
void rdma_get_dst_port__disconnected_active_ipv6(void **state) { keeps_peer_port(AF_INET6, FX_DISCONNECTED, false); }
void rdma_get_dst_port__disconnected_passive_ipv4(void **state) { keeps_peer_port(AF_INET, FX_DISCONNECTED, true); }
void rdma_get_dst_port__disconnected_passive_ipv6(void **state) { keeps_peer_port(AF_INET6, FX_DISCONNECTED, true); }

/* ---------------------------------------------------------------- representation */

void rdma_get_dst_port__network_byte_order(void **state)
{
	struct fx fx;
	__be16 raw;

	fx_reach(&fx, AF_INET, FX_RESOLVE_CALLED);
	raw = rdma_get_dst_port(fx.client);
	assert_int_equal(raw, htons(fx.port));
	rc_note_documented(raw == fx.port);
	fx_release(&fx);
}

static void assert_agrees(struct rdma_cm_id *id)
{
	assert_int_equal(fx_sockaddr_port(rdma_get_peer_addr(id)), rdma_get_dst_port(id));
}

void rdma_get_dst_port__matches_peer_addr(void **state)
{
	fx_walk_states(assert_agrees);
}

/* ---------------------------------------------------------------- bad input */

static void dst_port_of_null(void *unused)
{
	rdma_get_dst_port(NULL);
}

void rdma_get_dst_port__null_id(void **state)
{
	fx_assert_crashes(dst_port_of_null, "rdma_get_dst_port");
}
