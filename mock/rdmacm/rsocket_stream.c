/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* SOCK_STREAM data: the endpoint (one CQ with a completion channel, an RC
 * QP, buffers) and the mock's wire protocol on it.
 *
 * Each side posts rq_size receives, one slot of slot_size bytes each, and
 * says so in the REQ or REP (rs_format_conn_data). Every message is a SEND
 * with immediate data: 3 bits of kind, 29 bits of credits, the slots the
 * sender has reposted since it last said. A message needs one of the
 * peer's slots (a credit). Data keeps two credits back and a pure CREDIT
 * message one: so both ends can give credits back when both wait for them
 * after sending at once, and a control message (shutdown, disconnect) can
 * always go. A CREDIT message goes only when it hands back several slots
 * at once (a quarter of them), so credits never ping-pong. Slots are
 * reposted as soon as their content is taken: a control message's when it
 * is read off the CQ, data's when rrecv has copied it out. No message is
 * ever sent without a slot posted for it: a SEND that finds none fails the
 * connection (RNR), on the mock as on hardware that gives up retrying. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "rsocket.h"

#define RS_CREDIT_BITS 29
#define RS_CREDIT_MASK ((1u << RS_CREDIT_BITS) - 1)
#define RS_WIRE_VERSION 0x4d /* 'M': the mock's protocol, not upstream's */
#define RS_WR_RECV (1ull << 63)
#define RS_INLINE_MAX 1024

static uint64_t send_wr_id(enum rs_op op, uint32_t sbuf_bytes)
{
	return (uint64_t)op << 32 | sbuf_bytes;
}

/* ---------------------------------------------------------------- the endpoint */

/* Upstream's rs_set_qp_size: within RS_QP_MIN and the device's limit. */
static void fit_qp_size(struct rsocket *rs)
{
	struct ibv_device_attr attr;
	uint32_t max = RS_QP_MAX;

	if (!ibv_query_device(rs->cm_id->verbs, &attr) && (uint32_t)attr.max_qp_wr < max)
		max = (uint32_t)attr.max_qp_wr;
	rs->sq_size = rs->sq_size > max ? max : rs->sq_size < RS_QP_MIN ? RS_QP_MIN : rs->sq_size;
	rs->rq_size = rs->rq_size > max ? max : rs->rq_size < RS_QP_MIN ? RS_QP_MIN : rs->rq_size;
}

static int post_recv(struct rsocket *rs, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rs->rbuf + (size_t)slot * rs->slot_size,
		.length = rs->slot_size,
		.lkey = rs->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = RS_WR_RECV | slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int err = ibv_post_recv(rs->cm_id->qp, &wr, &bad);

	return err ? mock_errno(err) : 0;
}

static int create_cq(struct rsocket *rs)
{
	struct rdma_cm_id *id = rs->cm_id;

	rs->cq_channel = ibv_create_comp_channel(id->verbs);
	if (!rs->cq_channel)
		return -1;
	/* rdma_destroy_qp destroys what the id holds, as upstream's does. */
	id->recv_cq_channel = id->send_cq_channel = rs->cq_channel;
	if (rs_fd_nonblock(rs->cq_channel->fd, true))
		return -1;
	rs->cq = ibv_create_cq(id->verbs, (int)(rs->sq_size + rs->rq_size), rs, rs->cq_channel, 0);
	if (!rs->cq)
		return -1;
	id->recv_cq = id->send_cq = rs->cq;
	return 0;
}

static int create_bufs(struct rsocket *rs)
{
	rs->slot_size = (rs->rbuf_size / rs->rq_size) & ~63u;
	if (rs->slot_size < 64)
		rs->slot_size = 64;
	rs->rbuf = calloc(rs->rq_size, rs->slot_size);
	rs->rmsg = calloc(rs->rq_size, sizeof *rs->rmsg);
	rs->sbuf = malloc(rs->sbuf_size);
	if (!rs->rbuf || !rs->rmsg || !rs->sbuf)
		return mock_errno(ENOMEM);
	rs->rmr = ibv_reg_mr(rs->cm_id->pd, rs->rbuf, (size_t)rs->rq_size * rs->slot_size,
			     IBV_ACCESS_LOCAL_WRITE);
	rs->smr = ibv_reg_mr(rs->cm_id->pd, rs->sbuf, rs->sbuf_size, IBV_ACCESS_LOCAL_WRITE);
	if (!rs->rmr || !rs->smr)
		return -1;
	rs->sfree = rs->sbuf_size;
	rs->remote = calloc(rs->iomap_size ? rs->iomap_size : 1, sizeof *rs->remote);
	return rs->remote ? 0 : mock_errno(ENOMEM);
}

int rs_create_ep(struct rsocket *rs)
{
	struct ibv_qp_init_attr attr = { 0 };

	fit_qp_size(rs);
	if (create_cq(rs) || create_bufs(rs))
		return -1;
	attr.qp_context = rs;
	attr.send_cq = attr.recv_cq = rs->cq;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	attr.cap.max_send_wr = rs->sq_size;
	attr.cap.max_recv_wr = rs->rq_size;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(rs->cm_id, NULL, &attr)) {
		/* It destroyed the id's CQ and channel (ucma_destroy_cqs). */
		rs->cq = NULL;
		rs->cq_channel = NULL;
		return -1;
	}
	rs->sq_inline = attr.cap.max_inline_data;
	rs->sqe_avail = rs->sq_size;
	for (uint32_t i = 0; i < rs->rq_size; i++)
		if (post_recv(rs, i))
			return -1;
	return 0;
}

void rs_destroy_ep(struct rsocket *rs)
{
	/* What the id holds goes with it, once (a failed rdma_create_qp may
	 * have destroyed its CQ and channel already: rdmamock-sweep found a
	 * double destroy here at ibv_create_qp nth=1, and an rdma_destroy_qp
	 * of an id without a QP at ibv_create_cq nth=1). */
	rs_destroy_id_qp(rs->cm_id);
	rs->cq = NULL;
	rs->cq_channel = NULL;
	if (rs->rmr)
		ibv_dereg_mr(rs->rmr);
	if (rs->smr)
		ibv_dereg_mr(rs->smr);
	free(rs->rbuf);
	free(rs->sbuf);
	free(rs->rmsg);
	free(rs->remote);
	rs->rmr = rs->smr = NULL;
	rs->rbuf = rs->sbuf = NULL;
	rs->rmsg = NULL;
	rs->remote = NULL;
}

void rs_flush(struct rsocket *rs)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	if (rs->cm_id && rs->cm_id->qp)
		ibv_modify_qp(rs->cm_id->qp, &attr, IBV_QP_STATE);
}

/* ---------------------------------------------------------------- connection data */

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) << 16 | get16(p + 2);
}

/* version, 0, credits (16), slot size (32), iomap table size (16), 0... */
void rs_format_conn_data(const struct rsocket *rs, uint8_t out[RS_CONN_DATA_LEN])
{
	memset(out, 0, RS_CONN_DATA_LEN);
	out[0] = RS_WIRE_VERSION;
	put16(out + 2, rs->rq_size);
	put32(out + 4, rs->slot_size);
	put16(out + 8, rs->iomap_size);
}

int rs_save_conn_data(struct rsocket *rs, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (!p || len < RS_CONN_DATA_LEN || p[0] != RS_WIRE_VERSION)
		return mock_errno(ENOTSUP);
	rs->peer_credits = (int)get16(p + 2);
	rs->peer_slot = get32(p + 4);
	rs->peer_iomaps = get16(p + 8);
	return rs->peer_slot ? 0 : mock_errno(ENOTSUP);
}

/* ---------------------------------------------------------------- sending */

/* Where a message's bytes come from: iovecs, consumed as copied. */
struct rs_src {
	const struct iovec *iov;
	int iovcnt;
	size_t off;
};

static void src_copy(struct rs_src *src, uint8_t *dst, size_t n)
{
	while (n) {
		size_t take = src->iov->iov_len - src->off;

		if (take > n)
			take = n;
		memcpy(dst, (const uint8_t *)src->iov->iov_base + src->off, take);
		dst += take;
		n -= take;
		src->off += take;
		if (src->off == src->iov->iov_len) {
			src->iov++;
			src->iovcnt--;
			src->off = 0;
		}
	}
}

/* One work request: `len` bytes from src (inline when they fit, else
 * through the send ring), as a message of kind `op` carrying our credits,
 * or as an RDMA WRITE to raddr/rkey (RS_OP_WRITE). The caller made sure
 * of the send queue, the ring and the peer's slot. */
static int post(struct rsocket *rs, enum rs_op op, struct rs_src *src, uint32_t len,
		uint64_t raddr, uint32_t rkey)
{
	uint8_t inline_buf[RS_INLINE_MAX];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge[2];
	uint32_t ring = 0;
	int err;

	if (len && len <= rs->sq_inline && len <= sizeof inline_buf) {
		src_copy(src, inline_buf, len);
		sge[0] = (struct ibv_sge){ .addr = (uintptr_t)inline_buf, .length = len };
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_INLINE;
	} else if (len) {
		uint32_t first = rs->sbuf_size - rs->shead;

		if (first > len)
			first = len;
		src_copy(src, rs->sbuf + rs->shead, first);
		src_copy(src, rs->sbuf, len - first);
		sge[0] = (struct ibv_sge){ .addr = (uintptr_t)rs->sbuf + rs->shead,
					   .length = first, .lkey = rs->smr->lkey };
		sge[1] = (struct ibv_sge){ .addr = (uintptr_t)rs->sbuf,
					   .length = len - first, .lkey = rs->smr->lkey };
		wr.num_sge = len > first ? 2 : 1;
		rs->shead = (rs->shead + len) % rs->sbuf_size;
		rs->sfree -= len;
		ring = len;
	}
	wr.sg_list = sge;
	wr.wr_id = send_wr_id(op, ring);
	if (op == RS_OP_WRITE) {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	} else {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htobe32((uint32_t)op << RS_CREDIT_BITS | (rs->owed & RS_CREDIT_MASK));
		rs->owed = 0;
		rs->peer_credits--;
	}
	rs->sqe_avail--;
	err = ibv_post_send(rs->cm_id->qp, &wr, &bad);
	if (err) {
		rs->phase = RS_ERROR;
		rs->readable = rs->writable = false;
		rs->err = err;
		return mock_errno(err);
	}
	return 0;
}

int rs_post_msg(struct rsocket *rs, int op, const void *data, uint32_t len)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct rs_src src = { .iov = &iov, .iovcnt = 1 };

	return post(rs, (enum rs_op)op, &src, len, 0, 0);
}

int rs_post_write(struct rsocket *rs, const void *data, uint32_t len, uint64_t raddr,
		  uint32_t rkey)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct rs_src src = { .iov = &iov, .iovcnt = 1 };

	return post(rs, RS_OP_WRITE, &src, len, raddr, rkey);
}

/* Room for one more message of data: a send queue entry beside the one
 * kept for control, a slot at the peer beside the two kept (one to give
 * credits back with, one for control), and send buffer space (upstream's
 * RS_SNDLOWAT). */
bool rs_can_send(struct rsocket *rs)
{
	uint32_t low = rs->sbuf_size < RS_SNDLOWAT ? rs->sbuf_size : RS_SNDLOWAT;

	return rs->writable && rs->sqe_avail >= 2 && rs->peer_credits >= 3 && rs->sfree >= low;
}

/* How much the next work request may carry, at most `limit`. */
uint32_t rs_chunk(const struct rsocket *rs, size_t left, uint32_t limit)
{
	uint32_t n = left < limit ? (uint32_t)left : limit;

	if (n > rs->sq_inline || n > RS_INLINE_MAX)
		n = n < rs->sfree ? n : rs->sfree;
	return n;
}

static bool can_send_or_closed(struct rsocket *rs)
{
	return rs_can_send(rs) || !rs->writable;
}

int rs_wait_send(struct rsocket *rs, int flags)
{
	int ret = 0;

	if (!rs_can_send(rs)) {
		ret = rs_wait(rs, rs_nonblocking(rs, flags), can_send_or_closed);
		if (!ret && !rs->writable)
			ret = mock_errno(ECONNRESET);
	}
	return ret;
}

/* Credits back to the peer when enough slots are free again; never the
 * last slot (kept for control messages). Data keeps one more back, so when
 * both ends wait for credits after sending at once, each can still give. */
static void give_credits(struct rsocket *rs)
{
	uint32_t enough = rs->rq_size / 4 > 2 ? rs->rq_size / 4 : 2;

	if (rs->phase == RS_CONNECTED && rs->owed >= enough && rs->peer_credits >= 2 &&
	    rs->sqe_avail >= 1)
		rs_post_msg(rs, RS_OP_CREDIT, NULL, 0);
}

int rs_send_ctrl(struct rsocket *rs, enum rs_ctrl ctrl)
{
	if (rs->phase != RS_CONNECTED)
		return 0;
	rs_poll_cq(rs);
	if (rs->phase == RS_CONNECTED && rs->peer_credits >= 1 && rs->sqe_avail >= 1)
		return rs_post_msg(rs, ctrl == RS_CTRL_SHUTDOWN ? RS_OP_SHUTDOWN : RS_OP_DISCONNECT,
				   NULL, 0);
	/* No slot left at the peer: the CM carries the disconnect instead. */
	if (ctrl == RS_CTRL_DISCONNECT && rs->phase == RS_CONNECTED)
		rdma_disconnect(rs->cm_id);
	return 0;
}

bool rs_sends_done(struct rsocket *rs)
{
	return rs->sqe_avail == rs->sq_size || rs->phase != RS_CONNECTED;
}

void rs_send_keepalive(struct rsocket *rs)
{
	if (rs->phase == RS_CONNECTED && rs->sqe_avail >= 2)
		rs_post_write(rs, NULL, 0, 0, 0);
}

ssize_t rs_sendv(struct rsocket *rs, const struct iovec *iov, int iovcnt, int flags)
{
	struct rs_src src = { .iov = iov, .iovcnt = iovcnt };
	size_t len = 0, left;
	int ret = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	while (src.iovcnt && !src.iov->iov_len) {
		src.iov++;
		src.iovcnt--;
	}
	pthread_mutex_lock(&rs->lock);
	if (rs->phase < RS_CONNECTED || rs->phase == RS_CONNECT_ERROR) {
		pthread_mutex_unlock(&rs->lock);
		return mock_errno(ENOTCONN);
	}
	if (rs->iomap_pending)
		ret = rs_send_iomaps(rs, flags);
	for (left = len; left && !ret;) {
		uint32_t n;

		if ((ret = rs_wait_send(rs, flags)))
			break;
		n = rs_chunk(rs, left, rs->peer_slot);
		ret = post(rs, RS_OP_DATA, &src, n, 0, 0);
		if (!ret)
			left -= n;
	}
	pthread_mutex_unlock(&rs->lock);
	return ret && left == len ? -1 : (ssize_t)(len - left);
}

/* ---------------------------------------------------------------- receiving */

static void repost(struct rsocket *rs, uint32_t slot)
{
	if (rs->phase == RS_CONNECTED && !post_recv(rs, slot))
		rs->owed++;
}

static void received(struct rsocket *rs, const struct ibv_wc *wc)
{
	uint32_t slot = (uint32_t)wc->wr_id;
	uint32_t imm = be32toh(wc->imm_data);
	const uint8_t *data = rs->rbuf + (size_t)slot * rs->slot_size;

	if (wc->status != IBV_WC_SUCCESS || !(wc->wc_flags & IBV_WC_WITH_IMM))
		return; /* flushed */
	rs->peer_credits += (int)(imm & RS_CREDIT_MASK);
	switch (imm >> RS_CREDIT_BITS) {
	case RS_OP_DATA:
		if (wc->byte_len) {
			uint32_t tail = (rs->rmsg_head + rs->rmsg_count++) % rs->rq_size;

			rs->rmsg[tail] = (struct rs_rmsg){ .slot = slot, .len = wc->byte_len };
			return;
		}
		break;
	case RS_OP_IOMAP:
		rs_save_iomap(rs, data, wc->byte_len);
		break;
	case RS_OP_SHUTDOWN:
		rs->readable = false;
		if (!rs->writable)
			rs->phase = RS_DISCONNECTED;
		break;
	case RS_OP_DISCONNECT:
		rs->readable = rs->writable = false;
		rs->phase = RS_DISCONNECTED;
		return;
	default:
		break;
	}
	repost(rs, slot);
}

static void sent(struct rsocket *rs, const struct ibv_wc *wc)
{
	rs->sqe_avail++;
	rs->sfree += (uint32_t)wc->wr_id;
	if (wc->status != IBV_WC_SUCCESS && rs->phase == RS_CONNECTED) {
		rs->phase = RS_ERROR;
		rs->readable = rs->writable = false;
		rs->err = EIO;
	}
}

void rs_poll_cq(struct rsocket *rs)
{
	struct ibv_wc wc[16];
	int n;

	if (!rs->cq)
		return;
	while ((n = ibv_poll_cq(rs->cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++) {
			if (wc[i].wr_id & RS_WR_RECV)
				received(rs, &wc[i]);
			else
				sent(rs, &wc[i]);
		}
	give_credits(rs);
}

void rs_take_cq_event(struct rsocket *rs)
{
	struct ibv_cq *cq;
	void *context;

	pthread_mutex_lock(&rs->wait_lock);
	if (__atomic_load_n(&rs->cq_armed, __ATOMIC_ACQUIRE) && rs->cq_channel &&
	    !ibv_get_cq_event(rs->cq_channel, &cq, &context)) {
		ibv_ack_cq_events(cq, 1);
		__atomic_store_n(&rs->cq_armed, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&rs->wait_lock);
}

bool rs_arm(struct rsocket *rs)
{
	if (!rs->cq)
		return true;
	if (!__atomic_load_n(&rs->cq_armed, __ATOMIC_ACQUIRE)) {
		ibv_req_notify_cq(rs->cq, 0);
		__atomic_store_n(&rs->cq_armed, 1, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

int rs_wait(struct rsocket *rs, bool nonblock, bool (*ready)(struct rsocket *))
{
	for (;;) {
		rs_poll_cq(rs);
		if (ready(rs))
			return 0;
		if (nonblock || !rs->cq)
			return mock_errno(EWOULDBLOCK);
		if (!rs_arm(rs))
			continue; /* poll once more: a completion may have beaten the arming */
		pthread_mutex_unlock(&rs->lock);
		pthread_mutex_lock(&rs->wait_lock);
		if (__atomic_load_n(&rs->cq_armed, __ATOMIC_ACQUIRE)) {
			struct pollfd pfd = { .fd = rs->cq_channel->fd, .events = POLLIN };

			poll(&pfd, 1, RS_WAKE_MS);
		}
		pthread_mutex_unlock(&rs->wait_lock);
		rs_take_cq_event(rs);
		pthread_mutex_lock(&rs->lock);
	}
}

bool rs_have_data(struct rsocket *rs)
{
	return rs->rmsg_count != 0;
}

static bool have_data_or_closed(struct rsocket *rs)
{
	return rs_have_data(rs) || !rs->readable;
}

/* Copy up to len bytes of what came in; consume it unless peeking. */
static size_t take(struct rsocket *rs, uint8_t *buf, size_t len, bool peek)
{
	uint32_t head = rs->rmsg_head, count = rs->rmsg_count;
	size_t done = 0;

	while (done < len && count) {
		struct rs_rmsg *m = &rs->rmsg[head];
		size_t n = m->len - m->off;

		if (n > len - done)
			n = len - done;
		memcpy(buf + done, rs->rbuf + (size_t)m->slot * rs->slot_size + m->off, n);
		done += n;
		if (peek) {
			if (n < m->len - m->off)
				break;
		} else if ((m->off += (uint32_t)n) < m->len) {
			break;
		} else {
			repost(rs, m->slot);
		}
		head = (head + 1) % rs->rq_size;
		count--;
	}
	if (!peek) {
		rs->rmsg_head = head;
		rs->rmsg_count = count;
	}
	return done;
}

ssize_t rs_recv(struct rsocket *rs, void *buf, size_t len, int flags)
{
	size_t done = 0;
	int ret = 0;

	pthread_mutex_lock(&rs->lock);
	if (rs->phase < RS_CONNECTED || rs->phase == RS_CONNECT_ERROR) {
		pthread_mutex_unlock(&rs->lock);
		return mock_errno(ENOTCONN);
	}
	do {
		if (!rs_have_data(rs)) {
			ret = rs_wait(rs, rs_nonblocking(rs, flags), have_data_or_closed);
			if (ret)
				break;
		}
		done += take(rs, (uint8_t *)buf + done, len - done, flags & MSG_PEEK);
		if (flags & MSG_PEEK)
			break;
		give_credits(rs);
	} while (done < len && (flags & MSG_WAITALL) && rs->readable);
	pthread_mutex_unlock(&rs->lock);
	return ret && !done ? -1 : (ssize_t)done;
}
