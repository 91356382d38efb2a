/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: ibv_query_device_ex(), ibv_query_port(), ibv_query_gid(),
 * ibv_query_gid_ex(), ibv_query_gid_table(), ibv_query_pkey(),
 * ibv_get_pkey_index(), ibv_fork_init() and ibv_is_fork_initialized(),
 * ibv_get_device_index(): what ibv_devinfo and the pingpong examples read
 * before they make a QP. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "fixtures.h"
#include "qp.h"

#define SENTINEL 0xab

static struct ibv_port_attr port_of(struct ibv_context *ctx)
{
	struct ibv_port_attr port;

	FX_VERBS_OK(ibv_query_port(ctx, 1, &port));
	return port;
}

static uint8_t port_count(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;

	FX_VERBS_OK(ibv_query_device(ctx, &attr));
	return attr.phys_port_cnt;
}

/* The first index below gid_tbl_len whose entry is empty. */
static int empty_gid_index(struct ibv_context *ctx)
{
	int len = port_of(ctx).gid_tbl_len;
	struct ibv_gid_entry e;

	for (int i = 0; i < len; i++)
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0) == ENODATA)
			return i;
	RC_SKIP("config: every GID entry of %s is filled", ibv_get_device_name(ctx->device));
	return -1;
}

static bool gid_is_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return !memcmp(gid, &zero, sizeof zero);
}

/* ---------------------------------------------------------------- device */

void ibv_query_device_ex__orig_attr(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr attr;

	memset(&ex, SENTINEL, sizeof ex);
	FX_VERBS_OK(ibv_query_device_ex(ctx, NULL, &ex));
	FX_VERBS_OK(ibv_query_device(ctx, &attr));
	assert_memory_equal(&ex.orig_attr, &attr, sizeof attr);
	assert_int_equal(ex.phys_port_cnt_ex, attr.phys_port_cnt);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* The context's cmd_fd is the device file's open descriptor, closed on
 * exec (libibverbs opens it O_RDWR | O_CLOEXEC): it can be duplicated and
 * is a character device; it goes with ibv_close_device. */
void ibv_open_device__cmd_fd(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	int fd = ctx->cmd_fd, flags = fcntl(fd, F_GETFD), copy;
	struct stat st;

	if (flags < 0)
		fail_msg("cmd_fd %d: fcntl(F_GETFD): %s", fd, strerror(errno));
	assert_true(flags & FD_CLOEXEC);
	assert_int_equal((fcntl(fd, F_GETFL) & O_ACCMODE), O_RDWR);
	if (fstat(fd, &st))
		fail_msg("cmd_fd %d: fstat: %s", fd, strerror(errno));
	assert_true(S_ISCHR(st.st_mode));
	copy = dup(fd);
	if (copy < 0)
		fail_msg("dup(cmd_fd): %s", strerror(errno));
	close(copy);
	FX_VERBS_OK(ibv_close_device(ctx));
	errno = 0;
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
}

/* ---------------------------------------------------------------- port */

static void query_port_number(uint8_t (*which)(struct ibv_context *))
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_port_attr port;

	RC_ASSERT_ERRNO("ibv_query_port", ibv_query_port(ctx, which(ctx), &port), EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

static uint8_t port_zero(struct ibv_context *ctx) { return 0; }
static uint8_t port_past_last(struct ibv_context *ctx) { return port_count(ctx) + 1; }

void ibv_query_port__port_zero(void **state) { query_port_number(port_zero); }
void ibv_query_port__past_last_port(void **state) { query_port_number(port_past_last); }

void ibv_query_port__roce(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_port_attr port = port_of(ctx);

	fx_require_ib_transport(ctx, "roce", FX_IWARP_NO_ROCE);
	if (port.link_layer == IBV_LINK_LAYER_INFINIBAND) {
		FX_VERBS_OK(ibv_close_device(ctx));
		RC_SKIP("port 1 is InfiniBand: IB_PORT checks it");
	}
	assert_int_equal(port.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(port.state, IBV_PORT_ACTIVE);
	assert_int_equal(port.lid, 0);
	assert_true(port.gid_tbl_len >= 1);
	assert_true(port.pkey_tbl_len >= 1);
	assert_true(port.active_mtu <= port.max_mtu);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ---------------------------------------------------------------- GIDs */

void ibv_query_gid__empty_entry(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	union ibv_gid gid;

	memset(&gid, SENTINEL, sizeof gid);
	assert_int_equal(ibv_query_gid(ctx, 1, empty_gid_index(ctx), &gid), 0);
	assert_true(gid_is_zero(&gid));
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_query_gid__past_table(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	union ibv_gid gid;

	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, 1, port_of(ctx).gid_tbl_len, &gid), -1);
	RC_ASSERT_ERRNO("ibv_query_gid", errno, EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_query_gid__past_last_port(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	union ibv_gid gid;

	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, port_count(ctx) + 1, 0, &gid), -1);
	RC_ASSERT_ERRNO("ibv_query_gid", errno, EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_query_gid_ex__entries(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	int len = port_of(ctx).gid_tbl_len, filled = 0;
	union ibv_gid v4 = { .raw = { [10] = 0xff, [11] = 0xff } };
	char ifname[IF_NAMESIZE];
	bool v4_found = false;

	if (fx_port_ib(ctx, 1)) {
		FX_VERBS_OK(ibv_close_device(ctx));
		RC_SKIP("port 1 is InfiniBand: IB_PORT checks its GID");
	}
	fx_require_ib_transport(ctx, "roce", FX_IWARP_NO_ROCE);
	assert_int_equal(inet_pton(AF_INET, fx_addr(AF_INET), &v4.raw[12]), 1);

	for (int i = 0; i < len; i++) {
		struct ibv_gid_entry e;
		union ibv_gid gid;
		int ret;

		memset(&e, SENTINEL, sizeof e);
		ret = ibv_query_gid_ex(ctx, 1, i, &e, 0);
		if (ret == ENODATA)
			continue;
		assert_int_equal(ret, 0);
		filled++;
		FX_OK(ibv_query_gid(ctx, 1, i, &gid));
		assert_memory_equal(&e.gid, &gid, sizeof gid);
		assert_int_equal(e.gid_index, i);
		assert_int_equal(e.port_num, 1);
		if (e.gid_type != IBV_GID_TYPE_ROCE_V1 && e.gid_type != IBV_GID_TYPE_ROCE_V2)
			fail_msg("entry %d: gid_type %u is not RoCE", i, e.gid_type);
		if (!if_indextoname(e.ndev_ifindex, ifname))
			fail_msg("entry %d: ndev_ifindex %u names no interface", i, e.ndev_ifindex);
		v4_found |= e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(&e.gid, &v4, sizeof v4);
	}
	assert_true(filled >= 1);
	if (!v4_found)
		fail_msg("no RoCE v2 entry ::ffff:%s", fx_addr(AF_INET));
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_query_gid_ex__empty_entry(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_gid_entry e;

	/* Not RC_ASSERT_ERRNO: the table's _ibv_query_gid_ex rows (a leading _) are
	 * dropped by mock/abi/errnos.sh, so the call has no table. */
	assert_int_equal(ibv_query_gid_ex(ctx, 1, empty_gid_index(ctx), &e, 0), ENODATA);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_query_gid_ex__einval(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	uint32_t len = port_of(ctx).gid_tbl_len;
	struct ibv_gid_entry e;

	/* Not RC_ASSERT_ERRNO: see ibv_query_gid_ex__empty_entry. */
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 0, &e, 1), EINVAL);
	assert_int_equal(ibv_query_gid_ex(ctx, 1, len, &e, 0), EINVAL);
	assert_int_equal(ibv_query_gid_ex(ctx, 0, 0, &e, 0), EINVAL);
	assert_int_equal(ibv_query_gid_ex(ctx, port_count(ctx) + 1u, 0, &e, 0), EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

#define TABLE_MAX 64

void ibv_query_gid_table__entries(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_gid_entry table[TABLE_MAX];
	int len = port_of(ctx).gid_tbl_len, valid = 0;
	ssize_t n;

	n = ibv_query_gid_table(ctx, table, TABLE_MAX, 0);
	if (n < 0)
		fail_msg("ibv_query_gid_table: %s", strerror((int)-n));
	for (int i = 0; i < len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		assert_true(valid < n);
		assert_memory_equal(&table[valid], &e, sizeof e);
		valid++;
	}
	assert_int_equal(n, valid);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_query_gid_table__einval(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_gid_entry table[TABLE_MAX];
	ssize_t n = ibv_query_gid_table(ctx, table, TABLE_MAX, 0);

	assert_true(n >= 1);
	/* Not RC_ASSERT_ERRNO: _ibv_query_gid_table's rows are dropped by
	 * mock/abi/errnos.sh (a leading _), so the call has no table. */
	assert_int_equal(ibv_query_gid_table(ctx, table, (size_t)n - 1, 0), -EINVAL);
	assert_int_equal(ibv_query_gid_table(ctx, table, 0, 0), -EINVAL);
	assert_int_equal(ibv_query_gid_table(ctx, table, TABLE_MAX, 1), -EINVAL);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ---------------------------------------------------------------- P_Keys */

void ibv_query_pkey__default(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	__be16 pkey;

	fx_require_ib_transport(ctx, "pkeys", FX_IWARP_NO_PKEYS);
	FX_OK(ibv_query_pkey(ctx, 1, 0, &pkey));
	assert_int_equal(pkey, htons(0xffff));
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_query_pkey__past_table(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	__be16 pkey = 0xabab;

	errno = 0;
	assert_int_equal(ibv_query_pkey(ctx, 1, port_of(ctx).pkey_tbl_len, &pkey), -1);
	RC_ASSERT_ERRNO("ibv_query_pkey", errno, ENOENT);
	assert_int_equal(pkey, 0xabab);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_get_pkey_index__default(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);

	fx_require_ib_transport(ctx, "pkeys", FX_IWARP_NO_PKEYS);
	assert_int_equal(ibv_get_pkey_index(ctx, 1, htons(0xffff)), 0);
	FX_VERBS_OK(ibv_close_device(ctx));
}

void ibv_get_pkey_index__not_in_table(void **state)
{
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);

	errno = 0;
	assert_int_equal(ibv_get_pkey_index(ctx, 1, htons(0x1234)), -1);
	RC_ASSERT_ERRNO("ibv_get_pkey_index", errno, ENOENT);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* ---------------------------------------------------------------- fork, index */

void ibv_is_fork_initialized__unneeded(void **state)
{
	fx_require_backend();
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
}

void ibv_get_device_index__distinct(void **state)
{
	struct ibv_device **list, **again;
	int n, m;

	fx_require_backend();
	list = ibv_get_device_list(&n);
	again = ibv_get_device_list(&m);
	if (!list || !again)
		fail_msg("ibv_get_device_list: %s", strerror(errno));
	assert_int_equal(n, m);
	for (int i = 0; i < n; i++) {
		int index = ibv_get_device_index(list[i]);

		assert_true(index >= 0);
		for (int k = 0; k < m; k++)
			if (!strcmp(ibv_get_device_name(again[k]), ibv_get_device_name(list[i])))
				assert_int_equal(ibv_get_device_index(again[k]), index);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(ibv_get_device_index(list[j]), index);
	}
	ibv_free_device_list(again);
	ibv_free_device_list(list);
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		fail_msg("no device %s to open", name);
	return ctx;
}

static void assert_gid(struct ibv_context *ctx, int index, const char *want)
{
	union ibv_gid gid, expected;
	char text[INET6_ADDRSTRLEN];

	FX_VERBS_OK(ibv_query_gid(ctx, 1, index, &gid));
	assert_int_equal(inet_pton(AF_INET6, want, &expected), 1);
	if (memcmp(&gid, &expected, sizeof gid))
		fail_msg("GID %d is %s, not %s", index, inet_ntop(AF_INET6, &gid, text, sizeof text), want);
}

/* A device given its net device's link-local address (a topology that
 * mirrors a host interface) has it as its default GID, as rxe44's GID 0
 * is dummy0's fe80::28d0:a9ff:fef4:26c6 (measured); a generic device
 * also takes its interface id as its node GUID, as rxe does. */
void ibv_query_gid__link_local_default(void **state)
{
	int (*load)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_topology_load");
	struct sockaddr_storage ss;
	struct ibv_device_attr attr;
	struct rdma_cm_id *id;
	struct ibv_context *ctx;
	__be64 guid;

	if (load("rxe0=generic:192.0.2.2/24,fe80::fc:ff:fe00:1/64;"
		 "mlx5_0=mlx5:198.51.100.2/24,fe80::2c9:3ff:fe00:7/64"))
		fail_msg("rdmamock_topology_load failed");
	ctx = open_by_name("rxe0");
	assert_gid(ctx, 0, "fe80::fc:ff:fe00:1");
	assert_gid(ctx, 1, "::ffff:192.0.2.2");
	FX_VERBS_OK(ibv_query_device(ctx, &attr));
	memcpy(&guid, (const uint8_t[]){ 0, 0xfc, 0, 0xff, 0xfe, 0, 0, 1 }, 8);
	assert_true(attr.node_guid == guid);
	FX_VERBS_OK(ibv_close_device(ctx));
	ctx = open_by_name("mlx5_0");
	assert_gid(ctx, 0, "fe80::2c9:3ff:fe00:7");
	assert_gid(ctx, 1, "fe80::2c9:3ff:fe00:7");
	assert_gid(ctx, 2, "::ffff:198.51.100.2");
	assert_gid(ctx, 3, "::ffff:198.51.100.2");
	FX_VERBS_OK(ibv_close_device(ctx));
	/* The address is the device's: a bind to it attaches the device. */
	fx_sockaddr(AF_INET6, "fe80::fc:ff:fe00:1", 0, &ss);
	FX_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&ss));
	assert_non_null(id->verbs);
	assert_string_equal(ibv_get_device_name(id->verbs->device), "rxe0");
	FX_OK(rdma_destroy_id(id));
}
