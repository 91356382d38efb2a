/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_resolve_addrinfo(), rdma_query_addrinfo() and
 * rdma_write_cm_event() (rdma-core v60, RDMACM_1.4), called through
 * fx_addrinfo_api() so that an older librdmacm skips them by name. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/ib.h>

#include "fixtures.h"
#include "qp.h"

#define WAIT_MS 5000
#define QUIET_MS 200

struct ai_fx {
	struct fx_addrinfo_api api;
	struct rdma_event_channel *ch; /* NULL for a synchronous id */
	struct rdma_cm_id *id;
	char service[8];
};

static void ai_setup(struct ai_fx *f, bool sync)
{
	f->api = fx_addrinfo_api();
	f->ch = sync ? NULL : fx_channel();
	FX_OK(rdma_create_id(f->ch, &f->id, NULL, RDMA_PS_TCP));
	snprintf(f->service, sizeof f->service, "%u", fx_port());
}

static void ai_teardown(struct ai_fx *f)
{
	FX_OK(rdma_destroy_id(f->id));
	if (f->ch)
		rdma_destroy_event_channel(f->ch);
}

/* -1 and errno from the query, or 0. */
static int query(struct ai_fx *f, struct rdma_addrinfo **info, int *err)
{
	int ret;

	errno = 0;
	ret = f->api.query(f->id, info);
	*err = errno;
	return ret;
}

static void expect_resolved_event(struct ai_fx *f)
{
	struct rdma_cm_event *ev = fx_expect(f->ch, RDMA_CM_EVENT_ADDRINFO_RESOLVED, WAIT_MS);

	assert_int_equal(ev->event, 16);
	assert_int_equal(ev->status, 0);
	assert_ptr_equal(ev->id, f->id);
	FX_OK(rdma_ack_cm_event(ev));
}

/* Resolve the fixture's IPv4 address at service, take the event and query:
 * the list, which the caller frees. */
static struct rdma_addrinfo *resolve_and_query(struct ai_fx *f, const char *service,
					       const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *info = NULL;
	int err;

	FX_OK(f->api.resolve(f->id, fx_addr(AF_INET), service, hints));
	expect_resolved_event(f);
	assert_int_equal(query(f, &info, &err), 0);
	assert_non_null(info);
	return info;
}

/* ---------------------------------------------------------------- success */

void rdma_resolve_addrinfo__resolved_event(void **state)
{
	struct ai_fx f;
	struct rdma_addrinfo *info;

	ai_setup(&f, false);
	info = resolve_and_query(&f, f.service, NULL);
	rdma_freeaddrinfo(info);
	ai_teardown(&f);
}

/* Every field a caller may read, for a numeric IPv4 node and service. */
void rdma_query_addrinfo__list(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *info;
	struct sockaddr_storage want;
	struct ai_fx f;

	ai_setup(&f, false);
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &want);
	info = resolve_and_query(&f, f.service, &hints);
	assert_non_null(info);
	assert_null(info->ai_next);
	assert_int_equal(info->ai_flags, 0);
	assert_int_equal(info->ai_family, AF_INET);
	assert_int_equal(info->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(info->ai_port_space, RDMA_PS_TCP);
	assert_int_equal(info->ai_dst_len, sizeof(struct sockaddr_in));
	assert_non_null(info->ai_dst_addr);
	assert_memory_equal(info->ai_dst_addr, &want, sizeof(struct sockaddr_in));
	assert_int_equal(info->ai_src_len, 0);
	assert_null(info->ai_src_addr);
	assert_null(info->ai_src_canonname);
	assert_null(info->ai_dst_canonname);
	assert_int_equal(info->ai_route_len, 0);
	assert_null(info->ai_route);
	assert_int_equal(info->ai_connect_len, 0);
	assert_null(info->ai_connect);
	rdma_freeaddrinfo(info);
	ai_teardown(&f);
}

/* The list is the caller's: it outlives the id. */
void rdma_query_addrinfo__owned_by_caller(void **state)
{
	struct rdma_addrinfo *info;
	struct ai_fx f;

	ai_setup(&f, false);
	info = resolve_and_query(&f, f.service, NULL);
	ai_teardown(&f);
	assert_int_equal(ntohs(fx_sockaddr_port(info->ai_dst_addr)), fx_port());
	rdma_freeaddrinfo(info);
}

/* A result nobody queried goes with the id (a sanitizer or valgrind run
 * would report it otherwise). */
void rdma_resolve_addrinfo__unqueried_freed_with_id(void **state)
{
	struct ai_fx f;

	ai_setup(&f, false);
	FX_OK(f.api.resolve(f.id, fx_addr(AF_INET), f.service, NULL));
	expect_resolved_event(&f);
	ai_teardown(&f);
}

void rdma_resolve_addrinfo__sync_mode(void **state)
{
	struct rdma_addrinfo *info;
	struct ai_fx f;
	int err;

	ai_setup(&f, true);
	FX_OK(f.api.resolve(f.id, fx_addr(AF_INET), f.service, NULL));
	assert_int_equal(query(&f, &info, &err), 0);
	assert_int_equal(ntohs(fx_sockaddr_port(info->ai_dst_addr)), fx_port());
	rdma_freeaddrinfo(info);
	ai_teardown(&f);
}

/* A second resolution waits for the first result to be taken. */
void rdma_resolve_addrinfo__busy_until_queried(void **state)
{
	struct rdma_addrinfo *info;
	struct ai_fx f;
	int err;

	ai_setup(&f, false);
	FX_OK(f.api.resolve(f.id, fx_addr(AF_INET), f.service, NULL));
	errno = 0;
	assert_int_equal(f.api.resolve(f.id, fx_addr(AF_INET), "1", NULL), -1);
	RC_ASSERT_ERRNO("rdma_resolve_addrinfo", errno, EBUSY);
	expect_resolved_event(&f);
	assert_true(fx_quiet(f.ch, QUIET_MS));
	assert_int_equal(query(&f, &info, &err), 0);
	assert_int_equal(ntohs(fx_sockaddr_port(info->ai_dst_addr)), fx_port());
	rdma_freeaddrinfo(info);
	info = resolve_and_query(&f, "1", NULL);
	assert_int_equal(ntohs(fx_sockaddr_port(info->ai_dst_addr)), 1);
	rdma_freeaddrinfo(info);
	ai_teardown(&f);
}

/* ---------------------------------------------------------------- query errors */

void rdma_query_addrinfo__null_id(void **state)
{
	struct rdma_addrinfo *info;
	struct fx_addrinfo_api api = fx_addrinfo_api();

	errno = 0;
	assert_int_equal(api.query(NULL, &info), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", errno, EINVAL);
}

void rdma_query_addrinfo__null_info(void **state)
{
	struct ai_fx f;

	ai_setup(&f, false);
	errno = 0;
	assert_int_equal(f.api.query(f.id, NULL), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", errno, EINVAL);
	ai_teardown(&f);
}

void rdma_query_addrinfo__never_resolved(void **state)
{
	struct rdma_addrinfo *info;
	struct ai_fx f;
	int err;

	ai_setup(&f, false);
	assert_int_equal(query(&f, &info, &err), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", err, ENOENT);
	ai_teardown(&f);
}

void rdma_query_addrinfo__twice(void **state)
{
	struct rdma_addrinfo *info;
	struct ai_fx f;
	int err;

	ai_setup(&f, false);
	info = resolve_and_query(&f, f.service, NULL);
	rdma_freeaddrinfo(info);
	assert_int_equal(query(&f, &info, &err), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", err, ENOENT);
	ai_teardown(&f);
}

/* The first active InfiniBand port's GID 0, as an AF_IB address. */
static bool infiniband_address(struct sockaddr_ib *sib)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	bool found = false;

	for (int i = 0; list && list[i] && !found; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_port_attr port;
		union ibv_gid gid;

		if (!ctx)
			continue;
		found = ibv_query_port(ctx, 1, &port) == 0 &&
			port.link_layer == IBV_LINK_LAYER_INFINIBAND && port.state == IBV_PORT_ACTIVE &&
			ibv_query_gid(ctx, 1, 0, &gid) == 0;
		if (found) {
			memset(sib, 0, sizeof *sib);
			sib->sib_family = AF_IB;
			sib->sib_pkey = htobe16(0xffff);
			memcpy(&sib->sib_addr, gid.raw, sizeof gid.raw);
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return found;
}

/* Only the SA path (RAI_SA, InfiniBand) is pending after the call; the DNS
 * path has its result when rdma_resolve_addrinfo returns. */
void rdma_query_addrinfo__still_resolving(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA }, *info;
	struct sockaddr_ib sib;
	struct rdma_cm_event *ev;
	struct ai_fx f;
	int err;

	RC_REQUIRE_CAPABILITY("infiniband");
	f.api = fx_addrinfo_api();
	if (!infiniband_address(&sib))
		RC_SKIP("config: no active InfiniBand port (only RAI_SA resolutions are ever pending)");
	f.ch = fx_channel();
	FX_OK(rdma_create_id(f.ch, &f.id, NULL, RDMA_PS_IB));
	FX_OK(rdma_bind_addr(f.id, (struct sockaddr *)&sib));
	FX_OK(f.api.resolve(f.id, NULL, "0x1", &hints));
	assert_int_equal(query(&f, &info, &err), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", err, ENOENT);
	assert_false(fx_quiet(f.ch, WAIT_MS));
	FX_OK(rdma_get_cm_event(f.ch, &ev));
	FX_OK(rdma_ack_cm_event(ev));
	ai_teardown(&f);
}

/* An unresolvable name: the DNS path fails in the call, with no event, and
 * upstream leaves errno holding getaddrinfo's negative EAI code. */
void rdma_resolve_addrinfo__dns_failure(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *info;
	struct ai_fx f;
	int ret, err;

	ai_setup(&f, false);
	errno = 0;
	ret = f.api.resolve(f.id, "not-a-numeric-host", f.service, &hints);
	err = errno;
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_resolve_addrinfo", err, EAI_NONAME);
	rc_note_documented(err > 0);
	assert_true(fx_quiet(f.ch, QUIET_MS));
	assert_int_equal(query(&f, &info, &err), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", err, ENOENT);
	ai_teardown(&f);
}

/* An address of the family RAI_FAMILY does not ask for: getaddrinfo's
 * EAI_ADDRFAMILY left in errno (found by make fuzz: not in the table). */
void rdma_resolve_addrinfo__address_of_other_family(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_FAMILY, .ai_family = AF_INET6 };
	struct ai_fx f;
	int ret, err;

	ai_setup(&f, false);
	errno = 0;
	ret = f.api.resolve(f.id, "192.0.2.99", f.service, &hints);
	err = errno;
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_resolve_addrinfo", err, EAI_ADDRFAMILY);
	assert_true(fx_quiet(f.ch, QUIET_MS));
	ai_teardown(&f);
}

/* ---------------------------------------------------------------- RAI_SA */

void rdma_resolve_addrinfo__sa_and_dns(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA | RAI_DNS }, *info;
	struct ai_fx f;
	int err;

	ai_setup(&f, false);
	errno = 0;
	assert_int_equal(f.api.resolve(f.id, NULL, f.service, &hints), -1);
	RC_ASSERT_ERRNO("rdma_resolve_addrinfo", errno, EOPNOTSUPP);
	assert_int_equal(query(&f, &info, &err), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", err, ENOENT);
	ai_teardown(&f);
}

void rdma_resolve_addrinfo__sa_with_node(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA };
	struct ai_fx f;

	ai_setup(&f, false);
	errno = 0;
	assert_int_equal(f.api.resolve(f.id, fx_addr(AF_INET), f.service, &hints), -1);
	RC_ASSERT_ERRNO("rdma_resolve_addrinfo", errno, EOPNOTSUPP);
	ai_teardown(&f);
}

/* An id bound to a RoCE address is not on an InfiniBand port: the call
 * fails and no event follows. */
void rdma_resolve_addrinfo__sa_not_ib(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA }, *info;
	struct sockaddr_storage addr;
	struct ai_fx f;
	int err;

	ai_setup(&f, false);
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	FX_OK(rdma_bind_addr(f.id, (struct sockaddr *)&addr));
	if (fx_port_ib(f.id->verbs, f.id->port_num)) {
		ai_teardown(&f);
		RC_SKIP("the address is on an InfiniBand port, whose SA answers (RESOLVE_ADDRINFO_SA_SERVICE)");
	}
	assert_int_equal(f.api.resolve(f.id, NULL, "0x1", &hints), -1);
	assert_true(fx_quiet(f.ch, QUIET_MS));
	assert_int_equal(query(&f, &info, &err), -1);
	RC_ASSERT_ERRNO("rdma_query_addrinfo", err, ENOENT);
	ai_teardown(&f);
}

/* ---------------------------------------------------------------- rdma_write_cm_event */

void rdma_write_cm_event__user(void **state)
{
	struct rdma_cm_event *ev;
	struct ai_fx f;

	ai_setup(&f, false);
	FX_OK(f.api.write_event(f.id, RDMA_CM_EVENT_USER, 5, 0x1234abcdull));
	ev = fx_expect(f.ch, RDMA_CM_EVENT_USER, WAIT_MS);
	assert_ptr_equal(ev->id, f.id);
	assert_int_equal(ev->status, 5);
	assert_int_equal(rdmacheck_event_arg(ev), 0x1234abcdull);
	FX_OK(rdma_ack_cm_event(ev));
	ai_teardown(&f);
}

void rdma_write_cm_event__not_user(void **state)
{
	struct ai_fx f;

	ai_setup(&f, false);
	errno = 0;
	assert_int_equal(f.api.write_event(f.id, RDMA_CM_EVENT_ADDRINFO_RESOLVED, 0, 0), -1);
	RC_ASSERT_ERRNO("rdma_write_cm_event", errno, EINVAL);
	assert_true(fx_quiet(f.ch, QUIET_MS));
	ai_teardown(&f);
}
