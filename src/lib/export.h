/* export.h - the public archive: every entry's public view read in one
 * snapshot, and the files the exports write
 *
 * What is public about an entry is decided by disclosure.h, once; the
 * feed, OSV, the mbox and the web archive render from the views of one
 * export_set, so that they never disagree. */
#ifndef VULNID_EXPORT_H
#define VULNID_EXPORT_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "disclosure.h"
#include "entry.h"
#include "status.h"
#include "store.h"

/* Every entry and its public view now, read in one transaction. */
typedef struct {
	GPtrArray *entries;	/* entry*, ordered by year and number */
	GPtrArray *views;	/* entry_view* (AUDIENCE_PUBLIC), same order */
	GHashTable *index;	/* id -> GUINT_TO_POINTER(position + 1) */
	GHashTable *duplicates;	/* id -> GPtrArray of ids a moderator marked Duplicate-Of it */
} export_set;

vulnid_status export_set_load(store *st, export_set **out, GError **err);
void export_set_free(export_set *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(export_set, export_set_free)

/* The public view of id in the set, or NULL. */
const entry_view *export_set_view(const export_set *set, const char *id);

/* Shown in exports at all: not withheld as spam (embargoed ones as a stub). */
gboolean export_listed(const entry_view *v);
/* Public now, with content: listed and not under embargo. */
gboolean export_open(const entry_view *v);

/* The rowid of the record from which the public view of e is withheld
 * (a moderator marked it as spam), 0 if it is not.  What the view showed
 * before it stays shown where it was published (the feed, an append-only
 * log); from this record on, nothing more of e is. */
gint64 export_withheld_since(const entry *e);

/* Remove files DIR/<prefix><ID><suffix> not in keep (file names): what an
 * earlier export wrote for entries no longer published.  Nothing else. */
void export_remove_stale(const char *dir, const char *prefix, const char *suffix, GHashTable *keep);

/* Serialise JSON as the exports write it: indented, final newline. */
char *export_json_text(JsonNode *node);

/* Write a file atomically (temporary file, fsync, rename) with mode. */
vulnid_status export_write_file(const char *path, const void *data, gsize len, int mode,
				GError **err);

typedef struct {
	guint files;		/* files of the instance carried (--all) */
	GPtrArray *skipped;	/* names left out: not regular, too large, too deep */
} export_backup_info;

void export_backup_info_clear(export_backup_info *info);

/* A consistent copy of the whole database (SQLite backup API, one read
 * snapshot: filters keep writing meanwhile).  The copy is written next to
 * path and renamed into place; it is a self-contained file (rollback
 * journal mode), mode 0600.  With instance_dir (vulnid backup --all), the
 * files of the instance go into it too, in tables of their own: the
 * keyring, log.key, vulnid.conf, the witness state, templates, every
 * other file the operator put there (not the database and its journals,
 * audit.log, which the database rebuilds, tmp/, sent/ or sockets). */
vulnid_status export_backup(store *st, const char *instance_dir, const char *path, gboolean force,
			    gint64 busy_timeout_ms, export_backup_info *info, GError **err);

/* The same, written to the descriptor out (standard output), through a
 * scratch file in scratch_dir that is gone when this returns. */
vulnid_status export_backup_to_fd(store *st, const char *instance_dir, const char *scratch_dir, int out,
				  gint64 busy_timeout_ms, export_backup_info *info, GError **err);

#endif
