/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmamock and the drop-in libraries: messages, aborts on
 * caller bugs, and fault points. Nothing here is part of rdmamock.h. */
#ifndef RDMAMOCK_MOCK_H
#define RDMAMOCK_MOCK_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* Symbols a drop-in library exports; everything else stays hidden. The
 * version scripts (the .map files) then give each its rdma-core version. */
#define MOCK_EXPORT __attribute__((visibility("default")))

/* One line on stderr, prefixed "rdmamock: ". */
void mock_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One of the mock's switches (RDMAMOCK_STRICT, RDMAMOCK_LEDGER,
 * RDMAMOCK_TRACE): on when set, not empty and not "0". */
bool mock_env_on(const char *name);
/* Copy len bytes a caller handed over by address (inline data): from
 * memory the process may not read, say so naming the call and what, then
 * SIGSEGV, the signal upstream's copy gets there. */
void mock_copy_in(void *dst, const void *src, size_t len, const char *call, const char *what);
/* This process's pid, without a system call each time. */
pid_t mock_pid(void);
void mock_pid_forget(void); /* in a forked child, before mock_pid */

/* The caller did something upstream would crash on (a NULL it dereferences):
 * say which call and why in one line, then abort, so the bug is obvious. */
_Noreturn void mock_abort(const char *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A call the mock does not implement: one line, the first time only. */
void mock_not_implemented(const char *call, int *said);

#define MOCK_REQUIRE(cond, call, ...)                  \
	do {                                           \
		if (!(cond))                           \
			mock_abort((call), __VA_ARGS__); \
	} while (0)

/* The ledger (ledger.c): every live object the program holds, per process.
 * A call checks membership before it touches an object it was given, so
 * a destroyed or foreign pointer is reported, not read. At exit, with
 * RDMAMOCK_LEDGER=1 or RDMAMOCK_STRICT=1, what is left is reported as
 * leaks; RDMAMOCK_STRICT=1 makes every report abort after printing. */
enum ledger_kind {
	LEDGER_CHANNEL, /* rdma_event_channel */
	LEDGER_ID,      /* rdma_cm_id */
	LEDGER_EVENT,   /* rdma_cm_event, until acked */
	LEDGER_ADDRINFO,
	LEDGER_PD,
	LEDGER_MR,
	LEDGER_COMP_CHANNEL,
	LEDGER_CQ,
	LEDGER_QP,
	LEDGER_SRQ,
	LEDGER_AH,
	LEDGER_DM,
	LEDGER_MW,
	LEDGER_KINDS
};
/* call: the public call creating it, a string literal; the outermost
 * public call of the thread (ledger_enter) wins. */
void ledger_add(enum ledger_kind kind, const void *ptr, const char *call);
/* Whether it was live; it is not any more, destroyed by call. */
bool ledger_del(enum ledger_kind kind, const void *ptr, const char *call);
bool ledger_live(enum ledger_kind kind, const void *ptr);
/* Abort, naming call, unless ptr is live: "<kind> %p is not a live
 * <kind> (destroyed by <call>...)". */
void ledger_require(enum ledger_kind kind, const void *ptr, const char *call);
/* fn on each live object of kind this process made, until it returns
 * true; whether one did. fn runs under the ledger's lock: it must not
 * call the ledger. */
bool ledger_each(enum ledger_kind kind, bool (*fn)(const void *ptr, void *arg), void *arg);
/* An identity for the leak report ("qp_num 0x11", "port 7471"). */
void ledger_note(enum ledger_kind kind, const void *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, a string as it is (an event's name): copied, not formatted. */
void ledger_label(enum ledger_kind kind, const void *ptr, const char *label);
/* The library's own object (librdmacm's PD per device): not a leak. */
void ledger_internal(enum ledger_kind kind, const void *ptr);
/* Misuse upstream lets pass or hangs on: "rdmamock: CALL: why" on stderr,
 * and an abort under RDMAMOCK_STRICT. */
void ledger_misuse(const char *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A destroying call, just before its fault point: if the fault fires the
 * object stays live, and that is the fault's doing, not a leak of the
 * program's (mock_fault tells the ledger with ledger_fault_checked). */
void ledger_destroying(enum ledger_kind kind, const void *ptr);
void ledger_fault_checked(bool fired);
/* A destroy the library refused though the program asked (its device had a
 * fatal error: EIO, and EBUSY for what the kept objects hold): kept, not a
 * leak of the program's. */
void ledger_kept(enum ledger_kind kind, const void *ptr);
const char *ledger_enter(const char *call);
void ledger_leave(const char **was);
/* Objects created anywhere inside this public call carry its name. */
#define LEDGER_CALL(call) \
	const char *ledger_was_ __attribute__((cleanup(ledger_leave), unused)) = ledger_enter(call)

/* Fault points (libfiu): every public entry point asks once, by the name
 * "rdmamock/<library>/<function>". When the point is enabled and fires, the
 * call fails with the errno given as the point's failinfo (EIO if 0). */
bool mock_fault(const char *point, int *err);
struct fault_action;
/* A port taken down by a fault, back up after its ms= if it has one. */
void mock_port_down(const char *device, const struct fault_action *act);

/* The fabric's faults (fault.c): what a fault that fires does, and where a
 * point is reached, to match the faults' targets against (an unset field:
 * NULL, -1, or pid 0 for this process). */
struct fault_action {
	char point[64];
	int value; /* errno= or status= */
	bool has_value;
	uint8_t data[64]; /* data=: private data */
	uint8_t data_len;
	bool has_data;
	unsigned ms; /* ms=: how long (a delay, or a port's time down) */
	bool has_ms;
};
struct fault_where {
	const char *dev;
	const struct sockaddr *addr;
	int port;
	int64_t qpn;
	int pid;
};
/* Whether the fabric has any fault, or one at point (or counts the
 * points reached): cheap, for a path that would have to work out its
 * fault_where first. */
bool fault_any(void);
bool fault_at(const char *point);
/* Whether a fault of the table fires at point, here; its action in out. */
bool fault_fire(const char *point, const struct fault_where *where, struct fault_action *out);

#define FAULT_NAME(lib, fn) "rdmamock/" lib "/" fn

/* -1 and errno (most librdmacm calls, ibv_*_device). */
#define FAULT_MINUS1(lib, fn)                                    \
	do {                                                     \
		int fault_err_;                                  \
		if (mock_fault(FAULT_NAME(lib, fn), &fault_err_)) { \
			errno = fault_err_;                      \
			return -1;                               \
		}                                                \
	} while (0)

/* NULL and errno (constructors). */
#define FAULT_NULL(lib, fn)                                      \
	do {                                                     \
		int fault_err_;                                  \
		if (mock_fault(FAULT_NAME(lib, fn), &fault_err_)) { \
			errno = fault_err_;                      \
			return NULL;                             \
		}                                                \
	} while (0)

/* A positive errno value returned, errno untouched (verbs, mlx5dv). */
#define FAULT_POSITIVE(lib, fn)                                  \
	do {                                                     \
		int fault_err_;                                  \
		if (mock_fault(FAULT_NAME(lib, fn), &fault_err_)) \
			return fault_err_;                       \
	} while (0)

/* Store e in errno and return -1: the librdmacm convention. */
static inline int mock_errno(int e)
{
	errno = e;
	return -1;
}

/* Wait for an event channel's fd as a blocking read of the kernel's file
 * would: -1 with EAGAIN if the caller made it non-blocking, -1 with EINTR on
 * a signal, 0 once it is readable. */
static inline int mock_wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int flags = fcntl(fd, F_GETFL);

	if (flags >= 0 && (flags & O_NONBLOCK))
		return mock_errno(EAGAIN);
	if (poll(&pfd, 1, -1) < 0)
		return -1;
	return 0;
}

#endif
