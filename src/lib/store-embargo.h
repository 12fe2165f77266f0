/* store-embargo.h - the database accessors of embargo releases
 * (embargo.c); statements prepared once per connection. */
#ifndef VULNID_STORE_EMBARGO_H
#define VULNID_STORE_EMBARGO_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* The raw mail behind record row record_row, as stored (*sealed: sealed
 * to the robot key); VULNID_ERR_NOTFOUND when it is missing. */
vulnid_status store_embargo_raw_message(store *st, gint64 record_row, GBytes **data, gboolean *sealed,
					GError **err);

/* The entries that ever had an embargo, oldest first. */
vulnid_status store_embargo_entries(store *st, GPtrArray **ids, GError **err);

#endif
