/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: AF_IB addresses (struct sockaddr_ib: a GID, a P_Key and a
 * service id) in rdma_bind_addr, rdma_resolve_addr, rdma_resolve_route,
 * rdma_listen and rdma_connect, and the ports rdma_get_src_port and
 * rdma_get_dst_port read from a service id. The kernel takes AF_IB on any
 * device for a wildcard, and a GID only on an InfiniBand port
 * (rdma_cap_af_ib); these run on the device under test as it is (RoCE on
 * rxe and the mock's default) and on the mock's mlx5_0 made InfiniBand. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"
#include "qp.h"

/* On the mock, a second pass on mlx5_0 made InfiniBand; not where the
 * device profile lacks InfiniBand, nor on a device the mock replays. */
static bool mock_ib_pass(void)
{
	return rc_backend_is_mock() && !rc_lacks("infiniband", NULL) && !rc_profile_replayed();
}

/* The device under test's port 1: its GID 0 and whether it is InfiniBand.
 * On the mock, ib makes mlx5_0 an InfiniBand port first (a topology of the
 * test's own). */
static bool port_gid(bool ib, union ibv_gid *gid)
{
	enum fx_device_kind kind = FX_DEV_UNDER_TEST;
	struct ibv_port_attr port;
	struct ibv_context *ctx;

	fx_require_backend();
	if (ib && rc_backend_is_mock()) {
		int (*load)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_topology_load");

		if (load("mlx5_0=mlx5+ib:127.0.0.1/8"))
			fail_msg("rdmamock_topology_load failed");
		kind = FX_DEV_MLX5;
	}
	ctx = fx_open_device(kind);
	FX_VERBS_OK(ibv_query_port(ctx, 1, &port));
	FX_VERBS_OK(ibv_query_gid(ctx, 1, 0, gid));
	FX_VERBS_OK(ibv_close_device(ctx));
	return port.link_layer == IBV_LINK_LAYER_INFINIBAND;
}

static struct sockaddr_ib sib(const union ibv_gid *gid, uint64_t sid, uint64_t mask)
{
	struct sockaddr_ib a = { .sib_family = AF_IB, .sib_pkey = htons(0xffff),
				 .sib_sid = htobe64(sid), .sib_sid_mask = htobe64(mask) };

	if (gid)
		memcpy(&a.sib_addr, gid, sizeof *gid);
	return a;
}

static const struct sockaddr_ib *local_ib(struct rdma_cm_id *id)
{
	const struct sockaddr_ib *a = (const void *)rdma_get_local_addr(id);

	assert_int_equal(a->sib_family, AF_IB);
	return a;
}

/* A wildcard AF_IB address binds on any device: the service id becomes
 * the port space's prefix and a port, its mask all ones, and the port is
 * what rdma_get_src_port reads. Upstream's own probe for AF_IB (a PS_IB id,
 * the TCP prefix under the port-space mask) binds too, in the TCP space
 * that AF_INET shares: the same port is then taken for a wildcard. */
void rdma_bind_addr__af_ib_any(void **state)
{
	struct sockaddr_ib any = sib(NULL, 0, 0), probe;
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct rdma_cm_id *id, *ib, *ip;
	const struct sockaddr_ib *a;
	uint16_t port;

	fx_require_backend();
	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&any));
	a = local_ib(id);
	assert_int_equal(be64toh(a->sib_sid) & RDMA_IB_IP_PS_MASK, RDMA_IB_IP_PS_TCP);
	assert_true(be64toh(a->sib_sid_mask) == ~0ull);
	port = (uint16_t)be64toh(a->sib_sid);
	assert_int_not_equal(port, 0);
	assert_int_equal(rdma_get_src_port(id), htons(port));
	assert_int_equal(rdma_get_dst_port(id), 0);

	probe = sib(NULL, RDMA_IB_IP_PS_TCP, RDMA_IB_IP_PS_MASK);
	FX_OK(rdma_create_id(NULL, &ib, NULL, RDMA_PS_IB));
	FX_OK(rdma_bind_addr(ib, (struct sockaddr *)&probe));
	a = local_ib(ib);
	assert_int_equal(be64toh(a->sib_sid) & RDMA_IB_IP_PS_MASK, RDMA_IB_IP_PS_TCP);

	in.sin_port = htons(port);
	FX_OK(rdma_create_id(NULL, &ip, NULL, RDMA_PS_TCP));
	RC_ASSERT_FAILS("rdma_bind_addr", rdma_bind_addr(ip, (struct sockaddr *)&in), EADDRNOTAVAIL);
	FX_OK(rdma_destroy_id(ip));
	FX_OK(rdma_destroy_id(ib));
	FX_OK(rdma_destroy_id(id));
}

/* The service id's prefix chooses the port space, and the id's must allow
 * it (cma_select_ib_ps): a TCP id under UDP's prefix is refused with
 * EPROTONOSUPPORT; a UDP id takes it. */
void rdma_bind_addr__af_ib_port_space(void **state)
{
	struct sockaddr_ib udp = sib(NULL, RDMA_IB_IP_PS_UDP, RDMA_IB_IP_PS_MASK);
	struct rdma_cm_id *tcp_id, *udp_id;

	fx_require_backend();
	FX_OK(rdma_create_id(NULL, &tcp_id, NULL, RDMA_PS_TCP));
	RC_ASSERT_FAILS("rdma_bind_addr", rdma_bind_addr(tcp_id, (struct sockaddr *)&udp), EPROTONOSUPPORT);
	FX_OK(rdma_create_id(NULL, &udp_id, NULL, RDMA_PS_UDP));
	FX_OK(rdma_bind_addr(udp_id, (struct sockaddr *)&udp));
	assert_int_equal(be64toh(local_ib(udp_id)->sib_sid) & RDMA_IB_IP_PS_MASK, RDMA_IB_IP_PS_UDP);
	FX_OK(rdma_destroy_id(udp_id));
	FX_OK(rdma_destroy_id(tcp_id));
}

static void bind_gid(bool ib_wanted)
{
	union ibv_gid gid;
	bool ib = port_gid(ib_wanted, &gid);
	struct sockaddr_ib a = sib(&gid, 0, 0);
	struct rdma_cm_id *id;

	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	if (!ib) {
		RC_ASSERT_FAILS("rdma_bind_addr", rdma_bind_addr(id, (struct sockaddr *)&a), ENODEV);
		assert_null(id->verbs);
	} else {
		FX_OK(rdma_bind_addr(id, (struct sockaddr *)&a));
		assert_non_null(id->verbs);
		assert_memory_equal(&local_ib(id)->sib_addr, &gid, sizeof gid);
	}
	FX_OK(rdma_destroy_id(id));
}

/* A port's GID as an AF_IB address: a RoCE port is refused (ENODEV: the
 * kernel's cma_validate_port takes an IB address on an IB port only); an
 * InfiniBand port binds, and the id has its device. */
void rdma_bind_addr__af_ib_gid(void **state)
{
	bind_gid(false);
	if (mock_ib_pass())
		bind_gid(true);
}

/* rdma_resolve_addr to dst, which must give ADDR_RESOLVED on ch. */
static void resolve_ok(struct rdma_cm_id *id, struct rdma_event_channel *ch, struct sockaddr_ib *dst)
{
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 2000);
	assert_non_null(id->verbs);
}

/* AF_IB is InfiniBand's and RoCE's: an iWARP port has no AF_IB. */
static void require_af_ib(void)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	bool iwarp = ctx->device->transport_type == IBV_TRANSPORT_IWARP;

	FX_VERBS_OK(ibv_close_device(ctx));
	if (iwarp)
		RC_SKIP("capability: af-ib (the device's transport is iWARP, whose ports take no AF_IB "
			"address: RDMA_CORE_PORT_IWARP lacks RDMA_CORE_CAP_AF_IB, rdma_cap_af_ib)");
}

static void resolve_gid(bool ib_wanted)
{
	union ibv_gid gid, loop = { .raw[15] = 1 }, far = { .raw = { 0xfd, 0, 0xde, 0xad, 0xbe, 0xef } };
	bool ib = port_gid(ib_wanted, &gid);
	uint64_t sid = RDMA_IB_IP_PS_TCP | fx_port();
	struct sockaddr_ib dst = sib(&gid, sid, ~0ull), lo = sib(&loop, sid, ~0ull);
	struct sockaddr_ib away = sib(&far, sid, ~0ull), nokey = sib(&gid, sid, ~0ull);
	struct rdma_event_channel *ch = fx_channel();
	struct ibv_port_attr port;
	struct rdma_cm_id *id;

	/* No port's GID table has the prefix; P_Key 0 is in no table. */
	nokey.sib_pkey = 0;
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	RC_ASSERT_FAILS("rdma_resolve_addr", rdma_resolve_addr(id, NULL, (struct sockaddr *)&away, 2000),
		   ENODEV);
	RC_ASSERT_FAILS("rdma_resolve_addr", rdma_resolve_addr(id, NULL, (struct sockaddr *)&nokey, 2000),
		   ENODEV);

	resolve_ok(id, ch, &dst);
	assert_memory_equal(&local_ib(id)->sib_addr, &gid, sizeof gid);
	assert_int_equal(be64toh(local_ib(id)->sib_sid) & RDMA_IB_IP_PS_MASK, RDMA_IB_IP_PS_TCP);
	assert_int_equal(rdma_get_dst_port(id), htons(fx_port()));
	if (!ib) {
		/* RoCE finds no net device for an AF_IB id's path. */
		RC_ASSERT_FAILS("rdma_resolve_route", rdma_resolve_route(id, 2000), ENODEV);
	} else {
		FX_OK(rdma_resolve_route(id, 2000));
		fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 2000);
		FX_VERBS_OK(ibv_query_port(id->verbs, 1, &port));
		assert_int_equal(be16toh(id->route.path_rec->slid), port.lid);
		assert_int_equal(be16toh(id->route.path_rec->dlid), port.lid);
	}
	FX_OK(rdma_destroy_id(id));

	/* The loopback GID binds the first device, and the source becomes
	 * the loopback GID. */
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	resolve_ok(id, ch, &lo);
	assert_memory_equal(&local_ib(id)->sib_addr, &loop, sizeof loop);
	if (!ib)
		RC_ASSERT_FAILS("rdma_resolve_route", rdma_resolve_route(id, 2000), ENODEV);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* rdma_resolve_addr to an AF_IB address: the first port whose GID table
 * has that GID, or its subnet prefix on a port that is up, RoCE ports
 * included (rdma_cap_af_ib); the source becomes that GID and the service
 * id's port is the destination port. A prefix no table has, or a P_Key no
 * port holds, fails in the call with ENODEV; the loopback GID resolves on
 * the first device. On RoCE the route then fails with ENODEV (no net
 * device is bound for the path); on InfiniBand the SA's path joins the
 * two LIDs. */
void rdma_resolve_addr__af_ib(void **state)
{
	require_af_ib();
	resolve_gid(false);
	if (mock_ib_pass())
		resolve_gid(true);
}

static struct rdma_conn_param conn_param(const uint8_t *data, uint8_t len)
{
	return (struct rdma_conn_param){ .private_data = data, .private_data_len = len,
					 .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7, .rnr_retry_count = 7 };
}

/* The passive id of an AF_IB listener: its own address the port's GID
 * with the service id the REQ named, its peer's AF_IB with none (so
 * rdma_get_dst_port reads 0). */
static void assert_passive_ib(struct rdma_cm_id *server, const union ibv_gid *gid, uint64_t sid)
{
	const struct sockaddr_ib *a = local_ib(server);

	assert_memory_equal(&a->sib_addr, gid, sizeof *gid);
	assert_int_equal(be64toh(a->sib_sid), sid);
	assert_int_equal(((const struct sockaddr_ib *)rdma_get_peer_addr(server))->sib_family, AF_IB);
	assert_int_equal(rdma_get_src_port(server), htons((uint16_t)sid));
	assert_int_equal(rdma_get_dst_port(server), 0);
}

/* The request ev accepted, both sides established, the client
 * disconnects: the passive side reads DISCONNECTED and disconnects too
 * (its DREP), and the client reads DISCONNECTED; the passive id goes. */
static void accept_then_close(struct rdma_cm_event *ev, struct rdma_cm_id *client,
			      struct rdma_event_channel *sch, struct rdma_event_channel *cch)
{
	struct ibv_qp_init_attr qpa = { .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 }, .qp_type = IBV_QPT_RC };
	struct rdma_conn_param param = conn_param(NULL, 0);
	struct rdma_cm_id *server = ev->id;

	FX_OK(rdma_create_qp(server, NULL, &qpa));
	FX_OK(rdma_accept(server, &param));
	FX_OK(rdma_ack_cm_event(ev));
	fx_expect_ack(cch, RDMA_CM_EVENT_ESTABLISHED, 2000);
	fx_expect_ack(sch, RDMA_CM_EVENT_ESTABLISHED, 2000);
	FX_OK(rdma_disconnect(client));
	fx_expect_ack(sch, RDMA_CM_EVENT_DISCONNECTED, 2000);
	FX_OK(rdma_disconnect(server));
	fx_expect_ack(cch, RDMA_CM_EVENT_DISCONNECTED, 2000);
	rdma_destroy_qp(server);
	FX_OK(rdma_destroy_id(server));
}

static void listen_ip(bool ib_wanted)
{
	union ibv_gid gid;
	bool ib = port_gid(ib_wanted, &gid);
	struct sockaddr_ib any = sib(NULL, RDMA_IB_IP_PS_TCP | fx_port(), ~0ull);
	struct rdma_event_channel *sch = fx_channel(), *cch = fx_channel();
	const uint8_t data[5] = "af_ib";
	struct rdma_conn_param param = conn_param(data, sizeof data);
	struct sockaddr_storage dst;
	struct rdma_cm_id *listener, *client;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr qpa = { .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 }, .qp_type = IBV_QPT_RC };
	const char *addr = ib_wanted && rc_backend_is_mock() ? "127.0.0.1" : fx_addr(AF_INET);

	FX_OK(rdma_create_id(sch, &listener, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(listener, (struct sockaddr *)&any));
	FX_OK(rdma_listen(listener, 4));
	assert_int_equal(rdma_get_src_port(listener), htons(fx_port()));

	fx_sockaddr(AF_INET, addr, fx_port(), &dst);
	FX_OK(rdma_create_id(cch, &client, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(client, NULL, (struct sockaddr *)&dst, 2000));
	fx_expect_ack(cch, RDMA_CM_EVENT_ADDR_RESOLVED, 2000);
	FX_OK(rdma_resolve_route(client, 2000));
	fx_expect_ack(cch, RDMA_CM_EVENT_ROUTE_RESOLVED, 2000);
	FX_OK(rdma_create_qp(client, NULL, &qpa));
	FX_OK(rdma_connect(client, &param));
	if (!ib) {
		ev = fx_expect(cch, RDMA_CM_EVENT_REJECTED, 5000);
		assert_int_equal(ev->status, 28);
		FX_OK(rdma_ack_cm_event(ev));
		assert_true(fx_quiet(sch, 100));
	} else {
		const struct sockaddr_in *self = (const void *)rdma_get_local_addr(client);
		const uint8_t *got;

		ev = fx_expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 2000);
		got = ev->param.conn.private_data;
		assert_int_equal(ev->param.conn.private_data_len, 92);
		/* struct cma_hdr: version 0, IPv4, the client's port and
		 * address, the listener's address; then the user's data. */
		assert_int_equal(got[0], 0);
		assert_int_equal(got[1] >> 4, 4);
		assert_memory_equal(got + 2, &self->sin_port, 2);
		assert_memory_equal(got + 16, &self->sin_addr, 4);
		assert_memory_equal(got + 32, &((struct sockaddr_in *)&dst)->sin_addr, 4);
		assert_memory_equal(got + 36, data, sizeof data);
		assert_passive_ib(ev->id, &gid, RDMA_IB_IP_PS_TCP | fx_port());
		accept_then_close(ev, client, sch, cch);
	}
	rdma_destroy_qp(client);
	FX_OK(rdma_destroy_id(client));
	FX_OK(rdma_destroy_id(listener));
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
}

/* A wildcard AF_IB listener in the TCP space takes an IPv4 connect to its
 * port (cma_match_private_data takes anything for it). On InfiniBand the
 * request is its: AF_IB addresses from the path (its own GID with the
 * service id, the peer's with none: rdma_get_dst_port 0) and all 92 bytes
 * of the REQ, the client's CMA header first. On RoCE the passive kernel
 * finds no GID for an AF_IB source (cma_ib_acquire_dev reads it as an IP
 * address) and the CM rejects as the consumer (28); measured on rxe. */
void rdma_listen__af_ib_takes_ip(void **state)
{
	fx_need_local_passive();
	require_af_ib();
	listen_ip(false);
	if (mock_ib_pass())
		listen_ip(true);
}

/* The active side of an AF_IB connection to the port's own GID and
 * service id sid, with len bytes of private data filled with fill; its
 * QP made. */
static struct rdma_cm_id *ib_client(struct rdma_event_channel *ch, const union ibv_gid *gid,
				    uint64_t sid)
{
	struct sockaddr_ib dst = sib(gid, sid, ~0ull);
	struct ibv_qp_init_attr qpa = { .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 }, .qp_type = IBV_QPT_RC };
	struct rdma_cm_id *id;

	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 2000);
	FX_OK(rdma_resolve_route(id, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 2000);
	FX_OK(rdma_create_qp(id, NULL, &qpa));
	return id;
}


/* An AF_IB connection on an InfiniBand port: with no CMA header the REQ
 * carries 92 bytes of the user's (93 are refused with EINVAL), and the
 * listener reads all 92; the passive id's addresses are AF_IB, its own
 * with the service id, the peer's without one (rdma_get_dst_port 0); the
 * active side's destination port is the service id's. A REQ whose first
 * bytes read as a CMA header of IP version 4 is rejected as the consumer
 * (28): the passive kernel takes any REQ's first bytes for that header. */
void rdma_connect__af_ib(void **state)
{
	uint64_t sid = RDMA_IB_IP_PS_TCP | fx_port();
	struct sockaddr_ib own;
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *listener, *client;
	struct rdma_cm_event *ev;
	struct rdma_conn_param param;
	uint8_t data[93];
	union ibv_gid gid;

	if (!port_gid(true, &gid))
		RC_SKIP("AF_IB connects on an InfiniBand port only (rdma_cap_af_ib); port 1 is RoCE");
	fx_need_local_passive();
	sch = fx_channel();
	cch = fx_channel();
	own = sib(&gid, sid, ~0ull);
	FX_OK(rdma_create_id(sch, &listener, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(listener, (struct sockaddr *)&own));
	FX_OK(rdma_listen(listener, 4));
	for (int i = 0; i < 93; i++)
		data[i] = (uint8_t)(i == 1 ? 0x10 : i);

	client = ib_client(cch, &gid, sid);
	param = conn_param(data, 93);
	RC_ASSERT_FAILS("rdma_connect", rdma_connect(client, &param), EINVAL);
	param = conn_param(data, 92);
	FX_OK(rdma_connect(client, &param));
	ev = fx_expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 2000);
	assert_int_equal(ev->param.conn.private_data_len, 92);
	assert_memory_equal(ev->param.conn.private_data, data, 92);
	assert_passive_ib(ev->id, &gid, sid);
	assert_int_equal(rdma_get_dst_port(client), htons(fx_port()));
	accept_then_close(ev, client, sch, cch);
	rdma_destroy_qp(client);
	FX_OK(rdma_destroy_id(client));

	/* Version 0, IP version 4: the passive kernel's CMA header. */
	data[1] = 0x40;
	client = ib_client(cch, &gid, sid);
	param = conn_param(data, 92);
	FX_OK(rdma_connect(client, &param));
	ev = fx_expect(cch, RDMA_CM_EVENT_REJECTED, 2000);
	assert_int_equal(ev->status, 28);
	FX_OK(rdma_ack_cm_event(ev));
	assert_true(fx_quiet(sch, 100));
	rdma_destroy_qp(client);
	FX_OK(rdma_destroy_id(client));
	FX_OK(rdma_destroy_id(listener));
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
}

/* ---------------------------------------------------------------- RAI_SA: the SA's service records */

#define SERVICE_NAME "rdmacheck-service"
#define SERVICE_ID 0x10000ce5ull

/* A service the SA of the device under test's subnet has: on the mock,
 * one registered on mlx5_0 made InfiniBand; on a real device, the one
 * RDMACHECK_SA_SERVICE names (its name), which the test cannot register
 * itself. The port's GID 0 in *gid. */
static const char *sa_service(union ibv_gid *gid)
{
	const char *name = getenv("RDMACHECK_SA_SERVICE");

	if (!port_gid(true, gid))
		RC_SKIP("RAI_SA asks the SA of an InfiniBand port; port 1 is RoCE");
	if (rc_backend_is_mock()) {
		int (*add)(const char *, uint64_t, const char *) =
			(int (*)(const char *, uint64_t, const char *))fx_mock_call("rdmamock_sa_service_add");

		if (add("mlx5_0", SERVICE_ID, SERVICE_NAME))
			fail_msg("rdmamock_sa_service_add failed");
		return SERVICE_NAME;
	}
	if (!name || !*name)
		RC_SKIP("config: RDMACHECK_SA_SERVICE names no service the subnet's SA has");
	return name;
}

static void assert_service_entry(const struct rdma_addrinfo *ai, const union ibv_gid *gid)
{
	const struct sockaddr_ib *dst = (const void *)ai->ai_dst_addr;

	assert_int_equal(ai->ai_flags, RAI_SA);
	assert_int_equal(ai->ai_family, AF_IB);
	assert_int_equal(ai->ai_port_space, RDMA_PS_IB);
	assert_int_equal(ai->ai_dst_len, sizeof *dst);
	assert_int_equal(dst->sib_family, AF_IB);
	assert_int_equal(ntohs(dst->sib_pkey) & 0x7fff, 0x7fff);
	assert_true(be64toh(dst->sib_sid_mask) == ~0ull);
	if (rc_backend_is_mock()) {
		assert_memory_equal(&dst->sib_addr, gid, sizeof *gid);
		assert_int_equal(be64toh(dst->sib_sid), SERVICE_ID);
	}
}

/* rdma_resolve_addrinfo with RAI_SA on an id bound to an InfiniBand port's
 * GID: a service name, or its id as a number, is asked of the SA;
 * ADDRINFO_RESOLVED follows, rdma_query_addrinfo hands over the records
 * (RAI_SA, AF_IB, RDMA_PS_IB, the service's GID, P_Key and id), and the
 * first is the id's destination, from which rdma_resolve_route goes on. A
 * service nobody registered ends in ADDRINFO_ERROR (-ENOENT) and nothing
 * to query. */
void rdma_resolve_addrinfo__sa_service(void **state)
{
	struct fx_addrinfo_api api = fx_addrinfo_api();
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA }, *info = NULL;
	union ibv_gid gid;
	const char *service = sa_service(&gid);
	const char *services[] = { service, rc_backend_is_mock() ? "0x10000ce5" : service, "no-such-service" };
	struct sockaddr_ib own = sib(&gid, 0, 0);
	struct rdma_event_channel *ch = fx_channel();

	for (int i = 0; i < 3; i++) {
		struct rdma_cm_event *ev;
		struct rdma_cm_id *id;

		FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_IB));
		FX_OK(rdma_bind_addr(id, (struct sockaddr *)&own));
		FX_OK(api.resolve(id, NULL, services[i], &hints));
		if (i == 2) {
			ev = fx_expect(ch, RDMA_CM_EVENT_ADDRINFO_ERROR, 5000);
			assert_int_equal(ev->status, -ENOENT);
			FX_OK(rdma_ack_cm_event(ev));
			RC_ASSERT_FAILS("rdma_query_addrinfo", api.query(id, &info), ENOENT);
			FX_OK(rdma_destroy_id(id));
			break;
		}
		fx_expect_ack(ch, RDMA_CM_EVENT_ADDRINFO_RESOLVED, 5000);
		FX_OK(api.query(id, &info));
		assert_service_entry(info, &gid);
		if (rc_backend_is_mock())
			assert_null(info->ai_next);
		/* The first record is where the id goes. */
		assert_memory_equal(&((const struct sockaddr_ib *)rdma_get_peer_addr(id))->sib_addr,
				    &((const struct sockaddr_ib *)info->ai_dst_addr)->sib_addr, sizeof gid);
		assert_int_equal(rdma_get_dst_port(id),
				 htons((uint16_t)be64toh(((const struct sockaddr_ib *)info->ai_dst_addr)->sib_sid)));
		FX_OK(rdma_resolve_route(id, 2000));
		fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 2000);
		rdma_freeaddrinfo(info);
		FX_OK(rdma_destroy_id(id));
	}
	rdma_destroy_event_channel(ch);
}

/* rdma_getaddrinfo with RAI_SA and no node: each active InfiniBand port
 * asks its SA; the records come back with that port's GID as the source
 * (RDMA_PS_IB's service id prefix, no port). A name no SA has: ENOENT. */
void rdma_getaddrinfo__sa_service(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA }, *res = NULL;
	const struct sockaddr_ib *src;
	union ibv_gid gid;
	const char *service;

	fx_addrinfo_api(); /* RAI_SA came with them, in rdma-core 60 */
	service = sa_service(&gid);
	FX_OK(rdma_getaddrinfo(NULL, service, &hints, &res));
	assert_service_entry(res, &gid);
	src = (const void *)res->ai_src_addr;
	assert_int_equal(res->ai_src_len, sizeof *src);
	assert_int_equal(src->sib_family, AF_IB);
	assert_memory_equal(&src->sib_addr, &gid, sizeof gid);
	assert_int_equal(be64toh(src->sib_sid), RDMA_IB_PS_IB);
	assert_true(be64toh(src->sib_sid_mask) == RDMA_IB_IP_PS_MASK);
	rdma_freeaddrinfo(res);
	res = NULL;
	RC_ASSERT_FAILS("rdma_getaddrinfo", rdma_getaddrinfo(NULL, "no-such-service", &hints, &res), ENOENT);
	assert_null(res);
}
