/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: memory regions. The checks are the kernel's (ib_uverbs_reg_mr,
 * ib_check_mr_access, ib_umem_get); keys are unique in the process. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs.h"

#define LIB "ibverbs"

/* Access bits the kernel knows (IB_ACCESS_SUPPORTED): the mandatory ones
 * up to HUGETLB, and the optional range, which it ignores when unknown. */
#define ACCESS_KNOWN (0xffu | IBV_ACCESS_OPTIONAL_RANGE)

/* Key step: the low byte is a variant, as mlx5's mkeys have, so that a
 * neighbouring value (key + 1) is never another region's key. */
#define KEY_STEP 0x100u



/* A region's key is its index with variant 0; a window's index is its
 * own too, whatever its variant (mw.c). */
static bool key_in_use(uint32_t key)
{
	for (struct mock_mr *m = verbs_shared()->mrs; m; m = m->next)
		if (m->mr.lkey == key)
			return true;
	return verbs_mw_key_in_use(key);
}

uint32_t verbs_new_key(void)
{
	static uint32_t next_key = 0x1000;
	uint32_t key;

	do {
		key = next_key;
		next_key += KEY_STEP;
	} while (!key || key_in_use(key));
	return key;
}

/* Whether the kernel could pin [start, end) by mincore: every page
 * mapped (the fallback where /proc/self/maps cannot be read). */
static bool mapped(uintptr_t start, uintptr_t end, long page)
{
	unsigned char vec[64];

	for (start &= ~(uintptr_t)(page - 1); start < end;) {
		size_t chunk = end - start;

		if (chunk > sizeof vec * (size_t)page)
			chunk = sizeof vec * (size_t)page;
		if (mincore((void *)start, chunk, vec))
			return false;
		start += chunk;
	}
	return true;
}

/* ib_umem_get pins the pages, for writing when the access lets anyone
 * write them (ib_access_writable: local or remote write, atomics, MW
 * bind): an unmapped page, one the process may not read, or for such
 * access one it may not write, fails the registration with EFAULT
 * (measured on rxe: kernel 7.2; 6.1 still pinned unreadable pages for a
 * read-only registration, through FOLL_FORCE: REG_MR_READABLE, replayed).
 * The mappings are the process's own, from /proc/self/maps, sorted by
 * address. */
static bool pinnable(const void *addr, size_t length, unsigned access)
{
	bool writable = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	bool forced = !writable && fab_replay_records("REG_MR_READABLE");
	uintptr_t at = (uintptr_t)addr, end = at + length;
	FILE *maps = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	char perms[8];

	if (!maps)
		return mapped(at, end, sysconf(_SC_PAGESIZE));
	while (at < end && fscanf(maps, "%lx-%lx %7s%*[^\n]", &lo, &hi, perms) == 3) {
		if (hi <= at)
			continue;
		if (lo > at || (perms[0] != 'r' && !forced) || (writable && perms[1] != 'w'))
			break;
		at = hi;
	}
	fclose(maps);
	return at >= end;
}

int verbs_mr_check_access(unsigned access)
{
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (access & ~ACCESS_KNOWN)
		return EINVAL;
	if (access & IBV_ACCESS_ON_DEMAND) /* the devices report no ODP */
		return EOPNOTSUPP;
	return 0;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			     unsigned access, const char *call)
{
	struct mock_pd *mpd = verbs_pd_of(pd, call);
	long page = sysconf(_SC_PAGESIZE);
	int err;

	/* libibverbs drops optional bits the kernel cannot take; the kernel
	 * takes and ignores the rest of the optional range. */
	access &= ~(unsigned)IBV_ACCESS_OPTIONAL_RANGE;
	if (((uintptr_t)addr & (page - 1)) != (iova & (page - 1)))
		err = EINVAL;
	else
		err = verbs_mr_check_access(access);
	if (!err && (!length || (uintptr_t)addr + length < (uintptr_t)addr))
		err = EINVAL;
	if (!err && !pinnable(addr, length, access))
		err = EFAULT;
	if (err) {
		errno = err;
		return NULL;
	}
	return verbs_mr_add(mpd, pd, addr, (uintptr_t)addr, length, iova, access, NULL, call);
}

struct ibv_mr *verbs_mr_add(struct mock_pd *mpd, struct ibv_pd *pd, void *addr, uint64_t host,
			    size_t length, uint64_t iova, unsigned access, struct mock_dm *dm,
			    const char *call)
{
	struct mock_mr *m = fab_alloc(sizeof *m);

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->magic = VERBS_MR_MAGIC;
	m->mpd = mpd;
	m->pid = mock_pid();
	m->iova = iova;
	m->host = host;
	m->dm = dm;
	m->access = access;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	verbs_lock_take();
	m->mr.lkey = m->mr.rkey = verbs_new_key();
	m->mr.handle = m->mr.lkey >> 8;
	m->next = verbs_shared()->mrs;
	verbs_shared()->mrs = m;
	mpd->users++;
	if (dm)
		dm->users++;
	verbs_lock_give();
	ledger_add(LEDGER_MR, &m->mr, call);
	ledger_note(LEDGER_MR, &m->mr, "lkey 0x%x, %zu bytes%s", m->mr.lkey, length,
		    dm ? " of device memory" : "");
	return &m->mr;
}

/* The header's ibv_reg_mr macro picks this one when the access flags are
 * a constant without optional bits, and ibv_reg_mr_iova2 otherwise. */
#undef ibv_reg_mr
MOCK_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	verbs_pd_of(pd, "ibv_reg_mr");
	FAULT_NULL(LIB, "ibv_reg_mr");
	VERBS_DEAD_NULL(pd->context);
	return reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned)access, "ibv_reg_mr");
}

#undef ibv_reg_mr_iova
MOCK_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					   uint64_t iova, int access)
{
	verbs_pd_of(pd, "ibv_reg_mr_iova");
	FAULT_NULL(LIB, "ibv_reg_mr_iova");
	return reg_mr(pd, addr, length, iova, (unsigned)access, "ibv_reg_mr_iova");
}

MOCK_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					    uint64_t iova, unsigned int access)
{
	verbs_pd_of(pd, "ibv_reg_mr_iova2");
	FAULT_NULL(LIB, "ibv_reg_mr_iova2");
	return reg_mr(pd, addr, length, iova, access, "ibv_reg_mr_iova2");
}

/* Posted work not completed yet that names a key: a receive waiting on a
 * QP's or an SRQ's queue, a send waiting for its retries. */
struct key_user {
	uint32_t key;
	const char *what;
	uint32_t num;
};

static bool queue_uses_key(const struct recv_queue *rq, uint32_t key)
{
	for (const struct recv_wqe *w = rq->head; w; w = w->next)
		for (int i = 0; i < w->num_sge; i++)
			if (w->sge[i].lkey == key && w->sge[i].length)
				return true;
	return false;
}

static bool qp_uses_key(const void *qp, void *arg)
{
	const struct mock_qp *mqp = qp;
	struct key_user *u = arg;

	u->num = mqp->qp.qp_num;
	if (queue_uses_key(&mqp->rq, u->key))
		u->what = "a receive posted on QP";
	else if (verbs_stalled_uses_key(mqp, u->key))
		u->what = "a send being retried on QP";
	return u->what != NULL;
}

static bool srq_uses_key(const void *srq, void *arg)
{
	const struct mock_srq *msrq = srq;
	struct key_user *u = arg;

	u->num = msrq->srq_num;
	if (queue_uses_key(&msrq->rq, u->key))
		u->what = "a receive posted on SRQ";
	return u->what != NULL;
}

MOCK_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct mock_mr *m = (struct mock_mr *)mr, **pos;
	struct key_user user = { 0 };

	MOCK_REQUIRE(mr, "ibv_dereg_mr", "mr is NULL (upstream dereferences it)");
	ledger_require(LEDGER_MR, mr, "ibv_dereg_mr");
	user.key = mr->lkey; /* read only once it is known live */
	MOCK_REQUIRE(m->magic == VERBS_MR_MAGIC, "ibv_dereg_mr",
		     "%p is not a memory region from ibv_reg_mr", (void *)mr);
	ledger_destroying(LEDGER_MR, mr);
	FAULT_POSITIVE(LIB, "ibv_dereg_mr");
	VERBS_DEAD_DESTROY(mr->context, LEDGER_MR, mr);
	verbs_lock_take();
	/* A region with a window bound to it stays (IBA 10.6.7.2.6; rxe_dereg_mr). */
	if (m->windows) {
		verbs_lock_give();
		return EINVAL;
	}
	/* The kernel deregisters it all the same (ib_dereg_mr does not wait
	 * for the QPs); the device later fails that work on the stale key. */
	if (ledger_each(LEDGER_QP, qp_uses_key, &user) || ledger_each(LEDGER_SRQ, srq_uses_key, &user)) {
		verbs_lock_give();
		ledger_misuse("ibv_dereg_mr",
			      "MR %p (lkey 0x%x) is still used by %s 0x%x, posted and not completed; upstream deregisters it anyway and that work fails later",
			      (void *)mr, mr->lkey, user.what, user.num);
		verbs_lock_take();
	}
	verbs_cq_place_kept(m->pid, m->host, mr->length);
	for (pos = &verbs_shared()->mrs; *pos != m; pos = &(*pos)->next)
		;
	*pos = m->next;
	m->mpd->users--;
	if (m->dm)
		m->dm->users--;
	m->magic = 0;
	verbs_lock_give();
	ledger_del(LEDGER_MR, mr, "ibv_dereg_mr");
	fab_free(m);
	return 0;
}

struct mock_mr *verbs_mr_find(const struct ibv_mr *mr)
{
	struct mock_mr *m;

	for (m = verbs_shared()->mrs; m && &m->mr != mr; m = m->next)
		;
	return m;
}

bool verbs_mr_map(struct mock_pd *mpd, uint32_t key, uint64_t addr, uint64_t len,
		  unsigned access, struct verbs_mem *at)
{
	struct mock_mr *m;

	for (m = verbs_shared()->mrs; m && m->mr.lkey != key; m = m->next)
		;
	if (!m || m->mpd != mpd || (m->access & access) != access)
		return false;
	if (addr < m->iova || addr + len < addr || addr + len > m->iova + m->mr.length)
		return false;
	at->pid = m->pid;
	at->addr = m->host + (addr - m->iova);
	return true;
}

/* libibverbs' checks, then the device's: mlx5 changes the translation, the
 * PD and the access of a live region (keys kept); rdma-core 44's rxe
 * provider has no rereg op, so libibverbs' dummy refuses it there
 * (IBV_REREG_MR_ERR_CMD, errno EOPNOTSUPP). */
MOCK_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			     size_t length, int access)
{
	struct mock_mr *m = (struct mock_mr *)mr;
	struct mock_pd *to = NULL;
	int err = 0;

	MOCK_REQUIRE(mr, "ibv_rereg_mr", "mr is NULL (upstream dereferences it)");
	ledger_require(LEDGER_MR, mr, "ibv_rereg_mr");
	MOCK_REQUIRE(m->magic == VERBS_MR_MAGIC, "ibv_rereg_mr",
		     "%p is not a memory region from ibv_reg_mr", (void *)mr);
	if (mock_fault(FAULT_NAME(LIB, "ibv_rereg_mr"), &errno))
		return IBV_REREG_MR_ERR_CMD;
	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (verbs_context_of(mr->context, "ibv_rereg_mr")->mdev->personality != RDMAMOCK_MLX5) {
		errno = EOPNOTSUPP;
		return IBV_REREG_MR_ERR_CMD;
	}
	/* uverbs refuses to rereg an MR over device memory. */
	if (m->dm)
		err = EINVAL;
	if (!err && (flags & IBV_REREG_MR_CHANGE_PD)) {
		to = verbs_pd_of(pd, "ibv_rereg_mr");
		if (pd->context != mr->context)
			err = EINVAL;
	}
	/* uverbs refuses a rereg that changes nothing. */
	if (!err && !flags)
		err = EINVAL;
	if (!err && (flags & IBV_REREG_MR_CHANGE_ACCESS))
		err = verbs_mr_check_access((unsigned)access & ~(unsigned)IBV_ACCESS_OPTIONAL_RANGE);
	if (!err && (flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	    ((uintptr_t)addr + length < (uintptr_t)addr ||
	     !pinnable(addr, length, flags & IBV_REREG_MR_CHANGE_ACCESS ? (unsigned)access : m->access)))
		err = EFAULT;
	if (err) {
		errno = err;
		return IBV_REREG_MR_ERR_CMD;
	}
	verbs_lock_take();
	if (to) {
		m->mpd->users--;
		m->mpd = to;
		to->users++;
		mr->pd = pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		m->access = (unsigned)access & ~(unsigned)IBV_ACCESS_OPTIONAL_RANGE;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		verbs_cq_place_kept(m->pid, m->host, mr->length);
		m->iova = m->host = (uintptr_t)addr;
		mr->addr = addr;
		mr->length = length;
	}
	verbs_lock_give();
	return 0;
}
