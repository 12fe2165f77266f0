/* vendor.h - the vendors directory and RFC 9116 security.txt */
#ifndef VULNID_VENDOR_H
#define VULNID_VENDOR_H

#include <glib.h>

#include "status.h"
#include "store.h"
#include "store-vendor.h"	/* the vendor row */


void vendor_free(vendor *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(vendor, vendor_free)

/* Look a vendor up by name or alias (case-insensitive); NOTFOUND if none. */
vulnid_status vendor_find(store *st, const char *name, vendor **out, GError **err);
/* Look a vendor up by one of its domains (case-insensitive). */
vulnid_status vendor_find_by_domain(store *st, const char *domain, vendor **out, GError **err);
/* All vendors, by name. */
vulnid_status vendor_list(store *st, GPtrArray **out /* vendor* */, GError **err);

/* Changes; each runs in the caller's transaction and appends an audit
 * event (vendor-added, vendor-alias, vendor-domain, vendor-contact-added,
 * vendor-contact-removed, vendor-updated). */
vulnid_status vendor_add(store *st, const char *name, const char *notes, gint64 *id, GError **err);
vulnid_status vendor_add_alias(store *st, gint64 vendor_id, const char *alias, GError **err);
vulnid_status vendor_add_domain(store *st, gint64 vendor_id, const char *domain, GError **err);
vulnid_status vendor_add_contact(store *st, gint64 vendor_id, const char *address,
				 const char *source, GError **err);
vulnid_status vendor_remove_contact(store *st, gint64 vendor_id, const char *address, GError **err);
/* The vendor's OpenPGP key (already in the robot's keyring). */
vulnid_status vendor_set_key(store *st, gint64 vendor_id, const char *fpr, GError **err);
vulnid_status vendor_set_securitytxt(store *st, gint64 vendor_id, const char *encryption,
				     const char *languages, const char *expires, GError **err);

/* The "Vendor:" field value "Example Corp <example.com>": name and, when
 * present and a plausible domain, the domain (lower case). */
void vendor_field_split(const char *value, char **name, char **domain);

/* Who is told about a new entry, in order of trust: the directory's
 * contacts for the vendor named (by name, alias, or the domain in <...>);
 * else the request's Vendor-Contact; else security@DOMAIN when the request
 * names the vendor's domain.  Never an address guessed from a name.
 * *how says which rule applied ("directory", "vendor-contact",
 * "security-at-domain", or "none"). */
vulnid_status vendor_contacts_for(store *st, const char *vendor_field,
				  const char *vendor_contact_field, GPtrArray **addresses,
				  const char **how, GError **err);

/* RFC 9116 security.txt */
typedef struct {
	GPtrArray *contacts;	/* char*: addresses from mailto: Contact lines */
	GPtrArray *other_contacts;	/* char*: https:, tel: and other URIs */
	GPtrArray *encryption;	/* char*: Encryption URIs */
	GPtrArray *languages;	/* char*: language tags */
	char *expires;		/* as given, or NULL */
	gboolean expired;	/* Expires is in the past (or unparseable) */
	gboolean signed_text;	/* it was an OpenPGP cleartext-signed file */
	GPtrArray *warnings;	/* char*: what is wrong but tolerated */
} securitytxt;

/* Parse a security.txt (bounded: at most 64 KiB, 1000 lines).  Errors only
 * for input that is not a security.txt at all. */
vulnid_status securitytxt_parse(const char *text, gsize len, GDateTime *now,
				securitytxt **out, GError **err);
void securitytxt_free(securitytxt *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(securitytxt, securitytxt_free)

#endif
