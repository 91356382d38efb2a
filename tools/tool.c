/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the tools share (tool.h). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

const char *tool_name = "rdmamock";

/* Whether dir holds the drop-ins: its real path in out. */
static bool dropins_at(const char *dir, char *out, size_t size)
{
	char real[PATH_MAX], lib[PATH_MAX + 32];

	if (!realpath(dir, real) || snprintf(out, size, "%s", real) >= (int)size)
		return false;
	snprintf(lib, sizeof lib, "%s/librdmacm.so.1", out);
	return access(lib, R_OK) == 0;
}

void tool_dropin_dir(char *dir, size_t size)
{
	char self[PATH_MAX], build[PATH_MAX + 16], staged[PATH_MAX + sizeof TOOL_DROPIN_REL + 1];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n < 0) {
		fprintf(stderr, "%s: /proc/self/exe: %s\n", tool_name, strerror(errno));
		exit(2);
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(build, sizeof build, "%s/../mock/lib", self);
	snprintf(staged, sizeof staged, "%s/%s", self, TOOL_DROPIN_REL);
	if (dropins_at(build, dir, size) || dropins_at(staged, dir, size) ||
	    dropins_at(TOOL_DROPIN_ABS, dir, size))
		return;
	fprintf(stderr, "%s: no drop-in libraries (librdmacm.so.1) in %s, %s or %s "
		"(make mock builds them, make install installs them)\n",
		tool_name, build, staged, TOOL_DROPIN_ABS);
	exit(2);
}

/* librdmamock.so.0: beside the drop-ins in the build tree, one directory
 * up where make install puts them. */
void *tool_mock_call(const char *dir, const char *name)
{
	char path[PATH_MAX + 32];
	void *lib, *fn;

	snprintf(path, sizeof path, "%s/librdmamock.so.0", dir);
	if (access(path, R_OK))
		snprintf(path, sizeof path, "%s/../librdmamock.so.0", dir);
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
	char *path = tool_append(NULL, "", dir), *view, *preload;

	if (old && *old)
		path = tool_append(path, ":", old);
	setenv("LD_LIBRARY_PATH", path, 1);
	free(path);
	/* The system view after what the user preloads (a sanitizer's
	 * runtime must stay first), unless it is there already. */
	view = tool_append(tool_append(NULL, "", dir), "/", "librdmamock-sys.so");
	old = getenv("LD_PRELOAD");
	if (access(view, R_OK) == 0 && !(old && strstr(old, "librdmamock-sys.so"))) {
		preload = old && *old ? tool_append(tool_append(NULL, "", old), ":", view) : view;
		setenv("LD_PRELOAD", preload, 1);
		if (preload != view)
			free(preload);
	}
	free(view);
}
