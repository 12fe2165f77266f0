/* store-lmtpd.h - what the LMTP server asks of its one long-lived database
 * connection beyond intake's accessors. */
#ifndef VULNID_STORE_LMTPD_H
#define VULNID_STORE_LMTPD_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* synchronous = NORMAL: a commit syncs the WAL, which the server
 * fdatasync()s itself before it answers (lmtpd.c). */
vulnid_status store_lmtpd_synchronous_normal(store *st, GError **err);

/* One mail of a group in the group's transaction: a savepoint "mail",
 * kept (release) or undone (rollback, then release once what is still
 * owed was recorded).  Errors are the transaction's, seen at its commit. */
void store_lmtpd_mail_begin(store *st);
void store_lmtpd_mail_release(store *st);
void store_lmtpd_mail_rollback(store *st);

/* No automatic checkpoints on this connection (others run them). */
void store_lmtpd_no_autocheckpoint(store *st);

/* Whether a transaction is open: FALSE after SQLite rolled one back on
 * its own (an I/O error, a full disk). */
gboolean store_lmtpd_in_transaction(store *st);

#endif
