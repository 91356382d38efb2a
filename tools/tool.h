/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the tools share: finding the drop-in libraries beside them, calling
 * librdmamock's control API, building the environment a program runs on
 * the mock with. Errors print "<tool>: ..." and exit 2. */
#ifndef RDMAMOCK_TOOL_H
#define RDMAMOCK_TOOL_H

#include <stddef.h>

/* The tool's name, for messages (set by main). */
extern const char *tool_name;

/* The drop-in libraries: ../mock/lib beside the tool in the build tree,
 * else where make install put them (relative to the tool, then at the
 * installed path). */
void tool_dropin_dir(char *dir, size_t size);
/* A call of librdmamock from that directory (dlopen, dlsym). */
void *tool_mock_call(const char *dir, const char *name);
/* A spec checked with the mock's own parser: exits 2 naming the bad part. */
void tool_check_faults(const char *dir, const char *what, const char *spec);
/* list, then sep and item, in a new allocation (list may be NULL). */
char *tool_append(char *list, const char *sep, const char *item);
/* LD_LIBRARY_PATH with dir first and the user's own after it; and the
 * system view (dir/librdmamock-sys.so: /sys/class/infiniband and
 * /dev/infiniband of the fabric's devices) last in LD_PRELOAD. */
void tool_library_path(const char *dir);

#endif
