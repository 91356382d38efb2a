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
/* The ring as mlx5dv_init_obj describes it; uar is the doorbell page the
 * program arms the CQ through (at MLX5_CQ_DOORBELL). */
void mlx5_cq_describe(const struct mock_cq *cq, struct mlx5dv_cq *out, void *uar);
/* This process's CQs whose arming record a program has written since it
 * was last acted on: the first after `after` (NULL: from the start), with
 * what the arming asks for (solicited only) and whether CQEs past the
 * index it armed at are there already; NULL when there is none. */
struct mock_cq *mlx5_cq_next_armed(struct mock_cq *after, bool *solicited, bool *pending);
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

/* ---------------------------------------------------------------- work queues */

/* The send and receive queues of a QP that has them (qp->ring). */
struct mlx5_qp_ring;
struct ibv_send_wr;
struct ibv_recv_wr;
struct ibv_sge;

/* Give the QP its queues, sized from its caps as the provider sizes them:
 * 0, or ENOMEM. */
int mlx5_qp_make_ring(struct mock_qp *qp);
void mlx5_qp_free(struct mock_qp *qp);
/* The UAR page's BlueFlame register: at MLX5_BF_OFFSET, two buffers of
 * half a ConnectX's 512-byte register (1 << log_bf_reg_size). */
#define MLX5_BF_OFFSET 0x800
#define MLX5_BF_BUF_SIZE 256u
/* The queues as mlx5dv_init_obj describes them; uar is the doorbell page. */
void mlx5_qp_describe(const struct mock_qp *qp, struct mlx5dv_qp *out, void *uar);
/* ibv_post_recv's receive, written as a receive WQE with the record
 * moved: 0, EINVAL (more SGEs than the stride holds) or ENOMEM (full). */
int mlx5_rq_post(struct mock_qp *qp, const struct ibv_recv_wr *wr);
/* The next receive WQE the record says is there, as a receive WR (wr_id
 * ibv_post_recv's, 0 for a program's own), its SGEs in sge (room for
 * mlx5_rq_max_sge), its index in *index: 0, or ENOENT. */
int mlx5_rq_take(struct mock_qp *qp, struct ibv_recv_wr *wr, struct ibv_sge *sge, uint16_t *index);
uint32_t mlx5_rq_max_sge(const struct mock_qp *qp);
/* ibv_post_send's WQE, written at the queue's next block and taken by the
 * device at once: its index (its first block). mark is the mock's count of
 * the QP's sends, by which its completion finds the index again. */
uint16_t mlx5_sq_write(struct mock_qp *qp, const struct ibv_send_wr *wr, uint64_t mark);
/* The index of the WQE of a send mark (mlx5_sq_write's or mlx5_sq_index's). */
uint16_t mlx5_qp_wqe_index(const struct mock_qp *qp, uint64_t mark);
void mlx5_sq_index(struct mock_qp *qp, uint64_t mark, uint16_t index);
/* A program's doorbell: run every WQE between what the device took and
 * what the record says, each read back as a send WR (its SGEs and inline
 * data valid during the call) and handed to run with its index; status
 * is not IBV_WC_SUCCESS for a WQE the device cannot run (an opcode it
 * does not model); a UD WQE's address vector in av (NULL for others).
 * How many ran. */
/* A NOP WQE, as a send WR: it moves nothing, and completes if signalled. */
#define MLX5_WR_NOP ((enum ibv_wr_opcode)0xff)
typedef void (*mlx5_run_wqe)(struct mock_qp *qp, const struct ibv_send_wr *wr,
			     const struct mlx5_wqe_av *av, uint16_t index, enum ibv_wc_status status);
int mlx5_sq_doorbell(struct mock_qp *qp, mlx5_run_wqe run);
/* This process's QPs whose record is ahead of the device: the first after
 * `after` (NULL: from the start), or NULL. */
struct mock_qp *mlx5_qp_next_rung(struct mock_qp *after);

/* An address vector (struct mlx5_wqe_av) as the provider writes one for
 * an address handle, and read back into the attributes it stands for. */
void mlx5_av_encode(const struct ibv_ah_attr *attr, bool ib, struct mlx5_wqe_av *av);
void mlx5_av_decode(const struct mlx5_wqe_av *av, bool ib, struct ibv_ah_attr *attr);

/* ---------------------------------------------------------------- the doorbell
 *
 * The register a program writes to ring (doorbell.c): a page of this
 * process that no access reaches without a fault. The storing thread,
 * taken out of the fault's handler, calls ring(), which runs what the
 * records say, and goes on past the store; any other fault goes to the
 * handler the program had. NULL where there is no such page (not x86-64). */
void *mlx5_doorbell_page(void (*ring)(void));

/* ---------------------------------------------------------------- shared receive queues */

struct mock_srq;
/* The SRQ's ring of WQEs (srq->ring), linked from 0 up, as the provider
 * makes it: 0, or ENOMEM. */
int mlx5_srq_make_ring(struct mock_srq *srq);
void mlx5_srq_free(struct mock_srq *srq);
void mlx5_srq_describe(const struct mock_srq *srq, struct mlx5dv_srq *out);
/* ibv_post_srq_recv's receive, at the provider's head: 0, EINVAL or
 * ENOMEM (its head has met its tail). */
int mlx5_srq_post(struct mock_srq *srq, const struct ibv_recv_wr *wr);
/* The next WQE the device takes along the list (mlx5_rq_take's terms). */
int mlx5_srq_take(struct mock_srq *srq, struct ibv_recv_wr *wr, struct ibv_sge *sge, uint16_t *index);
uint32_t mlx5_srq_max_sge(const struct mock_srq *srq);
/* WQEs posted and not yet taken. */
uint32_t mlx5_srq_outstanding(const struct mock_srq *srq);

#endif
