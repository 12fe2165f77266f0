/* lifecycle-roles.c - who the sender is for an entry: creator, vendor,
 * moderator or third party, and how that was established (key, token,
 * domain, contact, address); the entry's vendor and its addresses
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

/* ---- roles ------------------------------------------------------------------- */

/* A value of the entry's headline (what the request and verified roles
 * said; never an unverified proposal), or NULL. */
char *
lc_headline_value(const entry *e, const char *key)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const entry_claim *c = g_ascii_strcasecmp(key, "Vendor") == 0 ? f->vendor
			     : g_ascii_strcasecmp(key, "Vendor-Contact") == 0 ? f->vendor_contact : NULL;

	return c != NULL ? g_strdup(c->value) : NULL;
}

gboolean
lc_entry_is_anonymous(const entry *e)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);

	return f->anonymous;
}

/* The vendor's key and domains as far as the directory and the entry say. */
vulnid_status
lc_entry_vendor(store *st, const entry *e, char **key_fpr, GPtrArray **domains, GError **err)
{
	g_autofree char *vfield = lc_headline_value(e, "Vendor");
	g_autofree char *name = NULL;
	g_autofree char *dom = NULL;
	GPtrArray *d = g_ptr_array_new_with_free_func(g_free);

	*key_fpr = NULL;
	*domains = d;
	if (vfield == NULL)
		return VULNID_OK;
	vendor_field_split(vfield, &name, &dom);
	if (dom != NULL)
		g_ptr_array_add(d, g_strdup(dom));
	for (int pass = 0; pass < 2; pass++) {
		g_autoptr(vendor) v = NULL;
		g_autoptr(GError) e2 = NULL;
		vulnid_status s;

		if (pass == 0 && *name != '\0')
			s = vendor_find(st, name, &v, &e2);
		else if (pass == 1 && dom != NULL)
			s = vendor_find_by_domain(st, dom, &v, &e2);
		else
			continue;
		if (s == VULNID_ERR_NOTFOUND)
			continue;
		if (s != VULNID_OK) {
			g_propagate_error(err, g_steal_pointer(&e2));
			return s;
		}
		if (v->key_fpr != NULL && *v->key_fpr != '\0')
			*key_fpr = g_strdup(v->key_fpr);
		for (guint i = 0; i < v->domains->len; i++)
			g_ptr_array_add(d, g_strdup(g_ptr_array_index(v->domains, i)));
		break;
	}
	return VULNID_OK;
}

/* Addresses the vendor was notified at (the vendor tokens' rows) and those
 * of verified vendor responses: where the researcher's answers go. */
vulnid_status
lc_vendor_addresses(store *st, const entry *e, GPtrArray **out, GError **err)
{
	GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) rows = NULL;
	vulnid_status s;

	*out = a;
	s = store_lifecycle_vendor_token_addresses(st, e->id, &rows, err);
	if (s != VULNID_OK)
		return s;
	for (guint k = 0; k < rows->len; k++) {
		g_auto(GStrv) parts = g_strsplit(g_ptr_array_index(rows, k), ",", -1);

		for (char **p = parts; *p != NULL; p++) {
			char *x = g_strstrip(g_strdup(*p));
			gboolean dup = FALSE;

			for (guint i = 0; i < a->len; i++)
				dup |= lc_addr_equal(g_ptr_array_index(a, i), x);
			if (!dup && a->len < MAX_VENDOR_ADDRESSES && config_address_valid(x))
				g_ptr_array_add(a, x);
			else
				g_free(x);
		}
	}
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		gboolean dup = FALSE;

		if (r->kind != ENTRY_KIND_VENDOR_RESPONSE || !entry_how_verified(r->how) || r->author == NULL)
			continue;
		for (guint j = 0; j < a->len; j++)
			dup |= lc_addr_equal(g_ptr_array_index(a, j), r->author);
		if (!dup && a->len < MAX_VENDOR_ADDRESSES && config_address_valid(r->author))
			g_ptr_array_add(a, g_strdup(r->author));
	}
	return VULNID_OK;
}

/* An entry, its sealed records decrypted in memory when unseal is set:
 * who the vendor is, whether the researcher is anonymous and what the
 * records say are part of the sealed content.  It stays "embargoed". */
vulnid_status
lc_load_entry(store *st, const char *id, gboolean unseal, entry **out, GError **err)
{
	g_autoptr(entry) e = NULL;
	vulnid_status s = entry_load(st, id, &e, err);

	if (s != VULNID_OK)
		return s;
	if (unseal && entry_has_sealed(e)) {
		s = entry_unseal(e, err);
		if (s != VULNID_OK)
			return s;
	}
	*out = g_steal_pointer(&e);
	return VULNID_OK;
}

/* Who the sender is for entry e, and how that is known.  Authority comes
 * from a key or a token; an address only makes an unverified role, which
 * is recorded as such and allows nothing more than a third party. */
vulnid_status
lc_role_for(lc_mail *l, const entry *e, role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	const char *from = lc_sender_of(c);
	g_autofree char *vkey = NULL;
	g_autoptr(GPtrArray) vdomains = NULL;
	vulnid_status s;

	memset(ri, 0, sizeof *ri);
	s = lc_entry_vendor(c->st, e, &vkey, &vdomains, err);
	if (s != VULNID_OK)
		return s;
	if (c->signer != NULL) {
		const char *cfpr = first != NULL ? first->signer : NULL;
		gboolean moderator = lc_is_moderator(c->cfg, c->signer);
		gboolean creator_key = cfpr != NULL && lc_fpr_equal(cfpr, c->signer);
		gboolean vendor_key = vkey != NULL && lc_fpr_equal(vkey, c->signer);

		/* A signature counts only for the entry its signed text names:
		 * a captured signed mail sent to another entry must not act as
		 * its author there. */
		ri->creator_key_unbound = c->unbound != NULL && creator_key;
		ri->moderator_unbound = c->unbound != NULL && moderator;
		if (c->unbound == NULL) {
			ri->moderator = moderator;
			ri->creator_key = creator_key;
			ri->vendor_key = vendor_key;
		}
	}
	for (guint i = 0; i < l->tokens->len; i++) {
		const token_row *t = g_ptr_array_index(l->tokens, i);

		if (strcmp(t->entry, e->id) != 0)
			continue;
		if (strcmp(t->role, "creator") == 0)
			ri->creator_token = TRUE;
		else if (strcmp(t->role, "vendor") == 0)
			ri->vendor_token = TRUE;
	}
	if (first != NULL && lc_addr_equal(from, first->author))
		ri->creator_address = TRUE;
	if (c->signer != NULL && c->unbound == NULL && !ri->creator_key && !ri->vendor_key && !ri->moderator) {
		/* a key with no role of its own may be endorsed */
		s = lc_endorsement_of(l, e->id, c->signer, ri, err);
		if (s != VULNID_OK)
			return s;
	}
	if (!ri->vendor_key && !ri->vendor_token && from != NULL) {
		g_autoptr(GPtrArray) notified = NULL;

		for (guint i = 0; i < vdomains->len; i++)
			ri->vendor_domain |= lc_domain_within(lc_addr_domain(from), g_ptr_array_index(vdomains, i));
		s = lc_vendor_addresses(c->st, e, &notified, err);
		if (s != VULNID_OK)
			return s;
		for (guint i = 0; i < notified->len; i++)
			ri->vendor_contact |= lc_addr_equal(from, g_ptr_array_index(notified, i));
	}
	/* Verified roles first, then unverified ones. */
	if (ri->creator_key || ri->creator_token) {
		ri->role = "creator";
		ri->how = ri->creator_key ? "key" : "token";
	} else if (ri->vendor_key || ri->vendor_token) {
		ri->role = "vendor";
		ri->how = ri->vendor_key ? "key" : "token";
	} else if (ri->moderator) {
		ri->role = "moderator";
		ri->how = "key";
	} else if (ri->contributor) {
		ri->role = "contributor";
		ri->how = "key";
	} else if (ri->creator_address) {
		ri->role = "creator";
		ri->how = "address";
	} else if (ri->vendor_contact || ri->vendor_domain) {
		ri->role = "vendor";
		ri->how = ri->vendor_contact ? "contact" : "domain";
	} else {
		ri->role = "third-party";
		ri->how = "none";
	}
	if (c->from_verified != NULL && strcmp(ri->how, "address") == 0)
		ri->how = "address-dmarc";	/* authres.h: stronger, still no key or token */
	return VULNID_OK;
}

gboolean
lc_creator_verified(const role_info *ri)
{
	return ri->creator_key || ri->creator_token;
}

gboolean
lc_signed_by_researcher(const role_info *ri)
{
	return ri->creator_key || ri->creator_key_unbound;
}

/* Who an anonymous researcher must never be seen as: the request's sender
 * and her key and, when she writes now (as the creator, or signed by her
 * key from anywhere), this mail's addresses and name. */
researcher_identity *
lc_researcher_of(const lc_mail *l, const entry *e, const role_info *ri)
{
	researcher_identity *id = researcher_identity_new();
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;

	if (first != NULL) {
		researcher_identity_add_address(id, first->author);
		researcher_identity_add_name(id, first->author_name);
		if (first->signed_by_key)
			researcher_identity_add_key(id, first->signer);
	}
	if (ri != NULL && (strcmp(ri->role, "creator") == 0 || lc_signed_by_researcher(ri))) {
		researcher_identity_add_address(id, l->c->m->from_addr);
		researcher_identity_add_address(id, l->c->m->reply_addr);
		researcher_identity_add_address(id, l->c->envelope_sender);
		researcher_identity_add_name(id, l->c->m->from_name);
	}
	return id;
}
