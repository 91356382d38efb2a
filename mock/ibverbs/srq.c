/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: shared receive queues (basic and XRC) and XRC domains.
 *
 * A QP created on an SRQ takes its receives from it; an XRC target QP
 * takes them from the XRC SRQ each packet names, in its own domain. The
 * limit event fires once when the queue drops below the armed limit, and
 * disarms it (IBA 11.5.2.4), as rxe and mlx5 do. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verbs.h"

#define LIB "ibverbs"



struct mock_srq *verbs_srq_of(struct ibv_srq *srq, const char *call)
{
	struct mock_srq *msrq = (struct mock_srq *)srq;

	MOCK_REQUIRE(srq, call, "srq is NULL (upstream dereferences it)");
	ledger_require(LEDGER_SRQ, srq, call);
	MOCK_REQUIRE(msrq->magic == VERBS_SRQ_MAGIC, call,
		     "%p is not a shared receive queue from ibv_create_srq", (void *)srq);
	return msrq;
}

static struct mock_xrcd *xrcd_of(struct ibv_xrcd *xrcd, const char *call)
{
	struct mock_xrcd *mx = (struct mock_xrcd *)xrcd;

	MOCK_REQUIRE(xrcd, call, "xrcd is NULL (upstream dereferences it)");
	MOCK_REQUIRE(mx->magic == VERBS_XRCD_MAGIC, call,
		     "%p is not an XRC domain from ibv_open_xrcd", (void *)xrcd);
	return mx;
}

struct mock_srq *verbs_srq_by_num(uint32_t srq_num)
{
	struct mock_srq *m;

	for (m = verbs_shared()->srqs; m && m->srq_num != srq_num; m = m->next)
		;
	return m;
}

/* Queue sizes as the devices grant them: a power of two, reported one
 * less (a slot tells full from empty), as ibv_query_srq shows on rxe and
 * mlx5 alike. */
static uint32_t granted_wr(uint32_t max_wr)
{
	uint32_t n = 1;

	while (n < max_wr + 1)
		n <<= 1;
	return n - 1;
}

/* With a ring, the receives posted before it was made are taken first,
 * then the ring's, one at a time. */
static void pull(struct mock_srq *msrq)
{
	struct ibv_sge sge[64];
	struct ibv_recv_wr wr;
	uint16_t index;

	if (!msrq->ring || msrq->rq.head || mlx5_srq_max_sge(msrq) > sizeof sge / sizeof sge[0] ||
	    mlx5_srq_take(msrq, &wr, sge, &index))
		return;
	if (verbs_rq_post(&msrq->rq, fab_owner_of(msrq), &wr, UINT32_MAX, UINT32_MAX, "ibv_post_srq_recv")) {
		mock_log("out of memory: a receive WQE of SRQ %u lost", msrq->srq_num);
		return;
	}
	msrq->rq.tail->wqe_index = index;
}

/* The receives it holds, for its limit. */
static uint32_t held(const struct mock_srq *msrq)
{
	return msrq->rq.count + (msrq->ring ? mlx5_srq_outstanding(msrq) : 0);
}

struct recv_wqe *verbs_srq_take(struct mock_srq *msrq)
{
	struct recv_wqe *w;

	pull(msrq);
	w = verbs_rq_take(&msrq->rq);
	if (w && msrq->attr.srq_limit && held(msrq) < msrq->attr.srq_limit) {
		msrq->attr.srq_limit = 0;
		verbs_async_srq(msrq, IBV_EVENT_SRQ_LIMIT_REACHED);
	}
	return w;
}

/* ---------------------------------------------------------------- SRQs */

#define SRQ_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | \
		  IBV_SRQ_INIT_ATTR_CQ)

static int check_srq(struct ibv_context *ctx, const struct ibv_srq_init_attr_ex *init,
		     const struct fab_profile *p)
{
	enum ibv_srq_type type = init->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ? init->srq_type
									   : IBV_SRQT_BASIC;

	if (init->comp_mask & ~(uint32_t)SRQ_MASK) {
		mock_log("ibv_create_srq_ex: comp_mask 0x%x asks for what the mock does not model",
			 init->comp_mask);
		return EOPNOTSUPP;
	}
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC) {
		mock_log("ibv_create_srq_ex: SRQ type %d is not modelled by the mock", (int)type);
		return EOPNOTSUPP;
	}
	/* libibverbs (cmd_srq.c) wants the domain and the CQ of an XRC SRQ
	 * before the device is asked: EINVAL even on rxe, which has no XRC. */
	if (type == IBV_SRQT_XRC &&
	    (!(init->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !init->xrcd ||
	     !(init->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !init->cq))
		return EINVAL;
	if (type == IBV_SRQT_XRC && !p->xrc)
		return EOPNOTSUPP;
	if (!(init->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !init->pd || init->pd->context != ctx)
		return EINVAL;
	if (!init->attr.max_wr || init->attr.max_wr > (uint32_t)p->max_srq_wr ||
	    init->attr.max_sge > (uint32_t)p->max_srq_sge ||
	    init->attr.srq_limit > granted_wr(init->attr.max_wr))
		return EINVAL;
	/* siw holds the limit to the depth asked for (siw_create_srq:
	 * SRQ_CREATE_LIMIT_IGNORED, replayed). */
	if (init->attr.srq_limit > init->attr.max_wr &&
	    fab_replay_deviates(verbs_context_of(ctx, "ibv_create_srq")->mdev->personality,
				"SRQ_CREATE_LIMIT_IGNORED"))
		return EINVAL;
	return 0;
}

static struct ibv_srq *create_srq(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *init)
{
	static uint32_t next_handle;
	struct mock_context *mc = verbs_context_of(ctx, "ibv_create_srq");
	struct mock_srq *msrq = NULL;
	int err;

	err = check_srq(ctx, init, fab_profile_of(mc->mdev->personality));
	if (!err && !(msrq = fab_alloc(sizeof *msrq)))
		err = ENOMEM;
	if (!err && (err = -fab_srq_number(&msrq->srq_num)))
		fab_free(msrq);
	if (err) {
		errno = err;
		return NULL;
	}
	msrq->magic = VERBS_SRQ_MAGIC;
	msrq->type = init->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ? init->srq_type : IBV_SRQT_BASIC;
	msrq->mpd = verbs_pd_of(init->pd, "ibv_create_srq");
	if (msrq->type == IBV_SRQT_XRC) {
		msrq->xrcd = xrcd_of(init->xrcd, "ibv_create_srq_ex");
		msrq->cq = verbs_cq_of(init->cq, "ibv_create_srq_ex");
	}
	msrq->attr.max_wr = granted_wr(init->attr.max_wr);
	/* Rounded up to one, but by siw, which grants what was asked
	 * (SRQ_CREATE_NO_SGE, replayed). */
	msrq->attr.max_sge = init->attr.max_sge ||
			     fab_replay_deviates(mc->mdev->personality, "SRQ_CREATE_NO_SGE") ?
			     init->attr.max_sge : 1;
	msrq->attr.srq_limit = init->attr.srq_limit;
	msrq->srq.context = ctx;
	msrq->srq.srq_context = init->srq_context;
	msrq->srq.pd = init->pd;
	msrq->srq.handle = __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&msrq->srq.mutex, NULL);
	pthread_cond_init(&msrq->srq.cond, NULL);

	verbs_lock_take();
	msrq->mpd->users++;
	if (msrq->xrcd)
		msrq->xrcd->users++;
	if (msrq->cq)
		msrq->cq->users++;
	msrq->next = verbs_shared()->srqs;
	verbs_shared()->srqs = msrq;
	verbs_lock_give();
	/* What the caller learns at once: mlx5's provider writes back what it
	 * granted; rxe only the one scatter entry it makes of none. */
	if (mc->mdev->personality == RDMAMOCK_MLX5)
		init->attr.max_wr = msrq->attr.max_wr;
	init->attr.max_sge = msrq->attr.max_sge;
	ledger_add(LEDGER_SRQ, &msrq->srq, "ibv_create_srq");
	ledger_note(LEDGER_SRQ, &msrq->srq, "srq_num 0x%x", msrq->srq_num);
	return &msrq->srq;
}

MOCK_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct ibv_srq_init_attr_ex ex = { 0 };
	struct ibv_srq *srq;

	verbs_pd_of(pd, "ibv_create_srq");
	FAULT_NULL(LIB, "ibv_create_srq");
	VERBS_DEAD_NULL(pd->context);
	MOCK_REQUIRE(init, "ibv_create_srq", "srq_init_attr is NULL (upstream dereferences it)");
	ex.srq_context = init->srq_context;
	ex.attr = init->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	ex.pd = pd;
	srq = create_srq(pd->context, &ex);
	if (srq)
		init->attr = ex.attr;
	return srq;
}

struct ibv_srq *verbs_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr)
{
	verbs_context_of(context, "ibv_create_srq_ex");
	if (mock_fault(FAULT_NAME(LIB, "ibv_create_srq_ex"), &errno))
		return NULL;
	MOCK_REQUIRE(attr, "ibv_create_srq_ex", "srq_init_attr_ex is NULL (upstream dereferences it)");
	return create_srq(context, attr);
}

/* Arming the limit (IBV_SRQ_LIMIT, no more than the queue holds), and on
 * a device that can (rxe, IBV_DEVICE_SRQ_RESIZE) a new size: not 0, not
 * over the device's limit, not below what is posted; mlx5 refuses a
 * resize (EINVAL). */
MOCK_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct mock_srq *msrq = verbs_srq_of(srq, "ibv_modify_srq");
	const struct fab_profile *p;
	uint32_t max_wr;
	int err = 0;

	FAULT_POSITIVE(LIB, "ibv_modify_srq");
	MOCK_REQUIRE(attr, "ibv_modify_srq", "srq_attr is NULL (upstream reads it)");
	p = fab_profile_of(verbs_context_of(srq->context, "ibv_modify_srq")->mdev->personality);
	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	verbs_lock_take();
	max_wr = msrq->attr.max_wr;
	if (mask & IBV_SRQ_MAX_WR) {
		if (!p->srq_resize || !attr->max_wr || attr->max_wr > (uint32_t)p->max_srq_wr ||
		    attr->max_wr < msrq->rq.count)
			err = EINVAL;
		else
			max_wr = granted_wr(attr->max_wr);
	}
	if (!err && (mask & IBV_SRQ_LIMIT) && attr->srq_limit > max_wr)
		err = EINVAL;
	if (!err) {
		msrq->attr.max_wr = max_wr;
		if (mask & IBV_SRQ_LIMIT)
			msrq->attr.srq_limit = attr->srq_limit;
	}
	verbs_lock_give();
	return err;
}

MOCK_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct mock_srq *msrq = verbs_srq_of(srq, "ibv_query_srq");

	FAULT_POSITIVE(LIB, "ibv_query_srq");
	MOCK_REQUIRE(attr, "ibv_query_srq", "srq_attr is NULL (upstream writes it)");
	if (fab_replay_lacks(verbs_context_of(srq->context, "ibv_query_srq")->mdev->personality,
			     "query-srq"))
		return EOPNOTSUPP; /* libibverbs' dummy op */
	verbs_lock_take();
	*attr = msrq->attr;
	verbs_lock_give();
	return 0;
}

MOCK_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct mock_srq *msrq = verbs_srq_of(srq, "ibv_destroy_srq"), **pos;
	uint32_t reported;

	ledger_destroying(LEDGER_SRQ, srq);
	FAULT_POSITIVE(LIB, "ibv_destroy_srq");
	VERBS_DEAD_DESTROY(srq->context, LEDGER_SRQ, srq);
	verbs_lock_take();
	if (msrq->users) {
		verbs_lock_give();
		return EBUSY;
	}
	for (pos = &verbs_shared()->srqs; *pos != msrq; pos = &(*pos)->next)
		;
	*pos = msrq->next;
	verbs_rq_drop(&msrq->rq);
	mlx5_srq_free(msrq);
	msrq->mpd->users--;
	if (msrq->xrcd)
		msrq->xrcd->users--;
	if (msrq->cq)
		msrq->cq->users--;
	verbs_async_forget(srq->context, srq);
	msrq->magic = 0;
	ledger_del(LEDGER_SRQ, srq, "ibv_destroy_srq");
	reported = msrq->async_reported;
	verbs_lock_give();
	verbs_wait_async_acks(&srq->mutex, &srq->cond, &srq->events_completed, reported,
			      "ibv_destroy_srq", srq);
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	fab_free(msrq);
	return 0;
}

int verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct mock_srq *msrq = verbs_srq_of(srq, "ibv_post_srq_recv");
	int err = 0;

	if (!mock_fault(FAULT_NAME(LIB, "ibv_post_srq_recv"), &err)) {
		verbs_lock_take();
		for (; wr && !(err = msrq->ring ? mlx5_srq_post(msrq, wr)
						: verbs_rq_post(&msrq->rq, fab_owner_of(msrq), wr, msrq->attr.max_wr,
								msrq->attr.max_sge, "ibv_post_srq_recv"));
		     wr = wr->next)
			;
		verbs_lock_give();
	}
	if (err) {
		MOCK_REQUIRE(bad_wr, "ibv_post_srq_recv",
			     "bad_recv_wr is NULL (upstream stores the failed WR there)");
		*bad_wr = wr;
	}
	return err;
}

int verbs_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	struct mock_srq *msrq = verbs_srq_of(srq, "ibv_get_srq_num");

	MOCK_REQUIRE(srq_num, "ibv_get_srq_num", "srq_num is NULL (upstream writes it)");
	*srq_num = msrq->srq_num;
	return 0;
}

/* ---------------------------------------------------------------- XRC domains */

/* Domains opened on a file, by inode, so that opening it again finds the
 * same one (uverbs' xrcd table); in this process only (a process-local
 * list: another process opening the file gets a domain of its own). */
struct xrcd_file {
	struct xrcd_file *next;
	dev_t dev;
	ino_t ino;
	struct mock_xrcd *xrcd;
	int opens;
};

static struct xrcd_file *xrcd_files;

static struct xrcd_file **xrcd_file_find(dev_t dev, ino_t ino)
{
	struct xrcd_file **pos;

	for (pos = &xrcd_files; *pos && ((*pos)->dev != dev || (*pos)->ino != ino);
	     pos = &(*pos)->next)
		;
	return pos;
}

static struct mock_xrcd *new_xrcd(struct ibv_context *context)
{
	static uint32_t next_handle;
	struct mock_xrcd *mx = fab_alloc(sizeof *mx);

	if (!mx)
		return NULL;
	mx->magic = VERBS_XRCD_MAGIC;
	mx->xrcd.context = context;
	(void)__atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
	return mx;
}

/* ib_uverbs_open_xrcd: fd -1 makes a private domain; a file's domain is
 * found again by its inode, made only with O_CREAT, refused with O_EXCL
 * when it exists. */
struct ibv_xrcd *verbs_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_open_xrcd");
	struct xrcd_file **pos = NULL, *f;
	struct mock_xrcd *mx = NULL;
	struct stat st;
	int err = 0;

	if (mock_fault(FAULT_NAME(LIB, "ibv_open_xrcd"), &errno))
		return NULL;
	MOCK_REQUIRE(attr, "ibv_open_xrcd", "xrcd_init_attr is NULL (upstream dereferences it)");
	if (!fab_profile_of(mc->mdev->personality)->xrc) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->fd != -1 && fstat(attr->fd, &st)) {
		errno = EBADF;
		return NULL;
	}
	verbs_lock_take();
	if (attr->fd != -1) {
		pos = xrcd_file_find(st.st_dev, st.st_ino);
		if (*pos && (attr->oflags & O_EXCL))
			err = EINVAL;
		else if (!*pos && !(attr->oflags & O_CREAT))
			err = EINVAL;
		else if (*pos)
			mx = (*pos)->xrcd;
	}
	if (!err && !mx && !(mx = new_xrcd(context)))
		err = ENOMEM;
	if (!err && pos) {
		if (!*pos) {
			f = calloc(1, sizeof *f);
			if (!f) {
				fab_free(mx);
				err = ENOMEM;
			} else {
				f->dev = st.st_dev;
				f->ino = st.st_ino;
				f->xrcd = mx;
				*pos = f;
			}
		}
		if (!err)
			(*pos)->opens++;
	}
	verbs_lock_give();
	if (err) {
		errno = err;
		return NULL;
	}
	return &mx->xrcd;
}

int verbs_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct mock_xrcd *mx = xrcd_of(xrcd, "ibv_close_xrcd");
	struct xrcd_file **pos, *f;
	bool last = true;

	FAULT_POSITIVE(LIB, "ibv_close_xrcd");
	verbs_lock_take();
	for (pos = &xrcd_files; *pos && (*pos)->xrcd != mx; pos = &(*pos)->next)
		;
	f = *pos;
	if (f && f->opens > 1) {
		f->opens--;
		last = false;
	} else if (mx->users) {
		verbs_lock_give();
		return EBUSY;
	} else if (f) {
		*pos = f->next;
		free(f);
	}
	if (last)
		mx->magic = 0;
	verbs_lock_give();
	if (last)
		fab_free(mx);
	return 0;
}

/* mlx5dv_init_obj of an SRQ: its ring (made on the first call) in out:
 * 0, or an errno. An XRC SRQ has no model yet. */
int verbs_srq_expose(struct ibv_srq *srq, struct mlx5dv_srq *out)
{
	struct mock_srq *msrq = verbs_srq_of(srq, "mlx5dv_init_obj");
	int err = 0;

	if (msrq->type != IBV_SRQT_BASIC) {
		static int said;

		mock_not_implemented("mlx5dv_init_obj of an XRC SRQ", &said);
		return EOPNOTSUPP;
	}
	verbs_lock_take();
	if (!msrq->ring)
		err = mlx5_srq_make_ring(msrq);
	if (!err)
		mlx5_srq_describe(msrq, out);
	verbs_lock_give();
	return err;
}
