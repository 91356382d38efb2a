/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rsocket(SOCK_DGRAM), rbind, rconnect, rsendto, rsend,
 * rrecvfrom, rgetsockname, rgetpeername on datagram sockets, with udp(7)'s
 * rules. A datagram may be lost, as UDP's may: a test sends again until
 * the peer sees one (at most 5 s), as udpong does. */
#include <arpa/inet.h>
#include <errno.h>
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
