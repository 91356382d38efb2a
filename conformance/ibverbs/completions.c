/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: every ibv_wc field of an RC connection's completions, for
 * each opcode (SEND and RECV with and without immediate data, RDMA WRITE
 * with and without, RDMA READ, both atomics), and for the errors a program
 * can provoke: a receive too small, a bad lkey or rkey, a remote access
 * violation, RNR with and without retries left, posting on a QP in ERR.
 * Fields the verbs documentation leaves undefined for a completion (byte_len
 * of a SEND or WRITE, the opcode of a flushed request) are not checked.
 * On the mock, each clause runs on both of its devices: mlx5_0 and the
 * generic one, whose completions follow rxe's. */
#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <string.h>

#include "link.h"
#include "qp.h"

#define LEN 64
#define IMM 0x12345678u

/* A connection on one device: the test's body runs once per device. */
#define EACH_DEVICE(l, f, cparam, sparam) FX_EACH_LINK(l, f, addrs_, cparam, sparam)

/* What every successful completion has. On rxe a receive also carries
 * IBV_WC_GRH (rxe_resp.c do_complete sets it on every user receive) and
 * src_qp 0 (set only from a DETH); mlx5 takes both from the CQE
 * (mlx5 cq.c handle_responder), which the provider does not fix, so they
 * are not checked there. iWARP carries no GRH, and src_qp and the rest are
 * defined for UD only (man ibv_poll_cq): an RNIC's are not checked. */
static void wc_ok(struct fx_fields *f, const struct fx_link *l, const struct ibv_wc *wc,
		  uint64_t wr_id, enum ibv_wc_opcode op, const struct fx_end *e, unsigned flags)
{
	bool recv = op & IBV_WC_RECV, iwarp = fx_cm_iwarp(e->id);
	bool rxe_like = recv && !fx_link_is_mlx5(l) && !iwarp;
	unsigned got_flags = wc->wc_flags;

	if (recv && fx_link_is_mlx5(l))
		got_flags &= ~IBV_WC_GRH;
	else if (rxe_like)
		flags |= IBV_WC_GRH;
	FX_FIELD(f, wc->status, IBV_WC_SUCCESS);
	FX_FIELD(f, wc->wr_id, wr_id);
	FX_FIELD(f, wc->opcode, op);
	FX_FIELD(f, wc->vendor_err, 0);
	FX_FIELD(f, wc->qp_num, e->id->qp->qp_num);
	FX_FIELD(f, got_flags, flags);
	if (rxe_like) {
		FX_FIELD(f, wc->src_qp, 0);
		FX_FIELD(f, wc->slid, 0);
		FX_FIELD(f, wc->sl, 0);
		FX_FIELD(f, wc->pkey_index, 0);
		FX_FIELD(f, wc->dlid_path_bits, 0);
	}
}

static void fill(struct fx_end *e, uint32_t off, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		e->buf[off + i] = (uint8_t)(seed + i);
}

static void send_with(struct fx_end *from, uint64_t wr_id, enum ibv_wr_opcode op, uint32_t len,
		      const struct fx_end *to, uint32_t roff)
{
	struct ibv_sge sge = { (uintptr_t)from->buf, len, from->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(IMM) };

	if (to) {
		wr.wr.rdma.remote_addr = (uintptr_t)to->buf + FX_LINK_TARGET + roff;
		wr.wr.rdma.rkey = to->mr->rkey;
	}
	FX_VERBS_OK(fx_try_send(from, &wr));
}

/* ---------------------------------------------------------------- success */

void ibv_poll_cq__send_recv_fields(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		fill(&l.c, 0, LEN, 1);
		fx_post_recv(&l.s, 11, 0, 256);
		send_with(&l.c, 12, IBV_WR_SEND, LEN, NULL, 0);
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 12, IBV_WC_SEND, &l.c, 0);
		fx_wc(l.s.id->recv_cq, &wc);
		wc_ok(&f, &l, &wc, 11, IBV_WC_RECV, &l.s, 0);
		FX_FIELD(&f, wc.byte_len, LEN);
		fx_field_mem(&f, "received data", l.s.buf, l.c.buf, LEN);
	}
	fx_fields_done(&f);
}

void ibv_poll_cq__send_imm_fields(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		fx_require_ib_transport(l.c.id->verbs, "immediate-data", FX_IWARP_NO_IMMEDIATE);
		fx_post_recv(&l.s, 21, 0, 256);
		send_with(&l.c, 22, IBV_WR_SEND_WITH_IMM, LEN, NULL, 0);
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 22, IBV_WC_SEND, &l.c, IBV_WC_WITH_IMM);
		fx_wc(l.s.id->recv_cq, &wc);
		wc_ok(&f, &l, &wc, 21, IBV_WC_RECV, &l.s, IBV_WC_WITH_IMM);
		FX_FIELD(&f, wc.byte_len, LEN);
		/* imm_data arrives as the sender wrote it: network order. */
		FX_FIELD(&f, ntohl(wc.imm_data), IMM);
	}
	fx_fields_done(&f);
}

void ibv_poll_cq__write_fields(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		fill(&l.c, 0, LEN, 7);
		send_with(&l.c, 31, IBV_WR_RDMA_WRITE, LEN, &l.s, 0);
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 31, IBV_WC_RDMA_WRITE, &l.c, 0);
		fx_field_mem(&f, "written data", l.s.buf + FX_LINK_TARGET, l.c.buf, LEN);
		/* A WRITE consumes no receive and completes nothing there. */
		fx_cq_quiet(l.s.id->recv_cq, 50);
	}
	fx_fields_done(&f);
}

void ibv_poll_cq__write_imm_fields(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		fx_require_ib_transport(l.c.id->verbs, "immediate-data", FX_IWARP_NO_IMMEDIATE);
		fill(&l.c, 0, LEN, 9);
		fx_post_recv(&l.s, 41, 0, 16);
		send_with(&l.c, 42, IBV_WR_RDMA_WRITE_WITH_IMM, LEN, &l.s, 128);
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 42, IBV_WC_RDMA_WRITE, &l.c, IBV_WC_WITH_IMM);
		fx_wc(l.s.id->recv_cq, &wc);
		wc_ok(&f, &l, &wc, 41, IBV_WC_RECV_RDMA_WITH_IMM, &l.s, IBV_WC_WITH_IMM);
		/* The write's length, not the receive's (which took no data). */
		FX_FIELD(&f, wc.byte_len, LEN);
		FX_FIELD(&f, ntohl(wc.imm_data), IMM);
		fx_field_mem(&f, "written data", l.s.buf + FX_LINK_TARGET + 128, l.c.buf, LEN);
	}
	fx_fields_done(&f);
}

/* The active side reads from the passive side: rdma_accept gave the
 * passive QP remote read access (the REQ offered an initiator depth). */
void ibv_poll_cq__read_fields(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		fill(&l.s, FX_LINK_TARGET, LEN, 3);
		send_with(&l.c, 51, IBV_WR_RDMA_READ, LEN, &l.s, 0);
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 51, IBV_WC_RDMA_READ, &l.c, 0);
		FX_FIELD(&f, wc.byte_len, LEN);
		fx_field_mem(&f, "read data", l.c.buf, l.s.buf + FX_LINK_TARGET, LEN);
		/* And the passive side reads from the active one. */
		fill(&l.c, FX_LINK_TARGET, LEN, 5);
		send_with(&l.s, 52, IBV_WR_RDMA_READ, LEN, &l.c, 0);
		fx_wc(l.s.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 52, IBV_WC_RDMA_READ, &l.s, 0);
		fx_field_mem(&f, "read back", l.s.buf, l.c.buf + FX_LINK_TARGET, LEN);
	}
	fx_fields_done(&f);
}

void ibv_poll_cq__atomic_fields(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;
	uint64_t *target, *result;

	EACH_DEVICE(l, f, NULL, NULL) {
		fx_require_atomics(l.c.id->verbs);
		struct ibv_sge sge = { (uintptr_t)l.c.buf, 8, l.c.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 61, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
					  .send_flags = IBV_SEND_SIGNALED };

		target = (uint64_t *)(l.s.buf + FX_LINK_TARGET);
		result = (uint64_t *)l.c.buf;
		*target = 100;
		wr.wr.atomic.remote_addr = (uintptr_t)target;
		wr.wr.atomic.rkey = l.s.mr->rkey;
		wr.wr.atomic.compare_add = 100;
		wr.wr.atomic.swap = 200;
		FX_VERBS_OK(fx_try_send(&l.c, &wr));
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 61, IBV_WC_COMP_SWAP, &l.c, 0);
		FX_FIELD(&f, wc.byte_len, 8);
		FX_FIELD(&f, *result, 100);
		FX_FIELD(&f, *target, 200);
		wr.wr_id = 62;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = 5;
		FX_VERBS_OK(fx_try_send(&l.c, &wr));
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 62, IBV_WC_FETCH_ADD, &l.c, 0);
		FX_FIELD(&f, wc.byte_len, 8);
		FX_FIELD(&f, *result, 200);
		FX_FIELD(&f, *target, 205);
	}
	fx_fields_done(&f);
}

/* ---------------------------------------------------------------- errors */

/* A failed or flushed completion: wr_id, status and qp_num are defined. */
static void wc_err(struct fx_fields *f, const struct ibv_wc *wc, uint64_t wr_id,
		   enum ibv_wc_status status, const struct fx_end *e)
{
	FX_FIELD(f, wc->status, status);
	FX_FIELD(f, wc->wr_id, wr_id);
	FX_FIELD(f, wc->qp_num, e->id->qp->qp_num);
}

/* The rest of a queue flushes once its QP is in ERR. */
static void flushed(struct fx_fields *f, struct ibv_cq *cq, uint64_t wr_id, const struct fx_end *e)
{
	struct ibv_wc wc;

	fx_wc(cq, &wc);
	wc_err(f, &wc, wr_id, IBV_WC_WR_FLUSH_ERR, e);
}

/* mlx5 completes the receive with a local length error (cq.c
 * mlx5_handle_error_cqe, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR) and NAKs an
 * invalid request (the sender's IBV_WC_REM_INV_REQ_ERR). rxe takes it for
 * a malformed receive: IBV_WC_LOC_QP_OP_ERR, and a remote operation error
 * NAK (IBV_WC_REM_OP_ERR), measured on 6.1 and 7.2. Both QPs go to ERR. */
void ibv_poll_cq__recv_too_small(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		fx_require_ib_transport(l.c.id->verbs, "ib-nak", FX_IWARP_NO_NAK);
		fx_post_recv(&l.s, 71, 0, 16);
		fx_post_recv(&l.s, 72, 256, 256);
		send_with(&l.c, 73, IBV_WR_SEND, LEN, NULL, 0);
		fx_wc(l.c.id->send_cq, &wc);
		wc_err(&f, &wc, 73, fx_link_is_mlx5(&l) ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_OP_ERR,
		       &l.c);
		fx_wc(l.s.id->recv_cq, &wc);
		wc_err(&f, &wc, 71, fx_link_is_mlx5(&l) ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_QP_OP_ERR,
		       &l.s);
		flushed(&f, l.s.id->recv_cq, 72, &l.s);
		FX_FIELD(&f, fx_qp_state(l.c.id->qp), IBV_QPS_ERR);
		FX_FIELD(&f, fx_qp_state(l.s.id->qp), IBV_QPS_ERR);
	}
	fx_fields_done(&f);
}

/* A send whose lkey is not an MR's: on mlx5 a local protection error
 * (MLX5_CQE_SYNDROME_LOCAL_PROT_ERR); rxe moves the QP to ERR and the
 * request itself completes flushed (measured on 7.2; 6.1 gives
 * IBV_WC_LOC_QP_OP_ERR, a deviation its profile names). The request after
 * it flushes; nothing reaches the peer. */
void ibv_poll_cq__bad_lkey(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		struct ibv_sge sge = { (uintptr_t)l.c.buf, LEN, l.c.mr->lkey + 0x1000 };
		struct ibv_send_wr wr = { .wr_id = 81, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

		fx_post_recv(&l.s, 82, 0, 256);
		FX_VERBS_OK(fx_try_send(&l.c, &wr));
		send_with(&l.c, 83, IBV_WR_SEND, LEN, NULL, 0);
		fx_wc(l.c.id->send_cq, &wc);
		wc_err(&f, &wc, 81, fx_link_is_mlx5(&l) ? IBV_WC_LOC_PROT_ERR : IBV_WC_WR_FLUSH_ERR, &l.c);
		flushed(&f, l.c.id->send_cq, 83, &l.c);
		FX_FIELD(&f, fx_qp_state(l.c.id->qp), IBV_QPS_ERR);
		FX_FIELD(&f, fx_qp_state(l.s.id->qp), IBV_QPS_RTS);
		fx_cq_quiet(l.s.id->recv_cq, 50);
	}
	fx_fields_done(&f);
}

/* A WRITE with an rkey that is no MR's, and one into an MR registered
 * without remote write: the requester gets IBV_WC_REM_ACCESS_ERR and goes
 * to ERR; the responder's QP goes to ERR too (a Class C error). */
static void remote_violation(struct fx_fields *f, struct fx_link *l, bool bad_rkey)
{
	struct ibv_mr *ro = ibv_reg_mr(l->s.id->pd, l->s.buf, FX_LINK_BUF, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)l->c.buf, LEN, l->c.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 91, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	fx_require_ib_transport(l->c.id->verbs, "ib-nak", FX_IWARP_NO_NAK);
	if (!ro)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	wr.wr.rdma.remote_addr = (uintptr_t)l->s.buf + FX_LINK_TARGET;
	wr.wr.rdma.rkey = bad_rkey ? l->s.mr->rkey + 0x1000 : ro->rkey;
	fx_post_recv(&l->s, 92, 0, 256);
	FX_VERBS_OK(fx_try_send(&l->c, &wr));
	fx_wc(l->c.id->send_cq, &wc);
	wc_err(f, &wc, 91, IBV_WC_REM_ACCESS_ERR, &l->c);
	FX_FIELD(f, fx_qp_state(l->c.id->qp), IBV_QPS_ERR);
	flushed(f, l->s.id->recv_cq, 92, &l->s);
	FX_FIELD(f, fx_qp_state(l->s.id->qp), IBV_QPS_ERR);
	FX_VERBS_OK(ibv_dereg_mr(ro));
}

void ibv_poll_cq__bad_rkey(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL)
		remote_violation(&f, &l, true);
	fx_fields_done(&f);
}

void ibv_poll_cq__remote_access(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL)
		remote_violation(&f, &l, false);
	fx_fields_done(&f);
}

/* The passive side's REP asks for no RNR retries: a SEND to it before it
 * posts a receive fails at once with IBV_WC_RNR_RETRY_EXC_ERR. */
void ibv_poll_cq__rnr_no_retry(void **state)
{
	static const struct rdma_conn_param none = {
		.responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
		.rnr_retry_count = 0,
	};
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, &none) {
		fx_require_ib_transport(l.c.id->verbs, "rnr", FX_IWARP_NO_RNR);
		send_with(&l.c, 101, IBV_WR_SEND, LEN, NULL, 0);
		fx_wc(l.c.id->send_cq, &wc);
		wc_err(&f, &wc, 101, IBV_WC_RNR_RETRY_EXC_ERR, &l.c);
		FX_FIELD(&f, fx_qp_state(l.c.id->qp), IBV_QPS_ERR);
		/* An RNR NAK is not an error at the responder. */
		FX_FIELD(&f, fx_qp_state(l.s.id->qp), IBV_QPS_RTS);
	}
	fx_fields_done(&f);
}

/* With retries left (7: for ever), a SEND that meets no receive waits and
 * is delivered once one is posted. */
void ibv_poll_cq__rnr_retried(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		fx_require_ib_transport(l.c.id->verbs, "rnr", FX_IWARP_NO_RNR);
		fill(&l.c, 0, LEN, 11);
		send_with(&l.c, 111, IBV_WR_SEND, LEN, NULL, 0);
		fx_cq_quiet(l.c.id->send_cq, 100);
		fx_post_recv(&l.s, 112, 0, 256);
		fx_wc(l.c.id->send_cq, &wc);
		wc_ok(&f, &l, &wc, 111, IBV_WC_SEND, &l.c, 0);
		fx_wc(l.s.id->recv_cq, &wc);
		wc_ok(&f, &l, &wc, 112, IBV_WC_RECV, &l.s, 0);
		fx_field_mem(&f, "received data", l.s.buf, l.c.buf, LEN);
	}
	fx_fields_done(&f);
}

/* Posting to a QP in ERR succeeds, and each request completes flushed. */
void ibv_post_send__qp_in_err_flushes(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		FX_VERBS_OK(ibv_modify_qp(l.c.id->qp, &err, IBV_QP_STATE));
		fx_post_recv(&l.c, 121, 0, 64);
		send_with(&l.c, 122, IBV_WR_SEND, LEN, NULL, 0);
		send_with(&l.c, 123, IBV_WR_RDMA_WRITE, LEN, &l.s, 0);
		flushed(&f, l.c.id->recv_cq, 121, &l.c);
		flushed(&f, l.c.id->send_cq, 122, &l.c);
		flushed(&f, l.c.id->send_cq, 123, &l.c);
	}
	fx_fields_done(&f);
}

/* A receive posted to a QP in ERR: mlx5 flushes it at once. rxe's provider
 * puts it in the queue it shares with the kernel and rings nothing, so it
 * waits there, and more fill the queue (ENOMEM), until an ibv_post_send
 * rings the doorbell and the kernel flushes them all. */
void ibv_post_recv__qp_in_err_waits(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		struct ibv_sge sge = { (uintptr_t)l.c.buf, 64, l.c.mr->lkey };
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
		uint64_t n = 0;
		int ret = 0;

		/* The move to ERR flushes what the queue holds; on 7.2 the
		 * kernel does it in a task of its own, which takes a receive
		 * posted meanwhile too. So one receive first, whose flush says
		 * that task is done. */
		fx_post_recv(&l.c, 130, 0, 64);
		FX_VERBS_OK(ibv_modify_qp(l.c.id->qp, &err, IBV_QP_STATE));
		flushed(&f, l.c.id->recv_cq, 130, &l.c);
		fx_post_recv(&l.c, 131, 0, 64);
		if (fx_link_is_mlx5(&l)) {
			flushed(&f, l.c.id->recv_cq, 131, &l.c);
			continue;
		}
		FX_FIELD(&f, fx_cq_quiet(l.c.id->recv_cq, 500), 1);
		/* The queue fills: no more than 4 x FX_LINK_WRS (rxe's ring is
		 * the power of two above the depth asked for). */
		while (n < 4 * FX_LINK_WRS) {
			wr.wr_id = 132 + n;
			if ((ret = ibv_post_recv(l.c.id->qp, &wr, &bad)))
				break;
			n++;
		}
		FX_FIELD(&f, ret, ENOMEM);
		FX_FIELD(&f, n >= FX_LINK_WRS - 1, 1);
		send_with(&l.c, 122, IBV_WR_SEND, LEN, NULL, 0);
		flushed(&f, l.c.id->recv_cq, 131, &l.c);
		for (uint64_t i = 0; i < n; i++)
			flushed(&f, l.c.id->recv_cq, 132 + i, &l.c);
		flushed(&f, l.c.id->send_cq, 122, &l.c);
	}
	fx_fields_done(&f);
}

/* ---------------------------------------------------------------- events */

/* A SEND of LEN bytes from the start of from's buffer, signaled, with
 * flags besides (IBV_SEND_SOLICITED). */
static void send_flagged(struct fx_end *from, uint64_t wr_id, unsigned flags)
{
	struct ibv_sge sge = { (uintptr_t)from->buf, LEN, from->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | flags };

	FX_VERBS_OK(fx_try_send(from, &wr));
}

/* 1 when a completion event of e's receive CQ comes on its channel (the
 * one librdmacm's rdma_create_qp made for it) within ms, read and acked;
 * 0 when none comes. An event naming another CQ fails the test. */
static int recv_cq_event(struct fx_end *e, int ms)
{
	struct pollfd pfd = { .fd = e->id->recv_cq_channel->fd, .events = POLLIN };
	struct ibv_cq *got = NULL;
	void *ctx;

	if (rc_poll(&pfd, 1, ms) != 1)
		return 0;
	FX_VERBS_OK(ibv_get_cq_event(e->id->recv_cq_channel, &got, &ctx));
	assert_ptr_equal(got, e->id->recv_cq);
	ibv_ack_cq_events(got, 1);
	return 1;
}

/* One SEND from c to s (flags besides IBV_SEND_SIGNALED), both of its
 * completions polled: 1 when s's receive CQ fired an event for it. */
static int send_fires(struct fx_fields *f, struct fx_link *l, uint64_t wr_id, unsigned flags, int ms)
{
	struct ibv_wc wc;
	int fired;

	fx_post_recv(&l->s, wr_id, 0, 256);
	send_flagged(&l->c, wr_id + 1, flags);
	fx_wc(l->c.id->send_cq, &wc);
	FX_FIELD(f, wc.status, IBV_WC_SUCCESS);
	fired = recv_cq_event(&l->s, ms);
	fx_wc(l->s.id->recv_cq, &wc);
	FX_FIELD(f, wc.wr_id, wr_id);
	FX_FIELD(f, wc.status, IBV_WC_SUCCESS);
	return fired;
}

/* ibv_req_notify_cq(cq, 1) asks for an event at the next solicited
 * completion only: a SEND without IBV_SEND_SOLICITED completes with no
 * event, and the arm stays for the solicited SEND after it. Arming again
 * for any completion widens a solicited-only arm, and a solicited-only
 * request does not narrow an arm for any completion (IBA C11-31, C11-32;
 * rxe_req_notify_cq keeps IB_CQ_NEXT_COMP, rxe_cq_post fires a solicited
 * arm on the SE bit). */
void ibv_req_notify_cq__solicited_only(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		struct ibv_cq *cq = l.s.id->recv_cq;

		FX_VERBS_OK(ibv_req_notify_cq(cq, 1));
		fx_field(&f, "event of an unsolicited SEND, armed solicited-only",
			 send_fires(&f, &l, 140, 0, 200), 0);
		fx_field(&f, "event of a solicited SEND after it", send_fires(&f, &l, 142, IBV_SEND_SOLICITED, 5000),
			 1);
		FX_VERBS_OK(ibv_req_notify_cq(cq, 1));
		FX_VERBS_OK(ibv_req_notify_cq(cq, 0));
		fx_field(&f, "event of an unsolicited SEND, armed solicited-only then for any",
			 send_fires(&f, &l, 144, 0, 5000), 1);
		FX_VERBS_OK(ibv_req_notify_cq(cq, 0));
		FX_VERBS_OK(ibv_req_notify_cq(cq, 1));
		fx_field(&f, "event of an unsolicited SEND, armed for any then solicited-only",
			 send_fires(&f, &l, 146, 0, 5000), 1);
		/* Each event disarmed the CQ: the next SEND fires nothing. */
		fx_field(&f, "event of a solicited SEND, not armed", send_fires(&f, &l, 148, IBV_SEND_SOLICITED, 200),
			 0);
	}
	fx_fields_done(&f);
}

struct waker {
	struct fx_link *l;
	int ret;
};

/* The SEND the waiter waits for. A failed one, which a test thread cannot
 * report, moves the server's QP to ERR instead: its receive flushes, and
 * that completion ends the wait. */
static void send_from_client(void *arg)
{
	struct waker *w = arg;
	struct ibv_sge sge = { (uintptr_t)w->l->c.buf, LEN, w->l->c.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 151, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	w->ret = fx_try_send(&w->l->c, &wr);
	if (w->ret)
		ibv_modify_qp(w->l->s.id->qp, &err, IBV_QP_STATE);
}

/* ibv_get_cq_event on an empty channel waits: another thread sends once
 * this one sleeps in the call, and the call returns with the receive CQ's
 * event after that. */
void ibv_get_cq_event__waits(void **state)
{
	const char *addrs_[2];
	struct fx_fields f = { 0 };
	struct fx_link l;

	EACH_DEVICE(l, f, NULL, NULL) {
		struct fx_once_blocked sender;
		struct waker w = { &l, 0 };
		struct ibv_cq *got = NULL;
		struct ibv_wc wc;
		void *ctx = NULL;
		bool began;
		int ret;

		FX_VERBS_OK(ibv_req_notify_cq(l.s.id->recv_cq, 0));
		fx_post_recv(&l.s, 150, 0, 256);
		fx_once_blocked(&sender, send_from_client, &w);
		ret = ibv_get_cq_event(l.s.id->recv_cq_channel, &got, &ctx);
		began = fx_once_blocked_done(&sender);
		fx_once_blocked_join(&sender);
		if (w.ret)
			fail_msg("ibv_post_send: %s", strerror(w.ret));
		FX_FIELD(&f, ret, 0);
		fx_field(&f, "the send began before the event was returned", began, 1);
		fx_field(&f, "the event's CQ is the receive CQ", got == l.s.id->recv_cq, 1);
		if (!ret)
			ibv_ack_cq_events(got, 1);
		fx_wc(l.c.id->send_cq, &wc);
		FX_FIELD(&f, wc.wr_id, 151);
		fx_wc(l.s.id->recv_cq, &wc);
		FX_FIELD(&f, wc.wr_id, 150);
	}
	fx_fields_done(&f);
}
