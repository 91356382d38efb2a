/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs' data path, responder side: what a QP does with a packet the
 * fabric brings it (fab_transmit calls verbs_qp_receive). The checks are
 * the responder's: the transport, the QP's state, the connection, the
 * Q_Key of a UD QP, the R_Key and access of an RDMA or atomic request. A
 * request that passes is carried out on the QP's memory and, where it
 * consumes a receive, completes it; the answer (ACK or NAK) goes back in
 * resp. UC and UD have no answers: their failures are silent drops.
 *
 * Runs with verbs_lock held: in-process the requester holds it across
 * fab_transmit. */
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <unistd.h>

#include "verbs.h"

/* The 40 bytes a UD receive gets before the message: the packet's GRH as
 * the device saw it. RoCE v2 over IPv4 puts the IPv4 header in the last 20
 * bytes, as rxe and mlx5 do; over IPv6, the IPv6 header (next header UDP);
 * RoCE v1, the IB GRH (next header 0x1b). */
enum { GRH_BYTES = 40, IB_NEXT_HDR = 0x1b, ROCE_V2_OVERHEAD = 8 + 12 + 8 + 4 };

static uint16_t ipv4_checksum(const void *hdr)
{
	const uint16_t *w = hdr;
	uint32_t sum = 0;

	for (int i = 0; i < 10; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static bool v4mapped(const union ibv_gid *gid)
{
	return IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)gid->raw);
}

/* rxe hands the IPv4 header over with its checksum field 0 (measured on
 * kernels 6.1 and 7.2); mlx5 writes the header as it came, checksummed. */
static void build_grh(const struct mock_qp *mqp, const struct fab_packet *pkt, uint8_t *grh)
{
	/* Without a GRH (InfiniBand within the subnet) the device writes
	 * nothing there: the mock writes zeros, and IBV_WC_GRH is clear. */
	memset(grh, 0, GRH_BYTES);
	if (pkt->no_grh)
		return;
	if (pkt->gid_type == IBV_GID_TYPE_ROCE_V2 && v4mapped(&pkt->sgid)) {
		struct iphdr ip = {
			.version = 4,
			.ihl = 5,
			.tos = pkt->traffic_class,
			.tot_len = htons((uint16_t)(20 + ROCE_V2_OVERHEAD + pkt->len)),
			.id = htons(pkt->ip_id),
			.frag_off = htons(IP_DF),
			.ttl = pkt->hop_limit,
			.protocol = IPPROTO_UDP,
		};

		memcpy(&ip.saddr, &pkt->sgid.raw[12], 4);
		memcpy(&ip.daddr, &pkt->dgid.raw[12], 4);
		if (mqp->personality == RDMAMOCK_MLX5)
			ip.check = ipv4_checksum(&ip);
		memcpy(grh + 20, &ip, sizeof ip);
	} else {
		struct ibv_grh g = {
			.version_tclass_flow = htonl(6u << 28 | (uint32_t)pkt->traffic_class << 20 |
						     (pkt->flow_label & 0xfffff)),
			.paylen = htons((uint16_t)(ROCE_V2_OVERHEAD + pkt->len)),
			.next_hdr = pkt->gid_type == IBV_GID_TYPE_ROCE_V2 ? IPPROTO_UDP : IB_NEXT_HDR,
			.hop_limit = pkt->hop_limit,
			.sgid = pkt->sgid,
			.dgid = pkt->dgid,
		};

		memcpy(grh, &g, sizeof g);
	}
}

/* ---------------------------------------------------------------- checks */

static bool same_transport(const struct mock_qp *mqp, const struct fab_packet *pkt)
{
	if (mqp->qp.qp_type == IBV_QPT_XRC_RECV)
		return pkt->transport == IBV_QPT_XRC_SEND;
	return (enum ibv_qp_type)pkt->transport == mqp->qp.qp_type;
}

/* A QP receives from RTR on, and not in ERR (SQD and SQE still receive). */
static bool receiving(const struct mock_qp *mqp)
{
	return mqp->state >= IBV_QPS_RTR && mqp->state != IBV_QPS_ERR;
}

/* A connected QP takes packets only from the QP its path names; a DCT
 * from any DCI that gives its access key (another key: the packet is
 * dropped, and the DCI's retries run out); a DCI takes none. */
static bool from_peer(const struct mock_qp *mqp, const struct fab_packet *pkt)
{
	if (mqp->qp.qp_type == IBV_QPT_UD)
		return true;
	if (mqp->dc_type)
		return mqp->dc_type == MLX5DV_DCTYPE_DCT && pkt->dc_key == mqp->dc_key;
	if (pkt->src_qpn != mqp->attr.dest_qp_num)
		return false;
	/* InfiniBand: the local route header's source LID, GRH or not. */
	if (mqp->ib)
		return pkt->slid == mqp->attr.ah_attr.dlid;
	return !memcmp(&pkt->sgid, &mqp->attr.ah_attr.grh.dgid, sizeof pkt->sgid);
}

static bool iwarp(const struct mock_qp *mqp)
{
	return fab_profile_of(mqp->personality)->transport == IBV_TRANSPORT_IWARP;
}

/* ---------------------------------------------------------------- receives */

/* Where a message lands: the QP's own receive queue, its SRQ, or for XRC
 * the SRQ the packet names, which must share the QP's domain. */
static struct mock_srq *srq_for(struct mock_qp *mqp, const struct fab_packet *pkt)
{
	struct mock_srq *msrq;

	if (mqp->qp.qp_type != IBV_QPT_XRC_RECV)
		return mqp->srq;
	msrq = verbs_srq_by_num(pkt->xrc_srqn);
	return msrq && msrq->xrcd == mqp->xrcd ? msrq : NULL;
}

static struct recv_wqe *take_recv(struct mock_qp *mqp, struct mock_srq *msrq)
{
	if (mqp->qp.qp_type == IBV_QPT_XRC_RECV || mqp->srq)
		return msrq ? verbs_srq_take(msrq) : NULL;
	verbs_rq_pull(mqp, false);
	return verbs_rq_take(&mqp->rq);
}

/* No receive posted: the RNR NAK tells the requester how long to wait
 * before it tries again (the QP's min_rnr_timer). */
static void nak_rnr(const struct mock_qp *mqp, struct fab_response *resp)
{
	resp->ack = FAB_NAK_RNR;
	resp->rnr_timer = mqp->attr.min_rnr_timer;
}

/* A connected QP's message longer than its receive: mlx5 completes the
 * receive with a local length error (MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR)
 * and NAKs an invalid request; rxe takes it for a malformed WQE (Class A):
 * IBV_WC_LOC_QP_OP_ERR here, a remote operation error NAK (measured on
 * 6.1 and 7.2). */
static bool generic_len_err(const struct mock_qp *mqp, enum ibv_wc_status status)
{
	return status == IBV_WC_LOC_LEN_ERR && mqp->personality != RDMAMOCK_MLX5 &&
	       mqp->qp.qp_type != IBV_QPT_UD;
}

/* What mlx5 reports where a receive's SL would be on RoCE: the packet's
 * type, as its CQE carries it (flags_rqpn bits 27:24, which the provider
 * hands out as wc->sl): bit 3 a UDP header (RoCE v2), bits 1:0 the L3
 * header, 0 a GRH (v1), 1 IPv6, 2 IPv4 (MLX5_CQE_ROCE_L3_HEADER_TYPE_*).
 * UCX's UD transports read it to find the destination GID in the GRH. */
static uint8_t roce_packet_type(const struct fab_packet *pkt)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (pkt->gid_type != IBV_GID_TYPE_ROCE_V2)
		return 0;
	return 0x8 | (memcmp(pkt->dgid.raw, v4mapped, sizeof v4mapped) ? 1 : 2);
}

/* The CQ a QP's receives complete on: an XRC target's SRQ's. */
static struct mock_cq *recv_cq(struct mock_qp *mqp, struct mock_srq *msrq)
{
	return mqp->qp.qp_type == IBV_QPT_XRC_RECV ? msrq->cq : mqp->rcq;
}

static void complete_recv(struct mock_qp *mqp, struct mock_srq *msrq, struct recv_wqe *w,
			  enum ibv_wc_status status, enum ibv_wc_opcode opcode, uint64_t len,
			  const struct fab_packet *pkt, const struct verbs_later *later)
{
	struct mock_cq *cq = recv_cq(mqp, msrq);
	struct ibv_wc wc = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = status == IBV_WC_SUCCESS ? (uint32_t)len : 0,
		.qp_num = mqp->qp.qp_num,
		.src_qp = pkt->src_qpn,
		.sl = pkt->sl,
	};
	bool generic = mqp->personality != RDMAMOCK_MLX5;

	if (status == IBV_WC_SUCCESS && pkt->with_imm) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = pkt->imm;
	}
	if (status == IBV_WC_SUCCESS && pkt->with_inv) {
		/* rxe's flag is the kernel's, which libibverbs reads as
		 * IP_CSUM_OK (MW_SEND_WITH_INV, replayed). */
		wc.wc_flags |= fab_replay_deviates(mqp->personality, "MW_SEND_WITH_INV")
				       ? IBV_WC_IP_CSUM_OK : IBV_WC_WITH_INV;
		wc.invalidated_rkey = pkt->inv_rkey;
	}
	/* rxe (rxe_resp.c do_complete) marks every receive of a user QP with
	 * IBV_WC_GRH, and gives a source QP only from a DETH (UD). An RNIC
	 * marks none: iWARP has no GRH. */
	if (status == IBV_WC_SUCCESS && !iwarp(mqp) && (generic || mqp->qp.qp_type == IBV_QPT_UD) && !pkt->no_grh)
		wc.wc_flags |= IBV_WC_GRH;
	if (generic && mqp->qp.qp_type != IBV_QPT_UD)
		wc.src_qp = 0;
	/* InfiniBand: the sender's LID and SL, as the CQE carries them. */
	if (mqp->ib)
		wc.slid = pkt->slid;
	else if (!generic)
		wc.sl = roce_packet_type(pkt);
	uint16_t index = w->wqe_index;

	verbs_rq_recycle(w);
	verbs_cq_add(cq, &wc, mqp, false, index, pkt->solicited, later);
}

/* A responder error moves the QP to ERR, and NAKs where there are
 * answers. mlx5's firmware also raises the affiliated event (mlx5_ib maps
 * WQ_ACCESS_ERROR to IBV_EVENT_QP_ACCESS_ERR and WQ_INVAL_REQ_ERROR to
 * IBV_EVENT_QP_REQ_ERR). rxe raises none on kernel 6.1, which the generic
 * device follows; 7.2's raises IBV_EVENT_QP_ACCESS_ERR (measured). */
static void responder_error(struct mock_qp *mqp, struct fab_response *resp, enum fab_ack nak)
{
	/* A DCT serves every DCI: the NAK puts the requester in error, not
	 * the DCT. */
	if (mqp->dc_type == MLX5DV_DCTYPE_DCT) {
		resp->ack = nak;
		return;
	}
	verbs_qp_error(mqp, IBV_QPS_ERR);
	if (mqp->qp.qp_type == IBV_QPT_UD)
		return;
	if (mqp->personality == RDMAMOCK_MLX5 && nak == FAB_NAK_ACCESS)
		verbs_async_qp(mqp, IBV_EVENT_QP_ACCESS_ERR);
	else if (mqp->personality == RDMAMOCK_MLX5 && nak == FAB_NAK_INV_REQ)
		verbs_async_qp(mqp, IBV_EVENT_QP_REQ_ERR);
	resp->ack = nak;
}

static void receive_send(struct mock_qp *mqp, const struct fab_packet *pkt,
			 struct fab_response *resp)
{
	struct mock_srq *msrq = srq_for(mqp, pkt);
	/* A receive's lkeys are of its queue's PD: an SRQ's own (an XRC
	 * target QP has no PD at all). */
	struct mock_pd *mpd = msrq ? msrq->mpd : mqp->mpd;
	struct verbs_later later = { 0 };
	enum ibv_wc_status status;
	struct recv_wqe *w;
	uint64_t len = pkt->len;
	char *msg = NULL;

	if (mqp->qp.qp_type == IBV_QPT_XRC_RECV && !msrq) {
		resp->ack = FAB_NAK_INV_REQ;
		return;
	}
	w = take_recv(mqp, msrq);
	if (!w) {
		if (mqp->qp.qp_type == IBV_QPT_RC || mqp->qp.qp_type == IBV_QPT_XRC_RECV ||
		    mqp->dc_type == MLX5DV_DCTYPE_DCT)
			nak_rnr(mqp, resp);
		return;
	}
	/* A message for another process waits with its completion, which
	 * that process polls (verbs_scatter_later). */
	if (mqp->qp.qp_type == IBV_QPT_UD) {
		uint8_t buf[GRH_BYTES];

		msg = malloc(GRH_BYTES + len);
		if (!msg) {
			mock_log("out of memory: a %llu-byte UD message to QP %u lost",
				 (unsigned long long)len, mqp->qp.qp_num);
			verbs_rq_drop(&(struct recv_queue){ .head = w, .tail = w, .count = 1 });
			return;
		}
		build_grh(mqp, pkt, buf);
		memcpy(msg, buf, GRH_BYTES);
		memcpy(msg + GRH_BYTES, pkt->payload, len);
		len += GRH_BYTES;
		status = verbs_scatter_later(mpd, w->sge, w->num_sge, msg, len, &later);
		/* A UD message longer than the receive: rxe on Linux 6.1 reports
		 * a local QP operation error (7.2 drops it); mlx5 a length error. */
		if (status == IBV_WC_LOC_LEN_ERR && mqp->personality != RDMAMOCK_MLX5)
			status = IBV_WC_LOC_QP_OP_ERR;
	} else {
		status = verbs_scatter_later(mpd, w->sge, w->num_sge, pkt->payload, len, &later);
	}
	if (generic_len_err(mqp, status)) {
		complete_recv(mqp, msrq, w, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RECV, len, pkt, NULL);
		responder_error(mqp, resp, FAB_NAK_OP);
		free(msg);
		return;
	}
	/* A SEND with invalidate frees the window it names once its data is
	 * in. A key that frees nothing fails the receive and moves the QP to
	 * ERR, after the request was acknowledged: its sender completes
	 * successfully (rxe_resp.c RESPST_ERR_INVALIDATE_RKEY, class J;
	 * measured on 6.1). */
	if (status == IBV_WC_SUCCESS && pkt->with_inv && !verbs_mw_invalidate(pkt->inv_rkey)) {
		complete_recv(mqp, msrq, w, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV, len, pkt, NULL);
		verbs_qp_error(mqp, IBV_QPS_ERR);
		resp->ack = FAB_ACK;
		free(msg);
		return;
	}
	/* The completion copies the message it keeps: msg may go. */
	complete_recv(mqp, msrq, w, status, IBV_WC_RECV, len, pkt, later.nseg ? &later : NULL);
	free(msg);
	if (status == IBV_WC_LOC_LEN_ERR || status == IBV_WC_LOC_QP_OP_ERR)
		responder_error(mqp, resp, FAB_NAK_INV_REQ);
	else if (status != IBV_WC_SUCCESS)
		responder_error(mqp, resp, FAB_NAK_OP);
	else
		resp->ack = FAB_ACK;
}

__thread bool verbs_target_gone;


/* A copy that failed (err < 0); ESRCH: its process has just died. */
static bool mem_failed(int err)
{
	if (err == -ESRCH)
		verbs_target_gone = true;
	return err != 0;
}

/* The responder's memory for an RDMA or atomic request: its QP must allow
 * the access (not on an RNIC: siw keeps the QP's flags and never reads
 * them), and the rkey name a region of its PD that allows it too, or a
 * window bound to one (mw.c). A zero-length RDMA checks no key. */
static bool remote_memory(struct mock_qp *mqp, const struct fab_packet *pkt, uint64_t len,
			  unsigned access, struct verbs_mem *at)
{
	return ((mqp->attr.qp_access_flags & access) || iwarp(mqp)) &&
	       (!len || verbs_rkey_map(mqp, pkt->rkey, pkt->raddr, len, access, at));
}

static void receive_write(struct mock_qp *mqp, const struct fab_packet *pkt,
			  struct fab_response *resp)
{
	struct mock_srq *msrq = NULL;
	struct recv_wqe *w = NULL;
	struct verbs_mem dst;

	if (!remote_memory(mqp, pkt, pkt->len, IBV_ACCESS_REMOTE_WRITE, &dst)) {
		responder_error(mqp, resp, FAB_NAK_ACCESS);
		return;
	}
	if (pkt->with_imm) {
		msrq = srq_for(mqp, pkt);
		w = take_recv(mqp, msrq);
		if (!w) {
			if (mqp->qp.qp_type != IBV_QPT_UC)
				nak_rnr(mqp, resp);
			return;
		}
	}
	if (pkt->len && mem_failed(fab_mem_write(dst.pid, dst.addr, pkt->payload, pkt->len))) {
		responder_error(mqp, resp, FAB_NAK_ACCESS);
		return;
	}
	if (w)
		complete_recv(mqp, msrq, w, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, pkt->len, pkt, NULL);
	resp->ack = FAB_ACK;
}

static void receive_read(struct mock_qp *mqp, const struct fab_packet *pkt,
			 struct fab_response *resp)
{
	struct verbs_mem src;

	if (!remote_memory(mqp, pkt, pkt->len, IBV_ACCESS_REMOTE_READ, &src) ||
	    mem_failed(fab_mem_read(src.pid, src.addr, resp->read_into, pkt->len))) {
		responder_error(mqp, resp, FAB_NAK_ACCESS);
		return;
	}
	resp->ack = FAB_ACK;
}

/* The 8 bytes at raddr, changed atomically; the old value goes back. The
 * region's address and its iova share their offset in the page, so an
 * aligned raddr is an aligned pointer. In this process the change is a CPU
 * atomic; in another it is a read and a write under verbs_lock, atomic
 * against every other HCA atomic, as IBV_ATOMIC_HCA promises. */
static void receive_atomic(struct mock_qp *mqp, const struct fab_packet *pkt,
			   struct fab_response *resp)
{
	struct verbs_mem at;
	uint64_t old, new;

	if (!remote_memory(mqp, pkt, 8, IBV_ACCESS_REMOTE_ATOMIC, &at)) {
		responder_error(mqp, resp, FAB_NAK_ACCESS);
		return;
	}
	if (at.pid == mock_pid()) {
		uint64_t *target = (uint64_t *)(uintptr_t)at.addr;

		if (pkt->op == FAB_OP_FETCH_ADD) {
			old = __atomic_fetch_add(target, pkt->compare_add, __ATOMIC_SEQ_CST);
		} else {
			old = pkt->compare_add;
			__atomic_compare_exchange_n(target, &old, pkt->swap, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		}
	} else {
		if (mem_failed(fab_mem_read(at.pid, at.addr, &old, sizeof old))) {
			responder_error(mqp, resp, FAB_NAK_ACCESS);
			return;
		}
		new = pkt->op == FAB_OP_FETCH_ADD ? old + pkt->compare_add :
			old == pkt->compare_add ? pkt->swap : old;
		if (new != old && mem_failed(fab_mem_write(at.pid, at.addr, &new, sizeof new))) {
			responder_error(mqp, resp, FAB_NAK_ACCESS);
			return;
		}
	}
	resp->atomic_orig = old;
	resp->ack = FAB_ACK;
}

void verbs_qp_receive(void *owner, const struct fab_packet *pkt, struct fab_response *resp)
{
	struct mock_qp *mqp = owner;

	resp->ack = FAB_NO_ANSWER;
	if (mqp->magic != VERBS_QP_MAGIC || !same_transport(mqp, pkt) || !receiving(mqp) ||
	    !from_peer(mqp, pkt)) {
		if (mock_env_on("RDMAMOCK_TRACE"))
			mock_log("QP %u drops a packet from QP %u: magic %d transport %d receiving %d peer %d",
				 pkt->dst_qpn, pkt->src_qpn, mqp->magic == VERBS_QP_MAGIC,
				 same_transport(mqp, pkt), receiving(mqp), from_peer(mqp, pkt));
		return;
	}
	/* A QP whose process is gone (and not reaped yet) answers nothing. */
	if (!fab_owner_alive(fab_owner_of(mqp)))
		return;
	verbs_target_gone = false;
	/* A UD packet with another Q_Key is dropped, and the port counts it
	 * (IBA 10.2.5; qkey_viol_cntr, as rxe counts it). */
	if (mqp->qp.qp_type == IBV_QPT_UD && pkt->qkey != mqp->attr.qkey) {
		fab_device_count_qkey_violation(mqp->dev_serial);
		return;
	}
	switch (pkt->op) {
	case FAB_OP_SEND:
		receive_send(mqp, pkt, resp);
		break;
	case FAB_OP_WRITE:
		receive_write(mqp, pkt, resp);
		break;
	case FAB_OP_READ:
		receive_read(mqp, pkt, resp);
		break;
	case FAB_OP_CMP_SWP:
	case FAB_OP_FETCH_ADD:
		receive_atomic(mqp, pkt, resp);
		break;
	}
	if (verbs_target_gone)
		resp->ack = FAB_NO_ANSWER;
}
