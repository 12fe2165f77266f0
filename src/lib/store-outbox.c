/* store-outbox.c - the outbox tables: every statement of the delivery
 * code, named and prepared once per connection */
#include "autoconfig.h"

#include <sqlite3.h>

#include "store-db.h"
#include "store-outbox.h"

static const char SQL_OUTBOX_INSERT[] =
	"INSERT INTO outbox (created, kind, entry, cause, message_id, envelope_from,"
	" recipients, data, next_attempt, updated, claim, claim_until)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?1, ?1, ?9, ?10)";
static const char SQL_OUTBOX_ADD_RECIPIENT[] =
	"INSERT OR IGNORE INTO outbox_recipients (outbox, address, updated) VALUES (?, ?, ?)";
static const char SQL_OUTBOX_TALLY[] =
	"SELECT coalesce(sum(status IN ('queued', 'deferred')), 0),"
	" coalesce(sum(status = 'failed'), 0), coalesce(sum(status = 'delivered'), 0)"
	" FROM outbox_recipients WHERE outbox = ?";
static const char SQL_OUTBOX_RECIPIENT_VERDICT[] =
	"UPDATE outbox_recipients SET status = ?, reply = ?, updated = ?"
	" WHERE outbox = ? AND address = ? AND status IN ('queued', 'deferred')";
/* ?6 the run's token, ?7 the process's */
static const char SQL_OUTBOX_SET_OUTCOME[] =
	"UPDATE outbox SET status = ?1, updated = ?2,"
	" last_error = CASE WHEN ?1 = 'delivered' THEN NULL ELSE coalesce(?3, last_error) END,"
	" attempts = attempts + (claim IN (?6, ?7)), next_attempt = coalesce(?4, next_attempt),"
	" claim_until = CASE WHEN claim IN (?6, ?7) THEN NULL ELSE claim_until END,"
	" claim = CASE WHEN claim IN (?6, ?7) THEN ?6 ELSE claim END"
	" WHERE id = ?5";
static const char SQL_OUTBOX_DATA[] = "SELECT data FROM outbox WHERE id = ?";
static const char SQL_OUTBOX_SIGNED_GET[] =
	"SELECT data FROM outbox_signed WHERE outbox = ? AND mode = ?";
static const char SQL_OUTBOX_SIGNED_KEEP[] =
	"INSERT INTO outbox_signed (outbox, mode, created, data)"
	" SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM outbox_signed WHERE outbox = ?1)";
/* Live claims are read through their own index (outbox_claims, schema 8):
 * only the items some run holds now, never the backlog. */
static const char SQL_OUTBOX_LIVE_CLAIMS[] =
	"SELECT DISTINCT claim FROM outbox INDEXED BY outbox_claims"
	" WHERE claim_until > ?2 AND claim NOT IN (?1, ?3) AND status IN ('queued', 'deferred')";
static const char SQL_OUTBOX_RELEASE_CLAIM[] =
	"UPDATE outbox SET claim_until = NULL WHERE claim = ? AND claim_until IS NOT NULL";

/* Due, and nobody holds it; never one this run claimed before (a run
 * tries each item once, --force or not).  Three shapes, so that each has
 * an index: the items of one cause (outbox_cause), all pending ones
 * (--force: the operator's), and the due ones in the order they became
 * due (outbox_pending, schema 8: a range of due rows read in index order
 * and left after LIMIT, never the backlog that waits for later). */
#define OUTBOX_FREE " AND (claim_until IS NULL OR claim_until <= ?3) AND claim IS NOT ?4"
#define OUTBOX_DUE_CAUSE \
	" status IN ('queued', 'deferred') AND cause = ?1 AND (?2 OR next_attempt <= ?3)" \
	OUTBOX_FREE " ORDER BY id"
#define OUTBOX_DUE_FORCE " status IN ('queued', 'deferred') AND ?2" OUTBOX_FREE " ORDER BY id"
#define OUTBOX_DUE_NOW \
	" status IN ('queued', 'deferred') AND next_attempt <= ?3" OUTBOX_FREE \
	" ORDER BY next_attempt, id"
#define OUTBOX_BY_CAUSE " FROM outbox WHERE"
#define OUTBOX_BY_DUE " FROM outbox INDEXED BY outbox_pending WHERE"
static const char SQL_OUTBOX_ANY_DUE_CAUSE[] =
	"SELECT EXISTS (SELECT 1" OUTBOX_BY_CAUSE OUTBOX_DUE_CAUSE ")";
static const char SQL_OUTBOX_ANY_DUE_FORCE[] =
	"SELECT EXISTS (SELECT 1" OUTBOX_BY_DUE OUTBOX_DUE_FORCE ")";
static const char SQL_OUTBOX_ANY_DUE_NOW[] =
	"SELECT EXISTS (SELECT 1" OUTBOX_BY_DUE OUTBOX_DUE_NOW ")";
#define OUTBOX_CLAIM "UPDATE outbox SET claim = ?4, claim_until = ?5 WHERE id IN (SELECT id"
static const char SQL_OUTBOX_CLAIM_DUE_CAUSE[] = OUTBOX_CLAIM OUTBOX_BY_CAUSE OUTBOX_DUE_CAUSE " LIMIT ?6)";
static const char SQL_OUTBOX_CLAIM_DUE_FORCE[] = OUTBOX_CLAIM OUTBOX_BY_DUE OUTBOX_DUE_FORCE " LIMIT ?6)";
static const char SQL_OUTBOX_CLAIM_DUE_NOW[] = OUTBOX_CLAIM OUTBOX_BY_DUE OUTBOX_DUE_NOW " LIMIT ?6)";
/* The relay could not be reached: every item that is due now and that
 * nobody holds, and that is still within its lifetime (?4: created after
 * it), is deferred as if it had been tried (its attempts and backoff as
 * outbox.c reckons them: 60 s doubling per attempt, at most 4 h), its
 * pending recipients first. */
#define OUTBOX_UNREACHED \
	" (SELECT id FROM outbox INDEXED BY outbox_pending" \
	" WHERE status IN ('queued', 'deferred') AND next_attempt <= ?2" \
	" AND (claim_until IS NULL OR claim_until <= ?2) AND created > ?4)"
static const char SQL_OUTBOX_UNREACHED_RECIPIENTS[] =
	"UPDATE outbox_recipients SET status = 'deferred', reply = ?1, updated = ?2"
	" WHERE status IN ('queued', 'deferred') AND outbox IN" OUTBOX_UNREACHED;
static const char SQL_OUTBOX_UNREACHED[] =
	"UPDATE outbox SET status = 'deferred', updated = ?2, last_error = ?1, attempts = attempts + 1,"
	" next_attempt = strftime('%Y-%m-%dT%H:%M:%SZ', ?2,"
	"  '+' || min(60 << min(attempts, 8), 4 * 3600) || ' seconds')"
	" WHERE id IN" OUTBOX_UNREACHED;
static const char SQL_OUTBOX_CLAIMED[] =
	"SELECT id, created, message_id, entry, kind, envelope_from, attempts, coalesce(cause, 0),"
	" CAST(strftime('%s', claim_until) AS INTEGER) FROM outbox INDEXED BY outbox_claims"
	" WHERE claim_until > ?2 AND claim IN (?1, ?3) AND status IN ('queued', 'deferred')"
	" ORDER BY id";
static const char SQL_OUTBOX_PENDING_RECIPIENTS[] =
	"SELECT address FROM outbox_recipients WHERE outbox = ?"
	" AND status IN ('queued', 'deferred') ORDER BY rowid";
static const char SQL_OUTBOX_REQUEUE[] =
	"UPDATE outbox SET status = 'queued', next_attempt = ?1, updated = ?1, shown = NULL"
	" WHERE id = ?2 AND status <> 'delivered'";
static const char SQL_OUTBOX_REQUEUE_RECIPIENTS[] =
	"UPDATE outbox_recipients SET status = 'queued', updated = ?"
	" WHERE outbox = ? AND status IN ('failed', 'deferred')";
static const char SQL_OUTBOX_FIND_BY_ENVELOPE[] =
	"SELECT id, kind, entry, message_id, coalesce(cause, 0)"
	" FROM outbox WHERE envelope_from = ? COLLATE NOCASE";
static const char SQL_OUTBOX_FIND_BY_MESSAGE_ID[] =
	"SELECT id, kind, entry, message_id, coalesce(cause, 0)"
	" FROM outbox WHERE message_id = ? COLLATE NOCASE";
static const char SQL_OUTBOX_RECIPIENT_MATCH[] =
	"SELECT address FROM outbox_recipients WHERE outbox = ?1"
	" AND (address = ?2 COLLATE NOCASE OR"
	" (?2 IS NULL AND (SELECT count(*) FROM outbox_recipients WHERE outbox = ?1) = 1))"
	" ORDER BY rowid LIMIT 1";
static const char SQL_OUTBOX_RECIPIENT_BOUNCE[] =
	"UPDATE outbox_recipients SET status = 'failed', reply = ?1, updated = ?2"
	" WHERE outbox = ?3 AND address = ?4 AND status <> 'failed'";
static const char SQL_OUTBOX_FAIL[] =
	"UPDATE outbox SET status = 'failed', last_error = ?, updated = ? WHERE id = ?";
#define OUTBOX_LIST_COLUMNS \
	"SELECT id, created, kind, coalesce(entry, ''), message_id, recipients, status," \
	" attempts, next_attempt, coalesce(last_error, '')," \
	" CASE WHEN claim_until > ?1 THEN claim_until END, shown FROM outbox"
static const char SQL_OUTBOX_LIST[] =
	OUTBOX_LIST_COLUMNS " WHERE status <> 'delivered' ORDER BY id";
static const char SQL_OUTBOX_LIST_DEFERRED[] =
	OUTBOX_LIST_COLUMNS " WHERE status = 'deferred' ORDER BY id";
static const char SQL_OUTBOX_LIST_ATTENTION[] =
	OUTBOX_LIST_COLUMNS " WHERE status IN ('queued', 'deferred') OR (status = 'failed' AND shown IS NULL)"
	" ORDER BY id";
static const char SQL_OUTBOX_MARK_SHOWN[] =
	"UPDATE outbox SET shown = ?1 WHERE id = ?2 AND status = 'failed' AND shown IS NULL";

/* A cached statement (never finalized here: reset after use). */
#define PREPARE(stmt, sql) \
	sqlite3_stmt *stmt; \
	vulnid_status s_; \
	if ((stmt = store_prepare_cached(st, sql, &s_, err)) == NULL) \
		return s_

static void
bind_int64_or_null(sqlite3_stmt *stmt, int i, gint64 v)
{
	if (v > 0)
		sqlite3_bind_int64(stmt, i, v);
	else
		sqlite3_bind_null(stmt, i);
}

/* Run a statement that changes rows; *changes: how many. */
static vulnid_status
step_changes(store *st, sqlite3_stmt *stmt, gint64 *changes, GError **err)
{
	vulnid_status s = store_step_reset(st, stmt, "outbox", err);

	if (s == VULNID_OK && changes != NULL)
		*changes = sqlite3_changes(store_db(st));
	return s;
}

/* The one-blob row of stmt, or *out NULL with *found FALSE. */
static vulnid_status
step_blob(store *st, sqlite3_stmt *stmt, GBytes **out, GError **err)
{
	int rc = sqlite3_step(stmt);

	*out = NULL;
	if (rc == SQLITE_ROW)
		*out = g_bytes_new(sqlite3_column_blob(stmt, 0), (gsize) sqlite3_column_bytes(stmt, 0));
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

vulnid_status
store_outbox_insert(store *st, const store_outbox_new *n, gint64 *id, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_INSERT);
	vulnid_status s;

	store_bind_text(stmt, 1, n->created);
	store_bind_text(stmt, 2, n->kind);
	store_bind_text(stmt, 3, n->entry);
	bind_int64_or_null(stmt, 4, n->cause);
	store_bind_text(stmt, 5, n->message_id);
	store_bind_text(stmt, 6, n->envelope_from);
	store_bind_text(stmt, 7, n->recipients);
	sqlite3_bind_blob64(stmt, 8, n->data, n->len, SQLITE_STATIC);
	store_bind_text(stmt, 9, n->claim);
	store_bind_text(stmt, 10, n->claim_until);
	s = store_step_reset(st, stmt, "outbox", err);
	if (s == VULNID_OK)
		*id = sqlite3_last_insert_rowid(store_db(st));
	return s;
}

vulnid_status
store_outbox_add_recipient(store *st, gint64 id, const char *address, const char *now, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_ADD_RECIPIENT);

	sqlite3_bind_int64(stmt, 1, id);
	store_bind_text(stmt, 2, address);
	store_bind_text(stmt, 3, now);
	return store_step_reset(st, stmt, "outbox", err);
}

vulnid_status
store_outbox_tally(store *st, gint64 id, int *pending, int *failed, int *delivered, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_TALLY);
	int rc;

	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	*pending = sqlite3_column_int(stmt, 0);
	*failed = sqlite3_column_int(stmt, 1);
	*delivered = sqlite3_column_int(stmt, 2);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

vulnid_status
store_outbox_recipient_verdict(store *st, gint64 id, const char *address, const char *state,
			       const char *reply, const char *now, gboolean *changed, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_RECIPIENT_VERDICT);
	gint64 n = 0;
	vulnid_status s;

	store_bind_text(stmt, 1, state);
	store_bind_text(stmt, 2, reply);
	store_bind_text(stmt, 3, now);
	sqlite3_bind_int64(stmt, 4, id);
	store_bind_text(stmt, 5, address);
	s = step_changes(st, stmt, &n, err);
	*changed = n > 0;
	return s;
}

vulnid_status
store_outbox_set_outcome(store *st, const store_outbox_outcome *o, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_SET_OUTCOME);

	store_bind_text(stmt, 1, o->state);
	store_bind_text(stmt, 2, o->now);
	store_bind_text(stmt, 3, o->error);
	store_bind_text(stmt, 4, o->next_attempt);
	sqlite3_bind_int64(stmt, 5, o->id);
	store_bind_text(stmt, 6, o->run_token);
	store_bind_text(stmt, 7, o->process_token);
	return store_step_reset(st, stmt, "outbox", err);
}

vulnid_status
store_outbox_data(store *st, gint64 id, GBytes **out, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_DATA);
	vulnid_status s;

	sqlite3_bind_int64(stmt, 1, id);
	s = step_blob(st, stmt, out, err);
	if (s == VULNID_OK && *out == NULL)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no outbox item %" G_GINT64_FORMAT, id);
	return s;
}

vulnid_status
store_outbox_signed_get(store *st, gint64 id, const char *mode, GBytes **out, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_SIGNED_GET);

	sqlite3_bind_int64(stmt, 1, id);
	store_bind_text(stmt, 2, mode);
	return step_blob(st, stmt, out, err);
}

vulnid_status
store_outbox_signed_keep(store *st, gint64 id, const char *mode, const char *now, GBytes *data,
			 GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_SIGNED_KEEP);
	gsize len;
	gconstpointer p = g_bytes_get_data(data, &len);

	sqlite3_bind_int64(stmt, 1, id);
	store_bind_text(stmt, 2, mode);
	store_bind_text(stmt, 3, now);
	sqlite3_bind_blob64(stmt, 4, p, len, SQLITE_STATIC);
	return store_step_reset(st, stmt, "outbox", err);
}

/* Collect column 0 of every row of stmt as strings, then reset it. */
static vulnid_status
step_strings(store *st, sqlite3_stmt *stmt, GPtrArray *out, GError **err)
{
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(out, store_col_text(stmt, 0));
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? VULNID_OK : store_fail(st, rc, "outbox", err);
}

vulnid_status
store_outbox_live_claims(store *st, const char *process_token, const char *run_token,
			 const char *now, GPtrArray *claims, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_LIVE_CLAIMS);

	store_bind_text(stmt, 1, process_token);
	store_bind_text(stmt, 2, now);
	store_bind_text(stmt, 3, run_token);
	return step_strings(st, stmt, claims, err);
}

vulnid_status
store_outbox_release_claim(store *st, const char *claim, gint64 *items, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_RELEASE_CLAIM);

	store_bind_text(stmt, 1, claim);
	return step_changes(st, stmt, items, err);
}

static void
bind_due(sqlite3_stmt *stmt, const store_outbox_due *d)
{
	sqlite3_bind_int64(stmt, 1, d->cause);
	sqlite3_bind_int(stmt, 2, d->force);
	store_bind_text(stmt, 3, d->now);
	store_bind_text(stmt, 4, d->run_token);
}

/* The statement of a due query: by cause, --force, or due now. */
static const char *
due_sql(const store_outbox_due *d, const char *cause, const char *force, const char *now)
{
	return d->cause > 0 ? cause : d->force ? force : now;
}

vulnid_status
store_outbox_any_due(store *st, const store_outbox_due *d, gboolean *any, GError **err)
{
	PREPARE(stmt, due_sql(d, SQL_OUTBOX_ANY_DUE_CAUSE, SQL_OUTBOX_ANY_DUE_FORCE,
			      SQL_OUTBOX_ANY_DUE_NOW));
	int rc;

	bind_due(stmt, d);
	rc = sqlite3_step(stmt);
	*any = rc == SQLITE_ROW && sqlite3_column_int(stmt, 0) != 0;
	sqlite3_reset(stmt);
	return rc == SQLITE_ROW ? VULNID_OK : store_fail(st, rc, "outbox", err);
}

vulnid_status
store_outbox_claim_due(store *st, const store_outbox_due *d, const char *until, int limit,
		       gint64 *claimed, GError **err)
{
	PREPARE(stmt, due_sql(d, SQL_OUTBOX_CLAIM_DUE_CAUSE, SQL_OUTBOX_CLAIM_DUE_FORCE,
			      SQL_OUTBOX_CLAIM_DUE_NOW));

	bind_due(stmt, d);
	store_bind_text(stmt, 5, until);
	sqlite3_bind_int(stmt, 6, limit);
	return step_changes(st, stmt, claimed, err);
}

vulnid_status
store_outbox_defer_unreached(store *st, const char *reason, const char *now,
			     const char *created_after, gint64 *items, GError **err)
{
	vulnid_status s;

	{
		PREPARE(stmt, SQL_OUTBOX_UNREACHED_RECIPIENTS);

		store_bind_text(stmt, 1, reason);
		store_bind_text(stmt, 2, now);
		store_bind_text(stmt, 4, created_after);
		s = store_step_reset(st, stmt, "outbox", err);
	}
	if (s != VULNID_OK)
		return s;
	{
		PREPARE(stmt, SQL_OUTBOX_UNREACHED);

		store_bind_text(stmt, 1, reason);
		store_bind_text(stmt, 2, now);
		store_bind_text(stmt, 4, created_after);
		return step_changes(st, stmt, items, err);
	}
}

void
store_outbox_item_free(store_outbox_item *it)
{
	if (it == NULL)
		return;
	g_free(it->created);
	g_free(it->message_id);
	g_free(it->entry);
	g_free(it->kind);
	g_free(it->envelope_from);
	g_free(it);
}

vulnid_status
store_outbox_claimed(store *st, const char *process_token, const char *run_token, const char *now,
		     GPtrArray *items, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_CLAIMED);
	int rc;

	store_bind_text(stmt, 1, process_token);
	store_bind_text(stmt, 2, now);
	store_bind_text(stmt, 3, run_token);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		store_outbox_item *it = g_new0(store_outbox_item, 1);

		it->id = sqlite3_column_int64(stmt, 0);
		it->created = store_col_text(stmt, 1);
		it->message_id = store_col_text(stmt, 2);
		it->entry = store_col_text(stmt, 3);
		it->kind = store_col_text(stmt, 4);
		it->envelope_from = store_col_text(stmt, 5);
		it->attempts = sqlite3_column_int64(stmt, 6);
		it->cause = sqlite3_column_int64(stmt, 7);
		it->claim_until = sqlite3_column_int64(stmt, 8);
		g_ptr_array_add(items, it);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? VULNID_OK : store_fail(st, rc, "outbox", err);
}

vulnid_status
store_outbox_pending_recipients(store *st, gint64 id, GPtrArray *out, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_PENDING_RECIPIENTS);

	sqlite3_bind_int64(stmt, 1, id);
	return step_strings(st, stmt, out, err);
}

vulnid_status
store_outbox_requeue(store *st, gint64 id, const char *now, gboolean *found, GError **err)
{
	gint64 n = 0;
	vulnid_status s;

	{
		PREPARE(stmt, SQL_OUTBOX_REQUEUE);

		store_bind_text(stmt, 1, now);
		sqlite3_bind_int64(stmt, 2, id);
		s = step_changes(st, stmt, &n, err);
	}
	*found = n == 1;
	if (s != VULNID_OK || !*found)
		return s;
	{
		PREPARE(stmt, SQL_OUTBOX_REQUEUE_RECIPIENTS);

		store_bind_text(stmt, 1, now);
		sqlite3_bind_int64(stmt, 2, id);
		return store_step_reset(st, stmt, "outbox", err);
	}
}

static vulnid_status
find_ref(store *st, const char *sql, const char *value, store_outbox_ref **out, GError **err)
{
	PREPARE(stmt, sql);
	int rc;

	store_bind_text(stmt, 1, value);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		store_outbox_ref *r = g_new0(store_outbox_ref, 1);

		r->id = sqlite3_column_int64(stmt, 0);
		r->kind = store_col_text(stmt, 1);
		r->entry = store_col_text(stmt, 2);
		r->message_id = store_col_text(stmt, 3);
		r->cause = sqlite3_column_int64(stmt, 4);
		*out = r;
	}
	sqlite3_reset(stmt);
	if (rc == SQLITE_DONE)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no outbox item for '%s'", value);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

vulnid_status
store_outbox_find_by_envelope(store *st, const char *address, store_outbox_ref **out, GError **err)
{
	return find_ref(st, SQL_OUTBOX_FIND_BY_ENVELOPE, address, out, err);
}

vulnid_status
store_outbox_find_by_message_id(store *st, const char *msgid, store_outbox_ref **out, GError **err)
{
	return find_ref(st, SQL_OUTBOX_FIND_BY_MESSAGE_ID, msgid, out, err);
}

vulnid_status
store_outbox_recipient_match(store *st, gint64 id, const char *address, char **out, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_RECIPIENT_MATCH);
	int rc;

	sqlite3_bind_int64(stmt, 1, id);
	store_bind_text(stmt, 2, address);
	rc = sqlite3_step(stmt);
	*out = rc == SQLITE_ROW ? store_col_text(stmt, 0) : NULL;
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "outbox", err);
	return VULNID_OK;
}

vulnid_status
store_outbox_recipient_bounce(store *st, gint64 id, const char *address, const char *reason,
			      const char *now, gboolean *changed, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_RECIPIENT_BOUNCE);
	gint64 n = 0;
	vulnid_status s;

	store_bind_text(stmt, 1, reason);
	store_bind_text(stmt, 2, now);
	sqlite3_bind_int64(stmt, 3, id);
	store_bind_text(stmt, 4, address);
	s = step_changes(st, stmt, &n, err);
	*changed = n > 0;
	return s;
}

vulnid_status
store_outbox_fail(store *st, gint64 id, const char *reason, const char *now, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_FAIL);

	store_bind_text(stmt, 1, reason);
	store_bind_text(stmt, 2, now);
	sqlite3_bind_int64(stmt, 3, id);
	return store_step_reset(st, stmt, "outbox", err);
}

void
store_outbox_row_free(store_outbox_row *r)
{
	if (r == NULL)
		return;
	g_free(r->created);
	g_free(r->kind);
	g_free(r->entry);
	g_free(r->message_id);
	g_free(r->recipients);
	g_free(r->status);
	g_free(r->next_attempt);
	g_free(r->last_error);
	g_free(r->claimed_until);
	g_free(r->shown);
	g_free(r);
}

static vulnid_status
outbox_list(store *st, const char *sql, const char *now, GPtrArray *rows, GError **err)
{
	PREPARE(stmt, sql);
	int rc;

	store_bind_text(stmt, 1, now);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		store_outbox_row *r = g_new0(store_outbox_row, 1);

		r->id = sqlite3_column_int64(stmt, 0);
		r->created = store_col_text(stmt, 1);
		r->kind = store_col_text(stmt, 2);
		r->entry = store_col_text(stmt, 3);
		r->message_id = store_col_text(stmt, 4);
		r->recipients = store_col_text(stmt, 5);
		r->status = store_col_text(stmt, 6);
		r->attempts = sqlite3_column_int64(stmt, 7);
		r->next_attempt = store_col_text(stmt, 8);
		r->last_error = store_col_text(stmt, 9);
		r->claimed_until = store_col_text(stmt, 10);
		r->shown = store_col_text(stmt, 11);
		g_ptr_array_add(rows, r);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? VULNID_OK : store_fail(st, rc, "outbox", err);
}

vulnid_status
store_outbox_list(store *st, const char *now, gboolean only_deferred, GPtrArray *rows, GError **err)
{
	return outbox_list(st, only_deferred ? SQL_OUTBOX_LIST_DEFERRED : SQL_OUTBOX_LIST, now, rows, err);
}

vulnid_status
store_outbox_list_attention(store *st, const char *now, GPtrArray *rows, GError **err)
{
	return outbox_list(st, SQL_OUTBOX_LIST_ATTENTION, now, rows, err);
}

vulnid_status
store_outbox_mark_shown(store *st, gint64 id, const char *now, GError **err)
{
	PREPARE(stmt, SQL_OUTBOX_MARK_SHOWN);

	store_bind_text(stmt, 1, now);
	sqlite3_bind_int64(stmt, 2, id);
	return store_step_reset(st, stmt, "outbox", err);
}
