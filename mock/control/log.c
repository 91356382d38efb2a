/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Messages from the mock: one line each on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock.h"

#ifdef RDMACHECK_COVERAGE
/* gcov writes a process's counts at exit, which abort() skips: a coverage
 * build writes them first, so that its report shows the paths that end in
 * a misuse report (the suite's children that misuse on purpose). */
void __gcov_dump(void);
#define coverage_dump() __gcov_dump()
#else
#define coverage_dump() ((void)0)
#endif

__attribute__((format(printf, 2, 0)))
static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof line, fmt, ap);
	fprintf(stderr, "rdmamock: %s%s\n", prefix, line);
}

void mock_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void mock_abort(const char *call, const char *fmt, ...)
{
	char prefix[128];
	va_list ap;

	snprintf(prefix, sizeof prefix, "%s: ", call);
	va_start(ap, fmt);
	vlog(prefix, fmt, ap);
	va_end(ap);
	coverage_dump();
	abort();
}

void mock_not_implemented(const char *call, int *said)
{
	if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		mock_log("%s: not implemented", call);
}

/* getpid(2) is a system call each time (glibc keeps no copy): the mock
 * asks it on its hot paths (the ledger, doorbells, DMA), so it keeps one,
 * forgotten in a forked child. */
static pid_t cached_pid;
static pthread_once_t pid_once = PTHREAD_ONCE_INIT;

void mock_pid_forget(void)
{
	__atomic_store_n(&cached_pid, 0, __ATOMIC_RELAXED);
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, mock_pid_forget);
}

pid_t mock_pid(void)
{
	pid_t pid = __atomic_load_n(&cached_pid, __ATOMIC_RELAXED);

	if (!pid) {
		pthread_once(&pid_once, watch_forks);
		pid = getpid();
		__atomic_store_n(&cached_pid, pid, __ATOMIC_RELAXED);
	}
	return pid;
}

bool mock_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}
