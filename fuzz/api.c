/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The API-sequence fuzzer (make fuzz): libFuzzer's bytes become a sequence
 * of rdma_cm, verbs and mlx5dv calls on the mock, in one process on a
 * private fabric, and after each call the invariants are checked:
 *   - a call that fails gives an errno of its table (rdmamock_errnos);
 *   - an event is one its id was waiting for (ADDR_RESOLVED only after
 *     rdma_resolve_addr, ESTABLISHED only after a connect or accept, ...),
 *     with a status of the right sign, on a known id;
 *   - the port getters agree with the addresses; a QP is in the state its
 *     last successful modify asked for; mlx5dv_modify_qp_udp_sport succeeds
 *     only on an RC or UC QP in RTS; a completion names a work request
 *     that was posted;
 *   - once everything is torn down, the process holds nothing on the
 *     fabric, and (LSan) nothing in the heap.
 * A broken invariant aborts with a line saying which, so libFuzzer keeps
 * the input. The fuzzer only makes calls a program may make: no object is
 * used after it is destroyed (the ledger's tests cover that), and no call
 * upstream crashes on is made (the mock names those and aborts; the
 * misuse tests cover them): an id without a device is not given to
 * rdma_resolve_route, rdma_create_qp, rdma_connect or rdma_accept.
 *
 * An input is a byte for the device, then operations of 4 bytes: an
 * opcode and three arguments. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_addrinfo.h"
#include "rdmamock.h"

#define NCH 2
#define NID 6
#define NRAW 2
#define MAX_OPS 64
#define BUF 4096

/* ---------------------------------------------------------------- invariants */

static int op_index;
static bool trace; /* RDMACHECK_FUZZ_TRACE=1: each operation and event on stderr */

__attribute__((noreturn, format(printf, 1, 2))) static void broken(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz: invariant broken at operation %d: ", op_index);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* A failed call's errno (or EAI_ code) must be in its table. */
static void check_errno(const char *call, int err)
{
	int table[64];
	int n = rdmamock_errnos(call, table, 64);

	if (n == -ENOENT)
		broken("%s failed (%d, %s) but has no errno table: it cannot fail", call, err,
		       strerror(err));
	for (int i = 0; i < n && i < 64; i++)
		if (table[i] == err)
			return;
	broken("%s failed with %d (%s), which is not in its table", call, err,
	       err > 0 ? strerror(err) : gai_strerror(err));
}

/* -1 (errno) convention. */
static void check_ret(const char *call, int ret)
{
	if (ret == -1)
		check_errno(call, errno);
	else if (ret != 0)
		broken("%s returned %d, neither 0 nor -1", call, ret);
}

/* Verbs' positive errno convention. */
static void check_verbs(const char *call, int ret)
{
	if (ret < 0)
		broken("%s returned %d: verbs return a positive errno", call, ret);
	if (ret)
		check_errno(call, ret);
}

/* ---------------------------------------------------------------- the objects */

struct fid {
	struct rdma_cm_id *id;
	int ch;
	bool passive;   /* from a CONNECT_REQUEST */
	bool listening;
	bool qp;
	bool want_addr, want_route, want_conn, want_addrinfo;
	bool established, disconnected;
	bool dreq_sent; /* rdma_disconnect called while connected */
};

static struct {
	const char *device;
	struct rdma_event_channel *ch[NCH];
	struct fid ids[NID];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *raw[NRAW];
	enum ibv_qp_state raw_state[NRAW];
	uint8_t gid_index;
	uint64_t next_wr_id;
	uint8_t *buf;
} s;

static const struct {
	const char *node;
	int family;
} addrs[] = {
	{ "127.0.0.1", AF_INET }, { "127.0.0.2", AF_INET }, { "::1", AF_INET6 },
	{ "192.0.2.99", AF_INET }, { "0.0.0.0", AF_INET }, { "::", AF_INET6 },
};
#define NADDR (sizeof addrs / sizeof addrs[0])

static void sockaddr_of(uint8_t pick, uint8_t port, struct sockaddr_storage *ss)
{
	const typeof(addrs[0]) *a = &addrs[pick % NADDR];
	uint16_t p = port < 8 ? 0 : (uint16_t)(7470 + port % 8);

	memset(ss, 0, sizeof *ss);
	if (a->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(p);
		inet_pton(AF_INET, a->node, &in->sin_addr);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(p);
		inet_pton(AF_INET6, a->node, &in6->sin6_addr);
	}
}

static uint16_t port_of(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

static struct fid *fid_of(const struct rdma_cm_id *id)
{
	for (int i = 0; i < NID; i++)
		if (s.ids[i].id && s.ids[i].id == id)
			return &s.ids[i];
	return NULL;
}

static struct fid *pick_id(uint8_t b)
{
	struct fid *f = &s.ids[b % NID];

	return f->id ? f : NULL;
}

static struct fid *free_fid(void)
{
	for (int i = 0; i < NID; i++)
		if (!s.ids[i].id)
			return &s.ids[i];
	return NULL;
}

static int channel_of(const struct rdma_cm_id *id)
{
	for (int i = 0; i < NCH; i++)
		if (s.ch[i] && id->channel == s.ch[i])
			return i;
	return -1;
}

static void destroy_fid(struct fid *f)
{
	if (f->qp)
		rdma_destroy_qp(f->id);
	check_ret("rdma_destroy_id", rdma_destroy_id(f->id));
	memset(f, 0, sizeof *f);
}

/* ---------------------------------------------------------------- events */

static void check_status(const struct rdma_cm_event *ev, bool ok)
{
	if (ok && ev->status)
		broken("%s with status %d", rdma_event_str(ev->event), ev->status);
	/* REJECTED carries the reject reason, and a UD id's UNREACHABLE the SIDR
	 * REP's status (cma_sidr_rep_handler): positive both. */
	if (!ok && ev->status >= 0 && ev->event != RDMA_CM_EVENT_REJECTED &&
	    !(ev->event == RDMA_CM_EVENT_UNREACHABLE && ev->status > 0 &&
	      (ev->id->ps == RDMA_PS_UDP || ev->id->ps == RDMA_PS_IPOIB)))
		broken("%s with status %d: an error event carries -errno", rdma_event_str(ev->event),
		       ev->status);
}

/* A new id from a CONNECT_REQUEST, kept if there is room; else rejected. */
static void connect_request(struct rdma_cm_event *ev)
{
	struct fid *listener = fid_of(ev->listen_id), *f;
	struct rdma_cm_id *id = ev->id;

	if (!listener || !listener->listening)
		broken("CONNECT_REQUEST for %p, not a listening id of ours", (void *)ev->listen_id);
	if (fid_of(id))
		broken("CONNECT_REQUEST brought an id that is already known");
	if (id->channel != ev->listen_id->channel)
		broken("CONNECT_REQUEST's id is not on its listener's channel");
	check_status(ev, true);
	check_ret("rdma_ack_cm_event", rdma_ack_cm_event(ev));
	f = free_fid();
	if (!f) {
		check_ret("rdma_reject", rdma_reject(id, NULL, 0));
		check_ret("rdma_destroy_id", rdma_destroy_id(id));
		return;
	}
	*f = (struct fid){ .id = id, .ch = listener->ch, .passive = true };
}

/* The event that ends what *want waited for (the call named), with the
 * status of a success (ok) or of a failure. */
static void answer(const struct rdma_cm_event *ev, bool *want, const char *call, bool ok)
{
	if (!*want)
		broken("%s (%d) without %s", rdma_event_str(ev->event), ev->event, call);
	*want = false;
	check_status(ev, ok);
}

static void check_event(struct rdma_cm_event *ev)
{
	struct fid *f;

	if (trace)
		fprintf(stderr, "fuzz:   event %s (status %d) on %p\n", rdma_event_str(ev->event),
			ev->status, (void *)ev->id);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		connect_request(ev);
		return;
	}
	f = fid_of(ev->id);
	if (!f)
		broken("%s on %p, an id that is not ours", rdma_event_str(ev->event), (void *)ev->id);
	switch ((int)ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ADDR_ERROR:
		answer(ev, &f->want_addr, "rdma_resolve_addr", ev->event == RDMA_CM_EVENT_ADDR_RESOLVED);
		break;
	case RDMA_CM_EVENT_ADDRINFO_RESOLVED:
	case RDMA_CM_EVENT_ADDRINFO_ERROR:
		answer(ev, &f->want_addrinfo, "rdma_resolve_addrinfo",
		       ev->event == RDMA_CM_EVENT_ADDRINFO_RESOLVED);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		answer(ev, &f->want_route, "rdma_resolve_route", ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* The REP of a connect without a QP: no RTU is sent until
		 * rdma_establish, so the passive side may still reject (its
		 * id destroyed in REP_SENT: cm_destroy_id sends a REJ). */
		answer(ev, &f->want_conn, "a connect or accept", true);
		f->want_conn = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		answer(ev, &f->want_conn, "a connect or accept", true);
		f->established = true;
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		answer(ev, &f->want_conn, "a connect or accept", false);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (!f->established || f->disconnected)
			broken("DISCONNECTED on an id that was not connected");
		f->disconnected = true;
		/* A DREQ of ours that the peer never answered (it did not
		 * disconnect) ends with -ETIMEDOUT (cma_ib_handler,
		 * IB_CM_DREQ_ERROR): 74 s later, at once on the mock's clock. */
		if (!(f->dreq_sent && ev->status == -ETIMEDOUT))
			check_status(ev, true);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (!f->established)
			broken("TIMEWAIT_EXIT on an id that was never connected");
		break;
	default:
		broken("%s (%d): nothing here asks for it", rdma_event_str(ev->event), ev->event);
	}
	check_ret("rdma_ack_cm_event", rdma_ack_cm_event(ev));
}

static void read_events(int ch, int ms)
{
	struct rdma_cm_event *ev;
	struct pollfd p;

	if (!s.ch[ch])
		return;
	p = (struct pollfd){ .fd = s.ch[ch]->fd, .events = POLLIN };
	while (poll(&p, 1, ms) == 1) {
		int ret = rdma_get_cm_event(s.ch[ch], &ev);

		check_ret("rdma_get_cm_event", ret);
		if (ret)
			return;
		check_event(ev);
		ms = 0;
	}
}

/* ---------------------------------------------------------------- CM operations */

static void op_create_id(uint8_t a, uint8_t b)
{
	static const enum rdma_port_space ps[] = { RDMA_PS_TCP, RDMA_PS_UDP, RDMA_PS_IB, RDMA_PS_IPOIB };
	struct fid *f = free_fid();
	int ch = a % NCH, ret;

	if (!f || !s.ch[ch])
		return;
	ret = rdma_create_id(s.ch[ch], &f->id, NULL, ps[b % 4]);
	check_ret("rdma_create_id", ret);
	if (ret)
		f->id = NULL;
	else
		f->ch = ch;
}

static void op_bind(struct fid *f, uint8_t a, uint8_t b)
{
	struct sockaddr_storage ss;

	sockaddr_of(a, b, &ss);
	check_ret("rdma_bind_addr", rdma_bind_addr(f->id, (struct sockaddr *)&ss));
}

static void op_resolve_addr(struct fid *f, uint8_t a, uint8_t b)
{
	static const int timeouts[] = { 1, 20, 200, 2000 };
	struct sockaddr_storage dst, src;
	int ret;

	/* c: the timeout (bits 0-1), a source (bit 2, its address bits 3-4),
	 * the port (bits 5-7). */
	sockaddr_of(a, (uint8_t)(8 + (b >> 5)), &dst);
	sockaddr_of((uint8_t)(b >> 3 & 3), 0, &src);
	ret = rdma_resolve_addr(f->id, (b & 4) ? (struct sockaddr *)&src : NULL,
				(struct sockaddr *)&dst, timeouts[b & 3]);
	check_ret("rdma_resolve_addr", ret);
	if (!ret)
		f->want_addr = true;
}

static void op_resolve_route(struct fid *f, uint8_t a)
{
	int ret;

	if (!f->id->verbs)
		return; /* upstream dereferences id->verbs */
	ret = rdma_resolve_route(f->id, 1 + a * 8);

	check_ret("rdma_resolve_route", ret);
	if (!ret)
		f->want_route = true;
}

static void op_listen(struct fid *f, uint8_t a)
{
	int ret = rdma_listen(f->id, a % 8);

	check_ret("rdma_listen", ret);
	if (!ret)
		f->listening = true;
}

static void op_create_qp(struct fid *f, uint8_t a, uint8_t b)
{
	struct ibv_qp_init_attr init = {
		.qp_type = (a & 1) ? IBV_QPT_UD : IBV_QPT_RC,
		.cap = { .max_send_wr = 1u + (b & 7), .max_recv_wr = 1u + (b >> 3 & 7),
			 .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = (a & 2) ? 64 : 0 },
		.sq_sig_all = (a >> 2) & 1,
	};
	int ret;

	if (f->qp || !f->id->verbs)
		return; /* without a device, upstream dereferences its PD */
	ret = rdma_create_qp(f->id, NULL, &init);
	check_ret("rdma_create_qp", ret);
	if (!ret)
		f->qp = true;
}

static void op_destroy_qp(struct fid *f)
{
	if (!f->qp)
		return;
	rdma_destroy_qp(f->id);
	f->qp = false;
}

static void op_connect(struct fid *f, uint8_t a, uint8_t b)
{
	uint8_t priv[64] = { a, b };
	struct rdma_conn_param param = {
		.private_data = priv, .private_data_len = (uint8_t)(b % 65),
		.responder_resources = a & 3, .initiator_depth = (a >> 2) & 3,
		.retry_count = (a >> 4) & 7, .rnr_retry_count = b & 7, .flow_control = 1,
	};
	int ret;

	if (!f->id->verbs)
		return; /* upstream reads the device's limits */
	ret = rdma_connect(f->id, (a & 0x80) ? NULL : &param);

	check_ret("rdma_connect", ret);
	if (!ret)
		f->want_conn = true;
}

static void op_accept(struct fid *f, uint8_t a)
{
	struct rdma_conn_param param = { .responder_resources = a & 3, .initiator_depth = (a >> 2) & 3 };
	int ret;

	/* Upstream reads the device's limits, and conn_param->qp_num when the
	 * id has no QP. */
	if (!f->id->verbs || (!f->qp && (a & 0x80)))
		return;
	ret = rdma_accept(f->id, (a & 0x80) ? NULL : &param);

	check_ret("rdma_accept", ret);
	if (!ret)
		f->want_conn = true;
}

static void op_reject(struct fid *f, uint8_t a)
{
	uint8_t priv[8] = { a };

	check_ret("rdma_reject", rdma_reject(f->id, priv, a % 9));
}

static void op_disconnect(struct fid *f)
{
	if (f->established && !f->disconnected)
		f->dreq_sent = true;
	check_ret("rdma_disconnect", rdma_disconnect(f->id));
}

/* The port getters agree with the addresses they read. */
static void op_ports(struct fid *f)
{
	uint16_t dst = ntohs(rdma_get_dst_port(f->id)), src = ntohs(rdma_get_src_port(f->id));

	if (dst != port_of(rdma_get_peer_addr(f->id)))
		broken("rdma_get_dst_port %u, rdma_get_peer_addr's port %u", dst,
		       port_of(rdma_get_peer_addr(f->id)));
	if (src != port_of(rdma_get_local_addr(f->id)))
		broken("rdma_get_src_port %u, rdma_get_local_addr's port %u", src,
		       port_of(rdma_get_local_addr(f->id)));
}

static void op_migrate(struct fid *f, uint8_t a)
{
	int to = a % NCH, ret;

	if (!s.ch[to])
		return;
	ret = rdma_migrate_id(f->id, s.ch[to]);
	check_ret("rdma_migrate_id", ret);
	if (!ret)
		f->ch = to;
	if (channel_of(f->id) != f->ch)
		broken("rdma_migrate_id: the id's channel is not the one asked for");
}

static void op_set_option(struct fid *f, uint8_t a, uint8_t b)
{
	uint8_t value[8] = { b, 0, 0, 0, 0, 0, 0, 0 };
	int level = (a & 1) ? RDMA_OPTION_IB : RDMA_OPTION_ID;
	int name = (a >> 1) % 5;

	check_ret("rdma_set_option", rdma_set_option(f->id, level, name, value, (size_t)(b % 9)));
}

static void op_addrinfo(struct fid *f, uint8_t a, uint8_t b)
{
	static const char *const services[] = { "7471", NULL, "x", "0" };
	struct rdma_addrinfo hints = {
		.ai_flags = (a & 1 ? RAI_PASSIVE : 0) | (a & 2 ? RAI_NUMERICHOST : 0) |
			    (a & 4 ? RAI_FAMILY : 0),
		.ai_family = (a & 8) ? AF_INET6 : (a & 16) ? AF_INET : AF_UNSPEC,
		.ai_port_space = (a & 32) ? RDMA_PS_UDP : RDMA_PS_TCP,
		.ai_qp_type = (a & 32) ? IBV_QPT_UD : IBV_QPT_RC,
	};
	const char *node = (b & 7) == 7 ? NULL : addrs[(b & 7) % NADDR].node;
	const char *service = services[(b >> 3) & 3];
	struct rdma_addrinfo *res = NULL, *q = NULL;
	int ret;

	if (!(b & 0x80)) {
		ret = rdma_getaddrinfo(node, service, (a & 0x40) ? NULL : &hints, &res);
		if (ret == -1)
			check_errno("rdma_getaddrinfo", errno);
		else if (ret)
			check_errno("rdma_getaddrinfo", ret);
		else if (!res)
			broken("rdma_getaddrinfo succeeded with no result");
		rdma_freeaddrinfo(res);
		return;
	}
	/* The seed calls: resolve on an id, then query once resolved. */
	if (!f)
		return;
	if (a & 0x40) {
		ret = rdma_query_addrinfo(f->id, &q);
		check_ret("rdma_query_addrinfo", ret);
		if (!ret)
			rdma_freeaddrinfo(q);
		return;
	}
	ret = rdma_resolve_addrinfo(f->id, node ? node : "127.0.0.1", service, &hints);
	check_ret("rdma_resolve_addrinfo", ret);
	if (!ret)
		f->want_addrinfo = true;
}

/* mlx5dv_modify_qp_udp_sport: success only on an RC or UC QP the device
 * holds in RTS. The device's state is read before the call (after it, the
 * device may have moved the QP to ERR meanwhile, as a request that was
 * being retried fails), and the library's record, qp->state, which
 * ibv_query_qp updates, is put back: the call sees what the program's
 * own record says. A QP the device holds in ERR never goes back to RTS
 * by itself. */
static void udp_sport(struct ibv_qp *qp, uint8_t a, uint8_t b)
{
	enum ibv_qp_state recorded = qp->state;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int ret;

	check_verbs("ibv_query_qp", ibv_query_qp(qp, &attr, IBV_QP_STATE, &init));
	qp->state = recorded;
	ret = mlx5dv_modify_qp_udp_sport(qp, (uint16_t)(a << 8 | b));
	if (ret) {
		check_verbs("mlx5dv_modify_qp_udp_sport", ret);
		return;
	}
	if (attr.qp_state != IBV_QPS_RTS || (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC))
		broken("mlx5dv_modify_qp_udp_sport succeeded on a QP of type %d that the device held in state %d",
		       qp->qp_type, attr.qp_state);
}

/* ---------------------------------------------------------------- raw verbs QPs */

static void raw_check_state(int i)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	check_verbs("ibv_query_qp", ibv_query_qp(s.raw[i], &attr, IBV_QP_STATE, &init));
	/* The device may have moved it to ERR (or SQE) itself. */
	if (attr.qp_state != s.raw_state[i] && attr.qp_state != IBV_QPS_ERR &&
	    attr.qp_state != IBV_QPS_SQE)
		broken("QP %u in state %d, not the %d its last modify asked for", s.raw[i]->qp_num,
		       attr.qp_state, s.raw_state[i]);
	s.raw_state[i] = attr.qp_state;
}

static void raw_modify(int i, struct ibv_qp_attr *attr, int mask)
{
	int ret = ibv_modify_qp(s.raw[i], attr, mask);

	check_verbs("ibv_modify_qp", ret);
	if (!ret && (mask & IBV_QP_STATE))
		s.raw_state[i] = attr->qp_state;
	raw_check_state(i);
}

/* The attributes each transition of an RC QP needs, connected to the
 * other raw QP; the mask from the fuzzer's byte, mostly the right one. */
static void op_raw_modify(uint8_t a, uint8_t b, uint8_t c)
{
	static const int need[] = {
		[IBV_QPS_RESET] = IBV_QP_STATE,
		[IBV_QPS_INIT] = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		[IBV_QPS_RTR] = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
		[IBV_QPS_RTS] = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
		[IBV_QPS_SQD] = IBV_QP_STATE, [IBV_QPS_SQE] = IBV_QP_STATE, [IBV_QPS_ERR] = IBV_QP_STATE,
	};
	int i = a % NRAW, to = (a >> 1) % 7;
	struct ibv_qp_attr attr = {
		.qp_state = (enum ibv_qp_state)to, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.path_mtu = (enum ibv_mtu)(1 + c % 5), .dest_qp_num = s.raw[(i + 1) % NRAW]->qp_num,
		.rq_psn = c, .sq_psn = c, .max_dest_rd_atomic = 1, .max_rd_atomic = 1,
		.min_rnr_timer = 1, .timeout = (uint8_t)(c & 31), .retry_cnt = (uint8_t)(b & 7),
		.rnr_retry = (uint8_t)(b >> 3 & 7),
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .hop_limit = 64, .sgid_index = s.gid_index } },
	};
	int mask = need[to];

	ibv_query_gid(s.ctx, 1, s.gid_index, &attr.ah_attr.grh.dgid);
	if (b & 0x40)
		mask ^= 1 << (c % 21); /* one attribute too many or missing */
	raw_modify(i, &attr, mask);
}

static void op_raw_post(uint8_t a, uint8_t b, uint8_t c)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	int i = a % NRAW;
	uint32_t len = (uint32_t)(b & 0x7f) * 32;
	uint64_t off = (uint64_t)(c & 0x3f) * 8;
	struct ibv_sge sge = { .addr = (uintptr_t)s.buf + off, .length = len,
			       .lkey = (a & 0x80) ? ~s.mr->lkey : s.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = s.next_wr_id++, .sg_list = &sge, .num_sge = (b & 0x80) ? 0 : 1,
		.opcode = ops[(a >> 1) % 7],
		.send_flags = ((c & 0x40) ? 0 : IBV_SEND_SIGNALED) | ((c & 0x80) ? IBV_SEND_INLINE : 0),
	}, *bad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = s.next_wr_id++, .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	int ret;

	if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)s.buf + off;
		wr.wr.atomic.rkey = (a & 0x40) ? ~s.mr->rkey : s.mr->rkey;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)s.buf + BUF - off - len;
		wr.wr.rdma.rkey = (a & 0x40) ? ~s.mr->rkey : s.mr->rkey;
	}
	if ((a >> 4) & 1) {
		ret = ibv_post_recv(s.raw[i], &rwr, &rbad);
		check_verbs("ibv_post_recv", ret);
		if (ret && rbad != &rwr)
			broken("ibv_post_recv failed with bad_wr %p, not the request", (void *)rbad);
	} else {
		ret = ibv_post_send(s.raw[i], &wr, &bad);
		check_verbs("ibv_post_send", ret);
		if (ret && bad != &wr)
			broken("ibv_post_send failed with bad_wr %p, not the request", (void *)bad);
	}
	raw_check_state(i);
}

static void op_poll(void)
{
	struct ibv_wc wc[4];
	int n = ibv_poll_cq(s.cq, 4, wc);

	if (n < 0)
		broken("ibv_poll_cq returned %d", n);
	for (int k = 0; k < n; k++) {
		bool ours = false;

		if (wc[k].wr_id >= s.next_wr_id)
			broken("a completion for wr_id %llu, never posted", (unsigned long long)wc[k].wr_id);
		for (int i = 0; i < NRAW; i++)
			ours |= wc[k].qp_num == s.raw[i]->qp_num;
		if (!ours)
			broken("a completion for QP %u, not on this CQ", wc[k].qp_num);
		if (wc[k].status > IBV_WC_TM_RNDV_INCOMPLETE)
			broken("a completion with status %d", wc[k].status);
	}
}

/* ---------------------------------------------------------------- one input */

enum op {
	OP_CHANNEL, OP_DESTROY_CHANNEL, OP_CREATE_ID, OP_DESTROY_ID, OP_BIND, OP_RESOLVE_ADDR,
	OP_RESOLVE_ROUTE, OP_LISTEN, OP_CREATE_QP, OP_DESTROY_QP, OP_CONNECT, OP_ACCEPT,
	OP_REJECT, OP_DISCONNECT, OP_EVENTS, OP_PORTS, OP_MIGRATE, OP_SET_OPTION, OP_ADDRINFO,
	OP_UDP_SPORT, OP_RAW_MODIFY, OP_RAW_POST, OP_POLL, OP_COUNT
};

static bool channel_in_use(int ch)
{
	for (int i = 0; i < NID; i++)
		if (s.ids[i].id && s.ids[i].ch == ch)
			return true;
	return false;
}

static void run_op(const uint8_t *p)
{
	uint8_t a = p[1], b = p[2], c = p[3];
	struct fid *f = pick_id(a);
	int ch = b % NCH;

	if (trace)
		fprintf(stderr, "fuzz: %d: op %d (%u %u %u), id %p\n", op_index, p[0] % OP_COUNT, a, b, c,
			f ? (void *)f->id : NULL);
	switch (p[0] % OP_COUNT) {
	case OP_CHANNEL:
		if (!s.ch[ch] && !(s.ch[ch] = rdma_create_event_channel()))
			check_errno("rdma_create_event_channel", errno);
		break;
	case OP_DESTROY_CHANNEL:
		if (s.ch[ch] && !channel_in_use(ch)) {
			rdma_destroy_event_channel(s.ch[ch]);
			s.ch[ch] = NULL;
		}
		break;
	case OP_CREATE_ID: op_create_id(b, c); break;
	case OP_DESTROY_ID:
		if (f) {
			read_events(f->ch, 0);
			if (f->id)
				destroy_fid(f);
		}
		break;
	case OP_BIND: if (f) op_bind(f, b, c); break;
	case OP_RESOLVE_ADDR: if (f) op_resolve_addr(f, b, c); break;
	case OP_RESOLVE_ROUTE: if (f) op_resolve_route(f, b); break;
	case OP_LISTEN: if (f) op_listen(f, b); break;
	case OP_CREATE_QP: if (f) op_create_qp(f, b, c); break;
	case OP_DESTROY_QP: if (f) op_destroy_qp(f); break;
	case OP_CONNECT: if (f) op_connect(f, b, c); break;
	case OP_ACCEPT: if (f) op_accept(f, b); break;
	case OP_REJECT: if (f) op_reject(f, b); break;
	case OP_DISCONNECT: if (f) op_disconnect(f); break;
	case OP_EVENTS: read_events(ch, (c & 3) * 5); break;
	case OP_PORTS: if (f) op_ports(f); break;
	case OP_MIGRATE: if (f) op_migrate(f, b); break;
	case OP_SET_OPTION: if (f) op_set_option(f, b, c); break;
	case OP_ADDRINFO: op_addrinfo(f, b, c); break;
	case OP_UDP_SPORT:
		if (b & 1)
			udp_sport(s.raw[(b >> 1) % NRAW], a, c);
		else if (f && f->qp)
			udp_sport(f->id->qp, b, c);
		break;
	case OP_RAW_MODIFY: op_raw_modify(a, b, c); break;
	case OP_RAW_POST: op_raw_post(a, b, c); break;
	case OP_POLL: op_poll(); break;
	}
}

static void setup(uint8_t device)
{
	struct ibv_device **list;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	int n;

	memset(&s, 0, sizeof s);
	s.device = (device & 1) ? "rxe0" : "mlx5_0";
	s.buf = calloc(1, BUF);
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !s.ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), s.device))
			s.ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!s.buf || !s.ctx || !(s.pd = ibv_alloc_pd(s.ctx)) ||
	    !(s.cq = ibv_create_cq(s.ctx, 64, NULL, NULL, 0)) ||
	    !(s.mr = ibv_reg_mr(s.pd, s.buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
		broken("cannot set up verbs on %s: %s", s.device, strerror(errno));
	init.send_cq = init.recv_cq = s.cq;
	for (int i = 0; i < NRAW; i++)
		if (!(s.raw[i] = ibv_create_qp(s.pd, &init)))
			broken("ibv_create_qp: %s", strerror(errno));
	/* The RoCE v2 GID of 127.0.0.1 or 127.0.0.2: the raw QPs talk to
	 * each other through it. */
	for (int i = 0; i < 16; i++) {
		struct ibv_gid_entry e;

		if (!ibv_query_gid_ex(s.ctx, 1, (uint32_t)i, &e, 0) && e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    e.gid.raw[10] == 0xff) {
			s.gid_index = (uint8_t)i;
			break;
		}
	}
	s.ch[0] = rdma_create_event_channel();
	if (!s.ch[0])
		broken("rdma_create_event_channel: %s", strerror(errno));
}

/* What the process holds on the fabric between inputs: its libraries'
 * own state, made at the first use (an empty input measures it). */
static long baseline = -1;

/* Everything goes, as a careful program ends; then nothing may be left. */
static void teardown(void)
{
	long held;

	for (int ch = 0; ch < NCH; ch++)
		read_events(ch, 0);
	for (int i = 0; i < NID; i++)
		if (s.ids[i].id)
			destroy_fid(&s.ids[i]);
	for (int ch = 0; ch < NCH; ch++)
		if (s.ch[ch])
			rdma_destroy_event_channel(s.ch[ch]);
	for (int i = 0; i < NRAW; i++)
		check_verbs("ibv_destroy_qp", ibv_destroy_qp(s.raw[i]));
	check_verbs("ibv_dereg_mr", ibv_dereg_mr(s.mr));
	check_verbs("ibv_destroy_cq", ibv_destroy_cq(s.cq));
	check_verbs("ibv_dealloc_pd", ibv_dealloc_pd(s.pd));
	check_verbs("ibv_close_device", ibv_close_device(s.ctx));
	free(s.buf);
	held = rdmamock_fabric_held((int)getpid());
	if (baseline >= 0 && held != baseline)
		broken("after teardown the process holds %ld objects of the fabric, not %ld", held,
		       baseline);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("RDMAMOCK_FABRIC", "private", 1);
	setenv("RDMAMOCK_LEDGER", "1", 0);
	trace = getenv("RDMACHECK_FUZZ_TRACE") && *getenv("RDMACHECK_FUZZ_TRACE") == '1';
	/* librdmacm opens every device at its first use and keeps them, as
	 * upstream's ucma_init does, and a device's context and PD once an id
	 * is bound to it (ucma_get_device): the baseline includes them. */
	setup(0);
	for (uint8_t i = 0; i < 3; i++) {
		op_create_id(0, 0);
		op_bind(&s.ids[0], i, 0);
		destroy_fid(&s.ids[0]);
	}
	teardown();
	baseline = rdmamock_fabric_held((int)getpid());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	op_index = 0;
	setup(data[0]);
	for (size_t off = 1; off + 4 <= size && op_index < MAX_OPS; off += 4, op_index++) {
		run_op(data + off);
		/* Events are checked as they come. */
		for (int ch = 0; ch < NCH; ch++)
			read_events(ch, 0);
	}
	op_index = 0;
	teardown();
	return 0;
}
