/* store.c - schema, migrations and row-level access to vulnid.db */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store-db.h"
#include "crypto.h"
#include "ids.h"
#include "store.h"

struct store {
	sqlite3 *db;
	char *path;
	gboolean in_txn;
	gint64 saved_cache_size;	/* PRAGMA cache_size to restore, 0: none */
	GHashTable *stmt_cache;		/* SQL text -> sqlite3_stmt, see store_prepare_cached() */
	GHashTable *stmt_idle;		/* SQL text -> sqlite3_stmt kept (store_keep_statements) */
	int migrated_from;		/* the schema found, when this open migrated it; else -1 */
	/* The audit chain's head as this transaction last wrote it (see
	 * store_audit_head_cached()); "" when not known. */
	char audit_head[65];
};

/* Statements handed out by store_prepare() of a store that keeps them,
 * while in use: sqlite3_stmt -> store.  For any thread. */
static GHashTable *stmt_lent;
static GMutex stmt_lock;

/* Tables whose rows are never changed or removed once written. */
static const char *const append_only_tables[] = {
	"blobs", "messages", "entries", "records", "attachments", "quarantine", "audit",
	"bounces",
};

/* The dispositions the rate limits count, and their class. */
#define RATE_COUNTED "'request', 'rejected', 'help', 'entry', 'commands'"
#define RATE_CLASS(d) "CASE WHEN " d " IN ('entry', 'commands') THEN 'addition' ELSE 'request' END"
/* Counters made from the messages of the last two hours (schema 8). */
#define RATE_BACKFILL_SINCE "strftime('%Y-%m-%dT%H:%M', 'now', '-2 hours')"
#define RATE_BACKFILL(kind_value, cond) \
	"INSERT INTO rate_counts (kind, value, minute, class, n)" \
	"  SELECT " kind_value ", substr(received, 1, 16), " RATE_CLASS("disposition") ", count(*)" \
	"  FROM messages WHERE received >= " RATE_BACKFILL_SINCE \
	"    AND disposition IN (" RATE_COUNTED ") AND " cond \
	"  GROUP BY 2, 3, 4 ON CONFLICT DO UPDATE SET n = n + excluded.n;"

/* Forward migrations: migrations[v] takes the schema from version v to v+1. */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE blobs ("
	"  sha256 TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, data BLOB NOT NULL,"
	"  sealed INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE messages ("
	"  id INTEGER PRIMARY KEY, received TEXT NOT NULL,"
	"  raw_sha256 TEXT NOT NULL REFERENCES blobs(sha256),"
	"  dedup_key TEXT NOT NULL UNIQUE, message_id TEXT,"
	"  envelope_from TEXT, envelope_to TEXT, from_addr TEXT, subject TEXT,"
	"  disposition TEXT NOT NULL);"
	"CREATE TABLE entries ("
	"  id TEXT PRIMARY KEY, year INTEGER NOT NULL, number INTEGER NOT NULL,"
	"  digest TEXT NOT NULL UNIQUE, created TEXT NOT NULL, embargo TEXT,"
	"  message INTEGER NOT NULL REFERENCES messages(id), UNIQUE (year, number));"
	"CREATE TABLE records ("
	"  id INTEGER PRIMARY KEY, entry TEXT NOT NULL REFERENCES entries(id),"
	"  seq INTEGER NOT NULL, created TEXT NOT NULL, kind TEXT NOT NULL,"
	"  message INTEGER REFERENCES messages(id), author TEXT, author_name TEXT,"
	"  role TEXT NOT NULL, auth TEXT NOT NULL, subject TEXT, fields TEXT NOT NULL,"
	"  body TEXT NOT NULL, sha256 TEXT NOT NULL, sealed TEXT, opens INTEGER,"
	"  UNIQUE (entry, seq));"
	"CREATE TABLE attachments ("
	"  record INTEGER NOT NULL REFERENCES records(id), idx INTEGER NOT NULL,"
	"  filename TEXT, content_type TEXT NOT NULL, size INTEGER NOT NULL,"
	"  sha256 TEXT NOT NULL REFERENCES blobs(sha256), PRIMARY KEY (record, idx));"
	"CREATE TABLE quarantine ("
	"  id INTEGER PRIMARY KEY, message INTEGER NOT NULL REFERENCES messages(id),"
	"  created TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL);"
	"CREATE TABLE outbox ("
	"  id INTEGER PRIMARY KEY, created TEXT NOT NULL, kind TEXT NOT NULL,"
	"  entry TEXT, cause INTEGER REFERENCES messages(id),"
	"  message_id TEXT NOT NULL UNIQUE, envelope_from TEXT NOT NULL,"
	"  recipients TEXT NOT NULL, data BLOB NOT NULL,"
	"  status TEXT NOT NULL DEFAULT 'queued', attempts INTEGER NOT NULL DEFAULT 0,"
	"  next_attempt TEXT NOT NULL, last_error TEXT, updated TEXT NOT NULL);"
	"CREATE INDEX outbox_due ON outbox(status, next_attempt);"
	"CREATE INDEX outbox_cause ON outbox(cause);"
	"CREATE INDEX records_message ON records(message);"
	/* rate limits count a sender's recent mail */
	"CREATE INDEX messages_from_received ON messages(from_addr COLLATE NOCASE, received);"
	"CREATE INDEX messages_envfrom_received ON messages(envelope_from COLLATE NOCASE, received);"
	"CREATE TABLE audit (seq INTEGER PRIMARY KEY, line TEXT NOT NULL, hash TEXT NOT NULL UNIQUE);"
	/* An outbox item's message never changes; only its delivery state does. */
	"CREATE TRIGGER outbox_no_delete BEFORE DELETE ON outbox"
	"  BEGIN SELECT RAISE(ABORT, 'outbox is append-only'); END;"
	"CREATE TRIGGER outbox_immutable BEFORE UPDATE OF"
	"  id, created, kind, entry, cause, message_id, envelope_from, recipients, data ON outbox"
	"  BEGIN SELECT RAISE(ABORT, 'outbox messages are immutable'); END;"
	/* Per-recipient delivery state of outbox items. */
	"CREATE TABLE outbox_recipients ("
	"  outbox INTEGER NOT NULL REFERENCES outbox(id), address TEXT NOT NULL,"
	"  status TEXT NOT NULL DEFAULT 'queued', reply TEXT, updated TEXT NOT NULL,"
	"  PRIMARY KEY (outbox, address));"
	"CREATE INDEX outbox_envelope ON outbox(envelope_from);"
	/* Delivery status notifications matched to what we sent. */
	"CREATE TABLE bounces ("
	"  id INTEGER PRIMARY KEY, message INTEGER NOT NULL REFERENCES messages(id),"
	"  outbox INTEGER REFERENCES outbox(id), recipient TEXT, action TEXT,"
	"  status TEXT, diagnostic TEXT, created TEXT NOT NULL);"
	/* The vendors directory: operator-maintained, changes audited. */
	"CREATE TABLE vendors ("
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE,"
	"  notes TEXT, key_fpr TEXT, key_data TEXT, encryption TEXT, languages TEXT,"
	"  expires TEXT, created TEXT NOT NULL, updated TEXT NOT NULL);"
	"CREATE TABLE vendor_aliases ("
	"  vendor INTEGER NOT NULL REFERENCES vendors(id),"
	"  alias TEXT NOT NULL UNIQUE COLLATE NOCASE);"
	"CREATE TABLE vendor_domains ("
	"  vendor INTEGER NOT NULL REFERENCES vendors(id),"
	"  domain TEXT NOT NULL UNIQUE COLLATE NOCASE);"
	"CREATE TABLE vendor_contacts ("
	"  vendor INTEGER NOT NULL REFERENCES vendors(id),"
	"  address TEXT NOT NULL COLLATE NOCASE, source TEXT NOT NULL, added TEXT NOT NULL,"
	"  PRIMARY KEY (vendor, address));"
	/* Capability tokens: only their SHA-256 is kept. */
	"CREATE TABLE tokens ("
	"  sha256 TEXT PRIMARY KEY, entry TEXT NOT NULL REFERENCES entries(id),"
	"  role TEXT NOT NULL, address TEXT, created TEXT NOT NULL);"
	/* Signatures already acted on: a replayed signed mail does nothing. */
	"CREATE TABLE signatures ("
	"  sha256 TEXT PRIMARY KEY, fingerprint TEXT, message INTEGER REFERENCES messages(id),"
	"  created TEXT NOT NULL);"
	/* Entries waiting for the daily announcement digest. */
	"CREATE TABLE announce_pending ("
	"  entry TEXT PRIMARY KEY REFERENCES entries(id), created TEXT NOT NULL,"
	"  outbox INTEGER REFERENCES outbox(id));"
	/* The append-only triggers for the other tables follow (see below). */
	,
	/* 1 -> 2: blobs stream into the database.  A BEFORE INSERT trigger on
	 * blobs makes SQLite build the whole new row, zeroblob(size) included,
	 * in memory (a 50 MiB mail cost 50 MiB of RAM), so the no-replace
	 * check moves to a small side table: every blob row, once inserted,
	 * adds its key to blob_keys (an AFTER INSERT trigger, which does not
	 * expand the row), and blob_keys refuses a key or a row that it has
	 * already seen.  INSERT OR REPLACE INTO blobs thus still fails, with
	 * or without recursive_triggers: the replacing row's key is there. */
	"CREATE TABLE blob_keys ("
	"  sha256 TEXT PRIMARY KEY, blob INTEGER NOT NULL UNIQUE);"
	"INSERT INTO blob_keys (sha256, blob) SELECT sha256, rowid FROM blobs;"
	"DROP TRIGGER blobs_no_replace;"
	"CREATE TRIGGER blobs_keyed AFTER INSERT ON blobs"
	"  BEGIN INSERT INTO blob_keys (sha256, blob) VALUES (NEW.sha256, NEW.rowid); END;"
	"CREATE TRIGGER blob_keys_no_replace BEFORE INSERT ON blob_keys"
	"  WHEN EXISTS (SELECT 1 FROM blob_keys WHERE sha256 = NEW.sha256 OR blob = NEW.blob)"
	"  BEGIN SELECT RAISE(ABORT, 'blobs is append-only'); END;"
	"CREATE TRIGGER blob_keys_no_update BEFORE UPDATE ON blob_keys"
	"  BEGIN SELECT RAISE(ABORT, 'blobs is append-only'); END;"
	"CREATE TRIGGER blob_keys_no_delete BEFORE DELETE ON blob_keys"
	"  BEGIN SELECT RAISE(ABORT, 'blobs is append-only'); END;",
	/* 2 -> 3: an outgoing mail as signed for its first attempt, so that
	 * retries send the same bytes without a gpg process each (mode is
	 * [crypto] sign as it was then). */
	"CREATE TABLE outbox_signed ("
	"  outbox INTEGER PRIMARY KEY REFERENCES outbox(id), mode TEXT NOT NULL,"
	"  created TEXT NOT NULL, data BLOB NOT NULL);"
	"CREATE TRIGGER outbox_signed_no_replace BEFORE INSERT ON outbox_signed"
	"  WHEN EXISTS (SELECT 1 FROM outbox_signed WHERE outbox = NEW.outbox)"
	"  BEGIN SELECT RAISE(ABORT, 'outbox_signed is append-only'); END;"
	"CREATE TRIGGER outbox_signed_no_update BEFORE UPDATE ON outbox_signed"
	"  BEGIN SELECT RAISE(ABORT, 'outbox_signed is append-only'); END;"
	"CREATE TRIGGER outbox_signed_no_delete BEFORE DELETE ON outbox_signed"
	"  BEGIN SELECT RAISE(ABORT, 'outbox_signed is append-only'); END;",
	/* 3 -> 4: the key behind a record whose auth object withholds it (an
	 * anonymous researcher's), with the salt of the commitment to it that
	 * the record carries; never published. */
	"CREATE TABLE record_signers ("
	"  record INTEGER PRIMARY KEY REFERENCES records(id), fingerprint TEXT NOT NULL,"
	"  salt TEXT NOT NULL);"
	"CREATE TRIGGER record_signers_no_replace BEFORE INSERT ON record_signers"
	"  WHEN EXISTS (SELECT 1 FROM record_signers WHERE record = NEW.record)"
	"  BEGIN SELECT RAISE(ABORT, 'record_signers is append-only'); END;"
	"CREATE TRIGGER record_signers_no_update BEFORE UPDATE ON record_signers"
	"  BEGIN SELECT RAISE(ABORT, 'record_signers is append-only'); END;"
	"CREATE TRIGGER record_signers_no_delete BEFORE DELETE ON record_signers"
	"  BEGIN SELECT RAISE(ABORT, 'record_signers is append-only'); END;",
	/* 4 -> 5: abuse.  Rate limits keyed on what a sender cannot choose
	 * freely: the SMTP client address (and its /24 or /64), the domain of
	 * the envelope sender, a From that the operator's MTA authenticated
	 * (DMARC or aligned DKIM).  mail_ledger: one row per recipient of
	 * every mail the robot queues because of a mail (or unasked), what the
	 * outgoing-mail policy (policy.c) counts: caps per recipient and
	 * domain and day, third parties and bytes per mail, the loop brake. */
	"ALTER TABLE messages ADD COLUMN client_address TEXT;"
	"ALTER TABLE messages ADD COLUMN client_net TEXT;"
	"ALTER TABLE messages ADD COLUMN sender_domain TEXT;"
	"ALTER TABLE messages ADD COLUMN from_verified TEXT;"
	"CREATE INDEX messages_net_received ON messages(client_net, received);"
	"CREATE INDEX messages_domain_received ON messages(sender_domain COLLATE NOCASE, received);"
	"CREATE INDEX messages_received ON messages(received);"
	"CREATE TABLE mail_ledger ("
	"  id INTEGER PRIMARY KEY, created TEXT NOT NULL, cause INTEGER REFERENCES messages(id),"
	"  outbox INTEGER REFERENCES outbox(id), kind TEXT NOT NULL, class TEXT NOT NULL,"
	"  third_party INTEGER NOT NULL, suspect INTEGER NOT NULL DEFAULT 0,"
	"  address TEXT NOT NULL COLLATE NOCASE, domain TEXT NOT NULL COLLATE NOCASE,"
	"  bytes INTEGER NOT NULL);"
	"CREATE INDEX mail_ledger_address ON mail_ledger(address, created);"
	"CREATE INDEX mail_ledger_domain ON mail_ledger(domain, created);"
	"CREATE INDEX mail_ledger_cause ON mail_ledger(cause);"
	"CREATE TRIGGER mail_ledger_no_replace BEFORE INSERT ON mail_ledger"
	"  WHEN EXISTS (SELECT 1 FROM mail_ledger WHERE id = NEW.id)"
	"  BEGIN SELECT RAISE(ABORT, 'mail_ledger is append-only'); END;"
	"CREATE TRIGGER mail_ledger_no_update BEFORE UPDATE ON mail_ledger"
	"  BEGIN SELECT RAISE(ABORT, 'mail_ledger is append-only'); END;"
	"CREATE TRIGGER mail_ledger_no_delete BEFORE DELETE ON mail_ledger"
	"  BEGIN SELECT RAISE(ABORT, 'mail_ledger is append-only'); END;",
	/* 5 -> 6: what the robot decrypted, so that the same ciphertext or
	 * plaintext sent again for another entry, by another sender or as a
	 * new request is a replay (intake.c): the SHA-256 of the session key
	 * and of the plaintext, the entry it went to (NULL: none), the
	 * address replies went to and the valid signer. */
	"CREATE TABLE decrypted ("
	"  id INTEGER PRIMARY KEY, message INTEGER NOT NULL REFERENCES messages(id),"
	"  created TEXT NOT NULL, cipher_sha256 TEXT NOT NULL, plain_sha256 TEXT NOT NULL,"
	"  entry TEXT REFERENCES entries(id), sender TEXT, fingerprint TEXT);"
	"CREATE INDEX decrypted_cipher ON decrypted(cipher_sha256);"
	"CREATE INDEX decrypted_plain ON decrypted(plain_sha256);"
	"CREATE TRIGGER decrypted_no_replace BEFORE INSERT ON decrypted"
	"  WHEN EXISTS (SELECT 1 FROM decrypted WHERE id = NEW.id)"
	"  BEGIN SELECT RAISE(ABORT, 'decrypted is append-only'); END;"
	"CREATE TRIGGER decrypted_no_update BEFORE UPDATE ON decrypted"
	"  BEGIN SELECT RAISE(ABORT, 'decrypted is append-only'); END;"
	"CREATE TRIGGER decrypted_no_delete BEFORE DELETE ON decrypted"
	"  BEGIN SELECT RAISE(ABORT, 'decrypted is append-only'); END;",
	/* 6 -> 7: delivery claims.  A run that delivers an item first claims
	 * it (claim = its token, claim_until = when the claim lapses) in the
	 * transaction that selects it, so that concurrent filters, queue runs
	 * and ticks never send one item at the same time; a crashed run's
	 * claim lapses by itself.  And delivery outcomes only move forward: a
	 * recipient that failed (a bounce, a 5xx, given up) is never made
	 * delivered or deferred again by a delivery attempt, and a delivered
	 * one never becomes pending again (queue retry re-queues failed
	 * recipients only). */
	"ALTER TABLE outbox ADD COLUMN claim TEXT;"
	"ALTER TABLE outbox ADD COLUMN claim_until TEXT;"
	"CREATE TRIGGER outbox_recipients_forward BEFORE UPDATE OF status ON outbox_recipients"
	"  WHEN (OLD.status = 'failed' AND NEW.status IN ('delivered', 'deferred'))"
	"    OR (OLD.status = 'delivered' AND NEW.status IN ('queued', 'deferred'))"
	"  BEGIN SELECT RAISE(ABORT, 'delivery outcomes only move forward'); END;",
	/* 7 -> 8: when vulnid queue list first showed an item that failed;
	 * after that only queue list --all lists it, so that an empty list
	 * means again that nothing needs attention.  queue retry clears it. */
	"ALTER TABLE outbox ADD COLUMN shown TEXT;",
	/* 8 -> 9: volume.  The rate limits count per key, minute and class
	 * (request or addition) in rate_counts, kept by triggers in the
	 * transaction that inserts the message (or the signature, for the
	 * key), so that a mail reads at most 61 minutes of counters per key
	 * instead of every message of the hour; vulnid tick removes minutes
	 * older than two hours.  The counters of the last two hours are made
	 * from messages once, here.  The outbox's pending items in an index of
	 * their own, in the order they are claimed, and the live claims in
	 * another, so that neither the due query nor a claim reads the
	 * backlog; and the loop brake's lookups on indexes of their own. */
	"CREATE TABLE rate_counts ("
	"  kind TEXT NOT NULL, value TEXT NOT NULL, minute TEXT NOT NULL, class TEXT NOT NULL,"
	"  n INTEGER NOT NULL, PRIMARY KEY (kind, value, minute, class)) WITHOUT ROWID;"
	"CREATE INDEX rate_counts_minute ON rate_counts(minute);"
	"CREATE TRIGGER messages_rate_counts AFTER INSERT ON messages"
	"  WHEN NEW.disposition IN (" RATE_COUNTED ")"
	"  BEGIN INSERT INTO rate_counts (kind, value, minute, class, n)"
	"    SELECT k, v, substr(NEW.received, 1, 16), " RATE_CLASS("NEW.disposition") ", 1 FROM ("
	"      SELECT 'sender' AS k, lower(NEW.from_addr) AS v"
	"      UNION SELECT 'sender', lower(NEW.envelope_from)"
	"      UNION SELECT 'from', CASE WHEN NEW.from_verified IS NOT NULL THEN lower(NEW.from_addr) END"
	"      UNION SELECT 'network', NEW.client_net"
	"      UNION SELECT 'domain', lower(NEW.sender_domain)"
	"      UNION SELECT 'everyone', '')"
	"    WHERE v IS NOT NULL AND (v <> '' OR k = 'everyone')"
	"    ON CONFLICT DO UPDATE SET n = n + 1; END;"
	"CREATE TRIGGER signatures_rate_counts AFTER INSERT ON signatures"
	"  BEGIN INSERT INTO rate_counts (kind, value, minute, class, n)"
	"    SELECT 'key', lower(NEW.fingerprint), substr(m.received, 1, 16), " RATE_CLASS("m.disposition") ", 1"
	"    FROM messages m WHERE m.id = NEW.message AND NEW.fingerprint IS NOT NULL"
	"      AND m.disposition IN (" RATE_COUNTED ")"
	"    ON CONFLICT DO UPDATE SET n = n + 1; END;"
	RATE_BACKFILL("'sender', lower(from_addr)", "from_addr <> ''")
	RATE_BACKFILL("'sender', lower(envelope_from)",
		      "envelope_from <> '' AND lower(envelope_from) IS NOT lower(from_addr)")
	RATE_BACKFILL("'from', lower(from_addr)", "from_addr <> '' AND from_verified IS NOT NULL")
	RATE_BACKFILL("'network', client_net", "client_net <> ''")
	RATE_BACKFILL("'domain', lower(sender_domain)", "sender_domain <> ''")
	RATE_BACKFILL("'everyone', ''", "1")
	"INSERT INTO rate_counts (kind, value, minute, class, n)"
	"  SELECT 'key', lower(s.fingerprint), substr(m.received, 1, 16), " RATE_CLASS("m.disposition") ", count(*)"
	"  FROM messages m JOIN signatures s ON s.message = m.id"
	"  WHERE m.received >= " RATE_BACKFILL_SINCE " AND m.disposition IN (" RATE_COUNTED ")"
	"    AND s.fingerprint IS NOT NULL GROUP BY 2, 3, 4 ON CONFLICT DO UPDATE SET n = n + excluded.n;"
	"CREATE INDEX outbox_pending ON outbox(next_attempt, id) WHERE status IN ('queued', 'deferred');"
	"CREATE INDEX outbox_claims ON outbox(claim_until) WHERE claim_until IS NOT NULL;"
	/* The loop brake's two per-mail lookups: the same body from the same
	 * sender (the last 64 characters of dedup_key are the body's SHA-256),
	 * and the answers to an address that looked like a loop. */
	"CREATE INDEX messages_from_body ON messages(from_addr COLLATE NOCASE, substr(dedup_key, -64), received);"
	"CREATE INDEX mail_ledger_suspect ON mail_ledger(address, created) WHERE class = 'answer' AND suspect = 1;"
	/* An entry's tokens (vendors told, subscribers, held contacts), read
	 * for every mail about it, and the embargoes vulnid tick looks at. */
	"CREATE INDEX tokens_entry ON tokens(entry, role);"
	"CREATE INDEX entries_embargoed ON entries(year, number) WHERE embargo IS NOT NULL;",
	/* 9 -> 10: secrets.  withheld_attachments: an attachment the record's
	 * canonical bytes only commit to (an anonymous researcher's key), with
	 * the salt of that commitment; never published, and no reference to
	 * blobs, whose row a sealed record's attachment gets only at its
	 * release.  answer_bytes: what the robot mailed, per address and hour,
	 * in answers to mail from addresses it has not verified (policy.c):
	 * counters, updated in place, read over at most a day of hours. */
	"CREATE TABLE withheld_attachments ("
	"  record INTEGER NOT NULL REFERENCES records(id), idx INTEGER NOT NULL,"
	"  filename TEXT, content_type TEXT NOT NULL, size INTEGER NOT NULL,"
	"  sha256 TEXT NOT NULL, salt TEXT NOT NULL, PRIMARY KEY (record, idx));"
	"CREATE TRIGGER withheld_attachments_no_replace BEFORE INSERT ON withheld_attachments"
	"  WHEN EXISTS (SELECT 1 FROM withheld_attachments WHERE record = NEW.record AND idx = NEW.idx)"
	"  BEGIN SELECT RAISE(ABORT, 'withheld_attachments is append-only'); END;"
	"CREATE TRIGGER withheld_attachments_no_update BEFORE UPDATE ON withheld_attachments"
	"  BEGIN SELECT RAISE(ABORT, 'withheld_attachments is append-only'); END;"
	"CREATE TRIGGER withheld_attachments_no_delete BEFORE DELETE ON withheld_attachments"
	"  BEGIN SELECT RAISE(ABORT, 'withheld_attachments is append-only'); END;"
	"CREATE TABLE answer_bytes ("
	"  address TEXT NOT NULL, hour INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	"  notices INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (address, hour)) WITHOUT ROWID;",
	/* 10 -> 11: endorsed contributors and proof of work.  endorsements: the
	 * keys the creator of an entry (entry set) or a moderator (entry NULL:
	 * every entry) endorsed, by command or by a certification found on a
	 * key sent along, and their withdrawals; the latest row of a key and a
	 * scope decides (append-only).  hashcash_spent: the SHA-256 of every
	 * Hashcash stamp that was accepted, until its validity ends (vulnid
	 * tick forgets it then), so that no stamp is spent twice. */
	"CREATE TABLE endorsements ("
	"  id INTEGER PRIMARY KEY, created TEXT NOT NULL, message INTEGER REFERENCES messages(id),"
	"  entry TEXT REFERENCES entries(id), fingerprint TEXT NOT NULL, endorser TEXT NOT NULL,"
	"  how TEXT NOT NULL, action TEXT NOT NULL, fields TEXT);"
	"CREATE INDEX endorsements_key ON endorsements(fingerprint, entry, id);"
	"CREATE TRIGGER endorsements_no_replace BEFORE INSERT ON endorsements"
	"  WHEN EXISTS (SELECT 1 FROM endorsements WHERE id = NEW.id)"
	"  BEGIN SELECT RAISE(ABORT, 'endorsements is append-only'); END;"
	"CREATE TRIGGER endorsements_no_update BEFORE UPDATE ON endorsements"
	"  BEGIN SELECT RAISE(ABORT, 'endorsements is append-only'); END;"
	"CREATE TRIGGER endorsements_no_delete BEFORE DELETE ON endorsements"
	"  BEGIN SELECT RAISE(ABORT, 'endorsements is append-only'); END;"
	"CREATE TABLE hashcash_spent ("
	"  stamp TEXT PRIMARY KEY, expires TEXT NOT NULL) WITHOUT ROWID;"
	"CREATE INDEX hashcash_spent_expires ON hashcash_spent(expires);",
};
G_STATIC_ASSERT(G_N_ELEMENTS(migrations) == STORE_SCHEMA_VERSION);

/* What each migration did, in a few words for the operator (standard
 * error, syslog and the audit event of an upgrade). */
static const char *const migration_notes[] = {
	"the first schema",
	"blob keys that keep every blob unchanged",
	"signed outgoing mail kept for its retries",
	"the signers behind anonymous records",
	"rate limits by client network and sender domain, the outgoing-mail ledger",
	"what was decrypted, against replays",
	"delivery claims; delivery outcomes only move forward",
	"queue list shows a failed item once (queue list --all: every one)",
	"rate limits counted per key and minute; indexes for the queue and the loop brake",
	"anonymous researchers' keys withheld from records; the answer budget of unverified mail",
	"endorsed contributors; the ledger of spent Hashcash stamps",
};
G_STATIC_ASSERT(G_N_ELEMENTS(migration_notes) == STORE_SCHEMA_VERSION);

static store_migrate_hook migrate_hook;

void
store_set_migrate_hook(store_migrate_hook hook)
{
	migrate_hook = hook;
}

char *
store_migration_text(int from, int to)
{
	GString *t = g_string_new(NULL);

	for (int v = MAX(from, 0); v < to && v < STORE_SCHEMA_VERSION; v++)
		g_string_append_printf(t, "%s%d: %s", t->len > 0 ? "; " : "", v + 1, migration_notes[v]);
	return g_string_free(t, FALSE);
}

int
store_migrated_from(const store *st)
{
	return st->migrated_from;
}

GDateTime *
store_now_datetime(void)
{
	const char *fake = g_getenv("VULNID_TEST_NOW");

	if (fake != NULL && *fake != '\0') {
		GDateTime *t = g_date_time_new_from_iso8601(fake, NULL);

		if (t != NULL) {
			GDateTime *u = g_date_time_to_utc(t);

			g_date_time_unref(t);
			return u;
		}
	}
	return g_date_time_new_now_utc();
}

char *
store_now(void)
{
	g_autoptr(GDateTime) t = store_now_datetime();

	return g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ");
}

vulnid_status
store_fail(store *st, int rc, const char *what, GError **err)
{
	vulnid_status s;
	const char *msg = st != NULL && st->db != NULL ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		s = VULNID_ERR_BUSY;
		break;
	case SQLITE_FULL:
		s = VULNID_ERR_NOSPACE;
		break;
	case SQLITE_IOERR:
		s = VULNID_ERR_IO;
		break;
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		s = VULNID_ERR_READONLY;
		break;
	case SQLITE_NOMEM:
		s = VULNID_ERR_NOMEM;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		s = VULNID_ERR_CORRUPT;
		break;
	case SQLITE_CONSTRAINT:
		s = VULNID_ERR_INVALID;
		break;
	default:
		s = VULNID_ERR_INTERNAL;
	}
	return vulnid_fail(err, s, "%s: %s", what, msg);
}

vulnid_status
store_exec(store *st, const char *sql, GError **err)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return store_fail(st, rc, "database", err);
	return VULNID_OK;
}

static void stmt_finalize(gpointer stmt);

void
store_keep_statements(store *st, gboolean keep)
{
	if (keep && st->stmt_idle == NULL)
		st->stmt_idle = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, stmt_finalize);
	else if (!keep)
		g_clear_pointer(&st->stmt_idle, g_hash_table_unref);
}

/* Tests of the database layer: with VULNID_TEST_QUERY_PLANS=FILE, the
 * query plan of every statement a process compiles is appended to FILE
 * once, a line "PLAN<TAB>detail<TAB>sql" per step of it, so that a test can
 * see which statements of a mail's path read a table without an index
 * ("SCAN"). */
static void
plan_log(sqlite3 *db, const char *sql)
{
	static GMutex lock;
	static GHashTable *seen;
	const char *path = g_getenv("VULNID_TEST_QUERY_PLANS");
	g_autofree char *eqp = NULL;
	g_autoptr(GString) out = NULL;
	sqlite3_stmt *stmt = NULL;
	FILE *f;

	if (path == NULL || *path == '\0')
		return;
	g_mutex_lock(&lock);
	if (seen == NULL)
		seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (g_hash_table_contains(seen, sql)) {
		g_mutex_unlock(&lock);
		return;
	}
	g_hash_table_add(seen, g_strdup(sql));
	g_mutex_unlock(&lock);
	eqp = g_strdup_printf("EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_prepare_v2(db, eqp, -1, &stmt, NULL) != SQLITE_OK)
		return;
	out = g_string_new(NULL);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		g_string_append_printf(out, "PLAN\t%s\t%s\n", (const char *) sqlite3_column_text(stmt, 3), sql);
	sqlite3_finalize(stmt);
	f = fopen(path, "a");
	if (f != NULL) {
		fputs(out->str, f);
		fclose(f);
	}
}

sqlite3_stmt *
store_prepare(store *st, const char *sql, vulnid_status *status, GError **err)
{
	sqlite3_stmt *stmt = NULL;
	int rc;

	*status = VULNID_OK;
	if (st->stmt_idle != NULL) {
		char *key = NULL;

		if (g_hash_table_steal_extended(st->stmt_idle, sql, (gpointer *) &key, (gpointer *) &stmt)) {
			g_free(key);
		} else {
			rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
			if (rc != SQLITE_OK) {
				*status = store_fail(st, rc, "database", err);
				return NULL;
			}
			plan_log(st->db, sql);
		}
		g_mutex_lock(&stmt_lock);
		if (stmt_lent == NULL)
			stmt_lent = g_hash_table_new(g_direct_hash, g_direct_equal);
		g_hash_table_insert(stmt_lent, stmt, st);
		g_mutex_unlock(&stmt_lock);
		return stmt;
	}
	rc = sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL);
	if (rc != SQLITE_OK) {
		*status = store_fail(st, rc, "database", err);
		return NULL;
	}
	plan_log(st->db, sql);
	return stmt;
}

int
store_stmt_release(sqlite3_stmt *stmt)
{
	store *st = NULL;
	int rc;

	if (stmt == NULL)
		return SQLITE_OK;
	g_mutex_lock(&stmt_lock);
	if (stmt_lent != NULL && g_hash_table_steal_extended(stmt_lent, stmt, NULL, (gpointer *) &st) &&
	    st->stmt_idle != NULL && !g_hash_table_contains(st->stmt_idle, sqlite3_sql(stmt))) {
		g_mutex_unlock(&stmt_lock);
		rc = sqlite3_reset(stmt);
		sqlite3_clear_bindings(stmt);
		g_hash_table_insert(st->stmt_idle, g_strdup(sqlite3_sql(stmt)), stmt);
		return rc;
	}
	g_mutex_unlock(&stmt_lock);
	return sqlite3_finalize(stmt);
}

static void
stmt_finalize(gpointer stmt)
{
	sqlite3_finalize(stmt);
}

sqlite3_stmt *
store_prepare_cached(store *st, const char *sql, vulnid_status *status, GError **err)
{
	sqlite3_stmt *stmt = st->stmt_cache != NULL ? g_hash_table_lookup(st->stmt_cache, sql) : NULL;
	int rc;

	*status = VULNID_OK;
	if (stmt != NULL) {
		sqlite3_reset(stmt);
		sqlite3_clear_bindings(stmt);
		return stmt;
	}
	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
	if (rc != SQLITE_OK) {
		*status = store_fail(st, rc, "database", err);
		return NULL;
	}
	plan_log(st->db, sql);
	if (st->stmt_cache == NULL)
		st->stmt_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, stmt_finalize);
	g_hash_table_insert(st->stmt_cache, g_strdup(sql), stmt);
	return stmt;
}

vulnid_status
store_step_reset(store *st, sqlite3_stmt *stmt, const char *what, GError **err)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, what, err);
	return VULNID_OK;
}

sqlite3 *
store_db(store *st)
{
	return st->db;
}

const char *
store_audit_head_cached(store *st)
{
	return st->audit_head[0] != '\0' && sqlite3_get_autocommit(st->db) == 0 ? st->audit_head : NULL;
}

void
store_audit_head_remember(store *st, const char *hash)
{
	if (hash == NULL || strlen(hash) != 64 || sqlite3_get_autocommit(st->db) != 0)
		st->audit_head[0] = '\0';
	else
		memcpy(st->audit_head, hash, 65);
}

vulnid_status
store_begin(store *st, GError **err)
{
	vulnid_status s;

	store_audit_head_remember(st, NULL);	/* others may have written since */
	s = store_exec(st, "BEGIN IMMEDIATE", err);

	if (s == VULNID_OK)
		st->in_txn = TRUE;
	return s;
}

vulnid_status
store_begin_read(store *st, GError **err)
{
	store_audit_head_remember(st, NULL);
	return store_exec(st, "BEGIN", err);
}

vulnid_status
store_commit(store *st, GError **err)
{
	vulnid_status s = store_exec(st, "COMMIT", err);

	if (s != VULNID_OK)
		store_rollback(st);
	st->in_txn = FALSE;
	store_audit_head_remember(st, NULL);
	return s;
}

void
store_rollback(store *st)
{
	store_audit_head_remember(st, NULL);
	if (sqlite3_get_autocommit(st->db) == 0)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st->in_txn = FALSE;
}

/* INSERT OR REPLACE deletes the old row first; the delete triggers catch
 * that only where recursive_triggers is on, so these catch it anywhere. */
static const char *const no_replace_triggers =
	"CREATE TRIGGER blobs_no_replace BEFORE INSERT ON blobs"
	"  WHEN EXISTS (SELECT 1 FROM blobs WHERE sha256 = NEW.sha256)"
	"  BEGIN SELECT RAISE(ABORT, 'blobs is append-only'); END;"
	"CREATE TRIGGER messages_no_replace BEFORE INSERT ON messages"
	"  WHEN EXISTS (SELECT 1 FROM messages WHERE id = NEW.id OR dedup_key = NEW.dedup_key)"
	"  BEGIN SELECT RAISE(ABORT, 'messages is append-only'); END;"
	"CREATE TRIGGER entries_no_replace BEFORE INSERT ON entries"
	"  WHEN EXISTS (SELECT 1 FROM entries WHERE id = NEW.id OR digest = NEW.digest"
	"               OR (year = NEW.year AND number = NEW.number))"
	"  BEGIN SELECT RAISE(ABORT, 'entries is append-only'); END;"
	"CREATE TRIGGER records_no_replace BEFORE INSERT ON records"
	"  WHEN EXISTS (SELECT 1 FROM records WHERE id = NEW.id OR (entry = NEW.entry AND seq = NEW.seq))"
	"  BEGIN SELECT RAISE(ABORT, 'records is append-only'); END;"
	"CREATE TRIGGER attachments_no_replace BEFORE INSERT ON attachments"
	"  WHEN EXISTS (SELECT 1 FROM attachments WHERE record = NEW.record AND idx = NEW.idx)"
	"  BEGIN SELECT RAISE(ABORT, 'attachments is append-only'); END;"
	"CREATE TRIGGER quarantine_no_replace BEFORE INSERT ON quarantine"
	"  WHEN EXISTS (SELECT 1 FROM quarantine WHERE id = NEW.id)"
	"  BEGIN SELECT RAISE(ABORT, 'quarantine is append-only'); END;"
	"CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit"
	"  WHEN EXISTS (SELECT 1 FROM audit WHERE seq = NEW.seq OR hash = NEW.hash)"
	"  BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;"
	"CREATE TRIGGER bounces_no_replace BEFORE INSERT ON bounces"
	"  WHEN EXISTS (SELECT 1 FROM bounces WHERE id = NEW.id)"
	"  BEGIN SELECT RAISE(ABORT, 'bounces is append-only'); END;"
	"CREATE TRIGGER outbox_no_replace BEFORE INSERT ON outbox"
	"  WHEN EXISTS (SELECT 1 FROM outbox WHERE id = NEW.id OR message_id = NEW.message_id)"
	"  BEGIN SELECT RAISE(ABORT, 'outbox messages are immutable'); END;";

static vulnid_status
store_append_only_triggers(store *st, GError **err)
{
	vulnid_status s0 = store_exec(st, no_replace_triggers, err);

	if (s0 != VULNID_OK)
		return s0;
	for (gsize i = 0; i < G_N_ELEMENTS(append_only_tables); i++) {
		const char *t = append_only_tables[i];
		g_autofree char *sql = g_strdup_printf(
			"CREATE TRIGGER %s_no_update BEFORE UPDATE ON %s"
			"  BEGIN SELECT RAISE(ABORT, '%s is append-only'); END;"
			"CREATE TRIGGER %s_no_delete BEFORE DELETE ON %s"
			"  BEGIN SELECT RAISE(ABORT, '%s is append-only'); END;",
			t, t, t, t, t, t);
		vulnid_status s = store_exec(st, sql, err);

		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

static vulnid_status
store_user_version(store *st, int *version, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, "PRAGMA user_version", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	rc = sqlite3_step(stmt);
	*version = sqlite3_column_int(stmt, 0);
	store_stmt_release(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, st->path, err);
	return VULNID_OK;
}

static vulnid_status
store_newer(store *st, int version, GError **err)
{
	return vulnid_fail(err, VULNID_ERR_CONFIG,
			   "'%s' has schema version %d, newer than this program's %d (vulnid %s): a newer"
			   " version migrated it; run that one, or restore the backup made before the"
			   " upgrade (UPGRADING)", st->path, version, STORE_SCHEMA_VERSION, PACKAGE_VERSION);
}

static vulnid_status
store_migrate(store *st, store_open_mode mode, GError **err)
{
	vulnid_status s;
	int version;

	/* The common case, an up-to-date schema, takes no write lock, so
	 * that read-only users and read-only files work. */
	s = store_user_version(st, &version, err);
	if (s != VULNID_OK || version == STORE_SCHEMA_VERSION || mode == STORE_OPEN_COPY)
		return s;
	if (version > STORE_SCHEMA_VERSION)
		return store_newer(st, version, err);
	if (mode == STORE_OPEN_READONLY)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "'%s' has schema version %d, older than this program's %d (vulnid %s): back it"
				   " up (vulnid backup --all), then any command that writes migrates it, such as"
				   " vulnid audit verify (UPGRADING)", st->path, version, STORE_SCHEMA_VERSION,
				   PACKAGE_VERSION);
	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	s = store_user_version(st, &version, err);	/* another process may have won */
	if (s != VULNID_OK)
		goto fail;
	if (version > STORE_SCHEMA_VERSION) {
		s = store_newer(st, version, err);
		goto fail;
	}
	for (int v = version; v < STORE_SCHEMA_VERSION; v++) {
		g_autofree char *set = g_strdup_printf("PRAGMA user_version = %d", v + 1);

		s = store_exec(st, migrations[v], err);
		if (s == VULNID_OK && v == 0)
			s = store_append_only_triggers(st, err);
		if (s == VULNID_OK)
			s = store_exec(st, set, err);
		if (s != VULNID_OK)
			goto fail;
	}
	/* An upgrade says so in the same transaction (the audit log: the
	 * hook of the program); a new database is no upgrade. */
	if (version > 0 && version < STORE_SCHEMA_VERSION && migrate_hook != NULL) {
		s = migrate_hook(st, version, STORE_SCHEMA_VERSION, err);
		if (s != VULNID_OK)
			goto fail;
	}
	s = store_commit(st, err);
	if (s == VULNID_OK && version > 0 && version < STORE_SCHEMA_VERSION)
		st->migrated_from = version;
	return s;
fail:
	store_rollback(st);
	return s;
}

vulnid_status
store_open(const char *path, gint64 busy_timeout_ms, store_open_mode mode,
	   store **out, GError **err)
{
	g_autoptr(store) st = g_new0(store, 1);
	int flags = SQLITE_OPEN_NOMUTEX;
	vulnid_status s;
	int rc;

	st->path = g_strdup(path);
	st->migrated_from = -1;
	switch (mode) {
	case STORE_OPEN_CREATE:
		flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXCLUSIVE;
		break;
	case STORE_OPEN_EXISTING:
		flags |= SQLITE_OPEN_READWRITE;
		break;
	case STORE_OPEN_READONLY:
	case STORE_OPEN_COPY:
		flags |= SQLITE_OPEN_READONLY;
		break;
	}
	rc = sqlite3_open_v2(path, &st->db, flags, NULL);
	if (rc != SQLITE_OK) {
		s = store_fail(st, rc, path, err);
		return s == VULNID_ERR_INTERNAL ? VULNID_ERR_IO : s;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, (int) busy_timeout_ms);
	/* REPLACE must fire the delete triggers too, or INSERT OR REPLACE
	 * could overwrite an append-only row. */
	s = store_exec(st, "PRAGMA recursive_triggers = ON;"
			   "PRAGMA foreign_keys = ON;", err);
	if (s != VULNID_OK)
		return s;
	if (mode == STORE_OPEN_CREATE) {
		s = store_exec(st, "PRAGMA journal_mode = WAL", err);
		if (s != VULNID_OK)
			return s;
	}
	if (mode != STORE_OPEN_READONLY && mode != STORE_OPEN_COPY) {
		int on = 1;

		/* Every filter is a short process, usually the last connection:
		 * without this, each one created the WAL file anew (syncing the
		 * directory) and deleted it at close. */
		sqlite3_file_control(st->db, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
		sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
		/* FULL: a commit the MTA was told about survives power loss. */
		s = store_exec(st, "PRAGMA synchronous = FULL", err);
	}
	if (s == VULNID_OK)
		s = store_migrate(st, mode, err);
	if (s != VULNID_OK)
		return s;
	*out = g_steal_pointer(&st);
	return VULNID_OK;
}

void
store_close(store *st)
{
	if (st == NULL)
		return;
	if (st->db != NULL) {
		store_rollback(st);
		g_clear_pointer(&st->stmt_cache, g_hash_table_unref);
		g_clear_pointer(&st->stmt_idle, g_hash_table_unref);
		sqlite3_close_v2(st->db);
	}
	g_free(st->path);
	g_free(st);
}

void
store_bind_text(sqlite3_stmt *stmt, int i, const char *v)
{
	if (v == NULL)
		sqlite3_bind_null(stmt, i);
	else
		sqlite3_bind_text(stmt, i, v, -1, SQLITE_TRANSIENT);
}

vulnid_status
store_step_done(store *st, sqlite3_stmt *stmt, const char *what, GError **err)
{
	int rc = sqlite3_step(stmt);

	store_stmt_release(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, what, err);
	return VULNID_OK;
}

char *
store_col_text(sqlite3_stmt *stmt, int i)
{
	const unsigned char *t = sqlite3_column_text(stmt, i);

	return t != NULL ? g_strdup((const char *) t) : NULL;
}

static vulnid_status
store_blob_exists(store *st, const char *sha256, gboolean *exists, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, "SELECT 1 FROM blobs WHERE sha256 = ?", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	rc = sqlite3_step(stmt);
	store_stmt_release(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "blobs", err);
	*exists = rc == SQLITE_ROW;
	return VULNID_OK;
}

/* A large blob passes through SQLite's page cache once and is not read
 * again by this process: while it streams, the cache is kept small, or the
 * blob's pages would fill it to its limit (2 MiB by default) and stay. */
#define STORE_BLOB_CACHE_KIB 256
#define STORE_BLOB_CACHE_BYTES (STORE_BLOB_CACHE_KIB * 1024)

static gint64
store_pragma_int(store *st, const char *sql)
{
	sqlite3_stmt *q = NULL;
	gint64 v = 0;

	if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	store_stmt_release(q);
	return v;
}

static void
store_cache_small(store *st, gboolean small)
{
	if (small) {
		/* cache_size: pages if positive, KiB if negative */
		gint64 cs = store_pragma_int(st, "PRAGMA cache_size");
		gint64 bytes = cs < 0 ? -cs * 1024 : cs * store_pragma_int(st, "PRAGMA page_size");

		st->saved_cache_size = 0;
		if (bytes > STORE_BLOB_CACHE_BYTES &&
		    sqlite3_exec(st->db, "PRAGMA cache_size = -" G_STRINGIFY(STORE_BLOB_CACHE_KIB),
				 NULL, NULL, NULL) == SQLITE_OK)
			st->saved_cache_size = cs;
	} else if (st->saved_cache_size != 0) {
		g_autofree char *sql = g_strdup_printf("PRAGMA cache_size = %" G_GINT64_FORMAT,
						       st->saved_cache_size);

		sqlite3_exec(st->db, sql, NULL, NULL, NULL);
		st->saved_cache_size = 0;
	}
}

/* Insert the row with room for the bytes, then stream the file into it:
 * memory stays flat for large mail. */
static vulnid_status
store_blob_stream(store *st, int fd, gint64 size, const char *sha256, GError **err)
{
	sqlite3_blob *blob = NULL;
	sqlite3_stmt *stmt;
	vulnid_status s;
	gint64 off = 0;
	char buf[65536];
	int rc;

	stmt = store_prepare(st, "INSERT INTO blobs (sha256, size, data) VALUES (?, ?, zeroblob(?))",
			     &s, err);
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	sqlite3_bind_int64(stmt, 2, size);
	sqlite3_bind_int64(stmt, 3, size);
	s = store_step_done(st, stmt, "blobs", err);
	if (s != VULNID_OK || size == 0)
		return s;
	rc = sqlite3_blob_open(st->db, "main", "blobs", "data",
			       sqlite3_last_insert_rowid(st->db), 1, &blob);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, "blobs", err);
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof buf, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			s = vulnid_fail(err, n < 0 ? vulnid_status_from_errno(errno) : VULNID_ERR_IO,
					"cannot read spooled message: %s",
					n < 0 ? g_strerror(errno) : "file shrank");
			break;
		}
		if (off + n > size)
			n = (ssize_t) (size - off);
		rc = sqlite3_blob_write(blob, buf, (int) n, (int) off);
		if (rc != SQLITE_OK) {
			s = store_fail(st, rc, "blobs", err);
			break;
		}
		off += n;
	}
	rc = sqlite3_blob_close(blob);
	if (s == VULNID_OK && rc != SQLITE_OK)
		s = store_fail(st, rc, "blobs", err);
	return s;
}

vulnid_status
store_blob_put_fd(store *st, int fd, gint64 size, const char *sha256, GError **err)
{
	gboolean exists = FALSE;
	vulnid_status s;

	s = store_blob_exists(st, sha256, &exists, err);
	if (s != VULNID_OK || exists)
		return s;
	if (size > STORE_BLOB_CACHE_BYTES)
		store_cache_small(st, TRUE);
	s = store_blob_stream(st, fd, size, sha256, err);
	if (size > STORE_BLOB_CACHE_BYTES)
		store_cache_small(st, FALSE);
	return s;
}

vulnid_status
store_blob_put_sealed(store *st, int fd, gint64 size, const char *sha256, const char *robot_fpr,
		      GError **err)
{
	g_autofree char *buf = NULL;
	g_autoptr(GBytes) clear = NULL;
	gboolean exists = FALSE;
	vulnid_status s;
	gint64 off = 0;

	s = store_blob_exists(st, sha256, &exists, err);
	if (s != VULNID_OK || exists)
		return s;
	buf = g_malloc((gsize) size + 1);
	while (off < size) {
		ssize_t n = pread(fd, buf + off, (size_t) (size - off), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return vulnid_fail(err, VULNID_ERR_IO, "cannot read spooled message: %s",
					   n < 0 ? g_strerror(errno) : "file shrank");
		off += n;
	}
	clear = g_bytes_new_take(g_steal_pointer(&buf), (gsize) size);
	return store_blob_put_sealed_bytes(st, clear, sha256, robot_fpr, err);
}

vulnid_status
store_blob_put_sealed_bytes(store *st, GBytes *clear, const char *sha256, const char *robot_fpr,
			    GError **err)
{
	g_autoptr(GBytes) sealed = NULL;
	gboolean exists = FALSE;
	sqlite3_stmt *stmt;
	vulnid_status s;

	s = store_blob_exists(st, sha256, &exists, err);
	if (s != VULNID_OK || exists)
		return s;
	s = crypto_seal(clear, robot_fpr, &sealed, err);
	if (s != VULNID_OK)
		return s;
	stmt = store_prepare(st, "INSERT INTO blobs (sha256, size, data, sealed) VALUES (?, ?, ?, 1)", &s, err);
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	sqlite3_bind_int64(stmt, 2, (sqlite3_int64) g_bytes_get_size(clear));
	sqlite3_bind_blob64(stmt, 3, g_bytes_get_data(sealed, NULL), g_bytes_get_size(sealed), SQLITE_TRANSIENT);
	return store_step_done(st, stmt, "blobs", err);
}

vulnid_status
store_blob_put_mem(store *st, const void *data, gsize len, char sha256_out[65], GError **err)
{
	g_autofree char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, len);
	gboolean exists = FALSE;
	sqlite3_stmt *stmt;
	vulnid_status s;

	memcpy(sha256_out, sha, 65);
	s = store_blob_exists(st, sha, &exists, err);
	if (s != VULNID_OK || exists)
		return s;
	stmt = store_prepare(st, "INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?)", &s, err);
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha);
	sqlite3_bind_int64(stmt, 2, (sqlite3_int64) len);
	sqlite3_bind_blob64(stmt, 3, len ? data : "", len, SQLITE_STATIC);
	return store_step_done(st, stmt, "blobs", err);
}

vulnid_status
store_blob_get(store *st, const char *sha256, GBytes **out, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, "SELECT data FROM blobs WHERE sha256 = ?", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*out = g_bytes_new(sqlite3_column_blob(stmt, 0),
				   (gsize) sqlite3_column_bytes(stmt, 0));
		s = VULNID_OK;
	} else if (rc == SQLITE_DONE)
		s = vulnid_fail(err, VULNID_ERR_NOTFOUND, "no blob %s", sha256);
	else
		s = store_fail(st, rc, "blobs", err);
	store_stmt_release(stmt);
	return s;
}

vulnid_status
store_message_find(store *st, const char *dedup_key, gint64 *id, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, "SELECT id FROM messages WHERE dedup_key = ?", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, dedup_key);
	rc = sqlite3_step(stmt);
	*id = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
	store_stmt_release(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "messages", err);
	return VULNID_OK;
}

/* Savepoints inside the caller's transaction: the outgoing-mail policy
 * queues a mail, measures it, and takes it back when it is over a bound. */
vulnid_status
store_savepoint(store *st, const char *name, GError **err)
{
	g_autofree char *sql = g_strdup_printf("SAVEPOINT %s", name);

	if (sqlite3_get_autocommit(st->db) != 0)
		store_audit_head_remember(st, NULL);	/* it starts a transaction */
	return store_exec(st, sql, err);
}

vulnid_status
store_release(store *st, const char *name, GError **err)
{
	g_autofree char *sql = g_strdup_printf("RELEASE %s", name);

	return store_exec(st, sql, err);
}

vulnid_status
store_rollback_to(store *st, const char *name, GError **err)
{
	g_autofree char *sql = g_strdup_printf("ROLLBACK TO %s; RELEASE %s", name, name);

	store_audit_head_remember(st, NULL);
	return store_exec(st, sql, err);
}

vulnid_status
store_message_insert(store *st, const store_message *m, gint64 *id, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"INSERT INTO messages (received, raw_sha256, dedup_key, message_id,"
		" envelope_from, envelope_to, from_addr, subject, disposition,"
		" client_address, client_net, sender_domain, from_verified)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, m->received);
	store_bind_text(stmt, 2, m->raw_sha256);
	store_bind_text(stmt, 3, m->dedup_key);
	store_bind_text(stmt, 4, m->message_id);
	store_bind_text(stmt, 5, m->envelope_from);
	store_bind_text(stmt, 6, m->envelope_to);
	store_bind_text(stmt, 7, m->from_addr);
	store_bind_text(stmt, 8, m->subject);
	store_bind_text(stmt, 9, m->disposition);
	store_bind_text(stmt, 10, m->client_address);
	store_bind_text(stmt, 11, m->client_net);
	store_bind_text(stmt, 12, m->sender_domain);
	store_bind_text(stmt, 13, m->from_verified);
	s = store_step_done(st, stmt, "messages", err);
	if (s == VULNID_OK)
		*id = sqlite3_last_insert_rowid(st->db);
	return s;
}

vulnid_status
store_next_number(store *st, int year, const GArray *blocks, gint64 *number, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"SELECT coalesce(max(number), 0) FROM entries WHERE year = ?", &s, err);
	gint64 last;
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int(stmt, 1, year);
	rc = sqlite3_step(stmt);
	last = sqlite3_column_int64(stmt, 0);
	store_stmt_release(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "entries", err);
	/* Numbers only grow: a number below the highest one assigned is never
	 * handed out again, even if the blocks changed since. */
	if (!ids_blocks_next(blocks, last, number))
		return vulnid_fail(err, VULNID_ERR_EXHAUSTED,
				   "no numbers left for %d after %" G_GINT64_FORMAT, year, last);
	return VULNID_OK;
}

vulnid_status
store_entry_insert(store *st, const char *id, int year, gint64 number,
		   const char *digest, const char *created, const char *embargo, gint64 message,
		   GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"INSERT INTO entries (id, year, number, digest, created, embargo, message)"
		" VALUES (?, ?, ?, ?, ?, ?, ?)", &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, id);
	sqlite3_bind_int(stmt, 2, year);
	sqlite3_bind_int64(stmt, 3, number);
	store_bind_text(stmt, 4, digest);
	store_bind_text(stmt, 5, created);
	store_bind_text(stmt, 6, embargo);
	sqlite3_bind_int64(stmt, 7, message);
	return store_step_done(st, stmt, "entries", err);
}

vulnid_status
store_record_insert(store *st, const store_record *r, gint64 *id, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"INSERT INTO records (entry, seq, created, kind, message, author, author_name,"
		" role, auth, subject, fields, body, sha256, sealed, opens)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		&s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, r->entry);
	sqlite3_bind_int64(stmt, 2, r->seq);
	store_bind_text(stmt, 3, r->created);
	store_bind_text(stmt, 4, r->kind);
	if (r->message > 0)
		sqlite3_bind_int64(stmt, 5, r->message);
	else
		sqlite3_bind_null(stmt, 5);
	store_bind_text(stmt, 6, r->author);
	store_bind_text(stmt, 7, r->author_name);
	store_bind_text(stmt, 8, r->role);
	store_bind_text(stmt, 9, r->auth);
	store_bind_text(stmt, 10, r->subject);
	/* The caller's strings outlive the statement: no copies of what
	 * may be a long text. */
	sqlite3_bind_text(stmt, 11, r->fields, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 12, r->body, -1, SQLITE_STATIC);
	store_bind_text(stmt, 13, r->sha256);
	sqlite3_bind_text(stmt, 14, r->sealed, -1, SQLITE_STATIC);	/* NULL: SQL NULL */
	if (r->opens > 0)
		sqlite3_bind_int64(stmt, 15, r->opens);
	else
		sqlite3_bind_null(stmt, 15);
	s = store_step_done(st, stmt, "records", err);
	if (s == VULNID_OK && id != NULL)
		*id = sqlite3_last_insert_rowid(st->db);
	return s;
}

vulnid_status
store_record_signer_insert(store *st, gint64 record, const char *fingerprint, const char *salt, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, "INSERT INTO record_signers (record, fingerprint, salt)"
					   " VALUES (?, ?, ?)", &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, record);
	store_bind_text(stmt, 2, fingerprint);
	store_bind_text(stmt, 3, salt);
	return store_step_done(st, stmt, "record_signers", err);
}

vulnid_status
store_attachment_insert(store *st, gint64 record, int idx, const char *filename,
			const char *content_type, gint64 size, const char *sha256, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"INSERT INTO attachments (record, idx, filename, content_type, size, sha256)"
		" VALUES (?, ?, ?, ?, ?, ?)", &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, record);
	sqlite3_bind_int(stmt, 2, idx);
	store_bind_text(stmt, 3, filename);
	store_bind_text(stmt, 4, content_type);
	sqlite3_bind_int64(stmt, 5, size);
	store_bind_text(stmt, 6, sha256);
	return store_step_done(st, stmt, "attachments", err);
}

vulnid_status
store_withheld_attachment_insert(store *st, gint64 record, int idx, const char *filename,
				 const char *content_type, gint64 size, const char *sha256, const char *salt,
				 GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"INSERT INTO withheld_attachments (record, idx, filename, content_type, size, sha256, salt)"
		" VALUES (?, ?, ?, ?, ?, ?, ?)", &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, record);
	sqlite3_bind_int(stmt, 2, idx);
	store_bind_text(stmt, 3, filename);
	store_bind_text(stmt, 4, content_type);
	sqlite3_bind_int64(stmt, 5, size);
	store_bind_text(stmt, 6, sha256);
	store_bind_text(stmt, 7, salt);
	return store_step_done(st, stmt, "withheld_attachments", err);
}

vulnid_status
store_quarantine_insert(store *st, gint64 message, const char *created,
			const char *reason, const char *detail, gint64 *id, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"INSERT INTO quarantine (message, created, reason, detail) VALUES (?, ?, ?, ?)",
		&s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, message);
	store_bind_text(stmt, 2, created);
	store_bind_text(stmt, 3, reason);
	store_bind_text(stmt, 4, detail);
	s = store_step_done(st, stmt, "quarantine", err);
	if (s == VULNID_OK && id != NULL)
		*id = sqlite3_last_insert_rowid(st->db);
	return s;
}
