/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdma_getaddrinfo / rdma_freeaddrinfo, as librdmacm/addrinfo.c behaves:
 * one result (the first getaddrinfo gives), the address on the source side
 * for RAI_PASSIVE and the destination side otherwise, getaddrinfo's own
 * EAI_* code returned as it is. No ibacm: no route or connect data. RAI_SA
 * (v60) asks the SA of each InfiniBand port for a service's records; RoCE
 * ports reach no SA. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>
#include <infiniband/verbs.h>

#include "cm.h"

#define LIB "rdmacm"

static void to_addrinfo_hints(struct addrinfo *ai, const struct rdma_addrinfo *rai)
{
	memset(ai, 0, sizeof *ai);
	if (rai->ai_flags & RAI_PASSIVE)
		ai->ai_flags = AI_PASSIVE;
	if (rai->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (rai->ai_family != AF_IB)
		ai->ai_family = rai->ai_family;
	if (rai->ai_qp_type == IBV_QPT_RC || rai->ai_qp_type == IBV_QPT_UC ||
	    rai->ai_qp_type == IBV_QPT_XRC_SEND || rai->ai_qp_type == IBV_QPT_XRC_RECV)
		ai->ai_socktype = SOCK_STREAM;
	else if (rai->ai_qp_type == IBV_QPT_UD)
		ai->ai_socktype = SOCK_DGRAM;
	if (rai->ai_port_space == RDMA_PS_TCP)
		ai->ai_protocol = IPPROTO_TCP;
	else if (rai->ai_port_space == RDMA_PS_UDP || rai->ai_port_space == RDMA_PS_IPOIB)
		ai->ai_protocol = IPPROTO_UDP;
	else if (rai->ai_port_space == RDMA_PS_IB)
		ai->ai_protocol = ai->ai_socktype == SOCK_STREAM ? IPPROTO_TCP
				  : ai->ai_socktype == SOCK_DGRAM ? IPPROTO_UDP : 0;
}

static int copy_addr(struct sockaddr **dst, socklen_t *dst_len, const void *src, socklen_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return mock_errno(ENOMEM);
	memcpy(*dst, src, len);
	*dst_len = len;
	return 0;
}

/* An address the caller gave in the hints, as upstream copies it: len
 * bytes from it, which must be there (upstream reads them whatever they
 * are: a NULL address crashes, a length past any address reads beyond it). */
static int copy_hint(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *src,
		     socklen_t len, const char *which)
{
	MOCK_REQUIRE(src, "rdma_getaddrinfo",
		     "hints->%s_len is %u but hints->%s_addr is NULL (upstream copies from it)", which,
		     (unsigned)len, which);
	MOCK_REQUIRE(len <= sizeof(struct sockaddr_storage), "rdma_getaddrinfo",
		     "hints->%s_len %u is longer than any address (upstream copies that many bytes)",
		     which, (unsigned)len);
	return copy_addr(dst, dst_len, src, len);
}

/* An IPv6 address as AF_IB, the service id built from port space and port. */
static int to_sockaddr_ib(enum rdma_port_space ps, struct sockaddr **dst, socklen_t *dst_len,
			  const struct sockaddr_in6 *src)
{
	struct sockaddr_ib *sib = calloc(1, sizeof *sib);
	uint16_t port = ntohs(src->sin6_port);

	if (!sib)
		return mock_errno(ENOMEM);
	sib->sib_family = AF_IB;
	sib->sib_pkey = htobe16(0xffff);
	sib->sib_flowinfo = src->sin6_flowinfo;
	memcpy(&sib->sib_addr, &src->sin6_addr, sizeof sib->sib_addr);
	sib->sib_sid = htobe64(((uint64_t)ps << 16) + port);
	if (ps)
		sib->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
	if (port)
		sib->sib_sid_mask |= htobe64(RDMA_IB_IP_PORT_MASK);
	sib->sib_scope_id = src->sin6_scope_id;
	*dst = (struct sockaddr *)sib;
	*dst_len = sizeof *sib;
	return 0;
}

static int from_addrinfo(struct rdma_addrinfo *rai, const struct rdma_addrinfo *hints,
			 const struct addrinfo *ai)
{
	bool passive = ai->ai_flags & AI_PASSIVE;
	bool as_ib = (hints->ai_flags & RAI_FAMILY) && hints->ai_family == AF_IB &&
		     (hints->ai_flags & RAI_NUMERICHOST);
	struct sockaddr **addr = passive ? &rai->ai_src_addr : &rai->ai_dst_addr;
	socklen_t *len = passive ? &rai->ai_src_len : &rai->ai_dst_len;

	rai->ai_qp_type = hints->ai_qp_type ? hints->ai_qp_type
			  : ai->ai_socktype == SOCK_STREAM ? IBV_QPT_RC
			  : ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD : 0;
	rai->ai_port_space = hints->ai_port_space ? hints->ai_port_space
			     : ai->ai_protocol == IPPROTO_TCP ? RDMA_PS_TCP
			     : ai->ai_protocol == IPPROTO_UDP ? RDMA_PS_UDP : 0;
	rai->ai_flags = passive ? RAI_PASSIVE : 0;
	/* No canonical name: the hints lookup() gives getaddrinfo never ask
	 * for one (AI_CANONNAME), nor do glibc's defaults without hints. */
	if (as_ib && ai->ai_family == AF_INET6) {
		rai->ai_family = AF_IB;
		return to_sockaddr_ib(rai->ai_port_space, addr, len, (const void *)ai->ai_addr);
	}
	rai->ai_family = ai->ai_family;
	return copy_addr(addr, len, ai->ai_addr, ai->ai_addrlen);
}

static int lookup(const char *node, const char *service, const struct rdma_addrinfo *hints,
		  struct rdma_addrinfo *rai)
{
	struct addrinfo ai_hints, *ai;
	int ret;

	if (hints) {
		to_addrinfo_hints(&ai_hints, hints);
		ret = getaddrinfo(node, service, &ai_hints, &ai);
	} else {
		ret = getaddrinfo(node, service, NULL, &ai);
	}
	if (ret)
		return ret;
	ret = from_addrinfo(rai, hints ? hints : &(struct rdma_addrinfo){ 0 }, ai);
	freeaddrinfo(ai);
	return ret;
}

static void free_fields(struct rdma_addrinfo *res)
{
	free(res->ai_connect);
	free(res->ai_route);
	free(res->ai_src_canonname);
	free(res->ai_dst_canonname);
	free(res->ai_src_addr);
	free(res->ai_dst_addr);
}

static void free_list(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free_fields(res);
		free(res);
		res = next;
	}
}

struct rdma_addrinfo *cm_service_addrinfo(const struct fab_service_rec *recs, int n)
{
	struct rdma_addrinfo *head = NULL, **tail = &head;

	for (int i = 0; i < n; i++) {
		struct rdma_addrinfo *ai = calloc(1, sizeof *ai);
		struct sockaddr_ib *sib = calloc(1, sizeof *sib);

		if (!ai || !sib) {
			free(ai);
			free(sib);
			free_list(head);
			errno = ENOMEM;
			return NULL;
		}
		ai->ai_flags = RAI_SA;
		ai->ai_family = AF_IB;
		ai->ai_port_space = RDMA_PS_IB;
		sib->sib_family = AF_IB;
		sib->sib_pkey = htons(recs[i].pkey);
		memcpy(&sib->sib_addr, &recs[i].gid, sizeof recs[i].gid);
		sib->sib_sid = htobe64(recs[i].id);
		sib->sib_sid_mask = htobe64(~0ull);
		ai->ai_dst_addr = (struct sockaddr *)sib;
		ai->ai_dst_len = sizeof *sib;
		*tail = ai;
		tail = &ai->ai_next;
	}
	ledger_add(LEDGER_ADDRINFO, head, "rdma_resolve_addrinfo");
	return head;
}

/* resolve_sa_on_gid: an AF_IB id of the port's GID asks its SA; each
 * record found gets that GID as its source, with RDMA_PS_IB's prefix as
 * the service id (ucma_set_sid, no port) and the record's P_Key. */
static int sa_on_gid(const union ibv_gid *gid, struct rdma_event_channel *ch, const char *service,
		     struct rdma_addrinfo **res)
{
	struct sockaddr_ib sib = { .sib_family = AF_IB };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct cm_id *cid;
	int ret;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_IB))
		return -1;
	memcpy(&sib.sib_addr, gid, sizeof *gid);
	cid = cm_id_of(id, "rdma_getaddrinfo");
	ret = rdma_bind_addr(id, (struct sockaddr *)&sib);
	if (!ret)
		ret = cm_resolve_sa(cid, service);
	if (!ret)
		ret = rdma_get_cm_event(ch, &ev);
	if (!ret) {
		ret = ev->event == RDMA_CM_EVENT_ADDRINFO_RESOLVED ? 0 : -1;
		rdma_ack_cm_event(ev);
	}
	if (!ret) {
		for (struct rdma_addrinfo *ai = cid->resolved_ai; ai; ai = ai->ai_next) {
			struct sockaddr_ib *src = calloc(1, sizeof *src);

			if (!src)
				break;
			src->sib_family = AF_IB;
			memcpy(&src->sib_addr, gid, sizeof *gid);
			src->sib_sid = htobe64((uint64_t)RDMA_PS_IB << 16);
			src->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
			src->sib_pkey = ((struct sockaddr_ib *)ai->ai_dst_addr)->sib_pkey;
			ai->ai_src_addr = (struct sockaddr *)src;
			ai->ai_src_len = sizeof *src;
		}
		*res = cid->resolved_ai;
		cid->resolved_ai = NULL;
	}
	rdma_destroy_id(id);
	return ret;
}

/* ucma_getaddrinfo_sa: each device's active InfiniBand ports in turn ask
 * their SA, through port GID 0, until one finds the service; RoCE ports
 * have no SA. Nothing found anywhere: ENOENT. */
static int sa_lookup(const char *service, struct rdma_addrinfo **res)
{
	struct rdma_event_channel *ch;
	struct ibv_device **list;
	bool found = false;
	int n = 0;

	if (!service || !res)
		return mock_errno(EINVAL);
	ch = rdma_create_event_channel();
	if (!ch)
		return -1;
	list = ibv_get_device_list(&n);
	for (int i = 0; i < n && !found; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_device_attr attr;

		if (!ctx)
			continue;
		for (int p = 1; !ibv_query_device(ctx, &attr) && p <= attr.phys_port_cnt && !found; p++) {
			struct ibv_port_attr port;
			union ibv_gid gid;

			if (ibv_query_port(ctx, (uint8_t)p, &port) ||
			    port.link_layer != IBV_LINK_LAYER_INFINIBAND || port.state < IBV_PORT_ACTIVE ||
			    ibv_query_gid(ctx, (uint8_t)p, 0, &gid))
				continue;
			found = sa_on_gid(&gid, ch, service, res) == 0;
		}
		ibv_close_device(ctx);
	}
	if (list)
		ibv_free_device_list(list);
	rdma_destroy_event_channel(ch);
	return found ? 0 : mock_errno(ENOENT);
}

MOCK_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	int ret = 0;

	/* Its failures are -1 and errno, or getaddrinfo's EAI_ code (< 0). */
	if (mock_fault(FAULT_NAME(LIB, "rdma_getaddrinfo"), &ret))
		return ret < 0 ? ret : mock_errno(ret);
	if (!service && !node && !hints)
		return mock_errno(EINVAL);
	if (cm_init())
		return -1;
	if (hints && (hints->ai_flags & RAI_SA)) {
		if (node || (hints->ai_flags & RAI_DNS))
			return mock_errno(EOPNOTSUPP);
		return sa_lookup(service, res);
	}
	MOCK_REQUIRE(res, "rdma_getaddrinfo", "res is NULL (upstream stores the result through it)");
	rai = calloc(1, sizeof *rai);
	if (!rai)
		return mock_errno(ENOMEM);
	if (node || service) {
		ret = lookup(node, service, hints, rai);
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len)
			ret = copy_hint(&rai->ai_dst_addr, &rai->ai_dst_len, hints->ai_dst_addr,
					hints->ai_dst_len, "ai_dst");
	}
	if (!ret && !rai->ai_src_len && hints && hints->ai_src_len)
		ret = copy_hint(&rai->ai_src_addr, &rai->ai_src_len, hints->ai_src_addr,
				hints->ai_src_len, "ai_src");
	if (ret) {
		free_list(rai);
		return ret;
	}
	ledger_add(LEDGER_ADDRINFO, rai, "rdma_getaddrinfo");
	*res = rai;
	return 0;
}

/* The heads of the last lists the mock made and freed stay allocated
 * (their fields freed, the head zeroed) for QUARANTINE_SLOTS frees more:
 * no malloc can hand their address out again meanwhile, so a pointer found
 * here is the mock's own list freed twice, never a caller's new list at a
 * reused address. */
#define QUARANTINE_SLOTS 64
static struct rdma_addrinfo *quarantine[QUARANTINE_SLOTS];
static unsigned int quarantine_next;
static pthread_mutex_t quarantine_lock = PTHREAD_MUTEX_INITIALIZER;

static bool quarantined(const struct rdma_addrinfo *res)
{
	bool found = false;

	pthread_mutex_lock(&quarantine_lock);
	for (unsigned int i = 0; i < QUARANTINE_SLOTS && !found; i++)
		found = quarantine[i] == res;
	pthread_mutex_unlock(&quarantine_lock);
	return found;
}

static void free_quarantined(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *evicted;

	free_list(res->ai_next);
	res->ai_next = NULL;
	free_fields(res);
	memset(res, 0, sizeof *res);
	pthread_mutex_lock(&quarantine_lock);
	evicted = quarantine[quarantine_next];
	quarantine[quarantine_next] = res;
	quarantine_next = (quarantine_next + 1) % QUARANTINE_SLOTS;
	pthread_mutex_unlock(&quarantine_lock);
	free(evicted);
}

/* No fault point: nothing to report. NULL is safe, as upstream. Upstream
 * frees any list of malloc'd entries, each field with free(): libfabric's
 * verbs provider builds AF_IB entries of its own with calloc and frees them
 * here, so a list the mock never made is freed the same way. */
MOCK_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	if (!res)
		return;
	if (!ledger_live(LEDGER_ADDRINFO, res) && !quarantined(res)) {
		free_list(res);
		return;
	}
	ledger_require(LEDGER_ADDRINFO, res, "rdma_freeaddrinfo");
	ledger_del(LEDGER_ADDRINFO, res, "rdma_freeaddrinfo");
	free_quarantined(res);
}
