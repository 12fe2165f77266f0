/* notify.h - mail to people other than the sender: vendors, mailing lists,
 * researchers whose vendor notification bounced */
#ifndef VULNID_NOTIFY_H
#define VULNID_NOTIFY_H

#include <glib.h>

#include "config.h"
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

#endif
