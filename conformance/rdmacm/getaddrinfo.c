/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_getaddrinfo() and rdma_freeaddrinfo(): numeric and
 * named hosts and services, RAI_PASSIVE, RAI_NUMERICHOST, RAI_FAMILY,
 * port spaces, RAI_SA, and the three ways it reports failure. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>

#include "fixtures.h"

static struct rdma_addrinfo *get(const char *node, const char *service,
				 const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *res = NULL;
	int ret;

	fx_require_backend();
	ret = rdma_getaddrinfo(node, service, hints, &res);
	if (ret)
		fail_msg("rdma_getaddrinfo(%s, %s): %d, errno %s", node ? node : "NULL",
			 service ? service : "NULL", ret, strerror(errno));
	assert_non_null(res);
	assert_null(res->ai_next);
	return res;
}

static uint16_t port_of(const struct sockaddr *addr)
{
	return ntohs(fx_sockaddr_port(addr));
}

void rdma_getaddrinfo__numeric_defaults(void **state)
{
	struct rdma_addrinfo *res = get("127.0.0.1", "7471", NULL);
	struct sockaddr_in *dst = (struct sockaddr_in *)res->ai_dst_addr;

	assert_int_equal(res->ai_flags, 0);
	assert_int_equal(res->ai_family, AF_INET);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(res->ai_port_space, RDMA_PS_TCP);
	assert_int_equal(res->ai_dst_len, sizeof *dst);
	assert_int_equal(dst->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(ntohs(dst->sin_port), 7471);
	assert_null(res->ai_src_addr);
	rdma_freeaddrinfo(res);
}

void rdma_getaddrinfo__named_host(void **state)
{
	struct rdma_addrinfo hints = { .ai_family = AF_INET };
	struct rdma_addrinfo *res = get("localhost", "7471", &hints);
	struct sockaddr_in *dst = (struct sockaddr_in *)res->ai_dst_addr;

	assert_int_equal(res->ai_family, AF_INET);
	assert_int_equal(dst->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	rdma_freeaddrinfo(res);
}

void rdma_getaddrinfo__named_service(void **state)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct servent *ssh = getservbyname("ssh", "tcp");
	struct rdma_addrinfo *res;

	if (!ssh)
		RC_SKIP("config: no ssh/tcp in /etc/services (Debian package netbase)");
	res = get("127.0.0.1", "ssh", &hints);
	assert_int_equal(port_of(res->ai_dst_addr), ntohs((uint16_t)ssh->s_port));
	rdma_freeaddrinfo(res);
}

void rdma_getaddrinfo__passive(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res = get(NULL, "7471", &hints);

	assert_int_equal(res->ai_flags, RAI_PASSIVE);
	assert_non_null(res->ai_src_addr);
	assert_null(res->ai_dst_addr);
	assert_int_equal(res->ai_dst_len, 0);
	assert_int_equal(port_of(res->ai_src_addr), 7471);
	rdma_freeaddrinfo(res);
}

/* A name where RAI_NUMERICHOST asks for a number: getaddrinfo's own code. */
void rdma_getaddrinfo__numerichost_refuses_names(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *res = NULL;

	fx_require_backend();
	RC_ASSERT_ERRNO("rdma_getaddrinfo", rdma_getaddrinfo("localhost", "7471", &hints, &res), EAI_NONAME);
	assert_null(res);
}

/* An address of the other family than RAI_FAMILY asks for: glibc's own
 * EAI_ADDRFAMILY, passed on (found by make fuzz: not in the table). */
void rdma_getaddrinfo__address_of_other_family(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_FAMILY, .ai_family = AF_INET6 }, *res = NULL;

	fx_require_backend();
	RC_ASSERT_ERRNO("rdma_getaddrinfo", rdma_getaddrinfo("192.0.2.99", "7471", &hints, &res),
			EAI_ADDRFAMILY);
	assert_null(res);
}

void rdma_getaddrinfo__port_space_udp(void **state)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_UDP };
	struct rdma_addrinfo *res = get("127.0.0.1", "7471", &hints);

	assert_int_equal(res->ai_port_space, RDMA_PS_UDP);
	assert_int_equal(res->ai_qp_type, IBV_QPT_UD);
	rdma_freeaddrinfo(res);
}

/* RDMA_PS_IPOIB asks for UDP, so the QP type is UD; RDMA_PS_IB asks for
 * no protocol, so the QP type is the first socket type getaddrinfo
 * gives, a stream (RC). Either port space is the result's. */
void rdma_getaddrinfo__port_spaces_ipoib_ib(void **state)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_IPOIB };
	struct rdma_addrinfo *res = get("127.0.0.1", "7471", &hints);

	assert_int_equal(res->ai_port_space, RDMA_PS_IPOIB);
	assert_int_equal(res->ai_qp_type, IBV_QPT_UD);
	rdma_freeaddrinfo(res);
	hints.ai_port_space = RDMA_PS_IB;
	res = get("127.0.0.1", "7471", &hints);
	assert_int_equal(res->ai_port_space, RDMA_PS_IB);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	rdma_freeaddrinfo(res);
}

/* hints->ai_qp_type, when set, is the result's QP type; with no port
 * space hinted, the port space follows the protocol getaddrinfo gives
 * for the socket type the QP type asks for (UD: a datagram, UDP). */
void rdma_getaddrinfo__qp_type_ud(void **state)
{
	struct rdma_addrinfo hints = { .ai_qp_type = IBV_QPT_UD };
	struct rdma_addrinfo *res = get("127.0.0.1", "7471", &hints);

	assert_int_equal(res->ai_qp_type, IBV_QPT_UD);
	assert_int_equal(res->ai_port_space, RDMA_PS_UDP);
	rdma_freeaddrinfo(res);
	hints.ai_port_space = RDMA_PS_IB;
	res = get("127.0.0.1", "7471", &hints);
	assert_int_equal(res->ai_qp_type, IBV_QPT_UD);
	assert_int_equal(res->ai_port_space, RDMA_PS_IB);
	rdma_freeaddrinfo(res);
}

/* Hints alone (no node, no service): the result is made of the hints,
 * their flags, family, QP type and port space, and copies of their
 * addresses; no lookup is done. */
void rdma_getaddrinfo__hints_only(void **state)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(7471),
				   .sin_addr = { htonl(INADDR_LOOPBACK) } };
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr = { htonl(INADDR_LOOPBACK) } };
	struct rdma_addrinfo hints = {
		.ai_flags = RAI_NUMERICHOST, .ai_family = AF_INET, .ai_qp_type = IBV_QPT_UC,
		.ai_port_space = RDMA_PS_IB,
		.ai_dst_addr = (struct sockaddr *)&dst, .ai_dst_len = sizeof dst,
		.ai_src_addr = (struct sockaddr *)&src, .ai_src_len = sizeof src,
	};
	struct rdma_addrinfo *res = get(NULL, NULL, &hints);

	assert_int_equal(res->ai_flags, RAI_NUMERICHOST);
	assert_int_equal(res->ai_family, AF_INET);
	assert_int_equal(res->ai_qp_type, IBV_QPT_UC);
	assert_int_equal(res->ai_port_space, RDMA_PS_IB);
	assert_int_equal(res->ai_dst_len, sizeof dst);
	assert_ptr_not_equal(res->ai_dst_addr, &dst);
	assert_memory_equal(res->ai_dst_addr, &dst, sizeof dst);
	assert_int_equal(res->ai_src_len, sizeof src);
	assert_ptr_not_equal(res->ai_src_addr, &src);
	assert_memory_equal(res->ai_src_addr, &src, sizeof src);
	rdma_freeaddrinfo(res);
}

void rdma_getaddrinfo__family_ib(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_FAMILY | RAI_NUMERICHOST,
				       .ai_family = AF_IB, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res = get("::1", "7471", &hints);
	struct sockaddr_ib *sib = (struct sockaddr_ib *)res->ai_dst_addr;

	assert_int_equal(res->ai_family, AF_IB);
	assert_int_equal(res->ai_dst_len, sizeof *sib);
	assert_int_equal(sib->sib_family, AF_IB);
	assert_int_equal(be64toh(sib->sib_sid), ((uint64_t)RDMA_PS_TCP << 16) + 7471);
	assert_int_equal(be64toh(sib->sib_sid_mask), RDMA_IB_IP_PS_MASK | RDMA_IB_IP_PORT_MASK);
	rdma_freeaddrinfo(res);
}

void rdma_getaddrinfo__nothing_given(void **state)
{
	struct rdma_addrinfo *res = NULL;

	fx_require_backend();
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	RC_ASSERT_ERRNO("rdma_getaddrinfo", errno, EINVAL);
}

static void free_null(void *unused)
{
	rdma_freeaddrinfo(NULL);
}

/* Returns, and the process goes on. */
void rdma_freeaddrinfo__null(void **state)
{
	struct rc_crash end;

	fx_require_backend();
	rc_run_child(free_null, NULL, &end);
	assert_int_equal(end.signal, 0);
	assert_int_equal(end.exit_code, 0);
}

/* A list the caller built, as libfabric's verbs provider builds its AF_IB
 * entries: calloc'd entries, each field malloc'd. Upstream frees each
 * field and entry with free(), so this is its contract too. */
static void free_caller_built(void *unused)
{
	struct rdma_addrinfo *head = calloc(1, sizeof *head);
	struct sockaddr_ib *sib = calloc(1, sizeof *sib);

	if (!head || !sib)
		exit(3);
	sib->sib_family = AF_IB;
	head->ai_family = AF_IB;
	head->ai_port_space = RDMA_PS_IB;
	head->ai_src_addr = (struct sockaddr *)sib;
	head->ai_src_len = sizeof *sib;
	head->ai_next = calloc(1, sizeof *head->ai_next);
	if (!head->ai_next)
		exit(3);
	head->ai_next->ai_dst_canonname = strdup("peer");
	rdma_freeaddrinfo(head);
}

/* Freed, and the process goes on. */
void rdma_freeaddrinfo__caller_built(void **state)
{
	struct rc_crash end;

	fx_require_backend();
	rc_run_child(free_caller_built, NULL, &end);
	assert_int_equal(end.signal, 0);
	assert_int_equal(end.exit_code, 0);
}

/* ---------------------------------------------------------------- RAI_SA */

void rdma_getaddrinfo__sa_with_node(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA }, *res = NULL;

	fx_require_backend();
	fx_addrinfo_api(); /* RAI_SA came with them, in rdma-core 60 */
	errno = 0;
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "0x1", &hints, &res), -1);
	RC_ASSERT_ERRNO("rdma_getaddrinfo", errno, EOPNOTSUPP);
}

void rdma_getaddrinfo__sa_and_dns(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA | RAI_DNS }, *res = NULL;

	fx_require_backend();
	fx_addrinfo_api();
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, "0x1", &hints, &res), -1);
	RC_ASSERT_ERRNO("rdma_getaddrinfo", errno, EOPNOTSUPP);
}

static bool any_infiniband_port(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	bool found = false;

	for (int i = 0; list && list[i] && !found; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_port_attr port;

		if (!ctx)
			continue;
		found = ibv_query_port(ctx, 1, &port) == 0 && port.link_layer == IBV_LINK_LAYER_INFINIBAND;
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return found;
}

/* The SA is asked through InfiniBand ports only; RoCE has none. */
void rdma_getaddrinfo__sa_without_ib_port(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA }, *res = NULL;

	fx_require_backend();
	fx_addrinfo_api();
	if (any_infiniband_port())
		RC_SKIP("config: this host has an InfiniBand port, so an SA may answer");
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, "0x1", &hints, &res), -1);
	RC_ASSERT_ERRNO("rdma_getaddrinfo", errno, ENOENT);
}

/* ---------------------------------------------------------------- no devices */

void rdma_getaddrinfo__no_device(void **state)
{
	int (*load)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_topology_load");
	struct rdma_addrinfo *res = NULL;

	if (load(""))
		fail_msg("rdmamock_topology_load(\"\") failed");
	errno = 0;
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "7471", NULL, &res), -1);
	RC_ASSERT_ERRNO("rdma_getaddrinfo", errno, ENODEV);
}

/* rdma_freeaddrinfo frees a whole list. That the memory goes is seen on
 * the mock only: its ledger fails a strict test that leaks a list, and
 * make check runs the addrinfo tests under valgrind. */
void rdma_freeaddrinfo__lists(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE };
	struct rdma_addrinfo *res = get(NULL, "7471", &hints);

	assert_non_null(res->ai_src_addr);
	rdma_freeaddrinfo(res);
	res = get("127.0.0.1", "7471", NULL);
	assert_non_null(res->ai_dst_addr);
	rdma_freeaddrinfo(res);
}
