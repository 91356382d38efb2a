/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Tests of the runner itself. Each ends in one particular way (pass, failed
 * assertion, skip, crash, early exit, hang, hostile output, documented-rule
 * observations, a device profile's capabilities and deviations) so that
 * ci/check-runner.sh can check the runner's verdict on each. Several fail
 * on purpose. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "suite.h"

/* Values the compiler cannot fold, so the checks are real. */
static volatile int one = 1, two = 2;

void assert__equal_passes(void **state)
{
	assert_int_equal(one + one, two);
}

void assert__unequal_fails(void **state)
{
	assert_int_equal(one, two);
}

void skip__with_reason(void **state)
{
	RC_SKIP("reason with <xml> & chars, \"quoted\" 'single'");
}

void skip__not_taken(void **state)
{
	if (one != 1)
		RC_SKIP("never taken");
}

void capability__missing(void **state)
{
	RC_SKIP("capability: mlx5dv (the selftest device has none)");
}

/* Not in the selftest profile: listed as an undeclared capability skip. */
void capability__undeclared(void **state)
{
	RC_SKIP("capability: infiniband (the selftest device has no IB port)");
}

/* Skips when the profile lacks mlx5dv; passes with no profile, where
 * rc_lacks() is false and leaves the reason alone. */
void capability__required(void **state)
{
	const char *reason = "untouched";

	RC_REQUIRE_CAPABILITY("mlx5dv");
	assert_false(rc_lacks("mlx5dv", &reason));
	assert_string_equal(reason, "untouched");
	assert_null(rc_profile_name());
}

/* The selftest profile lists ST_DEVIATION and ST_STALE as deviations: the
 * first fails (a known deviation), the second passes (a stale one). */
void deviation__fails(void **state)
{
	assert_int_equal(one, two);
}

void deviation__passes(void **state)
{
	assert_int_equal(one, one);
}

void crash__sigsegv(void **state)
{
	puts("before the crash");
	raise(SIGSEGV); /* not a wild store, which UBSan would catch first */
}

void crash__abort(void **state)
{
	abort();
}

void exit__before_return(void **state)
{
	exit(0);
}

/* Leaves a child of its own, which the timeout must kill too; the
 * timeout names the last step the test told. */
void hang__with_child(void **state)
{
	rc_note_step("forked; now waiting");
	if (fork() == 0)
		for (;;)
			pause();
	for (;;)
		pause();
}

void output__bad_bytes(void **state)
{
	printf("control:\x01\x02\x1b[0m\x7f bad-utf8:\xff\xfe\xc3 end\n");
	printf("good-utf8:\xc3\xa9\xe2\x9c\x93 markup:& < > ]]> \"'\r\n");
	fputs("on stderr\n", stderr);
	fail_msg("failing on purpose to carry the output into the reports");
}

/* Two observations that held AND to held; held then not-held AND to
 * not-held. */
void diverge__documented_held(void **state)
{
	rc_note_documented(true);
	rc_note_documented(true);
}

void diverge__documented_not_held(void **state)
{
	rc_note_documented(true);
	rc_note_documented(false);
}

static void segv_after_message(void *arg)
{
	fputs("  about to crash  \nsecond line\n", stderr);
	raise(SIGSEGV);
}

void run_child__segv_reported(void **state)
{
	struct rc_crash crash;

	rc_run_child(segv_after_message, NULL, &crash);
	assert_int_equal(crash.signal, SIGSEGV);
	assert_string_equal(crash.message, "about to crash");
}

static void exit_3_after_message(void *arg)
{
	fputs("\n\texiting with 3\r\n", stderr);
	_exit(3);
}

void run_child__exit_code_and_message(void **state)
{
	struct rc_crash crash;

	rc_run_child(exit_3_after_message, NULL, &crash);
	assert_int_equal(crash.signal, 0);
	assert_int_equal(crash.exit_code, 3);
	assert_string_equal(crash.message, "exiting with 3");
}
