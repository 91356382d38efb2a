/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Socket address helpers shared by the fabric and the topology. */
#include <arpa/inet.h>
#include <string.h>

#include "internal.h"

socklen_t fab_addr_len(const struct sockaddr *addr)
{
	switch (addr->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
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
	return false;
}

uint16_t fab_addr_port(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	if (addr->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	return 0;
}

void fab_addr_set_port(struct sockaddr *addr, uint16_t port)
{
	if (addr->sa_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = htons(port);
	else if (addr->sa_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
}

/* RoCE v2 GIDs: an IPv4 address as ::ffff:a.b.c.d, IPv6 as itself. */
void fab_addr_to_gid(const struct sockaddr *addr, union ibv_gid *gid)
{
	memset(gid, 0, sizeof *gid);
	if (addr->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else if (addr->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
	}
}
