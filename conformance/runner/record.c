/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --record-profile FILE: a device profile (fixtures/profile.h) written from
 * a run: the device's attributes as it reported them (fixtures/record.c,
 * where the binary has fixtures), then every outcome that differs from a
 * clean pass: a capability the device lacked (a skip naming it) and a
 * clause it failed. A line the loaded profile already had keeps its reason;
 * a new one says it was recorded and what was seen, for a person to read
 * and sort before the profile is published. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.h"
#include "report.h"

bool rc_skip_capability(const char *reason, char *cap, size_t size)
{
	static const char prefix[] = "capability: ";
	size_t len;

	if (strncmp(reason, prefix, sizeof(prefix) - 1))
		return false;
	reason += sizeof(prefix) - 1;
	len = strspn(reason, RP_CAPABILITY_CHARS);
	if (!len || len >= size || (reason[len] && reason[len] != ' '))
		return false;
	snprintf(cap, size, "%.*s", (int)len, reason);
	return true;
}

/* The profile's name: FILE's last component, in the characters a name
 * may have. */
static void name_of(const char *path, char *name, size_t size)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	snprintf(name, size, "%s", *base ? base : "recorded");
	for (char *c = name; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *c))
			*c = '-';
}

/* The why of a skip "capability: CAP (why) [declared]": its parenthesis,
 * without the suite's "; profile NAME" note. */
static void skip_why(const char *reason, const char *cap, char *why, size_t size)
{
	const char *open = reason + strlen("capability: ") + strlen(cap);
	size_t len;

	open += strspn(open, " ");
	if (*open == '(')
		open++;
	len = strrchr(open, ')') ? (size_t)(strrchr(open, ')') - open) : strlen(open);
	snprintf(why, size, "recorded: %.*s", (int)len, open);
	if (strstr(why, "; profile "))
		*strstr(why, "; profile ") = '\0';
}

static void write_lacks(FILE *f, const struct rc_run *run)
{
	char (*seen)[64] = calloc(run->count ? run->count : 1, sizeof(*seen));
	size_t nseen = 0;

	for (size_t i = 0; seen && i < run->count; i++) {
		const struct rc_result *r = &run->results[i];
		const struct rp_entry *had;
		char cap[64], why[RC_REASON_MAX];
		size_t j;

		if (r->verdict != RC_SKIPPED || !rc_skip_capability(r->reason, cap, sizeof cap))
			continue;
		for (j = 0; j < nseen && strcmp(seen[j], cap); j++)
			;
		if (j < nseen)
			continue;
		memcpy(seen[nseen++], cap, sizeof cap);
		had = rp_lacks(rc_profile(), cap);
		if (had)
			snprintf(why, sizeof why, "%s", had->reason);
		else
			skip_why(r->reason, cap, why, sizeof why);
		fprintf(f, "lacks %-20s %s\n", cap, why);
	}
	free(seen);
}

/* Each clause once, in the registry's order: the profile's reason where
 * it has one, else the first failing test and what it saw. */
static void write_deviations(FILE *f, const struct rc_run *run)
{
	for (int c = 0; c < CL__COUNT; c++) {
		for (size_t i = 0; i < run->count; i++) {
			const struct rc_result *r = &run->results[i];

			if ((int)r->test->clause != c ||
			    (r->verdict != RC_FAIL && r->verdict != RC_DEVIATION))
				continue;
			if (rc_profile_deviation(c))
				fprintf(f, "deviation %s  %s\n", rc_clauses[c].id,
					rc_profile_deviation(c));
			else
				fprintf(f, "deviation %s  recorded: %s failed: %s\n", rc_clauses[c].id,
					r->test->name, r->reason);
			break;
		}
	}
}

int rc_write_profile(FILE *f, const char *path, const struct rc_run *run, bool partial)
{
	size_t counts[RC_VERDICTS] = { 0 };
	char name[128], when[64];
	time_t now = time(NULL);

	for (size_t i = 0; i < run->count; i++)
		counts[run->results[i].verdict]++;
	name_of(path, name, sizeof name);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "# Recorded by rdmacheck-%s --record-profile, %s, from %zu tests:\n"
		"# %zu passed, %zu failed, %zu skipped, %zu known deviation%s%s.\n"
		"# The attr lines are what the device reported. Each lacks and deviation\n"
		"# line is what the run saw: read it and sort it (a capability the\n"
		"# device does not have, a documented difference, or a driver defect)\n"
		"# before you publish the profile.\n",
		run->backend, when, run->count, counts[RC_PASS], counts[RC_FAIL],
		counts[RC_SKIPPED], counts[RC_DEVIATION], counts[RC_DEVIATION] == 1 ? "" : "s",
		partial ? "; a partial run (-t): clauses not run are not here" : "");
	fprintf(f, "name %s\n", name);
	if (!rc_record_device)
		fprintf(f, "# no attributes: this binary has no device fixtures\n");
	else if (rc_record_device(f))
		return RC_RECORD_NO_DEVICE;
	write_lacks(f, run);
	write_deviations(f, run);
	return ferror(f) ? -1 : 0;
}
