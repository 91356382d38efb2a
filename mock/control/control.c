/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmamock.h: the control API, each call one locked step on the fabric. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric/internal.h"
#include "mock.h"

MOCK_EXPORT const char *rdmamock_version(void)
{
	return "rdmamock " RDMAMOCK_VERSION;
}

MOCK_EXPORT int rdmamock_topology_load(const char *spec)
{
	int err;

	if (!spec)
		return -EINVAL;
	fab_lock();
	err = topology_load_locked(spec);
	fab_unlock();
	return err;
}

MOCK_EXPORT int rdmamock_topology_format(char *buf, size_t len)
{
	int n;

	fab_lock();
	n = topology_format_locked(buf, len);
	fab_unlock();
	return n;
}

MOCK_EXPORT int rdmamock_device_add(const char *name, enum rdmamock_personality personality)
{
	int err;

	fab_lock();
	err = topology_device_add_locked(name, personality);
	fab_unlock();
	return err;
}

MOCK_EXPORT int rdmamock_device_add_addr(const char *name, const char *addr)
{
	int err;

	fab_lock();
	err = topology_device_add_addr_locked(name, addr);
	fab_unlock();
	return err;
}

MOCK_EXPORT int rdmamock_device_remove(const char *name)
{
	int err;

	fab_lock();
	err = topology_device_remove_locked(name);
	fab_unlock();
	return err;
}

MOCK_EXPORT int rdmamock_device_set_cap(const char *name, enum rdmamock_cap cap, int on)
{
	uint32_t bit;
	int err;

	switch (cap) {
	case RDMAMOCK_CAP_UDP_SPORT:
		bit = FAB_CAP_UDP_SPORT;
		break;
	default:
		return -EINVAL;
	}
	fab_lock();
	err = topology_device_set_cap_locked(name, bit, on != 0);
	fab_unlock();
	return err;
}

MOCK_EXPORT int rdmamock_qp_udp_sport(const struct ibv_qp *qp, uint16_t *port)
{
	if (!qp || !port)
		return -EINVAL;
	return fab_qp_udp_sport(qp->qp_num, port);
}

MOCK_EXPORT const char *rdmamock_fabric(void)
{
	return fab_is_shared() ? fab_name() : "private";
}

MOCK_EXPORT long rdmamock_fabric_held(int pid)
{
	return fab_blocks_of(pid);
}

MOCK_EXPORT int rdmamock_listening(int ps, uint16_t port)
{
	struct fab_bind *b;
	int n = 0;

	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IPOIB && ps != RDMA_PS_IB)
		return -EINVAL;
	fab_lock();
	b = port_find((enum rdma_port_space)ps, port);
	for (struct fab_id *l = b ? b->owners : NULL; l; l = l->next_owner)
		n += l->state == ST_LISTEN && !fab_owner_gone(fab_owner_of(l));
	fab_unlock();
	return n > 0;
}

MOCK_EXPORT int rdmamock_sa_service_add(const char *device, uint64_t service_id, const char *name)
{
	return fab_sa_service_add(device, service_id, name);
}

MOCK_EXPORT int rdmamock_port_set(const char *name, int up)
{
	int serial;

	fab_lock();
	serial = topology_port_set_locked(name, up != 0);
	fab_unlock();
	if (serial == -EALREADY)
		return 0;
	if (serial < 0)
		return serial;
	if (fab_port_hook)
		fab_port_hook((unsigned)serial, up != 0);
	return 0;
}

struct port_back {
	char name[FAB_NAME_MAX];
	unsigned ms;
};

static void *port_back_up(void *arg)
{
	struct port_back *b = arg;

	/* On the fabric's clock, which may jump there. */
	while (fab_clock_poll(NULL, 0, (int)b->ms) < 0 && errno == EINTR)
		;
	rdmamock_port_set(b->name, 1);
	free(b);
	return NULL;
}

/* The fault rdmamock/ibverbs/port_down: the port goes down as
 * rdmamock_port_set takes it, and with ms= comes back up that much later
 * (a thread of the process it fired in; if that process ends first, the
 * port stays down). */
void mock_port_down(const char *name, const struct fault_action *act)
{
	struct port_back *b;
	pthread_t t;

	if (rdmamock_port_set(name, 0) || !act->has_ms)
		return;
	b = calloc(1, sizeof *b);
	if (!b)
		return;
	snprintf(b->name, sizeof b->name, "%s", name);
	b->ms = act->ms;
	if (pthread_create(&t, NULL, port_back_up, b)) {
		free(b);
		return;
	}
	pthread_detach(t);
}

MOCK_EXPORT int rdmamock_device_fatal(const char *name)
{
	struct fab_device *dev;
	int serial = -ENODEV;

	fab_lock();
	dev = topology_device_locked(name);
	if (dev) {
		serial = dev->fatal ? -EALREADY : (int)dev->serial;
		dev->fatal = true;
	}
	fab_unlock();
	if (serial == -EALREADY)
		return 0;
	if (serial < 0)
		return serial;
	if (fab_fatal_hook)
		fab_fatal_hook((unsigned)serial);
	return rdmamock_device_remove(name);
}

MOCK_EXPORT int rdmamock_addr_change(const char *name)
{
	struct fab_device *dev;

	fab_lock();
	dev = topology_device_locked(name);
	if (dev)
		fab_addr_change_locked(dev);
	fab_unlock();
	return dev ? 0 : -ENODEV;
}

MOCK_EXPORT uint64_t rdmamock_clock_ns(void)
{
	fab_attach();
	return fab_now_ns();
}

MOCK_EXPORT int rdmamock_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	if (nfds && !fds) {
		errno = EFAULT;
		return -1;
	}
	return fab_clock_poll(fds, nfds, timeout_ms);
}
