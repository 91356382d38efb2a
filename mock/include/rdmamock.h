/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmamock.h: the control API of librdmamock, the fake fabric behind the
 * drop-in librdmacm.so.1 / libibverbs.so.1.
 *
 * Programs that only use rdma-core's API need none of this: they run on the
 * mock unmodified with LD_LIBRARY_PATH=build/mock/lib. This header is for
 * tests that shape the fabric (devices, addresses) or observe it.
 *
 * Every call returns 0 on success or a negative errno value, and prints
 * nothing; rdmamock_strerror-style messages are the caller's business.
 * Link with -lrdmamock (build/mock/lib) or look the calls up with dlsym. */
#ifndef RDMAMOCK_H
#define RDMAMOCK_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The mock's version string, "rdmamock <major>.<minor>". Its presence
 * (dlsym(RTLD_DEFAULT, "rdmamock_version")) is how a program tells that it
 * runs on the mock. */
const char *rdmamock_version(void);

/* Device personalities: how a device answers vendor-specific calls. */
enum rdmamock_personality {
	RDMAMOCK_GENERIC = 0, /* a non-mlx5 RoCE device, like rxe */
	RDMAMOCK_MLX5 = 1,    /* an mlx5 RoCE device (ConnectX) */
};

/* Capabilities a device may lack. An mlx5 device has them all by default,
 * a generic one none. */
enum rdmamock_cap {
	RDMAMOCK_CAP_UDP_SPORT = 1, /* HCA cap rts2rts_qp_udp_sport */
};

/* Replace the whole topology. The spec is the syntax of RDMAMOCK_TOPOLOGY:
 *   device[;device...]    device = NAME=KIND:ADDR[,ADDR...]
 * KIND is a personality, "mlx5" or "generic", optionally followed by
 * capabilities taken away or given: "mlx5-udp_sport", "generic+udp_sport"; ADDR is an IPv4 or IPv6 address with an
 * optional /PREFIX (default /32 or /128) naming the subnet the device is on.
 * The empty string means no devices. Fails with -EBUSY while any CM id
 * exists, -EINVAL (and nothing changed) on a syntax error. */
int rdmamock_topology_load(const char *spec);

/* The topology in the same syntax, written into buf (always terminated).
 * Returns the length the full text needs, like snprintf. */
int rdmamock_topology_format(char *buf, size_t len);

/* Add a device with no addresses; -EEXIST if the name is taken, -EINVAL for
 * a bad name or personality. */
int rdmamock_device_add(const char *name, enum rdmamock_personality personality);

/* Give a device one more address ("192.0.2.1/24", "::1"); -ENODEV for an
 * unknown device, -EINVAL for a bad address, -EEXIST if any device already
 * has that address. */
int rdmamock_device_add_addr(const char *name, const char *addr);

/* Give (on != 0) or take away a capability; -ENODEV for an unknown device,
 * -EINVAL for an unknown capability. */
int rdmamock_device_set_cap(const char *name, enum rdmamock_cap cap, int on);

/* Remove a device, as `rdma link delete` does (measured on rxe, kernel
 * 6.1): every CM id on it reads RDMA_CM_EVENT_DEVICE_REMOVAL (status 0) at
 * once, and the device goes when the last of them is destroyed; until
 * then no new id resolves to its addresses. An open verbs context of a
 * removed device fails its calls with ENODEV. 0, or -ENODEV if unknown. */
int rdmamock_device_remove(const char *name);

/* A catastrophic error of a device, as mlx5's firmware reports one and its
 * health recovery then removes the device: every open verbs context of it,
 * in any process, reads IBV_EVENT_DEVICE_FATAL, and its commands fail with
 * EIO from then on (destroys too, unless RDMAV_ALLOW_DISASSOC_DESTROY is
 * set); then the device is removed as rdmamock_device_remove does. 0, or
 * -ENODEV. */
int rdmamock_device_fatal(const char *name);

/* The net device under a device fails over to another hardware address
 * (a bonding failover, the one case where the kernel's cma_netdev_callback
 * speaks): every CM id on the device reads RDMA_CM_EVENT_ADDR_CHANGE
 * (status 0), and goes on. 0, or -ENODEV. */
int rdmamock_addr_change(const char *name);

/* Take a device's port down (up = 0) or bring it up, as `ip link set NETDEV
 * down|up` does to a RoCE port (measured on rxe): going down, every open
 * context of the device reads IBV_EVENT_GID_CHANGE and IBV_EVENT_PORT_ERR,
 * ibv_query_port says DOWN, and nothing goes in or out, so reliable
 * requests retry and then fail; no CM event comes, and QPs keep their
 * state. Coming up: IBV_EVENT_PORT_ACTIVE. -ENODEV for an unknown device;
 * 0 when the port was already so. */
int rdmamock_port_set(const char *name, int up);

/* The UDP source port the QP's RoCE v2 packets carry: the port
 * mlx5dv_modify_qp_udp_sport last set, or else the kernel's default,
 * derived from the QP's number and its remote QP's (49152-65535; 49152
 * before RTR). Moving the QP to RESET forgets a port that was set.
 * -ENOENT if qp is not one of the mock's. */
struct ibv_qp;
int rdmamock_qp_udp_sport(const struct ibv_qp *qp, uint16_t *port);

/* The fabric this process is on: "private", or the name of the shared
 * fabric (RDMAMOCK_FABRIC; "default" when it is unset). */
const char *rdmamock_fabric(void);

/* How many objects of the mock a process of the fabric holds (blocks of
 * the fabric's memory: ids, queued events, QPs, CQs, ...), or -ESRCH when
 * pid is not on the fabric: it never was, or it ended and was reaped. */
long rdmamock_fabric_held(int pid);

/* Remove the files of the named fabric (`<name>.fabric`, `<name>.lock` in
 * the runtime directory) that a killed run left (the last process out of a
 * fabric removes them itself). 1 when the fabric's file went, 0 when there
 * was none; -EBUSY for this process's own fabric or while a process of it
 * still runs, -EINVAL for a bad name. */
int rdmamock_fabric_remove(const char *name);

/* Register a service with the SA of an InfiniBand subnet, as a service
 * does (SubnAdmSet(ServiceRecord), IBTA 15.2.5.14): a record of its
 * service id, its name (up to 63 bytes; "" for none), the port GID of
 * device and P_Key 0xffff. rdma_resolve_addrinfo and rdma_getaddrinfo
 * with RAI_SA find it by id or by name. The record goes with its device
 * (removed, or a new topology). -ENODEV for an unknown device, -EINVAL
 * for a RoCE one (it reaches no SA) or a name too long, -EEXIST for the
 * same record again, -ENOSPC past 32 records. */
int rdmamock_sa_service_add(const char *device, uint64_t service_id, const char *name);

/* Whether a live CM id listens on port in port space ps (RDMA_PS_TCP,
 * RDMA_PS_UDP, ...): 1 or 0; -EINVAL for an unknown port space. For a
 * script that starts a server and must wait until it listens. */
int rdmamock_listening(int ps, uint16_t port);

/* Faults, in the syntax of RDMAMOCK_FAULTS: faults separated by ';', each a
 * fault point and key=value words, for example
 *   rdmamock/rdmacm/rdma_connect errno=ECONNREFUSED nth=2
 *   rdmamock/rdmacm/event/rejected status=28 data=0102 port=7471
 * Keys: what happens (errno=, status=, data=) and where (dev=, addr=,
 * port=, qpn=, pid=, nth=N or N+, prob= with seed=); docs/faults.md, "Fault
 * points", has the points and what each key means to them. A fault is in
 * the fabric: it reaches every process on it, and lives while a process
 * that added it does. Returns how many faults spec held; -EINVAL with a
 * message in err naming the bad part (and nothing added), or -ENOSPC. */
int rdmamock_fault_add(const char *spec, char *err, size_t errlen);
/* Parse spec as rdmamock_fault_add would, and add nothing: how many faults
 * it has, or -EINVAL with the message in err. Needs no fabric. */
int rdmamock_fault_check(const char *spec, char *err, size_t errlen);
/* Remove every fault of the fabric; returns how many there were. */
int rdmamock_fault_clear(void);
/* How many times the faults at point have fired, fabric-wide. */
long rdmamock_fault_fired(const char *point);

/* The fault points, by index from 0 (NULL past the last). */
const char *rdmamock_point(int i);
/* How often the processes of the fabric reached a point while counting
 * (RDMAMOCK_COUNT=1 in the environment of one of them), whether or not a
 * fault fired; -ENOENT for an unknown point. rdmamock-sweep's first run. */
long rdmamock_point_reached(const char *point);

/* The fabric's clock (RDMAMOCK_CLOCK): nanoseconds on CLOCK_MONOTONIC's
 * scale, plus every jump the clock has made. Every timeout of the mock is
 * on it. With RDMAMOCK_CLOCK=real it is CLOCK_MONOTONIC; by default
 * (auto) it jumps to the next timeout once no process of the fabric has
 * taken its locks for 1 ms and every thread of each is seen asleep at
 * both ends of a further 1 ms (docs/mock.md, "The mock's clock"). */
uint64_t rdmamock_clock_ns(void);
/* poll(2), its timeout counted on the fabric's clock: when the fabric is
 * quiet the clock jumps to it, so a wait for what cannot come returns at
 * once. With no fds, a sleep. The return and errno are poll's. */
int rdmamock_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);

/* The errnos a call may give, from the errno tables (docs/mock.md lists
 * them, with their sources): up to max of them into out, in the table's
 * order, the call's usual failure first (what a fault without errno=
 * gives); returns how many the call has, or -ENOENT for a call without a
 * table (one that cannot fail). rdma_getaddrinfo's EAI_ codes are
 * negative. */
int rdmamock_errnos(const char *call, int *out, int max);

#ifdef __cplusplus
}
#endif

#endif
