/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libibverbs: asynchronous events. Each context has a queue of events not
 * read yet; its async_fd is the queue's doorbell (fabric.h), readable while
 * events wait, from whichever process raised them, as the kernel's async
 * event file is; O_NONBLOCK makes ibv_get_async_event fail with EAGAIN.
 *
 * Reading an event counts it against its object; acking it counts it done,
 * under the object's own mutex, as libibverbs does; destroying the object
 * waits until every event read for it was acked. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs.h"

#define LIB "ibverbs"

struct async_event {
	struct async_event *next;
	struct ibv_async_event ev;
	const void *obj; /* the QP, CQ or SRQ; NULL for port and device events */
};

/* The event belongs to the context's process, whichever raised it. */
static void queue(struct ibv_context *ctx, const struct ibv_async_event *ev, const void *obj)
{
	struct mock_context *mc = verbs_context_of(ctx, "async event");
	struct async_event *a = fab_alloc_owned(fab_owner_of(mc), sizeof *a);

	if (!a) {
		mock_log("out of memory: asynchronous event %s lost", ibv_event_type_str(ev->event_type));
		return;
	}
	a->ev = *ev;
	a->obj = obj;
	if (mc->async_tail)
		mc->async_tail->next = a;
	else
		mc->async_head = a;
	mc->async_tail = a;
	fab_bell_ring(&mc->async_bell);
}

void verbs_async_qp(struct mock_qp *mqp, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .element.qp = &mqp->qp, .event_type = type };

	queue(mqp->qp.context, &ev, &mqp->qp);
}

void verbs_async_srq(struct mock_srq *msrq, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .element.srq = &msrq->srq, .event_type = type };

	queue(msrq->srq.context, &ev, &msrq->srq);
}

void verbs_async_cq(struct mock_cq *mcq, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .element.cq = &mcq->cq, .event_type = type };

	queue(mcq->cq.context, &ev, &mcq->cq);
}



void verbs_async_forget(struct ibv_context *ctx, const void *obj)
{
	struct mock_context *mc = verbs_context_of(ctx, "async event");
	struct async_event **pos = &mc->async_head, *a;

	mc->async_tail = NULL;
	while ((a = *pos)) {
		if (!obj || a->obj == obj) {
			*pos = a->next;
			fab_free(a);
		} else {
			mc->async_tail = a;
			pos = &a->next;
		}
	}
	if (!mc->async_head)
		fab_bell_clear(&mc->async_bell);
}

/* What an event is about: a QP, a CQ, an SRQ, or the port or device. */
enum element { ON_PORT_OR_DEVICE, ON_QP, ON_CQ, ON_SRQ };

static enum element element_of(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		return ON_CQ;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ON_SRQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ON_QP;
	default:
		return ON_PORT_OR_DEVICE;
	}
}

/* Count a read event against its object (under verbs_lock). */
static void reported(const struct ibv_async_event *ev)
{
	switch (element_of(ev->event_type)) {
	case ON_CQ:
		((struct mock_cq *)ev->element.cq)->async_reported++;
		break;
	case ON_SRQ:
		((struct mock_srq *)ev->element.srq)->async_reported++;
		break;
	case ON_QP:
		((struct mock_qp *)ev->element.qp)->async_reported++;
		break;
	default:
		break;
	}
}

MOCK_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct mock_context *mc = verbs_context_of(context, "ibv_get_async_event");
	struct async_event *a;

	FAULT_MINUS1(LIB, "ibv_get_async_event");
	MOCK_REQUIRE(event, "ibv_get_async_event", "event is NULL (upstream writes it)");
	for (;;) {
		verbs_lock_take();
		a = mc->async_head;
		if (a) {
			mc->async_head = a->next;
			if (!mc->async_head) {
				mc->async_tail = NULL;
				fab_bell_clear(&mc->async_bell);
			}
			reported(&a->ev);
			*event = a->ev;
			verbs_lock_give();
			fab_free(a);
			return 0;
		}
		verbs_lock_give();
		if (mock_wait_readable(context->async_fd))
			return -1;
	}
}

static void ack(pthread_mutex_t *mutex, pthread_cond_t *cond, uint32_t *completed)
{
	pthread_mutex_lock(mutex);
	++*completed;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}

/* As upstream: count the ack under the object's own mutex, and wake a
 * destroy that waits for it. Port and device events need no ack. */
MOCK_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	MOCK_REQUIRE(event, "ibv_ack_async_event", "event is NULL (upstream dereferences it)");
	switch (element_of(event->event_type)) {
	case ON_CQ:
		ack(&event->element.cq->mutex, &event->element.cq->cond,
		    &event->element.cq->async_events_completed);
		break;
	case ON_SRQ:
		ack(&event->element.srq->mutex, &event->element.srq->cond,
		    &event->element.srq->events_completed);
		break;
	case ON_QP:
		ack(&event->element.qp->mutex, &event->element.qp->cond,
		    &event->element.qp->events_completed);
		break;
	default:
		break;
	}
}

void verbs_wait_async_acks(pthread_mutex_t *mutex, pthread_cond_t *cond,
			   const uint32_t *completed, uint32_t reported, const char *what,
			   const void *obj)
{
	struct fab_deadline note;
	bool said;

	pthread_mutex_lock(mutex);
	said = *completed == reported;
	pthread_mutex_unlock(mutex);
	if (said)
		return;
	/* 2 s on the fabric's clock, armed before the caller's lock is taken. */
	fab_deadline_arm(&note, 2000000000u);
	pthread_mutex_lock(mutex);
	while (*completed != reported) {
		if (fab_clock_cond_wait(cond, mutex, &note) && !said) {
			mock_log("%s(%p): waiting for %u unacknowledged event(s) of it; upstream blocks here too",
				 what, obj, reported - *completed);
			said = true;
		}
	}
	pthread_mutex_unlock(mutex);
	fab_deadline_disarm(&note);
}

/* A port went down or came up (rdmamock_port_set), told in the process
 * that changed it: as rxe when its netdev goes down, every context of the
 * device, in any process, reads GID_CHANGE then PORT_ERR; coming up,
 * PORT_ACTIVE (measured on kernels 6.1 and 7.2). */
static void port_changed(unsigned serial, bool up)
{
	struct ibv_async_event ev = { .element.port_num = 1 };

	verbs_lock_take();
	for (struct mock_context *mc = verbs_shared()->contexts; mc; mc = mc->next) {
		if (mc->mdev->serial != serial)
			continue;
		if (!up) {
			ev.event_type = IBV_EVENT_GID_CHANGE;
			queue(&mc->vctx.context, &ev, NULL);
		}
		ev.event_type = up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR;
		queue(&mc->vctx.context, &ev, NULL);
	}
	verbs_lock_give();
}

/* A catastrophic error of a device (rdmamock_device_fatal), told in the
 * process that raised it: every context of the device, in any process,
 * reads IBV_EVENT_DEVICE_FATAL and is dead from then on, as uverbs leaves
 * a context it disassociated (verbs_dead). */
static void device_fatal(unsigned serial)
{
	struct ibv_async_event ev = { .event_type = IBV_EVENT_DEVICE_FATAL };

	verbs_lock_take();
	for (struct mock_context *mc = verbs_shared()->contexts; mc; mc = mc->next) {
		if (mc->mdev->serial != serial || mc->dead)
			continue;
		mc->dead = true;
		queue(&mc->vctx.context, &ev, NULL);
	}
	verbs_lock_give();
}

/* After the device's fatal error, a command fails with EIO, as uverbs
 * answers every command on a disassociated file. A destroy too, unless
 * RDMAV_ALLOW_DISASSOC_DESTROY is set: then it succeeds (libibverbs'
 * verbs_is_destroy_err), and the mock frees the object. */
bool verbs_dead(struct ibv_context *ctx)
{
	return ctx && __atomic_load_n(&verbs_context_of(ctx, "verbs")->dead, __ATOMIC_ACQUIRE);
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "0"); /* libibverbs: set, and not "0" */
}

int verbs_dead_destroy(struct ibv_context *ctx)
{
	if (!verbs_dead(ctx) || env_on("RDMAV_ALLOW_DISASSOC_DESTROY") ||
	    env_on("MLX4_DEVICE_FATAL_CLEANUP"))
		return 0;
	return EIO;
}

__attribute__((constructor)) static void register_port_hook(void)
{
	fab_set_port_hook(port_changed);
	fab_set_fatal_hook(device_fatal);
}
