/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: device memory, the on-chip memory (MEMIC) of an mlx5 device,
 * as the mlx5 provider and mlx5_ib give it. A program maps it and copies
 * into and out of it, through ibv_memcpy_to_dm/_from_dm in 4-byte words or
 * directly at the address mlx5dv_init_obj gives (UCX's short sends); a
 * zero-based MR over it (ibv_reg_dm_mr) lets work requests and peers name
 * it by offset. Here the mapping is pages of the process that allocated
 * it, which the fabric reaches as it reaches any registered memory. The
 * device's MEMIC is one pool for every process on the fabric, max_dm_size
 * in all, set aside in 64-byte units (mlx5_ib's MLX5_MEMIC_BASE_SIZE). A
 * device without device memory (the generic one, as rxe) has no such
 * operation: EOPNOTSUPP, libibverbs' fallback. */
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs.h"

#define LIB "ibverbs"

#define DM_UNIT 64u

/* What the provider lets ibv_reg_dm_mr ask for (MLX5_DM_ALLOWED_ACCESS). */
#define DM_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_OPTIONAL_RANGE)

static struct mock_dm *dm_of(struct ibv_dm *dm, const char *call)
{
	struct mock_dm *m = (struct mock_dm *)dm;

	MOCK_REQUIRE(dm, call, "dm is NULL (upstream dereferences it)");
	ledger_require(LEDGER_DM, dm, call);
	MOCK_REQUIRE(m->magic == VERBS_DM_MAGIC, call, "%p is not device memory from ibv_alloc_dm",
		     (void *)dm);
	return m;
}

/* The provider's copy: the range inside the allocation (EFAULT), offset
 * and length in whole 4-byte words (EINVAL), each word one store. */
static int dm_access(struct mock_dm *m, uint64_t offset, uint32_t *host, size_t length, bool read)
{
	_Atomic uint32_t *dev;

	if (offset > m->length || length > m->length - offset)
		return EFAULT;
	if ((length & 3) || (offset & 3))
		return EINVAL;
	dev = (_Atomic uint32_t *)(void *)(m->start + offset);
	for (size_t i = 0; i < length / 4; i++)
		if (read)
			host[i] = atomic_load_explicit(&dev[i], memory_order_relaxed);
		else
			atomic_store_explicit(&dev[i], host[i], memory_order_relaxed);
	return 0;
}

static int memcpy_to_dm(struct ibv_dm *dm, uint64_t offset, const void *host, size_t length)
{
	return dm_access(dm_of(dm, "ibv_memcpy_to_dm"), offset, (uint32_t *)host, length, false);
}

static int memcpy_from_dm(void *host, struct ibv_dm *dm, uint64_t offset, size_t length)
{
	return dm_access(dm_of(dm, "ibv_memcpy_from_dm"), offset, host, length, true);
}

static uint64_t in_use(unsigned serial)
{
	uint64_t used = 0;

	for (const struct mock_dm *m = verbs_shared()->dms; m; m = m->next)
		if (m->serial == serial)
			used += m->size;
	return used;
}

/* MEMIC of the context's device: the provider's checks (comp_mask, the
 * device's size), then the kernel's (length 0; no room left: ENOMEM). */
static struct ibv_dm *alloc_memic(struct ibv_context *context, struct ibv_alloc_dm_attr *attr,
				  const char *call)
{
	struct mock_context *mc = verbs_context_of(context, call);
	uint64_t max = fab_profile_of(mc->mdev->personality)->max_dm_size;
	long page = sysconf(_SC_PAGESIZE);
	struct mock_dm *m;
	uint64_t size;
	void *map;

	MOCK_REQUIRE(attr, call, "attr is NULL (upstream reads it)");
	if (!max) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask || attr->length > max) {
		errno = EINVAL;
		return NULL;
	}
	size = (attr->length + DM_UNIT - 1) / DM_UNIT * DM_UNIT;
	if (!size) {
		errno = EINVAL;
		return NULL;
	}
	m = fab_alloc(sizeof *m);
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->map_len = (size_t)((size + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page);
	map = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		fab_free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->magic = VERBS_DM_MAGIC;
	m->serial = mc->mdev->serial;
	m->start = map;
	m->length = attr->length;
	m->size = size;
	m->dm.context = context;
	m->dm.memcpy_to_dm = memcpy_to_dm;
	m->dm.memcpy_from_dm = memcpy_from_dm;
	verbs_lock_take();
	if (in_use(m->serial) + size > max) {
		verbs_lock_give();
		munmap(map, m->map_len);
		fab_free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->next = verbs_shared()->dms;
	verbs_shared()->dms = m;
	verbs_lock_give();
	ledger_add(LEDGER_DM, &m->dm, call);
	ledger_note(LEDGER_DM, &m->dm, "%llu bytes", (unsigned long long)attr->length);
	return &m->dm;
}

struct ibv_dm *verbs_alloc_dm_memic(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	VERBS_DEAD_NULL(context);
	return alloc_memic(context, attr, "mlx5dv_alloc_dm");
}

static struct ibv_dm *alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	verbs_context_of(context, "ibv_alloc_dm");
	FAULT_NULL(LIB, "ibv_alloc_dm");
	VERBS_DEAD_NULL(context);
	return alloc_memic(context, attr, "ibv_alloc_dm");
}

static int free_dm(struct ibv_dm *dm)
{
	struct mock_dm *m = dm_of(dm, "ibv_free_dm"), **pos;

	ledger_destroying(LEDGER_DM, dm);
	FAULT_POSITIVE(LIB, "ibv_free_dm");
	VERBS_DEAD_DESTROY(dm->context, LEDGER_DM, dm);
	verbs_lock_take();
	/* uverbs keeps device memory an MR still covers. */
	if (m->users) {
		verbs_lock_give();
		return EBUSY;
	}
	for (pos = &verbs_shared()->dms; *pos != m; pos = &(*pos)->next)
		;
	*pos = m->next;
	m->magic = 0;
	verbs_lock_give();
	munmap(m->start, m->map_len);
	ledger_del(LEDGER_DM, dm, "ibv_free_dm");
	fab_free(m);
	return 0;
}

/* The provider's access check, then the kernel's (zero-based only, the
 * access flags, the range inside the allocation). */
static struct ibv_mr *reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset,
				size_t length, unsigned int access)
{
	struct mock_pd *mpd = verbs_pd_of(pd, "ibv_reg_dm_mr");
	struct mock_dm *m = dm_of(dm, "ibv_reg_dm_mr");
	int err = 0;

	FAULT_NULL(LIB, "ibv_reg_dm_mr");
	VERBS_DEAD_NULL(pd->context);
	if ((access & ~(unsigned)DM_ACCESS) || !(access & IBV_ACCESS_ZERO_BASED))
		err = EINVAL;
	access &= ~(unsigned)(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_OPTIONAL_RANGE);
	if (!err)
		err = verbs_mr_check_access(access);
	if (!err && (offset > m->length || length > m->length - offset))
		err = EINVAL;
	if (err) {
		errno = err;
		return NULL;
	}
	return verbs_mr_add(mpd, pd, NULL, (uintptr_t)(m->start + offset), length, 0, access, m,
			    "ibv_reg_dm_mr");
}

/* mlx5dv_init_obj of device memory: the mapping and the length asked
 * for; a MEMIC allocation has no remote address (that is SW ICM's). */
int verbs_dm_expose(struct ibv_dm *dm, struct mlx5dv_dm *out)
{
	struct mock_dm *m = dm_of(dm, "mlx5dv_init_obj");
	uint64_t mask = 0;

	out->buf = m->start;
	out->length = m->length;
	if (out->comp_mask & MLX5DV_DM_MASK_REMOTE_VA) {
		out->remote_va = 0;
		mask |= MLX5DV_DM_MASK_REMOTE_VA;
	}
	out->comp_mask = mask;
	return 0;
}

void verbs_set_dm_ops(struct verbs_context *v)
{
	v->alloc_dm = alloc_dm;
	v->free_dm = free_dm;
	v->reg_dm_mr = reg_dm_mr;
}
