/* html.h - the static web archive: plain HTML and CSS, no JavaScript,
 * readable from file:// as from any web server */
#ifndef VULNID_HTML_H
#define VULNID_HTML_H

#include <glib.h>

#include "export.h"
#include "osv.h"
#include "status.h"
#include "store.h"

typedef struct {
	const char *title;		/* site title */
	const char *robot_domain;	/* replacement Message-IDs in anonymized mail */
	osv_opts osv;			/* OSV ids of the JSON beside the pages; its
					 * base_url is where the site is published */
	const char *request_address;	/* where to ask the robot for its key, or NULL */
	const char *robot_fpr;		/* the robot's OpenPGP fingerprint, or NULL */
	const char *log_vkey;		/* the feed's log key (note vkey), or NULL */
} html_opts;

typedef struct {
	guint entries;		/* entry pages */
	guint osv;		/* OSV records */
	guint mails;		/* raw mails */
} html_result;

/* Write DIR/index.html (the latest entries, the years), DIR/YYYY.html,
 * DIR/vendors.html, DIR/entries/ID.html, DIR/osv/<osv id>.json,
 * DIR/mail/ID-SEQ.eml (each public record as a mail, pubmail.h),
 * DIR/feed.atom (an RFC 4287 feed of the latest new entries and vendor
 * positions, linked from every page) and DIR/verify.html (how to check
 * the archive: the feed, its log key, the robot's key); pages of entries
 * no longer published (spam) are removed. */
vulnid_status html_export(store *st, const char *dir, const html_opts *o, html_result *res,
			  GError **err);

/* Append text as HTML: & < > " ' escaped; control characters (but line
 * breaks and tabs when multiline) and bidirectional overrides shown as
 * U+FFFD, so hostile text can neither inject markup nor reorder a page. */
void html_append_text(GString *out, const char *s, gboolean multiline);

#endif
