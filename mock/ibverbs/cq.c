/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: completion channels, completion queues and their events.
 *
 * A channel's fd is the doorbell of its queue of fired CQs (fabric.h):
 * pollable, readable while an event waits (rung by whichever process
 * completed the work), and O_NONBLOCK on it makes ibv_get_cq_event fail
 * with EAGAIN, as a read of the kernel's completion-event file does. */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs.h"

#define LIB "ibverbs"

struct cq_event {
	struct cq_event *next;
	struct mock_cq *cq;
};

static void fire(struct mock_cq *cq);

static struct mock_channel *channel_of(struct ibv_comp_channel *channel, const char *call)
{
	struct mock_channel *mch = (struct mock_channel *)channel;

	MOCK_REQUIRE(channel, call, "channel is NULL (upstream dereferences it)");
	ledger_require(LEDGER_COMP_CHANNEL, channel, call);
	MOCK_REQUIRE(mch->magic == VERBS_CHANNEL_MAGIC, call,
		     "%p is not a channel from ibv_create_comp_channel", (void *)channel);
	return mch;
}

struct mock_cq *verbs_cq_of(struct ibv_cq *cq, const char *call)
{
	struct mock_cq *mcq = (struct mock_cq *)cq;

	MOCK_REQUIRE(cq, call, "cq is NULL (upstream dereferences it)");
	ledger_require(LEDGER_CQ, cq, call);
	MOCK_REQUIRE(mcq->magic == VERBS_CQ_MAGIC, call,
		     "%p is not a completion queue from ibv_create_cq", (void *)cq);
	return mcq;
}



/* Write a kept message where it goes (a copy in the process that polls,
 * or process_vm_writev into another; a process gone meanwhile has nobody
 * to read it). Late, as its region or its QP or CQ goes, the program may
 * have unmapped the memory already (the device would have written it at
 * arrival, into pages the program no longer sees): then it is dropped. */
static void deliver_as(struct mock_cqe *e, bool late)
{
	const char *data = e->later.data;

	for (int i = 0; i < e->later.nseg; i++) {
		if (late)
			fab_mem_write_mapped(e->later.seg[i].pid, e->later.seg[i].addr, data,
					     e->later.seg[i].len);
		else
			fab_mem_write(e->later.seg[i].pid, e->later.seg[i].addr, data, e->later.seg[i].len);
		data += e->later.seg[i].len;
	}
	e->later.nseg = 0;
	fab_free(e->later_block);
	e->later_block = NULL;
}

static void deliver(struct mock_cqe *e)
{
	deliver_as(e, false);
}

static void deliver_late(struct mock_cqe *e)
{
	deliver_as(e, true);
}

/* The device placed a received message when it arrived; the mock writes
 * one for another process when it is polled. Before this process's memory
 * in [addr, addr + len) stops being a region (ibv_dereg_mr, a new
 * translation), what is kept for it is written, as it would be there
 * already: nothing is written once the program may have unmapped it. */
struct placing {
	pid_t pid;
	uint64_t addr, len;
};

static bool kept_for(const struct mock_cqe *e, const struct placing *at)
{
	for (int i = 0; i < e->later.nseg; i++)
		if (e->later.seg[i].pid == at->pid && e->later.seg[i].addr < at->addr + at->len &&
		    at->addr < e->later.seg[i].addr + e->later.seg[i].len)
			return true;
	return false;
}

static bool place_kept(const void *cq, void *arg)
{
	for (struct mock_cqe *e = ((const struct mock_cq *)cq)->head; e; e = e->next)
		if (kept_for(e, arg))
			deliver_late(e);
	return false;
}

void verbs_cq_place_kept(pid_t pid, uint64_t addr, uint64_t len)
{
	struct placing at = { pid, addr, len };

	ledger_each(LEDGER_CQ, place_kept, &at);
}

#define SPARE_MAX 64

void verbs_cqe_release(struct mock_cq *cq, struct mock_cqe *e)
{
	if (!e)
		return;
	if (cq->nspare >= SPARE_MAX) {
		fab_free(e);
		return;
	}
	e->next = cq->spare;
	cq->spare = e;
	cq->nspare++;
}

MOCK_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct mock_channel *mch;

	verbs_context_of(context, "ibv_create_comp_channel");
	FAULT_NULL(LIB, "ibv_create_comp_channel");
	mch = fab_alloc(sizeof *mch);
	if (!mch) {
		errno = ENOMEM;
		return NULL;
	}
	mch->ch.fd = fab_bell_open(&mch->bell);
	if (mch->ch.fd < 0) {
		errno = -mch->ch.fd;
		fab_free(mch);
		return NULL;
	}
	mch->magic = VERBS_CHANNEL_MAGIC;
	mch->ch.context = context;
	ledger_add(LEDGER_COMP_CHANNEL, &mch->ch, "ibv_create_comp_channel");
	return &mch->ch;
}

/* Upstream: EBUSY while CQs use it (refcnt, under the context's mutex). */
MOCK_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct mock_channel *mch = channel_of(channel, "ibv_destroy_comp_channel");
	int ret = 0;

	ledger_destroying(LEDGER_COMP_CHANNEL, channel);
	FAULT_POSITIVE(LIB, "ibv_destroy_comp_channel");
	pthread_mutex_lock(&channel->context->mutex);
	if (channel->refcnt)
		ret = EBUSY;
	pthread_mutex_unlock(&channel->context->mutex);
	if (ret) {
		/* Held by CQs a dead device keeps: kept with them. */
		if (verbs_dead(channel->context))
			ledger_kept(LEDGER_COMP_CHANNEL, channel);
		return ret;
	}
	/* A CQ leaves its unread events when destroyed, so none remain. */
	ledger_del(LEDGER_COMP_CHANNEL, channel, "ibv_destroy_comp_channel");
	mch->magic = 0;
	verbs_lock_take();
	fab_bell_close(&mch->bell);
	verbs_lock_give();
	fab_free(mch);
	return 0;
}

/* mlx5 and rxe both report the ring they allocate: a power of two, less
 * the one entry that tells full from empty. */
static int ring_size(int cqe)
{
	int n = 1;

	while (n < cqe + 1)
		n <<= 1;
	return n - 1;
}

/* The completion fields each device can report through the polling API:
 * rxe the standard ones; mlx5 the device clock's timestamp too. */
static uint64_t wc_flags_supported(const struct fab_profile *p)
{
	return IBV_WC_STANDARD_FLAGS | (p->completion_timestamp ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : 0);
}

/* What uverbs and the drivers refuse: 0 when the CQ may be made. */
static int check_cq(struct mock_context *mc, const struct ibv_cq_init_attr_ex *attr)
{
	const struct fab_profile *p = fab_profile_of(mc->mdev->personality);
	struct ibv_context *context = &mc->vctx.context;
	int cqe = (int)attr->cqe;

	if (attr->channel)
		channel_of(attr->channel, "ibv_create_cq");
	/* Both refuse an empty CQ (mlx5's create_cq: "CQE invalid"). */
	if (attr->cqe > (uint32_t)p->max_cqe || cqe == 0 ||
	    attr->comp_vector >= (uint32_t)context->num_comp_vectors ||
	    (attr->channel && attr->channel->context != context))
		return EINVAL;
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))
		return EINVAL;
	/* mlx5's create_cq refuses a flag it does not know (EINVAL). Of the
	 * flags, libibverbs' command gives the kernel IGNORE_OVERRUN alone
	 * (ibv_icmd_create_cq_ex), so rxe ignores the others, and
	 * rxe_create_cq refuses any flag it is given. The mock models no
	 * ignored overrun. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && mc->mdev->personality == RDMAMOCK_MLX5 &&
	    (attr->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)))
		return EINVAL;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (attr->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)) {
		if (mc->mdev->personality == RDMAMOCK_MLX5)
			mock_log("ibv_create_cq_ex: IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN is not modelled by the mock");
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) && attr->parent_domain) {
		mock_log("ibv_create_cq_ex: parent domains are not modelled by the mock");
		return EOPNOTSUPP;
	}
	if (attr->wc_flags & ~wc_flags_supported(p))
		return EOPNOTSUPP;
	return 0;
}

/* dv: mlx5dv_create_cq's attributes, or NULL. */
static struct mock_cq *create_cq(struct ibv_context *context, const struct ibv_cq_init_attr_ex *attr,
				 bool extended, const struct mlx5dv_cq_init_attr *dv)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_create_cq");
	struct ibv_comp_channel *channel = attr->channel;
	struct mock_cq *mcq = NULL;
	uint32_t cqe_size = 64;
	int err = check_cq(mc, attr);

	if (!err && mc->mdev->personality == RDMAMOCK_MLX5)
		err = mlx5_cq_attr(dv, &cqe_size);

	if (!err && !(mcq = fab_alloc(sizeof *mcq)))
		err = ENOMEM;
	if (err) {
		errno = err;
		return NULL;
	}
	mcq->magic = VERBS_CQ_MAGIC;
	mcq->cqe_size = cqe_size;
	mcq->mlx5 = mc->mdev->personality == RDMAMOCK_MLX5;
	mcq->cq.cqe = ring_size(attr->cqe ? (int)attr->cqe : 1);
	/* What libibverbs' verbs_init_cq sets. */
	mcq->cq.context = context;
	mcq->cq.channel = channel;
	mcq->cq.cq_context = attr->cq_context;
	pthread_mutex_init(&mcq->cq.mutex, NULL);
	pthread_cond_init(&mcq->cq.cond, NULL);
	if (extended) {
		mcq->extended = true;
		mcq->wc_flags = attr->wc_flags;
		verbs_cq_ex_init(mcq);
	}
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	ledger_add(LEDGER_CQ, &mcq->cq, extended ? "ibv_create_cq_ex" : "ibv_create_cq");
	return mcq;
}

MOCK_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
					 struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = (uint32_t)cqe,
		.cq_context = cq_context,
		.channel = channel,
		.comp_vector = (uint32_t)comp_vector,
	};
	struct mock_cq *mcq;

	verbs_context_of(context, "ibv_create_cq");
	FAULT_NULL(LIB, "ibv_create_cq");
	VERBS_DEAD_NULL(context);
	if (cqe < 0 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	mcq = create_cq(context, &attr, false, NULL);
	return mcq ? &mcq->cq : NULL;
}

/* verbs_context's create_cq_ex, behind the header's ibv_create_cq_ex. */
struct ibv_cq_ex *verbs_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	struct mock_cq *mcq;

	verbs_context_of(context, "ibv_create_cq_ex");
	if (mock_fault(FAULT_NAME(LIB, "ibv_create_cq_ex"), &errno))
		return NULL;
	MOCK_REQUIRE(attr, "ibv_create_cq_ex", "cq_attr is NULL (upstream dereferences it)");
	mcq = create_cq(context, attr, true, NULL);
	return mcq ? &mcq->cqx : NULL;
}

/* mlx5dv_create_cq, on an mlx5 device: ibv_create_cq_ex's checks, then
 * the provider's of the mlx5 attributes. */
static struct ibv_cq_ex *create_cq_dv(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr,
				      struct mlx5dv_cq_init_attr *dv)
{
	struct mock_cq *mcq;

	verbs_context_of(context, "mlx5dv_create_cq");
	VERBS_DEAD_NULL(context);
	MOCK_REQUIRE(attr, "mlx5dv_create_cq", "cq_attr is NULL (upstream dereferences it)");
	mcq = create_cq(context, attr, true, dv);
	return mcq ? &mcq->cqx : NULL;
}

/* Unlink and free the queued events of cq: the kernel drops a CQ's unread
 * events when the CQ goes. */
static void drop_events(struct mock_channel *mch, struct mock_cq *cq)
{
	struct cq_event **pos = &mch->head, *ev;

	mch->tail = NULL;
	while ((ev = *pos)) {
		if (ev->cq == cq) {
			__atomic_store_n(pos, ev->next, __ATOMIC_RELAXED); /* may be the head */
			fab_free(ev);
		} else {
			mch->tail = ev;
			pos = &ev->next;
		}
	}
	if (!mch->head)
		fab_bell_clear(&mch->bell);
}

MOCK_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct mock_cq *mcq = verbs_cq_of(cq, "ibv_destroy_cq");
	struct ibv_comp_channel *channel = cq->channel;
	uint32_t reported, async_reported;

	ledger_destroying(LEDGER_CQ, cq);
	FAULT_POSITIVE(LIB, "ibv_destroy_cq");
	VERBS_DEAD_DESTROY(cq->context, LEDGER_CQ, cq);
	verbs_lock_take();
	if (mcq->users) { /* ib_destroy_cq_user: a QP or an SRQ still uses it */
		verbs_lock_give();
		return EBUSY;
	}
	if (channel)
		drop_events((struct mock_channel *)channel, mcq);
	verbs_async_forget(cq->context, cq);
	fab_free(mcq->current);
	mcq->current = NULL;
	mlx5_cq_free(mcq);
	while (mcq->head) {
		struct mock_cqe *e = mcq->head;

		__atomic_store_n(&mcq->head, e->next, __ATOMIC_RELAXED);
		deliver_late(e);
		fab_free(e);
	}
	while (mcq->spare) {
		struct mock_cqe *e = mcq->spare;

		mcq->spare = e->next;
		fab_free(e);
	}
	mcq->magic = 0;
	ledger_del(LEDGER_CQ, cq, "ibv_destroy_cq");
	reported = mcq->events_reported;
	async_reported = mcq->async_reported;
	verbs_lock_give();

	/* Upstream blocks until every event it read for the CQ is acked, the
	 * completion events and the asynchronous ones; so do we, and say so
	 * if it takes long, since that is usually a missing ack. */
	verbs_wait_async_acks(&cq->mutex, &cq->cond, &cq->comp_events_completed, reported,
			      "ibv_destroy_cq", cq);
	verbs_wait_async_acks(&cq->mutex, &cq->cond, &cq->async_events_completed, async_reported,
			      "ibv_destroy_cq", cq);
	if (channel) {
		pthread_mutex_lock(&channel->context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&channel->context->mutex);
	}
	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	fab_free(mcq);
	return 0;
}

/* The ring grows or shrinks, but never below what it holds now. */
MOCK_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct mock_cq *mcq = verbs_cq_of(cq, "ibv_resize_cq");
	const struct fab_profile *p;
	int err = 0;

	FAULT_POSITIVE(LIB, "ibv_resize_cq");
	p = fab_profile_of(verbs_context_of(cq->context, "ibv_resize_cq")->mdev->personality);
	if (fab_replay_lacks(verbs_context_of(cq->context, "ibv_resize_cq")->mdev->personality,
			     "resize-cq"))
		return EOPNOTSUPP; /* libibverbs' dummy op */
	verbs_lock_take();
	if (cqe < 1 || cqe > p->max_cqe ||
	    (uint32_t)cqe < (mcq->ring ? mlx5_cq_pending(mcq) : (uint32_t)mcq->count))
		err = EINVAL;
	else if (mcq->ring)
		err = mlx5_cq_resize(mcq, (uint32_t)ring_size(cqe) + 1);
	if (!err)
		cq->cqe = ring_size(cqe);
	verbs_lock_give();
	return err;
}

/* A blocking wait for an event first spins, up to SPIN_NS: an event that
 * comes meanwhile (the other end of a ping-pong answering) is taken with
 * no sleep and no wakeup, and its doorbell never rung (verbs_cq_add sees
 * the spinner). The spinner leaves before it sleeps and looks once more,
 * and the one who queues an event looks for it after queueing: one of
 * them sees the other (both sequentially consistent). */
#define SPIN_NS 50000

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool spin_for_event(struct mock_channel *mch)
{
	uint64_t until = 0;
	bool got = false;

	__atomic_add_fetch(&mch->spinning, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; !got; i++) {
		got = __atomic_load_n(&mch->head, __ATOMIC_SEQ_CST) != NULL;
		if (got || (i & 63) != 63)
			fab_cpu_relax();
		else if (!until)
			until = mono_ns() + SPIN_NS;
		else if (mono_ns() > until)
			break;
	}
	__atomic_sub_fetch(&mch->spinning, 1, __ATOMIC_SEQ_CST);
	return got || __atomic_load_n(&mch->head, __ATOMIC_SEQ_CST) != NULL;
}

MOCK_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
				 void **cq_context)
{
	struct mock_channel *mch = channel_of(channel, "ibv_get_cq_event");
	struct cq_event *ev;
	int flags;

	FAULT_MINUS1(LIB, "ibv_get_cq_event");
	MOCK_REQUIRE(cq && cq_context, "ibv_get_cq_event",
		     "cq or cq_context is NULL (upstream stores through both)");
	for (;;) {
		verbs_lock_take();
		ev = mch->head;
		if (ev) {
			__atomic_store_n(&mch->head, ev->next, __ATOMIC_RELAXED);
			if (!mch->head) {
				mch->tail = NULL;
				fab_bell_clear(&mch->bell);
			}
			ev->cq->events_reported++;
			*cq = &ev->cq->cq;
			*cq_context = ev->cq->cq.cq_context;
			verbs_lock_give();
			fab_free(ev);
			return 0;
		}
		verbs_lock_give();
		/* A channel made O_NONBLOCK answers at once. */
		flags = fcntl(channel->fd, F_GETFL);
		if (flags >= 0 && (flags & O_NONBLOCK))
			return mock_errno(EAGAIN);
		if (!spin_for_event(mch) && mock_wait_readable(channel->fd))
			return -1;
	}
}

/* As upstream: count the acks under the CQ's own mutex, wake a destroy. */
MOCK_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	MOCK_REQUIRE(cq, "ibv_ack_cq_events", "cq is NULL (upstream dereferences it)");
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

int verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct mock_cq *mcq = verbs_cq_of(cq, "ibv_req_notify_cq");

	FAULT_POSITIVE(LIB, "ibv_req_notify_cq");
	verbs_lock_take();
	/* Arming again for any completion widens a solicited-only arm. */
	mcq->solicited_only = mcq->armed ? mcq->solicited_only && solicited_only : solicited_only;
	mcq->armed = true;
	/* A ConnectX is armed at the consumer index (libmlx5's mlx5_arm_cq
	 * writes it into the arm doorbell): CQEs already past it fire the
	 * event at once, so a program that polls and then arms misses
	 * none (Open MPI's udcm does so). rxe's arm looks only ahead. */
	if (mcq->mlx5 && (mcq->ring ? mlx5_cq_pending(mcq) : (uint32_t)mcq->count))
		fire(mcq);
	verbs_lock_give();
	return 0;
}

/* A completion record: a spare one, or a new one owned as the CQ. */
static struct mock_cqe *cqe_new(struct mock_cq *cq)
{
	struct mock_cqe *e = cq->spare;

	if (!e)
		return fab_alloc_owned(fab_owner_of(cq), sizeof *e);
	cq->spare = e->next;
	cq->nspare--;
	memset(e, 0, offsetof(struct mock_cqe, later_inline));
	return e;
}

/* The oldest completion of the list, its message written. */
static struct mock_cqe *list_pop(struct mock_cq *mcq)
{
	struct mock_cqe *e = mcq->head;

	if (!e)
		return NULL;
	__atomic_store_n(&mcq->head, e->next, __ATOMIC_RELAXED);
	if (!mcq->head)
		mcq->tail = NULL;
	mcq->count--;
	/* A receive's message, kept for the poller, is in place before the
	 * program sees its completion. */
	deliver(e);
	return e;
}

/* The next CQE of a ring, as a completion record. */
static struct mock_cqe *ring_pop(struct mock_cq *mcq)
{
	struct mock_cqe *e;

	if (!mlx5_cq_ready(mcq) || !(e = cqe_new(mcq)))
		return NULL;
	if (!mlx5_cq_read(mcq, e)) {
		verbs_cqe_release(mcq, e);
		return NULL;
	}
	return e;
}

/* A slot read past the producer: a completion of zeros, oldest of all
 * (CQ_EX_BATCH, cq_ex.c). */
void verbs_cq_push_stale(struct mock_cq *mcq)
{
	struct mock_cqe *e = cqe_new(mcq);

	if (!e)
		return;
	memset(e, 0, offsetof(struct mock_cqe, later_inline));
	e->next = mcq->head;
	if (!mcq->tail)
		mcq->tail = e;
	__atomic_store_n(&mcq->head, e, __ATOMIC_RELAXED);
	mcq->count++;
}

struct mock_cqe *verbs_cq_pop(struct mock_cq *mcq)
{
	struct mock_cqe *e = mcq->ring ? ring_pop(mcq) : list_pop(mcq);

	/* Polling a send completion frees its send-queue slots. */
	if (e && e->is_send && e->sq_mark > e->qp->sq_freed)
		e->qp->sq_freed = e->sq_mark;
	return e;
}

/* The WQE a completion is of, as its CQE gives it: a send's index in its
 * queue (its first block when the QP has its ring; else the mock's send
 * queue, one slot a WR); a receive's, which verbs_cq_add is given as its
 * mark. */
static uint16_t wqe_counter(const struct mock_qp *qp, bool is_send, uint64_t mark)
{
	if (!is_send)
		return (uint16_t)mark;
	return qp && qp->ring ? mlx5_qp_wqe_index(qp, mark) : (uint16_t)(mark - 1);
}

int verbs_cq_expose(struct ibv_cq *cq, struct mlx5dv_cq *out)
{
	struct mock_cq *mcq = verbs_cq_of(cq, "mlx5dv_init_obj");
	struct mock_cqe *e;
	int err = 0;

	verbs_lock_take();
	if (!mcq->ring && !(err = mlx5_cq_make_ring(mcq))) {
		/* In order, each message written now: the program polls the
		 * ring without a call. */
		while ((e = list_pop(mcq))) {
			mlx5_cq_write(mcq, &e->wc, e->qp, e->is_send, e->sq_mark, false,
				      wqe_counter(e->qp, e->is_send, e->sq_mark), e->timestamp);
			verbs_cqe_release(mcq, e);
		}
	}
	if (!err)
		mlx5_cq_describe(mcq, out, verbs_doorbell_page());
	verbs_lock_give();
	return err;
}

void verbs_cq_arm_raw(struct mock_cq *mcq, bool solicited_only, bool pending)
{
	mcq->armed = true;
	mcq->solicited_only = solicited_only;
	if (pending)
		fire(mcq);
}

int verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct mock_cq *mcq = verbs_cq_of(cq, "ibv_poll_cq");
	struct mock_cqe *e;
	int n = 0;

	FAULT_MINUS1(LIB, "ibv_poll_cq");
	MOCK_REQUIRE(wc || num_entries <= 0, "ibv_poll_cq",
		     "wc is NULL (upstream writes the completions there)");
	/* An empty CQ is answered without the lock, as hardware's is by a
	 * look at the next CQE's owner bit: a program that polls reads one
	 * cache line, and the process completing its work never waits for
	 * it (nor is the poll activity: fab_clock_busy). */
	if (verbs_cq_empty(mcq))
		return 0;
	verbs_lock_take_quiet();
	while (n < num_entries && (e = verbs_cq_pop(mcq))) {
		wc[n++] = e->wc;
		verbs_cqe_release(mcq, e);
	}
	if (n)
		fab_clock_busy();
	verbs_lock_give();
	return n;
}

/* The fault rdmamock/ibverbs/cq_err, reached at each completion written:
 * aimed by the completing QP's device, number, process and connection. */
static bool cq_fault(const struct mock_qp *qp)
{
	struct fault_where where = { .port = -1, .qpn = qp ? (int64_t)qp->qp.qp_num : -1 };
	struct sockaddr_storage server;
	struct fab_device_info dev;
	struct fault_action act;

	if (!fault_at("rdmamock/ibverbs/cq_err"))
		return false;
	if (qp && !fab_device_by_serial(qp->dev_serial, &dev))
		where.dev = dev.name;
	if (qp && fab_qp_server(qp->qp.qp_num, &server, &where.port))
		where.addr = (const struct sockaddr *)&server;
	return fault_fire("rdmamock/ibverbs/cq_err", &where, &act);
}

/* Keep the message with its completion; false when there is no room for
 * it (then it is written at once). */
static bool keep(struct mock_cqe *e, const struct verbs_later *later, int owner)
{
	char *to = e->later_inline;

	if (later->len > sizeof e->later_inline) {
		if (!(e->later_block = fab_alloc_owned(owner, (size_t)later->len)))
			return false;
		to = e->later_block;
	}
	memcpy(to, later->data, (size_t)later->len);
	e->later = *later;
	e->later.data = to;
	return true;
}

/* A message that could not be kept is written at once. */
static void deliver_now(const struct verbs_later *later)
{
	struct mock_cqe e = { .later = *later };

	deliver(&e);
}

/* The list's newest completion; false when there is no memory for it. */
static bool list_push(struct mock_cq *cq, const struct ibv_wc *wc, struct mock_qp *qp,
		      bool is_send, uint64_t sq_mark, const struct verbs_later *later)
{
	struct mock_cqe *e = cqe_new(cq);

	if (!e)
		return false;
	if (later && !keep(e, later, fab_owner_of(cq)))
		deliver_now(later);
	e->wc = *wc;
	e->qp = qp;
	e->is_send = is_send;
	e->sq_mark = sq_mark;
	e->timestamp = verbs_device_clock(cq->cq.context);
	if (cq->tail)
		cq->tail->next = e;
	else
		__atomic_store_n(&cq->head, e, __ATOMIC_RELEASE); /* a poller looks without the lock */
	cq->tail = e;
	cq->count++;
	return true;
}

static bool cq_full(const struct mock_cq *cq)
{
	return cq->ring ? mlx5_cq_full(cq) : cq->count >= cq->cq.cqe;
}

void verbs_cq_add(struct mock_cq *cq, const struct ibv_wc *wc, struct mock_qp *qp,
		  bool is_send, uint64_t sq_mark, bool solicited, const struct verbs_later *later)
{

	/* A full CQ overruns: the completion is lost and the device raises
	 * IBV_EVENT_CQ_ERR, once per completion it could not write, as
	 * rxe_cq_post does; the QP that completed goes on. An mlx5 CQ's
	 * overrun puts it in the error state instead: one CQ_ERR event (the
	 * firmware's CQ_ERROR), and it writes no CQE again. The fault
	 * rdmamock/ibverbs/cq_err makes a CQ overrun that has room. */
	if (cq->mlx5 && cq->overrun_said) {
		if (later)
			deliver_now(later);
		return;
	}
	if (cq_full(cq) || cq_fault(qp)) {
		/* The message was written all the same. */
		if (later)
			deliver_now(later);
		if (!cq->overrun_said)
			mock_log("CQ %p overrun (%d entries): completions are lost", (void *)&cq->cq,
				 cq->cq.cqe);
		cq->overrun_said = true;
		verbs_async_cq(cq, IBV_EVENT_CQ_ERR);
		return;
	}
	if (cq->ring) {
		/* A program may poll the ring itself: the message is in place
		 * before the CQE. */
		if (later)
			deliver_now(later);
		mlx5_cq_write(cq, wc, qp, is_send, sq_mark, solicited, wqe_counter(qp, is_send, sq_mark),
			      verbs_device_clock(cq->cq.context));
	} else if (!list_push(cq, wc, qp, is_send, sq_mark, later)) {
		mock_log("out of memory: a completion for QP %u lost", wc->qp_num);
		if (later)
			deliver_now(later);
		return;
	}

	/* An error completion fires a solicited-only arm too, as the IB spec
	 * asks. siw never sees a receive as solicited
	 * (siw_rqe_complete: CQ_ARM_SOLICITED, replayed). */
	if (!is_send && !cq->mlx5 && fab_replay_deviates(RDMAMOCK_GENERIC, "CQ_ARM_SOLICITED"))
		solicited = false;
	if (!cq->armed || (cq->solicited_only && !solicited && wc->status == IBV_WC_SUCCESS))
		return;
	fire(cq);
}

/* The armed CQ's event: disarmed, one event on its channel. */
static void fire(struct mock_cq *cq)
{
	struct mock_channel *mch = (struct mock_channel *)cq->cq.channel;
	struct cq_event *ev;

	cq->armed = false;
	if (!mch)
		return;
	ev = fab_alloc_owned(fab_owner_of(mch), sizeof *ev);
	if (!ev) {
		mock_log("out of memory: a completion event for CQ %p lost", (void *)&cq->cq);
		return;
	}
	ev->cq = cq;
	if (mch->tail)
		mch->tail->next = ev;
	else
		__atomic_store_n(&mch->head, ev, __ATOMIC_SEQ_CST);
	mch->tail = ev;
	/* A reader spinning in ibv_get_cq_event takes it without the bell. */
	if (!__atomic_load_n(&mch->spinning, __ATOMIC_SEQ_CST))
		fab_bell_ring(&mch->bell);
}

void verbs_cq_forget_qp(struct mock_cq *cq, struct mock_qp *qp)
{
	struct mock_cqe **pos = &cq->head, *e;

	if (cq->ring) {
		mlx5_cq_clean(cq, qp);
		return;
	}
	cq->tail = NULL;
	while ((e = *pos)) {
		if (e->qp == qp) {
			__atomic_store_n(pos, e->next, __ATOMIC_RELAXED); /* may be the head */
			cq->count--;
			deliver_late(e);
			verbs_cqe_release(cq, e);
		} else {
			cq->tail = e;
			pos = &e->next;
		}
	}
}

/* The texts programs print for a completion's status, as upstream's. */
MOCK_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS: return "success";
	case IBV_WC_LOC_LEN_ERR: return "local length error";
	case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
	case IBV_WC_LOC_EEC_OP_ERR: return "local EE context operation error";
	case IBV_WC_LOC_PROT_ERR: return "local protection error";
	case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
	case IBV_WC_MW_BIND_ERR: return "memory management operation error";
	case IBV_WC_BAD_RESP_ERR: return "bad response error";
	case IBV_WC_LOC_ACCESS_ERR: return "local access error";
	case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request error";
	case IBV_WC_REM_ACCESS_ERR: return "remote access error";
	case IBV_WC_REM_OP_ERR: return "remote operation error";
	case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
	case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
	case IBV_WC_LOC_RDD_VIOL_ERR: return "local RDD violation error";
	case IBV_WC_REM_INV_RD_REQ_ERR: return "remote invalid RD request";
	case IBV_WC_REM_ABORT_ERR: return "aborted error";
	case IBV_WC_INV_EECN_ERR: return "invalid EE context number";
	case IBV_WC_INV_EEC_STATE_ERR: return "invalid EE context state";
	case IBV_WC_FATAL_ERR: return "fatal error";
	case IBV_WC_RESP_TIMEOUT_ERR: return "response timeout error";
	case IBV_WC_GENERAL_ERR: return "general error";
	case IBV_WC_TM_ERR: return "TM error";
	case IBV_WC_TM_RNDV_INCOMPLETE: return "TM software rendezvous";
	}
	return "unknown";
}

/* What libmlx5 reaches of this provider (fabric.h). */
static const struct fab_dv_provider dv_provider = {
	.cq_expose = verbs_cq_expose,
	.cq_create = create_cq_dv,
	.qp_expose = verbs_qp_expose,
	.qp_create_dc = verbs_create_dc_qp,
	.qp_ex_dv = verbs_qp_ex_dv,
	.srq_expose = verbs_srq_expose,
	.ah_expose = verbs_ah_expose,
	.dm_alloc = verbs_alloc_dm_memic,
	.dm_expose = verbs_dm_expose,
};

__attribute__((constructor)) static void dv_provider_set(void)
{
	fab_set_dv_provider(&dv_provider);
}
