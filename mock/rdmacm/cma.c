/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* librdmacm's public calls for ids, channels and devices, in upstream's
 * order of checks (librdmacm/cma.c), over the fabric. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/ib.h>

#include "cm.h"

#define LIB "rdmacm"

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cma_device *devices;

/* ---------------------------------------------------------------- checks */

struct cm_id *cm_id_of(struct rdma_cm_id *id, const char *call)
{
	struct cm_id *cid = (struct cm_id *)id;

	MOCK_REQUIRE(id, call, "id is NULL (upstream dereferences it)");
	ledger_require(LEDGER_ID, id, call);
	/* Upstream's id keeps its channel's pointer and writes to its fd. */
	MOCK_REQUIRE(ledger_live(LEDGER_CHANNEL, id->channel), call,
		     "id %p is on event channel %p, which was destroyed before the id (upstream reads the freed channel)",
		     (void *)id, (void *)id->channel);
	return cid;
}

struct cm_channel *cm_channel_of(struct rdma_event_channel *channel, const char *call)
{
	struct cm_channel *ch = (struct cm_channel *)channel;

	MOCK_REQUIRE(channel, call, "channel is NULL (upstream dereferences it)");
	ledger_require(LEDGER_CHANNEL, channel, call);
	return ch;
}

/* A reader of the channel (rdma_get_cm_event) keeps it while it waits: a
 * program may destroy the channel from another thread meanwhile, as rping
 * does on its way out while its CM thread waits for an event. Upstream's
 * reader sits in read(2) on the file, which the kernel keeps for it; the
 * mock's keeps the channel. */
static pthread_mutex_t channel_lock = PTHREAD_MUTEX_INITIALIZER;

struct cm_channel *cm_channel_get(struct rdma_event_channel *channel, const char *call)
{
	struct cm_channel *ch;

	pthread_mutex_lock(&channel_lock);
	ch = cm_channel_of(channel, call);
	ch->refs++;
	pthread_mutex_unlock(&channel_lock);
	return ch;
}

void cm_channel_put(struct cm_channel *ch)
{
	bool last;

	pthread_mutex_lock(&channel_lock);
	last = !--ch->refs;
	pthread_mutex_unlock(&channel_lock);
	if (last) {
		fab_chan_close(ch->fchan);
		free(ch);
	}
}

/* ---------------------------------------------------------------- devices */

static struct cma_device *find_device(struct ibv_device *dev)
{
	struct cma_device *d;

	for (d = devices; d && d->dev != dev; d = d->next)
		;
	return d;
}

/* sync_devices_list: add new devices; forget vanished ones nobody uses. */
static int sync_devices_locked(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct cma_device **pos, *d;
	int i;

	if (!list)
		return -1;
	for (i = 0; list[i]; i++) {
		if (find_device(list[i]))
			continue;
		d = calloc(1, sizeof *d);
		if (!d)
			break;
		d->dev = list[i];
		d->guid = ibv_get_device_guid(list[i]);
		for (pos = &devices; *pos; pos = &(*pos)->next)
			;
		*pos = d;
	}
	for (pos = &devices; (d = *pos);) {
		bool listed = false;

		for (i = 0; list[i] && !listed; i++)
			listed = list[i] == d->dev;
		if (listed || d->refcnt) {
			pos = &d->next;
			continue;
		}
		*pos = d->next;
		if (d->verbs)
			ibv_close_device(d->verbs);
		free(d);
	}
	ibv_free_device_list(list);
	return devices ? 0 : mock_errno(ENODEV);
}

int cm_init(void)
{
	int ret = 0;

	pthread_mutex_lock(&devices_lock);
	if (!devices)
		ret = sync_devices_locked();
	pthread_mutex_unlock(&devices_lock);
	return ret;
}

/* ucma_init_device: open the device once and learn its limits. */
static int init_device_locked(struct cma_device *d)
{
	struct ibv_device_attr attr;
	int ret;

	if (d->verbs)
		return 0;
	d->verbs = ibv_open_device(d->dev);
	if (!d->verbs)
		return mock_errno(ENODEV);
	ret = ibv_query_device(d->verbs, &attr);
	if (ret) {
		ibv_close_device(d->verbs);
		d->verbs = NULL;
		return mock_errno(ret);
	}
	d->max_qpsize = attr.max_qp_wr;
	d->max_initiator_depth = (uint8_t)attr.max_qp_init_rd_atom;
	d->max_responder_resources = (uint8_t)attr.max_qp_rd_atom;
	return 0;
}

/* ucma_get_device: attach the id to the device the fabric names. */
int cm_get_device(struct cm_id *cid, __be64 guid)
{
	struct cma_device *d;
	int ret = 0;

	pthread_mutex_lock(&devices_lock);
	for (d = devices; d && d->guid != guid; d = d->next)
		;
	if (!d) {
		sync_devices_locked();
		for (d = devices; d && d->guid != guid; d = d->next)
			;
	}
	if (!d) {
		pthread_mutex_unlock(&devices_lock);
		return mock_errno(ENODEV);
	}
	d->refcnt++;
	ret = init_device_locked(d);
	if (!ret && !d->pd) {
		d->pd = ibv_alloc_pd(d->verbs);
		if (d->pd) /* librdmacm's, until its last id goes: not a leak */
			ledger_internal(LEDGER_PD, d->pd);
	}
	if (!ret && !d->pd)
		ret = -1;
	if (ret) {
		d->refcnt--;
	} else {
		cid->cma_dev = d;
		cid->id.verbs = d->verbs;
		cid->id.pd = d->pd;
	}
	pthread_mutex_unlock(&devices_lock);
	return ret;
}

static void put_device(struct cma_device *d)
{
	pthread_mutex_lock(&devices_lock);
	if (!--d->refcnt && d->pd) {
		ibv_dealloc_pd(d->pd);
		d->pd = NULL;
		if (d->xrcd)
			ibv_close_xrcd(d->xrcd);
		d->xrcd = NULL;
	}
	pthread_mutex_unlock(&devices_lock);
}

MOCK_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = NULL;
	struct cma_device *d;
	int n = 0;

	if (mock_fault(FAULT_NAME(LIB, "rdma_get_devices"), &errno))
		goto out;
	if (cm_init())
		goto out;
	pthread_mutex_lock(&devices_lock);
	if (sync_devices_locked() == 0) {
		for (d = devices; d; d = d->next)
			if (init_device_locked(d) == 0)
				n++;
		list = calloc((size_t)n + 1, sizeof *list);
		if (list) {
			n = 0;
			for (d = devices; d; d = d->next)
				if (d->verbs) {
					list[n++] = d->verbs;
					d->refcnt++;
				}
		}
	}
	pthread_mutex_unlock(&devices_lock);
out:
	if (num_devices)
		*num_devices = list ? n : 0;
	return list;
}

MOCK_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	struct cma_device *d;

	MOCK_REQUIRE(list, "rdma_free_devices", "list is NULL (upstream dereferences it)");
	pthread_mutex_lock(&devices_lock);
	for (int i = 0; list[i]; i++)
		for (d = devices; d; d = d->next)
			if (d->verbs == list[i])
				d->refcnt--;
	pthread_mutex_unlock(&devices_lock);
	free(list);
}

/* ---------------------------------------------------------------- channels */

MOCK_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cm_channel *ch;
	int err;

	FAULT_NULL(LIB, "rdma_create_event_channel");
	if (cm_init())
		return NULL;
	ch = calloc(1, sizeof *ch);
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	err = fab_chan_open(&ch->fchan, &ch->channel.fd);
	if (err) {
		free(ch);
		errno = -err;
		return NULL;
	}
	ch->refs = 1;
	ledger_add(LEDGER_CHANNEL, &ch->channel, "rdma_create_event_channel");
	ledger_note(LEDGER_CHANNEL, &ch->channel, "fd %d", ch->channel.fd);
	return &ch->channel;
}

/* Upstream closes the fd and frees the channel; the kernel then destroys
 * the ids still on it, and their user-space halves read the freed channel
 * at their next call (cm_id_of catches that). */
MOCK_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_channel *ch = cm_channel_of(channel, "rdma_destroy_event_channel");
	int nids = __atomic_load_n(&ch->nids, __ATOMIC_RELAXED);

	if (nids)
		ledger_misuse("rdma_destroy_event_channel",
			      "channel %p still has %d id(s) on it; upstream closes it anyway, the kernel destroys those ids, and their next call reads the freed channel",
			      (void *)channel, nids);
	pthread_mutex_lock(&channel_lock);
	ledger_del(LEDGER_CHANNEL, channel, "rdma_destroy_event_channel");
	__atomic_store_n(&ch->closed, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&channel_lock);
	cm_channel_put(ch);
}

/* ---------------------------------------------------------------- ids */

struct cm_id *cm_alloc_id(struct rdma_event_channel *channel, void *context,
			  enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct cm_id *cid = calloc(1, sizeof *cid);

	if (!cid)
		return NULL;
	cid->id.context = context;
	cid->id.ps = ps;
	cid->id.qp_type = qp_type;
	pthread_mutex_init(&cid->mut, NULL);
	pthread_cond_init(&cid->cond, NULL);
	if (!channel) {
		cid->id.channel = rdma_create_event_channel();
		if (!cid->id.channel) {
			cm_free_id(cid);
			return NULL;
		}
		ledger_internal(LEDGER_CHANNEL, cid->id.channel); /* goes with the id */
		cid->sync = 1;
	} else {
		cid->id.channel = channel;
	}
	__atomic_add_fetch(&((struct cm_channel *)cid->id.channel)->nids, 1, __ATOMIC_RELAXED);
	ledger_add(LEDGER_ID, &cid->id, "rdma_create_id");
	return cid;
}

void cm_free_id(struct cm_id *cid)
{
	if (cid->id.channel && !cid->destroy_failed && ledger_live(LEDGER_CHANNEL, cid->id.channel))
		__atomic_sub_fetch(&((struct cm_channel *)cid->id.channel)->nids, 1, __ATOMIC_RELAXED);
	ledger_del(LEDGER_ID, &cid->id, "rdma_destroy_id");
	if (cid->cma_dev)
		put_device(cid->cma_dev);
	pthread_cond_destroy(&cid->cond);
	pthread_mutex_destroy(&cid->mut);
	free(cid->id.route.path_rec);
	if (cid->sync && cid->id.channel)
		rdma_destroy_event_channel(cid->id.channel);
	free(cid->connect);
	free(cid->qp_init_attr);
	rdma_freeaddrinfo(cid->resolved_ai);
	cm_free_joins(cid);
	free(cid);
}

int cm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		 enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct cm_id *cid;
	int err;

	if (cm_init())
		return -1;
	cid = cm_alloc_id(channel, context, ps, qp_type);
	if (!cid)
		return mock_errno(ENOMEM);
	err = fab_create_id(((struct cm_channel *)cid->id.channel)->fchan, (uintptr_t)cid, ps,
			    qp_type, &cid->fid);
	if (err) {
		cm_free_id(cid);
		return cm_err(err);
	}
	*id = &cid->id;
	return 0;
}

MOCK_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
			       void *context, enum rdma_port_space ps)
{
	enum ibv_qp_type qp_type = (ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP) ? IBV_QPT_UD : IBV_QPT_RC;

	FAULT_MINUS1(LIB, "rdma_create_id");
	MOCK_REQUIRE(id, "rdma_create_id", "id is NULL (upstream stores the new id through it)");
	if (channel)
		cm_channel_of(channel, "rdma_create_id");
	return cm_create_id(channel, id, context, ps, qp_type);
}

/* The unacked events' names, for the report: "RDMA_CM_EVENT_ESTABLISHED, ...". */
static void unacked_names_locked(const struct cm_id *cid, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (const struct cm_event *e = cid->unacked; e && len < size; e = e->next_unacked)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
					rdma_event_str(e->event.event));
}

/* Upstream blocks until every event it reported for the id is acked, for
 * ever if one never is; so do we, but after 2 s we say so (it is a missing
 * ack), and under RDMAMOCK_STRICT that report aborts. */
static void wait_for_acks(struct cm_id *cid, int reported)
{
	struct fab_deadline note;
	bool said = false;
	char names[256];

	pthread_mutex_lock(&cid->mut);
	said = cid->events_completed >= reported;
	pthread_mutex_unlock(&cid->mut);
	if (said)
		return;
	/* 2 s on the fabric's clock, armed before the id's lock is taken. */
	fab_deadline_arm(&note, 2000000000u);
	pthread_mutex_lock(&cid->mut);
	while (cid->events_completed < reported) {
		if (fab_clock_cond_wait(&cid->cond, &cid->mut, &note) && !said) {
			unacked_names_locked(cid, names, sizeof names);
			said = true;
			pthread_mutex_unlock(&cid->mut);
			ledger_misuse("rdma_destroy_id",
				      "id %p has %d unacked event(s) (%s); upstream blocks here forever",
				      (void *)&cid->id, reported - cid->events_completed, names);
			pthread_mutex_lock(&cid->mut);
		}
	}
	pthread_mutex_unlock(&cid->mut);
	fab_deadline_disarm(&note);
}

MOCK_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *cid = cm_id_of(id, "rdma_destroy_id");
	int reported, err;

	ledger_destroying(LEDGER_ID, id);
	if (mock_fault(FAULT_NAME(LIB, "rdma_destroy_id"), &err)) {
		/* The program tried: its channel may go now without that being
		 * misuse (upstream's kernel takes the id with it). */
		if (!cid->destroy_failed)
			__atomic_sub_fetch(&((struct cm_channel *)id->channel)->nids, 1, __ATOMIC_RELAXED);
		cid->destroy_failed = true;
		return mock_errno(err);
	}
	/* As upstream: the kernel's id goes first, then the events read for
	 * it are waited for; one may still be in another thread's hands,
	 * whose queries on the id now fail (ADDR_ERROR, ROUTE_ERROR,
	 * CONNECT_ERROR), so the fabric's id stays until the acks. */
	reported = fab_destroy_id(cid->fid);
	if (id->event)
		cm_ack(id->event);
	wait_for_acks(cid, reported);
	fab_free_id(cid->fid);
	cid->fid = NULL;
	cm_free_id(cid);
	return 0;
}

MOCK_EXPORT int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cm_id *cid = cm_id_of(id, "rdma_migrate_id");
	struct cm_channel *to;
	int sync, reported;

	FAULT_MINUS1(LIB, "rdma_migrate_id");
	if (cid->sync && !channel)
		return mock_errno(EINVAL);
	sync = channel == NULL;
	if (sync) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
	}
	to = cm_channel_of(channel, "rdma_migrate_id");
	reported = fab_migrate_id(cid->fid, to->fchan);
	if (cid->sync) {
		if (id->event) {
			cm_ack(id->event);
			id->event = NULL;
		}
		__atomic_sub_fetch(&((struct cm_channel *)id->channel)->nids, 1, __ATOMIC_RELAXED);
		rdma_destroy_event_channel(id->channel);
	} else {
		__atomic_sub_fetch(&((struct cm_channel *)id->channel)->nids, 1, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&to->nids, 1, __ATOMIC_RELAXED);
	if (sync)
		ledger_internal(LEDGER_CHANNEL, channel);
	pthread_mutex_lock(&cid->mut);
	cid->sync = sync;
	id->channel = channel;
	while (cid->events_completed < reported)
		pthread_cond_wait(&cid->cond, &cid->mut);
	pthread_mutex_unlock(&cid->mut);
	return 0;
}

/* ---------------------------------------------------------------- queries */

socklen_t cm_addr_len(const struct sockaddr *addr)
{
	if (!addr)
		return 0;
	if (addr->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (addr->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	/* The mock's kernel takes AF_IB, as every kernel since 3.11 does
	 * (ucma_set_af_ib_support finds it). */
	if (addr->sa_family == AF_IB)
		return sizeof(struct sockaddr_ib);
	return 0;
}

int cm_query_addr(struct cm_id *cid)
{
	struct rdma_cm_id *id = &cid->id;
	struct fab_route r;

	if (fab_query_route(cid->fid, &r))
		return mock_errno(ENOENT);
	memcpy(&id->route.addr.src_addr, &r.src, cm_addr_len((struct sockaddr *)&r.src));
	memcpy(&id->route.addr.dst_addr, &r.dst, cm_addr_len((struct sockaddr *)&r.dst));
	ledger_note(LEDGER_ID, id, "port %u", be16toh(rdma_get_src_port(id)));
	if (!cid->cma_dev && r.node_guid) {
		if (cm_get_device(cid, r.node_guid))
			return -1;
		id->port_num = r.port_num;
		id->route.addr.addr.ibaddr.pkey = r.pkey;
	}
	return 0;
}

void cm_query_gid(struct cm_id *cid)
{
	struct fab_route r;

	fab_query_route(cid->fid, &r);
	cid->id.route.addr.addr.ibaddr.sgid = r.sgid;
	cid->id.route.addr.addr.ibaddr.dgid = r.dgid;
}

int cm_query_path(struct cm_id *cid)
{
	struct ibv_sa_path_rec *path;
	struct fab_route r;

	if (fab_query_route(cid->fid, &r))
		return mock_errno(ENOENT);
	if (!r.num_paths)
		return 0;
	path = calloc(1, sizeof *path);
	if (!path)
		return mock_errno(ENOMEM);
	path->sgid = r.sgid;
	path->dgid = r.dgid;
	path->pkey = htobe16(r.pkey);
	path->numb_path = 1;
	path->mtu_selector = 2;
	path->mtu = r.path_mtu;
	path->rate_selector = 2;
	path->packet_life_time_selector = 2;
	path->packet_life_time = r.packet_life_time;
	path->hop_limit = r.hop_limit;
	path->slid = htobe16(r.slid);
	path->dlid = htobe16(r.dlid);
	path->sl = r.sl;
	path->traffic_class = r.traffic_class;
	path->flow_label = htobe32(r.flow_label);
	path->rate = r.rate;
	free(cid->id.route.path_rec);
	cid->id.route.path_rec = path;
	cid->id.route.num_paths = 1;
	return 0;
}

static __be16 port_of(const struct sockaddr *addr)
{
	switch (addr->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)addr)->sin_port;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)addr)->sin6_port;
	case AF_IB:
		return htobe16((uint16_t)be64toh(((const struct sockaddr_ib *)addr)->sib_sid));
	default:
		return 0;
	}
}

/* No fault point: the getters have no way to report an error. */
MOCK_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	cm_id_of(id, "rdma_get_src_port");
	return port_of(&id->route.addr.src_addr);
}

MOCK_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	cm_id_of(id, "rdma_get_dst_port");
	return port_of(&id->route.addr.dst_addr);
}

/* ---------------------------------------------------------------- addresses */

MOCK_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *cid;
	int err;

	FAULT_MINUS1(LIB, "rdma_bind_addr");
	if (!cm_addr_len(addr))
		return mock_errno(EINVAL);
	cid = cm_id_of(id, "rdma_bind_addr");
	err = fab_bind(cid->fid, addr);
	if (err)
		return cm_err(err);
	if (cm_query_addr(cid))
		return -1;
	cm_query_gid(cid);
	return 0;
}

MOCK_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
				  struct sockaddr *dst_addr, int timeout_ms)
{
	socklen_t dst_len = cm_addr_len(dst_addr);
	struct cm_id *cid;
	int err;

	FAULT_MINUS1(LIB, "rdma_resolve_addr");
	if (!dst_len || (src_addr && !cm_addr_len(src_addr)))
		return mock_errno(EINVAL);
	cid = cm_id_of(id, "rdma_resolve_addr");
	err = fab_resolve_addr(cid->fid, src_addr, dst_addr, timeout_ms);
	if (err)
		return cm_err(err);
	memcpy(&id->route.addr.dst_addr, dst_addr, dst_len);
	return cm_complete(cid);
}

MOCK_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_id *cid = cm_id_of(id, "rdma_resolve_route");
	int err;

	FAULT_MINUS1(LIB, "rdma_resolve_route");
	MOCK_REQUIRE(id->verbs, "rdma_resolve_route",
		     "the id has no device (its address is not resolved); upstream dereferences id->verbs");
	err = fab_resolve_route(cid->fid, timeout_ms);
	if (err)
		return cm_err(err);
	return cm_complete(cid);
}

MOCK_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cm_id *cid = cm_id_of(id, "rdma_listen");
	int err;

	FAULT_MINUS1(LIB, "rdma_listen");
	err = fab_listen(cid->fid, backlog);
	if (err)
		return cm_err(err);
	return cm_query_addr(cid);
}

/* Options the kernel's ucma_set_option_id takes for RoCE ids. */
MOCK_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
				void *optval, size_t optlen)
{
	struct cm_id *cid = cm_id_of(id, "rdma_set_option");

	FAULT_MINUS1(LIB, "rdma_set_option");
	return cm_err(fab_set_option(cid->fid, level, optname, optval, optlen));
}

/* ucma_get_xrcd: one XRC domain per device, private to the process. */
struct ibv_xrcd *cm_get_xrcd(struct cm_id *cid)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct cma_device *d = cid->cma_dev;
	struct ibv_xrcd *xrcd;

	MOCK_REQUIRE(d, "rdma_create_qp", "the id has no device (address not resolved)");
	pthread_mutex_lock(&devices_lock);
	if (!d->xrcd)
		d->xrcd = ibv_open_xrcd(d->verbs, &attr);
	xrcd = d->xrcd;
	pthread_mutex_unlock(&devices_lock);
	return xrcd;
}

/* ---------------------------------------------------------------- ECE */

/* Set before a QP exists: what the REQ or REP will offer. */
MOCK_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cm_id *cid;

	FAULT_MINUS1(LIB, "rdma_set_local_ece");
	if (!id || id->qp || !ece || !ece->vendor_id || ece->comp_mask)
		return mock_errno(EINVAL);
	cid = cm_id_of(id, "rdma_set_local_ece");
	cid->local_ece.vendor_id = ece->vendor_id;
	cid->local_ece.options = ece->options;
	return 0;
}

MOCK_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cm_id *cid;

	FAULT_MINUS1(LIB, "rdma_get_remote_ece");
	if (!id || id->qp || !ece)
		return mock_errno(EINVAL);
	cid = cm_id_of(id, "rdma_get_remote_ece");
	ece->vendor_id = cid->remote_ece.vendor_id;
	ece->options = cid->remote_ece.options;
	ece->comp_mask = 0;
	return 0;
}

/* ---------------------------------------------------------------- notify */

MOCK_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct cm_id *cid = cm_id_of(id, "rdma_notify");

	FAULT_MINUS1(LIB, "rdma_notify");
	return cm_err(fab_notify(cid->fid, event));
}
