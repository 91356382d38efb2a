/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The suite's side of the errno tables: every errno a test expects of a
 * call must be one the call's table allows, on either backend. */
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include "errnos.h"
#include "suite.h"

static const char *errno_name(int e)
{
	const char *name = e > 0 ? strerrorname_np(e) : gai_strerror(e);

	return name ? name : "?";
}

#define fail_at(file, line, ...)                 \
	do {                                     \
		print_error("ERROR: " __VA_ARGS__); \
		print_error("\n");               \
		_fail((file), (line));           \
	} while (0)

void rc_assert_errno(const char *call, int got, int want, const char *file, int line)
{
	const struct errno_row *r;
	int n = errno_table(call, &r);

	if (got != want)
		fail_at(file, line, "%s: errno %s (%d), expected %s (%d)", call, errno_name(got), got,
			errno_name(want), want);
	for (int i = 0; i < n; i++)
		if (r[i].value == want)
			return;
	fail_at(file, line, "%s gave %s (%d), which its errno table does not list%s", call,
		errno_name(want), want, n ? "" : " (the call has no table)");
}
