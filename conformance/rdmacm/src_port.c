/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_get_src_port() in every state of a connection, and on
 * ids bound to a port, to the wildcard and to port 0. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"

/* net.ipv4.ip_local_port_range, where ephemeral ports come from. */
static void ephemeral_range(unsigned *low, unsigned *high)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

	*low = 32768;
	*high = 60999;
	if (f) {
		if (fscanf(f, "%u %u", low, high) != 2)
			fail_msg("cannot read /proc/sys/net/ipv4/ip_local_port_range");
		fclose(f);
	}
}

static void assert_ephemeral(uint16_t port)
{
	unsigned low, high;

	ephemeral_range(&low, &high);
	RC_ASSERT_IN_RANGE(port, low, high);
}

void rdma_get_src_port__fresh_id(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_FRESH);
	assert_int_equal(fx_src_port(fx.client), 0);
	fx_release(&fx);
}

static void bound(int family, enum fx_state state)
{
	struct fx fx;

	fx_reach(&fx, family, state);
	assert_int_equal(fx_src_port(fx.listener), fx.port);
	fx_release(&fx);
}

void rdma_get_src_port__bound_ipv4(void **state) { bound(AF_INET, FX_BOUND); }
void rdma_get_src_port__bound_ipv6(void **state) { bound(AF_INET6, FX_BOUND); }
void rdma_get_src_port__listening_ipv4(void **state) { bound(AF_INET, FX_LISTENING); }
void rdma_get_src_port__listening_ipv6(void **state) { bound(AF_INET6, FX_LISTENING); }

/* An id bound by hand, outside the fixture's path. */
static void bind_alone(int family, const char *addr, uint16_t port, uint16_t *got)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	fx_sockaddr(family, addr, port, &ss);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&ss));
	*got = fx_src_port(id);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

void rdma_get_src_port__bound_wildcard_ipv4(void **state)
{
	uint16_t got;

	bind_alone(AF_INET, "0.0.0.0", fx_port(), &got);
	assert_int_equal(got, fx_port());
}

static void port_zero(int family)
{
	uint16_t got;

	bind_alone(family, fx_addr(family), 0, &got);
	assert_ephemeral(got);
}

void rdma_get_src_port__bound_port_zero_ipv4(void **state) { port_zero(AF_INET); }
void rdma_get_src_port__bound_port_zero_ipv6(void **state) { port_zero(AF_INET6); }

/* 1100 ids bound to port 0 at once, held together: each is given a port
 * none of the others holds (an available one), from the ephemeral range;
 * the 1100 are all live and each destroys. */
#define MANY_IDS 1100

static int port_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

void rdma_get_src_port__bound_port_zero_many(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	static struct rdma_cm_id *ids[MANY_IDS];
	static uint16_t ports[MANY_IDS];
	struct sockaddr_storage ss;
	unsigned low, high;

	ephemeral_range(&low, &high);
	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &ss);
	for (int i = 0; i < MANY_IDS; i++) {
		FX_OK(rdma_create_id(ch, &ids[i], &ids[i], RDMA_PS_TCP));
		FX_OK(rdma_bind_addr(ids[i], (struct sockaddr *)&ss));
		ports[i] = fx_src_port(ids[i]);
	}
	for (int i = 0; i < MANY_IDS; i++) {
		assert_ptr_equal(ids[i]->context, &ids[i]);
		FX_OK(rdma_destroy_id(ids[i]));
	}
	rdma_destroy_event_channel(ch);
	qsort(ports, MANY_IDS, sizeof ports[0], port_cmp);
	for (int i = 0; i < MANY_IDS; i++) {
		RC_ASSERT_IN_RANGE(ports[i], low, high);
		if (i && ports[i] == ports[i - 1])
			fail_msg("two ids bound to port 0 were both given port %u", ports[i]);
	}
}

/* ---------------------------------------------------------------- active side */

static void resolve_called(int family)
{
	struct fx fx;

	fx_reach(&fx, family, FX_RESOLVE_CALLED);
	assert_int_equal(fx_src_port(fx.client), 0);
	fx_release(&fx);
}

void rdma_get_src_port__resolve_called_ipv4(void **state) { resolve_called(AF_INET); }
void rdma_get_src_port__resolve_called_ipv6(void **state) { resolve_called(AF_INET6); }

/* fx.client_port was read at ADDR_RESOLVED; later states must keep it. */
static void active(int family, enum fx_state state)
{
	struct fx fx;

	fx_reach(&fx, family, state);
	assert_ephemeral(fx.client_port);
	assert_int_equal(fx_src_port(fx.client), fx.client_port);
	fx_release(&fx);
}

void rdma_get_src_port__addr_resolved_ipv4(void **state) { active(AF_INET, FX_ADDR_RESOLVED); }
void rdma_get_src_port__addr_resolved_ipv6(void **state) { active(AF_INET6, FX_ADDR_RESOLVED); }
void rdma_get_src_port__route_resolved_ipv4(void **state) { active(AF_INET, FX_ROUTE_RESOLVED); }
void rdma_get_src_port__established_active_ipv4(void **state) { active(AF_INET, FX_ESTABLISHED); }
void rdma_get_src_port__established_active_ipv6(void **state) { active(AF_INET6, FX_ESTABLISHED); }
void rdma_get_src_port__disconnected_active_ipv4(void **state) { active(AF_INET, FX_DISCONNECTED); }

/* ---------------------------------------------------------------- passive side */

static void passive(int family, enum fx_state state)
{
	struct fx fx;

	fx_need_local_passive();
	fx_reach(&fx, family, state);
	assert_int_equal(fx_src_port(fx.server), fx.port);
	fx_release(&fx);
}

void rdma_get_src_port__connect_request_passive_ipv4(void **state) { passive(AF_INET, FX_CONNECT_REQUESTED); }
void rdma_get_src_port__connect_request_passive_ipv6(void **state) { passive(AF_INET6, FX_CONNECT_REQUESTED); }
void rdma_get_src_port__established_passive_ipv4(void **state) { passive(AF_INET, FX_ESTABLISHED); }
void rdma_get_src_port__disconnected_passive_ipv4(void **state) { passive(AF_INET, FX_DISCONNECTED); }
void rdma_get_src_port__disconnected_passive_ipv6(void **state) { passive(AF_INET6, FX_DISCONNECTED); }

/* ---------------------------------------------------------------- representation */

void rdma_get_src_port__network_byte_order(void **state)
{
	struct fx fx;
	__be16 raw;

	fx_reach(&fx, AF_INET, FX_BOUND);
	raw = rdma_get_src_port(fx.listener);
	assert_int_equal(raw, htons(fx.port));
	rc_note_documented(raw == fx.port);
	fx_release(&fx);
}

static void assert_agrees(struct rdma_cm_id *id)
{
	assert_int_equal(fx_sockaddr_port(rdma_get_local_addr(id)), rdma_get_src_port(id));
}

void rdma_get_src_port__matches_local_addr(void **state)
{
	fx_walk_states(assert_agrees);
}

/* ---------------------------------------------------------------- bad input */

static void src_port_of_null(void *unused)
{
	rdma_get_src_port(NULL);
}

void rdma_get_src_port__null_id(void **state)
{
	fx_assert_crashes(src_port_of_null, "rdma_get_src_port");
}
