/* lmtpd.c - the resident LMTP server: listeners, sessions, the engine that
 * commits mails in groups, the delivery agent (see lmtpd.h) */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>
#include <gio/gio.h>
#include <glib-unix.h>

#include "audit.h"
#include "config.h"
#include "crypto.h"
#include "intake.h"
#include "lmtp.h"
#include "lmtpd.h"
#include "message.h"
#include "notify.h"
#include "gpgrun.h"
#include "outbox.h"
#include "store.h"
#include "store-lmtpd.h"
#include "text.h"

#define LMTPD_AGENTS_MAX 32		/* [lmtpd] delivery_agents at most */
#define LMTPD_AGENT_DATAGRAM 4096	/* bytes of rows handed in one datagram */
#define LMTPD_AGENT_ROWS 100		/* rows an agent takes for a round */
#define LMTPD_AGENT_SWEEP 10		/* s between an agent's rounds of everything due */

/* A configuration shared by the sessions and mails that started under it;
 * SIGHUP puts a new one in place for what starts later. */
typedef struct {
	gint ref;
	vulnid_config *cfg;
} conf_ref;

static conf_ref *
conf_ref_get(conf_ref *c)
{
	g_atomic_int_inc(&c->ref);
	return c;
}

static void
conf_ref_put(conf_ref *c)
{
	if (c != NULL && g_atomic_int_dec_and_test(&c->ref)) {
		config_free(c->cfg);
		g_free(c);
	}
}

/* One recipient of one mail, from the end of its data to its reply:
 * waiting for a parse worker, parsed there (spool, MIME, OpenPGP: no
 * database), waiting for the engine, applied in its transaction, done. */
typedef enum { JOB_QUEUED, JOB_PARSING, JOB_PARSED, JOB_APPLYING, JOB_DONE } job_state;

typedef struct {
	gint ref;
	conf_ref *conf;
	int fd;			/* the spooled mail (a dup per recipient) */
	char *sender, *recipient, *client_address;
	gint64 deadline;	/* monotonic; [limits] time_limit after the data */
	/* under the server lock: */
	job_state state;
	gboolean abandoned;	/* its session gave up waiting: never apply it */
	char *reply;
	/* the engine's: */
	intake_mail *im;
	vulnid_status status;
	GError *err;
	gboolean applied;
	gint64 row;		/* the message row it committed (for the agents) */
} job;

static void
job_unref(job *j)
{
	if (j == NULL || !g_atomic_int_dec_and_test(&j->ref))
		return;
	if (j->fd >= 0)
		close(j->fd);
	conf_ref_put(j->conf);
	g_free(j->sender);
	g_free(j->recipient);
	g_free(j->client_address);
	g_free(j->reply);
	intake_mail_free(j->im);
	g_clear_error(&j->err);
	g_free(j);
}

typedef struct {
	GMutex lock;
	conf_ref *conf;		/* the current configuration */
	GCond engine_cond;	/* a job was parsed, or stop */
	GCond done_cond;	/* jobs are done */
	GQueue queue;		/* of job*: parsed, for the engine */
	GThreadPool *parsers;	/* the parse workers, fed a mail's job*s */
	gboolean stopping;
	gboolean draining;
	int drain_pipe[2];	/* readable once draining */
	guint sessions;
	/* The delivery agents ([lmtpd] delivery_agents, read at the start)
	 * share one datagram socket as their stdin: each datagram (the rows
	 * of a sync, or a bare wake-up) goes to the one that reads it first. */
	int agent_fd;		/* the server's end, -1: none */
	int agent_in;		/* the agents' end */
	GPid agent_pid[LMTPD_AGENTS_MAX];	/* 0: not running */
	guint agents;
	gint64 agent_started;
	char *self;
	char *conf_path;
	store *st;		/* the engine's connection */
	GThreadPool *pool;	/* the sessions */
	/* Committed groups wait here for the sync of the WAL (see
	 * sync_thread()); then their recipients are answered. */
	GQueue unsynced;	/* of GPtrArray* of job* */
	GCond sync_cond;
	gboolean sync_stopping;
	int wal_fd;
	char *wal_path;
	lmtpd_stats stats;	/* under the lock */
} server;

/* --- the engine ------------------------------------------------------------ */

static void agent_wake(server *srv);
static void agent_hand(server *srv, const GString *rows);

static char *
status_reply(vulnid_status s, const GError *err)
{
	g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

	if (strlen(m) > 200)
		m[200] = '\0';
	switch (s) {
	case VULNID_ERR_TOOBIG:
		return g_strdup("552 5.3.4 message too big for the robot");
	case VULNID_ERR_NOSPACE:
		return g_strdup_printf("452 4.3.1 disk full (%s), try again later", m);
	default:
		return g_strdup_printf("451 4.3.0 temporary failure (%s), try again later", m);
	}
}

static void
job_finish(job *j)
{
	g_autoptr(intake_result) r = NULL;
	GString *ok;

	if (j->status != VULNID_OK || !j->applied) {
		g_autofree char *m = text_mask_controls(j->err != NULL ? j->err->message : vulnid_status_str(j->status));

		j->reply = status_reply(j->status, j->err);
		syslog(j->status == VULNID_ERR_TOOBIG ? LOG_NOTICE : LOG_ERR, "%s: %s",
		       vulnid_status_str(j->status), m);
		return;
	}
	r = intake_mail_steal_result(j->im);
	ok = g_string_new("250 2.0.0 ");
	g_string_append(ok, intake_outcome_str(r->outcome));
	for (guint i = 0; i < r->ids->len; i++)
		g_string_append_printf(ok, "%s%s", i == 0 ? " " : ",", (const char *) g_ptr_array_index(r->ids, i));
	{
		g_autofree char *reason = r->reason != NULL ? text_mask_controls(r->reason) : NULL;

		syslog(LOG_INFO, "%s%s%s", ok->str + 10, reason != NULL ? " reason=" : "",
		       reason != NULL ? reason : "");
	}
	j->reply = g_string_free(ok, FALSE);
}

/* The engine commits without waiting for the disk (synchronous = NORMAL)
 * and goes on with the next group; sync_thread() then makes the commits
 * durable with one fdatasync() of the WAL file, and only after that are
 * the recipients answered.  So the next group is parsed and applied while
 * the last one is being written, and a sync covers all groups committed
 * since the one before.  Until the sync, a crash may lose the commit; the
 * MTA then has no answer and delivers the mail again.  Another process
 * that reads such a commit and then commits itself (synchronous = FULL)
 * syncs the WAL, this commit's frames included, before it answers its
 * MTA. */
static vulnid_status
engine_store(server *srv, const vulnid_config *cfg, GError **err)
{
	vulnid_status s;

	if (srv->st != NULL)
		return VULNID_OK;
	s = store_open(cfg->db_path, cfg->busy_timeout, STORE_OPEN_EXISTING, &srv->st, err);
	if (s == VULNID_OK)
		s = store_lmtpd_synchronous_normal(srv->st, err);
	if (s != VULNID_OK) {
		g_clear_pointer(&srv->st, store_close);
		return s;
	}
	store_keep_statements(srv->st, TRUE);
	/* Checkpoints are left to the delivery agent, whose commits run
	 * them when the WAL is past 1000 pages (and to the filters and
	 * vulnid): not in the engine's thread, between two groups. */
	store_lmtpd_no_autocheckpoint(srv->st);
	return s;
}

/* fdatasync() the WAL file; reopened when it is not the one at its path
 * any more (a connection that closed last without persisting it deleted it
 * after a full checkpoint, which synced the database: nothing to do). */
static int
wal_sync(server *srv)
{
	struct stat a, b;

	if (srv->wal_fd >= 0 && (fstat(srv->wal_fd, &a) < 0 || stat(srv->wal_path, &b) < 0 ||
				 a.st_ino != b.st_ino || a.st_dev != b.st_dev)) {
		close(srv->wal_fd);
		srv->wal_fd = -1;
	}
	if (srv->wal_fd < 0)
		srv->wal_fd = open(srv->wal_path, O_RDONLY | O_CLOEXEC);
	if (srv->wal_fd < 0)
		return errno == ENOENT ? 0 : -1;
	return fdatasync(srv->wal_fd);
}

static gpointer
sync_thread(gpointer data)
{
	server *srv = data;

	g_mutex_lock(&srv->lock);
	for (;;) {
		GQueue groups = G_QUEUE_INIT;
		g_autoptr(GString) rows = g_string_new(NULL);
		int rc, e = 0;

		while (g_queue_is_empty(&srv->unsynced) && !srv->sync_stopping)
			g_cond_wait(&srv->sync_cond, &srv->lock);
		if (g_queue_is_empty(&srv->unsynced))
			break;
		groups = srv->unsynced;
		g_queue_init(&srv->unsynced);
		g_mutex_unlock(&srv->lock);
		rc = wal_sync(srv);
		if (rc < 0)
			e = errno;
		g_mutex_lock(&srv->lock);
		srv->stats.syncs++;
		for (GList *l = groups.head; l != NULL; l = l->next) {
			GPtrArray *group = l->data;

			for (guint i = 0; i < group->len; i++) {
				job *j = g_ptr_array_index(group, i);

				if (j->applied && rc < 0) {
					/* committed, perhaps not durable: a retry is
					 * found as a duplicate if it was */
					g_free(j->reply);
					j->reply = e == ENOSPC || e == EDQUOT
						? g_strdup_printf("452 4.3.1 disk full: cannot sync the database (%s),"
								  " try again later", g_strerror(e))
						: g_strdup_printf("451 4.3.0 cannot sync the database (%s), "
								  "try again later", g_strerror(e));
					syslog(LOG_ERR, "cannot sync '%s': %s", srv->wal_path, g_strerror(e));
				}
				if (j->applied && j->row > 0)
					g_string_append_printf(rows, "%" G_GINT64_FORMAT "\n", j->row);
				srv->stats.mails += j->applied && rc == 0;
				j->state = JOB_DONE;
			}
		}
		g_cond_broadcast(&srv->done_cond);
		g_mutex_unlock(&srv->lock);
		g_queue_clear_full(&groups, (GDestroyNotify) g_ptr_array_unref);
		if (rows->len > 0)
			agent_hand(srv, rows);
		g_mutex_lock(&srv->lock);
	}
	g_mutex_unlock(&srv->lock);
	return NULL;
}

/* Apply the parsed mails of a group, each in its own savepoint of one
 * transaction, and commit them together. */
static void
engine_apply(server *srv, GPtrArray *group)
{
	const vulnid_config *cfg = ((job *) g_ptr_array_index(group, 0))->conf->cfg;
	g_autoptr(GError) e = NULL;
	gboolean lost = FALSE;
	vulnid_status s;

	s = engine_store(srv, cfg, &e);
	if (s == VULNID_OK)
		s = store_begin(srv->st, &e);
	/* Only with the write lock held do the mails become the engine's
	 * for good: while it waits for the lock (another process holds it),
	 * a mail's deadline may still pass and its session answer 451. */
	g_mutex_lock(&srv->lock);
	for (guint i = 0; i < group->len; i++) {
		job *j = g_ptr_array_index(group, i);

		if (j->status != VULNID_OK || j->abandoned)
			continue;
		if (s != VULNID_OK) {
			j->status = s;
			j->err = e != NULL ? g_error_copy(e) : NULL;
		} else
			j->state = JOB_APPLYING;
	}
	g_mutex_unlock(&srv->lock);
	for (guint i = 0; i < group->len; i++) {
		job *j = g_ptr_array_index(group, i);

		if (j->state != JOB_APPLYING)
			continue;
		if (lost) {
			j->status = vulnid_fail(&j->err, VULNID_ERR_TEMP,
						"the transaction of the group was rolled back");
			continue;
		}
		store_lmtpd_mail_begin(srv->st);
		j->status = intake_apply(j->im, srv->st, &j->err);
		if (j->status == VULNID_OK) {
			store_lmtpd_mail_release(srv->st);
			j->applied = TRUE;
			continue;
		}
		if (!store_lmtpd_in_transaction(srv->st)) {
			/* SQLite rolled the whole transaction back (I/O error,
			 * full disk): the mails before this one are gone too. */
			lost = TRUE;
			for (guint k = 0; k < i; k++) {
				job *p = g_ptr_array_index(group, k);

				if (p->applied) {
					p->applied = FALSE;
					p->status = j->status;
					p->err = g_error_copy(j->err);
				}
			}
			continue;
		}
		store_lmtpd_mail_rollback(srv->st);
		intake_apply_failed(j->im, srv->st, j->status, NULL);
		store_lmtpd_mail_release(srv->st);
	}
	if (s != VULNID_OK || lost) {
		if (srv->st != NULL)
			store_rollback(srv->st);
		return;
	}
	s = store_commit(srv->st, &e);
	if (s == VULNID_OK) {
		g_mutex_lock(&srv->lock);
		srv->stats.commits++;
		g_mutex_unlock(&srv->lock);
	}
	for (guint i = 0; i < group->len && s != VULNID_OK; i++) {
		job *j = g_ptr_array_index(group, i);

		if (j->applied) {
			j->applied = FALSE;
			j->status = s;
			j->err = g_error_copy(e);
		}
	}
}

/* Apply a group of parsed mails and make their replies. */
static void
engine_group(server *srv, GPtrArray *group)
{
	guint ready = 0;

	for (guint i = 0; i < group->len; i++) {
		job *j = g_ptr_array_index(group, i);

		ready += j->status == VULNID_OK && !g_atomic_int_get(&j->abandoned);
	}
	if (ready > 0)
		engine_apply(srv, group);
	for (guint i = 0; i < group->len; i++) {
		job *j = g_ptr_array_index(group, i);

		if (j->state == JOB_APPLYING || !g_atomic_int_get(&j->abandoned))
			job_finish(j);
		if (j->applied)
			j->row = intake_mail_row(j->im);
		g_clear_pointer(&j->im, intake_mail_free);
	}
}

/* Parse one recipient's job, then hand it to the engine (or drop it, if
 * its session gave up).  Outside any transaction: gpg and GMime never
 * hold the database's write lock. */
static void
parse_one(job *j, server *srv)
{
	intake_envelope env = { j->sender, j->recipient, j->client_address };

	g_mutex_lock(&srv->lock);
	if (j->abandoned) {
		j->state = JOB_DONE;
		g_mutex_unlock(&srv->lock);
		job_unref(j);
		return;
	}
	j->state = JOB_PARSING;
	g_mutex_unlock(&srv->lock);
	if (lseek(j->fd, 0, SEEK_SET) < 0)
		j->status = vulnid_fail(&j->err, VULNID_ERR_IO, "cannot rewind the spooled mail: %s",
					g_strerror(errno));
	else
		j->status = intake_parse(j->conf->cfg, j->fd, TRUE, &env, &j->im, &j->err);
	g_mutex_lock(&srv->lock);
	if (j->abandoned) {
		/* its session answered 451 already: the MTA sends it again */
		j->state = JOB_DONE;
		g_mutex_unlock(&srv->lock);
		job_unref(j);
		return;
	}
	j->state = JOB_PARSED;
	g_queue_push_tail(&srv->queue, j);
	g_cond_signal(&srv->engine_cond);
	g_mutex_unlock(&srv->lock);
}

/* A parse worker: spool, parse, verify and decrypt one mail, beside the
 * engine and the other workers, so that a mail that keeps gpg busy
 * delays only itself.  Its recipients one after the other, in the order
 * of RCPT: the engine applies them in that order, so that the second
 * copy of a mail is the duplicate, whatever the workers' timing. */
static void
parse_mail(gpointer data, gpointer user_data)
{
	GPtrArray *jobs = data;

	for (guint i = 0; i < jobs->len; i++)
		parse_one(g_ptr_array_index(jobs, i), user_data);
	g_ptr_array_unref(jobs);
}

static gpointer
engine_thread(gpointer data)
{
	server *srv = data;

	g_mutex_lock(&srv->lock);
	for (;;) {
		g_autoptr(GPtrArray) group = g_ptr_array_new_with_free_func((GDestroyNotify) job_unref);
		guint max;

		while (g_queue_is_empty(&srv->queue) && !srv->stopping)
			g_cond_wait(&srv->engine_cond, &srv->lock);
		if (g_queue_is_empty(&srv->queue))
			break;
		max = (guint) srv->conf->cfg->lmtpd_group_max;
		while (!g_queue_is_empty(&srv->queue) && group->len < max) {
			job *j = g_queue_pop_head(&srv->queue);

			if (j->abandoned) {
				j->state = JOB_DONE;
				g_clear_pointer(&j->im, intake_mail_free);
				job_unref(j);
				continue;
			}
			g_ptr_array_add(group, j);
		}
		if (group->len == 0)
			continue;
		g_mutex_unlock(&srv->lock);
		engine_group(srv, group);
		g_mutex_lock(&srv->lock);
		g_queue_push_tail(&srv->unsynced, g_steal_pointer(&group));
		g_cond_signal(&srv->sync_cond);
	}
	g_mutex_unlock(&srv->lock);
	return NULL;
}

/* --- the delivery agent ------------------------------------------------------ */

/* Start agent i on the agents' socket. */
static void
agent_start_one(server *srv, guint i)
{
	g_autoptr(GError) e = NULL;
	char *argv[] = { srv->self, "--delivery-agent", "-c", srv->conf_path, NULL };

	if (!g_spawn_async_with_fds(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
				    NULL, NULL, &srv->agent_pid[i], srv->agent_in, -1, -1, &e)) {
		srv->agent_pid[i] = 0;
		syslog(LOG_ERR, "cannot start the delivery agent: %s (replies wait for vulnid queue run)",
		       e->message);
	}
}

static void
agent_start(server *srv)
{
	int sv[2];

	if (g_get_monotonic_time() - srv->agent_started < 5 * G_USEC_PER_SEC && srv->agent_started != 0)
		return;		/* it keeps dying: not more than once in 5 s */
	srv->agent_started = g_get_monotonic_time();
	if (srv->agent_fd < 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
			syslog(LOG_ERR, "cannot start the delivery agent: socketpair: %s", g_strerror(errno));
			return;
		}
		fcntl(sv[0], F_SETFL, O_NONBLOCK);
		srv->agent_in = sv[1];
		g_atomic_int_set(&srv->agent_fd, sv[0]);
		srv->agents = (guint) CLAMP(srv->conf->cfg->lmtpd_delivery_agents, 1, LMTPD_AGENTS_MAX);
	}
	for (guint i = 0; i < srv->agents; i++)
		if (srv->agent_pid[i] == 0)
			agent_start_one(srv, i);
}

/* Send a datagram to the agents; a full socket means they are behind,
 * and their round of everything due finds what this one said. */
static void
agent_send(server *srv, const char *data, gsize len)
{
	int fd = g_atomic_int_get(&srv->agent_fd);

	if (fd >= 0 && send(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EPIPE)
		syslog(LOG_WARNING, "the delivery agents are gone");
}

/* Called by the main thread: deliver whatever is due. */
static void
agent_wake(server *srv)
{
	agent_send(srv, "w", 1);
}

/* Called after a sync: the message rows just made durable, one per line,
 * in datagrams of at most LMTPD_AGENT_DATAGRAM bytes, so that several
 * agents share them. */
static void
agent_hand(server *srv, const GString *rows)
{
	gsize at = 0;

	while (at < rows->len) {
		gsize n = MIN(rows->len - at, LMTPD_AGENT_DATAGRAM);

		while (at + n < rows->len && n > 0 && rows->str[at + n - 1] != '\n')
			n--;
		agent_send(srv, rows->str + at, n);
		at += n;
	}
}

/* The main thread: reap dead agents and start others. */
static void
agent_check(server *srv, gboolean restart)
{
	gboolean started;
	int status;

	for (guint i = 0; i < srv->agents; i++)
		if (srv->agent_pid[i] > 0 && waitpid(srv->agent_pid[i], &status, WNOHANG) == srv->agent_pid[i]) {
			syslog(LOG_WARNING, "the delivery agent ended (status %d)", status);
			srv->agent_pid[i] = 0;
		}
	started = restart && srv->agent_fd < 0;	/* not even the socket yet */
	for (guint i = 0; restart && i < srv->agents; i++)
		started |= srv->agent_pid[i] == 0;
	if (started) {
		agent_start(srv);
		agent_wake(srv);	/* whatever was committed meanwhile */
	}
}

static void
agent_stop(server *srv)
{
	int fd = g_atomic_int_get(&srv->agent_fd);
	gboolean left = TRUE;

	if (fd >= 0)
		close(fd);	/* end of input: they finish their round and exit */
	g_atomic_int_set(&srv->agent_fd, -1);
	for (int i = 0; i < 300 && left; i++) {
		left = FALSE;
		for (guint k = 0; k < srv->agents; k++) {
			if (srv->agent_pid[k] > 0 && waitpid(srv->agent_pid[k], NULL, WNOHANG) == srv->agent_pid[k])
				srv->agent_pid[k] = 0;
			left |= srv->agent_pid[k] > 0;
		}
		if (left)
			g_usleep(100 * 1000);
	}
	for (guint k = 0; k < srv->agents; k++)
		if (srv->agent_pid[k] > 0) {
			kill(srv->agent_pid[k], SIGTERM);
			waitpid(srv->agent_pid[k], NULL, 0);
		}
}

static volatile sig_atomic_t agent_reload;

static void
agent_sighup(int sig)
{
	(void) sig;
	agent_reload = 1;
}

/* The rows of a datagram ("ROW\n" each; anything else is a bare wake-up)
 * into rows; FALSE if it held none. */
static gboolean
agent_rows(const char *buf, gssize n, GArray *rows)
{
	g_autofree char *text = g_strndup(buf, (gsize) n);
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	gboolean any = FALSE;

	for (char **l = lines; *l != NULL; l++) {
		gint64 row;

		if (**l != '\0' && g_ascii_string_to_signed(*l, 10, 1, G_MAXINT64, &row, NULL)) {
			g_array_append_val(rows, row);
			any = TRUE;
		}
	}
	return any;
}

static void
agent_deliver(store *st, const vulnid_config *cfg, GArray *rows)
{
	g_autoptr(GError) e = NULL;
	outbox_run_result rr = { 0 };
	outbox_run_opts ro = { 0, FALSE, (guint) cfg->filter_budget, notify_delivery_failed,
			       rows != NULL ? (const gint64 *) (gpointer) rows->data : NULL,
			       rows != NULL ? rows->len : 0 };

	if (cfg->filter_budget > 0 && (outbox_run(st, cfg, &ro, &rr, &e) != VULNID_OK || rr.deferred > 0)) {
		g_autofree char *m = text_mask_controls(e != NULL ? e->message : "");

		syslog(LOG_WARNING, "delivery deferred%s%s (%u item%s; see vulnid queue list)",
		       e != NULL ? ": " : "", m, rr.deferred, rr.deferred == 1 ? "" : "s");
	}
}

vulnid_status
lmtpd_delivery_agent(const char *conf_path, GError **err)
{
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(store) st = NULL;
	struct sigaction sa;
	gint64 swept = 0;
	vulnid_status s;

	s = config_load(conf_path, &cfg, err);
	if (s != VULNID_OK)
		return s;
	crypto_preinit();
	message_init();
	crypto_set_home(cfg->gnupg_home, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = agent_sighup;	/* no SA_RESTART: read() returns */
	sigaction(SIGHUP, &sa, NULL);
	s = store_open(cfg->db_path, cfg->busy_timeout, STORE_OPEN_EXISTING, &st, err);
	if (s != VULNID_OK)
		return s;
	store_keep_statements(st, TRUE);
	for (;;) {
		char buf[LMTPD_AGENT_DATAGRAM + 1];
		ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
		g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(gint64));
		g_autoptr(GError) e = NULL;
		gboolean wake = FALSE;

		if (n == 0)
			break;
		if (n < 0 && errno != EINTR)
			break;
		if (agent_reload) {
			g_autoptr(vulnid_config) fresh = NULL;

			agent_reload = 0;
			if (config_load(conf_path, &fresh, &e) == VULNID_OK) {
				g_clear_pointer(&cfg, config_free);
				cfg = g_steal_pointer(&fresh);
			}
			g_clear_error(&e);
		}
		if (n < 0)
			continue;
		/* What came meanwhile, up to a round's worth of rows: the
		 * rest is left to the other agents. */
		do
			wake |= !agent_rows(buf, n, rows);
		while (rows->len < LMTPD_AGENT_ROWS &&
		       (n = recv(STDIN_FILENO, buf, sizeof buf, MSG_DONTWAIT)) > 0);
		if (rows->len > 0)
			agent_deliver(st, cfg, rows);
		/* Everything due (retries, rows a full socket dropped): on a
		 * bare wake-up, and every LMTPD_AGENT_SWEEP s of traffic. */
		if (wake || g_get_monotonic_time() - swept > LMTPD_AGENT_SWEEP * G_USEC_PER_SEC) {
			swept = g_get_monotonic_time();
			agent_deliver(st, cfg, NULL);
		}
		if (audit_flush(st, cfg->audit_path, &e) != VULNID_OK) {
			g_autofree char *m = text_mask_controls(e->message);

			syslog(LOG_WARNING, "audit log: %s", m);
		}
	}
	message_shutdown();
	return VULNID_OK;
}

/* How many mails are parsed at once: [lmtpd] parse_workers, or as many
 * as there are processors (at least 2, so that one mail that keeps gpg
 * busy never stops the others). */
static gint
parse_workers(const vulnid_config *cfg)
{
	if (cfg->lmtpd_parse_workers > 0)
		return (gint) cfg->lmtpd_parse_workers;
	return MAX(2, (gint) g_get_num_processors());
}

/* --- sessions ---------------------------------------------------------------- */

typedef struct {
	server *srv;
	conf_ref *conf;
	int fd;
	char *peer;
	int spool;		/* reused from mail to mail: a new file (an inode
				 * allocated and freed) per mail costs more than
				 * the rest of the spooling */
} session;

static const char *
check_recipient(void *data, const char *address)
{
	session *se = data;
	const vulnid_config *cfg = se->conf->cfg;
	const char *at = strrchr(address, '@');
	g_autofree char *local = NULL;
	char *plus;

	if (at == NULL || g_ascii_strcasecmp(at + 1, cfg->domain) != 0)
		return "550 5.1.2 not a domain of this robot";
	local = g_strndup(address, (gsize) (at - address));
	plus = strchr(local, '+');
	if (plus != NULL)
		*plus = '\0';
	if (g_ascii_strcasecmp(local, cfg->request_local) == 0 ||
	    g_ascii_strcasecmp(local, cfg->bounce_local) == 0)
		return NULL;
	return "550 5.1.1 no such address at this robot";
}

static int
spool_open(void *data)
{
	session *se = data;
	const char *dir = se->conf->cfg->spool_dir;
	g_autofree char *tmpl = NULL;
	int fd;

	if (se->spool >= 0 && lseek(se->spool, 0, SEEK_SET) == 0)
		return se->spool;
	if (se->spool >= 0)
		close(se->spool);
	fd = se->spool = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	tmpl = g_build_filename(dir, "lmtp.XXXXXX", NULL);
	fd = se->spool = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

/* The end of a mail's data: one job per recipient, queued for the engine;
 * wait for their commit, at most until the mail's deadline. */
static void
deliver(void *data, const lmtp_envelope *env, int fd, GPtrArray *replies)
{
	session *se = data;
	server *srv = se->srv;
	g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func((GDestroyNotify) job_unref);
	gint64 deadline = g_get_monotonic_time() + se->conf->cfg->time_limit * G_USEC_PER_SEC;
	GPtrArray *parse;
	gboolean abandoned = FALSE;

	/* the file may be longer, from an earlier mail of the session */
	if (ftruncate(fd, env->size) < 0) {
		int e = errno;

		for (guint i = 0; i < env->recipients->len; i++)
			g_ptr_array_add(replies, g_strdup_printf("451 4.3.0 cannot spool the mail (%s), try again later",
								 g_strerror(e)));
		return;
	}
	for (guint i = 0; i < env->recipients->len; i++) {
		job *j = g_new0(job, 1);

		j->ref = 2;	/* this session, and the workers and engine */
		j->conf = conf_ref_get(se->conf);
		j->fd = dup(fd);
		j->sender = g_strdup(env->sender);
		j->recipient = g_strdup(g_ptr_array_index(env->recipients, i));
		/* Without XFORWARD (Exim's and OpenSMTPD's LMTP clients send
		 * none) the client is the one in brackets of the topmost
		 * Received field, which the MTA in front of this server added,
		 * as vulnid-filter -a received reads it. */
		j->client_address = g_strdup(env->client_address != NULL ? env->client_address : "received");
		j->deadline = deadline;
		g_ptr_array_add(jobs, j);
	}
	/* the worker's array holds no references: each job's second one is
	 * the worker's, then the engine's */
	parse = g_ptr_array_sized_new(jobs->len);
	for (guint i = 0; i < jobs->len; i++)
		g_ptr_array_add(parse, g_ptr_array_index(jobs, i));
	g_thread_pool_push(srv->parsers, parse, NULL);
	g_mutex_lock(&srv->lock);
	for (guint i = 0; i < jobs->len; i++) {
		job *j = g_ptr_array_index(jobs, i);

		while (j->state != JOB_DONE && !j->abandoned) {
			if (j->state == JOB_APPLYING)
				g_cond_wait(&srv->done_cond, &srv->lock);	/* the commit is near */
			else if (!g_cond_wait_until(&srv->done_cond, &srv->lock, deadline) &&
				 j->state != JOB_APPLYING && j->state != JOB_DONE)
				j->abandoned = TRUE;
		}
		if (j->abandoned) {
			abandoned = TRUE;
			g_ptr_array_add(replies, g_strdup("451 4.4.7 time limit reached, try again later"));
			syslog(LOG_WARNING, "time limit reached before the commit: to=<%s> deferred",
			       j->recipient);
		} else
			g_ptr_array_add(replies, g_strdup(j->reply));
	}
	g_mutex_unlock(&srv->lock);
	if (abandoned) {
		/* the engine may still read it: the next mail gets a new file */
		close(se->spool);
		se->spool = -1;
	}
}

static gboolean
write_out(int fd, GByteArray *out)
{
	gsize done = 0;

	while (done < out->len) {
		ssize_t w = send(fd, out->data + done, out->len - done, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			g_byte_array_set_size(out, 0);
			return FALSE;
		}
		done += (gsize) w;
	}
	g_byte_array_set_size(out, 0);
	return TRUE;
}

static void
session_run(gpointer data, gpointer user_data)
{
	session *se = data;
	server *srv = user_data;
	const vulnid_config *cfg = se->conf->cfg;
	lmtp_server_config lc = { 0 };
	g_autoptr(lmtp_session) ls = NULL;
	gint64 end = g_get_monotonic_time() + cfg->lmtpd_session_time_limit * G_USEC_PER_SEC;
	char buf[65536];

	lc.hostname = cfg->helo;
	lc.max_size = cfg->max_message_size;
	lc.max_recipients = (guint) cfg->lmtpd_max_recipients;
	lc.max_mails = (guint) cfg->lmtpd_max_mails;
	lc.max_errors = (guint) cfg->lmtpd_max_errors;
	lc.xforward = cfg->lmtpd_xforward;
	lc.data = se;
	lc.check_recipient = check_recipient;
	lc.spool_open = spool_open;
	lc.deliver = deliver;
	ls = lmtp_session_new(&lc);
	for (;;) {
		struct pollfd p[2] = { { se->fd, POLLIN, 0 }, { srv->drain_pipe[0], POLLIN, 0 } };
		gboolean busy = lmtp_session_in_transaction(ls);
		gint64 now;
		int n;

		if (!write_out(se->fd, lmtp_session_output(ls)) || lmtp_session_closing(ls))
			break;
		now = g_get_monotonic_time();
		if (!busy && g_atomic_int_get(&srv->draining)) {
			lmtp_session_abort(ls, "421 4.3.2 vulnid-lmtpd is shutting down, try again later");
			continue;
		}
		if (!busy && now >= end) {
			lmtp_session_abort(ls, "421 4.4.2 session time limit reached, closing the session");
			continue;
		}
		n = poll(p, busy ? 1 : 2, (int) MIN(cfg->lmtpd_timeout * 1000,
						     busy ? G_MAXINT : MAX((end - now) / 1000, 1)));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			lmtp_session_abort(ls, "421 4.4.2 timeout, closing the session");
			continue;
		}
		if (n < 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		{
			ssize_t r = recv(se->fd, buf, sizeof buf, 0);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				lmtp_session_eof(ls);
				break;
			}
			lmtp_session_input(ls, buf, (gsize) r);
		}
	}
	close(se->fd);
	if (se->spool >= 0)
		close(se->spool);
	conf_ref_put(se->conf);
	g_free(se->peer);
	g_free(se);
	g_mutex_lock(&srv->lock);
	srv->sessions--;
	g_mutex_unlock(&srv->lock);
	/* the main thread's poll notices through its timeout or next event */
}

/* --- listeners ---------------------------------------------------------------- */

typedef struct {
	int fd;
	gboolean inet;
	char *unlink_path;	/* a unix socket this process made */
} listener;

/* This process's user, by name, for the messages that name a fix. */
static const char *
self_name(void)
{
	struct passwd *pw = getpwuid(geteuid());

	return pw != NULL ? pw->pw_name : "vulnid";
}

/* The MTA reaches the socket through the group it has (socket_group, or
 * the group the socket inherits from a setgid directory, as under
 * Postfix's chroot on Debian): every directory above it must let that
 * group pass.  A socket it cannot reach gives only "Permission denied"
 * in the MTA's log, so say it here, at start. */
static void
warn_unreachable(const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);
	struct stat sock;

	if (stat(path, &sock) < 0 || (sock.st_mode & 0007) != 0)
		return;		/* open to all, or gone */
	while (strcmp(dir, "/") != 0 && strcmp(dir, ".") != 0) {
		struct stat sb;
		char *up;

		if (stat(dir, &sb) == 0 && !(sb.st_gid == sock.st_gid ? (sb.st_mode & 0010) : (sb.st_mode & 0001))) {
			struct group *g = getgrgid(sock.st_gid);

			syslog(LOG_WARNING, "group %s cannot reach '%s': '%s' is mode %04o, group %d", g != NULL ?
			       g->gr_name : "?", path, dir, (unsigned) (sb.st_mode & 07777), (int) sb.st_gid);
			fprintf(stderr, "vulnid-lmtpd: warning: group %s cannot reach '%s': '%s' is mode %04o:"
				" put the socket in a directory of that group (vulnid-lmtpd(8), POSTFIX ON DEBIAN)\n",
				g != NULL ? g->gr_name : "?", path, dir, (unsigned) (sb.st_mode & 07777));
			return;
		}
		up = g_path_get_dirname(dir);
		g_free(dir);
		dir = up;
	}
}

static vulnid_status
listen_unix(const vulnid_config *cfg, GArray *ls, GError **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	listener l = { -1, FALSE, NULL };
	int fd;

	if (strlen(cfg->lmtpd_socket) >= sizeof sa.sun_path)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] socket: '%s' is too long for a socket",
				   cfg->lmtpd_socket);
	strcpy(sa.sun_path, cfg->lmtpd_socket);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vulnid_fail(err, VULNID_ERR_TEMP, "socket: %s", g_strerror(errno));
	if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0) {
		close(fd);
		return vulnid_fail(err, VULNID_ERR_CONFIG, "'%s': another server is listening there",
				   cfg->lmtpd_socket);
	}
	unlink(cfg->lmtpd_socket);	/* a stale socket of a server that is gone */
	if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, 128) < 0 ||
	    chmod(cfg->lmtpd_socket, (mode_t) cfg->lmtpd_socket_mode) < 0) {
		int e = errno;

		g_autofree char *dir = g_path_get_dirname(cfg->lmtpd_socket);

		close(fd);
		if (e == ENOENT || e == EACCES)
			return vulnid_fail(err, VULNID_ERR_CONFIG, "cannot listen on '%s': %s: '%s' must exist and"
					   " be the robot user's (for Postfix on Debian: install -d -o %s -g postfix -m"
					   " 2750 '%s'; vulnid-lmtpd(8), POSTFIX ON DEBIAN)", cfg->lmtpd_socket,
					   g_strerror(e), dir, self_name(), dir);
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot listen on '%s': %s",
				   cfg->lmtpd_socket, g_strerror(e));
	}
	if (*cfg->lmtpd_socket_group != '\0') {
		struct group *g = getgrnam(cfg->lmtpd_socket_group);
		int e = g == NULL ? ENOENT : chown(cfg->lmtpd_socket, (uid_t) -1, g->gr_gid) < 0 ? errno : 0;

		if (e != 0) {
			close(fd);
			unlink(cfg->lmtpd_socket);
			if (g == NULL)
				return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] socket_group: there is no group '%s'",
						   cfg->lmtpd_socket_group);
			return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] socket_group: cannot give '%s' to group"
					   " '%s': %s: %s is not in that group.  Leave socket_group empty and make the"
					   " socket's directory the group's, setgid (install -d -o %s -g %s -m 2750 DIR:"
					   " the socket inherits the group), or add the user to it (adduser %s %s)",
					   cfg->lmtpd_socket, cfg->lmtpd_socket_group, g_strerror(e), self_name(),
					   self_name(), cfg->lmtpd_socket_group, self_name(),
					   cfg->lmtpd_socket_group);
		}
	}
	warn_unreachable(cfg->lmtpd_socket);
	l.fd = fd;
	l.unlink_path = g_strdup(cfg->lmtpd_socket);
	g_array_append_val(ls, l);
	return VULNID_OK;
}

static vulnid_status
listen_inet(const vulnid_config *cfg, GArray *ls, GError **err)
{
	g_autoptr(GSocketConnectable) addr = NULL;
	g_autoptr(GSocketAddressEnumerator) en = NULL;
	g_autoptr(GSocketAddress) sa = NULL;
	g_autoptr(GError) e = NULL;
	struct sockaddr_storage ss;
	listener l = { -1, TRUE, NULL };
	GInetAddress *ia;
	int fd, on = 1;

	addr = g_network_address_parse(cfg->lmtpd_listen, 0, &e);
	if (addr == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] listen: %s", e->message);
	en = g_socket_connectable_enumerate(addr);
	sa = g_socket_address_enumerator_next(en, NULL, &e);
	if (sa == NULL || !G_IS_INET_SOCKET_ADDRESS(sa) ||
	    g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(sa)) == 0)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] listen: '%s' is not HOST:PORT",
				   cfg->lmtpd_listen);
	ia = g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(sa));
	if (!g_inet_address_get_is_loopback(ia) && cfg->lmtpd_allow->len == 0)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] listen: '%s' is not a loopback address; "
				   "set [lmtpd] allow to the MTAs that may connect", cfg->lmtpd_listen);
	if (!g_socket_address_to_native(sa, &ss, sizeof ss, &e))
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] listen: %s", e->message);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vulnid_fail(err, VULNID_ERR_TEMP, "socket: %s", g_strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
	if (bind(fd, (struct sockaddr *) &ss, (socklen_t) g_socket_address_get_native_size(sa)) < 0 ||
	    listen(fd, 128) < 0) {
		int en2 = errno;

		close(fd);
		return vulnid_fail(err, vulnid_status_from_errno(en2), "cannot listen on '%s': %s",
				   cfg->lmtpd_listen, g_strerror(en2));
	}
	l.fd = fd;
	g_array_append_val(ls, l);
	return VULNID_OK;
}

/* systemd socket activation: LISTEN_PID, LISTEN_FDS, descriptors from 3. */
static gboolean
listen_inherited(GArray *ls)
{
	const char *pid = g_getenv("LISTEN_PID"), *fds = g_getenv("LISTEN_FDS");
	int n;

	if (pid == NULL || fds == NULL || g_ascii_strtoll(pid, NULL, 10) != (gint64) getpid())
		return FALSE;
	n = (int) g_ascii_strtoll(fds, NULL, 10);
	for (int fd = 3; fd < 3 + n; fd++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof ss;
		listener l = { fd, FALSE, NULL };

		fcntl(fd, F_SETFD, FD_CLOEXEC);
		if (getsockname(fd, (struct sockaddr *) &ss, &len) == 0)
			l.inet = ss.ss_family == AF_INET || ss.ss_family == AF_INET6;
		g_array_append_val(ls, l);
	}
	g_unsetenv("LISTEN_PID");
	g_unsetenv("LISTEN_FDS");
	g_unsetenv("LISTEN_FDNAMES");
	return n > 0;
}

/* A TCP client is let in when it is in [lmtpd] allow, or, when that is
 * empty, on loopback. */
static gboolean
client_allowed(const vulnid_config *cfg, int fd, char **peer)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	g_autoptr(GSocketAddress) sa = NULL;
	GInetAddress *ia;
	gboolean ok = FALSE;

	if (getpeername(fd, (struct sockaddr *) &ss, &len) < 0)
		return FALSE;
	sa = g_socket_address_new_from_native(&ss, len);
	if (sa == NULL || !G_IS_INET_SOCKET_ADDRESS(sa))
		return FALSE;
	ia = g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(sa));
	*peer = g_inet_address_to_string(ia);
	if (cfg->lmtpd_allow->len == 0)
		return g_inet_address_get_is_loopback(ia);
	for (guint i = 0; i < cfg->lmtpd_allow->len && !ok; i++) {
		GInetAddressMask *m = g_ptr_array_index(cfg->lmtpd_allow, i);

		ok = g_inet_address_get_family(ia) == g_inet_address_mask_get_family(m) &&
		     g_inet_address_mask_matches(m, ia);
	}
	return ok;
}

static void
accept_one(server *srv, const listener *l)
{
	int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	conf_ref *conf;
	session *se;
	char *peer = NULL;

	if (fd < 0)
		return;
	g_mutex_lock(&srv->lock);
	conf = conf_ref_get(srv->conf);
	g_mutex_unlock(&srv->lock);
	if (l->inet && !client_allowed(conf->cfg, fd, &peer)) {
		static const char no[] = "421 4.7.1 this client may not use this LMTP server\r\n";
		g_autofree char *m = text_mask_controls(peer != NULL ? peer : "?");

		(void) !send(fd, no, sizeof no - 1, MSG_NOSIGNAL);
		syslog(LOG_WARNING, "refused a connection from %s (not in [lmtpd] allow)", m);
		close(fd);
		g_free(peer);
		conf_ref_put(conf);
		return;
	}
	se = g_new0(session, 1);
	se->srv = srv;
	se->conf = conf;
	se->fd = fd;
	se->peer = peer;
	se->spool = -1;
	g_mutex_lock(&srv->lock);
	srv->sessions++;
	g_mutex_unlock(&srv->lock);
	g_thread_pool_push(srv->pool, se, NULL);
}

static void
reload(server *srv)
{
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(GError) e = NULL;
	conf_ref *c, *old;

	if (config_load(srv->conf_path, &cfg, &e) != VULNID_OK) {
		g_autofree char *m = text_mask_controls(e->message);

		syslog(LOG_ERR, "reload refused, the old configuration stays: %s", m);
		return;
	}
	c = g_new0(conf_ref, 1);
	c->ref = 1;
	c->cfg = g_steal_pointer(&cfg);
	g_mutex_lock(&srv->lock);
	old = srv->conf;
	srv->conf = c;
	g_mutex_unlock(&srv->lock);
	conf_ref_put(old);
	g_thread_pool_set_max_threads(srv->pool, (gint) c->cfg->lmtpd_sessions, NULL);
	g_thread_pool_set_max_threads(srv->parsers, parse_workers(c->cfg), NULL);
	for (guint i = 0; i < srv->agents; i++)
		if (srv->agent_pid[i] > 0)
			kill(srv->agent_pid[i], SIGHUP);
	syslog(LOG_INFO, "configuration reloaded (listeners change only on a restart)");
}

static int
signals_open(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	/* A signal ignored when it arrives is discarded, blocked or not, and
	 * shells start background jobs with some ignored: take them back. */
	signal(SIGHUP, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	/* every thread started later inherits the mask */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Serve until SIGTERM; returns after the sessions are drained. */
static void
serve(server *srv, GArray *ls, int sigfd)
{
	gint64 drain_end = 0;

	for (;;) {
		g_autofree struct pollfd *p = g_new0(struct pollfd, ls->len + 1);
		guint sessions, max;
		nfds_t n = 1;

		g_mutex_lock(&srv->lock);
		sessions = srv->sessions;
		max = (guint) srv->conf->cfg->lmtpd_sessions;
		g_mutex_unlock(&srv->lock);
		if (srv->draining && (sessions == 0 || g_get_monotonic_time() >= drain_end))
			break;
		p[0].fd = sigfd;
		p[0].events = POLLIN;
		/* at the limit, new connections wait in the listen queue */
		for (guint i = 0; i < ls->len && !srv->draining && sessions < max; i++) {
			p[n].fd = g_array_index(ls, listener, i).fd;
			p[n++].events = POLLIN;
		}
		if (poll(p, n, sessions >= max || srv->draining ? 100 : 1000) > 0) {
			struct signalfd_siginfo si;

			while (read(sigfd, &si, sizeof si) == sizeof si) {
				if (si.ssi_signo == SIGHUP)
					reload(srv);
				else if (!srv->draining) {
					const vulnid_config *cfg = srv->conf->cfg;

					syslog(LOG_INFO, "shutting down: no new sessions, %u to finish", sessions);
					g_atomic_int_set(&srv->draining, TRUE);
					/* no mail's gpg keeps the server up: what it was
					 * working on is answered 451 and comes again */
					gpgrun_abort_all();
					(void) !write(srv->drain_pipe[1], "d", 1);
					drain_end = g_get_monotonic_time() +
						    (cfg->time_limit + cfg->lmtpd_timeout) * G_USEC_PER_SEC;
				}
			}
			for (nfds_t i = 1; i < n; i++)
				if (p[i].revents & POLLIN)
					accept_one(srv, &g_array_index(ls, listener, i - 1));
		}
		agent_check(srv, !srv->draining);
	}
}

vulnid_status
lmtpd_run(const char *conf_path, const char *self, lmtpd_stats *stats, GError **err)
{
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(GArray) ls = g_array_new(FALSE, TRUE, sizeof(listener));
	server *srv;
	GThread *engine, *syncer;
	vulnid_status s;
	int sigfd;

	s = config_load(conf_path, &cfg, err);
	if (s != VULNID_OK)
		return s;
	if (g_mkdir_with_parents(cfg->spool_dir, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   cfg->spool_dir, g_strerror(errno));
	if (!listen_inherited(ls)) {
		if (*cfg->lmtpd_socket != '\0')
			s = listen_unix(cfg, ls, err);
		if (s == VULNID_OK && *cfg->lmtpd_listen != '\0')
			s = listen_inet(cfg, ls, err);
		if (s == VULNID_OK && ls->len == 0)
			s = vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] has neither socket nor listen");
		if (s != VULNID_OK)
			goto out;
	}
	crypto_preinit();
	message_init();
	crypto_set_home(cfg->gnupg_home, NULL);

	srv = g_new0(server, 1);
	g_mutex_init(&srv->lock);
	g_cond_init(&srv->engine_cond);
	g_cond_init(&srv->done_cond);
	g_queue_init(&srv->queue);
	srv->conf = g_new0(conf_ref, 1);
	srv->conf->ref = 1;
	srv->conf->cfg = g_steal_pointer(&cfg);
	srv->self = g_strdup(self);
	srv->conf_path = g_strdup(conf_path);
	srv->agent_fd = -1;
	srv->agent_in = -1;
	srv->wal_fd = -1;
	srv->wal_path = g_strdup_printf("%s-wal", srv->conf->cfg->db_path);
	g_cond_init(&srv->sync_cond);
	g_queue_init(&srv->unsynced);
	srv->pool = g_thread_pool_new(session_run, srv, (gint) srv->conf->cfg->lmtpd_sessions, FALSE, NULL);
	srv->parsers = g_thread_pool_new(parse_mail, srv, parse_workers(srv->conf->cfg), FALSE, NULL);
	if (!g_unix_open_pipe(srv->drain_pipe, FD_CLOEXEC, NULL)) {
		s = vulnid_fail(err, VULNID_ERR_TEMP, "pipe: %s", g_strerror(errno));
		goto out;
	}
	sigfd = signals_open();
	/* The schema, the WAL index, the statements: once, before the first
	 * mail, so that a broken database stops the start. */
	s = engine_store(srv, srv->conf->cfg, err);
	if (s != VULNID_OK)
		goto out;
	agent_start(srv);
	engine = g_thread_new("lmtp-engine", engine_thread, srv);
	syncer = g_thread_new("lmtp-sync", sync_thread, srv);
	syslog(LOG_INFO, "ready: %u listener%s, up to %" G_GINT64_FORMAT " sessions", ls->len,
	       ls->len == 1 ? "" : "s", srv->conf->cfg->lmtpd_sessions);
	serve(srv, ls, sigfd);

	/* Drained (or out of time): finish what is queued, then stop. */
	for (guint i = 0; i < ls->len; i++) {
		listener *l = &g_array_index(ls, listener, i);

		close(l->fd);
		if (l->unlink_path != NULL)
			unlink(l->unlink_path);
		g_free(l->unlink_path);
		l->unlink_path = NULL;
	}
	g_array_set_size(ls, 0);
	/* what the workers still hold ends at once: gpg was stopped */
	g_thread_pool_free(srv->parsers, FALSE, TRUE);
	g_mutex_lock(&srv->lock);
	srv->stopping = TRUE;
	g_cond_signal(&srv->engine_cond);
	g_mutex_unlock(&srv->lock);
	g_thread_join(engine);
	g_mutex_lock(&srv->lock);
	srv->sync_stopping = TRUE;
	g_cond_signal(&srv->sync_cond);
	g_mutex_unlock(&srv->lock);
	g_thread_join(syncer);
	agent_stop(srv);
	*stats = srv->stats;
	/* Sessions still open past the drain time keep their memory; the
	 * process ends now. */
	store_close(srv->st);
	message_shutdown();
	return VULNID_OK;
out:
	for (guint i = 0; i < ls->len; i++) {
		listener *l = &g_array_index(ls, listener, i);

		close(l->fd);
		if (l->unlink_path != NULL)
			unlink(l->unlink_path);
		g_free(l->unlink_path);
	}
	return s;
}
