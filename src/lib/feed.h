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

#include "note.h"
#include "status.h"
#include "store.h"

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

typedef struct {
	gsize max_line;		/* 0: FEED_MAX_LINE_DEFAULT */
	gint64 since;		/* hand lines with pos > since to the callback; < 0: none */
	const char *previous;	/* an earlier, verified HEAD.json: the feed must extend it */
} feed_verify_opts;

/* A verified line (without its newline), in pos order; called only after
 * the whole feed verified. */
typedef void (*feed_line_fn)(const char *line, gsize len, gpointer data);

typedef struct {
	char *bad_file;		/* where verification failed (path), or NULL */
	guint64 bad_line;	/* the first bad line there (1-based), 0: the whole file */
	guint64 lines;
	guint years;
	guint64 entries;
	guint64 embargoed;	/* entries whose last word is a stub */
	guint64 released;	/* stubs whose records followed and matched */
	char *robot;		/* fingerprint in HEAD.json (= the signer) */
	char *time;		/* HEAD.json's time */
	gint64 pos;		/* HEAD.json's pos: the cursor for --since */
	char *log_origin;	/* the checkpoint HEAD.json names, or NULL */
	gint64 log_size;
	char *log_root;		/* base64 */
} feed_verify_result;

void feed_verify_result_clear(feed_verify_result *r);

/* Verify DIR against the robot's public key (armored or binary): HEAD's
 * signature, every chain, every record hash, every commitment, HEAD's
 * last hashes.  Needs no instance. */
vulnid_status feed_verify(const char *dir, GBytes *key, const feed_verify_opts *o,
			  feed_line_fn fn, gpointer data, feed_verify_result *res, GError **err);

/* Building blocks, public for the unit tests. */

/* Whether JSON text nests arrays and objects at most max_depth deep
 * (strings are skipped; the text need not be valid). */
gboolean feed_json_depth_ok(const char *text, gsize len, guint max_depth);

/* Canonical text of a parsed value (members in their order, no white
 * space, canonjson strings, integers); NULL for non-integer numbers. */
char *feed_json_canonical(JsonNode *node);

/* The frame every line begins with, {"feed":"vulnid-feed-1","year":Y,
 * "n":N,"pos":P, read from the first bytes of a line. */
gboolean feed_line_frame(const char *line, gsize len, int *year, guint64 *n, gint64 *pos);

/* SHA-256 (hex) of a line's bytes before `,"hash":"`, or NULL. */
char *feed_line_hash(const char *line, gsize len);

#endif
