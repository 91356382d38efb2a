/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The echo client against the echo server, two processes on one fabric of
 * the mock; and, through rdmamock.h, the two failures the client must
 * report: a connection the server's side rejects, and a send that
 * completes in error. Run with the drop-in libraries first on
 * LD_LIBRARY_PATH and RDMAMOCK_FABRIC naming a fabric (make check). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/rdma_cma.h>
#include <rdmamock.h>

#include "echo.h"

#define ADDR "127.0.0.1"
#define PORT "7471"

static pid_t server;

static int start_server(void **state)
{
	struct timespec tick = { .tv_nsec = 10000000 };

	(void)state;
	server = fork();
	if (server == 0) {
		execl("./echo_server", "echo_server", "-a", ADDR, "-p", PORT, (char *)NULL);
		_exit(127);
	}
	if (server < 0)
		return -1;
	/* Listening: the fabric says so (5 s at most). */
	for (int i = 0; i < 500; i++) {
		if (rdmamock_listening(RDMA_PS_TCP, (uint16_t)atoi(PORT)) > 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	fprintf(stderr, "test_echo: the server does not listen on %s after 5 s\n", PORT);
	return -1;
}

static int stop_server(void **state)
{
	int status;

	(void)state;
	kill(server, SIGTERM);
	return waitpid(server, &status, 0) == server ? 0 : -1;
}

static void add_fault(const char *fmt, ...)
{
	char spec[256], err[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(spec, sizeof spec, fmt, ap);
	va_end(ap);
	if (rdmamock_fault_add(spec, err, sizeof err) < 0)
		fail_msg("rdmamock_fault_add %s: %s", spec, err);
}

static void echo_round_trip(void **state)
{
	char reply[ECHO_MAX], err[256] = "";

	(void)state;
	assert_int_equal(echo_call(ADDR, PORT, "hello", reply, sizeof reply, err, sizeof err), 0);
	assert_string_equal(reply, "hello");
}

static void echo_rejected(void **state)
{
	char reply[ECHO_MAX], err[256] = "";

	(void)state;
	add_fault("rdmamock/rdmacm/event/rejected port=%s nth=1", PORT);
	assert_int_equal(echo_call(ADDR, PORT, "hello", reply, sizeof reply, err, sizeof err), -1);
	assert_string_equal(err, "the server rejected the connection");
	assert_int_equal(rdmamock_fault_fired("rdmamock/rdmacm/event/rejected"), 1);
	assert_int_equal(rdmamock_fault_clear(), 1);
}

static void echo_send_fails(void **state)
{
	char reply[ECHO_MAX], err[256] = "";

	(void)state;
	add_fault("rdmamock/ibverbs/wc status=IBV_WC_REM_ACCESS_ERR pid=%d nth=1", (int)getpid());
	assert_int_equal(echo_call(ADDR, PORT, "hello", reply, sizeof reply, err, sizeof err), -1);
	assert_string_equal(err, "the send failed: remote access error");
	assert_int_equal(rdmamock_fault_fired("rdmamock/ibverbs/wc"), 1);
	assert_int_equal(rdmamock_fault_clear(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(echo_round_trip),
		cmocka_unit_test(echo_rejected),
		cmocka_unit_test(echo_send_fails),
		/* The server went on after both. */
		cmocka_unit_test(echo_round_trip),
	};

	return cmocka_run_group_tests(tests, start_server, stop_server);
}
