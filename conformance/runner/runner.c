/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The suite runner: selects tests, runs each alone in a forked child under a
 * timeout, classifies how it ended, prints a line per test and writes the
 * TAP, JUnit and results reports; or, with --matrix, merges results files
 * into the clause matrix. A device profile (--profile) turns the failures it
 * lists into known deviations and declares capability skips. Modelled on
 * libuv's test runner. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile.h"
#include "report.h"

#define EXIT_USAGE 2
#define OUTPUT_MAX (1024 * 1024) /* captured output kept per test */
#define RUN_CHILD_TIMEOUT_MS 10000 /* RDMACHECK_CHILD_TIMEOUT (s) sets another */
#define GRACE_MS 1000 /* for pipes to close once the child has exited */
#define POLL_SLICE_MS 100
#define JOBS_MAX 64 /* -j */

struct options {
	const char **globs;
	size_t nglobs;
	const char *tap, *junit, *results, *matrix, *profile, *compare, *record, *report, *baseline;
	struct rc_column *columns;
	size_t ncolumns;
	unsigned timeout, jobs;
	bool list, verbose, strict, serve, inline_run;
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options]\n"
		"  --list            list the tests and the clause each checks\n"
		"  -t GLOB           run only tests whose name matches (repeatable)\n"
		"  --timeout SEC     per-test timeout (default 30)\n"
		"  -j N              run N tests at once (the mock only, each on a\n"
		"                    fabric of its own; default 1, at most 64;\n"
		"                    elsewhere, or with RDMAMOCK_FABRIC set, said\n"
		"                    and one at a time)\n"
		"  -v                print every test's output, not only failures'\n"
		"  --strict          a skip for a missing capability is a failure,\n"
		"                    and a stale deviation in the profile fails the run\n"
		"  --profile FILE    the device profile: capabilities it lacks,\n"
		"                    known deviations (default $RDMACHECK_PROFILE)\n"
		"  --tap FILE        write TAP\n"
		"  --junit FILE      write JUnit XML\n"
		"  --results FILE    write results TSV (input of --matrix)\n"
		"  --report FILE     write one self-contained HTML page: the device, the\n"
		"                    counts and each clause's outcome with its evidence\n"
		"  --baseline FILE   with --report: an earlier run's --results, to show\n"
		"                    what changed since\n"
		"  --record-profile FILE\n"
		"                    write a device profile from this run: the device's\n"
		"                    attributes and every capability it lacked and\n"
		"                    clause it failed (to read and sort, then --profile)\n"		"  --serve           be the peer of a two-host run: accept or reject\n"
		"                    connections as they ask, until SIGINT/SIGTERM\n"		"  --inline          run the tests in this process, one after another,\n"
		"                    with no timeout or reports: a crash ends the runner\n"
		"                    by its signal (for rdmamock-sweep)\n"
		"  --matrix OUT.md --column NAME=RESULTS.tsv [--column ...]\n"
		"                    run nothing; merge results into the clause\n"
		"                    matrix (OUT.md '-' is stdout)\n"
		"  --compare NAME    with --matrix: a clause that passes in column NAME\n"
		"                    and fails in another, or the reverse, fails\n"
		"exit: 0 all passed, skipped or known deviations; 1 a test failed (or\n"
		"      --compare found a difference); 2 usage, profile or I/O error\n"
		"env:  tests run with RDMAMOCK_STRICT=1 unless set: on the mock, a test\n"
		"      that completes but leaks or misuses an object crashes, reported\n",
		prog);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fputs("rdmacheck: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fputs("rdmacheck: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return p;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ options */

static bool parse_timeout(const char *s, unsigned *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 86400)
		return false;
	*out = (unsigned)v;
	return true;
}

static bool parse_column(char *spec, struct rc_column *c)
{
	char *eq = strchr(spec, '=');

	if (!eq || eq == spec || !eq[1])
		return false;
	*eq = '\0';
	c->name = spec;
	c->path = eq + 1;
	return true;
}

/* --compare names one of the --matrix columns. Returns -1 or EXIT_USAGE. */
static int check_compare(const struct options *o, const char *prog)
{
	if (!o->compare)
		return -1;
	if (!o->matrix) {
		fprintf(stderr, "%s: --compare goes with --matrix\n", prog);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < o->ncolumns; i++)
		if (!strcmp(o->columns[i].name, o->compare))
			return -1;
	fprintf(stderr, "%s: --compare %s: no --column of that name\n", prog,
		o->compare);
	return EXIT_USAGE;
}

/* Returns -1 to go on, or the exit code (0 after --help, 2 on an error). */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_LIST = 256, OPT_TAP, OPT_JUNIT, OPT_RESULTS, OPT_TIMEOUT,
	       OPT_STRICT, OPT_MATRIX, OPT_COLUMN, OPT_SERVE, OPT_PROFILE,
	       OPT_COMPARE, OPT_INLINE, OPT_RECORD, OPT_REPORT, OPT_BASELINE };
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, OPT_LIST },
		{ "tap", required_argument, NULL, OPT_TAP },
		{ "junit", required_argument, NULL, OPT_JUNIT },
		{ "results", required_argument, NULL, OPT_RESULTS },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "matrix", required_argument, NULL, OPT_MATRIX },
		{ "column", required_argument, NULL, OPT_COLUMN },
		{ "serve", no_argument, NULL, OPT_SERVE },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "compare", required_argument, NULL, OPT_COMPARE },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "record-profile", required_argument, NULL, OPT_RECORD },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "baseline", required_argument, NULL, OPT_BASELINE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct options){ .timeout = 30, .jobs = 1 };
	o->globs = xcalloc(argc, sizeof(*o->globs));
	o->columns = xcalloc(argc, sizeof(*o->columns));
	while ((c = getopt_long(argc, argv, "t:vhj:", longopts, NULL)) != -1) {
		switch (c) {
		case 't': o->globs[o->nglobs++] = optarg; break;
		case 'v': o->verbose = true; break;
		case 'h': usage(stdout, argv[0]); return 0;
		case OPT_LIST: o->list = true; break;
		case OPT_TAP: o->tap = optarg; break;
		case OPT_JUNIT: o->junit = optarg; break;
		case OPT_RESULTS: o->results = optarg; break;
		case OPT_STRICT: o->strict = true; break;
		case OPT_MATRIX: o->matrix = optarg; break;
		case OPT_SERVE: o->serve = true; break;
		case OPT_INLINE: o->inline_run = true; break;
		case OPT_PROFILE: o->profile = optarg; break;
		case OPT_COMPARE: o->compare = optarg; break;
		case OPT_RECORD: o->record = optarg; break;
		case OPT_REPORT: o->report = optarg; break;
		case OPT_BASELINE: o->baseline = optarg; break;
		case 'j':
			if (!parse_timeout(optarg, &o->jobs)) {
				fprintf(stderr, "%s: -j wants a number of tests at once, "
					"not '%s'\n", argv[0], optarg);
				return EXIT_USAGE;
			}
			if (o->jobs > JOBS_MAX)
				o->jobs = JOBS_MAX;
			break;
		case OPT_TIMEOUT:
			if (!parse_timeout(optarg, &o->timeout)) {
				fprintf(stderr, "%s: --timeout wants whole seconds "
					"(1..86400), not '%s'\n", argv[0], optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_COLUMN:
			if (!parse_column(optarg, &o->columns[o->ncolumns++])) {
				fprintf(stderr, "%s: --column wants NAME=RESULTS.tsv, "
					"not '%s'\n", argv[0], optarg);
				return EXIT_USAGE;
			}
			break;
		default: /* getopt has named the option */
			fprintf(stderr, "try '%s --help'\n", argv[0]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'; try '%s --help'\n",
			argv[0], argv[optind], argv[0]);
		return EXIT_USAGE;
	}
	if (o->baseline && !o->report) {
		fprintf(stderr, "%s: --baseline goes with --report\n", argv[0]);
		return EXIT_USAGE;
	}
	if (!o->matrix != !o->ncolumns) {
		fprintf(stderr, "%s: --matrix and --column go together\n", argv[0]);
		return EXIT_USAGE;
	}
	return check_compare(o, argv[0]);
}

/* Registry order, filtered by the -t globs; a glob matching nothing is a
 * usage error (a typo must not pass as an empty, green run). */
static int select_tests(const struct options *o, const struct rc_test **sel,
			size_t *nsel)
{
	*nsel = 0;
	for (size_t i = 0; i < rc_test_count; i++) {
		bool take = o->nglobs == 0;

		for (size_t g = 0; g < o->nglobs && !take; g++)
			take = fnmatch(o->globs[g], rc_tests[i].name, 0) == 0;
		if (take)
			sel[(*nsel)++] = &rc_tests[i];
	}
	for (size_t g = 0; g < o->nglobs; g++) {
		bool any = false;

		for (size_t i = 0; i < rc_test_count && !any; i++)
			any = fnmatch(o->globs[g], rc_tests[i].name, 0) == 0;
		if (!any) {
			fprintf(stderr, "rdmacheck: -t '%s' matches no test "
				"(see --list)\n", o->globs[g]);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static void print_list(const struct rc_test **sel, size_t n)
{
	int width = 0;

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(sel[i]->name) > width)
			width = (int)strlen(sel[i]->name);
	for (size_t i = 0; i < n; i++)
		printf("%-*s  %s\n", width, sel[i]->name,
		       rc_clauses[sel[i]->clause].id);
}

/* ------------------------------------------------------------ the child */

/* The child's end of the notes pipe; -1 where nobody listens. Notes are one
 * line each, "kind<TAB>text", short enough for one atomic pipe write. */
static int notes_fd = -1;
static const struct rc_test *child_test;
static bool child_completed; /* its body returned: no assertion, no skip */

static void note_write(const char *kind, const char *text)
{
	char line[RC_REASON_MAX + 32];
	int n;

	if (notes_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s\t%s\n", kind, text);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	while (write(notes_fd, line, n) < 0 && errno == EINTR)
		;
}

static void flatten_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r' || *s == '\t')
			*s = ' ';
}

/* One note of `kind`, its text formatted on one line. */
static void note_vwrite(const char *kind, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static void note_vwrite(const char *kind, const char *fmt, va_list ap)
{
	char text[RC_REASON_MAX];

	vsnprintf(text, sizeof(text), fmt, ap);
	flatten_line(text);
	note_write(kind, text);
}

void rc_note_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_vwrite("skip", fmt, ap);
	va_end(ap);
}

void rc_note_documented(bool held)
{
	note_write("documented", held ? "held" : "not-held");
}

void rc_note_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_vwrite("step", fmt, ap);
	va_end(ap);
}

/* cmocka catches these and turns a crash into an ordinary failure; restore
 * the defaults so the kernel ends the child and the parent sees the signal. */
static void restore_crash_signals(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS,
				    SIGABRT };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

/* What cmocka runs: the test, then a note that its body returned, which
 * tells a pass from a skip (cmocka reports both as success). */
static void run_child_test(void **state)
{
	restore_crash_signals();
	child_test->fn(state);
	child_completed = true;
	note_write("completed", "");
}

/* The one call into cmocka's runner, kept here because its API changes in
 * cmocka 2.0. Returns the number of failed tests. */
static int cmocka_run_one(const char *name, CMUnitTestFunction fn)
{
	const struct CMUnitTest one[1] = { { .name = name, .test_func = fn } };

	cmocka_set_message_output(CM_OUTPUT_STDOUT);
	return _cmocka_run_group_tests("rdmacheck", one, 1, NULL, NULL);
}

static _Noreturn void child_main(const struct rc_test *t, pid_t runner,
				 int out_fd, int note_fd, bool parallel)
{
	int devnull = open("/dev/null", O_RDONLY);
	char failed_text[16];
	int failed;

	setpgid(0, 0); /* a group of its own, so a timeout kills all of it */
	/* out of the runner's group, so die with the runner instead */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != runner)
		_exit(1);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL); /* the runner's self-pipe is not the test's */
	if (devnull >= 0)
		dup2(devnull, STDIN_FILENO);
	dup2(out_fd, STDOUT_FILENO);
	dup2(out_fd, STDERR_FILENO);
	/* Beside other workers (-j), the pipes of the tests they are starting
	 * are open here too: keep only ours, or their reader waits for us. */
	if (parallel) {
		if (note_fd != 3 && dup2(note_fd, 3) == 3)
			note_fd = 3;
		close_range((unsigned)note_fd + 1, ~0U, 0);
	}
	setvbuf(stdout, NULL, _IONBF, 0); /* a crash must not lose output */
	notes_fd = note_fd;
	child_test = t;
	failed = cmocka_run_one(t->name, run_child_test);
	snprintf(failed_text, sizeof(failed_text), "%d", failed);
	note_write("finished", failed_text);
	/* A test that stopped at a failed assertion or a skip left what it
	 * had made: the mock's ledger lists it, but that is not the finding. */
	if (!child_completed && getenv("RDMAMOCK_STRICT")) {
		unsetenv("RDMAMOCK_STRICT");
		setenv("RDMAMOCK_LEDGER", "1", 0);
	}
	exit(failed ? 1 : 0); /* not _exit: atexit reports (a leak ledger) run */
}

/* ------------------------------------------------------------ the parent */

struct buf {
	char *data;
	size_t len;
	bool truncated;
};

static void buf_append(struct buf *b, const char *p, size_t n)
{
	if (b->len + n > OUTPUT_MAX) {
		n = OUTPUT_MAX - b->len;
		b->truncated = true;
	}
	b->data = xrealloc(b->data, b->len + n + 1);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

struct pipe_in {
	int fd;
	struct buf *buf;
};

static void read_ready(struct pipe_in *in)
{
	char chunk[4096];
	ssize_t r = read(in->fd, chunk, sizeof(chunk));

	if (r > 0) {
		buf_append(in->buf, chunk, (size_t)r);
	} else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(in->fd);
		in->fd = -1;
	}
}

/* waitpid that never leaves *status unset: a child we cannot wait for is
 * reported as having exited 255. */
static bool reap(pid_t pid, int *status, int flags)
{
	pid_t r;

	while ((r = waitpid(pid, status, flags)) < 0 && errno == EINTR)
		;
	if (r < 0)
		*status = W_EXITCODE(255, 0);
	return r != 0;
}

static bool any_open(const struct pipe_in *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (in[i].fd >= 0)
			return true;
	return false;
}

/* Waits up to left_s (at most a slice) for the open pipes and reads what is
 * ready. Once they are closed the child is exiting: check back soon. */
static void pump_pipes(struct pipe_in *in, size_t n, double left_s)
{
	struct pollfd pfd[2];
	struct pipe_in *open_in[2];
	size_t nopen = 0;
	int ms;

	for (size_t i = 0; i < n && nopen < 2; i++) {
		if (in[i].fd < 0)
			continue;
		pfd[nopen] = (struct pollfd){ .fd = in[i].fd, .events = POLLIN };
		open_in[nopen++] = &in[i];
	}
	ms = nopen ? POLL_SLICE_MS : 1;
	if (left_s * 1000 < ms)
		ms = (int)(left_s * 1000) + 1;
	if (poll(pfd, nopen, ms) <= 0)
		return;
	for (size_t i = 0; i < nopen; i++)
		if (pfd[i].revents)
			read_ready(open_in[i]);
}

/* Reads the child's pipes (at most two) until it has exited and they are
 * closed. When timeout_ms passes first, kills `target` (the child, or minus
 * its process group) with SIGKILL and returns true. */
static bool collect_child(pid_t pid, pid_t target, struct pipe_in *in,
			  size_t n, long timeout_ms, int *status)
{
	double deadline = now_seconds() + timeout_ms / 1000.0, left;
	bool reaped = false, killed = false;

	for (;;) {
		if (!reaped && reap(pid, status, WNOHANG)) {
			reaped = true;
			deadline = now_seconds() + GRACE_MS / 1000.0;
			if (target < 0) /* stragglers left in its group */
				kill(target, SIGKILL);
		}
		if (reaped && !any_open(in, n))
			break;
		left = deadline - now_seconds();
		if (left <= 0 && reaped)
			break; /* an escaped process holds a pipe: stop reading */
		if (left <= 0) {
			kill(target, SIGKILL);
			killed = true;
			reap(pid, status, 0);
			reaped = true;
			deadline = now_seconds() + GRACE_MS / 1000.0;
			continue;
		}
		pump_pipes(in, n, left);
	}
	for (size_t i = 0; i < n; i++)
		if (in[i].fd >= 0)
			close(in[i].fd);
	return killed;
}

/* What the child said on the notes pipe. */
struct child_notes {
	char skip[RC_REASON_MAX];
	char step[RC_REASON_MAX / 2]; /* the last one told */
	enum rc_documented documented;
	bool completed, finished;
	int failed;
};

static void apply_note(struct child_notes *n, const char *kind,
		       const char *value)
{
	if (!strcmp(kind, "skip")) {
		if (!n->skip[0])
			snprintf(n->skip, sizeof(n->skip), "%s", value);
	} else if (!strcmp(kind, "documented")) {
		/* several observations AND together */
		n->documented = !strcmp(value, "held") &&
					n->documented != RC_DOC_NOT_HELD ?
				RC_DOC_HELD : RC_DOC_NOT_HELD;
	} else if (!strcmp(kind, "step")) {
		snprintf(n->step, sizeof(n->step), "%s", value);
	} else if (!strcmp(kind, "completed")) {
		n->completed = true;
	} else if (!strcmp(kind, "finished")) {
		n->finished = true;
		n->failed = atoi(value);
	}
}

static void parse_notes(char *text, struct child_notes *n)
{
	char *save = NULL;

	*n = (struct child_notes){ .documented = RC_DOC_UNREPORTED };
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');

		if (tab)
			*tab = '\0';
		apply_note(n, line, tab ? tab + 1 : "");
	}
}

/* cmocka's own framing around one test, which says nothing the verdict does
 * not; its "[  ERROR   ]" and "[   LINE   ]" lines are kept. */
static bool is_cmocka_framing(const char *line, size_t len)
{
	static const char *const prefixes[] = {
		"[==========]", "[ RUN      ]", "[       OK ]", "[  PASSED  ]",
		"[  FAILED  ]", "[  SKIPPED ]",
	};
	int count;
	char word[16];

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (len >= 12 && !strncmp(line, prefixes[i], 12))
			return true;
	return sscanf(line, " %d %15s TEST(S)", &count, word) == 2 &&
	       (!strcmp(word, "FAILED") || !strcmp(word, "SKIPPED"));
}

static char *tidy_output(const struct buf *raw)
{
	struct buf out = { 0 };
	const char *p = raw->data ? raw->data : "";

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		bool blank = strspn(p, " \t\r") >= len;

		if (!blank && !is_cmocka_framing(p, len)) {
			buf_append(&out, p, len);
			buf_append(&out, "\n", 1);
		}
		p += len + (nl != NULL);
	}
	if (raw->truncated)
		buf_append(&out, "[output truncated]\n", 19);
	if (!out.data)
		buf_append(&out, "", 0);
	return out.data;
}

/* A one-line summary of a failed assertion, "0x1 != 0x2 at file.c:20", from
 * what cmocka 1.1.5 prints: "[  ERROR   ] --- <message>" then
 * "[   LINE   ] --- <file:line>: error: Failure!"; fail_msg() instead prints
 * "ERROR: <message>" and leaves the ERROR line's message empty. */
static void assertion_summary(const char *output, char *dst, size_t size)
{
	static const char err[] = "[  ERROR   ] --- ", loc[] = "[   LINE   ] --- ";
	const char *msg = strstr(output, err), *at = strstr(output, loc);
	int msg_len, at_len;

	if (msg)
		msg += sizeof(err) - 1;
	if (!msg || !strncmp(msg, loc, sizeof(loc) - 1)) {
		msg = strstr(output, "ERROR: ");
		if (msg && (msg == output || msg[-1] == '\n'))
			msg += 7;
		else
			msg = "assertion failed";
	}
	msg_len = (int)strcspn(msg, "\n");
	if (!at) {
		snprintf(dst, size, "%.*s", msg_len, msg);
		return;
	}
	at += sizeof(loc) - 1;
	at_len = (int)strcspn(at, "\n");
	if (strstr(at, ": error:") && strstr(at, ": error:") < at + at_len)
		at_len = (int)(strstr(at, ": error:") - at);
	snprintf(dst, size, "%.*s at %.*s", msg_len, msg, at_len, at);
}

static const char *signal_name(int sig)
{
	static char name[32];
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(name, sizeof(name), "SIG%s", abbrev);
	else
		snprintf(name, sizeof(name), "signal %d", sig);
	return name;
}

static void set_failed(struct rc_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_failed(struct rc_result *r, const char *fmt, ...)
{
	va_list ap;

	r->verdict = RC_FAIL;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	flatten_line(r->reason);
}

#define CAPABILITY_MAX 64

/* Under --strict a skip for a missing capability is a failure, declared in
 * the profile or not; otherwise a declared one says so. */
static void classify_skip(struct rc_result *r, const char *skip,
			  const struct options *o)
{
	char cap[CAPABILITY_MAX];
	const char *declared = rc_skip_capability(skip, cap, sizeof(cap)) &&
			       rc_lacks(cap, NULL) ? " [declared]" : "";

	if (o->strict && !strncmp(skip, "capability:", 11)) {
		set_failed(r, "strict: %.*s%s", RC_REASON_MAX - 32, skip,
			   declared);
		return;
	}
	r->verdict = RC_SKIPPED;
	snprintf(r->reason, sizeof(r->reason), "%.*s%s", RC_REASON_MAX - 16,
		 skip, declared);
}

/* A failure of a clause the profile lists as a known deviation keeps what
 * failed after the profile's reason, and does not fail the run. */
static void apply_deviation(struct rc_result *r)
{
	const char *why = rc_profile_deviation(r->test->clause);
	char failure[RC_REASON_MAX];

	if (r->verdict != RC_FAIL || !why)
		return;
	memcpy(failure, r->reason, sizeof(failure));
	r->verdict = RC_DEVIATION;
	snprintf(r->reason, sizeof(r->reason), "%.*s (fails: %.*s)",
		 RC_REASON_MAX / 2, why, RC_REASON_MAX / 2 - 16, failure);
}

/* How the test ended, from the most drastic ending down. */
static void classify(struct rc_result *r, int status, bool timed_out,
		     const struct child_notes *n, const struct options *o)
{
	const char *skip = n->skip[0] ? n->skip : "skipped without a reason";

	r->documented = n->documented;
	r->verdict = RC_FAIL;
	if (timed_out) {
		set_failed(r, "timed out after %u s%s%s", o->timeout,
			   n->step[0] ? "; last step: " : "", n->step);
	} else if (WIFSIGNALED(status)) {
		set_failed(r, "crashed: %s", signal_name(WTERMSIG(status)));
	} else if (!n->finished) {
		set_failed(r, "exited with status %d before the test finished",
			   WEXITSTATUS(status));
	} else if (n->failed) {
		assertion_summary(r->output, r->reason, sizeof(r->reason));
	} else if (WEXITSTATUS(status) != 0) {
		set_failed(r, "exited with status %d after the test",
			   WEXITSTATUS(status));
	} else if (n->completed) {
		r->verdict = RC_PASS;
	} else {
		classify_skip(r, skip, o);
	}
	apply_deviation(r);
}

/* The children running now (one per worker, -j), for the interrupt
 * handler to take down with us. */
static volatile sig_atomic_t running_child[JOBS_MAX];

static void on_interrupt(int sig)
{
	for (int i = 0; i < JOBS_MAX; i++)
		if (running_child[i] > 0)
			kill(-running_child[i], SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A test's child while it runs: its pipes, what they said, and where the
 * collecting of it stands (as collect_child, one step at a time). */
struct slot {
	const struct rc_test *t;
	struct rc_result *r;
	struct buf output, notes;
	struct pipe_in in[2];
	pid_t pid;
	int status;
	double start, deadline;
	bool reaped, timed_out;
};

/* Fork test t's child into s: false (r set) if it could not start. */
static bool start_test(const struct rc_test *t, const struct options *o,
		       struct rc_result *r, struct slot *s, int worker)
{
	int out[2], notes_pipe[2];
	pid_t runner = getpid(), pid;

	*r = (struct rc_result){ .test = t };
	*s = (struct slot){ .t = t, .r = r, .start = now_seconds() };
	if (pipe2(out, O_CLOEXEC) || pipe2(notes_pipe, O_CLOEXEC)) {
		set_failed(r, "runner: pipe: %s", strerror(errno));
		r->output = tidy_output(&s->output);
		return false;
	}
	fflush(NULL); /* else the child would write our buffered output again */
	pid = fork();
	if (pid == 0) {
		close(out[0]);
		close(notes_pipe[0]);
		child_main(t, runner, out[1], notes_pipe[1], o->jobs > 1);
	}
	close(out[1]);
	close(notes_pipe[1]);
	if (pid < 0) {
		close(out[0]);
		close(notes_pipe[0]);
		set_failed(r, "runner: fork: %s", strerror(errno));
		r->output = tidy_output(&s->output);
		return false;
	}
	setpgid(pid, pid); /* as the child does: whichever runs first */
	running_child[worker] = pid;
	s->pid = pid;
	s->in[0] = (struct pipe_in){ out[0], &s->output };
	s->in[1] = (struct pipe_in){ notes_pipe[0], &s->notes };
	s->deadline = s->start + o->timeout;
	return true;
}

/* One step of collecting s (its pipes were read): true once it is over.
 * When the timeout passes first, its process group is killed. */
static bool collect_step(struct slot *s)
{
	double left;

	if (!s->reaped && reap(s->pid, &s->status, WNOHANG)) {
		s->reaped = true;
		s->deadline = now_seconds() + GRACE_MS / 1000.0;
		kill(-s->pid, SIGKILL); /* stragglers left in its group */
	}
	if (s->reaped && !any_open(s->in, 2))
		return true;
	left = s->deadline - now_seconds();
	if (left <= 0 && s->reaped)
		return true; /* an escaped process holds a pipe: stop reading */
	if (left <= 0) {
		kill(-s->pid, SIGKILL);
		s->timed_out = true;
		reap(s->pid, &s->status, 0);
		s->reaped = true;
		s->deadline = now_seconds() + GRACE_MS / 1000.0;
	}
	return false;
}

static void finish_test(struct slot *s, const struct options *o)
{
	struct child_notes notes;

	for (size_t i = 0; i < 2; i++)
		if (s->in[i].fd >= 0)
			close(s->in[i].fd);
	s->r->seconds = now_seconds() - s->start;
	s->r->output = tidy_output(&s->output);
	parse_notes(s->notes.data ? s->notes.data : (char[]){ "" }, &notes);
	classify(s->r, s->status, s->timed_out, &notes, o);
	free(s->output.data);
	free(s->notes.data);
}

/* SIGCHLD's self-pipe: a child that has closed its pipes wakes the
 * runner when it ends, not a poll slice later. */
static int sigchld_pipe[2] = { -1, -1 };

static void on_sigchld(int sig)
{
	int saved = errno;

	(void)sig;
	if (write(sigchld_pipe[1], "", 1) < 0) {
		/* full: a wake is pending already */
	}
	errno = saved;
}

static void sigchld_watch(void)
{
	struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP };

	if (pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
		sigaction(SIGCHLD, &sa, NULL);
}

/* Waits up to 100 ms for any running child's pipes, or a child's end,
 * and reads what is ready. */
static void pump_slots(struct slot *slots, const bool *busy, unsigned n)
{
	struct pollfd pfd[2 * JOBS_MAX + 1];
	struct pipe_in *in[2 * JOBS_MAX];
	nfds_t nfds = 0;
	int ms = POLL_SLICE_MS;
	char drain[64];

	for (unsigned i = 0; i < n; i++) {
		if (!busy[i])
			continue;
		if (!any_open(slots[i].in, 2) && sigchld_pipe[0] < 0)
			ms = 1;
		for (int k = 0; k < 2; k++)
			if (slots[i].in[k].fd >= 0) {
				pfd[nfds] = (struct pollfd){ .fd = slots[i].in[k].fd, .events = POLLIN };
				in[nfds++] = &slots[i].in[k];
			}
	}
	if (sigchld_pipe[0] >= 0)
		pfd[nfds] = (struct pollfd){ .fd = sigchld_pipe[0], .events = POLLIN };
	if (poll(pfd, nfds + (sigchld_pipe[0] >= 0), ms) <= 0)
		return;
	if (sigchld_pipe[0] >= 0 && pfd[nfds].revents)
		while (read(sigchld_pipe[0], drain, sizeof drain) > 0)
			;
	for (nfds_t i = 0; i < nfds; i++)
		if (pfd[i].revents)
			read_ready(in[i]);
}

static void print_result(const struct rc_result *r, bool verbose);

/* The selection's tests, o->jobs at once (each child on its own fabric);
 * the results are printed in the selection's order, each as soon as all
 * before it have ended. */
static void run_selection(const struct options *o, const struct rc_test **sel,
			  struct rc_result *res, size_t n)
{
	struct slot slots[JOBS_MAX];
	bool busy[JOBS_MAX] = { false }, *done = xcalloc(n ? n : 1, sizeof(bool));
	unsigned jobs = o->jobs < 1 ? 1 : o->jobs;
	size_t next = 0, printed = 0, running = 0;

	while (printed < n) {
		for (unsigned i = 0; i < jobs && next < n; i++) {
			if (busy[i])
				continue;
			if (start_test(sel[next], o, &res[next], &slots[i], (int)i)) {
				busy[i] = true;
				running++;
			} else {
				done[next] = true;
			}
			next++;
		}
		if (running)
			pump_slots(slots, busy, jobs);
		for (unsigned i = 0; i < jobs; i++) {
			if (!busy[i] || !collect_step(&slots[i]))
				continue;
			finish_test(&slots[i], o);
			running_child[i] = 0;
			done[slots[i].r - res] = true;
			busy[i] = false;
			running--;
		}
		while (printed < n && done[printed])
			print_result(&res[printed++], o->verbose);
	}
	free(done);
}

/* ------------------------------------------------------------ rc_run_child */

static void first_line(const char *text, char *dst, size_t size)
{
	const char *p = text ? text : "";
	size_t len;

	p += strspn(p, " \t\r\n");
	len = strcspn(p, "\n");
	while (len > 0 && strchr(" \t\r", p[len - 1]))
		len--;
	snprintf(dst, size, "%.*s", (int)len, p);
}

/* How long a child of rc_run_child may take: 10 s, or RDMACHECK_CHILD_TIMEOUT
 * seconds (under valgrind a child's exit alone, its leak check of the
 * fabric's mappings, takes seconds). */
static long run_child_timeout_ms(void)
{
	const char *s = getenv("RDMACHECK_CHILD_TIMEOUT");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 && v <= 3600 ? v * 1000 : RUN_CHILD_TIMEOUT_MS;
}

void rc_run_child(void (*fn)(void *arg), void *arg, struct rc_crash *out)
{
	struct buf err_text = { 0 };
	int err[2], status;
	pid_t pid;

	*out = (struct rc_crash){ 0 };
	if (pipe2(err, O_CLOEXEC))
		fail_msg("rc_run_child: pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(err[0]);
		dup2(err[1], STDERR_FILENO);
		notes_fd = -1; /* its copy of cmocka must not report for the test */
		restore_crash_signals();
		fn(arg);
		_exit(0);
	}
	close(err[1]);
	if (pid < 0) {
		close(err[0]);
		fail_msg("rc_run_child: fork: %s", strerror(errno));
	}
	collect_child(pid, pid, &(struct pipe_in){ err[0], &err_text }, 1,
		      run_child_timeout_ms(), &status);
	out->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	first_line(err_text.data, out->message, sizeof(out->message));
	snprintf(out->stderr_text, sizeof(out->stderr_text), "%s",
		 err_text.data ? err_text.data : "");
	free(err_text.data);
}

/* ------------------------------------------------------------ the run */

static void print_indented(const char *text)
{
	while (*text) {
		int len = (int)strcspn(text, "\n");

		printf("    %.*s\n", len, text);
		text += len + (text[len] == '\n');
	}
}

static void print_result(const struct rc_result *r, bool verbose)
{
	static const char *const doc_text[] = {
		[RC_DOC_UNREPORTED] = "",
		[RC_DOC_HELD] = " (documented rule held)",
		[RC_DOC_NOT_HELD] = " (documented rule did not hold)",
	};
	static const char *const tag[] = {
		[RC_FAIL] = "FAIL", [RC_SKIPPED] = "skip", [RC_DEVIATION] = "dev",
	};

	if (r->verdict == RC_PASS)
		printf("ok      %s%s\n", r->test->name, doc_text[r->documented]);
	else
		printf("%-8s%s: %s%s\n", tag[r->verdict], r->test->name,
		       r->reason, doc_text[r->documented]);
	if (r->verdict == RC_FAIL || verbose)
		print_indented(r->output);
	fflush(stdout);
}

static FILE *open_report(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fprintf(stderr, "rdmacheck: cannot open %s: %s\n", path,
			strerror(errno));
	return f;
}

/* Writes and closes one report; false (after saying why) if any of it
 * failed. */
static bool finish_report(FILE *f, const char *path,
			  int (*write_report)(FILE *, const struct rc_run *),
			  const struct rc_run *run)
{
	int wrote, closed;

	if (!f)
		return true;
	errno = 0;
	wrote = write_report(f, run);
	if (wrote == 0 && ferror(f))
		wrote = -1;
	closed = fclose(f);
	if (wrote == 0 && closed == 0)
		return true;
	fprintf(stderr, "rdmacheck: cannot write %s: %s\n", path,
		strerror(errno ? errno : EIO));
	return false;
}

/* Capability skips the profile does not declare, on one line ("mlx5dv (3
 * tests), infiniband (1 test)"), so that a vendor sees what it misses. */
static void print_undeclared(const struct rc_result *res, size_t n)
{
	struct undeclared {
		char cap[CAPABILITY_MAX];
		size_t tests;
	} *seen = xcalloc(n, sizeof(*seen));
	size_t nseen = 0, j;
	char cap[CAPABILITY_MAX];

	for (size_t i = 0; i < n; i++) {
		if (res[i].verdict != RC_SKIPPED ||
		    !rc_skip_capability(res[i].reason, cap, sizeof(cap)) ||
		    rc_lacks(cap, NULL))
			continue;
		for (j = 0; j < nseen && strcmp(seen[j].cap, cap); j++)
			;
		if (j == nseen)
			memcpy(seen[nseen++].cap, cap, sizeof(cap));
		seen[j].tests++;
	}
	for (j = 0; j < nseen; j++)
		printf("%s %s (%zu test%s)", j ? "," : "undeclared capability skips:",
		       seen[j].cap, seen[j].tests, seen[j].tests == 1 ? "" : "s");
	if (nseen)
		putchar('\n');
	free(seen);
}

/* A deviation the profile lists whose tests all passed in this run: the
 * profile is out of date. Marks those tests, prints a line per clause and
 * returns how many clauses. */
static size_t mark_stale_deviations(struct rc_result *res, size_t n)
{
	size_t stale = 0;

	for (enum rc_clause_id c = 0; c < CL__COUNT; c++) {
		size_t tests = 0, passed = 0;

		if (!rc_profile_deviation(c))
			continue;
		for (size_t i = 0; i < n; i++) {
			tests += res[i].test->clause == c;
			passed += res[i].test->clause == c &&
				  res[i].verdict == RC_PASS;
		}
		if (!tests || passed < tests)
			continue;
		for (size_t i = 0; i < n; i++)
			if (res[i].test->clause == c)
				snprintf(res[i].reason, sizeof(res[i].reason),
					 "stale deviation");
		printf("stale deviation %s: it passes now; remove it from "
		       "profile %s\n", rc_clauses[c].id, rc_profile_name());
		stale++;
	}
	return stale;
}

/* The lines after the tests': the header, what the profile misses or no
 * longer needs, the known deviations and the closing line CI parses.
 * Returns the exit code the results call for. */
static int print_summary(const struct rc_run *run, struct rc_result *res,
			 const struct options *o)
{
	size_t counts[RC_VERDICTS] = { 0 }, stale;

	for (size_t i = 0; i < run->count; i++)
		counts[res[i].verdict]++;
	printf("rdmacheck: backend %s%s%s, binary %s, %zu test%s in %.1f s\n",
	       run->backend, run->profile ? ", profile " : "",
	       run->profile ? run->profile : "", run->binary, run->count,
	       run->count == 1 ? "" : "s", run->seconds);
	print_undeclared(res, run->count);
	stale = mark_stale_deviations(res, run->count);
	if (stale && o->strict)
		printf("strict: a stale deviation fails the run\n");
	if (counts[RC_DEVIATION])
		printf("%zu known deviation%s\n", counts[RC_DEVIATION],
		       counts[RC_DEVIATION] == 1 ? "" : "s");
	printf("%zu passed, %zu failed, %zu skipped\n", counts[RC_PASS],
	       counts[RC_FAIL], counts[RC_SKIPPED]);
	fflush(stdout);
	return counts[RC_FAIL] || (stale && o->strict) ? 1 : 0;
}


/* A file a writer filled (wrote: 0, -1 with errno, or below -1 for a
 * problem the writer has said, which `why` explains), closed; false after
 * saying why, else `done` is printed. */
static bool close_written(FILE *f, const char *path, int wrote, const char *why, const char *done)
{
	int closed = fclose(f);

	if (wrote < -1) {
		unlink(path); /* what it holds is not the whole */
		fprintf(stderr, "rdmacheck: %s not written: %s (above)\n", path, why);
	}
	else if (wrote || closed)
		fprintf(stderr, "rdmacheck: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
	else
		printf("rdmacheck: %s %s\n", done, path);
	return !wrote && !closed;
}

static bool html_report(FILE *f, const struct options *o, const struct rc_run *run)
{
	errno = 0;
	return close_written(f, o->report, rc_write_html(f, run, o->baseline),
			     "--baseline could not be read", "report written to");
}

static bool record_profile(FILE *f, const struct options *o, const struct rc_run *run)
{
	errno = 0;
	return close_written(f, o->record, rc_write_profile(f, o->record, run, o->nglobs > 0),
			     "the device's attributes could not be read", "profile recorded in");
}

static int run_suite(const struct options *o, const struct rc_test **sel,
		     size_t n, const char *binary)
{
	FILE *tap = NULL, *junit = NULL, *results = NULL, *record = NULL, *report = NULL;
	struct rc_result *res = xcalloc(n, sizeof(*res));
	struct rc_run run = { .backend = rc_backend_name(),
			      .profile = rc_profile_name(), .binary = binary,
			      .results = res, .count = n };
	double start = now_seconds();
	bool reports_ok;
	int rc;

	if ((o->tap && !(tap = open_report(o->tap))) ||
	    (o->junit && !(junit = open_report(o->junit))) ||
	    (o->results && !(results = open_report(o->results))) ||
	    (o->record && !(record = open_report(o->record))) ||
	    (o->report && !(report = open_report(o->report)))) {
		FILE *opened[] = { tap, junit, results, record, report };

		for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++)
			if (opened[i])
				fclose(opened[i]);
		free(res);
		return EXIT_USAGE;
	}
	sigchld_watch();
	signal(SIGINT, on_interrupt);
	signal(SIGTERM, on_interrupt);
	run_selection(o, sel, res, n);
	run.seconds = now_seconds() - start;
	rc = print_summary(&run, res, o);
	reports_ok = finish_report(tap, o->tap, rc_write_tap, &run);
	reports_ok &= finish_report(junit, o->junit, rc_write_junit, &run);
	reports_ok &= finish_report(results, o->results, rc_write_results, &run);
	if (record)
		reports_ok &= record_profile(record, o, &run);
	if (report)
		reports_ok &= html_report(report, o, &run);
	for (size_t i = 0; i < n; i++)
		free(res[i].output);
	free(res);
	return reports_ok ? rc : EXIT_USAGE;
}

/* --profile, else $RDMACHECK_PROFILE, loaded before any test forks. */
static int load_profile(const struct options *o)
{
	const char *path = o->profile ? o->profile : getenv("RDMACHECK_PROFILE");

	if (!path || !*path)
		return 0;
	return rc_profile_load(path) ? EXIT_USAGE : 0;
}

/* --inline: each test in this process, as its child would run it; a crash
 * is the runner's, and a sanitizer's report goes straight out. 1 if a test
 * failed. */
static int run_inline(const struct rc_test **sel, size_t n)
{
	int failed = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (size_t i = 0; i < n; i++) {
		child_test = sel[i];
		child_completed = false;
		failed |= cmocka_run_one(sel[i]->name, run_child_test) != 0;
		/* What a stopped test (a failed assertion, a skip) left is not
		 * a leak: no list at exit, where a skip exits 0 and the sweep
		 * would take the list for one. */
		if (!child_completed) {
			unsetenv("RDMAMOCK_STRICT");
			setenv("RDMAMOCK_LEDGER", "0", 1);
		}
	}
	return failed;
}

/* Tests at once need a fabric each: the mock, on private fabrics. Where
 * they cannot have one, -j is said and dropped: one test at a time. */
static bool parallel_ok(const char *prog)
{
	const char *fabric = getenv("RDMAMOCK_FABRIC");

	if (!rc_backend_is_mock()) {
		fprintf(stderr, "%s: -j: the real backend's tests share its device; "
			"they run one at a time\n", prog);
		return false;
	}
	if (fabric && strcmp(fabric, "private")) {
		fprintf(stderr, "%s: -j: RDMAMOCK_FABRIC=%s is one fabric for every test; "
			"they run one at a time on it\n", prog, fabric);
		return false;
	}
	return true;
}

static int run_or_list(struct options *o, const char *binary)
{
	const struct rc_test **sel = xcalloc(rc_test_count, sizeof(*sel));
	size_t n;
	int rc = load_profile(o);

	if (rc == 0)
		rc = select_tests(o, sel, &n);
	if (rc == 0 && o->jobs > 1 && !o->list && !o->inline_run && !parallel_ok(binary))
		o->jobs = 1;
	if (rc == 0 && o->list)
		print_list(sel, n);
	else if (rc == 0 && o->inline_run)
		rc = run_inline(sel, n);
	else if (rc == 0)
		rc = run_suite(o, sel, n, binary);
	free(sel);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	/* A test's child, under libfiu's POSIX preload (posix_faults.c). */
	if (argc == 3 && !strcmp(argv[1], "--posix-probe"))
		return rc_posix_probe ? rc_posix_probe(argv[2]) : EXIT_USAGE;
	rc = parse_options(argc, argv, &o);

	/* On the mock each test starts from a fabric of its own, unless the
	 * caller named a shared one (a two-process run, against --serve). */
	setenv("RDMAMOCK_FABRIC", "private", 0);
	if (rc < 0 && o.serve) {
		if (!rc_serve) {
			fprintf(stderr, "%s: this binary has no peer responder\n", argv[0]);
			rc = EXIT_USAGE;
		} else {
			rc = rc_serve();
		}
	} else if (rc < 0 && o.matrix) {
		rc = rc_write_matrix(o.matrix, o.columns, o.ncolumns, o.compare);
		rc = rc < 0 ? EXIT_USAGE : rc;
	} else if (rc < 0) {
		/* The mock's ledger is strict for the tests: a test that leaks,
		 * double-frees or leaves events unacked crashes, with the report
		 * in its output. rdma-core ignores the variable; a caller's
		 * RDMAMOCK_STRICT=0 wins. */
		setenv("RDMAMOCK_STRICT", "1", 0);
		rc = run_or_list(&o, argv[0]);
	}
	free(o.globs);
	free(o.columns);
	return rc;
}
