/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the tools share (tool.h). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

const char *tool_name = "rdmamock";

void tool_dropin_dir(char *dir, size_t size)
{
	char self[PATH_MAX], wanted[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n < 0) {
		fprintf(stderr, "%s: /proc/self/exe: %s\n", tool_name, strerror(errno));
		exit(2);
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(wanted, sizeof wanted, "%s/../mock/lib", self);
	if (!realpath(wanted, self) || snprintf(dir, size, "%s", self) >= (int)size) {
		fprintf(stderr, "%s: no drop-in libraries at %s\n", tool_name, wanted);
		exit(2);
	}
	snprintf(wanted, sizeof wanted, "%s/librdmacm.so.1", dir);
	if (access(wanted, R_OK)) {
		fprintf(stderr, "%s: %s: %s (make mock builds it)\n", tool_name, wanted, strerror(errno));
		exit(2);
	}
}

void *tool_mock_call(const char *dir, const char *name)
{
	char path[PATH_MAX + 32];
	void *lib, *fn;

	snprintf(path, sizeof path, "%s/librdmamock.so.0", dir);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "%s: %s\n", tool_name, dlerror());
		exit(2);
	}
	fn = dlsym(lib, name);
	if (!fn) {
		fprintf(stderr, "%s: %s has no %s\n", tool_name, path, name);
		exit(2);
	}
	return fn;
}

void tool_check_faults(const char *dir, const char *what, const char *spec)
{
	int (*check)(const char *, char *, size_t) =
		(int (*)(const char *, char *, size_t))tool_mock_call(dir, "rdmamock_fault_check");
	char err[256];

	if (check(spec, err, sizeof err) < 0) {
		fprintf(stderr, "%s: %s: %s\n", tool_name, what, err);
		exit(2);
	}
}

char *tool_append(char *list, const char *sep, const char *item)
{
	size_t n = list ? strlen(list) + strlen(sep) : 0;
	char *out = realloc(list, n + strlen(item) + 1);

	if (!out) {
		fprintf(stderr, "%s: out of memory\n", tool_name);
		exit(2);
	}
	if (n)
		strcat(out, sep);
	else
		out[0] = '\0';
	strcat(out, item);
	return out;
}

void tool_library_path(const char *dir)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char *path = tool_append(NULL, "", dir);

	if (old && *old)
		path = tool_append(path, ":", old);
	setenv("LD_LIBRARY_PATH", path, 1);
	free(path);
}
