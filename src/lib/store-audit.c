/* store-audit.c - the `audit` table (see store-audit.h) */
#include "autoconfig.h"

#include <sqlite3.h>

#include "store-db.h"
#include "store-audit.h"

static const char SQL_AUDIT_HEAD[] =
	"SELECT hash FROM audit WHERE seq = (SELECT max(seq) FROM audit)";
static const char SQL_AUDIT_INSERT[] =
	"INSERT INTO audit (line, hash) VALUES (?, ?)";
static const char SQL_AUDIT_SEQ_OF_HASH[] =
	"SELECT seq FROM audit WHERE hash = ?";
static const char SQL_AUDIT_LINES_AFTER[] =
	"SELECT line FROM audit WHERE seq > ? ORDER BY seq";
static const char SQL_AUDIT_SUMMARY[] =
	"SELECT count(*), (SELECT hash FROM audit ORDER BY seq DESC LIMIT 1) FROM audit";
static const char SQL_AUDIT_ALL[] =
	"SELECT seq, line, hash FROM audit ORDER BY seq";
static const char SQL_AUDIT_HAS_FPR_EVENT[] =
	"SELECT 1 FROM audit WHERE json_valid(line)"
	" AND json_extract(line, '$.event') = ?1"
	" AND json_extract(line, '$.fingerprint') = ?2 LIMIT 1";

vulnid_status
store_audit_head(store *st, char **hash, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt;
	int rc;

	*hash = NULL;
	if (store_audit_head_cached(st) != NULL) {
		*hash = g_strdup(store_audit_head_cached(st));
		return VULNID_OK;
	}
	stmt = store_prepare_cached(st, SQL_AUDIT_HEAD, &s, err);
	if (stmt == NULL)
		return s;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*hash = store_col_text(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "audit", err);
	return VULNID_OK;
}

vulnid_status
store_audit_insert(store *st, const char *line, gsize len, const char *hash, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_AUDIT_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, line, (int) len, SQLITE_TRANSIENT);
	store_bind_text(stmt, 2, hash);
	s = store_step_reset(st, stmt, "audit", err);
	store_audit_head_remember(st, s == VULNID_OK ? hash : NULL);
	return s;
}

vulnid_status
store_audit_seq_of_hash(store *st, const char *hash, gint64 *seq, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_AUDIT_SEQ_OF_HASH, &s, err);
	int rc;

	*seq = -1;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, hash);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*seq = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "audit", err);
	return VULNID_OK;
}

vulnid_status
store_audit_lines_after(store *st, gint64 after, GString *out, guint64 *count, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_AUDIT_LINES_AFTER, &s, err);
	guint64 n = 0;
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, after);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		g_string_append_len(out, (const char *) sqlite3_column_text(stmt, 0),
				    sqlite3_column_bytes(stmt, 0));
		g_string_append_c(out, '\n');
		n++;
	}
	sqlite3_reset(stmt);
	if (count != NULL)
		*count = n;
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "audit", err);
	return VULNID_OK;
}

vulnid_status
store_audit_summary(store *st, guint64 *count, char **head, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_AUDIT_SUMMARY, &s, err);
	int rc;

	*count = 0;
	*head = NULL;
	if (stmt == NULL)
		return s;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*count = (guint64) sqlite3_column_int64(stmt, 0);
		*head = store_col_text(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "audit", err);
	return VULNID_OK;
}

vulnid_status
store_audit_foreach(store *st, store_audit_line_fn fn, gpointer data, gint64 *stopped_at, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_AUDIT_ALL, &s, err);
	int rc;

	*stopped_at = 0;
	if (stmt == NULL)
		return s;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		gint64 seq = sqlite3_column_int64(stmt, 0);
		const char *line = (const char *) sqlite3_column_text(stmt, 1);
		gsize len = (gsize) sqlite3_column_bytes(stmt, 1);
		const char *hash = (const char *) sqlite3_column_text(stmt, 2);

		if (!fn(seq, line, len, hash, data)) {
			*stopped_at = seq;
			sqlite3_reset(stmt);
			return VULNID_OK;
		}
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "audit", err);
	return VULNID_OK;
}

vulnid_status
store_audit_has_fingerprint_event(store *st, const char *event, const char *fpr,
				  gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_AUDIT_HAS_FPR_EVENT, &s, err);
	int rc;

	*found = FALSE;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, event);
	store_bind_text(stmt, 2, fpr);
	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	if (rc == SQLITE_ROW)
		*found = TRUE;
	else if (rc != SQLITE_DONE)
		return store_fail(st, rc, "audit", err);
	return VULNID_OK;
}
