/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmamock-run: run an unmodified program on the mock.
 *
 *   rdmamock-run [--fabric NAME] [--topology SPEC] [--profile FILE] [--fault SPEC]...
 *                [--wait-listen [tcp:|udp:]PORT] [--] PROG [ARG]...
 *
 * It puts the drop-in libraries first on LD_LIBRARY_PATH (the user's own
 * path stays after them), names the fabric, the topology and the faults in
 * the environment, and execs PROG, so PROG's exit status is its own. The
 * fabric is one of the run's own (run-<pid>) unless --fabric or
 * RDMAMOCK_FABRIC names one: a script that starts a server and a client
 * gives both the same fabric, and parallel runs never meet. On a fabric of
 * its own PROG runs as a child instead, so that the fabric's files can go
 * when it ends; its exit status or signal is passed on all the same. Each --fault is
 * checked before PROG starts; a bad one is named, and nothing runs.
 * --wait-listen starts PROG once a CM id listens on the port (a client
 * after its server). The mock's ledger is on (RDMAMOCK_LEDGER=1 unless
 * the user set it): PROG's leaks are listed on stderr when it exits.
 * --profile replays a recorded device profile (RDMAMOCK_PROFILE): it is read
 * here first, so a bad one is named before anything runs. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile.h"
#include "tool.h"

#define ME "rdmamock-run"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: " ME " [--fabric NAME] [--topology SPEC] [--profile FILE] [--fault SPEC]...\n"
		"                    [--wait-listen [tcp:|udp:]PORT] [--] PROG [ARG]...\n"
		"  --fabric NAME    the fabric (RDMAMOCK_FABRIC); default: one of this run's own,\n"
		"                   whose files go when PROG ends\n"
		"  --topology SPEC  the devices and addresses (RDMAMOCK_TOPOLOGY syntax)\n"
		"  --profile FILE   be the device a recorded profile describes (RDMAMOCK_PROFILE;\n"
		"                   rdmacheck --record-profile writes one)\n"
		"  --fault SPEC     faults, as RDMAMOCK_FAULTS (may be given more than once)\n"
		"  --wait-listen [tcp:|udp:]PORT\n"
		"                   start PROG once a CM id listens there (at most 30 s)\n"
		"PROG runs with RDMAMOCK_LEDGER=1 unless set: what it never destroyed is\n"
		"listed on stderr at its exit (RDMAMOCK_STRICT=1: and it aborts).\n"
		"PROG's exit status is passed through; " ME " itself exits 2 on a usage\n"
		"error or a bad fault, 127 when PROG cannot be run.\n");
}

/* --profile FILE: read with the mock's own parser, so that a bad profile
 * stops the run here, then named to PROG by its full path (PROG may chdir). */
static void use_profile(const char *path)
{
	struct rp_profile p;
	char err[2048], full[PATH_MAX];

	if (rp_load(path, &p, err, sizeof err)) {
		fprintf(stderr, ME ": --profile %s\n", err);
		exit(2);
	}
	rp_free(&p);
	if (!realpath(path, full)) {
		fprintf(stderr, ME ": --profile %s: %s\n", path, strerror(errno));
		exit(2);
	}
	setenv("RDMAMOCK_PROFILE", full, 1);
}

/* --wait-listen [tcp:|udp:]PORT: wait, up to 30 s, until a CM id listens
 * there on the fabric. A child does the waiting, so that this process execs
 * PROG without having joined the fabric. */
static void wait_listen(const char *dir, const char *what)
{
	const char *port = strchr(what, ':') ? strchr(what, ':') + 1 : what;
	int ps = !strncmp(what, "udp:", 4) ? 0x0111 : 0x0106; /* RDMA_PS_UDP, RDMA_PS_TCP */
	char *end;
	long n = strtol(port, &end, 10);
	int status;
	pid_t pid, self = getpid();

	if (end == port || *end || n < 1 || n > 65535 ||
	    (port != what && strncmp(what, "tcp:", 4) && strncmp(what, "udp:", 4))) {
		fprintf(stderr, ME ": --wait-listen %s: not [tcp:|udp:]PORT\n", what);
		exit(2);
	}
	pid = fork();
	if (pid == 0) {
		int (*listening)(int, unsigned short);

		/* Killed with this process (a pair script stopping its client
		 * because the server failed), the waiter goes too, not 30 s on. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != self)
			_exit(2);
		listening = (int (*)(int, unsigned short))tool_mock_call(dir, "rdmamock_listening");

		for (int i = 0; i < 3000; i++) {
			if (listening(ps, (unsigned short)n) == 1)
				_exit(0);
			usleep(10000);
		}
		_exit(1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1)
			fprintf(stderr, ME ": nobody listens on %s after 30 s\n", what);
		else if (pid > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 2))
			fprintf(stderr, ME ": waiting for a listener on %s failed\n", what);
		exit(2);
	}
}

static pid_t prog_pid;

static void pass_on(int sig)
{
	kill(prog_pid, sig);
}

/* A fabric of the run's own goes with the run: PROG runs as a child, and
 * once it has ended the fabric's files go (its lock file too) unless
 * processes it started still use it, and its exit status or signal is
 * passed on. A fabric the user named stays, for
 * the next program to meet on. */
static int run_on_own(char **prog, const char *dir, const char *fabric)
{
	int (*fabric_remove)(const char *);
	int status;

	prog_pid = fork();
	if (prog_pid < 0) {
		fprintf(stderr, ME ": fork: %s\n", strerror(errno));
		return 127;
	}
	if (prog_pid == 0) {
		execvp(prog[0], prog);
		fprintf(stderr, ME ": %s: %s\n", prog[0], strerror(errno));
		_exit(127);
	}
	/* A terminal's ^C reaches PROG itself; a signal sent to this
	 * process is passed on. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, pass_on);
	signal(SIGHUP, pass_on);
	while (waitpid(prog_pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, ME ": waitpid: %s\n", strerror(errno));
			return 127;
		}
	unsetenv("RDMAMOCK_FABRIC"); /* this process is not on it */
	fabric_remove = (int (*)(const char *))tool_mock_call(dir, "rdmamock_fabric_remove");
	/* Processes PROG left running (daemons, its children in the
	 * background) keep the fabric: the last of them takes its files. */
	if (fabric_remove(fabric) == -EBUSY)
		fprintf(stderr, ME ": fabric %s stays: processes %s started still use it, and the last of them removes it\n",
			fabric, prog[0]);
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "topology", required_argument, NULL, 't' },
		{ "profile", required_argument, NULL, 'p' },
		{ "fault", required_argument, NULL, 'F' },
		{ "wait-listen", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fabric = getenv("RDMAMOCK_FABRIC"), *topology = NULL, *listen_at = NULL, *profile = NULL;
	char dir[PATH_MAX], own[32], *faults = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fabric = optarg;
			break;
		case 't':
			topology = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 'F':
			faults = tool_append(faults, ";", optarg);
			break;
		case 'w':
			listen_at = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	tool_name = ME;
	tool_dropin_dir(dir, sizeof dir);
	if (faults) {
		tool_check_faults(dir, "--fault", faults);
		setenv("RDMAMOCK_FAULTS", faults, 1);
	}
	if (!fabric || !*fabric) {
		snprintf(own, sizeof own, "run-%d", (int)getpid());
		fabric = own;
	}
	setenv("RDMAMOCK_FABRIC", fabric, 1);
	if (topology)
		setenv("RDMAMOCK_TOPOLOGY", topology, 1);
	if (profile)
		use_profile(profile);
	setenv("RDMAMOCK_LEDGER", "1", 0); /* the user's 0 stays */
	tool_library_path(dir);
	if (listen_at)
		wait_listen(dir, listen_at);
	if (fabric == own)
		return run_on_own(argv + optind, dir, own);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, ME ": %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
