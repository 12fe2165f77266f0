/* outbox.c - compose, queue and deliver the robot's mail */
#include "autoconfig.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/random.h>
#include <gmime/gmime.h>

#include "audit.h"
#include "message.h"
#include "canonjson.h"
#include "crypto.h"
#include "outbox.h"
#include "smtp.h"
#include "text.h"

/* Retry schedule for a failed delivery: 1 min doubling, capped at 4 h. */
#define OUTBOX_BACKOFF_FIRST 60
#define OUTBOX_RECORD_BATCH 100	/* outcomes per transaction */
#define OUTBOX_BACKOFF_MAX (4 * 3600)

static char *
outbox_new_message_id(const vulnid_config *cfg, const char *kind)
{
	g_autofree char *uuid = g_uuid_string_random();

	return g_strdup_printf("vulnid.%s.%s@%s", kind, uuid, cfg->domain);
}

/* A VERP token: random, so that bounces cannot be forged for items an
 * outsider did not receive. */
static char *
outbox_new_token(void)
{
	guint8 b[12];
	GString *s = g_string_new(NULL);

	if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
		for (gsize i = 0; i < sizeof b; i++)
			b[i] = (guint8) g_random_int();
	for (gsize i = 0; i < sizeof b; i++)
		g_string_append_printf(s, "%02x", b[i]);
	return g_string_free(s, FALSE);
}

/* ---- claims ---------------------------------------------------------------
 *
 * A run delivers only items it has claimed: claim = its token, claim_until
 * = when the claim lapses, set in the transaction that selects them (or,
 * in the filter, in the one that queues them: those carry the process's
 * token, which every run of the process takes for its own).  Tokens are
 * "PID.START.RANDOM", a new RANDOM for each run: a run never claims an
 * item twice, a later run of a long-lived process may again. */
#define OUTBOX_CLAIM_MARGIN 60	/* s after the delivery deadline to record it */
#define OUTBOX_CLAIM_BATCH 100	/* items claimed (and sent in one session) at a time */
#define OUTBOX_RUN_MAX 1000	/* items one run delivers at most */
#define OUTBOX_DEFAULT_DEADLINE 3600

static char *claim_token;	/* the process's, for what it queues */
static char *run_token;		/* the current outbox_run()'s */
static guint claim_queued_seconds;

/* State and start time (clock ticks after boot) of process pid, from
 * /proc/PID/stat; FALSE if there is no such process.  *start is NULL
 * when /proc cannot tell. */
static gboolean
proc_state(pid_t pid, char *state, char **start)
{
	g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid);
	g_autofree char *text = NULL;
	g_auto(GStrv) f = NULL;
	const char *paren;

	*start = NULL;
	*state = '?';
	/* kill(0) sees processes that /proc hides (hidepid, ProtectProc) */
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return FALSE;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return TRUE;
	/* "PID (COMM) STATE PPID ...": COMM may hold anything, even ")" */
	paren = strrchr(text, ')');
	if (paren == NULL)
		return TRUE;
	f = g_strsplit(paren + 1, " ", 0);
	if (g_strv_length(f) > 20) {
		*state = f[1][0];
		*start = g_strdup(f[20]);
	}
	return TRUE;
}

/* A new token of this process: "PID.START.RANDOM", START being its start
 * time, so that a dead claimer is recognised even when its PID is reused. */
static char *
new_claim_token(void)
{
	g_autofree char *r = outbox_new_token();
	g_autofree char *start = NULL;
	char state;

	proc_state(getpid(), &state, &start);
	return g_strdup_printf("%d.%s.%s", (int) getpid(), start != NULL ? start : "0", r);
}

static const char *
outbox_claim_token(void)
{
	if (claim_token == NULL)
		claim_token = new_claim_token();
	return claim_token;
}

/* Whether the process that made token still runs.  All claimers share one
 * host (SQLite's WAL requires it), so its process table tells. */
static gboolean
claimer_alive(const char *token)
{
	g_auto(GStrv) f = g_strsplit(token, ".", 3);
	g_autofree char *start = NULL;
	gint64 pid;
	char state;

	if (g_strv_length(f) != 3 || !g_ascii_string_to_signed(f[0], 10, 1, G_MAXINT, &pid, NULL))
		return TRUE;	/* not ours to judge: wait for it to lapse */
	if (!proc_state((pid_t) pid, &state, &start))
		return FALSE;
	if (state == 'Z' || state == 'X')
		return FALSE;
	return start == NULL || strcmp(f[1], "0") == 0 || strcmp(start, f[1]) == 0;
}

guint
outbox_claim_seconds(const vulnid_config *cfg, guint deadline)
{
	return (deadline > 0 ? deadline : OUTBOX_DEFAULT_DEADLINE) +
	       (guint) (cfg->busy_timeout / 1000) + OUTBOX_CLAIM_MARGIN;
}

void
outbox_claim_queued(guint seconds)
{
	claim_queued_seconds = seconds;
}

static char *
time_after(guint seconds)
{
	g_autoptr(GDateTime) t = store_now_datetime();
	g_autoptr(GDateTime) u = g_date_time_add_seconds(t, (gdouble) seconds);

	return g_date_time_format(u, "%Y-%m-%dT%H:%M:%SZ");
}

/* A header value that came from a mail (a Subject, a Title, a name): its
 * encoded words decoded (a few rounds: an encoded word may hold another),
 * cleaned of controls, line ends and bidi controls, and cut.  *literal is
 * set when what is left still looks like an encoded word: GMime would pass
 * it through as one, and the recipient would decode it. */
static char *
header_text(const char *s, gsize max, gboolean *literal)
{
	g_autofree char *v = g_strdup(s != NULL ? s : "");

	for (int round = 0; round < 4 && strstr(v, "=?") != NULL; round++) {
		char *d = g_mime_utils_header_decode_text(NULL, v);

		if (d == NULL || strcmp(d, v) == 0) {
			g_free(d);
			break;
		}
		g_free(v);
		v = d;
	}
	*literal = strstr(v, "=?") != NULL;
	return text_clean_line(v, max);
}

static GMimeMessage *
outbox_build(const vulnid_config *cfg, const outbox_mail *mail, const char *msgid)
{
	GMimeMessage *msg = g_mime_message_new(TRUE);
	GMimeObject *o = GMIME_OBJECT(msg);
	g_autoptr(GDateTime) now = store_now_datetime();
	gboolean subject_literal = FALSE, name_literal = FALSE;
	g_autofree char *subject = header_text(mail->subject, 900, &subject_literal);
	g_autoptr(GString) refs = g_string_new(NULL);
	GMimeTextPart *part;
	GMimeObject *body;

	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_FROM, "vulnid", cfg->request_address);
	if (mail->to_list != NULL) {
		for (const char *const *t = mail->to_list; *t; t++) {
			g_autofree char *a = text_clean_line(*t, 320);

			g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_TO, NULL, a);
		}
	} else {
		g_autofree char *to_name = mail->to_name != NULL ? header_text(mail->to_name, 200, &name_literal) : NULL;
		g_autofree char *to_addr = text_clean_line(mail->to_addr, 320);

		/* a name that would decode again at the recipient is left out */
		g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_TO, name_literal ? NULL : to_name, to_addr);
	}
	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_REPLY_TO, NULL,
				   mail->reply_to != NULL ? mail->reply_to : cfg->request_address);
	g_mime_message_set_subject(msg, subject, "utf-8");
	if (subject_literal) {
		/* Encoded once, by us: the recipient decodes it once and sees
		 * "=?...?=" as text, never what it would decode to. */
		g_autofree char *words = text_encoded_words_b(subject);
		g_auto(GStrv) w = g_strsplit(words, " ", -1);
		g_autofree char *folded = g_strjoinv("\n ", w);
		g_autofree char *raw = g_strdup_printf(" %s\n", folded);
		GMimeHeader *h = g_mime_header_list_get_header(g_mime_object_get_header_list(o), "Subject");

		if (h != NULL)
			g_mime_header_set_raw_value(h, raw);
	}
	g_mime_message_set_date(msg, now);
	g_mime_message_set_message_id(msg, msgid);
	if (mail->in_reply_to != NULL && text_msgid_valid(mail->in_reply_to)) {
		g_autofree char *irt = g_strdup_printf("<%s>", mail->in_reply_to);

		g_mime_object_set_header(o, "In-Reply-To", irt, NULL);
	}
	/* References: the request's References, then the request itself. */
	for (guint i = 0; mail->references != NULL && i < mail->references->len && i < 20; i++) {
		const char *r = g_ptr_array_index(mail->references, i);

		if (text_msgid_valid(r))
			g_string_append_printf(refs, "%s<%s>", refs->len ? " " : "", r);
	}
	if (mail->in_reply_to != NULL && text_msgid_valid(mail->in_reply_to))
		g_string_append_printf(refs, "%s<%s>", refs->len ? " " : "", mail->in_reply_to);
	if (refs->len > 0)
		g_mime_object_set_header(o, "References", refs->str, NULL);
	g_mime_object_set_header(o, "Auto-Submitted",
				 mail->auto_submitted != NULL ? mail->auto_submitted : "auto-replied", NULL);
	g_mime_object_set_header(o, "X-Loop", cfg->request_address, NULL);
	if (mail->bulk)
		g_mime_object_set_header(o, "Precedence", "bulk", NULL);

	part = g_mime_text_part_new_with_subtype("plain");
	g_mime_text_part_set_text(part, mail->body);	/* sets charset=utf-8 */
	g_mime_part_set_content_encoding(GMIME_PART(part),
		g_mime_part_get_best_content_encoding(GMIME_PART(part), GMIME_ENCODING_CONSTRAINT_7BIT));
	body = GMIME_OBJECT(part);
	if (mail->attachment != NULL) {
		GMimeMultipart *mixed = g_mime_multipart_new_with_subtype("mixed");
		GMimePart *att = g_mime_part_new_with_type("application", "octet-stream");
		g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
		GMimeDataWrapper *w;
		GMimeContentType *ct;

		g_mime_stream_write(mem, g_bytes_get_data(mail->attachment, NULL),
				    g_bytes_get_size(mail->attachment));
		g_mime_stream_reset(mem);
		w = g_mime_data_wrapper_new_with_stream(mem, GMIME_CONTENT_ENCODING_DEFAULT);
		g_mime_part_set_content(att, w);
		g_object_unref(w);
		ct = g_mime_content_type_parse(NULL, mail->attachment_type != NULL ? mail->attachment_type
							: "application/octet-stream");
		g_mime_object_set_content_type(GMIME_OBJECT(att), ct);
		g_object_unref(ct);
		if (mail->attachment_name != NULL)
			g_mime_part_set_filename(att, mail->attachment_name);
		g_mime_part_set_content_encoding(att,
			g_mime_part_get_best_content_encoding(att, GMIME_ENCODING_CONSTRAINT_7BIT));
		g_mime_multipart_add(mixed, body);
		g_mime_multipart_add(mixed, GMIME_OBJECT(att));
		g_object_unref(body);
		g_object_unref(att);
		body = GMIME_OBJECT(mixed);
	}
	g_mime_message_set_mime_part(msg, body);
	g_object_unref(body);
	return msg;
}

/* Embargoed content is never stored or sent in clear: encrypt (and sign)
 * to the recipients' keys before the mail enters the outbox. */
static vulnid_status
outbox_encrypt(GMimeMessage *msg, const char *const *fprs, GError **err)
{
	g_autoptr(GPtrArray) rcpts = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *robot = NULL;
	GMimeObject *enc;
	vulnid_status s;

	s = crypto_robot_fingerprint(&robot, err);
	if (s != VULNID_OK)
		return s;
	for (const char *const *f = fprs; *f; f++)
		g_ptr_array_add(rcpts, g_strdup(*f));
	enc = crypto_encrypt_mime(g_mime_message_get_mime_part(msg), robot, rcpts, err);
	if (enc == NULL)
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot encrypt the mail");
	g_mime_message_set_mime_part(msg, enc);
	g_object_unref(enc);
	return VULNID_OK;
}

static GByteArray *
outbox_serialize(GMimeMessage *msg)
{
	g_autoptr(GMimeFormatOptions) fo = g_mime_format_options_new();
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GByteArray *out = g_byte_array_new();
	GByteArray *b;

	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_DOS);
	g_mime_object_write_to_stream(GMIME_OBJECT(msg), fo, mem);
	b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	g_byte_array_append(out, b->data, b->len);
	return out;
}

vulnid_status
outbox_queue(store *st, const vulnid_config *cfg, gint64 cause, const outbox_mail *mail,
	     gint64 *id_out, GError **err)
{
	g_autofree char *msgid = mail->message_id != NULL ? g_strdup(mail->message_id)
							   : outbox_new_message_id(cfg, mail->kind);
	g_autofree char *now = store_now();
	g_autofree char *token = outbox_new_token();
	g_autofree char *envelope = g_strdup_printf("%s+%s@%s", cfg->bounce_local, token, cfg->domain);
	g_autoptr(GMimeMessage) msg = outbox_build(cfg, mail, msgid);
	g_autoptr(GByteArray) data = NULL;
	g_autoptr(GString) rcpts = g_string_new("[");
	g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func(g_free);
	sqlite3_stmt *stmt;
	vulnid_status s;
	gint64 id;
	int rc;

	if (mail->encrypt_to != NULL && mail->encrypt_to[0] != NULL) {
		s = outbox_encrypt(msg, mail->encrypt_to, err);
		if (s != VULNID_OK)
			return s;
	}
	data = outbox_serialize(msg);
	if (mail->to_list != NULL)
		for (const char *const *t = mail->to_list; *t; t++)
			g_ptr_array_add(to, text_clean_line(*t, 320));
	else
		g_ptr_array_add(to, text_clean_line(mail->to_addr, 320));
	for (guint i = 0; i < to->len; i++) {
		if (i > 0)
			g_string_append_c(rcpts, ',');
		canonjson_string(rcpts, g_ptr_array_index(to, i));
	}
	g_string_append_c(rcpts, ']');
	stmt = store_prepare(st,
		"INSERT INTO outbox (created, kind, entry, cause, message_id, envelope_from,"
		" recipients, data, next_attempt, updated, claim, claim_until)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		&s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, mail->kind, -1, SQLITE_TRANSIENT);
	if (mail->entry != NULL)
		sqlite3_bind_text(stmt, 3, mail->entry, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(stmt, 3);
	if (cause > 0)
		sqlite3_bind_int64(stmt, 4, cause);
	else
		sqlite3_bind_null(stmt, 4);
	sqlite3_bind_text(stmt, 5, msgid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 6, envelope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 7, rcpts->str, -1, SQLITE_TRANSIENT);
	sqlite3_bind_blob(stmt, 8, data->data, (int) data->len, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 9, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 10, now, -1, SQLITE_TRANSIENT);
	if (claim_queued_seconds > 0) {
		sqlite3_bind_text(stmt, 11, outbox_claim_token(), -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 12, time_after(claim_queued_seconds), -1, g_free);
	}
	s = store_step_done(st, stmt, "outbox", err);
	if (s != VULNID_OK)
		return s;
	id = sqlite3_last_insert_rowid(store_db(st));
	stmt = store_prepare(st, "INSERT OR IGNORE INTO outbox_recipients (outbox, address, updated)"
			     " VALUES (?, ?, ?)", &s, err);
	if (stmt == NULL)
		return s;
	for (guint i = 0; i < to->len; i++) {
		sqlite3_reset(stmt);
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_text(stmt, 2, g_ptr_array_index(to, i), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(stmt, 3, now, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(stmt);
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(stmt);
			return store_fail(st, rc, "outbox", err);
		}
	}
	sqlite3_finalize(stmt);
	{
		g_autoptr(audit_event) ev = audit_event_new("queued", mail->entry, msgid);
		g_autofree char *joined = NULL;

		g_ptr_array_add(to, NULL);
		joined = g_strjoinv(", ", (char **) to->pdata);
		audit_event_int(ev, "outbox", id);
		audit_event_str(ev, "kind", mail->kind);
		audit_event_str(ev, "to", joined);
		audit_event_str(ev, "envelope_from", envelope);
		s = audit_append(st, ev, err);
		if (s != VULNID_OK)
			return s;
	}
	if (id_out != NULL)
		*id_out = id;
	return VULNID_OK;
}

static vulnid_status
mkdir_maildir(const char *root, GError **err)
{
	const char *subs[] = { "tmp", "new", "cur" };

	if (g_mkdir_with_parents(root, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno),
				   "cannot create '%s': %s", root, g_strerror(errno));
	for (gsize i = 0; i < G_N_ELEMENTS(subs); i++) {
		g_autofree char *d = g_build_filename(root, subs[i], NULL);

		if (mkdir(d, 0700) < 0 && errno != EEXIST)
			return vulnid_fail(err, vulnid_status_from_errno(errno),
					   "cannot create '%s': %s", d, g_strerror(errno));
	}
	return VULNID_OK;
}

/* Deliver into a Maildir under a name fixed by the outbox item, so that a
 * second attempt after a crash finds the first one instead of delivering
 * twice. */
static vulnid_status
maildir_deliver(const char *root, const char *name, const guint8 *data, gsize len, GError **err)
{
	g_autofree char *tmp = NULL;
	g_autofree char *dst = NULL;
	g_autoptr(GString) lf = g_string_sized_new(len);
	vulnid_status s;
	int fd;

	s = mkdir_maildir(root, err);
	if (s != VULNID_OK)
		return s;
	dst = g_strdup_printf("%s/new/%s", root, name);
	if (g_file_test(dst, G_FILE_TEST_EXISTS))
		return VULNID_OK;
	/* Maildir files use the local line end. */
	for (gsize i = 0; i < len; i++)
		if (!(data[i] == '\r' && i + 1 < len && data[i + 1] == '\n'))
			g_string_append_c(lf, (char) data[i]);
	tmp = g_strdup_printf("%s/tmp/%s.%d", root, name, (int) getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno),
				   "cannot create '%s': %s", tmp, g_strerror(errno));
	for (gsize off = 0; off < lf->len;) {
		ssize_t n = write(fd, lf->str + off, lf->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s = vulnid_fail(err, vulnid_status_from_errno(errno),
					"cannot write '%s': %s", tmp, g_strerror(errno));
			goto fail;
		}
		off += (gsize) n;
	}
	if (fsync(fd) < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno),
				"cannot sync '%s': %s", tmp, g_strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	if (link(tmp, dst) < 0 && errno != EEXIST) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno),
				"cannot deliver to '%s': %s", dst, g_strerror(errno));
		goto fail;
	}
	unlink(tmp);
	return VULNID_OK;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return s;
}

static char *
maildir_name(gint64 id, const char *created, const char *msgid)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_iso8601(created, NULL);
	g_autofree char *h = g_compute_checksum_for_string(G_CHECKSUM_SHA256, msgid, -1);
	g_autofree char *host = g_strdup(g_get_host_name());

	g_strdelimit(host, "/:", '_');
	return g_strdup_printf("%" G_GINT64_FORMAT ".M%" G_GINT64_FORMAT "Q%.12s.%s",
			       t != NULL ? g_date_time_to_unix(t) : (gint64) 0, id, h, host);
}

typedef struct {
	gint64 id;
	char *created;
	char *msgid;
	char *entry;
	char *kind;
	char *envelope_from;
	gint64 attempts;
	gint64 cause;
	gint64 claim_until;	/* unix time our claim on it lapses */
	GPtrArray *pending;	/* char*: recipients still to deliver */
	GPtrArray *results;	/* smtp_rcpt-like: filled by the transport */
	GBytes *signed_now;	/* signed in this run: kept if it must go out again */
} outbox_item;

typedef struct {
	char *address;
	smtp_result result;
	char *reply;
} rcpt_result;

static void
rcpt_result_free(gpointer p)
{
	rcpt_result *r = p;

	g_free(r->address);
	g_free(r->reply);
	g_free(r);
}

static void
outbox_item_free(gpointer p)
{
	outbox_item *it = p;

	g_free(it->created);
	g_free(it->msgid);
	g_free(it->entry);
	g_free(it->kind);
	g_free(it->envelope_from);
	g_ptr_array_unref(it->pending);
	g_ptr_array_unref(it->results);
	if (it->signed_now != NULL)
		g_bytes_unref(it->signed_now);
	g_free(it);
}

static void
item_result(outbox_item *it, const char *address, smtp_result result, const char *reply)
{
	rcpt_result *r = g_new0(rcpt_result, 1);

	r->address = g_strdup(address);
	r->result = result;
	r->reply = g_strdup(reply);
	g_ptr_array_add(it->results, r);
}

/* Count recipients of item id by state. */
static vulnid_status
outbox_tally(store *st, gint64 id, int *pending, int *failed, int *delivered, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st,
		"SELECT coalesce(sum(status IN ('queued', 'deferred')), 0),"
		" coalesce(sum(status = 'failed'), 0), coalesce(sum(status = 'delivered'), 0)"
		" FROM outbox_recipients WHERE outbox = ?", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	*pending = sqlite3_column_int(stmt, 0);
	*failed = sqlite3_column_int(stmt, 1);
	*delivered = sqlite3_column_int(stmt, 2);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

static vulnid_status outbox_keep_signed(store *st, const vulnid_config *cfg, outbox_item *it,
				       const char *now, GError **err);

/* The state a verdict moves a pending recipient to. */
static const char *
verdict_state(smtp_result result, gboolean expired)
{
	return result == SMTP_RESULT_DELIVERED ? "delivered"
	     : result == SMTP_RESULT_PERMANENT || expired ? "failed" : "deferred";
}

/* Store the transport's verdicts for one item and its new overall state,
 * with one audit event, inside the caller's transaction.  A verdict only
 * applies to a recipient still pending: one that a bounce failed while the
 * mail was on its way (a fast bounce) stays failed, whatever the server
 * said first.  Recipients that fail now are passed to on_failure. */
static vulnid_status
outbox_record(store *st, const vulnid_config *cfg, const outbox_run_opts *o, outbox_item *it,
	      outbox_run_result *res, GError **err)
{
	g_autofree char *now = store_now();
	g_autoptr(GDateTime) t = store_now_datetime();
	g_autoptr(GDateTime) created = g_date_time_new_from_iso8601(it->created, NULL);
	g_autoptr(audit_event) ev = NULL;
	g_autoptr(GPtrArray) failed_now = g_ptr_array_new();	/* const char* */
	g_autoptr(GPtrArray) failed_why = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) late = g_string_new(NULL);
	g_autofree char *next_s = NULL;
	const char *state, *reply = NULL;
	gboolean expired;
	sqlite3_stmt *stmt;
	vulnid_status s;
	int pending, failed, delivered, rc;

	expired = created != NULL && g_date_time_difference(t, created) / G_TIME_SPAN_SECOND > cfg->lifetime;
	stmt = store_prepare_cached(st, "UPDATE outbox_recipients SET status = ?, reply = ?, updated = ?"
			     " WHERE outbox = ? AND address = ? AND status IN ('queued', 'deferred')", &s, err);
	if (stmt == NULL)
		goto fail;
	for (guint i = 0; i < it->results->len; i++) {
		rcpt_result *r = g_ptr_array_index(it->results, i);
		const char *rs = verdict_state(r->result, expired);

		if (r->result != SMTP_RESULT_DELIVERED && reply == NULL)
			reply = r->reply;
		sqlite3_reset(stmt);
		sqlite3_bind_text(stmt, 1, rs, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, r->reply, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(stmt, 3, now, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(stmt, 4, it->id);
		sqlite3_bind_text(stmt, 5, r->address, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(stmt);
		if (rc != SQLITE_DONE) {
			sqlite3_reset(stmt);
			s = store_fail(st, rc, "outbox", err);
			goto fail;
		}
		if (sqlite3_changes(store_db(st)) == 0) {
			/* settled meanwhile (a bounce came first) */
			g_string_append_printf(late, "%s%s", late->len ? ", " : "", r->address);
		} else if (strcmp(rs, "failed") == 0) {
			g_ptr_array_add(failed_now, r->address);
			g_ptr_array_add(failed_why, r->result == SMTP_RESULT_PERMANENT ? g_strdup(r->reply)
				: g_strdup_printf("gave up after %" G_GINT64_FORMAT " s: %s", cfg->lifetime, r->reply));
		}
	}
	sqlite3_reset(stmt);
	s = outbox_tally(st, it->id, &pending, &failed, &delivered, err);
	if (s != VULNID_OK)
		goto fail;
	if (pending > 0) {
		gint64 delay = OUTBOX_BACKOFF_FIRST;
		g_autoptr(GDateTime) next = NULL;

		if (it->signed_now != NULL) {
			s = outbox_keep_signed(st, cfg, it, now, err);
			if (s != VULNID_OK)
				goto fail;
		}

		for (gint64 i = 0; i < it->attempts && delay < OUTBOX_BACKOFF_MAX; i++)
			delay *= 2;
		delay = MIN(delay, OUTBOX_BACKOFF_MAX);
		next = g_date_time_add_seconds(t, (gdouble) delay);
		next_s = g_date_time_format(next, "%Y-%m-%dT%H:%M:%SZ");
		state = "deferred";
		res->deferred++;
	} else if (failed > 0) {
		state = "failed";
		res->failed++;
		if (expired && reply != NULL && failed_now->len > 0) {
			g_autofree char *why = g_strdup_printf("gave up after %" G_GINT64_FORMAT " s: %s",
							       cfg->lifetime, reply);

			reply = NULL;
			ev = audit_event_new("failed", it->entry, it->msgid);
			audit_event_str(ev, "reason", why);
		}
	} else {
		state = "delivered";
		res->delivered++;
	}
	/* The claim ends with the outcome (its token stays: this run does not
	 * claim the item again).  If it lapsed and another run holds the item
	 * now, only the state derived from the recipients changes. */
	stmt = store_prepare_cached(st, "UPDATE outbox SET status = ?1, updated = ?2,"
			     " last_error = CASE WHEN ?1 = 'delivered' THEN NULL ELSE coalesce(?3, last_error) END,"
			     " attempts = attempts + (claim IN (?6, ?7)), next_attempt = coalesce(?4, next_attempt),"
			     " claim_until = CASE WHEN claim IN (?6, ?7) THEN NULL ELSE claim_until END,"
			     " claim = CASE WHEN claim IN (?6, ?7) THEN ?6 ELSE claim END"
			     " WHERE id = ?5", &s, err);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, state, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, now, -1, SQLITE_TRANSIENT);
	if (reply != NULL && strcmp(state, "delivered") != 0)
		sqlite3_bind_text(stmt, 3, reply, -1, SQLITE_TRANSIENT);
	else if (ev != NULL)
		sqlite3_bind_text(stmt, 3, "lifetime exceeded", -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(stmt, 3);
	if (next_s != NULL)
		sqlite3_bind_text(stmt, 4, next_s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(stmt, 4);
	sqlite3_bind_int64(stmt, 5, it->id);
	sqlite3_bind_text(stmt, 6, run_token, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 7, outbox_claim_token(), -1, SQLITE_STATIC);
	s = store_step_reset(st, stmt, "outbox", err);
	if (s != VULNID_OK)
		goto fail;
	if (ev == NULL) {
		ev = audit_event_new(state, it->entry, it->msgid);
		if (reply != NULL && strcmp(state, "delivered") != 0)
			audit_event_str(ev, "reason", reply);
	}
	audit_event_int(ev, "outbox", it->id);
	audit_event_str(ev, "kind", it->kind);
	{
		g_autoptr(GString) to = g_string_new(NULL);

		for (guint i = 0; i < it->results->len; i++) {
			rcpt_result *r = g_ptr_array_index(it->results, i);

			g_string_append_printf(to, "%s%s", to->len ? ", " : "", r->address);
		}
		audit_event_str(ev, "to", to->str);
	}
	if (late->len > 0)
		audit_event_str(ev, "settled_before", late->str);
	if (next_s != NULL)
		audit_event_str(ev, "next_attempt", next_s);
	s = audit_append(st, ev, err);
	if (s == VULNID_OK && failed_now->len > 0 && o->on_failure != NULL) {
		outbox_failure f = { it->id, it->kind, it->entry, it->cause, failed_now, failed_why };

		s = o->on_failure(st, cfg, &f, err);
	}
fail:
	return s;
}

vulnid_status
outbox_get_data(store *st, gint64 id, GBytes **out, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, "SELECT data FROM outbox WHERE id = ?", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*out = g_bytes_new(sqlite3_column_blob(stmt, 0), (gsize) sqlite3_column_bytes(stmt, 0));
	sqlite3_reset(stmt);
	if (rc == SQLITE_DONE)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no outbox item %" G_GINT64_FORMAT, id);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

/* Due, and nobody holds it; never one this run claimed before (a run
 * tries each item once, --force or not). */
#define OUTBOX_DUE \
	" status IN ('queued', 'deferred') AND (?1 = 0 OR cause = ?1)" \
	" AND (?2 OR next_attempt <= ?3) AND (claim_until IS NULL OR claim_until <= ?3)" \
	" AND claim IS NOT ?4"

/* Claim the due items nobody holds, in one transaction; nothing to do (no
 * transaction, no sync) when there are none. */
/* Claims of runs that died (killed, crashed) before recording what they
 * sent: released at once instead of when they lapse.  This is the crash
 * window of vulnid-filter(8): what such a run sent and did not record is
 * sent again. */
static vulnid_status
dead_claims(store *st, const char *now, GPtrArray *dead, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, "SELECT DISTINCT claim FROM outbox"
		" WHERE status IN ('queued', 'deferred') AND claim NOT IN (?1, ?3) AND claim_until > ?2", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, outbox_claim_token(), -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, run_token, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		if (!claimer_alive((const char *) sqlite3_column_text(stmt, 0)))
			g_ptr_array_add(dead, store_col_text(stmt, 0));
	sqlite3_finalize(stmt);
	return rc == SQLITE_DONE ? VULNID_OK : store_fail(st, rc, "outbox", err);
}

static vulnid_status
release_dead(store *st, GPtrArray *dead, GError **err)
{
	for (guint i = 0; i < dead->len; i++) {
		g_autoptr(audit_event) ev = NULL;
		vulnid_status s;
		sqlite3_stmt *stmt = store_prepare(st, "UPDATE outbox SET claim_until = NULL"
						   " WHERE claim = ? AND claim_until IS NOT NULL", &s, err);
		int n;

		if (stmt == NULL)
			return s;
		sqlite3_bind_text(stmt, 1, g_ptr_array_index(dead, i), -1, SQLITE_TRANSIENT);
		s = store_step_done(st, stmt, "outbox", err);
		if (s != VULNID_OK)
			return s;
		n = sqlite3_changes(store_db(st));
		if (n == 0)
			continue;
		ev = audit_event_new("claim-released", NULL, NULL);
		audit_event_str(ev, "claim", g_ptr_array_index(dead, i));
		audit_event_int(ev, "items", n);
		audit_event_str(ev, "why", "the process that claimed them has ended");
		s = audit_append(st, ev, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

static vulnid_status
outbox_claim(store *st, const outbox_run_opts *o, const char *now, const char *until, GError **err)
{
	g_autoptr(GPtrArray) dead = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;
	sqlite3_stmt *stmt;
	gboolean any;
	int rc;

	s = dead_claims(st, now, dead, err);
	if (s != VULNID_OK)
		return s;
	stmt = store_prepare(st, "SELECT EXISTS (SELECT 1 FROM outbox WHERE" OUTBOX_DUE ")", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, o->cause);
	sqlite3_bind_int(stmt, 2, o->force);
	sqlite3_bind_text(stmt, 3, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 4, run_token, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	any = rc == SQLITE_ROW && sqlite3_column_int(stmt, 0) != 0;
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "outbox", err);
	if (!any && dead->len == 0)
		return VULNID_OK;
	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	s = release_dead(st, dead, err);
	if (s != VULNID_OK)
		goto fail;
	stmt = store_prepare(st, "UPDATE outbox SET claim = ?4, claim_until = ?5 WHERE id IN"
			     " (SELECT id FROM outbox WHERE" OUTBOX_DUE " ORDER BY id LIMIT ?6)", &s, err);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_int64(stmt, 1, o->cause);
	sqlite3_bind_int(stmt, 2, o->force);
	sqlite3_bind_text(stmt, 3, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 4, run_token, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 5, until, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(stmt, 6, OUTBOX_CLAIM_BATCH);
	s = store_step_done(st, stmt, "outbox", err);
	if (s != VULNID_OK)
		goto fail;
	return store_commit(st, err);
fail:
	store_rollback(st);
	return s;
}

/* Claim what is due, then load every pending item this process holds a
 * live claim on (also those the filter claimed when it queued them). */
static vulnid_status
outbox_load_claimed(store *st, const outbox_run_opts *o, guint claim_seconds, GPtrArray *items,
		    GError **err)
{
	g_autofree char *now = store_now();
	g_autofree char *until = time_after(claim_seconds);
	sqlite3_stmt *stmt, *rs;
	vulnid_status s;
	int rc;

	s = outbox_claim(st, o, now, until, err);
	if (s != VULNID_OK)
		return s;
	stmt = store_prepare(st,
		"SELECT id, created, message_id, entry, kind, envelope_from, attempts, coalesce(cause, 0),"
		" CAST(strftime('%s', claim_until) AS INTEGER) FROM outbox"
		" WHERE claim IN (?1, ?3) AND claim_until > ?2 AND status IN ('queued', 'deferred')"
		" ORDER BY id", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, outbox_claim_token(), -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, run_token, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		outbox_item *it = g_new0(outbox_item, 1);

		it->id = sqlite3_column_int64(stmt, 0);
		it->created = store_col_text(stmt, 1);
		it->msgid = store_col_text(stmt, 2);
		it->entry = store_col_text(stmt, 3);
		it->kind = store_col_text(stmt, 4);
		it->envelope_from = store_col_text(stmt, 5);
		it->attempts = sqlite3_column_int64(stmt, 6);
		it->cause = sqlite3_column_int64(stmt, 7);
		it->claim_until = sqlite3_column_int64(stmt, 8);
		it->pending = g_ptr_array_new_with_free_func(g_free);
		it->results = g_ptr_array_new_with_free_func(rcpt_result_free);
		g_ptr_array_add(items, it);
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "outbox", err);
	rs = store_prepare(st, "SELECT address FROM outbox_recipients WHERE outbox = ?"
			   " AND status IN ('queued', 'deferred') ORDER BY rowid", &s, err);
	if (rs == NULL)
		return s;
	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);

		sqlite3_reset(rs);
		sqlite3_bind_int64(rs, 1, it->id);
		while ((rc = sqlite3_step(rs)) == SQLITE_ROW)
			g_ptr_array_add(it->pending, store_col_text(rs, 0));
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(rs);
			return store_fail(st, rc, "outbox", err);
		}
	}
	sqlite3_finalize(rs);
	return VULNID_OK;
}

/* The SMTP AUTH password: first line of a file only its owner can read. */
static gboolean
read_password(const vulnid_config *cfg, char **out, char **why)
{
	g_autofree char *path = config_resolve_path(cfg, cfg->smtp_password_file);
	g_autoptr(GError) e = NULL;
	struct stat sb;
	char *text, *nl;

	if (stat(path, &sb) < 0) {
		*why = g_strdup_printf("cannot read smtp_password_file '%s': %s", path, g_strerror(errno));
		return FALSE;
	}
	if ((sb.st_mode & 077) != 0 || sb.st_uid != geteuid()) {
		*why = g_strdup_printf("smtp_password_file '%s' must be mode 0600 and owned by uid %d",
				       path, (int) geteuid());
		return FALSE;
	}
	if (!g_file_get_contents(path, &text, NULL, &e)) {
		*why = g_strdup_printf("cannot read smtp_password_file: %s", e->message);
		return FALSE;
	}
	nl = strpbrk(text, "\r\n");
	if (nl != NULL)
		*nl = '\0';
	*out = text;
	return TRUE;
}

/* Everything the robot sends is signed with its key, when it goes out
 * (not when queued: signing waits for gpg-agent, or for a gpg run with a
 * key of another kind, which must not happen while the database is
 * locked). */
static vulnid_status
outbox_sign(const vulnid_config *cfg, GBytes *data, GBytes **out, GError **err)
{
	g_autoptr(GMimeStream) in = NULL;
	g_autoptr(GMimeParser) parser = NULL;
	g_autoptr(GMimeMessage) msg = NULL;
	g_autoptr(GByteArray) bytes = NULL;
	g_autofree char *robot = NULL;
	GMimeObject *part, *signed_part = NULL;
	vulnid_status s;

	if (strcmp(cfg->sign, "none") == 0 || crypto_home() == NULL) {
		*out = g_bytes_ref(data);
		return VULNID_OK;
	}
	s = crypto_robot_fingerprint(&robot, err);
	if (s == VULNID_ERR_CONFIG) {
		/* an instance without a key of its own sends unsigned mail */
		g_clear_error(err);
		*out = g_bytes_ref(data);
		return VULNID_OK;
	}
	if (s != VULNID_OK)
		return s;	/* the key is there but cannot be used now: wait */
	in = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(data, NULL), g_bytes_get_size(data));
	parser = g_mime_parser_new_with_stream(in);
	msg = g_mime_parser_construct_message(parser, NULL);
	if (msg == NULL)
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "an outbox item does not parse");
	part = g_mime_message_get_mime_part(msg);
	if (GMIME_IS_MULTIPART_ENCRYPTED(part) || GMIME_IS_MULTIPART_SIGNED(part)) {
		*out = g_bytes_ref(data);	/* signed inside the encryption already */
		return VULNID_OK;
	}
	if (strcmp(cfg->sign, "inline") == 0 && GMIME_IS_TEXT_PART(part)) {
		g_autofree char *text = g_mime_text_part_get_text(GMIME_TEXT_PART(part));
		g_autofree char *signed_text = NULL;
		GMimeTextPart *tp;

		s = crypto_clearsign(text != NULL ? text : "", robot, &signed_text, err);
		if (s != VULNID_OK)
			return s;
		tp = g_mime_text_part_new_with_subtype("plain");
		g_mime_text_part_set_text(tp, signed_text);
		g_mime_part_set_content_encoding(GMIME_PART(tp),
			g_mime_part_get_best_content_encoding(GMIME_PART(tp), GMIME_ENCODING_CONSTRAINT_7BIT));
		signed_part = GMIME_OBJECT(tp);
	} else {
		g_autoptr(GError) e = NULL;

		signed_part = crypto_sign_mime(part, robot, &e);
		if (signed_part == NULL)
			return vulnid_fail(err, VULNID_ERR_TEMP, "cannot sign: %s",
					   e != NULL ? e->message : "unknown error");
	}
	g_mime_message_set_mime_part(msg, signed_part);
	g_object_unref(signed_part);
	bytes = outbox_serialize(msg);
	*out = g_bytes_new(bytes->data, bytes->len);
	return VULNID_OK;
}

/* The item as it goes out: signed once, then the same bytes for every
 * retry (outbox_signed), as long as [crypto] sign is what it was. */
static vulnid_status
outbox_get_signed(store *st, const vulnid_config *cfg, outbox_item *it, GBytes **out, GError **err)
{
	g_autoptr(GBytes) data = NULL;
	sqlite3_stmt *stmt;
	vulnid_status s;
	int rc;

	stmt = store_prepare_cached(st, "SELECT data FROM outbox_signed WHERE outbox = ? AND mode = ?", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, it->id);
	sqlite3_bind_text(stmt, 2, cfg->sign, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*out = g_bytes_new(sqlite3_column_blob(stmt, 0), (gsize) sqlite3_column_bytes(stmt, 0));
	sqlite3_reset(stmt);
	if (rc == SQLITE_ROW)
		return VULNID_OK;
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "outbox", err);
	s = outbox_get_data(st, it->id, &data, err);
	if (s == VULNID_OK)
		s = outbox_sign(cfg, data, out, err);
	if (s == VULNID_OK && *out != data && !g_bytes_equal(*out, data)) {
		if (it->signed_now != NULL)
			g_bytes_unref(it->signed_now);
		it->signed_now = g_bytes_ref(*out);
	}
	return s;
}

/* Keep what was signed in this run for the next attempt. */
static vulnid_status
outbox_keep_signed(store *st, const vulnid_config *cfg, outbox_item *it, const char *now, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st,
		"INSERT INTO outbox_signed (outbox, mode, created, data)"
		" SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM outbox_signed WHERE outbox = ?1)",
		&s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, it->id);
	sqlite3_bind_text(stmt, 2, cfg->sign, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_blob(stmt, 4, g_bytes_get_data(it->signed_now, NULL),
			  (int) g_bytes_get_size(it->signed_now), SQLITE_STATIC);
	return store_step_reset(st, stmt, "outbox", err);
}

/* Seconds the session may take: the run's deadline, and never past the
 * time needed to record the outcome before the first claim lapses. */
static gint64
session_seconds(const vulnid_config *cfg, const outbox_run_opts *o, GPtrArray *items)
{
	g_autoptr(GDateTime) t = store_now_datetime();
	gint64 now = g_date_time_to_unix(t);
	gint64 left = o->deadline > 0 ? o->deadline : OUTBOX_DEFAULT_DEADLINE;

	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);

		left = MIN(left, it->claim_until - now - cfg->busy_timeout / 1000 - OUTBOX_CLAIM_MARGIN);
	}
	return left;
}

static void
deliver_smtp(store *st, const vulnid_config *cfg, GPtrArray *items, const outbox_run_opts *o)
{
	g_autoptr(GPtrArray) msgs = g_ptr_array_new_with_free_func((GDestroyNotify) smtp_message_free);
	g_autofree char *password = NULL;
	g_autofree char *why = NULL;
	smtp_settings ss = { 0 };

	ss.host = cfg->smtp_host;
	ss.port = cfg->smtp_port;
	ss.starttls = strcmp(cfg->starttls, "required") == 0 ? SMTP_STARTTLS_REQUIRED
		    : strcmp(cfg->starttls, "no") == 0 ? SMTP_STARTTLS_NO : SMTP_STARTTLS_IF_AVAILABLE;
	/* remote (the default): a relay on this machine is trusted as the
	 * machine is; Debian's MTA comes with a self-signed certificate */
	ss.tls = cfg->tls_fingerprints != NULL ? SMTP_TLS_PIN
	       : strcmp(cfg->tls_verify, "no") == 0 ? SMTP_TLS_ENCRYPT
	       : strcmp(cfg->tls_verify, "remote") == 0 && smtp_host_is_loopback(cfg->smtp_host) ? SMTP_TLS_ENCRYPT
	       : SMTP_TLS_VERIFY;
	ss.ca_file = cfg->tls_ca_file;
	ss.fingerprints = cfg->tls_fingerprints;
	ss.client_dir = cfg->dir;
	ss.timeout = (int) cfg->smtp_timeout;
	ss.helo = cfg->helo;
	if (*cfg->smtp_user != '\0') {
		ss.user = cfg->smtp_user;
		if (*cfg->smtp_password_file == '\0')
			why = g_strdup("smtp_user is set but smtp_password_file is not");
		else if (read_password(cfg, &password, &why))
			ss.password = password;
	}
	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);
		g_autoptr(GBytes) data = NULL;
		g_autoptr(GError) e = NULL;
		smtp_message *m;

		if (why != NULL || outbox_get_signed(st, cfg, it, &data, &e) != VULNID_OK) {
			for (guint j = 0; j < it->pending->len; j++)
				item_result(it, g_ptr_array_index(it->pending, j), SMTP_RESULT_TEMPORARY,
					    why != NULL ? why : e->message);
			g_ptr_array_add(msgs, NULL);
			continue;
		}
		m = smtp_message_new(it->envelope_from, data);
		for (guint j = 0; j < it->pending->len; j++)
			smtp_message_add_rcpt(m, g_ptr_array_index(it->pending, j));
		g_ptr_array_add(msgs, m);
	}
	{
		g_autoptr(GPtrArray) send = g_ptr_array_new();

		for (guint i = 0; i < msgs->len; i++)
			if (g_ptr_array_index(msgs, i) != NULL)
				g_ptr_array_add(send, g_ptr_array_index(msgs, i));
		/* reckoned now, after the signing: the session must end in
		 * time to record its outcome before the claims lapse */
		gint64 left = session_seconds(cfg, o, items);

		if (left > 0)
			smtp_send(&ss, send, (guint) left, NULL);
		else
			for (guint i = 0; i < send->len; i++) {
				smtp_message *m = g_ptr_array_index(send, i);

				for (guint j = 0; j < m->rcpts->len; j++) {
					smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);

					g_free(r->reply);
					r->reply = g_strdup("not sent: its delivery claim ran out before the session could start");
				}
			}
	}
	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);
		smtp_message *m = g_ptr_array_index(msgs, i);

		for (guint j = 0; m != NULL && j < m->rcpts->len; j++) {
			smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);

			item_result(it, r->address, r->result, r->reply);
		}
	}
}

static void
deliver_maildir(store *st, const vulnid_config *cfg, GPtrArray *items)
{
	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);
		g_autoptr(GBytes) data = NULL;
		g_autoptr(GError) e = NULL;
		g_autofree char *name = maildir_name(it->id, it->created, it->msgid);
		vulnid_status ds = outbox_get_signed(st, cfg, it, &data, &e);

		if (ds == VULNID_OK)
			ds = maildir_deliver(cfg->maildir, name, g_bytes_get_data(data, NULL),
					     g_bytes_get_size(data), &e);
		for (guint j = 0; j < it->pending->len; j++)
			item_result(it, g_ptr_array_index(it->pending, j),
				    ds == VULNID_OK ? SMTP_RESULT_DELIVERED : SMTP_RESULT_TEMPORARY,
				    ds == VULNID_OK ? "delivered to the maildir" : e->message);
	}
}

/* Record the outcomes, up to 100 items per transaction: a commit is a
 * sync of the database, which costs more than sending the mail.  A busy
 * database is waited for again, as long as the claims last; what cannot
 * be recorded stays claimed until the claim lapses (or this process ends),
 * and is not sent again by this run. */
static vulnid_status
outbox_record_all(store *st, const vulnid_config *cfg, const outbox_run_opts *o, GPtrArray *items,
		  outbox_run_result *res, GError **err)
{
	vulnid_status s = VULNID_OK;
	guint i = 0, busy = 0;

	while (i < items->len) {
		guint end = MIN(items->len, i + OUTBOX_RECORD_BATCH);
		outbox_run_result r = *res;
		guint j;

		s = store_begin(st, err);
		for (j = i; s == VULNID_OK && j < end; j++)
			s = outbox_record(st, cfg, o, g_ptr_array_index(items, j), &r, err);
		if (s == VULNID_OK)
			s = store_commit(st, err);
		else
			store_rollback(st);
		if (s == VULNID_ERR_BUSY && ++busy < 10 &&
		    session_seconds(cfg, o, items) + OUTBOX_CLAIM_MARGIN > 5) {
			g_clear_error(err);
			continue;
		}
		if (s != VULNID_OK)
			break;
		*res = r;
		i = end;
	}
	return s;
}

/* One round: claim (up to OUTBOX_CLAIM_BATCH), deliver in one session,
 * record.  *n is how many items it tried. */
static vulnid_status
outbox_round(store *st, const vulnid_config *cfg, const outbox_run_opts *o, outbox_run_result *res,
	     guint *n, GError **err)
{
	g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(outbox_item_free);
	vulnid_status s;

	*n = 0;
	s = outbox_load_claimed(st, o, outbox_claim_seconds(cfg, o->deadline), items, err);
	if (s != VULNID_OK || items->len == 0)
		return s;
	*n = items->len;
	if (cfg->maildir != NULL)
		deliver_maildir(st, cfg, items);
	else
		deliver_smtp(st, cfg, items, o);
	return outbox_record_all(st, cfg, o, items, res, err);
}

vulnid_status
outbox_run(store *st, const vulnid_config *cfg, const outbox_run_opts *opts, outbox_run_result *res,
	   GError **err)
{
	gint64 start = g_get_monotonic_time();
	guint budget = opts->deadline > 0 ? opts->deadline : OUTBOX_DEFAULT_DEADLINE;
	guint total = 0, n;
	vulnid_status s;

	memset(res, 0, sizeof *res);
	g_free(run_token);
	run_token = new_claim_token();
	/* Round after round, so that concurrent runs share the work; what
	 * on_failure queues (the researcher's notice) is due at once and goes
	 * out in the next round. */
	do {
		outbox_run_opts o = *opts;
		gint64 spent = (g_get_monotonic_time() - start) / G_USEC_PER_SEC;

		if (spent >= budget)
			break;
		o.deadline = budget - (guint) spent;
		s = outbox_round(st, cfg, &o, res, &n, err);
		if (s != VULNID_OK)
			return s;
		total += n;
	} while (n > 0 && total < OUTBOX_RUN_MAX);
	return VULNID_OK;
}

vulnid_status
outbox_retry(store *st, gint64 id, GError **err)
{
	g_autofree char *now = store_now();
	g_autoptr(outbox_ref) ref = NULL;
	g_autoptr(audit_event) ev = NULL;
	sqlite3_stmt *stmt;
	vulnid_status s;

	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	stmt = store_prepare(st, "UPDATE outbox SET status = 'queued', next_attempt = ?1, updated = ?1"
			     " WHERE id = ?2 AND status <> 'delivered'", &s, err);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(stmt, 2, id);
	s = store_step_done(st, stmt, "outbox", err);
	if (s != VULNID_OK)
		goto fail;
	if (sqlite3_changes(store_db(st)) != 1) {
		s = vulnid_fail(err, VULNID_ERR_NOTFOUND,
				"no undelivered outbox item %" G_GINT64_FORMAT, id);
		goto fail;
	}
	stmt = store_prepare(st, "UPDATE outbox_recipients SET status = 'queued', updated = ?"
			     " WHERE outbox = ? AND status IN ('failed', 'deferred')", &s, err);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(stmt, 2, id);
	s = store_step_done(st, stmt, "outbox", err);
	if (s != VULNID_OK)
		goto fail;
	ev = audit_event_new("retry", NULL, NULL);
	audit_event_int(ev, "outbox", id);
	s = audit_append(st, ev, err);
	if (s != VULNID_OK)
		goto fail;
	return store_commit(st, err);
fail:
	store_rollback(st);
	return s;
}

void
outbox_ref_free(outbox_ref *r)
{
	if (r == NULL)
		return;
	g_free(r->kind);
	g_free(r->entry);
	g_free(r->message_id);
	g_free(r);
}

static vulnid_status
outbox_find(store *st, const char *column, const char *value, outbox_ref **out, GError **err)
{
	g_autofree char *sql = g_strdup_printf("SELECT id, kind, entry, message_id, coalesce(cause, 0)"
					       " FROM outbox WHERE %s = ? COLLATE NOCASE", column);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, sql, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, value, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		outbox_ref *r = g_new0(outbox_ref, 1);

		r->id = sqlite3_column_int64(stmt, 0);
		r->kind = store_col_text(stmt, 1);
		r->entry = store_col_text(stmt, 2);
		r->message_id = store_col_text(stmt, 3);
		r->cause = sqlite3_column_int64(stmt, 4);
		*out = r;
	}
	sqlite3_finalize(stmt);
	if (rc == SQLITE_DONE)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no outbox item for '%s'", value);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

vulnid_status
outbox_find_by_envelope(store *st, const char *address, outbox_ref **out, GError **err)
{
	return outbox_find(st, "envelope_from", address, out, err);
}

vulnid_status
outbox_find_by_message_id(store *st, const char *msgid, outbox_ref **out, GError **err)
{
	return outbox_find(st, "message_id", msgid, out, err);
}

/* The item's own address for what a DSN names: its Original-Recipient,
 * else its Final-Recipient, else (one-recipient items) the only one. */
static vulnid_status
bounced_address(store *st, gint64 id, const char *original, const char *final, char **out,
		GError **err)
{
	const char *cands[] = { original, final };
	vulnid_status s;
	sqlite3_stmt *stmt;
	int rc;

	stmt = store_prepare(st, "SELECT address FROM outbox_recipients WHERE outbox = ?1"
			     " AND (address = ?2 COLLATE NOCASE OR"
			     " (?2 IS NULL AND (SELECT count(*) FROM outbox_recipients WHERE outbox = ?1) = 1))"
			     " ORDER BY rowid LIMIT 1", &s, err);
	if (stmt == NULL)
		return s;
	for (gsize i = 0; i <= G_N_ELEMENTS(cands) && *out == NULL; i++) {
		if (i < G_N_ELEMENTS(cands) && (cands[i] == NULL || *cands[i] == '\0'))
			continue;
		sqlite3_reset(stmt);
		sqlite3_bind_int64(stmt, 1, id);
		if (i < G_N_ELEMENTS(cands))
			sqlite3_bind_text(stmt, 2, cands[i], -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(stmt, 2);
		rc = sqlite3_step(stmt);
		if (rc == SQLITE_ROW)
			*out = store_col_text(stmt, 0);
		else if (rc != SQLITE_DONE) {
			sqlite3_finalize(stmt);
			return store_fail(st, rc, "outbox", err);
		}
	}
	sqlite3_finalize(stmt);
	return VULNID_OK;
}

vulnid_status
outbox_mark_bounced(store *st, gint64 id, const char *original, const char *final, const char *reason,
		    char **failed, GError **err)
{
	g_autofree char *now = store_now();
	g_autofree char *address = NULL;
	sqlite3_stmt *stmt;
	vulnid_status s;
	int pending, nfailed, delivered;

	*failed = NULL;
	s = bounced_address(st, id, original, final, &address, err);
	if (s != VULNID_OK || address == NULL)
		return s;
	/* Forward only: a recipient already failed stays as it was (a second
	 * DSN for it is recorded, but fails nothing and tells nobody again). */
	stmt = store_prepare(st, "UPDATE outbox_recipients SET status = 'failed', reply = ?1, updated = ?2"
			     " WHERE outbox = ?3 AND address = ?4 AND status <> 'failed'", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(stmt, 3, id);
	sqlite3_bind_text(stmt, 4, address, -1, SQLITE_TRANSIENT);
	s = store_step_done(st, stmt, "outbox", err);
	if (s != VULNID_OK || sqlite3_changes(store_db(st)) == 0)
		return s;
	*failed = g_steal_pointer(&address);
	s = outbox_tally(st, id, &pending, &nfailed, &delivered, err);
	if (s != VULNID_OK || pending > 0)
		return s;
	stmt = store_prepare(st, "UPDATE outbox SET status = 'failed', last_error = ?, updated = ?"
			     " WHERE id = ?", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(stmt, 3, id);
	return store_step_done(st, stmt, "outbox", err);
}
