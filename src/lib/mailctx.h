/* mailctx.h - what every step of handling one incoming mail shares
 *
 * intake.c owns the flow (spool, parse, one transaction); the steps that
 * act on entries (lifecycle.c) get this context and the helpers below,
 * and run inside the same transaction.  The envelope and the result are
 * defined here, below both, so that neither includes the other's header
 * (doc/ARCHITECTURE.md, the layers). */
#ifndef VULNID_MAILCTX_H
#define VULNID_MAILCTX_H

#include <glib.h>

#include "config.h"
#include "crypto.h"
#include "disclosure.h"
#include "hashcash.h"
#include "message.h"
#include "outbox.h"
#include "status.h"
#include "store.h"

typedef struct {
	const char *sender;	/* envelope sender (-f), or NULL */
	const char *recipient;	/* envelope recipient (-r), or NULL */
	const char *client_address;	/* the SMTP client's IP address (-a, or an
					 * LMTP server's XFORWARD ADDR), or NULL;
					 * "received": from the topmost Received field */
} intake_envelope;

typedef enum {
	INTAKE_ASSIGNED,	/* new entries, ack queued */
	INTAKE_DUPLICATE,	/* seen before: nothing new */
	INTAKE_REJECTED,	/* request with errors: error reply, nothing assigned */
	INTAKE_HELP,		/* help reply */
	INTAKE_KEY,		/* the robot's key sent back */
	INTAKE_QUARANTINED,	/* malformed or automatic: archived, set aside */
	INTAKE_BOUNCE,		/* a bounce of our own mail, recorded */
	INTAKE_ENTRY,		/* mail to an entry: records appended, replies queued */
	INTAKE_COMMANDS,	/* commands only */
} intake_outcome;

typedef struct {
	intake_outcome outcome;
	GPtrArray *ids;		/* assigned identifiers */
	char *reason;		/* quarantine or rejection reason */
	char *warning;		/* post-commit trouble (delivery, audit file) */
} intake_result;

void intake_result_free(intake_result *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(intake_result, intake_result_free)

const char *intake_outcome_str(intake_outcome o);

typedef struct {
	const vulnid_config *cfg;
	const intake_envelope *env;
	store *st;
	message *m;
	gint64 msg_row;		/* the archived message */
	char *now;		/* RFC 3339, the time of this mail's handling */
	GDateTime *now_dt;
	const char *envelope_sender;
	const char *recipient;	/* envelope recipient (or Delivered-To/To) */
	intake_result *res;
	/* How the mail was authenticated (recorded on every record). */
	char *auth_json;	/* {"method":"pgp",...} or {"method":"none"} */
	/* The same with the signer's key withheld (an anonymous researcher):
	 * "fingerprint":"withheld" and a salted commitment to the key, whose
	 * salt the robot keeps with the record (record_signers); NULL when
	 * the mail is not signed. */
	char *auth_json_withheld;
	char *key_salt;
	const char *signer;	/* fingerprint of the valid signer, or NULL */
	char *imported_key;	/* key imported on first use for this mail, or NULL */
	crypto_conflict *key_conflict;	/* key refused on first use (its address is claimed) */
	gboolean replay;	/* its signature (or what it decrypted) was acted on before */
	/* A signed mail routed to an entry that its signed text does not
	 * name: that entry's identifier.  The signature then grants no role
	 * (lifecycle.c), is recorded as granting nothing, and is not
	 * remembered for replay protection.  NULL otherwise. */
	const char *unbound;
	gboolean sealed;	/* archived sealed: replies do not repeat its Subject */
	const char *client_address;	/* the SMTP client, canonical, or NULL */
	char *client_net;	/* its /24 or /64, or NULL */
	const char *from_verified;	/* "dmarc" or "dkim": the operator's MTA
					 * authenticated From (authres.h), or NULL */
	const char *text_sha256;	/* of the text as it came (replay keys) */
	/* Set by mail_redact(): the values of the Token lines as written
	 * (what a role is proven with; never recorded), the Token lines that
	 * are no token or over the limit, and the tokens removed from the
	 * mail's texts (or, by their checksum, that look real). */
	GPtrArray *tokens;
	guint bad_tokens;
	guint quoted_tokens;
	/* Set by mail_check_verified(): answers go to an address the mail
	 * proves is its sender's (policy.h, policy_mail.verified). */
	gboolean verified;
	/* Proof of work (hashcash.h): a good stamp for the robot, or NULL;
	 * paid once it was spent now (not before); lifted when it took the
	 * mail past a rate limit. */
	const hashcash_stamp *stamp;
	gboolean paid;
	gboolean lifted;
} mail_ctx;

/* Template values every reply has (request_address, domain, prefix, date,
 * subject, message_id). */
GHashTable *mail_template_vars(const mail_ctx *c);

/* Queue template tmpl to the sender of the mail (Reply-To, From, else the
 * envelope sender), threaded to it, and audit "replied".  No address: no
 * reply, and no error. */
vulnid_status mail_reply(mail_ctx *c, const char *kind, const char *tmpl, GHashTable *vars,
			 const char *entry_id, const char *reply_to, GError **err);

/* The same, encrypted (and signed) to the given fingerprints. */
vulnid_status mail_reply_encrypted(mail_ctx *c, const char *kind, const char *tmpl, GHashTable *vars,
				   const char *entry_id, const char *reply_to,
				   const char *const *encrypt_to, GError **err);

/* Where replies to the mail go (Reply-To, From, else the envelope
 * sender), or NULL when that is no usable address. */
const char *mail_reply_address(const mail_ctx *c);

/* What mail_reply() does for a mail the caller has filled in (kind,
 * entry, Reply-To, attachment, encryption): the recipient, threading and
 * bulk fields are set here. */
vulnid_status mail_queue_reply(mail_ctx *c, const char *tmpl, GHashTable *vars, outbox_mail *mail,
			       GError **err);

/* The auth object for a record of this mail, the key withheld when
 * withhold_key (an anonymous researcher's record), with the role and how
 * it was established (role NULL: a request, which has neither). */
char *mail_record_auth(const mail_ctx *c, gboolean withhold_key, const char *role, const char *how);
/* Keep the withheld key of record row aside (record_signers), when the
 * auth object of the record withholds it. */
vulnid_status mail_record_signer(mail_ctx *c, gint64 row, const char *auth, GError **err);

/* Archive the mail's attachments once, each as an entry_attachment
 * (entry.h) appended to out.  With store_blobs FALSE (a sealed record)
 * only what the commitment covers is computed: the bytes stay inside the
 * archived mail until the release stores them. */
vulnid_status mail_store_attachments(mail_ctx *c, gboolean store_blobs, GPtrArray *out, GError **err);

/* The one redaction step on the way in: the Token lines of the text are
 * read (c->tokens), then every token, of either shape (tokens.h), is
 * removed from everything of the mail that a record, a relay, an answer
 * or a quarantine row may carry: the Subject, the text, the sender's
 * name, the Message-IDs it names, the attachments' file names, the
 * problems found.  Whatever is
 * made from the mail afterwards is made from what is left. */
vulnid_status mail_redact(mail_ctx *c, GError **err);
/* The same for one more string made from the mail (a DSN's diagnostic). */
vulnid_status mail_redact_string(mail_ctx *c, char **s, GError **err);

/* The attachments (entry_attachment*) as one record carries them: with
 * hide (an anonymous entry) the file names lose the researcher's identity,
 * and with withhold_keys (her own record) her keys are withheld: a salt
 * each, the record then commits to them (entry_attachments_canonical()).
 * A new array; NULL with err set when no salt can be made. */
GPtrArray *mail_record_attachments(const GPtrArray *atts, const researcher_identity *hide,
				   gboolean withhold_keys, GError **err);

/* Whether the mail proves that its answers' address (mail_reply_address())
 * is its sender's: signed by a key the robot knows, a Token line with a
 * token the robot sent to that address, or From verified by the operator's
 * MTA (DMARC, aligned DKIM) and the answers go to From.  Sets c->verified;
 * after mail_redact(). */
vulnid_status mail_check_verified(mail_ctx *c, GError **err);

/* Set the mail aside with a reason (and audit it); no reply. */
vulnid_status mail_quarantine(mail_ctx *c, const char *reason, const char *detail, GError **err);

#endif
