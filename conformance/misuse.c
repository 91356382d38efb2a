/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: input upstream does not check, where it crashes or reads
 * past what it was given: ibv_query_device() with no attribute struct,
 * rdma_getaddrinfo() hints naming an address length without the address,
 * or a length past any address, and rdma_create_qp() with a queue of depth
 * 0 and no CQ for it. Upstream ends the process by a signal; the mock ends
 * it too, saying which call and why (fx_assert_crashes checks both), and
 * reads nothing it was not given. */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"

static void query_device_null(void *unused)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;

	if (ctx)
		ibv_query_device(ctx, NULL);
}

void ibv_query_device__null_attr(void **state)
{
	fx_assert_crashes(query_device_null, "ibv_query_device");
}

/* Hints alone (no node, no service): upstream copies the hints' address. */
static void hint_address_missing(void *unused)
{
	struct rdma_addrinfo hints = { .ai_dst_len = sizeof(struct sockaddr_in) }, *res;

	rdma_getaddrinfo(NULL, NULL, &hints, &res);
}

void rdma_getaddrinfo__hint_length_without_address(void **state)
{
	fx_assert_crashes(hint_address_missing, "rdma_getaddrinfo");
}

static void hint_length_past_address(void *unused)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct rdma_addrinfo hints = { .ai_src_len = 0x7fffffff, .ai_src_addr = (struct sockaddr *)&src },
			     *res;

	rdma_getaddrinfo(fx_addr(AF_INET), "7471", &hints, &res);
}

/* Upstream copies ai_src_len bytes: where a 2 GiB allocation fails (1 GiB
 * guests) it answers -1 and ENOMEM, where it succeeds it reads 2 GiB past a
 * 16-byte address. Only the mock's answer is certain. */
void rdma_getaddrinfo__hint_length_past_address(void **state)
{
	rc_require_mock("upstream fails to allocate the length or reads past the address");
	fx_assert_crashes(hint_length_past_address, "rdma_getaddrinfo");
}

static void qp_depth_0(void *arg)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = arg ? 0 : 4, .max_recv_wr = arg ? 4 : 0,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;

	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &addr);
	if (!rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) && !rdma_bind_addr(id, (struct sockaddr *)&addr))
		rdma_create_qp(id, NULL, &attr);
}

static void send_depth_0(void *unused) { qp_depth_0((void *)1); }
static void recv_depth_0(void *unused) { qp_depth_0(NULL); }

static void destroy_qp_of_listener(void *unused)
{
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;

	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &addr);
	if (!rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) && !rdma_bind_addr(id, (struct sockaddr *)&addr) &&
	    !rdma_listen(id, 1))
		rdma_destroy_qp(id);
}

/* A listener has no QP; rdma_destroy_qp passes id->qp to ibv_destroy_qp
 * unchecked (as Debian's qperf 0.4.11 does after each -cm1 test; its
 * server's child then segfaults on rxe). */
void rdma_destroy_qp__id_without_qp(void **state)
{
	fx_assert_crashes(destroy_qp_of_listener, "rdma_destroy_qp");
}

/* ucma_create_cqs makes no CQ for a queue of depth 0, and ibv_create_qp
 * then dereferences the NULL CQ (measured with rdma-core 44 and 65). */
void rdma_create_qp__depth_0_without_cq(void **state)
{
	fx_assert_crashes(send_depth_0, "rdma_create_qp");
	fx_assert_crashes(recv_depth_0, "rdma_create_qp");
}
