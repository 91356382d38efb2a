/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Endpoints: rdma_create_ep / rdma_destroy_ep, the synchronous
 * convenience calls built on the rest (librdmacm/cma.c). */
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "cm.h"

#define LIB "rdmacm"

/* ucma_passive_ep: bind only; rdma_get_request makes the QPs later. */
static int passive_ep(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		      struct ibv_qp_init_attr *qp_init_attr)
{
	struct cm_id *cid = (struct cm_id *)id;

	if (rdma_bind_addr(id, res->ai_src_addr))
		return -1;
	if (pd)
		id->pd = pd;
	if (qp_init_attr) {
		cid->qp_init_attr = malloc(sizeof *qp_init_attr);
		if (!cid->qp_init_attr)
			return mock_errno(ENOMEM);
		*cid->qp_init_attr = *qp_init_attr;
		cid->qp_init_attr->qp_type = res->ai_qp_type;
	}
	return 0;
}

static int active_ep(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		     struct ibv_qp_init_attr *qp_init_attr)
{
	struct cm_id *cid = (struct cm_id *)id;

	if (rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, 2000))
		return -1;
	/* rdma_create_ep: a route the addrinfo carries is set as the path,
	 * in place of route resolution, and its ROUTE_RESOLVED awaited. */
	if (res->ai_route_len) {
		if (rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, res->ai_route,
				    res->ai_route_len) ||
		    cm_complete(cid))
			return -1;
	} else if (rdma_resolve_route(id, 2000)) {
		return -1;
	}
	if (qp_init_attr) {
		qp_init_attr->qp_type = res->ai_qp_type;
		if (rdma_create_qp(id, pd, qp_init_attr))
			return -1;
	}
	if (res->ai_connect_len) {
		cid->connect = malloc(res->ai_connect_len);
		if (!cid->connect)
			return mock_errno(ENOMEM);
		memcpy(cid->connect, res->ai_connect, res->ai_connect_len);
		cid->connect_len = res->ai_connect_len;
	}
	return 0;
}

MOCK_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			       struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	int ret;
	LEDGER_CALL("rdma_create_ep"); /* its id, QP and CQs */

	FAULT_MINUS1(LIB, "rdma_create_ep");
	MOCK_REQUIRE(id, "rdma_create_ep", "id is NULL (upstream stores the new id through it)");
	MOCK_REQUIRE(res, "rdma_create_ep", "res is NULL (upstream dereferences it)");
	if (cm_create_id(NULL, &cm_id, NULL, res->ai_port_space, res->ai_qp_type))
		return -1;
	if (res->ai_flags & RAI_PASSIVE)
		ret = passive_ep(cm_id, res, pd, qp_init_attr);
	else
		ret = active_ep(cm_id, res, pd, qp_init_attr);
	if (ret) {
		int err = errno;

		rdma_destroy_ep(cm_id);
		errno = err;
		return -1;
	}
	*id = cm_id;
	return 0;
}

/* No fault point: nothing to report. */
MOCK_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	struct cm_id *cid = cm_id_of(id, "rdma_destroy_ep");

	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq) /* upstream's rdma_destroy_ep takes the SRQ too */
		rdma_destroy_srq(id);
	free(cid->qp_init_attr);
	cid->qp_init_attr = NULL;
	rdma_destroy_id(id);
}
