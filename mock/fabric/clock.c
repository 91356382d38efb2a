/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fabric's clock. Every protocol timeout of the mock (REQ retries,
 * TIMEWAIT, the DREQ timeout, address resolution, RNR and transport
 * retries, injected delays) is a timer on it, and so are the waits that a
 * program makes on it through rdmamock_poll.
 *
 * The clock is CLOCK_MONOTONIC plus an offset in the fabric's shared
 * state, which only grows, so that every process of a fabric reads one
 * clock. With RDMAMOCK_CLOCK=real the offset stays 0: the fabric keeps
 * wall time. In the default mode, auto, the clock jumps to the next timer
 * once the fabric has been quiet for FAB_QUIET_NS of real time: no member
 * has taken the fabric's lock or the verbs lock (polling an empty CQ does
 * not count) and no timer has fired. A fabric that is quiet has every
 * process waiting for something, blocked in a call, in poll(2) on one of
 * the mock's descriptors or on a timeout of its own; the timeout that
 * nothing else would come before fires at once, as a paused test clock
 * auto-advances. The fabric's creator picks the mode; processes that join
 * later run on it.
 *
 * Any member's watcher may make the jump (under the fabric's lock, so that
 * two cannot), and fires what it made due. The other watchers sleep at
 * most FAB_QUIET_NS while a timer is pending, so they see the new time
 * without being rung. */
#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "control/mock.h"

uint64_t fab_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fab_clock_offset(void)
{
	return fab_fabric ? __atomic_load_n(&fab.clock.offset_ns, __ATOMIC_ACQUIRE) : 0;
}

uint64_t fab_now_ns(void)
{
	uint64_t offset = fab_clock_offset();

	return fab_mono_ns() + offset;
}

uint64_t fab_device_cycles(uint64_t khz, uint64_t ns)
{
	return ns / 1000u * khz / 1000u;
}

void fab_clock_init(struct fab_clock *c)
{
	const char *mode = getenv("RDMAMOCK_CLOCK");

	c->offset_ns = 0;
	c->real = mode && !strcmp(mode, "real");
	if (mode && *mode && !c->real && strcmp(mode, "auto"))
		mock_log("RDMAMOCK_CLOCK=%s: not auto or real; the fabric's clock runs auto", mode);
}

bool fab_clock_auto(void)
{
	return !fab.clock.real;
}

static __thread bool watcher_thread;

void fab_clock_is_watcher(void)
{
	watcher_thread = true;
}

/* Each member counts in a line of its own (arena.c); the watchers add
 * them up. */
void fab_clock_busy(void)
{
	if (!watcher_thread)
		__atomic_add_fetch(fab_member_activity(), 1, __ATOMIC_RELAXED);
}

uint64_t fab_clock_activity(void)
{
	return fab_members_activity();
}

/* A thread's state, from /proc/PID/task/TID/stat: the field after the
 * command's closing parenthesis; 0 if it cannot be read. */
static char task_state(int pid, const char *tid)
{
	char path[320], buf[512];
	const char *p;

	snprintf(path, sizeof path, "/proc/%d/task/%s/stat", pid, tid);
	p = fab_proc_stat(path, buf, sizeof buf);
	return p ? p[1] : 0;
}

/* Whether every thread of every member sleeps (but the caller): one that
 * runs, or waits for a CPU, or is stopped, may yet do something before
 * the next timer. A thread that cannot be looked at counts as running. */
bool fab_clock_members_asleep(void)
{
	char self[16];

	snprintf(self, sizeof self, "%d", (int)syscall(SYS_gettid));
	for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
		int pid = (int)fab_owner_pid(i);
		char dir[48];
		struct dirent *e;
		bool asleep = true;
		DIR *d;

		if (!pid)
			continue;
		snprintf(dir, sizeof dir, "/proc/%d/task", pid);
		d = opendir(dir);
		if (!d)
			continue; /* gone: the watchers reap it */
		while (asleep && (e = readdir(d))) {
			char s;

			if (e->d_name[0] == '.' || (pid == mock_pid() && !strcmp(e->d_name, self)))
				continue;
			s = task_state(pid, e->d_name);
			asleep = s == 'S' || s == 'Z' || s == 'X';
		}
		closedir(d);
		if (!asleep)
			return false;
	}
	return true;
}

bool fab_clock_jump_locked(uint64_t due)
{
	uint64_t now = fab_now_ns();

	if (fab.clock.real || due <= now)
		return false;
	__atomic_add_fetch(&fab.clock.offset_ns, due - now, __ATOMIC_RELEASE);
	return true;
}

/* ---------------------------------------------------------------- waits on the clock */

/* Each thread that waits on the clock has a doorbell of its own in the
 * arena, which the wait's timer rings from whichever watcher fires it.
 * Made on its first wait, closed when the thread ends. */
static pthread_key_t bell_key;
static pthread_once_t bell_once = PTHREAD_ONCE_INIT;
static __thread struct fab_bell *thread_bell;

static void bell_gone(void *p)
{
	struct fab_bell *b = p;

	if (b->pid != mock_pid())
		return;
	fab_lock();
	fab_bell_close(b);
	fab_free(b);
	fab_unlock();
}

static void bell_key_make(void)
{
	pthread_key_create(&bell_key, bell_gone);
}

static struct fab_bell *wait_bell(void)
{
	struct fab_bell *b = thread_bell;

	/* A forked child has its parent's pointer; the bell is the parent's. */
	if (b && b->pid == mock_pid())
		return b;
	pthread_once(&bell_once, bell_key_make);
	fab_lock();
	b = fab_alloc(sizeof *b);
	if (b && fab_bell_open(b) < 0) {
		fab_free(b);
		b = NULL;
	}
	fab_unlock();
	if (!b)
		return NULL;
	thread_bell = b;
	pthread_setspecific(bell_key, b);
	return b;
}

int fab_deadline_arm(struct fab_deadline *d, uint64_t ns)
{
	d->due_ns = fab_now_ns() + ns;
	d->bell = wait_bell();
	if (!d->bell)
		return -ENOMEM;
	fab_lock();
	fab_timer_add_wake(d->bell, d->due_ns);
	fab_unlock();
	return d->bell->fd;
}

bool fab_deadline_passed(const struct fab_deadline *d)
{
	return fab_now_ns() >= d->due_ns;
}

void fab_deadline_disarm(struct fab_deadline *d)
{
	if (!d->bell)
		return;
	fab_lock();
	fab_timer_cancel_obj_locked(d->bell);
	fab_bell_clear(d->bell);
	fab_unlock();
	d->bell = NULL;
}

/* Real milliseconds left until d at most (mock time runs no slower). */
static int real_ms_left(const struct fab_deadline *d)
{
	uint64_t now = fab_now_ns();

	return now >= d->due_ns ? 0 : (int)((d->due_ns - now + 999999) / 1000000);
}

int fab_clock_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	struct fab_deadline d;
	struct pollfd *all;
	int fd, err, n = 0;

	if (timeout_ms <= 0)
		return poll(fds, nfds, timeout_ms);
	all = calloc(nfds + 1, sizeof *all);
	fd = all ? fab_deadline_arm(&d, (uint64_t)timeout_ms * 1000000u) : -ENOMEM;
	if (fd < 0) {
		free(all);
		return poll(fds, nfds, timeout_ms);
	}
	if (nfds)
		memcpy(all, fds, nfds * sizeof *fds);
	all[nfds].fd = fd;
	all[nfds].events = POLLIN;
	for (;;) {
		n = poll(all, nfds + 1, real_ms_left(&d));
		if (n < 0)
			break;
		n -= !!all[nfds].revents;
		if (n > 0 || fab_deadline_passed(&d))
			break;
		if (all[nfds].revents) { /* rung early: not for this wait */
			fab_lock();
			fab_bell_clear(d.bell);
			fab_unlock();
		}
	}
	err = errno;
	fab_deadline_disarm(&d);
	errno = err;
	for (nfds_t i = 0; n >= 0 && i < nfds; i++)
		fds[i].revents = all[i].revents;
	free(all);
	return n;
}

bool fab_clock_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct fab_deadline *d)
{
	struct timespec until;
	int ms = real_ms_left(d);

	/* The watcher fires d's timer, not this condition: look at the clock
	 * every 10 ms of real time, as the clock may have jumped past d. */
	if (ms > 10)
		ms = 10;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)ms * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(cond, mutex, &until);
	return fab_deadline_passed(d);
}
