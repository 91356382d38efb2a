/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rsockets: descriptors, and a stream socket's life: rsocket, rbind,
 * rlisten, raccept, rconnect, rshutdown, rclose and the names. The calls
 * check and fail as upstream's librdmacm/rsocket.c does; a connection is
 * made with librdmacm's own calls on a synchronous id (rdma_create_id
 * without a channel), whose channel fd is the descriptor. */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cm.h"
#include "rsocket.h"

#define LIB "rdmacm"

/* ---------------------------------------------------------------- descriptors */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rsocket **table;
static int table_len;

struct rsocket *rs_lookup(int fd)
{
	struct rsocket *rs = NULL;

	pthread_mutex_lock(&table_lock);
	if (fd >= 0 && fd < table_len)
		rs = table[fd];
	pthread_mutex_unlock(&table_lock);
	return rs;
}

int rs_insert(struct rsocket *rs, int fd)
{
	pthread_mutex_lock(&table_lock);
	if (fd >= table_len) {
		int len = fd + 64;
		struct rsocket **grown = realloc(table, (size_t)len * sizeof *grown);

		if (!grown) {
			pthread_mutex_unlock(&table_lock);
			return mock_errno(ENOMEM);
		}
		memset(grown + table_len, 0, (size_t)(len - table_len) * sizeof *grown);
		table = grown;
		table_len = len;
	}
	table[fd] = rs;
	rs->index = fd;
	pthread_mutex_unlock(&table_lock);
	return fd;
}

static void rs_remove(struct rsocket *rs)
{
	pthread_mutex_lock(&table_lock);
	if (rs->index >= 0 && rs->index < table_len && table[rs->index] == rs)
		table[rs->index] = NULL;
	pthread_mutex_unlock(&table_lock);
	rs->index = -1;
}

struct rsocket *rs_alloc(const struct rsocket *from, int type)
{
	struct rsocket *rs = calloc(1, sizeof *rs);

	if (!rs)
		return NULL;
	rs->type = type;
	rs->index = -1;
	rs->accept_fd[0] = rs->accept_fd[1] = -1;
	pthread_mutex_init(&rs->lock, NULL);
	pthread_mutex_init(&rs->wait_lock, NULL);
	if (from) {
		rs->sq_size = from->sq_size;
		rs->rq_size = from->rq_size;
		rs->sq_inline = from->sq_inline;
		rs->sbuf_size = from->sbuf_size;
		rs->rbuf_size = from->rbuf_size;
		rs->iomap_size = from->iomap_size;
		rs->fs_flags = from->fs_flags;
		rs->fd_flags = from->fd_flags;
	} else {
		rs->sq_size = RS_DEF_SQSIZE;
		rs->rq_size = RS_DEF_RQSIZE;
		rs->sq_inline = RS_DEF_INLINE;
		rs->sbuf_size = RS_DEF_BUF;
		rs->rbuf_size = RS_DEF_BUF;
	}
	return rs;
}

/* Sockets connected but not accepted yet go with their listener. */
static void drain_accept_queue(struct rsocket *rs)
{
	struct rsocket *child;

	if (rs->accept_fd[0] < 0)
		return;
	rs_fd_nonblock(rs->accept_fd[0], true);
	while (read(rs->accept_fd[0], &child, sizeof child) == sizeof child) {
		rs_svc_remove(child);
		rs_free(child);
	}
	close(rs->accept_fd[0]);
	close(rs->accept_fd[1]);
	rs->accept_fd[0] = rs->accept_fd[1] = -1;
}

void rs_free(struct rsocket *rs)
{
	if (rs->type == SOCK_DGRAM) {
		ds_free(rs);
	} else {
		drain_accept_queue(rs);
		rs_free_iomaps(rs);
		if (rs->cm_id)
			rs_destroy_ep(rs);
	}
	rs_remove(rs);
	if (rs->cm_id)
		rdma_destroy_id(rs->cm_id);
	free(rs->route);
	pthread_mutex_destroy(&rs->wait_lock);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}

/* ---------------------------------------------------------------- helpers */

int rs_fd_nonblock(int fd, bool on)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -1;
	flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, flags) < 0 ? -1 : 0;
}

void rs_destroy_id_qp(struct rdma_cm_id *id)
{
	if (id->qp) {
		rdma_destroy_qp(id);
		return;
	}
	if (id->send_cq && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

/* The fabric's clock, which rpoll's timeouts and the keepalives run on. */
uint64_t rs_now_ms(void)
{
	return fab_now_ns() / 1000000u;
}

int rs_cm_complete(struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev;

	if (id->event) {
		cm_ack(id->event);
		id->event = NULL;
	}
	if (rdma_get_cm_event(id->channel, &ev))
		return -1;
	id->event = ev;
	if (!ev->status)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return mock_errno(ECONNREFUSED);
	return mock_errno(ev->status < 0 ? -ev->status : ev->status);
}

static socklen_t addr_len(const struct sockaddr *addr)
{
	return addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
					   : sizeof(struct sockaddr_in6);
}

/* getsockname(2)'s rule: copy what fits, say how long the address is. */
static void copy_addr(struct sockaddr *dst, socklen_t *len, const struct sockaddr *src)
{
	socklen_t size = addr_len(src);

	memcpy(dst, src, *len < size ? *len : size);
	*len = size;
}

/* ---------------------------------------------------------------- rsocket */

MOCK_EXPORT int rsocket(int domain, int type, int protocol)
{
	int kind = type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct rsocket *rs;
	int ret;

	FAULT_MINUS1(LIB, "rsocket");
	if ((domain != AF_INET && domain != AF_INET6 && domain != AF_IB) ||
	    (kind != SOCK_STREAM && kind != SOCK_DGRAM) ||
	    (kind == SOCK_STREAM && protocol && protocol != IPPROTO_TCP) ||
	    (kind == SOCK_DGRAM && protocol && protocol != IPPROTO_UDP))
		return mock_errno(ENOTSUP);
	/* rdma-core before 63 took no flags in the type (a replayed profile
	 * records it: RFCNTL_FD). */
	if (kind != type && fab_replay_records("RFCNTL_FD"))
		return mock_errno(ENOTSUP);
	rs = rs_alloc(NULL, kind);
	if (!rs)
		return mock_errno(ENOMEM);
	rs->fd_flags = type & SOCK_CLOEXEC ? FD_CLOEXEC : 0;
	rs->fs_flags = type & SOCK_NONBLOCK ? O_NONBLOCK : 0;
	if (kind == SOCK_STREAM) {
		ret = rdma_create_id(NULL, &rs->cm_id, rs, RDMA_PS_TCP);
		if (!ret) {
			rs->cm_id->route.addr.src_addr.sa_family = (sa_family_t)domain;
			if (rs->fs_flags & O_NONBLOCK)
				ret = rs_fd_nonblock(rs->cm_id->channel->fd, true);
		}
	} else {
		ret = ds_init(rs, domain);
	}
	if (!ret)
		ret = rs_insert(rs, rs->cm_id->channel->fd);
	if (ret < 0) {
		int err = errno;

		rs_free(rs);
		return mock_errno(err);
	}
	return rs->index;
}

MOCK_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsocket *rs;
	int ret;

	FAULT_MINUS1(LIB, "rbind");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (rs->type == SOCK_DGRAM)
		return ds_bind(rs, addr, addrlen);
	pthread_mutex_lock(&rs->lock);
	ret = rdma_bind_addr(rs->cm_id, (struct sockaddr *)addr);
	if (!ret)
		rs->phase = RS_BOUND;
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

/* ---------------------------------------------------------------- listen, accept */

MOCK_EXPORT int rlisten(int socket, int backlog)
{
	struct rsocket *rs;

	FAULT_MINUS1(LIB, "rlisten");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (rs->type == SOCK_DGRAM)
		return mock_errno(EOPNOTSUPP);
	if (rs->phase == RS_LISTENING)
		return 0;
	if (rdma_listen(rs->cm_id, backlog))
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rs->accept_fd))
		return -1;
	if (((rs->fs_flags & O_NONBLOCK) && rs_fd_nonblock(rs->accept_fd[0], true)) ||
	    rs_fd_nonblock(rs->cm_id->channel->fd, true))
		return -1;
	rs->phase = RS_LISTENING;
	if (rs_svc_add(rs)) {
		rs->phase = RS_BOUND;
		return -1;
	}
	return 0;
}

/* The service thread: a connection request reached the listener. The new
 * socket answers with its endpoint and waits, served by the thread, for
 * ESTABLISHED; then it joins the listener's accept queue. */
void rs_svc_listen_event(struct rsocket *listener)
{
	uint8_t cdata[RS_CONN_DATA_LEN];
	struct rdma_conn_param param;
	struct rdma_cm_id *id;
	struct rsocket *rs;

	if (rdma_get_request(listener->cm_id, &id))
		return;
	rs = rs_alloc(listener, SOCK_STREAM);
	if (!rs) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	rs->cm_id = id;
	rs->phase = RS_ACCEPTING;
	rs->listener = listener;
	param = id->event->param.conn;
	if (rs_insert(rs, id->channel->fd) < 0 ||
	    rs_save_conn_data(rs, param.private_data, param.private_data_len) ||
	    rs_create_ep(rs) || rs_fd_nonblock(id->channel->fd, true))
		goto reject;
	rs_format_conn_data(rs, cdata);
	param.private_data = cdata;
	param.private_data_len = sizeof cdata;
	if (!rdma_accept(id, &param)) {
		/* ESTABLISHED came while rdma_accept looked for it. */
		rs->phase = RS_CONNECTED;
		rs->readable = rs->writable = true;
		rs->listener = NULL;
	} else if (errno != EAGAIN) {
		goto reject;
	}
	if (rs_svc_add(rs))
		goto reject;
	if (rs->phase == RS_CONNECTED &&
	    write(listener->accept_fd[1], &rs, sizeof rs) != sizeof rs) {
		rs_svc_remove(rs);
		goto reject;
	}
	return;
reject:
	rdma_reject(id, NULL, 0);
	rs_free(rs);
}

/* The service thread: an event on a connection's id. */
void rs_svc_conn_event(struct rsocket *rs)
{
	struct rsocket *listener = NULL;
	bool failed = false;
	int ret;

	pthread_mutex_lock(&rs->lock);
	ret = rs_cm_complete(rs->cm_id);
	if (ret && errno == EAGAIN) {
		pthread_mutex_unlock(&rs->lock);
		return;
	}
	if (rs->phase == RS_ACCEPTING) {
		if (!ret && rs->cm_id->event->event == RDMA_CM_EVENT_ESTABLISHED) {
			rs->phase = RS_CONNECTED;
			rs->readable = rs->writable = true;
			listener = rs->listener;
		} else {
			failed = true;
		}
	} else if (!ret && rs->cm_id->event->event == RDMA_CM_EVENT_DISCONNECTED &&
		   rs->phase == RS_CONNECTED) {
		rs->phase = RS_DISCONNECTED;
		rs->readable = rs->writable = false;
		rs_flush(rs);
	}
	pthread_mutex_unlock(&rs->lock);
	if (listener) {
		rs->listener = NULL;
		if (write(listener->accept_fd[1], &rs, sizeof rs) != sizeof rs)
			failed = true;
	}
	if (failed) {
		rs_svc_remove(rs);
		rs_free(rs);
	}
}

MOCK_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsocket *rs, *child;
	ssize_t n;

	FAULT_MINUS1(LIB, "raccept");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (rs->phase != RS_LISTENING)
		return mock_errno(EBADF);
	n = read(rs->accept_fd[0], &child, sizeof child);
	if (n != sizeof child)
		return n < 0 ? -1 : mock_errno(ECONNABORTED);
	if (addr && addrlen)
		copy_addr(addr, addrlen, rdma_get_peer_addr(child->cm_id));
	return child->index;
}

/* ---------------------------------------------------------------- connect */

static int resolve_addr(struct rsocket *rs)
{
	int timeout = 1000 << rs->retries++;

	rs->phase = RS_RESOLVING_ADDR;
	return rdma_resolve_addr(rs->cm_id, NULL, (struct sockaddr *)&rs->dst, timeout);
}

/* The route is resolved, or given with RDMA_ROUTE. */
static int resolve_route(struct rsocket *rs)
{
	int timeout = 1000 << rs->retries++;
	int ret;

	rs->phase = RS_RESOLVING_ROUTE;
	if (!rs->route)
		return rdma_resolve_route(rs->cm_id, timeout);
	ret = rdma_set_option(rs->cm_id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, rs->route,
			      rs->route_len);
	free(rs->route);
	rs->route = NULL;
	return ret ? ret : rs_cm_complete(rs->cm_id);
}

static int connect_qp(struct rsocket *rs)
{
	uint8_t cdata[RS_CONN_DATA_LEN];
	struct rdma_conn_param param = {
		.private_data = cdata,
		.private_data_len = sizeof cdata,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	rs->phase = RS_CONNECTING;
	if (rs_create_ep(rs))
		return -1;
	rs_format_conn_data(rs, cdata);
	return rdma_connect(rs->cm_id, &param);
}

static int connected(struct rsocket *rs)
{
	struct rdma_conn_param *rep = &rs->cm_id->event->param.conn;

	if (rs_save_conn_data(rs, rep->private_data, rep->private_data_len))
		return -1;
	rs->phase = RS_CONNECTED;
	rs->readable = rs->writable = true;
	return 0;
}

/* One step per event; the channel's O_NONBLOCK decides whether a step
 * waits for its event, as upstream's ucma_complete does. A phase with no
 * step to take sets *settled and answers at once. */
static int do_connect(struct rsocket *rs, bool *settled)
{
	int ret;

	switch (rs->phase) {
	case RS_INIT:
	case RS_BOUND:
		rs->retries = 0;
		ret = resolve_addr(rs);
		break;
	case RS_RESOLVING_ADDR:
		ret = rs_cm_complete(rs->cm_id);
		if (ret && errno == ETIMEDOUT && rs->retries <= RS_CONN_RETRIES)
			ret = resolve_addr(rs);
		break;
	case RS_RESOLVING_ROUTE:
		ret = rs_cm_complete(rs->cm_id);
		if (ret && errno == ETIMEDOUT && rs->retries <= RS_CONN_RETRIES)
			ret = resolve_route(rs);
		break;
	case RS_CONNECTING:
		ret = rs_cm_complete(rs->cm_id);
		break;
	case RS_ACCEPTING:
		return mock_errno(EINPROGRESS);
	case RS_CONNECTED:
		*settled = true;
		return 0;
	case RS_CONNECT_ERROR:
	case RS_DISCONNECTED:
	case RS_ERROR:
		*settled = true;
		return mock_errno(ENOTCONN);
	default:
		*settled = true;
		return mock_errno(EINVAL);
	}
	/* Each phase done leads to the next. */
	while (!ret) {
		if (rs->phase == RS_RESOLVING_ADDR) {
			rs->retries = 0;
			ret = resolve_route(rs);
		} else if (rs->phase == RS_RESOLVING_ROUTE) {
			rs->retries = 0;
			ret = connect_qp(rs);
		} else {
			return connected(rs);
		}
	}
	return -1;
}

/* A failed step ends the connect: SO_ERROR and RS_CONNECT_ERROR. The
 * answer of a phase with no step (listening: EINVAL; failed or ended:
 * ENOTCONN) changes neither, as upstream's rs_do_connect returns those
 * before its error handling: a listener still listens. */
int rs_do_connect(struct rsocket *rs)
{
	bool settled = false;
	int ret = do_connect(rs, &settled);

	if (settled || !ret || errno == EINPROGRESS)
		return ret;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return mock_errno(EINPROGRESS);
	rs->err = errno;
	rs->phase = RS_CONNECT_ERROR;
	return -1;
}

static int progress_connect(struct rsocket *rs, bool only_under_way)
{
	bool now_connected;
	int ret;

	pthread_mutex_lock(&rs->lock);
	if (only_under_way && (!rs_opening(rs->phase) || rs->phase == RS_ACCEPTING)) {
		pthread_mutex_unlock(&rs->lock);
		return 0;
	}
	ret = rs_do_connect(rs);
	now_connected = !ret && !rs->in_svc;
	pthread_mutex_unlock(&rs->lock);
	if (now_connected)
		rs_svc_add(rs);
	return ret;
}

int rs_progress_connect(struct rsocket *rs)
{
	return progress_connect(rs, false);
}

int rs_continue_connect(struct rsocket *rs)
{
	return progress_connect(rs, true);
}

bool rs_listening(struct rsocket *rs)
{
	bool listening;

	pthread_mutex_lock(&rs->lock);
	listening = rs->phase == RS_LISTENING;
	pthread_mutex_unlock(&rs->lock);
	return listening;
}

MOCK_EXPORT int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsocket *rs;

	FAULT_MINUS1(LIB, "rconnect");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (rs->type == SOCK_DGRAM)
		return ds_connect(rs, addr, addrlen);
	pthread_mutex_lock(&rs->lock);
	if (rs->phase == RS_INIT || rs->phase == RS_BOUND) {
		if (!addr || addrlen > sizeof rs->dst) {
			pthread_mutex_unlock(&rs->lock);
			return mock_errno(EINVAL);
		}
		memset(&rs->dst, 0, sizeof rs->dst);
		memcpy(&rs->dst, addr, addrlen);
	}
	pthread_mutex_unlock(&rs->lock);
	return rs_progress_connect(rs);
}

/* ---------------------------------------------------------------- shutdown, close */

/* Tell the peer, then let what is in flight complete (blocking, as
 * upstream's rshutdown is, whatever O_NONBLOCK says). */
static int shutdown_locked(struct rsocket *rs, int how)
{
	enum rs_ctrl ctrl;
	bool tell = true;
	int ret = 0;

	if (rs->phase != RS_CONNECTED)
		return 0;
	if (how == SHUT_RDWR) {
		rs->readable = rs->writable = false;
		ctrl = RS_CTRL_DISCONNECT;
	} else if (how == SHUT_WR) {
		rs->writable = false;
		ctrl = rs->readable ? RS_CTRL_SHUTDOWN : RS_CTRL_DISCONNECT;
	} else {
		rs->readable = false;
		tell = !rs->writable;
		ctrl = RS_CTRL_DISCONNECT;
	}
	if (tell)
		ret = rs_send_ctrl(rs, ctrl);
	if (rs->phase == RS_CONNECTED)
		rs_wait(rs, false, rs_sends_done);
	if (ctrl == RS_CTRL_DISCONNECT && tell && rs->phase == RS_CONNECTED)
		rs->phase = RS_DISCONNECTED;
	/* Flush the receives: an rpoll asleep on the CQ wakes. */
	if (rs->phase == RS_DISCONNECTED)
		rs_flush(rs);
	return ret;
}

MOCK_EXPORT int rshutdown(int socket, int how)
{
	struct rsocket *rs;
	int ret;

	FAULT_MINUS1(LIB, "rshutdown");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	/* No EINVAL for another `how`: upstream's rshutdown takes anything
	 * but SHUT_RDWR and SHUT_WR as SHUT_RD (shutdown_locked does too). */
	if (rs->type == SOCK_DGRAM)
		return 0;
	pthread_mutex_lock(&rs->lock);
	ret = shutdown_locked(rs, how);
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

int repoll_close(int epfd);

/* Upstream returns EBADF, not -1, for a descriptor that is not its own. */
MOCK_EXPORT int rclose(int socket)
{
	struct rsocket *rs;

	FAULT_POSITIVE(LIB, "rclose");
	rs = rs_lookup(socket);
	if (!rs)
		return repoll_close(socket);
	if (rs->type == SOCK_STREAM) {
		pthread_mutex_lock(&rs->lock);
		shutdown_locked(rs, SHUT_RDWR);
		pthread_mutex_unlock(&rs->lock);
	} else {
		ds_close(rs);
	}
	rs_svc_remove(rs);
	rs_free(rs);
	return 0;
}

/* ---------------------------------------------------------------- names */

MOCK_EXPORT int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsocket *rs;

	FAULT_MINUS1(LIB, "rgetpeername");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (rs->type == SOCK_DGRAM)
		return ds_getpeername(rs, addr, addrlen);
	copy_addr(addr, addrlen, rdma_get_peer_addr(rs->cm_id));
	return 0;
}

MOCK_EXPORT int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsocket *rs;

	FAULT_MINUS1(LIB, "rgetsockname");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (rs->type == SOCK_DGRAM)
		return ds_getsockname(rs, addr, addrlen);
	copy_addr(addr, addrlen, rdma_get_local_addr(rs->cm_id));
	return 0;
}
