/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_bind_addr(): conflicts, foreign addresses, state and
 * argument checks, and the device a bind attaches. */
#include <errno.h>
#include <string.h>

#include "fixtures.h"

struct two_ids {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *first, *second;
};

static void two_ids_create(struct two_ids *t)
{
	t->ch = fx_channel();
	FX_OK(rdma_create_id(t->ch, &t->first, NULL, RDMA_PS_TCP));
	FX_OK(rdma_create_id(t->ch, &t->second, NULL, RDMA_PS_TCP));
}

static void two_ids_destroy(struct two_ids *t)
{
	FX_OK(rdma_destroy_id(t->first));
	FX_OK(rdma_destroy_id(t->second));
	rdma_destroy_event_channel(t->ch);
}

static int bind_to(struct rdma_cm_id *id, int family, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;

	fx_sockaddr(family, addr, port, &ss);
	return rdma_bind_addr(id, (struct sockaddr *)&ss);
}

/* The first bind succeeds; the second fails with `expected`. */
static void conflict(int family, const char *first, const char *second, int expected)
{
	struct two_ids t;
	int ret;

	two_ids_create(&t);
	FX_OK(bind_to(t.first, family, first, fx_port()));
	errno = 0;
	ret = bind_to(t.second, family, second, fx_port());
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_bind_addr", errno, expected);
	two_ids_destroy(&t);
}

void rdma_bind_addr__in_use_ipv4(void **state)
{
	conflict(AF_INET, fx_addr(AF_INET), fx_addr(AF_INET), EADDRINUSE);
}

void rdma_bind_addr__in_use_ipv6(void **state)
{
	conflict(AF_INET6, fx_addr(AF_INET6), fx_addr(AF_INET6), EADDRINUSE);
}

void rdma_bind_addr__wildcard_after_specific(void **state)
{
	conflict(AF_INET, fx_addr(AF_INET), "0.0.0.0", EADDRNOTAVAIL);
}

void rdma_bind_addr__specific_after_wildcard(void **state)
{
	conflict(AF_INET, "0.0.0.0", fx_addr(AF_INET), EADDRNOTAVAIL);
}

static void not_local(int family, const char *addr)
{
	struct two_ids t;
	int ret;

	two_ids_create(&t);
	errno = 0;
	ret = bind_to(t.first, family, addr, fx_port());
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_bind_addr", errno, EADDRNOTAVAIL);
	two_ids_destroy(&t);
}

/* Documentation ranges (RFC 5737, RFC 3849): never a local address. */
void rdma_bind_addr__not_local_ipv4(void **state) { not_local(AF_INET, "198.51.100.1"); }
void rdma_bind_addr__not_local_ipv6(void **state) { not_local(AF_INET6, "2001:db8::dead"); }

void rdma_bind_addr__twice(void **state)
{
	struct two_ids t;
	int ret;

	two_ids_create(&t);
	FX_OK(bind_to(t.first, AF_INET, fx_addr(AF_INET), fx_port()));
	errno = 0;
	ret = bind_to(t.first, AF_INET, fx_addr(AF_INET), fx_port() + 1);
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_bind_addr", errno, EINVAL);
	two_ids_destroy(&t);
}

void rdma_bind_addr__null_addr(void **state)
{
	struct two_ids t;
	int ret;

	two_ids_create(&t);
	errno = 0;
	ret = rdma_bind_addr(t.first, NULL);
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_bind_addr", errno, EINVAL);
	two_ids_destroy(&t);
}

void rdma_bind_addr__specific_sets_device(void **state)
{
	struct two_ids t;

	two_ids_create(&t);
	assert_null(t.first->verbs);
	FX_OK(bind_to(t.first, AF_INET, fx_addr(AF_INET), fx_port()));
	assert_non_null(t.first->verbs);
	assert_non_null(t.first->verbs->device);
	two_ids_destroy(&t);
}

void rdma_bind_addr__wildcard_no_device(void **state)
{
	struct two_ids t;

	two_ids_create(&t);
	FX_OK(bind_to(t.first, AF_INET, "0.0.0.0", fx_port()));
	assert_null(t.first->verbs);
	two_ids_destroy(&t);
}
