/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fabric's QPs and the wire between them: each QP's number, device,
 * state, remote QP number and the UDP source port RoCE v2 packets would
 * carry; and fab_transmit, which carries one packet from
 * a requester to the QP (or the group) it is for and brings the answer
 * back. The receiving side is the verbs layer that registered the QP: the
 * fabric only finds it, as a network finds a host. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "control/mock.h"

#define QPN_MASK 0xffffff

/* This process's receiver: the same function in every process (the verbs
 * layer's), so the one registered here serves any QP of the fabric. */
static fab_receiver receiver;

static struct fab_qp **qp_slot(uint32_t qpn)
{
	struct fab_qp **pos;

	for (pos = &fab.qps[qpn % FAB_QP_BUCKETS]; *pos && (*pos)->qpn != qpn; pos = &(*pos)->next)
		;
	return pos;
}

void fab_set_receiver(fab_receiver receive)
{
	receiver = receive;
}

int fab_qp_create(unsigned dev_serial, enum ibv_qp_type type, void *owner, fab_receiver receive,
		  uint32_t *qpn)
{
	struct fab_qp *qp = fab_alloc(sizeof *qp);

	if (!qp)
		return -ENOMEM;
	receiver = receive;
	fab_lock();
	do {
		qp->qpn = fab.next_qpn;
		fab.next_qpn = (fab.next_qpn + 1) & QPN_MASK;
		if (fab.next_qpn < FAB_QPN_FIRST)
			fab.next_qpn = FAB_QPN_FIRST;
	} while (*qp_slot(qp->qpn));
	qp->dev_serial = dev_serial;
	qp->type = type;
	qp->state = IBV_QPS_RESET;
	qp->owner = fab_owner_self();
	qp->receiver = owner;
	qp->next = fab.qps[qp->qpn % FAB_QP_BUCKETS];
	fab.qps[qp->qpn % FAB_QP_BUCKETS] = qp;
	*qpn = qp->qpn;
	fab_unlock();
	return 0;
}

static void unlink_qp_locked(struct fab_qp **pos)
{
	struct fab_qp *qp = *pos;

	*pos = qp->next;
	mcast_forget_qp_locked(qp->qpn);
	fab_free(qp);
}

/* The QP leaves its multicast groups with it, as a destroyed QP is
 * detached by the kernel. */
void fab_qp_destroy(uint32_t qpn)
{
	struct fab_qp **pos;

	fab_lock();
	pos = qp_slot(qpn);
	if (*pos)
		unlink_qp_locked(pos);
	fab_unlock();
}

/* A dead member's QPs vanish: packets to them find nobody. */
void fab_qp_reap_locked(int owner)
{
	for (int b = 0; b < FAB_QP_BUCKETS; b++) {
		struct fab_qp **pos = &fab.qps[b];

		while (*pos)
			if ((*pos)->owner == owner)
				unlink_qp_locked(pos);
			else
				pos = &(*pos)->next;
	}
}

void fab_qp_modified(uint32_t qpn, enum ibv_qp_state state, uint32_t dest_qpn,
		     const uint32_t *flow_label)
{
	struct fab_qp *qp;

	fab_lock();
	qp = *qp_slot(qpn);
	if (qp) {
		qp->state = state;
		if (dest_qpn)
			qp->dest_qpn = dest_qpn;
		if (flow_label)
			qp->flow_label = *flow_label & 0xfffff;
		if (state == IBV_QPS_RESET) {
			qp->cut = false;
			qp->sport_set = false;
			qp->dest_qpn = 0;
			qp->flow_label = 0;
		}
	}
	fab_unlock();
}

int fab_qp_set_udp_sport(uint32_t qpn, uint16_t port)
{
	struct fab_qp *qp;
	int err = 0;

	fab_lock();
	qp = *qp_slot(qpn);
	if (!qp)
		err = -ENOENT;
	else if (qp->state != IBV_QPS_RTS)
		err = -EINVAL; /* the firmware's RTS2RTS: bad resource state */
	else {
		qp->sport = port;
		qp->sport_set = true;
	}
	fab_unlock();
	return err;
}

/* The kernel's rdma_calc_flow_label and rdma_flow_label_to_udp_sport. */
static uint16_t derived_sport(uint32_t lqpn, uint32_t rqpn, uint32_t flow_label)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	uint32_t fl = flow_label, low;

	/* The path's flow label when it has one, else one from the QPNs. */
	if (!fl) {
		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)(v & 0xfffff);
	}
	low = (fl & 0x3fff) ^ ((fl & 0xfc000) >> 14);
	return (uint16_t)(low | 0xc000);
}

int fab_qp_udp_sport(uint32_t qpn, uint16_t *port)
{
	struct fab_qp *qp;

	fab_lock();
	qp = *qp_slot(qpn);
	if (qp)
		*port = qp->sport_set ? qp->sport : derived_sport(qp->qpn, qp->dest_qpn, qp->flow_label);
	fab_unlock();
	return qp ? 0 : -ENOENT;
}

/* ---------------------------------------------------------------- the wire */



/* Whom a unicast packet reaches: the QP of that number, on a device of
 * the sender's link layer (an InfiniBand subnet and an Ethernet share no
 * wire) that holds the destination GID, or without a GRH the destination
 * LID. */
static struct fab_qp *unicast_target(const struct fab_packet *pkt)
{
	struct fab_qp *qp = *qp_slot(pkt->dst_qpn);
	uint16_t lid;

	if (!qp)
		return NULL;
	lid = topology_lid_locked(qp->dev_serial);
	if (!lid != !topology_lid_locked(pkt->src_dev))
		return NULL;
	if (pkt->no_grh ? lid != pkt->dlid : !topology_device_has_gid(qp->dev_serial, &pkt->dgid))
		return NULL;
	return qp;
}

void (*fab_port_hook)(unsigned serial, bool up);

void fab_set_port_hook(void (*hook)(unsigned serial, bool up))
{
	fab_port_hook = hook;
}

void (*fab_fatal_hook)(unsigned serial);

void fab_set_fatal_hook(void (*hook)(unsigned serial))
{
	fab_fatal_hook = hook;
}

static const struct fab_dv_provider *dv_provider;

void fab_set_dv_provider(const struct fab_dv_provider *provider)
{
	dv_provider = provider;
}

const struct fab_dv_provider *fab_dv_provider(void)
{
	return dv_provider;
}

/* The fault rdmamock/ibverbs/drop: the packet is lost on the wire, as on a
 * link that drops it, so a reliable sender retries and a datagram is gone.
 * Aimed by the sending device, either end's QP number and the sender's
 * process, and the server address and port of the connection either end
 * carries. */
static bool dropped(const struct fab_packet *pkt)
{
	struct fault_where where = { .port = -1, .qpn = pkt->src_qpn };
	struct sockaddr_storage server;
	struct fault_action act;

	if (!fab_fault_at("rdmamock/ibverbs/drop"))
		return false;
	where.dev = topology_device_name_locked(pkt->src_dev);
	if (fab_qp_server_locked(pkt->src_qpn, &server) ||
	    fab_qp_server_locked(pkt->dst_qpn, &server)) {
		where.addr = (const struct sockaddr *)&server;
		where.port = fab_addr_port(where.addr);
	}
	if (fab_fault_fire("rdmamock/ibverbs/drop", &where, &act))
		return true;
	where.qpn = pkt->dst_qpn;
	return where.qpn != pkt->src_qpn && fab_fault_fire("rdmamock/ibverbs/drop", &where, &act);
}

/* The peer of a connection vanished (cm.c): its QP's packets are lost
 * both ways from now on, until the QP is reset. */
void fab_qp_cut_locked(uint32_t qpn)
{
	struct fab_qp *qp = qpn ? *qp_slot(qpn) : NULL;

	if (qp)
		qp->cut = true;
}

static bool cut(uint32_t qpn)
{
	struct fab_qp *qp = *qp_slot(qpn);

	return qp && qp->cut;
}

/* A packet leaves no port that is down, and reaches none. */
void fab_transmit(const struct fab_packet *pkt, struct fab_response *resp)
{
	struct fab_qp *qp;
	uint32_t *members;
	size_t n;

	resp->ack = FAB_NO_ANSWER;
	resp->atomic_orig = 0;
	fab_lock();
	if (topology_port_down_locked(pkt->src_dev) || cut(pkt->src_qpn) || dropped(pkt)) {
		fab_unlock();
		return;
	}
	if (!fab_gid_is_multicast(&pkt->dgid)) {
		qp = unicast_target(pkt);
		if (qp && (qp->cut || topology_port_down_locked(qp->dev_serial)))
			qp = NULL;
		fab_unlock();
		/* The receiver runs without the fabric's lock: it may call in. */
		if (qp)
			receiver(qp->receiver, pkt, resp);
		return;
	}
	/* A copy for every member; the lock is dropped while they take it,
	 * so the members are looked up again one by one. */
	n = mcast_members_locked(&pkt->dgid, &members);
	fab_unlock();
	for (size_t i = 0; i < n; i++) {
		struct fab_response r = { .ack = FAB_NO_ANSWER };

		fab_lock();
		qp = *qp_slot(members[i]);
		if (qp && topology_port_down_locked(qp->dev_serial))
			qp = NULL;
		fab_unlock();
		if (qp && receiver)
			receiver(qp->receiver, pkt, &r);
	}
	free(members);
	resp->ack = FAB_ACK; /* UD: the sender never hears back */
}

/* SRQ numbers, which XRC packets name, are the fabric's too. */
int fab_srq_number(uint32_t *srqn)
{
	fab_lock();
	*srqn = fab.next_srqn;
	fab.next_srqn = (fab.next_srqn + 1) & QPN_MASK;
	if (!fab.next_srqn)
		fab.next_srqn = 1;
	fab_unlock();
	return 0;
}

bool fab_qp_exists_locked(uint32_t qpn)
{
	return *qp_slot(qpn) != NULL;
}
