/* lifecycle-internal.h - what the files of the lifecycle (lifecycle*.c)
 * share; not for other modules, which use lifecycle.h */
#ifndef VULNID_LIFECYCLE_INTERNAL_H
#define VULNID_LIFECYCLE_INTERNAL_H

#include <glib.h>

#include "commands.h"
#include "disclosure.h"
#include "entry.h"
#include "lifecycle.h"
#include "mailctx.h"
#include "status.h"
#include "store-lifecycle.h"
#include "tokens.h"

#define MAX_VENDOR_ADDRESSES 10
#define MAX_LOOKUP_TEXT (64 * 1024)
#define MAX_LOOKUPS 5
#define MAX_DUPLICATE_CHAIN 10
#define MAX_ALIAS_MATCHES 5
#define MAX_NAMED_ENTRIES 20	/* identifiers read from a text for lifecycle_text_other_entry() */

/* A role as established for one entry by one mail (lifecycle-roles.c). */
typedef struct {
	gboolean creator_key, creator_token, creator_address;
	gboolean vendor_key, vendor_token, vendor_domain, vendor_contact;
	gboolean moderator;
	/* The key is the creator's, or a moderator's, but the signed text
	 * does not name the entry the mail went to (mail_ctx.unbound): it
	 * grants nothing, which the refusals of commands say. */
	gboolean creator_key_unbound, moderator_unbound;
	/* A third party's key that the creator or a moderator endorsed
	 * (lifecycle-trust.c): who endorsed it ("creator", or the moderator's
	 * fingerprint), how ("command", "certification"), and the headline
	 * fields it may set ("": all). */
	gboolean contributor;
	char endorsed_by[72];
	const char *endorsement;
	char endorsed_fields[256];
	const char *role;	/* creator, vendor, moderator, contributor, third-party, robot */
	const char *how;	/* key, token, domain, contact, address, none, robot */
} role_info;

/* One mail about entries as the lifecycle handles it: its text split into
 * commands and fields, its tokens, the results for the reply. */
typedef struct {
	mail_ctx *c;
	mail_text *mt;
	GPtrArray *tokens;	/* token_row* of the valid tokens */
	GString *out;		/* the results, for the reply */
	GBytes *key;		/* the robot's key, when asked for */
	gboolean help;
	const char *routed;	/* the entry the mail is about, or NULL */
	char *subject;		/* the mail's (its tokens taken out on the way in) */
	GPtrArray *attachments;	/* entry_attachment*, stored once, or NULL */
	guint lookups;
	/* The entry of the confirmations this mail asks for (subscribe,
	 * unsubscribe), when there is one: the reply is tied to it, so that
	 * a reply to the reply reaches it; pending_many: several. */
	char *pending;
	gboolean pending_many;
	gboolean delivering;	/* sending sealed records to keys given access */
} lc_mail;


/* lifecycle.c */
gboolean lc_fpr_equal(const char *a, const char *b);
gboolean lc_is_moderator(const vulnid_config *cfg, const char *fpr);

/* lifecycle-util.c */
char *lc_entry_address(const vulnid_config *cfg, const char *id);
const char *lc_sender_of(const mail_ctx *c);
const char *lc_reply_address_of(const mail_ctx *c);
gboolean lc_addr_equal(const char *a, const char *b);
const char *lc_addr_domain(const char *a);
gboolean lc_domain_within(const char *d, const char *domain);
char *lc_fields_json(const char *const *kv);

/* lifecycle-records.c */
void lc_out_result(lc_mail *l, const char *line, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
vulnid_status lc_audit_command(lc_mail *l, const char *entry_id, const char *word, const char *result,
			       const char *detail, GError **err);
char *lc_redact(const char *s, const researcher_identity *id);
vulnid_status lc_store_attachments(lc_mail *l, gboolean store_blobs, GError **err);
vulnid_status lc_append_record(lc_mail *l, entry *e, const char *kind, const role_info *ri,
			       const char *fields, const char *body, const GPtrArray *attachments,
			       gboolean seal, gint64 *seq_out, GError **err);
vulnid_status lc_append_command_record(lc_mail *l, entry *e, const role_info *ri, const char *const *kv,
				       gint64 *seq, GError **err);

/* lifecycle-roles.c */
char *lc_headline_value(const entry *e, const char *key);
gboolean lc_entry_is_anonymous(const entry *e);
vulnid_status lc_entry_vendor(store *st, const entry *e, char **key_fpr, GPtrArray **domains, GError **err);
vulnid_status lc_vendor_addresses(store *st, const entry *e, GPtrArray **out, GError **err);
vulnid_status lc_load_entry(store *st, const char *id, gboolean unseal, entry **out, GError **err);
vulnid_status lc_role_for(lc_mail *l, const entry *e, role_info *ri, GError **err);
gboolean lc_creator_verified(const role_info *ri);
/* The mail is signed by the key of the entry's request, whether or not
 * the signature grants the role here. */
gboolean lc_signed_by_researcher(const role_info *ri);
researcher_identity *lc_researcher_of(const lc_mail *l, const entry *e, const role_info *ri);

/* lifecycle-relay.c */
vulnid_status lc_is_subscribed(store *st, const char *entry_id, const char *address, gboolean *yes, GError **err);
vulnid_status lc_after_record(lc_mail *l, const char *entry_id, gint64 seq, GError **err);
vulnid_status lc_tell_researcher(lc_mail *l, const entry *e, gint64 seq, const role_info *ri, GError **err);
vulnid_status lc_relay_to_vendor(lc_mail *l, const entry *e, gint64 seq, const role_info *ri, GError **err);
vulnid_status lc_renotify_vendor(lc_mail *l, const char *entry_id, GError **err);
vulnid_status lc_confirm_if_pending(lc_mail *l, const char *entry_id, const role_info *ri, GError **err);

/* lifecycle-additions.c */
vulnid_status lc_handle_addition(lc_mail *l, entry *e, const role_info *ri, GError **err);

/* lifecycle-trust.c */
vulnid_status lc_endorsement_of(lc_mail *l, const char *entry_id, const char *fpr, role_info *ri, GError **err);
vulnid_status lc_endorse_by_certification(lc_mail *l, const entry *e, GError **err);
vulnid_status lc_endorsement_store(lc_mail *l, const char *entry_id, const char *fpr, const char *endorser,
				   const char *how, const char *action, const char *fields, GError **err);

/* lifecycle-access.c */
vulnid_status lc_cmd_access(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err);
vulnid_status lc_cmd_grant(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err);
vulnid_status lc_deliver_sealed(lc_mail *l, entry *e, gint64 seq, GError **err);
gboolean lc_access_grantable_by_moderators(const vulnid_config *cfg);

/* lifecycle-commands.c */
const char *lc_need_creator(const lc_mail *l, const role_info *ri, gboolean named);
const char *lc_need_moderator(const lc_mail *l, const role_info *ri, gboolean named);
vulnid_status lc_refuse(lc_mail *l, const command *cmd, const char *id, const char *why, GError **err);
vulnid_status lc_done(lc_mail *l, const command *cmd, const char *id, const char *what, GError **err);
vulnid_status lc_confirm_subscription(lc_mail *l, const token_row *t, GError **err);
vulnid_status lc_run_command(lc_mail *l, const command *cmd, GError **err);

/* lifecycle-reply.c */
vulnid_status lc_send_reply(lc_mail *l, const char *entry_id, GError **err);

#endif
