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

static const char SQL_BACKUP_TABLES[] =
	"CREATE TABLE vulnid_backup_files (name TEXT PRIMARY KEY, mode INTEGER NOT NULL, data BLOB NOT NULL);"
	"CREATE TABLE vulnid_backup_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);";
static const char SQL_BACKUP_FILE_INSERT[] = "INSERT INTO vulnid_backup_files (name, mode, data) VALUES (?, ?, ?)";
static const char SQL_BACKUP_INFO_INSERT[] = "INSERT INTO vulnid_backup_info (key, value) VALUES (?, ?)";
static const char SQL_BACKUP_HAS_FILES[] =
	"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('vulnid_backup_files', 'vulnid_backup_info')";
static const char SQL_BACKUP_IS_VULNID[] =
	"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('entries', 'records', 'audit')";
static const char SQL_BACKUP_FILES[] = "SELECT name, mode, data FROM vulnid_backup_files ORDER BY name";
static const char SQL_BACKUP_INFO[] = "SELECT key, value FROM vulnid_backup_info";
static const char SQL_BACKUP_DROP[] = "DROP TABLE vulnid_backup_files; DROP TABLE vulnid_backup_info";
static const char SQL_BACKUP_WAL[] = "PRAGMA journal_mode = WAL";
static const char SQL_ENTRIES_SUMMARY[] =
	"SELECT (SELECT count(*) FROM entries), (SELECT id FROM entries ORDER BY year DESC, number DESC LIMIT 1)";

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

void
store_backup_file_free(store_backup_file *f)
{
	if (f == NULL)
		return;
	g_free(f->name);
	g_bytes_unref(f->data);
	g_free(f);
}

static vulnid_status
raw_open(const char *path, sqlite3 **db, GError **err)
{
	int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE, NULL);

	if (rc == SQLITE_OK)
		return VULNID_OK;
	vulnid_fail(err, VULNID_ERR_IO, "cannot open '%s': %s", path,
		    *db != NULL ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
	sqlite3_close_v2(*db);
	*db = NULL;
	return VULNID_ERR_IO;
}

static vulnid_status
raw_fail(sqlite3 *db, const char *path, GError **err)
{
	int rc = sqlite3_errcode(db);

	return vulnid_fail(err, rc == SQLITE_FULL ? VULNID_ERR_NOSPACE : rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT
			   ? VULNID_ERR_CORRUPT : VULNID_ERR_IO, "'%s': %s", path, sqlite3_errmsg(db));
}

static gint64
raw_int(sqlite3 *db, const char *sql, int *rc)
{
	sqlite3_stmt *q = NULL;
	gint64 v = -1;

	*rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
	if (*rc == SQLITE_OK) {
		*rc = sqlite3_step(q);
		if (*rc == SQLITE_ROW) {
			v = sqlite3_column_int64(q, 0);
			*rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(q);
	return v;
}

vulnid_status
store_export_backup_add(const char *path, GPtrArray *files, GHashTable *info, GError **err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *f = NULL, *i = NULL;
	vulnid_status s = raw_open(path, &db, err);
	GHashTableIter it;
	gpointer k, v;

	if (s != VULNID_OK)
		return s;
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, SQL_BACKUP_TABLES, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, SQL_BACKUP_FILE_INSERT, -1, &f, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, SQL_BACKUP_INFO_INSERT, -1, &i, NULL) != SQLITE_OK)
		goto fail;
	for (guint n = 0; n < files->len; n++) {
		const store_backup_file *bf = g_ptr_array_index(files, n);
		gsize len;
		const void *data = g_bytes_get_data(bf->data, &len);

		store_bind_text(f, 1, bf->name);
		sqlite3_bind_int(f, 2, (int) bf->mode);
		sqlite3_bind_blob64(f, 3, len > 0 ? data : "", len, SQLITE_STATIC);
		if (sqlite3_step(f) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(f);
	}
	g_hash_table_iter_init(&it, info);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		store_bind_text(i, 1, k);
		store_bind_text(i, 2, v);
		if (sqlite3_step(i) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(i);
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_finalize(f);
	sqlite3_finalize(i);
	sqlite3_close_v2(db);
	return VULNID_OK;
fail:
	s = raw_fail(db, path, err);
	sqlite3_finalize(f);
	sqlite3_finalize(i);
	sqlite3_close_v2(db);
	return s;
}

/* The rows of a --all backup. */
static int
backup_rows(sqlite3 *db, GPtrArray *files, GHashTable *info)
{
	sqlite3_stmt *q = NULL;
	int rc = sqlite3_prepare_v2(db, SQL_BACKUP_FILES, -1, &q, NULL);

	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		store_backup_file *bf = g_new0(store_backup_file, 1);

		bf->name = store_col_text(q, 0);
		bf->mode = (guint) sqlite3_column_int(q, 1);
		bf->data = g_bytes_new(sqlite3_column_blob(q, 2), (gsize) sqlite3_column_bytes(q, 2));
		g_ptr_array_add(files, bf);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return rc;
	rc = sqlite3_prepare_v2(db, SQL_BACKUP_INFO, -1, &q, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		g_hash_table_insert(info, store_col_text(q, 0), store_col_text(q, 1));
		rc = SQLITE_OK;
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

vulnid_status
store_export_backup_take(const char *path, GPtrArray **files, GHashTable **info, GError **err)
{
	g_autoptr(GPtrArray) fl = g_ptr_array_new_with_free_func((GDestroyNotify) store_backup_file_free);
	g_autoptr(GHashTable) in = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	sqlite3 *db = NULL;
	vulnid_status s = raw_open(path, &db, err);
	gint64 version, tables, have;
	int rc;

	if (s != VULNID_OK)
		return s;
	rc = backup_check(db);
	if (rc != SQLITE_OK) {
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' is not a sound database: %s", path,
				sqlite3_errstr(rc));
		goto out;
	}
	version = raw_int(db, "PRAGMA user_version", &rc);
	tables = rc == SQLITE_OK ? raw_int(db, SQL_BACKUP_IS_VULNID, &rc) : -1;
	if (rc != SQLITE_OK || tables != 3 || version < 1) {
		s = vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a backup of a vulnid instance", path);
		goto out;
	}
	if (version > STORE_SCHEMA_VERSION) {
		s = vulnid_fail(err, VULNID_ERR_CONFIG, "'%s' has schema version %" G_GINT64_FORMAT ", newer than this"
				" program's %d: restore it with the version that made it", path, version,
				STORE_SCHEMA_VERSION);
		goto out;
	}
	g_hash_table_insert(in, g_strdup("schema"), g_strdup_printf("%" G_GINT64_FORMAT, version));
	have = raw_int(db, SQL_BACKUP_HAS_FILES, &rc);
	if (rc == SQLITE_OK && have == 2)
		rc = backup_rows(db, fl, in);
	if (rc == SQLITE_OK && have == 2)
		rc = sqlite3_exec(db, SQL_BACKUP_DROP, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, SQL_BACKUP_WAL, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		s = raw_fail(db, path, err);
		goto out;
	}
	*files = g_steal_pointer(&fl);
	*info = g_steal_pointer(&in);
out:
	sqlite3_close_v2(db);
	return s;
}

vulnid_status
store_export_entries_summary(store *st, gint64 *count, char **last, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, SQL_ENTRIES_SUMMARY, &s, err);
	int rc;

	*count = 0;
	*last = NULL;
	if (stmt == NULL)
		return s;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*count = sqlite3_column_int64(stmt, 0);
		*last = store_col_text(stmt, 1);
	}
	store_stmt_release(stmt);
	return rc == SQLITE_ROW ? VULNID_OK : store_fail(st, rc, "entries", err);
}
