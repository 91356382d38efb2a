/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CM events: fetching (with upstream's per-event processing), acking, and
 * the synchronous-id wait (ucma_complete). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

#define LIB "rdmacm"

static void complete_event(struct cm_id *owner)
{
	pthread_mutex_lock(&owner->mut);
	owner->events_completed++;
	pthread_cond_signal(&owner->cond);
	pthread_mutex_unlock(&owner->mut);
}

static void copy_conn_param(struct cm_event *evt, const struct fab_conn_param *src)
{
	struct rdma_conn_param *dst = &evt->event.param.conn;

	dst->private_data_len = src->private_data_len;
	if (src->private_data_len) {
		memcpy(evt->private_data, src->private_data, src->private_data_len);
		dst->private_data = evt->private_data;
	}
	dst->responder_resources = src->responder_resources;
	dst->initiator_depth = src->initiator_depth;
	dst->flow_control = src->flow_control;
	dst->retry_count = src->retry_count;
	dst->rnr_retry_count = src->rnr_retry_count;
	dst->srq = src->srq;
	dst->qp_num = src->qp_num;
}

/* ucma_copy_ud_event: a UD id's events carry how to reach the peer. */
static void copy_ud_param(struct cm_event *evt, const struct fab_event *fe)
{
	struct rdma_ud_param *dst = &evt->event.param.ud;

	dst->private_data_len = fe->param.private_data_len;
	if (fe->param.private_data_len) {
		memcpy(evt->private_data, fe->param.private_data, fe->param.private_data_len);
		dst->private_data = evt->private_data;
	}
	dst->ah_attr = fe->ud.ah_attr;
	dst->qp_num = fe->ud.qp_num;
	dst->qkey = fe->ud.qkey;
}

static void copy_param(struct cm_event *evt, const struct fab_event *fe)
{
	if (evt->owner->id.qp_type == IBV_QPT_UD)
		copy_ud_param(evt, fe);
	else
		copy_conn_param(evt, &fe->param);
}

/* ucma_process_addr_resolved: learn the source address and the device. */
static void process_addr_resolved(struct cm_event *evt)
{
	struct cm_id *cid = evt->owner;
	int ret = cm_query_addr(cid);

	if (ret == 0 && !cid->id.verbs)
		ret = mock_errno(ENODEV);
	if (ret == 0) {
		cm_query_gid(cid);
		return;
	}
	evt->event.status = -1;
	evt->event.event = RDMA_CM_EVENT_ADDR_ERROR;
}

static void process_route_resolved(struct cm_event *evt)
{
	if (evt->owner->id.verbs->device->transport_type != IBV_TRANSPORT_IB)
		return;
	if (cm_query_path(evt->owner)) {
		evt->event.status = -1;
		evt->event.event = RDMA_CM_EVENT_ROUTE_ERROR;
	}
}

/* ucma_process_conn_req: the new connection gets an id of its own, on the
 * listener's channel (or its own private one if the listener is sync). */
static int process_conn_req(struct cm_event *evt, struct fab_id *conn,
			    const struct fab_conn_param *ece)
{
	struct cm_id *listener = evt->owner, *cid;

	cid = cm_alloc_id(listener->id.channel, listener->id.context, listener->id.ps,
			  listener->id.qp_type);
	if (!cid) {
		fab_destroy_id(conn);
		fab_free_id(conn);
		complete_event(listener);
		return mock_errno(ENOMEM);
	}
	cid->fid = conn;
	evt->event.listen_id = &listener->id;
	evt->event.id = &cid->id;
	if (cid->id.qp_type != IBV_QPT_UD) {
		cid->initiator_depth = evt->event.param.conn.initiator_depth;
		cid->responder_resources = evt->event.param.conn.responder_resources;
	}
	cid->remote_ece.vendor_id = ece->ece_vendor_id;
	cid->remote_ece.options = ece->ece_options;
	if ((listener->sync && rdma_migrate_id(&cid->id, NULL)) || cm_query_addr(cid) ||
	    (cm_query_gid(cid), cm_query_path(cid))) {
		rdma_destroy_id(&cid->id);
		complete_event(listener);
		return -1;
	}
	return 0;
}

/* The active side's answer to a REP. Without a QP the caller sees
 * CONNECT_RESPONSE and finishes with rdma_establish; with one, librdmacm
 * moves the QP on and sends the RTU itself. */
static void process_conn_resp(struct cm_event *evt, const struct fab_conn_param *rep)
{
	struct cm_id *cid = evt->owner;

	if (!cid->id.qp) {
		cid->remote_ece.vendor_id = rep->ece_vendor_id;
		cid->remote_ece.options = rep->ece_options;
		return;
	}
	evt->event.status = cm_process_conn_resp(cid, rep);
	if (!evt->event.status) {
		evt->event.event = RDMA_CM_EVENT_ESTABLISHED;
	} else {
		evt->event.event = RDMA_CM_EVENT_CONNECT_ERROR;
		cid->connect_error = 1;
	}
}

/* A fault at the answer to a REP (rdmamock/rdmacm/event/connect_error): as
 * when librdmacm cannot move the QP on, the errno the fault names (EINVAL
 * unless given). Aimed by device, destination address and port, QP number
 * and process. */
static bool conn_resp_fault(struct cm_id *cid, int *err)
{
	struct fault_where where = {
		.dev = cid->id.verbs ? ibv_get_device_name(cid->id.verbs->device) : NULL,
		.addr = rdma_get_peer_addr(&cid->id),
		.port = ntohs(rdma_get_dst_port(&cid->id)),
		.qpn = cid->id.qp->qp_num,
	};
	struct fault_action act;

	if (!fault_at("rdmamock/rdmacm/event/connect_error") ||
	    !fault_fire("rdmamock/rdmacm/event/connect_error", &where, &act))
		return false;
	*err = act.has_value && act.value > 0 ? act.value : EINVAL;
	return true;
}

/* With the QP in RTS (err 0) the RTU goes; a failure puts the QP in ERR. */
static int send_rtu(struct cm_id *cid, int err)
{
	if (!err)
		err = cm_err(fab_accept(cid->fid, 0, NULL));
	if (err)
		cm_qp_to_err(cid);
	return err;
}

/* ucma_process_conn_resp_ece, then ucma_process_conn_resp. A failure is
 * -1 with errno (upstream's ERR), which the caller reports as the status
 * of CONNECT_ERROR; no RTU goes to the passive side. */
int cm_process_conn_resp(struct cm_id *cid, const struct fab_conn_param *rep)
{
	struct ibv_ece ece = { .vendor_id = rep->ece_vendor_id, .options = rep->ece_options };
	int err;

	if (conn_resp_fault(cid, &err)) {
		cm_qp_to_err(cid);
		return mock_errno(err);
	}
	/* An RNIC's kernel raises ESTABLISHED with the QP in RTS already:
	 * librdmacm moves nothing and exchanges no ECE. */
	if (fab_id_iwarp(cid->fid))
		return send_rtu(cid, cm_iwarp_rts(cid));
	if (!rep->ece_vendor_id) {
		/* No ECE came back: keep ours, with no options. */
		ece.vendor_id = cid->local_ece.vendor_id;
		ece.options = 0;
	} else if (rep->ece_vendor_id != cid->local_ece.vendor_id) {
		cm_qp_to_err(cid);
		return mock_errno(EINVAL);
	}
	cid->remote_ece.vendor_id = rep->ece_vendor_id;
	err = ibv_set_ece(cid->id.qp, &ece);
	if (err && err != EOPNOTSUPP)
		return mock_errno(err);
	return send_rtu(cid, cm_connect_qp(cid));
}

/* ADDRINFO_ERROR (the SA path) ends the resolution. */
static void clear_resolving(struct cm_id *cid)
{
	pthread_mutex_lock(&cid->mut);
	cid->resolving_ai = false;
	pthread_mutex_unlock(&cid->mut);
}

/* ucma_process_addrinfo_resolved: the SA path's records are read now
 * (UCMA_QUERY_IB_SERVICE) and become the list rdma_query_addrinfo hands
 * over; none, or no memory, turns the event into ADDRINFO_ERROR with that
 * errno as its status, as upstream does. */
static void process_addrinfo_resolved(struct cm_event *evt)
{
	struct fab_service_rec recs[8];
	struct cm_id *cid = evt->owner;
	struct rdma_addrinfo *rai = NULL;
	int n;

	if (cid->resolved_ai)
		return;
	n = fab_query_ib_service(cid->fid, recs, (int)(sizeof recs / sizeof recs[0]));
	if (n <= 0)
		errno = ENOENT;
	else if (!cm_query_addr(cid))
		rai = cm_service_addrinfo(recs, n);
	if (!rai) {
		evt->event.event = RDMA_CM_EVENT_ADDRINFO_ERROR;
		evt->event.status = errno;
		clear_resolving(cid);
		return;
	}
	pthread_mutex_lock(&cid->mut);
	cid->resolved_ai = rai;
	pthread_mutex_unlock(&cid->mut);
}

/* Turn one fabric event into what the caller sees. Returns DELIVER, RETRY
 * when the event is swallowed (upstream's "goto retry"), or FAIL with
 * errno set when the call itself fails. */
enum outcome { DELIVER, RETRY, FAIL };

static enum outcome process_event(struct cm_event *evt, struct fab_event *fe)
{
	evt->owner = (struct cm_id *)(uintptr_t)fe->uid;
	evt->event.id = &evt->owner->id;
	evt->event.event = fe->event;
	evt->event.status = fe->status;

	/* int: the v60 events are beyond the enum in older headers. */
	switch ((int)fe->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		process_addr_resolved(evt);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		process_route_resolved(evt);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		copy_param(evt, fe);
		return process_conn_req(evt, fe->conn_id, &fe->param) == 0 ? DELIVER : RETRY;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		copy_conn_param(evt, &fe->param);
		process_conn_resp(evt, &fe->param);
		break;
	case RDMA_CM_EVENT_MULTICAST_JOIN:
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		/* ucma: the join's cookie names the id, and its context goes
		 * back as the private data. */
		evt->mc = (struct cm_mc *)(uintptr_t)fe->mc_uid;
		evt->owner = evt->mc->owner;
		evt->event.id = &evt->owner->id;
		if (fe->event == RDMA_CM_EVENT_MULTICAST_JOIN)
			copy_ud_param(evt, fe);
		evt->event.param.ud.private_data = evt->mc->context;
		if (fe->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
			evt->event.status = cm_process_join(evt);
			if (evt->event.status)
				evt->event.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
		/* After a failed connect response these are noise. */
		if (evt->owner->connect_error) {
			complete_event(evt->owner);
			return RETRY;
		}
		copy_conn_param(evt, &fe->param);
		if (fe->event == RDMA_CM_EVENT_REJECTED)
			cm_qp_to_err(evt->owner);
		break;
	case RDMA_CM_EVENT_ADDRINFO_ERROR:
		clear_resolving(evt->owner);
		break;
	case RDMA_CM_EVENT_ADDRINFO_RESOLVED:
		process_addrinfo_resolved(evt);
		break;
	case RDMA_CM_EVENT_USER:
		rdmacheck_set_event_arg(&evt->event, fe->arg);
		break;
	case RDMA_CM_EVENT_INTERNAL:
		/* The DNS path's way to report ADDRINFO_RESOLVED. */
		if (fe->arg != RDMA_CM_EVENT_ADDRINFO_RESOLVED)
			return mock_errno(EBADE), FAIL;
		evt->event.event = RDMA_CM_EVENT_ADDRINFO_RESOLVED;
		break;
	default:
		copy_param(evt, fe);
		break;
	}
	return DELIVER;
}

MOCK_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cm_channel *ch;
	enum outcome outcome;
	struct cm_event *evt;
	struct fab_event fe;
	int err;

	LEDGER_CALL("rdma_get_cm_event"); /* a CONNECT_REQUEST's new id */

	FAULT_MINUS1(LIB, "rdma_get_cm_event");
	if (cm_init())
		return -1;
	if (!event)
		return mock_errno(EINVAL);
	evt = malloc(sizeof *evt);
	if (!evt)
		return mock_errno(ENOMEM);
	ch = cm_channel_get(channel, "rdma_get_cm_event");
	for (;;) {
		memset(evt, 0, sizeof *evt);
		/* Destroyed by another thread while this one waited: upstream's
		 * read would wait on; this one says EBADF and lets go of it. */
		err = __atomic_load_n(&ch->closed, __ATOMIC_ACQUIRE) ? -EBADF :
									fab_get_event(ch->fchan, &fe);
		if (err == -EAGAIN) {
			if (mock_wait_readable(ch->channel.fd))
				err = -errno;
			else
				continue;
		}
		outcome = err ? FAIL : process_event(evt, &fe);
		if (outcome == FAIL) {
			int e = err ? -err : errno;

			free(evt);
			cm_channel_put(ch);
			return mock_errno(e);
		}
		if (outcome == DELIVER)
			break;
	}
	cm_channel_put(ch);
	pthread_mutex_lock(&evt->owner->mut);
	evt->next_unacked = evt->owner->unacked;
	if (evt->next_unacked)
		evt->next_unacked->prev_unacked = &evt->next_unacked;
	evt->prev_unacked = &evt->owner->unacked;
	evt->owner->unacked = evt;
	pthread_mutex_unlock(&evt->owner->mut);
	ledger_add(LEDGER_EVENT, &evt->event, "rdma_get_cm_event");
	ledger_label(LEDGER_EVENT, &evt->event, rdma_event_str(evt->event.event));
	*event = &evt->event;
	return 0;
}

/* librdmacm's own acks (a synchronous id's event, rdma_destroy_id's) go
 * here, not through the entry point: they cannot fail upstream, so its
 * fault point is the program's calls only. */
void cm_ack(struct rdma_cm_event *event)
{
	struct cm_event *evt = (struct cm_event *)event;

	ledger_del(LEDGER_EVENT, event, "rdma_ack_cm_event");
	pthread_mutex_lock(&evt->owner->mut);
	*evt->prev_unacked = evt->next_unacked;
	if (evt->next_unacked)
		evt->next_unacked->prev_unacked = evt->prev_unacked;
	pthread_mutex_unlock(&evt->owner->mut);
	complete_event(evt->owner);
	free(evt);
}

MOCK_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	ledger_destroying(LEDGER_EVENT, event);
	FAULT_MINUS1(LIB, "rdma_ack_cm_event");
	if (!event)
		return mock_errno(EINVAL);
	ledger_require(LEDGER_EVENT, event, "rdma_ack_cm_event");
	cm_ack(event);
	return 0;
}

int cm_complete(struct cm_id *cid)
{
	struct rdma_cm_event *ev;

	if (!cid->sync)
		return 0;
	if (cid->id.event) {
		cm_ack(cid->id.event);
		cid->id.event = NULL;
	}
	if (rdma_get_cm_event(cid->id.channel, &cid->id.event))
		return -1;
	ev = cid->id.event;
	ledger_internal(LEDGER_EVENT, ev); /* the id's, acked by librdmacm */
	if (!ev->status)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return mock_errno(ECONNREFUSED);
	return mock_errno(ev->status < 0 ? -ev->status : ev->status);
}

MOCK_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
		[16] = "RDMA_CM_EVENT_ADDRINFO_RESOLVED",
		[17] = "RDMA_CM_EVENT_ADDRINFO_ERROR",
	};

	/* Every slot from 0 to 17 has its name: only the range is checked. */
	if ((unsigned)event < sizeof names / sizeof names[0])
		return names[event];
	return "UNKNOWN EVENT";
}
