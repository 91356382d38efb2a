/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The runner's results and the reports written from them: TAP, JUnit XML,
 * the results TSV, and the Markdown clause matrix merged from TSV files;
 * and the runner's side of the device profile (backend.c). */
#ifndef RDMACHECK_REPORT_H
#define RDMACHECK_REPORT_H

#include <stdio.h>

#include "suite.h"
#include "profile.h"

/* A deviation is a failure of a clause the device profile lists as a known
 * deviation: reported, but it does not fail the run. */
enum rc_verdict { RC_PASS, RC_FAIL, RC_SKIPPED, RC_DEVIATION, RC_VERDICTS };

/* What the test said through rc_note_documented(): nothing, or the AND of
 * every call. */
enum rc_documented { RC_DOC_UNREPORTED, RC_DOC_HELD, RC_DOC_NOT_HELD };

#define RC_REASON_MAX 512

struct rc_result {
	const struct rc_test *test;
	enum rc_verdict verdict;
	enum rc_documented documented;
	/* skip reason, one-line failure summary, deviation reason, or for a
	 * pass "" or "stale deviation" */
	char reason[RC_REASON_MAX];
	char *output;               /* captured stdout+stderr, NUL-terminated */
	double seconds;
};

struct rc_run {
	const char *backend;
	const char *profile; /* the device profile's name, or NULL */
	const char *binary;
	const struct rc_result *results;
	size_t count;
	double seconds;
};

/* Each writer returns 0, or -1 with errno set when a write failed. */
int rc_write_tap(FILE *f, const struct rc_run *run);
int rc_write_junit(FILE *f, const struct rc_run *run);
int rc_write_results(FILE *f, const struct rc_run *run);

/* --record-profile (record.c): a device profile from the run, named after
 * path's last component; partial when -t chose the tests. 0; -1 with errno
 * when a write failed; RC_RECORD_NO_DEVICE when the device's attributes
 * could not be read (said on stderr). rc_skip_capability: the CAP of a skip
 * reason "capability: CAP (...)", false if it names none. */
#define RC_RECORD_NO_DEVICE (-2)
int rc_write_profile(FILE *f, const char *path, const struct rc_run *run, bool partial);
bool rc_skip_capability(const char *reason, char *cap, size_t size);

/* One --column of the matrix: a heading and the results file it shows. */
struct rc_column {
	const char *name;
	const char *path;
};

/* Reads every column's results file and writes the clause matrix to out_path
 * ("-" for stdout). With compare (a column name, or NULL), also compares
 * that column with each other one clause by clause, lists the differences
 * in the matrix and on stderr, and returns 1 if there are any. Problems are
 * reported on stderr, naming the file; returns 0 on success, -1 otherwise. */
int rc_write_matrix(const char *out_path, const struct rc_column *columns,
		    size_t ncolumns, const char *compare);

/* A clause's one outcome from its tests' verdicts: fail if any failed, then
 * a known deviation, then pass; skip when none ran; RC_VERDICTS when it has
 * no test at all. rc_load_outcomes reads a results TSV (--results) into
 * outcome[CL__COUNT] and its profile's name; 0, or -1 after saying why. */
enum rc_verdict rc_clause_outcome(unsigned pass, unsigned fail, unsigned skip, unsigned deviation);
int rc_load_outcomes(const char *path, enum rc_verdict *outcome, char *profile, size_t size);

/* --report FILE (html.c): the run as one self-contained HTML page, with the
 * device (fixtures/record.c, where the binary has fixtures), the clause
 * matrix in colour and, with a baseline results file, what changed. */
#define RC_REPORT_BAD_BASELINE (-2) /* the baseline could not be read (said on stderr) */
int rc_write_html(FILE *f, const struct rc_run *run, const char *baseline);

const char *rc_verdict_name(enum rc_verdict v);
const char *rc_documented_name(enum rc_documented d);

/* The device profile, loaded by the runner before any test forks (backend.c;
 * the tests' side is in suite.h). rc_profile_load reads FILE and returns 0,
 * or -1 after naming the file and line on stderr. rc_profile_deviation is
 * the reason the profile gives for a clause the device fails, or NULL.
 * rc_profile is the whole profile as read (name NULL when none was). */
int rc_profile_load(const char *path);
const char *rc_profile_deviation(enum rc_clause_id clause);
const struct rp_profile *rc_profile(void);

#endif
