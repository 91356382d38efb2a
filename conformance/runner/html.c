/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --report FILE: the run as one self-contained HTML page a vendor can
 * attach: the device and the software under it, the counts, each clause's
 * outcome in colour with its tests, its text and source and the profile's
 * evidence, and with --baseline the clauses whose outcome changed since an
 * earlier run's results. No script, no external file; well-formed XML as
 * well as HTML, so that CI checks it with xmllint and tidy. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

static const char *const outcome_names[RC_VERDICTS + 1] = {
	[RC_PASS] = "pass", [RC_FAIL] = "fail", [RC_SKIPPED] = "skip",
	[RC_DEVIATION] = "documented difference", [RC_VERDICTS] = "not run",
};
static const char *const outcome_class[RC_VERDICTS + 1] = {
	[RC_PASS] = "pass", [RC_FAIL] = "fail", [RC_SKIPPED] = "skip",
	[RC_DEVIATION] = "dev", [RC_VERDICTS] = "none",
};

static void html_put(FILE *f, const char *text)
{
	for (; text && *text; text++) {
		switch (*text) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* Control characters are not text in either HTML or XML. */
			if ((unsigned char)*text < 0x20 && *text != '\n' && *text != '\t')
				fputc('?', f);
			else
				fputc(*text, f);
		}
	}
}

static void row(FILE *f, const char *name, const char *value)
{
	fputs("<tr><th>", f);
	html_put(f, name);
	fputs("</th><td>", f);
	html_put(f, value && *value ? value : "(not known)");
	fputs("</td></tr>\n", f);
}

/* The device as fixtures/record.c describes it: its comment lines (device,
 * kernel, libibverbs) and its attr lines. NULL where the binary has no
 * fixtures or the device could not be read. */
static char *device_text(void)
{
	char *text = NULL;
	size_t size = 0;
	FILE *m;
	int rc;

	if (!rc_record_device || !(m = open_memstream(&text, &size)))
		return NULL;
	rc = rc_record_device(m);
	fclose(m);
	if (rc) {
		free(text);
		return NULL;
	}
	return text;
}

/* The rest of the line in text that starts with prefix, into dst. */
static void line_after(const char *text, const char *prefix, char *dst, size_t size)
{
	const char *at = text ? strstr(text, prefix) : NULL;

	*dst = '\0';
	if (at && (at == text || at[-1] == '\n')) {
		at += strlen(prefix);
		snprintf(dst, size, "%.*s", (int)strcspn(at, "\n"), at);
	}
}

static const char *style =
	"body{font-family:sans-serif;margin:1.5em;color:#222}"
	"table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25em .5em;"
	"vertical-align:top;text-align:left}table.facts th{background:#f4f4f4}"
	"td.o{font-weight:bold;white-space:nowrap}"
	".pass{background:#d4edda}.fail{background:#f8d7da}.skip{background:#e9ecef}"
	".dev{background:#fff3cd}.none{background:#fff}"
	"ul{margin:0;padding-left:1.2em}details p{margin:.3em 0}"
	"code{font-size:90%}pre{background:#f8f8f8;padding:.5em}";

static void counts_cell(FILE *f, const struct rc_run *run)
{
	size_t n[RC_VERDICTS] = { 0 };

	for (size_t i = 0; i < run->count; i++)
		n[run->results[i].verdict]++;
	fputs("<tr><th>tests</th><td>", f);
	fprintf(f, "<span class=\"pass\">%zu passed</span> <span class=\"fail\">%zu failed</span> "
		"<span class=\"skip\">%zu skipped</span> <span class=\"dev\">%zu documented "
		"difference%s</span>, %zu in all, %.1f s</td></tr>\n",
		n[RC_PASS], n[RC_FAIL], n[RC_SKIPPED], n[RC_DEVIATION], n[RC_DEVIATION] == 1 ? "" : "s",
		run->count, run->seconds);
}

static void header(FILE *f, const struct rc_run *run, const char *device)
{
	char name[256], title[256], kernel[256], lib[512], when[64];
	time_t now = time(NULL);

	line_after(device, "# device ", name, sizeof name);
	line_after(device, "# kernel ", kernel, sizeof kernel);
	line_after(device, "# libibverbs: ", lib, sizeof lib);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	snprintf(title, sizeof title, "%.*s", (int)strcspn(*name ? name : run->backend, " "),
		 *name ? name : run->backend);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>rdmacheck: ", f);
	html_put(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>rdmacheck report: ", style);
	html_put(f, title);
	fputs("</h1>\n<table class=\"facts\">\n", f);
	row(f, "device", name);
	row(f, "kernel", kernel);
	row(f, "libibverbs", lib);
	row(f, "backend", run->backend);
	row(f, "device profile", run->profile ? run->profile : "none");
	row(f, "suite", run->binary);
	row(f, "written", when);
	counts_cell(f, run);
	fputs("</table>\n", f);
	if (device) {
		fputs("<details><summary>the device's attributes, as <code>--record-profile</code> "
		      "writes them</summary>\n<pre>", f);
		html_put(f, device);
		fputs("</pre></details>\n", f);
	}
}

/* The clause's outcome in this run, from its tests. */
static enum rc_verdict outcome_of(const struct rc_run *run, int clause)
{
	unsigned n[RC_VERDICTS] = { 0 };

	for (size_t i = 0; i < run->count; i++)
		if ((int)run->results[i].test->clause == clause)
			n[run->results[i].verdict]++;
	return rc_clause_outcome(n[RC_PASS], n[RC_FAIL], n[RC_SKIPPED], n[RC_DEVIATION]);
}

static void changes(FILE *f, const struct rc_run *run, const enum rc_verdict *before,
		    const char *baseline)
{
	bool any = false;

	fputs("<h2>Changes since ", f);
	html_put(f, baseline);
	fputs("</h2>\n", f);
	for (int k = 0; k < CL__COUNT; k++) {
		enum rc_verdict now = outcome_of(run, k);

		if (now == before[k])
			continue;
		fputs(any ? "" : "<ul>\n", f);
		fprintf(f, "<li><a href=\"#%s\">%s</a>: <span class=\"%s\">%s</span> before, "
			"<span class=\"%s\">%s</span> now</li>\n", rc_clauses[k].id, rc_clauses[k].id,
			outcome_class[before[k]], outcome_names[before[k]], outcome_class[now],
			outcome_names[now]);
		any = true;
	}
	fputs(any ? "</ul>\n" : "<p>No clause's outcome changed.</p>\n", f);
}

static void clause_details(FILE *f, int k)
{
	const struct rc_clause *c = &rc_clauses[k];
	const char *why = rc_profile_deviation(k);

	fputs("<details><summary>the clause and its evidence</summary>\n<p>", f);
	html_put(f, c->text);
	fputs("</p>\n<p><b>Source:</b> ", f);
	html_put(f, c->source);
	fputs("</p>\n", f);
	if (c->upstream) {
		fputs("<p><b>Upstream:</b> ", f);
		html_put(f, c->upstream);
		fputs("</p>\n", f);
	}
	if (c->note) {
		fputs("<p><b>What the tests check:</b> ", f);
		html_put(f, c->note);
		fputs("</p>\n", f);
	}
	if (why) {
		fputs("<p><b>The device profile's deviation:</b> ", f);
		html_put(f, why);
		fputs("</p>\n", f);
	}
	fputs("</details>", f);
}

static void clause_row(FILE *f, const struct rc_run *run, int k, const enum rc_verdict *before)
{
	enum rc_verdict now = outcome_of(run, k);

	fprintf(f, "<tr id=\"%s\"><td><a href=\"#%s\"><code>%s</code></a></td><td><code>", rc_clauses[k].id,
		rc_clauses[k].id, rc_clauses[k].id);
	html_put(f, rc_clauses[k].function);
	fprintf(f, "</code></td><td class=\"o %s\">%s</td>", outcome_class[now], outcome_names[now]);
	if (before)
		fprintf(f, "<td class=\"o %s\">%s</td>", outcome_class[before[k]], outcome_names[before[k]]);
	fputs("<td><ul>", f);
	for (size_t i = 0; i < run->count; i++) {
		const struct rc_result *r = &run->results[i];

		if ((int)r->test->clause != k)
			continue;
		fprintf(f, "<li><code>%s</code>: <span class=\"%s\">%s</span>", r->test->name,
			outcome_class[r->verdict], outcome_names[r->verdict]);
		if (r->reason[0]) {
			fputs(": ", f);
			html_put(f, r->reason);
		}
		fputs("</li>", f);
	}
	fputs("</ul>\n", f);
	clause_details(f, k);
	fputs("</td></tr>\n", f);
}

int rc_write_html(FILE *f, const struct rc_run *run, const char *baseline)
{
	enum rc_verdict *before = NULL;
	char *device = device_text();

	if (baseline) {
		before = calloc(CL__COUNT, sizeof(*before));
		if (!before || rc_load_outcomes(baseline, before, NULL, 0)) {
			free(before);
			free(device);
			return RC_REPORT_BAD_BASELINE;
		}
	}
	header(f, run, device);
	if (before)
		changes(f, run, before, baseline);
	fputs("<h2>Clauses</h2>\n<p>Each clause the run reached, in the registry's order: "
	      "<span class=\"pass\">pass</span>, <span class=\"fail\">fail</span>, "
	      "<span class=\"skip\">skip</span> (the reason says what the device lacks or "
	      "what the run was not set up for), <span class=\"dev\">documented difference</span> "
	      "(a failure the device profile declares, with its evidence).</p>\n"
	      "<table class=\"matrix\">\n<thead><tr><th>clause</th><th>call</th><th>outcome</th>", f);
	if (before)
		fputs("<th>before</th>", f);
	fputs("<th>tests, clause text and evidence</th></tr></thead>\n<tbody>\n", f);
	for (int k = 0; k < CL__COUNT; k++)
		if (outcome_of(run, k) != RC_VERDICTS)
			clause_row(f, run, k, before);
	fputs("</tbody>\n</table>\n</body>\n</html>\n", f);
	free(before);
	free(device);
	return ferror(f) ? -1 : 0;
}
