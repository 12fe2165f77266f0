/* lifecycle-commands.c - the entry commands (lookup, key, release, embargo,
 * withdraw, alias, rate, duplicate-of, spam, link, subscribe,
 * unsubscribe, endorse, unendorse, approve, access, grant, reviewed), who
 * may run each, and their records
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
#include "policy.h"
#include "ratelimit.h"
#include "request.h"
#include "template.h"
#include "text.h"
#include "tokens.h"
#include "vendor.h"
#include "lifecycle-internal.h"

/* ---- commands ------------------------------------------------------------------- */

#define UNBOUND_REFUSAL "refused: the signed text does not name the entry this mail was sent to,\n" \
			"  so its signature grants nothing (write the identifier in the signed text)"

/* NULL when the sender may act as the creator of id, else why not. */
static const char *
need_creator(const lc_mail *l, const role_info *ri, gboolean named)
{
	if (ri->creator_token)
		return NULL;
	if (ri->creator_key || ri->creator_key_unbound) {
		if (!named)
			return "refused: in a signed mail, name the entry in the command (for example\n"
			       "  \"release ID\"), so that the signature covers it";
		return ri->creator_key ? NULL : UNBOUND_REFUSAL;
	}
	if (l->c->signer != NULL)
		return "refused: wrong role: only the creator of the entry may do this";
	return "refused: not authenticated: only the creator may do this; add the line\n"
	       "  \"Token: ...\" from the acknowledgement, or sign the mail with the request's key";
}

static const char *
need_moderator(const lc_mail *l, const role_info *ri, gboolean named)
{
	if (ri->moderator || ri->moderator_unbound) {
		if (!named)
			return "refused: in a signed mail, name the entries in the command (for example\n"
			       "  \"duplicate-of ID ID\"), so that the signature covers them";
		return ri->moderator ? NULL : UNBOUND_REFUSAL;
	}
	if (l->c->signer == NULL)
		return "refused: not authenticated: moderator commands must be signed by a moderator's key";
	return "refused: wrong role: only moderators may do this";
}

const char *
lc_need_creator(const lc_mail *l, const role_info *ri, gboolean named)
{
	return need_creator(l, ri, named);
}

const char *
lc_need_moderator(const lc_mail *l, const role_info *ri, gboolean named)
{
	return need_moderator(l, ri, named);
}

/* Load an entry named by a command; *e NULL and a result written when it
 * does not exist. */
static vulnid_status
command_entry(lc_mail *l, const command *cmd, const char *id, entry **e, GError **err)
{
	g_autoptr(GError) e2 = NULL;
	vulnid_status s;

	*e = NULL;
	if (id == NULL) {
		lc_out_result(l, cmd->line, "refused: name the entry (%s ID): this mail is not about one entry",
			   cmd->word);
		return lc_audit_command(l, NULL, cmd->word, "refused", "no entry", err);
	}
	s = lc_load_entry(l->c->st, id, TRUE, e, &e2);
	if (s == VULNID_ERR_NOTFOUND) {
		lc_out_result(l, cmd->line, "refused: unknown ID %s", id);
		return lc_audit_command(l, id, cmd->word, "refused", "unknown ID", err);
	}
	if (s != VULNID_OK)
		g_propagate_error(err, g_steal_pointer(&e2));
	return s;
}

static vulnid_status
refuse(lc_mail *l, const command *cmd, const char *id, const char *why, GError **err)
{
	lc_out_result(l, cmd->line, "%s", why);
	return lc_audit_command(l, id, cmd->word, "refused", why, err);
}

static vulnid_status
done(lc_mail *l, const command *cmd, const char *id, const char *what, GError **err)
{
	lc_out_result(l, cmd->line, "done: %s", what);
	return lc_audit_command(l, id, cmd->word, "done", NULL, err);
}

vulnid_status
lc_refuse(lc_mail *l, const command *cmd, const char *id, const char *why, GError **err)
{
	return refuse(l, cmd, id, why, err);
}

vulnid_status
lc_done(lc_mail *l, const command *cmd, const char *id, const char *what, GError **err)
{
	return done(l, cmd, id, what, err);
}

static vulnid_status
cmd_lookup(lc_mail *l, const command *cmd, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) text = g_string_new(NULL);
	vulnid_status s;

	if (++l->lookups > MAX_LOOKUPS)
		return refuse(l, cmd, NULL, "refused: at most 5 lookups per mail", err);
	if (cmd->arg != NULL) {
		/* an alias: the entries that recorded it */
		g_clear_pointer(&ids, g_ptr_array_unref);
		s = entry_ids_by_alias(c->st, cmd->arg, MAX_ALIAS_MATCHES, &ids, err);
		if (s != VULNID_OK)
			return s;
		if (ids->len == 0) {
			g_autofree char *why = g_strdup_printf("refused: no entry has the alias %s", cmd->arg);

			return refuse(l, cmd, NULL, why, err);
		}
	} else if (cmd->target != NULL || l->routed != NULL)
		g_ptr_array_add(ids, g_strdup(cmd->target != NULL ? cmd->target : l->routed));
	for (guint i = 0; i < ids->len; i++) {
		g_autoptr(entry) e = NULL;
		g_autofree char *t = NULL;

		s = command_entry(l, cmd, g_ptr_array_index(ids, i), &e, err);
		if (s != VULNID_OK || e == NULL)
			return s;
		{
			g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, c->now_dt);

			/* The whole entry only to an address the mail proves:
			 * a forged From must not get anyone tens of kilobytes. */
			t = c->verified ? render_mail_text(v) : render_mail_headline(c->cfg, v);
		}
		g_string_append_printf(text, "%s%s", text->len > 0 ? "\n" : "", t);
	}
	if (ids->len == 0) {
		g_autoptr(entry) none = NULL;

		return command_entry(l, cmd, NULL, &none, err);
	}
	if (text->len > MAX_LOOKUP_TEXT) {
		g_string_truncate(text, MAX_LOOKUP_TEXT);
		g_string_append(text, "\n[... cut: the entry is longer than a mail should be]\n");
	}
	g_string_append_printf(l->out, "> %s\n  done%s:\n\n", cmd->line,
			       c->verified ? "" : " (the headline: the whole entry is mailed in answer to mail signed\n"
				  "  with a known key or sent with a token; it is also on the entry's page)");
	{
		g_auto(GStrv) lines = g_strsplit(text->str, "\n", -1);

		for (char **p = lines; *p != NULL; p++)
			g_string_append_printf(l->out, "%s%s\n", **p ? "    " : "", *p);
	}
	return lc_audit_command(l, g_ptr_array_index(ids, 0), cmd->word, "done", NULL, err);
}

static vulnid_status
cmd_key(lc_mail *l, const command *cmd, GError **err)
{
	g_autofree char *fpr = NULL;
	g_autoptr(GError) e2 = NULL;
	g_autoptr(GBytes) pub = NULL;

	if (crypto_home() == NULL || crypto_robot_fingerprint(&fpr, &e2) != VULNID_OK ||
	    crypto_export_public(fpr, &pub, &e2) != VULNID_OK)
		return refuse(l, cmd, NULL, "refused: this robot has no OpenPGP key", err);
	if (l->key == NULL)
		l->key = g_steal_pointer(&pub);
	{
		g_autofree char *what = g_strdup_printf("the robot's public key is attached; its fingerprint is\n  %s", fpr);

		return done(l, cmd, NULL, what, err);
	}
}

static vulnid_status
cmd_release(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_derive(e, G_MAXINT64, TRUE, l->c->now_dt);
	const char *why = need_creator(l, ri, cmd->target != NULL);
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (f->state != ENTRY_EMBARGOED) {
		g_autofree char *w = g_strdup_printf("refused: %s is not under embargo", e->id);

		return refuse(l, cmd, e->id, w, err);
	}
	if (entry_has_sealed(e)) {
		/* Every sealed record is disclosed by a release record; the
		 * vendor is told and the entry announced.  Subscribers get the
		 * disclosed records. */
		gint64 before = ((entry_record *) g_ptr_array_index(e->records, e->records->len - 1))->seq;
		g_autoptr(entry) after = NULL;

		s = embargo_release(l->c->st, l->c->cfg, e->id, l->c->msg_row, "creator", err);
		if (s == VULNID_OK)
			s = entry_load(l->c->st, e->id, &after, err);
		for (guint i = 0; s == VULNID_OK && i < after->records->len; i++) {
			const entry_record *r = g_ptr_array_index(after->records, i);

			if (r->seq > before)
				s = lc_after_record(l, e->id, r->seq, err);
		}
	} else {
		/* Nothing sealed (an entry from before sealing): the creator's
		 * decision is the record. */
		const char *kv[] = { "Embargo", "no", NULL };

		s = lc_append_command_record(l, e, ri, kv, NULL, err);
	}
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("the embargo on %s was lifted; the entry is public", e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_embargo(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_derive(e, G_MAXINT64, TRUE, l->c->now_dt);
	g_autofree char *today = g_date_time_format(l->c->now_dt, "%Y-%m-%d");
	const char *why = need_creator(l, ri, cmd->target != NULL);
	const char *kv[] = { "Embargo", cmd->arg, NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if ((f->marks & ENTRY_MARK_RELEASED) || f->state != ENTRY_EMBARGOED) {
		g_autofree char *w = g_strdup_printf("refused: %s is %s; a public entry cannot be embargoed again",
						     e->id, (f->marks & ENTRY_MARK_RELEASED) ? "released"
											: "not under embargo");

		return refuse(l, cmd, e->id, w, err);
	}
	if (strcmp(cmd->arg, today) <= 0)
		return refuse(l, cmd, e->id, "refused: the date is not in the future", err);
	s = lc_append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("the embargo on %s now ends on %s", e->id, cmd->arg);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_withdraw(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *why = need_creator(l, ri, cmd->target != NULL);
	const char *kv[] = { "Withdrawn", cmd->arg, NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (f->withdrawn != NULL) {
		g_autofree char *w = g_strdup_printf("refused: %s was already withdrawn (record %" G_GINT64_FORMAT ")",
						     e->id, f->withdrawn->record->seq);

		return refuse(l, cmd, e->id, w, err);
	}
	s = lc_append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s is withdrawn; it stays, marked as withdrawn with your reason", e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_alias(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *kv[] = { "Alias", cmd->arg, NULL };
	g_autofree char *what = NULL;
	gint64 seq;
	vulnid_status s;

	for (guint k = 0; k < 2; k++) {
		GPtrArray *list = k == 0 ? f->aliases : f->proposals;

		for (guint i = 0; i < list->len; i++) {
			const entry_claim *m = g_ptr_array_index(list, i);

			if (g_ascii_strcasecmp(m->key, "Alias") != 0 || g_ascii_strcasecmp(m->value, cmd->arg) != 0)
				continue;
			what = g_strdup_printf("%s was already recorded as an alias of %s (record %" G_GINT64_FORMAT
					       "%s)", cmd->arg, e->id, m->record->seq, k == 0 ? "" : ", unverified");
			return done(l, cmd, e->id, what, err);
		}
	}
	s = lc_append_command_record(l, e, ri, kv, &seq, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s is recorded as an alias of %s (record %" G_GINT64_FORMAT "), with you as its author%s",
			       cmd->arg, e->id, seq, entry_how_verified(entry_how_from_str(ri->how))
			       && strcmp(ri->role, "third-party") != 0 ? ""
			       : ";\n  unverified: it is shown as a proposal until the creator, the vendor or a\n"
				 "  moderator records it");
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_rate(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autofree char *n = g_strdup_printf("%d", cmd->rating);
	const char *kv[] = { "Rating", n, cmd->arg != NULL ? "Rating-Reason" : NULL, cmd->arg, NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	s = lc_append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	if (l->c->signer != NULL && l->c->unbound == NULL)
		what = g_strdup_printf("your rating %d of %s is recorded; it counts once for your key\n"
				       "  (a later rating replaces it)", cmd->rating, e->id);
	else
		what = g_strdup_printf("your rating %d of %s is recorded as unverified: only ratings\n"
				       "  signed with a key count, once per key", cmd->rating, e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_duplicate_of(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	const char *why = need_moderator(l, ri, cmd->target != NULL);
	g_autofree char *cur = g_strdup(cmd->arg);
	g_autofree char *what = NULL;
	const char *kv[] = { "Duplicate-Of", cmd->arg, NULL };
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (strcmp(cmd->arg, e->id) == 0)
		return refuse(l, cmd, e->id, "refused: an entry cannot be a duplicate of itself", err);
	/* The canonical entry must exist and must not lead back here. */
	for (int hop = 0; cur != NULL; hop++) {
		g_autoptr(entry) ce = NULL;
		g_autoptr(entry_facts) cf = NULL;
		g_autoptr(GError) e2 = NULL;

		s = entry_load(l->c->st, cur, &ce, &e2);
		if (s == VULNID_ERR_NOTFOUND) {
			g_autofree char *w = g_strdup_printf("refused: unknown ID %s", cur);

			return refuse(l, cmd, e->id, w, err);
		}
		if (s != VULNID_OK) {
			g_propagate_error(err, g_steal_pointer(&e2));
			return s;
		}
		if (hop >= MAX_DUPLICATE_CHAIN || strcmp(cur, e->id) == 0)
			return refuse(l, cmd, e->id, "refused: that would make a circle of duplicates", err);
		cf = entry_facts_now(ce);
		g_free(cur);
		cur = cf->duplicate_of != NULL ? g_strdup(cf->duplicate_of->value) : NULL;
	}
	s = lc_append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s is recorded as a duplicate of %s", e->id, cmd->arg);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_spam(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *why = need_moderator(l, ri, cmd->target != NULL);
	const char *kv[] = { "Spam", "yes", NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (f->spam == NULL) {
		s = lc_append_command_record(l, e, ri, kv, NULL, err);
		if (s != VULNID_OK)
			return s;
	}
	what = g_strdup_printf("%s is marked as spam: kept, but withheld from announcements and exports", e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_link(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *why = need_moderator(l, ri, cmd->target != NULL);
	g_autoptr(entry) other = NULL;
	g_autofree char *what = NULL;
	role_info ri2;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (strcmp(cmd->arg, e->id) == 0)
		return refuse(l, cmd, e->id, "refused: an entry cannot be linked to itself", err);
	s = command_entry(l, cmd, cmd->arg, &other, err);
	if (s != VULNID_OK || other == NULL)
		return s;
	for (guint i = 0; i < f->links->len; i++)
		if (strcmp(((entry_claim *) g_ptr_array_index(f->links, i))->value, cmd->arg) == 0) {
			what = g_strdup_printf("%s and %s were already linked", e->id, cmd->arg);
			return done(l, cmd, e->id, what, err);
		}
	s = lc_role_for(l, other, &ri2, err);
	if (s != VULNID_OK)
		return s;
	{
		const char *kv1[] = { "Link", other->id, NULL };
		const char *kv2[] = { "Link", e->id, NULL };

		s = lc_append_command_record(l, e, ri, kv1, NULL, err);
		if (s == VULNID_OK)
			s = lc_append_command_record(l, other, &ri2, kv2, NULL, err);
	}
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s and %s are linked", e->id, other->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_subscribe(lc_mail *l, const command *cmd, entry *e, const role_info *ri G_GNUC_UNUSED, GError **err)
{
	mail_ctx *c = l->c;
	gboolean sub = cmd->kind == CMD_SUBSCRIBE, already = FALSE;
	const char *to = lc_reply_address_of(c);
	g_autofree char *token = NULL;
	g_autofree char *addr = lc_entry_address(c->cfg, e->id);
	vulnid_status s;

	if (to == NULL || !config_address_valid(to))
		return refuse(l, cmd, e->id, "refused: the mail has no address to confirm with", err);
	s = lc_is_subscribed(c->st, e->id, to, &already, err);
	if (s != VULNID_OK)
		return s;
	if (already == sub) {
		g_autofree char *w = g_strdup_printf("%s was %s subscribed to %s; nothing changes", to,
						     sub ? "already" : "not", e->id);

		return done(l, cmd, e->id, w, err);
	}
	/* The token goes only to the address that is to be (un)subscribed:
	 * nobody can subscribe someone else. */
	s = tokens_issue(c->st, e->id, sub ? "subscribe" : "unsubscribe", to, &token, err);
	if (s != VULNID_OK)
		return s;
	if (l->pending == NULL)
		l->pending = g_strdup(e->id);
	else if (strcmp(l->pending, e->id) != 0)
		l->pending_many = TRUE;
	lc_out_result(l, cmd->line,
		   "to confirm, reply to this mail (or write to %s) with\n"
		   "  this line at the top:\n\n"
		   "  Token: %s\n\n"
		   "  Nothing changes until then. %s",
		   addr, token, sub ? "You will then get every later public record of the entry." :
				      "You will then get no more records of the entry.");
	return lc_audit_command(l, e->id, cmd->word, "pending", to, err);
}

/* A subscription token came back: the address proved it reads its mail. */
vulnid_status
lc_confirm_subscription(lc_mail *l, const token_row *t, GError **err)
{
	gboolean sub = strcmp(t->role, "subscribe") == 0, already = FALSE;
	g_autoptr(audit_event) ev = NULL;
	vulnid_status s;

	if (t->address == NULL)
		return VULNID_OK;
	s = lc_is_subscribed(l->c->st, t->entry, t->address, &already, err);
	if (s != VULNID_OK)
		return s;
	if (already != sub) {
		s = tokens_mark(l->c->st, t->entry, sub ? "subscriber" : "unsubscribed", t->address, err);
		if (s != VULNID_OK)
			return s;
	}
	g_string_append_printf(l->out, "Token: accepted: %s is %s %s.\n\n", t->address,
			       sub ? "subscribed to" : "unsubscribed from", t->entry);
	ev = audit_event_new(sub ? "subscribed" : "unsubscribed", t->entry, l->c->m->message_id);
	audit_event_str(ev, "address", t->address);
	return audit_append(l->c->st, ev, err);
}

/* The fields an endorsement allows, for people: "all headline fields" or
 * the list. */
static const char *
fields_phrase(const char *fields)
{
	return fields != NULL && *fields != '\0' ? fields : "all headline fields";
}

/* endorse or unendorse without an entry, to the request address: a
 * moderator's word for every entry. */
static vulnid_status
cmd_endorse_all(lc_mail *l, const command *cmd, GError **err)
{
	mail_ctx *c = l->c;
	gboolean endorse = cmd->kind == CMD_ENDORSE;
	g_autofree char *what = NULL;
	role_info ri;
	vulnid_status s;

	if (c->signer == NULL || !lc_is_moderator(c->cfg, c->signer))
		return refuse(l, cmd, NULL, c->signer == NULL
			      ? "refused: name the entry (endorse ID KEY); for every entry, a moderator signs"
			      : "refused: wrong role: only a moderator endorses a key for every entry;\n"
				"  the creator of an entry names it (endorse ID KEY)", err);
	if (lc_is_moderator(c->cfg, cmd->arg))
		return refuse(l, cmd, NULL, "refused: that key is a moderator's", err);
	memset(&ri, 0, sizeof ri);
	s = lc_endorsement_of(l, NULL, cmd->arg, &ri, err);
	if (s != VULNID_OK)
		return s;
	if (!endorse && !ri.contributor) {
		what = g_strdup_printf("the key %s was not endorsed for every entry; nothing changes", cmd->arg);
		return done(l, cmd, NULL, what, err);
	}
	s = lc_endorsement_store(l, NULL, cmd->arg, c->signer, "command", endorse ? "endorse" : "unendorse",
				 cmd->arg2, err);
	if (s != VULNID_OK)
		return s;
	if (endorse)
		what = g_strdup_printf("the key %s is endorsed for every entry: its signed additions\n"
				       "  count as an endorsed contributor's (%s)", cmd->arg, fields_phrase(cmd->arg2));
	else
		what = g_strdup_printf("the key %s is no longer endorsed for every entry: its later\n"
				       "  additions are a third party's proposals again", cmd->arg);
	return done(l, cmd, NULL, what, err);
}

/* endorse [ID] KEY [FIELD...] and unendorse [ID] KEY on one entry: the
 * verified creator, or a moderator. */
static vulnid_status
cmd_endorse(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	gboolean endorse = cmd->kind == CMD_ENDORSE;
	const char *why = need_creator(l, ri, cmd->target != NULL);
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	const char *endorser = "creator";
	const char *kv[] = { endorse ? "Endorse" : "Unendorse", cmd->arg,
			     endorse && cmd->arg2 != NULL ? "Endorse-Fields" : NULL, cmd->arg2, NULL };
	g_autofree char *what = NULL;
	role_info now;
	vulnid_status s;

	if (why != NULL && (ri->moderator || ri->moderator_unbound)) {
		why = need_moderator(l, ri, cmd->target != NULL);
		endorser = c->signer;
	}
	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if ((first != NULL && entry_fpr_equal(first->signer, cmd->arg)) || lc_is_moderator(c->cfg, cmd->arg))
		return refuse(l, cmd, e->id, "refused: that key has a role of its own here (the creator's or a moderator's)",
			      err);
	memset(&now, 0, sizeof now);
	s = lc_endorsement_of(l, e->id, cmd->arg, &now, err);
	if (s != VULNID_OK)
		return s;
	if (!endorse && !now.contributor) {
		what = g_strdup_printf("the key %s is not endorsed for %s; nothing changes", cmd->arg, e->id);
		return done(l, cmd, e->id, what, err);
	}
	s = lc_endorsement_store(l, e->id, cmd->arg, endorser, "command", endorse ? "endorse" : "unendorse",
				 cmd->arg2, err);
	if (s == VULNID_OK)
		s = lc_append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	if (endorse)
		what = g_strdup_printf("the key %s is endorsed for %s: its signed additions move the\n"
				       "  headline as an endorsed contributor's (%s)", cmd->arg, e->id,
				       fields_phrase(cmd->arg2));
	else
		what = g_strdup_printf("the key %s is no longer endorsed for %s: its later additions are\n"
				       "  a third party's proposals again", cmd->arg, e->id);
	return done(l, cmd, e->id, what, err);
}

/* The unverified values (proposals) the records approve would take: of
 * record seq, or of the records signed by key. */
static guint
approvable(const entry_facts *f, gint64 seq, const char *key, GString *list)
{
	guint n = 0;

	for (guint i = 0; i < f->proposals->len; i++) {
		const entry_claim *c = g_ptr_array_index(f->proposals, i);
		const entry_record *r = c->record;

		if (g_ascii_strcasecmp(c->key, "Status") == 0)
			continue;
		if (key != NULL ? !(r->signed_by_key && r->auth_ignored == NULL && entry_fpr_equal(r->signer, key))
				: r->seq != seq)
			continue;
		if (n++ < 20)
			g_string_append_printf(list, "\n    %s: %s (record %" G_GINT64_FORMAT ")", c->key, c->value, r->seq);
	}
	return n;
}

/* approve [ID] SEQ|KEY: the creator takes unverified values into the
 * headline. */
static vulnid_status
cmd_approve(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	g_autoptr(GString) list = g_string_new(NULL);
	g_autofree char *n = g_strdup_printf("%" G_GINT64_FORMAT, cmd->seq);
	const char *why = need_creator(l, ri, cmd->target != NULL);
	const char *kv[] = { cmd->arg != NULL ? "Approve-Key" : "Approve", cmd->arg != NULL ? cmd->arg : n, NULL };
	g_autofree char *what = NULL;
	gint64 seq;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (cmd->arg == NULL && entry_record_by_seq(e, cmd->seq) == NULL) {
		g_autofree char *w = g_strdup_printf("refused: %s has no record %" G_GINT64_FORMAT, e->id, cmd->seq);

		return refuse(l, cmd, e->id, w, err);
	}
	if (approvable(f, cmd->seq, cmd->arg, list) == 0) {
		g_autofree char *w = cmd->arg != NULL
			? g_strdup_printf("refused: no record signed by %s holds an unverified value of %s", cmd->arg, e->id)
			: g_strdup_printf("refused: record %" G_GINT64_FORMAT " holds no unverified value of %s",
					  cmd->seq, e->id);

		return refuse(l, cmd, e->id, w, err);
	}
	s = lc_append_command_record(l, e, ri, kv, &seq, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("approved (record %" G_GINT64_FORMAT "): these values are now part of %s:%s",
			       seq, e->id, list->str);
	return done(l, cmd, e->id, what, err);
}

/* reviewed [ID] [PRODUCT VERSION]: a moderator's mark. */
static vulnid_status
cmd_reviewed(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	const char *why = need_moderator(l, ri, cmd->target != NULL);
	const char *kv[] = { "Reviewed", "yes", cmd->arg != NULL ? "Reviewed-Product" : NULL, cmd->arg,
			     "Reviewed-Version", cmd->arg2, NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	s = lc_append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	if (cmd->arg != NULL)
		what = g_strdup_printf("%s is marked as reviewed: it concerns %s %s", e->id, cmd->arg, cmd->arg2);
	else
		what = g_strdup_printf("%s is marked as reviewed", e->id);
	return done(l, cmd, e->id, what, err);
}

/* The commands that act on one entry: run once the entry is loaded and the
 * sender's role for it established (each checks the role it needs). */
static const struct {
	command_kind kind;
	vulnid_status (*run)(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err);
} entry_commands[] = {
	{ CMD_RELEASE, cmd_release },
	{ CMD_EMBARGO, cmd_embargo },
	{ CMD_WITHDRAW, cmd_withdraw },
	{ CMD_ALIAS, cmd_alias },
	{ CMD_RATE, cmd_rate },
	{ CMD_DUPLICATE_OF, cmd_duplicate_of },
	{ CMD_SPAM, cmd_spam },
	{ CMD_LINK, cmd_link },
	{ CMD_SUBSCRIBE, cmd_subscribe },
	{ CMD_UNSUBSCRIBE, cmd_subscribe },
	{ CMD_ENDORSE, cmd_endorse },
	{ CMD_UNENDORSE, cmd_endorse },
	{ CMD_APPROVE, cmd_approve },
	{ CMD_ACCESS, lc_cmd_access },
	{ CMD_GRANT, lc_cmd_grant },
	{ CMD_REVIEWED, cmd_reviewed },
};

vulnid_status
lc_run_command(lc_mail *l, const command *cmd, GError **err)
{
	g_autoptr(entry) e = NULL;
	const char *id;
	role_info ri;
	vulnid_status s;

	switch (cmd->kind) {
	case CMD_UNKNOWN:
		lc_out_result(l, cmd->line, "not understood: \"%s\" %s (the line is kept as text)", cmd->word,
			   cmd->error);
		return lc_audit_command(l, l->routed, cmd->word, "not-understood", cmd->error, err);
	case CMD_HELP:
		l->help = TRUE;
		lc_out_result(l, cmd->line, "done: the help text follows");
		return lc_audit_command(l, NULL, cmd->word, "done", NULL, err);
	case CMD_KEY:
		return cmd_key(l, cmd, err);
	case CMD_LOOKUP:
		return cmd_lookup(l, cmd, err);
	default:
		break;
	}
	id = cmd->target != NULL ? cmd->target : l->routed;
	if ((cmd->kind == CMD_ENDORSE || cmd->kind == CMD_UNENDORSE) && id == NULL)
		return cmd_endorse_all(l, cmd, err);
	s = command_entry(l, cmd, id, &e, err);
	if (s != VULNID_OK || e == NULL)
		return s;
	s = lc_role_for(l, e, &ri, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < G_N_ELEMENTS(entry_commands); i++)
		if (entry_commands[i].kind == cmd->kind)
			return entry_commands[i].run(l, cmd, e, &ri, err);
	return VULNID_OK;
}
