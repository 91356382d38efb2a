/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The CM as the kernel runs it for RoCE: ports, address and route
 * resolution, listeners, and the IB CM's REQ/REP/RTU/REJ/DREQ/DREP exchange
 * between two ids. Behaviour follows drivers/infiniband/core/{cma,ucma,cm}.c
 * (function names cited where a rule comes from). */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>
#include <infiniband/sa.h>

#include "internal.h"
#include "control/mock.h"

/* IB CM private data sizes (IBTA); a REQ's first 36 bytes are the CMA
 * header (struct cma_hdr) unless the sender's address is AF_IB
 * (cma_user_data_offset). */
enum {
	REQ_MSG = 92,
	CMA_HDR = 36,
	REP_PRIVATE = 196,
	REJ_PRIVATE = 148,
};

/* SIDR, the UD "connection" (IBTA 12.11): the REQ's private data (the CMA
 * header first, as in a REQ), the REP's, and the REP's statuses. */
enum {
	SIDR_REQ_MSG = 216,
	SIDR_REP_PRIVATE = 136,
	SIDR_UNSUPPORTED = 1, /* no listener: "service ID not supported" */
	SIDR_REJECT = 2,
};

/* IB CM reject reasons seen by the active side. */
enum {
	REJ_TIMEOUT = 4,
	REJ_INVALID_SERVICE_ID = 8,
	REJ_STALE_CONN = 10,
	REJ_CONSUMER_DEFINED = 28,
	REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

#define MAX_BACKLOG 1024 /* ucma's max_backlog default */

/* IB CM timing on RoCE (cm.c, CMA_IBOE_PACKET_LIFETIME 16): cm_convert_to_ms
 * gives 2^(t-8) ms. A REQ or DREQ is sent up to 16 times; the REQ sender
 * waits 2*256+4096 ms a try, the receiver 4096 ms; timewait lasts 512 ms. */
#define CM_SENDS 16
#define CM_TRY_MS_INITIATOR 4608u
#define CM_TRY_MS_RESPONDER 4096u
#define TIMEWAIT_MS 512u
/* A REQ the passive side has not answered when the CM hands it up is
 * acknowledged by an MRA with service timeout 24 (CMA_CM_MRA_SETTING): the
 * active side then waits 65536 ms (and its packet life's 2*256) a try, 16
 * tries in all, some 17.6 minutes, before UNREACHABLE (ETIMEDOUT). */
#define MRA_TRY_MS (65536u + 512u)
/* A program may be slow to answer what it has read (it computes, or
 * sleeps): a REQ (rdma_accept), a REP (the active side's RTU, sent when it
 * reads CONNECT_RESPONSE or ESTABLISHED) and a DREQ (the DREP goes when the
 * peer calls rdma_disconnect or destroys its id; the kernel's CM does not
 * answer on its own). So the auto clock jumps to the timeouts of these
 * three only after 2 s of real quiet with every thread asleep, not after the
 * usual millisecond: a peer thread that sleeps 300 ms before it
 * disconnects must not find the connection timed out. */
#define UNANSWERED_QUIET_MS 2000u

/* ---------------------------------------------------------------- ids */

static void attach_device(struct fab_id *id, struct fab_device *dev)
{
	if (id->dev || !dev)
		return;
	id->dev = dev;
	dev->users++;
}

static bool valid_ps(enum rdma_port_space ps)
{
	return ps == RDMA_PS_TCP || ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB || ps == RDMA_PS_IB;
}

static struct fab_id *new_id(struct fab_chan *chan, uint64_t uid, enum rdma_port_space ps,
			     enum ibv_qp_type qp_type)
{
	int owner = chan ? chan->owner : fab_owner_self();
	struct fab_id *id = fab_alloc_owned(owner, sizeof *id);

	if (!id)
		return NULL;
	id->chan = chan;
	id->owner = owner;
	id->uid = uid;
	id->ps = ps;
	id->space = ps;
	id->qp_type = qp_type;
	id->psn = (unsigned)rand_r(&fab.rand_state) & 0xffffff;
	/* cma_set_qkey: a UD id of a RoCE port uses the well-known one. */
	id->qkey = qp_type == IBV_QPT_UD ? RDMA_UDP_QKEY : 0;
	id->next_live = fab.live;
	id->prev_live = NULL;
	if (fab.live)
		fab.live->prev_live = id;
	fab.live = id;
	fab.nlive++;
	return id;
}

int fab_create_id(struct fab_chan *chan, uint64_t uid, enum rdma_port_space ps,
		  enum ibv_qp_type qp_type, struct fab_id **out)
{
	if (!valid_ps(ps))
		return -EINVAL;
	fab_lock();
	*out = new_id(chan, uid, ps, qp_type);
	fab_unlock();
	return *out ? 0 : -ENOMEM;
}

int fab_live_ids(void)
{
	int n;

	fab_lock();
	n = fab.nlive;
	fab_unlock();
	return n;
}

/* An id bound to an InfiniBand port: its paths come from the SA (the
 * fabric), by LID. OpenSM's default subnet packet life time is 0x12. */
#define IB_PACKET_LIFETIME 0x12
/* CMA_IBOE_PACKET_LIFETIME: RoCE has no SA; current kernels take 16 (6.1
 * took 18: rxe-debian12's profile names the difference). */
#define ROCE_PACKET_LIFETIME 16
#define ROCE_PACKET_LIFETIME_6_1 18
#define ROCE_HOP_LIMIT 64

static bool id_on_ib(const struct fab_id *id)
{
	return id->dev && (id->dev->caps & FAB_CAP_IB);
}

/* An RNIC's (IBV_TRANSPORT_IWARP): siw's, replayed. */
static bool id_on_iwarp(const struct fab_id *id)
{
	return id->dev && fab_profile_of(id->dev->personality)->transport == IBV_TRANSPORT_IWARP;
}

/* The path's packet life time: the SA's on InfiniBand, the kernel's
 * constant on RoCE (6.1's where a replayed profile records it). */
static uint8_t packet_life(const struct fab_id *id)
{
	if (id_on_ib(id))
		return IB_PACKET_LIFETIME;
	return id->dev && fab_replay_deviates(id->dev->personality, "CM_QP_ACK_TIMEOUT") ?
		ROCE_PACKET_LIFETIME_6_1 : ROCE_PACKET_LIFETIME;
}

/* InfiniBand: the device at the far end of the id's path (by its
 * destination address), whose port's LID the SA's path names; NULL when
 * no device holds that address. */
static struct fab_device *ib_peer_locked(const struct fab_id *id)
{
	const struct sockaddr *dst = (const struct sockaddr *)&id->dst;

	/* cma_resolve_loopback: an AF_IB wildcard's GID is the source's. */
	if (dst->sa_family == AF_IB && topology_addr_is_wildcard(dst))
		return id->dev;
	return topology_device_with_addr(dst);
}

int fab_query_route(struct fab_id *id, struct fab_route *out)
{
	fab_lock();
	memset(out, 0, sizeof *out);
	if (id->destroyed) {
		fab_unlock();
		return -ENOENT;
	}
	out->src = id->src;
	out->dst = id->dst;
	if (id->dev) {
		out->node_guid = id->dev->guid;
		out->port_num = 1;
		out->pkey = 0xffff;
		fab_addr_to_gid((struct sockaddr *)&id->src, &out->sgid);
		fab_addr_to_gid((struct sockaddr *)&id->dst, &out->dgid);
	}
	/* InfiniBand: the ports' GIDs, as IPoIB's hardware addresses carry
	 * them, and the SA's path record between their LIDs. */
	if (id_on_ib(id)) {
		struct fab_device *peer = ib_peer_locked(id);

		topology_port_gid(id->dev, &out->sgid);
		out->slid = topology_lid_locked(id->dev->serial);
		if (peer) {
			topology_port_gid(peer, &out->dgid);
			out->dlid = topology_lid_locked(peer->serial);
		}
	}
	out->hop_limit = id_on_ib(id) ? 0 : ROCE_HOP_LIMIT;
	if (id->route_resolved) {
		out->num_paths = 1;
		out->path_mtu = fab_active_mtu(id_on_ib(id));
		out->packet_life_time = packet_life(id);
	}
	if (id->path_given) {
		const struct fab_path *p = &id->path;

		out->sgid = p->sgid;
		out->dgid = p->dgid;
		out->slid = p->slid;
		out->dlid = p->dlid;
		out->pkey = p->pkey;
		out->hop_limit = p->hop_limit;
		out->path_mtu = p->mtu;
		out->packet_life_time = p->packet_life;
		out->sl = p->sl;
		out->traffic_class = p->traffic_class;
		out->flow_label = p->flow_label;
		out->rate = p->rate;
	}
	fab_unlock();
	return 0;
}

/* ---------------------------------------------------------------- bind */

/* cma_select_ib_ps: an AF_IB address's port space is the one its service
 * id's prefix names under the mask, if the id's own allows it (a PS_IB id
 * any of them); the service id then carries that prefix, and the mask
 * covers it. 0 when none fits. */
static enum rdma_port_space select_ib_space(struct fab_id *id)
{
	static const struct {
		enum rdma_port_space ps;
		uint64_t prefix;
	} spaces[] = {
		{ RDMA_PS_IB, RDMA_IB_PS_IB },
		{ RDMA_PS_TCP, RDMA_IB_IP_PS_TCP },
		{ RDMA_PS_UDP, RDMA_IB_IP_PS_UDP },
	};
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&id->src;
	uint64_t mask = be64toh(sib->sib_sid_mask) & RDMA_IB_IP_PS_MASK;
	uint64_t sid = be64toh(sib->sib_sid) & mask;

	for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) {
		if ((id->ps != RDMA_PS_IB && id->ps != spaces[i].ps) ||
		    sid != (spaces[i].prefix & mask))
			continue;
		sib->sib_sid = htobe64(spaces[i].prefix | fab_addr_port((struct sockaddr *)sib));
		sib->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK | be64toh(sib->sib_sid_mask));
		return spaces[i].ps;
	}
	return 0;
}

static int bind_locked(struct fab_id *id, const struct sockaddr *addr)
{
	struct fab_device *dev = NULL;
	socklen_t len = fab_addr_len(addr);
	int err;

	if (!len)
		return -EAFNOSUPPORT;
	if (id->state != ST_IDLE)
		return -EINVAL;
	if (!topology_addr_is_wildcard(addr)) {
		/* rdma_translate_ip: no device holds the address; an AF_IB
		 * one is taken by an InfiniBand port of that GID alone
		 * (cma_acquire_dev_by_src_ip). */
		dev = topology_device_with_addr(addr);
		if (!dev)
			return addr->sa_family == AF_IB ? -ENODEV : -EADDRNOTAVAIL;
	}
	memset(&id->src, 0, sizeof id->src);
	memcpy(&id->src, addr, len);
	id->space = addr->sa_family == AF_IB ? select_ib_space(id) : id->ps;
	if (!id->space)
		return -EPROTONOSUPPORT;
	/* The destination becomes a zero address of the same family. */
	memset(&id->dst, 0, sizeof id->dst);
	id->dst.ss_family = addr->sa_family;
	/* rdma_bind_addr: AF_INET is afonly; AF_INET6 follows bindv6only (0). */
	if (!id->afonly_set)
		id->afonly = addr->sa_family == AF_INET;
	if (fab_addr_port(addr))
		err = port_use(id, fab_addr_port(addr));
	else
		err = port_alloc_any(id);
	if (err)
		return err;
	id->state = ST_ADDR_BOUND;
	attach_device(id, dev);
	return 0;
}

int fab_bind(struct fab_id *id, const struct sockaddr *addr)
{
	int err;

	fab_lock();
	err = bind_locked(id, addr);
	fab_unlock();
	return err;
}

/* ---------------------------------------------------------------- resolve */

/* A fault at an id's step (fault.c), aimed by the destination's device,
 * address and port, and the id's process. */
static bool id_fault(const char *point, const struct fab_id *id, const struct fab_device *dev,
		     struct fault_action *act)
{
	struct fault_where where = {
		.dev = dev ? dev->name : NULL,
		.addr = (const struct sockaddr *)&id->dst,
		.port = fab_addr_port((const struct sockaddr *)&id->dst),
		.qpn = -1,
		.pid = fab_owner_pid(fab_owner_of(id)),
	};

	return fab_fault_at(point) && fab_fault_fire(point, &where, act);
}

/* rdmamock/rdmacm/event/delay at a REP or a DREQ (the REQ's is req_fault's):
 * the message reaches the other side ms= later (1000 unless given), by a
 * timer of the given kind on the sender. Aimed by the connection's server
 * address and port, and the sender's process. */
static bool msg_delayed(struct fab_id *id, enum fab_timer_kind arrives)
{
	const struct sockaddr_storage *server = id->initiator ? &id->dst : &id->src;
	struct fault_where where = {
		.dev = id->dev ? id->dev->name : NULL,
		.addr = (const struct sockaddr *)server,
		.port = fab_addr_port((const struct sockaddr *)server),
		.qpn = -1,
		.pid = fab_owner_pid(fab_owner_of(id)),
	};
	struct fault_action act;

	if (!fab_fault_at("rdmamock/rdmacm/event/delay") ||
	    !fab_fault_fire("rdmamock/rdmacm/event/delay", &where, &act))
		return false;
	fab_timer_add(id, act.has_ms ? act.ms : 1000, arrives, 0);
	return true;
}

/* Address resolution fails where it would succeed: ADDR_ERROR with the
 * fault's status (-ETIMEDOUT, an ARP that went unanswered, unless given);
 * the id is bound again, as addr_handler leaves it. */
static bool addr_fault(struct fab_id *id, const struct fab_device *dev)
{
	struct fault_action act;

	if (!id_fault("rdmamock/rdmacm/event/addr_error", id, dev, &act))
		return false;
	id->state = ST_ADDR_BOUND;
	fab_queue_event(id, RDMA_CM_EVENT_ADDR_ERROR, act.has_value ? act.value : -ETIMEDOUT, NULL, NULL);
	return true;
}

static void addr_query_timed_out(struct fab_id *id, int unused)
{
	if (id->state != ST_ADDR_QUERY)
		return;
	id->state = ST_ADDR_BOUND;
	fab_queue_event(id, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, NULL, NULL);
}

/* cma_set_loopback: the source becomes 127.0.0.1 or ::1, port kept; an
 * AF_IB source keeps its service id and P_Key and takes the GID ::1. */
static void set_loopback_src(struct fab_id *id)
{
	uint16_t port = fab_addr_port((struct sockaddr *)&id->src);
	sa_family_t family = id->src.ss_family;

	if (family == AF_IB) {
		struct sockaddr_ib *sib = (struct sockaddr_ib *)&id->src;

		memset(&sib->sib_addr, 0, sizeof sib->sib_addr);
		sib->sib_addr.sib_raw[15] = 1;
		return;
	}
	memset(&id->src, 0, sizeof id->src);
	id->src.ss_family = family;
	if (family == AF_INET)
		((struct sockaddr_in *)&id->src)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&id->src)->sin6_addr = in6addr_loopback;
	fab_addr_set_port((struct sockaddr *)&id->src, port);
}

static bool is_multicast(const struct sockaddr *addr)
{
	union ibv_gid gid;

	fab_addr_to_gid(addr, &gid);
	return fab_gid_is_multicast(&gid);
}

/* cma_resolve_ib_addr: no address resolution on the wire; an unbound id
 * takes the port topology_af_ib_port finds, whose P_Key table (0xffff
 * alone) must hold the address's P_Key, and that GID as its source (none:
 * ENODEV in the call). ADDR_RESOLVED follows. */
static int resolve_ib_locked(struct fab_id *id, const struct sockaddr *dst)
{
	const struct sockaddr_ib *sib = (const struct sockaddr_ib *)dst;
	struct fab_device *dev = id->dev;

	if (!dev) {
		union ibv_gid dgid, sgid;

		fab_addr_to_gid(dst, &dgid);
		if ((ntohs(sib->sib_pkey) & 0x7fff) == 0x7fff)
			dev = topology_af_ib_port(&dgid, &sgid);
		if (!dev) {
			id->state = ST_ADDR_BOUND;
			return -ENODEV;
		}
		memcpy(&((struct sockaddr_ib *)&id->src)->sib_addr, &sgid, sizeof sgid);
		attach_device(id, dev);
	}
	if (addr_fault(id, dev))
		return 0;
	id->state = ST_ADDR_RESOLVED;
	fab_queue_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL);
	return 0;
}

/* Where the destination is. A device's address resolves at once: every
 * device is local to this fabric, so, as for a local destination on Linux,
 * the source address is the destination's unless the id is bound to one.
 * A wildcard or loopback address no device holds takes the kernel's
 * loopback path (cma_resolve_loopback): the first device, source 127.0.0.1
 * or ::1. An address on a device's subnet that nobody holds never answers
 * ARP (ADDR_ERROR -ETIMEDOUT after timeout_ms). A multicast group resolves
 * on the device of a bound id. Anything else has no route (the mock has no
 * routing table, so no default route either): rdma_resolve_ip fails in the
 * call with -ENETUNREACH. */
static int resolve_locked(struct fab_id *id, const struct sockaddr *dst, int timeout_ms)
{
	struct fab_device *target = topology_device_with_addr(dst);
	bool src_any = fab_addr_is_any((struct sockaddr *)&id->src);

	id->state = ST_ADDR_QUERY;
	if (dst->sa_family == AF_IB && !topology_addr_is_wildcard(dst))
		return resolve_ib_locked(id, dst);
	if (!target && topology_addr_is_wildcard(dst)) {
		target = id->dev ? id->dev : topology_first_device();
		if (!target) {
			id->state = ST_ADDR_BOUND;
			return -ENODEV;
		}
		if (!id->dev)
			set_loopback_src(id);
	} else if (target && src_any) {
		uint16_t port = fab_addr_port((struct sockaddr *)&id->src);

		memcpy(&id->src, dst, fab_addr_len(dst));
		fab_addr_set_port((struct sockaddr *)&id->src, port);
	}
	/* An id bound to one device's address routes out of that device's
	 * netdev (the kernel sets bound_dev_if): another device's address is
	 * reached only if it is on that netdev's subnet; else ARP goes out
	 * unanswered. Measured on rxe: two dummy netdevs, ADDR_ERROR -110. */
	if (target && id->dev && target != id->dev && !topology_on_subnet_of(id->dev, dst)) {
		fab_timer_add(id, timeout_ms > 0 ? (unsigned)timeout_ms : 0, TIMER_ADDR_QUERY, 0);
		return 0;
	}
	if (target) {
		if (addr_fault(id, target))
			return 0;
		attach_device(id, target);
		id->state = ST_ADDR_RESOLVED;
		fab_queue_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL);
		return 0;
	}
	if (!target && id->dev && is_multicast(dst)) {
		/* A group is reached through the device of the bound source
		 * (the route lookup takes the source's device); the source
		 * stays. Measured on rxe: 192.0.2.1 -> 239.1.1.1 and
		 * 2001:db8::1 -> ff0e::1:2 both give ADDR_RESOLVED. */
		if (addr_fault(id, id->dev))
			return 0;
		id->state = ST_ADDR_RESOLVED;
		fab_queue_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL);
		return 0;
	}
	if (topology_device_on_subnet(dst)) {
		fab_timer_add(id, timeout_ms > 0 ? (unsigned)timeout_ms : 0, TIMER_ADDR_QUERY, 0);
		return 0;
	}
	id->state = ST_ADDR_BOUND;
	return -ENETUNREACH;
}

int fab_resolve_addr(struct fab_id *id, const struct sockaddr *src,
		     const struct sockaddr *dst, int timeout_ms)
{
	struct sockaddr_storage any = { .ss_family = dst->sa_family };
	int err = 0;

	/* cma_bind_addr: an AF_IB source takes the destination's P_Key. */
	if (dst->sa_family == AF_IB)
		((struct sockaddr_ib *)&any)->sib_pkey = ((const struct sockaddr_ib *)dst)->sib_pkey;
	fab_lock();
	/* resolve_prepare_src: an unbound id is bound first and its port is
	 * chosen now; user space sees it when it handles ADDR_RESOLVED. A bound
	 * id ignores src. */
	if (id->state == ST_IDLE)
		err = bind_locked(id, src && src->sa_family ? src : (struct sockaddr *)&any);
	if (!err && id->src.ss_family != dst->sa_family)
		err = -EINVAL;
	/* A service the SA found may be left for another address. */
	if (!err && id->state != ST_ADDR_BOUND && id->state != ST_ADDRINFO_RESOLVED)
		err = -EINVAL;
	if (!err) {
		memset(&id->dst, 0, sizeof id->dst);
		memcpy(&id->dst, dst, fab_addr_len(dst));
		err = resolve_locked(id, dst, timeout_ms);
	}
	fab_unlock();
	return err;
}

/* cma_resolve_iboe_route: RoCE needs no SA query. It completes at once and
 * never produces ROUTE_ERROR; its errors are returned by the call. A fault
 * (rdmamock/rdmacm/event/route_error) gives ROUTE_ERROR as an IB path query
 * that failed would: the fault's status (-ETIMEDOUT unless given), and the
 * id back in ADDR_RESOLVED. */
int fab_resolve_route(struct fab_id *id, int timeout_ms)
{
	struct fault_action act;
	int err = 0;

	fab_lock();
	if (!timeout_ms || !id->dev ||
	    (id->state != ST_ADDR_RESOLVED && id->state != ST_ADDRINFO_RESOLVED)) {
		err = -EINVAL;
	} else if (!id_on_ib(id) && id->src.ss_family == AF_IB) {
		/* cma_resolve_iboe_route: an AF_IB id on a RoCE port has no
		 * net device bound for its path (the loopback GID's). */
		err = -ENODEV;
	} else if (id_fault("rdmamock/rdmacm/event/route_error", id, id->dev, &act)) {
		fab_queue_event(id, RDMA_CM_EVENT_ROUTE_ERROR, act.has_value ? act.value : -ETIMEDOUT,
				NULL, NULL);
	} else if (id_on_ib(id) && !ib_peer_locked(id)) {
		/* The SA has no path to a GID no port holds: the query's
		 * answer carries an error status (ib_sa gives -EINVAL). */
		fab_queue_event(id, RDMA_CM_EVENT_ROUTE_ERROR, -EINVAL, NULL, NULL);
	} else {
		id->route_resolved = true;
		id->state = ST_ROUTE_RESOLVED;
		fab_queue_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL);
	}
	fab_unlock();
	return err;
}

/* ---------------------------------------------------------------- listen */

int fab_listen(struct fab_id *id, int backlog)
{
	struct sockaddr_in any = { .sin_family = AF_INET };
	int err = 0;

	fab_lock();
	/* rdma_listen: an unbound id binds to 0.0.0.0 and an ephemeral port. */
	if (id->state == ST_IDLE)
		err = bind_locked(id, (struct sockaddr *)&any);
	if (!err && id->state != ST_ADDR_BOUND)
		err = -EINVAL;
	/* Once listening, an id must be unique on its port even if reusable. */
	if (!err && id->reuseaddr)
		err = port_check(id->bind, id, false);
	if (!err) {
		id->state = ST_LISTEN;
		id->reuseaddr = false;
		id->backlog = backlog > 0 && backlog <= MAX_BACKLOG ? backlog : MAX_BACKLOG;
	}
	fab_unlock();
	return err;
}

/* ---------------------------------------------------------------- connect */

/* What the receiver of a CM message sees: the sender's depths swapped, and
 * the private data padded to the message's size; an RNIC's MPA frame
 * carries it at its own length (RFC 5044: siw passes pd_len on). */
static struct fab_conn_param received(const struct fab_id *from, const struct fab_conn_param *sent,
				      uint8_t size)
{
	struct fab_conn_param p = *sent;

	p.private_data_len = id_on_iwarp(from) ? sent->private_data_len : size;
	p.responder_resources = sent->initiator_depth;
	p.initiator_depth = sent->responder_resources;
	return p;
}

/* What of a REQ (or SIDR REQ) is the user's: all of it for an AF_IB id,
 * else what the CMA header leaves. */
static uint8_t req_room(const struct fab_id *id)
{
	uint8_t msg = id->qp_type == IBV_QPT_UD ? SIDR_REQ_MSG : REQ_MSG;

	return id->src.ss_family == AF_IB ? msg : msg - CMA_HDR;
}

/* cma_format_hdr: version 0, the IP version in the high nibble, the
 * sender's port, its address and the destination's (IPv4 in the last
 * four bytes of each 16). */
static void format_cma_hdr(const struct fab_id *active, uint8_t *hdr)
{
	const struct sockaddr *src = (const void *)&active->src, *dst = (const void *)&active->dst;
	uint16_t port = htons(fab_addr_port(src));

	memset(hdr, 0, CMA_HDR);
	hdr[1] = (uint8_t)((src->sa_family == AF_INET ? 4 : 6) << 4);
	memcpy(hdr + 2, &port, 2);
	if (src->sa_family == AF_INET) {
		memcpy(hdr + 4 + 12, &((const struct sockaddr_in *)src)->sin_addr, 4);
		memcpy(hdr + 20 + 12, &((const struct sockaddr_in *)dst)->sin_addr, 4);
	} else {
		memcpy(hdr + 4, &((const struct sockaddr_in6 *)src)->sin6_addr, 16);
		memcpy(hdr + 20, &((const struct sockaddr_in6 *)dst)->sin6_addr, 16);
	}
}

/* The CONNECT_REQUEST's private data: the message less the listener's
 * offset. An AF_IB listener reads all of it, so a request from an IP
 * address shows its CMA header first. */
static struct fab_conn_param request_seen(const struct fab_id *listener, const struct fab_id *active)
{
	uint8_t msg = active->qp_type == IBV_QPT_UD ? SIDR_REQ_MSG : REQ_MSG;
	uint8_t hdr = listener->src.ss_family == AF_IB ? 0 : CMA_HDR;
	struct fab_conn_param p = received(active, &active->sent, msg - hdr);

	if (!hdr && active->src.ss_family != AF_IB) {
		memset(p.private_data, 0, sizeof p.private_data);
		format_cma_hdr(active, p.private_data);
		memcpy(p.private_data + CMA_HDR, active->sent.private_data, active->sent.private_data_len);
	}
	return p;
}

/* The peer of id receives a REJ with this reason. On an RNIC, MPA's reject ends
 * the stream: status -ECONNRESET (cma_iw_handler), the private data as
 * sent. */
static void send_rej(struct fab_id *id, int reason, const void *data, uint8_t len)
{
	struct fab_id *peer = id->peer;
	struct fab_conn_param p = { .private_data_len = REJ_PRIVATE };

	id->peer = NULL;
	if (!peer)
		return;
	if (data && len)
		memcpy(p.private_data, data, len);
	peer->cm = CM_IDLE;
	peer->peer = NULL;
	fab_timer_cancel(peer);
	if (id_on_iwarp(peer)) {
		reason = -ECONNRESET;
		p.private_data_len = data ? len : 0;
		peer->stream_reset = true;
	}
	fab_queue_event(peer, RDMA_CM_EVENT_REJECTED, reason, &p, NULL);
}

/* A REQ nobody takes: the REJ the IB CM sends in its place (or the one a
 * fault makes: its reason and private data). */
static void reject_request_with(struct fab_id *active, int reason, const void *data, uint8_t len)
{
	struct fab_conn_param p = { .private_data_len = REJ_PRIVATE };

	if (data && len)
		memcpy(p.private_data, data, len < REJ_PRIVATE ? len : REJ_PRIVATE);

	active->cm = CM_IDLE;
	fab_timer_cancel(active);
	fab_queue_event(active, RDMA_CM_EVENT_REJECTED, reason, &p, NULL);
}

static void reject_request(struct fab_id *active, int reason)
{
	reject_request_with(active, reason, NULL, 0);
}

/* cma_find_listener, per device. No listener on the port on this device
 * (none at all, or only on another device) means no IB CM listener: the REQ
 * is rejected with "invalid service id". A listener here whose address or
 * family does not match fails in cma_ib_req_handler, and the CM rejects as
 * the consumer. */
static bool listener_takes(const struct fab_id *l, const struct sockaddr *dst,
			   const struct fab_device *dev)
{
	const struct sockaddr *own = (const void *)&l->src;

	/* cma_match_private_data takes anything for an AF_IB listener;
	 * cma_match_net_dev gives a request from an AF_IB address (no net
	 * device) to an AF_IB listener alone. On a RoCE port an AF_IB
	 * listener's connection then finds no GID (cma_ib_acquire_dev reads
	 * its AF_IB address as an IP one) and the request fails: measured on
	 * rxe, a REJ as the consumer. */
	if (own->sa_family == AF_IB)
		return dst->sa_family == AF_IB || (dev->caps & FAB_CAP_IB);
	if (dst->sa_family == AF_IB)
		return false;
	if (!topology_addr_is_wildcard(own))
		return fab_addr_equal(own, dst);
	if (own->sa_family == AF_INET)
		return dst->sa_family == AF_INET;
	return !l->afonly || dst->sa_family == AF_INET6;
}

/* The service id a REQ names: an AF_IB destination's own, else the id's
 * port space and the destination's port (rdma_get_service_id); its port
 * space is the prefix's (rdma_ps_from_service_id). */
static uint64_t service_id(const struct fab_id *active)
{
	const struct sockaddr *dst = (const void *)&active->dst;

	if (dst->sa_family == AF_IB)
		return be64toh(((const struct sockaddr_ib *)dst)->sib_sid);
	return ((uint64_t)active->ps << 16) + fab_addr_port(dst);
}

/* The passive side's kernel reads the first bytes of every REQ as a CMA
 * header (cma_save_ip_info, from cma_get_net_dev): an AF_IB request is
 * known as one only when they read version 0 and an IP version neither 4
 * nor 6; anything else fails the request handler (-EINVAL, or an IP
 * address no net device has), and the CM rejects as the consumer. */
static bool reads_as_af_ib(const struct fab_id *active)
{
	const uint8_t *data = active->sent.private_data;

	return data[0] == 0 && data[1] >> 4 != 4 && data[1] >> 4 != 6;
}

static struct fab_id *find_listener(const struct fab_id *active, struct fab_device *dev, int *reason)
{
	const struct sockaddr *dst = (const void *)&active->dst;
	uint64_t sid = service_id(active);
	enum rdma_port_space space = (enum rdma_port_space)((sid >> 16) & 0xffff);
	struct fab_bind *b = valid_ps(space) ? port_find(space, (uint16_t)sid) : NULL;
	bool listening_here = false;

	*reason = REJ_INVALID_SERVICE_ID;
	for (struct fab_id *l = b ? b->owners : NULL; l; l = l->next_owner) {
		if (l->state != ST_LISTEN || (l->dev && l->dev != dev) ||
		    fab_owner_gone(fab_owner_of(l)))
			continue;
		listening_here = true;
		if (dst->sa_family == AF_IB && !reads_as_af_ib(active))
			break;
		if (listener_takes(l, dst, dev))
			return l;
	}
	if (listening_here)
		*reason = REJ_CONSUMER_DEFINED;
	return NULL;
}

static void send_req(struct fab_id *active, int delayed);
static void sidr_answer(struct fab_id *active, int status, const struct fab_conn_param *rep,
			const struct fab_id *passive);

/* The REQ went unanswered: send it again after the CM's timeout, or, after
 * the last try, give up with UNREACHABLE. */
static void retry_req(struct fab_id *active)
{
	if (active->req_sends < CM_SENDS) {
		fab_timer_add(active, CM_TRY_MS_INITIATOR, TIMER_SEND_REQ, 0);
	} else {
		active->cm = CM_IDLE;
		fab_queue_event(active, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, NULL);
	}
}

/* The ids whose peer's QP number the CM knows (got), by that number, for
 * the stale check: a walk of one bucket, not of every live id. */
static void got_unindex(struct fab_id *id)
{
	struct fab_id **pos = &fab.got_index[id->got.qp_num % FAB_BIND_BUCKETS];

	if (!id->in_got_index)
		return;
	while (*pos != id)
		pos = &(*pos)->next_got;
	*pos = id->next_got;
	id->in_got_index = false;
}

static void set_got(struct fab_id *id, const struct fab_conn_param *got, struct fab_device *remote)
{
	struct fab_id **head;

	got_unindex(id);
	id->got = *got;
	id->remote_dev = remote;
	head = &fab.got_index[id->got.qp_num % FAB_BIND_BUCKETS];
	id->next_got = *head;
	*head = id;
	id->in_got_index = true;
}

/* A port's GID as the REQ's path names it: an InfiniBand port's own,
 * else the RoCE GID of the address. */
static void path_gid(const struct fab_device *dev, const struct sockaddr_storage *addr,
		     union ibv_gid *gid)
{
	if (dev && (dev->caps & FAB_CAP_IB))
		topology_port_gid(dev, gid);
	else
		fab_addr_to_gid((const struct sockaddr *)addr, gid);
}

/* cma_save_ib_info: an AF_IB listener's connection has AF_IB addresses.
 * From a REQ's path: its own GID with the service id the REQ named, the
 * peer's GID with none (so rdma_get_dst_port reads 0). A SIDR REQ has no
 * path: the listener's own address, and an empty AF_IB peer. */
static void ib_conn_addrs(struct fab_id *conn, const struct fab_id *listener,
			  const struct fab_id *active, const struct fab_device *dev)
{
	struct sockaddr_ib *src = (struct sockaddr_ib *)&conn->src;
	struct sockaddr_ib *dst = (struct sockaddr_ib *)&conn->dst;
	union ibv_gid gid;

	memset(&conn->src, 0, sizeof conn->src);
	memset(&conn->dst, 0, sizeof conn->dst);
	src->sib_family = dst->sib_family = AF_IB;
	if (active->qp_type == IBV_QPT_UD) {
		memcpy(src, &listener->src, sizeof *src);
	} else {
		src->sib_pkey = dst->sib_pkey = htons(0xffff);
		path_gid(dev, &active->dst, &gid);
		memcpy(&src->sib_addr, &gid, sizeof gid);
		src->sib_sid = htobe64(service_id(active));
		path_gid(active->dev, &active->src, &gid);
		memcpy(&dst->sib_addr, &gid, sizeof gid);
	}
	src->sib_sid_mask = htobe64(~0ull);
}

/* The new connection's id, on the listener's channel, with no owner yet. */
static struct fab_id *new_connection(struct fab_id *listener, struct fab_id *active,
				     struct fab_device *dev)
{
	/* Its QP type is the listener's: an XRC initiator reaches a target;
	 * its port space too (cma_ib_new_conn_id). */
	struct fab_id *conn = new_id(listener->chan, 0, listener->ps, listener->qp_type);

	if (!conn)
		return NULL;
	conn->state = ST_CONNECT;
	if (listener->src.ss_family == AF_IB) {
		ib_conn_addrs(conn, listener, active, dev);
	} else {
		conn->src = active->dst;
		conn->dst = active->src;
	}
	conn->afonly = listener->afonly;
	conn->route_resolved = true;
	/* A path of the active side's own is the REQ's: the passive side's
	 * route is it, reversed (cm_format_paths_from_req). */
	if (active->path_given) {
		conn->path_given = true;
		conn->path = active->path;
		conn->path.sgid = active->path.dgid;
		conn->path.dgid = active->path.sgid;
		conn->path.slid = active->path.dlid;
		conn->path.dlid = active->path.slid;
	}
	conn->has_cm = true;
	conn->cm = CM_REQ_RCVD;
	conn->peer = active;
	conn->requested_by = listener;
	set_got(conn, &active->sent, active->dev);
	attach_device(conn, dev);
	return conn;
}

/* The faults at a REQ (fault.c): a REQ lost on the way (the peer never
 * answers: sent again, and UNREACHABLE after the last try), or rejected
 * with the fault's status (28, "consumer defined", unless given) and
 * private data. Aimed by the destination's device, address and port, and
 * the active side's process. */
static bool req_fault(struct fab_id *active, struct fab_device *dev, bool delayed)
{
	struct fault_action act;

	/* rdmamock/rdmacm/event/delay: the REQ is held up on the way (ms=,
	 * or 1000 ms), then arrives as it would have. */
	if (!delayed && id_fault("rdmamock/rdmacm/event/delay", active, dev, &act)) {
		active->req_sends--;
		fab_timer_add(active, act.has_ms ? act.ms : 1000, TIMER_SEND_REQ, 1);
		return true;
	}
	if (id_fault("rdmamock/rdmacm/event/unreachable", active, dev, &act)) {
		retry_req(active);
		return true;
	}
	if (!id_fault("rdmamock/rdmacm/event/rejected", active, dev, &act))
		return false;
	if (active->qp_type == IBV_QPT_UD) {
		struct fab_conn_param rep = { .private_data_len = act.data_len };

		memcpy(rep.private_data, act.data, rep.private_data_len);
		sidr_answer(active, act.has_value ? act.value : SIDR_REJECT, &rep, NULL);
	} else {
		reject_request_with(active, act.has_value ? act.value : REJ_CONSUMER_DEFINED, act.data,
				    act.data_len);
	}
	return true;
}

/* A connection of the CM, being made or made, whose peer is QP qpn of dev
 * (another id than the asker). */
static bool live_remote_qpn(const struct fab_id *asker, uint32_t qpn, const struct fab_device *dev)
{
	for (const struct fab_id *x = fab.got_index[qpn % FAB_BIND_BUCKETS]; x; x = x->next_got)
		if (x != asker && x->has_cm && x->remote_dev == dev && x->got.qp_num == qpn &&
		    (x->cm == CM_REQ_RCVD || x->cm == CM_REP_SENT || x->cm == CM_ESTABLISHED))
			return true;
	return false;
}

/* One REQ on the wire. A full backlog drops it silently (ucma returns
 * -ENOMEM, the CM answers nothing) and the sender tries again later; after
 * the last try it gives up with UNREACHABLE. */
static void send_req(struct fab_id *active, int delayed)
{
	/* The device that holds the destination; a loopback or wildcard
	 * destination no device holds stays on the active side's device. */
	struct fab_device *dev = topology_device_with_addr((struct sockaddr *)&active->dst);
	struct fab_id *listener, *conn;
	struct fab_conn_param req;
	int reason;

	bool ud = active->qp_type == IBV_QPT_UD;

	if (!dev)
		dev = active->dev;
	if (active->cm != CM_REQ_SENT)
		return;
	active->req_sends++;
	if (req_fault(active, dev, delayed))
		return;
	listener = find_listener(active, dev, &reason);
	if (!listener && ud) {
		/* cm_sidr_req_handler: nobody serves the id. */
		sidr_answer(active, SIDR_UNSUPPORTED, NULL, NULL);
		return;
	}
	if (!listener) {
		reject_request(active, reason);
		return;
	}
	/* cm_req_handler: a REQ that names, from the same node, the QP a
	 * connection being made or made already has as its peer is stale:
	 * REJ 10 (measured on rxe44 and rxe65: two ids without QPs, QP
	 * number 0 both, the second refused while the first waited). */
	if (!ud && live_remote_qpn(active, active->sent.qp_num, active->dev)) {
		reject_request(active, REJ_STALE_CONN);
		return;
	}
	if (listener->pending_requests >= listener->backlog) {
		retry_req(active);
		return;
	}
	conn = new_connection(listener, active, dev);
	if (!conn) {
		reject_request(active, REJ_CONSUMER_DEFINED);
		return;
	}
	active->peer = conn;
	listener->pending_requests++;
	req = request_seen(listener, active);
	fab_queue_event(listener, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &req, conn);
	if (!ud)
		fab_timer_add_patient(active, MRA_TRY_MS * CM_SENDS, TIMER_UNANSWERED, 0, UNANSWERED_QUIET_MS);
}

/* The MRA's last wait is over. The active side gives up (UNREACHABLE,
 * ETIMEDOUT; the IB CM sends nothing: cm_process_send_error), and the
 * passive side, not told, may still accept: its REP then goes unanswered,
 * and after its own tries it hears UNREACHABLE too. */
static void unanswered(struct fab_id *id)
{
	if (id->initiator && id->cm == CM_REQ_SENT && id->peer) {
		id->peer->abandoned = true;
		id->peer->peer = NULL;
		id->peer = NULL;
	} else if (!(!id->initiator && id->cm == CM_REP_SENT && id->abandoned)) {
		return;
	}
	id->cm = CM_IDLE;
	fab_queue_event(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, NULL);
}

/* cma_sidr_rep_handler: the active side of a UD id learns the answer. A
 * success is ESTABLISHED, with the address of the peer's QP and the Q_Key
 * to use; anything else is UNREACHABLE with the REP's status. Either way
 * the exchange is over: a SIDR leaves no connection behind. */
static void sidr_answer(struct fab_id *active, int status, const struct fab_conn_param *rep,
			const struct fab_id *passive)
{
	struct fab_conn_param p = { .private_data_len = SIDR_REP_PRIVATE };
	struct fab_queued *q;

	if (rep)
		memcpy(p.private_data, rep->private_data, rep->private_data_len);
	active->cm = CM_IDLE;
	active->peer = NULL;
	fab_timer_cancel(active);
	q = fab_queue_event(active, status ? RDMA_CM_EVENT_UNREACHABLE : RDMA_CM_EVENT_ESTABLISHED,
			    status, &p, NULL);
	if (q && !status) {
		fab_fill_ah(active, NULL, &q->ev.ud.ah_attr);
		q->ev.ud.qp_num = rep->qp_num;
		q->ev.ud.qkey = passive->qkey;
	}
}

/* Whether a TCP connect to the id's destination finds a listener. */
static bool iwarp_listener(struct fab_id *id)
{
	struct fab_device *dev = topology_device_with_addr((struct sockaddr *)&id->dst);
	int reason;

	return find_listener(id, dev ? dev : id->dev, &reason) != NULL;
}

int fab_connect(struct fab_id *id, const struct fab_conn_param *param)
{
	int err = 0;

	fab_lock();
	if (!id->dev || id->state != ST_ROUTE_RESOLVED) {
		err = -EINVAL;
	} else if (param->private_data_len > req_room(id)) {
		err = -EINVAL;
	} else if (id_on_iwarp(id) && !iwarp_listener(id)) {
		/* An RNIC connects over TCP first (siw_connect's
		 * kernel_connect): a port nobody listens on refuses it in the
		 * call, and the id stays route resolved. */
		err = -ECONNREFUSED;
	} else {
		id->state = ST_CONNECT;
		id->has_cm = true;
		id->initiator = true;
		id->cm = CM_REQ_SENT;
		id->sent = *param;
		id->sent.starting_psn = id->psn;
		send_req(id, 0);
	}
	fab_unlock();
	return err;
}

/* ib_send_cm_rej: legal until the connection is established. */
static bool may_reject(const struct fab_id *id)
{
	return id->has_cm && (id->cm == CM_REQ_SENT || id->cm == CM_REQ_RCVD ||
			      id->cm == CM_REP_SENT || id->cm == CM_REP_RCVD);
}

static void enter_timewait(struct fab_id *id);

static void reject_locked(struct fab_id *id, int reason, const void *data, uint8_t len)
{
	bool after_rep = id->cm == CM_REP_SENT;

	/* A UD request is answered by a SIDR REP that says no. */
	if (id->qp_type == IBV_QPT_UD) {
		struct fab_conn_param rep = { .private_data_len = len };

		if (data && len)
			memcpy(rep.private_data, data, len);
		if (id->peer)
			sidr_answer(id->peer, SIDR_REJECT, &rep, id);
		id->peer = NULL;
		id->cm = CM_IDLE;
		return;
	}

	send_rej(id, reason, data, len);
	if (after_rep)
		enter_timewait(id);
	else
		id->cm = CM_IDLE;
}

/* cm_rep_handler's stale check (cm_insert_remote_qpn): another connection
 * already known by the same remote QP number on the same remote device.
 * Without QPs both ends of a connection on one device are QP 0: the REP
 * names the very connection that sent it. */
static bool stale_remote_qpn(const struct fab_id *active, uint32_t qpn, const struct fab_device *dev)
{
	for (const struct fab_id *x = fab.got_index[qpn % FAB_BIND_BUCKETS]; x; x = x->next_got)
		if (x != active && x->has_cm && x->cm != CM_IDLE && x->remote_dev == dev &&
		    x->got.qp_num == qpn)
			return true;
	return false;
}

/* The REP reaches the active side. A stale one is refused: the passive
 * side gets REJ "stale connection" and enters timewait; the active side's
 * REQ stays unanswered and is sent again later (the listener sees a new
 * request), up to the CM's retry count. */
static void deliver_rep(struct fab_id *passive, struct fab_id *active)
{
	struct fab_conn_param rep = received(passive, &passive->sent, REP_PRIVATE);

	/* A REP has no retry count: the event reads 0 (cma_set_rep_event_data). */
	rep.retry_count = 0;

	if (stale_remote_qpn(active, passive->sent.qp_num, passive->dev)) {
		struct fab_conn_param p = { .private_data_len = REJ_PRIVATE };

		passive->peer = active->peer = NULL;
		enter_timewait(passive);
		fab_queue_event(passive, RDMA_CM_EVENT_REJECTED, REJ_STALE_CONN, &p, NULL);
		retry_req(active);
		return;
	}
	set_got(active, &passive->sent, passive->dev);
	fab_timer_cancel(active);
	active->cm = CM_REP_RCVD;
	fab_queue_event(active, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &rep, NULL);
}

static void send_dreq(struct fab_id *id);

/* The faults at an established connection, reached once for each side
 * (the active one first), aimed by the server's address and port and the
 * side's process. The side's peer goes away:
 * - rdmamock/rdmacm/event/disconnected: the peer sends a DREQ at once, as
 *   a program that disconnects or dies does; the side reads DISCONNECTED
 *   (status 0), and the peer its own once the side answers.
 * - rdmamock/rdmacm/event/addr_change: the side's device fails over to
 *   another hardware address (fab_addr_change_locked);
 * - rdmamock/rdmacm/event/vanish: the peer's host is gone without a word:
 *   nothing more passes between the two QPs (a reliable sender runs out of
 *   retries), and a DREQ from either side goes unanswered (DISCONNECTED
 *   with -ETIMEDOUT after the CM's DREQ retries, as cma_ib_handler reports
 *   IB_CM_DREQ_ERROR). */
static bool conn_fault(struct fab_id *side, struct fab_id *peer)
{
	const struct sockaddr_storage *server = side->initiator ? &side->dst : &side->src;
	struct fault_where where = {
		.dev = side->dev ? side->dev->name : NULL,
		.addr = (const struct sockaddr *)server,
		.port = fab_addr_port((const struct sockaddr *)server),
		.qpn = side->sent.qp_num,
		.pid = fab_owner_pid(fab_owner_of(side)),
	};
	struct fault_action act;

	if (!fab_fault_any())
		return false;
	if (fab_fault_fire("rdmamock/rdmacm/event/disconnected", &where, &act)) {
		send_dreq(peer);
		return true;
	}
	if (fab_fault_fire("rdmamock/rdmacm/event/addr_change", &where, &act)) {
		fab_addr_change_locked(side->dev);
		return true;
	}
	if (!fab_fault_fire("rdmamock/rdmacm/event/vanish", &where, &act))
		return false;
	side->cut = peer->cut = true;
	fab_qp_cut_locked(side->sent.qp_num);
	fab_qp_cut_locked(peer->sent.qp_num);
	return true;
}

/* cma_accept_ib (REP, passive side) or cma_rep_recv (RTU, active side). An
 * accept that fails past the state check also rejects the connection, as
 * rdma_accept's error path does. */
int fab_accept(struct fab_id *id, uint64_t uid, const struct fab_conn_param *param)
{
	struct fab_id *peer;
	int err = 0;

	fab_lock();
	peer = id->peer;
	if (id->destroyed || !id->dev || id->state != ST_CONNECT) {
		err = -EINVAL;
	} else if (param && id->stream_reset) {
		/* An RNIC's: the MPA reply finds the stream closed (siw). */
		err = -ECONNRESET;
	} else if (id->qp_type == IBV_QPT_UD) {
		/* cma_send_sidr_rep: the answer to a SIDR REQ. */
		if (!param || id->cm != CM_REQ_RCVD || !peer || param->private_data_len > SIDR_REP_PRIVATE) {
			err = -EINVAL;
		} else {
			id->sent = *param;
			id->uid = uid;
			id->cm = CM_IDLE;
			id->peer = NULL;
			sidr_answer(peer, 0, param, id);
		}
	} else if (param && id->cm == CM_REQ_RCVD && id->abandoned && param->private_data_len <= REP_PRIVATE) {
		/* The active side gave up: the REP finds nobody waiting. */
		id->sent = *param;
		id->uid = uid;
		id->cm = CM_REP_SENT;
		fab_timer_add_patient(id, CM_TRY_MS_RESPONDER * CM_SENDS, TIMER_UNANSWERED, 0, UNANSWERED_QUIET_MS);
	} else if (param && (id->cm != CM_REQ_RCVD || !peer || param->private_data_len > REP_PRIVATE)) {
		err = -EINVAL;
	} else if (!param && (id->cm != CM_REP_RCVD || !peer)) {
		err = -EINVAL;
	} else if (param) {
		id->sent = *param;
		id->sent.starting_psn = id->psn;
		id->uid = uid;
		id->cm = CM_REP_SENT;
		if (!msg_delayed(id, TIMER_REP_ARRIVES))
			deliver_rep(id, peer);
	} else {
		/* The RTU. A passive side that rdma_notify established already
		 * drops it (cm_rtu_handler). */
		id->cm = CM_ESTABLISHED;
		if (peer->cm != CM_ESTABLISHED) {
			peer->cm = CM_ESTABLISHED;
			fab_queue_event(peer, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL);
		}
		if (!conn_fault(id, peer))
			conn_fault(peer, id);
	}
	if (err && id->dev && id->state == ST_CONNECT && may_reject(id))
		reject_locked(id, REJ_CONSUMER_DEFINED, NULL, 0);
	fab_unlock();
	return err;
}

/* ucma_reject: reason 0 means "consumer defined"; only that and "vendor
 * option not supported" (rdma_reject_ece) may be sent. */
int fab_reject(struct fab_id *id, const void *data, uint8_t len, uint8_t reason)
{
	int err = 0;

	if (!reason)
		reason = REJ_CONSUMER_DEFINED;
	fab_lock();
	if (!id->dev || !may_reject(id) ||
	    len > (id->qp_type == IBV_QPT_UD ? SIDR_REP_PRIVATE : REJ_PRIVATE) ||
	    (reason != REJ_CONSUMER_DEFINED && reason != REJ_VENDOR_OPTION_NOT_SUPPORTED))
		err = -EINVAL;
	else
		reject_locked(id, reason, data, len);
	fab_unlock();
	return err;
}

/* ---------------------------------------------------------------- teardown */

static void timewait_over(struct fab_id *id, int unused)
{
	id->cm = CM_IDLE;
	fab_queue_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, NULL);
}

/* cm_enter_timewait: TIMEWAIT_EXIT follows, but cma_ib_handler passes it on
 * only for an id that reported DISCONNECTED. */
static void enter_timewait(struct fab_id *id)
{
	id->cm = CM_TIMEWAIT;
	fab_timer_cancel(id);
	if (id->disconnected)
		fab_timer_add(id, TIMEWAIT_MS, TIMER_TIMEWAIT, 0);
}

static void disconnected(struct fab_id *id, int status)
{
	fab_queue_event(id, RDMA_CM_EVENT_DISCONNECTED, status, NULL, NULL);
}

/* Every DREQ try went unanswered (IB_CM_DREQ_ERROR). */
static void dreq_timed_out(struct fab_id *id, int unused)
{
	if (id->cm != CM_DREQ_SENT)
		return;
	disconnected(id, -ETIMEDOUT);
	enter_timewait(id);
}

/* The DREQ reaches the peer: it reads DISCONNECTED. */
static void dreq_arrives(struct fab_id *id)
{
	if (id->cm == CM_DREQ_SENT && id->peer && id->peer->cm == CM_ESTABLISHED && !id->cut) {
		id->peer->cm = CM_DREQ_RCVD;
		disconnected(id->peer, 0);
	}
}

/* ESTABLISHED -> DREQ_SENT; the peer learns of it at once, or after the
 * delay of a fault at the message (msg_delayed). */
static void send_dreq(struct fab_id *id)
{
	unsigned try_ms = id->initiator ? CM_TRY_MS_INITIATOR : CM_TRY_MS_RESPONDER;

	id->cm = CM_DREQ_SENT;
	fab_timer_add_patient(id, try_ms * CM_SENDS, TIMER_DREQ, 0, UNANSWERED_QUIET_MS);
	if (!msg_delayed(id, TIMER_DREQ_ARRIVES))
		dreq_arrives(id);
}

/* DREQ_RCVD -> TIMEWAIT; the side that sent the DREQ is done too. */
static void send_drep(struct fab_id *id)
{
	struct fab_id *peer = id->peer;

	enter_timewait(id);
	if (peer && peer->cm == CM_DREQ_SENT) {
		disconnected(peer, 0);
		enter_timewait(peer);
	}
}

/* rdma_disconnect: -EINVAL for an id that never talked CM; otherwise a DREQ
 * or a DREP as the state allows, and 0 even when neither applies. */
int fab_disconnect(struct fab_id *id)
{
	int err = 0;

	fab_lock();
	if (!id->dev || !id->has_cm)
		err = -EINVAL;
	else if (id->cm == CM_ESTABLISHED)
		send_dreq(id);
	else if (id->cm == CM_DREQ_RCVD)
		send_drep(id);
	fab_unlock();
	return err;
}

/* cm_destroy_id: what a dying id says to its peer. */
static void say_goodbye(struct fab_id *id)
{
	/* A SIDR REQ being served is refused; one sent is forgotten. */
	if (id->qp_type == IBV_QPT_UD) {
		if (id->cm == CM_REQ_RCVD)
			reject_locked(id, SIDR_REJECT, NULL, 0);
		if (id->peer)
			id->peer->peer = NULL;
		id->peer = NULL;
		return;
	}
	switch (id->cm) {
	case CM_REQ_SENT:
		send_rej(id, REJ_TIMEOUT, NULL, 0);
		break;
	case CM_REQ_RCVD:
	case CM_REP_SENT:
	case CM_REP_RCVD:
		send_rej(id, REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CM_ESTABLISHED:
		send_dreq(id);
		break;
	case CM_DREQ_RCVD:
		send_drep(id);
		break;
	default:
		break;
	}
	if (id->peer)
		id->peer->peer = NULL;
	id->peer = NULL;
}

/* Out of the fabric: no peer, port, timer, event or list holds it. */
static void unlink_id_locked(struct fab_id *id)
{
	got_unindex(id);
	say_goodbye(id);
	fab_leave_all_locked(id);
	fab_drop_request(id);
	fab_timer_cancel(id);
	if (id->chan)
		fab_drop_events(id, id->chan);
	port_release(id);
	if (id->dev && !--id->dev->users && id->dev->removing)
		topology_device_remove_locked(id->dev->name);
	if (id->prev_live)
		id->prev_live->next_live = id->next_live;
	else
		fab.live = id->next_live;
	if (id->next_live)
		id->next_live->prev_live = id->prev_live;
	fab.nlive--;
}

void fab_destroy_unreported_locked(struct fab_id *id)
{
	unlink_id_locked(id);
	fab_free(id);
}

/* A dead member's ids go as rdma_destroy_id would take them (a file of a
 * process that is gone is closed, and ucma destroys its ids): peers see
 * DISCONNECTED or REJECTED, listeners' ports come free. A destruction may
 * make another of its ids (a new connection), so look again each time. */
void fab_reap_locked(int owner)
{
	struct fab_id *id;

	do {
		for (id = fab.live; id && id->owner != owner; id = id->next_live)
			;
		if (id)
			fab_destroy_unreported_locked(id);
	} while (id);
	fab_qp_reap_locked(owner);
	fab_timer_reap_locked(owner);
}

void cm_timer_fire(struct fab_id *id, enum fab_timer_kind kind, int arg)
{
	switch (kind) {
	case TIMER_ADDR_QUERY:
		addr_query_timed_out(id, arg);
		break;
	case TIMER_SEND_REQ:
		send_req(id, arg);
		break;
	case TIMER_TIMEWAIT:
		timewait_over(id, arg);
		break;
	case TIMER_DREQ:
		dreq_timed_out(id, arg);
		break;
	case TIMER_REP_ARRIVES:
		if (id->cm == CM_REP_SENT && id->peer)
			deliver_rep(id, id->peer);
		break;
	case TIMER_DREQ_ARRIVES:
		dreq_arrives(id);
		break;
	case TIMER_UNANSWERED:
		unanswered(id);
		break;
	case TIMER_VERBS:
	case TIMER_WAKE:
		break; /* core.c fires these itself */
	}
}

int fab_destroy_id(struct fab_id *id)
{
	int reported;

	fab_lock();
	reported = (int)id->events_reported;
	unlink_id_locked(id);
	id->destroyed = true;
	fab_unlock();
	return reported;
}

void fab_free_id(struct fab_id *id)
{
	fab_free(id);
}

int fab_migrate_id(struct fab_id *id, struct fab_chan *to)
{
	struct fab_chan *from;
	int reported;

	fab_lock();
	from = id->chan;
	id->chan = to;
	id->owner = to->owner;
	fab_move_events(id, from);
	reported = (int)id->events_reported;
	fab_unlock();
	return reported;
}

/* ---------------------------------------------------------------- options */

/* ucma_set_option_id: rdma_set_reuseaddr / rdma_set_afonly rules; TOS is
 * kept (it shapes nothing the mock models yet). rdma_set_ack_timeout takes
 * an RC or XRC initiator id only, and its value overrides the CM's
 * timeout in what rdma_init_qp_attr gives. */
static int set_id_option(struct fab_id *id, int optname, const void *optval, size_t optlen)
{
	int on;

	switch (optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return -EINVAL;
		if (optname == RDMA_OPTION_ID_TOS) {
			id->tos = *(const uint8_t *)optval;
		} else {
			if (id->qp_type != IBV_QPT_RC && id->qp_type != IBV_QPT_XRC_SEND)
				return -EINVAL;
			id->ack_timeout = *(const uint8_t *)optval;
			id->ack_timeout_set = true;
		}
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return -EINVAL;
		on = *(const int *)optval != 0;
		if (optname == RDMA_OPTION_ID_REUSEADDR) {
			if (!((on && id->state != ST_LISTEN) || id->state == ST_IDLE))
				return -EINVAL;
			id->reuseaddr = on;
		} else {
			if (id->state != ST_IDLE && id->state != ST_ADDR_BOUND)
				return -EINVAL;
			id->afonly = on;
			id->afonly_set = true;
		}
		return 0;
	default:
		return -ENOSYS;
	}
}

/* ucma_set_ib_path: of the records given, the primary bidirectional one
 * (flags GMP, PRIMARY, OUTBOUND and INBOUND_REVERSE, exactly) becomes the
 * route of an id whose address is resolved, and ROUTE_RESOLVED follows
 * (rdma_set_ib_path). optlen must be whole records. A RoCE port needs the
 * net device the address resolution bound (an AF_IB id has none: ENODEV). */
static int set_ib_path(struct fab_id *id, const struct ibv_path_data *data, size_t optlen)
{
	const uint32_t primary = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;
	const struct ibv_path_record *r = NULL;
	struct fab_path *p = &id->path;

	if (optlen % sizeof *data)
		return -EINVAL;
	for (size_t i = 0; i < optlen / sizeof *data && !r; i++)
		if (data[i].flags == primary)
			r = &data[i].path;
	if (!r || !id->dev || id->state != ST_ADDR_RESOLVED)
		return -EINVAL;
	if (!id_on_ib(id) && id->src.ss_family == AF_IB)
		return -ENODEV;
	memset(p, 0, sizeof *p);
	p->sgid = r->sgid;
	p->dgid = r->dgid;
	p->slid = be16toh(r->slid);
	p->dlid = be16toh(r->dlid);
	p->pkey = be16toh(r->pkey);
	p->flow_label = (be32toh(r->flowlabel_hoplimit) >> 8) & 0xfffff;
	p->hop_limit = (uint8_t)be32toh(r->flowlabel_hoplimit);
	p->traffic_class = r->tclass;
	p->sl = be16toh(r->qosclass_sl) & 0xf;
	p->mtu = r->mtu & 0x3f;
	p->rate = r->rate & 0x3f;
	p->packet_life = r->packetlifetime & 0x3f;
	id->path_given = true;
	id->route_resolved = true;
	id->state = ST_ROUTE_RESOLVED;
	fab_queue_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL);
	return 0;
}

int fab_set_option(struct fab_id *id, int level, int optname, const void *optval, size_t optlen)
{
	int err;

	if (!optval)
		return -EFAULT;
	fab_lock();
	if (level == RDMA_OPTION_ID)
		err = set_id_option(id, optname, optval, optlen);
	else if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH)
		err = set_ib_path(id, optval, optlen);
	else
		err = -ENOSYS;
	fab_unlock();
	return err;
}

/* ---------------------------------------------------------------- QP attributes */


/* The address vector to the peer: RoCE always carries a GRH. */
void fab_fill_ah(const struct fab_id *id, const union ibv_gid *dgid, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof *ah);
	ah->is_global = 1;
	ah->port_num = 1;
	if (dgid) {
		ah->grh.dgid = *dgid;
	} else {
		/* cma_get_roce_udp_flow_label: the path's flow label hashes the
		 * ports (measured on rxe: sport * 31 + dport). */
		uint32_t sport = fab_addr_port((const struct sockaddr *)&id->src);
		uint32_t dport = fab_addr_port((const struct sockaddr *)&id->dst);

		fab_addr_to_gid((const struct sockaddr *)&id->dst, &ah->grh.dgid);
		ah->grh.flow_label = (sport * 31 + dport) & 0xfffff;
	}
	ah->grh.sgid_index = (uint8_t)topology_gid_index(id->dev, (const struct sockaddr *)&id->src);
	ah->grh.hop_limit = ROCE_HOP_LIMIT;
	ah->grh.traffic_class = id->tos;
	/* InfiniBand within the subnet: the SA's path has hop limit 0, so no
	 * GRH (ib_init_ah_attr_from_path); the peer's port by its LID. A
	 * multicast group keeps its GRH. */
	if (id_on_ib(id) && !(dgid && fab_gid_is_multicast(dgid))) {
		struct fab_device *peer = ib_peer_locked(id);

		memset(&ah->grh, 0, sizeof ah->grh);
		ah->is_global = 0;
		ah->dlid = peer ? topology_lid_locked(peer->serial) : 0;
	}
	/* An RNIC has one GID, of its MAC address (siw): the mock's device
	 * reaches the peer's by it. */
	if (id_on_iwarp(id) && !dgid) {
		struct fab_device *peer = ib_peer_locked(id);

		if (peer)
			topology_port_gid(peer, &ah->grh.dgid);
	}
	/* A path of its own: ib_init_ah_attr_from_path takes its DGID, hop
	 * limit, traffic class, flow label and SL (and on InfiniBand its
	 * DLID, with a GRH only past the subnet). */
	if (id->path_given && !dgid) {
		const struct fab_path *p = &id->path;

		ah->sl = p->sl;
		if (id_on_ib(id)) {
			ah->dlid = p->dlid;
			ah->is_global = p->hop_limit > 0;
		}
		if (ah->is_global) {
			ah->grh.dgid = p->dgid;
			ah->grh.hop_limit = p->hop_limit;
			ah->grh.traffic_class = p->traffic_class;
			ah->grh.flow_label = p->flow_label;
		}
	}
}

/* cm_ack_timeout: the local ACK timeout the CM gives a QP, from the
 * device's CA ACK delay and the path's packet life time. */
static uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life)
{
	int t = packet_life + 1;

	if (t >= ca_ack_delay)
		t += ca_ack_delay >= t - 1;
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1);
	return (uint8_t)(t < 31 ? t : 31);
}

/* The depths the CM settled on: the active side takes the REP's, seen
 * from its end; the passive side those of its REP once sent, and before
 * that the REQ's, seen from its end (cm_req_handler), which is what
 * rdma_accept's move through INIT and RTR reads: a REQ offering an
 * initiator depth gives the passive QP remote read and atomic access. */
static void settled_depths(const struct fab_id *id, uint8_t *responder, uint8_t *initiator)
{
	if (id->initiator || id->cm == CM_REQ_RCVD) {
		*responder = id->got.initiator_depth;
		*initiator = id->got.responder_resources;
	} else {
		*responder = id->sent.responder_resources;
		*initiator = id->sent.initiator_depth;
	}
}

/* An RNIC's CM (iw_cm_init_qp_attr through rdma_init_qp_attr): the QP is
 * the provider's to connect, over the stream MPA set up, so the masks
 * carry no path. INIT and RTR: the state and access (none before the id
 * has an iWARP CM id, remote read and write after) and the port; RTS: the
 * port alone, once connecting; another state is EINVAL then. */
static int init_qp_attr_iwarp(const struct fab_id *id, struct ibv_qp_attr *attr, int *mask)
{
	*mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT;
	attr->port_num = 1;
	if (!id->has_cm)
		return 0;
	switch (attr->qp_state) {
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		return 0;
	case IBV_QPS_RTS:
		*mask = IBV_QP_PORT;
		return 0;
	default:
		return -EINVAL;
	}
}

/* rdma_init_qp_attr: cma_ib_init_qp_attr before a connection (and for UD),
 * ib_cm_init_qp_attr once the CM has exchanged a REQ. */
static int init_qp_attr_locked(struct fab_id *id, struct ibv_qp_attr *attr, int *mask)
{
	bool ud = id->qp_type == IBV_QPT_UD, connected = id->has_cm && !ud;
	uint8_t responder = 0, initiator = 0;

	if (connected)
		settled_depths(id, &responder, &initiator);
	*mask = IBV_QP_STATE;
	switch (attr->qp_state) {
	case IBV_QPS_INIT:
		*mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		attr->port_num = 1;
		attr->pkey_index = 0;
		if (ud) {
			*mask |= IBV_QP_QKEY;
			attr->qkey = RDMA_UDP_QKEY;
		} else {
			*mask |= IBV_QP_ACCESS_FLAGS;
			attr->qp_access_flags = !connected ? 0
				: IBV_ACCESS_REMOTE_WRITE |
				  (responder ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
		}
		return 0;
	case IBV_QPS_RTR:
		if (ud)
			return 0;
		if (!connected)
			return -EINVAL;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		fab_fill_ah(id, NULL, &attr->ah_attr);
		attr->path_mtu = id->path_given ? id->path.mtu : fab_active_mtu(id_on_ib(id));
		attr->dest_qp_num = id->got.qp_num;
		attr->rq_psn = id->got.starting_psn;
		if (id->qp_type == IBV_QPT_RC || id->qp_type == IBV_QPT_XRC_RECV) {
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
			attr->max_dest_rd_atomic = responder;
			attr->min_rnr_timer = 0;
		}
		return 0;
	case IBV_QPS_RTS:
		*mask |= IBV_QP_SQ_PSN;
		if (ud)
			return 0;
		if (!connected)
			return -EINVAL;
		attr->sq_psn = id->psn;
		/* cm_init_qp_rts_attr: the retry counts and depth for who sends
		 * requests (RC, the XRC initiator), the timeout for them and the
		 * XRC target. */
		if (id->qp_type == IBV_QPT_RC || id->qp_type == IBV_QPT_XRC_SEND) {
			const struct fab_conn_param *req = id->initiator ? &id->sent : &id->got;

			*mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
			attr->retry_cnt = req->retry_count;
			/* The RNR retries asked for by the other side's message:
			 * cm_rep_handler takes the REP's, cm_req_handler the REQ's. */
			attr->rnr_retry = id->got.rnr_retry_count;
			attr->max_rd_atomic = initiator;
		}
		if (id->qp_type == IBV_QPT_RC || id->qp_type == IBV_QPT_XRC_SEND ||
		    id->qp_type == IBV_QPT_XRC_RECV) {
			/* cm_rep_handler and cm_req_handler: from the path's
			 * packet life time (the SA's on InfiniBand, the CM's 16
			 * on RoCE, or a path of one's own) and the ACK delay the
			 * peer's CA announced in its REQ or REP. */
			const struct fab_device *peer = id->remote_dev ? id->remote_dev : id->dev;
			uint8_t life = id->path_given ? id->path.packet_life : packet_life(id);

			*mask |= IBV_QP_TIMEOUT;
			attr->timeout = id->ack_timeout_set ? id->ack_timeout
				: cm_ack_timeout(fab_profile_of(peer->personality)->local_ca_ack_delay, life);
		}
		return 0;
	default:
		return -EINVAL;
	}
}

static int init_qp_attr(struct fab_id *id, struct ibv_qp_attr *attr, int *mask, bool wire)
{
	enum ibv_qp_state state = attr->qp_state;
	int err;

	memset(attr, 0, sizeof *attr);
	attr->qp_state = state;
	fab_lock();
	if (!id->dev)
		err = -EINVAL;
	else if (!wire && id_on_iwarp(id))
		err = init_qp_attr_iwarp(id, attr, mask);
	else
		err = init_qp_attr_locked(id, attr, mask);
	fab_unlock();
	return err;
}

int fab_init_qp_attr(struct fab_id *id, struct ibv_qp_attr *attr, int *mask)
{
	return init_qp_attr(id, attr, mask, false);
}

int fab_wire_qp_attr(struct fab_id *id, struct ibv_qp_attr *attr, int *mask)
{
	return init_qp_attr(id, attr, mask, true);
}

bool fab_id_iwarp(const struct fab_id *id)
{
	bool iwarp;

	fab_lock();
	iwarp = id_on_iwarp(id);
	fab_unlock();
	return iwarp;
}

/* ---------------------------------------------------------------- written events, SA */

int fab_write_event(struct fab_id *id, enum rdma_cm_event_type type, int status, uint64_t arg)
{
	struct fab_queued *q;

	if (type != RDMA_CM_EVENT_USER && type != RDMA_CM_EVENT_INTERNAL)
		return -EINVAL;
	fab_lock();
	q = fab_queue_event(id, type, status, NULL, NULL);
	if (q)
		q->ev.arg = arg;
	fab_unlock();
	return 0;
}

/* ---------------------------------------------------------------- the SA's service records */

static bool service_live(const struct fab_service *sv)
{
	return sv->used && topology_device_name_locked(sv->serial);
}

/* rdmamock_sa_service_add: a record of the service id and name at the
 * port GID of an InfiniBand device, P_Key 0xffff, as a service registers
 * one (SubnAdmSet(ServiceRecord)). A record whose device went is
 * forgotten; the same record again is -EEXIST. */
int fab_sa_service_add(const char *name_of_dev, uint64_t service_id, const char *name)
{
	struct fab_service *free_slot = NULL;
	struct fab_device *dev;
	union ibv_gid gid;
	int err = 0;

	if (!name || strlen(name) >= FAB_SERVICE_NAME)
		return -EINVAL;
	fab_lock();
	dev = name_of_dev ? topology_device_locked(name_of_dev) : NULL;
	if (!dev) {
		err = -ENODEV;
	} else if (!(dev->caps & FAB_CAP_IB)) {
		err = -EINVAL;
	} else {
		topology_port_gid(dev, &gid);
		for (int i = 0; i < FAB_SA_SERVICES && !err; i++) {
			struct fab_service *sv = &fab.services[i];

			if (!service_live(sv)) {
				if (!free_slot)
					free_slot = sv;
			} else if (sv->rec.id == service_id && !strcmp(sv->rec.name, name) &&
				   !memcmp(&sv->rec.gid, &gid, sizeof gid)) {
				err = -EEXIST;
			}
		}
		if (!err && !free_slot)
			err = -ENOSPC;
	}
	if (!err) {
		memset(free_slot, 0, sizeof *free_slot);
		free_slot->used = true;
		free_slot->serial = dev->serial;
		free_slot->rec.id = service_id;
		strcpy(free_slot->rec.name, name);
		free_slot->rec.gid = gid;
		free_slot->rec.pkey = 0xffff;
	}
	fab_unlock();
	return err;
}

/* rdma_resolve_ib_service: a bound id of an InfiniBand port asks its SA
 * (RoCE has none: -EOPNOTSUPP; an id with no device or not merely bound:
 * -EINVAL). The records of the service id or name, in the order they were
 * registered: none is ADDRINFO_ERROR with -ENOENT and the id bound again;
 * else ADDRINFO_RESOLVED, and the first record is the id's destination
 * (cma_query_ib_service_handler: its GID, P_Key and service id). */
int fab_resolve_ib_service(struct fab_id *id, unsigned flags, uint64_t service_id, const char *name)
{
	int err = 0;

	fab_lock();
	if (!id->dev || id->state != ST_ADDR_BOUND) {
		err = -EINVAL;
	} else if (!id_on_ib(id)) {
		err = -EOPNOTSUPP;
	} else {
		id->nservices = 0;
		for (int i = 0; i < FAB_SA_SERVICES && id->nservices < sizeof id->services; i++) {
			const struct fab_service *sv = &fab.services[i];

			if (!service_live(sv) || ((flags & FAB_SERVICE_ID) && sv->rec.id != service_id) ||
			    ((flags & FAB_SERVICE_NAMED) && strncmp(sv->rec.name, name, FAB_SERVICE_NAME)))
				continue;
			id->services[id->nservices++] = (uint8_t)i;
		}
		if (!id->nservices) {
			fab_queue_event(id, RDMA_CM_EVENT_ADDRINFO_ERROR, -ENOENT, NULL, NULL);
		} else {
			const struct fab_service_rec *rec = &fab.services[id->services[0]].rec;
			struct sockaddr_ib *dst = (struct sockaddr_ib *)&id->dst;

			memset(&id->dst, 0, sizeof id->dst);
			dst->sib_family = AF_IB;
			memcpy(&dst->sib_addr, &rec->gid, sizeof rec->gid);
			dst->sib_pkey = htons(rec->pkey);
			dst->sib_sid = htobe64(rec->id);
			id->state = ST_ADDRINFO_RESOLVED;
			fab_queue_event(id, RDMA_CM_EVENT_ADDRINFO_RESOLVED, 0, NULL, NULL);
		}
	}
	fab_unlock();
	return err;
}

int fab_query_ib_service(struct fab_id *id, struct fab_service_rec *recs, int max)
{
	int n;

	fab_lock();
	n = id->state == ST_ADDRINFO_RESOLVED ? id->nservices : 0;
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++)
		recs[i] = fab.services[id->services[i]].rec;
	fab_unlock();
	return n;
}

/* ---------------------------------------------------------------- notify */

/* ib_cm_notify: COMM_EST, a passive side that got data before the RTU,
 * establishes its connection now (cm_establish): ESTABLISHED follows and
 * the RTU, when it comes, is dropped. PATH_MIG is taken on an established
 * connection (cm_migrate); any other event is -EINVAL, as is an id with no
 * CM exchange (kernel cma.c rdma_notify). */
int fab_notify(struct fab_id *id, enum ibv_event_type event)
{
	int err = 0;

	fab_lock();
	if (!id->has_cm) {
		err = -EINVAL;
	} else if (event == IBV_EVENT_COMM_EST) {
		if (id->cm == CM_ESTABLISHED)
			err = -EISCONN;
		else if (id->cm != CM_REP_SENT)
			err = -EINVAL;
		else {
			id->cm = CM_ESTABLISHED;
			fab_queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL);
		}
	} else if (event == IBV_EVENT_PATH_MIG) {
		/* The mock has no alternate path to move to: the
		 * connection goes on as it was. */
		if (id->cm != CM_ESTABLISHED)
			err = -EINVAL;
	} else {
		err = -EINVAL; /* ib_cm_notify takes no other event */
	}
	fab_unlock();
	return err;
}

/* cma_process_remove: each id on a device being removed reads
 * DEVICE_REMOVAL (status 0); what it was doing is cancelled
 * (cma_cancel_operation), and only rdma_destroy_id is left to it. Its QP
 * and its peer are left alone (measured on rxe, kernel 6.1: QPs stay in
 * RTS, and the device goes when the ids are destroyed). */
void fab_device_removal_locked(struct fab_device *dev)
{
	for (struct fab_id *id = fab.live; id; id = id->next_live) {
		if (id->dev != dev)
			continue;
		fab_timer_cancel(id);
		id->state = ST_DEVICE_REMOVAL;
		fab_queue_event(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, NULL, NULL);
	}
}

/* cma_netdev_callback: a bonding failover that changes the hardware
 * address of a device's net device tells every id bound to it with
 * ADDR_CHANGE (status 0); the ids and their connections go on. */
void fab_addr_change_locked(struct fab_device *dev)
{
	for (struct fab_id *id = fab.live; id; id = id->next_live)
		if (id->dev == dev && id->state != ST_DEVICE_REMOVAL)
			fab_queue_event(id, RDMA_CM_EVENT_ADDR_CHANGE, 0, NULL, NULL);
}

/* The server's address of the connection whose id carries QP qpn, for
 * faults aimed at a connection (addr=, port=). */
bool fab_qp_server_locked(uint32_t qpn, struct sockaddr_storage *server)
{
	for (const struct fab_id *id = fab.live; id && qpn; id = id->next_live) {
		if (!id->has_cm || id->sent.qp_num != qpn)
			continue;
		*server = id->initiator ? id->dst : id->src;
		return true;
	}
	return false;
}

bool fab_qp_server(uint32_t qpn, struct sockaddr_storage *server, int *port)
{
	bool found;

	fab_lock();
	found = fab_qp_server_locked(qpn, server);
	if (found)
		*port = fab_addr_port((const struct sockaddr *)server);
	fab_unlock();
	return found;
}
