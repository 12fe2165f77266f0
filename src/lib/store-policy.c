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
static const char SQL_LEDGER_SUSPECT_ANSWERS[] =
	"SELECT count(*) FROM mail_ledger WHERE address = ?1 AND created >= ?2"
	" AND class = 'answer' AND suspect = 1";
static const char SQL_OUTBOX_SIZE[] = "SELECT length(data) FROM outbox WHERE id = ?3";
static const char SQL_HELD_COUNT[] =
	"SELECT count(*) FROM tokens WHERE entry = ?1 AND role = 'held'";
static const char SQL_HOLD[] =
	"INSERT INTO tokens (sha256, entry, role, address, created) VALUES (?, ?, 'held', ?, ?)";
static const char SQL_VENDOR_TOLD[] =
	"SELECT address FROM tokens WHERE entry = ?1 AND role = 'vendor'"
	" AND address IS NOT NULL AND created >= coalesce((SELECT max(created)"
	" FROM records WHERE entry = ?1 AND kind = 'release'), '')";

/* Rate limits: ?1 the key, ?2 since.  Requests and additions are counted
 * apart for the sender's own keys, together for the wider ones. */
#define RATE_REQUESTS "('request', 'rejected', 'help')"
#define RATE_ADDITIONS "('entry', 'commands')"
#define RATE_BY_KEY \
	"SELECT count(*) FROM signatures s JOIN messages m ON m.id = s.message" \
	" WHERE s.fingerprint = ?1 COLLATE NOCASE AND m.received >= ?2 AND m.disposition IN "
#define RATE_BY_FROM_VERIFIED \
	"SELECT count(*) FROM messages WHERE from_addr = ?1 COLLATE NOCASE" \
	" AND from_verified IS NOT NULL AND received >= ?2 AND disposition IN "
#define RATE_BY_SENDER \
	"SELECT count(*) FROM messages WHERE (from_addr = ?1 COLLATE NOCASE OR" \
	" envelope_from = ?1 COLLATE NOCASE) AND received >= ?2 AND disposition IN "
#define RATE_ANY " AND disposition IN ('request', 'rejected', 'help', 'entry', 'commands')"
static const char SQL_RATE_KEY_REQUESTS[] = RATE_BY_KEY RATE_REQUESTS;
static const char SQL_RATE_KEY_ADDITIONS[] = RATE_BY_KEY RATE_ADDITIONS;
static const char SQL_RATE_FROM_VERIFIED_REQUESTS[] = RATE_BY_FROM_VERIFIED RATE_REQUESTS;
static const char SQL_RATE_FROM_VERIFIED_ADDITIONS[] = RATE_BY_FROM_VERIFIED RATE_ADDITIONS;
static const char SQL_RATE_SENDER_REQUESTS[] = RATE_BY_SENDER RATE_REQUESTS;
static const char SQL_RATE_SENDER_ADDITIONS[] = RATE_BY_SENDER RATE_ADDITIONS;
static const char SQL_RATE_NETWORK[] =
	"SELECT count(*) FROM messages WHERE client_net = ?1 AND received >= ?2" RATE_ANY;
static const char SQL_RATE_DOMAIN[] =
	"SELECT count(*) FROM messages WHERE sender_domain = ?1 COLLATE NOCASE AND received >= ?2"
	RATE_ANY;
static const char SQL_RATE_EVERYONE[] =
	"SELECT count(*) FROM messages WHERE ?1 IS NULL AND received >= ?2" RATE_ANY;
static const char SQL_VENDOR_KEYS[] =
	"SELECT count(*) FROM vendors WHERE replace(upper(key_fpr), ' ', '') = ?1";
static const char SQL_RATE_NOTICES[] =
	"SELECT count(*) FROM outbox o JOIN outbox_recipients r ON r.outbox = o.id"
	" WHERE o.kind = 'rate-limited' AND r.address = ?1 COLLATE NOCASE AND o.created >= ?2";

static const char SQL_BODY_REPEATED[] =
	"SELECT 1 FROM messages WHERE from_addr = ? COLLATE NOCASE AND received >= ?"
	" AND dedup_key LIKE ? AND id <> ? LIMIT 1";

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
store_policy_suspect_answers(store *st, const char *address, const char *since, gint64 *n,
			     GError **err)
{
	return ledger_count(st, SQL_LEDGER_SUSPECT_ANSWERS, address, since, 0, n, err);
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
	static const char *const sql[][2] = {	/* additions, requests */
		[STORE_RATE_KEY] = { SQL_RATE_KEY_ADDITIONS, SQL_RATE_KEY_REQUESTS },
		[STORE_RATE_FROM_VERIFIED] = { SQL_RATE_FROM_VERIFIED_ADDITIONS,
					       SQL_RATE_FROM_VERIFIED_REQUESTS },
		[STORE_RATE_SENDER] = { SQL_RATE_SENDER_ADDITIONS, SQL_RATE_SENDER_REQUESTS },
		[STORE_RATE_NETWORK] = { SQL_RATE_NETWORK, SQL_RATE_NETWORK },
		[STORE_RATE_DOMAIN] = { SQL_RATE_DOMAIN, SQL_RATE_DOMAIN },
		[STORE_RATE_EVERYONE] = { SQL_RATE_EVERYONE, SQL_RATE_EVERYONE },
	};

	g_return_val_if_fail((gsize) key < G_N_ELEMENTS(sql), VULNID_ERR_INTERNAL);
	return rate_count(st, sql[key][requests ? 1 : 0], key == STORE_RATE_EVERYONE ? NULL : value,
			  since, n, err);
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
	g_autofree char *like = g_strdup_printf("%%:%s", body_sha256);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_BODY_REPEATED, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, who);
	store_bind_text(stmt, 2, since);
	store_bind_text(stmt, 3, like);
	sqlite3_bind_int64(stmt, 4, msg);
	return step_exists(st, stmt, "messages", found, err);
}
