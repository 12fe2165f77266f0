/* store-tokens.c - the database accessors of tokens (see store-tokens.h),
 * named and prepared once per connection. */
#include "autoconfig.h"

#include "store-db.h"
#include "store-tokens.h"

static const char SQL_TOKEN_INSERT[] =
	"INSERT INTO tokens (sha256, entry, role, address, created) VALUES (?, ?, ?, ?, ?)";
static const char SQL_TOKEN_FIND[] = "SELECT entry, role, address FROM tokens WHERE sha256 = ?";
static const char SQL_TOKEN_KNOWN[] = "SELECT 1 FROM tokens WHERE sha256 = ?";
/* Bare hex keys sort before 'g', the keys written now ("t:...") after. */
static const char SQL_TOKEN_LEGACY[] = "SELECT 1 FROM tokens WHERE sha256 < 'g' LIMIT 1";

vulnid_status
store_tokens_insert(store *st, const char *sha256, const char *entry_id, const char *role,
		    const char *address, const char *created, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_TOKEN_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	store_bind_text(stmt, 2, entry_id);
	store_bind_text(stmt, 3, role);
	store_bind_text(stmt, 4, address);
	store_bind_text(stmt, 5, created);
	return store_step_reset(st, stmt, "tokens", err);
}

vulnid_status
store_tokens_find(store *st, const char *sha256, gboolean *found, char **entry_id, char **role,
		  char **address, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_TOKEN_FIND, &s, err);
	int rc;

	*found = FALSE;
	*entry_id = *role = *address = NULL;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*found = TRUE;
		*entry_id = store_col_text(stmt, 0);
		*role = store_col_text(stmt, 1);
		*address = store_col_text(stmt, 2);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "tokens", err);
	return VULNID_OK;
}

static vulnid_status
step_exists(store *st, sqlite3_stmt *stmt, gboolean *found, GError **err)
{
	int rc = sqlite3_step(stmt);

	*found = rc == SQLITE_ROW;
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "tokens", err);
	return VULNID_OK;
}

vulnid_status
store_tokens_known(store *st, const char *sha256, gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_TOKEN_KNOWN, &s, err);

	*found = FALSE;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	return step_exists(st, stmt, found, err);
}

vulnid_status
store_tokens_legacy(store *st, gboolean *any, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_TOKEN_LEGACY, &s, err);

	*any = FALSE;
	if (stmt == NULL)
		return s;
	return step_exists(st, stmt, any, err);
}
