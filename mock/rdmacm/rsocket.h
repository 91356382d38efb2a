/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to the drop-in librdmacm: rsockets, the socket API over RDMA
 * (<rdma/rsocket.h>, man rsocket(7)). Built the way upstream's
 * librdmacm/rsocket.c is, on librdmacm's public CM calls and on libibverbs,
 * so that it runs on whatever fabric is underneath and never assumes that
 * both ends live in one process. The wire protocol is the mock's own (both
 * ends are the mock); the calls behave as upstream's do.
 *
 *   rsocket.c         descriptors, bind/listen/accept/connect, shutdown, close
 *   rsocket_stream.c  SOCK_STREAM data: credits, send, receive
 *   rsocket_iomap.c   riomap, riounmap, riowrite
 *   rsocket_udp.c     SOCK_DGRAM over UD QPs, peers found by SIDR
 *   rsocket_opt.c     rsetsockopt, rgetsockopt, rfcntl
 *   rsocket_poll.c    rpoll, rselect, repoll_*
 *   rsocket_svc.c     the service thread: accepts, disconnects, SIDR, keepalive
 *
 * A descriptor is the fd of the socket's own CM event channel, as upstream's
 * is (or its UDP socket's): a real fd, so rsockets and other fds never share
 * a number, and rpoll can tell them apart. */
#ifndef RDMAMOCK_RSOCKET_H
#define RDMAMOCK_RSOCKET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#include "control/mock.h"

/* rdma-core v65 (RDMACM_1.5); older headers lack them. */
int repoll_create(int flags);
int repoll_ctl(int epfd, int op, int fd, struct epoll_event *event);
int repoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);

/* Upstream's defaults (no /etc/rdma/rsocket files on the mock) and limits. */
#define RS_DEF_SQSIZE 384
#define RS_DEF_RQSIZE 384
#define RS_DEF_INLINE 64
#define RS_DEF_BUF (1 << 17)
#define RS_QP_MIN 16
#define RS_QP_MAX 0xfffe
#define RS_SNDLOWAT 2048
#define RS_CONN_RETRIES 6
/* How long a sleeping call sleeps before it looks at its socket again, in
 * case a change came without an event (upstream's wake_up_interval). */
#define RS_WAKE_MS 500

enum rs_phase {
	RS_INIT,
	RS_BOUND,
	RS_LISTENING,
	RS_RESOLVING_ADDR, /* the opening phases: a connect under way */
	RS_RESOLVING_ROUTE,
	RS_CONNECTING,
	RS_ACCEPTING,      /* passive side, until ESTABLISHED (service thread) */
	RS_CONNECTED,
	RS_CONNECT_ERROR,
	RS_DISCONNECTED,
	RS_ERROR,
};

static inline bool rs_opening(enum rs_phase p)
{
	return p >= RS_RESOLVING_ADDR && p <= RS_ACCEPTING;
}

/* A receive slot holding data not read yet. */
struct rs_rmsg {
	uint32_t slot;
	uint32_t off;
	uint32_t len;
};

/* A buffer this side mapped (riomap), and a mapping the peer published. */
struct rs_iomap_local {
	struct ibv_mr *mr;
	uint64_t offset;
	int index;     /* in the peer's table; -1 for a local-only mapping */
	bool published;
};
struct rs_iomap_remote {
	uint64_t offset;
	uint64_t addr;
	uint32_t len;
	uint32_t rkey;
};

/* The kinds of message on a stream connection (rsocket_stream.c). */
enum rs_op {
	RS_OP_DATA,
	RS_OP_CREDIT,
	RS_OP_IOMAP,
	RS_OP_SHUTDOWN,
	RS_OP_DISCONNECT,
	RS_OP_WRITE = 7, /* riowrite and keepalives: RDMA WRITEs, not messages */
};

struct ds_state; /* SOCK_DGRAM's, private to rsocket_udp.c */

struct rsocket {
	int type;  /* SOCK_STREAM or SOCK_DGRAM */
	int index; /* the descriptor */
	/* Everything below; a sleeping call lets go of it. wait_lock lets one
	 * thread at a time sleep on the completion channel (the others find
	 * its event taken and look again). */
	pthread_mutex_t lock;
	pthread_mutex_t wait_lock;
	int cq_armed;  /* atomic: the CQ will raise an event */

	enum rs_phase phase;
	bool readable, writable;
	int err;       /* SO_ERROR */
	int fs_flags;  /* F_GETFL: O_NONBLOCK */
	int fd_flags;  /* F_GETFD */

	/* Options (rsocket_opt.c): one bit per optname, as set. */
	uint64_t so_opts, tcp_opts, ipv6_opts;
	int ip_tos;
	bool keepalive;
	unsigned keepalive_time; /* seconds */
	uint64_t keepalive_due;  /* CLOCK_MONOTONIC ms; service thread */
	void *route;             /* RDMA_ROUTE: struct ibv_path_data, for connect */
	size_t route_len;

	/* Sizes, settable until the socket opens. */
	uint32_t sq_size, rq_size, sq_inline;
	uint32_t sbuf_size, rbuf_size;
	uint32_t iomap_size; /* RDMA_IOMAPSIZE: mappings the peer may publish to us */

	struct rdma_cm_id *cm_id;
	struct sockaddr_storage dst; /* rconnect's address */
	int retries;                 /* of the resolution under way */
	int accept_fd[2]; /* listener: connected sockets, pointers in a socketpair */
	struct rsocket *listener; /* accepting: whose queue it joins */
	bool in_svc;      /* rsocket_svc.c: served by the service thread */

	/* SOCK_STREAM, once the endpoint exists (rsocket_stream.c). */
	struct ibv_cq *cq;
	struct ibv_comp_channel *cq_channel;
	uint32_t sqe_avail;
	uint8_t *rbuf;        /* rq_size receive slots of slot_size */
	struct ibv_mr *rmr;
	uint32_t slot_size;
	struct rs_rmsg *rmsg; /* received data in order, a ring of rq_size */
	uint32_t rmsg_head, rmsg_count;
	uint8_t *sbuf;        /* a ring of sbuf_size: data in flight */
	struct ibv_mr *smr;
	uint32_t shead, sfree;
	int peer_credits;     /* receive slots the peer has posted for us */
	uint32_t owed;        /* slots we reposted and have not told of */
	uint32_t peer_slot;   /* the most one message may carry */
	uint32_t peer_iomaps; /* mappings we may publish to the peer */

	struct rs_iomap_local *iomaps;   /* ours, peer_iomaps + local ones */
	int niomaps;
	bool iomap_pending;
	struct rs_iomap_remote *remote;  /* the peer's, iomap_size entries */

	struct ds_state *ds;
};

/* ------------------------------------------------------------ rsocket.c */

/* The rsocket behind a descriptor, or NULL (EBADF for the caller). */
struct rsocket *rs_lookup(int fd);
/* A new socket inheriting a listener's settings (NULL: the defaults). */
struct rsocket *rs_alloc(const struct rsocket *from, int type);
int rs_insert(struct rsocket *rs, int fd);
void rs_free(struct rsocket *rs);
/* Drive a connect under way as far as it goes: each step waits for its
 * event unless the CM channel is O_NONBLOCK (upstream's rs_do_connect). 0
 * once connected; -1 with EINPROGRESS while it goes on; -1 with errno (and
 * SO_ERROR) when it failed. rs_do_connect holds rs->lock;
 * rs_progress_connect takes it, and hands a new connection to the service
 * thread. rs_continue_connect does the same only for a connect under way,
 * reading the phase under the lock (the service thread writes it), and is 0
 * for any other socket. */
int rs_do_connect(struct rsocket *rs);
int rs_progress_connect(struct rsocket *rs);
int rs_continue_connect(struct rsocket *rs);
/* Whether a stream socket listens, its phase read under its lock (the
 * service thread and the program's threads both write it). */
bool rs_listening(struct rsocket *rs);
/* The service thread's work for stream sockets: a request at a listener;
 * an event on an accepting or connected socket's id. */
void rs_svc_listen_event(struct rsocket *listener);
void rs_svc_conn_event(struct rsocket *rs);
/* ucma_complete: ack the id's event, read the next into id->event, and map
 * a failed one to errno (REJECTED: ECONNREFUSED). Nonblocking channel: -1
 * with EAGAIN. */
int rs_cm_complete(struct rdma_cm_id *id);
/* O_NONBLOCK on or off for an fd. */
int rs_fd_nonblock(int fd, bool on);
/* What an id holds for its socket: its QP with the CQ and channel (by
 * rdma_destroy_qp), or, when creating the QP failed, the CQ and channel
 * alone, as upstream's rs_create_cq undoes them. */
void rs_destroy_id_qp(struct rdma_cm_id *id);
uint64_t rs_now_ms(void);

/* ------------------------------------------------------------ rsocket_stream.c */

/* The CQ, QP, buffers and posted receives of a stream socket. */
int rs_create_ep(struct rsocket *rs);
void rs_destroy_ep(struct rsocket *rs);
/* The QP to ERR: posted receives flush, and a sleeper on the CQ wakes. */
void rs_flush(struct rsocket *rs);
/* What goes in the REQ or REP, and what the peer's said. */
#define RS_CONN_DATA_LEN 16
void rs_format_conn_data(const struct rsocket *rs, uint8_t out[RS_CONN_DATA_LEN]);
int rs_save_conn_data(struct rsocket *rs, const void *data, size_t len);
/* Take in every completion (rs->lock held), and give credits back. */
void rs_poll_cq(struct rsocket *rs);
/* Sleep until `ready` or an error (rs->lock held, let go while asleep);
 * -1 with EWOULDBLOCK when nonblock. */
int rs_wait(struct rsocket *rs, bool nonblock, bool (*ready)(struct rsocket *));
/* Arm the CQ for rpoll: false if something came in meanwhile. */
bool rs_arm(struct rsocket *rs);
/* Read the event rpoll saw on the channel (rs->lock not held). */
void rs_take_cq_event(struct rsocket *rs);
bool rs_can_send(struct rsocket *rs);
/* Wait (unless flags or the socket say nonblocking) until a message may
 * be sent: 0, or -1 with errno (ECONNRESET once the peer went away). */
int rs_wait_send(struct rsocket *rs, int flags);
/* How much one work request may carry: at most left and limit, and what
 * the send ring holds unless it goes inline. */
uint32_t rs_chunk(const struct rsocket *rs, size_t left, uint32_t limit);
/* Post one message of kind op (RS_OP_*) or an RDMA WRITE; the caller made
 * sure of room (rs_can_send). */
int rs_post_msg(struct rsocket *rs, int op, const void *data, uint32_t len);
int rs_post_write(struct rsocket *rs, const void *data, uint32_t len, uint64_t raddr,
		  uint32_t rkey);
bool rs_have_data(struct rsocket *rs);
/* One control message: SHUTDOWN (our side writes no more) or DISCONNECT. */
enum rs_ctrl { RS_CTRL_SHUTDOWN, RS_CTRL_DISCONNECT };
int rs_send_ctrl(struct rsocket *rs, enum rs_ctrl ctrl);
bool rs_sends_done(struct rsocket *rs);
/* A 0-byte RDMA WRITE: a dead peer makes it fail (SO_KEEPALIVE). */
void rs_send_keepalive(struct rsocket *rs);
/* Send `len` bytes gathered from iov: the bytes sent, or -1 with errno. */
ssize_t rs_sendv(struct rsocket *rs, const struct iovec *iov, int iovcnt, int flags);
ssize_t rs_recv(struct rsocket *rs, void *buf, size_t len, int flags);
/* Whether the socket should not block: O_NONBLOCK or MSG_DONTWAIT. */
static inline bool rs_nonblocking(const struct rsocket *rs, int flags)
{
	return (rs->fs_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* ------------------------------------------------------------ rsocket_iomap.c */

/* Publish pending mappings before the data that follows them. */
int rs_send_iomaps(struct rsocket *rs, int flags);
/* The peer published a mapping (an IOMAP message). */
void rs_save_iomap(struct rsocket *rs, const void *msg, uint32_t len);
#define RS_IOMAP_MSG_LEN 28
void rs_free_iomaps(struct rsocket *rs);

/* ------------------------------------------------------------ rsocket_udp.c */

int ds_init(struct rsocket *rs, int domain);
void ds_free(struct rsocket *rs);
void ds_close(struct rsocket *rs);
int ds_bind(struct rsocket *rs, const struct sockaddr *addr, socklen_t len);
int ds_connect(struct rsocket *rs, const struct sockaddr *addr, socklen_t len);
ssize_t ds_sendto(struct rsocket *rs, const struct iovec *iov, int iovcnt, int flags,
		  const struct sockaddr *dest, socklen_t destlen);
ssize_t ds_recvfrom(struct rsocket *rs, void *buf, size_t len, int flags,
		    struct sockaddr *src, socklen_t *srclen);
int ds_getsockname(struct rsocket *rs, struct sockaddr *addr, socklen_t *len);
int ds_getpeername(struct rsocket *rs, struct sockaddr *addr, socklen_t *len);
/* An option at a level other than SOL_RDMA, as the kernel's UDP socket
 * takes it: 0, or -1 with its errno (rsocket_opt.c does the rest). */
int ds_setsockopt(struct rsocket *rs, int level, int optname, const void *optval,
		  socklen_t optlen);
/* rpoll: the events now (taking in completions), arming, what to sleep on. */
short ds_poll_events(struct rsocket *rs, short events);
bool ds_arm(struct rsocket *rs);
int ds_wait_fd(struct rsocket *rs);
void ds_take_cq_events(struct rsocket *rs);
/* The service thread: a SIDR request reached the socket's listening id. */
void ds_svc_request(struct rsocket *rs);

/* ------------------------------------------------------------ rsocket_svc.c */

/* Serve the socket's CM channel from the service thread (a listener's
 * requests, a connection's disconnect, a datagram socket's SIDR) and its
 * keepalive; or stop, after which the thread never touches it again. Never
 * called with rs->lock held. */
int rs_svc_add(struct rsocket *rs);
void rs_svc_remove(struct rsocket *rs);
/* The keepalive time changed: reschedule. */
void rs_svc_kick(void);

#endif
