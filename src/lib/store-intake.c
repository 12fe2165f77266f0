/* store-intake.c - the database accessors of intake (see store-intake.h),
 * named and prepared once per connection. */
#include "autoconfig.h"

#include "store-db.h"
#include "store-intake.h"

static const char SQL_BOUNCE_INSERT[] =
	"INSERT INTO bounces (message, outbox, recipient, action, status, diagnostic, created)"
	" VALUES (?, ?, ?, ?, ?, ?, ?)";
static const char SQL_SIGNATURE_SEEN[] = "SELECT coalesce(message, -1) FROM signatures WHERE sha256 = ?";
static const char SQL_SIGNATURE_INSERT[] =
	"INSERT INTO signatures (sha256, fingerprint, message, created) VALUES (?, ?, ?, ?)";
static const char SQL_DECRYPTED_FIND[] =
	"SELECT message, entry, sender, fingerprint, cipher_sha256 = ?1 FROM decrypted"
	" WHERE cipher_sha256 = ?1 OR plain_sha256 = ?2 ORDER BY id LIMIT 100";
static const char SQL_DECRYPTED_INSERT[] =
	"INSERT INTO decrypted (message, created, cipher_sha256, plain_sha256, entry, sender, fingerprint)"
	" VALUES (?, ?, ?, ?, ?, ?, ?)";
static const char SQL_MESSAGE_SEALED[] =
	"SELECT b.sealed FROM messages m JOIN blobs b ON b.sha256 = m.raw_sha256 WHERE m.id = ?";

vulnid_status
store_intake_bounce_insert(store *st, gint64 message, gint64 outbox, const char *recipient, const char *action,
			   const char *status, const char *diagnostic, const char *created, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_BOUNCE_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, message);
	sqlite3_bind_int64(stmt, 2, outbox);
	store_bind_text(stmt, 3, recipient);
	store_bind_text(stmt, 4, action);
	store_bind_text(stmt, 5, status);
	store_bind_text(stmt, 6, diagnostic);
	store_bind_text(stmt, 7, created);
	return store_step_reset(st, stmt, "bounces", err);
}

vulnid_status
store_intake_signature_seen(store *st, const char *sha256, gint64 *message, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_SIGNATURE_SEEN, &s, err);
	int rc;

	*message = 0;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*message = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "signatures", err);
	return VULNID_OK;
}

vulnid_status
store_intake_signature_insert(store *st, const char *sha256, const char *fingerprint, gint64 message,
			      const char *created, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_SIGNATURE_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, sha256);
	store_bind_text(stmt, 2, fingerprint);
	sqlite3_bind_int64(stmt, 3, message);
	store_bind_text(stmt, 4, created);
	return store_step_reset(st, stmt, "signatures", err);
}

static void
decrypted_row_free(gpointer p)
{
	store_decrypted_row *r = p;

	g_free(r->entry);
	g_free(r->sender);
	g_free(r->fingerprint);
	g_free(r);
}

vulnid_status
store_intake_decrypted_find(store *st, const char *cipher_sha256, const char *plain_sha256, GPtrArray **out,
			    GError **err)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(decrypted_row_free);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_DECRYPTED_FIND, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, cipher_sha256);
	store_bind_text(stmt, 2, plain_sha256);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		store_decrypted_row *r = g_new0(store_decrypted_row, 1);

		r->message = sqlite3_column_int64(stmt, 0);
		r->entry = store_col_text(stmt, 1);
		r->sender = store_col_text(stmt, 2);
		r->fingerprint = store_col_text(stmt, 3);
		r->same_cipher = sqlite3_column_int(stmt, 4) != 0;
		g_ptr_array_add(a, r);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "decrypted", err);
	*out = g_steal_pointer(&a);
	return VULNID_OK;
}

vulnid_status
store_intake_decrypted_insert(store *st, gint64 message, const char *created, const char *cipher_sha256,
			      const char *plain_sha256, const char *entry_id, const char *sender,
			      const char *fingerprint, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_DECRYPTED_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, message);
	store_bind_text(stmt, 2, created);
	store_bind_text(stmt, 3, cipher_sha256);
	store_bind_text(stmt, 4, plain_sha256);
	store_bind_text(stmt, 5, entry_id);
	store_bind_text(stmt, 6, sender);
	store_bind_text(stmt, 7, fingerprint);
	return store_step_reset(st, stmt, "decrypted", err);
}

vulnid_status
store_intake_message_sealed(store *st, gint64 msg, gboolean *sealed, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_MESSAGE_SEALED, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, msg);
	rc = sqlite3_step(stmt);
	*sealed = rc == SQLITE_ROW && sqlite3_column_int(stmt, 0) != 0;
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "messages", err);
	return VULNID_OK;
}
