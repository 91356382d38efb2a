/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* librdmacm's multicast calls (rdma_join_multicast, _ex, rdma_leave_multicast),
 * with upstream's checks and order (librdmacm/cma.c): the join is the
 * kernel's (the fabric's), and when MULTICAST_JOIN comes the id's QP, if it
 * has one, is attached to the group, unless it joined to send only. */
#include <stdlib.h>
#include <string.h>

#include "cm.h"

#define LIB "rdmacm"



static void unlink_mc(struct cm_id *cid, struct cm_mc *mc)
{
	struct cm_mc **pos;

	pthread_mutex_lock(&cid->mut);
	for (pos = &cid->mc_list; *pos && *pos != mc; pos = &(*pos)->next)
		;
	if (*pos)
		*pos = mc->next;
	pthread_mutex_unlock(&cid->mut);
}

static int join(struct rdma_cm_id *id, struct sockaddr *addr, socklen_t len, uint16_t flags,
		void *context, const char *call)
{
	struct cm_id *cid = cm_id_of(id, call);
	struct cm_mc *mc = calloc(1, sizeof *mc);
	int err;

	if (!mc)
		return mock_errno(ENOMEM);
	mc->owner = cid;
	mc->context = context;
	mc->join_flags = flags;
	memcpy(&mc->addr, addr, len);
	pthread_mutex_lock(&cid->mut);
	mc->next = cid->mc_list;
	cid->mc_list = mc;
	pthread_mutex_unlock(&cid->mut);
	err = fab_join_multicast(cid->fid, addr, flags, (uintptr_t)mc);
	if (err) {
		unlink_mc(cid, mc);
		free(mc);
		return cm_err(err);
	}
	return cm_complete(cid);
}

MOCK_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	socklen_t len = cm_addr_len(addr);

	FAULT_MINUS1(LIB, "rdma_join_multicast");
	if (!len)
		return mock_errno(EINVAL);
	return join(id, addr, len, RDMA_MC_JOIN_FLAG_FULLMEMBER, context, "rdma_join_multicast");
}

MOCK_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
				       void *context)
{
	socklen_t len;

	FAULT_MINUS1(LIB, "rdma_join_multicast_ex");
	MOCK_REQUIRE(attr, "rdma_join_multicast_ex", "mc_join_attr is NULL (upstream dereferences it)");
	if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED)
		return mock_errno(ENOTSUP);
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS))
		return mock_errno(EINVAL);
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return mock_errno(EINVAL);
	len = cm_addr_len(attr->addr);
	if (!len)
		return mock_errno(EINVAL);
	return join(id, attr->addr, len, (uint16_t)attr->join_flags, context, "rdma_join_multicast_ex");
}

MOCK_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	socklen_t len = cm_addr_len(addr);
	struct cm_mc *mc, **pos;
	struct cm_id *cid;
	int err;

	FAULT_MINUS1(LIB, "rdma_leave_multicast");
	if (!len)
		return mock_errno(EINVAL);
	cid = cm_id_of(id, "rdma_leave_multicast");
	pthread_mutex_lock(&cid->mut);
	for (pos = &cid->mc_list; *pos; pos = &(*pos)->next)
		if (!memcmp(&(*pos)->addr, addr, len))
			break;
	mc = *pos;
	if (mc)
		*pos = mc->next;
	pthread_mutex_unlock(&cid->mut);
	if (!mc)
		return mock_errno(EADDRNOTAVAIL);
	if (id->qp && mc->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		ibv_detach_mcast(id->qp, &mc->mgid, mc->mlid);
	err = fab_leave_multicast(cid->fid, (uintptr_t)mc);
	free(mc);
	return cm_err(err);
}

/* ucma_process_join. */
int cm_process_join(struct cm_event *evt)
{
	struct cm_mc *mc = evt->mc;
	struct rdma_cm_id *id = &mc->owner->id;
	int ret;

	mc->mgid = evt->event.param.ud.ah_attr.grh.dgid;
	mc->mlid = evt->event.param.ud.ah_attr.dlid;
	if (!id->qp || mc->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return 0;
	ret = ibv_attach_mcast(id->qp, &mc->mgid, mc->mlid);
	return ret ? mock_errno(ret) : 0;
}

void cm_free_joins(struct cm_id *cid)
{
	while (cid->mc_list) {
		struct cm_mc *mc = cid->mc_list;

		cid->mc_list = mc->next;
		free(mc);
	}
}
