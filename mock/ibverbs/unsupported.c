/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: the context operations the mock does not implement. The
 * header's inline wrappers (ibv_create_flow, ibv_alloc_td,
 * ...) call these through the context, as they call a provider's; each
 * fails as libibverbs' dummy op for a provider that lacks it (EOPNOTSUPP,
 * NULL and errno for constructors) and says once that it is not
 * implemented, like the generated stubs of the exported calls. */
#include "verbs.h"

#define SAY(call)                                   \
	do {                                        \
		static int said_;                   \
		int err_ = errno;                   \
		mock_not_implemented((call), &said_); \
		errno = err_;                       \
	} while (0)

#define FAIL_NULL(call)          \
	do {                     \
		SAY(call);       \
		errno = EOPNOTSUPP; \
		return NULL;     \
	} while (0)

#define FAIL_POSITIVE(call)        \
	do {                       \
		SAY(call);         \
		return EOPNOTSUPP; \
	} while (0)

static int advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		     struct ibv_sge *sg_list, uint32_t num_sges)
{
	FAIL_POSITIVE("ibv_advise_mr");
}

static struct ibv_mr *alloc_null_mr(struct ibv_pd *pd)
{
	FAIL_NULL("ibv_alloc_null_mr");
}

static int read_counters(struct ibv_counters *counters, uint64_t *values, uint32_t n,
			 uint32_t flags)
{
	FAIL_POSITIVE("ibv_read_counters");
}

static int attach_counters_point_flow(struct ibv_counters *counters,
				      struct ibv_counter_attach_attr *attr, struct ibv_flow *flow)
{
	FAIL_POSITIVE("ibv_attach_counters_point_flow");
}

static struct ibv_counters *create_counters(struct ibv_context *context,
					    struct ibv_counters_init_attr *attr)
{
	FAIL_NULL("ibv_create_counters");
}

static int destroy_counters(struct ibv_counters *counters)
{
	FAIL_POSITIVE("ibv_destroy_counters");
}

static int modify_flow_action_esp(struct ibv_flow_action *action,
				  struct ibv_flow_action_esp_attr *attr)
{
	FAIL_POSITIVE("ibv_modify_flow_action_esp");
}

static int destroy_flow_action(struct ibv_flow_action *action)
{
	FAIL_POSITIVE("ibv_destroy_flow_action");
}

static struct ibv_flow_action *create_flow_action_esp(struct ibv_context *context,
						      struct ibv_flow_action_esp_attr *attr)
{
	FAIL_NULL("ibv_create_flow_action_esp");
}

static int modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr)
{
	FAIL_POSITIVE("ibv_modify_qp_rate_limit");
}

static struct ibv_pd *alloc_parent_domain(struct ibv_context *context,
					  struct ibv_parent_domain_init_attr *attr)
{
	FAIL_NULL("ibv_alloc_parent_domain");
}

static int dealloc_td(struct ibv_td *td)
{
	FAIL_POSITIVE("ibv_dealloc_td");
}

static struct ibv_td *alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	FAIL_NULL("ibv_alloc_td");
}

static int modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)
{
	FAIL_POSITIVE("ibv_modify_cq");
}

static int post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op)
{
	if (bad_op)
		*bad_op = op;
	FAIL_POSITIVE("ibv_post_srq_ops");
}

static int destroy_rwq_ind_table(struct ibv_rwq_ind_table *table)
{
	FAIL_POSITIVE("ibv_destroy_rwq_ind_table");
}

static struct ibv_rwq_ind_table *create_rwq_ind_table(struct ibv_context *context,
						      struct ibv_rwq_ind_table_init_attr *attr)
{
	FAIL_NULL("ibv_create_rwq_ind_table");
}

static int destroy_wq(struct ibv_wq *wq)
{
	FAIL_POSITIVE("ibv_destroy_wq");
}

static int modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	FAIL_POSITIVE("ibv_modify_wq");
}

static struct ibv_wq *create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	FAIL_NULL("ibv_create_wq");
}

static int query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	FAIL_POSITIVE("ibv_query_rt_values_ex");
}

static int destroy_flow(struct ibv_flow *flow)
{
	FAIL_POSITIVE("ibv_destroy_flow");
}

static struct ibv_flow *create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	FAIL_NULL("ibv_create_flow");
}

static struct ibv_qp *open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	FAIL_NULL("ibv_open_qp");
}

void verbs_set_unsupported_ops(struct verbs_context *v)
{
	v->advise_mr = advise_mr;
	v->alloc_null_mr = alloc_null_mr;
	v->read_counters = read_counters;
	v->attach_counters_point_flow = attach_counters_point_flow;
	v->create_counters = create_counters;
	v->destroy_counters = destroy_counters;
	v->modify_flow_action_esp = modify_flow_action_esp;
	v->destroy_flow_action = destroy_flow_action;
	v->create_flow_action_esp = create_flow_action_esp;
	v->modify_qp_rate_limit = modify_qp_rate_limit;
	v->alloc_parent_domain = alloc_parent_domain;
	v->dealloc_td = dealloc_td;
	v->alloc_td = alloc_td;
	v->modify_cq = modify_cq;
	v->post_srq_ops = post_srq_ops;
	v->destroy_rwq_ind_table = destroy_rwq_ind_table;
	v->create_rwq_ind_table = create_rwq_ind_table;
	v->destroy_wq = destroy_wq;
	v->modify_wq = modify_wq;
	v->create_wq = create_wq;
	v->query_rt_values = query_rt_values;
	v->ibv_destroy_flow = destroy_flow;
	v->ibv_create_flow = create_flow;
	v->open_qp = open_qp;
}
