/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device under test: which library the suite runs on, and the device
 * profile that says what the device lacks and where it knowingly deviates
 * (fixtures/devices/). librdmamock exports rdmamock_version and the system's
 * rdma-core does not, so the backend needs no build-time flag: the same
 * objects linked either way report the truth. The runner loads the profile
 * before any test forks; the children inherit it. */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

bool rc_backend_is_mock(void)
{
	return dlsym(RTLD_DEFAULT, "rdmamock_version") != NULL;
}

const char *rc_backend_name(void)
{
	return rc_backend_is_mock() ? "mock" : "real";
}

/* ------------------------------------------------------------ time */

static struct {
	pthread_once_t once;
	uint64_t (*now)(void);
	int (*poll)(struct pollfd *, nfds_t, int);
} clock_api = { .once = PTHREAD_ONCE_INIT };

static void clock_find(void)
{
	clock_api.now = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "rdmamock_clock_ns");
	clock_api.poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_DEFAULT, "rdmamock_poll");
}

uint64_t rc_now_ns(void)
{
	struct timespec ts;

	pthread_once(&clock_api.once, clock_find);
	if (clock_api.now)
		return clock_api.now();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool rc_clock_jumps(void)
{
	const char *mode = getenv("RDMAMOCK_CLOCK");

	return rc_backend_is_mock() && !(mode && !strcmp(mode, "real"));
}

int rc_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	pthread_once(&clock_api.once, clock_find);
	return clock_api.poll ? clock_api.poll(fds, nfds, timeout_ms) : poll(fds, nfds, timeout_ms);
}

void rc_sleep_ms(int ms)
{
	uint64_t until = rc_now_ns() + (uint64_t)ms * 1000000u, now;

	while ((now = rc_now_ns()) < until)
		rc_poll(NULL, 0, (int)((until - now + 999999) / 1000000));
}

/* ------------------------------------------------------------ the profile */

struct lack {
	char *capability;
	char *reason;
};

static struct {
	char *name; /* NULL: no profile loaded */
	struct lack *lacks;
	size_t nlacks;
	char *deviation[CL__COUNT]; /* the reason, or NULL */
} profile;

const char *rc_profile_name(void)
{
	return profile.name;
}

bool rc_lacks(const char *capability, const char **reason)
{
	for (size_t i = 0; capability && i < profile.nlacks; i++) {
		if (!strcmp(profile.lacks[i].capability, capability)) {
			if (reason)
				*reason = profile.lacks[i].reason;
			return true;
		}
	}
	return false;
}

const char *rc_profile_deviation(enum rc_clause_id clause)
{
	return profile.deviation[clause];
}

static void *checked(void *p)
{
	if (!p) {
		fputs("rdmacheck: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

/* Splits off the next blank-separated word; NULL at the end of the line. */
static char *next_word(char **line)
{
	char *word = *line + strspn(*line, " \t");

	if (!*word)
		return NULL;
	*line = word + strcspn(word, " \t");
	if (**line)
		*(*line)++ = '\0';
	return word;
}

static bool set_name(const char *word, const char *rest, char *err,
		     size_t size)
{
	if (!word || *rest) {
		snprintf(err, size, "'name' wants one word");
		return false;
	}
	if (profile.name) {
		snprintf(err, size, "a second 'name' line");
		return false;
	}
	profile.name = checked(strdup(word));
	return true;
}

static bool add_lack(const char *capability, const char *reason, char *err,
		     size_t size)
{
	if (capability[strspn(capability, RC_CAPABILITY_CHARS)]) {
		snprintf(err, size, "capability '%s' is not one word of "
			 "[a-z0-9-]", capability);
		return false;
	}
	if (rc_lacks(capability, NULL)) {
		snprintf(err, size, "'lacks %s' a second time", capability);
		return false;
	}
	profile.lacks = checked(realloc(profile.lacks, (profile.nlacks + 1) *
						       sizeof(*profile.lacks)));
	profile.lacks[profile.nlacks++] = (struct lack){
		checked(strdup(capability)), checked(strdup(reason))
	};
	return true;
}

static bool add_deviation(const char *clause_id, const char *reason,
			  char *err, size_t size)
{
	for (int i = 0; i < CL__COUNT; i++) {
		if (strcmp(rc_clauses[i].id, clause_id))
			continue;
		if (profile.deviation[i]) {
			snprintf(err, size, "'deviation %s' a second time",
				 clause_id);
			return false;
		}
		profile.deviation[i] = checked(strdup(reason));
		return true;
	}
	snprintf(err, size, "deviation %s: no such clause in this binary's "
		 "registry", clause_id);
	return false;
}

/* include nests at most this deep (a loop of includes stops here). */
#define INCLUDE_DEPTH_MAX 4

static int load(const char *path, int depth);

/* include FILE: the lacks and deviations of another profile, FILE relative
 * to the including profile's folder; its name line is not this one's. */
static bool include_profile(const char *from, const char *file, int depth, char *err, size_t size)
{
	const char *slash = strrchr(from, '/');
	char path[4096];

	if (depth >= INCLUDE_DEPTH_MAX) {
		snprintf(err, size, "include %s: nested more than %d deep", file, INCLUDE_DEPTH_MAX);
		return false;
	}
	if (file[0] == '/' || !slash)
		snprintf(path, sizeof path, "%s", file);
	else
		snprintf(path, sizeof path, "%.*s/%s", (int)(slash - from), from, file);
	if (load(path, depth + 1)) {
		snprintf(err, size, "include %s failed (see above)", file);
		return false;
	}
	return true;
}

/* One line, without its newline: a comment, a blank, or a keyword, its word
 * and the rest (the reason). False, with err filled, for anything else. */
static bool profile_line(const char *path, int depth, char *line, char *err, size_t size)
{
	char *keyword = next_word(&line), *word, *rest;
	size_t len;

	if (!keyword || keyword[0] == '#')
		return true;
	word = next_word(&line);
	rest = line + strspn(line, " \t");
	for (len = strlen(rest); len && strchr(" \t", rest[len - 1]);)
		rest[--len] = '\0';
	if (!strcmp(keyword, "name"))
		return depth ? true : set_name(word, rest, err, size);
	if (!strcmp(keyword, "include")) {
		if (!word || *rest) {
			snprintf(err, size, "'include' wants one file");
			return false;
		}
		return include_profile(path, word, depth, err, size);
	}
	if (strcmp(keyword, "lacks") && strcmp(keyword, "deviation")) {
		snprintf(err, size, "unknown keyword '%s' (expected name, include, lacks "
			 "or deviation)", keyword);
		return false;
	}
	if (!word || !*rest) {
		snprintf(err, size, "'%s' wants a %s and a reason", keyword,
			 keyword[0] == 'l' ? "capability" : "clause id");
		return false;
	}
	return keyword[0] == 'l' ? add_lack(word, rest, err, size) :
				   add_deviation(word, rest, err, size);
}

static int load(const char *path, int depth)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, err[512] = "";
	size_t cap = 0, lineno = 0;
	ssize_t len;
	bool ok = true;

	if (!f) {
		fprintf(stderr, "rdmacheck: cannot read profile %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (ok && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		ok = profile_line(path, depth, line, err, sizeof(err));
	}
	if (!ok)
		fprintf(stderr, "rdmacheck: %s:%zu: %s\n", path, lineno, err);
	else if (ferror(f))
		fprintf(stderr, "rdmacheck: cannot read profile %s: %s\n", path,
			strerror(errno));
	ok = ok && !ferror(f);
	free(line);
	fclose(f);
	return ok ? 0 : -1;
}

int rc_profile_load(const char *path)
{
	if (load(path, 0))
		return -1;
	if (!profile.name) {
		fprintf(stderr, "rdmacheck: %s: no 'name NAME' line\n", path);
		return -1;
	}
	return 0;
}
