/* notify.c - vendor notifications, list announcements, failure notices */
#include "autoconfig.h"

#include <string.h>

#include "audit.h"
#include "crypto.h"
#include "lifecycle.h"
#include "notify.h"
#include "template.h"
#include "text.h"
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
	s = outbox_queue(st, cfg, cause, mail, id, err);
	mail->subject = NULL;
	mail->body = NULL;
	return s;
}

static void
put(GHashTable *v, const char *key, char *value)
{
	g_hash_table_insert(v, (gpointer) key, value != NULL ? value : g_strdup(""));
}

static char *
join_field(const entry *e, const char *key, const char *sep, const char *prefix)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		g_autoptr(JsonParser) p = json_parser_new();
		JsonArray *a;

		if (!json_parser_load_from_data(p, r->fields, -1, NULL) ||
		    !JSON_NODE_HOLDS_ARRAY(json_parser_get_root(p)))
			continue;
		a = json_node_get_array(json_parser_get_root(p));
		for (guint j = 0; j < json_array_get_length(a); j++) {
			JsonArray *kv = json_array_get_array_element(a, j);
			const char *k, *v;

			if (kv == NULL || json_array_get_length(kv) != 2)
				continue;
			k = json_array_get_string_element(kv, 0);
			v = json_array_get_string_element(kv, 1);
			if (k == NULL || v == NULL || g_ascii_strcasecmp(k, key) != 0)
				continue;
			g_string_append_printf(s, "%s%s%s", s->len ? sep : "", prefix, v);
		}
	}
	return g_string_free(s, FALSE);
}

GHashTable *
notify_entry_vars(const vulnid_config *cfg, const entry *e)
{
	GHashTable *v = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	g_autofree char *anon = entry_field(e, "Anonymous");
	g_autofree char *vfield = entry_field(e, "Vendor");
	g_autofree char *product = entry_field(e, "Product");
	g_autofree char *title = entry_title(e);
	g_autoptr(GString) headline = g_string_new(NULL);

	put(v, "request_address", g_strdup(cfg->request_address));
	put(v, "domain", g_strdup(cfg->domain));
	put(v, "prefix", g_strdup(cfg->prefix));
	put(v, "id", g_strdup(e->id));
	put(v, "digest", g_strdup(e->digest));
	put(v, "created", g_strdup(e->created));
	put(v, "title", g_strdup(title));
	put(v, "vendor", g_strdup(vfield != NULL ? vfield : "(not named)"));
	put(v, "product", g_strdup(product != NULL ? product : "(not named)"));
	put(v, "type", entry_field(e, "Type"));
	put(v, "embargo", entry_embargo(e));
	put(v, "versions", join_field(e, "Version", ", ", ""));
	put(v, "references", join_field(e, "Reference", "\n", "  "));
	put(v, "description", g_strdup(first != NULL && first->body != NULL ? first->body : ""));
	put(v, "entry_address", g_strdup_printf("%s+%s@%s", cfg->request_local, e->id, cfg->domain));
	put(v, "state", g_strdup(entry_state(e)));
	put(v, "robot_fpr", crypto_robot_label());
	/* The researcher is never named to the vendor or a list when the
	 * request asked for anonymity. */
	if (anon != NULL && g_ascii_strcasecmp(anon, "yes") == 0)
		put(v, "researcher", g_strdup("an anonymous researcher (reply to this mail to reach them)"));
	else
		put(v, "researcher", g_strdup(first != NULL && first->author != NULL ? first->author : "unknown"));
	if (vfield != NULL) {
		g_autofree char *vname = NULL;
		g_autofree char *vdom = NULL;

		vendor_field_split(vfield, &vname, &vdom);
		g_string_append(headline, *vname != '\0' ? vname : vdom != NULL ? vdom : "");
	}
	if (product != NULL)
		g_string_append_printf(headline, "%s%s", headline->len ? " " : "", product);
	if (headline->len > 0)
		g_string_append(headline, ": ");
	g_string_append(headline, title);
	put(v, "headline", g_strdup(headline->str));
	return v;
}

static gboolean
entry_embargoed(const entry *e)
{
	return strcmp(entry_state(e), "embargoed") == 0;
}

vulnid_status
notify_vendor(store *st, const vulnid_config *cfg, gint64 cause, const char *entry_id,
	      GString *note, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(GPtrArray) to = NULL;
	g_autoptr(GHashTable) vars = NULL;
	g_autofree char *vfield = NULL;
	g_autofree char *contact = NULL;
	g_autofree char *list = NULL;
	g_autofree char *reply_to = NULL;
	const char *how = "none";
	const char *vendor_key = NULL;
	g_autoptr(vendor) dir = NULL;
	gboolean embargoed;
	outbox_mail mail = { 0 };
	vulnid_status s;

	if (!cfg->notify_vendors)
		return VULNID_OK;
	s = entry_load(st, entry_id, &e, err);
	if (s != VULNID_OK)
		return s;
	embargoed = entry_embargoed(e);
	if (embargoed) {
		/* Who to tell is part of the sealed content. */
		s = entry_unseal(e, err);
		if (s != VULNID_OK)
			return s;
	}
	vfield = entry_field(e, "Vendor");
	contact = entry_field(e, "Vendor-Contact");
	if (vfield == NULL && contact == NULL) {
		if (strcmp(entry_state(e), "reserved") != 0)
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
	g_ptr_array_add(to, NULL);
	list = g_strjoinv(", ", (char **) to->pdata);
	vars = notify_entry_vars(cfg, e);
	reply_to = g_strdup_printf("%s+%s@%s", cfg->request_local, entry_id, cfg->domain);
	{
		g_autofree char *token = NULL;

		s = lifecycle_issue_token(st, entry_id, "vendor", list, &token, err);
		if (s != VULNID_OK)
			return s;
		if (token != NULL)
			g_hash_table_insert(vars, "token_line",
					    g_strdup_printf("Your response token is %s: keep the line \"Token: %s\"\n"
							    "in your reply, so that it is recorded as the vendor's.\n",
							    token, token));
	}
	if (embargoed)
		g_hash_table_insert(vars, "headline", g_strdup("embargoed report"));
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
					  vars, &mail, NULL, err);
	}
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
	if (strcmp(entry_state(e), "public") != 0 || lifecycle_entry_withheld(e))
		return VULNID_OK;	/* reserved: nothing to say; embargoed: not yet; spam: never */
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
	vars = notify_entry_vars(cfg, e);
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
		g_autoptr(GHashTable) ev = NULL;

		s = entry_load(st, g_ptr_array_index(ids, i), &e, err);
		if (s != VULNID_OK)
			goto fail;
		if (lifecycle_entry_withheld(e))
			continue;
		ev = notify_entry_vars(cfg, e);
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
	vars = notify_entry_vars(cfg, e);
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
