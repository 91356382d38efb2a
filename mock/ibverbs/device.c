/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: device list, contexts, device and port queries, GIDs,
 * P_Keys, the device's sysfs files and protection domains, backed by the
 * fabric's topology. MRs, CQs, QPs, SRQs, AHs and the data path are in the
 * other files of mock/ibverbs/. */
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs.h"
#include "sys/view.h"

#define LIB "ibverbs"

/* ---------------------------------------------------------------- the fabric's part */

void verbs_lock_take(void)
{
	fab_mutex_lock(fab_verbs_lock());
	fab_clock_busy();
}

/* For a poll that may find nothing: waiting is not activity (clock.c). */
void verbs_lock_take_quiet(void)
{
	fab_mutex_lock(fab_verbs_lock());
}

void verbs_lock_give(void)
{
	fab_mutex_unlock(fab_verbs_lock());
}

struct verbs_shared *verbs_shared(void)
{
	return fab_root(FAB_ROOT_VERBS, sizeof(struct verbs_shared), NULL);
}

/* A dead process's MRs, device memory, windows, SRQs and contexts leave the lists
 * other processes search (its memory is freed with the rest of what it
 * owned): an rkey of it no longer opens anything, as the kernel frees a
 * dead process's MRs, and its device memory is the device's again. */
#define REAP(head, owner)                                  \
	do {                                               \
		__typeof__(head) *at_ = &(head);           \
		while (*at_)                               \
			if (fab_owner_of(*at_) == (owner)) \
				*at_ = (*at_)->next;       \
			else                               \
				at_ = &(*at_)->next;       \
	} while (0)

static void reap(int owner)
{
	struct verbs_shared *vs = verbs_shared();

	verbs_lock_take();
	REAP(vs->mrs, owner);
	REAP(vs->dms, owner);
	REAP(vs->mws, owner);
	REAP(vs->srqs, owner);
	REAP(vs->contexts, owner);
	verbs_lock_give();
}

__attribute__((constructor)) static void register_reaper(void)
{
	fab_set_reaper(reap);
}



/* ibv_device objects live as long as the process, like libibverbs' own:
 * a pointer from an old list stays valid after the device goes away. */
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mock_device *devices;

/* What a provider finds where its struct verbs_device keeps its ops. */
static const char provider_ops_of_the_mock[] = "rdmamock";

static struct mock_device *device_for(const struct fab_device_info *info)
{
	struct mock_device *m;

	for (m = devices; m; m = m->next)
		if (m->serial == info->serial)
			return m;
	m = fab_alloc(sizeof *m);
	if (!m)
		return NULL;
	m->provider_ops = provider_ops_of_the_mock;
	m->serial = info->serial;
	m->personality = info->personality;
	m->guid = info->guid;
	m->ib = info->ib;
	m->lid = info->lid;
	/* RoCE, or an RNIC where a replayed profile says iWARP */
	m->dev.transport_type = fab_profile_of(m->personality)->transport;
	m->dev.node_type = m->dev.transport_type == IBV_TRANSPORT_IWARP ? IBV_NODE_RNIC : IBV_NODE_CA;
	snprintf(m->dev.name, sizeof m->dev.name, "%s", info->name);
	snprintf(m->dev.dev_name, sizeof m->dev.dev_name, "uverbs%u", info->serial - 1);
	snprintf(m->dev.dev_path, sizeof m->dev.dev_path,
		 "/sys/class/infiniband_verbs/%s", m->dev.dev_name);
	snprintf(m->dev.ibdev_path, sizeof m->dev.ibdev_path,
		 "/sys/class/infiniband/%s", m->dev.name);
	m->next = devices;
	devices = m;
	return m;
}

struct mock_device *verbs_device_of(struct ibv_device *dev, const char *call)
{
	struct mock_device *m;

	MOCK_REQUIRE(dev, call, "device is NULL (upstream dereferences it)");
	pthread_mutex_lock(&devices_lock);
	for (m = devices; m && &m->dev != dev; m = m->next)
		;
	pthread_mutex_unlock(&devices_lock);
	MOCK_REQUIRE(m, call, "%p is not a device from ibv_get_device_list", (void *)dev);
	return m;
}

struct mock_context *verbs_context_of(struct ibv_context *ctx, const char *call)
{
	struct mock_context *mc;

	MOCK_REQUIRE(ctx, call, "context is NULL (upstream dereferences it)");
	mc = (struct mock_context *)((char *)ctx - offsetof(struct verbs_context, context));
	MOCK_REQUIRE(mc->magic == VERBS_CONTEXT_MAGIC, call,
		     "%p is not an open context from ibv_open_device", (void *)ctx);
	return mc;
}

MOCK_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct fab_device_info *infos;
	struct ibv_device **list;
	int n, err;

	FAULT_NULL(LIB, "ibv_get_device_list");
	err = fab_device_list(&infos, &n);
	if (err) {
		errno = -err;
		return NULL;
	}
	list = calloc((size_t)n + 1, sizeof *list);
	if (list) {
		pthread_mutex_lock(&devices_lock);
		for (int i = 0; i < n; i++) {
			struct mock_device *m = device_for(&infos[i]);

			if (!m) {
				free(list);
				list = NULL;
				break;
			}
			list[i] = &m->dev;
		}
		pthread_mutex_unlock(&devices_lock);
	}
	free(infos);
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	if (num_devices)
		*num_devices = n;
	return list;
}

MOCK_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

MOCK_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return verbs_device_of(device, "ibv_get_device_name")->dev.name;
}

MOCK_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return verbs_device_of(device, "ibv_get_device_guid")->guid;
}

MOCK_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return (int)verbs_device_of(device, "ibv_get_device_index")->serial - 1;
}

static int query_port_ex(struct ibv_context *ctx, uint8_t port_num,
			 struct ibv_port_attr *attr, size_t attr_len);

MOCK_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct mock_device *m = verbs_device_of(device, "ibv_open_device");
	struct fab_device_info info;
	struct mock_context *mc;
	struct verbs_context *v;
	int err;

	FAULT_NULL(LIB, "ibv_open_device");
	err = fab_device_by_serial(m->serial, &info);
	if (err) {
		errno = -err;
		return NULL;
	}
	mc = fab_alloc(sizeof *mc);
	if (!mc) {
		errno = ENOMEM;
		return NULL;
	}
	v = &mc->vctx;
	mc->magic = VERBS_CONTEXT_MAGIC;
	mc->mdev = m;
	v->sz = sizeof *v;
	/* Every operation the header's inline wrappers reach: the mock's, or
	 * one that says it is not implemented. */
	verbs_set_unsupported_ops(v);
	verbs_set_dm_ops(v);
	v->query_port = query_port_ex;
	v->query_device_ex = verbs_query_device_ex;
	/* A replayed device whose provider lacks an op leaves it NULL, and
	 * the header's wrapper answers EOPNOTSUPP (siw's). */
	if (!fab_replay_lacks(m->personality, "memory-windows"))
		verbs_set_mw_ops(v);
	if (!fab_replay_lacks(m->personality, "cq-ex"))
		v->create_cq_ex = verbs_create_cq_ex;
	if (!fab_replay_lacks(m->personality, "qp-ex"))
		v->create_qp_ex = verbs_create_qp_ex;
	if (!fab_replay_lacks(m->personality, "srq-ex"))
		v->create_srq_ex = verbs_create_srq_ex;
	v->get_srq_num = verbs_get_srq_num;
	v->open_xrcd = verbs_open_xrcd;
	v->close_xrcd = verbs_close_xrcd;
	v->context.device = &m->dev;
	/* The data path, reached through the header's static inline wrappers
	 * (ibv_post_send, ibv_poll_cq, ...) as with a real provider. */
	v->context.ops.post_send = verbs_post_send;
	v->context.ops.post_recv = verbs_post_recv;
	v->context.ops.post_srq_recv = verbs_post_srq_recv;
	v->context.ops.poll_cq = verbs_poll_cq;
	v->context.ops.req_notify_cq = verbs_req_notify_cq;
	v->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	v->context.num_comp_vectors = 1;
	/* The uverbs file libibverbs opens (O_RDWR, O_CLOEXEC): here a
	 * descriptor that is as real for what programs do with it (dup it,
	 * fstat it, hand it to ibv_import_device), and carries nothing. */
	v->context.cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (v->context.cmd_fd < 0) {
		err = errno;
		fab_free(mc);
		errno = err;
		return NULL;
	}
	err = fab_bell_open(&mc->async_bell);
	if (err < 0) {
		close(v->context.cmd_fd);
		fab_free(mc);
		errno = -err;
		return NULL;
	}
	v->context.async_fd = err;
	pthread_mutex_init(&v->context.mutex, NULL);
	verbs_lock_take();
	mc->next = verbs_shared()->contexts;
	verbs_shared()->contexts = mc;
	verbs_lock_give();
	return &v->context;
}

static void unlink_context(struct mock_context *mc)
{
	struct mock_context **pos = &verbs_shared()->contexts;

	while (*pos && *pos != mc)
		pos = &(*pos)->next;
	if (*pos)
		*pos = mc->next;
}

/* As upstream, objects still open on the context are the caller's to
 * destroy; the context itself goes. */
MOCK_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_close_device");

	FAULT_MINUS1(LIB, "ibv_close_device");
	verbs_lock_take();
	unlink_context(mc);
	verbs_async_forget(context, NULL);
	fab_bell_close(&mc->async_bell);
	verbs_lock_give();
	close(context->cmd_fd);
	pthread_mutex_destroy(&context->mutex);
	mc->magic = 0;
	fab_free(mc);
	return 0;
}

/* ---------------------------------------------------------------- device and port */

MOCK_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_device");

	FAULT_POSITIVE(LIB, "ibv_query_device");
	VERBS_DEAD_POSITIVE(context);
	MOCK_REQUIRE(attr, "ibv_query_device", "device_attr is NULL (upstream writes it)");
	return -fab_device_attr(mc->mdev->serial, attr);
}

/* The header's ibv_query_device_ex: the fields up to attr_size, as the
 * kernel fills them; comp_mask of the input must be 0. */
int verbs_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_device_ex");
	const struct fab_profile *p = fab_profile_of(mc->mdev->personality);
	struct ibv_device_attr_ex a;

	FAULT_POSITIVE(LIB, "ibv_query_device_ex");
	VERBS_DEAD_POSITIVE(context);
	MOCK_REQUIRE(attr, "ibv_query_device_ex", "attr is NULL (upstream writes it)");
	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof attr->orig_attr)
		return EINVAL;
	memset(&a, 0, sizeof a);
	fab_device_attr(mc->mdev->serial, &a.orig_attr);
	if (p->completion_timestamp) {
		a.completion_timestamp_mask = (1ull << 48) - 1;
		a.hca_core_clock = p->hca_core_clock;
	}
	a.max_dm_size = p->max_dm_size;
	a.phys_port_cnt_ex = 1;
	memcpy(attr, &a, attr_size < sizeof a ? attr_size : sizeof a);
	if (attr_size > sizeof a)
		memset((char *)attr + sizeof a, 0, attr_size - sizeof a);
	return 0;
}

/* The one port (fab_port_attr). */
static int query_port_ex(struct ibv_context *ctx, uint8_t port_num,
			 struct ibv_port_attr *attr, size_t attr_len)
{
	struct mock_context *mc = verbs_context_of(ctx, "ibv_query_port");
	struct ibv_port_attr a;

	fab_port_attr(mc->mdev->serial, &a);
	if (mock_fault(FAULT_NAME(LIB, "ibv_query_port"), &errno))
		return errno;
	VERBS_DEAD_POSITIVE(ctx);
	MOCK_REQUIRE(attr, "ibv_query_port", "port_attr is NULL (upstream writes it)");
	if (port_num != 1)
		return EINVAL;
	memcpy(attr, &a, attr_len < sizeof a ? attr_len : sizeof a);
	if (attr_len > sizeof a)
		memset((char *)attr + sizeof a, 0, attr_len - sizeof a);
	/* rdma-core 50 and later end the struct with active_speed_ex, right
	 * after rdma-core 44's end: the same speed in a field wide enough for
	 * XDR, as the kernel reports it. */
	if (attr_len >= sizeof a + sizeof(uint32_t)) {
		uint32_t speed_ex = a.active_speed;

		memcpy((char *)attr + sizeof a, &speed_ex, sizeof speed_ex);
	}
	return 0;
}

/* The exported symbol (IBVERBS_1.1); the header's inline ibv_query_port
 * prefers the context's query_port, as with real providers. */
#undef ibv_query_port
MOCK_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			       struct _compat_ibv_port_attr *port_attr)
{
	return query_port_ex(context, port_num, (struct ibv_port_attr *)port_attr,
			     sizeof(struct ibv_port_attr));
}

/* ---------------------------------------------------------------- GIDs */

/* The port's GID table length, as ibv_query_port gives it. */
static uint32_t gid_tbl_len(const struct mock_context *mc)
{
	return mc->mdev->ib ? FAB_IB_GID_TBL_LEN : (uint32_t)fab_profile_of(mc->mdev->personality)->gid_tbl_len;
}

int verbs_gid(struct mock_context *mc, uint32_t port, uint32_t index, union ibv_gid *gid,
	      enum ibv_gid_type *type)
{
	enum ibv_gid_type t;
	int err;

	if (port != 1 || index >= gid_tbl_len(mc))
		return EINVAL;
	err = fab_device_gid(mc->mdev->serial, (int)index, gid, type ? type : &t);
	return err == -ENODATA ? ENODATA : -err;
}

void verbs_src_of(struct ibv_context *ctx, uint8_t sgid_index, struct verbs_src *src)
{
	struct mock_context *mc = verbs_context_of(ctx, "ibv_post_send");

	src->ok = verbs_gid(mc, 1, sgid_index, &src->gid, &src->type) == 0;
	src->lid = mc->mdev->lid;
}

/* An empty entry below gid_tbl_len reads as a zero GID, as upstream keeps
 * the old API's behaviour; past it, -1 and EINVAL. */
MOCK_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			      union ibv_gid *gid)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_gid");
	int err;

	FAULT_MINUS1(LIB, "ibv_query_gid");
	MOCK_REQUIRE(gid, "ibv_query_gid", "gid is NULL (upstream writes it)");
	err = index < 0 ? EINVAL : verbs_gid(mc, port_num, (uint32_t)index, gid, NULL);
	if (err == ENODATA) {
		memset(gid, 0, sizeof *gid);
		return 0;
	}
	return err ? mock_errno(err) : 0;
}

/* libibverbs' private query of a GID's RoCE version (enum
 * ibv_gid_type_sysfs: 0 IB/RoCE v1, 1 RoCE v2); an empty entry reads as v1. */
MOCK_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				   unsigned int index, int *type)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_gid_type");
	enum ibv_gid_type t;
	union ibv_gid gid;
	int err;

	FAULT_MINUS1(LIB, "ibv_query_gid_type");
	MOCK_REQUIRE(type, "ibv_query_gid_type", "type is NULL (upstream writes it)");
	err = verbs_gid(mc, port_num, index, &gid, &t);
	if (err == ENODATA) {
		*type = 0;
		return 0;
	}
	if (err)
		return mock_errno(err);
	*type = t == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}

static void gid_entry(struct mock_context *mc, uint32_t index, const union ibv_gid *gid,
		      enum ibv_gid_type type, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof *e);
	e->gid = *gid;
	e->gid_index = index;
	e->port_num = 1;
	e->gid_type = type;
	/* An InfiniBand GID has no net device. */
	e->ndev_ifindex = mc->mdev->ib ? 0 : fab_gid_netdev(mc->mdev->serial, gid, NULL);
}

/* ibv_query_gid_ex: 0, or ENODATA for an empty entry, EINVAL past the
 * table or with flags. */
MOCK_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				  uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
				  size_t entry_size)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_gid_ex");
	enum ibv_gid_type type;
	struct ibv_gid_entry e;
	union ibv_gid gid;
	int err;

	FAULT_POSITIVE(LIB, "ibv_query_gid_ex");
	MOCK_REQUIRE(entry, "ibv_query_gid_ex", "entry is NULL (upstream writes it)");
	if (flags || entry_size < sizeof e)
		return EINVAL;
	err = verbs_gid(mc, port_num, gid_index, &gid, &type);
	if (err)
		return err;
	gid_entry(mc, gid_index, &gid, type, &e);
	memcpy(entry, &e, sizeof e);
	return 0;
}

/* ibv_query_gid_table: the valid entries of every port, their count, or
 * -EINVAL when max_entries cannot hold them (or with flags). */
MOCK_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
					 size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_gid_table");
	enum ibv_gid_type type;
	union ibv_gid gid;
	size_t n = 0;

	if (mock_fault(FAULT_NAME(LIB, "ibv_query_gid_table"), &errno))
		return -errno;
	if (flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	for (uint32_t i = 0; i < gid_tbl_len(mc); i++) {
		if (verbs_gid(mc, 1, i, &gid, &type))
			continue;
		if (n == max_entries)
			return -EINVAL;
		MOCK_REQUIRE(entries, "ibv_query_gid_table", "entries is NULL (upstream writes them)");
		gid_entry(mc, i, &gid, type, (struct ibv_gid_entry *)((char *)entries + n * entry_size));
		n++;
	}
	return (ssize_t)n;
}

/* ---------------------------------------------------------------- P_Keys */

/* The port's P_Key table as sysfs shows it: the default full-member key
 * 0xffff at index 0, the rest empty (0x0000); past the table, -1 and
 * ENOENT, as reading a file that is not there. */
MOCK_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
			       __be16 *pkey)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_pkey");
	const struct fab_profile *p = fab_profile_of(mc->mdev->personality);

	FAULT_MINUS1(LIB, "ibv_query_pkey");
	MOCK_REQUIRE(pkey, "ibv_query_pkey", "pkey is NULL (upstream writes it)");
	if (port_num != 1 || index < 0 || index >= p->pkey_tbl_len)
		return mock_errno(ENOENT);
	*pkey = index == 0 ? htobe16(0xffff) : 0;
	return 0;
}

MOCK_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;
	int ret;

	FAULT_MINUS1(LIB, "ibv_get_pkey_index");
	for (int i = 0;; i++) {
		ret = ibv_query_pkey(context, port_num, i, &p);
		if (ret < 0)
			return ret;
		if (p == pkey)
			return i;
	}
}

/* ---------------------------------------------------------------- sysfs */

/* Like upstream: the length read, the text NUL-terminated without its
 * newline; -1 when the file cannot be read or does not fit. */
MOCK_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[4096], text[4096];
	ssize_t len;
	int fd, n;

	MOCK_REQUIRE(dir && file && buf, "ibv_read_sysfs_file",
		     "dir, file or buf is NULL (upstream dereferences them)");
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
		return mock_errno(ENAMETOOLONG);
	/* The mock's devices' files are the system view's (mock/sys), with
	 * or without its preload; any other path is the file system's. */
	if (sys_view_owns(path)) {
		n = sys_view_read(path, text, sizeof text - 1, NULL);
		if (n < 0)
			return mock_errno(n == -EISDIR ? EISDIR : -n);
		if (n > 0 && text[n - 1] == '\n')
			n--;
		if ((size_t)n >= size)
			return -1;
		memcpy(buf, text, (size_t)n);
		buf[n] = '\0';
		return n;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0) {
		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		else if ((size_t)len < size)
			buf[len] = '\0';
		else
			return -1;
	}
	return (int)len;
}

/* ---------------------------------------------------------------- PDs */

struct mock_pd *verbs_pd_of(struct ibv_pd *pd, const char *call)
{
	struct mock_pd *mpd = (struct mock_pd *)pd;

	MOCK_REQUIRE(pd, call, "pd is NULL (upstream dereferences it)");
	ledger_require(LEDGER_PD, pd, call);
	MOCK_REQUIRE(mpd->magic == VERBS_PD_MAGIC, call,
		     "%p is not a protection domain from ibv_alloc_pd", (void *)pd);
	return mpd;
}

MOCK_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	static uint32_t next_handle;
	struct mock_pd *mpd;

	verbs_context_of(context, "ibv_alloc_pd");
	FAULT_NULL(LIB, "ibv_alloc_pd");
	VERBS_DEAD_NULL(context);
	mpd = fab_alloc(sizeof *mpd);
	if (!mpd) {
		errno = ENOMEM;
		return NULL;
	}
	mpd->magic = VERBS_PD_MAGIC;
	mpd->pd.context = context;
	mpd->pd.handle = __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
	ledger_add(LEDGER_PD, &mpd->pd, "ibv_alloc_pd");
	return &mpd->pd;
}

/* The kernel refuses while QPs or MRs hold the PD (ib_destroy_usecnt). */
MOCK_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct mock_pd *mpd = verbs_pd_of(pd, "ibv_dealloc_pd");

	ledger_destroying(LEDGER_PD, pd);
	FAULT_POSITIVE(LIB, "ibv_dealloc_pd");
	VERBS_DEAD_DESTROY(pd->context, LEDGER_PD, pd);
	verbs_lock_take();
	if (mpd->users) {
		verbs_lock_give();
		return EBUSY;
	}
	mpd->magic = 0;
	verbs_lock_give();
	ledger_del(LEDGER_PD, pd, "ibv_dealloc_pd");
	fab_free(mpd);
	return 0;
}

/* ---------------------------------------------------------------- providers */

/* A provider library loaded beside the mock (perftest links libefa, for
 * one) registers itself from its constructor. The mock's devices are its
 * own and no provider probes them: the registration is taken and ignored,
 * as libibverbs ignores a provider that matches no device. */
MOCK_EXPORT void verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

MOCK_EXPORT void verbs_register_driver_65(const void *ops)
{
	(void)ops;
}

/* A provider's log (verbs_err() and friends), as libibverbs/init.c of a
 * release build: VERBS_LOG_LEVEL (0 none, 1 errors ... 4 debug) into
 * VERBS_LOG_FILE; without the file, nothing. libefa, which libfabric
 * loads, logs here when it is asked about a device that is not EFA. */
static uint32_t verbs_log_level;
static FILE *verbs_log_fp;
static pthread_once_t verbs_log_once = PTHREAD_ONCE_INIT;

static void verbs_log_open(void)
{
	const char *level = getenv("VERBS_LOG_LEVEL"), *file = getenv("VERBS_LOG_FILE");

	if (level)
		verbs_log_level = strtoul(level, NULL, 0);
	if (verbs_log_level && file)
		verbs_log_fp = fopen(file, "a+");
	if (!verbs_log_fp)
		verbs_log_level = 0;
}

MOCK_EXPORT __attribute__((format(printf, 3, 4)))
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	pthread_once(&verbs_log_once, verbs_log_open);
	if (verbs_log_fp && level <= verbs_log_level) {
		va_start(ap, fmt);
		vfprintf(verbs_log_fp, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}
