/* outbox.c - compose, queue and deliver the robot's mail */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gmime/gmime.h>

#include "audit.h"
#include "message.h"
#include "canonjson.h"
#include "outbox.h"
#include "text.h"

/* Retry schedule for a failed delivery: 1 min doubling, capped at 4 h. */
#define OUTBOX_BACKOFF_FIRST 60
#define OUTBOX_BACKOFF_MAX (4 * 3600)

static char *
outbox_new_message_id(const vulnid_config *cfg, const char *kind)
{
	g_autofree char *uuid = g_uuid_string_random();

	return g_strdup_printf("vulnid.%s.%s@%s", kind, uuid, cfg->domain);
}

static GMimeMessage *
outbox_build(const vulnid_config *cfg, const outbox_mail *mail, const char *msgid)
{
	GMimeMessage *msg = g_mime_message_new(TRUE);
	GMimeObject *o = GMIME_OBJECT(msg);
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autofree char *subject = text_clean_line(mail->subject, 900);
	g_autofree char *to_name = mail->to_name != NULL ? text_clean_line(mail->to_name, 200) : NULL;
	g_autofree char *to_addr = text_clean_line(mail->to_addr, 320);
	g_autoptr(GString) refs = g_string_new(NULL);
	GMimeTextPart *part;

	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_FROM, "vulnid", cfg->request_address);
	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_TO, to_name, to_addr);
	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_REPLY_TO, NULL,
				   mail->reply_to != NULL ? mail->reply_to : cfg->request_address);
	g_mime_message_set_subject(msg, subject, "utf-8");
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
	g_mime_object_set_header(o, "Auto-Submitted", "auto-replied", NULL);
	g_mime_object_set_header(o, "X-Loop", cfg->request_address, NULL);
	g_mime_object_set_header(o, "Precedence", "bulk", NULL);

	part = g_mime_text_part_new_with_subtype("plain");
	g_mime_text_part_set_text(part, mail->body);	/* sets charset=utf-8 */
	g_mime_part_set_content_encoding(GMIME_PART(part),
		g_mime_part_get_best_content_encoding(GMIME_PART(part), GMIME_ENCODING_CONSTRAINT_7BIT));
	g_mime_message_set_mime_part(msg, GMIME_OBJECT(part));
	g_object_unref(part);
	return msg;
}

static GByteArray *
outbox_serialize(GMimeMessage *msg)
{
	g_autoptr(GMimeFormatOptions) fo = g_mime_format_options_new();
	GMimeStream *mem = g_mime_stream_mem_new();
	GByteArray *out = g_byte_array_new();

	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_DOS);
	g_mime_object_write_to_stream(GMIME_OBJECT(msg), fo, mem);
	g_byte_array_append(out, g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem))->data,
			    g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem))->len);
	g_object_unref(mem);
	return out;
}

vulnid_status
outbox_queue(store *st, const vulnid_config *cfg, gint64 cause, const outbox_mail *mail,
	     gint64 *id_out, GError **err)
{
	g_autofree char *msgid = outbox_new_message_id(cfg, mail->kind);
	g_autofree char *now = store_now();
	g_autoptr(GMimeMessage) msg = outbox_build(cfg, mail, msgid);
	g_autoptr(GByteArray) data = outbox_serialize(msg);
	g_autoptr(GString) rcpts = g_string_new("[");
	g_autofree char *to = text_clean_line(mail->to_addr, 320);
	sqlite3_stmt *stmt;
	vulnid_status s;
	gint64 id;
	int rc;

	canonjson_string(rcpts, to);
	g_string_append_c(rcpts, ']');
	stmt = store_prepare(st,
		"INSERT INTO outbox (created, kind, entry, cause, message_id, envelope_from,"
		" recipients, data, next_attempt, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
	sqlite3_bind_text(stmt, 6, cfg->bounce_address, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 7, rcpts->str, -1, SQLITE_TRANSIENT);
	sqlite3_bind_blob(stmt, 8, data->data, (int) data->len, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 9, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 10, now, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "outbox", err);
	id = sqlite3_last_insert_rowid(store_db(st));
	{
		g_autoptr(audit_event) ev = audit_event_new("queued", mail->entry, msgid);

		audit_event_int(ev, "outbox", id);
		audit_event_str(ev, "kind", mail->kind);
		audit_event_str(ev, "to", to);
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
	char *recipients;
	gint64 attempts;
} outbox_item;

static void
outbox_item_free(gpointer p)
{
	outbox_item *it = p;

	g_free(it->created);
	g_free(it->msgid);
	g_free(it->entry);
	g_free(it->recipients);
	g_free(it);
}

static vulnid_status
outbox_record_result(store *st, const outbox_item *it, vulnid_status delivery,
		     const char *error, GError **err)
{
	g_autofree char *now = store_now();
	g_autoptr(audit_event) ev = NULL;
	sqlite3_stmt *stmt;
	vulnid_status s;
	int rc;

	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	if (delivery == VULNID_OK) {
		stmt = store_prepare(st, "UPDATE outbox SET status = 'delivered', attempts = attempts + 1,"
				     " updated = ?, last_error = NULL WHERE id = ? AND status <> 'delivered'",
				     &s, err);
		ev = audit_event_new("delivered", it->entry, it->msgid);
	} else {
		g_autoptr(GDateTime) t = store_now_datetime();
		gint64 delay = OUTBOX_BACKOFF_FIRST;
		g_autoptr(GDateTime) next = NULL;
		g_autofree char *next_s = NULL;

		for (gint64 i = 0; i < it->attempts && delay < OUTBOX_BACKOFF_MAX; i++)
			delay *= 2;
		delay = MIN(delay, OUTBOX_BACKOFF_MAX);
		next = g_date_time_add_seconds(t, (gdouble) delay);
		next_s = g_date_time_format(next, "%Y-%m-%dT%H:%M:%SZ");
		stmt = store_prepare(st, "UPDATE outbox SET status = 'deferred', attempts = attempts + 1,"
				     " updated = ?1, last_error = ?3, next_attempt = ?4"
				     " WHERE id = ?2 AND status <> 'delivered'", &s, err);
		if (stmt != NULL) {
			sqlite3_bind_text(stmt, 3, error, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(stmt, 4, next_s, -1, SQLITE_TRANSIENT);
		}
		ev = audit_event_new("deferred", it->entry, it->msgid);
		audit_event_str(ev, "reason", error);
		audit_event_str(ev, "next_attempt", next_s);
	}
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(stmt, 2, it->id);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE) {
		s = store_fail(st, rc, "outbox", err);
		goto fail;
	}
	if (sqlite3_changes(store_db(st)) == 1) {
		audit_event_int(ev, "outbox", it->id);
		audit_event_str(ev, "to", it->recipients);
		s = audit_append(st, ev, err);
		if (s != VULNID_OK)
			goto fail;
	}
	return store_commit(st, err);
fail:
	store_rollback(st);
	return s;
}

vulnid_status
outbox_get_data(store *st, gint64 id, GBytes **out, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, "SELECT data FROM outbox WHERE id = ?", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*out = g_bytes_new(sqlite3_column_blob(stmt, 0), (gsize) sqlite3_column_bytes(stmt, 0));
	sqlite3_finalize(stmt);
	if (rc == SQLITE_DONE)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no outbox item %" G_GINT64_FORMAT, id);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

vulnid_status
outbox_run(store *st, const vulnid_config *cfg, gint64 cause, gboolean force,
	   outbox_run_result *res, GError **err)
{
	g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(outbox_item_free);
	g_autofree char *now = store_now();
	g_autofree char *root = config_resolve_path(cfg, cfg->transport + strlen("maildir:"));
	sqlite3_stmt *stmt;
	vulnid_status s;
	int rc;

	memset(res, 0, sizeof *res);
	stmt = store_prepare(st,
		"SELECT id, created, message_id, entry, recipients, attempts FROM outbox"
		" WHERE status IN ('queued', 'deferred') AND (?1 = 0 OR cause = ?1)"
		" AND (?2 OR next_attempt <= ?3) ORDER BY id", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, cause);
	sqlite3_bind_int(stmt, 2, force);
	sqlite3_bind_text(stmt, 3, now, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		outbox_item *it = g_new0(outbox_item, 1);

		it->id = sqlite3_column_int64(stmt, 0);
		it->created = g_strdup((const char *) sqlite3_column_text(stmt, 1));
		it->msgid = g_strdup((const char *) sqlite3_column_text(stmt, 2));
		it->entry = g_strdup((const char *) sqlite3_column_text(stmt, 3));
		it->recipients = g_strdup((const char *) sqlite3_column_text(stmt, 4));
		it->attempts = sqlite3_column_int64(stmt, 5);
		g_ptr_array_add(items, it);
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "outbox", err);

	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);
		g_autoptr(GBytes) data = NULL;
		g_autoptr(GError) de = NULL;
		g_autofree char *name = maildir_name(it->id, it->created, it->msgid);
		vulnid_status ds;

		s = outbox_get_data(st, it->id, &data, err);
		if (s != VULNID_OK)
			return s;
		ds = maildir_deliver(root, name, g_bytes_get_data(data, NULL), g_bytes_get_size(data), &de);
		s = outbox_record_result(st, it, ds, de != NULL ? de->message : NULL, err);
		if (s != VULNID_OK)
			return s;
		if (ds == VULNID_OK)
			res->delivered++;
		else
			res->deferred++;
	}
	return VULNID_OK;
}
