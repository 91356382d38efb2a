/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_bind_addr(): conflicts, foreign addresses, state and
 * argument checks, and the device a bind attaches. */
#include <errno.h>
#include <stdio.h>
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

/* An address in 127/8 that no device holds: the mock's default devices
 * hold 127.0.0.1 and 127.0.0.2, which are theirs (docs/mock.md: deviations). */
#define LOOPBACK_ADDR "127.0.0.9"

void rdma_bind_addr__loopback_no_device(void **state)
{
	struct two_ids t;

	two_ids_create(&t);
	FX_OK(bind_to(t.first, AF_INET, LOOPBACK_ADDR, fx_port()));
	assert_null(t.first->verbs);
	two_ids_destroy(&t);
}

void rdma_bind_addr__loopback_after_specific(void **state)
{
	conflict(AF_INET, fx_addr(AF_INET), LOOPBACK_ADDR, EADDRNOTAVAIL);
}

/* A listener bound to a loopback address listens on every device and is
 * asked for a connection to any address of its family on its port. */
void rdma_listen__loopback_any_address(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_id *listener, *id, *conn;
	struct rdma_event_channel *ch;
	struct sockaddr_storage addr;
	struct rdma_cm_event *ev;

	fx_need_local_passive();
	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP));
	FX_OK(bind_to(listener, AF_INET, LOOPBACK_ADDR, fx_port()));
	FX_OK(rdma_listen(listener, 1));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 5000);
	FX_OK(rdma_resolve_route(id, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000);
	fx_require_cm_qp(id);
	FX_OK(rdma_connect(id, &param));
	ev = fx_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 5000);
	assert_ptr_equal(ev->listen_id, listener);
	conn = ev->id;
	FX_OK(rdma_reject(conn, NULL, 0));
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(conn));
	fx_expect_ack(ch, RDMA_CM_EVENT_REJECTED, 5000);
	FX_OK(rdma_destroy_id(id));
	FX_OK(rdma_destroy_id(listener));
	rdma_destroy_event_channel(ch);
}

/* CAP_NET_BIND_SERVICE (bit 10) in this process's effective set. */
static bool may_bind_privileged(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long caps = 0;
	char line[256];

	if (!f)
		fail_msg("/proc/self/status: %s", strerror(errno));
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps & (1ull << 10);
}

/* A port below 1024 takes CAP_NET_BIND_SERVICE: without it EACCES, with
 * it the bind succeeds; port 0 picks an ephemeral port either way. */
void rdma_bind_addr__privileged_port(void **state)
{
	struct two_ids t;
	int ret;

	two_ids_create(&t);
	errno = 0;
	ret = bind_to(t.first, AF_INET, fx_addr(AF_INET), 999);
	if (may_bind_privileged()) {
		assert_int_equal(ret, 0);
		assert_int_equal(fx_src_port(t.first), 999);
	} else {
		assert_int_equal(ret, -1);
		RC_ASSERT_ERRNO("rdma_bind_addr", errno, EACCES);
		/* The id stays idle: it binds elsewhere after. */
		FX_OK(bind_to(t.first, AF_INET, fx_addr(AF_INET), 0));
		assert_true(fx_src_port(t.first) >= 1024);
	}
	two_ids_destroy(&t);
}

static void set_afonly(struct rdma_cm_id *id, int on)
{
	FX_OK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, sizeof on));
}

/* Two wildcards of different families on one port: with both ids AF_ONLY
 * they do not conflict; with only one of them, they do (EADDRNOTAVAIL, a
 * wildcard's conflict). */
static void afonly_wildcards(int first_afonly, int second_afonly, int expected)
{
	struct two_ids t;
	int ret;

	two_ids_create(&t);
	set_afonly(t.first, first_afonly);
	set_afonly(t.second, second_afonly);
	FX_OK(bind_to(t.first, AF_INET6, "::", fx_port()));
	errno = 0;
	ret = bind_to(t.second, AF_INET, "0.0.0.0", fx_port());
	if (!expected) {
		FX_OK(ret);
		assert_int_equal(fx_src_port(t.second), fx_port());
	} else {
		assert_int_equal(ret, -1);
		RC_ASSERT_ERRNO("rdma_bind_addr", errno, expected);
	}
	two_ids_destroy(&t);
}

void rdma_bind_addr__afonly_families_share_port(void **state)
{
	afonly_wildcards(1, 1, 0);
}

void rdma_bind_addr__afonly_one_side_conflicts(void **state)
{
	afonly_wildcards(1, 0, EADDRNOTAVAIL);
	afonly_wildcards(0, 1, EADDRNOTAVAIL);
}
