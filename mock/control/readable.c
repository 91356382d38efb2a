/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Whether the process may read a range of its memory, asked on the data
 * path (inline data, copied at the post): the readable mappings of
 * /proc/self/maps, kept sorted and read again only when a range is not in
 * them, so that the usual answer costs a search and no system call. A
 * mapping removed since the last read still counts as readable: the copy
 * then faults as upstream's does, unannounced. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock.h"

struct range {
	uintptr_t lo, hi;
};

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct range *ranges;
static size_t nranges;

/* Readable mappings that touch merged into one range each run. */
static void reread_locked(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	struct range *r = NULL;
	size_t n = 0, cap = 0;
	char perms[8];

	if (!maps)
		return;
	while (fscanf(maps, "%lx-%lx %7s%*[^\n]", &lo, &hi, perms) == 3) {
		if (perms[0] != 'r')
			continue;
		if (n && r[n - 1].hi == lo) {
			r[n - 1].hi = hi;
			continue;
		}
		if (n == cap) {
			struct range *grown = realloc(r, (cap = cap ? cap * 2 : 64) * sizeof *r);

			if (!grown)
				break;
			r = grown;
		}
		r[n++] = (struct range){ lo, hi };
	}
	fclose(maps);
	free(ranges);
	ranges = r;
	nranges = n;
}

static bool inside_locked(uintptr_t lo, uintptr_t hi)
{
	size_t a = 0, b = nranges;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (ranges[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < nranges && ranges[a].lo <= lo && hi <= ranges[a].hi;
}

static bool readable(const void *src, size_t len)
{
	uintptr_t lo = (uintptr_t)src, hi = lo + len;
	bool ok;

	if (hi < lo)
		return false;
	pthread_rwlock_rdlock(&lock);
	ok = inside_locked(lo, hi);
	pthread_rwlock_unlock(&lock);
	if (ok)
		return true;
	pthread_rwlock_wrlock(&lock);
	reread_locked();
	ok = inside_locked(lo, hi);
	pthread_rwlock_unlock(&lock);
	return ok;
}

void mock_copy_in(void *dst, const void *src, size_t len, const char *call, const char *what)
{
	if (len && !readable(src, len)) {
		mock_log("%s: %s at %p (%zu bytes) is not readable memory; the provider copies it as "
			 "this does, and the process gets SIGSEGV", call, what, src, len);
		raise(SIGSEGV);
		/* A handler that returned: the copy faults as upstream's. */
	}
	memcpy(dst, src, len);
}
