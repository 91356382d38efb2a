/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The service thread: what upstream's listen, connect, UDP and keepalive
 * service threads do, in one thread per process. It watches the CM channel
 * of every socket it serves and
 *   - at a listener, answers connection requests and queues the sockets
 *     that reach ESTABLISHED for raccept (so a client's rconnect completes
 *     whether or not the server is in raccept, as a TCP backlog does);
 *   - at a connection, takes DISCONNECTED: the socket is disconnected and
 *     its QP flushed, so that a sleeping rrecv, rsend or rpoll wakes;
 *   - at a datagram socket, answers the SIDR requests of its peers;
 *   - sends the keepalives of SO_KEEPALIVE sockets.
 * It starts with the first socket served and ends with the last.
 *
 * The thread handles a socket only while holding svc_lock, and only if the
 * socket is still served: after rs_svc_remove returns, it never touches
 * the socket again. Lock order: svc_lock, then a socket's lock; so neither
 * call here is made with a socket's lock held. */
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "rsocket.h"

static pthread_mutex_t svc_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t svc_stopped = PTHREAD_COND_INITIALIZER;
static struct rsocket **served;
static int nserved, served_cap;
static pthread_t svc_thread;
static bool running, stopping;
static int wake_fd = -1;

static void wake(void)
{
	uint64_t one = 1;

	if (write(wake_fd, &one, sizeof one) != sizeof one)
		mock_log("rsockets: cannot wake the service thread");
}

static int find(const struct rsocket *rs, int fd)
{
	for (int i = 0; i < nserved; i++)
		if (served[i] == rs && (fd < 0 || rs->cm_id->channel->fd == fd))
			return i;
	return -1;
}

/* Each served stream socket's keepalive, under its lock (rsetsockopt
 * changes them): sent when due, and the time to the next in *timeout. */
static void keepalives(uint64_t now, int *timeout)
{
	for (int i = 0; i < nserved; i++) {
		struct rsocket *rs = served[i];
		uint64_t period, due = 0;

		if (rs->type != SOCK_STREAM)
			continue;
		pthread_mutex_lock(&rs->lock);
		period = (uint64_t)rs->keepalive_time * 1000;
		if (rs->keepalive && period) {
			if (!rs->keepalive_due)
				rs->keepalive_due = now + period;
			if (rs->keepalive_due <= now) {
				rs_send_keepalive(rs);
				rs->keepalive_due = now + period;
			}
			due = rs->keepalive_due;
		}
		pthread_mutex_unlock(&rs->lock);
		if (due && (*timeout < 0 || due - now < (uint64_t)*timeout))
			*timeout = (int)(due - now);
	}
}

static void handle(struct rsocket *rs)
{
	if (rs->type == SOCK_DGRAM) {
		ds_svc_request(rs);
		return;
	}
	if (rs_listening(rs))
		rs_svc_listen_event(rs);
	else
		rs_svc_conn_event(rs);
}

static void *svc_run(void *unused)
{
	struct pollfd *pfd = NULL;
	struct rsocket **snap = NULL;
	int cap = 0;

	pthread_mutex_lock(&svc_lock);
	while (!stopping) {
		int n = nserved + 1, timeout = -1;
		uint64_t drained;

		if (n > cap) {
			cap = n * 2;
			pfd = realloc(pfd, (size_t)cap * sizeof *pfd);
			snap = realloc(snap, (size_t)cap * sizeof *snap);
			if (!pfd || !snap)
				mock_abort("rsockets", "out of memory in the service thread");
		}
		pfd[0] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
		for (int i = 0; i < nserved; i++) {
			snap[i + 1] = served[i];
			pfd[i + 1] = (struct pollfd){ .fd = served[i]->cm_id->channel->fd,
						      .events = POLLIN };
		}
		keepalives(rs_now_ms(), &timeout);
		pthread_mutex_unlock(&svc_lock);
		/* On the fabric's clock, as rpoll: its jumps reach the keepalives. */
		fab_clock_poll(pfd, (nfds_t)n, timeout);
		pthread_mutex_lock(&svc_lock);
		if (pfd[0].revents && read(wake_fd, &drained, sizeof drained) < 0)
			continue;
		for (int i = 1; i < n && !stopping; i++)
			if (pfd[i].revents && find(snap[i], pfd[i].fd) >= 0)
				handle(snap[i]);
	}
	pthread_mutex_unlock(&svc_lock);
	free(pfd);
	free(snap);
	return NULL;
}

int rs_svc_add(struct rsocket *rs)
{
	int ret = 0;

	/* The thread reads the channel only when poll says so, but an event
	 * librdmacm swallows must not leave it blocked. */
	if (rs_fd_nonblock(rs->cm_id->channel->fd, true))
		return -1;
	pthread_mutex_lock(&svc_lock);
	while (stopping && !pthread_equal(pthread_self(), svc_thread))
		pthread_cond_wait(&svc_stopped, &svc_lock);
	if (wake_fd < 0)
		wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (nserved == served_cap) {
		int cap = served_cap ? served_cap * 2 : 16;
		struct rsocket **grown = realloc(served, (size_t)cap * sizeof *grown);

		if (!grown) {
			pthread_mutex_unlock(&svc_lock);
			return mock_errno(ENOMEM);
		}
		served = grown;
		served_cap = cap;
	}
	if (wake_fd < 0 || (!running && (ret = pthread_create(&svc_thread, NULL, svc_run, NULL)))) {
		pthread_mutex_unlock(&svc_lock);
		return mock_errno(ret ? ret : errno);
	}
	running = true;
	if (find(rs, -1) < 0)
		served[nserved++] = rs;
	rs->in_svc = true;
	pthread_mutex_unlock(&svc_lock);
	wake();
	return 0;
}

static void unserve(int i)
{
	served[i]->in_svc = false;
	served[i] = served[--nserved];
}

void rs_svc_remove(struct rsocket *rs)
{
	struct rsocket **children = NULL;
	int nchildren = 0, i;
	bool stop = false;

	pthread_mutex_lock(&svc_lock);
	i = find(rs, -1);
	if (i >= 0)
		unserve(i);
	/* A listener's connections still being accepted go with it. */
	for (i = 0; i < nserved; i++) {
		if (served[i]->listener != rs)
			continue;
		struct rsocket **grown = realloc(children, (size_t)(nchildren + 1) * sizeof *grown);

		if (!grown)
			break;
		children = grown;
		children[nchildren++] = served[i];
		unserve(i--);
	}
	if (!nserved && running && !pthread_equal(pthread_self(), svc_thread)) {
		stopping = stop = true;
		wake();
	}
	pthread_mutex_unlock(&svc_lock);
	for (i = 0; i < nchildren; i++) {
		rdma_reject(children[i]->cm_id, NULL, 0);
		rs_free(children[i]);
	}
	free(children);
	if (!stop)
		return;
	pthread_join(svc_thread, NULL);
	pthread_mutex_lock(&svc_lock);
	running = stopping = false;
	pthread_cond_broadcast(&svc_stopped);
	pthread_mutex_unlock(&svc_lock);
}

void rs_svc_kick(void)
{
	pthread_mutex_lock(&svc_lock);
	if (running)
		wake();
	pthread_mutex_unlock(&svc_lock);
}
