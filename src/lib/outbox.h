/* outbox.h - outgoing mail: built with GMime, queued in the database in the
 * transaction that caused it, delivered afterwards (transactional outbox) */
#ifndef VULNID_OUTBOX_H
#define VULNID_OUTBOX_H

#include <glib.h>

#include "config.h"
#include "status.h"
#include "store.h"
#include "store-outbox.h"

/* A part after the text of a mail (outbox_mail.attachments). */
typedef struct {
	GBytes *data;
	char *type;		/* type/subtype */
	char *name;		/* file name, or NULL */
} outbox_attachment;

void outbox_attachment_free(gpointer p);

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
	GPtrArray *attachments;	/* outbox_attachment*: more parts after it, or NULL */
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

/* Recipients of one item that have just failed for good (a 5xx, given up
 * after the lifetime, a bounce), as the item names them: the addresses
 * the robot sent to, never a relay's rewritten ones. */
typedef struct {
	gint64 outbox;
	const char *kind;
	const char *entry;	/* or NULL */
	gint64 cause;		/* the message that queued the item, or 0 */
	GPtrArray *addresses;	/* const char* */
	GPtrArray *reasons;	/* const char*, one for each address */
} outbox_failure;

/* Called inside the transaction that records the failure, so that what it
 * queues (a notice to the researcher) exists exactly when the failure is
 * recorded: once per failure. */
typedef vulnid_status (*outbox_failure_fn)(store *st, const vulnid_config *cfg,
					   const outbox_failure *f, GError **err);

typedef struct {
	gint64 cause;		/* only items caused by this message; 0: all */
	gboolean force;		/* ignore next_attempt (never another run's claim) */
	guint deadline;		/* seconds for the whole delivery; 0: an hour */
	outbox_failure_fn on_failure;	/* or NULL */
	/* Or only the items of these messages (n_causes > 0): claimed by
	 * cause, up to a hundred items a round, the rounds' sessions shared
	 * by the causes (what vulnid-lmtpd's engine committed). */
	const gint64 *causes;
	guint n_causes;
} outbox_run_opts;

/* Deliver due items.  They are claimed first, 100 at a time: in one
 * transaction the due items nobody holds (or whose claim has lapsed or
 * whose claimer has died) get this run's token and a claim_until of
 * outbox_claim_seconds() from now, so that any number of concurrent runs
 * deliver each item once.  Over SMTP, the items of a claim go over one
 * connection, which ends early enough to record the outcome before the
 * claim lapses.  The outcomes of up to 100 items commit
 * together, each with its audit event; a recipient's outcome only moves
 * forward (a bounce recorded meanwhile stays).  A run tries an item at
 * most once (a later run may again); mail that on_failure queues is
 * delivered in a later round of the same run. */
vulnid_status outbox_run(store *st, const vulnid_config *cfg, const outbox_run_opts *opts,
			 outbox_run_result *res, GError **err);

/* How long a run with this deadline holds its claims: the deadline, plus
 * the database lock wait and a minute for recording the outcome. */
guint outbox_claim_seconds(const vulnid_config *cfg, guint deadline);

/* From now on, items this process queues are claimed by it at once, for
 * seconds (0: no longer): the filter delivers the mail a message caused
 * right after its commit, and so needs no transaction of its own to claim
 * it. */
void outbox_claim_queued(guint seconds);

/* Make item id due now again; failed recipients are tried again too. */
vulnid_status outbox_retry(store *st, gint64 id, GError **err);

/* Bytes of an outbox item's mail (CRLF line ends, as for SMTP). */
vulnid_status outbox_get_data(store *st, gint64 id, GBytes **out, GError **err);

/* id, kind, entry, message_id, cause of an item (store-outbox.h) */
typedef store_outbox_ref outbox_ref;

void outbox_ref_free(outbox_ref *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(outbox_ref, outbox_ref_free)

/* The item whose envelope sender is address (a VERP bounce address), or
 * NOTFOUND. */
vulnid_status outbox_find_by_envelope(store *st, const char *address, outbox_ref **out, GError **err);
/* The item with this Message-ID (without <>), or NOTFOUND. */
vulnid_status outbox_find_by_message_id(store *st, const char *msgid, outbox_ref **out, GError **err);

/* A bounce says that a recipient of item id failed for good.  The
 * recipient is found by the DSN's Original-Recipient, then its
 * Final-Recipient, and for a one-recipient item by the VERP address alone
 * (a relay may have rewritten it).  *failed is the item's address that
 * failed now (as queued), or NULL when none did (already failed, or not
 * found); the item becomes failed once no recipient is left to deliver. */
vulnid_status outbox_mark_bounced(store *st, gint64 id, const char *original, const char *final,
				  const char *reason, char **failed, GError **err);

#endif
