/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fabric's machinery: its lock, event channels, event queues, timers,
 * and the watcher thread each process runs: it fires the timers that are
 * due (what real networks deliver late: timeouts) and reaps the members of
 * a shared fabric whose processes are gone. */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "control/mock.h"

void fab_state_init(struct fabric *f)
{
	fab_mutex_init(&f->lock);
	f->next_serial = 1;
	f->next_qpn = FAB_QPN_FIRST;
	f->next_srqn = 1;
	f->rand_state = (unsigned)getpid() ^ (unsigned)time(NULL);
	fab_clock_init(&f->clock);
	topology_init_locked();
}

/* ---------------------------------------------------------------- the watcher */

/* This process's watcher thread (process-local state). Its doorbell is
 * the one in its member slot, which other members ring when they join.
 * A timer due before the watcher would look again sets its alarm, a
 * timerfd it polls beside the doorbell: the kernel wakes the watcher when
 * the timer is due, and the thread that armed it goes on without handing
 * the CPU over (ringing the doorbell woke the watcher at once, to compute
 * the deadline it now reads from the alarm). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t started_cond;
	bool running;
	bool started; /* the thread runs its own code: watcher_kick waits for it */
	bool tried; /* read without the lock (atomics): fab_lock asks it first */
	uint64_t sleeping_until; /* 0: not asleep on a deadline */
	int alarm; /* the timerfd (-1: none; the doorbell is rung instead) */
	uint64_t alarm_at; /* CLOCK_MONOTONIC ns it goes off at; 0: disarmed */
} watcher = { .lock = PTHREAD_MUTEX_INITIALIZER, .started_cond = PTHREAD_COND_INITIALIZER,
	      .alarm = -1 };

static void (*verbs_fire)(void *obj, int arg);

void fab_set_verbs_timer(void (*fire)(void *obj, int arg))
{
	verbs_fire = fire;
}

/* Whether this process can fire t: a verbs timer is its owner's, whose
 * QP it retries with that process's memory and descriptors (and which has
 * the drop-in libibverbs, which a process of the fabric may not have
 * loaded: the sweep and run tools use the control API only). */
static bool fireable(const struct fab_timer *t)
{
	return t->kind != TIMER_VERBS || (verbs_fire && fab_owner_of(t) == fab_owner_self());
}

/* The first timer this process can fire, and where it is linked. */
static struct fab_timer **first_fireable(void)
{
	struct fab_timer **pos = &fab.timers;

	while (*pos && !fireable(*pos))
		pos = &(*pos)->next;
	return pos;
}

/* Fire what is due (first jumping the clock to the first timer, if
 * jump), and say whether anything fired; the next deadline (0: none). The verbs lock is taken
 * first, as everywhere (a verbs timer's object cannot go meanwhile), then
 * the fabric's. */
static uint64_t run_timers(bool jump, uint64_t seen, bool *fired, uint64_t *quiet)
{
	struct fab_timer **pos, *t;
	uint64_t next;

	fab_mutex_lock(fab_verbs_lock());
	fab_lock();
	/* A quiet fabric's clock jumps to its first timer, whoever fires it. */
	if (jump && fab.timers && fab_clock_activity() == seen)
		fab_clock_jump_locked(fab.timers->due_ns);
	while ((t = *(pos = first_fireable())) && t->due_ns <= fab_now_ns()) {
		*pos = t->next;
		*fired = true;
		if (t->kind == TIMER_WAKE) {
			fab_bell_ring(t->obj);
		} else if (t->kind != TIMER_VERBS) {
			cm_timer_fire(t->id, t->kind, t->arg);
		} else {
			fab_unlock();
			verbs_fire(t->obj, t->arg);
			fab_lock();
		}
		fab_free(t);
	}
	next = t ? t->due_ns : 0;
	/* The quiet a jump to the first timer needs. */
	*quiet = fab.timers && fab.timers->quiet_ns > FAB_QUIET_NS ? fab.timers->quiet_ns : FAB_QUIET_NS;
	/* Said while the fabric is still locked: a timer added after this
	 * is added after the watcher looked, and watcher_kick, which its
	 * adder calls once unlocked, compares it with this deadline. Said
	 * later, a timer added in between would be compared with the
	 * deadline just fired, and the watcher would sleep past it. */
	pthread_mutex_lock(&watcher.lock);
	watcher.sleeping_until = next;
	pthread_mutex_unlock(&watcher.lock);
	fab_unlock();
	fab_mutex_unlock(fab_verbs_lock());
	return next;
}

/* The members' pidfds, process-local: a member's pidfd is readable once
 * its process has ended. Without pidfd_open (old kernels, filters) the
 * watcher looks at /proc every 200 ms instead. */
struct watched {
	pid_t pid;
	int fd;
};

static int watch_members(struct watched *w, struct pollfd *pfd, bool *polling)
{
	int n = 0;

	for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
		pid_t pid = fab_owner_pid(i);

		if (i == fab_owner_self() || !pid) {
			if (w[i].fd >= 0)
				close(w[i].fd);
			w[i].fd = -1;
			w[i].pid = 0;
			continue;
		}
		if (w[i].pid != pid) {
			if (w[i].fd >= 0)
				close(w[i].fd);
			w[i].pid = pid;
			w[i].fd = (int)syscall(SYS_pidfd_open, pid, 0);
		}
		if (w[i].fd < 0) {
			*polling = true;
			continue;
		}
		pfd[n].fd = w[i].fd;
		pfd[n].events = POLLIN;
		n++;
	}
	return n;
}

/* poll(2) for ns nanoseconds (-1: for ever). */
static int watcher_poll(struct pollfd *pfd, nfds_t n, int64_t ns)
{
	struct timespec t = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	return ppoll(pfd, n, ns < 0 ? NULL : &t, NULL);
}

/* The alarm went off: disarmed, and the watcher computes its deadline
 * again from the timers. */
static void alarm_clear(void)
{
	uint64_t expirations;

	pthread_mutex_lock(&watcher.lock);
	if (read(watcher.alarm, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
		mock_log("the watcher's alarm: cannot read it: %s", strerror(errno));
	watcher.alarm_at = 0;
	pthread_mutex_unlock(&watcher.lock);
}

/* Wake the watcher at CLOCK_MONOTONIC ns `at`, unless its alarm goes off
 * sooner; false if there is no alarm (the caller rings the doorbell).
 * Called with watcher.lock. */
static bool alarm_set(uint64_t at)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(at / 1000000000u),
						.tv_nsec = (long)(at % 1000000000u) } };

	if (watcher.alarm < 0)
		return false;
	if (watcher.alarm_at && watcher.alarm_at <= at)
		return true;
	if (timerfd_settime(watcher.alarm, TFD_TIMER_ABSTIME, &its, NULL)) {
		mock_log("the watcher's alarm: cannot set it: %s", strerror(errno));
		return false;
	}
	watcher.alarm_at = at;
	return true;
}

static void *watcher_main(void *arg)
{
	struct fab_bell *bell = arg;
	struct watched w[FAB_MEMBERS_MAX];
	struct pollfd pfd[FAB_MEMBERS_MAX + 2];
	bool shared;
	uint64_t seen = 0, quiet_since = 0, asleep_since = 0;
	bool pending = false;
	uint64_t need = FAB_QUIET_NS; /* the quiet the first timer needs (fab_timer_add_patient) */

	/* First, before any call that may wait for the fabric's attach (the
	 * thread that started this one may be attaching). */
	pthread_mutex_lock(&watcher.lock);
	watcher.started = true;
	pthread_cond_broadcast(&watcher.started_cond);
	pthread_mutex_unlock(&watcher.lock);
	fab_clock_is_watcher();
	shared = fab_is_shared();
	for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
		w[i].pid = 0;
		w[i].fd = -1;
	}
	for (;;) {
		uint64_t next, now, real = fab_mono_ns(), activity = fab_clock_activity();
		int64_t timeout = -1; /* ns */
		int n = 1;
		bool polling = false, fired = false, jump = false;

		/* Quiet since when: since the last taking of a lock by a member,
		 * the last timer fired (what it made happen gets its chance), or
		 * the last thread of a member seen running. Then asleep since
		 * when: the clock jumps when every thread sleeps at both ends of
		 * a quiet FAB_QUIET_NS. */
		if (activity != seen) {
			seen = activity;
			quiet_since = real;
			asleep_since = 0;
		}
		if (fab_clock_auto() && pending && real - quiet_since >= FAB_QUIET_NS) {
			if (!fab_clock_members_asleep()) {
				quiet_since = real;
				asleep_since = 0;
			} else if (!asleep_since) {
				asleep_since = real;
			} else {
				jump = real - asleep_since >= need;
			}
		}
		next = run_timers(jump, seen, &fired, &need);
		pending = next != 0;
		if (fired) {
			quiet_since = fab_mono_ns();
			asleep_since = 0;
			seen = fab_clock_activity();
		}
		pfd[0].fd = bell->fd;
		pfd[0].events = POLLIN;
		if (shared)
			n += watch_members(w, pfd + 1, &polling);
		now = fab_now_ns();
		if (next)
			timeout = next <= now ? 0 : (int64_t)(next - now);
		/* While a timer is pending, look again when the quiet would be long
		 * enough to jump (another member may jump meanwhile). */
		if (next && fab_clock_auto()) {
			uint64_t at = (asleep_since ? asleep_since + need : quiet_since + FAB_QUIET_NS);
			uint64_t r = fab_mono_ns();
			int64_t quiet = at <= r ? 100000 : (int64_t)(at - r);

			if (timeout > quiet)
				timeout = quiet;
		}
		if (polling && (timeout < 0 || timeout > 200000000))
			timeout = 200000000;
		if (watcher.alarm >= 0) {
			pfd[n].fd = watcher.alarm;
			pfd[n].events = POLLIN;
			pfd[n++].revents = 0;
		}
		if (watcher_poll(pfd, (nfds_t)n, timeout) <= 0 && !polling)
			continue;
		if (watcher.alarm >= 0 && pfd[n - 1].revents)
			alarm_clear();
		if (pfd[0].revents) {
			fab_lock();
			fab_bell_clear(bell);
			fab_unlock();
		}
		if (shared)
			fab_reap_dead();
	}
	return NULL;
}

/* A thread that is still starting when its process exits can deadlock
 * a sanitizer's exit-time leak check (LSan stops the world while the
 * new thread waits in the allocator for its attributes): the call that
 * starts the watcher returns once it runs. Called with watcher.lock. */
static void wait_started(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	while (!watcher.started)
		if (pthread_cond_timedwait(&watcher.started_cond, &watcher.lock, &until) == ETIMEDOUT) {
			mock_log("the fabric's watcher thread has not started in 5 s; going on");
			return;
		}
}

/* Start the watcher if it is not running (a shared fabric's member then
 * tells the others, who watch it from then on); wake it if `due` (0: any
 * change) is earlier than what it sleeps until. No lock held. */
static void watcher_kick(uint64_t due)
{
	int self = fab_owner_self();
	struct fab_bell *bell;
	pthread_attr_t attr;
	pthread_t thread;
	bool start, wake;

	/* A process that has left its fabric (at exit) has no member slot,
	 * and nothing it arms now can fire for it. */
	if (self < 0)
		return;
	bell = fab_member_bell(self);

	pthread_mutex_lock(&watcher.lock);
	start = !watcher.running;
	__atomic_store_n(&watcher.tried, true, __ATOMIC_RELEASE);
	wake = !start && (!due || !watcher.sleeping_until || due < watcher.sleeping_until);
	/* A timer: the alarm, at the timer (in auto mode, at most a quiet
	 * window away, when the watcher would look for quiet). */
	if (wake && due) {
		uint64_t offset = fab_clock_offset(), real = fab_mono_ns();
		uint64_t at = due > real + offset ? due - offset : real;

		if (fab_clock_auto() && at > real + FAB_QUIET_NS)
			at = real + FAB_QUIET_NS;
		wake = !alarm_set(at);
	}
	if (start) {
		int err = fab_bell_open(bell);

		if (watcher.alarm < 0)
			watcher.alarm = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		watcher.alarm_at = 0;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (err < 0 || pthread_create(&thread, &attr, watcher_main, bell))
			mock_log("cannot start the fabric's watcher thread (%s); timeouts will not fire",
				 err < 0 ? strerror(-err) : "pthread_create failed");
		else {
			watcher.running = true;
			wait_started();
		}
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&watcher.lock);
	if (!wake && !start)
		return;
	fab_lock();
	if (wake)
		fab_bell_ring(bell);
	if (start && fab_is_shared())
		for (int i = 0; i < FAB_MEMBERS_MAX; i++)
			if (i != self && fab_owner_pid(i))
				fab_bell_ring(fab_member_bell(i));
	fab_unlock();
}

/* A member of a shared fabric watches the others from the moment it
 * joins (called once mapped, before the first call returns). */
void fab_watch_start(void)
{
	watcher_kick(0);
}

/* A forked child has no watcher: it starts one when it needs one. */
void fab_child_after_fork(void)
{
	pthread_mutex_init(&watcher.lock, NULL);
	pthread_cond_init(&watcher.started_cond, NULL);
	watcher.running = false;
	watcher.started = false;
	__atomic_store_n(&watcher.tried, false, __ATOMIC_RELEASE);
	watcher.sleeping_until = 0;
	if (watcher.alarm >= 0)
		close(watcher.alarm);
	watcher.alarm = -1;
	watcher.alarm_at = 0;
	fab_bell_child();
}

/* ---------------------------------------------------------------- lock and timers */

static __thread uint64_t kick_due; /* a timer added under the lock: wake the watcher */

void fab_lock(void)
{
	static __thread bool starting;

	fab_attach();
	/* A member of a shared fabric watches the others from its first
	 * call on (starting the watcher takes this lock itself). */
	if (!__atomic_load_n(&watcher.tried, __ATOMIC_ACQUIRE) && !starting && fab_is_shared()) {
		starting = true;
		watcher_kick(0);
		starting = false;
	}
	fab_mutex_lock(&fab.lock);
	fab_clock_busy();
}

void fab_unlock(void)
{
	uint64_t due = kick_due;

	kick_due = 0;
	fab_mutex_unlock(&fab.lock);
	if (due)
		watcher_kick(due);
}

static void timer_insert(struct fab_timer *t)
{
	struct fab_timer **pos;

	for (pos = &fab.timers; *pos && (*pos)->due_ns <= t->due_ns; pos = &(*pos)->next)
		;
	t->next = *pos;
	*pos = t;
	if (!kick_due || t->due_ns < kick_due)
		kick_due = t->due_ns;
}

void fab_timer_add_patient(struct fab_id *id, unsigned ms, enum fab_timer_kind kind, int arg,
			   unsigned quiet_ms)
{
	struct fab_timer *t = fab_alloc_owned(id->owner, sizeof *t);

	if (!t) {
		mock_log("out of memory scheduling a timeout; it will not fire");
		return;
	}
	t->due_ns = fab_now_ns() + (uint64_t)ms * 1000000u;
	t->quiet_ns = (uint64_t)quiet_ms * 1000000u;
	t->id = id;
	t->kind = kind;
	t->arg = arg;
	timer_insert(t);
}

void fab_timer_add(struct fab_id *id, unsigned ms, enum fab_timer_kind kind, int arg)
{
	fab_timer_add_patient(id, ms, kind, arg, 0);
}

void fab_timer_add_verbs(void *obj, int owner, uint64_t ns, int arg)
{
	struct fab_timer *t = fab_alloc_owned(owner, sizeof *t);

	if (!t) {
		mock_log("out of memory scheduling a timeout; it will not fire");
		return;
	}
	fab_lock();
	t->due_ns = fab_now_ns() + ns;
	t->obj = obj;
	t->kind = TIMER_VERBS;
	t->quiet_ns = 0;
	t->arg = arg;
	timer_insert(t);
	fab_unlock();
}

static void cancel_where(struct fab_id *id, void *obj)
{
	struct fab_timer **pos = &fab.timers;

	while (*pos) {
		struct fab_timer *t = *pos;

		if ((id && t->id == id) || (obj && t->obj == obj)) {
			*pos = t->next;
			fab_free(t);
		} else {
			pos = &t->next;
		}
	}
}

void fab_timer_cancel(struct fab_id *id)
{
	cancel_where(id, NULL);
}

void fab_timer_add_wake(struct fab_bell *bell, uint64_t due_ns)
{
	struct fab_timer *t = fab_alloc(sizeof *t);

	if (!t) {
		mock_log("out of memory scheduling a wait on the clock; it ends in real time");
		return;
	}
	t->due_ns = due_ns;
	t->obj = bell;
	t->kind = TIMER_WAKE;
	t->quiet_ns = 0;
	timer_insert(t);
}

void fab_timer_cancel_obj_locked(void *obj)
{
	cancel_where(NULL, obj);
}

void fab_timer_cancel_verbs(void *obj)
{
	fab_lock();
	cancel_where(NULL, obj);
	fab_unlock();
}

/* A dead member's timers leave the list before its memory is freed,
 * whatever they are for (a QP's retry, a delayed message). */
void fab_timer_reap_locked(int owner)
{
	struct fab_timer **pos = &fab.timers;

	while (*pos) {
		struct fab_timer *t = *pos;

		if (fab_owner_of(t) == owner) {
			*pos = t->next;
			fab_free(t);
		} else {
			pos = &t->next;
		}
	}
}

/* ---------------------------------------------------------------- channels */

/* A channel's doorbell is lit while its queue holds events. */
static void chan_append(struct fab_chan *chan, struct fab_queued *q)
{
	q->next = NULL;
	if (chan->tail)
		chan->tail->next = q;
	else
		chan->head = q;
	chan->tail = q;
	fab_bell_ring(&chan->bell);
}

int fab_chan_open(struct fab_chan **out, int *fd)
{
	struct fab_chan *chan = fab_alloc(sizeof *chan);
	int err;

	if (!chan)
		return -ENOMEM;
	chan->owner = fab_owner_self();
	err = fab_bell_open(&chan->bell);
	if (err < 0) {
		fab_free(chan);
		return err;
	}
	*out = chan;
	*fd = chan->bell.fd;
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
	q = fab_alloc_owned(id->chan->owner, sizeof *q);
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
	if (!chan->head) {
		chan->tail = NULL;
		fab_bell_clear(&chan->bell);
	}
	q->id->events_reported++;
	if (q->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* The new id belongs to the channel that reports it. */
		q->id->pending_requests--;
		q->ev.conn_id->chan = chan;
		q->ev.conn_id->owner = chan->owner;
		q->ev.conn_id->requested_by = NULL;
	}
	*out = q->ev;
	fab_unlock();
	fab_free(q);
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
		} else {
			chan->tail = q;
			pos = &q->next;
		}
	}
	if (!chan->head)
		fab_bell_clear(&chan->bell);
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
		fab_free(q);
		q = next;
	}
}

/* A join left: its events not yet read go with it (kernel ucma.c
 * ucma_leave_multicast, ucma_cleanup_mc_events). */
void fab_drop_join_events_locked(struct fab_id *id, uint64_t mc_uid)
{
	struct fab_chan *chan = id->chan;
	struct fab_queued **pos, *q;

	if (!chan)
		return;
	chan->tail = NULL;
	for (pos = &chan->head; (q = *pos);) {
		if (q->id == id && q->ev.mc_uid == mc_uid) {
			*pos = q->next;
			fab_free(q);
		} else {
			chan->tail = q;
			pos = &q->next;
		}
	}
	if (!chan->head)
		fab_bell_clear(&chan->bell);
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
	fab_bell_close(&chan->bell);
	fab_unlock();
	fab_free(chan);
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
		fab_free(q);
	}
	conn->requested_by = NULL;
}
