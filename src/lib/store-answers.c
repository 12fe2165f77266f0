/* store-answers.c - the answer budget's counters (see store-answers.h),
 * named statements prepared once per connection. */
#include "autoconfig.h"

#include <sqlite3.h>

#include "store-answers.h"
#include "store-db.h"

/* A week of hours: the longest unverified_answer_hours (config.c). */
#define KEEP_HOURS 168

static const char SQL_ANSWERS_USED[] =
	"SELECT coalesce(sum(bytes), 0), coalesce(sum(notices), 0) FROM answer_bytes"
	" WHERE address = ?1 AND hour >= ?2";
static const char SQL_ANSWERS_ADD[] =
	"INSERT INTO answer_bytes (address, hour, bytes, notices) VALUES (?1, ?2, ?3, ?4)"
	" ON CONFLICT (address, hour) DO UPDATE SET bytes = bytes + excluded.bytes,"
	" notices = notices + excluded.notices";
static const char SQL_ANSWERS_FORGET[] =
	"DELETE FROM answer_bytes WHERE address = ?1 AND hour < ?2";

vulnid_status
store_answers_used(store *st, const char *address, gint64 since, gint64 *bytes, gint64 *notices,
		   GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ANSWERS_USED, &s, err);
	int rc;

	*bytes = *notices = 0;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, address);
	sqlite3_bind_int64(stmt, 2, since);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*bytes = sqlite3_column_int64(stmt, 0);
		*notices = sqlite3_column_int64(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "answer_bytes", err);
	return VULNID_OK;
}

vulnid_status
store_answers_add(store *st, const char *address, gint64 hour, gint64 bytes, gint64 notices, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_ANSWERS_ADD, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, address);
	sqlite3_bind_int64(stmt, 2, hour);
	sqlite3_bind_int64(stmt, 3, bytes);
	sqlite3_bind_int64(stmt, 4, notices);
	s = store_step_reset(st, stmt, "answer_bytes", err);
	if (s != VULNID_OK)
		return s;
	stmt = store_prepare_cached(st, SQL_ANSWERS_FORGET, &s, err);
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, address);
	sqlite3_bind_int64(stmt, 2, hour - KEEP_HOURS);
	return store_step_reset(st, stmt, "answer_bytes", err);
}
