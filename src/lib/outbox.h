/* outbox.h - outgoing mail: built with GMime, queued in the database in the
 * transaction that caused it, delivered afterwards (transactional outbox) */
#ifndef VULNID_OUTBOX_H
#define VULNID_OUTBOX_H

#include <glib.h>

#include "config.h"
#include "status.h"
#include "store.h"

typedef struct {
	const char *kind;	/* ack, error, help, vendor-notify, announce, ... */
	const char *entry;	/* the entry it is about, or NULL */
	const char *to_addr;	/* one recipient ... */
	const char *to_name;	/* (may be NULL) */
	const char *const *to_list;	/* ... or several (NULL-terminated), if set */
	const char *subject;	/* cleaned again here: never more than one line */
	const char *body;	/* UTF-8, \n line ends */
	const char *reply_to;	/* address, or NULL for the request address */
	const char *in_reply_to;	/* msg-id without <>, validated, or NULL */
	GPtrArray *references;	/* msg-ids without <>, or NULL */
	const char *message_id;	/* stable msg-id without <>, or NULL for a new one */
	const char *auto_submitted;	/* NULL: auto-replied */
	gboolean bulk;		/* add Precedence: bulk */
	GBytes *attachment;	/* optional second part, e.g. a key */
	const char *attachment_type;	/* its type/subtype */
	const char *attachment_name;	/* its file name */
	const char *const *encrypt_to;	/* fingerprints: encrypt (and sign) to them */
} outbox_mail;

/* Build the mail and insert it (status queued), its recipients and the
 * audit event, in the caller's transaction.  The envelope sender is
 * bounce_local+TOKEN@domain (VERP), so that a bounce names the item. */
vulnid_status outbox_queue(store *st, const vulnid_config *cfg, gint64 cause,
			   const outbox_mail *mail, gint64 *id, GError **err);

typedef struct {
	guint delivered;
	guint deferred;
	guint failed;
} outbox_run_result;

/* Deliver due items (all when cause is 0, else those caused by that
 * message); force ignores next_attempt.  Over SMTP, all of them go over one
 * connection, bounded by deadline seconds (0: none).  Each item's new state
 * is committed in its own transaction, with its audit event. */
vulnid_status outbox_run(store *st, const vulnid_config *cfg, gint64 cause, gboolean force,
			 guint deadline, outbox_run_result *res, GError **err);

/* Make item id due now again; failed recipients are tried again too. */
vulnid_status outbox_retry(store *st, gint64 id, GError **err);

/* Bytes of an outbox item's mail (CRLF line ends, as for SMTP). */
vulnid_status outbox_get_data(store *st, gint64 id, GBytes **out, GError **err);

typedef struct {
	gint64 id;
	char *kind;
	char *entry;
	char *message_id;
	gint64 cause;
} outbox_ref;

void outbox_ref_free(outbox_ref *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(outbox_ref, outbox_ref_free)

/* The item whose envelope sender is address (a VERP bounce address), or
 * NOTFOUND. */
vulnid_status outbox_find_by_envelope(store *st, const char *address, outbox_ref **out, GError **err);
/* The item with this Message-ID (without <>), or NOTFOUND. */
vulnid_status outbox_find_by_message_id(store *st, const char *msgid, outbox_ref **out, GError **err);

/* Record that recipient of item id failed for good (a bounce); the item
 * becomes failed once no recipient is left to deliver.  Audited. */
vulnid_status outbox_mark_bounced(store *st, gint64 id, const char *recipient,
				  const char *reason, GError **err);

#endif
