/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rdma_cm and verbs between two processes of one host: a
 * connection and its data (RDMA WRITE, READ and SEND into the other
 * process's memory), port spaces and QP numbers shared by the processes,
 * and what a process that is killed leaves its peers: DISCONNECTED, its
 * listener's port free, its QPs gone (a request to one is retried, then
 * fails with RETRY_EXC_ERR).
 *
 * The other process is a fork of the test; on the mock both join a shared
 * fabric named for the test (RDMAMOCK_FABRIC), which must be set before
 * the first call into the mock. The child never calls cmocka: it reports
 * through a pipe. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "qp.h"
#include "stress.h"

#define WAIT_MS 5000
#define MSG 64

/* ---------------------------------------------------------------- the other process */

struct child {
	pid_t pid;
	int to_parent; /* the child's end: it writes what it has to say */
	int from_child;
	int to_child;  /* the parent's end of the second pipe */
	int from_parent;
};

/* On the mock: a shared fabric of this test's own, before anything of the
 * mock runs in this process. */
static void shared_fabric(void)
{
	const char *(*fabric)(void);
	char name[64];

	snprintf(name, sizeof name, "rdmacheck-%d", (int)getpid());
	setenv("RDMAMOCK_FABRIC", name, 1);
	if (!rc_backend_is_mock()) {
		fx_addr(AF_INET);
		return;
	}
	fabric = (const char *(*)(void))fx_mock_call("rdmamock_fabric");
	if (strcmp(fabric(), name))
		fail_msg("the mock is on fabric %s, not %s: it was reached before the test began",
			 fabric(), name);
	/* A test without an address skips here, not in the other process. */
	fx_addr(AF_INET);
}

/* Run fn in a child. It says things with child_say (the first byte 0 for
 * "ready", or text for a failure) and exits 0 when fn returns NULL. */
static void child_start(struct child *c, const char *(*fn)(struct child *c, void *arg), void *arg)
{
	int up[2], down[2];

	if (pipe(up) || pipe(down))
		fail_msg("pipe: %s", strerror(errno));
	c->pid = fork();
	if (c->pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (c->pid == 0) {
		const char *err;

		close(up[0]);
		close(down[1]);
		c->to_parent = up[1];
		c->from_parent = down[0];
		err = fn(c, arg);
		if (err && write(c->to_parent, err, strlen(err)) < 0)
			_exit(2);
		_exit(err ? 1 : 0);
	}
	close(up[1]);
	close(down[0]);
	c->from_child = up[0];
	c->to_child = down[1];
}

static bool child_say(struct child *c, const void *data, size_t len)
{
	return write(c->to_parent, data, len) == (ssize_t)len;
}

/* Read exactly len bytes from fd within ms; false on EOF or timeout. */
static bool read_all(int fd, void *buf, size_t len, int ms)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, ms) != 1)
			return false;
		n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* What the child sent: len bytes, or a failure text. */
static void child_expect(struct child *c, void *buf, size_t len)
{
	char why[256] = "";

	if (read_all(c->from_child, buf, len, WAIT_MS))
		return;
	(void)!read(c->from_child, why, sizeof why - 1);
	fail_msg("the other process: %s", why[0] ? why : "ended or said nothing within 5 s");
}

static void child_end(struct child *c, bool kill_it)
{
	int status = 0;
	char why[256] = "";

	if (kill_it)
		kill(c->pid, SIGKILL);
	for (int waited = 0; waitpid(c->pid, &status, WNOHANG) == 0; waited += 10) {
		if (waited >= WAIT_MS) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &status, 0);
			fail_msg("the other process did not end within 5 s");
		}
		poll(NULL, 0, 10);
	}
	(void)!read(c->from_child, why, sizeof why - 1);
	close(c->from_child);
	close(c->to_child);
	if (!kill_it && (!WIFEXITED(status) || WEXITSTATUS(status)))
		fail_msg("the other process failed: %s", why[0] ? why : "(it said nothing)");
}

static uint64_t now_ms(void)
{
	return rc_now_ns() / 1000000u;
}

/* ---------------------------------------------------------------- a connection */

/* What the passive side gives in its accept's private data. */
struct offer {
	uint64_t addr;
	uint32_t rkey;
};

struct passive {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listener, *id;
	struct ibv_mr *mr;
	uint8_t buf[2 * MSG] __attribute__((aligned(8))); /* [0, MSG) for RDMA, [MSG, 2 MSG) receives */
};

static const char *next_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
			      struct rdma_cm_event **out)
{
	static char why[160];
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, WAIT_MS) != 1)
		return "no CM event within 5 s";
	if (rdma_get_cm_event(ch, &ev))
		return "rdma_get_cm_event failed";
	if (ev->event != type) {
		snprintf(why, sizeof why, "%s (status %d), not %s", rdma_event_str(ev->event), ev->status,
			 rdma_event_str(type));
		rdma_ack_cm_event(ev);
		return why;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return NULL;
}

static const char *listen_on(struct passive *p, uint16_t port)
{
	struct sockaddr_storage addr;

	fx_sockaddr(AF_INET, fx_addr(AF_INET), port, &addr);
	if (!(p->ch = rdma_create_event_channel()))
		return "rdma_create_event_channel failed";
	if (rdma_create_id(p->ch, &p->listener, NULL, RDMA_PS_TCP))
		return "rdma_create_id failed";
	if (rdma_bind_addr(p->listener, (struct sockaddr *)&addr))
		return "rdma_bind_addr failed";
	if (rdma_listen(p->listener, 4))
		return "rdma_listen failed";
	return NULL;
}

/* Accept with an RC QP and a region the peer may write and read, offered
 * in the private data; one receive posted. */
static const char *accept_one(struct passive *p)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct offer offer;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	const char *err = next_event(p->ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);

	if (err)
		return err;
	p->id = ev->id;
	rdma_ack_cm_event(ev);
	if (rdma_create_qp(p->id, NULL, &init))
		return "rdma_create_qp failed";
	p->mr = ibv_reg_mr(p->id->pd, p->buf, sizeof p->buf, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!p->mr)
		return "ibv_reg_mr failed";
	sge = (struct ibv_sge){ .addr = (uintptr_t)p->buf + MSG, .length = MSG, .lkey = p->mr->lkey };
	if (ibv_post_recv(p->id->qp, &wr, &bad))
		return "ibv_post_recv failed";
	offer.addr = (uintptr_t)p->buf;
	offer.rkey = p->mr->rkey;
	param.private_data = &offer;
	param.private_data_len = sizeof offer;
	if (rdma_accept(p->id, &param))
		return "rdma_accept failed";
	return next_event(p->ch, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

static const char *wait_recv(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int waited = 0; waited < WAIT_MS; waited++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return "ibv_poll_cq failed";
		if (n == 1)
			return wc->status == IBV_WC_SUCCESS ? NULL : ibv_wc_status_str(wc->status);
		poll(NULL, 0, 1);
	}
	return "no completion within 5 s";
}

/* The child: the server. It says 0 once listening, accepts, and ends at
 * the disconnect. With arg NULL the region must by then hold what the
 * client wrote, and the SEND the client's text. */
static const char *serve_one(struct child *c, void *arg)
{
	static const uint8_t ready = 0;
	struct passive p = { 0 };
	struct ibv_wc wc;
	const char *err;

	if ((err = listen_on(&p, fx_port())))
		return err;
	if (!child_say(c, &ready, 1))
		return "cannot write to the parent";
	if ((err = accept_one(&p)) || (!arg && (err = wait_recv(p.id->recv_cq, &wc))))
		return err;
	if (!arg && (wc.byte_len != MSG || memcmp(p.buf + MSG, "done", 5)))
		return "the SEND did not carry the client's message";
	for (int i = 0; i < MSG && !arg; i++)
		if (p.buf[i] != (uint8_t)(0x40 + i))
			return "the region does not hold what the client wrote";
	if ((err = next_event(p.ch, RDMA_CM_EVENT_DISCONNECTED, NULL)))
		return err;
	rdma_disconnect(p.id);
	return NULL;
}

/* The parent's side: connect with a QP; the accept's offer in *offer. */
struct active {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	uint8_t buf[2 * MSG] __attribute__((aligned(8)));
};

static void connect_to(struct active *a, uint16_t port, struct offer *offer, int *reject_status)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7 };
	struct sockaddr_storage dst;
	struct rdma_cm_event *ev;

	a->ch = fx_channel();
	fx_sockaddr(AF_INET, fx_addr(AF_INET), port, &dst);
	FX_OK(rdma_create_id(a->ch, &a->id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_resolve_addr(a->id, NULL, (struct sockaddr *)&dst, 2000));
	fx_expect_ack(a->ch, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS);
	FX_OK(rdma_resolve_route(a->id, 2000));
	fx_expect_ack(a->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, WAIT_MS);
	FX_OK(rdma_create_qp(a->id, NULL, &init));
	a->mr = ibv_reg_mr(a->id->pd, a->buf, sizeof a->buf, IBV_ACCESS_LOCAL_WRITE);
	if (!a->mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	if (reject_status && fx_cm_iwarp(a->id)) {
		/* iWARP connects over TCP: a port nobody listens on refuses the
		 * connection in the call (siw_connect's kernel_connect). */
		errno = 0;
		assert_int_equal(rdma_connect(a->id, &param), -1);
		*reject_status = -errno;
		return;
	}
	FX_OK(rdma_connect(a->id, &param));
	if (reject_status) {
		ev = fx_expect(a->ch, RDMA_CM_EVENT_REJECTED, WAIT_MS);
		*reject_status = ev->status;
		FX_OK(rdma_ack_cm_event(ev));
		return;
	}
	ev = fx_expect(a->ch, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS);
	assert_true(ev->param.conn.private_data_len >= sizeof *offer);
	memcpy(offer, ev->param.conn.private_data, sizeof *offer);
	FX_OK(rdma_ack_cm_event(ev));
}

static void active_release(struct active *a)
{
	if (a->mr)
		FX_VERBS_OK(ibv_dereg_mr(a->mr));
	if (a->id) {
		if (a->id->qp)
			rdma_destroy_qp(a->id);
		FX_OK(rdma_destroy_id(a->id));
	}
	rdma_destroy_event_channel(a->ch);
}

/* One signalled work request to the other process: its completion status. */
static enum ibv_wc_status post_one(struct active *a, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	FX_VERBS_OK(ibv_post_send(a->id->qp, wr, &bad));
	fx_poll_one(a->id->send_cq, &wc);
	return wc.status;
}

static void post_and_wait(struct active *a, enum ibv_wr_opcode op, uint64_t offset, const struct offer *o)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf + offset, .length = MSG, .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .wr.rdma = { .remote_addr = o->addr, .rkey = o->rkey } };
	enum ibv_wc_status status = post_one(a, &wr);

	if (status != IBV_WC_SUCCESS)
		fail_msg("%s to the other process: %s", op == IBV_WR_SEND ? "SEND" :
			 op == IBV_WR_RDMA_WRITE ? "RDMA WRITE" : "RDMA READ", ibv_wc_status_str(status));
}

void rdma_connect__other_process(void **state)
{
	struct active a = { 0 };
	struct offer offer;
	struct child c;
	uint8_t ready;

	shared_fabric();
	fx_require_backend();
	child_start(&c, serve_one, NULL);
	child_expect(&c, &ready, 1);
	connect_to(&a, fx_port(), &offer, NULL);
	for (int i = 0; i < MSG; i++)
		a.buf[i] = (uint8_t)(0x40 + i);
	post_and_wait(&a, IBV_WR_RDMA_WRITE, 0, &offer);
	memset(a.buf + MSG, 0, MSG);
	post_and_wait(&a, IBV_WR_RDMA_READ, MSG, &offer);
	assert_memory_equal(a.buf + MSG, a.buf, MSG);
	memcpy(a.buf, "done", 5);
	post_and_wait(&a, IBV_WR_SEND, 0, &offer);
	FX_OK(rdma_disconnect(a.id));
	child_end(&c, false);
	active_release(&a);
}

/* The 8 bytes an atomic returns: the target's value before it. */
static uint64_t atomic_on(struct active *a, enum ibv_wr_opcode op, const struct offer *o,
			  uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = 8, .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .wr.atomic = { .remote_addr = o->addr, .rkey = o->rkey,
						 .compare_add = compare_add, .swap = swap } };
	enum ibv_wc_status status = post_one(a, &wr);
	uint64_t before;

	if (status != IBV_WC_SUCCESS)
		fail_msg("atomic on the other process's region: %s", ibv_wc_status_str(status));
	memcpy(&before, a->buf, sizeof before);
	return before;
}

/* Atomics reach another process's memory; its region's rkey is checked
 * there: an RDMA WRITE under another key is a remote access error. */
void ibv_post_send__atomics_and_rkey_other_process(void **state)
{
	struct active a = { 0 };
	struct ibv_device_attr attr;
	struct offer offer;
	struct child c;
	uint8_t ready;

	shared_fabric();
	fx_require_backend();
	child_start(&c, serve_one, (void *)"atomics only");
	child_expect(&c, &ready, 1);
	connect_to(&a, fx_port(), &offer, NULL);
	FX_VERBS_OK(ibv_query_device(a.id->verbs, &attr));
	if (attr.atomic_cap == IBV_ATOMIC_NONE) {
		child_end(&c, true);
		RC_SKIP("capability: atomics (%s reports IBV_ATOMIC_NONE)", ibv_get_device_name(a.id->verbs->device));
	}
	assert_int_equal(atomic_on(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, &offer, 5, 0), 0);
	assert_int_equal(atomic_on(&a, IBV_WR_ATOMIC_CMP_AND_SWP, &offer, 5, 0x1122334455667788ull), 5);
	assert_int_equal(atomic_on(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, &offer, 0, 0), 0x1122334455667788ull);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)a.buf, .length = MSG, .lkey = a.mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					  .wr.rdma = { .remote_addr = offer.addr, .rkey = ~offer.rkey } };

		assert_int_equal(post_one(&a, &wr), IBV_WC_REM_ACCESS_ERR);
	}
	FX_OK(rdma_disconnect(a.id));
	child_end(&c, false);
	active_release(&a);
}

/* The child: accepts, and at the parent's word SENDs it MSG bytes of
 * 0x60 + i, says 1 once the send completed (the receiver acknowledged
 * it), and ends at the disconnect. */
static const char *send_at_word(struct child *c, void *arg)
{
	static const uint8_t ready = 0, sent = 1;
	struct passive p = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	uint8_t word;
	const char *err;

	if ((err = listen_on(&p, fx_port())))
		return err;
	if (!child_say(c, &ready, 1))
		return "cannot write to the parent";
	if ((err = accept_one(&p)))
		return err;
	if (!read_all(c->from_parent, &word, 1, WAIT_MS))
		return "no word from the parent within 5 s";
	for (int i = 0; i < MSG; i++)
		p.buf[i] = (uint8_t)(0x60 + i);
	sge = (struct ibv_sge){ .addr = (uintptr_t)p.buf, .length = MSG, .lkey = p.mr->lkey };
	if (ibv_post_send(p.id->qp, &wr, &bad))
		return "ibv_post_send failed";
	if ((err = wait_recv(p.id->send_cq, &wc)))
		return err;
	if (!child_say(c, &sent, 1))
		return "cannot write to the parent";
	if ((err = next_event(p.ch, RDMA_CM_EVENT_DISCONNECTED, NULL)))
		return err;
	rdma_disconnect(p.id);
	return NULL;
}

/* The parent's side of send_at_word: connected to the child, a receive
 * posted into a page of its own (a region of it in *mr), and the child's
 * SEND of MSG bytes acknowledged, its completion not polled. */
static uint8_t *receive_unpolled(struct active *a, struct child *c, struct ibv_mr **mr)
{
	uint8_t ready, word = 1, sent;
	struct offer offer;
	uint8_t *page;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	shared_fabric();
	fx_require_backend();
	child_start(c, send_at_word, NULL);
	child_expect(c, &ready, 1);
	connect_to(a, fx_port(), &offer, NULL);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	*mr = ibv_reg_mr(a->id->pd, page, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!*mr)
		fail_msg("ibv_reg_mr: %s", strerror(errno));
	sge = (struct ibv_sge){ .addr = (uintptr_t)page, .length = MSG, .lkey = (*mr)->lkey };
	FX_VERBS_OK(ibv_post_recv(a->id->qp, &wr, &bad));
	assert_int_equal(write(c->to_child, &word, 1), 1);
	child_expect(c, &sent, 1);
	return page;
}

/* A message the sender saw acknowledged is in its receive buffer whether
 * or not the receiver polled its completion: the receiver may deregister
 * the region, check it, unmap it and only then destroy its QP (UCX's UD
 * interface frees its receive buffers before its QP), and nothing is
 * written there afterwards. */
void ibv_dereg_mr__unpolled_receive_other_process(void **state)
{
	struct active a = { 0 };
	struct ibv_mr *mr;
	struct child c;
	uint8_t *page = receive_unpolled(&a, &c, &mr);

	FX_VERBS_OK(ibv_dereg_mr(mr));
	for (int i = 0; i < MSG; i++)
		if (page[i] != (uint8_t)(0x60 + i))
			fail_msg("byte %d of the acknowledged message is 0x%02x, not 0x%02x, once the region was deregistered",
				 i, page[i], 0x60 + i);
	assert_int_equal(munmap(page, 4096), 0);
	FX_OK(rdma_disconnect(a.id));
	child_end(&c, false);
	active_release(&a); /* rdma_destroy_qp */
}

/* The same receiver may unmap the buffer first, before it deregisters the
 * region or destroys the QP: the pages stay the device's until then, and
 * what arrived is written nowhere the program can see. The QP and the
 * region go without a fault. */
void ibv_destroy_qp__unpolled_receive_unmapped_other_process(void **state)
{
	struct active a = { 0 };
	struct ibv_mr *mr;
	struct child c;
	uint8_t *page = receive_unpolled(&a, &c, &mr);

	assert_int_equal(munmap(page, 4096), 0);
	FX_OK(rdma_disconnect(a.id));
	child_end(&c, false);
	active_release(&a); /* rdma_destroy_qp, its completion unpolled */
	FX_VERBS_OK(ibv_dereg_mr(mr));
}

/* The child listens on fx_port() and waits to be killed. */
static const char *listen_and_wait(struct child *c, void *arg)
{
	static const uint8_t ready = 0;
	struct passive p = { 0 };
	const char *err = listen_on(&p, fx_port());

	if (err)
		return err;
	if (!child_say(c, &ready, 1))
		return "cannot write to the parent";
	pause();
	return NULL;
}

static int bind_port(struct rdma_cm_id *id, uint16_t port)
{
	struct sockaddr_storage addr;

	fx_sockaddr(AF_INET, fx_addr(AF_INET), port, &addr);
	return rdma_bind_addr(id, (struct sockaddr *)&addr);
}

/* Another process's listener holds the port (EADDRINUSE here); killed, it
 * frees it, as the kernel destroys the ids of a process that dies: closing
 * its files is part of its exit, done before its parent can reap it. */
void rdma_bind_addr__port_of_other_process(void **state)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct child c;
	uint8_t ready;

	shared_fabric();
	ch = fx_channel();
	child_start(&c, listen_and_wait, NULL);
	child_expect(&c, &ready, 1);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	errno = 0;
	assert_int_equal(bind_port(id, fx_port()), -1);
	RC_ASSERT_ERRNO("rdma_bind_addr", errno, EADDRINUSE);
	child_end(&c, true);
	if (bind_port(id, fx_port()))
		fail_msg("the port is still in use once its killed owner was reaped: %s", strerror(errno));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* A library's destructor, played by the suite's own: the dynamic linker
 * runs it after exit's handlers, and it may still use rdma_cm (libfabric
 * frees what it holds in one). Here, in one child only, it binds a port
 * and leaves the id for the process's end to destroy. */
static uint16_t port_to_bind_at_exit;

__attribute__((destructor)) static void bind_at_exit(void)
{
	struct rdma_cm_id *id;

	if (!port_to_bind_at_exit)
		return;
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) || bind_port(id, port_to_bind_at_exit))
		_exit(3);
}

static const char *exit_binding(struct child *c, void *arg)
{
	/* The id is left on purpose: no leak report, strict or not. */
	unsetenv("RDMAMOCK_STRICT");
	unsetenv("RDMAMOCK_LEDGER");
	port_to_bind_at_exit = fx_port();
	exit(0);
}

/* What a process binds while it exits, in a library's destructor, is
 * destroyed with the process like the rest: the port is free once it has
 * ended. */
void rdma_bind_addr__port_bound_at_exit(void **state)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct child c;

	shared_fabric();
	ch = fx_channel();
	child_start(&c, exit_binding, NULL);
	child_end(&c, false);
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	if (bind_port(id, fx_port()))
		fail_msg("the port the other process bound in a destructor at its exit is still in use once it ended: %s",
			 strerror(errno));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

void rdma_connect__no_listener_in_any_process(void **state)
{
	struct active a = { 0 };
	struct child c;
	uint8_t ready;
	int status = 0;

	shared_fabric();
	fx_require_backend();
	child_start(&c, listen_and_wait, NULL);
	child_expect(&c, &ready, 1);
	connect_to(&a, fx_free_port(), NULL, &status);
	/* IB_CM_REJ_INVALID_SERVICE_ID; on iWARP the call's ECONNREFUSED */
	assert_int_equal(status, fx_cm_iwarp(a.id) ? -ECONNREFUSED : 8);
	child_end(&c, true);
	active_release(&a);
}

/* The child connects to the parent's listener, says so, and is killed. */
static const char *connect_and_wait(struct child *c, void *arg)
{
	static const uint8_t ready = 0;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_storage dst;
	struct rdma_cm_id *id;
	const char *err;

	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &dst);
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000))
		return "rdma_create_id or rdma_resolve_addr failed";
	if ((err = next_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL)))
		return err;
	if (rdma_resolve_route(id, 2000))
		return "rdma_resolve_route failed";
	if ((err = next_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL)))
		return err;
	if (rdma_create_qp(id, NULL, &init) || rdma_connect(id, &param))
		return "rdma_create_qp or rdma_connect failed";
	if ((err = next_event(ch, RDMA_CM_EVENT_ESTABLISHED, NULL)))
		return err;
	if (!child_say(c, &ready, 1))
		return "cannot write to the parent";
	pause();
	return NULL;
}

void rdma_get_cm_event__peer_process_killed(void **state)
{
	struct passive p = { 0 };
	struct rdma_cm_event *ev;
	struct child c;
	uint8_t ready;
	const char *err;

	shared_fabric();
	fx_require_backend();
	if ((err = listen_on(&p, fx_port())))
		fail_msg("%s", err);
	child_start(&c, connect_and_wait, NULL);
	if ((err = accept_one(&p)))
		fail_msg("%s", err);
	child_expect(&c, &ready, 1);
	child_end(&c, true);
	ev = fx_expect(p.ch, RDMA_CM_EVENT_DISCONNECTED, WAIT_MS);
	assert_ptr_equal(ev->id, p.id);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_disconnect(p.id));
	rdma_destroy_qp(p.id);
	FX_VERBS_OK(ibv_dereg_mr(p.mr));
	FX_OK(rdma_destroy_id(p.id));
	FX_OK(rdma_destroy_id(p.listener));
	rdma_destroy_event_channel(p.ch);
}

/* ---------------------------------------------------------------- plain verbs */

/* What each side tells the other to connect their RC QPs. */
struct qp_dest {
	uint32_t qpn;
	union ibv_gid gid;
	uint16_t lid; /* on InfiniBand: the path is this LID, no GRH */
};

/* A child's verbs, without the fixtures (which fail through cmocka): the
 * device under test, a PD, a CQ and an RC QP in RESET. */
struct plain {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static const char *plain_qp(struct plain *p)
{
	const char *want = getenv("RDMACHECK_DEVICE");
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !p->ctx; i++)
		if (!want || !*want || !strcmp(ibv_get_device_name(list[i]), want))
			p->ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!p->ctx || !(p->pd = ibv_alloc_pd(p->ctx)) ||
	    !(p->cq = ibv_create_cq(p->ctx, 8, NULL, NULL, 0)))
		return "ibv_open_device, ibv_alloc_pd or ibv_create_cq failed";
	init.send_cq = init.recv_cq = p->cq;
	if (!(p->qp = ibv_create_qp(p->pd, &init)))
		return "ibv_create_qp failed";
	return NULL;
}

/* Where port 1 of ctx is reached, into d (its qpn left alone), and the
 * index of the GID: on RoCE the test address's, ::ffff:a.b.c.d, RoCE v2;
 * on InfiniBand the port's GID 0 and its LID. -1 when there is none. */
static int plain_dest(struct ibv_context *ctx, struct qp_dest *d)
{
	union ibv_gid want = { .raw = { [10] = 0xff, [11] = 0xff } };
	struct ibv_port_attr port;
	struct ibv_gid_entry e;

	d->lid = 0;
	if (ibv_query_port(ctx, 1, &port))
		return -1;
	if (port.link_layer == IBV_LINK_LAYER_INFINIBAND) {
		d->lid = port.lid;
		return ibv_query_gid(ctx, 1, 0, &d->gid) ? -1 : 0;
	}
	if (inet_pton(AF_INET, fx_addr(AF_INET), &want.raw[12]) != 1)
		return -1;
	for (int i = 0; i < 256; i++)
		if (!ibv_query_gid_ex(ctx, 1, i, &e, 0) && e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(&e.gid, &want, sizeof want)) {
			d->gid = e.gid;
			return i;
		}
	return -1;
}

/* Walk an RC QP to RTS, connected to dest (the kernel's required
 * attributes, as fx_qp_required gives them), with retry_cnt 1. */
static int plain_connect(struct ibv_qp *qp, struct ibv_context *ctx, const struct qp_dest *dest)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct qp_dest self;
	int index = plain_dest(ctx, &self);

	if (index < 0 || ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&attr, 0, sizeof attr);
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = dest->qpn;
	attr.rq_psn = 0x1000;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.port_num = 1;
	if (dest->lid) {
		attr.ah_attr.dlid = dest->lid;
	} else {
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh.hop_limit = 64;
		attr.ah_attr.grh.sgid_index = (uint8_t)index;
		attr.ah_attr.grh.dgid = dest->gid;
	}
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&attr, 0, sizeof attr);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0x1000;
	attr.timeout = 14;
	attr.retry_cnt = 1;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The child: an RC QP connected to the parent's (its dest read from the
 * pipe, its own sent first), in RTS, waiting to be killed. With arg (a
 * bool, true) it first posts a SEND, which waits out its local ACK
 * timeout while nothing answers. */
static const char *rc_peer(struct child *c, void *arg)
{
	static uint8_t buf[8];
	struct plain p = { 0 };
	struct qp_dest mine, theirs;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_mr *mr;
	const char *err = plain_qp(&p);
	static const uint8_t ready = 0;

	if (err)
		return err;
	mine.qpn = p.qp->qp_num;
	if (plain_dest(p.ctx, &mine) < 0)
		return "no RoCE v2 GID for the test address";
	if (!child_say(c, &mine, sizeof mine))
		return "cannot write to the parent";
	if (!read_all(c->from_parent, &theirs, sizeof theirs, WAIT_MS))
		return "the parent sent no QP";
	if (plain_connect(p.qp, p.ctx, &theirs))
		return "ibv_modify_qp failed";
	if (arg && *(const bool *)arg) {
		if (!(mr = ibv_reg_mr(p.pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE)))
			return "ibv_reg_mr failed";
		sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = sizeof buf, .lkey = mr->lkey };
		if (ibv_post_send(p.qp, &wr, &bad))
			return "ibv_post_send failed";
	}
	if (!child_say(c, &ready, 1))
		return "cannot write to the parent";
	pause();
	return NULL;
}

/* The local ACK timeout (4.096 us << 14 = 67 ms) times retry_cnt 1 + 1:
 * the request is tried twice, 134 ms, before RETRY_EXC_ERR (measured on
 * rxe: 0.135 s). */
void ibv_post_send__peer_process_killed(void **state)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct qp_dest mine, theirs;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;
	struct fx_qp q;
	struct child c;
	uint64_t t0, elapsed;
	uint8_t ready;

	shared_fabric();
	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_require_ib_qp_attributes(q.ctx);
	child_start(&c, rc_peer, NULL);
	child_expect(&c, &theirs, sizeof theirs);
	mine.qpn = q.qp->qp_num;
	if (plain_dest(q.ctx, &mine) < 0)
		fail_msg("no RoCE v2 GID for %s", fx_addr(AF_INET));
	if (write(c.to_child, &mine, sizeof mine) != sizeof mine)
		fail_msg("cannot write to the other process");
	if (plain_connect(q.qp, q.ctx, &theirs))
		fail_msg("ibv_modify_qp to RTS: %s", strerror(errno));
	child_expect(&c, &ready, 1);
	child_end(&c, true);
	sge = (struct ibv_sge){ .addr = (uintptr_t)q.buf, .length = 8, .lkey = q.mr->lkey };
	t0 = now_ms();
	FX_VERBS_OK(ibv_post_send(q.qp, &wr, &bad));
	fx_poll_one(q.cq, &wc);
	elapsed = now_ms() - t0;
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	if (elapsed < 100)
		fail_msg("RETRY_EXC_ERR after %llu ms: the retries (2 x 67 ms) were not waited out",
			 (unsigned long long)elapsed);
	FX_VERBS_OK(ibv_query_qp(q.qp, &attr, IBV_QP_STATE, &init));
	assert_int_equal(attr.qp_state, IBV_QPS_ERR);
	fx_qp_release(&q);
}

/* The child makes 3 QPs and reports their numbers. */
static const char *three_qps(struct child *c, void *arg)
{
	struct plain p[3] = { 0 };
	uint32_t qpn[3];
	const char *err;

	for (int i = 0; i < 3; i++) {
		if ((err = plain_qp(&p[i])))
			return err;
		qpn[i] = p[i].qp->qp_num;
	}
	return child_say(c, qpn, sizeof qpn) ? NULL : "cannot write to the parent";
}

void ibv_create_qp__numbers_of_other_process(void **state)
{
	uint32_t theirs[3];
	struct fx_qp q[3];
	struct child c;

	shared_fabric();
	for (int i = 0; i < 3; i++)
		fx_qp_create(&q[i], FX_DEV_UNDER_TEST, IBV_QPT_RC);
	child_start(&c, three_qps, NULL);
	child_expect(&c, theirs, sizeof theirs);
	child_end(&c, false);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			assert_int_not_equal(q[i].qp->qp_num, theirs[j]);
	for (int i = 0; i < 3; i++)
		fx_qp_release(&q[i]);
}

/* ---------------------------------------------------------------- many threads */

static void say_ready(void *arg)
{
	static const uint8_t ready = 0;

	child_say(arg, &ready, 1);
}

/* The other process serves until the parent closes its pipe, then says
 * how many connections it saw end. */
static const char *stress_server(struct child *c, void *arg)
{
	int served = 0;
	const char *err = fx_stress_serve(c->from_parent, say_ready, c, &served);

	if (err)
		return err;
	return child_say(c, &served, sizeof served) ? NULL : "cannot write to the parent";
}

/* fx_stress_clients against a server in the other process: four threads
 * of many connections each, every one served to its DISCONNECTED. */
void rdma_connect__client_threads_other_process(void **state)
{
	int threads = 4, rounds = rc_backend_is_mock() ? 50 : 5, served = -1;
	const char *err;
	struct child c;
	uint8_t ready;

	shared_fabric();
	fx_require_backend();
	child_start(&c, stress_server, NULL);
	child_expect(&c, &ready, 1);
	err = fx_stress_clients(threads, rounds);
	close(c.to_child);
	c.to_child = -1;
	if (!err)
		child_expect(&c, &served, sizeof served);
	child_end(&c, err != NULL);
	if (err)
		fail_msg("%s", err);
	assert_int_equal(served, threads * rounds);
}

/* ---------------------------------------------------------------- the mock's view */

void rdmamock_fabric__killed_process_reaped(void **state)
{
	long (*held)(int) = NULL;
	long before = 0, after = 0;
	struct child c;
	uint8_t ready;

	rc_require_mock("observes the fabric's memory");
	shared_fabric();
	held = (long (*)(int))fx_mock_call("rdmamock_fabric_held");
	child_start(&c, listen_and_wait, NULL);
	child_expect(&c, &ready, 1);
	before = held(c.pid);
	child_end(&c, true);
	for (int waited = 0; waited < WAIT_MS && (after = held(c.pid)) != -ESRCH; waited += 10)
		poll(NULL, 0, 10);
	if (before <= 0)
		fail_msg("the listening process held %ld objects", before);
	if (after != -ESRCH)
		fail_msg("5 s after it was killed, the process still holds %ld objects", after);
}

/* A process killed while its request waits for a retry: the fabric reaps
 * the process and the retry with it. The old mock freed the timer's
 * memory and left it on the fabric's list, where the survivor's watcher
 * fired it on freed memory (and died freeing it again). */
void rdmamock_fabric__killed_while_retrying(void **state)
{
	long (*held)(int);
	struct qp_dest theirs;
	struct fx_qp q;
	struct child c;
	uint8_t ready;
	long after = 0;

	rc_require_mock("observes the fabric's reaping");
	shared_fabric();
	held = (long (*)(int))fx_mock_call("rdmamock_fabric_held");
	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC); /* left in RESET: nothing answers */
	child_start(&c, rc_peer, &(bool){ true });
	child_expect(&c, &theirs, sizeof theirs);
	theirs.qpn = q.qp->qp_num;
	if (plain_dest(q.ctx, &theirs) < 0)
		fail_msg("no RoCE v2 GID for %s", fx_addr(AF_INET));
	if (write(c.to_child, &theirs, sizeof theirs) != sizeof theirs)
		fail_msg("cannot write to the other process");
	child_expect(&c, &ready, 1);
	child_end(&c, true);
	for (int waited = 0; waited < WAIT_MS && (after = held(c.pid)) != -ESRCH; waited += 10)
		poll(NULL, 0, 10);
	if (after != -ESRCH)
		fail_msg("5 s after it was killed, the process still holds %ld objects", after);
	/* Past the retry's deadline (timeout 14: 67 ms, twice). */
	rc_sleep_ms(300);
	fx_qp_release(&q);
}

/* exit from a signal handler that interrupted malloc, in the last process
 * of a fabric, which removes the fabric's files on its way out: Debian's
 * qperf 0.4.11 ends its server's child so (its test timer's handler calls
 * exit), and the mock's exit path waited for ever on the malloc lock the
 * child's own thread held (opendir). Twenty children, each interrupted a
 * few ms into a loop that mostly runs inside malloc and free (blocks past
 * the thread cache, under the arena's lock): each must end. */
static void exit_now(int sig)
{
	exit(0);
}

static void malloc_until_alarm(const char *fabric)
{
	struct itimerval at = { .it_value = { 0, 2000 + rand() % 3000 } };
	struct ibv_device **list;

	setenv("RDMAMOCK_FABRIC", fabric, 1);
	list = ibv_get_device_list(NULL); /* the fabric's first and only member */
	if (!list)
		_exit(3);
	ibv_free_device_list(list);
	signal(SIGALRM, exit_now);
	setitimer(ITIMER_REAL, &at, NULL);
	for (;;) {
		volatile char *p = malloc(96 << 10);

		if (p)
			p[0] = 1;
		free((void *)p);
	}
}

void rdmamock_fabric__exit_from_signal_handler(void **state)
{
	char fabric[64];

	rc_require_mock("the mock's exit path");
	/* Its leak check at exit takes the allocator's lock that the
	 * interrupted malloc holds (measured: it waits there for ever). */
	if (RC_UNDER_ASAN)
		RC_SKIP("AddressSanitizer's own exit path does not survive an exit from inside malloc");
#ifdef RDMACHECK_COVERAGE
	/* gcov writes its counts from a destructor at exit, through malloc
	 * (measured: gcov_do_dump waits on the interrupted malloc's lock). */
	RC_SKIP("gcov's own exit path does not survive an exit from inside malloc");
#endif
	for (int i = 0; i < 20; i++) {
		int status = 0;
		pid_t pid;

		snprintf(fabric, sizeof fabric, "rdmacheck-exit-%d-%d", (int)getpid(), i);
		pid = fork();
		if (pid < 0)
			fail_msg("fork: %s", strerror(errno));
		if (pid == 0)
			malloc_until_alarm(fabric);
		for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited += 10) {
			if (waited >= WAIT_MS) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				fail_msg("child %d of 20 called exit from its SIGALRM handler and did not end "
					 "within 5 s", i + 1);
			}
			poll(NULL, 0, 10);
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail_msg("child %d of 20 ended with status %#x, not exit(0)", i + 1, status);
	}
}

/* ---------------------------------------------------------------- removing a fabric */

/* The child: on the fabric arg, says it is there, then ends as the parent
 * says: 'x' exits (destructors run, as at any exit), and killing it
 * leaves the fabric as a crash does. */
static const char *join_and_wait(struct child *c, void *arg)
{
	const char *(*fabric)(void) = (const char *(*)(void))fx_mock_call("rdmamock_fabric");
	char go;

	setenv("RDMAMOCK_FABRIC", arg, 1);
	ibv_free_device_list(ibv_get_device_list(NULL)); /* joins it */
	if (strcmp(fabric(), arg))
		return "not on the fabric asked for";
	if (!child_say(c, "", 1) || read(c->from_parent, &go, 1) != 1)
		return "the parent went away";
	exit(0);
}

static bool fabric_file(const char *name, const char *ext)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char path[4200];

	if (xdg && *xdg)
		snprintf(path, sizeof path, "%s/rdmamock/%s.%s", xdg, name, ext);
	else
		snprintf(path, sizeof path, "/tmp/rdmamock-%u/%s.%s", (unsigned)getuid(), name, ext);
	return access(path, F_OK) == 0;
}

/* While a process is on a fabric it cannot be removed (-EBUSY), the
 * caller's own fabric neither; the last process out takes its files, the
 * lock file too; a killed one leaves them, and the call removes them (1:
 * the fabric's file). */
void rdmamock_fabric_remove__live_and_gone(void **state)
{
	int (*fabric_remove)(const char *);
	const char *(*fabric)(void);
	char name[64], ready, longest[65];
	struct child c;

	/* Nothing here joins a fabric before the children do theirs. */
	rc_require_mock("the fabric's files are the mock's");
	fabric_remove = (int (*)(const char *))fx_mock_call("rdmamock_fabric_remove");
	snprintf(name, sizeof name, "rdmacheck-rm-%d", (int)getpid());
	assert_int_equal(fabric_remove("private"), -EINVAL);
	assert_int_equal(fabric_remove(".hidden"), -EINVAL);
	assert_int_equal(fabric_remove(""), -EINVAL);
	assert_int_equal(fabric_remove(NULL), -EINVAL);
	assert_int_equal(fabric_remove("a/b"), -EINVAL);
	memset(longest, 'f', 64);
	longest[64] = '\0';
	assert_int_equal(fabric_remove(longest), -EINVAL); /* 63 at most */

	fflush(NULL);
	child_start(&c, join_and_wait, name);
	child_expect(&c, &ready, 1);
	assert_int_equal(fabric_remove(name), -EBUSY);
	assert_true(fabric_file(name, "fabric") && fabric_file(name, "lock"));
	assert_int_equal(write(c.to_child, "x", 1), 1);
	child_end(&c, false);
	if (fabric_file(name, "fabric") || fabric_file(name, "lock"))
		fail_msg("the last process out of %s left %s", name,
			 fabric_file(name, "fabric") ? "its file" : "its lock file");
	assert_int_equal(fabric_remove(name), 0);

	fflush(NULL);
	child_start(&c, join_and_wait, name);
	child_expect(&c, &ready, 1);
	child_end(&c, true);
	assert_true(fabric_file(name, "fabric") && fabric_file(name, "lock"));
	assert_int_equal(fabric_remove(name), 1);
	assert_false(fabric_file(name, "fabric") || fabric_file(name, "lock"));

	/* The fabric this process is on, even as its only process. */
	setenv("RDMAMOCK_FABRIC", name, 1);
	fabric = (const char *(*)(void))fx_mock_call("rdmamock_fabric");
	assert_string_equal(fabric(), name);
	assert_int_equal(fabric_remove(name), -EBUSY);
	assert_true(fabric_file(name, "fabric"));
}
