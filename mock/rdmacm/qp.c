/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* QPs on CM ids: rdma_create_qp / rdma_destroy_qp / rdma_init_qp_attr, and
 * the moves librdmacm makes for a connection (ucma_modify_qp_rtr/_rts/_err
 * in librdmacm/cma.c): INIT at creation, RTR and RTS on the active side
 * when the REP arrives and in rdma_accept on the passive side, ERR in
 * rdma_disconnect and on REJECTED. */
#include <stdlib.h>

#include "cm.h"

#define LIB "rdmacm"

MOCK_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
				  int *qp_attr_mask)
{
	struct cm_id *cid = cm_id_of(id, "rdma_init_qp_attr");

	FAULT_MINUS1(LIB, "rdma_init_qp_attr");
	MOCK_REQUIRE(qp_attr && qp_attr_mask, "rdma_init_qp_attr",
		     "qp_attr or qp_attr_mask is NULL (upstream writes them)");
	return cm_err(fab_init_qp_attr(cid->fid, qp_attr, qp_attr_mask));
}

/* ibv_modify_qp's positive errno as librdmacm reports it: -1 and errno. */
static int modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	int err = ibv_modify_qp(qp, attr, mask);

	return err ? mock_errno(err) : 0;
}

/* Move the id's QP to `state` with the attributes the CM gives for it. */
static int modify_from_cm(struct rdma_cm_id *id, enum ibv_qp_state state,
			  struct ibv_qp_attr *attr, int *mask)
{
	attr->qp_state = state;
	return rdma_init_qp_attr(id, attr, mask);
}

/* ucma_modify_qp_rtr: through INIT again (to pick up the connection's
 * access flags), then RTR, with the caller's responder resources. */
static int to_rtr(struct rdma_cm_id *id, uint8_t resp_res)
{
	struct ibv_qp_attr attr;
	int mask;

	if (!id->qp)
		return 0;
	if (modify_from_cm(id, IBV_QPS_INIT, &attr, &mask) || modify(id->qp, &attr, mask))
		return -1;
	if (modify_from_cm(id, IBV_QPS_RTR, &attr, &mask))
		return -1;
	if (resp_res != RDMA_MAX_RESP_RES)
		attr.max_dest_rd_atomic = resp_res;
	return modify(id->qp, &attr, mask);
}

static int to_rts(struct rdma_cm_id *id, uint8_t init_depth)
{
	struct ibv_qp_attr attr;
	int mask;

	if (!id->qp)
		return 0;
	if (modify_from_cm(id, IBV_QPS_RTS, &attr, &mask))
		return -1;
	if (init_depth != RDMA_MAX_INIT_DEPTH)
		attr.max_rd_atomic = init_depth;
	return modify(id->qp, &attr, mask);
}

int cm_connect_qp(struct cm_id *cid)
{
	if (to_rtr(&cid->id, RDMA_MAX_RESP_RES) || to_rts(&cid->id, RDMA_MAX_INIT_DEPTH))
		return -1;
	return 0;
}

int cm_accept_qp(struct cm_id *cid)
{
	if (to_rtr(&cid->id, cid->responder_resources) || to_rts(&cid->id, cid->initiator_depth))
		return -1;
	return 0;
}

/* On an RNIC the provider moves the QP to RTS itself once MPA has set the
 * stream up (siw_accept, siw_connect), with no ibv_modify_qp of
 * librdmacm's: the ibv_qp's state stays what librdmacm last set (INIT on
 * the active side, RTR on the passive one). The mock's device takes the
 * InfiniBand CM's attributes, which carry the path and the peer's QP. */
int cm_iwarp_rts(struct cm_id *cid)
{
	struct ibv_qp *qp = cid->id.qp;
	struct ibv_qp_attr attr;
	enum ibv_qp_state seen;
	int mask, err = 0;

	if (!qp)
		return 0;
	seen = qp->state;
	for (enum ibv_qp_state s = IBV_QPS_RTR; !err && s <= IBV_QPS_RTS; s++) {
		attr.qp_state = s;
		err = cm_err(fab_wire_qp_attr(cid->fid, &attr, &mask));
		if (!err)
			err = modify(qp, &attr, mask);
	}
	qp->state = seen;
	return err;
}

int cm_qp_to_err(struct cm_id *cid)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	if (!cid->id.qp)
		return 0;
	return modify(cid->id.qp, &attr, IBV_QP_STATE);
}

int cm_qp_to_sqd(struct cm_id *cid)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD };

	if (!cid->id.qp)
		return 0;
	return modify(cid->id.qp, &attr, IBV_QP_STATE);
}

/* ucma_destroy_cqs: only what rdma_create_qp made for the id. */
static void destroy_cqs(struct rdma_cm_id *id)
{
	/* An XRC target's receive CQ is its SRQ's: it goes with the SRQ. */
	if (id->qp_type == IBV_QPT_XRC_RECV && id->srq)
		return;
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq && id->send_cq != id->recv_cq)
			ibv_destroy_cq(id->send_cq);
		id->recv_cq = id->send_cq = NULL;
	}
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
			ibv_destroy_comp_channel(id->send_cq_channel);
		id->recv_cq_channel = id->send_cq_channel = NULL;
	}
}

/* ucma_create_cqs: a CQ with its own completion channel for each side the
 * caller gave none for. */
static int create_cq(struct rdma_cm_id *id, uint32_t size, struct ibv_comp_channel **channel,
		     struct ibv_cq **cq)
{
	if (!size)
		return 0;
	*channel = ibv_create_comp_channel(id->verbs);
	if (!*channel)
		return -1;
	*cq = ibv_create_cq(id->verbs, (int)size, id, *channel, 0);
	return *cq ? 0 : -1;
}

static int create_cqs(struct rdma_cm_id *id, uint32_t send_size, uint32_t recv_size)
{
	if (create_cq(id, recv_size, &id->recv_cq_channel, &id->recv_cq) ||
	    create_cq(id, send_size, &id->send_cq_channel, &id->send_cq)) {
		destroy_cqs(id);
		return -1;
	}
	return 0;
}

/* ucma_init_conn_qp / ucma_init_ud_qp: a connected QP waits in INIT; a UD
 * QP goes all the way to RTS at once. */
static int init_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;
	int mask;

	if (modify_from_cm(id, IBV_QPS_INIT, &attr, &mask) || modify(qp, &attr, mask))
		return -1;
	if (id->qp_type != IBV_QPT_UD)
		return 0;
	attr.qp_state = IBV_QPS_RTR;
	if (modify(qp, &attr, IBV_QP_STATE))
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return modify(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* init_ece: what the QP's device says of ECE becomes what this side
 * offers; a QP made for a request answers with the peer's vendor (or ours,
 * without options, when they differ). The generic device has no ECE
 * (EOPNOTSUPP, taken as none, as upstream takes it); the mlx5 one offers
 * its vendor id with no options and cannot set any (EOPNOTSUPP again). */
static int init_ece(struct cm_id *cid, struct ibv_qp *qp)
{
	struct ibv_ece ece = { 0 };
	int err = ibv_query_ece(qp, &ece);

	if (err && err != EOPNOTSUPP)
		return mock_errno(err);
	cid->local_ece.vendor_id = ece.vendor_id;
	cid->local_ece.options = ece.options;
	if (!cid->remote_ece.vendor_id)
		return 0;
	if (cid->remote_ece.vendor_id != cid->local_ece.vendor_id) {
		ece.vendor_id = cid->local_ece.vendor_id;
		ece.options = 0;
	} else {
		ece = cid->remote_ece;
	}
	err = ibv_set_ece(qp, &ece);
	return err && err != EOPNOTSUPP ? mock_errno(err) : 0;
}

MOCK_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *cid = cm_id_of(id, "rdma_create_qp_ex");
	struct ibv_qp *qp;
	int err;
	LEDGER_CALL("rdma_create_qp_ex"); /* its CQs and QP are the call's */

	FAULT_MINUS1(LIB, "rdma_create_qp_ex");
	if (id->qp)
		return mock_errno(EINVAL);
	MOCK_REQUIRE(attr, "rdma_create_qp_ex", "qp_init_attr is NULL (upstream dereferences it)");
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd;
	} else if (id->verbs != attr->pd->context) {
		return mock_errno(EINVAL);
	}
	MOCK_REQUIRE(attr->pd, "rdma_create_qp",
		     "no PD: the id has no device yet (address not resolved) and none was given");
	if ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
	    (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq))
		return mock_errno(EINVAL);
	if (id->qp_type == IBV_QPT_XRC_RECV &&
	    (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)) {
		attr->xrcd = cm_get_xrcd(cid);
		if (!attr->xrcd)
			return -1;
		attr->comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	}
	if (create_cqs(id, attr->send_cq || id->send_cq ? 0 : attr->cap.max_send_wr,
		       attr->recv_cq || id->recv_cq ? 0 : attr->cap.max_recv_wr))
		return -1;
	if (!attr->send_cq)
		attr->send_cq = id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = id->recv_cq;
	if (id->srq && !attr->srq)
		attr->srq = id->srq;
	/* ucma_create_cqs makes no CQ for a queue of depth 0; upstream then
	 * gives ibv_create_qp a NULL CQ, which it dereferences (a crash,
	 * measured with rdma-core 44 and 65). */
	if (id->qp_type != IBV_QPT_XRC_RECV) {
		MOCK_REQUIRE(attr->send_cq, "rdma_create_qp",
			     "max_send_wr 0 and no send_cq: librdmacm makes no send CQ for a queue of "
			     "depth 0, and upstream's ibv_create_qp dereferences the NULL one");
		MOCK_REQUIRE(attr->recv_cq || id->qp_type == IBV_QPT_XRC_SEND, "rdma_create_qp",
			     "max_recv_wr 0 and no recv_cq: librdmacm makes no receive CQ for a queue of "
			     "depth 0, and upstream's ibv_create_qp dereferences the NULL one");
	}
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp) {
		err = errno;
		destroy_cqs(id);
		return mock_errno(err);
	}
	if (init_ece(cid, qp) || init_qp(id, qp)) {
		err = errno;
		ibv_destroy_qp(qp);
		destroy_cqs(id);
		return mock_errno(err);
	}
	id->pd = qp->pd;
	id->qp = qp;
	return 0;
}

MOCK_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	int ret;
	LEDGER_CALL("rdma_create_qp");

	cm_id_of(id, "rdma_create_qp");
	FAULT_MINUS1(LIB, "rdma_create_qp");
	MOCK_REQUIRE(qp_init_attr, "rdma_create_qp", "qp_init_attr is NULL (upstream dereferences it)");
	memset(&ex, 0, sizeof ex);
	memcpy(&ex, qp_init_attr, sizeof *qp_init_attr);
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd ? pd : id->pd;
	ret = rdma_create_qp_ex(id, &ex);
	memcpy(qp_init_attr, &ex, sizeof *qp_init_attr);
	return ret;
}

/* Upstream hands id->qp to ibv_destroy_qp unchecked: an id without a QP
 * (Debian's qperf 0.4.11 destroys its listener's, after each -cm1 test)
 * crashes there. */
MOCK_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	cm_id_of(id, "rdma_destroy_qp");
	MOCK_REQUIRE(id->qp, "rdma_destroy_qp",
		     "id %p has no QP (upstream calls ibv_destroy_qp(NULL), which dereferences it)",
		     (void *)id);
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

/* ---------------------------------------------------------------- SRQs */

/* rdma_create_srq_ex: the id's PD unless one is given; an XRC SRQ gets
 * librdmacm's XRC domain and a receive CQ of the id's own. */
MOCK_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct cm_id *cid = cm_id_of(id, "rdma_create_srq_ex");
	struct ibv_srq *srq;
	LEDGER_CALL("rdma_create_srq_ex");

	FAULT_MINUS1(LIB, "rdma_create_srq_ex");
	MOCK_REQUIRE(attr, "rdma_create_srq_ex", "srq_init_attr is NULL (upstream dereferences it)");
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return mock_errno(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	if (attr->srq_type == IBV_SRQT_XRC) {
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd) {
			attr->xrcd = cm_get_xrcd(cid);
			if (!attr->xrcd)
				return -1;
		}
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq) {
			if (create_cqs(id, 0, attr->attr.max_wr))
				return -1;
			attr->cq = id->recv_cq;
		}
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (!srq) {
		int err = errno;

		destroy_cqs(id);
		return mock_errno(err);
	}
	if (!id->pd)
		id->pd = attr->pd;
	id->srq = srq;
	return 0;
}

MOCK_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	int ret;
	LEDGER_CALL("rdma_create_srq");

	cm_id_of(id, "rdma_create_srq");
	FAULT_MINUS1(LIB, "rdma_create_srq");
	MOCK_REQUIRE(attr, "rdma_create_srq", "srq_init_attr is NULL (upstream dereferences it)");
	memset(&ex, 0, sizeof ex);
	memcpy(&ex, attr, sizeof *attr);
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
	ex.pd = pd;
	ret = rdma_create_srq_ex(id, &ex);
	memcpy(attr, &ex, sizeof *attr);
	return ret;
}

MOCK_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	cm_id_of(id, "rdma_destroy_srq");
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
	destroy_cqs(id);
}
