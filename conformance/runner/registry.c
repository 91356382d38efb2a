/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The clause registry and the test list, built from the X-macro lists. The
 * angle-bracket includes let the -I path choose which lists: the suite's
 * (conformance/) or the runner's own selftest (conformance/runner/selftest/). */
#include "suite.h"

const struct rc_clause rc_clauses[CL__COUNT] = {
#define CLAUSE(id, function, source, text, upstream, note) \
	[CL_##id] = { #id, function, source, text, upstream, note },
#include <clauses.def>
#undef CLAUSE
};

const struct rc_test rc_tests[] = {
#define TEST(name, clause) { #name, name, CL_##clause },
#include <tests.def>
#undef TEST
};

const size_t rc_test_count = sizeof(rc_tests) / sizeof(rc_tests[0]);
