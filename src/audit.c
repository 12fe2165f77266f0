/* audit.c - append-only, hash-chained audit log */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "canonjson.h"

struct audit_event {
	GString *head;		/* {"ts":..,"event":..,"id":..,"message_id":.. */
	GString *rest;		/* ,"key":value ... */
};

#define HASH_KEY ",\"hash\":\""

audit_event *
audit_event_new(const char *event, const char *id, const char *message_id)
{
	audit_event *ev = g_new0(audit_event, 1);
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autofree char *ts = g_date_time_format(now, "%Y-%m-%dT%H:%M:%S");
	g_autofree char *tsz = g_strdup_printf("%s.%03dZ", ts,
					       g_date_time_get_microsecond(now) / 1000);
	gboolean first = TRUE;

	ev->head = g_string_new("{");
	ev->rest = g_string_new(NULL);
	canonjson_member_str(ev->head, &first, "ts", tsz);
	canonjson_member_str(ev->head, &first, "event", event);
	canonjson_member_str(ev->head, &first, "id", id);
	canonjson_member_str(ev->head, &first, "message_id", message_id);
	return ev;
}

void
audit_event_str(audit_event *ev, const char *key, const char *value)
{
	gboolean first = FALSE;
	g_autofree char *masked = NULL;

	/* Values from mail may carry anything; the log stays one line per
	 * event and free of terminal controls (canonjson escapes C0). */
	if (value != NULL && strlen(value) > 1000)
		value = masked = g_strndup(value, 1000);
	canonjson_member_str(ev->rest, &first, key, value);
}

void
audit_event_int(audit_event *ev, const char *key, gint64 value)
{
	gboolean first = FALSE;

	canonjson_member_int(ev->rest, &first, key, value);
}

void
audit_event_free(audit_event *ev)
{
	if (ev == NULL)
		return;
	g_string_free(ev->head, TRUE);
	g_string_free(ev->rest, TRUE);
	g_free(ev);
}

char *
audit_line_hash(const char *line, gsize len)
{
	const char *h = g_strrstr_len(line, (gssize) len, HASH_KEY);

	if (h == NULL)
		return NULL;
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) line,
					   (gsize) (h - line));
}

vulnid_status
audit_append(store *st, audit_event *ev, GError **err)
{
	g_autoptr(GString) line = g_string_new(NULL);
	g_autofree char *prev = NULL;
	g_autofree char *hash = NULL;
	sqlite3_stmt *stmt;
	vulnid_status s;
	gboolean first = FALSE;
	int rc;

	stmt = store_prepare(st, "SELECT hash FROM audit ORDER BY seq DESC LIMIT 1", &s, err);
	if (stmt == NULL)
		return s;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		prev = g_strdup((const char *) sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "audit", err);
	if (prev == NULL)
		prev = g_strdup(AUDIT_GENESIS);

	g_string_append_len(line, ev->head->str, (gssize) ev->head->len);
	g_string_append_len(line, ev->rest->str, (gssize) ev->rest->len);
	canonjson_member_str(line, &first, "prev", prev);
	hash = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) line->str, line->len);
	canonjson_member_str(line, &first, "hash", hash);
	g_string_append_c(line, '}');

	stmt = store_prepare(st, "INSERT INTO audit (line, hash) VALUES (?, ?)", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, line->str, (int) line->len, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, hash, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "audit", err);
	return VULNID_OK;
}

vulnid_status
audit_append_now(store *st, audit_event *ev, GError **err)
{
	vulnid_status s = store_begin(st, err);

	if (s != VULNID_OK)
		return s;
	s = audit_append(st, ev, err);
	if (s != VULNID_OK) {
		store_rollback(st);
		return s;
	}
	return store_commit(st, err);
}

/* The hash of the last line of the file ("" for an empty file).  Called
 * with the file locked: a partial last line can only be the torn write of
 * a flush that was killed, and every line is in the database, so it is cut
 * off here and written again whole. */
static vulnid_status
audit_file_last_hash(int fd, const char *path, char **out, GError **err)
{
	struct stat sb;
	char buf[8192];
	off_t end, start;
	ssize_t n;
	char *nl, *h;

	if (fstat(fd, &sb) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno),
				   "cannot stat '%s': %s", path, g_strerror(errno));
	end = sb.st_size;
	for (;;) {
		if (end == 0) {
			if (sb.st_size != 0 && ftruncate(fd, 0) < 0)
				return vulnid_fail(err, VULNID_ERR_IO, "cannot truncate '%s': %s",
						   path, g_strerror(errno));
			*out = g_strdup("");
			return VULNID_OK;
		}
		start = end > (off_t) sizeof buf ? end - (off_t) sizeof buf : 0;
		n = pread(fd, buf, (size_t) (end - start), start);
		if (n != end - start)
			return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s'", path);
		if (buf[n - 1] == '\n')
			break;
		nl = memrchr(buf, '\n', (size_t) n);
		if (nl == NULL && start > 0)
			return vulnid_fail(err, VULNID_ERR_CORRUPT,
					   "'%s' ends in an overlong partial line", path);
		end = nl != NULL ? start + (nl - buf) + 1 : 0;
		if (end > 0 && ftruncate(fd, end) < 0)
			return vulnid_fail(err, VULNID_ERR_IO, "cannot truncate '%s': %s",
					   path, g_strerror(errno));
	}
	buf[n - 1] = '\0';
	nl = strrchr(buf, '\n');
	h = strstr(nl != NULL ? nl : buf, HASH_KEY);
	if (h == NULL || strlen(h) < strlen(HASH_KEY) + 64 + 2)
		return vulnid_fail(err, VULNID_ERR_CORRUPT,
				   "the last line of '%s' carries no hash", path);
	*out = g_strndup(h + strlen(HASH_KEY), 64);
	return VULNID_OK;
}

vulnid_status
audit_flush(store *st, const char *path, GError **err)
{
	g_autofree char *last = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	sqlite3_stmt *stmt;
	vulnid_status s;
	gint64 after = 0;
	int fd, rc;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno),
				   "cannot open '%s': %s", path, g_strerror(errno));
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			s = vulnid_fail(err, VULNID_ERR_IO, "cannot lock '%s': %s",
					path, g_strerror(errno));
			goto out;
		}
	{
		/* Read (and repair) through a second descriptor without O_APPEND. */
		int rfd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

		if (rfd < 0) {
			s = vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s': %s",
					path, g_strerror(errno));
			goto out;
		}
		s = audit_file_last_hash(rfd, path, &last, err);
		close(rfd);
		if (s != VULNID_OK)
			goto out;
	}
	if (*last != '\0') {
		stmt = store_prepare(st, "SELECT seq FROM audit WHERE hash = ?", &s, err);
		if (stmt == NULL)
			goto out;
		sqlite3_bind_text(stmt, 1, last, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(stmt);
		after = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
		sqlite3_finalize(stmt);
		if (rc != SQLITE_ROW) {
			s = rc == SQLITE_DONE
				? vulnid_fail(err, VULNID_ERR_CORRUPT,
					      "the last line of '%s' is not in the database chain", path)
				: store_fail(st, rc, "audit", err);
			goto out;
		}
	}
	stmt = store_prepare(st, "SELECT line FROM audit WHERE seq > ? ORDER BY seq", &s, err);
	if (stmt == NULL)
		goto out;
	sqlite3_bind_int64(stmt, 1, after);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		g_string_append_len(out, (const char *) sqlite3_column_text(stmt, 0),
				    sqlite3_column_bytes(stmt, 0));
		g_string_append_c(out, '\n');
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE) {
		s = store_fail(st, rc, "audit", err);
		goto out;
	}
	for (gsize off = 0; off < out->len;) {
		ssize_t n = write(fd, out->str + off, out->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s = vulnid_fail(err, vulnid_status_from_errno(errno),
					"cannot write '%s': %s", path, g_strerror(errno));
			/* A torn line is cut off by the next flush. */
			goto out;
		}
		off += (gsize) n;
	}
	if (out->len > 0 && fdatasync(fd) < 0 && errno != EINVAL) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno),
				"cannot sync '%s': %s", path, g_strerror(errno));
		goto out;
	}
	s = VULNID_OK;
out:
	close(fd);		/* releases the lock */
	return s;
}

vulnid_status
audit_verify(store *st, const char *path, guint64 *lines, guint64 *bad_line, GError **err)
{
	g_autoptr(GError) e = NULL;
	g_autoptr(GMappedFile) mf = NULL;
	g_autofree char *prev = g_strdup(AUDIT_GENESIS);
	const char *p, *end;
	sqlite3_stmt *stmt;
	vulnid_status s;
	guint64 n = 0, db_count = 0;
	g_autofree char *db_head = NULL;
	int rc;

	*bad_line = 0;
	*lines = 0;
	mf = g_mapped_file_new(path, FALSE, &e);
	if (mf == NULL)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s': %s", path, e->message);
	p = g_mapped_file_get_contents(mf);
	end = p + g_mapped_file_get_length(mf);
	while (p != NULL && p < end) {
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		g_autofree char *want = NULL;
		const char *h, *pv;
		gsize len;

		n++;
		if (nl == NULL) {
			*bad_line = n;
			return vulnid_fail(err, VULNID_ERR_CORRUPT,
					   "line %" G_GUINT64_FORMAT ": truncated (no newline)", n);
		}
		len = (gsize) (nl - p);
		h = g_strrstr_len(p, (gssize) len, HASH_KEY);
		want = audit_line_hash(p, len);
		if (h == NULL || want == NULL || (gsize) (nl - h) != strlen(HASH_KEY) + 64 + 2 ||
		    memcmp(h + strlen(HASH_KEY), want, 64) != 0 || memcmp(nl - 2, "\"}", 2) != 0) {
			*bad_line = n;
			return vulnid_fail(err, VULNID_ERR_CORRUPT,
					   "line %" G_GUINT64_FORMAT ": hash does not match its content", n);
		}
		pv = g_strrstr_len(p, (gssize) (h - p), ",\"prev\":\"");
		if (pv == NULL || h - pv != 9 + 64 + 1 || memcmp(pv + 9, prev, 64) != 0) {
			*bad_line = n;
			return vulnid_fail(err, VULNID_ERR_CORRUPT,
					   "line %" G_GUINT64_FORMAT ": does not follow line %" G_GUINT64_FORMAT
					   " (prev hash differs)", n, n - 1);
		}
		g_free(prev);
		prev = g_strndup(want, 64);
		p = nl + 1;
	}
	*lines = n;

	stmt = store_prepare(st, "SELECT count(*), (SELECT hash FROM audit ORDER BY seq DESC LIMIT 1) FROM audit",
			     &s, err);
	if (stmt == NULL)
		return s;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		db_count = (guint64) sqlite3_column_int64(stmt, 0);
		if (sqlite3_column_type(stmt, 1) != SQLITE_NULL)
			db_head = g_strdup((const char *) sqlite3_column_text(stmt, 1));
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "audit", err);
	if (db_count != n)
		return vulnid_fail(err, VULNID_ERR_CORRUPT,
				   "'%s' has %" G_GUINT64_FORMAT " lines, the database chain %" G_GUINT64_FORMAT,
				   path, n, db_count);
	if (n > 0 && (db_head == NULL || strcmp(db_head, prev) != 0)) {
		*bad_line = n;
		return vulnid_fail(err, VULNID_ERR_CORRUPT,
				   "line %" G_GUINT64_FORMAT ": the database chain ends in another hash", n);
	}
	return VULNID_OK;
}
