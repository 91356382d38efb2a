/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the files the kernel shows of an RDMA device, which UCX,
 * Open MPI, hwloc and libibverbs itself read: /sys/class/infiniband/<dev>
 * (node attributes, the port's state and rate, its GID and P_Key tables),
 * /sys/class/infiniband_verbs/uverbsN and /dev/infiniband/uverbsN. Each
 * must say what the verbs calls say. On the mock the suite sees the
 * system view (mock/sys) as any program under rdmamock-run does. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fixtures.h"
#include "qp.h"

/* A sysfs attribute's text without its newline; -errno when it cannot be
 * opened or read. */
static int sysfs(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

/* node_type as the kernel shows it (core/sysfs.c node_type_show): the
 * number and the name of the device's kind, a CA or an iWARP RNIC. */
static const char *node_type_line(const struct ibv_device *dev)
{
	switch (dev->node_type) {
	case IBV_NODE_CA: return "1: CA\n";
	case IBV_NODE_RNIC: return "4: RNIC\n";
	default: fail_msg("%s: node type %d, neither a CA nor an RNIC", dev->name, dev->node_type);
	}
	return NULL;
}

static void expect_file(const char *dir, const char *file, const char *want)
{
	char got[256];
	int n = sysfs(dir, file, got, sizeof got);

	if (n < 0)
		fail_msg("%s/%s: %s", dir, file, strerror(-n));
	if (strcmp(got, want))
		fail_msg("%s/%s reads \"%s\", expected \"%s\"", dir, file, got, want);
}

static const char *state_name(enum ibv_port_state s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "UNKNOWN";
}

static const char *phys_name(uint8_t s)
{
	static const char *const names[] = { "<unknown>", "Sleep", "Polling", "Disabled",
					     "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery",
					     "Phy Test" };

	return s < sizeof names / sizeof names[0] ? names[s] : "<unknown>";
}

static void expect_port_state(struct ibv_context *ctx, const char *port)
{
	struct ibv_port_attr pa;
	char want[64];

	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	snprintf(want, sizeof want, "%d: %s", pa.state, state_name(pa.state));
	expect_file(port, "state", want);
	snprintf(want, sizeof want, "%d: %s", pa.phys_state, phys_name(pa.phys_state));
	expect_file(port, "phys_state", want);
}

void sysfs__device_and_uverbs(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_device *dev = ctx->device;
	uint64_t guid = be64toh(ibv_get_device_guid(dev));
	char path[512], want[64];
	struct stat st;

	snprintf(want, sizeof want, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
	expect_file(dev->ibdev_path, "node_guid", want);
	snprintf(want, sizeof want, "%.*s", (int)strcspn(node_type_line(dev), "\n"), node_type_line(dev));
	expect_file(dev->ibdev_path, "node_type", want);
	snprintf(path, sizeof path, "/sys/class/infiniband/%s", ibv_get_device_name(dev));
	assert_string_equal(path, dev->ibdev_path);
	snprintf(path, sizeof path, "/sys/class/infiniband_verbs/%s", dev->dev_name);
	assert_string_equal(path, dev->dev_path);
	expect_file(dev->dev_path, "ibdev", ibv_get_device_name(dev));
	snprintf(path, sizeof path, "/dev/infiniband/%s", dev->dev_name);
	if (stat(path, &st))
		fail_msg("stat(%s): %s", path, strerror(errno));
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 231); /* ib_uverbs' */
	snprintf(want, sizeof want, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	expect_file(dev->dev_path, "dev", want);
	assert_int_equal(access(path, R_OK | W_OK), 0);
	ibv_close_device(ctx);
}

/* libibverbs' own reader (IBVERBS_1.0, declared in driver.h for providers,
 * which Debian does not install; perftest reads board_id with it): the
 * text without its newline, and its length. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

void ibv_read_sysfs_file__node_type(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	const char *want = node_type_line(ctx->device);
	char buf[64], small[3];

	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "node_type", buf, sizeof buf),
			 strlen(want) - 1);
	assert_memory_equal(buf, want, strlen(want) - 1);
	assert_int_equal(buf[strlen(want) - 1], '\0');
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "node_type", small, sizeof small), -1);
	errno = 0;
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "no_such_file", buf, sizeof buf), -1);
	assert_int_equal(errno, ENOENT);
	ibv_close_device(ctx);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		fail_msg("%s: %s", path, strerror(errno));
}

/* Any directory's files, not only the device's: the text without its one
 * trailing newline and its length; a text of exactly size bytes with no
 * newline to drop does not fit (-1); an empty file reads 0 bytes; a path
 * past PATH_MAX is open(2)'s ENAMETOOLONG. */
void ibv_read_sysfs_file__any_file(void **state)
{
	char dir[] = "/tmp/rdmacheck-sysfs-XXXXXX", buf[8], *long_dir;
	static const char *const names[] = { "line", "bare", "full", "exact", "empty" };

	fx_require_backend();
	if (!mkdtemp(dir))
		fail_msg("mkdtemp: %s", strerror(errno));
	write_file(dir, "line", "abc\n");
	write_file(dir, "bare", "abcd");
	write_file(dir, "full", "abcdefgh");
	write_file(dir, "exact", "abcdefg\n");
	write_file(dir, "empty", "");

	assert_int_equal(ibv_read_sysfs_file(dir, "line", buf, sizeof buf), 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(ibv_read_sysfs_file(dir, "bare", buf, sizeof buf), 4);
	assert_string_equal(buf, "abcd");
	assert_int_equal(ibv_read_sysfs_file(dir, "full", buf, sizeof buf), -1);
	assert_int_equal(ibv_read_sysfs_file(dir, "exact", buf, sizeof buf), 7);
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(ibv_read_sysfs_file(dir, "empty", buf, sizeof buf), 0);

	long_dir = malloc(5000);
	assert_non_null(long_dir);
	memset(long_dir, 'a', 4999);
	long_dir[0] = '/';
	long_dir[4999] = '\0';
	errno = 0;
	assert_int_equal(ibv_read_sysfs_file(long_dir, "line", buf, sizeof buf), -1);
	RC_ASSERT_ERRNO("ibv_read_sysfs_file", errno, ENAMETOOLONG);
	free(long_dir);

	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		char path[512];

		snprintf(path, sizeof path, "%s/%s", dir, names[k]);
		unlink(path);
	}
	rmdir(dir);
}

void sysfs__port_attributes(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_port_attr pa;
	char port[512], want[64];

	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	snprintf(port, sizeof port, "%s/ports/1", ctx->device->ibdev_path);
	expect_port_state(ctx, port);
	expect_file(port, "link_layer", pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "Ethernet");
	snprintf(want, sizeof want, "0x%x", pa.lid);
	expect_file(port, "lid", want);
	snprintf(want, sizeof want, "0x%08x", pa.port_cap_flags);
	expect_file(port, "cap_mask", want);
	/* One file per P_Key slot (core/sysfs.c alloc_group_attrs over
	 * pkey_tbl_len): none on an iWARP port, which has no P_Keys. */
	if (pa.pkey_tbl_len) {
		expect_file(port, "pkeys/0", "0xffff");
	} else {
		char slot[600];

		snprintf(slot, sizeof slot, "%s/pkeys/0", port);
		errno = 0;
		assert_int_equal(access(slot, F_OK), -1);
		assert_int_equal(errno, ENOENT);
	}
	ibv_close_device(ctx);
}

/* Every entry of the GID table as ibv_query_gid_ex has it; an empty one
 * reads as zeros, and its type cannot be read. */
void sysfs__gid_table(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_port_attr pa;
	char port[512], file[64], want[64], got[64], ifname[IF_NAMESIZE];
	bool empty_seen = false;
	int filled = 0;

	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	snprintf(port, sizeof port, "%s/ports/1", ctx->device->ibdev_path);
	for (int i = 0; i < pa.gid_tbl_len && (!empty_seen || filled < 2); i++) {
		struct ibv_gid_entry e;
		int err = ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0);

		if (err && err != ENODATA)
			fail_msg("ibv_query_gid_ex(%d): %s", i, strerror(err));
		if (err)
			memset(&e, 0, sizeof e);
		for (int g = 0; g < 8; g++)
			snprintf(want + 5 * g, sizeof want - 5 * g, "%02x%02x%s", e.gid.raw[2 * g],
				 e.gid.raw[2 * g + 1], g < 7 ? ":" : "");
		snprintf(file, sizeof file, "gids/%d", i);
		expect_file(port, file, want);
		snprintf(file, sizeof file, "gid_attrs/types/%d", i);
		if (err) {
			assert_int_equal(sysfs(port, file, got, sizeof got), -EINVAL);
			empty_seen = true;
			continue;
		}
		filled++;
		expect_file(port, file, e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
		if (e.ndev_ifindex && if_indextoname(e.ndev_ifindex, ifname)) {
			snprintf(file, sizeof file, "gid_attrs/ndevs/%d", i);
			expect_file(port, file, ifname);
		}
	}
	assert_true(filled > 0);
	ibv_close_device(ctx);
}

/* A port the mock takes down reads DOWN and Disabled, as rxe's do when
 * its net device goes down (measured on rxe44); up again, ACTIVE. */
void sysfs__port_down_and_up(void **state)
{
	int (*port_set)(const char *, int) = (int (*)(const char *, int))fx_topology_call("rdmamock_port_set");
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	const char *name = ibv_get_device_name(ctx->device);
	char port[512];

	snprintf(port, sizeof port, "%s/ports/1", ctx->device->ibdev_path);
	assert_int_equal(port_set(name, 0), 0);
	expect_file(port, "state", "1: DOWN");
	expect_file(port, "phys_state", "3: Disabled");
	expect_port_state(ctx, port);
	assert_int_equal(port_set(name, 1), 0);
	expect_file(port, "state", "4: ACTIVE");
	expect_port_state(ctx, port);
	ibv_close_device(ctx);
}

/* ---------------------------------------------------------------- the tree as programs walk it */

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int not_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* The devices ibv_get_device_list gives, by name, sorted. */
static int device_names(char names[][IBV_SYSFS_NAME_MAX], int max)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	char *sorted[64];
	int n = 0;

	if (!list)
		fail_msg("ibv_get_device_list: %s", strerror(errno));
	for (; list[n] && n < max && n < 64; n++)
		sorted[n] = (char *)ibv_get_device_name(list[n]);
	qsort(sorted, (size_t)n, sizeof sorted[0], names_cmp);
	for (int i = 0; i < n; i++)
		snprintf(names[i], IBV_SYSFS_NAME_MAX, "%s", sorted[i]);
	ibv_free_device_list(list);
	return n;
}

/* /sys/class/infiniband lists the devices libibverbs finds, as opendir
 * (hwloc, Open MPI) and scandir (rdma-core's own tools) read it. */
void sysfs__class_lists_devices(void **state)
{
	char want[16][IBV_SYSFS_NAME_MAX], *seen[16];
	struct dirent **list, *e;
	int n, found = 0, listed;
	DIR *d;

	fx_require_backend();
	n = device_names(want, 16);
	assert_true(n > 0);
	d = opendir("/sys/class/infiniband");
	if (!d)
		fail_msg("opendir(/sys/class/infiniband): %s", strerror(errno));
	while ((e = readdir(d)) && found < 16)
		if (e->d_name[0] != '.')
			seen[found++] = strdup(e->d_name);
	closedir(d);
	assert_int_equal(found, n);
	qsort(seen, (size_t)found, sizeof seen[0], names_cmp);
	for (int i = 0; i < n; i++) {
		assert_string_equal(seen[i], want[i]);
		free(seen[i]);
	}
	listed = scandir("/sys/class/infiniband", &list, not_dot, alphasort);
	assert_int_equal(listed, n);
	for (int i = 0; i < listed; i++) {
		assert_string_equal(list[i]->d_name, want[i]);
		free(list[i]);
	}
	free(list);
}

/* A class entry is a link into /sys/devices (a device's directory), as
 * sysfs makes it; realpath says where it leads as UCX asks (its
 * ib_device's sysfs directory), with /sys names, and the files under it
 * resolve through it. */
void sysfs__class_entry_links(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	const char *name = ibv_get_device_name(ctx->device);
	char path[512], target[512], suffix[128], want[600], got[PATH_MAX], *real;
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof path, "/sys/class/infiniband/%s", name);
	if (lstat(path, &st))
		fail_msg("lstat(%s): %s", path, strerror(errno));
	assert_true(S_ISLNK(st.st_mode));
	if (stat(path, &st))
		fail_msg("stat(%s): %s", path, strerror(errno));
	assert_true(S_ISDIR(st.st_mode));
	n = readlink(path, target, sizeof target - 1);
	if (n < 0)
		fail_msg("readlink(%s): %s", path, strerror(errno));
	target[n] = '\0';
	snprintf(suffix, sizeof suffix, "/infiniband/%s", name);
	assert_int_equal(strncmp(target, "../../devices/", 14), 0);
	assert_true((size_t)n > strlen(suffix));
	assert_string_equal(target + n - strlen(suffix), suffix);
	/* realpath, with the caller's buffer and with its own. */
	snprintf(want, sizeof want, "/sys/%s", target + strlen("../../"));
	if (!realpath(path, got))
		fail_msg("realpath(%s): %s", path, strerror(errno));
	assert_string_equal(got, want);
	real = canonicalize_file_name(path);
	assert_non_null(real);
	assert_string_equal(real, want);
	free(real);
	snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/1/state", name);
	real = realpath(path, NULL);
	assert_non_null(real);
	snprintf(want + strlen(want), sizeof want - strlen(want), "/ports/1/state");
	assert_string_equal(real, want);
	free(real);
	snprintf(path, sizeof path, "/sys/class/infiniband/%s/no_such_file", name);
	errno = 0;
	assert_null(realpath(path, got));
	assert_int_equal(errno, ENOENT);
	ibv_close_device(ctx);
}

/* An attribute file is a regular file of a page's size, whatever its
 * text (fs/sysfs/file.c sysfs_add_file_mode_ns); read with stdio, with
 * the paths a program may build (doubled slashes, "." components, a
 * directory descriptor as hwloc's root, a working directory). */
void sysfs__attribute_file(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	const char *name = ibv_get_device_name(ctx->device);
	const char *want = node_type_line(ctx->device);
	char path[512], line[64], cwd[PATH_MAX];
	struct statx stx;
	struct stat st;
	FILE *f;
	int fd, root;

	snprintf(path, sizeof path, "/sys/class/infiniband/%s/node_type", name);
	if (stat(path, &st))
		fail_msg("stat(%s): %s", path, strerror(errno));
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, sysconf(_SC_PAGESIZE));
	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx))
		fail_msg("statx(%s): %s", path, strerror(errno));
	assert_true(S_ISREG(stx.stx_mode));
	assert_int_equal(stx.stx_size, sysconf(_SC_PAGESIZE));
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(faccessat(AT_FDCWD, path, R_OK, 0), 0);
	assert_int_equal(euidaccess(path, R_OK), 0);

	f = fopen(path, "re");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, want);
	assert_null(fgets(line, sizeof line, f));
	fclose(f);

	snprintf(path, sizeof path, "/sys/class//infiniband/./%s//node_type", name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("fopen(%s): %s", path, strerror(errno));
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, want);
	fclose(f);

	root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	snprintf(path, sizeof path, "sys/class/infiniband/%s/node_type", name);
	fd = openat(root, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("openat(/, %s): %s", path, strerror(errno));
	memset(line, 0, sizeof line);
	assert_int_equal(read(fd, line, sizeof line - 1), strlen(want));
	assert_string_equal(line, want);
	close(fd);
	assert_int_equal(fstatat(root, path, &st, 0), 0);
	assert_true(S_ISREG(st.st_mode));
	close(root);

	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir("/sys/class"), 0);
	snprintf(path, sizeof path, "infiniband/%s/node_type", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("open(%s) in /sys/class: %s", path, strerror(errno));
	close(fd);
	assert_int_equal(chdir(cwd), 0);
	ibv_close_device(ctx);
}

/* The type of an empty GID entry cannot be read: the file opens, and its
 * read fails with EINVAL (kernfs calls the attribute's show at read, and
 * print_gid_type fails), with stdio as with read(2). */
void sysfs__gid_type_empty_entry_read(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_port_attr pa;
	char path[512], buf[64];
	int empty = -1, fd;
	FILE *f;

	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	for (int i = 0; i < pa.gid_tbl_len && empty < 0; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0) == ENODATA)
			empty = i;
	}
	if (empty < 0)
		RC_SKIP("the GID table of %s is full", ibv_get_device_name(ctx->device));
	snprintf(path, sizeof path, "%s/ports/1/gid_attrs/types/%d", ctx->device->ibdev_path, empty);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("open(%s): %s", path, strerror(errno));
	errno = 0;
	assert_int_equal(read(fd, buf, sizeof buf), -1);
	assert_int_equal(errno, EINVAL);
	close(fd);
	f = fopen(path, "r");
	if (!f)
		fail_msg("fopen(%s): %s", path, strerror(errno));
	errno = 0;
	assert_null(fgets(buf, sizeof buf, f));
	assert_true(ferror(f));
	assert_int_equal(errno, EINVAL);
	fclose(f);
	ibv_close_device(ctx);
}

/* The verbs device opens for reading and writing (as libibverbs and UCX
 * open it) and statx says it is ib_uverbs' character device, as its dev
 * file says; a node no device has is not there; rdma_cm is the misc
 * device (major 10) librdmacm opens. */
void sysfs__dev_infiniband_nodes(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	char path[512], want[64];
	struct statx stx;
	int fd;

	snprintf(path, sizeof path, "/dev/infiniband/%s", ctx->device->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fail_msg("open(%s, O_RDWR): %s", path, strerror(errno));
	close(fd);
	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx))
		fail_msg("statx(%s): %s", path, strerror(errno));
	assert_true(S_ISCHR(stx.stx_mode));
	assert_int_equal(stx.stx_rdev_major, 231);
	snprintf(want, sizeof want, "%u:%u", stx.stx_rdev_major, stx.stx_rdev_minor);
	expect_file(ctx->device->dev_path, "dev", want);
	errno = 0;
	assert_int_equal(open("/dev/infiniband/uverbs999", O_RDWR | O_CLOEXEC), -1);
	assert_int_equal(errno, ENOENT);
	if (statx(AT_FDCWD, "/dev/infiniband/rdma_cm", 0, STATX_BASIC_STATS, &stx))
		fail_msg("statx(/dev/infiniband/rdma_cm): %s", strerror(errno));
	assert_true(S_ISCHR(stx.stx_mode));
	assert_int_equal(stx.stx_rdev_major, 10);
	ibv_close_device(ctx);
}

/* The device's attributes as ibv_query_device has them: sys_image_guid
 * (core sysfs.c), fw_ver (empty for a driver with no firmware string, as
 * rxe), and a PCI HCA's hw_rev, which mlx5 prints as bare hex
 * (hw/mlx5/main.c hw_rev_show: "%x"), as mlx4, qib and hfi1 do. */
void sysfs__device_attributes(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	const char *dir = ctx->device->ibdev_path;
	struct ibv_device_attr attr;
	uint64_t guid;
	char want[64], got[64];

	FX_VERBS_OK(ibv_query_device(ctx, &attr));
	guid = be64toh(attr.sys_image_guid);
	snprintf(want, sizeof want, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
	expect_file(dir, "sys_image_guid", want);
	assert_true(sysfs(dir, "fw_ver", got, sizeof got) >= 0);
	if (got[0])
		assert_string_equal(got, attr.fw_ver);
	if (sysfs(dir, "hw_rev", got, sizeof got) >= 0) {
		snprintf(want, sizeof want, "%x", attr.hw_ver);
		assert_string_equal(got, want);
	}
	ibv_close_device(ctx);
}

/* ports/N/rate as the kernel's rate_show makes it from the port's active
 * speed and width (ibv_query_port's): "<Gb/s> Gb/sec (<lanes>X<speed>)". */
void sysfs__port_rate(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_port_attr pa;
	const char *speed;
	char port[512], want[64];
	int rate, lanes;

	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	switch (pa.active_speed) {
	case 2: speed = " DDR"; rate = 50; break;
	case 4: speed = " QDR"; rate = 100; break;
	case 8: speed = " FDR10"; rate = 100; break;
	case 16: speed = " FDR"; rate = 140; break;
	case 32: speed = " EDR"; rate = 250; break;
	case 64: speed = " HDR"; rate = 500; break;
	case 128: speed = " NDR"; rate = 1000; break;
	default: speed = " SDR"; rate = 25; break;
	}
	switch (pa.active_width) {
	case 1: lanes = 1; break;
	case 2: lanes = 4; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	case 16: lanes = 2; break;
	default: fail_msg("active_width %u is no width", pa.active_width); lanes = 0; break;
	}
	rate *= lanes;
	snprintf(want, sizeof want, "%d%s Gb/sec (%dX%s)", rate / 10, rate % 10 ? ".5" : "", lanes, speed);
	snprintf(port, sizeof port, "%s/ports/1", ctx->device->ibdev_path);
	expect_file(port, "rate", want);
	ibv_close_device(ctx);
}

/* ---------------------------------------------------------------- paths that are not there */

/* Every call a program names a path with fails with ENOENT where sysfs
 * and devtmpfs have nothing, as the kernel's lookup does (kernfs_iop_lookup
 * finds no node): a missing attribute of a device, a device the class
 * lacks, a uverbs node no device has, and an empty path. */
static void expect_enoent(const char *path)
{
	struct dirent **list;
	struct statx stx;
	struct stat st;
	char buf[64];

	/* (What opens by mistake is left open: the test has failed.) */
#define ENOENT_OF(call, failed)                                                              \
	do {                                                                                 \
		errno = 0;                                                                   \
		if (!(failed))                                                               \
			fail_msg("%s(%s) succeeded", call, path);                            \
		if (errno != ENOENT)                                                         \
			fail_msg("%s(%s): %s, not ENOENT", call, path, strerror(errno));     \
	} while (0)

	ENOENT_OF("open", open(path, O_RDONLY | O_CLOEXEC) < 0);
	ENOENT_OF("fopen", !fopen(path, "r"));
	ENOENT_OF("stat", stat(path, &st) == -1);
	ENOENT_OF("lstat", lstat(path, &st) == -1);
	ENOENT_OF("fstatat", fstatat(AT_FDCWD, path, &st, 0) == -1);
	ENOENT_OF("statx", statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx) == -1);
	ENOENT_OF("access", access(path, F_OK) == -1);
	ENOENT_OF("faccessat", faccessat(AT_FDCWD, path, R_OK, 0) == -1);
	ENOENT_OF("readlink", readlink(path, buf, sizeof buf) == -1);
	ENOENT_OF("getxattr", getxattr(path, "user.rdmacheck", buf, sizeof buf) == -1);
	ENOENT_OF("lgetxattr", lgetxattr(path, "user.rdmacheck", buf, sizeof buf) == -1);
	ENOENT_OF("listxattr", listxattr(path, buf, sizeof buf) == -1);
	ENOENT_OF("llistxattr", llistxattr(path, buf, sizeof buf) == -1);
	if (!*path)
		return;
	ENOENT_OF("opendir", !opendir(path));
	ENOENT_OF("scandir", scandir(path, &list, NULL, alphasort) == -1);
#undef ENOENT_OF
}

void sysfs__missing_paths(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	char path[512], cwd[PATH_MAX], gone[] = "/tmp/rdmacheck-cwd-XXXXXX", *long_path;
	struct statx stx;
	struct stat st;
	int closed, fd, err;

	snprintf(path, sizeof path, "%s/no_such_attribute", ctx->device->ibdev_path);
	expect_enoent(path);
	snprintf(path, sizeof path, "%s/ports/99/state", ctx->device->ibdev_path);
	expect_enoent(path);
	expect_enoent("/sys/class/infiniband/no_such_device");
	expect_enoent("/sys/class/infiniband_verbs/uverbs999/ibdev");
	expect_enoent("/dev/infiniband/uverbs999");
	expect_enoent("");
	/* A relative path from a descriptor that is not open: EBADF
	 * (openat(2)), whatever it names. */
	closed = dup(2);
	assert_true(closed >= 0);
	close(closed);
	errno = 0;
	assert_int_equal(openat(closed, "class/infiniband", O_RDONLY | O_CLOEXEC), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(fstatat(closed, "class/infiniband", &st, 0), -1);
	assert_int_equal(errno, EBADF);
	/* A name longer than PATH_MAX, absolute or relative: ENAMETOOLONG
	 * (path_resolution(7)). */
	long_path = malloc(PATH_MAX + 64);
	assert_non_null(long_path);
	for (int rel = 0; rel < 2; rel++) {
		size_t at = (size_t)snprintf(long_path, PATH_MAX + 64, "%s",
					     rel ? "infiniband/" : "/sys/class/infiniband/");

		memset(long_path + at, 'a', PATH_MAX + 32 - at);
		long_path[PATH_MAX + 32] = '\0';
		errno = 0;
		assert_int_equal(open(long_path, O_RDONLY | O_CLOEXEC), -1);
		assert_int_equal(errno, ENAMETOOLONG);
		errno = 0;
		assert_int_equal(stat(long_path, &st), -1);
		assert_int_equal(errno, ENAMETOOLONG);
	}
	free(long_path);
	/* A relative path from a working directory that was removed: ENOENT
	 * (a deleted directory has no entries). */
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_non_null(mkdtemp(gone));
	assert_int_equal(chdir(gone), 0);
	assert_int_equal(rmdir(gone), 0);
	errno = 0;
	fd = open("infiniband/node_type", O_RDONLY | O_CLOEXEC);
	err = errno;
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(fd, -1);
	assert_int_equal(err, ENOENT);
	/* The directory above the class is there, for every call. */
	if (statx(AT_FDCWD, "/sys/class", 0, STATX_BASIC_STATS, &stx))
		fail_msg("statx(/sys/class): %s", strerror(errno));
	assert_true(S_ISDIR(stx.stx_mode));
	assert_int_equal(faccessat(AT_FDCWD, "/sys/class", R_OK | X_OK, 0), 0);
	ibv_close_device(ctx);
}

/* ---------------------------------------------------------------- the C library's other entry points */

/* The same files through the C library's other names for the same calls:
 * the large-file ones (open64, stat64, ...), _FORTIFY_SOURCE's checked
 * ones (__open_2, __realpath_chk: glibc's debug/), and the stat family's
 * before glibc 2.33 (__xstat, still exported for the programs built
 * then), which a program built elsewhere (a vendor's UCX) calls. Each
 * finds what the plain call finds. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
char *__realpath_chk(const char *path, char *resolved, size_t resolved_len);

#if defined(__x86_64__)
#define STAT_VER 1 /* _STAT_VER_LINUX */
#else
#define STAT_VER 0 /* _STAT_VER_KERNEL */
#endif

static void expect_node_type(int fd, const char *how, const char *want)
{
	char line[64] = { 0 };

	if (fd < 0)
		fail_msg("%s: %s", how, strerror(errno));
	assert_int_equal(read(fd, line, sizeof line - 1), strlen(want));
	if (strcmp(line, want))
		fail_msg("%s reads \"%s\"", how, line);
	close(fd);
}

static void expect_stat(int ret, const struct stat *st, mode_t type, const char *how)
{
	if (ret)
		fail_msg("%s: %s", how, strerror(errno));
	if ((st->st_mode & S_IFMT) != type)
		fail_msg("%s: mode 0%o, not type 0%o", how, st->st_mode, type);
	if (type == S_IFREG && st->st_size != sysconf(_SC_PAGESIZE))
		fail_msg("%s: size %lld, not a page", how, (long long)st->st_size);
}

void sysfs__other_call_names(void **state)
{
	typedef int (*xstat_fn)(int, const char *, struct stat *);
	typedef int (*fxstatat_fn)(int, int, const char *, struct stat *, int);
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	const char *name = ibv_get_device_name(ctx->device);
	const char *want = node_type_line(ctx->device);
	char attr[512], entry[512], dev[512], resolved[PATH_MAX], line[64];
	static const char *const xstats[] = { "__xstat", "__xstat64", "__lxstat", "__lxstat64" };
	struct dirent64 **list;
	struct stat64 st64;
	struct stat st;
	bool listed = false;
	int n;
	FILE *f;

	snprintf(attr, sizeof attr, "/sys/class/infiniband/%s/node_type", name);
	snprintf(entry, sizeof entry, "/sys/class/infiniband/%s", name);
	snprintf(dev, sizeof dev, "/dev/infiniband/%s", ctx->device->dev_name);

	expect_node_type(open64(attr, O_RDONLY | O_CLOEXEC), "open64", want);
	expect_node_type(openat64(AT_FDCWD, attr, O_RDONLY | O_CLOEXEC), "openat64", want);
	expect_node_type(__open_2(attr, O_RDONLY | O_CLOEXEC), "__open_2", want);
	expect_node_type(__open64_2(attr, O_RDONLY | O_CLOEXEC), "__open64_2", want);
	expect_node_type(__openat_2(AT_FDCWD, attr, O_RDONLY | O_CLOEXEC), "__openat_2", want);
	expect_node_type(__openat64_2(AT_FDCWD, attr, O_RDONLY | O_CLOEXEC), "__openat64_2", want);
	f = fopen64(attr, "r");
	if (!f)
		fail_msg("fopen64(%s): %s", attr, strerror(errno));
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, want);
	fclose(f);

	expect_stat(stat64(attr, &st64), (struct stat *)&st64, S_IFREG, "stat64 of an attribute");
	expect_stat(lstat64(entry, &st64), (struct stat *)&st64, S_IFLNK, "lstat64 of a class entry");
	expect_stat(fstatat64(AT_FDCWD, entry, &st64, 0), (struct stat *)&st64, S_IFDIR,
		    "fstatat64 of a class entry");
	expect_stat(stat64(dev, &st64), (struct stat *)&st64, S_IFCHR, "stat64 of the uverbs node");
	assert_int_equal(major(st64.st_rdev), 231);
	/* A trailing slash: the directory the link leads to. */
	snprintf(resolved, sizeof resolved, "%s/", entry);
	expect_stat(stat(resolved, &st), &st, S_IFDIR, "stat of a class entry with a trailing slash");
	assert_int_equal(eaccess(attr, R_OK), 0);

	for (size_t i = 0; i < sizeof xstats / sizeof xstats[0]; i++) {
		xstat_fn xstat = (xstat_fn)dlsym(RTLD_DEFAULT, xstats[i]);
		bool l = xstats[i][2] == 'l';

		if (!xstat)
			RC_SKIP("the C library has no %s", xstats[i]);
		expect_stat(xstat(STAT_VER, l ? entry : attr, &st), &st, l ? S_IFLNK : S_IFREG, xstats[i]);
	}
	for (int i = 0; i < 2; i++) {
		const char *fn = i ? "__fxstatat64" : "__fxstatat";
		fxstatat_fn fxstatat = (fxstatat_fn)dlsym(RTLD_DEFAULT, fn);

		if (!fxstatat)
			RC_SKIP("the C library has no %s", fn);
		expect_stat(fxstatat(STAT_VER, AT_FDCWD, entry, &st, 0), &st, S_IFDIR, fn);
		expect_stat(fxstatat(STAT_VER, AT_FDCWD, entry, &st, AT_SYMLINK_NOFOLLOW), &st, S_IFLNK, fn);
	}

	n = scandir64("/sys/class/infiniband", &list, NULL, alphasort64);
	if (n < 0)
		fail_msg("scandir64(/sys/class/infiniband): %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		listed |= !strcmp(list[i]->d_name, name);
		free(list[i]);
	}
	free(list);
	assert_true(listed);

	if (!__realpath_chk(entry, resolved, sizeof resolved))
		fail_msg("__realpath_chk(%s): %s", entry, strerror(errno));
	assert_int_equal(strncmp(resolved, "/sys/devices/", 13), 0);
	snprintf(line, sizeof line, "/infiniband/%s", name);
	assert_string_equal(resolved + strlen(resolved) - strlen(line), line);
	ibv_close_device(ctx);
}
