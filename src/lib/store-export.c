/* store-export.c - the database side of exports: the feed's reads, the
 * online backup copy (see store-export.h) */
#include "autoconfig.h"

#include <sqlite3.h>

#include "store-db.h"
#include "store-export.h"

static const char SQL_BACKUP_JOURNAL[] = "PRAGMA journal_mode = DELETE";
static const char SQL_BACKUP_CHECK[] = "PRAGMA quick_check";
static const char SQL_EXPORT_READ_BEGIN[] = "BEGIN";
static const char SQL_EXPORT_YEARS[] = "SELECT DISTINCT year FROM entries ORDER BY year";
static const char SQL_EXPORT_LAST_RECORD[] = "SELECT coalesce(max(id), 0) FROM records";
static const char SQL_EXPORT_RECORD_SHA256[] =
	"SELECT sha256 FROM records WHERE entry = ? AND seq = ?";
static const char SQL_EXPORT_YEAR_ENTRIES[] =
	"SELECT DISTINCT r.entry FROM records r JOIN entries e ON e.id = r.entry"
	" WHERE e.year = ? AND r.id >= ? ORDER BY r.entry";

/* Copy every page in one step: one read snapshot, which in WAL mode never
 * blocks the filters' writes; retried only while the source is busy (a
 * checkpoint or a recovery in progress). */
static vulnid_status
backup_pages(store *st, sqlite3 *dst, gint64 busy_timeout_ms, GError **err)
{
	sqlite3_backup *b = sqlite3_backup_init(dst, "main", store_db(st), "main");
	gint64 waited = 0;
	int rc;

	if (b == NULL)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot start the backup: %s", sqlite3_errmsg(dst));
	for (;;) {
		rc = sqlite3_backup_step(b, -1);
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		if (waited >= busy_timeout_ms)
			break;
		sqlite3_sleep(50);
		waited += 50;
	}
	sqlite3_backup_finish(b);
	if (rc == SQLITE_DONE)
		return VULNID_OK;
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return vulnid_fail(err, VULNID_ERR_BUSY, "backup: the database stayed busy");
	return vulnid_fail(err, rc == SQLITE_FULL ? VULNID_ERR_NOSPACE : VULNID_ERR_IO,
			   "backup: %s", sqlite3_errstr(rc));
}

/* One self-contained file, and checked before it replaces anything. */
static int
backup_check(sqlite3 *dst)
{
	int rc = sqlite3_exec(dst, SQL_BACKUP_JOURNAL, NULL, NULL, NULL);

	if (rc == SQLITE_OK) {
		sqlite3_stmt *q = NULL;

		rc = sqlite3_prepare_v2(dst, SQL_BACKUP_CHECK, -1, &q, NULL);
		if (rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
		    g_strcmp0((const char *) sqlite3_column_text(q, 0), "ok") != 0)
			rc = SQLITE_CORRUPT;
		sqlite3_finalize(q);
	}
	return rc;
}

vulnid_status
store_export_backup_copy(store *st, const char *tmp, gint64 busy_timeout_ms, GError **err)
{
	sqlite3 *dst = NULL;
	vulnid_status s = VULNID_OK;
	int rc = sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE, NULL);

	if (rc != SQLITE_OK) {
		s = vulnid_fail(err, VULNID_ERR_IO, "cannot open '%s': %s", tmp,
				dst != NULL ? sqlite3_errmsg(dst) : sqlite3_errstr(rc));
		goto out;
	}
	s = backup_pages(st, dst, busy_timeout_ms, err);
	if (s != VULNID_OK)
		goto out;
	rc = backup_check(dst);
	if (rc != SQLITE_OK)
		s = vulnid_fail(err, VULNID_ERR_IO, "backup copy does not check: %s", sqlite3_errstr(rc));
out:
	if (dst != NULL)
		sqlite3_close_v2(dst);
	return s;
}

vulnid_status
store_export_read_begin(store *st, GError **err)
{
	return store_exec(st, SQL_EXPORT_READ_BEGIN, err);
}

vulnid_status
store_export_years(store *st, GArray **years, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_EXPORT_YEARS, &s, err);
	int rc;

	*years = NULL;
	if (stmt == NULL)
		return s;
	*years = g_array_new(FALSE, FALSE, sizeof(int));
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int y = sqlite3_column_int(stmt, 0);

		g_array_append_val(*years, y);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		g_clear_pointer(years, g_array_unref);
		return store_fail(st, rc, "entries", err);
	}
	return VULNID_OK;
}

vulnid_status
store_export_last_record(store *st, gint64 *pos, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_EXPORT_LAST_RECORD, &s, err);
	int rc;

	*pos = 0;
	if (stmt == NULL)
		return s;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*pos = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "records", err);
	return VULNID_OK;
}

vulnid_status
store_export_record_sha256(store *st, const char *entry, gint64 seq, char **sha256, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_EXPORT_RECORD_SHA256, &s, err);
	int rc;

	*sha256 = NULL;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry);
	sqlite3_bind_int64(stmt, 2, seq);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*sha256 = store_col_text(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "records", err);
	return VULNID_OK;
}

vulnid_status
store_export_year_entries(store *st, int year, gint64 from, GPtrArray **ids, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_EXPORT_YEAR_ENTRIES, &s, err);
	int rc;

	*ids = NULL;
	if (stmt == NULL)
		return s;
	*ids = g_ptr_array_new_with_free_func(g_free);
	sqlite3_bind_int(stmt, 1, year);
	sqlite3_bind_int64(stmt, 2, from);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(*ids, store_col_text(stmt, 0));
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		g_clear_pointer(ids, g_ptr_array_unref);
		return store_fail(st, rc, "records", err);
	}
	return VULNID_OK;
}
