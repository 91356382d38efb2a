/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The system view (view.h): what the kernel would show of the fabric's
 * devices under /sys and /dev, as drivers/infiniband/core/sysfs.c,
 * ib_uverbs and the PCI core lay it out (formats measured on rxe44's
 * sysfs: rxe0 on dummy0).
 *
 * One walk over the devices says every entry: it builds the tree on disk,
 * or renders the one file a program opens. Both read the fabric through
 * the same calls libibverbs answers from (fabric/attrs.c), so the view and
 * ibv_query_port never disagree.
 *
 * A generic device is a virtual device, as rxe is (/sys/devices/virtual);
 * an mlx5 device a PCI function of its own (ConnectX-5: 15b3:1017) in a
 * PCI domain no host has, 00ff, so that what reads the PCI device behind
 * an HCA (UCX's locality and PCIe bandwidth) finds it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/view.h"
#include "fabric/arena.h"
#include "fabric/fabric.h"
#include "control/mock.h"

#define UVERBS_MAJOR 231 /* ib_uverbs' character devices */
#define UVERBS_MINOR 192
#define MISC_MAJOR 10
#define RDMA_CM_MINOR 124 /* /dev/infiniband/rdma_cm, measured on rxe44 */
#define UVERBS_ABI 6      /* /sys/class/infiniband_verbs/abi_version */

/* Paths in the tree, each size room for the one before it and a name. */
#define BASE_MAX 160
#define DIR_MAX (BASE_MAX + 32 + FAB_NAME_MAX)
#define PORT_MAX (DIR_MAX + 16)
#define ENTRY_MAX (PORT_MAX + 48)

/* One walk: building the tree (fd >= 0) or rendering `want`. */
struct walk {
	int fd;            /* build: the new tree's directory */
	int err;           /* build: the first error */
	const char *want;  /* render: the path sought, without its leading '/' */
	char *buf;
	size_t size;
	int result;        /* render: -ENOENT until found */
	dev_t rdev;
};

static bool building(const struct walk *w)
{
	return w->fd >= 0;
}

/* Render: whether the sought path is dir or lies under it (prunes a walk
 * of a device or a table that cannot hold it). */
static bool under(const struct walk *w, const char *dir)
{
	size_t n = strlen(dir);

	return building(w) || (!strncmp(w->want, dir, n) && (!w->want[n] || w->want[n] == '/'));
}

/* Render: whether this is the sought path. */
static bool is(const struct walk *w, const char *path)
{
	return !building(w) && !strcmp(w->want, path);
}

static void failed(struct walk *w, const char *what, const char *path)
{
	if (!w->err)
		w->err = errno ? errno : EIO;
	mock_log("system view: %s %s: %s", what, path, strerror(w->err));
}

static void dir(struct walk *w, const char *path)
{
	if (is(w, path))
		w->result = -EISDIR;
	else if (building(w) && mkdirat(w->fd, path, 0755) && errno != EEXIST)
		failed(w, "mkdir", path);
}

static void link_to(struct walk *w, const char *path, const char *target)
{
	if (is(w, path))
		w->result = -EISDIR;
	else if (building(w) && symlinkat(target, w->fd, path))
		failed(w, "symlink", path);
}

static void write_file(struct walk *w, const char *path, const char *text, size_t len, mode_t mode)
{
	int fd = openat(w->fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		failed(w, "write", path);
	if (fd >= 0)
		close(fd);
}

/* A file and its contents, formatted only when they are wanted. */
__attribute__((format(printf, 3, 4))) static void file(struct walk *w, const char *path,
							 const char *fmt, ...)
{
	char text[4096];
	va_list ap;
	int n;

	if (!building(w) && !is(w, path))
		return;
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof text)
		n = sizeof text - 1;
	if (building(w)) {
		write_file(w, path, text, (size_t)n, 0444);
		return;
	}
	if ((size_t)n > w->size)
		n = (int)w->size;
	memcpy(w->buf, text, (size_t)n);
	w->result = n;
}

/* The files of the tree that many entries share (a GID table is mostly
 * empty): one file each, linked where they stand. */
#define EMPTY_FILE ".empty"
#define ZERO_GID_FILE ".zero-gid"

static void shared_file(struct walk *w, const char *path, const char *shared)
{
	if (linkat(w->fd, shared, w->fd, path, 0))
		failed(w, "link", path);
}

/* An attribute the kernel refuses to read (EINVAL at read): on disk an
 * empty file. */
static void unreadable(struct walk *w, const char *path)
{
	if (is(w, path))
		w->result = -EINVAL;
	else if (building(w))
		shared_file(w, path, EMPTY_FILE);
}

/* A character device: on disk a plain file holding its number (nothing
 * outside the view reads it); through the preload, stat says what it is. */
static void chr(struct walk *w, const char *path, unsigned major, unsigned minor)
{
	char text[32];
	int n = snprintf(text, sizeof text, "%u:%u\n", major, minor);

	if (is(w, path)) {
		w->result = 0;
		w->rdev = makedev(major, minor);
	} else if (building(w)) {
		write_file(w, path, text, (size_t)n, 0666);
	}
}

/* "../" as often as path has components below sys/: from a directory of
 * the tree back to sys/. */
static const char *up_to_sys(const char *path)
{
	static __thread char up[128];
	size_t n = 0;

	up[0] = '\0';
	for (const char *p = strchr(path, '/'); p && n + 4 < sizeof up; p = strchr(p + 1, '/')) {
		memcpy(up + n, "../", 4);
		n += 3;
	}
	return up;
}

static const char *speed_name(uint8_t speed, int *deci_gbps)
{
	switch (speed) {
	case 2: *deci_gbps = 50; return " DDR";
	case 4: *deci_gbps = 100; return " QDR";
	case 8: *deci_gbps = 100; return " FDR10";
	case 16: *deci_gbps = 140; return " FDR";
	case 32: *deci_gbps = 250; return " EDR";
	case 64: *deci_gbps = 500; return " HDR";
	case 128: *deci_gbps = 1000; return " NDR";
	default: *deci_gbps = 25; return " SDR";
	}
}

static int width_lanes(uint8_t width)
{
	switch (width) {
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 1;
	}
}

static const char *port_state_name(enum ibv_port_state s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "UNKNOWN";
}

static const char *phys_state_name(uint8_t s)
{
	static const char *const names[] = { "<unknown>", "Sleep", "Polling", "Disabled",
					      "PortConfigurationTraining", "LinkUp",
					      "LinkErrorRecovery", "Phy Test" };

	return s < sizeof names / sizeof names[0] ? names[s] : "<unknown>";
}

static void gid_text(const union ibv_gid *gid, char *out)
{
	for (int i = 0; i < 8; i++)
		sprintf(out + 5 * i, "%02x%02x%s", gid->raw[2 * i], gid->raw[2 * i + 1], i < 7 ? ":" : "");
}

static void guid_text(__be64 guid, char *out)
{
	uint64_t g = be64toh(guid);

	sprintf(out, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff, (unsigned)(g >> 32) & 0xffff,
		(unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

/* A file NAME in the folder FOLDER, its text as printf makes it; the
 * caller has char path[] and w. */
#define ATTR(folder, name, ...)                                    \
	do {                                                       \
		snprintf(path, sizeof path, "%s/" name, folder);   \
		file(w, path, __VA_ARGS__);                        \
	} while (0)

/* The port: its attributes, its GID table (the type and net device of an
 * empty entry cannot be read), its P_Key table. */
static void walk_port(struct walk *w, const struct fab_device_info *d, const char *ibdir)
{
	const struct fab_profile *p = fab_profile_of(d->personality);
	char port[PORT_MAX], path[ENTRY_MAX], text[64];
	struct ibv_port_attr a;
	const char *speed;
	int rate;

	snprintf(port, sizeof port, "%s/ports/1", ibdir);
	if (!under(w, port))
		return;
	dir(w, port);
	if (fab_port_attr(d->serial, &a))
		return;
	ATTR(port, "state", "%d: %s\n", a.state, port_state_name(a.state));
	ATTR(port, "phys_state", "%d: %s\n", a.phys_state, phys_state_name(a.phys_state));
	speed = speed_name(a.active_speed, &rate);
	rate *= width_lanes(a.active_width);
	ATTR(port, "rate", "%d%s Gb/sec (%dX%s)\n", rate / 10, rate % 10 ? ".5" : "",
	     width_lanes(a.active_width), speed);
	ATTR(port, "link_layer", "%s\n", a.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "Ethernet");
	ATTR(port, "lid", "0x%x\n", a.lid);
	ATTR(port, "sm_lid", "0x%x\n", a.sm_lid);
	ATTR(port, "sm_sl", "%d\n", a.sm_sl);
	ATTR(port, "lid_mask_count", "%d\n", a.lmc);
	ATTR(port, "cap_mask", "0x%08x\n", a.port_cap_flags);
	snprintf(path, sizeof path, "%s/gids", port);
	dir(w, path);
	snprintf(path, sizeof path, "%s/gid_attrs", port);
	dir(w, path);
	snprintf(path, sizeof path, "%s/gid_attrs/types", port);
	dir(w, path);
	snprintf(path, sizeof path, "%s/gid_attrs/ndevs", port);
	dir(w, path);
	if (under(w, port) && (building(w) || strstr(w->want + strlen(port), "gid"))) {
		for (int i = 0; i < a.gid_tbl_len; i++) {
			char gids[ENTRY_MAX], type[ENTRY_MAX], ndev[ENTRY_MAX];
			char ifname[IF_NAMESIZE];
			enum ibv_gid_type t;
			union ibv_gid gid;
			bool empty;

			snprintf(gids, sizeof gids, "%s/gids/%d", port, i);
			snprintf(type, sizeof type, "%s/gid_attrs/types/%d", port, i);
			snprintf(ndev, sizeof ndev, "%s/gid_attrs/ndevs/%d", port, i);
			if (!building(w) && !is(w, gids) && !is(w, type) && !is(w, ndev))
				continue;
			empty = fab_device_gid(d->serial, i, &gid, &t) != 0;
			if (empty)
				memset(&gid, 0, sizeof gid);
			gid_text(&gid, text);
			if (empty && building(w))
				shared_file(w, gids, ZERO_GID_FILE);
			else
				file(w, gids, "%s\n", text);
			if (empty) {
				unreadable(w, type);
				unreadable(w, ndev);
				continue;
			}
			file(w, type, "%s\n", t == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
			/* An InfiniBand GID has no net device: the kernel's read
			 * fails, as for an empty entry. */
			if (a.link_layer != IBV_LINK_LAYER_INFINIBAND &&
			    fab_gid_netdev(d->serial, &gid, ifname))
				file(w, ndev, "%s\n", ifname);
			else
				unreadable(w, ndev);
		}
	}
	snprintf(path, sizeof path, "%s/pkeys", port);
	dir(w, path);
	for (int i = 0; i < p->pkey_tbl_len; i++) {
		snprintf(path, sizeof path, "%s/pkeys/%d", port, i);
		file(w, path, "0x%04x\n", i == 0 ? 0xffff : 0);
	}
}

/* A mask of the CPUs as the kernel prints a cpumask (%*pb): hex, in
 * 32-bit groups separated by commas, the highest first. */
static void cpu_mask(char *out, size_t size)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	size_t used = 0;

	if (n < 1)
		n = 1;
	for (long group = (n - 1) / 32; group >= 0 && used + 10 < size; group--) {
		long bits = n - group * 32 > 32 ? 32 : n - group * 32;
		uint32_t word = bits == 32 ? 0xffffffffu : (1u << bits) - 1;

		used += (size_t)snprintf(out + used, size - used, group == (n - 1) / 32 ? "%x%s" : "%08x%s",
					 word, group ? "," : "");
	}
}

/* The PCI function of an mlx5 device (ConnectX-5, PCIe 3.0 x16). */
static void walk_pci(struct walk *w, const char pcidir[BASE_MAX], const char *bdf)
{
	char path[ENTRY_MAX], mask[160];
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (!under(w, pcidir))
		return;
	dir(w, pcidir);
	ATTR(pcidir, "vendor", "0x15b3\n");
	ATTR(pcidir, "device", "0x1017\n");
	ATTR(pcidir, "subsystem_vendor", "0x15b3\n");
	ATTR(pcidir, "subsystem_device", "0x0008\n");
	ATTR(pcidir, "class", "0x020000\n");
	ATTR(pcidir, "numa_node", "-1\n");
	cpu_mask(mask, sizeof mask);
	ATTR(pcidir, "local_cpus", "%s\n", mask);
	if (cpus > 1)
		ATTR(pcidir, "local_cpulist", "0-%ld\n", cpus - 1);
	else
		ATTR(pcidir, "local_cpulist", "0\n");
	ATTR(pcidir, "current_link_speed", "8.0 GT/s PCIe\n");
	ATTR(pcidir, "current_link_width", "16\n");
	ATTR(pcidir, "max_link_speed", "8.0 GT/s PCIe\n");
	ATTR(pcidir, "max_link_width", "16\n");
	ATTR(pcidir, "uevent", "DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:1017\nPCI_SUBSYS_ID=15B3:0008\n"
		       "PCI_SLOT_NAME=%s\n", bdf);
	snprintf(path, sizeof path, "%s/infiniband", pcidir);
	dir(w, path);
	snprintf(path, sizeof path, "%s/infiniband_verbs", pcidir);
	dir(w, path);
}

/* A class device's subsystem link, and its device link to the PCI
 * function that has it (none for a virtual device). */
static void class_links(struct walk *w, const char *devdir, const char *class, const char *bdf)
{
	char path[ENTRY_MAX], target[ENTRY_MAX];

	snprintf(path, sizeof path, "%s/subsystem", devdir);
	snprintf(target, sizeof target, "%sclass/%s", up_to_sys(devdir), class);
	link_to(w, path, target);
	if (bdf) {
		snprintf(path, sizeof path, "%s/device", devdir);
		snprintf(target, sizeof target, "../../../%s", bdf);
		link_to(w, path, target);
	}
}

static void walk_device(struct walk *w, const struct fab_device_info *d)
{
	const struct fab_profile *p = fab_profile_of(d->personality);
	bool mlx5 = d->personality == RDMAMOCK_MLX5;
	unsigned n = d->serial - 1; /* uverbsN, as ibv_device's dev_name */
	char base[BASE_MAX], bdf[16], ibdir[DIR_MAX], uvdir[DIR_MAX], path[ENTRY_MAX];
	char guid[32], target[ENTRY_MAX], ifname[IF_NAMESIZE];
	union ibv_gid ll;
	enum ibv_gid_type t;

	if (mlx5) {
		snprintf(bdf, sizeof bdf, "%s:00:%02x.0", SYS_VIEW_PCI_DOMAIN, n & 0x1f);
		snprintf(base, sizeof base, "sys/devices/pci%s:00/%s", SYS_VIEW_PCI_DOMAIN, bdf);
		walk_pci(w, base, bdf);
		snprintf(ibdir, sizeof ibdir, "%s/infiniband/%s", base, d->name);
		snprintf(uvdir, sizeof uvdir, "%s/infiniband_verbs/uverbs%u", base, n);
		snprintf(path, sizeof path, "sys/bus/pci/devices/%s", bdf);
		snprintf(target, sizeof target, "../../../devices/pci%s:00/%s", SYS_VIEW_PCI_DOMAIN, bdf);
		link_to(w, path, target);
	} else {
		snprintf(ibdir, sizeof ibdir, "sys/devices/virtual/infiniband/%s", d->name);
		snprintf(uvdir, sizeof uvdir, "sys/devices/virtual/infiniband_verbs/uverbs%u", n);
	}
	snprintf(path, sizeof path, "sys/class/infiniband/%s", d->name);
	snprintf(target, sizeof target, "../../%s", ibdir + strlen("sys/"));
	link_to(w, path, target);
	snprintf(path, sizeof path, "sys/class/infiniband_verbs/uverbs%u", n);
	snprintf(target, sizeof target, "../../%s", uvdir + strlen("sys/"));
	link_to(w, path, target);
	snprintf(path, sizeof path, "dev/infiniband/uverbs%u", n);
	chr(w, path, UVERBS_MAJOR, UVERBS_MINOR + n);

	if (under(w, ibdir)) {
		dir(w, ibdir);
		guid_text(d->guid, guid);
		ATTR(ibdir, "node_type", "%s\n", p->transport == IBV_TRANSPORT_IWARP ? "4: RNIC" : "1: CA");
		ATTR(ibdir, "node_guid", "%s\n", guid);
		ATTR(ibdir, "sys_image_guid", "%s\n", guid);
		ATTR(ibdir, "fw_ver", "%s\n", mlx5 ? p->fw_ver : "");
		ATTR(ibdir, "node_desc", "%s\n", mlx5 ? "MT4119 ConnectX5   Mellanox Technologies" : "rxe");
		ATTR(ibdir, "uevent", "NAME=%s\n", d->name);
		if (mlx5) {
			ATTR(ibdir, "board_id", "MT_0000000008\n");
			ATTR(ibdir, "hca_type", "MT4119\n");
			ATTR(ibdir, "hw_rev", "%x\n", p->hw_ver); /* mlx5 hw_rev_show: bare hex */
		} else if (!fab_device_gid(d->serial, 0, &ll, &t) && fab_gid_netdev(d->serial, &ll, ifname)) {
			ATTR(ibdir, "parent", "%s\n", ifname); /* rxe's: its net device */
		}
		class_links(w, ibdir, "infiniband", mlx5 ? bdf : NULL);
		snprintf(path, sizeof path, "%s/ports", ibdir);
		dir(w, path);
		walk_port(w, d, ibdir);
	}
	if (under(w, uvdir)) {
		dir(w, uvdir);
		ATTR(uvdir, "ibdev", "%s\n", d->name);
		ATTR(uvdir, "abi_version", "%d\n", mlx5 ? 1 : 2); /* the driver's uverbs ABI */
		ATTR(uvdir, "dev", "%u:%u\n", UVERBS_MAJOR, UVERBS_MINOR + n);
		ATTR(uvdir, "uevent", "MAJOR=%u\nMINOR=%u\nDEVNAME=infiniband/uverbs%u\nDEVMODE=0666\n",
		     UVERBS_MAJOR, UVERBS_MINOR + n, n);
		class_links(w, uvdir, "infiniband_verbs", mlx5 ? bdf : NULL);
	}
}

static void walk(struct walk *w)
{
	static const char *const dirs[] = {
		"sys", "sys/class", "sys/class/infiniband", "sys/class/infiniband_verbs",
		"sys/devices", "sys/devices/virtual", "sys/devices/virtual/infiniband",
		"sys/devices/virtual/infiniband_verbs", "sys/devices/pci" SYS_VIEW_PCI_DOMAIN ":00",
		"sys/bus", "sys/bus/pci", "sys/bus/pci/devices", "dev", "dev/infiniband",
	};
	struct fab_device_info *devs;
	int ndevs;

	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		dir(w, dirs[i]);
	if (building(w)) {
		write_file(w, EMPTY_FILE, "", 0, 0444);
		write_file(w, ZERO_GID_FILE, "0000:0000:0000:0000:0000:0000:0000:0000\n", 40, 0444);
	}
	file(w, "sys/class/infiniband_verbs/abi_version", "%d\n", UVERBS_ABI);
	chr(w, "dev/infiniband/rdma_cm", MISC_MAJOR, RDMA_CM_MINOR);
	if (fab_device_list(&devs, &ndevs)) {
		if (building(w))
			failed(w, "list", "the devices");
		return;
	}
	for (int i = 0; i < ndevs; i++)
		walk_device(w, &devs[i]);
	free(devs);
}

/* The path as the view names it: its links followed in the tree (the
 * class directories are links, as in sysfs), "/" + the rest. */
static int view_name(const char *path, char *out)
{
	char in[PATH_MAX * 2];
	const char *r = sys_view_root();
	size_t n;

	if (!r)
		return -errno;
	if (snprintf(in, sizeof in, "%s%s%s", r, path[0] == '/' ? "" : "/", path) >= (int)sizeof in)
		return -ENAMETOOLONG;
	if (!realpath(in, out))
		return -errno;
	n = strlen(r);
	if (strncmp(out, r, n) || (out[n] && out[n] != '/'))
		return -ENOENT; /* a link out of the view */
	memmove(out, out + n, strlen(out + n) + 1);
	return 0;
}

int sys_view_read(const char *path, char *buf, size_t size, dev_t *rdev)
{
	struct walk w = { .fd = -1, .buf = buf, .size = size, .result = -ENOENT };
	char name[PATH_MAX];
	int err = view_name(path, name);

	if (rdev)
		*rdev = 0;
	if (err)
		return err;
	for (w.want = name; *w.want == '/'; w.want++)
		;
	walk(&w);
	if (rdev)
		*rdev = w.rdev;
	return w.result;
}

/* ---------------------------------------------------------------- the tree */

static pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER;
static char tree[PATH_MAX];
static unsigned tree_gen;
static bool tree_made, cleanup_set;

static void remove_private_trees(void)
{
	char prefix[64];

	snprintf(prefix, sizeof prefix, "private-%d.sys.", (int)getpid());
	fab_remove_files(prefix, NULL);
}

/* Build the tree for generation gen into a directory of its own, then
 * move it to its name: two processes building at once both succeed, one
 * of them keeps its tree. */
static int build(const char *final)
{
	char tmp[PATH_MAX + 96];
	struct walk w = { .result = -ENOENT };

	snprintf(tmp, sizeof tmp, "%s.tmp%d", final, (int)getpid());
	fab_remove_path(tmp);
	if (mkdir(tmp, 0755))
		return -errno;
	w.fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.fd < 0) {
		int err = -errno;

		rmdir(tmp);
		return err;
	}
	walk(&w);
	close(w.fd);
	if (w.err) {
		fab_remove_path(tmp);
		return -w.err;
	}
	if (rename(tmp, final)) {
		int err = errno;

		fab_remove_path(tmp);
		if (err != EEXIST && err != ENOTEMPTY)
			return -err;
	}
	return 0;
}

const char *sys_view_root(void)
{
	char base[PATH_MAX], keep[PATH_MAX + 64];
	const char *name;
	unsigned gen;
	struct stat st;
	int err = 0;

	pthread_mutex_lock(&tree_lock);
	gen = fab_topology_gen();
	if (tree_made && gen == tree_gen && !stat(tree, &st))
		goto out;
	/* <fabric>.sys.<token>.<generation>: a fabric made anew under an old
	 * name never meets an old tree. */
	if (fab_runtime_path(".sys.", base, sizeof base) < 0) {
		err = ENAMETOOLONG;
		goto out;
	}
	snprintf(keep, sizeof keep, "%s%016llx.%u", base, (unsigned long long)fab_token(), gen);
	if (stat(keep, &st) && (err = -build(keep)))
		goto out;
	/* Its own name, links resolved: what realpath gives for its files. */
	if (!realpath(keep, tree)) {
		err = errno;
		goto out;
	}
	tree_gen = gen;
	tree_made = true;
	/* Older trees of this fabric go. */
	name = strrchr(keep, '/') + 1;
	fab_remove_files(strrchr(base, '/') + 1, name);
	if (!fab_is_shared() && !cleanup_set) {
		cleanup_set = true;
		atexit(remove_private_trees);
	}
out:
	pthread_mutex_unlock(&tree_lock);
	if (err) {
		errno = err;
		return NULL;
	}
	return tree;
}
