/* store-export.h - the database side of exports */
#ifndef VULNID_STORE_EXPORT_H
#define VULNID_STORE_EXPORT_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* Copy the whole database into the existing empty file tmp (SQLite
 * backup API, one read snapshot), switch the copy to a rollback journal
 * and check it (PRAGMA quick_check).  The caller syncs and renames tmp. */
vulnid_status store_export_backup_copy(store *st, const char *tmp, gint64 busy_timeout_ms,
				       GError **err);

/* The feed exporter reads in one read transaction (BEGIN, deferred),
 * ended with store_rollback(): it writes nothing to the database. */
vulnid_status store_export_read_begin(store *st, GError **err);
/* The years that have entries, ascending (GArray of int). */
vulnid_status store_export_years(store *st, GArray **years, GError **err);
/* The newest record's id (0 when none): the feed's position. */
vulnid_status store_export_last_record(store *st, gint64 *pos, GError **err);
/* The sha256 of record seq of entry, or NULL when there is none. */
vulnid_status store_export_record_sha256(store *st, const char *entry, gint64 seq, char **sha256,
					 GError **err);
/* Ids of the entries of year with a record whose id is at least from,
 * in id order. */
vulnid_status store_export_year_entries(store *st, int year, gint64 from, GPtrArray **ids,
					GError **err);

#endif
