/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device under test: which library the suite runs on, and the device
 * profile that says what the device lacks and where it knowingly deviates
 * (fixtures/devices/). librdmamock exports rdmamock_version and the system's
 * rdma-core does not, so the backend needs no build-time flag: the same
 * objects linked either way report the truth. The runner loads the profile
 * before any test forks; the children inherit it. */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "report.h"

bool rc_backend_is_mock(void)
{
	return dlsym(RTLD_DEFAULT, "rdmamock_version") != NULL;
}

const char *rc_backend_name(void)
{
	return rc_backend_is_mock() ? "mock" : "real";
}

/* ------------------------------------------------------------ time */

static struct {
	pthread_once_t once;
	uint64_t (*now)(void);
	int (*poll)(struct pollfd *, nfds_t, int);
} clock_api = { .once = PTHREAD_ONCE_INIT };

static void clock_find(void)
{
	clock_api.now = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "rdmamock_clock_ns");
	clock_api.poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_DEFAULT, "rdmamock_poll");
}

uint64_t rc_now_ns(void)
{
	struct timespec ts;

	pthread_once(&clock_api.once, clock_find);
	if (clock_api.now)
		return clock_api.now();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool rc_clock_jumps(void)
{
	const char *mode = getenv("RDMAMOCK_CLOCK");

	return rc_backend_is_mock() && !(mode && !strcmp(mode, "real"));
}

int rc_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	pthread_once(&clock_api.once, clock_find);
	return clock_api.poll ? clock_api.poll(fds, nfds, timeout_ms) : poll(fds, nfds, timeout_ms);
}

void rc_sleep_ms(int ms)
{
	uint64_t until = rc_now_ns() + (uint64_t)ms * 1000000u, now;

	while ((now = rc_now_ns()) < until)
		rc_poll(NULL, 0, (int)((until - now + 999999) / 1000000));
}

/* ------------------------------------------------------------ the profile */

/* Read by the one parser (fixtures/profile.c); name NULL: none loaded. */
static struct rp_profile profile;
static const char *deviation[CL__COUNT]; /* the reason, or NULL */

const char *rc_profile_name(void)
{
	return profile.name;
}

const struct rp_profile *rc_profile(void)
{
	return &profile;
}

bool rc_profile_replayed(void)
{
	for (int i = 0; i < RP_ATTR__COUNT; i++)
		if (profile.has[i])
			return true;
	return false;
}

bool rc_lacks(const char *capability, const char **reason)
{
	const struct rp_entry *e = rp_lacks(&profile, capability);

	if (e && reason)
		*reason = e->reason;
	return e != NULL;
}

const char *rc_profile_deviation(enum rc_clause_id clause)
{
	return deviation[clause];
}

int rc_profile_load(const char *path)
{
	char err[2048];

	if (rp_load(path, &profile, err, sizeof err)) {
		fprintf(stderr, "rdmacheck: profile %s\n", err);
		return -1;
	}
	for (size_t i = 0; i < profile.ndeviations; i++) {
		const struct rp_entry *e = &profile.deviations[i];
		int c;

		for (c = 0; c < CL__COUNT && strcmp(rc_clauses[c].id, e->word); c++)
			;
		if (c == CL__COUNT) {
			fprintf(stderr, "rdmacheck: profile %s: deviation %s: no such clause in this "
				"binary's registry\n", e->where, e->word);
			rp_free(&profile);
			memset(deviation, 0, sizeof deviation);
			return -1;
		}
		deviation[c] = e->reason;
	}
	return 0;
}
