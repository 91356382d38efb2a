/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ledger: every object the program holds from the mock, per process,
 * so that a call can tell a live object from a destroyed one before it
 * touches it, and the process can be told at exit what it never released.
 *
 * Objects are tracked always, in a hash set by pointer under one mutex, so
 * that adding and removing stay O(1) for a program holding tens of
 * thousands of ids (10,000 ids: 1.3 us a create); the report at exit and
 * strictness are the environment's choice (RDMAMOCK_LEDGER,
 * RDMAMOCK_STRICT). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mock.h"

static const char *const kind_names[LEDGER_KINDS] = {
	[LEDGER_CHANNEL] = "event channel",
	[LEDGER_ID] = "id",
	[LEDGER_EVENT] = "event",
	[LEDGER_ADDRINFO] = "rdma_addrinfo",
	[LEDGER_PD] = "PD",
	[LEDGER_MR] = "MR",
	[LEDGER_COMP_CHANNEL] = "completion channel",
	[LEDGER_CQ] = "CQ",
	[LEDGER_QP] = "QP",
	[LEDGER_SRQ] = "SRQ",
	[LEDGER_AH] = "AH",
	[LEDGER_DM] = "DM",
	[LEDGER_MW] = "MW",
};

struct entry {
	struct entry *next;
	const void *ptr;
	enum ledger_kind kind;
	pid_t pid;        /* who created it: a forked child does not own it */
	bool internal;    /* the library's own, released with it, not a leak */
	bool kept;        /* its destroy failed: an injected fault, a dead device */
	const char *call; /* a string literal of the library that made it */
	unsigned long seq; /* creation order */
	char note[48];    /* an identity for the report: "qp_num 0x11" */
};

/* The recently destroyed, to say by which call: a bounded ring. */
#define GRAVE_SLOTS 512
struct grave {
	const void *ptr;
	enum ledger_kind kind;
	const char *call;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry **buckets;
static size_t nbuckets, count;
static struct grave graves[GRAVE_SLOTS];
static size_t next_grave;
static unsigned long next_seq;

/* The outermost public call of this thread, whose name an object created
 * inside it carries (rdma_create_qp's ibv_create_qp is rdma_create_qp's). */
static __thread const char *outer_call;

/* The object a destroying call is about to ask its fault point about. */
static __thread struct {
	const void *ptr;
	enum ledger_kind kind;
} destroying;

static size_t bucket_of(const void *ptr, enum ledger_kind kind, size_t n)
{
	uint64_t h = ((uint64_t)(uintptr_t)ptr ^ (uint64_t)kind) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (n - 1);
}

static struct entry **find_locked(enum ledger_kind kind, const void *ptr)
{
	struct entry **pos;

	if (!buckets)
		return NULL;
	for (pos = &buckets[bucket_of(ptr, kind, nbuckets)]; *pos; pos = &(*pos)->next)
		if ((*pos)->ptr == ptr && (*pos)->kind == kind)
			return pos;
	return NULL;
}

/* Keep at most one entry per bucket on average: adding stays O(1). */
static void grow_locked(void)
{
	size_t n = nbuckets ? nbuckets * 2 : 1024;
	struct entry **b = calloc(n, sizeof *b);

	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < nbuckets; i++) {
		struct entry *e = buckets[i], *next;

		for (; e; e = next) {
			size_t j = bucket_of(e->ptr, e->kind, n);

			next = e->next;
			e->next = b[j];
			b[j] = e;
		}
	}
	free(buckets);
	buckets = b;
	nbuckets = n;
}

static bool ledger_strict(void)
{
	return mock_env_on("RDMAMOCK_STRICT");
}

static bool ledger_reporting(void)
{
	return ledger_strict() || mock_env_on("RDMAMOCK_LEDGER");
}

const char *ledger_enter(const char *call)
{
	const char *was = outer_call;

	if (!was)
		outer_call = call;
	return was;
}

void ledger_leave(const char **was)
{
	outer_call = *was;
}

void ledger_add(enum ledger_kind kind, const void *ptr, const char *call)
{
	struct entry *e = calloc(1, sizeof *e);

	if (!e) /* untracked: later calls on it will call it not live */
		return;
	e->ptr = ptr;
	e->kind = kind;
	e->pid = mock_pid();
	e->call = outer_call ? outer_call : call;
	pthread_mutex_lock(&lock);
	e->seq = next_seq++;
	if (count >= nbuckets)
		grow_locked();
	if (buckets) {
		size_t i = bucket_of(ptr, kind, nbuckets);

		e->next = buckets[i];
		buckets[i] = e;
		count++;
		e = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(e);
}

bool ledger_del(enum ledger_kind kind, const void *ptr, const char *call)
{
	struct entry **pos, *e = NULL;

	pthread_mutex_lock(&lock);
	pos = find_locked(kind, ptr);
	if (pos) {
		e = *pos;
		*pos = e->next;
		count--;
		graves[next_grave++ % GRAVE_SLOTS] = (struct grave){ ptr, kind, call };
	}
	pthread_mutex_unlock(&lock);
	free(e);
	return e != NULL;
}

bool ledger_live(enum ledger_kind kind, const void *ptr)
{
	bool live;

	pthread_mutex_lock(&lock);
	live = find_locked(kind, ptr) != NULL;
	pthread_mutex_unlock(&lock);
	return live;
}

bool ledger_each(enum ledger_kind kind, bool (*fn)(const void *ptr, void *arg), void *arg)
{
	pid_t self = mock_pid();
	bool found = false;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nbuckets && !found; i++)
		for (struct entry *e = buckets[i]; e && !found; e = e->next)
			if (e->kind == kind && e->pid == self)
				found = fn(e->ptr, arg);
	pthread_mutex_unlock(&lock);
	return found;
}

void ledger_label(enum ledger_kind kind, const void *ptr, const char *label)
{
	struct entry **pos;

	pthread_mutex_lock(&lock);
	pos = find_locked(kind, ptr);
	if (pos) {
		size_t n = strnlen(label, sizeof (*pos)->note - 1);

		memcpy((*pos)->note, label, n);
		(*pos)->note[n] = '\0';
	}
	pthread_mutex_unlock(&lock);
}

void ledger_note(enum ledger_kind kind, const void *ptr, const char *fmt, ...)
{
	char note[sizeof ((struct entry *)0)->note];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(note, sizeof note, fmt, ap);
	va_end(ap);
	ledger_label(kind, ptr, note);
}

void ledger_internal(enum ledger_kind kind, const void *ptr)
{
	struct entry **pos;

	pthread_mutex_lock(&lock);
	pos = find_locked(kind, ptr);
	if (pos)
		(*pos)->internal = true;
	pthread_mutex_unlock(&lock);
}

void ledger_destroying(enum ledger_kind kind, const void *ptr)
{
	destroying.ptr = ptr;
	destroying.kind = kind;
}

void ledger_kept(enum ledger_kind kind, const void *ptr)
{
	struct entry **pos;

	pthread_mutex_lock(&lock);
	pos = find_locked(kind, ptr);
	if (pos)
		(*pos)->kept = true;
	pthread_mutex_unlock(&lock);
}

void ledger_fault_checked(bool fired)
{
	if (!destroying.ptr)
		return;
	if (fired)
		ledger_kept(destroying.kind, destroying.ptr);
	destroying.ptr = NULL;
}

void ledger_require(enum ledger_kind kind, const void *ptr, const char *call)
{
	const char *name = kind_names[kind], *by = NULL;

	if (ledger_live(kind, ptr))
		return;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < GRAVE_SLOTS && !by; i++) {
		const struct grave *g = &graves[(next_grave - 1 - i) % GRAVE_SLOTS];

		if (g->ptr == ptr && g->kind == kind)
			by = g->call;
	}
	pthread_mutex_unlock(&lock);
	if (by)
		mock_abort(call, "%s %p is not a live %s (destroyed by %s)", name, ptr, name, by);
	mock_abort(call, "%s %p is not a live %s (never created by the mock, or destroyed long ago)",
		   name, ptr, name);
}

void ledger_misuse(const char *call, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (ledger_strict())
		mock_abort(call, "%s (RDMAMOCK_STRICT)", line);
	mock_log("%s: %s", call, line);
}

/* Creation order, for the report: an insertion sort, which allocates
 * nothing (see report_leaks). */
static void sort_by_seq(struct entry **v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct entry *e = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1]->seq > e->seq; j--)
			v[j] = v[j - 1];
		v[j] = e;
	}
}

/* At exit: what this process created and never released, one line each in
 * the order made, and a summary with the exit status (which a strict abort
 * hides: rdmamock-sweep judges a leak by whether the program succeeded).
 * Nothing here may wait on what the exiting thread could hold: a program
 * may call exit from a signal handler that interrupted malloc (qperf
 * 0.4.11) or a call of the mock's. So the list is mmap'd, not malloc'd,
 * and a ledger that stays locked for a second is not reported. */
static void report_leaks(int status, void *unused)
{
	unsigned long by_kind[LEDGER_KINDS] = { 0 };
	struct timespec ms = { 0, 1000000 };
	struct entry **leaked;
	pid_t self = mock_pid();
	char summary[400];
	size_t n = 0, len = 0, size;
	int tries = 0;

	if (!ledger_reporting())
		return;
	while (pthread_mutex_trylock(&lock)) {
		if (++tries == 1000) {
			mock_log("leak: no report: the ledger stayed locked at exit(%d) (exit called "
				 "from a signal handler, in the middle of a call?)", status);
			return;
		}
		nanosleep(&ms, NULL);
	}
	size = (count + 1) * sizeof *leaked;
	leaked = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (leaked == MAP_FAILED)
		leaked = NULL;
	for (size_t i = 0; leaked && i < nbuckets; i++)
		for (struct entry *e = buckets[i]; e; e = e->next)
			if (e->pid == self && !e->internal && !e->kept)
				leaked[n++] = e;
	sort_by_seq(leaked, n);
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = leaked[i];

		fprintf(stderr, "rdmamock: leak: %s %p%s%s%s created by %s, never destroyed\n",
			kind_names[e->kind], e->ptr, e->note[0] ? " (" : "", e->note,
			e->note[0] ? ")" : "", e->call);
		by_kind[e->kind]++;
	}
	pthread_mutex_unlock(&lock);
	if (leaked)
		munmap(leaked, size);
	if (!n)
		return;
	for (int k = 0; k < LEDGER_KINDS; k++)
		if (by_kind[k] && len < sizeof summary)
			len += (size_t)snprintf(summary + len, sizeof summary - len, "%s%s: %lu",
						len ? ", " : "", kind_names[k], by_kind[k]);
	if (ledger_strict())
		mock_abort("leak", "%zu object(s) never destroyed at exit(%d) (%s); RDMAMOCK_STRICT aborts",
			   n, status, summary);
	mock_log("leak: %zu object(s) never destroyed at exit(%d) (%s)", n, status, summary);
}

/* A fork while another thread holds the lock must not leave the child's
 * copy locked for ever. */
static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&lock);
}

/* The report waits for the destructors of the program and of the libraries
 * that use the mock, which may release what they hold (libfabric frees its
 * rdma_addrinfo lists in one), and needs the exit status, which only an
 * exit handler is told. Registered in our constructor, the handler runs
 * after the destructors; registered later (the mock loaded by dlopen), it
 * runs before them. So whichever of the two comes second reports. */
static int exit_status;
static bool exit_seen, destructed;

static void at_exit(int status, void *unused)
{
	exit_status = status;
	exit_seen = true;
	if (destructed)
		report_leaks(status, unused);
}

__attribute__((destructor)) static void ledger_fini(void)
{
	destructed = true;
	if (exit_seen)
		report_leaks(exit_status, NULL);
}

__attribute__((constructor)) static void ledger_init(void)
{
	pthread_atfork(before_fork, after_fork, after_fork);
	on_exit(at_exit, NULL);
}
