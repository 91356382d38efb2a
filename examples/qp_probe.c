/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qp_probe: connect two RDMA CM ids with QPs in one process, then check
 * what REFERENCE.md records of real rdma-core: both QPs in RTS once
 * established; mlx5dv_modify_qp_udp_sport gives 0 on an mlx5 device in RTS
 * and EOPNOTSUPP elsewhere, never -1, errno untouched; rdma_disconnect
 * moves the caller's QP to ERR, where the call is EOPNOTSUPP.
 *
 * Built against the system's rdma-core (-lrdmacm -libverbs -lmlx5) only:
 *   LD_LIBRARY_PATH=build/mock/lib build/examples/qp_probe [ADDR [PORT]]
 * Exit 0 when every check held, 1 when one did not, 2 when a call failed. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <rdma/rdma_cma.h>

static int mismatches;

static void die(const char *call)
{
	fprintf(stderr, "qp_probe: %s: %s\n", call, strerror(errno));
	exit(2);
}

static void check(const char *what, long got, long want)
{
	printf("%-44s %6ld  %s\n", what, got, got == want ? "ok" : "MISMATCH");
	if (got != want) {
		printf("%-44s expected %ld\n", "", want);
		mismatches++;
	}
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	/* Bounded: under an injected fault the event may never come. */
	if (poll(&p, 1, 10000) != 1) {
		fprintf(stderr, "qp_probe: no event within 10 s (expected %s)\n", rdma_event_str(want));
		exit(2);
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != want) {
		fprintf(stderr, "qp_probe: expected %s, got %s (status %d)\n", rdma_event_str(want),
			rdma_event_str(ev->event), ev->status);
		exit(2);
	}
	return ev;
}

static void ack(struct rdma_cm_event *ev)
{
	if (rdma_ack_cm_event(ev))
		die("rdma_ack_cm_event");
}

static void create_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (rdma_create_qp(id, NULL, &attr))
		die("rdma_create_qp");
}

static enum ibv_qp_state queried(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);

	if (ret) {
		errno = ret;
		die("ibv_query_qp");
	}
	return attr.qp_state;
}

/* mlx5dv_modify_qp_udp_sport with errno watched. */
static void check_sport(const char *what, struct ibv_qp *qp, int want)
{
	int ret;

	errno = 0;
	ret = mlx5dv_modify_qp_udp_sport(qp, 0xc0de);
	check(what, ret, want);
	check("  errno left untouched (0)", errno, 0);
}

int main(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : "127.0.0.1";
	const char *port = argc > 2 ? argv[2] : "7473";
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP, .ai_flags = RAI_NUMERICHOST }, *res;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *listener = NULL, *client = NULL, *server;
	struct rdma_cm_event *ev;
	bool mlx5;

	if (rdma_getaddrinfo(host, port, &hints, &res))
		die("rdma_getaddrinfo");
	sch = rdma_create_event_channel();
	cch = rdma_create_event_channel();
	if (!sch || !cch)
		die("rdma_create_event_channel");
	if (rdma_create_id(sch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_create_id(cch, &client, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(listener, res->ai_dst_addr) || rdma_listen(listener, 4))
		die("rdma_bind_addr/rdma_listen");
	if (rdma_resolve_addr(client, NULL, res->ai_dst_addr, 2000))
		die("rdma_resolve_addr");
	ack(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	create_qp(client);
	check("client QP after rdma_create_qp (INIT=1)", queried(client->qp), IBV_QPS_INIT);
	if (rdma_resolve_route(client, 2000))
		die("rdma_resolve_route");
	ack(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (rdma_connect(client, &param))
		die("rdma_connect");

	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	server = ev->id;
	create_qp(server);
	if (rdma_accept(server, &param))
		die("rdma_accept");
	ack(ev);
	ack(expect(cch, RDMA_CM_EVENT_ESTABLISHED));
	ack(expect(sch, RDMA_CM_EVENT_ESTABLISHED));
	check("client QP when established (RTS=3)", queried(client->qp), IBV_QPS_RTS);
	check("server QP when established (RTS=3)", queried(server->qp), IBV_QPS_RTS);

	mlx5 = mlx5dv_is_supported(client->verbs->device);
	printf("device %s: %s\n", ibv_get_device_name(client->verbs->device),
	       mlx5 ? "mlx5" : "not mlx5");
	check_sport("udp_sport on the RTS QP (0, or EOPNOTSUPP=95)", client->qp, mlx5 ? 0 : EOPNOTSUPP);

	if (rdma_disconnect(client))
		die("rdma_disconnect");
	check("client QP after rdma_disconnect (ERR=6)", client->qp->state, IBV_QPS_ERR);
	check_sport("udp_sport on the ERR QP (EOPNOTSUPP=95)", client->qp, EOPNOTSUPP);
	ack(expect(sch, RDMA_CM_EVENT_DISCONNECTED));
	if (rdma_disconnect(server))
		die("rdma_disconnect (server)");
	ack(expect(cch, RDMA_CM_EVENT_DISCONNECTED));

	rdma_destroy_qp(server);
	rdma_destroy_qp(client);
	rdma_destroy_id(server);
	rdma_destroy_id(client);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
	rdma_freeaddrinfo(res);
	printf("%s: %d mismatch(es)\n", mismatches ? "FAIL" : "PASS", mismatches);
	return mismatches ? 1 : 0;
}
