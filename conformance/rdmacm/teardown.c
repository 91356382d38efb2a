/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the end of a connection: which QP is in which state, and
 * which side flushes what and when, for each order of rdma_disconnect, for
 * rdma_destroy_id without a disconnect, and with work outstanding.
 * librdmacm moves a QP to ERR only in the calls of its own side
 * (rdma_disconnect; REJECTED); the kernel's CM never touches a user QP, so
 * DISCONNECTED leaves the QP where it was. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "link.h"
#include "qp.h"

#define WAIT_MS 5000

static void flushes(struct fx_fields *f, struct fx_end *e, uint64_t first, int n)
{
	struct ibv_wc wc;

	for (int i = 0; i < n; i++) {
		fx_wc(e->id->recv_cq, &wc);
		FX_FIELD(f, wc.status, IBV_WC_WR_FLUSH_ERR);
		FX_FIELD(f, wc.wr_id, first + i);
	}
}

/* One side disconnects first: its QP goes to ERR in the call and its
 * receives flush; the other reads DISCONNECTED with its QP still in RTS and
 * its receives posted, until it calls rdma_disconnect too. */
static void one_side_first(struct fx_end *first, struct fx_end *second,
			   struct rdma_event_channel *first_ch, struct rdma_event_channel *second_ch)
{
	struct fx_fields f = { 0 };

	fx_post_recv(first, 1, 0, 64);
	fx_post_recv(second, 11, 0, 64);
	fx_post_recv(second, 12, 64, 64);
	FX_OK(rdma_disconnect(first->id));
	FX_FIELD(&f, fx_qp_state(first->id->qp), IBV_QPS_ERR);
	flushes(&f, first, 1, 1);
	fx_expect_ack(second_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	FX_FIELD(&f, fx_qp_state(second->id->qp), IBV_QPS_RTS);
	fx_cq_quiet(second->id->recv_cq, 100);
	FX_OK(rdma_disconnect(second->id));
	FX_FIELD(&f, fx_qp_state(second->id->qp), IBV_QPS_ERR);
	flushes(&f, second, 11, 2);
	fx_expect_ack(first_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	fx_fields_done(&f);
}

void rdma_disconnect__active_first(void **state)
{
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	fx_require_ib_cm(l.c.id, FX_IWARP_CLOSE);
	one_side_first(&l.c, &l.s, l.client_ch, l.server_ch);
	fx_link_release(&l);
}

void rdma_disconnect__passive_first(void **state)
{
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	fx_require_ib_cm(l.c.id, FX_IWARP_CLOSE);
	one_side_first(&l.s, &l.c, l.server_ch, l.client_ch);
	fx_link_release(&l);
}

/* Both disconnect before reading anything: each QP to ERR in its own call,
 * and each side reads one DISCONNECTED. */
void rdma_disconnect__both_at_once(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	FX_OK(rdma_disconnect(l.c.id));
	FX_OK(rdma_disconnect(l.s.id));
	FX_FIELD(&f, fx_qp_state(l.c.id->qp), IBV_QPS_ERR);
	FX_FIELD(&f, fx_qp_state(l.s.id->qp), IBV_QPS_ERR);
	fx_expect_ack(l.client_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	fx_expect_ack(l.server_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	FX_FIELD(&f, fx_quiet(l.client_ch, 200), 1);
	FX_FIELD(&f, fx_quiet(l.server_ch, 200), 1);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* The active side destroys its QP and id without disconnecting: the
 * destroy sends the DREQ, and the passive side reads DISCONNECTED with its
 * QP in RTS and its receive still posted. */
void rdma_destroy_id__connected(void **state)
{
	struct fx_fields f = { 0 };
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	fx_require_ib_cm(l.c.id, FX_IWARP_CLOSE);
	fx_post_recv(&l.s, 21, 0, 64);
	FX_VERBS_OK(ibv_dereg_mr(l.c.mr));
	l.c.mr = NULL;
	rdma_destroy_qp(l.c.id);
	FX_OK(rdma_destroy_id(l.c.id));
	l.c.id = NULL;
	fx_expect_ack(l.server_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	FX_FIELD(&f, fx_qp_state(l.s.id->qp), IBV_QPS_RTS);
	fx_cq_quiet(l.s.id->recv_cq, 100);
	FX_OK(rdma_disconnect(l.s.id));
	flushes(&f, &l.s, 21, 1);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* A SEND the peer cannot take yet (no receive: RNR, retried for ever) is
 * outstanding when its side disconnects: it completes flushed, with the
 * receives behind it, and nothing arrives at the peer. */
void rdma_disconnect__work_outstanding(void **state)
{
	struct fx_fields f = { 0 };
	struct ibv_wc wc;
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	fx_require_ib_cm(l.c.id, FX_IWARP_CLOSE);
	fx_post_recv(&l.c, 31, 0, 64);
	fx_post_send(&l.c, &l.s, 32, IBV_WR_SEND, 64, 64, 0);
	fx_cq_quiet(l.c.id->send_cq, 50);
	FX_OK(rdma_disconnect(l.c.id));
	fx_wc(l.c.id->send_cq, &wc);
	FX_FIELD(&f, wc.status, IBV_WC_WR_FLUSH_ERR);
	FX_FIELD(&f, wc.wr_id, 32);
	flushes(&f, &l.c, 31, 1);
	fx_expect_ack(l.server_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	fx_post_recv(&l.s, 33, 0, 64);
	fx_cq_quiet(l.s.id->recv_cq, 100);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* One side disconnects and the other never does: the passive side reads
 * DISCONNECTED at once, its QP in RTS and its receive posted; the active
 * side's DREQ goes unanswered for its 16 tries (74 s on the fabric's
 * clock), then it reads DISCONNECTED with ETIMEDOUT and TIMEWAIT_EXIT, and
 * the passive side hears nothing more (its timewait starts with its own
 * rdma_disconnect). */
void rdma_disconnect__peer_silent(void **state)
{
	struct fx_fields f = { 0 };
	struct rdma_cm_event *ev;
	struct fx_link l;
	uint64_t t0, waited;

	rc_require_clock_jumps("the unanswered DREQ's 16 tries take 74 s");
	fx_link_up(&l, NULL, NULL);
	fx_require_ib_cm(l.c.id, FX_IWARP_CLOSE);
	fx_post_recv(&l.s, 41, 0, 64);
	t0 = rc_now_ns();
	FX_OK(rdma_disconnect(l.c.id));
	fx_expect_ack(l.server_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	FX_FIELD(&f, fx_qp_state(l.s.id->qp), IBV_QPS_RTS);
	FX_FIELD(&f, fx_cq_quiet(l.s.id->recv_cq, 100), 1);
	ev = fx_expect(l.client_ch, RDMA_CM_EVENT_DISCONNECTED, 2 * WAIT_MS);
	FX_FIELD(&f, ev->status, -ETIMEDOUT);
	FX_OK(rdma_ack_cm_event(ev));
	waited = (rc_now_ns() - t0) / 1000000000u;
	if (waited < 70 || waited > 80)
		fx_field(&f, "seconds to the active side's DISCONNECTED", (long long)waited, 74);
	fx_expect_ack(l.client_ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, WAIT_MS);
	FX_FIELD(&f, fx_quiet(l.server_ch, 1000), 1);
	fx_fields_done(&f);
	fx_link_release(&l);
}

/* The passive side takes its time: it reads DISCONNECTED, then computes or
 * sleeps (300 ms of real time here) before its own rdma_disconnect. The
 * kernel's CM sends the DREP only with that call, and the DREQ's tries last
 * far longer, so the active side reads DISCONNECTED with status 0. */
void rdma_disconnect__peer_answers_later(void **state)
{
	struct fx_fields f = { 0 };
	struct rdma_cm_event *ev;
	struct fx_link l;

	fx_link_up(&l, NULL, NULL);
	FX_OK(rdma_disconnect(l.c.id));
	fx_expect_ack(l.server_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	usleep(300 * 1000);
	FX_OK(rdma_disconnect(l.s.id));
	ev = fx_expect(l.client_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	FX_FIELD(&f, ev->status, 0);
	FX_OK(rdma_ack_cm_event(ev));
	fx_fields_done(&f);
	fx_link_release(&l);
}
