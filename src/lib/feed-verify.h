/* feed-verify.h - checking a public feed (vulnid-feed(5)) offline, with
 * the robot's public key alone: the verifier of `vulnid verify-feed` */
#ifndef VULNID_FEED_VERIFY_H
#define VULNID_FEED_VERIFY_H

#include <glib.h>

#include "feed.h"
#include "status.h"

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
	char *log_origin;	/* the log's checkpoint HEAD.json names ("log"), or NULL */
	gint64 log_size;
	char *log_root;		/* base64 */
	char *v1_origin;	/* the version-1 log's ("checkpoint"), or NULL */
	gint64 v1_size;
	char *v1_root;
} feed_verify_result;

void feed_verify_result_clear(feed_verify_result *r);

/* Verify DIR against the robot's public key (armored or binary): HEAD's
 * signature, every chain, every record hash, every commitment, HEAD's
 * last hashes.  Needs no instance. */
vulnid_status feed_verify(const char *dir, GBytes *key, const feed_verify_opts *o,
			  feed_line_fn fn, gpointer data, feed_verify_result *res, GError **err);

#endif
