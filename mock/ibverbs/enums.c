/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs' helpers that cannot fail: the names programs print for the
 * verbs enums (the same text as upstream's, since programs print it), the
 * link-rate conversions, fork status, and the provider-side helpers a
 * provider library may call before any command. */
#include <stddef.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "verbs.h"

#define LIB "ibverbs"

MOCK_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA: return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH: return "InfiniBand switch";
	case IBV_NODE_ROUTER: return "InfiniBand router";
	case IBV_NODE_RNIC: return "iWARP NIC";
	case IBV_NODE_USNIC: return "usNIC";
	case IBV_NODE_USNIC_UDP: return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED: return "unspecified";
	default: return "unknown";
	}
}

MOCK_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	switch (port_state) {
	case IBV_PORT_NOP: return "no state change (NOP)";
	case IBV_PORT_DOWN: return "down";
	case IBV_PORT_INIT: return "init";
	case IBV_PORT_ARMED: return "armed";
	case IBV_PORT_ACTIVE: return "active";
	case IBV_PORT_ACTIVE_DEFER: return "active defer";
	default: return "unknown";
	}
}

/* rdma-core 65's table (libibverbs/enum_strs.c): IBV_EVENT_DEVICE_SPEED_CHANGE,
 * 20, came with rdma-core 62 and postdates rdma-core 44's header. */
MOCK_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	switch ((int)event) {
	case IBV_EVENT_CQ_ERR: return "CQ error";
	case IBV_EVENT_QP_FATAL: return "local work queue catastrophic error";
	case IBV_EVENT_QP_REQ_ERR: return "invalid request local work queue error";
	case IBV_EVENT_QP_ACCESS_ERR: return "local access violation work queue error";
	case IBV_EVENT_COMM_EST: return "communication established";
	case IBV_EVENT_SQ_DRAINED: return "send queue drained";
	case IBV_EVENT_PATH_MIG: return "path migrated";
	case IBV_EVENT_PATH_MIG_ERR: return "path migration request error";
	case IBV_EVENT_DEVICE_FATAL: return "local catastrophic error";
	case IBV_EVENT_PORT_ACTIVE: return "port active";
	case IBV_EVENT_PORT_ERR: return "port error";
	case IBV_EVENT_LID_CHANGE: return "LID change";
	case IBV_EVENT_PKEY_CHANGE: return "P_Key change";
	case IBV_EVENT_SM_CHANGE: return "SM change";
	case IBV_EVENT_SRQ_ERR: return "SRQ catastrophic error";
	case IBV_EVENT_SRQ_LIMIT_REACHED: return "SRQ limit reached";
	case IBV_EVENT_QP_LAST_WQE_REACHED: return "last WQE reached";
	case IBV_EVENT_CLIENT_REREGISTER: return "client reregistration";
	case IBV_EVENT_GID_CHANGE: return "GID table change";
	case IBV_EVENT_WQ_FATAL: return "WQ fatal";
	case 20: return "Device link speed change";
	default: return "unknown";
	}
}

/* rdma-core 65's private name table; the two newest opcodes (flush, 14, and
 * atomic write, 15) postdate rdma-core 44's header. The enum skips 12 and
 * 13, which upstream's range check (libibverbs/enum_strs.c
 * ibv_wr_opcode_str) lets through to empty slots of its array: NULL. */
MOCK_EXPORT const char *ibv_wr_opcode_str(enum ibv_wr_opcode opcode)
{
	switch ((int)opcode) {
	case IBV_WR_RDMA_WRITE: return "rdma-write";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "rdma-write-with-imm";
	case IBV_WR_SEND: return "send";
	case IBV_WR_SEND_WITH_IMM: return "send-with-imm";
	case IBV_WR_RDMA_READ: return "rdma-read";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "atomic-cmp-and-swp";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "atomic-fetch-and-add";
	case IBV_WR_LOCAL_INV: return "local-inv";
	case IBV_WR_BIND_MW: return "bind-mw";
	case IBV_WR_SEND_WITH_INV: return "send-with-inv";
	case IBV_WR_TSO: return "tso";
	case IBV_WR_DRIVER1: return "driver1";
	case 14: return "flush";
	case 15: return "atomic-write";
	case 12: case 13: return NULL;
	default: return "unknown";
	}
}

/* ---------------------------------------------------------------- link rates */

/* Each rate: its multiple of 2.5 Gb/s (-1 where it is not one, as for the
 * FDR and EDR lane rates) and its data rate in Mb/s. */
struct rate {
	enum ibv_rate rate;
	int mult;
	int mbps;
};

static const struct rate rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },      { IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },      { IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },     { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },     { IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },   { IBV_RATE_14_GBPS, -1, 14062 },
	{ IBV_RATE_56_GBPS, -1, 56250 },     { IBV_RATE_112_GBPS, -1, 112500 },
	{ IBV_RATE_168_GBPS, -1, 168750 },   { IBV_RATE_25_GBPS, -1, 25781 },
	{ IBV_RATE_100_GBPS, -1, 103125 },   { IBV_RATE_200_GBPS, -1, 206250 },
	{ IBV_RATE_300_GBPS, -1, 309375 },   { IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },     { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },  { IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};

#define NRATES (sizeof rates / sizeof rates[0])

static const struct rate *rate_of(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return &rates[i];
	return NULL;
}

MOCK_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct rate *r = rate_of(rate);

	return r ? r->mult : -1;
}

MOCK_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; mult > 0 && i < NRATES; i++)
		if (rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

MOCK_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct rate *r = rate_of(rate);

	return r ? r->mbps : -1;
}

MOCK_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---------------------------------------------------------------- fork, sysfs */

/* The mock's "kernel" is a modern one: pinned pages are copied on fork
 * (Linux 5.13 and later), so there is nothing to initialise, as upstream
 * reports on such kernels. */
MOCK_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

MOCK_EXPORT int ibv_fork_init(void)
{
	FAULT_POSITIVE(LIB, "ibv_fork_init");
	return 0;
}

/* Without fork support initialised there are no ranges to mark, and
 * upstream returns 0 (memory.c: madvise only once ibv_fork_init has set
 * its tree up, which it never does when fork is UNNEEDED). */
MOCK_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	FAULT_MINUS1(LIB, "ibv_dontfork_range");
	(void)base, (void)size;
	return 0;
}

MOCK_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	FAULT_MINUS1(LIB, "ibv_dofork_range");
	(void)base, (void)size;
	return 0;
}

/* Where upstream finds sysfs; the mock's devices are not in it, and the
 * calls that read device files (ibv_read_sysfs_file) answer from the
 * fabric instead. */
MOCK_EXPORT const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}

/* ---------------------------------------------------------------- provider helpers */

/* The layout libibverbs and its providers share (cmd_ioctl.h, the same in
 * rdma-core 44 and 65): a chain of buffers, each counting its attributes
 * from hdr.attrs to next_attr. */
struct provider_command_buffer {
	struct provider_command_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw[4];
	uint8_t flags;
	struct ib_uverbs_ioctl_hdr hdr;
};

/* A provider sizes its ioctl with this before it calls execute_ioctl,
 * which the mock does not implement; the count is still the true one. */
MOCK_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
						 struct provider_command_buffer *link)
{
	for (; link; link = link->next)
		num_attrs += (unsigned int)(link->next_attr - link->hdr.attrs);
	return num_attrs;
}
