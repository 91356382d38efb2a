/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The mlx5 device model: the queues as a ConnectX lays them out in the
 * program's memory (mlx5dv.h: struct mlx5_cqe64, struct mlx5_err_cqe, the
 * doorbell records), written by the fabric as the device writes them.
 *
 * A CQ of an mlx5 device becomes a ring once mlx5dv_init_obj hands it to
 * the program: from then on every completion is a 64-byte CQE in the ring,
 * with the owner bit of the pass it was written in, whoever completes the
 * work (this process or another of the fabric: the ring is in the arena),
 * and ibv_poll_cq reads the same ring as a program polling CQEs itself
 * does. Until then the CQ keeps the verbs layer's list, which costs a
 * program that never asks for the ring nothing. What a CQE does not carry
 * (the WR's id, the mock's QP, the send-queue slots it frees) is kept
 * beside each slot, as the provider keeps its wrid tables.
 *
 * Every call runs under the verbs lock but mlx5_cq_ready, which looks at
 * the next CQE's owner bit, as hardware is polled. */
#ifndef RDMAMOCK_DEVICE_MLX5_H
#define RDMAMOCK_DEVICE_MLX5_H

#include <infiniband/mlx5dv.h>
#include <stdbool.h>
#include <stdint.h>

struct mock_cq;
struct mock_cqe;
struct mock_qp;

/* The ring of a CQ that has one (cq->ring), in the arena. */
struct mlx5_cq_ring;

/* Give the CQ an empty ring of cq.cqe + 1 entries (the verbs layer moves
 * what the CQ holds into it, by mlx5_cq_write): 0, or ENOMEM when the
 * arena is full. */
int mlx5_cq_make_ring(struct mock_cq *cq);
/* The ring as mlx5dv_init_obj describes it. */
void mlx5_cq_describe(const struct mock_cq *cq, struct mlx5dv_cq *out);
/* Whether the device has no room for a CQE: the program has not consumed
 * (by its doorbell record) what a new entry would overwrite. */
bool mlx5_cq_full(const struct mock_cq *cq);
/* Write one completion as the device does: the entry, then its opcode and
 * owner bit. wqe_counter is the WQE's index in its queue. */
void mlx5_cq_write(struct mock_cq *cq, const struct ibv_wc *wc, struct mock_qp *qp, bool is_send,
		   uint64_t sq_mark, bool solicited, uint16_t wqe_counter, uint64_t timestamp);
/* Whether the next CQE is the device's (the program's own polling view). */
bool mlx5_cq_ready(const struct mock_cq *cq);
/* Take the next CQE as the provider's poll does, decoded into e (its
 * later part left empty): false when there is none. Its slot is
 * consumed: the doorbell record says so. */
bool mlx5_cq_read(struct mock_cq *cq, struct mock_cqe *e);
/* The CQEs not yet consumed (by ibv_poll_cq's view). */
uint32_t mlx5_cq_pending(const struct mock_cq *cq);
/* Drop the unconsumed CQEs of a QP (its destroy), closing the gap as the
 * provider's mlx5_cq_clean does: the later ones move up, each taking the
 * owner bit of the slot it lands in. */
void mlx5_cq_clean(struct mock_cq *cq, const struct mock_qp *qp);
/* A ring of another size for ibv_resize_cq (cqe_cnt a power of two), the
 * unconsumed CQEs carried over: 0, or ENOMEM. */
int mlx5_cq_resize(struct mock_cq *cq, uint32_t cqe_cnt);
void mlx5_cq_free(struct mock_cq *cq);
/* The mlx5 provider's checks of mlx5dv_create_cq's attributes (dv may be
 * NULL: ibv_create_cq's), after the verbs checks, and the CQE size they
 * give (mlx5dv's, else MLX5_CQE_SIZE's, else 64): 0, or EINVAL. */
int mlx5_cq_attr(const struct mlx5dv_cq_init_attr *dv, uint32_t *cqe_size);

#endif
