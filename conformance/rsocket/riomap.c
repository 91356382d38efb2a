/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: riomap, riounmap, riowrite: direct placement into a peer's
 * buffer (man rsocket(7)), with upstream's answers where the page is
 * silent. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "fixtures.h"
#include "rsock.h"

#define MAP_BYTES 65536

/* A connection whose two ends each take one mapping from the other
 * (RDMA_IOMAPSIZE 1, set on the listener for the accepted end). */
static void connect_mapped(struct fx_rs_pair *pair)
{
	struct sockaddr_storage addr;
	int one = 1;

	pair->server = -1;
	pair->listener = fx_rs_listen(AF_INET, fx_port());
	FX_RS_OK(rsetsockopt(pair->listener, SOL_RDMA, RDMA_IOMAPSIZE, &one, sizeof one));
	pair->client = fx_rsocket(AF_INET, SOCK_STREAM);
	FX_RS_OK(rsetsockopt(pair->client, SOL_RDMA, RDMA_IOMAPSIZE, &one, sizeof one));
	fx_rs_addr(AF_INET, fx_port(), &addr);
	FX_RS_OK(rconnect(pair->client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(fx_rs_poll(pair->listener, POLLIN, FX_RS_WAIT_MS), POLLIN);
	pair->server = raccept(pair->listener, NULL, NULL);
	assert_true(pair->server >= 0);
}

/* Before the socket has a device (upstream: no PD yet). */
void riomap__unconnected(void **state)
{
	static char buf[4096];
	int fd = fx_rsocket(AF_INET, SOCK_STREAM);

	errno = 0;
	assert_int_equal(riomap(fd, buf, sizeof buf, PROT_WRITE, 0, -1), -1);
	RC_ASSERT_ERRNO("riomap", errno, EINVAL);
	rclose(fd);
}

void riomap__protection(void **state)
{
	static char buf[4096];
	struct fx_rs_pair pair;

	connect_mapped(&pair);
	errno = 0;
	assert_int_equal(riomap(pair.client, buf, sizeof buf, PROT_READ, 0, -1), -1);
	RC_ASSERT_ERRNO("riomap", errno, EINVAL);
	fx_rs_close(&pair);
}

/* The peer takes no mapping (RDMA_IOMAPSIZE is 0 by default). */
void riomap__peer_takes_none(void **state)
{
	static char buf[4096];
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	errno = 0;
	assert_int_equal(riomap(pair.client, buf, sizeof buf, PROT_WRITE, 0, -1), -1);
	RC_ASSERT_ERRNO("riomap", errno, ENOMEM);
	fx_rs_close(&pair);
}

/* PROT_NONE maps for local use; offset -1 lets rsockets choose the
 * buffer's address. riounmap takes exactly what was mapped. */
void riounmap__what_was_mapped(void **state)
{
	static char buf[4096];
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	errno = 0;
	assert_int_equal(riounmap(pair.client, buf, sizeof buf), -1);
	RC_ASSERT_ERRNO("riounmap", errno, EINVAL);
	assert_int_equal(riomap(pair.client, buf, sizeof buf, PROT_NONE, 0, -1),
			 (off_t)(uintptr_t)buf);
	errno = 0;
	assert_int_equal(riounmap(pair.client, buf, sizeof buf / 2), -1);
	RC_ASSERT_ERRNO("riounmap", errno, EINVAL);
	assert_int_equal(riounmap(pair.client, buf, sizeof buf), 0);
	/* Of two mappings, the one named goes, and the other stays. */
	assert_int_equal(riomap(pair.client, buf, sizeof buf / 2, PROT_NONE, 0, -1),
			 (off_t)(uintptr_t)buf);
	assert_int_equal(riomap(pair.client, buf + sizeof buf / 2, sizeof buf / 2, PROT_NONE, 0, -1),
			 (off_t)(uintptr_t)(buf + sizeof buf / 2));
	assert_int_equal(riounmap(pair.client, buf + sizeof buf / 2, sizeof buf / 2), 0);
	errno = 0;
	assert_int_equal(riounmap(pair.client, buf + sizeof buf / 2, sizeof buf / 2), -1);
	RC_ASSERT_ERRNO("riounmap", errno, EINVAL);
	assert_int_equal(riounmap(pair.client, buf, sizeof buf / 2), 0);
	fx_rs_close(&pair);
}

/* The server maps at offset 0 and sends a byte (the mapping goes ahead of
 * it); the client riowrites, then sends a byte, which arrives after the
 * written data (rsocket(7)). */
void riowrite__lands_before_next_message(void **state)
{
	static unsigned char target[MAP_BYTES], data[MAP_BYTES];
	struct fx_rs_pair pair;
	char c;

	connect_mapped(&pair);
	assert_int_equal(riomap(pair.server, target, sizeof target, PROT_WRITE, 0, 0), 0);
	assert_int_equal(rsend(pair.server, "m", 1, 0), 1);
	assert_null(fx_rs_recv_all(pair.client, &c, 1));
	fx_rs_pattern(data, sizeof data, 0);
	assert_int_equal(riowrite(pair.client, data, sizeof data, 0, 0), sizeof data);
	assert_int_equal(rsend(pair.client, "w", 1, 0), 1);
	assert_null(fx_rs_recv_all(pair.server, &c, 1));
	assert_int_equal(c, 'w');
	assert_int_equal(fx_rs_check_pattern(target, sizeof target, 0), -1);
	assert_int_equal(riounmap(pair.server, target, sizeof target), 0);
	fx_rs_close(&pair);
}

/* Upstream writes nothing, and says 0, where no mapping covers the offset. */
void riowrite__no_mapping(void **state)
{
	static unsigned char data[100];
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(riowrite(pair.client, data, sizeof data, 0, 0), 0);
	fx_rs_close(&pair);
}

/* The peer takes as many mappings as its RDMA_IOMAPSIZE (1 here): a
 * second is ENOMEM, and riounmap gives the one back. With offset -1 the
 * buffer's address is the offset. */
void riomap__mappings_used_up(void **state)
{
	static char a[4096], b[4096];
	struct fx_rs_pair pair;

	connect_mapped(&pair);
	assert_int_equal(riomap(pair.server, a, sizeof a, PROT_WRITE, 0, -1), (off_t)(uintptr_t)a);
	errno = 0;
	assert_int_equal(riomap(pair.server, b, sizeof b, PROT_WRITE, 0, 8192), -1);
	RC_ASSERT_ERRNO("riomap", errno, ENOMEM);
	assert_int_equal(riounmap(pair.server, a, sizeof a), 0);
	assert_int_equal(riomap(pair.server, b, sizeof b, PROT_WRITE, 0, 8192), 8192);
	assert_int_equal(riounmap(pair.server, b, sizeof b), 0);
	fx_rs_close(&pair);
}

/* Before a connection the peer has published nothing, and a datagram
 * socket has no mappings: riowrite writes nothing and says 0. */
void riowrite__unconnected(void **state)
{
	static unsigned char data[64];
	int fd = fx_rsocket(AF_INET, SOCK_STREAM), dg = fx_rsocket(AF_INET, SOCK_DGRAM);

	assert_int_equal(riowrite(fd, data, sizeof data, 0, 0), 0);
	assert_int_equal(riowrite(dg, data, sizeof data, 0, 0), 0);
	fx_rs_close_unbound(dg, AF_INET);
	rclose(fd);
}
