/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The echo server (echo.h): accepts connections one at a time and sends
 * each message back.
 *   echo_server [-a ADDR] [-p PORT] [-n COUNT]
 * serves COUNT connections (0, the default: until killed). A connection
 * that fails is reported on stderr and the server goes on; it exits 1 if
 * it cannot listen or take a request. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "echo.h"

/* One connection: its message back to it. */
static void serve(struct rdma_cm_id *id)
{
	char buf[ECHO_MAX];
	struct ibv_mr *mr = rdma_reg_msgs(id, buf, sizeof buf);
	struct ibv_wc wc;
	int n;

	if (!mr) {
		fprintf(stderr, "echo_server: rdma_reg_msgs: %s\n", strerror(errno));
		rdma_reject(id, NULL, 0);
		return;
	}
	if (rdma_post_recv(id, NULL, buf, sizeof buf, mr) || rdma_accept(id, NULL)) {
		fprintf(stderr, "echo_server: rdma_post_recv/rdma_accept: %s\n", strerror(errno));
		goto out;
	}
	n = echo_wait_recv(id, &wc);
	if (n <= 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "echo_server: no message: %s\n",
			n < 0 ? strerror(errno) : n == 0 ? "the client left" : ibv_wc_status_str(wc.status));
		goto disconnect;
	}
	if (rdma_post_send(id, NULL, buf, wc.byte_len, mr, 0) || rdma_get_send_comp(id, &wc) <= 0)
		fprintf(stderr, "echo_server: the reply: %s\n", strerror(errno));
	else if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "echo_server: the reply failed: %s\n", ibv_wc_status_str(wc.status));
disconnect:
	rdma_disconnect(id);
out:
	rdma_destroy_qp(id); /* first: a receive may still use mr */
	rdma_dereg_mr(mr);
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	const char *addr = "127.0.0.1", *port = "7471";
	struct rdma_cm_id *listen_id, *id;
	long count = 0;
	int c;

	while ((c = getopt(argc, argv, "a:p:n:")) != -1) {
		if (c == 'a')
			addr = optarg;
		else if (c == 'p')
			port = optarg;
		else if (c == 'n')
			count = strtol(optarg, NULL, 10);
		else
			return 2;
	}
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		fprintf(stderr, "echo_server: rdma_getaddrinfo %s:%s: %s\n", addr, port, strerror(errno));
		return 1;
	}
	if (rdma_create_ep(&listen_id, res, NULL, &attr) || rdma_listen(listen_id, 4)) {
		fprintf(stderr, "echo_server: rdma_create_ep/rdma_listen: %s\n", strerror(errno));
		rdma_freeaddrinfo(res);
		return 1;
	}
	rdma_freeaddrinfo(res);
	for (long n = 0; !count || n < count; n++) {
		if (rdma_get_request(listen_id, &id)) {
			fprintf(stderr, "echo_server: rdma_get_request: %s\n", strerror(errno));
			rdma_destroy_ep(listen_id);
			return 1;
		}
		serve(id);
		rdma_destroy_ep(id);
	}
	rdma_destroy_ep(listen_id);
	return 0;
}
