/* store-quarantine.c - reading the mail set aside (see store-quarantine.h),
 * named statements prepared once per connection. */
#include "autoconfig.h"

#include "store-db.h"
#include "store-quarantine.h"

#define QUARANTINE_COLUMNS \
	"SELECT q.id, q.created, q.reason, q.detail, m.id, coalesce(m.message_id, '')," \
	" coalesce(m.from_addr, ''), coalesce(m.envelope_from, ''), coalesce(m.subject, '')," \
	" m.raw_sha256, coalesce(b.sealed, 0) FROM quarantine q JOIN messages m ON m.id = q.message" \
	" LEFT JOIN blobs b ON b.sha256 = m.raw_sha256"

static const char SQL_QUARANTINE_ALL[] = QUARANTINE_COLUMNS " ORDER BY q.id";
static const char SQL_QUARANTINE_ONE[] = QUARANTINE_COLUMNS " WHERE q.id = ? ORDER BY q.id";

/* As stored: a column that may be NULL stays NULL. */
static const char *
col(sqlite3_stmt *stmt, int i)
{
	return (const char *) sqlite3_column_text(stmt, i);
}

static void
row_of(sqlite3_stmt *stmt, store_quarantine_row *r)
{
	r->id = sqlite3_column_int64(stmt, 0);
	r->created = col(stmt, 1);
	r->reason = col(stmt, 2);
	r->detail = col(stmt, 3);
	r->message = sqlite3_column_int64(stmt, 4);
	r->message_id = col(stmt, 5);
	r->from = col(stmt, 6);
	r->sender = col(stmt, 7);
	r->subject = col(stmt, 8);
	r->sha256 = col(stmt, 9);
	r->sealed = sqlite3_column_int(stmt, 10) != 0;
}

vulnid_status
store_quarantine_each(store *st, gint64 id, store_quarantine_fn fn, gpointer data, guint *rows, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, id > 0 ? SQL_QUARANTINE_ONE : SQL_QUARANTINE_ALL, &s, err);
	int rc;

	*rows = 0;
	if (stmt == NULL)
		return s;
	if (id > 0)
		sqlite3_bind_int64(stmt, 1, id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		store_quarantine_row r;

		(*rows)++;
		row_of(stmt, &r);
		s = fn(&r, data, err);
		if (s != VULNID_OK) {
			sqlite3_reset(stmt);
			return s;
		}
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "quarantine", err);
	return VULNID_OK;
}
