/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fabric's arena: where every object of the mock lives.
 *
 * Why one arena at one address. The mock plays the kernel and the HCA for
 * every process on a fabric: a SEND from one process consumes a receive
 * another process posted and completes on that process's CQ; a connect
 * request reaches a listener in another process. Real hardware reaches the
 * other side's queues without that process's help, so the mock does too:
 * every object (CM ids, QPs, CQs, MRs, queued events, ...) lives in one
 * shared mapping that each process maps at the same address. A pointer then
 * means the same object in every process, the code that runs a fabric in
 * one process runs it across many unchanged, and a request costs what it
 * costs in one process (a lock and a copy), not a round trip through a
 * broker: on a 2-core VM a socket round trip between processes costs about
 * 50 µs, a futex-guarded update of shared memory well under one. The data
 * itself stays where the program put it; the HCA's DMA becomes
 * process_vm_writev/readv into the other process (memory.c).
 *
 * A private fabric (RDMAMOCK_FABRIC=private) is the same arena as an
 * anonymous mapping of one process: no file, no other members.
 *
 * The arena's first pages hold struct fab_shared: the allocator, the
 * members (one slot per process, so that a dead process's objects can be
 * reaped), the fabric's state and the libraries' roots. Memory is handed
 * out in power-of-two blocks, each tagged with its owner, kept on its
 * owner's list so that what a dead process leaves is freed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "internal.h"
#include "control/mock.h"

#define FAB_MAGIC 0x6b636f6d616d6472ull /* "rdmamock" */
/* Bumped whenever struct fab_shared or anything in the arena changes
 * shape: a process never joins a fabric of another layout. */
#define FAB_LAYOUT 5
#define FAB_ARENA_SIZE (1ull << 30)
/* Where a shared fabric is mapped in every process: high in the range
 * where a process maps libraries, and where ASan and TSan allow an
 * application mapping, far below where mmap allocates from. */
#define FAB_SHARED_BASE 0x7e8100000000ull

#define BLK_LIVE 0x626c6b21u /* "blk!" */
#define BLK_FREE 0x66726565u /* "free" */
#define FAB_CLASSES 26       /* blocks of 64 B << class */
#define BLK_HEADER 32

struct fab_blk {
	uint32_t magic;
	int16_t owner;
	uint8_t cls;
	uint8_t unused;
	struct fab_blk *prev, *next; /* the owner's list, or a free list (next) */
	uint64_t pad;
};
_Static_assert(sizeof(struct fab_blk) == BLK_HEADER, "block header size");

struct fab_member {
	pid_t pid;            /* 0: a free slot */
	uint64_t started;     /* the process's start time: a pid reused is not it */
	uint32_t gen;         /* bumped each time the slot is taken */
	bool leaving;         /* being reaped: atomics, read without alloc_lock */
	bool exited;          /* ran its exit handler: the file is not kept for it */
	struct fab_blk *blocks;
	struct fab_bell watch; /* its watcher's doorbell (core.c) */
	/* Its locks taken (clock.c): a cache line of its own, which only it
	 * writes, so that counting costs no line passed between processes. */
	uint64_t activity __attribute__((aligned(64)));
};

struct fab_shared {
	uint64_t magic;
	uint32_t layout;
	uint32_t header_size;
	uint64_t base, size;
	uint64_t token;        /* random: this fabric's doorbells carry it */
	char name[64];
	pthread_mutex_t alloc_lock;
	uint64_t top;          /* offset of the first byte never handed out */
	struct fab_blk *free[FAB_CLASSES];
	pthread_mutex_t verbs_lock;
	struct fab_member members[FAB_MEMBERS_MAX];
	void *roots[FAB_ROOTS];
	struct fabric fabric;
};

/* ---------------------------------------------------------------- this process */

static struct fab_shared *sh;
struct fabric *fab_fabric;
static int self = -1;          /* our member slot */
/* Read by the watcher thread while the main thread joins or leaves. */
#define SELF() __atomic_load_n(&self, __ATOMIC_ACQUIRE)
static pid_t self_pid;
static bool shared_mode;
static char fabric_name[64];
static int lock_fd = -1;       /* the fabric's lifecycle lock file, shared mode */
static char file_path[4096], lock_path[4096];
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;
static bool ready;                  /* mapped and joined */
static __thread bool initializing;  /* this thread is mapping it */
static void (*reaper)(int owner);
static void (*leaver)(int member);

static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "rdmamock: %s\n", line);
	abort();
}

const char *fab_proc_stat(const char *path, char *buf, size_t size)
{
	ssize_t n;
	char *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
	return p && p[1] == ' ' ? p + 1 : NULL;
}

/* The start time of a process (field 22 of /proc/PID/stat), 0 if it is
 * gone or has exited (a zombie). */
static uint64_t start_time_of(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long started = 0;
	const char *p;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	p = fab_proc_stat(path, buf, sizeof buf);
	if (!p || p[1] == 'Z' || p[1] == 'X')
		return 0;
	p--; /* at the ')': the fields are counted from there */
	/* After ")": state (field 3) ... starttime (field 22). */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &started);
	return started;
}

/* A member slot's pid: written by its joiner and by a reaper (under
 * alloc_lock), read without the lock as well (a process leaving at exit
 * while its watcher thread reaps), so always whole. */
static pid_t member_pid(const struct fab_member *m)
{
	return __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE);
}

static bool member_alive(const struct fab_member *m)
{
	pid_t pid = member_pid(m);

	return pid && (pid == self_pid || start_time_of(pid) == m->started);
}

/* ---------------------------------------------------------------- locks */

void fab_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

void fab_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}


/* ThreadSanitizer sees one process. On a fabric shared with others, the
 * fabric's locks also order this process's threads through what another
 * process did in between (a block one thread freed, another process
 * reused, a third thread reads), which TSan cannot see: there, taking any
 * fabric lock acquires, and releasing one releases, one clock they share.
 * A private fabric keeps TSan's full precision. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
static char other_processes;
#define SEEN_ACROSS_ACQUIRE() do { if (shared_mode) __tsan_acquire(&other_processes); } while (0)
#define SEEN_ACROSS_RELEASE() do { if (shared_mode) __tsan_release(&other_processes); } while (0)
#else
#define SEEN_ACROSS_ACQUIRE() ((void)0)
#define SEEN_ACROSS_RELEASE() ((void)0)
#endif

/* The fabric's locks are held for a few hundred nanoseconds at a time, by
 * threads of several processes: spin before sleeping in the kernel, whose
 * wake-up costs more than the wait (a ping-pong between two processes
 * waited 10 µs a round on a sleeping lock). The spin is bounded in time,
 * not in tries: a rarer, longer hold (a process's first address
 * resolution, some 100 µs) must not put its waiter to sleep either, for
 * the scheduler wakes a sleeper on its waker's busy CPU and can leave it
 * there for milliseconds while the other CPU idles. That turned perftest's
 * rdma_bind_addr, due 2 ms before its client's REQ, into a late one, and
 * 10 of 20 ib_write_bw -R pairs into REJECTED (0 of 50 with this bound). */
#define LOCK_SPIN_NS 100000

void fab_mutex_lock(pthread_mutex_t *m)
{
	int err = pthread_mutex_trylock(m);
	struct timespec t0, t;

	if (err == EBUSY)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 1; err == EBUSY; i++) {
		fab_cpu_relax();
		err = pthread_mutex_trylock(m);
		if (err != EBUSY || i % 64)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec > LOCK_SPIN_NS) {
			err = pthread_mutex_lock(m);
			break;
		}
	}
	if (err == EOWNERDEAD) {
		/* Its holder died inside the mock. What it was changing may be
		 * half done; the rest of the fabric is intact, and the dead
		 * process is reaped by the watchers, who saw it go. */
		pthread_mutex_consistent(m);
	} else if (err) {
		die("a fabric lock failed: %s", strerror(err));
	}
	SEEN_ACROSS_ACQUIRE();
}

void fab_mutex_unlock(pthread_mutex_t *m)
{
	SEEN_ACROSS_RELEASE();
	pthread_mutex_unlock(m);
}

uint64_t *fab_member_activity(void)
{
	static uint64_t none; /* not a member (yet): nobody reads it */
	int slot = SELF();

	return slot < 0 ? &none : &sh->members[slot].activity;
}

uint64_t fab_members_activity(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < FAB_MEMBERS_MAX; i++)
		sum += __atomic_load_n(&sh->members[i].activity, __ATOMIC_RELAXED);
	return sum;
}

pthread_mutex_t *fab_verbs_lock(void)
{
	fab_attach();
	return &sh->verbs_lock;
}

/* ---------------------------------------------------------------- allocator */

/* Under ASan a private fabric's free blocks are poisoned, so that the
 * sanitizer still sees a use after free in the mock. Not in a shared one:
 * each process has its own shadow, and a block one process freed may be
 * another's object by the time the first reads it. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   do { if (!shared_mode) ASAN_POISON_MEMORY_REGION((p), (n)); } while (0)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static struct fab_blk *blk_of(const void *p)
{
	return (struct fab_blk *)((char *)p - BLK_HEADER);
}

static void owner_link(struct fab_blk *b, int owner)
{
	b->owner = (int16_t)owner;
	b->prev = NULL;
	b->next = NULL;
	if (owner < 0)
		return;
	b->next = sh->members[owner].blocks;
	if (b->next)
		b->next->prev = b;
	sh->members[owner].blocks = b;
}

static void owner_unlink(struct fab_blk *b)
{
	if (b->owner < 0)
		return;
	if (b->prev)
		b->prev->next = b->next;
	else
		sh->members[b->owner].blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

static void *alloc_locked(int owner, size_t size)
{
	unsigned cls = 0;
	struct fab_blk *b;
	uint64_t bytes;

	while (cls < FAB_CLASSES && (64ull << cls) - BLK_HEADER < size)
		cls++;
	if (cls == FAB_CLASSES)
		return NULL;
	bytes = 64ull << cls;
	b = sh->free[cls];
	if (b) {
		sh->free[cls] = b->next;
	} else {
		/* Blocks of a class start on a multiple of their size (up to a
		 * page), so payloads are aligned. */
		uint64_t align = bytes < 4096 ? bytes : 4096, at = (sh->top + align - 1) & ~(align - 1);

		if (at + bytes > sh->size)
			return NULL;
		b = (struct fab_blk *)((char *)sh + at);
		sh->top = at + bytes;
	}
	UNPOISON((char *)b + BLK_HEADER, (size_t)bytes - BLK_HEADER);
	memset(b, 0, (size_t)bytes);
	b->magic = BLK_LIVE;
	b->cls = (uint8_t)cls;
	owner_link(b, owner);
	return (char *)b + BLK_HEADER;
}

void *fab_alloc_owned(int owner, size_t size)
{
	void *p;

	fab_attach();
	if (owner >= FAB_MEMBERS_MAX)
		owner = FAB_OWNER_FABRIC;
	fab_mutex_lock(&sh->alloc_lock);
	p = alloc_locked(owner, size);
	fab_mutex_unlock(&sh->alloc_lock);
	if (!p)
		mock_log("the fabric's arena is full (%llu MiB): an allocation of %zu bytes failed",
			 (unsigned long long)(sh->size >> 20), size);
	return p;
}

void *fab_alloc(size_t size)
{
	fab_attach();
	return fab_alloc_owned(SELF(), size);
}

static void free_locked(struct fab_blk *b)
{
	owner_unlink(b);
	b->magic = BLK_FREE;
	b->next = sh->free[b->cls];
	sh->free[b->cls] = b;
	POISON((char *)b + BLK_HEADER, (64ull << b->cls) - BLK_HEADER);
}

void fab_free(void *p)
{
	struct fab_blk *b;

	if (!p)
		return;
	b = blk_of(p);
	if ((char *)b < (char *)sh || (char *)b >= (char *)sh + sh->size)
		die("internal: freeing %p, which is not fabric memory", p);
	fab_mutex_lock(&sh->alloc_lock);
	if (b->magic != BLK_LIVE)
		die("internal: freeing %p, which is not live fabric memory", p);
	free_locked(b);
	fab_mutex_unlock(&sh->alloc_lock);
}

int fab_owner_of(const void *p)
{
	return blk_of(p)->owner;
}

int fab_owner_self(void)
{
	fab_attach();
	return SELF();
}

/* When this process last saw each member alive (kill(pid, 0)), so that a
 * packet a millisecond does not cost a system call each (process-local). */
static struct {
	pid_t pid;
	uint64_t ns;
} seen_alive[FAB_MEMBERS_MAX];

bool fab_owner_alive(int owner)
{
	const struct fab_member *m;
	uint64_t now;
	pid_t pid;

	if (owner < 0 || owner >= FAB_MEMBERS_MAX)
		return true;
	m = &sh->members[owner];
	pid = m->pid;
	if (pid == self_pid)
		return true;
	if (!pid || __atomic_load_n(&m->leaving, __ATOMIC_ACQUIRE))
		return false;
	now = fab_mono_ns();
	if (__atomic_load_n(&seen_alive[owner].pid, __ATOMIC_RELAXED) == pid &&
	    now - __atomic_load_n(&seen_alive[owner].ns, __ATOMIC_RELAXED) < 1000000u)
		return true;
	if (kill(pid, 0) && errno != EPERM)
		return false;
	__atomic_store_n(&seen_alive[owner].ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&seen_alive[owner].pid, pid, __ATOMIC_RELAXED);
	return true;
}

bool fab_owner_gone(int owner)
{
	return !fab_owner_alive(owner) ||
	       (owner >= 0 && owner < FAB_MEMBERS_MAX && !member_alive(&sh->members[owner]));
}

long fab_blocks_of(pid_t pid)
{
	long n = -ESRCH;

	fab_attach();
	fab_mutex_lock(&sh->alloc_lock);
	for (int i = 0; i < FAB_MEMBERS_MAX && n < 0; i++) {
		const struct fab_member *m = &sh->members[i];

		if (m->pid != pid)
			continue;
		n = 0;
		for (const struct fab_blk *b = m->blocks; b; b = b->next)
			n++;
	}
	fab_mutex_unlock(&sh->alloc_lock);
	return n;
}

struct fab_bell *fab_member_bell(int owner)
{
	return &sh->members[owner].watch;
}

pid_t fab_owner_pid(int owner)
{
	if (owner < 0 || owner >= FAB_MEMBERS_MAX)
		return 0;
	return sh->members[owner].pid;
}

void *fab_root(enum fab_root which, size_t size, void (*init)(void *root))
{
	void *root;

	fab_attach();
	fab_mutex_lock(&sh->alloc_lock);
	root = sh->roots[which];
	if (!root) {
		root = sh->roots[which] = alloc_locked(FAB_OWNER_FABRIC, size);
		if (root && init)
			init(root);
	}
	fab_mutex_unlock(&sh->alloc_lock);
	if (!root)
		die("the fabric's arena is full: no room for a library's state");
	return root;
}

/* ---------------------------------------------------------------- members */

static int join_locked(void)
{
	for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
		struct fab_member *m = &sh->members[i];

		if (m->pid)
			continue;
		memset(m, 0, sizeof *m);
		m->started = start_time_of(self_pid);
		__atomic_store_n(&m->pid, self_pid, __ATOMIC_RELEASE);
		m->gen++;
		return i;
	}
	return -1;
}

void fab_set_reaper(void (*reap)(int owner))
{
	reaper = reap;
}

void fab_set_leaver(void (*leave)(int member))
{
	leaver = leave;
}

static const struct fab_fault_table *faults;

void fab_set_fault_table(const struct fab_fault_table *table)
{
	faults = table;
}

bool fab_fault_any(void)
{
	return faults && faults->any();
}

bool fab_fault_at(const char *point)
{
	return faults && faults->at(point);
}

bool fab_fault_fire(const char *point, const struct fault_where *where, struct fault_action *out)
{
	return faults && faults->fire(point, where, out);
}

/* Tear a member down: its fabric objects as the kernel tears down a dead
 * process's (fabric first, then the libraries' part), then what it still
 * owns is freed and the slot is free again. */
static void reap(int owner)
{
	struct fab_member *m = &sh->members[owner];
	struct fab_blk *b;

	fab_lock();
	fab_reap_locked(owner);
	fab_unlock();
	if (reaper)
		reaper(owner);
	if (leaver)
		leaver(owner);
	fab_mutex_lock(&sh->alloc_lock);
	while ((b = m->blocks))
		free_locked(b);
	__atomic_store_n(&m->pid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&m->leaving, false, __ATOMIC_RELEASE);
	fab_mutex_unlock(&sh->alloc_lock);
}

/* Claims the dead members (so that one process reaps each) and reaps
 * them. */
void fab_reap_dead(void)
{
	for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
		struct fab_member *m = &sh->members[i];
		bool claim;

		if (!member_pid(m) || i == SELF())
			continue;
		fab_mutex_lock(&sh->alloc_lock);
		claim = member_pid(m) && !__atomic_load_n(&m->leaving, __ATOMIC_ACQUIRE) && !member_alive(m);
		if (claim)
			__atomic_store_n(&m->leaving, true, __ATOMIC_RELEASE);
		fab_mutex_unlock(&sh->alloc_lock);
		if (claim)
			reap(i);
	}
}

/* ---------------------------------------------------------------- mapping */

static void init_header(struct fab_shared *s, uint64_t base, bool shared)
{
	s->magic = FAB_MAGIC;
	s->layout = FAB_LAYOUT;
	s->header_size = sizeof *s;
	s->base = base;
	s->size = FAB_ARENA_SIZE;
	if (getrandom(&s->token, sizeof s->token, 0) != sizeof s->token)
		s->token = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	snprintf(s->name, sizeof s->name, "%s", shared ? fabric_name : "");
	fab_mutex_init(&s->alloc_lock);
	fab_mutex_init(&s->verbs_lock);
	s->top = (sizeof *s + 4095) & ~4095ull;
}

static void map_private(void)
{
	void *p = mmap(NULL, FAB_ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		die("cannot map a private fabric of %llu MiB: %s", FAB_ARENA_SIZE >> 20,
		    strerror(errno));
	sh = p;
	init_header(sh, (uint64_t)(uintptr_t)p, false);
	fab_fabric = &sh->fabric;
	fab_state_init(fab_fabric);
	__atomic_store_n(&self, join_locked(), __ATOMIC_RELEASE);
}

/* $XDG_RUNTIME_DIR/rdmamock, else /tmp/rdmamock-UID: ours alone (0700). */
static void runtime_dir(char *dir, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (xdg && *xdg)
		snprintf(dir, size, "%s/rdmamock", xdg);
	else
		snprintf(dir, size, "/tmp/rdmamock-%u", (unsigned)getuid());
	if (mkdir(dir, 0700) && errno != EEXIST)
		die("cannot make the fabric directory %s: %s", dir, strerror(errno));
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077))
		die("the fabric directory %s is not a private directory of this user (mode 0700, "
		    "owner %u); remove it or set XDG_RUNTIME_DIR", dir, (unsigned)getuid());
}

/* A file of this fabric beside its arena's: <dir>/<fabric><suffix>, or
 * <dir>/private-<pid><suffix> for a private fabric. */
int fab_runtime_path(const char *suffix, char *out, size_t size)
{
	char dir[3900];
	int n;

	fab_attach();
	runtime_dir(dir, sizeof dir);
	if (shared_mode)
		n = snprintf(out, size, "%s/%s%s", dir, fabric_name, suffix);
	else
		n = snprintf(out, size, "%s/private-%d%s", dir, (int)getpid(), suffix);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A directory's entries, "." and ".." aside, read with getdents64 into a
 * buffer on the stack: no opendir, which mallocs. The removals below run
 * at exit, and a program may call exit from a signal handler that
 * interrupted malloc (qperf 0.4.11's test timer does): a malloc there
 * waits for ever on the lock its own thread holds. */
struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static void each_entry(int dir, void (*fn)(int dir, const char *name, const void *arg), const void *arg)
{
	char buf[4096] __attribute__((aligned(8)));
	long n;

	while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
		for (long at = 0; at < n;) {
			const struct dirent64_raw *e = (const void *)(buf + at);

			at += e->reclen;
			if (strcmp(e->name, ".") && strcmp(e->name, ".."))
				fn(dir, e->name, arg);
		}
}

static void remove_entry(int at, const char *name, const void *unused)
{
	int fd;

	if (!unlinkat(at, name, 0) || errno == ENOENT)
		return;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	each_entry(fd, remove_entry, NULL);
	close(fd);
	unlinkat(at, name, AT_REMOVEDIR);
}

void fab_remove_path(const char *path)
{
	remove_entry(AT_FDCWD, path, NULL);
}

struct remove_filter {
	const char *prefix, *keep;
};

static void remove_matching(int dir, const char *name, const void *arg)
{
	const struct remove_filter *f = arg;

	if (!strncmp(name, f->prefix, strlen(f->prefix)) &&
	    (!f->keep || (strcmp(name, f->keep) && !strstr(name, ".tmp"))))
		remove_entry(dir, name, NULL);
}

/* The runtime directory's entries whose names start with prefix (the
 * system view's trees), but keep and, when keep is given, a tree being
 * built (".tmp"). */
static void remove_files_in(const char *dir, const char *prefix, const char *keep)
{
	struct remove_filter f = { prefix, keep };
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	each_entry(fd, remove_matching, &f);
	close(fd);
}

void fab_remove_files(const char *prefix, const char *keep)
{
	char dir[3900];

	runtime_dir(dir, sizeof dir);
	remove_files_in(dir, prefix, keep);
}

/* Whether the fabric in the file is one we can join: our layout, and at
 * least one member still alive (a fabric whose members all died is never
 * trusted: it is made anew). */
static bool joinable(const struct fab_shared *s, const char *path)
{
	if (s->magic != FAB_MAGIC)
		return false;
	if (s->layout != FAB_LAYOUT || s->header_size != sizeof *s || s->base != FAB_SHARED_BASE ||
	    s->size != FAB_ARENA_SIZE) {
		for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
			const struct fab_member *m = &s->members[i];

			if (m->pid && start_time_of(m->pid) == m->started)
				die("fabric %s (%s) is in use by process %d, of an rdmamock build with "
				    "another layout (%u, this one %u); use another RDMAMOCK_FABRIC",
				    fabric_name, path, (int)m->pid, s->layout, FAB_LAYOUT);
		}
		return false;
	}
	for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
		const struct fab_member *m = &s->members[i];

		if (m->pid && start_time_of(m->pid) == m->started)
			return true;
	}
	if (s->magic == FAB_MAGIC)
		mock_log("fabric %s: every process that used it is gone; it is made anew", fabric_name);
	return false;
}

/* The fabric's lock file at path, opened and locked exclusively: the fd,
 * or -1 with errno. The last process out removes the file while it holds
 * the lock, so a process that was waiting on the file may get a lock on
 * one that is gone: it opens the path again, until what it locked is the
 * file the path names. */
static int lock_fabric(const char *path)
{
	for (;;) {
		struct stat held, named;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX) || fstat(fd, &held)) {
			int err = errno;

			close(fd);
			errno = err;
			return -1;
		}
		if (!stat(path, &named) && named.st_dev == held.st_dev && named.st_ino == held.st_ino)
			return fd;
		close(fd);
	}
}

/* A member still running (not past its exit), by pid; 0 when none. */
static pid_t live_member(const struct fab_shared *s)
{
	for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
		const struct fab_member *m = &s->members[i];

		if (m->pid && !m->exited && start_time_of(m->pid) == m->started)
			return m->pid;
	}
	return 0;
}

static void map_shared(void)
{
	char dir[3900];
	struct fab_shared head;
	bool fresh;
	void *p;
	int fd;

	runtime_dir(dir, sizeof dir);
	snprintf(file_path, sizeof file_path, "%s/%s.fabric", dir, fabric_name);
	snprintf(lock_path, sizeof lock_path, "%s/%s.lock", dir, fabric_name);
	lock_fd = lock_fabric(lock_path);
	if (lock_fd < 0)
		die("cannot lock %s: %s", lock_path, strerror(errno));
	fd = open(file_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		die("cannot open the fabric %s: %s", file_path, strerror(errno));
	memset(&head, 0, sizeof head);
	fresh = pread(fd, &head, sizeof head, 0) != (ssize_t)sizeof head ||
		!joinable(&head, file_path);
	if (fresh && (ftruncate(fd, 0) || ftruncate(fd, (off_t)FAB_ARENA_SIZE)))
		die("cannot size the fabric %s: %s", file_path, strerror(errno));
	p = mmap((void *)(uintptr_t)FAB_SHARED_BASE, FAB_ARENA_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	close(fd);
	if (p == MAP_FAILED || p != (void *)(uintptr_t)FAB_SHARED_BASE)
		die("cannot map the fabric %s at %#llx: %s (RDMAMOCK_FABRIC=private keeps it "
		    "in this process)", file_path, FAB_SHARED_BASE,
		    p == MAP_FAILED ? strerror(errno) : "the address is in use");
	sh = p;
	fab_fabric = &sh->fabric;
	if (fresh) {
		init_header(sh, FAB_SHARED_BASE, true);
		fab_state_init(fab_fabric);
	} else {
		fab_mutex_lock(&fab_fabric->lock);
		topology_check_locked();
		fab_mutex_unlock(&fab_fabric->lock);
	}
	fab_mutex_lock(&sh->alloc_lock);
	__atomic_store_n(&self, join_locked(), __ATOMIC_RELEASE);
	fab_mutex_unlock(&sh->alloc_lock);
	flock(lock_fd, LOCK_UN);
	fab_mem_allow();
	if (SELF() < 0)
		die("fabric %s has no room for another process (%d at most)", fabric_name,
		    FAB_MEMBERS_MAX);
}

/* At exit the last process out removes the fabric's file. Our objects are
 * not torn down here, while the program's other threads may still use
 * them: the other members' watchers see this process end and reap it, as
 * the kernel tears a process's objects down once its threads are gone.
 *
 * It runs as librdmamock's destructor, which the dynamic linker runs after
 * those of the program and of every library that uses the mock (they link
 * it): libfabric, for one, frees what it holds in its destructor. An
 * atexit handler registered at attach, usually in main, ran before them.
 * The slot stays ours: what an exit handler that runs later still makes
 * (one registered before main runs after the destructors) is reaped with
 * this process, not left to nobody. */
__attribute__((destructor)) static void leave(void)
{
	static bool left;
	bool last = true;

	if (!sh || SELF() < 0 || !shared_mode || self_pid != getpid() || left)
		return;
	left = true;
	/* What it holds goes with it now (the faults it added), not when it
	 * is reaped. */
	if (leaver)
		leaver(SELF());
	if (flock(lock_fd, LOCK_EX) == 0) {
		/* Two processes exiting together each see the other alive:
		 * the one that looks second sees the first has exited. */
		sh->members[SELF()].exited = true;
		for (int i = 0; i < FAB_MEMBERS_MAX; i++) {
			const struct fab_member *m = &sh->members[i];

			if (i != SELF() && !m->exited && member_alive(m))
				last = false;
		}
		/* The lock file goes too: a process waiting on it opens the
		 * path again (lock_fabric). */
		if (last) {
			char view[FAB_NAME_MAX + 8];

			unlink(file_path);
			unlink(lock_path);
			snprintf(view, sizeof view, "%s.sys.", fabric_name);
			fab_remove_files(view, NULL);
		}
		flock(lock_fd, LOCK_UN);
	}
}

/* ---------------------------------------------------------------- fork */

static void fork_prepare(void)
{
	if (shared_mode)
		return;
	/* A private fabric is copied into the child: hold its locks across
	 * the fork so that the copy is consistent. */
	fab_mutex_lock(&sh->verbs_lock);
	fab_mutex_lock(&fab_fabric->lock);
	fab_mutex_lock(&sh->alloc_lock);
}

static void fork_parent(void)
{
	if (shared_mode)
		return;
	fab_mutex_unlock(&sh->alloc_lock);
	fab_mutex_unlock(&fab_fabric->lock);
	fab_mutex_unlock(&sh->verbs_lock);
}

static void fork_child(void)
{
	mock_pid_forget(); /* before anything asks it here */
	self_pid = getpid();
	if (!shared_mode) {
		/* Its own copy: the locks start afresh, the slot is its own.
		 * The unlocks fail (a robust lock's owner is the parent's
		 * thread), but tell ThreadSanitizer that fork_prepare's hold
		 * is over, or it takes the child's next locker for a second
		 * owner. */
		pthread_mutex_unlock(&sh->alloc_lock);
		pthread_mutex_unlock(&fab_fabric->lock);
		pthread_mutex_unlock(&sh->verbs_lock);
		fab_mutex_init(&sh->alloc_lock);
		fab_mutex_init(&fab_fabric->lock);
		fab_mutex_init(&sh->verbs_lock);
		sh->members[SELF()].pid = self_pid;
		sh->members[SELF()].started = start_time_of(self_pid);
		fab_child_after_fork();
		return;
	}
	/* The child shares the parent's objects, as a child shares the
	 * parent's RDMA files; it is a member of its own for what it makes. */
	fab_mutex_lock(&sh->alloc_lock);
	__atomic_store_n(&self, join_locked(), __ATOMIC_RELEASE);
	fab_mutex_unlock(&sh->alloc_lock);
	if (SELF() < 0)
		die("fabric %s has no room for another process (%d at most)", fabric_name,
		    FAB_MEMBERS_MAX);
	fab_child_after_fork();
}

/* ---------------------------------------------------------------- attach */

static void attach_once_fn(void)
{
	const char *name = getenv("RDMAMOCK_FABRIC");

	initializing = true;
	self_pid = getpid();
	if (!name || !*name)
		name = "default";
	shared_mode = strcmp(name, "private") != 0;
	if (shared_mode) {
		size_t len = strlen(name);

		if (len >= sizeof fabric_name || strspn(name, "abcdefghijklmnopqrstuvwxyz"
							"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len ||
		    name[0] == '.')
			die("RDMAMOCK_FABRIC=%s: a fabric's name is up to %zu letters, digits, '_', "
			    "'.' and '-' (not starting with '.'), or 'private'",
			    name, sizeof fabric_name - 1);
		snprintf(fabric_name, sizeof fabric_name, "%s", name);
		map_shared();
		fab_watch_start();
	} else {
		map_private();
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	initializing = false;
	__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
}

void fab_attach(void)
{
	if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || initializing)
		return;
	pthread_once(&attach_once, attach_once_fn);
}

bool fab_is_shared(void)
{
	fab_attach();
	return shared_mode;
}

const char *fab_name(void)
{
	fab_attach();
	return fabric_name;
}

uint64_t fab_token(void)
{
	fab_attach();
	return sh->token;
}

/* The files of a named fabric whose processes are all gone (a killed run
 * leaves them): under its lock, so that nobody joins meanwhile; -EBUSY
 * while a process of it still runs, whose fabric would go from under it. */
MOCK_EXPORT int rdmamock_fabric_remove(const char *name)
{
	char dir[4096], path[4200], lock[4200];
	size_t len = name ? strlen(name) : 0;
	struct fab_shared head;
	int gone = 0, fd, lfd;

	if (!len || len >= sizeof fabric_name || name[0] == '.' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len ||
	    !strcmp(name, "private"))
		return -EINVAL;
	if (sh && shared_mode && !strcmp(name, fabric_name))
		return -EBUSY;
	runtime_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/%s.fabric", dir, name);
	snprintf(lock, sizeof lock, "%s/%s.lock", dir, name);
	lfd = lock_fabric(lock);
	if (lfd < 0)
		return -errno;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		memset(&head, 0, sizeof head);
		if (pread(fd, &head, sizeof head, 0) == (ssize_t)sizeof head && head.magic == FAB_MAGIC &&
		    live_member(&head)) {
			close(fd);
			close(lfd);
			return -EBUSY;
		}
		close(fd);
	}
	gone += !unlink(path);
	snprintf(path, sizeof path, "%s.sys.", name);
	remove_files_in(dir, path, NULL);
	/* What lock_fabric made, if the fabric had no lock file, goes too,
	 * and is not counted. */
	unlink(lock);
	close(lfd);
	return gone;
}
