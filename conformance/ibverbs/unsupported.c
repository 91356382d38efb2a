/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the verbs whose header wrappers (ibv_create_flow,
 * ibv_alloc_td, ibv_create_wq, ...) call a context operation the mock's
 * devices lack. libibverbs gives a provider that lacks one its dummy op
 * (dummy_ops.c): a constructor returns NULL with errno EOPNOTSUPP, any
 * other call returns EOPNOTSUPP and leaves errno alone. The mock's do the
 * same and say once, on stderr, that the call is not implemented.
 * Mock-only: real devices implement some of these (mlx5 most). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fixtures.h"
#include "qp.h"

struct objects {
	struct fx_qp q;
	struct ibv_srq *srq;
	/* Objects of the calls' kinds that no call could make here, each
	 * naming the context, which is all a wrapper reads of them. */
	struct ibv_flow flow;
	struct ibv_flow_action action;
	struct ibv_td td;
	struct ibv_wq wq;
	struct ibv_rwq_ind_table table;
	struct ibv_counters counters;
	/* What a call got wrong, for the test to report outside the capture. */
	char wrong[256];
};

/* A call that returns a positive errno: EOPNOTSUPP, errno untouched. */
#define POSITIVE(o, expr)                                                              \
	do {                                                                           \
		int ret_;                                                              \
		errno = 12345;                                                         \
		ret_ = (expr);                                                         \
		if (!(o)->wrong[0] && (ret_ != EOPNOTSUPP || errno != 12345))          \
			snprintf((o)->wrong, sizeof (o)->wrong,                         \
				 "%s returned %d with errno %d, not EOPNOTSUPP (%d) with errno untouched", \
				 #expr, ret_, errno, EOPNOTSUPP);                       \
	} while (0)
/* A constructor: NULL and errno EOPNOTSUPP. */
#define NULL_ERRNO(o, expr)                                                            \
	do {                                                                           \
		const void *ptr_;                                                      \
		errno = 0;                                                             \
		ptr_ = (expr);                                                         \
		if (!(o)->wrong[0] && (ptr_ || errno != EOPNOTSUPP))                   \
			snprintf((o)->wrong, sizeof (o)->wrong,                         \
				 "%s returned %p with errno %d, not NULL with EOPNOTSUPP", \
				 #expr, ptr_, errno);                                   \
	} while (0)

static void call_each(void *arg)
{
	struct objects *o = arg;
	struct ibv_context *ctx = o->q.ctx;
	struct ibv_flow_attr flow_attr = { .size = sizeof flow_attr, .port = 1 };
	struct ibv_flow_action_esp_attr esp = { 0 };
	struct ibv_td_init_attr td_attr = { 0 };
	struct ibv_parent_domain_init_attr parent = { .pd = o->q.pd };
	struct ibv_wq_init_attr wq_attr = { .wq_type = IBV_WQT_RQ, .max_wr = 1, .max_sge = 1,
					    .pd = o->q.pd, .cq = o->q.cq };
	struct ibv_wq_attr wq_mod = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };
	struct ibv_rwq_ind_table_init_attr table_attr = { 0 };
	struct ibv_counters_init_attr counters_attr = { 0 };
	struct ibv_counter_attach_attr attach = { .counter_desc = IBV_COUNTER_PACKETS };
	struct ibv_values_ex values = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_qp_rate_limit_attr rate = { .rate_limit = 1000 };
	struct ibv_modify_cq_attr cq_mod = { .attr_mask = IBV_CQ_ATTR_MODERATE,
					     .moderate = { .cq_count = 1, .cq_period = 1 } };
	struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_SYNC }, *bad_op = NULL;
	struct ibv_sge sge = { (uintptr_t)o->q.buf, sizeof o->q.buf, o->q.mr->lkey };
	struct ibv_qp_open_attr open = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						      IBV_QP_OPEN_ATTR_TYPE,
					 .qp_num = o->q.qp->qp_num, .qp_type = IBV_QPT_XRC_RECV };
	uint64_t count;

	for (int twice = 0; twice < 2; twice++) {
		NULL_ERRNO(o, ibv_create_flow(o->q.qp, &flow_attr));
		POSITIVE(o, ibv_destroy_flow(&o->flow));
		NULL_ERRNO(o, ibv_create_flow_action_esp(ctx, &esp));
		POSITIVE(o, ibv_modify_flow_action_esp(&o->action, &esp));
		POSITIVE(o, ibv_destroy_flow_action(&o->action));
		NULL_ERRNO(o, ibv_alloc_td(ctx, &td_attr));
		POSITIVE(o, ibv_dealloc_td(&o->td));
		NULL_ERRNO(o, ibv_alloc_parent_domain(ctx, &parent));
		NULL_ERRNO(o, ibv_create_wq(ctx, &wq_attr));
		POSITIVE(o, ibv_modify_wq(&o->wq, &wq_mod));
		POSITIVE(o, ibv_destroy_wq(&o->wq));
		NULL_ERRNO(o, ibv_create_rwq_ind_table(ctx, &table_attr));
		POSITIVE(o, ibv_destroy_rwq_ind_table(&o->table));
		NULL_ERRNO(o, ibv_create_counters(ctx, &counters_attr));
		POSITIVE(o, ibv_attach_counters_point_flow(&o->counters, &attach, &o->flow));
		POSITIVE(o, ibv_read_counters(&o->counters, &count, 1, 0));
		POSITIVE(o, ibv_destroy_counters(&o->counters));
		POSITIVE(o, ibv_query_rt_values_ex(ctx, &values));
		POSITIVE(o, ibv_modify_qp_rate_limit(o->q.qp, &rate));
		POSITIVE(o, ibv_modify_cq(o->q.cq, &cq_mod));
		POSITIVE(o, ibv_post_srq_ops(o->srq, &op, &bad_op));
		POSITIVE(o, ibv_advise_mr(o->q.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1));
		NULL_ERRNO(o, ibv_alloc_null_mr(o->q.pd));
		NULL_ERRNO(o, ibv_open_qp(ctx, &open));
	}
}

static const char *const said[] = {
	"ibv_create_flow", "ibv_destroy_flow", "ibv_create_flow_action_esp",
	"ibv_modify_flow_action_esp", "ibv_destroy_flow_action", "ibv_alloc_td", "ibv_dealloc_td",
	"ibv_alloc_parent_domain", "ibv_create_wq", "ibv_modify_wq", "ibv_destroy_wq",
	"ibv_create_rwq_ind_table", "ibv_destroy_rwq_ind_table", "ibv_create_counters",
	"ibv_attach_counters_point_flow", "ibv_read_counters", "ibv_destroy_counters",
	"ibv_query_rt_values_ex", "ibv_modify_qp_rate_limit", "ibv_modify_cq", "ibv_post_srq_ops",
	"ibv_advise_mr", "ibv_alloc_null_mr", "ibv_open_qp",
};

static void check_device(enum fx_device_kind kind)
{
	struct ibv_srq_init_attr srq_init = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct objects o;
	char text[4096], line[128];
	int lines;

	rc_require_mock("real devices implement some of these operations");
	memset(&o, 0, sizeof o);
	fx_qp_create(&o.q, kind, IBV_QPT_RC);
	o.srq = ibv_create_srq(o.q.pd, &srq_init);
	if (!o.srq)
		fail_msg("ibv_create_srq: %s", strerror(errno));
	o.flow.context = o.action.context = o.td.context = o.wq.context = o.table.context =
		o.counters.context = o.q.ctx;
	lines = fx_stderr_of(call_each, &o, text, sizeof text);
	print_message("%s", text);
	if (o.wrong[0])
		fail_msg("%s", o.wrong);
	/* Each call said so once, though called twice. */
	for (size_t i = 0; i < sizeof said / sizeof *said; i++) {
		const char *at;

		snprintf(line, sizeof line, "rdmamock: %s: not implemented\n", said[i]);
		at = strstr(text, line);
		if (!at || strstr(at + 1, line))
			fail_msg("stderr has \"%s\" %s: %s", said[i], at ? "twice" : "not once", text);
	}
	assert_int_equal(lines, (int)(sizeof said / sizeof *said));
	FX_VERBS_OK(ibv_destroy_srq(o.srq));
	fx_qp_release(&o.q);
}

void ibv_create_flow__not_implemented_mlx5(void **state)
{
	check_device(FX_DEV_MLX5);
}

void ibv_create_flow__not_implemented_generic(void **state)
{
	check_device(FX_DEV_NOT_MLX5);
}
