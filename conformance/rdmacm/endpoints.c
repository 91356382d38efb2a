/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_create_ep(), rdma_get_request() and synchronous ids end
 * to end (rdma_disconnect on them among it), rdma_migrate_id(),
 * rdma_get_devices(), and address resolution that cannot succeed. */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "link.h"

#define WAIT_MS 5000

/* The endpoint's address information; an active one bound to src when
 * given (rdma_create_ep resolves from it). */
static struct rdma_addrinfo *lookup_from(const char *node, bool passive, const char *src)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct sockaddr_storage src_addr;
	char service[8];
	int ret;

	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	if (src) {
		fx_sockaddr(AF_INET, src, 0, &src_addr);
		hints.ai_src_addr = (struct sockaddr *)&src_addr;
		hints.ai_src_len = sizeof(struct sockaddr_in);
	}
	snprintf(service, sizeof service, "%u", fx_port());
	ret = rdma_getaddrinfo(node, service, &hints, &res);
	if (ret)
		fail_msg("rdma_getaddrinfo(%s, %s): %d, %s", node, service, ret, strerror(errno));
	return res;
}

static struct rdma_addrinfo *lookup(const char *node, bool passive)
{
	return lookup_from(node, passive, NULL);
}

struct server {
	struct rdma_cm_id *listener, *conn;
	int accept_ret, accept_errno;
	/* The start of the request's private data, as rdma_get_request gave it. */
	uint8_t req_data[16];
	size_t req_len;
};

/* The passive side: rdma_get_request, then a synchronous rdma_accept that
 * returns once the active side has established. */
static void *serve(void *arg)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct server *s = arg;

	s->accept_ret = -1;
	if (rdma_get_request(s->listener, &s->conn)) {
		s->accept_errno = errno;
		/* Nobody will take the request: refuse it, with the listener,
		 * so that the active side's rdma_connect ends (REJECTED). */
		rdma_destroy_ep(s->listener);
		s->listener = NULL;
		return NULL;
	}
	if (s->conn->event && s->conn->event->param.conn.private_data) {
		s->req_len = s->conn->event->param.conn.private_data_len;
		memcpy(s->req_data, s->conn->event->param.conn.private_data,
		       s->req_len < sizeof s->req_data ? s->req_len : sizeof s->req_data);
	}
	s->accept_ret = rdma_accept(s->conn, &param);
	s->accept_errno = errno;
	if (s->accept_ret)
		rdma_reject(s->conn, NULL, 0); /* likewise */
	return NULL;
}

void rdma_get_request__sync_endpoints(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_addrinfo *passive, *active;
	struct rdma_cm_id *client;
	/* Static: the server thread may outlive a failed assertion in this frame. */
	static struct server s;
	pthread_t thread;

	fx_require_backend();
	/* Without QPs, across two devices (on one, both ends would be QP 0 and
	 * the IB CM would take the connection for a stale one). */
	passive = lookup(fx_other_addr(), true);
	active = lookup_from(fx_other_addr(), false, fx_addr(AF_INET));
	FX_OK(rdma_create_ep(&s.listener, passive, NULL, NULL));
	FX_OK(rdma_listen(s.listener, 4));
	FX_OK(rdma_create_ep(&client, active, NULL, NULL));
	/* rdma_create_ep resolved address and route synchronously. */
	assert_non_null(client->verbs);
	assert_int_not_equal(fx_src_port(client), 0);
	assert_int_equal(fx_dst_port(client), fx_port());
	assert_int_equal(pthread_create(&thread, NULL, serve, &s), 0);
	/* No QP: the synchronous connect returns with CONNECT_RESPONSE. */
	FX_OK(rdma_connect(client, &param));
	assert_non_null(client->event);
	assert_int_equal(client->event->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
	FX_OK(rdma_establish(client));
	pthread_join(thread, NULL);
	if (s.accept_ret)
		fail_msg("server: rdma_get_request/rdma_accept: %s", strerror(s.accept_errno));
	assert_int_equal(s.conn->event->event, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(fx_dst_port(s.conn), fx_src_port(client));
	rdma_destroy_ep(s.conn);
	rdma_destroy_ep(client);
	rdma_destroy_ep(s.listener);
	rdma_freeaddrinfo(passive);
	rdma_freeaddrinfo(active);
}

void rdma_get_request__not_sync(void **state)
{
	struct fx fx;
	struct rdma_cm_id *conn;
	int ret;

	fx_reach(&fx, AF_INET, FX_LISTENING);
	errno = 0;
	ret = rdma_get_request(fx.listener, &conn);
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_get_request", errno, EINVAL);
	fx_release(&fx);
}

void rdma_migrate_id__moves_pending_events(void **state)
{
	struct rdma_event_channel *other;
	struct rdma_cm_event *ev;
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_RESOLVE_CALLED);
	other = fx_channel();
	FX_OK(rdma_migrate_id(fx.client, other));
	assert_ptr_equal(fx.client->channel, other);
	assert_true(fx_quiet(fx.client_ch, 200));
	ev = fx_expect(other, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS);
	assert_ptr_equal(ev->id, fx.client);
	FX_OK(rdma_ack_cm_event(ev));
	fx_release(&fx);
	rdma_destroy_event_channel(other);
}

void rdma_get_devices__every_verbs_device(void **state)
{
	struct ibv_device **verbs_list;
	struct ibv_context **list;
	int n = -1, n_verbs = -1;

	fx_require_backend();
	list = rdma_get_devices(&n);
	assert_non_null(list);
	verbs_list = ibv_get_device_list(&n_verbs);
	assert_non_null(verbs_list);
	assert_int_equal(n, n_verbs);
	assert_null(list[n]);
	for (int i = 0; i < n; i++) {
		bool listed = false;

		assert_non_null(list[i]);
		for (int j = 0; j < n_verbs; j++)
			listed |= list[i]->device == verbs_list[j];
		assert_true(listed);
	}
	ibv_free_device_list(verbs_list);
	rdma_free_devices(list);
}

/* An address on the device's subnet that no host answers for: on the mock
 * one is added with the control API; on a real host RDMACHECK_UNANSWERED
 * names one (say, a free address on the test interface's subnet). */
void rdma_resolve_addr__unanswered_neighbour(void **state)
{
	struct rdma_event_channel *ch;
	struct sockaddr_storage addr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	ch = fx_channel();
	fx_sockaddr(AF_INET, fx_unanswered_addr(), fx_port(), &addr);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 500));
	ev = fx_expect(ch, RDMA_CM_EVENT_ADDR_ERROR, WAIT_MS);
	assert_int_equal(ev->status, -ETIMEDOUT);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* A synchronous id returns the error its event carries (librdmacm
 * ucma_complete): the unanswered neighbour's ADDR_ERROR, status
 * -ETIMEDOUT, makes rdma_resolve_addr -1 with errno ETIMEDOUT, and the
 * event stays in id->event. */
void rdma_resolve_addr__sync_unanswered(void **state)
{
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;

	fx_require_backend();
	fx_sockaddr(AF_INET, fx_unanswered_addr(), fx_port(), &addr);
	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	errno = 0;
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 500), -1);
	RC_ASSERT_ERRNO("rdma_resolve_addr", errno, ETIMEDOUT);
	assert_non_null(id->event);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_ERROR);
	assert_int_equal(id->event->status, -ETIMEDOUT);
	FX_OK(rdma_destroy_id(id));
}

/* Two synchronous endpoints with QPs: the active one gets its QP from
 * rdma_create_ep, the passive side its new QP from rdma_get_request, and
 * a synchronous connect returns with ESTABLISHED. */
struct sync_pair {
	struct server s;
	struct rdma_cm_id *client;
	struct rdma_addrinfo *passive, *active;
	struct ibv_pd *pd;	   /* NULL, or the passive endpoint's PD */
	const char *connect;	   /* NULL, or the active addrinfo's ai_connect */
	const char *private_data; /* NULL, or rdma_connect's private data */
};

static void sync_pair_up(struct sync_pair *p)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	pthread_t thread;

	fx_require_backend();
	p->passive = lookup(fx_addr(AF_INET), true);
	p->active = lookup(fx_addr(AF_INET), false);
	if (p->connect) {
		p->active->ai_connect = strdup(p->connect);
		assert_non_null(p->active->ai_connect);
		p->active->ai_connect_len = (uint32_t)strlen(p->connect);
	}
	if (p->private_data) {
		param.private_data = p->private_data;
		param.private_data_len = (uint8_t)strlen(p->private_data);
	}
	FX_OK(rdma_create_ep(&p->s.listener, p->passive, p->pd, &attr));
	FX_OK(rdma_listen(p->s.listener, 4));
	FX_OK(rdma_create_ep(&p->client, p->active, NULL, &attr));
	assert_non_null(p->client->qp);
	assert_int_equal(p->client->qp->state, IBV_QPS_INIT);
	assert_int_equal(pthread_create(&thread, NULL, serve, &p->s), 0);
	FX_OK(rdma_connect(p->client, &param));
	assert_int_equal(p->client->event->event, RDMA_CM_EVENT_ESTABLISHED);
	pthread_join(thread, NULL);
	if (p->s.accept_ret)
		fail_msg("server: rdma_get_request/rdma_accept: %s", strerror(p->s.accept_errno));
	assert_non_null(p->s.conn->qp);
}

static void sync_pair_release(struct sync_pair *p)
{
	rdma_destroy_ep(p->s.conn);
	rdma_destroy_ep(p->client);
	rdma_destroy_ep(p->s.listener);
	rdma_freeaddrinfo(p->passive);
	rdma_freeaddrinfo(p->active);
}

void rdma_create_ep__with_qps(void **state)
{
	static struct sync_pair p; /* static: as in rdma_get_request__sync_endpoints */

	sync_pair_up(&p);
	assert_int_equal(p.s.conn->qp->state, fx_connected_qp_state(p.s.conn, true));
	assert_int_equal(p.client->qp->state, fx_connected_qp_state(p.client, false));
	sync_pair_release(&p);
}

/* A PD of the device that the address addr is on: a scratch id bound to
 * it names the device (librdmacm keeps its contexts open after). */
static struct ibv_pd *pd_of_addr(const char *addr)
{
	struct sockaddr_storage sa;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;

	fx_sockaddr(AF_INET, addr, 0, &sa);
	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&sa));
	assert_non_null(id->verbs);
	pd = ibv_alloc_pd(id->verbs);
	assert_non_null(pd);
	FX_OK(rdma_destroy_id(id));
	return pd;
}

/* A passive endpoint given a PD keeps it (id->pd), and rdma_get_request
 * makes each new id's QP on it (librdmacm's ucma_passive_ep and
 * rdma_get_request: rdma_create_qp on the listener's pd). */
void rdma_create_ep__passive_pd(void **state)
{
	static struct sync_pair p; /* static: as in rdma_get_request__sync_endpoints */

	fx_require_backend();
	p.pd = pd_of_addr(fx_addr(AF_INET));
	sync_pair_up(&p);
	assert_ptr_equal(p.s.listener->pd, p.pd);
	assert_ptr_equal(p.s.conn->qp->pd, p.pd);
	assert_ptr_equal(p.s.conn->pd, p.pd);
	assert_ptr_not_equal(p.client->qp->pd, p.pd);
	sync_pair_release(&p);
	assert_int_equal(ibv_dealloc_pd(p.pd), 0);
}

/* The connect data an active rdma_addrinfo carries (ai_connect) goes
 * first in the REQ's private data, rdma_connect's own after it
 * (librdmacm's ucma_copy_conn_param_to_kern). */
void rdma_create_ep__connect_data(void **state)
{
	static struct sync_pair p = { .connect = "ai_c", .private_data = "user" };

	sync_pair_up(&p);
	assert_true(p.s.req_len >= 8);
	assert_memory_equal(p.s.req_data, "ai_cuser", 8);
	sync_pair_release(&p);
}

/* A passive endpoint whose address and port another id holds: -1 with
 * rdma_bind_addr's errno, EADDRINUSE, and no id stored. */
void rdma_create_ep__address_in_use(void **state)
{
	struct rdma_cm_id *first, *second = NULL;
	struct rdma_addrinfo *passive;

	fx_require_backend();
	passive = lookup(fx_addr(AF_INET), true);
	FX_OK(rdma_create_ep(&first, passive, NULL, NULL));
	errno = 0;
	assert_int_equal(rdma_create_ep(&second, passive, NULL, NULL), -1);
	RC_ASSERT_ERRNO("rdma_create_ep", errno, EADDRINUSE);
	assert_null(second);
	rdma_destroy_ep(first);
	rdma_freeaddrinfo(passive);
}

/* An active endpoint whose QP the device refuses (max_send_wr above
 * max_qp_wr): -1 with the verbs' errno, EINVAL, no id stored, and the
 * id it made is gone (librdmacm calls rdma_destroy_ep on it). */
void rdma_create_ep__qp_refused(void **state)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_cm_id *id = NULL;
	struct rdma_addrinfo *active;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;

	fx_require_backend();
	active = lookup(fx_addr(AF_INET), false);
	pd = pd_of_addr(fx_addr(AF_INET));
	assert_int_equal(ibv_query_device(pd->context, &dev), 0);
	attr.cap.max_send_wr = (uint32_t)dev.max_qp_wr + 1;
	errno = 0;
	assert_int_equal(rdma_create_ep(&id, active, pd, &attr), -1);
	RC_ASSERT_ERRNO("rdma_create_ep", errno, EINVAL);
	assert_null(id);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	rdma_freeaddrinfo(active);
}

struct later {
	struct rdma_cm_id *id;
	int ret, err;
};

/* rdma_disconnect 300 ms (of real time) from now, in a thread of its own. */
static void *disconnect_later(void *arg)
{
	struct later *x = arg;

	usleep(300 * 1000);
	errno = 0;
	x->ret = rdma_disconnect(x->id);
	x->err = errno;
	return NULL;
}

/* rdma_disconnect on an id without an event channel returns with the id's
 * next event in id->event, and fails if that event's status is an error
 * (librdmacm ucma_complete). The active side disconnects and waits; the
 * passive side's thread disconnects 300 ms later: its call returns at once
 * with the DISCONNECTED the DREQ queued, and its DREP ends the active
 * side's wait with DISCONNECTED, status 0. Each side's second call returns
 * with its TIMEWAIT_EXIT. On iWARP the QPs are in SQD (ucma_shutdown)
 * and there is no second call: no TIMEWAIT. */
void rdma_disconnect__sync_ids(void **state)
{
	static struct sync_pair p; /* static: as in rdma_get_request__sync_endpoints */
	static struct later x;
	struct fx_fields f = { 0 };
	pthread_t thread;

	sync_pair_up(&p);
	x.id = p.s.conn;
	assert_int_equal(pthread_create(&thread, NULL, disconnect_later, &x), 0);
	FX_OK(rdma_disconnect(p.client));
	pthread_join(thread, NULL);
	if (x.ret)
		fail_msg("the passive side's rdma_disconnect: %s", strerror(x.err));
	FX_FIELD(&f, p.client->event->event, RDMA_CM_EVENT_DISCONNECTED);
	FX_FIELD(&f, p.client->event->status, 0);
	FX_FIELD(&f, p.s.conn->event->event, RDMA_CM_EVENT_DISCONNECTED);
	FX_FIELD(&f, p.s.conn->event->status, 0);
	FX_FIELD(&f, fx_qp_state(p.client->qp), fx_disconnected_state(p.client));
	FX_FIELD(&f, fx_qp_state(p.s.conn->qp), fx_disconnected_state(p.s.conn));
	/* iWARP has no TIMEWAIT: only the IB CM's handler raises TIMEWAIT_EXIT
	 * (cma.c cma_ib_handler), and a second synchronous rdma_disconnect
	 * would wait for it for ever (iwcm.c iw_cm_disconnect does nothing in
	 * IDLE; measured on siw: the test's timeout). */
	if (fx_cm_iwarp(p.client)) {
		fx_fields_done(&f);
		sync_pair_release(&p);
		return;
	}
	FX_OK(rdma_disconnect(p.client));
	FX_FIELD(&f, p.client->event->event, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	FX_OK(rdma_disconnect(p.s.conn));
	FX_FIELD(&f, p.s.conn->event->event, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	fx_fields_done(&f);
	sync_pair_release(&p);
}

/* rdma_free_devices frees the array only: librdmacm keeps its devices open
 * while it is loaded, so a context from a freed list still answers, and
 * the next rdma_get_devices lists the same contexts. */
void rdma_free_devices__contexts_stay_open(void **state)
{
	struct ibv_device_attr attr;
	struct ibv_context **list, *first;
	int n = -1, again = -1;

	fx_require_backend();
	list = rdma_get_devices(&n);
	assert_non_null(list);
	assert_true(n > 0);
	first = list[0];
	rdma_free_devices(list);
	assert_int_equal(ibv_query_device(first, &attr), 0);
	list = rdma_get_devices(&again);
	assert_non_null(list);
	assert_int_equal(again, n);
	assert_ptr_equal(list[0], first);
	rdma_free_devices(list);
}
