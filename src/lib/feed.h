/* feed.h - the public feed: JSON Lines per year in SHA-256 chains, a
 * signed HEAD, and its verification (doc/vulnid-feed.5)
 *
 * The feed is a deterministic function of the database: a line's place is
 * the rowid of the record that caused it ("pos"), and what it says is the
 * entry as it was when that record was written.  So re-running the export
 * only appends, and an incremental export equals a full one. */
#ifndef VULNID_FEED_H
#define VULNID_FEED_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "status.h"

#define FEED_FORMAT "vulnid-feed-1"
#define FEED_HEAD "HEAD.json"
#define FEED_HEAD_SIG "HEAD.json.asc"
#define FEED_KEY "robot.asc"

/* Hard limits for reading a feed (which may come from anywhere). */
#define FEED_MAX_LINE_DEFAULT (64 * 1024 * 1024)	/* bytes per line */
#define FEED_MAX_YEARS 2000				/* year files */
#define FEED_MAX_DIR_ENTRIES 100000			/* names in the directory */
#define FEED_MAX_DEPTH 16				/* JSON nesting */
#define FEED_MAX_HEAD (1024 * 1024)			/* HEAD.json bytes */
#define FEED_MAX_SIG (256 * 1024)			/* HEAD.json.asc bytes */

/* The format's building blocks, shared by the exporter (feed-export.h),
 * the verifier (feed-verify.h) and the transparency log (feedlog.h). */

/* Whether JSON text nests arrays and objects at most max_depth deep
 * (strings are skipped; the text need not be valid). */
gboolean feed_json_depth_ok(const char *text, gsize len, guint max_depth);

/* Canonical text of a parsed value (members in their order, no white
 * space, canonjson strings, integers); NULL for non-integer numbers. */
char *feed_json_canonical(JsonNode *node);

/* The frame every line begins with, {"feed":"vulnid-feed-1","year":Y,
 * "n":N,"pos":P, read from the first bytes of a line. */
gboolean feed_line_frame(const char *line, gsize len, int *year, guint64 *n, gint64 *pos);

/* The entry a line is in the feed's log (version 2, vulnid-feed(5) LOG):
 *   {"log":"vulnid-log-2","year":Y,"n":N,"pos":P,"type":"T","entry":"ID",
 *    "seq":S,"sha256":"HEX"}
 * with the values of the line's first seven members (every line begins
 * feed, year, n, pos, type, entry, seq) and the SHA-256 of the whole line
 * (without its newline), or NULL for a line that does not begin so.  At
 * most FEED_MAX_LOG_ENTRY bytes, so that every entry bundle can hold it. */
#define FEED_LOG_FORMAT "vulnid-log-2"
#define FEED_MAX_LOG_ENTRY 300
char *feed_log_entry(const char *line, gsize len);

/* SHA-256 (hex) of a line's bytes before `,"hash":"`, or NULL. */
char *feed_line_hash(const char *line, gsize len);

#endif
