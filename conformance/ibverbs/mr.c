/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_reg_mr() of memory the process may not write or read,
 * and ibv_rereg_mr(): the input checks libibverbs makes before asking the
 * provider, and changing an MR's access and translation. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

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
static void rereg(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		  int access)
{
	int ret;

	errno = 0;
	ret = ibv_rereg_mr(mr, flags, pd, addr, length, access);
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
	rereg(q.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
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
	rereg(q.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, moved, sizeof moved, 0);
	assert_ptr_equal(q.mr->addr, moved);
	assert_int_equal(q.mr->length, sizeof moved);
	fx_qp_to(&q, IBV_QPS_RTS);
	memcpy(moved, "moved!!!", 8);
	send_to_self(&q, q.mr, moved, moved + 32);
	fx_qp_release(&q);
}

/* Moved to another PD of its context: 0, mr->pd follows, and the MR now
 * holds that PD (ibv_dealloc_pd of it is EBUSY, the kernel's use count)
 * until it is moved back; then the PD goes. */
void ibv_rereg_mr__change_pd(void **state)
{
	struct ibv_pd *other;
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	other = ibv_alloc_pd(q.ctx);
	if (!other)
		fail_msg("ibv_alloc_pd: %s", strerror(errno));
	errno = 0;
	if (ibv_rereg_mr(q.mr, IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0) == IBV_REREG_MR_ERR_CMD &&
	    errno == EOPNOTSUPP) {
		char name[IBV_SYSFS_NAME_MAX];

		snprintf(name, sizeof name, "%s", ibv_get_device_name(q.ctx->device));
		FX_VERBS_OK(ibv_dealloc_pd(other));
		fx_qp_release(&q);
		RC_SKIP("capability: rereg-mr (%s: ibv_rereg_mr gives IBV_REREG_MR_ERR_CMD, EOPNOTSUPP)",
			name);
	}
	assert_ptr_equal(q.mr->pd, other);
	RC_ASSERT_ERRNO("ibv_dealloc_pd", ibv_dealloc_pd(other), EBUSY);
	rereg(q.mr, IBV_REREG_MR_CHANGE_PD, q.pd, NULL, 0, 0);
	assert_ptr_equal(q.mr->pd, q.pd);
	FX_VERBS_OK(ibv_dealloc_pd(other));
	fx_qp_release(&q);
}

/* ---------------------------------------------------------------- protection */

/* ibv_reg_mr of two fresh pages mapped with prot: NULL and its errno, or
 * 0 for an MR (deregistered at once). */
static int reg_with_prot(struct ibv_pd *pd, int prot, int access)
{
	void *p = mmap(NULL, 8192, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	int err;

	if (p == MAP_FAILED)
		fail_msg("mmap: %s", strerror(errno));
	errno = 0;
	mr = ibv_reg_mr(pd, p, 8192, access);
	err = mr ? 0 : errno;
	if (mr)
		FX_VERBS_OK(ibv_dereg_mr(mr));
	munmap(p, 8192);
	return err;
}

/* ib_umem_get pins for writing when the access lets anyone write: memory
 * mapped read-only takes a read-only registration and refuses
 * IBV_ACCESS_LOCAL_WRITE, EFAULT. */
void ibv_reg_mr__read_only_memory(void **state)
{
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	RC_ASSERT_ERRNO("ibv_reg_mr", reg_with_prot(q.pd, PROT_READ, IBV_ACCESS_LOCAL_WRITE), EFAULT);
	assert_int_equal(reg_with_prot(q.pd, PROT_READ, IBV_ACCESS_REMOTE_READ), 0);
	assert_int_equal(reg_with_prot(q.pd, PROT_READ, 0), 0);
	assert_int_equal(reg_with_prot(q.pd, PROT_READ | PROT_WRITE, IBV_ACCESS_LOCAL_WRITE), 0);
	fx_qp_release(&q);
}

/* Memory the process may not even read (a PROT_NONE reservation) cannot be
 * pinned: EFAULT, whatever the access (7.2, measured; 6.1 pinned it for a
 * read-only registration through FOLL_FORCE). */
void ibv_reg_mr__inaccessible_memory(void **state)
{
	struct fx_qp q;

	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	RC_ASSERT_ERRNO("ibv_reg_mr", reg_with_prot(q.pd, PROT_NONE, IBV_ACCESS_LOCAL_WRITE), EFAULT);
	RC_ASSERT_ERRNO("ibv_reg_mr", reg_with_prot(q.pd, PROT_NONE, 0), EFAULT);
	fx_qp_release(&q);
}
