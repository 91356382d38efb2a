/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* port_probe: connect two RDMA CM ids (with QPs) in one process and print what
 * rdma_get_src_port / rdma_get_dst_port return at each step, checking the
 * values real rdma-core gives (shared REFERENCE.md, measured on rxe).
 *
 * Built against the system's rdma-core (-lrdmacm) and nothing else, so it
 * runs unmodified on real hardware or on the mock:
 *   LD_LIBRARY_PATH=build/mock/lib build/examples/port_probe [ADDR [PORT]]
 * Exit 0 when every value matched, 1 when one did not, 2 when a call
 * failed (the message names it). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

static int mismatches;

static void die(const char *call)
{
	fprintf(stderr, "port_probe: %s: %s\n", call, strerror(errno));
	exit(2);
}

static void show(const char *step, struct rdma_cm_id *id, unsigned want_src, unsigned want_dst)
{
	unsigned src = ntohs(rdma_get_src_port(id)), dst = ntohs(rdma_get_dst_port(id));
	bool ok = (want_src == ~0u ? src != 0 : src == want_src) && dst == want_dst;

	printf("%-36s src %5u  dst %5u  %s\n", step, src, dst, ok ? "ok" : "MISMATCH");
	if (!ok) {
		mismatches++;
		printf("%-36s expected src %s%u dst %u\n", "", want_src == ~0u ? "nonzero, not " : "",
		       want_src == ~0u ? 0 : want_src, want_dst);
	}
}

/* The next event on ch must be `want`; it is acked unless kept. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
				    bool keep)
{
	struct rdma_cm_event *ev;

	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	/* Bounded: under an injected fault the event may never come. */
	if (poll(&p, 1, 10000) != 1) {
		fprintf(stderr, "port_probe: no event within 10 s (expected %s)\n", rdma_event_str(want));
		exit(2);
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != want) {
		fprintf(stderr, "port_probe: expected %s, got %s (status %d)\n", rdma_event_str(want),
			rdma_event_str(ev->event), ev->status);
		exit(2);
	}
	if (!keep) {
		if (rdma_ack_cm_event(ev))
			die("rdma_ack_cm_event");
		return NULL;
	}
	return ev;
}

/* Each side gets a QP: without one, both ends of a connection on one device
 * are QP 0, and a real device's IB CM rejects the second as stale. */
static void create_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (rdma_create_qp(id, NULL, &attr))
		die("rdma_create_qp");
}

static void parse_addr(const char *host, unsigned port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai;
	char service[8];

	snprintf(service, sizeof service, "%u", port);
	if (getaddrinfo(host, service, &hints, &ai)) {
		fprintf(stderr, "port_probe: %s is not a numeric address\n", host);
		exit(2);
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
}

int main(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : "127.0.0.1";
	unsigned port = argc > 2 ? (unsigned)atoi(argv[2]) : 7471;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_event_channel *server_ch, *client_ch;
	struct rdma_cm_id *listener = NULL, *client = NULL, *server;
	struct rdma_cm_event *ev;
	struct sockaddr_storage addr;
	unsigned client_port;

	parse_addr(host, port, &addr);
	server_ch = rdma_create_event_channel();
	client_ch = rdma_create_event_channel();
	if (!server_ch || !client_ch)
		die("rdma_create_event_channel");
	if (rdma_create_id(server_ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_create_id(client_ch, &client, NULL, RDMA_PS_TCP))
		die("rdma_create_id");

	show("fresh id", client, 0, 0);
	if (rdma_bind_addr(listener, (struct sockaddr *)&addr))
		die("rdma_bind_addr");
	show("listener after rdma_bind_addr", listener, port, 0);
	if (rdma_listen(listener, 8))
		die("rdma_listen");
	show("listener after rdma_listen", listener, port, 0);

	if (rdma_resolve_addr(client, NULL, (struct sockaddr *)&addr, 2000))
		die("rdma_resolve_addr");
	show("client right after rdma_resolve_addr", client, 0, port);
	expect(client_ch, RDMA_CM_EVENT_ADDR_RESOLVED, false);
	show("client after ADDR_RESOLVED", client, ~0u, port);
	client_port = ntohs(rdma_get_src_port(client));
	create_qp(client);
	if (rdma_resolve_route(client, 2000))
		die("rdma_resolve_route");
	expect(client_ch, RDMA_CM_EVENT_ROUTE_RESOLVED, false);
	show("client after ROUTE_RESOLVED", client, client_port, port);

	if (rdma_connect(client, &param))
		die("rdma_connect");
	ev = expect(server_ch, RDMA_CM_EVENT_CONNECT_REQUEST, true);
	server = ev->id;
	show("server id at CONNECT_REQUEST", server, port, client_port);
	create_qp(server);
	if (rdma_accept(server, &param))
		die("rdma_accept");
	if (rdma_ack_cm_event(ev))
		die("rdma_ack_cm_event");

	expect(client_ch, RDMA_CM_EVENT_ESTABLISHED, false);
	expect(server_ch, RDMA_CM_EVENT_ESTABLISHED, false);
	show("client when established", client, client_port, port);
	show("server when established", server, port, client_port);
	show("listener after a connection", listener, port, 0);

	if (rdma_disconnect(client))
		die("rdma_disconnect (client)");
	expect(server_ch, RDMA_CM_EVENT_DISCONNECTED, false);
	if (rdma_disconnect(server))
		die("rdma_disconnect (server)");
	expect(client_ch, RDMA_CM_EVENT_DISCONNECTED, false);
	show("client after DISCONNECTED", client, client_port, port);
	show("server after DISCONNECTED", server, port, client_port);

	rdma_destroy_qp(server);
	rdma_destroy_qp(client);
	rdma_destroy_id(server);
	rdma_destroy_id(client);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(server_ch);
	rdma_destroy_event_channel(client_ch);
	printf("%s: %d mismatch(es)\n", mismatches ? "FAIL" : "PASS", mismatches);
	return mismatches ? 1 : 0;
}
