/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Socket address helpers shared by the fabric and the topology. */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include <infiniband/ib.h>

#include "internal.h"

/* AF_IB (struct sockaddr_ib): a GID, a P_Key and a service id whose low
 * 16 bits under the mask are the port (the kernel's cma_port). */
static const struct sockaddr_ib *as_ib(const struct sockaddr *addr)
{
	return (const struct sockaddr_ib *)addr;
}

static bool gid_is_zero(const uint8_t *raw)
{
	static const uint8_t zero[16];

	return !memcmp(raw, zero, sizeof zero);
}

socklen_t fab_addr_len(const struct sockaddr *addr)
{
	switch (addr->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

bool fab_addr_is_any(const struct sockaddr *addr)
{
	const struct sockaddr_in *in = (const void *)addr;
	const struct sockaddr_in6 *in6 = (const void *)addr;

	switch (addr->sa_family) {
	case AF_INET:
		return in->sin_addr.s_addr == htonl(INADDR_ANY);
	case AF_INET6:
		return IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
	case AF_IB:
		return gid_is_zero(as_ib(addr)->sib_addr.sib_raw);
	default:
		return true;
	}
}

bool fab_addr_is_loopback(const struct sockaddr *addr)
{
	const struct sockaddr_in *in = (const void *)addr;
	const struct sockaddr_in6 *in6 = (const void *)addr;

	if (addr->sa_family == AF_INET)
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	if (addr->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	if (addr->sa_family == AF_IB) /* ib_addr_loopback: ::1 */
		return IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)as_ib(addr)->sib_addr.sib_raw);
	return false;
}

bool fab_addr_is_link_local(const struct sockaddr *addr)
{
	return addr->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)addr)->sin6_addr);
}

/* Same family and host address; ports are not compared. */
bool fab_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return IN6_ARE_ADDR_EQUAL(&a6->sin6_addr, &b6->sin6_addr);
	if (a->sa_family == AF_IB)
		return !memcmp(&as_ib(a)->sib_addr, &as_ib(b)->sib_addr, sizeof as_ib(a)->sib_addr);
	return false;
}

uint16_t fab_addr_port(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	if (addr->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	if (addr->sa_family == AF_IB)
		return (uint16_t)(be64toh(as_ib(addr)->sib_sid) & be64toh(as_ib(addr)->sib_sid_mask));
	return 0;
}

/* cma_bind_port: an AF_IB id's service id keeps what its mask covers and
 * takes the port; the mask becomes all ones. */
void fab_addr_set_port(struct sockaddr *addr, uint16_t port)
{
	if (addr->sa_family == AF_INET) {
		((struct sockaddr_in *)addr)->sin_port = htons(port);
	} else if (addr->sa_family == AF_INET6) {
		((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
	} else if (addr->sa_family == AF_IB) {
		struct sockaddr_ib *sib = (struct sockaddr_ib *)addr;
		uint64_t sid = be64toh(sib->sib_sid) & be64toh(sib->sib_sid_mask);

		sib->sib_sid = htobe64(sid | port);
		sib->sib_sid_mask = htobe64(~0ull);
	}
}

/* RoCE v2 GIDs: an IPv4 address as ::ffff:a.b.c.d, IPv6 as itself; an
 * AF_IB address is a GID. */
void fab_addr_to_gid(const struct sockaddr *addr, union ibv_gid *gid)
{
	memset(gid, 0, sizeof *gid);
	if (addr->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else if (addr->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
	} else if (addr->sa_family == AF_IB) {
		memcpy(gid->raw, as_ib(addr)->sib_addr.sib_raw, 16);
	}
}
