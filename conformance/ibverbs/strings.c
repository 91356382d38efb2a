/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_wc_status_str, ibv_event_type_str, ibv_node_type_str,
 * ibv_port_state_str and ibv_wr_opcode_str over every value of their enums
 * and past both ends. Programs print these texts (and scripts match them),
 * so each must be libibverbs' own (enum_strs.c), and a value the library
 * does not know must give a string, "unknown", never NULL or a crash. */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fixtures.h"

struct name {
	int value;
	const char *text;
};

/* Every entry's text, then "unknown" for each value in `outside`. */
static void check_names(const char *call, const char *(*str)(int), const struct name *names,
			size_t n, const int *outside, size_t n_outside)
{
	for (size_t i = 0; i < n; i++) {
		const char *got = str(names[i].value);

		if (!got || strcmp(got, names[i].text))
			fail_msg("%s(%d) = \"%s\", not \"%s\"", call, names[i].value,
				 got ? got : "(null)", names[i].text);
	}
	for (size_t i = 0; i < n_outside; i++) {
		const char *got = str(outside[i]);

		if (!got || strcmp(got, "unknown"))
			fail_msg("%s(%d) = \"%s\", not \"unknown\"", call, outside[i],
				 got ? got : "(null)");
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The enums are passed as int so that one checker serves them all: the
 * calls take an enum, which is an int in the ABI. */
static const char *wc_status(int v) { return ibv_wc_status_str((enum ibv_wc_status)v); }
static const char *event_type(int v) { return ibv_event_type_str((enum ibv_event_type)v); }
static const char *node_type(int v) { return ibv_node_type_str((enum ibv_node_type)v); }
static const char *port_state(int v) { return ibv_port_state_str((enum ibv_port_state)v); }

void ibv_wc_status_str__every_status(void **state)
{
	static const struct name names[] = {
		{ IBV_WC_SUCCESS, "success" },
		{ IBV_WC_LOC_LEN_ERR, "local length error" },
		{ IBV_WC_LOC_QP_OP_ERR, "local QP operation error" },
		{ IBV_WC_LOC_EEC_OP_ERR, "local EE context operation error" },
		{ IBV_WC_LOC_PROT_ERR, "local protection error" },
		{ IBV_WC_WR_FLUSH_ERR, "Work Request Flushed Error" },
		{ IBV_WC_MW_BIND_ERR, "memory management operation error" },
		{ IBV_WC_BAD_RESP_ERR, "bad response error" },
		{ IBV_WC_LOC_ACCESS_ERR, "local access error" },
		{ IBV_WC_REM_INV_REQ_ERR, "remote invalid request error" },
		{ IBV_WC_REM_ACCESS_ERR, "remote access error" },
		{ IBV_WC_REM_OP_ERR, "remote operation error" },
		{ IBV_WC_RETRY_EXC_ERR, "transport retry counter exceeded" },
		{ IBV_WC_RNR_RETRY_EXC_ERR, "RNR retry counter exceeded" },
		{ IBV_WC_LOC_RDD_VIOL_ERR, "local RDD violation error" },
		{ IBV_WC_REM_INV_RD_REQ_ERR, "remote invalid RD request" },
		{ IBV_WC_REM_ABORT_ERR, "aborted error" },
		{ IBV_WC_INV_EECN_ERR, "invalid EE context number" },
		{ IBV_WC_INV_EEC_STATE_ERR, "invalid EE context state" },
		{ IBV_WC_FATAL_ERR, "fatal error" },
		{ IBV_WC_RESP_TIMEOUT_ERR, "response timeout error" },
		{ IBV_WC_GENERAL_ERR, "general error" },
		{ IBV_WC_TM_ERR, "TM error" },
		{ IBV_WC_TM_RNDV_INCOMPLETE, "TM software rendezvous" },
	};
	static const int outside[] = { -1, IBV_WC_TM_RNDV_INCOMPLETE + 1, 1000, INT_MIN, INT_MAX };

	check_names("ibv_wc_status_str", wc_status, names, N(names), outside, N(outside));
}

/* IBV_EVENT_DEVICE_SPEED_CHANGE (20, after IBV_EVENT_WQ_FATAL) came with
 * rdma-core 62; an older library calls it "unknown". */
#define EVENT_DEVICE_SPEED_CHANGE (IBV_EVENT_WQ_FATAL + 1)

void ibv_event_type_str__every_event(void **state)
{
	static const struct name names[] = {
		{ IBV_EVENT_CQ_ERR, "CQ error" },
		{ IBV_EVENT_QP_FATAL, "local work queue catastrophic error" },
		{ IBV_EVENT_QP_REQ_ERR, "invalid request local work queue error" },
		{ IBV_EVENT_QP_ACCESS_ERR, "local access violation work queue error" },
		{ IBV_EVENT_COMM_EST, "communication established" },
		{ IBV_EVENT_SQ_DRAINED, "send queue drained" },
		{ IBV_EVENT_PATH_MIG, "path migrated" },
		{ IBV_EVENT_PATH_MIG_ERR, "path migration request error" },
		{ IBV_EVENT_DEVICE_FATAL, "local catastrophic error" },
		{ IBV_EVENT_PORT_ACTIVE, "port active" },
		{ IBV_EVENT_PORT_ERR, "port error" },
		{ IBV_EVENT_LID_CHANGE, "LID change" },
		{ IBV_EVENT_PKEY_CHANGE, "P_Key change" },
		{ IBV_EVENT_SM_CHANGE, "SM change" },
		{ IBV_EVENT_SRQ_ERR, "SRQ catastrophic error" },
		{ IBV_EVENT_SRQ_LIMIT_REACHED, "SRQ limit reached" },
		{ IBV_EVENT_QP_LAST_WQE_REACHED, "last WQE reached" },
		{ IBV_EVENT_CLIENT_REREGISTER, "client reregistration" },
		{ IBV_EVENT_GID_CHANGE, "GID table change" },
		{ IBV_EVENT_WQ_FATAL, "WQ fatal" },
	};
	static const int outside[] = { -1, EVENT_DEVICE_SPEED_CHANGE + 1, 1000, INT_MIN, INT_MAX };
	const char *speed = ibv_event_type_str((enum ibv_event_type)EVENT_DEVICE_SPEED_CHANGE);

	check_names("ibv_event_type_str", event_type, names, N(names), outside, N(outside));
	assert_non_null(speed);
	/* The mock follows rdma-core 65; a real library may be older. */
	if (rc_backend_is_mock() || strcmp(speed, "unknown"))
		assert_string_equal(speed, "Device link speed change");
}

/* IBV_NODE_UNKNOWN is -1, and 0 names no node type. */
void ibv_node_type_str__every_type(void **state)
{
	static const struct name names[] = {
		{ IBV_NODE_CA, "InfiniBand channel adapter" },
		{ IBV_NODE_SWITCH, "InfiniBand switch" },
		{ IBV_NODE_ROUTER, "InfiniBand router" },
		{ IBV_NODE_RNIC, "iWARP NIC" },
		{ IBV_NODE_USNIC, "usNIC" },
		{ IBV_NODE_USNIC_UDP, "usNIC UDP" },
		{ IBV_NODE_UNSPECIFIED, "unspecified" },
	};
	static const int outside[] = { IBV_NODE_UNKNOWN, 0, IBV_NODE_UNSPECIFIED + 1, INT_MIN, INT_MAX };

	check_names("ibv_node_type_str", node_type, names, N(names), outside, N(outside));
}

void ibv_port_state_str__every_state(void **state)
{
	static const struct name names[] = {
		{ IBV_PORT_NOP, "no state change (NOP)" },
		{ IBV_PORT_DOWN, "down" },
		{ IBV_PORT_INIT, "init" },
		{ IBV_PORT_ARMED, "armed" },
		{ IBV_PORT_ACTIVE, "active" },
		{ IBV_PORT_ACTIVE_DEFER, "active defer" },
	};
	static const int outside[] = { -1, IBV_PORT_ACTIVE_DEFER + 1, INT_MIN, INT_MAX };

	check_names("ibv_port_state_str", port_state, names, N(names), outside, N(outside));
}

/* rdma-core 49 and later; flush (14) and atomic write (15) postdate rdma-core
 * 44's header and are named by number. */
static const char *(*wr_opcode_str)(enum ibv_wr_opcode);
static const char *wr_opcode(int v) { return wr_opcode_str((enum ibv_wr_opcode)v); }

void ibv_wr_opcode_str__every_opcode(void **state)
{
	static const struct name names[] = {
		{ IBV_WR_RDMA_WRITE, "rdma-write" },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, "rdma-write-with-imm" },
		{ IBV_WR_SEND, "send" },
		{ IBV_WR_SEND_WITH_IMM, "send-with-imm" },
		{ IBV_WR_RDMA_READ, "rdma-read" },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, "atomic-cmp-and-swp" },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, "atomic-fetch-and-add" },
		{ IBV_WR_LOCAL_INV, "local-inv" },
		{ IBV_WR_BIND_MW, "bind-mw" },
		{ IBV_WR_SEND_WITH_INV, "send-with-inv" },
		{ IBV_WR_TSO, "tso" },
		{ IBV_WR_DRIVER1, "driver1" },
		{ 14, "flush" },
		{ 15, "atomic-write" },
	};
	static const int outside[] = { -1, 16, 1000, INT_MIN, INT_MAX };

	wr_opcode_str = (const char *(*)(enum ibv_wr_opcode))dlsym(RTLD_DEFAULT, "ibv_wr_opcode_str");
	if (!wr_opcode_str)
		RC_SKIP("libibverbs without ibv_wr_opcode_str (rdma-core < 49)");
	check_names("ibv_wr_opcode_str", wr_opcode, names, N(names), outside, N(outside));
}

/* 12 and 13, which the enum skips, pass upstream's range check and find
 * empty slots of its table: NULL, which a program must not print. */
void ibv_wr_opcode_str__values_the_enum_skips(void **state)
{
	wr_opcode_str = (const char *(*)(enum ibv_wr_opcode))dlsym(RTLD_DEFAULT, "ibv_wr_opcode_str");
	if (!wr_opcode_str)
		RC_SKIP("libibverbs without ibv_wr_opcode_str (rdma-core < 49)");
	assert_null(wr_opcode(12));
	assert_null(wr_opcode(13));
	rc_note_documented(false);
}
