/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Direct verbs on a ConnectX, as UCX's mlx5 transports use them: the
 * program writes its own WQEs into the send and receive queues that
 * mlx5dv_init_obj hands over, rings the doorbell, and reads CQEs from the
 * CQ's ring, with no verbs call on the data path. One program:
 *   mlx5_raw server ADDR PORT   a receive WQE of its own, accepts one
 *                               connection, waits for the SEND's CQE and
 *                               checks what the client wrote and added
 *   mlx5_raw client ADDR PORT   RDMA WRITE, fetch-and-add and SEND with
 *                               immediate, each a WQE of its own, each
 *                               completion read from the CQ's ring
 * The server's memory: 64 bytes the WRITE lands in, then the counter the
 * client adds to, then where the SEND's 16 bytes are received. Each step
 * prints one line; each side gives up after TIMEOUT_S seconds and exits
 * non-zero on an error or a mismatch.
 */
#include <endian.h>
#include <infiniband/mlx5dv.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT_S 20
#define IMM 0x600dcafeu
#define START 100u /* the counter's first value */
#define ADD 5u
static const char WRITTEN[64] = "mlx5_raw: written by the client's own WQE, nothing else";

struct layout {
	char written[64];
	uint64_t counter;
	uint64_t pad;
	char received[16];
	uint64_t old;        /* the client's: the fetch-and-add's result */
};

/* What the server gives the client in its accept's private data. */
struct where {
	uint64_t addr;
	uint32_t rkey;
} __attribute__((packed));

struct side {
	struct rdma_cm_id *id, *listen_id;
	struct ibv_mr *mr;
	struct layout mem;
	struct mlx5dv_qp qp;
	struct mlx5dv_cq scq, rcq; /* librdmacm makes a CQ each way */
	uint32_t sci, rci;
	uint32_t sq_pi;
};

static const char *role;
static const char *volatile step = "start";

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "%s: timed out at step: %s\n", role, (const char *)step);
	_exit(124);
}

static void check(const char *what, bool ok)
{
	step = what;
	printf("%s: %s: %s\n", role, what, ok ? "ok" : "FAILED");
	fflush(stdout);
	if (!ok)
		exit(1);
}

static void connect_side(struct side *s, bool server, const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	check("rdma_getaddrinfo", rdma_getaddrinfo(addr, port, &hints, &res) == 0);
	if (!server) {
		check("rdma_create_ep", rdma_create_ep(&s->id, res, NULL, &attr) == 0);
		rdma_freeaddrinfo(res);
		return;
	}
	check("rdma_create_ep", rdma_create_ep(&s->listen_id, res, NULL, &attr) == 0);
	rdma_freeaddrinfo(res);
	check("rdma_listen", rdma_listen(s->listen_id, 1) == 0);
	printf("%s: listening\n", role);
	fflush(stdout);
	/* The listener stays until the request is accepted: its event is
	 * acked then. */
	check("rdma_get_request", rdma_get_request(s->listen_id, &s->id) == 0);
}

/* The queues and the CQs, as the device lays them out. */
static void take_queues(struct side *s)
{
	struct mlx5dv_obj obj = {
		.qp = { .in = s->id->qp, .out = &s->qp },
		.cq = { .in = s->id->send_cq, .out = &s->scq },
	};

	check("mlx5dv_init_obj(QP, send CQ)", mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ) == 0);
	obj.cq = (typeof(obj.cq)){ .in = s->id->recv_cq, .out = &s->rcq };
	check("mlx5dv_init_obj(receive CQ)", mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ) == 0);
	check("64-byte CQEs", s->scq.cqe_size == 64 && s->rcq.cqe_size == 64);
}

/* The CQE at a CQ's consumer index *ci, once the device has written it. */
static struct mlx5_cqe64 *next_cqe(struct mlx5dv_cq *cq, uint32_t *ci)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)((char *)cq->buf +
						       (size_t)(*ci & (cq->cqe_cnt - 1)) * 64);

	for (;;) {
		uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

		if ((op_own >> 4) != MLX5_CQE_INVALID &&
		    (op_own & MLX5_CQE_OWNER_MASK) == !!(*ci & cq->cqe_cnt))
			break;
	}
	++*ci;
	__atomic_store_n(&cq->dbrec[0], htobe32(*ci & 0xffffff), __ATOMIC_RELEASE);
	return cqe;
}

/* The WQE at the send queue's next block; ds 16-byte units long. */
static struct mlx5_wqe_ctrl_seg *wqe(struct side *s, uint8_t opcode, uint8_t ds, uint32_t imm)
{
	struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)((char *)s->qp.sq.buf +
		(size_t)(s->sq_pi & (s->qp.sq.wqe_cnt - 1)) * s->qp.sq.stride);

	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)s->sq_pi, opcode, 0, s->id->qp->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, ds, 0, imm);
	return ctrl;
}

/* The record, then the doorbell: the control segment's first 8 bytes. */
static void ring(struct side *s, struct mlx5_wqe_ctrl_seg *ctrl)
{
	s->sq_pi++;
	__atomic_store_n(&s->qp.dbrec[MLX5_SND_DBR], htobe32(s->sq_pi & 0xffff), __ATOMIC_RELEASE);
	*(volatile uint64_t *)s->qp.bf.reg = *(uint64_t *)ctrl;
}

static void raddr(void *seg, uint64_t addr, uint32_t rkey)
{
	struct mlx5_wqe_raddr_seg *r = seg;

	r->raddr = htobe64(addr);
	r->rkey = htobe32(rkey);
	r->reserved = 0;
}

/* The requester's CQE of the WQE just rung. */
static void completed(struct side *s, const char *what, uint8_t opcode)
{
	struct mlx5_cqe64 *cqe = next_cqe(&s->scq, &s->sci);

	step = what;
	check(what, mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ &&
			    be32toh(cqe->sop_drop_qpn) >> 24 == opcode &&
			    be16toh(cqe->wqe_counter) == (uint16_t)(s->sq_pi - 1));
}

static int server(struct side *s, const char *addr, const char *port)
{
	struct where w;
	struct rdma_conn_param param = { .responder_resources = 1, .private_data = &w,
					 .private_data_len = sizeof w };
	struct mlx5_wqe_data_seg *rseg;
	struct mlx5_cqe64 *cqe;

	connect_side(s, true, addr, port);
	s->mem.counter = START;
	s->mr = ibv_reg_mr(s->id->pd, &s->mem, sizeof s->mem,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	check("ibv_reg_mr", s->mr != NULL);
	take_queues(s);
	/* A receive WQE of its own: one data segment, then the end. */
	rseg = s->qp.rq.buf;
	mlx5dv_set_data_seg(&rseg[0], sizeof s->mem.received, s->mr->lkey,
			    (uintptr_t)s->mem.received);
	if (s->qp.rq.stride > sizeof *rseg)
		mlx5dv_set_data_seg(&rseg[1], 0, MLX5_INVALID_LKEY, 0);
	__atomic_store_n(&s->qp.dbrec[MLX5_RCV_DBR], htobe32(1), __ATOMIC_RELEASE);
	w.addr = htobe64((uintptr_t)&s->mem);
	w.rkey = htobe32(s->mr->rkey);
	check("rdma_accept", rdma_accept(s->id, &param) == 0);
	cqe = next_cqe(&s->rcq, &s->rci);
	check("the SEND's CQE: RESP_SEND_IMM, 16 bytes, the immediate, receive WQE 0",
	      mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_RESP_SEND_IMM && be32toh(cqe->byte_cnt) == 16 &&
		      be32toh(cqe->imm_inval_pkey) == IMM && be16toh(cqe->wqe_counter) == 0);
	check("the message", !memcmp(s->mem.received, "mlx5_raw: hello", 16));
	check("the RDMA WRITE landed before it", !memcmp(s->mem.written, WRITTEN, sizeof s->mem.written));
	check("the fetch-and-add", s->mem.counter == START + ADD);
	printf("server: every check held\n");
	rdma_disconnect(s->id);
	ibv_dereg_mr(s->mr);
	rdma_destroy_ep(s->id);
	rdma_destroy_ep(s->listen_id);
	return 0;
}

static int client(struct side *s, const char *addr, const char *port)
{
	struct rdma_conn_param param = { .initiator_depth = 1, .retry_count = 7 };
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct where w;
	char msg[16] = "mlx5_raw: hello";
	uint64_t remote;
	uint32_t rkey;

	connect_side(s, false, addr, port);
	memcpy(s->mem.written, WRITTEN, sizeof s->mem.written);
	memcpy(s->mem.received, msg, sizeof msg);
	s->mr = ibv_reg_mr(s->id->pd, &s->mem, sizeof s->mem, IBV_ACCESS_LOCAL_WRITE);
	check("ibv_reg_mr", s->mr != NULL);
	take_queues(s);
	check("rdma_connect", rdma_connect(s->id, &param) == 0);
	check("the server's address and key", s->id->event && s->id->event->param.conn.private_data_len >= sizeof w);
	memcpy(&w, s->id->event->param.conn.private_data, sizeof w);
	remote = be64toh(w.addr);
	rkey = be32toh(w.rkey);

	/* RDMA WRITE: control, remote address, data. */
	ctrl = wqe(s, MLX5_OPCODE_RDMA_WRITE, 3, 0);
	raddr(ctrl + 1, remote + offsetof(struct layout, written), rkey);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)((char *)ctrl + 32), sizeof s->mem.written,
			    s->mr->lkey, (uintptr_t)s->mem.written);
	ring(s, ctrl);
	completed(s, "RDMA WRITE", MLX5_OPCODE_RDMA_WRITE);

	/* Fetch-and-add: control, remote address, atomic, where the old value goes. */
	ctrl = wqe(s, MLX5_OPCODE_ATOMIC_FA, 4, 0);
	raddr(ctrl + 1, remote + offsetof(struct layout, counter), rkey);
	((struct mlx5_wqe_atomic_seg *)((char *)ctrl + 32))->swap_add = htobe64(ADD);
	((struct mlx5_wqe_atomic_seg *)((char *)ctrl + 32))->compare = 0;
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)((char *)ctrl + 48), 8, s->mr->lkey,
			    (uintptr_t)&s->mem.old);
	ring(s, ctrl);
	completed(s, "fetch-and-add", MLX5_OPCODE_ATOMIC_FA);
	check("the counter's old value", s->mem.old == START || be64toh(s->mem.old) == START);

	/* SEND with immediate: control, data. */
	ctrl = wqe(s, MLX5_OPCODE_SEND_IMM, 2, htobe32(IMM));
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ctrl + 1), sizeof msg, s->mr->lkey,
			    (uintptr_t)s->mem.received);
	ring(s, ctrl);
	completed(s, "SEND with immediate", MLX5_OPCODE_SEND_IMM);
	printf("client: every check held\n");
	rdma_disconnect(s->id);
	ibv_dereg_mr(s->mr);
	rdma_destroy_ep(s->id);
	return 0;
}

int main(int argc, char **argv)
{
	static struct side s;

	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client ADDR PORT\n", argv[0]);
		return 2;
	}
	role = argv[1];
	signal(SIGALRM, on_alarm);
	alarm(TIMEOUT_S);
	return !strcmp(role, "server") ? server(&s, argv[2], argv[3]) : client(&s, argv[2], argv[3]);
}
