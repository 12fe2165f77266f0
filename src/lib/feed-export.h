/* feed-export.h - writing the public feed (vulnid-feed(5)) from the
 * database: the year files, HEAD.json and its transparency log */
#ifndef VULNID_FEED_EXPORT_H
#define VULNID_FEED_EXPORT_H

#include <glib.h>

#include "feed.h"
#include "feedlog.h"
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
	guint witnesses;		/* configured */
	guint cosigned;			/* of them, cosigning the checkpoint now */
	guint cosignatures_added;
	GPtrArray *witness_problems;	/* char*: why a witness did not cosign */
} feed_export_result;

void feed_export_result_clear(feed_export_result *res);

typedef struct {
	const note_key *log_key;	/* signs the log's checkpoints */
	GPtrArray *witnesses;		/* note_witness*: whose cosignatures to merge */
	feedlog_post_fn post;		/* reaches the witnesses with a URL (NULL: not at all) */
	gpointer post_data;
} feed_export_opts;

/* Append what is new to DIR (created if missing) and sign HEAD.json with
 * the robot's key (crypto_set_home() must have been called).  An existing
 * feed must be this instance's: its last lines are checked against the
 * database, and a torn last line of a killed export is cut off.  The
 * transparency log (feedlog.h) follows the lines, signed with o->log_key,
 * and HEAD.json names its checkpoint; then the witnesses' cosignatures
 * are merged into it (feedlog_cosign()). */
vulnid_status feed_export(store *st, const char *dir, const feed_export_opts *o, feed_export_result *res,
			  GError **err);

#endif
