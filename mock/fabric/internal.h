/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fabric's own state, shared by core.c (lock, channels, events,
 * timers), cm.c (the CM state machine), ports.c (port spaces) and
 * topology.c (devices).
 * Only the fabric and the control API (control/control.c) include this. */
#ifndef RDMAMOCK_FABRIC_INTERNAL_H
#define RDMAMOCK_FABRIC_INTERNAL_H

#include <poll.h>
#include <pthread.h>

#include "arena.h"
#include "fabric.h"

struct fab_device {
	struct fab_device *next;
	unsigned serial;
	char name[FAB_NAME_MAX];
	enum rdmamock_personality personality;
	__be64 guid;
	int naddrs;
	struct sockaddr_storage addrs[FAB_MAX_ADDRS];
	int prefix[FAB_MAX_ADDRS];
	int users; /* CM ids attached to it */
	uint32_t caps; /* enum fab_cap bits */
	uint32_t qkey_violations; /* the port's counter: UD packets with a wrong Q_Key */
	uint16_t ip_id;           /* the IPv4 id its RoCE v2 packets carry, counting */
	bool port_down;           /* rdmamock_port_set: nothing goes in or out */
	bool removing;            /* removed while CM ids use it: gone with the last */
	bool fatal;               /* a catastrophic error: its contexts are dead */
};

/* The kernel's rdma_cm_state, as far as the mock needs it. */
enum fab_state {
	ST_IDLE,
	ST_ADDR_QUERY,
	ST_ADDR_RESOLVED,
	ST_ROUTE_QUERY,
	ST_ROUTE_RESOLVED,
	ST_CONNECT,
	ST_ADDR_BOUND,
	ST_LISTEN,
	ST_DEVICE_REMOVAL, /* its device went away (DEVICE_REMOVAL): only destroy is left */
	ST_ADDRINFO_RESOLVED, /* the SA found a service: its first record is the destination */
};

/* The IB CM's connection states (RoCE uses the IB CM). */
enum fab_cm_state {
	CM_IDLE,
	CM_REQ_SENT,
	CM_REQ_RCVD,
	CM_REP_SENT,
	CM_REP_RCVD,
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_TIMEWAIT,
};

/* The owners of one port in one port space (ports.c). */
struct fab_bind {
	struct fab_bind *next, **pprev; /* its bucket of fab.binds, doubly linked */
	enum rdma_port_space ps;
	uint16_t port;
	struct fab_id *owners;
};

/* A path record of the id's own (rdma_set_option RDMA_OPTION_IB_PATH), in
 * host order: what the CM then programs in place of the route it would
 * have resolved. */
struct fab_path {
	union ibv_gid sgid, dgid;
	uint16_t slid, dlid, pkey;
	uint32_t flow_label;
	uint8_t hop_limit, traffic_class, sl, mtu, rate, packet_life;
};

struct fab_id {
	struct fab_id *next_live, *prev_live; /* fab.live, doubly linked */
	struct fab_chan *chan;
	int owner;    /* the member whose channel it is on (arena.h) */
	uint64_t uid; /* 0 for a new connection until it is accepted */
	enum rdma_port_space ps;
	enum rdma_port_space space; /* its port's space once bound: ps, or an
				     * AF_IB address's by its service id */
	enum ibv_qp_type qp_type;
	enum fab_state state;
	struct sockaddr_storage src, dst;
	struct fab_device *dev;
	struct fab_bind *bind;
	struct fab_id *next_owner; /* in bind->owners */
	bool afonly;
	bool afonly_set; /* by rdma_set_option, so bind keeps it */
	bool reuseaddr;
	uint8_t tos;
	uint32_t qkey;        /* UD: the Q_Key its SIDR REPs and joins give */
	struct fab_join *joins; /* UD: its multicast joins (multicast.c) */
	uint8_t ack_timeout;
	bool ack_timeout_set; /* by rdma_set_option: rdma_init_qp_attr gives it */
	bool route_resolved;
	bool path_given;      /* the route is path, set by RDMA_OPTION_IB_PATH (or the REQ's) */
	struct fab_path path;
	int backlog;
	int pending_requests; /* listener: requests not yet fetched */
	bool has_cm;          /* the id has exchanged CM messages */
	bool initiator;       /* it sent the REQ */
	bool disconnected;    /* DISCONNECTED was generated: only TIMEWAIT_EXIT follows */
	bool destroyed;       /* by rdma_destroy_id, its memory kept until the acks */
	bool cut;             /* the peer vanished (a fault): it hears nothing more */
	bool abandoned;       /* passive: the active side stopped waiting for its answer */
	bool stream_reset;    /* passive, on an RNIC: the active side's stream closed before the accept */
	int req_sends;        /* REQs sent for this connection */
	struct fab_conn_param sent; /* its REQ or REP */
	struct fab_conn_param got;  /* the peer's REQ or REP */
	uint32_t psn;               /* its first send PSN, random as the kernel's */
	enum fab_cm_state cm;
	struct fab_id *peer;
	struct fab_device *remote_dev; /* the peer's device, once the CM knows it */
	struct fab_id *next_got; /* fab.got_index, by got.qp_num, once got is known */
	bool in_got_index;
	struct fab_id *requested_by; /* listener, while the request is queued */
	unsigned events_reported;
	/* The service records its RESOLVE_IB_SERVICE found (indexes into
	 * fab.services), and how many. */
	uint8_t services[8];
	uint8_t nservices;
};

struct fab_queued {
	struct fab_queued *next;
	struct fab_id *id; /* whose event it is (the listener for requests) */
	struct fab_event ev;
};

struct fab_chan {
	struct fab_bell bell; /* lit while events are queued */
	int owner;            /* the member that opened it */
	struct fab_queued *head, *tail;
};

/* Deferred work: what a timer does when it fires (cm.c), on whichever
 * member's watcher finds it due, under the lock. */
enum fab_timer_kind {
	TIMER_ADDR_QUERY,  /* address resolution gives up: ADDR_ERROR */
	TIMER_SEND_REQ,    /* the REQ goes (again) */
	TIMER_TIMEWAIT,    /* timewait is over: TIMEWAIT_EXIT */
	TIMER_DREQ,        /* the DREQ was never answered */
	TIMER_REP_ARRIVES, /* a delayed REP reaches the active side */
	TIMER_DREQ_ARRIVES, /* a delayed DREQ reaches the peer */
	TIMER_UNANSWERED,  /* a REQ (MRA'd) or a REP was never answered: UNREACHABLE */
	TIMER_VERBS,       /* the verbs layer's (fab_timer_add_verbs) */
	TIMER_WAKE,        /* a wait on the clock is over (clock.c): ring its bell */
};
struct fab_timer {
	struct fab_timer *next;
	uint64_t due_ns;
	struct fab_id *id;  /* CM timers */
	void *obj;          /* TIMER_VERBS; TIMER_WAKE: its fab_bell */
	enum fab_timer_kind kind;
	int arg;
	uint64_t quiet_ns;  /* the real quiet a jump to it needs (0: FAB_QUIET_NS) */
};
void cm_timer_fire(struct fab_id *id, enum fab_timer_kind kind, int arg);

/* A QP as the fabric knows it (qp.c). */
struct fab_qp {
	struct fab_qp *next;
	uint32_t qpn;
	unsigned dev_serial;
	int owner;           /* the member that made it */
	enum ibv_qp_type type;
	enum ibv_qp_state state;
	uint32_t dest_qpn;
	uint32_t flow_label; /* of its path (the AV), 0 when none */
	bool sport_set;
	uint16_t sport;
	void *receiver;      /* the verbs layer's QP, for fab_receiver */
	bool cut;            /* its connection's peer vanished (cm.c): packets are lost */
};

/* A QP attached to one multicast GID (multicast.c). */
struct fab_mcast {
	struct fab_mcast *next;
	union ibv_gid gid;
	uint32_t qpn;
};

#define FAB_QPN_FIRST 0x11 /* QP 0 and 1 are special; rxe numbers from 17 too */
#define FAB_BIND_BUCKETS 4096
#define FAB_PORT_SPACES 4 /* IPoIB, TCP, UDP, IB (ports.c) */
#define FAB_QP_BUCKETS 4096
#define FAB_SA_SERVICES 32

/* Everything the fabric knows, in the arena (arena.c keeps it). */
/* The fabric's clock (clock.c), in its shared state. */
struct fab_clock {
	uint64_t offset_ns; /* added to CLOCK_MONOTONIC; only grows */
	bool real;          /* RDMAMOCK_CLOCK=real: never jumps */
};

struct fabric {
	pthread_mutex_t lock;
	struct fab_clock clock;
	struct fab_device *devices;
	unsigned next_serial;
	unsigned topology_gen; /* counts changes of the devices or their addresses */
	struct fab_id *live;
	int nlive;
	struct fab_timer *timers; /* sorted by due time */
	unsigned last_used_port;
	unsigned rand_state;
	struct fab_bind *binds[FAB_BIND_BUCKETS];
	uint64_t ports_used[FAB_PORT_SPACES][65536 / 64]; /* a bit per bound port */
	struct fab_qp *qps[FAB_QP_BUCKETS];
	struct fab_id *got_index[FAB_BIND_BUCKETS]; /* ids by their peer's QP number (cm.c) */
	uint32_t next_qpn, next_srqn;
	struct fab_mcast *mcasts;
	/* The SA's service records (cm.c), each of a device's port: a
	 * record whose device is gone is no longer found. */
	struct fab_service {
		struct fab_service_rec rec;
		unsigned serial;
		bool used;
	} services[FAB_SA_SERVICES];
};

/* This process's view of the fabric (arena.c sets it when it maps it). */
extern struct fabric *fab_fabric;
#define fab (*fab_fabric)

/* A personality's own attributes (attrs.c), before any replayed profile. */
const struct fab_profile *fab_personality_profile(enum rdmamock_personality p);

void fab_state_init(struct fabric *f);
void fab_lock(void);
void fab_unlock(void);
/* The clock's own (clock.c; the rest is in fabric.h): the watcher jumps
 * the clock (lock held) to a timer's due time once the fabric has been
 * quiet. */
void fab_clock_init(struct fab_clock *c);
bool fab_clock_auto(void);
void fab_clock_is_watcher(void);
uint64_t fab_clock_activity(void);
bool fab_clock_jump_locked(uint64_t due);
/* Whether every thread of every member but the caller sleeps (/proc). */
bool fab_clock_members_asleep(void);
/* The quiet that makes the clock jump: no member takes a lock for this
 * long, and every thread of every member sleeps at its start and at its
 * end (real time). */
#define FAB_QUIET_NS 1000000u
/* Tear down what a dead member had on the fabric, as the kernel does for
 * a process that is gone: its ids (their peers see them go), its QPs and
 * their multicast groups. Lock held. */
void fab_reap_locked(int owner);
void fab_qp_reap_locked(int owner);
void fab_qp_cut_locked(uint32_t qpn);
void fab_device_removal_locked(struct fab_device *dev);
void fab_addr_change_locked(struct fab_device *dev);
bool fab_qp_server_locked(uint32_t qpn, struct sockaddr_storage *server);
/* After fork, in the child: process-local state starts afresh. */
void fab_child_after_fork(void);
void fab_watch_start(void);
void fab_bell_child(void);
/* A member's doorbell: its watcher's, rung when members come (arena.c). */
struct fab_bell *fab_member_bell(int owner);

/* Events and timers (core.c); callers hold the lock. */
/* Returns the queued entry, or NULL when the event was dropped. */
struct fab_queued *fab_queue_event(struct fab_id *id, enum rdma_cm_event_type type, int status,
				   const struct fab_conn_param *param, struct fab_id *conn_id);
void fab_drop_events(struct fab_id *id, struct fab_chan *chan);
void fab_drop_join_events_locked(struct fab_id *id, uint64_t mc_uid);
void fab_timer_add(struct fab_id *id, unsigned ms, enum fab_timer_kind kind, int arg);
/* The same for a timeout that a slow program, not a silent peer, may be
 * keeping from its answer: the auto clock jumps to it only after quiet_ms of
 * real quiet with every thread asleep, not the usual FAB_QUIET_NS. */
void fab_timer_add_patient(struct fab_id *id, unsigned ms, enum fab_timer_kind kind, int arg,
			   unsigned quiet_ms);
void fab_timer_cancel(struct fab_id *id);
void fab_timer_add_wake(struct fab_bell *bell, uint64_t due_ns);
void fab_timer_cancel_obj_locked(void *obj);
void fab_timer_reap_locked(int owner);
/* Events queued on chan for id are moved to id's current channel. */
void fab_move_events(struct fab_id *id, struct fab_chan *from);
void fab_drop_request(struct fab_id *conn);

/* Devices (topology.c); callers hold the lock. */
void topology_init_locked(void);
void topology_check_locked(void);
struct fab_device *topology_device_with_addr(const struct sockaddr *addr);
bool topology_addr_is_wildcard(const struct sockaddr *addr);
struct fab_device *topology_device_on_subnet(const struct sockaddr *addr);
bool topology_on_subnet_of(const struct fab_device *dev, const struct sockaddr *addr);
struct fab_device *topology_first_device(void);
/* The RoCE v2 GID entry of one of the device's addresses (the default GID's
 * for an address not its own): the one the CM uses. */
int topology_gid_index(const struct fab_device *dev, const struct sockaddr *addr);
bool topology_device_has_gid(unsigned serial, const union ibv_gid *gid);
struct fab_device *topology_af_ib_port(const union ibv_gid *dgid, union ibv_gid *sgid);
int topology_load_locked(const char *spec);
int topology_format_locked(char *buf, size_t len);
int topology_device_add_locked(const char *name, enum rdmamock_personality p);
int topology_device_add_addr_locked(const char *name, const char *addr);
int topology_device_remove_locked(const char *name);
int topology_device_set_cap_locked(const char *name, uint32_t cap, bool on);
int topology_port_set_locked(const char *name, bool up);
/* The device of that name, or NULL. */
struct fab_device *topology_device_locked(const char *name);
bool topology_port_down_locked(unsigned serial);
/* An InfiniBand port's LID; 0 for a RoCE port's (or no device). */
uint16_t topology_lid_locked(unsigned serial);
/* The port GID of an InfiniBand device (fe80:: and its GUID). */
void topology_port_gid(const struct fab_device *dev, union ibv_gid *gid);
const char *topology_device_name_locked(unsigned serial);
/* The verbs layer's hook for a port that went down or came up (fabric.h). */
extern void (*fab_port_hook)(unsigned serial, bool up);
extern void (*fab_fatal_hook)(unsigned serial);

/* Addresses (cm.c and addr.c, used by topology.c too). */
bool fab_addr_is_any(const struct sockaddr *addr);
bool fab_addr_equal(const struct sockaddr *a, const struct sockaddr *b);
bool fab_addr_is_loopback(const struct sockaddr *addr);
bool fab_addr_is_link_local(const struct sockaddr *addr);
socklen_t fab_addr_len(const struct sockaddr *addr);
uint16_t fab_addr_port(const struct sockaddr *addr); /* host order */
void fab_addr_set_port(struct sockaddr *addr, uint16_t port);
void fab_addr_to_gid(const struct sockaddr *addr, union ibv_gid *gid);

/* Ports (ports.c); callers hold the lock. Each returns 0 or a negative
 * errno, as the kernel's cma_alloc_port and cma_use_port do. */
struct fab_bind *port_find(enum rdma_port_space ps, uint16_t port);
int port_use(struct fab_id *id, uint16_t port);
int port_alloc_any(struct fab_id *id);
int port_check(struct fab_bind *b, struct fab_id *id, bool reuseaddr);
void port_release(struct fab_id *id);

/* The address vector from id to its peer, or to dgid if not NULL: RoCE
 * always carries a GRH, from the id's source GID (cm.c). */
void fab_fill_ah(const struct fab_id *id, const union ibv_gid *dgid, struct ibv_ah_attr *ah);

/* QPs and multicast groups (qp.c, multicast.c); callers hold the lock. */
bool fab_qp_exists_locked(uint32_t qpn);
void mcast_forget_qp_locked(uint32_t qpn);
/* The QPs attached to gid: a malloc()ed array (free it) and its count. */
size_t mcast_members_locked(const union ibv_gid *gid, uint32_t **qpns);
struct fab_join;
void fab_leave_all_locked(struct fab_id *id);

/* The kernel's own ENOTSUPP, which some paths hand to user space as is. */
#define ENOTSUPP_KERNEL 524

/* Tear an id down as rdma_destroy_id does, lock held (cm.c). */
void fab_destroy_unreported_locked(struct fab_id *id);

#endif
