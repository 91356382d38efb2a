/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: threads on one channel and one fabric at once: ids
 * destroyed while another thread reads their events (rdma_destroy_id
 * waits for the acks of what was read), and client threads connecting,
 * transferring and destroying against a server thread while ids are
 * destroyed under a reader. make check runs these under ASan too, and
 * make check-tsan under ThreadSanitizer; the same over two processes is
 * in processes.c. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "stress.h"

/* A real device does each round in milliseconds, the mock in microseconds. */
static int scaled(int mock, int real)
{
	return rc_backend_is_mock() ? mock : real;
}

void rdma_destroy_id__while_events_are_read(void **state)
{
	int rounds = scaled(400, 200), events;
	const char *err;

	fx_require_backend();
	err = fx_stress_destroy_while_read(rounds, &events);
	if (err)
		fail_msg("%s", err);
	print_message("%d ids destroyed, %d of their events read by the other thread\n", rounds,
		      events);
	assert_true(events <= rounds);
}

struct server {
	int stop[2], served;
	sem_t ready;
	const char *error;
};

static void server_ready(void *arg)
{
	sem_post(arg);
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	s->error = fx_stress_serve(s->stop[0], server_ready, &s->ready, &s->served);
	sem_post(&s->ready); /* a server that failed before listening */
	return NULL;
}

struct racer {
	int rounds, events;
	const char *error;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;

	r->error = fx_stress_destroy_while_read(r->rounds, &r->events);
	return NULL;
}

/* Four client threads of many connections each, a server thread, and a
 * pair of threads destroying ids under a reader, all at once: every
 * connection ends with DISCONNECTED at the server, nothing fails. */
void rdma_connect__client_threads(void **state)
{
	static struct server s;
	struct racer r = { .rounds = scaled(300, 50) };
	int threads = 4, rounds = scaled(30, 5);
	struct timespec deadline;
	pthread_t server, racer;
	const char *err;

	fx_need_local_passive();
	fx_require_backend();
	memset(&s, 0, sizeof s);
	if (pipe(s.stop) || sem_init(&s.ready, 0, 0))
		fail_msg("pipe or sem_init: %s", strerror(errno));
	assert_int_equal(pthread_create(&server, NULL, server_main, &s), 0);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	if (sem_timedwait(&s.ready, &deadline))
		fail_msg("the server thread did not listen within 10 s");
	assert_int_equal(pthread_create(&racer, NULL, racer_main, &r), 0);
	err = fx_stress_clients(threads, rounds);
	pthread_join(racer, NULL);
	close(s.stop[1]);
	pthread_join(server, NULL);
	close(s.stop[0]);
	if (err || s.error || r.error)
		fail_msg("%s", err ? err : s.error ? s.error : r.error);
	print_message("%d connections served; %d ids destroyed under a reader\n", s.served, r.rounds);
	assert_int_equal(s.served, threads * rounds);
}
