/* notify.h - mail to people other than the sender: vendors, mailing lists,
 * researchers whose vendor notification bounced */
#ifndef VULNID_NOTIFY_H
#define VULNID_NOTIFY_H

#include <glib.h>

#include "config.h"
#include "disclosure.h"
#include "entry.h"
#include "outbox.h"
#include "status.h"
#include "store.h"

/* Render template tmpl with vars, take its Subject (if any) and body into
 * mail, and queue it.  The common path of every mail the robot writes. */
vulnid_status notify_queue_template(store *st, const vulnid_config *cfg, gint64 cause,
				    const char *tmpl, GHashTable *vars, outbox_mail *mail,
				    gint64 *id, GError **err);

/* Tell the vendor's security contact about a new entry (vendor_contacts_for
 * decides who).  A sentence for the researcher's ack is appended to note. */
vulnid_status notify_vendor(store *st, const vulnid_config *cfg, gint64 cause,
			    const char *entry_id, GString *note, GError **err);

/* The files of record vr that may go to a vendor with the mail about it
 * (*parts, outbox_attachment*: at most 4 MiB in all, never a key, never
 * one that holds a token, never an anonymous researcher's unless
 * relayed: the mail she sent to be relayed) and *listing, their names,
 * types, sizes and SHA-256, saying which are attached (NULL: none);
 * nothing of a record the view does not show. */
vulnid_status notify_attachments(store *st, const view_record *vr, gboolean relayed, GPtrArray **parts,
				  char **listing, GError **err);
/* The same listing, with no file attached (the mail would be too big). */
vulnid_status notify_attachment_hashes(const view_record *vr, char **listing);

/* Announce a public entry to the configured lists (or keep it for the
 * daily digest). */
vulnid_status notify_announce(store *st, const vulnid_config *cfg, gint64 cause,
			      const char *entry_id, GError **err);

/* Send the digest of entries announced before today; *sent is 0 or 1. */
vulnid_status notify_digest_run(store *st, const vulnid_config *cfg, guint *sent, GError **err);

/* Tell an entry's creator, once, that mail they were told about failed
 * for good for these recipients (a bounce, a 5xx, given up): the vendor
 * notification or a message relayed to the vendor.  Names the addresses
 * as the robot sent to them.  Other kinds: nothing.  An outbox_failure_fn,
 * run in the transaction that records the failure. */
vulnid_status notify_delivery_failed(store *st, const vulnid_config *cfg, const outbox_failure *f,
				     GError **err);

/* Subscribers of an entry: the latest subscribe or unsubscribe of each
 * address counts (at most 200, in the order they first subscribed). */
vulnid_status notify_subscribers(store *st, const char *entry_id, GPtrArray **out, GError **err);

/* Mail record seq of entry_id to the entry's subscribers (what the public
 * view shows of it), in the caller's transaction. */
vulnid_status notify_tell_subscribers(store *st, const vulnid_config *cfg, GDateTime *now,
				      gint64 cause, const char *entry_id, gint64 seq, GError **err);

#endif
