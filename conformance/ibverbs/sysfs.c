/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the files the kernel shows of an RDMA device, which UCX,
 * Open MPI, hwloc and libibverbs itself read: /sys/class/infiniband/<dev>
 * (node attributes, the port's state and rate, its GID and P_Key tables),
 * /sys/class/infiniband_verbs/uverbsN and /dev/infiniband/uverbsN. Each
 * must say what the verbs calls say. On the mock the suite sees the
 * system view (mock/sys) as any program under rdmamock-run does. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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
	expect_file(dev->ibdev_path, "node_type", "1: CA");
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
	char buf[64], small[3];

	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "node_type", buf, sizeof buf), 5);
	assert_string_equal(buf, "1: CA");
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
	expect_file(port, "pkeys/0", "0xffff");
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
