/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A UCP client and server that meet through a socket address, as UCX
 * programs do with its connection managers (rdmacm on an RDMA device):
 *
 *   ucp_sockaddr -s [-p PORT]          the server: accept one client
 *   ucp_sockaddr -c ADDR [-p PORT]     the client
 *
 * The client sends a small message (eager) and a large one (rendezvous:
 * RDMA READ or WRITE under UCX's transports) with tag messages; the server
 * checks each byte and sends both back; the client checks them too. Each
 * side prints one line per step and its endpoint's lanes (which say the
 * connection manager and transports used), and exits 0 when every check
 * held, 1 when one failed, 2 when a step did not finish within 30 s. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#define TAG 0x5e7
#define SMALL 64
#define LARGE (256 * 1024)
#define STEP_SECONDS 30

static const char *me = "ucp_sockaddr";
static ucp_worker_h worker;
static ucp_conn_request_h conn_request;

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", me);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Progress the worker until the request completes; its status. */
static ucs_status_t wait_for(void *req, const char *what)
{
	double deadline = now() + STEP_SECONDS;
	ucs_status_t status;

	if (req == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
		ucp_worker_progress(worker);
		if (now() > deadline)
			die(2, "%s: not done after %d s", what, STEP_SECONDS);
	}
	ucp_request_free(req);
	return status;
}

static void on_request(ucp_conn_request_h req, void *arg)
{
	(void)arg;
	conn_request = req;
}

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7);
}

static void check(const uint8_t *buf, size_t len, uint8_t seed, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != (uint8_t)(seed + i * 7))
			die(1, "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, buf[i],
			    (uint8_t)(seed + i * 7));
	printf("%s: %zu bytes verified\n", what, len);
}

static void send_msg(ucp_ep_h ep, const void *buf, size_t len, const char *what)
{
	ucp_request_param_t param = { 0 };
	ucs_status_t status = wait_for(ucp_tag_send_nbx(ep, buf, len, TAG, &param), what);

	if (status != UCS_OK)
		die(1, "%s: %s", what, ucs_status_string(status));
	printf("%s: sent %zu bytes\n", what, len);
}

static void recv_msg(void *buf, size_t len, const char *what)
{
	ucp_request_param_t param = { 0 };
	ucs_status_t status = wait_for(ucp_tag_recv_nbx(worker, buf, len, TAG, (ucp_tag_t)-1, &param), what);

	if (status != UCS_OK)
		die(1, "%s: %s", what, ucs_status_string(status));
}

static void close_ep(ucp_ep_h ep)
{
	ucp_request_param_t param = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = 0 };
	ucs_status_t status = wait_for(ucp_ep_close_nbx(ep, &param), "close");

	/* The peer may close first: its going is not an error here. */
	if (status != UCS_OK && status != UCS_ERR_CONNECTION_RESET && status != UCS_ERR_ENDPOINT_TIMEOUT)
		die(1, "close: %s", ucs_status_string(status));
	printf("closed\n");
}

int main(int argc, char **argv)
{
	ucp_params_t params = { .field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_TAG };
	ucp_worker_params_t wparams = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
					 .thread_mode = UCS_THREAD_MODE_SINGLE };
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(13370) };
	static uint8_t small[SMALL], large[LARGE];
	const char *peer = NULL;
	bool server = false;
	ucp_context_h ctx;
	ucp_config_t *config;
	ucp_ep_h ep;
	int c;

	while ((c = getopt(argc, argv, "sc:p:")) != -1) {
		switch (c) {
		case 's': server = true; break;
		case 'c': peer = optarg; break;
		case 'p': addr.sin_port = htons((uint16_t)atoi(optarg)); break;
		default: die(2, "usage: %s -s [-p PORT] | -c ADDR [-p PORT]", me);
		}
	}
	if (server == (peer != NULL))
		die(2, "usage: %s -s [-p PORT] | -c ADDR [-p PORT]", me);
	if (peer && inet_pton(AF_INET, peer, &addr.sin_addr) != 1)
		die(2, "%s: not an IPv4 address", peer);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (ucp_config_read(NULL, NULL, &config) != UCS_OK)
		die(2, "ucp_config_read failed");
	if (ucp_init(&params, config, &ctx) != UCS_OK)
		die(2, "ucp_init failed");
	ucp_config_release(config);
	if (ucp_worker_create(ctx, &wparams, &worker) != UCS_OK)
		die(2, "ucp_worker_create failed");

	if (server) {
		ucp_listener_params_t lparams = {
			.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
			.sockaddr = { .addr = (struct sockaddr *)&addr, .addrlen = sizeof addr },
			.conn_handler = { .cb = on_request },
		};
		ucp_listener_h listener;
		ucs_status_t status = ucp_listener_create(worker, &lparams, &listener);
		double deadline = now() + STEP_SECONDS;

		if (status != UCS_OK)
			die(2, "ucp_listener_create: %s", ucs_status_string(status));
		printf("listening on port %d\n", ntohs(addr.sin_port));
		while (!conn_request) {
			ucp_worker_progress(worker);
			if (now() > deadline)
				die(2, "no client after %d s", STEP_SECONDS);
		}
		ucp_ep_params_t eparams = { .field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST,
					    .conn_request = conn_request };
		if ((status = ucp_ep_create(worker, &eparams, &ep)) != UCS_OK)
			die(1, "ucp_ep_create(conn_request): %s", ucs_status_string(status));
		recv_msg(small, sizeof small, "small");
		check(small, sizeof small, 0x11, "small");
		recv_msg(large, sizeof large, "large");
		check(large, sizeof large, 0x22, "large");
		ucp_ep_print_info(ep, stdout);
		send_msg(ep, small, sizeof small, "small back");
		send_msg(ep, large, sizeof large, "large back");
		/* The client closes first, once it has both back. */
		recv_msg(small, 1, "client done");
		close_ep(ep);
		ucp_listener_destroy(listener);
	} else {
		ucp_ep_params_t eparams = {
			.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
				      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
			.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
			.sockaddr = { .addr = (struct sockaddr *)&addr, .addrlen = sizeof addr },
			.err_mode = UCP_ERR_HANDLING_MODE_PEER,
		};
		ucs_status_t status = ucp_ep_create(worker, &eparams, &ep);

		if (status != UCS_OK)
			die(1, "ucp_ep_create(%s): %s", peer, ucs_status_string(status));
		fill(small, sizeof small, 0x11);
		fill(large, sizeof large, 0x22);
		send_msg(ep, small, sizeof small, "small");
		send_msg(ep, large, sizeof large, "large");
		memset(small, 0, sizeof small);
		memset(large, 0, sizeof large);
		recv_msg(small, sizeof small, "small back");
		check(small, sizeof small, 0x11, "small back");
		recv_msg(large, sizeof large, "large back");
		check(large, sizeof large, 0x22, "large back");
		ucp_ep_print_info(ep, stdout);
		send_msg(ep, small, 1, "done");
		close_ep(ep);
	}
	ucp_worker_destroy(worker);
	ucp_cleanup(ctx);
	printf("%s: every check held\n", server ? "server" : "client");
	return 0;
}
