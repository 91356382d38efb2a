/* libibverbs: queue pairs (RC, UC, UD) and their state machine.
 *
 * ibv_modify_qp applies the kernel's rules: the transitions and the
 * required and optional attributes of each (qp_state_table and
 * ib_modify_qp_is_ok in drivers/infiniband/core/verbs.c), the argument
 * checks of uverbs' modify_qp, and the value checks drivers make. The QP's
 * own state is the device's; qp->state is what libibverbs tracks, updated
 * by ibv_modify_qp and ibv_query_qp when IBV_QP_STATE is in the mask. */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define LIB "ibverbs"

/* ---------------------------------------------------------------- transitions */

enum { T_RC, T_UC, T_UD, T_TYPES };

struct transition {
	bool valid;
	int required[T_TYPES];
	int optional[T_TYPES];
};

#define INIT_RC_UC (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define INIT_UD    (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define RTR_UC     (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RTR_RC     (RTR_UC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_RC     (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | \
		    IBV_QP_MAX_QP_RD_ATOMIC)
#define TO_RTS_UC  (IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE)
#define TO_RTS_RC  (TO_RTS_UC | IBV_QP_MIN_RNR_TIMER)
#define TO_RTS_UD  (IBV_QP_CUR_STATE | IBV_QP_QKEY)
#define ANY        { .valid = true }

/* Every state may go to RESET, and every state but RESET to ERR. */
static const struct transition transitions[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_INIT] = { .valid = true, .required = { INIT_RC_UC, INIT_RC_UC, INIT_UD } },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_INIT] = { .valid = true, .optional = { INIT_RC_UC, INIT_RC_UC, INIT_UD } },
		[IBV_QPS_RTR] = {
			.valid = true,
			.required = { RTR_RC, RTR_UC, 0 },
			.optional = {
				IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
			},
		},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = {
			.valid = true,
			.required = { RTS_RC, IBV_QP_SQ_PSN, IBV_QP_SQ_PSN },
			.optional = { TO_RTS_RC, TO_RTS_UC, TO_RTS_UD },
		},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = { .valid = true, .optional = { TO_RTS_RC, TO_RTS_UC, TO_RTS_UD } },
		[IBV_QPS_SQD] = {
			.valid = true,
			.optional = { IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY,
				      IBV_QP_EN_SQD_ASYNC_NOTIFY },
		},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = { .valid = true, .optional = { TO_RTS_RC, TO_RTS_UC, TO_RTS_UD } },
		[IBV_QPS_SQD] = {
			.valid = true,
			.optional = {
				IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
					IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
					IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
					IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
				IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE,
				IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
			},
		},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = {
			.valid = true,
			.optional = { 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS, TO_RTS_UD },
		},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
	},
};

static int type_index(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC ? T_RC : type == IBV_QPT_UC ? T_UC : T_UD;
}

/* ib_modify_qp_is_ok. */
static bool transition_ok(enum ibv_qp_state cur, enum ibv_qp_state next, enum ibv_qp_type type,
			  int mask)
{
	const struct transition *t = &transitions[cur][next];
	int required = t->required[type_index(type)];
	int optional = t->optional[type_index(type)];

	if ((mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return false;
	if (!t->valid || (mask & required) != required)
		return false;
	return !(mask & ~(required | optional | IBV_QP_STATE));
}

/* ---------------------------------------------------------------- QPs */

struct mock_qp *verbs_qp_of(struct ibv_qp *qp, const char *call)
{
	struct mock_qp *mqp = (struct mock_qp *)qp;

	MOCK_REQUIRE(qp, call, "qp is NULL (upstream dereferences it)");
	MOCK_REQUIRE(mqp->magic == VERBS_QP_MAGIC, call,
		     "%p is not a queue pair from ibv_create_qp", (void *)qp);
	return mqp;
}

static int check_init_attr(const struct ibv_qp_init_attr *init, const struct verbs_profile *p)
{
	const struct ibv_qp_cap *cap = &init->cap;

	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD) {
		mock_log("ibv_create_qp: QP type %d is not modelled by the mock", (int)init->qp_type);
		return EOPNOTSUPP;
	}
	if (cap->max_send_wr > (uint32_t)p->max_qp_wr || cap->max_recv_wr > (uint32_t)p->max_qp_wr ||
	    cap->max_send_sge > (uint32_t)p->max_sge || cap->max_recv_sge > (uint32_t)p->max_sge ||
	    cap->max_inline_data > p->max_inline_data)
		return EINVAL;
	return 0;
}

MOCK_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	static uint32_t next_handle;
	struct mock_pd *mpd = verbs_pd_of(pd, "ibv_create_qp");
	struct mock_context *mc = verbs_context_of(pd->context, "ibv_create_qp");
	struct mock_cq *scq, *rcq;
	struct mock_qp *mqp;
	int err;

	FAULT_NULL(LIB, "ibv_create_qp");
	MOCK_REQUIRE(init, "ibv_create_qp", "qp_init_attr is NULL (upstream dereferences it)");
	/* libibverbs passes send_cq->handle and recv_cq->handle to the kernel. */
	MOCK_REQUIRE(init->send_cq && init->recv_cq, "ibv_create_qp",
		     "send_cq or recv_cq is NULL (upstream dereferences both)");
	MOCK_REQUIRE(!init->srq, "ibv_create_qp", "srq %p: the mock has no SRQs", (void *)init->srq);
	scq = verbs_cq_of(init->send_cq, "ibv_create_qp");
	rcq = verbs_cq_of(init->recv_cq, "ibv_create_qp");
	err = check_init_attr(init, verbs_profile_of(mc->mdev->personality));
	/* A CQ of another context is not a handle this context knows. */
	if (!err && (scq->cq.context != pd->context || rcq->cq.context != pd->context))
		err = EINVAL;
	if (!err && !(mqp = calloc(1, sizeof *mqp)))
		err = ENOMEM;
	if (err) {
		errno = err;
		return NULL;
	}
	mqp->magic = VERBS_QP_MAGIC;
	mqp->dev_serial = mc->mdev->serial;
	mqp->personality = mc->mdev->personality;
	mqp->mpd = mpd;
	mqp->scq = scq;
	mqp->rcq = rcq;
	mqp->state = IBV_QPS_RESET;
	mqp->cap = init->cap;
	mqp->sq_sig_all = init->sq_sig_all;
	/* What libibverbs sets on a new QP. */
	mqp->qp.context = pd->context;
	mqp->qp.qp_context = init->qp_context;
	mqp->qp.pd = pd;
	mqp->qp.send_cq = init->send_cq;
	mqp->qp.recv_cq = init->recv_cq;
	mqp->qp.qp_type = init->qp_type;
	mqp->qp.state = IBV_QPS_RESET;
	mqp->qp.handle = __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&mqp->qp.mutex, NULL);
	pthread_cond_init(&mqp->qp.cond, NULL);

	pthread_mutex_lock(&verbs_lock);
	err = fab_qp_create(mqp->dev_serial, init->qp_type, mqp, &mqp->qp.qp_num);
	if (!err) {
		mpd->users++;
		scq->users++;
		rcq->users++;
	}
	pthread_mutex_unlock(&verbs_lock);
	if (err) {
		pthread_mutex_destroy(&mqp->qp.mutex);
		pthread_cond_destroy(&mqp->qp.cond);
		free(mqp);
		errno = -err;
		return NULL;
	}
	return &mqp->qp;
}

static void drop_recvs(struct mock_qp *mqp)
{
	while (mqp->rq_head) {
		struct recv_wqe *w = mqp->rq_head;

		mqp->rq_head = w->next;
		free(w);
	}
	mqp->rq_tail = NULL;
	mqp->rq_count = 0;
}

/* Like mlx5, a QP that goes (to RESET or away) takes its unpolled
 * completions out of its CQs. */
static void reset_queues(struct mock_qp *mqp)
{
	drop_recvs(mqp);
	verbs_cq_forget_qp(mqp->scq, mqp);
	if (mqp->rcq != mqp->scq)
		verbs_cq_forget_qp(mqp->rcq, mqp);
	mqp->sq_posted = mqp->sq_freed = 0;
}

MOCK_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_destroy_qp");

	FAULT_POSITIVE(LIB, "ibv_destroy_qp");
	pthread_mutex_lock(&verbs_lock);
	reset_queues(mqp);
	mqp->mpd->users--;
	mqp->scq->users--;
	mqp->rcq->users--;
	fab_qp_destroy(qp->qp_num);
	mqp->magic = 0;
	pthread_mutex_unlock(&verbs_lock);
	/* No asynchronous events are ever reported, so none wait for acks. */
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(mqp);
	return 0;
}

void verbs_qp_flush_recvs(struct mock_qp *mqp)
{
	while (mqp->rq_head) {
		struct recv_wqe *w = mqp->rq_head;
		struct ibv_wc wc = {
			.wr_id = w->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = mqp->qp.qp_num,
		};

		mqp->rq_head = w->next;
		free(w);
		verbs_cq_add(mqp->rcq, &wc, mqp, false, 0, false);
	}
	mqp->rq_tail = NULL;
	mqp->rq_count = 0;
}

void verbs_qp_error(struct mock_qp *mqp, enum ibv_qp_state state)
{
	if (mqp->state == IBV_QPS_ERR || mqp->state == state)
		return;
	mqp->state = state;
	if (state == IBV_QPS_ERR)
		verbs_qp_flush_recvs(mqp);
	fab_qp_modified(mqp->qp.qp_num, state, 0);
}

static bool valid_gid_index(unsigned serial, int index)
{
	union ibv_gid gid;

	return fab_device_gid(serial, index, &gid) == 0;
}

/* The checks uverbs' modify_qp, _ib_modify_qp, ib_modify_qp_is_ok and the
 * drivers make, in that order; all fail with EINVAL but the first. */
static int check_modify(struct mock_qp *mqp, const struct ibv_qp_attr *attr, int *mask,
			enum ibv_qp_state *cur, enum ibv_qp_state *next)
{
	const struct verbs_profile *p = verbs_profile_of(mqp->personality);

	/* libibverbs: attributes from IBV_QP_RATE_LIMIT on need the extended
	 * command, which only raw packet QPs take. */
	if (*mask & ~(IBV_QP_RATE_LIMIT - 1))
		return EOPNOTSUPP;
	/* One-port devices. */
	if ((*mask & IBV_QP_PORT) && attr->port_num != 1)
		return EINVAL;
	if (*mask & IBV_QP_AV) {
		if (attr->ah_attr.port_num != 1)
			return EINVAL;
		if ((*mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RTR) {
			if (attr->ah_attr.port_num != mqp->attr.port_num)
				return EINVAL;
		} else if ((*mask & IBV_QP_PORT) && attr->port_num != attr->ah_attr.port_num) {
			return EINVAL;
		} else {
			*mask |= IBV_QP_PORT; /* SQD->SQD: a new path names its port */
		}
	}
	/* Alternate paths are for IB only; RoCE bans them. */
	if (*mask & IBV_QP_ALT_PATH)
		return EINVAL;
	if (((*mask & IBV_QP_CUR_STATE) && (unsigned)attr->cur_qp_state > IBV_QPS_ERR) ||
	    ((*mask & IBV_QP_STATE) && (unsigned)attr->qp_state > IBV_QPS_ERR))
		return EINVAL;

	*cur = *mask & IBV_QP_CUR_STATE ? attr->cur_qp_state : mqp->state;
	*next = *mask & IBV_QP_STATE ? attr->qp_state : *cur;
	if (!transition_ok(*cur, *next, mqp->qp.qp_type, *mask))
		return EINVAL;
	/* The device will not move from a state the QP is not in. */
	if (*cur != mqp->state)
		return EINVAL;

	if ((*mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= p->max_pkeys)
		return EINVAL;
	if ((*mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > p->max_qp_rd_atom)
		return EINVAL;
	if ((*mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr->max_dest_rd_atomic > p->max_qp_rd_atom)
		return EINVAL;
	if ((*mask & IBV_QP_PATH_MTU) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096))
		return EINVAL;
	/* RoCE addresses need a GRH naming a source GID the port has. */
	if ((*mask & IBV_QP_AV) &&
	    (!attr->ah_attr.is_global || !valid_gid_index(mqp->dev_serial, attr->ah_attr.grh.sgid_index)))
		return EINVAL;
	return 0;
}

static void take_attrs(struct mock_qp *mqp, const struct ibv_qp_attr *attr, int mask)
{
	struct ibv_qp_attr *held = &mqp->attr;

#define TAKE(bit, field)                       \
	do {                                   \
		if (mask & (bit))              \
			held->field = attr->field; \
	} while (0)
	TAKE(IBV_QP_PKEY_INDEX, pkey_index);
	TAKE(IBV_QP_PORT, port_num);
	TAKE(IBV_QP_QKEY, qkey);
	TAKE(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	TAKE(IBV_QP_AV, ah_attr);
	TAKE(IBV_QP_PATH_MTU, path_mtu);
	TAKE(IBV_QP_DEST_QPN, dest_qp_num);
	TAKE(IBV_QP_RQ_PSN, rq_psn);
	TAKE(IBV_QP_SQ_PSN, sq_psn);
	TAKE(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	TAKE(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	TAKE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	TAKE(IBV_QP_TIMEOUT, timeout);
	TAKE(IBV_QP_RETRY_CNT, retry_cnt);
	TAKE(IBV_QP_RNR_RETRY, rnr_retry);
	TAKE(IBV_QP_PATH_MIG_STATE, path_mig_state);
	TAKE(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
#undef TAKE
	if (mask & IBV_QP_AV)
		held->port_num = attr->ah_attr.port_num;
	/* The kernel keeps PSNs to 24 bits. */
	held->rq_psn &= 0xffffff;
	held->sq_psn &= 0xffffff;
}

MOCK_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_modify_qp");
	enum ibv_qp_state cur, next;
	int mask = attr_mask, err;

	FAULT_POSITIVE(LIB, "ibv_modify_qp");
	MOCK_REQUIRE(attr, "ibv_modify_qp", "attr is NULL (upstream dereferences it)");
	pthread_mutex_lock(&verbs_lock);
	err = check_modify(mqp, attr, &mask, &cur, &next);
	if (!err) {
		if (next == IBV_QPS_RESET) {
			reset_queues(mqp);
			memset(&mqp->attr, 0, sizeof mqp->attr);
		} else {
			take_attrs(mqp, attr, mask);
			if (next == IBV_QPS_ERR && cur != IBV_QPS_ERR)
				verbs_qp_flush_recvs(mqp);
		}
		mqp->state = next;
		fab_qp_modified(qp->qp_num, next, mask & IBV_QP_DEST_QPN ? attr->dest_qp_num : 0);
	}
	pthread_mutex_unlock(&verbs_lock);
	if (!err && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;
	return err;
}

/* Like the kernel, every attribute is reported whatever the mask. */
MOCK_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			     struct ibv_qp_init_attr *init_attr)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_query_qp");

	FAULT_POSITIVE(LIB, "ibv_query_qp");
	MOCK_REQUIRE(attr && init_attr, "ibv_query_qp",
		     "attr or init_attr is NULL (upstream writes both)");
	if (attr_mask & ~(IBV_QP_RATE_LIMIT - 1))
		return EOPNOTSUPP;
	pthread_mutex_lock(&verbs_lock);
	*attr = mqp->attr;
	attr->qp_state = attr->cur_qp_state = mqp->state;
	attr->cap = mqp->cap;
	memset(init_attr, 0, sizeof *init_attr);
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->qp_type = qp->qp_type;
	init_attr->cap = mqp->cap;
	init_attr->sq_sig_all = mqp->sq_sig_all;
	pthread_mutex_unlock(&verbs_lock);
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

/* Whether the device places a message's data in order, so that a program
 * may poll the last byte of an RDMA WRITE. Neither device modelled says
 * so: rxe has no such query (libibverbs answers 0) and a ConnectX-5, the
 * mlx5 profile, lacks the capability. Unknown flags also give 0. */
MOCK_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
					   uint32_t flags)
{
	verbs_qp_of(qp, "ibv_query_qp_data_in_order");
	return 0;
}
