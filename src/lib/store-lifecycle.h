/* store-lifecycle.h - the database accessors of the lifecycle (mail about
 * entries): what routing, records, roles and the reply read.  Each runs
 * in the caller's transaction; statements are prepared once per
 * connection. */
#ifndef VULNID_STORE_LIFECYCLE_H
#define VULNID_STORE_LIFECYCLE_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* Whether entry id exists. */
vulnid_status store_lifecycle_entry_exists(store *st, const char *id, gboolean *found, GError **err);

/* Whether entry id waits for its creator's confirmation (an 'unconfirmed'
 * token, [lifecycle] confirm_unsigned). */
vulnid_status store_lifecycle_unconfirmed(store *st, const char *entry_id, gboolean *found, GError **err);

/* The sequence number the next record of entry_id gets. */
vulnid_status store_lifecycle_next_seq(store *st, const char *entry_id, gint64 *seq, GError **err);

/* The address lists the vendor of entry_id was notified at (the vendor
 * tokens' rows, each a comma-separated list), in order, at most 50. */
vulnid_status store_lifecycle_vendor_token_addresses(store *st, const char *entry_id, GPtrArray **out,
						     GError **err);

/* An endorsement (or its withdrawal) of a key, for one entry or all.  For
 * an insert the strings are borrowed; as read they are the caller's
 * (store_endorsement_clear()). */
typedef struct {
	char *created;
	gint64 message;		/* the mail that made it, or 0 */
	char *entry;		/* NULL: every entry (a moderator's) */
	char *fingerprint;	/* the endorsed key, upper case */
	char *endorser;		/* the key that endorsed it */
	char *how;		/* "command" or "certification" */
	char *action;		/* "endorse" or "unendorse" */
	char *fields;		/* the headline fields allowed, or NULL: all */
} store_endorsement;

vulnid_status store_lifecycle_endorsement_insert(store *st, const store_endorsement *en, GError **err);
/* The latest endorsement row of fingerprint for entry (NULL: the one for
 * every entry): action, endorser, how and fields are filled when found. */
vulnid_status store_lifecycle_endorsement_latest(store *st, const char *fingerprint, const char *entry,
						 store_endorsement *out, gboolean *found, GError **err);
void store_endorsement_clear(store_endorsement *en);

#endif
