/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Doorbells: the file descriptors the mock hands out to be polled (an
 * event channel's fd, a completion channel's, a context's async_fd),
 * made readable from any process of the fabric.
 *
 * A doorbell is a datagram socket of its owner, bound to an abstract
 * name that carries the fabric's token, the owner's pid and a number; any
 * process rings it by sending one byte to that name. It is level
 * triggered: whoever makes the queue behind it non-empty rings it, whoever
 * empties the queue clears it, both under the lock that guards the queue,
 * so it holds one byte exactly while there is something to read. An
 * abstract socket needs no file and goes with its process. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "arena.h"
#include "fabric.h"
#include "control/mock.h"

static int sender = -1; /* this process's unbound socket for ringing */
static uint32_t next_serial;
static pthread_mutex_t sender_lock = PTHREAD_MUTEX_INITIALIZER;

/* The name is made once, when the bell is opened (a ring is the hot path). */
static void bell_name(struct fab_bell *b)
{
	int n;

	/* name[0] is 0: the abstract namespace. */
	b->name[0] = '\0';
	n = snprintf(b->name + 1, sizeof b->name - 1, "rdmamock-%016llx-%d-%u",
		     (unsigned long long)fab_token(), (int)b->pid, b->serial);
	b->name_len = (uint8_t)(1 + n);
}

static socklen_t bell_address(const struct fab_bell *b, struct sockaddr_un *sun)
{
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, b->name, b->name_len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + b->name_len);
}

int fab_bell_open(struct fab_bell *b)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	pthread_mutex_lock(&sender_lock);
	b->serial = ++next_serial;
	pthread_mutex_unlock(&sender_lock);
	b->pid = mock_pid();
	b->lit = false;
	bell_name(b);
	len = bell_address(b, &sun);
	if (bind(fd, (struct sockaddr *)&sun, len)) {
		int err = errno;

		close(fd);
		return -err;
	}
	b->fd = fd;
	return fd;
}

void fab_bell_ring(struct fab_bell *b)
{
	struct sockaddr_un sun;
	socklen_t len;
	char one = 1;

	if (b->lit || !b->pid)
		return;
	b->lit = true;
	len = bell_address(b, &sun);
	pthread_mutex_lock(&sender_lock);
	if (sender < 0)
		sender = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	pthread_mutex_unlock(&sender_lock);
	/* A bell whose owner is gone (ECONNREFUSED) has nobody to wake; the
	 * watchers reap that owner. */
	if (sendto(sender, &one, 1, MSG_DONTWAIT, (struct sockaddr *)&sun, len) != 1 &&
	    errno != ECONNREFUSED && errno != ENOENT)
		mock_log("doorbell of process %d: cannot ring it: %s", (int)b->pid, strerror(errno));
}

/* Whether this process holds the bell's socket under its number: its
 * owner does, and so does a forked child of the owner (which shares it);
 * a process reaping a dead owner does not. */
static bool held_here(const struct fab_bell *b)
{
	struct sockaddr_un want, have;
	socklen_t want_len, have_len = sizeof have;

	if (b->pid == mock_pid())
		return true;
	if (b->fd < 0)
		return false;
	want_len = bell_address(b, &want);
	return getsockname(b->fd, (struct sockaddr *)&have, &have_len) == 0 && have_len == want_len &&
	       !memcmp(&have, &want, want_len);
}

void fab_bell_clear(struct fab_bell *b)
{
	char byte;

	if (!b->lit)
		return;
	b->lit = false;
	if (held_here(b) && recv(b->fd, &byte, 1, MSG_DONTWAIT) != 1)
		mock_log("doorbell fd %d: out of step with its queue", b->fd);
}

void fab_bell_close(struct fab_bell *b)
{
	if (held_here(b))
		close(b->fd);
	b->fd = -1;
	b->pid = 0;
}

/* A forked child: the lock may have been held by a thread it lacks. */
void fab_bell_child(void)
{
	pthread_mutex_init(&sender_lock, NULL);
}
