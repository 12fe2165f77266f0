/* lifecycle-access.c - signed access to the sealed records of an embargoed
 * entry: a key asks (access), the creator agrees (grant), the robot sends
 * the sealed records encrypted to that key, now and as they are added,
 * until the release (delivery records)
 *
 * Sealed content goes only to a key that asked for it in a signed mail and
 * that the verified creator (or, as configured, a moderator) granted, only
 * encrypted to that key, and only to the address the signed request came
 * from: nobody can make the robot send an embargo to an address or a key
 * of their choosing.  Requests, grants and deliveries are records; they
 * are never sealed, so that the public view of the embargoed entry shows
 * which keys were given access, and when.
 *
 * Part of the lifecycle (lifecycle.h); the files share
 * lifecycle-internal.h and run inside the intake transaction. */

#include "autoconfig.h"

#include <string.h>

#include "audit.h"
#include "crypto.h"
#include "disclosure.h"
#include "entry.h"
#include "lifecycle.h"
#include "notify.h"
#include "render.h"
#include "text.h"
#include "lifecycle-internal.h"

#define MAX_ACCESS_NOTICES 10	/* granters told of one request */

gboolean
lc_access_grantable_by_moderators(const vulnid_config *cfg)
{
	return g_strcmp0(cfg->access_granted_by, "creator-and-moderators") == 0;
}

/* The key fpr when it can take encrypted mail now, or NULL. */
static char *
encryption_key(const char *fpr)
{
	g_autoptr(crypto_key) k = NULL;

	if (fpr == NULL || crypto_home() == NULL || crypto_get_key(fpr, &k, NULL) != VULNID_OK)
		return NULL;
	if (!k->can_encrypt || k->revoked || k->expired)
		return NULL;
	return g_ascii_strup(k->fpr, -1);
}

/* The user IDs of a key as one cleaned line, for people to read (they say
 * what the key's holder chose; nothing is decided by them). */
static char *
key_uids(const char *fpr)
{
	g_autoptr(crypto_key) k = NULL;
	g_autoptr(GString) s = g_string_new(NULL);

	if (crypto_get_key(fpr, &k, NULL) != VULNID_OK)
		return g_strdup("(none)");
	for (guint i = 0; i < k->uids->len && i < 5; i++) {
		g_autofree char *u = text_clean_line(g_ptr_array_index(k->uids, i), 200);

		g_string_append_printf(s, "%s%s", s->len > 0 ? "; " : "", u);
	}
	return g_strdup(s->len > 0 ? s->str : "(none)");
}

/* The granters of access to e: the creator at the request's address, and
 * the moderators (as configured) at their keys' addresses. */
static GPtrArray *
granters_of(lc_mail *l, const entry *e)
{
	GPtrArray *to = g_ptr_array_new_with_free_func(g_free);
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;

	if (first != NULL && first->author != NULL && config_address_valid(first->author))
		g_ptr_array_add(to, g_strdup(first->author));
	if (lc_access_grantable_by_moderators(l->c->cfg)) {
		g_autofree char *mods = config_key_string(l->c->cfg, "lifecycle", "moderators");
		g_auto(GStrv) parts = g_strsplit_set(mods != NULL ? mods : "", ",;", -1);

		for (char **p = parts; *p != NULL && to->len < MAX_ACCESS_NOTICES; p++) {
			g_autofree char *f = g_strstrip(g_strdup(*p));
			g_autoptr(crypto_key) k = NULL;
			gboolean dup = FALSE;

			if (*f == '\0' || crypto_get_key(f, &k, NULL) != VULNID_OK || k->emails->len == 0 ||
			    !config_address_valid(g_ptr_array_index(k->emails, 0)))
				continue;
			for (guint i = 0; i < to->len; i++)
				dup |= lc_addr_equal(g_ptr_array_index(to, i), g_ptr_array_index(k->emails, 0));
			if (!dup)
				g_ptr_array_add(to, g_strdup(g_ptr_array_index(k->emails, 0)));
		}
	}
	return to;
}

/* Tell whoever may grant access that key fpr asked for it (record seq). */
static vulnid_status
ask_granters(lc_mail *l, const entry *e, const char *fpr, const char *requester, guint *told, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GPtrArray) to = granters_of(l, e);
	g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, c->now_dt);
	g_autofree char *addr = lc_entry_address(c->cfg, e->id);

	*told = 0;
	for (guint i = 0; i < to->len; i++) {
		g_autoptr(GHashTable) vars = render_template_vars(c->cfg, v);
		outbox_mail mail = { 0 };
		gint64 id = 0;
		vulnid_status s;

		g_hash_table_insert(vars, "key", g_strdup(fpr));
		g_hash_table_insert(vars, "key_uids", key_uids(fpr));
		g_hash_table_insert(vars, "requester", text_clean_line(requester, 320));
		mail.kind = "access-request";
		mail.entry = e->id;
		mail.to_addr = g_ptr_array_index(to, i);
		mail.reply_to = addr;
		mail.auto_submitted = "auto-generated";
		s = notify_queue_template(c->st, c->cfg, c->msg_row, "access-request.txt", vars, &mail, &id, err);
		if (s != VULNID_OK)
			return s;
		*told += id > 0;
	}
	return VULNID_OK;
}

vulnid_status
lc_cmd_access(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(entry_facts) f = NULL;
	g_autofree char *key = NULL;
	g_autofree char *what = NULL;
	const entry_access *a;
	const char *kv[] = { "Access-Request", NULL, NULL };
	const char *requester = lc_sender_of(c);
	gint64 seq;
	guint told = 0;
	vulnid_status s;

	if (c->signer == NULL)
		return lc_refuse(l, cmd, e->id, "refused: not signed: ask for access in a mail signed with your OpenPGP\n"
				 "  key (one that can encrypt: the sealed records are sent encrypted to it)", err);
	if (c->unbound != NULL || cmd->target == NULL)
		return lc_refuse(l, cmd, e->id, "refused: in a signed mail, name the entry in the command (\"access ID\"),\n"
				 "  so that the signature covers it", err);
	if (!entry_has_sealed(e)) {
		g_autofree char *w = g_strdup_printf("refused: %s is not under embargo: everything in it is public\n"
						     "  (\"lookup %s\")", e->id, e->id);

		return lc_refuse(l, cmd, e->id, w, err);
	}
	if (ri->creator_key)
		return lc_refuse(l, cmd, e->id, "refused: you are the creator of the entry", err);
	key = encryption_key(c->signer);
	if (key == NULL)
		return lc_refuse(l, cmd, e->id, "refused: your key cannot take encrypted mail (it has no encryption\n"
				 "  subkey, or is revoked or expired): the sealed records would go to it encrypted", err);
	if (requester == NULL || !config_address_valid(requester))
		return lc_refuse(l, cmd, e->id, "refused: the mail has no address to send the records to", err);
	f = entry_facts_now(e);
	a = entry_facts_access(f, key);
	if (a != NULL && a->granted != NULL) {
		what = g_strdup_printf("your key was given access to %s in record %" G_GINT64_FORMAT
				       " (%s); nothing changes", e->id, a->granted->seq, a->granted->created);
		return lc_done(l, cmd, e->id, what, err);
	}
	if (a != NULL && a->requested != NULL) {
		what = g_strdup_printf("your key asked for access to %s in record %" G_GINT64_FORMAT
				       "; it waits for the creator's answer", e->id, a->requested->seq);
		return lc_done(l, cmd, e->id, what, err);
	}
	kv[1] = key;
	s = lc_append_command_record(l, e, ri, kv, &seq, err);
	if (s == VULNID_OK)
		s = ask_granters(l, e, key, requester, &told, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("your request for access to %s is recorded (record %" G_GINT64_FORMAT ").\n"
			       "  %s If access is given, the sealed records are sent to\n"
			       "  %s, encrypted to your key %s,\n"
			       "  and so are the records added under embargo, until the release.",
			       e->id, seq, told > 0 ? "The creator is asked." : "The creator could not be asked by mail now.",
			       requester, key);
	return lc_done(l, cmd, e->id, what, err);
}

/* Send the sealed records of e (only record seq, when seq > 0) to key fpr,
 * which was given access by record grant: encrypted to the key, to the
 * address of its signed request; a delivery record says what was sent. */
static vulnid_status
deliver(lc_mail *l, entry *e, const entry_access *a, gint64 seq, guint *sent, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_READER, G_MAXINT64, c->now_dt);
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GString) seqs = g_string_new(NULL);
	g_autoptr(GHashTable) vars = NULL;
	g_autofree char *enc = encryption_key(a->fpr);
	g_autofree char *addr = lc_entry_address(c->cfg, e->id);
	const char *encrypt_to[2] = { enc, NULL };
	const char *to = a->requested->author;
	outbox_mail mail = { 0 };
	role_info robot = { 0 };
	gint64 id = 0;
	vulnid_status s;

	*sent = 0;
	if (enc == NULL || to == NULL || !config_address_valid(to))
		return VULNID_OK;
	for (guint i = 0; i < v->records->len; i++) {
		const view_record *vr = g_ptr_array_index(v->records, i);
		g_autofree char *t = NULL;

		if (!entry_record_sealed_at(vr->r, G_MAXINT64) || !vr->content || (seq > 0 && vr->r->seq != seq))
			continue;
		t = render_record_text_whole(v, vr);
		g_string_append_printf(text, "%s%s", text->len > 0 ? "\n" : "", t);
		g_string_append_printf(seqs, "%s%" G_GINT64_FORMAT, seqs->len > 0 ? " " : "", vr->r->seq);
	}
	if (seqs->len == 0)
		return VULNID_OK;
	vars = render_template_vars(c->cfg, v);
	g_hash_table_insert(vars, "key", g_strdup(a->fpr));
	g_hash_table_insert(vars, "records", g_strdup(text->str));
	g_hash_table_insert(vars, "record_numbers", g_strdup(seqs->str));
	mail.kind = "access-delivery";
	mail.entry = e->id;
	mail.to_addr = to;
	mail.reply_to = addr;
	mail.auto_submitted = "auto-generated";
	mail.encrypt_to = encrypt_to;
	s = notify_queue_template(c->st, c->cfg, c->msg_row, "access-delivery.txt", vars, &mail, &id, err);
	if (s != VULNID_OK || id == 0)
		return s;	/* held by the outgoing-mail policy: not delivered, not recorded */
	robot.role = "robot";
	robot.how = "robot";
	{
		const char *kv[] = { "Delivered-To-Key", a->fpr, "Records", seqs->str, NULL };
		g_autofree char *fields = lc_fields_json(kv);
		g_autoptr(audit_event) ev = audit_event_new("access-delivered", e->id, c->m->message_id);

		l->delivering = TRUE;
		s = lc_append_record(l, e, "delivery", &robot, fields, "", NULL, FALSE, NULL, err);
		l->delivering = FALSE;
		if (s != VULNID_OK)
			return s;
		audit_event_str(ev, "fingerprint", a->fpr);
		audit_event_str(ev, "records", seqs->str);
		audit_event_int(ev, "outbox", id);
		s = audit_append(c->st, ev, err);
	}
	*sent = 1;
	return s;
}

vulnid_status
lc_deliver_sealed(lc_mail *l, entry *e, gint64 seq, GError **err)
{
	g_autoptr(entry_facts) f = NULL;

	if (l->delivering)
		return VULNID_OK;
	f = entry_facts_now(e);
	for (guint i = 0; i < f->access->len; i++) {
		const entry_access *a = g_ptr_array_index(f->access, i);
		guint sent = 0;
		vulnid_status s;

		/* not back to the key that wrote it */
		if (a->granted == NULL || entry_fpr_equal(a->fpr, l->c->signer))
			continue;
		s = deliver(l, e, a, seq, &sent, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

vulnid_status
lc_cmd_grant(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = NULL;
	g_autoptr(entry_facts) after = NULL;
	g_autofree char *what = NULL;
	g_autofree char *key = NULL;
	const char *why = lc_need_creator(l, ri, cmd->target != NULL);
	const entry_access *a;
	const char *kv[] = { "Access-Grant", cmd->arg, NULL };
	gint64 seq;
	guint sent = 0;
	vulnid_status s;

	if (why != NULL && lc_access_grantable_by_moderators(l->c->cfg) && (ri->moderator || ri->moderator_unbound))
		why = lc_need_moderator(l, ri, cmd->target != NULL);
	if (why != NULL)
		return lc_refuse(l, cmd, e->id, why, err);
	if (!entry_has_sealed(e)) {
		g_autofree char *w = g_strdup_printf("refused: %s is not under embargo: there is nothing sealed to give", e->id);

		return lc_refuse(l, cmd, e->id, w, err);
	}
	f = entry_facts_now(e);
	a = entry_facts_access(f, cmd->arg);
	if (a == NULL || a->requested == NULL) {
		g_autofree char *w = g_strdup_printf("refused: the key %s has not asked for access to %s\n"
						     "  (its holder sends \"access %s\", signed with it)", cmd->arg, e->id, e->id);

		return lc_refuse(l, cmd, e->id, w, err);
	}
	if (a->granted != NULL) {
		what = g_strdup_printf("the key %s was given access to %s in record %" G_GINT64_FORMAT "; nothing changes",
				       cmd->arg, e->id, a->granted->seq);
		return lc_done(l, cmd, e->id, what, err);
	}
	key = encryption_key(cmd->arg);
	if (key == NULL) {
		g_autofree char *w = g_strdup_printf("refused: the key %s cannot take encrypted mail now (revoked,\n"
						     "  expired, or without an encryption subkey)", cmd->arg);

		return lc_refuse(l, cmd, e->id, w, err);
	}
	s = lc_append_command_record(l, e, ri, kv, &seq, err);
	if (s != VULNID_OK)
		return s;
	after = entry_facts_now(e);
	a = entry_facts_access(after, cmd->arg);
	if (a == NULL || a->granted == NULL)
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "the grant of record %" G_GINT64_FORMAT " does not count", seq);
	s = deliver(l, e, a, 0, &sent, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("the key %s is given access to %s (record %" G_GINT64_FORMAT ").\n"
			       "  %s; the records added under embargo\n"
			       "  follow as they come, until the release. The entry shows that the key was given\n"
			       "  access, and when.", cmd->arg, e->id, seq,
			       sent > 0 ? "The sealed records were sent to the address of its request, encrypted to it"
					: "The sealed records could not be sent now (see the robot's outgoing-mail policy)");
	return lc_done(l, cmd, e->id, what, err);
}
