/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmamock-sweep: a program through every fault it can meet.
 *
 *   rdmamock-sweep [--timeout S] [--jobs N] [--points GLOB] [--max-nth N] [--calls]
 *                  [--one-errno] [--once] [--known FILE] [--tap FILE] [--junit FILE]
 *                  [--logs DIR]
 *                  [--] PROG [ARG]...
 *
 * 1. PROG runs once on a fabric of its own with RDMAMOCK_COUNT=1, and the
 *    fabric counts how often each fault point is reached (entry points and
 *    asynchronous ones, across every process PROG starts).
 * 2. For each point reached (and matching GLOB; with --calls, only the
 *    entry points of calls), and each N up to its count (at most
 *    --max-nth), PROG runs again, its fault failing the Nth hit once
 *    (nth=N; a call once with each errno its table allows, unless
 *    --one-errno), then failing it from the Nth hit on (nth=N+; not with
 *    --once), each on a fabric of its own.
 * 3. Each run is judged: its exit status (failing is what it should do
 *    when a call fails), a crash (a signal), a hang (still running after
 *    --timeout: its process group is killed), a sanitizer report in its
 *    output ("...Sanitizer", or UBSan's "runtime error:"), a leak the
 *    mock's ledger lists at exit (the runs have
 *    RDMAMOCK_STRICT=1 unless it is set: misuse aborts, and so does the
 *    leak report, after it). Crashes, hangs, sanitizer reports and leaks
 *    are findings; a leak only when PROG exited 0 (it went on after the
 *    failure: a program that gives up leaves its objects to the kernel,
 *    as any may) and the fault was not on a destroying call (whose object,
 *    and what it holds, the program cannot release). * 4. A table of the findings, each with a one-line reproducer; TAP with
 *    --tap, JUnit XML with --junit (a testcase per run; a finding is a
 *    <failure>, a known one <skipped>). A finding that --known lists
 *    (lines "POINT nth=N[+]", '#' comments) is reported as known and does
 *    not fail the sweep.
 * Exit status: 0 with no new finding, 1 with one, 2 on a usage error or
 * when PROG fails with no fault at all. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define ME "rdmamock-sweep"

struct run {
	char spec[160];
	pid_t pid;
	double started, elapsed;
	char log[PATH_MAX];
	char fabric[64];
	bool timed_out;
	/* The verdict. */
	int status;      /* exit status, or -1 */
	int signal;      /* the signal that ended it, or 0 */
	bool hang, sanitizer, leak, known;
};

static struct {
	int timeout, jobs, max_nth;
	const char *points, *known, *tap, *junit, *logs;
	char **prog;
	char dir[PATH_MAX];
	long (*reached)(const char *);
	const char *(*point)(int);
	int (*fabric_remove)(const char *);
	int (*errnos)(const char *, int *, int);
	bool calls_only, one_errno, once;
	char **known_lines;
	int nknown;
} opt = { .timeout = 30, .jobs = 2, .max_nth = 3, .points = "*" };

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: " ME " [--timeout S] [--jobs N] [--points GLOB] [--max-nth N] [--calls]\n"
		"                      [--one-errno] [--once] [--known FILE] [--tap FILE] [--junit FILE]\n"
		"                      [--logs DIR] [--] PROG [ARG]...\n"
		"  --timeout S    a run still going after S seconds is a hang (30)\n"
		"  --jobs N       runs at once (2)\n"
		"  --points GLOB  only the fault points that match (all)\n"
		"  --max-nth N    fail at most the first N hits of each point (3)\n"
		"  --calls        only the entry points of calls (those with an errno table)\n"
		"  --one-errno    fail a call's Nth hit once with its usual errno only, not\n"
		"                 with each errno its table allows\n"
		"  --once         fail the Nth hit once only, not also from then on\n"
		"  --known FILE   findings already known: lines \"POINT nth=N[+]\", or\n"
		"                 \"(no fault)\" for a leak without a fault\n"
		"  --tap FILE     TAP, a test per run\n"
		"  --junit FILE   JUnit XML, a testcase per run: a finding is a failure, a\n"
		"                 known one skipped\n"
		"  --logs DIR     keep each run's output there (else only a finding's)\n"
		"Runs have RDMAMOCK_STRICT=1 unless it is set; objects left at an exit(0)\n"
		"are a LEAK (unless the fault was on a destroying call).\n"
		"Exit status: 0 with no new finding, 1 with one, 2 on a usage error or\n"
		"when PROG fails with no fault at all.\n");
}

/* The fabric a run is on, and its output, unique to this sweep. */
static void name_run(struct run *r, int k)
{
	snprintf(r->fabric, sizeof r->fabric, "sweep-%d-%d", (int)getpid(), k);
	if (opt.logs)
		snprintf(r->log, sizeof r->log, "%s/%d.log", opt.logs, k);
	else
		snprintf(r->log, sizeof r->log, "%s/%s.log", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 r->fabric);
}

/* The run's environment: this one's, with the run's fabric and its fault
 * (or the count). Made before fork: this process has the mock's threads,
 * and a child of a threaded process may only exec. */
static char **run_environment(const struct run *r, char *fabric, char *faults)
{
	extern char **environ;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof *env);
	if (!env) {
		fprintf(stderr, ME ": out of memory\n");
		exit(2);
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "RDMAMOCK_FABRIC=", 16) && strncmp(environ[i], "RDMAMOCK_FAULTS=", 16) &&
		    strncmp(environ[i], "RDMAMOCK_COUNT=", 15))
			env[k++] = environ[i];
	env[k++] = fabric;
	env[k++] = faults;
	snprintf(fabric, 96, "RDMAMOCK_FABRIC=%s", r->fabric);
	if (r->spec[0])
		snprintf(faults, 200, "RDMAMOCK_FAULTS=%s", r->spec);
	else
		snprintf(faults, 200, "RDMAMOCK_COUNT=1");
	return env;
}

static void start(struct run *r)
{
	char fabric[96], faults[200], **env = run_environment(r, fabric, faults);

	posix_spawn_file_actions_t files;
	posix_spawnattr_t attr;
	int err;

	/* posix_spawn, not fork: a forked child of this process would join
	 * the counting fabric (the mock's fork handler) and hold one of its
	 * member slots until reaped; 128 runs used them all up. */
	posix_spawn_file_actions_init(&files);
	posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, r->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
	posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0); /* a group of its own, killed whole */
	r->started = now();
	err = posix_spawnp(&r->pid, opt.prog[0], &files, &attr, opt.prog, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&files);
	free(env);
	if (err) {
		fprintf(stderr, ME ": %s: %s\n", opt.prog[0], strerror(err));
		exit(2);
	}
}

/* The exit status the ledger's leak summary gives ("at exit(N)"), or -1. */
static int leak_exit_status(const char *log)
{
	static const char mark[] = "object(s) never destroyed at exit(";
	char line[1024], *at;
	FILE *f = fopen(log, "r");
	int status = -1;

	while (f && status < 0 && fgets(line, sizeof line, f))
		if ((at = strstr(line, mark)))
			status = atoi(at + sizeof mark - 1);
	if (f)
		fclose(f);
	return status;
}

/* A fault on a call that destroys or releases something. */
static bool destroying_point(const char *spec)
{
	static const char *const calls[] = { "destroy", "dealloc", "dereg", "ack_cm_event", "free", "close",
						 "detach", "leave" };

	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (strstr(spec, calls[i]))
			return true;
	return false;
}

static bool said_in_log(const char *log, const char *what)
{
	char line[1024];
	FILE *f = fopen(log, "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Whether the run ended (judged), without waiting. A run past its time has
 * its process group killed, and is a hang. */
static bool finished(struct run *r)
{
	int status, leak_status;
	pid_t got = waitpid(r->pid, &status, WNOHANG);

	if (got == 0) {
		if (now() - r->started > opt.timeout && !r->timed_out) {
			r->timed_out = true;
			kill(-r->pid, SIGKILL);
		}
		return false;
	}
	/* The rest of its process group (a server a script left) goes too. */
	r->elapsed = now() - r->started;
	kill(-r->pid, SIGKILL);
	r->hang = r->timed_out;
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	r->signal = WIFSIGNALED(status) && !r->timed_out ? WTERMSIG(status) : 0;
	/* ASan and the others name themselves; UBSan's report is only
	 * "FILE:LINE:COL: runtime error: ..." when it prints no summary. */
	r->sanitizer = said_in_log(r->log, "Sanitizer") || said_in_log(r->log, ": runtime error: ");
	/* A crash inside a script: the shell reports its child's signal. */
	if (!r->signal && r->status > 128 && r->status < 160 && !r->timed_out &&
	    (said_in_log(r->log, "Segmentation fault") || said_in_log(r->log, "Aborted")))
		r->signal = r->status - 128;
	/* The ledger aborts at exit after its report, under RDMAMOCK_STRICT:
	 * that abort is the leak's, not a crash, and the summary keeps the
	 * status the program exited with. */
	leak_status = leak_exit_status(r->log);
	if (leak_status >= 0 && r->signal == SIGABRT) {
		r->signal = 0;
		r->status = leak_status;
	}
	r->leak = leak_status == 0 && !destroying_point(r->spec);
	/* A strict misuse report (an MR still used by a QP, a channel still
	 * holding ids) after a fault on a destroying call is the fault's
	 * doing: the object the program could not release holds the other. */
	if (r->signal == SIGABRT && destroying_point(r->spec) && said_in_log(r->log, "(RDMAMOCK_STRICT)")) {
		r->signal = 0;
		r->status = 128 + SIGABRT;
	}
	return true;
}

/* The runs' fabrics go once their processes have closed their files: a
 * moment after the last run ended, all at once (not 50 ms per run). */
static void remove_fabrics(const struct run *runs, int n)
{
	usleep(50000);
	for (int i = 0; i < n; i++)
		opt.fabric_remove(runs[i].fabric);
}

static bool finding(const struct run *r)
{
	return r->signal || r->hang || r->sanitizer || r->leak;
}

static void load_known(void)
{
	char line[256];
	FILE *f;

	if (!opt.known)
		return;
	f = fopen(opt.known, "r");
	if (!f) {
		fprintf(stderr, ME ": --known %s: %s\n", opt.known, strerror(errno));
		exit(2);
	}
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "#\n")] = '\0';
		while (*line && (line[strlen(line) - 1] == ' ' || line[strlen(line) - 1] == '\t'))
			line[strlen(line) - 1] = '\0';
		if (!*line)
			continue;
		opt.known_lines = realloc(opt.known_lines, (size_t)(opt.nknown + 1) * sizeof *opt.known_lines);
		if (!opt.known_lines || !(opt.known_lines[opt.nknown++] = strdup(line))) {
			fprintf(stderr, ME ": out of memory\n");
			exit(2);
		}
	}
	fclose(f);
}

/* A known line "POINT nth=N[+]" covers that run with any errno=. */
/* An errno as the fault syntax takes it: its name (ECONNREFUSED), or a
 * number (rdma_getaddrinfo's EAI_ codes are negative). */
static void errno_name(int e, char *out, size_t size)
{
	const char *name = e > 0 ? strerrorname_np(e) : NULL;

	if (name)
		snprintf(out, size, "%s", name);
	else
		snprintf(out, size, "%d", e);
}

static bool is_known(const char *spec)
{
	size_t len = strcspn(spec, " ");

	len += strcspn(spec + len + (spec[len] == ' '), " ") + (spec[len] == ' ');
	for (int i = 0; i < opt.nknown; i++)
		if (strlen(opt.known_lines[i]) == len && !strncmp(opt.known_lines[i], spec, len))
			return true;
	return false;
}

static void verdict(const struct run *r, char *out, size_t size)
{
	if (r->hang)
		snprintf(out, size, "HANG (killed after %d s)", opt.timeout);
	else if (r->signal)
		snprintf(out, size, "CRASH (%s)", strsignal(r->signal));
	else if (r->sanitizer)
		snprintf(out, size, "SANITIZER (exit %d)", r->status);
	else if (r->leak)
		snprintf(out, size, "LEAK (its output's \"rdmamock: leak:\" lines)");
	else
		snprintf(out, size, "exit %d", r->status);
}

/* rdmamock-run --fault 'SPEC' -- PROG ARGS, quoted for a shell. */
static void reproducer(const struct run *r, FILE *to)
{
	if (r->spec[0])
		fprintf(to, "rdmamock-run --fault '%s' --", r->spec);
	else
		fprintf(to, "rdmamock-run --"); /* the counting run: no fault */
	for (char **a = opt.prog; *a; a++) {
		if (strspn(*a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,") ==
		    strlen(*a)) {
			fprintf(to, " %s", *a);
		} else {
			/* In single quotes; a quote itself as '\'' (close, escaped, reopen) */
			fputs(" '", to);
			for (const char *c = *a; *c; c++)
				if (*c == '\'')
					fputs("'\\''", to);
				else
					fputc(*c, to);
			fputc('\'', to);
		}
	}
	fputc('\n', to);
}

/* The length of the UTF-8 character at p that XML 1.0 may hold, or 0: not
 * UTF-8 (overlong, a surrogate, past U+10FFFF, cut short) or U+FFFE/FFFF. */
static size_t xml_char(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t len = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;

	if (!len || (size_t)(end - p) < len)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] >= 0x90) || (c == 0xef && p[1] == 0xbf && p[2] >= 0xbe))
		return 0;
	if (len == 1 && c < 0x20 && c != '\t' && c != '\n')
		return 0;
	return len;
}

/* Text for XML: the five specials escaped; what XML 1.0 cannot hold at all
 * (control characters other than tab and newline, bytes that are not
 * UTF-8, as a crashing program's output may have) becomes '?'. */
static void xml_text(FILE *to, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		size_t len = xml_char(p, end);

		switch (len ? *p : 0) {
		case 0: fputc('?', to); len = 1; break;
		case '&': fputs("&amp;", to); break;
		case '<': fputs("&lt;", to); break;
		case '>': fputs("&gt;", to); break;
		case '"': fputs("&quot;", to); break;
		case '\'': fputs("&apos;", to); break;
		default: fwrite(p, 1, len, to); break;
		}
		p += len;
	}
}

static void xml(FILE *to, const char *s)
{
	xml_text(to, s, strlen(s));
}

/* The reproducer as a string (malloc'd), for an attribute or a body. */
static char *reproducer_text(const struct run *r)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f) {
		fprintf(stderr, ME ": open_memstream: %s\n", strerror(errno));
		exit(2);
	}
	reproducer(r, f);
	fclose(f);
	return text;
}

/* A finding's output in <system-out>: what a CI page shows beside the
 * failure, the first 64 KiB of it. */
static void junit_output(FILE *to, const struct run *r)
{
	static char buf[65536];
	FILE *f = fopen(r->log, "r");
	size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;

	if (!f)
		return;
	fputs("    <system-out>", to);
	xml_text(to, buf, n);
	if (n == sizeof buf && fgetc(f) != EOF) {
		fputs("\n[... cut: the whole output is in ", to);
		xml(to, r->log);
		fputs("]\n", to);
	}
	fputs("</system-out>\n", to);
	fclose(f);
}

/* JUnit XML: one testsuite, a testcase per run named by its fault; a
 * finding is a <failure> (its kind, the reproducer, the output file), a
 * known one is <skipped> so that it is seen and does not fail a CI page. */
static void write_junit(FILE *to, const struct run *runs, int n, int found, int known, double took)
{
	char stamp[32], what[64];
	time_t t = time(NULL);

	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", localtime(&t));
	fprintf(to, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"" ME " ");
	for (char **a = opt.prog; *a; a++) {
		fputs(a == opt.prog ? "" : " ", to);
		xml(to, *a);
	}
	fprintf(to, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\">\n",
		n, found, known, took, stamp);
	for (int i = 0; i < n; i++) {
		const struct run *r = &runs[i];
		char *repro;

		fputs("  <testcase classname=\"" ME "\" name=\"", to);
		xml(to, r->spec);
		fprintf(to, "\" time=\"%.3f\"", r->elapsed);
		if (!finding(r)) {
			fputs("/>\n", to);
			continue;
		}
		verdict(r, what, sizeof what);
		repro = reproducer_text(r);
		fputs(">\n", to);
		if (r->known) {
			fputs("    <skipped message=\"known: ", to);
			xml(to, what);
			fputs("; ", to);
			xml_text(to, repro, strlen(repro) - 1); /* without its newline */
			fputs("\"/>\n", to);
		} else {
			fputs("    <failure type=\"", to);
			xml_text(to, what, strcspn(what, " ")); /* CRASH, HANG, SANITIZER */
			fputs("\" message=\"", to);
			xml(to, what);
			fputs("\">", to);
			xml(to, repro);
			fputs("output: ", to);
			xml(to, r->log);
			fputs("</failure>\n", to);
		}
		junit_output(to, r);
		fputs("  </testcase>\n", to);
		free(repro);
	}
	fputs("</testsuite>\n", to);
}

/* Run every case, jobs at a time. */
static void run_all(struct run *runs, int n)
{
	int next = 0, done = 0, running = 0;
	bool *live = calloc((size_t)n + 1, sizeof *live);

	if (!live) {
		fprintf(stderr, ME ": out of memory\n");
		exit(2);
	}
	while (done < n) {
		while (running < opt.jobs && next < n) {
			start(&runs[next]);
			live[next++] = true;
			running++;
		}
		for (int i = 0; i < next; i++)
			if (live[i] && finished(&runs[i])) {
				live[i] = false;
				running--;
				done++;
				if (!opt.logs && !finding(&runs[i]))
					unlink(runs[i].log);
			}
		usleep(2000);
	}
	free(live);
}

static int parse_int(const char *what, const char *s, int lo)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < lo || v > 100000) {
		fprintf(stderr, ME ": %s %s: not a number from %d\n", what, s, lo);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' }, { "jobs", required_argument, NULL, 'j' },
		{ "points", required_argument, NULL, 'p' },  { "max-nth", required_argument, NULL, 'n' },
		{ "known", required_argument, NULL, 'k' },   { "tap", required_argument, NULL, 'T' },
		{ "junit", required_argument, NULL, 'J' },   { "logs", required_argument, NULL, 'l' },
		{ "calls", no_argument, NULL, 'c' },        { "one-errno", no_argument, NULL, 'o' },
		{ "once", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run count = { .spec = "" }, *runs = NULL;
	int c, n = 0, found = 0, known = 0, k = 1;
	char what[64];
	FILE *tap = NULL, *junit = NULL;
	double began = now();

	tool_name = ME;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 't': opt.timeout = parse_int("--timeout", optarg, 1); break;
		case 'j': opt.jobs = parse_int("--jobs", optarg, 1); break;
		case 'p': opt.points = optarg; break;
		case 'n': opt.max_nth = parse_int("--max-nth", optarg, 1); break;
		case 'k': opt.known = optarg; break;
		case 'T': opt.tap = optarg; break;
		case 'J': opt.junit = optarg; break;
		case 'l': opt.logs = optarg; break;
		case 'c': opt.calls_only = true; break;
		case 'o': opt.one_errno = true; break;
		case '1': opt.once = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	opt.prog = argv + optind;
	setenv("RDMAMOCK_STRICT", "1", 0); /* the runs' ledger; the user's 0 wins */
	load_known();
	tool_dropin_dir(opt.dir, sizeof opt.dir);
	tool_library_path(opt.dir);
	if (opt.logs && mkdir(opt.logs, 0700) && errno != EEXIST) {
		fprintf(stderr, ME ": --logs %s: %s\n", opt.logs, strerror(errno));
		return 2;
	}
	if (opt.tap && !(tap = fopen(opt.tap, "w"))) {
		fprintf(stderr, ME ": --tap %s: %s\n", opt.tap, strerror(errno));
		return 2;
	}
	if (opt.junit && !(junit = fopen(opt.junit, "w"))) {
		fprintf(stderr, ME ": --junit %s: %s\n", opt.junit, strerror(errno));
		return 2;
	}

	/* 1. The counting run, on a fabric this process holds open so that
	 * the counts outlive PROG's processes. */
	name_run(&count, 0);
	setenv("RDMAMOCK_FABRIC", count.fabric, 1);
	opt.reached = (long (*)(const char *))tool_mock_call(opt.dir, "rdmamock_point_reached");
	opt.point = (const char *(*)(int))tool_mock_call(opt.dir, "rdmamock_point");
	opt.fabric_remove = (int (*)(const char *))tool_mock_call(opt.dir, "rdmamock_fabric_remove");
	opt.errnos = (int (*)(const char *, int *, int))tool_mock_call(opt.dir, "rdmamock_errnos");
	opt.reached(opt.point(0)); /* joins the fabric */
	start(&count);
	while (!finished(&count))
		usleep(10000);
	verdict(&count, what, sizeof what);
	printf("%s: the first run, counting: %s\n", ME, what);
	if (count.leak && !count.signal && !count.hang && !count.sanitizer) {
		/* A leak without a fault is a finding too (known: a --known
		 * line "(no fault)"); the sweep goes on. */
		count.known = is_known("(no fault)");
		printf("%-8s %-52s LEAK\n         ", count.known ? "known" : "FINDING", "(no fault)");
		reproducer(&count, stdout);
		printf("         output: %s\n", count.log);
		found += !count.known;
		known += count.known;
	} else if (finding(&count) || count.status != 0) {
		printf("%s: %s fails with no fault at all, so nothing can be judged; its output: %s\n", ME,
		       opt.prog[0], count.log);
		return 2;
	}
	if (!count.leak)
		unlink(count.log);

	/* 2. A run per point reached, N and N+; a call's Nth hit once with
	 * each errno its table allows, from then on with its usual one. */
	for (int i = 0; opt.point(i); i++) {
		const char *p = opt.point(i), *call = strrchr(p, '/') + 1;
		int errs[64], nerr = opt.errnos(call, errs, 64);
		long hits = opt.reached(p);

		if (hits <= 0 || fnmatch(opt.points, p, 0) || (opt.calls_only && nerr <= 0))
			continue;
		if (nerr <= 0 || opt.one_errno)
			nerr = 0; /* no errno=: the point's own default */
		for (long nth = 1; nth <= hits && nth <= opt.max_nth; nth++)
			for (int v = opt.once ? 0 : -1; v < (nerr ? nerr : 1); v++) {
				char errno_word[32] = "";

				if (v >= 0 && nerr)
					errno_name(errs[v], errno_word, sizeof errno_word);
				runs = realloc(runs, (size_t)(n + 1) * sizeof *runs);
				if (!runs) {
					fprintf(stderr, ME ": out of memory\n");
					return 2;
				}
				memset(&runs[n], 0, sizeof runs[n]);
				/* v -1: from the Nth hit on; else the Nth once. */
				snprintf(runs[n].spec, sizeof runs[n].spec, "%s nth=%ld%s%s%s", p, nth,
					 v < 0 ? "+" : "", *errno_word ? " errno=" : "", errno_word);
				name_run(&runs[n++], k++);
			}
	}
	printf("%s: %d runs (points reached and matching '%s'%s, nth up to %d, once%s and onward)\n", ME,
	       n, opt.points, opt.calls_only ? ", calls only" : "", opt.max_nth,
	       opt.one_errno ? "" : " with each errno of the call's table");
	run_all(runs, n);
	remove_fabrics(runs, n);

	/* 3. The verdicts. */
	if (tap)
		fprintf(tap, "1..%d\n", n);
	for (int i = 0; i < n; i++) {
		struct run *r = &runs[i];

		verdict(r, what, sizeof what);
		r->known = finding(r) && is_known(r->spec);
		if (tap) {
			fprintf(tap, "%s %d - %s: %s%s\n", finding(r) && !r->known ? "not ok" : "ok", i + 1,
				r->spec, what, r->known ? " # TODO known" : "");
			if (finding(r)) {
				fprintf(tap, "# ");
				reproducer(r, tap);
			}
		}
		if (!finding(r))
			continue;
		found += !r->known;
		known += r->known;
		printf("%-8s %-52s %s\n", r->known ? "known" : "FINDING", r->spec, what);
		printf("         ");
		reproducer(r, stdout);
		printf("         output: %s\n", r->log);
	}
	if (tap)
		fclose(tap);
	if (junit) {
		write_junit(junit, runs, n, found, known, now() - began);
		if (fclose(junit)) {
			fprintf(stderr, ME ": --junit %s: %s\n", opt.junit, strerror(errno));
			return 2;
		}
	}
	printf("%s: %d runs, %d findings, %d of them known\n", ME, n, found + known, known);
	return found ? 1 : 0;
}
