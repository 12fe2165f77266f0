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


#endif
