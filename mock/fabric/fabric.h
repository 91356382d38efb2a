/* The fabric: everything that crosses between two CM ids, and the devices.
 *
 * This is the mock's narrow waist. It plays the part the kernel plays for
 * real rdma-core (rdma_cm, ib_cm, the IP stack): the drop-in librdmacm talks
 * to it only through these calls, much as real librdmacm talks to
 * /dev/infiniband/rdma_cm through write() commands. Keeping it this small is
 * what will later let a cross-process transport stand behind it.
 *
 * Calls return 0 (or a count) on success and a negative errno on failure.
 * All state is guarded by one fabric lock taken inside these calls. */
#ifndef RDMAMOCK_FABRIC_H
#define RDMAMOCK_FABRIC_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_addrinfo.h"
#include "rdmamock.h"

#define FAB_NAME_MAX 64
#define FAB_MAX_ADDRS 16
#define FAB_PRIVATE_DATA_MAX 256

/* ---------------------------------------------------------------- devices */

/* A device as the verbs layer sees it: a snapshot, safe to keep. */
struct fab_device_info {
	unsigned serial;             /* identity, never reused in a process */
	char name[FAB_NAME_MAX];
	enum rdmamock_personality personality;
	__be64 guid;
	int naddrs;
	struct sockaddr_storage addrs[FAB_MAX_ADDRS];
};

/* Snapshot of the current devices, in topology order; free() the array. */
int fab_device_list(struct fab_device_info **out, int *count);
int fab_device_by_serial(unsigned serial, struct fab_device_info *out);
int fab_device_by_guid(__be64 guid, struct fab_device_info *out);

/* GID table entry index of a device: 0 is the link-local GID, then one per
 * address (RoCE v2 style: IPv4 as ::ffff:a.b.c.d). -EINVAL past the end. */
int fab_device_gid(unsigned serial, int index, union ibv_gid *gid);

/* ---------------------------------------------------------------- CM */

struct fab_chan; /* an event queue, like an open /dev/infiniband/rdma_cm */
struct fab_id;   /* a CM id as the fabric knows it */

struct fab_conn_param {
	uint8_t private_data[FAB_PRIVATE_DATA_MAX];
	uint8_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint32_t qp_num;
	uint32_t starting_psn; /* filled by the fabric: the sender's first PSN */
};

struct fab_event {
	uint64_t uid;             /* the id's owner cookie (listener's for requests) */
	struct fab_id *conn_id;   /* CONNECT_REQUEST: the new connection's id */
	enum rdma_cm_event_type event;
	int status;
	struct fab_conn_param param;
	uint64_t arg;             /* USER and INTERNAL events */
};

/* What librdmacm learns by querying an id (UCMA_QUERY_ADDR/ROUTE). */
struct fab_route {
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	__be64 node_guid;         /* 0 while the id has no device */
	uint8_t port_num;
	uint16_t pkey;
	union ibv_gid sgid, dgid;
	int num_paths;            /* 1 once the route is resolved */
	uint8_t path_mtu;         /* enum ibv_mtu */
	uint8_t packet_life_time;
};

/* Channels. The fd is pollable: readable while events are queued. */
int fab_chan_open(struct fab_chan **out, int *fd);
void fab_chan_close(struct fab_chan *chan);

/* Pop the next event. -EAGAIN when none is queued. */
int fab_get_event(struct fab_chan *chan, struct fab_event *out);

/* Ids. Destroy returns how many events were reported for the id. */
int fab_create_id(struct fab_chan *chan, uint64_t uid, enum rdma_port_space ps,
		  enum ibv_qp_type qp_type, struct fab_id **out);
int fab_destroy_id(struct fab_id *id);
int fab_migrate_id(struct fab_id *id, struct fab_chan *to);

int fab_query_route(struct fab_id *id, struct fab_route *out);
int fab_bind(struct fab_id *id, const struct sockaddr *addr);
int fab_resolve_addr(struct fab_id *id, const struct sockaddr *src,
		     const struct sockaddr *dst, int timeout_ms);
int fab_resolve_route(struct fab_id *id, int timeout_ms);
int fab_listen(struct fab_id *id, int backlog);
int fab_connect(struct fab_id *id, const struct fab_conn_param *param);
/* Passive side: accept with the owner cookie; active side (rdma_establish,
 * or a connect response handled with a QP): param NULL sends the RTU. */
int fab_accept(struct fab_id *id, uint64_t uid, const struct fab_conn_param *param);
int fab_reject(struct fab_id *id, const void *data, uint8_t len, uint8_t reason);
int fab_disconnect(struct fab_id *id);
int fab_set_option(struct fab_id *id, int level, int optname, const void *optval, size_t optlen);
/* rdma_init_qp_attr: the attributes and mask for attr->qp_state. */
int fab_init_qp_attr(struct fab_id *id, struct ibv_qp_attr *attr, int *mask);
/* ucma's WRITE_CM_EVENT (kernel 6.18+): queue a USER or INTERNAL event
 * for the id, carrying status and arg. */
int fab_write_event(struct fab_id *id, enum rdma_cm_event_type type, int status, uint64_t arg);
/* ucma's RESOLVE_IB_SERVICE: an SA query, which RoCE devices cannot make. */
int fab_resolve_ib_service(struct fab_id *id);

/* ---------------------------------------------------------------- QPs */

/* Device capabilities a test can take away (rdmamock.h has the public
 * names). */
enum fab_cap {
	FAB_CAP_UDP_SPORT = 1u << 0, /* mlx5 HCA cap rts2rts_qp_udp_sport */
};
int fab_device_caps(unsigned serial, uint32_t *caps);

/* The QPs of the fabric, by number: what the mock knows of each beyond
 * the verbs objects, so that the control API and later a transport can
 * find it. QP numbers are 24-bit and unique in the process. */
int fab_qp_create(unsigned dev_serial, enum ibv_qp_type type, void *owner, uint32_t *qpn);
void fab_qp_destroy(uint32_t qpn);
/* The verbs object that registered qpn (for the in-process data path). */
void *fab_qp_owner(uint32_t qpn);
/* After a successful modify: the new state, and the remote QP number once
 * RTR sets it (0 keeps what is known). RESET forgets the UDP source port. */
void fab_qp_modified(uint32_t qpn, enum ibv_qp_state state, uint32_t dest_qpn);
/* The RoCE v2 UDP source port the QP's packets carry: the one set by
 * mlx5dv_modify_qp_udp_sport, else the kernel's flow-label derivation
 * from the local and remote QP numbers (49152 + 14 bits). */
int fab_qp_set_udp_sport(uint32_t qpn, uint16_t port);
int fab_qp_udp_sport(uint32_t qpn, uint16_t *port);

/* Live object counts, for the control API's EBUSY checks. */
int fab_live_ids(void);

#endif
