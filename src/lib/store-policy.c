/* store-policy.c - the statements of the mail policy, the rate limits and
 * the loop brake, named and prepared once per connection */
#include "autoconfig.h"

#include <sqlite3.h>

#include "store-db.h"
#include "store-policy.h"

static const char SQL_LEDGER_ADD[] =
	"INSERT INTO mail_ledger (created, cause, outbox, kind, class, third_party, suspect,"
	" address, domain, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
/* The ledger counts: ?1 an address or domain, ?2 since, ?3 a cause. */
static const char SQL_LEDGER_UNASKED_TO_ADDRESS[] =
	"SELECT count(*) FROM mail_ledger WHERE address = ?1 AND created >= ?2"
	" AND third_party = 1 AND class IN ('unsolicited', 'answer')";
static const char SQL_LEDGER_UNASKED_TO_DOMAIN[] =
	"SELECT count(*) FROM mail_ledger WHERE domain = ?1 AND created >= ?2"
	" AND third_party = 1 AND class IN ('unsolicited', 'answer')";
static const char SQL_LEDGER_THIRD_PARTIES_OF[] =
	"SELECT count(DISTINCT address) FROM mail_ledger WHERE cause = ?3"
	" AND third_party = 1 AND address <> ?1 COLLATE NOCASE";
static const char SQL_LEDGER_THIRD_PARTY_BYTES[] =
	"SELECT coalesce(sum(bytes), 0) FROM mail_ledger WHERE cause = ?3 AND third_party = 1";
/* On its own index (mail_ledger_suspect, schema 8): the other answers to
 * the address are not read; and counted up to ?3, the brake's limit, never
 * further. */
static const char SQL_LEDGER_SUSPECT_ANSWERS[] =
	"SELECT count(*) FROM (SELECT 1 FROM mail_ledger INDEXED BY mail_ledger_suspect"
	" WHERE address = ?1 AND created >= ?2 AND class = 'answer' AND suspect = 1 LIMIT ?3)";
static const char SQL_OUTBOX_SIZE[] = "SELECT length(data) FROM outbox WHERE id = ?3";
static const char SQL_HELD_COUNT[] =
	"SELECT count(*) FROM tokens WHERE entry = ?1 AND role = 'held'";
static const char SQL_HOLD[] =
	"INSERT INTO tokens (sha256, entry, role, address, created) VALUES (?, ?, 'held', ?, ?)";
static const char SQL_VENDOR_TOLD[] =
	"SELECT address FROM tokens WHERE entry = ?1 AND role = 'vendor'"
	" AND address IS NOT NULL AND created >= coalesce((SELECT max(created)"
	" FROM records WHERE entry = ?1 AND kind = 'release'), '')";

/* Rate limits: the counters of the key (schema 8: kept by triggers on
 * messages and signatures, per minute), ?1 its kind, ?2 its value, ?3
 * since (the minute that holds it counts whole), ?4 the class (request or
 * addition; NULL: both).  Requests and additions are counted apart for the
 * sender's own keys, together for the wider ones.  At most 61 minutes of
 * two classes are read, whatever the hour holds. */
static const char SQL_RATE_COUNT[] =
	"SELECT coalesce(sum(n), 0) FROM rate_counts WHERE kind = ?1 AND value = lower(?2)"
	" AND minute >= substr(?3, 1, 16) AND (?4 IS NULL OR class = ?4)";
static const char SQL_RATE_PURGE[] = "DELETE FROM rate_counts WHERE minute < substr(?1, 1, 16)";
static const char SQL_VENDOR_KEYS[] =
	"SELECT count(*) FROM vendors WHERE replace(upper(key_fpr), ' ', '') = ?1";
/* The ledger has a row for each recipient of every mail queued, on an
 * index by address and time: the notices to one address in the hour are
 * found among what was sent to it then (bounded by the limits), never
 * among every recipient ever. */
static const char SQL_RATE_NOTICES[] =
	"SELECT count(*) FROM mail_ledger WHERE address = ?1 AND created >= ?2 AND kind = 'rate-limited'";

/* The body's SHA-256 ends the dedup key ("mid:ID:SHA", "hdr:SHA:SHA"); on
 * an index of sender and body (messages_from_body, schema 8), so that only
 * that sender's mails with that body are read, not all of its hour. */
static const char SQL_BODY_REPEATED[] =
	"SELECT 1 FROM messages INDEXED BY messages_from_body WHERE from_addr = ?1 COLLATE NOCASE"
	" AND substr(dedup_key, -64) = ?3 AND received >= ?2 AND id <> ?4 LIMIT 1";

/* The one integer a counting statement returns; reset after. */
static vulnid_status
step_count(store *st, sqlite3_stmt *stmt, const char *what, gint64 *n, GError **err)
{
	int rc = sqlite3_step(stmt);

	*n = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
	sqlite3_reset(stmt);
	return rc == SQLITE_ROW ? VULNID_OK : store_fail(st, rc, what, err);
}

/* Whether the statement returns a row; reset after. */
static vulnid_status
step_exists(store *st, sqlite3_stmt *stmt, const char *what, gboolean *found, GError **err)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	*found = rc == SQLITE_ROW;
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? VULNID_OK : store_fail(st, rc, what, err);
}

/* A ledger count: ?1 a, ?2 b, ?3 num (a statement uses what it needs). */
static vulnid_status
ledger_count(store *st, const char *sql, const char *a, const char *b, gint64 num, gint64 *n,
	     GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, sql, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, a);
	store_bind_text(stmt, 2, b);
	sqlite3_bind_int64(stmt, 3, num);
	return step_count(st, stmt, "mail_ledger", n, err);
}

vulnid_status
store_policy_ledger_add(store *st, const store_ledger_row *r, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_LEDGER_ADD, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, r->created);
	if (r->cause > 0)
		sqlite3_bind_int64(stmt, 2, r->cause);
	sqlite3_bind_int64(stmt, 3, r->outbox);
	store_bind_text(stmt, 4, r->kind);
	store_bind_text(stmt, 5, r->class_name);
	sqlite3_bind_int(stmt, 6, r->third_party);
	sqlite3_bind_int(stmt, 7, r->suspect);
	store_bind_text(stmt, 8, r->address);
	store_bind_text(stmt, 9, r->domain);
	sqlite3_bind_int64(stmt, 10, r->bytes);
	return store_step_reset(st, stmt, "mail_ledger", err);
}

vulnid_status
store_policy_unasked_to_address(store *st, const char *address, const char *since, gint64 *n,
				GError **err)
{
	return ledger_count(st, SQL_LEDGER_UNASKED_TO_ADDRESS, address, since, 0, n, err);
}

vulnid_status
store_policy_unasked_to_domain(store *st, const char *domain, const char *since, gint64 *n,
			       GError **err)
{
	return ledger_count(st, SQL_LEDGER_UNASKED_TO_DOMAIN, domain, since, 0, n, err);
}

vulnid_status
store_policy_third_parties_of(store *st, gint64 cause, const char *address, gint64 *n, GError **err)
{
	return ledger_count(st, SQL_LEDGER_THIRD_PARTIES_OF, address, NULL, cause, n, err);
}

vulnid_status
store_policy_third_party_bytes(store *st, gint64 cause, gint64 *n, GError **err)
{
	return ledger_count(st, SQL_LEDGER_THIRD_PARTY_BYTES, NULL, NULL, cause, n, err);
}

vulnid_status
store_policy_suspect_answers(store *st, const char *address, const char *since, gint64 upto,
			     gint64 *n, GError **err)
{
	return ledger_count(st, SQL_LEDGER_SUSPECT_ANSWERS, address, since, upto, n, err);
}

vulnid_status
store_policy_outbox_size(store *st, gint64 id, gint64 *n, GError **err)
{
	return ledger_count(st, SQL_OUTBOX_SIZE, NULL, NULL, id, n, err);
}

vulnid_status
store_policy_held_count(store *st, const char *entry_id, gint64 *n, GError **err)
{
	return ledger_count(st, SQL_HELD_COUNT, entry_id, NULL, 0, n, err);
}

vulnid_status
store_policy_hold(store *st, const char *sha256, const char *entry_id, const char *addresses,
		  const char *now, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_HOLD, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	store_bind_text(stmt, 2, entry_id);
	store_bind_text(stmt, 3, addresses);
	store_bind_text(stmt, 4, now);
	return store_step_reset(st, stmt, "tokens", err);
}

vulnid_status
store_policy_vendor_told(store *st, const char *entry_id, GPtrArray *out, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_TOLD, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, entry_id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(out, store_col_text(stmt, 0));
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? VULNID_OK : store_fail(st, rc, "tokens", err);
}

/* count(*) with ?1 = a and ?2 = since, as the rate limits count. */
static vulnid_status
rate_count(store *st, const char *sql, const char *a, const char *since, gint64 *n, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, sql, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, a);
	store_bind_text(stmt, 2, since);
	return step_count(st, stmt, "messages", n, err);
}

vulnid_status
store_policy_rate_count(store *st, store_rate_key key, gboolean requests, const char *value,
			const char *since, gint64 *n, GError **err)
{
	static const char *const kinds[] = {
		[STORE_RATE_KEY] = "key",
		[STORE_RATE_FROM_VERIFIED] = "from",
		[STORE_RATE_SENDER] = "sender",
		[STORE_RATE_NETWORK] = "network",
		[STORE_RATE_DOMAIN] = "domain",
		[STORE_RATE_EVERYONE] = "everyone",
	};
	vulnid_status s;
	sqlite3_stmt *stmt;

	g_return_val_if_fail((gsize) key < G_N_ELEMENTS(kinds), VULNID_ERR_INTERNAL);
	stmt = store_prepare_cached(st, SQL_RATE_COUNT, &s, err);
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, kinds[key]);
	store_bind_text(stmt, 2, key == STORE_RATE_EVERYONE ? "" : value);
	store_bind_text(stmt, 3, since);
	store_bind_text(stmt, 4, key > STORE_RATE_SENDER ? NULL : requests ? "request" : "addition");
	return step_count(st, stmt, "rate_counts", n, err);
}

vulnid_status
store_policy_rate_purge(store *st, const char *before, gint64 *removed, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_RATE_PURGE, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, before);
	s = store_step_reset(st, stmt, "rate_counts", err);
	*removed = s == VULNID_OK ? sqlite3_changes(store_db(st)) : 0;
	return s;
}

vulnid_status
store_policy_vendor_keys(store *st, const char *fpr, gint64 *n, GError **err)
{
	return rate_count(st, SQL_VENDOR_KEYS, fpr, NULL, n, err);
}

vulnid_status
store_policy_rate_notices(store *st, const char *address, const char *since, gint64 *n, GError **err)
{
	return rate_count(st, SQL_RATE_NOTICES, address, since, n, err);
}

vulnid_status
store_policy_body_repeated(store *st, const char *who, const char *since, const char *body_sha256,
			   gint64 msg, gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_BODY_REPEATED, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, who);
	store_bind_text(stmt, 2, since);
	store_bind_text(stmt, 3, body_sha256);
	sqlite3_bind_int64(stmt, 4, msg);
	return step_exists(st, stmt, "messages", found, err);
}
