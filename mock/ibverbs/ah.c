/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: address handles, and the AH a UD receiver builds from a
 * completion and the GRH in front of its message (ibv_init_ah_from_wc,
 * ibv_create_ah_from_wc: libibverbs' own code, which reads the GRH as RoCE
 * v2 over IPv4 or IPv6, or RoCE v1). */
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define LIB "ibverbs"

struct mock_ah *verbs_ah_of(struct ibv_ah *ah, const char *call)
{
	struct mock_ah *mah = (struct mock_ah *)ah;

	MOCK_REQUIRE(ah, call, "ah is NULL (upstream dereferences it)");
	ledger_require(LEDGER_AH, ah, call);
	MOCK_REQUIRE(mah->magic == VERBS_AH_MAGIC, call,
		     "%p is not an address handle from ibv_create_ah", (void *)ah);
	return mah;
}

static bool v4mapped_gid(const union ibv_gid *gid)
{
	return IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)gid->raw);
}

/* The kernel's checks for a RoCE port, as measured on rxe: a GRH and a
 * port the device has (else EINVAL), a source GID that is there (ENODATA
 * for an empty entry), of the destination's family (an IPv6 or
 * link-local source for an IPv4 destination is EINVAL), and a neighbour
 * that answers (ETIMEDOUT when ARP goes unanswered). An InfiniBand port
 * needs no GRH and resolves no neighbour: a LID is the address. */
static int check_ah(struct mock_context *mc, const struct ibv_ah_attr *attr)
{
	union ibv_gid sgid;
	int err;

	if (attr->port_num != 1 || (!attr->is_global && !mc->mdev->ib))
		return EINVAL;
	if (!attr->is_global)
		return 0;
	err = verbs_gid(mc, 1, attr->grh.sgid_index, &sgid, NULL);
	if (err || mc->mdev->ib)
		return err;
	if (v4mapped_gid(&sgid) != v4mapped_gid(&attr->grh.dgid) &&
	    !fab_gid_is_multicast(&attr->grh.dgid))
		return EINVAL;
	return -fab_neighbour(&attr->grh.dgid);
}

MOCK_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static uint32_t next_handle;
	struct mock_pd *mpd = verbs_pd_of(pd, "ibv_create_ah");
	struct mock_context *mc = verbs_context_of(pd->context, "ibv_create_ah");
	struct mock_ah *mah = NULL;
	int err;

	FAULT_NULL(LIB, "ibv_create_ah");
	VERBS_DEAD_NULL(pd->context);
	MOCK_REQUIRE(attr, "ibv_create_ah", "ah_attr is NULL (upstream dereferences it)");
	err = check_ah(mc, attr);
	if (!err && !(mah = fab_alloc(sizeof *mah)))
		err = ENOMEM;
	if (err) {
		errno = err;
		return NULL;
	}
	mah->magic = VERBS_AH_MAGIC;
	mah->mpd = mpd;
	mah->attr = *attr;
	mlx5_av_encode(attr, mc->mdev->ib, &mah->av);
	verbs_src_of(pd->context, attr->grh.sgid_index, &mah->src);
	mah->ah.context = pd->context;
	mah->ah.pd = pd;
	mah->ah.handle = __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
	verbs_lock_take();
	mpd->users++;
	verbs_lock_give();
	ledger_add(LEDGER_AH, &mah->ah, "ibv_create_ah");
	return &mah->ah;
}

MOCK_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct mock_ah *mah = verbs_ah_of(ah, "ibv_destroy_ah");

	ledger_destroying(LEDGER_AH, ah);
	FAULT_POSITIVE(LIB, "ibv_destroy_ah");
	VERBS_DEAD_DESTROY(ah->context, LEDGER_AH, ah);
	verbs_lock_take();
	mah->mpd->users--;
	mah->magic = 0;
	verbs_lock_give();
	ledger_del(LEDGER_AH, ah, "ibv_destroy_ah");
	fab_free(mah);
	return 0;
}

/* ---------------------------------------------------------------- from a completion */

/* The index of gid of that RoCE version on the port, as libibverbs'
 * ibv_find_gid_index searches: entry by entry until one matches or the
 * table ends (-1, errno EINVAL, as the query past it gives). */
static int find_gid_index(struct ibv_context *context, uint8_t port, const union ibv_gid *gid,
			  enum ibv_gid_type type)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_init_ah_from_wc");
	enum ibv_gid_type t;
	union ibv_gid g;
	int ret;

	for (uint32_t i = 0; (ret = verbs_gid(mc, port, i, &g, &t)) != EINVAL; i++)
		if (!ret && t == type && !memcmp(&g, gid, sizeof g))
			return (int)i;
	errno = EINVAL;
	return -1;
}

static uint16_t ipv4_checksum(const struct iphdr *ip)
{
	struct iphdr copy = *ip;
	const uint16_t *w = (const uint16_t *)&copy;
	uint32_t sum = 0;

	copy.check = 0;
	for (int i = 0; i < 10; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* What the 40 bytes hold: an IPv4 header in the last 20 (RoCE v2 over
 * IPv4; a valid checksum tells it from an IPv6 header whose bytes happen
 * to read as IPv4), else an IPv6 header or an IB GRH. */
static int grh_version(const struct ibv_grh *grh)
{
	const struct iphdr *ip4 = (const void *)((const char *)grh + 20);

	if (((ntohl(grh->version_tclass_flow) >> 28) & 0xf) != 6) {
		if (ip4->version == 4)
			return 4;
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (ip4->ihl != 5)
		return 6;
	return ip4->check == ipv4_checksum(ip4) ? 4 : 6;
}

static void v4mapped(uint32_t addr, union ibv_gid *gid)
{
	memset(gid, 0, sizeof *gid);
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &addr, 4);
}

static int from_ipv4(struct ibv_context *context, struct ibv_ah_attr *ah, const struct iphdr *ip,
		     uint8_t port)
{
	union ibv_gid sgid;
	int index;

	/* A multicast destination is in no GID table. */
	if (IN_CLASSD(ntohl(ip->daddr))) {
		errno = EINVAL;
		return -1;
	}
	v4mapped(ip->daddr, &sgid);
	index = find_gid_index(context, port, &sgid, IBV_GID_TYPE_ROCE_V2);
	if (index < 0)
		return index;
	v4mapped(ip->saddr, &ah->grh.dgid);
	ah->grh.sgid_index = (uint8_t)index;
	ah->grh.hop_limit = ip->ttl;
	ah->grh.traffic_class = ip->tos;
	return 0;
}

static int from_ipv6(struct ibv_context *context, struct ibv_ah_attr *ah, const struct ibv_grh *grh,
		     uint8_t port)
{
	enum ibv_gid_type type;
	int index;

	if (grh->dgid.raw[0] == 0xff) {
		errno = EINVAL;
		return -1;
	}
	ah->grh.dgid = grh->sgid;
	if (grh->next_hdr == IPPROTO_UDP) {
		type = IBV_GID_TYPE_ROCE_V2;
	} else if (grh->next_hdr == 0x1b) {
		type = IBV_GID_TYPE_ROCE_V1;
	} else {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	index = find_gid_index(context, port, &grh->dgid, type);
	if (index < 0)
		return index;
	ah->grh.sgid_index = (uint8_t)index;
	ah->grh.hop_limit = grh->hop_limit;
	ah->grh.traffic_class = (ntohl(grh->version_tclass_flow) >> 20) & 0xff;
	return 0;
}

MOCK_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				    struct ibv_wc *wc, struct ibv_grh *grh,
				    struct ibv_ah_attr *ah_attr)
{
	int version;

	verbs_context_of(context, "ibv_init_ah_from_wc");
	MOCK_REQUIRE(wc && grh && ah_attr, "ibv_init_ah_from_wc",
		     "wc, grh or ah_attr is NULL (upstream dereferences them)");
	memset(ah_attr, 0, sizeof *ah_attr);
	ah_attr->grh.flow_label = ntohl(grh->version_tclass_flow) & 0xfffff;
	ah_attr->dlid = (uint16_t)wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	version = grh_version(grh);
	if (version == 4)
		return from_ipv4(context, ah_attr, (const void *)((const char *)grh + 20), port_num);
	if (version == 6)
		return from_ipv6(context, ah_attr, grh, port_num);
	return -1;
}

MOCK_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
						 struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	verbs_pd_of(pd, "ibv_create_ah_from_wc");
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}

/* mlx5dv_init_obj of an AH: the address vector its UD sends carry. */
int verbs_ah_expose(struct ibv_ah *ah, struct mlx5dv_ah *out)
{
	struct mock_ah *mah = verbs_ah_of(ah, "mlx5dv_init_obj");

	out->av = &mah->av;
	out->comp_mask = 0;
	return 0;
}
