/* store-quarantine.h - reading the mail set aside (vulnid quarantine);
 * the rows are written by mail_quarantine() through store.h. */
#ifndef VULNID_STORE_QUARANTINE_H
#define VULNID_STORE_QUARANTINE_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* One quarantined mail.  Mail archived sealed (it asked for an embargo, or
 * is about one) has no Subject stored, and its raw bytes are encrypted to
 * the robot's key (sealed). */
typedef struct {
	gint64 id;
	const char *created;
	const char *reason;
	const char *detail;
	gint64 message;
	const char *message_id;	/* "" when none, as are from, sender, subject */
	/* created, reason, detail and sha256 as stored (NULL when NULL) */
	const char *from;
	const char *sender;
	const char *subject;
	const char *sha256;	/* of the raw mail */
	gboolean sealed;
} store_quarantine_row;

/* Called for each row; the strings live until it returns.  A status other
 * than VULNID_OK stops the walk and is returned. */
typedef vulnid_status (*store_quarantine_fn)(const store_quarantine_row *row, gpointer data, GError **err);

/* Each quarantined mail in order, or only number id (id > 0); *rows is how
 * many were seen. */
vulnid_status store_quarantine_each(store *st, gint64 id, store_quarantine_fn fn, gpointer data, guint *rows,
				    GError **err);

#endif
