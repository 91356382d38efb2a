/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* riomap, riounmap, riowrite: direct placement into a peer's buffer.
 *
 * A socket takes as many mappings from its peer as its RDMA_IOMAPSIZE
 * says (0 by default, so none), and tells the peer so when connecting.
 * riomap(PROT_WRITE) registers the buffer for remote writes and queues an
 * IOMAP message (index, offset, address, length, rkey) that goes ahead of
 * the next data sent; the peer keeps it in its table. riowrite is an RDMA
 * WRITE into the mapping that covers the offset: it consumes no receive
 * at the peer, which is not told of it; data sent after it arrives after
 * it (RC keeps order). Upstream does not tell the peer of riounmap, and
 * neither does the mock. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rsocket.h"

#define LIB "rdmacm"

/* ---------------------------------------------------------------- the table message */

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* index (32), offset (64), address (64), length (32), rkey (32) */
static void format_iomap(const struct rs_iomap_local *m, uint8_t out[RS_IOMAP_MSG_LEN])
{
	uint8_t head[8];

	put64(head, (uint64_t)(uint32_t)m->index << 32);
	memcpy(out, head, 4);
	put64(out + 4, m->offset);
	put64(out + 12, (uintptr_t)m->mr->addr);
	put64(out + 20, (uint64_t)m->mr->length << 32 | m->mr->rkey);
}

void rs_save_iomap(struct rsocket *rs, const void *msg, uint32_t len)
{
	const uint8_t *p = msg;
	uint32_t index;
	uint64_t tail;

	if (len < RS_IOMAP_MSG_LEN)
		return;
	index = (uint32_t)(get64(p) >> 32);
	if (index >= rs->iomap_size)
		return;
	tail = get64(p + 20);
	rs->remote[index] = (struct rs_iomap_remote){
		.offset = get64(p + 4),
		.addr = get64(p + 12),
		.len = (uint32_t)(tail >> 32),
		.rkey = (uint32_t)tail,
	};
}

int rs_send_iomaps(struct rsocket *rs, int flags)
{
	uint8_t msg[RS_IOMAP_MSG_LEN];
	int ret = 0;

	for (int i = 0; i < rs->niomaps && !ret; i++) {
		struct rs_iomap_local *m = &rs->iomaps[i];

		if (m->index < 0 || m->published)
			continue;
		if ((ret = rs_wait_send(rs, flags)))
			break;
		format_iomap(m, msg);
		ret = rs_post_msg(rs, RS_OP_IOMAP, msg, sizeof msg);
		m->published = !ret;
	}
	rs->iomap_pending = false;
	for (int i = 0; i < rs->niomaps; i++)
		rs->iomap_pending |= rs->iomaps[i].index >= 0 && !rs->iomaps[i].published;
	return ret;
}

void rs_free_iomaps(struct rsocket *rs)
{
	for (int i = 0; i < rs->niomaps; i++)
		ibv_dereg_mr(rs->iomaps[i].mr);
	free(rs->iomaps);
	rs->iomaps = NULL;
	rs->niomaps = 0;
}

/* ---------------------------------------------------------------- the calls */

static int free_index(const struct rsocket *rs)
{
	for (uint32_t index = 0; index < rs->peer_iomaps; index++) {
		bool used = false;

		for (int i = 0; i < rs->niomaps && !used; i++)
			used = rs->iomaps[i].index == (int)index;
		if (!used)
			return (int)index;
	}
	return -1;
}

static off_t iomap_locked(struct rsocket *rs, void *buf, size_t len, int prot, off_t offset)
{
	int access = IBV_ACCESS_LOCAL_WRITE;
	struct rs_iomap_local *grown, m = { .index = -1 };

	if (!rs->cm_id->pd || (prot & ~PROT_WRITE))
		return mock_errno(EINVAL);
	if (prot & PROT_WRITE) {
		m.index = free_index(rs);
		if (m.index < 0)
			return mock_errno(ENOMEM);
		access |= IBV_ACCESS_REMOTE_WRITE;
	}
	grown = realloc(rs->iomaps, (size_t)(rs->niomaps + 1) * sizeof *grown);
	if (!grown)
		return mock_errno(ENOMEM);
	rs->iomaps = grown;
	m.mr = ibv_reg_mr(rs->cm_id->pd, buf, len, access);
	if (!m.mr)
		return -1;
	m.offset = offset == -1 ? (uint64_t)(uintptr_t)buf : (uint64_t)offset;
	rs->iomaps[rs->niomaps++] = m;
	rs->iomap_pending |= m.index >= 0;
	return (off_t)m.offset;
}

MOCK_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct rsocket *rs;
	off_t ret;

	FAULT_MINUS1(LIB, "riomap");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	if (rs->type != SOCK_STREAM)
		return mock_errno(EINVAL);
	pthread_mutex_lock(&rs->lock);
	ret = iomap_locked(rs, buf, len, prot, offset);
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

MOCK_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	struct rsocket *rs;
	int ret = mock_errno(EINVAL);

	FAULT_MINUS1(LIB, "riounmap");
	rs = rs_lookup(socket);
	if (!rs)
		return mock_errno(EBADF);
	pthread_mutex_lock(&rs->lock);
	for (int i = 0; i < rs->niomaps; i++) {
		struct rs_iomap_local *m = &rs->iomaps[i];

		if (m->mr->addr != buf || m->mr->length != len)
			continue;
		ibv_dereg_mr(m->mr);
		rs->iomaps[i] = rs->iomaps[--rs->niomaps];
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

static const struct rs_iomap_remote *find_remote(const struct rsocket *rs, uint64_t offset)
{
	for (uint32_t i = 0; i < rs->iomap_size; i++) {
		const struct rs_iomap_remote *r = &rs->remote[i];

		if (r->len && offset >= r->offset && offset < r->offset + r->len)
			return r;
	}
	return NULL;
}

/* An RDMA WRITE needs no slot at the peer: a send queue entry beside the
 * one kept for control, and send buffer space. */
static bool can_write_or_closed(struct rsocket *rs)
{
	uint32_t low = rs->sbuf_size < RS_SNDLOWAT ? rs->sbuf_size : RS_SNDLOWAT;

	return !rs->writable || (rs->sqe_avail >= 2 && rs->sfree >= low);
}

/* What riowrite returns: the bytes written, 0 when no mapping covers the
 * offset (as upstream), -1 (as size_t) and errno when nothing went. */
static size_t iowrite_locked(struct rsocket *rs, const uint8_t *buf, size_t count,
			     uint64_t offset, int flags)
{
	size_t left = count;
	int ret = 0;

	/* Before a connection the peer has published nothing: no mapping
	 * covers the offset, and upstream's riowrite writes nothing (0). */
	if (rs->phase < RS_CONNECTED || rs->phase == RS_CONNECT_ERROR)
		return 0;
	if (rs->iomap_pending)
		ret = rs_send_iomaps(rs, flags);
	while (left && !ret) {
		const struct rs_iomap_remote *r = find_remote(rs, offset);
		uint64_t room;
		uint32_t n;

		if (!r)
			break;
		if (!rs->writable || !can_write_or_closed(rs)) {
			ret = rs_wait(rs, rs_nonblocking(rs, flags), can_write_or_closed);
			if (!ret && !rs->writable)
				ret = mock_errno(ECONNRESET);
			if (ret)
				break;
		}
		room = r->offset + r->len - offset;
		n = rs_chunk(rs, left < room ? left : room, UINT32_MAX);
		ret = rs_post_write(rs, buf, n, r->addr + (offset - r->offset), r->rkey);
		if (!ret) {
			buf += n;
			offset += n;
			left -= n;
		}
	}
	return ret && left == count ? (size_t)-1 : count - left;
}

MOCK_EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	struct rsocket *rs;
	size_t ret;

	FAULT_MINUS1(LIB, "riowrite");
	rs = rs_lookup(socket);
	if (!rs)
		return (size_t)mock_errno(EBADF);
	if (rs->type != SOCK_STREAM)
		return 0; /* upstream: a datagram socket has no mappings */
	pthread_mutex_lock(&rs->lock);
	ret = iowrite_locked(rs, buf, count, (uint64_t)offset, flags);
	pthread_mutex_unlock(&rs->lock);
	return ret;
}
