/* store-hashcash.c - the ledger of spent Hashcash stamps (see
 * store-hashcash.h): named statements, prepared once per connection */
#include "autoconfig.h"

#include "store-db.h"
#include "store-hashcash.h"

static const char SQL_SPEND[] = "INSERT OR IGNORE INTO hashcash_spent (stamp, expires) VALUES (?, ?)";
static const char SQL_PURGE[] = "DELETE FROM hashcash_spent WHERE expires < ?";

vulnid_status
store_hashcash_spend(store *st, const char *sha256, const char *expires, gboolean *fresh, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_SPEND, &s, err);

	*fresh = FALSE;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	store_bind_text(stmt, 2, expires);
	s = store_step_reset(st, stmt, "hashcash_spent", err);
	if (s == VULNID_OK)
		*fresh = sqlite3_changes(store_db(st)) == 1;
	return s;
}

vulnid_status
store_hashcash_purge(store *st, const char *now, gint64 *purged, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_PURGE, &s, err);

	*purged = 0;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, now);
	s = store_step_reset(st, stmt, "hashcash_spent", err);
	if (s == VULNID_OK)
		*purged = sqlite3_changes(store_db(st));
	return s;
}
