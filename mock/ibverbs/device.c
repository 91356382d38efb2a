/* libibverbs: device list, contexts, device and port queries, GIDs and
 * protection domains, backed by the fabric's topology. MRs, CQs, QPs and
 * the data path are in mr.c, cq.c, qp.c and post.c. */
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs.h"

#define LIB "ibverbs"

static const struct verbs_profile profiles[] = {
	[RDMAMOCK_MLX5] = {
		.fw_ver = "16.35.2000",
		.vendor_id = 0x02c9,
		.vendor_part_id = 4119,
		.max_qp = 262144,
		.max_qp_wr = 32768,
		.max_sge = 30,
		.max_cq = 16777216,
		.max_cqe = 4194303,
		.max_mr = 16777216,
		.max_pd = 16777216,
		.max_qp_rd_atom = 16,
		.max_srq = 8388608,
		.max_srq_wr = 32767,
		.max_pkeys = 128,
		.local_ca_ack_delay = 16,
		.max_msg_sz = 0x40000000,
		.gid_tbl_len = 255,
		.max_inline_data = 912,
	},
	[RDMAMOCK_GENERIC] = {
		.fw_ver = "0.0.0",
		.vendor_id = 0xffffff,
		.vendor_part_id = 0,
		.max_qp = 0x10000,
		.max_qp_wr = 0x4000,
		.max_sge = 32,
		.max_cq = 0x4000,
		.max_cqe = 0x7fff,
		.max_mr = 0x40000,
		.max_pd = 0x7ffc,
		.max_qp_rd_atom = 128,
		.max_srq = 0x3ffff,
		.max_srq_wr = 0x4000,
		.max_pkeys = 64,
		.local_ca_ack_delay = 15,
		.max_msg_sz = 0x800000,
		.gid_tbl_len = 1024,
		.max_inline_data = 512,
	},
};

const struct verbs_profile *verbs_profile_of(enum rdmamock_personality p)
{
	return &profiles[p == RDMAMOCK_MLX5 ? RDMAMOCK_MLX5 : RDMAMOCK_GENERIC];
}

pthread_mutex_t verbs_lock = PTHREAD_MUTEX_INITIALIZER;

/* ibv_device objects live as long as the process, like libibverbs' own:
 * a pointer from an old list stays valid after the device goes away. */
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mock_device *devices;

static struct mock_device *device_for(const struct fab_device_info *info)
{
	struct mock_device *m;

	for (m = devices; m; m = m->next)
		if (m->serial == info->serial)
			return m;
	m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->serial = info->serial;
	m->personality = info->personality;
	m->guid = info->guid;
	m->dev.node_type = IBV_NODE_CA;
	m->dev.transport_type = IBV_TRANSPORT_IB; /* RoCE */
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
	int err;

	FAULT_NULL(LIB, "ibv_open_device");
	err = fab_device_by_serial(m->serial, &info);
	if (err) {
		errno = -err;
		return NULL;
	}
	mc = calloc(1, sizeof *mc);
	if (!mc) {
		errno = ENOMEM;
		return NULL;
	}
	mc->magic = VERBS_CONTEXT_MAGIC;
	mc->mdev = m;
	mc->vctx.sz = sizeof mc->vctx;
	mc->vctx.query_port = query_port_ex;
	mc->vctx.context.device = &m->dev;
	/* The data path, reached through the header's static inline wrappers
	 * (ibv_post_send, ibv_poll_cq, ...) as with a real provider. */
	mc->vctx.context.ops.post_send = verbs_post_send;
	mc->vctx.context.ops.post_recv = verbs_post_recv;
	mc->vctx.context.ops.poll_cq = verbs_poll_cq;
	mc->vctx.context.ops.req_notify_cq = verbs_req_notify_cq;
	mc->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	mc->vctx.context.num_comp_vectors = 1;
	mc->vctx.context.cmd_fd = -1;
	/* Asynchronous events never come, but the fd is real and pollable. */
	mc->vctx.context.async_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&mc->vctx.context.mutex, NULL);
	return &mc->vctx.context;
}

MOCK_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_close_device");

	FAULT_MINUS1(LIB, "ibv_close_device");
	if (context->async_fd >= 0)
		close(context->async_fd);
	pthread_mutex_destroy(&context->mutex);
	mc->magic = 0;
	free(mc);
	return 0;
}

MOCK_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_device");
	const struct verbs_profile *p = verbs_profile_of(mc->mdev->personality);

	FAULT_POSITIVE(LIB, "ibv_query_device");
	memset(attr, 0, sizeof *attr);
	snprintf(attr->fw_ver, sizeof attr->fw_ver, "%s", p->fw_ver);
	attr->node_guid = mc->mdev->guid;
	attr->sys_image_guid = mc->mdev->guid;
	attr->max_mr_size = ~0ull;
	attr->page_size_cap = 0xfffff000;
	attr->vendor_id = p->vendor_id;
	attr->vendor_part_id = p->vendor_part_id;
	attr->max_qp = p->max_qp;
	attr->max_qp_wr = p->max_qp_wr;
	attr->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
				 IBV_DEVICE_SYS_IMAGE_GUID;
	attr->max_sge = p->max_sge;
	attr->max_sge_rd = p->max_sge;
	attr->max_cq = p->max_cq;
	attr->max_cqe = p->max_cqe;
	attr->max_mr = p->max_mr;
	attr->max_pd = p->max_pd;
	attr->max_qp_rd_atom = p->max_qp_rd_atom;
	attr->max_res_rd_atom = p->max_qp_rd_atom * p->max_qp;
	attr->max_qp_init_rd_atom = p->max_qp_rd_atom;
	attr->atomic_cap = IBV_ATOMIC_HCA;
	attr->max_srq = p->max_srq;
	attr->max_srq_wr = p->max_srq_wr;
	attr->max_srq_sge = p->max_sge;
	attr->max_pkeys = p->max_pkeys;
	attr->local_ca_ack_delay = p->local_ca_ack_delay;
	attr->phys_port_cnt = 1;
	return 0;
}

/* The one port of a RoCE device: active, Ethernet, LID 0. */
static int query_port_ex(struct ibv_context *ctx, uint8_t port_num,
			 struct ibv_port_attr *attr, size_t attr_len)
{
	struct mock_context *mc = verbs_context_of(ctx, "ibv_query_port");
	const struct verbs_profile *p = verbs_profile_of(mc->mdev->personality);
	struct ibv_port_attr a = {
		.state = IBV_PORT_ACTIVE,
		.max_mtu = IBV_MTU_4096,
		.active_mtu = IBV_MTU_1024,
		.gid_tbl_len = p->gid_tbl_len,
		.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS,
		.max_msg_sz = p->max_msg_sz,
		.pkey_tbl_len = p->max_pkeys,
		.max_vl_num = 1,
		.active_width = 2,  /* 4x */
		.active_speed = 32, /* 25 Gb/s lanes */
		.phys_state = 5,    /* LinkUp */
		.link_layer = IBV_LINK_LAYER_ETHERNET,
	};

	if (mock_fault(FAULT_NAME(LIB, "ibv_query_port"), &errno))
		return errno;
	if (port_num != 1)
		return EINVAL;
	memcpy(attr, &a, attr_len < sizeof a ? attr_len : sizeof a);
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

MOCK_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			      union ibv_gid *gid)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_query_gid");
	int err;

	FAULT_MINUS1(LIB, "ibv_query_gid");
	if (port_num != 1)
		return mock_errno(EINVAL);
	err = fab_device_gid(mc->mdev->serial, index, gid);
	return err ? mock_errno(-err) : 0;
}

struct mock_pd *verbs_pd_of(struct ibv_pd *pd, const char *call)
{
	struct mock_pd *mpd = (struct mock_pd *)pd;

	MOCK_REQUIRE(pd, call, "pd is NULL (upstream dereferences it)");
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
	mpd = calloc(1, sizeof *mpd);
	if (!mpd) {
		errno = ENOMEM;
		return NULL;
	}
	mpd->magic = VERBS_PD_MAGIC;
	mpd->pd.context = context;
	mpd->pd.handle = __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
	return &mpd->pd;
}

/* The kernel refuses while QPs or MRs hold the PD (ib_destroy_usecnt). */
MOCK_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct mock_pd *mpd = verbs_pd_of(pd, "ibv_dealloc_pd");

	FAULT_POSITIVE(LIB, "ibv_dealloc_pd");
	pthread_mutex_lock(&verbs_lock);
	if (mpd->users) {
		pthread_mutex_unlock(&verbs_lock);
		return EBUSY;
	}
	mpd->magic = 0;
	pthread_mutex_unlock(&verbs_lock);
	free(mpd);
	return 0;
}
