/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A tiny RDMA echo service: a client sends one message over an RC
 * connection, the server sends it back. Written against librdmacm's
 * rdma_create_ep API only; it knows nothing of the mock. */
#ifndef ECHO_H
#define ECHO_H

#include <stddef.h>

#define ECHO_MAX 256             /* the longest message, with its NUL */
#define ECHO_WAIT_MS 10000       /* the longest either side waits for the other */

/* Sends msg to the echo server at addr:port and puts what comes back in
 * reply. 0, or -1 with the reason in err ("the server rejected the
 * connection", "the send failed: ..."). */
int echo_call(const char *addr, const char *port, const char *msg, char *reply, size_t size,
	      char *err, size_t errlen);

struct rdma_cm_id;
struct ibv_wc;
/* A receive's completion on a synchronous id (rdma_create_ep): 1 with it
 * in wc; 0 when the peer left first (any CM event on the id's own
 * channel: its DISCONNECTED) or was silent for ECHO_WAIT_MS; -1 on an
 * error. rdma_get_recv_comp would wait for ever. */
int echo_wait_recv(struct rdma_cm_id *id, struct ibv_wc *wc);

#endif
