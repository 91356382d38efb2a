/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdma_resolve_addrinfo, rdma_query_addrinfo and rdma_write_cm_event came
 * with rdma-core v60 (symbol version RDMACM_1.4). Against an older
 * <rdma/rdma_cma.h> (Debian 12 has v44) this supplies their declarations
 * and constants, with upstream's values. Whether the system header has them
 * is decided by a build-time probe (compat/probe_addrinfo.c), recorded in
 * the generated config.h; nothing is guessed from version numbers. */
#ifndef RDMACHECK_COMPAT_RDMA_ADDRINFO_H
#define RDMACHECK_COMPAT_RDMA_ADDRINFO_H

#include <stdint.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "config.h"

#if !RDMACHECK_HAVE_ADDRINFO
#define RDMA_CM_EVENT_ADDRINFO_RESOLVED ((enum rdma_cm_event_type)16)
#define RDMA_CM_EVENT_ADDRINFO_ERROR ((enum rdma_cm_event_type)17)
#define RDMA_CM_EVENT_USER ((enum rdma_cm_event_type)18)
#define RDMA_CM_EVENT_INTERNAL ((enum rdma_cm_event_type)19)

#define RAI_SA 0x00000010
#define RAI_DNS 0x00000020 /* mutually exclusive with RAI_SA */

int rdma_resolve_addrinfo(struct rdma_cm_id *id, const char *node, const char *service,
			  const struct rdma_addrinfo *hints);
int rdma_query_addrinfo(struct rdma_cm_id *id, struct rdma_addrinfo **info);
int rdma_write_cm_event(struct rdma_cm_id *id, enum rdma_cm_event_type event, int status,
			uint64_t arg);
#endif

/* A USER event's argument: event->param.arg in newer headers, the first
 * eight bytes of the param union. */
static inline uint64_t rdmacheck_event_arg(const struct rdma_cm_event *event)
{
	uint64_t arg;

	memcpy(&arg, &event->param, sizeof arg);
	return arg;
}

static inline void rdmacheck_set_event_arg(struct rdma_cm_event *event, uint64_t arg)
{
	memcpy(&event->param, &arg, sizeof arg);
}

#endif
