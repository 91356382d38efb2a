/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the mock's ledger of live objects (RDMAMOCK_LEDGER,
 * RDMAMOCK_STRICT): a destroyed object used or destroyed again, an event
 * acked twice, objects the mock never made (on the stack, from calloc), a
 * channel destroyed under its ids, rdma_destroy_id waiting
 * on unacked events, an MR deregistered under posted work, and leaks at
 * exit. Mock-only: upstream has no such checks (most of these are
 * undefined behaviour there). Each misuse runs in a forked child, which
 * builds what it needs with plain calls (no assertions in the child: a
 * step that fails ends it with exit code 99 and says which). */
#include <fiu-control.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"
#include "qp.h"

static void must(bool ok, const char *step)
{
	if (!ok) {
		fprintf(stderr, "child: %s failed\n", step);
		_exit(99);
	}
}

/* How the child ended must be SIGABRT (or exit code `code` when code >= 0),
 * with every needle in its stderr. Its first line is shown with -v. */
static void expect_end(void (*fn)(void *), void *arg, int code, const char *const *needles)
{
	struct rc_crash end;

	rc_require_mock("the ledger is the mock's");
	fx_require_backend();
	rc_run_child(fn, arg, &end);
	print_message("child's stderr: %s", end.stderr_text);
	if (code < 0 && end.signal != SIGABRT)
		fail_msg("the child ended with signal %d, exit code %d, not SIGABRT; stderr: %s",
			 end.signal, end.exit_code, end.stderr_text);
	if (code >= 0 && (end.signal || end.exit_code != code))
		fail_msg("the child ended with signal %d, exit code %d, not exit code %d; stderr: %s",
			 end.signal, end.exit_code, code, end.stderr_text);
	for (; *needles; needles++)
		if (!strstr(end.stderr_text, *needles))
			fail_msg("stderr lacks \"%s\": %s", *needles, end.stderr_text);
}

#define EXPECT_ABORT(fn, ...) expect_end((fn), NULL, -1, (const char *const[]){ __VA_ARGS__, NULL })
#define EXPECT_EXIT(fn, code, ...) expect_end((fn), NULL, (code), (const char *const[]){ __VA_ARGS__, NULL })

/* ---------------------------------------------------------------- CM objects */

static void destroy_id_twice(void *unused)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;

	must(ch && !rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), "rdma_create_id");
	must(!rdma_destroy_id(id), "the first rdma_destroy_id");
	rdma_destroy_id(id);
}

void rdma_destroy_id__twice(void **state)
{
	EXPECT_ABORT(destroy_id_twice, "rdmamock: rdma_destroy_id: id 0x",
		     "is not a live id (destroyed by rdma_destroy_id)");
}

/* Objects the mock never made: the ledger knows its own, so it says so
 * before reading what it was given. */
static void destroy_stack_id(void *unused)
{
	struct rdma_cm_id fake;

	memset(&fake, 0, sizeof fake);
	rdma_destroy_id(&fake);
}

void rdma_destroy_id__stack_object(void **state)
{
	EXPECT_ABORT(destroy_stack_id, "rdmamock: rdma_destroy_id: id 0x",
		     "is not a live id (never created by the mock");
}

static void ack_stack_event(void *unused)
{
	struct rdma_cm_event fake;

	memset(&fake, 0, sizeof fake);
	rdma_ack_cm_event(&fake);
}

void rdma_ack_cm_event__stack_event(void **state)
{
	EXPECT_ABORT(ack_stack_event, "rdmamock: rdma_ack_cm_event: event 0x",
		     "is not a live event (never created by the mock");
}

static void destroy_channel_twice(void *unused)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	must(ch, "rdma_create_event_channel");
	rdma_destroy_event_channel(ch);
	rdma_destroy_event_channel(ch);
}

void rdma_destroy_event_channel__twice(void **state)
{
	EXPECT_ABORT(destroy_channel_twice, "rdmamock: rdma_destroy_event_channel: event channel 0x",
		     "is not a live event channel (destroyed by rdma_destroy_event_channel)");
}

static void destroy_channel_under_id(void *unused)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;

	must(ch && !rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), "rdma_create_id");
	rdma_destroy_event_channel(ch);
}

/* Strict (as the suite runs): the report aborts. */
void rdma_destroy_event_channel__ids_on_it(void **state)
{
	EXPECT_ABORT(destroy_channel_under_id, "rdmamock: rdma_destroy_event_channel: channel 0x",
		     "still has 1 id(s) on it; upstream closes it anyway",
		     "(RDMAMOCK_STRICT)");
}

static void use_id_after_channel(void *unused)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_storage addr;
	struct rdma_cm_id *id = NULL;

	unsetenv("RDMAMOCK_STRICT"); /* the channel's report only says so */
	must(ch && !rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), "rdma_create_id");
	rdma_destroy_event_channel(ch);
	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &addr);
	rdma_bind_addr(id, (struct sockaddr *)&addr);
}

/* Not strict: the channel goes, said once; the id's next call aborts. */
void rdma_bind_addr__after_its_channel_destroyed(void **state)
{
	EXPECT_ABORT(use_id_after_channel, "still has 1 id(s) on it",
		     "rdmamock: rdma_bind_addr: id 0x",
		     "which was destroyed before the id (upstream reads the freed channel)");
}

/* An id with ADDR_RESOLVED read and not acked. */
static struct rdma_cm_event *addr_resolved(struct rdma_event_channel **ch, struct rdma_cm_id **id)
{
	struct sockaddr_storage dst;
	struct rdma_cm_event *ev;

	*ch = rdma_create_event_channel();
	must(*ch && !rdma_create_id(*ch, id, NULL, RDMA_PS_TCP), "rdma_create_id");
	fx_sockaddr(AF_INET, fx_addr(AF_INET), fx_port(), &dst);
	must(!rdma_resolve_addr(*id, NULL, (struct sockaddr *)&dst, 2000), "rdma_resolve_addr");
	must(!rdma_get_cm_event(*ch, &ev) && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED,
	     "ADDR_RESOLVED");
	return ev;
}

static void ack_twice(void *unused)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev = addr_resolved(&ch, &id);

	must(!rdma_ack_cm_event(ev), "the first rdma_ack_cm_event");
	rdma_ack_cm_event(ev);
}

void rdma_ack_cm_event__twice(void **state)
{
	EXPECT_ABORT(ack_twice, "rdmamock: rdma_ack_cm_event: event 0x",
		     "is not a live event (destroyed by rdma_ack_cm_event)");
}

static void destroy_with_unacked(void *unused)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id = NULL;

	addr_resolved(&ch, &id);
	rdma_destroy_id(id);
}

/* Strict: after 2 s the wait is reported, and the report aborts. */
void rdma_destroy_id__unacked_event(void **state)
{
	EXPECT_ABORT(destroy_with_unacked, "rdmamock: rdma_destroy_id: id 0x",
		     "has 1 unacked event(s) (RDMA_CM_EVENT_ADDR_RESOLVED); upstream blocks here forever");
}

static void *ack_later(void *ev)
{
	rc_sleep_ms(3000); /* on the mock's clock: after the 2 s report */
	rdma_ack_cm_event(ev);
	return NULL;
}

static void destroy_waits_for_ack(void *unused)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev;
	pthread_t t;

	unsetenv("RDMAMOCK_STRICT");
	ev = addr_resolved(&ch, &id);
	must(!pthread_create(&t, NULL, ack_later, ev), "pthread_create");
	must(!rdma_destroy_id(id), "rdma_destroy_id");
	pthread_join(t, NULL);
	rdma_destroy_event_channel(ch);
}

/* Not strict: reported after 2 s, and it waits on, as upstream, until the
 * ack comes (here from another thread, after 3 s). */
void rdma_destroy_id__unacked_event_waits(void **state)
{
	EXPECT_EXIT(destroy_waits_for_ack, 0, "rdmamock: rdma_destroy_id: id 0x",
		    "upstream blocks here forever");
}

static void freeaddrinfo_twice(void *unused)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;

	must(!rdma_getaddrinfo(fx_addr(AF_INET), "7471", &hints, &res), "rdma_getaddrinfo");
	rdma_freeaddrinfo(res);
	rdma_freeaddrinfo(res);
}

void rdma_freeaddrinfo__twice(void **state)
{
	EXPECT_ABORT(freeaddrinfo_twice, "rdmamock: rdma_freeaddrinfo: rdma_addrinfo 0x",
		     "is not a live rdma_addrinfo (destroyed by rdma_freeaddrinfo)");
}

/* ---------------------------------------------------------------- verbs objects */

struct verbs_kit {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char buf[64];
};

/* A PD, a CQ, an RC QP in INIT and an MR, with plain calls. */
static void verbs_kit(struct verbs_kit *k)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };

	must(list && list[0], "ibv_get_device_list");
	k->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	must(k->ctx && (k->pd = ibv_alloc_pd(k->ctx)), "ibv_alloc_pd");
	must((k->cq = ibv_create_cq(k->ctx, 4, NULL, NULL, 0)), "ibv_create_cq");
	init.send_cq = init.recv_cq = k->cq;
	must((k->qp = ibv_create_qp(k->pd, &init)), "ibv_create_qp");
	must(!ibv_modify_qp(k->qp, &attr,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
	     "ibv_modify_qp to INIT");
	must((k->mr = ibv_reg_mr(k->pd, k->buf, sizeof k->buf, IBV_ACCESS_LOCAL_WRITE)), "ibv_reg_mr");
}

static void destroy_qp_twice(void *unused)
{
	struct verbs_kit k;

	verbs_kit(&k);
	must(!ibv_destroy_qp(k.qp), "the first ibv_destroy_qp");
	ibv_destroy_qp(k.qp);
}

void ibv_destroy_qp__twice(void **state)
{
	EXPECT_ABORT(destroy_qp_twice, "rdmamock: ibv_destroy_qp: QP 0x",
		     "is not a live QP (destroyed by ibv_destroy_qp)");
}

static void destroy_cq_twice(void *unused)
{
	struct verbs_kit k;

	verbs_kit(&k);
	must(!ibv_destroy_qp(k.qp) && !ibv_destroy_cq(k.cq), "the first ibv_destroy_cq");
	ibv_destroy_cq(k.cq);
}

static void destroy_foreign_qp(void *unused)
{
	struct ibv_qp *fake = calloc(1, sizeof *fake);

	must(fake, "calloc");
	ibv_destroy_qp(fake);
}

void ibv_destroy_qp__foreign_object(void **state)
{
	EXPECT_ABORT(destroy_foreign_qp, "rdmamock: ibv_destroy_qp: QP 0x",
		     "is not a live QP (never created by the mock");
}

void ibv_destroy_cq__twice(void **state)
{
	EXPECT_ABORT(destroy_cq_twice, "rdmamock: ibv_destroy_cq: CQ 0x",
		     "is not a live CQ (destroyed by ibv_destroy_cq)");
}

static void dereg_mr_twice(void *unused)
{
	struct verbs_kit k;

	verbs_kit(&k);
	must(!ibv_dereg_mr(k.mr), "the first ibv_dereg_mr");
	ibv_dereg_mr(k.mr);
}

void ibv_dereg_mr__twice(void **state)
{
	EXPECT_ABORT(dereg_mr_twice, "rdmamock: ibv_dereg_mr: MR 0x",
		     "is not a live MR (destroyed by ibv_dereg_mr)");
}

static void dealloc_pd_twice(void *unused)
{
	struct verbs_kit k;

	verbs_kit(&k);
	must(!ibv_dereg_mr(k.mr) && !ibv_destroy_qp(k.qp) && !ibv_dealloc_pd(k.pd),
	     "the first ibv_dealloc_pd");
	ibv_dealloc_pd(k.pd);
}

void ibv_dealloc_pd__twice(void **state)
{
	EXPECT_ABORT(dealloc_pd_twice, "rdmamock: ibv_dealloc_pd: PD 0x",
		     "is not a live PD (destroyed by ibv_dealloc_pd)");
}

static void dereg_under_receive(void *unused)
{
	struct verbs_kit k;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	verbs_kit(&k);
	sge = (struct ibv_sge){ (uintptr_t)k.buf, sizeof k.buf, k.mr->lkey };
	must(!ibv_post_recv(k.qp, &wr, &bad), "ibv_post_recv");
	ibv_dereg_mr(k.mr);
}

/* The kernel deregisters it all the same; the ledger reports it. */
void ibv_dereg_mr__posted_receive(void **state)
{
	EXPECT_ABORT(dereg_under_receive, "rdmamock: ibv_dereg_mr: MR 0x",
		     "is still used by a receive posted on QP 0x",
		     "posted and not completed; upstream deregisters it anyway");
}

/* ---------------------------------------------------------------- leaks at exit */

/* An RC QP from rdma_create_qp on a bound id, and nothing released. */
static void leak_a_qp(void *unused)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct sockaddr_storage addr;
	struct rdma_cm_id *id = NULL;

	must(ch && !rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), "rdma_create_id");
	fx_sockaddr(AF_INET, fx_addr(AF_INET), 0, &addr);
	must(!rdma_bind_addr(id, (struct sockaddr *)&addr), "rdma_bind_addr");
	must(!rdma_create_qp(id, NULL, &init), "rdma_create_qp");
	exit(0); /* not _exit: the ledger reports at exit */
}

/* Strict: every leak listed, then the summary, and an abort. */
void rdmamock_ledger__leak_at_exit_strict(void **state)
{
	EXPECT_ABORT(leak_a_qp, "rdmamock: leak: QP 0x", "(qp_num 0x",
		     ") created by rdma_create_qp, never destroyed",
		     "rdmamock: leak: CQ 0x", "rdmamock: leak: id 0x",
		     "created by rdma_create_id, never destroyed",
		     "rdmamock: leak: event channel 0x",
		     "object(s) never destroyed at exit(0) (", "QP: 1); RDMAMOCK_STRICT aborts");
}

static void leak_a_qp_not_strict(void *unused)
{
	unsetenv("RDMAMOCK_STRICT");
	setenv("RDMAMOCK_LEDGER", "1", 1);
	leak_a_qp(NULL);
}

/* RDMAMOCK_LEDGER=1 alone: the same report, and the exit status stays. */
void rdmamock_ledger__leak_at_exit(void **state)
{
	EXPECT_EXIT(leak_a_qp_not_strict, 0, ") created by rdma_create_qp, never destroyed",
		    "rdmamock: leak: 7 object(s) never destroyed at exit(0) (event channel: 1, id: 1, completion channel: 2, CQ: 2, QP: 1)");
}

static void no_leak_no_ledger(void *unused)
{
	unsetenv("RDMAMOCK_STRICT");
	unsetenv("RDMAMOCK_LEDGER");
	leak_a_qp(NULL);
}

/* Neither variable: nothing said. */
void rdmamock_ledger__off_by_default(void **state)
{
	struct rc_crash end;

	rc_require_mock("the ledger is the mock's");
	fx_require_backend();
	rc_run_child(no_leak_no_ledger, NULL, &end);
	assert_int_equal(end.signal, 0);
	assert_int_equal(end.exit_code, 0);
	/* Nothing from the mock (a sanitizer's runtime may have its say:
	 * LSan on a shared fabric's watcher thread). */
	if (strstr(end.stderr_text, "rdmamock:"))
		fail_msg("the mock spoke with its ledger off: %s", end.stderr_text);
}

/* A device's fatal error, then every destroy asked for and refused (EIO
 * without RDMAV_ALLOW_DISASSOC_DESTROY, EBUSY for the completion channel
 * its kept CQ holds): what the library keeps is not the program's leak. */
static void destroys_refused_by_a_dead_device(void *unused)
{
	int (*fatal)(const char *) = (int (*)(const char *))fx_topology_call("rdmamock_device_fatal");
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq2;
	struct verbs_kit k;

	unsetenv("RDMAV_ALLOW_DISASSOC_DESTROY");
	verbs_kit(&k);
	must((ch = ibv_create_comp_channel(k.ctx)) && (cq2 = ibv_create_cq(k.ctx, 4, NULL, ch, 0)),
	     "ibv_create_cq on a completion channel");
	must(!fatal(ibv_get_device_name(k.ctx->device)), "rdmamock_device_fatal");
	must(ibv_dereg_mr(k.mr) == EIO && ibv_destroy_qp(k.qp) == EIO && ibv_destroy_cq(k.cq) == EIO &&
	     ibv_destroy_cq(cq2) == EIO && ibv_dealloc_pd(k.pd) == EIO, "the destroys' EIO");
	must(ibv_destroy_comp_channel(ch) == EBUSY, "ibv_destroy_comp_channel's EBUSY");
	exit(0);
}

void rdmamock_ledger__kept_by_dead_device(void **state)
{
	struct rc_crash end;

	rc_require_mock("the ledger is the mock's");
	fx_require_backend();
	fx_topology_call("rdmamock_device_fatal"); /* skips on a shared fabric, in this process */
	rc_run_child(destroys_refused_by_a_dead_device, NULL, &end);
	print_message("child's stderr: %s", end.stderr_text);
	if (end.signal || end.exit_code)
		fail_msg("the child ended with signal %d, exit code %d; stderr: %s", end.signal,
			 end.exit_code, end.stderr_text);
	if (strstr(end.stderr_text, "never destroyed"))
		fail_msg("the ledger counted the kept objects as leaks: %s", end.stderr_text);
}

/* A CQ whose ibv_destroy_cq an injected fault failed, and a PD never
 * destroyed: the program asked for the CQ to go, so only the PD is its
 * leak. */
static void destroy_refused_by_a_fault(void *unused)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_cq *cq = NULL;

	unsetenv("RDMAMOCK_STRICT");
	setenv("RDMAMOCK_LEDGER", "1", 1);
	must(list && list[0] && (ctx = ibv_open_device(list[0])), "ibv_open_device");
	ibv_free_device_list(list);
	must(ibv_alloc_pd(ctx) && (cq = ibv_create_cq(ctx, 4, NULL, NULL, 0)), "ibv_create_cq");
	must(!fiu_enable("rdmamock/ibverbs/ibv_destroy_cq", 1, (void *)(intptr_t)EBUSY, FIU_ONETIME),
	     "fiu_enable");
	must(ibv_destroy_cq(cq) == EBUSY, "the injected EBUSY of ibv_destroy_cq");
	exit(0);
}

void rdmamock_ledger__kept_by_injected_fault(void **state)
{
	EXPECT_EXIT(destroy_refused_by_a_fault, 0, "rdmamock: leak: PD 0x",
		    "created by ibv_alloc_pd, never destroyed",
		    "rdmamock: leak: 1 object(s) never destroyed at exit(0) (PD: 1)");
}

/* ---------------------------------------------------------------- not strict, in the test's process */

struct dereg_under_receive_ctx {
	struct ibv_mr *mr;
	int ret;
};

static void dereg_only(void *arg)
{
	struct dereg_under_receive_ctx *c = arg;

	c->ret = ibv_dereg_mr(c->mr);
}

/* RDMAMOCK_STRICT=0: ibv_dereg_mr under a posted receive is said once and
 * goes on as the kernel's does (0); the receive then fails when a SEND
 * reaches it, its MR gone, and the QP goes on to be destroyed. */
void ibv_dereg_mr__posted_receive_not_strict(void **state)
{
	struct dereg_under_receive_ctx c;
	char other[64], text[1024];
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rsge, .num_sge = 1 }, *bad_rwr;
	struct ibv_send_wr swr = { .wr_id = 8, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bad;
	bool recv_seen = false;
	struct fx_qp q;
	int lines;

	rc_require_mock("the ledger is the mock's");
	setenv("RDMAMOCK_STRICT", "0", 1);
	fx_qp_create(&q, FX_DEV_UNDER_TEST, IBV_QPT_RC);
	fx_qp_to(&q, IBV_QPS_RTS);
	c.mr = ibv_reg_mr(q.pd, other, sizeof other, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(c.mr);
	rsge = (struct ibv_sge){ (uintptr_t)other, sizeof other, c.mr->lkey };
	FX_VERBS_OK(ibv_post_recv(q.qp, &rwr, &bad_rwr));
	lines = fx_stderr_of(dereg_only, &c, text, sizeof text);
	assert_int_equal(c.ret, 0);
	assert_int_equal(lines, 1);
	if (!strstr(text, "rdmamock: ibv_dereg_mr: MR 0x") ||
	    !strstr(text, "is still used by a receive posted on QP 0x") ||
	    strstr(text, "RDMAMOCK_STRICT"))
		fail_msg("ibv_dereg_mr said: %s", text);
	ssge = (struct ibv_sge){ (uintptr_t)q.buf, 8, q.mr->lkey };
	FX_VERBS_OK(ibv_post_send(q.qp, &swr, &bad));
	for (int n = 0; n < 2; n++) {
		struct ibv_wc wc;

		fx_poll_one(q.cq, &wc);
		if (wc.wr_id == 7) {
			recv_seen = true;
			if (wc.status == IBV_WC_SUCCESS)
				fail_msg("the receive into a deregistered MR succeeded");
		}
	}
	assert_true(recv_seen);
	fx_qp_release(&q);
}
