/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_create_qp(), ibv_modify_qp(), ibv_query_qp() and the QP
 * state machine; objects in use (ibv_destroy_cq, ibv_dealloc_pd); the QP
 * states rdma_cm leaves a connection's QPs in; SEND/RECV over one. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "fixtures.h"
#include "link.h"
#include "qp.h"

static const enum ibv_qp_type conn_types[] = { IBV_QPT_RC, IBV_QPT_UC };

void ibv_create_qp__starts_in_reset(void **state)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	assert_int_equal(q.qp->state, IBV_QPS_RESET);
	FX_VERBS_OK(ibv_query_qp(q.qp, &attr, IBV_QP_STATE, &init));
	assert_int_equal(attr.qp_state, IBV_QPS_RESET);
	fx_qp_release(&q);
}

/* A QP of type on q's device with cap; its reported cap in *got. */
static int create_with(const struct fx_qp *q, enum ibv_qp_type type, const struct ibv_qp_cap *cap,
		       struct ibv_qp_cap *got)
{
	struct ibv_qp_init_attr init = { .send_cq = q->cq, .recv_cq = q->cq, .cap = *cap,
					 .qp_type = type, .sq_sig_all = 1 };
	struct ibv_qp *qp = ibv_create_qp(q->pd, &init);

	if (!qp)
		return errno;
	*got = init.cap;
	FX_VERBS_OK(ibv_destroy_qp(qp));
	return 0;
}

/* The largest max_inline_data a QP of type takes with one SGE a side, as
 * libfabric's verbs provider finds it (vrb_find_max_inline): doubling,
 * then halving the gap; at most 64 KiB. */
static uint32_t largest_inline(const struct fx_qp *q, enum ibv_qp_type type)
{
	struct ibv_qp_cap cap = { 1, 1, 1, 1, 0 }, got;
	uint32_t ok = 0, bad = 2;

	for (; bad <= 65536; bad *= 2) {
		cap.max_inline_data = bad;
		if (create_with(q, type, &cap, &got))
			break;
		ok = bad;
	}
	while (bad - ok > 1) {
		cap.max_inline_data = ok + (bad - ok) / 2;
		if (create_with(q, type, &cap, &got))
			bad = cap.max_inline_data;
		else
			ok = cap.max_inline_data;
	}
	return ok;
}

/* Each request up to the largest accepted, and then what the provider
 * reported for it: accepted again, reporting the same. */
static void granted_again(enum fx_device_kind kind)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct fx_qp q;

	fx_qp_create(&q, kind, IBV_QPT_RC);
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		uint32_t largest;

		/* An RNIC has RC QPs only (RFC 5040). */
		if (types[t] != IBV_QPT_RC && q.ctx->device->transport_type == IBV_TRANSPORT_IWARP)
			continue;
		largest = largest_inline(&q, types[t]);
		const uint32_t asks[] = { 0, 1, 60, 64, 200, largest / 2, largest };

		for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
			struct ibv_qp_cap cap = { 16, 16, 1, 1, asks[i] }, got, again;
			int err;

			if (asks[i] > largest) /* siw takes 80 bytes at most */
				continue;
			err = create_with(&q, types[t], &cap, &got);

			if (err)
				fail_msg("QP type %d, max_inline_data %u (the largest taken: %u): %s",
					 (int)types[t], asks[i], largest, strerror(err));
			assert_true(got.max_inline_data >= cap.max_inline_data);
			assert_true(got.max_send_wr >= cap.max_send_wr && got.max_send_sge >= cap.max_send_sge);
			err = create_with(&q, types[t], &got, &again);
			if (err)
				fail_msg("QP type %d, max_inline_data %u reported for %u: %s", (int)types[t],
					 got.max_inline_data, asks[i], strerror(err));
			assert_int_equal(again.max_inline_data, got.max_inline_data);
		}
	}
	fx_qp_release(&q);
}

void ibv_create_qp__granted_caps_again_mlx5(void **state) { granted_again(FX_DEV_MLX5); }
void ibv_create_qp__granted_caps_again_not_mlx5(void **state) { granted_again(FX_DEV_NOT_MLX5); }

/* RESET, INIT, RTR, RTS with the documented masks; then SQD and back. */
static void legal_path(enum ibv_qp_type type)
{
	static const enum ibv_qp_state path[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr attr;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, type);
	for (size_t i = 0; i < sizeof path / sizeof path[0]; i++) {
		int mask = fx_qp_required(&q, path[i], &attr);

		assert_int_equal(ibv_modify_qp(q.qp, &attr, mask), 0);
		assert_int_equal(q.qp->state, path[i]);
	}
	fx_qp_release(&q);
}

void ibv_modify_qp__legal_path_rc(void **state) { legal_path(IBV_QPT_RC); }
void ibv_modify_qp__legal_path_uc(void **state) { legal_path(IBV_QPT_UC); }
void ibv_modify_qp__legal_path_ud(void **state) { legal_path(IBV_QPT_UD); }

/* The send queue drains before SQD may go back to RTS: at once on Linux 6.1,
 * in the background on 7.x (ibv_query_qp says sq_draining until done). */
static void wait_drained(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	for (int waited_ms = 0; waited_ms < 5000; waited_ms += 10) {
		FX_VERBS_OK(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init));
		if (!attr.sq_draining)
			return;
		usleep(10 * 1000);
	}
	fail_msg("the send queue still drains after 5 s");
}

void ibv_modify_qp__sqd_and_back(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS };
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_SQD);
	assert_int_equal(q.qp->state, IBV_QPS_SQD);
	wait_drained(q.qp);
	assert_int_equal(ibv_modify_qp(q.qp, &attr, IBV_QP_STATE), 0);
	assert_int_equal(q.qp->state, IBV_QPS_RTS);
	fx_qp_release(&q);
}

/* Each required attribute left out of the transition to `to` fails it with
 * EINVAL, and the QP stays where it was. */
static void each_required(enum ibv_qp_type type, enum ibv_qp_state to)
{
	struct ibv_qp_attr attr;
	struct fx_qp q;
	enum ibv_qp_state from;
	int mask;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, type);
	fx_qp_to(&q, to == IBV_QPS_INIT ? IBV_QPS_RESET : to == IBV_QPS_RTR ? IBV_QPS_INIT : IBV_QPS_RTR);
	from = q.qp->state;
	mask = fx_qp_required(&q, to, &attr);
	for (int bit = 1; bit < 31; bit++) {
		if (!(mask & (1 << bit)))
			continue;
		fx_qp_required(&q, to, &attr);
		if (ibv_modify_qp(q.qp, &attr, mask & ~(1 << bit)) != EINVAL)
			fail_msg("%s -> %s without mask bit 0x%x did not fail with EINVAL",
				 fx_qp_state_name(from), fx_qp_state_name(to), 1 << bit);
		assert_int_equal(q.qp->state, from);
	}
	fx_qp_release(&q);
}

void ibv_modify_qp__rc_init_requires(void **state) { each_required(IBV_QPT_RC, IBV_QPS_INIT); }
void ibv_modify_qp__rc_rtr_requires(void **state) { each_required(IBV_QPT_RC, IBV_QPS_RTR); }
void ibv_modify_qp__rc_rts_requires(void **state) { each_required(IBV_QPT_RC, IBV_QPS_RTS); }
void ibv_modify_qp__uc_rtr_requires(void **state) { each_required(IBV_QPT_UC, IBV_QPS_RTR); }
void ibv_modify_qp__ud_init_requires(void **state) { each_required(IBV_QPT_UD, IBV_QPS_INIT); }

/* An attribute the transition does not take is refused too. */
void ibv_modify_qp__rc_init_extra_attribute(void **state)
{
	struct ibv_qp_attr attr;
	struct fx_qp q;
	int mask;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	mask = fx_qp_required(&q, IBV_QPS_INIT, &attr);
	RC_ASSERT_ERRNO("ibv_modify_qp", ibv_modify_qp(q.qp, &attr, mask | IBV_QP_SQ_PSN), EINVAL);
	assert_int_equal(q.qp->state, IBV_QPS_RESET);
	fx_qp_release(&q);
}

/* Skipping a state: RESET to RTR or RTS, INIT to RTS (measured on rxe),
 * and backwards from RTS to RTR. */
static void illegal(enum ibv_qp_state from, enum ibv_qp_state to)
{
	struct ibv_qp_attr attr;
	struct fx_qp q;
	int mask, ret;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, from);
	mask = fx_qp_required(&q, to, &attr);
	ret = ibv_modify_qp(q.qp, &attr, mask);
	if (ret != EINVAL)
		fail_msg("%s -> %s returned %d, not EINVAL", fx_qp_state_name(from),
			 fx_qp_state_name(to), ret);
	assert_int_equal(q.qp->state, from);
	fx_qp_release(&q);
}

void ibv_modify_qp__reset_to_rtr(void **state) { illegal(IBV_QPS_RESET, IBV_QPS_RTR); }
void ibv_modify_qp__reset_to_rts(void **state) { illegal(IBV_QPS_RESET, IBV_QPS_RTS); }
void ibv_modify_qp__init_to_rts(void **state) { illegal(IBV_QPS_INIT, IBV_QPS_RTS); }
void ibv_modify_qp__rts_to_rtr(void **state) { illegal(IBV_QPS_RTS, IBV_QPS_RTR); }

/* From every state after RESET, ERR and then RESET. */
void ibv_modify_qp__any_to_err_and_reset(void **state)
{
	static const enum ibv_qp_state from[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
						  IBV_QPS_SQD };

	for (size_t t = 0; t < sizeof conn_types / sizeof conn_types[0]; t++)
		for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
			struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
			struct fx_qp q;

			fx_qp_create(&q, FX_DEV_UNDER_TEST, conn_types[t]);
			fx_qp_to(&q, from[i]);
			FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, IBV_QP_STATE));
			assert_int_equal(q.qp->state, IBV_QPS_ERR);
			attr.qp_state = IBV_QPS_RESET;
			FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, IBV_QP_STATE));
			assert_int_equal(q.qp->state, IBV_QPS_RESET);
			fx_qp_release(&q);
		}
}

void ibv_modify_qp__positive_errno(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS };
	struct fx_qp q;
	int ret;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	ret = ibv_modify_qp(q.qp, &attr, IBV_QP_STATE);
	RC_ASSERT_ERRNO("ibv_modify_qp", ret, EINVAL);
	fx_qp_release(&q);
}

/* ---------------------------------------------------------------- values */

/* One refused modify: the errno, and the QP still where it was (man
 * ibv_modify_qp(3): none of the attributes will be modified). */
static void refused(const struct fx_qp *q, struct ibv_qp_attr *attr, int mask, int want,
		    const char *what)
{
	enum ibv_qp_state before = fx_qp_state(q->qp);
	int ret = ibv_modify_qp(q->qp, attr, mask);

	if (ret != want)
		fail_msg("%s: ibv_modify_qp gave %d (%s), not %s", what, ret, strerror(ret),
			 strerror(want));
	RC_ASSERT_ERRNO("ibv_modify_qp", ret, want);
	assert_int_equal(fx_qp_state(q->qp), before);
}

/* Each transition of an RC QP with one attribute out of its range, then
 * with it right: ports past the device's, an MTU past IBV_MTU_4096, more
 * outstanding reads than max_qp_rd_atom, an alternate path on RoCE, a
 * state past IBV_QPS_ERR; on mlx5 a P_Key index past the device's
 * max_pkeys, which its driver checks (mlx5_ib_modify_qp, against the
 * pkey_table_len it keeps from max_pkeys). */
void ibv_modify_qp__values_out_of_range(void **state)
{
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	struct ibv_qp_attr attr;
	struct fx_qp q;
	int mask;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	FX_VERBS_OK(ibv_query_device(q.ctx, &dev));
	FX_VERBS_OK(ibv_query_port(q.ctx, 1, &port));

	mask = fx_qp_required(&q, IBV_QPS_INIT, &attr);
	attr.port_num = 0;
	refused(&q, &attr, mask, EINVAL, "RESET->INIT, port 0");
	attr.port_num = dev.phys_port_cnt + 1;
	refused(&q, &attr, mask, EINVAL, "RESET->INIT, port past the last");
	attr.port_num = 1;
	if (mlx5dv_is_supported(q.ctx->device)) {
		attr.pkey_index = dev.max_pkeys;
		refused(&q, &attr, mask, EINVAL, "RESET->INIT, pkey_index past max_pkeys");
		attr.pkey_index = 0;
	}
	attr.qp_state = (enum ibv_qp_state)(IBV_QPS_ERR + 1);
	refused(&q, &attr, mask, EINVAL, "RESET->a state past IBV_QPS_ERR");
	attr.qp_state = IBV_QPS_INIT;
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask));

	mask = fx_qp_required(&q, IBV_QPS_RTR, &attr);
	attr.path_mtu = (enum ibv_mtu)(IBV_MTU_4096 + 2);
	refused(&q, &attr, mask, EINVAL, "INIT->RTR, path_mtu past IBV_MTU_4096");
	attr.path_mtu = IBV_MTU_1024;
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask));

	mask = fx_qp_required(&q, IBV_QPS_RTS, &attr);
	attr.max_rd_atomic = (uint8_t)(dev.max_qp_rd_atom + 1);
	if (dev.max_qp_rd_atom < 255)
		refused(&q, &attr, mask, EINVAL, "RTR->RTS, max_rd_atomic past max_qp_rd_atom");
	attr.max_rd_atomic = 1;
	if (port.link_layer != IBV_LINK_LAYER_INFINIBAND) {
		/* The kernel's core keeps alternate paths to InfiniBand. */
		attr.alt_port_num = 1;
		attr.alt_ah_attr = attr.ah_attr;
		attr.alt_ah_attr.port_num = 1;
		attr.alt_timeout = 14;
		refused(&q, &attr, mask | IBV_QP_ALT_PATH, EINVAL, "RTR->RTS with an alternate path");
	}
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask));
	assert_int_equal(fx_qp_state(q.qp), IBV_QPS_RTS);
	fx_qp_release(&q);
}

/* IBV_QP_CUR_STATE: ib_modify_qp_is_ok takes it only from RTR, RTS, SQD
 * or SQE, so RESET->INIT with it fails (EINVAL); uverbs' modify_qp
 * refuses a cur_qp_state past IBV_QPS_ERR (EINVAL); RTR->RTS and RTS->RTS
 * with it, naming the state the QP is in, are made. */
void ibv_modify_qp__current_state(void **state)
{
	struct ibv_qp_attr attr;
	struct fx_qp q;
	int mask;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);

	mask = fx_qp_required(&q, IBV_QPS_INIT, &attr);
	attr.cur_qp_state = IBV_QPS_RESET;
	refused(&q, &attr, mask | IBV_QP_CUR_STATE, EINVAL, "RESET->INIT with IBV_QP_CUR_STATE");
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask));

	mask = fx_qp_required(&q, IBV_QPS_RTR, &attr);
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask));

	mask = fx_qp_required(&q, IBV_QPS_RTS, &attr);
	attr.cur_qp_state = (enum ibv_qp_state)(IBV_QPS_ERR + 1);
	refused(&q, &attr, mask | IBV_QP_CUR_STATE, EINVAL, "RTR->RTS, cur_qp_state past IBV_QPS_ERR");
	attr.cur_qp_state = IBV_QPS_RTR;
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask | IBV_QP_CUR_STATE));
	assert_int_equal(fx_qp_state(q.qp), IBV_QPS_RTS);
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .cur_qp_state = IBV_QPS_RTS };
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE));
	assert_int_equal(fx_qp_state(q.qp), IBV_QPS_RTS);
	fx_qp_release(&q);
}

/* INIT->RTR of an RC QP whose address is wrong: its port past the
 * device's, no GRH on RoCE, a source GID index past the table (EINVAL)
 * or naming an empty entry (ENODATA, as rdma_get_gid_attr says); then
 * the right one. */
void ibv_modify_qp__address_refused(void **state)
{
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	struct ibv_gid_entry e;
	struct ibv_qp_attr attr;
	int mask, empty = -1;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	if (fx_port_ib(q.ctx, 1)) {
		fx_qp_release(&q);
		RC_SKIP("port 1 is InfiniBand: its address needs no GID");
	}
	FX_VERBS_OK(ibv_query_device(q.ctx, &dev));
	FX_VERBS_OK(ibv_query_port(q.ctx, 1, &port));
	for (int i = 0; i < port.gid_tbl_len && empty < 0; i++)
		if (ibv_query_gid_ex(q.ctx, 1, (uint32_t)i, &e, 0) == ENODATA)
			empty = i;
	fx_qp_to(&q, IBV_QPS_INIT);

	mask = fx_qp_required(&q, IBV_QPS_RTR, &attr);
	attr.ah_attr.port_num = dev.phys_port_cnt + 1;
	refused(&q, &attr, mask, EINVAL, "INIT->RTR, the address's port past the last");
	attr.ah_attr.port_num = 1;
	attr.ah_attr.is_global = 0;
	refused(&q, &attr, mask, EINVAL, "INIT->RTR, a RoCE address without a GRH");
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.sgid_index = (uint8_t)port.gid_tbl_len;
	if (port.gid_tbl_len <= 255)
		refused(&q, &attr, mask, EINVAL, "INIT->RTR, sgid_index past the GID table");
	if (empty >= 0 && empty <= 255) {
		attr.ah_attr.grh.sgid_index = (uint8_t)empty;
		refused(&q, &attr, mask, ENODATA, "INIT->RTR, sgid_index of an empty entry");
	}
	mask = fx_qp_required(&q, IBV_QPS_RTR, &attr);
	FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask));
	assert_int_equal(fx_qp_state(q.qp), IBV_QPS_RTR);
	fx_qp_release(&q);
}

void ibv_query_qp__reports_state(void **state)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTR);
	memset(&attr, 0, sizeof attr);
	FX_VERBS_OK(ibv_query_qp(q.qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_PATH_MTU, &init));
	assert_int_equal(attr.qp_state, IBV_QPS_RTR);
	assert_int_equal(attr.dest_qp_num, q.qp->qp_num);
	assert_int_equal(attr.path_mtu, IBV_MTU_1024);
	assert_int_equal(init.qp_type, IBV_QPT_RC);
	fx_qp_release(&q);
}

/* ---------------------------------------------------------------- objects in use */

void ibv_destroy_cq__in_use(void **state)
{
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	RC_ASSERT_ERRNO("ibv_destroy_cq", ibv_destroy_cq(q.cq), EBUSY);
	fx_qp_release(&q);
}

void ibv_dealloc_pd__in_use(void **state)
{
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	RC_ASSERT_ERRNO("ibv_dealloc_pd", ibv_dealloc_pd(q.pd), EBUSY);
	fx_qp_release(&q);
}

/* ---------------------------------------------------------------- with rdma_cm */

static enum ibv_qp_state queried(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	FX_VERBS_OK(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init));
	return attr.qp_state;
}

void rdma_create_qp__init(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ADDR_RESOLVED);
	assert_non_null(fx.client->qp);
	assert_int_equal(queried(fx.client->qp), IBV_QPS_INIT);
	assert_non_null(fx.client->send_cq);
	assert_non_null(fx.client->recv_cq);
	assert_ptr_equal(fx.client->qp->pd, fx.client->pd);
	fx_release(&fx);
}

void rdma_connect__both_qps_rts(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	assert_int_equal(queried(fx.client->qp), IBV_QPS_RTS);
	assert_int_equal(fx.client->qp->state, fx_connected_qp_state(fx.client, false));
	if (fx.server) {
		assert_int_equal(queried(fx.server->qp), IBV_QPS_RTS);
		assert_int_equal(fx.server->qp->state, fx_connected_qp_state(fx.server, true));
	}
	fx_release(&fx);
}

void rdma_disconnect__qp_to_err(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	FX_OK(rdma_disconnect(fx.client));
	assert_int_equal(fx.client->qp->state, fx_disconnected_state(fx.client));
	assert_int_equal(queried(fx.client->qp), fx_disconnected_state(fx.client));
	rc_note_documented(fx.client->qp->state == IBV_QPS_ERR);
	fx_release(&fx);
}

/* One message from the active side to the passive side. */
void ibv_post_send__send_recv(void **state)
{
	static const char msg[] = "hello over the mock";
	char rx[64] = { 0 }, tx[sizeof msg];
	struct ibv_mr *rx_mr, *tx_mr;
	struct ibv_recv_wr rwr = { .wr_id = 1, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr swr = { .wr_id = 2, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bad_s;
	struct ibv_sge rsge, ssge;
	struct ibv_wc wc;
	struct fx fx;

	fx_need_local_passive();
	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	memcpy(tx, msg, sizeof msg);
	rx_mr = ibv_reg_mr(fx.server->pd, rx, sizeof rx, IBV_ACCESS_LOCAL_WRITE);
	tx_mr = ibv_reg_mr(fx.client->pd, tx, sizeof tx, 0);
	assert_non_null(rx_mr);
	assert_non_null(tx_mr);
	rsge = (struct ibv_sge){ (uintptr_t)rx, sizeof rx, rx_mr->lkey };
	ssge = (struct ibv_sge){ (uintptr_t)tx, sizeof tx, tx_mr->lkey };
	rwr.sg_list = &rsge;
	swr.sg_list = &ssge;
	FX_VERBS_OK(ibv_post_recv(fx.server->qp, &rwr, &bad_r));
	FX_VERBS_OK(ibv_post_send(fx.client->qp, &swr, &bad_s));
	fx_poll_one(fx.client->send_cq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 2);
	fx_poll_one(fx.server->recv_cq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.byte_len, sizeof msg);
	assert_string_equal(rx, msg);
	FX_VERBS_OK(ibv_dereg_mr(rx_mr));
	FX_VERBS_OK(ibv_dereg_mr(tx_mr));
	fx_release(&fx);
}

/* INIT->RTR with max_dest_rd_atomic one past max_qp_rd_atom: refused on
 * mlx5 (mlx5_ib_modify_qp against log_max_ra_res_qp), made on rxe, whose
 * rxe_qp_chk_attr checks only the requester's max_rd_atomic. */
static void dest_rd_atomic_past_max(enum fx_device_kind kind, bool refuses)
{
	struct ibv_device_attr dev;
	struct ibv_qp_attr attr;
	struct fx_qp q;
	int mask;

	fx_qp_create(&q, kind, IBV_QPT_RC);
	FX_VERBS_OK(ibv_query_device(q.ctx, &dev));
	if (dev.max_qp_rd_atom >= 255) {
		fx_qp_release(&q);
		RC_SKIP("max_qp_rd_atom %d: no uint8_t past it", dev.max_qp_rd_atom);
	}
	fx_qp_to(&q, IBV_QPS_INIT);
	mask = fx_qp_required(&q, IBV_QPS_RTR, &attr);
	attr.max_dest_rd_atomic = (uint8_t)(dev.max_qp_rd_atom + 1);
	if (refuses)
		refused(&q, &attr, mask, EINVAL, "INIT->RTR, max_dest_rd_atomic past max_qp_rd_atom");
	else
		FX_VERBS_OK(ibv_modify_qp(q.qp, &attr, mask));
	assert_int_equal(fx_qp_state(q.qp), refuses ? IBV_QPS_INIT : IBV_QPS_RTR);
	fx_qp_release(&q);
}

void ibv_modify_qp__dest_rd_atomic_past_max_mlx5(void **state) { dest_rd_atomic_past_max(FX_DEV_MLX5, true); }
void ibv_modify_qp__dest_rd_atomic_past_max_not_mlx5(void **state) { dest_rd_atomic_past_max(FX_DEV_NOT_MLX5, false); }
