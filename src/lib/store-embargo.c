/* store-embargo.c - the database accessors of embargo releases (see
 * store-embargo.h), named and prepared once per connection. */
#include "autoconfig.h"

#include "store-db.h"
#include "store-embargo.h"

static const char SQL_RAW_MESSAGE[] =
	"SELECT b.data, b.sealed FROM records r JOIN messages m ON m.id = r.message"
	" JOIN blobs b ON b.sha256 = m.raw_sha256 WHERE r.id = ?";
static const char SQL_EMBARGOED_ENTRIES[] =
	"SELECT id FROM entries WHERE embargo IS NOT NULL ORDER BY year, number";

vulnid_status
store_embargo_raw_message(store *st, gint64 record_row, GBytes **data, gboolean *sealed, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_RAW_MESSAGE, &s, err);
	int rc;

	*data = NULL;
	*sealed = FALSE;
	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, record_row);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*data = g_bytes_new(sqlite3_column_blob(stmt, 0), (gsize) sqlite3_column_bytes(stmt, 0));
		*sealed = sqlite3_column_int(stmt, 1) != 0;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? vulnid_fail(err, VULNID_ERR_NOTFOUND, "the raw message is missing")
					 : store_fail(st, rc, "blobs", err);
	return VULNID_OK;
}

vulnid_status
store_embargo_entries(store *st, GPtrArray **ids, GError **err)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_EMBARGOED_ENTRIES, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(a, g_strdup((const char *) sqlite3_column_text(stmt, 0)));
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "entries", err);
	*ids = g_steal_pointer(&a);
	return VULNID_OK;
}
