/* libfault.c - an LD_PRELOAD library that makes system calls fail, for the
 * fault-injection tests (test/T95*-faults-*.sh).
 *
 * Configured by the environment (read once, at the first intercepted
 * call; nothing is injected without FAULT_OPS):
 *
 *   FAULT_OPS     comma-separated calls to fail: write (also writev),
 *                 pwrite (pwrite, pwrite64, pwritev), fsync, fdatasync,
 *                 connect, rename, link, exec (execv, execve,
 *                 posix_spawn: a program that is not there), dlopen (a
 *                 library that cannot be loaded), stall (a program whose
 *                 executable matches FAULT_PATH sleeps FAULT_STALL seconds,
 *                 default 3600, as it starts, when one of its arguments
 *                 matches FAULT_ARGV (default "*"): a gpg that hangs)
 *   FAULT_PATH    fnmatch(3) pattern for the file the descriptor is open
 *                 on (from /proc/self/fd; an unlinked file ends in
 *                 " (deleted)"), or the socket path for connect, or the
 *                 target of rename and link, or the program for exec,
 *                 or the library name given to dlopen;
 *                 default "*"
 *   FAULT_EXCLUDE fnmatch(3) pattern of files never to fail (e.g. a keyring)
 *   FAULT_ERRNO   ENOSPC (default), EIO, EDQUOT, ECONNREFUSED, ... or a number
 *   FAULT_AFTER   let this many matching calls through first (default 0)
 *   FAULT_COUNT   then fail this many (default: all that follow)
 *   FAULT_SHORT   1: the first failing write writes half of its bytes and
 *                 returns that count (a torn write); the next ones fail
 *   FAULT_LOG     append one line per injected failure to this file
 *
 * The calls are counted per process (children inherit the environment
 * and count for themselves).  Only descriptors on regular files count for
 * write and pwrite, so that stdout, stderr, pipes and sockets are never
 * touched unless FAULT_PATH names them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

enum { OP_WRITE = 1, OP_PWRITE = 2, OP_FSYNC = 4, OP_FDATASYNC = 8, OP_CONNECT = 16,
       OP_RENAME = 32, OP_LINK = 64, OP_EXEC = 128, OP_DLOPEN = 256, OP_STALL = 512 };

static int configured;
static unsigned ops;
static const char *pattern = "*";
static const char *exclude;
static int fail_errno = ENOSPC;
static long after;
static long count = -1;
static int short_write;
static const char *log_path;
static long seen;		/* matching calls so far */
static long failed;		/* failures injected so far */
static __thread int busy;	/* inside our own helpers */

static void
configure(void)
{
	const char *v;

	if (configured)
		return;
	configured = 1;
	v = getenv("FAULT_OPS");
	if (v == NULL || *v == '\0')
		return;
	{
		static const struct { const char *name; unsigned op; } names[] = {
			{ "write", OP_WRITE }, { "pwrite", OP_PWRITE }, { "fsync", OP_FSYNC },
			{ "fdatasync", OP_FDATASYNC }, { "connect", OP_CONNECT }, { "rename", OP_RENAME },
			{ "link", OP_LINK }, { "exec", OP_EXEC }, { "dlopen", OP_DLOPEN },
			{ "stall", OP_STALL },
		};
		const char *p = v;

		while (*p != '\0') {
			size_t n = strcspn(p, ",");

			for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
				if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0)
					ops |= names[i].op;
			p += n;
			if (*p == ',')
				p++;
		}
	}
	if ((v = getenv("FAULT_PATH")) != NULL && *v != '\0')
		pattern = v;
	if ((v = getenv("FAULT_EXCLUDE")) != NULL && *v != '\0')
		exclude = v;
	if ((v = getenv("FAULT_ERRNO")) != NULL && *v != '\0') {
		static const struct { const char *name; int e; } names[] = {
			{ "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EDQUOT", EDQUOT },
			{ "ECONNREFUSED", ECONNREFUSED }, { "ENOENT", ENOENT }, { "EROFS", EROFS },
			{ "EACCES", EACCES }, { "EFBIG", EFBIG },
		};
		fail_errno = atoi(v);
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (strcmp(v, names[i].name) == 0)
				fail_errno = names[i].e;
		if (fail_errno <= 0)
			fail_errno = ENOSPC;
	}
	if ((v = getenv("FAULT_AFTER")) != NULL)
		after = atol(v);
	if ((v = getenv("FAULT_COUNT")) != NULL && *v != '\0')
		count = atol(v);
	short_write = (v = getenv("FAULT_SHORT")) != NULL && strcmp(v, "1") == 0;
	log_path = getenv("FAULT_LOG");
}

static void note(const char *op, const char *what);

/* stall: the program itself, as it is loaded */
__attribute__((constructor)) static void
stall_at_start(void)
{
	char exe[4096];
	ssize_t n;
	const char *v;

	configure();
	if (!(ops & OP_STALL))
		return;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0)
		return;
	exe[n] = '\0';
	if (fnmatch(pattern, exe, 0) != 0)
		return;
	if ((v = getenv("FAULT_ARGV")) != NULL && *v != '\0') {
		char args[65536];
		int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
		ssize_t len = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
		int match = 0;

		if (fd >= 0)
			close(fd);
		for (ssize_t i = 0; i < len; i += (ssize_t) strlen(args + i) + 1) {
			args[len] = '\0';
			match |= fnmatch(v, args + i, 0) == 0;
		}
		if (!match)
			return;
	}
	note("stall", exe);
	v = getenv("FAULT_STALL");
	sleep(v != NULL && *v != '\0' ? (unsigned) atoi(v) : 3600);
}

#define REAL(ret, name, args) \
	static ret (*real_##name) args; \
	if (real_##name == NULL) \
		real_##name = (ret (*) args) dlsym(RTLD_NEXT, #name)

static void
note(const char *op, const char *what)
{
	char line[600];
	int fd, n;
	static int (*real_open)(const char *, int, ...);
	static ssize_t (*real_write)(int, const void *, size_t);

	if (log_path == NULL)
		return;
	if (real_open == NULL)
		real_open = (int (*)(const char *, int, ...)) dlsym(RTLD_NEXT, "open");
	if (real_write == NULL)
		real_write = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
	n = snprintf(line, sizeof line, "%ld %s %s %s\n", (long) getpid(), op, strerror(fail_errno), what);
	fd = real_open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void) !real_write(fd, line, (size_t) n);
		close(fd);
	}
}

/* The file behind fd, if it is one we may fail. */
static int
fd_matches(int fd, int regular_only, char *path, size_t size)
{
	char link[64];
	struct stat sb;
	ssize_t n;

	if (regular_only && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)))
		return 0;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	n = readlink(link, path, size - 1);
	if (n < 0)
		return 0;
	path[n] = '\0';
	return fnmatch(pattern, path, 0) == 0 && (exclude == NULL || fnmatch(exclude, path, 0) != 0);
}

/* Whether this matching call is one to fail. */
static int
take(void)
{
	seen++;
	if (seen <= after)
		return 0;
	if (count >= 0 && failed >= count)
		return 0;
	failed++;
	return 1;
}

static int
should_fail_fd(unsigned op, int fd, const char *opname)
{
	char path[4096];
	int r;

	configure();
	if (!(ops & op) || busy)
		return 0;
	busy = 1;
	r = fd_matches(fd, op == OP_WRITE || op == OP_PWRITE, path, sizeof path) && take();
	if (r)
		note(opname, path);
	busy = 0;
	return r;
}

static int
should_fail_path(unsigned op, const char *path, const char *opname)
{
	int r;

	configure();
	if (!(ops & op) || busy || path == NULL)
		return 0;
	busy = 1;
	r = fnmatch(pattern, path, 0) == 0 && (exclude == NULL || fnmatch(exclude, path, 0) != 0) && take();
	if (r)
		note(opname, path);
	busy = 0;
	return r;
}

/* A torn write: half of it, once; then the error. */
static int torn;

ssize_t
write(int fd, const void *buf, size_t n)
{
	REAL(ssize_t, write, (int, const void *, size_t));
	if (n > 0 && should_fail_fd(OP_WRITE, fd, "write")) {
		if (short_write && !torn && n > 1) {
			torn = 1;
			return real_write(fd, buf, n / 2);
		}
		errno = fail_errno;
		return -1;
	}
	return real_write(fd, buf, n);
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, writev, (int, const struct iovec *, int));
	if (should_fail_fd(OP_WRITE, fd, "writev")) {
		errno = fail_errno;
		return -1;
	}
	return real_writev(fd, iov, cnt);
}

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
	if (n > 0 && should_fail_fd(OP_PWRITE, fd, "pwrite")) {
		errno = fail_errno;
		return -1;
	}
	return real_pwrite(fd, buf, n, off);
}

ssize_t
pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	REAL(ssize_t, pwrite64, (int, const void *, size_t, off64_t));
	if (n > 0 && should_fail_fd(OP_PWRITE, fd, "pwrite64")) {
		errno = fail_errno;
		return -1;
	}
	return real_pwrite64(fd, buf, n, off);
}

ssize_t
pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(ssize_t, pwritev, (int, const struct iovec *, int, off_t));
	if (should_fail_fd(OP_PWRITE, fd, "pwritev")) {
		errno = fail_errno;
		return -1;
	}
	return real_pwritev(fd, iov, cnt, off);
}

int
fsync(int fd)
{
	REAL(int, fsync, (int));
	if (should_fail_fd(OP_FSYNC, fd, "fsync")) {
		errno = fail_errno;
		return -1;
	}
	return real_fsync(fd);
}

int
fdatasync(int fd)
{
	REAL(int, fdatasync, (int));
	if (should_fail_fd(OP_FDATASYNC, fd, "fdatasync")) {
		errno = fail_errno;
		return -1;
	}
	return real_fdatasync(fd);
}

int
connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	REAL(int, connect, (int, const struct sockaddr *, socklen_t));
	if (sa != NULL && sa->sa_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *) sa;

		if (should_fail_path(OP_CONNECT, un->sun_path, "connect")) {
			errno = fail_errno;
			return -1;
		}
	}
	return real_connect(fd, sa, len);
}

int
rename(const char *from, const char *to)
{
	REAL(int, rename, (const char *, const char *));
	if (should_fail_path(OP_RENAME, to, "rename")) {
		errno = fail_errno;
		return -1;
	}
	return real_rename(from, to);
}

int
link(const char *from, const char *to)
{
	REAL(int, link, (const char *, const char *));
	if (should_fail_path(OP_LINK, to, "link")) {
		errno = fail_errno;
		return -1;
	}
	return real_link(from, to);
}

int
execv(const char *path, char *const argv[])
{
	REAL(int, execv, (const char *, char *const[]));
	if (should_fail_path(OP_EXEC, path, "exec")) {
		errno = fail_errno;
		return -1;
	}
	return real_execv(path, argv);
}

int
posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
	    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	REAL(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,
				const posix_spawnattr_t *, char *const[], char *const[]));
	if (should_fail_path(OP_EXEC, path, "exec"))
		return fail_errno;	/* posix_spawn returns the error */
	return real_posix_spawn(pid, path, fa, attr, argv, envp);
}

/* dlopen's failure is told by dlerror(), which this cannot set: the
 * caller sees NULL and dlerror() says nothing new (or NULL). */
void *
dlopen(const char *file, int mode)
{
	REAL(void *, dlopen, (const char *, int));
	if (file != NULL && should_fail_path(OP_DLOPEN, file, "dlopen"))
		return NULL;
	return real_dlopen(file, mode);
}

int
execve(const char *path, char *const argv[], char *const envp[])
{
	REAL(int, execve, (const char *, char *const[], char *const[]));
	if (should_fail_path(OP_EXEC, path, "exec")) {
		errno = fail_errno;
		return -1;
	}
	return real_execve(path, argv, envp);
}
