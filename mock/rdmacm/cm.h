/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to the drop-in librdmacm: what rdma_cm_id, rdma_cm_event and
 * rdma_event_channel carry behind their public structs. The public calls
 * keep upstream's checks and order (librdmacm/cma.c); the fabric stands
 * where upstream writes commands to /dev/infiniband/rdma_cm. */
#ifndef RDMAMOCK_CM_H
#define RDMAMOCK_CM_H

#include <pthread.h>
#include <rdma/rdma_cma.h>

#include "fabric/fabric.h"
#include "control/mock.h"

struct cma_device {
	struct cma_device *next;
	struct ibv_device *dev;
	__be64 guid;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_xrcd *xrcd; /* opened for the first XRC QP or SRQ; kept */
	int refcnt;
	uint8_t max_initiator_depth;
	uint8_t max_responder_resources;
	int max_qpsize;
};

struct cm_channel {
	struct rdma_event_channel channel; /* what the caller sees: the fd */
	struct fab_chan *fchan;
	int nids; /* ids on it: destroying it under them is misuse */
	/* Its own reference and one per rdma_get_cm_event inside it: it is freed
	 * by whoever lets go of the last (cm_channel_get, cm_channel_put). */
	int refs;
	bool closed;
};

struct cm_id {
	struct rdma_cm_id id; /* what the caller sees */
	struct fab_id *fid;
	struct cma_device *cma_dev;
	int sync; /* created without a channel: calls wait for their event */
	pthread_mutex_t mut;
	pthread_cond_t cond;
	int events_completed;
	struct cm_event *unacked; /* fetched, not acked: what destroy waits for */
	int connect_error;
	bool destroy_failed; /* by an injected fault: off its channel's count */
	uint8_t initiator_depth;
	uint8_t responder_resources;
	struct ibv_qp_init_attr *qp_init_attr; /* passive endpoints */
	void *connect;                         /* endpoint's ai_connect data */
	size_t connect_len;
	/* rdma_resolve_addrinfo: a resolution under way or unqueried, and its
	 * result until rdma_query_addrinfo hands it over. */
	bool resolving_ai;
	struct rdma_addrinfo *resolved_ai;
	/* Enhanced Connection Establishment: what this side offers, and what
	 * the peer's REQ or REP carried. */
	struct ibv_ece local_ece, remote_ece;
	struct cm_mc *mc_list; /* multicast joins (multicast.c) */
};

/* One multicast join of an id, until rdma_leave_multicast. */
struct cm_mc {
	struct cm_mc *next;
	struct cm_id *owner;
	void *context;
	struct sockaddr_storage addr;
	uint16_t join_flags;
	union ibv_gid mgid; /* from MULTICAST_JOIN: what the QP is attached to */
	uint16_t mlid;
	bool attached;
};

struct cm_event {
	struct rdma_cm_event event;
	uint8_t private_data[FAB_PRIVATE_DATA_MAX];
	struct cm_id *owner; /* whose acknowledgement this is */
	struct cm_event *next_unacked, **prev_unacked; /* on owner->unacked */
	struct cm_mc *mc;    /* MULTICAST_*: the join it answers */
};

/* Checked conversions: abort naming the call on garbage or destroyed ids,
 * where upstream would read freed or foreign memory. The ledger says what
 * is live before anything is read. */
struct cm_id *cm_id_of(struct rdma_cm_id *id, const char *call);
struct cm_channel *cm_channel_of(struct rdma_event_channel *channel, const char *call);
/* A reference for a call that waits on the channel (see cma.c). */
struct cm_channel *cm_channel_get(struct rdma_event_channel *channel, const char *call);
void cm_channel_put(struct cm_channel *ch);

/* ucma_init: -1/ENODEV when the fabric has no devices. */
int cm_init(void);
int cm_get_device(struct cm_id *cid, __be64 guid);

/* ucma_query_addr / ucma_query_gid / ucma_query_path. */
int cm_query_addr(struct cm_id *cid);
void cm_query_gid(struct cm_id *cid);
int cm_query_path(struct cm_id *cid);

/* ucma_complete: for a synchronous id, wait for the call's event. */
int cm_complete(struct cm_id *cid);
/* rdma_resolve_addrinfo's SA path for service (a number is a service id,
 * anything else a name), as resolve_ai_sa: RESOLVE_IB_SERVICE, then, on a
 * synchronous id, its event. */
int cm_resolve_sa(struct cm_id *cid, const char *service);
/* ucma_convert_service_recs: the SA's records as an addrinfo list (RAI_SA,
 * AF_IB, RDMA_PS_IB, each record's address as the destination), one the
 * ledger knows; NULL with errno ENOMEM. */
struct rdma_addrinfo *cm_service_addrinfo(const struct fab_service_rec *recs, int n);
/* An event acknowledged by librdmacm itself (never a fault point). */
void cm_ack(struct rdma_cm_event *event);

/* Allocate an id (and its private channel when channel is NULL). */
struct cm_id *cm_alloc_id(struct rdma_event_channel *channel, void *context,
			  enum rdma_port_space ps, enum ibv_qp_type qp_type);
void cm_free_id(struct cm_id *cid);

/* The QP moves librdmacm makes for a connection (qp.c). */
int cm_connect_qp(struct cm_id *cid);
int cm_accept_qp(struct cm_id *cid);
int cm_qp_to_err(struct cm_id *cid);
int cm_qp_to_sqd(struct cm_id *cid); /* ucma_modify_qp_sqd, an RNIC's shutdown */
/* An RNIC's: its provider moves the QP to RTS once connected (qp.c). */
int cm_iwarp_rts(struct cm_id *cid);
/* The connect response of an id with a QP: ECE, then RTR, RTS and the RTU
 * (ucma_process_conn_resp_ece). 0, or -1 with errno. */
int cm_process_conn_resp(struct cm_id *cid, const struct fab_conn_param *rep);
/* librdmacm's one XRC domain per device, opened on first use. */
struct ibv_xrcd *cm_get_xrcd(struct cm_id *cid);
/* MULTICAST_JOIN: attach the id's QP to the group unless send-only. */
int cm_process_join(struct cm_event *evt);
/* The id goes: forget its joins (the fabric leaves them with the id). */
void cm_free_joins(struct cm_id *cid);
/* rdma_create_id with an explicit QP type (upstream's rdma_create_id2). */
int cm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		 enum rdma_port_space ps, enum ibv_qp_type qp_type);

/* ucma_addrlen: the size of an AF_INET, AF_INET6 or AF_IB address, else 0. */
socklen_t cm_addr_len(const struct sockaddr *addr);

/* -1 with errno from a negative errno. */
static inline int cm_err(int negative_errno)
{
	return negative_errno ? mock_errno(-negative_errno) : 0;
}

#endif
