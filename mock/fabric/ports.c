/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Port spaces: who owns which port of TCP, UDP, IPoIB and IB, and the
 * kernel's rules for taking one (cma_alloc_port, cma_use_port,
 * cma_check_port in drivers/infiniband/core/cma.c). */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* ---------------------------------------------------------------- ports */

/* A port space's row of fab.ports_used. */
static unsigned ps_index(enum rdma_port_space ps)
{
	switch (ps) {
	case RDMA_PS_IPOIB: return 0;
	case RDMA_PS_TCP: return 1;
	case RDMA_PS_UDP: return 2;
	default: return 3; /* RDMA_PS_IB; fab_create_id admits no other */
	}
}

static bool port_used(enum rdma_port_space ps, unsigned port)
{
	return fab.ports_used[ps_index(ps)][port / 64] >> (port % 64) & 1;
}

static void port_mark(enum rdma_port_space ps, unsigned port, bool used)
{
	uint64_t *w = &fab.ports_used[ps_index(ps)][port / 64];

	*w = used ? *w | 1ull << (port % 64) : *w & ~(1ull << (port % 64));
}

struct fab_bind *port_find(enum rdma_port_space ps, uint16_t port)
{
	struct fab_bind *b;

	for (b = fab.binds[port % FAB_BIND_BUCKETS]; b; b = b->next)
		if (b->ps == ps && b->port == port)
			return b;
	return NULL;
}

static void bind_add_owner(struct fab_bind *b, struct fab_id *id)
{
	id->bind = b;
	id->next_owner = b->owners;
	b->owners = id;
}

static int bind_new(struct fab_id *id, uint16_t port)
{
	struct fab_bind *b = fab_alloc_owned(FAB_OWNER_FABRIC, sizeof *b);

	if (!b)
		return -ENOMEM;
	b->ps = id->space;
	b->port = port;
	b->pprev = &fab.binds[port % FAB_BIND_BUCKETS];
	b->next = *b->pprev;
	if (b->next)
		b->next->pprev = &b->next;
	*b->pprev = b;
	port_mark(b->ps, port, true);
	bind_add_owner(b, id);
	fab_addr_set_port((struct sockaddr *)&id->src, port);
	return 0;
}

void port_release(struct fab_id *id)
{
	struct fab_bind *b = id->bind;
	struct fab_id **o;

	if (!b)
		return;
	for (o = &b->owners; *o != id; o = &(*o)->next_owner)
		;
	*o = id->next_owner;
	id->bind = NULL;
	if (b->owners)
		return;
	*b->pprev = b->next;
	if (b->next)
		b->next->pprev = b->pprev;
	port_mark(b->ps, b->port, false);
	fab_free(b);
}

/* The kernel's ip_local_port_range, read once. */
static void ephemeral_range(unsigned *low, unsigned *high)
{
	static unsigned lo, hi;

	if (!lo) {
		FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

		if (!f || fscanf(f, "%u %u", &lo, &hi) != 2 || !lo || lo > hi || hi > 65535) {
			lo = 32768;
			hi = 60999;
		}
		if (f)
			fclose(f);
	}
	*low = lo;
	*high = hi;
}

/* cma_alloc_any_port: a random start, skipping the port used last, then
 * the next free one (a bit per port: as cheap with the range full as
 * empty). */
int port_alloc_any(struct fab_id *id)
{
	unsigned low, high, remaining, rover;

	ephemeral_range(&low, &high);
	remaining = high - low + 1;
	rover = (unsigned)rand_r(&fab.rand_state) % remaining + low;
	for (; remaining; remaining--) {
		/* 64 taken ports at once: a whole word of the bitmap. */
		if (rover % 64 == 0 && remaining > 64 && rover + 63 <= high &&
		    !~fab.ports_used[ps_index(id->space)][rover / 64]) {
			rover += 63;
			remaining -= 63;
		} else if (rover != fab.last_used_port && !port_used(id->space, rover)) {
			fab.last_used_port = rover;
			return bind_new(id, (uint16_t)rover);
		}
		if (++rover > high)
			rover = low;
	}
	return -EADDRNOTAVAIL;
}

/* cma_check_port: a wildcard against anything is EADDRNOTAVAIL, the same
 * address EADDRINUSE; ids that are both afonly and of different families,
 * or both reuseaddr, do not conflict. */
int port_check(struct fab_bind *b, struct fab_id *id, bool reuseaddr)
{
	const struct sockaddr *addr = (void *)&id->src;

	for (struct fab_id *cur = b->owners; cur; cur = cur->next_owner) {
		const struct sockaddr *cur_addr = (void *)&cur->src;

		if (cur == id || (reuseaddr && cur->reuseaddr))
			continue;
		if (fab_owner_gone(fab_owner_of(cur)))
			continue;
		if (id->afonly && cur->afonly && addr->sa_family != cur_addr->sa_family)
			continue;
		if (topology_addr_is_wildcard(addr) || topology_addr_is_wildcard(cur_addr))
			return -EADDRNOTAVAIL;
		if (fab_addr_equal(addr, cur_addr))
			return -EADDRINUSE;
	}
	return 0;
}

/* CAP_NET_BIND_SERVICE (bit 10) in the effective set. */
static bool may_bind_privileged(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long caps = 0;
	char line[256];

	if (!f)
		return false;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps & (1ull << 10);
}

/* cma_use_port */
int port_use(struct fab_id *id, uint16_t port)
{
	struct fab_bind *b;
	int err;

	if (port < 1024 && !may_bind_privileged())
		return -EACCES;
	b = port_find(id->space, port);
	if (!b)
		return bind_new(id, port);
	err = port_check(b, id, id->reuseaddr);
	if (!err)
		bind_add_owner(b, id);
	return err;
}

