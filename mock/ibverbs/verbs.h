/* Internal to the drop-in libibverbs: what its objects carry behind the
 * structs callers see, the per-personality device profile, and the calls
 * the verbs_*.c files share. */
#ifndef RDMAMOCK_VERBS_H
#define RDMAMOCK_VERBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "fabric/fabric.h"
#include "control/mock.h"

#define VERBS_CONTEXT_MAGIC 0x76637478u /* "vctx" */
#define VERBS_PD_MAGIC      0x76706421u /* "vpd!" */
#define VERBS_MR_MAGIC      0x766d7221u /* "vmr!" */
#define VERBS_CHANNEL_MAGIC 0x76636368u /* "vcch" */
#define VERBS_CQ_MAGIC      0x76637121u /* "vcq!" */
#define VERBS_QP_MAGIC      0x76717021u /* "vqp!" */

/* What a device of one personality reports. Limits are typical of the
 * hardware (mlx5: ConnectX-5; generic: rdma_rxe's rxe_param.h), not
 * measured; they matter where librdmacm checks against them, and where
 * ibv_create_cq and ibv_create_qp refuse what is over them (EINVAL). */
struct verbs_profile {
	const char *fw_ver;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_srq;
	int max_srq_wr;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint32_t max_msg_sz;
	int gid_tbl_len;
	uint32_t max_inline_data;
};

const struct verbs_profile *verbs_profile_of(enum rdmamock_personality p);

struct mock_device {
	struct ibv_device dev; /* what callers see */
	struct mock_device *next;
	unsigned serial;       /* the fabric device behind it */
	enum rdmamock_personality personality;
	__be64 guid;
};

struct mock_context {
	struct verbs_context vctx; /* ends with the ibv_context callers see */
	unsigned magic;
	struct mock_device *mdev;
};

/* The mock device behind an ibv_device or a context (abort on garbage). */
struct mock_device *verbs_device_of(struct ibv_device *dev, const char *call);
struct mock_context *verbs_context_of(struct ibv_context *ctx, const char *call);

/* ---------------------------------------------------------------- objects
 *
 * One lock guards every PD, MR, CQ, channel and QP below: the data path
 * crosses the objects of any context, and nothing here is hot. Lock order:
 * verbs_lock, then the fabric's lock (inside fab_* calls), then an ibv_cq's
 * own mutex. */
extern pthread_mutex_t verbs_lock;

struct mock_pd {
	struct ibv_pd pd;
	unsigned magic;
	int users; /* QPs and MRs on it: ibv_dealloc_pd is EBUSY while > 0 */
};

struct mock_mr {
	struct ibv_mr mr;
	unsigned magic;
	struct mock_mr *next; /* every live MR, for key lookups */
	struct mock_pd *mpd;
	uint64_t iova;        /* the address the keys' users name; addr for ibv_reg_mr */
	unsigned access;
};

struct cq_event;

struct mock_channel {
	struct ibv_comp_channel ch;
	unsigned magic;
	struct cq_event *head, *tail; /* one per fired CQ, not yet read */
};

/* A completion and what polling it frees: a send completion gives back
 * the send-queue slots up to and including its WR. */
struct mock_cqe {
	struct mock_cqe *next;
	struct ibv_wc wc;
	struct mock_qp *qp;
	bool is_send;
	uint64_t sq_mark; /* send WRs posted on qp up to this one */
};

struct mock_cq {
	struct ibv_cq cq;
	unsigned magic;
	int users;                     /* QPs on it: ibv_destroy_cq is EBUSY */
	struct mock_cqe *head, *tail;  /* completions not yet polled */
	int count;
	bool armed, solicited_only;
	bool overrun_said;
	uint32_t events_reported;      /* read by ibv_get_cq_event */
};

struct recv_wqe {
	struct recv_wqe *next;
	uint64_t wr_id;
	int num_sge;
	struct ibv_sge sge[];
};

struct mock_qp {
	struct ibv_qp qp;
	unsigned magic;
	unsigned dev_serial; /* the fabric device, and what it is */
	enum rdmamock_personality personality;
	struct mock_pd *mpd;
	struct mock_cq *scq, *rcq;
	enum ibv_qp_state state;  /* the device's own view; qp.state is libibverbs' */
	struct ibv_qp_attr attr;  /* what ibv_modify_qp set, reported by ibv_query_qp */
	struct ibv_qp_cap cap;
	int sq_sig_all;
	struct recv_wqe *rq_head, *rq_tail;
	uint32_t rq_count;
	uint64_t sq_posted, sq_freed; /* send-queue occupancy is the difference */
};

/* Checked conversions: abort naming the call on NULL or garbage, as the
 * upstream code would crash there. */
struct mock_pd *verbs_pd_of(struct ibv_pd *pd, const char *call);
struct mock_cq *verbs_cq_of(struct ibv_cq *cq, const char *call);
struct mock_qp *verbs_qp_of(struct ibv_qp *qp, const char *call);

/* The rest run under verbs_lock. */

/* The host address behind [addr, addr + len) in the MR whose key is
 * `key`, if that MR is on mpd and allows `access` (0 for a local read);
 * NULL otherwise. */
void *verbs_mr_map(struct mock_pd *mpd, uint32_t key, uint64_t addr, uint64_t len,
		   unsigned access);

/* The device writes a completion to cq; an armed CQ then fires its channel. */
void verbs_cq_add(struct mock_cq *cq, const struct ibv_wc *wc, struct mock_qp *qp,
		  bool is_send, uint64_t sq_mark, bool solicited);
/* Drop the completions of qp that are not polled yet (reset, destroy). */
void verbs_cq_forget_qp(struct mock_cq *cq, struct mock_qp *qp);

/* The QP enters ERR (flushing its receive queue) or, for a UC or UD send
 * queue error, SQE. Also tells the fabric. */
void verbs_qp_error(struct mock_qp *mqp, enum ibv_qp_state state);
/* Complete every posted receive with IBV_WC_WR_FLUSH_ERR. */
void verbs_qp_flush_recvs(struct mock_qp *mqp);

/* context->ops: the data path (post.c, cq.c). */
int verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only);

#endif
