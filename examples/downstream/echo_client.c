/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The echo client (echo.h), and its command line:
 *   echo_client [-a ADDR] [-p PORT] MESSAGE
 * prints the reply, or the reason it failed on stderr (exit 1). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "echo.h"

static int say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The completion of the one request posted on cq (send or receive). */
static int one_completion(struct rdma_cm_id *id, int send, struct ibv_wc *wc, char *err,
			  size_t errlen)
{
	int n = send ? rdma_get_send_comp(id, wc) : echo_wait_recv(id, wc);

	if (n < 0)
		return say(err, errlen, "%s: %s", send ? "rdma_get_send_comp" : "the reply",
			   strerror(errno));
	if (n == 0)
		return say(err, errlen, "the server left without a reply");
	if (wc->status != IBV_WC_SUCCESS) {
		const char *what = send ? "send" : "receive";

		return say(err, errlen, "the %s failed: %s", what, ibv_wc_status_str(wc->status)); /* fault path */
	}
	return 0;
}

int echo_call(const char *addr, const char *port, const char *msg, char *reply, size_t size,
	      char *err, size_t errlen)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	char sbuf[ECHO_MAX], rbuf[ECHO_MAX];
	struct ibv_mr *smr = NULL, *rmr = NULL;
	size_t len = strlen(msg) + 1;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	int ret = -1;

	if (len > ECHO_MAX)
		return say(err, errlen, "the message is longer than %d bytes", ECHO_MAX - 1);
	if (rdma_getaddrinfo(addr, port, &hints, &res))
		return say(err, errlen, "rdma_getaddrinfo %s:%s: %s", addr, port, strerror(errno));
	if (rdma_create_ep(&id, res, NULL, &attr)) {
		say(err, errlen, "rdma_create_ep: %s", strerror(errno));
		rdma_freeaddrinfo(res);
		return -1;
	}
	rdma_freeaddrinfo(res);
	memcpy(sbuf, msg, len);
	if (!(rmr = rdma_reg_msgs(id, rbuf, sizeof rbuf)) || !(smr = rdma_reg_msgs(id, sbuf, len))) {
		say(err, errlen, "rdma_reg_msgs: %s", strerror(errno));
		goto out;
	}
	if (rdma_post_recv(id, NULL, rbuf, sizeof rbuf, rmr)) {
		say(err, errlen, "rdma_post_recv: %s", strerror(errno));
		goto out;
	}
	if (rdma_connect(id, NULL)) {
		if (errno == ECONNREFUSED)
			say(err, errlen, "the server rejected the connection"); /* fault path */
		else
			say(err, errlen, "rdma_connect: %s", strerror(errno));
		goto out;
	}
	if (rdma_post_send(id, NULL, sbuf, len, smr, 0)) {
		say(err, errlen, "rdma_post_send: %s", strerror(errno));
		goto disconnect;
	}
	if (one_completion(id, 1, &wc, err, errlen) || one_completion(id, 0, &wc, err, errlen))
		goto disconnect;
	snprintf(reply, size, "%.*s", (int)(wc.byte_len ? wc.byte_len - 1 : 0), rbuf);
	ret = 0;
disconnect:
	rdma_disconnect(id);
out:
	rdma_destroy_qp(id); /* first: its posted receive still uses rmr */
	if (smr)
		rdma_dereg_mr(smr);
	if (rmr)
		rdma_dereg_mr(rmr);
	rdma_destroy_ep(id);
	return ret;
}

#ifndef ECHO_NO_MAIN
int main(int argc, char **argv)
{
	const char *addr = "127.0.0.1", *port = "7471";
	char reply[ECHO_MAX], err[256];
	int c;

	while ((c = getopt(argc, argv, "a:p:")) != -1) {
		if (c == 'a')
			addr = optarg;
		else if (c == 'p')
			port = optarg;
		else
			return 2;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: echo_client [-a ADDR] [-p PORT] MESSAGE\n");
		return 2;
	}
	if (echo_call(addr, port, argv[optind], reply, sizeof reply, err, sizeof err)) {
		fprintf(stderr, "echo_client: %s\n", err);
		return 1;
	}
	printf("%s\n", reply);
	return 0;
}
#endif
