/* vendor.c - the vendors directory and RFC 9116 security.txt
 *
 * The directory is the operator's: who is told about a new entry comes
 * from it first, and every change to it is an audit event in the same
 * transaction as the change.  Values that end up as mail recipients are
 * checked twice, by hand and by GMime, so that what is stored is exactly
 * one plain addr-spec and never a list, a group or a display name. */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "audit.h"
#include "store-vendor.h"
#include "text.h"
#include "vendor.h"

#define VENDOR_NAME_MAX 200	/* characters */
#define VENDOR_NOTES_MAX 4000	/* characters */
#define VENDOR_SOURCE_MAX 64	/* characters */
#define VENDOR_VALUE_MAX 1000	/* characters of a security.txt value kept */
#define DOMAIN_MAX 253
#define LABEL_MAX 63
#define ADDRESS_MAX 254

#define SECURITYTXT_MAX_BYTES (64 * 1024)
#define SECURITYTXT_MAX_LINES 1000
#define SECURITYTXT_MAX_WARNINGS 50

/* ---- validation --------------------------------------------------------- */

/* A host name that mail can go to: lower case LDH labels, at least two of
 * them, none empty, none starting or ending with a dash, and a last label
 * that is not all digits (an IPv4 address is not a vendor's domain). */
static gboolean
domain_plausible(const char *d)
{
	gsize n = strlen(d), label = 0;
	gboolean dot = FALSE, all_digits = TRUE;

	if (n == 0 || n > DOMAIN_MAX)
		return FALSE;
	for (gsize i = 0; i < n; i++) {
		char c = d[i];

		if (c == '.') {
			if (label == 0 || d[i - 1] == '-')
				return FALSE;
			dot = TRUE;
			label = 0;
			all_digits = TRUE;
			continue;
		}
		if (!(g_ascii_islower(c) || g_ascii_isdigit(c) || c == '-'))
			return FALSE;
		if (c == '-' && label == 0)
			return FALSE;
		if (!g_ascii_isdigit(c))
			all_digits = FALSE;
		if (++label > LABEL_MAX)
			return FALSE;
	}
	return dot && label > 0 && d[n - 1] != '-' && !all_digits;
}

/* Trimmed and lower-cased domain, or NULL when it is not plausible. */
static char *
domain_normalize(const char *s)
{
	g_autofree char *d = NULL;

	if (s == NULL)
		return NULL;
	d = g_ascii_strdown(s, -1);
	g_strstrip(d);
	if (!domain_plausible(d))
		return NULL;
	return g_steal_pointer(&d);
}

/* The address if s (trimmed) is exactly one plain addr-spec, else NULL.
 * The hand checks keep out what GMime would accept and rewrite (comments,
 * display names, lists); GMime's parse keeps out what the hand checks miss
 * (bad dots, bad quoting); requiring GMime's result to equal the input
 * means the two agree on what the address is. */
static char *
address_normalize(const char *s)
{
	g_autofree char *a = NULL;
	InternetAddressList *l;
	const char *at, *dom;
	gboolean ok = FALSE;

	if (s == NULL)
		return NULL;
	a = g_strstrip(g_strdup(s));
	if (*a == '\0' || strlen(a) > ADDRESS_MAX || !g_utf8_validate(a, -1, NULL))
		return NULL;
	for (const char *p = a; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (c <= 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || g_unichar_isspace(c) ||
		    g_unichar_iscntrl(c) || c == '<' || c == '>' || c == 0x2028 || c == 0x2029)
			return NULL;
	}
	at = strchr(a, '@');
	if (at == NULL || at == a || strchr(at + 1, '@') != NULL)
		return NULL;
	dom = at + 1;
	if (*dom == '\0' || *dom == '.' || strchr(dom, '.') == NULL || g_str_has_suffix(dom, "."))
		return NULL;
	l = internet_address_list_parse(NULL, a);
	if (l != NULL && internet_address_list_length(l) == 1) {
		InternetAddress *ia = internet_address_list_get_address(l, 0);

		if (INTERNET_ADDRESS_IS_MAILBOX(ia)) {
			const char *got = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(ia));
			const char *name = internet_address_get_name(ia);

			ok = got != NULL && strcmp(got, a) == 0 && (name == NULL || *name == '\0');
		}
	}
	if (l != NULL)
		g_object_unref(l);
	return ok ? g_steal_pointer(&a) : NULL;
}

/* A name or alias: one line, not empty once cleaned, at most 200
 * characters.  Too long is an error rather than a silent cut, so that the
 * operator knows what is stored. */
static vulnid_status
clean_name(const char *what, const char *s, char **out, GError **err)
{
	g_autofree char *c = NULL;

	if (s == NULL || strpbrk(s, "\r\n") != NULL)
		return vulnid_fail(err, VULNID_ERR_INVALID, "%s must be one line", what);
	c = text_clean_line(s, 0);
	if (*c == '\0')
		return vulnid_fail(err, VULNID_ERR_INVALID, "%s is empty", what);
	if (g_utf8_strlen(c, -1) > VENDOR_NAME_MAX)
		return vulnid_fail(err, VULNID_ERR_INVALID, "%s is longer than %d characters",
				   what, VENDOR_NAME_MAX);
	*out = g_steal_pointer(&c);
	return VULNID_OK;
}

/* An optional one-line value: NULL or empty gives NULL. */
static vulnid_status
clean_value(const char *what, const char *s, gsize max, char **out, GError **err)
{
	g_autofree char *c = NULL;

	*out = NULL;
	if (s == NULL)
		return VULNID_OK;
	c = text_clean_line(s, 0);
	if (g_utf8_strlen(c, -1) > (glong) max)
		return vulnid_fail(err, VULNID_ERR_INVALID, "%s is longer than %zu characters",
				   what, max);
	if (*c != '\0')
		*out = g_steal_pointer(&c);
	return VULNID_OK;
}

/* Append s (taken) unless an address equal but for ASCII case is there. */
static void
add_unique(GPtrArray *a, char *s)
{
	for (guint i = 0; i < a->len; i++)
		if (g_ascii_strcasecmp(g_ptr_array_index(a, i), s) == 0) {
			g_free(s);
			return;
		}
	g_ptr_array_add(a, s);
}

/* ---- rows --------------------------------------------------------------- */

void
vendor_free(vendor *v)
{
	if (v == NULL)
		return;
	g_free(v->name);
	g_free(v->notes);
	g_free(v->key_fpr);
	g_free(v->encryption);
	g_free(v->languages);
	g_free(v->expires);
	g_free(v->created);
	g_free(v->updated);
	if (v->aliases != NULL)
		g_ptr_array_unref(v->aliases);
	if (v->domains != NULL)
		g_ptr_array_unref(v->domains);
	if (v->contacts != NULL)
		g_ptr_array_unref(v->contacts);
	g_free(v);
}

static vulnid_status
vendor_load(store *st, gint64 id, vendor **out, GError **err)
{
	g_autoptr(vendor) v = g_new0(vendor, 1);
	gboolean found;
	vulnid_status s = store_vendor_get(st, id, v, &found, err);

	if (s != VULNID_OK)
		return s;
	if (!found)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no vendor with id %" G_GINT64_FORMAT, id);
	v->aliases = g_ptr_array_new_with_free_func(g_free);
	v->domains = g_ptr_array_new_with_free_func(g_free);
	v->contacts = g_ptr_array_new_with_free_func(g_free);
	s = store_vendor_aliases(st, id, v->aliases, err);
	if (s == VULNID_OK)
		s = store_vendor_domains(st, id, v->domains, err);
	/* Contacts in the order they were added: the first is the one the
	 * operator (or the security.txt) named first. */
	if (s == VULNID_OK)
		s = store_vendor_contacts(st, id, v->contacts, err);
	if (s != VULNID_OK)
		return s;
	*out = g_steal_pointer(&v);
	return VULNID_OK;
}

/* Id of the vendor whose name or alias is name (the columns are COLLATE
 * NOCASE), or 0. */
static vulnid_status
find_id(store *st, const char *name, gint64 *id, GError **err)
{
	return store_vendor_find(st, name, id, err);
}

static vulnid_status
vendor_name_of(store *st, gint64 id, char **name, GError **err)
{
	vulnid_status s = store_vendor_name(st, id, name, err);

	if (s == VULNID_OK && *name == NULL)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no vendor with id %" G_GINT64_FORMAT, id);
	return s;
}

vulnid_status
vendor_find(store *st, const char *name, vendor **out, GError **err)
{
	g_autofree char *clean = text_clean_line(name, 0);
	gint64 id = 0;
	vulnid_status s;

	if (*clean == '\0')
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no vendor name given");
	s = find_id(st, clean, &id, err);
	if (s != VULNID_OK)
		return s;
	if (id == 0)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no vendor '%s'", clean);
	return vendor_load(st, id, out, err);
}

vulnid_status
vendor_find_by_domain(store *st, const char *domain, vendor **out, GError **err)
{
	g_autofree char *d = g_strstrip(g_ascii_strdown(domain != NULL ? domain : "", -1));
	gint64 id = 0;
	vulnid_status s = store_vendor_find_by_domain(st, d, &id, err);

	if (s != VULNID_OK)
		return s;
	if (id == 0) {
		g_autofree char *shown = text_clean_line(d, 100);

		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no vendor has the domain '%s'", shown);
	}
	return vendor_load(st, id, out, err);
}

vulnid_status
vendor_list(store *st, GPtrArray **out, GError **err)
{
	g_autoptr(GArray) ids = NULL;
	g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func((GDestroyNotify) vendor_free);
	vulnid_status s = store_vendor_ids(st, &ids, err);

	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < ids->len; i++) {
		vendor *v = NULL;

		s = vendor_load(st, g_array_index(ids, gint64, i), &v, err);
		if (s != VULNID_OK)
			return s;
		g_ptr_array_add(list, v);
	}
	*out = g_steal_pointer(&list);
	return VULNID_OK;
}

/* ---- changes ------------------------------------------------------------ */

/* The audit event must commit or roll back with the change it describes,
 * so a change outside a transaction is a caller's bug. */
static vulnid_status
need_txn(store *st, GError **err)
{
	if (!store_vendor_in_transaction(st))
		return vulnid_fail(err, VULNID_ERR_INTERNAL,
				   "vendor changes must run inside a transaction");
	return VULNID_OK;
}

static vulnid_status
touch(store *st, gint64 id, const char *now, GError **err)
{
	return store_vendor_touch(st, id, now, err);
}

/* One audit event: vendor=NAME plus up to two more string members. */
static vulnid_status
audit_vendor(store *st, const char *event, const char *name, const char *k1, const char *v1,
	     const char *k2, const char *v2, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new(event, NULL, NULL);

	audit_event_str(ev, "vendor", name);
	if (k1 != NULL)
		audit_event_str(ev, k1, v1);
	if (k2 != NULL)
		audit_event_str(ev, k2, v2);
	return audit_append(st, ev, err);
}

vulnid_status
vendor_add(store *st, const char *name, const char *notes, gint64 *id, GError **err)
{
	g_autofree char *clean = NULL;
	g_autofree char *note = NULL;
	g_autofree char *now = store_now();
	gint64 other = 0;
	vulnid_status s;

	if ((s = need_txn(st, err)) != VULNID_OK ||
	    (s = clean_name("vendor name", name, &clean, err)) != VULNID_OK)
		return s;
	/* Notes are the operator's free text: line breaks stay, but they
	 * must be text and bounded. */
	if (notes != NULL) {
		note = g_utf8_make_valid(notes, -1);
		g_strstrip(note);
		if (g_utf8_strlen(note, -1) > VENDOR_NOTES_MAX)
			return vulnid_fail(err, VULNID_ERR_INVALID, "notes are longer than %d characters",
					   VENDOR_NOTES_MAX);
		if (*note == '\0')
			g_clear_pointer(&note, g_free);
	}
	s = find_id(st, clean, &other, err);
	if (s != VULNID_OK)
		return s;
	if (other != 0) {
		g_autofree char *oname = NULL;

		s = vendor_name_of(st, other, &oname, err);
		if (s != VULNID_OK)
			return s;
		return vulnid_fail(err, VULNID_ERR_EXISTS,
				   "'%s' is already the name or an alias of '%s'", clean, oname);
	}
	s = store_vendor_insert(st, clean, note, now, id, err);
	if (s != VULNID_OK)
		return s;
	return audit_vendor(st, "vendor-added", clean, NULL, NULL, NULL, NULL, err);
}

vulnid_status
vendor_add_alias(store *st, gint64 vendor_id, const char *alias, GError **err)
{
	g_autofree char *clean = NULL;
	g_autofree char *vname = NULL;
	g_autofree char *now = store_now();
	gint64 other = 0;
	vulnid_status s;

	if ((s = need_txn(st, err)) != VULNID_OK ||
	    (s = clean_name("alias", alias, &clean, err)) != VULNID_OK ||
	    (s = vendor_name_of(st, vendor_id, &vname, err)) != VULNID_OK ||
	    (s = find_id(st, clean, &other, err)) != VULNID_OK)
		return s;
	if (other == vendor_id)
		return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' is already the name or an alias of '%s'",
				   clean, vname);
	if (other != 0) {
		g_autofree char *oname = NULL;

		s = vendor_name_of(st, other, &oname, err);
		if (s != VULNID_OK)
			return s;
		return vulnid_fail(err, VULNID_ERR_EXISTS,
				   "'%s' is already the name or an alias of '%s'", clean, oname);
	}
	if ((s = store_vendor_alias_insert(st, vendor_id, clean, err)) != VULNID_OK ||
	    (s = touch(st, vendor_id, now, err)) != VULNID_OK)
		return s;
	return audit_vendor(st, "vendor-alias", vname, "alias", clean, NULL, NULL, err);
}

vulnid_status
vendor_add_domain(store *st, gint64 vendor_id, const char *domain, GError **err)
{
	g_autofree char *d = domain_normalize(domain);
	g_autofree char *vname = NULL;
	g_autofree char *now = store_now();
	gint64 owner = 0;
	vulnid_status s;

	if ((s = need_txn(st, err)) != VULNID_OK)
		return s;
	if (d == NULL) {
		g_autofree char *shown = text_clean_line(domain, 100);

		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a domain name", shown);
	}
	if ((s = vendor_name_of(st, vendor_id, &vname, err)) != VULNID_OK)
		return s;
	if ((s = store_vendor_find_by_domain(st, d, &owner, err)) != VULNID_OK)
		return s;
	if (owner != 0) {
		g_autofree char *oname = NULL;

		s = vendor_name_of(st, owner, &oname, err);
		if (s != VULNID_OK)
			return s;
		return vulnid_fail(err, VULNID_ERR_EXISTS, "the domain '%s' belongs to '%s'", d, oname);
	}
	if ((s = store_vendor_domain_insert(st, vendor_id, d, err)) != VULNID_OK ||
	    (s = touch(st, vendor_id, now, err)) != VULNID_OK)
		return s;
	return audit_vendor(st, "vendor-domain", vname, "domain", d, NULL, NULL, err);
}

/* The stored form of address among vendor_id's contacts (the column is
 * COLLATE NOCASE), or NULL. */
static vulnid_status
contact_lookup(store *st, gint64 vendor_id, const char *address, char **stored, GError **err)
{
	return store_vendor_contact_find(st, vendor_id, address, stored, err);
}

vulnid_status
vendor_add_contact(store *st, gint64 vendor_id, const char *address, const char *source,
		   GError **err)
{
	g_autofree char *a = address_normalize(address);
	g_autofree char *src = NULL;
	g_autofree char *vname = NULL;
	g_autofree char *have = NULL;
	g_autofree char *now = store_now();
	vulnid_status s;

	if ((s = need_txn(st, err)) != VULNID_OK)
		return s;
	if (a == NULL) {
		g_autofree char *shown = text_clean_line(address, 100);

		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not one mail address", shown);
	}
	if ((s = clean_value("contact source", source != NULL ? source : "operator",
			     VENDOR_SOURCE_MAX, &src, err)) != VULNID_OK)
		return s;
	if (src == NULL)
		return vulnid_fail(err, VULNID_ERR_INVALID, "contact source is empty");
	if ((s = vendor_name_of(st, vendor_id, &vname, err)) != VULNID_OK ||
	    (s = contact_lookup(st, vendor_id, a, &have, err)) != VULNID_OK)
		return s;
	if (have != NULL)
		return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' is already a contact of '%s'", have, vname);
	if ((s = store_vendor_contact_insert(st, vendor_id, a, src, now, err)) != VULNID_OK ||
	    (s = touch(st, vendor_id, now, err)) != VULNID_OK)
		return s;
	return audit_vendor(st, "vendor-contact-added", vname, "address", a, "source", src, err);
}

vulnid_status
vendor_remove_contact(store *st, gint64 vendor_id, const char *address, GError **err)
{
	g_autofree char *a = g_strstrip(g_strdup(address != NULL ? address : ""));
	g_autofree char *vname = NULL;
	g_autofree char *have = NULL;
	g_autofree char *now = store_now();
	vulnid_status s;

	if ((s = need_txn(st, err)) != VULNID_OK ||
	    (s = vendor_name_of(st, vendor_id, &vname, err)) != VULNID_OK ||
	    (s = contact_lookup(st, vendor_id, a, &have, err)) != VULNID_OK)
		return s;
	if (have == NULL) {
		g_autofree char *shown = text_clean_line(a, 100);

		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "'%s' is not a contact of '%s'", shown, vname);
	}
	if ((s = store_vendor_contact_delete(st, vendor_id, have, err)) != VULNID_OK ||
	    (s = touch(st, vendor_id, now, err)) != VULNID_OK)
		return s;
	return audit_vendor(st, "vendor-contact-removed", vname, "address", have, NULL, NULL, err);
}

/* Records what the vendor's security.txt says: all three values are set,
 * and NULL clears one, because the newest file is the authority. */
vulnid_status
vendor_set_securitytxt(store *st, gint64 vendor_id, const char *encryption,
		       const char *languages, const char *expires, GError **err)
{
	g_autofree char *enc = NULL;
	g_autofree char *lang = NULL;
	g_autofree char *exp = NULL;
	g_autofree char *vname = NULL;
	g_autofree char *now = store_now();
	g_autoptr(audit_event) ev = NULL;
	vulnid_status s;

	if ((s = need_txn(st, err)) != VULNID_OK ||
	    (s = clean_value("encryption", encryption, VENDOR_VALUE_MAX, &enc, err)) != VULNID_OK ||
	    (s = clean_value("languages", languages, VENDOR_VALUE_MAX, &lang, err)) != VULNID_OK ||
	    (s = clean_value("expires", expires, VENDOR_VALUE_MAX, &exp, err)) != VULNID_OK ||
	    (s = vendor_name_of(st, vendor_id, &vname, err)) != VULNID_OK)
		return s;
	if ((s = store_vendor_set_securitytxt(st, vendor_id, enc, lang, exp, now, err)) != VULNID_OK)
		return s;
	ev = audit_event_new("vendor-updated", NULL, NULL);
	audit_event_str(ev, "vendor", vname);
	audit_event_str(ev, "encryption", enc);
	audit_event_str(ev, "languages", lang);
	audit_event_str(ev, "expires", exp);
	return audit_append(st, ev, err);
}

vulnid_status
vendor_set_key(store *st, gint64 vendor_id, const char *fpr, GError **err)
{
	g_autofree char *vname = NULL;
	g_autofree char *now = store_now();
	g_autoptr(audit_event) ev = NULL;
	vulnid_status s;

	if ((s = need_txn(st, err)) != VULNID_OK ||
	    (s = vendor_name_of(st, vendor_id, &vname, err)) != VULNID_OK)
		return s;
	if ((s = store_vendor_set_key(st, vendor_id, fpr, now, err)) != VULNID_OK)
		return s;
	ev = audit_event_new("vendor-key", NULL, NULL);
	audit_event_str(ev, "vendor", vname);
	audit_event_str(ev, "fingerprint", fpr);
	return audit_append(st, ev, err);
}

/* ---- the Vendor field and who is told ------------------------------------ */

void
vendor_field_split(const char *value, char **name, char **domain)
{
	g_autofree char *v = g_strstrip(g_strdup(value != NULL ? value : ""));
	g_autofree char *d = NULL;
	g_autofree char *n = NULL;
	gsize len = strlen(v);

	if (len > 0 && v[len - 1] == '>') {
		char *lt = strrchr(v, '<');

		if (lt != NULL) {
			g_autofree char *inner = g_strndup(lt + 1, (gsize) (v + len - 1 - (lt + 1)));

			d = domain_normalize(inner);
			if (d != NULL) {
				g_autofree char *before = g_strndup(v, (gsize) (lt - v));

				n = text_clean_line(before, 0);
			}
		}
	}
	/* A bracket that holds no domain is part of the name: "<a@b.c>" or
	 * "<localhost>" name nobody we could write to. */
	if (d == NULL)
		n = text_clean_line(v, 0);
	if (name != NULL)
		*name = g_steal_pointer(&n);
	if (domain != NULL)
		*domain = g_steal_pointer(&d);
}

/* Directory contacts of v into out; TRUE when there were any. */
static gboolean
take_contacts(const vendor *v, GPtrArray *out)
{
	for (guint i = 0; i < v->contacts->len; i++)
		add_unique(out, g_strdup(g_ptr_array_index(v->contacts, i)));
	return out->len > 0;
}

/* The one addr-spec of a Vendor-Contact value ("Name <addr>" is fine
 * there, as the request format allows it), or NULL. */
static char *
vendor_contact_address(const char *value)
{
	InternetAddressList *l;
	char *a = NULL;

	if (value == NULL || strpbrk(value, "\r\n") != NULL)
		return NULL;
	l = internet_address_list_parse(NULL, value);
	if (l != NULL && internet_address_list_length(l) == 1) {
		InternetAddress *ia = internet_address_list_get_address(l, 0);

		if (INTERNET_ADDRESS_IS_MAILBOX(ia))
			a = address_normalize(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(ia)));
	}
	if (l != NULL)
		g_object_unref(l);
	return a;
}

vulnid_status
vendor_contacts_for(store *st, const char *vendor_field, const char *vendor_contact_field,
		    GPtrArray **addresses, const char **how, GError **err)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *name = NULL;
	g_autofree char *domain = NULL;
	g_autofree char *vc = NULL;
	vulnid_status s;

	vendor_field_split(vendor_field, &name, &domain);

	/* 1: the directory, by name or alias, then by the domain given. */
	for (int pass = 0; pass < 2; pass++) {
		g_autoptr(vendor) v = NULL;
		g_autoptr(GError) e = NULL;

		if (pass == 0 && *name != '\0')
			s = vendor_find(st, name, &v, &e);
		else if (pass == 1 && domain != NULL)
			s = vendor_find_by_domain(st, domain, &v, &e);
		else
			continue;
		if (s == VULNID_ERR_NOTFOUND)
			continue;
		if (s != VULNID_OK) {
			g_propagate_error(err, g_steal_pointer(&e));
			return s;
		}
		if (take_contacts(v, out)) {
			*how = "directory";
			goto done;
		}
	}

	/* 2: what the requester says; request.c has already told them if it
	 * is not one address, so an unusable value just falls through. */
	vc = vendor_contact_address(vendor_contact_field);
	if (vc != NULL) {
		add_unique(out, g_steal_pointer(&vc));
		*how = "vendor-contact";
		goto done;
	}

	/* 3: RFC 2142's mailbox at a domain the requester named explicitly,
	 * in <...>; never one derived from a name. */
	if (domain != NULL) {
		g_autofree char *a = g_strconcat("security@", domain, NULL);
		char *ok = address_normalize(a);

		if (ok != NULL) {
			add_unique(out, ok);
			*how = "security-at-domain";
			goto done;
		}
	}
	*how = "none";
done:
	*addresses = g_steal_pointer(&out);
	return VULNID_OK;
}

/* ---- RFC 9116 security.txt ---------------------------------------------- */

void
securitytxt_free(securitytxt *s)
{
	if (s == NULL)
		return;
	g_ptr_array_unref(s->contacts);
	g_ptr_array_unref(s->other_contacts);
	g_ptr_array_unref(s->encryption);
	g_ptr_array_unref(s->languages);
	g_ptr_array_unref(s->warnings);
	g_free(s->expires);
	g_free(s);
}

static void securitytxt_warn(securitytxt *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* A hostile file could carry a warning per line; a handful says enough. */
static void
securitytxt_warn(securitytxt *s, const char *fmt, ...)
{
	va_list ap;

	if (s->warnings->len > SECURITYTXT_MAX_WARNINGS)
		return;
	if (s->warnings->len == SECURITYTXT_MAX_WARNINGS) {
		g_ptr_array_add(s->warnings, g_strdup("more warnings not shown"));
		return;
	}
	va_start(ap, fmt);
	g_ptr_array_add(s->warnings, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

/* RFC 3339 section 5.6 date-time, checked by shape before GLib parses
 * it, because g_date_time_new_from_iso8601() also takes ISO 8601 forms
 * (week dates, no offset) that RFC 9116 does not allow. */
static GDateTime *
parse_rfc3339(const char *v)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	g_autofree char *up = NULL;
	gsize n = strlen(v), i;
	const char *p;

	if (n < sizeof shape)	/* the shape plus at least "Z" */
		return NULL;
	for (i = 0; i < sizeof shape - 1; i++) {
		char c = v[i];

		if (shape[i] == 'd' ? !g_ascii_isdigit(c) :
		    shape[i] == 'T' ? (c != 'T' && c != 't') : c != shape[i])
			return NULL;
	}
	p = v + i;
	if (*p == '.') {
		if (!g_ascii_isdigit(p[1]))
			return NULL;
		for (p++; g_ascii_isdigit(*p); p++)
			;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if ((*p == '+' || *p == '-') && g_ascii_isdigit(p[1]) && g_ascii_isdigit(p[2]) &&
		 p[3] == ':' && g_ascii_isdigit(p[4]) && g_ascii_isdigit(p[5]))
		p += 6;
	else
		return NULL;
	if (*p != '\0')
		return NULL;
	up = g_ascii_strup(v, -1);
	return g_date_time_new_from_iso8601(up, NULL);
}

/* RFC 3986 scheme followed by ':'. */
static gboolean
has_uri_scheme(const char *v)
{
	const char *p = v;

	if (!g_ascii_isalpha(*p))
		return FALSE;
	while (g_ascii_isalnum(*p) || *p == '+' || *p == '-' || *p == '.')
		p++;
	return *p == ':';
}

static void
securitytxt_contact(securitytxt *s, guint lineno, const char *value)
{
	g_autofree char *shown = text_clean_line(value, 100);

	if (g_ascii_strncasecmp(value, "mailto:", 7) == 0) {
		const char *a = value + 7;
		const char *q = strchr(a, '?');
		g_autofree char *raw = g_strndup(a, q != NULL ? (gsize) (q - a) : strlen(a));
		/* NULL for a bad %-escape or an escaped NUL. */
		g_autofree char *decoded = g_uri_unescape_string(raw, NULL);
		char *addr = address_normalize(decoded);

		if (addr != NULL)
			add_unique(s->contacts, addr);
		else
			securitytxt_warn(s, "line %u: Contact '%s' is not one mail address", lineno, shown);
	} else if (has_uri_scheme(value)) {
		char *uri = text_clean_line(value, VENDOR_VALUE_MAX);

		/* URIs compare exactly: an https path is case-sensitive. */
		for (guint i = 0; uri != NULL && i < s->other_contacts->len; i++)
			if (strcmp(g_ptr_array_index(s->other_contacts, i), uri) == 0)
				g_clear_pointer(&uri, g_free);
		if (uri != NULL)
			g_ptr_array_add(s->other_contacts, uri);
	} else {
		/* RFC 9116 wants a URI, but a bare address is a common slip
		 * whose meaning is not in doubt. */
		char *addr = address_normalize(value);

		if (addr != NULL) {
			add_unique(s->contacts, addr);
			securitytxt_warn(s, "line %u: Contact '%s' is not a URI; read as mailto:",
					 lineno, shown);
		} else
			securitytxt_warn(s, "line %u: Contact '%s' is not a URI", lineno, shown);
	}
}

/* Length of a field name ([A-Za-z0-9-]+) followed by ':', or 0. */
static gsize
field_name_len(const char *l)
{
	gsize n = 0;

	while (g_ascii_isalnum(l[n]) || l[n] == '-')
		n++;
	return n > 0 && l[n] == ':' ? n : 0;
}

static gboolean
is_blank(const char *l)
{
	while (*l == ' ' || *l == '\t')
		l++;
	return *l == '\0';
}

/* Armor lines may carry trailing white space (RFC 4880 section 6.2). */
static gboolean
armor_is(const char *line, const char *want)
{
	gsize n = strlen(want);

	if (strncmp(line, want, n) != 0)
		return FALSE;
	for (line += n; *line; line++)
		if (*line != ' ' && *line != '\t')
			return FALSE;
	return TRUE;
}

/* The lines of a cleartext-signed message that the signature covers, with
 * dash-escaping undone (RFC 4880 section 7), into body and lineno; lines
 * from `first` on.  Nothing outside the signed part is ever parsed: text
 * after the signature could have been added by anyone. */
static vulnid_status
securitytxt_unsign(securitytxt *s, char **lines, guint nlines, guint first,
		   GPtrArray *body, GArray *lineno, GError **err)
{
	guint i = first + 1;

	for (; i < nlines && !is_blank(lines[i]); i++)
		if (field_name_len(lines[i]) == 0)
			return vulnid_fail(err, VULNID_ERR_INVALID,
					   "malformed OpenPGP cleartext signature: line %u is not"
					   " an armor header", i + 1);
	if (i >= nlines)
		return vulnid_fail(err, VULNID_ERR_INVALID,
				   "malformed OpenPGP cleartext signature: no signed text");
	for (i++; i < nlines && !armor_is(lines[i], "-----BEGIN PGP SIGNATURE-----"); i++) {
		guint n = i + 1;

		g_ptr_array_add(body, g_str_has_prefix(lines[i], "- ") ? lines[i] + 2 : lines[i]);
		g_array_append_val(lineno, n);
	}
	if (i >= nlines)
		return vulnid_fail(err, VULNID_ERR_INVALID,
				   "malformed OpenPGP cleartext signature: no signature");
	for (i++; i < nlines && !armor_is(lines[i], "-----END PGP SIGNATURE-----"); i++)
		;
	if (i >= nlines)
		return vulnid_fail(err, VULNID_ERR_INVALID,
				   "malformed OpenPGP cleartext signature: the signature does not end");
	for (i++; i < nlines; i++)
		if (!is_blank(lines[i])) {
			securitytxt_warn(s, "line %u: text after the OpenPGP signature ignored", i + 1);
			break;
		}
	s->signed_text = TRUE;
	return VULNID_OK;
}

typedef struct {
	gboolean contact;
	guint expires;
	guint languages;
} field_counts;

/* The first Expires counts: not a date, or past, is expired. */
static void
securitytxt_expires(securitytxt *s, guint ln, const char *value, GDateTime *now, field_counts *seen)
{
	g_autoptr(GDateTime) t = NULL;
	g_autofree char *shown = text_clean_line(value, 100);

	if (seen->expires++ > 0) {
		if (seen->expires == 2)
			securitytxt_warn(s, "line %u: more than one Expires field"
					 " (the first one counts)", ln);
		return;
	}
	s->expires = text_clean_line(value, VENDOR_VALUE_MAX);
	t = parse_rfc3339(value);
	if (t == NULL) {
		s->expired = TRUE;
		securitytxt_warn(s, "line %u: Expires '%s' is not an RFC 3339 date and time;"
				 " taken as expired", ln, shown);
	} else if (g_date_time_compare(t, now) <= 0) {
		s->expired = TRUE;
		securitytxt_warn(s, "the file expired (Expires: %s)", shown);
	}
}

/* One field.  Others than these (Canonical, Policy, Acknowledgments,
 * Hiring, CSAF, extensions) do not decide who is told. */
static void
securitytxt_field(securitytxt *s, guint ln, const char *name, const char *value, GDateTime *now,
		  field_counts *seen)
{
	if (g_ascii_strcasecmp(name, "Contact") == 0) {
		if (*value == '\0') {
			securitytxt_warn(s, "line %u: empty Contact", ln);
			return;
		}
		seen->contact = TRUE;
		securitytxt_contact(s, ln, value);
	} else if (g_ascii_strcasecmp(name, "Encryption") == 0) {
		if (*value != '\0')
			g_ptr_array_add(s->encryption, text_clean_line(value, VENDOR_VALUE_MAX));
	} else if (g_ascii_strcasecmp(name, "Preferred-Languages") == 0) {
		g_auto(GStrv) tags = g_strsplit(value, ",", -1);

		if (seen->languages++ == 1)
			securitytxt_warn(s, "line %u: more than one Preferred-Languages field", ln);
		for (char **t = tags; *t != NULL; t++) {
			g_autofree char *tag = text_clean_line(*t, 64);

			if (*tag != '\0')
				add_unique(s->languages, g_steal_pointer(&tag));
		}
	} else if (g_ascii_strcasecmp(name, "Expires") == 0) {
		securitytxt_expires(s, ln, value, now, seen);
	}
}

vulnid_status
securitytxt_parse(const char *text, gsize len, GDateTime *now, securitytxt **out, GError **err)
{
	g_autoptr(securitytxt) s = g_new0(securitytxt, 1);
	g_autoptr(GDateTime) clock = NULL;
	g_autofree char *copy = NULL;
	g_auto(GStrv) lines = NULL;
	g_autoptr(GPtrArray) body = g_ptr_array_new();	/* borrowed from lines */
	g_autoptr(GArray) lineno = g_array_new(FALSE, FALSE, sizeof(guint));
	guint nlines, first = 0;
	field_counts seen = { 0 };
	const char *start;
	vulnid_status st;

	s->contacts = g_ptr_array_new_with_free_func(g_free);
	s->other_contacts = g_ptr_array_new_with_free_func(g_free);
	s->encryption = g_ptr_array_new_with_free_func(g_free);
	s->languages = g_ptr_array_new_with_free_func(g_free);
	s->warnings = g_ptr_array_new_with_free_func(g_free);

	if (text == NULL)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a security.txt: no text");
	if (len > SECURITYTXT_MAX_BYTES)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a security.txt: larger than %d KiB",
				   SECURITYTXT_MAX_BYTES / 1024);
	/* RFC 9116 section 2.3: UTF-8; a NUL byte fails validation too. */
	if (!g_utf8_validate_len(text, len, NULL))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a security.txt: not UTF-8 text");
	start = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? text + 3 : text;
	copy = g_strndup(start, len - (gsize) (start - text));
	lines = g_strsplit(copy, "\n", -1);
	nlines = g_strv_length(lines);
	if (nlines > 0 && *lines[nlines - 1] == '\0')
		nlines--;	/* after the final line end */
	if (nlines > SECURITYTXT_MAX_LINES)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a security.txt: more than %d lines",
				   SECURITYTXT_MAX_LINES);
	for (guint i = 0; i < nlines; i++) {
		gsize n = strlen(lines[i]);

		if (n > 0 && lines[i][n - 1] == '\r')
			lines[i][n - 1] = '\0';
	}

	while (first < nlines && is_blank(lines[first]))
		first++;
	if (first < nlines && armor_is(lines[first], "-----BEGIN PGP SIGNED MESSAGE-----")) {
		st = securitytxt_unsign(s, lines, nlines, first, body, lineno, err);
		if (st != VULNID_OK)
			return st;
	} else
		for (guint i = 0; i < nlines; i++) {
			guint n = i + 1;

			g_ptr_array_add(body, lines[i]);
			g_array_append_val(lineno, n);
		}

	if (now == NULL)
		now = clock = store_now_datetime();
	for (guint i = 0; i < body->len; i++) {
		g_autofree char *line = g_strstrip(g_strdup(g_ptr_array_index(body, i)));
		guint ln = g_array_index(lineno, guint, i);
		gsize k = field_name_len(line);
		const char *value;

		if (*line == '\0' || *line == '#')
			continue;
		if (k == 0) {
			securitytxt_warn(s, "line %u: not a field", ln);
			continue;
		}
		line[k] = '\0';
		value = line + k + 1;
		while (*value == ' ' || *value == '\t')
			value++;
		securitytxt_field(s, ln, line, value, now, &seen);
	}
	if (!seen.contact)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a security.txt: no Contact field");
	if (seen.expires == 0)
		securitytxt_warn(s, "no Expires field");
	*out = g_steal_pointer(&s);
	return VULNID_OK;
}
