/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: how real rdma-core reports a system call that fails under
 * it, as libfiu's POSIX preload (fiu-run -x) makes one fail: the open of
 * the RDMA CM's device, a write to its file, an mmap of a provider's queue.
 * Real-backend clauses: each test runs its call in a child of the runner
 * started with fiu_posix_preload.so (`--posix-probe NAME`), which turns
 * the point on only around the call. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <fiu-control.h>
#include <fiu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fixtures.h"
#include "qp.h"

#define POSIX_PRELOAD "/usr/lib/fiu/fiu_posix_preload.so"

static void on(const char *point, int err)
{
	fiu_enable(point, 1, (void *)(intptr_t)err, 0);
}

/* Each probe prints one line: what the call returned and its errno. */
static int probe_channel_open(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel(); /* librdmacm's setup, before */
	struct ibv_context **devs = rdma_get_devices(NULL);

	if (!ch) {
		printf("setup: rdma_create_event_channel errno %d\n", errno);
		return 3;
	}
	rdma_destroy_event_channel(ch);
	on("posix/io/oc/open", EACCES);
	errno = 0;
	ch = rdma_create_event_channel();
	fiu_disable("posix/io/oc/open");
	printf("rdma_create_event_channel %s errno %d\n", ch ? "ok" : "NULL", ch ? 0 : errno);
	if (ch)
		rdma_destroy_event_channel(ch);
	rdma_free_devices(devs);
	return 0;
}

/* A CM call while every write fails: rdma_create_id, or rdma_get_cm_event
 * (get_event). */
static int probe_cm_write(bool get_event)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	const char *call = get_event ? "rdma_get_cm_event" : "rdma_create_id";
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev;
	int ret;

	if (!ch) {
		printf("setup: rdma_create_event_channel errno %d\n", errno);
		return 3;
	}
	on("posix/io/rw/write", EIO);
	errno = 0;
	ret = get_event ? rdma_get_cm_event(ch, &ev) : rdma_create_id(ch, &id, NULL, RDMA_PS_TCP);
	fiu_disable("posix/io/rw/write");
	printf("%s %d errno %d\n", call, ret, ret ? errno : 0);
	if (!ret && get_event)
		rdma_ack_cm_event(ev);
	else if (!ret)
		rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

static struct ibv_context *first_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	const char *want = getenv("RDMACHECK_DEVICE");
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i] && !ctx; i++)
		if (!want || !strcmp(want, ibv_get_device_name(list[i])))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static int probe_device_open(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	const char *want = getenv("RDMACHECK_DEVICE");
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!want || !strcmp(want, ibv_get_device_name(list[i])))
			break;
	if (!list || !list[i]) {
		printf("setup: no device\n");
		return 3;
	}
	on("posix/io/oc/open", EACCES);
	errno = 0;
	ctx = ibv_open_device(list[i]);
	fiu_disable("posix/io/oc/open");
	printf("ibv_open_device %s errno %d\n", ctx ? "ok" : "NULL", ctx ? 0 : errno);
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

static int probe_verbs(const char *point, int err)
{
	struct ibv_context *ctx = first_device();
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	if (!ctx) {
		printf("setup: no device\n");
		return 3;
	}
	on(point, err);
	errno = 0;
	pd = ibv_alloc_pd(ctx);
	printf("ibv_alloc_pd %s errno %d\n", pd ? "ok" : "NULL", pd ? 0 : errno);
	errno = 0;
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	printf("ibv_create_cq %s errno %d\n", cq ? "ok" : "NULL", cq ? 0 : errno);
	fiu_disable(point);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

/* The runner's --posix-probe NAME, in a child that has the preload. */
int rc_posix_probe(const char *name)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (fiu_init(0)) {
		printf("fiu_init failed\n");
		return 1;
	}
	if (!strcmp(name, "channel-open"))
		return probe_channel_open();
	if (!strcmp(name, "id-write"))
		return probe_cm_write(false);
	if (!strcmp(name, "event-write"))
		return probe_cm_write(true);
	if (!strcmp(name, "device-open"))
		return probe_device_open();
	if (!strcmp(name, "verbs-write"))
		return probe_verbs("posix/io/rw/write", EIO);
	if (!strcmp(name, "verbs-mmap"))
		return probe_verbs("posix/mm/mmap", ENOMEM);
	printf("unknown probe %s\n", name);
	return 2;
}

/* Run a probe; its first line of output in line. */
static void run_probe(const char *name, char *line, size_t len)
{
	char self[4096];
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (rc_backend_is_mock())
		RC_SKIP("real-only: how real rdma-core reports a failed system call");
	if (RC_UNDER_ASAN)
		RC_SKIP("a sanitizer build: the POSIX preload wraps malloc, which the sanitizer's runtime must own");
	if (access(POSIX_PRELOAD, R_OK))
		RC_SKIP("capability: posix-preload (%s: %s)", POSIX_PRELOAD, strerror(errno));
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0 || pipe(fds))
		fail_msg("readlink or pipe: %s", strerror(errno));
	self[n] = '\0';
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		setenv("LD_PRELOAD", POSIX_PRELOAD, 1);
		execl(self, self, "--posix-probe", name, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (got < (ssize_t)len - 1 && (n = read(fds[0], line + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	line[got] = '\0';
	waitpid(pid, &status, 0);
	print_message("probe %s: %s", name, line);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		RC_SKIP("no RDMA device to probe (%.*s)", (int)strcspn(line, "\n"), line);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("probe %s ended with status 0x%x: %s", name, status, line);
}

/* The probe's line: "CALL RESULT errno N" for call; its errno in *err. */
static bool probe_result(const char *line, const char *call, const char *result, int *err)
{
	char want[96];
	const char *at;

	snprintf(want, sizeof want, "%s %s errno ", call, result);
	at = strstr(line, want);
	if (!at)
		return false;
	*err = atoi(at + strlen(want));
	return true;
}

/* open_cdev: the open of the device's file failed; then, on a machine
 * whose udev keeps /dev/char/MAJOR:MINOR, it tries that too, for up to 5 s
 * (open_cdev_robust), and the errno is the open's; without /dev/char (the
 * guests), inotify on it fails with ENOENT at once. */
static int open_cdev_errno(int open_err)
{
	return access("/dev/char", F_OK) ? ENOENT : open_err;
}

/* Run a probe whose call must have failed (its result: "NULL", "-1") with
 * errno want, one its table allows. */
static void expect_failure(const char *probe, const char *call, const char *result, int want)
{
	char line[512];
	int err;

	run_probe(probe, line, sizeof line);
	if (!probe_result(line, call, result, &err))
		fail_msg("%s did not fail: %s", call, line);
	RC_ASSERT_ERRNO(call, err, want);
}

void rdma_create_event_channel__posix_open_fails(void **state)
{
	expect_failure("channel-open", "rdma_create_event_channel", "NULL", open_cdev_errno(EACCES));
}

void ibv_open_device__posix_open_fails(void **state)
{
	expect_failure("device-open", "ibv_open_device", "NULL", open_cdev_errno(EACCES));
}

/* A command written to the CM's file that the write refuses: the call
 * fails with the write's errno. */
void rdma_create_id__posix_write_fails(void **state)
{
	expect_failure("id-write", "rdma_create_id", "-1", EIO);
}

void rdma_get_cm_event__posix_write_fails(void **state)
{
	expect_failure("event-write", "rdma_get_cm_event", "-1", EIO);
}

/* libibverbs sends its commands by ioctl, which the POSIX preload does not
 * reach: with every write failing, a PD and a CQ are still made. */
void ibv_alloc_pd__posix_write_fails(void **state)
{
	char line[512];
	int err;

	run_probe("verbs-write", line, sizeof line);
	if (!probe_result(line, "ibv_alloc_pd", "ok", &err) || !probe_result(line, "ibv_create_cq", "ok", &err))
		fail_msg("a verbs command failed where writes fail: %s", line);
}

/* A provider that maps its queues (rxe) fails to make a CQ when the mmap
 * fails: NULL and the mmap's ENOMEM. The PD needs no mapping. */
void ibv_create_cq__posix_mmap_fails(void **state)
{
	char line[512];
	int err;

	run_probe("verbs-mmap", line, sizeof line);
	if (!probe_result(line, "ibv_alloc_pd", "ok", &err))
		fail_msg("ibv_alloc_pd failed where only mmap fails: %s", line);
	if (!probe_result(line, "ibv_create_cq", "NULL", &err))
		fail_msg("ibv_create_cq did not fail: %s", line);
	RC_ASSERT_ERRNO("ibv_create_cq", err, ENOMEM);
}
