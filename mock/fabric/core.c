/* The fabric's machinery: its lock, event channels, event queues and the
 * timer thread that delivers what real networks deliver late (timeouts). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "control/mock.h"

struct fabric fab = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.next_serial = 1,
};

static pthread_once_t fab_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	pthread_mutex_lock(&fab.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&fab.lock);
}

/* The child has no timer thread; fab_unlock starts one if timers remain. */
static void fork_child(void)
{
	fab.timer_running = false;
	pthread_mutex_unlock(&fab.lock);
}

static void fab_init_once(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&fab.timer_cond, &attr);
	pthread_condattr_destroy(&attr);
	fab.rand_state = (unsigned)getpid() ^ (unsigned)time(NULL);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	pthread_mutex_lock(&fab.lock);
	topology_init_locked();
	pthread_mutex_unlock(&fab.lock);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *timer_thread(void *unused)
{
	pthread_mutex_lock(&fab.lock);
	for (;;) {
		struct fab_timer *t = fab.timers;
		struct timespec due;

		if (!t) {
			pthread_cond_wait(&fab.timer_cond, &fab.lock);
			continue;
		}
		if (t->due_ns > now_ns()) {
			due.tv_sec = (time_t)(t->due_ns / 1000000000u);
			due.tv_nsec = (long)(t->due_ns % 1000000000u);
			pthread_cond_timedwait(&fab.timer_cond, &fab.lock, &due);
			continue;
		}
		fab.timers = t->next;
		t->fire(t->id, t->arg);
		free(t);
	}
	return NULL;
}

static void timer_start_locked(void)
{
	pthread_attr_t attr;
	pthread_t thread;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&thread, &attr, timer_thread, NULL) == 0)
		fab.timer_running = true;
	else
		mock_log("cannot start the fabric's timer thread; timeouts will not fire");
	pthread_attr_destroy(&attr);
}

void fab_lock(void)
{
	pthread_once(&fab_once, fab_init_once);
	pthread_mutex_lock(&fab.lock);
}

void fab_unlock(void)
{
	if (fab.timers && !fab.timer_running)
		timer_start_locked();
	pthread_mutex_unlock(&fab.lock);
}

void fab_timer_add(struct fab_id *id, unsigned ms, void (*fire)(struct fab_id *, int), int arg)
{
	struct fab_timer *t = calloc(1, sizeof *t), **pos;

	if (!t) {
		mock_log("out of memory scheduling a timeout; it will not fire");
		return;
	}
	t->due_ns = now_ns() + (uint64_t)ms * 1000000u;
	t->id = id;
	t->fire = fire;
	t->arg = arg;
	for (pos = &fab.timers; *pos && (*pos)->due_ns <= t->due_ns; pos = &(*pos)->next)
		;
	t->next = *pos;
	*pos = t;
	pthread_cond_signal(&fab.timer_cond);
}

void fab_timer_cancel(struct fab_id *id)
{
	struct fab_timer **pos = &fab.timers;

	while (*pos) {
		struct fab_timer *t = *pos;

		if (t->id == id) {
			*pos = t->next;
			free(t);
		} else {
			pos = &t->next;
		}
	}
}

/* ---------------------------------------------------------------- channels */

static void count_up(struct fab_chan *chan)
{
	uint64_t one = 1;

	if (write(chan->fd, &one, sizeof one) != sizeof one)
		mock_log("event channel fd %d: cannot signal an event", chan->fd);
}

static void count_down(struct fab_chan *chan)
{
	uint64_t value;
	int flags = fcntl(chan->fd, F_GETFL);

	/* The count matches the queue under the lock, so this never waits;
	 * O_NONBLOCK only guards against a caller who closed our fd. */
	fcntl(chan->fd, F_SETFL, flags | O_NONBLOCK);
	if (read(chan->fd, &value, sizeof value) != sizeof value)
		mock_log("event channel fd %d: event count out of step", chan->fd);
	fcntl(chan->fd, F_SETFL, flags);
}

static void chan_append(struct fab_chan *chan, struct fab_queued *q)
{
	q->next = NULL;
	if (chan->tail)
		chan->tail->next = q;
	else
		chan->head = q;
	chan->tail = q;
	count_up(chan);
}

int fab_chan_open(struct fab_chan **out, int *fd)
{
	struct fab_chan *chan = calloc(1, sizeof *chan);

	if (!chan)
		return -ENOMEM;
	chan->fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (chan->fd < 0) {
		int err = errno;

		free(chan);
		return -err;
	}
	*out = chan;
	*fd = chan->fd;
	return 0;
}

struct fab_queued *fab_queue_event(struct fab_id *id, enum rdma_cm_event_type type, int status,
				   const struct fab_conn_param *param, struct fab_id *conn_id)
{
	struct fab_queued *q;

	/* cma_ib_handler: once DISCONNECTED is generated only TIMEWAIT_EXIT
	 * follows. */
	if (id->disconnected && type != RDMA_CM_EVENT_TIMEWAIT_EXIT)
		return NULL;
	if (type == RDMA_CM_EVENT_DISCONNECTED)
		id->disconnected = true;
	/* ucma: a new connection's events are dropped until user space
	 * accepts it and so gives it an owner. */
	if (!id->chan || (!id->uid && type != RDMA_CM_EVENT_CONNECT_REQUEST))
		return NULL;
	q = calloc(1, sizeof *q);
	if (!q) {
		mock_log("out of memory: CM event %d for an id lost", (int)type);
		return NULL;
	}
	q->id = id;
	q->ev.uid = id->uid;
	q->ev.event = type;
	q->ev.status = status;
	q->ev.conn_id = conn_id;
	if (param)
		q->ev.param = *param;
	chan_append(id->chan, q);
	return q;
}

int fab_get_event(struct fab_chan *chan, struct fab_event *out)
{
	struct fab_queued *q;

	fab_lock();
	q = chan->head;
	if (!q) {
		fab_unlock();
		return -EAGAIN;
	}
	chan->head = q->next;
	if (!chan->head)
		chan->tail = NULL;
	count_down(chan);
	q->id->events_reported++;
	if (q->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* The new id belongs to the channel that reports it. */
		q->id->pending_requests--;
		q->ev.conn_id->chan = chan;
		q->ev.conn_id->requested_by = NULL;
	}
	*out = q->ev;
	fab_unlock();
	free(q);
	return 0;
}

/* Unlink and return the queued events of id, or the request that carries
 * conn, or (both NULL) every event. */
static struct fab_queued *take_events(struct fab_chan *chan, struct fab_id *id,
				      struct fab_id *conn)
{
	struct fab_queued **pos = &chan->head, *taken = NULL, **tail = &taken;

	chan->tail = NULL;
	while (*pos) {
		struct fab_queued *q = *pos;

		if ((!id && !conn) || (id && q->id == id) || (conn && q->ev.conn_id == conn)) {
			*pos = q->next;
			q->next = NULL;
			*tail = q;
			tail = &q->next;
			count_down(chan);
		} else {
			chan->tail = q;
			pos = &q->next;
		}
	}
	return taken;
}

void fab_drop_events(struct fab_id *id, struct fab_chan *chan)
{
	struct fab_queued *q = take_events(chan, id, NULL);

	while (q) {
		struct fab_queued *next = q->next;

		if (q->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			q->id->pending_requests--;
			q->ev.conn_id->requested_by = NULL;
			fab_destroy_unreported_locked(q->ev.conn_id);
		}
		free(q);
		q = next;
	}
}

void fab_move_events(struct fab_id *id, struct fab_chan *from)
{
	struct fab_queued *q = take_events(from, id, NULL);

	while (q) {
		struct fab_queued *next = q->next;

		chan_append(id->chan, q);
		q = next;
	}
}

/* Like closing an rdma_cm file: every id still on it is destroyed. Queued
 * requests go first (their new ids die with them); a destruction can queue
 * events for other ids here, so repeat until nothing is left. */
void fab_chan_close(struct fab_chan *chan)
{
	struct fab_id *id;

	if (!chan)
		return;
	fab_lock();
	do {
		fab_drop_events(NULL, chan);
		for (id = fab.live; id && id->chan != chan; id = id->next_live)
			;
		if (id)
			fab_destroy_unreported_locked(id);
	} while (id);
	fab_drop_events(NULL, chan);
	fab_unlock();
	close(chan->fd);
	free(chan);
}

/* A new id dies before its request was fetched: the request goes too. */
void fab_drop_request(struct fab_id *conn)
{
	struct fab_queued *q;

	if (!conn->requested_by)
		return;
	q = take_events(conn->requested_by->chan, NULL, conn);
	if (q) {
		conn->requested_by->pending_requests--;
		free(q);
	}
	conn->requested_by = NULL;
}
