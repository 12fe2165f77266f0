/* store-lmtpd.c - the LMTP server's connection settings (see store-lmtpd.h). */
#include "autoconfig.h"

#include "store-db.h"
#include "store-lmtpd.h"

static const char SQL_SYNCHRONOUS_NORMAL[] = "PRAGMA synchronous = NORMAL";
static const char SQL_MAIL_BEGIN[] = "SAVEPOINT mail";
static const char SQL_MAIL_RELEASE[] = "RELEASE mail";
static const char SQL_MAIL_ROLLBACK[] = "ROLLBACK TO mail";

vulnid_status
store_lmtpd_synchronous_normal(store *st, GError **err)
{
	return store_exec(st, SQL_SYNCHRONOUS_NORMAL, err);
}

void
store_lmtpd_mail_begin(store *st)
{
	store_exec(st, SQL_MAIL_BEGIN, NULL);
}

void
store_lmtpd_mail_release(store *st)
{
	store_exec(st, SQL_MAIL_RELEASE, NULL);
}

void
store_lmtpd_mail_rollback(store *st)
{
	store_audit_head_remember(st, NULL);
	store_exec(st, SQL_MAIL_ROLLBACK, NULL);
}

void
store_lmtpd_no_autocheckpoint(store *st)
{
	sqlite3_wal_autocheckpoint(store_db(st), 0);
}

gboolean
store_lmtpd_in_transaction(store *st)
{
	return !sqlite3_get_autocommit(store_db(st));
}
