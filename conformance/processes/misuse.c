/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: input upstream does not check, where it crashes or reads
 * past what it was given: ibv_query_device() with no attribute struct,
 * rdma_getaddrinfo() hints naming an address length without the address,
 * or a length past any address, and rdma_create_qp() with a queue of depth
 * 0 and no CQ for it. Upstream ends the process by a signal; the mock ends
 * it too, saying which call and why (fx_assert_crashes checks both), and
 * reads nothing it was not given. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"
#include "qp.h"

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

/* An inline send copies its data at the post, from the address given,
 * with no key to check it by: from memory the process may not read,
 * upstream's provider faults in its copy. */
static void inline_from_unreadable(void *unused)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_sge sge = { .addr = (uintptr_t)page, .length = 16 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED }, *bad;
	struct fx_qp q = { .ctx = fx_open_device(FX_DEV_UNDER_TEST) };

	q.pd = ibv_alloc_pd(q.ctx);
	q.cq = q.pd ? ibv_create_cq(q.ctx, 8, NULL, NULL, 0) : NULL;
	init.send_cq = init.recv_cq = q.cq;
	q.qp = q.cq && page != MAP_FAILED ? ibv_create_qp(q.pd, &init) : NULL;
	if (!q.qp)
		_exit(3);
	fx_qp_to(&q, IBV_QPS_RTS);
	ibv_post_send(q.qp, &wr, &bad);
}

void ibv_post_send__inline_unreadable(void **state)
{
	struct ibv_context *ctx;
	struct rc_crash end;

	/* Its SIGSEGV handler reports the fault and exits: no signal to see. */
	if (RC_UNDER_ASAN)
		RC_SKIP("AddressSanitizer takes SIGSEGV over");
	fx_require_backend();
	/* The child walks its QP to RTS by hand, which iWARP's has no way to. */
	ctx = fx_open_device(FX_DEV_UNDER_TEST);
	fx_require_ib_qp_attributes(ctx);
	FX_VERBS_OK(ibv_close_device(ctx));
	rc_run_child(inline_from_unreadable, NULL, &end);
	if (end.signal != SIGSEGV)
		fail_msg("the child ended with signal %d, exit code %d, not SIGSEGV: %s", end.signal,
			 end.exit_code, end.stderr_text);
	if (rc_backend_is_mock() && !strstr(end.message, "ibv_post_send: inline data"))
		fail_msg("the mock's last words do not name ibv_post_send's inline data: \"%s\"", end.message);
}
