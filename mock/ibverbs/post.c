/* libibverbs' data path, reached through context->ops: posting receives
 * and sends. The "device" carries a send out at once, in the caller's
 * thread: it finds the responder QP by number through the fabric, checks
 * keys and access as the hardware would, copies the data and writes the
 * completions. Errors are completions with an error status, and move the
 * QPs as the IB spec says: an RC QP to ERR, a UC send queue to SQE, a
 * responder that hits an error to ERR.
 *
 * Choices where hardware would wait: a SEND (or RDMA WRITE with immediate)
 * that finds no posted receive fails at once with IBV_WC_RNR_RETRY_EXC_ERR
 * on RC, whatever rnr_retry says (7, "retry forever", would hang); on UC
 * the message is dropped. An RC responder that cannot be reached (unknown
 * QP number, GID not on its device, not in RTR or later, not connected
 * back) gives IBV_WC_RETRY_EXC_ERR. UD sends need address handles, which
 * the mock does not have yet: EOPNOTSUPP. */
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define LIB "ibverbs"

/* ---------------------------------------------------------------- receives */

static int post_one_recv(struct mock_qp *mqp, const struct ibv_recv_wr *wr)
{
	struct recv_wqe *w;

	/* rxe, after C10-97.2.1: no receives before INIT. */
	if (mqp->state == IBV_QPS_RESET)
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > mqp->cap.max_recv_sge)
		return EINVAL;
	if (mqp->state != IBV_QPS_ERR && mqp->rq_count >= mqp->cap.max_recv_wr)
		return ENOMEM;
	MOCK_REQUIRE(wr->sg_list || !wr->num_sge, "ibv_post_recv",
		     "sg_list is NULL with num_sge %d (upstream reads it)", wr->num_sge);
	w = malloc(sizeof *w + (size_t)wr->num_sge * sizeof w->sge[0]);
	if (!w)
		return ENOMEM;
	w->next = NULL;
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof w->sge[0]);
	if (mqp->rq_tail)
		mqp->rq_tail->next = w;
	else
		mqp->rq_head = w;
	mqp->rq_tail = w;
	mqp->rq_count++;
	/* A QP in ERR takes the request and flushes it at once. */
	if (mqp->state == IBV_QPS_ERR)
		verbs_qp_flush_recvs(mqp);
	return 0;
}

int verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_post_recv");
	int err = 0;

	if (!mock_fault(FAULT_NAME(LIB, "ibv_post_recv"), &err)) {
		pthread_mutex_lock(&verbs_lock);
		for (; wr && !(err = post_one_recv(mqp, wr)); wr = wr->next)
			;
		pthread_mutex_unlock(&verbs_lock);
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

/* Data flows from the requester's buffers (else into them). */
static bool carries_data_out(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
	       op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* What each transport carries; the rest (memory windows, invalidation,
 * TSO) is not modelled and is refused as an unknown opcode would be. */
static bool opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	if (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
	    op == IBV_WR_RDMA_WRITE_WITH_IMM)
		return true;
	return type == IBV_QPT_RC && (op == IBV_WR_RDMA_READ || is_atomic(op));
}

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
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
	default:
		return IBV_WC_SEND;
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
		const void *src;

		if (!s->length)
			continue;
		if (wr->send_flags & IBV_SEND_INLINE)
			src = (const void *)(uintptr_t)s->addr;
		else if (!(src = verbs_mr_map(mqp->mpd, s->lkey, s->addr, s->length, 0)))
			return false;
		memcpy(out, src, s->length);
		out += s->length;
	}
	return true;
}

/* Scatter len bytes into a list of buffers through their lkeys (local
 * write): IBV_WC_LOC_LEN_ERR if they hold less, LOC_PROT_ERR on a bad key.
 * With data NULL, only check that they could take len bytes. */
static enum ibv_wc_status scatter(struct mock_pd *mpd, const struct ibv_sge *sge, int num_sge,
				  const char *data, uint64_t len)
{
	uint64_t room = 0;

	for (int i = 0; i < num_sge; i++)
		room += sge[i].length;
	if (room < len)
		return IBV_WC_LOC_LEN_ERR;
	for (int i = 0; i < num_sge && len; i++) {
		uint64_t n = sge[i].length < len ? sge[i].length : len;
		void *dst;

		if (!n)
			continue;
		dst = verbs_mr_map(mpd, sge[i].lkey, sge[i].addr, n, IBV_ACCESS_LOCAL_WRITE);
		if (!dst)
			return IBV_WC_LOC_PROT_ERR;
		if (data) {
			memmove(dst, data, n);
			data += n;
		}
		len -= n;
	}
	return IBV_WC_SUCCESS;
}

static bool device_has_gid(unsigned serial, const union ibv_gid *gid)
{
	union ibv_gid g;

	for (int i = 0; fab_device_gid(serial, i, &g) == 0; i++)
		if (!memcmp(&g, gid, sizeof g))
			return true;
	return false;
}

/* The responder as the packets would find it: by QP number, on a device
 * holding the destination GID, of the same type, able to receive (RTR or
 * later), and for RC answering to us. */
static struct mock_qp *responder(struct mock_qp *mqp)
{
	struct mock_qp *peer = fab_qp_owner(mqp->attr.dest_qp_num);

	if (!peer || peer->magic != VERBS_QP_MAGIC || peer->qp.qp_type != mqp->qp.qp_type)
		return NULL;
	if (peer->state < IBV_QPS_RTR || peer->state == IBV_QPS_ERR)
		return NULL;
	if (!device_has_gid(peer->dev_serial, &mqp->attr.ah_attr.grh.dgid))
		return NULL;
	if (mqp->qp.qp_type == IBV_QPT_RC && peer->attr.dest_qp_num != mqp->qp.qp_num)
		return NULL;
	return peer;
}

static struct recv_wqe *take_recv(struct mock_qp *mqp)
{
	struct recv_wqe *w = mqp->rq_head;

	if (w) {
		mqp->rq_head = w->next;
		if (!mqp->rq_head)
			mqp->rq_tail = NULL;
		mqp->rq_count--;
	}
	return w;
}

static void complete_recv(struct mock_qp *peer, struct recv_wqe *w, enum ibv_wc_status status,
			  enum ibv_wc_opcode opcode, uint64_t len, const struct ibv_send_wr *wr,
			  uint32_t src_qp)
{
	struct ibv_wc wc = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = status == IBV_WC_SUCCESS ? (uint32_t)len : 0,
		.qp_num = peer->qp.qp_num,
		.src_qp = src_qp,
	};

	if (status == IBV_WC_SUCCESS &&
	    (wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)) {
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = wr->imm_data;
	}
	free(w);
	verbs_cq_add(peer->rcq, &wc, peer, false, 0, wr->send_flags & IBV_SEND_SOLICITED);
}

/* A responder error: RC NAKs it and the responder goes to ERR; UC drops
 * the message silently (a receive it consumed still completes in error). */
static enum ibv_wc_status responder_error(struct mock_qp *mqp, struct mock_qp *peer,
					  enum ibv_wc_status nak)
{
	verbs_qp_error(peer, IBV_QPS_ERR);
	return mqp->qp.qp_type == IBV_QPT_RC ? nak : IBV_WC_SUCCESS;
}

static enum ibv_wc_status no_receive(struct mock_qp *mqp)
{
	return mqp->qp.qp_type == IBV_QPT_RC ? IBV_WC_RNR_RETRY_EXC_ERR : IBV_WC_SUCCESS;
}

static enum ibv_wc_status deliver_send(struct mock_qp *mqp, struct mock_qp *peer,
				       const struct ibv_send_wr *wr, const char *data, uint64_t len)
{
	struct recv_wqe *w = take_recv(peer);
	enum ibv_wc_status status;

	if (!w)
		return no_receive(mqp);
	status = scatter(peer->mpd, w->sge, w->num_sge, data, len);
	complete_recv(peer, w, status, IBV_WC_RECV, len, wr, mqp->qp.qp_num);
	if (status == IBV_WC_LOC_LEN_ERR)
		return responder_error(mqp, peer, IBV_WC_REM_INV_REQ_ERR);
	if (status != IBV_WC_SUCCESS)
		return responder_error(mqp, peer, IBV_WC_REM_OP_ERR);
	return IBV_WC_SUCCESS;
}

/* The responder's memory for an RDMA or atomic request: its QP must allow
 * the access, and the rkey name a region of its PD that allows it too. A
 * zero-length RDMA checks no key. */
static void *remote_memory(struct mock_qp *peer, uint32_t rkey, uint64_t addr, uint64_t len,
			   unsigned access, bool *ok)
{
	void *p = NULL;

	*ok = (peer->attr.qp_access_flags & access) &&
	      (!len || (p = verbs_mr_map(peer->mpd, rkey, addr, len, access)));
	return p;
}

static enum ibv_wc_status deliver_write(struct mock_qp *mqp, struct mock_qp *peer,
					const struct ibv_send_wr *wr, const char *data, uint64_t len)
{
	struct recv_wqe *w = NULL;
	bool ok;
	void *dst = remote_memory(peer, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len,
				  IBV_ACCESS_REMOTE_WRITE, &ok);

	if (!ok)
		return responder_error(mqp, peer, IBV_WC_REM_ACCESS_ERR);
	if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM && !(w = take_recv(peer)))
		return no_receive(mqp);
	if (len)
		memmove(dst, data, len);
	if (w)
		complete_recv(peer, w, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, len, wr,
			      mqp->qp.qp_num);
	return IBV_WC_SUCCESS;
}

static enum ibv_wc_status do_read(struct mock_qp *mqp, struct mock_qp *peer,
				  const struct ibv_send_wr *wr, uint64_t len)
{
	bool ok;
	const void *src = remote_memory(peer, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len,
					IBV_ACCESS_REMOTE_READ, &ok);

	if (!ok)
		return responder_error(mqp, peer, IBV_WC_REM_ACCESS_ERR);
	return len ? scatter(mqp->mpd, wr->sg_list, wr->num_sge, src, len) : IBV_WC_SUCCESS;
}

/* The 8 bytes at remote_addr, changed atomically; the old value goes to
 * the requester's buffer. The region's address and its iova share their
 * offset in the page, so an aligned remote_addr is an aligned pointer. */
static enum ibv_wc_status do_atomic(struct mock_qp *mqp, struct mock_qp *peer,
				    const struct ibv_send_wr *wr)
{
	bool ok;
	uint64_t *target = remote_memory(peer, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr, 8,
					 IBV_ACCESS_REMOTE_ATOMIC, &ok);
	uint64_t old;

	if (!ok)
		return responder_error(mqp, peer, IBV_WC_REM_ACCESS_ERR);
	if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		old = __atomic_fetch_add(target, wr->wr.atomic.compare_add, __ATOMIC_SEQ_CST);
	} else {
		old = wr->wr.atomic.compare_add;
		__atomic_compare_exchange_n(target, &old, wr->wr.atomic.swap, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	}
	return scatter(mqp->mpd, wr->sg_list, wr->num_sge, (const char *)&old, 8);
}

/* Carry one request out; the status of the requester's completion. */
static enum ibv_wc_status execute(struct mock_qp *mqp, const struct ibv_send_wr *wr, uint64_t len)
{
	enum ibv_wc_status status;
	struct mock_qp *peer;
	char *data = NULL;

	if (len > verbs_profile_of(mqp->personality)->max_msg_sz)
		return IBV_WC_LOC_LEN_ERR;
	if (carries_data_out(wr->opcode)) {
		data = malloc(len ? len : 1);
		if (!data) {
			mock_log("out of memory: a %llu-byte message from QP %u failed",
				 (unsigned long long)len, mqp->qp.qp_num);
			return IBV_WC_GENERAL_ERR;
		}
		if (!gather(mqp, wr, data)) {
			free(data);
			return IBV_WC_LOC_PROT_ERR;
		}
	} else {
		/* Where a read or atomic result lands is checked up front. */
		status = scatter(mqp->mpd, wr->sg_list, wr->num_sge, NULL,
				 is_atomic(wr->opcode) ? 8 : len);
		if (status != IBV_WC_SUCCESS)
			return status;
	}

	peer = responder(mqp);
	if (!peer)
		status = mqp->qp.qp_type == IBV_QPT_RC ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS;
	else if (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM)
		status = deliver_send(mqp, peer, wr, data, len);
	else if (wr->opcode == IBV_WR_RDMA_READ)
		status = do_read(mqp, peer, wr, len);
	else if (is_atomic(wr->opcode))
		status = do_atomic(mqp, peer, wr);
	else
		status = deliver_write(mqp, peer, wr, data, len);
	free(data);
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

	verbs_cq_add(mqp->scq, &wc, mqp, true, sq_mark, false);
}

/* The provider's checks, then the device's work. 0 once the request is
 * on the send queue, whatever its completion says. */
static int post_one_send(struct mock_qp *mqp, const struct ibv_send_wr *wr)
{
	bool mlx5 = mqp->personality == RDMAMOCK_MLX5;
	enum ibv_wc_status status;
	uint64_t len, mark;

	if (mqp->qp.qp_type == IBV_QPT_UD)
		return EOPNOTSUPP;
	/* rxe refuses a send before RTS; SQD (draining) is refused too. */
	if (mqp->state != IBV_QPS_RTS && mqp->state != IBV_QPS_SQE && mqp->state != IBV_QPS_ERR)
		return EINVAL;
	if (!opcode_ok(mqp->qp.qp_type, wr->opcode))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > mqp->cap.max_send_sge)
		return mlx5 ? ENOMEM : EINVAL;
	MOCK_REQUIRE(wr->sg_list || !wr->num_sge, "ibv_post_send",
		     "sg_list is NULL with num_sge %d (upstream reads it)", wr->num_sge);
	len = wr_length(wr);
	if ((wr->send_flags & IBV_SEND_INLINE) && carries_data_out(wr->opcode) &&
	    len > mqp->cap.max_inline_data)
		return mlx5 ? ENOMEM : EINVAL;
	if (is_atomic(wr->opcode) && (len < 8 || (wr->wr.atomic.remote_addr & 7)))
		return EINVAL;
	if (mqp->sq_posted - mqp->sq_freed >= mqp->cap.max_send_wr)
		return ENOMEM;
	mark = ++mqp->sq_posted;

	/* A send queue in error flushes what it is given. */
	if (mqp->state != IBV_QPS_RTS) {
		complete_send(mqp, wr, IBV_WC_WR_FLUSH_ERR, 0, mark);
		return 0;
	}
	if (is_atomic(wr->opcode))
		len = 8;
	status = execute(mqp, wr, len);
	if (status != IBV_WC_SUCCESS) {
		complete_send(mqp, wr, status, 0, mark);
		verbs_qp_error(mqp, mqp->qp.qp_type == IBV_QPT_RC ? IBV_QPS_ERR : IBV_QPS_SQE);
	} else if (mqp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED)) {
		complete_send(mqp, wr, status, len, mark);
	}
	return 0;
}

int verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct mock_qp *mqp = verbs_qp_of(qp, "ibv_post_send");
	int err = 0;

	if (!mock_fault(FAULT_NAME(LIB, "ibv_post_send"), &err)) {
		pthread_mutex_lock(&verbs_lock);
		for (; wr && !(err = post_one_send(mqp, wr)); wr = wr->next)
			;
		pthread_mutex_unlock(&verbs_lock);
	}
	if (err) {
		MOCK_REQUIRE(bad_wr, "ibv_post_send", "bad_wr is NULL (upstream stores the failed WR there)");
		*bad_wr = wr;
	}
	return err;
}
