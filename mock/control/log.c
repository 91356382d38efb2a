/* Messages from the mock: one line each on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mock.h"

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
	abort();
}

void mock_not_implemented(const char *call, int *said)
{
	if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		mock_log("%s: not implemented", call);
}
