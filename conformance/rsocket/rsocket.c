/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rsocket, rbind, rlisten, raccept, rconnect, rsend, rrecv,
 * rshutdown, rclose, rgetsockname, rgetpeername (SOCK_STREAM), as man
 * rsocket(7) says they mirror the socket calls, and as upstream's
 * librdmacm/rsocket.c has them where the two part. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "rsock.h"

/* ---------------------------------------------------------------- rsocket */

void rsocket__descriptor_is_an_fd(void **state)
{
	int types[] = { SOCK_STREAM, SOCK_DGRAM }, p[2];

	for (int i = 0; i < 2; i++) {
		int fd = fx_rsocket(AF_INET, types[i]);

		if (fcntl(fd, F_GETFD) < 0)
			fail_msg("rsocket gave %d, which is not an open fd: %s", fd, strerror(errno));
		assert_int_equal(pipe(p), 0);
		assert_true(p[0] != fd && p[1] != fd);
		close(p[0]);
		close(p[1]);
		if (types[i] == SOCK_DGRAM)
			fx_rs_close_unbound(fd, AF_INET);
		else
			assert_int_equal(rclose(fd), 0);
	}
}

static void expect_enotsup(int domain, int type, int protocol)
{
	errno = 0;
	assert_int_equal(rsocket(domain, type, protocol), -1);
	RC_ASSERT_ERRNO("rsocket", errno, ENOTSUP);
}

void rsocket__unsupported_kind(void **state)
{
	fx_require_backend();
	expect_enotsup(AF_INET, SOCK_RAW, 0);
	expect_enotsup(AF_UNIX, SOCK_STREAM, 0);
	expect_enotsup(AF_INET, SOCK_STREAM, IPPROTO_UDP);
	expect_enotsup(AF_INET, SOCK_DGRAM, IPPROTO_TCP);
}

/* The protocol named is as good as 0: IPPROTO_TCP for a stream socket,
 * IPPROTO_UDP for a datagram one. */
void rsocket__protocol_named(void **state)
{
	int fd;

	fx_require_backend();
	fd = rsocket(AF_INET6, SOCK_STREAM, IPPROTO_TCP);
	if (fd < 0)
		fail_msg("rsocket(AF_INET6, SOCK_STREAM, IPPROTO_TCP): %s", strerror(errno));
	assert_int_equal(rclose(fd), 0);
	fd = rsocket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	if (fd < 0)
		fail_msg("rsocket(AF_INET, SOCK_DGRAM, IPPROTO_UDP): %s", strerror(errno));
	fx_rs_close_unbound(fd, AF_INET);
}

/* A descriptor rsockets does not know: every call says EBADF. (An rsocket
 * exists meanwhile: upstream's data calls look the fd up in a table that
 * has its first block only once an rsocket was made.) */
void rsocket_calls__not_an_rsocket(void **state)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof addr;
	int fd = fx_rsocket(AF_INET, SOCK_STREAM), p[2], val = 1;
	char c = 0;

	fx_rs_addr(AF_INET, 0, &addr);
	assert_int_equal(pipe(p), 0);
#define EXPECT_EBADF(name, ...)                                        \
	do {                                                           \
		errno = 0;                                             \
		if (name(__VA_ARGS__) != -1)                           \
			fail_msg("%s on a pipe did not fail", #name);  \
		RC_ASSERT_ERRNO(#name, errno, EBADF);                  \
	} while (0)
	EXPECT_EBADF(rbind, p[0], (struct sockaddr *)&addr, fx_rs_len(&addr));
	EXPECT_EBADF(rlisten, p[0], 1);
	EXPECT_EBADF(raccept, p[0], NULL, NULL);
	EXPECT_EBADF(rconnect, p[0], (struct sockaddr *)&addr, fx_rs_len(&addr));
	EXPECT_EBADF(rshutdown, p[0], SHUT_RDWR);
	EXPECT_EBADF(rgetsockname, p[0], (struct sockaddr *)&addr, &len);
	EXPECT_EBADF(rgetpeername, p[0], (struct sockaddr *)&addr, &len);
	EXPECT_EBADF(rsetsockopt, p[0], SOL_SOCKET, SO_KEEPALIVE, &val, sizeof val);
	EXPECT_EBADF(rgetsockopt, p[0], SOL_SOCKET, SO_KEEPALIVE, &val, &len);
	EXPECT_EBADF(rfcntl, p[0], F_GETFL);
	EXPECT_EBADF(rsend, p[1], &c, 1, 0);
	EXPECT_EBADF(rrecv, p[0], &c, 1, 0);
#undef EXPECT_EBADF
	close(p[0]);
	close(p[1]);
	assert_int_equal(rclose(fd), 0);
}

/* ---------------------------------------------------------------- rclose */

void rclose__not_an_rsocket(void **state)
{
	int fd = fx_rsocket(AF_INET, SOCK_STREAM), p[2];

	assert_int_equal(pipe(p), 0);
	errno = 0;
	RC_ASSERT_ERRNO("rclose", rclose(p[0]), EBADF);
	assert_int_equal(errno, 0);
	close(p[0]);
	close(p[1]);
	assert_int_equal(rclose(fd), 0);
}

void rclose__releases_descriptor(void **state)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(AF_INET, SOCK_STREAM);

	fx_rs_addr(AF_INET, 0, &addr);
	assert_int_equal(rclose(fd), 0);
	errno = 0;
	assert_int_equal(rbind(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rbind", errno, EBADF);
}

/* rbind binds the rsocket's CM id (rdma_bind_addr): an address another
 * rsocket listens on is refused, EADDRINUSE; port 0 takes a free port,
 * which rgetsockname reports. */
void rbind__address_in_use(void **state)
{
	int listener = fx_rs_listen(AF_INET, fx_port());
	int fd = fx_rsocket(AF_INET, SOCK_STREAM);
	struct sockaddr_storage addr, name;
	socklen_t len = sizeof name;

	fx_rs_addr(AF_INET, fx_port(), &addr);
	errno = 0;
	assert_int_equal(rbind(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rbind", errno, EADDRINUSE);
	fx_rs_addr(AF_INET, 0, &addr);
	FX_RS_OK(rbind(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	FX_RS_OK(rgetsockname(fd, (struct sockaddr *)&name, &len));
	assert_int_not_equal(fx_sockaddr_port((struct sockaddr *)&name), 0);
	assert_int_not_equal(ntohs(fx_sockaddr_port((struct sockaddr *)&name)), fx_port());
	assert_int_equal(rclose(fd), 0);
	assert_int_equal(rclose(listener), 0);
}

/* rlisten on a socket that listens already returns 0 and changes
 * nothing (upstream's rlisten: rs_listening returns at once); a client
 * still connects. */
void rlisten__twice(void **state)
{
	int listener = fx_rs_listen(AF_INET, fx_port());
	struct sockaddr_storage addr;
	int client, server;

	assert_int_equal(rlisten(listener, 8), 0);
	fx_rs_addr(AF_INET, fx_port(), &addr);
	client = fx_rsocket(AF_INET, SOCK_STREAM);
	FX_RS_OK(rconnect(client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(fx_rs_poll(listener, POLLIN, FX_RS_WAIT_MS), POLLIN);
	server = raccept(listener, NULL, NULL);
	if (server < 0)
		fail_msg("raccept: %s", strerror(errno));
	rclose(server);
	rclose(client);
	rclose(listener);
}

/* ---------------------------------------------------------------- connect, accept */

/* rconnect on a listening rsocket: -1, EINVAL (upstream's rs_do_connect:
 * a state with no connection bit), and the socket is left as it was: it
 * still listens, and a client's connection is accepted. */
void rconnect__listening(void **state)
{
	struct fx_rs_pair pair = { .listener = fx_rs_listen(AF_INET, fx_port()) };
	struct sockaddr_storage addr;

	fx_rs_addr(AF_INET, fx_port(), &addr);
	errno = 0;
	assert_int_equal(rconnect(pair.listener, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rconnect", errno, EINVAL);
	pair.client = fx_rsocket(AF_INET, SOCK_STREAM);
	FX_RS_OK(rconnect(pair.client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(fx_rs_poll(pair.listener, POLLIN, 5000), POLLIN);
	pair.server = raccept(pair.listener, NULL, NULL);
	if (pair.server < 0)
		fail_msg("raccept after the refused rconnect: %s", strerror(errno));
	fx_rs_close(&pair);
}

void raccept__not_listening(void **state)
{
	int fd = fx_rsocket(AF_INET, SOCK_STREAM);

	errno = 0;
	assert_int_equal(raccept(fd, NULL, NULL), -1);
	RC_ASSERT_ERRNO("raccept", errno, EBADF);
	rclose(fd);
}

void rconnect__refused(void **state)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(AF_INET, SOCK_STREAM);

	fx_rs_addr(AF_INET, fx_free_port(), &addr);
	errno = 0;
	assert_int_equal(rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rconnect", errno, ECONNREFUSED);
	rclose(fd);
}

void rgetsockopt__so_error_read_once(void **state)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(AF_INET, SOCK_STREAM), err = -1;
	socklen_t len = sizeof err;

	fx_rs_addr(AF_INET, fx_free_port(), &addr);
	assert_int_equal(rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	FX_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	RC_ASSERT_ERRNO("rconnect", err, ECONNREFUSED);
	assert_int_equal(len, sizeof err);
	FX_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	assert_int_equal(err, 0);
	rclose(fd);
}

/* rconnect again after a refused one: -1, ENOTCONN (upstream's
 * rs_do_connect for a connect in error), and SO_ERROR still gives the
 * refusal: the second call changed nothing. */
void rconnect__after_refused(void **state)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(AF_INET, SOCK_STREAM), err = -1;
	socklen_t len = sizeof err;

	fx_rs_addr(AF_INET, fx_free_port(), &addr);
	assert_int_equal(rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rconnect", errno, ECONNREFUSED);
	errno = 0;
	assert_int_equal(rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rconnect", errno, ENOTCONN);
	FX_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	RC_ASSERT_ERRNO("rconnect", err, ECONNREFUSED);
	rclose(fd);
}

/* connect(2): with O_NONBLOCK, EINPROGRESS, then writable, SO_ERROR 0. */
void rconnect__nonblocking_in_progress(void **state)
{
	struct fx_rs_pair pair = { .listener = fx_rs_listen(AF_INET, fx_port()) };
	struct sockaddr_storage addr;
	int err = -1, ret;
	socklen_t len = sizeof err;

	fx_rs_addr(AF_INET, fx_port(), &addr);
	pair.client = fx_rsocket(AF_INET, SOCK_STREAM);
	FX_RS_OK(rfcntl(pair.client, F_SETFL, O_NONBLOCK));
	errno = 0;
	ret = rconnect(pair.client, (struct sockaddr *)&addr, fx_rs_len(&addr));
	if (ret && errno != EINPROGRESS)
		fail_msg("rconnect (O_NONBLOCK): %s, not EINPROGRESS", strerror(errno));
	if (ret)
		assert_true(fx_rs_poll(pair.client, POLLOUT, FX_RS_WAIT_MS) & POLLOUT);
	FX_RS_OK(rgetsockopt(pair.client, SOL_SOCKET, SO_ERROR, &err, &len));
	assert_int_equal(err, 0);
	assert_int_equal(fx_rs_poll(pair.listener, POLLIN, FX_RS_WAIT_MS), POLLIN);
	pair.server = raccept(pair.listener, NULL, NULL);
	assert_true(pair.server >= 0);
	fx_rs_close(&pair);
}

void rconnect__nonblocking_refused(void **state)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(AF_INET, SOCK_STREAM), err = -1, ret;
	socklen_t len = sizeof err;

	fx_rs_addr(AF_INET, fx_free_port(), &addr);
	FX_RS_OK(rfcntl(fd, F_SETFL, O_NONBLOCK));
	errno = 0;
	ret = rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr));
	assert_int_equal(ret, -1);
	if (errno == EINPROGRESS) {
		assert_true(fx_rs_poll(fd, POLLOUT, FX_RS_WAIT_MS) & POLLERR);
		FX_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	} else {
		err = errno;
	}
	RC_ASSERT_ERRNO("rconnect", err, ECONNREFUSED);
	rclose(fd);
}

/* The listener's side completes the connection before raccept. */
void rconnect__completes_before_raccept(void **state)
{
	struct fx_rs_pair pair = { .listener = fx_rs_listen(AF_INET, fx_port()), .server = -1 };
	struct sockaddr_storage addr;

	fx_rs_addr(AF_INET, fx_port(), &addr);
	pair.client = fx_rsocket(AF_INET, SOCK_STREAM);
	FX_RS_OK(rconnect(pair.client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(fx_rs_poll(pair.listener, POLLIN, FX_RS_WAIT_MS), POLLIN);
	pair.server = raccept(pair.listener, NULL, NULL);
	assert_true(pair.server >= 0);
	fx_rs_close(&pair);
}

void raccept__nonblocking_empty(void **state)
{
	int fd = fx_rs_listen(AF_INET, fx_port());

	FX_RS_OK(rfcntl(fd, F_SETFL, O_NONBLOCK));
	errno = 0;
	assert_int_equal(raccept(fd, NULL, NULL), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	rclose(fd);
}

static void assert_same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	char x[INET6_ADDRSTRLEN], y[INET6_ADDRSTRLEN];
	const void *ax, *bx;

	assert_int_equal(a->sa_family, b->sa_family);
	ax = a->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)a)->sin_addr
				     : (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr;
	bx = b->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)b)->sin_addr
				     : (const void *)&((const struct sockaddr_in6 *)b)->sin6_addr;
	inet_ntop(a->sa_family, ax, x, sizeof x);
	inet_ntop(b->sa_family, bx, y, sizeof y);
	if (strcmp(x, y) || fx_sockaddr_port(a) != fx_sockaddr_port(b))
		fail_msg("%s port %u is not %s port %u", x, ntohs(fx_sockaddr_port(a)), y,
			 ntohs(fx_sockaddr_port(b)));
}

void raccept__peer_address(void **state)
{
	struct fx_rs_pair pair = { .listener = fx_rs_listen(AF_INET, fx_port()) };
	struct sockaddr_storage addr, peer, client;
	socklen_t peer_len = sizeof peer, client_len = sizeof client;

	fx_rs_addr(AF_INET, fx_port(), &addr);
	pair.client = fx_rsocket(AF_INET, SOCK_STREAM);
	FX_RS_OK(rconnect(pair.client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(fx_rs_poll(pair.listener, POLLIN, FX_RS_WAIT_MS), POLLIN);
	pair.server = raccept(pair.listener, (struct sockaddr *)&peer, &peer_len);
	assert_true(pair.server >= 0);
	assert_int_equal(peer_len, sizeof(struct sockaddr_in));
	FX_RS_OK(rgetsockname(pair.client, (struct sockaddr *)&client, &client_len));
	assert_same_addr((struct sockaddr *)&peer, (struct sockaddr *)&client);
	fx_rs_close(&pair);
}

static void names(int family)
{
	struct sockaddr_storage target, a, b;
	socklen_t alen = sizeof a, blen = sizeof b;
	struct fx_rs_pair pair;

	fx_rs_connect(family, &pair);
	fx_rs_addr(family, fx_port(), &target);
	FX_RS_OK(rgetpeername(pair.client, (struct sockaddr *)&a, &alen));
	assert_same_addr((struct sockaddr *)&a, (struct sockaddr *)&target);
	FX_RS_OK(rgetsockname(pair.server, (struct sockaddr *)&a, &alen));
	assert_same_addr((struct sockaddr *)&a, (struct sockaddr *)&target);
	FX_RS_OK(rgetsockname(pair.client, (struct sockaddr *)&a, &alen));
	FX_RS_OK(rgetpeername(pair.server, (struct sockaddr *)&b, &blen));
	assert_same_addr((struct sockaddr *)&a, (struct sockaddr *)&b);
	assert_int_equal(alen, family == AF_INET ? sizeof(struct sockaddr_in)
						 : sizeof(struct sockaddr_in6));
	assert_true(fx_sockaddr_port((struct sockaddr *)&a) != 0);
	fx_rs_close(&pair);
}

void rgetsockname__connected_ipv4(void **state)
{
	names(AF_INET);
}

void rgetsockname__connected_ipv6(void **state)
{
	names(AF_INET6);
}

/* ---------------------------------------------------------------- data */

#define STREAM_BYTES (1 << 20)

static void send_stream(struct fx_rs_thread *t)
{
	static const size_t pieces[] = { 1, 1000, 7, 65536, 4095, 300000 };
	unsigned char *buf = malloc(300000);
	int fd = *(int *)t->arg;
	size_t sent = 0;

	if (!buf) {
		fx_rs_thread_fail(t, "out of memory");
		return;
	}
	for (int i = 0; sent < STREAM_BYTES; i++) {
		size_t n = pieces[i % 6];
		ssize_t ret;

		if (n > STREAM_BYTES - sent)
			n = STREAM_BYTES - sent;
		fx_rs_pattern(buf, n, sent);
		ret = rsend(fd, buf, n, 0);
		if (ret <= 0) {
			fx_rs_thread_fail(t, "rsend: %s after %zu bytes", strerror(errno), sent);
			break;
		}
		sent += (size_t)ret;
		if ((size_t)ret < n) /* a blocking send may stop short: resend the rest */
			i--;
	}
	free(buf);
}

/* A stream: what rsend sent, rrecv returns, in order, whatever the pieces. */
void rsend__stream_in_order(void **state)
{
	static unsigned char buf[99999];
	/* Static: the sender may outlive a failed assertion in this frame. */
	static struct fx_rs_thread sender;
	static struct fx_rs_pair pair;
	size_t got = 0;

	fx_rs_connect(AF_INET, &pair);
	fx_rs_thread_start(&sender, send_stream, &pair.client);
	while (got < STREAM_BYTES) {
		ssize_t n;
		long bad;

		if (!(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN))
			fail_msg("rpoll: nothing to read within %d ms after %zu bytes", FX_RS_WAIT_MS, got);
		n = rrecv(pair.server, buf, sizeof buf - got % 5, 0);
		if (n <= 0)
			fail_msg("rrecv: %zd (%s) after %zu bytes", n, strerror(errno), got);
		bad = fx_rs_check_pattern(buf, (size_t)n, got);
		if (bad >= 0)
			fail_msg("byte %zu of the stream is wrong", got + (size_t)bad);
		got += (size_t)n;
	}
	fx_rs_thread_join(&sender, 10);
	fx_rs_close(&pair);
}

/* Both ways at once: each end sends 1 MiB while it receives the other's,
 * nonblocking, one thread driving both ends as rpoll says they are ready.
 * (Not a sender thread per end beside an rpoll thread: when a thread
 * blocked in rsend takes the completion event that woke upstream's rpoll,
 * rpoll blocks in ibv_get_cq_event past its timeout (rs_poll_events).
 * That way, the test hung on rdma-core 44 with 16-entry queues.)
 * `queues`: RDMA_SQSIZE and RDMA_RQSIZE of both ends (0: the defaults). */
static void both_ways(int queues)
{
	static unsigned char in[70000], out[2][70000];
	struct sockaddr_storage addr;
	struct fx_rs_pair pair;
	struct pollfd fds[2];
	size_t got[2] = { 0, 0 }, sent[2] = { 0, 0 };

	pair.listener = fx_rs_listen(AF_INET, fx_port());
	pair.client = fx_rsocket(AF_INET, SOCK_STREAM);
	for (int opt = RDMA_SQSIZE; queues && opt <= RDMA_RQSIZE; opt++) {
		FX_RS_OK(rsetsockopt(pair.listener, SOL_RDMA, opt, &queues, sizeof queues));
		FX_RS_OK(rsetsockopt(pair.client, SOL_RDMA, opt, &queues, sizeof queues));
	}
	fx_rs_addr(AF_INET, fx_port(), &addr);
	FX_RS_OK(rconnect(pair.client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(fx_rs_poll(pair.listener, POLLIN, FX_RS_WAIT_MS), POLLIN);
	pair.server = raccept(pair.listener, NULL, NULL);
	assert_true(pair.server >= 0);
	fds[0].fd = pair.server;
	fds[1].fd = pair.client;
	for (int i = 0; i < 2; i++)
		FX_RS_OK(rfcntl(fds[i].fd, F_SETFL, O_NONBLOCK));
	while (got[0] < STREAM_BYTES || got[1] < STREAM_BYTES) {
		for (int i = 0; i < 2; i++)
			fds[i].events = (got[i] < STREAM_BYTES ? POLLIN : 0) |
					(sent[i] < STREAM_BYTES ? POLLOUT : 0);
		if (rpoll(fds, 2, FX_RS_WAIT_MS) <= 0)
			fail_msg("rpoll: neither end ready within %d ms (%zu and %zu bytes in)",
				 FX_RS_WAIT_MS, got[0], got[1]);
		for (int i = 0; i < 2; i++) {
			size_t n = sizeof out[i] < STREAM_BYTES - sent[i] ? sizeof out[i]
									    : STREAM_BYTES - sent[i];
			ssize_t ret;

			if ((fds[i].revents & POLLOUT) && n) {
				fx_rs_pattern(out[i], n, sent[i]);
				ret = rsend(fds[i].fd, out[i], n, 0);
				if (ret < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
					fail_msg("rsend: %s after %zu bytes", strerror(errno), sent[i]);
				sent[i] += ret > 0 ? (size_t)ret : 0;
			}
			if (!(fds[i].revents & POLLIN))
				continue;
			ret = rrecv(fds[i].fd, in, sizeof in, 0);
			if (ret < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				continue;
			if (ret <= 0)
				fail_msg("rrecv: %zd (%s)", ret, strerror(errno));
			if (fx_rs_check_pattern(in, (size_t)ret, got[i]) >= 0)
				fail_msg("the stream into end %d is wrong after %zu bytes", i, got[i]);
			got[i] += (size_t)ret;
		}
	}
	fx_rs_close(&pair);
}

void rsend__both_ways_at_once(void **state)
{
	both_ways(0);
}

/* The smallest queues upstream allows (RS_QP_MIN_SIZE). */
void rsend__both_ways_small_queues(void **state)
{
	both_ways(16);
}

/* writev(2): the buffers are sent in order, as one. */
void rwritev__gathers(void **state)
{
	struct iovec iov[3] = { { "ab", 2 }, { "cde", 3 }, { "f", 1 } };
	struct fx_rs_pair pair;
	char buf[8];

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rwritev(pair.client, iov, 3), 6);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rread(pair.server, buf, 6), 6);
	assert_memory_equal(buf, "abcdef", 6);
	fx_rs_close(&pair);
}

/* read(2) and write(2) on a stream: rwrite sends all 8 bytes; rread
 * returns at most what it is asked for and keeps the rest, in order, for
 * the next call. */
void rread__partial(void **state)
{
	struct fx_rs_pair pair;
	char buf[16];

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rwrite(pair.client, "abcdefgh", 8), 8);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rread(pair.server, buf, 3), 3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(rread(pair.server, buf, sizeof buf), 5);
	assert_memory_equal(buf, "defgh", 5);
	fx_rs_close(&pair);
}

/* Upstream's vector receives fill the first vector only. */
void rreadv__first_vector_only(void **state)
{
	char a[4], b[4];
	struct iovec iov[2] = { { a, sizeof a }, { b, sizeof b } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rwrite(pair.client, "abcdefgh", 8), 8);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rreadv(pair.server, iov, 2), 4);
	assert_memory_equal(a, "abcd", 4);
	assert_int_equal(rrecvmsg(pair.server, &msg, 0), 4);
	assert_memory_equal(a, "efgh", 4);
	fx_rs_close(&pair);
}

void rsendmsg__gathers(void **state)
{
	struct iovec iov[2] = { { "hello ", 6 }, { "world", 5 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	struct fx_rs_pair pair;
	char buf[16];

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rsendmsg(pair.client, &msg, 0), 11);
	assert_null(fx_rs_recv_all(pair.server, buf, 11));
	assert_memory_equal(buf, "hello world", 11);
	fx_rs_close(&pair);
}

/* Ancillary data is not supported: ENOTSUP either way. */
void rsendmsg__control_refused(void **state)
{
	char control[CMSG_SPACE(sizeof(int))] = { 0 }, c = 'x';
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
			      .msg_controllen = sizeof control };
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	errno = 0;
	assert_int_equal(rsendmsg(pair.client, &msg, 0), -1);
	RC_ASSERT_ERRNO("rsendmsg", errno, ENOTSUP);
	errno = 0;
	assert_int_equal(rrecvmsg(pair.server, &msg, 0), -1);
	RC_ASSERT_ERRNO("rrecvmsg", errno, ENOTSUP);
	fx_rs_close(&pair);
}

void rrecv__dontwait_no_data(void **state)
{
	struct fx_rs_pair pair;
	char c;

	fx_rs_connect(AF_INET, &pair);
	errno = 0;
	assert_int_equal(rrecv(pair.server, &c, 1, MSG_DONTWAIT), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	fx_rs_close(&pair);
}

void rrecv__nonblocking_no_data(void **state)
{
	struct fx_rs_pair pair;
	char c;

	fx_rs_connect(AF_INET, &pair);
	FX_RS_OK(rfcntl(pair.server, F_SETFL, O_NONBLOCK));
	errno = 0;
	assert_int_equal(rrecv(pair.server, &c, 1, 0), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	fx_rs_close(&pair);
}

void rrecv__peek(void **state)
{
	struct fx_rs_pair pair;
	char buf[16] = { 0 };

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rsend(pair.client, "hello world", 11, 0), 11);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rrecv(pair.server, buf, 5, MSG_PEEK), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_null(fx_rs_recv_all(pair.server, buf, 11));
	assert_memory_equal(buf, "hello world", 11);
	fx_rs_close(&pair);
}

struct in_two {
	int fd;
	pid_t receiver; /* the thread in rrecv */
};

/* Half, then the rest once the receiver blocks for it. */
static void send_in_two(struct fx_rs_thread *t)
{
	static unsigned char buf[200];
	const struct in_two *to = t->arg;

	fx_rs_pattern(buf, sizeof buf, 0);
	if (rsend(to->fd, buf, 100, 0) != 100)
		fx_rs_thread_fail(t, "rsend: %s", strerror(errno));
	fx_await_sleeping(to->receiver);
	if (rsend(to->fd, buf + 100, 100, 0) != 100)
		fx_rs_thread_fail(t, "rsend: %s", strerror(errno));
}

/* recv(2): MSG_WAITALL blocks until the full request is satisfied. */
void rrecv__waitall(void **state)
{
	unsigned char buf[200];
	static struct fx_rs_thread sender; /* static: as in rsend__stream_in_order */
	static struct fx_rs_pair pair;

	static struct in_two to;

	fx_rs_connect(AF_INET, &pair);
	to = (struct in_two){ pair.client, fx_tid() };
	fx_rs_thread_start(&sender, send_in_two, &to);
	assert_int_equal(rrecv(pair.server, buf, sizeof buf, MSG_WAITALL), sizeof buf);
	assert_int_equal(fx_rs_check_pattern(buf, sizeof buf, 0), -1);
	fx_rs_thread_join(&sender, 5);
	fx_rs_close(&pair);
}

/* recv(2): after the peer's orderly shutdown, 0; what came before first. */
void rrecv__end_after_peer_closes(void **state)
{
	struct fx_rs_pair pair;
	char buf[4];

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rsend(pair.client, "abc", 3, 0), 3);
	assert_int_equal(rclose(pair.client), 0);
	pair.client = -1;
	assert_null(fx_rs_recv_all(pair.server, buf, 3));
	assert_memory_equal(buf, "abc", 3);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rrecv(pair.server, buf, sizeof buf, 0), 0);
	fx_rs_close(&pair);
}

/* shutdown(2) SHUT_WR: the peer reads what was sent, then the end; the
 * other direction still works. */
void rshutdown__write_side(void **state)
{
	struct fx_rs_pair pair;
	char buf[4];

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rsend(pair.client, "abc", 3, 0), 3);
	FX_RS_OK(rshutdown(pair.client, SHUT_WR));
	assert_null(fx_rs_recv_all(pair.server, buf, 3));
	assert_memory_equal(buf, "abc", 3);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rrecv(pair.server, buf, sizeof buf, 0), 0);
	assert_int_equal(rsend(pair.server, "xyz", 3, 0), 3);
	assert_null(fx_rs_recv_all(pair.client, buf, 3));
	assert_memory_equal(buf, "xyz", 3);
	fx_rs_close(&pair);
}

/* SHUT_RDWR: this side reads the end at once; the peer sees the hangup
 * and the end too. */
void rshutdown__both_sides(void **state)
{
	struct fx_rs_pair pair;
	char c;

	fx_rs_connect(AF_INET, &pair);
	FX_RS_OK(rshutdown(pair.client, SHUT_RDWR));
	assert_int_equal(rrecv(pair.client, &c, 1, 0), 0);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLHUP);
	assert_int_equal(rrecv(pair.server, &c, 1, 0), 0);
	fx_rs_close(&pair);
}

/* SHUT_RD: this side reads the end at once and the peer is not told:
 * this side still sends, and the peer sees no hangup. */
void rshutdown__read_side(void **state)
{
	struct fx_rs_pair pair;
	char buf[4];

	fx_rs_connect(AF_INET, &pair);
	FX_RS_OK(rshutdown(pair.client, SHUT_RD));
	assert_int_equal(rrecv(pair.client, buf, sizeof buf, 0), 0);
	assert_int_equal(rsend(pair.client, "abc", 3, 0), 3);
	assert_null(fx_rs_recv_all(pair.server, buf, 3));
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(fx_rs_poll(pair.server, POLLIN, 0), 0);
	fx_rs_close(&pair);
}

/* SHUT_WR, then SHUT_RD: the peer reads the end, then sees the hangup
 * once neither way is left. */
void rshutdown__write_then_read(void **state)
{
	struct fx_rs_pair pair;
	char c;

	fx_rs_connect(AF_INET, &pair);
	FX_RS_OK(rshutdown(pair.client, SHUT_WR));
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rrecv(pair.server, &c, 1, 0), 0);
	assert_false(fx_rs_poll(pair.server, POLLIN, 0) & POLLHUP);
	FX_RS_OK(rshutdown(pair.client, SHUT_RD));
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLHUP);
	fx_rs_close(&pair);
}

/* shutdown(2) says EINVAL for a `how` other than SHUT_RD, SHUT_WR and
 * SHUT_RDWR, and ENOTCONN for a socket not connected. Upstream's rshutdown
 * checks neither: 0 on a socket not connected, whatever `how`; on a
 * connection another `how` acts as SHUT_RD. */
void rshutdown__how_not_checked(void **state)
{
	int fd = fx_rsocket(AF_INET, SOCK_STREAM), listener;
	struct fx_rs_pair pair;
	char c;

	assert_int_equal(rshutdown(fd, SHUT_RDWR), 0);
	assert_int_equal(rshutdown(fd, 99), 0);
	rc_note_documented(false);
	rclose(fd);
	listener = fx_rs_listen(AF_INET, fx_port());
	assert_int_equal(rshutdown(listener, SHUT_WR), 0);
	rclose(listener);
	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rshutdown(pair.client, 99), 0);
	assert_int_equal(rrecv(pair.client, &c, 1, 0), 0);
	assert_int_equal(rsend(pair.client, "z", 1, 0), 1);
	assert_null(fx_rs_recv_all(pair.server, &c, 1));
	assert_int_equal(c, 'z');
	fx_rs_close(&pair);
}

/* ---------------------------------------------------------------- addresses on a stream */

/* sendto(2) on a connection-mode socket: EISCONN for an address, or a
 * length alone. */
void rsendto__stream_address_refused(void **state)
{
	struct sockaddr_storage addr;
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	fx_rs_addr(AF_INET, fx_port(), &addr);
	errno = 0;
	assert_int_equal(rsendto(pair.client, "x", 1, 0, (struct sockaddr *)&addr, fx_rs_len(&addr)),
			 -1);
	RC_ASSERT_ERRNO("rsendto", errno, EISCONN);
	errno = 0;
	assert_int_equal(rsendto(pair.client, "x", 1, 0, NULL, sizeof addr), -1);
	RC_ASSERT_ERRNO("rsendto", errno, EISCONN);
	assert_int_equal(rsendto(pair.client, "y", 1, 0, NULL, 0), 1);
	fx_rs_close(&pair);
}

/* Upstream's rsendmsg hands the vectors on (rsendv) and never looks at
 * msg_name: on a connection, an address given is ignored. */
void rsendmsg__stream_name_ignored(void **state)
{
	struct iovec iov = { "named", 5 };
	struct sockaddr_storage addr;
	struct msghdr msg = { .msg_name = &addr, .msg_iov = &iov, .msg_iovlen = 1 };
	struct fx_rs_pair pair;
	char buf[8];

	fx_rs_connect(AF_INET, &pair);
	fx_rs_addr(AF_INET, fx_free_port(), &addr);
	msg.msg_namelen = fx_rs_len(&addr);
	assert_int_equal(rsendmsg(pair.client, &msg, 0), 5);
	assert_null(fx_rs_recv_all(pair.server, buf, 5));
	assert_memory_equal(buf, "named", 5);
	fx_rs_close(&pair);
}

/* recvfrom(2) on a connection: the data, and the peer's address. */
void rrecvfrom__stream_peer_address(void **state)
{
	struct sockaddr_storage from, client;
	socklen_t len = sizeof from, client_len = sizeof client;
	struct fx_rs_pair pair;
	char buf[4];

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rsend(pair.client, "abc", 3, 0), 3);
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLIN);
	assert_int_equal(rrecvfrom(pair.server, buf, sizeof buf, 0, (struct sockaddr *)&from, &len),
			 3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	FX_RS_OK(rgetsockname(pair.client, (struct sockaddr *)&client, &client_len));
	assert_same_addr((struct sockaddr *)&from, (struct sockaddr *)&client);
	fx_rs_close(&pair);
}
