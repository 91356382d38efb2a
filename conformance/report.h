/* The runner's results and the reports written from them: TAP, JUnit XML,
 * the results TSV, and the Markdown clause matrix merged from TSV files. */
#ifndef RDMACHECK_REPORT_H
#define RDMACHECK_REPORT_H

#include <stdio.h>

#include "suite.h"

enum rc_verdict { RC_PASS, RC_FAIL, RC_SKIPPED };

/* What the test said through rc_note_documented(): nothing, or the AND of
 * every call. */
enum rc_documented { RC_DOC_UNREPORTED, RC_DOC_HELD, RC_DOC_NOT_HELD };

#define RC_REASON_MAX 512

struct rc_result {
	const struct rc_test *test;
	enum rc_verdict verdict;
	enum rc_documented documented;
	char reason[RC_REASON_MAX]; /* skip reason or one-line failure summary */
	char *output;               /* captured stdout+stderr, NUL-terminated */
	double seconds;
};

struct rc_run {
	const char *backend;
	const char *binary;
	const struct rc_result *results;
	size_t count;
	double seconds;
};

/* Each writer returns 0, or -1 with errno set when a write failed. */
int rc_write_tap(FILE *f, const struct rc_run *run);
int rc_write_junit(FILE *f, const struct rc_run *run);
int rc_write_results(FILE *f, const struct rc_run *run);

/* One --column of the matrix: a heading and the results file it shows. */
struct rc_column {
	const char *name;
	const char *path;
};

/* Reads every column's results file and writes the clause matrix to out_path
 * ("-" for stdout). Problems are reported on stderr, naming the file;
 * returns 0 on success, -1 otherwise. */
int rc_write_matrix(const char *out_path, const struct rc_column *columns,
		    size_t ncolumns);

const char *rc_verdict_name(enum rc_verdict v);
const char *rc_documented_name(enum rc_documented d);

#endif
