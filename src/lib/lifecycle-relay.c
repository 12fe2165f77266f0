/* lifecycle-relay.c - mail to people other than the sender: subscribers,
 * the anonymous researcher and the vendor relayed to each other, vendor
 * renotification, confirm_unsigned's deferred notification
 *
 * Part of the lifecycle (lifecycle.h); the files share
 * lifecycle-internal.h and run inside the intake transaction. */

#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "canonjson.h"
#include "commands.h"
#include "crypto.h"
#include "disclosure.h"
#include "embargo.h"
#include "entry.h"
#include "ids.h"
#include "lifecycle.h"
#include "notify.h"
#include "outbox.h"
#include "random.h"
#include "render.h"
#include "store-notify.h"
#include "policy.h"
#include "ratelimit.h"
#include "request.h"
#include "template.h"
#include "text.h"
#include "tokens.h"
#include "vendor.h"
#include "lifecycle-internal.h"

/* ---- mails to others ------------------------------------------------------------ */

static vulnid_status
audit_relayed(lc_mail *l, const char *entry_id, const char *direction, const char *to, gint64 outbox,
	      GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("relayed", entry_id, l->c->m->message_id);

	audit_event_str(ev, "direction", direction);
	audit_event_str(ev, "to", to);
	audit_event_int(ev, "outbox", outbox);
	return audit_append(l->c->st, ev, err);
}

vulnid_status
lc_is_subscribed(store *st, const char *entry_id, const char *address, gboolean *yes, GError **err)
{
	g_autoptr(GPtrArray) subs = NULL;
	vulnid_status s = notify_subscribers(st, entry_id, &subs, err);

	*yes = FALSE;
	for (guint i = 0; s == VULNID_OK && i < subs->len; i++)
		*yes |= lc_addr_equal(g_ptr_array_index(subs, i), address);
	return s;
}

/* After a record: subscribers get it, if the entry is public. */
vulnid_status
lc_after_record(lc_mail *l, const char *entry_id, gint64 seq, GError **err)
{
	return notify_tell_subscribers(l->c->st, l->c->cfg, l->c->now_dt, l->c->msg_row, entry_id, seq, err);
}

/* A key of the keyring that can take encrypted mail, or NULL. */
static char *
usable_key(const char *fpr)
{
	g_autoptr(crypto_key) k = NULL;

	if (fpr == NULL || crypto_home() == NULL || crypto_get_key(fpr, &k, NULL) != VULNID_OK)
		return NULL;
	if (!k->can_encrypt || k->revoked || k->expired)
		return NULL;
	return g_strdup(k->fpr);
}

/* Whether content may be passed on to the holder of key fpr, and *enc the
 * key to encrypt to.  Content of an embargoed entry goes out encrypted
 * when a key is known; in clear only when it came in clear (it travelled
 * so already); mail that came encrypted never leaves in clear. */
static gboolean
may_pass_on(const lc_mail *l, gboolean embargoed, const char *fpr, char **enc)
{
	*enc = NULL;
	if (!embargoed)
		return TRUE;
	*enc = usable_key(fpr);
	return *enc != NULL || !l->c->m->decrypted;
}

/* A vendor response reaches the researcher: for an anonymous entry this is
 * the relay (the vendor's address is kept, the researcher's never shown).
 * e is the entry unsealed in memory, with the new record seq. */
vulnid_status
lc_tell_researcher(lc_mail *l, const entry *e, gint64 seq, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GHashTable) vars = NULL;
	g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_CREATOR, G_MAXINT64, c->now_dt);
	const view_record *vr = render_find_record(v, seq);
	g_autofree char *addr = lc_entry_address(c->cfg, e->id);
	g_autofree char *enc = NULL;
	const entry_record *first = g_ptr_array_index(e->records, 0);
	const char *encrypt_to[2] = { NULL, NULL };
	const char *status;
	g_autoptr(GPtrArray) thread = NULL;
	g_autofree char *ack_id = NULL;
	gboolean verified;
	outbox_mail mail = { 0 };
	vulnid_status s;
	gint64 id;

	if (vr == NULL || first->author == NULL || !config_address_valid(first->author) ||
	    lc_addr_equal(first->author, lc_sender_of(c)))
		return VULNID_OK;
	if (!may_pass_on(l, v->facts->state == ENTRY_EMBARGOED, first->signer, &enc)) {
		g_string_append(l->out, "The researcher was not sent your response: the entry is under embargo,\n"
				     "your mail came encrypted, and the researcher has no key to encrypt to.\n"
				     "It is recorded, sealed, on the entry.\n\n");
		return VULNID_OK;
	}
	if (enc != NULL) {
		encrypt_to[0] = enc;
		mail.encrypt_to = encrypt_to;
	}
	status = entry_record_get(vr->r, "Status");
	verified = entry_how_verified(entry_how_from_str(ri->how));
	vars = render_template_vars(c->cfg, v);
	g_hash_table_insert(vars, "vendor_address", text_clean_line(lc_sender_of(c), 320));
	g_hash_table_insert(vars, "vendor_how", g_strdup(entry_how_phrase(entry_how_from_str(ri->how))));
	g_hash_table_insert(vars, "status", g_strdup(status != NULL ? status : "(none stated)"));
	g_hash_table_insert(vars, "status_subject", status != NULL ? g_strdup_printf(": %s", status) : g_strdup(""));
	/* Whether it is the vendor's, in the Subject and the first line:
	 * an unverified response reads differently from the first word. */
	g_hash_table_insert(vars, "response_subject",
			    g_strdup_printf("%s%s%s", verified ? "Response from the vendor (verified)"
						 : "Unverified response, said to be the vendor's",
					    status != NULL ? ": " : "", status != NULL ? status : ""));
	{
		g_autofree char *first_line = verified
			? g_strdup_printf("the vendor responded to %s, and the robot verified that the response is "
					  "the vendor's (%s). It is recorded beside the report.", e->id,
					  strcmp(ri->how, "key") == 0 ? "signed with the vendor's key"
								       : "it came with the vendor's token")
			: g_strdup_printf("someone responded to %s as the vendor, but the robot could not verify "
					  "that the response is the vendor's: %s, without the vendor's token or key. "
					  "It is recorded beside the report as unverified, and what it says does not "
					  "change the entry until the vendor confirms it.", e->id,
					  strcmp(ri->how, "contact") == 0 ? "it was sent from the address the robot "
									    "notified"
									  : "it was sent from the vendor's domain");

		g_hash_table_insert(vars, "response_first", text_wrap(first_line, 78));
	}
	g_hash_table_insert(vars, "record", render_record_text(v, vr, TRUE));
	g_hash_table_insert(vars, "answer_note", g_strdup(v->facts->anonymous
		? "your answer is recorded on the entry and relayed to the vendor, without\nyour address."
		: "your answer is recorded on the entry."));
	mail.kind = "vendor-response";
	mail.entry = e->id;
	mail.to_addr = first->author;
	mail.reply_to = addr;
	mail.auto_submitted = "auto-generated";
	/* in the researcher's thread: a reply to the ack of the request */
	s = store_notify_thread(c->st, e->id, &thread, err);
	if (s != VULNID_OK)
		return s;
	if (thread->len > 0) {
		ack_id = g_ptr_array_steal_index(thread, thread->len - 1);
		mail.in_reply_to = ack_id;
		mail.references = thread;
	}
	s = notify_queue_template(c->st, c->cfg, c->msg_row, "vendor-response.txt", vars, &mail, &id, err);
	if (s != VULNID_OK)
		return s;
	g_string_append(l->out, v->facts->anonymous
			? "The researcher, who asked to stay anonymous, was sent your response through\nthe robot.\n\n"
			: "The researcher was sent your response.\n\n");
	return audit_relayed(l, e->id, "vendor-to-researcher", first->author, id, err);
}

/* The anonymous researcher's answer reaches the vendor from the robot.
 * e is the entry unsealed in memory, with the new record seq. */
vulnid_status
lc_relay_to_vendor(lc_mail *l, const entry *e, gint64 seq, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GPtrArray) to = NULL;
	g_autoptr(GHashTable) vars = NULL;
	g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_VENDOR, G_MAXINT64, c->now_dt);
	const view_record *vr = render_find_record(v, seq);
	g_autofree char *addr = lc_entry_address(c->cfg, e->id);
	g_autofree char *vkey = NULL;
	g_autofree char *enc = NULL;
	g_autofree char *list = NULL;
	g_autoptr(GPtrArray) vdomains = NULL;
	const char *encrypt_to[2] = { NULL, NULL };
	g_autoptr(GPtrArray) parts = NULL;
	g_autofree char *listing = NULL;
	outbox_mail mail = { 0 };
	vulnid_status s;
	guint count;
	gint64 id;

	if (vr == NULL)
		return VULNID_OK;
	s = lc_vendor_addresses(c->st, e, &to, err);
	if (s == VULNID_OK)
		s = lc_entry_vendor(c->st, e, &vkey, &vdomains, err);
	if (s != VULNID_OK)
		return s;
	if (to->len == 0) {
		g_string_append(l->out, "No vendor contact is known for this entry yet, so your message was\n"
				     "recorded but not relayed.\n\n");
		return VULNID_OK;
	}
	if (!may_pass_on(l, v->facts->state == ENTRY_EMBARGOED, vkey, &enc)) {
		g_string_append(l->out, "Your message was not relayed: the entry is under embargo, your mail came\n"
				     "encrypted, and the vendor has no key to encrypt to. It is recorded,\n"
				     "sealed, on the entry.\n\n");
		return VULNID_OK;
	}
	if (enc != NULL) {
		encrypt_to[0] = enc;
		mail.encrypt_to = encrypt_to;
	}
	/* the files of the message go with it (or their hashes) */
	s = notify_attachments(c->st, vr, TRUE, &parts, &listing, err);
	if (s != VULNID_OK)
		return s;
	vars = render_template_vars(c->cfg, v);
	g_hash_table_insert(vars, "record", render_record_text(v, vr, TRUE));
	if (listing != NULL)
		g_hash_table_insert(vars, "attachments", g_steal_pointer(&listing));
	g_hash_table_insert(vars, "verified", g_strdup(lc_creator_verified(ri) ? ""
		: "(The robot could not verify that this message comes from the researcher:\n"
		  "it was sent from their address, without their token or key.)\n\n"));
	count = to->len;
	g_ptr_array_add(to, NULL);
	list = g_strjoinv(", ", (char **) to->pdata);
	mail.kind = "relay-to-vendor";
	mail.entry = e->id;
	mail.to_list = (const char *const *) to->pdata;
	mail.reply_to = addr;
	mail.auto_submitted = "auto-generated";
	mail.attachments = parts;
	s = store_savepoint(c->st, "relay", err);
	if (s == VULNID_OK)
		s = notify_queue_template(c->st, c->cfg, c->msg_row, "relay-to-vendor.txt", vars, &mail, &id, err);
	if (s == VULNID_OK && id == 0 && parts->len > 0) {
		/* too big for what this mail may cause: the hashes only */
		g_autofree char *hashes = NULL;

		s = store_rollback_to(c->st, "relay", err);
		notify_attachment_hashes(vr, &hashes);
		if (hashes != NULL)
			g_hash_table_insert(vars, "attachments", g_steal_pointer(&hashes));
		mail.attachments = NULL;
		if (s == VULNID_OK)
			s = notify_queue_template(c->st, c->cfg, c->msg_row, "relay-to-vendor.txt", vars, &mail, &id,
						  err);
	}
	if (s == VULNID_OK)
		s = store_release(c->st, "relay", err);
	if (s != VULNID_OK)
		return s;
	g_string_append_printf(l->out, "Your message was relayed to the vendor (%u address%s)%s, without your\n"
			       "address.\n\n", count, count == 1 ? "" : "es", enc != NULL ? ", encrypted" : "");
	return audit_relayed(l, e->id, "researcher-to-vendor", list, id, err);
}

/* A verified creator named a vendor or a contact that was not notified
 * yet: notify it now (notify-failed.txt and the ack ask for this). */
vulnid_status
lc_renotify_vendor(lc_mail *l, const char *entry_id, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(entry) e = NULL;
	g_autoptr(GPtrArray) want = NULL;
	g_autoptr(GPtrArray) have = NULL;
	g_autofree char *vfield = NULL;
	g_autofree char *contact = NULL;
	g_autoptr(GString) note = g_string_new(NULL);
	const char *how = "none";
	gboolean missing = FALSE;
	vulnid_status s;

	if (!c->cfg->notify_vendors)
		return VULNID_OK;
	s = lc_load_entry(c->st, entry_id, TRUE, &e, err);
	if (s != VULNID_OK)
		return s;
	vfield = lc_headline_value(e, "Vendor");
	contact = lc_headline_value(e, "Vendor-Contact");
	s = vendor_contacts_for(c->st, vfield, contact, &want, &how, err);
	if (s == VULNID_OK)
		s = lc_vendor_addresses(c->st, e, &have, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < want->len; i++) {
		gboolean known = FALSE;

		for (guint j = 0; j < have->len; j++)
			known |= lc_addr_equal(g_ptr_array_index(want, i), g_ptr_array_index(have, j));
		missing |= !known;
	}
	if (!missing)
		return VULNID_OK;
	s = notify_vendor(c->st, c->cfg, c->msg_row, entry_id, note, err);
	if (s == VULNID_OK && note->len > 0)
		g_string_append_printf(l->out, "%s\n", note->str);
	return s;
}

/* The creator's token answers a confirmation: confirm_unsigned, or vendor
 * contacts the outgoing-mail policy held (policy.h) until the creator
 * proves a working mailbox. */
vulnid_status
lc_confirm_if_pending(lc_mail *l, const char *entry_id, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_facts) f = NULL;
	g_autoptr(GString) note = g_string_new(NULL);
	gboolean pending = FALSE, held = FALSE;
	const char *kv[] = { "Confirmed", "yes", NULL };
	vulnid_status s;

	if (!ri->creator_token)
		return VULNID_OK;
	s = store_lifecycle_unconfirmed(c->st, entry_id, &pending, err);
	if (s == VULNID_OK)
		s = policy_entry_held(c->st, entry_id, &held, err);
	if (s != VULNID_OK || (!pending && !held))
		return s;
	s = lc_load_entry(c->st, entry_id, TRUE, &e, err);
	if (s != VULNID_OK)
		return s;
	f = entry_facts_now(e);
	if (f->confirmed != NULL && !held)
		return VULNID_OK;
	if (f->confirmed == NULL)
		s = lc_append_command_record(l, e, ri, kv, NULL, err);
	if (s == VULNID_OK)
		s = notify_vendor(c->st, c->cfg, c->msg_row, entry_id, note, err);
	if (s == VULNID_OK && pending && f->confirmed == NULL)
		s = notify_announce(c->st, c->cfg, c->msg_row, entry_id, err);
	if (s != VULNID_OK)
		return s;
	if (pending && f->confirmed == NULL)
		g_string_append_printf(l->out, "Token: accepted: %s is confirmed; it is now notified and announced\n"
				       "as usual.\n%s\n", entry_id, note->str);
	else if (note->len > 0)
		g_string_append_printf(l->out, "Token: accepted: %s is confirmed.\n%s\n", entry_id, note->str);
	return lc_audit_command(l, entry_id, "confirm", "done", NULL, err);
}
