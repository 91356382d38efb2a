/* fabric: what a connection and a 4 KiB RDMA WRITE cost between two
 * processes, beside the same work between two threads of one process.
 *
 * Built against the system's rdma-core only (-lrdmacm -libverbs), so it
 * measures whatever librdmacm it is given: the mock's drop-in libraries
 * (make bench) or a real device.
 *   fabric [-a ADDR] [-n CONNECTIONS] [-w WRITES]
 *
 * A connection is timed from rdma_create_id to ESTABLISHED on both sides
 * (address and route resolution, QPs created, connect, accept); the server
 * says ESTABLISHED through a pipe, in both modes. A write is timed from
 * ibv_post_send to its completion polled; the stream posts 64 writes per
 * signalled one; the ping-pong is ib_write_lat's: each side writes 4 KiB
 * into the other's buffer when the last one arrived, half a round trip
 * reported. The server is a thread of this process, then this program run
 * again (a process of its own). Prints medians (the stream: a mean) and
 * exits 0; a failed call exits 2 with its name. Busy-polling figures need
 * idle CPUs: the load average is printed beside them. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define BUF 4096
#define BATCH 64
#define TIMEOUT_MS 5000

struct peer_mem {
	uint64_t addr;
	uint32_t rkey;
	uint32_t count; /* ping-pong rounds (client to server) */
} __attribute__((packed));

static const char *addr = "127.0.0.1";

static void die(const char *call)
{
	fprintf(stderr, "fabric[%d]: %s: %s\n", (int)getpid(), call, strerror(errno));
	exit(2);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The next CM event of the channel, which must be of type want; a bound on
 * the wait, so that a lost event is a failure and not a hang. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1) {
		fprintf(stderr, "fabric[%d]: no %s within %d ms\n", (int)getpid(),
			rdma_event_str(want), TIMEOUT_MS);
		exit(2);
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != want) {
		fprintf(stderr, "fabric[%d]: %s (status %d) where %s was due\n", (int)getpid(),
			rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		exit(2);
	}
	return ev;
}

/* One side's verbs: a PD, a CQ, and a registered buffer of two halves:
 * the 4 KiB it sends from, the 4 KiB its peer writes into. */
struct side {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	volatile uint8_t *buf;
};

static void side_open(struct side *s, struct ibv_context *verbs)
{
	if (s->pd)
		return;
	s->buf = aligned_alloc(64, 2 * BUF);
	if (!s->buf)
		die("aligned_alloc");
	memset((void *)s->buf, 0, 2 * BUF);
	if (!(s->pd = ibv_alloc_pd(verbs)))
		die("ibv_alloc_pd");
	if (!(s->cq = ibv_create_cq(verbs, 2 * BATCH, NULL, NULL, 0)))
		die("ibv_create_cq");
	s->mr = ibv_reg_mr(s->pd, (void *)s->buf, 2 * BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		die("ibv_reg_mr");
}

static void side_qp(struct side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * BATCH, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	side_open(s, id->verbs);
	if (rdma_create_qp(id, s->pd, &qa))
		die("rdma_create_qp");
}

static struct peer_mem side_mem(const struct side *s, uint32_t count)
{
	return (struct peer_mem){ .addr = (uintptr_t)(s->buf + BUF), .rkey = s->mr->rkey, .count = count };
}

static void side_close(struct side *s)
{
	if (!s->pd)
		return;
	if (ibv_dereg_mr(s->mr) || ibv_destroy_cq(s->cq) || ibv_dealloc_pd(s->pd))
		die("ibv_dereg_mr/ibv_destroy_cq/ibv_dealloc_pd");
	free((void *)s->buf);
}

/* Post one 4 KiB RDMA WRITE of the side's buffer into the peer's. */
static void write_to(struct side *s, struct ibv_qp *qp, const struct peer_mem *to, int signaled)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = BUF, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = to->addr, .rkey = to->rkey },
	}, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send");
}

static void reap(struct side *s)
{
	struct ibv_wc wc;
	int n;
	double until = now_us() + TIMEOUT_MS * 1e3;

	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		if (now_us() > until) {
			fprintf(stderr, "fabric[%d]: no completion within %d ms\n", (int)getpid(), TIMEOUT_MS);
			exit(2);
		}
	if (n < 0)
		die("ibv_poll_cq");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "fabric[%d]: RDMA WRITE completed with %s\n", (int)getpid(),
			ibv_wc_status_str(wc.status));
		exit(2);
	}
}

/* The last 8 bytes of a half carry the ping-pong's round: what the side
 * sends, what it received. */
static volatile uint64_t *round_out(struct side *s)
{
	return (volatile uint64_t *)(s->buf + BUF - sizeof(uint64_t));
}

static volatile uint64_t *round_in(struct side *s)
{
	return (volatile uint64_t *)(s->buf + 2 * BUF - sizeof(uint64_t));
}

static void await_round(struct side *s, uint64_t r)
{
	double until = now_us() + TIMEOUT_MS * 1e3;

	while (*round_in(s) != r)
		if (now_us() > until) {
			fprintf(stderr, "fabric[%d]: round %llu never arrived (at %llu)\n", (int)getpid(),
				(unsigned long long)r, (unsigned long long)*round_in(s));
			exit(2);
		}
}

/* ------------------------------------------------------------- server */

/* Serves connections until the listener's channel says nothing more comes:
 * tells its port, then one byte per ESTABLISHED, through fd. The last
 * connection's client asks for count ping-pong rounds in its private data. */
static void serve(int fd, int conns)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_cm_id *listen_id;
	struct side s = { 0 };
	uint16_t port;

	if (!ch)
		die("rdma_create_event_channel");
	if (rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&sin) || rdma_listen(listen_id, 16))
		die("rdma_bind_addr/rdma_listen");
	port = rdma_get_src_port(listen_id);
	if (write(fd, &port, sizeof(port)) != sizeof(port))
		die("write");
	for (int i = 0; i < conns; i++) {
		struct rdma_cm_event *ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
		struct rdma_cm_id *id = ev->id;
		struct peer_mem client = *(const struct peer_mem *)ev->param.conn.private_data, mine;
		struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };

		rdma_ack_cm_event(ev);
		side_qp(&s, id);
		mine = side_mem(&s, 0);
		cp.private_data = &mine;
		cp.private_data_len = sizeof(mine);
		if (rdma_accept(id, &cp))
			die("rdma_accept");
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
		if (write(fd, "E", 1) != 1)
			die("write");
		for (uint64_t r = 1; r <= client.count; r++) {
			await_round(&s, r);
			*round_out(&s) = r;
			write_to(&s, id->qp, &client, 1);
			reap(&s);
		}
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
		rdma_destroy_qp(id);
		if (rdma_destroy_id(id))
			die("rdma_destroy_id");
	}
	side_close(&s);
	if (rdma_destroy_id(listen_id))
		die("rdma_destroy_id");
	rdma_destroy_event_channel(ch);
}

struct serve_args {
	int fd, conns;
};

static void *serve_thread(void *p)
{
	struct serve_args *a = p;

	serve(a->fd, a->conns);
	return NULL;
}

/* ------------------------------------------------------------- client */

struct figures {
	double connect_us, teardown_us; /* median per connection */
	double write_us, write_p99_us;  /* one write, post to completion */
	double stream_us;               /* per write, BATCH per signal */
	double pingpong_us;             /* half a round trip */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(double *v, int n, int p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(n - 1) * p / 100];
}

static void wait_byte(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1 || read(fd, &c, 1) != 1) {
		fprintf(stderr, "fabric: the server did not say ESTABLISHED within %d ms\n", TIMEOUT_MS);
		exit(2);
	}
}

/* Connects conns times to the server behind fd; the last connection also
 * measures writes and ping-pongs. */
static void client(int fd, int conns, int writes, struct figures *f)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = { .sin_family = AF_INET };
	double *conn_t = calloc(conns, sizeof(double)), *down_t = calloc(conns, sizeof(double));
	double *w_t = calloc(writes, sizeof(double));
	struct side s = { 0 };

	if (!ch || !conn_t || !down_t || !w_t)
		die("rdma_create_event_channel/calloc");
	inet_pton(AF_INET, addr, &dst.sin_addr);
	if (read(fd, &dst.sin_port, sizeof(dst.sin_port)) != sizeof(dst.sin_port))
		die("read (the server's port)");
	for (int i = 0; i < conns; i++) {
		int last = i == conns - 1;
		struct rdma_cm_id *id;
		struct rdma_cm_event *ev;
		struct peer_mem mine, server;
		struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
		double t0 = now_us();

		if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
			die("rdma_create_id");
		if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, TIMEOUT_MS))
			die("rdma_resolve_addr");
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
		if (rdma_resolve_route(id, TIMEOUT_MS))
			die("rdma_resolve_route");
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
		side_qp(&s, id);
		mine = side_mem(&s, last ? writes : 0);
		cp.private_data = &mine;
		cp.private_data_len = sizeof(mine);
		if (rdma_connect(id, &cp))
			die("rdma_connect");
		ev = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
		server = *(const struct peer_mem *)ev->param.conn.private_data;
		rdma_ack_cm_event(ev);
		wait_byte(fd);
		conn_t[i] = now_us() - t0;

		if (last) {
			double t;

			for (int w = 0; w < writes; w++) {
				t = now_us();
				write_to(&s, id->qp, &server, 1);
				reap(&s);
				w_t[w] = now_us() - t;
			}
			f->write_us = pct(w_t, writes, 50);
			f->write_p99_us = pct(w_t, writes, 99);
			t = now_us();
			for (int w = 0; w < writes; w++) {
				write_to(&s, id->qp, &server, (w + 1) % BATCH == 0 || w == writes - 1);
				if ((w + 1) % BATCH == 0 || w == writes - 1)
					reap(&s);
			}
			f->stream_us = (now_us() - t) / writes;
			for (uint64_t r = 1; r <= (uint64_t)writes; r++) {
				t = now_us();
				*round_out(&s) = r;
				write_to(&s, id->qp, &server, 1);
				reap(&s);
				await_round(&s, r);
				w_t[r - 1] = (now_us() - t) / 2;
			}
			f->pingpong_us = pct(w_t, writes, 50);
		}
		t0 = now_us();
		if (rdma_disconnect(id))
			die("rdma_disconnect");
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
		rdma_destroy_qp(id);
		if (rdma_destroy_id(id))
			die("rdma_destroy_id");
		down_t[i] = now_us() - t0;
	}
	f->connect_us = pct(conn_t, conns, 50);
	f->teardown_us = pct(down_t, conns, 50);
	side_close(&s);
	rdma_destroy_event_channel(ch);
	free(conn_t);
	free(down_t);
	free(w_t);
}

static void in_process(int conns, int writes, struct figures *f)
{
	int p[2];
	pthread_t t;
	struct serve_args a = { .conns = conns };

	if (pipe(p))
		die("pipe");
	a.fd = p[1];
	if ((errno = pthread_create(&t, NULL, serve_thread, &a)))
		die("pthread_create");
	client(p[0], conns, writes, f);
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
}

static void two_processes(const char *self, int conns, int writes, struct figures *f)
{
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char fd[16], n[16];

		close(p[0]);
		snprintf(fd, sizeof(fd), "%d", p[1]);
		snprintf(n, sizeof(n), "%d", conns);
		execl(self, self, "-a", addr, "--serve", fd, n, (char *)NULL);
		die("execl");
	}
	close(p[1]);
	client(p[0], conns, writes, f);
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "fabric: the server process failed (status 0x%x)\n", status);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	int conns = 200, writes = 20000;
	struct figures th = { 0 }, pr = { 0 };
	double load[3];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a") && i + 1 < argc)
			addr = argv[++i];
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			conns = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-w") && i + 1 < argc)
			writes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--serve") && i + 2 < argc) {
			serve(atoi(argv[i + 1]), atoi(argv[i + 2]));
			return 0;
		} else {
			fprintf(stderr, "usage: %s [-a ADDR] [-n CONNECTIONS] [-w WRITES]\n", argv[0]);
			return 2;
		}
	}
	if (conns < 1 || writes < 1) {
		fprintf(stderr, "fabric: -n and -w take a positive count\n");
		return 2;
	}
	in_process(conns, writes, &th);
	two_processes(argv[0], conns, writes, &pr);

	if (getloadavg(load, 3) != 3)
		load[0] = load[1] = -1;
	printf("%d connections and %d 4 KiB RDMA WRITEs to %s, in microseconds; %ld CPUs, load average %.2f %.2f\n",
	       conns, writes, addr, sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1]);
	printf("%-46s %12s %14s %7s\n", "", "two threads", "two processes", "ratio");
#define ROW(label, field) \
	printf("%-46s %12.2f %14.2f %6.2fx\n", label, th.field, pr.field, pr.field / th.field)
	ROW("connection: create_id to ESTABLISHED on both", connect_us);
	ROW("teardown: disconnect to destroy_id", teardown_us);
	ROW("4 KiB RDMA WRITE: post to completion", write_us);
	ROW("  the same, 99th percentile", write_p99_us);
	ROW("4 KiB RDMA WRITE: stream, per write (mean)", stream_us);
	ROW("4 KiB RDMA WRITE: ping-pong, half round trip", pingpong_us);
#undef ROW
	printf("two processes: a connection costs %.2fx one between threads (target: at most 3x); "
	       "a 4 KiB RDMA WRITE %.2f us (target: well under 10 us)\n",
	       pr.connect_us / th.connect_us, pr.write_us);
	return 0;
}
