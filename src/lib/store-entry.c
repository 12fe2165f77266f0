/* store-entry.c - entries, records and attachments as rows (see
 * store-entry.h) */
#include "autoconfig.h"

#include <string.h>
#include <sqlite3.h>

#include "store-db.h"
#include "store-entry.h"

static const char SQL_ENTRY_GET[] =
	"SELECT id, year, number, digest, created, embargo FROM entries WHERE id = ?";
static const char SQL_ENTRY_RECORDS[] =
	"SELECT r.id, r.seq, r.created, r.kind, r.author, r.author_name, r.role, r.auth, r.subject,"
	" r.fields, r.body, r.sha256, r.sealed, coalesce(r.opens, 0), p.fingerprint"
	" FROM records r LEFT JOIN record_signers p ON p.record = r.id"
	" WHERE r.entry = ? ORDER BY r.seq";
static const char SQL_ENTRY_ATTACHMENTS[] =
	"SELECT a.record, a.idx, a.sha256, a.filename, a.content_type, a.size, NULL"
	" FROM attachments a JOIN records r ON r.id = a.record WHERE r.entry = ?1"
	" UNION ALL"
	" SELECT w.record, w.idx, w.sha256, w.filename, w.content_type, w.size, w.salt"
	" FROM withheld_attachments w JOIN records r ON r.id = w.record WHERE r.entry = ?1"
	" ORDER BY 1, 2";
static const char SQL_ENTRY_IDS[] =
	"SELECT id FROM entries WHERE ?1 = 0 OR year = ?1 ORDER BY year, number";
static const char SQL_ENTRY_IDS_BY_ALIAS[] =
	"SELECT DISTINCT r.entry FROM records r, json_each(r.fields) f"
	" WHERE r.kind = 'command' AND json_extract(f.value, '$[0]') = 'Alias'"
	" AND json_extract(f.value, '$[1]') = ? COLLATE NOCASE ORDER BY r.entry LIMIT ?";

#define COL(stmt, i) ((const char *) sqlite3_column_text(stmt, i))

void
store_entry_row_clear(store_entry_row *row)
{
	g_free(row->id);
	g_free(row->digest);
	g_free(row->created);
	g_free(row->embargo);
	memset(row, 0, sizeof *row);
}

vulnid_status
store_entry_get(store *st, const char *id, store_entry_row *row, gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENTRY_GET, &s, err);
	int rc;

	memset(row, 0, sizeof *row);
	*found = FALSE;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*found = TRUE;
		row->id = store_col_text(stmt, 0);
		row->year = sqlite3_column_int(stmt, 1);
		row->number = sqlite3_column_int64(stmt, 2);
		row->digest = store_col_text(stmt, 3);
		row->created = store_col_text(stmt, 4);
		row->embargo = store_col_text(stmt, 5);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "entries", err);
	return VULNID_OK;
}

vulnid_status
store_entry_records(store *st, const char *entry, store_entry_record_fn fn, gpointer data,
		    GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENTRY_RECORDS, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		store_entry_record_row r = {
			.rowid = sqlite3_column_int64(stmt, 0),
			.seq = sqlite3_column_int64(stmt, 1),
			.created = COL(stmt, 2), .kind = COL(stmt, 3),
			.author = COL(stmt, 4), .author_name = COL(stmt, 5),
			.role = COL(stmt, 6), .auth = COL(stmt, 7),
			.subject = COL(stmt, 8), .fields = COL(stmt, 9),
			.body = COL(stmt, 10), .sha256 = COL(stmt, 11),
			.sealed = COL(stmt, 12),
			.opens = sqlite3_column_int64(stmt, 13),
			.signer = COL(stmt, 14),
		};

		fn(&r, data);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "records", err);
	return VULNID_OK;
}

vulnid_status
store_entry_attachments(store *st, const char *entry, store_entry_attachment_fn fn, gpointer data,
			GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENTRY_ATTACHMENTS, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		store_entry_attachment_row a = {
			.record = sqlite3_column_int64(stmt, 0),
			.sha256 = COL(stmt, 2), .filename = COL(stmt, 3),
			.content_type = COL(stmt, 4),
			.size = sqlite3_column_int64(stmt, 5),
			.salt = COL(stmt, 6),
		};

		fn(&a, data);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "attachments", err);
	return VULNID_OK;
}

/* Run a prepared statement whose first column is an id; the ids in order. */
static vulnid_status
collect_ids(store *st, sqlite3_stmt *stmt, const char *what, GPtrArray **ids, GError **err)
{
	int rc;

	*ids = g_ptr_array_new_with_free_func(g_free);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(*ids, store_col_text(stmt, 0));
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		g_clear_pointer(ids, g_ptr_array_unref);
		return store_fail(st, rc, what, err);
	}
	return VULNID_OK;
}

vulnid_status
store_entry_ids(store *st, int year, GPtrArray **ids, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENTRY_IDS, &s, err);

	*ids = NULL;
	if (stmt == NULL)
		return s;
	sqlite3_bind_int(stmt, 1, year);
	return collect_ids(st, stmt, "entries", ids, err);
}

vulnid_status
store_entry_ids_by_alias(store *st, const char *alias, guint max, GPtrArray **ids, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENTRY_IDS_BY_ALIAS, &s, err);

	*ids = NULL;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, alias);
	sqlite3_bind_int(stmt, 2, (int) max);
	return collect_ids(st, stmt, "records", ids, err);
}
