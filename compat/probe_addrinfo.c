/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Build-time probe: does <rdma/rdma_cma.h> declare the v60 addrinfo calls
 * and events? It compiles only if it does. */
#include <rdma/rdma_cma.h>

int probe(struct rdma_cm_id *id, struct rdma_addrinfo **info);

int probe(struct rdma_cm_id *id, struct rdma_addrinfo **info)
{
	int (*resolve)(struct rdma_cm_id *, const char *, const char *,
		       const struct rdma_addrinfo *) = rdma_resolve_addrinfo;
	int (*write_event)(struct rdma_cm_id *, enum rdma_cm_event_type, int, uint64_t) =
		rdma_write_cm_event;

	return resolve != 0 && write_event != 0 && RDMA_CM_EVENT_ADDRINFO_RESOLVED == 16 &&
	       RDMA_CM_EVENT_USER == 18 && RAI_SA && RAI_DNS ? rdma_query_addrinfo(id, info) : 0;
}
