/* store-vendor.h - the vendors directory's tables: vendors, vendor_aliases,
 * vendor_domains, vendor_contacts (vendor.c holds the rules: names,
 * normalisation, audit events) */
#ifndef VULNID_STORE_VENDOR_H
#define VULNID_STORE_VENDOR_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* A vendor of the directory, as its rows hold it (vendor.c reads and
 * frees it: vendor_free()). */
typedef struct {
	gint64 id;
	char *name;
	char *notes;		/* may be NULL */
	char *key_fpr;		/* OpenPGP fingerprint, may be NULL */
	char *encryption;	/* from security.txt, may be NULL */
	char *languages;	/* from security.txt, may be NULL */
	char *expires;		/* from security.txt, may be NULL */
	char *created;
	char *updated;
	GPtrArray *aliases;	/* char* */
	GPtrArray *domains;	/* char* */
	GPtrArray *contacts;	/* char*: addresses */
} vendor;

/* Fill v's own columns (not its lists); *found FALSE when no such id. */
vulnid_status store_vendor_get(store *st, gint64 id, vendor *v, gboolean *found, GError **err);
/* Append the vendor's aliases (by alias), domains (by domain) or contact
 * addresses (in the order they were added) to out. */
vulnid_status store_vendor_aliases(store *st, gint64 id, GPtrArray *out, GError **err);
vulnid_status store_vendor_domains(store *st, gint64 id, GPtrArray *out, GError **err);
vulnid_status store_vendor_contacts(store *st, gint64 id, GPtrArray *out, GError **err);
/* Id of the vendor whose name or alias is name (case-insensitive), or 0. */
vulnid_status store_vendor_find(store *st, const char *name, gint64 *id, GError **err);
/* Id of the vendor that has domain (lower case), or 0. */
vulnid_status store_vendor_find_by_domain(store *st, const char *domain, gint64 *id, GError **err);
/* The vendor's name, or NULL when there is no such id. */
vulnid_status store_vendor_name(store *st, gint64 id, char **name, GError **err);
/* Every vendor's id, by name then id (GArray of gint64). */
vulnid_status store_vendor_ids(store *st, GArray **ids, GError **err);
/* Whether a transaction is open on st. */
gboolean store_vendor_in_transaction(store *st);

vulnid_status store_vendor_insert(store *st, const char *name, const char *notes, const char *now,
				  gint64 *id, GError **err);
vulnid_status store_vendor_touch(store *st, gint64 id, const char *now, GError **err);
vulnid_status store_vendor_alias_insert(store *st, gint64 id, const char *alias, GError **err);
vulnid_status store_vendor_domain_insert(store *st, gint64 id, const char *domain, GError **err);
/* The stored form of address among id's contacts (case-insensitive), or NULL. */
vulnid_status store_vendor_contact_find(store *st, gint64 id, const char *address, char **stored,
					GError **err);
vulnid_status store_vendor_contact_insert(store *st, gint64 id, const char *address,
					  const char *source, const char *added, GError **err);
vulnid_status store_vendor_contact_delete(store *st, gint64 id, const char *address, GError **err);
/* Set all three security.txt values (NULL clears one) and updated. */
vulnid_status store_vendor_set_securitytxt(store *st, gint64 id, const char *encryption,
					   const char *languages, const char *expires,
					   const char *now, GError **err);
vulnid_status store_vendor_set_key(store *st, gint64 id, const char *fpr, const char *now,
				   GError **err);

#endif
