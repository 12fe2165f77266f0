/* gpgrun.h - one gpg process, bounded: what it reads, what it may write,
 * how long it may take
 *
 * Every OpenPGP operation on a mail runs gpg once, through here, with
 * the instance's keyring: never a shell, never a PATH search (the MTA's
 * PATH is not ours), no engine probe (gpgme runs `gpg --version` in every
 * new context), and no operation without a deadline.  What gpg writes
 * is counted as it arrives: past the caller's limit (a compression bomb
 * decrypts to gigabytes) the process is killed and the result says so.
 * gpg's status channel (`--status-fd`, doc/DETAILS of GnuPG) is read
 * into lines; callers judge by those lines, never by gpg's messages.
 *
 * The running processes are known to this module, so that a server that
 * stops kills them all at once (gpgrun_abort_all()) instead of waiting
 * for the slowest. */
#ifndef VULNID_GPGRUN_H
#define VULNID_GPGRUN_H

#include <glib.h>

#include "status.h"

/* Bytes of status lines gpg may write before it is stopped: a real
 * operation writes a few hundred; a packet flood would write without end. */
#define GPGRUN_MAX_STATUS (256 * 1024)

typedef struct {
	/* another GnuPG program installed beside gpg ("gpgconf"), run with
	 * args alone (no gpg options, no --homedir: say it in args); NULL: gpg */
	const char *tool;
	const char *home;	/* --homedir; NULL: none (GNUPGHOME) */
	const char *const *args;	/* the operation's arguments, NULL-terminated */
	/* stdin: a seekable file read from its current offset (input_fd >= 0),
	 * else these bytes (NULL: nothing) */
	int input_fd;
	GBytes *input;
	/* readable by gpg as file descriptor 4 ("-&4" with
	 * --enable-special-filenames): a detached signature; NULL: none */
	GBytes *fd4;
	/* stdout: written to out_fd when >= 0, else kept in memory */
	int out_fd;
	gint64 max_out;		/* bytes of stdout at most; 0: no output wanted */
	gint64 timeout_ms;	/* wall-clock limit; 0: the default below */
	guint max_signatures;	/* signatures gpg may begin to check (NEWSIG); 0: any */
} gpgrun_opts;

#define GPGRUN_DEFAULT_TIMEOUT_MS (60 * 1000)

typedef struct {
	int wstatus;		/* as waitpid() gives it */
	gboolean timed_out;	/* killed at the deadline */
	gboolean too_big;	/* killed for writing more than max_out */
	gboolean aborted;	/* killed by gpgrun_abort_all() */
	gboolean too_many_signatures;	/* killed at max_signatures + 1 */
	GByteArray *out;	/* stdout, when not to out_fd */
	gint64 out_len;		/* bytes of stdout written */
	GPtrArray *status;	/* char*: status lines without "[GNUPG:] " */
	char *message;		/* gpg's first line on stderr, control characters masked */
} gpgrun_result;

void gpgrun_result_free(gpgrun_result *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gpgrun_result, gpgrun_result_free)

/* Run gpg with the fixed options (--batch, --no-tty, --status-fd,
 * --no-auto-key-retrieve, offline) and o->args.  VULNID_OK once gpg ran
 * and ended, whatever its exit status (judge by *res); TEMP when it could
 * not be started or talked to, or after gpgrun_abort_all(). */
vulnid_status gpgrun(const gpgrun_opts *o, gpgrun_result **res, GError **err);

/* Whether gpg exited 0. */
gboolean gpgrun_ok(const gpgrun_result *r);
/* The first status line with this keyword, its arguments after the
 * keyword and a space ("" when none), or NULL. */
const char *gpgrun_status(const gpgrun_result *r, const char *keyword);
/* How many status lines have this keyword. */
guint gpgrun_status_count(const gpgrun_result *r, const char *keyword);

/* The gpg program (beside gpgme's, never from PATH) and a GnuPG tool
 * installed beside it ("gpgconf"). */
const char *gpgrun_gpg_path(void);
char *gpgrun_tool_path(const char *name);
/* Run this program instead, for the whole process (the fuzzers and the
 * fault tests use a gpg that is not there). */
void gpgrun_set_gpg_path(const char *path);

/* Kill every gpg this process runs now and refuse to start more (a
 * server that stops).  Safe from any thread. */
void gpgrun_abort_all(void);
/* How many gpg processes this process has started (for tests and
 * benchmarks: vulnid-lmtpd reports it). */
guint64 gpgrun_started(void);

#endif
