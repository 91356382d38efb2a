/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the client and the server share (echo.h). */
#include <poll.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "echo.h"

int echo_wait_recv(struct rdma_cm_id *id, struct ibv_wc *wc)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = id->recv_cq_channel->fd, .events = POLLIN },
				       { .fd = id->channel->fd, .events = POLLIN } };
		struct ibv_cq *cq;
		void *ctx;
		int n = ibv_poll_cq(id->recv_cq, 1, wc);

		if (n)
			return n;
		if (ibv_req_notify_cq(id->recv_cq, 0))
			return -1;
		if ((n = ibv_poll_cq(id->recv_cq, 1, wc)))
			return n;
		n = poll(p, 2, ECHO_WAIT_MS);
		if (n < 0)
			return -1;
		/* The message may have come just before the peer left. */
		if (!p[0].revents)
			return n == 0 || (n = ibv_poll_cq(id->recv_cq, 1, wc)) == 0 ? 0 : n;
		if (ibv_get_cq_event(id->recv_cq_channel, &cq, &ctx))
			return -1;
		ibv_ack_cq_events(cq, 1);
	}
}
