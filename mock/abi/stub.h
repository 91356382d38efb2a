/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What mock/abi/abi.awk generates for each drop-in library: the calls the
 * mock does not implement, and the older versions of a symbol. Nothing
 * here includes rdma-core's headers: a stub fails by its call's convention
 * whatever the call's arguments, so it takes none.
 *
 * A stub never pretends to succeed. It fails with the errno upstream gives
 * when a provider lacks the operation (EOPNOTSUPP unless the .calls line
 * names another), and the first call of each prints one line:
 * "rdmamock: <call>: not implemented". */
#ifndef RDMAMOCK_ABI_STUB_H
#define RDMAMOCK_ABI_STUB_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "control/mock.h"

#define STUB_SAY(name)                              \
	static int said_;                           \
	int err_ = errno;                           \
	mock_not_implemented((name), &said_);       \
	errno = err_

/* NULL and errno. */
#define STUB_NULL(fn, name, e)                      \
	MOCK_EXPORT void *fn(void);                 \
	MOCK_EXPORT void *fn(void)                  \
	{                                           \
		STUB_SAY(name);                     \
		errno = (e);                        \
		return NULL;                        \
	}

/* -1 and errno; long so that ssize_t and off_t calls get -1 whole. */
#define STUB_MINUS1(fn, name, e)                    \
	MOCK_EXPORT long fn(void);                  \
	MOCK_EXPORT long fn(void)                   \
	{                                           \
		STUB_SAY(name);                     \
		errno = (e);                        \
		return -1;                          \
	}

/* A positive errno value, errno untouched. */
#define STUB_POSITIVE(fn, name, e)                  \
	MOCK_EXPORT int fn(void);                   \
	MOCK_EXPORT int fn(void)                    \
	{                                           \
		STUB_SAY(name);                     \
		return (e);                         \
	}

/* A negative errno value, errno untouched. */
#define STUB_NEGATIVE(fn, name, e)                  \
	MOCK_EXPORT int fn(void);                   \
	MOCK_EXPORT int fn(void)                    \
	{                                           \
		STUB_SAY(name);                     \
		return -(e);                        \
	}

/* 0 as the failure value, errno untouched (ibv_get_device_guid). */
#define STUB_ZERO(fn, name)                         \
	MOCK_EXPORT long fn(void);                  \
	MOCK_EXPORT long fn(void)                   \
	{                                           \
		STUB_SAY(name);                     \
		return 0;                           \
	}

#define STUB_VOID(fn, name)                         \
	MOCK_EXPORT void fn(void);                  \
	MOCK_EXPORT void fn(void)                   \
	{                                           \
		STUB_SAY(name);                     \
	}

/* Bind fn, defined above, as one older version ("sym@VERSION"). */
#define SYMVER(fn, versioned) __asm__(".symver " #fn ", " versioned);

/* An older version that behaves as the default one: a jump to it, so that
 * the call keeps its arguments and result whatever they are. */
#if defined(__x86_64__)
#define ALIAS_JUMP(target) "\tjmp " #target "@PLT\n"
#elif defined(__aarch64__)
#define ALIAS_JUMP(target) "\tb " #target "\n"
#else
#error "mock/abi/stub.h: no jump for this architecture; add one to ALIAS_JUMP"
#endif
#define ALIAS(fn, target, versioned)                              \
	__asm__(".text\n.globl " #fn "\n.type " #fn ", @function\n" \
		#fn ":\n" ALIAS_JUMP(target) ".size " #fn ", .-" #fn "\n" \
		".symver " #fn ", " versioned "\n");

/* Data that providers read and the mock never does: a flag per version. */
#define DATA(sym) MOCK_EXPORT bool sym;
#define DATA_VERSION(fn, sym, versioned) \
	MOCK_EXPORT bool fn;             \
	SYMVER(fn, versioned)

#endif
