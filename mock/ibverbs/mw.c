/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: memory windows, as the kernel's rxe (rxe_mw.c) and the IBA
 * give them, on both devices. A window is a range of a region, opened to
 * peers by an rkey of its own: type 1 bound by ibv_bind_mw (the provider
 * posts it as a work request with the next key of the window's index),
 * type 2 by IBV_WR_BIND_MW with the key the program names, and reached
 * only through the QP that bound it. A bind that breaks a rule completes
 * with IBV_WC_MW_BIND_ERR. A type 1 window is closed by a bind of length
 * 0; a type 2 one by IBV_WR_LOCAL_INV or a peer's IBV_WR_SEND_WITH_INV.
 * Windows live in the fabric's list beside the regions, their keys from
 * the same index space (mr.c), and the responder resolves an rkey through
 * verbs_rkey_map. */
#include "verbs.h"

#define LIB "ibverbs"

/* What a window may grant (RXE_ACCESS_SUPPORTED_MW). */
#define MW_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)

static struct mock_mw *mw_of(struct ibv_mw *mw, const char *call)
{
	struct mock_mw *m = (struct mock_mw *)mw;

	MOCK_REQUIRE(mw, call, "mw is NULL (upstream dereferences it)");
	ledger_require(LEDGER_MW, mw, call);
	MOCK_REQUIRE(m->magic == VERBS_MW_MAGIC, call, "%p is not a memory window from ibv_alloc_mw",
		     (void *)mw);
	return m;
}

/* The live window whose key has this index (the key's upper 24 bits). */
static struct mock_mw *mw_by_index(uint32_t key)
{
	struct mock_mw *w;

	for (w = verbs_shared()->mws; w && (w->key >> 8) != (key >> 8); w = w->next)
		;
	return w;
}

bool verbs_mw_key_in_use(uint32_t key)
{
	return mw_by_index(key) != NULL;
}

/* Let go of the region (and the QP) a window is bound to. */
static void unbind(struct mock_mw *w)
{
	if (w->mr)
		w->mr->windows--;
	w->mr = NULL;
	w->qp = NULL;
	w->addr = w->length = 0;
	w->access = 0;
}

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct mock_pd *mpd = verbs_pd_of(pd, "ibv_alloc_mw");
	struct mock_mw *w;

	FAULT_NULL(LIB, "ibv_alloc_mw");
	VERBS_DEAD_NULL(pd->context);
	/* uverbs takes types 1 and 2 only. */
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	w = fab_alloc(sizeof *w);
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->magic = VERBS_MW_MAGIC;
	w->mpd = mpd;
	w->mw.context = pd->context;
	w->mw.pd = pd;
	w->mw.type = type;
	verbs_lock_take();
	w->key = verbs_new_key();
	w->mw.rkey = w->key;
	w->mw.handle = w->key >> 8;
	/* A type 1 window may be bound at once; a type 2 one is free until
	 * a work request binds it. */
	w->valid = type == IBV_MW_TYPE_1;
	w->next = verbs_shared()->mws;
	verbs_shared()->mws = w;
	mpd->users++;
	verbs_lock_give();
	ledger_add(LEDGER_MW, &w->mw, "ibv_alloc_mw");
	ledger_note(LEDGER_MW, &w->mw, "type %d, rkey 0x%x", type, w->key);
	return &w->mw;
}

static int dealloc_mw(struct ibv_mw *mw)
{
	struct mock_mw *w = mw_of(mw, "ibv_dealloc_mw"), **pos;

	ledger_destroying(LEDGER_MW, mw);
	FAULT_POSITIVE(LIB, "ibv_dealloc_mw");
	VERBS_DEAD_DESTROY(mw->context, LEDGER_MW, mw);
	verbs_lock_take();
	/* Unbound as it goes: its key opens nothing more. */
	unbind(w);
	for (pos = &verbs_shared()->mws; *pos != w; pos = &(*pos)->next)
		;
	*pos = w->next;
	w->mpd->users--;
	w->magic = 0;
	verbs_lock_give();
	ledger_del(LEDGER_MW, mw, "ibv_dealloc_mw");
	fab_free(w);
	return 0;
}

/* The provider's type 1 bind: a zero-based window is refused; otherwise a
 * bind work request with the next key of the window's index, which the
 * window's rkey becomes once it is posted (the program undoes that if the
 * bind completes in error, as the man page says). */
static int bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	int err;

	mw_of(mw, "ibv_bind_mw");
	verbs_qp_of(qp, "ibv_bind_mw");
	MOCK_REQUIRE(bind, "ibv_bind_mw", "mw_bind is NULL (upstream reads it)");
	if (bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	wr.wr_id = bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = bind->bind_info;
	err = verbs_post_send(qp, &wr, &bad);
	if (err)
		return err;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

/* The device's bind (rxe_bind_mw, rxe_check_bind_mw): true when bound. */
bool verbs_mw_bind(struct mock_qp *mqp, const struct ibv_send_wr *wr)
{
	const struct ibv_mw_bind_info *info = &wr->bind_mw.bind_info;
	struct mock_mw *w;
	struct mock_mr *mr = NULL;
	unsigned access = info->mw_access_flags;

	/* A live window, its handle naming the key it has now (the handles
	 * are found, not read, until they are known live). */
	for (w = verbs_shared()->mws; w && &w->mw != wr->bind_mw.mw; w = w->next)
		;
	if (!w || w->key != w->mw.rkey)
		return false;
	if (info->length && !(mr = verbs_mr_find(info->mr)))
		return false;
	if (access & ~(unsigned)MW_ACCESS)
		return false;
	if (w->mw.type == IBV_MW_TYPE_1 && (access & IBV_ACCESS_ZERO_BASED))
		return false;
	/* A type 2 window: free, on the QP's PD, bound to a region. */
	if (w->mw.type == IBV_MW_TYPE_2 && (w->valid || w->mpd != mqp->mpd || !mr))
		return false;
	if (mr) {
		if (mr->dm || !(mr->access & IBV_ACCESS_MW_BIND))
			return false;
		if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return false;
		if (access & IBV_ACCESS_ZERO_BASED ? info->length > mr->mr.length
		    : info->addr < mr->iova || info->addr + info->length < info->addr ||
		      info->addr + info->length > mr->iova + mr->mr.length)
			return false;
	}
	unbind(w);
	w->key = (w->key & ~0xffu) | (wr->bind_mw.rkey & 0xffu);
	w->valid = true;
	w->addr = info->addr;
	w->length = info->length;
	w->access = access;
	if (mr) {
		w->mr = mr;
		mr->windows++;
	}
	if (w->mw.type == IBV_MW_TYPE_2)
		w->qp = mqp;
	return true;
}

/* IBV_WR_LOCAL_INV, or a peer's SEND_WITH_INV: a bound type 2 window by
 * its key becomes free. A region's key, a type 1 window's, or a key that
 * names nothing bound is refused (rxe_invalidate_mw; a region registered
 * by ibv_reg_mr is not a fast-registration one, which alone may be). */
bool verbs_mw_invalidate(uint32_t key)
{
	struct mock_mw *w = mw_by_index(key);

	if (!w || w->key != key || w->mw.type != IBV_MW_TYPE_2 || !w->valid)
		return false;
	unbind(w);
	w->valid = false;
	return true;
}

bool verbs_rkey_map(struct mock_qp *mqp, uint32_t key, uint64_t addr, uint64_t len, unsigned access,
		    struct verbs_mem *at)
{
	struct mock_mw *w = mw_by_index(key);

	if (!w)
		return verbs_mr_map(mqp->mpd, key, addr, len, access, at);
	/* rxe_lookup_mw: the key as bound, the QP's PD, a type 2 window's
	 * own QP, a length, the access. */
	if (w->key != key || !w->valid || !w->mr || w->mpd != mqp->mpd ||
	    (w->mw.type == IBV_MW_TYPE_2 && w->qp != mqp) || (w->access & access) != access)
		return false;
	if (w->access & IBV_ACCESS_ZERO_BASED)
		addr += w->addr;
	/* rxe's check_rkey looks at the region's bounds only (MW_BOUNDS). */
	if (!fab_replay_deviates(mqp->personality, "MW_BOUNDS") &&
	    (addr < w->addr || addr + len < addr || addr + len > w->addr + w->length))
		return false;
	return verbs_mr_map(w->mr->mpd, w->mr->mr.lkey, addr, len, 0, at);
}

void verbs_mw_forget_qp(const struct mock_qp *mqp)
{
	for (struct mock_mw *w = verbs_shared()->mws; w; w = w->next)
		if (w->qp == mqp)
			w->qp = NULL;
}

void verbs_set_mw_ops(struct verbs_context *v)
{
	v->context.ops.alloc_mw = alloc_mw;
	v->context.ops.bind_mw = bind_mw;
	v->context.ops.dealloc_mw = dealloc_mw;
}
