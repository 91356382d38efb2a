/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: an InfiniBand port, where RoCE's rules do not hold: what
 * ibv_query_port and ibv_query_gid_ex say of it, a QP's path and an
 * address handle that name a LID and no GRH, what a completion then
 * carries (ibv_init_ah_from_wc), and the path rdma_resolve_route gives.
 * On the mock, mlx5_0 made a ConnectX on an IB subnet (a topology of the
 * test's own); on a real device, its port must be InfiniBand (rxe has no
 * such mode, so these were derived from the kernel's CM, mlx5_ib and
 * libibverbs, not measured). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"
#include "qp.h"

#define QKEY 0x11111111u

/* The kind of device whose port 1 is InfiniBand, and that port. */
static enum fx_device_kind ib_device(struct ibv_port_attr *port)
{
	enum fx_device_kind kind = FX_DEV_UNDER_TEST;
	struct ibv_context *ctx;

	if (rc_backend_is_mock()) {
		int (*load)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_topology_load");

		if (load("mlx5_0=mlx5+ib:127.0.0.1/8"))
			fail_msg("rdmamock_topology_load failed");
		kind = FX_DEV_MLX5;
	}
	ctx = fx_open_device(kind);
	FX_VERBS_OK(ibv_query_port(ctx, 1, port));
	FX_VERBS_OK(ibv_close_device(ctx));
	if (port->link_layer != IBV_LINK_LAYER_INFINIBAND)
		RC_SKIP("the device's port 1 is not InfiniBand");
	return kind;
}

/* rwr posted, then wr sent to q itself (signalled): both succeed; the
 * receive's completion is *got. */
static void send_to_self(struct fx_qp *q, struct ibv_recv_wr *rwr, struct ibv_send_wr *wr,
			 struct ibv_wc *got)
{
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	FX_VERBS_OK(ibv_post_recv(q->qp, rwr, &rbad));
	FX_VERBS_OK(ibv_post_send(q->qp, wr, &bad));
	for (int i = 0; i < 2; i++) {
		fx_poll_one(q->cq, &wc);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		if (wc.wr_id == rwr->wr_id)
			*got = wc;
	}
}

/* The port has a unicast LID and an SM's, needs no GRH, and its one GID
 * is the link-local subnet prefix and an interface id, of type IB, with
 * no net device. */
void ibv_query_port__infiniband(void **state)
{
	struct ibv_gid_entry entry;
	struct ibv_port_attr port;
	struct ibv_context *ctx;

	ctx = fx_open_device(ib_device(&port));
	assert_true(port.lid >= 1 && port.lid < 0xc000);
	assert_true(port.sm_lid >= 1 && port.sm_lid < 0xc000);
	assert_true(port.lmc <= 7);
	assert_int_equal(port.flags & IBV_QPF_GRH_REQUIRED, 0);
	assert_int_equal(port.state, IBV_PORT_ACTIVE);
	FX_VERBS_OK(ibv_query_gid_ex(ctx, 1, 0, &entry, 0));
	assert_int_equal(entry.gid_type, IBV_GID_TYPE_IB);
	assert_int_equal(entry.ndev_ifindex, 0);
	assert_int_equal(entry.gid.raw[0], 0xfe);
	assert_int_equal(entry.gid.raw[1], 0x80);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* An RC QP whose path is its own LID, no GRH: a SEND lands, and the
 * receive's completion names the sender's LID, without IBV_WC_GRH. */
void ibv_modify_qp__infiniband_lid_path(void **state)
{
	struct ibv_port_attr port;
	struct fx_qp q;
	struct ibv_sge rsge, sge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;

	fx_qp_create(&q, ib_device(&port), IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	FX_VERBS_OK(ibv_query_qp(q.qp, &attr, IBV_QP_AV, &init));
	assert_int_equal(attr.ah_attr.is_global, 0);
	assert_int_equal(attr.ah_attr.dlid, port.lid);
	rsge = (struct ibv_sge){ (uintptr_t)q.buf + 32, 32, q.mr->lkey };
	sge = (struct ibv_sge){ (uintptr_t)q.buf, 8, q.mr->lkey };
	memcpy(q.buf, "lid only", 8);
	send_to_self(&q, &rwr, &wr, &wc);
	assert_int_equal(wc.byte_len, 8);
	assert_int_equal(wc.slid, port.lid);
	assert_int_equal(wc.wc_flags & IBV_WC_GRH, 0);
	assert_memory_equal(q.buf + 32, "lid only", 8);
	fx_qp_release(&q);
}

/* A UD address handle of a LID alone: ibv_create_ah takes it, a message
 * longer than RoCE's 1024-byte MTU arrives (the port's is 4096), its
 * completion has no GRH and names the LID, and ibv_init_ah_from_wc gives
 * back a LID-only address. */
void ibv_create_ah__infiniband_lid(void **state)
{
	static char data[2048], into[40 + 2048];
	struct ibv_port_attr port;
	struct ibv_ah_attr back, ah_attr = { .port_num = 1 };
	struct ibv_mr *mr_data, *mr_into;
	struct ibv_sge rsge, sge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct fx_qp q;

	fx_qp_create(&q, ib_device(&port), IBV_QPT_UD);
	fx_qp_to(&q, IBV_QPS_RTS);
	ah_attr.dlid = port.lid;
	ah = ibv_create_ah(q.pd, &ah_attr);
	if (!ah)
		fail_msg("ibv_create_ah(dlid %u, no GRH): %s", port.lid, strerror(errno));
	mr_data = ibv_reg_mr(q.pd, data, sizeof data, IBV_ACCESS_LOCAL_WRITE);
	mr_into = ibv_reg_mr(q.pd, into, sizeof into, IBV_ACCESS_LOCAL_WRITE);
	if (!mr_data || !mr_into)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	memset(data, 0x5a, sizeof data);
	rsge = (struct ibv_sge){ (uintptr_t)into, sizeof into, mr_into->lkey };
	sge = (struct ibv_sge){ (uintptr_t)data, sizeof data, mr_data->lkey };
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = q.qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	send_to_self(&q, &rwr, &wr, &wc);
	assert_int_equal(wc.byte_len, 40 + sizeof data);
	assert_int_equal(wc.src_qp, q.qp->qp_num);
	assert_int_equal(wc.slid, port.lid);
	assert_int_equal(wc.wc_flags & IBV_WC_GRH, 0);
	FX_VERBS_OK(ibv_init_ah_from_wc(q.ctx, 1, &wc, (struct ibv_grh *)into, &back));
	assert_int_equal(back.is_global, 0);
	assert_int_equal(back.dlid, port.lid);
	assert_memory_equal(into + 40, data, sizeof data);
	FX_VERBS_OK(ibv_destroy_ah(ah));
	FX_VERBS_OK(ibv_dereg_mr(mr_data));
	FX_VERBS_OK(ibv_dereg_mr(mr_into));
	fx_qp_release(&q);
}

/* rdma_resolve_route on an InfiniBand port: the SA's path between the two
 * ports' LIDs, their GIDs, hop limit 0 (no GRH within the subnet), and an
 * MTU no less than 1024. */
void rdma_resolve_route__infiniband_path(void **state)
{
	struct ibv_port_attr port;
	struct sockaddr_storage dst;
	struct ibv_sa_path_rec *path;
	struct rdma_cm_id *id;
	union ibv_gid gid;

	ib_device(&port);
	if (rc_backend_is_mock())
		fx_sockaddr(AF_INET, "127.0.0.1", 0, &dst);
	else
		fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &dst);
	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	FX_OK(rdma_resolve_route(id, 2000));
	assert_int_equal(id->route.num_paths, 1);
	path = id->route.path_rec;
	FX_VERBS_OK(ibv_query_gid(id->verbs, 1, 0, &gid));
	assert_memory_equal(&path->sgid, &gid, sizeof gid);
	assert_int_equal(be16toh(path->slid), port.lid);
	assert_true(be16toh(path->dlid) >= 1 && be16toh(path->dlid) < 0xc000);
	assert_int_equal(path->hop_limit, 0);
	assert_true(path->mtu >= IBV_MTU_1024);
	FX_OK(rdma_destroy_id(id));
}
