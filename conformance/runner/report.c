/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The reports: TAP for prove, one JUnit XML document, the results TSV, and
 * the Markdown clause matrix merged from results TSV files. Every writer
 * leaves errors to the stream's error flag; the caller checks it. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *rc_verdict_name(enum rc_verdict v)
{
	static const char *const names[] = {
		[RC_PASS] = "pass", [RC_FAIL] = "fail", [RC_SKIPPED] = "skip",
		[RC_DEVIATION] = "deviation",
	};
	return names[v];
}

const char *rc_documented_name(enum rc_documented d)
{
	static const char *const names[] = {
		[RC_DOC_UNREPORTED] = "-", [RC_DOC_HELD] = "held",
		[RC_DOC_NOT_HELD] = "not-held",
	};
	return names[d];
}

static int stream_status(FILE *f)
{
	return ferror(f) ? -1 : 0;
}

static void count_verdicts(const struct rc_run *run,
			   size_t counts[RC_VERDICTS])
{
	memset(counts, 0, RC_VERDICTS * sizeof(counts[0]));
	for (size_t i = 0; i < run->count; i++)
		counts[run->results[i].verdict]++;
}

/* ------------------------------------------------------------ TAP */

static void tap_diagnostics(FILE *f, const char *text)
{
	while (*text) {
		int len = (int)strcspn(text, "\n");

		fprintf(f, "# %.*s\n", len, text);
		text += len + (text[len] == '\n');
	}
}

int rc_write_tap(FILE *f, const struct rc_run *run)
{
	fprintf(f, "TAP version 13\n1..%zu\n", run->count);
	for (size_t i = 0; i < run->count; i++) {
		const struct rc_result *r = &run->results[i];
		size_t n = i + 1;

		if (r->verdict == RC_PASS) {
			fprintf(f, "ok %zu - %s\n", n, r->test->name);
			if (r->reason[0]) /* a stale deviation */
				fprintf(f, "# %s\n", r->reason);
		} else if (r->verdict == RC_DEVIATION) {
			/* prove counts a failing TODO test as expected */
			fprintf(f, "not ok %zu - %s # TODO known deviation: %s\n"
				"# clause %s\n", n, r->test->name, r->reason,
				rc_clauses[r->test->clause].id);
		} else if (r->verdict == RC_SKIPPED) {
			fprintf(f, "ok %zu - %s # SKIP %s\n", n, r->test->name,
				r->reason);
		} else {
			fprintf(f, "not ok %zu - %s\n# %s\n# clause %s\n", n,
				r->test->name, r->reason,
				rc_clauses[r->test->clause].id);
			tap_diagnostics(f, r->output);
		}
		if (r->documented != RC_DOC_UNREPORTED)
			fprintf(f, "# documented rule: %s\n",
				rc_documented_name(r->documented));
	}
	fprintf(f, "# backend %s%s%s, binary %s\n", run->backend,
		run->profile ? ", profile " : "",
		run->profile ? run->profile : "", run->binary);
	return stream_status(f);
}

/* ------------------------------------------------------------ JUnit XML */

/* Length of the UTF-8 sequence at s if it encodes a character XML 1.0
 * allows, else 0. ASCII is left to the caller. */
static size_t xml_utf8_len(const unsigned char *s)
{
	size_t len;
	unsigned long cp;

	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2, cp = s[0] & 0x1F;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		len = 3, cp = s[0] & 0x0F;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ||
	    cp == 0xFFFE || cp == 0xFFFF)
		return 0;
	return len;
}

/* Escapes markup; drops control characters XML 1.0 forbids and replaces
 * malformed UTF-8 with U+FFFD, since captured output can hold any byte. In
 * attributes, whitespace is escaped so that it survives normalisation. */
static void xml_put(FILE *f, const char *text, bool attribute)
{
	const unsigned char *s = (const unsigned char *)text;

	while (*s) {
		size_t len;

		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\r': fputs("&#13;", f); break;
		case '\n': fputs(attribute ? "&#10;" : "\n", f); break;
		case '\t': fputs(attribute ? "&#9;" : "\t", f); break;
		default:
			if (*s >= 0x80) {
				len = xml_utf8_len(s);
				if (len) {
					fwrite(s, 1, len, f);
					s += len;
					continue;
				}
				fputs("\xEF\xBF\xBD", f);
			} else if (*s >= 0x20) {
				fputc(*s, f);
			}
		}
		s++;
	}
}

static void junit_testcase(FILE *f, const struct rc_run *run,
			   const struct rc_result *r)
{
	const struct rc_clause *c = &rc_clauses[r->test->clause];

	fputs("    <testcase classname=\"", f);
	xml_put(f, run->backend, true);
	fputc('.', f);
	xml_put(f, c->function, true);
	fprintf(f, "\" name=\"%s\" time=\"%.3f\">\n", r->test->name,
		r->seconds);
	if (r->verdict == RC_FAIL) {
		fputs("      <failure message=\"", f);
		xml_put(f, r->reason, true);
		fputs("\">clause ", f);
		xml_put(f, c->id, false);
		fputs(": ", f);
		xml_put(f, c->text, false);
		fputs("\n", f);
		xml_put(f, r->output, false);
		fputs("</failure>\n", f);
	} else if (r->verdict != RC_PASS) {
		fputs("      <skipped message=\"", f);
		if (r->verdict == RC_DEVIATION)
			fputs("known deviation: ", f);
		xml_put(f, r->reason, true);
		fputs("\"/>\n", f);
	}
	if (r->verdict != RC_FAIL && r->output[0]) {
		fputs("      <system-out>", f);
		xml_put(f, r->output, false);
		fputs("</system-out>\n", f);
	}
	fputs("    </testcase>\n", f);
}

int rc_write_junit(FILE *f, const struct rc_run *run)
{
	size_t counts[RC_VERDICTS];

	count_verdicts(run, counts);
	counts[RC_SKIPPED] += counts[RC_DEVIATION]; /* written as <skipped> */
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<testsuites name=\"rdmacheck\" tests=\"%zu\" "
		"failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
		run->count, counts[RC_FAIL], counts[RC_SKIPPED], run->seconds);
	fputs("  <testsuite name=\"rdmacheck-", f);
	xml_put(f, run->backend, true);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		"skipped=\"%zu\" time=\"%.3f\">\n",
		run->count, counts[RC_FAIL], counts[RC_SKIPPED], run->seconds);
	for (size_t i = 0; i < run->count; i++)
		junit_testcase(f, run, &run->results[i]);
	fputs("  </testsuite>\n</testsuites>\n", f);
	return stream_status(f);
}

/* ------------------------------------------------------------ results TSV */

#define RESULTS_HEADER "# rdmacheck results backend="
#define PROFILE_FIELD " profile="

/* A TSV field: tabs and line breaks would split the record. */
static void tsv_put(FILE *f, const char *text)
{
	for (; *text; text++)
		fputc(strchr("\t\r\n", *text) ? ' ' : *text, f);
}

int rc_write_results(FILE *f, const struct rc_run *run)
{
	fprintf(f, RESULTS_HEADER "%s", run->backend);
	if (run->profile)
		fprintf(f, PROFILE_FIELD "%s", run->profile);
	fputc('\n', f);
	for (size_t i = 0; i < run->count; i++) {
		const struct rc_result *r = &run->results[i];

		fprintf(f, "%s\t%s\t%s\t%s\t", r->test->name,
			rc_clauses[r->test->clause].id,
			rc_verdict_name(r->verdict),
			rc_documented_name(r->documented));
		tsv_put(f, r->reason);
		fputc('\n', f);
	}
	return stream_status(f);
}

/* ------------------------------------------------------------ matrix */

/* One clause's tests in one results file. */
struct cell {
	unsigned pass, fail, skip, deviation;
	unsigned held; /* run (not skipped) tests whose documented rule held */
	char first_skip[RC_REASON_MAX];
	char first_fail[RC_REASON_MAX + 128]; /* "test: reason" */
};

struct column_data {
	const struct rc_column *column;
	char backend[64], profile[64];
	struct cell *cells; /* CL__COUNT, registry order */
};

static int find_clause(const char *id)
{
	for (int i = 0; i < CL__COUNT; i++)
		if (!strcmp(rc_clauses[i].id, id))
			return i;
	return -1;
}

static int parse_verdict(const char *s)
{
	for (int v = RC_PASS; v < RC_VERDICTS; v++)
		if (!strcmp(s, rc_verdict_name(v)))
			return v;
	return -1;
}

static int parse_documented(const char *s)
{
	for (int d = RC_DOC_UNREPORTED; d <= RC_DOC_NOT_HELD; d++)
		if (!strcmp(s, rc_documented_name(d)))
			return d;
	return -1;
}

static void add_to_cell(struct cell *c, int verdict, const char *test,
			const char *reason)
{
	switch (verdict) {
	case RC_PASS:
		c->pass++;
		break;
	case RC_DEVIATION:
		c->deviation++;
		break;
	case RC_FAIL:
		if (!c->fail++)
			snprintf(c->first_fail, sizeof(c->first_fail),
				 "%.*s: %s", 120, test, reason);
		break;
	default:
		if (!c->skip++)
			snprintf(c->first_skip, sizeof(c->first_skip), "%s",
				 reason);
	}
}

/* Adds one "test clause verdict documented reason" record to its cell.
 * Returns an error message, or NULL. */
static const char *add_record(char *line, struct column_data *d,
			      const char **bad_clause)
{
	char *field[5];
	int clause, verdict, documented;

	for (int i = 0; i < 5; i++) {
		field[i] = strsep(&line, "\t");
		if (!field[i])
			return "expected 5 tab-separated fields";
	}
	clause = find_clause(field[1]);
	if (clause < 0) {
		*bad_clause = field[1];
		return "clause is not in this binary's registry";
	}
	verdict = parse_verdict(field[2]);
	documented = parse_documented(field[3]);
	if (verdict < 0)
		return "verdict is not pass, fail, skip or deviation";
	if (documented < 0)
		return "documented is not -, held or not-held";
	add_to_cell(&d->cells[clause], verdict, field[0], field[4]);
	if (verdict != RC_SKIPPED && documented == RC_DOC_HELD)
		d->cells[clause].held++;
	return NULL;
}

/* "backend=real profile=rxe", the header after RESULTS_HEADER's "backend=". */
static void parse_header(const char *fields, struct column_data *d)
{
	const char *profile = strstr(fields, PROFILE_FIELD);
	int len = profile ? (int)(profile - fields) : (int)strlen(fields);

	snprintf(d->backend, sizeof(d->backend), "%.*s", len, fields);
	snprintf(d->profile, sizeof(d->profile), "%s",
		 profile ? profile + strlen(PROFILE_FIELD) : "");
}

static int load_results(struct column_data *d)
{
	const char *path = d->column->path;
	const char *problem = NULL, *bad_clause = NULL;
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	bool ok;

	if (!f) {
		fprintf(stderr, "rdmacheck: --column %s: cannot open %s: %s\n",
			d->column->name, path, strerror(errno));
		return -1;
	}
	while (!problem && (len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (++lineno == 1) {
			if (strncmp(line, RESULTS_HEADER, strlen(RESULTS_HEADER)))
				problem = "not an rdmacheck results file "
					  "(no '" RESULTS_HEADER "' line)";
			else
				parse_header(line + strlen(RESULTS_HEADER), d);
		} else if (line[0] && line[0] != '#') {
			problem = add_record(line, d, &bad_clause);
		}
	}
	if (!problem && ferror(f))
		fprintf(stderr, "rdmacheck: cannot read %s: %s\n", path,
			strerror(errno));
	else if (!problem && lineno == 0)
		fprintf(stderr, "rdmacheck: %s: empty, not a results file\n", path);
	else if (problem && bad_clause)
		fprintf(stderr, "rdmacheck: %s:%zu: %s: %s\n", path, lineno,
			bad_clause, problem);
	else if (problem)
		fprintf(stderr, "rdmacheck: %s:%zu: %s\n", path, lineno, problem);
	ok = !problem && !ferror(f) && lineno > 0;
	free(line);
	fclose(f);
	return ok ? 0 : -1;
}

/* ------------------------------------------------------------ matrix */

/* Markdown text: '<' would open an HTML tag; in a table cell a pipe would
 * end the cell and a newline the row. */
static void md_put(FILE *f, const char *text, bool in_table)
{
	for (; text && *text; text++) {
		if (*text == '<')
			fputs("&lt;", f);
		else if (*text == '|' && in_table)
			fputs("\\|", f);
		else if ((*text == '\n' || *text == '\r') && in_table)
			fputc(' ', f);
		else
			fputc(*text, f);
	}
}

static void md_cell(FILE *f, const char *text)
{
	fputc(' ', f);
	md_put(f, text, true);
	fputs(" |", f);
}

static void cell_text(const struct cell *c, bool divergent, char *dst,
		      size_t size)
{
	unsigned run = c->pass + c->fail + c->deviation, total = run + c->skip;
	int n;

	if (total == 0)
		n = snprintf(dst, size, "—");
	else if (c->fail)
		n = snprintf(dst, size, "FAIL (%u/%u)", c->fail, total);
	else if (c->deviation)
		n = snprintf(dst, size, "deviation (%u/%u)", c->deviation, total);
	else if (!c->pass)
		n = snprintf(dst, size, "skip: %s", c->first_skip);
	else if (c->skip)
		n = snprintf(dst, size, "pass (%u/%u, %u skip)", c->pass, total,
			     c->skip);
	else
		n = snprintf(dst, size, "pass");
	if (divergent && run && c->held == run && n >= 0 && (size_t)n < size)
		snprintf(dst + n, size - n, "; documented holds → stale divergence");
}

static void matrix_row(FILE *f, int clause, const struct column_data *cols,
		       size_t ncols)
{
	const struct rc_clause *c = &rc_clauses[clause];
	char text[RC_REASON_MAX + 128];

	fprintf(f, "| `%s` |", c->id);
	md_cell(f, c->function);
	md_cell(f, c->source);
	md_cell(f, c->text);
	for (size_t i = 0; i < ncols; i++) {
		cell_text(&cols[i].cells[clause], c->upstream != NULL, text,
			  sizeof(text));
		md_cell(f, text);
	}
	fputc(' ', f);
	if (c->upstream)
		fputs("diverges from the documentation: ", f);
	md_put(f, c->note ? c->note : c->upstream, true);
	fputs(" |\n", f);
}

static void matrix_divergence(FILE *f, const struct rc_clause *c)
{
	fprintf(f, "\n### `%s` (", c->id);
	md_put(f, c->function, false);
	fputs(")\n\n- Documented (", f);
	md_put(f, c->source, false);
	fputs("): ", f);
	md_put(f, c->text, false);
	fputs("\n- Upstream: ", f);
	md_put(f, c->upstream, false);
	fputs("\n- Note: ", f);
	md_put(f, c->note ? c->note : "none", false);
	fputc('\n', f);
}

static void matrix_divergences(FILE *f)
{
	bool any = false;

	fputs("\n## Divergences\n", f);
	for (int i = 0; i < CL__COUNT; i++) {
		if (!rc_clauses[i].upstream)
			continue;
		any = true;
		matrix_divergence(f, &rc_clauses[i]);
	}
	if (!any)
		fputs("\nNo clause diverges from its documentation.\n", f);
}

/* ------------------------------------------------------------ --compare */

/* A clause passes in a column when every test of it that ran passed; a
 * skip says why it did not run and a deviation is declared, so neither
 * makes a difference. */
static bool cell_passed(const struct cell *c)
{
	return c->pass && !c->fail && !c->deviation;
}

static bool cell_empty(const struct cell *c)
{
	return !(c->pass + c->fail + c->skip + c->deviation);
}

/* One clause where the base column and another disagree: one passes and
 * the other fails (a difference), or the base passes and the other has no
 * result at all (missing coverage, a warning). */
struct finding {
	int clause;
	const struct column_data *other;
	bool missing;
};

struct comparison {
	const struct column_data *base;
	struct finding *findings;
	size_t count, differences;
};

static void compare_columns(const struct column_data *cols, size_t ncols,
			    struct comparison *cmp)
{
	for (int k = 0; k < CL__COUNT; k++) {
		const struct cell *b = &cmp->base->cells[k];

		for (size_t i = 0; i < ncols; i++) {
			const struct cell *o = &cols[i].cells[k];
			bool differs = (cell_passed(b) && o->fail) ||
				       (b->fail && cell_passed(o));
			bool missing = cell_passed(b) && cell_empty(o);

			if (&cols[i] == cmp->base || (!differs && !missing))
				continue;
			cmp->findings[cmp->count++] =
				(struct finding){ k, &cols[i], missing };
			cmp->differences += differs;
		}
	}
}

/* "CLAUSE: mock=pass rxe=FAIL (first failing test: NAME: reason)" */
static void finding_text(const struct comparison *cmp,
			 const struct finding *fd, char *dst, size_t size)
{
	const struct cell *b = &cmp->base->cells[fd->clause];
	const struct cell *o = &fd->other->cells[fd->clause];

	if (fd->missing) {
		snprintf(dst, size, "%s: %s=pass %s=— (no result)",
			 rc_clauses[fd->clause].id, cmp->base->column->name,
			 fd->other->column->name);
		return;
	}
	snprintf(dst, size, "%s: %s=%s %s=%s (first failing test: %s)",
		 rc_clauses[fd->clause].id, cmp->base->column->name,
		 b->fail ? "FAIL" : "pass", fd->other->column->name,
		 o->fail ? "FAIL" : "pass", b->fail ? b->first_fail : o->first_fail);
}

static void comparison_list(FILE *f, const struct comparison *cmp,
			    bool missing, const char *none)
{
	char text[2 * RC_REASON_MAX];
	bool any = false;

	for (size_t i = 0; i < cmp->count; i++) {
		if (cmp->findings[i].missing != missing)
			continue;
		finding_text(cmp, &cmp->findings[i], text, sizeof(text));
		fputs(any ? "- " : "\n- ", f);
		md_put(f, text, false);
		fputc('\n', f);
		any = true;
	}
	if (!any && none)
		fprintf(f, "\n%s\n", none);
}

static void matrix_comparison(FILE *f, const struct comparison *cmp)
{
	fputs("\n## Mock vs real\n\nColumn ", f);
	md_put(f, cmp->base->column->name, false);
	fputs(" compared with each other column. A clause differs where it "
	      "passes in one and fails in the other; skips (each with its "
	      "reason) and known deviations (declared in a device profile) "
	      "are no difference.\n", f);
	comparison_list(f, cmp, false, "No clause differs.");
	if (cmp->count > cmp->differences) {
		fputs("\nNot covered (a warning, not a failure): the clause "
		      "passes in ", f);
		md_put(f, cmp->base->column->name, false);
		fputs(" and has no result in the other column.\n", f);
		comparison_list(f, cmp, true, NULL);
	}
}

static void print_comparison(const struct comparison *cmp)
{
	char text[2 * RC_REASON_MAX];

	for (size_t i = 0; i < cmp->count; i++) {
		finding_text(cmp, &cmp->findings[i], text, sizeof(text));
		fprintf(stderr, "%s: %s\n",
			cmp->findings[i].missing ? "warning" : "differs", text);
	}
}

/* The calls the mock implements (generated from mock/LIB/LIB.calls); weak:
 * the runner's self-test has none and its matrix no coverage line. */
extern const char *const rc_impl_calls[] __attribute__((weak));

/* Whether a clause's function field, one call or several separated by
 * ", " (a rule about calls that work together), names call. */
static bool names_call(const char *functions, const char *call)
{
	size_t len = strlen(call);

	for (const char *p = functions; p; p = strstr(p, ", ")) {
		if (p != functions)
			p += 2;
		if (!strncmp(p, call, len) && (p[len] == '\0' || p[len] == ','))
			return true;
	}
	return false;
}

static int clauses_of(const char *call)
{
	int n = 0;

	for (int i = 0; i < CL__COUNT; i++)
		n += names_call(rc_clauses[i].function, call);
	return n;
}

/* How many implemented calls have a clause, and how many each has. */
static void matrix_coverage(FILE *f)
{
	int calls = 0, covered = 0, clauses = 0;

	if (!rc_impl_calls)
		return;
	for (const char *const *c = rc_impl_calls; *c; c++) {
		int n = clauses_of(*c);

		calls++;
		covered += n > 0;
		clauses += n;
	}
	fprintf(f, "\n## Coverage\n\n%d of the mock's %d implemented calls have at least one "
		   "clause (%d clauses on them, of %d in all).\n\n| Call | Clauses |\n|---|---|\n",
		covered, calls, clauses, CL__COUNT);
	for (const char *const *c = rc_impl_calls; *c; c++)
		fprintf(f, "| %s | %d |\n", *c, clauses_of(*c));
}

static void matrix_write(FILE *f, const struct column_data *cols, size_t ncols,
			 const struct comparison *cmp)
{
	fputs("# rdmacheck clause matrix\n\nColumns:", f);
	for (size_t i = 0; i < ncols; i++) {
		fprintf(f, "%s ", i ? "," : "");
		md_put(f, cols[i].column->name, false);
		fputs(" (", f);
		md_put(f, cols[i].column->path, false);
		fputs(", backend ", f);
		md_put(f, cols[i].backend, false);
		if (cols[i].profile[0]) {
			fputs(", profile ", f);
			md_put(f, cols[i].profile, false);
		}
		fputc(')', f);
	}
	fputs(".\n\n| Clause | Function | Source | Rule |", f);
	for (size_t i = 0; i < ncols; i++)
		md_cell(f, cols[i].column->name);
	fputs(" Notes |\n|---|---|---|---|", f);
	for (size_t i = 0; i < ncols; i++)
		fputs("---|", f);
	fputs("---|\n", f);
	for (int i = 0; i < CL__COUNT; i++)
		matrix_row(f, i, cols, ncols);
	if (cmp)
		matrix_comparison(f, cmp);
	matrix_coverage(f);
	matrix_divergences(f);
}

static int matrix_output(const char *out_path, const struct column_data *cols,
			 size_t ncols, const struct comparison *cmp)
{
	bool to_stdout = !strcmp(out_path, "-");
	FILE *f = to_stdout ? stdout : fopen(out_path, "w");
	int rc;

	if (!f) {
		fprintf(stderr, "rdmacheck: cannot open %s: %s\n", out_path,
			strerror(errno));
		return -1;
	}
	errno = 0;
	matrix_write(f, cols, ncols, cmp);
	rc = ferror(f) ? -1 : 0;
	if ((to_stdout ? fflush(f) : fclose(f)) != 0)
		rc = -1;
	if (rc)
		fprintf(stderr, "rdmacheck: cannot write %s: %s\n",
			to_stdout ? "stdout" : out_path,
			strerror(errno ? errno : EIO));
	return rc;
}

/* Compares column `base` with the others; -1 if there is no such column. */
static int compare_with(const char *base, const struct column_data *cols,
			size_t ncols, struct comparison *cmp)
{
	for (size_t i = 0; i < ncols && !cmp->base; i++)
		if (!strcmp(cols[i].column->name, base))
			cmp->base = &cols[i];
	if (!cmp->base) {
		fprintf(stderr, "rdmacheck: --compare %s: no such column\n", base);
		return -1;
	}
	cmp->findings = calloc((size_t)CL__COUNT * ncols, sizeof(*cmp->findings));
	if (!cmp->findings) {
		fputs("rdmacheck: out of memory\n", stderr);
		return -1;
	}
	compare_columns(cols, ncols, cmp);
	return 0;
}

int rc_write_matrix(const char *out_path, const struct rc_column *columns,
		    size_t ncolumns, const char *compare)
{
	struct column_data *cols = calloc(ncolumns, sizeof(*cols));
	struct comparison cmp = { 0 };
	int rc = 0;

	for (size_t i = 0; cols && i < ncolumns && !rc; i++) {
		cols[i].column = &columns[i];
		cols[i].cells = calloc(CL__COUNT + 1, sizeof(struct cell));
		rc = cols[i].cells ? load_results(&cols[i]) : -1;
		if (!cols[i].cells)
			fputs("rdmacheck: out of memory\n", stderr);
	}
	if (!cols) {
		fputs("rdmacheck: out of memory\n", stderr);
		rc = -1;
	}
	if (!rc && compare)
		rc = compare_with(compare, cols, ncolumns, &cmp);
	if (!rc)
		rc = matrix_output(out_path, cols, ncolumns,
				   compare ? &cmp : NULL);
	if (!rc && compare) {
		print_comparison(&cmp);
		rc = cmp.differences ? 1 : 0;
	}
	for (size_t i = 0; cols && i < ncolumns; i++)
		free(cols[i].cells);
	free(cols);
	free(cmp.findings);
	return rc;
}

/* ------------------------------------------------------------ outcomes */

enum rc_verdict rc_clause_outcome(unsigned pass, unsigned fail, unsigned skip, unsigned deviation)
{
	if (fail)
		return RC_FAIL;
	if (deviation)
		return RC_DEVIATION;
	if (pass)
		return RC_PASS;
	return skip ? RC_SKIPPED : RC_VERDICTS;
}

int rc_load_outcomes(const char *path, enum rc_verdict *outcome, char *profile, size_t size)
{
	struct rc_column column = { "baseline", path };
	struct column_data d = { &column, "", "", calloc(CL__COUNT, sizeof(struct cell)) };
	int rc;

	if (!d.cells) {
		fputs("rdmacheck: out of memory\n", stderr);
		return -1;
	}
	rc = load_results(&d);
	for (int k = 0; !rc && k < CL__COUNT; k++) {
		const struct cell *c = &d.cells[k];

		outcome[k] = rc_clause_outcome(c->pass, c->fail, c->skip, c->deviation);
	}
	if (!rc && profile)
		snprintf(profile, size, "%s", d.profile);
	free(d.cells);
	return rc;
}
