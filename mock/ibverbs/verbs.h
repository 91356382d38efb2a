/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to the drop-in libibverbs: what its objects carry behind the
 * structs callers see, the per-personality device profile, and the calls
 * the files of mock/ibverbs/ share. */
#ifndef RDMAMOCK_VERBS_H
#define RDMAMOCK_VERBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "fabric/arena.h"
#include "fabric/fabric.h"
#include "control/mock.h"
#include "device/mlx5.h"

#define VERBS_CONTEXT_MAGIC 0x76637478u /* "vctx" */
#define VERBS_PD_MAGIC      0x76706421u /* "vpd!" */
#define VERBS_MR_MAGIC      0x766d7221u /* "vmr!" */
#define VERBS_CHANNEL_MAGIC 0x76636368u /* "vcch" */
#define VERBS_CQ_MAGIC      0x76637121u /* "vcq!" */
#define VERBS_QP_MAGIC      0x76717021u /* "vqp!" */
#define VERBS_SRQ_MAGIC     0x76737121u /* "vsq!" */
#define VERBS_AH_MAGIC      0x76616821u /* "vah!" */
#define VERBS_XRCD_MAGIC    0x76786421u /* "vxd!" */
#define VERBS_DM_MAGIC      0x76646d21u /* "vdm!" */
#define VERBS_MW_MAGIC      0x766d7721u /* "vmw!" */


struct mock_device {
	struct ibv_device dev; /* what callers see */
	/* Where a provider's struct verbs_device keeps its ops: a provider
	 * library loaded beside the mock (libefa, ...) compares it with its
	 * own to tell its devices, and must never find them here. */
	const void *provider_ops;
	struct mock_device *next;
	unsigned serial;       /* the fabric device behind it */
	enum rdmamock_personality personality;
	__be64 guid;
	bool ib;               /* its port is InfiniBand, not RoCE */
	uint16_t lid;          /* and that port's LID */
};

struct async_event;

struct mock_context {
	struct verbs_context vctx; /* ends with the ibv_context callers see */
	unsigned magic;
	struct mock_device *mdev;
	struct mock_context *next; /* every open context, in verbs_shared */
	/* Asynchronous events not read yet; async_fd is their doorbell. */
	struct async_event *async_head, *async_tail;
	struct fab_bell async_bell;
	bool dead; /* its device had a fatal error (async.c) */
};

/* The mock device behind an ibv_device or a context (abort on garbage). */
struct mock_device *verbs_device_of(struct ibv_device *dev, const char *call);
struct mock_context *verbs_context_of(struct ibv_context *ctx, const char *call);
/* After its device's fatal error a context is dead: commands fail with
 * EIO; a destroy gives what verbs_dead_destroy says (0 or EIO). */
bool verbs_dead(struct ibv_context *ctx);
int verbs_dead_destroy(struct ibv_context *ctx);
#define VERBS_DEAD_NULL(ctx)               \
	do {                               \
		if (verbs_dead(ctx)) {     \
			errno = EIO;       \
			return NULL;       \
		}                          \
	} while (0)
#define VERBS_DEAD_POSITIVE(ctx)      \
	do {                          \
		if (verbs_dead(ctx))  \
			return EIO;   \
	} while (0)
#define VERBS_DEAD_DESTROY(ctx, kind, obj)               \
	do {                                             \
		int dead_err_ = verbs_dead_destroy(ctx); \
		if (dead_err_) {                         \
			ledger_kept(kind, obj);          \
			return dead_err_;                \
		}                                        \
	} while (0)

/* ---------------------------------------------------------------- objects
 *
 * One lock guards every PD, MR, CQ, channel, SRQ, AH and QP below: the
 * data path crosses the objects of any context, and nothing here is hot.
 * Lock order: verbs_lock, then the fabric's lock (inside fab_* calls),
 * then an object's own mutex (ibv_cq, ibv_qp, ibv_srq). */
void verbs_lock_take(void);
void verbs_lock_take_quiet(void);
void verbs_lock_give(void);

/* What every process of the fabric must find (the fabric's arena keeps
 * it): the live MRs, for key lookups from any requester, the live SRQs,
 * for XRC packets that name one by number, and the open contexts, for a
 * port's events. Under verbs_lock. */
struct verbs_shared {
	struct mock_mr *mrs;
	struct mock_dm *dms; /* for each device's device memory in use */
	struct mock_mw *mws; /* every live memory window, for key lookups */
	struct mock_srq *srqs;
	struct mock_context *contexts;
};
struct verbs_shared *verbs_shared(void);

struct mock_pd {
	struct ibv_pd pd;
	unsigned magic;
	int users; /* QPs, SRQs, AHs and MRs on it: ibv_dealloc_pd is EBUSY */
};

struct mock_mr {
	struct ibv_mr mr;
	unsigned magic;
	struct mock_mr *next; /* every live MR, for key lookups */
	struct mock_pd *mpd;
	pid_t pid;            /* whose memory it is: the process that registered it */
	uint64_t iova;        /* the address the keys' users name; addr for ibv_reg_mr */
	uint64_t host;        /* where iova lies in pid's memory: addr, or in device memory */
	struct mock_dm *dm;   /* the device memory it covers (ibv_reg_dm_mr), or NULL */
	unsigned access;
	int windows;          /* memory windows bound to it: ibv_dereg_mr is EINVAL */
};

/* A memory window (mw.c): a range of a region opened to peers by a key of
 * its own. */
struct mock_mw {
	struct ibv_mw mw;
	unsigned magic;
	struct mock_mw *next;  /* every live window, for key lookups */
	struct mock_pd *mpd;
	uint32_t key;          /* the device's: the key it was last bound with */
	bool valid;            /* type 1 from the start; type 2 while bound */
	struct mock_mr *mr;    /* bound to (a length above 0), or NULL */
	uint64_t addr, length;
	unsigned access;
	struct mock_qp *qp;    /* type 2: the QP that bound it, the only one its key opens to */
};

/* Device memory (dm.c): pages of the process that allocated it, which the
 * program reads and writes directly and the fabric reaches as it reaches
 * registered memory. */
struct mock_dm {
	struct ibv_dm dm;
	unsigned magic;
	struct mock_dm *next; /* every live DM, for its device's total */
	unsigned serial;      /* its device */
	uint8_t *start;       /* the mapping: mlx5dv_init_obj's buf */
	size_t map_len;
	uint64_t length;      /* as asked */
	uint64_t size;        /* what the device set aside, in whole units */
	int users;            /* MRs on it: ibv_free_dm is EBUSY */
};

struct cq_event;

struct mock_channel {
	struct ibv_comp_channel ch;
	unsigned magic;
	struct cq_event *head, *tail; /* one per fired CQ, not yet read */
	struct fab_bell bell;         /* ch.fd: lit while events wait */
	int spinning;                 /* readers in ibv_get_cq_event's spin (cq.c) */
};

struct mock_qp;

/* A receive's message for another process's memory, kept with its
 * completion (verbs_scatter_later): where it goes, and the message. */
#define VERBS_LATER_MAX 8192
#define VERBS_LATER_SEGS 4
#define VERBS_CQE_INLINE 256 /* a message this short rides in the completion */
struct verbs_later {
	int nseg;
	struct {
		pid_t pid;
		uint64_t addr;
		uint32_t len;
	} seg[VERBS_LATER_SEGS];
	uint64_t len;
	const char *data;
};

/* A completion and what polling it frees: a send completion gives back
 * the send-queue slots up to and including its WR. */
struct mock_cqe {
	struct mock_cqe *next;
	struct ibv_wc wc;
	struct mock_qp *qp;
	struct verbs_later later;      /* a receive's message, written when polled */
	char *later_block;             /* its bytes when longer than later_inline */
	char later_inline[VERBS_CQE_INLINE];
	bool is_send;
	uint64_t sq_mark;   /* send WRs posted on qp up to this one */
	uint64_t timestamp; /* the device clock, in cycles of hca_core_clock */
};

struct mock_cq {
	union {
		struct ibv_cq cq;     /* what callers see */
		struct ibv_cq_ex cqx; /* ibv_create_cq_ex's; starts as an ibv_cq */
	};
	unsigned magic;
	int users;                     /* QPs and SRQs on it: ibv_destroy_cq is EBUSY */
	struct mock_cqe *head, *tail;  /* completions not yet polled */
	int count;
	struct mock_cqe *spare;        /* polled ones, for the next (no allocation) */
	int nspare;
	bool armed, solicited_only;
	bool overrun_said;
	bool mlx5;                     /* a ConnectX's: an overrun puts it in error, and
					* arming it sees CQEs not polled yet */
	uint32_t events_reported;      /* read by ibv_get_cq_event */
	uint32_t async_reported;       /* its asynchronous events read */
	/* ibv_create_cq_ex: what the polling API reads, and the entry taken
	 * by start_poll / next_poll until the next one. */
	bool extended;
	uint64_t wc_flags;
	struct mock_cqe *current;
	bool past_producer; /* CQ_EX_BATCH (cq_ex.c): next_poll found none */
	/* mlx5: its ring of CQEs, once mlx5dv_init_obj has handed it to the
	 * program (device/mlx5.h); the list above stays empty from then. */
	struct mlx5_cq_ring *ring;
	uint32_t cqe_size; /* mlx5: 64 or 128 (mlx5dv_create_cq, MLX5_CQE_SIZE) */
};

struct recv_queue;

struct recv_wqe {
	struct recv_wqe *next;
	struct recv_queue *rq; /* whose it is: it goes back there when used */
	uint64_t wr_id;
	uint16_t wqe_index;    /* mlx5: its receive WQE's index, for the CQE */
	int num_sge, cap_sge;
	struct ibv_sge sge[];
};

struct recv_queue {
	struct recv_wqe *head, *tail;
	uint32_t count;
	struct recv_wqe *spare; /* used ones, for the next post (no allocation) */
	uint32_t nspare;
};

struct mock_xrcd {
	struct ibv_xrcd xrcd;
	unsigned magic;
	int users; /* XRC SRQs and QPs on it: ibv_close_xrcd is EBUSY */
};

struct mock_srq {
	struct ibv_srq srq;
	unsigned magic;
	enum ibv_srq_type type;
	struct mock_pd *mpd;
	struct mock_xrcd *xrcd; /* XRC */
	struct mock_cq *cq;     /* XRC: where its receives complete */
	uint32_t srq_num;
	struct recv_queue rq;
	struct ibv_srq_attr attr;   /* max_wr, max_sge as granted; srq_limit (0: not armed) */
	int users;                  /* QPs on it: ibv_destroy_srq is EBUSY */
	uint32_t async_reported;    /* its asynchronous events read */
	struct mock_srq *next;      /* every live SRQ, for XRC lookups */
	struct mlx5_srq_ring *ring;  /* mlx5: its ring, once mlx5dv_init_obj handed it over */
};

/* The source GID a path names (its sgid_index's entry), looked up once
 * when the path is given (ibv_modify_qp's AV, ibv_create_ah), not at
 * every send: the table of a device only grows. */
struct verbs_src {
	bool ok;
	union ibv_gid gid;
	enum ibv_gid_type type;
	uint16_t lid;          /* an InfiniBand port's */
};
void verbs_src_of(struct ibv_context *ctx, uint8_t sgid_index, struct verbs_src *src);

struct mock_ah {
	struct ibv_ah ah;
	unsigned magic;
	struct mock_pd *mpd;
	struct ibv_ah_attr attr;
	struct verbs_src src;
	struct mlx5_wqe_av av;     /* mlx5: the vector mlx5dv_init_obj hands over */
	uint64_t dc_key;           /* a DCI's vector: the DCT's access key and number */
	uint32_t dc_dctn;
};

struct send_batch; /* ibv_wr_start ... ibv_wr_complete (wr.c) */

struct mock_qp {
	union {
		struct ibv_qp qp;     /* what callers see */
		struct ibv_qp_ex qpx; /* for ibv_qp_to_qp_ex; starts as an ibv_qp */
	};
	unsigned magic;
	unsigned dev_serial; /* the fabric device, and what it is */
	enum rdmamock_personality personality;
	bool ib;             /* on an InfiniBand port */
	struct mock_pd *mpd;
	struct mock_cq *scq, *rcq;  /* NULL where an XRC QP has none */
	struct mock_srq *srq;       /* receives come from it */
	struct mock_xrcd *xrcd;     /* XRC_RECV */
	enum ibv_qp_state state;  /* the device's own view; qp.state is libibverbs' */
	struct ibv_qp_attr attr;  /* what ibv_modify_qp set, reported by ibv_query_qp */
	struct ibv_qp_cap cap;
	int sq_sig_all;
	struct recv_queue rq;
	uint64_t sq_posted, sq_freed; /* send-queue occupancy is the difference */
	bool extended;              /* created with send_ops_flags: ibv_wr_* work */
	bool ex_view;               /* ibv_qp_to_qp_ex answers it */
	struct mlx5_qp_ring *ring;  /* mlx5: its work queues, once mlx5dv_init_obj handed them over */
	const struct mock_ah *raw_ah; /* while a UD WQE rung for runs: its vector as an AH */
	/* while ibv_wr_complete posts a request its provider built wrong (a
	 * replayed rdma-core defect, wr.c): the status the device gives it */
	enum ibv_wc_status wr_fails;
	uint64_t send_ops_flags;
	struct send_batch *batch;   /* between ibv_wr_start and _complete */
	uint32_t async_reported;    /* its asynchronous events read */
	/* RC: a request nobody answered waits out the retries, then
	 * completes with RETRY_EXC_ERR; what was posted after it waits
	 * behind it (post.c). stall_gen tells a timer of an old wait. */
	struct stalled_wr *stalled, *stalled_tail;
	uint32_t stall_gen;
	int tries_left;                  /* retries left for the head; -1: no end */
	enum ibv_wc_status stall_status; /* what it fails with: RETRY_EXC_ERR or RNR_... */
	struct verbs_src path_src;       /* attr.ah_attr's source GID */
	/* mlx5 DC (IBV_QPT_DRIVER): MLX5DV_DCTYPE_DCT or _DCI, else 0. A
	 * DCT receives from any DCI that names its number and access key
	 * (its number is the device's from RTR on: qp_num reads 0 before);
	 * a DCI sends as RC does, each WQE to the DCT its vector names (raw_ah
 * while it runs). */
	int dc_type;
	uint64_t dc_key;
	/* mlx5dv_qp_ex_from_ibv_qp_ex's view of an extended QP (wr.c). */
	struct mlx5dv_qp_ex dvx;
};

/* Checked conversions: abort naming the call on NULL or garbage, as the
 * upstream code would crash there. */
struct mock_pd *verbs_pd_of(struct ibv_pd *pd, const char *call);
struct mock_cq *verbs_cq_of(struct ibv_cq *cq, const char *call);
struct mock_qp *verbs_qp_of(struct ibv_qp *qp, const char *call);
struct mock_srq *verbs_srq_of(struct ibv_srq *srq, const char *call);
struct mock_ah *verbs_ah_of(struct ibv_ah *ah, const char *call);

/* The rest run under verbs_lock. */

/* Where [addr, addr + len) of the MR whose key is `key` lives, if that MR
 * is on mpd and allows `access` (0 for a local read): in the memory of
 * the process that registered it, which fab_mem_read/_write reach. */
struct verbs_mem {
	pid_t pid;
	uint64_t addr;
};
bool verbs_mr_map(struct mock_pd *mpd, uint32_t key, uint64_t addr, uint64_t len,
		  unsigned access, struct verbs_mem *at);

/* The device writes a completion to cq; an armed CQ then fires its
 * channel. A receive's message still to be written (later, or NULL) goes
 * with it, copied. */
void verbs_cq_add(struct mock_cq *cq, const struct ibv_wc *wc, struct mock_qp *qp,
		  bool is_send, uint64_t sq_mark, bool solicited, const struct verbs_later *later);
/* Write now the messages this process's CQs keep for pid's memory in
 * [addr, addr + len), which is about to stop being a region. Under the
 * verbs lock. */
void verbs_cq_place_kept(pid_t pid, uint64_t addr, uint64_t len);
/* A completion polled: kept for the CQ's next, or freed. */
void verbs_cqe_release(struct mock_cq *cq, struct mock_cqe *e);
/* Whether the CQ holds no completion, without the lock: what a poll of
 * an empty CQ answers at once (head is written atomically, under the
 * lock, by whoever adds or takes one). */
static inline bool verbs_cq_empty(const struct mock_cq *mcq)
{
	if (__atomic_load_n(&mcq->ring, __ATOMIC_ACQUIRE))
		return !mlx5_cq_ready(mcq);
	return !__atomic_load_n(&mcq->head, __ATOMIC_ACQUIRE);
}
/* mlx5dv_init_obj of a CQ: its ring, made on the first call (what the CQ
 * holds moved into it), described in out: 0, or ENOMEM. */
int verbs_cq_expose(struct ibv_cq *cq, struct mlx5dv_cq *out);
/* A program armed the CQ through its ring's record and the doorbell: as
 * ibv_req_notify_cq, and the event at once when CQEs past the index it
 * armed at are there (the device's rule). */
void verbs_cq_arm_raw(struct mock_cq *mcq, bool solicited_only, bool pending);
/* mlx5dv_init_obj of a QP (qp.c): its work queues and doorbell. */
int verbs_qp_expose(struct ibv_qp *qp, struct mlx5dv_qp *out);
struct mlx5dv_qp_ex *verbs_qp_ex_dv(struct ibv_qp_ex *qpx);
struct ibv_qp *verbs_create_dc_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				  int dc_type, uint64_t access_key);
/* mlx5dv_init_obj of an SRQ (srq.c). */
int verbs_srq_expose(struct ibv_srq *srq, struct mlx5dv_srq *out);
/* mlx5dv_init_obj of an AH (ah.c). */
int verbs_ah_expose(struct ibv_ah *ah, struct mlx5dv_ah *out);
/* Device memory (dm.c): the context's operations, mlx5dv_alloc_dm's MEMIC
 * and mlx5dv_init_obj of a DM. */
void verbs_set_dm_ops(struct verbs_context *vctx);
struct ibv_dm *verbs_alloc_dm_memic(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
int verbs_dm_expose(struct ibv_dm *dm, struct mlx5dv_dm *out);
/* A new MR on mpd (mr.c): its keys, listed for lookups, in the ledger as
 * made by call; NULL and ENOMEM when there is no room. addr is what the
 * caller sees in it; host is where iova lies in this process. */
struct ibv_mr *verbs_mr_add(struct mock_pd *mpd, struct ibv_pd *pd, void *addr, uint64_t host,
			    size_t length, uint64_t iova, unsigned access, struct mock_dm *dm,
			    const char *call);
/* The kernel's checks of an MR's access flags (ib_check_mr_access): 0 or
 * the errno. */
int verbs_mr_check_access(unsigned access);
/* Memory windows (mw.c), under verbs_lock but for the ops. The device's
 * bind of wr (IBV_WR_BIND_MW) on mqp, and the invalidation of a type 2
 * window's key: whether they took. verbs_rkey_map resolves a responder's
 * rkey, a window's or a region's, as verbs_mr_map does. */
void verbs_set_mw_ops(struct verbs_context *vctx);
bool verbs_mw_bind(struct mock_qp *mqp, const struct ibv_send_wr *wr);
bool verbs_mw_invalidate(uint32_t key);
bool verbs_rkey_map(struct mock_qp *mqp, uint32_t key, uint64_t addr, uint64_t len, unsigned access,
		    struct verbs_mem *at);
bool verbs_mw_key_in_use(uint32_t key);
void verbs_mw_forget_qp(const struct mock_qp *mqp);
/* A new key whose index no region or window has (mr.c), and the live
 * region a pointer names, or NULL. */
uint32_t verbs_new_key(void);
struct mock_mr *verbs_mr_find(const struct ibv_mr *mr);
/* The doorbell register of this process (post.c), NULL where there is none. */
void *verbs_doorbell_page(void);
/* A ring's receive WQEs the device has not taken, onto the QP's list (post.c). */
void verbs_rq_pull(struct mock_qp *mqp, bool all);
/* The oldest completion, taken off the CQ (its send-queue slots freed);
 * NULL when the CQ is empty. */
struct mock_cqe *verbs_cq_pop(struct mock_cq *mcq);
void verbs_cq_push_stale(struct mock_cq *mcq);
/* Drop the completions of qp that are not polled yet (reset, destroy). */
void verbs_cq_forget_qp(struct mock_cq *cq, struct mock_qp *qp);

/* The QP enters ERR (flushing its receive queue) or, for a UC or UD send
 * queue error, SQE. Also tells the fabric, and raises the events the
 * kernel raises (last WQE reached for a QP on an SRQ). */
void verbs_qp_error(struct mock_qp *mqp, enum ibv_qp_state state);
/* Complete every posted receive with IBV_WC_WR_FLUSH_ERR. */
void verbs_qp_flush_recvs(struct mock_qp *mqp);

/* Scatter len bytes of data (NULL: only check) through lkeys of mpd:
 * LOC_LEN_ERR if the buffers hold less, LOC_PROT_ERR on a bad key. */
enum ibv_wc_status verbs_scatter(struct mock_pd *mpd, const struct ibv_sge *sge, int num_sge,
				 const char *data, uint64_t len);

/* verbs_scatter for a receive: a message for another process's memory,
 * up to VERBS_LATER_MAX bytes, is not written there at once (a system
 * call, process_vm_writev) but described in *later (nseg 0: written
 * already), for its completion to keep; the process that polls the
 * completion writes it, which is most often the receiver itself, and
 * then a copy. The program sees the message in place when it sees the
 * completion, as with hardware; only a program that reads a receive
 * buffer before its completion could tell. Keys and lengths are checked
 * now. */
enum ibv_wc_status verbs_scatter_later(struct mock_pd *mpd, const struct ibv_sge *sge, int num_sge,
				       const char *data, uint64_t len, struct verbs_later *later);
/* A used receive: kept for its queue's next post, or freed. */
void verbs_rq_recycle(struct recv_wqe *w);

/* Set by a copy into or out of a process that has just died (ESRCH): the
 * packet being received had nobody to answer it. */
extern __thread bool verbs_target_gone;

/* Receive queues (a QP's own, or an SRQ's). */
/* owner: the arena owner of the queue's QP or SRQ, whose receives they
 * are though another process (the one delivering) may make them. */
int verbs_rq_post(struct recv_queue *rq, int owner, const struct ibv_recv_wr *wr, uint32_t max_wr,
		  uint32_t max_sge, const char *call);
struct recv_wqe *verbs_rq_take(struct recv_queue *rq);
void verbs_rq_drop(struct recv_queue *rq);

/* A receive for qp: from its SRQ (which may then raise its limit event)
 * or from its own queue. NULL when none is posted. */
struct recv_wqe *verbs_srq_take(struct mock_srq *msrq);
struct mock_srq *verbs_srq_by_num(uint32_t srq_num);

/* The fabric's receiver for a QP (recv.c): the responder. */
void verbs_qp_receive(void *owner, const struct fab_packet *pkt, struct fab_response *resp);

/* Post one send request (post.c), after the checks ibv_post_send makes. */
int verbs_post_one_send(struct mock_qp *mqp, const struct ibv_send_wr *wr);
/* The QP's waiting requests end: flushed (WR_FLUSH_ERR) as the QP enters
 * ERR, or dropped (complete false) on RESET or destroy. */
void verbs_qp_end_stall(struct mock_qp *mqp, bool complete);
/* Whether a send waiting for its retries reads through lkey (post.c). */
bool verbs_stalled_uses_key(const struct mock_qp *mqp, uint32_t lkey);

/* Asynchronous events (async.c): queue one on the object's context. */
void verbs_async_qp(struct mock_qp *mqp, enum ibv_event_type type);
void verbs_async_srq(struct mock_srq *msrq, enum ibv_event_type type);
void verbs_async_cq(struct mock_cq *mcq, enum ibv_event_type type);
/* Destroying an object waits for the acks of the events read for it, as
 * upstream does (and says so if it waits long). */
void verbs_wait_async_acks(pthread_mutex_t *mutex, pthread_cond_t *cond,
			   const uint32_t *completed, uint32_t reported, const char *what,
			   const void *obj);
/* Drop the unread events of an object that goes (every event: NULL). */
void verbs_async_forget(struct ibv_context *ctx, const void *obj);

/* The GID table (device.c): like ibv_query_gid_ex, 0 or a positive errno
 * (ENODATA for an empty entry below gid_tbl_len, EINVAL past it). */
int verbs_gid(struct mock_context *mc, uint32_t port, uint32_t index, union ibv_gid *gid,
	      enum ibv_gid_type *type);

/* The polling API of a CQ from ibv_create_cq_ex (cq_ex.c), and the device
 * clock its timestamps read, in cycles of hca_core_clock (0 without one). */
void verbs_cq_ex_init(struct mock_cq *mcq);
uint64_t verbs_device_clock(struct ibv_context *context);

/* The extended QP's ibv_wr_* calls (wr.c). */
void verbs_qp_ex_init(struct mock_qp *mqp);
void verbs_qp_ex_free(struct mock_qp *mqp);

/* context->ops and verbs_context ops (post.c, cq.c, srq.c, ...). */
int verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
struct ibv_cq_ex *verbs_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *verbs_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
struct ibv_srq *verbs_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr);
struct ibv_xrcd *verbs_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
int verbs_close_xrcd(struct ibv_xrcd *xrcd);
int verbs_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
int verbs_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
/* The operations the mock does not implement, each failing as upstream's
 * inline wrapper or dummy op would and saying so once (unsupported.c). */
void verbs_set_unsupported_ops(struct verbs_context *vctx);

#endif
