/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs' data path, requester side, reached through context->ops:
 * posting sends and receives. The "device" carries a send out at once, in
 * the caller's thread: it gathers the message, puts one packet on the
 * fabric's wire (fab_transmit) and completes the request by the answer,
 * as the hardware's requester does by the ACK or NAK (recv.c is the
 * responder). Errors are completions with an error status, and move the QP
 * as the IB spec says: an RC QP to ERR, a UC or UD send queue to SQE.
 *
 * Choices where hardware would wait: a SEND (or RDMA WRITE with immediate)
 * that finds no posted receive fails at once with IBV_WC_RNR_RETRY_EXC_ERR
 * on RC, whatever rnr_retry says (7, "retry forever", would hang); on UC
 * and UD the message is dropped.
 *
 * An RC request nobody answers (unknown QP number, GID not on its device,
 * not in RTR or later, not connected back, its process gone) is sent again
 * until the retries run out, as hardware does: the local ACK timeout
 * (4.096 us << timeout) times retry_cnt + 1, then IBV_WC_RETRY_EXC_ERR and
 * the QP goes to ERR; what was posted after it waits, then is flushed.
 * timeout 0 waits for ever, as does retry_cnt 7 on a generic device (rxe
 * retries without end at 7; measured on 6.1 and 7.2). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define LIB "ibverbs"

/* The largest UD message: the port's active MTU, in bytes. */
#define UD_MTU(mqp) (128u << fab_active_mtu((mqp)->ib))

/* ---------------------------------------------------------------- receives */

int verbs_rq_post(struct recv_queue *rq, int owner, const struct ibv_recv_wr *wr, uint32_t max_wr,
		  uint32_t max_sge, const char *call)
{
	struct recv_wqe *w;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	if (rq->count >= max_wr)
		return ENOMEM;
	MOCK_REQUIRE(wr->sg_list || !wr->num_sge, call,
		     "sg_list is NULL with num_sge %d (upstream reads it)", wr->num_sge);
	/* A receive that was used, if it has room (each has the queue's
	 * max_sge when it can be told), else a new one. */
	if ((w = rq->spare) && w->cap_sge >= wr->num_sge) {
		rq->spare = w->next;
		rq->nspare--;
	} else {
		int cap = wr->num_sge > (int)max_sge ? wr->num_sge : (int)max_sge;

		if (cap > 32)
			cap = wr->num_sge;
		w = fab_alloc_owned(owner, sizeof *w + (size_t)cap * sizeof w->sge[0]);
		if (!w)
			return ENOMEM;
		w->cap_sge = cap;
	}
	w->rq = rq;
	w->next = NULL;
	w->wr_id = wr->wr_id;
	w->wqe_index = 0;
	w->num_sge = wr->num_sge;
	if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof w->sge[0]);
	if (rq->tail)
		rq->tail->next = w;
	else
		rq->head = w;
	rq->tail = w;
	rq->count++;
	return 0;
}

struct recv_wqe *verbs_rq_take(struct recv_queue *rq)
{
	struct recv_wqe *w = rq->head;

	if (w) {
		rq->head = w->next;
		if (!rq->head)
			rq->tail = NULL;
		rq->count--;
	}
	return w;
}

#define SPARE_MAX 64

void verbs_rq_recycle(struct recv_wqe *w)
{
	struct recv_queue *rq = w->rq;

	if (!rq || rq->nspare >= SPARE_MAX) {
		fab_free(w);
		return;
	}
	w->next = rq->spare;
	rq->spare = w;
	rq->nspare++;
}

void verbs_rq_drop(struct recv_queue *rq)
{
	struct recv_wqe *w;

	while ((w = verbs_rq_take(rq)))
		fab_free(w);
	while ((w = rq->spare)) {
		rq->spare = w->next;
		fab_free(w);
	}
	rq->nspare = 0;
}

static int post_one_recv(struct mock_qp *mqp, const struct ibv_recv_wr *wr)
{
	int err;

	/* A QP on an SRQ has no receive queue of its own: rxe's provider
	 * refuses (EINVAL); mlx5's finds its empty queue full (ENOMEM). */
	if (mqp->srq || mqp->qp.qp_type == IBV_QPT_XRC_SEND || mqp->qp.qp_type == IBV_QPT_XRC_RECV) {
		/* siw's provider takes its index modulo that queue's size, 0:
		 * the caller dies of SIGFPE (SRQ_QP_POST_RECV, replayed). */
		if (mqp->srq && fab_replay_deviates(mqp->personality, "SRQ_QP_POST_RECV")) {
			mock_log("ibv_post_recv on a QP with an SRQ: the replayed device's provider "
				 "divides by zero here (SRQ_QP_POST_RECV)");
			raise(SIGFPE);
		}
		return mqp->personality == RDMAMOCK_MLX5 ? ENOMEM : EINVAL;
	}
	/* rxe, after C10-97.2.1: no receives before INIT. */
	if (mqp->state == IBV_QPS_RESET)
		return EINVAL;
	if (mqp->ring) {
		/* Its receive queue is the ring: the WQE goes there, and the
		 * device takes it from there (verbs_rq_pull). */
		err = mlx5_rq_post(mqp, wr);
		if (!err && mqp->state == IBV_QPS_ERR)
			verbs_qp_flush_recvs(mqp);
		return err;
	}
	/* A QP in ERR takes the request into its queue. mlx5's device reads
	 * the doorbell in any state and flushes it at once. rxe's provider
	 * writes it to the queue it shares with the kernel and tells the
	 * kernel nothing, so it waits there, filling the queue: kernel 7.2
	 * flushes the queue when the next ibv_post_send rings its doorbell
	 * (verbs_post_send), 6.1 never (measured on both: nothing within 2 s,
	 * then ENOMEM once the queue is full). */
	err = verbs_rq_post(&mqp->rq, fab_owner_of(mqp), wr, mqp->cap.max_recv_wr,
			    mqp->cap.max_recv_sge, "ibv_post_recv");
	if (!err && mqp->state == IBV_QPS_ERR && mqp->personality == RDMAMOCK_MLX5)
		verbs_qp_flush_recvs(mqp);
	return err;
}

/* The receive WQEs a QP's ring holds that the device has not taken, onto
 * its list in order, each with its index: all of them (a flush), or one
 * when the list is empty (the device takes one receive at a time, so the
 * ring stays as full as the program filled it). */
void verbs_rq_pull(struct mock_qp *mqp, bool all)
{
	struct ibv_sge sge[64];
	struct ibv_recv_wr wr;
	uint16_t index;

	if (!mqp->ring || mlx5_rq_max_sge(mqp) > sizeof sge / sizeof sge[0])
		return;
	while ((all || !mqp->rq.head) && !mlx5_rq_take(mqp, &wr, sge, &index)) {
		if (verbs_rq_post(&mqp->rq, fab_owner_of(mqp), &wr, UINT32_MAX, UINT32_MAX, "ibv_post_recv")) {
			mock_log("out of memory: a receive WQE of QP %u lost", mqp->qp.qp_num);
			continue;
		}
		mqp->rq.tail->wqe_index = index;
	}
}

int verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_post_recv");
	int err = 0;

	if (!mock_fault(FAULT_NAME(LIB, "ibv_post_recv"), &err)) {
		verbs_lock_take();
		for (; wr && !(err = post_one_recv(mqp, wr)); wr = wr->next)
			;
		verbs_lock_give();
	}
	if (err) {
		MOCK_REQUIRE(bad_wr, "ibv_post_recv", "bad_wr is NULL (upstream stores the failed WR there)");
		*bad_wr = wr;
	}
	return err;
}

/* ---------------------------------------------------------------- sends */

static bool is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static bool is_send(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_SEND_WITH_INV;
}

/* Data flows from the requester's buffers (else into them). */
static bool carries_data_out(enum ibv_wr_opcode op)
{
	return is_send(op) || op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* Work the device does on its own side, with nothing on the wire. */
static bool is_local(enum ibv_wr_opcode op)
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

/* Which transport the QP speaks on the wire; XRC_SEND is RC to an SRQ. */
static bool reliable(const struct mock_qp *mqp)
{
	return mqp->qp.qp_type == IBV_QPT_RC || mqp->qp.qp_type == IBV_QPT_XRC_SEND ||
	       mqp->dc_type == MLX5DV_DCTYPE_DCI;
}

/* What each transport carries (memory windows on RC and UC, as rxe's
 * validate_send_wr has it; a SEND with invalidate to a connected QP); the
 * rest (TSO) is not modelled and is refused as an unknown opcode would be. */
static bool opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	if (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM)
		return true;
	if (type == IBV_QPT_UD)
		return false;
	if (is_local(op))
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	if (op == IBV_WR_SEND_WITH_INV)
		return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_XRC_SEND;
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		return true;
	return (type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND || type == IBV_QPT_DRIVER) &&
	       (op == IBV_WR_RDMA_READ || is_atomic(op));
}

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
	if (op == MLX5_WR_NOP)
		return (enum ibv_wc_opcode)0xff; /* no verbs opcode: its CQE says NOP */
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

static enum fab_opcode wire_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return FAB_OP_WRITE;
	case IBV_WR_RDMA_READ:
		return FAB_OP_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return FAB_OP_CMP_SWP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return FAB_OP_FETCH_ADD;
	default:
		return FAB_OP_SEND;
	}
}

static uint64_t wr_length(const struct ibv_send_wr *wr)
{
	uint64_t len = 0;

	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

/* Copy the message out of the requester's buffers: inline data straight
 * from the addresses, the rest through the lkeys (local read). */
static bool gather(struct mock_qp *mqp, const struct ibv_send_wr *wr, char *out)
{
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *s = &wr->sg_list[i];
		struct verbs_mem at;

		if (!s->length)
			continue;
		if (wr->send_flags & IBV_SEND_INLINE)
			mock_copy_in(out, (const void *)(uintptr_t)s->addr, s->length, "ibv_post_send",
				     "inline data");
		else if (!verbs_mr_map(mqp->mpd, s->lkey, s->addr, s->length, 0, &at) ||
			 fab_mem_read(at.pid, at.addr, out, s->length))
			return false;
		out += s->length;
	}
	return true;
}

/* Scatter len bytes into a list of buffers through their lkeys (local
 * write): IBV_WC_LOC_LEN_ERR if they hold less, LOC_PROT_ERR on a bad key.
 * With data NULL, only check that they could take len bytes. */
enum ibv_wc_status verbs_scatter(struct mock_pd *mpd, const struct ibv_sge *sge, int num_sge,
				 const char *data, uint64_t len)
{
	uint64_t room = 0;

	for (int i = 0; i < num_sge; i++)
		room += sge[i].length;
	if (room < len)
		return IBV_WC_LOC_LEN_ERR;
	for (int i = 0; i < num_sge && len; i++) {
		uint64_t n = sge[i].length < len ? sge[i].length : len;
		struct verbs_mem at;

		if (!n)
			continue;
		if (!verbs_mr_map(mpd, sge[i].lkey, sge[i].addr, n, IBV_ACCESS_LOCAL_WRITE, &at))
			return IBV_WC_LOC_PROT_ERR;
		if (data) {
			int err = fab_mem_write(at.pid, at.addr, data, (size_t)n);

			if (err == -ESRCH)
				verbs_target_gone = true;
			if (err)
				return IBV_WC_LOC_PROT_ERR;
			data += n;
		}
		len -= n;
	}
	return IBV_WC_SUCCESS;
}

enum ibv_wc_status verbs_scatter_later(struct mock_pd *mpd, const struct ibv_sge *sge, int num_sge,
				       const char *data, uint64_t len, struct verbs_later *later)
{
	uint64_t room = 0, left = len;
	pid_t self = mock_pid();
	bool elsewhere = true;

	memset(later, 0, sizeof *later);
	for (int i = 0; i < num_sge; i++)
		room += sge[i].length;
	if (room < len)
		return IBV_WC_LOC_LEN_ERR;
	for (int i = 0; i < num_sge && left; i++) {
		uint64_t n = sge[i].length < left ? sge[i].length : left;
		struct verbs_mem at;

		if (!n)
			continue;
		if (!verbs_mr_map(mpd, sge[i].lkey, sge[i].addr, n, IBV_ACCESS_LOCAL_WRITE, &at))
			return IBV_WC_LOC_PROT_ERR;
		if (later->nseg == VERBS_LATER_SEGS || at.pid == self) {
			elsewhere = false;
		} else {
			later->seg[later->nseg].pid = at.pid;
			later->seg[later->nseg].addr = at.addr;
			later->seg[later->nseg++].len = (uint32_t)n;
		}
		left -= n;
	}
	if (len && elsewhere && len <= VERBS_LATER_MAX) {
		later->len = len;
		later->data = data;
		return IBV_WC_SUCCESS;
	}
	later->nseg = 0;
	return verbs_scatter(mpd, sge, num_sge, data, len);
}

/* The packet's addresses: the path of a connected QP, or the AH of a UD
 * request; the source GID is the port's entry the path names. */
static bool address(struct mock_qp *mqp, const struct ibv_send_wr *wr, struct fab_packet *pkt)
{
	const struct ibv_ah_attr *path = &mqp->attr.ah_attr;
	const struct verbs_src *src = &mqp->path_src;

	pkt->dst_qpn = mqp->attr.dest_qp_num;
	if (mqp->qp.qp_type == IBV_QPT_UD) {
		const struct mock_ah *mah = mqp->raw_ah ? mqp->raw_ah : verbs_ah_of(wr->wr.ud.ah, "ibv_post_send");

		path = &mah->attr;
		src = &mah->src;
		pkt->dst_qpn = wr->wr.ud.remote_qpn & 0xffffff;
		/* A qkey with the high bit set means the QP's own (IBA 10.2.5):
		 * mlx5 does so; rxe sends the value as given (measured on 6.1
		 * and 7.2: the receiver counts a Q_Key violation). */
		pkt->qkey = wr->wr.ud.remote_qkey;
		if ((pkt->qkey & 0x80000000u) && mqp->personality == RDMAMOCK_MLX5)
			pkt->qkey = mqp->attr.qkey;
	} else if (mqp->qp.qp_type == IBV_QPT_XRC_SEND) {
		pkt->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	} else if (mqp->dc_type == MLX5DV_DCTYPE_DCI) {
		/* Each WQE's vector names the DCT, its key and the path. */
		path = &mqp->raw_ah->attr;
		src = &mqp->raw_ah->src;
		pkt->dst_qpn = mqp->raw_ah->dc_dctn;
		pkt->dc_key = mqp->raw_ah->dc_key;
	}
	pkt->no_grh = mqp->ib && !path->is_global;
	pkt->dlid = path->dlid;
	pkt->slid = src->lid; /* LMC 0: the path bits choose nothing */
	pkt->dgid = path->grh.dgid;
	pkt->hop_limit = path->grh.hop_limit;
	pkt->traffic_class = path->grh.traffic_class;
	pkt->flow_label = path->grh.flow_label;
	pkt->sl = path->sl;
	pkt->sgid = src->gid;
	pkt->gid_type = src->type;
	return src->ok;
}

/* The requester's completion by the answer. Only RC and XRC hear one:
 * UC and UD send and forget. A READ's data and an atomic's old value go
 * to the request's buffers. */
static enum ibv_wc_status answered(struct mock_qp *mqp, const struct ibv_send_wr *wr,
				   const struct fab_response *resp, const char *buf, uint64_t len,
				   uint8_t *rnr_timer)
{
	if (!reliable(mqp))
		return IBV_WC_SUCCESS;
	switch (resp->ack) {
	case FAB_ACK:
		break;
	case FAB_NAK_RNR:
		*rnr_timer = resp->rnr_timer;
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case FAB_NAK_INV_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case FAB_NAK_ACCESS:
		return IBV_WC_REM_ACCESS_ERR;
	case FAB_NAK_OP:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_RETRY_EXC_ERR;
	}
	if (wr->opcode == IBV_WR_RDMA_READ)
		return len ? verbs_scatter(mqp->mpd, wr->sg_list, wr->num_sge, buf, len) : IBV_WC_SUCCESS;
	if (is_atomic(wr->opcode))
		return verbs_scatter(mqp->mpd, wr->sg_list, wr->num_sge,
				     (const char *)&resp->atomic_orig, 8);
	return IBV_WC_SUCCESS;
}

/* Carry one request out; the status of the requester's completion
 * (RETRY_EXC_ERR when nobody answered, RNR_RETRY_EXC_ERR for an RNR NAK,
 * whose timer goes to *rnr_timer: both are retried first). */
static enum ibv_wc_status execute(struct mock_qp *mqp, const struct ibv_send_wr *wr, uint64_t len,
				  uint8_t *rnr_timer)
{
	struct fab_packet pkt = {
		.op = wire_opcode(wr->opcode),
		.transport = mqp->qp.qp_type,
		.src_dev = mqp->dev_serial,
		.src_qpn = mqp->qp.qp_num,
		.with_imm = wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM,
		.imm = wr->imm_data,
		.solicited = wr->send_flags & IBV_SEND_SOLICITED,
		.len = len,
	};

	if (mqp->dc_type == MLX5DV_DCTYPE_DCI && !mqp->raw_ah)
		return IBV_WC_LOC_QP_OP_ERR; /* a stalled one that lost its vector: none does */
	/* A bind or an invalidation that fails: mlx5's syndrome says why
	 * (MW_BIND_ERR, LOCAL_QP_OP_ERR); rxe moves the QP to ERR and the
	 * request completes flushed (measured on 7.2; 6.1 gives the status
	 * rxe_do_local_ops sets: MW_BIND_ERR and MW_LOCAL_INV_TYPE1, replayed). */
	if (is_local(wr->opcode)) {
		bool took = wr->opcode == IBV_WR_BIND_MW ? verbs_mw_bind(mqp, wr)
			    : verbs_mw_invalidate(wr->invalidate_rkey);

		if (took)
			return IBV_WC_SUCCESS;
		if (mqp->personality != RDMAMOCK_MLX5 &&
		    !fab_replay_deviates(mqp->personality, wr->opcode == IBV_WR_BIND_MW ? "MW_BIND_ERR"
										  : "MW_LOCAL_INV_TYPE1"))
			return IBV_WC_WR_FLUSH_ERR;
		return wr->opcode == IBV_WR_BIND_MW ? IBV_WC_MW_BIND_ERR : IBV_WC_LOC_QP_OP_ERR;
	}
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	struct fab_response resp;
	char *buf = NULL;

	if (len > fab_profile_of(mqp->personality)->max_msg_sz)
		return IBV_WC_LOC_LEN_ERR;
	if (!address(mqp, wr, &pkt))
		return IBV_WC_LOC_QP_OP_ERR;
	/* A UD message is one packet: over the port's MTU it never
	 * arrives, and the sender is not told (measured on rxe). */
	if (mqp->qp.qp_type == IBV_QPT_UD && len > UD_MTU(mqp))
		return IBV_WC_SUCCESS;
	/* Only a UD receive shows the IPv4 header (in its GRH). */
	if (mqp->qp.qp_type == IBV_QPT_UD)
		pkt.ip_id = fab_device_next_ip_id(mqp->dev_serial);
	if (pkt.op == FAB_OP_WRITE || pkt.op == FAB_OP_READ) {
		pkt.raddr = wr->wr.rdma.remote_addr;
		pkt.rkey = wr->wr.rdma.rkey;
	} else if (is_atomic(wr->opcode)) {
		pkt.raddr = wr->wr.atomic.remote_addr;
		pkt.rkey = wr->wr.atomic.rkey;
		pkt.compare_add = wr->wr.atomic.compare_add;
		pkt.swap = wr->wr.atomic.swap;
	} else if (wr->opcode == IBV_WR_SEND_WITH_INV) {
		pkt.with_inv = true;
		pkt.inv_rkey = wr->invalidate_rkey;
	}
	/* The message out of our buffers, or room for a READ's answer; where
	 * a read or atomic result lands is checked before anything is sent. */
	if (carries_data_out(wr->opcode) || pkt.op == FAB_OP_READ) {
		buf = malloc(len ? len : 1);
		if (!buf) {
			mock_log("out of memory: a %llu-byte message from QP %u failed",
				 (unsigned long long)len, mqp->qp.qp_num);
			return IBV_WC_GENERAL_ERR;
		}
	}
	if (carries_data_out(wr->opcode)) {
		/* A bad lkey in what goes out: mlx5 reports a local protection
		 * error (MLX5_CQE_SYNDROME_LOCAL_PROT_ERR); rxe moves the QP to
		 * ERR and the request completes flushed (measured on 7.2; 6.1
		 * gives IBV_WC_LOC_QP_OP_ERR). */
		if (!gather(mqp, wr, buf))
			status = mqp->personality == RDMAMOCK_MLX5 ? IBV_WC_LOC_PROT_ERR
								    : IBV_WC_WR_FLUSH_ERR;
		pkt.payload = buf;
	} else {
		status = verbs_scatter(mqp->mpd, wr->sg_list, wr->num_sge, NULL,
				       is_atomic(wr->opcode) ? 8 : len);
	}
	if (status == IBV_WC_SUCCESS) {
		resp.read_into = buf;
		fab_transmit(&pkt, &resp);
		status = answered(mqp, wr, &resp, buf, len, rnr_timer);
	}
	free(buf);
	return status;
}

static void complete_send(struct mock_qp *mqp, const struct ibv_send_wr *wr,
			  enum ibv_wc_status status, uint64_t len, uint64_t sq_mark)
{
	struct ibv_wc wc = {
		.wr_id = wr->wr_id,
		.status = status,
		.opcode = wc_opcode(wr->opcode),
		.byte_len = status == IBV_WC_SUCCESS ? (uint32_t)len : 0,
		.qp_num = mqp->qp.qp_num,
	};

	/* Both mark the sender's completion of a request with immediate data
	 * too: rxe (rxe_comp.c make_send_cqe; measured on 6.1 and 7.2) and
	 * mlx5 (cq.c handle_good_req, MLX5_OPCODE_SEND_IMM and _RDMA_WRITE_IMM). */
	if (status == IBV_WC_SUCCESS &&
	    (wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM))
		wc.wc_flags = IBV_WC_WITH_IMM;
	verbs_cq_add(mqp->scq, &wc, mqp, true, sq_mark, false, NULL);
}

/* ---------------------------------------------------------------- retries
 *
 * A reliable QP's request that was not answered, or was answered with an
 * RNR NAK, is sent again as hardware does: after the local ACK timeout
 * (4.096 us << timeout) up to retry_cnt times, or after the responder's RNR
 * timer up to rnr_retry times (7: without end). Meanwhile what was posted
 * after it waits behind it; when the retries run out it completes with
 * RETRY_EXC_ERR (or RNR_RETRY_EXC_ERR) and the QP enters ERR, flushing the
 * rest. The retries run on a fabric timer: whichever process's watcher
 * finds one due sends the request again, reaching the requester's memory
 * as the responder's (memory.c). */

struct stalled_wr {
	struct stalled_wr *next;
	struct ibv_send_wr wr; /* a copy: sg_list is sge, next NULL */
	uint64_t sq_mark;
	bool has_av;           /* a DCI's: the address its WQE's vector gave */
	struct mock_ah av;
	struct ibv_sge sge[];  /* then the inline data, copied at post */
};

/* The IBTA's RNR NAK timer (table 45), in microseconds: 0 is 655.36 ms. */
static uint64_t rnr_timer_us(uint8_t t)
{
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920,
		122880, 163840, 245760, 327680, 491520,
	};

	return us[t & 31];
}

static void stall_append(struct mock_qp *mqp, const struct ibv_send_wr *wr, uint64_t mark)
{
	bool inl = (wr->send_flags & IBV_SEND_INLINE) && carries_data_out(wr->opcode);
	uint64_t len = inl ? wr_length(wr) : 0;
	int nsge = inl ? 1 : wr->num_sge;
	struct stalled_wr *s = fab_alloc(sizeof *s + (size_t)nsge * sizeof s->sge[0] + len);
	char *data;

	if (!s) {
		mock_log("out of memory: a send of QP %u waiting for retries is lost", mqp->qp.qp_num);
		return;
	}
	s->wr = *wr;
	s->wr.next = NULL;
	s->wr.sg_list = s->sge;
	s->wr.num_sge = nsge;
	s->sq_mark = mark;
	s->has_av = mqp->dc_type == MLX5DV_DCTYPE_DCI && mqp->raw_ah;
	if (s->has_av)
		s->av = *mqp->raw_ah;
	if (inl) {
		/* Inline data is taken at post: keep it, the caller may not. */
		data = (char *)&s->sge[1];
		gather(mqp, wr, data);
		s->sge[0] = (struct ibv_sge){ .addr = (uintptr_t)data, .length = (uint32_t)len };
	} else if (nsge) {
		memcpy(s->sge, wr->sg_list, (size_t)nsge * sizeof s->sge[0]);
	}
	if (mqp->stalled_tail)
		mqp->stalled_tail->next = s;
	else
		mqp->stalled = s;
	mqp->stalled_tail = s;
}

static struct stalled_wr *stall_take(struct mock_qp *mqp)
{
	struct stalled_wr *s = mqp->stalled;

	if (s) {
		mqp->stalled = s->next;
		if (!mqp->stalled)
			mqp->stalled_tail = NULL;
	}
	return s;
}

bool verbs_stalled_uses_key(const struct mock_qp *mqp, uint32_t lkey)
{
	for (const struct stalled_wr *s = mqp->stalled; s; s = s->next)
		for (int i = 0; i < s->wr.num_sge && !(s->wr.send_flags & IBV_SEND_INLINE); i++)
			if (s->sge[i].lkey == lkey)
				return true;
	return false;
}

/* The head of the stalled requests fails: its completion says why, and
 * the QP enters ERR, flushing the rest. */
static void fail_stalled_head(struct mock_qp *mqp, enum ibv_wc_status status)
{
	struct stalled_wr *s = stall_take(mqp);

	complete_send(mqp, &s->wr, status, 0, s->sq_mark);
	fab_free(s);
	verbs_qp_error(mqp, IBV_QPS_ERR);
}

/* The head request was not answered (status RETRY_EXC_ERR) or got an RNR
 * NAK: wait before trying it again, tries_left more times (-1: for ever).
 * An RNR NAK with no retry left fails it at once, as the requester then
 * has nothing to wait for (rxe_comp.c COMPST_RNR_RETRY); an unanswered
 * request fails only when its last timeout expires (retry_due). */
static void wait_to_retry(struct mock_qp *mqp, enum ibv_wc_status status, uint8_t rnr_timer,
			  bool first)
{
	uint64_t ns;

	if (status == IBV_WC_RNR_RETRY_EXC_ERR) {
		if (first)
			mqp->tries_left = mqp->attr.rnr_retry == 7 ? -1 : mqp->attr.rnr_retry;
		if (mqp->tries_left == 0) {
			fail_stalled_head(mqp, status);
			return;
		}
		ns = rnr_timer_us(rnr_timer) * 1000u;
	} else {
		/* rxe retries without end at retry_cnt 7 (measured on 6.1 and
		 * 7.2); a timeout of 0 waits for ever, with no retry at all. */
		if (first)
			mqp->tries_left = mqp->attr.retry_cnt == 7 && mqp->personality != RDMAMOCK_MLX5 ?
				-1 : mqp->attr.retry_cnt;
		if (!mqp->attr.timeout)
			return;
		ns = 4096ull << mqp->attr.timeout;
	}
	mqp->stall_status = status;
	mqp->stall_gen++;
	fab_timer_add_verbs(mqp, fab_owner_of(mqp), ns, (int)mqp->stall_gen);
}

/* A request the device failed: its completion says why (signalled or not),
 * and the QP enters the error state, flushing what is queued behind it. */
static void fail_request(struct mock_qp *mqp, const struct ibv_send_wr *wr,
			 enum ibv_wc_status status, uint64_t mark)
{
	complete_send(mqp, wr, status, 0, mark);
	verbs_qp_error(mqp, reliable(mqp) ? IBV_QPS_ERR : IBV_QPS_SQE);
}

/* A fault at a work request (rdmamock/ibverbs/wc): the device fails it with
 * the fault's status (GENERAL_ERR unless given), as run_request then
 * reports any error, with nothing sent. Aimed by the QP's device, number
 * and process. */
/* A fault at a QP, aimed by its device, number and process, and by its
 * connection's server address and port when the CM made it. */
static bool qpn_fault(unsigned dev_serial, uint32_t qpn, const char *point, struct fault_action *act)
{
	struct fault_where where = { .port = -1, .qpn = qpn };
	struct sockaddr_storage server;
	struct fab_device_info dev;

	if (!fab_device_by_serial(dev_serial, &dev))
		where.dev = dev.name;
	if (fab_qp_server(qpn, &server, &where.port))
		where.addr = (const struct sockaddr *)&server;
	return fault_fire(point, &where, act);
}

static bool qp_fault(const struct mock_qp *mqp, const char *point, struct fault_action *act)
{
	return qpn_fault(mqp->dev_serial, mqp->qp.qp_num, point, act);
}

static bool wc_fault(struct mock_qp *mqp, enum ibv_wc_status *status)
{
	struct fault_action act;

	if (!fault_at("rdmamock/ibverbs/wc") || !qp_fault(mqp, "rdmamock/ibverbs/wc", &act))
		return false;
	*status = act.has_value ? (enum ibv_wc_status)act.value : IBV_WC_GENERAL_ERR;
	return true;
}

/* A catastrophic error of the QP (rdmamock/ibverbs/qp_fatal), as mlx5's
 * WQ_CATAS_ERROR event reports one: the QP is in ERR, the request in hand
 * and everything queued flush, and IBV_EVENT_QP_FATAL follows. */
static bool fatal_fault(struct mock_qp *mqp, const struct ibv_send_wr *wr, uint64_t mark)
{
	struct fault_action act;

	if (!fault_at("rdmamock/ibverbs/qp_fatal") || !qp_fault(mqp, "rdmamock/ibverbs/qp_fatal", &act))
		return false;
	verbs_qp_error(mqp, IBV_QPS_ERR);
	complete_send(mqp, wr, IBV_WC_WR_FLUSH_ERR, 0, mark);
	verbs_async_qp(mqp, IBV_EVENT_QP_FATAL);
	return true;
}

/* A request held back (rdmamock/ibverbs/delay, ms= or 100 ms): it waits as
 * an unanswered one does, and what is posted after it waits behind it;
 * then it goes as if for the first time. */
static bool delay_fault(struct mock_qp *mqp, const struct ibv_send_wr *wr, uint64_t mark)
{
	struct fault_action act;

	if (!fault_at("rdmamock/ibverbs/delay") || !qp_fault(mqp, "rdmamock/ibverbs/delay", &act))
		return false;
	stall_append(mqp, wr, mark);
	mqp->tries_left = -1;
	mqp->stall_status = IBV_WC_SUCCESS; /* not a failure: the first real try follows */
	mqp->stall_gen++;
	fab_timer_add_verbs(mqp, fab_owner_of(mqp), (uint64_t)(act.has_ms ? act.ms : 100) * 1000000u,
			    (int)mqp->stall_gen);
	return true;
}

/* Carry the request out; complete it, or stall the queue on it. True when
 * it stalled. */
static bool run_request(struct mock_qp *mqp, const struct ibv_send_wr *wr, uint64_t mark,
			bool retry)
{
	uint64_t len = is_atomic(wr->opcode) ? 8 : wr_length(wr);
	uint8_t rnr_timer = 0;
	enum ibv_wc_status status;

	if (!retry && fatal_fault(mqp, wr, mark))
		return false;
	if (!retry && delay_fault(mqp, wr, mark))
		return true;
	if (!retry && wc_fault(mqp, &status)) {
		fail_request(mqp, wr, status, mark);
		return false;
	}
	status = execute(mqp, wr, len, &rnr_timer);
	/* Unanswered because the QP's own responder (a QP connected to
	 * itself) put it in error as it took the request: nothing is left to
	 * retry, and the request is flushed with the rest. */
	if ((status == IBV_WC_RETRY_EXC_ERR || status == IBV_WC_RNR_RETRY_EXC_ERR) &&
	    mqp->state != IBV_QPS_RTS) {
		if (retry)
			verbs_qp_end_stall(mqp, true);
		else
			complete_send(mqp, wr, IBV_WC_WR_FLUSH_ERR, 0, mark);
		return retry;
	}
	if (status == IBV_WC_RETRY_EXC_ERR || status == IBV_WC_RNR_RETRY_EXC_ERR) {
		if (!retry)
			stall_append(mqp, wr, mark);
		wait_to_retry(mqp, status, rnr_timer, !retry || status != mqp->stall_status);
		return true;
	}
	if (status != IBV_WC_SUCCESS)
		fail_request(mqp, wr, status, mark);
	else if (mqp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED))
		complete_send(mqp, wr, status, len, mark);
	return false;
}

/* A retry is due (a fabric timer, verbs lock held): the head request goes
 * again; answered, the requests behind it go in turn. */
static void retry_due(void *obj, int gen)
{
	struct mock_qp *mqp = obj;

	if (mqp->magic != VERBS_QP_MAGIC || mqp->stall_gen != (uint32_t)gen || !mqp->stalled ||
	    mqp->state != IBV_QPS_RTS)
		return;
	if (mqp->tries_left == 0) {
		fail_stalled_head(mqp, mqp->stall_status);
		return;
	}
	if (mqp->tries_left > 0)
		mqp->tries_left--;
	while (mqp->stalled && mqp->state == IBV_QPS_RTS) {
		bool stalled;

		mqp->raw_ah = mqp->stalled->has_av ? &mqp->stalled->av : NULL;
		stalled = run_request(mqp, &mqp->stalled->wr, mqp->stalled->sq_mark, true);
		mqp->raw_ah = NULL;
		if (stalled)
			return;
		fab_free(stall_take(mqp));
	}
}

void verbs_qp_end_stall(struct mock_qp *mqp, bool complete)
{
	struct stalled_wr *s;

	if (!mqp->stalled)
		return;
	mqp->stall_gen++;
	fab_timer_cancel_verbs(mqp);
	while ((s = stall_take(mqp))) {
		if (complete)
			complete_send(mqp, &s->wr, IBV_WC_WR_FLUSH_ERR, 0, s->sq_mark);
		fab_free(s);
	}
}

__attribute__((constructor)) static void register_retries(void)
{
	fab_set_verbs_timer(retry_due);
	fab_set_receiver(verbs_qp_receive);
}

/* The provider's checks, then the device's work. 0 once the request is
 * on the send queue, whatever its completion says. */
int verbs_post_one_send(struct mock_qp *mqp, const struct ibv_send_wr *wr)
{
	bool mlx5 = mqp->personality == RDMAMOCK_MLX5;
	uint64_t len, mark;

	if (mqp->qp.qp_type == IBV_QPT_XRC_RECV || mqp->dc_type == MLX5DV_DCTYPE_DCT)
		return EINVAL; /* it has no send queue */
	/* A DCI's WQE carries its destination, which an ibv_send_wr cannot
	 * (the provider writes none, and the device would fail it): its work
	 * goes through WQEs and the doorbell, or ibv_wr_* with
	 * mlx5dv_wr_set_dc_addr (raw_ah, during ibv_wr_complete). */
	if (mqp->dc_type == MLX5DV_DCTYPE_DCI && !mqp->raw_ah) {
		static int said;

		mock_not_implemented("a DCI's work request without its DC address (post it with "
				     "ibv_wr_* and mlx5dv_wr_set_dc_addr, or as a WQE)", &said);
		return EINVAL;
	}
	/* rxe refuses a send before RTS; SQD (draining) is refused too. */
	if (mqp->state != IBV_QPS_RTS && mqp->state != IBV_QPS_SQE && mqp->state != IBV_QPS_ERR)
		return EINVAL;
	if (!opcode_ok(mqp->qp.qp_type, wr->opcode))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > mqp->cap.max_send_sge)
		return mlx5 ? ENOMEM : EINVAL;
	MOCK_REQUIRE(wr->sg_list || !wr->num_sge, "ibv_post_send",
		     "sg_list is NULL with num_sge %d (upstream reads it)", wr->num_sge);
	if (mqp->qp.qp_type == IBV_QPT_UD)
		MOCK_REQUIRE(wr->wr.ud.ah, "ibv_post_send",
			     "a UD send without an address handle (upstream dereferences wr.ud.ah)");
	len = wr_length(wr);
	if ((wr->send_flags & IBV_SEND_INLINE) && carries_data_out(wr->opcode) &&
	    len > mqp->cap.max_inline_data)
		return mlx5 ? ENOMEM : EINVAL;
	if (is_atomic(wr->opcode) && (len < 8 || (wr->wr.atomic.remote_addr & 7)))
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW)
		MOCK_REQUIRE(wr->bind_mw.mw, "ibv_post_send",
			     "a bind without a window (upstream dereferences bind_mw.mw)");
	/* A bind carries no data (rxe's validate_send_wr). */
	if (wr->opcode == IBV_WR_BIND_MW && (len || wr->num_sge))
		return EINVAL;
	if (mqp->sq_posted - mqp->sq_freed >= mqp->cap.max_send_wr)
		return ENOMEM;
	mark = ++mqp->sq_posted;
	if (mqp->ring)
		mlx5_sq_write(mqp, wr, mark);

	/* A send queue in error flushes what it is given; kernel 6.1's rxe
	 * never completes what was posted to a QP already in ERR, and the
	 * queue fills (measured; a replayed profile records it). */
	if (mqp->state == IBV_QPS_ERR && fab_replay_deviates(mqp->personality, "WC_POST_IN_ERR"))
		return 0;
	if (mqp->state != IBV_QPS_RTS) {
		complete_send(mqp, wr, IBV_WC_WR_FLUSH_ERR, 0, mark);
		return 0;
	}
	if (mqp->wr_fails) {
		fail_request(mqp, wr, mqp->wr_fails, mark);
		return 0;
	}
	/* Behind a request still being retried, it waits. */
	if (mqp->stalled)
		stall_append(mqp, wr, mark);
	else
		run_request(mqp, wr, mark, false);
	return 0;
}


/* A WQE a program rang for (doorbell.c, device/mlx5_qp.c): the device
 * runs it as it runs ibv_post_send's, without the provider's checks (the
 * program wrote it, the hardware takes it as it is); a WQE it cannot run
 * completes in error, and one on a QP out of RTS is flushed. */
static void run_raw(struct mock_qp *mqp, const struct ibv_send_wr *wr_in,
		    const struct mlx5_wqe_av *av, uint16_t index, enum ibv_wc_status status)
{
	uint64_t mark = ++mqp->sq_posted;
	struct ibv_send_wr ud = *wr_in;
	const struct ibv_send_wr *wr = wr_in;
	/* A UD WQE's vector stands for an address handle: one made of it,
	 * for this request only (address() takes it without the ledger). */
	struct mock_ah ah = { .magic = VERBS_AH_MAGIC, .mpd = mqp->mpd };

	if (av) {
		mlx5_av_decode(av, mqp->ib, &ah.attr);
		ah.dc_key = be64toh(av->key.dc_key);
		ah.dc_dctn = be32toh(av->dqp_dct) & 0xffffff;
		verbs_src_of(mqp->qp.context, ah.attr.grh.sgid_index, &ah.src);
		ah.ah.context = mqp->qp.context;
		/* A DCI's WR keeps its remote address: the vector is apart. */
		if (mqp->qp.qp_type == IBV_QPT_UD) {
			ud.wr.ud.ah = &ah.ah;
			wr = &ud;
		}
		mqp->raw_ah = &ah;
	}

	mlx5_sq_index(mqp, mark, index);
	if (status != IBV_WC_SUCCESS) {
		static int said;

		mock_not_implemented("a WQE of this opcode through the doorbell", &said);
		fail_request(mqp, wr, status, mark);
	} else if (mqp->state != IBV_QPS_RTS) {
		complete_send(mqp, wr, IBV_WC_WR_FLUSH_ERR, 0, mark);
	} else if (wr->opcode == MLX5_WR_NOP) {
		/* Nothing goes on the wire; a signalled one completes. */
		if (mqp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED))
			complete_send(mqp, wr, IBV_WC_SUCCESS, 0, mark);
	} else if (mqp->stalled) {
		stall_append(mqp, wr, mark);
	} else {
		run_request(mqp, wr, mark, false);
	}
	mqp->raw_ah = NULL;
}

/* The faults reached at each ibv_post_send, and at each doorbell that
 * finds a QP's WQEs waiting, before the requests go, aimed by the QP's
 * device, number and process:
 * - rdmamock/ibverbs/port_down: the QP's port goes down (and up after ms=);
 * - rdmamock/ibverbs/device_fatal: its device has a catastrophic error
 *   (rdmamock_device_fatal). */
static void device_faults(unsigned dev_serial, uint32_t qpn)
{
	struct fab_device_info dev;
	struct fault_action act;

	if ((!fault_at("rdmamock/ibverbs/port_down") && !fault_at("rdmamock/ibverbs/device_fatal")) ||
	    fab_device_by_serial(dev_serial, &dev))
		return;
	if (qpn_fault(dev_serial, qpn, "rdmamock/ibverbs/port_down", &act))
		mock_port_down(dev.name, &act);
	if (qpn_fault(dev_serial, qpn, "rdmamock/ibverbs/device_fatal", &act))
		rdmamock_device_fatal(dev.name);
}

/* The doorbell rang: every QP of this process whose record is ahead of
 * the device has its WQEs run, and every CQ whose arming record moved is
 * armed. */
static void doorbells(void)
{
	struct mock_qp *mqp = NULL;
	struct mock_cq *mcq = NULL;
	bool solicited, pending;
	struct fault_action act;
	struct { unsigned dev_serial; uint32_t qpn; } rung[16];
	unsigned n = 0;

	/* The device's faults first, outside the lock as at ibv_post_send (a
	 * port going down tells its events), for up to 16 rung QPs. */
	if (fault_at("rdmamock/ibverbs/port_down") || fault_at("rdmamock/ibverbs/device_fatal")) {
		verbs_lock_take();
		while (n < sizeof rung / sizeof rung[0] && (mqp = mlx5_qp_next_rung(mqp))) {
			rung[n].dev_serial = mqp->dev_serial;
			rung[n++].qpn = mqp->qp.qp_num;
		}
		verbs_lock_give();
		for (unsigned i = 0; i < n; i++)
			device_faults(rung[i].dev_serial, rung[i].qpn);
		mqp = NULL;
	}
	verbs_lock_take();
	/* A doorbell the device misses (rdmamock/mlx5/doorbell_lost, aimed
	 * by the QP): its WQEs wait in the queue, the record ahead of the
	 * device, until the next doorbell of the process. */
	while ((mqp = mlx5_qp_next_rung(mqp)))
		if (!fault_at("rdmamock/mlx5/doorbell_lost") ||
		    !qp_fault(mqp, "rdmamock/mlx5/doorbell_lost", &act))
			mlx5_sq_doorbell(mqp, run_raw);
	while ((mcq = mlx5_cq_next_armed(mcq, &solicited, &pending)))
		verbs_cq_arm_raw(mcq, solicited, pending);
	verbs_lock_give();
}

void *verbs_doorbell_page(void)
{
	return mlx5_doorbell_page(doorbells);
}

int verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_post_send");
	int err = 0;

	device_faults(mqp->dev_serial, mqp->qp.qp_num);
	if (!mock_fault(FAULT_NAME(LIB, "ibv_post_send"), &err)) {
		verbs_lock_take();
		for (; wr && !(err = verbs_post_one_send(mqp, wr)); wr = wr->next)
			;
		/* rxe's doorbell (post_send_db) runs the QP in the kernel: in
		 * ERR, 7.2's flushes the receives waiting in its queue too
		 * (measured; post_one_recv). */
		if (mqp->state == IBV_QPS_ERR && mqp->personality != RDMAMOCK_MLX5 &&
		    !fab_replay_deviates(mqp->personality, "WC_RECV_IN_ERR_WAITS"))
			verbs_qp_flush_recvs(mqp);
		verbs_lock_give();
	}
	if (err) {
		MOCK_REQUIRE(bad_wr, "ibv_post_send", "bad_wr is NULL (upstream stores the failed WR there)");
		*bad_wr = wr;
	}
	return err;
}
