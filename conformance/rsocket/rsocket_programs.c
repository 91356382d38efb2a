/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rsockets as rdmacm-utils' programs use them, each program's
 * server and client as two threads of one test (the client on the test's
 * thread): rstream (a verified stream both ways, nonblocking, driven by
 * rpoll), riostream (riowrite into riomap'ed buffers, the reader polling
 * the last byte), rcopy (a file's worth of data, acknowledged, then an
 * orderly close) and udpong (datagrams echoed, lost ones sent again). Every
 * wait is bounded: rpoll for FX_RS_WAIT_MS, a thread for 30 s. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fixtures.h"
#include "rsock.h"

#define THREAD_SECONDS 30

static int accept_one(struct fx_rs_thread *t, int listener)
{
	int fd;

	if (!(fx_rs_poll(listener, POLLIN, FX_RS_WAIT_MS) & POLLIN)) {
		fx_rs_thread_fail(t, "server: no connection to accept within %d ms", FX_RS_WAIT_MS);
		return -1;
	}
	fd = raccept(listener, NULL, NULL);
	if (fd < 0)
		fx_rs_thread_fail(t, "server: raccept: %s", strerror(errno));
	return fd;
}

/* connect(2) the nonblocking way: EINPROGRESS, writable, SO_ERROR. The
 * socket takes `iomaps` mappings from its peer (RDMA_IOMAPSIZE). */
static int connect_nonblocking(int family, int iomaps)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(family, SOCK_STREAM), err = 0;
	socklen_t len = sizeof err;

	fx_rs_addr(family, fx_port(), &addr);
	FX_RS_OK(rsetsockopt(fd, SOL_RDMA, RDMA_IOMAPSIZE, &iomaps, sizeof iomaps));
	FX_RS_OK(rfcntl(fd, F_SETFL, O_NONBLOCK));
	if (rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr))) {
		if (errno != EINPROGRESS)
			fail_msg("rconnect: %s", strerror(errno));
		if (!(fx_rs_poll(fd, POLLOUT, FX_RS_WAIT_MS) & POLLOUT))
			fail_msg("rpoll: the connection is not writable within %d ms", FX_RS_WAIT_MS);
		FX_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
		if (err)
			fail_msg("rconnect (async): %s", strerror(err));
	}
	return fd;
}

/* ---------------------------------------------------------------- rstream */

static const size_t stream_sizes[] = { 64, 4096, 65536, 1 << 20 };

struct stream_side {
	int listener;
	unsigned char *buf;
	size_t in, out; /* bytes of each direction so far */
};

/* One transfer of size bytes each way: as the client, send then receive. */
static const char *exchange(int fd, struct stream_side *s, size_t size, bool client)
{
	const char *err = NULL;

	for (int leg = 0; leg < 2 && !err; leg++) {
		if ((leg == 0) == client) {
			fx_rs_pattern(s->buf, size, s->out);
			err = fx_rs_send_all(fd, s->buf, size);
			s->out += size;
		} else {
			err = fx_rs_recv_all(fd, s->buf, size);
			if (!err && fx_rs_check_pattern(s->buf, size, s->in) >= 0)
				err = "the data received differs from what was sent";
			s->in += size;
		}
	}
	return err;
}

static void rstream_server(struct fx_rs_thread *t)
{
	struct stream_side *s = t->arg;
	int fd = accept_one(t, s->listener);
	const char *err = NULL;

	if (fd < 0)
		return;
	if (rfcntl(fd, F_SETFL, O_NONBLOCK))
		err = "rfcntl(O_NONBLOCK) failed";
	for (size_t i = 0; i < 4 && !err; i++)
		for (int n = 0; n < (stream_sizes[i] <= 4096 ? 20 : 3) && !err; n++)
			err = exchange(fd, s, stream_sizes[i], false);
	if (err)
		fx_rs_thread_fail(t, "server: %s", err);
	rshutdown(fd, SHUT_RDWR);
	rclose(fd);
}

void rstream__two_threads(void **state)
{
	static unsigned char server_buf[1 << 20], client_buf[1 << 20];
	/* Static: the server thread may still run after a failed assertion
	 * ends this frame (the sweep found its writes into a returned one). */
	static struct stream_side server = { .buf = server_buf }, client = { .buf = client_buf };
	static struct fx_rs_thread t;
	const char *err;
	int fd;

	server.listener = fx_rs_listen(AF_INET, fx_port());
	fx_rs_thread_start(&t, rstream_server, &server);
	fd = connect_nonblocking(AF_INET, 0);
	for (size_t i = 0; i < 4; i++)
		for (int n = 0; n < (stream_sizes[i] <= 4096 ? 20 : 3); n++)
			if ((err = exchange(fd, &client, stream_sizes[i], true)))
				fail_msg("client: %zu-byte transfers: %s", stream_sizes[i], err);
	fx_rs_thread_join(&t, THREAD_SECONDS);
	rshutdown(fd, SHUT_RDWR);
	rclose(fd);
	rclose(server.listener);
}

/* ---------------------------------------------------------------- riostream */

#define IO_SIZE 65536
#define IO_ROUNDS 20

struct io_side {
	int fd;
	unsigned char *mapped, *out; /* what the peer writes; what we write */
};

/* Wait, up to FX_RS_WAIT_MS, until the last byte of our mapping says `marker`. */
static bool wait_marker(const struct io_side *s, unsigned char marker)
{
	const unsigned char *last = s->mapped + IO_SIZE - 1;
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned spins = 0; __atomic_load_n(last, __ATOMIC_ACQUIRE) != marker; spins++) {
		if (spins % 4096)
			continue;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 > FX_RS_WAIT_MS)
			return false;
	}
	return true;
}

static const char *io_write(int fd, const unsigned char *buf)
{
	size_t done = 0;

	while (done < IO_SIZE) {
		size_t n = riowrite(fd, buf + done, IO_SIZE - done, (off_t)done, 0);

		if (n != (size_t)-1 && n) {
			done += n;
		} else if (n == 0) {
			return "riowrite: no mapping at the peer";
		} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
			return "riowrite failed";
		} else if (!(fx_rs_poll(fd, POLLOUT, FX_RS_WAIT_MS) & POLLOUT)) {
			return "rpoll: not writable within FX_RS_WAIT_MS";
		}
	}
	return NULL;
}

/* One round: write the peer's mapping, marker in its last byte, or wait
 * for ours and check what came before the marker. */
static const char *io_round(struct io_side *s, unsigned char marker, bool writing)
{
	if (writing) {
		fx_rs_pattern(s->out, IO_SIZE - 1, marker);
		s->out[IO_SIZE - 1] = marker;
		return io_write(s->fd, s->out);
	}
	if (!wait_marker(s, marker))
		return "the marker did not arrive within FX_RS_WAIT_MS";
	if (fx_rs_check_pattern(s->mapped, IO_SIZE - 1, marker) >= 0)
		return "the data before the marker is not what was written";
	return NULL;
}

/* Map, publish the mapping with a 16-byte message each way (the client
 * first), then the rounds: client writes, server answers. */
static const char *io_run(struct io_side *s, bool client)
{
	char sync[16] = { 0 };
	const char *err;

	if (riomap(s->fd, s->mapped, IO_SIZE, PROT_WRITE, 0, 0) != 0)
		return "riomap failed";
	err = client ? fx_rs_send_all(s->fd, sync, sizeof sync) : fx_rs_recv_all(s->fd, sync, sizeof sync);
	if (!err)
		err = client ? fx_rs_recv_all(s->fd, sync, sizeof sync)
			     : fx_rs_send_all(s->fd, sync, sizeof sync);
	for (unsigned char m = 1; m <= IO_ROUNDS && !err; m++)
		err = io_round(s, m, client == (m % 2 == 1));
	if (!err && riounmap(s->fd, s->mapped, IO_SIZE))
		err = "riounmap failed";
	return err;
}

static void riostream_server(struct fx_rs_thread *t)
{
	struct io_side *s = t->arg;
	int listener = s->fd;
	const char *err;

	s->fd = accept_one(t, listener);
	if (s->fd < 0)
		return;
	if ((err = io_run(s, false)))
		fx_rs_thread_fail(t, "server: %s", err);
}

void riostream__two_threads(void **state)
{
	static unsigned char bufs[4][IO_SIZE];
	/* Static, as in rstream__two_threads. */
	static struct io_side server = { .mapped = bufs[0], .out = bufs[1] };
	static struct io_side client = { .mapped = bufs[2], .out = bufs[3] };
	static struct fx_rs_thread t;
	const char *err;
	int listener, one = 1;

	listener = fx_rs_listen(AF_INET, fx_port());
	FX_RS_OK(rsetsockopt(listener, SOL_RDMA, RDMA_IOMAPSIZE, &one, sizeof one));
	server.fd = listener;
	fx_rs_thread_start(&t, riostream_server, &server);
	client.fd = connect_nonblocking(AF_INET, 1);
	if ((err = io_run(&client, true)))
		fail_msg("client: %s", err);
	fx_rs_thread_join(&t, THREAD_SECONDS);
	rclose(client.fd);
	rclose(server.fd);
	rclose(listener);
}

/* ---------------------------------------------------------------- rcopy */

#define FILE_BYTES (3 << 20)

struct copy_server {
	int listener;
	unsigned char *file;
};

/* Blocking calls, as rcopy's: the size, the bytes, the answer, then the
 * end of the stream when the client closes. */
static void rcopy_server(struct fx_rs_thread *t)
{
	struct copy_server *s = t->arg;
	int fd = accept_one(t, s->listener);
	uint64_t size = 0, got = 0;
	char c;

	if (fd < 0)
		return;
	rc_note_step("server: rrecv of the size");
	if (rrecv(fd, &size, sizeof size, MSG_WAITALL) != sizeof size || size != FILE_BYTES) {
		fx_rs_thread_fail(t, "server: the size did not arrive: %s", strerror(errno));
		goto out;
	}
	while (got < size) {
		ssize_t n = rrecv(fd, s->file + got, size - got, 0);

		if (n <= 0) {
			fx_rs_thread_fail(t, "server: rrecv: %zd (%s) after %llu bytes", n,
					  strerror(errno), (unsigned long long)got);
			goto out;
		}
		got += (uint64_t)n;
	}
	rc_note_step("server: the file is in; rsend of the answer, then rrecv of the end");
	if (fx_rs_check_pattern(s->file, size, 0) >= 0)
		fx_rs_thread_fail(t, "server: the file differs from what was sent");
	else if (rsend(fd, "done", 4, 0) != 4)
		fx_rs_thread_fail(t, "server: rsend: %s", strerror(errno));
	else if (rrecv(fd, &c, 1, 0) != 0)
		fx_rs_thread_fail(t, "server: no end of stream after the client closed");
out:
	rshutdown(fd, SHUT_RDWR);
	rclose(fd);
}

void rcopy__two_threads(void **state)
{
	static unsigned char server_file[FILE_BYTES], file[FILE_BYTES];
	static struct copy_server server = { .file = server_file }; /* static: see rstream */
	struct sockaddr_storage addr;
	uint64_t size = FILE_BYTES;
	static struct fx_rs_thread t;
	char ack[4];
	int fd;

	fx_rs_pattern(file, FILE_BYTES, 0);
	server.listener = fx_rs_listen(AF_INET, fx_port());
	fx_rs_thread_start(&t, rcopy_server, &server);
	fx_rs_addr(AF_INET, fx_port(), &addr);
	fd = fx_rsocket(AF_INET, SOCK_STREAM);
	rc_note_step("client: rconnect");
	FX_RS_OK(rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	rc_note_step("client: rsend of the size and the file");
	assert_int_equal(rsend(fd, &size, sizeof size, 0), sizeof size);
	assert_int_equal(rsend(fd, file, FILE_BYTES, 0), FILE_BYTES);
	rc_note_step("client: rrecv of the answer");
	assert_null(fx_rs_recv_all(fd, ack, sizeof ack));
	assert_memory_equal(ack, "done", 4);
	rc_note_step("client: rshutdown and rclose");
	FX_RS_OK(rshutdown(fd, SHUT_RDWR));
	assert_int_equal(rclose(fd), 0);
	rc_note_step("client: waiting for the server");
	fx_rs_thread_join(&t, THREAD_SECONDS);
	rclose(server.listener);
}

/* ---------------------------------------------------------------- udpong */

enum { OP_LOGIN, OP_ECHO, OP_DATA, OP_END };

struct pong_msg {
	uint8_t op;
	uint8_t seq;
	uint16_t len;
	uint32_t data;
	uint8_t payload[960];
};

#define PONG_HDR 8
#define PONG_ECHOES 100
#define PONG_DATA 200

/* Answer every message but data, until END (which says how much data
 * came), or 20 s. */
static void udpong_server(struct fx_rs_thread *t)
{
	int fd = *(int *)t->arg;
	struct timespec start, now;
	uint32_t data = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct sockaddr_storage from;
		socklen_t len = sizeof from;
		struct pong_msg msg;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > THREAD_SECONDS - 2) {
			fx_rs_thread_fail(t, "server: no END within %d s", THREAD_SECONDS - 2);
			return;
		}
		if (!(fx_rs_poll(fd, POLLIN, 100) & POLLIN))
			continue;
		n = rrecvfrom(fd, &msg, sizeof msg, MSG_DONTWAIT, (struct sockaddr *)&from, &len);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n < PONG_HDR || n != PONG_HDR + msg.len) {
			fx_rs_thread_fail(t, "server: rrecvfrom: %zd (%s)", n, strerror(errno));
			return;
		}
		if (msg.op == OP_DATA) {
			data++;
			continue;
		}
		if (msg.op == OP_END)
			msg.data = data;
		if (rsendto(fd, &msg, (size_t)n, 0, (struct sockaddr *)&from, len) != n) {
			fx_rs_thread_fail(t, "server: rsendto: %s", strerror(errno));
			return;
		}
		if (msg.op == OP_END)
			return;
	}
}

/* Send msg, and again every 100 ms, until its answer (same seq) comes. */
static void ping(int fd, struct pong_msg *msg)
{
	struct pong_msg in;
	uint8_t seq = msg->seq;

	for (int tries = 0; tries < 50; tries++) {
		if (rsend(fd, msg, PONG_HDR + msg->len, 0) != PONG_HDR + msg->len)
			fail_msg("rsend: %s", strerror(errno));
		while (fx_rs_poll(fd, POLLIN, 100) & POLLIN) {
			ssize_t n = rrecv(fd, &in, sizeof in, MSG_DONTWAIT);

			if (n >= PONG_HDR && in.seq == seq && in.op == msg->op) {
				if (n != PONG_HDR + msg->len || memcmp(in.payload, msg->payload, msg->len))
					fail_msg("the answer to message %u differs from it", seq);
				*msg = in;
				return;
			}
		}
	}
	fail_msg("message %u (op %u) had no answer within 5 s", seq, msg->op);
}

void udpong__two_threads(void **state)
{
	struct sockaddr_storage addr;
	struct pong_msg msg = { .op = OP_LOGIN };
	static struct fx_rs_thread t; /* static: see rstream__two_threads */
	static int server;
	int client;
	uint8_t seq = 0;

	RC_REQUIRE_CAPABILITY("rsocket-dgram");
	fx_rs_addr(AF_INET, fx_port(), &addr);
	server = fx_rsocket(AF_INET, SOCK_DGRAM);
	FX_RS_OK(rbind(server, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	FX_RS_OK(rfcntl(server, F_SETFL, O_NONBLOCK));
	fx_rs_thread_start(&t, udpong_server, &server);
	client = fx_rsocket(AF_INET, SOCK_DGRAM);
	FX_RS_OK(rfcntl(client, F_SETFL, O_NONBLOCK));
	FX_RS_OK(rconnect(client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	msg.seq = seq++;
	ping(client, &msg);
	for (int i = 0; i < PONG_ECHOES; i++) {
		msg = (struct pong_msg){ .op = OP_ECHO, .seq = seq++, .len = (uint16_t)(56 + i * 9) };
		fx_rs_pattern(msg.payload, msg.len, (size_t)i);
		ping(client, &msg);
	}
	msg = (struct pong_msg){ .op = OP_DATA, .len = 500 };
	for (int i = 0; i < PONG_DATA; i++)
		if (rsend(client, &msg, PONG_HDR + msg.len, 0) != PONG_HDR + msg.len &&
		    errno != EAGAIN && errno != EWOULDBLOCK)
			fail_msg("rsend: %s", strerror(errno));
	msg = (struct pong_msg){ .op = OP_END, .seq = seq++ };
	ping(client, &msg);
	if (msg.data > PONG_DATA)
		fail_msg("the server counted %u data messages of %d sent", msg.data, PONG_DATA);
	fx_rs_thread_join(&t, THREAD_SECONDS);
	rclose(client);
	rclose(server);
}
