/* store-lifecycle.c - the database accessors of the lifecycle (see
 * store-lifecycle.h): the SQL of mail about entries, named and prepared
 * once per connection. */
#include "autoconfig.h"

#include <string.h>

#include "store-db.h"
#include "store-lifecycle.h"

static const char SQL_ENTRY_EXISTS[] = "SELECT 1 FROM entries WHERE id = ?";
static const char SQL_TOKEN_UNCONFIRMED[] = "SELECT 1 FROM tokens WHERE entry = ? AND role = 'unconfirmed'";
static const char SQL_RECORD_NEXT_SEQ[] = "SELECT coalesce(max(seq), 0) + 1 FROM records WHERE entry = ?";
static const char SQL_VENDOR_TOKEN_ADDRESSES[] =
	"SELECT address FROM tokens WHERE entry = ? AND role = 'vendor'"
	" AND address IS NOT NULL ORDER BY rowid LIMIT 50";
static const char SQL_ENDORSEMENT_INSERT[] =
	"INSERT INTO endorsements (created, message, entry, fingerprint, endorser, how, action, fields)"
	" VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
/* The latest word on a key in one scope: an entry, or every entry (NULL). */
static const char SQL_ENDORSEMENT_LATEST[] =
	"SELECT action, endorser, how, fields FROM endorsements WHERE fingerprint = ? AND entry IS ?"
	" ORDER BY id DESC LIMIT 1";
/* Whether the statement sql with text parameter a has a row. */
static vulnid_status
exists_row(store *st, const char *sql, const char *a, gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, sql, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, a);
	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "database", err);
	*found = rc == SQLITE_ROW;
	return VULNID_OK;
}

vulnid_status
store_lifecycle_entry_exists(store *st, const char *id, gboolean *found, GError **err)
{
	return exists_row(st, SQL_ENTRY_EXISTS, id, found, err);
}

vulnid_status
store_lifecycle_unconfirmed(store *st, const char *entry_id, gboolean *found, GError **err)
{
	return exists_row(st, SQL_TOKEN_UNCONFIRMED, entry_id, found, err);
}

vulnid_status
store_lifecycle_next_seq(store *st, const char *entry_id, gint64 *seq, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_RECORD_NEXT_SEQ, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry_id);
	rc = sqlite3_step(stmt);
	*seq = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "records", err);
	return VULNID_OK;
}

vulnid_status
store_lifecycle_vendor_token_addresses(store *st, const char *entry_id, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_TOKEN_ADDRESSES, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry_id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(a, g_strdup((const char *) sqlite3_column_text(stmt, 0)));
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "tokens", err);
	*out = g_steal_pointer(&a);
	return VULNID_OK;
}

vulnid_status
store_lifecycle_endorsement_insert(store *st, const store_endorsement *en, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENDORSEMENT_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, en->created);
	if (en->message > 0)
		sqlite3_bind_int64(stmt, 2, en->message);
	else
		sqlite3_bind_null(stmt, 2);
	store_bind_text(stmt, 3, en->entry);
	store_bind_text(stmt, 4, en->fingerprint);
	store_bind_text(stmt, 5, en->endorser);
	store_bind_text(stmt, 6, en->how);
	store_bind_text(stmt, 7, en->action);
	store_bind_text(stmt, 8, en->fields);
	return store_step_reset(st, stmt, "endorsements", err);
}

vulnid_status
store_lifecycle_endorsement_latest(store *st, const char *fingerprint, const char *entry,
				   store_endorsement *out, gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENDORSEMENT_LATEST, &s, err);
	int rc;

	*found = FALSE;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, fingerprint);
	store_bind_text(stmt, 2, entry);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*found = TRUE;
		out->action = store_col_text(stmt, 0);
		out->endorser = store_col_text(stmt, 1);
		out->how = store_col_text(stmt, 2);
		out->fields = store_col_text(stmt, 3);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "endorsements", err);
	return VULNID_OK;
}

void
store_endorsement_clear(store_endorsement *en)
{
	g_free(en->action);
	g_free(en->endorser);
	g_free(en->how);
	g_free(en->fields);
	memset(en, 0, sizeof *en);
}
