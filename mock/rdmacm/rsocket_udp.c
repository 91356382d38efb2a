/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* SOCK_DGRAM rsockets over UD QPs.
 *
 * Upstream resolves a peer through a real UDP socket beside the QPs; the
 * mock stays on the CM: a datagram socket's id is bound and listens in
 * RDMA_PS_UDP, the service thread answers its peers' SIDR requests with
 * the QP number, and a sender finds a new destination by SIDR (the address
 * handle, QP number and Q_Key come in ESTABLISHED). A destination heard
 * from is known from the datagram itself (ibv_create_ah_from_wc), so
 * answers need no SIDR. As upstream, one UD QP per local address (device)
 * carries the socket's traffic, and every datagram starts with a header
 * naming its sender's address and port, which rrecvfrom reports.
 *
 * UDP's rules: a datagram to where nobody listens is lost, not an error;
 * one larger than the path MTU is lost too (the mock's UD, like rxe's,
 * drops it); one larger than a receive slot is EMSGSIZE. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "rsocket.h"

#define DS_SLOT RS_SNDLOWAT   /* a datagram: header and payload */
#define DS_GRH 40             /* what a UD receive gets before it */
#define DS_HDR_MAX 20
#define DS_RESOLVE_MS 2000    /* each step of a SIDR resolution */
#define DS_WR_RECV (1ull << 63)

struct ds_qp {
	struct ds_qp *next;
	struct rdma_cm_id *id; /* holds the QP, bound to the local address */
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq;
	uint8_t *rbuf;         /* rq_size slots of DS_GRH + DS_SLOT */
	struct ibv_mr *rmr, *smr;
	int armed;             /* atomic */
	uint8_t hdr[DS_HDR_MAX];
	uint8_t hdr_len;
};

struct ds_dest {
	struct ds_dest *next;
	struct sockaddr_storage addr;
	struct ds_qp *qp;
	struct ibv_ah *ah; /* NULL: nobody answered there yet */
	uint32_t qpn, qkey;
};

struct ds_msg {
	struct ds_qp *qp;
	uint32_t slot, len;
};

struct ds_state {
	int domain;
	bool bound;
	struct ds_qp *qps;
	struct ds_dest *dests;
	struct ds_dest *conn; /* rconnect's: rgetpeername's answer */
	struct ds_dest *to;   /* where rsend goes: rconnect's or rsendto's last */
	int epfd;             /* the QPs' completion channels */
	int udp_fd;           /* a kernel UDP socket: the judge of options */
	uint8_t *sbuf;        /* sq_size slots of DS_SLOT */
	uint32_t *free_slots, nfree;
	struct ds_msg *rmsg;  /* received, unread: a ring of rq_size */
	uint32_t rmsg_head, rmsg_count;
};

/* ---------------------------------------------------------------- addresses */

static socklen_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Family, port and address; not the padding a caller may leave. */
static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

	return x->sin6_port == y->sin6_port && IN6_ARE_ADDR_EQUAL(&x->sin6_addr, &y->sin6_addr);
}

/* The header: version (4 or 6), its length, the port, the address. */
static void format_hdr(struct ds_qp *qp, const struct sockaddr *local, __be16 port)
{
	qp->hdr[2] = (uint8_t)(be16toh(port) >> 8);
	qp->hdr[3] = (uint8_t)be16toh(port);
	if (local->sa_family == AF_INET) {
		qp->hdr[0] = 4;
		qp->hdr_len = 8;
		memcpy(qp->hdr + 4, &((const struct sockaddr_in *)local)->sin_addr, 4);
	} else {
		qp->hdr[0] = 6;
		qp->hdr_len = 20;
		memcpy(qp->hdr + 4, &((const struct sockaddr_in6 *)local)->sin6_addr, 16);
	}
	qp->hdr[1] = qp->hdr_len;
}

/* The sender a header names; 0 if the header is not one. */
static uint8_t parse_hdr(const uint8_t *p, uint32_t len, struct sockaddr_storage *from)
{
	uint16_t port;

	if (len < 8 || !((p[0] == 4 && p[1] == 8) || (p[0] == 6 && p[1] == 20)) || len < p[1])
		return 0;
	port = htobe16((uint16_t)(p[2] << 8 | p[3]));
	memset(from, 0, sizeof *from);
	if (p[0] == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)from;

		sin->sin_family = AF_INET;
		sin->sin_port = port;
		memcpy(&sin->sin_addr, p + 4, 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)from;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		memcpy(&sin6->sin6_addr, p + 4, 16);
	}
	return p[1];
}

/* ---------------------------------------------------------------- QPs */

static int post_recv(struct rsocket *rs, struct ds_qp *qp, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)qp->rbuf + (size_t)slot * (DS_GRH + DS_SLOT),
		.length = DS_GRH + DS_SLOT,
		.lkey = qp->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = DS_WR_RECV | slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp->id->qp, &wr, &bad) ? -1 : 0;
}

static void free_qp(struct rsocket *rs, struct ds_qp *qp)
{
	if (qp->channel && rs->ds->epfd >= 0)
		epoll_ctl(rs->ds->epfd, EPOLL_CTL_DEL, qp->channel->fd, NULL);
	if (qp->id)
		rs_destroy_id_qp(qp->id);
	if (qp->rmr)
		ibv_dereg_mr(qp->rmr);
	if (qp->smr)
		ibv_dereg_mr(qp->smr);
	free(qp->rbuf);
	if (qp->id)
		rdma_destroy_id(qp->id);
	free(qp);
}

/* The QP's id and its CQ, armed at once (as upstream's): the first datagram
 * wakes whoever sleeps on the socket. */
static int setup_qp(struct rsocket *rs, struct ds_qp *qp, const struct sockaddr *local)
{
	struct ds_state *ds = rs->ds;
	struct ibv_qp_init_attr attr = { 0 };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = qp };
	struct sockaddr_storage bind_to;
	struct rdma_cm_id *id;

	memcpy(&bind_to, local, sa_len(local));
	((struct sockaddr_in *)&bind_to)->sin_port = 0; /* same place in sockaddr_in6 */
	if (rdma_create_id(NULL, &qp->id, qp, RDMA_PS_UDP) ||
	    rdma_bind_addr(qp->id, (struct sockaddr *)&bind_to))
		return -1;
	id = qp->id;
	qp->channel = ibv_create_comp_channel(id->verbs);
	if (!qp->channel)
		return -1;
	id->recv_cq_channel = id->send_cq_channel = qp->channel;
	qp->cq = ibv_create_cq(id->verbs, (int)(rs->sq_size + rs->rq_size), qp, qp->channel, 0);
	if (!qp->cq || rs_fd_nonblock(qp->channel->fd, true))
		return -1;
	id->recv_cq = id->send_cq = qp->cq;
	attr.qp_context = qp;
	attr.send_cq = attr.recv_cq = qp->cq;
	attr.qp_type = IBV_QPT_UD;
	attr.sq_sig_all = 1;
	attr.cap.max_send_wr = rs->sq_size;
	attr.cap.max_recv_wr = rs->rq_size;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, NULL, &attr)) {
		/* It destroyed the id's CQ and channel (ucma_destroy_cqs). */
		qp->cq = NULL;
		qp->channel = NULL;
		return -1;
	}
	qp->rbuf = calloc(rs->rq_size, DS_GRH + DS_SLOT);
	if (!qp->rbuf)
		return mock_errno(ENOMEM);
	qp->rmr = ibv_reg_mr(id->pd, qp->rbuf, (size_t)rs->rq_size * (DS_GRH + DS_SLOT),
			     IBV_ACCESS_LOCAL_WRITE);
	qp->smr = ibv_reg_mr(id->pd, ds->sbuf, (size_t)rs->sq_size * DS_SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (!qp->rmr || !qp->smr)
		return -1;
	for (uint32_t i = 0; i < rs->rq_size; i++)
		if (post_recv(rs, qp, i))
			return -1;
	if (epoll_ctl(ds->epfd, EPOLL_CTL_ADD, qp->channel->fd, &ev))
		return -1;
	ibv_req_notify_cq(qp->cq, 0);
	qp->armed = 1;
	format_hdr(qp, local, rdma_get_src_port(rs->cm_id));
	return 0;
}

/* The socket's QP on the device of `local` (rs->lock held). */
static struct ds_qp *get_qp(struct rsocket *rs, struct ibv_context *verbs,
			    const struct sockaddr *local)
{
	struct ds_qp *qp;

	for (qp = rs->ds->qps; qp; qp = qp->next)
		if (qp->id->verbs == verbs)
			return qp;
	qp = calloc(1, sizeof *qp);
	if (!qp)
		return NULL;
	if (setup_qp(rs, qp, local)) {
		int err = errno;

		free_qp(rs, qp);
		errno = err;
		return NULL;
	}
	qp->next = rs->ds->qps;
	rs->ds->qps = qp;
	return qp;
}

/* ---------------------------------------------------------------- the socket */

int ds_init(struct rsocket *rs, int domain)
{
	struct ds_state *ds = calloc(1, sizeof *ds);

	if (!ds)
		return mock_errno(ENOMEM);
	rs->ds = ds;
	ds->domain = domain;
	ds->udp_fd = -1;
	ds->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ds->epfd < 0)
		return -1;
	ds->udp_fd = socket(domain, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ds->udp_fd < 0)
		return -1;
	return rdma_create_id(NULL, &rs->cm_id, rs, RDMA_PS_UDP);
}

/* rclose, before the socket is freed. Upstream's rclose waits until every
 * send slot is back, and a datagram socket never bound, connected or sent
 * on has none yet, so it blocks for ever (rdma-core 44 to 65; measured on
 * 44). The mock closes the socket and says so, once. */
void ds_close(struct rsocket *rs)
{
	static int said;

	if (rs->ds && !rs->ds->bound && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		mock_log("rclose: datagram rsocket %d was never bound, connected or sent on; "
			 "upstream rsockets blocks here for ever, the mock closes it",
			 rs->index);
}

void ds_free(struct rsocket *rs)
{
	struct ds_state *ds = rs->ds;

	if (!ds)
		return;
	while (ds->dests) {
		struct ds_dest *d = ds->dests;

		ds->dests = d->next;
		if (d->ah)
			ibv_destroy_ah(d->ah);
		free(d);
	}
	while (ds->qps) {
		struct ds_qp *qp = ds->qps;

		ds->qps = qp->next;
		free_qp(rs, qp);
	}
	if (ds->epfd >= 0)
		close(ds->epfd);
	if (ds->udp_fd >= 0)
		close(ds->udp_fd);
	free(ds->sbuf);
	free(ds->free_slots);
	free(ds->rmsg);
	free(ds);
	rs->ds = NULL;
}

/* Upstream's ds_set_qp_size: as many slots as the buffers hold. Once: a
 * bind that failed leaves them for the next (upstream's ds_init_ep runs
 * while the socket is rs_init only). */
static int init_ep(struct rsocket *rs)
{
	struct ds_state *ds = rs->ds;
	uint32_t rq = rs->rbuf_size / DS_SLOT, sq = rs->sbuf_size / DS_SLOT;

	if (ds->sbuf)
		return 0;
	rs->rq_size = rs->rq_size < rq ? rs->rq_size : rq;
	rs->sq_size = rs->sq_size < sq ? rs->sq_size : sq;
	if (!rs->rq_size)
		rs->rq_size = 1;
	if (!rs->sq_size)
		rs->sq_size = 1;
	ds->sbuf = calloc(rs->sq_size, DS_SLOT);
	ds->free_slots = calloc(rs->sq_size, sizeof *ds->free_slots);
	ds->rmsg = calloc(rs->rq_size, sizeof *ds->rmsg);
	if (!ds->sbuf || !ds->free_slots || !ds->rmsg) {
		free(ds->sbuf);
		free(ds->free_slots);
		free(ds->rmsg);
		ds->sbuf = NULL;
		ds->free_slots = NULL;
		ds->rmsg = NULL;
		return mock_errno(ENOMEM);
	}
	for (uint32_t i = 0; i < rs->sq_size; i++)
		ds->free_slots[ds->nfree++] = i;
	return 0;
}

/* Bind (to addr, or the wildcard for a send before any bind), listen for
 * SIDR, and have the service thread answer. */
static int bind_locked(struct rsocket *rs, const struct sockaddr *addr)
{
	struct sockaddr_storage any = { .ss_family = (sa_family_t)rs->ds->domain };

	if (rs->ds->bound)
		return mock_errno(EINVAL);
	if (init_ep(rs) || rdma_bind_addr(rs->cm_id, (struct sockaddr *)(addr ? addr : (void *)&any)) ||
	    rdma_listen(rs->cm_id, 128) || rs_fd_nonblock(rs->cm_id->channel->fd, true))
		return -1;
	rs->ds->bound = true;
	rs->readable = rs->writable = true;
	/* A specific address has its device: the QP is ready for the first
	 * datagram. Not on an RNIC, which has no UD QP: there, as upstream
	 * (which binds a UDP socket only), the first datagram fails. */
	if (rs->cm_id->verbs && rs->cm_id->verbs->device->transport_type != IBV_TRANSPORT_IWARP &&
	    !get_qp(rs, rs->cm_id->verbs, rdma_get_local_addr(rs->cm_id)))
		return -1;
	return 0;
}

int ds_bind(struct rsocket *rs, const struct sockaddr *addr, socklen_t len)
{
	int ret;

	if (!addr || len < sa_len(addr))
		return mock_errno(EINVAL);
	pthread_mutex_lock(&rs->lock);
	ret = bind_locked(rs, addr);
	pthread_mutex_unlock(&rs->lock);
	return ret ? ret : rs_svc_add(rs);
}

/* Bound before anything is sent: on the wildcard, at an ephemeral port. */
static int autobind(struct rsocket *rs)
{
	int ret = 0;

	pthread_mutex_lock(&rs->lock);
	if (!rs->ds->bound)
		ret = bind_locked(rs, NULL) ? -1 : 1;
	pthread_mutex_unlock(&rs->lock);
	return ret == 1 ? rs_svc_add(rs) : ret;
}

/* ---------------------------------------------------------------- SIDR */

static struct ds_dest *find_dest(struct rsocket *rs, const struct sockaddr *to)
{
	for (struct ds_dest *d = rs->ds->dests; d; d = d->next)
		if (same_addr(&d->addr, to))
			return d;
	return NULL;
}

/* The destination at addr, kept (without an AH) if nobody answered there
 * yet: later sends look again (rs->lock held). */
static struct ds_dest *keep_dest(struct rsocket *rs, const struct sockaddr *addr)
{
	struct ds_dest *d = find_dest(rs, addr);

	if (d)
		return d;
	d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	memcpy(&d->addr, addr, sa_len(addr));
	d->next = rs->ds->dests;
	rs->ds->dests = d;
	return d;
}

/* One step of a resolution on a nonblocking synchronous id: the call, then
 * its event within DS_RESOLVE_MS. */
static int step(struct rdma_cm_id *id, int ret)
{
	struct pollfd pfd = { .fd = id->channel->fd, .events = POLLIN };

	if (!ret || errno != EAGAIN)
		return ret;
	if (poll(&pfd, 1, DS_RESOLVE_MS) <= 0)
		return mock_errno(ETIMEDOUT);
	return rs_cm_complete(id);
}

/* Ask `to` by SIDR how to reach its socket (without rs->lock: the answer
 * may come from this very process's service thread). 0 and *found with
 * the AH made; 0 and *found NULL when nobody listens there; -1 when the
 * address does not resolve. */
static int resolve(struct rsocket *rs, const struct sockaddr *to, struct ds_dest **found)
{
	struct sockaddr_storage src;
	struct rdma_cm_id *id;
	struct rdma_ud_param ud;
	struct ds_dest *d;
	struct ds_qp *qp;
	int ret;

	*found = NULL;
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP))
		return -1;
	memcpy(&src, rdma_get_local_addr(rs->cm_id), sizeof src);
	((struct sockaddr_in *)&src)->sin_port = 0;
	ret = rs_fd_nonblock(id->channel->fd, true);
	if (!ret)
		ret = step(id, rdma_resolve_addr(id, rs->cm_id->verbs ? (struct sockaddr *)&src : NULL,
						 (struct sockaddr *)to, DS_RESOLVE_MS));
	if (!ret)
		ret = step(id, rdma_resolve_route(id, DS_RESOLVE_MS));
	if (!ret && step(id, rdma_connect(id, NULL))) {
		rdma_destroy_id(id);
		return 0; /* nobody answers: the datagram is lost */
	}
	if (ret) {
		int err = errno;

		rdma_destroy_id(id);
		return mock_errno(err);
	}
	ud = id->event->param.ud;
	pthread_mutex_lock(&rs->lock);
	qp = get_qp(rs, id->verbs, rdma_get_local_addr(id));
	d = qp ? keep_dest(rs, to) : NULL;
	if (d && !d->ah) {
		d->ah = ibv_create_ah(qp->id->pd, &ud.ah_attr);
		d->qp = qp;
		d->qpn = ud.qp_num;
		d->qkey = ud.qkey;
	}
	if (d && d->ah)
		*found = d;
	pthread_mutex_unlock(&rs->lock);
	rdma_destroy_id(id);
	return *found ? 0 : -1;
}

void ds_svc_request(struct rsocket *rs)
{
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_id *id;
	struct ds_qp *qp;

	if (rdma_get_request(rs->cm_id, &id))
		return;
	pthread_mutex_lock(&rs->lock);
	qp = get_qp(rs, id->verbs, rdma_get_local_addr(id));
	if (qp)
		param.qp_num = qp->id->qp->qp_num;
	pthread_mutex_unlock(&rs->lock);
	if (!qp || rdma_accept(id, &param))
		rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
}

int ds_connect(struct rsocket *rs, const struct sockaddr *addr, socklen_t len)
{
	struct ds_dest *d;

	if (!addr || len < sa_len(addr))
		return mock_errno(EINVAL);
	if (autobind(rs))
		return -1;
	pthread_mutex_lock(&rs->lock);
	d = find_dest(rs, addr);
	pthread_mutex_unlock(&rs->lock);
	if ((!d || !d->ah) && resolve(rs, addr, &d))
		return -1;
	pthread_mutex_lock(&rs->lock);
	if (!d)
		d = keep_dest(rs, addr);
	if (d)
		rs->ds->conn = rs->ds->to = d;
	pthread_mutex_unlock(&rs->lock);
	return d ? 0 : mock_errno(ENOMEM);
}

int ds_getsockname(struct rsocket *rs, struct sockaddr *addr, socklen_t *len)
{
	struct sockaddr_storage any = { .ss_family = (sa_family_t)rs->ds->domain };
	const struct sockaddr *local = rs->ds->bound ? rdma_get_local_addr(rs->cm_id)
						     : (struct sockaddr *)&any;
	socklen_t size = sa_len(local);

	memcpy(addr, local, *len < size ? *len : size);
	*len = size;
	return 0;
}

int ds_getpeername(struct rsocket *rs, struct sockaddr *addr, socklen_t *len)
{
	socklen_t size;

	if (!rs->ds->conn)
		return mock_errno(ENOTCONN);
	size = sa_len((struct sockaddr *)&rs->ds->conn->addr);
	memcpy(addr, &rs->ds->conn->addr, *len < size ? *len : size);
	*len = size;
	return 0;
}

/* Upstream's rsetsockopt hands every level but SOL_RDMA to the datagram
 * socket's UDP socket first, and fails as it does. The mock's has no
 * traffic and is never bound: an option the kernel refuses only once a
 * socket is bound (IPV6_V6ONLY) is still taken. */
int ds_setsockopt(struct rsocket *rs, int level, int optname, const void *optval,
		  socklen_t optlen)
{
	return setsockopt(rs->ds->udp_fd, level, optname, optval, optlen);
}

/* ---------------------------------------------------------------- completions */

/* A datagram from a sender not known yet: answers go back the way it came. */
static void learn(struct rsocket *rs, struct ds_qp *qp, const struct ibv_wc *wc,
		  const uint8_t *grh, const struct sockaddr_storage *from)
{
	struct ds_dest *d = find_dest(rs, (const struct sockaddr *)from);

	if (d && d->ah)
		return;
	if (!d) {
		d = calloc(1, sizeof *d);
		if (!d)
			return;
		d->addr = *from;
		d->next = rs->ds->dests;
		rs->ds->dests = d;
	}
	d->ah = ibv_create_ah_from_wc(qp->id->pd, (struct ibv_wc *)wc, (struct ibv_grh *)grh,
				      qp->id->port_num);
	d->qp = qp;
	d->qpn = wc->src_qp;
	d->qkey = RDMA_UDP_QKEY;
}

static void received(struct rsocket *rs, struct ds_qp *qp, const struct ibv_wc *wc)
{
	struct ds_state *ds = rs->ds;
	uint32_t slot = (uint32_t)wc->wr_id;
	const uint8_t *grh = qp->rbuf + (size_t)slot * (DS_GRH + DS_SLOT);
	struct sockaddr_storage from;

	if (wc->status != IBV_WC_SUCCESS)
		return; /* flushed: the QP is going */
	if (wc->byte_len > DS_GRH && ds->rmsg_count < rs->rq_size &&
	    parse_hdr(grh + DS_GRH, wc->byte_len - DS_GRH, &from)) {
		ds->rmsg[(ds->rmsg_head + ds->rmsg_count++) % rs->rq_size] =
			(struct ds_msg){ .qp = qp, .slot = slot, .len = wc->byte_len - DS_GRH };
		learn(rs, qp, wc, grh, &from);
		return;
	}
	post_recv(rs, qp, slot); /* dropped: not ours, or no room */
}

static void ds_poll(struct rsocket *rs)
{
	struct ibv_wc wc[16];
	int n;

	for (struct ds_qp *qp = rs->ds->qps; qp; qp = qp->next)
		while ((n = ibv_poll_cq(qp->cq, 16, wc)) > 0)
			for (int i = 0; i < n; i++) {
				if (wc[i].wr_id & DS_WR_RECV)
					received(rs, qp, &wc[i]);
				else
					rs->ds->free_slots[rs->ds->nfree++] = (uint32_t)wc[i].wr_id;
			}
}

bool ds_arm(struct rsocket *rs)
{
	bool was_armed = true;

	for (struct ds_qp *qp = rs->ds->qps; qp; qp = qp->next)
		if (!__atomic_load_n(&qp->armed, __ATOMIC_ACQUIRE)) {
			ibv_req_notify_cq(qp->cq, 0);
			__atomic_store_n(&qp->armed, 1, __ATOMIC_RELEASE);
			was_armed = false;
		}
	return was_armed;
}

void ds_take_cq_events(struct rsocket *rs)
{
	struct ibv_cq *cq;
	void *context;

	pthread_mutex_lock(&rs->wait_lock);
	for (struct ds_qp *qp = rs->ds->qps; qp; qp = qp->next)
		if (__atomic_load_n(&qp->armed, __ATOMIC_ACQUIRE) &&
		    !ibv_get_cq_event(qp->channel, &cq, &context)) {
			ibv_ack_cq_events(cq, 1);
			__atomic_store_n(&qp->armed, 0, __ATOMIC_RELEASE);
		}
	pthread_mutex_unlock(&rs->wait_lock);
}

int ds_wait_fd(struct rsocket *rs)
{
	return rs->ds->epfd;
}

static int ds_wait(struct rsocket *rs, bool nonblock, bool (*ready)(struct rsocket *))
{
	for (;;) {
		ds_poll(rs);
		if (ready(rs))
			return 0;
		if (nonblock)
			return mock_errno(EWOULDBLOCK);
		if (!ds_arm(rs))
			continue;
		pthread_mutex_unlock(&rs->lock);
		pthread_mutex_lock(&rs->wait_lock);
		{
			struct pollfd pfd = { .fd = rs->ds->epfd, .events = POLLIN };

			poll(&pfd, 1, RS_WAKE_MS);
		}
		pthread_mutex_unlock(&rs->wait_lock);
		ds_take_cq_events(rs);
		pthread_mutex_lock(&rs->lock);
	}
}

static bool have_msg(struct rsocket *rs)
{
	return rs->ds->rmsg_count != 0;
}

static bool can_send(struct rsocket *rs)
{
	return rs->ds->nfree != 0;
}

short ds_poll_events(struct rsocket *rs, short events)
{
	short revents = 0;

	pthread_mutex_lock(&rs->lock);
	if (rs->ds->bound) {
		ds_poll(rs);
		if ((events & POLLIN) && have_msg(rs))
			revents |= POLLIN;
		if ((events & POLLOUT) && can_send(rs))
			revents |= POLLOUT;
	}
	pthread_mutex_unlock(&rs->lock);
	return revents;
}

/* ---------------------------------------------------------------- send, receive */

static ssize_t send_locked(struct rsocket *rs, struct ds_dest *d, const struct iovec *iov,
			   int iovcnt, size_t len, int flags)
{
	struct ds_state *ds = rs->ds;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	uint8_t *msg;
	uint32_t slot;
	int err;

	if (len > (size_t)(DS_SLOT - d->qp->hdr_len))
		return mock_errno(EMSGSIZE);
	if (!can_send(rs) && ds_wait(rs, rs_nonblocking(rs, flags), can_send))
		return -1;
	slot = ds->free_slots[--ds->nfree];
	msg = ds->sbuf + (size_t)slot * DS_SLOT;
	memcpy(msg, d->qp->hdr, d->qp->hdr_len);
	for (int i = 0, off = d->qp->hdr_len; i < iovcnt; off += (int)iov[i++].iov_len)
		memcpy(msg + off, iov[i].iov_base, iov[i].iov_len);
	sge = (struct ibv_sge){ .addr = (uintptr_t)msg, .length = d->qp->hdr_len + (uint32_t)len,
				.lkey = d->qp->smr->lkey };
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = d->ah;
	wr.wr.ud.remote_qpn = d->qpn;
	wr.wr.ud.remote_qkey = d->qkey;
	err = ibv_post_send(d->qp->id->qp, &wr, &bad);
	if (err) {
		ds->free_slots[ds->nfree++] = slot;
		return mock_errno(err);
	}
	return (ssize_t)len;
}

ssize_t ds_sendto(struct rsocket *rs, const struct iovec *iov, int iovcnt, int flags,
		  const struct sockaddr *dest, socklen_t destlen)
{
	struct ds_dest *d;
	size_t len = 0;
	ssize_t ret;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (dest && destlen < sa_len(dest))
		return mock_errno(EINVAL);
	if (autobind(rs))
		return -1;
	pthread_mutex_lock(&rs->lock);
	if (!rs->writable) {
		pthread_mutex_unlock(&rs->lock);
		return mock_errno(EPIPE);
	}
	/* An address given becomes where rsend sends too: upstream's
	 * rsendto sets rs->conn_dest to it (ds_get_dest). */
	if (dest && !(rs->ds->to = keep_dest(rs, dest))) {
		pthread_mutex_unlock(&rs->lock);
		return mock_errno(ENOMEM);
	}
	d = rs->ds->to;
	if (!d) {
		pthread_mutex_unlock(&rs->lock);
		return mock_errno(EDESTADDRREQ);
	}
	if (!d->ah) {
		struct sockaddr_storage to = { 0 };

		memcpy(&to, &d->addr, sa_len((struct sockaddr *)&d->addr));
		pthread_mutex_unlock(&rs->lock);
		if (resolve(rs, (struct sockaddr *)&to, &d))
			return -1;
		if (!d)
			return (ssize_t)len; /* lost, as UDP's would be */
		pthread_mutex_lock(&rs->lock);
	}
	ret = send_locked(rs, d, iov, iovcnt, len, flags);
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

ssize_t ds_recvfrom(struct rsocket *rs, void *buf, size_t len, int flags,
		    struct sockaddr *src, socklen_t *srclen)
{
	struct ds_state *ds = rs->ds;
	struct sockaddr_storage from;
	struct ds_msg *m;
	const uint8_t *data;
	uint8_t hdr_len;

	pthread_mutex_lock(&rs->lock);
	/* Upstream: EINVAL until the socket is bound (or has sent). */
	if (!rs->readable) {
		pthread_mutex_unlock(&rs->lock);
		return mock_errno(EINVAL);
	}
	if (!have_msg(rs) && ds_wait(rs, rs_nonblocking(rs, flags), have_msg)) {
		pthread_mutex_unlock(&rs->lock);
		return -1;
	}
	m = &ds->rmsg[ds->rmsg_head];
	data = m->qp->rbuf + (size_t)m->slot * (DS_GRH + DS_SLOT) + DS_GRH;
	hdr_len = parse_hdr(data, m->len, &from);
	if (len > m->len - hdr_len)
		len = m->len - hdr_len;
	memcpy(buf, data + hdr_len, len);
	if (src && srclen) {
		socklen_t size = sa_len((struct sockaddr *)&from);

		if (*srclen > size)
			*srclen = size;
		memcpy(src, &from, *srclen);
	}
	if (!(flags & MSG_PEEK)) {
		post_recv(rs, m->qp, m->slot);
		ds->rmsg_head = (ds->rmsg_head + 1) % rs->rq_size;
		ds->rmsg_count--;
	}
	pthread_mutex_unlock(&rs->lock);
	return (ssize_t)len;
}
