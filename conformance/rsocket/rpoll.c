/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: rpoll, rselect, repoll_create, repoll_ctl, repoll_wait: the
 * events of rsockets, and of rsockets and other fds together (man
 * rsocket(7): "rpoll and rselect support polling both rsockets and normal
 * fd's"), with poll(2)'s and select(2)'s rules. */
#include <errno.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "fixtures.h"
#include "rsock.h"

void rpoll__listener_readable(void **state)
{
	int listener = fx_rs_listen(AF_INET, fx_port()), client;
	struct sockaddr_storage addr;

	assert_int_equal(fx_rs_poll(listener, POLLIN, 0), 0);
	fx_rs_addr(AF_INET, fx_port(), &addr);
	client = fx_rsocket(AF_INET, SOCK_STREAM);
	FX_RS_OK(rconnect(client, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(fx_rs_poll(listener, POLLIN, FX_RS_WAIT_MS), POLLIN);
	rclose(client);
	rclose(listener);
}

void rpoll__readable_when_data(void **state)
{
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(fx_rs_poll(pair.server, POLLIN, 0), 0);
	assert_int_equal(rsend(pair.client, "x", 1, 0), 1);
	assert_int_equal(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS), POLLIN);
	fx_rs_close(&pair);
}

void rpoll__writable_when_connected(void **state)
{
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	assert_true(fx_rs_poll(pair.client, POLLOUT, FX_RS_WAIT_MS) & POLLOUT);
	assert_true(fx_rs_poll(pair.server, POLLOUT, FX_RS_WAIT_MS) & POLLOUT);
	fx_rs_close(&pair);
}

void rpoll__hangup_after_peer_closes(void **state)
{
	struct fx_rs_pair pair;

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rclose(pair.client), 0);
	pair.client = -1;
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLHUP);
	fx_rs_close(&pair);
}

/* An rsocket and a pipe in one call; each reported by its own events. */
void rpoll__rsockets_and_fds(void **state)
{
	struct fx_rs_pair pair;
	struct pollfd fds[2];
	int p[2];

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(pipe(p), 0);
	fds[0] = (struct pollfd){ .fd = pair.server, .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	assert_int_equal(rpoll(fds, 2, 0), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(rpoll(fds, 2, FX_RS_WAIT_MS), 1);
	assert_int_equal(fds[0].revents, 0);
	assert_int_equal(fds[1].revents, POLLIN);
	assert_int_equal(rsend(pair.client, "x", 1, 0), 1);
	assert_int_equal(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS), POLLIN);
	assert_int_equal(rpoll(fds, 2, 0), 2);
	assert_int_equal(fds[0].revents, POLLIN);
	assert_int_equal(fds[1].revents, POLLIN);
	close(p[0]);
	close(p[1]);
	fx_rs_close(&pair);
}

/* poll(2): 0 when the timeout expires with nothing ready. */
void rpoll__timeout(void **state)
{
	struct fx_rs_pair pair;
	struct pollfd pfd;

	fx_rs_connect(AF_INET, &pair);
	pfd = (struct pollfd){ .fd = pair.server, .events = POLLIN };
	assert_int_equal(rpoll(&pfd, 1, 0), 0);
	assert_int_equal(rpoll(&pfd, 1, 100), 0);
	assert_int_equal(pfd.revents, 0);
	fx_rs_close(&pair);
}

void rselect__readable(void **state)
{
	struct timeval tv = { .tv_sec = 5 };
	struct fx_rs_pair pair;
	fd_set rd, wr;

	fx_rs_connect(AF_INET, &pair);
	assert_int_equal(rsend(pair.client, "x", 1, 0), 1);
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(pair.server, &rd);
	assert_int_equal(rselect(pair.server + 1, &rd, &wr, NULL, &tv), 1);
	assert_true(FD_ISSET(pair.server, &rd));
	fx_rs_close(&pair);
}

/* A connect that failed: rpoll shows what was asked for, POLLIN and
 * POLLOUT, with POLLERR (upstream's rs_poll_rs, rs_connect_error); with
 * nothing asked for, POLLERR alone, as poll(2) always reports it. */
void rpoll__connect_error(void **state)
{
	struct sockaddr_storage addr;
	int fd = fx_rsocket(AF_INET, SOCK_STREAM);
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };

	fx_rs_addr(AF_INET, fx_free_port(), &addr);
	assert_int_equal(rconnect(fd, (struct sockaddr *)&addr, fx_rs_len(&addr)), -1);
	assert_int_equal(rpoll(&pfd, 1, 0), 1);
	assert_int_equal(pfd.revents, POLLIN | POLLOUT | POLLERR);
	pfd.events = 0;
	assert_int_equal(rpoll(&pfd, 1, 100), 1);
	assert_int_equal(pfd.revents, POLLERR);
	rclose(fd);
}

/* A stream rsocket neither connected nor listening shows nothing, fresh
 * or bound, until the timeout; a closed fd in the same call is POLLNVAL,
 * as poll(2) says. */
void rpoll__unconnected_and_closed_fd(void **state)
{
	struct sockaddr_storage addr;
	struct pollfd fds[3];
	int p[2];

	fds[0] = (struct pollfd){ .fd = fx_rsocket(AF_INET, SOCK_STREAM), .events = POLLIN | POLLOUT };
	fds[1] = (struct pollfd){ .fd = fx_rsocket(AF_INET, SOCK_STREAM), .events = POLLIN | POLLOUT };
	fx_rs_addr(AF_INET, 0, &addr);
	FX_RS_OK(rbind(fds[1].fd, (struct sockaddr *)&addr, fx_rs_len(&addr)));
	assert_int_equal(rpoll(fds, 2, 0), 0);
	assert_int_equal(rpoll(fds, 2, 50), 0);
	assert_int_equal(fds[0].revents | fds[1].revents, 0);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	close(p[1]);
	fds[2] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	assert_int_equal(rpoll(fds, 3, 0), 1);
	assert_int_equal(fds[2].revents, POLLNVAL);
	rclose(fds[0].fd);
	rclose(fds[1].fd);
}

/* select(2): 0 at the timeout with the sets cleared; the write set
 * for a connection; after the peer closes, the read set (POLLHUP reads
 * as readable) and the except set, each counted. */
void rselect__sets_and_timeout(void **state)
{
	struct timeval tv = { .tv_usec = 50000 };
	struct fx_rs_pair pair;
	fd_set rd, wr, ex;
	int nfds;

	fx_rs_connect(AF_INET, &pair);
	nfds = (pair.server > pair.client ? pair.server : pair.client) + 1;
	FD_ZERO(&rd);
	FD_SET(pair.server, &rd);
	assert_int_equal(rselect(nfds, &rd, NULL, NULL, &tv), 0);
	assert_false(FD_ISSET(pair.server, &rd));
	FD_ZERO(&wr);
	FD_SET(pair.client, &wr);
	tv = (struct timeval){ .tv_sec = 5 };
	assert_int_equal(rselect(nfds, NULL, &wr, NULL, &tv), 1);
	assert_true(FD_ISSET(pair.client, &wr));
	assert_int_equal(rclose(pair.client), 0);
	pair.client = -1;
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLHUP);
	FD_ZERO(&rd);
	FD_ZERO(&ex);
	FD_SET(pair.server, &rd);
	FD_SET(pair.server, &ex);
	tv = (struct timeval){ 0 };
	assert_int_equal(rselect(nfds, &rd, NULL, &ex, &tv), 2);
	assert_true(FD_ISSET(pair.server, &rd));
	assert_true(FD_ISSET(pair.server, &ex));
	fx_rs_close(&pair);
}

/* An except set alone: the socket whose peer has rclosed is in it (its
 * POLLHUP is neither POLLIN nor POLLOUT), counted once. */
void rselect__except_set_alone(void **state)
{
	struct timeval tv = { 0 };
	struct fx_rs_pair pair;
	fd_set ex;
	int nfds;

	fx_rs_connect(AF_INET, &pair);
	nfds = (pair.server > pair.client ? pair.server : pair.client) + 1;
	FD_ZERO(&ex);
	FD_SET(pair.server, &ex);
	assert_int_equal(rselect(nfds, NULL, NULL, &ex, &tv), 0);
	assert_false(FD_ISSET(pair.server, &ex));
	assert_int_equal(rclose(pair.client), 0);
	pair.client = -1;
	assert_true(fx_rs_poll(pair.server, POLLIN, FX_RS_WAIT_MS) & POLLHUP);
	FD_ZERO(&ex);
	FD_SET(pair.server, &ex);
	assert_int_equal(rselect(nfds, NULL, NULL, &ex, &tv), 1);
	assert_true(FD_ISSET(pair.server, &ex));
	fx_rs_close(&pair);
}

/* select(2) says EINVAL for a negative nfds; upstream's rselect
 * allocates that many pollfds first (rs_select_to_poll), and fails with
 * ENOMEM. (Skipped on a real device under ASan, whose calloc aborts.) */
void rselect__negative_nfds(void **state)
{
	struct timeval tv = { 0 };
	fd_set rd;

	fx_require_backend();
	if (RC_UNDER_ASAN && !rc_backend_is_mock())
		RC_SKIP("config: ASan's calloc aborts on the size upstream asks for");
	FD_ZERO(&rd);
	errno = 0;
	assert_int_equal(rselect(-1, &rd, NULL, NULL, &tv), -1);
	RC_ASSERT_ERRNO("rselect", errno, ENOMEM);
	rc_note_documented(false);
}

/* repoll_* (rdma-core v65): epoll's calls over rsockets; errors come
 * back as errno values, not -1. */
void repoll_wait__events(void **state)
{
	struct fx_repoll_api ep = fx_repoll_api();
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 }, out[4];
	struct fx_rs_pair pair;
	int epfd;

	fx_rs_connect(AF_INET, &pair);
	epfd = ep.create(0);
	assert_true(epfd >= 0);
	assert_int_equal(ep.ctl(epfd, EPOLL_CTL_ADD, pair.server, &ev), 0);
	RC_ASSERT_ERRNO("repoll_ctl", ep.ctl(epfd, EPOLL_CTL_ADD, pair.server, &ev), EEXIST);
	assert_int_equal(ep.wait(epfd, out, 4, 0), 0);
	assert_int_equal(rsend(pair.client, "x", 1, 0), 1);
	assert_int_equal(ep.wait(epfd, out, 4, FX_RS_WAIT_MS), 1);
	assert_true(out[0].events & EPOLLIN);
	assert_int_equal(out[0].data.u64, 42);
	assert_int_equal(ep.ctl(epfd, EPOLL_CTL_DEL, pair.server, NULL), 0);
	RC_ASSERT_ERRNO("repoll_ctl", ep.ctl(epfd, EPOLL_CTL_DEL, pair.server, NULL), ENOENT);
	assert_int_equal(rclose(epfd), 0);
	fx_rs_close(&pair);
}

/* repoll_ctl's errors, returned (not in errno) as the source has them: a
 * negative fd EBADF; the instance as its own member, an epfd that is no
 * instance, an op that is none EINVAL; EPOLL_CTL_MOD of an fd not in the
 * set ENOENT. rclose of an instance with an fd in it: EBUSY, and it stays
 * usable; emptied, it closes (0). */
void repoll_ctl__errors(void **state)
{
	struct fx_repoll_api ep = fx_repoll_api();
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 }, out[1];
	int epfd, p[2];

	assert_int_equal(pipe(p), 0);
	epfd = ep.create(0);
	assert_true(epfd >= 0);
	RC_ASSERT_ERRNO("repoll_ctl", ep.ctl(epfd, EPOLL_CTL_ADD, -1, &ev), EBADF);
	RC_ASSERT_ERRNO("repoll_ctl", ep.ctl(epfd, EPOLL_CTL_ADD, epfd, &ev), EINVAL);
	RC_ASSERT_ERRNO("repoll_ctl", ep.ctl(p[1], EPOLL_CTL_ADD, p[0], &ev), EINVAL);
	RC_ASSERT_ERRNO("repoll_ctl", ep.ctl(epfd, 99, p[0], &ev), EINVAL);
	RC_ASSERT_ERRNO("repoll_ctl", ep.ctl(epfd, EPOLL_CTL_MOD, p[0], &ev), ENOENT);
	assert_int_equal(ep.ctl(epfd, EPOLL_CTL_ADD, p[0], &ev), 0);
	RC_ASSERT_ERRNO("rclose", rclose(epfd), EBUSY);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(ep.wait(epfd, out, 1, 0), 1);
	assert_int_equal(out[0].data.u64, 7);
	assert_int_equal(ep.ctl(epfd, EPOLL_CTL_DEL, p[0], NULL), 0);
	assert_int_equal(rclose(epfd), 0);
	close(p[0]);
	close(p[1]);
}

/* A set of nine fds (more than one allocation's worth in the mock): one
 * repoll_wait reports at most maxevents of the ready ones, each with its
 * data; EPOLL_CTL_MOD replaces an fd's data; with nothing ready a timeout
 * returns 0; an epfd that is no instance EINVAL (read from the source). */
void repoll_wait__maxevents_and_mod(void **state)
{
	struct fx_repoll_api ep = fx_repoll_api();
	struct epoll_event ev = { .events = EPOLLIN }, out[4];
	int epfd, p[9][2];

	epfd = ep.create(0);
	assert_true(epfd >= 0);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(pipe(p[i]), 0);
		ev.data.u64 = 100 + (uint64_t)i;
		assert_int_equal(ep.ctl(epfd, EPOLL_CTL_ADD, p[i][0], &ev), 0);
	}
	assert_int_equal(ep.wait(epfd, out, 4, 50), 0);
	assert_int_equal(write(p[3][1], "x", 1), 1);
	assert_int_equal(write(p[8][1], "x", 1), 1);
	assert_int_equal(ep.wait(epfd, out, 1, 0), 1);
	assert_true(out[0].data.u64 == 103 || out[0].data.u64 == 108);
	assert_true(out[0].events & EPOLLIN);
	ev.data.u64 = 8;
	assert_int_equal(ep.ctl(epfd, EPOLL_CTL_MOD, p[8][0], &ev), 0);
	assert_int_equal(ep.wait(epfd, out, 4, 0), 2);
	assert_true((out[0].data.u64 == 103 && out[1].data.u64 == 8) ||
		    (out[0].data.u64 == 8 && out[1].data.u64 == 103));
	RC_ASSERT_ERRNO("repoll_wait", ep.wait(p[0][0], out, 4, 0), EINVAL);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(ep.ctl(epfd, EPOLL_CTL_DEL, p[i][0], NULL), 0);
		close(p[i][0]);
		close(p[i][1]);
	}
	assert_int_equal(rclose(epfd), 0);
}
