/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The data calls: rsend, rsendto, rsendmsg, rwrite, rwritev and rrecv,
 * rrecvfrom, rrecvmsg, rread, rreadv. Each finds the socket and hands the
 * work to its kind: rsocket_stream.c or rsocket_udp.c. A stream socket
 * whose connect is under way is driven on first (EAGAIN while it goes on,
 * as upstream's). As upstream's, the vector receives fill only the first
 * vector, and rrecvmsg takes its flags from msg_flags. */
#include <stdlib.h>
#include <string.h>

#include "rsocket.h"

#define LIB "rdmacm"

/* A stream socket ready for data, or -1 with errno. */
static int stream_ready(struct rsocket *rs)
{
	if (!rs_continue_connect(rs))
		return 0;
	if (errno == EINPROGRESS)
		errno = EAGAIN;
	return -1;
}

/* named: an address given to a stream socket is EISCONN (rsendto); else
 * it is not looked at, as upstream's rsendmsg (rsendv) never does. */
static ssize_t sendv(int socket, const struct iovec *iov, int iovcnt, int flags,
		     const struct sockaddr *to, socklen_t tolen, bool named)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return mock_errno(EBADF);
	if (iovcnt < 0 || (iovcnt && !iov))
		return mock_errno(EINVAL);
	if (rs->type == SOCK_DGRAM)
		return ds_sendto(rs, iov, iovcnt, flags, to, tolen);
	if (named && (to || tolen))
		return mock_errno(EISCONN);
	if (stream_ready(rs))
		return -1;
	return rs_sendv(rs, iov, iovcnt, flags);
}

static ssize_t recv_one(int socket, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen)
{
	struct rsocket *rs = rs_lookup(socket);
	ssize_t ret;

	if (!rs)
		return mock_errno(EBADF);
	if (rs->type == SOCK_DGRAM)
		return ds_recvfrom(rs, buf, len, flags, from, fromlen);
	if (stream_ready(rs))
		return -1;
	ret = rs_recv(rs, buf, len, flags);
	if (ret > 0 && from && fromlen)
		rgetpeername(socket, from, fromlen);
	return ret;
}

MOCK_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	FAULT_MINUS1(LIB, "rsend");
	return sendv(socket, &iov, 1, flags, NULL, 0, true);
}

MOCK_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
			    const struct sockaddr *dest_addr, socklen_t addrlen)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	FAULT_MINUS1(LIB, "rsendto");
	return sendv(socket, &iov, 1, flags, dest_addr, addrlen, true);
}

MOCK_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	FAULT_MINUS1(LIB, "rsendmsg");
	if (!msg)
		return mock_errno(EFAULT);
	if (msg->msg_control && msg->msg_controllen)
		return mock_errno(ENOTSUP);
	return sendv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
		     msg->msg_namelen, false);
}

MOCK_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = count };

	FAULT_MINUS1(LIB, "rwrite");
	return sendv(socket, &iov, 1, 0, NULL, 0, true);
}

MOCK_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	FAULT_MINUS1(LIB, "rwritev");
	return sendv(socket, iov, iovcnt, 0, NULL, 0, true);
}

MOCK_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	FAULT_MINUS1(LIB, "rrecv");
	return recv_one(socket, buf, len, flags, NULL, NULL);
}

MOCK_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
			      struct sockaddr *src_addr, socklen_t *addrlen)
{
	FAULT_MINUS1(LIB, "rrecvfrom");
	return recv_one(socket, buf, len, flags, src_addr, addrlen);
}

MOCK_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	FAULT_MINUS1(LIB, "rrecvmsg");
	if (!msg)
		return mock_errno(EFAULT);
	if (msg->msg_control && msg->msg_controllen)
		return mock_errno(ENOTSUP);
	if (!msg->msg_iovlen)
		return recv_one(socket, NULL, 0, msg->msg_flags, NULL, NULL);
	return recv_one(socket, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len,
			msg->msg_flags, NULL, NULL);
}

MOCK_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	FAULT_MINUS1(LIB, "rread");
	return recv_one(socket, buf, count, 0, NULL, NULL);
}

MOCK_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	FAULT_MINUS1(LIB, "rreadv");
	if (iovcnt <= 0 || !iov)
		return mock_errno(EINVAL);
	return recv_one(socket, iov[0].iov_base, iov[0].iov_len, 0, NULL, NULL);
}
