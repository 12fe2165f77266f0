/* policy.h - the outgoing-mail policy: whom the robot writes to without
 * being asked, how often, and how much (vulnid-filter(8), OUTGOING MAIL
 * POLICY; the table there is checked by test/T470-policy-table.sh)
 *
 * Every mail the robot writes passes policy_queue() on its way into the
 * outbox (notify_queue_template() calls it), and vendor contacts pass
 * policy_vendor_contacts() before anyone is told.  What it counts is in
 * mail_ledger: one row per recipient of each mail queued.
 *
 *   answers      (ack, error, help, key, entry-reply, rate-limited) go to
 *                the sender; a Reply-To in another domain than From and the
 *                envelope sender is a third party: capped and counted in the
 *                mail's budget, else the answer goes to From; the loop brake
 *                answers mail that looks automatic or repeats at most
 *                [policy] loop_answers times per loop_hours per address;
 *                answers to mail that does not prove its reply address (a
 *                known key, a token sent to it, DMARC for From) get at most
 *                unverified_answer_bytes per unverified_answer_hours per
 *                address, counted in hourly buckets (answer_bytes), then
 *                one notice (answers-paused) and nothing
 *   unsolicited  (vendor-notify, relay-to-vendor, vendor-response,
 *                notify-failed, access-request): at most
 *                per_address_per_day and
 *                per_domain_per_day; a mail not signed by a known key makes
 *                the robot write to at most third_party_per_mail such
 *                addresses, and never more bytes to third parties than
 *                amplification times its size (at least amplification_floor)
 *   asked for    (subscription, to confirmed subscribers; access-delivery,
 *                to a key that asked in a signed mail and was granted) and the
 *                operator's lists (announce, announce-digest): not limited
 */
#ifndef VULNID_POLICY_H
#define VULNID_POLICY_H

#include <glib.h>

#include "config.h"
#include "entry.h"
#include "outbox.h"
#include "status.h"
#include "store.h"

/* Why an address taken from a mail (a Vendor-Contact, security@ the
 * domain named in Vendor:) may never be written to, or NULL: an address
 * literal, a quoted local part, a source route, a local, reserved or
 * single-label domain, the robot's own domain. */
const char *policy_address_refusal(const vulnid_config *cfg, const char *address);

/* What the policy knows of the mail being handled (intake registers it
 * once the mail is archived, under its messages row). */
typedef struct {
	gint64 cause;		/* messages.id */
	gint64 size;		/* bytes received */
	gboolean signed_mail;	/* signed by a known key */
	const char *from;	/* From address, or NULL */
	const char *envelope_sender;
	gboolean suspect;	/* looks automatic or repeats (loop.h) */
	const char *suspect_why;
	/* Its reply address is known to be the sender's: a known key signed
	 * it, it carries a token sent to that address, or the operator's MTA
	 * verified its From (DMARC) and the answer goes there.  Answers to
	 * other mail count against the address's unverified answer budget. */
	gboolean verified;
} policy_mail;

void policy_mail_begin(const policy_mail *pm);
void policy_mail_end(gint64 cause);

/* Queue mail as outbox_queue() does, if the policy lets it go: *id is 0
 * when it was held back (audited: loop-brake, policy-held); recipients may
 * be fewer than asked (the others are audited), and an answer to a
 * third-party Reply-To may go to From instead. */
vulnid_status policy_queue(store *st, const vulnid_config *cfg, gint64 cause, outbox_mail *mail,
			   gint64 *id, GError **err);

/* The vendor contacts to tell about entry e now (how: as
 * vendor_contacts_for() said): those already told, refused and held are
 * taken out of to, with a sentence for the researcher in note.  A
 * Vendor-Contact of an entry whose creator is not verified (a known key,
 * or the creator's token) is held until the creator confirms with the
 * token (policy_entry_held()). */
vulnid_status policy_vendor_contacts(store *st, const vulnid_config *cfg, gint64 cause, const entry *e,
				     const char *how, GPtrArray *to, GString *note, GError **err);

/* Mark contacts (comma-separated) of entry_id as held. */
vulnid_status policy_hold_contacts(store *st, const char *entry_id, const char *addresses, GError **err);

/* Whether vendor contacts of entry_id were held (and wait for the
 * creator's token). */
vulnid_status policy_entry_held(store *st, const char *entry_id, gboolean *held, GError **err);

#endif
