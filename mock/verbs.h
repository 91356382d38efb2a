/* Internal to the drop-in libibverbs: what an ibv_device and ibv_context
 * carry, and the per-personality device profile. */
#ifndef RDMAMOCK_VERBS_H
#define RDMAMOCK_VERBS_H

#include <infiniband/verbs.h>

#include "fabric.h"
#include "mock.h"

#define VERBS_CONTEXT_MAGIC 0x76637478u /* "vctx" */

/* What a device of one personality reports. Limits are typical of the
 * hardware (mlx5: ConnectX-5; generic: rdma_rxe's rxe_param.h), not
 * measured; they matter where librdmacm checks against them. */
struct verbs_profile {
	const char *fw_ver;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_srq;
	int max_srq_wr;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint32_t max_msg_sz;
	int gid_tbl_len;
};

const struct verbs_profile *verbs_profile_of(enum rdmamock_personality p);

struct mock_device {
	struct ibv_device dev; /* what callers see */
	struct mock_device *next;
	unsigned serial;       /* the fabric device behind it */
	enum rdmamock_personality personality;
	__be64 guid;
};

struct mock_context {
	struct verbs_context vctx; /* ends with the ibv_context callers see */
	unsigned magic;
	struct mock_device *mdev;
};

/* The mock device behind an ibv_device or a context (abort on garbage). */
struct mock_device *verbs_device_of(struct ibv_device *dev, const char *call);
struct mock_context *verbs_context_of(struct ibv_context *ctx, const char *call);

#endif
