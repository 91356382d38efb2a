/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rsocket(SOCK_DGRAM), rbind, rconnect, rsendto, rsend,
 * rrecvfrom, rgetsockname, rgetpeername on datagram sockets, with udp(7)'s
 * rules. A datagram may be lost, as UDP's may: a test sends again until
 * the peer sees one (at most 5 s), as udpong does. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "fixtures.h"
#include "rsock.h"

/* Send buf to `to` (NULL: where the socket is connected) every 100 ms
 * until `at` has a datagram to read. */
static void send_until_seen(int fd, const void *buf, size_t len, const struct sockaddr_storage *to,
			    int at)
{
	for (int i = 0; i < 50; i++) {
		ssize_t n = to ? rsendto(fd, buf, len, 0, (const struct sockaddr *)to, fx_rs_len(to))
			       : rsend(fd, buf, len, 0);

		if (n != (ssize_t)len)
			fail_msg("rsendto: %zd (%s), not %zu", n, strerror(errno), len);
		if (fx_rs_poll(at, POLLIN, 100) & POLLIN)
			return;
	}
	fail_msg("no datagram arrived within 5 s");
}

/* Read and drop what else came: copies of a datagram sent again. */
static void drain(int fd)
{
	char buf[2048];

	while (rrecvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL) > 0)
		;
}

/* A bound datagram socket at fx_addr(family):port (0: ephemeral). */
static int bound(int family, uint16_t port)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(family, SOCK_DGRAM);

	fx_rs_addr(family, port, &addr);
	FX_RS_OK(rbind(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	return fd;
}

static uint16_t port_of(int fd)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof addr;

	FX_RS_OK(rgetsockname(fd, (struct sockaddr *)&addr, &len));
	return ntohs(fx_sockaddr_port((struct sockaddr *)&addr));
}

static void assert_from(const struct sockaddr_storage *from, int family, uint16_t port)
{
	struct sockaddr_storage want;
	const void *a, *b;
	size_t n;

	fx_rs_addr(family, port, &want);
	assert_int_equal(from->ss_family, family);
	a = family == AF_INET ? (const void *)&((const struct sockaddr_in *)from)->sin_addr
			      : (const void *)&((const struct sockaddr_in6 *)from)->sin6_addr;
	b = family == AF_INET ? (const void *)&((const struct sockaddr_in *)&want)->sin_addr
			      : (const void *)&((const struct sockaddr_in6 *)&want)->sin6_addr;
	n = family == AF_INET ? 4 : 16;
	assert_memory_equal(a, b, n);
	assert_int_equal(ntohs(fx_sockaddr_port((const struct sockaddr *)from)), port);
}

/* Upstream: EINVAL until the socket is bound, connected or has sent. */
void rrecvfrom__unbound(void **state)
{
	int fd = fx_rsocket(AF_INET, SOCK_DGRAM);
	char c;

	errno = 0;
	assert_int_equal(rrecvfrom(fd, &c, 1, MSG_DONTWAIT, NULL, NULL), -1);
	RC_ASSERT_ERRNO("rrecvfrom", errno, EINVAL);
	fx_rs_close_unbound(fd, AF_INET);
}

static void close_fd(void *fd)
{
	*(int *)fd = rclose(*(int *)fd);
}

/* Where upstream's rclose blocks for ever, the mock closes and says so. */
void rclose__datagram_never_bound(void **state)
{
	char text[512];
	int fd;

	rc_require_mock("upstream's rclose blocks for ever here");
	fd = fx_rsocket(AF_INET, SOCK_DGRAM);
	assert_int_equal(fx_stderr_of(close_fd, &fd, text, sizeof text), 1);
	assert_int_equal(fd, 0);
	if (!strstr(text, "rdmamock: rclose: datagram rsocket") || !strstr(text, "blocks here for ever"))
		fail_msg("the mock said: %s", text);
}

void rrecvfrom__dontwait_no_datagram(void **state)
{
	int fd = bound(AF_INET, fx_port());
	char c;

	errno = 0;
	assert_int_equal(rrecvfrom(fd, &c, 1, MSG_DONTWAIT, NULL, NULL), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	rclose(fd);
}

/* A datagram and its answer; each side learns where the other sent from. */
static void roundtrip(int family)
{
	int server, client;
	struct sockaddr_storage to, from;
	socklen_t len = sizeof from;
	char buf[16];

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	server = bound(family, fx_port());
	client = bound(family, 0);
	fx_rs_addr(family, fx_port(), &to);
	send_until_seen(client, "ping", 4, &to, server);
	assert_int_equal(rrecvfrom(server, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), 4);
	assert_memory_equal(buf, "ping", 4);
	assert_from(&from, family, port_of(client));
	send_until_seen(server, "pong", 4, &from, client);
	len = sizeof from;
	assert_int_equal(rrecvfrom(client, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), 4);
	assert_memory_equal(buf, "pong", 4);
	assert_from(&from, family, fx_port());
	rclose(client);
	rclose(server);
}

void rsendto__roundtrip_ipv4(void **state)
{
	roundtrip(AF_INET);
}

void rsendto__roundtrip_ipv6(void **state)
{
	roundtrip(AF_INET6);
}

/* udp(7): datagrams keep their boundaries; a short buffer truncates one,
 * and the rest of it is gone. */
void rrecvfrom__datagram_boundaries(void **state)
{
	static unsigned char big[300], buf[2048];
	struct sockaddr_storage to;
	int server, client;

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	server = bound(AF_INET, fx_port());
	client = bound(AF_INET, 0);
	fx_rs_addr(AF_INET, fx_port(), &to);
	/* The first datagram finds the way (upstream sends it over UDP, and
	 * the server answers with its QP); copies sent meanwhile are dropped. */
	send_until_seen(client, "x", 1, &to, server);
	assert_int_equal(rrecvfrom(server, buf, sizeof buf, 0, NULL, NULL), 1);
	drain(server);
	fx_rs_pattern(big, sizeof big, 0);
	send_until_seen(client, big, 10, &to, server);
	assert_int_equal(rrecvfrom(server, buf, sizeof buf, 0, NULL, NULL), 10);
	drain(server);
	send_until_seen(client, big, sizeof big, &to, server);
	assert_int_equal(rrecvfrom(server, buf, 100, 0, NULL, NULL), 100);
	assert_int_equal(fx_rs_check_pattern(buf, 100, 0), -1);
	drain(server);
	send_until_seen(client, "y", 1, &to, server);
	assert_int_equal(rrecvfrom(server, buf, sizeof buf, 0, NULL, NULL), 1);
	assert_int_equal(buf[0], 'y');
	rclose(client);
	rclose(server);
}

/* A connected datagram socket sends without an address and names its
 * peer. */
void rconnect__datagram_peer(void **state)
{
	struct sockaddr_storage to, peer;
	socklen_t len = sizeof peer;
	char buf[8];

	int server, client;

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	server = bound(AF_INET, fx_port());
	client = fx_rsocket(AF_INET, SOCK_DGRAM);
	fx_rs_addr(AF_INET, fx_port(), &to);
	FX_RS_OK(rconnect(client, (struct sockaddr *)&to, fx_rs_len(&to)));
	FX_RS_OK(rgetpeername(client, (struct sockaddr *)&peer, &len));
	assert_from(&peer, AF_INET, fx_port());
	send_until_seen(client, "hi", 2, NULL, server);
	assert_int_equal(rrecvfrom(server, buf, sizeof buf, 0, NULL, NULL), 2);
	assert_memory_equal(buf, "hi", 2);
	rclose(client);
	rclose(server);
}

/* bind(2) on a datagram socket: a second bind is EINVAL, a port another
 * socket holds EADDRINUSE, a short address EINVAL. Before any bind the
 * name is the family's wildcard at port 0, and with no rconnect there is
 * no peer (ENOTCONN). */
void rbind__datagram(void **state)
{
	struct sockaddr_storage addr, name;
	socklen_t len = sizeof name;
	int fd = fx_rsocket(AF_INET, SOCK_DGRAM), other;

	memset(&name, 0xa5, sizeof name);
	FX_RS_OK(rgetsockname(fd, (struct sockaddr *)&name, &len));
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(name.ss_family, AF_INET);
	assert_int_equal(fx_sockaddr_port((struct sockaddr *)&name), 0);
	assert_int_equal(((struct sockaddr_in *)&name)->sin_addr.s_addr, htonl(INADDR_ANY));
	len = sizeof name;
	errno = 0;
	assert_int_equal(rgetpeername(fd, (struct sockaddr *)&name, &len), -1);
	RC_ASSERT_ERRNO("rgetpeername", errno, ENOTCONN);
	fx_rs_addr(AF_INET, fx_port(), &addr);
	errno = 0;
	assert_int_equal(rbind(fd, (struct sockaddr *)&addr, sizeof(struct sockaddr_in) - 1), -1);
	RC_ASSERT_ERRNO("rbind", errno, EINVAL);
	FX_RS_OK(rbind(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	errno = 0;
	assert_int_equal(rbind(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rbind", errno, EINVAL);
	other = fx_rsocket(AF_INET, SOCK_DGRAM);
	errno = 0;
	assert_int_equal(rbind(other, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	RC_ASSERT_ERRNO("rbind", errno, EADDRINUSE);
	fx_rs_close_unbound(other, AF_INET);
	rclose(fd);
}

/* A datagram socket's options, but SOL_RDMA's, go to its UDP socket first
 * (upstream's rsetsockopt): what the kernel refuses for UDP fails with
 * its errno (a TCP option, an IPv6 option on IPv4: ENOPROTOOPT; a short
 * optlen: EINVAL), and an option the kernel takes that rsockets does not
 * name is 0, where a stream socket says ENOTSUP. */
void rsetsockopt__datagram_udp_socket(void **state)
{
	int fd = fx_rsocket(AF_INET, SOCK_DGRAM), fd6 = fx_rsocket(AF_INET6, SOCK_DGRAM), val = 1;
	socklen_t len = sizeof val;

	errno = 0;
	assert_int_equal(rsetsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &val, sizeof val), -1);
	RC_ASSERT_ERRNO("rsetsockopt", errno, ENOPROTOOPT);
	errno = 0;
	assert_int_equal(rsetsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &val, sizeof val), -1);
	RC_ASSERT_ERRNO("rsetsockopt", errno, ENOPROTOOPT);
	errno = 0;
	assert_int_equal(rsetsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &val, 2), -1);
	RC_ASSERT_ERRNO("rsetsockopt", errno, EINVAL);
	assert_int_equal(rsetsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &val, sizeof val), 0);
	FX_RS_OK(rsetsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &val, sizeof val));
	FX_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &val, &len));
	assert_int_equal(val, 1);
	val = 32;
	FX_RS_OK(rsetsockopt(fd, SOL_RDMA, RDMA_SQSIZE, &val, sizeof val));
	FX_RS_OK(rgetsockopt(fd, SOL_RDMA, RDMA_SQSIZE, &val, &len));
	assert_int_equal(val, 32);
	val = 1;
	FX_RS_OK(rsetsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &val, sizeof val));
	val = 0;
	FX_RS_OK(rgetsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &val, &len));
	assert_int_equal(val, 1);
	fx_rs_close_unbound(fd6, AF_INET6);
	fx_rs_close_unbound(fd, AF_INET);
}

/* O_NONBLOCK (rfcntl) as MSG_DONTWAIT; rpoll shows a bound socket
 * writable, and an unbound one nothing. */
void rrecvfrom__nonblocking_socket(void **state)
{
	int fd = fx_rsocket(AF_INET, SOCK_DGRAM);
	struct sockaddr_storage addr;
	char c;

	assert_int_equal(fx_rs_poll(fd, POLLIN | POLLOUT, 0), 0);
	fx_rs_addr(AF_INET, fx_port(), &addr);
	FX_RS_OK(rbind(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	FX_RS_OK(rfcntl(fd, F_SETFL, O_NONBLOCK));
	assert_true(rfcntl(fd, F_GETFL) & O_NONBLOCK);
	errno = 0;
	assert_int_equal(rrecvfrom(fd, &c, 1, 0, NULL, NULL), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	assert_int_equal(fx_rs_poll(fd, POLLIN | POLLOUT, 0), POLLOUT);
	rclose(fd);
}

/* MSG_PEEK leaves the datagram for the next call; an address buffer
 * shorter than the sender's address gets what fits, its length kept. */
void rrecvfrom__peek_and_short_address(void **state)
{
	struct sockaddr_storage to, from;
	socklen_t len = 4;
	int server, client;
	char buf[16];

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	server = bound(AF_INET, fx_port());
	client = bound(AF_INET, 0);
	fx_rs_addr(AF_INET, fx_port(), &to);
	send_until_seen(client, "peek", 4, &to, server);
	assert_int_equal(rrecvfrom(server, buf, sizeof buf, MSG_PEEK, NULL, NULL), 4);
	assert_memory_equal(buf, "peek", 4);
	memset(&from, 0xa5, sizeof from);
	assert_int_equal(rrecvfrom(server, buf, 2, 0, (struct sockaddr *)&from, &len), 2);
	assert_memory_equal(buf, "pe", 2);
	assert_int_equal(len, 4);
	assert_int_equal(from.ss_family, AF_INET);
	assert_int_equal(ntohs(fx_sockaddr_port((struct sockaddr *)&from)), port_of(client));
	assert_int_equal(((unsigned char *)&from)[4], 0xa5);
	rclose(client);
	rclose(server);
}

/* One socket, two peers: each datagram names its sender, and each
 * answer sent there reaches that peer alone. */
void rsendto__several_peers(void **state)
{
	struct sockaddr_storage to, from[2];
	int server, client[2];
	char buf[16];

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	server = bound(AF_INET, fx_port());
	fx_rs_addr(AF_INET, fx_port(), &to);
	for (int i = 0; i < 2; i++) {
		socklen_t len = sizeof from[i];

		client[i] = bound(AF_INET, 0);
		send_until_seen(client[i], i ? "two" : "one", 3, &to, server);
		assert_int_equal(rrecvfrom(server, buf, sizeof buf, 0, (struct sockaddr *)&from[i],
					   &len), 3);
		assert_memory_equal(buf, i ? "two" : "one", 3);
		assert_from(&from[i], AF_INET, port_of(client[i]));
		drain(server);
	}
	for (int i = 0; i < 2; i++) {
		send_until_seen(server, i ? "to-2" : "to-1", 4, &from[i], client[i]);
		assert_int_equal(rrecvfrom(client[i], buf, sizeof buf, 0, NULL, NULL), 4);
		assert_memory_equal(buf, i ? "to-2" : "to-1", 4);
	}
	rclose(client[0]);
	rclose(client[1]);
	rclose(server);
}

/* Upstream's rsendto makes its address the one rsend sends to
 * (rs->conn_dest), even on a socket connected elsewhere; rgetpeername
 * still names the address connected to. udp(7) has the connected address
 * as the default. */
void rsend__datagram_goes_where_rsendto_went(void **state)
{
	struct sockaddr_storage a, b, peer;
	socklen_t len = sizeof peer;
	int server_a, server_b, client;
	char buf[8];

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	server_a = bound(AF_INET, fx_port());
	server_b = bound(AF_INET, 0);
	fx_rs_addr(AF_INET, fx_port(), &a);
	fx_rs_addr(AF_INET, port_of(server_b), &b);
	client = fx_rsocket(AF_INET, SOCK_DGRAM);
	FX_RS_OK(rconnect(client, (struct sockaddr *)&a, fx_rs_len(&a)));
	send_until_seen(client, "b", 1, &b, server_b);
	assert_int_equal(rrecvfrom(server_b, buf, sizeof buf, 0, NULL, NULL), 1);
	drain(server_b);
	send_until_seen(client, "again", 5, NULL, server_b);
	assert_int_equal(rrecvfrom(server_b, buf, sizeof buf, 0, NULL, NULL), 5);
	assert_memory_equal(buf, "again", 5);
	rc_note_documented(false);
	FX_RS_OK(rgetpeername(client, (struct sockaddr *)&peer, &len));
	assert_from(&peer, AF_INET, fx_port());
	rclose(client);
	rclose(server_b);
	rclose(server_a);
}

/* connect(2) on a UDP socket: an address shorter than the family's, or
 * none, is EINVAL (upstream's rconnect hands it to connect(2) on its UDP
 * socket before it looks for a way there); the socket is left as it was,
 * and binds. */
void rconnect__datagram_short_address(void **state)
{
	struct sockaddr_storage to;
	int fd;

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	fd = fx_rsocket(AF_INET, SOCK_DGRAM);
	fx_rs_addr(AF_INET, fx_port(), &to);
	errno = 0;
	assert_int_equal(rconnect(fd, (struct sockaddr *)&to, sizeof(struct sockaddr_in) - 1), -1);
	RC_ASSERT_ERRNO("rconnect", errno, EINVAL);
	errno = 0;
	assert_int_equal(rconnect(fd, NULL, 0), -1);
	RC_ASSERT_ERRNO("rconnect", errno, EINVAL);
	fx_rs_close_unbound(fd, AF_INET);
}

struct blocked_recv {
	int fd;
	ssize_t n;
	char buf[16];
	int done;
};

/* The receiver, in the test's second thread: if nothing comes, the main
 * thread's join fails the test rather than waiting for ever. */
static void recv_blocking(struct fx_rs_thread *t)
{
	struct blocked_recv *r = t->arg;

	r->n = rrecvfrom(r->fd, r->buf, sizeof r->buf, 0, NULL, NULL);
	if (r->n < 0)
		fx_rs_thread_fail(t, "rrecvfrom: %s", strerror(errno));
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

/* recv(2): with no datagram waiting, a blocking rrecvfrom waits for one
 * to arrive, and returns it. The datagram is sent once the receiver is
 * (most likely) asleep, then again every 100 ms, as it may be lost,
 * until the receiver has one. */
void rrecvfrom__blocks_until_datagram(void **state)
{
	struct blocked_recv r = { 0 };
	struct sockaddr_storage to;
	struct fx_rs_thread t;
	int client;

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	r.fd = bound(AF_INET, fx_port());
	client = bound(AF_INET, 0);
	fx_rs_addr(AF_INET, fx_port(), &to);
	fx_rs_thread_start(&t, recv_blocking, &r);
	for (int i = 0; i < 50 && !__atomic_load_n(&r.done, __ATOMIC_ACQUIRE); i++) {
		rc_sleep_ms(100);
		if (rsendto(client, "late", 4, 0, (struct sockaddr *)&to, fx_rs_len(&to)) != 4)
			fail_msg("rsendto: %s", strerror(errno));
	}
	fx_rs_thread_join(&t, 3);
	assert_int_equal(r.n, 4);
	assert_memory_equal(r.buf, "late", 4);
	drain(r.fd);
	rclose(client);
	rclose(r.fd);
}

/* shutdown(2) would end receiving (SHUT_RD) and sending (SHUT_WR);
 * upstream's rshutdown acts on connections only, and a datagram socket
 * is none: 0, and the socket reads (EAGAIN: nothing there yet, not
 * EINVAL) and shows writable as before. */
void rshutdown__datagram_does_nothing(void **state)
{
	int fd = bound(AF_INET, fx_port());
	char c;

	assert_int_equal(rshutdown(fd, SHUT_RDWR), 0);
	errno = 0;
	assert_int_equal(rrecvfrom(fd, &c, 1, MSG_DONTWAIT, NULL, NULL), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	assert_int_equal(fx_rs_poll(fd, POLLIN | POLLOUT, 0), POLLOUT);
	rc_note_documented(false);
	rclose(fd);
}
