/* lifecycle-trust.c - endorsed contributors: a key without a role of its
 * own whose additions count because the creator of the entry, or a
 * moderator for every entry, endorsed it, by the command endorse or by
 * certifying the key (a certification gpg checks, found on the key sent
 * along with a signed mail)
 *
 * What the endorsements are is kept in the table endorsements (the latest
 * row of a key and a scope decides): an O(log n) look-up per signed mail.
 * Part of the lifecycle (lifecycle.h); the files share
 * lifecycle-internal.h and run inside the intake transaction. */

#include "autoconfig.h"

#include <string.h>

#include "audit.h"
#include "crypto.h"
#include "entry.h"
#include "lifecycle.h"
#include "store-lifecycle.h"
#include "lifecycle-internal.h"

/* The endorsement of key fpr for entry_id: the creator's (or a
 * moderator's) for that entry first, else a moderator's for every entry;
 * the latest word in each scope counts. */
vulnid_status
lc_endorsement_of(lc_mail *l, const char *entry_id, const char *key, role_info *ri, GError **err)
{
	g_autofree char *fpr = g_ascii_strup(key, -1);

	for (int scope = 0; scope < 2; scope++) {
		store_endorsement en = { 0 };
		gboolean found = FALSE;
		vulnid_status s = store_lifecycle_endorsement_latest(l->c->st, fpr, scope == 0 ? entry_id : NULL,
								     &en, &found, err);

		if (s != VULNID_OK)
			return s;
		if (found && strcmp(en.action, "endorse") == 0) {
			ri->contributor = TRUE;
			g_strlcpy(ri->endorsed_by, en.endorser, sizeof ri->endorsed_by);
			ri->endorsement = strcmp(en.how, "certification") == 0 ? "certification" : "command";
			g_strlcpy(ri->endorsed_fields, en.fields != NULL ? en.fields : "", sizeof ri->endorsed_fields);
		}
		store_endorsement_clear(&en);
		if (found)
			break;	/* the entry's own word stands, whatever it is */
	}
	return VULNID_OK;
}

vulnid_status
lc_endorsement_store(lc_mail *l, const char *entry_id, const char *fpr, const char *endorser, const char *how,
		     const char *action, const char *fields, GError **err)
{
	mail_ctx *c = l->c;
	g_autofree char *key = g_ascii_strup(fpr, -1);
	g_autoptr(audit_event) ev = audit_event_new(strcmp(action, "endorse") == 0 ? "endorsed" : "unendorsed",
						    entry_id, c->m->message_id);
	store_endorsement en = { 0 };
	vulnid_status s;

	en.created = c->now;
	en.message = c->msg_row;
	en.entry = (char *) entry_id;
	en.fingerprint = key;
	en.endorser = (char *) endorser;
	en.how = (char *) how;
	en.action = (char *) action;
	en.fields = fields != NULL && *fields != '\0' ? (char *) fields : NULL;
	s = store_lifecycle_endorsement_insert(c->st, &en, err);
	if (s != VULNID_OK)
		return s;
	audit_event_str(ev, "fingerprint", key);
	audit_event_str(ev, "by", endorser);
	audit_event_str(ev, "how", how);
	audit_event_str(ev, "scope", entry_id != NULL ? "entry" : "all");
	if (fields != NULL && *fields != '\0')
		audit_event_str(ev, "fields", fields);
	return audit_append(c->st, ev, err);
}

/* The keys whose certification endorses a newcomer on e: the creator's
 * (when the request was signed) and the moderators'. */
static GPtrArray *
certifiers_of(const lc_mail *l, const entry *e)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	g_autofree char *mods = config_key_string(l->c->cfg, "lifecycle", "moderators");
	g_auto(GStrv) parts = g_strsplit_set(mods != NULL ? mods : "", ",;", -1);

	if (first != NULL && first->signed_by_key && first->how == ENTRY_HOW_KEY && first->signer != NULL)
		g_ptr_array_add(out, g_ascii_strup(first->signer, -1));
	for (char **p = parts; *p != NULL; p++) {
		GString *clean = g_string_new(NULL);

		for (const char *q = *p; *q; q++)
			if (!g_ascii_isspace(*q))
				g_string_append_c(clean, g_ascii_toupper(*q));
		if (clean->len > 0)
			g_ptr_array_add(out, g_string_free(clean, FALSE));
		else
			g_string_free(clean, TRUE);
	}
	g_ptr_array_add(out, NULL);
	return out;
}

/* A signed mail to entry e whose key has no role there and is not
 * endorsed, with the signer's key attached: a certification of that key
 * by the creator's key endorses it for e, by a moderator's key for every
 * entry.  Recorded once; the certification then need not come again. */
vulnid_status
lc_endorse_by_certification(lc_mail *l, const entry *e, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GPtrArray) candidates = NULL;
	g_autoptr(GError) e2 = NULL;
	g_autofree char *by = NULL;
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	role_info ri;
	gboolean creator;
	vulnid_status s;

	if (c->signer == NULL || c->unbound != NULL || c->m->pgp_keys == NULL || crypto_home() == NULL)
		return VULNID_OK;
	s = lc_role_for(l, e, &ri, err);
	if (s != VULNID_OK || ri.contributor || ri.creator_key || ri.vendor_key || ri.moderator)
		return s;
	candidates = certifiers_of(l, e);
	if (candidates->len <= 1)
		return VULNID_OK;
	/* gpg failing here is no reason to lose the mail: it is recorded as
	 * a third party's, and the key may come again */
	if (crypto_certified_by(c->m->pgp_keys, c->signer, (const char *const *) candidates->pdata,
				c->cfg->openpgp_time_limit * 1000, &by, &e2) != VULNID_OK || by == NULL)
		return VULNID_OK;
	creator = first != NULL && first->signer != NULL && entry_fpr_equal(first->signer, by);
	s = lc_endorsement_store(l, creator ? e->id : NULL, c->signer, creator ? "creator" : by, "certification",
				 "endorse", NULL, err);
	if (s != VULNID_OK)
		return s;
	g_string_append_printf(l->out, "Your key %s carries a certification by %s:\n"
			       "your signed mail counts as an endorsed contributor's %s.\n\n", c->signer,
			       creator ? "the key of the entry's creator" : "a moderator's key",
			       creator ? "for this entry" : "for every entry");
	return VULNID_OK;
}
