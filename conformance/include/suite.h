/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The conformance suite's shared declarations: clause registry, test list,
 * skip and divergence reporting. Tests include this and nothing of the
 * runner's internals. */
#ifndef RDMACHECK_SUITE_H
#define RDMACHECK_SUITE_H

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdbool.h>
#include <setjmp.h>
#include <cmocka.h>

/* Clause ids: one per documented rule, declared once in clauses.def. */
enum rc_clause_id {
#define CLAUSE(id, function, source, text, upstream, note) CL_##id,
#include <clauses.def>
#undef CLAUSE
	CL__COUNT
};

struct rc_clause {
	const char *id;       /* "DST_PORT_NO_REMOTE" */
	const char *function; /* "rdma_get_dst_port" */
	const char *source;   /* where the rule is written: "man rdma_get_dst_port(3)" */
	const char *text;     /* the rule, as the source states it */
	const char *upstream; /* NULL, or what upstream does where it differs */
	const char *note;     /* NULL, or why the two differ and what the test checks */
};

extern const struct rc_clause rc_clauses[CL__COUNT];

/* Tests: declared once in tests.def as TEST(function__condition, CLAUSE_ID). */
#define TEST(name, clause) void name(void **state);
#include <tests.def>
#undef TEST

struct rc_test {
	const char *name;
	void (*fn)(void **state);
	enum rc_clause_id clause;
};

extern const struct rc_test rc_tests[];
extern const size_t rc_test_count;

/* Skip the running test with a one-line reason ("rdma_create_event_channel:
 * No such device", "mock-only: observes the fabric"). Never returns. A reason
 * starting "capability:" names a device capability the run lacks; under
 * --strict such a skip is a failure. */
void rc_note_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define RC_SKIP(...)                   \
	do {                           \
		rc_note_skip(__VA_ARGS__); \
		skip();                \
	} while (0)

/* RC_UNDER_ASAN: 1 in a build with AddressSanitizer (gcc or clang), whose
 * own handlers take a SIGSEGV and an exit path over; else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define RC_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RC_UNDER_ASAN 1
#endif
#endif
#ifndef RC_UNDER_ASAN
#define RC_UNDER_ASAN 0
#endif

/* cmocka 2.0 dropped _assert_in_range, which assert_in_range expands to;
 * this works with 1.1.5 and 2.0 alike (the suite runs on Debian sid's
 * cmocka in the rdma-core 65 guest). */
#define RC_ASSERT_IN_RANGE(value, low, high)                                   \
	do {                                                                   \
		unsigned long long rc_v_ = (value);                            \
		if (rc_v_ < (unsigned long long)(low) || rc_v_ > (unsigned long long)(high)) \
			fail_msg("%s = %llu is not in %llu..%llu", #value, rc_v_, \
				 (unsigned long long)(low), (unsigned long long)(high)); \
	} while (0)

/* A call failed: its errno (or returned error) is `want`, and `want` is one
 * the call's errno table says it may give (mock/LIBRARY/LIBRARY.errnos), so a
 * clause and the table cannot disagree. Fails the test naming the call. */
#define RC_ASSERT_ERRNO(call, got, want) rc_assert_errno((call), (got), (want), __FILE__, __LINE__)
void rc_assert_errno(const char *call, int got, int want, const char *file, int line);
/* The same for a call that fails by returning -1 (RC_ASSERT_FAILS) or NULL
 * (RC_ASSERT_FAILS_NULL) and setting errno: expr is the call, name names it. */
#define RC_ASSERT_FAILS(name, expr, want)                                               \
	do {                                                                            \
		long rc_ret_;                                                           \
		errno = 0;                                                              \
		rc_ret_ = (long)(expr);                                                 \
		if (rc_ret_ != -1)                                                      \
			fail_msg("%s returned %ld where it should fail with %s", (name), \
				 rc_ret_, strerror(want));                              \
		RC_ASSERT_ERRNO((name), errno, (want));                                 \
	} while (0)
#define RC_ASSERT_FAILS_NULL(name, expr, want)                                             \
	do {                                                                               \
		const void *rc_ptr_;                                                       \
		errno = 0;                                                                 \
		rc_ptr_ = (expr);                                                          \
		if (rc_ptr_)                                                               \
			fail_msg("%s returned %p where it should fail with %s", (name),    \
				 rc_ptr_, strerror(want));                                 \
		RC_ASSERT_ERRNO((name), errno, (want));                                    \
	} while (0)

/* For a clause whose upstream behaviour differs from its documentation: the
 * test asserts what upstream does, and reports here whether the documented
 * expectation held too. If it held, the divergence is reported as stale. */
void rc_note_documented(bool held);

/* Where the running test is, in a few words ("client: rsend of the file"):
 * should it time out, the runner names the last step it was told. */
void rc_note_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Which library the binary runs on: "mock" when librdmamock is loaded,
 * "real" otherwise. Mock-only checks use rc_require_mock(). */
bool rc_backend_is_mock(void);
const char *rc_backend_name(void);
/* Time as the backend keeps it: on the mock, the fabric's clock, which jumps
 * over what cannot happen (rdmamock_clock_ns, rdmamock_poll); on a real
 * device, CLOCK_MONOTONIC. A clause about a duration measures it with
 * rc_now_ns; a wait for what should not come (nothing more arrives) is an
 * rc_poll, which on the mock returns as soon as the fabric is quiet and
 * nothing is due before its timeout; rc_sleep_ms sleeps on that clock. */
uint64_t rc_now_ns(void);
int rc_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);
void rc_sleep_ms(int ms);
/* Whether that clock jumps: the mock's, but not on wall time
 * (RDMAMOCK_CLOCK=real, which the process that makes a test's fabric
 * picks). A clause whose protocol timeout outlasts a test in real time
 * (the DREQ's 74 s) runs only where it does. */
bool rc_clock_jumps(void);
#define rc_require_clock_jumps(why)                                        \
	do {                                                               \
		if (!rc_clock_jumps())                                     \
			RC_SKIP("the mock's clock, not wall time: %s", (why)); \
	} while (0)
/* A mock-only test checks the mock's own devices: on a device the mock
 * replays (rc_profile_replayed) it skips too. */
#define rc_require_mock(why)                                                     \
	do {                                                                     \
		if (!rc_backend_is_mock())                                       \
			RC_SKIP("mock-only: %s", (why));                         \
		if (rc_profile_replayed())                                       \
			RC_SKIP("mock-only, on the mock's own devices: %s", (why)); \
	} while (0)

/* The device profile (--profile FILE or RDMACHECK_PROFILE): what the device
 * under test lacks and where it knowingly deviates. rc_lacks() is true when
 * the loaded profile declares the capability (one word of [a-z0-9-]) lacking,
 * and then sets *reason (if reason is not NULL); false with no profile.
 * rc_profile_name() is the profile's name, or NULL. A test that finds out at
 * run time that the device lacks a capability skips with a reason starting
 * "capability: CAP (", which the runner checks against the profile. */
bool rc_lacks(const char *capability, const char **reason);
const char *rc_profile_name(void);
/* The loaded profile was recorded from a device (it has attr lines): the
 * mock replays it as its fabric (rdmacheck --profile, RDMAMOCK_PROFILE), so
 * a mock-only test keeps that device rather than load a topology. */
bool rc_profile_replayed(void);
#define RC_REQUIRE_CAPABILITY(cap)                                        \
	do {                                                              \
		const char *rc_lacks_reason_;                             \
		if (rc_lacks((cap), &rc_lacks_reason_))                   \
			RC_SKIP("capability: %s (%s; profile %s)", (cap), \
				rc_lacks_reason_, rc_profile_name());     \
	} while (0)

/* Run fn in a forked child and report how it ended: the signal number that
 * killed it (0 if it exited), its exit code (-1 if killed; 0 if fn returned)
 * and the first non-blank line it wrote to stderr, trimmed, and the whole
 * of stderr (its start, when longer than stderr_text). A child still
 * running after 10 s is killed (signal 9). Used to check calls that upstream
 * crashes on and the mock aborts on. */
struct rc_crash {
	int signal;
	int exit_code;
	char message[256];
	char stderr_text[4096];
};
void rc_run_child(void (*fn)(void *arg), void *arg, struct rc_crash *out);

/* The peer responder of two-host mode (fixtures/peer.c), run by --serve.
 * Weak: a binary without fixtures (the runner's self-test) has none. */
int rc_serve(void) __attribute__((weak));

/* One probe of conformance/processes/posix_faults.c, run by the hidden option
 * --posix-probe NAME in a child started with libfiu's POSIX preload: its
 * output is the probe's result, its return the exit code. Weak, as above. */
int rc_posix_probe(const char *name) __attribute__((weak));

/* --record-profile: the attr lines of the device under test (RDMACHECK_DEVICE,
 * else the first), with comments naming it (fixtures/record.c). 0, or -1
 * after saying why on stderr. Weak, as above. */
int rc_record_device(FILE *f) __attribute__((weak));

#endif
