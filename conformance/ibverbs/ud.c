/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_create_ah(), ibv_init_ah_from_wc(),
 * ibv_create_ah_from_wc(), ibv_destroy_ah(), and UD traffic through
 * ibv_post_send()/ibv_post_recv(): the 40-byte GRH, immediates, Q_Keys, the
 * path MTU; and ibv_ud_pingpong's exchange, in two threads. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "fixtures.h"
#include "qp.h"

#define QKEY 0x11111111
#define OTHER_QKEY 0x22222222
#define GRH_BYTES 40
#define RECV_AREA 8192 /* receives land here: GRH, then the payload */
#define BUF_SIZE (2 * RECV_AREA)
#define QUIET_MS 300

/* One context, a sender and a receiver UD QP in RTS, each with its own CQ,
 * an AH from the device to itself by the test address's RoCE v2 GID, or
 * on an InfiniBand port by its LID, with no GRH. */
struct ud {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *sender, *receiver;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	int gid_index;
	union ibv_gid gid;
	uint16_t lid; /* on InfiniBand: the port's, where the AH points; else 0 */
	uint8_t *buf; /* [0, RECV_AREA) receives, the rest sends */
};

static struct ibv_qp *ud_qp(struct ud *u, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp *qp;

	fx_require_qp_type(u->pd->context, IBV_QPT_UD);
	qp = ibv_create_qp(u->pd, &init);
	if (!qp)
		fail_msg("ibv_create_qp(UD): %s", strerror(errno));
	FX_VERBS_OK(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY));
	attr.qp_state = IBV_QPS_RTR;
	FX_VERBS_OK(ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0x1000;
	FX_VERBS_OK(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
	return qp;
}

static struct ibv_ah_attr ah_attr_to(const struct ud *u, const union ibv_gid *dgid, int sgid_index)
{
	if (u->lid)
		return (struct ibv_ah_attr){ .port_num = 1, .dlid = u->lid };
	return (struct ibv_ah_attr){
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = (uint8_t)sgid_index, .hop_limit = 64 },
	};
}

static void ud_open(struct ud *u)
{
	struct ibv_ah_attr attr;

	memset(u, 0, sizeof *u);
	u->ctx = fx_open_device(FX_DEV_UNDER_TEST);
	u->buf = calloc(1, BUF_SIZE);
	u->pd = ibv_alloc_pd(u->ctx);
	u->scq = ibv_create_cq(u->ctx, 16, NULL, NULL, 0);
	u->rcq = ibv_create_cq(u->ctx, 16, NULL, NULL, 0);
	if (!u->buf || !u->pd || !u->scq || !u->rcq)
		fail_msg("buffer, ibv_alloc_pd or ibv_create_cq: %s", strerror(errno));
	u->mr = ibv_reg_mr(u->pd, u->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	u->sender = ud_qp(u, u->scq);
	u->receiver = ud_qp(u, u->rcq);
	if (fx_port_ib(u->ctx, 1)) {
		struct ibv_port_attr port;

		FX_VERBS_OK(ibv_query_port(u->ctx, 1, &port));
		u->lid = port.lid;
	} else {
		u->gid_index = fx_gid_index(u->ctx, fx_addr(AF_INET), NULL);
	}
	FX_OK(ibv_query_gid(u->ctx, 1, u->gid_index, &u->gid));
	attr = ah_attr_to(u, &u->gid, u->gid_index);
	u->ah = ibv_create_ah(u->pd, &attr);
	if (!u->ah)
		fail_msg("ibv_create_ah(to %s): %s", fx_addr(AF_INET), strerror(errno));
}

static void ud_close(struct ud *u);

/* Skip a clause of RoCE's on an InfiniBand port, saying why. */
static void roce_only(struct ud *u, const char *why)
{
	if (!u->lid)
		return;
	ud_close(u);
	RC_SKIP("port 1 is InfiniBand: %s", why);
}

static void ud_close(struct ud *u)
{
	if (u->ah)
		FX_VERBS_OK(ibv_destroy_ah(u->ah));
	FX_VERBS_OK(ibv_destroy_qp(u->sender));
	FX_VERBS_OK(ibv_destroy_qp(u->receiver));
	FX_VERBS_OK(ibv_dereg_mr(u->mr));
	FX_VERBS_OK(ibv_destroy_cq(u->scq));
	FX_VERBS_OK(ibv_destroy_cq(u->rcq));
	FX_VERBS_OK(ibv_dealloc_pd(u->pd));
	FX_VERBS_OK(ibv_close_device(u->ctx));
	free(u->buf);
}

/* One receive over the whole receive area, on qp. */
static void post_recv(struct ud *u, struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)u->buf, .length = RECV_AREA, .lkey = u->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(u->buf, 0, RECV_AREA);
	FX_VERBS_OK(ibv_post_recv(qp, &wr, &bad));
}

/* len bytes of `pattern, pattern+1, ...` from the sender to qpn through
 * ah, waited for at the sender: its completion's status. */
struct send {
	struct ibv_ah *ah;
	uint32_t qpn, qkey, len;
	uint8_t pattern;
	bool with_imm;
	uint32_t imm; /* host order */
};

static enum ibv_wc_status send_from(struct ud *u, struct ibv_qp *qp, struct ibv_cq *cq,
				    const struct send *s)
{
	uint8_t *out = u->buf + RECV_AREA;
	struct ibv_sge sge = { .addr = (uintptr_t)out, .length = s->len, .lkey = u->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.opcode = s->with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.imm_data = htonl(s->imm),
		.wr.ud = { .ah = s->ah ? s->ah : u->ah, .remote_qpn = s->qpn, .remote_qkey = s->qkey },
	}, *bad;
	struct ibv_wc wc;

	for (uint32_t i = 0; i < s->len; i++)
		out[i] = (uint8_t)(s->pattern + i);
	FX_VERBS_OK(ibv_post_send(qp, &wr, &bad));
	fx_poll_one(cq, &wc);
	return wc.status;
}

static void send_ok(struct ud *u, const struct send *s)
{
	enum ibv_wc_status status = send_from(u, u->sender, u->scq, s);

	if (status != IBV_WC_SUCCESS)
		fail_msg("the UD send completed with %s", ibv_wc_status_str(status));
}

/* The receiver's completion for a message of len bytes of pattern. */
static void expect_received(struct ud *u, struct ibv_wc *wc, uint32_t len, uint8_t pattern)
{
	fx_poll_one(u->rcq, wc);
	if (wc->status != IBV_WC_SUCCESS)
		fail_msg("the receive completed with %s", ibv_wc_status_str(wc->status));
	assert_int_equal(wc->byte_len, GRH_BYTES + len);
	for (uint32_t i = 0; i < len; i++)
		if (u->buf[GRH_BYTES + i] != (uint8_t)(pattern + i))
			fail_msg("payload byte %u is 0x%02x, not 0x%02x", i, u->buf[GRH_BYTES + i],
				 (uint8_t)(pattern + i));
}

/* A completion stays until polled: none after ms is none within it. */
static bool cq_quiet(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;

	rc_sleep_ms(ms);
	return ibv_poll_cq(cq, 1, &wc) == 0;
}

static uint32_t qkey_violations(struct ibv_context *ctx)
{
	struct ibv_port_attr port;

	FX_VERBS_OK(ibv_query_port(ctx, 1, &port));
	return port.qkey_viol_cntr;
}

/* ---------------------------------------------------------------- ibv_create_ah */

static void create_ah_fails(struct ibv_ah_attr *attr, int expected)
{
	struct ud u;
	struct ibv_ah *ah;

	ud_open(&u);
	attr->grh.dgid = u.gid;
	errno = 0;
	ah = ibv_create_ah(u.pd, attr);
	if (ah) {
		ibv_destroy_ah(ah);
		fail_msg("ibv_create_ah succeeded; expected %s", strerror(expected));
	}
	RC_ASSERT_ERRNO("ibv_create_ah", errno, expected);
	ud_close(&u);
}

void ibv_create_ah__no_grh(void **state)
{
	struct ibv_ah_attr attr = { .port_num = 1, .dlid = 1 };
	struct ud u;

	ud_open(&u);
	roce_only(&u, "an AH without a GRH is a LID path there (IB_UD_LID)");
	ud_close(&u);

	create_ah_fails(&attr, EINVAL);
}

void ibv_create_ah__port_zero(void **state)
{
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 0, .grh.hop_limit = 64 };
	struct ud u;

	ud_open(&u);
	attr.grh.sgid_index = (uint8_t)u.gid_index;
	ud_close(&u);
	create_ah_fails(&attr, EINVAL);
}

void ibv_create_ah__past_last_port(void **state)
{
	struct ibv_ah_attr attr = { .is_global = 1, .grh.hop_limit = 64 };
	struct ibv_device_attr dev;
	struct ud u;

	ud_open(&u);
	FX_VERBS_OK(ibv_query_device(u.ctx, &dev));
	attr.port_num = dev.phys_port_cnt + 1;
	attr.grh.sgid_index = (uint8_t)u.gid_index;
	ud_close(&u);
	create_ah_fails(&attr, EINVAL);
}

/* The first index an AH can name (sgid_index is 8 bits) whose entry is
 * empty (prefix NULL), or holds a RoCE v2 GID beginning with len bytes of
 * prefix; -1 if none. */
static int gid_index_where(struct ibv_context *ctx, const uint8_t *prefix, size_t len)
{
	for (int i = 0; i < 256; i++) {
		struct ibv_gid_entry e;
		int ret = ibv_query_gid_ex(ctx, 1, i, &e, 0);

		if (!prefix ? ret == ENODATA :
			      !ret && e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(e.gid.raw, prefix, len))
			return i;
	}
	return -1;
}

/* An AH from the entry gid_index_where finds to dgid must fail with
 * `expected`; `what` names the entry wanted. */
static void create_ah_from_entry(const uint8_t *prefix, size_t len, const union ibv_gid *dgid,
				 const char *what, int expected)
{
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1, .grh.hop_limit = 64 };
	struct ibv_ah *ah;
	struct ud u;
	int index;

	ud_open(&u);
	if (prefix)
		roce_only(&u, "its one GID is of type IB, not RoCE v2");
	index = gid_index_where(u.ctx, prefix, len);
	if (index < 0) {
		ud_close(&u);
		fail_msg("no %s in GID entries 0-255", what);
	}
	attr.grh.sgid_index = (uint8_t)index;
	attr.grh.dgid = dgid ? *dgid : u.gid;
	errno = 0;
	ah = ibv_create_ah(u.pd, &attr);
	if (ah) {
		ibv_destroy_ah(ah);
		fail_msg("ibv_create_ah from the %s (entry %d) succeeded", what, index);
	}
	RC_ASSERT_ERRNO("ibv_create_ah", errno, expected);
	ud_close(&u);
}

void ibv_create_ah__empty_sgid(void **state)
{
	create_ah_from_entry(NULL, 0, NULL, "empty entry", ENODATA);
}

/* The link-local RoCE v2 GID (an IPv6 address) as the source of an AH to
 * an IPv4 destination. */
void ibv_create_ah__family_mismatch(void **state)
{
	static const uint8_t link_local[] = { 0xfe, 0x80 };

	create_ah_from_entry(link_local, sizeof link_local, NULL, "link-local RoCE v2 GID", EINVAL);
}

/* An address on the device's subnet that nobody answers: the source is the
 * device's own IPv4 GID on that subnet (the first three bytes agree, as
 * the /24 the fixtures use). */
void ibv_create_ah__unanswered(void **state)
{
	const char *addr = fx_unanswered_addr();
	union ibv_gid dgid = { .raw = { [10] = 0xff, [11] = 0xff } };

	assert_int_equal(inet_pton(AF_INET, addr, &dgid.raw[12]), 1);
	create_ah_from_entry(dgid.raw, 15, &dgid, "RoCE v2 GID on the unanswered address's subnet",
			     ETIMEDOUT);
}

/* ---------------------------------------------------------------- UD data */

void ibv_post_recv__ud_grh(void **state)
{
	struct in_addr local;
	struct ibv_wc wc;
	struct iphdr ip;
	struct ud u;

	ud_open(&u);
	roce_only(&u, "a message within the subnet has no GRH (IB_UD_LID)");
	assert_int_equal(inet_pton(AF_INET, fx_addr(AF_INET), &local), 1);
	post_recv(&u, u.receiver, 1);
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = QKEY, .len = 16, .pattern = 0xa0 });
	expect_received(&u, &wc, 16, 0xa0);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_true(wc.wc_flags & IBV_WC_GRH);
	assert_false(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(wc.qp_num, u.receiver->qp_num);
	assert_int_equal(wc.src_qp, u.sender->qp_num);
	assert_int_equal(wc.pkey_index, 0);
	/* RoCE v2 over IPv4: the IPv4 header in the GRH's last 20 bytes. */
	memcpy(&ip, u.buf + 20, sizeof ip);
	assert_int_equal(ip.version, 4);
	assert_int_equal(ip.ihl, 5);
	assert_int_equal(ip.protocol, IPPROTO_UDP);
	assert_int_equal(ip.ttl, 64);
	assert_int_equal(ip.saddr, local.s_addr);
	assert_int_equal(ip.daddr, local.s_addr);
	assert_int_equal(ntohs(ip.tot_len), 20 + 8 + 12 + 8 + 16 + 4); /* IP UDP BTH DETH payload ICRC */
	ud_close(&u);
}

/* UCX's UD transports compare the GRH's destination GID with their own,
 * reading its length (4 bytes for IPv4, else 16) from this field. */
void ibv_poll_cq__ud_roce_packet_type(void **state)
{
	struct ibv_wc wc;
	struct ud u;

	RC_REQUIRE_CAPABILITY("mlx5dv");
	ud_open(&u);
	roce_only(&u, "no RoCE packet type to report");
	if (!mlx5dv_is_supported(u.ctx->device)) {
		ud_close(&u);
		RC_SKIP("capability: mlx5dv (the device under test is %s)", ibv_get_device_name(u.ctx->device));
	}
	post_recv(&u, u.receiver, 1);
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = QKEY, .len = 16, .pattern = 0xa0 });
	expect_received(&u, &wc, 16, 0xa0);
	assert_int_equal(wc.sl, 0x8 | 0x2); /* a UDP header; IPv4 */
	ud_close(&u);
}

void ibv_poll_cq__ud_with_imm(void **state)
{
	struct ibv_wc wc;
	struct ud u;

	ud_open(&u);
	post_recv(&u, u.receiver, 2);
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = QKEY, .len = 16, .pattern = 0xa0,
				    .with_imm = true, .imm = 0x12345678 });
	expect_received(&u, &wc, 16, 0xa0);
	assert_int_equal(wc.wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM),
			 (u.lid ? 0 : IBV_WC_GRH) | IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0x12345678);
	ud_close(&u);
}

/* A mismatched Q_Key first, then the right one: the one receive posted
 * takes the second message, and the port counted one violation. */
void ibv_post_send__ud_qkey_mismatch(void **state)
{
	uint32_t before;
	struct ibv_wc wc;
	struct ud u;

	ud_open(&u);
	before = qkey_violations(u.ctx);
	post_recv(&u, u.receiver, 3);
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = OTHER_QKEY, .len = 16, .pattern = 0xa0 });
	assert_true(cq_quiet(u.rcq, QUIET_MS));
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = QKEY, .len = 16, .pattern = 0xb0 });
	expect_received(&u, &wc, 16, 0xb0);
	assert_int_equal(qkey_violations(u.ctx), before + 1);
	ud_close(&u);
}

void ibv_post_send__ud_controlled_qkey(void **state)
{
	struct ibv_wc wc;
	struct ud u;

	ud_open(&u);
	post_recv(&u, u.receiver, 4);
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = 0x80000000, .len = 16, .pattern = 0xa0 });
	fx_poll_one(u.rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, GRH_BYTES + 16);
	ud_close(&u);
}

/* One byte over the MTU first: it never arrives; the MTU-sized message
 * after it takes the receive. */
void ibv_post_send__ud_mtu(void **state)
{
	struct ibv_port_attr port;
	struct ibv_wc wc;
	uint32_t mtu;
	struct ud u;

	ud_open(&u);
	FX_VERBS_OK(ibv_query_port(u.ctx, 1, &port));
	mtu = 128u << port.active_mtu;
	if (GRH_BYTES + mtu + 1 > RECV_AREA)
		fail_msg("active MTU %u is larger than the test's buffer", mtu);
	post_recv(&u, u.receiver, 5);
	send_from(&u, u.sender, u.scq, &(struct send){ .qpn = u.receiver->qp_num, .qkey = QKEY,
						      .len = mtu + 1, .pattern = 0xa0 });
	assert_true(cq_quiet(u.rcq, QUIET_MS));
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = QKEY, .len = mtu, .pattern = 0xb0 });
	expect_received(&u, &wc, mtu, 0xb0);
	ud_close(&u);
}

/* ---------------------------------------------------------------- AHs from completions */

static void receive_one(struct ud *u, struct ibv_wc *wc)
{
	post_recv(u, u->receiver, 6);
	send_ok(u, &(struct send){ .qpn = u->receiver->qp_num, .qkey = QKEY, .len = 16, .pattern = 0xa0 });
	expect_received(u, wc, 16, 0xa0);
}

void ibv_init_ah_from_wc__reply(void **state)
{
	struct ibv_ah_attr attr;
	struct ibv_wc wc;
	struct ud u;

	ud_open(&u);
	receive_one(&u, &wc);
	memset(&attr, 0xab, sizeof attr);
	FX_OK(ibv_init_ah_from_wc(u.ctx, 1, &wc, (struct ibv_grh *)u.buf, &attr));
	assert_int_equal(attr.port_num, 1);
	if (u.lid) {
		/* No GRH within the subnet: the sender's LID alone. */
		assert_int_equal(attr.is_global, 0);
		assert_int_equal(attr.dlid, u.lid);
		ud_close(&u);
		return;
	}
	assert_int_equal(attr.is_global, 1);
	assert_memory_equal(&attr.grh.dgid, &u.gid, sizeof u.gid);
	assert_int_equal(attr.grh.sgid_index, u.gid_index);
	assert_int_equal(attr.grh.hop_limit, 64);
	assert_int_equal(attr.dlid, 0);
	ud_close(&u);
}

/* An AH made from a receive's completion and GRH sends the reply back to
 * the sender's QP. */
void ibv_create_ah_from_wc__reply(void **state)
{
	struct ibv_wc wc, back;
	struct ibv_ah *ah;
	struct ud u;

	ud_open(&u);
	receive_one(&u, &wc);
	ah = ibv_create_ah_from_wc(u.pd, &wc, (struct ibv_grh *)u.buf, 1);
	if (!ah)
		fail_msg("ibv_create_ah_from_wc: %s", strerror(errno));
	post_recv(&u, u.sender, 7);
	assert_int_equal(send_from(&u, u.receiver, u.rcq, &(struct send){ .ah = ah, .qpn = wc.src_qp,
		.qkey = QKEY, .len = 16, .pattern = 0xc0 }), IBV_WC_SUCCESS);
	fx_poll_one(u.scq, &back);
	assert_int_equal(back.status, IBV_WC_SUCCESS);
	assert_int_equal(back.opcode, IBV_WC_RECV);
	assert_int_equal(back.src_qp, u.receiver->qp_num);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	ud_close(&u);
}

/* An AH holds its PD: ibv_dealloc_pd refuses the PD while the AH lives
 * and frees it once ibv_destroy_ah returned 0. */
void ibv_destroy_ah__releases_pd(void **state)
{
	struct ibv_ah_attr attr;
	struct ibv_ah *ah;
	struct ibv_pd *pd;
	struct ud u;

	ud_open(&u);
	pd = ibv_alloc_pd(u.ctx);
	if (!pd)
		fail_msg("ibv_alloc_pd: %s", strerror(errno));
	attr = ah_attr_to(&u, &u.gid, u.gid_index);
	ah = ibv_create_ah(pd, &attr);
	if (!ah)
		fail_msg("ibv_create_ah: %s", strerror(errno));
	RC_ASSERT_ERRNO("ibv_dealloc_pd", ibv_dealloc_pd(pd), EBUSY);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	FX_VERBS_OK(ibv_dealloc_pd(pd));
	ud_close(&u);
}

void ibv_init_ah_from_wc__no_grh_flag(void **state)
{
	struct ibv_ah_attr attr;
	struct ibv_wc wc;
	struct ud u;

	ud_open(&u);
	receive_one(&u, &wc);
	wc.wc_flags &= ~IBV_WC_GRH;
	FX_OK(ibv_init_ah_from_wc(u.ctx, 1, &wc, (struct ibv_grh *)u.buf, &attr));
	assert_int_equal(attr.is_global, 0);
	assert_int_equal(attr.port_num, 1);
	ud_close(&u);
}

void ibv_init_ah_from_wc__zero_grh(void **state)
{
	struct ibv_ah_attr attr;
	struct ibv_grh grh;
	struct ibv_wc wc;
	struct ud u;

	ud_open(&u);
	roce_only(&u, "a completion without a GRH takes no GID from it (IB_UD_LID)");
	receive_one(&u, &wc);
	memset(&grh, 0, sizeof grh);
	errno = 0;
	assert_int_equal(ibv_init_ah_from_wc(u.ctx, 1, &wc, &grh, &attr), -1);
	RC_ASSERT_ERRNO("ibv_init_ah_from_wc", errno, EPROTONOSUPPORT);
	ud_close(&u);
}

void ibv_init_ah_from_wc__past_last_port(void **state)
{
	struct ibv_device_attr dev;
	struct ibv_ah_attr attr;
	struct ibv_wc wc;
	struct ud u;

	ud_open(&u);
	roce_only(&u, "a completion without a GRH needs no port's GID table (IB_UD_LID)");
	receive_one(&u, &wc);
	FX_VERBS_OK(ibv_query_device(u.ctx, &dev));
	errno = 0;
	assert_int_equal(ibv_init_ah_from_wc(u.ctx, dev.phys_port_cnt + 1, &wc,
					     (struct ibv_grh *)u.buf, &attr), -1);
	RC_ASSERT_ERRNO("ibv_init_ah_from_wc", errno, EINVAL);
	ud_close(&u);
}

/* A GRH as a RoCE packet from peer to dgid would carry it: IPv6 form,
 * next header next_hdr, traffic class 0x28, flow label 0x12345, hop limit 7. */
static void grh_v6(struct ibv_grh *grh, uint8_t next_hdr, const union ibv_gid *peer,
		   const union ibv_gid *dgid)
{
	memset(grh, 0, sizeof *grh);
	grh->version_tclass_flow = htonl(6u << 28 | 0x28u << 20 | 0x12345u);
	grh->next_hdr = next_hdr;
	grh->hop_limit = 7;
	grh->sgid = *peer;
	grh->dgid = *dgid;
}

static int from_grh(struct ibv_context *ctx, struct ibv_grh *grh, struct ibv_ah_attr *ah)
{
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH };

	errno = 0;
	return ibv_init_ah_from_wc(ctx, 1, &wc, grh, ah);
}

/* The GRH decides the reply's address without a packet: an IPv6-form GRH
 * with next header UDP is RoCE v2 (the sender's GID, the receiver's v2
 * entry, hop limit, class and flow label from the header); next header
 * 0x1b is RoCE v1, found only where the table has a v1 entry (mlx5: yes;
 * rxe: none, EINVAL); another next header is EPROTONOSUPPORT; a multicast
 * destination, IPv6 or IPv4, is in no table: EINVAL. */
void ibv_init_ah_from_wc__grh_kinds(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	union ibv_gid own, peer = { .raw = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 7 } };
	union ibv_gid group = { .raw = { 0xff, 0x0e, [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 } };
	int v2, v1 = -1, len;
	struct ibv_ah_attr ah;
	struct ibv_port_attr port;
	struct ibv_grh grh;
	struct iphdr *ip4 = (struct iphdr *)((char *)&grh + 20);

	if (fx_port_ib(ctx, 1)) {
		FX_VERBS_OK(ibv_close_device(ctx));
		RC_SKIP("port 1 is InfiniBand: its GRH is not a RoCE header");
	}
	v2 = fx_gid_index(ctx, fx_addr(AF_INET), &own);
	FX_VERBS_OK(ibv_query_port(ctx, 1, &port));
	len = port.gid_tbl_len;
	for (int i = 0; i < len && v1 < 0; i++) {
		struct ibv_gid_entry e;

		if (!ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0) && e.gid_type == IBV_GID_TYPE_ROCE_V1 &&
		    !memcmp(&e.gid, &own, sizeof own))
			v1 = i;
	}

	grh_v6(&grh, IPPROTO_UDP, &peer, &own);
	assert_int_equal(from_grh(ctx, &grh, &ah), 0);
	assert_int_equal(ah.is_global, 1);
	assert_int_equal(ah.port_num, 1);
	assert_memory_equal(&ah.grh.dgid, &peer, sizeof peer);
	assert_int_equal(ah.grh.sgid_index, v2);
	assert_int_equal(ah.grh.hop_limit, 7);
	assert_int_equal(ah.grh.traffic_class, 0x28);
	assert_int_equal(ah.grh.flow_label, 0x12345);

	grh_v6(&grh, 0x1b, &peer, &own);
	if (v1 >= 0) {
		assert_int_equal(from_grh(ctx, &grh, &ah), 0);
		assert_int_equal(ah.grh.sgid_index, v1);
	} else {
		assert_int_equal(from_grh(ctx, &grh, &ah), -1);
		RC_ASSERT_ERRNO("ibv_init_ah_from_wc", errno, EINVAL);
	}

	grh_v6(&grh, IPPROTO_TCP, &peer, &own);
	assert_int_equal(from_grh(ctx, &grh, &ah), -1);
	RC_ASSERT_ERRNO("ibv_init_ah_from_wc", errno, EPROTONOSUPPORT);

	grh_v6(&grh, IPPROTO_UDP, &peer, &group);
	assert_int_equal(from_grh(ctx, &grh, &ah), -1);
	RC_ASSERT_ERRNO("ibv_init_ah_from_wc", errno, EINVAL);

	/* RoCE v2 over IPv4: the header in the GRH's last 20 bytes. */
	memset(&grh, 0, sizeof grh);
	ip4->version = 4;
	ip4->ihl = 5;
	ip4->ttl = 9;
	ip4->protocol = IPPROTO_UDP;
	ip4->saddr = htonl(0xc0000207);
	ip4->daddr = htonl(0xe0000005); /* 224.0.0.5 */
	assert_int_equal(from_grh(ctx, &grh, &ah), -1);
	RC_ASSERT_ERRNO("ibv_init_ah_from_wc", errno, EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ---------------------------------------------------------------- multicast attachments */

/* ff0e::ffff:239.1.2.3, the GID of an IPv4 group as the kernel forms it. */
static union ibv_gid group_gid(void)
{
	union ibv_gid gid = { .raw = { 0xff, 0x0e, [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 } };

	return gid;
}

void ibv_destroy_qp__attached_to_group(void **state)
{
	union ibv_gid gid = group_gid();
	struct ud u;

	ud_open(&u);
	FX_VERBS_OK(ibv_attach_mcast(u.receiver, &gid, 0));
	RC_ASSERT_ERRNO("ibv_destroy_qp", ibv_destroy_qp(u.receiver), EBUSY);
	FX_VERBS_OK(ibv_detach_mcast(u.receiver, &gid, 0));
	ud_close(&u);
}

void ibv_attach_mcast__not_multicast(void **state)
{
	struct ud u;

	ud_open(&u);
	RC_ASSERT_ERRNO("ibv_attach_mcast", ibv_attach_mcast(u.receiver, &u.gid, 0), EINVAL);
	ud_close(&u);
}

/* ---------------------------------------------------------------- ibv_ud_pingpong */

#define PINGPONG_ITERS 100
#define PINGPONG_SIZE 64
#define PP_RECV 0                          /* GRH, then the payload */
#define PP_SEND (GRH_BYTES + PINGPONG_SIZE) /* the payload we send */

/* What the example exchanges over TCP: QP number and GID. */
struct pp_dest {
	uint32_t qpn;
	union ibv_gid gid;
};

struct pp_side {
	bool server;
	struct ibv_ah_attr path; /* to port 1 (fx_ah_to_self): both sides are on it */
	struct pp_dest *mine, *theirs;
	pthread_barrier_t *exchanged;
	char error[200]; /* empty when the side finished */
};

struct pp_res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t buf[PP_SEND + PINGPONG_SIZE];
};

static bool pp_fail(struct pp_side *s, const char *what, int err)
{
	snprintf(s->error, sizeof s->error, "%s: %s: %s", s->server ? "server" : "client", what,
		 strerror(err));
	return false;
}

/* The device the fixtures would open: RDMACHECK_DEVICE, or the first. */
static struct ibv_context *pp_open(void)
{
	const char *want = getenv("RDMACHECK_DEVICE");
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!want || !*want || !strcmp(ibv_get_device_name(list[i]), want))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static bool pp_post_recv(struct pp_side *s, struct pp_res *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf + PP_RECV, .length = GRH_BYTES + PINGPONG_SIZE,
			       .lkey = r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(r->qp, &wr, &bad);

	return ret ? pp_fail(s, "ibv_post_recv", ret) : true;
}

static bool pp_send(struct pp_side *s, struct pp_res *r, uint32_t seq)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf + PP_SEND, .length = PINGPONG_SIZE,
			       .lkey = r->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = r->ah, .remote_qpn = s->theirs->qpn, .remote_qkey = QKEY } },
			   *bad;
	int ret;

	memcpy(r->buf + PP_SEND, &seq, sizeof seq);
	ret = ibv_post_send(r->qp, &wr, &bad);
	return ret ? pp_fail(s, "ibv_post_send", ret) : true;
}

static bool pp_poll(struct pp_side *s, struct pp_res *r, struct ibv_wc *wc)
{
	uint64_t start = 0;

	do {
		int n = ibv_poll_cq(r->cq, 1, wc);

		if (n < 0)
			return pp_fail(s, "ibv_poll_cq", EIO);
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS)
				return pp_fail(s, ibv_wc_status_str(wc->status), EIO);
			return true;
		}
	} while (fx_pause(&start, 5000));
	return pp_fail(s, "waiting for a completion", ETIMEDOUT);
}

static bool pp_setup(struct pp_side *s, struct pp_res *r)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	int ret;

	if (!(r->ctx = pp_open()))
		return pp_fail(s, "ibv_open_device", errno);
	if (!(r->pd = ibv_alloc_pd(r->ctx)) || !(r->cq = ibv_create_cq(r->ctx, 16, NULL, NULL, 0)))
		return pp_fail(s, "ibv_alloc_pd/ibv_create_cq", errno);
	if (!(r->mr = ibv_reg_mr(r->pd, r->buf, sizeof r->buf, IBV_ACCESS_LOCAL_WRITE)))
		return pp_fail(s, "ibv_reg_mr", errno);
	init.send_cq = init.recv_cq = r->cq;
	if (!(r->qp = ibv_create_qp(r->pd, &init)))
		return pp_fail(s, "ibv_create_qp", errno);
	if ((ret = ibv_modify_qp(r->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)))
		return pp_fail(s, "ibv_modify_qp(INIT)", ret);
	attr.qp_state = IBV_QPS_RTR;
	if ((ret = ibv_modify_qp(r->qp, &attr, IBV_QP_STATE)))
		return pp_fail(s, "ibv_modify_qp(RTR)", ret);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = s->server ? 0x200 : 0x100;
	if ((ret = ibv_modify_qp(r->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN)))
		return pp_fail(s, "ibv_modify_qp(RTS)", ret);
	s->mine->qpn = r->qp->qp_num;
	s->mine->gid = s->path.grh.dgid;
	/* A receive is up before the other side learns where to send. */
	return pp_post_recv(s, r);
}

static void pp_release(struct pp_res *r)
{
	if (r->ah)
		ibv_destroy_ah(r->ah);
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->ctx)
		ibv_close_device(r->ctx);
}

/* Count sends and receives as the example does: the client pings first;
 * each side answers every message it receives with the next one, and each
 * receive must carry the sequence number expected, from the other QP. */
static bool pp_loop(struct pp_side *s, struct pp_res *r)
{
	uint32_t received = 0, sent = 0, got;
	struct ibv_wc wc;

	if (!s->server && !pp_send(s, r, 0))
		return false;
	while (received < PINGPONG_ITERS || sent < PINGPONG_ITERS) {
		if (!pp_poll(s, r, &wc))
			return false;
		if (wc.opcode == IBV_WC_SEND) {
			sent++;
			continue;
		}
		memcpy(&got, r->buf + PP_RECV + GRH_BYTES, sizeof got);
		if (wc.src_qp != s->theirs->qpn || got != received ||
		    wc.byte_len != GRH_BYTES + PINGPONG_SIZE ||
		    !(wc.wc_flags & IBV_WC_GRH) != !s->path.is_global) {
			snprintf(s->error, sizeof s->error,
				 "%s: receive %u: from QP %u, sequence %u, %u bytes, wc_flags 0x%x",
				 s->server ? "server" : "client", received, wc.src_qp, got, wc.byte_len,
				 wc.wc_flags);
			return false;
		}
		received++;
		if (received < PINGPONG_ITERS && !pp_post_recv(s, r))
			return false;
		/* The server echoes every message; the client sends the next. */
		if (s->server ? !pp_send(s, r, received - 1) :
				received < PINGPONG_ITERS && !pp_send(s, r, received))
			return false;
	}
	return true;
}

/* One side of ibv_ud_pingpong: set up, swap destinations (the barrier is
 * the example's TCP exchange), then the loop. */
static void *pp_run(void *arg)
{
	struct pp_side *s = arg;
	struct pp_res r = { 0 };
	bool ok = pp_setup(s, &r);

	pthread_barrier_wait(s->exchanged);
	if (ok) {
		/* The example's AH: hop_limit 1, the -g GID index as source
		 * (on InfiniBand, as without -g: the LID). */
		struct ibv_ah_attr attr = s->path;

		if (attr.is_global)
			attr.grh.dgid = s->theirs->gid;

		if (!(r.ah = ibv_create_ah(r.pd, &attr)))
			ok = pp_fail(s, "ibv_create_ah", errno);
	}
	if (ok)
		pp_loop(s, &r);
	pp_release(&r);
	return NULL;
}

void ibv_post_send__ud_pingpong_two_threads(void **state)
{
	struct pp_dest server_dest = { 0 }, client_dest = { 0 };
	struct pp_side server = { .server = true, .mine = &server_dest, .theirs = &client_dest },
		       client = { .server = false, .mine = &client_dest, .theirs = &server_dest };
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	pthread_barrier_t exchanged;
	pthread_t threads[2];

	fx_ah_to_self(ctx, 1, &server.path);
	client.path = server.path;
	FX_VERBS_OK(ibv_close_device(ctx));
	pthread_barrier_init(&exchanged, NULL, 2);
	server.exchanged = client.exchanged = &exchanged;
	if (pthread_create(&threads[0], NULL, pp_run, &server) ||
	    pthread_create(&threads[1], NULL, pp_run, &client))
		fail_msg("pthread_create failed");
	pthread_join(threads[0], NULL);
	pthread_join(threads[1], NULL);
	pthread_barrier_destroy(&exchanged);
	if (server.error[0] || client.error[0])
		fail_msg("%s%s%s", server.error, server.error[0] && client.error[0] ? "; " : "", client.error);
	assert_int_not_equal(server_dest.qpn, client_dest.qpn);
}

/* In a child: a UD message to a receiver in ERR, which drops it, with
 * RDMAMOCK_TRACE set to arg. */
static void send_to_err_qp(void *trace)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ud u;

	setenv("RDMAMOCK_TRACE", trace, 1);
	ud_open(&u);
	FX_VERBS_OK(ibv_modify_qp(u.receiver, &err, IBV_QP_STATE));
	send_ok(&u, &(struct send){ .qpn = u.receiver->qp_num, .qkey = QKEY, .len = 16, .pattern = 1 });
	ud_close(&u);
}

/* RDMAMOCK_TRACE=1 says why a QP drops a packet; 0 and empty are off. */
void rdmamock_trace__switch(void **state)
{
	const char *const values[] = { "1", "0", "" };

	rc_require_mock("RDMAMOCK_TRACE is the mock's");
	fx_require_backend();
	for (int i = 0; i < 3; i++) {
		struct rc_crash end;
		bool said;

		rc_run_child(send_to_err_qp, (void *)values[i], &end);
		if (end.signal || end.exit_code)
			fail_msg("RDMAMOCK_TRACE=%s: the child ended with signal %d, exit code %d: %s", values[i],
				 end.signal, end.exit_code, end.stderr_text);
		said = strstr(end.stderr_text, "drops a packet") != NULL;
		if (said != (i == 0))
			fail_msg("RDMAMOCK_TRACE=\"%s\": the drop was %ssaid: %s", values[i], said ? "" : "not ",
				 end.stderr_text);
	}
}
