/* gpgrun.c - one gpg process, bounded (see gpgrun.h) */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <gpgme.h>

#include "fileio.h"
#include "gpgrun.h"
#include "text.h"

extern char **environ;

/* --- the processes this process runs ---------------------------------------- */

static GMutex running_lock;
static GHashTable *running;	/* pid -> 1 */
static gboolean aborting;
static guint64 started;

static gboolean
running_add(pid_t pid)
{
	gboolean ok;

	g_mutex_lock(&running_lock);
	if (running == NULL)
		running = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_hash_table_add(running, GINT_TO_POINTER(pid));
	started++;
	ok = !aborting;
	g_mutex_unlock(&running_lock);
	if (!ok)
		kill(-pid, SIGKILL);
	return ok;
}

static void
running_remove(pid_t pid)
{
	g_mutex_lock(&running_lock);
	if (running != NULL)
		g_hash_table_remove(running, GINT_TO_POINTER(pid));
	g_mutex_unlock(&running_lock);
}

static gboolean
running_aborted(void)
{
	gboolean a;

	g_mutex_lock(&running_lock);
	a = aborting;
	g_mutex_unlock(&running_lock);
	return a;
}

void
gpgrun_abort_all(void)
{
	GHashTableIter it;
	gpointer pid;

	g_mutex_lock(&running_lock);
	aborting = TRUE;
	if (running != NULL) {
		g_hash_table_iter_init(&it, running);
		while (g_hash_table_iter_next(&it, &pid, NULL))
			kill(-GPOINTER_TO_INT(pid), SIGKILL);	/* its process group */
	}
	g_mutex_unlock(&running_lock);
}

guint64
gpgrun_started(void)
{
	guint64 n;

	g_mutex_lock(&running_lock);
	n = started;
	g_mutex_unlock(&running_lock);
	return n;
}

/* --- where gpg is --------------------------------------------------------- */

static char *gpg_override;

void
gpgrun_set_gpg_path(const char *path)
{
	g_free(gpg_override);
	gpg_override = g_strdup(path);
}

const char *
gpgrun_gpg_path(void)
{
	const char *gpg;

	static gsize once;
	static const char *found;

	if (gpg_override != NULL)
		return gpg_override;
	if (g_once_init_enter(&once)) {
		gpgme_check_version(NULL);	/* initialises gpgme; no process */
		gpg = gpgme_get_dirinfo("gpg-name");
		found = gpg != NULL ? gpg : "/usr/bin/gpg";
		g_once_init_leave(&once, 1);
	}
	return found;
}

char *
gpgrun_tool_path(const char *name)
{
	g_autofree char *dir = g_path_get_dirname(gpgrun_gpg_path());

	return g_build_filename(dir, name, NULL);
}

/* --- one run ---------------------------------------------------------------- */

void
gpgrun_result_free(gpgrun_result *r)
{
	if (r == NULL)
		return;
	if (r->out != NULL)
		g_byte_array_unref(r->out);
	g_ptr_array_unref(r->status);
	g_free(r->message);
	g_free(r);
}

gboolean
gpgrun_ok(const gpgrun_result *r)
{
	return !r->timed_out && !r->too_big && !r->aborted && !r->too_many_signatures && WIFEXITED(r->wstatus) &&
	       WEXITSTATUS(r->wstatus) == 0;
}

const char *
gpgrun_status(const gpgrun_result *r, const char *keyword)
{
	gsize n = strlen(keyword);

	for (guint i = 0; i < r->status->len; i++) {
		const char *l = g_ptr_array_index(r->status, i);

		if (strncmp(l, keyword, n) == 0 && (l[n] == '\0' || l[n] == ' '))
			return l[n] == ' ' ? l + n + 1 : l + n;
	}
	return NULL;
}

guint
gpgrun_status_count(const gpgrun_result *r, const char *keyword)
{
	gsize n = strlen(keyword);
	guint count = 0;

	for (guint i = 0; i < r->status->len; i++) {
		const char *l = g_ptr_array_index(r->status, i);

		count += strncmp(l, keyword, n) == 0 && (l[n] == '\0' || l[n] == ' ');
	}
	return count;
}

static gint64
now_ms(void)
{
	return g_get_monotonic_time() / 1000;
}

/* The status channel as it arrives: whole lines kept, "[GNUPG:] " off. */
typedef struct {
	GString *partial;
	gint64 total;
	GPtrArray *lines;
	guint signatures;	/* NEWSIG lines */
} status_reader;

static void
status_feed(status_reader *s, const char *p, gsize n)
{
	s->total += (gint64) n;
	for (gsize i = 0; i < n; i++) {
		if (p[i] != '\n') {
			if (s->partial->len < 4096)
				g_string_append_c(s->partial, p[i]);
			continue;
		}
		if (g_str_has_prefix(s->partial->str, "[GNUPG:] ")) {
			const char *l = s->partial->str + strlen("[GNUPG:] ");

			s->signatures += strcmp(l, "NEWSIG") == 0 || g_str_has_prefix(l, "NEWSIG ");
			g_ptr_array_add(s->lines, g_strdup(l));
		}
		g_string_truncate(s->partial, 0);
	}
}

/* What a run holds while gpg works. */
typedef struct {
	const gpgrun_opts *o;
	gpgrun_result *r;
	int in_fd;		/* our end of gpg's stdin (bytes input), or -1 */
	const guint8 *in;
	gsize in_len, in_off;
	int out_fd, status_fd, err_fd;
	status_reader st;
	GString *errtext;
	pid_t pid;
} run_state;

static int
memfd_with(GBytes *b)
{
	int fd = memfd_create("vulnid-gpg", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!fileio_write_all(fd, g_bytes_get_data(b, NULL), g_bytes_get_size(b)) ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
argv_build(const gpgrun_opts *o, GPtrArray *argv, char *max_output)
{
	if (o->tool != NULL) {
		g_ptr_array_add(argv, gpgrun_tool_path(o->tool));
		for (const char *const *a = o->args; a != NULL && *a != NULL; a++)
			g_ptr_array_add(argv, g_strdup(*a));
		g_ptr_array_add(argv, NULL);
		return;
	}
	g_ptr_array_add(argv, g_strdup(gpgrun_gpg_path()));
	static const char *const fixed[] = {
		"--batch", "--no-tty", "--no-greeting", "--no-permission-warning", "--status-fd=3",
		"--no-auto-key-retrieve", "--disable-dirmngr", "--enable-special-filenames",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(fixed); i++)
		g_ptr_array_add(argv, g_strdup(fixed[i]));
	if (o->max_out > 0) {
		/* gpg stops by itself too; its count and ours may differ by
		 * a buffer, so ours decides */
		g_ptr_array_add(argv, g_strdup("--max-output"));
		g_ptr_array_add(argv, g_strdup(max_output));
	}
	if (o->home != NULL) {
		g_ptr_array_add(argv, g_strdup("--homedir"));
		g_ptr_array_add(argv, g_strdup(o->home));
	}
	for (const char *const *a = o->args; a != NULL && *a != NULL; a++)
		g_ptr_array_add(argv, g_strdup(*a));
	g_ptr_array_add(argv, NULL);
}

/* Start gpg: stdin, stdout, stderr, the status pipe on 3 and fd4 on 4,
 * in a process group of its own (killed whole). */
static vulnid_status
run_spawn(run_state *s, GError **err)
{
	const gpgrun_opts *o = s->o;
	int in_sv[2] = { -1, -1 }, out_p[2] = { -1, -1 }, st_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
	int devnull = -1, sig_fd = -1, child_in;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	char max_output[32];
	vulnid_status st = VULNID_OK;
	int rc;

	/* gpg's own stop a little past ours, so that ours is what happens */
	g_snprintf(max_output, sizeof max_output, "%" G_GINT64_FORMAT, o->max_out + 256 * 1024);
	if ((o->input_fd < 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_sv) < 0) ||
	    pipe2(st_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0 ||
	    (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
	    (o->max_out > 0 && pipe2(out_p, O_CLOEXEC) < 0) ||
	    (o->fd4 != NULL && (sig_fd = memfd_with(o->fd4)) < 0)) {
		st = vulnid_fail(err, VULNID_ERR_TEMP, "cannot run gpg: %s", g_strerror(errno));
		goto out;
	}
	child_in = o->input_fd >= 0 ? o->input_fd : in_sv[1];
	argv_build(o, argv, max_output);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, child_in, 0);
	posix_spawn_file_actions_adddup2(&fa, o->max_out > 0 ? out_p[1] : devnull, 1);
	posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
	posix_spawn_file_actions_adddup2(&fa, st_p[1], 3);
	posix_spawn_file_actions_adddup2(&fa, sig_fd >= 0 ? sig_fd : devnull, 4);
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
	posix_spawn_file_actions_addclosefrom_np(&fa, 5);	/* what the MTA left open */
#endif
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&attr, 0);
	{
		/* a server blocks its signals in every thread, and may ignore
		 * SIGPIPE: gpg gets the defaults */
		sigset_t none, all;

		sigemptyset(&none);
		sigfillset(&all);
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setsigdefault(&attr, &all);
	}
	rc = posix_spawn(&s->pid, g_ptr_array_index(argv, 0), &fa, &attr,
			 (char *const *) argv->pdata, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		s->pid = -1;
		st = vulnid_fail(err, VULNID_ERR_TEMP, "cannot run %s: %s",
				 (const char *) g_ptr_array_index(argv, 0), g_strerror(rc));
		goto out;
	}
	if (!running_add(s->pid))
		s->r->aborted = TRUE;
	s->in_fd = in_sv[0];
	in_sv[0] = -1;
	s->out_fd = out_p[0];
	out_p[0] = -1;
	s->status_fd = st_p[0];
	st_p[0] = -1;
	s->err_fd = err_p[0];
	err_p[0] = -1;
	if (s->in_fd >= 0 && s->in_len == 0) {
		close(s->in_fd);
		s->in_fd = -1;
	}
out:
	for (int i = 0; i < 2; i++) {
		if (in_sv[i] >= 0)
			close(in_sv[i]);
		if (out_p[i] >= 0)
			close(out_p[i]);
		if (st_p[i] >= 0)
			close(st_p[i]);
		if (err_p[i] >= 0)
			close(err_p[i]);
	}
	if (devnull >= 0)
		close(devnull);
	if (sig_fd >= 0)
		close(sig_fd);
	return st;
}

static void
run_kill(run_state *s)
{
	if (s->pid > 0)
		kill(-s->pid, SIGKILL);
}

/* gpg's stdout: into the caller's file or memory, counted. */
static gboolean
run_take_output(run_state *s, const guint8 *buf, gsize n, GError **err)
{
	if (s->r->out_len + (gint64) n > s->o->max_out) {
		s->r->too_big = TRUE;
		return TRUE;
	}
	s->r->out_len += (gint64) n;
	if (s->o->out_fd < 0) {
		g_byte_array_append(s->r->out, buf, (guint) n);
		return TRUE;
	}
	if (!fileio_write_all(s->o->out_fd, (const char *) buf, n)) {
		vulnid_fail(err, vulnid_status_from_errno(errno), "cannot write what gpg gave: %s",
			    g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

/* One readable descriptor: read what is there; FALSE at its end. */
static gboolean
run_read(run_state *s, int *fd, vulnid_status *st, GError **err)
{
	guint8 buf[65536];
	ssize_t n = read(*fd, buf, sizeof buf);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return TRUE;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return FALSE;
	}
	if (fd == &s->out_fd) {
		if (!run_take_output(s, buf, (gsize) n, err))
			*st = VULNID_ERR_IO;
	} else if (fd == &s->status_fd) {
		status_feed(&s->st, (const char *) buf, (gsize) n);
	} else if (s->errtext->len < 4096) {
		g_string_append_len(s->errtext, (const char *) buf, MIN(n, (ssize_t) (4096 - s->errtext->len)));
	}
	return TRUE;
}

static void
run_write_input(run_state *s)
{
	ssize_t w = send(s->in_fd, s->in + s->in_off, MIN(s->in_len - s->in_off, 65536),
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w > 0)
		s->in_off += (gsize) w;
	if (w < 0 || s->in_off == s->in_len) {
		close(s->in_fd);	/* done, or gpg stopped reading */
		s->in_fd = -1;
	}
}

/* Feed and read until gpg closes its outputs, the deadline passes or a
 * limit is crossed. */
static vulnid_status
run_loop(run_state *s, gint64 deadline, GError **err)
{
	vulnid_status st = VULNID_OK;

	while (s->out_fd >= 0 || s->status_fd >= 0 || s->err_fd >= 0) {
		struct pollfd pf[4];
		int *fds[4];
		int np = 0, left;

		if (s->r->too_big || st != VULNID_OK || s->st.total > GPGRUN_MAX_STATUS)
			break;
		if (s->o->max_signatures > 0 && s->st.signatures > s->o->max_signatures) {
			/* a flood inside encrypted or compressed data, which could
			 * not be counted before: each one is work for gpg */
			s->r->too_many_signatures = TRUE;
			break;
		}
		if (running_aborted()) {
			s->r->aborted = TRUE;
			break;
		}
		left = (int) MIN(deadline - now_ms(), 1000);	/* an abort is seen within a second */
		if (deadline - now_ms() <= 0) {
			s->r->timed_out = TRUE;
			break;
		}
		if (s->in_fd >= 0) {
			fds[np] = &s->in_fd;
			pf[np++] = (struct pollfd) { .fd = s->in_fd, .events = POLLOUT };
		}
		if (s->out_fd >= 0) {
			fds[np] = &s->out_fd;
			pf[np++] = (struct pollfd) { .fd = s->out_fd, .events = POLLIN };
		}
		if (s->status_fd >= 0) {
			fds[np] = &s->status_fd;
			pf[np++] = (struct pollfd) { .fd = s->status_fd, .events = POLLIN };
		}
		if (s->err_fd >= 0) {
			fds[np] = &s->err_fd;
			pf[np++] = (struct pollfd) { .fd = s->err_fd, .events = POLLIN };
		}
		if (poll(pf, (nfds_t) np, left) < 0) {
			if (errno == EINTR)
				continue;
			return vulnid_fail(err, VULNID_ERR_TEMP, "cannot talk to gpg: %s", g_strerror(errno));
		}
		for (int i = 0; i < np; i++) {
			if (pf[i].revents == 0 || *fds[i] < 0)
				continue;
			if (fds[i] == &s->in_fd)
				run_write_input(s);
			else
				run_read(s, fds[i], &st, err);
		}
	}
	if (st != VULNID_OK)
		return st;
	if (s->st.total > GPGRUN_MAX_STATUS)
		s->r->too_big = TRUE;
	return VULNID_OK;
}

vulnid_status
gpgrun(const gpgrun_opts *o, gpgrun_result **res, GError **err)
{
	g_autoptr(gpgrun_result) r = g_new0(gpgrun_result, 1);
	run_state s = { .o = o, .in_fd = -1, .out_fd = -1, .status_fd = -1, .err_fd = -1, .pid = -1 };
	gint64 deadline = now_ms() + (o->timeout_ms > 0 ? o->timeout_ms : GPGRUN_DEFAULT_TIMEOUT_MS);
	vulnid_status st;

	r->status = g_ptr_array_new_with_free_func(g_free);
	if (o->out_fd < 0)
		r->out = g_byte_array_new();
	if (running_aborted())
		return vulnid_fail(err, VULNID_ERR_TEMP, "gpg is not started while the program stops");
	s.r = r;
	s.in = o->input != NULL ? g_bytes_get_data(o->input, &s.in_len) : NULL;
	s.st.partial = g_string_new(NULL);
	s.st.lines = r->status;
	s.errtext = g_string_new(NULL);
	st = run_spawn(&s, err);
	if (st == VULNID_OK)
		st = run_loop(&s, deadline, err);
	if (s.pid > 0 && (st != VULNID_OK || r->timed_out || r->too_big || r->aborted || r->too_many_signatures))
		run_kill(&s);
	{
		int *fds[] = { &s.in_fd, &s.out_fd, &s.status_fd, &s.err_fd };

		for (gsize i = 0; i < G_N_ELEMENTS(fds); i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
	if (s.pid > 0) {
		while (waitpid(s.pid, &r->wstatus, 0) < 0 && errno == EINTR)
			;
		running_remove(s.pid);
		/* killed by gpgrun_abort_all() before the loop saw the flag */
		if (WIFSIGNALED(r->wstatus) && running_aborted())
			r->aborted = TRUE;
	}
	if (st == VULNID_OK) {
		g_auto(GStrv) lines = g_strsplit(s.errtext->str, "\n", 2);

		if (lines[0] != NULL && *lines[0] != '\0')
			r->message = text_mask_controls(lines[0]);
		if (r->aborted)
			st = vulnid_fail(err, VULNID_ERR_TEMP, "gpg was stopped: the program stops");
	}
	g_string_free(s.st.partial, TRUE);
	g_string_free(s.errtext, TRUE);
	if (st == VULNID_OK)
		*res = g_steal_pointer(&r);
	return st;
}
