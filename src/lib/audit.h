/* audit.h - the operators' audit log: JSON lines in a SHA-256 hash chain
 *
 * Each event is appended to the `audit` table inside the caller's
 * transaction, so the chain head advances atomically with what the event
 * describes.  audit_flush() then copies committed lines that the file does
 * not have yet into audit.log, under an exclusive lock, in chain order:
 * concurrent filters never interleave lines, and a process killed between
 * commit and flush is caught up by the next one. */
#ifndef VULNID_AUDIT_H
#define VULNID_AUDIT_H

#include <glib.h>

#include "jsonl-chain.h"
#include "status.h"
#include "store.h"

#define AUDIT_GENESIS JSONL_CHAIN_GENESIS

typedef struct audit_event audit_event;

/* ts, event, id and message_id come first in every line (id and
 * message_id may be NULL and are then written as null). */
audit_event *audit_event_new(const char *event, const char *id, const char *message_id);
void audit_event_str(audit_event *ev, const char *key, const char *value);
void audit_event_int(audit_event *ev, const char *key, gint64 value);
void audit_event_free(audit_event *ev);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(audit_event, audit_event_free)

/* Append to the chain in the current transaction. */
vulnid_status audit_append(store *st, audit_event *ev, GError **err);

/* Convenience: append one event in its own transaction. */
vulnid_status audit_append_now(store *st, audit_event *ev, GError **err);

/* The event "migrated" of an upgrade of the schema (from, to, the
 * program's version, what changed): the store_migrate_hook of every
 * program, run in the migration's transaction. */
vulnid_status audit_schema_migrated(store *st, int from, int to, GError **err);

/* Bring audit.log up to date with the database. */
vulnid_status audit_flush(store *st, const char *path, GError **err);

/* Check audit.log: every line's hash, the prev links, and that the file
 * and the database hold the same chain.  On failure *bad_line is the first
 * line (1-based) found wrong, 0 when the problem is not one line.  Rotated
 * files are read too (see audit_verify_chain); *lines counts all. */
vulnid_status audit_verify(store *st, const char *path, guint64 *lines,
			   guint64 *bad_line, GError **err);

typedef struct {
	guint files;		/* files read: rotated ones, then the log itself */
	guint64 lines;		/* lines in all of them */
	guint64 first_seq;	/* event of their first line (1 unless old files are gone) */
	char *bad_file;		/* the file where the chain broke, or NULL */
	guint64 bad_line;	/* its first bad line, 0 when not one line */
} audit_verify_result;

void audit_verify_result_clear(audit_verify_result *r);

/* Check the chain across rotated files as logrotate leaves them (PATH.N or
 * PATH.N.gz, oldest first, then PATH): each line's hash, the prev links
 * across file boundaries, and that the files end where the database chain
 * ends.  When the oldest files were removed, the first line left must
 * follow an event of the database chain. */
vulnid_status audit_verify_chain(store *st, const char *path, audit_verify_result *r, GError **err);

/* After a crash lost lines of PATH (or the file): check the database
 * chain, keep the damaged file as PATH.damaged-TIME (*saved, NULL if it was
 * empty or already right), and write PATH anew from the database, starting
 * after the newest rotated file.  *written: lines in the new file. */
vulnid_status audit_repair(store *st, const char *path, guint64 *written, char **saved, GError **err);

/* Hash of one line as stored: SHA-256 of the text before `,"hash":`. */
char *audit_line_hash(const char *line, gsize len);

#endif
