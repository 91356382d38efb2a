/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: device memory. ibv_alloc_dm(), ibv_free_dm(),
 * ibv_memcpy_to_dm(), ibv_memcpy_from_dm(), ibv_reg_dm_mr() and work
 * requests through such an MR; mlx5dv_alloc_dm() and mlx5dv_init_obj() of
 * a DM. A device without device memory (max_dm_size 0) refuses it. */
#include <errno.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "fixtures.h"
#include "qp.h"

#define DM_LEN 4096

static uint64_t max_dm_size(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;

	FX_VERBS_OK(ibv_query_device_ex(ctx, NULL, &attr));
	return attr.max_dm_size;
}

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, size_t length)
{
	struct ibv_alloc_dm_attr attr = { .length = length };
	struct ibv_dm *dm = ibv_alloc_dm(ctx, &attr);

	if (!dm)
		fail_msg("ibv_alloc_dm(%zu bytes): %s", length, strerror(errno));
	return dm;
}

/* A device without device memory refuses any allocation. */
void ibv_alloc_dm__no_device_memory(void **state)
{
	struct ibv_context *ctx = fx_open_device_dm(false);
	struct ibv_alloc_dm_attr attr = { .length = 64 };

	RC_ASSERT_FAILS_NULL("ibv_alloc_dm", ibv_alloc_dm(ctx, &attr), EOPNOTSUPP);
	attr.length = 0;
	RC_ASSERT_FAILS_NULL("ibv_alloc_dm", ibv_alloc_dm(ctx, &attr), EOPNOTSUPP);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* Up to max_dm_size is allocated; over it, or a comp_mask bit: EINVAL. */
void ibv_alloc_dm__limits(void **state)
{
	struct ibv_context *ctx = fx_open_device_dm(true);
	uint64_t max = max_dm_size(ctx);
	struct ibv_alloc_dm_attr attr = { .length = max + 1 };
	struct ibv_dm *dm;

	RC_ASSERT_FAILS_NULL("ibv_alloc_dm", ibv_alloc_dm(ctx, &attr), EINVAL);
	attr.length = 64;
	attr.comp_mask = 1;
	RC_ASSERT_FAILS_NULL("ibv_alloc_dm", ibv_alloc_dm(ctx, &attr), EINVAL);
	dm = dm_alloc(ctx, 64);
	assert_ptr_equal(dm->context, ctx);
	FX_VERBS_OK(ibv_free_dm(dm));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* Quarters of the device's memory until one fails: ENOMEM, never more
 * than max_dm_size in all, and room again once one is freed. */
void ibv_alloc_dm__device_total(void **state)
{
	struct ibv_context *ctx = fx_open_device_dm(true);
	uint64_t quarter = max_dm_size(ctx) / 4;
	struct ibv_alloc_dm_attr attr = { .length = quarter };
	struct ibv_dm *dm[5];
	int n = 0;

	while (n < 5 && (dm[n] = ibv_alloc_dm(ctx, &attr)))
		n++;
	if (n == 5)
		fail_msg("ibv_alloc_dm gave five quarters of max_dm_size (%llu bytes)",
			 (unsigned long long)(4 * quarter));
	RC_ASSERT_ERRNO("ibv_alloc_dm", errno, ENOMEM);
	if (n == 0)
		fail_msg("ibv_alloc_dm(%llu bytes, a quarter of max_dm_size) failed with ENOMEM at once",
			 (unsigned long long)quarter);
	FX_VERBS_OK(ibv_free_dm(dm[--n]));
	dm[n] = ibv_alloc_dm(ctx, &attr);
	if (!dm[n])
		fail_msg("ibv_alloc_dm after a free of the same size: %s", strerror(errno));
	while (n >= 0)
		FX_VERBS_OK(ibv_free_dm(dm[n--]));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* In whole words, inside the allocation; what goes in comes back out. */
void ibv_memcpy_to_dm__rules(void **state)
{
	struct ibv_context *ctx = fx_open_device_dm(true);
	struct ibv_dm *dm = dm_alloc(ctx, 256);
	char in[32] = "device memory, word by word....", out[32];

	FX_VERBS_OK(ibv_memcpy_to_dm(dm, 64, in, sizeof in));
	memset(out, 0, sizeof out);
	FX_VERBS_OK(ibv_memcpy_from_dm(out, dm, 64, sizeof out));
	assert_memory_equal(out, in, sizeof in);
	RC_ASSERT_ERRNO("ibv_memcpy_to_dm", ibv_memcpy_to_dm(dm, 240, in, sizeof in), EFAULT);
	RC_ASSERT_ERRNO("ibv_memcpy_from_dm", ibv_memcpy_from_dm(out, dm, 256, 4), EFAULT);
	RC_ASSERT_ERRNO("ibv_memcpy_to_dm", ibv_memcpy_to_dm(dm, 66, "xxxx", 4), EINVAL);
	RC_ASSERT_ERRNO("ibv_memcpy_to_dm", ibv_memcpy_to_dm(dm, 64, "xxxx", 3), EINVAL);
	RC_ASSERT_ERRNO("ibv_memcpy_from_dm", ibv_memcpy_from_dm(out, dm, 64, 6), EINVAL);
	FX_VERBS_OK(ibv_memcpy_from_dm(out, dm, 64, sizeof out));
	assert_memory_equal(out, in, sizeof in);
	FX_VERBS_OK(ibv_free_dm(dm));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* Zero-based, local and remote access only, inside the allocation; the
 * DM is kept while the MR lives, and the MR cannot be reregistered. */
void ibv_reg_dm_mr__rules(void **state)
{
	const unsigned zb = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_context *ctx = fx_open_device_dm(true);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_dm *dm = dm_alloc(ctx, DM_LEN);
	struct ibv_mr *mr;

	assert_non_null(pd);
	RC_ASSERT_FAILS_NULL("ibv_reg_dm_mr", ibv_reg_dm_mr(pd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE),
			     EINVAL);
	RC_ASSERT_FAILS_NULL("ibv_reg_dm_mr", ibv_reg_dm_mr(pd, dm, 0, 64, zb | IBV_ACCESS_MW_BIND),
			     EINVAL);
	RC_ASSERT_FAILS_NULL("ibv_reg_dm_mr",
			     ibv_reg_dm_mr(pd, dm, 0, 64, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_WRITE),
			     EINVAL);
	RC_ASSERT_FAILS_NULL("ibv_reg_dm_mr", ibv_reg_dm_mr(pd, dm, DM_LEN - 32, 64, zb), EINVAL);
	RC_ASSERT_FAILS_NULL("ibv_reg_dm_mr", ibv_reg_dm_mr(pd, dm, DM_LEN + 64, 0, zb), EINVAL);
	mr = ibv_reg_dm_mr(pd, dm, 64, 128, zb | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		fail_msg("ibv_reg_dm_mr(offset 64, 128 bytes): %s", strerror(errno));
	assert_null(mr->addr);
	assert_int_equal(mr->length, 128);
	assert_ptr_equal(mr->pd, pd);
	RC_ASSERT_ERRNO("ibv_free_dm", ibv_free_dm(dm), EBUSY);
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE),
			 IBV_REREG_MR_ERR_CMD);
	RC_ASSERT_ERRNO("ibv_rereg_mr", errno, EINVAL);
	FX_VERBS_OK(ibv_dereg_mr(mr));
	FX_VERBS_OK(ibv_free_dm(dm));
	FX_VERBS_OK(ibv_dealloc_pd(pd));
	FX_VERBS_OK(ibv_close_device(ctx));
}

struct dm_qp {
	struct fx_qp q;
	struct ibv_dm *dm;
	struct ibv_mr *mr; /* the whole DM: local and remote access */
};

static void post_one(struct dm_qp *d, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	FX_VERBS_OK(ibv_post_send(d->q.qp, wr, &bad));
	fx_poll_one(d->q.cq, &wc);
	if (wc.status != IBV_WC_SUCCESS)
		fail_msg("the %s completed with %s", what, ibv_wc_status_str(wc.status));
}

/* A SEND from src to a receive into dst, both completions successful. */
static void send_recv(struct dm_qp *d, struct ibv_sge *src, struct ibv_sge *dst)
{
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = dst, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = src, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;

	FX_VERBS_OK(ibv_post_recv(d->q.qp, &rwr, &rbad));
	FX_VERBS_OK(ibv_post_send(d->q.qp, &swr, &sbad));
	for (int i = 0; i < 2; i++) {
		fx_poll_one(d->q.cq, &wc);
		if (wc.status != IBV_WC_SUCCESS)
			fail_msg("the %s completed with %s", wc.wr_id == 1 ? "receive" : "SEND",
				 ibv_wc_status_str(wc.status));
		if (wc.wr_id == 1)
			assert_int_equal(wc.byte_len, src->length);
	}
}

/* The MR names device memory by offset from its start, in every role. */
void ibv_reg_dm_mr__work_requests(void **state)
{
	const unsigned access = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_attr attr = { .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	struct dm_qp d;
	char text[16] = "in device mem.", got[16];

	fx_qp_create_on(&d.q, fx_open_device_dm(true), IBV_QPT_RC);
	d.dm = dm_alloc(d.q.ctx, 256);
	d.mr = ibv_reg_dm_mr(d.q.pd, d.dm, 0, 256, access);
	if (!d.mr)
		fail_msg("ibv_reg_dm_mr: %s", strerror(errno));
	fx_qp_to(&d.q, IBV_QPS_RTS);
	FX_VERBS_OK(ibv_modify_qp(d.q.qp, &attr, IBV_QP_ACCESS_FLAGS));

	/* A SEND out of device memory at offset 16. */
	FX_VERBS_OK(ibv_memcpy_to_dm(d.dm, 16, text, sizeof text));
	struct ibv_sge from_dm = { .addr = 16, .length = sizeof text, .lkey = d.mr->lkey };
	struct ibv_sge to_host = { .addr = (uintptr_t)d.q.buf, .length = sizeof text, .lkey = d.q.mr->lkey };
	memset(d.q.buf, 0, sizeof d.q.buf);
	send_recv(&d, &from_dm, &to_host);
	assert_memory_equal(d.q.buf, text, sizeof text);

	/* A receive into device memory at offset 64. */
	struct ibv_sge into_dm = { .addr = 64, .length = sizeof text, .lkey = d.mr->lkey };
	memcpy(d.q.buf, "arrived in dm!!", sizeof text);
	send_recv(&d, &to_host, &into_dm);
	FX_VERBS_OK(ibv_memcpy_from_dm(got, d.dm, 64, sizeof got));
	assert_memory_equal(got, "arrived in dm!!", sizeof got);

	/* An RDMA WRITE by the rkey at remote address 128, and a READ of 16. */
	memcpy(d.q.buf, "written by rkey", sizeof text);
	struct ibv_send_wr write = { .sg_list = &to_host, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				     .wr.rdma = { .remote_addr = 128, .rkey = d.mr->rkey } };
	post_one(&d, &write, "RDMA WRITE");
	FX_VERBS_OK(ibv_memcpy_from_dm(got, d.dm, 128, sizeof got));
	assert_memory_equal(got, "written by rkey", sizeof got);
	struct ibv_send_wr read = { .sg_list = &to_host, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				    .wr.rdma = { .remote_addr = 16, .rkey = d.mr->rkey } };
	memset(d.q.buf, 0, sizeof d.q.buf);
	post_one(&d, &read, "RDMA READ");
	assert_memory_equal(d.q.buf, text, sizeof text);

	FX_VERBS_OK(ibv_dereg_mr(d.mr));
	FX_VERBS_OK(ibv_free_dm(d.dm));
	fx_qp_release(&d.q);
}

/* An mlx5 device with device memory, or the test skips. */
static struct ibv_context *mlx5_with_dm(void)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_MLX5);

	if (!max_dm_size(ctx)) {
		FX_VERBS_OK(ibv_close_device(ctx));
		RC_REQUIRE_CAPABILITY("device-memory");
		RC_SKIP("capability: device-memory (an mlx5 device with max_dm_size 0)");
	}
	return ctx;
}

/* The mapping is the device memory the copies reach, both ways. */
void mlx5dv_init_obj__dm(void **state)
{
	struct ibv_context *ctx = mlx5_with_dm();
	struct ibv_dm *dm;
	struct mlx5dv_dm out = { .comp_mask = MLX5DV_DM_MASK_REMOTE_VA, .remote_va = 1 };
	struct mlx5dv_obj obj = { .dm = { .out = &out } };
	uint32_t word = 0x5eed5eed, got = 0;

	dm = dm_alloc(ctx, 200);
	obj.dm.in = dm;
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_DM));
	assert_non_null(out.buf);
	assert_int_equal(out.length, 200);
	assert_int_equal(out.comp_mask, MLX5DV_DM_MASK_REMOTE_VA);
	assert_int_equal(out.remote_va, 0);
	__atomic_store_n((uint32_t *)out.buf + 10, word, __ATOMIC_RELAXED);
	FX_VERBS_OK(ibv_memcpy_from_dm(&got, dm, 40, 4));
	assert_int_equal(got, word);
	FX_VERBS_OK(ibv_memcpy_to_dm(dm, 196, &word, 4));
	assert_int_equal(__atomic_load_n((uint32_t *)out.buf + 49, __ATOMIC_RELAXED), word);
	FX_VERBS_OK(ibv_free_dm(dm));
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* MEMIC as ibv_alloc_dm gives it; an unknown type or a comp_mask bit is
 * refused; a device without mlx5 has no such call. */
void mlx5dv_alloc_dm__memic(void **state)
{
	struct ibv_context *ctx = mlx5_with_dm();
	struct ibv_alloc_dm_attr attr = { .length = 128 };
	struct mlx5dv_alloc_dm_attr type = { .type = MLX5DV_DM_TYPE_MEMIC };
	struct ibv_dm *dm;
	char in[8] = "memic..", out[8] = "";

	dm = mlx5dv_alloc_dm(ctx, &attr, &type);
	if (!dm)
		fail_msg("mlx5dv_alloc_dm(MEMIC): %s", strerror(errno));
	FX_VERBS_OK(ibv_memcpy_to_dm(dm, 0, in, sizeof in));
	FX_VERBS_OK(ibv_memcpy_from_dm(out, dm, 0, sizeof out));
	assert_memory_equal(out, in, sizeof in);
	FX_VERBS_OK(ibv_free_dm(dm));
	type.type = (enum mlx5dv_alloc_dm_type)77;
	RC_ASSERT_FAILS_NULL("mlx5dv_alloc_dm", mlx5dv_alloc_dm(ctx, &attr, &type), EOPNOTSUPP);
	type.type = MLX5DV_DM_TYPE_MEMIC;
	type.comp_mask = 1;
	RC_ASSERT_FAILS_NULL("mlx5dv_alloc_dm", mlx5dv_alloc_dm(ctx, &attr, &type), EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void mlx5dv_alloc_dm__not_mlx5(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_NOT_MLX5);
	struct ibv_alloc_dm_attr attr = { .length = 128 };
	struct mlx5dv_alloc_dm_attr type = { .type = MLX5DV_DM_TYPE_MEMIC };

	RC_ASSERT_FAILS_NULL("mlx5dv_alloc_dm", mlx5dv_alloc_dm(ctx, &attr, &type), EOPNOTSUPP);
	FX_VERBS_OK(ibv_close_device(ctx));
}
