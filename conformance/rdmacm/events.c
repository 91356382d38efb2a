/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_get_cm_event() and the events of a connection's life:
 * their order on each side, rejections, teardown and timewait, a
 * non-blocking channel, rdma_destroy_id waiting for acks, and synchronous
 * ids. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "link.h"

#define WAIT_MS 5000
#define QUIET_MS 300

void rdma_get_cm_event__active_order(void **state)
{
	static const enum rdma_cm_event_type expected[] = {
		RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ROUTE_RESOLVED,
		RDMA_CM_EVENT_ESTABLISHED,
	};
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_ESTABLISHED);
	assert_int_equal(fx.client_events, 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(rdma_event_str(fx.client_log[i]), rdma_event_str(expected[i]));
	assert_true(fx_quiet(fx.client_ch, QUIET_MS));
	fx_release(&fx);
}

void rdma_get_cm_event__passive_order(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct fx fx;

	fx_need_local_passive();
	fx_reach(&fx, AF_INET, FX_CONNECT_REQUESTED);
	assert_ptr_equal(fx.request->listen_id, fx.listener);
	assert_ptr_not_equal(fx.request->id, fx.listener);
	FX_OK(rdma_accept(fx.server, &param));
	FX_OK(rdma_ack_cm_event(fx.request));
	fx.request = NULL;
	fx_expect_ack(fx.client_ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
	ev = fx_expect(fx.server_ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
	assert_ptr_equal(ev->id, fx.server);
	FX_OK(rdma_ack_cm_event(ev));
	assert_true(fx_quiet(fx.server_ch, QUIET_MS));
	fx_release(&fx);
}

/* Without a QP the active side reads CONNECT_RESPONSE and finishes with
 * rdma_establish; only then does the passive side read ESTABLISHED. Across
 * two devices: on one device both QP numbers would be 0 and the IB CM would
 * take the second connection for a stale one. */
void rdma_get_cm_event__connect_response_without_qp(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct fx fx;

	fx_reach_opts(&fx, AF_INET, FX_CONNECT_REQUESTED, FX_NO_QPS | FX_OTHER_DEVICE);
	if (fx.server) {
		FX_OK(rdma_accept(fx.server, &param));
		FX_OK(rdma_ack_cm_event(fx.request));
		fx.request = NULL;
	}
	fx_expect_ack(fx.client_ch, RDMA_CM_EVENT_CONNECT_RESPONSE, WAIT_MS);
	assert_int_equal(fx.client_events, 2);
	if (fx.server)
		assert_true(fx_quiet(fx.server_ch, QUIET_MS));
	FX_OK(rdma_establish(fx.client));
	assert_true(fx_quiet(fx.client_ch, QUIET_MS));
	if (fx.server) {
		ev = fx_expect(fx.server_ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
		assert_ptr_equal(ev->id, fx.server);
		FX_OK(rdma_ack_cm_event(ev));
	}
	fx_release(&fx);
}

/* The passive side reads DISCONNECTED at once; the active side only once
 * the passive side disconnects too (the peer waits 1 s in two-host mode). */
void rdma_disconnect__peer_first(void **state)
{
	struct fx fx;
	bool early;

	fx_reach_opts(&fx, AF_INET, FX_ESTABLISHED, FX_LATE_DISCONNECT);
	fx_require_ib_cm(fx.client, FX_IWARP_CLOSE);
	FX_OK(rdma_disconnect(fx.client));
	if (fx.server)
		fx_expect_ack(fx.server_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	early = !fx_quiet(fx.client_ch, QUIET_MS);
	rc_note_documented(early);
	assert_false(early);
	if (fx.server)
		FX_OK(rdma_disconnect(fx.server));
	fx_expect_ack(fx.client_ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	fx_release(&fx);
}

void rdma_get_cm_event__timewait_exit(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_DISCONNECTED);
	fx_require_ib_cm(fx.client, FX_IWARP_NO_TIMEWAIT);
	fx_expect_ack(fx.client_ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, WAIT_MS);
	if (fx.server)
		fx_expect_ack(fx.server_ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, WAIT_MS);
	fx_release(&fx);
}

/* A client resolved and routed to a port where nobody listens. */
void rdma_connect__no_listener(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage addr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	fx_sockaddr(AF_INET, fx_target_addr(AF_INET), fx_free_port(), &addr);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS);
	FX_OK(rdma_resolve_route(id, 2000));
	fx_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, WAIT_MS);
	fx_require_cm_qp(id);
	FX_OK(rdma_connect(id, &param));
	ev = fx_expect(ch, RDMA_CM_EVENT_REJECTED, WAIT_MS);
	assert_int_equal(ev->status, 8); /* IB_CM_REJ_INVALID_SERVICE_ID */
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* A REQ the passive side reads and never answers: the CM acknowledges it
 * with an MRA of service timeout 24, so the active side waits 16 tries of
 * some 66 s, then reads UNREACHABLE, ETIMEDOUT. The passive side is not
 * told: an rdma_accept afterwards succeeds, its REP finds nobody waiting,
 * and after its own tries it reads UNREACHABLE, ETIMEDOUT too. */
void rdma_connect__unanswered_request(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct fx_link l;
	uint64_t t0, waited;

	rc_require_clock_jumps("the MRA'd REQ goes unanswered for 17.6 minutes");
	fx_link_request(&l, fx_addr(AF_INET), NULL);
	t0 = rc_now_ns();
	assert_true(fx_quiet(l.client_ch, 60000));
	ev = fx_expect(l.client_ch, RDMA_CM_EVENT_UNREACHABLE, 10000);
	assert_int_equal(ev->status, -ETIMEDOUT);
	FX_OK(rdma_ack_cm_event(ev));
	waited = (rc_now_ns() - t0) / 1000000000u;
	if (waited < 16 * 65 || waited > 18 * 60)
		fail_msg("UNREACHABLE %llu s after the REQ: not the MRA's 16 tries of 66 s",
			 (unsigned long long)waited);
	FX_OK(rdma_accept(l.s.id, &param));
	FX_OK(rdma_ack_cm_event(l.request));
	l.request = NULL;
	t0 = rc_now_ns();
	ev = fx_expect(l.server_ch, RDMA_CM_EVENT_UNREACHABLE, 10000);
	assert_int_equal(ev->status, -ETIMEDOUT);
	FX_OK(rdma_ack_cm_event(ev));
	waited = (rc_now_ns() - t0) / 1000000000u;
	if (waited < 60 || waited > 70)
		fail_msg("the late REP's UNREACHABLE %llu s after rdma_accept: not the REP's 16 tries of 4 s",
			 (unsigned long long)waited);
	fx_link_release(&l);
}

/* A listener of `backlog` at the test address, and two clients routed to
 * it, each with a QP of its own when with_qps. */
struct two_clients {
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *lid, *c[2];
};

static const struct rdma_conn_param two_param = {
	.responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7,
};

static void two_clients_up(struct two_clients *t, int backlog, bool with_qps)
{
	struct sockaddr_storage sa;

	fx_need_local_passive();
	t->sch = fx_channel();
	t->cch = fx_channel();
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &sa);
	FX_OK(rdma_create_id(t->sch, &t->lid, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(t->lid, (struct sockaddr *)&sa));
	FX_OK(rdma_listen(t->lid, backlog));
	for (int i = 0; i < 2; i++) {
		/* Its own attributes: rdma_create_qp writes the CQs it makes there. */
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
							.max_send_sge = 1, .max_recv_sge = 1 } };

		FX_OK(rdma_create_id(t->cch, &t->c[i], NULL, RDMA_PS_TCP));
		FX_OK(rdma_resolve_addr(t->c[i], NULL, (struct sockaddr *)&sa, 2000));
		fx_expect_ack(t->cch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS);
		FX_OK(rdma_resolve_route(t->c[i], 2000));
		fx_expect_ack(t->cch, RDMA_CM_EVENT_ROUTE_RESOLVED, WAIT_MS);
		if (with_qps)
			FX_OK(rdma_create_qp(t->c[i], NULL, &qa));
	}
}

/* The listener's request at hand (ev) is rejected and its id destroyed;
 * the client it came from hears REJECTED, reason 28. */
static void reject_request_of(struct two_clients *t, struct rdma_cm_event *ev, struct rdma_cm_id *from)
{
	struct rdma_cm_id *conn = ev->id;

	FX_OK(rdma_reject(conn, NULL, 0));
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(conn));
	ev = fx_expect(t->cch, RDMA_CM_EVENT_REJECTED, WAIT_MS);
	assert_ptr_equal(ev->id, from);
	assert_int_equal(ev->status, 28);
	FX_OK(rdma_ack_cm_event(ev));
}

static void two_clients_down(struct two_clients *t)
{
	for (int i = 0; i < 2; i++) {
		if (t->c[i]->qp)
			rdma_destroy_qp(t->c[i]);
		FX_OK(rdma_destroy_id(t->c[i]));
	}
	FX_OK(rdma_destroy_id(t->lid));
	rdma_destroy_event_channel(t->cch);
	rdma_destroy_event_channel(t->sch);
}

/* A listener with a backlog of one request: a second REQ that arrives
 * while the first waits unread is dropped (ucma has no room; the CM sends
 * no REJ, so that the sender tries again), and its sender's CM sends it
 * again after its timeout: it arrives once the program has taken the
 * first. Each client has a QP of its own (two REQs from one node naming
 * one QP number are a stale connection: rdma_connect__same_qp_number). */
void rdma_listen__backlog_full(void **state)
{
	struct two_clients t;
	struct rdma_cm_event *ev;
	uint64_t t0;

	two_clients_up(&t, 1, true);
	fx_require_ib_cm(t.c[0], "a REQ dropped for a full backlog is the IB CM's to send again; an "
			 "iWARP connection is TCP's, and the second client reads an event within 1 s "
			 "(measured on siw)");
	FX_OK(rdma_connect(t.c[0], (struct rdma_conn_param *)&two_param));
	rc_sleep_ms(300);
	t0 = rc_now_ns();
	FX_OK(rdma_connect(t.c[1], (struct rdma_conn_param *)&two_param));
	rc_sleep_ms(1000);
	assert_true(fx_quiet(t.cch, 0));
	ev = fx_expect(t.sch, RDMA_CM_EVENT_CONNECT_REQUEST, WAIT_MS);
	assert_int_equal(ev->param.conn.qp_num, t.c[0]->qp->qp_num);
	reject_request_of(&t, ev, t.c[0]);
	ev = fx_expect(t.sch, RDMA_CM_EVENT_CONNECT_REQUEST, 3 * WAIT_MS);
	assert_int_equal(ev->param.conn.qp_num, t.c[1]->qp->qp_num);
	print_message("the dropped REQ arrived %.1f s after rdma_connect\n",
		      (double)(rc_now_ns() - t0) / 1e9);
	reject_request_of(&t, ev, t.c[1]);
	two_clients_down(&t);
}

/* Two REQs from one node naming one QP number while the first's connection
 * is being made: the CM takes the second for a stale connection and
 * refuses it, REJECTED with reason 10; the listener hears only the first.
 * Ids without a QP both name QP number 0. */
void rdma_connect__same_qp_number(void **state)
{
	struct two_clients t;
	struct rdma_cm_event *ev, *req;

	two_clients_up(&t, 4, false);
	fx_require_cm_qp(t.c[0]);
	FX_OK(rdma_connect(t.c[0], (struct rdma_conn_param *)&two_param));
	req = fx_expect(t.sch, RDMA_CM_EVENT_CONNECT_REQUEST, WAIT_MS);
	FX_OK(rdma_connect(t.c[1], (struct rdma_conn_param *)&two_param));
	ev = fx_expect(t.cch, RDMA_CM_EVENT_REJECTED, WAIT_MS);
	assert_ptr_equal(ev->id, t.c[1]);
	assert_int_equal(ev->status, 10);
	FX_OK(rdma_ack_cm_event(ev));
	assert_true(fx_quiet(t.sch, 500));
	reject_request_of(&t, req, t.c[0]);
	two_clients_down(&t);
}

void rdma_reject__private_data(void **state)
{
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_REJECTED);
	assert_int_equal(fx.reject_status, fx_reject_status(fx.client, 28)); /* IB_CM_REJ_CONSUMER_DEFINED */
	assert_true(fx.reject_len >= sizeof FX_REJECT_DATA);
	assert_memory_equal(fx.reject_data, FX_REJECT_DATA, sizeof FX_REJECT_DATA);
	fx_release(&fx);
}

void rdma_get_cm_event__nonblocking(void **state)
{
	struct rdma_event_channel *ch = fx_channel();
	struct sockaddr_storage addr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int ret;

	assert_int_equal(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	errno = 0;
	ret = rdma_get_cm_event(ch, &ev);
	assert_int_equal(ret, -1);
	RC_ASSERT_ERRNO("rdma_get_cm_event", errno, EAGAIN);
	assert_true(fx_quiet(ch, 0));

	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000));
	assert_false(fx_quiet(ch, WAIT_MS));
	FX_OK(rdma_get_cm_event(ch, &ev));
	assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

struct waiter {
	struct rdma_event_channel *ch;
	int ret;
	pid_t tid;
};

static void ack_cm_event(void *event)
{
	rdma_ack_cm_event(event);
}

/* Another thread acks the event once this one blocks in rdma_destroy_id. */
void rdma_destroy_id__waits_for_ack(void **state)
{
	int err;
	bool acked;
	struct fx_once_blocked acker;
	struct fx fx;

	fx_reach(&fx, AF_INET, FX_RESOLVE_CALLED);
	fx_once_blocked(&acker, ack_cm_event,
			fx_expect(fx.client_ch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS));
	err = rdma_destroy_id(fx.client) ? errno : 0;
	acked = fx_once_blocked_done(&acker);
	/* The acker goes before any verdict: a failed destroy leaves it the event. */
	fx_once_blocked_join(&acker);
	if (err)
		fail_msg("rdma_destroy_id(client): %s", strerror(err));
	fx.client = NULL;
	if (!acked)
		fail_msg("rdma_destroy_id returned before its event was acked");
	fx_release(&fx);
}

static void *read_one(void *arg)
{
	struct waiter *w = arg;
	struct rdma_cm_event *ev;

	__atomic_store_n(&w->tid, fx_tid(), __ATOMIC_RELEASE);
	if (!rdma_get_cm_event(w->ch, &ev))
		rdma_ack_cm_event(ev);
	return NULL;
}

/* The channel's fd is the caller's: its flags read the same before, all
 * through a blocking rdma_get_cm_event in another thread (sampled every
 * 100 us until that thread blocks, and 20 times more), and after. */
void rdma_get_cm_event__fd_flags_untouched(void **state)
{
	struct waiter w = { .ch = fx_channel() };
	struct rdma_event_channel *ch = w.ch;
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;
	int before = fcntl(ch->fd, F_GETFL), changed = 0;
	pthread_t reader;

	assert_true(before >= 0);
	assert_int_equal(before & O_NONBLOCK, 0);
	assert_int_equal(pthread_create(&reader, NULL, read_one, &w), 0);
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE)) {
		changed += fcntl(ch->fd, F_GETFL) != before;
		usleep(100);
	}
	assert_true(fx_await_sleeping(w.tid));
	for (int i = 0; i < 20; i++) {
		changed += fcntl(ch->fd, F_GETFL) != before;
		usleep(100);
	}
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000));
	pthread_join(reader, NULL);
	assert_int_equal(changed, 0);
	assert_int_equal(fcntl(ch->fd, F_GETFL), before);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

void rdma_resolve_addr__sync_mode(void **state)
{
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;

	fx_require_backend();
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000));
	assert_non_null(id->event);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_not_equal(fx_src_port(id), 0);
	assert_non_null(id->verbs);
	FX_OK(rdma_destroy_id(id));
}

/* Without QPs both ends of a connection on one device have QP number 0, so
 * the IB CM takes the REP for a stale connection: the passive side is
 * rejected, the active side hears nothing, and its REQ comes again. */
void rdma_accept__stale_without_qps(void **state)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	uint64_t t0;
	struct rdma_cm_id *again;
	struct fx fx;

	fx_need_local_passive();
	fx_reach_opts(&fx, AF_INET, FX_CONNECT_REQUESTED, FX_NO_QPS);
	FX_OK(rdma_accept(fx.server, &param));
	FX_OK(rdma_ack_cm_event(fx.request));
	fx.request = NULL;
	ev = fx_expect(fx.server_ch, RDMA_CM_EVENT_REJECTED, WAIT_MS);
	assert_int_equal(ev->status, 10); /* IB_CM_REJ_STALE_CONN */
	FX_OK(rdma_ack_cm_event(ev));
	t0 = rc_now_ns();
	assert_true(fx_quiet(fx.client_ch, 1000));
	/* The retransmitted REQ, after the CM's timeout: refuse it, which ends
	 * the client's wait. */
	ev = fx_expect(fx.server_ch, RDMA_CM_EVENT_CONNECT_REQUEST, 15000);
	if (rc_now_ns() - t0 < 2000000000u)
		fail_msg("the REQ came again %.3f s after the REJ, before the CM's timeout",
			 (double)(rc_now_ns() - t0) / 1e9);
	again = ev->id;
	FX_OK(rdma_reject(again, NULL, 0));
	FX_OK(rdma_ack_cm_event(ev));
	ev = fx_expect(fx.client_ch, RDMA_CM_EVENT_REJECTED, WAIT_MS);
	assert_int_equal(ev->status, 28);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(again));
	fx_release(&fx);
}

static void *wait_for_event(void *arg)
{
	struct waiter *w = arg;
	struct rdma_cm_event *ev;

	__atomic_store_n(&w->tid, fx_tid(), __ATOMIC_RELEASE);
	w->ret = rdma_get_cm_event(w->ch, &ev);
	return NULL;
}

/* rping destroys its channel on the way out while its CM thread waits in
 * rdma_get_cm_event. Upstream's thread sits in read(2) on the closed file
 * and waits on until the process ends; the mock's waits on too, holding
 * the channel, and does not read freed memory (it did: a SIGBUS at rping's
 * exit, about one run in a hundred). */
void rdma_destroy_event_channel__while_a_thread_waits(void **state)
{
	struct waiter w = { .ret = 1 };
	pthread_t t;

	rc_require_mock("the mock's channel outlives a waiting reader");
	w.ch = fx_channel();
	assert_int_equal(pthread_create(&t, NULL, wait_for_event, &w), 0);
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	assert_true(fx_await_sleeping(w.tid));
	rdma_destroy_event_channel(w.ch);
	usleep(20000);
	assert_int_equal(pthread_tryjoin_np(t, NULL), EBUSY); /* still waiting */
	assert_int_equal(w.ret, 1);
	pthread_detach(t);
}
