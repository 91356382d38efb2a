/* API covered: the mock's fault points (libfiu), one per entry point that
 * can report an error, named rdmamock/<library>/<function>. Mock-only. */
#include <errno.h>
#include <fiu-control.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fixtures.h"

static void enable(const char *point, int err, unsigned flags)
{
	rc_require_mock("fault points are the mock's");
	if (fiu_enable(point, 1, (void *)(intptr_t)err, flags))
		fail_msg("fiu_enable(%s) failed", point);
}

void rdma_create_event_channel__fault_point(void **state)
{
	enable("rdmamock/rdmacm/rdma_create_event_channel", EMFILE, 0);
	errno = 0;
	assert_null(rdma_create_event_channel());
	assert_int_equal(errno, EMFILE);
}

void rdma_bind_addr__fault_point(void **state)
{
	struct sockaddr_storage addr;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	rc_require_mock("fault points are the mock's");
	ch = fx_channel();
	FX_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &addr);
	enable("rdmamock/rdmacm/rdma_bind_addr", EADDRINUSE, FIU_ONETIME);
	errno = 0;
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&addr), -1);
	assert_int_equal(errno, EADDRINUSE);
	/* FIU_ONETIME: the next call is not failed, and it binds. */
	FX_OK(rdma_bind_addr(id, (struct sockaddr *)&addr));
	assert_int_equal(fx_src_port(id), fx_port());
	FX_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/* Verbs calls return a positive errno and leave errno alone. */
void ibv_query_device__fault_point(void **state)
{
	struct ibv_device_attr attr;
	struct ibv_device **list;
	struct ibv_context *ctx;

	rc_require_mock("fault points are the mock's");
	list = ibv_get_device_list(NULL);
	assert_non_null(list);
	assert_non_null(list[0]);
	ctx = ibv_open_device(list[0]);
	assert_non_null(ctx);
	enable("rdmamock/ibverbs/ibv_query_device", ENOMEM, 0);
	errno = 0;
	assert_int_equal(ibv_query_device(ctx, &attr), ENOMEM);
	assert_int_equal(errno, 0);
	fiu_disable("rdmamock/ibverbs/ibv_query_device");
	assert_int_equal(ibv_query_device(ctx, &attr), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
}

void rdma_create_id__fault_point_without_errno(void **state)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	rc_require_mock("fault points are the mock's");
	ch = fx_channel();
	enable("rdmamock/rdmacm/rdma_create_id", 0, 0);
	errno = 0;
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), -1);
	assert_int_equal(errno, EIO);
	rdma_destroy_event_channel(ch);
}
