/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Two ranks: a ping-pong of MPI_Send/MPI_Recv at a few sizes (pml), then
 * MPI_Put and MPI_Get on a window under fence and under lock (osc). Each
 * check prints one line; any mismatch makes the exit status non-zero.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, failed;

static void check(int ok, const char *what, size_t len)
{
	printf("rank %d: %-28s %8zu bytes: %s\n", rank, what, len, ok ? "ok" : "MISMATCH");
	fflush(stdout);
	if (!ok)
		failed = 1;
}

/* The byte i of a buffer filled by rank r for round k. */
static unsigned char pattern(size_t i, int r, int k)
{
	return (unsigned char)(i * 31 + r * 7 + k * 13 + 1);
}

static int verify(const unsigned char *buf, size_t len, int r, int k)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pattern(i, r, k))
			return 0;
	return 1;
}

static void fill(unsigned char *buf, size_t len, int r, int k)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(i, r, k);
}

static void two_sided(void)
{
	static const size_t sizes[] = { 1, 64, 4096, 65536, 1 << 20 };
	int peer = 1 - rank;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		unsigned char *buf = malloc(len);

		if (rank == 0) {
			fill(buf, len, 0, (int)s);
			MPI_Send(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD);
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(verify(buf, len, 1, (int)s), "send/recv pong", len);
		} else {
			MPI_Recv(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(verify(buf, len, 0, (int)s), "send/recv ping", len);
			fill(buf, len, 1, (int)s);
			MPI_Send(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD);
		}
		free(buf);
	}
}

/* Each rank puts its pattern into the other's window, then gets it back. */
static void one_sided(int use_lock)
{
	const size_t len = 256 * 1024;
	int peer = 1 - rank, k = use_lock ? 100 : 200;
	unsigned char *win_buf, *src = malloc(len), *dst = malloc(len);
	MPI_Win win;

	MPI_Win_allocate((MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
	memset(win_buf, 0, len);
	fill(src, len, rank, k);
	MPI_Barrier(MPI_COMM_WORLD);

	if (use_lock) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
		MPI_Put(src, (int)len, MPI_BYTE, peer, 0, (int)len, MPI_BYTE, win);
		MPI_Win_unlock(peer, win);
		MPI_Barrier(MPI_COMM_WORLD);
		/* Our own window, read under a lock of our own: the peer's put. */
		MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
		check(verify(win_buf, len, peer, k), "put (lock) landed", len);
		MPI_Win_unlock(rank, win);
		MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
		MPI_Get(dst, (int)len, MPI_BYTE, peer, 0, (int)len, MPI_BYTE, win);
		MPI_Win_unlock(peer, win);
		check(verify(dst, len, rank, k), "get (lock) read back", len);
	} else {
		MPI_Win_fence(0, win);
		MPI_Put(src, (int)len, MPI_BYTE, peer, 0, (int)len, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		check(verify(win_buf, len, peer, k), "put (fence) landed", len);
		MPI_Get(dst, (int)len, MPI_BYTE, peer, 0, (int)len, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		check(verify(dst, len, rank, k), "get (fence) read back", len);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	free(src);
	free(dst);
}

int main(int argc, char **argv)
{
	int size, any_failed;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_pingpong: run with 2 ranks (got %d)\n", size);
		MPI_Finalize();
		return 2;
	}
	two_sided();
	one_sided(0);
	one_sided(1);
	MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_pingpong: %s\n", any_failed ? "FAILED" : "all checks passed");
	MPI_Finalize();
	return any_failed;
}
