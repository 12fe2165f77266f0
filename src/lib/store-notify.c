/* store-notify.c - the database accessors of mail to others (see
 * store-notify.h), named and prepared once per connection. */
#include "autoconfig.h"

#include "store-db.h"
#include "store-notify.h"

/* The researcher's request and the robot's ack of it: the thread the
 * notices to the researcher belong to (indexed: records (entry, seq),
 * outbox (cause)). */
static const char SQL_ENTRY_THREAD[] =
	"SELECT m.message_id, (SELECT o.message_id FROM outbox o WHERE o.cause = r.message"
	" AND o.kind = 'ack' ORDER BY o.id LIMIT 1)"
	" FROM records r JOIN messages m ON m.id = r.message WHERE r.entry = ? AND r.seq = 1";
static const char SQL_PENDING_ADD[] = "INSERT OR IGNORE INTO announce_pending (entry, created) VALUES (?, ?)";
static const char SQL_PENDING_LIST[] =
	"SELECT entry FROM announce_pending WHERE outbox IS NULL AND created < ? ORDER BY created, entry";
static const char SQL_PENDING_SENT[] =
	"UPDATE announce_pending SET outbox = ? WHERE outbox IS NULL AND created < ?";
static const char SQL_SUBSCRIPTIONS[] =
	"SELECT address, role FROM tokens WHERE entry = ? AND role IN ('subscriber', 'unsubscribed')"
	" AND address IS NOT NULL ORDER BY rowid LIMIT ?";

vulnid_status
store_notify_pending_add(store *st, const char *entry_id, const char *created, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_PENDING_ADD, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry_id);
	store_bind_text(stmt, 2, created);
	return store_step_reset(st, stmt, "announce_pending", err);
}

vulnid_status
store_notify_pending_list(store *st, const char *day, GPtrArray **ids, GError **err)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_PENDING_LIST, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, day);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(a, g_strdup((const char *) sqlite3_column_text(stmt, 0)));
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "announce_pending", err);
	*ids = g_steal_pointer(&a);
	return VULNID_OK;
}

vulnid_status
store_notify_pending_sent(store *st, const char *day, gint64 outbox, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_PENDING_SENT, &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, outbox);
	store_bind_text(stmt, 2, day);
	return store_step_reset(st, stmt, "announce_pending", err);
}

static void
subscription_free(gpointer p)
{
	store_subscription *x = p;

	g_free(x->address);
	g_free(x->role);
	g_free(x);
}

vulnid_status
store_notify_subscriptions(store *st, const char *entry_id, int limit, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(subscription_free);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_SUBSCRIPTIONS, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry_id);
	sqlite3_bind_int(stmt, 2, limit);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		store_subscription *x = g_new0(store_subscription, 1);

		x->address = g_strdup((const char *) sqlite3_column_text(stmt, 0));
		x->role = g_strdup((const char *) sqlite3_column_text(stmt, 1));
		g_ptr_array_add(a, x);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "tokens", err);
	*out = g_steal_pointer(&a);
	return VULNID_OK;
}

vulnid_status
store_notify_thread(store *st, const char *entry_id, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ENTRY_THREAD, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry_id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		for (int i = 0; i < 2; i++)
			if (sqlite3_column_type(stmt, i) == SQLITE_TEXT)
				g_ptr_array_add(a, g_strdup((const char *) sqlite3_column_text(stmt, i)));
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "records", err);
	*out = g_steal_pointer(&a);
	return VULNID_OK;
}
