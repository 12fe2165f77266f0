/* feed-export.h - writing the public feed (vulnid-feed(5)) from the
 * database: the year files, HEAD.json and its transparency log */
#ifndef VULNID_FEED_EXPORT_H
#define VULNID_FEED_EXPORT_H

#include <glib.h>

#include "feed.h"
#include "note.h"
#include "status.h"
#include "store.h"

typedef struct {
	guint64 appended;	/* lines appended, all years */
	guint years;		/* year files in the feed */
	gint64 pos;		/* the feed is complete up to this record rowid */
	gboolean head_written;	/* HEAD.json was (re-)signed */
	guint64 log_size;	/* entries in the log (feedlog.h) */
	guint64 log_appended;
	gboolean checkpoint_written;
} feed_export_result;

/* Append what is new to DIR (created if missing) and sign HEAD.json with
 * the robot's key (crypto_set_home() must have been called).  An existing
 * feed must be this instance's: its last lines are checked against the
 * database, and a torn last line of a killed export is cut off.  The
 * transparency log (feedlog.h) follows the lines, signed with log_key,
 * and HEAD.json names its checkpoint. */
vulnid_status feed_export(store *st, const char *dir, const note_key *log_key, feed_export_result *res,
			  GError **err);

#endif
