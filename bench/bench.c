/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bench: what the RDMA CM and verbs calls cost, on whatever librdmacm and
 * libibverbs it is given: the mock's drop-in libraries (make bench) or a
 * real device (make bench-rxe runs it on rdma_rxe in a guest, and on the
 * mock in the same guest). Written against the public API only.
 *   bench [-a ADDR] [-r REPEATS] [-s IDS,...] [-c CONNECTIONS,...] [-o TSV] [-q]
 *
 * Each row runs a batch of operations REPEATS times (5) and reports the
 * cost of one operation in each batch: min, median and max, in
 * microseconds (the bandwidth row in MB/s). The rows with a peer run it as
 * a thread of this process, then as a process of its own (this program
 * again, --serve). The scale rows measure 1,000 operations with N ids, or
 * N connections, already alive. The rows named "floor:" measure no RDMA
 * call: what a system call and a hand-off between threads cost on this
 * machine, under the rest; and, on the mock only, what the libfiu checks
 * and the event descriptors of a connection cycle cost (floor_row). Prints
 * the table and writes it, one row a line, to TSV: row, unit, min, median,
 * max, operations per batch. A call that fails exits 2 naming it; every
 * wait is bounded. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define BUF 4096
#define DEPTH 128  /* send queue; slots of the buffer */
#define RECV_DEPTH 16384 /* a receiver posts every receive first: no RNR */
#define SMALL 4    /* the queues of a connection for no traffic */
#define SIGNAL 32  /* one signalled request per SIGNAL */
#define TIMEOUT_MS 10000
#define SCALE_OPS 1000

static const char *addr = "127.0.0.1";
static int repeats = 5;
static FILE *tsv;

static __attribute__((noreturn)) void die(const char *call)
{
	fprintf(stderr, "bench[%d]: %s: %s\n", (int)getpid(), call, strerror(errno));
	exit(2);
}

static __attribute__((noreturn)) void fail(const char *what)
{
	fprintf(stderr, "bench[%d]: %s\n", (int)getpid(), what);
	exit(2);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static __thread int events_read; /* by expect, so far (--count-cycle counts a cycle's) */

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1) {
		fprintf(stderr, "bench[%d]: no %s within %d ms\n", (int)getpid(), rdma_event_str(want),
			TIMEOUT_MS);
		exit(2);
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != want) {
		fprintf(stderr, "bench[%d]: %s (status %d) where %s was due\n", (int)getpid(),
			rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		exit(2);
	}
	events_read++;
	return ev;
}

static void expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	rdma_ack_cm_event(expect(ch, want));
}

/* ---------------------------------------------------------------- verbs */

/* A side's verbs: a PD, a CQ, and DEPTH 4 KiB slots registered. */
struct side {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* What a connection is for, in its private data: the client's buffer, and
 * the work the server does on it. */
enum work { WORK_NONE, WORK_RECV, WORK_QUIT, WORK_ECHO };
struct request {
	uint64_t addr;
	uint32_t rkey, work, size, count;
} __attribute__((packed));

static void side_open(struct side *s, struct ibv_context *verbs)
{
	if (s->pd)
		return;
	if (!(s->buf = aligned_alloc(4096, (size_t)DEPTH * BUF)))
		die("aligned_alloc");
	memset(s->buf, 0, (size_t)DEPTH * BUF);
	if (!(s->pd = ibv_alloc_pd(verbs)))
		die("ibv_alloc_pd");
	if (!(s->cq = ibv_create_cq(verbs, RECV_DEPTH + 2 * DEPTH, NULL, NULL, 0)))
		die("ibv_create_cq");
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)DEPTH * BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		die("ibv_reg_mr");
}

static void side_close(struct side *s)
{
	if (!s->pd)
		return;
	if (ibv_dereg_mr(s->mr) || ibv_destroy_cq(s->cq) || ibv_dealloc_pd(s->pd))
		die("ibv_dereg_mr/ibv_destroy_cq/ibv_dealloc_pd");
	free(s->buf);
	memset(s, 0, sizeof *s);
}

static void side_qp(struct side *s, struct rdma_cm_id *id, uint32_t send_depth, uint32_t recv_depth)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = send_depth, .max_recv_wr = recv_depth, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	side_open(s, id->verbs);
	if (rdma_create_qp(id, s->pd, &qa))
		die("rdma_create_qp");
}

static void post_recv(struct side *s, struct ibv_qp *qp, unsigned slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(s->buf + (size_t)slot % DEPTH * BUF),
			       .length = BUF, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
}

/* Busy-poll for the next receive's completion: a send's completion
 * (signalled one in SIGNAL) on the way is only counted. */
static void next_recv(struct side *s)
{
	double until = now_us() + TIMEOUT_MS * 1e3;
	struct ibv_wc wc;
	int got;

	for (;;) {
		got = ibv_poll_cq(s->cq, 1, &wc);
		if (got < 0)
			die("ibv_poll_cq");
		if (got && wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "bench[%d]: a completion with %s\n", (int)getpid(),
				ibv_wc_status_str(wc.status));
			exit(2);
		}
		if (got && wc.opcode == IBV_WC_RECV)
			return;
		if (!got && now_us() > until)
			fail("a message did not come within the timeout");
	}
}

/* One SEND of size bytes from the start of the buffer; every SIGNAL-th
 * signalled, which frees the send queue's slots when polled. */
static void send_one(struct side *s, struct ibv_qp *qp, uint32_t size, int nth)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = size, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = nth % SIGNAL == 0 ? IBV_SEND_SIGNALED : 0 }, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send");
}

/* Wait for n completions, each a success. */
static void reap(struct side *s, int n)
{
	struct ibv_wc wc[16];
	double until = now_us() + TIMEOUT_MS * 1e3;

	while (n > 0) {
		int got = ibv_poll_cq(s->cq, n < 16 ? n : 16, wc);

		if (got < 0)
			die("ibv_poll_cq");
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "bench[%d]: a completion with %s\n", (int)getpid(),
					ibv_wc_status_str(wc[i].status));
				exit(2);
			}
		n -= got;
		if (!got && now_us() > until)
			fail("a completion did not come within the timeout");
	}
}

/* count requests of op and size, one signalled per SIGNAL, at most DEPTH
 * outstanding; returns when all have completed. */
static void stream(struct side *s, struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t size,
		   const struct request *to, int count)
{
	int posted = 0, reaped = 0;

	while (reaped < count) {
		while (posted < count && posted - reaped < DEPTH - SIGNAL) {
			bool sig = (posted + 1) % SIGNAL == 0 || posted == count - 1;
			struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = size, .lkey = s->mr->lkey };
			struct ibv_send_wr wr = {
				.sg_list = &sge, .num_sge = 1, .opcode = op,
				.send_flags = sig ? IBV_SEND_SIGNALED : 0,
				.wr.rdma = { .remote_addr = to->addr, .rkey = to->rkey },
			}, *bad;

			if (ibv_post_send(qp, &wr, &bad))
				die("ibv_post_send");
			posted++;
		}
		reap(s, 1);
		reaped = reaped + SIGNAL > count ? count : reaped + SIGNAL;
	}
}

/* ---------------------------------------------------------------- server */

static void say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		die("write (to the client)");
}

/* A connection's request, for its ESTABLISHED: in the id's context. */
static void serve_request(struct side *s, struct rdma_cm_id *id, const struct request *req)
{
	struct request mine = { 0 };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7, .private_data = &mine,
				      .private_data_len = sizeof mine };
	struct request *keep = malloc(sizeof *keep);

	if (!keep)
		die("malloc");
	*keep = *req;
	id->context = keep;
	side_qp(s, id, req->work == WORK_ECHO ? DEPTH : SMALL, req->work == WORK_RECV ? RECV_DEPTH : SMALL);
	if (req->work == WORK_RECV)
		for (unsigned i = 0; i < RECV_DEPTH && i < req->count; i++)
			post_recv(s, id->qp, i);
	if (req->work == WORK_ECHO)
		post_recv(s, id->qp, 0);
	mine.addr = (uintptr_t)s->buf;
	mine.rkey = s->mr->rkey;
	if (rdma_accept(id, &cp))
		die("rdma_accept");
}

/* Serves connections, any number at once, until a WORK_QUIT one: tells its
 * port, then 'E' at each ESTABLISHED and 'D' when a connection's receives
 * are done, through fd. */
static void serve(int fd)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_cm_id *listen_id;
	struct side s = { 0 };
	uint16_t port;
	bool quit = false;

	if (!ch)
		die("rdma_create_event_channel");
	if (rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&sin) || rdma_listen(listen_id, 1024))
		die("rdma_bind_addr/rdma_listen");
	port = rdma_get_src_port(listen_id);
	if (write(fd, &port, sizeof port) != sizeof port)
		die("write");
	while (!quit) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		struct rdma_cm_id *id;
		struct request *req;

		/* The client is quiet at most for a row of its own; a minute
		 * without an event, it is gone. */
		if (poll(&pfd, 1, 60000) != 1)
			fail("the server heard nothing from the client for 60 s");
		if (rdma_get_cm_event(ch, &ev))
			die("rdma_get_cm_event");
		id = ev->id;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			req = (struct request *)ev->param.conn.private_data;
			if (req->work == WORK_QUIT) {
				rdma_ack_cm_event(ev);
				ev = NULL;
				rdma_reject(id, NULL, 0);
				rdma_destroy_id(id);
				quit = true;
			} else {
				serve_request(&s, id, req);
			}
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			say(fd, 'E');
			req = id->context;
			/* A ping-pong: each message back as it comes, polling. */
			if (req->work == WORK_ECHO) {
				for (unsigned got = 0; got < req->count; got++) {
					next_recv(&s);
					post_recv(&s, id->qp, 0);
					send_one(&s, id->qp, req->size, (int)got + 1);
				}
				say(fd, 'D');
			}
			if (req->work == WORK_RECV) {
				for (unsigned got = 0; got < req->count; got++) {
					reap(&s, 1);
					if (got + RECV_DEPTH < req->count)
						post_recv(&s, id->qp, got + RECV_DEPTH);
				}
				say(fd, 'D');
			}
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			rdma_ack_cm_event(ev);
			ev = NULL;
			free(id->context);
			rdma_destroy_qp(id);
			if (rdma_destroy_id(id))
				die("rdma_destroy_id");
			break;
		default:
			fprintf(stderr, "bench[%d]: the server read %s (status %d)\n", (int)getpid(),
				rdma_event_str(ev->event), ev->status);
			exit(2);
		}
		if (ev)
			rdma_ack_cm_event(ev);
	}
	side_close(&s);
	rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ch);
}

static void *serve_thread(void *p)
{
	serve(*(int *)p);
	return NULL;
}

/* ---------------------------------------------------------------- the table */

struct row {
	char name[72];
	const char *unit;
	double v[16];
	int n, ops;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void row_print(struct row *r)
{
	qsort(r->v, (size_t)r->n, sizeof r->v[0], cmp_double);
	printf("%-50s %-5s %10.2f %10.2f %10.2f %8d\n", r->name, r->unit, r->v[0], r->v[r->n / 2],
	       r->v[r->n - 1], r->ops);
	fprintf(tsv, "%s\t%s\t%.3f\t%.3f\t%.3f\t%d\n", r->name, r->unit, r->v[0], r->v[r->n / 2],
		r->v[r->n - 1], r->ops);
	fflush(stdout);
}

static void row_start(struct row *r, const char *unit, int ops, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void row_start(struct row *r, const char *unit, int ops, const char *fmt, ...)
{
	va_list ap;

	memset(r, 0, sizeof *r);
	va_start(ap, fmt);
	vsnprintf(r->name, sizeof r->name, fmt, ap);
	va_end(ap);
	r->unit = unit;
	r->ops = ops;
}

/* ---------------------------------------------------------------- the client */

struct client {
	struct rdma_event_channel *ch;
	struct sockaddr_in dst;
	int fd; /* the server's pipe */
	struct side s;
};

static void wait_byte(struct client *c, char want)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	char got;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1 || read(c->fd, &got, 1) != 1 || got != want)
		fail("the server did not answer within the timeout");
}

static struct rdma_cm_id *resolved(struct client *c)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(c->ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&c->dst, TIMEOUT_MS))
		die("rdma_resolve_addr");
	expect_ack(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, TIMEOUT_MS))
		die("rdma_resolve_route");
	expect_ack(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	return id;
}

/* Connect a resolved id, asking for work; the server's buffer in *srv. */
static void connect_id(struct client *c, struct rdma_cm_id *id, enum work work, uint32_t count,
		       struct request *srv)
{
	struct request req = { .work = work, .count = count, .size = 64 };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7, .retry_count = 7,
				      .private_data = &req, .private_data_len = sizeof req };
	struct rdma_cm_event *ev;

	side_qp(&c->s, id, work == WORK_NONE && !count ? SMALL : DEPTH, SMALL);
	if (work == WORK_ECHO)
		post_recv(&c->s, id->qp, 0);
	if (rdma_connect(id, &cp))
		die("rdma_connect");
	ev = expect(c->ch, RDMA_CM_EVENT_ESTABLISHED);
	*srv = *(const struct request *)ev->param.conn.private_data;
	rdma_ack_cm_event(ev);
	wait_byte(c, 'E');
}

static void teardown(struct client *c, struct rdma_cm_id *id)
{
	if (rdma_disconnect(id))
		die("rdma_disconnect");
	expect_ack(c->ch, RDMA_CM_EVENT_DISCONNECTED);
	rdma_destroy_qp(id);
	if (rdma_destroy_id(id))
		die("rdma_destroy_id");
}

/* The rows with a peer, `where` naming it. */
static void peer_rows(struct client *c, const char *where)
{
	static const struct { const char *name; enum ibv_wr_opcode op; uint32_t size; } rates[] = {
		{ "SEND 64 B", IBV_WR_SEND, 64 },
		{ "SEND 4 KiB", IBV_WR_SEND, 4096 },
		{ "RDMA WRITE 64 B", IBV_WR_RDMA_WRITE, 64 },
		{ "RDMA WRITE 4 KiB", IBV_WR_RDMA_WRITE, 4096 },
	};
	const int conns = 20, msgs = 16000; /* at most RECV_DEPTH */
	struct request srv;
	struct row conn, down;

	row_start(&conn, "us", conns, "connect, accept, ESTABLISHED (%s)", where);
	row_start(&down, "us", conns, "disconnect and destroy (%s)", where);
	for (int r = 0; r < repeats; r++) {
		double tc = 0, td = 0;

		for (int i = 0; i < conns; i++) {
			struct rdma_cm_id *id = resolved(c);
			double t = now_us();

			connect_id(c, id, WORK_NONE, 0, &srv);
			tc += now_us() - t;
			t = now_us();
			teardown(c, id);
			td += now_us() - t;
		}
		conn.v[conn.n++] = tc / conns;
		down.v[down.n++] = td / conns;
	}
	row_print(&conn);
	row_print(&down);
	for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
		struct row rate;
		bool send = rates[k].op == IBV_WR_SEND;

		row_start(&rate, "us", msgs, "%s, post and poll, per message (%s)", rates[k].name, where);
		for (int r = 0; r < repeats; r++) {
			struct rdma_cm_id *id = resolved(c);
			double t;

			connect_id(c, id, send ? WORK_RECV : WORK_NONE, (uint32_t)msgs, &srv);
			t = now_us();
			stream(&c->s, id->qp, rates[k].op, rates[k].size, &srv, msgs);
			if (send)
				wait_byte(c, 'D');
			rate.v[rate.n++] = (now_us() - t) / msgs;
			teardown(c, id);
		}
		row_print(&rate);
	}
	{
		/* What a program that polls waits for a message there and back:
		 * against the floor of two processes that poll shared memory. */
		const int trips = 20000;
		struct row rt;

		row_start(&rt, "us", trips, "RC SEND 64 B round trip, both polling (%s)", where);
		for (int r = 0; r < repeats; r++) {
			struct rdma_cm_id *id = resolved(c);
			double t;

			connect_id(c, id, WORK_ECHO, (uint32_t)trips, &srv);
			t = now_us();
			for (int i = 0; i < trips; i++) {
				send_one(&c->s, id->qp, 64, i + 1);
				next_recv(&c->s);
				post_recv(&c->s, id->qp, 0);
			}
			rt.v[rt.n++] = (now_us() - t) / trips;
			wait_byte(c, 'D');
			teardown(c, id);
		}
		row_print(&rt);
	}
	{
		struct row bw;

		row_start(&bw, "MB/s", msgs, "RDMA WRITE 4 KiB bandwidth (%s)", where);
		for (int r = 0; r < repeats; r++) {
			struct rdma_cm_id *id = resolved(c);
			double t;

			connect_id(c, id, WORK_NONE, (uint32_t)msgs, &srv);
			t = now_us();
			stream(&c->s, id->qp, IBV_WR_RDMA_WRITE, BUF, &srv, msgs);
			bw.v[bw.n++] = (double)msgs * BUF / (now_us() - t); /* bytes per us = MB/s */
			teardown(c, id);
		}
		row_print(&bw);
	}
}

/* N connections alive, then SCALE_OPS / 10 more, each connected and torn
 * down. */
static void connection_scale(struct client *c, int n)
{
	struct rdma_cm_id **ids = calloc((size_t)n, sizeof *ids);
	const int ops = SCALE_OPS / 10;
	struct request srv;
	struct row r;

	if (!ids)
		die("calloc");
	for (int i = 0; i < n; i++) {
		ids[i] = resolved(c);
		connect_id(c, ids[i], WORK_NONE, 0, &srv);
	}
	row_start(&r, "us", ops, "connection cycle with %d connections alive", n);
	for (int k = 0; k < repeats; k++) {
		double t = now_us();

		for (int i = 0; i < ops; i++) {
			struct rdma_cm_id *id = resolved(c);

			connect_id(c, id, WORK_NONE, 0, &srv);
			teardown(c, id);
		}
		r.v[r.n++] = (now_us() - t) / ops;
	}
	row_print(&r);
	for (int i = 0; i < n; i++)
		teardown(c, ids[i]);
	free(ids);
}

static void client_open(struct client *c, int fd)
{
	memset(c, 0, sizeof *c);
	c->fd = fd;
	if (!(c->ch = rdma_create_event_channel()))
		die("rdma_create_event_channel");
	c->dst.sin_family = AF_INET;
	inet_pton(AF_INET, addr, &c->dst.sin_addr);
	if (read(fd, &c->dst.sin_port, sizeof c->dst.sin_port) != sizeof c->dst.sin_port)
		fail("the server did not say its port");
}

static void client_quit(struct client *c)
{
	struct rdma_cm_id *id = resolved(c);
	struct request req = { .work = WORK_QUIT };
	struct rdma_conn_param cp = { .private_data = &req, .private_data_len = sizeof req };

	if (rdma_connect(id, &cp))
		die("rdma_connect");
	expect_ack(c->ch, RDMA_CM_EVENT_REJECTED);
	rdma_destroy_id(id);
	side_close(&c->s);
	rdma_destroy_event_channel(c->ch);
}

/* ---------------------------------------------------------------- local rows */

/* The floor under every row with a peer: one byte there and back between
 * two threads through pipes, the least a hand-off costs here. */
static void *echo(void *arg)
{
	int *fd = arg;
	char c;

	while (read(fd[0], &c, 1) == 1 && c)
		if (write(fd[1], &c, 1) != 1)
			break;
	return NULL;
}

static void handoff_row(void)
{
	int to[2], from[2], fds[2];
	const int ops = SCALE_OPS;
	struct row r;
	pthread_t t;
	char c = 1;

	if (pipe(to) || pipe(from))
		die("pipe");
	fds[0] = to[0];
	fds[1] = from[1];
	if ((errno = pthread_create(&t, NULL, echo, fds)))
		die("pthread_create");
	row_start(&r, "us", ops, "floor: a byte to another thread and back (pipes)");
	for (int k = 0; k < repeats; k++) {
		double t0 = now_us();

		for (int i = 0; i < ops; i++)
			if (write(to[1], &c, 1) != 1 || read(from[0], &c, 1) != 1)
				die("write/read (a pipe)");
		r.v[r.n++] = (now_us() - t0) / ops;
	}
	c = 0;
	if (write(to[1], &c, 1) != 1)
		die("write");
	pthread_join(t, NULL);
	close(to[0]);
	close(to[1]);
	close(from[0]);
	close(from[1]);
	row_print(&r);
}

/* The floor under a round trip between two processes that poll: a cache
 * line of shared memory there and back, each side spinning on it. */
static void shared_line_row(void)
{
	const int ops = SCALE_OPS * 100;
	volatile uint64_t *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct row r;
	pid_t pid;
	int status;

	if (line == MAP_FAILED)
		die("mmap");
	line[0] = 0;
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* The echo: each odd value back as the next even one. */
		for (uint64_t want = 1;; want += 2) {
			uint64_t v;

			while ((v = __atomic_load_n(&line[0], __ATOMIC_ACQUIRE)) != want && v != UINT64_MAX)
				;
			if (v == UINT64_MAX)
				_exit(0);
			__atomic_store_n(&line[0], want + 1, __ATOMIC_RELEASE);
		}
	}
	row_start(&r, "us", ops, "floor: a cache line to another process and back");
	for (uint64_t v = 0, k = 0; k < (uint64_t)repeats; k++) {
		double t0 = now_us();

		for (int i = 0; i < ops; i++) {
			__atomic_store_n(&line[0], ++v, __ATOMIC_RELEASE);
			while (__atomic_load_n(&line[0], __ATOMIC_ACQUIRE) != v + 1)
				;
			v++;
		}
		r.v[r.n++] = (now_us() - t0) / ops;
	}
	__atomic_store_n(&line[0], UINT64_MAX, __ATOMIC_RELEASE);
	waitpid(pid, &status, 0);
	munmap((void *)line, 4096);
	row_print(&r);
}

/* The floor under every call that enters the kernel: one system call that
 * does nothing (getppid, which the C library does not cache). */
static void syscall_row(void)
{
	const int ops = SCALE_OPS * 10;
	struct row r;

	row_start(&r, "us", ops, "floor: a system call (getppid)");
	for (int k = 0; k < repeats; k++) {
		double t0 = now_us();

		for (int i = 0; i < ops; i++)
			syscall(SYS_getppid);
		r.v[r.n++] = (now_us() - t0) / ops;
	}
	row_print(&r);
}

/* The whole connection cycle driven by one thread, as a program with one
 * event loop does it: the listener and the client on channels of their
 * own, each event read as it is due. No thread hands work to another, so
 * the row is what the CM itself costs. */
struct cycle {
	struct rdma_event_channel *cc, *sc;
	struct rdma_conn_param cp;
	struct side cs, ss;
	struct rdma_cm_id *listen_id;
	const struct sockaddr_in *at;
};

static void cycle_open(struct cycle *c, const struct sockaddr_in *at)
{
	*c = (struct cycle){ .cc = rdma_create_event_channel(), .sc = rdma_create_event_channel(),
			     .cp = { .responder_resources = 1, .initiator_depth = 1, .rnr_retry_count = 7,
				     .retry_count = 7 },
			     .at = at };
	if (!c->cc || !c->sc)
		die("rdma_create_event_channel");
	if (rdma_create_id(c->sc, &c->listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->listen_id, (struct sockaddr *)at) || rdma_listen(c->listen_id, 16))
		die("rdma_create_id/rdma_bind_addr/rdma_listen (one thread)");
}

static void cycle_once(struct cycle *c)
{
	struct rdma_cm_id *id, *conn;
	struct rdma_cm_event *ev;

	if (rdma_create_id(c->cc, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)c->at, TIMEOUT_MS))
		die("rdma_create_id/rdma_resolve_addr (one thread)");
	expect_ack(c->cc, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, TIMEOUT_MS))
		die("rdma_resolve_route (one thread)");
	expect_ack(c->cc, RDMA_CM_EVENT_ROUTE_RESOLVED);
	side_qp(&c->cs, id, SMALL, SMALL);
	if (rdma_connect(id, &c->cp))
		die("rdma_connect (one thread)");
	ev = expect(c->sc, RDMA_CM_EVENT_CONNECT_REQUEST);
	conn = ev->id;
	rdma_ack_cm_event(ev);
	side_qp(&c->ss, conn, SMALL, SMALL);
	if (rdma_accept(conn, &c->cp))
		die("rdma_accept (one thread)");
	expect_ack(c->cc, RDMA_CM_EVENT_ESTABLISHED);
	expect_ack(c->sc, RDMA_CM_EVENT_ESTABLISHED);
	if (rdma_disconnect(id))
		die("rdma_disconnect (one thread)");
	expect_ack(c->sc, RDMA_CM_EVENT_DISCONNECTED);
	rdma_destroy_qp(conn);
	if (rdma_destroy_id(conn))
		die("rdma_destroy_id (one thread, passive)");
	expect_ack(c->cc, RDMA_CM_EVENT_DISCONNECTED);
	rdma_destroy_qp(id);
	if (rdma_destroy_id(id))
		die("rdma_destroy_id (one thread)");
}

static void cycle_close(struct cycle *c)
{
	side_close(&c->cs);
	side_close(&c->ss);
	rdma_destroy_id(c->listen_id);
	rdma_destroy_event_channel(c->cc);
	rdma_destroy_event_channel(c->sc);
}

static void one_thread_cycle(const struct sockaddr_in *at)
{
	const int ops = SCALE_OPS / 10;
	struct cycle c;
	struct row r;

	cycle_open(&c, at);
	row_start(&r, "us", ops, "connection cycle, one thread");
	for (int k = 0; k < repeats; k++) {
		double t = now_us();

		for (int i = 0; i < ops; i++)
			cycle_once(&c);
		r.v[r.n++] = (now_us() - t) / ops;
	}
	row_print(&r);
	cycle_close(&c);
}

/* ---------------------------------------------------------------- the mock's floor */

/* On the mock only (its control API found at run time, so that the
 * binary runs on rdma-core unchanged): the least a connection cycle can
 * cost a mock that checks a libfiu point at each call it makes (each
 * entry point of the drop-in libraries, and the calls librdmacm makes of
 * them inside) and hands out a file descriptor for each event it reports.
 * --count-cycle, in a process of its own on a fabric that counts the
 * points reached (RDMAMOCK_COUNT=1), runs cycles and prints, a line each,
 * how many times a cycle checks each point, and how many events a cycle
 * reads; the row makes those checks through libfiu and that many events
 * readable, polled and read on an eventfd, the cheapest descriptor there
 * is. */
#define COUNT_CYCLES 20
#define FLOOR_POINTS 64

static void count_cycle(const struct sockaddr_in *at)
{
	const char *(*point)(int) = (const char *(*)(int))dlsym(RTLD_DEFAULT, "rdmamock_point");
	long (*reached)(const char *) = (long (*)(const char *))dlsym(RTLD_DEFAULT, "rdmamock_point_reached");
	static long before[1024];
	struct cycle c;
	int n, events;

	if (!point || !reached)
		fail("--count-cycle: not on the mock (no rdmamock_point_reached)");
	cycle_open(&c, at);
	cycle_once(&c);
	events = events_read;
	for (n = 0; n < 1024 && point(n); n++)
		before[n] = reached(point(n));
	for (int i = 0; i < COUNT_CYCLES; i++)
		cycle_once(&c);
	cycle_close(&c);
	printf("events\t%d\n", (events_read - events) / COUNT_CYCLES);
	/* An entry point is named for its call (rdmamock/rdmacm/rdma_accept),
	 * and checks libfiu; the points of the mock's own table that target
	 * a message or a packet (rdmamock/rdmacm/event/delay) do not. */
	for (int i = 0; i < n; i++) {
		long per = (reached(point(i)) - before[i] + COUNT_CYCLES / 2) / COUNT_CYCLES;
		const char *call = strrchr(point(i), '/');

		if (per > 0 && call && dlsym(RTLD_DEFAULT, call + 1))
			printf("%s\t%ld\n", point(i), per);
	}
	fflush(stdout);
}

static void floor_row(const char *self, const struct sockaddr_in *at)
{
	int (*fiu)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "fiu_fail");
	static char name[FLOOR_POINTS][160];
	int times[FLOOR_POINTS], n = 0, checks = 0, events = 0, efd, status;
	const int ops = SCALE_OPS / 10;
	char port[16], line[160];
	struct pollfd pfd;
	struct row r;
	FILE *in;
	int p[2];
	pid_t pid;

	if (!dlsym(RTLD_DEFAULT, "rdmamock_point_reached"))
		return; /* not the mock */
	if (!fiu)
		fail("the mock without libfiu's fiu_fail");
	if (pipe(p))
		die("pipe");
	snprintf(port, sizeof port, "%u", ntohs(at->sin_port));
	if ((pid = fork()) < 0)
		die("fork");
	if (!pid) {
		char fabric[64];

		snprintf(fabric, sizeof fabric, "bench-count-%d", (int)getpid());
		dup2(p[1], 1);
		close(p[0]);
		setenv("RDMAMOCK_COUNT", "1", 1);
		setenv("RDMAMOCK_FABRIC", fabric, 1);
		execl(self, self, "-a", addr, "--count-cycle", port, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (!(in = fdopen(p[0], "r")))
		die("fdopen");
	while (fgets(line, sizeof line, in)) {
		char *tab = strchr(line, '\t');

		if (!tab)
			continue;
		*tab = '\0';
		if (!strcmp(line, "events"))
			events = atoi(tab + 1);
		else if (n < FLOOR_POINTS) {
			snprintf(name[n], sizeof name[n], "%s", line);
			checks += times[n] = atoi(tab + 1);
			n++;
		}
	}
	fclose(in);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) || !n || !events)
		fail("--count-cycle failed, or counted nothing");
	if ((efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		die("eventfd");
	pfd = (struct pollfd){ .fd = efd, .events = POLLIN };
	row_start(&r, "us", ops, "floor: a cycle's %d libfiu checks and %d event fds (mock)", checks, events);
	for (int k = 0; k < repeats; k++) {
		double t = now_us();

		for (int i = 0; i < ops; i++) {
			uint64_t v = 1;

			/* The points in turn, as a cycle mixes them. */
			for (int round = 0, left = checks; left; round++)
				for (int j = 0; j < n; j++)
					if (round < times[j]) {
						fiu(name[j]);
						left--;
					}
			for (int e = 0; e < events; e++)
				if (write(efd, &v, sizeof v) != sizeof v || poll(&pfd, 1, 0) != 1 ||
				    read(efd, &v, sizeof v) != sizeof v)
					die("eventfd write/poll/read");
		}
		r.v[r.n++] = (now_us() - t) / ops;
	}
	close(efd);
	row_print(&r);
}

static void local_rows(const char *self, const int *scale, int nscale)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	struct rdma_cm_id **ids;
	const int ops = SCALE_OPS;
	struct row create, destroy, resolve, qp;
	int most = 0;

	if (!ch)
		die("rdma_create_event_channel");
	inet_pton(AF_INET, addr, &src.sin_addr);
	dst = src;
	dst.sin_port = htons(7471);
	for (int i = 0; i < nscale; i++)
		most = scale[i] > most ? scale[i] : most;
	if (!(ids = calloc((size_t)(most + ops), sizeof *ids)))
		die("calloc");

	row_start(&create, "us", ops, "create id");
	row_start(&destroy, "us", ops, "destroy id");
	for (int r = 0; r < repeats; r++) {
		double t = now_us();

		for (int i = 0; i < ops; i++)
			if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP))
				die("rdma_create_id");
		create.v[create.n++] = (now_us() - t) / ops;
		t = now_us();
		for (int i = 0; i < ops; i++)
			if (rdma_destroy_id(ids[i]))
				die("rdma_destroy_id");
		destroy.v[destroy.n++] = (now_us() - t) / ops;
	}
	row_print(&create);
	row_print(&destroy);

	row_start(&resolve, "us", ops / 10, "resolve address and route");
	for (int r = 0; r < repeats; r++) {
		double t = 0;

		for (int i = 0; i < ops / 10; i++) {
			double t0;

			if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP))
				die("rdma_create_id");
			t0 = now_us();
			if (rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)&dst, TIMEOUT_MS))
				die("rdma_resolve_addr");
			expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
			if (rdma_resolve_route(ids[i], TIMEOUT_MS))
				die("rdma_resolve_route");
			expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
			t += now_us() - t0;
		}
		resolve.v[resolve.n++] = t / (ops / 10);
		if (r == repeats - 1)
			break; /* keep the last ten for the QP row */
		for (int i = 0; i < ops / 10; i++)
			rdma_destroy_id(ids[i]);
	}
	row_print(&resolve);

	row_start(&qp, "us", ops / 10, "QP create and modify to RTS");
	{
		struct ibv_pd *pd = ibv_alloc_pd(ids[0]->verbs);
		struct ibv_cq *cq = pd ? ibv_create_cq(ids[0]->verbs, 16, NULL, NULL, 0) : NULL;
		struct ibv_port_attr pattr;
		union ibv_gid gid;
		int gidx = 0;

		if (!cq)
			die("ibv_alloc_pd/ibv_create_cq");
		if (ibv_query_port(ids[0]->verbs, 1, &pattr))
			die("ibv_query_port");
		/* The GID of the address the id resolved to: its index. */
		for (int i = 0; i < pattr.gid_tbl_len && i < 64; i++)
			if (!ibv_query_gid(ids[0]->verbs, 1, i, &gid) &&
			    !memcmp(gid.raw + 12, &src.sin_addr, 4)) {
				gidx = i;
				break;
			}
		for (int r = 0; r < repeats; r++) {
			double t = now_us();

			for (int i = 0; i < ops / 10; i++) {
				struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
							       .cap = { 16, 16, 1, 1, 0 } };
				struct ibv_qp *q = ibv_create_qp(pd, &ia);
				struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
							 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

				if (!q || ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							     IBV_QP_ACCESS_FLAGS))
					die("ibv_create_qp/ibv_modify_qp INIT");
				a = (struct ibv_qp_attr){
					.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = q->qp_num,
					.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
					.ah_attr = { .is_global = 1, .port_num = 1,
						     .grh = { .sgid_index = (uint8_t)gidx, .hop_limit = 64 } },
				};
				ibv_query_gid(ids[0]->verbs, 1, gidx, &a.ah_attr.grh.dgid);
				if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
							     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
							     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
					die("ibv_modify_qp RTR");
				a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
							  .rnr_retry = 7, .max_rd_atomic = 1 };
				if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
							     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
							     IBV_QP_MAX_QP_RD_ATOMIC))
					die("ibv_modify_qp RTS");
				if (ibv_destroy_qp(q))
					die("ibv_destroy_qp");
			}
			qp.v[qp.n++] = (now_us() - t) / (ops / 10);
		}
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
	}
	row_print(&qp);
	for (int i = 0; i < ops / 10; i++)
		rdma_destroy_id(ids[i]);
	dst.sin_port = htons(7472);
	one_thread_cycle(&dst);
	floor_row(self, &dst);

	/* Scale: N ids alive, each bound to an ephemeral port of ADDR. */
	for (int k = 0; k < nscale; k++) {
		struct row bind, gone;
		int n = scale[k];

		for (int i = 0; i < n; i++)
			if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP) ||
			    rdma_bind_addr(ids[i], (struct sockaddr *)&src))
				die("rdma_create_id/rdma_bind_addr (the ids alive)");
		row_start(&bind, "us", ops, "create id, bind an ephemeral port, %d alive", n);
		row_start(&gone, "us", ops, "destroy id, %d alive", n);
		for (int r = 0; r < repeats; r++) {
			double t = now_us();

			for (int i = n; i < n + ops; i++)
				if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP) ||
				    rdma_bind_addr(ids[i], (struct sockaddr *)&src))
					die("rdma_create_id/rdma_bind_addr");
			bind.v[bind.n++] = (now_us() - t) / ops;
			t = now_us();
			for (int i = n; i < n + ops; i++)
				if (rdma_destroy_id(ids[i]))
					die("rdma_destroy_id");
			gone.v[gone.n++] = (now_us() - t) / ops;
		}
		row_print(&bind);
		row_print(&gone);
		for (int i = 0; i < n; i++)
			rdma_destroy_id(ids[i]);
	}
	free(ids);
	rdma_destroy_event_channel(ch);
}

/* ---------------------------------------------------------------- main */

static int parse_list(const char *s, int *out, int max)
{
	int n = 0;

	while (s && *s && n < max) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v > 1000000)
			return -1;
		if (v)
			out[n++] = (int)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return n;
}

static void with_peer(const char *self, bool process, const int *conns, int nconns)
{
	struct client c;
	pthread_t t;
	pid_t pid = 0;
	int p[2], status;

	if (pipe(p))
		die("pipe");
	if (process) {
		if ((pid = fork()) < 0)
			die("fork");
		if (pid == 0) {
			char fd[16];

			close(p[0]);
			snprintf(fd, sizeof fd, "%d", p[1]);
			execl(self, self, "-a", addr, "--serve", fd, (char *)NULL);
			die("execl");
		}
	} else if ((errno = pthread_create(&t, NULL, serve_thread, &p[1]))) {
		die("pthread_create");
	}
	client_open(&c, p[0]);
	peer_rows(&c, process ? "processes" : "threads");
	if (!process)
		for (int i = 0; i < nconns; i++)
			connection_scale(&c, conns[i]);
	client_quit(&c);
	if (process) {
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			fail("the server process failed");
	} else {
		pthread_join(t, NULL);
	}
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	int scale[8] = { 1000, 10000, 25000 }, nscale = 3, conns[8] = { 1000, 10000 }, nconns = 2;
	const char *out = "bench.tsv";
	double load[3];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a") && i + 1 < argc) {
			addr = argv[++i];
		} else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			repeats = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			nscale = parse_list(argv[++i], scale, 8);
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			nconns = parse_list(argv[++i], conns, 8);
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--serve") && i + 1 < argc) {
			serve(atoi(argv[i + 1]));
			return 0;
		} else if (!strcmp(argv[i], "--count-cycle") && i + 1 < argc) {
			struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[i + 1])) };

			if (inet_pton(AF_INET, addr, &at.sin_addr) != 1)
				fail("-a: not an IPv4 address");
			count_cycle(&at);
			return 0;
		} else {
			fprintf(stderr, "usage: %s [-a ADDR] [-r REPEATS] [-s IDS,...] [-c CONNECTIONS,...] "
				"[-o TSV]\n", argv[0]);
			return 2;
		}
	}
	if (repeats < 1 || repeats > 16 || nscale < 0 || nconns < 0) {
		fprintf(stderr, "bench: -r takes 1 to 16; -s and -c lists of counts, such as 1000,10000\n");
		return 2;
	}
	if (!(tsv = fopen(out, "w")))
		die(out);
	fprintf(tsv, "# row\tunit\tmin\tmedian\tmax\tops\n");
	if (getloadavg(load, 3) != 3)
		load[0] = -1;
	printf("bench: %s, %d batches a row, %ld CPUs, load average %.2f; the cost of one operation\n",
	       addr, repeats, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
	printf("%-50s %-5s %10s %10s %10s %8s\n", "", "unit", "min", "median", "max", "ops");
	syscall_row();
	handoff_row();
	shared_line_row();
	local_rows(argv[0], scale, nscale);
	with_peer(argv[0], false, conns, nconns);
	with_peer(argv[0], true, conns, 0);
	if (fclose(tsv))
		die(out);
	printf("bench: the table is in %s\n", out);
	return 0;
}
