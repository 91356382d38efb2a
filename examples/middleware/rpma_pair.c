/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A librpma server and client, one program:
 *   rpma_pair server ADDR PORT   registers memory, accepts one connection,
 *                                receives a message, checks what was written
 *   rpma_pair client ADDR PORT   writes, flushes (visibility), reads back,
 *                                sends the message
 * Each step prints one line; each side gives up after TIMEOUT_S seconds
 * (saying at which step) and exits non-zero on any error or mismatch.
 */
#include <librpma.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT_S 20
#define REGION 4096
#define DATA_LEN 1024
#define MSG_LEN 64
#define MESSAGE "rpma_pair: the client is done"

/* What the server hands the client in its accept's private data. */
struct descriptors {
	uint8_t mr_size;
	uint8_t pcfg_size;
	char desc[64];
};

static const char *role;
static const char *volatile step = "start";

static void on_alarm(int sig)
{
	static const char head[] = ": timed out at step: ";

	(void)sig;
	if (write(2, role, strlen(role)) < 0 || write(2, head, sizeof head - 1) < 0 ||
	    write(2, (const char *)step, strlen((const char *)step)) < 0 || write(2, "\n", 1) < 0)
		_exit(124);
	_exit(124);
}

/* One line per step; a failed step ends the program. */
static void done(const char *what, int ret)
{
	if (ret) {
		printf("%s: %s: FAILED: %s\n", role, what, rpma_err_2str(ret));
		exit(1);
	}
	printf("%s: %s: ok\n", role, what);
	fflush(stdout);
}

static void verify(const char *what, int ok)
{
	printf("%s: %s: %s\n", role, what, ok ? "ok" : "MISMATCH");
	fflush(stdout);
	if (!ok)
		exit(1);
}

static void fill(unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
}

static int filled(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != (unsigned char)(i * 7 + 3))
			return 0;
	return 1;
}

static void *region(void)
{
	void *p = NULL;

	if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), REGION)) {
		printf("%s: posix_memalign: FAILED\n", role);
		exit(1);
	}
	memset(p, 0, REGION);
	return p;
}

static void expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret;

	step = rpma_utils_conn_event_2str(want);
	ret = rpma_conn_next_event(conn, &ev);
	if (!ret && ev != want) {
		printf("%s: connection event: FAILED: %s, expected %s\n", role,
		       rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(want));
		exit(1);
	}
	done(rpma_utils_conn_event_2str(want), ret);
}

/* Waits for the next completion and checks its opcode and status. */
static void complete(struct rpma_conn *conn, const char *what, enum ibv_wc_opcode opcode)
{
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret, got = 0;

	step = what;
	ret = rpma_conn_get_cq(conn, &cq);
	while (!ret) {
		ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			ret = rpma_cq_wait(cq);
		else
			break;
	}
	if (!ret && (wc.status != IBV_WC_SUCCESS || wc.opcode != opcode)) {
		printf("%s: %s: FAILED: completion %s, opcode %d (expected %d)\n", role, what,
		       ibv_wc_status_str(wc.status), wc.opcode, opcode);
		exit(1);
	}
	done(what, ret);
}

static int server(const char *addr, const char *port)
{
	unsigned char *data = region(), *msg = region();
	struct rpma_conn_private_data pdata;
	struct rpma_mr_local *data_mr, *msg_mr;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_peer_cfg *pcfg;
	struct ibv_context *ctx;
	struct descriptors d;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	size_t size;

	step = "device";
	done("rpma_utils_get_ibv_context (local)",
	     rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
	done("rpma_peer_new", rpma_peer_new(ctx, &peer));
	done("rpma_mr_reg (write and read target, flush visibility)",
	     rpma_mr_reg(peer, data, REGION,
			 RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				 RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &data_mr));
	done("rpma_mr_reg (receive buffer)", rpma_mr_reg(peer, msg, MSG_LEN, RPMA_MR_USAGE_RECV,
							  &msg_mr));

	/* The client learns the region and whether it is persistent from us. */
	done("rpma_peer_cfg_new", rpma_peer_cfg_new(&pcfg));
	done("rpma_mr_get_descriptor_size", rpma_mr_get_descriptor_size(data_mr, &size));
	d.mr_size = (uint8_t)size;
	done("rpma_mr_get_descriptor", rpma_mr_get_descriptor(data_mr, d.desc));
	done("rpma_peer_cfg_get_descriptor_size", rpma_peer_cfg_get_descriptor_size(pcfg, &size));
	d.pcfg_size = (uint8_t)size;
	if (d.mr_size + d.pcfg_size > sizeof d.desc)
		done("descriptors fit", RPMA_E_NOMEM);
	done("rpma_peer_cfg_get_descriptor", rpma_peer_cfg_get_descriptor(pcfg, d.desc + d.mr_size));

	step = "listen";
	done("rpma_ep_listen", rpma_ep_listen(peer, addr, port, &ep));
	printf("%s: listening on %s:%s\n", role, addr, port);
	fflush(stdout);
	step = "connection request";
	done("rpma_ep_next_conn_req", rpma_ep_next_conn_req(ep, NULL, &req));
	done("rpma_conn_req_recv", rpma_conn_req_recv(req, msg_mr, 0, MSG_LEN, NULL));
	pdata.ptr = &d;
	pdata.len = sizeof d;
	done("rpma_conn_req_connect (accept)", rpma_conn_req_connect(&req, &pdata, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	/* The client sends only after its write, flush and read are done. */
	complete(conn, "message received (rpma_recv)", IBV_WC_RECV);
	verify("message", !strcmp((const char *)msg, MESSAGE));
	verify("region written by the client", filled(data, DATA_LEN));

	expect_event(conn, RPMA_CONN_CLOSED);
	step = "teardown";
	done("rpma_conn_disconnect", rpma_conn_disconnect(conn));
	done("rpma_conn_delete", rpma_conn_delete(&conn));
	done("rpma_ep_shutdown", rpma_ep_shutdown(&ep));
	done("rpma_peer_cfg_delete", rpma_peer_cfg_delete(&pcfg));
	done("rpma_mr_dereg", rpma_mr_dereg(&msg_mr) ?: rpma_mr_dereg(&data_mr));
	done("rpma_peer_delete", rpma_peer_delete(&peer));
	free(data);
	free(msg);
	printf("%s: all steps passed\n", role);
	return 0;
}

static int client(const char *addr, const char *port)
{
	unsigned char *src = region(), *dst = region(), *msg = region();
	struct rpma_mr_local *src_mr, *dst_mr, *msg_mr;
	struct rpma_conn_private_data pdata;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	const struct descriptors *d;
	struct ibv_context *ctx;
	struct rpma_peer *peer;
	size_t remote_size = 0;

	step = "device";
	done("rpma_utils_get_ibv_context (remote)",
	     rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
	done("rpma_peer_new", rpma_peer_new(ctx, &peer));
	fill(src, DATA_LEN);
	strcpy((char *)msg, MESSAGE);
	done("rpma_mr_reg (write source)", rpma_mr_reg(peer, src, REGION, RPMA_MR_USAGE_WRITE_SRC,
						       &src_mr));
	done("rpma_mr_reg (read target)", rpma_mr_reg(peer, dst, REGION, RPMA_MR_USAGE_READ_DST,
						      &dst_mr));
	done("rpma_mr_reg (send source)", rpma_mr_reg(peer, msg, MSG_LEN, RPMA_MR_USAGE_SEND,
						      &msg_mr));

	step = "connect";
	done("rpma_conn_req_new", rpma_conn_req_new(peer, addr, port, NULL, &req));
	done("rpma_conn_req_connect", rpma_conn_req_connect(&req, NULL, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	done("rpma_conn_get_private_data", rpma_conn_get_private_data(conn, &pdata));
	if (!pdata.ptr || pdata.len < sizeof *d)
		done("server's descriptors present", RPMA_E_INVAL);
	d = pdata.ptr;
	done("rpma_mr_remote_from_descriptor",
	     rpma_mr_remote_from_descriptor(d->desc, d->mr_size, &remote));
	done("rpma_mr_remote_get_size", rpma_mr_remote_get_size(remote, &remote_size));
	verify("remote region size", remote_size == REGION);
	done("rpma_peer_cfg_from_descriptor",
	     rpma_peer_cfg_from_descriptor(d->desc + d->mr_size, d->pcfg_size, &pcfg));
	done("rpma_conn_apply_remote_peer_cfg", rpma_conn_apply_remote_peer_cfg(conn, pcfg));

	step = "write";
	done("rpma_write", rpma_write(conn, remote, 0, src_mr, 0, DATA_LEN,
				      RPMA_F_COMPLETION_ON_ERROR, NULL));
	step = "flush";
	done("rpma_flush (visibility)", rpma_flush(conn, remote, 0, DATA_LEN,
						   RPMA_FLUSH_TYPE_VISIBILITY,
						   RPMA_F_COMPLETION_ALWAYS, NULL));
	/* librpma flushes for visibility with a read after the write. */
	complete(conn, "flush completed", IBV_WC_RDMA_READ);
	step = "read";
	done("rpma_read", rpma_read(conn, dst_mr, 0, remote, 0, DATA_LEN,
				    RPMA_F_COMPLETION_ALWAYS, NULL));
	complete(conn, "read completed", IBV_WC_RDMA_READ);
	verify("read back what was written", filled(dst, DATA_LEN));

	step = "send";
	done("rpma_send", rpma_send(conn, msg_mr, 0, MSG_LEN, RPMA_F_COMPLETION_ALWAYS, NULL));
	complete(conn, "send completed", IBV_WC_SEND);

	step = "teardown";
	done("rpma_conn_disconnect", rpma_conn_disconnect(conn));
	expect_event(conn, RPMA_CONN_CLOSED);
	done("rpma_conn_delete", rpma_conn_delete(&conn));
	done("rpma_mr_remote_delete", rpma_mr_remote_delete(&remote));
	done("rpma_peer_cfg_delete", rpma_peer_cfg_delete(&pcfg));
	done("rpma_mr_dereg", rpma_mr_dereg(&msg_mr) ?: rpma_mr_dereg(&dst_mr) ?:
				      rpma_mr_dereg(&src_mr));
	done("rpma_peer_delete", rpma_peer_delete(&peer));
	free(src);
	free(dst);
	free(msg);
	printf("%s: all steps passed\n", role);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client ADDR PORT\n", argv[0]);
		return 2;
	}
	role = argv[1];
	signal(SIGALRM, on_alarm);
	alarm(TIMEOUT_S);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return !strcmp(role, "server") ? server(argv[2], argv[3]) : client(argv[2], argv[3]);
}
