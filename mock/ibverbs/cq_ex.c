/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: the polling API of a CQ made with ibv_create_cq_ex
 * (start_poll, next_poll, end_poll and the read_* calls, reached through
 * struct ibv_cq_ex as the header's inline wrappers call them). start_poll
 * takes the oldest completion and makes it current; next_poll the next;
 * end_poll gives the last one back. ibv_poll_cq keeps working on the same
 * CQ, as on mlx5 and rxe. */
#include <stdlib.h>
#include <time.h>

#include "verbs.h"

#define LIB "ibverbs"

static struct mock_cq *cq_ex_of(struct ibv_cq_ex *cq, const char *call)
{
	return verbs_cq_of((struct ibv_cq *)cq, call);
}

/* The device clock: monotonic time in cycles of hca_core_clock (kHz). */
uint64_t verbs_device_clock(struct ibv_context *context)
{
	struct mock_context *mc = verbs_context_of(context, "completion timestamp");

	/* On the fabric's clock, as its timeouts are. */
	return fab_device_cycles(fab_profile_of(mc->mdev->personality)->hca_core_clock, fab_now_ns());
}

/* Take the next completion as the current one: ENOENT when there is none. */
static int take(struct mock_cq *mcq)
{
	struct mock_cqe *e;

	verbs_cqe_release(mcq, mcq->current);
	mcq->current = e = verbs_cq_pop(mcq);
	if (!e)
		return ENOENT;
	mcq->cqx.status = e->wc.status;
	mcq->cqx.wr_id = e->wc.wr_id;
	return 0;
}

static int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct mock_cq *mcq = cq_ex_of(cq, "ibv_start_poll");
	int err;

	FAULT_POSITIVE(LIB, "ibv_start_poll");
	MOCK_REQUIRE(attr, "ibv_start_poll", "attr is NULL (upstream reads its comp_mask)");
	/* mlx5_start_poll refuses any comp_mask; rxe's cq_start_poll never
	 * reads attr. */
	if (attr->comp_mask && mcq->mlx5)
		return EINVAL;
	/* As ibv_poll_cq: an empty CQ is answered without the lock. */
	if (verbs_cq_empty(mcq))
		return ENOENT;
	verbs_lock_take_quiet();
	err = take(mcq);
	if (!err)
		fab_clock_busy();
	verbs_lock_give();
	return err;
}

static int next_poll(struct ibv_cq_ex *cq)
{
	struct mock_cq *mcq = cq_ex_of(cq, "ibv_next_poll");
	int err;

	MOCK_REQUIRE(mcq->current, "ibv_next_poll",
		     "no completion is current: start_poll did not return 0 before it");
	verbs_lock_take();
	err = take(mcq);
	mcq->past_producer = err == ENOENT && !mcq->mlx5 &&
			     fab_replay_deviates(RDMAMOCK_GENERIC, "CQ_EX_BATCH");
	verbs_lock_give();
	return err;
}

static void end_poll(struct ibv_cq_ex *cq)
{
	struct mock_cq *mcq = cq_ex_of(cq, "ibv_end_poll");

	verbs_lock_take();
	verbs_cqe_release(mcq, mcq->current);
	mcq->current = NULL;
	/* rdma-core before 55: rxe's cq_end_poll moves the consumer once
	 * more after a next_poll that found nothing (fixed by b78b414e0),
	 * so the next start_poll reads the slot past the producer: here
	 * one completion of zeros (upstream reads on through stale slots
	 * until the ring wraps). */
	if (mcq->past_producer)
		verbs_cq_push_stale(mcq);
	mcq->past_producer = false;
	verbs_lock_give();
}

/* The current completion; reading without one is the caller's bug. */
static const struct mock_cqe *current(struct ibv_cq_ex *cq, const char *call)
{
	struct mock_cq *mcq = cq_ex_of(cq, call);

	MOCK_REQUIRE(mcq->current, call, "no completion is current (after start_poll or next_poll)");
	return mcq->current;
}

/* read_NAME: the current completion's FIELD, as the ibv_wc_read_NAME
 * inline calls through the CQ. */
#define WC_READER(type, name, field)                                       \
	static type read_##name(struct ibv_cq_ex *cq)                      \
	{                                                                  \
		return current(cq, "ibv_wc_read_" #name)->wc.field;        \
	}

WC_READER(enum ibv_wc_opcode, opcode, opcode)
WC_READER(uint32_t, vendor_err, vendor_err)
WC_READER(uint32_t, byte_len, byte_len)
WC_READER(__be32, imm_data, imm_data)
WC_READER(uint32_t, qp_num, qp_num)
WC_READER(uint32_t, src_qp, src_qp)
WC_READER(unsigned int, wc_flags, wc_flags)
WC_READER(uint32_t, slid, slid)
WC_READER(uint8_t, sl, sl)
WC_READER(uint8_t, dlid_path_bits, dlid_path_bits)

static uint64_t read_completion_ts(struct ibv_cq_ex *cq)
{
	return current(cq, "ibv_wc_read_completion_ts")->timestamp;
}

/* Fields no mock device reports: create_cq_ex refused the flags that ask
 * for them, so only a caller that did not ask reads them. */
static uint16_t read_cvlan(struct ibv_cq_ex *cq)
{
	current(cq, "ibv_wc_read_cvlan");
	return 0;
}

static uint32_t read_flow_tag(struct ibv_cq_ex *cq)
{
	current(cq, "ibv_wc_read_flow_tag");
	return 0;
}

static void read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm_info)
{
	current(cq, "ibv_wc_read_tm_info");
	MOCK_REQUIRE(tm_info, "ibv_wc_read_tm_info", "tm_info is NULL (upstream writes it)");
	tm_info->tag = 0;
	tm_info->priv = 0;
}

static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	current(cq, "ibv_wc_read_completion_wallclock_ns");
	return 0;
}

void verbs_cq_ex_init(struct mock_cq *mcq)
{
	struct ibv_cq_ex *cqx = &mcq->cqx;

	cqx->start_poll = start_poll;
	cqx->next_poll = next_poll;
	cqx->end_poll = end_poll;
	cqx->read_opcode = read_opcode;
	cqx->read_vendor_err = read_vendor_err;
	cqx->read_byte_len = read_byte_len;
	cqx->read_imm_data = read_imm_data;
	cqx->read_qp_num = read_qp_num;
	cqx->read_src_qp = read_src_qp;
	cqx->read_wc_flags = read_wc_flags;
	cqx->read_slid = read_slid;
	cqx->read_sl = read_sl;
	cqx->read_dlid_path_bits = read_dlid_path_bits;
	cqx->read_completion_ts = read_completion_ts;
	cqx->read_cvlan = read_cvlan;
	cqx->read_flow_tag = read_flow_tag;
	cqx->read_tm_info = read_tm_info;
	cqx->read_completion_wallclock_ns = read_completion_wallclock_ns;
}
