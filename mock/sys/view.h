/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The system view: the files a program reads about its RDMA devices,
 * /sys/class/infiniband, /sys/class/infiniband_verbs, the devices they
 * link to, and /dev/infiniband, made from the fabric (view.c) and shown
 * to a program by librdmamock-sys.so (preload.c), which puts them where
 * the kernel would.
 *
 * The view is a tree of real directories, links and files in the
 * fabric's runtime directory, remade when the fabric's devices change; a
 * file read through the preload is rendered when it is opened, so a port
 * taken down reads DOWN at once. */
#ifndef RDMAMOCK_SYS_VIEW_H
#define RDMAMOCK_SYS_VIEW_H

#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

/* The parts of / the view owns, and nothing else: a path at or under one
 * of these is the view's. The last is a prefix of names (the mock's PCI
 * functions in /sys/bus/pci/devices, beside the host's own). */
#define SYS_VIEW_PCI_DOMAIN "00ff"
static const char *const sys_view_roots[] = {
	"/sys/class/infiniband",
	"/sys/class/infiniband_verbs",
	"/sys/devices/virtual/infiniband",
	"/sys/devices/virtual/infiniband_verbs",
	"/sys/devices/pci" SYS_VIEW_PCI_DOMAIN ":00",
	"/dev/infiniband",
};
#define SYS_VIEW_PCI_LINKS "/sys/bus/pci/devices/" SYS_VIEW_PCI_DOMAIN ":"

/* Whether an absolute path (lexically: "." and ".." not resolved) is the
 * view's. */
static inline bool sys_view_owns(const char *path)
{
	for (size_t i = 0; i < sizeof sys_view_roots / sizeof sys_view_roots[0]; i++) {
		size_t n = strlen(sys_view_roots[i]);

		if (!strncmp(path, sys_view_roots[i], n) && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return !strncmp(path, SYS_VIEW_PCI_LINKS, sizeof SYS_VIEW_PCI_LINKS - 1);
}

/* The tree of this process's fabric, made or remade if the fabric's
 * devices changed since: the directory that stands for "/", or NULL with
 * errno set. */
const char *sys_view_root(void);

/* Render one path of the view as the kernel would show it now (its links
 * followed): for a regular file its contents into buf (at most size
 * bytes) and their length; for a character device 0, with its number in
 * *rdev (0 for anything else). -ENOENT for a path the view does not have,
 * -EISDIR for a directory, -EINVAL for an attribute the kernel refuses to
 * read (the type of an empty GID entry). */
int sys_view_read(const char *path, char *buf, size_t size, dev_t *rdev);

#endif
