/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: queue pairs (RC, UC, UD, XRC) and their state machine.
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
/* siw-abi.h: SIW_MAX_INLINE, five 16-byte SGEs. */
#define SIW_MAX_INLINE_DATA 80

/* ---------------------------------------------------------------- transitions */

/* XI: the XRC initiator (IBV_QPT_XRC_SEND), XT: the target (XRC_RECV). */
enum { T_RC, T_UC, T_UD, T_XI, T_XT, T_TYPES };

struct transition {
	bool valid;
	int required[T_TYPES];
	int optional[T_TYPES];
};

#define INIT_RC_UC (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define INIT_UD    (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define RTR_UC     (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RTR_RC     (RTR_UC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTR_OPT    (IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX)
#define RTS_RC     (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | \
		    IBV_QP_MAX_QP_RD_ATOMIC)
#define TO_RTS_UC  (IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE)
#define TO_RTS_RC  (TO_RTS_UC | IBV_QP_MIN_RNR_TIMER)
#define TO_RTS_UD  (IBV_QP_CUR_STATE | IBV_QP_QKEY)
#define SQD_SQD_XI (IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_ALT_PATH | \
		    IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE)
#define SQD_SQD_XT (IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_MAX_DEST_RD_ATOMIC | \
		    IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | \
		    IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE)
#define EVERY(m)   { m, m, m, m, m }
#define ANY        { .valid = true }

/* Every state may go to RESET, and every state but RESET to ERR. */
static const struct transition transitions[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_INIT] = {
			.valid = true,
			.required = { INIT_RC_UC, INIT_RC_UC, INIT_UD, INIT_RC_UC, INIT_RC_UC },
		},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_INIT] = {
			.valid = true,
			.optional = { INIT_RC_UC, INIT_RC_UC, INIT_UD, INIT_RC_UC, INIT_RC_UC },
		},
		[IBV_QPS_RTR] = {
			.valid = true,
			.required = { RTR_RC, RTR_UC, 0, RTR_UC, RTR_RC },
			.optional = { RTR_OPT, RTR_OPT, IBV_QP_PKEY_INDEX | IBV_QP_QKEY, RTR_OPT, RTR_OPT },
		},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = {
			.valid = true,
			.required = { RTS_RC, IBV_QP_SQ_PSN, IBV_QP_SQ_PSN, RTS_RC,
				      IBV_QP_TIMEOUT | IBV_QP_SQ_PSN },
			.optional = { TO_RTS_RC, TO_RTS_UC, TO_RTS_UD, TO_RTS_UC, TO_RTS_RC },
		},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = {
			.valid = true,
			.optional = { TO_RTS_RC, TO_RTS_UC, TO_RTS_UD, TO_RTS_UC, TO_RTS_RC },
		},
		[IBV_QPS_SQD] = { .valid = true, .optional = EVERY(IBV_QP_EN_SQD_ASYNC_NOTIFY) },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = {
			.valid = true,
			.optional = { TO_RTS_RC, TO_RTS_UC, TO_RTS_UD, TO_RTS_UC, TO_RTS_RC },
		},
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
				SQD_SQD_XI,
				SQD_SQD_XT,
			},
		},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
		[IBV_QPS_RTS] = {
			.valid = true,
			.optional = { 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS, TO_RTS_UD, 0, 0 },
		},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = ANY,
		[IBV_QPS_ERR] = ANY,
	},
};

static int type_index(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UC:
		return T_UC;
	case IBV_QPT_UD:
		return T_UD;
	case IBV_QPT_XRC_SEND:
		return T_XI;
	case IBV_QPT_XRC_RECV:
		return T_XT;
	default:
		return T_RC;
	}
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
	ledger_require(LEDGER_QP, qp, call);
	MOCK_REQUIRE(mqp->magic == VERBS_QP_MAGIC, call,
		     "%p is not a queue pair from ibv_create_qp", (void *)qp);
	return mqp;
}

/* The send operations ibv_wr_* can post on each device (rxe and mlx5 both
 * take these; memory windows, invalidation and TSO are not modelled). */
#define SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
#define CREATE_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_CREATE_FLAGS | \
		     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/* What each QP type can post (rxe's RXE_SUP_*_QP_SEND_OPS_FLAGS, less
 * atomic write, which the devices do not report). */
static uint64_t send_ops(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UD:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	case IBV_QPT_UC:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_BIND_MW |
		       IBV_QP_EX_WITH_SEND_WITH_INV;
	case IBV_QPT_RC:
		return SEND_OPS | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
		       IBV_QP_EX_WITH_SEND_WITH_INV;
	default:
		return SEND_OPS;
	}
}

/* What uverbs and the drivers refuse at creation; 0 when it may go on. */
static int check_init_attr(const struct ibv_qp_init_attr_ex *init, const struct fab_profile *p,
			   struct ibv_context *ctx, int dc_type)
{
	const struct ibv_qp_cap *cap = &init->cap;
	enum ibv_qp_type type = init->qp_type;
	bool xrc = type == IBV_QPT_XRC_SEND || type == IBV_QPT_XRC_RECV;

	/* A DCT (mlx5_ib_create_dct) needs its PD, SRQ and receive CQ, and
	 * takes nothing else; it has no queue of its own. */
	if (dc_type == MLX5DV_DCTYPE_DCT) {
		if (!(init->comp_mask & IBV_QP_INIT_ATTR_PD) || !init->pd || init->pd->context != ctx ||
		    !init->srq || !init->recv_cq || init->srq->context != ctx ||
		    init->recv_cq->context != ctx)
			return EINVAL;
		return 0;
	}
	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD && !xrc && !dc_type) {
		mock_log("ibv_create_qp: QP type %d is not modelled by the mock", (int)type);
		return EOPNOTSUPP;
	}
	if (init->comp_mask & ~(uint32_t)CREATE_MASK) {
		mock_log("ibv_create_qp_ex: comp_mask 0x%x asks for what the mock does not model",
			 init->comp_mask);
		return EOPNOTSUPP;
	}
	/* rxe takes no create flag (check_qp_init_attr: EOPNOTSUPP); the mlx5
	 * ones (scatter FCS, VLAN stripping, ...) are not modelled. */
	if ((init->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && init->create_flags) {
		mock_log("ibv_create_qp_ex: create_flags 0x%x are not modelled by the mock",
			 init->create_flags);
		return EOPNOTSUPP;
	}
	if (xrc && !p->xrc)
		return EOPNOTSUPP; /* rxe has no XRC */
	if (type == IBV_QPT_XRC_RECV) {
		if (!(init->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !init->xrcd)
			return EINVAL;
		if (init->xrcd->context != ctx)
			return EINVAL;
		return 0;
	}
	if (!(init->comp_mask & IBV_QP_INIT_ATTR_PD) || !init->pd || init->pd->context != ctx)
		return EINVAL;
	if ((init->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (init->send_ops_flags & ~send_ops(type))) {
		mock_log("ibv_create_qp_ex: send_ops_flags 0x%llx: the mock posts only 0x%llx on this QP type",
			 (unsigned long long)init->send_ops_flags, (unsigned long long)send_ops(type));
		return EOPNOTSUPP;
	}
	if (cap->max_send_wr > (uint32_t)p->max_qp_wr || cap->max_send_sge > (uint32_t)p->max_sge)
		return EINVAL;
	/* The receive side is the SRQ's when there is one. */
	if (!init->srq && type != IBV_QPT_XRC_SEND &&
	    (cap->max_recv_wr > (uint32_t)p->max_qp_wr || cap->max_recv_sge > (uint32_t)p->max_sge))
		return EINVAL;
	/* libibverbs passes send_cq->handle and recv_cq->handle to the kernel. */
	MOCK_REQUIRE(init->send_cq && (init->recv_cq || type == IBV_QPT_XRC_SEND), "ibv_create_qp",
		     "send_cq or recv_cq is NULL (upstream dereferences both)");
	if (init->send_cq->context != ctx || (init->recv_cq && init->recv_cq->context != ctx))
		return EINVAL;
	if (init->srq && (type == IBV_QPT_XRC_SEND || init->srq->context != ctx))
		return EINVAL;
	return 0;
}

/* Take the objects the QP holds, or give them back. */
static void hold(struct mock_qp *mqp, int step)
{
	if (mqp->mpd)
		mqp->mpd->users += step;
	if (mqp->scq)
		mqp->scq->users += step;
	if (mqp->rcq)
		mqp->rcq->users += step;
	if (mqp->srq)
		mqp->srq->users += step;
	if (mqp->xrcd)
		mqp->xrcd->users += step;
}

/* mlx5's sq_overhead: the fixed segments of the largest work request the
 * QP may post (its send_ops_flags, else every operation of its type): the
 * control segment, a remote address and an atomic segment, or a memory
 * window bind's UMR segments (192 bytes); then UD's address vector and
 * XRC's SRQ number. */
static unsigned mlx5_sq_overhead(const struct ibv_qp_init_attr_ex *init)
{
	uint64_t ops = init->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS ? init->send_ops_flags
		       : init->qp_type == IBV_QPT_UD ? IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM
		       : SEND_OPS | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	unsigned size = 16;

	if (ops & (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		   IBV_QP_EX_WITH_RDMA_READ))
		size = 32;
	if (ops & (IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD))
		size = 48;
	if (ops & (IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV))
		size = 192;
	if (init->qp_type == IBV_QPT_UD || init->qp_type == IBV_QPT_DRIVER) /* a DCI's vector too */
		size += 48;
	else if (init->qp_type == IBV_QPT_XRC_SEND)
		size += 16;
	return size;
}

/* The send queue as the provider sizes it from what was asked: EINVAL for
 * what it cannot hold, else what it grants in cap, which it reports back.
 * Inline data fills the work request, so the inline room granted is what
 * the WQE leaves (a program may send that much inline though it asked for
 * none), and a create asking for what an earlier one granted gets it
 * again (libfabric's verbs provider probes the largest inline size, then
 * asks for the size the probe's QP reported).
 * - rxe (rxe_qp_chk_cap, rxe_qp_init_req): max_inline_data up to the
 *   device's; a WQE of max(max_send_sge x 16, max_inline_data) bytes,
 *   both then what it holds.
 * - mlx5 (mlx5_calc_send_wqe, mlx5_calc_sq_size), only with a send queue:
 *   the fixed segments, then max(16 per SGE, 4 + the inline data,
 *   16-aligned), no more than the device's largest WQE, in 64-byte basic
 *   blocks; the inline room is the WQE less the segments less 4. */
static uint32_t rxe_depth(uint32_t asked)
{
	uint32_t slots = 1;

	while (slots < asked + 1)
		slots <<= 1;
	return slots - 1;
}

static int size_send_queue(const struct fab_profile *p, enum rdmamock_personality personality,
			   const struct ibv_qp_init_attr_ex *init, struct ibv_qp_cap *cap)
{
	unsigned overhead, body, wqe;

	/* The one RNIC modelled, siw (siw_create_qp): inline data up to
	 * SIW_MAX_INLINE, 80 bytes (five of its SGEs), a send queue of at
	 * least one, and the caps reported as asked. */
	if (p->transport == IBV_TRANSPORT_IWARP)
		return cap->max_inline_data > SIW_MAX_INLINE_DATA || !cap->max_send_wr ? EINVAL : 0;
	if (personality != RDMAMOCK_MLX5) {
		if (cap->max_inline_data > p->max_inline_data)
			return EINVAL;
		wqe = cap->max_send_sge * 16u > cap->max_inline_data ? cap->max_send_sge * 16u :
								       cap->max_inline_data;
		cap->max_send_sge = wqe / 16u;
		cap->max_inline_data = wqe;
		/* rxe_queue_init: each ring is the power of two above the
		 * depth asked for, and rxe grants and reports its depth (one
		 * slot less): 15 for 8 (measured on 6.1 and 7.2). */
		cap->max_send_wr = rxe_depth(cap->max_send_wr);
		cap->max_recv_wr = rxe_depth(cap->max_recv_wr);
		return 0;
	}
	if (!cap->max_send_wr)
		return 0;
	overhead = mlx5_sq_overhead(init);
	if (cap->max_inline_data > p->max_wqe_size)
		return EINVAL;
	body = cap->max_send_sge * 16u;
	if (cap->max_inline_data && ((4u + cap->max_inline_data + 15u) & ~15u) > body)
		body = (4u + cap->max_inline_data + 15u) & ~15u;
	if (overhead + body > p->max_wqe_size)
		return EINVAL;
	wqe = (overhead + body + 63u) & ~63u;
	cap->max_inline_data = wqe - overhead - 4u;
	return 0;
}

static struct ibv_qp *create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *init,
				int dc_type, uint64_t dc_key)
{
	static uint32_t next_handle;
	struct mock_context *mc = verbs_context_of(ctx, "ibv_create_qp");
	const struct fab_profile *p = fab_profile_of(mc->mdev->personality);
	struct ibv_qp_cap cap = init->cap;
	struct mock_qp *mqp;
	int err;

	err = check_init_attr(init, p, ctx, dc_type);
	/* An RNIC's one service is RC (siw_create_qp: EOPNOTSUPP). */
	if (!err && p->transport == IBV_TRANSPORT_IWARP && init->qp_type != IBV_QPT_RC)
		err = EOPNOTSUPP;
	if (dc_type == MLX5DV_DCTYPE_DCT)
		memset(&cap, 0, sizeof cap);
	else if (!err && init->qp_type != IBV_QPT_XRC_RECV)
		err = size_send_queue(p, mc->mdev->personality, init, &cap);
	if (!err && !(mqp = fab_alloc(sizeof *mqp)))
		err = ENOMEM;
	if (err) {
		errno = err;
		return NULL;
	}
	mqp->magic = VERBS_QP_MAGIC;
	mqp->dev_serial = mc->mdev->serial;
	mqp->personality = mc->mdev->personality;
	mqp->ib = mc->mdev->ib;
	mqp->state = IBV_QPS_RESET;
	mqp->cap = cap;
	mqp->sq_sig_all = init->sq_sig_all;
	mqp->dc_type = dc_type;
	mqp->dc_key = dc_key;
	if (init->qp_type == IBV_QPT_XRC_RECV) {
		mqp->xrcd = (struct mock_xrcd *)init->xrcd;
		memset(&mqp->cap, 0, sizeof mqp->cap);
	} else {
		mqp->mpd = verbs_pd_of(init->pd, "ibv_create_qp");
		mqp->scq = dc_type == MLX5DV_DCTYPE_DCT ? NULL : verbs_cq_of(init->send_cq, "ibv_create_qp");
		if (init->qp_type != IBV_QPT_XRC_SEND) {
			mqp->rcq = verbs_cq_of(init->recv_cq, "ibv_create_qp");
			mqp->srq = init->srq ? verbs_srq_of(init->srq, "ibv_create_qp") : NULL;
		}
		/* A QP on an SRQ has no receive queue of its own; a DCI
		 * receives nothing, and takes no SRQ. */
		if (dc_type == MLX5DV_DCTYPE_DCI)
			mqp->srq = NULL;
		if (mqp->srq || init->qp_type == IBV_QPT_XRC_SEND || dc_type)
			mqp->cap.max_recv_wr = mqp->cap.max_recv_sge = 0;
	}
	/* What libibverbs sets on a new QP (cmd_qp.c set_qp): the PD, CQs and
	 * SRQ as given, even where the QP type uses none of them (an XRC
	 * target's PD, which librdmacm then takes for the id's). */
	mqp->qp.context = ctx;
	mqp->qp.qp_context = init->qp_context;
	mqp->qp.pd = init->pd;
	mqp->qp.send_cq = init->send_cq;
	mqp->qp.recv_cq = init->recv_cq;
	mqp->qp.srq = init->srq;
	mqp->qp.qp_type = init->qp_type;
	mqp->qp.state = IBV_QPS_RESET;
	mqp->qp.handle = __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&mqp->qp.mutex, NULL);
	pthread_cond_init(&mqp->qp.cond, NULL);
	if (init->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		mqp->extended = mqp->ex_view = true;
		mqp->send_ops_flags = init->send_ops_flags;
		verbs_qp_ex_init(mqp);
	}

	verbs_lock_take();
	/* A DCT has its number, and is on the fabric, from RTR on. */
	if (dc_type != MLX5DV_DCTYPE_DCT)
		err = fab_qp_create(mqp->dev_serial, init->qp_type, mqp, verbs_qp_receive, &mqp->qp.qp_num);
	if (!err)
		hold(mqp, 1);
	verbs_lock_give();
	if (err) {
		pthread_mutex_destroy(&mqp->qp.mutex);
		pthread_cond_destroy(&mqp->qp.cond);
		fab_free(mqp);
		errno = -err;
		return NULL;
	}
	/* The kernel reports the capacities it granted. */
	init->cap = mqp->cap;
	ledger_add(LEDGER_QP, &mqp->qp, "ibv_create_qp");
	if (dc_type == MLX5DV_DCTYPE_DCT)
		ledger_label(LEDGER_QP, &mqp->qp, "a DCT");
	else
		ledger_note(LEDGER_QP, &mqp->qp, "qp_num 0x%x", mqp->qp.qp_num);
	return &mqp->qp;
}

MOCK_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	struct ibv_qp_init_attr_ex ex = { 0 };
	struct ibv_qp *qp;

	verbs_pd_of(pd, "ibv_create_qp");
	verbs_context_of(pd->context, "ibv_create_qp");
	FAULT_NULL(LIB, "ibv_create_qp");
	VERBS_DEAD_NULL(pd->context);
	MOCK_REQUIRE(init, "ibv_create_qp", "qp_init_attr is NULL (upstream dereferences it)");
	memcpy(&ex, init, sizeof *init);
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = create_qp(pd->context, &ex, 0, 0);
	if (qp)
		init->cap = ex.cap;
	return qp;
}

/* verbs_context's create_qp_ex, behind the header's ibv_create_qp_ex. */
struct ibv_qp *verbs_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct mock_qp *mqp;
	struct ibv_qp *qp;

	LEDGER_CALL("ibv_create_qp_ex");

	verbs_context_of(context, "ibv_create_qp_ex");
	if (mock_fault(FAULT_NAME(LIB, "ibv_create_qp_ex"), &errno))
		return NULL;
	MOCK_REQUIRE(attr, "ibv_create_qp_ex", "qp_init_attr_ex is NULL (upstream dereferences it)");
	qp = create_qp(context, attr, 0, 0);
	mqp = qp ? verbs_qp_of(qp, "ibv_create_qp_ex") : NULL;
	/* rxe_create_qp_ex marks every QP it makes extended (VERBS_QP_EX),
	 * mlx5_create_qp_ex only those with send_ops_flags. Without them
	 * rxe leaves the ibv_wr_* calls unset; here they abort, named. */
	if (mqp && !mqp->ex_view && mqp->personality != RDMAMOCK_MLX5) {
		mqp->ex_view = true;
		verbs_qp_ex_init(mqp);
	}
	return qp;
}

/* mlx5dv_create_qp of a DCI or a DCT (mlx5.c has made the provider's
 * checks), on the verbs layer's QP. */
struct ibv_qp *verbs_create_dc_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				  int dc_type, uint64_t access_key)
{
	verbs_context_of(context, "mlx5dv_create_qp");
	return create_qp(context, attr, dc_type, access_key);
}

/* The extended view of a QP that has one (libibverbs: VERBS_QP_EX); NULL
 * (errno untouched) for any other. */
MOCK_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_qp_to_qp_ex");

	return mqp->ex_view ? &mqp->qpx : NULL;
}

/* Like mlx5, a QP that goes (to RESET or away) takes its unpolled
 * completions out of its CQs. */
static void reset_queues(struct mock_qp *mqp)
{
	verbs_qp_end_stall(mqp, false);
	verbs_rq_drop(&mqp->rq);
	if (mqp->scq)
		verbs_cq_forget_qp(mqp->scq, mqp);
	if (mqp->rcq && mqp->rcq != mqp->scq)
		verbs_cq_forget_qp(mqp->rcq, mqp);
	if (mqp->srq && mqp->srq->cq)
		verbs_cq_forget_qp(mqp->srq->cq, mqp);
	mqp->sq_posted = mqp->sq_freed = 0;
}

MOCK_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_destroy_qp");
	uint32_t reported;

	ledger_destroying(LEDGER_QP, qp);
	FAULT_POSITIVE(LIB, "ibv_destroy_qp");
	VERBS_DEAD_DESTROY(qp->context, LEDGER_QP, qp);
	/* uverbs_free_qp: a user's QP still attached to a multicast group
	 * is not destroyed until it detaches. */
	if (fab_mcast_attached(qp->qp_num))
		return EBUSY;
	verbs_lock_take();
	reset_queues(mqp);
	hold(mqp, -1);
	mlx5_qp_free(mqp);
	if (qp->qp_num) /* a DCT before RTR is not on the fabric */
		fab_qp_destroy(qp->qp_num);
	verbs_async_forget(qp->context, qp);
	verbs_mw_forget_qp(mqp);
	mqp->magic = 0;
	ledger_del(LEDGER_QP, qp, "ibv_destroy_qp");
	reported = mqp->async_reported;
	verbs_lock_give();
	/* As upstream: wait for the acks of the asynchronous events read. */
	verbs_wait_async_acks(&qp->mutex, &qp->cond, &qp->events_completed, reported,
			      "ibv_destroy_qp", qp);
	verbs_qp_ex_free(mqp);
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	fab_free(mqp);
	return 0;
}

void verbs_qp_flush_recvs(struct mock_qp *mqp)
{
	struct recv_wqe *w;

	verbs_rq_pull(mqp, true);
	while ((w = verbs_rq_take(&mqp->rq))) {
		struct ibv_wc wc = {
			.wr_id = w->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = mqp->qp.qp_num,
		};

		uint16_t index = w->wqe_index;

		verbs_rq_recycle(w);
		verbs_cq_add(mqp->rcq, &wc, mqp, false, index, false, NULL);
	}
}

/* Entering ERR: the QP's own receives are flushed; a QP on an SRQ leaves
 * the SRQ's alone and reports that it took its last one (IBA 11.5.3:
 * "last WQE reached"), so that its user may destroy it safely. */
static void enter_error(struct mock_qp *mqp)
{
	verbs_qp_end_stall(mqp, true);
	verbs_qp_flush_recvs(mqp);
	/* mlx5's firmware raises it (SRQ_LAST_WQE). rxe does not on kernel
	 * 6.1, which the generic device follows; 7.2's rxe raises it at every
	 * move to ERR and for every packet that then arrives (measured): a
	 * replayed rxe profile that does not record SRQ_LAST_WQE_REACHED
	 * raises it at the move. */
	if ((mqp->srq || mqp->qp.qp_type == IBV_QPT_XRC_RECV) &&
	    (mqp->personality == RDMAMOCK_MLX5 ||
	     (fab_replay_is(mqp->personality) &&
	      !fab_replay_deviates(mqp->personality, "SRQ_LAST_WQE_REACHED"))))
		verbs_async_qp(mqp, IBV_EVENT_QP_LAST_WQE_REACHED);
}

void verbs_qp_error(struct mock_qp *mqp, enum ibv_qp_state state)
{
	if (mqp->state == IBV_QPS_ERR || mqp->state == state)
		return;
	mqp->state = state;
	if (state == IBV_QPS_ERR)
		enter_error(mqp);
	fab_qp_modified(mqp->qp.qp_num, state, 0, NULL);
}

/* ---------------------------------------------------------------- multicast */

/* The kernel's ib_attach_mcast: UD QPs and multicast GIDs only. */
static int mcast(struct ibv_qp *qp, const union ibv_gid *gid, bool attach, const char *call)
{
	struct mock_qp *mqp = verbs_qp_of(qp, call);
	int err;

	MOCK_REQUIRE(gid, call, "gid is NULL (upstream copies it)");
	if (mqp->qp.qp_type != IBV_QPT_UD || !fab_gid_is_multicast(gid))
		return EINVAL;
	verbs_lock_take();
	err = attach ? fab_mcast_attach(qp->qp_num, gid) : fab_mcast_detach(qp->qp_num, gid);
	verbs_lock_give();
	return -err;
}

MOCK_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	FAULT_POSITIVE(LIB, "ibv_attach_mcast");
	return mcast(qp, gid, true, "ibv_attach_mcast");
}

MOCK_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	FAULT_POSITIVE(LIB, "ibv_detach_mcast");
	return mcast(qp, gid, false, "ibv_detach_mcast");
}

/* ---------------------------------------------------------------- modify */

/* The kernel's _ib_modify_qp takes the AV's source GID with
 * rdma_fill_sgid_attr (cache.c rdma_get_gid_attr): an index past the
 * table is EINVAL, an empty entry ENODATA. */
static int sgid_error(struct mock_qp *mqp, int index)
{
	union ibv_gid gid;

	return verbs_gid(verbs_context_of(mqp->qp.context, "ibv_modify_qp"), 1, (uint32_t)index,
			 &gid, NULL);
}

/* mlx5_ib_modify_dct and modify_dci_qp_is_ok: the transitions a DC QP
 * makes, each with exactly these attributes (required | optional). A DCT
 * goes from RESET to INIT to RTR, and no further: it is destroyed from
 * there. */
static bool dc_transition_ok(const struct mock_qp *mqp, enum ibv_qp_state cur,
			     enum ibv_qp_state next, int mask)
{
	int req = IBV_QP_STATE, opt = 0;

	if (!(mask & IBV_QP_STATE))
		return false;
	if (mqp->dc_type == MLX5DV_DCTYPE_DCT) {
		if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
			req |= IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
			req |= IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU;
		else
			return false;
	} else if (next == IBV_QPS_RESET) {
		/* IBV_QP_STATE only */
	} else if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT) {
		req |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	} else if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT) {
		opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	} else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		req |= IBV_QP_PATH_MTU;
		opt = IBV_QP_PKEY_INDEX | IBV_QP_AV;
	} else if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
		req |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
		       IBV_QP_SQ_PSN;
		opt = IBV_QP_MIN_RNR_TIMER;
	} else if (cur == IBV_QPS_RTS && next == IBV_QPS_RTS) {
		opt = IBV_QP_MIN_RNR_TIMER;
	} else if (cur == IBV_QPS_RESET || next != IBV_QPS_ERR) {
		return false;
	}
	return (mask & req) == req && !(mask & ~(req | opt));
}

/* An RNIC's QP (siw_verbs_modify_qp, siw_qp_modify): no attribute is
 * required or refused, and any state may follow any, but RTS, which needs
 * the stream of a connection the CM made (EINVAL before: no LLP handle). */
static int check_modify_iwarp(const struct mock_qp *mqp, const struct ibv_qp_attr *attr, int mask,
			      enum ibv_qp_state *cur, enum ibv_qp_state *next)
{
	struct sockaddr_storage server;
	int port;

	if ((mask & IBV_QP_STATE) && (unsigned)attr->qp_state > IBV_QPS_ERR)
		return EINVAL;
	*cur = mqp->state;
	*next = mask & IBV_QP_STATE ? attr->qp_state : *cur;
	if (*next == IBV_QPS_RTS && *cur != IBV_QPS_RTS &&
	    !fab_qp_server(mqp->qp.qp_num, &server, &port))
		return EINVAL;
	return 0;
}

/* The checks uverbs' modify_qp, _ib_modify_qp, ib_modify_qp_is_ok and the
 * drivers make, in that order; all fail with EINVAL but the first. */
static int check_modify(struct mock_qp *mqp, const struct ibv_qp_attr *attr, int *mask,
			enum ibv_qp_state *cur, enum ibv_qp_state *next)
{
	const struct fab_profile *p = fab_profile_of(mqp->personality);

	/* libibverbs: attributes from IBV_QP_RATE_LIMIT on need the extended
	 * command, which only raw packet QPs take. */
	if (*mask & ~(IBV_QP_RATE_LIMIT - 1))
		return EOPNOTSUPP;
	if (p->transport == IBV_TRANSPORT_IWARP)
		return check_modify_iwarp(mqp, attr, *mask, cur, next);
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
	if (mqp->dc_type ? !dc_transition_ok(mqp, *cur, *next, *mask)
			 : !transition_ok(*cur, *next, mqp->qp.qp_type, *mask))
		return EINVAL;
	/* The device will not move from a state the QP is not in. */
	if (*cur != mqp->state)
		return EINVAL;

	if ((*mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= p->max_pkeys)
		return EINVAL;
	if ((*mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > p->max_qp_rd_atom)
		return EINVAL;
	/* mlx5_ib_modify_qp holds the responder to log_max_ra_res_qp; rxe's
	 * rxe_qp_chk_attr checks only the requester's (measured: rdma-core 44
	 * and 65 take max_dest_rd_atomic past max_qp_rd_atom). */
	if ((*mask & IBV_QP_MAX_DEST_RD_ATOMIC) && mqp->personality == RDMAMOCK_MLX5 &&
	    attr->max_dest_rd_atomic > p->max_qp_rd_atom)
		return EINVAL;
	if ((*mask & IBV_QP_PATH_MTU) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096))
		return EINVAL;
	/* RoCE addresses need a GRH naming a source GID the port has; an
	 * InfiniBand path within the subnet is its LID alone. */
	if ((*mask & IBV_QP_AV) && !attr->ah_attr.is_global)
		return mqp->ib ? 0 : EINVAL;
	if (*mask & IBV_QP_AV)
		return sgid_error(mqp, attr->ah_attr.grh.sgid_index);
	return 0;
}

static uint8_t pow2_up(uint8_t n)
{
	uint8_t p = 1;

	if (!n)
		return 0;
	while (p < n && p < 128)
		p <<= 1;
	return p;
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
	/* Both keep the depths as powers of two, rounded up: rxe with
	 * roundup_pow_of_two (rxe_qp_from_attr), mlx5_ib as a log2 of
	 * fls(n - 1) that ibv_query_qp reads back as 1 << log. */
	held->max_dest_rd_atomic = pow2_up(held->max_dest_rd_atomic);
	held->max_rd_atomic = pow2_up(held->max_rd_atomic);
	TAKE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	TAKE(IBV_QP_TIMEOUT, timeout);
	TAKE(IBV_QP_RETRY_CNT, retry_cnt);
	TAKE(IBV_QP_RNR_RETRY, rnr_retry);
	TAKE(IBV_QP_PATH_MIG_STATE, path_mig_state);
	TAKE(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
#undef TAKE
	if (mask & IBV_QP_AV) {
		held->port_num = attr->ah_attr.port_num;
		verbs_src_of(mqp->qp.context, attr->ah_attr.grh.sgid_index, &mqp->path_src);
	}
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
	VERBS_DEAD_POSITIVE(qp->context);
	MOCK_REQUIRE(attr, "ibv_modify_qp", "attr is NULL (upstream dereferences it)");
	verbs_lock_take();
	err = check_modify(mqp, attr, &mask, &cur, &next);
	/* A DCT is made in the device at RTR, and numbered then. */
	if (!err && mqp->dc_type == MLX5DV_DCTYPE_DCT && next == IBV_QPS_RTR) {
		err = -fab_qp_create(mqp->dev_serial, IBV_QPT_DRIVER, mqp, verbs_qp_receive, &qp->qp_num);
		if (!err)
			ledger_note(LEDGER_QP, qp, "DCT 0x%x", qp->qp_num);
	}
	if (!err) {
		if (next == IBV_QPS_RESET) {
			reset_queues(mqp);
			memset(&mqp->attr, 0, sizeof mqp->attr);
			mqp->path_src.ok = false;
		} else {
			take_attrs(mqp, attr, mask);
			if (next == IBV_QPS_ERR && cur != IBV_QPS_ERR)
				enter_error(mqp);
		}
		mqp->state = next;
		fab_qp_modified(qp->qp_num, next, mask & IBV_QP_DEST_QPN ? attr->dest_qp_num : 0,
				mask & IBV_QP_AV ? &attr->ah_attr.grh.flow_label : NULL);
	}
	verbs_lock_give();
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
	verbs_lock_take();
	*attr = mqp->attr;
	attr->qp_state = attr->cur_qp_state = mqp->state;
	/* Kernel 6.1's siw_query_qp sets no state: uverbs' zeroed RESET
	 * (CM_QP_INIT and the clauses that read the state: replayed). */
	if (fab_replay_deviates(mqp->personality, "CM_QP_INIT"))
		attr->qp_state = attr->cur_qp_state = IBV_QPS_RESET;
	attr->cap = mqp->cap;
	memset(init_attr, 0, sizeof *init_attr);
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->qp_type = qp->qp_type;
	init_attr->cap = mqp->cap;
	init_attr->sq_sig_all = mqp->sq_sig_all;
	verbs_lock_give();
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

/* Enhanced Connection Establishment. rxe has none: libibverbs answers
 * EOPNOTSUPP for a provider without the ops. mlx5 answers a query with its
 * vendor id and the options the firmware agreed (mlx5_query_ece: none
 * here), and takes a set only with its own vendor id and no comp_mask
 * (EINVAL), from firmware with ECE, which a ConnectX-5, the mlx5 profile,
 * lacks (EOPNOTSUPP; ECE came with ConnectX-6 Dx). A set without a vendor
 * is refused by libibverbs itself. */
#define MELLANOX_VENDOR_ID 0x15b3

MOCK_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_set_ece");
	int err = EOPNOTSUPP;

	MOCK_REQUIRE(ece, "ibv_set_ece", "ece is NULL (upstream dereferences it)");
	/* libibverbs answers a vendor id of 0 itself. */
	if (ece->vendor_id && mqp->personality == RDMAMOCK_MLX5 &&
	    (ece->comp_mask || ece->vendor_id != MELLANOX_VENDOR_ID))
		err = EINVAL;
	errno = err;
	return err;
}

MOCK_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_query_ece");

	MOCK_REQUIRE(ece, "ibv_query_ece", "ece is NULL (upstream writes it)");
	if (mqp->personality != RDMAMOCK_MLX5) {
		errno = EOPNOTSUPP;
		return EOPNOTSUPP;
	}
	*ece = (struct ibv_ece){ .vendor_id = MELLANOX_VENDOR_ID };
	return 0;
}

/* mlx5dv_init_obj of a QP: its work queues (made on the first call) and
 * the doorbell register, in out: 0, or an errno. The receives posted
 * before stay on the list, taken before the ring's. */
int verbs_qp_expose(struct ibv_qp *qp, struct mlx5dv_qp *out)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "mlx5dv_init_obj");
	void *uar;
	int err = 0;

	/* libmlx5 makes a DCT with no queues and no BlueFlame register, and
	 * mlx5dv_get_qp reads the register through its NULL pointer. */
	MOCK_REQUIRE(mqp->dc_type != MLX5DV_DCTYPE_DCT, "mlx5dv_init_obj",
		     "QP 0x%x is a DCT: it has no queues or BlueFlame register to describe "
		     "(upstream dereferences the register it lacks)",
		     qp->qp_num);
	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC && qp->qp_type != IBV_QPT_UD &&
	    mqp->dc_type != MLX5DV_DCTYPE_DCI) {
		static int said;

		mock_not_implemented("mlx5dv_init_obj of a QP that is not RC, UC, UD or a DCI", &said);
		return EOPNOTSUPP;
	}
	uar = verbs_doorbell_page();
	if (!uar)
		return EOPNOTSUPP;
	verbs_lock_take();
	if (!mqp->ring)
		err = mlx5_qp_make_ring(mqp);
	if (!err)
		mlx5_qp_describe(mqp, out, uar);
	verbs_lock_give();
	return err;
}
