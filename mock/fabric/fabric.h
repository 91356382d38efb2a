/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_addrinfo.h"
#include "rdmamock.h"

#define FAB_NAME_MAX 64
#define FAB_MAX_ADDRS 16
#define FAB_PRIVATE_DATA_MAX 256

/* ---------------------------------------------------------------- doorbells
 *
 * A file descriptor the mock hands out to be polled (an event channel's,
 * a completion channel's, a context's async_fd), made readable from any
 * process of the fabric (bell.c). Level triggered: whoever makes the queue
 * behind it non-empty rings it, whoever empties it clears it, both under
 * the lock that guards the queue. The struct lives with the queue, in the
 * arena. */
struct fab_bell {
	pid_t pid;       /* the owner; 0 when closed */
	uint32_t serial; /* its number in the owner */
	int fd;          /* the owner's descriptor */
	bool lit;
	uint8_t name_len;
	char name[64];   /* its abstract socket name, made once at open */
};
/* Make one, owned by this process: its fd, or a negative errno. */
int fab_bell_open(struct fab_bell *b);
void fab_bell_ring(struct fab_bell *b);
void fab_bell_clear(struct fab_bell *b);
void fab_bell_close(struct fab_bell *b);

/* ---------------------------------------------------------------- memory
 *
 * The HCA's DMA into the memory of the process that registered it
 * (memory.c): 0, or a negative errno (EFAULT, ESRCH when it is gone, EPERM
 * when the kernel does not let one process reach another's memory). */
int fab_mem_write(pid_t pid, uint64_t addr, const void *src, size_t len);
/* The same where the memory may be gone meanwhile, this process's too (a
 * message kept for a receive, written as its QP or CQ goes): a range no
 * longer mapped is -EFAULT, not a fault. */
int fab_mem_write_mapped(pid_t pid, uint64_t addr, const void *src, size_t len);
int fab_mem_read(pid_t pid, uint64_t addr, void *dst, size_t len);
/* Let the other processes of a shared fabric reach this one's memory. */
void fab_mem_allow(void);

/* ---------------------------------------------------------------- devices */

/* A device as the verbs layer sees it: a snapshot, safe to keep. */
struct fab_device_info {
	unsigned serial;             /* identity, never reused in a process */
	char name[FAB_NAME_MAX];
	enum rdmamock_personality personality;
	__be64 guid;
	int naddrs;
	struct sockaddr_storage addrs[FAB_MAX_ADDRS];
	bool port_down;              /* its port, by rdmamock_port_set */
	bool ib;                     /* an InfiniBand port (FAB_CAP_IB), not RoCE */
	uint16_t lid;                /* an InfiniBand port's LID, which the fabric's SM gave */
};

/* The fabric is the subnet manager of its InfiniBand ports: this is its
 * LID, and each port's is FAB_SM_LID + the device's serial (from 1). */
#define FAB_SM_LID 1
/* The GID table of a ConnectX's InfiniBand port: 128 slots, one used. */
#define FAB_IB_GID_TBL_LEN 128

/* A count that changes whenever a device comes or goes or gets an
 * address (the system view remakes its tree then). */
unsigned fab_topology_gen(void);
/* Snapshot of the current devices, in topology order; free() the array. */
int fab_device_list(struct fab_device_info **out, int *count);
int fab_device_by_serial(unsigned serial, struct fab_device_info *out);
int fab_device_by_guid(__be64 guid, struct fab_device_info *out);

/* A device's GID table entry (type may be NULL): the default link-local
 * GID, then one per address (IPv4 as ::ffff:a.b.c.d), v1 and v2 on mlx5,
 * v2 only on the generic (rxe-like) device; an InfiniBand port's one GID,
 * the subnet prefix fe80:: and the port GUID, of type IB. -ENODATA past the filled
 * entries; the verbs layer knows the table's length. */
int fab_device_gid(unsigned serial, int index, union ibv_gid *gid, enum ibv_gid_type *type);

/* What a device of one personality reports (attrs.c): what libibverbs'
 * queries answer and what the system view (mock/sys) shows. Limits are
 * typical of the hardware (mlx5: ConnectX-5; generic: rdma_rxe's
 * rxe_param.h), not measured; they matter where librdmacm checks against
 * them, and where the create calls refuse what is over them (EINVAL). */
struct fab_profile {
	const char *fw_ver;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_mw;                /* memory windows; 0: none */
	int max_pd;
	int max_ah;
	int max_qp_rd_atom;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	int max_mcast_grp;
	int max_mcast_qp_attach;
	uint16_t max_pkeys;
	uint16_t pkey_tbl_len;     /* the port's: rxe has 1 entry though max_pkeys is 64 */
	uint8_t local_ca_ack_delay;
	uint32_t max_msg_sz;
	int gid_tbl_len;
	uint32_t max_inline_data;  /* the largest a QP may ask for (rxe); 0: see max_wqe_size */
	uint32_t max_wqe_size;     /* mlx5: its largest send WQE (max_sq_desc_sz), which bounds
				    * the inline data a QP may ask for (qp.c size_send_queue) */
	unsigned device_cap_flags;
	uint32_t port_cap_flags;
	uint8_t active_width, active_speed;
	bool xrc;                  /* XRC domains, SRQs and QPs */
	bool srq_resize;           /* ibv_modify_srq(IBV_SRQ_MAX_WR): rxe yes, mlx5 no */
	bool completion_timestamp; /* IBV_WC_EX_WITH_COMPLETION_TIMESTAMP */
	uint64_t hca_core_clock;   /* kHz, when there are timestamps */
	uint64_t max_dm_size;      /* device memory (MEMIC) in all; 0: none */
	/* Where 0, what the device reports follows from the fields above, as on
	 * both personalities: max_sge for max_sge_rd, max_qp_rd_atom for
	 * max_qp_init_rd_atom, all of memory for max_mr_size. A replayed
	 * profile (replay.c) gives them as the device reported them. */
	int max_sge_rd;
	int max_qp_init_rd_atom;
	uint64_t max_mr_size;
	uint8_t atomic_cap;        /* enum ibv_atomic_cap */
	uint8_t transport;         /* enum ibv_transport_type: IB (RoCE) or iWARP */
	bool gid_roce_v1;          /* a RoCE v1 GID beside each v2 one (mlx5_ib) */
};

/* The attributes of a personality's devices: its own, or the profile
 * RDMAMOCK_PROFILE names where that replays this personality (replay.c). */
const struct fab_profile *fab_profile_of(enum rdmamock_personality p);
/* RDMAMOCK_PROFILE: the topology its device makes, "NAME=KIND:ADDRS", or
 * NULL when no profile is replayed. */
const char *fab_replay_topology(void);
/* True where a replayed profile applies to personality p and records the
 * deviation `clause` (a clause id of the suite), which the mock then
 * behaves as: the few it can are listed in replay.c. */
/* Whether a replayed profile is of personality p's device. */
bool fab_replay_is(enum rdmamock_personality p);
bool fab_replay_deviates(enum rdmamock_personality p, const char *clause);
/* Where a replayed profile is of p's device and says it lacks
 * `capability` (a verb its provider has no op for: cq-ex, qp-ex, srq-ex,
 * query-srq, resize-cq, memory-windows), the verb gives EOPNOTSUPP as
 * libibverbs does then. */
bool fab_replay_lacks(enum rdmamock_personality p, const char *capability);
/* The same for what the recorded run's rdma-core did, whatever the device
 * (its librdmacm's rsocket, say). */
bool fab_replay_records(const char *clause);

/* A device's attributes as ibv_query_device reports them. */
int fab_device_attr(unsigned serial, struct ibv_device_attr *attr);
/* Its one port's, as ibv_query_port (state DOWN while the port is down). */
int fab_port_attr(unsigned serial, struct ibv_port_attr *attr);
/* The net device a GID of the device belongs to, as the kernel reports
 * it: the host interface whose subnet holds the GID's address (the
 * device's first address for the link-local GID); its index, and its
 * name in ifname (IF_NAMESIZE bytes, may be NULL). 0 when no interface
 * here has it. */
unsigned fab_gid_netdev(unsigned serial, const union ibv_gid *gid, char *ifname);

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
	uint32_t ece_vendor_id; /* Enhanced Connection Establishment, carried as is */
	uint32_t ece_options;
};

/* What a UD event carries (SIDR REP, multicast join): how to reach the
 * peer or the group. */
struct fab_ud_param {
	struct ibv_ah_attr ah_attr;
	uint32_t qp_num;
	uint32_t qkey;
};

struct fab_event {
	uint64_t uid;             /* the id's owner cookie (listener's for requests) */
	struct fab_id *conn_id;   /* CONNECT_REQUEST: the new connection's id */
	enum rdma_cm_event_type event;
	int status;
	struct fab_conn_param param;
	uint64_t arg;             /* USER and INTERNAL events */
	struct fab_ud_param ud;   /* ESTABLISHED of a UD id, MULTICAST_JOIN */
	uint64_t mc_uid;          /* MULTICAST_*: the join's cookie */
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
	uint16_t slid, dlid;      /* InfiniBand: the path's ends (0 on RoCE) */
	uint8_t hop_limit;        /* 64 on RoCE; 0 within an IB subnet */
	uint8_t sl, traffic_class, rate;
	uint32_t flow_label;
};

/* Channels. The fd is pollable: readable while events are queued. */
int fab_chan_open(struct fab_chan **out, int *fd);
void fab_chan_close(struct fab_chan *chan);

/* Pop the next event. -EAGAIN when none is queued. */
int fab_get_event(struct fab_chan *chan, struct fab_event *out);

/* Ids. Destroy takes the id out of the fabric, as ucma_destroy_kern_id the
 * kernel's, and returns how many events were reported for it; its memory
 * stays, for an event of it still being read (a query on it then fails
 * with -ENOENT, as on a destroyed kernel id), until fab_free_id, once the
 * events are acked. */
int fab_create_id(struct fab_chan *chan, uint64_t uid, enum rdma_port_space ps,
		  enum ibv_qp_type qp_type, struct fab_id **out);
int fab_destroy_id(struct fab_id *id);
void fab_free_id(struct fab_id *id);
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
/* rdma_join_multicast and rdma_leave_multicast of a UD id, each join named
 * by its cookie (mc_uid); MULTICAST_JOIN follows a join. join_flags are
 * RDMA_MC_JOIN_FLAG_*. */
int fab_join_multicast(struct fab_id *id, const struct sockaddr *addr, uint16_t join_flags,
		       uint64_t mc_uid);
int fab_leave_multicast(struct fab_id *id, uint64_t mc_uid);
/* rdma_notify: the IB CM's ib_cm_notify (COMM_EST establishes a passive
 * id whose RTU has not come yet). */
int fab_notify(struct fab_id *id, enum ibv_event_type event);
int fab_set_option(struct fab_id *id, int level, int optname, const void *optval, size_t optlen);
/* rdma_init_qp_attr: the attributes and mask for attr->qp_state. */
int fab_init_qp_attr(struct fab_id *id, struct ibv_qp_attr *attr, int *mask);
/* What the mock's device itself needs to carry the connection (its path,
 * the peer's QP, PSNs, depths: the InfiniBand CM's attributes), whatever
 * the transport: on an RNIC the provider moves the QP to RTS with them
 * (rdmacm/qp.c), where rdma_init_qp_attr gives iWARP's masks. */
int fab_wire_qp_attr(struct fab_id *id, struct ibv_qp_attr *attr, int *mask);
/* Whether the id is on an RNIC (IBV_TRANSPORT_IWARP). */
bool fab_id_iwarp(const struct fab_id *id);
/* ucma's WRITE_CM_EVENT (kernel 6.18+): queue a USER or INTERNAL event
 * for the id, carrying status and arg. */
int fab_write_event(struct fab_id *id, enum rdma_cm_event_type type, int status, uint64_t arg);
/* A service record of the SA (IBTA 15.2.5.14), as the kernel's
 * ib_user_service_rec carries it to user space. */
#define FAB_SERVICE_NAME 64
struct fab_service_rec {
	uint64_t id;              /* host order */
	char name[FAB_SERVICE_NAME];
	union ibv_gid gid;
	uint16_t pkey;            /* host order */
};
#define FAB_SERVICE_ID (1u << 0)   /* match the id (RDMA_USER_CM_IB_SERVICE_FLAG_ID) */
#define FAB_SERVICE_NAMED (1u << 1) /* match the name (..._FLAG_NAME) */
/* ucma's RESOLVE_IB_SERVICE (rdma_resolve_ib_service): the SA of the id's
 * InfiniBand port is asked for the records of a service id or name; a
 * RoCE port has no SA (-EOPNOTSUPP). ADDRINFO_RESOLVED or ADDRINFO_ERROR
 * follows. */
int fab_resolve_ib_service(struct fab_id *id, unsigned flags, uint64_t service_id, const char *name);
/* UCMA_QUERY_IB_SERVICE: the records that resolution found, up to max of
 * them into recs; returns how many it wrote (0: none). */
int fab_query_ib_service(struct fab_id *id, struct fab_service_rec *recs, int max);
/* rdmamock_sa_service_add: a service registers its record with the SA of
 * the subnet of dev (an InfiniBand port). */
int fab_sa_service_add(const char *dev, uint64_t service_id, const char *name);

/* ---------------------------------------------------------------- QPs */

/* Device capabilities a test can take away (rdmamock.h has the public
 * names). */
enum fab_cap {
	FAB_CAP_UDP_SPORT = 1u << 0, /* mlx5 HCA cap rts2rts_qp_udp_sport */
	FAB_CAP_IB = 1u << 1,        /* mlx5 only: the port's link layer is InfiniBand */
};
int fab_device_caps(unsigned serial, uint32_t *caps);
/* The port's counters, and counting: a UD packet dropped for its Q_Key. */
int fab_device_counters(unsigned serial, uint32_t *qkey_violations);
void fab_device_count_qkey_violation(unsigned serial);
/* The IPv4 header id of the device's next RoCE v2 packet (it counts). */
uint16_t fab_device_next_ip_id(unsigned serial);
/* Whether an address handle to dgid can be made: 0 (a device holds it, or
 * a multicast GID), -ETIMEDOUT (on a device's subnet, nobody answers ARP),
 * -ENETUNREACH (no route). */
int fab_neighbour(const union ibv_gid *dgid);

/* ---------------------------------------------------------------- the wire
 *
 * What one QP sends another, as RoCE v2 carries it: the GRH (source and
 * destination GID), the BTH (destination QP, opcode), and the extended
 * headers of each operation. fab_transmit finds the QP the packet is for
 * and hands it to that QP's receiver, the verbs layer that registered the
 * QP, which answers as a responder would: an ACK, a NAK, or nothing. */
enum fab_opcode {
	FAB_OP_SEND,
	FAB_OP_WRITE,
	FAB_OP_READ,
	FAB_OP_CMP_SWP,
	FAB_OP_FETCH_ADD,
};

struct fab_packet {
	enum fab_opcode op;
	enum ibv_qp_type transport; /* RC, UC, UD, IBV_QPT_XRC_SEND, or DRIVER for DC */
	unsigned src_dev;           /* the sender's device (its serial) */
	uint32_t src_qpn;
	union ibv_gid sgid, dgid;   /* the GRH */
	bool no_grh;                /* InfiniBand within the subnet: LIDs only */
	uint16_t slid, dlid;        /* InfiniBand's local route header */
	enum ibv_gid_type gid_type; /* of the source GID: RoCE v1 or v2 */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
	uint8_t sl;
	uint32_t dst_qpn;           /* 0xffffff for a multicast group */
	uint32_t qkey;              /* UD */
	uint64_t dc_key;            /* DC: the DCT's access key, as the DCI's vector gives it */
	uint16_t ip_id;             /* RoCE v2 over IPv4: the IP header's id */
	uint32_t xrc_srqn;          /* XRC: the SRQ at the target */
	bool with_imm;
	__be32 imm;
	bool with_inv;              /* SEND with invalidate: the responder frees inv_rkey */
	uint32_t inv_rkey;
	bool solicited;
	uint64_t raddr;             /* RDMA and atomics */
	uint32_t rkey;
	uint64_t compare_add, swap; /* atomics */
	const void *payload;        /* SEND and WRITE */
	uint64_t len;               /* bytes sent, or asked for (READ) */
};

enum fab_ack {
	FAB_ACK,
	FAB_NAK_RNR,        /* no receive posted */
	FAB_NAK_INV_REQ,    /* the request is invalid at the responder */
	FAB_NAK_ACCESS,     /* remote access violation */
	FAB_NAK_OP,         /* the responder failed (remote operation error) */
	FAB_NO_ANSWER,      /* no QP took the packet: the requester times out */
};

struct fab_response {
	enum fab_ack ack;
	void *read_into;            /* READ: the requester's bounce buffer, len bytes */
	uint64_t atomic_orig;       /* atomics: the value before */
	uint8_t rnr_timer;          /* FAB_NAK_RNR: the responder's min_rnr_timer */
};

/* The receiver of a QP: called by fab_transmit without the fabric's lock,
 * with `owner` as registered. It fills resp (ack is FAB_NO_ANSWER when
 * called, for a packet the QP silently drops). */
typedef void (*fab_receiver)(void *owner, const struct fab_packet *pkt, struct fab_response *resp);

/* Carry pkt to the QP dst_qpn on the device that holds dgid, or to every
 * QP attached to a multicast dgid, and return the answer (FAB_NO_ANSWER
 * when no QP takes a unicast packet; FAB_ACK for multicast, which nobody
 * answers). In-process, the caller holds the verbs lock across the call,
 * so no receiver goes away during it. */
void fab_transmit(const struct fab_packet *pkt, struct fab_response *resp);
/* The receiver of every QP, in this process (the verbs layer sets it when
 * it loads: any process may carry a packet to a QP of another). */
void fab_set_receiver(fab_receiver receive);
/* Told when a device's port goes down or comes up (rdmamock_port_set), in
 * the process that changed it: libibverbs raises the port's events on
 * every context of the device, in any process. */
void fab_set_port_hook(void (*hook)(unsigned serial, bool up));
/* Told when a device has a fatal error (rdmamock_device_fatal), in the
 * process that raised it: libibverbs tells every context of the device. */
void fab_set_fatal_hook(void (*hook)(unsigned serial));
/* What libmlx5's direct-verbs calls reach of the provider, which on the
 * mock is the verbs layer: it sets them when it loads, as the mlx5
 * provider's dv ops are its own. */
struct mlx5dv_cq;
struct mlx5dv_cq_init_attr;
struct mlx5dv_qp;
struct mlx5dv_srq;
struct mlx5dv_ah;
struct mlx5dv_dm;
struct mlx5dv_qp_ex;
struct ibv_qp_ex;
struct fab_dv_provider {
	/* mlx5dv_init_obj of a CQ: 0, or an errno. */
	int (*cq_expose)(struct ibv_cq *cq, struct mlx5dv_cq *out);
	/* mlx5dv_create_cq on an mlx5 device: NULL with errno on failure. */
	struct ibv_cq_ex *(*cq_create)(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr,
				       struct mlx5dv_cq_init_attr *dv);
	/* mlx5dv_init_obj of a QP: 0, or an errno. */
	int (*qp_expose)(struct ibv_qp *qp, struct mlx5dv_qp *out);
	/* mlx5dv_create_qp of a DCI or DCT (dc_type MLX5DV_DCTYPE_*), its
	 * attributes checked by libmlx5: NULL with errno on failure. */
	struct ibv_qp *(*qp_create_dc)(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				       int dc_type, uint64_t access_key);
	/* mlx5dv_qp_ex_from_ibv_qp_ex: the QP's mlx5 builders. */
	struct mlx5dv_qp_ex *(*qp_ex_dv)(struct ibv_qp_ex *qpx);
	/* mlx5dv_init_obj of an SRQ: 0, or an errno. */
	int (*srq_expose)(struct ibv_srq *srq, struct mlx5dv_srq *out);
	/* mlx5dv_init_obj of an AH: 0, or an errno. */
	int (*ah_expose)(struct ibv_ah *ah, struct mlx5dv_ah *out);
	/* mlx5dv_alloc_dm of MEMIC: NULL with errno on failure. */
	struct ibv_dm *(*dm_alloc)(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
	/* mlx5dv_init_obj of device memory: 0, or an errno. */
	int (*dm_expose)(struct ibv_dm *dm, struct mlx5dv_dm *out);
};
void fab_set_dv_provider(const struct fab_dv_provider *provider);
const struct fab_dv_provider *fab_dv_provider(void);
bool fab_gid_is_multicast(const union ibv_gid *gid);
/* ibv_attach_mcast / ibv_detach_mcast: -EINVAL for an unknown QP or a
 * group the QP is not in. */
int fab_mcast_attach(uint32_t qpn, const union ibv_gid *gid);
int fab_mcast_detach(uint32_t qpn, const union ibv_gid *gid);
/* The QP is attached to some group (the kernel refuses to destroy it). */
bool fab_mcast_attached(uint32_t qpn);

/* The QPs of the fabric, by number: what the mock knows of each beyond
 * the verbs objects, so that the wire and the control API find it. QP
 * numbers are 24-bit and unique on the fabric. */
int fab_qp_create(unsigned dev_serial, enum ibv_qp_type type, void *owner, fab_receiver receive,
		  uint32_t *qpn);
void fab_qp_destroy(uint32_t qpn);
/* A new SRQ's number, unique on the fabric (XRC packets name it). */
int fab_srq_number(uint32_t *srqn);
/* After a successful modify: the new state, the remote QP number once RTR
 * sets it (0 keeps what is known), and the path's flow label when the AV
 * was given (NULL keeps it). RESET forgets the UDP source port. */
void fab_qp_modified(uint32_t qpn, enum ibv_qp_state state, uint32_t dest_qpn,
		     const uint32_t *flow_label);
/* The RoCE v2 UDP source port the QP's packets carry: the one set by
 * mlx5dv_modify_qp_udp_sport, else the kernel's derivation from the
 * path's flow label, or from the local and remote QP numbers when the
 * path has none (49152 + 14 bits). */
int fab_qp_set_udp_sport(uint32_t qpn, uint16_t port);
int fab_qp_udp_sport(uint32_t qpn, uint16_t *port);
/* The server's address and port of the CM connection that QP qpn carries
 * (false: none), so that a fault can be aimed at a connection. */
bool fab_qp_server(uint32_t qpn, struct sockaddr_storage *server, int *port);

/* ---------------------------------------------------------------- timers
 *
 * The verbs layer's deadlines (a send queue waiting out its retries): fire
 * `ns` from now, on the fabric's clock, in the watcher of the process that
 * owns them, calling its handler (fab_set_verbs_timer) with the verbs lock
 * held. The
 * caller holds the verbs lock; the timer belongs to `owner` (arena.h). */
void fab_timer_add_verbs(void *obj, int owner, uint64_t ns, int arg);
void fab_timer_cancel_verbs(void *obj);
void fab_set_verbs_timer(void (*fire)(void *obj, int arg));

/* ---------------------------------------------------------------- the clock
 *
 * The fabric's clock (clock.c): CLOCK_MONOTONIC's scale, plus what it has
 * jumped. Every timer of the fabric is on it. RDMAMOCK_CLOCK=real keeps it
 * on wall time; by default it jumps to the next timer once the fabric is
 * quiet. A member that takes the fabric's lock or the verbs lock makes the
 * fabric busy (fab_clock_busy; fab_lock does it); a poll that may find
 * nothing does not. */
uint64_t fab_now_ns(void);
uint64_t fab_mono_ns(void);
uint64_t fab_clock_offset(void); /* the fabric clock less CLOCK_MONOTONIC */
/* A device's free-running timestamp counter of khz kHz (hca_core_clock),
 * on the fabric's clock: its count at ns, in whole microseconds' worth of
 * cycles, 0 for a device without one. Completion timestamps and
 * mlx5dv_get_clock_info read it. */
uint64_t fab_device_cycles(uint64_t khz, uint64_t ns);
void fab_clock_busy(void);
/* A deadline on the clock that this thread waits for: a timer that rings
 * the thread's own doorbell, whose fd fab_deadline_arm returns (or a
 * negative errno); the clock may jump to it. No lock held. */
struct fab_deadline {
	uint64_t due_ns;
	struct fab_bell *bell;
};
int fab_deadline_arm(struct fab_deadline *d, uint64_t ns);
bool fab_deadline_passed(const struct fab_deadline *d);
void fab_deadline_disarm(struct fab_deadline *d);
/* pthread_cond_wait for a while (mutex held): true once d has passed. */
bool fab_clock_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex,
			 const struct fab_deadline *d);
/* poll(2) with its timeout on the clock. */
int fab_clock_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);

/* A port's active MTU: 1024 on RoCE (the mock's net devices' 1500
 * bytes), 4096 on InfiniBand; also the path MTU within the subnet and the
 * largest UD message. */
static inline enum ibv_mtu fab_active_mtu(bool ib)
{
	return ib ? IBV_MTU_4096 : IBV_MTU_1024;
}

/* A spinning wait's pause, kind to the other hyperthread. */
static inline void fab_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Live object counts, for the control API's EBUSY checks. */
int fab_live_ids(void);

#endif
