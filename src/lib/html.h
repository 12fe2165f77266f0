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
	osv_opts osv;			/* OSV ids of the JSON beside the pages */
} html_opts;

typedef struct {
	guint entries;		/* entry pages */
	guint osv;		/* OSV records */
	guint mails;		/* raw mails */
} html_result;

/* Write DIR/index.html, DIR/YYYY.html, DIR/vendors.html,
 * DIR/entries/ID.html, DIR/osv/<osv id>.json and DIR/mail/ID-SEQ.eml (each
 * public record as a mail, pubmail.h);
 * pages of entries no longer published (spam) are removed. */
vulnid_status html_export(store *st, const char *dir, const html_opts *o, html_result *res,
			  GError **err);

/* Append text as HTML: & < > " ' escaped; control characters (but line
 * breaks and tabs when multiline) and bidirectional overrides shown as
 * U+FFFD, so hostile text can neither inject markup nor reorder a page. */
void html_append_text(GString *out, const char *s, gboolean multiline);

#endif
