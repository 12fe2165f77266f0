/* store-audit.h - the `audit` table: the hash chain of audit lines
 *
 * Typed accessors for audit.c (and the code that asks whether an event was
 * recorded); the chain logic itself stays in audit.c. */
#ifndef VULNID_STORE_AUDIT_H
#define VULNID_STORE_AUDIT_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* Hash of the newest line, or NULL when the chain is empty. */
vulnid_status store_audit_head(store *st, char **hash, GError **err);
/* Append a line and its hash (in the caller's transaction). */
vulnid_status store_audit_insert(store *st, const char *line, gsize len,
				 const char *hash, GError **err);
/* Sequence number of the line carrying hash, -1 when none does. */
vulnid_status store_audit_seq_of_hash(store *st, const char *hash, gint64 *seq, GError **err);
/* Append every line after seq `after` to out, each followed by a newline;
 * *count (may be NULL) is the number of lines appended. */
vulnid_status store_audit_lines_after(store *st, gint64 after, GString *out,
				      guint64 *count, GError **err);
/* Number of lines and the newest hash (NULL when empty). */
vulnid_status store_audit_summary(store *st, guint64 *count, char **head, GError **err);

/* Called per line in chain order; return FALSE to stop (the walk then
 * returns VULNID_OK with *stopped_at = seq). */
typedef gboolean (*store_audit_line_fn)(gint64 seq, const char *line, gsize len,
					const char *hash, gpointer data);
vulnid_status store_audit_foreach(store *st, store_audit_line_fn fn, gpointer data,
				  gint64 *stopped_at, GError **err);

/* Whether an event of kind `event` with "fingerprint" = fpr was recorded:
 * json_extract over the line (the schema has no column for either, so it
 * is a scan of the chain, as the LIKE it replaces was). */
vulnid_status store_audit_has_fingerprint_event(store *st, const char *event, const char *fpr,
						gboolean *found, GError **err);

#endif
