/* notify.c - vendor notifications, list announcements, failure notices */
#include "autoconfig.h"

#include <string.h>

#include "audit.h"
#include "crypto.h"
#include "disclosure.h"
#include "notify.h"
#include "policy.h"
#include "render.h"
#include "store-notify.h"
#include "template.h"
#include "text.h"
#include "tokens.h"
#include "vendor.h"

vulnid_status
notify_queue_template(store *st, const vulnid_config *cfg, gint64 cause, const char *tmpl,
		      GHashTable *vars, outbox_mail *mail, gint64 *id, GError **err)
{
	g_autofree char *text = NULL;
	g_autofree char *rendered = NULL;
	g_autofree char *subject = NULL;
	g_autofree char *body = NULL;
	vulnid_status s;

	s = template_load(cfg, tmpl, &text, err);
	if (s != VULNID_OK)
		return s;
	rendered = template_render(text, vars);
	template_split(rendered, &subject, &body);
	mail->subject = subject != NULL ? subject : "vulnid";
	mail->body = body;
	s = policy_queue(st, cfg, cause, mail, id, err);
	mail->subject = NULL;
	mail->body = NULL;
	return s;
}

static void
put(GHashTable *v, const char *key, char *value)
{
	g_hash_table_insert(v, (gpointer) key, value != NULL ? value : g_strdup(""));
}

/* ---- attachments for the vendor ------------------------------------------------ */

#define VENDOR_ATTACH_MAX (4 * 1024 * 1024)	/* bytes attached to one mail */

/* Whether an attachment may go out: nothing token-shaped inside, and no
 * token of the old shape the robot issued (a token is a secret of its
 * role; an attachment is kept as it came, tokens and all).  The one
 * redaction of tokens_redact(): linear in the attachment, no budget. */
static vulnid_status
attachment_free_of_tokens(store *st, GBytes *data, gboolean *ok, GError **err)
{
	gsize n = 0;
	const char *p = g_bytes_get_data(data, &n);
	g_autofree char *text = g_malloc(n + 1);
	g_autofree char *redacted = NULL;
	vulnid_status s;

	for (gsize i = 0; i < n; i++)
		text[i] = p[i] != '\0' ? p[i] : ' ';
	text[n] = '\0';
	redacted = g_strdup(text);
	s = tokens_redact(st, &redacted, NULL, err);
	*ok = s == VULNID_OK && strcmp(redacted, text) == 0;
	return s;
}

vulnid_status
notify_attachments(store *st, const view_record *vr, gboolean relayed, GPtrArray **parts, char **listing,
		   GError **err)
{
	g_autoptr(GString) l = g_string_new(NULL);
	gint64 total = 0;

	*parts = g_ptr_array_new_with_free_func(outbox_attachment_free);
	*listing = NULL;
	if (vr == NULL || !vr->content || vr->sealed)
		return VULNID_OK;
	/* the view's attachments: what the one disclosure policy lets the
	 * vendor see (an anonymous researcher's key is withheld there) */
	for (guint i = 0; i < vr->attachments->len; i++) {
		const view_attachment *va = g_ptr_array_index(vr->attachments, i);
		const entry_attachment *a = va->a;
		g_autoptr(GBytes) data = NULL;
		g_autofree char *name = NULL;
		const char *why = NULL;
		gboolean ok = FALSE;
		vulnid_status s;

		/* a key says who the researcher is; it is on the entry */
		if (va->withheld || g_ascii_strcasecmp(a->content_type, "application/pgp-keys") == 0)
			continue;
		name = text_clean_line(a->filename != NULL ? a->filename : "(no name)", 200);
		/* An anonymous researcher's files are hers as she wrote them (a
		 * name inside is not redacted, as her text is): they go out
		 * only with a mail she sends to be relayed, never with the
		 * robot's notice of her request. */
		if (vr->author_withheld && !relayed)
			why = "the researcher is anonymous";
		else if (total + a->size > VENDOR_ATTACH_MAX)
			why = "too large to attach";
		else if (store_blob_get(st, a->sha256, &data, NULL) != VULNID_OK)
			why = "not stored yet";
		else {
			s = attachment_free_of_tokens(st, data, &ok, err);
			if (s != VULNID_OK)
				return s;
			if (!ok)
				why = "it holds a secret of the robot's";
		}
		g_string_append_printf(l, "  %s, %s, %" G_GINT64_FORMAT " bytes, %s\n    sha256 %s\n", name,
				       a->content_type, a->size, why == NULL ? "attached" : "not attached:", a->sha256);
		if (why != NULL) {
			g_string_append_printf(l, "    (%s; reply to this mail to ask for it)\n", why);
			continue;
		}
		{
			outbox_attachment *x = g_new0(outbox_attachment, 1);

			x->data = g_steal_pointer(&data);
			x->type = g_strdup(a->content_type);
			x->name = a->filename != NULL ? g_strdup(name) : NULL;
			g_ptr_array_add(*parts, x);
			total += a->size;
		}
	}
	if (l->len > 0)
		*listing = g_string_free(g_steal_pointer(&l), FALSE);
	return VULNID_OK;
}

vulnid_status
notify_attachment_hashes(const view_record *vr, char **listing)
{
	g_autoptr(GString) l = g_string_new(NULL);

	*listing = NULL;
	for (guint i = 0; vr != NULL && vr->content && !vr->sealed && i < vr->r->attachments->len; i++) {
		const entry_attachment *a = g_ptr_array_index(vr->r->attachments, i);
		g_autofree char *name = text_clean_line(a->filename != NULL ? a->filename : "(no name)", 200);

		if (g_ascii_strcasecmp(a->content_type, "application/pgp-keys") == 0)
			continue;
		g_string_append_printf(l, "  %s, %s, %" G_GINT64_FORMAT " bytes, not attached:\n    sha256 %s\n"
				       "    (too large for this mail; reply to this mail to ask for it)\n",
				       name, a->content_type, a->size, a->sha256);
	}
	if (l->len > 0)
		*listing = g_string_free(g_steal_pointer(&l), FALSE);
	return VULNID_OK;
}

/* Whom to tell of the entry in view: the vendor's contacts as the
 * vendors directory, the Vendor-Contact line or the Vendor domain say,
 * less those the policy refuses, holds or already told (an empty *to:
 * nobody, and note says why). */
static vulnid_status
vendor_recipients(store *st, const vulnid_config *cfg, gint64 cause, const entry_view *view, GString *note,
		  GPtrArray **to, const char **how, GError **err)
{
	const entry *e = view->e;
	const char *id = e->id;
	const char *vfield = view->facts->vendor != NULL ? view->facts->vendor->value : NULL;
	const char *contact = view->facts->vendor_contact != NULL ? view->facts->vendor_contact->value : NULL;
	vulnid_status s;

	*to = g_ptr_array_new_with_free_func(g_free);
	if (vfield == NULL && contact == NULL) {
		if (view->facts->state != ENTRY_RESERVED)
			g_string_append_printf(note, "%s: no vendor was named, so nobody was notified. Reply with\n"
					       "  \"Vendor:\" and \"Vendor-Contact:\" lines to have the vendor told.\n",
					       id);
		return VULNID_OK;
	}
	g_clear_pointer(to, g_ptr_array_unref);
	s = vendor_contacts_for(st, vfield, contact, to, how, err);
	if (s != VULNID_OK)
		return s;
	if ((*to)->len == 0) {
		g_autofree char *clean = text_clean_line(vfield != NULL ? vfield : "", 200);

		g_string_append_printf(note, "%s: no security contact is known for \"%s\", so the vendor was\n"
				       "  not notified. Reply with a line \"Vendor-Contact: address\" (the vendor's\n"
				       "  security contact), or name the vendor's domain as \"Vendor: Name <domain>\".\n",
				       id, clean);
		return VULNID_OK;
	}
	/* Who may be told now (policy.h): refused, held, already told. */
	return policy_vendor_contacts(st, cfg, cause, e, *how, *to, note, err);
}

/* Embargoed details go out only encrypted to the vendor's key: the key of
 * the vendors directory's entry for the Vendor field, if it can encrypt;
 * else NULL.  *dir keeps the entry (the key's fingerprint). */
static const char *
vendor_encryption_key(store *st, const char *vfield, vendor **dir)
{
	g_autofree char *vname = NULL;
	g_autofree char *vdom = NULL;
	g_autoptr(crypto_key) key = NULL;

	vendor_field_split(vfield, &vname, &vdom);
	if ((*vname != '\0' && vendor_find(st, vname, dir, NULL) == VULNID_OK) ||
	    (vdom != NULL && vendor_find_by_domain(st, vdom, dir, NULL) == VULNID_OK))
		if ((*dir)->key_fpr != NULL && crypto_get_key((*dir)->key_fpr, &key, NULL) == VULNID_OK &&
		    key->can_encrypt && !key->revoked && !key->expired)
			return (*dir)->key_fpr;
	return NULL;
}

/* Held back by the policy: no token, no mail; the contacts wait. */
static vulnid_status
vendor_held(store *st, const char *entry_id, const char *list, GString *note, GError **err)
{
	vulnid_status s = store_rollback_to(st, "notify", err);

	if (s == VULNID_OK)
		s = policy_hold_contacts(st, entry_id, list, err);
	if (s == VULNID_OK)
		g_string_append_printf(note, "%s: the vendor contact %s is held: this mail may not make the\n"
				       "  robot send more to others now; it is told once you confirm the request\n"
				       "  with the entry's token.\n", entry_id, list);
	return s;
}

static vulnid_status
vendor_notified(store *st, const char *entry_id, const char *list, const char *how, gboolean stub,
		GString *note, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("notified", entry_id, NULL);
	g_autoptr(GString) n = g_string_new(NULL);
	g_autofree char *w = NULL;

	g_string_append_printf(n, "%s: %s %s (%s).\n", entry_id,
			       stub ? "the vendor was told only that a report exists, under embargo until "
				      "it ends, without its details (the vendor has no key the robot could "
				      "encrypt them to), at"
				    : "the vendor's security contact was notified at",
			       list,
			       strcmp(how, "directory") == 0 ? "from the vendors directory"
			       : strcmp(how, "vendor-contact") == 0 ? "from your Vendor-Contact line"
			       : "the security@ address of the domain you named");
	w = text_wrap_hanging(n->str, 78, 2);
	g_string_append(note, w);
	audit_event_str(ev, "to", list);
	audit_event_str(ev, "how", how);
	return audit_append(st, ev, err);
}

/* The vendor's token and the notice (with the report's files unless
 * with_files is FALSE: then their hashes), queued; *queued 0 when the
 * policy held it. */
static vulnid_status
vendor_mail(store *st, const vulnid_config *cfg, gint64 cause, const entry_view *view, GPtrArray *to,
	    const char *list, const char *vendor_key, gboolean with_files, gint64 *queued, GError **err)
{
	const char *entry_id = view->e->id;
	gboolean embargoed = view->facts->state == ENTRY_EMBARGOED;
	g_autoptr(GHashTable) vars = render_template_vars(cfg, view);
	g_autofree char *reply_to = g_strdup_printf("%s+%s@%s", cfg->request_local, entry_id, cfg->domain);
	g_autofree char *token = NULL;
	g_autoptr(GPtrArray) parts = NULL;
	g_autofree char *listing = NULL;
	const char *enc[] = { vendor_key, NULL };
	outbox_mail mail = { 0 };
	vulnid_status s;

	*queued = 0;
	s = tokens_issue(st, entry_id, "vendor", list, &token, err);
	if (s != VULNID_OK)
		return s;
	if (token != NULL)
		/* on a line of its own, to keep in the reply as it is */
		g_hash_table_insert(vars, "token_line",
				    g_strdup_printf("Keep the line below in your reply, so that the robot records it\n"
						    "as the vendor's (it is your response token; keep it secret):\n\n"
						    "  Token: %s\n", token));
	if (embargoed) {
		/* a Subject travels in clear even in an encrypted mail */
		g_hash_table_insert(vars, "headline", g_strdup("embargoed report"));
	}
	if (!embargoed || vendor_key != NULL) {
		s = notify_attachments(st, view->records->len > 0 ? g_ptr_array_index(view->records, 0) : NULL,
				       FALSE, &parts, &listing, err);
		if (s != VULNID_OK)
			return s;
		if (!with_files && listing != NULL) {
			g_clear_pointer(&listing, g_free);
			g_ptr_array_set_size(parts, 0);
			s = notify_attachment_hashes(view->records->len > 0 ? g_ptr_array_index(view->records, 0)
						     : NULL, &listing);
		}
		if (listing != NULL)
			g_hash_table_insert(vars, "attachments", g_steal_pointer(&listing));
	}
	mail.kind = "vendor-notify";
	mail.entry = entry_id;
	mail.to_list = (const char *const *) to->pdata;
	mail.reply_to = reply_to;
	mail.auto_submitted = "auto-generated";
	mail.attachments = parts;
	mail.encrypt_to = vendor_key != NULL ? enc : NULL;
	return notify_queue_template(st, cfg, cause,
				     embargoed && vendor_key == NULL ? "vendor-notify-embargoed.txt" : "vendor-notify.txt",
				     vars, &mail, queued, err);
}

vulnid_status
notify_vendor(store *st, const vulnid_config *cfg, gint64 cause, const char *entry_id,
	      GString *note, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_view) view = NULL;
	g_autoptr(GPtrArray) to = NULL;
	const char *vfield;
	g_autofree char *list = NULL;
	const char *how = "none";
	const char *vendor_key = NULL;
	g_autoptr(vendor) dir = NULL;
	gboolean embargoed;
	gint64 queued = 0;
	vulnid_status s;

	if (!cfg->notify_vendors)
		return VULNID_OK;
	s = entry_load(st, entry_id, &e, err);
	if (s != VULNID_OK)
		return s;
	if (entry_has_sealed(e)) {
		/* Who to tell is part of the sealed content. */
		s = entry_unseal(e, err);
		if (s != VULNID_OK)
			return s;
	}
	/* The vendor reads what its audience may: the report, never an
	 * anonymous researcher's identity; the headline names it. */
	{
		g_autoptr(GDateTime) now = store_now_datetime();

		view = entry_view_new(e, AUDIENCE_VENDOR, G_MAXINT64, now);
	}
	embargoed = view->facts->state == ENTRY_EMBARGOED;
	vfield = view->facts->vendor != NULL ? view->facts->vendor->value : NULL;
	s = vendor_recipients(st, cfg, cause, view, note, &to, &how, err);
	if (s != VULNID_OK || to->len == 0)
		return s;
	g_ptr_array_add(to, NULL);
	list = g_strjoinv(", ", (char **) to->pdata);
	if (embargoed && strcmp(how, "directory") == 0)
		vendor_key = vendor_encryption_key(st, vfield, &dir);
	/* The token and the mail go together, or neither (over the mail's
	 * byte budget: the contacts wait like held ones). */
	s = store_savepoint(st, "notify", err);
	if (s != VULNID_OK)
		return s;
	s = vendor_mail(st, cfg, cause, view, to, list, vendor_key, TRUE, &queued, err);
	if (s == VULNID_OK && queued == 0) {
		/* the files made it too big for the policy: their hashes only */
		s = store_rollback_to(st, "notify", err);
		if (s == VULNID_OK)
			s = vendor_mail(st, cfg, cause, view, to, list, vendor_key, FALSE, &queued, err);
	}
	if (s != VULNID_OK)
		return s;
	if (queued == 0)
		return vendor_held(st, entry_id, list, note, err);
	s = store_release(st, "notify", err);
	if (s != VULNID_OK)
		return s;
	return vendor_notified(st, entry_id, list, how, embargoed && vendor_key == NULL, note, err);
}

vulnid_status
notify_announce(store *st, const vulnid_config *cfg, gint64 cause, const char *entry_id, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_view) view = NULL;
	g_autoptr(GDateTime) now_dt = store_now_datetime();
	g_autoptr(GHashTable) vars = NULL;
	g_autofree char *msgid = NULL;
	g_autofree char *reply_to = NULL;
	outbox_mail mail = { 0 };
	vulnid_status s;

	if (cfg->announce_to == NULL || cfg->announce_to[0] == NULL)
		return VULNID_OK;
	s = entry_load(st, entry_id, &e, err);
	if (s != VULNID_OK)
		return s;
	/* a list is the public: reserved, nothing to say; embargoed, not yet;
	 * spam, never */
	view = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, now_dt);
	if (view->facts->state != ENTRY_PUBLIC || view->stub || view->withheld)
		return VULNID_OK;
	if (strcmp(cfg->announce_digest, "daily") == 0) {
		g_autofree char *now = store_now();

		return store_notify_pending_add(st, entry_id, now, err);
	}
	vars = render_template_vars(cfg, view);
	/* Stable, so that an archive that gets it twice keeps one copy. */
	msgid = g_strdup_printf("vulnid.announce.%s@%s", entry_id, cfg->domain);
	reply_to = g_strdup_printf("%s+%s@%s", cfg->request_local, entry_id, cfg->domain);
	mail.kind = "announce";
	mail.entry = entry_id;
	mail.to_list = (const char *const *) cfg->announce_to;
	mail.reply_to = reply_to;
	mail.message_id = msgid;
	mail.auto_submitted = "auto-generated";
	return notify_queue_template(st, cfg, cause, "announce.txt", vars, &mail, NULL, err);
}

vulnid_status
notify_digest_run(store *st, const vulnid_config *cfg, guint *sent, GError **err)
{
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autofree char *today = g_date_time_format(now, "%Y-%m-%d");
	g_autofree char *msgid = g_strdup_printf("vulnid.digest.%s@%s", today, cfg->domain);
	g_autoptr(GPtrArray) ids = NULL;
	g_autoptr(GString) list = g_string_new(NULL);
	g_autoptr(GHashTable) vars = NULL;
	outbox_mail mail = { 0 };
	vulnid_status s;
	gint64 id;

	*sent = 0;
	if (cfg->announce_to == NULL || cfg->announce_to[0] == NULL)
		return VULNID_OK;
	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	s = store_notify_pending_list(st, today, &ids, err);
	if (s != VULNID_OK)
		goto fail;
	if (ids->len == 0) {
		store_rollback(st);
		return VULNID_OK;
	}
	for (guint i = 0; i < ids->len; i++) {
		g_autoptr(entry) e = NULL;
		g_autoptr(entry_view) view = NULL;
		g_autoptr(GHashTable) ev = NULL;

		s = entry_load(st, g_ptr_array_index(ids, i), &e, err);
		if (s != VULNID_OK)
			goto fail;
		view = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, now);
		if (view->stub || view->withheld)
			continue;
		ev = render_template_vars(cfg, view);
		g_string_append_printf(list, "[%s] %s\n  digest %s\n  %s\n\n", e->id,
				       (const char *) g_hash_table_lookup(ev, "headline"), e->digest,
				       (const char *) g_hash_table_lookup(ev, "entry_address"));
	}
	vars = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	put(vars, "date", g_strdup(today));
	put(vars, "count", g_strdup_printf("%u", ids->len));
	put(vars, "entries", g_strdup(list->str));
	put(vars, "request_address", g_strdup(cfg->request_address));
	put(vars, "domain", g_strdup(cfg->domain));
	put(vars, "robot_fpr", crypto_robot_label());
	mail.kind = "announce-digest";
	mail.to_list = (const char *const *) cfg->announce_to;
	mail.message_id = msgid;
	mail.auto_submitted = "auto-generated";
	s = notify_queue_template(st, cfg, 0, "announce-digest.txt", vars, &mail, &id, err);
	if (s != VULNID_OK)
		goto fail;
	s = store_notify_pending_sent(st, today, id, err);
	if (s != VULNID_OK)
		goto fail;
	s = store_commit(st, err);
	if (s == VULNID_OK)
		*sent = 1;
	return s;
fail:
	store_rollback(st);
	return s;
}

/* What the researcher was told went out: the vendor notification (the
 * ack says who was notified) and the researcher's messages relayed to the
 * vendor (the reply says it was relayed).  A failure of those is theirs
 * to know; of any other mail, the operator's (vulnid queue list). */
static const char *
failure_what(const char *kind, const char **headline)
{
	if (strcmp(kind, "vendor-notify") == 0) {
		*headline = "The vendor could not be notified";
		return "notification of the vendor";
	}
	if (strcmp(kind, "relay-to-vendor") == 0) {
		*headline = "Your message could not be relayed to the vendor";
		return "relay of your message to the vendor";
	}
	return NULL;
}

vulnid_status
notify_delivery_failed(store *st, const vulnid_config *cfg, const outbox_failure *f, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_view) view = NULL;
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autoptr(GHashTable) vars = NULL;
	g_autoptr(GString) lines = g_string_new(NULL);
	g_autoptr(GString) who = g_string_new(NULL);
	g_autofree char *reply_to = NULL;
	g_autoptr(GPtrArray) thread = NULL;
	g_autofree char *ack_id = NULL;
	const entry_record *first;
	const char *what, *headline = NULL;
	outbox_mail mail = { 0 };
	vulnid_status s;

	what = failure_what(f->kind, &headline);
	if (what == NULL || f->entry == NULL || f->addresses->len == 0)
		return VULNID_OK;
	s = entry_load(st, f->entry, &e, err);
	if (s != VULNID_OK)
		return s;
	first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	if (first == NULL || first->author == NULL || !config_address_valid(first->author))
		return VULNID_OK;
	for (guint i = 0; i < f->addresses->len; i++) {
		g_autofree char *a = text_clean_line(g_ptr_array_index(f->addresses, i), 320);
		const char *r = g_ptr_array_index(f->reasons, i);
		g_autofree char *why = text_clean_line(r != NULL && *r ? r : "no reason given", 500);

		g_string_append_printf(who, "%s%s", i > 0 ? ", " : "", a);
		g_string_append_printf(lines, "  %s: %s\n", a, why);
	}
	/* to the researcher, about their own entry; sealed content is not
	 * repeated in a mail that goes out in clear */
	view = entry_view_new(e, AUDIENCE_CREATOR, G_MAXINT64, now);
	vars = render_template_vars(cfg, view);
	put(vars, "what", g_strdup(what));
	put(vars, "failure_headline", g_strdup(headline));
	put(vars, "recipient", g_strdup(who->str));
	put(vars, "reason", text_clean_line(g_ptr_array_index(f->reasons, 0) != NULL
					    ? g_ptr_array_index(f->reasons, 0) : "", 500));
	put(vars, "failures", g_strdup(lines->str));
	reply_to = g_strdup_printf("%s+%s@%s", cfg->request_local, f->entry, cfg->domain);
	mail.kind = "notify-failed";
	mail.entry = f->entry;
	mail.to_addr = first->author;
	mail.reply_to = reply_to;
	mail.auto_submitted = "auto-generated";
	/* in the researcher's thread: a reply to the ack of the request */
	s = store_notify_thread(st, f->entry, &thread, err);
	if (s != VULNID_OK)
		return s;
	if (thread->len > 0) {
		ack_id = g_ptr_array_steal_index(thread, thread->len - 1);
		mail.in_reply_to = ack_id;
		mail.references = thread;
	}
	s = notify_queue_template(st, cfg, f->cause, "notify-failed.txt", vars, &mail, NULL, err);
	if (s != VULNID_OK)
		return s;
	{
		g_autoptr(audit_event) ev = audit_event_new("failure-notice", f->entry, NULL);

		audit_event_int(ev, "outbox", f->outbox);
		audit_event_str(ev, "kind", f->kind);
		audit_event_str(ev, "failed", who->str);
		audit_event_str(ev, "to", first->author);
		return audit_append(st, ev, err);
	}
}

/* ---- subscribers ---------------------------------------------------------- */

#define MAX_SUBSCRIBERS 200	/* mails queued per record */
#define MAX_SUBSCRIPTION_ROWS 5000

/* Subscribers of an entry: the latest subscribe or unsubscribe of each
 * address counts. */
vulnid_status
notify_subscribers(store *st, const char *entry_id, GPtrArray **out, GError **err)
{
	g_autoptr(GHashTable) state = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) rows = NULL;
	vulnid_status s = store_notify_subscriptions(st, entry_id, MAX_SUBSCRIPTION_ROWS, &rows, err);

	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < rows->len; i++) {
		const store_subscription *x = g_ptr_array_index(rows, i);
		char *a = g_ascii_strdown(x->address, -1);

		if (!g_hash_table_contains(state, a))
			g_ptr_array_add(order, g_strdup(a));
		g_hash_table_insert(state, a, g_strdup(x->role));
	}
	*out = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < order->len && (*out)->len < MAX_SUBSCRIBERS; i++) {
		const char *a = g_ptr_array_index(order, i);

		if (strcmp(g_hash_table_lookup(state, a), "subscriber") == 0)
			g_ptr_array_add(*out, g_strdup(a));
	}
	return VULNID_OK;
}

vulnid_status
notify_tell_subscribers(store *st, const vulnid_config *cfg, GDateTime *now, gint64 cause,
			const char *entry_id, gint64 seq, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_view) v = NULL;
	g_autoptr(GPtrArray) subs = NULL;
	g_autofree char *addr = g_strdup_printf("%s+%s@%s", cfg->request_local, entry_id, cfg->domain);
	const view_record *vr;
	vulnid_status s;

	s = notify_subscribers(st, entry_id, &subs, err);
	if (s != VULNID_OK || subs->len == 0)
		return s;
	s = entry_load(st, entry_id, &e, err);
	if (s != VULNID_OK)
		return s;
	/* subscribers get what the public may see, and only that */
	v = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, now);
	vr = render_find_record(v, seq);
	if (v->stub || v->withheld || vr == NULL || !vr->content)
		return VULNID_OK;
	for (guint i = 0; i < subs->len; i++) {
		const char *to = g_ptr_array_index(subs, i);
		g_autoptr(GHashTable) vars = NULL;
		outbox_mail mail = { 0 };

		if ((vr->r->author != NULL && g_ascii_strcasecmp(to, vr->r->author) == 0) || !config_address_valid(to))
			continue;	/* they know what they wrote */
		vars = render_template_vars(cfg, v);
		g_hash_table_insert(vars, "seq", g_strdup_printf("%" G_GINT64_FORMAT, seq));
		g_hash_table_insert(vars, "record", render_record_text(v, vr, TRUE));
		mail.kind = "subscription";
		mail.entry = entry_id;
		mail.to_addr = to;
		mail.reply_to = addr;
		mail.bulk = TRUE;
		mail.auto_submitted = "auto-generated";
		s = notify_queue_template(st, cfg, cause, "subscription.txt", vars, &mail, NULL, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}
