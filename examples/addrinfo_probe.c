/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* addrinfo_probe: rdma_resolve_addrinfo and rdma_query_addrinfo (rdma-core
 * v60, RDMACM_1.4), looked up with dlsym so that the program builds against
 * any rdma-core's headers and runs on any librdmacm. It resolves ADDR with
 * a service, waits for RDMA_CM_EVENT_ADDRINFO_RESOLVED (16), queries the
 * result, checks it and frees it:
 *   LD_LIBRARY_PATH=build/mock/lib build/examples/addrinfo_probe [ADDR [PORT]]
 * Exit 0 when every check held, 1 when one did not, 2 when a call failed or
 * the library lacks the calls. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#define EVENT_ADDRINFO_RESOLVED 16 /* enum rdma_cm_event_type, v60 */

typedef int (*resolve_fn)(struct rdma_cm_id *, const char *, const char *,
			  const struct rdma_addrinfo *);
typedef int (*query_fn)(struct rdma_cm_id *, struct rdma_addrinfo **);

static int mismatches;

static void die(const char *call)
{
	fprintf(stderr, "addrinfo_probe: %s: %s\n", call, strerror(errno));
	exit(2);
}

static void check(const char *what, long got, long want)
{
	printf("%-40s %6ld  %s\n", what, got, got == want ? "ok" : "MISMATCH");
	if (got != want) {
		printf("%-40s expected %ld\n", "", want);
		mismatches++;
	}
}

int main(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : "127.0.0.1";
	const char *service = argc > 2 ? argv[2] : "7471";
	resolve_fn resolve = (resolve_fn)dlsym(RTLD_DEFAULT, "rdma_resolve_addrinfo");
	query_fn query = (query_fn)dlsym(RTLD_DEFAULT, "rdma_query_addrinfo");
	struct rdma_event_channel *ch;
	struct rdma_addrinfo *info;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct in_addr want;

	if (!resolve || !query) {
		fprintf(stderr, "addrinfo_probe: librdmacm has no rdma_query_addrinfo (rdma-core < 60)\n");
		return 2;
	}
	if (inet_pton(AF_INET, host, &want) != 1) {
		fprintf(stderr, "addrinfo_probe: %s is not an IPv4 address\n", host);
		return 2;
	}
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (resolve(id, host, service, NULL))
		die("rdma_resolve_addrinfo");
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	/* Bounded: under an injected fault the event may never come. */
	if (poll(&p, 1, 10000) != 1) {
		fprintf(stderr, "addrinfo_probe: no event within 10 s\n");
		exit(2);
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	check("event (ADDRINFO_RESOLVED = 16)", ev->event, EVENT_ADDRINFO_RESOLVED);
	check("event status", ev->status, 0);
	if (rdma_ack_cm_event(ev))
		die("rdma_ack_cm_event");
	if (query(id, &info))
		die("rdma_query_addrinfo");
	check("ai_family (AF_INET)", info->ai_family, AF_INET);
	check("ai_port_space (RDMA_PS_TCP)", info->ai_port_space, RDMA_PS_TCP);
	check("ai_dst_len", info->ai_dst_len, sizeof(struct sockaddr_in));
	check("destination address matches",
	      ((struct sockaddr_in *)info->ai_dst_addr)->sin_addr.s_addr == want.s_addr, 1);
	check("destination port", ntohs(((struct sockaddr_in *)info->ai_dst_addr)->sin_port),
	      atoi(service));
	check("one entry (ai_next NULL)", info->ai_next == NULL, 1);
	errno = 0;
	check("second query fails (-1)", query(id, &info) == -1 ? -1 : 0, -1);
	check("  with ENOENT", errno, ENOENT);
	rdma_freeaddrinfo(info);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	printf("%s: %d mismatch(es)\n", mismatches ? "FAIL" : "PASS", mismatches);
	return mismatches ? 1 : 0;
}
