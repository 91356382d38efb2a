/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rsetsockopt, rgetsockopt and rfcntl: the options man rsocket(7) lists,
 * with upstream's answers (librdmacm/rsocket.c): flags are kept per
 * optname and read back as set, SO_KEEPALIVE sends keepalives from the
 * service thread, the SOL_RDMA sizes may change only until the socket
 * opens a connection, and everything else is ENOTSUP. */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/sa.h>

#include "rsocket.h"

#define LIB "rdmacm"

/* Upstream sends RDMA_IOMAPSIZE as one byte, a count up to 128 or a
 * multiple of 256 beyond: the size is rounded the same way. */
static uint32_t iomap_round(int value)
{
	uint8_t scale = value <= 128 ? (uint8_t)value : (uint8_t)(128 | (value >> 8));

	return scale <= 128 ? scale : (uint32_t)(scale & 127) << 8;
}

static int int_of(const void *optval, socklen_t optlen, int *out)
{
	if (!optval)
		return mock_errno(EFAULT);
	if (optlen < sizeof(int))
		return mock_errno(EINVAL);
	memcpy(out, optval, sizeof *out);
	return 0;
}

/* After the socket has opened (or a datagram socket is bound), its queues
 * and buffers exist: the SOL_RDMA sizes are fixed. */
static bool opened(const struct rsocket *rs)
{
	return rs->type == SOCK_DGRAM ? rs->readable : rs->phase >= RS_RESOLVING_ADDR;
}

static int set_keepalive(struct rsocket *rs, bool on)
{
	if (on && !rs->keepalive_time) {
		FILE *f = fopen("/proc/sys/net/ipv4/tcp_keepalive_time", "r");

		if (!f || fscanf(f, "%u", &rs->keepalive_time) != 1)
			rs->keepalive_time = 7200;
		if (f)
			fclose(f);
	}
	rs->keepalive = on;
	rs->keepalive_due = 0;
	return 0;
}

/* One option; *bits is where its flag goes (NULL: none), *on the flag. */
static int set_locked(struct rsocket *rs, int level, int optname, const void *optval,
		      socklen_t optlen, uint64_t **bits, bool *on)
{
	int val = 0;

	if (level == SOL_SOCKET && optname == SO_LINGER) {
		struct linger lg;

		if (!optval)
			return mock_errno(EFAULT);
		if (optlen < sizeof lg)
			return mock_errno(EINVAL);
		memcpy(&lg, optval, sizeof lg);
		*bits = &rs->so_opts;
		*on = !lg.l_onoff; /* kept inverted: lingering is the default */
		return 0;
	}
	if (level == SOL_RDMA && optname == RDMA_ROUTE) {
		if (opened(rs))
			return mock_errno(EINVAL);
		free(rs->route);
		rs->route = malloc(optlen ? optlen : 1);
		if (!rs->route)
			return mock_errno(ENOMEM);
		memcpy(rs->route, optval, optlen);
		rs->route_len = optlen;
		return 0;
	}
	if (level == IPPROTO_IP && optname == IP_TOS && optval) {
		/* Kept as given, and handed to the CM with the caller's optlen:
		 * RDMA_OPTION_ID_TOS takes one byte, so an int's length is
		 * EINVAL with the value kept (upstream's rsetsockopt, IP_TOS). */
		memcpy(&val, optval, optlen < sizeof val ? optlen : sizeof val);
		rs->ip_tos = val;
		return rdma_set_option(rs->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS,
				       (void *)optval, optlen);
	}
	if (int_of(optval, optlen, &val))
		return -1;
	*on = val != 0;
	switch (level) {
	case SOL_SOCKET:
		*bits = &rs->so_opts;
		switch (optname) {
		case SO_REUSEADDR:
			/* Upstream takes the CM's refusal quietly where the
			 * kernel has no such option, or the id is past idle. */
			if (rs->type == SOCK_STREAM &&
			    rdma_set_option(rs->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
					    (void *)optval, optlen) &&
			    errno != ENOSYS && rs->phase == RS_INIT)
				return -1;
			return 0;
		case SO_RCVBUF:
			if (!rs->rbuf && !(rs->ds && rs->readable))
				rs->rbuf_size = (uint32_t)val << 1;
			return 0;
		case SO_SNDBUF:
			if (!rs->sbuf && !(rs->ds && rs->readable))
				rs->sbuf_size = (uint32_t)val << 1;
			if (rs->sbuf_size < RS_SNDLOWAT)
				rs->sbuf_size = RS_SNDLOWAT << 1;
			return 0;
		case SO_KEEPALIVE:
			return set_keepalive(rs, *on);
		case SO_OOBINLINE:
			return 0;
		}
		break;
	case IPPROTO_TCP:
		*bits = &rs->tcp_opts;
		switch (optname) {
		case TCP_KEEPIDLE:
			if (val <= 0)
				return mock_errno(EINVAL);
			rs->keepalive_time = (unsigned)val;
			rs->keepalive_due = 0;
			return 0;
		case TCP_KEEPCNT:
		case TCP_KEEPINTVL:
		case TCP_NODELAY:
		case TCP_MAXSEG:
		case TCP_CONGESTION:
			return 0;
		}
		break;
	case IPPROTO_IPV6:
		*bits = &rs->ipv6_opts;
		if (optname == IPV6_V6ONLY)
			return rs->type == SOCK_STREAM
				       ? rdma_set_option(rs->cm_id, RDMA_OPTION_ID,
							 RDMA_OPTION_ID_AFONLY, (void *)optval, optlen)
				       : 0;
		break;
	case SOL_RDMA:
		*bits = NULL;
		if (opened(rs))
			return mock_errno(EINVAL);
		switch (optname) {
		case RDMA_SQSIZE:
			rs->sq_size = (uint32_t)val < RS_QP_MAX ? (uint32_t)val : RS_QP_MAX;
			return 0;
		case RDMA_RQSIZE:
			rs->rq_size = (uint32_t)val < RS_QP_MAX ? (uint32_t)val : RS_QP_MAX;
			return 0;
		case RDMA_INLINE:
			rs->sq_inline = (uint32_t)val < RS_QP_MAX ? (uint32_t)val : RS_QP_MAX;
			return 0;
		case RDMA_IOMAPSIZE:
			rs->iomap_size = iomap_round(val);
			return 0;
		}
		break;
	}
	*bits = NULL;
	return mock_errno(ENOTSUP);
}

MOCK_EXPORT int rsetsockopt(int socket, int level, int optname, const void *optval,
			    socklen_t optlen)
{
	uint64_t *bits = NULL;
	struct rsocket *rs;
	bool on = false;
	int ret;

	FAULT_MINUS1(LIB, "rsetsockopt");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	/* A datagram socket's UDP socket sees the option first (upstream's
	 * rsetsockopt): what it refuses fails, and where it took an option
	 * the switch does not name, its 0 is the answer. */
	if (rs->type == SOCK_DGRAM && level != SOL_RDMA &&
	    ds_setsockopt(rs, level, optname, optval, optlen))
		return -1;
	pthread_mutex_lock(&rs->lock);
	ret = set_locked(rs, level, optname, optval, optlen, &bits, &on);
	if (ret && errno == ENOTSUP && rs->type == SOCK_DGRAM && level != SOL_RDMA)
		ret = 0;
	if (!ret && bits && optname < 64) {
		if (on)
			*bits |= 1ull << optname;
		else
			*bits &= ~(1ull << optname);
	}
	pthread_mutex_unlock(&rs->lock);
	if (!ret && ((level == SOL_SOCKET && optname == SO_KEEPALIVE) ||
		     (level == IPPROTO_TCP && optname == TCP_KEEPIDLE)))
		rs_svc_kick();
	return ret;
}

/* ---------------------------------------------------------------- get */

static void put_int(void *optval, socklen_t *optlen, int val)
{
	memcpy(optval, &val, sizeof val);
	*optlen = sizeof val;
}

static bool bit(uint64_t bits, int optname)
{
	return optname < 64 && (bits & (1ull << optname));
}

/* RDMA_ROUTE: the resolved path as struct ibv_path_data. A route given
 * with rsetsockopt is not read back: upstream's rgetsockopt copies the
 * caller's buffer over it and leaves the buffer as it was, saying only
 * the length (rgetsockopt, RDMA_ROUTE with rs->optval set). */
static int get_route(struct rsocket *rs, void *optval, socklen_t *optlen)
{
	struct rdma_route *route = &rs->cm_id->route;
	socklen_t len = 0;

	if (rs->route) {
		if (*optlen < rs->route_len)
			return mock_errno(EINVAL);
		memcpy(rs->route, optval, rs->route_len);
		*optlen = (socklen_t)rs->route_len;
		return 0;
	}
	if (*optlen < sizeof(struct ibv_path_data))
		return mock_errno(EINVAL);
	for (int i = 0; i < route->num_paths && len + sizeof(struct ibv_path_data) <= *optlen; i++) {
		const struct ibv_sa_path_rec *sa = &route->path_rec[i];
		struct ibv_path_data pd = { .flags = sa->preference };
		struct ibv_path_record *p = &pd.path;

		p->dgid = sa->dgid;
		p->sgid = sa->sgid;
		p->dlid = sa->dlid;
		p->slid = sa->slid;
		p->flowlabel_hoplimit = htobe32(be32toh(sa->flow_label) << 8 | sa->hop_limit);
		p->tclass = sa->traffic_class;
		p->reversible_numpath = (uint8_t)(sa->reversible << 7 | 1);
		p->pkey = sa->pkey;
		p->qosclass_sl = htobe16(sa->sl);
		p->mtu = (uint8_t)(sa->mtu | 2 << 6); /* selector: exactly */
		p->rate = (uint8_t)(sa->rate | 2 << 6);
		p->packetlifetime = (uint8_t)(sa->packet_life_time | 2 << 6);
		memcpy((uint8_t *)optval + len, &pd, sizeof pd);
		len += sizeof pd;
	}
	*optlen = len;
	return 0;
}

static int get_locked(struct rsocket *rs, int level, int optname, void *optval, socklen_t *optlen)
{
	switch (level) {
	case SOL_SOCKET:
		switch (optname) {
		case SO_REUSEADDR:
		case SO_KEEPALIVE:
		case SO_OOBINLINE:
			put_int(optval, optlen, bit(rs->so_opts, optname));
			return 0;
		case SO_RCVBUF:
			put_int(optval, optlen, (int)rs->rbuf_size);
			return 0;
		case SO_SNDBUF:
			put_int(optval, optlen, (int)rs->sbuf_size);
			return 0;
		case SO_LINGER: {
			struct linger lg = { .l_onoff = !bit(rs->so_opts, SO_LINGER) };

			memcpy(optval, &lg, sizeof lg);
			*optlen = sizeof lg;
			return 0;
		}
		case SO_ERROR:
			put_int(optval, optlen, rs->err);
			rs->err = 0;
			return 0;
		case SO_BROADCAST: /* rdma-core 65: 0, optval untouched */
			return 0;
		}
		break;
	case IPPROTO_IP:
		if (optname == IP_TOS) {
			put_int(optval, optlen, rs->ip_tos);
			return 0;
		}
		break;
	case IPPROTO_TCP:
		switch (optname) {
		case TCP_KEEPIDLE:
			put_int(optval, optlen, (int)rs->keepalive_time);
			return 0;
		case TCP_NODELAY:
			put_int(optval, optlen, bit(rs->tcp_opts, optname));
			return 0;
		case TCP_MAXSEG:
			put_int(optval, optlen, rs->cm_id->route.num_paths
							? 1 << (7 + rs->cm_id->route.path_rec->mtu)
							: 2048);
			return 0;
		case TCP_CONGESTION: /* rdma-core 65: not applicable, 1 */
		case TCP_KEEPCNT:
		case TCP_KEEPINTVL:
			memcpy(optval, &(int){ 1 }, sizeof(int));
			return 0;
		case TCP_INFO: {
			/* rdma-core 63 on fills the state and the window only.
			 * Its state is TCP_ESTABLISHED only where rs->state
			 * equals rs_connected, and a connection's carries
			 * rs_readable or rs_writable too until it becomes
			 * rs_disconnected: TCP_CLOSE (rgetsockopt, TCP_INFO). */
			struct tcp_info info = {
				.tcpi_state = TCP_CLOSE,
				.tcpi_snd_cwnd = rs->sq_size,
			};
			socklen_t len = *optlen < sizeof info ? *optlen : sizeof info;

			memcpy(optval, &info, len);
			*optlen = len;
			return 0;
		}
		}
		break;
	case IPPROTO_IPV6:
		if (optname == IPV6_V6ONLY) {
			put_int(optval, optlen, bit(rs->ipv6_opts, optname));
			return 0;
		}
		break;
	case SOL_RDMA:
		switch (optname) {
		case RDMA_SQSIZE:
			put_int(optval, optlen, (int)rs->sq_size);
			return 0;
		case RDMA_RQSIZE:
			put_int(optval, optlen, (int)rs->rq_size);
			return 0;
		case RDMA_INLINE:
			put_int(optval, optlen, (int)rs->sq_inline);
			return 0;
		case RDMA_IOMAPSIZE:
			put_int(optval, optlen, (int)rs->iomap_size);
			return 0;
		case RDMA_ROUTE:
			return get_route(rs, optval, optlen);
		}
		break;
	}
	return mock_errno(ENOTSUP);
}

MOCK_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rsocket *rs;
	int ret;

	FAULT_MINUS1(LIB, "rgetsockopt");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (!optval || !optlen)
		return mock_errno(EFAULT);
	pthread_mutex_lock(&rs->lock);
	ret = get_locked(rs, level, optname, optval, optlen);
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

/* ---------------------------------------------------------------- rfcntl */

/* What blocks on an fd of ours follows O_NONBLOCK: the CM channel while a
 * connect is under way, and a listener's accept queue. (A served socket's
 * channel stays nonblocking: the service thread reads it.) */
static int set_nonblocking(struct rsocket *rs, bool on)
{
	if (rs->accept_fd[0] >= 0 && rs_fd_nonblock(rs->accept_fd[0], on))
		return -1;
	if (rs->type == SOCK_STREAM && !rs->in_svc && rs->phase < RS_CONNECTED)
		return rs_fd_nonblock(rs->cm_id->channel->fd, on);
	return 0;
}

MOCK_EXPORT int rfcntl(int socket, int cmd, ...)
{
	struct rsocket *rs;
	va_list args;
	int ret = 0, param;

	FAULT_MINUS1(LIB, "rfcntl");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	va_start(args, cmd);
	pthread_mutex_lock(&rs->lock);
	switch (cmd) {
	case F_GETFL:
		ret = rs->fs_flags;
		break;
	case F_SETFL:
		param = va_arg(args, int);
		if ((rs->fs_flags & O_NONBLOCK) != (param & O_NONBLOCK))
			ret = set_nonblocking(rs, param & O_NONBLOCK);
		if (!ret)
			rs->fs_flags = param;
		break;
	case F_GETFD:
		ret = rs->fd_flags;
		break;
	case F_SETFD:
		rs->fd_flags = va_arg(args, int);
		break;
	default:
		ret = mock_errno(ENOTSUP);
		break;
	}
	pthread_mutex_unlock(&rs->lock);
	va_end(args);
	return ret;
}
