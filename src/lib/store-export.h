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

/* A file of the instance carried by a backup (vulnid backup --all). */
typedef struct {
	char *name;		/* relative to the instance directory, '/' between names */
	guint mode;		/* its permission bits */
	GBytes *data;
} store_backup_file;

void store_backup_file_free(store_backup_file *f);

/* Add to the backup copy at path (after store_export_backup_copy()) the
 * files of the instance and what the backup says of itself (info: key ->
 * value, both strings), in tables of their own, in one transaction. */
vulnid_status store_export_backup_add(const char *path, GPtrArray *files, GHashTable *info, GError **err);

/* Of the backup at path, about to become an instance's vulnid.db: check
 * it (PRAGMA quick_check, a vulnid database of a schema this program
 * knows), take its files and info out (none for a database-only backup)
 * and drop their tables, and switch it to WAL mode.  *files holds
 * store_backup_file*, *info strings. */
vulnid_status store_export_backup_take(const char *path, GPtrArray **files, GHashTable **info, GError **err);

/* How many entries there are, and the identifier of the last one assigned
 * (NULL when none), for what a restore says. */
vulnid_status store_export_entries_summary(store *st, gint64 *count, char **last, GError **err);

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
