/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the edges of the mock's control API (rdmamock.h): the fault
 * table's parser, its identity of faults, probability and aiming, the
 * list of fault points and the errno tables, and the calls that shape the
 * fabric given what they must refuse or find already done. Mock-only. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"
#include "qp.h"

typedef int (*spec_fn)(const char *spec, char *err, size_t errlen);

static spec_fn fault_check(void)
{
	return (spec_fn)fx_mock_call("rdmamock_fault_check");
}

static spec_fn fault_add(void)
{
	return (spec_fn)fx_mock_call("rdmamock_fault_add");
}

static int fault_clear(void)
{
	return ((int (*)(void))fx_mock_call("rdmamock_fault_clear"))();
}

static long fault_fired(const char *point)
{
	return ((long (*)(const char *))fx_mock_call("rdmamock_fault_fired"))(point);
}

/* ---------------------------------------------------------------- the parser */

/* Every key's bad value is refused with a message naming it, and nothing is
 * added; a NULL spec too, and a NULL buffer for the message is allowed. */
void rdmamock_fault_check__names_each_bad_value(void **state)
{
	static const struct {
		const char *spec, *says;
	} bad[] = {
		{ "rdmamock/ibverbs/wc status=fine", "status=fine: not a number or an IBV_WC_ name" },
		{ "rdmamock/ibverbs/wc status=IBV_WC_SUCCESS", "status=0: not an error status of a work completion" },
		{ "rdmamock/ibverbs/wc status=22", "status=22: not an error status of a work completion" },
		{ "rdmamock/ibverbs/drop dev=", "dev=: not a device name" },
		{ "rdmamock/ibverbs/drop dev=a_device_name_longer_than_any_the_fabric_can_hold_0123456789abcdef",
		  "not a device name" },
		{ "rdmamock/rdmacm/event/rejected addr=10.0.0", "addr=10.0.0: not an IPv4 or IPv6 address" },
		{ "rdmamock/rdmacm/event/rejected addr=fe80::1::2", "not an IPv4 or IPv6 address" },
		{ "rdmamock/ibverbs/drop qpn=0x1000000", "qpn=0x1000000: not a QP number" },
		{ "rdmamock/ibverbs/drop pid=0", "pid=0: not a process id" },
		{ "rdmamock/ibverbs/drop prob=1.5", "prob=1.5: not a probability (0 to 1)" },
		{ "rdmamock/ibverbs/drop prob=half", "prob=half: not a probability" },
		{ "rdmamock/ibverbs/delay ms=3600001", "ms=3600001: not a duration in milliseconds" },
		{ "rdmamock/ibverbs/drop seed=x1", "seed=x1: not a number" },
		{ "rdmamock/rdmacm/event/rejected data=abc", "data=abc: not hex bytes" },
		{ "rdmamock/rdmacm/event/rejected data=zz", "data=zz: not hex bytes" },
		{ "rdmamock/ibverbs/drop nth=2++", "nth=2++: not N or N+" },
		{ "rdmamock/ibverbs/drop =1", "'=1' is not key=value" },
		{ "rdmamock/ibverbs/drop averyveryverylongkey=1", "is not key=value" },
	};
	spec_fn check = fault_check();
	char err[256], spec[400];
	int n;

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err[0] = 'x';
		assert_int_equal(check(bad[i].spec, err, sizeof err), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("%s: said \"%s\", not \"%s\"", bad[i].spec, err, bad[i].says);
	}
	assert_int_equal(check(NULL, err, sizeof err), -EINVAL);
	assert_string_equal(err, "no spec");
	assert_int_equal(check("rdmamock/ibverbs/drop nth=0", NULL, 0), -EINVAL);
	/* A fault's text is its identity, kept in 255 characters. */
	n = snprintf(spec, sizeof spec, "rdmamock/ibverbs/drop data=");
	memset(spec + n, 'a', 300);
	spec[n + 300] = '\0';
	assert_int_equal(check(spec, err, sizeof err), -EINVAL);
	if (!strstr(err, "is longer than 255 characters"))
		fail_msg("a 327-character fault: said \"%s\"", err);
}

/* What does parse, and how many faults it counts: empty parts between
 * semicolons are none; names, numbers and EAI_ codes all name errnos. */
void rdmamock_fault_check__counts_what_parses(void **state)
{
	spec_fn check = fault_check();
	char err[256], spec[64 * 40];
	size_t len = 0;

	fx_require_backend();
	assert_int_equal(check("rdmamock/rdmacm/rdma_connect errno=ECONNREFUSED", err, sizeof err), 1);
	assert_int_equal(check("  ;; rdmamock/rdmacm/rdma_connect errno=111 ; ;", err, sizeof err), 1);
	assert_int_equal(check("rdmamock/rdmacm/rdma_getaddrinfo errno=EAI_NONAME;"
			       "rdmamock/rdmacm/rdma_getaddrinfo errno=-2;"
			       "rdmamock/ibverbs/wc status=IBV_WC_GENERAL_ERR qpn=0xffffff dev=rxe0;"
			       "rdmamock/rdmacm/event/rejected addr=::1 port=0 data=00ff;"
			       "rdmamock/ibverbs/drop prob=0.25 seed=0x2a nth=3+ pid=1",
			       err, sizeof err), 5);
	assert_int_equal(check("", err, sizeof err), 0);
	/* The table holds 32: a spec of 33 is refused as such, before the
	 * table is asked. */
	for (int i = 0; i < 33; i++)
		len += (size_t)snprintf(spec + len, sizeof spec - len, "rdmamock/ibverbs/drop nth=%d;", i + 1);
	assert_int_equal(check(spec, err, sizeof err), -ENOSPC);
	assert_string_equal(err, "more than 32 faults");
	/* Checking adds nothing. */
	assert_int_equal(fault_clear(), 0);
}

/* A fault is its text: the same text again, in the same spec or a later
 * one, takes no second place in the table. */
void rdmamock_fault_add__same_fault_once(void **state)
{
	spec_fn add = fault_add();
	char err[256];

	fx_require_backend();
	fault_clear();
	assert_int_equal(add("rdmamock/ibverbs/ibv_alloc_pd pid=1; rdmamock/ibverbs/ibv_alloc_pd pid=1",
			     err, sizeof err), 2);
	assert_int_equal(add("  rdmamock/ibverbs/ibv_alloc_pd pid=1\t", err, sizeof err), 1);
	assert_int_equal(add("rdmamock/ibverbs/ibv_alloc_pd pid=2", err, sizeof err), 1);
	assert_int_equal(fault_clear(), 2);
	assert_int_equal(fault_clear(), 0);
	assert_int_equal(fault_fired(NULL), -EINVAL);
	assert_int_equal(fault_fired("rdmamock/ibverbs/ibv_alloc_pd"), 0);
}

/* Which of n calls of ibv_alloc_pd fail: bit i for the i-th. */
static uint64_t alloc_pd_failures(struct ibv_context *ctx, int n)
{
	uint64_t failed = 0;

	for (int i = 0; i < n; i++) {
		struct ibv_pd *pd = ibv_alloc_pd(ctx);

		if (pd)
			FX_VERBS_OK(ibv_dealloc_pd(pd));
		else if (errno == ENOMEM)
			failed |= 1ull << i;
		else
			fail_msg("ibv_alloc_pd: %s, not the fault's ENOMEM", strerror(errno));
	}
	return failed;
}

/* prob=P fails each matching hit with probability P from a generator
 * seeded by seed=S: prob=0 never, prob=1 always, and a fault added again
 * with the same seed fails the same hits. */
void rdmamock_fault_add__probability_and_seed(void **state)
{
	spec_fn add = fault_add();
	struct ibv_context *ctx;
	uint64_t first, again, other;
	char spec[160], err[256];
	int pid = (int)getpid();

	fx_require_backend();
	ctx = fx_open_device(FX_DEV_UNDER_TEST);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/ibv_alloc_pd errno=ENOMEM prob=0 pid=%d", pid);
	assert_int_equal(add(spec, err, sizeof err), 1);
	assert_int_equal(alloc_pd_failures(ctx, 20), 0);
	assert_int_equal(fault_clear(), 1);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/ibv_alloc_pd errno=ENOMEM prob=1 pid=%d", pid);
	assert_int_equal(add(spec, err, sizeof err), 1);
	assert_int_equal(alloc_pd_failures(ctx, 20), (1ull << 20) - 1);
	assert_int_equal(fault_fired("rdmamock/ibverbs/ibv_alloc_pd"), 20);
	assert_int_equal(fault_clear(), 1);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/ibv_alloc_pd errno=ENOMEM prob=0.5 seed=7 pid=%d", pid);
	assert_int_equal(add(spec, err, sizeof err), 1);
	first = alloc_pd_failures(ctx, 64);
	assert_int_equal(fault_clear(), 1);
	assert_int_equal(add(spec, err, sizeof err), 1);
	again = alloc_pd_failures(ctx, 64);
	assert_int_equal(fault_clear(), 1);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/ibv_alloc_pd errno=ENOMEM prob=0.5 seed=8 pid=%d", pid);
	assert_int_equal(add(spec, err, sizeof err), 1);
	other = alloc_pd_failures(ctx, 64);
	assert_int_equal(fault_clear(), 1);
	assert_int_equal(first, again);
	/* About half of 64 fail: far from none and from all. */
	RC_ASSERT_IN_RANGE(__builtin_popcountll(first), 12, 52);
	assert_true(first != other);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* One signalled SEND of an RC QP connected to itself, its receive posted:
 * the SEND's status. */
static enum ibv_wc_status send_once(struct fx_qp *q)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)q->buf + 32, .length = 8, .lkey = q->mr->lkey };
	struct ibv_sge ssge = { .addr = (uintptr_t)q->buf, .length = 8, .lkey = q->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 }, *bad_rwr;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	struct ibv_wc wc;

	FX_VERBS_OK(ibv_post_recv(q->qp, &rwr, &bad_rwr));
	FX_VERBS_OK(ibv_post_send(q->qp, &wr, &bad));
	for (int n = 0; n < 2; n++) {
		fx_poll_one(q->cq, &wc);
		if (wc.wr_id == 1)
			status = wc.status;
	}
	return status;
}

/* dev= and qpn= aim a data-path fault: one aimed at another device or
 * another QP leaves the SEND alone; aimed at this QP's device and number
 * it fails the SEND with its status. */
void rdmamock_fault_add__aimed_by_device_and_qpn(void **state)
{
	spec_fn add = fault_add();
	const char *dev, *other;
	char spec[200], err[256];
	struct fx_qp q;

	fx_require_backend();
	fx_qp_create(&q, FX_DEV_MLX5, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	dev = ibv_get_device_name(q.ctx->device);
	other = strcmp(dev, "rxe0") ? "rxe0" : "mlx5_0";
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/wc status=IBV_WC_REM_OP_ERR dev=%s qpn=%u; "
		 "rdmamock/ibverbs/wc status=IBV_WC_REM_OP_ERR dev=%s qpn=%u",
		 other, q.qp->qp_num, dev, (q.qp->qp_num + 1) & 0xffffff);
	assert_int_equal(add(spec, err, sizeof err), 2);
	assert_int_equal(send_once(&q), IBV_WC_SUCCESS);
	assert_int_equal(fault_fired("rdmamock/ibverbs/wc"), 0);
	snprintf(spec, sizeof spec, "rdmamock/ibverbs/wc status=IBV_WC_REM_OP_ERR dev=%s qpn=%u", dev,
		 q.qp->qp_num);
	assert_int_equal(add(spec, err, sizeof err), 1);
	assert_int_equal(send_once(&q), IBV_WC_REM_OP_ERR);
	assert_int_equal(fault_fired("rdmamock/ibverbs/wc"), 1);
	fault_clear();
	fx_qp_release(&q);
}

/* ---------------------------------------------------------------- points and errno tables */

/* The points by index, NULL before the first and past the last; each one
 * a fault may name, and the counts of reaching them answer for every
 * point and for no other name. */
void rdmamock_point__lists_every_point(void **state)
{
	const char *(*point)(int) = (const char *(*)(int))fx_mock_call("rdmamock_point");
	long (*reached)(const char *) = (long (*)(const char *))fx_mock_call("rdmamock_point_reached");
	spec_fn check = fault_check();
	bool connect = false, wc = false;
	char err[256];
	int n;

	assert_null(point(-1));
	for (n = 0; point(n); n++) {
		const char *p = point(n);

		if (strncmp(p, "rdmamock/", 9))
			fail_msg("point %d is \"%s\"", n, p);
		if (check(p, err, sizeof err) != 1)
			fail_msg("point %d, %s, does not parse: %s", n, p, err);
		if (reached(p) < 0)
			fail_msg("rdmamock_point_reached(%s) = %ld", p, reached(p));
		connect |= !strcmp(p, "rdmamock/rdmacm/rdma_connect");
		wc |= !strcmp(p, "rdmamock/ibverbs/wc");
	}
	assert_true(n > 100);
	assert_null(point(n));
	assert_true(connect && wc);
	assert_int_equal(reached("rdmamock/rdmacm/rdma_conect"), -ENOENT);
	assert_int_equal(reached(NULL), -ENOENT);
}

/* A call's errnos, the usual failure first; as many as fit in out, and
 * the count regardless; -ENOENT for a call that cannot fail. */
void rdmamock_errnos__the_tables(void **state)
{
	int (*errnos)(const char *, int *, int) =
		(int (*)(const char *, int *, int))fx_mock_call("rdmamock_errnos");
	int out[64], n;

	n = errnos("rdma_create_id", out, 64);
	assert_true(n >= 1 && n <= 64);
	assert_int_equal(out[0], ENOMEM);
	n = errnos("ibv_alloc_pd", NULL, 0);
	assert_true(n >= 1);
	out[0] = out[1] = -12345;
	assert_int_equal(errnos("rdma_resolve_addr", out, 1), errnos("rdma_resolve_addr", NULL, 0));
	assert_true(out[0] > 0);
	assert_int_equal(out[1], -12345);
	/* rdma_getaddrinfo's EAI_ codes are negative. */
	n = errnos("rdma_getaddrinfo", out, 64);
	assert_true(n >= 1);
	for (int i = 0; i < n && i < 64; i++)
		if (out[i] < 0)
			n = -1;
	assert_int_equal(n, -1);
	assert_int_equal(errnos("rdma_get_src_port", out, 64), -ENOENT);
	assert_int_equal(errnos("no_such_call", out, 64), -ENOENT);
}

/* ---------------------------------------------------------------- shaping the fabric */

void rdmamock_version__names_the_mock(void **state)
{
	const char *(*version)(void) = (const char *(*)(void))fx_mock_call("rdmamock_version");
	const char *v = version();

	assert_non_null(v);
	assert_int_equal(strncmp(v, "rdmamock ", 9), 0);
	assert_true(v[9] >= '0' && v[9] <= '9');
	assert_non_null(strchr(v + 9, '.'));
}

/* A device added with no address is listed and opens; the same name again
 * is -EEXIST, a personality that is none -EINVAL; a capability that is
 * none is -EINVAL, an unknown device -ENODEV. */
void rdmamock_device_add__refusals(void **state)
{
	int (*device_add)(const char *, int) = (int (*)(const char *, int))fx_topology_call("rdmamock_device_add");
	int (*set_cap)(const char *, int, int) =
		(int (*)(const char *, int, int))fx_topology_call("rdmamock_device_set_cap");
	int (*load)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_topology_load");
	struct ibv_device **list;
	bool found = false;
	int n;

	fx_require_backend();
	assert_int_equal(device_add("mlx5_7", 1), 0);
	assert_int_equal(device_add("mlx5_7", 1), -EEXIST);
	assert_int_equal(device_add("mlx5_8", 7), -EINVAL);
	assert_int_equal(set_cap("mlx5_7", 99, 1), -EINVAL);
	assert_int_equal(set_cap("mlx5_7", 1, 0), 0);
	assert_int_equal(set_cap("nodev", 1, 1), -ENODEV);
	assert_int_equal(load(NULL), -EINVAL);
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "mlx5_7")) {
			struct ibv_context *ctx = ibv_open_device(list[i]);

			assert_non_null(ctx);
			FX_VERBS_OK(ibv_close_device(ctx));
			found = true;
		}
	ibv_free_device_list(list);
	assert_true(found);
}

/* rdmamock_topology_load refuses each malformed spec with -EINVAL (a
 * device with a 17th address -ENOSPC) and leaves the topology as it was;
 * white space means nothing, and rdmamock_topology_format writes back what
 * loaded, each address with its prefix and a capability only where it
 * differs from the personality's default. While a CM id exists, bound to a
 * device or not, the load is -EBUSY. */
void rdmamock_topology_load__malformed_and_busy(void **state)
{
	int (*load)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_topology_load");
	int (*format)(char *, size_t) = (int (*)(char *, size_t))fx_mock_call("rdmamock_topology_format");
	static const char *const malformed[] = {
		"n0",                                  /* no '=' */
		"=mlx5:10.0.0.1",                      /* no name */
		"a/b=mlx5:10.0.0.1",                   /* a name of letters, digits and _.- only */
		"n0=mlx4:10.0.0.1",                    /* no such kind */
		"n0=mlx5+rdma:10.0.0.1",               /* no such capability */
		"n0=generic+ib:10.0.0.1",              /* rxe runs over Ethernet only */
		"n0=mlx5:10.0.0.1;n0=generic:10.0.0.2", /* a name twice */
		"n0=mlx5:10.0.0.1;n1=generic:10.0.0.1", /* an address twice */
		"n0=mlx5:10.0.0.300",                  /* not an address */
		"n0=mlx5:10.0.0.1,,10.0.0.2",          /* an empty one */
		"n0=mlx5:0.0.0.0",                     /* the wildcard */
		"n0=mlx5:::",
		"n0=mlx5:10.0.0.1/33",                 /* prefixes */
		"n0=mlx5:10.0.0.1/",
		"n0=mlx5:10.0.0.1/8x",
		"n0=mlx5:fd00::1/129",
		"n0=mlx5:10.0.0.1;n1=mlx5:10.0.0.2;n1=generic", /* a later device's error */
	};
	const char *loaded = "n0=mlx5-udp_sport:10.0.0.1/24,10.0.0.2/32,fd00::1/64;"
			     "n1=generic+udp_sport:10.0.1.1/32";
	char name[80], spec[512], before[512], after[512];
	struct rdma_event_channel *ch;
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;
	int n;

	n = format(before, sizeof before);
	assert_true(n > 0 && (size_t)n < sizeof before);
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
		if (load(malformed[i]) != -EINVAL)
			fail_msg("rdmamock_topology_load(\"%s\") is not -EINVAL", malformed[i]);
	}
	/* A name as long as a device's may be (IBV_SYSFS_NAME_MAX 64, with
	 * its terminating byte) is too long. */
	memset(name, 'n', 64);
	name[64] = '\0';
	snprintf(spec, sizeof spec, "%s=mlx5:10.0.0.1", name);
	assert_int_equal(load(spec), -EINVAL);
	n = snprintf(spec, sizeof spec, "n0=mlx5:10.0.0.1");
	for (int i = 2; i <= 17; i++)
		n += snprintf(spec + n, sizeof spec - (size_t)n, ",10.0.0.%d", i);
	assert_int_equal(load(spec), -ENOSPC);
	assert_int_equal(format(after, sizeof after), (int)strlen(before));
	assert_string_equal(after, before);

	assert_int_equal(load(" n0 = mlx5-udp_sport : 10.0.0.1/24 , 10.0.0.2, fd00::1/64 ;\n"
			      "n1=generic+udp_sport:10.0.1.1 ;"), 0);
	assert_int_equal(format(NULL, 0), (int)strlen(loaded));
	assert_int_equal(format(after, sizeof after), (int)strlen(loaded));
	assert_string_equal(after, loaded);

	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	assert_int_equal(load(before), -EBUSY);
	fx_sockaddr(AF_INET, "10.0.0.1", 0, &addr);
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&addr));
	assert_int_equal(load(before), -EBUSY);
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
	format(after, sizeof after);
	assert_string_equal(after, loaded);
	assert_int_equal(load(before), 0);
}

/* rdmamock_port_set: -ENODEV for a device that is none; a port set to the
 * state it is in is 0 and no event, as `ip link set up` of a link that is
 * up changes nothing. */
void rdmamock_port_set__unknown_or_unchanged(void **state)
{
	int (*port_set)(const char *, int) = (int (*)(const char *, int))fx_topology_call("rdmamock_port_set");
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	const char *name;

	ctx = fx_open_device(FX_DEV_UNDER_TEST);
	name = ibv_get_device_name(ctx->device);
	assert_int_equal(port_set("nodev", 0), -ENODEV);
	assert_int_equal(port_set(NULL, 1), -ENODEV);
	assert_int_equal(port_set(name, 1), 0);
	assert_true(fx_async_quiet(ctx, 200));
	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(port_set(name, 0), 0);
	fx_async_expect(ctx, IBV_EVENT_GID_CHANGE, 1000, &ev);
	ibv_ack_async_event(&ev);
	fx_async_expect(ctx, IBV_EVENT_PORT_ERR, 1000, &ev);
	ibv_ack_async_event(&ev);
	assert_int_equal(port_set(name, 0), 0);
	assert_true(fx_async_quiet(ctx, 200));
	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	assert_int_equal(pa.state, IBV_PORT_DOWN);
	assert_int_equal(port_set(name, 1), 0);
	fx_async_expect(ctx, IBV_EVENT_PORT_ACTIVE, 1000, &ev);
	ibv_ack_async_event(&ev);
	FX_VERBS_OK(ibv_close_device(ctx));
}

/* rdmamock_listening: 0 before rdma_listen, 1 while the id listens, 0 once
 * it is destroyed; -EINVAL for a port space that is none. */
void rdmamock_listening__follows_the_listener(void **state)
{
	int (*listening)(int, uint16_t) = (int (*)(int, uint16_t))fx_mock_call("rdmamock_listening");
	struct rdma_event_channel *ch;
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;

	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&addr));
	assert_int_equal(listening(RDMA_PS_TCP, fx_port()), 0);
	FX_OK(rdma_listen(id, 1));
	assert_int_equal(listening(RDMA_PS_TCP, fx_port()), 1);
	assert_int_equal(listening(RDMA_PS_UDP, fx_port()), 0);
	assert_int_equal(listening(RDMA_PS_IB, fx_port()), 0);
	assert_int_equal(listening(0x55, fx_port()), -EINVAL);
	FX_OK(rdma_destroy_id(id));
	assert_int_equal(listening(RDMA_PS_TCP, fx_port()), 0);
	rdma_destroy_event_channel(ch);
}

/* rdmamock_addr_change on a device an id is bound to: that id reads
 * ADDR_CHANGE, status 0; an unknown device is -ENODEV. */
void rdmamock_addr_change__bound_id_hears(void **state)
{
	int (*addr_change)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_addr_change");
	struct rdma_event_channel *ch;
	struct sockaddr_storage addr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &addr);
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&addr));
	assert_non_null(id->verbs);
	assert_int_equal(addr_change("nodev"), -ENODEV);
	assert_true(fx_quiet(ch, 0));
	assert_int_equal(addr_change(ibv_get_device_name(id->verbs->device)), 0);
	ev = fx_expect(ch, RDMA_CM_EVENT_ADDR_CHANGE, 1000);
	assert_ptr_equal(ev->id, id);
	assert_int_equal(ev->status, 0);
	FX_OK(rdma_ack_cm_event(ev));
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* rdmamock_poll is poll(2): fds NULL with nfds above 0 is EFAULT; no fds is
 * a sleep on the fabric's clock. */
void rdmamock_poll__null_fds(void **state)
{
	int (*mpoll)(struct pollfd *, nfds_t, int) =
		(int (*)(struct pollfd *, nfds_t, int))fx_mock_call("rdmamock_poll");

	errno = 0;
	assert_int_equal(mpoll(NULL, 1, 0), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(mpoll(NULL, 0, 1), 0);
}

/* ---------------------------------------------------------------- the clock */

/* RDMAMOCK_CLOCK is read by the process that makes the fabric: this test's
 * child makes its private fabric at its first call into the mock, so the
 * mode set here, before any, is the fabric's. */
static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct clock_api {
	uint64_t (*now)(void);
	int (*poll)(struct pollfd *, nfds_t, int);
};

static void clock_api_find(void *arg)
{
	struct clock_api *c = arg;
	const char *(*fabric)(void) = (const char *(*)(void))fx_mock_call("rdmamock_fabric");

	c->now = (uint64_t (*)(void))fx_mock_call("rdmamock_clock_ns");
	c->poll = (int (*)(struct pollfd *, nfds_t, int))fx_mock_call("rdmamock_poll");
	fabric(); /* the first call: it makes the fabric, and reads the mode */
}

/* The clock in `mode`, the mock's lines on stderr while the fabric is made
 * into *said. */
static struct clock_api clock_in_mode(const char *mode, char *said, size_t size)
{
	const char *fabric = getenv("RDMAMOCK_FABRIC");
	struct clock_api c;

	rc_require_mock("the mock's clock");
	if (fabric && strcmp(fabric, "private"))
		RC_SKIP("shared fabric %s: its clock runs in the mode of the process that made it", fabric);
	setenv("RDMAMOCK_CLOCK", mode, 1);
	fx_stderr_of(clock_api_find, &c, said, size);
	return c;
}

/* RDMAMOCK_CLOCK=real: the fabric's clock is CLOCK_MONOTONIC, and a sleep
 * on it (rdmamock_poll with no fds) takes as long as it says, although
 * nothing else runs on the fabric. */
void rdmamock_clock_ns__real_mode(void **state)
{
	char said[256];
	struct clock_api c = clock_in_mode("real", said, sizeof said);
	uint64_t t0, f, t1;

	assert_string_equal(said, "");
	t0 = monotonic_ns();
	f = c.now();
	t1 = monotonic_ns();
	assert_true(f >= t0 && f <= t1);
	assert_int_equal(c.poll(NULL, 0, 300), 0);
	t1 = monotonic_ns();
	assert_true(t1 - t0 >= 300000000u);
	f = c.now();
	assert_true(f >= t1 && f <= monotonic_ns());
}

/* RDMAMOCK_CLOCK=auto, and a value that is neither mode (one line saying
 * so, then auto): a 20 s sleep on the fabric's clock, with nothing else on
 * the fabric, ends in well under that much real time, the fabric's clock
 * 20 s further. */
static void clock_jumps(const char *mode, const char *want_said)
{
	char said[256];
	struct clock_api c = clock_in_mode(mode, said, sizeof said);
	uint64_t t0, f0;

	if (want_said) {
		if (!strstr(said, want_said))
			fail_msg("the mock did not say \"%s\": \"%s\"", want_said, said);
	} else {
		assert_string_equal(said, "");
	}
	t0 = monotonic_ns();
	f0 = c.now();
	assert_int_equal(c.poll(NULL, 0, 20000), 0);
	assert_true(c.now() - f0 >= 20000000000u);
	assert_true(monotonic_ns() - t0 < 10000000000u);
}

void rdmamock_clock_ns__auto_mode(void **state)
{
	clock_jumps("auto", NULL);
}

void rdmamock_clock_ns__unknown_mode(void **state)
{
	clock_jumps("sideways", "RDMAMOCK_CLOCK=sideways: not auto or real");
}

/* rdmamock_qp_udp_sport refuses a NULL QP or a NULL result (-EINVAL). */
void rdmamock_qp_udp_sport__null(void **state)
{
	int (*sport)(const struct ibv_qp *, uint16_t *) =
		(int (*)(const struct ibv_qp *, uint16_t *))fx_mock_call("rdmamock_qp_udp_sport");
	uint16_t port;
	struct fx_qp q;

	assert_int_equal(sport(NULL, &port), -EINVAL);
	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	assert_int_equal(sport(q.qp, NULL), -EINVAL);
	assert_int_equal(sport(q.qp, &port), 0);
	fx_qp_release(&q);
}

/* rdmamock_port_set to the state the port is in already is 0 and says
 * nothing, as `ip link set up` on a link that is up changes nothing; an
 * unknown device is -ENODEV. */
void rdmamock_port_set__already_so_and_unknown(void **state)
{
	int (*port_set)(const char *, int) = (int (*)(const char *, int))fx_topology_call("rdmamock_port_set");
	struct ibv_context *ctx = fx_open_device(FX_DEV_UNDER_TEST);
	struct ibv_port_attr pa;

	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(port_set(ibv_get_device_name(ctx->device), 1), 0);
	assert_true(fx_async_quiet(ctx, 300));
	FX_VERBS_OK(ibv_query_port(ctx, 1, &pa));
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(port_set("nodev", 0), -ENODEV);
	assert_int_equal(port_set("nodev", 1), -ENODEV);
	ibv_close_device(ctx);
}

/* rdmamock_device_fatal of a device whose fatal error came already, kept
 * by the CM id still on it (it goes with the last of them): 0 again; once
 * it is gone, and for a name no device has, -ENODEV. */
void rdmamock_device_fatal__again_and_unknown(void **state)
{
	int (*fatal)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_device_fatal");
	struct rdma_event_channel *ch;
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;
	char name[64];

	assert_int_equal(fatal("nodev"), -ENODEV);
	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &addr);
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&addr));
	assert_non_null(id->verbs);
	snprintf(name, sizeof name, "%s", ibv_get_device_name(id->verbs->device));
	assert_int_equal(fatal(name), 0);
	assert_int_equal(fatal(name), 0);
	FX_OK(rdma_destroy_id(id));
	assert_int_equal(fatal(name), -ENODEV);
	rdma_destroy_event_channel(ch);
}
