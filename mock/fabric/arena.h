/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fabric's memory: one arena that every object of the mock lives in,
 * mapped at the same address in every process that shares the fabric, so
 * that a pointer means the same object everywhere (see arena.c for why).
 *
 * A private fabric is an anonymous mapping of this process alone; a shared
 * one is a file in the user's runtime directory, mapped by each process of
 * the fabric. Either way the code that uses it is the same. */
#ifndef RDMAMOCK_FABRIC_ARENA_H
#define RDMAMOCK_FABRIC_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Make sure this process is on its fabric (RDMAMOCK_FABRIC chooses which):
 * maps it, joins as a member. Every fab_* call does it; it is cheap once
 * done. A fabric that cannot be reached stops the process with one line
 * saying why. */
void fab_attach(void);

/* Whether the fabric is shared with other processes, and its name ("" for
 * a private one). */
bool fab_is_shared(void);
const char *fab_name(void);
/* The path of a file of this fabric in the user's runtime directory,
 * beside the fabric's own: <dir>/<name><suffix>, or <dir>/private-<pid>
 * <suffix> for a private fabric (the system view's trees). 0, or
 * -ENAMETOOLONG. */
int fab_runtime_path(const char *suffix, char *out, size_t size);
/* Remove a file or a tree. */
void fab_remove_path(const char *path);
/* Remove what the runtime directory holds under names that start with
 * prefix, but keep (if not NULL) and, then, a tree still being built. */
void fab_remove_files(const char *prefix, const char *keep);
/* A random number the fabric was made with: its doorbells' names carry
 * it, so that two fabrics of one name, one after the other, never meet. */
uint64_t fab_token(void);

/* Zeroed memory in the arena, owned by this process: when the process
 * dies, the fabric frees what it still owns. NULL when the arena is full. */
void *fab_alloc(size_t size);
/* The same, owned by another member (the slot of fab_owner_self() or of an
 * object's owner), for what one process leaves with another: an event on
 * its channel, a completion on its CQ. FAB_OWNER_FABRIC: owned by nobody,
 * freed only by fab_free (shared objects such as a port or a device). */
#define FAB_OWNER_FABRIC (-1)
void *fab_alloc_owned(int owner, size_t size);
void fab_free(void *p);
/* The owner slot of memory from fab_alloc*, and of this process. */
int fab_owner_of(const void *p);
int fab_owner_self(void);
/* The pid of a member slot (0 for FAB_OWNER_FABRIC or a free slot). */
pid_t fab_owner_pid(int owner);
/* Whether a member's process is still there (cheap: no /proc read, and one
 * seen alive in the last millisecond is taken to be; a process that has
 * just ended may look alive for a moment). */
bool fab_owner_alive(int owner);
/* A /proc/.../stat file read into buf: the fields after the command (from
 * the space after its closing parenthesis), or NULL. */
const char *fab_proc_stat(const char *path, char *buf, size_t size);
/* Whether a member's process has ended, a zombie included (reads /proc:
 * for the rare paths). The kernel has released an ended process's ids by
 * the time its parent can see it end; until a watcher reaps it, what the
 * process held is to be passed over as gone. */
bool fab_owner_gone(int owner);
/* The blocks a member holds, found by its pid; -ESRCH if none is. */
long fab_blocks_of(pid_t pid);

/* Locks in the arena: process-shared and robust. A lock whose holder died
 * is taken over (the dead process is reaped once the lock is free). */
void fab_mutex_init(pthread_mutex_t *m);
void fab_mutex_lock(pthread_mutex_t *m);
void fab_mutex_unlock(pthread_mutex_t *m);
/* A condition variable usable in the arena (process-shared, monotonic). */
void fab_cond_init(pthread_cond_t *c);

/* The verbs layer's lock (see ibverbs/verbs.h), kept with the arena so
 * that fork handling takes it in order: verbs lock, fabric lock, arena. */
pthread_mutex_t *fab_verbs_lock(void);
/* The members' activity counts (clock.c): this process's own counter,
 * and the sum of every member's. */
uint64_t *fab_member_activity(void);
uint64_t fab_members_activity(void);
/* A root pointer per drop-in library for its shared state, made on first
 * use (zeroed, `size` bytes) under the arena's lock, then given to init
 * (if not NULL) under that lock, once. */
enum fab_root {
	FAB_ROOT_VERBS,
	FAB_ROOT_FAULTS,
	FAB_ROOTS,
};
void *fab_root(enum fab_root which, size_t size, void (*init)(void *root));

/* Members: each process on the fabric holds a slot. A slot whose process
 * is gone is reaped: its ids and QPs are torn down as the kernel tears
 * down a dead process's, then whatever memory it still owns is freed. */
#define FAB_MEMBERS_MAX 128
/* The library layers' part of reaping a dead member (called with no lock
 * held, once its fabric objects are gone): libibverbs registers one. */
void fab_set_reaper(void (*reap)(int owner));
/* The control layer's part of a member leaving the fabric (at its exit, or
 * when it is reaped dead): it drops the member's hold on the faults it
 * added. The fabric calls down to no layer above it but through these. */
void fab_set_leaver(void (*leave)(int member));
/* The fault table (control/fault.c registers its lookups): the fabric's
 * fault points ask it through these, and find no fault while none is
 * registered. */
struct fault_where;
struct fault_action;
struct fab_fault_table {
	bool (*any)(void);
	bool (*at)(const char *point);
	bool (*fire)(const char *point, const struct fault_where *where, struct fault_action *out);
};
void fab_set_fault_table(const struct fab_fault_table *table);
bool fab_fault_any(void);
bool fab_fault_at(const char *point);
bool fab_fault_fire(const char *point, const struct fault_where *where, struct fault_action *out);
/* Reap every member whose process is gone (the watcher does it too). */
void fab_reap_dead(void);

#endif
