/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Connection calls: connect, get_request, accept, reject, establish,
 * disconnect, with upstream's parameter rules (librdmacm/cma.c). */
#include <stdlib.h>
#include <string.h>

#include "cm.h"

#define LIB "rdmacm"

static struct cma_device *device_or_abort(struct cm_id *cid, const char *call)
{
	MOCK_REQUIRE(cid->cma_dev, call,
		     "the id has no device (address not resolved); upstream dereferences it");
	return cid->cma_dev;
}

/* ucma_valid_param: depths beyond the device's limits are refused. */
static int valid_param(struct cm_id *cid, const struct rdma_conn_param *param, const char *call)
{
	if (cid->id.ps != RDMA_PS_TCP)
		return 0;
	if (!cid->id.qp && !param)
		return mock_errno(EINVAL);
	if (!param)
		return 0;
	if ((param->responder_resources != RDMA_MAX_RESP_RES &&
	     param->responder_resources > device_or_abort(cid, call)->max_responder_resources) ||
	    (param->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	     param->initiator_depth > device_or_abort(cid, call)->max_initiator_depth))
		return mock_errno(EINVAL);
	return 0;
}

/* ucma_copy_conn_param_to_kern */
static struct fab_conn_param to_fabric(struct cm_id *cid, const struct rdma_conn_param *src,
				       uint32_t qp_num, uint8_t srq)
{
	struct fab_conn_param p = {
		.qp_num = qp_num,
		.srq = srq,
		.responder_resources = cid->responder_resources,
		.initiator_depth = cid->initiator_depth,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	size_t len = cid->connect_len;

	if (len)
		memcpy(p.private_data, cid->connect, len);
	if (src) {
		p.flow_control = src->flow_control;
		p.retry_count = src->retry_count;
		p.rnr_retry_count = src->rnr_retry_count;
		if (src->private_data && src->private_data_len) {
			size_t room = sizeof p.private_data - len;
			size_t n = src->private_data_len < room ? src->private_data_len : room;

			memcpy(p.private_data + len, src->private_data, n);
			len += src->private_data_len;
		}
	}
	/* Too long for the REQ or REP: the fabric refuses it with EINVAL. */
	p.private_data_len = len > 255 ? 255 : (uint8_t)len;
	return p;
}

MOCK_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *cid = cm_id_of(id, "rdma_connect");
	uint32_t qp_num = conn_param ? conn_param->qp_num : 0;
	uint8_t srq = conn_param ? conn_param->srq : 0;
	struct fab_conn_param p;
	int err;

	FAULT_MINUS1(LIB, "rdma_connect");
	if (valid_param(cid, conn_param, "rdma_connect"))
		return -1;
	if (conn_param && conn_param->initiator_depth != RDMA_MAX_INIT_DEPTH)
		cid->initiator_depth = conn_param->initiator_depth;
	else
		cid->initiator_depth = device_or_abort(cid, "rdma_connect")->max_initiator_depth;
	if (conn_param && conn_param->responder_resources != RDMA_MAX_RESP_RES)
		cid->responder_resources = conn_param->responder_resources;
	else
		cid->responder_resources = device_or_abort(cid, "rdma_connect")->max_responder_resources;
	if (id->qp) {
		qp_num = id->qp->qp_num;
		srq = !!id->qp->srq;
	}
	p = to_fabric(cid, conn_param, qp_num, srq);
	/* ucma_copy_ece_param_to_kern_req: what this side offers. */
	p.ece_vendor_id = cid->local_ece.vendor_id;
	p.ece_options = cid->local_ece.options;
	err = fab_connect(cid->fid, &p);
	if (err)
		return cm_err(err);
	free(cid->connect);
	cid->connect = NULL;
	cid->connect_len = 0;
	return cm_complete(cid);
}

MOCK_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cm_id *cid = cm_id_of(listen, "rdma_get_request");
	struct rdma_cm_event *event;
	int ret;
	LEDGER_CALL("rdma_get_request"); /* the new id, and its QP for an endpoint */

	FAULT_MINUS1(LIB, "rdma_get_request");
	if (!cid->sync)
		return mock_errno(EINVAL);
	MOCK_REQUIRE(id, "rdma_get_request", "id is NULL (upstream stores the new id through it)");
	if (listen->event) {
		cm_ack(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &event))
		return -1;
	if (event->event == RDMA_CM_EVENT_REJECTED)
		ret = mock_errno(ECONNREFUSED);
	else if (event->status)
		ret = mock_errno(-event->status);
	else if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		ret = mock_errno(EINVAL);
	else
		ret = 0;
	if (!ret && cid->qp_init_attr) {
		struct ibv_qp_init_attr attr = *cid->qp_init_attr;

		ret = rdma_create_qp(event->id, listen->pd, &attr);
	}
	if (ret) {
		listen->event = event;
		return ret;
	}
	*id = event->id;
	(*id)->event = event;
	return 0;
}

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

MOCK_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *cid = cm_id_of(id, "rdma_accept");
	struct fab_conn_param p;
	uint32_t qp_num;
	uint8_t srq;
	int err;

	FAULT_MINUS1(LIB, "rdma_accept");
	MOCK_REQUIRE(id->qp || conn_param, "rdma_accept",
		     "conn_param is NULL and the id has no QP (upstream reads conn_param->qp_num)");
	qp_num = id->qp ? id->qp->qp_num : conn_param->qp_num;
	srq = id->qp ? !!id->qp->srq : conn_param->srq;
	if (valid_param(cid, conn_param, "rdma_accept"))
		return -1;
	if (!conn_param || conn_param->initiator_depth == RDMA_MAX_INIT_DEPTH)
		cid->initiator_depth = min_u8(cid->initiator_depth,
					      device_or_abort(cid, "rdma_accept")->max_initiator_depth);
	else
		cid->initiator_depth = conn_param->initiator_depth;
	if (!conn_param || conn_param->responder_resources == RDMA_MAX_RESP_RES)
		cid->responder_resources = min_u8(cid->responder_resources,
						  device_or_abort(cid, "rdma_accept")->max_responder_resources);
	else
		cid->responder_resources = conn_param->responder_resources;
	if (id->qp_type != IBV_QPT_UD && cm_accept_qp(cid))
		return -1;
	p = to_fabric(cid, conn_param, qp_num, srq);
	/* ucma_copy_ece_param_to_kern_rep: the peer's vendor, our options. */
	p.ece_vendor_id = cid->remote_ece.vendor_id;
	p.ece_options = cid->local_ece.options;
	err = fab_accept(cid->fid, (uintptr_t)cid, &p);
	if (!err && id->qp_type != IBV_QPT_UD && fab_id_iwarp(cid->fid) && cm_iwarp_rts(cid))
		err = -errno;
	if (err) {
		cm_qp_to_err(cid);
		return cm_err(err);
	}
	if (id->qp_type == IBV_QPT_UD) {
		if (cid->sync && id->event) {
			cm_ack(id->event);
			id->event = NULL;
		}
		return 0;
	}
	return cm_complete(cid);
}

static int reject_with_reason(struct rdma_cm_id *id, const void *private_data,
			      uint8_t private_data_len, uint8_t reason, const char *call)
{
	struct cm_id *cid = cm_id_of(id, call);

	return cm_err(fab_reject(cid->fid, private_data, private_data ? private_data_len : 0, reason));
}

MOCK_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	FAULT_MINUS1(LIB, "rdma_reject");
	return reject_with_reason(id, private_data, private_data_len, 0, "rdma_reject");
}

/* IBTA's CM_REJ_VENDOR_OPTION_NOT_SUPPORTED. */
MOCK_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	FAULT_MINUS1(LIB, "rdma_reject_ece");
	return reject_with_reason(id, private_data, private_data_len, 35, "rdma_reject_ece");
}

MOCK_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	struct cm_id *cid = cm_id_of(id, "rdma_establish");

	FAULT_MINUS1(LIB, "rdma_establish");
	if (id->qp)
		return mock_errno(EINVAL);
	return cm_err(fab_accept(cid->fid, 0, NULL));
}

MOCK_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *cid = cm_id_of(id, "rdma_disconnect");
	int err;

	FAULT_MINUS1(LIB, "rdma_disconnect");
	/* ucma_shutdown: on an InfiniBand-transport device (RoCE too) the QP
	 * goes to ERR, on an RNIC to SQD. */
	if (!id->verbs || !id->verbs->device)
		return mock_errno(EINVAL);
	if (fab_id_iwarp(cid->fid) ? cm_qp_to_sqd(cid) : cm_qp_to_err(cid))
		return -1;
	err = fab_disconnect(cid->fid);
	if (err)
		return cm_err(err);
	return cm_complete(cid);
}
