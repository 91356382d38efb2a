/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdma_resolve_addrinfo, rdma_query_addrinfo and rdma_write_cm_event
 * (RDMACM_1.4), in librdmacm/cma.c's order and with its return values, the
 * odd ones included: a failed resolution leaves errno holding whatever
 * rdma_getaddrinfo returned (a negative EAI code, or -1), as upstream's
 * ERR(ret) does. The DNS path resolves in the call and reports
 * ADDRINFO_RESOLVED through an INTERNAL event written to the channel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

#define LIB "rdmacm"

/* resolve_ai_sa: an IB service id (what strtoull reads whole, any base)
 * or name (up to 63 bytes), asked of the SA. */
int cm_resolve_sa(struct cm_id *cid, const char *service)
{
	char name[FAB_SERVICE_NAME] = "";
	unsigned flags = FAB_SERVICE_ID;
	unsigned long long sid;
	char *end = NULL;
	int err;

	if (!service)
		return mock_errno(EINVAL);
	errno = 0;
	sid = strtoull(service, &end, 0);
	if (errno || end == service || *end) {
		sid = 0;
		flags = FAB_SERVICE_NAMED;
		strncpy(name, service, sizeof name - 1);
	}
	err = fab_resolve_ib_service(cid->fid, flags, sid, name);
	if (err)
		return cm_err(err);
	return cm_complete(cid);
}

static int resolve_dns(struct cm_id *cid, const char *node, const char *service,
		       const struct rdma_addrinfo *hints)
{
	int ret = rdma_getaddrinfo(node, service, hints, &cid->resolved_ai);

	if (ret)
		return ret;
	ret = fab_write_event(cid->fid, RDMA_CM_EVENT_INTERNAL, 0, RDMA_CM_EVENT_ADDRINFO_RESOLVED);
	if (ret) {
		rdma_freeaddrinfo(cid->resolved_ai);
		cid->resolved_ai = NULL;
		return cm_err(ret);
	}
	return cm_complete(cid);
}

/* Positive errno values are upstream's direct refusals (ENOTSUP); -1 and
 * negative EAI codes come back from the paths. */
static int resolve(struct cm_id *cid, const char *node, const char *service,
		   const struct rdma_addrinfo *hints)
{
	if (hints && (hints->ai_flags & RAI_SA) && (hints->ai_flags & RAI_DNS))
		return ENOTSUP;
	if (hints && (hints->ai_flags & RAI_SA))
		return node ? ENOTSUP : cm_resolve_sa(cid, service);
	return resolve_dns(cid, node, service, hints);
}

MOCK_EXPORT int rdma_resolve_addrinfo(struct rdma_cm_id *id, const char *node, const char *service,
				      const struct rdma_addrinfo *hints)
{
	struct cm_id *cid;
	int ret;
	LEDGER_CALL("rdma_resolve_addrinfo"); /* the list rdma_query_addrinfo hands over */

	FAULT_MINUS1(LIB, "rdma_resolve_addrinfo");
	if (!id)
		return mock_errno(EINVAL);
	cid = cm_id_of(id, "rdma_resolve_addrinfo");
	pthread_mutex_lock(&cid->mut);
	if (cid->resolving_ai) {
		pthread_mutex_unlock(&cid->mut);
		return mock_errno(EBUSY);
	}
	cid->resolving_ai = true;
	pthread_mutex_unlock(&cid->mut);
	ret = resolve(cid, node, service, hints);
	if (ret) {
		cid->resolving_ai = false;
		return mock_errno(ret);
	}
	return 0;
}

MOCK_EXPORT int rdma_query_addrinfo(struct rdma_cm_id *id, struct rdma_addrinfo **info)
{
	struct cm_id *cid;

	FAULT_MINUS1(LIB, "rdma_query_addrinfo");
	if (!id || !info)
		return mock_errno(EINVAL);
	cid = cm_id_of(id, "rdma_query_addrinfo");
	pthread_mutex_lock(&cid->mut);
	if (!cid->resolving_ai || !cid->resolved_ai) {
		pthread_mutex_unlock(&cid->mut);
		return mock_errno(ENOENT);
	}
	*info = cid->resolved_ai;
	cid->resolved_ai = NULL;
	cid->resolving_ai = false;
	pthread_mutex_unlock(&cid->mut);
	return 0;
}

MOCK_EXPORT int rdma_write_cm_event(struct rdma_cm_id *id, enum rdma_cm_event_type event,
				    int status, uint64_t arg)
{
	struct cm_id *cid = cm_id_of(id, "rdma_write_cm_event");

	FAULT_MINUS1(LIB, "rdma_write_cm_event");
	if (event != RDMA_CM_EVENT_USER)
		return mock_errno(EINVAL);
	return cm_err(fab_write_event(cid->fid, event, status, arg));
}
