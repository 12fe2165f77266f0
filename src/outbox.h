/* outbox.h - outgoing mail: built with GMime, queued in the database in the
 * transaction that caused it, delivered afterwards (transactional outbox) */
#ifndef VULNID_OUTBOX_H
#define VULNID_OUTBOX_H

#include <glib.h>

#include "config.h"
#include "status.h"
#include "store.h"

typedef struct {
	const char *kind;	/* ack, error, help, ... */
	const char *entry;	/* the entry it is about, or NULL */
	const char *to_addr;
	const char *to_name;	/* may be NULL */
	const char *subject;	/* cleaned again here: never more than one line */
	const char *body;	/* UTF-8, \n line ends */
	const char *reply_to;	/* address, or NULL for the request address */
	const char *in_reply_to;	/* msg-id without <>, validated, or NULL */
	GPtrArray *references;	/* msg-ids without <>, or NULL */
} outbox_mail;

/* Build the mail and insert it (status queued) with its audit events. */
vulnid_status outbox_queue(store *st, const vulnid_config *cfg, gint64 cause,
			   const outbox_mail *mail, gint64 *id, GError **err);

typedef struct {
	guint delivered;
	guint deferred;
	guint failed;
} outbox_run_result;

/* Deliver due items (all when cause is 0, else those caused by that
 * message); force ignores next_attempt.  Each item's new state is committed
 * in its own transaction. */
vulnid_status outbox_run(store *st, const vulnid_config *cfg, gint64 cause, gboolean force,
			 outbox_run_result *res, GError **err);

/* Bytes of an outbox item's mail (CRLF line ends, as for SMTP). */
vulnid_status outbox_get_data(store *st, gint64 id, GBytes **out, GError **err);

#endif
