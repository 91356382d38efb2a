/* rdmamock-run: run an unmodified program on the mock.
 *
 *   rdmamock-run [--fabric NAME] [--topology SPEC] [--fault SPEC]... [--] PROG [ARG]...
 *
 * It puts the drop-in libraries first on LD_LIBRARY_PATH (the user's own
 * path stays after them), names the fabric, the topology and the faults in
 * the environment, and execs PROG, so PROG's exit status is its own. The
 * fabric is one of the run's own (run-<pid>) unless --fabric or
 * RDMAMOCK_FABRIC names one: a script that starts a server and a client
 * gives both the same fabric, and parallel runs never meet. Each --fault is
 * checked before PROG starts; a bad one is named, and nothing runs. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ME "rdmamock-run"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: " ME " [--fabric NAME] [--topology SPEC] [--fault SPEC]... [--] PROG [ARG]...\n"
		"  --fabric NAME    the fabric (RDMAMOCK_FABRIC); default: one of this run's own\n"
		"  --topology SPEC  the devices and addresses (RDMAMOCK_TOPOLOGY syntax)\n"
		"  --fault SPEC     faults, as RDMAMOCK_FAULTS (may be given more than once)\n"
		"PROG's exit status is passed through; " ME " itself exits 2 on a usage\n"
		"error or a bad fault, 127 when PROG cannot be run.\n");
}

/* The drop-in libraries: beside this program, ../mock/lib in the build tree. */
static void dropin_dir(char *dir, size_t size)
{
	char self[PATH_MAX], wanted[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n < 0) {
		fprintf(stderr, ME ": /proc/self/exe: %s\n", strerror(errno));
		exit(2);
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(wanted, sizeof wanted, "%s/../mock/lib", self);
	if (!realpath(wanted, self) || snprintf(dir, size, "%s", self) >= (int)size) {
		fprintf(stderr, ME ": no drop-in libraries at %s\n", wanted);
		exit(2);
	}
	snprintf(wanted, sizeof wanted, "%s/librdmacm.so.1", dir);
	if (access(wanted, R_OK)) {
		fprintf(stderr, ME ": %s: %s (make mock builds it)\n", wanted, strerror(errno));
		exit(2);
	}
}

/* Check the faults with the mock's own parser (rdmamock_fault_check). */
static void check_faults(const char *dir, const char *spec)
{
	int (*check)(const char *, char *, size_t);
	char path[PATH_MAX + 32], err[256];
	void *lib;

	snprintf(path, sizeof path, "%s/librdmamock.so.0", dir);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, ME ": %s\n", dlerror());
		exit(2);
	}
	check = (int (*)(const char *, char *, size_t))dlsym(lib, "rdmamock_fault_check");
	if (!check) {
		fprintf(stderr, ME ": %s has no rdmamock_fault_check\n", path);
		exit(2);
	}
	if (check(spec, err, sizeof err) < 0) {
		fprintf(stderr, ME ": --fault: %s\n", err);
		exit(2);
	}
	dlclose(lib);
}

static char *append(char *list, const char *sep, const char *item)
{
	size_t n = list ? strlen(list) + strlen(sep) : 0;
	char *out = realloc(list, n + strlen(item) + 1);

	if (!out) {
		fprintf(stderr, ME ": out of memory\n");
		exit(2);
	}
	if (n)
		strcat(out, sep);
	else
		out[0] = '\0';
	strcat(out, item);
	return out;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "topology", required_argument, NULL, 't' },
		{ "fault", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fabric = getenv("RDMAMOCK_FABRIC"), *topology = NULL, *old;
	char dir[PATH_MAX], own[32], *faults = NULL, *path;
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fabric = optarg;
			break;
		case 't':
			topology = optarg;
			break;
		case 'F':
			faults = append(faults, ";", optarg);
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
	dropin_dir(dir, sizeof dir);
	if (faults) {
		check_faults(dir, faults);
		setenv("RDMAMOCK_FAULTS", faults, 1);
	}
	if (!fabric || !*fabric) {
		snprintf(own, sizeof own, "run-%d", (int)getpid());
		fabric = own;
	}
	setenv("RDMAMOCK_FABRIC", fabric, 1);
	if (topology)
		setenv("RDMAMOCK_TOPOLOGY", topology, 1);
	old = getenv("LD_LIBRARY_PATH");
	path = append(NULL, "", dir);
	if (old && *old)
		path = append(path, ":", old);
	setenv("LD_LIBRARY_PATH", path, 1);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, ME ": %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
