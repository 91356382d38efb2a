/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A program's own view of an mlx5 QP and CQ, as mlx5dv_init_obj hands
 * them over: WQEs written in the send queue, the doorbell record moved and
 * the register written; CQEs read from the ring by their owner bit and
 * consumed through the CQ's doorbell record. Shared by the mlx5 tests. */
#ifndef RDMACHECK_CONFORMANCE_MLX5_RAW_H
#define RDMACHECK_CONFORMANCE_MLX5_RAW_H

#include <infiniband/mlx5dv.h>
#include <stdbool.h>
#include <stdint.h>

#include "fixtures.h"
#include "qp.h"

/* An RC QP connected to itself, on a device mlx5dv accepts, its queues
 * and CQ handed over; buf is registered for every access. */
struct raw {
	struct fx_qp q;
	struct mlx5dv_cq cq;
	struct mlx5dv_qp qp;
	struct ibv_mr *mr;     /* over buf, every access */
	uint64_t buf[64];
	uint32_t sq_pi, rq_pi, ci;
	uintptr_t bf_offset; /* the BlueFlame buffer a copy goes to next: 0 or bf.size */
	struct ibv_comp_channel *channel; /* the CQ's, or NULL */
};

/* q's CQ as mlx5dv_init_obj hands it over (64-byte CQEs). */
void raw_cq_ring(struct fx_qp *q, struct mlx5dv_cq *dv);
/* The CQE software owns at index ci, waited for up to 5 s. */
struct mlx5_cqe64 *raw_cqe(const struct mlx5dv_cq *dv, uint32_t ci);
/* Whether the entry at ci is software's (no wait). */
int raw_cqe_ready(const struct mlx5dv_cq *dv, uint32_t ci);

void raw_open(struct raw *r);
/* The same with a QP of those capabilities (NULL: the fixture's), and
 * with a channel: a CQ of 8 on a completion channel of its own
 * (r->channel), in place of the fixture's CQ. */
void raw_open_with(struct raw *r, const struct ibv_qp_cap *cap, bool channel);
void raw_close(struct raw *r);
/* A QP with BlueFlame buffers (bf.size not 0), or the test skips (closing
 * r) where MLX5_SHUT_UP_BF turned them off, and fails where nothing did. */
void raw_require_bf(struct raw *r);
/* The send queue's block at the producer index. */
void *raw_wqe(struct raw *r);
/* One block more in the record, then the doorbell: the control
 * segment's first 8 bytes written to the register. */
void raw_ring(struct raw *r, const struct mlx5_wqe_ctrl_seg *ctrl);
/* The next CQE, waited for, consumed (the CQ's record moved). */
struct mlx5_cqe64 *raw_take(struct raw *r);
/* n completions through ibv_poll_cq of cq into wc, waited for up to 5 s. */
void raw_poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n);
/* A UD QP of mlx5_0 handed over (r->qp, with r->cq too when cq_ring),
 * its buffer registered, in RTS; an AH to its own GID (attr's dgid
 * filled in), handed over into *dvah. */
struct ibv_ah *raw_ud_self(struct raw *r, struct ibv_ah_attr *attr, struct mlx5dv_ah *dvah, bool cq_ring);
/* One block: the control segment, a remote address (buf[remote]) and,
 * for a fetch-and-add, its segment, then one 8-byte data segment
 * (buf[local]); rung for. */
void raw_rdma_ring(struct raw *r, uint8_t opcode, int remote, int local, uint64_t add);
/* The requester's CQE of opcode and index wqe, taken. */
struct mlx5_cqe64 *raw_req(struct raw *r, uint8_t opcode, uint16_t wqe);
/* raw_rdma_ring, then its CQE taken (raw_req). */
struct mlx5_cqe64 *raw_rdma(struct raw *r, uint8_t opcode, int remote, int local, uint64_t add,
			    uint16_t wqe);

#endif
