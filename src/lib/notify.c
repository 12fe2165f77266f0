/* notify.c - vendor notifications, list announcements, failure notices */
#include "autoconfig.h"

#include <string.h>

#include "audit.h"
#include "crypto.h"
#include "disclosure.h"
#include "lifecycle.h"
#include "notify.h"
#include "policy.h"
#include "render.h"
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

vulnid_status
notify_vendor(store *st, const vulnid_config *cfg, gint64 cause, const char *entry_id,
	      GString *note, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_view) view = NULL;
	g_autoptr(GPtrArray) to = NULL;
	g_autoptr(GHashTable) vars = NULL;
	const char *vfield, *contact;
	g_autofree char *list = NULL;
	g_autofree char *reply_to = NULL;
	const char *how = "none";
	const char *vendor_key = NULL;
	g_autoptr(vendor) dir = NULL;
	gboolean embargoed;
	outbox_mail mail = { 0 };
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
	contact = view->facts->vendor_contact != NULL ? view->facts->vendor_contact->value : NULL;
	if (vfield == NULL && contact == NULL) {
		if (view->facts->state != ENTRY_RESERVED)
			g_string_append_printf(note, "%s: no vendor was named, so nobody was notified. Reply with\n"
					       "  \"Vendor:\" and \"Vendor-Contact:\" lines to have the vendor told.\n",
					       entry_id);
		return VULNID_OK;
	}
	s = vendor_contacts_for(st, vfield, contact, &to, &how, err);
	if (s != VULNID_OK)
		return s;
	if (to->len == 0) {
		g_autofree char *clean = text_clean_line(vfield != NULL ? vfield : "", 200);

		g_string_append_printf(note, "%s: no security contact is known for \"%s\", so the vendor was\n"
				       "  not notified. Reply with a line \"Vendor-Contact: address\" (the vendor's\n"
				       "  security contact), or name the vendor's domain as \"Vendor: Name <domain>\".\n",
				       entry_id, clean);
		return VULNID_OK;
	}
	/* Who may be told now (policy.h): refused, held, already told. */
	s = policy_vendor_contacts(st, cfg, cause, e, how, to, note, err);
	if (s != VULNID_OK || to->len == 0)
		return s;
	g_ptr_array_add(to, NULL);
	list = g_strjoinv(", ", (char **) to->pdata);
	vars = render_template_vars(cfg, view);
	/* The token and the mail go together, or neither (over the mail's
	 * byte budget: the contacts wait like held ones). */
	s = store_savepoint(st, "notify", err);
	if (s != VULNID_OK)
		return s;
	reply_to = g_strdup_printf("%s+%s@%s", cfg->request_local, entry_id, cfg->domain);
	{
		g_autofree char *token = NULL;

		s = tokens_issue(st, entry_id, "vendor", list, &token, err);
		if (s != VULNID_OK)
			return s;
		if (token != NULL)
			g_hash_table_insert(vars, "token_line",
					    g_strdup_printf("Your response token is %s: keep the line \"Token: %s\"\n"
							    "in your reply, so that it is recorded as the vendor's.\n",
							    token, token));
	}
	if (embargoed) {
		/* a Subject travels in clear even in an encrypted mail */
		g_hash_table_insert(vars, "headline", g_strdup("embargoed report"));
	}
	if (embargoed && strcmp(how, "directory") == 0) {
		/* Embargoed details go out only encrypted to the vendor's key. */
		g_autofree char *vname = NULL;
		g_autofree char *vdom = NULL;
		g_autoptr(crypto_key) key = NULL;

		vendor_field_split(vfield, &vname, &vdom);
		if ((*vname != '\0' && vendor_find(st, vname, &dir, NULL) == VULNID_OK) ||
		    (vdom != NULL && vendor_find_by_domain(st, vdom, &dir, NULL) == VULNID_OK))
			if (dir->key_fpr != NULL && crypto_get_key(dir->key_fpr, &key, NULL) == VULNID_OK &&
			    key->can_encrypt && !key->revoked && !key->expired)
				vendor_key = dir->key_fpr;
	}
	mail.kind = "vendor-notify";
	mail.entry = entry_id;
	mail.to_list = (const char *const *) to->pdata;
	mail.reply_to = reply_to;
	mail.auto_submitted = "auto-generated";
	{
		const char *enc[] = { vendor_key, NULL };

		mail.encrypt_to = vendor_key != NULL ? enc : NULL;
		s = notify_queue_template(st, cfg, cause,
					  embargoed && vendor_key == NULL ? "vendor-notify-embargoed.txt"
									  : "vendor-notify.txt",
					  vars, &mail, &queued, err);
	}
	if (s != VULNID_OK)
		return s;
	if (queued == 0) {
		s = store_rollback_to(st, "notify", err);
		if (s == VULNID_OK)
			s = policy_hold_contacts(st, entry_id, list, err);
		if (s == VULNID_OK)
			g_string_append_printf(note, "%s: the vendor contact %s is held: this mail may not make the\n"
					       "  robot send more to others now; it is told once you confirm the request\n"
					       "  with the entry's token.\n", entry_id, list);
		return s;
	}
	s = store_release(st, "notify", err);
	if (s != VULNID_OK)
		return s;
	g_string_append_printf(note, "%s: the vendor's security contact was notified: %s\n  (%s).\n",
			       entry_id, list,
			       strcmp(how, "directory") == 0 ? "from the vendors directory"
			       : strcmp(how, "vendor-contact") == 0 ? "from your Vendor-Contact line"
			       : "the security@ address of the domain you named");
	{
		g_autoptr(audit_event) ev = audit_event_new("notified", entry_id, NULL);

		audit_event_str(ev, "to", list);
		audit_event_str(ev, "how", how);
		return audit_append(st, ev, err);
	}
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
		sqlite3_stmt *stmt = store_prepare(st, "INSERT OR IGNORE INTO announce_pending (entry, created)"
						   " VALUES (?, ?)", &s, err);
		int rc;

		if (stmt == NULL)
			return s;
		sqlite3_bind_text(stmt, 1, entry_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(stmt, 2, now, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(stmt);
		sqlite3_finalize(stmt);
		return rc == SQLITE_DONE ? VULNID_OK : store_fail(st, rc, "announce_pending", err);
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
	g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) list = g_string_new(NULL);
	g_autoptr(GHashTable) vars = NULL;
	outbox_mail mail = { 0 };
	sqlite3_stmt *stmt;
	vulnid_status s;
	gint64 id;
	int rc;

	*sent = 0;
	if (cfg->announce_to == NULL || cfg->announce_to[0] == NULL)
		return VULNID_OK;
	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	stmt = store_prepare(st, "SELECT entry FROM announce_pending WHERE outbox IS NULL"
			     " AND created < ? ORDER BY created, entry", &s, err);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, today, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(ids, g_strdup((const char *) sqlite3_column_text(stmt, 0)));
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE) {
		s = store_fail(st, rc, "announce_pending", err);
		goto fail;
	}
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
	stmt = store_prepare(st, "UPDATE announce_pending SET outbox = ? WHERE outbox IS NULL AND created < ?",
			     &s, err);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_text(stmt, 2, today, -1, SQLITE_TRANSIENT);
	s = store_step_done(st, stmt, "announce_pending", err);
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
