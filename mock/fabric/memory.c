/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The HCA's DMA: copies into and out of the memory of whichever process
 * registered it. In this process a copy is a memmove; in another it is
 * process_vm_writev/readv, which the kernel allows between processes of
 * one user (with Yama's ptrace_scope 1 only towards a process that said
 * so: each process of a shared fabric does, prctl(PR_SET_PTRACER_ANY)). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arena.h"
#include "fabric.h"
#include "control/mock.h"

void fab_mem_allow(void)
{
	/* Without Yama this fails harmlessly (EINVAL). */
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

static int say_once(pid_t pid, int err)
{
	static bool said;

	if (err == EPERM && !__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		mock_log("cannot reach the memory of process %d (process_vm_writev: %s): RDMA "
			 "between processes needs ptrace access between them (kernel.yama.ptrace_scope "
			 "0 or 1); RDMAMOCK_FABRIC=private keeps a program in one process",
			 (int)pid, strerror(err));
	return -err;
}

int fab_mem_write(pid_t pid, uint64_t addr, const void *src, size_t len)
{
	if (!len)
		return 0;
	if (pid == mock_pid()) {
		/* An HCA places a write in address order: a reader polling the
		 * last byte (ib_write_lat, riostream) finds the rest in place,
		 * where memmove may store the first bytes last. (The kernel's
		 * copy into another process goes forward.) */
		uint8_t *dst = (uint8_t *)(uintptr_t)addr, last = ((const uint8_t *)src)[len - 1];

		memmove(dst, src, len - 1);
		__atomic_store_n(dst + len - 1, last, __ATOMIC_RELEASE);
		return 0;
	}
	return fab_mem_write_mapped(pid, addr, src, len);
}

int fab_mem_write_mapped(pid_t pid, uint64_t addr, const void *src, size_t len)
{
	size_t done = 0;

	while (done < len) {
		struct iovec local = { (char *)src + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

		if (n <= 0)
			return say_once(pid, n < 0 ? errno : EFAULT);
		done += (size_t)n;
	}
	return 0;
}

int fab_mem_read(pid_t pid, uint64_t addr, void *dst, size_t len)
{
	size_t done = 0;

	if (!len)
		return 0;
	if (pid == mock_pid()) {
		memmove(dst, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	while (done < len) {
		struct iovec local = { (char *)dst + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

		if (n <= 0)
			return say_once(pid, n < 0 ? errno : EFAULT);
		done += (size_t)n;
	}
	return 0;
}
