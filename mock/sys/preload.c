/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* librdmamock-sys.so: the system view (view.h) put where the kernel puts
 * it, for a program started with it in LD_PRELOAD (rdmamock-run does so).
 *
 * It interposes the C library's calls that name a path (open, fopen, the
 * stat family, access, opendir, scandir, readlink, realpath): a path in
 * the view (/sys/class/infiniband/..., /dev/infiniband/...) is taken to
 * the fabric's tree, a file there is rendered when it is opened (so it
 * reads what the fabric says now), a character device there stats as
 * one, and realpath answers with /sys paths, not the tree's. Any other
 * path goes to the C library untouched. librdmamock.so.0, which makes the
 * view, is loaded only when a program first names a path of the view.
 *
 * What it cannot see: a program that makes system calls itself, or a
 * static one; the C library's own internal opens (nothing in glibc reads
 * these files). Relative paths are followed from the working directory or
 * the directory descriptor when they name "infiniband" or the mock's PCI
 * domain. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/view.h"

#define EXPORT __attribute__((visibility("default")))

/* Set while this thread is inside the view's own code: everything it does
 * goes to the C library. */
static __thread bool inside;

static const char *(*view_root)(void);
static int (*view_read)(const char *, char *, size_t, dev_t *);
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "rdmamock: librdmamock-sys.so: no %s after it in the C library\n", name);
		abort();
	}
	return f;
}
/* The C library's function of that name, found on first use. */
static void *resolve(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!f) {
		f = next(name);
		__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	}
	return f;
}
#define REAL(name) ((__typeof__(real_##name))resolve((void **)&real_##name, #name))

static void load(void)
{
	static const char *const where[] = { "/librdmamock.so.0", "/../librdmamock.so.0" };
	char dir[PATH_MAX], path[PATH_MAX + 32];
	void *h = NULL;
	Dl_info self;

	bool was = inside;

	inside = true;
	if (dladdr((void *)load, &self) && self.dli_fname && strrchr(self.dli_fname, '/')) {
		snprintf(dir, sizeof dir, "%s", self.dli_fname);
		*strrchr(dir, '/') = '\0';
		for (size_t i = 0; i < sizeof where / sizeof where[0] && !h; i++) {
			snprintf(path, sizeof path, "%s%s", dir, where[i]);
			h = dlopen(path, RTLD_NOW);
		}
	}
	if (!h)
		h = dlopen("librdmamock.so.0", RTLD_NOW);
	if (h) {
		view_root = (const char *(*)(void))dlsym(h, "sys_view_root");
		view_read = (int (*)(const char *, char *, size_t, dev_t *))dlsym(h, "sys_view_read");
	}
	if (!view_root || !view_read)
		fprintf(stderr, "rdmamock: librdmamock-sys.so: cannot load librdmamock.so.0 (%s); "
				"/sys/class/infiniband and /dev/infiniband are the host's\n",
			dlerror());
	inside = was;
}

/* The tree's root, or NULL (the host's files are used then, and the
 * reason was said once). */
static const char *root(void)
{
	static bool said;
	bool was = inside;
	const char *r;

	pthread_once(&load_once, load);
	if (!view_root)
		return NULL;
	inside = true;
	r = view_root();
	inside = was;
	if (!r && !__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		fprintf(stderr, "rdmamock: librdmamock-sys.so: the system view cannot be made (%s); "
				"/sys/class/infiniband and /dev/infiniband are the host's\n",
			strerror(errno));
	return r;
}

/* Lexically: no "//" and no "/./" (".." is left to the tree's own
 * directories, which mirror the host's). */
static void tidy(char *p)
{
	char *r = p, *w = p;

	while (*r) {
		if (r[0] == '/' && (r[1] == '/' || (r[1] == '.' && (r[2] == '/' || !r[2])))) {
			r += r[1] == '/' ? 1 : 2;
			continue;
		}
		*w++ = *r++;
	}
	if (w > p + 1 && w[-1] == '/')
		w--;
	*w = '\0';
}

/* The absolute path a program names (dirfd AT_FDCWD or a directory), if
 * it may be the view's. */
static bool absolute(int dirfd, const char *path, char *abs, size_t size)
{
	char base[PATH_MAX], link[64];
	ssize_t n;

	if (!path || !*path)
		return false;
	if (path[0] == '/') {
		if (strncmp(path, "/sys/", 5) && strncmp(path, "/dev/", 5))
			return false;
		if (snprintf(abs, size, "%s", path) >= (int)size)
			return false;
	} else {
		if (!strstr(path, "infiniband") && !strstr(path, SYS_VIEW_PCI_DOMAIN ":"))
			return false;
		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof base))
				return false;
		} else {
			snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
			n = readlink(link, base, sizeof base - 1);
			if (n <= 0)
				return false;
			base[n] = '\0';
		}
		if (snprintf(abs, size, "%s/%s", strcmp(base, "/") ? base : "", path) >= (int)size)
			return false;
	}
	tidy(abs);
	return sys_view_owns(abs);
}

/* Where the view keeps what the program names: its path in the tree (and
 * the path the program meant, in abs). */
static bool redirect(int dirfd, const char *path, char *abs, char *to, size_t size)
{
	const char *r;

	if (inside || !absolute(dirfd, path, abs, PATH_MAX))
		return false;
	r = root();
	if (!r)
		return false;
	snprintf(to, size, "%s%s", r, abs);
	return true;
}

static char *(*real_realpath)(const char *, char *);

/* A file of the view as it reads now: a descriptor of an anonymous file
 * holding it; for an attribute the kernel refuses to read, a descriptor
 * whose read fails with EINVAL; -2 when it is not such a file (a
 * directory, a device, none). */
static int render(const char *abs, int flags)
{
	char text[4096];
	dev_t rdev;
	int n, fd;

	inside = true;
	n = view_read(abs, text, sizeof text, &rdev);
	inside = false;
	/* kernfs opens the attribute and runs its show at the read, which
	 * fails (sysfs_kf_seq_show): an epoll descriptor opens as well and
	 * has no read, so read(2) gives EINVAL there too. */
	if (n == -EINVAL)
		return epoll_create1(flags & O_CLOEXEC ? EPOLL_CLOEXEC : 0);
	if (n < 0 || rdev)
		return -2;
	fd = memfd_create("rdmamock-sysfs", flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (write(fd, text, (size_t)n) != n || lseek(fd, 0, SEEK_SET)) {
		int err = errno;

		close(fd);
		errno = err ? err : EIO;
		return -1;
	}
	return fd;
}

static bool reading(int flags)
{
	return (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_DIRECTORY | O_CREAT | O_PATH));
}

/* ---------------------------------------------------------------- open */

static int (*real_openat)(int, const char *, int, ...);

static int view_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	if (redirect(dirfd, path, abs, to, sizeof to)) {
		if (reading(flags)) {
			int fd = render(abs, flags);

			if (fd != -2)
				return fd;
		}
		return REAL(openat)(AT_FDCWD, to, flags, mode);
	}
	return REAL(openat)(dirfd, path, flags, mode);
}

/*
 * The mode an open's variadic argument carries, read only when O_CREAT or
 * O_TMPFILE says there is one; used inside the variadic wrapper itself.
 */
#define MODE_ARG(flags)                                                            \
	({                                                                         \
		va_list ap_;                                                       \
		mode_t mode_ = 0;                                                  \
		if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {       \
			va_start(ap_, flags);                                      \
			mode_ = (mode_t)va_arg(ap_, int);                          \
			va_end(ap_);                                               \
		}                                                                  \
		mode_;                                                             \
	})

EXPORT int open(const char *path, int flags, ...)
{
	return view_openat(AT_FDCWD, path, flags, MODE_ARG(flags));
}

EXPORT int open64(const char *path, int flags, ...)
{
	return view_openat(AT_FDCWD, path, flags, MODE_ARG(flags));
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	return view_openat(dirfd, path, flags, MODE_ARG(flags));
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	return view_openat(dirfd, path, flags, MODE_ARG(flags));
}

/* _FORTIFY_SOURCE's checked opens (no O_CREAT). */
EXPORT int __open_2(const char *path, int flags)
{
	return view_openat(AT_FDCWD, path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags)
{
	return view_openat(AT_FDCWD, path, flags, 0);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return view_openat(dirfd, path, flags, 0);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return view_openat(dirfd, path, flags, 0);
}

static FILE *(*real_fopen)(const char *, const char *);

EXPORT FILE *fopen(const char *path, const char *how)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	if (redirect(AT_FDCWD, path, abs, to, sizeof to)) {
		if (how && how[0] == 'r' && !strchr(how, '+')) {
			int fd = render(abs, strchr(how, 'e') ? O_CLOEXEC : 0);

			if (fd == -1)
				return NULL;
			if (fd >= 0) {
				FILE *f = fdopen(fd, how);

				if (!f)
					close(fd);
				return f;
			}
		}
		return REAL(fopen)(to, how);
	}
	return REAL(fopen)(path, how);
}

EXPORT FILE *fopen64(const char *path, const char *how)
{
	return fopen(path, how);
}

/* ---------------------------------------------------------------- stat */

/* What stat says of a path of the view: a character device for the
 * view's devices, and a sysfs attribute's size (a page), as the kernel
 * says them. */
static void as_the_kernel(const char *abs, struct stat *st)
{
	dev_t rdev = 0;

	if (!strncmp(abs, "/dev/", 5)) {
		inside = true;
		if (view_read(abs, NULL, 0, &rdev) == 0 && rdev) {
			st->st_mode = S_IFCHR | 0666;
			st->st_rdev = rdev;
			st->st_size = 0;
		}
		inside = false;
	} else if (S_ISREG(st->st_mode)) {
		st->st_size = sysconf(_SC_PAGESIZE); /* sysfs_add_file_mode_ns: PAGE_SIZE */
	}
}

static int (*real_fstatat)(int, const char *, struct stat *, int);

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];
	int ret;

	if (!redirect(dirfd, path, abs, to, sizeof to))
		return REAL(fstatat)(dirfd, path, st, flags);
	ret = REAL(fstatat)(AT_FDCWD, to, st, flags);
	if (!ret)
		as_the_kernel(abs, st);
	return ret;
}

/* On x86_64 and the other 64-bit targets struct stat64 is struct stat. */
_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "struct stat64 is struct stat");

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return fstatat(dirfd, path, (struct stat *)st, flags);
}

EXPORT int stat(const char *path, struct stat *st)
{
	return fstatat(AT_FDCWD, path, st, 0);
}

EXPORT int stat64(const char *path, struct stat64 *st)
{
	return fstatat(AT_FDCWD, path, (struct stat *)st, 0);
}

EXPORT int lstat(const char *path, struct stat *st)
{
	return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return fstatat(AT_FDCWD, path, (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}

/* Programs built against a C library before 2.33 call these. */
EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	(void)ver;
	return fstatat(AT_FDCWD, path, st, 0);
}

EXPORT int __xstat64(int ver, const char *path, struct stat *st)
{
	(void)ver;
	return fstatat(AT_FDCWD, path, st, 0);
}

EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	(void)ver;
	return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

EXPORT int __lxstat64(int ver, const char *path, struct stat *st)
{
	(void)ver;
	return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	(void)ver;
	return fstatat(dirfd, path, st, flags);
}

EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	(void)ver;
	return fstatat(dirfd, path, st, flags);
}

static int (*real_statx)(int, const char *, int, unsigned, struct statx *);

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];
	struct stat st;
	int ret;

	if (!redirect(dirfd, path, abs, to, sizeof to))
		return REAL(statx)(dirfd, path, flags, mask, stx);
	ret = REAL(statx)(AT_FDCWD, to, flags, mask, stx);
	if (ret)
		return ret;
	st.st_mode = stx->stx_mode;
	st.st_rdev = 0;
	st.st_size = (off_t)stx->stx_size;
	as_the_kernel(abs, &st);
	stx->stx_mode = (uint16_t)st.st_mode;
	stx->stx_size = (uint64_t)st.st_size;
	if (S_ISCHR(st.st_mode)) {
		stx->stx_rdev_major = major(st.st_rdev);
		stx->stx_rdev_minor = minor(st.st_rdev);
	}
	return 0;
}

/* ---------------------------------------------------------------- the rest */

static int (*real_faccessat)(int, const char *, int, int);

EXPORT int faccessat(int dirfd, const char *path, int how, int flags)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	if (redirect(dirfd, path, abs, to, sizeof to))
		return REAL(faccessat)(AT_FDCWD, to, how, flags);
	return REAL(faccessat)(dirfd, path, how, flags);
}

static int (*real_access)(const char *, int);

EXPORT int access(const char *path, int how)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(access)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path, how);
}

static int (*real_euidaccess)(const char *, int);

EXPORT int euidaccess(const char *path, int how)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(euidaccess)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path, how);
}

EXPORT int eaccess(const char *path, int how)
{
	return euidaccess(path, how);
}

static DIR *(*real_opendir)(const char *);

EXPORT DIR *opendir(const char *path)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(opendir)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path);
}

typedef int (*dirent_filter)(const struct dirent *);
typedef int (*dirent_compare)(const struct dirent **, const struct dirent **);
static int (*real_scandir)(const char *, struct dirent ***, dirent_filter, dirent_compare);

EXPORT int scandir(const char *path, struct dirent ***list, dirent_filter filter, dirent_compare compare)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(scandir)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path, list, filter,
			     compare);
}

EXPORT int scandir64(const char *path, struct dirent64 ***list,
		     int (*filter)(const struct dirent64 *),
		     int (*compare)(const struct dirent64 **, const struct dirent64 **))
{
	return scandir(path, (struct dirent ***)list, (dirent_filter)filter, (dirent_compare)compare);
}

static ssize_t (*real_readlinkat)(int, const char *, char *, size_t);

EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	if (redirect(dirfd, path, abs, to, sizeof to))
		return REAL(readlinkat)(AT_FDCWD, to, buf, size);
	return REAL(readlinkat)(dirfd, path, buf, size);
}

EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
	return readlinkat(AT_FDCWD, path, buf, size);
}

/* Extended attributes (ls -l asks for ACLs): the tree's, which has none. */
static ssize_t (*real_getxattr)(const char *, const char *, void *, size_t);
static ssize_t (*real_lgetxattr)(const char *, const char *, void *, size_t);
static ssize_t (*real_listxattr)(const char *, char *, size_t);
static ssize_t (*real_llistxattr)(const char *, char *, size_t);

EXPORT ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(getxattr)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path, name, value,
			      size);
}

EXPORT ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(lgetxattr)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path, name, value,
			       size);
}

EXPORT ssize_t listxattr(const char *path, char *list, size_t size)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(listxattr)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path, list, size);
}

EXPORT ssize_t llistxattr(const char *path, char *list, size_t size)
{
	char abs[PATH_MAX], to[PATH_MAX * 2];

	return REAL(llistxattr)(redirect(AT_FDCWD, path, abs, to, sizeof to) ? to : path, list, size);
}

/* A path of the tree back to the name the program would see: the part
 * after the tree's root. */
EXPORT char *realpath(const char *path, char *resolved)
{
	char abs[PATH_MAX], to[PATH_MAX * 2], got[PATH_MAX];
	const char *r;
	size_t n;

	if (!redirect(AT_FDCWD, path, abs, to, sizeof to))
		return REAL(realpath)(path, resolved);
	if (!REAL(realpath)(to, got))
		return NULL;
	r = root();
	n = r ? strlen(r) : 0;
	if (r && !strncmp(got, r, n) && (got[n] == '/' || !got[n]))
		memmove(got, got + n, strlen(got + n) + 1);
	if (!resolved) {
		resolved = strdup(got);
		if (!resolved)
			errno = ENOMEM;
		return resolved;
	}
	return strcpy(resolved, got);
}

EXPORT char *__realpath_chk(const char *path, char *resolved, size_t size)
{
	(void)size;
	return realpath(path, resolved);
}

EXPORT char *canonicalize_file_name(const char *path)
{
	return realpath(path, NULL);
}
