/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_join_multicast(), rdma_join_multicast_ex() and
 * rdma_leave_multicast() on RDMA_PS_UDP ids over RoCE: MULTICAST_JOIN's UD
 * data, the QP's attachment (loopback, members, send-only, leaving), the
 * refusals, and mckey (librdmacm/examples) as two threads; on InfiniBand,
 * the MGID and MLID the SA gives. The groups are local: these run in
 * two-host mode too. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/ib.h>

#include "cm_ud.h"
#include "fixtures.h"
#include "qp.h"

#define WAIT_MS 5000
#define QUIET_MS 500
#define GROUP "239.1.1.1"
#define GROUP_SEND_ONLY "239.2.2.2"
#define NOT_JOINED "239.9.9.9"
#define GROUP6 "ff0e::1:1"
#define MCAST_QPN 0xffffff
#define ROCE_HOP_LIMIT 64
#define LEN 32 /* bytes in a message; a receive holds 40 more, the GRH */
#define ENOTSUPP_KERNEL 524 /* the kernel's ENOTSUPP, not in the C library */

/* One id of the group: bound to fx_addr(AF_INET), or resolved from it to
 * the group as mckey does, with a UD QP if asked. */
enum { BOUND = 0, RESOLVED = 1 << 0, WITH_QP = 1 << 1 };
#define PLAIN_JOIN -1 /* rdma_join_multicast, not _ex */

struct member {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct fx_udp ep;
	struct sockaddr_storage group;
	int joins;                   /* to leave at release */
	struct rdma_ud_param joined; /* the last MULTICAST_JOIN's param.ud */
};

static void member_open(struct member *m, const char *group, unsigned how)
{
	struct sockaddr_storage src;

	memset(m, 0, sizeof *m);
	m->ch = fx_channel();
	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &src);
	fx_sockaddr(AF_INET, group, 0, &m->group);
	FX_OK(rdma_create_id(m->ch, &m->id, m, RDMA_PS_UDP));
	if (how & RESOLVED) {
		FX_OK(rdma_resolve_addr(m->id, (struct sockaddr *)&src, (struct sockaddr *)&m->group,
					2000));
		fx_expect_ack(m->ch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS);
	} else {
		FX_OK(rdma_bind_addr(m->id, (struct sockaddr *)&src));
	}
	if (m->id->verbs)
		fx_require_qp_type(m->id->verbs, IBV_QPT_UD);
	if (how & WITH_QP)
		FX_UDP_OK(fx_udp_create(&m->ep, m->id, FX_UDP_DEPTH));
}

/* Join (flags PLAIN_JOIN, or rdma_join_multicast_ex's join_flags) and read
 * the event, which must be `type`; the caller acks it. */
static struct rdma_cm_event *join_event(struct member *m, void *context, int flags,
					enum rdma_cm_event_type type)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = (uint32_t)flags,
		.addr = (struct sockaddr *)&m->group,
	};

	if (flags == PLAIN_JOIN)
		FX_OK(rdma_join_multicast(m->id, (struct sockaddr *)&m->group, context));
	else
		FX_OK(rdma_join_multicast_ex(m->id, &attr, context));
	m->joins++;
	return fx_expect(m->ch, type, WAIT_MS);
}

/* Joined, with the event's address as where the QP (if any) sends. */
static void member_join(struct member *m, int flags)
{
	struct rdma_cm_event *ev = join_event(m, m, flags, RDMA_CM_EVENT_MULTICAST_JOIN);

	m->joined = ev->param.ud;
	m->joined.private_data = NULL;
	if (m->id->qp)
		FX_UDP_OK(fx_udp_target(&m->ep, &ev->param.ud));
	FX_OK(rdma_ack_cm_event(ev));
}

static void member_open_joined(struct member *m, const char *group, unsigned how)
{
	member_open(m, group, how);
	member_join(m, PLAIN_JOIN);
}

/* Leave first: the kernel refuses to destroy a QP still attached. */
static void member_release(struct member *m)
{
	for (; m->joins > 0; m->joins--)
		rdma_leave_multicast(m->id, (struct sockaddr *)&m->group);
	fx_udp_release(&m->ep);
	if (m->id)
		FX_OK(rdma_destroy_id(m->id));
	if (m->ch)
		rdma_destroy_event_channel(m->ch);
	memset(m, 0, sizeof *m);
}

/* A message of `from` arrived at `to`, with a GRH. */
static void assert_received(struct member *to, const struct member *from, uint8_t fill)
{
	struct ibv_wc wc;

	FX_UDP_OK(fx_udp_recv(&to->ep, &wc));
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_true(wc.wc_flags & IBV_WC_GRH);
	assert_int_equal(wc.byte_len, LEN + FX_UDP_GRH);
	assert_int_equal(wc.qp_num, to->id->qp->qp_num);
	assert_int_equal(wc.src_qp, from->id->qp->qp_num);
	assert_int_equal(fx_udp_payload(&to->ep, &wc)[0], fill);
}

/* ---------------------------------------------------------------- MULTICAST_JOIN */

void rdma_join_multicast__event_context(void **state)
{
	struct rdma_cm_event *ev;
	struct member m;
	int context;

	member_open(&m, GROUP, RESOLVED | WITH_QP);
	ev = join_event(&m, &context, PLAIN_JOIN, RDMA_CM_EVENT_MULTICAST_JOIN);
	assert_ptr_equal(ev->id, m.id);
	assert_int_equal(ev->status, 0);
	assert_ptr_equal(ev->param.ud.private_data, &context);
	FX_OK(rdma_ack_cm_event(ev));
	member_release(&m);
}

/* The MGID the kernel joins on InfiniBand for a group address of an
 * RDMA_PS_UDP id (cma_set_mgid): IPoIB's mapping (ip_ib_mc_map,
 * ipv6_ib_mc_map) under link-local scope and P_Key 0xffff, with the RDMA
 * CM's signature (0x01) in its fourth byte. */
static void ib_group_mgid(const struct sockaddr *group, union ibv_gid *mgid)
{
	static const uint8_t head[6] = { 0xff, 0x12, 0x40, 0x01, 0xff, 0xff };

	memset(mgid, 0, sizeof *mgid);
	memcpy(mgid->raw, head, sizeof head);
	if (group->sa_family == AF_INET6) {
		mgid->raw[2] = 0x60;
		memcpy(&mgid->raw[6], &((const struct sockaddr_in6 *)group)->sin6_addr.s6_addr[6], 10);
	} else {
		memcpy(&mgid->raw[12], &((const struct sockaddr_in *)group)->sin_addr, 4);
		mgid->raw[12] &= 0x0f;
	}
}

/* On InfiniBand the join's address is the SA's MCMember record
 * (ib_init_ah_from_mcmember): the group's MLID and its MGID, from the
 * port's GID 0. */
static void assert_ib_join(const struct rdma_ud_param *ud, const struct member *m)
{
	union ibv_gid mgid;

	ib_group_mgid((const struct sockaddr *)&m->group, &mgid);
	assert_int_equal(ud->qp_num, MCAST_QPN);
	assert_int_equal(ud->qkey, RDMA_UDP_QKEY);
	assert_int_equal(ud->ah_attr.is_global, 1);
	assert_int_equal(ud->ah_attr.port_num, m->id->port_num);
	assert_true(ud->ah_attr.dlid >= 0xc000 && ud->ah_attr.dlid < 0xffff);
	assert_memory_equal(&ud->ah_attr.grh.dgid, &mgid, sizeof mgid);
	assert_int_equal(ud->ah_attr.grh.sgid_index, 0);
}

static void event_address(unsigned how)
{
	const struct rdma_ud_param *ud;
	struct rdma_cm_event *ev;
	union ibv_gid group_gid;
	struct member m;
	int sgid;

	member_open(&m, GROUP, how | WITH_QP);
	ev = join_event(&m, &m, PLAIN_JOIN, RDMA_CM_EVENT_MULTICAST_JOIN);
	if (fx_port_ib(m.id->verbs, m.id->port_num)) {
		assert_ib_join(&ev->param.ud, &m);
		FX_OK(rdma_ack_cm_event(ev));
		member_release(&m);
		return;
	}
	ud = &ev->param.ud;
	assert_int_equal(ud->qp_num, MCAST_QPN);
	assert_int_equal(ud->qkey, RDMA_UDP_QKEY);
	assert_int_equal(ud->ah_attr.is_global, 1);
	assert_int_equal(ud->ah_attr.port_num, m.id->port_num);
	fx_udp_addr_gid((struct sockaddr *)&m.group, &group_gid);
	assert_memory_equal(&ud->ah_attr.grh.dgid, &group_gid, sizeof group_gid);
	sgid = fx_udp_gid_index(m.id, rdma_get_local_addr(m.id));
	if (sgid < 0)
		fail_msg("no RoCE v2 GID holds %s", fx_addr(AF_INET));
	assert_int_equal(ud->ah_attr.grh.sgid_index, sgid);
	assert_int_equal(ud->ah_attr.grh.hop_limit, ROCE_HOP_LIMIT);
	assert_int_equal(ud->ah_attr.grh.flow_label, 0);
	FX_OK(rdma_ack_cm_event(ev));
	member_release(&m);
}

void rdma_join_multicast__event_address_resolved_id(void **state) { event_address(RESOLVED); }
void rdma_join_multicast__event_address_bound_id(void **state) { event_address(BOUND); }

/* ---------------------------------------------------------------- delivery */

void rdma_join_multicast__member_receives(void **state)
{
	struct member a, b;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	member_open_joined(&b, GROUP, BOUND | WITH_QP);
	FX_UDP_OK(fx_udp_send(&a.ep, 1, LEN, false));
	assert_received(&b, &a, 1);
	member_release(&b);
	member_release(&a);
}

/* A member's QP detached by hand receives nothing more of the group, while
 * the sender's own attached QP still does; a second detach finds no
 * attachment (kernel uverbs_cmd.c ib_uverbs_detach_mcast: EINVAL). */
void ibv_detach_mcast__stops_delivery(void **state)
{
	struct member a, b;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	member_open_joined(&b, GROUP, BOUND | WITH_QP);
	FX_VERBS_OK(ibv_detach_mcast(b.id->qp, &b.joined.ah_attr.grh.dgid, b.joined.ah_attr.dlid));
	FX_UDP_OK(fx_udp_send(&a.ep, 1, LEN, false));
	assert_received(&a, &a, 1);
	assert_true(fx_udp_quiet(&b.ep, QUIET_MS));
	RC_ASSERT_ERRNO("ibv_detach_mcast",
			ibv_detach_mcast(b.id->qp, &b.joined.ah_attr.grh.dgid, b.joined.ah_attr.dlid),
			EINVAL);
	member_release(&b);
	member_release(&a);
}

void rdma_join_multicast__loopback_to_sender(void **state)
{
	struct member a;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	FX_UDP_OK(fx_udp_send(&a.ep, 1, LEN, false));
	assert_received(&a, &a, 1);
	member_release(&a);
}

void rdma_join_multicast__non_member_sends(void **state)
{
	struct member a, c;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	member_open(&c, GROUP, BOUND | WITH_QP);
	FX_UDP_OK(fx_udp_target(&c.ep, &a.joined));
	FX_UDP_OK(fx_udp_send(&c.ep, 3, LEN, false));
	assert_received(&a, &c, 3);
	member_release(&c);
	member_release(&a);
}

void rdma_join_multicast__twice(void **state)
{
	struct rdma_cm_event *ev;
	struct member a;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	ev = join_event(&a, &a, PLAIN_JOIN, RDMA_CM_EVENT_MULTICAST_JOIN);
	assert_int_equal(ev->status, 0);
	assert_ptr_equal(ev->id, a.id);
	FX_OK(rdma_ack_cm_event(ev));
	member_release(&a);
}

/* ---------------------------------------------------------------- leaving */

void rdma_leave_multicast__not_joined(void **state)
{
	struct sockaddr_storage other;
	struct member a;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	fx_sockaddr(AF_INET, NOT_JOINED, 0, &other);
	errno = 0;
	assert_int_equal(rdma_leave_multicast(a.id, (struct sockaddr *)&other), -1);
	RC_ASSERT_ERRNO("rdma_leave_multicast", errno, EADDRNOTAVAIL);
	member_release(&a);
}

void rdma_leave_multicast__twice(void **state)
{
	struct member a;

	member_open_joined(&a, GROUP, BOUND | WITH_QP);
	FX_OK(rdma_leave_multicast(a.id, (struct sockaddr *)&a.group));
	a.joins--;
	errno = 0;
	assert_int_equal(rdma_leave_multicast(a.id, (struct sockaddr *)&a.group), -1);
	RC_ASSERT_ERRNO("rdma_leave_multicast", errno, EADDRNOTAVAIL);
	member_release(&a);
}

/* Left before its MULTICAST_JOIN was read: the kernel drops the join's
 * queued events with it (ucma.c ucma_leave_multicast, which calls
 * ucma_cleanup_mc_events), so none is ever read. */
void rdma_leave_multicast__before_join_event_read(void **state)
{
	struct sockaddr_storage group2;
	struct rdma_cm_event *ev;
	struct member a;

	member_open(&a, GROUP, RESOLVED | WITH_QP);
	fx_sockaddr(AF_INET, GROUP_SEND_ONLY, 0, &group2);
	FX_OK(rdma_join_multicast(a.id, (struct sockaddr *)&a.group, &a));
	FX_OK(rdma_join_multicast(a.id, (struct sockaddr *)&group2, &group2));
	FX_OK(rdma_leave_multicast(a.id, (struct sockaddr *)&a.group));
	/* The other join's event is still there, and only it. */
	ev = fx_expect(a.ch, RDMA_CM_EVENT_MULTICAST_JOIN, WAIT_MS);
	assert_ptr_equal(ev->param.ud.private_data, &group2);
	FX_OK(rdma_ack_cm_event(ev));
	assert_true(fx_quiet(a.ch, QUIET_MS));
	FX_OK(rdma_leave_multicast(a.id, (struct sockaddr *)&group2));
	member_release(&a);
}

/* An address of no family librdmacm knows has no length (cma.c
 * ucma_addrlen): both calls refuse it before asking the kernel. */
void rdma_leave_multicast__address_family_unspec(void **state)
{
	struct sockaddr_storage unspec = { .ss_family = AF_UNSPEC };
	struct member a;

	member_open_joined(&a, GROUP, BOUND | WITH_QP);
	RC_ASSERT_FAILS("rdma_join_multicast",
			rdma_join_multicast(a.id, (struct sockaddr *)&unspec, NULL), EINVAL);
	RC_ASSERT_FAILS("rdma_leave_multicast", rdma_leave_multicast(a.id, (struct sockaddr *)&unspec),
			EINVAL);
	RC_ASSERT_FAILS("rdma_leave_multicast", rdma_leave_multicast(a.id, NULL), EINVAL);
	assert_true(fx_quiet(a.ch, QUIET_MS));
	member_release(&a);
}

/* a's own copy shows the message went out; b, gone, has none. */
void rdma_leave_multicast__detaches(void **state)
{
	struct member a, b;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	member_open_joined(&b, GROUP, BOUND | WITH_QP);
	FX_OK(rdma_leave_multicast(b.id, (struct sockaddr *)&b.group));
	b.joins--;
	assert_true(fx_quiet(b.ch, QUIET_MS));
	FX_UDP_OK(fx_udp_send(&a.ep, 4, LEN, false));
	assert_received(&a, &a, 4);
	assert_true(fx_udp_quiet(&b.ep, QUIET_MS));
	member_release(&b);
	member_release(&a);
}

void rdma_destroy_id__joined_group(void **state)
{
	struct ibv_qp *qp;
	struct member a;

	member_open_joined(&a, GROUP, RESOLVED | WITH_QP);
	qp = a.id->qp;
	assert_int_equal(rdma_destroy_id(a.id), 0);
	a.id = a.ep.id = NULL;
	a.joins = 0;
	assert_true(fx_quiet(a.ch, QUIET_MS));
	/* The QP is the caller's to detach and destroy. */
	ibv_detach_mcast(qp, &a.joined.ah_attr.grh.dgid, a.joined.ah_attr.dlid);
	ibv_destroy_qp(qp);
	member_release(&a);
}

/* ---------------------------------------------------------------- refusals */

void rdma_join_multicast__unicast_address(void **state)
{
	struct rdma_cm_event *ev;
	struct member d;
	int context;

	member_open(&d, fx_addr(AF_INET), BOUND | WITH_QP);
	if (fx_port_ib(d.id->verbs, d.id->port_num)) {
		/* Any address maps to a multicast MGID there, which the SA
		 * joins and the QP attaches to. */
		ev = join_event(&d, &context, PLAIN_JOIN, RDMA_CM_EVENT_MULTICAST_JOIN);
		assert_ib_join(&ev->param.ud, &d);
		FX_OK(rdma_ack_cm_event(ev));
		member_release(&d);
		return;
	}
	ev = join_event(&d, &context, PLAIN_JOIN, RDMA_CM_EVENT_MULTICAST_ERROR);
	assert_int_equal(ev->status, -1);
	assert_ptr_equal(ev->id, d.id);
	assert_ptr_equal(ev->param.ud.private_data, &context);
	FX_OK(rdma_ack_cm_event(ev));
	member_release(&d);
}

void rdma_join_multicast__unbound(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage group;
	struct rdma_cm_id *id;

	fx_sockaddr(AF_INET, GROUP, 0, &group);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP));
	errno = 0;
	assert_int_equal(rdma_join_multicast(id, (struct sockaddr *)&group, NULL), -1);
	RC_ASSERT_ERRNO("rdma_join_multicast", errno, EINVAL);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* RoCE v2 has no IPv6 groups (ENOTSUPP); InfiniBand's SA joins one as
 * its MGID. */
void rdma_join_multicast__ipv6_group(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage src, group;
	struct ibv_port_attr port;
	struct rdma_cm_id *id;
	struct fx_udp ep;

	fx_sockaddr(AF_INET6, fx_addr(AF_INET6), 0, &src);
	fx_sockaddr(AF_INET6, GROUP6, 0, &group);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP));
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&src));
	FX_VERBS_OK(ibv_query_port(id->verbs, id->port_num, &port));
	fx_require_qp_type(id->verbs, IBV_QPT_UD);
	FX_UDP_OK(fx_udp_create(&ep, id, 1));
	if (port.link_layer == IBV_LINK_LAYER_INFINIBAND) {
		struct member m = { .id = id, .group = group };
		struct rdma_cm_event *ev;

		FX_OK(rdma_join_multicast(id, (struct sockaddr *)&group, NULL));
		ev = fx_expect(ch, RDMA_CM_EVENT_MULTICAST_JOIN, WAIT_MS);
		assert_ib_join(&ev->param.ud, &m);
		FX_OK(rdma_ack_cm_event(ev));
		FX_OK(rdma_leave_multicast(id, (struct sockaddr *)&group));
	} else {
		errno = 0;
		assert_int_equal(rdma_join_multicast(id, (struct sockaddr *)&group, NULL), -1);
		RC_ASSERT_ERRNO("rdma_join_multicast", errno, ENOTSUPP_KERNEL);
		assert_true(fx_quiet(ch, QUIET_MS));
	}
	fx_udp_release(&ep);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

void rdma_join_multicast_ex__join_flags_reserved(void **state)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = 7,
	};
	struct member m;

	member_open(&m, GROUP, RESOLVED | WITH_QP);
	attr.addr = (struct sockaddr *)&m.group;
	errno = 0;
	assert_int_equal(rdma_join_multicast_ex(m.id, &attr, &m), -1);
	RC_ASSERT_ERRNO("rdma_join_multicast_ex", errno, EINVAL);
	assert_true(fx_quiet(m.ch, QUIET_MS));
	member_release(&m);
}

/* cma.c rdma_join_multicast_ex checks comp_mask first: a reserved bit is
 * ENOTSUP, a missing address or join flags EINVAL; nothing is joined. */
void rdma_join_multicast_ex__comp_mask(void **state)
{
	struct rdma_cm_join_mc_attr_ex attr = { .join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER };
	struct member m;

	member_open(&m, GROUP, RESOLVED | WITH_QP);
	attr.addr = (struct sockaddr *)&m.group;
	attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS |
			 RDMA_CM_JOIN_MC_ATTR_RESERVED;
	RC_ASSERT_FAILS("rdma_join_multicast_ex", rdma_join_multicast_ex(m.id, &attr, &m), ENOTSUP);
	attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	RC_ASSERT_FAILS("rdma_join_multicast_ex", rdma_join_multicast_ex(m.id, &attr, &m), EINVAL);
	attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS;
	RC_ASSERT_FAILS("rdma_join_multicast_ex", rdma_join_multicast_ex(m.id, &attr, &m), EINVAL);
	assert_true(fx_quiet(m.ch, QUIET_MS));
	/* Nothing was joined to leave. */
	RC_ASSERT_FAILS("rdma_leave_multicast", rdma_leave_multicast(m.id, (struct sockaddr *)&m.group),
			EADDRNOTAVAIL);
	member_release(&m);
}

/* ---------------------------------------------------------------- attaching */

void rdma_join_multicast_ex__send_only(void **state)
{
	struct member f, h;

	member_open(&f, GROUP_SEND_ONLY, RESOLVED | WITH_QP);
	member_join(&f, RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER);
	member_open_joined(&h, GROUP_SEND_ONLY, BOUND | WITH_QP);
	FX_UDP_OK(fx_udp_send(&f.ep, 5, LEN, false));
	assert_received(&h, &f, 5);
	assert_true(fx_udp_quiet(&f.ep, QUIET_MS));
	member_release(&h);
	member_release(&f);
}

void rdma_join_multicast__without_qp(void **state)
{
	struct member m;

	member_open_joined(&m, GROUP, BOUND);
	FX_UDP_OK(fx_udp_create(&m.ep, m.id, FX_UDP_DEPTH));
	FX_VERBS_OK(ibv_attach_mcast(m.id->qp, &m.joined.ah_attr.grh.dgid, m.joined.ah_attr.dlid));
	FX_UDP_OK(fx_udp_target(&m.ep, &m.joined));
	FX_UDP_OK(fx_udp_send(&m.ep, 6, LEN, false));
	assert_received(&m, &m, 6);
	member_release(&m);
}

/* ---------------------------------------------------------------- InfiniBand */

#define GROUP_OTHER "239.3.3.3"
#define GROUP6_SA_MGID "ff12:a01b::1:2" /* an MGID the SA assigned (cma_set_mgid) */

/* On the mock, mlx5_0 a ConnectX on an InfiniBand subnet with 127.0.0.1
 * and ::1 (a topology of the test's own, as infiniband.c's); on a real
 * device, the device under test's port must be InfiniBand. On the mock
 * too, where the device profile lacks InfiniBand. */
static void ib_subnet(void)
{
	/* A profile that lacks InfiniBand, or a device the mock replays,
	 * keeps its port. */
	if (rc_backend_is_mock() && !rc_lacks("infiniband", NULL) && !rc_profile_replayed()) {
		int (*load)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_topology_load");

		if (load("mlx5_0=mlx5+ib:127.0.0.1/8,::1"))
			fail_msg("rdmamock_topology_load failed");
	}
}

static void require_ib_member(struct member *m)
{
	if (!fx_port_ib(m->id->verbs, m->id->port_num)) {
		member_release(m);
		RC_SKIP("the device's port is not InfiniBand");
	}
}

/* The SA gives a group one MLID, which every member's MCMember record
 * carries (IBA 15.2.5.17; the kernel's ib_init_ah_from_mcmember puts it in
 * the AH): two ids joined to one group read the same dlid, a third group
 * another. A message to the group reaches its members, with a GRH, and
 * not a QP attached to the other group. */
void rdma_join_multicast__infiniband_mlid(void **state)
{
	struct member a, b, c;

	ib_subnet();
	member_open(&a, GROUP, RESOLVED | WITH_QP);
	require_ib_member(&a);
	member_join(&a, PLAIN_JOIN);
	member_open_joined(&b, GROUP, BOUND | WITH_QP);
	member_open_joined(&c, GROUP_OTHER, BOUND | WITH_QP);
	assert_ib_join(&a.joined, &a);
	assert_ib_join(&b.joined, &b);
	assert_ib_join(&c.joined, &c);
	assert_int_equal(a.joined.ah_attr.dlid, b.joined.ah_attr.dlid);
	assert_int_not_equal(a.joined.ah_attr.dlid, c.joined.ah_attr.dlid);
	FX_UDP_OK(fx_udp_send(&a.ep, 7, LEN, false));
	assert_received(&b, &a, 7);
	assert_received(&a, &a, 7);
	assert_true(fx_udp_quiet(&c.ep, QUIET_MS));
	member_release(&c);
	member_release(&b);
	member_release(&a);
}

/* An id of `ps` bound to `src` joins `group` (no QP): MULTICAST_JOIN's
 * dgid is *mgid. */
static void ib_join_mgid(enum rdma_port_space ps, int family, const char *src,
			 const struct sockaddr *group, union ibv_gid *mgid)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage bind_to;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	fx_sockaddr(family, src, 0, &bind_to);
	FX_OK(rdma_create_id(ch, &id, NULL, ps));
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&bind_to));
	if (!fx_port_ib(id->verbs, id->port_num)) {
		FX_OK(rdma_destroy_id(id));
		rdma_destroy_event_channel(ch);
		RC_SKIP("the device's port is not InfiniBand");
	}
	FX_OK(rdma_join_multicast(id, (struct sockaddr *)group, NULL));
	ev = fx_expect(ch, RDMA_CM_EVENT_MULTICAST_JOIN, WAIT_MS);
	assert_int_equal(ev->status, 0);
	assert_int_equal(ev->param.ud.ah_attr.is_global, 1);
	*mgid = ev->param.ud.ah_attr.grh.dgid;
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_leave_multicast(id, (struct sockaddr *)group));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* The MGID the kernel joins on InfiniBand (cma_set_mgid): an IPv4 or IPv6
 * group of an RDMA_PS_UDP id maps as IPoIB's (the RDMA CM's signature
 * 0x01 in its fourth byte); of an RDMA_PS_IPOIB id, IPoIB's own (0x1b);
 * an AF_IB group, and an IPv6 group that is an SA-assigned MGID
 * (ff1x:a01b::), are that MGID. */
void rdma_join_multicast__infiniband_mgid(void **state)
{
	struct sockaddr_ib ib_group = { .sib_family = AF_IB, .sib_pkey = htons(0xffff) };
	struct sockaddr_storage group;
	union ibv_gid got, want;

	ib_subnet();
	fx_sockaddr(AF_INET, GROUP, 0, &group);
	ib_group_mgid((struct sockaddr *)&group, &want);
	ib_join_mgid(RDMA_PS_UDP, AF_INET, fx_addr(AF_INET), (struct sockaddr *)&group, &got);
	assert_memory_equal(&got, &want, sizeof want);
	want.raw[3] = 0x1b;
	ib_join_mgid(RDMA_PS_IPOIB, AF_INET, fx_addr(AF_INET), (struct sockaddr *)&group, &got);
	assert_memory_equal(&got, &want, sizeof want);
	assert_int_equal(inet_pton(AF_INET6, GROUP6_SA_MGID, &ib_group.sib_addr), 1);
	ib_join_mgid(RDMA_PS_UDP, AF_INET, fx_addr(AF_INET), (struct sockaddr *)&ib_group, &got);
	assert_memory_equal(&got, &ib_group.sib_addr, sizeof got);
	fx_sockaddr(AF_INET6, GROUP6, 0, &group);
	ib_group_mgid((struct sockaddr *)&group, &want);
	ib_join_mgid(RDMA_PS_UDP, AF_INET6, fx_addr(AF_INET6), (struct sockaddr *)&group, &got);
	assert_memory_equal(&got, &want, sizeof want);
	fx_sockaddr(AF_INET6, GROUP6_SA_MGID, 0, &group);
	ib_join_mgid(RDMA_PS_UDP, AF_INET6, fx_addr(AF_INET6), (struct sockaddr *)&group, &got);
	assert_memory_equal(&got, &((struct sockaddr_in6 *)&group)->sin6_addr, sizeof got);
}

/* ---------------------------------------------------------------- mckey */

/* mckey's defaults: 10 messages (of 100 bytes there; of one fixture message
 * here), loopback on, full members. The receiver runs with two ids
 * (mckey -c 2), the sender with one; each thread has its own event
 * channel and keeps its first failure for the test to report (cmocka fails
 * on the test's thread only). The sender starts once the receivers have
 * joined, as a person starts mckey -s after mckey. */
#define MESSAGES 10
#define RECEIVERS 2
#define THREAD_WAIT_S 10

struct mckey_node {
	struct rdma_cm_id *id;
	struct fx_udp ep;
	bool joined;
};

struct mckey {
	const char *name;
	bool sender;
	int nodes;
	struct sockaddr_storage src, group;
	sem_t *joined; /* a post for each receiving id joined */
	struct rdma_event_channel *ch;
	struct mckey_node node[RECEIVERS];
	char error[320];
};

/* mckey's addr_handler: a QP, receives (not the sender), and the join. */
static const char *mckey_addr_resolved(struct mckey *t, struct mckey_node *n)
{
	static __thread char why[128];
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = (struct sockaddr *)&t->group,
	};
	const char *err = fx_udp_create(&n->ep, n->id, t->sender ? 0 : MESSAGES);

	if (err)
		return err;
	if (rdma_join_multicast_ex(n->id, &attr, n)) {
		snprintf(why, sizeof why, "rdma_join_multicast_ex: %s", strerror(errno));
		return why;
	}
	n->joined = true;
	return NULL;
}

/* mckey's connect_events: ADDR_RESOLVED and MULTICAST_JOIN for each id. */
static const char *mckey_events(struct mckey *t)
{
	static __thread char why[128];
	const char *err = NULL;

	for (int left = 2 * t->nodes; left > 0 && !err; left--) {
		struct pollfd pfd = { .fd = t->ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		struct mckey_node *n;

		if (poll(&pfd, 1, WAIT_MS) != 1)
			return "no event within 5 s";
		if (rdma_get_cm_event(t->ch, &ev)) {
			snprintf(why, sizeof why, "rdma_get_cm_event: %s", strerror(errno));
			return why;
		}
		n = ev->id->context;
		if (ev->event == RDMA_CM_EVENT_ADDR_RESOLVED) {
			err = mckey_addr_resolved(t, n);
		} else if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
			err = fx_udp_target(&n->ep, &ev->param.ud);
			if (!err && !t->sender)
				sem_post(t->joined);
		} else {
			snprintf(why, sizeof why, "unexpected %s (status %d)",
				 rdma_event_str(ev->event), ev->status);
			err = why;
		}
		rdma_ack_cm_event(ev);
	}
	return err;
}

static void *mckey_thread(void *arg)
{
	struct mckey *t = arg;

	if (t->sender)
		FX_THREAD_TRY(t, fx_sem_wait(t->joined, RECEIVERS, THREAD_WAIT_S, "the receivers had not joined"));
	for (int i = 0; i < t->nodes; i++) {
		FX_THREAD_CALL(t, rdma_create_id(t->ch, &t->node[i].id, &t->node[i], RDMA_PS_UDP));
		FX_THREAD_CALL(t, rdma_resolve_addr(t->node[i].id, (struct sockaddr *)&t->src,
					      (struct sockaddr *)&t->group, 2000));
	}
	FX_THREAD_TRY(t, mckey_events(t));
	for (int i = 0; i < t->nodes; i++)
		FX_THREAD_TRY(t, t->sender ? fx_udp_send_n(&t->node[i].ep, MESSAGES)
				       : fx_udp_recv_n(&t->node[i].ep, MESSAGES, NULL));
out:
	if (!t->sender && t->error[0]) /* the sender need not wait for a receiver that failed */
		for (int i = 0; i < RECEIVERS; i++)
			sem_post(t->joined);
	for (int i = 0; i < t->nodes; i++)
		if (t->node[i].joined)
			rdma_leave_multicast(t->node[i].id, (struct sockaddr *)&t->group);
	return NULL;
}

static void mckey_release(struct mckey *t)
{
	for (int i = 0; i < t->nodes; i++) {
		fx_udp_release(&t->node[i].ep);
		if (t->node[i].id)
			rdma_destroy_id(t->node[i].id);
	}
	rdma_destroy_event_channel(t->ch);
}

void rdma_join_multicast__mckey_two_threads(void **state)
{
	struct mckey receiver = { .name = "receiver", .nodes = RECEIVERS };
	struct mckey sender = { .name = "sender", .nodes = 1, .sender = true };
	pthread_t threads[2];
	sem_t joined;

	fx_require_qp_type_under_test(IBV_QPT_UD);
	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &receiver.src);
	fx_sockaddr(AF_INET, GROUP, 0, &receiver.group);
	sender.src = receiver.src;
	sender.group = receiver.group;
	receiver.ch = fx_channel();
	sender.ch = fx_channel();
	assert_int_equal(sem_init(&joined, 0, 0), 0);
	receiver.joined = sender.joined = &joined;
	assert_int_equal(pthread_create(&threads[0], NULL, mckey_thread, &receiver), 0);
	assert_int_equal(pthread_create(&threads[1], NULL, mckey_thread, &sender), 0);
	pthread_join(threads[1], NULL);
	pthread_join(threads[0], NULL);
	sem_destroy(&joined);
	mckey_release(&sender);
	mckey_release(&receiver);
	if (receiver.error[0])
		fail_msg("%s", receiver.error);
	if (sender.error[0])
		fail_msg("%s", sender.error);
}
