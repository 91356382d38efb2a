/* The QP moves librdmacm makes for a connection (ucma_modify_qp_rtr/_rts/
 * _err). Until the mock's verbs layer can create QPs, no id has one and
 * these have nothing to do. */
#include "cm.h"

int cm_connect_qp(struct cm_id *cid)
{
	return cid->id.qp ? mock_errno(ENOSYS) : 0;
}

int cm_accept_qp(struct cm_id *cid)
{
	return cid->id.qp ? mock_errno(ENOSYS) : 0;
}

int cm_qp_to_err(struct cm_id *cid)
{
	return cid->id.qp ? mock_errno(ENOSYS) : 0;
}

int cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	mock_log("rdma_create_ep: QPs are not modelled by the mock yet");
	return mock_errno(ENOSYS);
}

void cm_destroy_qp(struct rdma_cm_id *id)
{
	id->qp = NULL;
}
