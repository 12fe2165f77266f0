/* store-tokens.c - the database accessors of tokens (see store-tokens.h),
 * named and prepared once per connection. */
#include "autoconfig.h"

#include "store-db.h"
#include "store-tokens.h"

static const char SQL_TOKEN_INSERT[] =
	"INSERT INTO tokens (sha256, entry, role, address, created) VALUES (?, ?, ?, ?, ?)";
static const char SQL_TOKEN_FIND[] = "SELECT entry, role, address FROM tokens WHERE sha256 = ?";

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
