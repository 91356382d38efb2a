/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rpoll, rselect and repoll_*: waiting on rsockets and other fds together.
 *
 * An rsocket's events are worked out from its state (taking in completions
 * and driving a connect under way first), never from its descriptor; to
 * sleep, rpoll polls what stands behind each: the completion channel of a
 * connection (its CQ armed), the CM channel of a connect under way, the
 * accept queue of a listener, the epoll set of a datagram socket's
 * channels. Other fds are polled as they are. A sleep lasts at most
 * RS_WAKE_MS, after which everything is looked at again, as upstream's
 * rpoll does (wake_up_interval).
 *
 * repoll_* (rdma-core v65) keep an fd list per instance and wait with
 * rpoll; an instance's descriptor is an eventfd that wakes its waiters
 * when the list changes. Like upstream's, they report errors as errno
 * values, not -1. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "rsocket.h"

#define LIB "rdmacm"

/* ---------------------------------------------------------------- rpoll */

static short stream_events(struct rsocket *rs, short events)
{
	short revents = 0;

	if (rs_listening(rs)) {
		struct pollfd pfd = { .fd = rs->accept_fd[0], .events = events };

		poll(&pfd, 1, 0);
		return pfd.revents;
	}
	if (rs_continue_connect(rs) && errno == EINPROGRESS)
		return 0;
	pthread_mutex_lock(&rs->lock);
	switch (rs->phase) {
	case RS_CONNECTED:
	case RS_DISCONNECTED:
	case RS_ERROR:
		rs_poll_cq(rs);
		if ((events & POLLIN) && (rs_have_data(rs) || !rs->readable))
			revents |= POLLIN;
		if ((events & POLLOUT) && rs_can_send(rs))
			revents |= POLLOUT;
		if (rs->phase == RS_DISCONNECTED)
			revents |= POLLHUP;
		else if (rs->phase == RS_ERROR)
			revents |= POLLERR;
		break;
	case RS_CONNECT_ERROR:
		revents = (short)((events & (POLLIN | POLLOUT)) | POLLERR);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&rs->lock);
	return revents;
}

/* What fds[i] shows now; rsockets are looked at, other fds polled. */
static int check(struct pollfd *fds, nfds_t nfds)
{
	int count = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rsocket *rs = rs_lookup(fds[i].fd);

		if (!rs) {
			fds[i].revents = 0;
			poll(&fds[i], 1, 0);
		} else if (rs->type == SOCK_DGRAM) {
			fds[i].revents = ds_poll_events(rs, fds[i].events);
		} else {
			fds[i].revents = stream_events(rs, fds[i].events);
		}
		count += fds[i].revents != 0;
	}
	return count;
}

/* The fd to sleep on for an rsocket; *again when arming found that
 * something may have come in (look once more before sleeping). */
static int wait_fd(struct rsocket *rs, bool *again)
{
	int fd = -1;

	if (rs->type == SOCK_DGRAM) {
		pthread_mutex_lock(&rs->lock);
		*again |= !ds_arm(rs);
		fd = ds_wait_fd(rs);
		pthread_mutex_unlock(&rs->lock);
		return fd;
	}
	pthread_mutex_lock(&rs->lock);
	if (rs->phase == RS_LISTENING) {
		fd = rs->accept_fd[0];
	} else if (rs_opening(rs->phase) && rs->phase != RS_ACCEPTING) {
		fd = rs->cm_id->channel->fd;
	} else if (rs->cq && rs->phase != RS_CONNECT_ERROR) {
		*again |= !rs_arm(rs);
		fd = rs->cq_channel->fd;
	}
	pthread_mutex_unlock(&rs->lock);
	return fd;
}

static int poll_all(struct pollfd *fds, nfds_t nfds, int timeout)
{
	uint64_t deadline = timeout > 0 ? rs_now_ms() + (uint64_t)timeout : 0;
	struct pollfd *pfd;
	int ret;

	if (nfds && !fds)
		return mock_errno(EFAULT);
	pfd = calloc(nfds ? nfds : 1, sizeof *pfd);
	if (!pfd)
		return mock_errno(ENOMEM);
	for (;;) {
		bool again = false;
		int sleep_ms = RS_WAKE_MS;

		ret = check(fds, nfds);
		if (ret || !timeout)
			break;
		for (nfds_t i = 0; i < nfds; i++) {
			struct rsocket *rs = rs_lookup(fds[i].fd);

			pfd[i] = fds[i];
			if (rs)
				pfd[i] = (struct pollfd){ .fd = wait_fd(rs, &again), .events = POLLIN };
		}
		if (again)
			continue;
		if (timeout > 0) {
			uint64_t now = rs_now_ms();

			if (now >= deadline) {
				ret = 0;
				break;
			}
			if (deadline - now < (uint64_t)sleep_ms)
				sleep_ms = (int)(deadline - now);
		}
		/* On the fabric's clock: a quiet fabric jumps to the timeout. */
		ret = fab_clock_poll(pfd, nfds, sleep_ms);
		if (ret < 0)
			break;
		for (nfds_t i = 0; i < nfds; i++) {
			struct rsocket *rs;

			if (!pfd[i].revents || !(rs = rs_lookup(fds[i].fd)))
				continue;
			if (rs->type == SOCK_DGRAM)
				ds_take_cq_events(rs);
			else if (rs->cq && pfd[i].fd == rs->cq_channel->fd)
				rs_take_cq_event(rs);
		}
	}
	free(pfd);
	return ret;
}

MOCK_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	FAULT_MINUS1(LIB, "rpoll");
	return poll_all(fds, nfds, timeout);
}

MOCK_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
			struct timeval *timeout)
{
	struct pollfd *fds;
	int n = 0, ret;

	FAULT_MINUS1(LIB, "rselect");
	/* A negative count is ENOMEM, not select(2)'s EINVAL: upstream's
	 * rs_select_to_poll callocs that many pollfds, and fails. */
	if (nfds < 0)
		return mock_errno(ENOMEM);
	if (nfds > FD_SETSIZE)
		return mock_errno(EINVAL);
	fds = calloc(nfds ? (size_t)nfds : 1, sizeof *fds);
	if (!fds)
		return mock_errno(ENOMEM);
	for (int fd = 0; fd < nfds; fd++) {
		short events = 0;
		bool except = exceptfds && FD_ISSET(fd, exceptfds);

		if (readfds && FD_ISSET(fd, readfds))
			events |= POLLIN;
		if (writefds && FD_ISSET(fd, writefds))
			events |= POLLOUT;
		if (events || except)
			fds[n++] = (struct pollfd){ .fd = fd, .events = events };
	}
	ret = poll_all(fds, (nfds_t)n,
		       timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000) : -1);
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	if (ret > 0) {
		ret = 0;
		for (int i = 0; i < n; i++) {
			if (readfds && (fds[i].revents & (POLLIN | POLLHUP))) {
				FD_SET(fds[i].fd, readfds);
				ret++;
			}
			if (writefds && (fds[i].revents & POLLOUT)) {
				FD_SET(fds[i].fd, writefds);
				ret++;
			}
			if (exceptfds && (fds[i].revents & ~(POLLIN | POLLOUT))) {
				FD_SET(fds[i].fd, exceptfds);
				ret++;
			}
		}
	}
	free(fds);
	return ret;
}

/* ---------------------------------------------------------------- repoll */

struct repoll_item {
	int fd;
	uint32_t events;
	epoll_data_t data;
};

struct repoll {
	struct repoll *next;
	int fd; /* the descriptor: an eventfd, written when the list changes */
	struct repoll_item *items;
	int n, cap;
};

static pthread_mutex_t repoll_lock = PTHREAD_MUTEX_INITIALIZER;
static struct repoll *instances;

static struct repoll *repoll_find(int epfd)
{
	struct repoll *r;

	for (r = instances; r && r->fd != epfd; r = r->next)
		;
	return r;
}

MOCK_EXPORT int repoll_create(int flags)
{
	struct repoll *r;

	FAULT_MINUS1(LIB, "repoll_create");
	r = calloc(1, sizeof *r);
	if (!r)
		return mock_errno(ENOMEM);
	r->fd = eventfd(0, EFD_NONBLOCK | (flags & O_CLOEXEC ? EFD_CLOEXEC : 0));
	if (r->fd < 0) {
		free(r);
		return -1;
	}
	pthread_mutex_lock(&repoll_lock);
	r->next = instances;
	instances = r;
	pthread_mutex_unlock(&repoll_lock);
	return r->fd;
}

static int find_item(const struct repoll *r, int fd)
{
	for (int i = 0; i < r->n; i++)
		if (r->items[i].fd == fd)
			return i;
	return -1;
}

static int ctl_locked(struct repoll *r, int op, int fd, const struct epoll_event *event)
{
	int i = find_item(r, fd);

	switch (op) {
	case EPOLL_CTL_ADD:
		if (i >= 0)
			return EEXIST;
		if (r->n == r->cap) {
			int cap = r->cap ? r->cap * 2 : 8;
			struct repoll_item *grown = realloc(r->items, (size_t)cap * sizeof *grown);

			if (!grown)
				return ENOMEM;
			r->items = grown;
			r->cap = cap;
		}
		i = r->n++;
		r->items[i].fd = fd;
		/* fall through */
	case EPOLL_CTL_MOD:
		if (i < 0)
			return ENOENT;
		if (!event)
			return EFAULT;
		r->items[i].events = event->events;
		r->items[i].data = event->data;
		return 0;
	case EPOLL_CTL_DEL:
		if (i < 0)
			return ENOENT;
		r->items[i] = r->items[--r->n];
		return 0;
	default:
		return EINVAL;
	}
}

MOCK_EXPORT int repoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
	struct repoll *r;
	uint64_t one = 1;
	int ret;

	FAULT_POSITIVE(LIB, "repoll_ctl");
	if (fd < 0)
		return EBADF;
	if (epfd == fd)
		return EINVAL;
	pthread_mutex_lock(&repoll_lock);
	r = repoll_find(epfd);
	ret = r ? ctl_locked(r, op, fd, event) : EINVAL;
	if (!ret && write(r->fd, &one, sizeof one) != sizeof one)
		ret = errno;
	pthread_mutex_unlock(&repoll_lock);
	return ret;
}

/* The instance's fds as rpoll takes them, its own eventfd last. */
static struct pollfd *snapshot(int epfd, int *n, struct repoll_item **items)
{
	struct repoll *r;
	struct pollfd *fds = NULL;

	pthread_mutex_lock(&repoll_lock);
	r = repoll_find(epfd);
	if (r) {
		fds = calloc((size_t)r->n + 1, sizeof *fds);
		*items = calloc((size_t)r->n + 1, sizeof **items);
		if (fds && *items) {
			*n = r->n;
			memcpy(*items, r->items, (size_t)r->n * sizeof **items);
			for (int i = 0; i < r->n; i++)
				fds[i] = (struct pollfd){ .fd = r->items[i].fd,
							  .events = (short)(r->items[i].events &
									    (EPOLLIN | EPOLLOUT)) };
			fds[r->n] = (struct pollfd){ .fd = epfd, .events = POLLIN };
		} else {
			free(fds);
			free(*items);
			fds = NULL;
			errno = ENOMEM;
		}
	} else {
		errno = EINVAL;
	}
	pthread_mutex_unlock(&repoll_lock);
	return fds;
}

MOCK_EXPORT int repoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	uint64_t deadline = timeout > 0 ? rs_now_ms() + (uint64_t)timeout : 0;

	FAULT_POSITIVE(LIB, "repoll_wait");
	if (maxevents <= 0 || !events)
		return EINVAL;
	for (;;) {
		struct repoll_item *items = NULL;
		int n = 0, count = 0, left = timeout, ret;
		struct pollfd *fds = snapshot(epfd, &n, &items);
		uint64_t drained;

		if (!fds)
			return errno;
		if (timeout > 0) {
			uint64_t now = rs_now_ms();

			left = now >= deadline ? 0 : (int)(deadline - now);
		}
		ret = poll_all(fds, (nfds_t)n + 1, left);
		for (int i = 0; ret > 0 && i < n && count < maxevents; i++) {
			if (!fds[i].revents)
				continue;
			events[count].events = (uint32_t)fds[i].revents &
					       (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP);
			events[count++].data = items[i].data;
		}
		if (ret > 0 && (fds[n].revents & POLLIN) && read(epfd, &drained, sizeof drained) < 0)
			drained = 0;
		free(fds);
		free(items);
		if (ret < 0)
			return errno;
		/* Only the list changed: wait again on the new list. */
		if (count || !ret || !left)
			return count;
	}
}

/* rclose of a descriptor that is no rsocket: EBADF unless an instance. */
int repoll_close(int epfd)
{
	struct repoll **pos, *r;
	int ret = EBADF;

	pthread_mutex_lock(&repoll_lock);
	for (pos = &instances; (r = *pos) && r->fd != epfd; pos = &r->next)
		;
	if (r && r->n) {
		ret = EBUSY;
	} else if (r) {
		*pos = r->next;
		close(r->fd);
		free(r->items);
		free(r);
		ret = 0;
	}
	pthread_mutex_unlock(&repoll_lock);
	return ret;
}
