/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What each device reports, as its driver and the kernel would: the
 * attributes of its personality, its port's state, the net device behind
 * each GID. libibverbs' queries answer from here, and so does the system
 * view (mock/sys: /sys/class/infiniband), so that both always agree. */
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* What the mock models, each device as honestly as it can: memory windows
 * of type 1 and 2B, as both rxe and mlx5_ib (with imaicl) report them; flags
 * for what the mock does not do (fast registration, raw packet QPs) are not
 * reported. */
#define CAP_FLAGS (IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR | IBV_DEVICE_PORT_ACTIVE_EVENT | \
		   IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_MEM_WINDOW | \
		   IBV_DEVICE_MEM_WINDOW_TYPE_2B)

static const struct fab_profile profiles[] = {
	[RDMAMOCK_MLX5] = {
		.fw_ver = "16.35.2000",
		.vendor_id = 0x02c9,
		.vendor_part_id = 4119,
		.hw_ver = 0,
		.max_qp = 262144,
		.max_qp_wr = 32768,
		.max_sge = 30,
		.max_cq = 16777216,
		.max_cqe = 4194303,
		.max_mr = 16777216,
		.max_mw = 16777216, /* 1 << log_max_mkey, as mlx5_ib reports with imaicl */
		.max_pd = 16777216,
		.max_ah = 2147483647,
		.max_qp_rd_atom = 16,
		.max_srq = 8388608,
		.max_srq_wr = 32767,
		.max_srq_sge = 31,
		.max_mcast_grp = 2097152,
		.max_mcast_qp_attach = 240,
		.max_pkeys = 128,
		/* mlx5_ib's RoCE ports report one P_Key (mlx5_query_port_roce). */
		.pkey_tbl_len = 1,
		.local_ca_ack_delay = 16,
		.max_msg_sz = 0x40000000,
		.gid_tbl_len = 255,
		/* MLX5_CAP_GEN max_wqe_sz_sq of ConnectX-4 and -5 (perftest's
		 * ib_send_lat -I 1004 works and -I 1005 fails on a ConnectX-4 Lx,
		 * as reported to perftest: a QP created to post SENDs only).
		 * It leaves 828 bytes inline on an RC QP that may post
		 * anything, 956 on a UD QP. */
		.max_wqe_size = 1024,
		.device_cap_flags = CAP_FLAGS | IBV_DEVICE_XRC,
		.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS,
		.active_width = 2,  /* 4X */
		.active_speed = 32, /* 25 Gb/s lanes */
		.xrc = true,
		.completion_timestamp = true,
		.hca_core_clock = 156250,
		/* MEMIC: 128 KiB, as ibv_devinfo -v reports on ConnectX-6 Dx
		 * (part 4125) and other ConnectX devices in published output. */
		.max_dm_size = 131072,
		.atomic_cap = IBV_ATOMIC_HCA,
		.gid_roce_v1 = true,
	},
	/* rdma_rxe as measured on Debian 12's kernel 6.1 (ibv_query_device,
	 * ibv_query_port), less the fast registration it has and the mock has
	 * not (IBV_DEVICE_MEM_MGT_EXTENSIONS). */
	[RDMAMOCK_GENERIC] = {
		.fw_ver = "0.0.0",
		.vendor_id = 0xffffff,
		.vendor_part_id = 0,
		.hw_ver = 0,
		.max_qp = 1048560,
		.max_qp_wr = 1048576,
		.max_sge = 32,
		.max_cq = 1048576,
		.max_cqe = 32767,
		.max_mr = 524287,
		.max_mw = 524287,
		.max_pd = 1048576,
		.max_ah = 32767,
		.max_qp_rd_atom = 128,
		.max_srq = 917503,
		.max_srq_wr = 1048576,
		.max_srq_sge = 27,
		.max_mcast_grp = 8192,
		.max_mcast_qp_attach = 56,
		.max_pkeys = 64,
		.pkey_tbl_len = 1,
		.local_ca_ack_delay = 15,
		.max_msg_sz = 0x800000,
		.gid_tbl_len = 1024,
		.max_inline_data = 512,
		.device_cap_flags = CAP_FLAGS | IBV_DEVICE_AUTO_PATH_MIG | IBV_DEVICE_CHANGE_PHY_PORT |
				    IBV_DEVICE_UD_AV_PORT_ENFORCE | IBV_DEVICE_SRQ_RESIZE,
		.port_cap_flags = IBV_PORT_CM_SUP,
		.active_width = 1, /* 1X */
		.active_speed = 1, /* 2.5 Gb/s */
		.srq_resize = true,
		.atomic_cap = IBV_ATOMIC_HCA,
	},
};

const struct fab_profile *fab_personality_profile(enum rdmamock_personality p)
{
	return &profiles[p == RDMAMOCK_MLX5 ? RDMAMOCK_MLX5 : RDMAMOCK_GENERIC];
}

/* As ibv_query_device reports it. */
int fab_device_attr(unsigned serial, struct ibv_device_attr *attr)
{
	const struct fab_profile *p;
	struct fab_device_info info;
	int err = fab_device_by_serial(serial, &info);

	if (err)
		return err;
	p = fab_profile_of(info.personality);

	memset(attr, 0, sizeof *attr);
	snprintf(attr->fw_ver, sizeof attr->fw_ver, "%s", p->fw_ver);
	attr->node_guid = info.guid;
	attr->sys_image_guid = info.guid;
	attr->max_mr_size = p->max_mr_size ? p->max_mr_size : ~0ull;
	attr->page_size_cap = 0xfffff000;
	attr->vendor_id = p->vendor_id;
	attr->vendor_part_id = p->vendor_part_id;
	attr->hw_ver = p->hw_ver;
	attr->max_qp = p->max_qp;
	attr->max_qp_wr = p->max_qp_wr;
	attr->device_cap_flags = p->device_cap_flags;
	attr->max_sge = p->max_sge;
	attr->max_sge_rd = p->max_sge_rd ? p->max_sge_rd : p->max_sge;
	attr->max_cq = p->max_cq;
	attr->max_cqe = p->max_cqe;
	attr->max_mr = p->max_mr;
	attr->max_mw = p->max_mw;
	attr->max_pd = p->max_pd;
	attr->max_qp_rd_atom = p->max_qp_rd_atom;
	attr->max_res_rd_atom = p->max_qp_rd_atom * p->max_qp;
	attr->max_qp_init_rd_atom = p->max_qp_init_rd_atom ? p->max_qp_init_rd_atom : p->max_qp_rd_atom;
	attr->atomic_cap = p->atomic_cap;
	attr->max_mcast_grp = p->max_mcast_grp;
	attr->max_mcast_qp_attach = p->max_mcast_qp_attach;
	attr->max_total_mcast_qp_attach = p->max_mcast_grp * p->max_mcast_qp_attach;
	attr->max_ah = p->max_ah;
	attr->max_srq = p->max_srq;
	attr->max_srq_wr = p->max_srq_wr;
	attr->max_srq_sge = p->max_srq_sge;
	attr->max_pkeys = p->max_pkeys;
	attr->local_ca_ack_delay = p->local_ca_ack_delay;
	attr->phys_port_cnt = 1;
	return 0;
}

/* The one port of a device: RoCE (active, Ethernet, LID 0) or InfiniBand;
 * DOWN while rdmamock_port_set holds it down, as rxe on a netdev that is
 * down. */
int fab_port_attr(unsigned serial, struct ibv_port_attr *attr)
{
	struct fab_device_info info;
	const struct fab_profile *p;
	uint32_t qkey_violations = 0;
	int err = fab_device_by_serial(serial, &info);

	if (err)
		return err;
	p = fab_profile_of(info.personality);
	fab_device_counters(serial, &qkey_violations);
	*attr = (struct ibv_port_attr){
		.state = info.port_down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE,
		.max_mtu = IBV_MTU_4096,
		.active_mtu = fab_active_mtu(info.ib),
		.gid_tbl_len = p->gid_tbl_len,
		.port_cap_flags = p->port_cap_flags,
		.max_msg_sz = p->max_msg_sz,
		.qkey_viol_cntr = qkey_violations,
		.pkey_tbl_len = p->pkey_tbl_len,
		.max_vl_num = 1,
		.active_width = p->active_width,
		.active_speed = p->active_speed,
		/* Disabled (rxe44's sysfs once its netdev is down), LinkUp */
		.phys_state = info.port_down ? 3 : 5,
		.link_layer = IBV_LINK_LAYER_ETHERNET,
		.flags = IBV_QPF_GRH_REQUIRED, /* RoCE */
	};
	/* A ConnectX port in InfiniBand mode (ibv_devinfo on ConnectX-4 to
	 * 6 IB ports): its LID and the SM's from the fabric, which is the
	 * subnet's SM, LMC 0; no GRH needed within the subnet; MTU 4096;
	 * one GID, 128 slots; its capability mask without IP-based GIDs. */
	if (info.ib) {
		attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
		attr->flags = 0;
		attr->lid = info.lid;
		attr->sm_lid = FAB_SM_LID;
		attr->gid_tbl_len = FAB_IB_GID_TBL_LEN;
		attr->port_cap_flags = 0x2651e848;
	}
	return 0;
}

static const uint8_t *addr_bytes(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr :
					  (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
}

/* want (len bytes) lies in ifa's subnet. */
static bool same_subnet(const struct ifaddrs *ifa, const uint8_t *want, size_t len)
{
	const uint8_t *have = addr_bytes(ifa->ifa_addr);
	const uint8_t *mask = ifa->ifa_netmask ? addr_bytes(ifa->ifa_netmask) : NULL;

	for (size_t i = 0; i < len; i++)
		if ((have[i] ^ want[i]) & (mask ? mask[i] : 0xff))
			return false;
	return true;
}

unsigned fab_gid_netdev(unsigned serial, const union ibv_gid *gid, char *ifname)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct fab_device_info info;
	struct ifaddrs *list, *ifa;
	unsigned index = 0;
	uint8_t want[16];
	int family;

	if (ifname)
		ifname[0] = '\0';
	if (gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80) {
		int i = 0;

		if (fab_device_by_serial(serial, &info) || !info.naddrs)
			return 0;
		/* Its first address that says which net device: every one
		 * has a link-local address. */
		while (i + 1 < info.naddrs && fab_addr_is_link_local((struct sockaddr *)&info.addrs[i]))
			i++;
		family = info.addrs[i].ss_family;
		if (family == AF_INET)
			memcpy(want, &((struct sockaddr_in *)&info.addrs[i])->sin_addr, 4);
		else
			memcpy(want, &((struct sockaddr_in6 *)&info.addrs[i])->sin6_addr, 16);
	} else if (!memcmp(gid->raw, v4mapped, sizeof v4mapped)) {
		family = AF_INET;
		memcpy(want, gid->raw + 12, 4);
	} else {
		family = AF_INET6;
		memcpy(want, gid->raw, 16);
	}
	if (getifaddrs(&list))
		return 0;
	for (ifa = list; ifa && !index; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family ||
		    !same_subnet(ifa, want, family == AF_INET ? 4 : 16))
			continue;
		index = if_nametoindex(ifa->ifa_name);
		if (index && ifname)
			snprintf(ifname, IF_NAMESIZE, "%s", ifa->ifa_name);
	}
	freeifaddrs(list);
	return index;
}
