/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Multicast: the groups QPs are attached to (ibv_attach_mcast), which the
 * wire delivers to, and the CM's joins of a UD id (rdma_join_multicast),
 * as the kernel runs them for RoCE (cma_iboe_join_multicast): no SA to
 * ask, the group's GID made from its IP address, MULTICAST_JOIN at once;
 * and on InfiniBand (cma_join_ib_multicast), where the fabric is the SA
 * that answers the MCMember join: an IPoIB-style MGID and an MLID. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "control/mock.h"

/* ---------------------------------------------------------------- groups */

static struct fab_mcast **mcast_find(const union ibv_gid *gid, uint32_t qpn)
{
	struct fab_mcast **pos;

	for (pos = &fab.mcasts; *pos; pos = &(*pos)->next)
		if ((*pos)->qpn == qpn && !memcmp(&(*pos)->gid, gid, sizeof *gid))
			break;
	return pos;
}

int fab_mcast_attach(uint32_t qpn, const union ibv_gid *gid)
{
	struct fab_mcast *m;
	int err = 0;

	fab_lock();
	if (!fab_qp_exists_locked(qpn)) {
		err = -EINVAL;
	} else if (!*mcast_find(gid, qpn)) {
		m = fab_alloc(sizeof *m);
		if (m) {
			m->gid = *gid;
			m->qpn = qpn;
			m->next = fab.mcasts;
			fab.mcasts = m;
		} else {
			err = -ENOMEM;
		}
	}
	fab_unlock();
	return err;
}

int fab_mcast_detach(uint32_t qpn, const union ibv_gid *gid)
{
	struct fab_mcast **pos, *m;

	fab_lock();
	pos = mcast_find(gid, qpn);
	m = *pos;
	if (m)
		*pos = m->next;
	fab_unlock();
	fab_free(m);
	return m ? 0 : -EINVAL;
}

bool fab_mcast_attached(uint32_t qpn)
{
	struct fab_mcast *m;

	fab_lock();
	for (m = fab.mcasts; m && m->qpn != qpn; m = m->next)
		;
	fab_unlock();
	return m != NULL;
}

void mcast_forget_qp_locked(uint32_t qpn)
{
	struct fab_mcast **pos = &fab.mcasts;

	while (*pos) {
		struct fab_mcast *m = *pos;

		if (m->qpn == qpn) {
			*pos = m->next;
			fab_free(m);
		} else {
			pos = &m->next;
		}
	}
}

size_t mcast_members_locked(const union ibv_gid *gid, uint32_t **qpns)
{
	size_t n = 0, cap = 0;

	*qpns = NULL;
	for (struct fab_mcast *m = fab.mcasts; m; m = m->next) {
		if (memcmp(&m->gid, gid, sizeof m->gid))
			continue;
		if (n == cap) {
			uint32_t *more = realloc(*qpns, (cap = cap ? 2 * cap : 8) * sizeof **qpns);

			if (!more) {
				mock_log("out of memory: a multicast packet reached only %zu members", n);
				break;
			}
			*qpns = more;
		}
		(*qpns)[n++] = m->qpn;
	}
	return n;
}

bool fab_gid_is_multicast(const union ibv_gid *gid)
{
	/* An IPv6 multicast address, or an IPv4 one as ::ffff:224.0.0.0/4. */
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (gid->raw[0] == 0xff)
		return true;
	return !memcmp(gid->raw, v4mapped, sizeof v4mapped) && (gid->raw[12] & 0xf0) == 0xe0;
}

/* ---------------------------------------------------------------- CM joins */

/* One join of a UD id, known by its cookie. */
struct fab_join {
	struct fab_join *next;
	uint64_t uid;
	union ibv_gid mgid;
	uint16_t mlid; /* InfiniBand: the group's, from the SA */
};

#define IB_MLID_FIRST 0xc000 /* the multicast LIDs' range, where OpenSM starts */

/* The MGID the kernel asks the SA for (cma_set_mgid): the IPoIB mapping of
 * the group's address (ip_ib_mc_map, ipv6_ib_mc_map) under the IPoIB
 * broadcast address's link-local scope (2) and P_Key 0xffff, its
 * signature byte 0x01 for RDMA_PS_UDP (the RDMA CM's). */
static void ib_mgid(const struct sockaddr *addr, enum rdma_port_space ps, union ibv_gid *mgid)
{
	const uint8_t *raw6 = ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr;

	/* An AF_IB group is its MGID; so is an IPv6 one the SA assigned
	 * (ff1x:a01b::, any scope). */
	if (addr->sa_family == AF_IB ||
	    (addr->sa_family == AF_INET6 && raw6[0] == 0xff && (raw6[1] & 0xf0) == 0x10 &&
	     raw6[2] == 0xa0 && raw6[3] == 0x1b)) {
		fab_addr_to_gid(addr, mgid);
		return;
	}
	memset(mgid, 0, sizeof *mgid);
	mgid->raw[0] = 0xff;
	mgid->raw[1] = 0x12;
	mgid->raw[3] = 0x1b;
	mgid->raw[4] = mgid->raw[5] = 0xff;
	if (addr->sa_family == AF_INET) {
		const uint8_t *ip = (const uint8_t *)&((const struct sockaddr_in *)addr)->sin_addr;

		mgid->raw[2] = 0x40;
		mgid->raw[12] = ip[0] & 0x0f;
		memcpy(&mgid->raw[13], ip + 1, 3);
	} else {
		mgid->raw[2] = 0x60;
		memcpy(&mgid->raw[6], ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr + 6, 10);
	}
	if (ps == RDMA_PS_UDP)
		mgid->raw[3] = 0x01;
}

/* The group's MLID: the one the SA gave its first join still standing,
 * else the next one free. */
static uint16_t ib_mlid_locked(const union ibv_gid *mgid)
{
	uint16_t next = IB_MLID_FIRST;

	for (struct fab_id *id = fab.live; id; id = id->next_live)
		for (struct fab_join *j = id->joins; j; j = j->next) {
			if (!j->mlid)
				continue;
			if (!memcmp(&j->mgid, mgid, sizeof *mgid))
				return j->mlid;
			if (j->mlid >= next)
				next = (uint16_t)(j->mlid + 1);
		}
	return next;
}

/* rdma_join_multicast: a UD id with a device, bound or with its address
 * resolved; on RoCE an IPv4 group is joined as the RoCE v2 GID
 * ::ffff:a.b.c.d (the kernel's cma_iboe_set_mgid), on InfiniBand an IPv4
 * or IPv6 group as its MGID, with an MLID. The answer is MULTICAST_JOIN
 * with how to send to the group: its GID from the id's source GID, QP
 * 0xffffff, and the well-known Q_Key. An AF_IB group is its own MGID
 * (InfiniBand; RoCE's mapping of one, an IPv4 reading of its bytes, is not
 * modelled: the mock joins the GID). */
int fab_join_multicast(struct fab_id *id, const struct sockaddr *addr, uint16_t join_flags,
		       uint64_t mc_uid)
{
	struct fab_queued *q;
	struct fab_join *j;
	int err = 0;
	bool ib;

	fab_lock();
	ib = id->dev && (id->dev->caps & FAB_CAP_IB);
	/* The kernel takes any address here: a unicast one is joined too,
	 * and only the QP's attach (ibv_attach_mcast) refuses it later. */
	if (!id->dev || (id->state != ST_ADDR_BOUND && id->state != ST_ADDR_RESOLVED) ||
	    id->qp_type != IBV_QPT_UD || !fab_addr_len(addr) || fab_addr_is_any(addr)) {
		err = -EINVAL;
	} else if (addr->sa_family == AF_INET6 && !ib) {
		/* cma_iboe_join_multicast: RoCE v2 has no IPv6 groups yet. */
		err = -ENOTSUPP_KERNEL;
	} else if (!(j = fab_alloc_owned(id->owner, sizeof *j))) {
		err = -ENOMEM;
	} else {
		j->uid = mc_uid;
		if (ib) {
			ib_mgid(addr, id->ps, &j->mgid);
			j->mlid = ib_mlid_locked(&j->mgid);
		} else {
			fab_addr_to_gid(addr, &j->mgid);
		}
		j->next = id->joins;
		id->joins = j;
		q = fab_queue_event(id, RDMA_CM_EVENT_MULTICAST_JOIN, 0, NULL, NULL);
		if (q) {
			q->ev.mc_uid = mc_uid;
			fab_fill_ah(id, &j->mgid, &q->ev.ud.ah_attr);
			if (ib) {
				/* ib_init_ah_from_mcmember: the group's MLID
				 * and MGID, from port GID 0, with the record's
				 * hop limit (0: the group is the subnet's). */
				q->ev.ud.ah_attr.dlid = j->mlid;
				q->ev.ud.ah_attr.grh.hop_limit = 0;
				q->ev.ud.ah_attr.grh.flow_label = 0;
			}
			q->ev.ud.qp_num = 0xffffff;
			q->ev.ud.qkey = id->qkey;
		}
	}
	fab_unlock();
	(void)join_flags; /* send-only joins differ in the QP attach, which librdmacm skips */
	return err;
}

int fab_leave_multicast(struct fab_id *id, uint64_t mc_uid)
{
	struct fab_join **pos, *j;

	fab_lock();
	for (pos = &id->joins; *pos && (*pos)->uid != mc_uid; pos = &(*pos)->next)
		;
	j = *pos;
	if (j) {
		*pos = j->next;
		fab_drop_join_events_locked(id, mc_uid);
	}
	fab_unlock();
	fab_free(j);
	return j ? 0 : -ENOENT;
}

/* The id goes: its joins go with it. */
void fab_leave_all_locked(struct fab_id *id)
{
	while (id->joins) {
		struct fab_join *j = id->joins;

		id->joins = j->next;
		fab_free(j);
	}
}
