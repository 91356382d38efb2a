/* API covered: ibv_rereg_mr(): the input checks libibverbs makes before
 * asking the provider, and changing an MR's access and translation. */
#include <errno.h>
#include <string.h>

#include "fixtures.h"
#include "qp.h"

static void rereg_input_error(struct ibv_mr *mr, int flags, void *addr, size_t length, int access,
			      const char *what)
{
	int ret;

	errno = 0;
	ret = ibv_rereg_mr(mr, flags, NULL, addr, length, access);
	if (ret != IBV_REREG_MR_ERR_INPUT || errno != EINVAL)
		fail_msg("ibv_rereg_mr with %s: %d, errno %d (%s); expected IBV_REREG_MR_ERR_INPUT, EINVAL",
			 what, ret, errno, strerror(errno));
}

/* A message from src to dst (8 bytes, both through the lkey of mr) on the
 * QP connected to itself; both completions must succeed. */
static void send_to_self(struct fx_qp *q, struct ibv_mr *mr, char *src, char *dst)
{
	struct ibv_sge ssge = { .addr = (uintptr_t)src, .length = 8, .lkey = mr->lkey };
	struct ibv_sge rsge = { .addr = (uintptr_t)dst, .length = 8, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;

	FX_VERBS_OK(ibv_post_recv(q->qp, &rwr, &rbad));
	FX_VERBS_OK(ibv_post_send(q->qp, &swr, &sbad));
	for (int i = 0; i < 2; i++) {
		fx_poll_one(q->cq, &wc);
		if (wc.status != IBV_WC_SUCCESS)
			fail_msg("wr_id %llu completed with %s", (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status));
	}
	assert_memory_equal(dst, src, 8);
}

void ibv_rereg_mr__input_errors(void **state)
{
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	rereg_input_error(q.mr, 1 << 20, NULL, 0, 0, "an unknown flag");
	rereg_input_error(q.mr, IBV_REREG_MR_CHANGE_TRANSLATION, q.buf, 0, 0,
			  "IBV_REREG_MR_CHANGE_TRANSLATION and length 0");
	rereg_input_error(q.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, sizeof q.buf, 0,
			  "IBV_REREG_MR_CHANGE_TRANSLATION and addr NULL");
	rereg_input_error(q.mr, IBV_REREG_MR_CHANGE_PD, NULL, 0, IBV_ACCESS_REMOTE_WRITE,
			  "access flags without IBV_REREG_MR_CHANGE_ACCESS");
	/* The old MR is valid: a message goes through it. */
	fx_qp_to(&q, IBV_QPS_RTS);
	memcpy(q.buf, "still ok", 8);
	send_to_self(&q, q.mr, q.buf, q.buf + 32);
	fx_qp_release(&q);
}

/* 0, or the test skips when the provider has no rereg_mr: libibverbs'
 * fallback fails the command with EOPNOTSUPP (rxe). */
static void rereg(struct ibv_mr *mr, int flags, void *addr, size_t length, int access)
{
	int ret;

	errno = 0;
	ret = ibv_rereg_mr(mr, flags, NULL, addr, length, access);
	if (ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP)
		RC_SKIP("capability: rereg-mr (%s: ibv_rereg_mr gives IBV_REREG_MR_ERR_CMD, EOPNOTSUPP)",
			ibv_get_device_name(mr->context->device));
	if (ret)
		fail_msg("ibv_rereg_mr(flags 0x%x): %d, errno %d (%s)", flags, ret, errno, strerror(errno));
}

void ibv_rereg_mr__change_access(void **state)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	rereg(q.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
	      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	fx_qp_to(&q, IBV_QPS_RTS);
	memcpy(q.buf, "writable", 8);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)q.buf + 32;
	wr.wr.rdma.rkey = q.mr->rkey;
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	fx_poll_one(q.cq, &wc);
	if (wc.status != IBV_WC_SUCCESS)
		fail_msg("RDMA WRITE through the re-registered rkey: %s", ibv_wc_status_str(wc.status));
	assert_memory_equal(q.buf + 32, "writable", 8);
	fx_qp_release(&q);
}

void ibv_rereg_mr__change_translation(void **state)
{
	static char moved[64];
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	rereg(q.mr, IBV_REREG_MR_CHANGE_TRANSLATION, moved, sizeof moved, 0);
	assert_ptr_equal(q.mr->addr, moved);
	assert_int_equal(q.mr->length, sizeof moved);
	fx_qp_to(&q, IBV_QPS_RTS);
	memcpy(moved, "moved!!!", 8);
	send_to_self(&q, q.mr, moved, moved + 32);
	fx_qp_release(&q);
}
